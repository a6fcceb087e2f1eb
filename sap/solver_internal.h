/* The SAP solver's internals, shared by its files (not installed; only sap/solver*.c include it):
 * the workspace, the context every stage takes, and the functions that cross files.
 *
 *   solver.c           kn_sap_solve: setup stages, the Newton loop, the outputs
 *   solver_setup.c     once per solve: workspace, participating cliques and pairs, reduced v*, D,
 *                      per-constraint data, J's nonzero columns, the linear solver
 *   solver_eval.c      products with A, J, J^T and the unassembled H; the cost, gradient, gamma, G
 *   solver_hessian.c   H = A + sum J^T G J assembled in clique blocks (dense and sparse)
 *   solver_direction.c the Newton direction: exact, low-rank (Woodbury) or inexact (PCG)
 *   solver_line.c      the exact line search
 *   solver_diagnose.c  the worst constraint named in a failure's message */
#ifndef KNEAD_SAP_SOLVER_INTERNAL_H
#define KNEAD_SAP_SOLVER_INTERNAL_H

#include <stddef.h>

#include "sap/sap_internal.h"

/* per-constraint slots in the workspace: KN_SAP_MAX_ROWS rows of v_c / gamma, KN_SAP_GSLOT of G */
#define KN_SAP_GSLOT (KN_SAP_MAX_ROWS * KN_SAP_MAX_ROWS)

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

/* what every stage of a solve reads: the problem, the workspace, and the sizes (n reduced dofs,
 * np participating cliques, nc constraints, npairs coupled pairs) */
typedef struct {
  const kn_sap_problem* prob;
  kn_sap_solver* s;
  int n, np, nc, npairs;
} kn_sap_ctx;

/* constraint i's dense J block on side s, NULL for a side given by node */
static inline const double* kn_sap_con_J(const kn_sap_problem* p, int i, int s) {
  size_t at = p->constraints[i].J_at[s];
  return at == (size_t)-1 ? NULL : p->reals + at;
}

/* 1 when all n entries of x are zero. A separated contact has gamma = 0 and G = 0: its J^T G J and
 * J^T gamma would only add +-0, which changes no sum that is not itself zero (and a sum that
 * starts at +0 never becomes -0), so skipping it leaves every product bit for bit as it was. On
 * the pouring example, with its 2 cm contact margin, 3 of 4 constraints are such. */
static inline int kn_sap_all_zero(const double* x, int n) {
  for (int k = 0; k < n; k++)
    if (x[k] != 0) return 0;
  return 1;
}

//---- once per solve, before Newton (solver_setup.c) ----

/* (problem) => the workspace sized for every clique participating (an upper bound, so that the
 * steady state allocates nothing) */
kn_status kn_sap_workspace(kn_sap_solver* s, const kn_sap_problem* p, kn_error* err);
/* (constraints' cliques) => c->np, c->n: participating cliques, their reduced offsets (§4.1.1) */
void kn_sap_participating(kn_sap_ctx* c);
/* => c->npairs: the coupled pairs, sorted and unique, and each constraint's pair (§4.1.2) */
void kn_sap_coupled_pairs(kn_sap_ctx* c);
/* => where each block of H lives in the workspace, and the sparse cliques' patterns */
void kn_sap_place_H_blocks(const kn_sap_ctx* c);
/* (v*, the caller's guess) => reduced v*, v, scaling D = diag(A)^-1/2 */
void kn_sap_reduced_vectors(const kn_sap_ctx* c, const double* v_guess);
/* => per constraint: parameters, Delassus estimate, kind data (§4.1.3), single-dof fast path */
void kn_sap_constraint_data(const kn_sap_ctx* c);
/* => the nonzero columns of the J blocks of constraints on a large clique, and their entries */
kn_status kn_sap_jacobian_columns(const kn_sap_ctx* c, kn_error* err);
/* (options, layout of H) => the linear solver prepared, dense or sparse (st: used_sparse,
 * symbolic_analyses) */
kn_status kn_sap_choose_linear_solver(const kn_sap_ctx* c, const kn_sap_options* o, kn_sap_stats* st,
                                      kn_error* err);

//---- products and evaluation (solver_eval.c) ----

/* y = A x (reduced vectors) */
void kn_sap_apply_A(const kn_sap_ctx* c, const double* x, double* y);
/* v_c,i = J_i x for every constraint (out: KN_SAP_MAX_ROWS slots per constraint) */
void kn_sap_apply_J(const kn_sap_ctx* c, const double* x, double* out);
/* y += J_i^T g for constraint i */
void kn_sap_add_JT(const kn_sap_ctx* c, int i, const double* g, double* y);
/* y = H x without assembling H (user: the kn_sap_ctx; kn_sap_pcg's apply_H) */
void kn_sap_apply_H_unassembled(void* user, const double* x, double* y);
/* v => l(v) and grad, gA, p, j, v_c, gamma, G in the workspace (§4.2) */
double kn_sap_eval_all(const kn_sap_ctx* c);
/* s->G <= each kind's first_G at the current v_c (where it has one) */
void kn_sap_predict_G(const kn_sap_ctx* c);

//---- the Hessian (solver_hessian.c) ----

/* (G) => H's blocks s->Hdiag, s->Hoff (lower triangle of the diagonal blocks) */
kn_status kn_sap_assemble_H(const kn_sap_ctx* c, kn_error* err);
/* (J's nonzero columns) => per sparse clique's DoF, the constraint sides with a column there */
kn_status kn_sap_sparse_lists(const kn_sap_ctx* c, kn_error* err);

//---- the Newton direction (solver_direction.c) ----

/* what the direction keeps from one Newton iteration to the next */
typedef struct {
  int reuse;        /* a large H: an earlier factor preconditions CG (inexact Newton) */
  int have_factor;  /* H was factored in this solve */
  int force_factor; /* the last CG solve did not converge: refactor */
  double gnorm_prev, eta_prev; /* ||D grad|| and the forcing term of the previous iteration */
} kn_sap_direction;

/* (options, n) => the direction's state at the start of a solve */
void kn_sap_direction_start(kn_sap_direction* d, const kn_sap_options* o, int n);
/* (grad, G; Newton iteration k) => s->dv ~ -H^-1 grad and *dl0 = grad . dv; st counts the
 * factorizations, low-rank solves and CG products; a failure names the worst constraint */
kn_status kn_sap_newton_direction(const kn_sap_ctx* c, kn_sap_direction* d, int k, int have_prev, kn_sap_stats* st,
                                  double* dl0, kn_error* err);

//---- exact line search (solver_line.c) ----

typedef struct {
  double lA0, dp_dv0, dAd; /* l_A(0), dp . (v - v*), dv^T A dv */
} kn_sap_line;

/* (l'(0) < 0) => alpha minimizing l(v + alpha dv) on [0, alpha_max] (§4.4) */
kn_status kn_sap_line_search(const kn_sap_ctx* c, const kn_sap_line* L, double dl0, const kn_sap_options* o,
                             double* alpha_out, int* iters, kn_error* err);

//---- failure diagnostics (solver_diagnose.c) ----

/* => KN_ERR_NUMERIC with reason and the constraint most responsible for the failure */
kn_status kn_sap_fail_at(const kn_sap_ctx* c, int have_prev, kn_error* err, const char* reason);

#endif
