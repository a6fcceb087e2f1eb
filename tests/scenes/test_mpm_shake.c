/* The seed's shake scene (digest §7.7 "Shake", Fig. 7) at dt = 0.01, run from the example file
 * examples/mpm_shake.yaml as it is: two rigid panels (examples/models/mpm_shaker.urdf: x slides
 * pushing 20 N each, PD saturated at the effort limit, on a shared z slide) close on a row elastic
 * MPM cube | rigid cube | elastic MPM cube resting on the ground, lift it 0.1 m, shake it up and
 * down (+-2 cm, 2 Hz, 1 s) and hold. The rigid cube (0.03 m, density 150x the elastic cubes': 15000
 * vs 100 kg/m^3, 0.405 kg) touches only the elastic cubes (0.05 m, E 1e5, nu 0.4, mu 0.8, one MPM
 * grid at h 0.0125, contact margin 5 mm), so it is held by MPM-rigid friction alone:
 * 2 mu F = 32 N against m (g + a) <= 0.405 (9.81 + 3) = 5.2 N.
 * Asserted:
 *  - the panels stop where 20 N compresses the jellies (q = 0.016-0.017 m measured; a panel that
 *    travels much further has pushed particles through the red cube): q < 0.022 m on both sides;
 *  - after the lift (t >= 1 s): the rigid cube never drops (z > 0.06 m), follows the carriage
 *    within 3 mm (z - z_lift within 3 mm of its value at t = 1 s; measured 2.0 mm), |x|, |y| < 5 mm,
 *    and both jellies touch the panels every step.
 * An earlier coarse copy (h 0.025, separate grids, no margin) passed on particles tunnelled 8 mm
 * into the red cube (panels at q = 0.055 m); this one needs the example's resolution. */
#include "scene_util.h"

Test(mpm_shake, grasp_holds_rigid_cube, .timeout = 900) {
  test_world t = {0};
  kn_error err = {0};
  cr_assert_eq(kn_scene_load(KNEAD_SOURCE_DIR "/examples/mpm_shake.yaml", &t.scene, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(t.scene, &t.world, &err), KN_OK, "%s", err.msg);
  kn_world* w = t.world;
  const double* red = tw_object_q(&t, "red");
  const double* q = w->trees[w->robots[0].tree].q; /* lift, left panel, right panel */
  long n = kn_world_total_steps(w);
  double rel0 = 0, zmin = 1e30, dzmax = 0, xymax = 0, qmax = 0;
  int nocontact = 0;
  for (long s = 0; s < n; s++) {
    tw_step(&t, 1);
    if (s % 20 == 0)
      printf("t %.2f: red %.4f %.4f %.4f, lift %.4f, panels %.4f %.4f, jelly contacts %d %d\n", w->t, red[0], red[1],
             red[2], q[0], q[1], q[2], w->mpms[0].ncontact, w->mpms[1].ncontact);
    qmax = fmax(qmax, fmax(q[1], q[2]));
    if (w->t < 1.0 - 1e-9) continue;
    if (rel0 == 0) rel0 = red[2] - q[0];
    zmin = fmin(zmin, red[2]);
    dzmax = fmax(dzmax, fabs(red[2] - q[0] - rel0));
    xymax = fmax(xymax, fmax(fabs(red[0]), fabs(red[1])));
    if (w->mpms[0].ncontact == 0 || w->mpms[1].ncontact == 0) nocontact++;
  }
  printf("mpm shake: panels travel at most %.4f m; t >= 1 s: red cube min z %.4f m, max |dz rel. carriage| %.3e m, "
         "max |x|,|y| %.3e m, steps without MPM contact %d\n", qmax, zmin, dzmax, xymax, nocontact);
  cr_expect_lt(qmax, 0.022, "the panels travelled %g m", qmax);
  cr_expect_gt(zmin, 0.06, "the rigid cube dropped: z %g", zmin);
  cr_expect_lt(dzmax, 0.003, "the rigid cube slid %g m relative to the panels", dzmax);
  cr_expect_lt(xymax, 0.005);
  cr_expect_eq(nocontact, 0);
  tw_free(&t);
}
