/* Friction relaxation against a plane and a sphere (penalty-coulomb-friction.md §6.11 items 1-4):
 * the plane's closed-form Jacobian df/dZ = -k (n n^T + mu u n^T + s w w^T) when sliding and -k I
 * when sticking, idempotence (relaxing the relaxed anchor again keeps it), the force on the cone
 * exactly when sliding and inside it when sticking, and the Jacobian on a curved level set (a
 * sphere) against central differences (h = 1e-6, 1e-6 relative; the digest's prototype: 5e-11). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "penalty/penalty.h"

static double plane_phi(void* ctx, const double x[3], double n[3], double H[9]) {
  (void)ctx;
  n[0] = 0, n[1] = 0, n[2] = 1;
  if (H) memset(H, 0, 9 * sizeof *H);
  return x[2];
}

/* outside of a sphere of radius 1 at the origin (phi < 0 inside the ball) */
static double sphere_phi(void* ctx, const double x[3], double n[3], double H[9]) {
  (void)ctx;
  double r = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
  for (int a = 0; a < 3; a++) n[a] = x[a] / r;
  if (H)
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) H[3 * a + b] = ((a == b) - n[a] * n[b]) / r;
  return r - 1;
}

Test(relax, plane) {
  kn_levelset ls = {plane_phi, NULL};
  double mu = 0.4, k = 1e4, X[3] = {0.3, -0.1, 0}, Z[3] = {0, 0.05, -0.02}, Y[3], f[3], J[9];
  /* dynamic: the anchor is 0.335 m from W, the cone allows mu 0.02 = 0.008 m */
  cr_assert_eq(kn_penalty_relax(&ls, X, Z, mu, k, Y, f, J), KN_RELAX_DYNAMIC);
  double ft = sqrt(f[0] * f[0] + f[1] * f[1]), fn = f[2];
  cr_assert(fn > 0 && fabs(ft - mu * fn) <= 1e-12 * fn, "on the cone: |f_t| %.15g, mu f_n %.15g", ft, mu * fn);
  cr_assert(fabs(Y[2]) < 1e-15, "Y on the plane");
  /* the closed form: u the slide direction (X - W), w = n x u, s = mu dZ / dX */
  double W[3] = {Z[0], Z[1], 0}, d[3] = {X[0] - W[0], X[1] - W[1], 0}, dX = sqrt(d[0] * d[0] + d[1] * d[1]);
  double u[3] = {d[0] / dX, d[1] / dX, 0}, n[3] = {0, 0, 1}, w[3] = {-u[1], u[0], 0}, s = mu * 0.02 / dX;
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) {
      double want = -k * (n[r] * n[c] + mu * u[r] * n[c] + s * w[r] * w[c]);
      cr_assert(fabs(J[3 * r + c] - want) <= 1e-9 * k, "df/dZ[%d][%d] = %g, closed form %g", r, c, J[3 * r + c], want);
    }
  /* idempotence: the relaxed anchor, relaxed again, stays (static now, on the cone's edge) */
  double Y2[3];
  kn_relax_state st = kn_penalty_relax(&ls, Y, Z, mu, k, Y2, NULL, NULL);
  for (int a = 0; a < 3; a++) cr_assert(fabs(Y2[a] - Y[a]) <= 1e-15, "P(Y, Z) = Y (state %d)", st);
  /* static: a close anchor stays, -k I, force inside the cone */
  double Xs[3] = {0.005, 0.05, 0};
  cr_assert_eq(kn_penalty_relax(&ls, Xs, Z, mu, k, Y, f, J), KN_RELAX_STATIC);
  cr_assert(sqrt(f[0] * f[0] + f[1] * f[1]) < mu * f[2]);
  for (int a = 0; a < 9; a++) cr_assert_eq(J[a], a % 4 == 0 ? -k : 0.0);
  /* outside: inactive */
  double Zo[3] = {0, 0, 0.01};
  cr_assert_eq(kn_penalty_relax(&ls, X, Zo, mu, k, Y, f, J), KN_RELAX_INACTIVE);
  cr_assert(f[0] == 0 && f[1] == 0 && f[2] == 0);
}

Test(relax, sphere_jacobian) {
  kn_levelset ls = {sphere_phi, NULL};
  double mu = 0.3, k = 2.0, worst = 0;
  int dynamic = 0;
  for (int t = 0; t < 20; t++) {
    double a = 0.3 * t, X[3] = {cos(a), sin(a), 0}; /* the anchor on the sphere */
    double Z[3] = {0.97 * cos(a + 0.2 + 0.01 * t), 0.97 * sin(a + 0.2 + 0.01 * t), 0.05 * sin(t)};
    double Y[3], f[3], J[9];
    kn_relax_state st = kn_penalty_relax(&ls, X, Z, mu, k, Y, f, J);
    cr_assert_neq(st, KN_RELAX_INACTIVE);
    dynamic += st == KN_RELAX_DYNAMIC;
    double scale = 0;
    for (int i = 0; i < 9; i++) scale = fmax(scale, fabs(J[i]));
    for (int c = 0; c < 3; c++) {
      double Zp[3], Zm[3], Yp[3], Ym[3], fp[3], fm[3], h = 1e-6;
      memcpy(Zp, Z, sizeof Zp), memcpy(Zm, Z, sizeof Zm);
      Zp[c] += h, Zm[c] -= h;
      cr_assert_eq(kn_penalty_relax(&ls, X, Zp, mu, k, Yp, fp, NULL), st, "same state within the step");
      kn_penalty_relax(&ls, X, Zm, mu, k, Ym, fm, NULL);
      for (int r = 0; r < 3; r++) {
        double e = fabs((fp[r] - fm[r]) / (2 * h) - J[3 * r + c]);
        worst = fmax(worst, e / scale);
        cr_assert(e <= 1e-6 * scale, "df%d/dZ%d: %g vs fd %g", r, c, J[3 * r + c], (fp[r] - fm[r]) / (2 * h));
      }
    }
  }
  cr_assert(dynamic >= 10, "the sliding case is exercised (%d of 20)", dynamic);
  printf("sphere relaxation: worst FD error of df/dZ %.1e (relative)\n", worst);
}
