/* knead/sap — the SAP convex contact problem and its Newton solver.
 *
 * Reference: shared/papers/sap-convex-contact.md (the "digest"; § numbers below are its own),
 * after Castro, Permenter, Han, "An Unconstrained Convex Formulation of Compliant Contact" and
 * Drake's SapModel / SapConstraint / SapSolver. The solver computes
 *
 *     v = argmin_v  l(v) = 1/2 ||v - v*||_A^2 + sum_i l_i(v_c,i),     v_c,i = J_i v      (§1.3)
 *
 * with A = blockdiag(A_c) over cliques, and returns the impulses gamma_i = -dl_i/dv_c,i.
 *
 * Conventions (written once here, referred to everywhere in sap/):
 *   - Velocities are generalized velocities of the cliques, concatenated in the order the
 *     cliques were added (kn_sap_problem_nv gives the total, kn_sap_clique_offset the start).
 *   - Impulses (force x dt), never forces. Reported forces are gamma / dt.
 *   - Contact frame as in Drake (§0): for a pair (A, B) the normal points from A into B and is
 *     the z axis of the contact frame C; v_c = R_WC^T (v_B - v_A) = [v_t (2); v_n], v_n > 0
 *     separating; phi0 < 0 overlapping. The caller builds the 3 x nv Jacobian blocks with these
 *     signs included (the A side usually gets -R_WC^T J_A), so that v_c = J_a v_a + J_b v_b.
 *   - Jacobian blocks are row-major (rows x nv of the clique); they are copied.
 *   - Constraints are numbered in the order they are added; gamma is their rows concatenated
 *     (kn_sap_constraint_offset). Drake adds contacts first, then limits, PD, couplers (§5).
 *   - A constraint touches one clique (clique_b = -1) or two distinct cliques.
 *
 * Memory: a kn_sap_problem owns copies of everything added to it. A kn_sap_solver owns its
 * workspaces and the CHOLMOD symbolic analysis, reused across solves while the pattern (clique
 * sizes and which cliques are coupled) is unchanged; it is not thread-safe, use one per thread. */
#ifndef KNEAD_SAP_H
#define KNEAD_SAP_H

#include "../common/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*---- constraint kinds ----*/

typedef enum {
  KN_SAP_CONTACT = 0, /* friction cone, 3 rows (§2-§3) */
  KN_SAP_LIMIT,       /* joint limit, 1 or 2 rows (§5.2) */
  KN_SAP_PD,          /* implicit PD controller with effort limit, 1 row (§5.3) */
  KN_SAP_COUPLER,     /* q_i - rho q_j - offset = 0, 1 row (§5.4) */
  KN_SAP_WELD,        /* frame P on A coincides with frame Q on B, 6 rows (§5.4) */
  KN_SAP_FIXED        /* a deformable vertex held at a rigid (or world) point, 3 rows (§5.4) */
} kn_sap_kind;

const char* kn_sap_kind_name(kn_sap_kind kind);

/* Friction-cone contact (kSap law, §2.1). Defaults (kn_sap_contact_params_default) are Drake's
 * for a pair of default geometries: mu 0.5, k 1e6 N/m, tau_d 0.2 s (0.1 s per geometry, summed),
 * beta 1 (sap_near_rigid_threshold), sigma 1e-3; phi0 0. */
typedef struct {
  double phi0;             /* signed distance at q_n [m], < 0 overlapping */
  double mu;               /* dynamic friction coefficient, >= 0 */
  double stiffness;        /* k [N/m], > 0 (may be INFINITY: near-rigid only) */
  double dissipation_time; /* tau_d [s], >= 0 (relaxation time of the pair) */
  double beta;             /* near-rigid threshold, >= 0 */
  double sigma;            /* friction regularization, > 0 */
  double vhat_t[2];        /* tangential bias velocity in the contact frame [m/s] [0, 0]: the
                              regularized stiction drives v_t to it (sim/stiction.h) */
} kn_sap_contact_params;
kn_sap_contact_params kn_sap_contact_params_default(void);

/* Joint limit (§5.2): g = [q0 - lower; upper - q0] >= 0, an infinite side drops its row.
 * Defaults: k 1e12, tau = dt, beta 0.1. */
typedef struct {
  double stiffness, dissipation_time, beta;
} kn_sap_limit_params;
kn_sap_limit_params kn_sap_limit_params_default(double dt);

/* Implicit PD controller (§5.3): u(v) = -Kp (q0 + dt v - qd) - Kd (v - vd) + u_ff,
 * gamma = dt clamp(u, -e, e). Kp, Kd >= 0 not both 0; effort_limit > 0 (INFINITY for none). */
typedef struct {
  double kp, kd, q0, qd, vd, u_ff, effort_limit;
} kn_sap_pd_params;

/*---- the problem ----*/

typedef struct kn_sap_problem kn_sap_problem;

/* dt (> 0) => an empty problem; NULL on out-of-memory. Free with kn_sap_problem_free. */
kn_sap_problem* kn_sap_problem_create(double dt);
void kn_sap_problem_free(kn_sap_problem* p);
/* Forget cliques and constraints and set a new dt, keeping the memory (one problem per step). */
void kn_sap_problem_reset(kn_sap_problem* p, double dt);

/* (nv, A (nv x nv row-major SPD), v* (nv)) => clique index in *index (may be NULL). Copied.
 * A is checked for symmetry and a positive diagonal (KN_ERR_INVALID). */
kn_status kn_sap_add_clique(kn_sap_problem* p, int nv, const double* A, const double* v_star, int* index,
                            kn_error* err);

/* A sparse clique, e.g. a deformable body's whole grid: (nv, A's lower triangle in compressed
 * columns — colptr (nv + 1), rowidx (colptr[nv]) ascending within each column and led by the
 * diagonal, values — and v* (nv)) => clique index. Copied. The Newton matrix keeps A's pattern: a
 * constraint's J block on this clique may only couple DoFs that A couples (a particle's support
 * nodes, say); kn_sap_solve fails with KN_ERR_INVALID otherwise. Checked here: the structure, a
 * positive diagonal, finite values (KN_ERR_INVALID naming the column). */
kn_status kn_sap_add_clique_sparse(kn_sap_problem* p, int nv, const int* colptr, const int* rowidx,
                                   const double* values, const double* v_star, int* index, kn_error* err);

/* (cliques a, b (-1 for none), 3 x nv blocks J_a, J_b, parameters) => constraint index. */
kn_status kn_sap_add_contact(kn_sap_problem* p, int clique_a, const double* J_a, int clique_b, const double* J_b,
                             const kn_sap_contact_params* params, int* index, kn_error* err);
/* A contact's Jacobian block given by node: J[r][col[a] + c] = w[a] B[r][c] for a < m, r, c < 3,
 * zero elsewhere. An MPM particle's support nodes (w its B-spline weights, B = -R_WC^T) or a mesh
 * point's vertices (barycentric weights) are such: the block is 3 x 3m, not 3 x nv, and the
 * solver's products with it cost 3m + 9 instead of 9m. 1 <= m <= KN_SAP_MAX_NODES, the groups
 * col[a] .. col[a] + 2 inside the clique and disjoint, in any order. */
#define KN_SAP_MAX_NODES 32
typedef struct {
  int m;
  const int* col;
  const double* w;
  double B[9]; /* row-major */
} kn_sap_nodal_jacobian;
/* kn_sap_add_contact with clique_a's block given by node (checked: KN_ERR_INVALID naming the node) */
kn_status kn_sap_add_contact_nodal(kn_sap_problem* p, int clique_a, const kn_sap_nodal_jacobian* J_a, int clique_b,
                                   const double* J_b, const kn_sap_contact_params* params, int* index,
                                   kn_error* err);
/* (clique, dof of a 1-DoF joint in it, q0, lower, upper (+-INFINITY allowed), params or NULL for
 * the defaults) => constraint index. At least one limit must be finite. */
kn_status kn_sap_add_limit(kn_sap_problem* p, int clique, int dof, double q0, double lower, double upper,
                           const kn_sap_limit_params* params, int* index, kn_error* err);
/* (clique, dof, gains and targets) => constraint index. v_c = v_dof. */
kn_status kn_sap_add_pd(kn_sap_problem* p, int clique, int dof, const kn_sap_pd_params* params, int* index,
                        kn_error* err);
/* (dof_i of clique_i at q_i, dof_j of clique_j at q_j, rho, offset) => constraint index for the
 * rigid coupler g = q_i - rho q_j - offset (k = infinity, beta 0.1, unbounded impulse). clique_j
 * may equal clique_i (then dof_j != dof_i). Generalized impulse: +gamma on i, -rho gamma on j. */
kn_status kn_sap_add_coupler(kn_sap_problem* p, int clique_i, int dof_i, double q_i, int clique_j, int dof_j,
                             double q_j, double rho, double offset, int* index, kn_error* err);
/* Weld (§5.4, Drake's SapWeldConstraint): rows [rotation; translation], all in the world frame.
 * g0 = [a_PQ; p_PoQo] (weld_error below) and v_c = V_AmBm = [w_B - w_A; v_Bm - v_Am], the
 * relative spatial velocity of the points of A and B coincident with the midpoint M of P_o and
 * Q_o; the caller builds the 6 x nv blocks with those signs (A side: -[Jw; Jv] of A at M, B side:
 * +[Jw; Jv] of B at M; the world side has no block; one clique for both bodies: their sum in
 * J_a with clique_b = -1). Rigid (k = infinity, beta 0.1): R = beta^2 w / (4 pi^2), v_hat =
 * -g0 / (2 dt), unbounded impulse; gamma is the impulse on B at B_m ([torque; force] x dt), -gamma
 * on A at A_m. */
kn_status kn_sap_add_weld(kn_sap_problem* p, int clique_a, const double* J_a, int clique_b, const double* J_b,
                          const double g0[6], int* index, kn_error* err);
/* Fixed constraint (§5.4, Drake's SapFixedConstraint): a deformable vertex attached to a point of a
 * rigid body. g0 = p_vertex - p_point (world, at the step start) and v_c = v_vertex - v_point; the
 * caller builds the 3 x nv blocks with those signs (deformable clique: +I on the vertex's three
 * DoFs; rigid clique: -Jv of the body at the point; a point fixed in the world has no block, then
 * clique_b = -1). Rigid (k = infinity, beta 0.1): R = beta^2 w / (4 pi^2), v_hat = -g0 / (2 dt),
 * unbounded impulse; gamma is the impulse on the vertex (force x dt, world frame), -gamma on the
 * rigid body at the point. */
kn_status kn_sap_add_fixed(kn_sap_problem* p, int clique_a, const double* J_a, int clique_b, const double* J_b,
                           const double g0[3], int* index, kn_error* err);
/* the same with the point's path over the step bending away from its linear map by c (world frame,
 * the displacement beyond dt J v that the step's motion is predicted to add: a turning link's
 * lever arm): v_hat = -g0 / (2 dt) + c / dt, so g = g0 + dt v_c - c ends at g0 / 2 */
kn_status kn_sap_add_fixed_curved(kn_sap_problem* p, int clique_a, const double* J_a, int clique_b, const double* J_b,
                                  const double g0[3], const double c[3], int* index, kn_error* err);
/* (world poses of P and Q) => g = [a_PQ^W; p_PoQo^W] with a_PQ^W = R_WP log(R_PQ) the axis-angle vector of
 * R_PQ expressed in W, and the midpoint M = (p_WPo + p_WQo) / 2 (may be NULL). */
void kn_sap_weld_error(const kn_pose* X_WP, const kn_pose* X_WQ, double g[6], double p_WM[3]);

int kn_sap_problem_nv(const kn_sap_problem* p);
int kn_sap_problem_num_cliques(const kn_sap_problem* p);
int kn_sap_problem_num_constraints(const kn_sap_problem* p);
int kn_sap_problem_num_impulses(const kn_sap_problem* p); /* total rows = length of gamma */
int kn_sap_clique_offset(const kn_sap_problem* p, int clique);
int kn_sap_constraint_offset(const kn_sap_problem* p, int constraint); /* first row in gamma */
int kn_sap_constraint_rows(const kn_sap_problem* p, int constraint);
kn_sap_kind kn_sap_constraint_kind(const kn_sap_problem* p, int constraint);

/* (problem, constraint) => Delassus estimate w (§2.1: ||W_ii||_F / n_i with diag(A) only), and per
 * row the regularization R and bias v_hat that the solver uses (gamma = P(R^-1 (v_hat - v_c))).
 * For a contact R = (R_t, R_t, R_n); for PD, R and v_hat of the (possibly clamped) gains. */
kn_status kn_sap_constraint_regularization(const kn_sap_problem* p, int constraint, double* w, double* R,
                                           double* v_hat, kn_error* err);
/* (problem, constraint, v (nv)) => its cost l_i, impulse gamma_i (rows) and Hessian G_i (rows x
 * rows, row-major; may be NULL), the quantities the Newton iteration uses (§4.2). */
kn_status kn_sap_constraint_eval(const kn_sap_problem* p, int constraint, const double* v, double* cost,
                                 double* gamma, double* G, kn_error* err);

/* The constraints from index first on as one potential of v (nv), for the nonlinear backends' robot-side
 * implicit forces (sap/potential.c): *cost = sum_i l_i(J_i v), grad (nv, may be NULL) -= sum_i
 * J_i^T gamma_i (accumulated), and each nonzero entry of sum_i J_i^T G_i J_i handed to add(user,
 * row, col, value) in v's indices, both triangles, duplicates to be summed (add may be NULL). */
/* the most rows of any constraint (a weld's 6): gamma's size for one constraint */
#define KN_SAP_MAX_ROWS_PUBLIC 6
typedef void (*kn_sap_entry_fn)(void* user, int row, int col, double value);
kn_status kn_sap_constraints_potential(const kn_sap_problem* p, int first, const double* v, double* cost,
                                       double* grad, kn_sap_entry_fn add, void* user, kn_error* err);

/*---- the friction cone projection (§3), exposed for tests and other backends ----*/

typedef enum { KN_SAP_STICTION = 0, KN_SAP_SLIDING, KN_SAP_NO_CONTACT } kn_sap_contact_mode;

/* (mu, R_t, R_n, y) => gamma = P(y), the projection onto {|gamma_t| <= mu gamma_n} in the R-norm,
 * and (if G != NULL) G = dP/dy R^-1 = -dgamma/dv_c (3 x 3 row-major, symmetric PSD). Soft norm
 * eps_s = 1e-7 on |y_t| (§3). Returns the region. */
kn_sap_contact_mode kn_sap_cone_project(double mu, double Rt, double Rn, const double y[3], double gamma[3],
                                        double G[9]);

/*---- the solver ----*/

typedef enum {
  KN_SAP_LINEAR_AUTO = 0, /* dense when nv (participating) <= dense_max_nv or when the clique blocks fill a
                             quarter of H or more (one big deformable clique), else sparse */
  KN_SAP_LINEAR_DENSE,    /* dense Cholesky (LAPACKE) */
  KN_SAP_LINEAR_SPARSE    /* CHOLMOD supernodal, symbolic analysis kept while the pattern holds */
} kn_sap_linear_solver;

/* One Newton iteration, reported to an optional monitor (the library never prints). */
typedef struct {
  int iteration;        /* k, after the step */
  double cost;          /* l(v_k) */
  double cost_prev;     /* l(v_{k-1}) */
  double alpha;         /* step length */
  double dl0;           /* l'(0) along the Newton direction (< 0) */
  double dl_alpha;      /* l'(alpha) */
  int line_search_iterations;
} kn_sap_iteration;

/* Defaults (kn_sap_options_default) are Drake's SapSolverParameters (§4.7). */
typedef struct {
  double abs_tolerance;       /* eps_a, 1e-14 [sqrt(J)] */
  double rel_tolerance;       /* eps_r, 1e-6 */
  double cost_abs_tolerance;  /* 1e-30 [J] */
  double cost_rel_tolerance;  /* 1e-15 */
  int max_iterations;         /* 100 Newton iterations */
  int ls_max_iterations;      /* 100, exact line search */
  double ls_alpha_max;        /* 1.5 */
  double relative_slop;       /* 1000 eps_mach */
  int nonmonotonic_is_error;  /* 0 */
  kn_sap_linear_solver linear_solver; /* AUTO */
  int dense_max_nv;           /* 64: largest participating nv solved densely under AUTO */
  int reuse_min_nv;           /* 300: from this participating nv on, inexact Newton that reuses the
                                 last factorization of H within the solve as the preconditioner of
                                 a CG solve (sap/pcg.c); <= 0: exact Newton, H factored every
                                 iteration. Same convergence test either way. */
  void (*monitor)(void* user, const kn_sap_iteration* it); /* NULL */
  void* monitor_user;
} kn_sap_options;
kn_sap_options kn_sap_options_default(void);

typedef struct {
  int iterations;              /* Newton iterations (0 when the guess is already optimal) */
  int line_search_iterations;  /* total evaluations inside the exact line search */
  int num_constraints, num_impulses, num_cliques, num_participating_cliques;
  int nv, nv_participating;
  double cost;                 /* l(v) at the solution */
  double residual;             /* ||D grad l||, D = diag(A)^-1/2 (§4.3) */
  double residual_scale;       /* max(||D A v||, ||D J^T gamma||) */
  int optimality_reached;      /* residual <= eps_a + eps_r scale fired */
  int cost_reached;            /* the cost criterion fired */
  int nonmonotonic_steps;      /* steps where l rose by more than the slop */
  int used_sparse;             /* 1 when CHOLMOD solved the Newton systems */
  int symbolic_analyses;       /* CHOLMOD analyses done in this solve (0 when reused) */
  int factorizations;          /* numeric factorizations of H */
  int cg_iterations;           /* H products inside the reused-factorization CG solves (0: exact Newton) */
  int lowrank_solves;          /* Newton directions solved exactly from an earlier factor (sap/lowrank.c) */
} kn_sap_stats;

typedef struct kn_sap_solver kn_sap_solver;

kn_sap_solver* kn_sap_solver_create(void);
void kn_sap_solver_free(kn_sap_solver* s);

/* (problem, options (NULL: defaults), v_guess (nv; NULL: v*), e.g. v_n) => v (nv), gamma
 * (num_impulses; may be NULL), stats (may be NULL). Non-participating cliques get v = v*.
 * KN_ERR_NUMERIC when Newton does not converge in max_iterations, a NaN appears or the line
 * search fails; the message names the worst constraint (index and kind) and v, gamma are left
 * untouched. The problem is never modified. */
kn_status kn_sap_solve(kn_sap_solver* s, const kn_sap_problem* p, const kn_sap_options* opt, const double* v_guess,
                       double* v, double* gamma, kn_sap_stats* stats, kn_error* err);

#ifdef __cplusplus
}
#endif
#endif
