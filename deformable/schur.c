/* knead/deformable — Schur complement of an FEM body's dynamics matrix on the DoFs that take part
 * in constraints (digest 6.2), and the recovery of the others after SAP.
 *
 * Split the free DoFs into participating P and the rest N. With X = A^-1 E_P (the |P| columns of
 * A^-1 at P), the block inverse formula gives
 *   X_PP = (A^-1)_PP = S^-1,            S = A_PP - A_PN A_NN^-1 A_NP,
 *   X_NP = (A^-1)_NP = -A_NN^-1 A_NP S^-1.
 * So S = (X_PP)^-1, and the recovery Dv_N = -A_NN^-1 A_NP Dv_P is Dv_N = X_NP S Dv_P, while the P
 * rows of X S Dv_P give X_PP S Dv_P = Dv_P: Dv = X S Dv_P for all DoFs at once. One sparse
 * factorization of A per step (symbolic analysis kept while the pattern holds) and |P| solves. */
#include <cholmod.h>
#include <stdlib.h>
#include <string.h>

#include "deformable/deformable.h"

struct kn_fem_schur {
  cholmod_common cc;
  cholmod_factor* L;
  int n, nnz;            /* pattern of the analysed matrix */
  int *Ap, *Ai;          /* copy of the analysed pattern, to notice a change */
  int np;
  double* X;             /* n x np column-major: A^-1 E_P */
  double* S;             /* np x np row-major */
  double* y;             /* np */
};

kn_fem_schur* kn_fem_schur_create(void) {
  kn_fem_schur* s = kn_calloc(1, sizeof *s);
  if (s) cholmod_start(&s->cc);
  return s;
}

void kn_fem_schur_free(kn_fem_schur* s) {
  if (!s) return;
  if (s->L) cholmod_free_factor(&s->L, &s->cc);
  cholmod_finish(&s->cc);
  free(s->Ap);
  free(s->Ai);
  free(s->X);
  free(s->S);
  free(s->y);
  free(s);
}

// (A) => 1 when its pattern equals the analysed one
static int same_pattern(const kn_fem_schur* s, const cholmod_sparse* A) {
  const int* Ap = A->p;
  if (!s->L || (int)A->nrow != s->n || Ap[A->ncol] != s->nnz) return 0;
  return memcmp(Ap, s->Ap, ((size_t)s->n + 1) * sizeof(int)) == 0 &&
         memcmp(A->i, s->Ai, (size_t)s->nnz * sizeof(int)) == 0;
}

// (A sparse SPD over the free DoFs, P) => S (np x np row-major), X kept for the recovery
kn_status kn_fem_schur_complement(kn_fem_schur* s, const struct cholmod_sparse_struct* Acs, const int* P, int np,
                                  double* S, kn_error* err) {
  cholmod_sparse* A = (cholmod_sparse*)Acs;
  int n = (int)A->nrow;
  if (np < 0 || np > n) return kn_fail(err, KN_ERR_INVALID, "schur: %d participating DoFs of %d", np, n);
  for (int k = 0; k < np; k++)
    if (P[k] < 0 || P[k] >= n || (k > 0 && P[k] <= P[k - 1]))
      return kn_fail(err, KN_ERR_INVALID, "schur: participating DoF %d (= %d) out of range 0..%d or not increasing",
                     k, P[k], n - 1);
  s->np = np;
  if (np == 0) return KN_OK;
  if (!same_pattern(s, A)) {
    if (s->L) cholmod_free_factor(&s->L, &s->cc);
    free(s->Ap);
    free(s->Ai);
    s->n = n;
    s->nnz = ((const int*)A->p)[n];
    s->Ap = malloc(((size_t)n + 1) * sizeof(int));
    s->Ai = malloc((size_t)s->nnz * sizeof(int));
    if (!s->Ap || !s->Ai) return kn_fail(err, KN_ERR_NOMEM, "schur: out of memory");
    memcpy(s->Ap, A->p, ((size_t)n + 1) * sizeof(int));
    memcpy(s->Ai, A->i, (size_t)s->nnz * sizeof(int));
    s->L = cholmod_analyze(A, &s->cc);
    if (!s->L) return kn_fail(err, KN_ERR_NUMERIC, "schur: CHOLMOD analysis failed (status %d)", s->cc.status);
  }
  if (!cholmod_factorize(A, s->L, &s->cc) || s->cc.status != CHOLMOD_OK)
    return kn_fail(err, KN_ERR_NUMERIC, "schur: A is not positive definite (CHOLMOD status %d)", s->cc.status);
  double* X = realloc(s->X, (size_t)n * (size_t)np * sizeof *X);
  double* Sb = realloc(s->S, (size_t)np * (size_t)np * sizeof *Sb);
  double* y = realloc(s->y, (size_t)np * sizeof *y);
  if (X) s->X = X;
  if (Sb) s->S = Sb;
  if (y) s->y = y;
  if (!X || !Sb || !y) return kn_fail(err, KN_ERR_NOMEM, "schur: out of memory");
  memset(X, 0, (size_t)n * (size_t)np * sizeof *X);
  for (int k = 0; k < np; k++) X[(size_t)k * n + P[k]] = 1.0;
  cholmod_dense E = {.nrow = (size_t)n, .ncol = (size_t)np, .nzmax = (size_t)n * (size_t)np, .d = (size_t)n,
                     .x = X, .xtype = CHOLMOD_REAL, .dtype = CHOLMOD_DOUBLE};
  cholmod_dense* Xd = cholmod_solve(CHOLMOD_A, s->L, &E, &s->cc);
  if (!Xd) return kn_fail(err, KN_ERR_NUMERIC, "schur: CHOLMOD solve failed (status %d)", s->cc.status);
  memcpy(X, Xd->x, (size_t)n * (size_t)np * sizeof *X);
  cholmod_free_dense(&Xd, &s->cc);
  /* S = (X_PP)^-1: Cholesky of the symmetrized X_PP, then solve against the identity */
  double* XPP = s->S;
  for (int a = 0; a < np; a++)
    for (int b = 0; b < np; b++)
      XPP[a * np + b] = 0.5 * (X[(size_t)b * n + P[a]] + X[(size_t)a * n + P[b]]);
  kn_status st = kn_chol_factor(XPP, np, err);
  if (st) return kn_error_prefix(err, "schur: (A^-1)_PP: ");
  for (int a = 0; a < np; a++)
    for (int b = 0; b < np; b++) S[a * np + b] = a == b ? 1.0 : 0.0;
  kn_chol_solve(XPP, np, S, np);
  for (int a = 0; a < np; a++)
    for (int b = 0; b < a; b++) S[a * np + b] = S[b * np + a] = 0.5 * (S[a * np + b] + S[b * np + a]);
  memcpy(s->S, S, (size_t)np * (size_t)np * sizeof *S);
  return KN_OK;
}

// (Dv_P = v_P - v*_P) => Dv (n) over all free DoFs: X S Dv_P
void kn_fem_schur_recover(const kn_fem_schur* s, const double* dv_P, double* dv) {
  int n = s->n, np = s->np;
  if (np == 0) {
    memset(dv, 0, (size_t)n * sizeof *dv);
    return;
  }
  for (int a = 0; a < np; a++) {
    double t = 0;
    for (int b = 0; b < np; b++) t += s->S[a * np + b] * dv_P[b];
    s->y[a] = t;
  }
  for (int i = 0; i < n; i++) dv[i] = 0;
  for (int a = 0; a < np; a++) {
    const double* Xa = s->X + (size_t)a * n;
    double ya = s->y[a];
    for (int i = 0; i < n; i++) dv[i] += Xa[i] * ya;
  }
}
