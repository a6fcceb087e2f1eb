/* sap/ internals: the problem layout, the constraint-kind interface and the linear solver
 * interface. Not installed; only the sources of sap/ include it. */
#ifndef KNEAD_SAP_INTERNAL_H
#define KNEAD_SAP_INTERNAL_H

#include <stddef.h>

#include "sap/sap.h"

/*---- constraint kinds: a table of function pointers over a const void* self ----*/

/* Largest per-solve data block of any kind, and largest row count (weld: 6). */
#define KN_SAP_MAX_DATA 128
#define KN_SAP_MAX_ROWS 6

typedef struct {
  kn_sap_kind kind;
  size_t self_size;  /* bytes of the parameters stored in the problem */
  size_t data_size;  /* bytes of the per-solve data (<= KN_SAP_MAX_DATA) */
  /* (self, dt, Delassus estimate w) => data: regularization and bias, constant during Newton */
  void (*make_data)(const void* self, double dt, double w, void* data);
  /* (self, data, v_c) => cost l_i, gamma = -dl_i/dv_c, G = d2l_i/dv_c2 (row-major; may be NULL) */
  void (*eval)(const void* self, const void* data, const double* vc, double* cost, double* gamma, double* G);
  /* (self, data) => per row R and v_hat (reporting only) */
  void (*regularization)(const void* self, const void* data, double* R, double* v_hat);
  /* optional: (self, data, v_c at the warm start) => G for the first Newton step of a large solve
   * (sap/solver_direction.c, reuse_min_nv), a prediction of the mode the constraint ends in; SPD or
   * 0, so the step stays a descent direction. NULL: eval's G. */
  void (*first_G)(const void* self, const void* data, const double* vc, double* G);
} kn_sap_kind_ops;

extern const kn_sap_kind_ops kn_sap_contact_ops;
extern const kn_sap_kind_ops kn_sap_limit_ops;
extern const kn_sap_kind_ops kn_sap_pd_ops;
extern const kn_sap_kind_ops kn_sap_coupler_ops;
extern const kn_sap_kind_ops kn_sap_weld_ops;
extern const kn_sap_kind_ops kn_sap_fixed_ops;

/* Generic holonomic constraint (§5.1), shared by limits and couplers: rows n <= 2, stiffness
 * (INFINITY for rigid), tau, beta, g0 per row, impulse box per row. */
typedef struct {
  int rows;
  double stiffness, tau, beta;
  double g0[2];
  double lower[2], upper[2];
} kn_sap_holonomic;

/*---- the problem ----*/

typedef struct {
  int nv, offset;     /* offset in the full v */
  size_t A_at;        /* index of A in p->reals: nv x nv row-major, or a sparse clique's nnz values */
  size_t vstar_at;    /* index of v* (nv) in p->reals */
  /* a sparse clique (kn_sap_add_clique_sparse): A's lower triangle in compressed columns, colptr
   * (nv + 1) and rowidx (nnz) in p->ints, each column led by its diagonal; diag (nv) in p->reals */
  int sparse;
  size_t nnz, colptr_at, rowidx_at, diag_at;
  /* a sparse A made of 3 x 3 blocks (an MPM grid's or a mesh's, one block per node pair) is also
   * kept by block for its products: per block column, the block rows below the diagonal from
   * bcolptr_at (nv / 3 + 1) and browidx_at in p->ints, and the values, the whole diagonal block and
   * then each one below (9 each, row-major), from bval_at in p->reals. blocked = 0: not such an A */
  int blocked;
  size_t bcolptr_at, browidx_at, bval_at;
} kn_sap_clique;

typedef struct {
  const kn_sap_kind_ops* ops;
  int rows, offset;       /* offset in gamma */
  int clique[2];          /* clique[1] = -1 when one clique */
  size_t J_at[2];         /* index of J blocks (rows x nv) in p->reals (a nodal side: none) */
  /* a side given by node (kn_sap_add_contact_nodal): m groups, 0 for a dense block; w (m) then B
   * (9) in p->reals from nodal_at, the groups' first columns (m, ascending) in p->ints */
  int nodal[2];
  size_t nodal_at[2], nodal_col_at[2];
  size_t self_at;         /* byte offset of the parameters in p->bytes */
  double w;               /* the Delassus estimate (kn_sap_delassus), from the cliques' A when added */
} kn_sap_constraint;

struct kn_sap_problem {
  double dt;
  int nv, num_impulses;
  int num_cliques, cap_cliques;
  kn_sap_clique* cliques;
  int num_constraints, cap_constraints;
  kn_sap_constraint* constraints;
  double* reals;          /* A, v*, J blocks */
  size_t num_reals, cap_reals;
  int* ints;              /* sparse cliques' column pointers and row indices */
  size_t num_ints, cap_ints;
  unsigned char* bytes;   /* constraint parameters, 16-byte aligned slots */
  size_t num_bytes, cap_bytes;
};

/* Add a constraint of kind ops whose parameters are self; J blocks rows x nv of each clique, or
 * (nodal_a) clique_a's block given by node (3 rows). */
kn_status kn_sap_problem_add_nodal(kn_sap_problem* p, const kn_sap_kind_ops* ops, const void* self, int rows,
                                   int clique_a, const kn_sap_nodal_jacobian* nodal_a, int clique_b,
                                   const double* J_b, int* index, kn_error* err);
kn_status kn_sap_problem_add(kn_sap_problem* p, const kn_sap_kind_ops* ops, const void* self, int rows,
                             int clique_a, const double* J_a, int clique_b, const double* J_b, int* index,
                             kn_error* err);
const void* kn_sap_constraint_self(const kn_sap_problem* p, int i);
/* side s of constraint i given by node: its m (0 for a dense block), and col, w, B */
static inline int kn_sap_side_nodal(const kn_sap_problem* p, int i, int s, const int** col, const double** w,
                                    const double** B) {
  const kn_sap_constraint* c = &p->constraints[i];
  int m = c->nodal[s];
  if (m) {
    *col = p->ints + c->nodal_col_at[s];
    *w = p->reals + c->nodal_at[s];
    *B = *w + m;
  }
  return m;
}
/* the diagonal entry k of clique q's A */
double kn_sap_clique_diag(const kn_sap_problem* p, int q, int k);
/* y += A_q x (x, y: clique q's nv entries); a dense A's lower triangle only */
void kn_sap_clique_matvec_add(const kn_sap_problem* p, int q, const double* x, double* y);
/* (problem, constraint) => Delassus estimate w_i (§2.1), computed when the constraint was added */
double kn_sap_delassus(const kn_sap_problem* p, int i);
/* v_c = sum over its cliques J_ic v_c (v is the full velocity) */
void kn_sap_constraint_vc(const kn_sap_problem* p, int i, const double* v, double* vc);

/* the near-rigid threshold factor beta^2 / (4 pi^2) */
double kn_sap_near_rigid_factor(double beta);

/*---- the linear solver behind one small interface (dense LAPACKE or CHOLMOD) ----*/

/* Block layout of H over the participating cliques: sizes and offsets in the reduced vector,
 * and the list of coupled pairs (a < b, participating indices). H blocks: diag[c] is n_c x n_c
 * row-major; off[k] is n_a x n_b (rows of a, columns of b) for pair k. */
typedef struct {
  int num_blocks, n;
  const int* size;
  const int* offset;
  int num_pairs;
  const int* pair;    /* 2 * num_pairs */
  /* per block: NULL for a dense one, else the lower-triangle pattern of a sparse clique
   * (kn_sap_clique) whose diag block then holds the values in that order */
  const int* const* colptr;
  const int* const* rowidx;
} kn_sap_layout;

typedef struct kn_sap_linsolve kn_sap_linsolve;
kn_sap_linsolve* kn_sap_linsolve_create(void);
void kn_sap_linsolve_free(kn_sap_linsolve* ls);
/* (layout, sparse?) => ready to factor; *analysed = 1 when a symbolic analysis was (re)done */
kn_status kn_sap_linsolve_prepare(kn_sap_linsolve* ls, const kn_sap_layout* layout, int sparse, int* analysed,
                                  kn_error* err);
/* (H blocks) => factorization; KN_ERR_NUMERIC when H is not positive definite */
kn_status kn_sap_linsolve_factor(kn_sap_linsolve* ls, double* const* diag, double* const* off, kn_error* err);
/* flops of one numeric factorization of the prepared pattern */
double kn_sap_linsolve_flops(const kn_sap_linsolve* ls);
/* b => H^-1 b in place */
kn_status kn_sap_linsolve_solve(kn_sap_linsolve* ls, double* b, kn_error* err);
/* H = P^T L L^T P factored (P = I on the dense path): the two halves of a solve, for sap/lowrank.c.
 * forward: B (n x ncols, column-major) => L^-1 P B in place; backward: b => P^T L^-T b in place. */
kn_status kn_sap_linsolve_forward(kn_sap_linsolve* ls, double* B, int ncols, kn_error* err);
kn_status kn_sap_linsolve_backward(kn_sap_linsolve* ls, double* b, kn_error* err);

/*---- H of a later Newton iteration from the factor of an earlier one (sap/lowrank.c) ----*/

/* H = H_ref + J_V^T (G - G_ref)_V J_V over the set V of constraints whose G changed since H_ref =
 * L L^T was factored (Woodbury) */
typedef struct kn_sap_lowrank kn_sap_lowrank;
kn_sap_lowrank* kn_sap_lowrank_create(void);
void kn_sap_lowrank_free(kn_sap_lowrank* lr);
/* H_ref (n x n) was just factored: empty the set, which may hold up to max_rows rows */
kn_status kn_sap_lowrank_reset(kn_sap_lowrank* lr, int n, int num_constraints, int max_rows, kn_error* err);
int kn_sap_lowrank_has(const kn_sap_lowrank* lr, int constraint);
/* rows in the set, and the most it may hold */
int kn_sap_lowrank_rows(const kn_sap_lowrank* lr);
int kn_sap_lowrank_capacity(const kn_sap_lowrank* lr);
/* constraint (rows) joins the set: => `rows` zeroed vectors of n for the caller to fill with
 * J_i^T (vector r: row r of J_i), or NULL when that passes the budget or it is already in */
double* kn_sap_lowrank_add(kn_sap_lowrank* lr, int constraint, int rows);
/* (the factor of H_ref, G and G_ref of every constraint in slots of `slot` doubles, each rows x rows
 * row-major) => the new members solved for and I + D W factored; KN_ERR_NUMERIC when that is singular */
kn_status kn_sap_lowrank_factor(kn_sap_lowrank* lr, kn_sap_linsolve* L, const double* G, const double* G_ref, int slot,
                                kn_error* err);
/* b => H^-1 b in place (the same factor, G, G_ref as the last kn_sap_lowrank_factor) */
kn_status kn_sap_lowrank_solve(const kn_sap_lowrank* lr, kn_sap_linsolve* L, const double* G, const double* G_ref,
                               int slot, double* b, kn_error* err);

/*---- inexact Newton: CG on H_k preconditioned by the factor of an earlier H (sap/pcg.c) ----*/

/* a . b over n entries, in index order */
double kn_sap_dot(const double* a, const double* b, int n);
/* ||D x|| (D diagonal, n entries) */
double kn_sap_scaled_norm(const double* D, const double* x, int n);

/* y += H x for one symmetric n x n row-major block of which only the lower triangle is read */
void kn_sap_sym_matvec_add(const double* H, int n, const double* x, double* y);
/* (y = H x through apply_H, z => M z ~ H^-1 z in place through apply_M (the same user), b,
 * scaling D, tolerance tol on ||D r||, at most max_iter products with H, work of 4 n) => x ~ H^-1 b from x0 = 0, *iters products done and
 * *converged = 1 when ||D (b - H x)|| <= tol. x is a CG iterate, so b^T x > 0 (a descent direction
 * for b = -grad) unless round-off; *converged = 0 also when p^T H p <= 0 is met. */
kn_status kn_sap_pcg(int n, void (*apply_H)(void* user, const double* x, double* y), void* user,
                     kn_status (*apply_M)(void* user, double* z, kn_error* err), const double* b, const double* D,
                     double tol, int max_iter, double* x, double* work, int* iters, int* converged, kn_error* err);

#endif
