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
 * program checks that by forward kinematics of the right arm. The scene then sets q7 = pi/2 (a
 * quarter turn of the palm about the vertical flange axis, so the fingers close along x): the palm
 * origin stays where it is. Prints the q of each pose; the
 * numbers are pasted into the scene.
 * Run: ./build/dough_tearing_ik [GRIP_X] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

#define BASE_X 0.75
#define GRIP_X 0.065 /* [m] default, the scene's; argv[1] overrides */
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

/* solve the n x n system A x = b in place (Gaussian elimination, partial pivoting) */
static void solve(int n, double* A, double* b) {
  for (int c = 0; c < n; c++) {
    int p = c;
    for (int r = c + 1; r < n; r++)
      if (fabs(A[r * n + c]) > fabs(A[p * n + c])) p = r;
    for (int k = 0; k < n; k++) {
      double t = A[c * n + k];
      A[c * n + k] = A[p * n + k], A[p * n + k] = t;
    }
    double t = b[c];
    b[c] = b[p], b[p] = t;
    for (int r = c + 1; r < n; r++) {
      double f = A[r * n + c] / A[c * n + c];
      for (int k = c; k < n; k++) A[r * n + k] -= f * A[c * n + k];
      b[r] -= f * b[c];
    }
  }
  for (int c = n - 1; c >= 0; c--) {
    for (int k = c + 1; k < n; k++) b[c] -= A[c * n + k] * b[k];
    b[c] /= A[c * n + c];
  }
}

/* (target palm origin p_t and axes R_t, row-major) => q[0..6] of the arm, starting from q;
 * returns the final pose error norm */
static double ik(const kn_mb_model* m, kn_mb_data* d, int palm, const double p_t[3], const double R_t[9],
                 double* q) {
  double Jv[3 * 16], Jw[3 * 16], e[6] = {0};
  const double zero[3] = {0, 0, 0};
  int nv = m->nv;
  for (int it = 0; it < 200; it++) {
    kn_mb_kinematics(m, q, NULL, d);
    const kn_pose* X = &d->X_wb[palm];
    for (int a = 0; a < 3; a++) e[a] = p_t[a] - X->p[a];
    /* orientation error 1/2 sum_i r_i x r_t,i over the columns (small-angle rotation vector) */
    memset(e + 3, 0, 3 * sizeof(double));
    for (int i = 0; i < 3; i++) {
      double r[3] = {X->R[i], X->R[3 + i], X->R[6 + i]}, s[3] = {R_t[i], R_t[3 + i], R_t[6 + i]};
      e[3] += 0.5 * (r[1] * s[2] - r[2] * s[1]);
      e[4] += 0.5 * (r[2] * s[0] - r[0] * s[2]);
      e[5] += 0.5 * (r[0] * s[1] - r[1] * s[0]);
    }
    double norm = 0;
    for (int a = 0; a < 6; a++) norm += e[a] * e[a];
    if (sqrt(norm) < 1e-12) break;
    kn_mb_point_jacobian(m, d, palm, zero, Jv, Jw);
    double J[6][7], A[36], b[6];
    for (int j = 0; j < 7; j++)
      for (int a = 0; a < 3; a++) J[a][j] = Jv[a * nv + j], J[3 + a][j] = Jw[a * nv + j];
    /* dq = J^T (J J^T + lambda^2 I)^-1 e */
    for (int r = 0; r < 6; r++) {
      for (int c = 0; c < 6; c++) {
        double s = 0;
        for (int j = 0; j < 7; j++) s += J[r][j] * J[c][j];
        A[r * 6 + c] = s + (r == c ? 1e-6 : 0);
      }
      b[r] = e[r];
    }
    solve(6, A, b);
    for (int j = 0; j < 7; j++) {
      double s = 0;
      for (int r = 0; r < 6; r++) s += J[r][j] * b[r];
      q[j] += s;
    }
  }
  double n2 = 0;
  for (int a = 0; a < 6; a++) n2 += e[a] * e[a];
  return sqrt(n2);
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
    for (int j = 0; j < 7; j++) printf("%.6f%s", fabs(q[j]) < 5e-7 ? 0.0 : q[j], j < 6 ? ", " : "]\n");
  }
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
