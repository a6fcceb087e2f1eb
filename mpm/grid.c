/* The sparse grid of one step and APIC particle-to-grid transfer (seed eq. 9, digest §7.2).
 * Active nodes live in an open-addressing hash keyed by their packed integer coordinates; the node
 * order is the sorted key order, rebuilt every step, so the DoF numbering is deterministic. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpm/mpm_internal.h"

kn_status kn_mpm_solver_ensure(kn_mpm_body* b, kn_error* err) {
  if (b->solver) return KN_OK;
  kn_mpm_solver* s = kn_calloc(1, sizeof *s);
  if (!s) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for the MPM solver", b->name);
  kn_chol_start(&s->cc);
  b->solver = s;
  return KN_OK;
}

void kn_mpm_solver_free(kn_mpm_solver* s) {
  if (!s) return;
  if (s->A) cholmod_free_sparse(&s->A, &s->cc);
  if (s->H) cholmod_free_sparse(&s->H, &s->cc);
  if (s->L) cholmod_free_factor(&s->L, &s->cc);
  kn_chol_permuted_free(&s->perm, &s->cc);
  cholmod_finish(&s->cc);
  free(s->col_start), free(s->nbr), free(s->R0), free(s->hkey), free(s->hval), free(s->pattern_index);
  free(s->asm_int), free(s->asm_dbl), free(s->H_FE);
  free(s);
}

static size_t hash_slot(uint64_t key, size_t cap) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  return (size_t)key & (cap - 1);
}

int kn_mpm_hash_find(const kn_mpm_solver* s, uint64_t key) {
  if (!s->hcap) return -1;
  for (size_t i = hash_slot(key, s->hcap);; i = (i + 1) & (s->hcap - 1)) {
    if (s->hval[i] < 0) return -1;
    if (s->hkey[i] == key) return s->hval[i];
  }
}

/* insert key if absent (value = running count); returns 1 if inserted */
static int hash_insert(kn_mpm_solver* s, uint64_t key, int value) {
  for (size_t i = hash_slot(key, s->hcap);; i = (i + 1) & (s->hcap - 1)) {
    if (s->hval[i] < 0) {
      s->hkey[i] = key, s->hval[i] = value;
      return 1;
    }
    if (s->hkey[i] == key) return 0;
  }
}

static int cmp_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return (x > y) - (x < y);
}

kn_status kn_mpm_p2g(kn_mpm_body* b, kn_error* err) {
  if (b->viewed) return kn_fail(err, KN_ERR_INVALID, "%s: a view has no grid (its owner '%s' has)", b->name, b->viewed->name);
  kn_status st = kn_mpm_solver_ensure(b, err);
  if (st != KN_OK) return st;
  kn_mpm_solver* s = b->solver;
  s->H_kept = 0; /* a new grid (and the free motion's R0, dt): kn_mpm_potential assembles H again */
  kn_mpm_grid* g = &b->grid;
  size_t np = (size_t)b->np;
  if (!g->p_node) {
    g->p_node = kn_calloc(27 * np, sizeof(int));
    g->p_w = kn_calloc(27 * np, sizeof(double));
    g->p_dw = kn_calloc(81 * np, sizeof(double));
    if (!g->p_node || !g->p_w || !g->p_dw) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for weights", b->name);
  }
  /* hash sized for the worst case 27 np keys at load <= 1/2 */
  size_t cap = 64;
  while (cap < 54 * np) cap <<= 1;
  if (cap != s->hcap) {
    free(s->hkey), free(s->hval);
    s->hkey = kn_calloc(cap, sizeof(uint64_t));
    s->hval = kn_calloc(cap, sizeof(int));
    s->hcap = s->hkey && s->hval ? cap : 0;
    if (!s->hcap) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for the grid hash", b->name);
  }
  for (size_t i = 0; i < cap; i++) s->hval[i] = -1;
  uint64_t* keys = kn_calloc(27 * np, sizeof(uint64_t));
  if (!keys) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for the grid", b->name);
  int n = 0;
  const double lim = (double)(1 << 20) - 4;
  for (size_t p = 0; p < np; p++) {
    const double* x = b->x + 3 * p;
    int base[3];
    for (int d = 0; d < 3; d++)
      if (!(fabs(x[d] / b->h) < lim)) {
        free(keys);
        return kn_fail(err, KN_ERR_INVALID, "%s: particle %zu at (%g, %g, %g) is outside the grid's range", b->name, p,
                       x[0], x[1], x[2]);
      }
    kn_mpm_weights(b->h, x, base, g->p_w + 27 * p, g->p_dw + 81 * p);
    for (int a = 0; a < 27; a++) {
      if (g->p_w[27 * p + a] <= 0) continue; /* |xi| = 3/2 exactly: the node gets nothing */
      uint64_t key = kn_mpm_key(base[0] + a / 9 - 1, base[1] + (a / 3) % 3 - 1, base[2] + a % 3 - 1);
      if (hash_insert(s, key, n)) keys[n++] = key;
    }
  }
  /* deterministic node order: sorted keys ((i, j, k) lexicographic) */
  qsort(keys, (size_t)n, sizeof *keys, cmp_u64);
  for (size_t i = 0; i < cap; i++) s->hval[i] = -1;
  for (int a = 0; a < n; a++) hash_insert(s, keys[a], a);
  if (n > g->capacity) {
    free(g->index), free(g->x), free(g->mass), free(g->v), free(g->v_star);
    g->index = kn_calloc(3 * (size_t)n, sizeof(int));
    g->x = kn_calloc(3 * (size_t)n, sizeof(double));
    g->mass = kn_calloc((size_t)n, sizeof(double));
    g->v = kn_calloc(3 * (size_t)n, sizeof(double));
    g->v_star = kn_calloc(3 * (size_t)n, sizeof(double));
    g->capacity = n;
    if (!g->index || !g->x || !g->mass || !g->v || !g->v_star) {
      g->capacity = 0;
      free(keys);
      return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for %d grid nodes", b->name, n);
    }
  }
  g->n = n;
  for (int a = 0; a < n; a++) {
    for (int d = 0; d < 3; d++) {
      g->index[3 * a + d] = (int)((keys[a] >> (42 - 21 * d)) & ((1u << 21) - 1)) - (1 << 20);
      g->x[3 * a + d] = b->h * g->index[3 * a + d];
    }
  }
  free(keys);
  memset(g->mass, 0, (size_t)n * sizeof(double));
  memset(g->v, 0, 3 * (size_t)n * sizeof(double));
  memset(g->v_star, 0, 3 * (size_t)n * sizeof(double));
  /* eq. 9: m_i = sum w m_p, (m v)_i = sum w m_p (v_p + C_p (x_i - x_p)); summed in particle order */
  for (size_t p = 0; p < np; p++) {
    const double *x = b->x + 3 * p, *v = b->v + 3 * p, *C = b->C + 9 * p;
    int base[3];
    for (int d = 0; d < 3; d++) base[d] = (int)lround(x[d] / b->h);
    for (int a = 0; a < 27; a++) {
      double w = g->p_w[27 * p + a];
      if (w <= 0) {
        g->p_node[27 * p + a] = -1;
        continue;
      }
      int i = kn_mpm_hash_find(s, kn_mpm_key(base[0] + a / 9 - 1, base[1] + (a / 3) % 3 - 1, base[2] + a % 3 - 1));
      g->p_node[27 * p + a] = i;
      double dx[3], wm = w * b->mass[p];
      for (int d = 0; d < 3; d++) dx[d] = g->x[3 * i + d] - x[d];
      g->mass[i] += wm;
      for (int d = 0; d < 3; d++)
        g->v[3 * i + d] += wm * (v[d] + C[3 * d] * dx[0] + C[3 * d + 1] * dx[1] + C[3 * d + 2] * dx[2]);
    }
  }
  for (int i = 0; i < n; i++)
    for (int d = 0; d < 3; d++) g->v[3 * i + d] /= g->mass[i];
  return KN_OK;
}

int kn_mpm_particle_weights(const kn_mpm_body* b, int p, int nodes[27], double w[27]) {
  const kn_mpm_grid* g = &b->grid;
  if (!g->p_node || p < 0 || p >= b->np) return 0;
  int k = 0;
  for (int a = 0; a < 27; a++)
    if (g->p_node[27 * p + a] >= 0) {
      nodes[k] = g->p_node[27 * p + a];
      w[k++] = g->p_w[27 * p + a];
    }
  return k;
}
