/* Mass properties of a closed triangle mesh by the divergence theorem: the solid is the signed sum
 * of the tetrahedra (r, a, b, c) over its triangles (a, b, c) with a fixed apex r, each of which
 * has exact polynomial moments (Mirtich 1996; Eberly, "Polyhedral Mass Properties"; Tonon 2004):
 *   V_t = det[a - r, b - r, c - r] / 6,
 *   int x dV = V_t (r + a + b + c) / 4,
 *   int (x - r)(x - r)^T dV = V_t / 20 (sum_k e_k e_k^T + s s^T), e_k = vertex_k - r, s = sum_k e_k,
 * so the totals are exact up to round-off. The apex is the vertex mean, which keeps the products
 * small (no cancellation for a mesh far from its frame's origin). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/collision_internal.h"
#include "contact/contact.h"

kn_status kn_mass_properties_triangles(int nv, const double* v, int nt, const int* tri, double* volume,
                                       double com[3], double I1[9], kn_error* err) {
  if (nv < 4 || nt < 4 || !v || !tri)
    return kn_fail(err, KN_ERR_INVALID, "mass properties: a closed mesh needs >= 4 vertices and >= 4 triangles "
                   "(got %d, %d)", nv, nt);
  double r[3] = {0, 0, 0};
  for (int i = 0; i < nv; i++)
    for (int k = 0; k < 3; k++) r[k] += v[3 * i + k] / nv;
  double V = 0, m1[3] = {0, 0, 0}, C[9] = {0}; /* moments about r */
  for (int t = 0; t < nt; t++) {
    double e[3][3];
    for (int j = 0; j < 3; j++) {
      int i = tri[3 * t + j];
      if (i < 0 || i >= nv)
        return kn_fail(err, KN_ERR_INVALID, "mass properties: triangle %d refers to vertex %d of %d", t, i, nv);
      for (int k = 0; k < 3; k++) e[j][k] = v[3 * i + k] - r[k];
    }
    double det = e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) - e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0]) +
                 e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]);
    double Vt = det / 6.0, s[3];
    for (int k = 0; k < 3; k++) s[k] = e[0][k] + e[1][k] + e[2][k];
    V += Vt;
    for (int k = 0; k < 3; k++) m1[k] += Vt * s[k] / 4.0;
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++)
        C[3 * a + b] += Vt / 20.0 * (e[0][a] * e[0][b] + e[1][a] * e[1][b] + e[2][a] * e[2][b] + s[a] * s[b]);
  }
  if (!(fabs(V) > 0) || !isfinite(V))
    return kn_fail(err, KN_ERR_INVALID, "mass properties: the mesh encloses no volume (%g m^3); expected a closed "
                   "triangle mesh", V);
  /* inward-facing triangles give V < 0: the same solid, every moment negated */
  if (V < 0) {
    V = -V;
    for (int k = 0; k < 3; k++) m1[k] = -m1[k];
    for (int k = 0; k < 9; k++) C[k] = -C[k];
  }
  double c[3] = {m1[0] / V, m1[1] / V, m1[2] / V};
  /* covariance about the centre of mass (parallel axis on the second moment), per unit mass */
  double S[9];
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) S[3 * a + b] = C[3 * a + b] / V - c[a] * c[b];
  double tr = S[0] + S[4] + S[8];
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) I1[3 * a + b] = (a == b ? tr : 0.0) - S[3 * a + b];
  for (int k = 0; k < 3; k++) com[k] = r[k] + c[k];
  *volume = V;
  return KN_OK;
}

kn_status kn_mesh_mass_properties(const kn_shape* shape, double* volume, double com[3], double I1[9], kn_error* err) {
  if (shape->type != KN_SHAPE_MESH)
    return kn_fail(err, KN_ERR_INVALID, "mass properties: shape is a %s, not a mesh", kn_shape_type_name(shape->type));
  kn_mesh_data m;
  kn_status st = kn_mesh_load(shape, &m, err);
  if (st) return st;
  /* a free body's inertia and its signed distance need a closed, outward surface */
  st = kn_mesh_check_closed(m.nv, m.v, m.nt, m.tri, 1, err);
  if (!st) st = kn_mass_properties_triangles(m.nv, m.v, m.nt, m.tri, volume, com, I1, err);
  kn_mesh_free(&m);
  if (st) kn_error_prefix(err, "mesh '%s': ", shape->mesh_uri ? shape->mesh_uri : shape->mesh_path);
  return st;
}
