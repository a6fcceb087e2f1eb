/* knead/deformable — linear tetrahedron: rest shape matrix, deformation gradient, element energy,
 * force and stiffness (Sifakis & Barbic 2012, "FEM simulation of 3D deformable solids", ch. 4). */
#include <math.h>
#include <string.h>

#include "deformable/deformable.h"

// rest tet X => Dm^-1 and volume det(Dm) / 6
kn_status kn_fem_element_rest(const double X[12], double Dm_inv[9], double* volume, kn_error* err) {
  double Dm[9];
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++) Dm[3 * i + k] = X[3 * (k + 1) + i] - X[i];
  double det = kn_mat3_det(Dm);
  if (!(det > 0) || !isfinite(det) || !kn_mat3_inverse(Dm, Dm_inv))
    return kn_fail(err, KN_ERR_INVALID, "tet volume %g, expected > 0 (positively oriented)", det / 6.0);
  *volume = det / 6.0;
  return KN_OK;
}

// (x, Dm^-1) => F = Ds Dm^-1
void kn_fem_deformation_gradient(const double x[12], const double Dm_inv[9], double F[9]) {
  double Ds[9];
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++) Ds[3 * i + k] = x[3 * (k + 1) + i] - x[i];
  kn_mat3_mul(Ds, Dm_inv, F);
}

/* dF_ij / dx_{v,i} = G[v][j]: G[k+1][j] = Dm^-1[k][j], G[0][j] = -sum_k Dm^-1[k][j] */
static void shape_gradients(const double Dm_inv[9], double G[4][3]) {
  for (int j = 0; j < 3; j++) {
    G[0][j] = 0;
    for (int k = 0; k < 3; k++) {
      G[k + 1][j] = Dm_inv[3 * k + j];
      G[0][j] -= Dm_inv[3 * k + j];
    }
  }
}

// element at x => V Psi, f = -V P G (per vertex), K = V G^T dPdF G
double kn_fem_element_eval(kn_fem_model model, double mu, double lambda, const double x[12], const double Dm_inv[9],
                           double volume, const double R0[9], double f[12], double K[144], int project_psd) {
  double F[9], P[9], dPdF[81], G[4][3];
  kn_fem_deformation_gradient(x, Dm_inv, F);
  double psi = kn_fem_energy_density(model, mu, lambda, F, R0, f ? P : NULL, K ? dPdF : NULL, project_psd);
  shape_gradients(Dm_inv, G);
  if (f)
    for (int v = 0; v < 4; v++)
      for (int i = 0; i < 3; i++) {
        double s = 0;
        for (int j = 0; j < 3; j++) s += P[3 * i + j] * G[v][j];
        f[3 * v + i] = -volume * s;
      }
  if (K) {
    /* T[ij][w a] = sum_b dPdF[ij][ab] G[w][b], then K[v i][w a] = V sum_j G[v][j] T[ij][w a] */
    double T[9][12];
    for (int ij = 0; ij < 9; ij++)
      for (int w = 0; w < 4; w++)
        for (int a = 0; a < 3; a++) {
          const double* d = dPdF + 9 * ij + 3 * a;
          T[ij][3 * w + a] = d[0] * G[w][0] + d[1] * G[w][1] + d[2] * G[w][2];
        }
    for (int v = 0; v < 4; v++)
      for (int i = 0; i < 3; i++)
        for (int c = 0; c < 12; c++)
          K[12 * (3 * v + i) + c] =
              volume * (G[v][0] * T[3 * i][c] + G[v][1] * T[3 * i + 1][c] + G[v][2] * T[3 * i + 2][c]);
  }
  return volume * psi;
}
