/* Squared distances of point–triangle and edge–edge pairs with their gradients and Hessians, the
 * distance case of each pair, and the edge–edge mollifier (IPC digest §6.1, §6.2, §6.4): the
 * kernels the barrier and continuous-penalty backends evaluate at every Newton iterate.
 *
 * A pair is a stencil of four vertices x = (x0, x1, x2, x3) (12 doubles): (p, t0, t1, t2) for a
 * point and a triangle, (a0, a1, b0, b1) for two edges. Its case names which sub-stencil is
 * closest (point–point, point–edge, point–plane or line–line) by vertex indices; the squared
 * distance of that sub-stencil is smooth, and its derivatives are scattered back to the 12
 * coordinates. */
#include <math.h>
#include <string.h>

#include "contact/contact.h"

/* kn_vec3_cross and kn_vec3_dot, the same arithmetic, local so that they inline: these kernels run
 * on every candidate pair of every evaluation (the calls were 6.7 % of the ipc FEM cube's run) */
static inline void cross(const double a[3], const double b[3], double c[3]) {
  double t0 = a[1] * b[2] - a[2] * b[1], t1 = a[2] * b[0] - a[0] * b[2], t2 = a[0] * b[1] - a[1] * b[0];
  c[0] = t0, c[1] = t1, c[2] = t2;
}
static inline double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void sub(const double a[3], const double b[3], double c[3]) {
  c[0] = a[0] - b[0], c[1] = a[1] - b[1], c[2] = a[2] - b[2];
}
// [a]x, the cross-product matrix, times s added into the 3x3 block at B (row stride ld)
static void add_skew(double* B, int ld, const double a[3], double s) {
  B[1] -= s * a[2], B[2] += s * a[1];
  B[ld] += s * a[2], B[ld + 2] -= s * a[0];
  B[2 * ld] -= s * a[1], B[2 * ld + 1] += s * a[0];
}

//---- cases ----

kn_dist_case kn_dist_point_triangle_case(const double x[12]) {
  const double *p = x, *t[3] = {x + 3, x + 6, x + 9};
  double e1[3], e2[3], n[3];
  sub(t[1], t[0], e1), sub(t[2], t[0], e2), cross(e1, e2, n);
  double sigma[3];
  for (int i = 0; i < 3; i++) {
    int j = (i + 1) % 3;
    double e[3], f[3], d[3];
    sub(t[j], t[i], e), cross(e, n, f), sub(p, t[i], d);
    sigma[i] = dot(e, d) / dot(e, e);
    double tau = dot(f, d) / dot(f, f);
    if (sigma[i] > 0 && sigma[i] < 1 && tau >= 0) return (kn_dist_case){KN_DIST_PE, {0, 1 + i, 1 + j, -1}};
  }
  /* sigma[0]: along t0t1, sigma[1]: t1t2, sigma[2]: t2t0 */
  if (sigma[0] <= 0 && sigma[2] >= 1) return (kn_dist_case){KN_DIST_PP, {0, 1, -1, -1}};
  if (sigma[1] <= 0 && sigma[0] >= 1) return (kn_dist_case){KN_DIST_PP, {0, 2, -1, -1}};
  if (sigma[2] <= 0 && sigma[1] >= 1) return (kn_dist_case){KN_DIST_PP, {0, 3, -1, -1}};
  return (kn_dist_case){KN_DIST_PT, {0, 1, 2, 3}};
}

kn_dist_case kn_dist_edge_edge_case(const double x[12]) {
  const double *a0 = x, *a1 = x + 3, *b0 = x + 6, *b1 = x + 9;
  double u[3], v[3], w[3], uv[3];
  sub(a1, a0, u), sub(b1, b0, v), sub(a0, b0, w), cross(u, v, uv);
  double A = dot(u, u), B = dot(u, v), C = dot(v, v), D = dot(u, w), E = dot(v, w), delta = A * C - B * B;
  double sN = B * E - C * D, tN, tD = delta;
  kn_dist_case c;
  /* PE(a_k, edge b) is point k against vertices 2, 3 */
  if (sN <= 0) {
    tN = E, tD = C, c = (kn_dist_case){KN_DIST_PE, {0, 2, 3, -1}};
  } else if (sN >= delta) {
    tN = E + B, tD = C, c = (kn_dist_case){KN_DIST_PE, {1, 2, 3, -1}};
  } else {
    tN = A * E - B * D, c = (kn_dist_case){KN_DIST_EE, {0, 1, 2, 3}};
    /* coplanar or nearly parallel: a point-edge case instead of the ill-conditioned line-line one */
    if (tN > 0 && tN < tD && (dot(uv, w) == 0 || dot(uv, uv) < 1e-20 * A * C)) {
      if (sN < delta / 2)
        tN = E, tD = C, c = (kn_dist_case){KN_DIST_PE, {0, 2, 3, -1}};
      else
        tN = E + B, tD = C, c = (kn_dist_case){KN_DIST_PE, {1, 2, 3, -1}};
    }
  }
  if (tN <= 0) { /* the closest point on b is b0 */
    if (-D <= 0) return (kn_dist_case){KN_DIST_PP, {0, 2, -1, -1}};
    if (-D >= A) return (kn_dist_case){KN_DIST_PP, {1, 2, -1, -1}};
    return (kn_dist_case){KN_DIST_PE, {2, 0, 1, -1}};
  }
  if (tN >= tD) { /* b1 */
    if (-D + B <= 0) return (kn_dist_case){KN_DIST_PP, {0, 3, -1, -1}};
    if (-D + B >= A) return (kn_dist_case){KN_DIST_PP, {1, 3, -1, -1}};
    return (kn_dist_case){KN_DIST_PE, {3, 0, 1, -1}};
  }
  return c;
}

//---- the smooth pieces, each over its own local variables ----

/* m = |e1 x e2|^2 over the local (q, e1, e2): its gradient gm (9) and Hessian Hm (81, if non-NULL):
 * dm/de1 = 2 e2 x n, dm/de2 = 2 n x e1, Hm = 2 Jn^T Jn + 2 [0 0 0; 0 0 -[n]; 0 [n] 0] with
 * Jn = [0, -[e2], [e1]] (§6.2) */
static void normal_sq(const double e1[3], const double e2[3], const double n[3], double gm[9], double Hm[81]) {
  double c1[3], c2[3];
  cross(e2, n, c1), cross(n, e1, c2);
  for (int k = 0; k < 3; k++) gm[k] = 0, gm[3 + k] = 2 * c1[k], gm[6 + k] = 2 * c2[k];
  if (!Hm) return;
  double Jn[27] = {0};
  add_skew(Jn + 3, 9, e2, -1), add_skew(Jn + 6, 9, e1, 1);
  for (int i = 0; i < 9; i++)
    for (int j = 0; j < 9; j++) {
      double t = 0;
      for (int k = 0; k < 3; k++) t += Jn[9 * k + i] * Jn[9 * k + j];
      Hm[9 * i + j] = 2 * t;
    }
  add_skew(Hm + 1 * 27 + 6, 9, n, -2), add_skew(Hm + 2 * 27 + 3, 9, n, 2);
}

/* s = r^2 / m with r = q . (e1 x e2), m = |e1 x e2|^2 over y = (q, e1, e2) (§6.2): gy (9; NULL: s alone), Hy (81) */
static double plane_kernel(const double q[3], const double e1[3], const double e2[3], double gy[9], double Hy[81]) {
  double n[3], c1[3], c2[3];
  cross(e1, e2, n);
  double r = dot(q, n), m = dot(n, n), s = r * r / m;
  if (!gy) return s; /* the distance alone */
  double gr[9], gm[9], Hm[81];
  memcpy(gr, n, sizeof n);
  cross(e2, q, c1), cross(q, e1, c2);
  memcpy(gr + 3, c1, sizeof c1), memcpy(gr + 6, c2, sizeof c2);
  normal_sq(e1, e2, n, gm, Hy ? Hm : NULL);
  for (int i = 0; i < 9; i++) gy[i] = 2 * r / m * gr[i] - r * r / (m * m) * gm[i];
  if (!Hy) return s;
  /* Hr: off-diagonal skew blocks */
  double Hr[81] = {0};
  add_skew(Hr + 0 * 27 + 3, 9, e2, -1), add_skew(Hr + 0 * 27 + 6, 9, e1, 1), add_skew(Hr + 1 * 27 + 6, 9, q, -1);
  add_skew(Hr + 1 * 27 + 0, 9, e2, 1), add_skew(Hr + 2 * 27 + 0, 9, e1, -1), add_skew(Hr + 2 * 27 + 3, 9, q, 1);
  for (int i = 0; i < 9; i++)
    for (int j = 0; j < 9; j++)
      Hy[9 * i + j] = 2 / m * gr[i] * gr[j] + 2 * r / m * Hr[9 * i + j] -
                      2 * r / (m * m) * (gr[i] * gm[j] + gm[i] * gr[j]) + 2 * r * r / (m * m * m) * gm[i] * gm[j] -
                      r * r / (m * m) * Hm[9 * i + j];
  return s;
}

/* point p, edge (e0, e1): s = |(e0 - p) x (e1 - p)|^2 / |e1 - e0|^2 over (p, e0, e1): g (9; NULL: s alone), H (81) */
static double edge_kernel(const double p[3], const double e0[3], const double e1[3], double g[9], double H[81]) {
  double u[3], v[3], c[3], e[3], du[3], dv[3];
  sub(e0, p, u), sub(e1, p, v), sub(e1, e0, e), cross(u, v, c);
  double N = dot(c, c), D = dot(e, e), s = N / D;
  if (!g) return s; /* the distance alone */
  cross(v, c, du), cross(c, u, dv);
  double gN[9], gD[9];
  for (int k = 0; k < 3; k++) {
    du[k] *= 2, dv[k] *= 2;
    gN[k] = -(du[k] + dv[k]), gN[3 + k] = du[k], gN[6 + k] = dv[k];
    gD[k] = 0, gD[3 + k] = -2 * e[k], gD[6 + k] = 2 * e[k];
  }
  for (int i = 0; i < 9; i++) g[i] = (gN[i] - s * gD[i]) / D;
  if (!H) return s;
  /* over (u, v): 2 Jc^T Jc + 2 [0 -[c]; [c] 0], Jc = [-[v], [u]]; then u = e0 - p, v = e1 - p */
  double Jc[18] = {0}, Huv[36] = {0}, HN[81] = {0};
  add_skew(Jc, 6, v, -1), add_skew(Jc + 3, 6, u, 1);
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) {
      double t = 0;
      for (int k = 0; k < 3; k++) t += Jc[6 * k + i] * Jc[6 * k + j];
      Huv[6 * i + j] = 2 * t;
    }
  add_skew(Huv + 3, 6, c, -2), add_skew(Huv + 18, 6, c, 2);
  static const double C[2][3] = {{-1, 1, 0}, {-1, 0, 1}}; /* u, v in terms of (p, e0, e1) */
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++)
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
          double w = C[i][a] * C[j][b];
          if (w == 0) continue;
          for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++) HN[9 * (3 * a + r) + 3 * b + k] += w * Huv[6 * (3 * i + r) + 3 * j + k];
        }
  for (int i = 0; i < 9; i++)
    for (int j = 0; j < 9; j++) {
      int bi = i / 3, bj = j / 3;
      double HD = bi && bj && i % 3 == j % 3 ? (bi == bj ? 2.0 : -2.0) : 0.0;
      H[9 * i + j] = (HN[9 * i + j] - g[i] * gD[j] - gD[i] * g[j] - s * HD) / D;
    }
  return s;
}

//---- a case over the 12 stencil coordinates ----

/* local blocks (nl of them) as combinations of the 4 stencil vertices: y_l = sum_v C[l][v] x_v;
 * gy, Hy => g (12), H (144) added */
static void scatter(int nl, const double C[3][4], const double* gy, const double* Hy, double* g, double* H) {
  for (int v = 0; v < 4; v++)
    for (int l = 0; l < nl; l++)
      if (C[l][v] != 0)
        for (int k = 0; k < 3; k++) g[3 * v + k] += C[l][v] * gy[3 * l + k];
  if (!H) return;
  int n = 3 * nl;
  for (int v = 0; v < 4; v++)
    for (int w = 0; w < 4; w++)
      for (int l = 0; l < nl; l++)
        for (int m = 0; m < nl; m++) {
          double c = C[l][v] * C[m][w];
          if (c == 0) continue;
          for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++) H[12 * (3 * v + r) + 3 * w + k] += c * Hy[n * (3 * l + r) + 3 * m + k];
        }
}

double kn_dist_eval(const double x[12], kn_dist_case c, double g[12], double H[144]) {
  double gl[12], Hl[144], gy[9], Hy[81], s;
  double C[3][4] = {{0}};
  int nl;
  const int* v = c.v;
  switch (c.kind) {
    case KN_DIST_PP: {
      double d[3];
      sub(x + 3 * v[0], x + 3 * v[1], d);
      s = dot(d, d);
      for (int k = 0; k < 3; k++) gy[k] = 2 * d[k];
      memset(Hy, 0, 9 * sizeof *Hy);
      Hy[0] = Hy[4] = Hy[8] = 2;
      C[0][v[0]] = 1, C[0][v[1]] = -1, nl = 1; /* y = x_a - x_b */
      break;
    }
    case KN_DIST_PE:
      s = edge_kernel(x + 3 * v[0], x + 3 * v[1], x + 3 * v[2], g || H ? gy : NULL, H ? Hy : NULL);
      C[0][v[0]] = 1, C[1][v[1]] = 1, C[2][v[2]] = 1, nl = 3;
      break;
    case KN_DIST_PT: { /* (p, t0, t1, t2): q = p - t0, e1 = t1 - t0, e2 = t2 - t0 */
      double q[3], e1[3], e2[3];
      sub(x, x + 3, q), sub(x + 6, x + 3, e1), sub(x + 9, x + 3, e2);
      s = plane_kernel(q, e1, e2, g || H ? gy : NULL, H ? Hy : NULL);
      C[0][0] = 1, C[0][1] = -1, C[1][2] = 1, C[1][1] = -1, C[2][3] = 1, C[2][1] = -1, nl = 3;
      break;
    }
    default: { /* EE (a0, a1, b0, b1): q = a0 - b0, e1 = a1 - a0, e2 = b1 - b0 */
      double q[3], e1[3], e2[3];
      sub(x, x + 6, q), sub(x + 3, x, e1), sub(x + 9, x + 6, e2);
      s = plane_kernel(q, e1, e2, g || H ? gy : NULL, H ? Hy : NULL);
      C[0][0] = 1, C[0][2] = -1, C[1][1] = 1, C[1][0] = -1, C[2][3] = 1, C[2][2] = -1, nl = 3;
      break;
    }
  }
  if (g || H) {
    memset(gl, 0, sizeof gl);
    if (H) memset(Hl, 0, sizeof Hl);
    scatter(nl, (const double(*)[4])C, gy, H ? Hy : NULL, gl, H ? Hl : NULL);
    if (g) memcpy(g, gl, sizeof gl);
    if (H) memcpy(H, Hl, sizeof Hl);
  }
  return s;
}

double kn_dist_edge_mollifier(const double x[12], double eps_x, double g[12], double H[144]) {
  double ea[3], eb[3], n[3];
  sub(x + 3, x, ea), sub(x + 9, x + 6, eb), cross(ea, eb, n);
  double c = dot(n, n);
  if (g) memset(g, 0, 12 * sizeof *g);
  if (H) memset(H, 0, 144 * sizeof *H);
  if (c >= eps_x) return 1.0;
  double t = 1 - c / eps_x, e = 1 - t * t, q1 = 2 / eps_x * t, q2 = -2 / (eps_x * eps_x);
  /* c is the plane kernel's m over its local (q, e1, e2) = (unused, ea, eb): dm/dea = 2 eb x n,
   * dm/deb = 2 n x ea, Hm = 2 Jn^T Jn + 2 [0 0 0; 0 0 -[n]; 0 [n] 0] (§6.2, §6.4) */
  double gy[9], Hy[81], gm[9], Hm[81];
  normal_sq(ea, eb, n, gm, Hm);
  for (int i = 0; i < 9; i++) {
    gy[i] = q1 * gm[i];
    for (int j = 0; j < 9; j++) Hy[9 * i + j] = q2 * gm[i] * gm[j] + q1 * Hm[9 * i + j];
  }
  /* ea = a1 - a0, eb = b1 - b0 */
  const double C[3][4] = {{0, 0, 0, 0}, {-1, 1, 0, 0}, {0, 0, -1, 1}};
  double gl[12] = {0}, Hl[144] = {0};
  scatter(3, C, gy, H ? Hy : NULL, gl, H ? Hl : NULL);
  if (g) memcpy(g, gl, sizeof gl);
  if (H) memcpy(H, Hl, sizeof Hl);
  return e;
}
