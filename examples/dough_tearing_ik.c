/* The arm poses of examples/mpm_dough_tearing.yaml, by inverse kinematics of knead_arm7 with the
 * gripper welded on (the same attach_to as the scene). The left arm stands at x = -BASE_X facing
 * +x, the right arm at x = +BASE_X turned by yaw pi; the palm frame (the gripper's mounting face)
 * is held with the fingers pointing straight down and closing along y, at
 *   pre-grasp  palm PRE_DZ above the grasp,
 *   grasp      palm origin at z = GRASP_Z over x = -+GRIP_X (fingertips 5 mm above the floor;
 *              the pads, 0.06 m long, straddle the 0.04 m high dough near its ends at +-0.12 m),
 *   lift       LIFT_DZ above the grasp,
 *   pull       lift pose moved PULL_DX away from the middle (toward the arm's own base),
 *   lower      pull pose back down to the grasp height (the torn piece is put down).
 * Each pose is solved by damped least squares (Levenberg-Marquardt on the 6-D palm pose error,
 * Jacobian of kn_mb_point_jacobian over the 7 arm joints), warm-started from the previous pose so
 * the elbow stays in one branch. The scene is mirror-symmetric (the right arm is the left one
 * turned by pi about the world z axis through the middle), so the right arm takes the same q: the
 * program checks that by forward kinematics of the right arm. The scene then turns the palm about
 * the vertical flange axis by q7 = pi/2 - PALM_YAW (the palm origin stays where it is): the fingers
 * close along a line PALM_YAW off the pull axis x. The two palms (0.16 m long along that line, 0.05 m
 * wide) are then parallel, their centres 2 GRIP_X apart along x, i.e. 2 GRIP_X sin(PALM_YAW) apart
 * across their width: they clear each other by that minus 0.05 m (19.6 mm), where turned straight
 * along x (q7 = pi/2) at GRIP_X 0.065 they overlapped by 30 mm. The wrist housings (spheres of
 * 0.065 m on arm_link_6, above the flanges) clear each other by 2 GRIP_X - 0.13 m (10 mm).
 * Prints the scene's q of each pose (q7 included); the numbers are pasted into the scene.
 * Run: ./build/dough_tearing_ik [GRIP_X] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

#define BASE_X 0.75
#define GRIP_X 0.07 /* [m] default, the scene's; argv[1] overrides */
#define PALM_YAW 0.52 /* [rad] the closing line off the x axis (scene q7 = pi/2 - PALM_YAW) */
#define PALM_WIDTH 0.05 /* [m] knead_gripper.urdf's palm box across its closing axis */
#define GRASP_Z 0.105
#define PRE_DZ 0.06
#define LIFT_DZ 0.06
#define PULL_DX 0.15

static const char* scene_yaml =
    "contact: {backend: none}\n"
    "robots:\n"
    "  - name: left\n"
    "    urdf: knead://models/knead_arm7.urdf\n"
    "    base_pose: {xyz: [-0.75, 0, 0]}\n"
    "  - name: left_gripper\n"
    "    urdf: knead://models/knead_gripper.urdf\n"
    "    attach_to: {robot: left, link: arm_link_7, pose: {xyz: [0, 0, 0.045]}}\n"
    "  - name: right\n"
    "    urdf: knead://models/knead_arm7.urdf\n"
    "    base_pose: {xyz: [0.75, 0, 0], rpy: [0, 0, 3.141592653589793]}\n"
    "  - name: right_gripper\n"
    "    urdf: knead://models/knead_gripper.urdf\n"
    "    attach_to: {robot: right, link: arm_link_7, pose: {xyz: [0, 0, 0.045]}}\n";

/* (target palm origin p_t and axes R_t, row-major) => q[0..6] of the arm, starting from q
 * (kn_mb_ik_pose); returns the final pose error norm */
static double ik(const kn_mb_model* m, kn_mb_data* d, int palm, const double p_t[3], const double R_t[9],
                 double* q) {
  return kn_mb_ik_pose(m, d, palm, p_t, R_t, 7, NULL, q);
}

int main(int argc, char** argv) {
  double grip_x = argc > 1 ? atof(argv[1]) : GRIP_X;
  kn_error err = {0};
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  if (kn_scene_load_string(scene_yaml, strlen(scene_yaml), "knead://dough_tearing_ik.yaml", &sc, &err) ||
      kn_world_create(sc, &w, &err)) {
    fprintf(stderr, "dough_tearing_ik: %s\n", err.msg);
    kn_scene_free(sc);
    return 1;
  }
  const kn_mb_model* m = w->trees[0].robot->model;
  kn_mb_data* d = w->trees[0].data;
  const kn_mb_model* mr = w->trees[1].robot->model;
  kn_mb_data* dr = w->trees[1].data;
  int palm = kn_mb_find_body(m, "gripper_palm"), palm_r = kn_mb_find_body(mr, "gripper_palm");
  if (palm < 0 || palm_r < 0) {
    fprintf(stderr, "dough_tearing_ik: no gripper_palm body\n");
    kn_world_free(w);
    kn_scene_free(sc);
    return 1;
  }
  /* left palm axes in the world: x = -x_W, y = y_W (finger closing), z = -z_W (fingers down) */
  const double R_t[9] = {-1, 0, 0, 0, 1, 0, 0, 0, -1};
  double q[16] = {0, 0.6, 0, -1.4, 0, 1.1, 0, 0.04, 0.04};
  struct {
    const char* name;
    double x, z;
  } poses[] = {{"pre-grasp", -grip_x, GRASP_Z + PRE_DZ},
               {"grasp", -grip_x, GRASP_Z},
               {"lift", -grip_x, GRASP_Z + LIFT_DZ},
               {"pull", -grip_x - PULL_DX, GRASP_Z + LIFT_DZ},
               {"lower", -grip_x - PULL_DX, GRASP_Z}};
  int status = 0;
  for (size_t k = 0; k < sizeof poses / sizeof poses[0]; k++) {
    double p[3] = {poses[k].x, 0, poses[k].z};
    double res = ik(m, d, palm, p, R_t, q);
    /* the right arm at the same q: its palm must be the mirror image (x -> -x, y -> -y) */
    double qr[16];
    memcpy(qr, q, sizeof qr);
    kn_mb_kinematics(mr, qr, NULL, dr);
    const double* pr = dr->X_wb[palm_r].p;
    double mirror = fabs(pr[0] + p[0]) + fabs(pr[1] + p[1]) + fabs(pr[2] - p[2]);
    if (res > 1e-6 || mirror > 1e-6) status = 1;
    /* every pose must lie inside the joint limits (the iiwa elbow stops at +-2.094 rad) */
    for (int i = 0; i < m->nbody; i++) {
      const kn_mb_body* b = &m->bodies[i];
      if (b->nq != 1 || b->q_adr >= 7 || !b->has_position_limits) continue;
      if (q[b->q_adr] < b->lower || q[b->q_adr] > b->upper) {
        printf("  %s at %.4f outside [%.4f, %.4f]\n", b->joint_name, q[b->q_adr], b->lower, b->upper);
        status = 1;
      }
    }
    printf("%-9s left palm at (%.3f, %.3f, %.3f), pose error %.1e, right palm at (%.3f, %.3f, %.3f): [",
           poses[k].name, p[0], p[1], p[2], res, pr[0], pr[1], pr[2]);
    for (int j = 0; j < 6; j++) printf("%.6f, ", fabs(q[j]) < 5e-7 ? 0.0 : q[j]);
    printf("%.6f]\n", q[6] + 2 * atan(1.0) - PALM_YAW); /* the IK's q7 is 0: the palm axes of R_t */
  }
  printf("palms clear each other by %.1f mm, wrist housings by %.1f mm\n",
         1e3 * (2 * grip_x * sin(PALM_YAW) - PALM_WIDTH), 1e3 * (2 * grip_x - 0.13));
  /* the diagonal of M at the lift pose, for the gains: kp_i ~ M_ii w^2, kd_i ~ 2 M_ii w */
  double M[16 * 16];
  kn_mb_kinematics(m, q, NULL, d);
  kn_mb_mass_matrix(m, d, M);
  printf("diag M at lower:");
  for (int j = 0; j < m->nv; j++) printf(" %.4f", M[j * m->nv + j]);
  printf("\n");
  kn_world_free(w);
  kn_scene_free(sc);
  return status;
}
