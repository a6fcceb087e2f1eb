/* The ipc backend's touching start: per-pair barrier shifts kept across steps (sim/ipc_touch.h) */
#include "sim/ipc_touch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/stiction.h"

#define TOUCH_G0 9.81 /* [m/s^2] the acceleration scale of the removal */

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

/* the last step's pair with these keys nearest to pb (within the stiction match radius), or -1 */
static int find_prev(const kn_ipc_touch* t, const int key[6], const double pb[3]) {
  int best = -1;
  double r2 = KN_STICTION_MATCH_RADIUS * KN_STICTION_MATCH_RADIUS;
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
                          const double pb[3], double dt, double dhat, double tol, int* fresh, double* s_lag) {
  kn_ipc_touch_pair* c = &t->cur[i];
  side_key(a, c->key), side_key(b, c->key + 3);
  memcpy(c->p, pb, sizeof c->p);
  *fresh = 0;
  int j = t->nprev > 0 ? find_prev(t, c->key, pb) : -1;
  if (j < 0) {
    c->s0 = phi0 > tol ? 0.0 : 0.5 * dhat - phi0, c->age = 0; /* touching: within round-off */
    *fresh = c->s0 > 0, *s_lag = c->s0;
    return c->s0;
  }
  const kn_ipc_touch_pair* q = &t->prev[j];
  double T = sqrt(6000 * q->s0 / TOUCH_G0), u = fmin((q->age + dt) / T, 1.0);
  double s_prev = q->s0 * (1 - q->age / T * q->age / T * (3 - 2 * q->age / T));
  if (q->age >= T) s_prev = 0;
  double s = q->s0 * (1 - u * u * (3 - 2 * u));
  s = fmax(s, s_prev - 0.1 * (phi0 + s_prev)); /* at most a tenth of the barrier distance per step */
  c->s0 = q->s0, c->age = q->age + dt, *s_lag = s_prev;
  if (!(s > 0)) s = 0, c->s0 = 0; /* removed: the pair is an ordinary one from now on */
  return s;
}

void kn_ipc_touch_commit(kn_ipc_touch* t, int n) {
  int m = 0;
  for (int i = 0; i < n; i++) m += t->cur[i].s0 > 0;
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
    if (t->cur[i].s0 > 0) t->prev[t->nprev++] = t->cur[i];
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
    double x[5] = {q->p[0], q->p[1], q->p[2], q->s0, q->age};
    kn_state_put_i32(out, q->key, 6);
    kn_state_put_f64(out, x, 5);
  }
}

kn_status kn_ipc_touch_load(kn_ipc_touch* t, kn_state_in* in, kn_error* err) {
  int n;
  if (!kn_state_get_i32(in, &n, 1) || n < 0 || n > (1 << 24))
    return kn_fail(err, KN_ERR_PARSE, "the ipc backend's touching-start shifts are missing");
  kn_ipc_touch_pair* p = n ? malloc((size_t)n * sizeof *p) : NULL;
  if (n && !p) return kn_fail(err, KN_ERR_NOMEM, "out of memory for %d touching-start shifts", n);
  for (int j = 0; j < n; j++) {
    double x[5];
    if (!kn_state_get_i32(in, p[j].key, 6) || !kn_state_get_f64(in, x, 5) || !(x[3] > 0 && x[4] >= 0) ||
        !isfinite(x[0] + x[1] + x[2] + x[3] + x[4])) {
      free(p);
      return kn_fail(err, KN_ERR_PARSE, "the ipc backend's touching-start shift %d is missing or invalid", j);
    }
    memcpy(p[j].p, x, sizeof p[j].p), p[j].s0 = x[3], p[j].age = x[4];
  }
  free(t->prev);
  t->prev = p, t->nprev = t->cap_prev = n;
  return KN_OK;
}
