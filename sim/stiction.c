/* Stiction anchors (sim/stiction.h). */
#include "sim/stiction.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

kn_status kn_stiction_reserve(kn_stiction* s, int n, kn_error* err) {
  if (s->nprev > 0) memset(s->taken, 0, (size_t)s->nprev);
  if (n <= s->cap_cur) return KN_OK;
  int cap = n > 2 * s->cap_cur ? n : 2 * s->cap_cur;
  kn_stiction_anchor* c = realloc(s->cur, (size_t)cap * sizeof *c);
  if (!c) return kn_fail(err, KN_ERR_NOMEM, "stiction anchors: out of memory");
  s->cur = c, s->cap_cur = cap;
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
  kn_pose inv;
  kn_stiction_anchor* an = &s->cur[k];
  an->a = cp->a, an->b = cp->b, an->mu = cp->material.mu;
  vhat_t[0] = vhat_t[1] = 0;
  /* the nearest untaken anchor of the same pair whose point on B lies within the radius */
  int best = -1;
  double best_d2 = KN_STICTION_MATCH_RADIUS * KN_STICTION_MATCH_RADIUS, xb_best[3] = {0}, xa_best[3] = {0};
  for (int i = first_of_pair(s, cp->a, cp->b); i < s->nprev && s->prev[i].a == cp->a && s->prev[i].b == cp->b; i++) {
    if (s->taken[i]) continue;
    double xb[3];
    kn_pose_apply(&X_WG[cp->b], s->prev[i].pb, xb);
    double d2 = 0;
    for (int r = 0; r < 3; r++) d2 += (xb[r] - cp->p[r]) * (xb[r] - cp->p[r]);
    if (d2 < best_d2) {
      best = i, best_d2 = d2;
      memcpy(xb_best, xb, sizeof xb);
      kn_pose_apply(&X_WG[cp->a], s->prev[i].pa, xa_best);
    }
  }
  if (best < 0) { /* a new contact: its anchors at the contact point */
    kn_pose_inv(&X_WG[cp->a], &inv);
    kn_pose_apply(&inv, cp->p, an->pa);
    kn_pose_inv(&X_WG[cp->b], &inv);
    kn_pose_apply(&inv, cp->p, an->pb);
    return;
  }
  s->taken[best] = 1;
  an->sliding = s->prev[best].sliding;
  memcpy(an->pa, s->prev[best].pa, sizeof an->pa);
  memcpy(an->pb, s->prev[best].pb, sizeof an->pb);
  /* slip of B's material point from A's, tangential part in the contact frame (columns t1, t2) */
  double d[3] = {xb_best[0] - xa_best[0], xb_best[1] - xa_best[1], xb_best[2] - xa_best[2]}, dt2[2];
  for (int j = 0; j < 2; j++) dt2[j] = cp->R_WC[j] * d[0] + cp->R_WC[3 + j] * d[1] + cp->R_WC[6 + j] * d[2];
  double len = sqrt(dt2[0] * dt2[0] + dt2[1] * dt2[1]), cap = KN_STICTION_SLIDE_SLIP;
  if (an->sliding && len > cap) {
    /* drag A's anchor to cap behind B's along the slip: x_a = x_b - d_t (cap / len) */
    double xa[3];
    for (int r = 0; r < 3; r++) {
      xa[r] = xb_best[r];
      for (int j = 0; j < 2; j++) xa[r] -= cp->R_WC[3 * r + j] * dt2[j] * (cap / len);
    }
    kn_pose_inv(&X_WG[cp->a], &inv);
    kn_pose_apply(&inv, xa, an->pa);
    dt2[0] *= cap / len, dt2[1] *= cap / len;
  }
  for (int j = 0; j < 2; j++) vhat_t[j] = -dt2[j] / (2.0 * dt);
}

void kn_stiction_commit(kn_stiction* s, int n, const double* gamma) {
  int keep = 0;
  if (n > s->cap_prev) {
    kn_stiction_anchor* p = realloc(s->prev, (size_t)n * sizeof *p);
    unsigned char* t = realloc(s->taken, (size_t)n);
    if (p) s->prev = p;
    if (t) s->taken = t;
    if (!p || !t) { /* out of memory: no anchors next step (the plain SAP step) */
      s->nprev = 0;
      return;
    }
    s->cap_prev = n;
  }
  for (int k = 0; k < n; k++) {
    const double* g = gamma + 3 * (size_t)k;
    double gt = sqrt(g[0] * g[0] + g[1] * g[1]);
    /* the projection puts a sliding contact on the cone (|gamma_t| = mu gamma_n): keep strict
     * interior points only */
    if (!(g[2] > 0)) continue; /* separated: the anchor is dropped */
    kn_stiction_anchor* an = &s->cur[k];
    /* on the cone (sliding, or holding at the very edge, mu = tan theta): the anchor is kept but
     * dragged along at most KN_STICTION_SLIDE_SLIP behind (kn_stiction_bias) */
    an->sliding = gt >= (1.0 - 1e-6) * an->mu * g[2];
    s->prev[keep++] = *an;
  }
  /* cur is in detection order, which kn_collision_detect sorts by pair: prev stays sorted */
  s->nprev = keep;
}

void kn_stiction_free(kn_stiction* s) {
  free(s->prev), free(s->cur), free(s->taken);
  memset(s, 0, sizeof *s);
}
