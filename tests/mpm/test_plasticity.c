/* T11 (digest §9): the von Mises return mapping of the seed's Algorithm 1 (eqs. 22–26) on the
 * dough-tearing material (E 1e5, nu 0.4, eta 6e3: radius eta / 2 mu = 0.084), and the lagged
 * plasticity inside kn_mpm_advance. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#include "deformable/deformable.h"
#include "mpm/mpm.h"

static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

static void inv3(const double F[9], double Fi[9]) {
  double d = F[0] * (F[4] * F[8] - F[5] * F[7]) - F[1] * (F[3] * F[8] - F[5] * F[6]) + F[2] * (F[3] * F[7] - F[4] * F[6]);
  Fi[0] = (F[4] * F[8] - F[5] * F[7]) / d, Fi[1] = (F[2] * F[7] - F[1] * F[8]) / d, Fi[2] = (F[1] * F[5] - F[2] * F[4]) / d;
  Fi[3] = (F[5] * F[6] - F[3] * F[8]) / d, Fi[4] = (F[0] * F[8] - F[2] * F[6]) / d, Fi[5] = (F[2] * F[3] - F[0] * F[5]) / d;
  Fi[6] = (F[3] * F[7] - F[4] * F[6]) / d, Fi[7] = (F[1] * F[6] - F[0] * F[7]) / d, Fi[8] = (F[0] * F[4] - F[1] * F[3]) / d;
}

static double mu_dough(void) {
  double mu, la;
  kn_fem_lame(1e5, 0.4, &mu, &la);
  cr_assert(fabs(mu - 35714.2857142857) < 1e-6 && fabs(la - 142857.142857143) < 1e-5);
  cr_assert(fabs(6e3 / (2 * mu) - 0.084) < 1e-12);
  return mu;
}

static void check(const double* got, const double* want, int n, double tol, const char* what) {
  for (int k = 0; k < n; k++)
    cr_assert(fabs(got[k] - want[k]) < tol, "%s[%d]: %.10g, expected %.10g", what, k, got[k], want[k]);
}

Test(mpm_plasticity, t11a_diagonal_stretch) {
  double mu = mu_dough(), F[9] = {1.2, 0, 0, 0, 1.0, 0, 0, 0, 0.9}, FE[9], Fi[9], FP[9];
  cr_assert_eq(kn_mpm_return_mapping(mu, 6e3, I3, F, FE), 1);
  const double want_FE[9] = {1.0981407, 0, 0, 0, 1.0203719, 0, 0, 0, 0.98148741};
  check(FE, want_FE, 9, 1e-7, "F~E");
  inv3(FE, Fi);
  kn_mat3_mul(Fi, F, FP); /* F_P^{n+1} = F~E^-1 F^{n+1} (F_P^n = I) */
  const double want_FP[9] = {1.0927561, 0, 0, 0, 0.98003487, 0, 0, 0, 0.9169756};
  check(FP, want_FP, 9, 1e-7, "F_P");
  /* the projected state lies on the cylinder: |dev sigma~| = 0.084 and the trial |dev sigma| = 0.21602469 */
  double m = (1.2 + 1.0 + 0.9) / 3, dn = sqrt(pow(1.2 - m, 2) + pow(1.0 - m, 2) + pow(0.9 - m, 2));
  cr_assert(fabs(dn - 0.21602469) < 1e-8);
  double s[3] = {FE[0], FE[4], FE[8]}, ms = (s[0] + s[1] + s[2]) / 3;
  double dr = sqrt(pow(s[0] - ms, 2) + pow(s[1] - ms, 2) + pow(s[2] - ms, 2));
  cr_assert(fabs(dr - 0.084) < 1e-12, "|dev sigma~| = %.15g", dr);
}

Test(mpm_plasticity, t11b_rotated_stretch_6x6) {
  double mu = mu_dough(), c = cos(10 * M_PI / 180), s = sin(10 * M_PI / 180);
  double Rz[9] = {c, -s, 0, s, c, 0, 0, 0, 1}, D[9] = {1.2, 0, 0, 0, 1.0, 0, 0, 0, 0.9}, F[9], FE[9], Fi[9], FP[9];
  kn_mat3_mul(Rz, D, F);
  cr_assert_eq(kn_mpm_return_mapping(mu, 6e3, I3, F, FE), 1);
  const double want_FE[9] = {1.0872929, -0.17755087, 0, 0.19171907, 1.006941, 0, 0, 0, 0.97234311};
  check(FE, want_FE, 9, 1e-7, "F~E");
  inv3(FE, Fi);
  kn_mat3_mul(Fi, F, FP);
  const double want_FP[9] = {1.0868914, 0, 0, 0, 0.97801928, 0, 0, 0, 0.92559919};
  check(FP, want_FP, 9, 1e-7, "F_P");
}

Test(mpm_plasticity, t11c_inside_cylinder_and_elastic) {
  double mu = mu_dough(), F[9] = {1.02, 0.01, 0, -0.01, 0.99, 0, 0, 0, 1.0}, FE[9];
  cr_assert_eq(kn_mpm_return_mapping(mu, 6e3, I3, F, FE), 0);
  cr_assert(memcmp(FE, F, sizeof F) == 0, "inside the cylinder F~E must equal the trial exactly");
  double G[9] = {1.2, 0, 0, 0, 1.0, 0, 0, 0, 0.9};
  cr_assert_eq(kn_mpm_return_mapping(mu, 0.0, I3, G, FE), 0, "yield_stress 0 is elastic");
  cr_assert(memcmp(FE, G, sizeof G) == 0);
}

/* kn_mpm_advance applies Algorithm 1 after G2P: a uniform stretch velocity field beyond yield gives
 * the same F_E / F_P as the pure function, and F = F_E F_P holds. */
Test(mpm_plasticity, advance_applies_return_mapping) {
  kn_mpm_material mat = kn_mpm_material_default();
  mat.yield_stress = 6e3;
  kn_mpm_shape sh = {.type = KN_MPM_BOX, .size = {0.04, 0.04, 0.04}};
  kn_mpm_body* b;
  kn_error err;
  cr_assert_eq(kn_mpm_body_create(&mat, &sh, NULL, 0.02, 8, "dough", &b, &err), KN_OK, "%s", err.msg);
  const double dt = 0.01, B[9] = {20, 0, 0, 0, 0, 0, 0, 0, -10}; /* grad v: F = I + dt B = diag(1.2, 1, 0.9) */
  cr_assert_eq(kn_mpm_p2g(b, &err), KN_OK, "%s", err.msg);
  double* vg = calloc(3 * (size_t)b->grid.n, sizeof(double));
  for (int i = 0; i < b->grid.n; i++) kn_mat3_vec(B, b->grid.x + 3 * i, vg + 3 * i);
  cr_assert_eq(kn_mpm_advance(b, vg, dt, &err), KN_OK, "%s", err.msg);
  const double want_FE[9] = {1.0981407, 0, 0, 0, 1.0203719, 0, 0, 0, 0.98148741};
  const double want_FP[9] = {1.0927561, 0, 0, 0, 0.98003487, 0, 0, 0, 0.9169756};
  for (int p = 0; p < b->np; p++) {
    check(b->FE + 9 * p, want_FE, 9, 1e-7, "particle F_E");
    check(b->FP + 9 * p, want_FP, 9, 1e-7, "particle F_P");
    double F[9];
    kn_mat3_mul(b->FE + 9 * p, b->FP + 9 * p, F);
    const double Ft[9] = {1.2, 0, 0, 0, 1, 0, 0, 0, 0.9};
    check(F, Ft, 9, 1e-12, "F_E F_P");
  }
  free(vg);
  kn_mpm_body_free(b);
}
