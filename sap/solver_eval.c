/* SAP's products over the participating cliques (solver_internal.h): A x, J x, J^T gamma and the
 * unassembled H x of the inexact Newton's CG, and the evaluation at v of the cost, its gradient
 * and each constraint's gamma and G (§4.2), all through the constraints' kind tables. */
#include <string.h>

#include "sap/solver_internal.h"

//---- products with A and J over the participating cliques ----

/* y = A x (reduced vectors; BLAS dsymv on each clique's lower triangle, sap/pcg.c) */
void kn_sap_apply_A(const kn_sap_ctx* c, const double* x, double* y) {
  memset(y, 0, (size_t)c->n * sizeof(double));
  for (int k = 0; k < c->np; k++) {
    int q = c->s->part[k], o = c->s->roff[q];
    kn_sap_clique_matvec_add(c->prob, q, x + o, y + o);
  }
}

/* vc = J_i x for constraint i (its rows of the 3 slots it has) */
static void J_times(const kn_sap_ctx* c, int i, const double* x, double* vc) {
  const kn_sap_problem* p = c->prob;
  const kn_sap_constraint* k = &p->constraints[i];
  if (c->s->sdof[i] >= 0) {
    /* the dense sum below is 0 + (+-0) + ... + J_a x_a + ... = 0 + J_a x_a exactly (finite x) */
    vc[0] = 0.0 + c->s->sval[i] * x[c->s->sdof[i]];
    return;
  }
  for (int r = 0; r < k->rows; r++) vc[r] = 0;
  for (int s = 0; s < 2; s++) {
    if (k->clique[s] < 0) continue;
    int nq = p->cliques[k->clique[s]].nv, o = c->s->roff[k->clique[s]];
    const int* ncol;
    const double *nw, *B;
    int m = kn_sap_side_nodal(p, i, s, &ncol, &nw, &B);
    if (m) { /* J = [w_a B] by node: J x = B (sum_a w_a x_a) */
      double y0 = 0, y1 = 0, y2 = 0;
      for (int a = 0; a < m; a++) {
        const double* xa = x + o + ncol[a];
        y0 += nw[a] * xa[0], y1 += nw[a] * xa[1], y2 += nw[a] * xa[2];
      }
      for (int r = 0; r < 3; r++) vc[r] += B[3 * r] * y0 + B[3 * r + 1] * y1 + B[3 * r + 2] * y2;
      continue;
    }
    const double* J = kn_sap_con_J(p, i, s);
    int cnt = c->s->ccount[2 * i + s];
    if (cnt >= 0) {
      /* the skipped terms are +-0 added to a sum that starts at +0: the same result (finite x) */
      const int* col = c->s->cols + c->s->cstart[2 * i + s];
      const double* jv = c->s->jval + c->s->jvstart[2 * i + s];
      for (int r = 0; r < k->rows; r++) {
        double sum = vc[r];
        for (int t = 0; t < cnt; t++) sum += jv[r * cnt + t] * x[o + col[t]];
        vc[r] = sum;
      }
      continue;
    }
    for (int r = 0; r < k->rows; r++) {
      double sum = vc[r]; /* a local sum: vc may alias J or x as far as the compiler knows */
      for (int t = 0; t < nq; t++) sum += J[r * nq + t] * x[o + t];
      vc[r] = sum;
    }
  }
}

/* v_c,i = J_i x for every constraint (out: 3 slots per constraint) */
void kn_sap_apply_J(const kn_sap_ctx* c, const double* x, double* out) {
  for (int i = 0; i < c->nc; i++) J_times(c, i, x, out + KN_SAP_MAX_ROWS * i);
}

/* y += J_i^T g for constraint i */
void kn_sap_add_JT(const kn_sap_ctx* c, int i, const double* g, double* y) {
  const kn_sap_problem* p = c->prob;
  const kn_sap_constraint* k = &p->constraints[i];
  if (c->s->sdof[i] >= 0) {
    /* the zero entries of J would add +-0 to entries that are never -0 (they start at +0) */
    y[c->s->sdof[i]] += c->s->sval[i] * g[0];
    return;
  }
  for (int s = 0; s < 2; s++) {
    if (k->clique[s] < 0) continue;
    int nq = p->cliques[k->clique[s]].nv, o = c->s->roff[k->clique[s]];
    const int* ncol;
    const double *nw, *B;
    int m = kn_sap_side_nodal(p, i, s, &ncol, &nw, &B);
    if (m) { /* J^T g = w_a B^T g on node a */
      double u0 = B[0] * g[0] + B[3] * g[1] + B[6] * g[2];
      double u1 = B[1] * g[0] + B[4] * g[1] + B[7] * g[2];
      double u2 = B[2] * g[0] + B[5] * g[1] + B[8] * g[2];
      for (int a = 0; a < m; a++) {
        double* ya = y + o + ncol[a];
        ya[0] += nw[a] * u0, ya[1] += nw[a] * u1, ya[2] += nw[a] * u2;
      }
      continue;
    }
    const double* J = kn_sap_con_J(p, i, s);
    int cnt = c->s->ccount[2 * i + s];
    if (cnt >= 0) { /* as in apply_J: y starts at +0 and is never -0, adding +-0 changes nothing */
      const int* col = c->s->cols + c->s->cstart[2 * i + s];
      const double* jv = c->s->jval + c->s->jvstart[2 * i + s];
      for (int r = 0; r < k->rows; r++)
        for (int t = 0; t < cnt; t++) y[o + col[t]] += jv[r * cnt + t] * g[r];
      continue;
    }
    for (int r = 0; r < k->rows; r++)
      for (int t = 0; t < nq; t++) y[o + t] += J[r * nq + t] * g[r];
  }
}

/* y = J^T gamma (generalized impulses) */
static void apply_JT(const kn_sap_ctx* c, const double* gamma, double* y) {
  memset(y, 0, (size_t)c->n * sizeof(double));
  for (int i = 0; i < c->nc; i++) {
    const double* g = gamma + KN_SAP_MAX_ROWS * i;
    if (!kn_sap_all_zero(g, c->prob->constraints[i].rows)) kn_sap_add_JT(c, i, g, y);
  }
}

/* (v_c of every constraint) => gamma, G, sum of l_i (one pass, Drake's
 * CalcImpulsesAndConstraintsHessian) */
static double eval_constraints(const kn_sap_ctx* c, const double* vc, double* gamma, double* G) {
  const kn_sap_problem* p = c->prob;
  double l = 0;
  for (int i = 0; i < c->nc; i++) {
    const kn_sap_constraint* k = &p->constraints[i];
    double li = 0;
    k->ops->eval(c->s->self[i], c->s->data + (size_t)i * KN_SAP_MAX_DATA, vc + KN_SAP_MAX_ROWS * i, &li,
                 gamma + KN_SAP_MAX_ROWS * i, G ? G + KN_SAP_GSLOT * i : NULL);
    l += li;
  }
  return l;
}

/* v => l(v), grad = gA - J^T gamma, gA = A (v - v*), p = A v = gA + A v* (A v* once per solve, in
 * Avstar), j = J^T gamma, and v_c, gamma, G (§4.2). gA is a product of its own each time, not
 * gA + alpha A dv: A (v - v*) is a small difference of large terms on a stiff deformable clique,
 * and the round-off of an update (eps |A| |dv|) after a long first step stays above SAP's
 * tolerance (seen: 6e-4 against 2e-7). */
double kn_sap_eval_all(const kn_sap_ctx* c) {
  kn_sap_solver* s = c->s;
  double* dvs = s->vtmp;
  for (int k = 0; k < c->n; k++) dvs[k] = s->v[k] - s->vstar[k];
  kn_sap_apply_A(c, dvs, s->gA);
  for (int k = 0; k < c->n; k++) s->p[k] = s->gA[k] + s->Avstar[k];
  double lA = 0.5 * kn_sap_dot(dvs, s->gA, c->n);
  kn_sap_apply_J(c, s->v, s->vc);
  double lR = eval_constraints(c, s->vc, s->gamma, s->G);
  apply_JT(c, s->gamma, s->j);
  for (int k = 0; k < c->n; k++) s->grad[k] = s->gA[k] - s->j[k];
  return lA + lR;
}

/* s->G <= each kind's first_G at the current v_c (where it has one): the first Newton step of a
 * large solve (kn_sap_kind_ops.first_G) */
void kn_sap_predict_G(const kn_sap_ctx* c) {
  const kn_sap_problem* p = c->prob;
  for (int i = 0; i < c->nc; i++) {
    const kn_sap_kind_ops* ops = p->constraints[i].ops;
    if (ops->first_G)
      ops->first_G(c->s->self[i], c->s->data + (size_t)i * KN_SAP_MAX_DATA, c->s->vc + KN_SAP_MAX_ROWS * i,
                   c->s->G + KN_SAP_GSLOT * i);
  }
}

/* y = H x = A x + sum_i J_i^T G_i J_i x without assembling H (the CG products of the inexact
 * Newton: O(n^2) for A plus the sparse J, against O(n^2) plus the J^T G J outer products of an
 * assembly). Uses dvc and vtmp, free while the direction is being computed. */
void kn_sap_apply_H_unassembled(void* user, const double* x, double* y) {
  const kn_sap_ctx* c = user;
  kn_sap_solver* s = c->s;
  const kn_sap_problem* p = c->prob;
  memset(y, 0, (size_t)c->n * sizeof(double));
  for (int k = 0; k < c->np; k++) {
    int q = s->part[k], o = s->roff[q];
    kn_sap_clique_matvec_add(p, q, x + o, y + o);
  }
  memset(s->vtmp, 0, (size_t)c->n * sizeof(double));
  for (int i = 0; i < c->nc; i++) {
    int rows = p->constraints[i].rows;
    const double* G = s->G + KN_SAP_GSLOT * i;
    if (kn_sap_all_zero(G, rows * rows)) continue;
    double* u = s->dvc + KN_SAP_MAX_ROWS * i;
    J_times(c, i, x, u);
    double gu[KN_SAP_MAX_ROWS];
    for (int r = 0; r < rows; r++) {
      double sum = 0;
      for (int t = 0; t < rows; t++) sum += G[r * rows + t] * u[t];
      gu[r] = sum;
    }
    kn_sap_add_JT(c, i, gu, s->vtmp);
  }
  for (int k = 0; k < c->n; k++) y[k] += s->vtmp[k];
}
