/* Internal to penalty/: forward-mode dual numbers over the 15 scalar inputs of one mesh-relaxation
 * step (penalty-coulomb-friction.md §3.7.3: Y, Z and the triangle's vertices A, B, C, 3 each), so
 * that a step's five 3 x 3 partial Jacobians come out of the same arithmetic that computes it
 * (the authors' code does the same by forward AD; validated against central differences in
 * tests/penalty/test_mesh_relax.c). Not installed. */
#ifndef KNEAD_PENALTY_DUAL_H
#define KNEAD_PENALTY_DUAL_H

#include <math.h>
#include <string.h>

#define KN_DUAL_N 15

typedef struct {
  double v, d[KN_DUAL_N];
} kn_dual;

typedef struct {
  kn_dual x[3];
} kn_dual3;

static inline kn_dual kn_dual_const(double v) {
  kn_dual r;
  memset(&r, 0, sizeof r);
  r.v = v;
  return r;
}

/* (point p, first input slot) => p as three inputs (slots slot .. slot + 2) */
static inline kn_dual3 kn_dual3_input(const double p[3], int slot) {
  kn_dual3 r;
  for (int k = 0; k < 3; k++) {
    r.x[k] = kn_dual_const(p[k]);
    if (slot >= 0) r.x[k].d[slot + k] = 1;
  }
  return r;
}

static inline kn_dual kn_dual_add(kn_dual a, kn_dual b) {
  a.v += b.v;
  for (int i = 0; i < KN_DUAL_N; i++) a.d[i] += b.d[i];
  return a;
}

static inline kn_dual kn_dual_sub(kn_dual a, kn_dual b) {
  a.v -= b.v;
  for (int i = 0; i < KN_DUAL_N; i++) a.d[i] -= b.d[i];
  return a;
}

static inline kn_dual kn_dual_mul(kn_dual a, kn_dual b) {
  kn_dual r;
  r.v = a.v * b.v;
  for (int i = 0; i < KN_DUAL_N; i++) r.d[i] = a.d[i] * b.v + a.v * b.d[i];
  return r;
}

static inline kn_dual kn_dual_scale(kn_dual a, double s) {
  a.v *= s;
  for (int i = 0; i < KN_DUAL_N; i++) a.d[i] *= s;
  return a;
}

static inline kn_dual kn_dual_div(kn_dual a, kn_dual b) {
  kn_dual r;
  r.v = a.v / b.v;
  for (int i = 0; i < KN_DUAL_N; i++) r.d[i] = (a.d[i] - r.v * b.d[i]) / b.v;
  return r;
}

static inline kn_dual kn_dual_sqrt(kn_dual a) {
  kn_dual r;
  r.v = sqrt(a.v);
  for (int i = 0; i < KN_DUAL_N; i++) r.d[i] = r.v > 0 ? a.d[i] / (2 * r.v) : 0.0;
  return r;
}

static inline kn_dual3 kn_dual3_sub(kn_dual3 a, kn_dual3 b) {
  for (int k = 0; k < 3; k++) a.x[k] = kn_dual_sub(a.x[k], b.x[k]);
  return a;
}

static inline kn_dual3 kn_dual3_add(kn_dual3 a, kn_dual3 b) {
  for (int k = 0; k < 3; k++) a.x[k] = kn_dual_add(a.x[k], b.x[k]);
  return a;
}

static inline kn_dual3 kn_dual3_scale(kn_dual3 a, kn_dual s) {
  for (int k = 0; k < 3; k++) a.x[k] = kn_dual_mul(a.x[k], s);
  return a;
}

static inline kn_dual kn_dual3_dot(kn_dual3 a, kn_dual3 b) {
  return kn_dual_add(kn_dual_add(kn_dual_mul(a.x[0], b.x[0]), kn_dual_mul(a.x[1], b.x[1])), kn_dual_mul(a.x[2], b.x[2]));
}

static inline kn_dual3 kn_dual3_cross(kn_dual3 a, kn_dual3 b) {
  kn_dual3 r;
  for (int k = 0; k < 3; k++) {
    int i = (k + 1) % 3, j = (k + 2) % 3;
    r.x[k] = kn_dual_sub(kn_dual_mul(a.x[i], b.x[j]), kn_dual_mul(a.x[j], b.x[i]));
  }
  return r;
}

#endif
