/* knead/ipc: Incremental Potential Contact (../shared/papers/incremental-potential-contact.md): the
 * barrier, its stiffness and the smoothed friction functions the IPC backend is built from, and the
 * backend's contact term in the shared nonlinear step (term.c: the barrier-augmented potential over
 * the step's material points, nonlinear/nonlinear.h). The pair distances and CCD of meshes are
 * contact/'s (pair_distance.c, pair_ccd.c). */
#ifndef KNEAD_IPC_H
#define KNEAD_IPC_H

#include "../common/common.h"
#include "../contact/contact.h"
#include "../nonlinear/nonlinear.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The C2-clamped log barrier (digest §3.2) b(d) = -(d - dh)^2 ln(d / dh) for 0 < d < dh, 0 from dh
 * on (returned), with b' (*db) and b'' (*d2b) when non-NULL; +inf and its limits for d <= 0. The
 * backend evaluates it on squared distances, b~(s) = b(s, sh) with s = d^2, sh = dh^2 (§3.3). */
double kn_ipc_barrier(double d, double dh, double* db, double* d2b);

/* (characteristic length l (the bounding-box diagonal), dh, average nodal mass m) => kappa_min =
 * 1e11 m / (4 s0 b~''(s0)) with s0 = (1e-8 l)^2, and kappa_max = 100 kappa_min (§3.5a) */
void kn_ipc_kappa_bounds(double l, double dh, double m, double* kappa_min, double* kappa_max);
/* (barrier gradient g_b with kappa = 1 and the potential's gradient g_E, n entries, Dirichlet rows
 * zeroed) => kappa = clamp(-g_b.g_E / |g_b|^2, kappa_min, kappa_max); kappa_min when g_b = 0 or the
 * balance is not positive (§3.5b) */
double kn_ipc_kappa_initial(const double* g_b, const double* g_E, int n, double kappa_min, double kappa_max);

/* The C1 smoothed friction magnitude (§5.2) with eps = h eps_v: f1(y) = 1 - (1 - y / eps)^2 below
 * eps, 1 above (returned); f1' (*df1) and f1(y) / y (*f1_over_y, finite at 0: 2 / eps) when
 * non-NULL. Its potential f0 (f0' = f1, f0(eps) = eps). */
double kn_ipc_friction_f1(double y, double eps, double* df1, double* f1_over_y);
double kn_ipc_friction_f0(double y, double eps);

/* The lagged friction of one pair (§5.4-5.5). Its tangent basis T (12 x 2, row-major over the
 * stencil's coordinates): T = Gamma^T P, Gamma mapping stencil displacements to the relative
 * displacement of the two closest points and P an orthonormal basis of the tangent plane, both at
 * the lagged state x (12) of the pair of the given distance case (point-triangle stencils (p, t0,
 * t1, t2) with a point-triangle case, edge-edge stencils (a0, a1, b0, b1) with an edge-edge one;
 * edge_edge says which). */
void kn_ipc_tangent_basis(const double x[12], int edge_edge, int kind, const int v[4], double T[24]);
/* (u = T^T (x - x^t), 2; chi = mu h^2 lambda; eps = h eps_v) => the friction potential chi f0(|u|)
 * (returned), its gradient in u (g, 2) and its Hessian in u (H, 2 x 2, PSD-projected) */
double kn_ipc_friction_local(const double u[2], double chi, double eps, double g[2], double H[4]);

/*---- the contact term (term.c) ----*/

/* One contact of the step: material points a and b (kn_nl_points; -1: fixed in the world), the unit
 * normal n from A into B with a tangent basis (t1, t2) (the detection's frame R_WC, kept for the
 * step: the lagged basis), the gap phi0 at the step start, the Coulomb coefficient mu and the
 * lagged normal force lambda [N] (at the step start, or at the last lagging pass's answer). Over
 * the step the gap is d(v) = phi0 + shift + dt n . w, w = J_b v - J_a v: the point-plane distance
 * along the detected normal, exact for the points' affine maps x(v) = x0 + dt J v. shift is 0 for a
 * pair that starts separated; a pair that starts touching or overlapping (phi0 <= 0: bodies placed
 * in contact at t = 0, MPM particles inside a collider) has its barrier's zero moved to phi =
 * -shift (d = phi + shift): a touching pair's shift is settled in its first step so that the body
 * stays where it was placed, and kept for the pair's contact (sim/ipc_touch.h); a particle inside
 * starts each step at d = dhat / 2 and is pushed out without going deeper. */
typedef struct {
  int a, b;
  double n[3], t1[3], t2[3];
  double phi0, shift, mu, lambda;
} kn_ipc_contact;

/* The barrier-augmented contact potential of one step in velocity form (the digest's incremental
 * potential divided by h^2, so that its gradient is an impulse like the cliques' potentials):
 *
 *   E(v) = sum_i kappa / h^2 b~(d_i(v)^2)  +  mu_i lambda_i f0(|u_i|),   u_i = h (t1 . w, t2 . w)
 *
 * b~ the clamped log barrier on squared distances (b~(s) = b(s, dhat^2), §3.3), kappa in the
 * digest's units (its lambda = -(kappa / h^2) 2 d b~'(d^2)), friction the lagged potential of §5.3
 * with eps = h eps_v. Every d_i is affine in v, so each barrier is convex in v and its Hessian
 * (kappa / h^2) (4 s b~'' + 2 b~') h^2 n n^T needs no projection beyond a clamp at 0; the friction
 * block is the 2 x 2 PSD-projected one of kn_ipc_friction_local lifted by (t1, t2). */
/*---- mesh-mesh pairs (mesh.c; §4.3, §5.5, §6, §7.4) ----*/

/* A triangle surface whose vertices are material points of the step: an FEM body's boundary, a
 * rigid triangle-mesh collider. Arrays borrowed; pt is set per step. */
typedef struct {
  int nvert;
  int* pt;                  /* per vertex: its material point (kn_nl_points) this step */
  const double* rest;       /* 3 * nvert rest positions (the edge-edge mollifier's threshold) */
  int ntri, nedge;
  const int *tri, *edge;    /* 3 * ntri, 2 * nedge vertex indices */
  int nvert_used;
  const int* vert;          /* the vertices in vertex-triangle pairs (NULL: all) */
} kn_ipc_surface;
/* one pair's lagged friction: its stencil's points, lambda [N] and basis T (12 x 2) at the lagged state */
typedef struct {
  int pt[4];
  double mu, lambda, T[24];
  int q, ee, side[4];       /* its surface pair, kind and sides (kn_ipc_mesh_contact) */
  double eps_x;
} kn_ipc_mesh_friction;
/* The surfaces and which pairs of them can touch (pairs[2q], pairs[2q + 1], Coulomb mu[q]); the
 * rest is scratch (zero-initialize; kn_ipc_mesh_free). */
typedef struct {
  kn_ipc_surface* surf;
  int nsurf, npair;
  const int* pairs;
  const double* mu;
  kn_ipc_mesh_friction* fr; /* friction pairs at the lagged state (kn_ipc_mesh_lag) */
  int nfr, frcap;
  unsigned char* frmark;    /* kn_ipc_mesh_contacts: friction pairs matched */
  int frmarkcap;
  double *x, *x1;           /* vertex positions (two sets: the swept CCD's start and end) */
  size_t xcap;
  int *off, offcap;
  kn_swept_scratch* sweep;
  struct kn_ipc_mesh_cache* cache; /* the last CCD sweep's candidates (mesh_cache.c) */
  int exact_hessian;        /* 1 leaves each pair's Hessian unprojected (kn_ipc_term_project) */
} kn_ipc_mesh;

typedef struct {
  double dt, dhat, kappa, eps_v;
  double ccd;                 /* additive-CCD rescaling c: a step closes at most c of a gap [0.9] */
  double d_lo;                /* > 0: the feasibility solve, for a start where some d_i <= 0 (the
                                 warm start v_n of a body arriving fast): each barrier below d_lo is
                                 its quadratic Taylor expansion there, finite for any d, and the CCD
                                 leaves the pairs with d_i <= 0 free; 0: the barrier itself */
  double kappa_max;           /* kn_ipc_term_stiffen raises kappa to it (0: kappa stays) */
  double d_crush;             /* ... where a pair is closer than this */
  const kn_nl_points* points;
  kn_ipc_contact* c;
  int n;
  kn_ipc_mesh* mesh;          /* NULL: no mesh-mesh pairs */
} kn_ipc_term;

/* kn_nl_term's eval (self: a kn_ipc_term): E += the energy (+inf when some d_i <= 0 and d_lo = 0),
 * r += its gradient, T += its Hessian (S unused: a potential) */
kn_status kn_ipc_term_eval(void* self, const double* v, double* E, double* r, kn_nl_triplets* T, kn_nl_triplets* S,
                           kn_error* err);
/* kn_nl_term's max_step, the CCD filter of the line search (§4.2 step 3, §7.4): the largest alpha in
 * (0, 1] with d_i(v + alpha p) >= (1 - c) d_i(v) for every contact; exact, since d_i is linear
 * along p (additive CCD's rule, reached in one sub-step). Then friction's kink: where the step
 * would carry a sliding contact's slip (|u| >= eps) through its static band (the ray passing within
 * eps of u = 0), alpha stops where the ray is nearest 0 (a Newton step from sliding to sticking
 * otherwise overshoots by |u| / eps and the line search halves its way back: on the regression
 * grasps 84 Newton iterations in a step became 7). */
double kn_ipc_term_max_step(void* self, const double* v, const double* p);
/* kn_nl_term's project: on = 1 PSD-projects each mesh pair's 12 x 12 barrier Hessian (§4.2 step 1),
 * 0 leaves it exact (the candidates' barriers are convex in v: nothing to project); 1 when that
 * turned a projection on */
int kn_ipc_term_project(void* self, int on);
/* kn_nl_term's stiffen, at an iterate whose step the CCD capped: kappa = kappa_max when some pair is
 * closer than d_crush (1 then). A barrier too soft for its load (kappa falls as 1 / h^2 in the force)
 * lets the loaded pairs down to ~1e-12 m, where the CCD caps every step at a fraction of that gap
 * and Newton crawls (the twisted rods at h 1 s failed at 1000 iterations in step 4) */
int kn_ipc_term_stiffen(void* self, const double* v);
/* contact i at v => its gap d_i(v) (shift included: the barrier's distance) */
double kn_ipc_term_gap(const kn_ipc_term* t, int i, const double* v);
/* contact i at v => the force on its B side [N] (world): lambda(d) n minus the lagged friction */
void kn_ipc_term_force(const kn_ipc_term* t, int i, const double* v, double f[3]);
/* the normal force of a gap d: lambda = -(kappa / h^2) 2 d b~'(d^2) [N] (0 from dhat on) */
double kn_ipc_normal_force(double d, double dhat, double kappa, double dt);
/* lagging: every lambda_i = the normal force at d_i(v) */
void kn_ipc_term_lag(kn_ipc_term* t, const double* v);
/* (v) => g_b (nv, zeroed first), the barrier's gradient with kappa = 1 (§3.5b) */
void kn_ipc_term_barrier_gradient(const kn_ipc_term* t, const double* v, double* g_b, int nv);

/* The mesh pairs' part of the term (mesh.c). At v: the pairs of t->mesh's surface pairs with
 * squared distance s < dhat^2 (every case of §6.1, found at each evaluation by the broad phase at
 * x(v) with margin dhat) each add kappa / h^2 e b~(s) (e the edge-edge mollifier at the rest
 * lengths, 1 for point-triangle), with its gradient and PSD-projected 12 x 12 Hessian through the
 * stencil's point maps; plus the lagged friction pairs'. E = +inf when some s <= 0. KN_ERR_NOMEM */
kn_status kn_ipc_mesh_eval(const kn_ipc_term* t, const double* v, double* E, double* r, kn_nl_triplets* T,
                           kn_error* err);
/* (v, direction p, alpha: the other filters' bound) => the largest step in (0, alpha] that additive
 * CCD (c = t->ccd) allows for every pair the swept broad phase finds between x(v) and
 * x(v + alpha p); 0 when out of memory */
double kn_ipc_mesh_max_step(const kn_ipc_term* t, const double* v, const double* p, double alpha);
/* (v, the lagged state) => the friction pairs: every pair within dhat with mu > 0, lambda =
 * -(kappa / h^2) 2 d b~'(d^2) e and T of its case (§5.5). KN_ERR_NOMEM */
kn_status kn_ipc_mesh_lag(const kn_ipc_term* t, const double* v, kn_error* err);
/* (v, margin) => the smallest distance of the pairs whose boxes are within margin (inf: none; NaN:
 * out of memory), and in *which (when non-NULL) the surface pair it is in (-1: none) */
double kn_ipc_mesh_min_distance(const kn_ipc_term* t, const double* v, double margin, int* which);
/* The end-of-step audit: (v, the surfaces' vertices where the step really put them, x_end in
 * surface order, 3 * nvert each) => 1 when no pair can have crossed on the straight path from
 * x(v) (intersection-free: the solve's CCD kept it so) to x_end: additive CCD with c = 0.99 over the
 * swept pairs finds none that closes 99% of its gap; 0 when one does, its surface pair in *which
 * and its distances at x(v) and at x_end; -1 out of memory */
int kn_ipc_mesh_audit(const kn_ipc_term* t, const double* v, const double* x_end, int* which, double* d_lin,
                      double* d_end);
/* g_b += the mesh barriers' gradient with kappa = 1 (§3.5b) */
void kn_ipc_mesh_barrier_gradient(const kn_ipc_term* t, const double* v, double* g_b);
/* one mesh pair's contact at v for the outputs: its surface pair q (A pairs[2q], B pairs[2q + 1]),
 * kind, per stencil vertex its side (0 A, 1 B), the stencil x at v, the forces F on its vertices [N]
 * (its barrier's and its lagged friction's), its distance d and d^2's gradient gs in x (12) */
typedef struct {
  int q, ee, side[4];
  double x[12], F[12], d, gs[12];
} kn_ipc_mesh_contact;
typedef kn_status (*kn_ipc_mesh_contact_fn)(void* ctx, const kn_ipc_mesh_contact* c);
/* (v) => fn on every pair with a barrier at v (within dhat), its friction pair's force added, then on
 * every lagged friction pair with no barrier at v; fn's error stops it. KN_ERR_NOMEM */
kn_status kn_ipc_mesh_contacts(const kn_ipc_term* t, const double* v, kn_ipc_mesh_contact_fn fn, void* ctx,
                               kn_error* err);
/* the scratch (not surf, pairs, mu) freed */
void kn_ipc_mesh_free(kn_ipc_mesh* m);

#ifdef __cplusplus
}
#endif
#endif
