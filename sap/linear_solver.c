/* The Newton system H dv = -grad (digest §4.6) behind one small interface: dense Cholesky over
 * LAPACKE for small problems, CHOLMOD supernodal Cholesky for large ones. H is given in clique
 * blocks; the CHOLMOD symbolic analysis is kept and reused while the block pattern (block sizes
 * and coupled pairs) is unchanged, and only the numeric factorization is redone per iteration. */
#include <cholmod.h>
#include <stdlib.h>
#include <string.h>

#include "sap/sap_internal.h"

struct kn_sap_linsolve {
  int sparse;
  /* the block pattern, copied */
  int num_blocks, n, num_pairs;
  int *size, *offset, *pair;
  int cap_blocks, cap_pairs;
  /* dense path */
  double* H;
  size_t cap_H;
  /* sparse blocks' patterns, copied: per block its start in pat (-1: dense), colptr then rowidx */
  int* pat_at;
  int* pat;
  size_t num_pat, cap_pat;
  /* sparse path: per block, the list of partner blocks b > c with their pair index */
  int* partner_start; /* num_blocks + 1 */
  int* partner;       /* (block, pair) */
  int cholmod_started;
  cholmod_common cc;
  cholmod_sparse* A;
  cholmod_factor* L;
  kn_chol_permuted perm; /* A's entries in L's permuted order: factorizations skip CHOLMOD's transposes */
  cholmod_dense *B, *X, *Y, *E;
  cholmod_dense* W; /* the half solves' output (n x columns) */
  double flops;     /* of one numeric factorization (CHOLMOD's analysis; n^3 / 3 dense) */
};

kn_sap_linsolve* kn_sap_linsolve_create(void) {
  return calloc(1, sizeof(kn_sap_linsolve));
}

static void free_sparse(kn_sap_linsolve* ls) {
  if (!ls->cholmod_started) return;
  cholmod_free_sparse(&ls->A, &ls->cc);
  cholmod_free_factor(&ls->L, &ls->cc);
  kn_chol_permuted_free(&ls->perm, &ls->cc);
  cholmod_free_dense(&ls->B, &ls->cc);
  cholmod_free_dense(&ls->X, &ls->cc);
  cholmod_free_dense(&ls->Y, &ls->cc);
  cholmod_free_dense(&ls->E, &ls->cc);
  cholmod_free_dense(&ls->W, &ls->cc);
}

void kn_sap_linsolve_free(kn_sap_linsolve* ls) {
  if (!ls) return;
  free_sparse(ls);
  if (ls->cholmod_started) cholmod_finish(&ls->cc);
  free(ls->size);
  free(ls->offset);
  free(ls->pair);
  free(ls->partner_start);
  free(ls->partner);
  free(ls->pat_at);
  free(ls->pat);
  free(ls->H);
  free(ls);
}

static int is_sparse_block(const kn_sap_layout* lay, int c) { return lay->colptr && lay->colptr[c]; }

/* 1 when layout equals the pattern the current analysis was made for */
static int same_pattern(const kn_sap_linsolve* ls, const kn_sap_layout* lay) {
  if (!ls->L || ls->num_blocks != lay->num_blocks || ls->num_pairs != lay->num_pairs) return 0;
  if (memcmp(ls->size, lay->size, (size_t)lay->num_blocks * sizeof(int))) return 0;
  for (int c = 0; c < lay->num_blocks; c++) {
    int sp = is_sparse_block(lay, c);
    if (sp != (ls->pat_at[c] >= 0)) return 0;
    if (!sp) continue;
    const int* mine = ls->pat + ls->pat_at[c];
    int nc = lay->size[c];
    if (memcmp(mine, lay->colptr[c], (size_t)(nc + 1) * sizeof(int)) ||
        memcmp(mine + nc + 1, lay->rowidx[c], (size_t)lay->colptr[c][nc] * sizeof(int)))
      return 0;
  }
  /* no pairs: nothing to compare (memcmp of a NULL pointer is undefined even for 0 bytes) */
  return lay->num_pairs == 0 || !memcmp(ls->pair, lay->pair, 2 * (size_t)lay->num_pairs * sizeof(int));
}

static kn_status copy_layout(kn_sap_linsolve* ls, const kn_sap_layout* lay, kn_error* err) {
  if (lay->num_blocks > ls->cap_blocks) {
    int cap = lay->num_blocks;
    int* a = realloc(ls->size, (size_t)cap * sizeof(int));
    if (a) ls->size = a;
    int* b = realloc(ls->offset, (size_t)cap * sizeof(int));
    if (b) ls->offset = b;
    int* c = realloc(ls->partner_start, (size_t)(cap + 1) * sizeof(int));
    if (c) ls->partner_start = c;
    int* d = realloc(ls->pat_at, (size_t)cap * sizeof(int));
    if (d) ls->pat_at = d;
    if (!a || !b || !c || !d) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory (linear solver layout)");
    ls->cap_blocks = cap;
  }
  if (lay->num_pairs > ls->cap_pairs) {
    int cap = lay->num_pairs;
    int* a = realloc(ls->pair, 2 * (size_t)cap * sizeof(int));
    if (a) ls->pair = a;
    int* b = realloc(ls->partner, 2 * (size_t)cap * sizeof(int));
    if (b) ls->partner = b;
    if (!a || !b) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory (linear solver layout)");
    ls->cap_pairs = cap;
  }
  size_t npat = 0;
  for (int c = 0; c < lay->num_blocks; c++)
    if (is_sparse_block(lay, c)) npat += (size_t)lay->size[c] + 1 + (size_t)lay->colptr[c][lay->size[c]];
  if (npat > ls->cap_pat) {
    int* a = realloc(ls->pat, npat * sizeof(int));
    if (!a) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory (linear solver layout)");
    ls->pat = a;
    ls->cap_pat = npat;
  }
  ls->num_pat = 0;
  for (int c = 0; c < lay->num_blocks; c++) {
    ls->pat_at[c] = -1;
    if (!is_sparse_block(lay, c)) continue;
    int nc = lay->size[c], nnz = lay->colptr[c][nc];
    ls->pat_at[c] = (int)ls->num_pat;
    memcpy(ls->pat + ls->num_pat, lay->colptr[c], (size_t)(nc + 1) * sizeof(int));
    memcpy(ls->pat + ls->num_pat + nc + 1, lay->rowidx[c], (size_t)nnz * sizeof(int));
    ls->num_pat += (size_t)(nc + 1 + nnz);
  }
  ls->num_blocks = lay->num_blocks;
  ls->n = lay->n;
  ls->num_pairs = lay->num_pairs;
  memcpy(ls->size, lay->size, (size_t)lay->num_blocks * sizeof(int));
  memcpy(ls->offset, lay->offset, (size_t)lay->num_blocks * sizeof(int));
  if (lay->num_pairs) memcpy(ls->pair, lay->pair, 2 * (size_t)lay->num_pairs * sizeof(int));
  /* partners of block c: blocks b > c, ascending, so that the row indices of a column come sorted */
  for (int c = 0; c <= ls->num_blocks; c++) ls->partner_start[c] = 0;
  for (int k = 0; k < ls->num_pairs; k++) ls->partner_start[ls->pair[2 * k] + 1]++;
  for (int c = 0; c < ls->num_blocks; c++) ls->partner_start[c + 1] += ls->partner_start[c];
  for (int c = 0; c < ls->num_blocks; c++) {
    int at = ls->partner_start[c];
    for (int k = 0; k < ls->num_pairs; k++) {
      if (ls->pair[2 * k] != c) continue;
      int b = ls->pair[2 * k + 1], j = at++;
      /* insertion sort by partner block */
      while (j > ls->partner_start[c] && ls->partner[2 * (j - 1)] > b) {
        ls->partner[2 * j] = ls->partner[2 * (j - 1)];
        ls->partner[2 * j + 1] = ls->partner[2 * (j - 1) + 1];
        j--;
      }
      ls->partner[2 * j] = b;
      ls->partner[2 * j + 1] = k;
    }
  }
  return KN_OK;
}

//---- prepare: choose the path, (re)do the symbolic analysis when the pattern changed ----

kn_status kn_sap_linsolve_prepare(kn_sap_linsolve* ls, const kn_sap_layout* lay, int sparse, int* analysed,
                                  kn_error* err) {
  *analysed = 0;
  ls->sparse = sparse;
  if (!sparse) {
    /* the dense path overwrites the stored pattern: drop an analysis made for another one */
    if (!same_pattern(ls, lay)) free_sparse(ls);
    kn_status st = copy_layout(ls, lay, err);
    if (st) return st;
    size_t need = (size_t)lay->n * (size_t)lay->n;
    if (need > ls->cap_H) {
      double* H = realloc(ls->H, need * sizeof(double));
      if (!H) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory (dense Hessian %d x %d)", lay->n, lay->n);
      ls->H = H;
      ls->cap_H = need;
    }
    return KN_OK;
  }
  if (same_pattern(ls, lay)) {
    memcpy(ls->offset, lay->offset, (size_t)lay->num_blocks * sizeof(int));
    return KN_OK;
  }
  kn_status st = copy_layout(ls, lay, err);
  if (st) return st;
  if (!ls->cholmod_started) {
    kn_chol_start(&ls->cc);
    ls->cholmod_started = 1;
  }
  free_sparse(ls);
  /* lower triangle, column-compressed: column j of block c holds rows i >= j of block c, then
   * every row of each partner block b > c */
  size_t nnz = 0;
  for (int c = 0; c < ls->num_blocks; c++) {
    size_t nc = (size_t)ls->size[c];
    nnz += ls->pat_at[c] >= 0 ? (size_t)ls->pat[ls->pat_at[c] + (int)nc] : nc * (nc + 1) / 2;
    for (int k = ls->partner_start[c]; k < ls->partner_start[c + 1]; k++)
      nnz += nc * (size_t)ls->size[ls->partner[2 * k]];
  }
  ls->A = cholmod_allocate_sparse((size_t)ls->n, (size_t)ls->n, nnz, 1, 1, -1, CHOLMOD_REAL, &ls->cc);
  ls->B = cholmod_allocate_dense((size_t)ls->n, 1, (size_t)ls->n, CHOLMOD_REAL, &ls->cc);
  if (!ls->A || !ls->B) return kn_fail(err, KN_ERR_NOMEM, "sap: CHOLMOD could not allocate a %d x %d matrix", ls->n, ls->n);
  int* Ap = ls->A->p;
  int* Ai = ls->A->i;
  int at = 0;
  for (int c = 0; c < ls->num_blocks; c++) {
    int nc = ls->size[c], oc = ls->offset[c];
    const int* cp = ls->pat_at[c] >= 0 ? ls->pat + ls->pat_at[c] : NULL;
    for (int jl = 0; jl < nc; jl++) {
      Ap[oc + jl] = at;
      if (cp)
        for (int z = cp[jl]; z < cp[jl + 1]; z++) Ai[at++] = oc + cp[nc + 1 + z];
      else
        for (int il = jl; il < nc; il++) Ai[at++] = oc + il;
      for (int k = ls->partner_start[c]; k < ls->partner_start[c + 1]; k++) {
        int b = ls->partner[2 * k];
        for (int ib = 0; ib < ls->size[b]; ib++) Ai[at++] = ls->offset[b] + ib;
      }
    }
  }
  Ap[ls->n] = at;
  /* the fill-reducing ordering (kn_chol_analyze): the blocks' own order with the sparse blocks (an
   * MPM grid, in its banded node order) first and the dense ones (robots, which couple to many grid
   * DoFs) last, so that eliminating them fills nothing; AMD when that fills much */
  int* order = malloc((size_t)ls->n * sizeof(int) + 1);
  if (!order) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory (ordering of %d DoFs)", ls->n);
  int k = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int c = 0; c < ls->num_blocks; c++)
      if ((ls->pat_at[c] >= 0) == (pass == 0))
        for (int i = 0; i < ls->size[c]; i++) order[k++] = ls->offset[c] + i;
  ls->L = kn_chol_analyze(ls->A, order, &ls->cc);
  free(order);
  if (!ls->L || ls->cc.status < CHOLMOD_OK)
    return kn_fail(err, KN_ERR_NUMERIC, "sap: CHOLMOD symbolic analysis failed (status %d) on a %d x %d Hessian",
                   ls->cc.status, ls->n, ls->n);
  st = kn_chol_permuted_prepare(&ls->perm, ls->A, ls->L, &ls->cc, err);
  if (st) return st;
  ls->flops = ls->cc.fl;
  *analysed = 1;
  return KN_OK;
}

double kn_sap_linsolve_flops(const kn_sap_linsolve* ls) {
  return ls->sparse ? ls->flops : (double)ls->n * ls->n * ls->n / 3.0;
}

//---- numeric factorization ----

kn_status kn_sap_linsolve_factor(kn_sap_linsolve* ls, double* const* diag, double* const* off, kn_error* err) {
  int n = ls->n;
  if (!ls->sparse) {
    /* the lower triangle only: the diagonal blocks come with only theirs (solver.c), and
     * kn_chol_factor reads nothing else (it mirrors it for LAPACK); the rest stays 0 */
    double* H = ls->H;
    memset(H, 0, (size_t)n * (size_t)n * sizeof(double));
    for (int c = 0; c < ls->num_blocks; c++) {
      int nc = ls->size[c], oc = ls->offset[c];
      if (ls->pat_at[c] >= 0) { /* a sparse block: its lower-triangle columns scattered */
        const int* cp = ls->pat + ls->pat_at[c];
        for (int j = 0; j < nc; j++)
          for (int z = cp[j]; z < cp[j + 1]; z++) H[(size_t)(oc + cp[nc + 1 + z]) * (size_t)n + (size_t)(oc + j)] = diag[c][z];
        continue;
      }
      for (int i = 0; i < nc; i++)
        memcpy(H + (size_t)(oc + i) * (size_t)n + oc, diag[c] + (size_t)i * (size_t)nc, (size_t)(i + 1) * sizeof(double));
    }
    for (int k = 0; k < ls->num_pairs; k++) {
      int a = ls->pair[2 * k], b = ls->pair[2 * k + 1];
      int na = ls->size[a], nb = ls->size[b], oa = ls->offset[a], ob = ls->offset[b];
      /* a < b: block (b, a) of the lower triangle is off[k]^T */
      for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++) H[(size_t)(ob + j) * (size_t)n + (size_t)(oa + i)] = off[k][i * nb + j];
    }
    return kn_chol_factor(H, n, err);
  }
  double* Ax = ls->A->x;
  int at = 0;
  for (int c = 0; c < ls->num_blocks; c++) {
    int nc = ls->size[c];
    const int* cp = ls->pat_at[c] >= 0 ? ls->pat + ls->pat_at[c] : NULL;
    for (int jl = 0; jl < nc; jl++) {
      if (cp) {
        memcpy(Ax + at, diag[c] + cp[jl], (size_t)(cp[jl + 1] - cp[jl]) * sizeof(double));
        at += cp[jl + 1] - cp[jl];
      } else {
        for (int il = jl; il < nc; il++) Ax[at++] = diag[c][il * nc + jl];
      }
      for (int k = ls->partner_start[c]; k < ls->partner_start[c + 1]; k++) {
        int b = ls->partner[2 * k], pk = ls->partner[2 * k + 1], nb = ls->size[b];
        /* H(row ib of b, column jl of c) = off[pk][jl][ib] since off is n_c x n_b (c < b) */
        for (int ib = 0; ib < nb; ib++) Ax[at++] = off[pk][jl * nb + ib];
      }
    }
  }
  if (!kn_chol_permuted_factor(&ls->perm, ls->A, ls->L, &ls->cc) || ls->cc.status != CHOLMOD_OK || ls->L->minor < ls->L->n)
    return kn_fail(err, KN_ERR_NUMERIC,
                   "sap: CHOLMOD factorization failed (status %d, minor %d) on a %d x %d Hessian: not positive "
                   "definite",
                   ls->cc.status, (int)ls->L->minor, n, n);
  return KN_OK;
}

//---- solve ----

kn_status kn_sap_linsolve_solve(kn_sap_linsolve* ls, double* b, kn_error* err) {
  int n = ls->n;
  if (!ls->sparse) {
    kn_chol_solve(ls->H, n, b, 1);
    return KN_OK;
  }
  memcpy(ls->B->x, b, (size_t)n * sizeof(double));
  if (!cholmod_solve2(CHOLMOD_A, ls->L, ls->B, NULL, &ls->X, NULL, &ls->Y, &ls->E, &ls->cc))
    return kn_fail(err, KN_ERR_NUMERIC, "sap: CHOLMOD solve failed (status %d)", ls->cc.status);
  memcpy(b, ls->X->x, (size_t)n * sizeof(double));
  return KN_OK;
}

/* B (n x ncols, column-major) => one stage of CHOLMOD's solve (CHOLMOD_P, _L, _Lt, _Pt) in place */
static kn_status cholmod_stage(kn_sap_linsolve* ls, int sys, double* B, int ncols, kn_error* err) {
  cholmod_dense b = {.nrow = (size_t)ls->n, .ncol = (size_t)ncols, .nzmax = (size_t)ls->n * (size_t)ncols,
                     .d = (size_t)ls->n, .x = B, .xtype = CHOLMOD_REAL, .dtype = CHOLMOD_DOUBLE};
  if (!cholmod_solve2(sys, ls->L, &b, NULL, &ls->W, NULL, &ls->Y, &ls->E, &ls->cc))
    return kn_fail(err, KN_ERR_NUMERIC, "sap: CHOLMOD solve failed (status %d)", ls->cc.status);
  memcpy(B, ls->W->x, (size_t)ls->n * (size_t)ncols * sizeof(double));
  return KN_OK;
}

kn_status kn_sap_linsolve_forward(kn_sap_linsolve* ls, double* B, int ncols, kn_error* err) {
  if (!ls->sparse) {
    kn_chol_lower_solve(ls->H, ls->n, B, ncols);
    return KN_OK;
  }
  kn_status st = cholmod_stage(ls, CHOLMOD_P, B, ncols, err);
  return st ? st : cholmod_stage(ls, CHOLMOD_L, B, ncols, err);
}

kn_status kn_sap_linsolve_backward(kn_sap_linsolve* ls, double* b, kn_error* err) {
  if (!ls->sparse) {
    kn_chol_lower_solve_T(ls->H, ls->n, b);
    return KN_OK;
  }
  kn_status st = cholmod_stage(ls, CHOLMOD_Lt, b, 1, err);
  return st ? st : cholmod_stage(ls, CHOLMOD_Pt, b, 1, err);
}

