/* Swept pair broad phase for mesh-mesh contact (IPC digest §4.3, §7.4): the vertex-triangle and
 * edge-edge pairs of two triangle surfaces (or of one, for self-contact) whose boxes, swept over
 * the step (the box of each primitive's vertices at the start and at the predicted end) and
 * inflated by half the margin each, overlap. Any pair whose distance falls below the margin at
 * some time of a linear motion between the two positions is among them (a point of a primitive
 * stays in its swept box, and two points closer than the margin have boxes closer than the
 * margin on every axis).
 *
 * Sort and sweep along the axis where the primitives' union box is longest: both sets' boxes
 * sorted by their low end (ties by set, then index, so the order is total), each box tested
 * against the other set's boxes still open. The pairs are then sorted by (first, second) index,
 * so the answer does not depend on the axis or on the sort. Memory: the scratch grows to the
 * largest call and is reused; a call allocates only when it needs more. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/contact.h"

typedef struct {
  double lo;    /* low end along the sweep axis */
  int set, idx; /* set 0 or 1, primitive index in it */
} sweep_key;

struct kn_swept_scratch {
  double* box[2];     /* 6 per primitive: lo[3], hi[3] */
  int box_cap[2];
  sweep_key* key;
  int key_cap;
  int* open[2];       /* indices into key of the boxes still open, per set */
  int open_cap[2];
  int* out[3];        /* vt_ab, vt_ba, ee: 2 ints per pair */
  int out_n[3], out_cap[3];
};

kn_swept_scratch* kn_swept_scratch_create(void) { return kn_calloc(1, sizeof(kn_swept_scratch)); }

void kn_swept_scratch_free(kn_swept_scratch* s) {
  if (!s) return;
  for (int k = 0; k < 2; k++) free(s->box[k]), free(s->open[k]);
  for (int k = 0; k < 3; k++) free(s->out[k]);
  free(s->key);
  free(s);
}

// (array *p of *cap elements of size sz, need n) => grown to >= n (doubling); 0 out of memory
static int grow(void** p, int* cap, int n, size_t sz) {
  if (n <= *cap) return 1;
  int c = *cap ? *cap : 64;
  while (c < n) c *= 2;
  void* q = realloc(*p, (size_t)c * sz);
  if (!q) return 0;
  *p = q, *cap = c;
  return 1;
}

//---- boxes ----

/* the kinds of primitive a set can hold: vertices (1 index each), edges (2), triangles (3) */
typedef struct {
  int n, arity;
  const int* idx;       /* arity * n vertex indices; NULL for vertices: the list below */
  const int* vert_list; /* vertices only: the vertices taking part (NULL: 0 .. n-1) */
} prim_set;

// (surface, primitive set, half margin) => one box per primitive in out (6 doubles each)
static void boxes(const kn_swept_surface* m, const prim_set* ps, double half, double* out) {
  for (int i = 0; i < ps->n; i++) {
    double* b = out + 6 * i;
    for (int k = 0; k < 3; k++) b[k] = INFINITY, b[3 + k] = -INFINITY;
    for (int a = 0; a < ps->arity; a++) {
      int v = ps->idx ? ps->idx[ps->arity * i + a] : ps->vert_list ? ps->vert_list[i] : i;
      for (int t = 0; t < 2; t++) {
        const double* x = t == 0 ? m->x0 : m->x1;
        if (!x) continue;
        for (int k = 0; k < 3; k++) b[k] = fmin(b[k], x[3 * v + k]), b[3 + k] = fmax(b[3 + k], x[3 * v + k]);
      }
    }
    for (int k = 0; k < 3; k++) b[k] -= half, b[3 + k] += half;
  }
}

static int cmp_key(const void* pa, const void* pb) {
  const sweep_key *a = pa, *b = pb;
  if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
  if (a->set != b->set) return a->set - b->set;
  return (a->idx > b->idx) - (a->idx < b->idx);
}
static int cmp_pair(const void* pa, const void* pb) {
  const int *a = pa, *b = pb;
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  return (a[1] > b[1]) - (a[1] < b[1]);
}

//---- one sweep ----

/* Which pairs are kept besides box overlap: vertex-triangle pairs whose vertex is a corner of the
 * triangle and edge-edge pairs sharing a vertex are dropped on one surface (self-contact); on one
 * surface an edge-edge pair is reported once, (smaller, larger). */
typedef struct {
  const prim_set* set[2];
  const int* idx[2]; /* vertex indices per primitive (NULL: a vertex set), arity per set */
  int arity[2];
  const int* vlist;  /* vertex set 0's list (NULL: identity) */
  int self;          /* both sets on one surface */
  int same_set;      /* set 1 is set 0 (self edge-edge): one sweep over one list */
} sweep_rule;

static int shares_vertex(const sweep_rule* r, int i, int j) {
  int va[3], vb[3];
  for (int a = 0; a < r->arity[0]; a++)
    va[a] = r->idx[0] ? r->idx[0][r->arity[0] * i + a] : r->vlist ? r->vlist[i] : i;
  for (int b = 0; b < r->arity[1]; b++) vb[b] = r->idx[1][r->arity[1] * j + b];
  for (int a = 0; a < r->arity[0]; a++)
    for (int b = 0; b < r->arity[1]; b++)
      if (va[a] == vb[b]) return 1;
  return 0;
}

static int overlap(const double* a, const double* b) {
  return a[0] <= b[3] && b[0] <= a[3] && a[1] <= b[4] && b[1] <= a[4] && a[2] <= b[5] && b[2] <= a[5];
}

// (boxes of both sets, rule, axis) => the overlapping pairs into s->out[slot], sorted
static int sweep(kn_swept_scratch* s, const sweep_rule* r, int axis, int slot) {
  int n0 = r->set[0]->n, n1 = r->same_set ? 0 : r->set[1]->n, nk = n0 + n1;
  s->out_n[slot] = 0;
  if (!grow((void**)&s->key, &s->key_cap, nk, sizeof *s->key)) return 0;
  for (int i = 0; i < n0; i++) s->key[i] = (sweep_key){s->box[0][6 * i + axis], 0, i};
  for (int j = 0; j < n1; j++) s->key[n0 + j] = (sweep_key){s->box[1][6 * j + axis], 1, j};
  qsort(s->key, (size_t)nk, sizeof *s->key, cmp_key);
  int nopen[2] = {0, 0};
  for (int t = 0; t < 2; t++)
    if (!grow((void**)&s->open[t], &s->open_cap[t], nk, sizeof(int))) return 0;
  for (int k = 0; k < nk; k++) {
    sweep_key key = s->key[k];
    const double* bk = s->box[key.set] + 6 * key.idx;
    /* the other set's open boxes: drop those that ended before this one starts, test the rest */
    int other = r->same_set ? 0 : 1 - key.set, m = 0;
    for (int o = 0; o < nopen[other]; o++) {
      sweep_key ko = s->key[s->open[other][o]];
      const double* bo = s->box[ko.set] + 6 * ko.idx;
      if (bo[3 + axis] < key.lo) continue;
      s->open[other][m++] = s->open[other][o];
      if (!overlap(bk, bo)) continue;
      int i = key.set == 0 ? key.idx : ko.idx, j = key.set == 0 ? ko.idx : key.idx;
      if (r->same_set && i > j) { int t = i; i = j, j = t; }
      if (r->self && shares_vertex(r, i, j)) continue;
      if (!r->idx[0] && r->vlist) i = r->vlist[i]; /* a vertex is reported by its index in the surface */
      int n = s->out_n[slot];
      if (!grow((void**)&s->out[slot], &s->out_cap[slot], 2 * (n + 1), sizeof(int))) return 0;
      s->out[slot][2 * n] = i, s->out[slot][2 * n + 1] = j;
      s->out_n[slot] = n + 1;
    }
    nopen[other] = m;
    s->open[key.set][nopen[key.set]++] = k;
  }
  if (s->out_n[slot] > 1) qsort(s->out[slot], (size_t)s->out_n[slot], 2 * sizeof(int), cmp_pair);
  return 1;
}

//---- the query ----

// (surface) => whether its counts, arrays and indices are usable
static int surface_ok(const kn_swept_surface* m) {
  if (!m || m->nvert < 0 || m->ntri < 0 || m->nedge < 0 || (m->nvert > 0 && !m->x0)) return 0;
  if ((m->ntri > 0 && !m->tri) || (m->nedge > 0 && !m->edge)) return 0;
  for (int i = 0; i < 3 * m->ntri; i++)
    if (m->tri[i] < 0 || m->tri[i] >= m->nvert) return 0;
  for (int i = 0; i < 2 * m->nedge; i++)
    if (m->edge[i] < 0 || m->edge[i] >= m->nvert) return 0;
  for (int i = 0; m->vert && i < m->nvert_used; i++)
    if (m->vert[i] < 0 || m->vert[i] >= m->nvert) return 0;
  return 1;
}

// (the two sets' boxes) => the axis along which their union is longest
static int sweep_axis(const kn_swept_scratch* s, int n0, int n1) {
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < (t ? n1 : n0); i++)
      for (int k = 0; k < 3; k++) lo[k] = fmin(lo[k], s->box[t][6 * i + k]), hi[k] = fmax(hi[k], s->box[t][6 * i + 3 + k]);
  int axis = 0;
  for (int k = 1; k < 3; k++)
    if (hi[k] - lo[k] > hi[axis] - lo[axis]) axis = k;
  return axis;
}

// (scratch, surfaces p (its primitives ps) and q (qs), half margin, rule, slot) => one kind of pair
static int find_kind(kn_swept_scratch* s, const kn_swept_surface* p, const prim_set* ps, const kn_swept_surface* q,
                     const prim_set* qs, double half, sweep_rule* r, int slot) {
  s->out_n[slot] = 0;
  if (ps->n == 0 || qs->n == 0) return 1;
  if (!grow((void**)&s->box[0], &s->box_cap[0], 6 * ps->n, sizeof(double))) return 0;
  boxes(p, ps, half, s->box[0]);
  if (!r->same_set) {
    if (!grow((void**)&s->box[1], &s->box_cap[1], 6 * qs->n, sizeof(double))) return 0;
    boxes(q, qs, half, s->box[1]);
  }
  r->set[0] = ps, r->set[1] = qs;
  r->idx[0] = ps->idx, r->idx[1] = qs->idx, r->arity[0] = ps->arity, r->arity[1] = qs->arity;
  r->vlist = ps->vert_list;
  return sweep(s, r, sweep_axis(s, ps->n, r->same_set ? 0 : qs->n), slot);
}

kn_status kn_swept_pairs_find(kn_swept_scratch* s, const kn_swept_surface* a, const kn_swept_surface* b, double margin,
                              kn_swept_pairs* out, kn_error* err) {
  memset(out, 0, sizeof *out);
  if (!s) return kn_fail(err, KN_ERR_INVALID, "swept pairs: no scratch");
  if (!surface_ok(a) || (b && !surface_ok(b)))
    return kn_fail(err, KN_ERR_INVALID, "swept pairs: surface %s has a negative count, a missing array or an index "
                   "out of range", !surface_ok(a) ? "A" : "B");
  if (!(margin >= 0) || !isfinite(margin))
    return kn_fail(err, KN_ERR_INVALID, "swept pairs: margin %g (expected finite and >= 0)", margin);
  double half = 0.5 * margin;
  int self = b == NULL;
  const kn_swept_surface* B = self ? a : b;
  prim_set va = {a->vert ? a->nvert_used : a->nvert, 1, NULL, a->vert};
  prim_set vb = {B->vert ? B->nvert_used : B->nvert, 1, NULL, B->vert};
  prim_set ta = {a->ntri, 3, a->tri, NULL}, tb = {B->ntri, 3, B->tri, NULL};
  prim_set ea = {a->nedge, 2, a->edge, NULL}, eb = {B->nedge, 2, B->edge, NULL};
  sweep_rule r = {.self = self};
  s->out_n[0] = s->out_n[1] = s->out_n[2] = 0;
  int ok = find_kind(s, a, &va, B, &tb, half, &r, 0);
  if (ok && !self) ok = find_kind(s, B, &vb, a, &ta, half, &r, 1);
  r.same_set = self;
  if (ok) ok = find_kind(s, a, &ea, B, &eb, half, &r, 2);
  if (!ok) return kn_fail(err, KN_ERR_NOMEM, "swept pairs: out of memory");
  out->nvt_ab = s->out_n[0], out->vt_ab = s->out[0];
  out->nvt_ba = s->out_n[1], out->vt_ba = s->out[1];
  out->nee = s->out_n[2], out->ee = s->out[2];
  return KN_OK;
}

//---- the edges of a triangle surface ----

static int cmp_edge(const void* pa, const void* pb) { return cmp_pair(pa, pb); }

kn_status kn_surface_edges(int ntri, const int* tri, int* nedge, int** edge, kn_error* err) {
  *nedge = 0, *edge = NULL;
  if (ntri <= 0) return KN_OK;
  int* e = malloc(6 * (size_t)ntri * sizeof *e);
  if (!e) return kn_fail(err, KN_ERR_NOMEM, "surface edges: out of memory");
  for (int t = 0; t < ntri; t++)
    for (int k = 0; k < 3; k++) {
      int p = tri[3 * t + k], q = tri[3 * t + (k + 1) % 3];
      e[2 * (3 * t + k)] = p < q ? p : q, e[2 * (3 * t + k) + 1] = p < q ? q : p;
    }
  qsort(e, 3 * (size_t)ntri, 2 * sizeof(int), cmp_edge);
  int n = 0;
  for (int i = 0; i < 3 * ntri; i++)
    if (n == 0 || e[2 * i] != e[2 * (n - 1)] || e[2 * i + 1] != e[2 * (n - 1) + 1])
      e[2 * n] = e[2 * i], e[2 * n + 1] = e[2 * i + 1], n++;
  int* shrunk = realloc(e, 2 * (size_t)n * sizeof *e);
  *edge = shrunk ? shrunk : e, *nedge = n;
  return KN_OK;
}
