/* Triangle meshes for collision: read with assimp (OBJ, STL, ...), weld identical positions,
 * an AABB tree over the triangles, and the point-vs-mesh signed distance.
 *
 * Sign: the angle-weighted pseudo-normal of the closest feature (face, edge or vertex) tells
 * inside from outside (Baerentzen & Aanaes, "Signed distance computation using the angle weighted
 * pseudonormal", IEEE TVCG 2005). This is exact for a closed, consistently oriented (outward)
 * 2-manifold mesh; for open or inconsistent meshes the sign is undefined near the defects. */
#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/collision_internal.h"

//---- small vector helpers ----

static void sub3(const double a[3], const double b[3], double c[3]) {
  c[0] = a[0] - b[0], c[1] = a[1] - b[1], c[2] = a[2] - b[2];
}
static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void cross3(const double a[3], const double b[3], double c[3]) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}
static void normalize3(double a[3]) {
  double n = sqrt(dot3(a, a));
  if (n > 0) a[0] /= n, a[1] /= n, a[2] /= n;
}

//---- welding ----

static const double* g_weld_pos; /* qsort has no context argument; loading is not re-entrant here */
static int cmp_pos(const void* pa, const void* pb) {
  const double* a = g_weld_pos + 3 * *(const int*)pa;
  const double* b = g_weld_pos + 3 * *(const int*)pb;
  for (int k = 0; k < 3; ++k) {
    if (a[k] < b[k]) return -1;
    if (a[k] > b[k]) return 1;
  }
  return (*(const int*)pa > *(const int*)pb) - (*(const int*)pa < *(const int*)pb);
}

//---- BVH ----

static void tri_bounds(const kn_mesh_data* m, const int* t, double lo[3], double hi[3]) {
  for (int k = 0; k < 3; ++k) lo[k] = DBL_MAX, hi[k] = -DBL_MAX;
  for (int c = 0; c < 3; ++c)
    for (int k = 0; k < 3; ++k) {
      double x = m->v[3 * t[c] + k];
      if (x < lo[k]) lo[k] = x;
      if (x > hi[k]) hi[k] = x;
    }
}

static double* g_sort_cent;
static int g_sort_axis;
static int cmp_cent(const void* pa, const void* pb) {
  /* elements are triangle ids; their centroids live in g_sort_cent (4 doubles each) */
  double a = g_sort_cent[4 * *(const int*)pa + g_sort_axis], b = g_sort_cent[4 * *(const int*)pb + g_sort_axis];
  if (a < b) return -1;
  if (a > b) return 1;
  return (*(const int*)pa > *(const int*)pb) - (*(const int*)pa < *(const int*)pb);
}

static double half_area(const double lo[3], const double hi[3]) {
  double e0 = hi[0] - lo[0], e1 = hi[1] - lo[1], e2 = hi[2] - lo[2];
  return e0 * e1 + e1 * e2 + e2 * e0;
}

/* top-down build by the binned surface area heuristic (Wald 2007): on each axis the centroids are
 * put in 32 equal bins and every boundary between bins is priced area(left) x count(left) +
 * area(right) x count(right) (the expected number of triangle tests of a query that enters the
 * node); the cheapest boundary of the three axes is taken (ties: the lower axis, then the lower
 * boundary), or the median of the longest centroid axis when no boundary separates the
 * centroids, below depth 40 (which bounds the depth: the search's stack holds 128), and in meshes
 * of at most 16 triangles (nothing to gain there; such a mesh keeps the triangle order of the
 * median tree, which the load's error messages name). Leaves hold at most 4 triangles. */
#define SAH_BINS 32
static int build_node(kn_mesh_data* m, int* perm, double* cent, int first, int count, int depth) {
  int id = m->nnodes++;
  kn_bvh_node* nd = &m->nodes[id];
  for (int k = 0; k < 3; ++k) nd->lo[k] = DBL_MAX, nd->hi[k] = -DBL_MAX;
  double clo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, chi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
  for (int i = first; i < first + count; ++i) {
    double lo[3], hi[3];
    tri_bounds(m, &m->tri[3 * perm[i]], lo, hi);
    for (int k = 0; k < 3; ++k) {
      nd->lo[k] = fmin(nd->lo[k], lo[k]), nd->hi[k] = fmax(nd->hi[k], hi[k]);
      clo[k] = fmin(clo[k], cent[4 * perm[i] + k]), chi[k] = fmax(chi[k], cent[4 * perm[i] + k]);
    }
  }
  if (count <= 4) {
    nd->left = nd->right = -1, nd->first = first, nd->count = count;
    return id;
  }
  int axis = 0;
  for (int k = 1; k < 3; ++k)
    if (chi[k] - clo[k] > chi[axis] - clo[axis]) axis = k;
  int split = count / 2; /* median of the longest axis unless a bin boundary is found below */
  double best_cost = DBL_MAX;
  for (int a = 0; a < 3 && depth < 40 && m->nt > 16; ++a) {
    double ext = chi[a] - clo[a];
    if (!(ext > 0)) continue;
    int n[SAH_BINS] = {0};
    double blo[SAH_BINS][3], bhi[SAH_BINS][3];
    for (int b = 0; b < SAH_BINS; ++b)
      for (int k = 0; k < 3; ++k) blo[b][k] = DBL_MAX, bhi[b][k] = -DBL_MAX;
    for (int i = first; i < first + count; ++i) {
      int b = (int)(SAH_BINS * (cent[4 * perm[i] + a] - clo[a]) / ext);
      b = b < 0 ? 0 : (b >= SAH_BINS ? SAH_BINS - 1 : b);
      double lo[3], hi[3];
      tri_bounds(m, &m->tri[3 * perm[i]], lo, hi);
      ++n[b];
      for (int k = 0; k < 3; ++k) blo[b][k] = fmin(blo[b][k], lo[k]), bhi[b][k] = fmax(bhi[b][k], hi[k]);
    }
    double right_area[SAH_BINS];
    int right_n[SAH_BINS];
    double lo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, hi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
    int cnt = 0;
    for (int b = SAH_BINS - 1; b >= 1; --b) {
      cnt += n[b];
      for (int k = 0; k < 3; ++k) lo[k] = fmin(lo[k], blo[b][k]), hi[k] = fmax(hi[k], bhi[b][k]);
      right_n[b] = cnt, right_area[b] = cnt ? half_area(lo, hi) : 0;
    }
    for (int k = 0; k < 3; ++k) lo[k] = DBL_MAX, hi[k] = -DBL_MAX;
    cnt = 0;
    for (int b = 1; b < SAH_BINS; ++b) {
      cnt += n[b - 1];
      for (int k = 0; k < 3; ++k) lo[k] = fmin(lo[k], blo[b - 1][k]), hi[k] = fmax(hi[k], bhi[b - 1][k]);
      if (cnt == 0 || right_n[b] == 0) continue;
      double cost = half_area(lo, hi) * cnt + right_area[b] * right_n[b];
      if (cost < best_cost) best_cost = cost, axis = a, split = cnt;
    }
  }
  /* sorted by centroid along the axis, the first `split` are the left bins' (bins are monotone in
   * the centroid; equal centroids share a bin) */
  g_sort_cent = cent, g_sort_axis = axis;
  qsort(perm + first, (size_t)count, sizeof(int), cmp_cent);
  nd->first = first, nd->count = 0;
  int l = build_node(m, perm, cent, first, split, depth + 1);
  int r = build_node(m, perm, cent, first + split, count - split, depth + 1);
  m->nodes[id].left = l, m->nodes[id].right = r;
  return id;
}

//---- pseudo-normals ----

typedef struct {
  int lo, hi, t, k;
} edge_rec;
static int cmp_edge(const void* pa, const void* pb) {
  const edge_rec *a = pa, *b = pb;
  if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
  if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
  if (a->t != b->t) return a->t < b->t ? -1 : 1;
  return a->k - b->k;
}

static kn_status build_normals(kn_mesh_data* m) {
  m->fn = kn_calloc((size_t)m->nt * 3, sizeof(double));
  m->vn = kn_calloc((size_t)m->nv * 3, sizeof(double));
  m->en = kn_calloc((size_t)m->nt * 9, sizeof(double));
  edge_rec* e = kn_calloc((size_t)m->nt * 3, sizeof(edge_rec));
  if (!m->fn || !m->vn || !m->en || !e) {
    free(e);
    return KN_ERR_NOMEM;
  }
  for (int t = 0; t < m->nt; ++t) {
    const int* T = &m->tri[3 * t];
    double e1[3], e2[3];
    sub3(&m->v[3 * T[1]], &m->v[3 * T[0]], e1);
    sub3(&m->v[3 * T[2]], &m->v[3 * T[0]], e2);
    cross3(e1, e2, &m->fn[3 * t]);
    normalize3(&m->fn[3 * t]);
    for (int c = 0; c < 3; ++c) {
      /* angle of the triangle at corner c weights the face normal (the "angle-weighted" rule) */
      double u[3], w[3];
      sub3(&m->v[3 * T[(c + 1) % 3]], &m->v[3 * T[c]], u);
      sub3(&m->v[3 * T[(c + 2) % 3]], &m->v[3 * T[c]], w);
      normalize3(u), normalize3(w);
      double ang = acos(fmax(-1.0, fmin(1.0, dot3(u, w))));
      for (int k = 0; k < 3; ++k) m->vn[3 * T[c] + k] += ang * m->fn[3 * t + k];
      int a = T[c], b = T[(c + 1) % 3];
      e[3 * t + c] = (edge_rec){a < b ? a : b, a < b ? b : a, t, c};
    }
  }
  qsort(e, (size_t)m->nt * 3, sizeof(edge_rec), cmp_edge);
  for (int i = 0; i < 3 * m->nt;) {
    int j = i;
    double s[3] = {0, 0, 0};
    while (j < 3 * m->nt && e[j].lo == e[i].lo && e[j].hi == e[i].hi) {
      for (int k = 0; k < 3; ++k) s[k] += m->fn[3 * e[j].t + k];
      ++j;
    }
    for (int q = i; q < j; ++q)
      for (int k = 0; k < 3; ++k) m->en[9 * e[q].t + 3 * e[q].k + k] = s[k];
    i = j;
  }
  free(e);
  return KN_OK;
}

//---- load ----

void kn_mesh_free(kn_mesh_data* m) {
  if (!m) return;
  free(m->v), free(m->tri), free(m->fn), free(m->vn), free(m->en), free(m->tbox), free(m->nodes);
  kn_hull_free(&m->hull);
  memset(m, 0, sizeof *m);
}

// (mesh shape: resolved path, scale) => welded triangle mesh with BVH and pseudo-normals
kn_status kn_mesh_load(const kn_shape* shape, kn_mesh_data* m, kn_error* err) {
  memset(m, 0, sizeof *m);
  const char* name = shape->mesh_uri ? shape->mesh_uri : "(unnamed mesh)";
  if (!shape->mesh_path)
    return kn_fail(err, KN_ERR_IO, "mesh '%s': the file could not be resolved to a path on disk", name);
  kn_status fs = kn_file_check(shape->mesh_path, "mesh", err);
  if (fs) {
    kn_error_prefix(err, "mesh '%s': ", name);
    return fs;
  }
  const struct aiScene* sc = aiImportFile(shape->mesh_path, aiProcess_Triangulate | aiProcess_PreTransformVertices);
  if (!sc)
    return kn_fail(err, KN_ERR_IO, "mesh '%s': cannot read '%s': %s", name, shape->mesh_path, aiGetErrorString());
  size_t nvraw = 0, ntraw = 0;
  for (unsigned i = 0; i < sc->mNumMeshes; ++i) {
    nvraw += sc->mMeshes[i]->mNumVertices;
    for (unsigned f = 0; f < sc->mMeshes[i]->mNumFaces; ++f) ntraw += sc->mMeshes[i]->mFaces[f].mNumIndices == 3;
  }
  if (nvraw == 0 || ntraw == 0) {
    aiReleaseImport(sc);
    return kn_fail(err, KN_ERR_PARSE, "mesh '%s': '%s' has no triangles (expected a closed triangle mesh)", name,
                   shape->mesh_path);
  }
  double* pos = kn_calloc(nvraw * 3, sizeof(double));
  int* idx = kn_calloc(nvraw, sizeof(int));
  int* map = kn_calloc(nvraw, sizeof(int));
  m->tri = kn_calloc(ntraw * 3, sizeof(int));
  if (!pos || !idx || !map || !m->tri) {
    aiReleaseImport(sc);
    free(pos), free(idx), free(map);
    kn_mesh_free(m);
    return kn_fail(err, KN_ERR_NOMEM, "mesh '%s': out of memory", name);
  }
  size_t base = 0, nt = 0;
  for (unsigned i = 0; i < sc->mNumMeshes; ++i) {
    const struct aiMesh* me = sc->mMeshes[i];
    for (unsigned v = 0; v < me->mNumVertices; ++v) {
      pos[3 * (base + v) + 0] = me->mVertices[v].x * shape->scale[0];
      pos[3 * (base + v) + 1] = me->mVertices[v].y * shape->scale[1];
      pos[3 * (base + v) + 2] = me->mVertices[v].z * shape->scale[2];
    }
    for (unsigned f = 0; f < me->mNumFaces; ++f) {
      if (me->mFaces[f].mNumIndices != 3) continue;
      for (int c = 0; c < 3; ++c) m->tri[3 * nt + (size_t)c] = (int)(base + me->mFaces[f].mIndices[c]);
      ++nt;
    }
    base += me->mNumVertices;
  }
  aiReleaseImport(sc);
  /* weld: STL stores every triangle's corners separately, but the pseudo-normals need shared
   * vertices and edges */
  for (size_t i = 0; i < nvraw; ++i) idx[i] = (int)i;
  g_weld_pos = pos;
  qsort(idx, nvraw, sizeof(int), cmp_pos);
  int nv = 0;
  for (size_t i = 0; i < nvraw; ++i) {
    if (i == 0 || memcmp(pos + 3 * idx[i], pos + 3 * idx[i - 1], 3 * sizeof(double)) != 0) ++nv;
    map[idx[i]] = nv - 1;
  }
  m->v = kn_calloc((size_t)nv * 3, sizeof(double));
  if (!m->v) {
    free(pos), free(idx), free(map);
    kn_mesh_free(m);
    return kn_fail(err, KN_ERR_NOMEM, "mesh '%s': out of memory", name);
  }
  for (size_t i = 0; i < nvraw; ++i) memcpy(m->v + 3 * map[i], pos + 3 * i, 3 * sizeof(double));
  m->nv = nv;
  int kept = 0;
  for (size_t t = 0; t < nt; ++t) {
    int a = map[m->tri[3 * t]], b = map[m->tri[3 * t + 1]], c = map[m->tri[3 * t + 2]];
    if (a == b || b == c || a == c) continue; /* degenerate after welding */
    m->tri[3 * kept] = a, m->tri[3 * kept + 1] = b, m->tri[3 * kept + 2] = c;
    ++kept;
  }
  free(pos), free(idx), free(map);
  m->nt = kept;
  if (kept == 0) {
    kn_mesh_free(m);
    return kn_fail(err, KN_ERR_PARSE, "mesh '%s': '%s' has only degenerate triangles", name, shape->mesh_path);
  }
  /* centroid and bounds */
  for (int k = 0; k < 3; ++k) m->lo[k] = DBL_MAX, m->hi[k] = -DBL_MAX, m->centroid[k] = 0;
  for (int i = 0; i < nv; ++i)
    for (int k = 0; k < 3; ++k) {
      m->centroid[k] += m->v[3 * i + k] / nv;
      m->lo[k] = fmin(m->lo[k], m->v[3 * i + k]), m->hi[k] = fmax(m->hi[k], m->v[3 * i + k]);
    }
  /* bounding sphere about the box centre: the narrow phase culls probes with it */
  m->sphere_r = 0;
  for (int k = 0; k < 3; ++k) m->sphere_c[k] = 0.5 * (m->lo[k] + m->hi[k]);
  for (int i = 0; i < nv; ++i) {
    double d[3];
    sub3(&m->v[3 * i], m->sphere_c, d);
    m->sphere_r = fmax(m->sphere_r, sqrt(dot3(d, d)));
  }
  /* BVH: permute triangles into leaf order */
  int* perm = kn_calloc((size_t)kept, sizeof(int));
  double* cent = kn_calloc((size_t)kept * 4, sizeof(double));
  int* tri2 = kn_calloc((size_t)kept * 3, sizeof(int));
  m->nodes = kn_calloc((size_t)kept * 2, sizeof(kn_bvh_node));
  if (!perm || !cent || !tri2 || !m->nodes) {
    free(perm), free(cent), free(tri2);
    kn_mesh_free(m);
    return kn_fail(err, KN_ERR_NOMEM, "mesh '%s': out of memory", name);
  }
  for (int t = 0; t < kept; ++t) {
    perm[t] = t;
    for (int k = 0; k < 3; ++k)
      cent[4 * t + k] = (m->v[3 * m->tri[3 * t] + k] + m->v[3 * m->tri[3 * t + 1] + k] + m->v[3 * m->tri[3 * t + 2] + k]) / 3;
  }
  build_node(m, perm, cent, 0, kept, 0);
  for (int t = 0; t < kept; ++t) memcpy(tri2 + 3 * t, m->tri + 3 * perm[t], 3 * sizeof(int));
  free(m->tri);
  m->tri = tri2;
  free(perm), free(cent);
  m->tbox = kn_calloc((size_t)kept * 6, sizeof(double));
  for (int t = 0; m->tbox && t < kept; ++t) tri_bounds(m, &m->tri[3 * t], &m->tbox[6 * t], &m->tbox[6 * t + 3]);
  if (!m->tbox || build_normals(m) != KN_OK) {
    kn_mesh_free(m);
    return kn_fail(err, KN_ERR_NOMEM, "mesh '%s': out of memory", name);
  }
  /* the hull for the support function; a flat mesh has none and keeps the scan over its vertices */
  double diag2 = 0;
  for (int k = 0; k < 3; ++k) diag2 += (m->hi[k] - m->lo[k]) * (m->hi[k] - m->lo[k]);
  double tol = KN_HULL_CONVEX_TOL * sqrt(diag2);
  kn_status hs = kn_hull_build(m->v, m->nv, tol, &m->hull);
  if (hs == KN_ERR_NOMEM) {
    kn_mesh_free(m);
    return kn_fail(err, KN_ERR_NOMEM, "mesh '%s': out of memory", name);
  }
  m->convex = hs == KN_OK && m->hull.inner_depth <= tol;
  return KN_OK;
}

//---- queries ----

/* Closest point on triangle abc to p (Ericson, Real-Time Collision Detection §5.1.5) and the
 * feature it lies on: 0 face, 1..3 vertex a, b, c, 4..6 edge ab, bc, ca. */
static int closest_on_triangle(const double p[3], const double a[3], const double b[3], const double c[3],
                               double q[3]) {
  double ab[3], ac[3], ap[3], bp[3], cp[3];
  sub3(b, a, ab), sub3(c, a, ac), sub3(p, a, ap);
  double d1 = dot3(ab, ap), d2 = dot3(ac, ap);
  if (d1 <= 0 && d2 <= 0) return memcpy(q, a, 3 * sizeof(double)), 1;
  sub3(p, b, bp);
  double d3 = dot3(ab, bp), d4 = dot3(ac, bp);
  if (d3 >= 0 && d4 <= d3) return memcpy(q, b, 3 * sizeof(double)), 2;
  double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    double v = d1 / (d1 - d3);
    for (int k = 0; k < 3; ++k) q[k] = a[k] + v * ab[k];
    return 4;
  }
  sub3(p, c, cp);
  double d5 = dot3(ab, cp), d6 = dot3(ac, cp);
  if (d6 >= 0 && d5 <= d6) return memcpy(q, c, 3 * sizeof(double)), 3;
  double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    double w = d2 / (d2 - d6);
    for (int k = 0; k < 3; ++k) q[k] = a[k] + w * ac[k];
    return 6;
  }
  double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
    double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    for (int k = 0; k < 3; ++k) q[k] = b[k] + w * (c[k] - b[k]);
    return 5;
  }
  double den = 1.0 / (va + vb + vc), v = vb * den, w = vc * den;
  for (int k = 0; k < 3; ++k) q[k] = a[k] + ab[k] * v + ac[k] * w;
  return 0;
}

static double box_dist2(const double p[3], const double lo[3], const double hi[3]) {
  double s = 0;
  for (int k = 0; k < 3; ++k) {
    double d = p[k] < lo[k] ? lo[k] - p[k] : (p[k] > hi[k] ? p[k] - hi[k] : 0);
    s += d * d;
  }
  return s;
}

/* nearest-triangle search of the BVH (nearer child first) among triangles closer than
 * sqrt(best2); 0 when there is none, else the squared distance, triangle, feature and point.
 * A stack entry carries its box's squared distance, computed once when its parent is opened. A
 * triangle is measured only when its own box is nearer than the best so far; the box test skips a
 * triangle only when it is beyond best by a relative 1e-12, far more than the round-off of either
 * squared distance, so a skipped triangle is one whose distance would not have replaced the best
 * (the same result, bit for bit, as measuring every triangle of the leaf). */
static int nearest_triangle(const kn_mesh_data* m, const double x[3], double best2, double* out2, int* bt,
                            int* bf, double bq[3]) {
  int stack[128], top = 0, found = 0;
  double sdist[128];
  double best = best2;
  stack[top] = 0, sdist[top++] = box_dist2(x, m->nodes[0].lo, m->nodes[0].hi);
  while (top > 0) {
    --top;
    if (sdist[top] >= best) continue;
    const kn_bvh_node* nd = &m->nodes[stack[top]];
    if (nd->count > 0) {
      for (int t = nd->first; t < nd->first + nd->count; ++t) {
        if (box_dist2(x, &m->tbox[6 * t], &m->tbox[6 * t + 3]) > best * (1 + 1e-12)) continue;
        const int* T = &m->tri[3 * t];
        double q[3], d[3];
        int f = closest_on_triangle(x, &m->v[3 * T[0]], &m->v[3 * T[1]], &m->v[3 * T[2]], q);
        sub3(x, q, d);
        double d2 = dot3(d, d);
        if (d2 < best) best = d2, *bt = t, *bf = f, memcpy(bq, q, 3 * sizeof(double)), found = 1;
      }
    } else if (top + 2 <= 128) {
      /* visit the nearer child first: push it last */
      double dl = box_dist2(x, m->nodes[nd->left].lo, m->nodes[nd->left].hi);
      double dr = box_dist2(x, m->nodes[nd->right].lo, m->nodes[nd->right].hi);
      if (dl <= dr) {
        stack[top] = nd->right, sdist[top++] = dr;
        stack[top] = nd->left, sdist[top++] = dl;
      } else {
        stack[top] = nd->left, sdist[top++] = dl;
        stack[top] = nd->right, sdist[top++] = dr;
      }
    }
  }
  *out2 = best;
  return found;
}

/* (nearest triangle bt, its feature bf, point bq, squared distance) => signed distance and the
 * outward unit gradient, the sign from the feature's pseudo-normal */
static double signed_from_nearest(const kn_mesh_data* m, const double x[3], double best, int bt, int bf,
                                  const double bq[3], double grad[3]) {
  const double* pn;
  if (bf == 0) pn = &m->fn[3 * bt];
  else if (bf <= 3) pn = &m->vn[3 * m->tri[3 * bt + bf - 1]];
  else pn = &m->en[9 * bt + 3 * (bf - 4)];
  double d[3];
  sub3(x, bq, d);
  double dist = sqrt(best);
  double sign = dot3(d, pn) >= 0 ? 1.0 : -1.0;
  if (dist > 1e-12) {
    for (int k = 0; k < 3; ++k) grad[k] = sign * d[k] / dist;
  } else {
    memcpy(grad, pn, 3 * sizeof(double));
    normalize3(grad);
  }
  return sign * dist;
}

// (mesh, local point x) => signed distance (< 0 inside) and outward unit gradient; BVH search
double kn_mesh_signed_distance(const kn_mesh_data* m, const double x[3], double grad[3]) {
  double best = DBL_MAX, bq[3] = {0, 0, 0};
  int bt = 0, bf = 0;
  nearest_triangle(m, x, DBL_MAX, &best, &bt, &bf, bq);
  return signed_from_nearest(m, x, best, bt, bf, bq, grad);
}

// (mesh, local point x, bound) => as kn_mesh_signed_distance when x is nearer than bound to the
// surface (*near = 1, the same bits: the search only skips subtrees that cannot hold the nearest
// triangle); else *near = 0, the search stops early and returns +bound (the sign is not known)
double kn_mesh_signed_distance_bounded(const kn_mesh_data* m, const double x[3], double bound, double grad[3],
                                       int* near) {
  double best = DBL_MAX, bq[3] = {0, 0, 0};
  int bt = 0, bf = 0;
  *near = nearest_triangle(m, x, bound * bound, &best, &bt, &bf, bq);
  if (!*near) {
    grad[0] = grad[1] = 0, grad[2] = 1;
    return bound;
  }
  return signed_from_nearest(m, x, best, bt, bf, bq, grad);
}
