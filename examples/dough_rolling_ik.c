/* The arm poses of examples/mpm_dough_rolling.yaml (paper §VII-C, digest §7.7), by inverse
 * kinematics of knead_arm7: two arms, bases at (-0.55, -+0.27, 0), hold the rolling pin
 * (models/knead_rolling_pin_held.urdf) by the tops of its grip posts, (0, -+0.27, 0.07) from the
 * axle centre. Each flange points straight down (flange axes x = -x_W, y = y_W, z = -z_W, as in
 * grasp_box_ik.c), so the pin's handle sits in the flange frame at
 *   xyz (0, +-0.27, 0.115), rpy (0, pi, 0)      (0.115 = 0.045 tool face + 0.07 post)
 * which is arm_a's attach_to pose (+) and the pose of arm_b's weld (-). Because each base sits
 * exactly above its grip post's y, both arms need the SAME joint angles for a pin pose: the
 * flange target relative to its base is (0.55 + x, 0, z + 0.115) for the axle at (x, 0, z). So
 * one IK per pin pose gives both arms' waypoints, and the two flanges stay exactly 0.54 m apart
 * along y with equal x, z and orientation at every instant of a joint-space interpolation: the
 * closed chain arm_a - pin - weld - arm_b is consistent by construction (in x-z only the path
 * between knots deviates, equally for both arms).
 * Each pose is solved by damped least squares (Levenberg-Marquardt on the 6-D flange pose error,
 * Jacobian from kn_mb_point_jacobian over the 7 joints), warm-started from the previous pose so
 * the elbow stays in one branch. Prints the q of each pose, pasted into the scene and into
 * tests/scenes/test_mpm_rolling.c. Run: ./build/dough_rolling_ik */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim.h"

#define REACH 0.55 /* base to pin centre along x [m] */
#define GRIP 0.115 /* flange origin above the axle [m] */

static const char* scene_yaml =
    "contact: {backend: none}\n"
    "robots:\n"
    "  - name: arm\n"
    "    urdf: knead://models/knead_arm7.urdf\n";

/* (target flange origin p_t, flange pointing down) => q[0..6], starting from q (kn_mb_ik_pose);
 * returns the final pose error norm */
static double ik(const kn_mb_model* m, kn_mb_data* d, int flange, const double p_t[3], double* q) {
  const double R_t[9] = {-1, 0, 0, 0, 1, 0, 0, 0, -1};
  return kn_mb_ik_pose(m, d, flange, p_t, R_t, 7, NULL, q);
}

int main(void) {
  kn_error err = {0};
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  if (kn_scene_load_string(scene_yaml, strlen(scene_yaml), "knead://dough_rolling_ik.yaml", &sc, &err) ||
      kn_world_create(sc, &w, &err)) {
    fprintf(stderr, "dough_rolling_ik: %s\n", err.msg);
    kn_scene_free(sc);
    return 1;
  }
  const kn_mb_model* m = w->trees[0].robot->model;
  kn_mb_data* d = w->trees[0].data;
  int flange = kn_mb_find_body(m, "arm_link_7");
  double q[16] = {0, 0.6, 0, -1.4, 0, 1.1, 0};
  /* pin axle poses (x, z) [m]: the scene (dough top at z = 0.06, roller r 0.04) and the coarse
   * test; rolling knots every 0.03 m keep the joint-space path on the straight line */
  /* pin axle poses (x, z) [m]. The scene (h 0.02, 27 particles per cell; dough top at 0.06 m,
   * roller r 0.04): start 1 cm above, press 2 cm, roll -0.06 -> +0.06 with knots every 0.03 m
   * (keeping the joint-space path on the straight line), lift. The coarse test (1 particle per
   * cell, whose dough settles to about half its height): start, press to the axle at 0.06 m, roll
   * -0.04 -> +0.02 with knots every 0.02 m, lift. */
  const double poses[][2] = {{-0.06, 0.11}, {-0.06, 0.08}, {-0.03, 0.08}, {0.00, 0.08}, {0.03, 0.08},
                             {0.06, 0.08},  {-0.06, 0.13}, {-0.04, 0.10}, {-0.04, 0.06}, {-0.02, 0.06},
                             {0.00, 0.06},  {0.02, 0.06},  {0.02, 0.11}};
  for (size_t k = 0; k < sizeof poses / sizeof poses[0]; k++) {
    double p[3] = {REACH + poses[k][0], 0, poses[k][1] + GRIP};
    double res = ik(m, d, flange, p, q);
    printf("axle (%+.3f, %.3f), error %.1e: [", poses[k][0], poses[k][1], res);
    for (int j = 0; j < 7; j++) printf("%.6f%s", fabs(q[j]) < 5e-7 ? 0.0 : q[j], j < 6 ? ", " : "]\n");
  }
  /* the diagonal of M at the pressing pose, for the gains: kp_i ~ M_ii w^2, kd_i ~ 2 M_ii w */
  double M[16 * 16], p0[3] = {REACH, 0, 0.08 + GRIP};
  ik(m, d, flange, p0, q);
  kn_mb_kinematics(m, q, NULL, d);
  kn_mb_mass_matrix(m, d, M);
  printf("diag M at the press:");
  for (int j = 0; j < m->nv; j++) printf(" %.4f", M[j * m->nv + j]);
  printf("\n");
  kn_world_free(w);
  kn_scene_free(sc);
  return 0;
}
