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

/* (target flange origin p_t, flange pointing down) => q[0..6], starting from q; returns the final
 * pose error norm */
static double ik(const kn_mb_model* m, kn_mb_data* d, int flange, const double p_t[3], double* q) {
  const double R_t[9] = {-1, 0, 0, 0, 1, 0, 0, 0, -1};
  double Jv[3 * 16], Jw[3 * 16], e[6] = {0};
  const double zero[3] = {0, 0, 0};
  int nv = m->nv;
  for (int it = 0; it < 200; it++) {
    kn_mb_kinematics(m, q, NULL, d);
    const kn_pose* X = &d->X_wb[flange];
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
    kn_mb_point_jacobian(m, d, flange, zero, Jv, Jw);
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
