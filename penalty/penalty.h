/* knead/penalty: the penalty contact formulations (issue 19). Built so far: the continuous penalty
 * force of one vertex-face or edge-edge pair over a step (Tang et al.;
 * ../shared/papers/continuous-penalty-forces.md §3-4): the pair's CCD cubic, its first contact and
 * penetrated side, the penetration intervals, and the average force, integrated in closed form
 * (3-point Gauss-Legendre, exact for the degree-5 integrand), distributed to the four vertices.
 * And the friction relaxation of Ding & Schroeder against a level set or plane
 * (../shared/papers/penalty-coulomb-friction.md §3.1-3.4, §3.7.1): a particle Z tied by a
 * zero-rest-length spring to its anchor on the surface, the anchor moved only as far as the
 * friction cone requires. And the `penalty` backend's contact term in the shared nonlinear step
 * (term.c; nonlinear/nonlinear.h): each contact a zero-rest-length spring between its two material
 * points' relative position and an anchor on a local plane, or on a triangle mesh (mesh_relax.c, the
 * finite-state machine of §3.5 with the Jacobians of §3.7.3), relaxed into the cone at every
 * iterate. */
#ifndef KNEAD_PENALTY_H
#define KNEAD_PENALTY_H

#include "../common/common.h"
#include "../nonlinear/nonlinear.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A pair's stencil: vertex-face (p, a, b, c) or edge-edge (a, b, c, d), start positions x0 and end
 * positions x1 (12 doubles each), moving linearly: x(s) = x0 + s (x1 - x0), s in [0, 1]. */
typedef struct {
  const double *x0, *x1;
  int edge_edge;
} kn_cpf_stencil;

/* the coplanarity cubic f(s) = m(s) . r(s) (f[4], power form) and the unnormalized normal m(s) =
 * m[0..2] + s m[3..5] + s^2 m[6..8] (§3.2, §3.3) */
void kn_cpf_cubic(const kn_cpf_stencil* st, double f[4], double m[9]);
/* the roots of f in [0, 1], ascending (returns how many, <= 3; tangent roots included once) */
int kn_cpf_roots(const double f[4], double roots[3]);

/* What a pair keeps from step to step: the frozen weights of its traced points (vertex-face: 1 for
 * p, then the barycentric (w_a, w_b, w_c); edge-edge: (1 - alpha, alpha, 1 - beta, beta)) and the
 * penetrated side sigma = +-1 (the sign of f there). */
typedef struct {
  double w[4];
  int sigma;
} kn_cpf_pair;

/* (a new candidate) => 1 with the pair and its first contact *s_star when the features meet inside
 * (barycentric or segment parameters >= -eps), 0 otherwise (§3.2-3.5) */
int kn_cpf_first_contact(const kn_cpf_stencil* st, double eps, kn_cpf_pair* pair, double* s_star);
/* (pair, the time it starts being tracked this step: s_star for a new pair, 0 for a carried one,
 * stiffness k) => the average force on each vertex over the step (F, 12 doubles: -k/L_k^2 times the
 * integral of f m over the penetration intervals on the traced point, distributed by the weights,
 * §4.4, §4.6), returned: 1 when the pair still penetrates at s = 1 (keep it), 0 to release it */
int kn_cpf_force(const kn_cpf_stencil* st, const kn_cpf_pair* pair, double s_start, double k, double F[12]);

/* How a pair's force is integrated (§5.6's ablation modes, contact.penalty.ablation): the average
 * of the continuous force with the constant normalizer L_k (§4.4, the default), with the exact one
 * |m(s)| (§4.7: 8 panels of 3-point Gauss-Legendre per interval), or -k delta(1) n(1) on the CCD
 * pair, constant over the step (dpf_ccd, Fig. 8b). */
typedef enum { KN_CPF_LK = 0, KN_CPF_EXACT, KN_CPF_DPF_CCD } kn_cpf_mode;
/* kn_cpf_force in any mode (KN_CPF_LK gives kn_cpf_force's F) with, when dF is non-NULL, its
 * Jacobian in the end positions x1 (144, row-major: dF[12 (3 v + a) + 3 u + b] = dF_{v,a}/dx1_{u,b};
 * §4.9, the pair, its start and the weights frozen, the intervals re-cut at the roots of f, whose
 * Leibniz terms vanish) and, when stiff is non-NULL, the integral of s over the intervals (dpf_ccd:
 * 1 while active): -k stiff is the traced point's force derivative along the normal in 1D
 * (continuous_jacobian.c). Returns kn_cpf_force's keep flag. */
int kn_cpf_force_jacobian(const kn_cpf_stencil* st, const kn_cpf_pair* pair, double s_start, double k, kn_cpf_mode mode,
                          double F[12], double dF[144], double* stiff);
/* The same force as the implicit step takes it (cpf_term.c): the path average weighted by 2 s, so
 * F = -grad_x1 of twice the path-averaged penalty energy, 2 int_0^1 k/2 delta(x(s))^2 ds over
 * x(s) = x0 + s (x1 - x0) (the 2 making a constant force its own). A pair penetrating along the whole
 * step then pushes k (delta0 / 3 + 2 delta1 / 3), where the mean pushes k (delta0 + delta1) / 2: the
 * mean puts the spring at the step's start, -k delta0 plus a damper k h / 2 on v_{n+1}, whose period-2
 * factor goes to 1 as a = k h^2 / m grows (0.80 at a = 40, 0.98 at 400: a block at k 1e5 still
 * bouncing after 2 s), the weight two thirds of it on the end (the factor 0.28 at a = 40, 0.48 at
 * 400, going to 1/2). The same
 * in the modes but dpf_ccd (already the end's; unweighted); stiff the integral of 2 s^2. */
int kn_cpf_impulse_jacobian(const kn_cpf_stencil* st, const kn_cpf_pair* pair, double s_start, double k,
                            kn_cpf_mode mode, double F[12], double dF[144], double* stiff);

/* The continuous penalty forces as a contact term of the shared Newton solve (cpf_term.c; §5.5
 * option 2): per pair its four material points (kn_nl_points; a fixed point has no columns), the
 * frozen pair and its start (s* for a pair found on this step's predictor path, 0 for a carried one).
 * The end positions are x1 = x0 + dt J v; the residual is -dt J^T F (the average force as an
 * impulse, with its friction: kn_cpf_friction), its Jacobian -dt^2 J^T dF/dx1 J (not symmetric: the
 * force is not a gradient), the PSD part dt^2 k stiff g g^T with g = (sign w n) over the four points,
 * n the normal at the step's end, plus the friction's Sfr blocks. */
typedef struct {
  int edge_edge;
  int pt[4];
  kn_cpf_pair pair;
  double s_start;
  double mu;             /* the pair's friction coefficient (0: frictionless) */
  double k;              /* the pair's stiffness [N/m]; 0: the term's k */
  double lam;            /* the friction's lagged normal force [N] (used when the term's lag_lambda) */
  double anchor[4];      /* the anchored friction's anchor weights (like pair.w; kn_cpf_anchor_friction) */
} kn_cpf_term_pair;
typedef struct {
  double dt, k;
  double eps_v;          /* friction's smoothing velocity [m/s] (kn_cpf_friction; 0: frictionless) */
  kn_cpf_mode mode;
  int lag_lambda;        /* 1: the friction's lambda is each pair's lam, fixed during the solve; 0: exact */
  int anchored;          /* 1: the friction is each pair's anchored spring (kn_cpf_anchor_friction, stiffness
                            k), 0: the smoothed Coulomb of kn_cpf_friction (eps_v) */
  const kn_nl_points* points;
  const double* x1_off;  /* per material point, 3: added to its end x1 (its path's curvature over the step,
                            constant in v: sim/mesh_arcs.c); NULL: none */
  const kn_cpf_term_pair* pairs;
  int n;
} kn_cpf_term;
/* pair i at v => its four forces F (12), normal and friction (kn_cpf_friction with the pair's mu),
 * optionally dF/dx1 and stiff (kn_cpf_force_jacobian); returns whether it still penetrates at s = 1 */
int kn_cpf_term_pair_force(const kn_cpf_term* t, int i, const double* v, double F[12], double dF[144], double* stiff);
/* pair i's normal force lambda = |F_+ . n0| at v (its friction's lam when lagged) */
double kn_cpf_term_pair_lambda(const kn_cpf_term* t, int i, const double* v);
/* Coulomb friction on a pair (cpf_friction.c; §4.10 gives no formula): at the traced point, on the
 * step's relative velocity u = sum_j sign_j w_j (x1_j - x0_j) / dt, its part u_t normal to the
 * pair's start normal n0 (m(0)), f = -mu lambda f1(|u_t|) u_t / |u_t| (IPC's mollifier f1 of width
 * eps [m/s]) with lambda = |F_+ . n0| the pair's normal force in F at this iterate (exact, not
 * lagged: |f| <= mu lambda). (the stencil, its pair, F the normal forces with dF/dx1 or NULL) =>
 * F += the friction distributed by sign_j w_j, dF += its derivative (lambda's included), and
 * optionally Sfr = mu lambda D / dt (D = d(f1 u_t / |u_t|)/du, symmetric PSD: the PSD part's
 * block per sign_a w_a sign_b w_b dt^2), ft the friction on the + side and fn = lambda. */
void kn_cpf_friction(const kn_cpf_stencil* st, const kn_cpf_pair* pair, double mu, double eps, double dt, double lam_lag,
                     double F[12], double dF[144], double Sfr[9], double ft[3], double* fn);
/* Anchored (stiction) friction on a pair (cpf_friction.c; the springs of penalty-coulomb-friction.md
 * on the pair's features): a zero-rest-length tangential spring of stiffness k from the anchor beta
 * (weights like the pair's w: vertex-face (1, barycentric), edge-edge (1 - alpha, alpha, 1 - beta,
 * beta)), r = sum_j sign_j beta_j x1_j, r_t its part normal to n0 (m(0)); with rho = k |r_t| / (mu
 * lambda), f = -k r_t while rho <= 1 - KN_CPF_CONE_BAND (stuck), -mu lambda r_t / |r_t| from
 * rho >= 1 + KN_CPF_CONE_BAND (on the cone), a C1 quadratic blend of the two between (cpf_friction.c);
 * lambda as in kn_cpf_friction. F += f distributed by sign_j beta_j, dF += its derivative; Sfr the
 * PSD block per sign_a beta_a sign_b beta_b dt^2 (d(-f)/dr_t); ft, fn as kn_cpf_friction. */
#define KN_CPF_CONE_BAND 0.1
void kn_cpf_anchor_friction(const kn_cpf_stencil* st, const double beta[4], double mu, double k, double lam_lag,
                            double F[12], double dF[144], double Sfr[9], double ft[3], double* fn);
/* after a step (the stencil x0 -> x1 it took, the pair's lambda there): the anchor slid onto the cone,
 * as the discrete springs' relax (k |r_t| = (1 + KN_CPF_CONE_BAND) mu lambda after it: where the
 * blend reaches the cone, so that |f| = mu lambda there); 1 when it moved */
int kn_cpf_anchor_relax(const kn_cpf_stencil* st, double beta[4], double mu, double k, double lam);
/* A pair outliving its features (cpf_walk.c; §8 item 14). (triangle a, b, c, point p) => w, the
 * barycentric coordinates of p's projection on the triangle's plane; 0 for a degenerate triangle */
int kn_cpf_barycentric(const double a[3], const double b[3], const double c[3], const double p[3], double w[3]);
/* (a surface's positions x and triangles with their adjacency (kn_penalty_mesh_topology), triangle t,
 * point p, tolerance) => the triangle p projects into (every coordinate >= -tol) and w there, found
 * by crossing the edge opposite the most negative coordinate, at most KN_CPF_WALK_STEPS times; -1
 * when the walk crosses an open edge, meets a degenerate triangle or does not settle */
#define KN_CPF_WALK_STEPS 16
int kn_cpf_walk(const double* x, const int* tri, const int* adj, int t, const double p[3], double tol, double w[3]);
/* (an edge-edge stencil's positions a, b, c, d) => the parameters of the two lines' closest points,
 * a + alpha (b - a) and c + beta (d - c); 0 when the edges are parallel */
int kn_cpf_edge_params(const double x[12], double* alpha, double* beta);
/* kn_nl_term's eval (self: a kn_cpf_term), a root-finding term (E untouched) */
kn_status kn_cpf_term_eval(void* self, const double* v, double* E, double* r, kn_nl_triplets* T, kn_nl_triplets* S,
                           kn_error* err);

/* A signed distance phi (negative inside) with its gradient n (unit at the surface) and Hessian H
 * (9, may be requested NULL) at x. */
typedef struct {
  double (*phi)(void* ctx, const double x[3], double n[3], double H[9]);
  void* ctx;
} kn_levelset;

typedef enum { KN_RELAX_INACTIVE = 0, KN_RELAX_STATIC = 1, KN_RELAX_DYNAMIC = 2 } kn_relax_state;
/* (the anchor X on the surface, the particle Z, mu, k) => the relaxed anchor Y (static: Y = X;
 * dynamic: X slid toward Z's closest point W by the plane formula, then projected back on the
 * surface, §3.3-3.4), the spring force on the particle f = k (Y - Z) and df/dZ (9, row-major; with
 * the anchor's motion), when non-NULL. Inactive (phi(Z) > 0): Y = X, f = 0, df/dZ = 0. On a plane
 * the force is exactly on the cone when dynamic; on a curved level set approximately (§3.4). */
kn_relax_state kn_penalty_relax(const kn_levelset* ls, const double X[3], const double Z[3], double mu, double k,
                                double Y[3], double f[3], double dfdZ[9]);

/*---- triangle-mesh relaxation (mesh_topology.c, mesh_relax.c; digest §3.5, §3.7.3) ----*/

/* A triangle mesh as the relaxation walks it: positions x (nv x 3, in the frame the relaxation
 * runs in: a rigid mesh's geometry frame, an FEM surface's world), triangles wound counter-clockwise
 * seen from outside ((x1 - x0) x (x2 - x0) points out), the triangle across each edge (adj[3 t + e]
 * across edge (tri[3 t + e], tri[3 t + (e + 1) % 3]), -1 for an open edge) and the triangles around
 * each vertex (vt[vt_start[v] .. vt_start[v + 1])). All borrowed. */
typedef struct {
  int nv, nt;
  const double* x;
  const int *tri, *adj, *vt_start, *vt;
  const double* tsphere; /* nt x 4 (centre, radius) bounding each triangle, or NULL: the projection's
                            pretest (kn_penalty_mesh_spheres) */
} kn_penalty_mesh;

/* (mesh) => tsphere (nt x 4, the caller's): each triangle's centroid and the farthest vertex from it */
void kn_penalty_mesh_spheres(const kn_penalty_mesh* m, double* tsphere);

/* (nv, nt, tri) => the mesh's adjacency, owned (kn_penalty_mesh_topology_free): an edge shared by
 * more than two triangles pairs its first two (a non-manifold mesh walks as if the others were
 * open); KN_ERR_NOMEM, KN_ERR_INVALID for a vertex index out of range (naming the triangle) */
typedef struct {
  int *adj, *vt_start, *vt;
} kn_penalty_mesh_topology;
kn_status kn_penalty_mesh_topology_build(int nv, int nt, const int* tri, kn_penalty_mesh_topology* top, kn_error* err);
void kn_penalty_mesh_topology_free(kn_penalty_mesh_topology* top);

/* A point of the mesh: triangle and barycentric weights (w[k] of vertex tri[3 t + k]). */
typedef struct {
  int tri;
  double w[3];
} kn_penalty_mesh_point;

/* the finite-state machine's states (§3.5) */
enum { KN_MESH_TRI = 1, KN_MESH_TRI_FROM_EDGE = 2, KN_MESH_EDGE = 3, KN_MESH_VERTEX = 4 };
#define KN_MESH_RELAX_MAX_STEPS 64 /* a hard cap (§3.5 termination, [D]): the walk stops where it is */
#define KN_MESH_RELAX_MAX_VERTS 32 /* vertices whose motion Y's Jacobian can carry */
#define KN_MESH_RELAX_PATH 16      /* states recorded for the statistics of §6.9 */

/* One relaxation: where Y ended and how it depends on Z and the vertices it walked over. */
typedef struct {
  kn_relax_state state;        /* STATIC: Y = X; DYNAMIC: slid; INACTIVE: separated, or left the mesh */
  double Y[3];
  kn_penalty_mesh_point at;    /* Y as a point of a triangle (the final one; at an edge or vertex one
                                  of the triangles holding it) */
  int stop;                    /* the state it stopped in (KN_MESH_TRI ... KN_MESH_VERTEX) */
  int nsteps;                  /* the machine's steps (states entered after the first) */
  unsigned char path[KN_MESH_RELAX_PATH]; /* the first states visited, path[0] = KN_MESH_TRI */
  int capped;                  /* stopped by KN_MESH_RELAX_MAX_STEPS */
  int left_open;               /* INACTIVE because it crossed an open edge */
  double dYdZ[9];              /* row-major */
  int nvert;                   /* dY/dx_v for the vertices v it depends on (w_v I for a static anchor) */
  int vert[KN_MESH_RELAX_MAX_VERTS];
  double dYdx[KN_MESH_RELAX_MAX_VERTS][9];
  int truncated;               /* more vertices than KN_MESH_RELAX_MAX_VERTS: dYdx incomplete */
  int ntrail;                  /* Y after each of its first moves (the shrinking-distance check) */
  double trail[KN_MESH_RELAX_PATH][3];
} kn_penalty_mesh_relax_out;

/* (mesh, the anchor X as a mesh point, the particle Z, mu) => the relaxed anchor (§3.5): the walk of
 * states (1)-(4) from X until the spring's pull k (Y - Z) is inside the cone of the plane (or line)
 * Y is on, each move straight toward Z's projection W and no farther than the cone needs, so
 * |Y - Z| shrinks at every move; then the separation test (the final triangle's side, an edge's two
 * faces or its concavity, a vertex's fan's solid angle seen from Z). Jacobians by forward dual
 * numbers through every step (§3.7.3), cut at a vertex (Y is then the vertex). Round-off guards
 * 128 eps (§7 item 9). */
void kn_penalty_mesh_relax(const kn_penalty_mesh* m, const kn_penalty_mesh_point* X, const double Z[3], double mu,
                           kn_penalty_mesh_relax_out* out);
/* dY = dYdZ dZ + sum_v dYdx_v dx_v (dx: 3 per mesh vertex, may be NULL) and its transpose: gZ =
 * dYdZ^T g, gx_v += dYdx_v^T g (gx: 3 per mesh vertex, may be NULL) */
void kn_penalty_mesh_relax_jvp(const kn_penalty_mesh_relax_out* o, const double dZ[3], const double* dx, double dY[3]);
void kn_penalty_mesh_relax_vjp(const kn_penalty_mesh_relax_out* o, const double g[3], double gZ[3], double* gx);
/* the mesh point's position */
void kn_penalty_mesh_point_x(const kn_penalty_mesh* m, const kn_penalty_mesh_point* p, double x[3]);
/* (mesh, point y near it, an expected outward normal nhint or NULL, slack >= 0 [m]) => the nearest
 * point of the mesh (brute force over the triangles, for small meshes and tests); where other
 * triangles are within slack (+ 1e-9 m) as near, the one whose normal is closest to nhint: a point
 * a contact's depth inside a cube's corner is nearer the side faces, but the anchor belongs on the
 * face the contact presses on */
void kn_penalty_mesh_nearest(const kn_penalty_mesh* m, const double y[3], const double nhint[3], double slack,
                             kn_penalty_mesh_point* p);

/*---- the backend's contact term (term.c) ----*/

/* One contact of the step (digest 000 §3.1, §3.3, §3.6): material points a and b (kn_nl_points; -1:
 * fixed in the world), the unit normal n from A into B, the gap phi0 at the step start, mu, and the
 * anchor X. The contact is written in the frame of A's surface, a plane through A's point with
 * normal n that moves with A's point: B's point there is Z(v) = phi0 n + dt (J_b - J_a) v (exact for
 * the points' affine maps, the normal kept from detection; the origin below B's point at the step
 * start), the anchor X on the plane (n.X = 0) is where A's side of the spring sits relative to that
 * origin, i.e. the tangential part of (A's anchored point - B's anchored point) at the step start,
 * 0 for a new contact (the closest point, §3.4). At each iterate the anchor is relaxed against the
 * plane (kn_penalty_relax: Y = X while the spring's force k (Y - Z) is inside the cone, slid toward
 * Z's projection onto its edge otherwise) and B feels f = k (Y - Z) while Z is below the plane,
 * nothing above it. */
/* An FEM boundary as a contact's anchor side (fem_walk.c): the walkable mesh over the body's
 * vertices at the iterate (mesh.x points at x, set by kn_penalty_term_move: x_v = x0_v + dt J_v v)
 * and each surface vertex's material point pt[v] (-1: not on the surface, never moved) */
typedef struct {
  kn_penalty_mesh mesh;
  double* x;                 /* nv x 3 */
  const int* pt;             /* nv */
  const int* verts;          /* the surface's vertices */
  int nverts;
} kn_penalty_fem_mesh;

typedef struct {
  int a, b;
  double n[3], phi0, X[3], mu;
  double arc[3];             /* added to Z(v): B's point's offset from its straight path minus A's
                                (their arcs over the step at v_n, constant in v: sim/mesh_arcs.c) */
  double k;                  /* its spring's stiffness [N/m]; 0: the term's k (kn_penalty_contact_k) */
  /* A's side a triangle mesh (digest §3.5-3.6; NULL: the plane above): the anchor Xm on it, relaxed
   * by kn_penalty_mesh_relax in the mesh's own frame, a point p of the contact's frame above being
   * R^T (p - o) there (the mesh moves with A's point during the step, without turning); X is Xm
   * in the contact's frame */
  const kn_penalty_mesh* mesh;
  kn_penalty_mesh_point Xm;
  double R[9], o[3];
  /* A's side an FEM boundary (fem_walk.c; NULL: above): the anchor Xm on fem->mesh walked at the
   * iterate's positions in the world, the particle B's point Z(v) = z0 + dt J_b v (world), f = k (Y -
   * Z) on B and its reaction -f on the final triangle's vertices by Y's weights (a stays unused) */
  const kn_penalty_fem_mesh* fem;
  double z0[3];
} kn_penalty_contact;

typedef struct {
  double dt, k;                     /* time step [s], spring stiffness [N/m] of a contact without its own */
  const kn_nl_points* points;
  const kn_penalty_contact* c;
  int n;
  double* dense;                    /* scratch: small systems' blocks summed densely (kn_penalty_term_free) */
  int dense_cap;
  double* Y_ref;                    /* n x 3, or NULL (no lagged passes): the anchors of kn_penalty_term_lag */
  unsigned char* active_ref;        /* n: the contact was active there */
  int use_ref;                      /* set by kn_penalty_term_lag: the term is the potential lagged there */
  int* tri_ref;                     /* n, or NULL: a walk's final triangle at the lag (its weights in
                                       Y_ref; -1: inactive there) */
  kn_penalty_fem_mesh* fems;        /* the FEM boundaries contacts walk (kn_penalty_term_move) */
  int nfems;
  unsigned char* piece;             /* n, or NULL: the pieces of kn_penalty_term_pieces */
  int use_piece;                    /* set by kn_penalty_term_pieces */
} kn_penalty_term;

/* contact c's spring stiffness: its own k, else the term's */
static inline double kn_penalty_contact_k(const kn_penalty_term* t, const kn_penalty_contact* c) {
  return c->k > 0 ? c->k : t->k;
}

/* the FEM boundaries' positions at v (every evaluation starts with it; call it before
 * kn_penalty_term_contact at a new v) */
void kn_penalty_term_move(kn_penalty_term* t, const double* v);

/* One walk on an FEM boundary at v (fem_walk.c): Z, the relaxation, f = k (Y - Z) on B, the final
 * triangle's vertices tv and Y's weights w there, and, with jac, the weights' derivatives
 * dw_i = g_i . (dY - sum_j w_j dx_tv_j) (§3.7.3; exact while Y is in the triangle's plane) */
typedef struct {
  double Z[3], f[3];
  kn_penalty_mesh_relax_out o;
  int tv[3];
  double w[3], g[3][3];
} kn_penalty_fem_walk;
kn_relax_state kn_penalty_fem_walk_eval(const kn_penalty_term* t, const kn_penalty_contact* c, const double* v, int jac,
                                        kn_penalty_fem_walk* out);
/* contact i (on an FEM boundary) into r, T and S (as kn_penalty_term_eval's; D, DS the dense scratch
 * or NULL): r_b -= dt f, r_tv_i += dt w_i f; T the full Jacobian through every vertex the walk
 * depends on and the weights' derivatives; S dt^2 k (I sticking, n n^T sliding) on J_b - sum w_i J_i */
void kn_penalty_fem_walk_add(const kn_penalty_term* t, int i, const double* v, double* r, kn_nl_triplets* T, double* D,
                             kn_nl_triplets* S, double* DS);
/* contact i (on an FEM boundary) lagged (kn_penalty_term_lag, with tri_ref): the anchor frozen as
 * the point of weights Y_ref on triangle tri_ref, moving with its vertices, Y_l(v) = sum w_j x_tv_j;
 * the potential k/2 min(phi, 0)^2 + k/2 |P_t (Y_l - Z)|^2 with phi = n . (Z - Y_l) (returned), its
 * gradient into r (the full term's residual at the lag's v), its Hessian dt^2 J_rel^T k (n n^T [phi <
 * 0] + P_t) J_rel (J_rel = J_b - sum w_j J_tv_j) into T and S */
double kn_penalty_fem_walk_lagged(const kn_penalty_term* t, int i, const double* v, double* r, kn_nl_triplets* T,
                                  double* D, kn_nl_triplets* S, double* DS);
/* T += (sa J_a)^T K (sb J_b), into the dense n x n scratch D instead when D is non-NULL (term.c) */
void kn_penalty_add_block(const kn_nl_points* P, int a, double sa, int b, double sb, const double K[9],
                          kn_nl_triplets* T, double* D);

/* contact i at v => its state, Z, the relaxed anchor Y, the force on B f = k (Y - Z) [N] (0 when
 * inactive) and df/dZ (9, row-major; may be NULL) */
kn_relax_state kn_penalty_term_contact(const kn_penalty_term* t, int i, const double* v, double Z[3], double Y[3],
                                       double f[3], double dfdZ[9]);
/* kn_nl_term's pieces (pieces.c): on (1), each plane contact's state at v (inactive, sticking,
 * sliding) is recorded, with on = 2 a sliding one as sticking, and until off (0) evaluations take a
 * contact recorded as sticking as sticking (f = k (X - Z), df/dZ = -k I: the static piece continued
 * past its cone and above the plane) and one recorded as inactive as inactive; the others (sliding,
 * mesh and FEM contacts) relax as usual */
void kn_penalty_term_pieces(void* self, const double* v, int on);
/* contact i's state as the recorded pieces have it (natural: its relaxation's state at Z), with Y, f
 * and df/dZ (may be NULL) made the piece's */
kn_relax_state kn_penalty_term_piece(const kn_penalty_term* t, int i, kn_relax_state natural, const double Z[3],
                                     double Y[3], double f[3], double dfdZ[9]);
/* kn_nl_term's eval (self: a kn_penalty_term), a root-finding term (E untouched): r += J_rel^T (-dt
 * f) per active contact, T += dt^2 J_rel^T (-df/dZ) J_rel (not symmetric while sliding: the
 * friction's dependence on the normal load, mu u n^T), S += its PSD part dt^2 k (n n^T + s w w^T)
 * sliding (u the slide direction, w = n x u, s = mu |phi| / |X - W|) or dt^2 k I sticking. On
 * systems of at most KN_PENALTY_DENSE_MAX DoFs the contacts' blocks are summed in a dense scratch
 * and added once (a rigid grasp's contacts all couple the same few DoFs); KN_ERR_NOMEM when that
 * scratch cannot grow. */
#define KN_PENALTY_DENSE_MAX 128
kn_status kn_penalty_term_eval(void* self, const double* v, double* E, double* r, kn_nl_triplets* T, kn_nl_triplets* S,
                               kn_error* err);
/* kn_nl_term's lag (the solver's passes where Newton on the whole residual stalls): on, each
 * contact's relaxed anchor Y_ref = Y(v) and activity are frozen and the term becomes the convex
 * potential sum k/2 min(phi(Z), 0)^2 + k/2 |P_t (Y_ref - Z)|^2 (the second for the contacts active at
 * v), whose gradient at v equals the residual there, so the passes' fixed point is a root; off, the
 * relaxed term again */
void kn_penalty_term_lag(void* self, const double* v, int on);
/* the term's scratch freed */
void kn_penalty_term_free(kn_penalty_term* t);

#ifdef __cplusplus
}
#endif
#endif
