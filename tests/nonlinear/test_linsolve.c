/* The Newton systems' sparse Cholesky solve (nonlinear/linsolve.c) with its symbolic analysis kept
 * while the pattern is the same: a solver that factored one matrix, then another of the same
 * pattern, gives the second's solution bitwise equal to a fresh solver's (the kept analysis, the
 * kept matrix its entries are scattered into and the factorization without transposes change no
 * number), with a residual |A x - b| / |b| below 1e-12 (condition numbers here < 1e3); a matrix
 * of another pattern is analysed afresh (its solution checked the same way); a matrix that is not
 * positive definite fails with its message (supernodal) and the next solve is right again; BiCGSTAB
 * with the kept analysis of its preconditioner equals a fresh solver's answer. For a banded matrix
 * (CHOLMOD's simplicial factor) and a dense-ish one (supernodal). The shifted solve (ipc's refused
 * Hessians): a matrix made indefinite on its diagonal (2 or 45 below the dominant one) gets the first tau of the x4 sequence
 * CHOLMOD accepts, and the tau before it is refused; the answer solves (A + tau D) x = b to 1e-12,
 * and the kept factor's resolve gives it bitwise again. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <suitesparse/cholmod.h>
#include <suitesparse/umfpack.h>

#include "nonlinear/nonlinear_internal.h"

static double urand(unsigned* s) {
  *s = *s * 1103515245u + 12345u;
  return ((*s >> 8) & 0xffffff) / (double)0x1000000;
}

/* an n x n SPD matrix (both triangles): entries (i, j) with |i - j| <= band, or every fill-th pair
 * beyond it, values from seed, diagonal dominant; shift added to the diagonal. The diagonal comes
 * in two entries, summed by the assembly (a kept matrix's scatter must add a repeat, not replace) */
static void make(kn_nl_triplets* T, int n, int band, int fill, unsigned seed, double shift) {
  kn_nl_triplets_reset(T, n);
  double* rowsum = calloc((size_t)n, sizeof *rowsum);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) {
      if (i - j > band && (fill == 0 || (i * 31 + j * 17) % fill)) continue;
      double x = urand(&seed) - 0.5;
      kn_nl_triplets_add(T, i, j, x), kn_nl_triplets_add(T, j, i, x);
      rowsum[i] += fabs(x), rowsum[j] += fabs(x);
    }
  for (int i = 0; i < n; i++) kn_nl_triplets_add(T, i, i, 1.01 * rowsum[i]), kn_nl_triplets_add(T, i, i, 0.1 + shift);
  free(rowsum);
}

static double rel_residual(const kn_nl_triplets* T, const double* x, const double* b) {
  int n = T->n;
  double* y = calloc((size_t)n, sizeof *y), e = 0, nb = 0;
  for (int k = 0; k < T->nnz; k++) y[T->i[k]] += T->x[k] * x[T->j[k]];
  for (int i = 0; i < n; i++) e += (y[i] - b[i]) * (y[i] - b[i]), nb += b[i] * b[i];
  free(y);
  return sqrt(e / nb);
}

static void check(int n, int band, int fill, int refused) {
  kn_nl_linsolve *kept = kn_nl_linsolve_create(), *fresh = kn_nl_linsolve_create();
  kn_nl_triplets T = {0};
  double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  unsigned seed = 7u;
  for (int i = 0; i < n; i++) b[i] = urand(&seed) - 0.5;
  kn_error err = {0};
  /* three matrices of one pattern, then one of another (one more band), then the first pattern again */
  int bands[] = {band, band, band, band + 1, band};
  for (int k = 0; k < 5; k++) {
    make(&T, n, bands[k], fill, 100u + (unsigned)k, 0);
    cr_assert_eq(kn_nl_linsolve_solve(kept, &T, 1, b, x, &err), KN_OK, "%s", err.msg);
    kn_nl_linsolve* f1 = kn_nl_linsolve_create();
    cr_assert_eq(kn_nl_linsolve_solve(f1, &T, 1, b, y, &err), KN_OK, "%s", err.msg);
    kn_nl_linsolve_free(f1);
    cr_assert(!memcmp(x, y, (size_t)n * sizeof *x), "n %d, matrix %d: the kept analysis changed the solution", n, k);
    double res = rel_residual(&T, x, b);
    cr_assert_lt(res, 1e-12, "n %d, matrix %d: residual %g", n, k, res);
  }
  /* not positive definite (the same pattern): refused by the supernodal LL' (the simplicial LDL'
   * stops only at a zero pivot); then solved right again */
  make(&T, n, band, fill, 104u, -1e6);
  kn_status st = kn_nl_linsolve_solve(kept, &T, 1, b, x, &err);
  if (refused) cr_assert_eq(st, KN_ERR_NUMERIC);
  if (refused) cr_assert(strstr(err.msg, "not positive definite"), "%s", err.msg);
  make(&T, n, band, fill, 105u, 0);
  cr_assert_eq(kn_nl_linsolve_solve(kept, &T, 1, b, x, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_nl_linsolve_solve(fresh, &T, 1, b, y, &err), KN_OK, "%s", err.msg);
  cr_assert(!memcmp(x, y, (size_t)n * sizeof *x));
  cr_assert_lt(rel_residual(&T, x, b), 1e-12);
  /* BiCGSTAB's preconditioner (the root-finding backends') keeps its analysis the same way: the
   * kept solver's answer, on a matrix of the last pattern and then of another, equals a fresh one's */
  for (int k = 0; k < 2; k++) {
    make(&T, n, k ? band + 1 : band, fill, 106u + (unsigned)k, 0);
    int its = 0, its2 = 0;
    cr_assert_eq(kn_nl_linsolve_bicgstab(kept, &T, &T, b, x, 1e-10, 100, &its, &err), KN_OK, "%s", err.msg);
    kn_nl_linsolve* f1 = kn_nl_linsolve_create();
    cr_assert_eq(kn_nl_linsolve_bicgstab(f1, &T, &T, b, y, 1e-10, 100, &its2, &err), KN_OK, "%s", err.msg);
    kn_nl_linsolve_free(f1);
    cr_assert(its == its2 && !memcmp(x, y, (size_t)n * sizeof *x), "BiCGSTAB %d: the kept analysis changed the answer", k);
    cr_assert_lt(rel_residual(&T, x, b), 1e-9);
  }
  kn_nl_triplets_free(&T);
  free(b), free(x), free(y);
  kn_nl_linsolve_free(kept), kn_nl_linsolve_free(fresh);
}

Test(linsolve, kept_analysis_banded) { check(300, 3, 0, 0); }
Test(linsolve, kept_analysis_dense_ish) { check(240, 40, 3, 1); }

/* Patterns of changing size on one solver (an MPM grid's active nodes change the DoF count every
 * step): a small dense-ish matrix (few columns, many entries), then a large banded one (more
 * columns, fewer entries), then the first again; symmetric (CHOLMOD) and not (UMFPACK, the same
 * matrices): each solution bitwise a fresh solver's, residual < 1e-12. (The kept patterns' copies
 * must grow by columns and by entries separately; under AddressSanitizer an overrun fails here.) */
Test(linsolve, kept_patterns_of_changing_size) {
  kn_nl_linsolve* kept = kn_nl_linsolve_create();
  kn_nl_triplets T = {0};
  int ns[] = {60, 400, 60}, bands[] = {59, 1, 59};
  for (int sym = 1; sym >= 0; sym--)
    for (int k = 0; k < 3; k++) {
      int n = ns[k];
      double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
      unsigned seed = 3u + (unsigned)k;
      for (int i = 0; i < n; i++) b[i] = urand(&seed) - 0.5;
      make(&T, n, bands[k], 0, 200u + (unsigned)k, 0);
      kn_error err = {0};
      cr_assert_eq(kn_nl_linsolve_solve(kept, &T, sym, b, x, &err), KN_OK, "%s", err.msg);
      kn_nl_linsolve* f1 = kn_nl_linsolve_create();
      cr_assert_eq(kn_nl_linsolve_solve(f1, &T, sym, b, y, &err), KN_OK, "%s", err.msg);
      kn_nl_linsolve_free(f1);
      cr_assert(!memcmp(x, y, (size_t)n * sizeof *x), "sym %d, n %d: differs from a fresh solver", sym, n);
      cr_assert_lt(rel_residual(&T, x, b), 1e-12);
      free(b), free(x), free(y);
    }
  kn_nl_triplets_free(&T);
  kn_nl_linsolve_free(kept);
}

static void check_shifted(int n, int band, int fill, double below) {
  kn_nl_linsolve* ls = kn_nl_linsolve_create();
  kn_nl_triplets T = {0}, T2 = {0};
  double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y),
         *d = malloc((size_t)n * sizeof *d);
  unsigned seed = 11u;
  for (int i = 0; i < n; i++) b[i] = urand(&seed) - 0.5, d[i] = 0.5 + urand(&seed);
  make(&T, n, band, fill, 300u, -below);
  kn_error err = {0};
  cr_assert_eq(kn_nl_linsolve_solve(ls, &T, 1, b, x, &err), KN_ERR_NUMERIC, "A is not positive definite");
  kn_nl_shift sh = {.d = d, .tau_start = 1e-2, .grow = 4, .tau_max = 1e3};
  cr_assert_eq(kn_nl_linsolve_shifted(ls, &T, &sh, b, x, &err), KN_OK, "%s", err.msg);
  cr_assert(sh.tau > 1e-2 && sh.factorizations >= 3, "tau %g after %d factorizations", sh.tau, sh.factorizations);
  cr_assert_eq(kn_nl_linsolve_resolve(ls, n, b, y, &err), KN_OK, "%s", err.msg);
  cr_assert(!memcmp(x, y, (size_t)n * sizeof *x), "the kept factor's resolve differs");
  for (int pass = 0; pass < 2; pass++) { /* A + tau D, then A + tau / 4 D */
    double tau = pass ? sh.tau / 4 : sh.tau;
    kn_nl_triplets_reset(&T2, n);
    for (int k = 0; k < T.nnz; k++) kn_nl_triplets_add(&T2, T.i[k], T.j[k], T.x[k]);
    for (int i = 0; i < n; i++) kn_nl_triplets_add(&T2, i, i, tau * d[i]);
    kn_nl_linsolve* f1 = kn_nl_linsolve_create();
    kn_status st = kn_nl_linsolve_solve(f1, &T2, 1, b, y, &err);
    kn_nl_linsolve_free(f1);
    if (pass) {
      cr_assert_eq(st, KN_ERR_NUMERIC, "tau / 4 = %g was accepted: tau %g is not the first", tau, sh.tau);
    } else {
      cr_assert_eq(st, KN_OK, "%s", err.msg);
      double res = rel_residual(&T2, x, b);
      cr_assert_lt(res, 1e-12, "(A + tau D) x = b: residual %g (tau %g)", res, sh.tau);
    }
  }
  kn_nl_triplets_free(&T), kn_nl_triplets_free(&T2);
  free(b), free(x), free(y), free(d);
  kn_nl_linsolve_free(ls);
}

Test(linsolve, shifted_banded) { check_shifted(300, 3, 0, 2); }
Test(linsolve, shifted_dense_ish) { check_shifted(240, 40, 3, 45); }

/* The assembly's sums are CHOLMOD's and UMFPACK's: a matrix whose entries come in a scrambled order, each
 * off-diagonal value split into three entries of very different size (so that another order of
 * the additions rounds differently) and the diagonal into two, gives bitwise the solution of
 * CHOLMOD's own pipeline (cholmod_triplet_to_sparse of the lower triangle, cholmod_analyze,
 * cholmod_factorize, cholmod_solve) and, as a general system, of UMFPACK's (umfpack_di_triplet_to_col,
 * symbolic, numeric, solve), with the same solver on a second matrix of that entry sequence
 * (scattered through the kept map) and on a first one of another pattern; banded (simplicial) and
 * dense-ish (supernodal). */
static void cholmod_reference(const kn_nl_triplets* T, const double* b, double* x) {
  cholmod_common cc;
  kn_chol_start(&cc); /* knead's supernodes, and CHOLMOD's choice of factor as linsolve.c's */
  cc.supernodal = CHOLMOD_AUTO;
  cholmod_triplet* tr = cholmod_allocate_triplet((size_t)T->n, (size_t)T->n, (size_t)T->nnz + 1, -1, CHOLMOD_REAL, &cc);
  int *ti = tr->i, *tj = tr->j, m = 0;
  double* tx = tr->x;
  for (int k = 0; k < T->nnz; k++)
    if (T->i[k] >= T->j[k]) ti[m] = T->i[k], tj[m] = T->j[k], tx[m] = T->x[k], m++;
  tr->nnz = (size_t)m;
  cholmod_sparse* A = cholmod_triplet_to_sparse(tr, (size_t)m, &cc);
  cholmod_factor* L = cholmod_analyze(A, &cc);
  cr_assert(L && cholmod_factorize(A, L, &cc) && cc.status == CHOLMOD_OK);
  cholmod_dense* B = cholmod_allocate_dense((size_t)T->n, 1, (size_t)T->n, CHOLMOD_REAL, &cc);
  memcpy(B->x, b, (size_t)T->n * sizeof *b);
  cholmod_dense* X = cholmod_solve(CHOLMOD_A, L, B, &cc);
  memcpy(x, X->x, (size_t)T->n * sizeof *x);
  cholmod_free_dense(&X, &cc), cholmod_free_dense(&B, &cc), cholmod_free_factor(&L, &cc);
  cholmod_free_sparse(&A, &cc), cholmod_free_triplet(&tr, &cc);
  cholmod_finish(&cc);
}

/* make()'s matrix (values from seed) with its entries scrambled (a permutation from order) and each
 * off-diagonal entry split into 0.9999 x, 1e-4 x + 1e-9 and -1e-9 */
static void make_split(kn_nl_triplets* T, int n, int band, int fill, unsigned seed, unsigned order) {
  kn_nl_triplets M = {0};
  make(&M, n, band, fill, seed, 0);
  int* perm = malloc((size_t)M.nnz * sizeof *perm);
  for (int k = 0; k < M.nnz; k++) perm[k] = k;
  unsigned s = order;
  for (int k = M.nnz - 1; k > 0; k--) {
    int r = (int)(urand(&s) * (k + 1)), t = perm[k];
    perm[k] = perm[r], perm[r] = t;
  }
  kn_nl_triplets_reset(T, n);
  for (int q = 0; q < M.nnz; q++) {
    int k = perm[q], i = M.i[k], j = M.j[k];
    double x = M.x[k];
    if (i == j) kn_nl_triplets_add(T, i, j, x);
    else kn_nl_triplets_add(T, i, j, 0.9999 * x), kn_nl_triplets_add(T, i, j, 1e-4 * x + 1e-9);
  }
  for (int q = 0; q < M.nnz; q++) { /* the third parts, after every other entry */
    int k = perm[q];
    if (M.i[k] != M.j[k]) kn_nl_triplets_add(T, M.i[k], M.j[k], -1e-9);
  }
  free(perm);
  kn_nl_triplets_free(&M);
}

/* UMFPACK's own pipeline on all the entries (umfpack_di_triplet_to_col, symbolic, numeric, solve) */
static void umfpack_reference(const kn_nl_triplets* T, const double* b, double* x) {
  int n = T->n, *Ap = malloc(((size_t)n + 1) * sizeof *Ap), *Ai = malloc((size_t)T->nnz * sizeof *Ai);
  double* Ax = malloc((size_t)T->nnz * sizeof *Ax);
  void *sym = NULL, *num = NULL;
  cr_assert_eq(umfpack_di_triplet_to_col(n, n, T->nnz, T->i, T->j, T->x, Ap, Ai, Ax, NULL), UMFPACK_OK);
  cr_assert_eq(umfpack_di_symbolic(n, n, Ap, Ai, Ax, &sym, NULL, NULL), UMFPACK_OK);
  cr_assert_eq(umfpack_di_numeric(Ap, Ai, Ax, sym, &num, NULL, NULL), UMFPACK_OK);
  cr_assert_eq(umfpack_di_solve(UMFPACK_A, Ap, Ai, Ax, x, b, num, NULL, NULL), UMFPACK_OK);
  umfpack_di_free_numeric(&num), umfpack_di_free_symbolic(&sym);
  free(Ap), free(Ai), free(Ax);
}

static void check_cholmod_sums(int n, int band, int fill) {
  kn_nl_linsolve* ls = kn_nl_linsolve_create();
  kn_nl_triplets T = {0};
  double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  unsigned seed = 11u;
  for (int i = 0; i < n; i++) b[i] = urand(&seed) - 0.5;
  int bands[] = {band, band, band + 2};
  for (int k = 0; k < 3; k++) { /* the second: the first's entry sequence (the kept map), other values */
    make_split(&T, n, bands[k], fill, 500u + (unsigned)k, k < 2 ? 77u : 78u);
    kn_error err = {0};
    cr_assert_eq(kn_nl_linsolve_solve(ls, &T, 1, b, x, &err), KN_OK, "%s", err.msg);
    cholmod_reference(&T, b, y);
    cr_assert(!memcmp(x, y, (size_t)n * sizeof *x), "matrix %d: differs from CHOLMOD's pipeline", k);
    cr_assert_lt(rel_residual(&T, x, b), 1e-12);
    cr_assert_eq(kn_nl_linsolve_solve(ls, &T, 0, b, x, &err), KN_OK, "%s", err.msg);
    umfpack_reference(&T, b, y);
    cr_assert(!memcmp(x, y, (size_t)n * sizeof *x), "matrix %d: differs from UMFPACK's pipeline", k);
    cr_assert_lt(rel_residual(&T, x, b), 1e-12);
  }
  free(b), free(x), free(y);
  kn_nl_triplets_free(&T);
  kn_nl_linsolve_free(ls);
}

Test(linsolve, sums_as_cholmod_banded) { check_cholmod_sums(300, 3, 0); }
Test(linsolve, sums_as_cholmod_dense_ish) { check_cholmod_sums(240, 40, 3); }
