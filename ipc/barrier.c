/* The IPC barrier, its stiffness bounds and initial balance, and the smoothed friction functions
 * (digest §3.2, §3.5, §5.2). */
#include <math.h>

#include "ipc/ipc.h"

double kn_ipc_barrier(double d, double dh, double* db, double* d2b) {
  if (d >= dh) {
    if (db) *db = 0;
    if (d2b) *d2b = 0;
    return 0;
  }
  if (!(d > 0)) {
    if (db) *db = -INFINITY;
    if (d2b) *d2b = INFINITY;
    return INFINITY;
  }
  double e = d - dh, l = log(d / dh);
  if (db) *db = -2 * e * l - e * e / d;
  if (d2b) *d2b = -2 * l - 4 * e / d + e * e / (d * d);
  return -e * e * l;
}

void kn_ipc_kappa_bounds(double l, double dh, double m, double* kappa_min, double* kappa_max) {
  double d0 = 1e-8 * l, s0 = d0 * d0, d2b;
  kn_ipc_barrier(s0, dh * dh, NULL, &d2b);
  *kappa_min = 1e11 * m / (4 * s0 * d2b);
  *kappa_max = 100 * *kappa_min;
}

double kn_ipc_kappa_initial(const double* g_b, const double* g_E, int n, double kappa_min, double kappa_max) {
  double bb = 0, bE = 0;
  for (int i = 0; i < n; i++) bb += g_b[i] * g_b[i], bE += g_b[i] * g_E[i];
  if (!(bb > 0)) return kappa_min;
  double k = -bE / bb;
  if (!(k > 0)) return kappa_min;
  return fmin(kappa_max, fmax(kappa_min, k));
}

double kn_ipc_friction_f1(double y, double eps, double* df1, double* f1_over_y) {
  if (y >= eps) {
    if (df1) *df1 = 0;
    if (f1_over_y) *f1_over_y = 1 / y;
    return 1;
  }
  if (df1) *df1 = 2 * (eps - y) / (eps * eps);
  if (f1_over_y) *f1_over_y = (2 * eps - y) / (eps * eps);
  double t = 1 - y / eps;
  return 1 - t * t;
}

double kn_ipc_friction_f0(double y, double eps) {
  if (y >= eps) return y;
  return -y * y * y / (3 * eps * eps) + y * y / eps + eps / 3;
}
