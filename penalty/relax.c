/* Friction relaxation of a particle's anchor against a level set (penalty-coulomb-friction.md
 * §3.3-3.4, the paper's variant: the plane formula's slide, then a projection back on the surface)
 * and the force Jacobian through it (§3.7.1). */
#include <math.h>
#include <string.h>

#include "penalty/penalty.h"

// M = I - n n^T - phi H (the Jacobian of x - phi(x) n(x))
static void project_jacobian(const double n[3], double phi, const double H[9], double M[9]) {
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) M[3 * r + c] = (r == c) - n[r] * n[c] - phi * H[3 * r + c];
}

static void matmul(const double A[9], const double B[9], double C[9]) {
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) C[3 * r + c] = A[3 * r] * B[c] + A[3 * r + 1] * B[3 + c] + A[3 * r + 2] * B[6 + c];
}

kn_relax_state kn_penalty_relax(const kn_levelset* ls, const double X[3], const double Z[3], double mu, double k,
                                double Y[3], double f[3], double dfdZ[9]) {
  double nZ[3], HZ[9];
  double phiZ = ls->phi(ls->ctx, Z, nZ, HZ);
  if (phiZ > 0) {
    memcpy(Y, X, 3 * sizeof *Y);
    if (f) memset(f, 0, 3 * sizeof *f);
    if (dfdZ) memset(dfdZ, 0, 9 * sizeof *dfdZ);
    return KN_RELAX_INACTIVE;
  }
  double W[3], zw[3], xw[3];
  for (int a = 0; a < 3; a++) W[a] = Z[a] - phiZ * nZ[a], zw[a] = Z[a] - W[a], xw[a] = X[a] - W[a];
  double dZ = kn_vec3_norm(zw), dX = kn_vec3_norm(xw);
  if (dX * dX <= mu * mu * dZ * dZ) {
    memcpy(Y, X, 3 * sizeof *Y);
    if (f)
      for (int a = 0; a < 3; a++) f[a] = k * (Y[a] - Z[a]);
    if (dfdZ)
      for (int a = 0; a < 9; a++) dfdZ[a] = a % 4 == 0 ? -k : 0.0;
    return KN_RELAX_STATIC;
  }
  /* dynamic: K = W + mu dZ u, u = (X - W) / dX, then Y = K - phi(K) n(K) */
  double u[3], K[3], zh[3], s = mu * dZ / dX;
  for (int a = 0; a < 3; a++) u[a] = xw[a] / dX, K[a] = W[a] + mu * dZ * u[a], zh[a] = dZ > 0 ? zw[a] / dZ : 0.0;
  double nK[3], HK[9];
  double phiK = ls->phi(ls->ctx, K, nK, HK);
  for (int a = 0; a < 3; a++) Y[a] = K[a] - phiK * nK[a];
  if (f)
    for (int a = 0; a < 3; a++) f[a] = k * (Y[a] - Z[a]);
  if (dfdZ) {
    double JW[9], JY[9], AZ[9], AW[9], T[9], dK[9], dY[9];
    project_jacobian(nZ, phiZ, HZ, JW);
    project_jacobian(nK, phiK, HK, JY);
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) {
        double AX = s * ((r == c) - u[r] * u[c]);
        AZ[3 * r + c] = mu * u[r] * zh[c];
        AW[3 * r + c] = (r == c) - AX - AZ[3 * r + c];
      }
    matmul(AW, JW, T);
    for (int a = 0; a < 9; a++) dK[a] = AZ[a] + T[a];
    matmul(JY, dK, dY);
    for (int a = 0; a < 9; a++) dfdZ[a] = k * (dY[a] - (a % 4 == 0));
  }
  return KN_RELAX_DYNAMIC;
}
