/* nonlinear/ internals: the sparse direct solves behind the Newton step (linsolve.c) */
#ifndef KNEAD_NONLINEAR_INTERNAL_H
#define KNEAD_NONLINEAR_INTERNAL_H

#include "nonlinear/nonlinear.h"

typedef struct kn_nl_linsolve kn_nl_linsolve;
kn_nl_linsolve* kn_nl_linsolve_create(void);
void kn_nl_linsolve_free(kn_nl_linsolve* ls);
/* (entries of an n x n matrix, symmetric?) => x = T^-1 b (x may alias b). Symmetric: the lower
 * triangle's entries are used (both triangles given), CHOLMOD's LDL^T / LL^T, KN_ERR_NUMERIC when
 * not positive definite; otherwise UMFPACK's LU, KN_ERR_NUMERIC when singular. */
kn_status kn_nl_linsolve_solve(kn_nl_linsolve* ls, const kn_nl_triplets* T, int symmetric, const double* b, double* x,
                         kn_error* err);

/* A diagonal shift for a symmetric matrix CHOLMOD refuses (a Levenberg-Marquardt step): d, n
 * positive entries (the masses); tau_start > 0, grow > 1, tau_max. Out: tau, 0 when A itself was
 * accepted, and the numeric factorizations done (1 + the shifted ones). */
typedef struct {
  const double* d;
  double tau_start, grow, tau_max;
  double tau;
  int factorizations;
} kn_nl_shift;
/* (entries T of a symmetric A, shift) => x = (A + tau D)^-1 b with tau 0 when CHOLMOD accepts A,
 * else the first of tau_start, tau_start grow, ... <= tau_max it accepts (the analysis kept: the
 * pattern is A's); KN_ERR_NUMERIC when none is */
kn_status kn_nl_linsolve_shifted(kn_nl_linsolve* ls, const kn_nl_triplets* T, kn_nl_shift* shift, const double* b,
                                 double* x, kn_error* err);
/* (n, b) => x = A^-1 b with the factor of the last symmetric solve's accepted matrix (A + tau D when
 * shifted; two triangular solves, no factorization); KN_ERR_NUMERIC when no factor of size n is
 * kept (none yet, a failed one, or one BiCGSTAB replaced) */
kn_status kn_nl_linsolve_resolve(kn_nl_linsolve* ls, int n, const double* b, double* x, kn_error* err);

/* (Jacobian entries T, SPD entries P (both triangles given, the lower used), b, relative tolerance,
 * iteration cap) => x with |T x - b| <= tol |b| by right-preconditioned BiCGSTAB, P's Cholesky
 * factor as the preconditioner; *iters. KN_ERR_NUMERIC when P is not positive definite, BiCGSTAB
 * breaks down or does not reach tol (the caller then uses the LU). */
kn_status kn_nl_linsolve_bicgstab(kn_nl_linsolve* ls, const kn_nl_triplets* T, const kn_nl_triplets* P,
                                  const double* b, double* x, double tol, int maxit, int* iters, kn_error* err);

#endif
