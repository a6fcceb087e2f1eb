/* IPC's lagged friction (ipc/friction.c, digest §5.4-5.5): the tangent basis of each distance case
 * measures the closest points' relative tangential displacement (a common translation gives
 * u = 0, a normal approach u = 0, a tangential slide |u| = its length, T^T T's point block = I for
 * a point over a triangle interior), and the local potential chi f0(|u|) with its gradient and
 * Hessian against central differences in both regimes (|u| < eps, > eps), PSD, and the limit
 * chi 2 / eps I at u = 0. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "contact/contact.h"
#include "ipc/ipc.h"

static void Tt(const double T[24], const double dx[12], double u[2]) {
  u[0] = u[1] = 0;
  for (int i = 0; i < 12; i++) u[0] += T[2 * i] * dx[i], u[1] += T[2 * i + 1] * dx[i];
}

static void check_basis(const double x[12], int edge_edge, const double n[3], const char* what) {
  kn_dist_case c = edge_edge ? kn_dist_edge_edge_case(x) : kn_dist_point_triangle_case(x);
  double T[24], dx[12], u[2];
  kn_ipc_tangent_basis(x, edge_edge, c.kind, c.v, T);
  for (int i = 0; i < 12; i++) dx[i] = (i % 3 == 0) ? 0.3 : (i % 3 == 1 ? -0.2 : 0.7); /* a common translation */
  Tt(T, dx, u);
  cr_assert(fabs(u[0]) < 1e-14 && fabs(u[1]) < 1e-14, "%s: translation gives u = (%g, %g)", what, u[0], u[1]);
  /* the first closest-point vertex moves along the normal: no tangential displacement */
  memset(dx, 0, sizeof dx);
  for (int k = 0; k < 3; k++) dx[3 * c.v[0] + k] = 0.01 * n[k];
  Tt(T, dx, u);
  cr_assert(fabs(u[0]) < 1e-14 && fabs(u[1]) < 1e-14, "%s: a normal approach gives u = (%g, %g)", what, u[0], u[1]);
}

Test(ipc_friction, tangent_basis) {
  /* point over the triangle interior (PT): a slide of p by (0.01, 0.02, 0) has |u| = its length */
  double x[12] = {0.25, 0.25, 0.1, 0, 0, 0, 1, 0, 0, 0, 1, 0}, T[24], dx[12] = {0}, u[2];
  const double z[3] = {0, 0, 1};
  kn_dist_case c = kn_dist_point_triangle_case(x);
  cr_assert_eq(c.kind, KN_DIST_PT);
  kn_ipc_tangent_basis(x, 0, c.kind, c.v, T);
  dx[0] = 0.01, dx[1] = 0.02;
  Tt(T, dx, u);
  cr_assert_float_eq(sqrt(u[0] * u[0] + u[1] * u[1]), sqrt(5e-4), 1e-15);
  double g[4] = {0};
  for (int i = 0; i < 3; i++)
    for (int a = 0; a < 2; a++)
      for (int b = 0; b < 2; b++) g[2 * a + b] += T[2 * i + a] * T[2 * i + b];
  cr_assert(fabs(g[0] - 1) < 1e-15 && fabs(g[3] - 1) < 1e-15 && fabs(g[1]) < 1e-15, "orthonormal tangent basis");
  check_basis(x, 0, z, "PT");
  /* point beside an edge (PE) and beyond a vertex (PP), in the triangle's plane + height */
  double xe[12] = {0.5, -1, 0.2, 0, 0, 0, 1, 0, 0, 0, 1, 0};
  double ne[3] = {0, -1, 0.2}, nrm = sqrt(1.04);
  for (int k = 0; k < 3; k++) ne[k] /= nrm;
  cr_assert_eq(kn_dist_point_triangle_case(xe).kind, KN_DIST_PE);
  check_basis(xe, 0, ne, "PE");
  double xp[12] = {-1, -1, 0.5, 0, 0, 0, 1, 0, 0, 0, 1, 0};
  double np[3] = {-1 / 1.5, -1 / 1.5, 0.5 / 1.5};
  cr_assert_eq(kn_dist_point_triangle_case(xp).kind, KN_DIST_PP);
  check_basis(xp, 0, np, "PP");
  /* crossing edges (EE) 1 apart along z */
  double xx[12] = {0, 0, 0, 1, 0, 0, 0.5, -1, 1, 0.5, 1, 1};
  cr_assert_eq(kn_dist_edge_edge_case(xx).kind, KN_DIST_EE);
  const double mz[3] = {0, 0, -1}; /* a0 moving down: away along -z is the normal direction */
  check_basis(xx, 1, mz, "EE");
}

Test(ipc_friction, local_potential) {
  double chi = 3.0, eps = 0.1, worst = 0;
  const double us[4][2] = {{0.03, -0.02}, {0.002, 0.07}, {0.2, -0.1}, {-0.5, 0.3}};
  for (int t = 0; t < 4; t++) {
    double g[2], H[4], u[2] = {us[t][0], us[t][1]}, h = 1e-6;
    kn_ipc_friction_local(u, chi, eps, g, H);
    for (int a = 0; a < 2; a++) {
      double up[2] = {u[0], u[1]}, um[2] = {u[0], u[1]}, gp[2], gm[2];
      up[a] += h, um[a] -= h;
      double Ep = kn_ipc_friction_local(up, chi, eps, gp, NULL), Em = kn_ipc_friction_local(um, chi, eps, gm, NULL);
      double e = fabs((Ep - Em) / (2 * h) - g[a]);
      cr_assert(e <= 1e-8, "u %d: dD/du%d %g vs fd %g", t, a, g[a], (Ep - Em) / (2 * h));
      for (int b = 0; b < 2; b++) {
        double eh = fabs((gp[b] - gm[b]) / (2 * h) - H[2 * b + a]);
        worst = fmax(worst, eh);
        cr_assert(eh <= 1e-6 * fmax(1, fabs(H[2 * b + a])), "u %d: H[%d][%d] %g vs fd %g", t, b, a, H[2 * b + a],
                  (gp[b] - gm[b]) / (2 * h));
      }
    }
    /* PSD: both eigenvalues >= 0 */
    double m = 0.5 * (H[0] + H[3]), d = sqrt(0.25 * (H[0] - H[3]) * (H[0] - H[3]) + H[1] * H[1]);
    cr_assert(m - d >= -1e-12 * fabs(m), "u %d: eigenvalue %g", t, m - d);
  }
  double z[2] = {0, 0}, g[2], H[4];
  kn_ipc_friction_local(z, chi, eps, g, H);
  cr_assert(g[0] == 0 && g[1] == 0);
  cr_assert(fabs(H[0] - chi * 2 / eps) < 1e-12 && fabs(H[3] - chi * 2 / eps) < 1e-12 && H[1] == 0, "H(0) = chi 2 / eps I");
}
