/* sap/: implicit PD controller (digest §9 T7), joint upper limit (T8) and the coupler (§5.4).
 * Expected values: digest §9 (sap-convex-contact.ref.py) and the closed forms quoted there. */
#include "sap/sap.h"
#include "sap_test_util.h"

static kn_sap_problem* one_dof(double I, double vstar) {
  kn_sap_problem* p = kn_sap_problem_create(0.01);
  kn_error err = {0};
  cr_assert_eq(kn_sap_add_clique(p, 1, &I, &vstar, NULL, &err), KN_OK, "%s", err.msg);
  return p;
}

static double solve1(kn_sap_problem* p, const double* guess, double* gamma, kn_sap_stats* st) {
  kn_sap_solver* s = kn_sap_solver_create();
  kn_error err = {0};
  double v[8];
  cr_assert_eq(kn_sap_solve(s, p, NULL, guess, v, gamma, st, &err), KN_OK, "%s", err.msg);
  kn_sap_solver_free(s);
  return v[0];
}

Test(sap_T7, implicit_pd) {
  const double dt = 0.01, I = 2, Kp = 100, Kd = 10;
  kn_sap_problem* p = one_dof(I, 0);
  kn_error err = {0};
  kn_sap_pd_params pd = {.kp = Kp, .kd = Kd, .q0 = 0, .qd = 1, .vd = 0, .u_ff = 0, .effort_limit = INFINITY};
  cr_assert_eq(kn_sap_add_pd(p, 0, 0, &pd, NULL, &err), KN_OK, "%s", err.msg);
  double R, vhat, w, gamma;
  cr_assert_eq(kn_sap_constraint_regularization(p, 0, &w, &R, &vhat, &err), KN_OK);
  fprintf(stderr, "T7 PD\n");
  EXPECT_REL("R", R, 9.0909, 1e-4);
  EXPECT_REL("R_nr = 0.1^2/(4 pi^2) w", 0.01 / (4 * M_PI * M_PI) * w, 1.2665e-4, 1e-4);
  const double zero = 0;
  kn_sap_stats st;
  double v = solve1(p, &zero, &gamma, &st);
  EXPECT_REL("v", v, 0.4739336493, 1e-6);
  EXPECT_REL("v (cross-check formula)", v, dt * (Kp * 1) / (I + dt * (dt * Kp + Kd)), 1e-6);
  EXPECT_REL("u = gamma / dt", gamma / dt, 94.78672986, 1e-6);
  EXPECT_REL("gamma", gamma, 0.9478672986, 1e-6);
  kn_sap_problem_free(p);

  /* effort limit 50: the PD force saturates, v = dt e / I = 0.25 exactly */
  p = one_dof(I, 0);
  pd.effort_limit = 50;
  cr_assert_eq(kn_sap_add_pd(p, 0, 0, &pd, NULL, &err), KN_OK, "%s", err.msg);
  v = solve1(p, &zero, &gamma, &st);
  fprintf(stderr, "T7 PD with effort limit 50 (iterations %d)\n", st.iterations);
  EXPECT_REL("v (saturated)", v, 0.25, 1e-12);
  EXPECT_REL("gamma (saturated)", gamma, 0.5, 1e-12);
  kn_sap_problem_free(p);
}

/* the near-rigid gain clamp keeps Kd / Kp and brings R up to R_nr */
Test(sap_T7, near_rigid_gain_clamp) {
  kn_sap_problem* p = one_dof(2, 0);
  kn_error err = {0};
  kn_sap_pd_params pd = {.kp = 1e9, .kd = 1e6, .q0 = 0, .qd = 1, .effort_limit = INFINITY};
  cr_assert_eq(kn_sap_add_pd(p, 0, 0, &pd, NULL, &err), KN_OK, "%s", err.msg);
  double R, vhat, w;
  cr_assert_eq(kn_sap_constraint_regularization(p, 0, &w, &R, &vhat, &err), KN_OK);
  EXPECT_REL("clamped R = R_nr", R, 0.01 / (4 * M_PI * M_PI) * w, 1e-12);
  /* the clamped gains still have tau = Kd / Kp = 1e-3: v_hat = Kp (qd - q0) / (dt Kp + Kd) */
  EXPECT_REL("v_hat with Kd/Kp kept", vhat, 1.0 / (0.01 + 1e-3), 1e-12);
  kn_sap_problem_free(p);
}

Test(sap_T8, joint_upper_limit) {
  const double dt = 0.01, q0 = 0.999;
  kn_sap_problem* p = one_dof(1, 1);
  kn_error err = {0};
  kn_sap_limit_params lp = kn_sap_limit_params_default(dt);
  cr_expect_eq(lp.stiffness, 1e12);
  cr_expect_eq(lp.dissipation_time, dt);
  cr_expect_eq(lp.beta, 0.1);
  cr_assert_eq(kn_sap_add_limit(p, 0, 0, q0, -INFINITY, 1.0, &lp, NULL, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_sap_constraint_rows(p, 0), 1, "only the finite (upper) limit has a row");
  double R, vhat, w, gamma;
  cr_assert_eq(kn_sap_constraint_regularization(p, 0, &w, &R, &vhat, &err), KN_OK);
  fprintf(stderr, "T8 joint limit\n");
  EXPECT_REL("R (near-rigid)", R, 2.533029591e-4, 1e-9);
  EXPECT_REL("v_hat", vhat, -0.05, 1e-12);
  const double zero = 0;
  double v = solve1(p, &zero, &gamma, NULL);
  EXPECT_REL("v", v, 0.05024057687, 1e-6);
  EXPECT_REL("gamma", gamma, 0.9497594231, 1e-6);
  EXPECT_REL("q_next", q0 + dt * v, 0.9995024058, 1e-9);
  kn_sap_problem_free(p);

  /* both limits present: two rows, the lower one inactive (zero impulse) */
  p = one_dof(1, 1);
  cr_assert_eq(kn_sap_add_limit(p, 0, 0, q0, -1.0, 1.0, NULL, NULL, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_sap_constraint_rows(p, 0), 2);
  double g2[2];
  v = solve1(p, &zero, g2, NULL);
  EXPECT_ABS("lower row impulse", g2[0], 0.0, 0.0);
  EXPECT_REL("upper row impulse", g2[1], 0.9497594231, 1e-6);
  EXPECT_REL("v (two rows)", v, 0.05024057687, 1e-6);
  kn_sap_problem_free(p);
}

/* coupler q0 = 2 q1 + 0.1 across two 1-DoF cliques, rigid (beta 0.1 near-rigid):
 * v_hat = -g0 / (2 dt), R = 0.1^2/(4 pi^2) w with w = (1/m0 + rho^2/m1)... |W|_F / 1 */
Test(sap_coupler, two_cliques_closed_form) {
  const double dt = 0.01, m0 = 2, m1 = 3, rho = 2, off = 0.1, q0 = 0.35, q1 = 0.1;
  const double vs0 = 0.3, vs1 = -0.2;
  kn_sap_problem* p = kn_sap_problem_create(dt);
  kn_error err = {0};
  cr_assert_eq(kn_sap_add_clique(p, 1, &m0, &vs0, NULL, &err), KN_OK);
  cr_assert_eq(kn_sap_add_clique(p, 1, &m1, &vs1, NULL, &err), KN_OK);
  cr_assert_eq(kn_sap_add_coupler(p, 0, 0, q0, 1, 0, q1, rho, off, NULL, &err), KN_OK, "%s", err.msg);
  double w, R, vhat;
  cr_assert_eq(kn_sap_constraint_regularization(p, 0, &w, &R, &vhat, &err), KN_OK);
  EXPECT_REL("w", w, 1 / m0 + rho * rho / m1, 1e-14);
  EXPECT_REL("R", R, 0.01 / (4 * M_PI * M_PI) * w, 1e-14);
  double g0 = q0 - rho * q1 - off;
  EXPECT_REL("v_hat = -g0/(2 dt)", vhat, -g0 / (2 * dt), 1e-14);
  kn_sap_solver* s = kn_sap_solver_create();
  double v[2], gamma;
  cr_assert_eq(kn_sap_solve(s, p, NULL, NULL, v, &gamma, NULL, &err), KN_OK, "%s", err.msg);
  /* unbounded impulse: gamma = (v_hat - vc)/R with vc = v0 - rho v1 and A (v - v*) = J^T gamma */
  double vc = v[0] - rho * v[1];
  EXPECT_REL("gamma = (v_hat - v_c)/R", gamma, (vhat - vc) / R, 1e-9);
  EXPECT_REL("momentum dof 0", m0 * (v[0] - vs0), gamma, 1e-9);
  EXPECT_REL("momentum dof 1", m1 * (v[1] - vs1), -rho * gamma, 1e-9);
  kn_sap_solver_free(s);
  kn_sap_problem_free(p);
}
