/* The convex hull of a mesh's vertices (qhull, Debian's libqhull-dev: reentrant libqhull_r, option
 * Qt) with the hull vertices' adjacency, the support function by hill climbing on that vertex
 * graph, and the test that recognizes a convex mesh.
 *
 * Hill climbing: a linear function d . x on a convex polytope has no local maximum on its vertex
 * graph other than the global one (the simplex method's argument), and Qt's extra diagonals in
 * merged facets only add edges; so the steepest ascent from any vertex ends at a support point.
 * The hull's support equals the support over all of the mesh's vertices (the maximum of a linear
 * function over a point set is attained at an extreme point), so the narrow phase uses it for
 * every mesh, convex or not; ties aside (a direction normal to a hull face), it returns the same
 * point as the scan over all vertices.
 *
 * Convex recognition: a closed mesh is convex when every one of its vertices lies on its hull:
 * no vertex deeper below the hull's boundary than KN_HULL_CONVEX_TOL times the hull's bounding
 * box diagonal (facet planes from qhull).
 *
 * Faces: qhull's facets (merged where coplanar within its round-off; Qt triangulates a merged
 * facet into triangles that share its plane), grouped back into one convex polygon per plane,
 * its corners ordered counter-clockwise seen from outside (the convex patch's reference and
 * incident faces, contact/convex_patch.c). */
#define _GNU_SOURCE /* open_memstream */
#include <libqhull_r/qhull_ra.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/collision_internal.h"

typedef struct {
  int a, b;
} edge;
/* (edge, edge) => qsort order by (a, b) */
static int cmp_edge(const void* pa, const void* pb) {
  const edge *x = pa, *y = pb;
  if (x->a != y->a) return x->a < y->a ? -1 : 1;
  return (x->b > y->b) - (x->b < y->b);
}

// (hull) => its arrays freed, zeroed
void kn_hull_free(kn_hull* h) {
  if (!h) return;
  free(h->vid), free(h->v), free(h->adj_start), free(h->adj), free(h->fn), free(h->f_start), free(h->f_vert);
  memset(h, 0, sizeof *h);
}

typedef struct {
  double key[4]; /* the plane (normal, offset) shared by the triangles of one merged facet */
  int c[3];      /* hull vertex indices */
} tri_plane;
static int cmp_tri_plane(const void* pa, const void* pb) {
  const tri_plane *x = pa, *y = pb;
  for (int k = 0; k < 4; ++k)
    if (x->key[k] != y->key[k]) return x->key[k] < y->key[k] ? -1 : 1;
  return 0;
}
typedef struct {
  double ang;
  int v;
} corner;
static int cmp_corner(const void* pa, const void* pb) {
  const corner *x = pa, *y = pb;
  if (x->ang != y->ang) return x->ang < y->ang ? -1 : 1;
  return (x->v > y->v) - (x->v < y->v);
}

/* (triangles with their planes, nt) => h's faces: the triangles of one plane merged into a polygon
 * of their distinct corners, ordered by angle about the plane's normal (counter-clockwise seen from
 * outside); 0 on out of memory */
static int collect_faces(tri_plane* t, int nt, kn_hull* h) {
  qsort(t, (size_t)nt, sizeof *t, cmp_tri_plane);
  int nf = 0;
  for (int i = 0; i < nt; ++i) nf += i == 0 || cmp_tri_plane(&t[i], &t[i - 1]) != 0;
  h->fn = malloc((size_t)(4 * nf + 1) * sizeof(double));
  h->f_start = malloc((size_t)(nf + 1) * sizeof(int));
  h->f_vert = malloc((size_t)(3 * nt + 1) * sizeof(int));
  corner* cs = malloc((size_t)(3 * nt + 1) * sizeof(corner));
  if (!h->fn || !h->f_start || !h->f_vert || !cs) return free(cs), 0;
  h->nf = 0;
  int nfv = 0;
  for (int i = 0; i < nt;) {
    int j = i;
    while (j < nt && cmp_tri_plane(&t[j], &t[i]) == 0) ++j;
    const double* n = t[i].key;
    /* a tangent basis (e1, e2 = n x e1) of the plane */
    double a[3] = {fabs(n[0]) < 0.6 ? 1.0 : 0.0, fabs(n[0]) < 0.6 ? 0.0 : 1.0, 0}, e1[3], e2[3];
    double an = a[0] * n[0] + a[1] * n[1] + a[2] * n[2];
    for (int k = 0; k < 3; ++k) e1[k] = a[k] - an * n[k];
    double l = sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]);
    for (int k = 0; k < 3; ++k) e1[k] /= l;
    e2[0] = n[1] * e1[2] - n[2] * e1[1], e2[1] = n[2] * e1[0] - n[0] * e1[2], e2[2] = n[0] * e1[1] - n[1] * e1[0];
    int m = 0;
    double c[3] = {0, 0, 0};
    for (int q = i; q < j; ++q)
      for (int r = 0; r < 3; ++r) {
        int v = t[q].c[r], seen = 0;
        for (int s = 0; s < m && !seen; ++s) seen = cs[s].v == v;
        if (!seen) {
          cs[m++].v = v;
          for (int k = 0; k < 3; ++k) c[k] += h->v[3 * v + k];
        }
      }
    for (int k = 0; k < 3; ++k) c[k] /= m;
    for (int s = 0; s < m; ++s) {
      const double* x = &h->v[3 * cs[s].v];
      double d[3] = {x[0] - c[0], x[1] - c[1], x[2] - c[2]};
      cs[s].ang = atan2(d[0] * e2[0] + d[1] * e2[1] + d[2] * e2[2], d[0] * e1[0] + d[1] * e1[1] + d[2] * e1[2]);
    }
    qsort(cs, (size_t)m, sizeof *cs, cmp_corner);
    memcpy(&h->fn[4 * h->nf], n, 4 * sizeof(double));
    h->f_start[h->nf++] = nfv;
    for (int s = 0; s < m; ++s) h->f_vert[nfv++] = cs[s].v;
    i = j;
  }
  h->f_start[h->nf] = nfv;
  free(cs);
  return 1;
}

/* (qhull's result, vertex count n of the input, stop depth) => h: hull vertices in input order,
 * adjacency from the triangulated facets, and the deepest input point below the facets (the scan
 * stops at the first point deeper than stop_depth); 0 on out of memory */
static int collect(qhT* qh, const double* pts, int n, double stop_depth, kn_hull* h) {
  facetT* facet;
  vertexT *vertex, **vertexp;
  int nf = 0;
  FORALLfacets nf++;
  int* map = malloc((size_t)n * sizeof(int));
  edge* e = malloc((size_t)(6 * nf + 1) * sizeof(edge));
  if (!map || !e) return free(map), free(e), 0;
  for (int i = 0; i < n; ++i) map[i] = -1;
  FORALLfacets FOREACHvertex_(facet->vertices) map[qh_pointid(qh, vertex->point)] = 1;
  h->nv = 0;
  for (int i = 0; i < n; ++i)
    if (map[i] > 0) map[i] = h->nv++;
  h->vid = malloc((size_t)h->nv * sizeof(int));
  h->v = malloc((size_t)h->nv * 3 * sizeof(double));
  h->adj_start = calloc((size_t)h->nv + 1, sizeof(int));
  if (!h->vid || !h->v || !h->adj_start) return free(map), free(e), 0;
  for (int i = 0; i < n; ++i)
    if (map[i] >= 0) h->vid[map[i]] = i, memcpy(&h->v[3 * map[i]], &pts[3 * i], 3 * sizeof(double));
  /* edges of every (triangular) facet, both directions, then sorted and deduplicated */
  int ne = 0, nt = 0;
  double depth = 0;
  tri_plane* tp = malloc((size_t)(nf + 1) * sizeof *tp);
  if (!tp) return free(map), free(e), 0;
  FORALLfacets {
    int c[3], k = 0;
    FOREACHvertex_(facet->vertices) if (k < 3) c[k++] = map[qh_pointid(qh, vertex->point)];
    if (k == 3) {
      tri_plane* q = &tp[nt++];
      memcpy(q->key, facet->normal, 3 * sizeof(double)), q->key[3] = facet->offset, memcpy(q->c, c, sizeof c);
    }
    for (int i = 0; i < k; ++i) {
      int j = (i + 1) % k;
      if (c[i] == c[j]) continue;
      e[ne++] = (edge){c[i], c[j]};
      e[ne++] = (edge){c[j], c[i]};
    }
  }
  qsort(e, (size_t)ne, sizeof(edge), cmp_edge);
  int m = 0;
  for (int i = 0; i < ne; ++i)
    if (i == 0 || e[i].a != e[i - 1].a || e[i].b != e[i - 1].b) e[m++] = e[i];
  h->adj = malloc((size_t)(m + 1) * sizeof(int));
  if (!h->adj || !collect_faces(tp, nt, h)) return free(map), free(e), free(tp), 0;
  free(tp);
  for (int i = 0; i < m; ++i) h->adj[i] = e[i].b, h->adj_start[e[i].a + 1]++;
  for (int i = 0; i < h->nv; ++i) h->adj_start[i + 1] += h->adj_start[i];
  /* depth of each input point below the boundary: min over facets of -(n . x + offset); a hull
   * vertex is on it (0), so only the others are measured (a mesh whose vertices are all extreme
   * costs nothing here, a non-convex one stops at its first deep vertex) */
  for (int i = 0; i < n; ++i) {
    if (map[i] >= 0) continue;
    double d = INFINITY;
    FORALLfacets {
      double s = -(facet->normal[0] * pts[3 * i] + facet->normal[1] * pts[3 * i + 1] +
                   facet->normal[2] * pts[3 * i + 2] + facet->offset);
      if (s < d) d = s;
    }
    if (d > depth) depth = d;
    if (depth > stop_depth) break; /* recognized as not convex: no need for the deepest */
  }
  h->inner_depth = depth;
  free(map), free(e);
  return 1;
}

// (n points xyz, stop depth) => their hull with vertex adjacency and the deepest point's depth
// below it (or the first depth found above stop_depth); KN_ERR_INVALID (h empty) when qhull finds
// no 3-D hull (flat or too few points), KN_ERR_NOMEM
kn_status kn_hull_build(const double* pts, int n, double stop_depth, kn_hull* h) {
  memset(h, 0, sizeof *h);
  if (n < 4) return KN_ERR_INVALID;
  coordT* p = malloc((size_t)n * 3 * sizeof(coordT));
  if (!p) return KN_ERR_NOMEM;
  memcpy(p, pts, (size_t)n * 3 * sizeof(double));
  /* qhull reports errors on a FILE: kept in memory and discarded (the library never prints) */
  char* msg = NULL;
  size_t len = 0;
  FILE* errfile = open_memstream(&msg, &len);
  qhT qh_qh;
  qhT* qh = &qh_qh;
  qh_zero(qh, errfile);
  int code = errfile ? qh_new_qhull(qh, 3, n, p, False, "qhull Qt", NULL, errfile) : 1;
  kn_status st = KN_ERR_INVALID;
  if (code == 0) st = collect(qh, pts, n, stop_depth, h) ? KN_OK : KN_ERR_NOMEM;
  qh_freeqhull(qh, !qh_ALL);
  int curlong, totlong;
  qh_memfreeshort(qh, &curlong, &totlong);
  if (errfile) fclose(errfile);
  free(msg), free(p);
  if (st != KN_OK) kn_hull_free(h);
  return st;
}

// (hull, direction d in its frame, start vertex) => the hull vertex maximizing d . v, by steepest
// ascent on the vertex graph (strict increase, so it ends)
int kn_hull_support(const kn_hull* h, const double d[3], int start) {
  int v = start >= 0 && start < h->nv ? start : 0;
  const double* x = &h->v[3 * v];
  double best = d[0] * x[0] + d[1] * x[1] + d[2] * x[2];
  for (;;) {
    int next = -1;
    for (int k = h->adj_start[v]; k < h->adj_start[v + 1]; ++k) {
      const double* y = &h->v[3 * h->adj[k]];
      double s = d[0] * y[0] + d[1] * y[1] + d[2] * y[2];
      if (s > best) best = s, next = h->adj[k];
    }
    if (next < 0) return v;
    v = next;
  }
}
