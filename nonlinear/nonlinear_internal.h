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

/* (Jacobian entries T, SPD entries P (both triangles given, the lower used), b, relative tolerance,
 * iteration cap) => x with |T x - b| <= tol |b| by right-preconditioned BiCGSTAB, P's Cholesky
 * factor as the preconditioner; *iters. KN_ERR_NUMERIC when P is not positive definite, BiCGSTAB
 * breaks down or does not reach tol (the caller then uses the LU). */
kn_status kn_nl_linsolve_bicgstab(kn_nl_linsolve* ls, const kn_nl_triplets* T, const kn_nl_triplets* P,
                                  const double* b, double* x, double tol, int maxit, int* iters, kn_error* err);

#endif
