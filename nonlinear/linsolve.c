/* The Newton systems of the nonlinear step: CHOLMOD (symmetric positive definite, the potential
 * problems) or UMFPACK (general, the root-finding ones: the implicit friction Jacobian is not
 * symmetric). Both from SuiteSparse. Each call assembles the entries (duplicates summed) and
 * factors afresh: the pattern changes with the contact set between steps. */
#include <cholmod.h>
#include <stdlib.h>
#include <string.h>
#include <umfpack.h>

#include "nonlinear/nonlinear_internal.h"

struct kn_nl_linsolve {
  cholmod_common cc;
  int started;
  int *Ap, *Ai, *map;
  double* Ax;
  size_t capp, capi;
};

kn_nl_linsolve* kn_nl_linsolve_create(void) {
  kn_nl_linsolve* ls = kn_calloc(1, sizeof *ls);
  if (!ls) return NULL;
  cholmod_start(&ls->cc);
  ls->cc.print = 0;
  ls->cc.error_handler = NULL;
  ls->started = 1;
  return ls;
}

void kn_nl_linsolve_free(kn_nl_linsolve* ls) {
  if (!ls) return;
  if (ls->started) cholmod_finish(&ls->cc);
  free(ls->Ap), free(ls->Ai), free(ls->Ax), free(ls->map);
  free(ls);
}

static kn_status solve_cholmod(kn_nl_linsolve* ls, const kn_nl_triplets* T, const double* b, double* x,
                               kn_error* err) {
  cholmod_common* cc = &ls->cc;
  int n = T->n, lower = 0;
  for (int k = 0; k < T->nnz; k++) lower += T->i[k] >= T->j[k];
  cholmod_triplet* tr = cholmod_allocate_triplet((size_t)n, (size_t)n, (size_t)lower + 1, -1, CHOLMOD_REAL, cc);
  if (!tr) return kn_fail(err, KN_ERR_NOMEM, "out of memory (CHOLMOD)");
  int *ti = tr->i, *tj = tr->j;
  double* tx = tr->x;
  size_t m = 0;
  for (int k = 0; k < T->nnz; k++)
    if (T->i[k] >= T->j[k]) ti[m] = T->i[k], tj[m] = T->j[k], tx[m] = T->x[k], m++;
  tr->nnz = m;
  cholmod_sparse* A = cholmod_triplet_to_sparse(tr, m, cc);
  cholmod_free_triplet(&tr, cc);
  if (!A) return kn_fail(err, KN_ERR_NOMEM, "out of memory (CHOLMOD)");
  cholmod_factor* L = cholmod_analyze(A, cc);
  kn_status st = KN_OK;
  if (!L) {
    st = kn_fail(err, KN_ERR_NOMEM, "out of memory (CHOLMOD analysis)");
  } else if (!cholmod_factorize(A, L, cc) || cc->status == CHOLMOD_NOT_POSDEF) {
    st = kn_fail(err, KN_ERR_NUMERIC, "the Newton matrix is not positive definite (CHOLMOD, column %d of %d)",
                 (int)L->minor, n);
  } else {
    cholmod_dense* B = cholmod_allocate_dense((size_t)n, 1, (size_t)n, CHOLMOD_REAL, cc);
    if (!B) {
      st = kn_fail(err, KN_ERR_NOMEM, "out of memory (CHOLMOD)");
    } else {
      memcpy(B->x, b, (size_t)n * sizeof(double));
      cholmod_dense* X = cholmod_solve(CHOLMOD_A, L, B, cc);
      if (!X)
        st = kn_fail(err, KN_ERR_NOMEM, "out of memory (CHOLMOD solve)");
      else
        memcpy(x, X->x, (size_t)n * sizeof(double)), cholmod_free_dense(&X, cc);
      cholmod_free_dense(&B, cc);
    }
  }
  cholmod_free_factor(&L, cc);
  cholmod_free_sparse(&A, cc);
  return st;
}

static kn_status solve_umfpack(kn_nl_linsolve* ls, const kn_nl_triplets* T, const double* b, double* x,
                               kn_error* err) {
  int n = T->n, nz = T->nnz;
  if ((size_t)n + 1 > ls->capp) {
    free(ls->Ap);
    ls->Ap = malloc(((size_t)n + 1) * sizeof *ls->Ap);
    ls->capp = ls->Ap ? (size_t)n + 1 : 0;
  }
  if ((size_t)nz + 1 > ls->capi) {
    free(ls->Ai), free(ls->Ax), free(ls->map);
    ls->Ai = malloc(((size_t)nz + 1) * sizeof *ls->Ai);
    ls->Ax = malloc(((size_t)nz + 1) * sizeof *ls->Ax);
    ls->map = malloc(((size_t)nz + 1) * sizeof *ls->map);
    ls->capi = ls->Ai && ls->Ax && ls->map ? (size_t)nz + 1 : 0;
  }
  if (!ls->capp || !ls->capi) return kn_fail(err, KN_ERR_NOMEM, "out of memory (UMFPACK)");
  if (umfpack_di_triplet_to_col(n, n, nz, T->i, T->j, T->x, ls->Ap, ls->Ai, ls->Ax, NULL) != UMFPACK_OK)
    return kn_fail(err, KN_ERR_NOMEM, "UMFPACK could not assemble the Newton matrix (%d entries)", nz);
  double control[UMFPACK_CONTROL], info[UMFPACK_INFO];
  umfpack_di_defaults(control);
  void *sym = NULL, *num = NULL;
  int s = umfpack_di_symbolic(n, n, ls->Ap, ls->Ai, ls->Ax, &sym, control, info);
  if (s == UMFPACK_OK) s = umfpack_di_numeric(ls->Ap, ls->Ai, ls->Ax, sym, &num, control, info);
  kn_status st = KN_OK;
  if (s == UMFPACK_WARNING_singular_matrix || s == UMFPACK_ERROR_different_pattern)
    st = kn_fail(err, KN_ERR_NUMERIC, "the Newton matrix is singular (UMFPACK, n = %d)", n);
  else if (s == UMFPACK_ERROR_out_of_memory)
    st = kn_fail(err, KN_ERR_NOMEM, "out of memory (UMFPACK)");
  else if (s != UMFPACK_OK)
    st = kn_fail(err, KN_ERR_NUMERIC, "UMFPACK failed (status %d, n = %d)", s, n);
  if (!st && umfpack_di_solve(UMFPACK_A, ls->Ap, ls->Ai, ls->Ax, x, b, num, control, info) != UMFPACK_OK)
    st = kn_fail(err, KN_ERR_NUMERIC, "UMFPACK's solve failed (n = %d)", n);
  if (num) umfpack_di_free_numeric(&num);
  if (sym) umfpack_di_free_symbolic(&sym);
  return st;
}

kn_status kn_nl_linsolve_solve(kn_nl_linsolve* ls, const kn_nl_triplets* T, int symmetric, const double* b, double* x,
                         kn_error* err) {
  if (T->nomem) return kn_fail(err, KN_ERR_NOMEM, "out of memory (Newton matrix)");
  if (symmetric) return solve_cholmod(ls, T, b, x, err);
  return solve_umfpack(ls, T, b, x, err);
}
