/* T10 (digest §9): quadratic B-spline weights at given offsets, partition of unity and its
 * moments, the APIC round trip of an affine velocity field, and exact conservation of linear and
 * angular momentum through P2G -> G2P. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpm/mpm.h"

Test(mpm_transfer, bspline_values_and_moments) {
  /* digest T10: h 0.02, x_p (0.013, 0.021, 0) */
  double h = 0.02, xp[3] = {0.013, 0.021, 0}, w[27], dw[81];
  int base[3];
  kn_mpm_weights(h, xp, base, w, dw);
  cr_assert(base[0] == 1 && base[1] == 1 && base[2] == 0, "base (%d %d %d)", base[0], base[1], base[2]);
  const double ex[3][3] = {{0.36125, 0.6275, 0.01125}, {0.10125, 0.7475, 0.15125}, {0.125, 0.75, 0.125}};
  for (int d = 0; d < 3; d++)
    for (int o = 0; o < 3; o++) {
      double s = xp[d] / h - (base[d] + o - 1);
      cr_assert(fabs(kn_mpm_bspline(s, NULL) - ex[d][o]) < 1e-12, "axis %d offset %d: %.15g vs %.15g", d, o,
                kn_mpm_bspline(s, NULL), ex[d][o]);
    }
  /* w factorises: w[9a+3b+c] = Nx[a] Ny[b] Nz[c] */
  cr_assert(fabs(w[9 * 0 + 3 * 1 + 2] - ex[0][0] * ex[1][1] * ex[2][2]) < 1e-15);
  double sw = 0, swx[3] = {0}, sdw[3] = {0}, sxdw[9] = {0};
  for (int s = 0; s < 27; s++) {
    double xi[3] = {h * (base[0] + s / 9 - 1), h * (base[1] + (s / 3) % 3 - 1), h * (base[2] + s % 3 - 1)};
    sw += w[s];
    for (int r = 0; r < 3; r++) {
      swx[r] += w[s] * xi[r];
      sdw[r] += dw[3 * s + r];
      for (int c = 0; c < 3; c++) sxdw[3 * r + c] += xi[r] * dw[3 * s + c];
    }
  }
  cr_assert(fabs(sw - 1) < 1e-12, "sum w - 1 = %g", sw - 1);
  for (int r = 0; r < 3; r++) {
    cr_assert(fabs(swx[r] - xp[r]) < 1e-12, "sum w x_i - x_p [%d] = %g", r, swx[r] - xp[r]);
    cr_assert(fabs(sdw[r]) * h < 1e-12, "sum grad w [%d] = %g", r, sdw[r]);
    for (int c = 0; c < 3; c++)
      cr_assert(fabs(sxdw[3 * r + c] - (r == c)) < 1e-12, "sum x_i grad w^T [%d%d] = %.17g", r, c, sxdw[3 * r + c]);
  }
  /* derivative vs central differences of N */
  for (double x = -1.45; x < 1.5; x += 0.1) {
    double dN, e = 1e-6;
    kn_mpm_bspline(x, &dN);
    double fd = (kn_mpm_bspline(x + e, NULL) - kn_mpm_bspline(x - e, NULL)) / (2 * e);
    cr_assert(fabs(dN - fd) < 1e-8, "N'(%g) = %g, FD %g", x, dN, fd);
  }
  cr_assert_eq(kn_mpm_bspline(1.5, NULL), 0.0);
  cr_assert_eq(kn_mpm_bspline(-2.0, NULL), 0.0);
}

static kn_mpm_body* block(double h, int ppc) {
  kn_mpm_material mat = kn_mpm_material_default();
  kn_mpm_shape sh = {.type = KN_MPM_BOX, .size = {0.1, 0.075, 0.05}};
  kn_pose X;
  double xyz[3] = {0.0131, -0.0217, 0.3049}, rpy[3] = {0.3, -0.2, 0.7};
  kn_pose_from_xyz_rpy(xyz, rpy, &X);
  kn_mpm_body* b;
  kn_error err;
  cr_assert_eq(kn_mpm_body_create(&mat, &sh, &X, h, ppc, "block", &b, &err), KN_OK, "%s", err.msg);
  return b;
}

Test(mpm_transfer, apic_round_trip_affine) {
  kn_mpm_body* b = block(0.025, 8);
  const double a[3] = {0.3, -1.2, 0.5}, B[9] = {0.1, -2.0, 0.4, 1.5, 0.2, -0.7, 0.3, 0.9, -0.25};
  for (int p = 0; p < b->np; p++) {
    kn_mat3_vec(B, b->x + 3 * p, b->v + 3 * p);
    for (int d = 0; d < 3; d++) b->v[3 * p + d] += a[d];
    memcpy(b->C + 9 * p, B, sizeof B);
  }
  kn_error err;
  cr_assert_eq(kn_mpm_p2g(b, &err), KN_OK, "%s", err.msg);
  /* grid velocities are the affine field at the nodes */
  double gmax = 0;
  for (int i = 0; i < b->grid.n; i++) {
    double vi[3];
    kn_mat3_vec(B, b->grid.x + 3 * i, vi);
    for (int d = 0; d < 3; d++) gmax = fmax(gmax, fabs(vi[d] + a[d] - b->grid.v[3 * i + d]));
  }
  cr_assert(gmax < 1e-12, "grid velocity error %g", gmax);
  double* v0 = malloc(3 * sizeof(double) * (size_t)b->np);
  memcpy(v0, b->v, 3 * sizeof(double) * (size_t)b->np);
  cr_assert_eq(kn_mpm_advance(b, b->grid.v, 1e-4, &err), KN_OK, "%s", err.msg);
  double vmax = 0, cmax = 0;
  for (int p = 0; p < b->np; p++) {
    for (int d = 0; d < 3; d++) vmax = fmax(vmax, fabs(b->v[3 * p + d] - v0[3 * p + d]));
    for (int k = 0; k < 9; k++) cmax = fmax(cmax, fabs(b->C[9 * p + k] - B[k]));
  }
  cr_assert(vmax < 1e-12 && cmax < 1e-10, "round trip: |v_p error| %g, |C_p - B| %g", vmax, cmax);
  free(v0);
  kn_mpm_body_free(b);
}

Test(mpm_transfer, momentum_conservation) {
  kn_mpm_body* b = block(0.02, 27);
  unsigned s = 12345;
  for (int p = 0; p < b->np; p++) {
    for (int d = 0; d < 3; d++) s = s * 1103515245u + 12345u, b->v[3 * p + d] = ((s >> 8) % 2001) / 1000.0 - 1;
    for (int k = 0; k < 9; k++) s = s * 1103515245u + 12345u, b->C[9 * p + k] = (((s >> 8) % 2001) / 1000.0 - 1) * 20;
  }
  double P0[3], L0[3], P1[3], L1[3];
  double m = kn_mpm_body_mass(b, P0, L0);
  kn_error err;
  cr_assert_eq(kn_mpm_p2g(b, &err), KN_OK, "%s", err.msg);
  /* grid momenta equal the particles' (APIC spin included) */
  double Pg[3] = {0}, Lg[3] = {0}, mg = 0;
  for (int i = 0; i < b->grid.n; i++) {
    double mi = b->grid.mass[i], xv[3];
    mg += mi;
    kn_vec3_cross(b->grid.x + 3 * i, b->grid.v + 3 * i, xv);
    for (int d = 0; d < 3; d++) Pg[d] += mi * b->grid.v[3 * i + d], Lg[d] += mi * xv[d];
  }
  cr_assert(fabs(mg - m) < 1e-12 * m, "grid mass %.17g vs %.17g", mg, m);
  cr_assert_eq(kn_mpm_advance(b, b->grid.v, 1e-3, &err), KN_OK, "%s", err.msg);
  kn_mpm_body_mass(b, P1, L1);
  double pn = kn_vec3_norm(P0), ln = kn_vec3_norm(L0);
  for (int d = 0; d < 3; d++) {
    cr_assert(fabs(Pg[d] - P0[d]) < 1e-12 * pn, "P2G linear momentum [%d]: %g vs %g", d, Pg[d], P0[d]);
    cr_assert(fabs(Lg[d] - L0[d]) < 1e-12 * ln, "P2G angular momentum [%d]: %g vs %g", d, Lg[d], L0[d]);
    cr_assert(fabs(P1[d] - P0[d]) < 1e-12 * pn, "G2P linear momentum [%d]: %g vs %g", d, P1[d], P0[d]);
    cr_assert(fabs(L1[d] - L0[d]) < 1e-12 * ln, "G2P angular momentum [%d]: %g vs %g", d, L1[d], L0[d]);
  }
  /* deterministic node order: sorted (i, j, k) */
  for (int i = 1; i < b->grid.n; i++) {
    const int *u = b->grid.index + 3 * (i - 1), *v = b->grid.index + 3 * i;
    int lt = u[0] < v[0] || (u[0] == v[0] && (u[1] < v[1] || (u[1] == v[1] && u[2] < v[2])));
    cr_assert(lt, "nodes %d and %d out of order", i - 1, i);
  }
  /* particle weights: partition of unity over the active nodes */
  int nodes[27];
  double w[27];
  int k = kn_mpm_particle_weights(b, 7, nodes, w);
  double sw = 0;
  for (int j = 0; j < k; j++) sw += w[j];
  cr_assert(k > 0 && k <= 27 && fabs(sw - 1) < 1e-12, "particle 7: %d nodes, sum w %.17g", k, sw);
  kn_mpm_body_free(b);
}
