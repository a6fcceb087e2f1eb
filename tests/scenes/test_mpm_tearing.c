/* Dough tearing with two arms (paper §VII-B, digest §7.7; examples/mpm_dough_tearing.yaml at a
 * coarse grid): two knead_arm7 arms with knead_gripper welded to their flanges (bases at
 * x = -+0.75 m, the right one turned by yaw pi) grab a 0.24 x 0.06 x 0.04 m cookie dough (linear
 * corotated, E 1e5 Pa, nu 0.4, von Mises yield 6e3 Pa, rho 1e3), lift it 6 cm and pull apart by
 * 0.15 m per hand (0.25 m/s). Joint targets from examples/dough_tearing_ik.c run with GRIP_X 0.065:
 * palms over x = -+0.065 m, grippers turned a quarter turn (q7 = pi/2) so the fingers close along
 * the pull axis: the inner pads stand in the dough 4 cm apart and drag it outward by normal force.
 * h 0.03 m with 8 particles per cell (192 particles, spacing 0.015 m): at 1 particle per cell the
 * dough collapses under its own weight, so the pads would have nothing to hold.
 * Outcome asserted at the end of the pull (t 1.3 s): two pieces. Sorting the particles by x, the
 * widest empty interval must be at least GAP (measured 0.285 m, from -0.150 to 0.135), each side of
 * it must hold more than 35 % of the mass (measured 50 / 50 %, no stray particle), each side must
 * be one piece along x (no empty interval wider than two particle spacings inside it), each
 * centroid must lie beyond the original block end |x| = 0.12 m (measured ~0.21 m) and be held up by
 * its gripper (centroid z > 0.04 m, twice its initial 0.02 m; measured ~0.068 m), and every SAP
 * solve converged (measured at most 32 iterations, the limit is 100).
 * Measured before (grip at -+0.10 m, inner pads 0.11 m apart): three pieces, a 12.5 % lump fell
 * from between the pads and the ends slid out of the pads; grip at -+0.08 m: the ends held, still
 * the 12.5 % middle lump. */
#include <stdlib.h>

#include "scene_util.h"

#define MODELS KNEAD_SOURCE_DIR "/examples/models/"
#define GAP 0.10 /* [m] the empty interval between the pieces: several particle spacings 0.015 */
#define SPLIT 0.03 /* [m] two particle spacings: a wider empty interval splits a side in two */

#define GRASP "[0, 1.217154, 0, -1.109802, 0, 0.814637, 1.570796]"
#define LIFT "[0, 1.112518, 0, -1.148910, 0, 0.880164, 1.570796]"
#define PULL "[0, 0.873810, 0, -1.706372, 0, 0.561410, 1.570796]"

static const char* arm_yaml =
    "  - name: %s\n    urdf: " MODELS "knead_arm7.urdf\n    base_pose: %s\n    q0: " GRASP "\n"
    "    controller:\n      kp_per_joint: [4000, 6000, 2000, 2000, 400, 400, 100]\n"
    "      kd_per_joint: [200, 260, 90, 90, 8, 8, 2]\n      gravity_compensation: true\n"
    "      sequence:\n        - {name: close, duration: 0.4, q: " GRASP "}\n"
    "        - {name: lift, duration: 0.3, q: " LIFT "}\n"
    "        - {name: pull, duration: 0.6, q: " PULL "}\n"
    "  - name: %s_gripper\n    urdf: " MODELS "knead_gripper.urdf\n"
    "    attach_to: {robot: %s, link: arm_link_7, pose: {xyz: [0, 0, 0.045]}}\n"
    "    q0: [0.04, 0.04]\n    contact: {friction: 1.0}\n"
    "    controller: {kp: 2000, kd: 30, gravity_compensation: true,\n"
    "                 sequence: [{name: close, duration: 0.3, q: [0.02]}]}\n";

Test(mpm_tearing, two_arms_tear_the_dough_in_two, .timeout = 600) {
  char yaml[8192];
  int n = snprintf(yaml, sizeof yaml, "time_step: 0.01\nduration: 1.3\ncontact: {backend: sap}\nrobots:\n");
  n += snprintf(yaml + n, sizeof yaml - (size_t)n, arm_yaml, "left", "{xyz: [-0.75, 0, 0]}", "left", "left");
  n += snprintf(yaml + n, sizeof yaml - (size_t)n, arm_yaml, "right",
                "{xyz: [0.75, 0, 0], rpy: [0, 0, 3.141592653589793]}", "right", "right");
  snprintf(yaml + n, sizeof yaml - (size_t)n,
           "objects:\n  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, friction: 0.3}\n"
           "deformables:\n  - name: dough\n    model: mpm\n    shape: {box: [0.24, 0.06, 0.04]}\n"
           "    resolution: 0.03\n    particles_per_cell: 8\n"
           "    material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3, "
           "yield_stress: 6e3}\n    pose: {xyz: [0, 0, 0.02]}\n    friction: 1.0\n");
  test_world t = tw_create(yaml);
  tw_step(&t, kn_world_total_steps(t.world));
  const kn_mpm_body* b = t.world->mpms[0].body;
  int np = b->np;
  int* order = malloc((size_t)np * sizeof *order);
  cr_assert(order);
  for (int p = 0; p < np; p++) order[p] = p;
  /* insertion sort by x: 192 particles */
  for (int i = 1; i < np; i++)
    for (int j = i; j > 0 && b->x[3 * order[j]] < b->x[3 * order[j - 1]]; j--) {
      int tmp = order[j];
      order[j] = order[j - 1], order[j - 1] = tmp;
    }
  int cut = 0; /* the widest empty interval lies between order[cut - 1] and order[cut] */
  double widest = 0;
  for (int i = 1; i < np; i++) {
    double g = b->x[3 * order[i]] - b->x[3 * order[i - 1]];
    if (g > widest) widest = g, cut = i;
  }
  double m_tot = 0, m_side[2] = {0}, cx[2] = {0}, cz[2] = {0}, inner[2] = {0};
  for (int i = 0; i < np; i++) {
    int p = order[i], s = i >= cut;
    const double* x = b->x + 3 * p;
    m_tot += b->mass[p];
    m_side[s] += b->mass[p], cx[s] += b->mass[p] * x[0], cz[s] += b->mass[p] * x[2];
    if (i > 0 && i != cut) inner[s] = fmax(inner[s], x[0] - b->x[3 * order[i - 1]]);
  }
  for (int s = 0; s < 2; s++) cx[s] /= m_side[s] > 0 ? m_side[s] : 1, cz[s] /= m_side[s] > 0 ? m_side[s] : 1;
  printf("mpm tearing (arms): %d particles; widest empty x interval %.3f m (%.3f .. %.3f); mass left %.1f %%, "
         "right %.1f %%; widest gaps inside %.3f, %.3f m; centroids (%.3f, %.3f) and (%.3f, %.3f) m; "
         "max SAP iterations %d\n", np, widest, b->x[3 * order[cut - 1]], b->x[3 * order[cut]],
         100 * m_side[0] / m_tot, 100 * m_side[1] / m_tot, inner[0], inner[1], cx[0], cz[0], cx[1], cz[1],
         t.world->stats.max_iterations);
  cr_expect_geq(widest, GAP, "the widest empty interval is %g m, want >= %g m", widest, GAP);
  for (int s = 0; s < 2; s++) {
    cr_expect_gt(m_side[s], 0.35 * m_tot, "side %d holds %g of %g kg", s, m_side[s], m_tot);
    cr_expect_lt(inner[s], SPLIT, "side %d splits at an empty interval of %g m", s, inner[s]);
    cr_expect_gt(fabs(cx[s]), 0.12, "piece %d must be carried outward (centroid x %g m)", s, cx[s]);
    cr_expect_lt(cx[s] * (s ? -1 : 1), 0, "piece %d on the wrong side (centroid x %g m)", s, cx[s]);
    cr_expect_gt(cz[s], 0.04, "piece %d must be held up (centroid z %g m)", s, cz[s]);
  }
  free(order);
  cr_expect_lt(t.world->stats.max_iterations, 100, "SAP iterations %d (Drake's default limit 100)",
               t.world->stats.max_iterations);
  tw_free(&t);
}
