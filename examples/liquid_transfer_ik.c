/* The arm poses of examples/mpm_liquid_transfer.yaml, by inverse kinematics of knead_arm7 with the
 * cup (models/knead_cup_held.urdf) welded on its flange exactly as in the scene: the flange points
 * along world +x, so the upright cup's frame is aligned with the world. The arm base stands at
 * (-0.85, -0.10, 0) (scene_yaml), in line with the pouring spot. Poses of the cup frame (origin: the floor's inner top face, centre):
 *   start      upright, at (0, START_Y, CUP_Z): beside the bin, outside its near wall
 *   over       upright, at (0, OVER_Y, CUP_Z): the -y lip (cup point (0, -0.05, 0.1)) over the bin
 *   tilt k     rotated by theta_k about world +x (the top goes to -y) about the -y lip, which stays
 *              where it was in "over" (pouring over the lip), theta_k = TILT k / NTILT
 * Each pose is solved by damped least squares (Levenberg-Marquardt on the 6-D cup pose error,
 * Jacobian of kn_mb_point_jacobian over the 7 arm joints), warm-started from the previous pose so
 * the elbow stays in one branch; for the first 1000 iterations the redundant direction is pulled
 * toward a rest posture (q1 = q3 = q5 = 0, flange level), then the pose error converges alone. Prints the q of each pose; the numbers are pasted into the scene.
 * Run: ./build/liquid_transfer_ik */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim.h"

#define CUP_Z 0.13
#define START_Y 0.17
#define OVER_Y -0.10
#define TILT 2.3
#define NTILT 4

static const char* scene_yaml =
    "contact: {backend: none}\n"
    "robots:\n"
    "  - name: arm\n"
    "    urdf: knead://models/knead_arm7.urdf\n"
    "    base_pose: {xyz: [-0.85, -0.10, 0]}\n"
    "  - name: cup\n"
    "    urdf: knead://models/knead_cup_held.urdf\n"
    "    attach_to: {robot: arm, link: arm_link_7, pose: {xyz: [0.05, 0, 0.115], rpy: [0, -1.5707963267948966, 0]}}\n";

/* (target cup origin p_t and rotation R_t, row-major) => q[0..6] of the arm, starting from q;
 * returns the final pose error norm. The redundant direction pulls toward a rest posture during
 * the first 1000 iterations (the elbow stays in the vertical plane through the base and away from
 * the joint limits), steps capped at 0.2 rad per joint. */
static double ik(const kn_mb_model* m, kn_mb_data* d, int cup, const double p_t[3], const double R_t[9], double* q) {
  static const double q_rest[7] = {0, 0.5, 0, -1.4, 0, -0.33, 0};
  kn_mb_ik_options o = kn_mb_ik_options_default();
  o.max_iterations = 2000, o.damping = 1e-4, o.q_rest = q_rest, o.rest_gain = 0.1, o.rest_iterations = 1000;
  o.max_step = 0.2;
  return kn_mb_ik_pose(m, d, cup, p_t, R_t, 7, &o, q);
}

static void print_q(const char* name, const double p[3], double theta, double res, const double* q) {
  printf("%-8s cup at (%.3f, %.3f, %.3f), tilt %.3f rad, pose error %.1e: [", name, p[0], p[1], p[2], theta, res);
  for (int j = 0; j < 7; j++) printf("%.6f%s", fabs(q[j]) < 5e-7 ? 0.0 : q[j], j < 6 ? ", " : "]\n");
}

int main(void) {
  kn_error err = {0};
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  if (kn_scene_load_string(scene_yaml, strlen(scene_yaml), "knead://liquid_transfer_ik.yaml", &sc, &err) ||
      kn_world_create(sc, &w, &err)) {
    fprintf(stderr, "liquid_transfer_ik: %s\n", err.msg);
    kn_scene_free(sc);
    return 1;
  }
  const kn_mb_model* m = w->trees[0].robot->model;
  kn_mb_data* d = w->trees[0].data;
  int cup = kn_mb_find_body(m, "cup");
  /* seed: elbow up, wrist bent so the flange points forward (+x) */
  double q[16] = {0, 0.5, 0, -1.4, 0, -0.33, 0};
  const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double p[3] = {0, START_Y, CUP_Z};
  double res = ik(m, d, cup, p, I, q);
  print_q("start", p, 0, res, q);
  p[1] = OVER_Y;
  res = ik(m, d, cup, p, I, q);
  print_q("over", p, 0, res, q);
  /* the -y lip, cup point L_c = (0, -0.05, 0.1), stays at its "over" position L_w */
  const double L_c[3] = {0, -0.05, 0.1};
  const double L_w[3] = {p[0] + L_c[0], p[1] + L_c[1], p[2] + L_c[2]};
  for (int k = 1; k <= NTILT; k++) {
    double th = TILT * k / NTILT, c = cos(th), s = sin(th);
    const double R[9] = {1, 0, 0, 0, c, -s, 0, s, c};
    for (int a = 0; a < 3; a++) p[a] = L_w[a] - (R[3 * a] * L_c[0] + R[3 * a + 1] * L_c[1] + R[3 * a + 2] * L_c[2]);
    char name[16];
    snprintf(name, sizeof name, "tilt %d", k);
    res = ik(m, d, cup, p, R, q);
    print_q(name, p, th, res, q);
  }
  kn_world_free(w);
  kn_scene_free(sc);
  return 0;
}
