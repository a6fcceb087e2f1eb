/* What every clique kind shares: destruction, the evaluation of a point map, the matrix views. */
#include <stdlib.h>
#include <string.h>

#include "coupling/coupling.h"

void kn_clique_destroy(kn_clique* c) {
  if (c && c->ops) c->ops->destroy(c->self);
  if (c) c->ops = NULL, c->self = NULL;
}

void kn_point_map_eval(const kn_point_map* m, int ndof, const double* v, double dt, double x[3]) {
  for (int r = 0; r < 3; r++) {
    double s = 0;
    for (int a = 0; a < m->n; a++) s += m->w[a] * v[m->col[a] + r];
    if (m->B)
      for (int j = 0; j < ndof; j++) s += m->B[(size_t)r * ndof + j] * v[j];
    x[r] = m->x0[r] + dt * s;
  }
}

void kn_csc_diagonal(const kn_csc_view* A, double* d) {
  for (int j = 0; j < A->n; j++) d[j] = A->x[A->p[j]];
}

void kn_csc_dense(const kn_csc_view* A, double* D) {
  size_t n = (size_t)A->n;
  memset(D, 0, n * n * sizeof *D);
  for (int j = 0; j < A->n; j++)
    for (int k = A->p[j]; k < A->p[j + 1]; k++) D[(size_t)A->i[k] * n + j] = D[(size_t)j * n + A->i[k]] = A->x[k];
}

void kn_csc_mul(const kn_csc_view* A, const double* x, double* y) {
  for (int i = 0; i < A->n; i++) y[i] = 0;
  for (int j = 0; j < A->n; j++)
    for (int k = A->p[j]; k < A->p[j + 1]; k++) {
      int i = A->i[k];
      y[i] += A->x[k] * x[j];
      if (i != j) y[j] += A->x[k] * x[i];
    }
}

const double* kn_csc_dense_into(const kn_csc_view* A, double** D, size_t* cap, kn_error* err) {
  size_t n = (size_t)A->n;
  if (n * n > *cap) {
    double* x = realloc(*D, n * n * sizeof *x);
    if (!x) return kn_fail(err, KN_ERR_NOMEM, "out of memory"), NULL;
    *D = x, *cap = n * n;
  }
  kn_csc_dense(A, *D);
  return *D;
}

kn_status kn_clique_set_scheme(kn_clique* c, double theta, kn_error* err) {
  if (!(theta >= 0.5 && theta <= 1.0))
    return kn_fail(err, KN_ERR_INVALID, "%s: time integration theta %g, expected within [0.5, 1]", c->ops->name(c->self),
                   theta);
  if (c->ops->set_scheme) return c->ops->set_scheme(c->self, theta, err);
  if (theta == 1.0) return KN_OK;
  return kn_fail(err, KN_ERR_UNSUPPORTED, "%s: only backward Euler", c->ops->name(c->self));
}
