/* The deformed surface of an FEM body for contact queries: an AABB tree over its triangles
 * (topology from the rest positions, boxes refitted to x), nearest point with the pseudo-normal
 * sign, and the brute-force reference (conventions in contact/contact.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/contact.h"

#define LEAF 4 /* triangles per leaf */

typedef struct {
  double lo[3], hi[3];
  int left, right; /* children; -1 for a leaf */
  int first, count;
} node;

struct kn_contact_surface {
  int nt, nv;
  const int* tri;   /* the body's surf (borrowed) */
  int* order;       /* triangles in leaf order */
  node* nodes;
  int nnodes;
  int* adj;         /* 3 * nt: triangle across edge (k, k+1), -1 when open */
  double* fn;       /* 3 * nt unit face normals */
  double* vn;       /* 3 * nv angle-weighted vertex pseudo-normals */
  double box[6];
  double h;         /* mean rest edge length */
};

//---- small vector helpers ----

static double dot3(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void cross3(const double* a, const double* b, double* c) {
  c[0] = a[1] * b[2] - a[2] * b[1], c[1] = a[2] * b[0] - a[0] * b[2], c[2] = a[0] * b[1] - a[1] * b[0];
}
static double norm3(const double* a) { return sqrt(dot3(a, a)); }

//---- tree over the surface triangles ----

static const double* g_cent; /* qsort context: centroids (build only, single-threaded use) */
static int g_axis;
static int cmp_cent(const void* x, const void* y) {
  int a = *(const int*)x, b = *(const int*)y;
  double ca = g_cent[3 * a + g_axis], cb = g_cent[3 * b + g_axis];
  if (ca < cb) return -1;
  if (ca > cb) return 1;
  return (a > b) - (a < b); /* ties by index: deterministic */
}

// (triangles order[first .. first + count)) => node index; median split on the longest axis
static int build(kn_contact_surface* s, const double* cent, int first, int count) {
  int id = s->nnodes++;
  node* nd = &s->nodes[id];
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int i = first; i < first + count; i++)
    for (int k = 0; k < 3; k++) lo[k] = fmin(lo[k], cent[3 * s->order[i] + k]), hi[k] = fmax(hi[k], cent[3 * s->order[i] + k]);
  nd->first = first, nd->count = count, nd->left = nd->right = -1;
  if (count <= LEAF) return id;
  int axis = 0;
  for (int k = 1; k < 3; k++)
    if (hi[k] - lo[k] > hi[axis] - lo[axis]) axis = k;
  g_cent = cent, g_axis = axis;
  qsort(s->order + first, (size_t)count, sizeof(int), cmp_cent);
  int half = count / 2;
  int l = build(s, cent, first, half);
  int r = build(s, cent, first + half, count - half);
  s->nodes[id].left = l, s->nodes[id].right = r;
  return id;
}

// (x) => leaf boxes from their triangles, internal boxes from their children (children come after)
static void refit(kn_contact_surface* s, const double* x) {
  for (int id = s->nnodes - 1; id >= 0; id--) {
    node* nd = &s->nodes[id];
    for (int k = 0; k < 3; k++) nd->lo[k] = INFINITY, nd->hi[k] = -INFINITY;
    if (nd->left < 0) {
      for (int i = nd->first; i < nd->first + nd->count; i++)
        for (int j = 0; j < 3; j++) {
          const double* p = x + 3 * s->tri[3 * s->order[i] + j];
          for (int k = 0; k < 3; k++) nd->lo[k] = fmin(nd->lo[k], p[k]), nd->hi[k] = fmax(nd->hi[k], p[k]);
        }
    } else {
      const node *a = &s->nodes[nd->left], *b = &s->nodes[nd->right];
      for (int k = 0; k < 3; k++) nd->lo[k] = fmin(a->lo[k], b->lo[k]), nd->hi[k] = fmax(a->hi[k], b->hi[k]);
    }
  }
}

typedef struct {
  long key;
  int t, e;
} edge_rec;
static int cmp_edge(const void* x, const void* y) {
  const edge_rec *a = x, *b = y;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return (a->t > b->t) - (a->t < b->t);
}

kn_contact_surface* kn_contact_surface_create(const kn_contact_fem* b) {
  kn_contact_surface* s = kn_calloc(1, sizeof *s);
  if (!s) return NULL;
  int nt = b->nsurf, nv = b->nvert;
  s->nt = nt, s->nv = nv, s->tri = b->surf;
  s->order = kn_calloc((size_t)nt + 1, sizeof *s->order);
  s->nodes = kn_calloc(2 * (size_t)nt + 1, sizeof *s->nodes);
  s->adj = kn_calloc(3 * (size_t)nt + 1, sizeof *s->adj);
  s->fn = kn_calloc(3 * (size_t)nt + 1, sizeof *s->fn);
  s->vn = kn_calloc(3 * (size_t)nv + 1, sizeof *s->vn);
  double* cent = kn_calloc(3 * (size_t)nt + 1, sizeof *cent);
  edge_rec* er = kn_calloc(3 * (size_t)nt + 1, sizeof *er);
  if (!s->order || !s->nodes || !s->adj || !s->fn || !s->vn || !cent || !er) {
    free(cent), free(er);
    kn_contact_surface_free(s);
    return NULL;
  }
  const double* X = b->X;
  double hsum = 0;
  for (int t = 0; t < nt; t++) {
    s->order[t] = t;
    const int* f = s->tri + 3 * t;
    for (int k = 0; k < 3; k++) {
      cent[3 * t + k] = (X[3 * f[0] + k] + X[3 * f[1] + k] + X[3 * f[2] + k]) / 3;
      int i = f[k], j = f[(k + 1) % 3];
      double d[3] = {X[3 * j] - X[3 * i], X[3 * j + 1] - X[3 * i + 1], X[3 * j + 2] - X[3 * i + 2]};
      hsum += norm3(d);
      /* undirected edge key: both triangles sharing it meet in the sort */
      int lo = i < j ? i : j, hi = i < j ? j : i;
      er[3 * t + k] = (edge_rec){(long)lo * nv + hi, t, k};
      s->adj[3 * t + k] = -1;
    }
  }
  s->h = nt > 0 ? hsum / (3.0 * nt) : 0.0;
  qsort(er, 3 * (size_t)nt, sizeof *er, cmp_edge);
  for (int i = 0; i + 1 < 3 * nt; i++)
    if (er[i].key == er[i + 1].key) {
      s->adj[3 * er[i].t + er[i].e] = er[i + 1].t;
      s->adj[3 * er[i + 1].t + er[i + 1].e] = er[i].t;
    }
  if (nt > 0) build(s, cent, 0, nt);
  free(cent), free(er);
  kn_contact_surface_update(s, b);
  return s;
}

void kn_contact_surface_free(kn_contact_surface* s) {
  if (!s) return;
  free(s->order), free(s->nodes), free(s->adj), free(s->fn), free(s->vn);
  free(s);
}

void kn_contact_surface_update(kn_contact_surface* s, const kn_contact_fem* b) {
  const double* x = b->x;
  for (int k = 0; k < 3; k++) s->box[k] = INFINITY, s->box[3 + k] = -INFINITY;
  for (int v = 0; v < s->nv; v++)
    for (int k = 0; k < 3; k++) s->box[k] = fmin(s->box[k], x[3 * v + k]), s->box[3 + k] = fmax(s->box[3 + k], x[3 * v + k]);
  refit(s, x);
  memset(s->vn, 0, 3 * (size_t)s->nv * sizeof *s->vn);
  for (int t = 0; t < s->nt; t++) {
    const int* f = s->tri + 3 * t;
    double u[3], w[3], n[3];
    for (int k = 0; k < 3; k++) u[k] = x[3 * f[1] + k] - x[3 * f[0] + k], w[k] = x[3 * f[2] + k] - x[3 * f[0] + k];
    cross3(u, w, n);
    double l = norm3(n);
    for (int k = 0; k < 3; k++) s->fn[3 * t + k] = l > 0 ? n[k] / l : 0.0;
    /* vertex pseudo-normal: sum of incident face normals weighted by the incident angle */
    for (int j = 0; j < 3; j++) {
      const double *p = x + 3 * f[j], *q = x + 3 * f[(j + 1) % 3], *r = x + 3 * f[(j + 2) % 3];
      double e1[3], e2[3];
      for (int k = 0; k < 3; k++) e1[k] = q[k] - p[k], e2[k] = r[k] - p[k];
      double c = dot3(e1, e2) / (norm3(e1) * norm3(e2));
      double ang = acos(fmax(-1.0, fmin(1.0, c)));
      if (!isfinite(ang)) ang = 0;
      for (int k = 0; k < 3; k++) s->vn[3 * f[j] + k] += ang * s->fn[3 * t + k];
    }
  }
}

int kn_contact_surface_near_fold(const kn_contact_surface* s, const kn_contact_fem* b, int t, const double p[3],
                                 double phi) {
  const double* n = s->fn + 3 * t;
  for (int k = 0; k < 3; k++) {
    int u = s->adj[3 * t + k];
    if (u < 0 || dot3(n, s->fn + 3 * u) > 0.70710678118654752) continue; /* open, or flatter than 45 degrees */
    const double* q = b->x + 3 * s->tri[3 * u];
    double r[3] = {p[0] - q[0], p[1] - q[1], p[2] - q[2]};
    if (fabs(dot3(r, s->fn + 3 * u)) < phi) return 1;
  }
  return 0;
}

const double* kn_contact_surface_box(const kn_contact_surface* s) { return s->box; }
double kn_contact_surface_edge_length(const kn_contact_surface* s) { return s->h; }

//---- queries ----

// closest point of triangle (a, b, c) to p => barycentric weights (Ericson, Real-Time Collision Detection 5.1.5)
static void closest_on_triangle(const double* p, const double* a, const double* b, const double* c, double w[3]) {
  double ab[3], ac[3], ap[3], bp[3], cp[3];
  for (int k = 0; k < 3; k++) ab[k] = b[k] - a[k], ac[k] = c[k] - a[k], ap[k] = p[k] - a[k], bp[k] = p[k] - b[k], cp[k] = p[k] - c[k];
  double d1 = dot3(ab, ap), d2 = dot3(ac, ap), d3 = dot3(ab, bp), d4 = dot3(ac, bp), d5 = dot3(ab, cp), d6 = dot3(ac, cp);
  if (d1 <= 0 && d2 <= 0) { w[0] = 1, w[1] = w[2] = 0; return; }
  if (d3 >= 0 && d4 <= d3) { w[1] = 1, w[0] = w[2] = 0; return; }
  double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) { double v = d1 / (d1 - d3); w[0] = 1 - v, w[1] = v, w[2] = 0; return; }
  if (d6 >= 0 && d5 <= d6) { w[2] = 1, w[0] = w[1] = 0; return; }
  double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) { double t = d2 / (d2 - d6); w[0] = 1 - t, w[2] = t, w[1] = 0; return; }
  double va = d3 * d6 - d5 * d4;
  if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
    double t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    w[1] = 1 - t, w[2] = t, w[0] = 0;
    return;
  }
  double den = 1 / (va + vb + vc);
  w[1] = vb * den, w[2] = vc * den, w[0] = 1 - w[1] - w[2];
}

// (triangle t, p) => squared distance to its closest point and the weights
static double tri_d2(const kn_contact_fem* b, int t, const double* p, double w[3]) {
  const int* f = b->surf + 3 * t;
  const double *a = b->x + 3 * f[0], *bb = b->x + 3 * f[1], *c = b->x + 3 * f[2];
  closest_on_triangle(p, a, bb, c, w);
  double d2 = 0;
  for (int k = 0; k < 3; k++) {
    double q = w[0] * a[k] + w[1] * bb[k] + w[2] * c[k] - p[k];
    d2 += q * q;
  }
  return d2;
}

// (nearest triangle, weights, sign) => the hit: phi, outward normal (from p - q, or the face when p is on it)
static void finish_hit(const kn_contact_fem* b, int t, const double w[3], const double* p, double sign, const double* fn,
                       kn_contact_surface_hit* hit) {
  const int* f = b->surf + 3 * t;
  double q[3];
  for (int k = 0; k < 3; k++) q[k] = w[0] * b->x[3 * f[0] + k] + w[1] * b->x[3 * f[1] + k] + w[2] * b->x[3 * f[2] + k];
  double d[3] = {p[0] - q[0], p[1] - q[1], p[2] - q[2]}, l = norm3(d);
  hit->tri = t;
  memcpy(hit->vert, f, sizeof hit->vert);
  memcpy(hit->wt, w, sizeof hit->wt);
  hit->phi = sign * l;
  if (l > 1e-12) {
    for (int k = 0; k < 3; k++) hit->n[k] = sign * d[k] / l;
  } else {
    memcpy(hit->n, fn, sizeof hit->n);
  }
}

static double box_d2(const node* nd, const double* p) {
  double d2 = 0;
  for (int k = 0; k < 3; k++) {
    double e = fmax(0.0, fmax(nd->lo[k] - p[k], p[k] - nd->hi[k]));
    d2 += e * e;
  }
  return d2;
}

void kn_contact_surface_query(const kn_contact_surface* s, const kn_contact_fem* b, const double p[3],
                              kn_contact_surface_hit* hit) {
  double best = INFINITY, bw[3] = {1, 0, 0};
  int bt = -1;
  int stack[128], top = 0;
  if (s->nnodes > 0) stack[top++] = 0;
  while (top > 0) {
    const node* nd = &s->nodes[stack[--top]];
    if (box_d2(nd, p) > best) continue; /* '>' keeps equal-distance ties for the lowest-index rule */
    if (nd->left < 0) {
      for (int i = nd->first; i < nd->first + nd->count; i++) {
        int t = s->order[i];
        double w[3], d2 = tri_d2(b, t, p, w);
        if (d2 < best || (d2 == best && t < bt)) best = d2, bt = t, memcpy(bw, w, sizeof bw);
      }
      continue;
    }
    /* nearer child last so it is popped first */
    double dl = box_d2(&s->nodes[nd->left], p), dr = box_d2(&s->nodes[nd->right], p);
    if (top + 2 > 128) continue; /* depth ~ log2(nt / LEAF) + 1: never for any real mesh */
    if (dl <= dr) stack[top++] = nd->right, stack[top++] = nd->left;
    else stack[top++] = nd->left, stack[top++] = nd->right;
  }
  if (bt < 0) {
    memset(hit, 0, sizeof *hit);
    hit->phi = INFINITY, hit->tri = -1;
    return;
  }
  /* sign by the pseudo-normal of the nearest feature: a vertex (one weight 1), an edge (one weight
   * 0: the sum of the two faces' normals), else the face */
  const int* f = s->tri + 3 * bt;
  double pn[3];
  int zeros = (bw[0] == 0) + (bw[1] == 0) + (bw[2] == 0);
  if (zeros >= 2) {
    int j = bw[0] == 1 ? 0 : bw[1] == 1 ? 1 : 2;
    memcpy(pn, s->vn + 3 * f[j], sizeof pn);
  } else if (zeros == 1) {
    int j = bw[0] == 0 ? 1 : bw[1] == 0 ? 2 : 0; /* edge (j, j+1) is the one opposite the zero */
    int o = s->adj[3 * bt + j];
    for (int k = 0; k < 3; k++) pn[k] = s->fn[3 * bt + k] + (o >= 0 ? s->fn[3 * o + k] : 0.0);
  } else {
    memcpy(pn, s->fn + 3 * bt, sizeof pn);
  }
  double q[3];
  for (int k = 0; k < 3; k++) q[k] = p[k] - (bw[0] * b->x[3 * f[0] + k] + bw[1] * b->x[3 * f[1] + k] + bw[2] * b->x[3 * f[2] + k]);
  double sign = dot3(q, pn) < 0 ? -1.0 : 1.0;
  finish_hit(b, bt, bw, p, sign, s->fn + 3 * bt, hit);
}

void kn_contact_surface_query_brute(const kn_contact_fem* b, const double p[3], kn_contact_surface_hit* hit) {
  const double* x = b->x;
  double best = INFINITY, wind = 0, bw[3] = {1, 0, 0};
  int bt = -1;
  for (int t = 0; t < b->nsurf; t++) {
    double w[3], d2 = tri_d2(b, t, p, w);
    if (d2 < best) best = d2, bt = t, memcpy(bw, w, sizeof bw);
    /* solid angle of the triangle seen from p (Van Oosterom and Strackee 1983): inside when the
     * sum is 4 pi */
    const int* f = b->surf + 3 * t;
    double A[3], B[3], C[3];
    for (int k = 0; k < 3; k++) A[k] = x[3 * f[0] + k] - p[k], B[k] = x[3 * f[1] + k] - p[k], C[k] = x[3 * f[2] + k] - p[k];
    double la = norm3(A), lb = norm3(B), lc = norm3(C), BC[3];
    cross3(B, C, BC);
    double det = dot3(A, BC);
    double den = la * lb * lc + dot3(A, B) * lc + dot3(A, C) * lb + dot3(B, C) * la;
    wind += 2 * atan2(det, den);
  }
  if (bt < 0) {
    memset(hit, 0, sizeof *hit);
    hit->phi = INFINITY, hit->tri = -1;
    return;
  }
  const int* f = b->surf + 3 * bt;
  double u[3], v[3], n[3];
  for (int k = 0; k < 3; k++) u[k] = x[3 * f[1] + k] - x[3 * f[0] + k], v[k] = x[3 * f[2] + k] - x[3 * f[0] + k];
  cross3(u, v, n);
  double l = norm3(n);
  for (int k = 0; k < 3; k++) n[k] /= l;
  finish_hit(b, bt, bw, p, wind > 2 * 3.14159265358979323846 ? -1.0 : 1.0, n, hit);
}

