/* Inverse kinematics of a body's pose by damped least squares (Levenberg-Marquardt on the 6-D pose
 * error), with an optional pull toward a rest posture in the null space of redundant arms. Used by
 * the example programs that compute arm waypoints for the scenes. */
#include <math.h>
#include <string.h>

#include "multibody/multibody.h"

#define IK_MAX 16

kn_mb_ik_options kn_mb_ik_options_default(void) {
  return (kn_mb_ik_options){.max_iterations = 200,
                            .damping = 1e-6,
                            .tolerance = 1e-12,
                            .q_rest = NULL,
                            .rest_gain = 0.1,
                            .rest_iterations = 1000,
                            .max_step = 0};
}

/* the 6 x 6 system A x = b in place (Gaussian elimination, partial pivoting) */
static void solve6(double* A, double* b) {
  const int n = 6;
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

double kn_mb_ik_pose(const kn_mb_model* m, kn_mb_data* d, int body, const double p_t[3], const double R_t[9],
                     int ndof, const kn_mb_ik_options* opt, double* q) {
  kn_mb_ik_options o = opt ? *opt : kn_mb_ik_options_default();
  if (ndof > IK_MAX) ndof = IK_MAX;
  int nv = m->nv;
  double Jv[3 * 64], Jw[3 * 64], e[6] = {0};
  const double zero[3] = {0, 0, 0};
  if (nv > 64) return INFINITY;
  int rest_its = o.q_rest ? o.rest_iterations : -1;
  for (int it = 0; it < o.max_iterations; it++) {
    kn_mb_kinematics(m, q, NULL, d);
    const kn_pose* X = &d->X_wb[body];
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
    if (sqrt(norm) < o.tolerance && it > rest_its) break;
    kn_mb_point_jacobian(m, d, body, zero, Jv, Jw);
    double J[6][IK_MAX], A[36], b[6];
    for (int j = 0; j < ndof; j++)
      for (int a = 0; a < 3; a++) J[a][j] = Jv[a * nv + j], J[3 + a][j] = Jw[a * nv + j];
    /* dq = J^T (J J^T + lambda^2 I)^-1 e */
    for (int r = 0; r < 6; r++) {
      for (int c = 0; c < 6; c++) {
        double s = 0;
        for (int j = 0; j < ndof; j++) s += J[r][j] * J[c][j];
        A[r * 6 + c] = s + (r == c ? o.damping : 0);
      }
      b[r] = e[r];
    }
    double A0[36];
    memcpy(A0, A, sizeof A);
    solve6(A, b);
    double dq[IK_MAX], big = 0;
    if (!o.q_rest) {
      for (int j = 0; j < ndof; j++) {
        double s = 0;
        for (int r = 0; r < 6; r++) s += J[r][j] * b[r];
        dq[j] = s;
      }
    } else {
      /* the redundant directions pull toward the rest posture: + (I - J^+ J) g with
       * g = rest_gain (q_rest - q) and J^+ = J^T (J J^T)^-1 (damped) */
      double g[IK_MAX], Jg[6];
      for (int j = 0; j < ndof; j++) g[j] = it < o.rest_iterations ? o.rest_gain * (o.q_rest[j] - q[j]) : 0;
      for (int r = 0; r < 6; r++) {
        Jg[r] = 0;
        for (int j = 0; j < ndof; j++) Jg[r] += J[r][j] * g[j];
      }
      solve6(A0, Jg);
      for (int j = 0; j < ndof; j++) {
        dq[j] = g[j];
        for (int r = 0; r < 6; r++) dq[j] += J[r][j] * (b[r] - Jg[r]);
      }
    }
    for (int j = 0; j < ndof; j++) big = fmax(big, fabs(dq[j]));
    double scale = o.max_step > 0 && big > o.max_step ? o.max_step / big : 1.0;
    for (int j = 0; j < ndof; j++) q[j] += scale * dq[j];
  }
  double n2 = 0;
  for (int a = 0; a < 6; a++) n2 += e[a] * e[a];
  return sqrt(n2);
}
