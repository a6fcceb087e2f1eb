/* sap/: the PD feed-forward (gravity compensation) inside the constraint is clamped together with
 * the PD term (digest §5.3, Drake's discrete_update_manager): 1 DoF, I = 2, gravity torque -30 in
 * v* (v* = -dt 30 / I), u_ff = +30, effort limit 50, a big step (qd = 1, Kp = 1e4): the applied
 * torque gamma / dt is exactly the limit 50 (not 30 + 50), and v = v* + dt 50 / I. */
#include "sap/sap.h"
#include "sap_test_util.h"

Test(sap_pd_ff, feedforward_clamped_with_pd) {
  const double dt = 0.01, I = 2, tg = 30, e = 50;
  const double signs[2] = {1, -1};
  for (int k = 0; k < 2; k++) {
    double vstar = -dt * tg / I;
    kn_sap_problem* p = kn_sap_problem_create(dt);
    kn_error err = {0};
    cr_assert_eq(kn_sap_add_clique(p, 1, &I, &vstar, NULL, &err), KN_OK);
    kn_sap_pd_params pd = {.kp = 1e4, .kd = 100, .q0 = 0, .qd = signs[k], .vd = 0, .u_ff = tg, .effort_limit = e};
    cr_assert_eq(kn_sap_add_pd(p, 0, 0, &pd, NULL, &err), KN_OK, "%s", err.msg);
    kn_sap_solver* s = kn_sap_solver_create();
    double v, gamma;
    cr_assert_eq(kn_sap_solve(s, p, NULL, NULL, &v, &gamma, NULL, &err), KN_OK, "%s", err.msg);
    fprintf(stderr, "step %+g:\n", signs[k]);
    EXPECT_REL("applied torque gamma / dt = +-e", gamma / dt, signs[k] * e, 1e-12);
    EXPECT_REL("v = v* + dt u / I", v, vstar + dt * signs[k] * e / I, 1e-12);
    cr_expect(fabs(gamma / dt) <= e * (1 + 1e-12), "|u| %.15g exceeds the limit %g", gamma / dt, e);
    kn_sap_solver_free(s);
    kn_sap_problem_free(p);
  }
}
