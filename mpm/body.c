/* MPM bodies: creation from a sampled shape or explicit points, momenta, allowed region, and the
 * transactional state copy / hash. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deformable/deformable.h"
#include "mpm/mpm_internal.h"

static const double kIdentity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

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
  b->material = *mat;
  if (mat->model == KN_MPM_LINEAR_COROTATED) kn_fem_lame(mat->youngs_modulus, mat->poisson_ratio, &b->mu, &b->lambda);
  b->h = h;
  b->ppc = ppc;
  for (int d = 0; d < 3; d++) b->region_lo[d] = -1e3, b->region_hi[d] = 1e3;
  b->np = np;
  size_t n = (size_t)np;
  b->x = kn_calloc(3 * n, sizeof(double));
  b->v = kn_calloc(3 * n, sizeof(double));
  b->C = kn_calloc(9 * n, sizeof(double));
  b->FE = kn_calloc(9 * n, sizeof(double));
  b->FP = kn_calloc(9 * n, sizeof(double));
  b->mass = kn_calloc(n, sizeof(double));
  b->volume0 = kn_calloc(n, sizeof(double));
  if (!b->name || !b->x || !b->v || !b->C || !b->FE || !b->FP || !b->mass || !b->volume0) {
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
  free(b->x), free(b->v), free(b->C), free(b->FE), free(b->FP), free(b->mass), free(b->volume0);
  grid_free(&b->grid);
  kn_mpm_solver_free(b->solver);
  free(b);
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
  memcpy(b->region_lo, lo, 3 * sizeof(double));
  memcpy(b->region_hi, hi, 3 * sizeof(double));
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
