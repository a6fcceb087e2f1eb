/* The FEM body as a clique over its free vertices' velocities (DoF 3 free_index[v] + k): the free
 * motion is Newton on its backward-Euler potential (kn_fem_free_motion), the Schur complement and
 * the recovery reuse that factor (deformable/schur.c), advance sets x, v and R0 (kn_fem_advance).
 * Under a scheme theta (the trapezoidal rule: 1/2) the body carries theta and those functions
 * integrate by it (deformable.h); a vertex's map starts at x_n + (1 - theta) dt v_n. */
#include <cholmod.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coupling/coupling.h"

typedef struct {
  kn_fem_body* b;
  kn_fem_schur* schur;
  double dt;              /* of the last free motion */
  double *v_star, *vnext; /* 3 nfree; 3 nvert */
  double* D;              /* (3 nfree)^2, the dense form on demand */
  size_t dcap;
} fem_clique;

static kn_csc_view fem_sparse(const void* self) {
  const fem_clique* f = self;
  const cholmod_sparse* A = (const cholmod_sparse*)kn_fem_body_dynamics_matrix(f->b);
  if (!A) return (kn_csc_view){0, NULL, NULL, NULL};
  return (kn_csc_view){(int)A->nrow, A->p, A->i, A->x};
}

static kn_status fem_free_motion(void* self, double dt, kn_error* err) {
  fem_clique* f = self;
  kn_fem_body* b = f->b;
  f->dt = dt;
  kn_status st = kn_fem_free_motion(b, dt, NULL, err);
  if (st) return st;
  for (int u = 0; u < b->mesh.nvert; u++) {
    int fv = b->free_index[u];
    if (fv >= 0) memcpy(f->v_star + 3 * fv, b->v_star + 3 * u, 3 * sizeof(double));
  }
  return KN_OK;
}

static int fem_ndof(const void* self) { return 3 * ((const fem_clique*)self)->b->nfree; }
static const double* fem_v_star(const void* self) { return ((const fem_clique*)self)->v_star; }

static void fem_v_start(const void* self, double* v) {
  const fem_clique* f = self;
  for (int u = 0; u < f->b->mesh.nvert; u++) {
    int fv = f->b->free_index[u];
    if (fv >= 0) memcpy(v + 3 * fv, f->b->v + 3 * u, 3 * sizeof(double));
  }
}

static void fem_diagonal(const void* self, double* d) {
  kn_csc_view A = fem_sparse(self);
  kn_csc_diagonal(&A, d);
}

static void fem_mass(const void* self, double* d) {
  const kn_fem_body* b = ((const fem_clique*)self)->b;
  for (int u = 0; u < b->mesh.nvert; u++)
    if (b->free_index[u] >= 0) d[3 * b->free_index[u]] = d[3 * b->free_index[u] + 1] = d[3 * b->free_index[u] + 2] = b->mass[u];
}

static const double* fem_dense(void* self, kn_error* err) {
  fem_clique* f = self;
  kn_csc_view A = fem_sparse(self);
  return kn_csc_dense_into(&A, &f->D, &f->dcap, err);
}

static kn_status fem_schur(void* self, const int* P, int np, double* S, kn_error* err) {
  fem_clique* f = self;
  /* the free motion's factor of A at v* (reused, not refactorized), kept until recover */
  const struct cholmod_factor_struct* L = NULL;
  kn_status st = kn_fem_body_dynamics_factor(f->b, &L, err);
  if (!st) st = kn_fem_schur_complement_factored(f->schur, kn_fem_body_dynamics_matrix(f->b), L, P, np, S, err);
  return st;
}

static void fem_recover(void* self, const double* dv_P, double* dv) {
  kn_fem_schur_recover(((fem_clique*)self)->schur, dv_P, dv);
}

static kn_status fem_potential(void* self, const double* v, double* E, double* grad, kn_csc_view* H, kn_error* err) {
  fem_clique* f = self;
  const cholmod_sparse* Hs = NULL;
  kn_status st = kn_fem_potential(f->b, f->dt, v, E, grad, H ? (const struct cholmod_sparse_struct**)&Hs : NULL, err);
  if (!st && H) *H = (kn_csc_view){(int)Hs->nrow, Hs->p, Hs->i, Hs->x};
  return st;
}

static void fem_point_map(void* self, int vertex, const double p[3], double dt, kn_point_map* out) {
  (void)p;
  const fem_clique* f = self;
  int fv = f->b->free_index[vertex];
  const kn_fem_body* b = f->b;
  memcpy(out->x0, b->x + 3 * vertex, sizeof out->x0);
  memcpy(out->v0, b->v + 3 * vertex, sizeof out->v0);
  if (b->theta != 1.0)
    for (int k = 0; k < 3; k++) out->x0[k] += (1 - b->theta) * dt * out->v0[k];
  out->n = fv >= 0;
  out->col[0] = 3 * fv, out->w[0] = 1.0;
  out->B = NULL;
}

static kn_status fem_advance(void* self, const double* v_next, double dt, kn_error* err) {
  (void)err;
  fem_clique* f = self;
  kn_fem_body* b = f->b;
  for (int u = 0; u < b->mesh.nvert; u++) {
    int fv = b->free_index[u];
    if (fv >= 0)
      memcpy(f->vnext + 3 * u, v_next + 3 * fv, 3 * sizeof(double));
    else
      memset(f->vnext + 3 * u, 0, 3 * sizeof(double));
  }
  kn_fem_advance(b, dt, f->vnext);
  return KN_OK;
}

static const char* fem_name(const void* self) { return ((const fem_clique*)self)->b->name; }

/* the body's own theta: its free motion, potential and advance read it (deformable.h) */
static kn_status fem_set_scheme(void* self, double theta, kn_error* err) {
  (void)err;
  ((fem_clique*)self)->b->theta = theta;
  return KN_OK;
}

static void fem_destroy(void* self) {
  fem_clique* f = self;
  if (!f) return;
  kn_fem_schur_free(f->schur);
  free(f->v_star), free(f->vnext), free(f->D);
  free(f);
}

static const kn_clique_ops fem_ops = {KN_CLIQUE_FEM, fem_free_motion, fem_ndof,      fem_v_star,     fem_v_start,
                                      fem_diagonal,  fem_dense,       fem_sparse,    fem_schur,      fem_recover,
                                      fem_potential, fem_point_map,   fem_advance,   fem_name,       fem_destroy,
                                      fem_set_scheme, fem_mass};

kn_status kn_clique_fem_create(kn_fem_body* b, kn_clique* out, kn_error* err) {
  fem_clique* f = kn_calloc(1, sizeof *f);
  if (!f) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  f->b = b;
  f->schur = kn_fem_schur_create();
  f->v_star = kn_calloc(3 * (size_t)b->mesh.nvert + 1, sizeof(double));
  f->vnext = kn_calloc(3 * (size_t)b->mesh.nvert + 1, sizeof(double));
  if (!f->schur || !f->v_star || !f->vnext) {
    fem_destroy(f);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  *out = (kn_clique){&fem_ops, f};
  return KN_OK;
}
