/* The mesh pairs' candidates kept between evaluations (mesh_cache.h; digest §4.3, §4.4).
 *
 * The constraint set is found again at every evaluation (§4.3), but a Newton iteration's line
 * search only visits points on the segment its CCD swept: kn_ipc_mesh_max_step sweeps every vertex
 * from x(v) to x(v + alpha p) at margin 2 dhat and keeps the answer here, and an evaluation whose
 * vertices are all within dhat / 4 of their swept boxes (the line search's trial points, the
 * accepted iterate, the step's end, the next solve's start) takes its pairs from these candidates
 * (kn_swept_pairs_filter: the same boxes and test as the trees, so the same pairs in the same
 * order) instead of the trees. A pair that comes within dhat anywhere on the segment is among them,
 * since its boxes at that point are within the swept ones grown by dhat / 4. */
#include <stdlib.h>
#include <string.h>

#include "ipc/mesh_cache.h"

typedef struct {
  int* p[3]; /* vt_ab, vt_ba, ee */
  int n[3], cap[3];
  int stored;
} kept_pairs;

struct kn_ipc_mesh_cache {
  double* box;  /* per vertex (m->off's layout, 2 x 3 per vertex): lo[3], hi[3] */
  size_t boxcap;
  kept_pairs* q;
  int qcap;
  double margin, slack;
  size_t nv;    /* vertices boxed */
  int valid;    /* begun, not failed */
  /* the topology it was found for (the lists index into it) */
  const kn_ipc_surface* surf;
  int nsurf, npair;
  const int* pairs;
};

static size_t nvert_total(const kn_ipc_mesh* m) {
  size_t n = 0;
  for (int s = 0; s < m->nsurf; s++) n += (size_t)m->surf[s].nvert;
  return n;
}

int kn_ipc_mesh_cache_begin(kn_ipc_mesh* m, double margin, double slack) {
  kn_ipc_mesh_cache* c = m->cache;
  if (!c && !(c = m->cache = kn_calloc(1, sizeof *c))) return 0;
  c->valid = 0;
  size_t nv = nvert_total(m);
  if (6 * nv + 1 > c->boxcap) {
    double* b = realloc(c->box, (6 * nv + 1) * sizeof *b);
    if (!b) return 0;
    c->box = b, c->boxcap = 6 * nv + 1;
  }
  if (m->npair > c->qcap) {
    kept_pairs* q = realloc(c->q, (size_t)m->npair * sizeof *q);
    if (!q) return 0;
    memset(q + c->qcap, 0, (size_t)(m->npair - c->qcap) * sizeof *q);
    c->q = q, c->qcap = m->npair;
  }
  for (size_t i = 0; i < nv; i++)
    for (int k = 0; k < 3; k++) {
      double a = m->x[3 * i + k], b = m->x1[3 * i + k];
      c->box[6 * i + k] = (a < b ? a : b) - slack, c->box[6 * i + 3 + k] = (a > b ? a : b) + slack;
    }
  for (int q = 0; q < m->npair; q++) c->q[q].stored = 0;
  c->margin = margin, c->slack = slack, c->nv = nv;
  c->surf = m->surf, c->nsurf = m->nsurf, c->npair = m->npair, c->pairs = m->pairs;
  c->valid = 1;
  return 1;
}

int kn_ipc_mesh_cache_store(kn_ipc_mesh* m, int q, const kn_swept_pairs* pairs) {
  kn_ipc_mesh_cache* c = m->cache;
  if (!c || !c->valid || q < 0 || q >= c->npair) return 0;
  kept_pairs* k = &c->q[q];
  const int* src[3] = {pairs->vt_ab, pairs->vt_ba, pairs->ee};
  int n[3] = {pairs->nvt_ab, pairs->nvt_ba, pairs->nee};
  for (int a = 0; a < 3; a++) {
    if (2 * n[a] + 2 > k->cap[a]) {
      int* p = realloc(k->p[a], (2 * (size_t)n[a] + 2) * sizeof *p);
      if (!p) return c->valid = 0, 0;
      k->p[a] = p, k->cap[a] = 2 * n[a] + 2;
    }
    if (n[a]) memcpy(k->p[a], src[a], 2 * (size_t)n[a] * sizeof(int));
    k->n[a] = n[a];
  }
  k->stored = 1;
  return 1;
}

int kn_ipc_mesh_cache_covers(const kn_ipc_mesh* m, const double* x, double margin) {
  const kn_ipc_mesh_cache* c = m->cache;
  /* a pair within margin at x has boxes within the swept ones grown by slack: within margin +
   * 2 slack swept; the other 2 slack of the kept margin are room for round-off */
  if (!c || !c->valid || !(margin <= c->margin - 4 * c->slack)) return 0;
  if (c->surf != m->surf || c->nsurf != m->nsurf || c->npair != m->npair || c->pairs != m->pairs) return 0;
  for (int q = 0; q < m->npair; q++)
    if (!c->q[q].stored) return 0;
  size_t nv = nvert_total(m);
  if (nv != c->nv) return 0;
  for (size_t i = 0; i < nv; i++)
    for (int k = 0; k < 3; k++) {
      double a = x[3 * i + k];
      if (!(a >= c->box[6 * i + k] && a <= c->box[6 * i + 3 + k])) return 0; /* NaN: not covered */
    }
  return 1;
}

kn_swept_pairs kn_ipc_mesh_cache_pairs(const kn_ipc_mesh* m, int q) {
  const kept_pairs* k = &m->cache->q[q];
  return (kn_swept_pairs){k->n[0], k->n[1], k->n[2], k->p[0], k->p[1], k->p[2]};
}

void kn_ipc_mesh_cache_free(kn_ipc_mesh* m) {
  kn_ipc_mesh_cache* c = m->cache;
  if (!c) return;
  for (int q = 0; q < c->qcap; q++)
    for (int a = 0; a < 3; a++) free(c->q[q].p[a]);
  free(c->q), free(c->box), free(c);
  m->cache = NULL;
}
