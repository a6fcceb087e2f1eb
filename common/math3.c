/* Small fixed-size math: 3-vectors, 3x3 rotations, quaternions, rigid poses. */
#include <math.h>

#include "common/common.h"

double kn_vec3_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

void kn_vec3_cross(const double a[3], const double b[3], double c[3]) {
  double t0 = a[1] * b[2] - a[2] * b[1], t1 = a[2] * b[0] - a[0] * b[2], t2 = a[0] * b[1] - a[1] * b[0];
  c[0] = t0, c[1] = t1, c[2] = t2;
}

double kn_vec3_norm(const double a[3]) { return sqrt(kn_vec3_dot(a, a)); }

void kn_mat3_mul(const double A[9], const double B[9], double C[9]) {
  double T[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) T[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
  for (int k = 0; k < 9; k++) C[k] = T[k];
}

void kn_mat3_mulT(const double A[9], const double B[9], double C[9]) {
  double T[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) T[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
  for (int k = 0; k < 9; k++) C[k] = T[k];
}

void kn_mat3_vec(const double A[9], const double x[3], double y[3]) {
  double t0 = A[0] * x[0] + A[1] * x[1] + A[2] * x[2];
  double t1 = A[3] * x[0] + A[4] * x[1] + A[5] * x[2];
  double t2 = A[6] * x[0] + A[7] * x[1] + A[8] * x[2];
  y[0] = t0, y[1] = t1, y[2] = t2;
}

void kn_mat3_tvec(const double A[9], const double x[3], double y[3]) {
  double t0 = A[0] * x[0] + A[3] * x[1] + A[6] * x[2];
  double t1 = A[1] * x[0] + A[4] * x[1] + A[7] * x[2];
  double t2 = A[2] * x[0] + A[5] * x[1] + A[8] * x[2];
  y[0] = t0, y[1] = t1, y[2] = t2;
}

void kn_mat3_transpose(const double A[9], double At[9]) {
  double T[9] = {A[0], A[3], A[6], A[1], A[4], A[7], A[2], A[5], A[8]};
  for (int k = 0; k < 9; k++) At[k] = T[k];
}

double kn_mat3_det(const double A[9]) {
  return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) + A[2] * (A[3] * A[7] - A[4] * A[6]);
}

void kn_mat3_cofactor(const double A[9], double C[9]) {
  double T[9];
  T[0] = A[4] * A[8] - A[5] * A[7];
  T[1] = A[5] * A[6] - A[3] * A[8];
  T[2] = A[3] * A[7] - A[4] * A[6];
  T[3] = A[2] * A[7] - A[1] * A[8];
  T[4] = A[0] * A[8] - A[2] * A[6];
  T[5] = A[1] * A[6] - A[0] * A[7];
  T[6] = A[1] * A[5] - A[2] * A[4];
  T[7] = A[2] * A[3] - A[0] * A[5];
  T[8] = A[0] * A[4] - A[1] * A[3];
  for (int k = 0; k < 9; k++) C[k] = T[k];
}

int kn_mat3_inverse(const double A[9], double Ai[9]) {
  double C[9];
  kn_mat3_cofactor(A, C);
  double d = A[0] * C[0] + A[1] * C[1] + A[2] * C[2];
  if (!(d != 0) || !isfinite(d)) return 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) Ai[3 * i + j] = C[3 * j + i] / d;
  return 1;
}

void kn_mat3_from_rpy(const double rpy[3], double R[9]) {
  double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]);
  double cy = cos(rpy[2]), sy = sin(rpy[2]);
  R[0] = cy * cp, R[1] = cy * sp * sr - sy * cr, R[2] = cy * sp * cr + sy * sr;
  R[3] = sy * cp, R[4] = sy * sp * sr + cy * cr, R[5] = sy * sp * cr - cy * sr;
  R[6] = -sp, R[7] = cp * sr, R[8] = cp * cr;
}

void kn_mat3_from_axis_angle(const double a[3], double angle, double R[9]) {
  double c = cos(angle), s = sin(angle), t = 1.0 - c;
  R[0] = t * a[0] * a[0] + c, R[1] = t * a[0] * a[1] - s * a[2], R[2] = t * a[0] * a[2] + s * a[1];
  R[3] = t * a[0] * a[1] + s * a[2], R[4] = t * a[1] * a[1] + c, R[5] = t * a[1] * a[2] - s * a[0];
  R[6] = t * a[0] * a[2] - s * a[1], R[7] = t * a[1] * a[2] + s * a[0], R[8] = t * a[2] * a[2] + c;
}

void kn_mat3_from_quat(const double q[4], double R[9]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = 1 - 2 * (x * x + y * y);
}

/* Shepperd's method: pick the largest of (w, x, y, z) to divide by. */
void kn_quat_from_mat3(const double R[9], double q[4]) {
  double tr = R[0] + R[4] + R[8];
  if (tr > 0) {
    double s = 2 * sqrt(tr + 1);
    q[0] = 0.25 * s, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s, q[3] = (R[3] - R[1]) / s;
  } else if (R[0] > R[4] && R[0] > R[8]) {
    double s = 2 * sqrt(1 + R[0] - R[4] - R[8]);
    q[0] = (R[7] - R[5]) / s, q[1] = 0.25 * s, q[2] = (R[1] + R[3]) / s, q[3] = (R[2] + R[6]) / s;
  } else if (R[4] > R[8]) {
    double s = 2 * sqrt(1 + R[4] - R[0] - R[8]);
    q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = 0.25 * s, q[3] = (R[5] + R[7]) / s;
  } else {
    double s = 2 * sqrt(1 + R[8] - R[0] - R[4]);
    q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s, q[3] = 0.25 * s;
  }
  if (q[0] < 0) q[0] = -q[0], q[1] = -q[1], q[2] = -q[2], q[3] = -q[3];
}

void kn_quat_mul(const double a[4], const double b[4], double c[4]) {
  double w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  double x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  double y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  double z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  c[0] = w, c[1] = x, c[2] = y, c[3] = z;
}

void kn_quat_normalize(double q[4]) {
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (n > 0)
    for (int k = 0; k < 4; k++) q[k] /= n;
  else
    q[0] = 1, q[1] = q[2] = q[3] = 0;
}

void kn_pose_identity(kn_pose* X) {
  for (int k = 0; k < 9; k++) X->R[k] = (k % 4 == 0) ? 1.0 : 0.0;
  X->p[0] = X->p[1] = X->p[2] = 0;
}

void kn_pose_mul(const kn_pose* A, const kn_pose* B, kn_pose* C) {
  double p[3];
  kn_mat3_vec(A->R, B->p, p);
  for (int k = 0; k < 3; k++) p[k] += A->p[k];
  kn_mat3_mul(A->R, B->R, C->R);
  for (int k = 0; k < 3; k++) C->p[k] = p[k];
}

void kn_pose_inv(const kn_pose* X, kn_pose* Y) {
  double R[9], p[3];
  kn_mat3_transpose(X->R, R);
  kn_mat3_vec(R, X->p, p);
  for (int k = 0; k < 9; k++) Y->R[k] = R[k];
  for (int k = 0; k < 3; k++) Y->p[k] = -p[k];
}

void kn_pose_apply(const kn_pose* X, const double x[3], double y[3]) {
  double t[3];
  kn_mat3_vec(X->R, x, t);
  for (int k = 0; k < 3; k++) y[k] = t[k] + X->p[k];
}

void kn_pose_from_xyz_rpy(const double xyz[3], const double rpy[3], kn_pose* X) {
  kn_mat3_from_rpy(rpy, X->R);
  for (int k = 0; k < 3; k++) X->p[k] = xyz[k];
}

/* cyclic Jacobi rotations (Golub & Van Loan §8.5), until the off-diagonal is below round-off of
 * the diagonal (quadratic convergence: 5-9 sweeps) */
void kn_mat3_sym_eigen(const double A[9], double e[3], double Q[9]) {
  double a[9];
  for (int i = 0; i < 9; i++) a[i] = A[i], Q[i] = (i % 4 == 0) ? 1.0 : 0.0;
  for (int sweep = 0; sweep < 50; sweep++) {
    double off = a[1] * a[1] + a[2] * a[2] + a[5] * a[5], diag = a[0] * a[0] + a[4] * a[4] + a[8] * a[8];
    if (!(off > 1e-36 * diag)) break; /* also a zero or non-finite A */
    for (int p = 0; p < 2; p++)
      for (int q = p + 1; q < 3; q++) {
        double apq = a[3 * p + q];
        if (apq == 0) continue;
        double theta = (a[3 * q + q] - a[3 * p + p]) / (2.0 * apq);
        double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
        double c = 1.0 / sqrt(t * t + 1.0), sn = t * c;
        for (int k = 0; k < 3; k++) { /* a = J^T a J with J the (p, q) rotation, Q = Q J */
          double akp = a[3 * k + p], akq = a[3 * k + q];
          a[3 * k + p] = c * akp - sn * akq;
          a[3 * k + q] = sn * akp + c * akq;
        }
        for (int k = 0; k < 3; k++) {
          double apk = a[3 * p + k], aqk = a[3 * q + k];
          a[3 * p + k] = c * apk - sn * aqk;
          a[3 * q + k] = sn * apk + c * aqk;
        }
        for (int k = 0; k < 3; k++) {
          double qkp = Q[3 * k + p], qkq = Q[3 * k + q];
          Q[3 * k + p] = c * qkp - sn * qkq;
          Q[3 * k + q] = sn * qkp + c * qkq;
        }
      }
  }
  for (int i = 0; i < 3; i++) e[i] = a[4 * i];
}
