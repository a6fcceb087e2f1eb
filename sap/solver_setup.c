/* What a SAP solve prepares once, before its Newton iterations (solver.c): the workspace, the
 * participating cliques and coupled pairs (§4.1.1-2) and where H's blocks live, the reduced v*,
 * guess and scaling, the constraints' data (§4.1.3), the nonzero columns of J on large cliques,
 * and the linear solver, dense or sparse, with its symbolic analysis. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sap/solver_internal.h"

//---- workspace ----

/* carve one allocation into the workspace arrays; grows only when the problem does */
static kn_status carve(kn_sap_solver* s, const kn_sap_problem* p, int np, int n, int npairs, size_t hdiag,
                       size_t hoff, kn_error* err) {
  size_t nc = (size_t)p->num_constraints, ncl = (size_t)p->num_cliques, m = (size_t)KN_SAP_MAX_ROWS * nc;
  size_t ints = ncl * 2 + (size_t)np * 3 + ncl + 2 * (size_t)npairs + 8 * nc;
  size_t reals = 16 * (size_t)n + 4 * m + 2 * (size_t)KN_SAP_MAX_ROWS * KN_SAP_MAX_ROWS * nc + 2 * nc + hdiag + hoff;
  size_t ptrs = 3 * (size_t)np + (size_t)npairs + nc;
  size_t need = ints * sizeof(int) + 16 + reals * sizeof(double) + ptrs * sizeof(double*) + 16 +
                nc * KN_SAP_MAX_DATA + 16;
  if (need > s->bytes) {
    void* b = realloc(s->block, need);
    if (!b) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory (solver workspace of %zu bytes)", need);
    s->block = b;
    s->bytes = need;
  }
  unsigned char* at = s->block;
  /* doubles and pointers first (alignment), then per-solve data, then ints */
#define CARVE(field, type, count)            \
  do {                                       \
    s->field = (type*)(void*)at;             \
    at += (size_t)(count) * sizeof(type);    \
  } while (0)
  CARVE(v, double, n);
  CARVE(vstar, double, n);
  CARVE(grad, double, n);
  CARVE(gA, double, n);
  CARVE(Avstar, double, n);
  CARVE(dv, double, n);
  CARVE(p, double, n);
  CARVE(dp, double, n);
  CARVE(j, double, n);
  CARVE(D, double, n);
  CARVE(vtmp, double, 2 * (size_t)n);
  CARVE(cg, double, 4 * (size_t)n);
  CARVE(vc, double, m);
  CARVE(dvc, double, m);
  CARVE(gamma, double, m);
  CARVE(gamma_prev, double, m);
  CARVE(G, double, (size_t)KN_SAP_MAX_ROWS * KN_SAP_MAX_ROWS * nc);
  CARVE(Gref, double, (size_t)KN_SAP_MAX_ROWS * KN_SAP_MAX_ROWS * nc);
  CARVE(w, double, nc);
  CARVE(sval, double, nc);
  CARVE(Hdiag_store, double, hdiag);
  CARVE(Hoff_store, double, hoff);
  CARVE(Hdiag, double*, np);
  CARVE(Hoff, double*, npairs);
  CARVE(pcolptr, const int*, np);
  CARVE(prowidx, const int*, np);
  CARVE(self, const void*, nc);
  at = (unsigned char*)(((uintptr_t)at + 15) & ~(uintptr_t)15);
  CARVE(data, unsigned char, nc * KN_SAP_MAX_DATA);
  CARVE(pidx, int, ncl);
  CARVE(roff, int, ncl);
  CARVE(part, int, np);
  CARVE(psize, int, np);
  CARVE(poff, int, ncl);
  CARVE(pairs, int, 2 * (size_t)npairs);
  CARVE(cpair, int, nc);
  CARVE(sdof, int, nc);
  CARVE(cstart, int, 2 * nc);
  CARVE(ccount, int, 2 * nc);
  CARVE(jvstart, int, 2 * nc);
  CARVE(lbase, int, np);
#undef CARVE
  return KN_OK;
}

kn_status kn_sap_workspace(kn_sap_solver* s, const kn_sap_problem* p, kn_error* err) {
  int nc = p->num_constraints;
  int npairs_max = 0;
  for (int i = 0; i < nc; i++) npairs_max += p->constraints[i].clique[1] >= 0;
  size_t hdiag = 0;
  for (int q = 0; q < p->num_cliques; q++)
    hdiag += p->cliques[q].sparse ? p->cliques[q].nnz : (size_t)p->cliques[q].nv * (size_t)p->cliques[q].nv;
  size_t hoff = 0;
  for (int i = 0; i < nc; i++)
    if (p->constraints[i].clique[1] >= 0)
      hoff += (size_t)p->cliques[p->constraints[i].clique[0]].nv * (size_t)p->cliques[p->constraints[i].clique[1]].nv;
  return carve(s, p, p->num_cliques, p->nv, npairs_max, hdiag, hoff, err);
}

//---- participating cliques and coupled pairs (§4.1.1-2) ----

void kn_sap_participating(kn_sap_ctx* c) {
  const kn_sap_problem* p = c->prob;
  kn_sap_solver* s = c->s;
  int np = 0, n = 0;
  for (int q = 0; q < p->num_cliques; q++) s->pidx[q] = -1, s->roff[q] = -1;
  for (int i = 0; i < c->nc; i++)
    for (int t = 0; t < 2; t++) {
      int q = p->constraints[i].clique[t];
      if (q >= 0) s->pidx[q] = 0;
    }
  for (int q = 0; q < p->num_cliques; q++) {
    if (s->pidx[q] < 0) continue;
    s->pidx[q] = np;
    s->part[np] = q;
    s->psize[np] = p->cliques[q].nv;
    s->poff[np] = n;
    s->roff[q] = n;
    n += p->cliques[q].nv;
    np++;
  }
  c->np = np;
  c->n = n;
}

static int cmp_pair(const void* a, const void* b) {
  const int *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return (x[1] > y[1]) - (x[1] < y[1]);
}

void kn_sap_coupled_pairs(kn_sap_ctx* c) {
  const kn_sap_problem* p = c->prob;
  kn_sap_solver* s = c->s;
  int nc = c->nc;
  int npairs = 0;
  for (int i = 0; i < nc; i++) {
    const kn_sap_constraint* k = &p->constraints[i];
    if (k->clique[1] < 0) continue;
    int a = s->pidx[k->clique[0]], b = s->pidx[k->clique[1]];
    s->pairs[2 * npairs] = a < b ? a : b;
    s->pairs[2 * npairs + 1] = a < b ? b : a;
    npairs++;
  }
  qsort(s->pairs, (size_t)npairs, 2 * sizeof(int), cmp_pair);
  int u = 0;
  for (int k = 0; k < npairs; k++)
    if (u == 0 || cmp_pair(s->pairs + 2 * k, s->pairs + 2 * (u - 1))) {
      s->pairs[2 * u] = s->pairs[2 * k];
      s->pairs[2 * u + 1] = s->pairs[2 * k + 1];
      u++;
    }
  npairs = u;
  for (int i = 0; i < nc; i++) {
    const kn_sap_constraint* k = &p->constraints[i];
    s->cpair[i] = -1;
    if (k->clique[1] < 0) continue;
    int a = s->pidx[k->clique[0]], b = s->pidx[k->clique[1]];
    int key[2] = {a < b ? a : b, a < b ? b : a};
    const int* hit = bsearch(key, s->pairs, (size_t)npairs, 2 * sizeof(int), cmp_pair);
    s->cpair[i] = (int)((hit - s->pairs) / 2);
  }
  c->npairs = npairs;
}

void kn_sap_place_H_blocks(const kn_sap_ctx* c) {
  const kn_sap_problem* p = c->prob;
  kn_sap_solver* s = c->s;
  int np = c->np, npairs = c->npairs;
  double* at = s->Hdiag_store;
  for (int k = 0; k < np; k++) {
    const kn_sap_clique* cq = &p->cliques[s->part[k]];
    s->Hdiag[k] = at;
    at += cq->sparse ? cq->nnz : (size_t)s->psize[k] * (size_t)s->psize[k];
    s->pcolptr[k] = cq->sparse ? p->ints + cq->colptr_at : NULL;
    s->prowidx[k] = cq->sparse ? p->ints + cq->rowidx_at : NULL;
  }
  at = s->Hoff_store;
  for (int k = 0; k < npairs; k++)
    s->Hoff[k] = at, at += (size_t)s->psize[s->pairs[2 * k]] * (size_t)s->psize[s->pairs[2 * k + 1]];
}

//---- reduced v*, guess, scaling D = diag(A)^-1/2 (§4.1.4: the code's inverse square root) ----

void kn_sap_reduced_vectors(const kn_sap_ctx* c, const double* v_guess) {
  const kn_sap_problem* p = c->prob;
  kn_sap_solver* s = c->s;
  int np = c->np;
  for (int k = 0; k < np; k++) {
    int q = s->part[k], nq = p->cliques[q].nv, o2 = s->roff[q];
    const double* vs = p->reals + p->cliques[q].vstar_at;
    for (int t = 0; t < nq; t++) {
      s->vstar[o2 + t] = vs[t];
      s->v[o2 + t] = v_guess ? v_guess[p->cliques[q].offset + t] : vs[t];
      s->D[o2 + t] = 1.0 / sqrt(kn_sap_clique_diag(p, q, t));
    }
  }
}

//---- per-constraint data, constant during Newton (§4.1.3) ----

void kn_sap_constraint_data(const kn_sap_ctx* c) {
  const kn_sap_problem* p = c->prob;
  kn_sap_solver* s = c->s;
  int nc = c->nc;
  for (int i = 0; i < nc; i++) {
    const kn_sap_constraint* k = &p->constraints[i];
    s->self[i] = kn_sap_constraint_self(p, i);
    s->w[i] = kn_sap_delassus(p, i);
    k->ops->make_data(s->self[i], p->dt, s->w[i], s->data + (size_t)i * KN_SAP_MAX_DATA);
    /* the single-dof fast path: any 1-row constraint on one clique whose J has one non-zero */
    s->sdof[i] = -1;
    if (k->rows == 1 && k->clique[1] < 0 && !p->cliques[k->clique[0]].sparse) {
      int q = k->clique[0], nq = p->cliques[q].nv, nz = 0, at = -1;
      const double* J = kn_sap_con_J(p, i, 0);
      for (int t = 0; t < nq; t++)
        if (J[t] != 0) nz++, at = t;
      if (nz == 1) s->sdof[i] = s->roff[q] + at, s->sval[i] = J[at];
    }
  }
}

//---- nonzero columns of the J blocks of constraints on a large clique (apply_J, apply_JT, J^T G J) ----

kn_status kn_sap_jacobian_columns(const kn_sap_ctx* c, kn_error* err) {
  const kn_sap_problem* p = c->prob;
  kn_sap_solver* s = c->s;
  int nc = c->nc;
  size_t total = 0, vtotal = 0;
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1 && total > s->cap_cols) {
      int* cl = realloc(s->cols, total * sizeof(int));
      if (!cl) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory (%zu Jacobian column indices)", total);
      s->cols = cl;
      s->cap_cols = total;
    }
    if (pass == 1 && vtotal > s->cap_jval) {
      double* jv = realloc(s->jval, vtotal * sizeof(double));
      if (!jv) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory (%zu Jacobian entries)", vtotal);
      s->jval = jv;
      s->cap_jval = vtotal;
    }
    total = 0, vtotal = 0;
    for (int i = 0; i < nc; i++) {
      const kn_sap_constraint* k = &p->constraints[i];
      int large = 0;
      for (int t = 0; t < 2; t++)
        large |= k->clique[t] >= 0 && (p->cliques[k->clique[t]].nv > 192 || p->cliques[k->clique[t]].sparse);
      for (int t = 0; t < 2; t++) {
        s->ccount[2 * i + t] = -1;
        if ((!large && !k->nodal[t]) || k->clique[t] < 0 || s->sdof[i] >= 0) continue;
        int nq = p->cliques[k->clique[t]].nv, cnt = 0;
        const double* J = kn_sap_con_J(p, i, t);
        const int* ncol;
        const double *nw, *B;
        int m = kn_sap_side_nodal(p, i, t, &ncol, &nw, &B);
        if (m) { /* a side given by node is always kept compressed: 3 m columns */
          s->cstart[2 * i + t] = (int)total;
          s->ccount[2 * i + t] = cnt = 3 * m;
          s->jvstart[2 * i + t] = (int)vtotal;
          if (pass == 1)
            for (int a = 0; a < m; a++)
              for (int d = 0; d < 3; d++) {
                s->cols[total + (size_t)(3 * a + d)] = ncol[a] + d;
                for (int r = 0; r < 3; r++) s->jval[vtotal + (size_t)(r * cnt + 3 * a + d)] = nw[a] * B[3 * r + d];
              }
          total += (size_t)cnt;
          vtotal += (size_t)cnt * 3;
          continue;
        }
        for (int col = 0; col < nq; col++) {
          int any = 0;
          for (int r = 0; r < k->rows; r++) any |= J[r * nq + col] != 0;
          if (!any) continue;
          if (pass == 1) s->cols[total + (size_t)cnt] = col;
          cnt++;
        }
        s->cstart[2 * i + t] = (int)total;
        s->ccount[2 * i + t] = cnt;
        s->jvstart[2 * i + t] = (int)vtotal;
        if (pass == 1)
          for (int r = 0; r < k->rows; r++)
            for (int m = 0; m < cnt; m++) s->jval[vtotal + (size_t)(r * cnt + m)] = J[r * nq + s->cols[total + (size_t)m]];
        total += (size_t)cnt;
        vtotal += (size_t)cnt * (size_t)k->rows;
      }
    }
  }
  return KN_OK;
}

//---- the linear solver ----

/* AUTO: sparse only for a large H that is mostly zeros. One big dense clique (a deformable's Schur
 * complement) makes H dense anyway, and CHOLMOD would then only add its transposes and analysis.
 * A sparse clique always goes to CHOLMOD. */
kn_status kn_sap_choose_linear_solver(const kn_sap_ctx* c, const kn_sap_options* o, kn_sap_stats* st,
                                      kn_error* err) {
  kn_sap_solver* s = c->s;
  int np = c->np, npairs = c->npairs, n = c->n;
  double block_nnz = 0;
  int any_sparse = 0;
  for (int k = 0; k < np; k++) {
    any_sparse |= s->pcolptr[k] != NULL;
    block_nnz += s->pcolptr[k] ? (double)s->pcolptr[k][s->psize[k]] : 0.5 * (double)s->psize[k] * s->psize[k];
  }
  for (int k = 0; k < npairs; k++) block_nnz += (double)s->psize[s->pairs[2 * k]] * s->psize[s->pairs[2 * k + 1]];
  int mostly_dense = block_nnz >= 0.25 * 0.5 * (double)n * n;
  int sparse = o->linear_solver == KN_SAP_LINEAR_SPARSE ||
               (o->linear_solver == KN_SAP_LINEAR_AUTO && (any_sparse || (n > o->dense_max_nv && !mostly_dense)));
  kn_sap_layout lay = {.num_blocks = np, .n = n, .size = s->psize, .offset = s->poff, .num_pairs = npairs,
                       .pair = s->pairs, .colptr = s->pcolptr, .rowidx = s->prowidx};
  int analysed = 0;
  kn_status status = kn_sap_linsolve_prepare(s->ls, &lay, sparse, &analysed, err);
  if (status) return status;
  st->used_sparse = sparse;
  st->symbolic_analyses = analysed;
  return KN_OK;
}
