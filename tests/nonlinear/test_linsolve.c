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
