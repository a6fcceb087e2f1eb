/* Stiction anchors (sim/stiction.h). */
#include "sim/stiction.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

//---- the slip and its bias, shared ----

/* (anchor points x_a, x_b in the world, R_WC, sliding, dt) => v_hat_t = -d_t / (2 dt), d = x_b -
 * x_a; when sliding and |d_t| > KN_STICTION_SLIDE_SLIP, d_t is cut to that length and *dragged = 1
 * (the caller moves its anchor to x_b - d_t, or x_a + d_t, given in d_out) */
static int slip_bias(const double xa[3], const double xb[3], const double R_WC[9], int sliding, double dt,
                     double vhat_t[2], double d_out[3]) {
  double d[3] = {xb[0] - xa[0], xb[1] - xa[1], xb[2] - xa[2]}, t[2];
  for (int j = 0; j < 2; j++) t[j] = R_WC[j] * d[0] + R_WC[3 + j] * d[1] + R_WC[6 + j] * d[2];
  double len = sqrt(t[0] * t[0] + t[1] * t[1]);
  int dragged = sliding && len > KN_STICTION_SLIDE_SLIP;
  if (dragged) t[0] *= KN_STICTION_SLIDE_SLIP / len, t[1] *= KN_STICTION_SLIDE_SLIP / len;
  for (int r = 0; r < 3; r++) d_out[r] = R_WC[3 * r] * t[0] + R_WC[3 * r + 1] * t[1];
  for (int j = 0; j < 2; j++) vhat_t[j] = -t[j] / (2.0 * dt);
  return dragged;
}

// (world point x, pose X) => x in X's frame
static void to_frame(const kn_pose* X, const double x[3], double y[3]) {
  double r[3] = {x[0] - X->p[0], x[1] - X->p[1], x[2] - X->p[2]};
  for (int k = 0; k < 3; k++) y[k] = X->R[k] * r[0] + X->R[3 + k] * r[1] + X->R[6 + k] * r[2];
}

// (impulse gamma, mu) => 1 when it presses, into *sliding whether it lies on the cone
static int presses(const double* g, double mu, int* sliding) {
  double gt = sqrt(g[0] * g[0] + g[1] * g[1]);
  /* the projection puts a sliding contact on the cone: |gamma_t| = mu gamma_n up to the soft norm */
  *sliding = gt >= (1.0 - 1e-6) * mu * g[2];
  return g[2] > 0;
}

// (array, capacity, n, element size) => room for n; 0 when out of memory
static int grow(void** a, int* cap, int n, size_t size) {
  if (n <= *cap) return 1;
  int c = n > 2 * *cap ? n : 2 * *cap;
  void* p = realloc(*a, (size_t)c * size);
  if (!p) return 0;
  *a = p, *cap = c;
  return 1;
}

//---- rigid-rigid ----

kn_status kn_stiction_reserve(kn_stiction* s, int n, kn_error* err) {
  if (s->nprev > 0) memset(s->taken, 0, (size_t)s->nprev);
  if (!grow((void**)&s->cur, &s->cap_cur, n, sizeof *s->cur))
    return kn_fail(err, KN_ERR_NOMEM, "stiction anchors: out of memory");
  return KN_OK;
}

// the first of prev with pair (a, b), or nprev (prev is sorted by pair)
static int first_of_pair(const kn_stiction* s, int a, int b) {
  int lo = 0, hi = s->nprev;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    const kn_stiction_anchor* m = &s->prev[mid];
    if (m->a < a || (m->a == a && m->b < b)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

void kn_stiction_bias(kn_stiction* s, int k, const kn_contact_point* cp, const kn_pose* X_WG, double dt,
                      double vhat_t[2]) {
  kn_stiction_anchor* an = &s->cur[k];
  an->a = cp->a, an->b = cp->b, an->mu = cp->material.mu, an->sliding = 0;
  vhat_t[0] = vhat_t[1] = 0;
  /* the nearest untaken anchor of the same pair whose point on B lies within the radius */
  int best = -1;
  double best_d2 = KN_STICTION_MATCH_RADIUS * KN_STICTION_MATCH_RADIUS, xb[3] = {0};
  for (int i = first_of_pair(s, cp->a, cp->b); i < s->nprev && s->prev[i].a == cp->a && s->prev[i].b == cp->b; i++) {
    if (s->taken[i]) continue;
    double x[3], d2 = 0;
    kn_pose_apply(&X_WG[cp->b], s->prev[i].pb, x);
    for (int r = 0; r < 3; r++) d2 += (x[r] - cp->p[r]) * (x[r] - cp->p[r]);
    if (d2 < best_d2) best = i, best_d2 = d2, memcpy(xb, x, sizeof x);
  }
  if (best < 0) { /* a new contact: both anchors at the contact point */
    to_frame(&X_WG[cp->a], cp->p, an->pa);
    to_frame(&X_WG[cp->b], cp->p, an->pb);
    return;
  }
  s->taken[best] = 1;
  an->sliding = s->prev[best].sliding;
  memcpy(an->pa, s->prev[best].pa, sizeof an->pa);
  memcpy(an->pb, s->prev[best].pb, sizeof an->pb);
  double xa[3], d[3];
  kn_pose_apply(&X_WG[cp->a], an->pa, xa);
  if (slip_bias(xa, xb, cp->R_WC, an->sliding, dt, vhat_t, d)) { /* A's anchor dragged to x_b - d_t */
    for (int r = 0; r < 3; r++) xa[r] = xb[r] - d[r];
    to_frame(&X_WG[cp->a], xa, an->pa);
  }
}

void kn_stiction_commit(kn_stiction* s, int n, const double* gamma) {
  if (!grow((void**)&s->prev, &s->cap_prev, n, sizeof *s->prev) || !grow((void**)&s->taken, &s->cap_taken, n, 1)) {
    s->nprev = 0; /* out of memory: no anchors next step (the plain SAP step) */
    return;
  }
  int keep = 0;
  for (int k = 0; k < n; k++) {
    int sliding;
    if (!presses(gamma + 3 * (size_t)k, s->cur[k].mu, &sliding)) continue; /* separated: dropped */
    s->prev[keep] = s->cur[k];
    s->prev[keep++].sliding = sliding;
  }
  /* cur is in detection order, which kn_collision_detect sorts by pair: prev stays sorted */
  s->nprev = keep;
}

void kn_stiction_free(kn_stiction* s) {
  free(s->prev), free(s->cur), free(s->taken);
  memset(s, 0, sizeof *s);
}

//---- a deformable's point against a rigid collider ----

uint64_t kn_stiction_key(int body, int collider, int index) {
  return ((uint64_t)(body + 1) << 48) | ((uint64_t)(uint16_t)collider << 32) | (uint32_t)index;
}

kn_status kn_stiction_keyed_reserve(kn_stiction_keyed* s, int n, kn_error* err) {
  if (!grow((void**)&s->cur, &s->cap_cur, n, sizeof *s->cur))
    return kn_fail(err, KN_ERR_NOMEM, "stiction anchors: out of memory");
  return KN_OK;
}

static const kn_stiction_point* find_key(const kn_stiction_keyed* s, uint64_t key) {
  int lo = 0, hi = s->nprev;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (s->prev[mid].key < key) lo = mid + 1;
    else hi = mid;
  }
  return lo < s->nprev && s->prev[lo].key == key ? &s->prev[lo] : NULL;
}

void kn_stiction_keyed_bias(kn_stiction_keyed* s, int k, uint64_t key, const double x[3], const kn_pose* X_WG,
                            int point_is_b, const double R_WC[9], double mu, double dt, double vhat_t[2]) {
  kn_stiction_point* an = &s->cur[k];
  an->key = key, an->mu = mu, an->sliding = 0;
  vhat_t[0] = vhat_t[1] = 0;
  if (!key) return;
  const kn_stiction_point* old = find_key(s, key);
  if (!old) { /* a new contact: the anchor where the point is now */
    to_frame(X_WG, x, an->p);
    return;
  }
  an->sliding = old->sliding;
  memcpy(an->p, old->p, sizeof an->p);
  double xr[3], d[3];
  kn_pose_apply(X_WG, an->p, xr);
  if (slip_bias(point_is_b ? xr : x, point_is_b ? x : xr, R_WC, an->sliding, dt, vhat_t, d)) {
    /* the rigid anchor dragged to d_t from the point: x_a = x_b - d_t or x_b = x_a + d_t */
    for (int r = 0; r < 3; r++) xr[r] = point_is_b ? x[r] - d[r] : x[r] + d[r];
    to_frame(X_WG, xr, an->p);
  }
}

static int cmp_key(const void* x, const void* y) {
  uint64_t a = ((const kn_stiction_point*)x)->key, b = ((const kn_stiction_point*)y)->key;
  return (a > b) - (a < b);
}

void kn_stiction_keyed_commit(kn_stiction_keyed* s, int n, const double* gamma) {
  if (!grow((void**)&s->prev, &s->cap_prev, n, sizeof *s->prev)) {
    s->nprev = 0;
    return;
  }
  int keep = 0;
  for (int k = 0; k < n; k++) {
    int sliding;
    if (!s->cur[k].key || !presses(gamma + 3 * (size_t)k, s->cur[k].mu, &sliding)) continue;
    s->prev[keep] = s->cur[k];
    s->prev[keep++].sliding = sliding;
  }
  /* keys are unique, so the order is too */
  if (keep > 1) qsort(s->prev, (size_t)keep, sizeof *s->prev, cmp_key);
  s->nprev = keep;
}

void kn_stiction_keyed_free(kn_stiction_keyed* s) {
  free(s->prev), free(s->cur);
  memset(s, 0, sizeof *s);
}
