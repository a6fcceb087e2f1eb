/* knead/nonlinear: the one step the nonlinear contact backends share (penalty, ipc,
 * smooth_friction; ARCHITECTURE "The time step", step 3).
 *
 * The unknown is v, every clique's DoFs concatenated in the world's clique order. A step solves
 *
 *     r(v) = sum_c grad E_c(v_c) + grad L(v) + r_contact(v) = 0
 *
 * where E_c is clique c's incremental potential (coupling/coupling.h: inertia, elasticity, damping,
 * gravity, explicit forces), L the robot-side terms written once for every backend — SAP's
 * regularized constraint costs (implicit PD with effort limit, joint limits, couplers, welds, FEM
 * attachments) taken as a convex potential of v (kn_sap_constraints_potential) — and r_contact the
 * backend's contact term, evaluated at each iterate through the material points' affine maps
 * x(v) = x0 + dt J v (kn_nl_points). All residuals are impulses (N s), like SAP's gradient.
 *
 * When every term is the gradient of an energy (problem.potential = 1: IPC, the lagged variants),
 * Newton minimizes sum E: Hessians symmetric (PSD-projected by their owners), CHOLMOD LDL^T,
 * backtracking Armijo on the energy (the backend may cap each step: ipc's CCD). Otherwise (implicit
 * friction, penalty anchors) it is damped Newton on r with a backtracking line search on the
 * scaled residual norm ||D r|| (digest implicit-smooth-friction §3.7-3.8), UMFPACK LU. D = M^-1, the
 * cliques' mass diagonals (kn_clique_ops.mass; a tree's A diagonal), so D r is a velocity error and
 * the stopping test, on every problem, is max_i |D r|_i <= abs_tol + rel_tol max|v| [m/s]. Not
 * diag(A)^-1: an elastic body's A = M + dt^2 K, and K does not resist its rigid modes, so that
 * scale accepted rigid-mode errors dt^2 K / M times the tolerance (an FEM block on an incline at dt
 * 5e-3 kept each step's guess, lost downhill momentum that no contact force accounted for and slid
 * 0.9 % short).
 *
 * A solver owns its workspaces; one per backend, not thread-safe. */
#ifndef KNEAD_NONLINEAR_H
#define KNEAD_NONLINEAR_H

#include "../common/common.h"
#include "../coupling/coupling.h"
#include "../sap/sap.h"

#ifdef __cplusplus
extern "C" {
#endif

/*---- sparse entries ----*/

/* (row, col, value) entries of an n x n matrix, duplicates summed when assembled. A failed
 * allocation sets nomem and drops the entry (the solver then fails with KN_ERR_NOMEM). */
typedef struct {
  int n, nnz, cap, nomem;
  int *i, *j;
  double* x;
} kn_nl_triplets;
void kn_nl_triplets_reset(kn_nl_triplets* t, int n);
void kn_nl_triplets_add(kn_nl_triplets* t, int i, int j, double x);
/* the same with the signature of kn_sap_entry_fn (user: the triplets) */
void kn_nl_triplets_entry(void* t, int i, int j, double x);
void kn_nl_triplets_free(kn_nl_triplets* t);

/*---- material points ----*/

/* The step's material points: each one's velocity Jacobian J (3 x n, by its nonzero columns) from
 * its clique's point map, x(v) = x0 + dt J v (under a scheme theta, coupling.h: theta dt, x0 = x_n +
 * (1 - theta) dt v0), and its velocity v0 = J v_n at the step start. A point with no columns is
 * fixed (a world collider's). */
typedef struct {
  int start, m;    /* its columns: col[start .. start + m), u[3 (start ..)] */
  double x0[3], v0[3];
} kn_nl_point;
typedef struct {
  kn_nl_point* p;
  int n, cap;
  int* col;
  double* u;       /* 3 per column: J's column */
  int m, capm, capu, nomem;
} kn_nl_points;
void kn_nl_points_reset(kn_nl_points* P);
/* (map of a point of the clique whose DoFs start at offset in v, ndof of them) => its index, or
 * -1 (nomem set) when out of memory; map NULL with x0: a fixed point */
int kn_nl_points_add(kn_nl_points* P, const kn_point_map* map, int offset, int ndof, const double* x0);
void kn_nl_points_free(kn_nl_points* P);
/* J_k v (k < 0: zero) */
void kn_nl_point_velocity(const kn_nl_points* P, int k, const double* v, double out[3]);
/* r += s J_k^T f */
void kn_nl_point_add_force(const kn_nl_points* P, int k, double s, const double f[3], double* r);
/* T += (s_a J_a)^T K (s_b J_b), K 3 x 3 row-major (either point may be < 0: nothing) */
void kn_nl_points_add_block(const kn_nl_points* P, int a, double sa, int b, double sb, const double K[9],
                            kn_nl_triplets* T);
/* relative velocity w = J_b v - J_a v, its force rows r += J_rel^T f, and J_rel^T K J_rel */
void kn_nl_pair_velocity(const kn_nl_points* P, int a, int b, const double* v, double w[3]);
/* the relative velocity at the step start, v0_b - v0_a */
void kn_nl_pair_start_velocity(const kn_nl_points* P, int a, int b, double w[3]);
void kn_nl_pair_add_force(const kn_nl_points* P, int a, int b, double s, const double f[3], double* r);
void kn_nl_pair_add_block(const kn_nl_points* P, int a, int b, const double K[9], kn_nl_triplets* T);

/*---- the problem and its solver ----*/

/* A backend's contact term: (v) => *E += its energy (when a potential; leave it otherwise), r +=
 * its residual (the energy's gradient), T += dr/dv (full: both triangles; may be NULL), S += a
 * symmetric positive semi-definite approximation of dr/dv (may be NULL: the iterative solver's
 * preconditioner; a potential's PSD-projected Hessian is its own). */
typedef struct {
  kn_status (*eval)(void* self, const double* v, double* E, double* r, kn_nl_triplets* T, kn_nl_triplets* S,
                    kn_error* err);
  /* optional, potential problems: the largest alpha in (0, 1] such that v + alpha p stays
   * admissible (ipc's CCD); NULL: 1 */
  double (*max_step)(void* self, const double* v, const double* p);
  /* optional, root-finding terms: on = 1 freezes the term at v into a potential (smooth friction:
   * friction lagged at v, the normal force lambda(d(v))) until lag(.., 0); the solver's passes
   * where Newton on the whole residual stalls. NULL: no passes */
  void (*lag)(void* self, const double* v, int on);
  /* optional, potential problems: on = 1 makes the term assemble its PSD-projected Hessian, 0 its
   * exact one (NULL: the term's only one). Newton assembles the exact one at each iterate and
   * projects only where CHOLMOD finds the matrix not positive definite: per-element projection of
   * a Hessian whose sum is positive definite turns Newton's quadratic convergence into linear (ipc's
   * barrier pairs, the twisted rods). Returns 1 if a projection is now on that was not */
  int (*project)(void* self, int on);
  /* optional, potential problems: called at the iterate v reached by a step that max_step capped
   * (alpha < 1); the term may stiffen itself there (ipc's kappa where a pair is crushed below the
   * CCD's reach, kn_ipc_term_stiffen). Returns 1 if it did: the energy changed, and Newton goes on
   * with the new one from v */
  int (*stiffen)(void* self, const double* v);
  int lag_roots;  /* 1: the lagged term is still no potential (a part has no energy): its passes root-find */
  /* optional, root-finding terms whose residual is piecewise smooth (contacts activating, sticking,
   * slipping): on = 1 records the pieces the term is on at v, on = 2 the same with every sliding
   * contact sticking, and evaluates every v on those until pieces(.., 0). The solver's active-set
   * steps where backtracking cuts Newton's step short (piece_step in newton.c). NULL: none */
  void (*pieces)(void* self, const double* v, int on);
  void* self;
} kn_nl_term;

typedef struct {
  int ncliques;
  kn_clique* cliques;          /* after free_motion; v is their DoFs in this order */
  const kn_sap_problem* robot; /* NULL or constraints over the same v (its cliques: ours, in order) */
  kn_nl_term contact;          /* eval NULL: none */
  int potential;               /* 1: minimize an energy (CHOLMOD); 0: root find (UMFPACK) */
} kn_nl_problem;

/* Defaults (kn_nl_options_default): abs_tol 1e-8 m/s, rel_tol 1e-8, 100 iterations, Armijo c1 1e-4,
 * backtracking factor 0.5 (digest §3.8), at most 40 halvings, iterative 1, 10 lagged passes.
 * iterative (root-finding problems): the Newton system by BiCGSTAB (van der Vorst) on the assembled
 * Jacobian, preconditioned by the Cholesky factor (CHOLMOD) of its symmetric PSD part (the cliques',
 * the robot-side terms' and the contact term's S), to the forcing term sigma_k = min(0.01,
 * (|r_k| / |r_k-1|)^1.618) of the digest's Algorithm 2, with the line search's test relaxed to
 * (1 - c1 alpha (1 - sigma_k)); when BiCGSTAB stalls, that iteration falls back to the LU.
 * 0: UMFPACK's LU every iteration ("Direct", Algorithm 1). */
typedef struct {
  double abs_tol, rel_tol;
  int max_iterations;
  double c1, backtrack;
  int max_line_search;
  int iterative;
  int max_passes;        /* lagged passes when Newton stalls [10] */
  int step_test;         /* potential problems: converged only when the Newton step max |dv| is within
                            the tolerance too (IPC's |p|/h, digest §4.2 step 5) [0] */
  int extend_steps;      /* potential problems: a full step whose secant curvature along p is below half
                            the model's is extended (newton.c extend_step: a per-term PSD projection
                            that drops negative curvature, ipc's pairs) [0] */
  double floor_step;     /* a Newton step below it moves no position beyond its round-off (16 eps
                            max |x| / dt, set per step by the caller, m/s): an iterate whose blind
                            steps stay below it is converged whatever D r is [0: no such rule] */
} kn_nl_options;
kn_nl_options kn_nl_options_default(void);

typedef struct {
  int iterations, line_search_iterations, factorizations;
  int krylov_iterations; /* BiCGSTAB iterations (iterative) */
  int lu_fallbacks;      /* Newton systems BiCGSTAB left to the LU */
  int passes;            /* lagged passes (kn_nl_term.lag) */
  int active_set_steps;  /* steps of piece_step taken (kn_nl_term.pieces) */
  int projections;       /* Newton directions redone with the term's projected Hessian (kn_nl_term.project) */
  int shifts;            /* Newton directions of the exact Hessian + tau M where CHOLMOD refused it (newton.c) */
  int step_estimates;    /* step tests met by the simplified Newton step, no factorization (newton.c) */
  double residual;       /* max |D r| at the end, or the Newton step's max |dv| when larger (step_test) [m/s] */
  double residual_start; /* ... at the guess */
  double energy;         /* potential problems: the energy at the end */
} kn_nl_stats;

typedef struct kn_nl_solver kn_nl_solver;
kn_nl_solver* kn_nl_solver_create(void);
void kn_nl_solver_free(kn_nl_solver* s);
/* total DoFs of the problem's cliques */
int kn_nl_problem_nv(const kn_nl_problem* p);
/* (v) => the energy (potential problems), r (nv) and, if T != NULL, dr/dv: the whole system at v
 * (for tests and diagnostics) */
kn_status kn_nl_eval(kn_nl_solver* s, const kn_nl_problem* p, const double* v, double* E, double* r,
                     kn_nl_triplets* T, kn_error* err);
/* (guess v0 (nv)) => v (nv). KN_ERR_NUMERIC when Newton does not converge, the linear system is
 * singular or a value is not finite; the message says at which iteration, the residual reached and
 * the worst DoF's clique; v is then untouched. */
kn_status kn_nl_solve(kn_nl_solver* s, const kn_nl_problem* p, const kn_nl_options* opt, const double* v0, double* v,
                      kn_nl_stats* stats, kn_error* err);
/* the last iterate of the last kn_nl_solve (nv; valid until the next solve): after a failed solve,
 * where Newton stopped, for diagnostics (the failing backend's worst contact) */
const double* kn_nl_solver_iterate(const kn_nl_solver* s);

#ifdef __cplusplus
}
#endif
#endif
