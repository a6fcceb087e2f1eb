/* sap/: the fixed (deformable attachment) constraint (digest §5.1/§5.4, Drake's SapFixedConstraint)
 * through the sap API alone, on point masses: clique "vertex" (3 DoFs, A = m I) and clique "rigid
 * point" (3 DoFs, A = M I), J_vertex = +I, J_point = -I, so v_c = v_vertex - v_point. */
#include <string.h>

#include "sap/sap.h"
#include "sap_test_util.h"

static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
static const double mI3[9] = {-1, 0, 0, 0, -1, 0, 0, 0, -1};

static void diag3(double m, double A[9]) {
  memset(A, 0, 9 * sizeof(double));
  A[0] = A[4] = A[8] = m;
}

/* w, R, v_hat and the eval outputs against their closed forms: W = (1/m + 1/M) I3, so
 * w = ||W||_F / 3 = (1/m + 1/M) / sqrt(3), R = 0.1^2 w / (4 pi^2), v_hat = -g0 / (2 dt). */
Test(sap_fixed, regularization_and_eval) {
  const double dt = 0.002, m = 0.3, M = 5.0;
  double A[9], B[9], vs[3] = {0, 0, 0};
  diag3(m, A), diag3(M, B);
  kn_sap_problem* p = kn_sap_problem_create(dt);
  kn_error err = {0};
  cr_assert_eq(kn_sap_add_clique(p, 3, A, vs, NULL, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_sap_add_clique(p, 3, B, vs, NULL, &err), KN_OK, "%s", err.msg);
  const double g0[3] = {1e-3, -2e-4, 5e-4};
  int idx = -1;
  cr_assert_eq(kn_sap_add_fixed(p, 0, I3, 1, mI3, g0, &idx, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_sap_constraint_kind(p, idx), KN_SAP_FIXED);
  cr_assert_eq(kn_sap_constraint_rows(p, idx), 3);
  double w, R[3], vhat[3];
  cr_assert_eq(kn_sap_constraint_regularization(p, idx, &w, R, vhat, &err), KN_OK, "%s", err.msg);
  fprintf(stderr, "fixed regularization\n");
  EXPECT_REL("w = (1/m + 1/M) / sqrt 3", w, (1 / m + 1 / M) / sqrt(3.0), 1e-14);
  for (int r = 0; r < 3; r++) {
    EXPECT_REL("R = 0.1^2 w / (4 pi^2)", R[r], 0.01 * w / (4 * M_PI * M_PI), 1e-14);
    EXPECT_REL("v_hat = -g0 / (2 dt)", vhat[r], -g0[r] / (2 * dt), 1e-14);
  }
  /* v = (v_vertex, v_point): v_c = v_vertex - v_point */
  double v[6] = {0.1, -0.2, 0.05, 0.03, 0.0, -0.1}, cost, gamma[3], G[9], l = 0;
  cr_assert_eq(kn_sap_constraint_eval(p, idx, v, &cost, gamma, G, &err), KN_OK, "%s", err.msg);
  for (int r = 0; r < 3; r++) {
    double y = (vhat[r] - (v[r] - v[3 + r])) / R[r];
    EXPECT_REL("gamma_r", gamma[r], y, 1e-14);
    l += 0.5 * R[r] * y * y;
    for (int t = 0; t < 3; t++) EXPECT_ABS("G", G[3 * r + t], r == t ? 1 / R[r] : 0, 1e-12 / R[r]);
  }
  EXPECT_REL("cost", cost, l, 1e-14);
  /* non-finite g0 is rejected */
  const double bad[3] = {0, NAN, 0};
  cr_expect_eq(kn_sap_add_fixed(p, 0, I3, 1, mI3, bad, NULL, &err), KN_ERR_INVALID);
  cr_expect(strstr(err.msg, "g0[1]") != NULL, "%s", err.msg);
  kn_sap_problem_free(p);
}

/* A vertex (m) attached to a free point mass (M), both in gravity, starting 2 mm apart with
 * different velocities: the impulse pair is internal (total momentum gains exactly (m + M) g dt
 * per step), the error decays (critically damped: v_hat = -g / (2 dt)) below 1e-9 m in 40 steps. */
Test(sap_fixed, two_bodies_momentum_and_convergence) {
  const double dt = 1e-3, m = 0.2, M = 3.0, grav[3] = {0, 0, -9.81};
  double xa[3] = {0.002, 0, 0}, xb[3] = {0, 0, 0}, va[3] = {0, 0.3, 0}, vb[3] = {0, 0, 0.1};
  double A[9], B[9];
  diag3(m, A), diag3(M, B);
  kn_sap_problem* p = kn_sap_problem_create(dt);
  kn_sap_solver* s = kn_sap_solver_create();
  kn_error err = {0};
  double err_first = 0, err_last = 0, worst_momentum = 0;
  for (int step = 0; step < 40; step++) {
    kn_sap_problem_reset(p, dt);
    double vsa[3], vsb[3], g0[3], P0[3];
    for (int k = 0; k < 3; k++) {
      vsa[k] = va[k] + dt * grav[k], vsb[k] = vb[k] + dt * grav[k], g0[k] = xa[k] - xb[k];
      P0[k] = m * va[k] + M * vb[k];
    }
    cr_assert_eq(kn_sap_add_clique(p, 3, A, vsa, NULL, &err), KN_OK, "%s", err.msg);
    cr_assert_eq(kn_sap_add_clique(p, 3, B, vsb, NULL, &err), KN_OK, "%s", err.msg);
    cr_assert_eq(kn_sap_add_fixed(p, 0, I3, 1, mI3, g0, NULL, &err), KN_OK, "%s", err.msg);
    double v[6], gamma[3];
    cr_assert_eq(kn_sap_solve(s, p, NULL, NULL, v, gamma, NULL, &err), KN_OK, "%s", err.msg);
    for (int k = 0; k < 3; k++) {
      /* A (v - v*) = J^T gamma: +gamma on the vertex, -gamma on the point (to the solver's rel 1e-6) */
      /* SAP's optimality test is on whole vectors: scale by the momentum norms */
      double scale = m * sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) +
                     M * sqrt(v[3] * v[3] + v[4] * v[4] + v[5] * v[5]) + (m + M) * 9.81 * dt;
      cr_expect(fabs(m * (v[k] - vsa[k]) - gamma[k]) <= 1e-6 * scale, "vertex row %d: %g vs %g", k,
                m * (v[k] - vsa[k]), gamma[k]);
      cr_expect(fabs(M * (v[3 + k] - vsb[k]) + gamma[k]) <= 1e-6 * scale, "point row %d: %g vs %g", k,
                M * (v[3 + k] - vsb[k]), -gamma[k]);
      double dP = m * v[k] + M * v[3 + k] - P0[k] - (m + M) * grav[k] * dt;
      worst_momentum = fmax(worst_momentum, fabs(dP));
      va[k] = v[k], vb[k] = v[3 + k];
      xa[k] += dt * va[k], xb[k] += dt * vb[k];
    }
    double e = sqrt((xa[0] - xb[0]) * (xa[0] - xb[0]) + (xa[1] - xb[1]) * (xa[1] - xb[1]) +
                    (xa[2] - xb[2]) * (xa[2] - xb[2]));
    if (step == 0) err_first = e;
    err_last = e;
  }
  fprintf(stderr, "fixed two bodies: |g| after 1 step %.3e, after 40 %.3e, worst momentum error %.3e\n", err_first,
          err_last, worst_momentum);
  cr_expect(worst_momentum < 1e-12, "momentum error %g", worst_momentum);
  cr_expect(err_first < 0.002 && err_first > 0.0005, "one step halves the error roughly: %g", err_first);
  cr_expect(err_last < 1e-9, "error after 40 steps %g", err_last);
  /* relative velocity gone too */
  for (int k = 0; k < 3; k++) cr_expect(fabs(va[k] - vb[k]) < 1e-6, "v_rel[%d] = %g", k, va[k] - vb[k]);
  kn_sap_solver_free(s);
  kn_sap_problem_free(p);
}

/* A vertex hanging from a world point (one clique, no rigid block): at steady state v = 0, so
 * gamma = v_hat / R = -g0 / (2 dt R) must carry the weight m g dt, which gives the near-rigid sag
 * g0_z = -2 dt^2 R m g / dt ... = -2 dt^2 (0.1^2 / (4 pi^2)) g / sqrt(3) (w = 1 / (sqrt(3) m)). */
Test(sap_fixed, hanging_from_world_steady_state) {
  const double dt = 2e-3, m = 0.7, grav = -9.81;
  double x[3] = {0, 0, 0}, v[3] = {0, 0, 0}, A[9], gamma[3] = {0};
  diag3(m, A);
  kn_sap_problem* p = kn_sap_problem_create(dt);
  kn_sap_solver* s = kn_sap_solver_create();
  kn_error err = {0};
  for (int step = 0; step < 200; step++) {
    kn_sap_problem_reset(p, dt);
    double vs[3] = {v[0], v[1], v[2] + dt * grav};
    cr_assert_eq(kn_sap_add_clique(p, 3, A, vs, NULL, &err), KN_OK, "%s", err.msg);
    cr_assert_eq(kn_sap_add_fixed(p, 0, I3, -1, NULL, x, NULL, &err), KN_OK, "%s", err.msg);
    cr_assert_eq(kn_sap_solve(s, p, NULL, NULL, v, gamma, NULL, &err), KN_OK, "%s", err.msg);
    for (int k = 0; k < 3; k++) x[k] += dt * v[k];
  }
  double sag = -2 * dt * dt * (0.01 / (4 * M_PI * M_PI)) * (-grav) / sqrt(3.0);
  fprintf(stderr, "fixed hanging\n");
  EXPECT_REL("force = m g", gamma[2] / dt, -m * grav, 1e-9);
  EXPECT_REL("near-rigid sag", x[2], sag, 1e-6);
  EXPECT_ABS("v_z", v[2], 0, 1e-12);
  kn_sap_solver_free(s);
  kn_sap_problem_free(p);
}
