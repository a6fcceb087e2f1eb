/* Dense Cholesky over LAPACKE, and the wall clock. */
#include <lapacke.h>
#include <time.h>

#include "common/common.h"

kn_status kn_chol_factor(double* A, int n, kn_error* err) {
  lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, A, n);
  if (info != 0)
    return kn_fail(err, KN_ERR_NUMERIC, "Cholesky factorization failed (info %d): matrix of size %d is not positive definite",
                   (int)info, n);
  return KN_OK;
}

void kn_chol_solve(const double* L, int n, double* b, int nrhs) {
  LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', n, nrhs, (double*)L, n, b, nrhs);
}

double kn_wall_time(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
