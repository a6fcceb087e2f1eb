/* kn_mpm_potential: the MPM grid's incremental potential E(v), grad E(v) and Hessian(v) at trial
 * grid velocities v, for the linear corotated model (elastic, and with von Mises plasticity, which
 * the potential does not see: F_P is frozen in the step) and the EOS fluid.
 *
 * On a 2x2x2-cell block (64 particles, h 0.025) with random F_E near I, random v_p and C_p (xorshift
 * seeds), after kn_mpm_free_motion, at v = v* + a random 0.1 m/s:
 * - E, grad E and the Hessian equal a reference written here from the particles, the grid's weights
 *   and kn_mpm_energy_density alone: F_E(v) = (I + dt sum_i v_i grad w_ip^T) F_E^n,
 *   E = 1/2 |v - v^n|_M^2 - dt v^T M g + sum_p V_p Psi(F_E(v)), grad = M (v - v^n) - dt M g
 *   + dt sum_p V_p P G_p, H = M + dt^2 sum_p V_p G_p^T dP/dF G_p (G_p = F_E^nT grad w_ip); tolerance
 *   1e-12 of the sum of the terms' magnitudes;
 * - central differences, step h = 1e-6 max |v|: E along every coordinate and a random direction
 *   against grad E; grad E along every coordinate (every column) and a random direction against the
 *   exact Hessian (the returned one for the linear corotated model). Roundoff 64 eps S / h relative to max |grad E| (max |H|), S the sum of the
 *   magnitudes of what E (a gradient entry) sums, plus 1e-9 for the truncation (the potential
 *   varies on a scale h_grid / dt = 2.5 m/s: (h / 2.5 m/s)^2 ~ 1e-14). Each term (inertia, gravity,
 *   elastic) carries >= 1e-3 of the gradient and the tolerances stay below 1e-5: a sign or factor 2
 *   on any term fails;
 * - EOS fluid: its dP/dF is always PSD-projected (Psi' d2J/dF2 is indefinite unless J = 1), so the
 *   FD check of the Hessian is against the reference with the exact dP/dF (Psi'' c c^T + Psi' d2J/dF2,
 *   Levi-Civita form as in test_eos_hessian.c), while the returned Hessian equals the reference with
 *   kn_mpm_energy_density's projected dP/dF, differs from the exact one (projection active) and is
 *   positive definite with lambda_min >= the smallest node mass;
 * - at v*: the Hessian equals kn_mpm_dynamics_matrix entry for entry (bitwise, same pattern), the
 *   call leaves A unchanged, and |grad E(v*)| meets the free motion's stopping test (10 times it for
 *   the fluid, whose Newton may stop on its roundoff stall test). */
#include <suitesparse/cholmod.h>
#include <criterion/criterion.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/mesh_poses.h"
#include "deformable/deformable.h"
#include "mpm/mpm.h"
#include "../support/dense.h"

static const double g3[3] = {0, 0, -9.81};
static const double kDt = 0.01;

static kn_mpm_body* make(kn_mpm_model model, double yield_stress) {
  kn_mpm_material mat = kn_mpm_material_default();
  mat.model = model;
  mat.yield_stress = yield_stress;
  mat.bulk_modulus = 1e4; /* the fluid's elastic term comparable to inertia at dt = 0.01 */
  kn_mpm_shape sh = {.type = KN_MPM_BOX, .size = {0.05, 0.05, 0.05}};
  kn_pose X;
  double xyz[3] = {0.0113, 0.0071, 0.5037}, rpy[3] = {0, 0, 0};
  kn_pose_from_xyz_rpy(xyz, rpy, &X);
  kn_mpm_body* b;
  kn_error err;
  cr_assert_eq(kn_mpm_body_create(&mat, &sh, &X, 0.025, 8, "potential block", &b, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(b->np, 64);
  for (int p = 0; p < b->np; p++) {
    for (int k = 0; k < 9; k++) b->FE[9 * p + k] = (k % 4 == 0) + 0.05 * (2 * urand() - 1);
    if (model == KN_MPM_EOS_FLUID) { /* a fluid's F_E is J^(1/3) I at a step start */
      double J = cbrt(kn_mat3_det(b->FE + 9 * p));
      for (int k = 0; k < 9; k++) b->FE[9 * p + k] = k % 4 == 0 ? J : 0.0;
    }
    for (int d = 0; d < 3; d++) b->v[3 * p + d] = 0.2 * (2 * urand() - 1);
    for (int k = 0; k < 9; k++) b->C[9 * p + k] = 2 * urand() - 1;
  }
  return b;
}



typedef struct {
  double E, scale;
  double *g, *magnitude, *term[3]; /* gradient, per-entry sum of magnitudes, inertia / gravity / elastic */
  double *H, *H_exact;             /* with kn_mpm_energy_density's dP/dF, and with the exact one */
} reference;

static void reference_at(const kn_mpm_body* b, const double* v, reference* R) {
  const kn_mpm_grid* gr = &b->grid;
  int n = 3 * gr->n;
  R->g = calloc((size_t)n, sizeof(double));
  R->magnitude = calloc((size_t)n, sizeof(double));
  for (int t = 0; t < 3; t++) R->term[t] = calloc((size_t)n, sizeof(double));
  R->H = calloc((size_t)n * n, sizeof(double));
  R->H_exact = calloc((size_t)n * n, sizeof(double));
  double Ekin = 0, Egrav = 0, Eel = 0;
  for (int i = 0; i < gr->n; i++)
    for (int d = 0; d < 3; d++) {
      int k = 3 * i + d;
      double m = gr->mass[i], dv = v[k] - gr->v[k];
      Ekin += 0.5 * m * dv * dv;
      Egrav -= kDt * m * g3[d] * v[k];
      R->term[0][k] = m * dv;
      R->term[1][k] = -kDt * m * g3[d];
      R->H[(size_t)k * n + k] = R->H_exact[(size_t)k * n + k] = m;
    }
  for (int p = 0; p < b->np; p++) {
    const kn_mpm_part* pt = kn_mpm_part_of(b, p);
    const double* FE = b->FE + 9 * p;
    double L[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, F[9], R0[9], P[9], D[81], Dx[81], G[27][3];
    int node[27], k = 0;
    for (int a = 0; a < 27; a++) {
      int i = gr->p_node[27 * p + a];
      if (i < 0) continue;
      const double* dw = gr->p_dw + 81 * p + 3 * a;
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) L[3 * r + c] += kDt * v[3 * i + r] * dw[c];
      kn_mat3_tvec(FE, dw, G[k]);
      node[k++] = i;
    }
    kn_mat3_mul(L, FE, F);
    kn_fem_polar_rotation(FE, R0);
    double V = b->volume0[p];
    Eel += V * kn_mpm_energy_density(&pt->material, pt->mu, pt->lambda, F, R0, P, D);
    if (pt->material.model == KN_MPM_EOS_FLUID) eos_exact_hessian(pt->material.bulk_modulus, pt->material.gamma, F, Dx);
    else memcpy(Dx, D, sizeof D);
    for (int a = 0; a < k; a++)
      for (int r = 0; r < 3; r++) {
        double f = kDt * V * (P[3 * r] * G[a][0] + P[3 * r + 1] * G[a][1] + P[3 * r + 2] * G[a][2]);
        R->term[2][3 * node[a] + r] += f;
        R->magnitude[3 * node[a] + r] += fabs(f);
      }
    for (int a = 0; a < k; a++)
      for (int bb = 0; bb < k; bb++)
        for (int r = 0; r < 3; r++)
          for (int c = 0; c < 3; c++) {
            double s = 0, sx = 0;
            for (int x = 0; x < 3; x++)
              for (int y = 0; y < 3; y++) {
                s += D[9 * (3 * r + x) + 3 * c + y] * G[a][x] * G[bb][y];
                sx += Dx[9 * (3 * r + x) + 3 * c + y] * G[a][x] * G[bb][y];
              }
            size_t at = (size_t)(3 * node[a] + r) * n + 3 * node[bb] + c;
            R->H[at] += kDt * kDt * V * s;
            R->H_exact[at] += kDt * kDt * V * sx;
          }
  }
  R->E = Ekin + Egrav + Eel;
  R->scale = fabs(Ekin) + fabs(Egrav) + fabs(Eel);
  for (int k = 0; k < n; k++) {
    R->g[k] = R->term[0][k] + R->term[1][k] + R->term[2][k];
    R->magnitude[k] += fabs(R->term[0][k]) + fabs(R->term[1][k]);
  }
}

static void reference_free(reference* R) {
  free(R->g), free(R->magnitude), free(R->H), free(R->H_exact);
  for (int t = 0; t < 3; t++) free(R->term[t]);
}




static double potential(kn_mpm_body* b, const double* v, double* grad, const cholmod_sparse** H) {
  double E;
  kn_error err;
  cr_assert_eq(kn_mpm_potential(b, v, &E, grad, (const struct cholmod_sparse_struct**)H, &err), KN_OK, "%s", err.msg);
  return E;
}

static void run_model(kn_mpm_model model, double yield_stress, uint64_t seed, const char* what) {
  g_rng = seed;
  kn_mpm_body* b = make(model, yield_stress);
  kn_error err;
  double E;
  cr_assert_eq(kn_mpm_potential(b, b->v, &E, NULL, NULL, &err), KN_ERR_INVALID, "before the free motion");
  cr_assert(strstr(err.msg, "potential block"), "%s", err.msg);
  cr_assert_eq(kn_mpm_free_motion(b, kDt, g3, NULL, &err), KN_OK, "%s", err.msg);
  const kn_mpm_grid* gr = &b->grid;
  int n = 3 * gr->n;
  double *g = malloc((size_t)n * sizeof(double)), *gp = malloc((size_t)n * sizeof(double)),
         *gm = malloc((size_t)n * sizeof(double)), *d = malloc((size_t)n * sizeof(double)),
         *v0 = malloc((size_t)n * sizeof(double)), *v = malloc((size_t)n * sizeof(double));
  //---- at v*: the dynamics matrix and the stopping test ----
  const cholmod_sparse* A = (const cholmod_sparse*)kn_mpm_dynamics_matrix(b);
  size_t nnz = (size_t)((const int*)A->p)[n];
  double* A_before = malloc(nnz * sizeof(double));
  memcpy(A_before, A->x, nnz * sizeof(double));
  const cholmod_sparse* Hs;
  potential(b, gr->v, g, NULL);
  double gn0 = 0, gn1 = 0, Mg = 0, Mv = 0;
  for (int k = 0; k < n; k++) gn0 += g[k] * g[k];
  potential(b, gr->v_star, g, &Hs);
  for (int k = 0; k < n; k++) gn1 += g[k] * g[k];
  cr_assert(Hs != A, "the potential's Hessian is the dynamics matrix itself");
  cr_assert(!memcmp(A->x, A_before, nnz * sizeof(double)), "%s: the potential changed the dynamics matrix", what);
  cr_assert(!memcmp(Hs->p, A->p, ((size_t)n + 1) * sizeof(int)) && !memcmp(Hs->i, A->i, nnz * sizeof(int)),
            "%s: pattern differs from the dynamics matrix's", what);
  size_t differ = 0;
  for (size_t k = 0; k < nnz; k++) differ += ((const double*)Hs->x)[k] != ((const double*)A->x)[k];
  cr_assert_eq(differ, 0, "%s: Hessian at v* differs from the dynamics matrix in %zu of %zu entries", what, differ, nnz);
  /* the free motion's test: |grad| <= rel max(|grad E(v^n)|, dt |M g|, |M v^n|) */
  for (int i = 0; i < gr->n; i++) {
    Mg += gr->mass[i] * gr->mass[i] * kn_vec3_dot(g3, g3);
    Mv += gr->mass[i] * gr->mass[i] * kn_vec3_dot(gr->v + 3 * i, gr->v + 3 * i);
  }
  double thresh = kn_mpm_newton_options_default().rel_tolerance * fmax(sqrt(gn0), fmax(kDt * sqrt(Mg), sqrt(Mv)));
  /* the fluid's Newton may also end on its roundoff stall test (Newton decrement at E's rounding,
   * kn_mpm_free_motion), just above the threshold with other BLAS kernels: 10 times it */
  if (model == KN_MPM_EOS_FLUID) thresh *= 10;
  printf("%s: %d nodes; at v*: |grad E| %.2e <= %.2e (|grad E(v^n)| %.2e); Hessian == A (%zu entries)\n", what,
         gr->n, sqrt(gn1), thresh, sqrt(gn0), nnz);
  cr_assert_gt(sqrt(gn0), 100 * thresh, "%s: v^n was already optimal: the test would not see a wrong v*", what);
  cr_assert_leq(sqrt(gn1), thresh, "%s: |grad E(v*)| %g above the stopping threshold %g", what, sqrt(gn1), thresh);
  //---- at a random v: reference and central differences ----
  for (int k = 0; k < n; k++) v0[k] = gr->v_star[k] + 0.1 * (2 * urand() - 1);
  E = potential(b, v0, g, &Hs);
  double* H = dense_of(Hs);
  reference R;
  reference_at(b, v0, &R);
  double gmax = max_abs(g, (size_t)n), Hmax = max_abs(H, (size_t)n * n);
  double eE = fabs(E - R.E) / R.scale, eg = max_diff(g, R.g, (size_t)n) / gmax,
         eH = max_diff(H, R.H, (size_t)n * n) / Hmax;
  cr_assert_leq(eE, 1e-12, "%s: E %.17g vs reference %.17g", what, E, R.E);
  cr_assert_leq(eg, 1e-12, "%s: gradient vs reference: %g", what, eg);
  cr_assert_leq(eH, 1e-12, "%s: Hessian vs reference: %g", what, eH);
  const char* names[3] = {"inertia", "gravity", "elastic"};
  for (int t = 0; t < 3; t++) {
    double share = max_abs(R.term[t], (size_t)n) / gmax;
    cr_log_info("%s: %s term: %.2e of max |grad E|", what, names[t], share);
    cr_assert_geq(share, 1e-3, "%s: the %s term is too small to be tested (%g)", what, names[t], share);
  }
  double h = 1e-6 * max_abs(v0, (size_t)n), Sg = max_abs(R.magnitude, (size_t)n), efd_g = 0, efd_H = 0;
  /* the exact Hessian: the returned one for the linear corotated model, the reference's for the fluid */
  const double* Hx = model == KN_MPM_EOS_FLUID ? R.H_exact : H;
  double Hxmax = max_abs(Hx, (size_t)n * n);
  double tol_g = 64 * DBL_EPSILON * R.scale / (h * gmax) + 1e-9, tol_H = 64 * DBL_EPSILON * Sg / (h * Hxmax) + 1e-9;
  cr_assert_leq(fmax(tol_g, tol_H), 1e-5, "%s: FD tolerances %g, %g too loose to test", what, tol_g, tol_H);
  for (int j = 0; j <= n; j++) {
    for (int k = 0; k < n; k++) d[k] = j < n ? (k == j) : 2 * urand() - 1;
    double dmax = max_abs(d, (size_t)n), gd = 0;
    for (int k = 0; k < n; k++) v[k] = v0[k] + h * d[k];
    double Ep = potential(b, v, gp, NULL);
    for (int k = 0; k < n; k++) v[k] = v0[k] - h * d[k];
    double Em = potential(b, v, gm, NULL);
    for (int k = 0; k < n; k++) gd += g[k] * d[k];
    efd_g = fmax(efd_g, fabs((Ep - Em) / (2 * h) - gd) / (gmax * dmax));
    for (int i = 0; i < n; i++) {
      double Hd = 0;
      for (int k = 0; k < n; k++) Hd += Hx[(size_t)i * n + k] * d[k];
      efd_H = fmax(efd_H, fabs((gp[i] - gm[i]) / (2 * h) - Hd) / (Hxmax * dmax));
    }
  }
  double eX = max_diff(R.H, R.H_exact, (size_t)n * n) / Hmax;
  printf("%s: h %.1e: FD gradient %.2e (tol %.1e), FD exact Hessian %.2e (tol %.1e); vs reference E %.1e grad %.1e "
         "H %.1e; projected - exact %.1e\n",
         what, h, efd_g, tol_g, efd_H, tol_H, eE, eg, eH, eX);
  cr_assert_leq(efd_g, tol_g, "%s: gradient vs central differences: %g > %g", what, efd_g, tol_g);
  cr_assert_leq(efd_H, tol_H, "%s: exact Hessian vs central differences: %g > %g", what, efd_H, tol_H);
  if (model == KN_MPM_EOS_FLUID) {
    cr_assert_geq(eX, 1e-6, "%s: projection inactive (projected = exact to %g)", what, eX);
    double* w = malloc((size_t)n * sizeof(double));
    cr_assert_eq(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', n, H, n, w), 0);
    double mmin = INFINITY;
    for (int i = 0; i < gr->n; i++) mmin = fmin(mmin, gr->mass[i]);
    printf("%s: lambda_min %.4e (min node mass %.4e)\n", what, w[0], mmin);
    cr_assert_geq(w[0], mmin * (1 - 1e-9), "%s: lambda_min %g < smallest node mass %g", what, w[0], mmin);
    free(w);
  } else {
    cr_assert_eq(eX, 0.0, "%s: the linear corotated dP/dF is not projected", what);
  }
  reference_free(&R);
  free(g), free(gp), free(gm), free(d), free(v0), free(v), free(H), free(A_before);
  kn_mpm_body_free(b);
}

Test(mpm_potential, linear_corotated) { run_model(KN_MPM_LINEAR_COROTATED, 0, 0x9e3779b97f4a7c15ull, "linear corotated"); }
Test(mpm_potential, elastoplastic) { run_model(KN_MPM_LINEAR_COROTATED, 2e3, 0x2545f4914f6cdd1dull, "elastoplastic"); }
Test(mpm_potential, eos_fluid) { run_model(KN_MPM_EOS_FLUID, 0, 0xd1b54a32d192ed03ull, "EOS fluid"); }
