/* Five 0.1 m boxes (1 kg) stacked on the ground rest for 10 s at dt = 0.01: after the first
 * second (the compliance settling) every box moves by less than 1 mm until t = 10 s, drifts
 * sideways by less than 1 mm from its start, and tilts by less than 1e-3 rad. The settling itself
 * is a few mm at this dt: the near-rigid regularization R = beta^2 w / (4 pi^2) (digest §2.1,
 * beta = 1) is softer than k = 1e6 N/m, its effective stiffness 1 / (dt (dt + tau_d) R) is a few
 * kN/m per corner; it is reported, not asserted. */
#include "scene_util.h"

Test(stack, five_boxes_rest_for_10_s) {
  char yaml[4096];
  size_t n = (size_t)snprintf(yaml, sizeof yaml,
                              "time_step: 0.01\nduration: 10\n"
                              "objects:\n"
                              "  - name: ground\n"
                              "    shape: {halfspace: {normal: [0, 0, 1]}}\n"
                              "    fixed: true\n");
  double z = 0;
  for (int k = 0; k < 5; k++) {
    double load = (5 - k) * 9.81;      /* weight carried by the contact below box k */
    z += (k == 0 ? 0.05 : 0.1) - load / 5e5 / 4;
    n += (size_t)snprintf(yaml + n, sizeof yaml - n,
                          "  - name: box%d\n    shape: {box: [0.1, 0.1, 0.1]}\n    mass: 1\n"
                          "    pose: {xyz: [0, 0, %.17g]}\n",
                          k, z);
  }
  test_world t = tw_create(yaml);
  double q0[5][7];
  for (int k = 0; k < 5; k++) {
    char name[16];
    snprintf(name, sizeof name, "box%d", k);
    memcpy(q0[k], tw_object_q(&t, name), sizeof q0[k]);
  }
  tw_step(&t, 100);
  double q1[5][7];
  for (int k = 0; k < 5; k++) {
    char name[16];
    snprintf(name, sizeof name, "box%d", k);
    memcpy(q1[k], tw_object_q(&t, name), sizeof q1[k]);
  }
  tw_step(&t, kn_world_total_steps(t.world) - 100);
  double worst = 0, worst_side = 0, worst_tilt = 0;
  for (int k = 0; k < 5; k++) {
    char name[16];
    snprintf(name, sizeof name, "box%d", k);
    const double* q = tw_object_q(&t, name);
    double d = sqrt(pow(q[0] - q1[k][0], 2) + pow(q[1] - q1[k][1], 2) + pow(q[2] - q1[k][2], 2));
    double side = sqrt(pow(q[0] - q0[k][0], 2) + pow(q[1] - q0[k][1], 2));
    double tilt = 2 * sqrt(q[4] * q[4] + q[5] * q[5] + q[6] * q[6]);
    worst = fmax(worst, d);
    worst_side = fmax(worst_side, side);
    worst_tilt = fmax(worst_tilt, tilt);
    cr_log_info("box%d: drift 1..10 s %.3e m, sideways %.3e m, settling %.3e m, tilt %.3e rad", k, d, side,
                q0[k][2] - q1[k][2], tilt);
  }
  const kn_run_stats* rs = &t.world->stats;
  cr_log_info("stack: contacts %d (max %d), iterations max %d mean %.2f, line search max %d", t.world->last.contacts,
              rs->max_contacts, rs->max_iterations, (double)rs->iterations / (double)rs->steps,
              rs->max_line_search_iterations);
  cr_expect(worst < 1e-3, "largest drift from t = 1 s to 10 s %.3e m", worst);
  cr_expect(worst_side < 1e-3, "largest sideways drift %.3e m", worst_side);
  cr_expect(worst_tilt < 1e-3, "largest tilt %.3e rad", worst_tilt);
  tw_free(&t);
}
