/* Dense Cholesky: a plain loop for the small SPD systems of the time step (rigid cliques, SAP
 * Hessians of a few trees), LAPACKE above that; and the wall clock.
 *
 * Why the plain loop: for n ~ 7 LAPACKE's row-major wrapper spends most of its ~10k instructions
 * transposing and NaN-checking (bench/RESULTS.md profile), a quarter of a SAP step. */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <time.h>

#include "common/common.h"

/* up to this size the loop below is used; it is also the deterministic path (no threading) */
#define KN_CHOL_SMALL 48

static kn_status small_factor(double* A, int n, kn_error* err) {
  for (int j = 0; j < n; j++) {
    double* Aj = A + (size_t)j * n;
    double d = Aj[j];
    for (int k = 0; k < j; k++) d -= Aj[k] * Aj[k];
    if (!(d > 0) || !isfinite(d))
      return kn_fail(err, KN_ERR_NUMERIC,
                     "Cholesky factorization failed at pivot %d (%g): matrix of size %d is not positive definite", j + 1,
                     d, n);
    double ljj = sqrt(d), inv = 1.0 / ljj;
    Aj[j] = ljj;
    for (int i = j + 1; i < n; i++) {
      double* Ai = A + (size_t)i * n;
      double s = Ai[j];
      for (int k = 0; k < j; k++) s -= Ai[k] * Aj[k];
      Ai[j] = s * inv;
    }
  }
  return KN_OK;
}

static void small_solve(const double* L, int n, double* b, int nrhs) {
  for (int r = 0; r < nrhs; r++) {
    /* forward: L y = b */
    for (int i = 0; i < n; i++) {
      const double* Li = L + (size_t)i * n;
      double s = b[(size_t)i * nrhs + r];
      for (int k = 0; k < i; k++) s -= Li[k] * b[(size_t)k * nrhs + r];
      b[(size_t)i * nrhs + r] = s / Li[i];
    }
    /* backward: L^T x = y */
    for (int i = n - 1; i >= 0; i--) {
      double s = b[(size_t)i * nrhs + r];
      for (int k = i + 1; k < n; k++) s -= L[(size_t)k * n + i] * b[(size_t)k * nrhs + r];
      b[(size_t)i * nrhs + r] = s / L[(size_t)i * n + i];
    }
  }
}

/* the row-major lower triangle mirrored into the upper one (= LAPACK's column-major lower), in
 * tiles so that the strided side stays in cache */
static void mirror_lower(double* A, int n) {
  enum { T = 64 };
  for (int i0 = 0; i0 < n; i0 += T)
    for (int j0 = 0; j0 <= i0; j0 += T)
      for (int i = i0; i < n && i < i0 + T; i++)
        for (int j = j0; j < i && j < j0 + T; j++) A[(size_t)j * n + i] = A[(size_t)i * n + j];
}

kn_status kn_chol_factor(double* A, int n, kn_error* err) {
  if (n <= KN_CHOL_SMALL) return small_factor(A, n, err);
  /* LAPACK's column-major lower factor, i.e. the row-major upper triangle: OpenBLAS 0.3.21's 'L'
   * dpotrf is 1.2-1.4x faster than its 'U' (n 600 2.6 vs 3.6 ms, n 1431 26 vs 36 ms, one thread,
   * this machine), more than the O(n^2) mirror costs. _work: no O(n^2) NaN scan. */
  mirror_lower(A, n);
  lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, A, n);
  if (info != 0)
    return kn_fail(err, KN_ERR_NUMERIC, "Cholesky factorization failed (info %d): matrix of size %d is not positive definite",
                   (int)info, n);
  return KN_OK;
}

void kn_chol_solve(const double* L, int n, double* b, int nrhs) {
  if (n <= KN_CHOL_SMALL) {
    small_solve(L, n, b, nrhs);
    return;
  }
  if (nrhs == 1) {
    LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', n, 1, (double*)L, n, b, n); /* as in kn_chol_factor */
    return;
  }
  LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'U', n, nrhs, (double*)L, n, b, nrhs); /* column-major lower = row-major upper */
}

void kn_chol_lower_solve(const double* L, int n, double* B, int nrhs) {
  if (n <= KN_CHOL_SMALL) {
    for (int r = 0; r < nrhs; r++) {
      double* b = B + (size_t)r * (size_t)n;
      for (int i = 0; i < n; i++) {
        const double* Li = L + (size_t)i * n;
        double s = b[i];
        for (int k = 0; k < i; k++) s -= Li[k] * b[k];
        b[i] = s / Li[i];
      }
    }
    return;
  }
  if (nrhs == 1) {
    cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, L, n, B, 1);
    return;
  }
  cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, n, nrhs, 1.0, L, n, B, n);
}

void kn_chol_lower_solve_T(const double* L, int n, double* b) {
  if (n <= KN_CHOL_SMALL) {
    for (int i = n - 1; i >= 0; i--) {
      double s = b[i];
      for (int k = i + 1; k < n; k++) s -= L[(size_t)k * n + i] * b[k];
      b[i] = s / L[(size_t)i * n + i];
    }
    return;
  }
  cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, n, L, n, b, 1);
}

double kn_wall_time(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
