/* MPM free motion as a minimization (seed eqs. 11–16, digest §7.3): Newton on the incremental
 * energy over the active grid velocities; its Hessian at v* is the clique's dynamics matrix A_MPM
 * (digest §6.3), kept with its CHOLMOD factor for the Schur complement and SAP. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deformable/deformable.h"
#include "mpm/mpm_internal.h"

kn_mpm_newton_options kn_mpm_newton_options_default(void) {
  return (kn_mpm_newton_options){.max_iterations = 100, .rel_tolerance = 1e-6}; /* the seed solves eq. 15 to 1e-6 */
}

const struct cholmod_sparse_struct* kn_mpm_dynamics_matrix(const kn_mpm_body* b) {
  return b->solver && b->solver->A ? (const struct cholmod_sparse_struct*)b->solver->A : NULL;
}

void kn_mpm_free_motion_counts(const kn_mpm_body* b, int* iterations, int* factorizations) {
  if (iterations) *iterations = b->solver ? b->solver->iterations : 0;
  if (factorizations) *factorizations = b->solver ? b->solver->factorizations : 0;
}

kn_status kn_mpm_dynamics_factor(kn_mpm_body* b, const struct cholmod_factor_struct** L, kn_error* err) {
  *L = NULL;
  if (!b->solver || !b->solver->L || !b->solver->have_factor)
    return kn_fail(err, KN_ERR_INVALID, "%s: no dynamics factor (call kn_mpm_free_motion first)", b->name);
  *L = (const struct cholmod_factor_struct*)b->solver->L;
  return KN_OK;
}

/* particle p => its active stencil nodes (idx) and g = F_E^nT grad w (3 each); returns how many */
static int particle_stencil(const kn_mpm_body* b, int p, int idx[27], double g[81]) {
  const kn_mpm_grid* gr = &b->grid;
  int k = 0;
  for (int a = 0; a < 27; a++) {
    int i = gr->p_node[27 * p + a];
    if (i < 0) continue;
    idx[k] = i;
    kn_mat3_tvec(b->FE + 9 * p, gr->p_dw + 81 * p + 3 * a, g + 3 * k);
    k++;
  }
  return k;
}

/* eq. 14: F_E(v) = F_E^n + dt sum_i v_i g_i^T */
static void particle_F(const kn_mpm_body* b, int p, double dt, const double* v, int k, const int idx[27],
                       const double g[81], double F[9]) {
  memcpy(F, b->FE + 9 * p, 9 * sizeof(double));
  for (int a = 0; a < k; a++)
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) F[3 * r + c] += dt * v[3 * idx[a] + r] * g[3 * a + c];
}

static const double kIdentity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

static double energy_at(const kn_mpm_body* b, double dt, const double grav[3], const double* v, double* grad) {
  const kn_mpm_grid* gr = &b->grid;
  const kn_mpm_solver* s = b->solver;
  int n = gr->n;
  double E = 0;
  for (int i = 0; i < n; i++) {
    double m = gr->mass[i];
    for (int d = 0; d < 3; d++) {
      double dv = v[3 * i + d] - gr->v[3 * i + d];
      E += 0.5 * m * dv * dv - dt * m * grav[d] * v[3 * i + d];
      if (grad) grad[3 * i + d] = m * dv - dt * m * grav[d];
    }
  }
  for (int p = 0; p < b->np; p++) {
    int idx[27];
    double g[81], F[9], P[9];
    int k = particle_stencil(b, p, idx, g);
    particle_F(b, p, dt, v, k, idx, g, F);
    const double* R0 = s->R0 ? s->R0 + 9 * p : kIdentity;
    const kn_mpm_part* pt = kn_mpm_part_of(b, p);
    E += b->volume0[p] * kn_mpm_energy_density(&pt->material, pt->mu, pt->lambda, F, R0, grad ? P : NULL, NULL);
    if (grad) /* dt V P g_i: the grid force of eqs. 12–13 with the sign of the residual */
      for (int a = 0; a < k; a++)
        for (int r = 0; r < 3; r++)
          grad[3 * idx[a] + r] += dt * b->volume0[p] *
                                  (P[3 * r] * g[3 * a] + P[3 * r + 1] * g[3 * a + 1] + P[3 * r + 2] * g[3 * a + 2]);
  }
  return E;
}

static int cmp_int(const void* a, const void* b) { return *(const int*)a - *(const int*)b; }

/* pattern of A: node pairs within the 5^3 stencil (digest §7.3), lower triangle, 3x3 blocks */
static kn_status build_pattern(kn_mpm_body* b, kn_error* err) {
  kn_mpm_solver* s = b->solver;
  const kn_mpm_grid* gr = &b->grid;
  int n = gr->n;
  /* the same active nodes as at the last step (a body at rest, or moving less than a cell): the
   * pattern and CHOLMOD's symbolic factorization are still valid */
  if (s->A && s->L && s->pattern_n == n && !memcmp(s->pattern_index, gr->index, 3 * (size_t)n * sizeof(int)))
    return KN_OK;
  free(s->pattern_index);
  s->pattern_n = -1;
  s->pattern_index = kn_calloc(3 * (size_t)n + 1, sizeof(int));
  if (!s->pattern_index) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for the grid pattern", b->name);
  free(s->col_start), free(s->nbr);
  s->col_start = kn_calloc((size_t)n + 1, sizeof(int));
  s->nbr = kn_calloc(62 * (size_t)n + 1, sizeof(int)); /* at most 62 of the 124 neighbours are after j */
  if (!s->col_start || !s->nbr) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for the grid pattern", b->name);
  int at = 0;
  for (int j = 0; j < n; j++) {
    s->col_start[j] = at;
    const int* ix = gr->index + 3 * j;
    for (int dx = -2; dx <= 2; dx++)
      for (int dy = -2; dy <= 2; dy++)
        for (int dz = -2; dz <= 2; dz++) {
          int k = kn_mpm_hash_find(s, kn_mpm_key(ix[0] + dx, ix[1] + dy, ix[2] + dz));
          if (k > j) s->nbr[at++] = k;
        }
    qsort(s->nbr + s->col_start[j], (size_t)(at - s->col_start[j]), sizeof(int), cmp_int);
  }
  s->col_start[n] = at;
  if (s->A) cholmod_free_sparse(&s->A, &s->cc);
  if (s->H) cholmod_free_sparse(&s->H, &s->cc);
  if (s->L) cholmod_free_factor(&s->L, &s->cc);
  kn_chol_permuted_free(&s->perm, &s->cc);
  s->have_factor = 0;
  size_t N = 3 * (size_t)n, nnz = 6 * (size_t)n + 9 * (size_t)at;
  s->A = cholmod_allocate_sparse(N, N, nnz, 1, 1, -1, CHOLMOD_REAL, &s->cc);
  if (!s->A) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for a %zu x %zu matrix", b->name, N, N);
  int *Ap = s->A->p, *Ai = s->A->i;
  int q = 0;
  for (int j = 0; j < n; j++)
    for (int c = 0; c < 3; c++) {
      Ap[3 * j + c] = q;
      for (int r = c; r < 3; r++) Ai[q++] = 3 * j + r;
      for (int t = s->col_start[j]; t < s->col_start[j + 1]; t++)
        for (int r = 0; r < 3; r++) Ai[q++] = 3 * s->nbr[t] + r;
    }
  Ap[N] = q;
  s->L = kn_chol_analyze(s->A, NULL, &s->cc);
  if (!s->L || s->cc.status < CHOLMOD_OK)
    return kn_fail(err, KN_ERR_NUMERIC, "%s: CHOLMOD analysis failed (status %d) on %zu DoFs", b->name, s->cc.status, N);
  kn_status st = kn_chol_permuted_prepare(&s->perm, s->A, s->L, &s->cc, err);
  if (st != KN_OK) return st;
  memcpy(s->pattern_index, gr->index, 3 * (size_t)n * sizeof(int));
  s->pattern_n = n;
  return KN_OK;
}

/* node i >= j => its block's offset in column 3j + c of A->x is Ap[3j + c] + block_at(s, j, c, i) + r */
static int block_at(const kn_mpm_solver* s, int j, int c, int i) {
  if (i == j) return -c;
  int lo = s->col_start[j], hi = s->col_start[j + 1] - 1;
  while (lo < hi) { /* binary search for i among j's neighbours (always present: they share a particle) */
    int mid = (lo + hi) / 2;
    if (s->nbr[mid] < i) lo = mid + 1;
    else hi = mid;
  }
  return 3 - c + 3 * (lo - s->col_start[j]);
}

/* position in A->x of entry (row 3i + r, column 3j + c), i >= j, r >= c when i == j */
static size_t entry(const kn_mpm_solver* s, int j, int c, int i, int r) {
  return (size_t)((const int*)s->A->p)[3 * j + c] + (size_t)(block_at(s, j, c, i) + r);
}

/* one particle's dt^2 V_p G_p^T dP/dF G_p added to the dense stencil block H (27 x 27 nodes,
 * 3 x 3 each: H[9 (27 a + bb) + 3 c + r] is row 3 idx[a] + r, column 3 idx[bb] + c), lower part only
 * (idx[a] >= idx[bb], and r >= c on the diagonal blocks) */
static void particle_hessian(const kn_mpm_body* b, int p, double dt, const double* v, double* H) {
  const kn_mpm_solver* s = b->solver;
  int idx[27];
  double g[81], F[9], D[81], T[27 * 27];
  int k = particle_stencil(b, p, idx, g);
  const double* R0 = s->R0 ? s->R0 + 9 * p : kIdentity;
  double cs = dt * dt * b->volume0[p];
  const kn_mpm_part* pt = kn_mpm_part_of(b, p);
  if (pt->material.model == KN_MPM_LINEAR_COROTATED) {
    /* dP/dF = mu I + mu R0 (.)^T R0 + lambda R0 tr(R0^T .) (common/corotated.c) contracted with
     * g_a and g_b: mu (g_a . g_b) I + mu u_b u_a^T + lambda u_a u_b^T, u = R0 g: a third of the
     * general contraction's work, and no 9x9 dP/dF */
    double u[81];
    for (int a = 0; a < k; a++) kn_mat3_vec(R0, g + 3 * a, u + 3 * a);
    const double mu = cs * pt->mu, la = cs * pt->lambda;
    for (int a = 0; a < k; a++)
      for (int bb = 0; bb < k; bb++) {
        int i = idx[a], j = idx[bb];
        if (i < j) continue;
        const double *ga = g + 3 * a, *gb = g + 3 * bb, *ua = u + 3 * a, *ub = u + 3 * bb;
        double gg = mu * (ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2]);
        double* Hb = H + 9 * (27 * a + bb);
        for (int c = 0; c < 3; c++)
          for (int r = (i == j ? c : 0); r < 3; r++)
            Hb[3 * c + r] += (r == c ? gg : 0.0) + mu * ub[r] * ua[c] + la * ua[r] * ub[c];
      }
    return;
  }
  particle_F(b, p, dt, v, k, idx, g, F);
  kn_mpm_energy_density(&pt->material, pt->mu, pt->lambda, F, R0, NULL, D);
  /* T_b[alpha gamma][beta] = sum_eps D[alpha gamma][beta eps] g_b,eps */
  for (int bb = 0; bb < k; bb++)
    for (int ag = 0; ag < 9; ag++)
      for (int be = 0; be < 3; be++) {
        const double* Dr = D + 9 * ag + 3 * be;
        T[27 * bb + 3 * ag + be] = Dr[0] * g[3 * bb] + Dr[1] * g[3 * bb + 1] + Dr[2] * g[3 * bb + 2];
      }
  for (int a = 0; a < k; a++)
    for (int bb = 0; bb < k; bb++) {
      int i = idx[a], j = idx[bb];
      if (i < j) continue;
      double* Hb = H + 9 * (27 * a + bb);
      for (int c = 0; c < 3; c++)                      /* beta: column within node j */
        for (int r = (i == j ? c : 0); r < 3; r++) {  /* alpha: row within node i */
          const double* Tb = T + 27 * bb + 9 * r;     /* [alpha = r][gamma][beta] */
          Hb[3 * c + r] += cs * (g[3 * a] * Tb[c] + g[3 * a + 1] * Tb[3 + c] + g[3 * a + 2] * Tb[6 + c]);
        }
    }
}

/* H (as particle_hessian left it for the stencil idx of particle p) => added to Ax (values in A's
 * pattern); H zeroed again */
static void scatter(const kn_mpm_body* b, int p, double* H, double* Ax) {
  const kn_mpm_solver* s = b->solver;
  const int* Ap = s->A->p;
  int idx[27];
  double g[81];
  int k = particle_stencil(b, p, idx, g);
  for (int a = 0; a < k; a++)
    for (int bb = 0; bb < k; bb++) {
      int i = idx[a], j = idx[bb];
      if (i < j) continue;
      double* Hb = H + 9 * (27 * a + bb);
      /* one search per node pair: the three columns of node j hold node i's rows at one rank */
      int at = block_at(s, j, 0, i);
      for (int c = 0; c < 3; c++) {
        double* col = Ax + Ap[3 * j + c] + at - c;
        for (int r = (i == j ? c : 0); r < 3; r++) col[r] += Hb[3 * c + r], Hb[3 * c + r] = 0;
      }
    }
}

/* The linear corotated blocks of a batch of particles with one stencil (k nodes) and one part, as
 * matrix products: with the columns sqrt(c_p) g_p and sqrt(c_p) u_p (u = R0 g, c_p = dt^2 V_p) in Gm
 * and Um (3k x m), P = Gm Gm^T and Q = Um Um^T (BLAS dsyrk) give particle_hessian's sums
 *   sum_p c_p (g_a . g_b) = tr P_ab,  sum_p c_p u_b,r u_a,c = Q(3b + r, 3a + c),
 * added to H with mu and lambda. Measured on bench/mpm.c's ball on slope (8,217 particles, 125 per
 * cell): assemble() 28-47 -> 11-15 ms per step, against particle_hessian's loop per particle. */
static void add_corotated_batch(int k, const int idx[27], int m, const double* Gm, const double* Um, double mu,
                                double la, double* PQ, double* H) {
  int n = 3 * k;
  double *P = PQ, *Q = PQ + (size_t)n * n;
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, m, 1.0, Gm, n, 0.0, P, n);
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, m, 1.0, Um, n, 0.0, Q, n);
#define SYM(X, i, j) ((i) >= (j) ? X[(size_t)(j) * n + (i)] : X[(size_t)(i) * n + (j)])
  for (int a = 0; a < k; a++)
    for (int bb = 0; bb < k; bb++) {
      int i = idx[a], j = idx[bb];
      if (i < j) continue;
      double gg = mu * (SYM(P, 3 * a, 3 * bb) + SYM(P, 3 * a + 1, 3 * bb + 1) + SYM(P, 3 * a + 2, 3 * bb + 2));
      double* Hb = H + 9 * (27 * a + bb);
      for (int c = 0; c < 3; c++)
        for (int r = (i == j ? c : 0); r < 3; r++)
          Hb[3 * c + r] += (r == c ? gg : 0.0) + mu * SYM(Q, 3 * bb + r, 3 * a + c) + la * SYM(Q, 3 * a + r, 3 * bb + c);
    }
#undef SYM
}

/* Ax (values in A's pattern) = A(v) = M + dt^2 sum_p V_p G_p^T dP/dF G_p (digest §7.3 Hessian),
 * for the free motion (A->x) and kn_mpm_potential (H->x). The particles of one grid cell with the
 * same stencil (a particle on a stencil boundary has a zero weight and misses a node: up to 8
 * stencils per cell) share their 27 x 27 node blocks: the blocks are summed densely and scattered
 * into the sparse A once per stencil (the scatter's searches were 80 % of a 125-particles-per-cell
 * step); linear corotated particles are summed by add_corotated_batch. Cells are visited by their
 * centre node, stencils in order of first appearance, particles in index order: the sum order is
 * fixed (bitwise reproducible). */
enum { MAX_STENCILS = 8 };

/* *p => at least `bytes` (kept, grown by reallocation); 0 when out of memory (*p unchanged) */
static int grow_scratch(void** p, size_t* cap, size_t bytes) {
  if (bytes <= *cap) return 1;
  void* q = realloc(*p, bytes);
  if (!q) return 0;
  *p = q, *cap = bytes;
  return 1;
}

static kn_status assemble(kn_mpm_body* b, double dt, const double* v, double* Ax, kn_error* err) {
  kn_mpm_solver* s = b->solver;
  const kn_mpm_grid* gr = &b->grid;
  int n = gr->n;
  /* scratch kept in the solver from step to step (no allocation once it has grown) */
  if (!grow_scratch((void**)&s->asm_int, &s->asm_int_cap, ((size_t)n + (size_t)b->np + 2) * sizeof(int)))
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory assembling the dynamics matrix", b->name);
  int *start = s->asm_int, *order = s->asm_int + n + 1;
  memset(start, 0, ((size_t)n + 1) * sizeof(int));
  /* counting sort of the particles by their centre node (stencil entry 13: weight > 0 always) */
  for (int p = 0; p < b->np; p++) start[gr->p_node[27 * p + 13] + 1]++;
  int most = 1; /* the most particles of one cell: the batch size */
  for (int i = 0; i < n; i++) most = start[i + 1] > most ? start[i + 1] : most, start[i + 1] += start[i];
  for (int p = 0; p < b->np; p++) order[start[gr->p_node[27 * p + 13]]++] = p;
  for (int i = n; i > 0; i--) start[i] = start[i - 1];
  start[0] = 0;
  size_t nH = 27 * 27 * 9, nGU = 2 * 81 * (size_t)most, nPQ = 2 * 81 * 81; /* GU: Gm, Um */
  if (!grow_scratch((void**)&s->asm_dbl, &s->asm_dbl_cap, (nH + nGU + nPQ) * sizeof(double) + (size_t)most))
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory assembling the dynamics matrix", b->name);
  double *H = s->asm_dbl, *GU = H + nH, *PQ = GU + nGU;
  signed char* group = (signed char*)(PQ + nPQ);
  memset(H, 0, nH * sizeof(double)); /* particle_hessian adds into it, scatter zeroes it again */
  memset(Ax, 0, (size_t)((int*)s->A->p)[s->A->ncol] * sizeof(double));
  for (int i = 0; i < n; i++)
    for (int c = 0; c < 3; c++) Ax[entry(s, i, c, i, c)] += gr->mass[i];
  for (int c = 0; c < n; c++) {
    int m = start[c + 1] - start[c], rep[MAX_STENCILS], nrep = 0;
    const int* cell = order + start[c];
    for (int t = 0; t < m; t++) {
      int p = cell[t], g = 0;
      while (g < nrep && memcmp(gr->p_node + 27 * p, gr->p_node + 27 * rep[g], 27 * sizeof(int)) != 0) g++;
      if (g == nrep && nrep < MAX_STENCILS) rep[nrep++] = p;
      group[t] = (signed char)(g < nrep ? g : -1);
    }
    for (int g = -1; g < nrep; g++)
      for (int t = 0; t < m; t++) {
        if (group[t] != g) continue;
        if (g < 0) { /* beyond MAX_STENCILS (not seen): a scatter of its own */
          particle_hessian(b, cell[t], dt, v, H);
          scatter(b, cell[t], H, Ax);
          continue;
        }
        /* the stencil's first particle: sum the group, then scatter it */
        const kn_mpm_part* pt = kn_mpm_part_of(b, rep[g]);
        int idx[27], k = 0, batch = 0;
        for (int a = 0; a < 27; a++) k += gr->p_node[27 * rep[g] + a] >= 0;
        double *Gm = GU, *Um = GU + (size_t)most * 81; /* 3k x batch each */
        for (int u = t; u < m; u++) {
          int p = cell[u];
          if (group[u] != g) continue;
          group[u] = (signed char)MAX_STENCILS; /* done */
          if (pt->material.model != KN_MPM_LINEAR_COROTATED || kn_mpm_part_of(b, p) != pt) {
            particle_hessian(b, p, dt, v, H);
            continue;
          }
          double gp[81];
          particle_stencil(b, p, idx, gp);
          double w = sqrt(dt * dt * b->volume0[p]);
          const double* R0 = s->R0 ? s->R0 + 9 * p : kIdentity;
          double *gcol = Gm + (size_t)batch * 3 * k, *ucol = Um + (size_t)batch * 3 * k;
          for (int a = 0; a < k; a++) {
            kn_mat3_vec(R0, gp + 3 * a, ucol + 3 * a);
            for (int d = 0; d < 3; d++) gcol[3 * a + d] = w * gp[3 * a + d], ucol[3 * a + d] *= w;
          }
          batch++;
        }
        if (batch > 0) add_corotated_batch(k, idx, batch, Gm, Um, pt->mu, pt->lambda, PQ, H);
        scatter(b, rep[g], H, Ax);
        break;
      }
  }
  return KN_OK;
}

/* A(v) assembled and factored: s->A, s->L */
static kn_status factor_at(kn_mpm_body* b, double dt, const double* v, kn_error* err) {
  kn_mpm_solver* s = b->solver;
  s->have_factor = 0;
  kn_status st = assemble(b, dt, v, s->A->x, err);
  if (st != KN_OK) return st;
  kn_chol_permuted_factor(&s->perm, s->A, s->L, &s->cc);
  s->factorizations++;
  if (s->cc.status != CHOLMOD_OK || s->L->minor < s->L->n)
    return kn_fail(err, KN_ERR_NUMERIC, "%s: free motion: the dynamics matrix (%zu DoFs) is not positive definite",
                   b->name, s->A->nrow);
  s->have_factor = 1;
  return KN_OK;
}

// (body after free motion, v) => E_MPM(v), grad E, Hessian(v): the free motion's energy_at and assemble
kn_status kn_mpm_potential(kn_mpm_body* b, const double* v, double* E, double* grad,
                           const struct cholmod_sparse_struct** hessian, kn_error* err) {
  if (hessian) *hessian = NULL;
  kn_mpm_solver* s = b->solver;
  const kn_mpm_grid* gr = &b->grid;
  /* the grid of the last P2G must be the one A's pattern was built for by the free motion */
  if (b->viewed || !s || !s->A || !gr->p_node || s->pattern_n != gr->n ||
      memcmp(s->pattern_index, gr->index, 3 * (size_t)gr->n * sizeof(int)) != 0)
    return kn_fail(err, KN_ERR_INVALID, "%s: no incremental potential (call kn_mpm_free_motion first)", b->name);
  double e = energy_at(b, s->dt, s->gravity, v, grad);
  if (E) *E = e;
  if (!hessian) return KN_OK;
  if (!s->H) {
    s->H = cholmod_copy_sparse(s->A, &s->cc);
    if (!s->H) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for a %zu x %zu Hessian", b->name, s->A->nrow, s->A->nrow);
  }
  /* every part linear corotated (s->quadratic): H does not depend on v, and the values of the last
   * assembly are H's until the next P2G (kn_mpm_p2g clears H_kept) or a change of F_E (the MPM dough cube on
   * penalty: an assembly per Newton iteration, 9 % of the step, and 2,700 of them in 380 steps) */
  size_t fe = 9 * (size_t)b->np * sizeof(double);
  if (s->H_kept && !memcmp(s->H_FE, b->FE, fe)) {
    *hessian = (const struct cholmod_sparse_struct*)s->H;
    return KN_OK;
  }
  s->H_kept = 0;
  kn_status st = assemble(b, s->dt, v, s->H->x, err);
  if (st != KN_OK) return st;
  if (s->quadratic && grow_scratch((void**)&s->H_FE, &s->H_FE_cap, fe)) {
    memcpy(s->H_FE, b->FE, fe);
    s->H_kept = 1;
  }
  *hessian = (const struct cholmod_sparse_struct*)s->H;
  return KN_OK;
}

/* the chord steps' least gradient reduction per step before A is refactored (see kn_mpm_free_motion) */
#define CHORD_RATE 0.5

kn_status kn_mpm_free_motion(kn_mpm_body* b, double dt, const double gravity[3], const kn_mpm_newton_options* opt,
                             kn_error* err) {
  kn_mpm_newton_options o = opt ? *opt : kn_mpm_newton_options_default();
  if (!(dt > 0) || !isfinite(dt)) return kn_fail(err, KN_ERR_INVALID, "%s: time step %g must be positive", b->name, dt);
  kn_status st = kn_mpm_p2g(b, err);
  if (st != KN_OK) return st;
  kn_mpm_solver* s = b->solver;
  kn_mpm_grid* gr = &b->grid;
  s->dt = dt; /* with R0 below, a new H: kn_mpm_p2g above cleared H_kept */
  memcpy(s->gravity, gravity, 3 * sizeof(double));
  /* E is quadratic in v (one Newton step is exact) when every part is linear corotated */
  int quadratic = 1;
  for (int k = 0; k < b->nparts; k++) quadratic &= b->parts[k].material.model == KN_MPM_LINEAR_COROTATED;
  s->quadratic = quadratic;
  if (!s->R0 || s->R0_np != b->np) {
    free(s->R0);
    s->R0 = NULL;
  }
  if (b->nparts > 1 || quadratic) {
    if (!s->R0) s->R0 = kn_calloc(9 * (size_t)b->np, sizeof(double)), s->R0_np = b->np;
    if (!s->R0) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", b->name);
    for (int p = 0; p < b->np; p++) kn_fem_polar_rotation(b->FE + 9 * p, s->R0 + 9 * p);
  }
  st = build_pattern(b, err);
  if (st != KN_OK) return st;
  int n3 = 3 * gr->n;
  double* v = gr->v_star;
  double* grad = kn_calloc((size_t)n3, sizeof(double));
  double* vt = kn_calloc((size_t)n3, sizeof(double));
  if (!grad || !vt) {
    free(grad), free(vt);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", b->name);
  }
  memcpy(v, gr->v, (size_t)n3 * sizeof(double));
  /* the gradient is a momentum residual: measure it against the step's momenta |M v^n| and dt |M g|
   * as well as its start value (a spinning or resting body has grad E(v^n) ~ 0 at roundoff level) */
  double Mg = 0, Mv = 0, thresh = 0;
  for (int i = 0; i < gr->n; i++) {
    Mg += gr->mass[i] * gr->mass[i] * kn_vec3_dot(gravity, gravity);
    Mv += gr->mass[i] * gr->mass[i] * kn_vec3_dot(gr->v + 3 * i, gr->v + 3 * i);
  }
  Mg = fmax(dt * sqrt(Mg), sqrt(Mv));
  /* Chord steps (a modified Newton): the factor of A at an earlier iterate is kept while each step
   * shrinks |grad E| by CHORD_RATE at least, and A is refactored at v* once converged, so the
   * result and A_MPM are Newton's. On the pouring example (EOS liquid, 600 DoFs) 4 assemblies and
   * factorizations per step became 2, 3 Newton steps 8 chord steps, the free motion 66 -> 24 ms
   * (CHORD_RATE 0.25: 2.6 factorizations and 29 ms; 0.1: 3 and 31 ms). The linear corotated
   * model's A is constant: one step, one factorization. */
  int fresh = 0, have = 0, converged = 0, force = 0, newton_prev = 0;
  double gn_prev = INFINITY;
  s->iterations = s->factorizations = 0;
  for (int it = 0; it <= o.max_iterations && !converged; it++) {
    double E = energy_at(b, dt, gravity, v, grad), gn = 0;
    for (int k = 0; k < n3; k++) gn += grad[k] * grad[k];
    gn = sqrt(gn);
    if (!isfinite(E) || !isfinite(gn)) {
      st = kn_fail(err, KN_ERR_NUMERIC, "%s: free motion: non-finite energy or gradient at Newton iteration %d", b->name, it);
      break;
    }
    if (it == 0) thresh = o.rel_tolerance * fmax(gn, Mg);
    if (gn <= thresh) {
      converged = 1;
      break;
    }
    if (it == o.max_iterations) break;
    if (!fresh && (!have || force || gn > CHORD_RATE * gn_prev)) {
      if ((st = factor_at(b, dt, v, err))) break;
      fresh = have = 1;
      force = 0;
    }
    cholmod_dense G = {.nrow = (size_t)n3, .ncol = 1, .nzmax = (size_t)n3, .d = (size_t)n3, .x = grad,
                       .xtype = CHOLMOD_REAL, .dtype = CHOLMOD_DOUBLE};
    cholmod_dense* X = cholmod_solve(CHOLMOD_A, s->L, &G, &s->cc);
    if (!X) {
      st = kn_fail(err, KN_ERR_NUMERIC, "%s: free motion: CHOLMOD solve failed", b->name);
      break;
    }
    const double* dx = X->x; /* the step is -A^-1 grad */
    double slope = 0, vmax = 0, dmax = 0;
    for (int k = 0; k < n3; k++) {
      slope -= grad[k] * dx[k];
      vmax = fmax(vmax, fabs(v[k]));
      dmax = fmax(dmax, fabs(dx[k]));
    }
    /* stalled at roundoff: the gradient stopped shrinking and the Newton decrement -slope/2 (the
     * energy still to gain) is below what E can resolve. A PSD-projected Hessian (EOS) stalls so
     * just above the tolerance; v is the minimizer to working precision. */
    if (newton_prev && gn > 0.5 * gn_prev && -0.5 * slope <= 1e-12 * fabs(E)) {
      cholmod_free_dense(&X, &s->cc);
      converged = 1;
      break;
    }
    gn_prev = gn;
    newton_prev = fresh; /* the stall test above compares with a Newton step's gradient only */
    double alpha = 1;
    if (quadratic) {
      for (int k = 0; k < n3; k++) v[k] -= dx[k]; /* quadratic: the Newton step is exact */
    } else {
      int accepted = 0;
      for (int ls = 0; ls < 40 && !accepted; ls++, alpha *= 0.5) { /* backtracking Armijo on E */
        for (int k = 0; k < n3; k++) vt[k] = v[k] - alpha * dx[k];
        double Et = energy_at(b, dt, gravity, vt, NULL);
        accepted = isfinite(Et) && Et <= E + 1e-4 * alpha * slope;
      }
      cholmod_free_dense(&X, &s->cc);
      if (!accepted && !fresh) { /* a chord step that gains nothing: a Newton step from here */
        force = 1;
        continue;
      }
      if (!accepted) {
        /* no decrease E can resolve: if the Newton decrement -slope/2 (the energy still to gain) is
         * at E's roundoff, v is the minimizer to working precision (a PSD-projected Hessian stalls
         * there); otherwise the search failed */
        if (-0.5 * slope <= 1e-12 * fabs(E)) converged = 1;
        else st = kn_fail(err, KN_ERR_NUMERIC, "%s: free motion: line search failed at Newton iteration %d", b->name, it);
        break;
      }
      memcpy(v, vt, (size_t)n3 * sizeof(double));
      fresh = 0; /* the Hessian depends on v */
      s->iterations++;
      continue;
    }
    cholmod_free_dense(&X, &s->cc);
    s->iterations++;
    /* a step at roundoff level: the gradient cannot get smaller */
    if (alpha * dmax <= 1e-15 * (1 + vmax)) converged = 1;
  }
  /* A_MPM is the Hessian at v* */
  if (st == KN_OK && converged && !fresh) st = factor_at(b, dt, v, err);
  free(grad), free(vt);
  if (st == KN_OK && !converged)
    st = kn_fail(err, KN_ERR_NUMERIC, "%s: free motion: Newton did not converge in %d iterations", b->name,
                 o.max_iterations);
  if (st != KN_OK) s->have_factor = 0;
  return st;
}
