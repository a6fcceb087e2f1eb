/* Closed, consistently wound, outward triangle surfaces: the check shared by rigid free meshes
 * (contact/mass_properties.c) and FEM surfaces (deformable/tetrahedralize.c). Edges are sorted by
 * their vertex pair; a closed 2-manifold has each pair exactly twice, once in each direction. */
#include <math.h>
#include <stdlib.h>

#include "common/common.h"

typedef struct {
  int a, b;     /* a < b */
  int forward;  /* 1: the triangle runs a -> b */
  int tri;
} edge_rec;

static int cmp_edge_rec(const void* pa, const void* pb) {
  const edge_rec *x = pa, *y = pb;
  if (x->a != y->a) return x->a < y->a ? -1 : 1;
  if (x->b != y->b) return x->b < y->b ? -1 : 1;
  return (x->tri > y->tri) - (x->tri < y->tri);
}

kn_status kn_mesh_check_closed(int nv, const double* v, int nt, const int* tri, int oriented, kn_error* err) {
  if (nt < 4) return kn_fail(err, KN_ERR_INVALID, "%d triangles (a closed surface needs at least 4)", nt);
  edge_rec* e = malloc(3 * (size_t)nt * sizeof *e);
  if (!e) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  for (int t = 0; t < nt; t++)
    for (int k = 0; k < 3; k++) {
      int p = tri[3 * t + k], q = tri[3 * t + (k + 1) % 3];
      if (p < 0 || p >= nv || q < 0 || q >= nv) {
        free(e);
        return kn_fail(err, KN_ERR_INVALID, "triangle %d has a vertex index outside 0..%d", t, nv - 1);
      }
      e[3 * t + k] = (edge_rec){p < q ? p : q, p < q ? q : p, p < q, t};
    }
  qsort(e, 3 * (size_t)nt, sizeof *e, cmp_edge_rec);
  kn_status s = KN_OK;
  for (int i = 0; i < 3 * nt && !s;) {
    int j = i + 1;
    while (j < 3 * nt && e[j].a == e[i].a && e[j].b == e[i].b) j++;
    const double *p = v + 3 * e[i].a, *q = v + 3 * e[i].b;
    if (j - i != 2)
      s = kn_fail(err, KN_ERR_INVALID,
                  "the surface is not closed: edge (%g, %g, %g)-(%g, %g, %g) (welded vertices %d-%d) is in %d "
                  "triangle(s), expected exactly 2",
                  p[0], p[1], p[2], q[0], q[1], q[2], e[i].a, e[i].b, j - i);
    else if (oriented && e[i].forward == e[i + 1].forward)
      s = kn_fail(err, KN_ERR_INVALID,
                  "the faces are not consistently oriented: edge (%g, %g, %g)-(%g, %g, %g) runs the same way in "
                  "triangles %d and %d (one of them is wound inward)",
                  p[0], p[1], p[2], q[0], q[1], q[2], e[i].tri, e[i + 1].tri);
    i = j;
  }
  free(e);
  if (s || !oriented) return s;
  /* signed volume about the vertex mean (small products, no cancellation far from the origin) */
  double r[3] = {0, 0, 0}, V = 0;
  for (int i = 0; i < nv; i++)
    for (int k = 0; k < 3; k++) r[k] += v[3 * i + k] / nv;
  for (int t = 0; t < nt; t++) {
    double a[3], b[3], c[3];
    for (int k = 0; k < 3; k++) {
      a[k] = v[3 * tri[3 * t] + k] - r[k];
      b[k] = v[3 * tri[3 * t + 1] + k] - r[k];
      c[k] = v[3 * tri[3 * t + 2] + k] - r[k];
    }
    V += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])) / 6;
  }
  if (!(V > 0))
    return kn_fail(err, KN_ERR_INVALID,
                   "the faces are wound inward (enclosed volume %g m^3); expected outward, counter-clockwise seen "
                   "from outside",
                   V);
  return KN_OK;
}
