/* The arm poses of examples/grasp_box.yaml, by inverse kinematics of knead_arm7 with the gripper
 * welded on (the same attach_to as the scene): the palm frame (the gripper's mounting face) held
 * with the fingers pointing straight down and closing along world y, at
 *   pre-grasp  palm 0.10 m above the grasp pose,
 *   grasp      palm origin at z = 0.105 m over the box (box centre 0.025 m, fingertips 5 mm above
 *              the floor, the box centred 0.08 m down the fingers),
 *   lift       0.21 m above the grasp (the box sags ~1 mm in the grip and the arm),
 *   shake up / shake down   lift +- 0.05 m (the 2 Hz, 5 cm shake of the sequence).
 * Each pose is solved by damped least squares (Levenberg-Marquardt on the 6-D palm pose error,
 * Jacobian of kn_mb_point_jacobian over the 7 arm joints), warm-started from the previous pose so
 * the elbow stays in one branch. Prints the q of each pose; the numbers are pasted into the scene.
 * Run: ./build/grasp_box_ik */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim.h"

#define BOX_X 0.55
#define GRASP_Z 0.105

static const char* scene_yaml =
    "contact: {backend: none}\n"
    "robots:\n"
    "  - name: arm\n"
    "    urdf: knead://models/knead_arm7.urdf\n"
    "  - name: gripper\n"
    "    urdf: knead://models/knead_gripper.urdf\n"
    "    attach_to: {robot: arm, link: arm_link_7, pose: {xyz: [0, 0, 0.045]}}\n";

/* (target palm origin p_t, fingers down: palm x = -x_W, y = y_W (finger closing), z = -z_W) =>
 * q[0..6] of the arm, starting from q (kn_mb_ik_pose); returns the final pose error norm */
static double ik(const kn_mb_model* m, kn_mb_data* d, int palm, const double p_t[3], double* q) {
  const double R_t[9] = {-1, 0, 0, 0, 1, 0, 0, 0, -1};
  return kn_mb_ik_pose(m, d, palm, p_t, R_t, 7, NULL, q);
}

int main(void) {
  kn_error err = {0};
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  if (kn_scene_load_string(scene_yaml, strlen(scene_yaml), "knead://grasp_box_ik.yaml", &sc, &err) ||
      kn_world_create(sc, &w, &err)) {
    fprintf(stderr, "grasp_box_ik: %s\n", err.msg);
    kn_scene_free(sc);
    return 1;
  }
  const kn_mb_model* m = w->trees[0].robot->model;
  kn_mb_data* d = w->trees[0].data;
  int palm = kn_mb_find_body(m, "gripper_palm");
  double q[16] = {0, 0.6, 0, -1.4, 0, 1.1, 0, 0.04, 0.04};
  struct {
    const char* name;
    double z;
  } poses[] = {{"pre-grasp", GRASP_Z + 0.10}, {"grasp", GRASP_Z}, {"lift", GRASP_Z + 0.21},
               {"shake up", GRASP_Z + 0.26}, {"shake down", GRASP_Z + 0.16}};
  double q_lift[7];
  for (size_t k = 0; k < sizeof poses / sizeof poses[0]; k++) {
    if (k >= 3) memcpy(q, q_lift, sizeof q_lift);
    double p[3] = {BOX_X, 0, poses[k].z};
    double res = ik(m, d, palm, p, q);
    if (k == 2) memcpy(q_lift, q, sizeof q_lift);
    printf("%-10s palm at (%.3f, %.3f, %.3f), pose error %.1e: [", poses[k].name, p[0], p[1], p[2], res);
    for (int j = 0; j < 7; j++) printf("%.6f%s", fabs(q[j]) < 5e-7 ? 0.0 : q[j], j < 6 ? ", " : "]\n");
  }
  /* the diagonal of M at the lift pose, for the gains: kp_i ~ M_ii w^2, kd_i ~ 2 M_ii w */
  double M[16 * 16];
  memcpy(q, q_lift, sizeof q_lift);
  kn_mb_kinematics(m, q, NULL, d);
  kn_mb_mass_matrix(m, d, M);
  printf("diag M at lift:");
  for (int j = 0; j < m->nv; j++) printf(" %.4f", M[j * m->nv + j]);
  printf("\n");
  kn_world_free(w);
  kn_scene_free(sc);
  return 0;
}
