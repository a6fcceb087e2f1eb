/* Saved states (kn_world_save_state / kn_world_load_state): everything the next steps read from the
 * last ones, in a versioned binary file that only a world of the same structure accepts.
 *
 * Layout, little-endian:
 *   header   "KNSTATE\0" (8 bytes), format version (uint64), structure fingerprint (uint64),
 *            payload length (uint64)
 *   payload  step (uint64), t (double), the run statistics (kn_run_stats: 7 uint64, 1 double);
 *            per tree nq, nv (uint64), q, v; per FEM body nvert, ntet (uint64), x, v, R0;
 *            per MPM grid body np (uint64), x, v, C, F_E, F_P; the backend's bytes: their length
 *            (uint64), then what backend->save wrote
 *   trailer  CRC-32 (zlib) of header and payload (uint64)
 * Controllers keep no state between steps (references are functions of t), so none is saved. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "sim/backend.h"

#define STATE_MAGIC "KNSTATE"   /* 8 bytes with its NUL */
#define STATE_VERSION 2 /* 2: ipc keeps its touching shifts, penalty's continuous pairs their anchors */
#define STATE_HEADER (8 + 3 * 8)
#define STATE_TRAILER 8

//---- little-endian bytes ----

// (n bytes) => room for them at the end of o; 0 (and o->nomem) when out of memory
static int reserve(kn_state_out* o, size_t n) {
  if (o->nomem) return 0;
  if (o->len + n <= o->cap) return 1;
  size_t cap = o->cap ? 2 * o->cap : 4096;
  while (cap < o->len + n) cap *= 2;
  unsigned char* p = realloc(o->data, cap);
  if (!p) return o->nomem = 1, 0;
  o->data = p, o->cap = cap;
  return 1;
}

// (x) => 8 bytes, least significant first
void kn_state_put_u64(kn_state_out* o, uint64_t x) {
  if (!reserve(o, 8)) return;
  for (int k = 0; k < 8; k++) o->data[o->len++] = (unsigned char)(x >> (8 * k));
}

// (n doubles) => their IEEE-754 bits as n uint64
void kn_state_put_f64(kn_state_out* o, const double* x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint64_t b;
    memcpy(&b, &x[i], 8);
    kn_state_put_u64(o, b);
  }
}

// (n ints) => n int32, two's complement
void kn_state_put_i32(kn_state_out* o, const int* x, size_t n) {
  if (!reserve(o, 4 * n)) return;
  for (size_t i = 0; i < n; i++) {
    uint32_t u = (uint32_t)x[i];
    for (int k = 0; k < 4; k++) o->data[o->len++] = (unsigned char)(u >> (8 * k));
  }
}

// (input) => the next uint64; 0 when fewer than 8 bytes are left
int kn_state_get_u64(kn_state_in* in, uint64_t* x) {
  if (in->len - in->pos < 8) return 0;
  uint64_t v = 0;
  for (int k = 0; k < 8; k++) v |= (uint64_t)in->p[in->pos + (size_t)k] << (8 * k);
  in->pos += 8;
  *x = v;
  return 1;
}

// (input) => the next n doubles; 0 (nothing read) when fewer than 8 n bytes are left
int kn_state_get_f64(kn_state_in* in, double* x, size_t n) {
  if ((in->len - in->pos) / 8 < n) return 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t b;
    kn_state_get_u64(in, &b);
    memcpy(&x[i], &b, 8);
  }
  return 1;
}

// (input) => the next n int32; 0 (nothing read) when fewer than 4 n bytes are left
int kn_state_get_i32(kn_state_in* in, int* x, size_t n) {
  if ((in->len - in->pos) / 4 < n) return 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t u = 0;
    for (int k = 0; k < 4; k++) u |= (uint32_t)in->p[in->pos++] << (8 * k);
    x[i] = (int)(int32_t)u;
  }
  return 1;
}

//---- the world's structure ----

// (h, string) => h chained over its bytes and its NUL
static uint64_t hash_str(uint64_t h, const char* s) { return kn_hash_bytes(h, s ? s : "", strlen(s ? s : "") + 1); }

// (h, integer) => h chained over it as 8 little-endian bytes
static uint64_t hash_int(uint64_t h, long x) {
  unsigned char b[8];
  for (int k = 0; k < 8; k++) b[k] = (unsigned char)((uint64_t)x >> (8 * k));
  return kn_hash_bytes(h, b, 8);
}

/* (world) => FNV-1a of what a state must fit: backend, time step, trees (model name, nq, nv),
 * colliders, FEM bodies (name, vertices, tets), MPM deformables and grids (name, particles) */
static uint64_t fingerprint(const kn_world* w) {
  uint64_t h = hash_str(KN_HASH_SEED, w->backend->name);
  h = kn_hash_doubles(h, &w->scene->time_step, 1);
  h = hash_int(h, w->ntree);
  for (int k = 0; k < w->ntree; k++) {
    const kn_mb_model* m = w->trees[k].robot->model;
    h = hash_int(hash_int(hash_str(hash_str(h, kn_sim_tree_name(w, k)), m->name), m->nq), m->nv);
  }
  h = hash_int(h, w->ncollider);
  h = hash_int(h, w->nfem);
  for (int i = 0; i < w->nfem; i++)
    h = hash_int(hash_int(hash_str(h, w->fems[i].name), w->fems[i].body->mesh.nvert), w->fems[i].body->mesh.ntet);
  h = hash_int(h, w->nmpm);
  for (int i = 0; i < w->nmpm; i++) h = hash_int(hash_str(h, w->mpms[i].name), w->mpms[i].body->np);
  h = hash_int(h, w->nmpm_grid);
  for (int i = 0; i < w->nmpm_grid; i++) h = hash_int(h, w->mpm_grids[i]->np);
  return h;
}

//---- save ----

// (run statistics) => 7 counts and the largest residual
static void put_stats(kn_state_out* o, const kn_run_stats* r) {
  uint64_t c[7] = {(uint64_t)r->steps, (uint64_t)r->iterations, (uint64_t)r->line_search_iterations,
                   (uint64_t)r->contacts, (uint64_t)r->max_iterations, (uint64_t)r->max_line_search_iterations,
                   (uint64_t)r->max_contacts};
  for (int k = 0; k < 7; k++) kn_state_put_u64(o, c[k]);
  kn_state_put_f64(o, &r->max_residual, 1);
}

// (world) => path written: header, payload (the world's state, the backend's bytes), CRC-32
kn_status kn_world_save_state(const kn_world* w, const char* path, kn_error* err) {
  kn_state_out o = {0}, b = {0};
  kn_state_put_u64(&o, 0); /* header, filled below */
  kn_state_put_u64(&o, 0);
  kn_state_put_u64(&o, 0);
  kn_state_put_u64(&o, 0);
  kn_state_put_u64(&o, (uint64_t)w->step);
  kn_state_put_f64(&o, &w->t, 1);
  put_stats(&o, &w->stats);
  for (int k = 0; k < w->ntree; k++) {
    const kn_world_tree* tr = &w->trees[k];
    const kn_mb_model* m = tr->robot->model;
    kn_state_put_u64(&o, (uint64_t)m->nq);
    kn_state_put_u64(&o, (uint64_t)m->nv);
    kn_state_put_f64(&o, tr->q, (size_t)m->nq);
    kn_state_put_f64(&o, tr->v, (size_t)m->nv);
  }
  for (int i = 0; i < w->nfem; i++) {
    const kn_fem_body* f = w->fems[i].body;
    kn_state_put_u64(&o, (uint64_t)f->mesh.nvert);
    kn_state_put_u64(&o, (uint64_t)f->mesh.ntet);
    kn_state_put_f64(&o, f->x, 3 * (size_t)f->mesh.nvert);
    kn_state_put_f64(&o, f->v, 3 * (size_t)f->mesh.nvert);
    kn_state_put_f64(&o, f->R0, 9 * (size_t)f->mesh.ntet);
  }
  for (int i = 0; i < w->nmpm_grid; i++) {
    const kn_mpm_body* m = w->mpm_grids[i];
    size_t np = (size_t)m->np;
    kn_state_put_u64(&o, np);
    kn_state_put_f64(&o, m->x, 3 * np);
    kn_state_put_f64(&o, m->v, 3 * np);
    kn_state_put_f64(&o, m->C, 9 * np);
    kn_state_put_f64(&o, m->FE, 9 * np);
    kn_state_put_f64(&o, m->FP, 9 * np);
  }
  w->backend->save(w, w->backend_state, &b);
  kn_state_put_u64(&o, b.len);
  if (reserve(&o, b.len) && b.len) memcpy(o.data + o.len, b.data, b.len), o.len += b.len;
  if (o.nomem || b.nomem) {
    free(o.data), free(b.data);
    return kn_fail(err, KN_ERR_NOMEM, "%s: cannot save the state: out of memory", path);
  }
  free(b.data);
  /* the header, now that the payload's length is known */
  size_t payload = o.len - STATE_HEADER;
  kn_state_out hdr = {.data = o.data, .cap = o.cap};
  reserve(&hdr, 8);
  memcpy(hdr.data, STATE_MAGIC, 8), hdr.len = 8;
  kn_state_put_u64(&hdr, STATE_VERSION);
  kn_state_put_u64(&hdr, fingerprint(w));
  kn_state_put_u64(&hdr, payload);
  kn_state_put_u64(&o, crc32(crc32(0L, Z_NULL, 0), o.data, (uInt)o.len));
  if (o.nomem) {
    free(o.data);
    return kn_fail(err, KN_ERR_NOMEM, "%s: cannot save the state: out of memory", path);
  }
  FILE* f = fopen(path, "wb");
  if (!f) {
    free(o.data);
    return kn_fail(err, KN_ERR_IO, "%s: cannot write the state file: %s", path, strerror(errno));
  }
  int ok = fwrite(o.data, 1, o.len, f) == o.len;
  int saved_errno = errno;
  ok = (fclose(f) == 0) && ok;
  free(o.data);
  if (!ok) return kn_fail(err, KN_ERR_IO, "%s: cannot write the state file: %s", path, strerror(saved_errno));
  return KN_OK;
}

//---- load ----

/* Everything of the world's state read from the file, before any of it is kept. */
typedef struct {
  uint64_t step;
  double t;
  kn_run_stats stats;
  double** tree_q; /* per tree: q then v (nq + nv) */
  double** fem;    /* per FEM body: x, v, R0 */
  double** mpm;    /* per grid: x, v, C, FE, FP */
} parsed_state;

// (parsed state of world w) => its buffers freed
static void parsed_free(const kn_world* w, parsed_state* p) {
  for (int k = 0; p->tree_q && k < w->ntree; k++) free(p->tree_q[k]);
  for (int i = 0; p->fem && i < w->nfem; i++) free(p->fem[i]);
  for (int i = 0; p->mpm && i < w->nmpm_grid; i++) free(p->mpm[i]);
  free(p->tree_q), free(p->fem), free(p->mpm);
}

/* (input at a block: expected sizes sz[0..nsz), then n doubles) => them in a new array *out;
 * NULL when all is well, else what is wrong */
static const char* get_block(kn_state_in* in, const uint64_t* sz, int nsz, size_t n, double** out) {
  for (int k = 0; k < nsz; k++) {
    uint64_t x;
    if (!kn_state_get_u64(in, &x)) return "truncated";
    if (x != sz[k]) return "sizes differ from this world's";
  }
  if ((in->len - in->pos) / 8 < n) return "truncated";
  *out = kn_calloc(n + 1, sizeof **out);
  if (!*out) return "out of memory";
  kn_state_get_f64(in, *out, n);
  return NULL;
}

// (payload of the file) => p filled; NULL, or what is wrong (with the part in where)
static const char* parse_payload(const kn_world* w, kn_state_in* in, parsed_state* p, char* where, size_t cap) {
  uint64_t c[7];
  if (!kn_state_get_u64(in, &p->step) || !kn_state_get_f64(in, &p->t, 1))
    return snprintf(where, cap, "time"), "truncated";
  for (int k = 0; k < 7; k++)
    if (!kn_state_get_u64(in, &c[k])) return snprintf(where, cap, "run statistics"), "truncated";
  if (!kn_state_get_f64(in, &p->stats.max_residual, 1)) return snprintf(where, cap, "run statistics"), "truncated";
  p->stats.steps = (long)c[0], p->stats.iterations = (long)c[1], p->stats.line_search_iterations = (long)c[2];
  p->stats.contacts = (long)c[3], p->stats.max_iterations = (int)c[4];
  p->stats.max_line_search_iterations = (int)c[5], p->stats.max_contacts = (int)c[6];
  p->tree_q = kn_calloc((size_t)w->ntree + 1, sizeof *p->tree_q);
  p->fem = kn_calloc((size_t)w->nfem + 1, sizeof *p->fem);
  p->mpm = kn_calloc((size_t)w->nmpm_grid + 1, sizeof *p->mpm);
  if (!p->tree_q || !p->fem || !p->mpm) return snprintf(where, cap, "state"), "out of memory";
  const char* bad;
  for (int k = 0; k < w->ntree; k++) {
    const kn_mb_model* m = w->trees[k].robot->model;
    uint64_t sz[2] = {(uint64_t)m->nq, (uint64_t)m->nv};
    if ((bad = get_block(in, sz, 2, (size_t)(m->nq + m->nv), &p->tree_q[k])))
      return snprintf(where, cap, "%s '%s'", kn_sim_tree_kind(w, k), kn_sim_tree_name(w, k)), bad;
  }
  for (int i = 0; i < w->nfem; i++) {
    const kn_fem_body* f = w->fems[i].body;
    uint64_t sz[2] = {(uint64_t)f->mesh.nvert, (uint64_t)f->mesh.ntet};
    if ((bad = get_block(in, sz, 2, 6 * (size_t)f->mesh.nvert + 9 * (size_t)f->mesh.ntet, &p->fem[i])))
      return snprintf(where, cap, "deformable '%s'", w->fems[i].name), bad;
  }
  for (int i = 0; i < w->nmpm_grid; i++) {
    uint64_t sz[1] = {(uint64_t)w->mpm_grids[i]->np};
    if ((bad = get_block(in, sz, 1, 33 * (size_t)w->mpm_grids[i]->np, &p->mpm[i])))
      return snprintf(where, cap, "MPM grid '%s'", w->mpm_grids[i]->name), bad;
  }
  return NULL;
}

// (n doubles) => copied; nothing for n = 0 (an array of a tree with nq = 0 may be NULL)
static void copy(double* dst, const double* src, size_t n) {
  if (n) memcpy(dst, src, n * sizeof *dst);
}

// (parsed state) => the world's state; nothing fails here
static void commit(kn_world* w, const parsed_state* p) {
  w->step = (long)p->step;
  w->t = p->t;
  w->stats = p->stats;
  for (int k = 0; k < w->ntree; k++) {
    kn_world_tree* tr = &w->trees[k];
    const kn_mb_model* m = tr->robot->model;
    copy(tr->q, p->tree_q[k], (size_t)m->nq);
    copy(tr->v, p->tree_q[k] + m->nq, (size_t)m->nv);
  }
  for (int i = 0; i < w->nfem; i++) {
    kn_fem_body* f = w->fems[i].body;
    size_t n = 3 * (size_t)f->mesh.nvert;
    copy(f->x, p->fem[i], n);
    copy(f->v, p->fem[i] + n, n);
    copy(f->R0, p->fem[i] + 2 * n, 9 * (size_t)f->mesh.ntet);
  }
  for (int i = 0; i < w->nmpm_grid; i++) {
    kn_mpm_body* m = w->mpm_grids[i];
    size_t np = (size_t)m->np;
    const double* s = p->mpm[i];
    copy(m->x, s, 3 * np), s += 3 * np;
    copy(m->v, s, 3 * np), s += 3 * np;
    copy(m->C, s, 9 * np), s += 9 * np;
    copy(m->FE, s, 9 * np), s += 9 * np;
    copy(m->FP, s, 9 * np);
  }
}

// (path) => the world's state replaced by the file's, or an error naming the file and the world unchanged
kn_status kn_world_load_state(kn_world* w, const char* path, kn_error* err) {
  char* text = NULL;
  size_t len = 0;
  kn_status st = kn_file_read(path, "state", &text, &len, err);
  if (st) return st;
  const unsigned char* data = (const unsigned char*)text;
  kn_state_in in = {.p = data, .len = len};
  uint64_t version = 0, fp = 0, payload = 0, crc = 0;
  const char* prefix = "cannot load the state";
  if (len >= 8 && memcmp(data, STATE_MAGIC, 8) != 0) {
    st = kn_fail(err, KN_ERR_PARSE, "%s: %s: not a knead state file (no \"KNSTATE\" magic at its start)", path, prefix);
  } else if (len < STATE_HEADER + STATE_TRAILER) {
    st = kn_fail(err, KN_ERR_PARSE, "%s: %s: truncated: %zu bytes, shorter than the %d-byte header and checksum", path,
                 prefix, len, STATE_HEADER + STATE_TRAILER);
  } else {
    in.pos = 8;
    kn_state_get_u64(&in, &version), kn_state_get_u64(&in, &fp), kn_state_get_u64(&in, &payload);
    if (version != STATE_VERSION)
      st = kn_fail(err, KN_ERR_PARSE, "%s: %s: format version %llu; this knead reads version %d", path, prefix,
                   (unsigned long long)version, STATE_VERSION);
    else if (payload != len - STATE_HEADER - STATE_TRAILER)
      st = kn_fail(err, KN_ERR_PARSE, "%s: %s: %s: %zu bytes, the header announces %llu", path, prefix,
                   payload > len - STATE_HEADER - STATE_TRAILER ? "truncated" : "trailing bytes", len,
                   (unsigned long long)(payload + STATE_HEADER + STATE_TRAILER));
  }
  if (!st) {
    kn_state_in tail = {.p = data, .len = len, .pos = len - STATE_TRAILER};
    kn_state_get_u64(&tail, &crc);
    uint64_t computed = crc32(crc32(0L, Z_NULL, 0), data, (uInt)(len - STATE_TRAILER));
    if (crc != computed)
      st = kn_fail(err, KN_ERR_PARSE, "%s: %s: checksum mismatch (CRC-32 %08llx stored, %08llx computed): the file is "
                   "corrupt", path, prefix, (unsigned long long)crc, (unsigned long long)computed);
    else if (fp != fingerprint(w))
      st = kn_fail(err, KN_ERR_INVALID, "%s: %s: saved from another scene (structure fingerprint %016llx; scene '%s' "
                   "has %016llx)", path, prefix, (unsigned long long)fp, w->scene->name,
                   (unsigned long long)fingerprint(w));
  }
  parsed_state p = {0};
  if (!st) {
    in.len = len - STATE_TRAILER;
    char where[320] = "";
    const char* bad = parse_payload(w, &in, &p, where, sizeof where);
    uint64_t nb = 0;
    if (!bad && (!kn_state_get_u64(&in, &nb) || nb != in.len - in.pos))
      bad = "truncated", snprintf(where, sizeof where, "backend");
    if (bad)
      st = kn_fail(err, strcmp(bad, "out of memory") ? KN_ERR_PARSE : KN_ERR_NOMEM, "%s: %s: %s: %s", path, prefix,
                   where, bad);
  }
  if (!st) {
    /* the backend's part last but one: it replaces its state only when all of it parses, and the
     * world's part below cannot fail */
    kn_state_in b = {.p = in.p + in.pos, .len = in.len - in.pos};
    if ((st = w->backend->load(w, w->backend_state, &b, err)))
      kn_error_prefix(err, "%s: %s: %s backend state: ", path, prefix, w->backend->name);
  }
  if (!st) commit(w, &p);
  parsed_free(w, &p);
  free(text);
  return st;
}
