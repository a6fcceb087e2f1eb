/* knead/coupling: every body kind behind one interface, the clique (ARCHITECTURE "DoFs and cliques").
 *
 * A clique is a group of generalized velocities whose dynamics matrix A is one block: an
 * articulated tree (its nv joint velocities), an FEM body (3 per free vertex, in free_index order),
 * an MPM grid (3 per active node of this step, in the grid's node order). A contact backend sees
 * cliques through kn_clique_ops only, never the body kinds, and adding a backend changes nothing
 * here. Each clique offers, at the start of a step (free_motion first) and at any trial velocity v:
 *
 *   free motion       v* = argmin E(v) and A = d2E/dv2 at v*: as a dense block, sparse lower
 *                     triangle, or the Schur complement over chosen DoFs with recovery of the rest;
 *   potential         E(v), grad E(v), d2E/dv2 (v) (PSD-projected where the material needs it):
 *                     the implicit-Euler incremental potential in velocity form, up to a constant;
 *   point_map         where a material point (a rigid body's surface point, an FEM vertex, an MPM
 *                     particle) is at the end of the step, affine in v:
 *                       x(v) = x0 + dt (sum_a w_a v[col_a .. col_a + 3) + B v)
 *                     (the nodal form; SAP uses its linear part as the contact Jacobian, the other
 *                     backends evaluate geometry at their iterates with it);
 *   advance           v_n+1 => the body's state at t_n+1 (q, FEM x and R0, MPM G2P and plasticity);
 *   set_scheme        (optional) the time integration of every step from then on, a theta in
 *                     [1/2, 1] (digest implicit-smooth-friction §3.6's unified form, zeta = theta):
 *                       q_n+1 = q_n + dt ((1 - theta) v_n + theta v_n+1),
 *                       M (v_n+1 - v_n) = dt ((1 - theta) f(q_n, v_n) + theta f(q_n+1, v_n+1)),
 *                     theta = 1 backward Euler (every clique's default, and SAP's step), theta = 1/2
 *                     the trapezoidal rule on the whole force. Under theta the potential is
 *                       E(v) = 1/2 (v - v_n)^T M (v - v_n) + Psi(q^ + theta dt v)
 *                              + theta dt (1/2 v^T D v - f_ext^T v) - (1 - theta) dt f(q_n, v_n)^T v,
 *                     q^ = q_n + (1 - theta) dt v_n, its gradient the unified residual
 *                     M (v - v_n) - theta dt f(q^ + theta dt v, v) - (1 - theta) dt f(q_n, v_n) over
 *                     the clique's own forces; the point map x(v) = x0 + theta dt J v with
 *                     x0 = x_n + (1 - theta) dt J v_n (v0 = J v_n given with it), and advance moves
 *                     by dt ((1 - theta) v_n + theta v_n+1). A contact backend adds its own forces
 *                     likewise: theta dt J^T f_c(x(v), v) + (1 - theta) dt J^T f_c(x_n, v0).
 *
 * The world owns the cliques (sim/cliques.c builds them in its order: trees with nv > 0, FEM bodies,
 * MPM grids); their scratch lives here, reused by every step. */
#ifndef KNEAD_COUPLING_H
#define KNEAD_COUPLING_H

#include "../common/common.h"
#include "../deformable/deformable.h"
#include "../mpm/mpm.h"
#include "../multibody/multibody.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { KN_CLIQUE_TREE = 0, KN_CLIQUE_FEM = 1, KN_CLIQUE_MPM = 2 } kn_clique_kind;

/* A symmetric matrix by its lower triangle in compressed columns (CHOLMOD's int layout, stype -1;
 * each column's row indices ascending and led by the diagonal). A view: the clique owns the arrays. */
typedef struct {
  int n;
  const int *p, *i;
  const double* x;
} kn_csc_view;

/* The affine map of one material point over the step (see above). Nodal terms: an FEM vertex has
 * one (w = 1), an MPM particle one per grid node of its stencil with w_ip > 0, a fixed FEM vertex
 * none; a tree point has none and a dense B instead (its point Jacobian at q_n, 3 x ndof row-major,
 * the clique's scratch, valid until its next point_map call). */
typedef struct {
  double x0[3];
  double v0[3];   /* the point's velocity at the step start, J v_n (an MPM particle: its own v_n) */
  int n;
  int col[27];
  double w[27];
  const double* B;
} kn_point_map;

typedef struct kn_clique_ops {
  kn_clique_kind kind;
  /* start of a step (the state at t_n; a tree's kinematics and explicit forces set by
   * kn_clique_tree_begin) => v* and A; errors name the body */
  kn_status (*free_motion)(void* self, double dt, kn_error* err);
  /* after free_motion: the DoFs of this step, v* (ndof) */
  int (*ndof)(const void* self);
  const double* (*v_star)(const void* self);
  /* where an iteration starts: v_n (an MPM grid: the last step's v_n+1 at the nodes it had) */
  void (*v_start)(const void* self, double* v);
  /* A after free_motion: its diagonal (ndof); dense row-major ndof x ndof (the clique's scratch;
   * NULL with KN_ERR_NOMEM); its lower triangle (n = 0 for a tree, which has only the dense form) */
  void (*diagonal)(const void* self, double* d);
  const double* (*dense)(void* self, kn_error* err);
  kn_csc_view (*sparse)(const void* self);
  /* (P: np increasing DoFs) => S = A_PP - A_PN A_NN^-1 A_NP (np x np row-major), from the free
   * motion's factor (deformable/schur.c's routes); then recover(dv_P) => dv (ndof) with
   * dv_N = -A_NN^-1 A_NP dv_P: the rest of v_n+1 = v* + dv once the backend found v_P */
  kn_status (*schur)(void* self, const int* P, int np, double* S, kn_error* err);
  void (*recover)(void* self, const double* dv_P, double* dv);
  /* (v: ndof) => E(v) (*E, if non-NULL), grad (ndof, if non-NULL), the Hessian (*H, if non-NULL:
   * a view valid until the next call; PSD-projected where the material needs it), up to a
   * constant per step; after free_motion. KN_ERR_NOMEM, KN_ERR_INVALID naming the body. */
  kn_status (*potential)(void* self, const double* v, double* E, double* grad, kn_csc_view* H, kn_error* err);
  /* material point => its map: a tree's point is (body index, world point at q_n); an FEM body's
   * a vertex index, an MPM grid's a particle index (p unused) */
  void (*point_map)(void* self, int index, const double p[3], double dt, kn_point_map* out);
  /* (v_n+1: ndof) => the body at t_n+1. Transactional per clique (on failure its state is as it
   * was), not across cliques: the world restores every body when a step fails. */
  kn_status (*advance)(void* self, const double* v_next, double dt, kn_error* err);
  const char* (*name)(const void* self);
  void (*destroy)(void* self);
  /* (optional; NULL: backward Euler only) theta of the following steps (above), before their free
   * motion. KN_ERR_UNSUPPORTED naming the body when the kind has only backward Euler (an MPM grid,
   * rebuilt every step, has no v_n at its nodes for the explicit half). */
  kn_status (*set_scheme)(void* self, double theta, kn_error* err);
  /* (optional; NULL: diagonal) the diagonal of the clique's mass (ndof: an FEM body's or an MPM
   * grid's lumped masses), the scale of a momentum residual: the nonlinear step stops on
   * max |r_i / m_i| (nonlinear/newton.c), a velocity. A's diagonal M + dt^2 K would loosen that
   * test by dt^2 K / M on a stiff body's rigid modes, which K does not resist. */
  void (*mass)(const void* self, double* d);
} kn_clique_ops;

typedef struct {
  const kn_clique_ops* ops;
  void* self;
} kn_clique;

/* (view) => its diagonal d (n); the full symmetric matrix row-major into D (n x n); y = A x */
void kn_csc_diagonal(const kn_csc_view* A, double* d);
void kn_csc_dense(const kn_csc_view* A, double* D);
/* kn_csc_dense into *D, grown to n^2 doubles (*cap) when needed; NULL with KN_ERR_NOMEM */
const double* kn_csc_dense_into(const kn_csc_view* A, double** D, size_t* cap, kn_error* err);
void kn_csc_mul(const kn_csc_view* A, const double* x, double* y);
/* x(v) of a map (v: the clique's ndof velocities; dt: theta dt under a scheme theta) */
void kn_point_map_eval(const kn_point_map* m, int ndof, const double* v, double dt, double x[3]);
/* the clique's set_scheme; theta 1 is always accepted, anything outside [1/2, 1] is KN_ERR_INVALID,
 * theta < 1 on a kind without set_scheme KN_ERR_UNSUPPORTED naming it */
kn_status kn_clique_set_scheme(kn_clique* c, double theta, kn_error* err);

/*---- the three kinds ----*/

/* An articulated tree with nv > 0 over the caller's arrays: q, v (the state), q_start (q_n, kept
 * by the caller for the step: q_n+1 = q_n + dt N(q_n) v_n+1), data (its kinematics). */
kn_status kn_clique_tree_create(const kn_mb_model* m, kn_mb_data* data, double* q, double* v, const double* q_start,
                                const char* name, kn_clique* out, kn_error* err);
/* Start of a step: data holds the kinematics at (q_n, v_n); tau (nv) the explicit generalized
 * forces of the step (NULL: none). Kept until free_motion. */
void kn_clique_tree_begin(kn_clique* c, const double* tau);
/* A tree's potential is exact for its linearization at q_n: E = 1/2 (v - v*)^T A (v - v*). */

/* An FEM body: its free vertices' velocities. The free motion is Newton on its backward-Euler
 * potential (kn_fem_free_motion); the Schur complement reuses that factor. */
kn_status kn_clique_fem_create(kn_fem_body* b, kn_clique* out, kn_error* err);
/* An MPM grid body (the particles of every deformable sharing the grid): P2G and Newton
 * (kn_mpm_free_motion) under gravity g. Keeps its last v_n+1 by node for v_start: part of the
 * state a saved state carries (kn_clique_mpm_warm_start). */
kn_status kn_clique_mpm_create(kn_mpm_body* b, const double gravity[3], kn_clique* out, kn_error* err);
/* the warm start: nodes (3 ints each, sorted) and their v (3 each), n of them; take replaces it
 * with the caller's malloc'ed arrays, owned by the clique from then on (a saved state's) */
void kn_clique_mpm_warm_start(const kn_clique* c, const int** nodes, const double** v, int* n);
void kn_clique_mpm_take_warm_start(kn_clique* c, int* nodes, double* v, int n);

void kn_clique_destroy(kn_clique* c);

#ifdef __cplusplus
}
#endif
#endif
