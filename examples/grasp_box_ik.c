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

/* (target palm origin p_t, fingers down) => q[0..6] of the arm, starting from q; returns the
 * final pose error norm */
static double ik(const kn_mb_model* m, kn_mb_data* d, int palm, const double p_t[3], double* q) {
  /* palm axes in the world: x = -x_W, y = y_W (finger closing), z = -z_W (fingers down) */
  const double R_t[9] = {-1, 0, 0, 0, 1, 0, 0, 0, -1};
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
