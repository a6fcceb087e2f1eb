/* The articulated tree as a clique: A = M + dt D and v* from the explicit forces
 * (kn_mb_free_motion), exact for the dynamics linearized at q_n; point maps are point Jacobians at
 * q_n; advance is q_n+1 = q_n + dt N(q_n) v_n+1 (kn_mb_advance).
 *
 * Under a scheme theta (coupling.h; 1/2: the trapezoidal rule) the tree stays linearized at q_n:
 * its forces but damping (gravity, bias, explicit actuation) have no q- or v-dependence within the
 * step, so both halves of the rule take them at (q_n, v_n) and only damping is averaged,
 *   M (v - v_n) = dt (tau - c) - theta dt D v - (1 - theta) dt D v_n  =>  A = M + theta dt D,
 *   A (v* - v_n) = dt (tau - c - D v_n)   (kn_mb_free_motion_theta),
 * whose potential is still 1/2 (v - v*)^T A (v - v*): the consistent trapezoidal form of the
 * linearized tree (its contact forces are the backend's, averaged there). Positions follow
 * q_n+1 = q_n + dt N(q_n) ((1 - theta) v_n + theta v_n+1), a point p(v) = p_n + (1 - theta) dt J v_n
 * + theta dt J v, J at q_n. Robot-side terms (implicit PD, limits, welds) are not clique forces: a
 * backend treats them as it does under backward Euler. */
#include <stdlib.h>
#include <string.h>

#include "coupling/coupling.h"

typedef struct {
  const kn_mb_model* m;
  kn_mb_data* data;
  double *q, *v;
  const double* q_start;
  const double* tau;     /* this step's explicit forces (kn_clique_tree_begin), NULL: none */
  const char* name;
  int nv;
  double *A, *v_star, *scratch, *J; /* nv^2, nv, nv^2 + nv, 3 nv */
  double* dv;            /* nv: potential's scratch; advance's mean velocity */
  double theta;          /* the scheme (coupling.h): 1 backward Euler */
  int *hp, *hi;          /* the Hessian's dense lower pattern, built on first use */
  double* hx;
} tree_clique;

static kn_status tree_free_motion(void* self, double dt, kn_error* err) {
  tree_clique* t = self;
  return kn_mb_free_motion_theta(t->m, t->data, NULL, t->v, t->tau, dt, t->theta, t->A, t->v_star, t->scratch, err);
}

static int tree_ndof(const void* self) { return ((const tree_clique*)self)->nv; }
static const double* tree_v_star(const void* self) { return ((const tree_clique*)self)->v_star; }

static void tree_v_start(const void* self, double* v) {
  const tree_clique* t = self;
  memcpy(v, t->v, (size_t)t->nv * sizeof *v);
}

static void tree_diagonal(const void* self, double* d) {
  const tree_clique* t = self;
  for (int j = 0; j < t->nv; j++) d[j] = t->A[(size_t)j * t->nv + j];
}

static const double* tree_dense(void* self, kn_error* err) {
  (void)err;
  return ((tree_clique*)self)->A;
}

static kn_csc_view tree_sparse(const void* self) {
  (void)self;
  return (kn_csc_view){0, NULL, NULL, NULL};
}

/* S = A_PP - A_PN A_NN^-1 A_NP; a tree's constraints touch all its DoFs, so P is all of them in
 * practice: only that case is offered (S = A) */
static kn_status tree_schur(void* self, const int* P, int np, double* S, kn_error* err) {
  tree_clique* t = self;
  for (int a = 0; a < np; a++)
    if (np != t->nv || P[a] != a)
      return kn_fail(err, KN_ERR_UNSUPPORTED, "tree '%s': a Schur complement over part of its DoFs", t->name);
  memcpy(S, t->A, (size_t)np * (size_t)np * sizeof *S);
  return KN_OK;
}

static void tree_recover(void* self, const double* dv_P, double* dv) {
  const tree_clique* t = self;
  memcpy(dv, dv_P, (size_t)t->nv * sizeof *dv);
}

static kn_status tree_potential(void* self, const double* v, double* E, double* grad, kn_csc_view* H,
                                kn_error* err) {
  tree_clique* t = self;
  int n = t->nv;
  for (int j = 0; j < n; j++) t->dv[j] = v[j] - t->v_star[j];
  double e = 0;
  for (int i = 0; i < n; i++) {
    double g = 0;
    for (int j = 0; j < n; j++) g += t->A[(size_t)i * n + j] * t->dv[j];
    if (grad) grad[i] = g;
    e += 0.5 * t->dv[i] * g;
  }
  if (E) *E = e;
  if (!H) return KN_OK;
  if (!t->hp) {
    t->hp = malloc(((size_t)n + 1) * sizeof *t->hp);
    t->hi = malloc((size_t)n * (size_t)(n + 1) / 2 * sizeof *t->hi);
    t->hx = malloc((size_t)n * (size_t)(n + 1) / 2 * sizeof *t->hx);
    if (!t->hp || !t->hi || !t->hx) {
      free(t->hp), free(t->hi), free(t->hx);
      t->hp = NULL, t->hi = NULL, t->hx = NULL;
      return kn_fail(err, KN_ERR_NOMEM, "out of memory");
    }
  }
  int k = 0;
  for (int j = 0; j < n; j++) {
    t->hp[j] = k;
    for (int i = j; i < n; i++) t->hi[k] = i, t->hx[k++] = t->A[(size_t)i * n + j];
  }
  t->hp[n] = k;
  *H = (kn_csc_view){n, t->hp, t->hi, t->hx};
  return KN_OK;
}

static void tree_point_map(void* self, int body, const double p[3], double dt, kn_point_map* out) {
  (void)dt;
  tree_clique* t = self;
  kn_pose Xinv;
  kn_pose_inv(&t->data->X_wb[body], &Xinv);
  double p_b[3];
  kn_pose_apply(&Xinv, p, p_b);
  kn_mb_point_jacobian(t->m, t->data, body, p_b, t->J, NULL);
  memcpy(out->x0, p, sizeof out->x0);
  for (int r = 0; r < 3; r++) {
    double s = 0;
    for (int j = 0; j < t->nv; j++) s += t->J[(size_t)r * t->nv + j] * t->v[j];
    out->v0[r] = s;
  }
  if (t->theta != 1.0)
    for (int r = 0; r < 3; r++) out->x0[r] += (1 - t->theta) * dt * out->v0[r];
  out->n = 0;
  out->B = t->J;
}

static kn_status tree_advance(void* self, const double* v_next, double dt, kn_error* err) {
  (void)err;
  tree_clique* t = self;
  if (t->theta == 1.0) {
    memcpy(t->v, v_next, (size_t)t->nv * sizeof *t->v);
    kn_mb_advance(t->m, t->q_start, t->v, dt, t->q);
    return KN_OK;
  }
  /* q by the mean velocity; v_n+1 re-expressed in the body frame at q_n+1 as kn_mb_advance does with
   * its own: a floating body's frame turned by exp(dt omega_mean), so both its parts turn back */
  for (int j = 0; j < t->nv; j++) t->dv[j] = (1 - t->theta) * t->v[j] + t->theta * v_next[j];
  kn_mb_advance(t->m, t->q_start, t->dv, dt, t->q);
  memcpy(t->v, v_next, (size_t)t->nv * sizeof *t->v);
  for (int i = 0; i < t->m->nbody; i++) {
    const kn_mb_body* b = &t->m->bodies[i];
    const double* w = t->dv + b->v_adr;
    double angle = kn_vec3_norm(w) * dt;
    if (b->jtype != KN_JOINT_FLOATING || !(angle > 0)) continue;
    double axis[3], E[9], x[3];
    for (int k = 0; k < 3; k++) axis[k] = w[k] / kn_vec3_norm(w);
    kn_mat3_from_axis_angle(axis, angle, E);
    for (int part = 0; part < 2; part++) {
      kn_mat3_tvec(E, t->v + b->v_adr + 3 * part, x);
      memcpy(t->v + b->v_adr + 3 * part, x, sizeof x);
    }
  }
  return KN_OK;
}

static kn_status tree_set_scheme(void* self, double theta, kn_error* err) {
  (void)err;
  ((tree_clique*)self)->theta = theta;
  return KN_OK;
}

static const char* tree_name(const void* self) { return ((const tree_clique*)self)->name; }

static void tree_destroy(void* self) {
  tree_clique* t = self;
  if (!t) return;
  free(t->A), free(t->v_star), free(t->scratch), free(t->J), free(t->dv);
  free(t->hp), free(t->hi), free(t->hx);
  free(t);
}

static const kn_clique_ops tree_ops = {KN_CLIQUE_TREE, tree_free_motion, tree_ndof,    tree_v_star,
                                       tree_v_start,   tree_diagonal,    tree_dense,   tree_sparse,
                                       tree_schur,     tree_recover,     tree_potential, tree_point_map,
                                       tree_advance,   tree_name,        tree_destroy,
                                       tree_set_scheme, NULL /* mass: A's diagonal (M + dt D: no stiffness hides a rigid mode) */};

kn_status kn_clique_tree_create(const kn_mb_model* m, kn_mb_data* data, double* q, double* v, const double* q_start,
                                const char* name, kn_clique* out, kn_error* err) {
  if (m->nv <= 0) return kn_fail(err, KN_ERR_INVALID, "tree '%s': a clique needs nv > 0", name);
  tree_clique* t = kn_calloc(1, sizeof *t);
  if (!t) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  size_t nv = (size_t)m->nv;
  t->m = m, t->data = data, t->q = q, t->v = v, t->q_start = q_start, t->name = name, t->nv = m->nv;
  t->theta = 1.0;
  t->A = kn_calloc(nv * nv, sizeof(double));
  t->v_star = kn_calloc(nv, sizeof(double));
  t->scratch = kn_calloc(nv * nv + nv, sizeof(double));
  t->J = kn_calloc(3 * nv, sizeof(double));
  t->dv = kn_calloc(nv, sizeof(double));
  if (!t->A || !t->v_star || !t->scratch || !t->J || !t->dv) {
    tree_destroy(t);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  *out = (kn_clique){&tree_ops, t};
  return KN_OK;
}

void kn_clique_tree_begin(kn_clique* c, const double* tau) { ((tree_clique*)c->self)->tau = tau; }
