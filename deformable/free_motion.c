/* knead/deformable — implicit (backward Euler) free motion of an FEM body: Newton on the incremental
 * potential in velocity form with a backtracking Armijo line search; the sparse Hessian
 * A = M + dt D + dt^2 K is factorized by CHOLMOD (supernodal) with the symbolic analysis kept for
 * as long as the set of fixed vertices (hence the pattern) does not change. Digest 6.1-6.2. */
#include <cholmod.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "deformable/deformable.h"

struct kn_fem_solver {
  cholmod_common cc;
  int n;                /* 3 * nfree */
  cholmod_sparse* A;    /* lower triangle, stype -1 */
  cholmod_sparse* H;    /* kn_fem_potential's Hessian: A's pattern, allocated on first request */
  cholmod_factor* L;    /* symbolic analysis kept across iterations and steps */
  kn_chol_permuted perm; /* A's entries in L's permuted order (common/sparse_chol.c) */
  int factor_current;   /* 1: L holds the numeric factor of A as it is now (reused by the Schur complement) */
  int* nbr_start;       /* nfree + 1: neighbours i > j of free vertex j, sorted */
  int* nbr;
  int* tet_rank;        /* 16 per tet: pair (v, w) with fi >= fj: -1 diagonal block, else rank of fi among j's */
  double* Kv;           /* nnz: sum of element stiffnesses at the current iterate */
  double* Kd;           /* nnz: K at the step start, for stiffness (beta) damping */
  double *y, *y0, *g, *dy, *yt, *x, *Dy;
  double *xh, *lin;     /* theta != 1: x^ = x_n + (1 - theta) dt v_n (3 nvert), (1 - theta) dt f_n (n) */
  /* the body state Kd, xh and lin were computed from: (x, v, R0, dt, theta); recomputed when it differs */
  double *key_x, *key_v, *key_R0, key_dt, key_theta;
  int key_valid;
};

kn_fem_newton_options kn_fem_newton_options_default(void) {
  kn_fem_newton_options o = {.max_iterations = 50, .rel_tolerance = 1e-6, .armijo = 1e-4, .max_backtracks = 30};
  return o;
}

// solver => released
void kn_fem_solver_free(kn_fem_solver* s) {
  if (!s) return;
  if (s->A) cholmod_free_sparse(&s->A, &s->cc);
  if (s->H) cholmod_free_sparse(&s->H, &s->cc);
  if (s->L) cholmod_free_factor(&s->L, &s->cc);
  kn_chol_permuted_free(&s->perm, &s->cc);
  cholmod_finish(&s->cc);
  free(s->nbr_start);
  free(s->nbr);
  free(s->tet_rank);
  free(s->Kv);
  free(s->Kd);
  free(s->y);
  free(s->y0);
  free(s->g);
  free(s->dy);
  free(s->yt);
  free(s->x);
  free(s->Dy);
  free(s->xh);
  free(s->lin);
  free(s->key_x), free(s->key_v), free(s->key_R0);
  free(s);
}

const struct cholmod_sparse_struct* kn_fem_body_dynamics_matrix(const kn_fem_body* b) {
  return b->solver ? b->solver->A : NULL;
}

// body after kn_fem_free_motion => the CHOLMOD factor of A at v_star (factorized only if Newton's last one is stale)
kn_status kn_fem_body_dynamics_factor(kn_fem_body* b, const struct cholmod_factor_struct** L, kn_error* err) {
  kn_fem_solver* s = b->solver;
  *L = NULL;
  if (!s || !s->L) return kn_fail(err, KN_ERR_INVALID, "%s: no dynamics matrix before the first free motion", b->name);
  if (!s->factor_current) {
    /* a nonlinear model's Newton ends with A assembled at v_star after its last factorization (at the
     * previous iterate), or Newton converged without a step: one numeric factorization, same analysis */
    kn_chol_permuted_factor(&s->perm, s->A, s->L, &s->cc);
    if (s->cc.status < CHOLMOD_OK || s->cc.status == CHOLMOD_NOT_POSDEF || s->L->minor < s->L->n)
      return kn_fail(err, KN_ERR_NUMERIC, "%s: the %d x %d dynamics matrix is not positive definite (CHOLMOD status %d, column %d)",
                     b->name, s->n, s->n, s->cc.status, (int)s->L->minor);
    s->factor_current = 1;
  }
  *L = (const struct cholmod_factor_struct*)s->L;
  return KN_OK;
}

//---- sparsity pattern (built once per set of fixed vertices) ----

static int cmp_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return (x > y) - (x < y);
}

static int rank_of(const kn_fem_solver* s, int j, int i) {
  int lo = s->nbr_start[j], hi = s->nbr_start[j + 1] - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (s->nbr[mid] == i) return mid - s->nbr_start[j];
    if (s->nbr[mid] < i) lo = mid + 1;
    else hi = mid - 1;
  }
  return -2; /* unreachable: every tet pair is in the pattern */
}

/* position in A->x of entry (row 3 fi + r, column 3 fj + c), fi >= fj, given the pair's rank */
static inline size_t slot(const int* Ap, int fj, int rank, int r, int c) {
  return (size_t)Ap[3 * fj + c] + (size_t)(rank < 0 ? r - c : (3 - c) + 3 * rank + r);
}

static kn_status build_solver(kn_fem_body* b, kn_error* err) {
  const kn_tet_mesh* m = &b->mesh;
  kn_fem_solver* s = kn_calloc(1, sizeof *s);
  if (!s) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for the FEM solver", b->name);
  kn_chol_start(&s->cc);
  b->solver = s;
  int nf = b->nfree, n = 3 * nf;
  s->n = n;
  size_t nv3 = 3 * (size_t)m->nvert;
  uint64_t* pairs = kn_calloc(6 * (size_t)m->ntet, sizeof(uint64_t));
  s->nbr_start = kn_calloc((size_t)nf + 1, sizeof(int));
  s->tet_rank = kn_calloc(16 * (size_t)m->ntet, sizeof(int));
  s->y = kn_calloc((size_t)n, sizeof(double));
  s->y0 = kn_calloc((size_t)n, sizeof(double));
  s->g = kn_calloc((size_t)n, sizeof(double));
  s->dy = kn_calloc((size_t)n, sizeof(double));
  s->yt = kn_calloc((size_t)n, sizeof(double));
  s->Dy = kn_calloc((size_t)n, sizeof(double));
  s->x = kn_calloc(nv3, sizeof(double));
  s->xh = kn_calloc(nv3, sizeof(double));
  s->lin = kn_calloc((size_t)n + 1, sizeof(double));
  s->key_x = kn_calloc(nv3, sizeof(double));
  s->key_v = kn_calloc(nv3, sizeof(double));
  s->key_R0 = kn_calloc(9 * (size_t)m->ntet + 1, sizeof(double));
  if (!pairs || !s->nbr_start || !s->tet_rank || !s->y || !s->y0 || !s->g || !s->dy || !s->yt || !s->Dy || !s->x ||
      !s->xh || !s->lin || !s->key_x || !s->key_v || !s->key_R0) {
    free(pairs);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for the FEM solver", b->name);
  }
  size_t np = 0;
  for (int e = 0; e < m->ntet; e++)
    for (int p = 0; p < 4; p++)
      for (int q = p + 1; q < 4; q++) {
        int fi = b->free_index[m->tet[4 * e + p]], fj = b->free_index[m->tet[4 * e + q]];
        if (fi < 0 || fj < 0 || fi == fj) continue;
        if (fi < fj) { int t = fi; fi = fj; fj = t; }
        pairs[np++] = (uint64_t)fj * (uint64_t)nf + (uint64_t)fi;
      }
  qsort(pairs, np, sizeof *pairs, cmp_u64);
  size_t nu = 0;
  for (size_t k = 0; k < np; k++)
    if (nu == 0 || pairs[k] != pairs[nu - 1]) pairs[nu++] = pairs[k];
  s->nbr = kn_calloc(nu, sizeof(int));
  if (!s->nbr) {
    free(pairs);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for the FEM solver", b->name);
  }
  for (size_t k = 0; k < nu; k++) {
    s->nbr_start[pairs[k] / (uint64_t)nf + 1]++;
    s->nbr[k] = (int)(pairs[k] % (uint64_t)nf);
  }
  free(pairs);
  for (int j = 0; j < nf; j++) s->nbr_start[j + 1] += s->nbr_start[j];
  size_t nnz = 6 * (size_t)nf + 9 * nu;
  s->A = cholmod_allocate_sparse((size_t)n, (size_t)n, nnz, 1, 1, -1, CHOLMOD_REAL, &s->cc);
  s->Kv = kn_calloc(nnz, sizeof(double));
  s->Kd = kn_calloc(nnz, sizeof(double));
  if (!s->A || !s->Kv || !s->Kd) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for a %d x %d matrix", b->name, n, n);
  int* Ap = s->A->p;
  int* Ai = s->A->i;
  int at = 0;
  for (int j = 0; j < nf; j++)
    for (int c = 0; c < 3; c++) {
      Ap[3 * j + c] = at;
      for (int r = c; r < 3; r++) Ai[at++] = 3 * j + r;
      for (int k = s->nbr_start[j]; k < s->nbr_start[j + 1]; k++)
        for (int r = 0; r < 3; r++) Ai[at++] = 3 * s->nbr[k] + r;
    }
  Ap[n] = at;
  for (int e = 0; e < m->ntet; e++)
    for (int p = 0; p < 4; p++)
      for (int q = 0; q < 4; q++) {
        int fi = b->free_index[m->tet[4 * e + p]], fj = b->free_index[m->tet[4 * e + q]];
        int* rk = s->tet_rank + 16 * e + 4 * p + q;
        if (fi < 0 || fj < 0 || fi < fj) *rk = -3;  /* not stored (fixed, or the upper triangle) */
        else *rk = fi == fj ? -1 : rank_of(s, fj, fi);
      }
  if (n > 0) {
    s->L = kn_chol_analyze(s->A, NULL, &s->cc);
    if (!s->L || s->cc.status < CHOLMOD_OK)
      return kn_fail(err, KN_ERR_NUMERIC, "%s: CHOLMOD symbolic analysis failed (status %d) on a %d x %d matrix",
                     b->name, s->cc.status, n, n);
    kn_status st = kn_chol_permuted_prepare(&s->perm, s->A, s->L, &s->cc, err);
    if (st != KN_OK) return st;
  }
  return KN_OK;
}

//---- the incremental potential ----

/* E(y) = cm/2 (y - y0)^T M (y - y0) + Psi(xb + sc y) + cd/2 y^T D y - sc (M g)^T y - lin^T y over
 * free DoFs; free motion: y = v, cm = 1, sc = cd = dt, xb = x_n, no lin; static: y = displacement,
 * cm = cd = 0, sc = 1; the theta scheme: sc = cd = theta dt, xb = x^, lin = (1 - theta) dt f_n. */
typedef struct {
  double cm, sc, cd;
  const double* yn;  /* y0 of the inertia term (v_n on free DoFs) */
  const double* xb;  /* positions at y = 0 (3 nvert; NULL: x_n) */
  const double* lin; /* a constant force (NULL: none) */
} potential;

static int is_quadratic(kn_fem_model m) { return m == KN_FEM_LINEAR || m == KN_FEM_LINEAR_COROTATED; }

/* y => x = xb + sc y on free vertices (xb on fixed ones) */
static void positions(const kn_fem_body* b, const potential* pt, const double* y, double* x) {
  const double* xb = pt->xb ? pt->xb : b->x;
  for (int i = 0; i < b->mesh.nvert; i++) {
    int f = b->free_index[i];
    for (int k = 0; k < 3; k++) x[3 * i + k] = xb[3 * i + k] + (f >= 0 ? pt->sc * y[3 * f + k] : 0.0);
  }
}

/* elastic energy at x; gradient dPsi/dy added into g (if non-NULL), stiffness assembled into Kv (if non-NULL) */
static double elastic(const kn_fem_body* b, const kn_fem_solver* s, const double* x, double sc, double* g, double* Kv) {
  const kn_tet_mesh* m = &b->mesh;
  const int* Ap = s->A->p;
  int project = !is_quadratic(b->material.model);
  double E = 0;
  if (Kv) memset(Kv, 0, (size_t)Ap[s->n] * sizeof(double));
  for (int e = 0; e < m->ntet; e++) {
    const int* t = m->tet + 4 * e;
    double xe[12], f[12], K[144];
    for (int k = 0; k < 4; k++) memcpy(xe + 3 * k, x + 3 * t[k], 3 * sizeof(double));
    E += kn_fem_element_eval(b->material.model, b->mu, b->lambda, xe, b->Dm_inv + 9 * e, b->volume[e], b->R0 + 9 * e,
                             g ? f : NULL, Kv ? K : NULL, project);
    if (g)
      for (int p = 0; p < 4; p++) {
        int fi = b->free_index[t[p]];
        if (fi >= 0)
          for (int r = 0; r < 3; r++) g[3 * fi + r] -= sc * f[3 * p + r];
      }
    if (Kv)
      for (int p = 0; p < 4; p++)
        for (int q = 0; q < 4; q++) {
          int rk = s->tet_rank[16 * e + 4 * p + q];
          if (rk == -3) continue;
          int fj = b->free_index[t[q]];
          for (int c = 0; c < 3; c++)
            for (int r = (rk == -1 ? c : 0); r < 3; r++) Kv[slot(Ap, fj, rk, r, c)] += K[12 * (3 * p + r) + 3 * q + c];
        }
  }
  return E;
}

/* y = Kd x for the symmetric matrix stored as the lower triangle in A's pattern */
static void sym_matvec(const kn_fem_solver* s, const double* Kd, const double* x, double* y) {
  const int* Ap = s->A->p;
  const int* Ai = s->A->i;
  memset(y, 0, (size_t)s->n * sizeof(double));
  for (int j = 0; j < s->n; j++)
    for (int k = Ap[j]; k < Ap[j + 1]; k++) {
      int i = Ai[k];
      y[i] += Kd[k] * x[j];
      if (i != j) y[j] += Kd[k] * x[i];
    }
}

/* y => E, the gradient into g (if non-NULL) and the stiffness into Kv (if non-NULL) */
static double evaluate(const kn_fem_body* b, kn_fem_solver* s, const potential* pt, const double* y, double* g,
                       double* Kv) {
  double E = 0, alpha = b->material.mass_damping, beta = b->material.stiffness_damping;
  int damp_k = pt->cd > 0 && beta > 0;
  if (damp_k) sym_matvec(s, s->Kd, y, s->Dy);
  for (int i = 0; i < b->mesh.nvert; i++) {
    int f = b->free_index[i];
    if (f < 0) continue;
    double mi = b->mass[i];
    for (int k = 0; k < 3; k++) {
      int d = 3 * f + k;
      double dv = y[d] - (pt->yn ? pt->yn[d] : 0.0);
      double Dy = alpha * mi * y[d] + (damp_k ? beta * s->Dy[d] : 0.0);
      E += 0.5 * pt->cm * mi * dv * dv + 0.5 * pt->cd * y[d] * Dy - pt->sc * mi * b->gravity[k] * y[d];
      if (g) g[d] = pt->cm * mi * dv + pt->cd * Dy - pt->sc * mi * b->gravity[k];
    }
  }
  if (pt->lin)
    for (int d = 0; d < s->n; d++) {
      E -= pt->lin[d] * y[d];
      if (g) g[d] -= pt->lin[d];
    }
  positions(b, pt, y, s->x);
  E += elastic(b, s, s->x, pt->sc, g, Kv);
  return E;
}

/* Ax (values in A's pattern) = cm M + cd (alpha M + beta Kd) + sc^2 Kv */
static void assemble(const kn_fem_body* b, const kn_fem_solver* s, const potential* pt, double* Ax) {
  const int* Ap = s->A->p;
  double sc2 = pt->sc * pt->sc, cdb = pt->cd * b->material.stiffness_damping;
  for (int k = 0; k < Ap[s->n]; k++) Ax[k] = sc2 * s->Kv[k] + (cdb > 0 ? cdb * s->Kd[k] : 0.0);
  for (int i = 0; i < b->mesh.nvert; i++) {
    int f = b->free_index[i];
    if (f < 0) continue;
    double md = (pt->cm + pt->cd * b->material.mass_damping) * b->mass[i];
    for (int c = 0; c < 3; c++) Ax[Ap[3 * f + c]] += md; /* the diagonal is first in its column */
  }
}

static double norm(const double* a, int n) {
  double s = 0;
  for (int k = 0; k < n; k++) s += a[k] * a[k];
  return sqrt(s);
}

static int all_finite(const double* a, int n) {
  for (int k = 0; k < n; k++)
    if (!isfinite(a[k])) return 0;
  return 1;
}

/* Newton from s->y (initial guess) => s->y at the minimum and A assembled there; b's state untouched */
static kn_status newton(const kn_fem_body* b, kn_fem_solver* s, const potential* pt, const kn_fem_newton_options* o,
                        const char* what, int* iterations, kn_error* err) {
  int n = s->n;
  *iterations = 0;
  if (n == 0) return KN_OK;
  /* the momentum scale that makes the tolerance relative even when the body starts at rest */
  double gscale = 0;
  for (int i = 0; i < b->mesh.nvert; i++)
    if (b->free_index[i] >= 0) gscale += b->mass[i] * b->mass[i];
  gscale = pt->sc * sqrt(gscale) * kn_vec3_norm(b->gravity);
  double xscale = 0; /* the positions' magnitude, for their round-off */
  for (int i = 0; i < 3 * b->mesh.nvert; i++) xscale = fmax(xscale, fabs((pt->xb ? pt->xb : b->x)[i]));
  double E = evaluate(b, s, pt, s->y, s->g, s->Kv);
  double gnorm = norm(s->g, n), ref = fmax(gnorm, gscale);
  int quadratic = is_quadratic(b->material.model);
  for (int it = 0;; it++) {
    if (!isfinite(E) || !all_finite(s->g, n))
      return kn_fail(err, KN_ERR_NUMERIC, "%s: %s: non-finite energy or gradient at Newton iteration %d", b->name, what, it);
    assemble(b, s, pt, s->A->x);
    s->factor_current = 0;
    if (gnorm <= o->rel_tolerance * ref) return KN_OK; /* A is at the converged iterate */
    if (it >= o->max_iterations)
      return kn_fail(err, KN_ERR_NUMERIC,
                     "%s: %s: Newton did not converge in %d iterations (|grad E| = %g, tolerance %g)", b->name, what,
                     o->max_iterations, gnorm, o->rel_tolerance * ref);
    kn_chol_permuted_factor(&s->perm, s->A, s->L, &s->cc);
    if (s->cc.status < CHOLMOD_OK || s->cc.status == CHOLMOD_NOT_POSDEF || s->L->minor < s->L->n)
      return kn_fail(err, KN_ERR_NUMERIC, "%s: %s: the %d x %d Hessian is not positive definite (CHOLMOD status %d, column %d)",
                     b->name, what, n, n, s->cc.status, (int)s->L->minor);
    /* the quadratic models return right after this solve with A unchanged: the factor stays current */
    s->factor_current = 1;
    cholmod_dense G = {.nrow = (size_t)n, .ncol = 1, .nzmax = (size_t)n, .d = (size_t)n, .x = s->g, .xtype = CHOLMOD_REAL,
                       .dtype = CHOLMOD_DOUBLE};
    cholmod_dense* D = cholmod_solve(CHOLMOD_A, s->L, &G, &s->cc);
    if (!D) return kn_fail(err, KN_ERR_NUMERIC, "%s: %s: CHOLMOD solve failed (status %d)", b->name, what, s->cc.status);
    const double* dx = D->x;
    double dmax = 0;
    for (int k = 0; k < n; k++) s->dy[k] = -dx[k], dmax = fmax(dmax, fabs(dx[k]));
    cholmod_free_dense(&D, &s->cc);
    /* a step that moves no vertex beyond its positions' round-off: |grad E| is round-off itself
     * (a body at rest without gravity, F = R to the last bit), converged; the tolerance above is
     * relative to that gradient when nothing else sets its scale */
    if (!quadratic && pt->sc * dmax <= 16 * DBL_EPSILON * xscale) return KN_OK;
    *iterations = it + 1;
    if (quadratic) {
      /* one Newton step minimizes a quadratic exactly; A (constant) is already assembled */
      for (int k = 0; k < n; k++) s->y[k] += s->dy[k];
      if (!all_finite(s->y, n))
        return kn_fail(err, KN_ERR_NUMERIC, "%s: %s: non-finite Newton step", b->name, what);
      return KN_OK;
    }
    double slope = 0;
    for (int k = 0; k < n; k++) slope += s->g[k] * s->dy[k];
    double step = 1.0, Et = E;
    int accepted = 0;
    for (int ls = 0; ls <= o->max_backtracks; ls++, step *= 0.5) {
      for (int k = 0; k < n; k++) s->yt[k] = s->y[k] + step * s->dy[k];
      Et = evaluate(b, s, pt, s->yt, NULL, NULL);
      /* Armijo, with slack for rounding in E near the minimum */
      if (isfinite(Et) && Et - E <= o->armijo * step * slope + 1e-14 * fabs(E)) {
        accepted = 1;
        break;
      }
    }
    if (!accepted) {
      /* near the minimum, changes of E fall below its rounding error (a sum of large elastic and
       * gravity terms); the gradient is still accurate there: take the full step if it shrinks |grad E| */
      double gold = gnorm;
      for (int k = 0; k < n; k++) s->yt[k] = s->y[k] + s->dy[k];
      double Ef = evaluate(b, s, pt, s->yt, s->g, s->Kv);
      double gf = norm(s->g, n);
      if (!(isfinite(Ef) && gf < gold))
        return kn_fail(err, KN_ERR_NUMERIC,
                       "%s: %s: line search found no decrease at Newton iteration %d (|grad E| = %g)", b->name, what,
                       it, gold);
      memcpy(s->y, s->yt, (size_t)n * sizeof(double));
      E = Ef;
      gnorm = gf;
      continue;
    }
    memcpy(s->y, s->yt, (size_t)n * sizeof(double));
    E = evaluate(b, s, pt, s->y, s->g, s->Kv);
    gnorm = norm(s->g, n);
  }
}

static kn_status prepare(kn_fem_body* b, kn_error* err) {
  if (b->solver) return KN_OK;
  kn_status st = build_solver(b, err);
  if (st) {
    kn_fem_solver_free(b->solver);
    b->solver = NULL;
  }
  return st;
}

/* the theta scheme (deformable.h): x^ = x_n + (1 - theta) dt v_n into s->xh and lin = (1 - theta) dt
 * f_n into s->lin, f_n = -grad Psi(x_n) - D v_n + M g the force at the step start (s->y0 = v_n and
 * Kd set) */
static void start_force(const kn_fem_body* b, kn_fem_solver* s, double dt) {
  double h0 = (1 - b->theta) * dt, alpha = b->material.mass_damping, beta = b->material.stiffness_damping;
  memset(s->lin, 0, (size_t)s->n * sizeof(double));
  if (s->n > 0) elastic(b, s, b->x, 1.0, s->lin, NULL); /* lin = grad Psi(x_n) */
  if (beta > 0 && s->n > 0) sym_matvec(s, s->Kd, s->y0, s->Dy);
  for (int i = 0; i < b->mesh.nvert; i++) {
    int f = b->free_index[i];
    for (int k = 0; k < 3; k++) {
      s->xh[3 * i + k] = b->x[3 * i + k] + (f >= 0 ? h0 * b->v[3 * i + k] : 0.0);
      if (f < 0) continue;
      int d = 3 * f + k;
      double Dv = alpha * b->mass[i] * s->y0[d] + (beta > 0 ? beta * s->Dy[d] : 0.0);
      s->lin[d] = h0 * (-s->lin[d] - Dv + b->mass[i] * b->gravity[k]);
    }
  }
}

/* (x_n, v_n, R0, dt) => the free motion's potential: v_n on the free DoFs in s->y0 and, with
 * stiffness damping, K(x_n) in s->Kd, with theta != 1 x^ in s->xh and the start force in s->lin
 * (from the body state alone, so the same before and after kn_fem_free_motion). Kd, xh and lin are
 * kept while the state they came from is unchanged (compared, not assumed: a caller may set x, v
 * or R0 directly): the Newton solves call this per evaluation, and K(x_n) of a projected material
 * costs an eigensolve per tet. */
static potential step_potential(const kn_fem_body* b, kn_fem_solver* s, double dt) {
  for (int i = 0; i < b->mesh.nvert; i++) {
    int f = b->free_index[i];
    if (f >= 0) memcpy(s->y0 + 3 * f, b->v + 3 * i, 3 * sizeof(double));
  }
  size_t nv3 = 3 * (size_t)b->mesh.nvert, nr = 9 * (size_t)b->mesh.ntet;
  int same = s->key_valid && s->key_dt == dt && s->key_theta == b->theta && !memcmp(s->key_x, b->x, nv3 * sizeof(double)) &&
             !memcmp(s->key_v, b->v, nv3 * sizeof(double)) && !memcmp(s->key_R0, b->R0, nr * sizeof(double));
  if (!same) {
    if (b->material.stiffness_damping > 0 && s->n > 0) {
      /* D = alpha M + beta K(x_n): stiffness frozen at the step start so E stays a potential */
      elastic(b, s, b->x, 1.0, NULL, s->Kd);
    }
    if (b->theta != 1.0) start_force(b, s, dt);
    memcpy(s->key_x, b->x, nv3 * sizeof(double));
    memcpy(s->key_v, b->v, nv3 * sizeof(double));
    memcpy(s->key_R0, b->R0, nr * sizeof(double));
    s->key_dt = dt, s->key_theta = b->theta, s->key_valid = 1;
  }
  if (b->theta == 1.0) return (potential){.cm = 1.0, .sc = dt, .cd = dt, .yn = s->y0};
  return (potential){.cm = 1.0, .sc = b->theta * dt, .cd = b->theta * dt, .yn = s->y0, .xb = s->xh, .lin = s->lin};
}

//---- public stages ----

// (x_n, v_n, R0, dt) => v_star, A(v_star)
kn_status kn_fem_free_motion(kn_fem_body* b, double dt, const kn_fem_newton_options* opt, kn_error* err) {
  kn_fem_newton_options o = opt ? *opt : kn_fem_newton_options_default();
  if (!(dt > 0) || !isfinite(dt)) return kn_fail(err, KN_ERR_INVALID, "%s: free motion time step %g, expected > 0", b->name, dt);
  kn_status st = prepare(b, err);
  if (st) return st;
  kn_fem_solver* s = b->solver;
  potential pt = step_potential(b, s, dt);
  memcpy(s->y, s->y0, (size_t)s->n * sizeof(double));
  int iters;
  st = newton(b, s, &pt, &o, "free motion", &iters, err);
  if (st) return st;
  for (int i = 0; i < b->mesh.nvert; i++) {
    int f = b->free_index[i];
    for (int k = 0; k < 3; k++) b->v_star[3 * i + k] = f >= 0 ? s->y[3 * f + k] : 0.0;
  }
  return KN_OK;
}

// (x_n, v_n, R0, dt, v) => E(v), grad E(v), Hessian(v): the free motion's potential and assembly
kn_status kn_fem_potential(kn_fem_body* b, double dt, const double* v, double* E, double* grad,
                           const struct cholmod_sparse_struct** hessian, kn_error* err) {
  if (hessian) *hessian = NULL;
  if (!(dt > 0) || !isfinite(dt)) return kn_fail(err, KN_ERR_INVALID, "%s: potential time step %g, expected > 0", b->name, dt);
  kn_status st = prepare(b, err);
  if (st) return st;
  kn_fem_solver* s = b->solver;
  if (hessian && !s->H) {
    s->H = cholmod_copy_sparse(s->A, &s->cc);
    if (!s->H) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for a %d x %d Hessian", b->name, s->n, s->n);
  }
  potential pt = step_potential(b, s, dt);
  double e = evaluate(b, s, &pt, v, grad, hessian ? s->Kv : NULL);
  if (E) *E = e;
  if (hessian) {
    assemble(b, s, &pt, s->H->x);
    *hessian = (const struct cholmod_sparse_struct*)s->H;
  }
  return KN_OK;
}

static void update_rotations(kn_fem_body* b) {
  for (int e = 0; e < b->mesh.ntet; e++) {
    double xe[12], F[9];
    for (int k = 0; k < 4; k++) memcpy(xe + 3 * k, b->x + 3 * b->mesh.tet[4 * e + k], 3 * sizeof(double));
    kn_fem_deformation_gradient(xe, b->Dm_inv + 9 * e, F);
    kn_fem_polar_rotation(F, b->R0 + 9 * e);
  }
}

// v_next => v, x += dt v (theta: dt ((1 - theta) v_n + theta v)), R0 = polar(F)
void kn_fem_advance(kn_fem_body* b, double dt, const double* v_next) {
  double th = b->theta;
  for (int i = 0; i < b->mesh.nvert; i++)
    for (int k = 0; k < 3; k++) {
      double v = b->fixed[i] ? 0.0 : v_next[3 * i + k];
      if (th == 1.0) b->x[3 * i + k] += dt * v;
      else b->x[3 * i + k] += dt * ((1 - th) * b->v[3 * i + k] + th * v);
      b->v[3 * i + k] = v;
    }
  update_rotations(b);
}

// x => static equilibrium x*, v = 0, R0 = polar(F(x*))
kn_status kn_fem_static_solve(kn_fem_body* b, const kn_fem_newton_options* opt, int* iterations, kn_error* err) {
  kn_fem_newton_options o = opt ? *opt : kn_fem_newton_options_default();
  kn_status st = prepare(b, err);
  if (st) return st;
  kn_fem_solver* s = b->solver;
  if (s->n > 0 && b->nfree == b->mesh.nvert)
    return kn_fail(err, KN_ERR_INVALID, "%s: static solve needs fixed vertices (no equilibrium for a free body)", b->name);
  potential pt = {.cm = 0.0, .sc = 1.0, .cd = 0.0, .yn = NULL};
  memset(s->y, 0, (size_t)s->n * sizeof(double));
  int iters;
  st = newton(b, s, &pt, &o, "static solve", &iters, err);
  if (iterations) *iterations = iters;
  if (st) return st;
  for (int i = 0; i < b->mesh.nvert; i++) {
    int f = b->free_index[i];
    if (f >= 0)
      for (int k = 0; k < 3; k++) b->x[3 * i + k] += s->y[3 * f + k];
  }
  memset(b->v, 0, 3 * (size_t)b->mesh.nvert * sizeof(double));
  update_rotations(b);
  return KN_OK;
}
