/* Contact detection of FEM bodies: vertex-vs-rigid, vertex-vs-FEM-surface and rigid-feature-vs-
 * FEM-face, over a per-body AABB tree of the deformed surface (conventions in sim/fem_contact.h). */
#include "sim/fem_contact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/collision_internal.h" /* mesh colliders' vertices (kn_mesh_data) */

#define LEAF 4 /* triangles per leaf */
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef struct {
  double lo[3], hi[3];
  int left, right; /* children; -1 for a leaf */
  int first, count;
} node;

struct kn_fem_surface {
  int nt, nv;
  const int* tri;   /* the body's mesh.surf */
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
static int build(kn_fem_surface* s, const double* cent, int first, int count) {
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
static void refit(kn_fem_surface* s, const double* x) {
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

kn_fem_surface* kn_fem_surface_create(const kn_fem_body* b) {
  kn_fem_surface* s = kn_calloc(1, sizeof *s);
  if (!s) return NULL;
  int nt = b->mesh.nsurf, nv = b->mesh.nvert;
  s->nt = nt, s->nv = nv, s->tri = b->mesh.surf;
  s->order = kn_calloc((size_t)nt + 1, sizeof *s->order);
  s->nodes = kn_calloc(2 * (size_t)nt + 1, sizeof *s->nodes);
  s->adj = kn_calloc(3 * (size_t)nt + 1, sizeof *s->adj);
  s->fn = kn_calloc(3 * (size_t)nt + 1, sizeof *s->fn);
  s->vn = kn_calloc(3 * (size_t)nv + 1, sizeof *s->vn);
  double* cent = kn_calloc(3 * (size_t)nt + 1, sizeof *cent);
  edge_rec* er = kn_calloc(3 * (size_t)nt + 1, sizeof *er);
  if (!s->order || !s->nodes || !s->adj || !s->fn || !s->vn || !cent || !er) {
    free(cent), free(er);
    kn_fem_surface_free(s);
    return NULL;
  }
  const double* X = b->mesh.X;
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
  kn_fem_surface_update(s, b);
  return s;
}

void kn_fem_surface_free(kn_fem_surface* s) {
  if (!s) return;
  free(s->order), free(s->nodes), free(s->adj), free(s->fn), free(s->vn);
  free(s);
}

void kn_fem_surface_update(kn_fem_surface* s, const kn_fem_body* b) {
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

const double* kn_fem_surface_box(const kn_fem_surface* s) { return s->box; }
double kn_fem_surface_edge_length(const kn_fem_surface* s) { return s->h; }

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
static double tri_d2(const kn_fem_body* b, int t, const double* p, double w[3]) {
  const int* f = b->mesh.surf + 3 * t;
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
static void finish_hit(const kn_fem_body* b, int t, const double w[3], const double* p, double sign, const double* fn,
                       kn_fem_surface_hit* hit) {
  const int* f = b->mesh.surf + 3 * t;
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

void kn_fem_surface_query(const kn_fem_surface* s, const kn_fem_body* b, const double p[3], kn_fem_surface_hit* hit) {
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

void kn_fem_surface_query_brute(const kn_fem_body* b, const double p[3], kn_fem_surface_hit* hit) {
  const double* x = b->x;
  double best = INFINITY, wind = 0, bw[3] = {1, 0, 0};
  int bt = -1;
  for (int t = 0; t < b->mesh.nsurf; t++) {
    double w[3], d2 = tri_d2(b, t, p, w);
    if (d2 < best) best = d2, bt = t, memcpy(bw, w, sizeof bw);
    /* solid angle of the triangle seen from p (Van Oosterom and Strackee 1983): inside when the
     * sum is 4 pi */
    const int* f = b->mesh.surf + 3 * t;
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
  const int* f = b->mesh.surf + 3 * bt;
  double u[3], v[3], n[3];
  for (int k = 0; k < 3; k++) u[k] = x[3 * f[1] + k] - x[3 * f[0] + k], v[k] = x[3 * f[2] + k] - x[3 * f[0] + k];
  cross3(u, v, n);
  double l = norm3(n);
  for (int k = 0; k < 3; k++) n[k] /= l;
  finish_hit(b, bt, bw, p, wind > 2 * 3.14159265358979323846 ? -1.0 : 1.0, n, hit);
}

double kn_sim_fem_surface_distance(const kn_fem_body* b, const double x[3]) {
  kn_fem_surface_hit h;
  kn_fem_surface_query_brute(b, x, &h);
  return h.phi;
}

//---- detection ----

kn_status kn_fem_detector_create(const kn_world* w, kn_fem_detector** out, kn_error* err) {
  kn_fem_detector* d = kn_calloc(1, sizeof *d);
  if (!d) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  d->rigid_features = 1;
  d->surf = kn_calloc((size_t)w->nfem + 1, sizeof *d->surf);
  int maxv = 1;
  for (int i = 0; i < w->nfem; i++) maxv = w->fems[i].body->mesh.nvert > maxv ? w->fems[i].body->mesh.nvert : maxv;
  d->stamp = kn_calloc((size_t)maxv, sizeof *d->stamp);
  int ok = d->surf && d->stamp;
  if (ok) d->nfem = w->nfem;
  for (int i = 0; ok && i < w->nfem; i++) ok = (d->surf[i] = kn_fem_surface_create(w->fems[i].body)) != NULL;
  if (!ok) {
    kn_fem_detector_free(d);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  *out = d;
  return KN_OK;
}

void kn_fem_detector_free(kn_fem_detector* d) {
  if (!d) return;
  for (int i = 0; d->surf && i < d->nfem; i++) kn_fem_surface_free(d->surf[i]);
  free(d->surf), free(d->c), free(d->stamp), free(d->pts);
  free(d);
}

static kn_status push(kn_fem_detector* d, const kn_fem_contact* c, kn_error* err) {
  if (d->nc == d->cap) {
    int cap = d->cap ? 2 * d->cap : 64;
    kn_fem_contact* n = realloc(d->c, (size_t)cap * sizeof *n);
    if (!n) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
    d->c = n, d->cap = cap;
  }
  d->c[d->nc++] = *c;
  return KN_OK;
}

// unit n => R_WC with columns t1, t2, n (t1 from the world axis least aligned with n)
static void frame_from_normal(const double n[3], double R[9]) {
  double a[3] = {0, 0, 0};
  int k = fabs(n[0]) < fabs(n[1]) ? (fabs(n[0]) < fabs(n[2]) ? 0 : 2) : (fabs(n[1]) < fabs(n[2]) ? 1 : 2);
  a[k] = 1;
  double dd = dot3(a, n), t1[3], t2[3];
  for (int j = 0; j < 3; j++) t1[j] = a[j] - dd * n[j];
  double l = norm3(t1);
  for (int j = 0; j < 3; j++) t1[j] /= l;
  cross3(n, t1, t2);
  for (int j = 0; j < 3; j++) R[3 * j] = t1[j], R[3 * j + 1] = t2[j], R[3 * j + 2] = n[j];
}

/* 1 when vertex v of F is attached to body `body` of tree `tree` (its contacts with that body's
 * colliders are left out: the attachment holds it there) */
static int attached_to(const kn_world_fem* F, int v, int tree, int body) {
  const kn_fem_body* b = F->body;
  for (int k = 0; k < b->nattach; k++)
    if (b->attach_vertex[k] == v && F->attach_tree[b->attach_body[k]] == tree && F->attach_link[b->attach_body[k]] == body)
      return 1;
  return 0;
}

static void query(const kn_fem_detector* d, int fi, const kn_fem_body* b, const double* p, kn_fem_surface_hit* h) {
  if (d->brute)
    kn_fem_surface_query_brute(b, p, h);
  else
    kn_fem_surface_query(d->surf[fi], b, p, h);
}

static int outside_box(const double* box, const double* p, double pad) {
  for (int k = 0; k < 3; k++)
    if (p[k] < box[k] - pad || p[k] > box[3 + k] + pad) return 1;
  return 0;
}

// append the world point X (local point pl) to the feature list
static kn_status add_point(kn_fem_detector* d, int* n, const kn_pose* X, const double pl[3], kn_error* err) {
  if (*n == d->pts_cap) {
    int cap = d->pts_cap ? 2 * d->pts_cap : 256;
    double* q = realloc(d->pts, 3 * (size_t)cap * sizeof *q);
    if (!q) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
    d->pts = q, d->pts_cap = cap;
  }
  kn_pose_apply(X, pl, d->pts + 3 * (*n)++);
  return KN_OK;
}

/* a sphere of centre c (world) and radius r => its point deepest toward FEM body fi: c - r n, n the
 * outward normal of the surface point nearest c (exact for a sphere over a locally flat face) */
static kn_status sphere_point(kn_fem_detector* d, int fi, const kn_fem_body* b, const double c[3], double r,
                              const double* axis, int* n, kn_error* err) {
  kn_fem_surface_hit h;
  query(d, fi, b, c, &h);
  if (h.tri < 0) return KN_OK;
  double dir[3] = {h.n[0], h.n[1], h.n[2]};
  if (axis) { /* a cylinder's side: the deepest point of the cross-section circle */
    double a = dot3(dir, axis);
    for (int k = 0; k < 3; k++) dir[k] -= a * axis[k];
    double l = norm3(dir);
    if (!(l > 1e-9)) return KN_OK;
    for (int k = 0; k < 3; k++) dir[k] /= l;
  }
  kn_pose I;
  kn_pose_identity(&I);
  double p[3] = {c[0] - r * dir[0], c[1] - r * dir[1], c[2] - r * dir[2]};
  return add_point(d, n, &I, p, err);
}

/* (collider k at X, FEM body fi) => its feature points in the world (d->pts, *n of them): box corners
 * and edge points every ~h, the deepest points of spheres, capsule segment spheres, cylinder rims,
 * cap centres and side lines, mesh vertices; none for a half-space */
static kn_status features(kn_fem_detector* d, const kn_world* w, int k, const kn_pose* X, int fi, double h, int* n,
                          kn_error* err) {
  const kn_shape* sh = w->colliders[k].c.shape;
  const kn_fem_body* b = w->fems[fi].body;
  kn_status st = KN_OK;
  *n = 0;
  const double* R = X->R;
  double axis[3] = {R[2], R[5], R[8]}; /* local z in the world (row-major R) */
  switch (sh->type) {
    case KN_SHAPE_BOX: {
      double e[3] = {sh->size[0] / 2, sh->size[1] / 2, sh->size[2] / 2};
      for (int c = 0; c < 8 && !st; c++) {
        double pl[3] = {c & 1 ? e[0] : -e[0], c & 2 ? e[1] : -e[1], c & 4 ? e[2] : -e[2]};
        st = add_point(d, n, X, pl, err);
      }
      /* 12 edges: along axis a, at the 4 sign combinations of the other two; interior points only */
      for (int a = 0; a < 3 && !st; a++) {
        int m = (int)ceil(2 * e[a] / h);
        if (m > 64) m = 64;
        for (int s = 0; s < 4 && !st; s++)
          for (int j = 1; j < m && !st; j++) {
            double pl[3];
            int o1 = (a + 1) % 3, o2 = (a + 2) % 3;
            pl[a] = -e[a] + 2 * e[a] * j / m;
            pl[o1] = s & 1 ? e[o1] : -e[o1];
            pl[o2] = s & 2 ? e[o2] : -e[o2];
            st = add_point(d, n, X, pl, err);
          }
      }
      break;
    }
    case KN_SHAPE_SPHERE:
      st = sphere_point(d, fi, b, X->p, sh->size[0], NULL, n, err);
      break;
    case KN_SHAPE_CAPSULE:
    case KN_SHAPE_CYLINDER: {
      double r = sh->size[0], L = sh->size[1];
      int m = (int)ceil(L / h);
      if (m < 1) m = 1;
      if (m > 64) m = 64;
      int cyl = sh->type == KN_SHAPE_CYLINDER;
      for (int j = 0; j <= m && !st; j++) {
        double c[3];
        for (int q = 0; q < 3; q++) c[q] = X->p[q] + (-L / 2 + L * j / m) * axis[q];
        st = sphere_point(d, fi, b, c, r, cyl ? axis : NULL, n, err);
      }
      if (cyl) { /* rims and cap centres */
        int nr = (int)ceil(2 * M_PI * r / h);
        if (nr < 8) nr = 8;
        if (nr > 64) nr = 64;
        for (int s = -1; s <= 1 && !st; s += 2) {
          double pl[3] = {0, 0, s * L / 2};
          st = add_point(d, n, X, pl, err);
          for (int j = 0; j < nr && !st; j++) {
            double an = 2 * M_PI * j / nr, q[3] = {r * cos(an), r * sin(an), s * L / 2};
            st = add_point(d, n, X, q, err);
          }
        }
      }
      break;
    }
    case KN_SHAPE_MESH: {
      const kn_mesh_data* md = w->collision ? w->collision->mesh[k] : NULL;
      for (int v = 0; md && v < md->nv && !st; v++) st = add_point(d, n, X, md->v + 3 * v, err);
      break;
    }
    default:
      break; /* half-space: the vertices carry it */
  }
  return st;
}

/* world AABB of collider k (lo, hi); 0 for a half-space (unbounded) */
static int collider_box(const kn_world* w, int k, const kn_pose* X, double box[6]) {
  const kn_shape* sh = w->colliders[k].c.shape;
  double e[3];
  switch (sh->type) {
    case KN_SHAPE_SPHERE: e[0] = e[1] = e[2] = sh->size[0]; break;
    case KN_SHAPE_BOX: e[0] = sh->size[0] / 2, e[1] = sh->size[1] / 2, e[2] = sh->size[2] / 2; break;
    case KN_SHAPE_CAPSULE:
    case KN_SHAPE_CYLINDER: e[0] = e[1] = sh->size[0], e[2] = sh->size[1] / 2 + sh->size[0]; break;
    case KN_SHAPE_MESH: {
      const kn_mesh_data* md = w->collision ? w->collision->mesh[k] : NULL;
      if (!md) return 0;
      /* the local box centred: half extents about its middle */
      double c[3], cw[3];
      for (int q = 0; q < 3; q++) c[q] = (md->lo[q] + md->hi[q]) / 2, e[q] = (md->hi[q] - md->lo[q]) / 2;
      kn_pose_apply(X, c, cw);
      for (int q = 0; q < 3; q++) {
        double r = 0;
        for (int j = 0; j < 3; j++) r += fabs(X->R[3 * q + j]) * e[j];
        box[q] = cw[q] - r, box[3 + q] = cw[q] + r;
      }
      return 1;
    }
    default: return 0;
  }
  for (int q = 0; q < 3; q++) {
    double r = 0;
    for (int j = 0; j < 3; j++) r += fabs(X->R[3 * q + j]) * e[j];
    box[q] = X->p[q] - r, box[3 + q] = X->p[q] + r;
  }
  return 1;
}

kn_status kn_fem_detect(kn_fem_detector* d, const kn_world* w, const kn_pose* X_WG, kn_error* err) {
  d->nc = 0;
  double margin = w->scene->margin;
  for (int i = 0; i < w->nfem; i++) kn_fem_surface_update(d->surf[i], w->fems[i].body);
  kn_status st;

  /* 1. vertex contacts, in the order of the first FEM detection */
  for (int fi = 0; fi < w->nfem; fi++) {
    const kn_world_fem* F = &w->fems[fi];
    const kn_fem_body* b = F->body;
    for (int s = 0; s < F->nsurf_vert; s++) {
      int v = F->surf_vert[s];
      if (b->fixed[v]) continue;
      const double* x = b->x + 3 * v;
      kn_fem_contact c = {.b = {.fem = fi, .collider = -1, .n = 1, .vert = {v}, .wt = {1}}};
      memcpy(c.p, x, sizeof c.p);
      for (int k = 0; w->collision && k < w->ncollider; k++) {
        double g[3];
        if (b->nattach > 0 && attached_to(F, v, w->colliders[k].tree, w->colliders[k].body)) continue;
        double phi = kn_collider_signed_distance(w->collision, k, &X_WG[k], x, g);
        if (!(phi < margin)) continue;
        c.a = (kn_fem_side){.fem = -1, .collider = k};
        c.phi = phi;
        c.kind = KN_FEM_VERTEX_RIGID;
        frame_from_normal(g, c.R);
        c.mat = kn_contact_material_combine(&w->colliders[k].soft, &F->material);
        if ((st = push(d, &c, err))) return st;
      }
      for (int gi = 0; gi < w->nfem; gi++) {
        if (gi == fi) continue;
        if (outside_box(kn_fem_surface_box(d->surf[gi]), x, margin)) continue;
        kn_fem_surface_hit h;
        query(d, gi, w->fems[gi].body, x, &h);
        if (!(h.phi < margin)) continue;
        c.a = (kn_fem_side){.fem = gi, .collider = -1, .n = 3};
        memcpy(c.a.vert, h.vert, sizeof c.a.vert);
        memcpy(c.a.wt, h.wt, sizeof c.a.wt);
        c.phi = h.phi;
        c.kind = KN_FEM_VERTEX_FEM;
        frame_from_normal(h.n, c.R);
        c.mat = kn_contact_material_combine(&w->fems[gi].material, &F->material);
        if ((st = push(d, &c, err))) return st;
      }
    }
  }
  if (!d->rigid_features || !w->collision) return KN_OK;

  /* 2. rigid feature points in FEM faces; B = the nearest triangle, A = the collider */
  int nvertex_contacts = d->nc;
  for (int fi = 0; fi < w->nfem; fi++) {
    const kn_world_fem* F = &w->fems[fi];
    const kn_fem_body* b = F->body;
    const double* fbox = kn_fem_surface_box(d->surf[fi]);
    double h = kn_fem_surface_edge_length(d->surf[fi]);
    if (!(h > 0)) continue;
    for (int k = 0; k < w->ncollider; k++) {
      double cb[6];
      if (!collider_box(w, k, &X_WG[k], cb)) continue;
      int apart = 0;
      for (int q = 0; q < 3; q++) apart |= cb[q] > fbox[3 + q] + margin || cb[3 + q] < fbox[q] - margin;
      if (apart) continue;
      /* vertices of this body already touching collider k (the double-counting rule) */
      unsigned gen = ++d->stamp_gen;
      for (int c = 0; c < nvertex_contacts; c++)
        if (d->c[c].kind == KN_FEM_VERTEX_RIGID && d->c[c].b.fem == fi && d->c[c].a.collider == k)
          d->stamp[d->c[c].b.vert[0]] = gen;
      int np;
      if ((st = features(d, w, k, &X_WG[k], fi, h, &np, err))) return st;
      int first = d->nc;
      for (int i = 0; i < np; i++) {
        const double* p = d->pts + 3 * i;
        if (outside_box(fbox, p, margin)) continue;
        kn_fem_surface_hit hit;
        query(d, fi, b, p, &hit);
        if (!(hit.phi < margin)) continue;
        int skip = 0, nfree = 0;
        for (int j = 0; j < 3; j++) {
          int v = hit.vert[j];
          if (hit.wt[j] != 0 && b->free_index[v] >= 0) nfree++;
          if (d->stamp[v] == gen) skip = 1;
          if (b->nattach > 0 && attached_to(F, v, w->colliders[k].tree, w->colliders[k].body)) skip = 1;
        }
        if (skip || nfree == 0) continue;
        /* two samples landing on the same spot (a capsule standing on the face) would be one
         * contact counted twice: keep the first within h / 4 */
        for (int c = first; c < d->nc && !skip; c++) {
          double e[3] = {d->c[c].p[0] - p[0], d->c[c].p[1] - p[1], d->c[c].p[2] - p[2]};
          skip = dot3(e, e) < h * h / 16;
        }
        if (skip) continue;
        kn_fem_contact c = {.a = {.fem = -1, .collider = k}, .b = {.fem = fi, .collider = -1, .n = 3}};
        memcpy(c.b.vert, hit.vert, sizeof c.b.vert);
        memcpy(c.b.wt, hit.wt, sizeof c.b.wt);
        memcpy(c.p, p, sizeof c.p);
        c.phi = hit.phi;
        c.kind = KN_FEM_RIGID_FACE;
        double nrm[3] = {-hit.n[0], -hit.n[1], -hit.n[2]}; /* from the rigid body into the FEM body */
        frame_from_normal(nrm, c.R);
        c.mat = kn_contact_material_combine(&w->colliders[k].soft, &F->material);
        if ((st = push(d, &c, err))) return st;
      }
    }
  }
  return KN_OK;
}

kn_status kn_fem_contacts_record(kn_world* w, const kn_fem_contact* c, int nc, const kn_sap_problem* prob,
                                 const double* gamma, int first, double dt, kn_error* err) {
  if (nc > w->fem_contact_cap) {
    int cap = w->fem_contact_cap ? w->fem_contact_cap : 64;
    while (cap < nc) cap *= 2;
    kn_world_fem_contact* n = realloc(w->fem_contacts, (size_t)cap * sizeof *n);
    if (!n) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
    w->fem_contacts = n, w->fem_contact_cap = cap;
  }
  for (int i = 0; i < nc; i++) {
    const kn_fem_contact* fc = &c[i];
    kn_world_fem_contact* o = &w->fem_contacts[i];
    const double* g = gamma + kn_sap_constraint_offset(prob, first + i);
    o->fem_b = fc->b.fem, o->a_collider = fc->a.fem >= 0 ? -1 : fc->a.collider, o->a_fem = fc->a.fem;
    o->kind = (int)fc->kind;
    o->phi = fc->phi;
    memcpy(o->p, fc->p, sizeof o->p);
    for (int a = 0; a < 3; a++) {
      o->n[a] = fc->R[3 * a + 2];
      o->f[a] = (fc->R[3 * a] * g[0] + fc->R[3 * a + 1] * g[1] + fc->R[3 * a + 2] * g[2]) / dt;
    }
  }
  w->nfem_contact = nc;
  return KN_OK;
}
