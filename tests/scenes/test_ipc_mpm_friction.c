/* ipc's lagged friction on MPM particles stays within the cone of the solved normal force (issue 20,
 * the fidelity cell mpm_ball_slope_mu_0_2). The fidelity MPM ball (examples/fidelity/
 * mpm_ball_slope_mu_0_2.yaml: r 0.5 m, h 0.2, mu 0.2 on a 45 deg slope, so it slides) on ipc with
 * its default keys lands at t = 0.06 s and then hops from particle to particle: each landing is a
 * decelerating impulse, and the next step's friction reads that impulse lagged at its start. With
 * the lagging refreshed only when a lagged lambda was above twice the normal force at the answer, a
 * step's friction reached 0.37 of its normal force (t = 0.12 s), the run's friction impulse was
 * 0.245 of its normal impulse, and the ball ended 8.4 cm behind a t^2 / 2 at t = 1 s (the cell
 * failed). Now lambda is refreshed while it is above 1.1 times the answer's (sim/nl_ipc.c,
 * LAG_OVERSTATED), so every particle contact's friction is at most 1.1 mu of its normal force
 * (friction mu lambda f1 <= mu lambda with f1 <= 1): asserted here at every contact of every step
 * over the landing and the first hops, 0.2 s (20 steps; ~3 s of CPU in Release). Measured
 * (2026-11-27, Release): largest |f_t| / (mu f_n) 1.094 over these steps (1.87 before: particle
 * 211 at step 12); over the cell's 1 s the friction impulse is 0.202 of the normal impulse and the
 * ball ends at 2.8025 m (discrete-time a t (t + h) / 2 = 2.8025; the cell passes). The bound's 1e-9
 * is round-off of the recorded forces, not a tolerance of the physics. */
#include "ipc_util.h"

#include "sim/sim.h"

Test(ipc_mpm_friction, lagged_friction_within_1_1_mu_of_each_particles_normal_force) {
  const char* path = KNEAD_SOURCE_DIR "/examples/fidelity/mpm_ball_slope_mu_0_2.yaml";
  const char* sets[] = {"contact.backend=ipc"};
  const double mu = 0.2;
  test_world t = {0};
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_with(path, sets, 1, &t.scene, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(t.scene, &t.world, &err), KN_OK, "%s", err.msg);
  const kn_world* w = t.world;
  double worst = 0, Fn = 0, Ft = 0;
  int judged = 0;
  ipc_audit audit = ipc_audit_start();
  for (int k = 0; k < 20; k++) {
    ipc_step_audited(&t, 1, &audit);
    for (int i = 0; i < w->nmpm_contact; i++) {
      const kn_world_mpm_contact* c = &w->mpm_contacts[i];
      double fn = c->f[0] * c->n[0] + c->f[1] * c->n[1] + c->f[2] * c->n[2], ft2 = 0;
      for (int a = 0; a < 3; a++) ft2 += (c->f[a] - fn * c->n[a]) * (c->f[a] - fn * c->n[a]);
      double ft = sqrt(ft2);
      Fn += fabs(fn), Ft += ft;
      judged += fabs(fn) > 0;
      if (fabs(fn) > 0) worst = fmax(worst, ft / (mu * fabs(fn)));
      cr_expect(ft <= 1.1 * mu * fabs(fn) * (1 + 1e-9) + 1e-12,
                "step %ld: particle %d's friction %.4g N is %.3f mu of its normal force %.4g N", w->step, c->particle,
                ft, ft / (mu * fabs(fn)), fabs(fn));
    }
  }
  ipc_audit_log("mpm ball", &audit);
  cr_log_info("mpm ball on ipc over 0.2 s: %d particle contacts with force, largest |f_t| / (mu f_n) %.4f, "
              "friction impulse / normal impulse %.4f", judged, worst, Fn > 0 ? Ft / Fn : 0);
  cr_expect_geq(judged, 5, "only %d particle contacts carried force: the ball did not land", judged);
  tw_free(&t);
}
