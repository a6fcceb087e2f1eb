/* Swept pair broad phase for mesh-mesh contact (IPC digest §4.3, §7.4): the vertex-triangle and
 * edge-edge pairs of two triangle surfaces (or of one, for self-contact) whose boxes, swept over
 * the step (the box of each primitive's vertices at the start and at the predicted end) and
 * inflated by half the margin each, overlap. Any pair whose distance falls below the margin at
 * some time of a linear motion between the two positions is among them (a point of a primitive
 * stays in its swept box, and two points closer than the margin have boxes closer than the
 * margin on every axis).
 *
 * A tree of the second set's boxes (contact/aabb_tree.c, penalty digest §5.4) is built, and each
 * box of the first set is looked up in it; one set against itself (self edge-edge) is the tree
 * traversed against itself, each pair once. The pairs are then sorted by (first, second) index
 * (counted by first, O(pairs)), as the one-axis sweep this replaced sorted them (which was
 * quadratic on a closed surface: the faces of a side across the sweep axis all overlap on it), so
 * the answer, the same pair set in the same order, depends neither on the tree nor on the method.
 * Memory: the scratch grows to the largest call and is reused; a call allocates only when it needs
 * more. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/aabb_tree.h"
#include "contact/contact.h"

/* The trees are kept between calls and refitted (aabb_tree.c: O(n), the same pairs whatever the
 * tree's shape) while the same primitive set comes back, as the ipc backend's evaluations of one
 * step ask for the same surfaces at nearby positions; rebuilt after REFITS refits (the shape drifts
 * with the motion) or for another set, in place of the least recently used. A set is known by its
 * index array, count and arity: an array freed and another allocated at its address with the same
 * count only gets a tree of the wrong shape, which finds the same pairs, more slowly. */
#define NTREE 6
#define REFITS 32
typedef struct {
  kn_aabb_tree t;
  const int* idx; /* the set it was built for (NULL: none) */
  int n, arity, refits;
  long used;
} kept_tree;

struct kn_swept_scratch {
  double* box[2];     /* 6 per primitive: lo[3], hi[3] */
  int box_cap[2];
  kept_tree tree[NTREE]; /* over set 1's boxes (set 0's for one set against itself), kept */
  long clock;            /* calls of tree_for, for the least recently used */
  int* out[3];        /* vt_ab, vt_ba, ee: 2 ints per pair */
  int out_n[3], out_cap[3];
  int *start, *tmp;   /* the pairs' sort: runs per first index, the sorted copy */
  int start_cap, tmp_cap;
};

kn_swept_scratch* kn_swept_scratch_create(void) { return kn_calloc(1, sizeof(kn_swept_scratch)); }

void kn_swept_scratch_free(kn_swept_scratch* s) {
  if (!s) return;
  for (int k = 0; k < 2; k++) free(s->box[k]);
  for (int k = 0; k < 3; k++) free(s->out[k]);
  for (int k = 0; k < NTREE; k++) kn_aabb_tree_release(&s->tree[k].t);
  free(s->start), free(s->tmp);
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
        /* min / max keeping the bound when x is NaN, as fmin / fmax would (inlined: no libm call) */
        for (int k = 0; k < 3; k++) {
          double c = x[3 * v + k];
          b[k] = c < b[k] ? c : b[k], b[3 + k] = c > b[3 + k] ? c : b[3 + k];
        }
      }
    }
    for (int k = 0; k < 3; k++) b[k] -= half, b[3 + k] += half;
  }
}

static int cmp_pair(const void* pa, const void* pb) {
  const int *a = pa, *b = pb;
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  return (a[1] > b[1]) - (a[1] < b[1]);
}

//---- the pairs of two sets ----

/* Which pairs are kept besides box overlap: vertex-triangle pairs whose vertex is a corner of the
 * triangle and edge-edge pairs sharing a vertex are dropped on one surface (self-contact); on one
 * surface an edge-edge pair is reported once, (smaller, larger). */
typedef struct {
  const int* idx[2]; /* vertex indices per primitive (NULL: a vertex set), arity per set */
  int arity[2];
  const int* vlist;  /* vertex set 0's list (NULL: identity) */
  int self;          /* both sets on one surface */
  int same_set;      /* set 1 is set 0 (self edge-edge): one tree over one list */
  int nfirst;        /* the first indices reported are below this (set 0's count or its surface's vertices) */
} pair_rule;

static int shares_vertex(const pair_rule* r, int i, int j) {
  int va[3], vb[3];
  for (int a = 0; a < r->arity[0]; a++)
    va[a] = r->idx[0] ? r->idx[0][r->arity[0] * i + a] : r->vlist ? r->vlist[i] : i;
  for (int b = 0; b < r->arity[1]; b++) vb[b] = r->idx[1][r->arity[1] * j + b];
  for (int a = 0; a < r->arity[0]; a++)
    for (int b = 0; b < r->arity[1]; b++)
      if (va[a] == vb[b]) return 1;
  return 0;
}

// (pair (i, j) of primitives of set 0 and 1 whose boxes overlap) => appended to out[slot] unless the rule drops it
static int keep_pair(kn_swept_scratch* s, const pair_rule* r, int slot, int i, int j) {
  if (r->self && shares_vertex(r, i, j)) return 1;
  int n = s->out_n[slot];
  if (!grow((void**)&s->out[slot], &s->out_cap[slot], 2 * (n + 1), sizeof(int))) return 0;
  /* a vertex is reported by its index in the surface */
  s->out[slot][2 * n] = !r->idx[0] && r->vlist ? r->vlist[i] : i, s->out[slot][2 * n + 1] = j;
  s->out_n[slot] = n + 1;
  return 1;
}

/* the tree's callbacks: a lookup of primitive i of set 0, or a pair within one set */
typedef struct {
  kn_swept_scratch* s;
  const pair_rule* r;
  int i, slot;
} lookup;
static int add_hit(void* ctx, int j) {
  lookup* l = ctx;
  return keep_pair(l->s, l->r, l->slot, l->i, j);
}
static int add_self(void* ctx, int i, int j) {
  lookup* l = ctx;
  return keep_pair(l->s, l->r, l->slot, i < j ? i : j, i < j ? j : i);
}

// (out[slot]: pairs with first in [0, nfirst)) => sorted by (first, second): counted by first, then
// each first's seconds sorted (a few each: insertion; many: qsort)
static int sort_pairs(kn_swept_scratch* s, int slot, int nfirst) {
  int n = s->out_n[slot], *p = s->out[slot];
  if (n < 2) return 1;
  if (!grow((void**)&s->start, &s->start_cap, nfirst + 1, sizeof(int)) || !grow((void**)&s->tmp, &s->tmp_cap, 2 * n, sizeof(int)))
    return 0;
  memset(s->start, 0, (size_t)(nfirst + 1) * sizeof(int));
  for (int k = 0; k < n; k++) s->start[p[2 * k] + 1]++;
  for (int f = 0; f < nfirst; f++) s->start[f + 1] += s->start[f];
  for (int k = 0; k < n; k++) {
    int at = s->start[p[2 * k]]++;
    s->tmp[2 * at] = p[2 * k], s->tmp[2 * at + 1] = p[2 * k + 1];
  }
  /* start[f] is now the end of first f's run */
  for (int f = 0, b = 0; f < nfirst; b = s->start[f++]) {
    int *q = s->tmp + 2 * b, m = s->start[f] - b;
    if (m > 32) {
      qsort(q, (size_t)m, 2 * sizeof(int), cmp_pair);
      continue;
    }
    for (int a = 1; a < m; a++) {
      int j = q[2 * a + 1], c = a;
      for (; c > 0 && q[2 * (c - 1) + 1] > j; c--) q[2 * c + 1] = q[2 * (c - 1) + 1];
      q[2 * c + 1] = j;
    }
  }
  /* the sorted copy becomes the output, the old array the next call's copy */
  int *t = s->out[slot], cap = s->out_cap[slot];
  s->out[slot] = s->tmp, s->out_cap[slot] = s->tmp_cap;
  s->tmp = t, s->tmp_cap = cap;
  return 1;
}

// (primitive set, its boxes) => a tree over them: a kept one refitted, or one built; NULL out of memory
static kn_aabb_tree* tree_for(kn_swept_scratch* s, const prim_set* set, const double* box) {
  kept_tree *k = NULL, *lru = &s->tree[0];
  for (int i = 0; i < NTREE; i++) {
    kept_tree* c = &s->tree[i];
    if (set->idx && c->idx == set->idx && c->n == set->n && c->arity == set->arity) k = c;
    if (c->used < lru->used) lru = c;
  }
  k = k ? k : lru;
  k->used = ++s->clock;
  if (k->idx && k->idx == set->idx && k->refits < REFITS) {
    k->refits++;
    kn_aabb_tree_refit(&k->t, box);
    return &k->t;
  }
  k->idx = NULL;
  if (!kn_aabb_tree_build(&k->t, box, set->n)) return NULL;
  k->idx = set->idx, k->n = set->n, k->arity = set->arity, k->refits = 0;
  return &k->t;
}

// (boxes of both sets p and q, rule) => the overlapping pairs into s->out[slot], sorted
static int pairs_of(kn_swept_scratch* s, const pair_rule* r, const prim_set* p, const prim_set* q, int slot) {
  s->out_n[slot] = 0;
  lookup l = {s, r, 0, slot};
  kn_aabb_tree* t = tree_for(s, r->same_set ? p : q, s->box[r->same_set ? 0 : 1]);
  if (!t) return 0;
  if (r->same_set) { /* one set against itself: the tree against itself, each pair once */
    if (!kn_aabb_tree_self_pairs(t, add_self, &l)) return 0;
  } else {
    for (l.i = 0; l.i < p->n; l.i++)
      if (!kn_aabb_tree_query(t, s->box[0] + 6 * l.i, add_hit, &l)) return 0;
  }
  return sort_pairs(s, slot, r->nfirst);
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

// (scratch, surfaces p (its primitives ps) and q (qs), half margin, rule, slot) => one kind of pair
static int find_kind(kn_swept_scratch* s, const kn_swept_surface* p, const prim_set* ps, const kn_swept_surface* q,
                     const prim_set* qs, double half, pair_rule* r, int slot) {
  s->out_n[slot] = 0;
  if (ps->n == 0 || qs->n == 0) return 1;
  if (!grow((void**)&s->box[0], &s->box_cap[0], 6 * ps->n, sizeof(double))) return 0;
  boxes(p, ps, half, s->box[0]);
  if (!r->same_set) {
    if (!grow((void**)&s->box[1], &s->box_cap[1], 6 * qs->n, sizeof(double))) return 0;
    boxes(q, qs, half, s->box[1]);
  }
  r->idx[0] = ps->idx, r->idx[1] = qs->idx, r->arity[0] = ps->arity, r->arity[1] = qs->arity;
  r->vlist = ps->vert_list;
  r->nfirst = ps->idx ? ps->n : p->nvert;
  return pairs_of(s, r, ps, qs, slot);
}

// the arguments of kn_swept_pairs_find and _filter checked: KN_OK, or what is wrong
static kn_status check_args(const kn_swept_scratch* s, const kn_swept_surface* a, const kn_swept_surface* b,
                            double margin, kn_error* err) {
  if (!s) return kn_fail(err, KN_ERR_INVALID, "swept pairs: no scratch");
  if (!surface_ok(a) || (b && !surface_ok(b)))
    return kn_fail(err, KN_ERR_INVALID, "swept pairs: surface %s has a negative count, a missing array or an index "
                   "out of range", !surface_ok(a) ? "A" : "B");
  if (!(margin >= 0) || !isfinite(margin))
    return kn_fail(err, KN_ERR_INVALID, "swept pairs: margin %g (expected finite and >= 0)", margin);
  return KN_OK;
}

kn_status kn_swept_pairs_find(kn_swept_scratch* s, const kn_swept_surface* a, const kn_swept_surface* b, double margin,
                              kn_swept_pairs* out, kn_error* err) {
  memset(out, 0, sizeof *out);
  kn_status st = check_args(s, a, b, margin, err);
  if (st) return st;
  double half = 0.5 * margin;
  int self = b == NULL;
  const kn_swept_surface* B = self ? a : b;
  prim_set va = {a->vert ? a->nvert_used : a->nvert, 1, NULL, a->vert};
  prim_set vb = {B->vert ? B->nvert_used : B->nvert, 1, NULL, B->vert};
  prim_set ta = {a->ntri, 3, a->tri, NULL}, tb = {B->ntri, 3, B->tri, NULL};
  prim_set ea = {a->nedge, 2, a->edge, NULL}, eb = {B->nedge, 2, B->edge, NULL};
  pair_rule r = {.self = self};
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

//---- the pairs of a superset, without the trees ----

/* (slot, candidates in[n] of primitives of set p (boxes bp, np of them) and set q (bq, nq)) =>
 * out[slot]: those whose boxes overlap, in their order; 0 out of memory, -1 an index out of range */
static int filter_kind(kn_swept_scratch* s, int slot, const int* in, int n, const double* bp, int np, const double* bq,
                       int nq) {
  s->out_n[slot] = 0;
  if (!grow((void**)&s->out[slot], &s->out_cap[slot], 2 * n + 2, sizeof(int))) return 0;
  int* o = s->out[slot];
  int m = 0;
  for (int k = 0; k < n; k++) {
    int i = in[2 * k], j = in[2 * k + 1];
    if (i < 0 || i >= np || j < 0 || j >= nq) return -1;
    if (kn_aabb_overlap(bp + 6 * i, bq + 6 * j)) o[2 * m] = i, o[2 * m + 1] = j, m++;
  }
  s->out_n[slot] = m;
  return 1;
}

// (surfaces p and q, half margin, kind: vertex-triangle 0, edge-edge 1, candidates) => filter_kind's answer
static int filter_of(kn_swept_scratch* s, const kn_swept_surface* p, const kn_swept_surface* q, double half, int ee,
                     int slot, const int* in, int n) {
  s->out_n[slot] = 0;
  if (n == 0) return 1;
  /* every vertex's box (a vertex pair names the vertex by its index in the surface) */
  prim_set ps = ee ? (prim_set){p->nedge, 2, p->edge, NULL} : (prim_set){p->nvert, 1, NULL, NULL};
  prim_set qs = ee ? (prim_set){q->nedge, 2, q->edge, NULL} : (prim_set){q->ntri, 3, q->tri, NULL};
  if (!grow((void**)&s->box[0], &s->box_cap[0], 6 * ps.n, sizeof(double)) ||
      !grow((void**)&s->box[1], &s->box_cap[1], 6 * qs.n, sizeof(double)))
    return 0;
  boxes(p, &ps, half, s->box[0]);
  boxes(q, &qs, half, s->box[1]);
  return filter_kind(s, slot, in, n, s->box[0], ps.n, s->box[1], qs.n);
}

kn_status kn_swept_pairs_filter(kn_swept_scratch* s, const kn_swept_surface* a, const kn_swept_surface* b,
                                double margin, const kn_swept_pairs* in, kn_swept_pairs* out, kn_error* err) {
  memset(out, 0, sizeof *out);
  kn_status st = check_args(s, a, b, margin, err);
  if (st) return st;
  for (int k = 0; k < 3; k++)
    if ((k == 0 && in->vt_ab == s->out[0]) || (k == 1 && in->vt_ba == s->out[1]) || (k == 2 && in->ee == s->out[2]))
      if (s->out[k]) return kn_fail(err, KN_ERR_INVALID, "swept pairs: the candidates live in the scratch (copy them)");
  double half = 0.5 * margin;
  const kn_swept_surface* B = b ? b : a;
  s->out_n[0] = s->out_n[1] = s->out_n[2] = 0;
  int ok = filter_of(s, a, B, half, 0, 0, in->vt_ab, in->nvt_ab);
  if (ok == 1 && b) ok = filter_of(s, B, a, half, 0, 1, in->vt_ba, in->nvt_ba);
  if (ok == 1) ok = filter_of(s, a, B, half, 1, 2, in->ee, in->nee);
  if (ok < 0) return kn_fail(err, KN_ERR_INVALID, "swept pairs: a candidate's index is out of range");
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
