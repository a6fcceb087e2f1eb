/* Quadratic B-spline interpolation weights of the MPM grid (digest §7.1). */
#include <math.h>

#include "mpm/mpm.h"

double kn_mpm_bspline(double x, double* dN) {
  double a = fabs(x);
  if (a < 0.5) {
    if (dN) *dN = -2 * x;
    return 0.75 - x * x;
  }
  if (a < 1.5) {
    double t = 1.5 - a;
    if (dN) *dN = x > 0 ? -t : t;
    return 0.5 * t * t;
  }
  if (dN) *dN = 0;
  return 0;
}

void kn_mpm_weights(double h, const double xp[3], int base[3], double w[27], double dw[81]) {
  double N[3][3], dN[3][3];
  for (int d = 0; d < 3; d++) {
    double s = xp[d] / h;
    base[d] = (int)lround(s);
    for (int o = 0; o < 3; o++) N[d][o] = kn_mpm_bspline(s - (double)(base[d] + o - 1), &dN[d][o]);
  }
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++)
      for (int c = 0; c < 3; c++) {
        int s = 9 * a + 3 * b + c;
        w[s] = N[0][a] * N[1][b] * N[2][c];
        if (dw) {
          dw[3 * s + 0] = dN[0][a] * N[1][b] * N[2][c] / h;
          dw[3 * s + 1] = N[0][a] * dN[1][b] * N[2][c] / h;
          dw[3 * s + 2] = N[0][a] * N[1][b] * dN[2][c] / h;
        }
      }
}
