/* The IPC barrier, stiffness and friction functions against the digest's micro-tests (§9.7 items 1,
 * 2, 7, 8; values from its tables in §3.2, §3.5, §5.2): reference values to 1e-9 relative, the
 * clamp's C2 continuity at dh, signs of b' and b'' on (0, dh), f0' = f1 by central differences,
 * kappa_min = 2.5e6 and kappa_max = 2.5e8 for l = 1, dh = 1e-3, m = 1, and the frictionless resting
 * gap of a 1 kg vertex over a fixed plane at h = 0.01 with kappa = 2.5e6: the force balance
 * -kappa 2 d b~'(d^2) = m g h^2 holds at d* = 8.6622e-4 m. */
#include <criterion/criterion.h>
#include <math.h>

#include "ipc/ipc.h"

#define REL(a, b, tol, ...) cr_assert(fabs((a) - (b)) <= (tol) * fabs(b), __VA_ARGS__)

Test(ipc_barrier, reference_values) {
  const double d[3] = {0.1, 0.5, 0.9};
  const double b[3] = {1.8650939253, 0.1732867951, 0.0010536052};
  const double b1[3] = {-12.2446531674, -1.1931471806, -0.0321832142};
  const double b2[3] = {121.6051701860, 6.3862943611, 0.6675111548};
  for (int i = 0; i < 3; i++) {
    double db, d2b, v = kn_ipc_barrier(d[i], 1.0, &db, &d2b);
    /* the table has 10 decimals: relative 1e-9 of the value, or 1e-10 absolute for the small ones */
    cr_assert(fabs(v - b[i]) <= fmax(1e-9 * fabs(b[i]), 1e-10), "b(%g) = %.12g", d[i], v);
    cr_assert(fabs(db - b1[i]) <= fmax(1e-9 * fabs(b1[i]), 1e-10), "b'(%g) = %.12g", d[i], db);
    cr_assert(fabs(d2b - b2[i]) <= fmax(1e-9 * fabs(b2[i]), 1e-10), "b''(%g) = %.12g", d[i], d2b);
  }
  /* zero at and above dh, the clamp C2 (the values just below dh tend to 0), signs on (0, dh) */
  double db, d2b;
  cr_assert_eq(kn_ipc_barrier(1.0, 1.0, &db, &d2b), 0.0);
  cr_assert(db == 0 && d2b == 0);
  cr_assert_eq(kn_ipc_barrier(2.0, 1.0, &db, &d2b), 0.0);
  double v = kn_ipc_barrier(1 - 1e-6, 1.0, &db, &d2b);
  cr_assert(v < 1e-17 && fabs(db) < 1e-11 && fabs(d2b) < 1e-5, "near dh: %g %g %g", v, db, d2b);
  for (int i = 1; i < 1000; i++) {
    double x = i * 1e-3;
    v = kn_ipc_barrier(x, 1.0, &db, &d2b);
    cr_assert(v > 0 && db < 0 && d2b > 0, "d = %g: b %g, b' %g, b'' %g", x, v, db, d2b);
  }
  cr_assert(isinf(kn_ipc_barrier(0.0, 1.0, NULL, NULL)));
}

Test(ipc_barrier, friction_functions) {
  const double y[3] = {0.25, 0.5, 0.75}, f0[3] = {0.390625, 0.5416667, 0.7552083}, f1[3] = {0.4375, 0.75, 0.9375};
  for (int i = 0; i < 3; i++) {
    cr_assert(fabs(kn_ipc_friction_f0(y[i], 1.0) - f0[i]) <= 1e-7, "f0(%g)", y[i]); /* table: 7 decimals */
    REL(kn_ipc_friction_f1(y[i], 1.0, NULL, NULL), f1[i], 1e-12, "f1(%g)", y[i]);
  }
  double eps = 0.37;
  REL(kn_ipc_friction_f0(eps, eps), eps, 1e-15, "f0(eps) = eps");
  /* f0' = f1 by central differences (f0 is a cubic below eps: the difference is exact to roundoff) */
  for (int i = 1; i < 40; i++) {
    double x = i * 0.025, h = 1e-6;
    double fd = (kn_ipc_friction_f0(x + h, eps) - kn_ipc_friction_f0(x - h, eps)) / (2 * h);
    if (fabs(x - eps) < 2 * h) continue;
    cr_assert(fabs(fd - kn_ipc_friction_f1(x, eps, NULL, NULL)) <= 1e-8, "f0'(%g) = %.10g", x, fd);
  }
  /* f1 continuous and C1 at eps, f1 / y finite at 0 */
  double d1, q;
  double below = kn_ipc_friction_f1(eps * (1 - 1e-9), eps, &d1, &q);
  cr_assert(fabs(below - 1) < 1e-12 && fabs(d1) < 1e-8);
  kn_ipc_friction_f1(0.0, eps, &d1, &q);
  REL(q, 2 / eps, 1e-15, "f1 / y at 0");
  REL(d1, 2 / eps, 1e-15, "f1'(0)");
}

Test(ipc_barrier, kappa) {
  double kmin, kmax;
  kn_ipc_kappa_bounds(1.0, 1e-3, 1.0, &kmin, &kmax);
  REL(kmin, 2.5e6, 1e-9, "kappa_min %.12g", kmin);
  REL(kmax, 2.5e8, 1e-9, "kappa_max %.12g", kmax);
  kn_ipc_kappa_bounds(1.0, 1e-4, 1.0, &kmin, &kmax);
  REL(kmin, 2.49999995e10, 1e-9, "kappa_min %.12g (dh 1e-4)", kmin);
  kn_ipc_kappa_bounds(2.0, 2e-3, 1.0, &kmin, &kmax);
  REL(kmin, 6.25e5, 1e-9, "kappa_min %.12g (l 2)", kmin);
  /* the initial balance: clamped least squares */
  double gb[2] = {-1, 0}, gE[2] = {3e7, 1};
  REL(kn_ipc_kappa_initial(gb, gE, 2, 2.5e6, 2.5e8), 3e7, 1e-15, "balanced");
  gE[0] = 1e12;
  cr_assert_eq(kn_ipc_kappa_initial(gb, gE, 2, 2.5e6, 2.5e8), 2.5e8);
  gE[0] = -5;
  cr_assert_eq(kn_ipc_kappa_initial(gb, gE, 2, 2.5e6, 2.5e8), 2.5e6, "not positive: kappa_min");
  gb[0] = 0;
  cr_assert_eq(kn_ipc_kappa_initial(gb, gE, 2, 2.5e6, 2.5e8), 2.5e6, "no barrier: kappa_min");
}

/* -kappa 2 d b~'(d^2) - m g h^2 is decreasing in d on (0, dh): bisection to 1e-15 m */
Test(ipc_barrier, resting_gap) {
  double kappa = 2.5e6, m = 1, g = 9.81, h = 0.01, dh = 1e-3, lo = 1e-6, hi = dh;
  for (int it = 0; it < 200; it++) {
    double d = 0.5 * (lo + hi), db;
    kn_ipc_barrier(d * d, dh * dh, &db, NULL);
    if (-kappa * 2 * d * db > m * g * h * h)
      lo = d;
    else
      hi = d;
  }
  double d = 0.5 * (lo + hi);
  cr_assert(fabs(d - 8.6622e-4) <= 5e-9, "d* = %.8g m, the digest: 8.6622e-4 m", d);
}
