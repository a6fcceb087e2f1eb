/* knead/deformable — Schur complement of an FEM body's dynamics matrix on the DoFs that take part
 * in constraints (digest 6.2), and the recovery of the others after SAP.
 *
 * Split the free DoFs into participating P and the rest N. With X = A^-1 E_P (the |P| columns of
 * A^-1 at P), the block inverse formula gives
 *   X_PP = (A^-1)_PP = S^-1,            S = A_PP - A_PN A_NN^-1 A_NP,
 *   X_NP = (A^-1)_NP = -A_NN^-1 A_NP S^-1.
 * So S = (X_PP)^-1, and the recovery Dv_N = -A_NN^-1 A_NP Dv_P is Dv_N = X_NP S Dv_P, while the P
 * rows of X S Dv_P give X_PP S Dv_P = Dv_P: Dv = A^-1 E_P (S Dv_P), one solve.
 *
 * Only X_PP is formed. With CHOLMOD's L L^T = Q A Q^T (Q its fill-reducing permutation),
 * X_PP = (Q E_P)^T L^-T L^-1 (Q E_P) = Y^T Y, Y = L^-1 Q E_P. Column k of Y is non-zero only on
 * the elimination-tree path from row Q P[k] to the root, so the forward solve runs supernode by
 * supernode over those paths only: each supernode s keeps a dense block of the Y rows of its
 * columns for the right-hand sides whose path crosses it. Sorting the right-hand sides by the
 * postorder rank of their first supernode makes that set a contiguous range (a subtree is a
 * contiguous range of a postorder), so blocks update their ancestors by plain BLAS and strided
 * row copies, and X_PP accumulates as sum_s Y_s^T Y_s (dsyrk). */
#include <cblas.h>
#include <cholmod.h>
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "deformable/deformable.h"

/* right-hand sides per dense solve when the factor is simplicial (fallback path) */
#define SCHUR_CHUNK 32

typedef struct {
  void* p;
  size_t cap;
} buffer;

/* => p with room for `bytes` (contents not kept), NULL on out-of-memory */
static void* need(buffer* b, size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes > b->cap) {
    free(b->p);
    b->p = malloc(bytes);
    b->cap = b->p ? bytes : 0;
  }
  return b->p;
}

enum { W_SUP_OF, W_PINV, W_PARENT, W_HEAD, W_NEXT, W_POST, W_RANK, W_FIRST, W_COUNT, W_POS, W_LO, W_OFF, W_BLOCK,
       W_U, W_XS, W_N };

struct kn_fem_schur {
  cholmod_common cc;
  cholmod_factor* own;   /* kn_fem_schur_complement's own factor of A */
  kn_chol_permuted perm; /* A's entries in own's permuted order (common/sparse_chol.c) */
  int n_an, nnz;         /* pattern of the analysed matrix */
  int *Ap, *Ai;          /* copy of the analysed pattern, to notice a change */
  const cholmod_factor* L; /* the factor in use (own or the caller's), for the recovery */
  int n, np;
  int direct;            /* the last S came from the direct route */
  int* P;                /* np */
  double* S;             /* np x np row-major */
  double* y;             /* np */
  size_t cap_np;
  cholmod_dense *B, *X, *Y, *E; /* recovery right-hand side, solution and cholmod_solve2 workspaces */
  buffer w[W_N];
};

kn_fem_schur* kn_fem_schur_create(void) {
  kn_fem_schur* s = kn_calloc(1, sizeof *s);
  if (!s) return NULL;
  kn_chol_start(&s->cc);
  return s;
}

void kn_fem_schur_free(kn_fem_schur* s) {
  if (!s) return;
  if (s->own) cholmod_free_factor(&s->own, &s->cc);
  kn_chol_permuted_free(&s->perm, &s->cc);
  cholmod_free_dense(&s->B, &s->cc);
  cholmod_free_dense(&s->X, &s->cc);
  cholmod_free_dense(&s->Y, &s->cc);
  cholmod_free_dense(&s->E, &s->cc);
  cholmod_finish(&s->cc);
  for (int k = 0; k < W_N; k++) free(s->w[k].p);
  free(s->Ap);
  free(s->Ai);
  free(s->P);
  free(s->S);
  free(s->y);
  free(s);
}

//---- X_PP = Y^T Y, supernodal L ----

/* (supernodal L L^T, P sorted, np) => Xpp = (A^-1)_PP, np x np row-major, exactly symmetric */
static kn_status xpp_supernodal(kn_fem_schur* s, const cholmod_factor* L, const int* P, int np, double* Xpp,
                                kn_error* err) {
  int n = (int)L->n, ns = (int)L->nsuper;
  const int *Super = L->super, *Lpi = L->pi, *Lpx = L->px, *Ls = L->s, *Perm = L->Perm;
  const double* Lx = L->x;
  int* sup_of = need(&s->w[W_SUP_OF], (size_t)n * sizeof(int));
  int* pinv = need(&s->w[W_PINV], (size_t)n * sizeof(int));
  int* parent = need(&s->w[W_PARENT], (size_t)ns * sizeof(int));
  int* head = need(&s->w[W_HEAD], (size_t)ns * sizeof(int));
  int* next = need(&s->w[W_NEXT], (size_t)ns * sizeof(int));
  int* post = need(&s->w[W_POST], (size_t)ns * sizeof(int));
  int* rank = need(&s->w[W_RANK], (size_t)ns * sizeof(int));
  int* first = need(&s->w[W_FIRST], (size_t)ns * sizeof(int));
  int* count = need(&s->w[W_COUNT], ((size_t)ns + 1) * sizeof(int));
  int* pos = need(&s->w[W_POS], (size_t)np * sizeof(int));
  int* lo = need(&s->w[W_LO], (size_t)ns * sizeof(int));
  size_t* off = need(&s->w[W_OFF], ((size_t)ns + 1) * sizeof(size_t));
  double* Xs = need(&s->w[W_XS], (size_t)np * (size_t)np * sizeof(double));
  if (!sup_of || !pinv || !parent || !head || !next || !post || !rank || !first || !count || !pos || !lo || !off || !Xs)
    return kn_fail(err, KN_ERR_NOMEM, "schur: out of memory");
  for (int t = 0; t < ns; t++)
    for (int k = Super[t]; k < Super[t + 1]; k++) sup_of[k] = t;
  for (int k = 0; k < n; k++) pinv[Perm ? Perm[k] : k] = k;
  /* supernodal elimination tree: the parent holds the smallest row below the diagonal block */
  for (int t = 0; t < ns; t++) {
    int nscol = Super[t + 1] - Super[t], r = n;
    for (int p = Lpi[t] + nscol; p < Lpi[t + 1]; p++)
      if (Ls[p] < r) r = Ls[p];
    parent[t] = r < n ? sup_of[r] : -1;
    head[t] = -1;
  }
  for (int t = ns - 1; t >= 0; t--)
    if (parent[t] >= 0) next[t] = head[parent[t]], head[parent[t]] = t;
  /* postorder by an explicit stack (post[] doubles as the stack of the depth-first search) */
  int npost = 0;
  for (int root = 0; root < ns; root++) {
    if (parent[root] >= 0) continue;
    int top = 0;
    count[top] = root;
    while (top >= 0) {
      int t = count[top], c = head[t];
      if (c >= 0) {
        head[t] = next[c]; /* consume the child */
        count[++top] = c;
      } else {
        top--;
        rank[t] = npost;
        post[npost++] = t;
      }
    }
  }
  for (int t = 0; t < ns; t++) first[t] = rank[t];
  for (int k = 0; k < ns; k++) {
    int t = post[k];
    if (parent[t] >= 0 && first[t] < first[parent[t]]) first[parent[t]] = first[t];
  }
  /* right-hand sides sorted by the rank of their first supernode (counting sort) */
  memset(count, 0, ((size_t)ns + 1) * sizeof(int));
  for (int k = 0; k < np; k++) count[rank[sup_of[pinv[P[k]]]] + 1]++;
  for (int r = 0; r < ns; r++) count[r + 1] += count[r];
  int* fill = head; /* reuse: insertion cursor per rank */
  memcpy(fill, count, (size_t)ns * sizeof(int));
  for (int k = 0; k < np; k++) pos[k] = fill[rank[sup_of[pinv[P[k]]]]]++;
  /* supernode t's right-hand sides: sorted positions [count[first[t]], count[rank[t] + 1]) */
  off[0] = 0;
  for (int t = 0; t < ns; t++) {
    lo[t] = count[first[t]];
    off[t + 1] = off[t] + (size_t)(Super[t + 1] - Super[t]) * (size_t)(count[rank[t] + 1] - lo[t]);
  }
  size_t ublock = 0;
  for (int t = 0; t < ns; t++) {
    size_t m = (size_t)(count[rank[t] + 1] - lo[t]), nb = (size_t)(Lpi[t + 1] - Lpi[t] - (Super[t + 1] - Super[t]));
    if (m * nb > ublock) ublock = m * nb;
  }
  double* Bk = need(&s->w[W_BLOCK], off[ns] * sizeof(double));
  double* U = need(&s->w[W_U], ublock * sizeof(double));
  if (!Bk || !U) return kn_fail(err, KN_ERR_NOMEM, "schur: out of memory for %zu doubles of L^-1 E_P", off[ns]);
  memset(Bk, 0, off[ns] * sizeof(double));
  memset(Xs, 0, (size_t)np * (size_t)np * sizeof(double));
  for (int k = 0; k < np; k++) {
    int row = pinv[P[k]], t = sup_of[row], nscol = Super[t + 1] - Super[t];
    Bk[off[t] + (size_t)(row - Super[t]) + (size_t)(pos[k] - lo[t]) * (size_t)nscol] = 1.0;
  }
  /* forward solve, children before parents (a supernode's parent has a larger index) */
  for (int t = 0; t < ns; t++) {
    int m = count[rank[t] + 1] - lo[t];
    if (m == 0) continue;
    int nscol = Super[t + 1] - Super[t], nsrow = Lpi[t + 1] - Lpi[t], nb = nsrow - nscol;
    const double* Lt = Lx + Lpx[t];
    double* Bt = Bk + off[t];
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, nscol, m, 1.0, Lt, nsrow, Bt, nscol);
    /* X_PP += Y_t^T Y_t on this supernode's rows (upper triangle, column-major) */
    cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, m, nscol, 1.0, Bt, nscol, 1.0, Xs + (size_t)lo[t] * np + lo[t],
                np);
    if (nb == 0) continue;
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nb, m, nscol, 1.0, Lt + nscol, nsrow, Bt, nscol, 0.0, U, nb);
    for (int i = 0; i < nb; i++) {
      int r = Ls[Lpi[t] + nscol + i], a = sup_of[r], lda = Super[a + 1] - Super[a];
      double* dst = Bk + off[a] + (size_t)(r - Super[a]) + (size_t)(lo[t] - lo[a]) * (size_t)lda;
      for (int c = 0; c < m; c++) dst[(size_t)c * lda] -= U[i + (size_t)c * nb];
    }
  }
  /* column-major upper = row-major lower of Xs (sorted order) => Xpp in P order */
  for (int a = 0; a < np; a++)
    for (int b = 0; b < np; b++) {
      int i = pos[a], j = pos[b];
      Xpp[(size_t)a * np + b] = i <= j ? Xs[(size_t)j * np + i] : Xs[(size_t)i * np + j];
    }
  return KN_OK;
}

//---- X_PP by chunks of dense solves (simplicial or LDL^T factor) ----

static kn_status xpp_dense_chunks(kn_fem_schur* s, const cholmod_factor* L, const int* P, int np, double* Xpp,
                                  kn_error* err) {
  int n = (int)L->n;
  double* Bx = need(&s->w[W_BLOCK], (size_t)n * SCHUR_CHUNK * sizeof(double));
  if (!Bx) return kn_fail(err, KN_ERR_NOMEM, "schur: out of memory");
  for (int k0 = 0; k0 < np; k0 += SCHUR_CHUNK) {
    int nc = np - k0 < SCHUR_CHUNK ? np - k0 : SCHUR_CHUNK;
    memset(Bx, 0, (size_t)n * (size_t)nc * sizeof(double));
    for (int c = 0; c < nc; c++) Bx[(size_t)c * n + P[k0 + c]] = 1.0;
    cholmod_dense E = {.nrow = (size_t)n, .ncol = (size_t)nc, .nzmax = (size_t)n * (size_t)nc, .d = (size_t)n,
                       .x = Bx, .xtype = CHOLMOD_REAL, .dtype = CHOLMOD_DOUBLE};
    cholmod_dense* Xd = cholmod_solve(CHOLMOD_A, (cholmod_factor*)L, &E, &s->cc);
    if (!Xd) return kn_fail(err, KN_ERR_NUMERIC, "schur: CHOLMOD solve failed (status %d)", s->cc.status);
    const double* x = Xd->x;
    for (int c = 0; c < nc; c++)
      for (int a = 0; a < np; a++) Xpp[(size_t)a * np + k0 + c] = x[(size_t)c * n + P[a]];
    cholmod_free_dense(&Xd, &s->cc);
  }
  for (int a = 0; a < np; a++)
    for (int b = 0; b < a; b++)
      Xpp[(size_t)a * np + b] = Xpp[(size_t)b * np + a] = 0.5 * (Xpp[(size_t)a * np + b] + Xpp[(size_t)b * np + a]);
  return KN_OK;
}

//---- the direct route: S = A_PP - A_PN A_NN^-1 A_NP with A_NN dense ----

/* Costs in flops, for the choice: the inverse route's dense part alone (Cholesky and inverse of
 * X_PP, ~ np^3) against the direct route's Cholesky of A_NN, triangular solve and rank-update
 * (nN^3 / 3 + nN^2 np + nN np^2). The direct route wins when most DoFs take part, as on an MPM
 * grid where the contact particles' stencils cover the grid (shake: np 1431 of 1554, 20x fewer
 * flops). Bounded so that the dense A_NN stays below 128 MB. */
static int direct_is_cheaper(int n, int np) {
  double nP = np, nN = n - np;
  return nN <= 4096 && nN * nN * nN / 3 + nN * nN * nP + nN * nP * nP < nP * nP * nP;
}

static kn_status schur_direct(kn_fem_schur* s, const cholmod_sparse* A, const int* P, int np, double* S,
                              kn_error* err) {
  int n = (int)A->nrow, nn = n - np;
  int* pos = need(&s->w[W_POS], (size_t)n * sizeof(int));
  double* Ann = need(&s->w[W_BLOCK], (size_t)nn * (size_t)nn * sizeof(double));
  double* Cnp = need(&s->w[W_U], (size_t)nn * (size_t)np * sizeof(double));
  if (!pos || (nn > 0 && (!Ann || !Cnp))) return kn_fail(err, KN_ERR_NOMEM, "schur: out of memory (|N| = %d)", nn);
  /* pos: k >= 0 the index in P, -1 - k the index k in N */
  for (int i = 0, a = 0, r = 0; i < n; i++) pos[i] = a < np && P[a] == i ? a++ : -1 - r++;
  memset(S, 0, (size_t)np * (size_t)np * sizeof *S);
  if (nn > 0) {
    memset(Ann, 0, (size_t)nn * (size_t)nn * sizeof *Ann);
    memset(Cnp, 0, (size_t)nn * (size_t)np * sizeof *Cnp);
  }
  /* the stored triangle (or, unsymmetric storage, its lower half) scattered into A_PP (row-major
   * lower), A_NN (column-major lower) and A_NP (column-major nN x np) */
  const int *Ap = A->p, *Ai = A->i;
  const double* Ax = A->x;
  for (int j = 0; j < n; j++)
    for (int k = Ap[j]; k < Ap[j + 1]; k++) {
      int i = Ai[k];
      if (A->stype > 0 ? i > j : i < j) continue;
      int r = i > j ? i : j, c = i > j ? j : i; /* r >= c */
      int pr = pos[r], pc = pos[c];
      if (pr >= 0 && pc >= 0) S[(size_t)pr * np + pc] = Ax[k];
      else if (pr < 0 && pc < 0) Ann[(size_t)(-1 - pc) * nn + (-1 - pr)] = Ax[k];
      else if (pr < 0) Cnp[(size_t)pc * nn + (-1 - pr)] = Ax[k];
      else Cnp[(size_t)pr * nn + (-1 - pc)] = Ax[k];
    }
  if (nn > 0) {
    lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', nn, Ann, nn);
    if (info != 0) return kn_fail(err, KN_ERR_NUMERIC, "schur: A_NN is not positive definite (info %d)", (int)info);
    /* only the columns of A_NP of P DoFs coupled to N are nonzero (on a grid: the layer of P nodes
     * next to N), and only they change S: C = L_NN^-1 over those k columns, packed to the front,
     * then S_KK -= C^T C (rolling example: k ~ 1/3 of np, the solve and the update 3-9x fewer
     * flops) */
    int* K = need(&s->w[W_LO], (size_t)np * sizeof(int));
    if (!K) return kn_fail(err, KN_ERR_NOMEM, "schur: out of memory (|P| = %d)", np);
    int k = 0;
    for (int a = 0; a < np; a++) {
      const double* col = Cnp + (size_t)a * nn;
      int any = 0;
      for (int r = 0; r < nn && !any; r++) any = col[r] != 0;
      if (!any) continue;
      if (k != a) memcpy(Cnp + (size_t)k * nn, col, (size_t)nn * sizeof(double));
      K[k++] = a;
    }
    double* T = k > 0 ? need(&s->w[W_XS], (size_t)k * (size_t)k * sizeof(double)) : NULL;
    if (k > 0 && !T) return kn_fail(err, KN_ERR_NOMEM, "schur: out of memory (%d coupled DoFs)", k);
    if (k > 0) {
      cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, nn, k, 1.0, Ann, nn, Cnp, nn);
      cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, k, nn, 1.0, Cnp, nn, 0.0, T, k);
      /* T's column-major upper (b <= a) is entry (K[b], K[a]) with K[b] <= K[a]: S's row K[a] */
      for (int a = 0; a < k; a++)
        for (int b = 0; b <= a; b++) S[(size_t)K[a] * np + K[b]] -= T[(size_t)a * k + b];
    }
  }
  for (int a = 0; a < np; a++)
    for (int b = 0; b < a; b++) S[(size_t)b * np + a] = S[(size_t)a * np + b];
  return KN_OK;
}

//---- public ----

static kn_status recovery_buffers(kn_fem_schur* s, const cholmod_factor* L, int n, kn_error* err);

static kn_status check_P(const int* P, int np, int n, kn_error* err) {
  if (np < 0 || np > n) return kn_fail(err, KN_ERR_INVALID, "schur: %d participating DoFs of %d", np, n);
  for (int k = 0; k < np; k++)
    if (P[k] < 0 || P[k] >= n || (k > 0 && P[k] <= P[k - 1]))
      return kn_fail(err, KN_ERR_INVALID, "schur: participating DoF %d (= %d) out of range 0..%d or not increasing",
                     k, P[k], n - 1);
  return KN_OK;
}

// (factor L of A, P) => S (np x np row-major) = ((A^-1)_PP)^-1; L kept for the recovery
kn_status kn_fem_schur_complement_factored(kn_fem_schur* s, const struct cholmod_sparse_struct* Acs,
                                           const struct cholmod_factor_struct* Lcs, const int* P, int np, double* S,
                                           kn_error* err) {
  const cholmod_factor* L = (const cholmod_factor*)Lcs;
  int n = (int)L->n;
  kn_status st = check_P(P, np, n, err);
  if (st) return st;
  if (L->xtype != CHOLMOD_REAL || L->minor < L->n)
    return kn_fail(err, KN_ERR_INVALID, "schur: the factor is not a complete real numeric factorization");
  s->L = L, s->n = n, s->np = np;
  if (np == 0) return KN_OK;
  if ((size_t)np > s->cap_np) {
    free(s->P), free(s->S), free(s->y);
    s->P = malloc((size_t)np * sizeof(int));
    s->S = malloc((size_t)np * (size_t)np * sizeof(double));
    s->y = malloc((size_t)np * sizeof(double));
    s->cap_np = s->P && s->S && s->y ? (size_t)np : 0;
    if (!s->cap_np) return kn_fail(err, KN_ERR_NOMEM, "schur: out of memory for |P| = %d", np);
  }
  memcpy(s->P, P, (size_t)np * sizeof(int));
  if (Acs && direct_is_cheaper(n, np)) {
    const cholmod_sparse* A = (const cholmod_sparse*)Acs;
    if ((int)A->nrow != n || (int)A->ncol != n || A->xtype != CHOLMOD_REAL || A->itype != CHOLMOD_INT || !A->packed)
      return kn_fail(err, KN_ERR_INVALID, "schur: A is not the packed real %d x %d matrix of the factor", n, n);
    st = schur_direct(s, A, P, np, S, err);
    if (st) return st;
    s->direct = 1;
    memcpy(s->S, S, (size_t)np * (size_t)np * sizeof *S);
    return recovery_buffers(s, L, n, err);
  }
  s->direct = 0;
  double* Xpp = s->S;
  /* supernodal factors are L L^T (CHOLMOD has no supernodal LDL^T); others take the general path */
  st = L->is_super && L->is_ll ? xpp_supernodal(s, L, P, np, Xpp, err) : xpp_dense_chunks(s, L, P, np, Xpp, err);
  if (st) return st;
  /* S = (X_PP)^-1 by Cholesky of X_PP */
  st = kn_chol_factor(Xpp, np, err);
  if (st) return kn_error_prefix(err, "schur: (A^-1)_PP: ");
  if (np > 48) {
    /* LAPACK's inverse from the factor (n^3 / 3 flops after the factorization, vs 2 n^3 by solving
     * against the identity): kn_chol_factor's column-major lower factor = row-major upper, mirrored */
    lapack_int info = LAPACKE_dpotri_work(LAPACK_COL_MAJOR, 'L', np, Xpp, np);
    if (info != 0) return kn_fail(err, KN_ERR_NUMERIC, "schur: inverse of (A^-1)_PP failed (info %d)", (int)info);
    for (int a = 0; a < np; a++)
      for (int b = a; b < np; b++) S[(size_t)a * np + b] = S[(size_t)b * np + a] = Xpp[(size_t)a * np + b];
  } else {
    for (int a = 0; a < np; a++)
      for (int b = 0; b < np; b++) S[a * np + b] = a == b ? 1.0 : 0.0;
    kn_chol_solve(Xpp, np, S, np);
    for (int a = 0; a < np; a++)
      for (int b = 0; b < a; b++) S[a * np + b] = S[b * np + a] = 0.5 * (S[a * np + b] + S[b * np + a]);
  }
  memcpy(s->S, S, (size_t)np * (size_t)np * sizeof *S);
  return recovery_buffers(s, L, n, err);
}

/* the recovery's CHOLMOD buffers, allocated here so that kn_fem_schur_recover cannot fail */
static kn_status recovery_buffers(kn_fem_schur* s, const cholmod_factor* L, int n, kn_error* err) {
  if (!s->B || (int)s->B->nrow != n) {
    cholmod_free_dense(&s->B, &s->cc);
    cholmod_free_dense(&s->X, &s->cc);
    s->B = cholmod_zeros((size_t)n, 1, CHOLMOD_REAL, &s->cc);
    if (!s->B) return kn_fail(err, KN_ERR_NOMEM, "schur: out of memory");
  } else {
    memset(s->B->x, 0, (size_t)n * sizeof(double));
  }
  if (!cholmod_solve2(CHOLMOD_A, (cholmod_factor*)L, s->B, NULL, &s->X, NULL, &s->Y, &s->E, &s->cc))
    return kn_fail(err, KN_ERR_NOMEM, "schur: CHOLMOD solve workspace (status %d)", s->cc.status);
  return KN_OK;
}

// (A) => 1 when its pattern equals the analysed one
static int same_pattern(const kn_fem_schur* s, const cholmod_sparse* A) {
  const int* Ap = A->p;
  if (!s->own || (int)A->nrow != s->n_an || Ap[A->ncol] != s->nnz) return 0;
  return memcmp(Ap, s->Ap, ((size_t)s->n_an + 1) * sizeof(int)) == 0 &&
         memcmp(A->i, s->Ai, (size_t)s->nnz * sizeof(int)) == 0;
}

// (A sparse SPD over the free DoFs, P) => S (np x np row-major), with its own factorization of A
kn_status kn_fem_schur_complement(kn_fem_schur* s, const struct cholmod_sparse_struct* Acs, const int* P, int np,
                                  double* S, kn_error* err) {
  cholmod_sparse* A = (cholmod_sparse*)Acs;
  int n = (int)A->nrow;
  kn_status st = check_P(P, np, n, err);
  if (st) return st;
  if (np == 0) {
    s->np = 0, s->n = n;
    return KN_OK;
  }
  if (!same_pattern(s, A)) {
    if (s->own) cholmod_free_factor(&s->own, &s->cc);
    free(s->Ap);
    free(s->Ai);
    s->n_an = n;
    s->nnz = ((const int*)A->p)[n];
    s->Ap = malloc(((size_t)n + 1) * sizeof(int));
    s->Ai = malloc((size_t)s->nnz * sizeof(int));
    if (!s->Ap || !s->Ai) return kn_fail(err, KN_ERR_NOMEM, "schur: out of memory");
    memcpy(s->Ap, A->p, ((size_t)n + 1) * sizeof(int));
    memcpy(s->Ai, A->i, (size_t)s->nnz * sizeof(int));
    s->own = kn_chol_analyze(A, NULL, &s->cc);
    if (!s->own) return kn_fail(err, KN_ERR_NUMERIC, "schur: CHOLMOD analysis failed (status %d)", s->cc.status);
    st = kn_chol_permuted_prepare(&s->perm, A, s->own, &s->cc, err);
    if (st) return st;
  }
  if (!kn_chol_permuted_factor(&s->perm, A, s->own, &s->cc) || s->cc.status != CHOLMOD_OK || s->own->minor < s->own->n)
    return kn_fail(err, KN_ERR_NUMERIC, "schur: A is not positive definite (CHOLMOD status %d)", s->cc.status);
  return kn_fem_schur_complement_factored(s, Acs, (const struct cholmod_factor_struct*)s->own, P, np, S, err);
}

int kn_fem_schur_used_direct(const kn_fem_schur* s) { return s->direct; }

// (Dv_P = v_P - v*_P) => Dv (n) over all free DoFs: A^-1 E_P (S Dv_P), P rows = Dv_P
void kn_fem_schur_recover(kn_fem_schur* s, const double* dv_P, double* dv) {
  int n = s->n, np = s->np;
  if (np == 0) {
    memset(dv, 0, (size_t)n * sizeof *dv);
    return;
  }
  for (int a = 0; a < np; a++) {
    double t = 0;
    for (int b = 0; b < np; b++) t += s->S[(size_t)a * np + b] * dv_P[b];
    s->y[a] = t;
  }
  double* b = s->B->x;
  memset(b, 0, (size_t)n * sizeof *b);
  for (int a = 0; a < np; a++) b[s->P[a]] = s->y[a];
  /* the buffers have their sizes from kn_fem_schur_complement_factored: no allocation, no failure */
  cholmod_solve2(CHOLMOD_A, (cholmod_factor*)s->L, s->B, NULL, &s->X, NULL, &s->Y, &s->E, &s->cc);
  memcpy(dv, s->X->x, (size_t)n * sizeof *dv);
  for (int a = 0; a < np; a++) dv[s->P[a]] = dv_P[a]; /* exact by the block inverse (X_PP S = I) */
}
