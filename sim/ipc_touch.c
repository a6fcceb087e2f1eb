/* The ipc backend's touching start: per-pair barrier shifts kept across steps (sim/ipc_touch.h) */
#include "sim/ipc_touch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


kn_status kn_ipc_touch_reserve(kn_ipc_touch* t, int n, kn_error* err) {
  if (n <= t->cap_cur) return KN_OK;
  kn_ipc_touch_pair* p = realloc(t->cur, (size_t)n * sizeof *p);
  if (!p) return kn_fail(err, KN_ERR_NOMEM, "out of memory for %d contacts' touching-start shifts", n);
  t->cur = p, t->cap_cur = n;
  return KN_OK;
}

static void side_key(const kn_contact_side* s, int k[3]) {
  k[0] = (int)s->kind, k[1] = s->body, k[2] = s->kind == KN_SIDE_COLLIDER ? 0 : s->point[0];
}

/* the last step's pair with these keys nearest to pb, or -1. No radius: B's point moves in B's
 * frame while a pair slides on a fixed B or rolls (a ball rolling 0.1 m/s at dt 0.01 moves 1 mm
 * a step, the stiction anchors' radius), and a kept pair not found again would restart as an
 * ordinary one at phi0 ~ 1e-7 l, deep in its barrier (a kick). A contact of the same two sides
 * that is not the same (a box's other corner landing) inherits a kept shift: a looser barrier,
 * still kept from ending below phi = 0 (nl_ipc.c, settle) */
static int find_prev(const kn_ipc_touch* t, const int key[6], const double pb[3]) {
  int best = -1;
  double r2 = INFINITY;
  for (int j = 0; j < t->nprev; j++) {
    const kn_ipc_touch_pair* q = &t->prev[j];
    if (memcmp(q->key, key, sizeof q->key) != 0) continue;
    double d2 = 0;
    for (int a = 0; a < 3; a++) d2 += (q->p[a] - pb[a]) * (q->p[a] - pb[a]);
    if (d2 <= r2) r2 = d2, best = j;
  }
  return best;
}

double kn_ipc_touch_shift(kn_ipc_touch* t, int i, const kn_contact_side* a, const kn_contact_side* b, double phi0,
                          const double pb[3], double dhat, double tol, int* kind) {
  kn_ipc_touch_pair* c = &t->cur[i];
  side_key(a, c->key), side_key(b, c->key + 3);
  memcpy(c->p, pb, sizeof c->p);
  int j = t->nprev > 0 ? find_prev(t, c->key, pb) : -1;
  if (j >= 0 && phi0 < dhat) { /* kept while the pair is within dhat */
    *kind = KN_IPC_TOUCH_KEPT;
    return c->s = t->prev[j].s;
  }
  c->s = 0;
  if (j < 0 && fabs(phi0) <= tol) { /* touching: within round-off */
    *kind = KN_IPC_TOUCH_FRESH;
    return c->s = 0.5 * dhat - phi0;
  }
  *kind = phi0 < -tol ? KN_IPC_TOUCH_INSIDE : KN_IPC_TOUCH_NONE;
  return *kind ? 0.5 * dhat - phi0 : 0.0;
}

void kn_ipc_touch_commit(kn_ipc_touch* t, int n) {
  int m = 0;
  for (int i = 0; i < n; i++) m += t->cur[i].s > 0;
  if (m > t->cap_prev) {
    kn_ipc_touch_pair* p = realloc(t->prev, (size_t)m * sizeof *p);
    if (!p) { /* out of memory: the shifts are forgotten (the pairs go on as ordinary ones) */
      t->nprev = 0;
      return;
    }
    t->prev = p, t->cap_prev = m;
  }
  t->nprev = 0;
  for (int i = 0; i < n; i++)
    if (t->cur[i].s > 0) t->prev[t->nprev++] = t->cur[i];
}

void kn_ipc_touch_free(kn_ipc_touch* t) {
  free(t->prev), free(t->cur);
  memset(t, 0, sizeof *t);
}

void kn_ipc_touch_save(const kn_ipc_touch* t, kn_state_out* out) {
  int n = t->nprev;
  kn_state_put_i32(out, &n, 1);
  for (int j = 0; j < n; j++) {
    const kn_ipc_touch_pair* q = &t->prev[j];
    double x[4] = {q->p[0], q->p[1], q->p[2], q->s};
    kn_state_put_i32(out, q->key, 6);
    kn_state_put_f64(out, x, 4);
  }
}

kn_status kn_ipc_touch_load(kn_ipc_touch* t, kn_state_in* in, kn_error* err) {
  int n = 0;
  if (in->pos < in->len && (!kn_state_get_i32(in, &n, 1) || n < 0 || n > (1 << 24)))
    return kn_fail(err, KN_ERR_PARSE, "the ipc backend's touching-start shift count is missing or invalid");
  kn_ipc_touch_pair* p = n ? malloc((size_t)n * sizeof *p) : NULL;
  if (n && !p) return kn_fail(err, KN_ERR_NOMEM, "out of memory for %d touching-start shifts", n);
  for (int j = 0; j < n; j++) {
    double x[4];
    if (!kn_state_get_i32(in, p[j].key, 6) || !kn_state_get_f64(in, x, 4) || !(x[3] > 0) ||
        !isfinite(x[0] + x[1] + x[2] + x[3])) {
      free(p);
      return kn_fail(err, KN_ERR_PARSE, "the ipc backend's touching-start shift %d of %d is missing or invalid", j, n);
    }
    memcpy(p[j].p, x, sizeof p[j].p), p[j].s = x[3];
  }
  if (in->pos != in->len) {
    free(p);
    return kn_fail(err, KN_ERR_PARSE, "unread bytes after the ipc backend's touching-start shifts (a state of "
                                      "another layout)");
  }
  free(t->prev);
  t->prev = p, t->nprev = t->cap_prev = n;
  return KN_OK;
}
