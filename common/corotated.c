/* The linear corotated constitutive law, shared by FEM elements and MPM particles. */
#include "common/common.h"

double kn_linear_corotated_energy(double mu, double lambda, const double F[9], const double R0[9], double P[9],
                                  double dPdF[81]) {
  double RtF[9], eps[9];
  kn_mat3_mulT(R0, F, RtF);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) eps[3 * i + j] = 0.5 * (RtF[3 * i + j] + RtF[3 * j + i]) - (i == j ? 1.0 : 0.0);
  double tr = eps[0] + eps[4] + eps[8], ee = 0;
  for (int k = 0; k < 9; k++) ee += eps[k] * eps[k];
  if (P) {
    double S[9];
    for (int k = 0; k < 9; k++) S[k] = 2.0 * mu * eps[k] + (k % 4 == 0 ? lambda * tr : 0.0);
    kn_mat3_mul(R0, S, P);
  }
  if (dPdF)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        for (int a = 0; a < 3; a++)
          for (int b = 0; b < 3; b++)
            dPdF[9 * (3 * i + j) + 3 * a + b] = mu * (i == a && j == b) + mu * R0[3 * i + b] * R0[3 * a + j] +
                                                lambda * R0[3 * i + j] * R0[3 * a + b];
  return mu * ee + 0.5 * lambda * tr * tr;
}
