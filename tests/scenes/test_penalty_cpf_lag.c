/* contact.penalty.lag_lambda on the continuous mode's regression grasp box_40mm_200g (the pads' mu 1,
 * a half-space floor: the mixed mode). Diagnosed (wt-pcontv): two causes of its Newton failures over
 * epsilon_v. (1) the friction's exact lambda: its derivative couples the pads' normal and tangential
 * directions; with the floor frictionless the exact lambda still fails at 1e-3 (step 281, the shake),
 * the lagged one not. (2) the mixed mode's lagged passes minimized the springs' energy while the pairs'
 * force (no gradient) stayed in the residual: at the lift (step 141) the first Newton stalls on the
 * floor springs' kink and the pass cannot converge (Armijo on an energy that ignores the pairs). The
 * Jacobian is not at fault: at the failing iterates it matches central differences of the whole
 * residual to 4e-4 relative.
 *   sweep  epsilon_v 1e-3, 3e-3, 5e-3, 1e-2 with lag_lambda: through the lift (160 steps, t = 1.6 s)
 *          every step converges. Without it 5e-3 fails at step 141 (t = 1.41 s) in Release, but
 *          the same run in the Debug (sanitizer) build gets through the lift: at that kink round-off
 *          decides, so the failure is not asserted (a test of it failed by build type, 2026-11-27).
 *   full   epsilon_v 1e-3 with lag_lambda over the whole scene: every check but SAP's golden passes
 *          (held_during_shake: drift < 5 mm in the palm).
 * Scaled for CI: the sweep stops after the lift (the failures were at steps 141-142 and 281); ~5 s in
 * all in Release. */
#include "scene_util.h"

static test_world lag_run(const char* eps, int lag) {
  char path[512], e[64];
  snprintf(path, sizeof path, "%s/examples/regression/box_40mm_200g.yaml", KNEAD_SOURCE_DIR);
  snprintf(e, sizeof e, "contact.penalty.epsilon_v=%s", eps);
  /* anchored: false: the cases are the smoothed friction's (epsilon_v) */
  const char* set[] = {"contact.backend=penalty", "contact.penalty.continuous=true", "contact.penalty.anchored=false", e,
                       lag ? "contact.penalty.lag_lambda=true" : "contact.penalty.lag_lambda=false"};
  test_world t = {0};
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_with(path, set, 5, &t.scene, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(t.scene, &t.world, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_checks_attach(t.world, &err), KN_OK, "%s", err.msg);
  return t;
}

Test(penalty_cpf_lag, epsilon_v_sweep_converges_through_the_lift) {
  const char* eps[] = {"1e-3", "3e-3", "5e-3", "1e-2"};
  for (int i = 0; i < 4; i++) {
    test_world t = lag_run(eps[i], 1);
    kn_error err = {0};
    for (int k = 0; k < 160; k++)
      cr_assert_eq(kn_world_step(t.world, &err), KN_OK, "epsilon_v %s, step %d: %s", eps[i], k + 1, err.msg);
    tw_free(&t);
  }
}

Test(penalty_cpf_lag, full_grasp_at_1e_3_passes_its_checks) {
  test_world t = lag_run("1e-3", 1);
  tw_step(&t, lround(t.scene->duration / t.scene->time_step));
  tw_expect_checks_pass(&t, "box_40mm_200g (epsilon_v 1e-3, lag_lambda)", 4);
  tw_free(&t);
}
