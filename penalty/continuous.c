/* The continuous penalty force of one pair over a step (continuous-penalty-forces.md §3-4). */
#include <math.h>
#include <string.h>

#include "penalty/penalty.h"

static void sub3(const double* a, const double* b, double* c) { c[0] = a[0] - b[0], c[1] = a[1] - b[1], c[2] = a[2] - b[2]; }

// e1, e2, r of the stencil at start (x0) and their changes over the step (d*)
static void frames(const kn_cpf_stencil* st, double e1[3], double e2[3], double r[3], double de1[3], double de2[3],
                   double dr[3]) {
  const double* x0 = st->x0;
  double u[12];
  for (int k = 0; k < 12; k++) u[k] = st->x1[k] - x0[k];
  if (!st->edge_edge) { /* (p, a, b, c): e1 = b - a, e2 = c - a, r = p - a */
    sub3(x0 + 6, x0 + 3, e1), sub3(x0 + 9, x0 + 3, e2), sub3(x0, x0 + 3, r);
    sub3(u + 6, u + 3, de1), sub3(u + 9, u + 3, de2), sub3(u, u + 3, dr);
  } else { /* (a, b, c, d): e1 = b - a, e2 = d - c, r = a - c */
    sub3(x0 + 3, x0, e1), sub3(x0 + 9, x0 + 6, e2), sub3(x0, x0 + 6, r);
    sub3(u + 3, u, de1), sub3(u + 9, u + 6, de2), sub3(u, u + 6, dr);
  }
}

void kn_cpf_cubic(const kn_cpf_stencil* st, double f[4], double m[9]) {
  double e1[3], e2[3], r[3], de1[3], de2[3], dr[3], a[3], b[3];
  frames(st, e1, e2, r, de1, de2, dr);
  kn_vec3_cross(e1, e2, m);
  kn_vec3_cross(de1, e2, a), kn_vec3_cross(e1, de2, b);
  for (int k = 0; k < 3; k++) m[3 + k] = a[k] + b[k];
  kn_vec3_cross(de1, de2, m + 6);
  f[0] = kn_vec3_dot(m, r);
  f[1] = kn_vec3_dot(m + 3, r) + kn_vec3_dot(m, dr);
  f[2] = kn_vec3_dot(m + 6, r) + kn_vec3_dot(m + 3, dr);
  f[3] = kn_vec3_dot(m + 6, dr);
}

static double poly(const double f[4], double s) { return ((f[3] * s + f[2]) * s + f[1]) * s + f[0]; }

// the root of f in [lo, hi] where f changes sign, by bisection to the last bit
static double bisect(const double f[4], double lo, double hi) {
  double flo = poly(f, lo);
  for (int it = 0; it < 200; it++) {
    double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    double fm = poly(f, mid);
    if (fm == 0) return mid;
    if ((fm < 0) == (flo < 0))
      lo = mid, flo = fm;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

int kn_cpf_roots(const double f[4], double roots[3]) {
  /* split [0, 1] at the critical points (roots of f' = f1 + 2 f2 s + 3 f3 s^2): f is monotonic between */
  double cut[4] = {0}, a = 3 * f[3], b = 2 * f[2], c = f[1];
  int nc = 1;
  if (a != 0) {
    double disc = b * b - 4 * a * c;
    if (disc >= 0) {
      double q = -0.5 * (b + copysign(sqrt(disc), b)), r1 = q / a, r2 = q != 0 ? c / q : r1;
      double lo = fmin(r1, r2), hi = fmax(r1, r2);
      if (lo > 0 && lo < 1) cut[nc++] = lo;
      if (hi > 0 && hi < 1 && hi != lo) cut[nc++] = hi;
    }
  } else if (b != 0) {
    double s = -c / b;
    if (s > 0 && s < 1) cut[nc++] = s;
  }
  cut[nc++] = 1;
  int n = 0;
  for (int i = 0; i + 1 < nc; i++) {
    double lo = cut[i], hi = cut[i + 1], flo = poly(f, lo), fhi = poly(f, hi);
    if (flo == 0 && (n == 0 || roots[n - 1] != lo)) roots[n++] = lo;
    if ((flo < 0 && fhi > 0) || (flo > 0 && fhi < 0)) roots[n++] = bisect(f, lo, hi);
    if (fhi == 0 && i + 2 == nc && n < 3) roots[n++] = hi;
    if (n == 3) break;
  }
  return n;
}

// x(s) of vertex v
static void at(const kn_cpf_stencil* st, int v, double s, double x[3]) {
  for (int k = 0; k < 3; k++) x[k] = st->x0[3 * v + k] + s * (st->x1[3 * v + k] - st->x0[3 * v + k]);
}

/* the features at s meet inside: vertex-face, p's barycentric coordinates in (a, b, c) >= -eps;
 * edge-edge, the closest points' parameters in [-eps, 1 + eps]; the weights in w */
static int inside(const kn_cpf_stencil* st, double s, double eps, double w[4]) {
  double x[4][3];
  for (int v = 0; v < 4; v++) at(st, v, s, x[v]);
  double e1[3], e2[3], q[3];
  if (!st->edge_edge) {
    sub3(x[2], x[1], e1), sub3(x[3], x[1], e2), sub3(x[0], x[1], q);
    double A = kn_vec3_dot(e1, e1), B = kn_vec3_dot(e1, e2), C = kn_vec3_dot(e2, e2);
    double d1 = kn_vec3_dot(e1, q), d2 = kn_vec3_dot(e2, q), det = A * C - B * B;
    if (!(det > 0)) return 0;
    double wb = (C * d1 - B * d2) / det, wc = (A * d2 - B * d1) / det, wa = 1 - wb - wc;
    w[0] = 1, w[1] = wa, w[2] = wb, w[3] = wc;
    return wa >= -eps && wb >= -eps && wc >= -eps;
  }
  /* closest points of the segments a-b and c-d (parallel: the midpoint of the overlap along a-b) */
  sub3(x[1], x[0], e1), sub3(x[3], x[2], e2), sub3(x[0], x[2], q);
  double A = kn_vec3_dot(e1, e1), B = kn_vec3_dot(e1, e2), C = kn_vec3_dot(e2, e2);
  double D = kn_vec3_dot(e1, q), E = kn_vec3_dot(e2, q), det = A * C - B * B, alpha, beta;
  if (det > 1e-14 * A * C) {
    alpha = (B * E - C * D) / det, beta = (A * E - B * D) / det;
  } else {
    alpha = 0.5, beta = C > 0 ? (B * alpha + E) / C : 0;
  }
  w[0] = 1 - alpha, w[1] = alpha, w[2] = 1 - beta, w[3] = beta;
  return alpha >= -eps && alpha <= 1 + eps && beta >= -eps && beta <= 1 + eps;
}

int kn_cpf_first_contact(const kn_cpf_stencil* st, double eps, kn_cpf_pair* pair, double* s_star) {
  double f[4], m[9], roots[3];
  kn_cpf_cubic(st, f, m);
  int n = kn_cpf_roots(f, roots);
  for (int i = 0; i < n; i++) {
    double w[4];
    if (!inside(st, roots[i], eps, w)) continue;
    /* the penetrated side is the opposite of the side the feature approached from */
    double prev = i ? roots[i - 1] : 0, fa = poly(f, 0.5 * (prev + roots[i]));
    if (fa == 0) continue; /* a tangent touch: no interval */
    pair->sigma = fa > 0 ? -1 : 1;
    memcpy(pair->w, w, sizeof pair->w);
    *s_star = roots[i];
    return 1;
  }
  return 0;
}

int kn_cpf_force(const kn_cpf_stencil* st, const kn_cpf_pair* pair, double s_start, double k, double F[12]) {
  double f[4], m[9], roots[3], cut[5];
  kn_cpf_cubic(st, f, m);
  memset(F, 0, 12 * sizeof *F);
  /* L_k^2 = the integral of |m(s)|^2 over the whole step (power form, §4.2) */
  const double *m0 = m, *m1 = m + 3, *m2 = m + 6;
  double L2 = kn_vec3_dot(m0, m0) + kn_vec3_dot(m0, m1) + (kn_vec3_dot(m1, m1) + 2 * kn_vec3_dot(m0, m2)) / 3 +
              kn_vec3_dot(m1, m2) / 2 + kn_vec3_dot(m2, m2) / 5;
  int n = kn_cpf_roots(f, roots), nc = 0;
  cut[nc++] = s_start;
  for (int i = 0; i < n; i++)
    if (roots[i] > s_start && roots[i] < 1) cut[nc++] = roots[i];
  cut[nc++] = 1;
  double J[3] = {0, 0, 0};
  static const double gx[3] = {-0.7745966692414834, 0.0, 0.7745966692414834}, gw[3] = {5.0 / 9, 8.0 / 9, 5.0 / 9};
  for (int i = 0; i + 1 < nc; i++) {
    double ta = cut[i], tb = cut[i + 1];
    if (!(tb > ta) || !(pair->sigma * poly(f, 0.5 * (ta + tb)) > 0)) continue;
    for (int g = 0; g < 3; g++) {
      double s = 0.5 * (ta + tb) + 0.5 * (tb - ta) * gx[g], fs = poly(f, s), wgt = gw[g] * 0.5 * (tb - ta);
      for (int c = 0; c < 3; c++) J[c] += wgt * fs * (m0[c] + s * (m1[c] + s * m2[c]));
    }
  }
  double Fp[3];
  for (int c = 0; c < 3; c++) Fp[c] = L2 > 0 ? -k / L2 * J[c] : 0;
  /* vertex-face: p gets F_p, the face -w F_p; edge-edge: edge 1 +w F_p, edge 2 -w F_p */
  double sign[4] = {1, -1, -1, -1};
  if (st->edge_edge) sign[1] = 1;
  for (int v = 0; v < 4; v++)
    for (int c = 0; c < 3; c++) F[3 * v + c] = sign[v] * pair->w[v] * Fp[c];
  return pair->sigma * poly(f, 1.0) > 0;
}
