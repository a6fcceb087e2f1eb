/* Scripted task sequences: named phases moving joint targets by smoothsteps, then holding. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/controllers.h"

// (n, t0, q0) => an empty sequence
kn_status kn_seq_create(int n, double t0, const double* q0, kn_sequence** out, kn_error* err) {
  if (n < 1) return kn_fail(err, KN_ERR_INVALID, "sequence: expected at least 1 joint, got %d", n);
  if (!isfinite(t0)) return kn_fail(err, KN_ERR_INVALID, "sequence: start time is not finite");
  kn_sequence* s = kn_calloc(1, sizeof *s);
  if (!s) return kn_fail(err, KN_ERR_NOMEM, "sequence: out of memory");
  s->n = n;
  s->t0 = t0;
  s->q0 = kn_calloc((size_t)n, sizeof(double));
  if (!s->q0) {
    free(s);
    return kn_fail(err, KN_ERR_NOMEM, "sequence: out of memory");
  }
  if (q0) memcpy(s->q0, q0, (size_t)n * sizeof(double));
  *out = s;
  return KN_OK;
}

void kn_seq_free(kn_sequence* s) {
  if (!s) return;
  for (int i = 0; i < s->nphase; ++i) {
    free(s->phases[i].name);
    free(s->phases[i].q);
  }
  free(s->phases);
  free(s->q0);
  free(s);
}

void kn_seq_set_initial(kn_sequence* s, const double* q0) { memcpy(s->q0, q0, (size_t)s->n * sizeof(double)); }

double kn_seq_end_time(const kn_sequence* s) {
  if (s->nphase == 0) return s->t0;
  const kn_seq_phase* p = &s->phases[s->nphase - 1];
  return p->t_start + p->duration;
}

// (name, duration, q) => appended phase; err names the phase
kn_status kn_seq_add_phase(kn_sequence* s, const char* name, double duration, const double* q, kn_error* err) {
  const char* nm = name ? name : "";
  if (!(duration > 0.0) || !isfinite(duration))
    return kn_fail(err, KN_ERR_INVALID, "sequence phase %d '%s': duration %g: expected a finite value > 0",
                   s->nphase, nm, duration);
  if (!q) return kn_fail(err, KN_ERR_INVALID, "sequence phase %d '%s': target q is missing", s->nphase, nm);
  for (int j = 0; j < s->n; ++j)
    if (!isfinite(q[j]))
      return kn_fail(err, KN_ERR_INVALID, "sequence phase %d '%s': target q[%d] is not finite", s->nphase, nm, j);
  if (s->nphase == s->cap) {
    int cap = s->cap ? 2 * s->cap : 8;
    kn_seq_phase* ph = realloc(s->phases, (size_t)cap * sizeof *ph);
    if (!ph) return kn_fail(err, KN_ERR_NOMEM, "sequence: out of memory");
    s->phases = ph;
    s->cap = cap;
  }
  kn_seq_phase p = {0};
  p.name = kn_strdup(nm);
  p.q = kn_calloc((size_t)s->n, sizeof(double));
  if (!p.name || !p.q) {
    free(p.name);
    free(p.q);
    return kn_fail(err, KN_ERR_NOMEM, "sequence: out of memory");
  }
  memcpy(p.q, q, (size_t)s->n * sizeof(double));
  p.duration = duration;
  p.t_start = kn_seq_end_time(s);
  s->phases[s->nphase++] = p;
  return KN_OK;
}

// (t) => active phase index (-1 outside), its name and fraction s
int kn_seq_phase_at(const kn_sequence* s, double t, const char** name, double* s_out) {
  if (name) *name = NULL;
  if (s_out) *s_out = 0.0;
  if (t < s->t0) return -1;
  /* phases are few (approach, grasp, lift, shake...): a linear scan is simplest */
  for (int i = 0; i < s->nphase; ++i) {
    const kn_seq_phase* p = &s->phases[i];
    if (t < p->t_start + p->duration) {
      if (name) *name = p->name;
      if (s_out) *s_out = (t - p->t_start) / p->duration;
      return i;
    }
  }
  return -1;
}

int kn_seq_find_phase(const kn_sequence* s, const char* name) {
  for (int i = 0; i < s->nphase; ++i)
    if (strcmp(s->phases[i].name, name) == 0) return i;
  return -1;
}

// (t) => q, v, a: smoothstep of the active phase, holding outside
void kn_seq_eval(const kn_sequence* s, double t, double* q, double* v, double* a) {
  double frac = 0.0;
  int i = kn_seq_phase_at(s, t, NULL, &frac);
  const double* hold = s->q0;
  if (i < 0) {
    if (t >= s->t0 && s->nphase > 0) hold = s->phases[s->nphase - 1].q;
    for (int j = 0; j < s->n; ++j) {
      if (q) q[j] = hold[j];
      if (v) v[j] = 0.0;
      if (a) a[j] = 0.0;
    }
    return;
  }
  const kn_seq_phase* p = &s->phases[i];
  const double* from = i > 0 ? s->phases[i - 1].q : s->q0;
  /* the cubic smoothstep with zero end velocities: h(s) = 3s^2 - 2s^3, h' = 6s(1 - s),
   * h'' = 6 - 12s; chain rule with ds/dt = 1/T */
  double T = p->duration;
  double h = frac * frac * (3.0 - 2.0 * frac);
  double dh = 6.0 * frac * (1.0 - frac) / T;
  double ddh = (6.0 - 12.0 * frac) / (T * T);
  for (int j = 0; j < s->n; ++j) {
    double dq = p->q[j] - from[j];
    if (q) q[j] = from[j] + dq * h;
    if (v) v[j] = dq * dh;
    if (a) a[j] = dq * ddh;
  }
}
