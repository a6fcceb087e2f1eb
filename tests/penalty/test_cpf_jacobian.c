/* The continuous penalty force's Jacobian in the end positions (penalty/continuous_jacobian.c,
 * continuous-penalty-forces.md §4.9) against central finite differences, for the three integration
 * modes (L_k, exact normalizer, dpf_ccd), each as the path's mean and weighted by 2 s (the implicit
 * step's, kn_cpf_impulse_jacobian), on the digest's U4 (a rotating triangle), U6 (violent
 * deformation, two intervals) and a skewed edge-edge crossing; and KN_CPF_LK's force equal to
 * kn_cpf_force's. The step h 1e-6 on unit-size stencils: the FD error (h^2 f''' ~ 1e-12) and round-off
 * (1e-16 / h ~ 1e-10) bound the tolerance 1e-7 relative to the Jacobian's largest entry. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "penalty/penalty.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static void set4(double x[12], const double a[3], const double b[3], const double c[3], const double d[3]) {
  memcpy(x, a, 24), memcpy(x + 3, b, 24), memcpy(x + 6, c, 24), memcpy(x + 9, d, 24);
}
#define V3(...) ((const double[3]){__VA_ARGS__})

static void rotx(const double p[3], double deg, double out[3]) {
  double t = deg * M_PI / 180, c = cos(t), s = sin(t);
  out[0] = p[0], out[1] = c * p[1] - s * p[2], out[2] = s * p[1] + c * p[2];
}

// the Jacobian of every mode at (x0, x1) against central differences of the force
static void check_fd(const double x0[12], const double x1in[12], int ee, const char* what) {
  double x1[12];
  memcpy(x1, x1in, sizeof x1);
  kn_cpf_stencil st = {x0, x1, ee};
  kn_cpf_pair p;
  double s;
  cr_assert_eq(kn_cpf_first_contact(&st, 1e-9, &p, &s), 1, "%s: a contact", what);
  /* checked as a carried pair (start 0; before s* the side gates the force off, so F is the same):
   * a new pair's start frozen at s* is a kink of F's second derivative there when the root moves,
   * which central differences see at O(h) (U6: 3e-7 relative) */
  s = 0;
  for (int mode = KN_CPF_LK; mode <= KN_CPF_DPF_CCD; mode++)
    for (int weighted = 0; weighted < 2; weighted++) {
      int (*force)(const kn_cpf_stencil*, const kn_cpf_pair*, double, double, kn_cpf_mode, double*, double*, double*) =
          weighted ? kn_cpf_impulse_jacobian : kn_cpf_force_jacobian;
      double F[12], dF[144], Fp[12], Fm[12], stiff;
      force(&st, &p, s, 1.0, (kn_cpf_mode)mode, F, dF, &stiff);
      double scale = 0;
      for (int i = 0; i < 144; i++) scale = fmax(scale, fabs(dF[i]));
      if (mode == KN_CPF_DPF_CCD && scale == 0) continue; /* released at s = 1: no force, nothing to check */
      cr_assert(scale > 0, "%s mode %d: a nonzero Jacobian", what, mode);
      double worst = 0;
      for (int col = 0; col < 12; col++) {
        const double h = 1e-6, keep = x1[col];
        x1[col] = keep + h, force(&st, &p, s, 1.0, (kn_cpf_mode)mode, Fp, NULL, NULL);
        x1[col] = keep - h, force(&st, &p, s, 1.0, (kn_cpf_mode)mode, Fm, NULL, NULL);
        x1[col] = keep;
        for (int row = 0; row < 12; row++) worst = fmax(worst, fabs((Fp[row] - Fm[row]) / (2 * h) - dF[12 * row + col]));
      }
      cr_log_info("%s mode %d%s: |dF| %.3g, FD error %.3g", what, mode, weighted ? " weighted" : "", scale, worst);
      /* the exact normalizer's composite rule is not exact: its nodes move with the roots, so its FD
       * differ from the exact integral's derivative by the rule's error's sensitivity (U6: 2e-7) */
      double tol = mode == KN_CPF_EXACT ? 1e-6 : 1e-7;
      cr_assert(worst <= tol * scale, "%s mode %d weighted %d: FD error %.3g of %.3g", what, mode, weighted, worst, scale);
      if (mode == KN_CPF_LK && !weighted) {
        double G[12];
        kn_cpf_force(&st, &p, s, 1.0, G);
        for (int i = 0; i < 12; i++) cr_assert(fabs(G[i] - F[i]) <= 1e-15, "%s: kn_cpf_force's F[%d]", what, i);
      }
    }
}

Test(cpf_jacobian, u4_rotating_triangle) {
  double A0[3] = {-1, -1, 0}, B0[3] = {1, -1, 0}, C0[3] = {0, 1, 0}, a1[3], b1[3], c1[3], x0[12], x1[12];
  rotx(A0, 30, a1), rotx(B0, 30, b1), rotx(C0, 30, c1);
  set4(x0, V3(0, .2, .4), A0, B0, C0);
  set4(x1, V3(0, .2, -.6), a1, b1, c1);
  check_fd(x0, x1, 0, "U4");
}

Test(cpf_jacobian, u6_two_intervals) {
  double x0[12], x1[12];
  set4(x0, V3(.3, .3, -.6), V3(-1, 0, .7), V3(1, -.9, -.1), V3(.3, .3, -1));
  set4(x1, V3(.4, -.8, -.9), V3(.3, .7, .3), V3(-.6, .5, -.4), V3(.2, -.3, -.5));
  check_fd(x0, x1, 0, "U6");
}

Test(cpf_jacobian, skewed_edge_edge) {
  double x0[12], x1[12];
  set4(x0, V3(-1, 0.1, .5), V3(1, -0.2, .6), V3(0.1, -1, 0), V3(-0.1, 1, 0.1));
  set4(x1, V3(-0.9, 0.2, -.4), V3(1.1, -0.1, -.6), V3(0.1, -1, 0.05), V3(-0.2, 1.1, 0.1));
  check_fd(x0, x1, 1, "EE");
}

/* the U1 triangle with its vertex moving straight down through it, z 0.5 -> -0.5: x0, x1 (12 each)
 * set, the crossing found (s* = 1/2) */
static kn_cpf_stencil straight_through(double* x0, double* x1, kn_cpf_pair* p, double* s) {
  set4(x0, V3(.25, .25, .5), V3(0, 0, 0), V3(1, 0, 0), V3(0, 1, 0));
  set4(x1, V3(.25, .25, -.5), V3(0, 0, 0), V3(1, 0, 0), V3(0, 1, 0));
  kn_cpf_stencil st = {x0, x1, 0};
  cr_assert_eq(kn_cpf_first_contact(&st, 1e-9, p, s), 1);
  return st;
}

/* 1D along the normal (the U1 triangle, the vertex moving straight through): stiff = the integral
 * of s over [s*, 1] = (1 - s*^2)/2, and dF_p/dz1 = -k stiff exactly (f m / L_k^2 = z n) */
Test(cpf_jacobian, one_dimensional_stiffness) {
  double x0[12], x1[12], F[12], dF[144], stiff, s;
  kn_cpf_pair p;
  kn_cpf_stencil st = straight_through(x0, x1, &p, &s);
  kn_cpf_force_jacobian(&st, &p, s, 2.0, KN_CPF_LK, F, dF, &stiff);
  cr_assert(fabs(stiff - 0.375) < 1e-15, "stiff %.17g", stiff);
  cr_assert(fabs(dF[12 * 2 + 2] + 2.0 * 0.375) < 1e-14, "dFz/dz1 %.17g", dF[12 * 2 + 2]);
  kn_cpf_force_jacobian(&st, &p, s, 2.0, KN_CPF_DPF_CCD, F, dF, &stiff);
  cr_assert(fabs(F[2] - 1.0) < 1e-14 && fabs(dF[12 * 2 + 2] + 2.0) < 1e-14, "dpf_ccd: -k z(1) = 1, slope -k");
}

/* the implicit step's weighted force (kn_cpf_impulse_jacobian), 1D as above, k = 2: crossing at
 * s* = 1/2, depth s - 1/2 after it, F_z = k int 2 s (s - 1/2) ds over [1/2, 1] = 5k/24 (the mean's k/8),
 * stiff = int 2 s^2 ds = 7/12; and a carried pair penetrating along the whole step, depth 0.1 -> 0.3:
 * k (0.1 / 3 + 2 (0.3) / 3) = 0.7 k / 3 (the mean's k (0.1 + 0.3) / 2), stiff 2/3 */
Test(cpf_jacobian, weighted_one_dimensional) {
  double x0[12], x1[12], F[12], dF[144], stiff, s;
  kn_cpf_pair p;
  kn_cpf_stencil st = straight_through(x0, x1, &p, &s);
  kn_cpf_impulse_jacobian(&st, &p, s, 2.0, KN_CPF_LK, F, dF, &stiff);
  cr_assert(fabs(F[2] - 2.0 * 5 / 24) < 1e-14, "crossing: F_z %.17g", F[2]);
  cr_assert(fabs(stiff - 7.0 / 12) < 1e-15 && fabs(dF[12 * 2 + 2] + 2.0 * 7 / 12) < 1e-14, "stiff %.17g", stiff);
  x0[2] = -0.1, x1[2] = -0.3;
  kn_cpf_impulse_jacobian(&st, &p, 0, 2.0, KN_CPF_LK, F, dF, &stiff);
  cr_assert(fabs(F[2] - 2.0 * 0.7 / 3) < 1e-14, "carried: F_z %.17g", F[2]);
  cr_assert(fabs(stiff - 2.0 / 3) < 1e-15, "carried: stiff %.17g", stiff);
  kn_cpf_impulse_jacobian(&st, &p, 0, 2.0, KN_CPF_EXACT, F, NULL, NULL);
  cr_assert(fabs(F[2] - 2.0 * 0.7 / 3) < 1e-14, "carried, exact normalizer: F_z %.17g", F[2]);
  kn_cpf_impulse_jacobian(&st, &p, 0, 2.0, KN_CPF_DPF_CCD, F, NULL, NULL);
  cr_assert(fabs(F[2] - 2.0 * 0.3) < 1e-14, "dpf_ccd unweighted: F_z %.17g", F[2]);
}

/* edges in parallel planes (a box's bottom edge falling across a plate's diagonal): m is along the
 * planes' normal; a small tilt of the falling edge */
Test(cpf_jacobian, edge_edge_parallel_planes) {
  double x0[12], x1[12];
  set4(x0, V3(-1, -1, 0), V3(1, 1, 0), V3(-0.4, 0.3, 0.02), V3(0.6, 0.3, 0.021));
  set4(x1, V3(-1, -1, 0), V3(1, 1, 0), V3(-0.4, 0.3, -0.01), V3(0.6, 0.31, -0.012));
  check_fd(x0, x1, 1, "EE parallel planes");
}
