/* The Newton systems of the nonlinear step: CHOLMOD (symmetric positive definite, the potential
 * problems) or UMFPACK (general, the root-finding ones: the implicit friction Jacobian is not
 * symmetric). Both from SuiteSparse. Each call assembles the entries (duplicates summed) and
 * factors afresh; the assembled matrices and the symbolic analyses are kept while the pattern is
 * the same (it changes with the contact set, mostly between steps). */
#include <cholmod.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <umfpack.h>

#include "nonlinear/nonlinear_internal.h"

/* A cholmod_sparse assembled from entries, kept with each entry's slot in it: while the entries
 * come in the same (i, j) sequence, as a step's Newton iterations mostly do, the next matrix is
 * their values scattered through the map (a slot's first entry assigned, the rest added in their
 * order: cholmod_triplet_to_sparse's sums); a new sequence is sorted into the kept buffers
 * (build_pattern). Before, cholmod_triplet_to_sparse's sort and allocations at every iteration
 * took a seventh of the twisted rods' time at h 0.1. */
typedef struct {
  cholmod_sparse* A;
  int n, nnz, stype; /* the entries' count and the stored triangle (-1 lower, 0 all) A was built for */
  int *ti, *tj, *map; /* their pattern; map[k]: slot s of A->x of a first entry, -2 - s of a repeat, -1 dropped */
  int *ord, *cnt;      /* build_pattern's sorts: 2 nnz entry indices, n + 1 counts */
  size_t cap, cap_ord, cap_cnt; /* ti, tj and map hold cap entries, ord cap_ord, cnt cap_cnt */
} kept_csc;

struct kn_nl_linsolve {
  cholmod_common cc;
  kept_csc lower, full; /* the symmetric systems' (and preconditioner's) lower triangle; UMFPACK's and BiCGSTAB's whole matrix */
  int started;
  /* UMFPACK's symbolic analysis, kept while the pattern (n, Ap, Ai: a copy) is the same: within a
   * step's Newton iterations it is */
  void* sym;
  int sym_n, *sym_p, *sym_i;
  size_t sym_capp, sym_capi;
  double* work;             /* BiCGSTAB's seven vectors */
  size_t work_cap;
  /* CHOLMOD's analysis (fill-reducing order, elimination tree, column counts), kept while the
   * pattern (chol_n, chol_p, chol_i: a copy of the lower triangle's) is the same, as within a
   * step's Newton iterations it mostly is: the factorization is then redone on it alone */
  cholmod_factor* chol;
  kn_chol_permuted perm; /* the analysed pattern's place in tril(P A P^T): factorizations without transposes */
  int chol_n, *chol_p, *chol_i;
  size_t chol_capp, chol_capi;
};

static void kept_csc_free(kept_csc* K, cholmod_common* cc) {
  if (K->A) cholmod_free_sparse(&K->A, cc);
  free(K->ti), free(K->tj), free(K->map), free(K->ord), free(K->cnt);
  memset(K, 0, sizeof *K);
}

kn_nl_linsolve* kn_nl_linsolve_create(void) {
  kn_nl_linsolve* ls = kn_calloc(1, sizeof *ls);
  if (!ls) return NULL;
  kn_chol_start(&ls->cc);
  ls->cc.supernodal = CHOLMOD_AUTO; /* a small or very sparse Newton matrix: simplicial LDL' */
  ls->started = 1;
  return ls;
}

void kn_nl_linsolve_free(kn_nl_linsolve* ls) {
  if (!ls) return;
  if (ls->chol) cholmod_free_factor(&ls->chol, &ls->cc);
  kn_chol_permuted_free(&ls->perm, &ls->cc);
  free(ls->chol_p), free(ls->chol_i);
  kept_csc_free(&ls->lower, &ls->cc);
  kept_csc_free(&ls->full, &ls->cc);
  if (ls->started) cholmod_finish(&ls->cc);
  if (ls->sym) umfpack_di_free_symbolic(&ls->sym);
  free(ls->sym_p), free(ls->sym_i), free(ls->work);
  free(ls);
}

/* (A, lower triangle, packed and sorted) => the kept factor when A's pattern is the one it was
 * analysed for (refactorizing it gives the same numbers as a fresh analysis: the same order and
 * structure), else a fresh analysis, its pattern copied; NULL out of memory. ls->chol is then NULL
 * until the caller hands the factor back. */
static cholmod_factor* kept_analysis(kn_nl_linsolve* ls, const cholmod_sparse* A) {
  int n = (int)A->nrow;
  const int *p = A->p, *i = A->i;
  int nnz = p[n];
  cholmod_factor* L = ls->chol;
  ls->chol = NULL;
  if (L && ls->chol_n == n && !memcmp(ls->chol_p, p, ((size_t)n + 1) * sizeof(int)) &&
      !memcmp(ls->chol_i, i, (size_t)nnz * sizeof(int)))
    return L;
  if (L) cholmod_free_factor(&L, &ls->cc);
  ls->chol_n = -1;
  L = cholmod_analyze((cholmod_sparse*)A, &ls->cc);
  if (!L) return NULL;
  kn_error e = {0};
  if (kn_chol_permuted_prepare(&ls->perm, (cholmod_sparse*)A, L, &ls->cc, &e))
    kn_chol_permuted_free(&ls->perm, &ls->cc); /* out of memory: factorizations through cholmod_factorize */
  if ((size_t)n + 1 > ls->chol_capp) {
    free(ls->chol_p);
    ls->chol_p = malloc(((size_t)n + 1) * sizeof(int));
    ls->chol_capp = ls->chol_p ? (size_t)n + 1 : 0;
  }
  if ((size_t)nnz + 1 > ls->chol_capi) {
    free(ls->chol_i);
    ls->chol_i = malloc(((size_t)nnz + 1) * sizeof(int));
    ls->chol_capi = ls->chol_i ? (size_t)nnz + 1 : 0;
  }
  if (ls->chol_capp && ls->chol_capi) {
    memcpy(ls->chol_p, p, ((size_t)n + 1) * sizeof(int));
    memcpy(ls->chol_i, i, (size_t)nnz * sizeof(int));
    ls->chol_n = n;
  }
  return L;
}

/* a simplicial LDL' factor (CHOLMOD's choice for small or very sparse matrices) of an indefinite
 * matrix succeeds with some pivot d_j <= 0; supernodal LL' stops there. The first such column, or
 * -1: every pivot positive */
static int ldl_nonpositive(const cholmod_factor* L) {
  if (L->is_super || L->is_ll) return -1;
  const int* Lp = L->p;
  const double* Lx = L->x;
  for (size_t j = 0; j < L->n; j++)
    if (!(Lx[Lp[j]] > 0)) return (int)j;
  return -1;
}

static cholmod_sparse* assemble(kept_csc* K, const kn_nl_triplets* T, int stype, cholmod_common* cc);

/* L := the numeric factor of A (+ tau diag(d) when tau > 0: A's diagonal entries shifted in place,
 * restored on return; the pattern, and so the kept analysis, is the same). KN_ERR_NUMERIC when not
 * positive definite (supernodal LL' stops; a simplicial LDL' pivot <= 0 is refused too) or when a
 * shift is asked and A stores no entry for some diagonal */
static kn_status factor(kn_nl_linsolve* ls, cholmod_sparse* A, cholmod_factor* L, const double* d, double tau,
                        kn_error* err) {
  cholmod_common* cc = &ls->cc;
  int n = (int)A->nrow;
  const int* Ap = A->p;
  const int* Ai = A->i;
  double* Ax = A->x;
  if (tau > 0) /* lower triangle, sorted: a column's diagonal is its first entry */
    for (int j = 0; j < n; j++) {
      if (Ap[j] == Ap[j + 1] || Ai[Ap[j]] != j) {
        for (int i = 0; i < j; i++) Ax[Ap[i]] -= tau * d[i];
        return kn_fail(err, KN_ERR_NUMERIC, "the Newton matrix has no diagonal entry in column %d (shift)", j);
      }
      Ax[Ap[j]] += tau * d[j];
    }
  kn_status st = KN_OK;
  if (!kn_chol_permuted_factor(&ls->perm, A, L, cc) || cc->status == CHOLMOD_NOT_POSDEF)
    st = kn_fail(err, KN_ERR_NUMERIC, "the Newton matrix is not positive definite (CHOLMOD, column %d of %d)",
                 (int)L->minor, n);
  else if (ldl_nonpositive(L) >= 0)
    st = kn_fail(err, KN_ERR_NUMERIC, "the Newton matrix is not positive definite (CHOLMOD LDL', pivot %d of %d)",
                 ldl_nonpositive(L), n);
  if (tau > 0)
    for (int j = 0; j < n; j++) Ax[Ap[j]] -= tau * d[j];
  return st;
}

// x = L^-1-solve of b with the factor L
static kn_status solve_factor(cholmod_factor* L, const double* b, double* x, cholmod_common* cc, kn_error* err) {
  cholmod_dense* B = cholmod_allocate_dense(L->n, 1, L->n, CHOLMOD_REAL, cc);
  if (!B) return kn_fail(err, KN_ERR_NOMEM, "out of memory (CHOLMOD)");
  memcpy(B->x, b, L->n * sizeof(double));
  cholmod_dense* X = cholmod_solve(CHOLMOD_A, L, B, cc);
  cholmod_free_dense(&B, cc);
  if (!X) return kn_fail(err, KN_ERR_NOMEM, "out of memory (CHOLMOD solve)");
  memcpy(x, X->x, L->n * sizeof(double));
  cholmod_free_dense(&X, cc);
  return KN_OK;
}

/* the symmetric solve, with the shift's retries (kn_nl_linsolve_shifted; shift NULL: A alone) */
static kn_status solve_cholmod(kn_nl_linsolve* ls, const kn_nl_triplets* T, kn_nl_shift* shift, const double* b,
                               double* x, kn_error* err) {
  cholmod_common* cc = &ls->cc;
  cholmod_sparse* A = assemble(&ls->lower, T, -1, cc);
  if (!A) return kn_fail(err, KN_ERR_NOMEM, "out of memory (CHOLMOD)");
  cholmod_factor* L = kept_analysis(ls, A);
  kn_status st = KN_OK;
  if (!L) {
    st = kn_fail(err, KN_ERR_NOMEM, "out of memory (CHOLMOD analysis)");
  } else {
    st = factor(ls, A, L, NULL, 0, err);
    if (shift) {
      shift->factorizations = 1, shift->tau = 0;
      /* A + tau D, tau from the first guess grown until CHOLMOD accepts or past the largest */
      for (double tau = shift->tau_start; st == KN_ERR_NUMERIC && tau <= shift->tau_max; tau *= shift->grow) {
        st = factor(ls, A, L, shift->d, tau, err);
        shift->factorizations++, shift->tau = tau;
      }
    }
    if (!st) st = solve_factor(L, b, x, cc, err);
  }
  if (st && L) cholmod_free_factor(&L, cc); /* a failed factorization is not kept */
  ls->chol = L;
  return st;
}

kn_status kn_nl_linsolve_shifted(kn_nl_linsolve* ls, const kn_nl_triplets* T, kn_nl_shift* shift, const double* b,
                                 double* x, kn_error* err) {
  if (T->nomem) return kn_fail(err, KN_ERR_NOMEM, "out of memory (Newton matrix)");
  if (!shift->d || !(shift->tau_start > 0) || !(shift->grow > 1))
    return kn_fail(err, KN_ERR_INVALID, "shift: a diagonal, tau_start > 0 and grow > 1 expected");
  return solve_cholmod(ls, T, shift, b, x, err);
}

kn_status kn_nl_linsolve_resolve(kn_nl_linsolve* ls, int n, const double* b, double* x, kn_error* err) {
  if (!ls->chol || (int)ls->chol->n != n || ls->chol->minor < ls->chol->n)
    return kn_fail(err, KN_ERR_NUMERIC, "no factor of an n = %d Newton matrix kept", n);
  return solve_factor(ls->chol, b, x, &ls->cc, err);
}

static kn_status solve_umfpack(kn_nl_linsolve* ls, const kn_nl_triplets* T, const double* b, double* x,
                               kn_error* err) {
  int n = T->n;
  /* the kept matrix of all entries: the same sums as umfpack_di_triplet_to_col (test_linsolve.c) */
  cholmod_sparse* A = assemble(&ls->full, T, 0, &ls->cc);
  if (!A) return kn_fail(err, KN_ERR_NOMEM, "out of memory (UMFPACK)");
  const int *Ap = A->p, *Ai = A->i;
  const double* Ax = A->x;
  double control[UMFPACK_CONTROL], info[UMFPACK_INFO];
  umfpack_di_defaults(control);
  int nnz = Ap[n];
  int same = ls->sym && ls->sym_n == n && !memcmp(ls->sym_p, Ap, ((size_t)n + 1) * sizeof(int)) &&
             !memcmp(ls->sym_i, Ai, (size_t)nnz * sizeof(int));
  int s = UMFPACK_OK;
  if (!same) {
    if (ls->sym) umfpack_di_free_symbolic(&ls->sym);
    ls->sym = NULL;
    s = umfpack_di_symbolic(n, n, Ap, Ai, Ax, &ls->sym, control, info);
    /* p and i each to its own size (one capacity for both let a later pattern with more columns
     * and fewer entries overrun p) */
    if (s == UMFPACK_OK && (size_t)n + 1 > ls->sym_capp) {
      free(ls->sym_p);
      ls->sym_p = malloc(((size_t)n + 1) * sizeof(int));
      ls->sym_capp = ls->sym_p ? (size_t)n + 1 : 0;
    }
    if (s == UMFPACK_OK && (size_t)nnz + 1 > ls->sym_capi) {
      free(ls->sym_i);
      ls->sym_i = malloc(((size_t)nnz + 1) * sizeof(int));
      ls->sym_capi = ls->sym_i ? (size_t)nnz + 1 : 0;
    }
    if (s == UMFPACK_OK && ls->sym_capp && ls->sym_capi) {
      memcpy(ls->sym_p, Ap, ((size_t)n + 1) * sizeof(int));
      memcpy(ls->sym_i, Ai, (size_t)nnz * sizeof(int));
      ls->sym_n = n;
    } else {
      ls->sym_n = -1;
    }
  }
  void* num = NULL;
  if (s == UMFPACK_OK) s = umfpack_di_numeric(Ap, Ai, Ax, ls->sym, &num, control, info);
  kn_status st = KN_OK;
  if (s == UMFPACK_WARNING_singular_matrix || s == UMFPACK_ERROR_different_pattern)
    st = kn_fail(err, KN_ERR_NUMERIC, "the Newton matrix is singular (UMFPACK, n = %d)", n);
  else if (s == UMFPACK_ERROR_out_of_memory)
    st = kn_fail(err, KN_ERR_NOMEM, "out of memory (UMFPACK)");
  else if (s != UMFPACK_OK)
    st = kn_fail(err, KN_ERR_NUMERIC, "UMFPACK failed (status %d, n = %d)", s, n);
  if (!st && umfpack_di_solve(UMFPACK_A, Ap, Ai, Ax, x, b, num, control, info) != UMFPACK_OK)
    st = kn_fail(err, KN_ERR_NUMERIC, "UMFPACK's solve failed (n = %d)", n);
  if (num) umfpack_di_free_numeric(&num);
  if (st && ls->sym) umfpack_di_free_symbolic(&ls->sym), ls->sym = NULL;
  return st;
}

kn_status kn_nl_linsolve_solve(kn_nl_linsolve* ls, const kn_nl_triplets* T, int symmetric, const double* b, double* x,
                         kn_error* err) {
  if (T->nomem) return kn_fail(err, KN_ERR_NOMEM, "out of memory (Newton matrix)");
  if (symmetric) return solve_cholmod(ls, T, NULL, b, x, err);
  return solve_umfpack(ls, T, b, x, err);
}

/* grow *buf to hold need ints (a quarter more, so that a growing contact set reallocates rarely);
 * 0: out of memory (the old buffer freed) */
static int grow_ints(int** buf, size_t* cap, size_t need) {
  if (need <= *cap) return 1;
  free(*buf);
  *cap = need + need / 4;
  *buf = malloc(*cap * sizeof(int));
  if (!*buf) *cap = 0;
  return *buf != NULL;
}

/* K's matrix pattern and map for the entries T, built afresh: two stable counting sorts (by row,
 * then by column) put the kept entries in (j, i) order with a pair's repeats in their own order, and
 * each distinct (i, j) gets the next slot; the entries of the other triangle are dropped (stype -1).
 * CHOLMOD's cholmod_triplet_to_sparse gives the same matrix (tests/nonlinear/test_linsolve.c), but
 * allocates and frees its triplet copy, its workspaces and the matrix at every call; K's buffers
 * and matrix are kept and only grown, so a contact set that changes every Newton iteration costs
 * no allocation once they hold the largest pattern. 0: out of memory (K emptied). */
static int build_pattern(kept_csc* K, const kn_nl_triplets* T, int stype, cholmod_common* cc) {
  int n = T->n, nnz = T->nnz;
  if ((size_t)nnz + 1 > K->cap) { /* ti, tj and map: one size, grown together (failure: the caller frees K) */
    free(K->ti), free(K->tj), free(K->map);
    K->cap = (size_t)nnz + 1 + ((size_t)nnz + 1) / 4;
    K->ti = malloc(K->cap * sizeof(int)), K->tj = malloc(K->cap * sizeof(int)), K->map = malloc(K->cap * sizeof(int));
    if (!K->ti || !K->tj || !K->map) return 0;
  }
  if (!grow_ints(&K->ord, &K->cap_ord, 2 * (size_t)nnz + 1) || !grow_ints(&K->cnt, &K->cap_cnt, (size_t)n + 2))
    return 0;
  const int *ti = T->i, *tj = T->j;
  int *map = K->map, *cnt = K->cnt, *by_row = K->ord + nnz, *ord = K->ord;
  memset(cnt, 0, ((size_t)n + 1) * sizeof(int));
  int m = 0;
  for (int k = 0; k < nnz; k++) {
    map[k] = -1;
    if (stype == 0 || ti[k] >= tj[k]) cnt[ti[k] + 1]++, m++;
  }
  for (int r = 0; r < n; r++) cnt[r + 1] += cnt[r];
  for (int k = 0; k < nnz; k++)
    if (stype == 0 || ti[k] >= tj[k]) by_row[cnt[ti[k]]++] = k;
  memset(cnt, 0, ((size_t)n + 1) * sizeof(int));
  for (int r = 0; r < m; r++) cnt[tj[by_row[r]] + 1]++;
  for (int c = 0; c < n; c++) cnt[c + 1] += cnt[c];
  for (int r = 0; r < m; r++) ord[cnt[tj[by_row[r]]]++] = by_row[r];
  size_t slots = 0;
  for (int r = 0; r < m; r++)
    slots += r == 0 || tj[ord[r]] != tj[ord[r - 1]] || ti[ord[r]] != ti[ord[r - 1]];
  cholmod_sparse* A = K->A;
  if (!A || (int)A->nrow != n || A->nzmax < slots || A->stype != stype) {
    if (A) cholmod_free_sparse(&K->A, cc);
    A = K->A = cholmod_allocate_sparse((size_t)n, (size_t)n, slots + slots / 4 + 1, 1, 1, stype, CHOLMOD_REAL, cc);
    if (!A) return 0;
  }
  int *Ap = A->p, *Ai = A->i, s = -1;
  memset(Ap, 0, ((size_t)n + 1) * sizeof(int));
  for (int r = 0; r < m; r++) {
    int k = ord[r];
    if (r == 0 || tj[k] != tj[ord[r - 1]] || ti[k] != ti[ord[r - 1]]) {
      Ai[++s] = ti[k];
      Ap[tj[k] + 1]++;
      map[k] = s;
    } else {
      map[k] = -2 - s;
    }
  }
  for (int c = 0; c < n; c++) Ap[c + 1] += Ap[c];
  memcpy(K->ti, ti, (size_t)nnz * sizeof(int));
  memcpy(K->tj, tj, (size_t)nnz * sizeof(int));
  K->n = n, K->nnz = nnz, K->stype = stype;
  return 1;
}

/* the matrix of the entries T (kept_csc above): K->A, owned by K; NULL: out of memory */
static cholmod_sparse* assemble(kept_csc* K, const kn_nl_triplets* T, int stype, cholmod_common* cc) {
  if (!(K->A && K->n == T->n && K->nnz == T->nnz && K->stype == stype &&
        !memcmp(K->ti, T->i, (size_t)T->nnz * sizeof(int)) && !memcmp(K->tj, T->j, (size_t)T->nnz * sizeof(int))) &&
      !build_pattern(K, T, stype, cc)) {
    kept_csc_free(K, cc);
    return NULL;
  }
  double* Ax = K->A->x;
  for (int k = 0; k < T->nnz; k++) { /* a slot's first entry assigned, the rest added */
    int s = K->map[k];
    if (s >= 0) Ax[s] = T->x[k];
    else if (s <= -2) Ax[-2 - s] += T->x[k];
  }
  return K->A;
}

// y = A x (A unsymmetric, compressed columns)
static void csc_mul(const cholmod_sparse* A, const double* x, double* y) {
  const int *p = A->p, *i = A->i;
  const double* a = A->x;
  memset(y, 0, A->nrow * sizeof *y);
  for (size_t j = 0; j < A->ncol; j++)
    for (int k = p[j]; k < p[j + 1]; k++) y[i[k]] += a[k] * x[j];
}

// y = L^-1-solve of x (the preconditioner); 0 on failure
static int precondition(cholmod_factor* L, cholmod_dense* B, const double* x, double* y, cholmod_common* cc) {
  memcpy(B->x, x, B->nrow * sizeof(double));
  cholmod_dense* X = cholmod_solve(CHOLMOD_A, L, B, cc);
  if (!X) return 0;
  memcpy(y, X->x, B->nrow * sizeof(double));
  cholmod_free_dense(&X, cc);
  return 1;
}

static double dot(const double* a, const double* b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

kn_status kn_nl_linsolve_bicgstab(kn_nl_linsolve* ls, const kn_nl_triplets* T, const kn_nl_triplets* P,
                                  const double* b, double* x, double tol, int maxit, int* iters, kn_error* err) {
  cholmod_common* cc = &ls->cc;
  int n = T->n;
  *iters = 0;
  if (T->nomem || P->nomem) return kn_fail(err, KN_ERR_NOMEM, "out of memory (Newton matrix)");
  cholmod_sparse* A = assemble(&ls->full, T, 0, cc);
  cholmod_sparse* S = assemble(&ls->lower, P, -1, cc);
  cholmod_factor* L = S ? kept_analysis(ls, S) : NULL;
  cholmod_dense* B = cholmod_allocate_dense((size_t)n, 1, (size_t)n, CHOLMOD_REAL, cc);
  if (7 * ((size_t)n + 1) > ls->work_cap) {
    free(ls->work);
    ls->work = malloc(7 * ((size_t)n + 1) * sizeof *ls->work);
    ls->work_cap = ls->work ? 7 * ((size_t)n + 1) : 0;
  }
  double* w = ls->work;
  kn_status st = KN_OK;
  if (!A || !S || !L || !B || !w) {
    st = kn_fail(err, KN_ERR_NOMEM, "out of memory (BiCGSTAB)");
    goto done;
  }
  if (!kn_chol_permuted_factor(&ls->perm, S, L, cc) || cc->status == CHOLMOD_NOT_POSDEF) {
    st = kn_fail(err, KN_ERR_NUMERIC, "the preconditioner is not positive definite (column %d of %d)", (int)L->minor, n);
    cholmod_free_factor(&L, cc); /* a failed factorization is not kept */
    goto done;
  }
  double *r = w, *r0 = w + n + 1, *p = w + 2 * (n + 1), *v = w + 3 * (n + 1), *ph = w + 4 * (n + 1),
         *sh = w + 5 * (n + 1), *t = w + 6 * (n + 1);
  memset(x, 0, (size_t)n * sizeof *x);
  memcpy(r, b, (size_t)n * sizeof *r);
  memcpy(r0, b, (size_t)n * sizeof *r0);
  memset(p, 0, (size_t)n * sizeof *p);
  memset(v, 0, (size_t)n * sizeof *v);
  double bnorm = sqrt(dot(b, b, n)), rho = 1, alpha = 1, omega = 1;
  if (bnorm == 0) goto done;
  for (int it = 1; it <= maxit; it++) {
    *iters = it;
    double rho1 = dot(r0, r, n);
    if (rho1 == 0 || omega == 0) break;
    double beta = rho1 / rho * alpha / omega;
    for (int i = 0; i < n; i++) p[i] = r[i] + beta * (p[i] - omega * v[i]);
    if (!precondition(L, B, p, ph, cc)) break;
    csc_mul(A, ph, v);
    double r0v = dot(r0, v, n);
    if (r0v == 0) break;
    alpha = rho1 / r0v;
    for (int i = 0; i < n; i++) r[i] -= alpha * v[i]; /* s */
    if (sqrt(dot(r, r, n)) <= tol * bnorm) {
      for (int i = 0; i < n; i++) x[i] += alpha * ph[i];
      goto done;
    }
    if (!precondition(L, B, r, sh, cc)) break;
    csc_mul(A, sh, t);
    double tt = dot(t, t, n);
    if (tt == 0) break;
    omega = dot(t, r, n) / tt;
    for (int i = 0; i < n; i++) x[i] += alpha * ph[i] + omega * sh[i], r[i] -= omega * t[i];
    if (sqrt(dot(r, r, n)) <= tol * bnorm) goto done;
    rho = rho1;
  }
  st = kn_fail(err, KN_ERR_NUMERIC, "BiCGSTAB did not reach %.1e in %d iterations (n = %d)", tol, *iters, n);
done:
  if (B) cholmod_free_dense(&B, cc);
  if (ls->chol) cholmod_free_factor(&ls->chol, cc);
  ls->chol = L; /* its analysis kept for the next preconditioner or solve of this pattern */
  return st;
}
