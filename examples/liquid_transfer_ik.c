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

/* (target cup origin p_t and rotation R_t, row-major) => q[0..6] of the arm, starting from q;
 * returns the final pose error norm */
static double ik(const kn_mb_model* m, kn_mb_data* d, int cup, const double p_t[3], const double R_t[9], double* q) {
  const double q_rest[7] = {0, 0.5, 0, -1.4, 0, -0.33, 0};
  double Jv[3 * 16], Jw[3 * 16], e[6] = {0};
  const double zero[3] = {0, 0, 0};
  int nv = m->nv;
  for (int it = 0; it < 2000; it++) {
    kn_mb_kinematics(m, q, NULL, d);
    const kn_pose* X = &d->X_wb[cup];
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
    if (sqrt(norm) < 1e-12 && it > 1000) break;
    kn_mb_point_jacobian(m, d, cup, zero, Jv, Jw);
    double J[6][7], A[36], b[6];
    for (int j = 0; j < 7; j++)
      for (int a = 0; a < 3; a++) J[a][j] = Jv[a * nv + j], J[3 + a][j] = Jw[a * nv + j];
    /* dq = J^T (J J^T + lambda^2 I)^-1 e, the step capped at 0.2 rad per joint */
    for (int r = 0; r < 6; r++) {
      for (int c = 0; c < 6; c++) {
        double s = 0;
        for (int j = 0; j < 7; j++) s += J[r][j] * J[c][j];
        A[r * 6 + c] = s + (r == c ? 1e-4 : 0);
      }
      b[r] = e[r];
    }
    double A0[36];
    memcpy(A0, A, sizeof A);
    solve(6, A, b);
    /* the seventh, redundant direction pulls toward the rest posture: + (I - J^+ J) g with
     * g = 0.1 (q_rest - q) and J^+ = J^T (J J^T)^-1 (damped), so the elbow stays in the
     * vertical plane through the base and away from the joint limits */
    double g[7], Jg[6], dq[7], big = 0;
    for (int j = 0; j < 7; j++) g[j] = it < 1000 ? 0.1 * (q_rest[j] - q[j]) : 0; /* then converge */
    for (int r = 0; r < 6; r++) {
      Jg[r] = 0;
      for (int j = 0; j < 7; j++) Jg[r] += J[r][j] * g[j];
    }
    solve(6, A0, Jg);
    for (int j = 0; j < 7; j++) {
      dq[j] = g[j];
      for (int r = 0; r < 6; r++) dq[j] += J[r][j] * (b[r] - Jg[r]);
      if (fabs(dq[j]) > big) big = fabs(dq[j]);
    }
    double scale = big > 0.2 ? 0.2 / big : 1.0;
    for (int j = 0; j < 7; j++) q[j] += scale * dq[j];
  }
  double n2 = 0;
  for (int a = 0; a < 6; a++) n2 += e[a] * e[a];
  return sqrt(n2);
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
