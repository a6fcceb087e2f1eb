/* Implicit free motion of an FEM body: free fall (exact backward-Euler kinematics), momentum
 * conservation, fixed vertices, the optimality condition at v*, transactional failure. */
#include <suitesparse/cholmod.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_material_box.h"

static kn_fem_body* make_body(kn_fem_model model, const char* name) {
  kn_tet_mesh m;
  test_box_mesh(3, 2, 2, 0.3, 0.2, 0.2, &m);
  kn_fem_material mat = kn_fem_material_default();
  mat.model = model;
  mat.youngs_modulus = 1e5;
  mat.poisson_ratio = 0.3;
  mat.density = 1000.0;
  kn_fem_body* b;
  kn_error err;
  cr_assert_eq(kn_fem_body_create(&m, &mat, name, &b, &err), KN_OK, "%s", err.msg);
  test_box_mesh_free(&m);
  return b;
}

static uint64_t state_hash(const kn_fem_body* b) {
  uint64_t h = kn_hash_doubles(KN_HASH_SEED, b->x, 3 * (size_t)b->mesh.nvert);
  h = kn_hash_doubles(h, b->v, 3 * (size_t)b->mesh.nvert);
  return kn_hash_doubles(h, b->R0, 9 * (size_t)b->mesh.ntet);
}

/* Rigid translation leaves F = I: each step adds g dt to every velocity and
 * x_N = x_0 + N dt v_0 + g dt^2 N (N + 1) / 2 (backward Euler positions). */
Test(free_motion, free_fall_is_exact_backward_euler) {
  const kn_fem_model models[2] = {KN_FEM_LINEAR_COROTATED, KN_FEM_NEOHOOKEAN};
  for (int mi = 0; mi < 2; mi++) {
    kn_fem_body* b = make_body(models[mi], "faller");
    cr_assert_float_eq(kn_fem_body_mass(b), 1000.0 * 0.3 * 0.2 * 0.2, 1e-12);
    const double v0[3] = {0.3, -0.2, 1.0}, dt = 0.01;
    const int N = 20, nv = b->mesh.nvert;
    for (int i = 0; i < nv; i++) memcpy(b->v + 3 * i, v0, sizeof v0);
    kn_error err;
    double worst_v = 0;
    for (int n = 1; n <= N; n++) {
      cr_assert_eq(kn_fem_free_motion(b, dt, NULL, &err), KN_OK, "%s", err.msg);
      for (int i = 0; i < nv; i++)
        for (int k = 0; k < 3; k++) worst_v = fmax(worst_v, fabs(b->v_star[3 * i + k] - (v0[k] + n * dt * b->gravity[k])));
      kn_fem_advance(b, dt, b->v_star);
    }
    double worst_x = 0, P[3] = {0, 0, 0};
    for (int i = 0; i < nv; i++)
      for (int k = 0; k < 3; k++) {
        double expect = b->mesh.X[3 * i + k] + N * dt * v0[k] + b->gravity[k] * dt * dt * N * (N + 1) / 2.0;
        worst_x = fmax(worst_x, fabs(b->x[3 * i + k] - expect));
        P[k] += b->mass[i] * b->v[3 * i + k];
      }
    double M = kn_fem_body_mass(b);
    printf("model %d free fall: max velocity error %.2e m/s, position error %.2e m\n", mi, worst_v, worst_x);
    cr_assert_lt(worst_v, 1e-12);
    cr_assert_lt(worst_x, 1e-12);
    for (int k = 0; k < 3; k++) cr_assert_lt(fabs(P[k] - M * (v0[k] + N * dt * b->gravity[k])), 1e-12);
    kn_fem_body_free(b);
  }
}

/* No gravity, a random initial velocity field: internal forces sum to zero, so total momentum is
 * conserved up to the Newton tolerance; the body deforms (elastic forces are exercised). */
Test(free_motion, momentum_conserved_without_gravity) {
  const kn_fem_model models[3] = {KN_FEM_LINEAR_COROTATED, KN_FEM_COROTATED, KN_FEM_NEOHOOKEAN};
  for (int mi = 0; mi < 3; mi++) {
    kn_fem_body* b = make_body(models[mi], "spinner");
    b->gravity[2] = 0;
    unsigned s = 12345;
    for (int k = 0; k < 3 * b->mesh.nvert; k++) {
      s = s * 1103515245u + 12345u;
      b->v[k] = ((double)(s >> 8) / 16777216.0 - 0.5);
    }
    double P0[3] = {0, 0, 0}, P[3] = {0, 0, 0}, scale = 0;
    for (int i = 0; i < b->mesh.nvert; i++)
      for (int k = 0; k < 3; k++) {
        P0[k] += b->mass[i] * b->v[3 * i + k];
        scale += b->mass[i] * fabs(b->v[3 * i + k]);
      }
    kn_error err;
    for (int n = 0; n < 10; n++) {
      cr_assert_eq(kn_fem_free_motion(b, 0.005, NULL, &err), KN_OK, "%s", err.msg);
      kn_fem_advance(b, 0.005, b->v_star);
    }
    for (int i = 0; i < b->mesh.nvert; i++)
      for (int k = 0; k < 3; k++) P[k] += b->mass[i] * b->v[3 * i + k];
    double d = fmax(fabs(P[0] - P0[0]), fmax(fabs(P[1] - P0[1]), fabs(P[2] - P0[2])));
    printf("model %d: momentum drift %.2e (scale %.2e)\n", mi, d, scale);
    cr_assert_lt(d, 1e-5 * scale);
    kn_fem_body_free(b);
  }
}

/* Optimality of v*: M (v* - v_n) = dt (f_elastic(x_n + dt v*) + M g) on free vertices, checked
 * with element forces computed independently of the assembly; and A's size and symmetry. */
Test(free_motion, optimality_and_dynamics_matrix) {
  const kn_fem_model models[2] = {KN_FEM_LINEAR_COROTATED, KN_FEM_NEOHOOKEAN};
  for (int mi = 0; mi < 2; mi++) {
    kn_fem_body* b = make_body(models[mi], "cube row");
    b->material.mass_damping = 0; /* undamped: the residual below has no D term */
    double lo[3] = {-1, -1, -1}, hi[3] = {1e-9, 1, 1};
    int nfixed;
    kn_error err;
    cr_assert_eq(kn_fem_body_fix_box(b, lo, hi, &nfixed, &err), KN_OK);
    cr_assert_eq(nfixed, 9);
    const double dt = 0.01;
    for (int n = 0; n < 3; n++) {
      cr_assert_eq(kn_fem_free_motion(b, dt, NULL, &err), KN_OK, "%s", err.msg);
      int nv = b->mesh.nvert;
      double r[3 * 64] = {0}, x[3 * 64], scale = 0;
      cr_assert_leq(nv, 64);
      for (int k = 0; k < 3 * nv; k++) x[k] = b->x[k] + dt * b->v_star[k];
      for (int e = 0; e < b->mesh.ntet; e++) {
        double xe[12], f[12];
        for (int c = 0; c < 4; c++) memcpy(xe + 3 * c, x + 3 * b->mesh.tet[4 * e + c], 3 * sizeof(double));
        kn_fem_element_eval(b->material.model, b->mu, b->lambda, xe, b->Dm_inv + 9 * e, b->volume[e], b->R0 + 9 * e, f,
                            NULL, 0);
        for (int c = 0; c < 4; c++)
          for (int k = 0; k < 3; k++) r[3 * b->mesh.tet[4 * e + c] + k] += dt * f[3 * c + k];
      }
      double worst = 0;
      for (int i = 0; i < nv; i++) {
        if (b->fixed[i]) {
          for (int k = 0; k < 3; k++) cr_assert_eq(b->v_star[3 * i + k], 0.0);
          continue;
        }
        for (int k = 0; k < 3; k++) {
          double lhs = b->mass[i] * (b->v_star[3 * i + k] - b->v[3 * i + k]);
          double rhs = r[3 * i + k] + dt * b->mass[i] * b->gravity[k];
          worst = fmax(worst, fabs(lhs - rhs));
          scale = fmax(scale, fabs(rhs));
        }
      }
      /* quadratic model: one exact solve; neo-Hookean: Newton tolerance 1e-6 of the momentum scale */
      printf("model %d step %d: optimality residual %.2e (scale %.2e)\n", mi, n, worst, scale);
      cr_assert_lt(worst, (mi == 0 ? 1e-10 : 1e-5) * scale, "model %d step %d residual %g (scale %g)", mi, n, worst, scale);
      const cholmod_sparse* A = (const cholmod_sparse*)kn_fem_body_dynamics_matrix(b);
      cr_assert_not_null(A);
      cr_assert_eq((int)A->nrow, 3 * (nv - 9));
      cr_assert_eq(A->stype, -1);
      /* diagonal >= lumped mass (K is PSD, so A_ii >= m_i) */
      const int* Ap = A->p;
      const double* Ax = A->x;
      for (int i = 0; i < nv; i++)
        if (b->free_index[i] >= 0)
          for (int c = 0; c < 3; c++) cr_assert_geq(Ax[Ap[3 * b->free_index[i] + c]], b->mass[i] * (1 - 1e-12));
      kn_fem_advance(b, dt, b->v_star);
    }
    /* fixed vertices never moved */
    for (int i = 0; i < b->mesh.nvert; i++)
      if (b->fixed[i])
        for (int k = 0; k < 3; k++) {
          cr_assert_eq(b->x[3 * i + k], b->mesh.X[3 * i + k]);
          cr_assert_eq(b->v[3 * i + k], 0.0);
        }
    kn_fem_body_free(b);
  }
}

Test(free_motion, failures_leave_state_unchanged) {
  kn_fem_body* b = make_body(KN_FEM_NEOHOOKEAN, "blob");
  for (int k = 0; k < 3 * b->mesh.nvert; k++) b->v[k] = (k % 7) * 0.8 - 2.0; /* violent deformation */
  uint64_t h = state_hash(b);
  kn_error err;
  kn_fem_newton_options o = kn_fem_newton_options_default();
  o.max_iterations = 1;
  cr_assert_eq(kn_fem_free_motion(b, 0.05, &o, &err), KN_ERR_NUMERIC);
  cr_assert(strstr(err.msg, "blob") && strstr(err.msg, "did not converge"), "%s", err.msg);
  cr_assert_eq(state_hash(b), h);
  cr_assert_eq(kn_fem_free_motion(b, 0.0, NULL, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "blob"), "%s", err.msg);
  cr_assert_eq(kn_fem_free_motion(b, NAN, NULL, &err), KN_ERR_INVALID);
  b->v[5] = NAN;
  h = state_hash(b);
  cr_assert_eq(kn_fem_free_motion(b, 0.01, NULL, &err), KN_ERR_NUMERIC);
  cr_assert(strstr(err.msg, "non-finite"), "%s", err.msg);
  cr_assert_eq(state_hash(b), h);
  b->v[5] = 0;
  /* the same step with enough iterations succeeds */
  cr_assert_eq(kn_fem_free_motion(b, 0.05, NULL, &err), KN_OK, "%s", err.msg);
  int bad = 10000;
  cr_assert_eq(kn_fem_body_fix_vertices(b, &bad, 1, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "blob") && strstr(err.msg, "10000"), "%s", err.msg);
  int idx[2] = {0, 1};
  cr_assert_eq(kn_fem_body_attach(b, idx, 2, 3, &err), KN_OK);
  cr_assert_eq(b->nattach, 2);
  cr_assert_eq(b->attach_body[1], 3);
  kn_fem_body_free(b);
  /* bad material through body creation names the body */
  kn_tet_mesh m;
  test_box_mesh(1, 1, 1, 1, 1, 1, &m);
  kn_fem_material mat = kn_fem_material_default();
  mat.density = 0;
  cr_assert_eq(kn_fem_body_create(&m, &mat, "bad body", &b, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "bad body") && strstr(err.msg, "density"), "%s", err.msg);
  test_box_mesh_free(&m);
}

/* Rayleigh damping: with alpha > 0 a free-falling body's velocity obeys
 * (1 + alpha dt) v_{n+1} = v_n + g dt exactly (rigid motion, K terms vanish). */
Test(free_motion, mass_damping_rigid_decay) {
  kn_fem_body* b = make_body(KN_FEM_LINEAR_COROTATED, "damped");
  b->material.mass_damping = 2.0;
  b->material.stiffness_damping = 0.01;
  kn_error err;
  double v = 0, dt = 0.01;
  for (int n = 0; n < 5; n++) {
    cr_assert_eq(kn_fem_free_motion(b, dt, NULL, &err), KN_OK, "%s", err.msg);
    v = (v + b->gravity[2] * dt) / (1 + 2.0 * dt);
    for (int i = 0; i < b->mesh.nvert; i++) cr_assert_lt(fabs(b->v_star[3 * i + 2] - v), 1e-12);
    kn_fem_advance(b, dt, b->v_star);
  }
  kn_fem_body_free(b);
}

/* At rest, without gravity, turned rigidly by a generic rotation (F = R up to round-off, so the
 * elastic gradient is round-off, not zero): the free motion keeps it at rest. Before, the
 * tolerance was relative to that round-off gradient itself (no gravity, no momentum scale), no
 * step could decrease E and the twisted rods' bench scene (zero gravity) failed its first step with
 * "line search found no decrease at Newton iteration 0 (|grad E| = 4.5e-14)". */
Test(free_motion, rest_without_gravity_stays_at_rest) {
  const kn_fem_model models[3] = {KN_FEM_COROTATED, KN_FEM_NEOHOOKEAN, KN_FEM_LINEAR_COROTATED};
  const double c = cos(0.7), s = sin(0.7), R[9] = {c, -s, 0, s * 0.6, c * 0.6, -0.8, s * 0.8, c * 0.8, 0.6};
  for (int mi = 0; mi < 3; mi++) {
    kn_fem_body* b = make_body(models[mi], "resting");
    b->gravity[0] = b->gravity[1] = b->gravity[2] = 0;
    for (int i = 0; i < b->mesh.nvert; i++) {
      const double* X = b->mesh.X + 3 * i;
      for (int k = 0; k < 3; k++) b->x[3 * i + k] = R[3 * k] * X[0] + R[3 * k + 1] * X[1] + R[3 * k + 2] * X[2];
    }
    for (int t = 0; t < 9 * b->mesh.ntet; t++) b->R0[t] = R[t % 9];
    kn_error err;
    for (int n = 0; n < 3; n++) {
      cr_assert_eq(kn_fem_free_motion(b, 0.01, NULL, &err), KN_OK, "model %d: %s", mi, err.msg);
      double vmax = 0;
      for (int k = 0; k < 3 * b->mesh.nvert; k++) vmax = fmax(vmax, fabs(b->v_star[k]));
      cr_assert_lt(vmax, 1e-12, "model %d step %d: |v*| %g", mi, n, vmax);
      kn_fem_advance(b, 0.01, b->v_star);
    }
    kn_fem_body_free(b);
  }
}
