/* The scalar laws of implicit smooth friction against the digest's function-level tests (T9,
 * implicit-smooth-friction.md §5): the transition s and Stribeck bump g at their ends, the Stribeck
 * curve c / lambda at the digest's speeds (mu_d 0.5, mu_s 1.5, eps 1e-3, v_s 10 eps; its values have
 * 3-4 digits: tolerance 5e-4), the cubic penalty vanishing at delta with lambda(0) = 3 kappa delta,
 * the kappa factor (16 at d_min = -delta, 4 as d_min -> 0-), the volume-work table (6 digits), the
 * surface volume of a unit cube with its translation and homogeneity identities, and every
 * derivative against central differences. */
#include <criterion/criterion.h>
#include <math.h>

#include "smooth/smooth.h"

Test(smooth_laws, transition_and_stribeck) {
  double eps = 1e-3, ds, sv, dg;
  cr_assert_eq(kn_smooth_transition(0, eps, &ds, &sv), 0.0);
  cr_assert_float_eq(ds, 2 / eps, 1e-9);
  cr_assert_float_eq(sv, 2 / eps, 1e-9, "s / v -> 2 / eps");
  cr_assert_float_eq(kn_smooth_transition(eps, eps, &ds, NULL), 1.0, 1e-15);
  cr_assert_eq(ds, 0.0);
  kn_smooth_transition(eps * (1 - 1e-9), eps, &ds, NULL);
  cr_assert(fabs(ds) < 1e-5, "s'(eps-) = %g", ds);
  cr_assert_float_eq(kn_smooth_stribeck(0, &dg), 1.0, 1e-15);
  cr_assert_eq(dg, 0.0);
  cr_assert_float_eq(kn_smooth_stribeck(1, &dg), 0.0, 1e-15);
  cr_assert_eq(dg, 0.0);
  kn_smooth_stribeck(1 - 1e-9, &dg);
  cr_assert(fabs(dg) < 1e-8);
}

Test(smooth_laws, stribeck_curve) {
  kn_smooth_friction f = {.mu_s = 1.5, .mu_d = 0.5, .v_s = 1e-2, .mu_v = 0, .eps = 1e-3};
  const double v[5] = {0.5e-3, 1e-3, 2e-3, 5e-3, 1e-2}, want[5] = {1.1196, 1.472, 1.396, 1.000, 0.500};
  for (int i = 0; i < 5; i++) {
    double c = kn_smooth_friction_magnitude(&f, v[i], 1.0, NULL, NULL, NULL);
    cr_assert(fabs(c - want[i]) <= 5e-4, "c / lambda at %g = %.6f, the digest: %g", v[i], c, want[i]);
  }
  /* the peak: 1.4725 at 0.982 eps */
  double best = 0, at = 0;
  for (int i = 0; i <= 2000; i++) {
    double x = i * 1e-6, c = kn_smooth_friction_magnitude(&f, x, 1.0, NULL, NULL, NULL);
    if (c > best) best = c, at = x;
  }
  cr_assert(fabs(best - 1.4725) <= 5e-4 && fabs(at / 1e-3 - 0.982) <= 2e-3, "peak %.5f at %.4f eps", best, at / 1e-3);
  /* derivatives by central differences; rho = c / v and its limit at 0 */
  f.mu_v = 0.3;
  for (int i = 1; i < 30; i++) {
    double x = i * 4.1e-4, lam = 2.5, h = 1e-9, dc, dl, rho;
    double c = kn_smooth_friction_magnitude(&f, x, lam, &dc, &dl, &rho);
    double fd = (kn_smooth_friction_magnitude(&f, x + h, lam, NULL, NULL, NULL) -
                 kn_smooth_friction_magnitude(&f, x - h, lam, NULL, NULL, NULL)) / (2 * h);
    cr_assert(fabs(fd - dc) <= 1e-5 * fmax(1, fabs(dc)), "dc/dv at %g: %g vs %g", x, dc, fd);
    double fl = (kn_smooth_friction_magnitude(&f, x, lam + 1e-6, NULL, NULL, NULL) -
                 kn_smooth_friction_magnitude(&f, x, lam - 1e-6, NULL, NULL, NULL)) / 2e-6;
    cr_assert(fabs(fl - dl) <= 1e-8, "dc/dlambda at %g", x);
    cr_assert(fabs(rho * x - c) <= 1e-12 * c, "rho v = c at %g", x);
  }
  double rho;
  kn_smooth_friction_magnitude(&f, 0, 2.0, NULL, NULL, &rho);
  cr_assert_float_eq(rho, 2 * 1.5 * 2.0 / 1e-3 + 0.3, 1e-9, "rho(0) = 2 mu_s lambda / eps + mu_v");
}

Test(smooth_laws, penalty) {
  double delta = 2e-3, kappa = 7e4, db, d2b;
  cr_assert_eq(kn_smooth_penalty(delta, delta, kappa, &db, &d2b), 0.0);
  cr_assert(db == 0 && d2b == 0);
  kn_smooth_penalty(0, delta, kappa, &db, NULL);
  cr_assert_float_eq(-db, 3 * kappa * delta, 1e-9, "lambda(0) = 3 kappa delta");
  kn_smooth_penalty(delta / 2, delta, kappa, &db, NULL);
  cr_assert_float_eq(-db, 0.75 * kappa * delta, 1e-9, "lambda(delta / 2)");
  for (int i = -10; i < 10; i++) {
    double x = i * 2.3e-4, h = 1e-8, b1, b2;
    kn_smooth_penalty(x, delta, kappa, &b1, &b2);
    double fd1 = (kn_smooth_penalty(x + h, delta, kappa, NULL, NULL) - kn_smooth_penalty(x - h, delta, kappa, NULL, NULL)) / (2 * h);
    double p1, m1;
    kn_smooth_penalty(x + h, delta, kappa, &p1, NULL), kn_smooth_penalty(x - h, delta, kappa, &m1, NULL);
    cr_assert(fabs(fd1 - b1) <= 1e-6 * fmax(1, fabs(b1)) && fabs((p1 - m1) / (2 * h) - b2) <= 1e-6 * fmax(1, fabs(b2)),
              "derivatives at %g", x);
  }
  cr_assert_float_eq(kn_smooth_kappa_factor(-delta, delta), 16.0, 1e-12);
  cr_assert_float_eq(kn_smooth_kappa_factor(-1e-12 * delta, delta), 4.0, 1e-9);
}

Test(smooth_laws, volume_work) {
  const double V[5] = {0.5, 0.8, 1.2, 1.5, 2.0};
  const double ig[5] = {0.193147, 0.023144, 0.017678, 0.094535, 0.306853};
  const double ni[5] = {0.153426, 0.021485, 0.018786, 0.108198, 0.386294};
  const double w2[5] = {0.125, 0.020, 0.020, 0.125, 0.500};
  for (int i = 0; i < 5; i++) {
    cr_assert(fabs(kn_smooth_work_ideal_gas(V[i], 1, 1) - ig[i]) <= 1e-6, "W_ig(%g)", V[i]);
    cr_assert(fabs(kn_smooth_work_constant_compressibility(V[i], 1, 1) - ni[i]) <= 1e-6, "W_ni(%g)", V[i]);
    double dW, d2W, w = kn_smooth_work_quadratic(V[i], 1, 1, &dW, &d2W);
    cr_assert(fabs(w - w2[i]) <= 1e-12, "W_2(%g)", V[i]);
    cr_assert_float_eq(dW, V[i] - 1, 1e-15);
    cr_assert_float_eq(d2W, 1.0, 1e-15);
  }
}

Test(smooth_laws, surface_volume) {
  /* a unit cube, 12 outward triangles */
  const double x[24] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1};
  const int tri[36] = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                       1, 2, 6, 1, 6, 5, 2, 3, 7, 2, 7, 6, 3, 0, 4, 3, 4, 7};
  double dV[24];
  double V = kn_smooth_surface_volume(x, 8, tri, 12, dV);
  cr_assert_float_eq(V, 1.0, 1e-15, "V = %.17g", V);
  double sum[3] = {0, 0, 0}, hom = 0;
  for (int a = 0; a < 8; a++)
    for (int k = 0; k < 3; k++) sum[k] += dV[3 * a + k], hom += x[3 * a + k] * dV[3 * a + k];
  for (int k = 0; k < 3; k++) cr_assert(fabs(sum[k]) <= 1e-15, "translation invariance: %g", sum[k]);
  cr_assert_float_eq(hom, 3 * V, 1e-14, "homogeneity: sum x . dV = 3 V");
  /* dV against central differences at a sheared cube */
  double y[24];
  for (int k = 0; k < 24; k++) y[k] = x[k] + 0.1 * sin(1.7 * k);
  kn_smooth_surface_volume(y, 8, tri, 12, dV);
  for (int k = 0; k < 24; k++) {
    double h = 1e-6, s = y[k];
    y[k] = s + h;
    double vp = kn_smooth_surface_volume(y, 8, tri, 12, NULL);
    y[k] = s - h;
    double vm = kn_smooth_surface_volume(y, 8, tri, 12, NULL);
    y[k] = s;
    cr_assert(fabs((vp - vm) / (2 * h) - dV[k]) <= 1e-9, "dV/dx[%d]", k);
  }
}
