/* The SAP Newton solver (Drake's SapSolver, digest §4): Newton iterations on the strictly convex
 * cost l(v) = 1/2 ||v - v*||_A^2 + sum_i l_i(J_i v), exact line search by Newton with bisection
 * fallback (§4.4), Drake's optimality and cost criteria (§4.3). The solver sees constraints only
 * through their kind table (sap_internal.h), so adding a kind never changes this file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sap/sap_internal.h"

kn_sap_options kn_sap_options_default(void) {
  /* Drake's SapSolverParameters (digest §4.7) */
  return (kn_sap_options){
      .abs_tolerance = 1e-14,
      .rel_tolerance = 1e-6,
      .cost_abs_tolerance = 1e-30,
      .cost_rel_tolerance = 1e-15,
      .max_iterations = 100,
      .ls_max_iterations = 100,
      .ls_alpha_max = 1.5,
      .relative_slop = 1000 * 2.220446049250313e-16,
      .nonmonotonic_is_error = 0,
      .linear_solver = KN_SAP_LINEAR_AUTO,
      .dense_max_nv = 64,
      .reuse_min_nv = 300,
      .monitor = NULL,
      .monitor_user = NULL,
  };
}

/* Inexact Newton (sap/pcg.c): at most REUSE_MAX_CG products with H per CG solve; a CG solve that
 * stops there unconverged still gives a descent direction, which is taken, and H is refactored at
 * the next iteration. The forcing term is at most REUSE_ETA_MAX. Measured on bench/mpm.c's Table I
 * scenes (CPU s/step, exact -> reuse): rolling (n 1137) 0.79 -> 0.69, shake (n 1431) 1.08 -> 0.98,
 * with 4 CG products the gains were smaller, and refactoring instead of taking the truncated
 * iterate was slower than exact Newton on rolling. */
#define REUSE_MAX_CG 8
#define REUSE_ETA_MAX 0.5

/* per-constraint slots in the workspace: KN_SAP_MAX_ROWS rows of v_c / gamma, GSLOT of G */
#define GSLOT (KN_SAP_MAX_ROWS * KN_SAP_MAX_ROWS)

//---- workspace ----

struct kn_sap_solver {
  kn_sap_linsolve* ls;
  kn_sap_lowrank* lr; /* H of later iterations from the factor of an earlier one (sap/lowrank.c) */
  /* participating cliques (§4.1): part[k] is a clique, roff[clique] its reduced offset or -1 */
  int *part, *pidx, *roff, *psize, *poff;
  int *pairs, *cpair; /* coupled clique pairs (participating indices, a < b); pair of each constraint */
  /* reduced vectors (n participating dofs) */
  double *v, *vstar, *Avstar, *grad, *gA, *dv, *p, *dp, *j, *D, *vtmp, *cg; /* cg: 4 n, sap/pcg.c's work */
  /* per constraint rows: v_c, dv_c, gamma, previous gamma, G (rows^2 in a KN_SAP_MAX_ROWS^2 slot) */
  double *vc, *dvc, *gamma, *gamma_prev, *G, *w;
  double* Gref; /* G when H was last factored (the low-rank set's reference) */
  /* per constraint: its parameters (kn_sap_constraint_self, cached), and for a 1-row constraint on
   * one clique whose J row has a single non-zero (PD, joint limit): that dof's reduced index and
   * the entry, else sdof = -1 (the single-dof fast path of apply_J, apply_JT and assemble_H) */
  const void** self;
  int* sdof;
  double* sval;
  unsigned char* data; /* per-solve data, KN_SAP_MAX_DATA bytes per constraint */
  /* per constraint side (2 i + t) on a large clique: its J block's nonzero columns, cols[cstart ..
   * cstart + ccount), found once per solve; ccount = -1: none kept (use the dense loops). A
   * particle's Jacobian touches a few dozen of a deformable clique's thousands of DoFs. */
  int *cstart, *ccount, *jvstart;
  int* cols;            /* separate allocation, grows with the problem */
  double* jval;         /* their entries, rows x count row-major from jvstart (separate, grows) */
  size_t cap_cols, cap_jval;
  double *Hdiag_store, *Hoff_store;
  double **Hdiag, **Hoff;
  const int **pcolptr, **prowidx; /* per participating clique: a sparse one's pattern, else NULL */
  /* sparse cliques' Newton blocks (assemble_sparse): per DoF of each participating sparse clique,
   * from lstart[lbase[k] + j], the constraint sides (h = 2 i + t) whose J has column j there, and
   * its place t in their column lists (lent, pairs); gj holds G J per side in jval's layout; map
   * is a row's place in the column being assembled */
  int *lbase, *lstart, *lent, *map;
  double* gj;
  size_t cap_lstart, cap_lent, cap_map, cap_gj;
  size_t bytes;        /* size of the single block that holds everything above */
  void* block;
};

kn_sap_solver* kn_sap_solver_create(void) {
  kn_sap_solver* s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->ls = kn_sap_linsolve_create();
  s->lr = kn_sap_lowrank_create();
  if (!s->ls || !s->lr) {
    kn_sap_linsolve_free(s->ls);
    kn_sap_lowrank_free(s->lr);
    free(s);
    return NULL;
  }
  return s;
}

void kn_sap_solver_free(kn_sap_solver* s) {
  if (!s) return;
  kn_sap_linsolve_free(s->ls);
  kn_sap_lowrank_free(s->lr);
  free(s->cols);
  free(s->jval);
  free(s->lstart);
  free(s->lent);
  free(s->map);
  free(s->gj);
  free(s->block);
  free(s);
}

typedef struct {
  const kn_sap_problem* prob;
  kn_sap_solver* s;
  int n, np, nc, npairs;
} ctx;

/* carve one allocation into the workspace arrays; grows only when the problem does */
static kn_status workspace(kn_sap_solver* s, const kn_sap_problem* p, int np, int n, int npairs, size_t hdiag,
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

//---- products with A and J over the participating cliques ----

static const double* clique_A(const kn_sap_problem* p, int c) { return p->reals + p->cliques[c].A_at; }
/* constraint i's dense J block on side s, NULL for a side given by node */
static const double* con_J(const kn_sap_problem* p, int i, int s) {
  size_t at = p->constraints[i].J_at[s];
  return at == (size_t)-1 ? NULL : p->reals + at;
}

/* y = A x (reduced vectors; BLAS dsymv on each clique's lower triangle, sap/pcg.c) */
static void apply_A(const ctx* c, const double* x, double* y) {
  memset(y, 0, (size_t)c->n * sizeof(double));
  for (int k = 0; k < c->np; k++) {
    int q = c->s->part[k], o = c->s->roff[q];
    kn_sap_clique_matvec_add(c->prob, q, x + o, y + o);
  }
}

/* vc = J_i x for constraint i (its rows of the 3 slots it has) */
static void J_times(const ctx* c, int i, const double* x, double* vc) {
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
    const double* J = con_J(p, i, s);
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
static void apply_J(const ctx* c, const double* x, double* out) {
  for (int i = 0; i < c->nc; i++) J_times(c, i, x, out + KN_SAP_MAX_ROWS * i);
}

/* 1 when all n entries of x are zero. A separated contact has gamma = 0 and G = 0: its J^T G J and
 * J^T gamma would only add +-0, which changes no sum that is not itself zero (and a sum that
 * starts at +0 never becomes -0), so skipping it leaves every product bit for bit as it was. On
 * the pouring example, with its 2 cm contact margin, 3 of 4 constraints are such. */
static int all_zero(const double* x, int n) {
  for (int k = 0; k < n; k++)
    if (x[k] != 0) return 0;
  return 1;
}

/* y += J_i^T g for constraint i */
static void add_JT(const ctx* c, int i, const double* g, double* y) {
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
    const double* J = con_J(p, i, s);
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
static void apply_JT(const ctx* c, const double* gamma, double* y) {
  memset(y, 0, (size_t)c->n * sizeof(double));
  for (int i = 0; i < c->nc; i++) {
    const double* g = gamma + KN_SAP_MAX_ROWS * i;
    if (!all_zero(g, c->prob->constraints[i].rows)) add_JT(c, i, g, y);
  }
}

/* (v_c of every constraint) => gamma, G, sum of l_i (one pass, Drake's
 * CalcImpulsesAndConstraintsHessian) */
static double eval_constraints(const ctx* c, const double* vc, double* gamma, double* G) {
  const kn_sap_problem* p = c->prob;
  double l = 0;
  for (int i = 0; i < c->nc; i++) {
    const kn_sap_constraint* k = &p->constraints[i];
    double li = 0;
    k->ops->eval(c->s->self[i], c->s->data + (size_t)i * KN_SAP_MAX_DATA, vc + KN_SAP_MAX_ROWS * i, &li,
                 gamma + KN_SAP_MAX_ROWS * i, G ? G + GSLOT * i : NULL);
    l += li;
  }
  return l;
}

/* v => l(v), grad = gA - J^T gamma, gA = A (v - v*), p = A v = gA + A v* (A v* once per solve, in
 * Avstar), j = J^T gamma, and v_c, gamma, G (§4.2). gA is a product of its own each time, not
 * gA + alpha A dv: A (v - v*) is a small difference of large terms on a stiff deformable clique,
 * and the round-off of an update (eps |A| |dv|) after a long first step stays above SAP's
 * tolerance (seen: 6e-4 against 2e-7). */
static double eval_all(const ctx* c) {
  kn_sap_solver* s = c->s;
  double* dvs = s->vtmp;
  for (int k = 0; k < c->n; k++) dvs[k] = s->v[k] - s->vstar[k];
  apply_A(c, dvs, s->gA);
  for (int k = 0; k < c->n; k++) s->p[k] = s->gA[k] + s->Avstar[k];
  double lA = 0.5 * kn_sap_dot(dvs, s->gA, c->n);
  apply_J(c, s->v, s->vc);
  double lR = eval_constraints(c, s->vc, s->gamma, s->G);
  apply_JT(c, s->gamma, s->j);
  for (int k = 0; k < c->n; k++) s->grad[k] = s->gA[k] - s->j[k];
  return lA + lR;
}

/* s->G <= each kind's first_G at the current v_c (where it has one): the first Newton step of a
 * large solve (kn_sap_kind_ops.first_G) */
static void predict_G(const ctx* c) {
  const kn_sap_problem* p = c->prob;
  for (int i = 0; i < c->nc; i++) {
    const kn_sap_kind_ops* ops = p->constraints[i].ops;
    if (ops->first_G)
      ops->first_G(c->s->self[i], c->s->data + (size_t)i * KN_SAP_MAX_DATA, c->s->vc + KN_SAP_MAX_ROWS * i,
                   c->s->G + GSLOT * i);
  }
}

//---- Hessian H = A + sum_i J_i^T G_i J_i in clique blocks ----
/* Only the lower triangle of the diagonal blocks is assembled: both factorizations read nothing
 * else (kn_chol_factor on the dense path, the lower CSC on CHOLMOD's). */

/* out (na x nb) += Ja^T G Jb with Ja rows x na, Jb rows x nb, G rows x rows; lower = 1 (a diagonal
 * block, Ja = Jb): only the entries (a, t) with t <= a. Inlined by add_JtGJ with rows a constant
 * for contacts (3), so that the row sums unroll and the column loops vectorize; every sum keeps
 * the order 0 + x_0 + x_1 + ..., so the result does not depend on which copy ran. */
static inline void JtGJ_rows(const double* Ja, int na, const double* G, const double* Jb, int nb, const int rows,
                             int lower, double* out) {
  double GJ[KN_SAP_MAX_ROWS * 64];
  for (int t0 = 0; t0 < nb; t0 += 64) {
    int tn = nb - t0 < 64 ? nb - t0 : 64;
    for (int r = 0; r < rows; r++)
      for (int t = 0; t < tn; t++) {
        double sum = 0;
        for (int q = 0; q < rows; q++) sum += G[r * rows + q] * Jb[q * nb + t0 + t];
        GJ[r * 64 + t] = sum;
      }
    for (int a = 0; a < na; a++) {
      double ja[KN_SAP_MAX_ROWS];
      int any = 0;
      for (int r = 0; r < rows; r++) {
        ja[r] = Ja[r * na + a];
        any |= ja[r] != 0;
      }
      if (!any) continue;
      int te = lower ? (a + 1 - t0 < tn ? a + 1 - t0 : tn) : tn;
      double* o = out + a * nb + t0;
      for (int t = 0; t < te; t++) {
        double sum = 0;
        for (int r = 0; r < rows; r++) sum += ja[r] * GJ[r * 64 + t];
        o[t] += sum;
      }
    }
  }
}

/* The nonzero columns of a rows x n block J (up to cap of them, in order): their count, or -1 if more. */
static int nonzero_columns(const double* J, int n, int rows, int* col, int cap) {
  int k = 0;
  for (int t = 0; t < n; t++) {
    int any = 0;
    for (int r = 0; r < rows; r++) any |= J[r * n + t] != 0;
    if (!any) continue;
    if (k == cap) return -1;
    col[k++] = t;
  }
  return k;
}

/* out += Ja^T G Jb over the nonzero columns only: a particle's or a vertex's Jacobian touches a few
 * dozen of a deformable clique's thousands of DoFs. Each entry gets the same sum as the dense loop. */
static int JtGJ_sparse(const double* Ja, int na, const int* cla, const double* vla, int nca, const double* G,
                       const double* Jb, int nb, const int* clb, const double* vlb, int ncb, int rows, int lower,
                       double* out) {
  enum { CAP = 96 };
  int ca[CAP], cb[CAP];
  double va[KN_SAP_MAX_ROWS * CAP], vb[KN_SAP_MAX_ROWS * CAP];
  /* the columns and their entries found once per solve (kn_sap_solve, compact: the dense rows
   * are 3 x thousands, mostly zeros), or found here */
  int same = Ja == Jb && cla == clb;
  int ka = cla ? (nca <= CAP ? nca : -1) : nonzero_columns(Ja, na, rows, ca, CAP);
  if (ka < 0) return 0;
  if (cla) memcpy(ca, cla, (size_t)ka * sizeof(int));
  for (int r = 0; r < rows; r++)
    for (int i = 0; i < ka; i++) va[r * CAP + i] = cla ? vla[r * nca + i] : Ja[r * na + ca[i]];
  int kb = same ? ka : clb ? (ncb <= CAP ? ncb : -1) : nonzero_columns(Jb, nb, rows, cb, CAP);
  if (kb < 0) return 0;
  if (!same) {
    if (clb) memcpy(cb, clb, (size_t)kb * sizeof(int));
    for (int r = 0; r < rows; r++)
      for (int t = 0; t < kb; t++) vb[r * CAP + t] = clb ? vlb[r * ncb + t] : Jb[r * nb + cb[t]];
  }
  const int* cbb = same ? ca : cb;
  const double* vbb = same ? va : vb;
  double GJ[KN_SAP_MAX_ROWS * CAP];
  for (int r = 0; r < rows; r++)
    for (int t = 0; t < kb; t++) {
      double sum = 0;
      for (int q = 0; q < rows; q++) sum += G[r * rows + q] * vbb[q * CAP + t];
      GJ[r * CAP + t] = sum;
    }
  for (int i = 0; i < ka; i++) {
    int a = ca[i];
    double ja[KN_SAP_MAX_ROWS];
    for (int r = 0; r < rows; r++) ja[r] = va[r * CAP + i];
    double* o = out + (size_t)a * nb;
    for (int t = 0; t < kb && (!lower || cbb[t] <= a); t++) {
      double sum = 0;
      for (int r = 0; r < rows; r++) sum += ja[r] * GJ[r * CAP + t];
      o[cbb[t]] += sum;
    }
  }
  return 1;
}

/* out += Ja^T G Jb (lower = 0) where a side is either its nonzero columns (cl, vl, nc) or dense (J):
 * the general case, for a side given by node beside one with more nonzero columns than
 * JtGJ_sparse keeps */
static void JtGJ_general(const double* Ja, int na, const int* cla, const double* vla, int nca, const double* G,
                         const double* Jb, int nb, const int* clb, const double* vlb, int ncb, int rows, double* out) {
  int ka = Ja ? na : nca, kb = Jb ? nb : ncb;
  for (int u = 0; u < kb; u++) {
    double gj[KN_SAP_MAX_ROWS];
    for (int r = 0; r < rows; r++) {
      double sum = 0;
      for (int q = 0; q < rows; q++) sum += G[r * rows + q] * (Jb ? Jb[q * nb + u] : vlb[q * ncb + u]);
      gj[r] = sum;
    }
    int cb = Jb ? u : clb[u];
    for (int i = 0; i < ka; i++) {
      double sum = 0;
      for (int r = 0; r < rows; r++) sum += (Ja ? Ja[r * na + i] : vla[r * nca + i]) * gj[r];
      out[(size_t)(Ja ? i : cla[i]) * (size_t)nb + (size_t)cb] += sum;
    }
  }
}

/* cla, clb: the nonzero columns of Ja, Jb (nca, ncb of them) when known, else NULL; vla, vlb their
 * entries (rows x nca, rows x ncb). Ja or Jb NULL: a side given by node (its columns known). */
static void add_JtGJ(const double* Ja, int na, const int* cla, const double* vla, int nca, const double* G,
                     const double* Jb, int nb, const int* clb, const double* vlb, int ncb, int rows, int lower,
                     double* out) {
  if ((na > 192 || nb > 192 || !Ja || !Jb) && JtGJ_sparse(Ja, na, cla, vla, nca, G, Jb, nb, clb, vlb, ncb, rows, lower, out))
    return;
  if (!Ja || !Jb) { /* a side given by node: never the lower (diagonal) case here, JtGJ_sparse takes those */
    JtGJ_general(Ja, na, cla, vla, nca, G, Jb, nb, clb, vlb, ncb, rows, out);
    return;
  }
  if (rows == 3)
    JtGJ_rows(Ja, na, G, Jb, nb, 3, lower, out);
  else
    JtGJ_rows(Ja, na, G, Jb, nb, rows, lower, out);
}

/* A sparse clique's block of H in A's pattern (lower triangle, by columns): A, then for each column
 * j the J^T G J entries of the constraint sides with a column at j, in constraint order, placed
 * through map. Each entry (a, b) gets sum_r J[r][a] (G J)[r][b], as add_JtGJ would. */
static kn_status assemble_sparse(const ctx* c, int k, kn_error* err) {
  const kn_sap_problem* p = c->prob;
  kn_sap_solver* s = c->s;
  int q = s->part[k], nq = p->cliques[q].nv;
  const int *cp = s->pcolptr[k], *ri = s->prowidx[k];
  const int* ls = s->lstart + s->lbase[k];
  double* H = s->Hdiag[k];
  memcpy(H, clique_A(p, q), (size_t)cp[nq] * sizeof(double));
  /* G J once per constraint side (rows x count, as jval) */
  for (int e = 0; e < ls[nq]; e++) {
    int h = s->lent[2 * e], t = s->lent[2 * e + 1];
    if (t != 0) continue; /* each side once: at its first column */
    int i = h / 2, rows = p->constraints[i].rows, cnt = s->ccount[h];
    const double* G = s->G + GSLOT * i;
    const double* jv = s->jval + s->jvstart[h];
    double* gj = s->gj + s->jvstart[h];
    const int* ncol;
    const double *nw, *B;
    if (kn_sap_side_nodal(p, i, h % 2, &ncol, &nw, &B)) {
      /* J = [w_a B] by node: J^T G J's block (a, b) is w_a w_b M with M = B^T G B, kept in gj */
      double GB[9];
      for (int r = 0; r < 3; r++)
        for (int d = 0; d < 3; d++) GB[3 * r + d] = G[3 * r] * B[d] + G[3 * r + 1] * B[3 + d] + G[3 * r + 2] * B[6 + d];
      for (int e2 = 0; e2 < 3; e2++)
        for (int d = 0; d < 3; d++) gj[3 * e2 + d] = B[e2] * GB[d] + B[3 + e2] * GB[3 + d] + B[6 + e2] * GB[6 + d];
      continue;
    }
    for (int r = 0; r < rows; r++)
      for (int u = 0; u < cnt; u++) {
        double sum = 0;
        for (int m = 0; m < rows; m++) sum += G[r * rows + m] * jv[m * cnt + u];
        gj[r * cnt + u] = sum;
      }
  }
  for (int j = 0; j < nq; j++) s->map[j] = -1;
  for (int j = 0; j < nq; j++) {
    for (int z = cp[j]; z < cp[j + 1]; z++) s->map[ri[z]] = z;
    for (int e = ls[j]; e < ls[j + 1]; e++) {
      int h = s->lent[2 * e], t = s->lent[2 * e + 1], i = h / 2, rows = p->constraints[i].rows;
      if (all_zero(s->G + GSLOT * i, rows * rows)) continue;
      int cnt = s->ccount[h];
      const int* col = s->cols + s->cstart[h];
      const double* jv = s->jval + s->jvstart[h];
      const double* gj = s->gj + s->jvstart[h];
      const int* ncol;
      const double *nw, *B;
      if (kn_sap_side_nodal(p, i, h % 2, &ncol, &nw, &B)) {
        /* column t = 3 b + d: entry u = 3 a + c is w_a (w_b M[c][d]) */
        int b = t / 3, d = t % 3;
        double mcol[3] = {nw[b] * gj[d], nw[b] * gj[3 + d], nw[b] * gj[6 + d]};
        for (int u = t; u < cnt; u++) {
          int z = s->map[col[u]];
          if (z < cp[j])
            return kn_fail(err, KN_ERR_INVALID,
                           "sap: constraint %d couples DoFs %d and %d of sparse clique %d, which its A does not couple",
                           i, col[u], j, q);
          H[z] += nw[u / 3] * mcol[u % 3];
        }
        continue;
      }
      for (int u = t; u < cnt; u++) {
        int z = s->map[col[u]];
        if (z < cp[j])
          return kn_fail(err, KN_ERR_INVALID,
                         "sap: constraint %d couples DoFs %d and %d of sparse clique %d, which its A does not couple", i,
                         col[u], j, q);
        double sum = 0;
        for (int r = 0; r < rows; r++) sum += jv[r * cnt + u] * gj[r * cnt + t];
        H[z] += sum;
      }
    }
  }
  return KN_OK;
}

static kn_status assemble_H(const ctx* c, kn_error* err) {
  const kn_sap_problem* p = c->prob;
  kn_sap_solver* s = c->s;
  for (int k = 0; k < c->np; k++) {
    int q = s->part[k], nq = p->cliques[q].nv;
    if (s->pcolptr[k]) {
      kn_status st = assemble_sparse(c, k, err);
      if (st) return st;
      continue;
    }
    memcpy(s->Hdiag[k], clique_A(p, q), (size_t)nq * (size_t)nq * sizeof(double));
  }
  for (int k = 0; k < c->npairs; k++) {
    int na = s->psize[s->pairs[2 * k]], nb = s->psize[s->pairs[2 * k + 1]];
    memset(s->Hoff[k], 0, (size_t)na * (size_t)nb * sizeof(double));
  }
  for (int i = 0; i < c->nc; i++) {
    const kn_sap_constraint* k = &p->constraints[i];
    const double* G = s->G + GSLOT * i;
    if (all_zero(G, k->rows * k->rows)) continue;
    if (s->sdof[i] >= 0) {
      /* J = j e_a: J^T G J is the single entry j (G j) at (a, a). add_JtGJ would add
       * 0 + j (0 + G j) there and +0 to the rest of row a (turning a -0 into +0): the same here. */
      int q = k->clique[0], nq = p->cliques[q].nv, a = s->sdof[i] - s->roff[q];
      double* row = s->Hdiag[s->pidx[q]] + (size_t)a * (size_t)nq;
      double j = s->sval[i];
      for (int t = 0; t < a; t++) row[t] += 0.0;
      row[a] += 0.0 + j * (0.0 + G[0] * j);
      continue;
    }
    for (int t = 0; t < 2; t++) {
      if (k->clique[t] < 0 || p->cliques[k->clique[t]].sparse) continue; /* assemble_sparse's */
      int q = k->clique[t], nq = p->cliques[q].nv;
      int h = 2 * i + t, known = s->ccount[h] >= 0;
      const int* cl = known ? s->cols + s->cstart[h] : NULL;
      const double* vl = known ? s->jval + s->jvstart[h] : NULL;
      add_JtGJ(con_J(p, i, t), nq, cl, vl, s->ccount[h], G, con_J(p, i, t), nq, cl, vl, s->ccount[h], k->rows, 1,
               s->Hdiag[s->pidx[q]]);
    }
    if (k->clique[1] >= 0) {
      /* the pair block is stored with the lower participating index first; G is symmetric */
      int a = 0, b = 1;
      if (s->pidx[k->clique[0]] > s->pidx[k->clique[1]]) a = 1, b = 0;
      int qa = k->clique[a], qb = k->clique[b];
      int ha = 2 * i + a, hb = 2 * i + b;
      const int* cla = s->ccount[ha] >= 0 ? s->cols + s->cstart[ha] : NULL;
      const int* clb = s->ccount[hb] >= 0 ? s->cols + s->cstart[hb] : NULL;
      const double* vla = cla ? s->jval + s->jvstart[ha] : NULL;
      const double* vlb = clb ? s->jval + s->jvstart[hb] : NULL;
      add_JtGJ(con_J(p, i, a), p->cliques[qa].nv, cla, vla, s->ccount[ha], G, con_J(p, i, b), p->cliques[qb].nv, clb,
               vlb, s->ccount[hb], k->rows, 0, s->Hoff[s->cpair[i]]);
    }
  }
  return KN_OK;
}

/* y = H x = A x + sum_i J_i^T G_i J_i x without assembling H (the CG products of the inexact
 * Newton: O(n^2) for A plus the sparse J, against O(n^2) plus the J^T G J outer products of an
 * assembly). Uses dvc and vtmp, free while the direction is being computed. */
static void apply_H_unassembled(void* user, const double* x, double* y) {
  const ctx* c = user;
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
    const double* G = s->G + GSLOT * i;
    if (all_zero(G, rows * rows)) continue;
    double* u = s->dvc + KN_SAP_MAX_ROWS * i;
    J_times(c, i, x, u);
    double gu[KN_SAP_MAX_ROWS];
    for (int r = 0; r < rows; r++) {
      double sum = 0;
      for (int t = 0; t < rows; t++) sum += G[r * rows + t] * u[t];
      gu[r] = sum;
    }
    add_JT(c, i, gu, s->vtmp);
  }
  for (int k = 0; k < c->n; k++) y[k] += s->vtmp[k];
}

//---- later Newton iterations from an earlier factor (sap/lowrank.c) ----

/* Rows the low-rank set may hold before H is refactored instead: n / LOWRANK_BUDGET_DIVISOR. A row
 * costs one forward solve (n^2 flops, BLAS3) once, and each iteration factors an r x r matrix
 * (2/3 r^3); a factorization costs n^3 / 3 plus the assembly of H. Measured on the shake, pouring
 * and rolling examples (s per step, divisor 2 / 3 / 4): 0.199 / 0.196 / 0.200, 0.134 / 0.196 /
 * 0.195, 0.225 / 0.224 / 0.286 (the machine's noise is 10-30 %). */
#define LOWRANK_BUDGET_DIVISOR 2

/* ... and no more than keeps the r x r LU of each iteration ((2/3) r^3 flops) within half a
 * factorization of H: on CHOLMOD's path a factorization of an MPM grid's H costs far less than
 * n^3 / 3 (dense, where the bound is 0.63 n and n / 2 rules). Measured on the grid route of the
 * rolling bench scene and the shake and pouring examples (s per step), the bound's factor 1 / 0.5 /
 * 0.25 (r^3 within a whole, a half, a quarter factorization) and n / 2 alone: rolling 0.275 /
 * 0.214 / 0.216, 0.448; shake 0.076 / 0.071 / 0.093, 0.077; pouring 0.060 / 0.074 / 0.066, 0.065. */
static int lowrank_budget(const ctx* c) {
  double lu = cbrt(0.75 * kn_sap_linsolve_flops(c->s->ls));
  int half = c->n / LOWRANK_BUDGET_DIVISOR;
  return lu < half ? (int)lu : half;
}

/* 1 when constraint i's G is not G_ref's, bit for bit */
static int changed(const ctx* c, int i) {
  int rows = c->prob->constraints[i].rows;
  return memcmp(c->s->G + GSLOT * i, c->s->Gref + GSLOT * i, (size_t)(rows * rows) * sizeof(double)) != 0;
}

/* the constraints whose G has left G_ref join the low-rank set, and 1 is returned: the set then
 * gives H_k^-1 exactly. Unless they do not all fit its budget: then none joins, 0 is returned, and
 * the preconditioner stays H_ref with the set's updates at the current G (SPD, of mixed G), which
 * CG solves to its tolerance in a few products or H is refactored at the next iteration, as before
 * the low-rank route. Measured (s per step, Newton iterations,
 * factorizations per step): refactoring at once instead, bench/mpm.c's rolling went 0.41 -> 0.58
 * (24.4 -> 19.2 iterations, 7.1 -> 16.6 factorizations: 170 contacts slide); filling the set up to
 * its budget instead made the rolling example 0.23 -> 0.33 (the budget's columns cost more than
 * the products they saved). */
static int lowrank_update(const ctx* c) {
  kn_sap_solver* s = c->s;
  int need = 0;
  for (int i = 0; i < c->nc; i++) {
    int rows = c->prob->constraints[i].rows;
    if (!kn_sap_lowrank_has(s->lr, i) && changed(c, i)) need += rows;
  }
  if (kn_sap_lowrank_rows(s->lr) + need > kn_sap_lowrank_capacity(s->lr)) return 0;
  for (int i = 0; i < c->nc; i++) {
    if (kn_sap_lowrank_has(s->lr, i) || !changed(c, i)) continue;
    int rows = c->prob->constraints[i].rows;
    double* cols = kn_sap_lowrank_add(s->lr, i, rows);
    double e[KN_SAP_MAX_ROWS] = {0};
    for (int r = 0; r < rows; r++) {
      e[r] = 1;
      add_JT(c, i, e, cols + (size_t)r * (size_t)c->n);
      e[r] = 0;
    }
  }
  return 1;
}

/* z => M z for CG: H_k^-1 z by the low-rank route (exact up to round-off), else the factor's */
static kn_status precondition(void* user, double* z, kn_error* err) {
  const ctx* c = user;
  return kn_sap_lowrank_solve(c->s->lr, c->s->ls, c->s->G, c->s->Gref, GSLOT, z, err);
}

//---- exact line search (§4.4) ----

typedef struct {
  double lA0, dp_dv0, dAd; /* l_A(0), dp . (v - v*), dv^T A dv */
} line;

/* alpha => l(alpha), l'(alpha), l''(alpha) with only the constraints re-evaluated (O(n)) */
static void line_eval(const ctx* c, const line* L, double alpha, double* l, double* dl, double* d2l) {
  kn_sap_solver* s = c->s;
  double lR = 0, dlR = 0, d2lR = 0;
  const kn_sap_problem* p = c->prob;
  for (int i = 0; i < c->nc; i++) {
    const kn_sap_constraint* k = &p->constraints[i];
    double vc[KN_SAP_MAX_ROWS], g[KN_SAP_MAX_ROWS], G[KN_SAP_MAX_ROWS * KN_SAP_MAX_ROWS], li = 0;
    const double* dvc = s->dvc + KN_SAP_MAX_ROWS * i;
    const int rows = k->rows;
    if (rows == 1) { /* PD, limits: the loops below with one row, spelled out (same operations) */
      vc[0] = s->vc[KN_SAP_MAX_ROWS * i] + alpha * dvc[0];
      k->ops->eval(s->self[i], s->data + (size_t)i * KN_SAP_MAX_DATA, vc, &li, g, G);
      lR += li;
      dlR -= dvc[0] * g[0];
      d2lR += dvc[0] * G[0] * dvc[0];
      continue;
    }
    for (int r = 0; r < rows; r++) vc[r] = s->vc[KN_SAP_MAX_ROWS * i + r] + alpha * dvc[r];
    k->ops->eval(s->self[i], s->data + (size_t)i * KN_SAP_MAX_DATA, vc, &li, g, G);
    lR += li;
    for (int r = 0; r < rows; r++) {
      dlR -= dvc[r] * g[r];
      for (int q = 0; q < rows; q++) d2lR += dvc[r] * G[r * rows + q] * dvc[q];
    }
  }
  *l = L->lA0 + alpha * L->dp_dv0 + 0.5 * alpha * alpha * L->dAd + lR;
  *dl = L->dp_dv0 + alpha * L->dAd + dlR;
  *d2l = L->dAd + d2lR;
}

/* (l'(0) < 0) => alpha minimizing l(v + alpha dv) on [0, alpha_max]: Newton-Raphson on l' with
 * bisection fallback (rtsafe), f = l' / (-l'(0)) normalized so that f(0) = -1. */
static kn_status line_search(const ctx* c, const line* L, double dl0, const kn_sap_options* o, double* alpha_out,
                             int* iters, kn_error* err) {
  double amax = o->ls_alpha_max, lm, dlm, d2lm;
  *iters = 1;
  line_eval(c, L, amax, &lm, &dlm, &d2lm);
  if (dlm <= 0) { /* the minimum lies beyond alpha_max */
    *alpha_out = amax;
    return KN_OK;
  }
  /* tight-tolerance escape: the expected decrease is below round-off of the cost */
  if (-dl0 < o->cost_abs_tolerance + o->cost_rel_tolerance * lm) {
    *alpha_out = 1.0;
    return KN_OK;
  }
  double scale = -dl0;
  double a0 = fmin(-dl0 / d2lm, amax); /* Drake: curvature at alpha_max */
  if (isnan(a0)) return kn_fail(err, KN_ERR_NUMERIC, "sap: line search initial guess is NaN");
  double a = a0, lo = 0, hi = amax;
  double x_tol = 1e-8 * a0, f_tol = 1e-8;
  double minus_dx = lo - hi, minus_dx_prev = minus_dx;
  for (int k = 0; k < o->ls_max_iterations; k++) {
    double l, dl, d2l;
    line_eval(c, L, a, &l, &dl, &d2l);
    (*iters)++;
    double f = dl / scale, df = d2l / scale;
    if (f < 0)
      lo = a;
    else
      hi = a;
    if (fabs(f) < f_tol) {
      *alpha_out = a;
      return KN_OK;
    }
    /* bisect when Newton is slow (|f| does not halve) or leaves the bracket */
    int slow = 2 * fabs(f) > fabs(minus_dx_prev * df);
    minus_dx_prev = minus_dx;
    double an = a - f / df;
    if (slow || !(lo <= an && an <= hi)) {
      minus_dx = 0.5 * (lo - hi);
      a = lo - minus_dx;
    } else {
      minus_dx = f / df;
      a = an;
    }
    if (fabs(minus_dx) < x_tol) {
      *alpha_out = a;
      return KN_OK;
    }
  }
  return kn_fail(err, KN_ERR_NUMERIC, "sap: exact line search did not converge in %d iterations (bracket [%g, %g])",
                 o->ls_max_iterations, lo, hi);
}

//---- failure diagnostics ----

/* The constraint most responsible for the failure: the first with a non-finite impulse or
 * velocity; else, on the participating clique with the largest scaled momentum residual
 * ||D grad||_c, the constraint whose impulse moved most in the last step, measured as
 * sqrt(w_i) |delta gamma_i| (the velocity change it causes, comparable across kinds); before any
 * step, sqrt(w_i) |gamma_i|. */
static int worst_constraint(const ctx* c, int have_prev) {
  kn_sap_solver* s = c->s;
  const kn_sap_problem* p = c->prob;
  for (int i = 0; i < c->nc; i++)
    for (int r = 0; r < p->constraints[i].rows; r++)
      if (!isfinite(s->gamma[KN_SAP_MAX_ROWS * i + r]) || !isfinite(s->vc[KN_SAP_MAX_ROWS * i + r])) return i;
  int worst_clique = -1;
  double rmax = -1;
  for (int k = 0; k < c->np; k++) {
    int q = s->part[k];
    double rc = kn_sap_scaled_norm(s->D + s->roff[q], s->grad + s->roff[q], p->cliques[q].nv);
    if (rc > rmax) rmax = rc, worst_clique = q;
  }
  int worst = 0;
  double dmax = -1;
  for (int i = 0; i < c->nc; i++) {
    const kn_sap_constraint* k = &p->constraints[i];
    if (k->clique[0] != worst_clique && k->clique[1] != worst_clique) continue;
    double d = 0;
    for (int r = 0; r < k->rows; r++) {
      double g = s->gamma[KN_SAP_MAX_ROWS * i + r], x = have_prev ? g - s->gamma_prev[KN_SAP_MAX_ROWS * i + r] : g;
      d += x * x;
    }
    d = sqrt(s->w[i] * d);
    if (d > dmax) dmax = d, worst = i;
  }
  return worst;
}

static kn_status fail_at(const ctx* c, int have_prev, kn_error* err, const char* reason) {
  char why[KN_ERROR_MSG / 2];
  if (!strncmp(reason, "sap: ", 5)) reason += 5;
  snprintf(why, sizeof why, "%s", reason); /* reason may be err->msg itself */
  int i = worst_constraint(c, have_prev);
  const kn_sap_constraint* k = &c->prob->constraints[i];
  return kn_fail(err, KN_ERR_NUMERIC, "sap: %s; worst constraint #%d (%s, cliques %d/%d)", why, i,
                 kn_sap_kind_name(k->ops->kind), k->clique[0], k->clique[1]);
}

static int all_finite(const double* x, int n) {
  for (int k = 0; k < n; k++)
    if (!isfinite(x[k])) return 0;
  return 1;
}

static kn_status grow_ints(int** a, size_t* cap, size_t need, kn_error* err) {
  if (need <= *cap) return KN_OK;
  int* b = realloc(*a, need * sizeof(int));
  if (!b) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory (%zu indices for the sparse Newton blocks)", need);
  *a = b;
  *cap = need;
  return KN_OK;
}

/* per participating sparse clique and per DoF j, the constraint sides with a J column at j (in
 * constraint order: a deterministic sum) and that column's place in their lists (assemble_sparse) */
static kn_status sparse_lists(const ctx* c, kn_error* err) {
  kn_sap_solver* s = c->s;
  const kn_sap_problem* p = c->prob;
  size_t nstart = 0, nent = 0, nmap = 0, ngj = 0;
  for (int k = 0; k < c->np; k++) {
    s->lbase[k] = (int)nstart;
    if (!s->pcolptr[k]) continue;
    nstart += (size_t)s->psize[k] + 1;
    nmap = nmap > (size_t)s->psize[k] ? nmap : (size_t)s->psize[k];
  }
  if (nstart == 0) return KN_OK;
  for (int h = 0; h < 2 * c->nc; h++)
    if (s->ccount[h] >= 0) {
      nent += (size_t)s->ccount[h];
      size_t end = (size_t)s->jvstart[h] + (size_t)s->ccount[h] * (size_t)p->constraints[h / 2].rows;
      ngj = ngj > end ? ngj : end;
    }
  kn_status st = grow_ints(&s->lstart, &s->cap_lstart, nstart, err);
  if (!st) st = grow_ints(&s->lent, &s->cap_lent, 2 * nent + 2, err);
  if (!st) st = grow_ints(&s->map, &s->cap_map, nmap, err);
  if (st) return st;
  if (ngj > s->cap_gj) {
    double* g = realloc(s->gj, ngj * sizeof(double));
    if (!g) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory (G J of %zu entries)", ngj);
    s->gj = g;
    s->cap_gj = ngj;
  }
  memset(s->lstart, 0, nstart * sizeof(int));
  /* counting sort by column: counts, prefix sums, then the entries in constraint order */
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < c->nc; i++)
      for (int t = 0; t < 2; t++) {
        int q = p->constraints[i].clique[t], h = 2 * i + t;
        if (q < 0 || !p->cliques[q].sparse) continue;
        int* ls = s->lstart + s->lbase[s->pidx[q]];
        const int* col = s->cols + s->cstart[h];
        for (int u = 0; u < s->ccount[h]; u++) {
          if (pass == 0) {
            ls[col[u] + 1]++;
            continue;
          }
          int e = ls[col[u]]++;
          s->lent[2 * e] = h, s->lent[2 * e + 1] = u;
        }
      }
    for (int k = 0; k < c->np; k++) {
      if (!s->pcolptr[k]) continue;
      int* ls = s->lstart + s->lbase[k];
      int nq = s->psize[k];
      if (pass == 0) {
        for (int j = 0; j < nq; j++) ls[j + 1] += ls[j];
      } else { /* the fill advanced each start to the next one's: shift back */
        for (int j = nq; j > 0; j--) ls[j] = ls[j - 1];
        ls[0] = 0;
      }
    }
  }
  return KN_OK;
}

//---- the solve ----

static int cmp_pair(const void* a, const void* b) {
  const int *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return (x[1] > y[1]) - (x[1] < y[1]);
}

kn_status kn_sap_solve(kn_sap_solver* s, const kn_sap_problem* p, const kn_sap_options* opt, const double* v_guess,
                       double* v_out, double* gamma_out, kn_sap_stats* stats, kn_error* err) {
  kn_sap_options o = opt ? *opt : kn_sap_options_default();
  kn_sap_stats st = {0};
  st.num_constraints = p->num_constraints;
  st.num_impulses = p->num_impulses;
  st.num_cliques = p->num_cliques;
  st.nv = p->nv;
  if (stats) *stats = st;
  if (!(p->dt > 0)) return kn_fail(err, KN_ERR_INVALID, "sap: time step %g, expected > 0", p->dt);
  if (o.max_iterations < 0 || !(o.ls_alpha_max > 0) || o.ls_max_iterations < 1)
    return kn_fail(err, KN_ERR_INVALID, "sap: options: expected max_iterations >= 0, ls_alpha_max > 0, "
                                        "ls_max_iterations >= 1");
  if (v_guess && !all_finite(v_guess, p->nv))
    return kn_fail(err, KN_ERR_INVALID, "sap: the initial guess has non-finite entries");

  /* §4.1.6: no constraints, v = v* */
  if (p->num_constraints == 0) {
    for (int q = 0; q < p->num_cliques; q++)
      memcpy(v_out + p->cliques[q].offset, p->reals + p->cliques[q].vstar_at,
             (size_t)p->cliques[q].nv * sizeof(double));
    return KN_OK;
  }

  //---- participating cliques and coupled pairs (§4.1.1-2) ----
  int nc = p->num_constraints;
  int np = 0, npairs_max = 0;
  for (int i = 0; i < nc; i++) npairs_max += p->constraints[i].clique[1] >= 0;
  int n = 0;
  /* size the workspace for every clique participating (an upper bound, so that the steady
   * state allocates nothing) */
  size_t hdiag = 0;
  for (int q = 0; q < p->num_cliques; q++)
    hdiag += p->cliques[q].sparse ? p->cliques[q].nnz : (size_t)p->cliques[q].nv * (size_t)p->cliques[q].nv;
  size_t hoff = 0;
  for (int i = 0; i < nc; i++)
    if (p->constraints[i].clique[1] >= 0)
      hoff += (size_t)p->cliques[p->constraints[i].clique[0]].nv * (size_t)p->cliques[p->constraints[i].clique[1]].nv;
  kn_status status = workspace(s, p, p->num_cliques, p->nv, npairs_max, hdiag, hoff, err);
  if (status) return status;
  for (int q = 0; q < p->num_cliques; q++) s->pidx[q] = -1, s->roff[q] = -1;
  for (int i = 0; i < nc; i++)
    for (int t = 0; t < 2; t++) {
      int q = p->constraints[i].clique[t];
      if (q >= 0) s->pidx[q] = 0;
    }
  np = 0;
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
  {
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
  ctx c = {.prob = p, .s = s, .n = n, .np = np, .nc = nc, .npairs = npairs};
  st.num_participating_cliques = np;
  st.nv_participating = n;

  //---- reduced v*, guess, scaling D = diag(A)^-1/2 (§4.1.4: the code's inverse square root) ----
  for (int k = 0; k < np; k++) {
    int q = s->part[k], nq = p->cliques[q].nv, o2 = s->roff[q];
    const double* vs = p->reals + p->cliques[q].vstar_at;
    for (int t = 0; t < nq; t++) {
      s->vstar[o2 + t] = vs[t];
      s->v[o2 + t] = v_guess ? v_guess[p->cliques[q].offset + t] : vs[t];
      s->D[o2 + t] = 1.0 / sqrt(kn_sap_clique_diag(p, q, t));
    }
  }
  //---- per-constraint data, constant during Newton (§4.1.3) ----
  for (int i = 0; i < nc; i++) {
    const kn_sap_constraint* k = &p->constraints[i];
    s->self[i] = kn_sap_constraint_self(p, i);
    s->w[i] = kn_sap_delassus(p, i);
    k->ops->make_data(s->self[i], p->dt, s->w[i], s->data + (size_t)i * KN_SAP_MAX_DATA);
    /* the single-dof fast path: any 1-row constraint on one clique whose J has one non-zero */
    s->sdof[i] = -1;
    if (k->rows == 1 && k->clique[1] < 0 && !p->cliques[k->clique[0]].sparse) {
      int q = k->clique[0], nq = p->cliques[q].nv, nz = 0, at = -1;
      const double* J = con_J(p, i, 0);
      for (int t = 0; t < nq; t++)
        if (J[t] != 0) nz++, at = t;
      if (nz == 1) s->sdof[i] = s->roff[q] + at, s->sval[i] = J[at];
    }
  }
  //---- nonzero columns of the J blocks of constraints on a large clique (apply_J, apply_JT, J^T G J) ----
  {
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
          const double* J = con_J(p, i, t);
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
  }
  status = sparse_lists(&c, err);
  if (status) return status;
  //---- the linear solver ----
  /* AUTO: sparse only for a large H that is mostly zeros. One big dense clique (a deformable's Schur
   * complement) makes H dense anyway, and CHOLMOD would then only add its transposes and analysis.
   * A sparse clique always goes to CHOLMOD. */
  double block_nnz = 0;
  int any_sparse = 0;
  for (int k = 0; k < np; k++) {
    any_sparse |= s->pcolptr[k] != NULL;
    block_nnz += s->pcolptr[k] ? (double)s->pcolptr[k][s->psize[k]] : 0.5 * (double)s->psize[k] * s->psize[k];
  }
  for (int k = 0; k < npairs; k++) block_nnz += (double)s->psize[s->pairs[2 * k]] * s->psize[s->pairs[2 * k + 1]];
  int mostly_dense = block_nnz >= 0.25 * 0.5 * (double)n * n;
  int sparse = o.linear_solver == KN_SAP_LINEAR_SPARSE ||
               (o.linear_solver == KN_SAP_LINEAR_AUTO && (any_sparse || (n > o.dense_max_nv && !mostly_dense)));
  kn_sap_layout lay = {.num_blocks = np, .n = n, .size = s->psize, .offset = s->poff, .num_pairs = npairs,
                       .pair = s->pairs, .colptr = s->pcolptr, .rowidx = s->prowidx};
  int analysed = 0;
  status = kn_sap_linsolve_prepare(s->ls, &lay, sparse, &analysed, err);
  if (status) return status;
  st.used_sparse = sparse;
  st.symbolic_analyses = analysed;

  //---- Newton iterations (§4.3) ----
  int k = 0, cost_ok = 0, opt_ok = 0, have_prev = 0;
  int reuse = o.reuse_min_nv > 0 && n >= o.reuse_min_nv, have_factor = 0;
  int force_factor = 0;
  double gnorm_prev = 0, eta_prev = REUSE_ETA_MAX;
  apply_A(&c, s->vstar, s->Avstar);
  double ell = eval_all(&c), ell_prev = ell;
  for (;;) {
    st.residual = kn_sap_scaled_norm(s->D, s->grad, n);
    st.residual_scale = fmax(kn_sap_scaled_norm(s->D, s->p, n), kn_sap_scaled_norm(s->D, s->j, n));
    st.cost = ell;
    st.iterations = k;
    if (stats) *stats = st;
    if (!isfinite(ell) || !all_finite(s->grad, n))
      return fail_at(&c, have_prev, err, "NaN or infinity in the cost or its gradient");
    opt_ok = st.residual <= o.abs_tolerance + o.rel_tolerance * st.residual_scale;
    if (opt_ok || cost_ok) break;
    /* monotonicity check, after the convergence test on purpose (§10.8) */
    double slop = o.relative_slop * fmax(1.0, 0.5 * (fabs(ell) + fabs(ell_prev)));
    if (ell > ell_prev + slop) {
      st.nonmonotonic_steps++;
      if (o.nonmonotonic_is_error) return fail_at(&c, have_prev, err, "the cost increased (non-monotonic Newton)");
    }
    if (k >= o.max_iterations) {
      char why[200];
      snprintf(why, sizeof why, "Newton did not converge in %d iterations (residual %.3e > %.3e)", o.max_iterations,
               st.residual, o.abs_tolerance + o.rel_tolerance * st.residual_scale);
      return fail_at(&c, have_prev, err, why);
    }
    /* dv = -H^-1 grad. G changes every iteration, so exact Newton refactors H each time (§4.6).
     * For a large H (reuse), the factor of an earlier iteration of this solve preconditions CG on
     * the new H instead (inexact Newton, "line search Newton-CG", Nocedal & Wright §7.1): the
     * forcing term ||D r|| <= eta ||D grad|| follows Eisenstat & Walker's choice 2, and H is
     * refactored (and solved exactly) at the iteration after a CG solve that did not converge, or
     * at once when CG does not give a descent direction. The convergence test above is the same,
     * so the accuracy is too; only the path to it (and the iteration count) differs. The first
     * step of such a solve uses the kinds' predicted G (predict_G); small solves are exact Newton
     * throughout. On the dense path the preconditioner is H_k^-1 itself, from the factor and the
     * constraints whose G changed since (sap/lowrank.c), so CG converges in one product, unless
     * those do not fit the low-rank budget (lowrank_update). Shake example (n 1431): 1 instead of
     * 4-5 factorizations and 60-80 CG products per step. */
    double dl0 = 0;
    int have_dv = 0;
    int use_factor = reuse && have_factor && !force_factor;
    if (use_factor) {
      int exact = lowrank_update(&c);
      use_factor = kn_sap_lowrank_factor(s->lr, s->ls, s->G, s->Gref, GSLOT, NULL) == KN_OK;
      if (use_factor && exact) {
        /* every change is in the set: H_k^-1 grad by the Woodbury identity, a direct solve like the
         * factor's own (CG would stop after its one product; shake example: 11 fewer H products per
         * step). CG stays the fallback should it not be a descent direction. */
        for (int t = 0; t < n; t++) s->dv[t] = -s->grad[t];
        status = precondition(&c, s->dv, err);
        if (status) return fail_at(&c, have_prev, err, err ? err->msg : "solve failed");
        st.lowrank_solves++;
        dl0 = kn_sap_dot(s->grad, s->dv, n);
        have_dv = dl0 < 0;
      }
    }
    if (use_factor && !have_dv) {
      double gnorm = kn_sap_scaled_norm(s->D, s->grad, n);
      /* Eisenstat-Walker choice 2: loose while the gradient stalls (contacts changing mode, where
       * an accurate solve buys nothing), tight as it falls quadratically; safeguarded */
      double ratio = gnorm / gnorm_prev, eta = 0.9 * ratio * ratio, safe = 0.9 * eta_prev * eta_prev;
      if (safe > 0.1) eta = fmax(eta, safe);
      eta = fmin(REUSE_ETA_MAX, eta);
      eta_prev = eta;
      int cg_iters = 0, converged = 0;
      for (int t = 0; t < n; t++) s->dp[t] = -s->grad[t]; /* dp: the right-hand side, overwritten below */
      status = kn_sap_pcg(n, apply_H_unassembled, &c, precondition, s->dp, s->D, eta * gnorm, REUSE_MAX_CG, s->dv, s->cg,
                          &cg_iters, &converged, err);
      if (status) return fail_at(&c, have_prev, err, err ? err->msg : "solve failed");
      st.cg_iterations += cg_iters;
      /* a truncated CG iterate is still a descent direction: take it, and refactor next time */
      dl0 = kn_sap_dot(s->grad, s->dv, n);
      have_dv = dl0 < 0;
      if (!converged) force_factor = 1;
    }
    if (!have_dv) {
      if (reuse && k == 0) predict_G(&c); /* eval_all recomputes G after the line search */
      status = assemble_H(&c, err);
      if (status) return status;
      status = kn_sap_linsolve_factor(s->ls, s->Hdiag, s->Hoff, err);
      st.factorizations++;
      if (status) return fail_at(&c, have_prev, err, err ? err->msg : "factorization failed");
      have_factor = 1;
      force_factor = 0;
      if (reuse) {
        memcpy(s->Gref, s->G, (size_t)GSLOT * (size_t)nc * sizeof(double));
        status = kn_sap_lowrank_reset(s->lr, n, nc, lowrank_budget(&c), err);
        if (status) return fail_at(&c, have_prev, err, err ? err->msg : "out of memory");
      }
      for (int t = 0; t < n; t++) s->dv[t] = -s->grad[t];
      status = kn_sap_linsolve_solve(s->ls, s->dv, err);
      if (status) return fail_at(&c, have_prev, err, err ? err->msg : "solve failed");
      dl0 = kn_sap_dot(s->grad, s->dv, n);
    }
    if (reuse) gnorm_prev = kn_sap_scaled_norm(s->D, s->grad, n);
    apply_J(&c, s->dv, s->dvc);
    apply_A(&c, s->dv, s->dp);
    line L = {.dAd = kn_sap_dot(s->dv, s->dp, n)};
    if (!(L.dAd > 0)) return fail_at(&c, have_prev, err, "dv^T A dv <= 0: A is not positive definite");
    double* dvs = s->vtmp;
    for (int t = 0; t < n; t++) dvs[t] = s->v[t] - s->vstar[t];
    L.dp_dv0 = kn_sap_dot(s->dp, dvs, n);
    L.lA0 = 0.5 * kn_sap_dot(dvs, s->grad, n) + 0.5 * kn_sap_dot(dvs, s->j, n); /* 1/2 (v-v*)^T A (v-v*) */
    double alpha = 1;
    if (!(dl0 < 0)) return fail_at(&c, have_prev, err, "l'(0) >= 0 along the Newton direction (ill-conditioned H)");
    int ls_iters = 0;
    status = line_search(&c, &L, dl0, &o, &alpha, &ls_iters, err);
    st.line_search_iterations += ls_iters;
    if (status) return fail_at(&c, have_prev, err, err ? err->msg : "line search failed");
    for (int t = 0; t < n; t++) s->v[t] += alpha * s->dv[t];
    memcpy(s->gamma_prev, s->gamma, (size_t)(KN_SAP_MAX_ROWS * nc) * sizeof(double));
    have_prev = 1;
    ell_prev = ell;
    ell = eval_all(&c);
    k++;
    cost_ok = fabs(ell_prev - ell) < o.cost_abs_tolerance + o.cost_rel_tolerance * 0.5 * (fabs(ell) + fabs(ell_prev)) &&
              alpha > 0.5;
    /* a stall at roundoff: the line search finds (almost) nothing (alpha < 1e-3) and the Newton
     * decrement -l'(0) is below the slop the monotonicity check allows the cost. Seen: two PD
     * panels saturated at their effort limits with nothing to push, residual 1.10e-14 against a
     * tolerance of 1.00e-14 for 100 iterations, which failed the step. */
    if (alpha < 1e-3 && -dl0 < o.relative_slop * fmax(1.0, 0.5 * (fabs(ell) + fabs(ell_prev)))) cost_ok = 1;
    if (o.monitor) {
      kn_sap_iteration it = {.iteration = k, .cost = ell, .cost_prev = ell_prev, .alpha = alpha, .dl0 = dl0,
                             .dl_alpha = kn_sap_dot(s->grad, s->dv, n), .line_search_iterations = ls_iters};
      o.monitor(o.monitor_user, &it);
    }
  }
  st.optimality_reached = opt_ok;
  st.cost_reached = !opt_ok && cost_ok;
  if (stats) *stats = st;

  //---- outputs: only now are the caller's buffers written ----
  for (int q = 0; q < p->num_cliques; q++) {
    const kn_sap_clique* cq = &p->cliques[q];
    const double* src = s->roff[q] >= 0 ? s->v + s->roff[q] : p->reals + cq->vstar_at;
    memcpy(v_out + cq->offset, src, (size_t)cq->nv * sizeof(double));
  }
  if (gamma_out)
    for (int i = 0; i < nc; i++)
      memcpy(gamma_out + p->constraints[i].offset, s->gamma + KN_SAP_MAX_ROWS * i, (size_t)p->constraints[i].rows * sizeof(double));
  return KN_OK;
}
