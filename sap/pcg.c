/* Inexact Newton for SAP (digest §4.6): when only G changes between Newton iterations, the
 * factorization of an earlier H_k0 = A + J^T G_k0 J is a good preconditioner for
 * H_k = A + J^T G_k J, and a few preconditioned CG products with H_k (O(n^2) each) replace the
 * O(n^3) dense Cholesky of one big deformable clique. CG from x0 = 0 on an SPD system gives
 * iterates x_m with b^T x_m > 0 (they minimize 1/2 x^T H x - b^T x over a Krylov space that
 * contains b's preconditioned image), so with b = -grad every iterate is a descent direction
 * and the exact line search still decreases the cost (Nocedal & Wright, §7.1, "line search
 * Newton-CG"). Everything is sequential in a fixed order: bitwise reproducible. */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "sap/sap_internal.h"

/* y += H x for one symmetric n x n block given by its lower triangle (row-major): BLAS dsymv, so
 * that it runs at BLAS speed in every build (a loop of ours is ~20x slower under the sanitizers'
 * -O0, where the factorizations it replaces stay fast); BLAS runs on one thread
 * (kn_blas_deterministic), so its order is fixed. */
void kn_sap_sym_matvec_add(const double* H, int n, const double* x, double* y) {
  cblas_dsymv(CblasRowMajor, CblasLower, n, 1.0, H, n, x, 1, 1.0, y, 1);
}

double kn_sap_dot(const double* a, const double* b, int n) {
  double s = 0;
  for (int k = 0; k < n; k++) s += a[k] * b[k];
  return s;
}

double kn_sap_scaled_norm(const double* D, const double* x, int n) {
  double s = 0;
  for (int k = 0; k < n; k++) s += (D[k] * x[k]) * (D[k] * x[k]);
  return sqrt(s);
}

kn_status kn_sap_pcg(int n, void (*apply_H)(void* user, const double* x, double* y), void* user,
                     kn_status (*apply_M)(void* user, double* z, kn_error* err), const double* b, const double* D,
                     double tol, int max_iter, double* x, double* work, int* iters, int* converged, kn_error* err) {
  double *r = work, *z = work + n, *p = work + 2 * (size_t)n, *q = work + 3 * (size_t)n;
  *iters = 0;
  *converged = 0;
  memset(x, 0, (size_t)n * sizeof(double));
  memcpy(r, b, (size_t)n * sizeof(double));
  if (kn_sap_scaled_norm(D, r, n) <= tol) {
    *converged = 1;
    return KN_OK;
  }
  memcpy(z, r, (size_t)n * sizeof(double));
  kn_status st = apply_M(user, z, err);
  if (st) return st;
  memcpy(p, z, (size_t)n * sizeof(double));
  double rz = kn_sap_dot(r, z, n);
  /* M (H_k0^-1, or H_k^-1 by sap/lowrank.c) is SPD, so r^T M r > 0 for r != 0; anything else is round-off or a NaN */
  if (!(rz > 0)) return KN_OK;
  while (*iters < max_iter) {
    apply_H(user, p, q);
    (*iters)++;
    double pq = kn_sap_dot(p, q, n);
    if (!(pq > 0)) return KN_OK; /* H_k not positive along p (round-off): let the caller factor */
    double a = rz / pq;
    for (int t = 0; t < n; t++) {
      x[t] += a * p[t];
      r[t] -= a * q[t];
    }
    if (kn_sap_scaled_norm(D, r, n) <= tol) {
      *converged = 1;
      return KN_OK;
    }
    memcpy(z, r, (size_t)n * sizeof(double));
    st = apply_M(user, z, err);
    if (st) return st;
    double rz_new = kn_sap_dot(r, z, n);
    if (!(rz_new > 0)) return KN_OK;
    double beta = rz_new / rz;
    rz = rz_new;
    for (int t = 0; t < n; t++) p[t] = z[t] + beta * p[t];
  }
  return KN_OK;
}
