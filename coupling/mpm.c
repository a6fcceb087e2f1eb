/* The MPM grid as a clique over the velocities of this step's active nodes (DoF 3 node + k): P2G
 * and the free motion (kn_mpm_free_motion), the Schur complement and recovery on that factor
 * (deformable/schur.c), G2P with plasticity (kn_mpm_advance). It keeps the last step's v_n+1 by
 * node: the warm start of the next step (v_start). */
#include <cholmod.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coupling/coupling.h"

typedef struct {
  kn_mpm_body* b;
  double gravity[3];
  kn_fem_schur* schur;
  double* D;              /* (3n)^2, the dense form on demand */
  size_t dcap;
  int *prev_index, prev_n; /* the last step's nodes (sorted) and their v_n+1 */
  double* prev_v;
  size_t prev_cap;
} mpm_clique;

static kn_csc_view mpm_sparse(const void* self) {
  const cholmod_sparse* A = (const cholmod_sparse*)kn_mpm_dynamics_matrix(((const mpm_clique*)self)->b);
  if (!A) return (kn_csc_view){0, NULL, NULL, NULL};
  return (kn_csc_view){(int)A->nrow, A->p, A->i, A->x};
}

static kn_status mpm_free_motion(void* self, double dt, kn_error* err) {
  mpm_clique* m = self;
  return kn_mpm_free_motion(m->b, dt, m->gravity, NULL, err);
}

static int mpm_ndof(const void* self) { return 3 * ((const mpm_clique*)self)->b->grid.n; }
static const double* mpm_v_star(const void* self) { return ((const mpm_clique*)self)->b->grid.v_star; }

static int cmp_node(const int* a, const int* b) {
  for (int k = 0; k < 3; k++)
    if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
  return 0;
}

/* each node's v_n+1 of the last step where the node existed, else its v_n from P2G. Measured on the
 * example scenes (SAP Newton iterations per step, P2G v_n -> last v_n+1): rolling 29.5 -> 15.5, shake
 * 30.9 -> 24.0, tearing 17.3 -> 17.0, pouring 16.2 -> 17.7. Contacts stuck to a panel or a roller
 * start inside SAP's thin stiction region (|v_t| <= mu sigma w gamma_n) instead of sliding on the
 * velocity noise that the G2P/P2G round trip adds. */
static void mpm_v_start(const void* self, double* v) {
  const mpm_clique* m = self;
  const kn_mpm_grid* g = &m->b->grid;
  int j = 0;
  for (int a = 0; a < g->n; a++) {
    const int* ia = g->index + 3 * a;
    while (j < m->prev_n && cmp_node(m->prev_index + 3 * j, ia) < 0) j++;
    int found = j < m->prev_n && cmp_node(m->prev_index + 3 * j, ia) == 0;
    memcpy(v + 3 * a, found ? m->prev_v + 3 * j : g->v + 3 * a, 3 * sizeof(double));
  }
}

static void mpm_diagonal(const void* self, double* d) {
  kn_csc_view A = mpm_sparse(self);
  kn_csc_diagonal(&A, d);
}

static void mpm_mass(const void* self, double* d) {
  const kn_mpm_grid* g = &((const mpm_clique*)self)->b->grid;
  for (int a = 0; a < g->n; a++) d[3 * a] = d[3 * a + 1] = d[3 * a + 2] = g->mass[a];
}

static const double* mpm_dense(void* self, kn_error* err) {
  mpm_clique* m = self;
  kn_csc_view A = mpm_sparse(self);
  return kn_csc_dense_into(&A, &m->D, &m->dcap, err);
}

static kn_status mpm_schur(void* self, const int* P, int np, double* S, kn_error* err) {
  mpm_clique* m = self;
  const struct cholmod_factor_struct* L = NULL;
  kn_status st = kn_mpm_dynamics_factor(m->b, &L, err);
  if (!st) st = kn_fem_schur_complement_factored(m->schur, kn_mpm_dynamics_matrix(m->b), L, P, np, S, err);
  return st;
}

static void mpm_recover(void* self, const double* dv_P, double* dv) {
  kn_fem_schur_recover(((mpm_clique*)self)->schur, dv_P, dv);
}

static kn_status mpm_potential(void* self, const double* v, double* E, double* grad, kn_csc_view* H, kn_error* err) {
  mpm_clique* m = self;
  const cholmod_sparse* Hs = NULL;
  kn_status st = kn_mpm_potential(m->b, v, E, grad, H ? (const struct cholmod_sparse_struct**)&Hs : NULL, err);
  if (!st && H) *H = (kn_csc_view){(int)Hs->nrow, Hs->p, Hs->i, Hs->x};
  return st;
}

static void mpm_point_map(void* self, int particle, const double p[3], double dt, kn_point_map* out) {
  (void)p, (void)dt;
  const mpm_clique* m = self;
  int nodes[27];
  out->n = kn_mpm_particle_weights(m->b, particle, nodes, out->w);
  for (int a = 0; a < out->n; a++) out->col[a] = 3 * nodes[a];
  memcpy(out->x0, m->b->x + 3 * particle, sizeof out->x0);
  memcpy(out->v0, m->b->v + 3 * particle, sizeof out->v0);
  out->B = NULL;
}

static kn_status mpm_advance(void* self, const double* v_next, double dt, kn_error* err) {
  mpm_clique* m = self;
  const kn_mpm_grid* g = &m->b->grid;
  size_t n = (size_t)g->n;
  if (n > m->prev_cap) {
    size_t cap = n + n / 2 + 16;
    int* pi = malloc(3 * cap * sizeof *pi);
    double* pv = malloc(3 * cap * sizeof *pv);
    if (!pi || !pv) return free(pi), free(pv), kn_fail(err, KN_ERR_NOMEM, "out of memory");
    free(m->prev_index), free(m->prev_v);
    m->prev_index = pi, m->prev_v = pv, m->prev_cap = cap, m->prev_n = 0;
  }
  /* the grid is rebuilt by the next P2G: keep its nodes and v_n+1 first */
  memcpy(m->prev_index, g->index, 3 * n * sizeof(int));
  memcpy(m->prev_v, v_next, 3 * n * sizeof(double));
  m->prev_n = g->n;
  return kn_mpm_advance(m->b, v_next, dt, err);
}

static const char* mpm_name(const void* self) { return ((const mpm_clique*)self)->b->name; }

/* backward Euler only: the grid is rebuilt by every P2G, so its nodes have no v_n of their own for
 * the trapezoidal rule's explicit half */
static kn_status mpm_set_scheme(void* self, double theta, kn_error* err) {
  if (theta == 1.0) return KN_OK;
  return kn_fail(err, KN_ERR_UNSUPPORTED, "MPM body '%s': only backward Euler (theta 1), not theta %g",
                 ((mpm_clique*)self)->b->name, theta);
}

static void mpm_destroy(void* self) {
  mpm_clique* m = self;
  if (!m) return;
  kn_fem_schur_free(m->schur);
  free(m->D), free(m->prev_index), free(m->prev_v);
  free(m);
}

static const kn_clique_ops mpm_ops = {KN_CLIQUE_MPM, mpm_free_motion, mpm_ndof,      mpm_v_star,    mpm_v_start,
                                      mpm_diagonal,  mpm_dense,       mpm_sparse,    mpm_schur,     mpm_recover,
                                      mpm_potential, mpm_point_map,   mpm_advance,   mpm_name,      mpm_destroy,
                                      mpm_set_scheme, mpm_mass};

kn_status kn_clique_mpm_create(kn_mpm_body* b, const double gravity[3], kn_clique* out, kn_error* err) {
  mpm_clique* m = kn_calloc(1, sizeof *m);
  if (!m) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  m->b = b;
  memcpy(m->gravity, gravity, sizeof m->gravity);
  if (!(m->schur = kn_fem_schur_create())) {
    mpm_destroy(m);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  *out = (kn_clique){&mpm_ops, m};
  return KN_OK;
}

void kn_clique_mpm_warm_start(const kn_clique* c, const int** nodes, const double** v, int* n) {
  const mpm_clique* m = c->self;
  *nodes = m->prev_index, *v = m->prev_v, *n = m->prev_n;
}

void kn_clique_mpm_take_warm_start(kn_clique* c, int* nodes, double* v, int n) {
  mpm_clique* m = c->self;
  free(m->prev_index), free(m->prev_v);
  m->prev_index = nodes, m->prev_v = v, m->prev_n = n, m->prev_cap = (size_t)n;
}
