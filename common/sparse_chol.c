/* CHOLMOD's numeric factorization without its input transposes. cholmod_factorize, given the
 * lower triangle of A and a fill-reducing permutation P, transposes A twice per call to reach
 * tril(P A P^T), the form its supernodal kernel reads (cholmod_factorize.c; cholmod_super_numeric
 * documents that A(p,p) may be passed to it directly). On the small, fairly dense matrices of a
 * contact solve or an MPM grid that costs as much as a third of the factorization itself. Here
 * the permuted pattern and each entry's place in it are made once per symbolic analysis, and a
 * factorization is one scatter and cholmod_super_numeric: the same entries reach the same kernel,
 * so the factor is bit for bit cholmod_factorize's. A simplicial factor (CHOLMOD_AUTO may choose
 * one) goes through cholmod_factorize. */
#include <cholmod.h>
#include <stdlib.h>

#include "common/common.h"

void kn_chol_start(struct cholmod_common_struct* cc) {
  cholmod_start(cc);
  cc->print = 0;            /* library code never prints */
  cc->error_handler = NULL; /* errors come back through cc->status */
  cc->supernodal = CHOLMOD_SUPERNODAL;
  /* fewer, larger supernodes than CHOLMOD's default (nrelax 4, 16, 48): its supernodal factorization
   * opens an OpenMP region per supernode, and libgomp ends each with a futex system call even for a
   * team of one thread (1.27 million in 3 steps of the twisted rods at h 1, 2,640 nodes of 3 DoFs);
   * merged further, the rods took 19 % less CPU per Newton iteration (58 against 72 ms; a few more
   * explicit zeros factored; bench/RESULTS.md) */
  cc->nrelax[0] = 16, cc->nrelax[1] = 48, cc->nrelax[2] = 96;
}

/* the given order is kept without trying AMD when L has at most this many times A's entries */
#define GIVEN_FILL_OK 3.0

struct cholmod_factor_struct* kn_chol_analyze(struct cholmod_sparse_struct* A, const int* order,
                                              struct cholmod_common_struct* cc) {
  /* the fill-reducing ordering: the given one (or the matrix's own), and AMD only when that one
   * fills much: an MPM grid's nodes come sorted by cell, a banded order that fills 25-50 % less than
   * AMD on the example scenes (factor flops: rolling 1.16e8 vs 1.57e8, shake 1.51e8 vs 2.25e8,
   * tearing 3.3e7 vs 6.4e7, pouring 2.0e7 vs 2.3e7; METIS and CHOLMOD's nested dissection did no
   * better than AMD) with L at 1.7-2.6 times A's entries, and AMD's analysis costs more than the
   * symbolic factorization of the given order */
  int nmethods = cc->nmethods, o0 = cc->method[0].ordering, o1 = cc->method[1].ordering;
  cc->nmethods = 1;
  cc->method[0].ordering = order ? CHOLMOD_GIVEN : CHOLMOD_NATURAL;
  cholmod_factor* L = cholmod_analyze_p(A, (int*)order, NULL, 0, cc);
  double anz = (double)((const int*)A->p)[A->ncol];
  if (!L || cc->lnz > GIVEN_FILL_OK * anz) {
    /* both, the one with less fill kept (CHOLMOD compares nnz(L)) */
    if (L) cholmod_free_factor(&L, cc);
    cc->nmethods = 2;
    cc->method[1].ordering = CHOLMOD_AMD;
    L = cholmod_analyze_p(A, (int*)order, NULL, 0, cc);
  }
  cc->nmethods = nmethods, cc->method[0].ordering = o0, cc->method[1].ordering = o1;
  return L;
}

void kn_chol_permuted_free(kn_chol_permuted* p, struct cholmod_common_struct* cc) {
  if (p->S) cholmod_free_sparse(&p->S, cc);
  free(p->to);
  p->to = NULL;
}

kn_status kn_chol_permuted_prepare(kn_chol_permuted* p, struct cholmod_sparse_struct* A,
                                   const struct cholmod_factor_struct* L, struct cholmod_common_struct* cc,
                                   kn_error* err) {
  kn_chol_permuted_free(p, cc);
  if (!L->is_super) return KN_OK;
  if (A->stype >= 0 || A->nrow != A->ncol || !A->packed || A->itype != CHOLMOD_INT || L->n != A->nrow)
    return kn_fail(err, KN_ERR_INVALID, "sparse Cholesky: a packed lower triangle (stype -1, int indices) expected");
  int n = (int)A->nrow;
  const int* Ap = A->p;
  const int* Ai = A->i;
  const int* perm = L->Perm;
  size_t nnz = (size_t)Ap[n];
  int* inv = malloc((size_t)n * sizeof(int) + 1);
  int* next = calloc((size_t)n + 1, sizeof(int));
  int* row = malloc((nnz + 1) * sizeof(int)); /* each entry's row and column in S */
  int* col = malloc((nnz + 1) * sizeof(int));
  int* byrow = malloc((nnz + 1) * sizeof(int)); /* A's entries ordered by their row in S */
  p->to = malloc((nnz + 1) * sizeof(int));
  p->S = cholmod_allocate_sparse((size_t)n, (size_t)n, nnz, 1, 1, -1, CHOLMOD_REAL, cc);
  kn_status st = KN_OK;
  if (!inv || !next || !row || !col || !byrow || !p->to || !p->S) {
    st = kn_fail(err, KN_ERR_NOMEM, "sparse Cholesky: out of memory (%d x %d, %zu entries)", n, n, nnz);
    kn_chol_permuted_free(p, cc);
    goto done;
  }
  for (int k = 0; k < n; k++) inv[perm ? perm[k] : k] = k;
  /* entry (i, j) of tril(A) is entry (max, min) of (inv[i], inv[j]) of tril(P A P^T) */
  for (int j = 0; j < n; j++)
    for (int z = Ap[j]; z < Ap[j + 1]; z++) {
      int a = inv[Ai[z]], b = inv[j];
      row[z] = a > b ? a : b;
      col[z] = a > b ? b : a;
    }
  /* a counting sort by row, then one by column that keeps that order: each column of S lists its
   * rows in increasing order */
  for (size_t z = 0; z < nnz; z++) next[row[z] + 1]++;
  for (int k = 0; k < n; k++) next[k + 1] += next[k];
  for (size_t z = 0; z < nnz; z++) byrow[next[row[z]]++] = (int)z;
  int* Sp = p->S->p;
  int* Si = p->S->i;
  for (int k = 0; k <= n; k++) Sp[k] = 0;
  for (size_t z = 0; z < nnz; z++) Sp[col[z] + 1]++;
  for (int k = 0; k < n; k++) Sp[k + 1] += Sp[k];
  for (int k = 0; k < n; k++) next[k] = Sp[k];
  for (size_t t = 0; t < nnz; t++) {
    int z = byrow[t], at = next[col[z]]++;
    Si[at] = row[z];
    p->to[z] = at;
  }
done:
  free(inv), free(next), free(row), free(col), free(byrow);
  return st;
}

int kn_chol_permuted_factor(kn_chol_permuted* p, struct cholmod_sparse_struct* A, struct cholmod_factor_struct* L,
                            struct cholmod_common_struct* cc) {
  if (!p->S) return cholmod_factorize(A, L, cc);
  const double* Ax = A->x;
  double* Sx = p->S->x;
  size_t nnz = (size_t)((const int*)A->p)[A->ncol];
  for (size_t z = 0; z < nnz; z++) Sx[p->to[z]] = Ax[z];
  double beta[2] = {0, 0};
  return cholmod_super_numeric(p->S, NULL, beta, L, cc);
}
