/* knead/deformable — constitutive models: energy density Psi(F), first Piola stress P = dPsi/dF and
 * its derivative dP/dF (9x9) for the linear, linear corotated, corotated and stable neo-Hookean
 * models; polar decomposition; PSD projection of a symmetric Hessian. */
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "deformable/deformable.h"

//---- 3x3 helpers (row-major; column j of F is (F[j], F[3+j], F[6+j])) ----


static void column(const double A[9], int j, double c[3]) {
  c[0] = A[j];
  c[1] = A[3 + j];
  c[2] = A[6 + j];
}

static void set_column(double A[9], int j, const double c[3]) {
  A[j] = c[0];
  A[3 + j] = c[1];
  A[6 + j] = c[2];
}


/* directional derivative of cof(F) along dF (product rule on the cross products) */
static void cofactor_diff(const double F[9], const double dF[9], double dC[9]) {
  double f[3][3], df[3][3], a[3], b[3], c[3];
  for (int j = 0; j < 3; j++) {
    column(F, j, f[j]);
    column(dF, j, df[j]);
  }
  for (int j = 0; j < 3; j++) {
    int k = (j + 1) % 3, l = (j + 2) % 3;
    kn_vec3_cross(df[k], f[l], a);
    kn_vec3_cross(f[k], df[l], b);
    for (int i = 0; i < 3; i++) c[i] = a[i] + b[i];
    set_column(dC, j, c);
  }
}

static double ddot9(const double A[9], const double B[9]) {
  double s = 0;
  for (int k = 0; k < 9; k++) s += A[k] * B[k];
  return s;
}

//---- polar decomposition and PSD projection ----

/* F => R of F = R S, a proper rotation even for inverted F (the smallest singular direction takes
 * the reflection), as R = U V^T of F = U Sigma V^T with det U = det V = +1 and sigma_3 carrying
 * det F's sign. The method of McAdams et al. 2011 ("Computing the singular value decomposition of
 * 3x3 matrices with minimal branching and elementary floating point operations") in double: V
 * from cyclic Jacobi on F^T F (kn_mat3_sym_eigen, sorted descending, det V = +1), then U from the
 * Givens QR of F V, which is a rotation by construction and does not need F^T F's accuracy (for F near a
 * rotation its eigenvalues cluster, V is arbitrary, and U V^T = F still). LAPACK's dgesvd did the
 * same through its row-major wrapper's allocation and transposes: 3 calls per MPM particle per
 * step, 11 % of the ball-on-slope step. */
static void givens_rows(double B[9], double Q[9], int i, int j, int k) {
  double a = B[3 * i + k], b = B[3 * j + k], r = hypot(a, b);
  if (r == 0) return;
  double c = a / r, s = b / r;
  for (int m = 0; m < 3; m++) { /* B <= G B on rows i, j */
    double bi = B[3 * i + m], bj = B[3 * j + m];
    B[3 * i + m] = c * bi + s * bj;
    B[3 * j + m] = -s * bi + c * bj;
  }
  B[3 * j + k] = 0;
  for (int m = 0; m < 3; m++) { /* Q <= Q G^T on columns i, j */
    double qi = Q[3 * m + i], qj = Q[3 * m + j];
    Q[3 * m + i] = c * qi + s * qj;
    Q[3 * m + j] = -s * qi + c * qj;
  }
}

void kn_fem_polar_rotation(const double F[9], double R[9]) {
  double FtF[9], e[3], V[9];
  kn_mat3_mulT(F, F, FtF);
  kn_mat3_sym_eigen(FtF, e, V);
  if (!isfinite(e[0] + e[1] + e[2])) {
    for (int k = 0; k < 9; k++) R[k] = (k % 4 == 0) ? 1.0 : 0.0; /* callers check finiteness */
    return;
  }
  /* eigenvalues descending: sort the columns of V (three compare-swaps), then det V = +1 */
  const int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  for (int k = 0; k < 3; k++) {
    int a = pairs[k][0], b = pairs[k][1];
    if (e[a] >= e[b]) continue;
    double t = e[a];
    e[a] = e[b], e[b] = t;
    for (int m = 0; m < 3; m++) {
      t = V[3 * m + a];
      V[3 * m + a] = V[3 * m + b], V[3 * m + b] = t;
    }
  }
  if (kn_mat3_det(V) < 0)
    for (int m = 0; m < 3; m++) V[3 * m + 2] = -V[3 * m + 2];
  /* F V = Q R_upper by Givens rotations (Q a rotation) => R = Q V^T */
  double B[9], Q[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  kn_mat3_mul(F, V, B);
  givens_rows(B, Q, 0, 1, 0);
  givens_rows(B, Q, 0, 2, 0);
  givens_rows(B, Q, 1, 2, 1);
  double Vt[9];
  kn_mat3_transpose(V, Vt);
  kn_mat3_mul(Q, Vt, R);
}

// symmetric A (n x n, n <= 12) => V max(Lambda, 0) V^T in place (Teran et al. 2005 style projection)
void kn_fem_project_psd(double* A, int n) {
  double w[12], V[144];
  memcpy(V, A, (size_t)(n * n) * sizeof(double));
  if (LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', n, V, n, w) != 0) return;
  if (w[0] >= 0) return; /* ascending: already PSD, keep A bit-identical */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int k = 0; k < n; k++)
        if (w[k] > 0) s += V[i * n + k] * w[k] * V[j * n + k];
      A[i * n + j] = s;
    }
}

//---- models ----

static double linear(double mu, double lambda, const double F[9], double P[9], double dPdF[81]) {
  double eps[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) eps[3 * i + j] = 0.5 * (F[3 * i + j] + F[3 * j + i]) - (i == j ? 1.0 : 0.0);
  double tr = eps[0] + eps[4] + eps[8];
  if (P)
    for (int k = 0; k < 9; k++) P[k] = 2.0 * mu * eps[k] + (k % 4 == 0 ? lambda * tr : 0.0);
  if (dPdF)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        for (int a = 0; a < 3; a++)
          for (int b = 0; b < 3; b++)
            dPdF[9 * (3 * i + j) + 3 * a + b] =
                mu * ((i == a && j == b) + (i == b && j == a)) + lambda * (i == j && a == b);
  return mu * ddot9(eps, eps) + 0.5 * lambda * tr * tr;
}


/* dR along dF for F = R S: R^T dF - dF^T R = [(tr(S) I - S) w]x with dR = R [w]x (S symmetric). */
static void rotation_diff(const double R[9], const double S[9], const double dF[9], double dR[9]) {
  double M[9];
  kn_mat3_mulT(R, dF, M);
  double b[3] = {M[7] - M[5], M[2] - M[6], M[3] - M[1]};
  double tr = S[0] + S[4] + S[8];
  double A[9];
  for (int k = 0; k < 9; k++) A[k] = (k % 4 == 0 ? tr : 0.0) - S[k];
  double C[9];
  kn_mat3_cofactor(A, C); /* A^-1 = C^T / det A; A is symmetric so C is too */
  double d = kn_mat3_det(A);
  /* det A = 0 only when two singular values sum to 0 (a flattened or inverted tet): the rotation
   * derivative is unbounded there; regularize so the Hessian stays finite */
  double scale = tr * tr * tr;
  if (fabs(d) < 1e-12 * fabs(scale) + 1e-300) d = d < 0 ? -1e-12 * fabs(scale) - 1e-300 : 1e-12 * fabs(scale) + 1e-300;
  double w[3];
  kn_mat3_tvec(C, b, w);
  for (int k = 0; k < 3; k++) w[k] /= d;
  double W[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0};
  kn_mat3_mul(R, W, dR);
}

/* Stomakhin et al. 2012: Psi = mu |F - R|^2 + lambda/2 (J - 1)^2, P = 2 mu (F - R) + lambda (J - 1) cof F */
static double corotated(double mu, double lambda, const double F[9], double P[9], double dPdF[81]) {
  double R[9], C[9];
  kn_fem_polar_rotation(F, R);
  kn_mat3_cofactor(F, C);
  double J = kn_mat3_det(F), FR[9];
  for (int k = 0; k < 9; k++) FR[k] = F[k] - R[k];
  if (P)
    for (int k = 0; k < 9; k++) P[k] = 2.0 * mu * FR[k] + lambda * (J - 1.0) * C[k];
  if (dPdF) {
    double S[9];
    kn_mat3_mulT(R, F, S);
    for (int ab = 0; ab < 9; ab++) {
      double dF[9] = {0}, dR[9], dC[9];
      dF[ab] = 1.0;
      rotation_diff(R, S, dF, dR);
      cofactor_diff(F, dF, dC);
      for (int ij = 0; ij < 9; ij++)
        dPdF[9 * ij + ab] = 2.0 * mu * (dF[ij] - dR[ij]) + lambda * C[ab] * C[ij] + lambda * (J - 1.0) * dC[ij];
    }
  }
  return mu * ddot9(FR, FR) + 0.5 * lambda * (J - 1.0) * (J - 1.0);
}

/* Smith et al. 2018 stable neo-Hookean without the log(I_C + 1) term; with lambda' = lambda + mu
 * it is stress-free at F = I and linearizes to the small-strain model with (mu, lambda):
 * Psi = mu/2 (|F|^2 - 3) - mu (J - 1) + lambda'/2 (J - 1)^2, P = mu F + (lambda' (J - 1) - mu) cof F */
static double neohookean(double mu, double lambda, const double F[9], double P[9], double dPdF[81]) {
  double lam = lambda + mu, C[9];
  kn_mat3_cofactor(F, C);
  double J = kn_mat3_det(F), c = lam * (J - 1.0) - mu;
  if (P)
    for (int k = 0; k < 9; k++) P[k] = mu * F[k] + c * C[k];
  if (dPdF)
    for (int ab = 0; ab < 9; ab++) {
      double dF[9] = {0}, dC[9];
      dF[ab] = 1.0;
      cofactor_diff(F, dF, dC);
      for (int ij = 0; ij < 9; ij++) dPdF[9 * ij + ab] = mu * dF[ij] + c * dC[ij] + lam * C[ab] * C[ij];
    }
  return 0.5 * mu * (ddot9(F, F) - 3.0) - mu * (J - 1.0) + 0.5 * lam * (J - 1.0) * (J - 1.0);
}

// (model, Lame, F, R0) => Psi, P, dP/dF (optionally PSD-projected)
double kn_fem_energy_density(kn_fem_model model, double mu, double lambda, const double F[9], const double R0[9],
                             double P[9], double dPdF[81], int project_psd) {
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double psi = 0;
  switch (model) {
    case KN_FEM_LINEAR: return linear(mu, lambda, F, P, dPdF);
    case KN_FEM_LINEAR_COROTATED: return kn_linear_corotated_energy(mu, lambda, F, R0 ? R0 : I3, P, dPdF);
    case KN_FEM_COROTATED: psi = corotated(mu, lambda, F, P, dPdF); break;
    case KN_FEM_NEOHOOKEAN: psi = neohookean(mu, lambda, F, P, dPdF); break;
  }
  if (dPdF) {
    /* symmetrize rounding before projecting: d2Psi/dF2 is symmetric analytically */
    for (int i = 0; i < 9; i++)
      for (int j = 0; j < i; j++) {
        double s = 0.5 * (dPdF[9 * i + j] + dPdF[9 * j + i]);
        dPdF[9 * i + j] = dPdF[9 * j + i] = s;
      }
    if (project_psd) kn_fem_project_psd(dPdF, 9);
  }
  return psi;
}
