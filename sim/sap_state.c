/* The SAP adapter's part of a saved state (kn_world_save_state's backend section): the stiction
 * anchors and each MPM grid's warm start.
 *
 * Layout, little-endian:
 *   rigid anchors: n, then per anchor a, b, sliding (int32), pa[3], pb[3], mu (double)
 *   FEM anchors, MPM anchors: n, then per anchor key (uint64), p[3], mu (double), sliding (int32)
 *   MPM warm starts: number of grids, then per grid n, its nodes (3 n int32), their v (3 n double)
 * Everything else is rebuilt by every step. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/backend_sap.h"

// (keyed anchors) => n and each anchor appended
static void save_keyed(const kn_stiction_keyed* k, kn_state_out* out) {
  kn_state_put_u64(out, (uint64_t)k->nprev);
  for (int i = 0; i < k->nprev; i++) {
    const kn_stiction_point* a = &k->prev[i];
    kn_state_put_u64(out, a->key);
    kn_state_put_f64(out, a->p, 3);
    kn_state_put_f64(out, &a->mu, 1);
    kn_state_put_i32(out, &a->sliding, 1);
  }
}

// (world, sap_state) => anchors and MPM warm starts appended to out
void kn_sap_adapter_save(const kn_world* w, const void* state, kn_state_out* out) {
  const sap_state* s = state;
  kn_state_put_u64(out, (uint64_t)s->stiction.nprev);
  for (int i = 0; i < s->stiction.nprev; i++) {
    const kn_stiction_anchor* a = &s->stiction.prev[i];
    int ab[3] = {a->a, a->b, a->sliding};
    kn_state_put_i32(out, ab, 3);
    kn_state_put_f64(out, a->pa, 3);
    kn_state_put_f64(out, a->pb, 3);
    kn_state_put_f64(out, &a->mu, 1);
  }
  save_keyed(&s->fem_anchors, out);
  save_keyed(&s->mpm_anchors, out);
  /* each MPM grid's warm start (kept by its clique) */
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

// (input) => n keyed anchors into a new array *out (NULL when n = 0); 0 when truncated or out of memory
static int load_keyed(kn_state_in* in, kn_stiction_point** out, int* n_out) {
  long n = get_count(in, 8 + 4 * 8 + 4);
  if (n < 0) return 0;
  kn_stiction_point* a = n ? kn_calloc((size_t)n, sizeof *a) : NULL;
  if (n && !a) return 0;
  for (long i = 0; i < n; i++)
    if (!kn_state_get_u64(in, &a[i].key) || !kn_state_get_f64(in, a[i].p, 3) || !kn_state_get_f64(in, &a[i].mu, 1) ||
        !kn_state_get_i32(in, &a[i].sliding, 1) || !a[i].key) {
      free(a);
      return 0;
    }
  *out = a;
  *n_out = (int)n;
  return 1;
}

// (keyed anchors, a new array of n) => the anchors replaced (the array owned from now on)
static void replace_keyed(kn_stiction_keyed* k, kn_stiction_point* a, int n) {
  free(k->prev);
  k->prev = a;
  k->nprev = k->cap_prev = n;
}

// (bytes of sap_save) => anchors and MPM warm starts of s replaced, all or nothing
kn_status kn_sap_adapter_load(const kn_world* w, void* state, kn_state_in* in, kn_error* err) {
  sap_state* s = state;
  int ngrid_world = w->nmpm_grid;
  kn_stiction_anchor* rigid = NULL;
  unsigned char* taken = NULL;
  kn_stiction_point *fem = NULL, *mpm = NULL;
  int nfem = 0, nmpm = 0;
  int** index = kn_calloc((size_t)ngrid_world + 1, sizeof *index);
  double** v = kn_calloc((size_t)ngrid_world + 1, sizeof *v);
  int* count = kn_calloc((size_t)ngrid_world + 1, sizeof *count);
  const char* what = NULL;
  long nrigid = get_count(in, 3 * 4 + 7 * 8);
  if (!index || !v || !count) {
    what = "out of memory";
  } else if (nrigid < 0) {
    what = "truncated rigid stiction anchors";
  } else if (nrigid &&
             (!(rigid = kn_calloc((size_t)nrigid, sizeof *rigid)) || !(taken = kn_calloc((size_t)nrigid, 1)))) {
    what = "out of memory";
  }
  for (long i = 0; !what && i < nrigid; i++) {
    kn_stiction_anchor* a = &rigid[i];
    int ab[3];
    if (!kn_state_get_i32(in, ab, 3) || !kn_state_get_f64(in, a->pa, 3) || !kn_state_get_f64(in, a->pb, 3) ||
        !kn_state_get_f64(in, &a->mu, 1))
      what = "truncated rigid stiction anchors";
    else if (ab[0] < 0 || ab[1] <= ab[0] || ab[1] >= w->ncollider)
      what = "a rigid stiction anchor names colliders that this world does not have";
    a->a = ab[0], a->b = ab[1], a->sliding = ab[2];
  }
  if (!what && !load_keyed(in, &fem, &nfem)) what = "truncated or invalid FEM stiction anchors";
  if (!what && !load_keyed(in, &mpm, &nmpm)) what = "truncated or invalid MPM stiction anchors";
  uint64_t ngrid = 0;
  if (!what && (!kn_state_get_u64(in, &ngrid) || ngrid != (uint64_t)ngrid_world)) what = "MPM grid count differs";
  for (int i = 0; !what && i < ngrid_world; i++) {
    long n = get_count(in, 3 * 4 + 3 * 8);
    if (n < 0) {
      what = "truncated MPM warm start";
      break;
    }
    count[i] = (int)n;
    index[i] = kn_calloc(3 * (size_t)n + 1, sizeof **index);
    v[i] = kn_calloc(3 * (size_t)n + 1, sizeof **v);
    if (!index[i] || !v[i])
      what = "out of memory";
    else if (!kn_state_get_i32(in, index[i], 3 * (size_t)n) || !kn_state_get_f64(in, v[i], 3 * (size_t)n))
      what = "truncated MPM warm start";
  }
  if (!what && in->pos != in->len) what = "unread bytes after the SAP backend's state";
  if (what) {
    for (int i = 0; index && v && i < ngrid_world; i++) free(index[i]), free(v[i]);
    free(index), free(v), free(count), free(rigid), free(taken), free(fem), free(mpm);
    return kn_fail(err, strcmp(what, "out of memory") ? KN_ERR_PARSE : KN_ERR_NOMEM, "%s", what);
  }
  /* commit: nothing below fails */
  free(s->stiction.prev), free(s->stiction.taken);
  s->stiction.prev = rigid;
  s->stiction.taken = taken;
  s->stiction.nprev = s->stiction.cap_prev = s->stiction.cap_taken = (int)nrigid;
  replace_keyed(&s->fem_anchors, fem, nfem);
  replace_keyed(&s->mpm_anchors, mpm, nmpm);
  for (int i = 0; i < ngrid_world; i++)
    kn_clique_mpm_take_warm_start((kn_clique*)&w->cliques[w->first_mpm_clique + i], index[i], v[i], count[i]);
  free(index), free(v), free(count);
  return KN_OK;
}
