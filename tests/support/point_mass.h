/* A point mass as a clique (coupling.h's interface, three DoFs): the smallest body the shared
 * nonlinear step can move. Its potential is 1/2 m |v - v*|^2 with v* = v_n + dt f / m, its one
 * material point the mass itself, x(v) = x_n + dt v. */
#ifndef KNEAD_TESTS_POINT_MASS_H
#define KNEAD_TESTS_POINT_MASS_H

#include <string.h>

#include "nonlinear/nonlinear.h"

typedef struct {
  double m, x[3], v[3], vstar[3];
  int hp[4], hi[3];
  double hx[3];
} point_mass;

static kn_status pm_free_motion(void* self, double dt, kn_error* err) { (void)self, (void)dt, (void)err; return KN_OK; }
static int pm_ndof(const void* self) { (void)self; return 3; }
static const double* pm_v_star(const void* self) { return ((const point_mass*)self)->vstar; }
static void pm_v_start(const void* self, double* v) { memcpy(v, ((const point_mass*)self)->v, 3 * sizeof *v); }
static void pm_diagonal(const void* self, double* d) { d[0] = d[1] = d[2] = ((const point_mass*)self)->m; }
static kn_status pm_potential(void* self, const double* v, double* E, double* grad, kn_csc_view* H, kn_error* err) {
  (void)err;
  point_mass* p = self;
  double e = 0;
  for (int k = 0; k < 3; k++) {
    double d = v[k] - p->vstar[k];
    e += 0.5 * p->m * d * d;
    if (grad) grad[k] = p->m * d;
    p->hp[k] = k, p->hi[k] = k, p->hx[k] = p->m;
  }
  p->hp[3] = 3;
  if (E) *E = e;
  if (H) *H = (kn_csc_view){3, p->hp, p->hi, p->hx};
  return KN_OK;
}
static void pm_point_map(void* self, int index, const double q[3], double dt, kn_point_map* out) {
  (void)index, (void)q, (void)dt;
  memcpy(out->x0, ((point_mass*)self)->x, sizeof out->x0);
  memcpy(out->v0, ((point_mass*)self)->v, sizeof out->v0);
  out->n = 1, out->col[0] = 0, out->w[0] = 1, out->B = NULL;
}
static const char* pm_name(const void* self) { (void)self; return "point mass"; }
static const kn_clique_ops point_mass_ops = {.kind = KN_CLIQUE_TREE, .free_motion = pm_free_motion, .ndof = pm_ndof,
                                             .v_star = pm_v_star, .v_start = pm_v_start, .diagonal = pm_diagonal,
                                             .potential = pm_potential, .point_map = pm_point_map, .name = pm_name};

// (point mass, dt, external force) => v* = v_n + dt f / m
static inline void pm_begin(point_mass* p, double dt, const double f[3]) {
  for (int k = 0; k < 3; k++) p->vstar[k] = p->v[k] + dt * f[k] / p->m;
}
// v_n+1 => x_n+1 = x_n + dt v_n+1
static inline void pm_advance(point_mass* p, double dt, const double* v) {
  for (int k = 0; k < 3; k++) p->v[k] = v[k], p->x[k] += dt * v[k];
}

#endif
