/* Saved-state parts shared by the backends (state_parts.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/state_parts.h"

void kn_state_put_rigid_anchors(kn_state_out* out, const kn_stiction* s) {
  kn_state_put_u64(out, (uint64_t)s->nprev);
  for (int i = 0; i < s->nprev; i++) {
    const kn_stiction_anchor* a = &s->prev[i];
    int ab[3] = {a->a, a->b, a->sliding};
    kn_state_put_i32(out, ab, 3);
    kn_state_put_f64(out, a->pa, 3);
    kn_state_put_f64(out, a->pb, 3);
    kn_state_put_f64(out, &a->mu, 1);
  }
}

void kn_state_put_keyed_anchors(kn_state_out* out, const kn_stiction_keyed* k) {
  kn_state_put_u64(out, (uint64_t)k->nprev);
  for (int i = 0; i < k->nprev; i++) {
    const kn_stiction_point* a = &k->prev[i];
    kn_state_put_u64(out, a->key);
    kn_state_put_f64(out, a->p, 3);
    kn_state_put_f64(out, &a->mu, 1);
    kn_state_put_i32(out, &a->sliding, 1);
  }
}

void kn_state_put_mpm_warm_starts(kn_state_out* out, const kn_world* w) {
  kn_state_put_u64(out, (uint64_t)w->nmpm_grid);
  for (int i = 0; i < w->nmpm_grid; i++) {
    const int* nodes;
    const double* v;
    int n;
    kn_clique_mpm_warm_start(&w->cliques[w->first_mpm_clique + i], &nodes, &v, &n);
    kn_state_put_u64(out, (uint64_t)n);
    kn_state_put_i32(out, nodes, 3 * (size_t)n);
    kn_state_put_f64(out, v, 3 * (size_t)n);
  }
}

/* (input, bytes per record) => a record count read and checked against the bytes left (so a corrupt
 * count never allocates), or -1 */
static long get_count(kn_state_in* in, size_t record) {
  uint64_t n;
  if (!kn_state_get_u64(in, &n) || n > (uint64_t)INT32_MAX / 3 || n * record > in->len - in->pos) return -1;
  return (long)n;
}

const char* kn_state_get_rigid_anchors(kn_state_in* in, int ncollider, kn_state_parts* p) {
  long n = get_count(in, 3 * 4 + 7 * 8);
  if (n < 0) return "truncated rigid stiction anchors";
  if (!(p->rigid = kn_calloc((size_t)n + 1, sizeof *p->rigid)) || !(p->taken = kn_calloc((size_t)n + 1, 1)))
    return "out of memory";
  p->nrigid = (int)n;
  for (long i = 0; i < n; i++) {
    kn_stiction_anchor* a = &p->rigid[i];
    int ab[3];
    if (!kn_state_get_i32(in, ab, 3) || !kn_state_get_f64(in, a->pa, 3) || !kn_state_get_f64(in, a->pb, 3) ||
        !kn_state_get_f64(in, &a->mu, 1))
      return "truncated rigid stiction anchors";
    if (ab[0] < 0 || ab[1] <= ab[0] || ab[1] >= ncollider)
      return "a rigid stiction anchor names colliders that this world does not have";
    a->a = ab[0], a->b = ab[1], a->sliding = ab[2];
  }
  return NULL;
}

const char* kn_state_get_keyed_anchors(kn_state_in* in, int which, kn_state_parts* p) {
  const char* what = which ? "truncated or invalid MPM stiction anchors" : "truncated or invalid FEM stiction anchors";
  long n = get_count(in, 8 + 4 * 8 + 4);
  if (n < 0) return what;
  kn_stiction_point* a = p->keyed[which] = kn_calloc((size_t)n + 1, sizeof *a);
  if (!a) return "out of memory";
  p->nkeyed[which] = (int)n;
  for (long i = 0; i < n; i++)
    if (!kn_state_get_u64(in, &a[i].key) || !kn_state_get_f64(in, a[i].p, 3) || !kn_state_get_f64(in, &a[i].mu, 1) ||
        !kn_state_get_i32(in, &a[i].sliding, 1) || !a[i].key || (i > 0 && a[i].key < a[i - 1].key))
      return what;
  return NULL;
}

const char* kn_state_get_mpm_warm_starts(kn_state_in* in, const kn_world* w, kn_state_parts* p) {
  int ng = w->nmpm_grid;
  uint64_t ngrid = 0;
  if (!kn_state_get_u64(in, &ngrid) || ngrid != (uint64_t)ng) return "MPM grid count differs";
  p->count = kn_calloc((size_t)ng + 1, sizeof *p->count);
  p->nodes = kn_calloc((size_t)ng + 1, sizeof *p->nodes);
  p->v = kn_calloc((size_t)ng + 1, sizeof *p->v);
  if (!p->count || !p->nodes || !p->v) return "out of memory";
  p->ngrid = ng;
  for (int i = 0; i < ng; i++) {
    long n = get_count(in, 3 * 4 + 3 * 8);
    if (n < 0) return "truncated MPM warm start";
    p->count[i] = (int)n;
    p->nodes[i] = kn_calloc(3 * (size_t)n + 1, sizeof **p->nodes);
    p->v[i] = kn_calloc(3 * (size_t)n + 1, sizeof **p->v);
    if (!p->nodes[i] || !p->v[i]) return "out of memory";
    if (!kn_state_get_i32(in, p->nodes[i], 3 * (size_t)n) || !kn_state_get_f64(in, p->v[i], 3 * (size_t)n))
      return "truncated MPM warm start";
  }
  return NULL;
}

static void replace_keyed(kn_stiction_keyed* k, kn_stiction_point* a, int n) {
  free(k->prev);
  k->prev = a;
  k->nprev = k->cap_prev = n;
}

void kn_state_parts_commit(kn_state_parts* p, kn_world* w, kn_stiction* rigid, kn_stiction_keyed* fem,
                           kn_stiction_keyed* mpm) {
  if (rigid) {
    free(rigid->prev), free(rigid->taken);
    rigid->prev = p->rigid, rigid->taken = p->taken;
    rigid->nprev = rigid->cap_prev = rigid->cap_taken = p->nrigid;
    p->rigid = NULL, p->taken = NULL;
  }
  kn_stiction_keyed* k[2] = {fem, mpm};
  for (int j = 0; j < 2; j++)
    if (k[j]) replace_keyed(k[j], p->keyed[j], p->nkeyed[j]), p->keyed[j] = NULL;
  for (int i = 0; i < p->ngrid; i++) {
    kn_clique_mpm_take_warm_start(&w->cliques[w->first_mpm_clique + i], p->nodes[i], p->v[i], p->count[i]);
    p->nodes[i] = NULL, p->v[i] = NULL;
  }
  kn_state_parts_free(p);
}

void kn_state_parts_free(kn_state_parts* p) {
  for (int i = 0; i < p->ngrid; i++) free(p->nodes[i]), free(p->v[i]);
  free(p->nodes), free(p->v), free(p->count), free(p->rigid), free(p->taken), free(p->keyed[0]), free(p->keyed[1]);
  memset(p, 0, sizeof *p);
}
