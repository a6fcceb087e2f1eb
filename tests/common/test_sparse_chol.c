/* common/sparse_chol.c: a factorization through kn_chol_permuted_factor is cholmod_factorize's bit
 * for bit (same supernodal kernel, same entries), on a matrix whose AMD permutation is far from the
 * identity; an indefinite matrix fails at the same column; a simplicial analysis falls back; an
 * upper-triangle input is refused. */
#include <suitesparse/cholmod.h>
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "common/common.h"

/* a 2-D grid Laplacian-like SPD matrix on an nx x nx lattice with 9-point coupling, numbered so
 * that the natural order fills badly: lower triangle, stype -1, values from a fixed sequence */
static cholmod_sparse* lattice(int nx, double shift, cholmod_common* cc) {
  int n = nx * nx;
  cholmod_sparse* A = cholmod_allocate_sparse((size_t)n, (size_t)n, (size_t)n * 5, 1, 1, -1, CHOLMOD_REAL, cc);
  int *Ap = A->p, *Ai = A->i;
  double* Ax = A->x;
  int at = 0;
  unsigned seed = 12345;
  for (int j = 0; j < n; j++) {
    Ap[j] = at;
    int jx = j % nx, jy = j / nx;
    Ai[at] = j, Ax[at++] = 13.0 + shift;
    /* neighbours after j: (jx+1, jy), (jx-1, jy+1), (jx, jy+1), (jx+1, jy+1) */
    const int d[4][2] = {{1, 0}, {-1, 1}, {0, 1}, {1, 1}};
    for (int k = 0; k < 4; k++) {
      int x = jx + d[k][0], y = jy + d[k][1];
      if (x < 0 || x >= nx || y >= nx) continue;
      seed = seed * 1103515245u + 12345u;
      Ai[at] = y * nx + x, Ax[at++] = -1.0 - 0.5 * (double)(seed >> 16 & 0x7fff) / 32768.0;
    }
  }
  Ap[n] = at;
  return A;
}

Test(sparse_chol, same_factor_as_cholmod_factorize) {
  cholmod_common cc;
  cholmod_start(&cc);
  cc.print = 0;
  cc.supernodal = CHOLMOD_SUPERNODAL;
  cholmod_sparse* A = lattice(14, 0.0, &cc);
  cholmod_factor* L1 = cholmod_analyze(A, &cc);
  cholmod_factor* L2 = cholmod_analyze(A, &cc);
  cr_assert(L1 && L2 && L2->is_super);
  int moved = 0;
  for (size_t k = 0; k < L2->n; k++) moved += ((int*)L2->Perm)[k] != (int)k;
  cr_assert_gt(moved, (int)L2->n / 2, "AMD should permute most of the %zu columns (moved %d)", L2->n, moved);
  kn_chol_permuted p = {0};
  kn_error err = {0};
  cr_assert_eq(kn_chol_permuted_prepare(&p, A, L2, &cc, &err), KN_OK, "%s", err.msg);
  cr_assert_not_null(p.S);
  /* two rounds with different values, the pattern's map reused */
  for (int round = 0; round < 2; round++) {
    double* Ax = A->x;
    for (int z = 0; z < ((int*)A->p)[A->ncol]; z++) Ax[z] *= 1.0 + 0.25 * round;
    cr_assert(cholmod_factorize(A, L1, &cc) && cc.status == CHOLMOD_OK);
    cr_assert(kn_chol_permuted_factor(&p, A, L2, &cc) && cc.status == CHOLMOD_OK);
    cr_assert_eq(L1->xsize, L2->xsize);
    cr_assert_eq(memcmp(L1->x, L2->x, L1->xsize * sizeof(double)), 0, "round %d: the factors differ", round);
    /* and the factor solves A x = b: residual at round-off */
    cholmod_dense* b = cholmod_ones(A->nrow, 1, CHOLMOD_REAL, &cc);
    cholmod_dense* x = cholmod_solve(CHOLMOD_A, L2, b, &cc);
    cholmod_dense* r = cholmod_copy_dense(b, &cc);
    double one[2] = {1, 0}, minus[2] = {-1, 0};
    cholmod_sdmult(A, 0, minus, one, x, r, &cc);
    double rn = cholmod_norm_dense(r, 0, &cc);
    cr_assert_lt(rn, 1e-12, "round %d: |A x - b| = %g", round, rn);
    cholmod_free_dense(&b, &cc), cholmod_free_dense(&x, &cc), cholmod_free_dense(&r, &cc);
  }
  kn_chol_permuted_free(&p, &cc);
  cholmod_free_factor(&L1, &cc), cholmod_free_factor(&L2, &cc), cholmod_free_sparse(&A, &cc);
  cholmod_finish(&cc);
}

Test(sparse_chol, indefinite_fails_at_the_same_column) {
  cholmod_common cc;
  cholmod_start(&cc);
  cc.print = 0;
  cc.error_handler = NULL;
  cc.supernodal = CHOLMOD_SUPERNODAL;
  cholmod_sparse* A = lattice(10, -11.0, &cc); /* diagonal 2: indefinite */
  cholmod_factor* L1 = cholmod_analyze(A, &cc);
  cholmod_factor* L2 = cholmod_analyze(A, &cc);
  kn_chol_permuted p = {0};
  kn_error err = {0};
  cr_assert_eq(kn_chol_permuted_prepare(&p, A, L2, &cc, &err), KN_OK);
  cholmod_factorize(A, L1, &cc);
  int s1 = cc.status;
  kn_chol_permuted_factor(&p, A, L2, &cc);
  cr_assert_eq(s1, CHOLMOD_NOT_POSDEF);
  cr_assert_eq(cc.status, CHOLMOD_NOT_POSDEF);
  cr_assert_lt(L2->minor, L2->n);
  cr_assert_eq(L1->minor, L2->minor);
  kn_chol_permuted_free(&p, &cc);
  cholmod_free_factor(&L1, &cc), cholmod_free_factor(&L2, &cc), cholmod_free_sparse(&A, &cc);
  cholmod_finish(&cc);
}

Test(sparse_chol, simplicial_falls_back_and_upper_is_refused) {
  cholmod_common cc;
  cholmod_start(&cc);
  cc.print = 0;
  cc.supernodal = CHOLMOD_SIMPLICIAL;
  cholmod_sparse* A = lattice(8, 0.0, &cc);
  cholmod_factor* L = cholmod_analyze(A, &cc);
  kn_chol_permuted p = {0};
  kn_error err = {0};
  cr_assert_eq(kn_chol_permuted_prepare(&p, A, L, &cc, &err), KN_OK);
  cr_assert_null(p.S, "a simplicial factor goes through cholmod_factorize");
  cr_assert(kn_chol_permuted_factor(&p, A, L, &cc) && cc.status == CHOLMOD_OK);
  cr_assert_eq(L->minor, L->n);
  cholmod_free_factor(&L, &cc);
  cc.supernodal = CHOLMOD_SUPERNODAL;
  L = cholmod_analyze(A, &cc);
  A->stype = 1; /* the same arrays declared upper: another kind of input */
  cr_assert_eq(kn_chol_permuted_prepare(&p, A, L, &cc, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "lower triangle"), "%s", err.msg);
  cr_assert_null(p.S);
  A->stype = -1;
  cholmod_free_factor(&L, &cc), cholmod_free_sparse(&A, &cc);
  cholmod_finish(&cc);
}
