/* A public 7-DoF arm (bullet3's kuka_iiwa/model.urdf, 17.5 kg, STL collision meshes) collapses
 * without a controller onto the floor at dt = 0.01 with the default contact settings. With margin
 * 0 its links met the floor only once already inside it: 9.5-18.8 mm deep from these starts (the
 * issue measured 30 mm; MuJoCo's defaults: 7 mm). Speculative detection (each collider's reach
 * over the step, kn_sim_collider_reach) sees the floor before the link gets there: measured
 * 0.07 mm. Asserted: no contact deeper than 5 mm, as a scene check would. */
#include "../scenes/scene_util.h"

static double collapse(double q2) {
  char yaml[2048];
  snprintf(yaml, sizeof yaml,
           "time_step: 0.01\nduration: 3\n"
           "robots:\n"
           "  - name: iiwa\n"
           "    urdf: %s/bullet3/data/kuka_iiwa/model.urdf\n"
           "    q0: [0, %g, 0, 0, 0, 0, 0]\n"
           "objects:\n"
           "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
           "checks:\n"
           "  - {name: shallow, type: no_penetration, value: 0.005}\n",
           KNEAD_SHARED_MODELS, q2);
  test_world t = tw_create(yaml);
  double deepest = 0;
  for (long k = 0; k < kn_world_total_steps(t.world); k++) {
    tw_step(&t, 1);
    for (int c = 0; c < t.world->ncontact; c++) deepest = fmax(deepest, -t.world->contacts[c].phi);
  }
  tw_free(&t);
  return deepest;
}

Test(arm_collapse, links_stay_out_of_the_floor) {
  const double starts[3] = {0.05, 0.2, 1.0}; /* joint 2 tilted: falls from upright, or half way */
  for (int i = 0; i < 3; i++) {
    double d = collapse(starts[i]);
    cr_log_info("iiwa collapse from q2 = %.2f: deepest contact %.3f mm", starts[i], 1e3 * d);
    cr_expect(d < 5e-3, "q2 = %g: a link went %.2f mm into the floor (5 mm allowed)", starts[i], 1e3 * d);
  }
}
