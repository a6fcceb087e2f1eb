/* common/sparse_chol.c: a factorization through kn_chol_permuted_factor is cholmod_factorize's bit
 * for bit (same supernodal kernel, same entries), on a matrix whose AMD permutation is far from the
 * identity; an indefinite matrix fails at the same column; a simplicial analysis falls back; an
 * upper-triangle input is refused. kn_chol_analyze keeps a given order that fills little and takes
 * AMD when it fills much. */
#include <suitesparse/cholmod.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
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
  kn_chol_start(&cc); /* supernodal; cholmod_analyze below orders by AMD */
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
  kn_chol_start(&cc);
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
  kn_chol_start(&cc);
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

/* the 5-point Laplacian of an nx x ny grid (lower triangle, diagonal 5), grid point k numbered
 * perm[k]; ny = 1 is a chain */
static cholmod_sparse* grid(int nx, int ny, const int* perm, cholmod_common* cc) {
  int n = nx * ny;
  cholmod_triplet* T = cholmod_allocate_triplet((size_t)n, (size_t)n, 3 * (size_t)n, -1, CHOLMOD_REAL, cc);
  int *Ti = T->i, *Tj = T->j;
  double* Tx = T->x;
  for (int k = 0; k < n; k++) {
    int a = perm[k];
    Ti[T->nnz] = a, Tj[T->nnz] = a, Tx[T->nnz++] = 5.0;
    int nb[2] = {k % nx + 1 < nx ? k + 1 : -1, k + nx < n ? k + nx : -1};
    for (int e = 0; e < 2; e++) {
      if (nb[e] < 0) continue;
      int b = perm[nb[e]];
      Ti[T->nnz] = a > b ? a : b, Tj[T->nnz] = a > b ? b : a, Tx[T->nnz++] = -1.0;
    }
  }
  cholmod_sparse* A = cholmod_triplet_to_sparse(T, 0, cc);
  cholmod_free_triplet(&T, cc);
  return A;
}

static void shuffle(int* x, int n, unsigned seed) {
  for (int k = 0; k < n; k++) x[k] = k;
  for (int k = n - 1; k > 0; k--) {
    seed = seed * 1103515245u + 12345u;
    int j = (int)((seed >> 8) % (unsigned)(k + 1)), t = x[k];
    x[k] = x[j], x[j] = t;
  }
}

Test(sparse_chol, ordering_given_when_it_fills_little_else_amd) {
  cholmod_common cc;
  kn_chol_start(&cc);
  enum { N = 400 };
  int id[N], shuffled[N];
  for (int k = 0; k < N; k++) id[k] = k;
  shuffle(shuffled, N, 7);
  /* a chain in its own order fills nothing: kept without AMD */
  cholmod_sparse* A = grid(N, 1, id, &cc);
  cholmod_factor* L = kn_chol_analyze(A, NULL, &cc);
  cr_assert_not_null(L);
  cr_expect_neq(L->ordering, CHOLMOD_AMD);
  cr_expect_leq(cc.lnz, 2.0 * N, "chain order: nnz(L) %g", cc.lnz);
  cholmod_free_factor(&L, &cc), cholmod_free_sparse(&A, &cc);
  /* a shuffled 20 x 20 grid: its own order fills far more than 3 nnz(A), AMD is taken */
  A = grid(20, 20, shuffled, &cc);
  double anz = (double)((int*)A->p)[N];
  cc.nmethods = 1, cc.method[0].ordering = CHOLMOD_NATURAL;
  L = cholmod_analyze(A, &cc);
  double own = cc.lnz;
  cholmod_free_factor(&L, &cc);
  cc.nmethods = 0, cc.method[0].ordering = CHOLMOD_GIVEN;
  L = kn_chol_analyze(A, NULL, &cc);
  cr_assert_not_null(L);
  fprintf(stderr, "shuffled 20 x 20 grid: nnz(A) %g, nnz(L) own order %g, kn_chol_analyze %g\n", anz, own, cc.lnz);
  cr_expect_gt(own, 3.0 * anz);
  cr_expect_eq(L->ordering, CHOLMOD_AMD);
  cr_expect_lt(cc.lnz, 0.5 * own, "AMD on the shuffled grid: nnz(L) %g, own order %g", cc.lnz, own);
  cholmod_free_factor(&L, &cc), cholmod_free_sparse(&A, &cc);
  /* a shuffled chain with the chain's order given: kept */
  A = grid(N, 1, shuffled, &cc);
  L = kn_chol_analyze(A, shuffled, &cc);
  cr_assert_not_null(L);
  cr_expect_eq(L->ordering, CHOLMOD_GIVEN);
  cr_expect_leq(cc.lnz, 2.0 * N, "given chain order: nnz(L) %g", cc.lnz);
  cr_expect_eq(cc.nmethods, 0, "kn_chol_analyze restores the common's settings");
  cholmod_free_factor(&L, &cc), cholmod_free_sparse(&A, &cc);
  cholmod_finish(&cc);
}
