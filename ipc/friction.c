/* IPC's lagged friction of one pair: its tangent basis per distance case (digest §5.5) and the
 * potential chi f0(|u|) in the pair's tangential displacement u with its PSD-projected 2 x 2
 * Hessian (§5.4). Distance cases as contact/contact.h's kn_dist_case (kind, v). */
#include <math.h>
#include <string.h>

#include "ipc/ipc.h"

static void sub3(const double* a, const double* b, double* c) { c[0] = a[0] - b[0], c[1] = a[1] - b[1], c[2] = a[2] - b[2]; }
static void normalize(double a[3]) {
  double n = kn_vec3_norm(a);
  for (int k = 0; k < 3; k++) a[k] /= n;
}

enum { PP = 0, PE = 1, PT = 2, EE = 3 }; /* kn_dist_kind's values */

void kn_ipc_tangent_basis(const double x[12], int edge_edge, int kind, const int v[4], double T[24]) {
  double P1[3], P2[3], gamma[4] = {0, 0, 0, 0};
  const double* X[4] = {x, x + 3, x + 6, x + 9};
  if (kind == PT && !edge_edge) {
    double e1[3], e2[3], q[3], n[3];
    sub3(X[2], X[1], e1), sub3(X[3], X[1], e2), sub3(X[0], X[1], q);
    double A = kn_vec3_dot(e1, e1), B = kn_vec3_dot(e1, e2), C = kn_vec3_dot(e2, e2);
    double r1 = kn_vec3_dot(e1, q), r2 = kn_vec3_dot(e2, q), det = A * C - B * B;
    double b1 = (C * r1 - B * r2) / det, b2 = (A * r2 - B * r1) / det;
    memcpy(P1, e1, sizeof P1), normalize(P1);
    kn_vec3_cross(e1, e2, n), kn_vec3_cross(n, e1, P2), normalize(P2);
    gamma[0] = 1, gamma[1] = -(1 - b1 - b2), gamma[2] = -b1, gamma[3] = -b2;
  } else if (kind == EE) {
    double ea[3], eb[3], w[3], n[3];
    sub3(X[1], X[0], ea), sub3(X[3], X[2], eb), sub3(X[0], X[2], w);
    double A = kn_vec3_dot(ea, ea), B = -kn_vec3_dot(ea, eb), C = kn_vec3_dot(eb, eb);
    double r1 = -kn_vec3_dot(ea, w), r2 = kn_vec3_dot(eb, w), det = A * C - B * B;
    double g1 = (C * r1 - B * r2) / det, g2 = (A * r2 - B * r1) / det;
    memcpy(P1, ea, sizeof P1), normalize(P1);
    kn_vec3_cross(ea, eb, n), kn_vec3_cross(n, ea, P2), normalize(P2);
    gamma[0] = 1 - g1, gamma[1] = g1, gamma[2] = -(1 - g2), gamma[3] = -g2;
  } else if (kind == PE) { /* point v[0], edge (v[1], v[2]) */
    double e[3], d[3];
    sub3(X[v[2]], X[v[1]], e), sub3(X[v[0]], X[v[1]], d);
    double eta = kn_vec3_dot(d, e) / kn_vec3_dot(e, e);
    memcpy(P1, e, sizeof P1), normalize(P1);
    kn_vec3_cross(e, d, P2), normalize(P2);
    gamma[v[0]] = 1, gamma[v[1]] = -(1 - eta), gamma[v[2]] = -eta;
  } else { /* PP: v[0], v[1] */
    double dl[3], ax[3] = {1, 0, 0}, ay[3] = {0, 1, 0}, cx[3], cy[3];
    sub3(X[v[1]], X[v[0]], dl);
    kn_vec3_cross(ax, dl, cx), kn_vec3_cross(ay, dl, cy);
    memcpy(P1, kn_vec3_norm(cx) >= kn_vec3_norm(cy) ? cx : cy, sizeof P1), normalize(P1);
    kn_vec3_cross(dl, P1, P2), normalize(P2);
    gamma[v[0]] = 1, gamma[v[1]] = -1;
  }
  /* T = Gamma^T P: vertex j's 3 rows are gamma_j (P1, P2) */
  for (int j = 0; j < 4; j++)
    for (int r = 0; r < 3; r++) T[2 * (3 * j + r)] = gamma[j] * P1[r], T[2 * (3 * j + r) + 1] = gamma[j] * P2[r];
}

double kn_ipc_friction_local(const double u[2], double chi, double eps, double g[2], double H[4]) {
  double y = sqrt(u[0] * u[0] + u[1] * u[1]), df1, f1y;
  kn_ipc_friction_f1(y, eps, &df1, &f1y);
  if (g) g[0] = chi * f1y * u[0], g[1] = chi * f1y * u[1];
  if (H) {
    /* chi [f1/y I + (f1' y - f1) / y^3 u u^T]; at y = 0 the limit chi 2 / eps I */
    double c = y > 0 ? (df1 * y - f1y * y) / (y * y * y) : 0.0;
    double h[4] = {f1y + c * u[0] * u[0], c * u[0] * u[1], c * u[0] * u[1], f1y + c * u[1] * u[1]};
    /* PSD projection of the symmetric 2 x 2 (closed-form eigen-decomposition) */
    double m = 0.5 * (h[0] + h[3]), d = sqrt(0.25 * (h[0] - h[3]) * (h[0] - h[3]) + h[1] * h[1]);
    double l1 = m + d, l2 = m - d;
    if (l2 < 0) {
      double vx, vy; /* eigenvector of l1 */
      if (fabs(h[1]) > 0) vx = h[1], vy = l1 - h[0];
      else vx = h[0] >= h[3] ? 1 : 0, vy = h[0] >= h[3] ? 0 : 1;
      double nv = sqrt(vx * vx + vy * vy);
      vx /= nv, vy /= nv;
      double p = l1 > 0 ? l1 : 0;
      h[0] = p * vx * vx, h[1] = h[2] = p * vx * vy, h[3] = p * vy * vy;
    }
    for (int k = 0; k < 4; k++) H[k] = chi * h[k];
  }
  return chi * kn_ipc_friction_f0(y, eps);
}
