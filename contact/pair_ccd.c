/* Continuous collision detection of a point-triangle or edge-edge pair moving linearly over a
 * step, by additive CCD (Li et al. 2021; IPC digest §7.3-7.4), and the static edge-triangle
 * intersection test that audits every accepted iterate (§7.4). ACCD advances the pair by
 * conservative fractions c d / l of the step, d the current distance and l a bound on the rate at
 * which the motion can close it, and reports an impact at the last time whose distance is still
 * >= (1 - c) d_0: never a time past the first contact, and never closer than (1 - c) of the
 * starting distance. It uses the pair distances of pair_distance.c, so it needs no root finding.
 * l is the smaller of ACCD's l_p (the closest points' relative speed bound) and the closing rate
 * along the closest points' direction n (separating_rate): a pair sliding past another at a tiny
 * distance closes nothing along n, where l_p allowed steps of c d / l_p only (the twisted rods at
 * h 1 s: an edge-edge pair 1.4e-11 m apart sliding at 1.4e-4 m a step exhausted the 100000
 * sub-steps at t = 0.005, and Newton crawled at that alpha). */
#include <math.h>
#include <string.h>

#include "contact/contact.h"

// the pair's distance (with thickness xi: (d^2 - xi^2) / (d + xi)); the gradient of d^2 in g (NaN
// where the endpoints' fallback gave d)
static double pair_distance(const double x[12], int edge_edge, double xi, double g[12]) {
  kn_dist_case c = edge_edge ? kn_dist_edge_edge_case(x) : kn_dist_point_triangle_case(x);
  double s = kn_dist_eval(x, c, g, NULL);
  if (edge_edge && s <= xi * xi) {
    /* far, nearly parallel edges may round to 0: the nearest pair of endpoints instead */
    if (g) g[0] = NAN;
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

/* The rate at which the motion rel (12) can close the pair's distance, at most lp: with n the unit
 * direction between the closest points (from the second set to the first: the first set's vertices'
 * gradient of d^2, 2 (a* - b*)), the plane through each closest point normal to n supports its set
 * (both convex), and with the vertices moving linearly the separation along n falls no faster than
 * max_j n.rel_b_j - min_i n.rel_a_i, a lower bound of the distance while positive. */
static double separating_rate(const double g[12], const double rel[12], int edge_edge, double lp) {
  const int na = edge_edge ? 2 : 1;
  double n[3] = {0, 0, 0};
  for (int v = 0; v < na; v++)
    for (int k = 0; k < 3; k++) n[k] += g[3 * v + k];
  double len = kn_vec3_norm(n);
  if (!(len > 0) || !isfinite(len)) return lp;
  double amin = INFINITY, bmax = -INFINITY;
  for (int v = 0; v < 4; v++) {
    double u = (n[0] * rel[3 * v] + n[1] * rel[3 * v + 1] + n[2] * rel[3 * v + 2]) / len;
    if (v < na) amin = fmin(amin, u);
    else bmax = fmax(bmax, u);
  }
  return fmin(lp, bmax - amin);
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
  double y[12], g[12];
  memcpy(y, x, sizeof y);
  double d = pair_distance(y, edge_edge, xi, g), gap = (1 - c) * d, t = 0;
  for (int it = 0; it < 100000; it++) {
    double l = separating_rate(g, rel, edge_edge, lp);
    if (!(l > 0)) return 0; /* the separation along n does not fall for the rest of the step */
    double tl = c * d / l;
    for (int k = 0; k < 12; k++) y[k] += tl * rel[k];
    d = pair_distance(y, edge_edge, xi, g);
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
