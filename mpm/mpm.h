/* knead/mpm — material point method bodies (elastoplastic solids, equation-of-state fluids) whose
 * grid velocities join the SAP contact problem as one clique (digest §6.3, §7; seed Algorithm 2).
 *
 * Conventions (besides common.h):
 *   The background grid is world-aligned with spacing h; node (i, j, k) sits at h (i, j, k).
 *   Each particle touches the 27 nodes base + {-1,0,1}^3, base = round(x_p / h), with quadratic
 *   B-spline weights w_ip (digest §7.1). Nodes with zero weight from every particle are not active.
 *   Active nodes are sorted by (i, j, k) lexicographically every step (deterministic order); node a
 *   owns the DoFs 3a, 3a+1, 3a+2 of the MPM clique (v_a in world coordinates, N = I).
 *   Particle state: x, v, C (APIC affine velocity, eq. 9/17), F_E (elastic deformation gradient),
 *   F_P (plastic part; total F = F_E F_P), mass m_p, initial volume V_p^0. 3x3 matrices row-major.
 *   Contact Jacobian of particle p (digest §7.4): the MPM block is -w_ip I3 on each node returned
 *   by kn_mpm_particle_weights (the MPM body is side A of a contact pair).
 *
 * One step (digest §7.5), driven by the caller:
 *   kn_mpm_free_motion   P2G (eq. 9) + argmin E_MPM (eqs. 11–16) => grid, v*, A, factor
 *   (SAP on [rigid; grid], Schur complement over non-participating nodes: kn_fem_schur_* on A)
 *   kn_mpm_advance       G2P (eq. 17, APIC) + F update + return mapping (Algorithm 1) / EOS
 */
#ifndef KNEAD_MPM_H
#define KNEAD_MPM_H

#include "../common/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*---- materials (material.c) ----*/

typedef enum {
  KN_MPM_LINEAR_COROTATED = 0, /* Psi = mu |E|^2 + lambda/2 tr(E)^2, E = sym(R0^T F_E) - I, R0 = polar
                                  rotation of F_E at the step start (quadratic in the grid velocities),
                                  with optional von Mises plasticity (yield_stress > 0, digest §7.6) */
  KN_MPM_EOS_FLUID             /* Psi(J) = -kappa (J^(1-gamma)/(1-gamma) - J), pressure
                                  kappa (J^-gamma - 1) (digest §7.7 [BRANCH]); F_E is reset to
                                  J^(1/3) I after each step (no shear memory) */
} kn_mpm_model;

typedef struct {
  kn_mpm_model model;
  double youngs_modulus;  /* E, Pa, > 0 (linear corotated) */
  double poisson_ratio;   /* nu, in (-1, 0.5) (linear corotated) */
  double density;         /* rho, kg/m^3, > 0 (both) */
  double yield_stress;    /* von Mises eta, Pa, >= 0; 0 = purely elastic (linear corotated) */
  double bulk_modulus;    /* kappa, Pa, > 0 (EOS fluid) */
  double gamma;           /* EOS exponent, > 1 (EOS fluid; 7 for water) */
} kn_mpm_material;

/* () => linear corotated, E 1e5, nu 0.4, rho 1000, elastic (yield 0); kappa 100, gamma 7
 * (the seed's dough / [BRANCH] water numbers). */
kn_mpm_material kn_mpm_material_default(void);
/* material => KN_OK, or KN_ERR_INVALID naming `name`, the parameter and its value (only the
 * parameters the model uses are checked, plus density). */
kn_status kn_mpm_material_validate(const kn_mpm_material* mat, const char* name, kn_error* err);

/* (material (model, kappa, gamma), Lame mu, lambda, F_E, R0) => energy density Psi (returned), first Piola
 * stress P = dPsi/dF_E (if non-NULL) and dP/dF (9x9, dPdF[9*(3i+j) + 3a+b] = dP_ij/dF_ab, if
 * non-NULL; PSD-projected for the EOS model, digest §6.3). R0 is used by the linear corotated model. */
double kn_mpm_energy_density(const kn_mpm_material* mat, double mu, double lambda, const double FE[9],
                             const double R0[9], double P[9], double dPdF[81]);

/* Algorithm 1 (eqs. 22–26), one particle: (Lame mu, yield eta, F_E^n (its polar rotation is R0),
 * trial F_E = F^{n+1} (F_P^n)^-1) => projected F~_E (FE_out). Returns 1 if the state yielded
 * (projection active), 0 if it was inside the cylinder |dev sigma| <= eta / (2 mu) (then
 * FE_out = FE_trial exactly) or yield_stress is 0. A singular 6x6 system (not for R near R0) falls
 * back to V~ = S~. */
int kn_mpm_return_mapping(double mu, double yield_stress, const double FE_n[9], const double FE_trial[9],
                          double FE_out[9]);

/*---- B-spline (bspline.c, digest §7.1) ----*/

/* 1-D quadratic B-spline N(x) (returned) and N'(x) (dN, if non-NULL). */
double kn_mpm_bspline(double x, double* dN);
/* (h, x_p) => base node (round(x_p/h)), weights w[27] and gradients dw[81] (grad w_ip with respect
 * to x_p, (1/h)(N'N N, N N'N, N N N') at xi = (x_p - x_i)/h, digest §7.1) of the nodes
 * base + (a-1, b-1, c-1), stencil index s = 9a + 3b + c (a along x), dw[3s .. 3s+2]. */
void kn_mpm_weights(double h, const double xp[3], int base[3], double w[27], double dw[81]);

/*---- shapes and sampling (sample.c) ----*/

typedef enum { KN_MPM_BOX = 0, KN_MPM_SPHERE, KN_MPM_CYLINDER, KN_MPM_MESH } kn_mpm_shape_type;

/* A solid in its body frame, centred at the origin (the mesh: as given). */
typedef struct {
  kn_mpm_shape_type type;
  double size[3];           /* BOX: full side lengths, m */
  double radius;            /* SPHERE, CYLINDER (axis z) */
  double length;            /* CYLINDER: along z */
  /* MESH: a closed, consistently oriented triangle surface, either given ... */
  const double* vertices;   /* 3 * nvert */
  int nvert;
  const int* triangles;     /* 3 * ntri */
  int ntri;
  const char* mesh_path;    /* ... or read with assimp (OBJ, STL, ...) when vertices is NULL */
  double scale;             /* MESH: uniform scale of the vertices (0 is taken as 1) */
  double jitter;            /* sampling: each lattice point moves by up to +-jitter/2 of the spacing per axis,
                               a deterministic hash of its index; in [0, 1), 0 = the regular lattice */
} kn_mpm_shape;

/* (shape, h, ppc = n^3 particles per cell) => the sample points in the body frame: the regular
 * lattice of spacing s = h/n at lo + (k + 1/2) s (k = 0, 1, ...; lo the corner of the shape's
 * bounding box, so the sample is symmetric for the symmetric primitives) kept where the
 * point is inside the shape (mesh: generalized winding number > 1/2). *x is malloc'ed (3 * *np),
 * caller frees. KN_ERR_INVALID for a bad size / h / ppc (not a cube 1, 8, 27, ...), an empty sample
 * (the error says so: the shape is smaller than the lattice) or a bad mesh index; KN_ERR_IO for an
 * unreadable mesh file. Deterministic. A box whose sides are multiples of s gets exactly
 * (side/s) points per axis, so its total mass rho s^3 np = rho * volume exactly. */
kn_status kn_mpm_sample_shape(const kn_mpm_shape* shape, double h, int ppc, const char* name, double** x,
                              int* np, kn_error* err);

/*---- bodies (body.c) ----*/

typedef struct kn_mpm_solver kn_mpm_solver; /* free-motion scratch: CHOLMOD matrix + factor */

/* The grid of the current step, rebuilt by kn_mpm_free_motion / kn_mpm_p2g from x_p^n. */
typedef struct {
  int n;           /* active nodes */
  int* index;      /* 3 * n integer node coordinates (i, j, k), sorted lexicographically */
  double* x;       /* 3 * n node positions h * index */
  double* mass;    /* n, m_i = sum_p w_ip m_p (> 0) */
  double* v;       /* 3 * n, v_i^n from APIC P2G (eq. 9) */
  double* v_star;  /* 3 * n free-motion velocities (after kn_mpm_free_motion) */
  int* p_node;     /* 27 * np: active-node index of each stencil entry, -1 where w_ip = 0 */
  double* p_w;     /* 27 * np weights at x_p^n */
  double* p_dw;    /* 81 * np weight gradients at x_p^n */
  int capacity;    /* allocated nodes */
} kn_mpm_grid;

/* A part of a body: the particles [first, first + count) share a name, a material and an allowed
 * region. A body made from one shape has one part; kn_mpm_body_merge puts several bodies on one grid,
 * one part each, so that they interact through the grid as in the seed's single MPM grid. */
typedef struct {
  char* name;
  kn_mpm_material material;
  double mu, lambda;        /* Lame parameters (linear corotated) */
  int first, count;         /* its particles */
  double region_lo[3], region_hi[3]; /* allowed region (world); default +-1e3 m */
} kn_mpm_part;

typedef struct kn_mpm_body {
  char* name;
  double h;                 /* grid spacing, m */
  int ppc;                  /* particles per cell at creation */
  int nparts;
  kn_mpm_part* parts;       /* nparts */
  int* part_of;             /* np: part of each particle (NULL with one part) */
  /* particles (state: x, v, C, FE, FP; model: mass, volume0) */
  int np;
  double* x;        /* 3 * np */
  double* v;        /* 3 * np */
  double* C;        /* 9 * np APIC affine matrix */
  double* FE;       /* 9 * np elastic deformation gradient */
  double* FP;       /* 9 * np plastic deformation gradient (I for elastic bodies and fluids) */
  double* mass;     /* np, rho * V_p^0 */
  double* volume0;  /* np, V_p^0 = h^3 / ppc */
  kn_mpm_grid grid;
  kn_mpm_solver* solver;
  const struct kn_mpm_body* viewed; /* a view (kn_mpm_body_view): the body owning the arrays, else NULL */
} kn_mpm_body;

/* (body, particle p) => its part */
static inline const kn_mpm_part* kn_mpm_part_of(const kn_mpm_body* b, int p) {
  return b->nparts == 1 ? b->parts : b->parts + b->part_of[p];
}

/* (material, shape, pose X_WB, h, ppc, name) => a body at rest (v = 0, C = 0, F_E = F_P = I) whose
 * particles are the shape's samples placed by X_WB, each with mass rho h^3/ppc. Errors
 * (KN_ERR_INVALID) name the body and the bad parameter; an empty shape is an error. Free with
 * kn_mpm_body_free. */
kn_status kn_mpm_body_create(const kn_mpm_material* mat, const kn_mpm_shape* shape, const kn_pose* X_WB, double h,
                             int ppc, const char* name, kn_mpm_body** out, kn_error* err);
/* (material, particle positions xyz (np), h, ppc, name) => a body from explicit points (each of
 * mass rho h^3 / ppc), as kn_mpm_body_create. */
kn_status kn_mpm_body_create_points(const kn_mpm_material* mat, const double* x, int np, double h, int ppc,
                                    const char* name, kn_mpm_body** out, kn_error* err);
/* (bodies[0..n) with the same h) => one body on one grid holding all their particles in order, one
 * part per input body (its name, material, region); the inputs are unchanged. ppc is the first
 * body's (only used as metadata). KN_ERR_INVALID when n < 1 or the spacings differ (naming both
 * bodies). */
kn_status kn_mpm_body_merge(const kn_mpm_body* const* bodies, int n, const char* name, kn_mpm_body** out,
                            kn_error* err);
/* (merged body, part k) => a view: a body whose particle arrays alias those of part k (x, v, ... from
 * particle first) and whose one part is part k itself (so set_region reaches the owner). For the
 * per-object state copies, hashes, momenta and outputs; the owner alone runs P2G, free motion and
 * advance (they fail on a view). Free with kn_mpm_body_free (the arrays stay the owner's); the owner
 * must outlive it. KN_ERR_INVALID for a bad k. */
kn_status kn_mpm_body_view(kn_mpm_body* owner, int k, kn_mpm_body** out, kn_error* err);
void kn_mpm_body_free(kn_mpm_body* b);
/* Set every particle velocity to v (and C = 0). */
void kn_mpm_body_set_velocity(kn_mpm_body* b, const double v[3]);
/* Allowed region [lo, hi] (world) of every part: kn_mpm_advance fails when a particle leaves its part's.
 * KN_ERR_INVALID if lo >= hi on some axis or a value is not finite. */
kn_status kn_mpm_body_set_region(kn_mpm_body* b, const double lo[3], const double hi[3], kn_error* err);
/* body => total mass sum m_p (returned), linear momentum sum m_p v_p (P, if non-NULL) and angular
 * momentum about the origin (L, if non-NULL): sum m_p (x_p x v_p + h^2/4 eps : C_p^T), the APIC
 * affine spin included, which is what P2G/G2P conserve exactly. */
double kn_mpm_body_mass(const kn_mpm_body* b, double P[3], double L[3]);

/*---- transfers and free motion (grid.c, free_motion.c) ----*/

/* x_p^n, v_p, C_p => grid (active nodes sorted, weights, m_i, v_i^n by APIC eq. 9). Does not
 * solve. Called by kn_mpm_free_motion; public for tests and diagnostics. */
kn_status kn_mpm_p2g(kn_mpm_body* b, kn_error* err);

typedef struct {
  int max_iterations;    /* Newton iterations (default 100; the linear corotated model needs 1) */
  double rel_tolerance;  /* |grad E| <= rel * max(|grad E(v^n)|, dt |M g|, |M v^n|) (default 1e-6, the
                            seed's tolerance for eq. 15; the linear corotated model's one solve
                            lands at roundoff anyway) */
} kn_mpm_newton_options;
kn_mpm_newton_options kn_mpm_newton_options_default(void);

/* (particles at t_n, dt, gravity) => P2G, then v* = argmin E_MPM(v) (eq. 16)
 *   E(v) = 1/2 |v - v^n|_M^2 - dt v^T M g + sum_p V_p^0 Psi(F_E(v)),
 *   F_E(v) = (I + dt sum_i v_i grad w_ip^T) F_E^n   (eq. 14, F_P frozen),
 * by Newton (one solve for the linear corotated model; otherwise backtracking line search, and
 * chord steps on an earlier factor while they shrink the gradient by half) and
 * A_MPM = d^2E/dv^2 at v* (digest §6.3). Results: b->grid (nodes, v_star), the matrix and the
 * factor below. opt may be NULL (defaults). Particle state is not changed. Errors name the body
 * (bad dt, non-finite values, not PD, no convergence). */
kn_status kn_mpm_free_motion(kn_mpm_body* b, double dt, const double gravity[3], const kn_mpm_newton_options* opt,
                             kn_error* err);
/* body after kn_mpm_free_motion => its Newton (or chord) steps and numeric factorizations of A
 * (either may be NULL); 0 and 0 before */
void kn_mpm_free_motion_counts(const kn_mpm_body* b, int* iterations, int* factorizations);
/* body after kn_mpm_free_motion => A (3n x 3n, node order of b->grid, lower triangle, stype -1,
 * CHOLMOD int version); owned by the body, valid until the next free motion. NULL before. */
const struct cholmod_sparse_struct* kn_mpm_dynamics_matrix(const kn_mpm_body* b);
struct cholmod_factor_struct;
/* body after kn_mpm_free_motion => *L, the CHOLMOD factor of that A (for kn_fem_schur_complement_factored
 * and solves). Owned by the body, valid until the next free motion. KN_ERR_INVALID before. */
kn_status kn_mpm_dynamics_factor(kn_mpm_body* b, const struct cholmod_factor_struct** L, kn_error* err);
/* (body after kn_mpm_free_motion, grid velocities v (3n, node order of b->grid)) => the incremental
 * potential the free motion minimizes, at any trial v (contact solvers minimize it plus their own
 * terms), for that free motion's grid (P2G at x_p^n), dt, gravity and R0:
 *   E(v) = 1/2 |v - v^n|_M^2 - dt v^T M g + sum_p V_p^0 Psi(F_E(v))   (eq. 16) in *E (if non-NULL),
 *   its gradient in grad (3n, if non-NULL) and, if hessian is non-NULL, *hessian
 *   = M + dt^2 sum_p V_p^0 G_p^T dP/dF(F_E(v)) G_p, dP/dF PSD-projected for the EOS fluid as in the
 * free motion (kn_mpm_energy_density; the same assembly code). The Hessian has
 * kn_mpm_dynamics_matrix's pattern (lower triangle, stype -1, CHOLMOD int); it is owned by the body,
 * overwritten by the next call that asks for it, freed when a free motion rebuilds the pattern (the
 * active nodes changed); A and its factor are not touched. At v = b->grid.v_star it equals A entry for entry. Valid from a
 * successful kn_mpm_free_motion until kn_mpm_advance (which changes F_E; the grid is the free
 * motion's until the next P2G). KN_ERR_INVALID before a free motion, after a kn_mpm_p2g that
 * changed the active nodes, or on a view; KN_ERR_NOMEM. */
kn_status kn_mpm_potential(kn_mpm_body* b, const double* v, double* E, double* grad,
                           const struct cholmod_sparse_struct** hessian, kn_error* err);

/* (body after P2G, particle p) => the active nodes of its stencil with w_ip > 0 (nodes, up to 27)
 * and their weights w (at x_p^n); returns how many. The contact Jacobian's MPM block of a point at
 * particle p is -w_ip I3 on these nodes (digest §7.4). */
int kn_mpm_particle_weights(const kn_mpm_body* b, int p, int nodes[27], double w[27]);

/* (grid velocities v^{n+1} (3n, node order of b->grid), dt) => G2P with APIC (eq. 17, weights at
 * x_p^n): v_p, x_p += dt v_p, C_p = 4/h^2 sum w v_i (x_i - x_p)^T, F_E <- (I + dt grad v) F_E, then
 * the return mapping (Algorithm 1, lagged) or the EOS reset. Transactional: on failure (a particle
 * leaves the allowed region: KN_ERR_INVALID naming the body, the particle and its position;
 * non-finite values: KN_ERR_NUMERIC) the particle state is unchanged. */
kn_status kn_mpm_advance(kn_mpm_body* b, const double* v_grid, double dt, kn_error* err);

/*---- state (state.c) ----*/

/* A copy of the particle state (x, v, C, FE, FP) for transactional steps. Zero-initialize. */
typedef struct {
  int np;
  double *x, *v, *C, *FE, *FP;
} kn_mpm_state;
/* body => s (allocates on first use or when np changed). KN_ERR_NOMEM. */
kn_status kn_mpm_state_save(const kn_mpm_body* b, kn_mpm_state* s, kn_error* err);
/* s => body (np must match; KN_ERR_INVALID otherwise). */
kn_status kn_mpm_state_restore(kn_mpm_body* b, const kn_mpm_state* s, kn_error* err);
void kn_mpm_state_free(kn_mpm_state* s);
/* (h, body) => h chained over np, x, v, C, FE, FP (kn_hash_doubles). */
uint64_t kn_mpm_state_hash(uint64_t h, const kn_mpm_body* b);

#ifdef __cplusplus
}
#endif
#endif
