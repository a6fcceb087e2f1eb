/* MPM bodies: creation from a sampled shape or explicit points, momenta, allowed region, and the
 * transactional state copy / hash. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deformable/deformable.h"
#include "mpm/mpm_internal.h"

static const double kIdentity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

// b->np => zeroed particle arrays; 0 when out of memory (kn_mpm_body_free releases what was made)
static int alloc_particles(kn_mpm_body* b) {
  size_t n = (size_t)b->np;
  b->x = kn_calloc(3 * n, sizeof(double));
  b->v = kn_calloc(3 * n, sizeof(double));
  b->C = kn_calloc(9 * n, sizeof(double));
  b->FE = kn_calloc(9 * n, sizeof(double));
  b->FP = kn_calloc(9 * n, sizeof(double));
  b->mass = kn_calloc(n, sizeof(double));
  b->volume0 = kn_calloc(n, sizeof(double));
  return b->x && b->v && b->C && b->FE && b->FP && b->mass && b->volume0;
}

kn_status kn_mpm_body_create_points(const kn_mpm_material* mat, const double* x, int np, double h, int ppc,
                                    const char* name, kn_mpm_body** out, kn_error* err) {
  const char* who = name ? name : "mpm body";
  *out = NULL;
  kn_status st = kn_mpm_material_validate(mat, who, err);
  if (st != KN_OK) return st;
  if (!(h > 0) || !isfinite(h)) return kn_fail(err, KN_ERR_INVALID, "%s: grid spacing h %g must be positive", who, h);
  if (ppc < 1) return kn_fail(err, KN_ERR_INVALID, "%s: particles_per_cell %d must be >= 1", who, ppc);
  if (np <= 0) return kn_fail(err, KN_ERR_INVALID, "%s: the body has no particle (empty shape)", who);
  for (int p = 0; p < 3 * np; p++)
    if (!isfinite(x[p])) return kn_fail(err, KN_ERR_INVALID, "%s: particle %d position is not finite", who, p / 3);
  kn_mpm_body* b = kn_calloc(1, sizeof *b);
  if (!b) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", who);
  b->name = kn_strdup(who);
  b->parts = kn_calloc(1, sizeof *b->parts);
  if (b->parts) {
    kn_mpm_part* pt = b->parts;
    b->nparts = 1;
    pt->name = kn_strdup(who);
    pt->material = *mat;
    if (mat->model == KN_MPM_LINEAR_COROTATED) kn_fem_lame(mat->youngs_modulus, mat->poisson_ratio, &pt->mu, &pt->lambda);
    pt->first = 0, pt->count = np;
    for (int d = 0; d < 3; d++) pt->region_lo[d] = -1e3, pt->region_hi[d] = 1e3;
  }
  b->h = h;
  b->ppc = ppc;
  b->np = np;
  size_t n = (size_t)np;
  if (!b->name || !b->parts || !b->parts->name || !alloc_particles(b)) {
    kn_mpm_body_free(b);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for %d particles", who, np);
  }
  memcpy(b->x, x, 3 * n * sizeof(double));
  double V = h * h * h / ppc;
  for (size_t p = 0; p < n; p++) {
    memcpy(b->FE + 9 * p, kIdentity, sizeof kIdentity);
    memcpy(b->FP + 9 * p, kIdentity, sizeof kIdentity);
    b->volume0[p] = V;
    b->mass[p] = mat->density * V;
  }
  *out = b;
  return KN_OK;
}

kn_status kn_mpm_body_create(const kn_mpm_material* mat, const kn_mpm_shape* shape, const kn_pose* X_WB, double h,
                             int ppc, const char* name, kn_mpm_body** out, kn_error* err) {
  const char* who = name ? name : "mpm body";
  *out = NULL;
  kn_status st = kn_mpm_material_validate(mat, who, err);
  if (st != KN_OK) return st;
  double* x = NULL;
  int np = 0;
  st = kn_mpm_sample_shape(shape, h, ppc, who, &x, &np, err);
  if (st != KN_OK) return st;
  if (X_WB)
    for (int p = 0; p < np; p++) {
      double y[3];
      kn_pose_apply(X_WB, x + 3 * p, y);
      memcpy(x + 3 * p, y, sizeof y);
    }
  st = kn_mpm_body_create_points(mat, x, np, h, ppc, who, out, err);
  free(x);
  return st;
}

static void grid_free(kn_mpm_grid* g) {
  free(g->index), free(g->x), free(g->mass), free(g->v), free(g->v_star);
  free(g->p_node), free(g->p_w), free(g->p_dw);
  memset(g, 0, sizeof *g);
}

void kn_mpm_body_free(kn_mpm_body* b) {
  if (!b) return;
  free(b->name);
  if (!b->viewed) {
    for (int k = 0; b->parts && k < b->nparts; k++) free(b->parts[k].name);
    free(b->parts), free(b->part_of);
    free(b->x), free(b->v), free(b->C), free(b->FE), free(b->FP), free(b->mass), free(b->volume0);
  }
  grid_free(&b->grid);
  kn_mpm_solver_free(b->solver);
  free(b);
}

kn_status kn_mpm_body_merge(const kn_mpm_body* const* bodies, int n, const char* name, kn_mpm_body** out,
                            kn_error* err) {
  const char* who = name ? name : "mpm body";
  *out = NULL;
  if (n < 1) return kn_fail(err, KN_ERR_INVALID, "%s: nothing to merge", who);
  int np = 0, nparts = 0;
  for (int i = 0; i < n; i++) {
    if (bodies[i]->viewed) return kn_fail(err, KN_ERR_INVALID, "%s: cannot merge the view '%s'", who, bodies[i]->name);
    if (bodies[i]->h != bodies[0]->h)
      return kn_fail(err, KN_ERR_INVALID, "%s: '%s' has grid spacing %g, '%s' %g: one grid needs one spacing", who,
                     bodies[0]->name, bodies[0]->h, bodies[i]->name, bodies[i]->h);
    np += bodies[i]->np;
    nparts += bodies[i]->nparts;
  }
  kn_mpm_body* b = kn_calloc(1, sizeof *b);
  if (!b) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", who);
  b->name = kn_strdup(who);
  b->h = bodies[0]->h;
  b->ppc = bodies[0]->ppc;
  b->np = np;
  b->nparts = nparts;
  size_t N = (size_t)np;
  b->parts = kn_calloc((size_t)nparts, sizeof *b->parts);
  b->part_of = kn_calloc(N, sizeof *b->part_of);
  int ok = b->name && b->parts && b->part_of && alloc_particles(b);
  for (int i = 0, at = 0, k = 0; ok && i < n; i++) {
    const kn_mpm_body* a = bodies[i];
    size_t m = (size_t)a->np, o = (size_t)at;
    memcpy(b->x + 3 * o, a->x, 3 * m * sizeof(double));
    memcpy(b->v + 3 * o, a->v, 3 * m * sizeof(double));
    memcpy(b->C + 9 * o, a->C, 9 * m * sizeof(double));
    memcpy(b->FE + 9 * o, a->FE, 9 * m * sizeof(double));
    memcpy(b->FP + 9 * o, a->FP, 9 * m * sizeof(double));
    memcpy(b->mass + o, a->mass, m * sizeof(double));
    memcpy(b->volume0 + o, a->volume0, m * sizeof(double));
    for (int q = 0; q < a->nparts; q++, k++) {
      b->parts[k] = a->parts[q];
      b->parts[k].first += at;
      b->parts[k].name = kn_strdup(a->parts[q].name);
      if (!b->parts[k].name) ok = 0;
      for (int p = 0; p < a->parts[q].count; p++) b->part_of[b->parts[k].first + p] = k;
    }
    at += a->np;
  }
  if (!ok) {
    kn_mpm_body_free(b);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for %d particles", who, np);
  }
  *out = b;
  return KN_OK;
}

kn_status kn_mpm_body_view(kn_mpm_body* owner, int k, kn_mpm_body** out, kn_error* err) {
  *out = NULL;
  if (k < 0 || k >= owner->nparts) return kn_fail(err, KN_ERR_INVALID, "%s: no part %d", owner->name, k);
  kn_mpm_part* pt = &owner->parts[k];
  kn_mpm_body* b = kn_calloc(1, sizeof *b);
  if (!b || !(b->name = kn_strdup(pt->name))) {
    free(b);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", owner->name);
  }
  size_t f = (size_t)pt->first;
  b->h = owner->h, b->ppc = owner->ppc;
  b->nparts = 1, b->parts = pt;
  b->np = pt->count;
  b->x = owner->x + 3 * f, b->v = owner->v + 3 * f, b->C = owner->C + 9 * f;
  b->FE = owner->FE + 9 * f, b->FP = owner->FP + 9 * f;
  b->mass = owner->mass + f, b->volume0 = owner->volume0 + f;
  b->viewed = owner;
  *out = b;
  return KN_OK;
}

void kn_mpm_body_set_velocity(kn_mpm_body* b, const double v[3]) {
  for (int p = 0; p < b->np; p++) {
    memcpy(b->v + 3 * p, v, 3 * sizeof(double));
    memset(b->C + 9 * p, 0, 9 * sizeof(double));
  }
}

kn_status kn_mpm_body_set_region(kn_mpm_body* b, const double lo[3], const double hi[3], kn_error* err) {
  for (int d = 0; d < 3; d++)
    if (!isfinite(lo[d]) || !isfinite(hi[d]) || !(lo[d] < hi[d]))
      return kn_fail(err, KN_ERR_INVALID, "%s: allowed region axis %d: [%g, %g] must be finite with lo < hi", b->name, d,
                     lo[d], hi[d]);
  for (int k = 0; k < b->nparts; k++) {
    memcpy(b->parts[k].region_lo, lo, 3 * sizeof(double));
    memcpy(b->parts[k].region_hi, hi, 3 * sizeof(double));
  }
  return KN_OK;
}

double kn_mpm_body_mass(const kn_mpm_body* b, double P[3], double L[3]) {
  double m = 0, Pv[3] = {0}, Lv[3] = {0}, d = 0.25 * b->h * b->h;
  for (int p = 0; p < b->np; p++) {
    const double *x = b->x + 3 * p, *v = b->v + 3 * p, *C = b->C + 9 * p;
    double mp = b->mass[p], xv[3];
    m += mp;
    kn_vec3_cross(x, v, xv);
    for (int k = 0; k < 3; k++) Pv[k] += mp * v[k];
    /* APIC spin: sum_i w (x_i - x_p) x C (x_i - x_p) = eps_abc D_bd C_cd with D = h^2/4 I */
    Lv[0] += mp * (xv[0] + d * (C[7] - C[5]));
    Lv[1] += mp * (xv[1] + d * (C[2] - C[6]));
    Lv[2] += mp * (xv[2] + d * (C[3] - C[1]));
  }
  if (P) memcpy(P, Pv, sizeof Pv);
  if (L) memcpy(L, Lv, sizeof Lv);
  return m;
}

/*---- state ----*/

kn_status kn_mpm_state_save(const kn_mpm_body* b, kn_mpm_state* s, kn_error* err) {
  if (s->np != b->np || !s->x) {
    kn_mpm_state_free(s);
    size_t n = (size_t)b->np;
    s->x = kn_calloc(3 * n, sizeof(double));
    s->v = kn_calloc(3 * n, sizeof(double));
    s->C = kn_calloc(9 * n, sizeof(double));
    s->FE = kn_calloc(9 * n, sizeof(double));
    s->FP = kn_calloc(9 * n, sizeof(double));
    if (!s->x || !s->v || !s->C || !s->FE || !s->FP) {
      kn_mpm_state_free(s);
      return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for a state copy", b->name);
    }
    s->np = b->np;
  }
  size_t n = (size_t)b->np * sizeof(double);
  memcpy(s->x, b->x, 3 * n);
  memcpy(s->v, b->v, 3 * n);
  memcpy(s->C, b->C, 9 * n);
  memcpy(s->FE, b->FE, 9 * n);
  memcpy(s->FP, b->FP, 9 * n);
  return KN_OK;
}

kn_status kn_mpm_state_restore(kn_mpm_body* b, const kn_mpm_state* s, kn_error* err) {
  if (s->np != b->np || !s->x)
    return kn_fail(err, KN_ERR_INVALID, "%s: state copy has %d particles, the body %d", b->name, s->np, b->np);
  size_t n = (size_t)b->np * sizeof(double);
  memcpy(b->x, s->x, 3 * n);
  memcpy(b->v, s->v, 3 * n);
  memcpy(b->C, s->C, 9 * n);
  memcpy(b->FE, s->FE, 9 * n);
  memcpy(b->FP, s->FP, 9 * n);
  return KN_OK;
}

void kn_mpm_state_free(kn_mpm_state* s) {
  free(s->x), free(s->v), free(s->C), free(s->FE), free(s->FP);
  memset(s, 0, sizeof *s);
}

uint64_t kn_mpm_state_hash(uint64_t h, const kn_mpm_body* b) {
  size_t n = (size_t)b->np;
  h = kn_hash_bytes(h, &b->np, sizeof b->np);
  h = kn_hash_doubles(h, b->x, 3 * n);
  h = kn_hash_doubles(h, b->v, 3 * n);
  h = kn_hash_doubles(h, b->C, 9 * n);
  h = kn_hash_doubles(h, b->FE, 9 * n);
  return kn_hash_doubles(h, b->FP, 9 * n);
}
