/* The continuous penalty force of one pair with its Jacobian in the end positions, and the ablation
 * modes of continuous-penalty-forces.md §5.6 (cpf with L_k, cpf with the exact normalizer, dpf on
 * the CCD pair at s = 1), for the implicit use of §5.5 option 2: the backend's Newton solve moves the
 * end positions x1 = x0 + dt J v, the pair (weights, side, start) stays frozen, the intervals are
 * re-cut at the roots of f at each iterate (the Leibniz terms vanish there, §4.9). The paper's mean
 * over the path (kn_cpf_force_jacobian) and the implicit step's, weighted by 2 s
 * (kn_cpf_impulse_jacobian, penalty.h: the mean leaves a stiff pair's period-2 mode undamped). */
#include <math.h>
#include <string.h>

#include "penalty/penalty.h"

static double poly(const double f[4], double s) { return ((f[3] * s + f[2]) * s + f[1]) * s + f[0]; }

/* e1, e2, r of the stencil at s, and per vertex j the coefficients of x_j in them (de1/dx_j,
 * de2/dx_j, dr/dx_j: -1, 0 or 1; §3.2, §3.3) */
static void frames_at(const kn_cpf_stencil* st, double s, double e1[3], double e2[3], double r[3]) {
  double x[4][3];
  for (int v = 0; v < 4; v++)
    for (int k = 0; k < 3; k++) x[v][k] = st->x0[3 * v + k] + s * (st->x1[3 * v + k] - st->x0[3 * v + k]);
  for (int k = 0; k < 3; k++) {
    if (!st->edge_edge) /* (p, a, b, c) */
      e1[k] = x[2][k] - x[1][k], e2[k] = x[3][k] - x[1][k], r[k] = x[0][k] - x[1][k];
    else /* (a, b, c, d) */
      e1[k] = x[1][k] - x[0][k], e2[k] = x[3][k] - x[2][k], r[k] = x[0][k] - x[2][k];
  }
}
static const double coef_vf[4][3] = {{0, 0, 1}, {-1, -1, -1}, {1, 0, 0}, {0, 1, 0}};
static const double coef_ee[4][3] = {{-1, 0, 1}, {1, 0, 0}, {0, -1, -1}, {0, 1, 0}};

// out (3 x 3, row-major) += c [e]x, the matrix of y -> e x y
static void add_skew(double out[9], double c, const double e[3]) {
  out[1] -= c * e[2], out[2] += c * e[1], out[3] += c * e[2], out[5] -= c * e[0], out[6] -= c * e[1], out[7] += c * e[0];
}

/* dm/dx_j(s) (9, row-major: column b is dm/dx_{j,b}) and grad_{x_j} f(s), at positions x(s) */
static void derivs(const double cf[3], const double e1[3], const double e2[3], const double r[3], const double m[3],
                   double dm[9], double gf[3]) {
  double e2r[3], re1[3];
  kn_vec3_cross(e2, r, e2r), kn_vec3_cross(r, e1, re1);
  memset(dm, 0, 9 * sizeof *dm);
  add_skew(dm, -cf[0], e2), add_skew(dm, cf[1], e1); /* d(e1 x e2) = de1 x e2 + e1 x de2 */
  for (int k = 0; k < 3; k++) gf[k] = cf[0] * e2r[k] + cf[1] * re1[k] + cf[2] * m[k];
}

/* the force in mode, its path average weighted by w(s) = 1 (the paper's mean) or, weighted, 2 s (the
 * implicit step's: kn_cpf_impulse_jacobian) */
static int force_jacobian(const kn_cpf_stencil* st, const kn_cpf_pair* pair, double s_start, double k, kn_cpf_mode mode,
                          int weighted, double F[12], double dF[144], double* stiff) {
  double f[4], m[9], roots[3], cut[5];
  kn_cpf_cubic(st, f, m);
  const double *m0 = m, *m1 = m + 3, *m2 = m + 6;
  const double(*cf)[3] = st->edge_edge ? coef_ee : coef_vf;
  double L2 = kn_vec3_dot(m0, m0) + kn_vec3_dot(m0, m1) + (kn_vec3_dot(m1, m1) + 2 * kn_vec3_dot(m0, m2)) / 3 +
              kn_vec3_dot(m1, m2) / 2 + kn_vec3_dot(m2, m2) / 5;
  static const double gx[3] = {-0.7745966692414834, 0.0, 0.7745966692414834}, gw[3] = {5.0 / 9, 8.0 / 9, 5.0 / 9};
  static const double gx4[4] = {-0.8611363115940526, -0.3399810435848563, 0.3399810435848563, 0.8611363115940526},
                      gw4[4] = {0.3478548451374538, 0.6521451548625461, 0.6521451548625461, 0.3478548451374538};
  /* the quadrature nodes: 3-point Gauss-Legendre per penetration interval (exact for L_k's degree-5
   * integrand; 4-point for the weighted one's degree 6), 8 panels of it for the exact normalizer's
   * rational one (§4.7), s = 1 for dpf_ccd */
  weighted = weighted && mode != KN_CPF_DPF_CCD;
  const int ng = weighted ? 4 : 3;
  const double *qx = weighted ? gx4 : gx, *qw = weighted ? gw4 : gw;
  double ns[4 * 8 * 4], nw[4 * 8 * 4];
  int nn = 0;
  if (mode == KN_CPF_DPF_CCD) {
    if (s_start < 1 && pair->sigma * poly(f, 1.0) > 0) ns[nn] = 1, nw[nn++] = 1;
  } else {
    int n = kn_cpf_roots(f, roots), nc = 0, panels = mode == KN_CPF_EXACT ? 8 : 1;
    cut[nc++] = s_start;
    for (int i = 0; i < n; i++)
      if (roots[i] > s_start && roots[i] < 1) cut[nc++] = roots[i];
    cut[nc++] = 1;
    for (int i = 0; i + 1 < nc; i++) {
      double ta = cut[i], tb = cut[i + 1];
      if (!(tb > ta) || !(pair->sigma * poly(f, 0.5 * (ta + tb)) > 0)) continue;
      double hp = (tb - ta) / panels;
      for (int p = 0; p < panels; p++)
        for (int g = 0; g < ng; g++) {
          double a = ta + p * hp;
          ns[nn] = a + 0.5 * hp * (1 + qx[g]), nw[nn] = 0.5 * hp * qw[g];
          if (weighted) nw[nn] *= 2 * ns[nn];
          nn++;
        }
    }
  }
  double sgn[4] = {1, -1, -1, -1};
  if (st->edge_edge) sgn[1] = 1;
  double H[3] = {0, 0, 0}, dH[36] = {0}; /* the integral of f m / N, and its derivative in x1 (3 x 12) */
  double beta = 0;
  for (int q = 0; q < nn; q++) {
    double s = ns[q], wq = nw[q], e1[3], e2[3], r[3], ms[3], fs = poly(f, s);
    for (int c = 0; c < 3; c++) ms[c] = m0[c] + s * (m1[c] + s * m2[c]);
    double N = mode == KN_CPF_LK ? L2 : kn_vec3_dot(ms, ms);
    if (!(N > 0)) continue;
    beta += wq * (mode == KN_CPF_DPF_CCD ? 1 : s);
    for (int c = 0; c < 3; c++) H[c] += wq * fs * ms[c] / N;
    if (!dF) continue;
    frames_at(st, s, e1, e2, r);
    for (int j = 0; j < 4; j++) {
      double dm[9], gf[3], mdm[3] = {0, 0, 0};
      derivs(cf[j], e1, e2, r, ms, dm, gf);
      if (mode != KN_CPF_LK) /* d(1/|m|^2) = -2 m^T dm / |m|^4 */
        for (int b = 0; b < 3; b++) mdm[b] = ms[0] * dm[b] + ms[1] * dm[3 + b] + ms[2] * dm[6 + b];
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
          dH[12 * a + 3 * j + b] += wq * s * (ms[a] * gf[b] + fs * dm[3 * a + b] - 2 * fs * ms[a] * mdm[b] / N) / N;
    }
  }
  double Fp[3];
  for (int c = 0; c < 3; c++) Fp[c] = -k * H[c];
  if (F)
    for (int v = 0; v < 4; v++)
      for (int c = 0; c < 3; c++) F[3 * v + c] = sgn[v] * pair->w[v] * Fp[c];
  if (dF) {
    double dFp[36];
    for (int i = 0; i < 36; i++) dFp[i] = -k * dH[i];
    if (mode == KN_CPF_LK && nn > 0 && L2 > 0) {
      /* L_k^2 = the integral of |m|^2 over [0, 1]: d(1/L2) = -dL2 / L2^2, dL2/dx_j = 2 int s dm^T m */
      for (int g = 0; g < 3; g++) {
        double s = 0.5 * (1 + gx[g]), wq = 0.5 * gw[g], e1[3], e2[3], r[3], ms[3];
        for (int c = 0; c < 3; c++) ms[c] = m0[c] + s * (m1[c] + s * m2[c]);
        frames_at(st, s, e1, e2, r);
        for (int j = 0; j < 4; j++) {
          double dm[9], gf[3];
          derivs(cf[j], e1, e2, r, ms, dm, gf);
          for (int b = 0; b < 3; b++) {
            double dL2 = 2 * wq * s * (ms[0] * dm[b] + ms[1] * dm[3 + b] + ms[2] * dm[6 + b]);
            for (int a = 0; a < 3; a++) dFp[12 * a + 3 * j + b] += k * H[a] * dL2 / L2;
          }
        }
      }
    }
    for (int v = 0; v < 4; v++)
      for (int a = 0; a < 3; a++)
        for (int col = 0; col < 12; col++) dF[12 * (3 * v + a) + col] = sgn[v] * pair->w[v] * dFp[12 * a + col];
  }
  if (stiff) *stiff = beta;
  return pair->sigma * poly(f, 1.0) > 0;
}

int kn_cpf_force_jacobian(const kn_cpf_stencil* st, const kn_cpf_pair* pair, double s_start, double k, kn_cpf_mode mode,
                          double F[12], double dF[144], double* stiff) {
  return force_jacobian(st, pair, s_start, k, mode, 0, F, dF, stiff);
}

int kn_cpf_impulse_jacobian(const kn_cpf_stencil* st, const kn_cpf_pair* pair, double s_start, double k,
                            kn_cpf_mode mode, double F[12], double dF[144], double* stiff) {
  return force_jacobian(st, pair, s_start, k, mode, 1, F, dF, stiff);
}
