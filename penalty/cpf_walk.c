/* The geometry of a continuous pair outliving its features (continuous-penalty-forces.md §8 item 14):
 * a point's barycentric coordinates on a triangle's plane, the walk of a vertex-face pair's vertex
 * across the triangles of its surface (as mesh_relax.c walks an anchor), and an edge-edge pair's
 * closest-point parameters. */
#include <math.h>

#include "penalty/penalty.h"

int kn_cpf_barycentric(const double a[3], const double b[3], const double c[3], const double p[3], double w[3]) {
  double e1[3], e2[3], d[3];
  for (int k = 0; k < 3; k++) e1[k] = b[k] - a[k], e2[k] = c[k] - a[k], d[k] = p[k] - a[k];
  double g11 = kn_vec3_dot(e1, e1), g12 = kn_vec3_dot(e1, e2), g22 = kn_vec3_dot(e2, e2), det = g11 * g22 - g12 * g12;
  if (!(det > 1e-12 * g11 * g22)) return 0;
  double b1 = kn_vec3_dot(e1, d), b2 = kn_vec3_dot(e2, d);
  w[1] = (g22 * b1 - g12 * b2) / det, w[2] = (g11 * b2 - g12 * b1) / det, w[0] = 1 - w[1] - w[2];
  return 1;
}

int kn_cpf_walk(const double* x, const int* tri, const int* adj, int t, const double p[3], double tol, double w[3]) {
  for (int step = 0; step < KN_CPF_WALK_STEPS; step++) {
    const int* v = tri + 3 * t;
    if (!kn_cpf_barycentric(x + 3 * v[0], x + 3 * v[1], x + 3 * v[2], p, w)) return -1;
    int k = w[0] <= w[1] && w[0] <= w[2] ? 0 : w[1] <= w[2] ? 1 : 2;
    if (w[k] >= -tol) return t;
    t = adj[3 * t + (k + 1) % 3]; /* across the edge opposite vertex k */
    if (t < 0) return -1;
  }
  return -1;
}

int kn_cpf_edge_params(const double x[12], double* alpha, double* beta) {
  double e1[3], e2[3], d[3];
  for (int k = 0; k < 3; k++) e1[k] = x[3 + k] - x[k], e2[k] = x[9 + k] - x[6 + k], d[k] = x[6 + k] - x[k];
  double a = kn_vec3_dot(e1, e1), b = kn_vec3_dot(e1, e2), c = kn_vec3_dot(e2, e2), det = a * c - b * b;
  if (!(det > 1e-12 * a * c)) return 0; /* parallel */
  double p = kn_vec3_dot(e1, d), q = kn_vec3_dot(e2, d);
  *alpha = (c * p - b * q) / det, *beta = (b * p - a * q) / det;
  return 1;
}
