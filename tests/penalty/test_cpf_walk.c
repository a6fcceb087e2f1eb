/* The geometry of a carried pair outliving its features (penalty/cpf_walk.c; continuous-penalty-
 * forces.md §8 item 14): barycentric coordinates of a projection, the walk of a vertex across a
 * creased surface, an edge-edge pair's closest-point parameters. A valley surface: the left square
 * [-1, 0] x [-1, 1] at z = 0 and the right one rising at theta = 0.3 rad, two triangles each, the
 * crease along y at x = 0. */
#include <criterion/criterion.h>
#include <math.h>

#include "penalty/penalty.h"

static const double theta = 0.3;

Test(cpf_walk, a_vertex_past_the_crease_walks_to_the_next_slope) {
  const double h = tan(theta);
  const double x[18] = {-1, -1, 0, 0, -1, 0, 0, 1, 0, -1, 1, 0, 1, -1, h, 1, 1, h};
  const int tri[12] = {0, 1, 2, 0, 2, 3, 1, 4, 5, 1, 5, 2}; /* left (0, 1), right (2, 3); wound up */
  kn_penalty_mesh_topology top;
  cr_assert_eq(kn_penalty_mesh_topology_build(6, 4, tri, &top, NULL), KN_OK);
  /* 1 mm under the right slope at x = 0.2, y = 0.3, starting from the left triangle 1 (which holds
   * no part of the crease's neighbourhood at y = 0.3 but vertex 2: two crossings) */
  const double n[3] = {-sin(theta), 0, cos(theta)}, d = 1e-3;
  double p[3] = {0.2 - d * n[0], 0.3, 0.2 * h - d * n[2]}, w[3];
  int t = kn_cpf_walk(x, tri, top.adj, 1, p, 1e-9, w);
  cr_assert(t == 2 || t == 3, "walked to the right slope: %d", t);
  double q[3] = {0, 0, 0};
  for (int k = 0; k < 3; k++) {
    cr_expect_geq(w[k], -1e-9, "w[%d] = %g", k, w[k]);
    for (int c = 0; c < 3; c++) q[c] += w[k] * x[3 * tri[3 * t + k] + c];
  }
  /* the projection: p - q along the right slope's normal, d long */
  double r[3] = {p[0] - q[0], p[1] - q[1], p[2] - q[2]};
  cr_expect(fabs(kn_vec3_dot(r, n) + d) < 1e-14, "depth %.17g", kn_vec3_dot(r, n));
  cr_expect(fabs(r[0] - kn_vec3_dot(r, n) * n[0]) < 1e-14 && fabs(r[1]) < 1e-14, "along the normal");
  /* past the open edge x = 1: no triangle */
  double far[3] = {1.5, 0, 1.5 * h - d};
  cr_expect_eq(kn_cpf_walk(x, tri, top.adj, 0, far, 1e-9, w), -1);
  /* inside its own triangle: no walk */
  double in[3] = {-0.2, -0.7, -d};
  cr_expect_eq(kn_cpf_walk(x, tri, top.adj, 0, in, 1e-9, w), 0);
  kn_penalty_mesh_topology_free(&top);
}

Test(cpf_walk, edge_params_of_crossing_and_parallel_edges) {
  /* (a, b) along x through the origin, (c, d) along y above it: closest at alpha 0.25, beta 0.6 */
  const double x[12] = {-0.5, 0, 0, 1.5, 0, 0, 0, -1.2, 0.1, 0, 0.8, 0.1};
  double al, be;
  cr_assert_eq(kn_cpf_edge_params(x, &al, &be), 1);
  cr_expect(fabs(al - 0.25) < 1e-15 && fabs(be - 0.6) < 1e-15, "alpha %.17g beta %.17g", al, be);
  const double par[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 2, 1, 0};
  cr_expect_eq(kn_cpf_edge_params(par, &al, &be), 0, "parallel edges");
}
