/* Cantilever under gravity: static equilibrium (kn_fem_static_solve) against Euler-Bernoulli
 * w_tip = q L^4 / (8 E I), q = rho g b h, I = b h^3 / 12 (clamped end, uniform load).
 * L = 1 m, b = h = 0.1 m, E = 1e8 Pa, nu = 0 (no Poisson coupling, as in the beam theory),
 * rho = 1000 kg/m^3, g = 9.81: w = 0.0147150 m (1.5 % of L: small deflection). Linear tets lock
 * in bending, so the coarse meshes are stiff; the deflection must increase toward w with refinement. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "test_material_box.h"

static double tip_deflection(int nx, int nyz, kn_fem_model model, double* seconds) {
  kn_tet_mesh m;
  test_box_mesh(nx, nyz, nyz, 1.0, 0.1, 0.1, &m);
  kn_fem_material mat = kn_fem_material_default();
  mat.model = model;
  mat.youngs_modulus = 1e8;
  mat.poisson_ratio = 0.0;
  mat.density = 1000.0;
  kn_fem_body* b;
  kn_error err;
  cr_assert_eq(kn_fem_body_create(&m, &mat, "cantilever", &b, &err), KN_OK, "%s", err.msg);
  int nfixed = 0;
  double lo[3] = {-1, -1, -1}, hi[3] = {1e-9, 1, 1};
  cr_assert_eq(kn_fem_body_fix_box(b, lo, hi, &nfixed, &err), KN_OK);
  cr_assert_eq(nfixed, (nyz + 1) * (nyz + 1));
  double t0 = kn_wall_time();
  int iters = 0;
  cr_assert_eq(kn_fem_static_solve(b, NULL, &iters, &err), KN_OK, "%s", err.msg);
  *seconds = kn_wall_time() - t0;
  double w = 0;
  int n = 0;
  for (int i = 0; i < m.nvert; i++)
    if (m.X[3 * i] > 1.0 - 1e-9) {
      w += b->x[3 * i + 2] - m.X[3 * i + 2];
      n++;
    }
  kn_fem_body_free(b);
  test_box_mesh_free(&m);
  return -w / n;
}

Test(cantilever, euler_bernoulli_tip_deflection, .timeout = 120) {
  const double E = 1e8, I = 0.1 * 0.1 * 0.1 * 0.1 / 12.0, q = 1000.0 * 9.81 * 0.01;
  const double w_eb = q / (8.0 * E * I);
  const int nx[3] = {20, 40, 80}, nyz[3] = {2, 4, 8};
  double w[3];
  for (int k = 0; k < 3; k++) {
    double s;
    w[k] = tip_deflection(nx[k], nyz[k], KN_FEM_LINEAR_COROTATED, &s);
    printf("h = %.4f (%d x %d x %d cubes, %d tets): tip deflection %.6f m, Euler-Bernoulli %.6f m, ratio %.4f, solve %.2f s\n",
           1.0 / nx[k], nx[k], nyz[k], nyz[k], 6 * nx[k] * nyz[k] * nyz[k], w[k], w_eb, w[k] / w_eb, s);
  }
  cr_assert_gt(w[1], w[0]);
  cr_assert_gt(w[2], w[1]);
  cr_assert_lt(fabs(w[2] - w_eb), 0.05 * w_eb, "finest mesh: %g vs %g", w[2], w_eb);
  /* error O(h^2): Richardson extrapolation of the two finest meshes lands within 2 % of the beam
   * theory (the remaining difference is shear deformation, +0.8 % by Timoshenko, and 3D effects) */
  double w_inf = w[2] + (w[2] - w[1]) / 3.0;
  printf("Richardson extrapolation %.6f m, ratio %.4f\n", w_inf, w_inf / w_eb);
  cr_assert_lt(fabs(w_inf - w_eb), 0.02 * w_eb);
}

/* the nonlinear models through the Newton loop: at 1.5 % deflection they agree with the linear
 * corotated model on the same mesh to 1 % */
Test(cantilever, nonlinear_models_agree_at_small_deflection, .timeout = 120) {
  double s, w_lc = tip_deflection(40, 4, KN_FEM_LINEAR_COROTATED, &s);
  double w_co = tip_deflection(40, 4, KN_FEM_COROTATED, &s);
  double w_nh = tip_deflection(40, 4, KN_FEM_NEOHOOKEAN, &s);
  printf("h = 0.025: linear corotated %.6f, corotated %.6f, neo-Hookean %.6f m\n", w_lc, w_co, w_nh);
  cr_assert_lt(fabs(w_co - w_lc), 0.01 * w_lc);
  cr_assert_lt(fabs(w_nh - w_lc), 0.01 * w_lc);
}
