/* The Newton matrix of a later SAP iteration from the factor of an earlier one (digest §4.6).
 *
 * Between Newton iterations only G changes, and only where a constraint slides or changes mode:
 * a sticking contact's G is R^-1 and a separated one's 0, bit for bit, at every iteration. With
 * H_ref = A + J^T G_ref J = L L^T factored, and V the constraints whose G has left G_ref since,
 *   H = H_ref + J_V^T D J_V,  D = blockdiag(G_i - G_ref,i),
 * and with U = L^-1 J_V^T, W = U^T U, the Woodbury identity gives H^-1 exactly:
 *   H^-1 b = L^-T (y - U (I + D W)^-1 D U^T y),  y = L^-1 b.
 * U's columns are solved once, when a constraint joins V (one BLAS3 solve for all that join at an
 * iteration), W grows by their products, and each iteration factors the r x r matrix I + D W
 * (LU: D is indefinite when a contact leaves the active set). det H = det H_ref det(I + D W), so
 * I + D W is invertible whenever H is positive definite. With CHOLMOD's H_ref = P^T L L^T P (a
 * fill-reducing permutation P), U = L^-1 P J_V^T and the last solve is P^T L^-T: the factor is
 * reached only through sap/linear_solver.c's two half solves.
 *
 * The solver (sap/solver_direction.c) takes this as the preconditioner of its CG, which then
 * converges in one product up to round-off, and refactors H when V passes its row budget.
 * Everything runs on one thread in a fixed order: bitwise reproducible. */
#include <cblas.h>
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "sap/sap_internal.h"

struct kn_sap_lowrank {
  int n, cap_con;
  int* member_of; /* per constraint: its index in the set, or -1 */
  /* the set: per member its constraint, rows and first row */
  int nmem;
  int *con, *mrows, *row0;
  /* r rows in all; the first `solved` columns of U are L^-1 J^T, the rest still J^T */
  int r, solved, cap_r;
  double* U;   /* column k at U + k n */
  double* W;   /* U^T U, column-major with leading dimension cap_r */
  double* M;   /* LU of I + D W, r x r row-major: LAPACK's column-major LU of (I + D W)^T */
  int* ipiv;
  double* t;   /* r */
};

kn_sap_lowrank* kn_sap_lowrank_create(void) { return calloc(1, sizeof(kn_sap_lowrank)); }

void kn_sap_lowrank_free(kn_sap_lowrank* lr) {
  if (!lr) return;
  free(lr->member_of);
  free(lr->con);
  free(lr->mrows);
  free(lr->row0);
  free(lr->U);
  free(lr->W);
  free(lr->M);
  free(lr->ipiv);
  free(lr->t);
  free(lr);
}

static kn_status grow(void** p, size_t bytes, kn_error* err) {
  void* q = realloc(*p, bytes ? bytes : 1);
  if (!q) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory (low-rank update, %zu bytes)", bytes);
  *p = q;
  return KN_OK;
}

kn_status kn_sap_lowrank_reset(kn_sap_lowrank* lr, int n, int num_constraints, int max_rows, kn_error* err) {
  kn_status st;
  if (num_constraints > lr->cap_con || !lr->member_of) {
    if ((st = grow((void**)&lr->member_of, (size_t)num_constraints * sizeof(int), err))) return st;
    lr->cap_con = num_constraints;
  }
  if (max_rows != lr->cap_r || n != lr->n || !lr->U) {
    size_t cr = (size_t)max_rows;
    if ((st = grow((void**)&lr->U, cr * (size_t)n * sizeof(double), err)) ||
        (st = grow((void**)&lr->W, cr * cr * sizeof(double), err)) ||
        (st = grow((void**)&lr->M, cr * cr * sizeof(double), err)) ||
        (st = grow((void**)&lr->ipiv, cr * sizeof(int), err)) ||
        (st = grow((void**)&lr->t, cr * sizeof(double), err)) || (st = grow((void**)&lr->con, cr * sizeof(int), err)) ||
        (st = grow((void**)&lr->mrows, cr * sizeof(int), err)) ||
        (st = grow((void**)&lr->row0, cr * sizeof(int), err)))
      return st;
    lr->cap_r = max_rows;
  }
  lr->n = n;
  for (int i = 0; i < num_constraints; i++) lr->member_of[i] = -1;
  lr->nmem = lr->r = lr->solved = 0;
  return KN_OK;
}

int kn_sap_lowrank_rows(const kn_sap_lowrank* lr) { return lr->r; }

int kn_sap_lowrank_capacity(const kn_sap_lowrank* lr) { return lr->cap_r; }

int kn_sap_lowrank_has(const kn_sap_lowrank* lr, int constraint) { return lr->member_of[constraint] >= 0; }

double* kn_sap_lowrank_add(kn_sap_lowrank* lr, int constraint, int rows) {
  if (lr->r + rows > lr->cap_r || lr->member_of[constraint] >= 0) return NULL;
  int m = lr->nmem++;
  lr->member_of[constraint] = m;
  lr->con[m] = constraint;
  lr->mrows[m] = rows;
  lr->row0[m] = lr->r;
  double* cols = lr->U + (size_t)lr->r * (size_t)lr->n;
  memset(cols, 0, (size_t)rows * (size_t)lr->n * sizeof(double));
  lr->r += rows;
  return cols;
}

/* the new columns of U (J^T, filled by the caller) => L^-1 P J^T, and W's new rows and columns */
static kn_status solve_new(kn_sap_lowrank* lr, kn_sap_linsolve* L, kn_error* err) {
  int n = lr->n, k0 = lr->solved, knew = lr->r - k0, r = lr->r, ld = lr->cap_r;
  if (knew == 0) return KN_OK;
  double* Unew = lr->U + (size_t)k0 * (size_t)n;
  kn_status st = kn_sap_linsolve_forward(L, Unew, knew, err);
  if (st) return st;
  /* W[:, k0:r] = U^T U_new (column-major, leading dimension cap_r), then the mirror rows */
  cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, r, knew, n, 1.0, lr->U, n, Unew, n, 0.0,
              lr->W + (size_t)k0 * (size_t)ld, ld);
  for (int b = k0; b < r; b++)
    for (int a = 0; a < k0; a++) lr->W[(size_t)a * ld + b] = lr->W[(size_t)b * ld + a];
  lr->solved = r;
  return KN_OK;
}

kn_status kn_sap_lowrank_factor(kn_sap_lowrank* lr, kn_sap_linsolve* L, const double* G, const double* G_ref, int slot,
                                kn_error* err) {
  kn_status st = solve_new(lr, L, err);
  if (st) return st;
  int r = lr->r, ld = lr->cap_r;
  if (r == 0) return KN_OK;
  /* M = I + D W row by row, D block diagonal by member; W is symmetric, so its row a is column a */
  for (int m = 0; m < lr->nmem; m++) {
    int rows = lr->mrows[m], a0 = lr->row0[m];
    const double* g = G + (size_t)slot * (size_t)lr->con[m];
    const double* g0 = G_ref + (size_t)slot * (size_t)lr->con[m];
    for (int i = 0; i < rows; i++) {
      double* Mi = lr->M + (size_t)(a0 + i) * (size_t)r;
      for (int b = 0; b < r; b++) Mi[b] = 0;
      Mi[a0 + i] = 1;
      for (int j = 0; j < rows; j++) {
        double d = g[i * rows + j] - g0[i * rows + j];
        if (d == 0) continue;
        const double* Wj = lr->W + (size_t)(a0 + j) * (size_t)ld;
        for (int b = 0; b < r; b++) Mi[b] += d * Wj[b];
      }
    }
  }
  lapack_int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, r, r, lr->M, r, lr->ipiv);
  if (info != 0)
    return kn_fail(err, KN_ERR_NUMERIC, "sap: the low-rank update's %d x %d matrix I + D W is singular (info %d)", r, r,
                   (int)info);
  return KN_OK;
}

kn_status kn_sap_lowrank_solve(const kn_sap_lowrank* lr, kn_sap_linsolve* L, const double* G, const double* G_ref,
                               int slot, double* b, kn_error* err) {
  int n = lr->n, r = lr->r;
  kn_status st = kn_sap_linsolve_forward(L, b, 1, err); /* y = L^-1 P b */
  if (st) return st;
  if (r > 0) {
    double* t = lr->t;
    cblas_dgemv(CblasColMajor, CblasTrans, n, r, 1.0, lr->U, n, b, 1, 0.0, t, 1); /* U^T y */
    for (int m = 0; m < lr->nmem; m++) {                                           /* D U^T y */
      int rows = lr->mrows[m], a0 = lr->row0[m];
      const double* g = G + (size_t)slot * (size_t)lr->con[m];
      const double* g0 = G_ref + (size_t)slot * (size_t)lr->con[m];
      double u[KN_SAP_MAX_ROWS];
      for (int i = 0; i < rows; i++) {
        double sum = 0;
        for (int j = 0; j < rows; j++) sum += (g[i * rows + j] - g0[i * rows + j]) * t[a0 + j];
        u[i] = sum;
      }
      memcpy(t + a0, u, (size_t)rows * sizeof(double));
    }
    LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'T', r, 1, lr->M, r, lr->ipiv, t, r); /* (M^T)^T u = t */
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, r, -1.0, lr->U, n, t, 1, 1.0, b, 1); /* y - U u */
  }
  return kn_sap_linsolve_backward(L, b, err); /* P^T L^-T */
}
