/* Continuous collision detection of a point-triangle or edge-edge pair moving linearly over a
 * step, by additive CCD (Li et al. 2021; IPC digest §7.3-7.4), and the static edge-triangle
 * intersection test that audits every accepted iterate (§7.4). ACCD advances the pair by
 * conservative fractions c d / l_p of the step, d the current distance and l_p a bound on the
 * relative motion of the closest points, and reports an impact at the last time whose distance is
 * still >= (1 - c) d_0: never a time past the first contact, and never closer than (1 - c) of the
 * starting distance. It uses the pair distances of pair_distance.c, so it needs no root finding. */
#include <math.h>
#include <string.h>

#include "contact/contact.h"

// the pair's distance (with thickness xi: (d^2 - xi^2) / (d + xi))
static double pair_distance(const double x[12], int edge_edge, double xi) {
  kn_dist_case c = edge_edge ? kn_dist_edge_edge_case(x) : kn_dist_point_triangle_case(x);
  double s = kn_dist_eval(x, c, NULL, NULL);
  if (edge_edge && s <= xi * xi) {
    /* far, nearly parallel edges may round to 0: the nearest pair of endpoints instead */
    s = INFINITY;
    for (int i = 0; i < 2; i++)
      for (int j = 2; j < 4; j++) {
        double d2 = 0;
        for (int k = 0; k < 3; k++) d2 += (x[3 * i + k] - x[3 * j + k]) * (x[3 * i + k] - x[3 * j + k]);
        s = fmin(s, d2);
      }
  }
  double d = sqrt(s);
  return xi > 0 ? (s - xi * xi) / (d + xi) : d;
}

int kn_pair_ccd(const double x[12], const double dx[12], int edge_edge, double c, double xi, double* toi) {
  /* relative motion: the mean displacement removed, then a bound on the closest points' speed */
  double rel[12], mean[3] = {0, 0, 0};
  for (int v = 0; v < 4; v++)
    for (int k = 0; k < 3; k++) mean[k] += dx[3 * v + k] / 4;
  for (int v = 0; v < 4; v++)
    for (int k = 0; k < 3; k++) rel[3 * v + k] = dx[3 * v + k] - mean[k];
  double n[4];
  for (int v = 0; v < 4; v++) n[v] = kn_vec3_norm(rel + 3 * v);
  double lp = edge_edge ? fmax(n[0], n[1]) + fmax(n[2], n[3]) : n[0] + fmax(n[1], fmax(n[2], n[3]));
  *toi = 1.0;
  if (!(lp > 0)) return 0;
  double y[12];
  memcpy(y, x, sizeof y);
  double d = pair_distance(y, edge_edge, xi), gap = (1 - c) * d, t = 0;
  for (int it = 0; it < 100000; it++) {
    double tl = c * d / lp;
    for (int k = 0; k < 12; k++) y[k] += tl * rel[k];
    d = pair_distance(y, edge_edge, xi);
    if (t > 0 && d < gap) {
      *toi = t;
      return 1;
    }
    t += tl;
    if (t > 1) return 0;
  }
  *toi = t; /* no progress: report an impact where it stalled, conservatively */
  return 1;
}

// orientation of d against the plane (a, b, c): sign of the signed volume
static double orient(const double a[3], const double b[3], const double c[3], const double d[3]) {
  double u[3], v[3], w[3];
  for (int k = 0; k < 3; k++) u[k] = b[k] - a[k], v[k] = c[k] - a[k], w[k] = d[k] - a[k];
  return u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) + u[2] * (v[0] * w[1] - v[1] * w[0]);
}

int kn_edge_triangle_intersect(const double e0[3], const double e1[3], const double t0[3], const double t1[3],
                               const double t2[3]) {
  double s0 = orient(t0, t1, t2, e0), s1 = orient(t0, t1, t2, e1);
  if ((s0 > 0 && s1 > 0) || (s0 < 0 && s1 < 0) || (s0 == 0 && s1 == 0)) return 0;
  /* the segment crosses the plane: inside the triangle when it passes each edge on the same side */
  double a = orient(e0, e1, t0, t1), b = orient(e0, e1, t1, t2), c = orient(e0, e1, t2, t0);
  return (a >= 0 && b >= 0 && c >= 0) || (a <= 0 && b <= 0 && c <= 0);
}
