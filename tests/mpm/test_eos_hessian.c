/* mpm/material.c: the EOS fluid's PSD-projected Hessian in closed form (the analytic eigensystem of
 * J's Hessian) equals the full Hessian Psi'' c c^T + Psi' d2J/dF2 (written out here with the
 * Levi-Civita symbols) projected by a 9 x 9 LAPACK eigendecomposition (kn_fem_project_psd), to
 * 1e-12 of its largest entry: on random F (J from 0.5 to 1.6), on F = J^(1/3) I (the fluid's F at a
 * step start: triple singular values), on F near it, and on a rotation-reflection-free F with a
 * tiny singular value. Also P = Psi' cof F against a central difference of the energy. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "deformable/deformable.h"
#include "mpm/mpm.h"
#include "../support/dense.h"

static unsigned long long rng = 99;
static double urand(void) {
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}



static double check(const kn_mpm_material* mat, const double F[9], const char* what) {
  double P[9], H[81], R[81];
  kn_mpm_energy_density(mat, 0, 0, F, NULL, P, H);
  eos_exact_hessian(mat->bulk_modulus, mat->gamma, F, R);
  kn_fem_project_psd(R, 9);
  double e = 0, m = 0;
  for (int k = 0; k < 81; k++) e = fmax(e, fabs(H[k] - R[k])), m = fmax(m, fabs(R[k]));
  cr_expect_lt(e, 1e-12 * m, "%s: closed form vs LAPACK projection differ by %g of %g", what, e, m);
  /* P against a central difference of the energy (not on the flat F, where J^-7 varies too fast) */
  if (kn_mat3_det(F) < 0.3) return e / m;
  double ep = 0, pm = 0;
  for (int k = 0; k < 9; k++) {
    double Fp[9], Fm[9], h = 1e-6;
    for (int q = 0; q < 9; q++) Fp[q] = Fm[q] = F[q];
    Fp[k] += h, Fm[k] -= h;
    double fd = (kn_mpm_energy_density(mat, 0, 0, Fp, NULL, NULL, NULL) -
                 kn_mpm_energy_density(mat, 0, 0, Fm, NULL, NULL, NULL)) / (2 * h);
    ep = fmax(ep, fabs(fd - P[k])), pm = fmax(pm, fabs(P[k]));
  }
  /* the difference quotient carries round-off eps Psi / h ~ 1e-16 kappa / 1e-6 */
  cr_expect_lt(ep, 1e-6 * pm + 1e-9 * mat->bulk_modulus, "%s: P vs finite difference %g of %g", what, ep, pm);
  return e / m;
}

Test(mpm_eos_hessian, closed_form_projection_matches_lapack) {
  kn_mpm_material mat = {.model = KN_MPM_EOS_FLUID, .density = 1e3, .bulk_modulus = 1e4, .gamma = 7};
  double worst = 0;
  int n = 0;
  for (int t = 0; t < 200; t++) {
    double F[9];
    for (int k = 0; k < 9; k++) F[k] = (k % 4 == 0 ? 1.0 : 0.0) + 0.6 * (urand() - 0.5);
    double J = kn_mat3_det(F);
    if (!(J > 0.5 && J < 1.6)) continue;
    worst = fmax(worst, check(&mat, F, "random F"));
    n++;
  }
  cr_expect_gt(n, 50);
  const double s[3] = {0.9, 1.0, 1.08};
  for (int k = 0; k < 3; k++) {
    double F[9] = {s[k], 0, 0, 0, s[k], 0, 0, 0, s[k]};
    worst = fmax(worst, check(&mat, F, "isotropic F"));
    F[1] = 1e-9, F[5] = -2e-9, F[8] += 3e-9;
    worst = fmax(worst, check(&mat, F, "near-isotropic F"));
  }
  /* a flat F (s3 = 1e-5 of s1) and compression beyond the rest volume */
  double Fflat[9] = {1.3, 0.2, 0, -0.1, 0.9, 0, 0, 0, 1e-5};
  worst = fmax(worst, check(&mat, Fflat, "flat F"));
  fprintf(stderr, "EOS Hessian: closed form vs LAPACK, worst %.1e of the largest entry over %d matrices\n", worst,
          n + 7);
}
