/* knead/deformable — FEM tetrahedral bodies: meshes (generators, import, tetrahedralization),
 * materials, lumped mass, Rayleigh damping, and the implicit free motion whose result joins the
 * SAP problem (digest §6). Positions in metres; a mesh's rest positions are in its body frame
 * (a scene places the body with a pose). */
#ifndef KNEAD_DEFORMABLE_H
#define KNEAD_DEFORMABLE_H

#include "../common/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*---- tetrahedral meshes ----*/

/* A tetrahedral mesh. Every tet (a, b, c, d) is positively oriented: det[b-a, c-a, d-a] > 0.
 * The surface is the boundary triangles (faces of exactly one tet), wound outward. */
typedef struct {
  int nvert, ntet, nsurf;
  double* X;     /* rest positions, 3 * nvert */
  int* tet;      /* 4 * ntet vertex indices */
  int* surf;     /* 3 * nsurf vertex indices, counter-clockwise seen from outside */
} kn_tet_mesh;

void kn_tet_mesh_free(kn_tet_mesh* m);
/* Check indices, orientation and volume: an inverted tet (negative volume) or a degenerate one
 * (volume below 1e-12 of the mean edge length cubed) is KN_ERR_INVALID naming `name` and the
 * tet index. Then (re)build the surface. */
kn_status kn_tet_mesh_finalize(kn_tet_mesh* m, const char* name, kn_error* err);
double kn_tet_mesh_volume(const kn_tet_mesh* m);
/* Surface area of the boundary triangles (m->surf). */
double kn_tet_mesh_surface_area(const kn_tet_mesh* m);

/* Generators: body frame centred at the origin, target edge length h (> 0). The box is a grid
 * of cubes, each split into 6 tets along its main diagonal (Kuhn/Freudenthal, conforming); the
 * sphere, cylinder (axis z, length along z) and torus (axis z, ring in the xy-plane, major
 * radius R > minor radius r) triangulate their surface analytically with edge ~h (every boundary
 * vertex on the surface) and fill it with tetgen (kn_tet_mesh_from_surface; KN_ERR_UNSUPPORTED
 * without the Debian package tetgen). Deterministic; the result is finalized (surface built).
 * KN_ERR_INVALID for non-positive sizes. */
kn_status kn_tet_mesh_box(double lx, double ly, double lz, double h, kn_tet_mesh* m, kn_error* err);
kn_status kn_tet_mesh_sphere(double radius, double h, kn_tet_mesh* m, kn_error* err);
kn_status kn_tet_mesh_cylinder(double radius, double length, double h, kn_tet_mesh* m, kn_error* err);
kn_status kn_tet_mesh_torus(double major_radius, double minor_radius, double h, kn_tet_mesh* m,
                            kn_error* err);

/* Import a volume mesh (tetrahedra only; other element types are ignored, unused nodes
 * dropped): Gmsh .msh 2.2 / 4.1 ASCII (element type 4) or legacy ASCII VTK unstructured grid
 * (CELL_TYPES 10). Errors name the file and line (KN_ERR_IO, KN_ERR_PARSE, KN_ERR_INVALID for
 * a bad node index or an inverted / degenerate tet). */
kn_status kn_tet_mesh_read_msh(const char* path, kn_tet_mesh* m, kn_error* err);
kn_status kn_tet_mesh_read_vtk(const char* path, kn_tet_mesh* m, kn_error* err);

/* Tetrahedralization of a closed triangle surface by the `tetgen` program (Debian package
 * tetgen), run as `tetgen -pzQ -q<radius_edge> [-a<max_volume>]`. */
typedef struct {
  double radius_edge;  /* quality bound, radius/shortest-edge ratio (1.4; 0 = no quality step) */
  double max_volume;   /* largest tet volume in m^3 (0 = unbounded) */
  const char* tetgen;  /* program path (NULL: the one CMake found, else `tetgen` on PATH) */
} kn_tetrahedralize_options;
kn_tetrahedralize_options kn_tetrahedralize_options_default(void);
/* (triangle soup V[3*nv], T[3*nt]) => tet mesh. Identical positions are welded first; a surface
 * whose edges are not each shared by exactly 2 triangles is KN_ERR_INVALID naming `name` and
 * the first open edge, before tetgen runs. A missing tetgen is KN_ERR_UNSUPPORTED. */
kn_status kn_tet_mesh_from_surface(const double* V, int nv, const int* T, int nt, const char* name,
                                   const kn_tetrahedralize_options* opt, kn_tet_mesh* m,
                                   kn_error* err);
/* (surface file read with assimp: OBJ, STL, ...) => tet mesh, as kn_tet_mesh_from_surface. */
kn_status kn_tet_mesh_tetrahedralize(const char* path, const kn_tetrahedralize_options* opt,
                                     kn_tet_mesh* m, kn_error* err);

/*---- materials (material.c, material_models.c, material_element.c) ----*/

/* Constitutive models. Index convention for 3x3 matrices: row-major, F[3*i + j]. A 9x9
 * dP/dF is row-major with dPdF[9*(3*i + j) + (3*a + b)] = dP_ij / dF_ab. */
typedef enum {
  KN_FEM_LINEAR = 0,           /* small strain: mu |eps|^2 + lambda/2 tr(eps)^2, eps = sym(F) - I */
  KN_FEM_LINEAR_COROTATED,     /* Drake's LinearCorotatedModel (digest 6.1): eps = sym(R0^T F) - I,
                                  R0 fixed for the step (polar rotation of the previous F): quadratic */
  KN_FEM_COROTATED,            /* Stomakhin et al. 2012: mu |F - R|^2 + lambda/2 (J - 1)^2, R = polar(F) */
  KN_FEM_NEOHOOKEAN            /* stable neo-Hookean (Smith et al. 2018, without the log(I_C + 1) term):
                                  mu/2 (I_C - 3) - mu (J - 1) + (lambda + mu)/2 (J - 1)^2 */
} kn_fem_model;

typedef struct {
  kn_fem_model model;
  double youngs_modulus;   /* E, Pa, > 0 */
  double poisson_ratio;    /* nu, in (-1, 0.5) */
  double density;          /* rho, kg/m^3, > 0 */
  double mass_damping;     /* Rayleigh alpha, 1/s, >= 0: D = alpha M + beta K */
  double stiffness_damping;/* Rayleigh beta, s, >= 0 */
} kn_fem_material;

/* () => Drake's DeformableBodyConfig defaults: E 1e8, nu 0.49, rho 1500, linear corotated, no damping. */
kn_fem_material kn_fem_material_default(void);
/* Bounds on material parameters (FEM and MPM) by what double precision and the Newton solve of a
 * step resolve. The step solves (M/dt^2 + K) dx = f: once K outweighs M/dt^2 by more than ~1e15
 * (double's 16 digits), gravity and inertia are lost in round-off. Measured on a 0.1 m cube at
 * h 0.05, dt 0.01, rho 1500: E 1e15 falls as in free fall, 1e18 drifts 1 mm sideways in 0.1 s,
 * 1e21 and above fail the first step, and 1e300 froze the cube in the air. Moduli (Young's, bulk,
 * yield stress) are <= 1e15 Pa (5000 times steel, 800 times diamond); densities are within
 * [1e-3, 1e6] kg/m^3 (a thousandth of air's to 44 times osmium's). */
#define KN_MATERIAL_MAX_MODULUS 1e15
#define KN_MATERIAL_MIN_DENSITY 1e-3
#define KN_MATERIAL_MAX_DENSITY 1e6
/* material => KN_OK, or KN_ERR_INVALID naming `name`, the parameter and its value (within the
 * bounds above: "... is beyond what double precision resolves; expected <= 1e+15 Pa ..."). */
kn_status kn_fem_material_validate(const kn_fem_material* mat, const char* name, kn_error* err);
/* (E, nu) => Lame (mu, lambda): mu = E / (2(1+nu)), lambda = E nu / ((1+nu)(1-2nu)). */
void kn_fem_lame(double youngs_modulus, double poisson_ratio, double* mu, double* lambda);
/* (F, R0 for the linear corotated model, ignored otherwise) => energy density Psi (returned),
 * first Piola stress P (if non-NULL) and dP/dF (if non-NULL). With project_psd != 0 the 9x9
 * dP/dF of the corotated and neo-Hookean models is projected to PSD (eigenvalues clamped at 0),
 * which makes every element stiffness PSD; the linear models are convex and left as they are. */
double kn_fem_energy_density(kn_fem_model model, double mu, double lambda, const double F[9], const double R0[9],
                             double P[9], double dPdF[81], int project_psd);
/* F => the rotation R of the polar decomposition F = R S (det R = +1, S symmetric). */
void kn_fem_polar_rotation(const double F[9], double R[9]);
/* symmetric n x n row-major A (n <= 12) => A with negative eigenvalues set to 0 (in place). */
void kn_fem_project_psd(double* A, int n);

/* Rest tet X (4 vertices, 12 doubles) => Dm^-1 (Dm = [X1-X0, X2-X0, X3-X0]) and rest volume
 * det(Dm)/6. KN_ERR_INVALID if the volume is not positive. */
kn_status kn_fem_element_rest(const double X[12], double Dm_inv[9], double* volume, kn_error* err);
/* (x, Dm^-1) => F = Ds Dm^-1, Ds = [x1-x0, x2-x0, x3-x0]. */
void kn_fem_deformation_gradient(const double x[12], const double Dm_inv[9], double F[9]);
/* Element at positions x => elastic energy V Psi (returned), force f = -dE/dx (12, if non-NULL)
 * and stiffness K = d^2E/dx^2 (12x12 row-major, if non-NULL; PSD-projected as above). */
double kn_fem_element_eval(kn_fem_model model, double mu, double lambda, const double x[12], const double Dm_inv[9],
                           double volume, const double R0[9], double f[12], double K[144], int project_psd);

/*---- deformable bodies (body.c, mass.c) ----*/

struct cholmod_sparse_struct; /* CHOLMOD's sparse matrix (cholmod.h); opaque here */
typedef struct kn_fem_solver kn_fem_solver; /* free-motion scratch: pattern, CHOLMOD factor */

/* Model (mesh, material, per-element rest data, lumped mass, constraints lists) and state
 * (x, v, R0). Positions are in the body frame of the mesh until kn_fem_body_place moves them. */
typedef struct {
  char* name;
  kn_tet_mesh mesh;        /* owned deep copy of the caller's mesh */
  kn_fem_material material;
  double mu, lambda;       /* Lame parameters of material */
  double gravity[3];       /* m/s^2, default (0, 0, -9.81) */
  double theta;            /* time integration [1: backward Euler]; 1/2 the trapezoidal rule:
                              x_n+1 = x_n + dt ((1 - theta) v_n + theta v_n+1), the forces likewise
                              (kn_fem_free_motion, kn_fem_potential, kn_fem_advance) */
  double* Dm_inv;          /* 9 * ntet */
  double* volume;          /* ntet, rest volumes */
  double* mass;            /* nvert, lumped: sum over incident tets of rho V / 4 */
  unsigned char* fixed;    /* nvert: 1 = velocity 0, position held (eliminated from the solve) */
  int nattach;             /* vertices attached to rigid bodies (coupled later through constraints) */
  int* attach_vertex;      /* nattach vertex indices */
  int* attach_body;        /* nattach rigid body ids (multibody body index) */
  /* state */
  double* x;               /* 3 * nvert current positions */
  double* v;               /* 3 * nvert velocities; 0 at fixed vertices */
  double* R0;              /* 9 * ntet rotation of the polar decomposition of the last step's F */
  /* free-motion results (valid after kn_fem_free_motion) */
  double* v_star;          /* 3 * nvert; 0 at fixed vertices */
  int nfree;               /* number of free vertices */
  int* free_index;         /* nvert: index of the vertex among free vertices, -1 when fixed */
  kn_fem_solver* solver;
} kn_fem_body;

/* (mesh, material, name) => a body at rest at the mesh's rest positions (R0 = I, v = 0), with
 * Dm^-1, volumes and lumped masses. Errors: KN_ERR_INVALID naming the body and the bad parameter
 * or tet. The caller keeps its mesh. Free with kn_fem_body_free. */
kn_status kn_fem_body_create(const kn_tet_mesh* mesh, const kn_fem_material* mat, const char* name,
                             kn_fem_body** out, kn_error* err);
void kn_fem_body_free(kn_fem_body* b);
/* pose X_WB => x = R X + p for every vertex, v = 0, R0 = R for every tet (the rest shape,
 * rotated: zero elastic force for every model). */
void kn_fem_body_place(kn_fem_body* b, const kn_pose* X_WB);
/* Fix every vertex whose rest position lies in the box [lo, hi] (body coordinates, inclusive).
 * Returns the number fixed in *count (may be NULL). KN_ERR_INVALID if lo > hi. */
kn_status kn_fem_body_fix_box(kn_fem_body* b, const double lo[3], const double hi[3], int* count, kn_error* err);
/* Fix the listed vertices. KN_ERR_INVALID naming the body and the bad index. */
kn_status kn_fem_body_fix_vertices(kn_fem_body* b, const int* index, int n, kn_error* err);
/* Record that the listed vertices are attached to rigid body `rigid_body` (an id; the coupling
 * constraint is built by the caller from attach_vertex / attach_body). */
kn_status kn_fem_body_attach(kn_fem_body* b, const int* index, int n, int rigid_body, kn_error* err);
/* body => total mass (sum of lumped masses) = rho * mesh volume. */
double kn_fem_body_mass(const kn_fem_body* b);
/* (mesh, rest volumes, density) => lumped vertex masses (nvert): rho V / 4 to each tet vertex. */
void kn_fem_lumped_mass(const kn_tet_mesh* mesh, const double* volume, double density, double* mass);
/* Release the free-motion scratch (CHOLMOD pattern and factor); NULL is fine. */
void kn_fem_solver_free(kn_fem_solver* s);

/*---- free motion (free_motion.c) ----*/

typedef struct {
  int max_iterations;      /* Newton iterations (default 50) */
  double rel_tolerance;    /* converged when |grad E| <= rel * max(|grad E| at the start, dt |M g|)
                              (default 1e-6; the gradient has momentum units) */
  double armijo;           /* sufficient decrease constant (default 1e-4) */
  int max_backtracks;      /* halvings per line search (default 30) */
} kn_fem_newton_options;
kn_fem_newton_options kn_fem_newton_options_default(void);

/* (x_n, v_n, R0, dt) => v_star and the dynamics matrix A = M + dt D + dt^2 K at v_star, by
 * Newton on the backward-Euler incremental potential (velocity form)
 *   E(v) = 1/2 (v - v_n)^T M (v - v_n) + Psi(x_n + dt v) + dt/2 v^T D v - dt (M g)^T v
 * (with theta != 1, the theta scheme's: dt -> theta dt in every term, Psi at
 * x^ + theta dt v, x^ = x_n + (1 - theta) dt v_n, and - (1 - theta) dt f_n^T v added, f_n =
 * -grad Psi(x_n) - D v_n + M g the force at the step start: kn_fem_potential; A = M + theta dt D +
 * theta^2 dt^2 K),
 * D = alpha M + beta K(x_n) (K frozen at the step start so E is a potential; for the linear
 * corotated model K is constant in the step, i.e. Drake's K at the current state).
 * Fixed vertices are eliminated (v = 0). Backtracking Armijo line search on E. The linear
 * corotated and linear models are quadratic: one Newton step. The body state (x, v, R0) is never
 * changed; on failure (bad dt, non-finite values, not PD, no convergence) the error names the body. */
kn_status kn_fem_free_motion(kn_fem_body* b, double dt, const kn_fem_newton_options* opt, kn_error* err);
/* body after kn_fem_free_motion => A at v_star over the free vertices' DoFs (3 * nfree, ordered by
 * free_index), lower triangle, symmetric (stype -1), CHOLMOD int version; owned by the body, valid
 * until the next free-motion call. NULL before the first. */
const struct cholmod_sparse_struct* kn_fem_body_dynamics_matrix(const kn_fem_body* b);
struct cholmod_factor_struct; /* CHOLMOD's factor (cholmod.h); opaque here */
/* body after kn_fem_free_motion => *L, the CHOLMOD factor (supernodal L L^T of A permuted, int
 * version) of the dynamics matrix at v_star. The free motion's own factorization is reused when it
 * is of that A (the linear and linear corotated models: one Newton step at the final A); else
 * (nonlinear models, or Newton converged without a step) A is factorized once here with the kept
 * analysis. Owned by the body, valid until the next free-motion call. KN_ERR_NUMERIC if not PD. */
kn_status kn_fem_body_dynamics_factor(kn_fem_body* b, const struct cholmod_factor_struct** L, kn_error* err);
/* (x_n, v_n, R0 of the body state, dt, v over the free DoFs) => the incremental potential that
 * kn_fem_free_motion minimizes, at any trial v (contact solvers minimize it plus their own terms):
 *   E(v) = 1/2 (v - v_n)^T M (v - v_n) + Psi(x_n + dt v) + dt/2 v^T D v - dt (M g)^T v,
 *   D = alpha M + beta K(x_n),
 * in *E (if non-NULL), grad E (grad, 3 * nfree, if non-NULL) and, if hessian is non-NULL, *hessian
 * = M + dt D + dt^2 K(x_n + dt v), element stiffnesses PSD-projected for the corotated and
 * neo-Hookean models (K(x_n) of D too), as the free motion's Newton (the same code). v, grad and
 * the Hessian are over the free vertices' DoFs: 3 * nfree ordered by free_index, fixed vertices at
 * x_n. The Hessian has kn_fem_body_dynamics_matrix's pattern (lower triangle, stype -1, CHOLMOD
 * int); it is owned by the body, overwritten by the next call that asks for it, freed when the
 * fixed set changes; the dynamics matrix and its factor are not touched. At v = v_star (on the free
 * DoFs) it equals the dynamics matrix entry for entry and |grad E| meets the Newton stopping test.
 * With theta != 1 it is the theta scheme's potential (kn_fem_free_motion above), Hessian M + theta
 * dt D + theta^2 dt^2 K(x^ + theta dt v), and its gradient M (v - v_n) - theta dt f(x^ + theta dt v,
 * v) - (1 - theta) dt f_n: the unified residual of digest implicit-smooth-friction §3.6 (zeta = theta).
 * Needs only the body state (x, v, R0 are the step start until kn_fem_advance): callable before or
 * after kn_fem_free_motion, with the same result. Builds the sparsity pattern on first use; with
 * stiffness damping (beta > 0) K(x_n), and with theta != 1 the start force, are assembled when the
 * state (x, v, R0, dt, theta) differs from the last call's (compared). KN_ERR_INVALID for a bad dt,
 * KN_ERR_NOMEM; non-finite values are returned as computed. */
kn_status kn_fem_potential(kn_fem_body* b, double dt, const double* v, double* E, double* grad,
                           const struct cholmod_sparse_struct** hessian, kn_error* err);
/* (v_next, 3 * nvert) => v = v_next (0 at fixed vertices), x += dt v (theta != 1: x += dt ((1 -
 * theta) v_n + theta v_next)), R0 = polar(F(x)) per tet. */
void kn_fem_advance(kn_fem_body* b, double dt, const double* v_next);
/* Quasi-static equilibrium: minimize Psi(x) - (M g)^T x over the free vertices with the same
 * Newton (from the current x), then x = x*, v = 0, R0 = polar(F). Transactional like free motion. */
kn_status kn_fem_static_solve(kn_fem_body* b, const kn_fem_newton_options* opt, int* iterations, kn_error* err);

/*---- Schur complement on the participating DoFs (schur.c, digest 6.2) ----*/

/* Scratch of one body's elimination: the factor of A used (its own, with the symbolic analysis
 * kept while the pattern holds, or the caller's), S and workspace for the recovery. */
typedef struct kn_fem_schur kn_fem_schur;
kn_fem_schur* kn_fem_schur_create(void); /* NULL on out-of-memory */
void kn_fem_schur_free(kn_fem_schur* s);
/* (A: n x n SPD, lower triangle, stype -1, CHOLMOD int; P: np strictly increasing DoF indices)
 * => S = A_PP - A_PN A_NN^-1 A_NP (np x np row-major, dense, SPD), computed as (X_PP)^-1 with
 * X_PP = (A^-1)_PP (one factorization of A, kept in s, then as kn_fem_schur_complement_factored).
 * KN_ERR_NUMERIC when A is not positive definite. */
kn_status kn_fem_schur_complement(kn_fem_schur* s, const struct cholmod_sparse_struct* A, const int* P, int np,
                                  double* S, kn_error* err);
/* As kn_fem_schur_complement with the caller's factor L of A (e.g. kn_fem_body_dynamics_factor),
 * which must stay valid until the last kn_fem_schur_recover. Two routes, the cheaper by flop count:
 * - X_PP = Y^T Y with Y = L^-1 (E_P permuted), a forward solve with sparse right-hand sides (only
 *   the elimination-tree paths of the P rows), then S = X_PP^-1 by dense Cholesky; no dense n x np
 *   storage. For few participating DoFs (an FEM body touched on a patch).
 * - given A (else NULL): S = A_PP - A_PN A_NN^-1 A_NP directly with A_NN dense, when most DoFs take
 *   part (an MPM grid under many contact particles) and |N| <= 4096. */
kn_status kn_fem_schur_complement_factored(kn_fem_schur* s, const struct cholmod_sparse_struct* A,
                                           const struct cholmod_factor_struct* L, const int* P, int np, double* S,
                                           kn_error* err);
/* 1 when the last kn_fem_schur_complement_factored took the direct route (tests, benchmarks) */
int kn_fem_schur_used_direct(const kn_fem_schur* s);
/* (Dv_P = v_P - v*_P, np) => Dv (n) for every DoF: Dv_N = -A_NN^-1 A_NP Dv_P, Dv_P unchanged;
 * computed as Dv = A^-1 E_P (S Dv_P) (block inverse: X_NP = -A_NN^-1 A_NP S^-1, X_PP = S^-1), one
 * solve with the factor; the P rows are set to Dv_P exactly. */
void kn_fem_schur_recover(kn_fem_schur* s, const double* dv_P, double* dv);

#ifdef __cplusplus
}
#endif
#endif
