/* The scalar laws of implicit smooth friction (digest §3.3-3.5, §3.9). */
#include <math.h>
#include <string.h>

#include "smooth/smooth.h"

double kn_smooth_penalty(double d, double delta, double kappa, double* db, double* d2b) {
  if (d >= delta) {
    if (db) *db = 0;
    if (d2b) *d2b = 0;
    return 0;
  }
  double e = d - delta;
  if (db) *db = -3 * kappa / delta * e * e;
  if (d2b) *d2b = -6 * kappa / delta * e;
  return -kappa / delta * e * e * e;
}

double kn_smooth_kappa_factor(double d_min, double delta) {
  double r = (delta - d_min) / delta;
  return 4 * r * r;
}

double kn_smooth_transition(double v, double eps, double* ds, double* s_over_v) {
  if (v >= eps) {
    if (ds) *ds = 0;
    if (s_over_v) *s_over_v = 1 / v;
    return 1;
  }
  if (ds) *ds = 2 / eps - 2 * v / (eps * eps);
  if (s_over_v) *s_over_v = 2 / eps - v / (eps * eps);
  return 2 * v / eps - v * v / (eps * eps);
}

double kn_smooth_stribeck(double x, double* dg) {
  if (x >= 1) {
    if (dg) *dg = 0;
    return 0;
  }
  if (dg) *dg = 6 * x * (x - 1);
  return (2 * x + 1) * (x - 1) * (x - 1);
}

double kn_smooth_friction_magnitude(const kn_smooth_friction* f, double v, double lambda, double* dc,
                                    double* dc_dlambda, double* rho) {
  double ds, sv, dg;
  double s = kn_smooth_transition(v, f->eps, &ds, &sv), g = kn_smooth_stribeck(v / f->v_s, &dg);
  double mu = f->mu_d + (f->mu_s - f->mu_d) * g;
  if (dc) *dc = (f->mu_s - f->mu_d) * dg / f->v_s * s * lambda + mu * ds * lambda + f->mu_v;
  if (dc_dlambda) *dc_dlambda = mu * s;
  if (rho) *rho = mu * lambda * sv + f->mu_v;
  return mu * s * lambda + f->mu_v * v;
}

double kn_smooth_work_ideal_gas(double V, double V0, double P0) { return P0 * (V - V0 * (1 + log(V / V0))); }

double kn_smooth_work_constant_compressibility(double V, double V0, double kappa_v) {
  return (V0 - V * (1 - log(V / V0))) / kappa_v;
}

double kn_smooth_work_quadratic(double V, double V0, double kappa_v, double* dW, double* d2W) {
  if (dW) *dW = (V - V0) / (V0 * kappa_v);
  if (d2W) *d2W = 1 / (V0 * kappa_v);
  return (V - V0) * (V - V0) / (2 * V0 * kappa_v);
}

double kn_smooth_surface_volume(const double* x, int nvert, const int* tri, int ntri, double* dV) {
  if (dV) memset(dV, 0, 3 * (size_t)nvert * sizeof *dV);
  double V = 0;
  for (int t = 0; t < ntri; t++) {
    const int* f = tri + 3 * t;
    for (int k = 0; k < 3; k++) {
      /* V = sum x_a . (x_b x x_c) / 6 over triangles; dV/dx_a += x_b x x_c / 6, (a, b, c) cyclic */
      const double *a = x + 3 * f[k], *b = x + 3 * f[(k + 1) % 3], *c = x + 3 * f[(k + 2) % 3];
      double bc[3];
      kn_vec3_cross(b, c, bc);
      if (k == 0) V += kn_vec3_dot(a, bc) / 6;
      if (dV)
        for (int r = 0; r < 3; r++) dV[3 * f[k] + r] += bc[r] / 6;
    }
  }
  return V;
}
