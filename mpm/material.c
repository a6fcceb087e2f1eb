/* MPM materials: validation, energy densities (linear corotated, EOS fluid) and the von Mises
 * return mapping of the seed's Algorithm 1 (digest §7.6). */
#include "mpm/mpm.h"

#include <math.h>
#include <string.h>

#include "deformable/deformable.h"

kn_mpm_material kn_mpm_material_default(void) {
  return (kn_mpm_material){.model = KN_MPM_LINEAR_COROTATED,
                           .youngs_modulus = 1e5,
                           .poisson_ratio = 0.4,
                           .density = 1000.0,
                           .yield_stress = 0.0,
                           .bulk_modulus = 100.0,
                           .gamma = 7.0};
}

kn_status kn_mpm_material_validate(const kn_mpm_material* m, const char* name, kn_error* err) {
  const char* who = name ? name : "mpm body";
  if (m->model != KN_MPM_LINEAR_COROTATED && m->model != KN_MPM_EOS_FLUID)
    return kn_fail(err, KN_ERR_INVALID, "%s: unknown MPM material model %d", who, (int)m->model);
  if (!(m->density > 0) || !isfinite(m->density))
    return kn_fail(err, KN_ERR_INVALID, "%s: density %g must be positive (kg/m^3)", who, m->density);
  if (!(m->density >= KN_MATERIAL_MIN_DENSITY && m->density <= KN_MATERIAL_MAX_DENSITY))
    return kn_fail(err, KN_ERR_INVALID,
                   "%s: density %g kg/m^3 is beyond what double precision resolves against the stiffness; expected "
                   "%g to %g kg/m^3",
                   who, m->density, KN_MATERIAL_MIN_DENSITY, KN_MATERIAL_MAX_DENSITY);
  const char* big = m->model == KN_MPM_LINEAR_COROTATED && m->youngs_modulus > KN_MATERIAL_MAX_MODULUS ? "youngs_modulus"
                    : m->model == KN_MPM_LINEAR_COROTATED && m->yield_stress > KN_MATERIAL_MAX_MODULUS ? "yield_stress"
                    : m->model == KN_MPM_EOS_FLUID && m->bulk_modulus > KN_MATERIAL_MAX_MODULUS      ? "bulk_modulus"
                                                                                                      : NULL;
  if (big && isfinite(m->youngs_modulus) && isfinite(m->yield_stress) && isfinite(m->bulk_modulus))
    return kn_fail(err, KN_ERR_INVALID,
                   "%s: %s %g Pa is beyond what double precision resolves; expected <= %g Pa (the stiffness term of "
                   "the step's Newton matrix would swamp the mass term)",
                   who, big,
                   big[0] == 'y' && big[1] == 'o' ? m->youngs_modulus : big[0] == 'y' ? m->yield_stress : m->bulk_modulus,
                   KN_MATERIAL_MAX_MODULUS);
  if (m->model == KN_MPM_LINEAR_COROTATED) {
    if (!(m->youngs_modulus > 0) || !isfinite(m->youngs_modulus))
      return kn_fail(err, KN_ERR_INVALID, "%s: youngs_modulus %g must be positive (Pa)", who, m->youngs_modulus);
    if (!(m->poisson_ratio > -1 && m->poisson_ratio < 0.5))
      return kn_fail(err, KN_ERR_INVALID, "%s: poisson_ratio %g must be in (-1, 0.5)", who, m->poisson_ratio);
    if (!(m->yield_stress >= 0) || !isfinite(m->yield_stress))
      return kn_fail(err, KN_ERR_INVALID, "%s: yield_stress %g must be >= 0 (Pa; 0 = elastic)", who, m->yield_stress);
  } else {
    if (!(m->bulk_modulus > 0) || !isfinite(m->bulk_modulus))
      return kn_fail(err, KN_ERR_INVALID, "%s: bulk_modulus %g must be positive (Pa)", who, m->bulk_modulus);
    if (!(m->gamma > 1) || !isfinite(m->gamma))
      return kn_fail(err, KN_ERR_INVALID, "%s: gamma %g must be > 1", who, m->gamma);
  }
  return KN_OK;
}



/* The EOS fluid's Hessian Psi'' c c^T + Psi' d2J/dF2 (c = cof F) projected to PSD in closed form,
 * from the analytic eigensystem of J's Hessian (Smith, de Goes, Kim 2019, "Analytic Eigensystems for
 * Isotropic Distortion Energies"). With F = U S V^T (S from F^T F = V S^2 V^T, U = F V S^-1, so
 * det U det V = 1 when J > 0), dF = U X V^T gives J(F + dF) = det(S + X) exactly, and in X the
 * Hessian splits into
 *  - on (X11, X22, X33): Psi'' t t^T + Psi' [[0, s3, s2], [s3, 0, s1], [s2, s1, 0]], t = (s2 s3,
 *    s1 s3, s1 s2) = cof S: a 3 x 3 eigenproblem;
 *  - on each pair (Xij, Xji), k the third index: Psi' [[0, -sk], [-sk, 0]], eigenvalues -Psi' sk
 *    on (1, 1) / sqrt 2 and +Psi' sk on (1, -1) / sqrt 2.
 * The negative eigenvalues are dropped, and H = sum lambda q q^T with q = vec(U E V^T). It replaces
 * a 9 x 9 LAPACK eigendecomposition per particle (kn_fem_project_psd) and gives the same matrix
 * (tests/mpm/test_eos_hessian.c). */
static void eos_hessian_psd(const double F[9], double d1, double d2, double H[81]) {
  double FtF[9], e[3], V0[9];
  kn_mat3_mulT(F, F, FtF);
  kn_mat3_sym_eigen(FtF, e, V0);
  /* descending singular values; V's columns in that order */
  int o[3] = {0, 1, 2};
  for (int a = 0; a < 3; a++)
    for (int b = a + 1; b < 3; b++)
      if (e[o[b]] > e[o[a]]) { int t = o[a]; o[a] = o[b]; o[b] = t; }
  double V[9], U[9], sv[3];
  for (int k = 0; k < 3; k++) {
    sv[k] = sqrt(fmax(e[o[k]], 0.0));
    for (int r = 0; r < 3; r++) V[3 * r + k] = V0[3 * r + o[k]];
  }
  /* u1, u2 = F v / s (Gram-Schmidt against round-off), u3 = det(V) u1 x u2: F = U S V^T with
   * det U = det V, also when s3 is tiny */
  double u[3][3];
  for (int k = 0; k < 2; k++) {
    double v[3] = {V[k], V[3 + k], V[6 + k]};
    kn_mat3_vec(F, v, u[k]);
    if (k == 1) {
      double d = kn_vec3_dot(u[1], u[0]);
      for (int r = 0; r < 3; r++) u[1][r] -= d * u[0][r];
    }
    double n = kn_vec3_norm(u[k]);
    for (int r = 0; r < 3; r++) u[k][r] /= n;
  }
  kn_vec3_cross(u[0], u[1], u[2]);
  double detV = kn_mat3_det(V);
  for (int r = 0; r < 3; r++) u[2][r] *= detV < 0 ? -1.0 : 1.0;
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++) U[3 * r + k] = u[k][r];
  /* the scaling block */
  double t[3] = {sv[1] * sv[2], sv[0] * sv[2], sv[0] * sv[1]}, M[9], lam[3], Z[9];
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) M[3 * a + b] = d2 * t[a] * t[b] + (a == b ? 0.0 : d1 * sv[3 - a - b]);
  kn_mat3_sym_eigen(M, lam, Z);
  memset(H, 0, 81 * sizeof(double));
  double q[9];
  for (int k = 0; k < 3; k++) {
    if (!(lam[k] > 0)) continue;
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++)
        q[3 * a + b] = U[3 * a] * Z[k] * V[3 * b] + U[3 * a + 1] * Z[3 + k] * V[3 * b + 1] +
                       U[3 * a + 2] * Z[6 + k] * V[3 * b + 2];
    for (int x = 0; x < 9; x++)
      for (int y = 0; y < 9; y++) H[9 * x + y] += lam[k] * q[x] * q[y];
  }
  /* the pairs: keep the eigenvalue |Psi' sk| (sign +1: on (1, -1), -1: on (1, 1)) */
  const int pi[3] = {0, 0, 1}, pj[3] = {1, 2, 2};
  for (int k = 0; k < 3; k++) {
    int i = pi[k], j = pj[k];
    double l = d1 * sv[3 - i - j], sg = l > 0 ? -1.0 : 1.0;
    if (l == 0) continue;
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) q[3 * a + b] = (U[3 * a + i] * V[3 * b + j] + sg * U[3 * a + j] * V[3 * b + i]) * 0.70710678118654752440;
    double al = fabs(l);
    for (int x = 0; x < 9; x++)
      for (int y = 0; y < 9; y++) H[9 * x + y] += al * q[x] * q[y];
  }
}

double kn_mpm_energy_density(const kn_mpm_material* mat, double mu, double lambda, const double FE[9],
                             const double R0[9], double P[9], double dPdF[81]) {
  if (mat->model == KN_MPM_LINEAR_COROTATED) {
    return kn_linear_corotated_energy(mu, lambda, FE, R0, P, dPdF); /* digest §6.1 */
  }
  /* EOS: Psi(J) = -kappa (J^(1-g)/(1-g) - J), Psi' = kappa (1 - J^-g), Psi'' = kappa g J^(-g-1) */
  double k = mat->bulk_modulus, g = mat->gamma, J = kn_mat3_det(FE);
  if (!(J > 0)) {
    if (P) memset(P, 0, 9 * sizeof(double));
    if (dPdF) memset(dPdF, 0, 81 * sizeof(double));
    return INFINITY; /* inverted: outside the energy's domain (the line search backs off) */
  }
  double d1 = k * (1 - pow(J, -g)), d2 = k * g * pow(J, -g - 1), c[9];
  kn_mat3_cofactor(FE, c);
  if (P)
    for (int q = 0; q < 9; q++) P[q] = d1 * c[q];
  /* dP_ij/dF_kl = Psi'' c_ij c_kl + Psi' eps_ikm eps_jln F_mn, projected to PSD (digest §6.3) */
  if (dPdF) eos_hessian_psd(FE, d1, d2, dPdF);
  return -k * (pow(J, 1 - g) / (1 - g) - J);
}

/* Solve the 6x6 system S~ = 1/2 (Q V + V Q^T) for symmetric V (eq. 26), Q = R0^T R. Returns 0 if singular. */
static int solve_sym_v(const double Q[9], const double S[9], double V[9]) {
  static const int I6[6] = {0, 1, 2, 0, 0, 1}, J6[6] = {0, 1, 2, 1, 2, 2};
  double M[36], b[6];
  for (int u = 0; u < 6; u++) { /* column u: the image of the symmetric basis matrix B_u */
    double B[9] = {0}, QB[9], Y[9];
    B[3 * I6[u] + J6[u]] = B[3 * J6[u] + I6[u]] = 1;
    kn_mat3_mul(Q, B, QB);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) Y[3 * i + j] = 0.5 * (QB[3 * i + j] + QB[3 * j + i]);
    for (int r = 0; r < 6; r++) M[6 * r + u] = Y[3 * I6[r] + J6[r]];
  }
  for (int r = 0; r < 6; r++) b[r] = S[3 * I6[r] + J6[r]];
  /* Gaussian elimination with partial pivoting */
  for (int c = 0; c < 6; c++) {
    int piv = c;
    for (int r = c + 1; r < 6; r++)
      if (fabs(M[6 * r + c]) > fabs(M[6 * piv + c])) piv = r;
    if (fabs(M[6 * piv + c]) < 1e-12) return 0;
    if (piv != c) {
      for (int k = 0; k < 6; k++) { double t = M[6 * c + k]; M[6 * c + k] = M[6 * piv + k]; M[6 * piv + k] = t; }
      double t = b[c]; b[c] = b[piv]; b[piv] = t;
    }
    for (int r = c + 1; r < 6; r++) {
      double f = M[6 * r + c] / M[6 * c + c];
      for (int k = c; k < 6; k++) M[6 * r + k] -= f * M[6 * c + k];
      b[r] -= f * b[c];
    }
  }
  double x[6];
  for (int r = 5; r >= 0; r--) {
    double s = b[r];
    for (int k = r + 1; k < 6; k++) s -= M[6 * r + k] * x[k];
    x[r] = s / M[6 * r + r];
  }
  for (int u = 0; u < 6; u++) V[3 * I6[u] + J6[u]] = V[3 * J6[u] + I6[u]] = x[u];
  return 1;
}

int kn_mpm_return_mapping(double mu, double yield_stress, const double FE_n[9], const double FE_trial[9],
                          double FE_out[9]) {
  memcpy(FE_out, FE_trial, 9 * sizeof(double));
  if (!(yield_stress > 0)) return 0;
  double R0[9], R[9], RtF[9], S[9], w[3];
  kn_fem_polar_rotation(FE_n, R0);
  kn_fem_polar_rotation(FE_trial, R);
  /* S = 1/2 (R0^T F + F^T R0) (eq. 22), eigenvalues sigma (eq. 24) */
  kn_mat3_mulT(R0, FE_trial, RtF);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) S[3 * i + j] = 0.5 * (RtF[3 * i + j] + RtF[3 * j + i]);
  double U[9]; /* S = U diag(w) U^T: the 3 x 3 Jacobi, not LAPACKE's dsyev (which allocates per call) */
  kn_mat3_sym_eigen(S, w, U);
  double mean = (w[0] + w[1] + w[2]) / 3, dn = 0;
  for (int k = 0; k < 3; k++) dn += (w[k] - mean) * (w[k] - mean);
  dn = sqrt(dn);
  double radius = yield_stress / (2 * mu);
  if (dn <= radius) return 0;
  /* eq. 25: radial projection onto the cylinder about (1,1,1) */
  double st[3], Sn[9] = {0};
  for (int k = 0; k < 3; k++) st[k] = mean + radius / dn * (w[k] - mean);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 3; k++) Sn[3 * i + j] += U[3 * i + k] * st[k] * U[3 * j + k];
  /* eq. 26: S~ = 1/2 (Q V + V Q^T), Q = R0^T R, then F~ = R V */
  double Q[9], V[9];
  kn_mat3_mulT(R0, R, Q);
  if (!solve_sym_v(Q, Sn, V)) memcpy(V, Sn, sizeof V);
  kn_mat3_mul(R, V, FE_out);
  return 1;
}
