/* The SAP problem (Drake's SapContactProblem / SapModel): cliques with A_c and v*_c, and
 * constraints over at most two cliques with their Jacobian blocks (digest §1.3, §4.1). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sap/sap_internal.h"

//---- storage ----

static int grow(void** buf, size_t* cap, size_t need, size_t elem) {
  if (need <= *cap) return 1;
  size_t c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  void* nb = realloc(*buf, c * elem);
  if (!nb) return 0;
  *buf = nb;
  *cap = c;
  return 1;
}

/* append n reals (copied from x, or zeros when x is NULL) => index of the first, or SIZE_MAX */
static size_t push_reals(kn_sap_problem* p, const double* x, size_t n) {
  if (!grow((void**)&p->reals, &p->cap_reals, p->num_reals + n, sizeof(double))) return (size_t)-1;
  size_t at = p->num_reals;
  if (x)
    memcpy(p->reals + at, x, n * sizeof(double));
  else
    memset(p->reals + at, 0, n * sizeof(double));
  p->num_reals += n;
  return at;
}

/* append n ints (copied from x, or zeros when x is NULL) => index of the first, or SIZE_MAX */
static size_t push_ints(kn_sap_problem* p, const int* x, size_t n) {
  if (!grow((void**)&p->ints, &p->cap_ints, p->num_ints + n, sizeof(int))) return (size_t)-1;
  size_t at = p->num_ints;
  if (x)
    memcpy(p->ints + at, x, n * sizeof(int));
  else
    memset(p->ints + at, 0, n * sizeof(int));
  p->num_ints += n;
  return at;
}

kn_sap_problem* kn_sap_problem_create(double dt) {
  kn_sap_problem* p = calloc(1, sizeof *p);
  if (p) p->dt = dt;
  return p;
}

void kn_sap_problem_free(kn_sap_problem* p) {
  if (!p) return;
  free(p->cliques);
  free(p->constraints);
  free(p->reals);
  free(p->ints);
  free(p->bytes);
  free(p);
}

void kn_sap_problem_reset(kn_sap_problem* p, double dt) {
  p->dt = dt;
  p->nv = p->num_impulses = 0;
  p->num_cliques = p->num_constraints = 0;
  p->num_reals = p->num_bytes = p->num_ints = 0;
}

//---- cliques ----

static kn_status reserve_clique(kn_sap_problem* p, kn_error* err) {
  if (p->num_cliques < p->cap_cliques) return KN_OK;
  int cap = p->cap_cliques ? 2 * p->cap_cliques : 8;
  kn_sap_clique* c = realloc(p->cliques, (size_t)cap * sizeof *c);
  if (!c) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory adding clique %d", p->num_cliques);
  p->cliques = c;
  p->cap_cliques = cap;
  return KN_OK;
}

kn_status kn_sap_add_clique(kn_sap_problem* p, int nv, const double* A, const double* v_star, int* index,
                            kn_error* err) {
  if (nv <= 0 || !A || !v_star)
    return kn_fail(err, KN_ERR_INVALID, "sap: clique %d: expected nv > 0 and non-NULL A, v* (got nv %d)",
                   p->num_cliques, nv);
  for (int i = 0; i < nv; i++) {
    if (!(A[i * nv + i] > 0) || !isfinite(A[i * nv + i]))
      return kn_fail(err, KN_ERR_INVALID, "sap: clique %d: A[%d][%d] = %g, expected a positive diagonal",
                     p->num_cliques, i, i, A[i * nv + i]);
    if (!isfinite(v_star[i]))
      return kn_fail(err, KN_ERR_INVALID, "sap: clique %d: v*[%d] is not finite", p->num_cliques, i);
    for (int j = 0; j < i; j++) {
      double a = A[i * nv + j], b = A[j * nv + i];
      if (!(fabs(a - b) <= 1e-12 * (fabs(a) + fabs(b)) + 1e-300))
        return kn_fail(err, KN_ERR_INVALID, "sap: clique %d: A is not symmetric at (%d, %d): %g vs %g",
                       p->num_cliques, i, j, a, b);
    }
  }
  kn_status st = reserve_clique(p, err);
  if (st) return st;
  size_t a_at = push_reals(p, A, (size_t)nv * (size_t)nv);
  size_t v_at = a_at == (size_t)-1 ? a_at : push_reals(p, v_star, (size_t)nv);
  if (v_at == (size_t)-1) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory adding clique %d", p->num_cliques);
  kn_sap_clique* c = &p->cliques[p->num_cliques];
  *c = (kn_sap_clique){0};
  c->nv = nv;
  c->offset = p->nv;
  c->A_at = a_at;
  c->vstar_at = v_at;
  p->nv += nv;
  if (index) *index = p->num_cliques;
  p->num_cliques++;
  return KN_OK;
}

/* the first entry of column j (of block column J = j / 3) below its diagonal block */
static int below_block(const int* colptr, const int* rowidx, int j) {
  int z = colptr[j], top = 3 * (j / 3) + 3;
  while (z < colptr[j + 1] && rowidx[z] < top) z++;
  return z;
}

/* (a lower CSC pattern, checked) => the number of 3 x 3 blocks below the diagonal when the entries
 * below the diagonal blocks come in whole 3 x 3 blocks (nv = 3 nb; columns 3J, 3J + 1, 3J + 2 list
 * the same block rows I > J, each as its 3 rows), else -1. The diagonal blocks may miss entries
 * (zeros). */
static int block3_count(int nv, const int* colptr, const int* rowidx) {
  if (nv % 3) return -1;
  int noff = 0;
  for (int J = 0; J < nv / 3; J++) {
    const int* first = rowidx + below_block(colptr, rowidx, 3 * J);
    int len = colptr[3 * J + 1] - (int)(first - rowidx);
    if (len % 3) return -1;
    for (int c = 0; c < 3; c++) {
      int j = 3 * J + c, z = below_block(colptr, rowidx, j);
      if (colptr[j + 1] - z != len) return -1;
      for (int k = 0; k < len; k++)
        if (rowidx[z + k] != first[k] || first[k] != first[k - k % 3] + k % 3 || first[k - k % 3] % 3) return -1;
    }
    noff += len / 3;
  }
  return noff;
}

/* the clique's A (sparse, block3_count = noff) copied by block (kn_sap_clique.blocked) */
static kn_status block3_store(kn_sap_problem* p, kn_sap_clique* c, int noff) {
  int nb = c->nv / 3;
  size_t bcp = push_ints(p, NULL, (size_t)nb + 1);
  size_t bri = bcp == (size_t)-1 ? bcp : push_ints(p, NULL, (size_t)noff);
  size_t bv = bri == (size_t)-1 ? bri : push_reals(p, NULL, 9 * ((size_t)nb + (size_t)noff));
  if (bv == (size_t)-1) return KN_ERR_NOMEM;
  const int* cp = p->ints + c->colptr_at;
  const int* ri = p->ints + c->rowidx_at;
  const double* A = p->reals + c->A_at;
  int* bcolptr = p->ints + bcp;
  int* browidx = p->ints + bri;
  double* val = p->reals + bv; /* zeros: a diagonal block's missing entries stay 0 */
  int at = 0;
  for (int J = 0; J < nb; J++) {
    bcolptr[J] = at;
    double* D = val + 9 * ((size_t)J + (size_t)at);
    int z0 = below_block(cp, ri, 3 * J), nbelow = (cp[3 * J + 1] - z0) / 3;
    for (int cc = 0; cc < 3; cc++) {
      int j = 3 * J + cc, zb = below_block(cp, ri, j);
      for (int z = cp[j]; z < zb; z++) {
        int r = ri[z] - 3 * J;
        D[3 * r + cc] = D[3 * cc + r] = A[z];
      }
      for (int k = 0; k < 3 * nbelow; k++) D[9 * (1 + k / 3) + 3 * (k % 3) + cc] = A[zb + k];
    }
    for (int k = 0; k < nbelow; k++) browidx[at + k] = ri[z0 + 3 * k] / 3;
    at += nbelow;
  }
  bcolptr[nb] = at;
  c->blocked = 1, c->bcolptr_at = bcp, c->browidx_at = bri, c->bval_at = bv;
  return KN_OK;
}

kn_status kn_sap_add_clique_sparse(kn_sap_problem* p, int nv, const int* colptr, const int* rowidx,
                                   const double* values, const double* v_star, int* index, kn_error* err) {
  int q = p->num_cliques;
  if (nv <= 0 || !colptr || !rowidx || !values || !v_star)
    return kn_fail(err, KN_ERR_INVALID, "sap: sparse clique %d: expected nv > 0 and non-NULL arrays (got nv %d)", q, nv);
  if (colptr[0] != 0) return kn_fail(err, KN_ERR_INVALID, "sap: sparse clique %d: colptr[0] = %d, expected 0", q, colptr[0]);
  for (int j = 0; j < nv; j++) {
    int z0 = colptr[j], z1 = colptr[j + 1];
    if (z1 <= z0 || rowidx[z0] != j)
      return kn_fail(err, KN_ERR_INVALID, "sap: sparse clique %d: column %d does not start with its diagonal entry", q, j);
    if (!(values[z0] > 0) || !isfinite(values[z0]))
      return kn_fail(err, KN_ERR_INVALID, "sap: sparse clique %d: A[%d][%d] = %g, expected a positive diagonal", q, j, j,
                     values[z0]);
    if (!isfinite(v_star[j])) return kn_fail(err, KN_ERR_INVALID, "sap: sparse clique %d: v*[%d] is not finite", q, j);
    for (int z = z0 + 1; z < z1; z++)
      if (rowidx[z] <= rowidx[z - 1] || rowidx[z] >= nv || !isfinite(values[z]))
        return kn_fail(err, KN_ERR_INVALID,
                       "sap: sparse clique %d: column %d: row %d out of order or out of [%d, %d), or its value not finite",
                       q, j, rowidx[z], j, nv);
  }
  kn_status st = reserve_clique(p, err);
  if (st) return st;
  size_t nnz = (size_t)colptr[nv];
  size_t cp = push_ints(p, colptr, (size_t)nv + 1);
  size_t ri = cp == (size_t)-1 ? cp : push_ints(p, rowidx, nnz);
  size_t a_at = ri == (size_t)-1 ? ri : push_reals(p, values, nnz);
  size_t v_at = a_at == (size_t)-1 ? a_at : push_reals(p, v_star, (size_t)nv);
  size_t d_at = v_at == (size_t)-1 ? v_at : push_reals(p, NULL, (size_t)nv);
  if (d_at == (size_t)-1) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory adding clique %d", q);
  for (int j = 0; j < nv; j++) p->reals[d_at + (size_t)j] = values[colptr[j]];
  p->cliques[q] = (kn_sap_clique){.nv = nv, .offset = p->nv, .A_at = a_at, .vstar_at = v_at, .sparse = 1,
                                  .nnz = nnz, .colptr_at = cp, .rowidx_at = ri, .diag_at = d_at};
  int noff = block3_count(nv, colptr, rowidx);
  if (noff >= 0 && block3_store(p, &p->cliques[q], noff) != KN_OK)
    return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory adding clique %d", q);
  p->nv += nv;
  if (index) *index = q;
  p->num_cliques++;
  return KN_OK;
}

double kn_sap_clique_diag(const kn_sap_problem* p, int q, int k) {
  const kn_sap_clique* c = &p->cliques[q];
  return c->sparse ? p->reals[c->diag_at + (size_t)k] : p->reals[c->A_at + (size_t)k * (size_t)c->nv + (size_t)k];
}

void kn_sap_clique_matvec_add(const kn_sap_problem* p, int q, const double* x, double* y) {
  const kn_sap_clique* c = &p->cliques[q];
  const double* A = p->reals + c->A_at;
  if (!c->sparse) {
    kn_sap_sym_matvec_add(A, c->nv, x, y);
    return;
  }
  if (c->blocked) {
    /* by 3 x 3 block: block column J gives y_I += A_IJ x_J (I > J) and y_J += A_JJ x_J + A_IJ^T x_I */
    const int* bcp = p->ints + c->bcolptr_at;
    const int* bri = p->ints + c->browidx_at;
    const double* val = p->reals + c->bval_at;
    for (int J = 0; J < c->nv / 3; J++) {
      const double* D = val + 9 * ((size_t)J + (size_t)bcp[J]);
      const double x0 = x[3 * J], x1 = x[3 * J + 1], x2 = x[3 * J + 2];
      double s0 = D[0] * x0 + D[1] * x1 + D[2] * x2;
      double s1 = D[3] * x0 + D[4] * x1 + D[5] * x2;
      double s2 = D[6] * x0 + D[7] * x1 + D[8] * x2;
      for (int k = bcp[J]; k < bcp[J + 1]; k++) {
        const double* B = D + 9 * (1 + k - bcp[J]);
        const double* xi = x + 3 * bri[k];
        double* yi = y + 3 * bri[k];
        yi[0] += B[0] * x0 + B[1] * x1 + B[2] * x2;
        yi[1] += B[3] * x0 + B[4] * x1 + B[5] * x2;
        yi[2] += B[6] * x0 + B[7] * x1 + B[8] * x2;
        s0 += B[0] * xi[0] + B[3] * xi[1] + B[6] * xi[2];
        s1 += B[1] * xi[0] + B[4] * xi[1] + B[7] * xi[2];
        s2 += B[2] * xi[0] + B[5] * xi[1] + B[8] * xi[2];
      }
      y[3 * J] += s0, y[3 * J + 1] += s1, y[3 * J + 2] += s2;
    }
    return;
  }
  /* lower triangle by columns: column j gives y_i += a_ij x_j (i > j) and y_j += a_ij x_i */
  const int* cp = p->ints + c->colptr_at;
  const int* ri = p->ints + c->rowidx_at;
  for (int j = 0; j < c->nv; j++) {
    double xj = x[j], sum = A[cp[j]] * xj;
    for (int z = cp[j] + 1; z < cp[j + 1]; z++) {
      y[ri[z]] += A[z] * xj;
      sum += A[z] * x[ri[z]];
    }
    y[j] += sum;
  }
}

//---- constraints ----

/* a nodal block (3 rows) on a clique of nv DoFs => its groups sorted by column into col, w;
 * KN_ERR_INVALID naming the node for a bad one */
static kn_status check_nodal(const kn_sap_nodal_jacobian* J, int nv, int ic, const char* kname, int* col, double* w,
                             kn_error* err) {
  if (J->m < 1 || J->m > KN_SAP_MAX_NODES || !J->col || !J->w)
    return kn_fail(err, KN_ERR_INVALID, "sap: constraint %d (%s): a nodal Jacobian needs 1 to %d nodes (got %d)", ic,
                   kname, KN_SAP_MAX_NODES, J->m);
  for (int k = 0; k < 9; k++)
    if (!isfinite(J->B[k]))
      return kn_fail(err, KN_ERR_INVALID, "sap: constraint %d (%s): nodal Jacobian B entry %d is not finite", ic, kname, k);
  for (int a = 0; a < J->m; a++) {
    if (J->col[a] < 0 || J->col[a] > nv - 3)
      return kn_fail(err, KN_ERR_INVALID, "sap: constraint %d (%s): node %d: columns %d..%d outside the clique's %d DoFs",
                     ic, kname, a, J->col[a], J->col[a] + 2, nv);
    if (!isfinite(J->w[a]))
      return kn_fail(err, KN_ERR_INVALID, "sap: constraint %d (%s): node %d: weight %g is not finite", ic, kname, a,
                     J->w[a]);
    /* insertion sort by column (m <= 32) */
    int b = a;
    for (; b > 0 && col[b - 1] > J->col[a]; b--) col[b] = col[b - 1], w[b] = w[b - 1];
    col[b] = J->col[a], w[b] = J->w[a];
  }
  for (int a = 1; a < J->m; a++)
    if (col[a] < col[a - 1] + 3)
      return kn_fail(err, KN_ERR_INVALID, "sap: constraint %d (%s): nodes at columns %d and %d overlap", ic, kname,
                     col[a - 1], col[a]);
  return KN_OK;
}

static double delassus_of(const kn_sap_problem* p, int i);

static kn_status add(kn_sap_problem* p, const kn_sap_kind_ops* ops, const void* self, int rows, int clique_a,
                     const double* J_a, const kn_sap_nodal_jacobian* nodal_a, int clique_b, const double* J_b,
                     int* index, kn_error* err) {
  const char* kname = kn_sap_kind_name(ops->kind);
  int ic = p->num_constraints;
  if (clique_a < 0 || clique_a >= p->num_cliques || (!J_a && !nodal_a))
    return kn_fail(err, KN_ERR_INVALID, "sap: constraint %d (%s): clique_a %d out of range [0, %d) or J_a NULL", ic,
                   kname, clique_a, p->num_cliques);
  if (clique_b >= p->num_cliques || clique_b == clique_a || (clique_b >= 0 && !J_b))
    return kn_fail(err, KN_ERR_INVALID,
                   "sap: constraint %d (%s): clique_b %d must be -1 or a clique other than %d with a J_b block", ic,
                   kname, clique_b, clique_a);
  if (rows < 1 || rows > KN_SAP_MAX_ROWS || (nodal_a && rows != 3))
    return kn_fail(err, KN_ERR_INVALID, "sap: constraint %d (%s): %d rows", ic, kname, rows);
  int ncol[KN_SAP_MAX_NODES];
  double nw[KN_SAP_MAX_NODES];
  if (nodal_a) {
    kn_status st = check_nodal(nodal_a, p->cliques[clique_a].nv, ic, kname, ncol, nw, err);
    if (st) return st;
  }
  if (p->num_constraints == p->cap_constraints) {
    int cap = p->cap_constraints ? 2 * p->cap_constraints : 16;
    kn_sap_constraint* c = realloc(p->constraints, (size_t)cap * sizeof *c);
    if (!c) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory adding constraint %d", ic);
    p->constraints = c;
    p->cap_constraints = cap;
  }
  kn_sap_constraint c = {.ops = ops, .rows = rows, .offset = p->num_impulses, .clique = {clique_a, clique_b}};
  const double* Js[2] = {J_a, J_b};
  size_t reals0 = p->num_reals, ints0 = p->num_ints;
  for (int s = 0; s < 2; s++) {
    if (c.clique[s] < 0) continue;
    if (s == 0 && nodal_a) {
      int m = nodal_a->m;
      c.nodal[0] = m;
      c.J_at[0] = (size_t)-1;
      c.nodal_at[0] = push_reals(p, nw, (size_t)m);
      size_t b_at = c.nodal_at[0] == (size_t)-1 ? (size_t)-1 : push_reals(p, nodal_a->B, 9);
      c.nodal_col_at[0] = b_at == (size_t)-1 ? b_at : push_ints(p, ncol, (size_t)m);
      if (c.nodal_col_at[0] == (size_t)-1) {
        p->num_reals = reals0, p->num_ints = ints0;
        return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory adding constraint %d", ic);
      }
      continue;
    }
    size_t n = (size_t)rows * (size_t)p->cliques[c.clique[s]].nv;
    for (size_t k = 0; k < n; k++)
      if (!isfinite(Js[s][k])) {
        p->num_reals = reals0, p->num_ints = ints0;
        return kn_fail(err, KN_ERR_INVALID, "sap: constraint %d (%s): Jacobian block %c entry %zu is not finite", ic,
                       kname, s ? 'b' : 'a', k);
      }
    c.J_at[s] = push_reals(p, Js[s], n);
    if (c.J_at[s] == (size_t)-1) {
      p->num_reals = reals0, p->num_ints = ints0;
      return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory adding constraint %d", ic);
    }
  }
  size_t slot = (ops->self_size + 15) & ~(size_t)15;
  if (!grow((void**)&p->bytes, &p->cap_bytes, p->num_bytes + slot, 1)) {
    p->num_reals = reals0, p->num_ints = ints0;
    return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory adding constraint %d", ic);
  }
  c.self_at = p->num_bytes;
  memcpy(p->bytes + c.self_at, self, ops->self_size);
  p->num_bytes += slot;
  p->constraints[ic] = c;
  p->constraints[ic].w = delassus_of(p, ic); /* the cliques' A do not change: once, not per use */
  p->num_impulses += rows;
  p->num_constraints++;
  if (index) *index = ic;
  return KN_OK;
}

kn_status kn_sap_problem_add(kn_sap_problem* p, const kn_sap_kind_ops* ops, const void* self, int rows,
                             int clique_a, const double* J_a, int clique_b, const double* J_b, int* index,
                             kn_error* err) {
  return add(p, ops, self, rows, clique_a, J_a, NULL, clique_b, J_b, index, err);
}

kn_status kn_sap_problem_add_nodal(kn_sap_problem* p, const kn_sap_kind_ops* ops, const void* self, int rows,
                                   int clique_a, const kn_sap_nodal_jacobian* nodal_a, int clique_b,
                                   const double* J_b, int* index, kn_error* err) {
  if (!nodal_a)
    return kn_fail(err, KN_ERR_INVALID, "sap: constraint %d: the nodal Jacobian is NULL", p->num_constraints);
  return add(p, ops, self, rows, clique_a, NULL, nodal_a, clique_b, J_b, index, err);
}

const void* kn_sap_constraint_self(const kn_sap_problem* p, int i) {
  return p->bytes + p->constraints[i].self_at;
}

double kn_sap_delassus(const kn_sap_problem* p, int i) { return p->constraints[i].w; }

/* §2.1: W_ii = sum_c J_ic diag(A_c)^-1 J_ic^T and w_i = ||W_ii||_F / n_i (diag(A) only, no
 * factorization; the same w for every row of the constraint). */
static double delassus_of(const kn_sap_problem* p, int i) {
  const kn_sap_constraint* c = &p->constraints[i];
  double W[KN_SAP_MAX_ROWS * KN_SAP_MAX_ROWS] = {0};
  int n = c->rows;
  for (int s = 0; s < 2; s++) {
    if (c->clique[s] < 0) continue;
    const kn_sap_clique* q = &p->cliques[c->clique[s]];
    const int* col;
    const double *w, *B;
    int m = kn_sap_side_nodal(p, i, s, &col, &w, &B);
    if (m) {
      /* J_a = w_a B on node a's 3 DoFs: J D^-1 J^T = sum_a w_a^2 B diag(1 / A_aa) B^T */
      for (int a = 0; a < m; a++) {
        double d[3];
        for (int k = 0; k < 3; k++) d[k] = w[a] * w[a] / kn_sap_clique_diag(p, c->clique[s], col[a] + k);
        for (int r = 0; r < 3; r++)
          for (int t = 0; t < 3; t++) W[r * 3 + t] += B[3 * r] * B[3 * t] * d[0] + B[3 * r + 1] * B[3 * t + 1] * d[1] +
                                                       B[3 * r + 2] * B[3 * t + 2] * d[2];
      }
      continue;
    }
    const double* J = p->reals + c->J_at[s];
    /* the columns where J is zero add +-0 to sums that start at +0: skipped (a deformable
     * clique's contact row has 81 nonzeros of thousands), the sums are the same bit for bit */
    double sum[KN_SAP_MAX_ROWS * KN_SAP_MAX_ROWS] = {0};
    for (int k = 0; k < q->nv; k++) {
      int any = 0;
      for (int r = 0; r < n; r++) any |= J[r * q->nv + k] != 0;
      if (!any) continue;
      double a = kn_sap_clique_diag(p, c->clique[s], k);
      for (int r = 0; r < n; r++)
        for (int t = 0; t < n; t++) sum[r * n + t] += J[r * q->nv + k] * J[t * q->nv + k] / a;
    }
    for (int k = 0; k < n * n; k++) W[k] += sum[k];
  }
  double f = 0;
  for (int k = 0; k < n * n; k++) f += W[k] * W[k];
  return sqrt(f) / n;
}

void kn_sap_constraint_vc(const kn_sap_problem* p, int i, const double* v, double* vc) {
  const kn_sap_constraint* c = &p->constraints[i];
  for (int r = 0; r < c->rows; r++) vc[r] = 0;
  for (int s = 0; s < 2; s++) {
    if (c->clique[s] < 0) continue;
    const kn_sap_clique* q = &p->cliques[c->clique[s]];
    const double* vq = v + q->offset;
    const int* col;
    const double *w, *B;
    int m = kn_sap_side_nodal(p, i, s, &col, &w, &B);
    if (m) {
      double y[3] = {0, 0, 0};
      for (int a = 0; a < m; a++)
        for (int k = 0; k < 3; k++) y[k] += w[a] * vq[col[a] + k];
      for (int r = 0; r < 3; r++) vc[r] += B[3 * r] * y[0] + B[3 * r + 1] * y[1] + B[3 * r + 2] * y[2];
      continue;
    }
    const double* J = p->reals + c->J_at[s];
    for (int r = 0; r < c->rows; r++)
      for (int k = 0; k < q->nv; k++) vc[r] += J[r * q->nv + k] * vq[k];
  }
}

double kn_sap_near_rigid_factor(double beta) {
  const double pi = 3.14159265358979323846;
  return beta * beta / (4.0 * pi * pi);
}

//---- queries ----

int kn_sap_problem_nv(const kn_sap_problem* p) { return p->nv; }
int kn_sap_problem_num_cliques(const kn_sap_problem* p) { return p->num_cliques; }
int kn_sap_problem_num_constraints(const kn_sap_problem* p) { return p->num_constraints; }
int kn_sap_problem_num_impulses(const kn_sap_problem* p) { return p->num_impulses; }
int kn_sap_clique_offset(const kn_sap_problem* p, int clique) { return p->cliques[clique].offset; }
int kn_sap_constraint_offset(const kn_sap_problem* p, int i) { return p->constraints[i].offset; }
int kn_sap_constraint_rows(const kn_sap_problem* p, int i) { return p->constraints[i].rows; }
kn_sap_kind kn_sap_constraint_kind(const kn_sap_problem* p, int i) { return p->constraints[i].ops->kind; }

const char* kn_sap_kind_name(kn_sap_kind kind) {
  switch (kind) {
    case KN_SAP_CONTACT: return "friction cone contact";
    case KN_SAP_LIMIT: return "joint limit";
    case KN_SAP_PD: return "PD controller";
    case KN_SAP_COUPLER: return "coupler";
    case KN_SAP_WELD: return "weld";
    case KN_SAP_FIXED: return "fixed (deformable attachment)";
  }
  return "unknown";
}

static kn_status check_index(const kn_sap_problem* p, int i, kn_error* err) {
  if (i < 0 || i >= p->num_constraints)
    return kn_fail(err, KN_ERR_INVALID, "sap: constraint index %d out of range [0, %d)", i, p->num_constraints);
  return KN_OK;
}

kn_status kn_sap_constraint_regularization(const kn_sap_problem* p, int i, double* w, double* R, double* v_hat,
                                           kn_error* err) {
  kn_status st = check_index(p, i, err);
  if (st) return st;
  const kn_sap_constraint* c = &p->constraints[i];
  _Alignas(16) unsigned char data[KN_SAP_MAX_DATA];
  double wi = kn_sap_delassus(p, i);
  c->ops->make_data(kn_sap_constraint_self(p, i), p->dt, wi, data);
  if (w) *w = wi;
  double Rl[KN_SAP_MAX_ROWS], vl[KN_SAP_MAX_ROWS];
  c->ops->regularization(kn_sap_constraint_self(p, i), data, Rl, vl);
  for (int r = 0; r < c->rows; r++) {
    if (R) R[r] = Rl[r];
    if (v_hat) v_hat[r] = vl[r];
  }
  return KN_OK;
}

kn_status kn_sap_constraint_eval(const kn_sap_problem* p, int i, const double* v, double* cost, double* gamma,
                                 double* G, kn_error* err) {
  kn_status st = check_index(p, i, err);
  if (st) return st;
  const kn_sap_constraint* c = &p->constraints[i];
  _Alignas(16) unsigned char data[KN_SAP_MAX_DATA];
  c->ops->make_data(kn_sap_constraint_self(p, i), p->dt, kn_sap_delassus(p, i), data);
  double vc[KN_SAP_MAX_ROWS], l = 0;
  kn_sap_constraint_vc(p, i, v, vc);
  c->ops->eval(kn_sap_constraint_self(p, i), data, vc, &l, gamma, G);
  if (cost) *cost = l;
  return KN_OK;
}
