/* kn_fem_potential: the FEM body's incremental potential E(v), grad E(v) and Hessian(v) at trial
 * velocities v, for every material model, with Rayleigh damping (alpha, beta > 0) and a fixed vertex.
 *
 * On a 2x1x1-cube box (12 vertices, 12 tets, vertex 0 fixed: 33 DoFs), randomly posed, deformed and
 * moving (xorshift seeds), at a random v:
 * - E, grad E and the Hessian equal a reference written here from the element API alone
 *   (kn_fem_element_eval, dense): E_ref = 1/2 |v - v_n|_M^2 + sum_e V Psi(x_n + dt v)
 *   + dt/2 v^T (alpha M + beta K(x_n)) v - dt (M g)^T v; tolerance 1e-12 of the sum of the terms'
 *   magnitudes (a few roundings per term);
 * - central differences: E along each coordinate and a random direction against grad E, grad E
 *   along each coordinate (every Hessian column) and a random direction against the Hessian.
 *   Step h = 1e-6 max|v|. The error of a central difference of f is h^2/6 |f'''| + ~k eps S / h with
 *   S the sum of the magnitudes of what f sums: the potential changes on a velocity scale of an
 *   element size over dt (~5 m/s), so the truncation is ~(h / 5 m/s)^2 ~ 1e-14 relative (allowed:
 *   1e-9), and the roundoff, with k = 64, is 1e-8 to 6e-7 of max |grad E| (max |H|) in these states
 *   (printed per case). Every term (inertia, damping, gravity, elasticity) is asserted to carry at
 *   least 1e-3 of the gradient and the tolerances to stay below 1e-5, so a sign or factor-2 error
 *   in any one term fails both checks;
 * - PSD projection (corotated, neo-Hookean): the FD check of the Hessian runs on a stretched state
 *   where no element's dP/dF is projected (asserted: projected == unprojected, bitwise); on a
 *   compressed state where some are projected (asserted) the Hessian equals the reference built from
 *   projected element stiffnesses, differs from the unprojected one, and is positive definite with
 *   lambda_min >= the smallest free vertex mass (A = M + dt D + dt^2 K with PSD K and D);
 * - at v* of kn_fem_free_motion: |grad E| meets Newton's stopping test and the Hessian equals
 *   kn_fem_body_dynamics_matrix entry for entry (bitwise, same pattern); the potential computed
 *   before the free motion equals the one after (bitwise), and the call leaves the dynamics matrix
 *   unchanged. */
#include <suitesparse/cholmod.h>
#include <criterion/criterion.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/dense.h"
#include "../support/mesh_poses.h"
#include "test_material_box.h"

static const double kDt = 0.01;

static kn_fem_body* make_body(kn_fem_model model) {
  kn_tet_mesh m;
  test_box_mesh(2, 1, 1, 0.2, 0.1, 0.1, &m);
  kn_fem_material mat = kn_fem_material_default();
  mat.model = model;
  mat.youngs_modulus = 1e5;
  mat.poisson_ratio = 0.3;
  mat.density = 1000.0;
  mat.mass_damping = 2.0;       /* dt alpha M = 0.02 M */
  mat.stiffness_damping = 0.01; /* dt beta K ~ dt^2 K: comparable to M on this mesh */
  kn_fem_body* b;
  kn_error err;
  cr_assert_eq(kn_fem_body_create(&m, &mat, "potential box", &b, &err), KN_OK, "%s", err.msg);
  test_box_mesh_free(&m);
  int fixed = 0;
  cr_assert_eq(kn_fem_body_fix_vertices(b, &fixed, 1, &err), KN_OK, "%s", err.msg);
  return b;
}

static int is_quadratic(kn_fem_model m) { return m == KN_FEM_LINEAR || m == KN_FEM_LINEAR_COROTATED; }

/* a random pose, the rest shape scaled by `stretch` about the body origin plus per-vertex noise of
 * `noise` m, v_n uniform in +-0.2 m/s, R0 = polar(F(x_n)) (kn_fem_advance with dt = 0) */
static void set_state(kn_fem_body* b, double stretch, double noise) {
  kn_pose X;
  random_pose(0.5, &X);
  kn_fem_body_place(b, &X);
  int nv = b->mesh.nvert;
  double* vn = malloc(3 * (size_t)nv * sizeof(double));
  for (int i = 0; i < nv; i++) {
    double RX[3];
    kn_mat3_vec(X.R, b->mesh.X + 3 * i, RX);
    for (int k = 0; k < 3; k++) {
      b->x[3 * i + k] = X.p[k] + stretch * RX[k] + noise * (2 * urand() - 1);
      vn[3 * i + k] = 0.2 * (2 * urand() - 1);
    }
  }
  kn_fem_advance(b, 0.0, vn);
  free(vn);
}

/* body vertex i's free DoFs of y (3 nfree) => x = x_n + dt y (x_n on fixed vertices) */
static void trial_positions(const kn_fem_body* b, const double* y, double* x) {
  for (int i = 0; i < b->mesh.nvert; i++)
    for (int k = 0; k < 3; k++)
      x[3 * i + k] = b->x[3 * i + k] + (b->free_index[i] >= 0 ? kDt * y[3 * b->free_index[i] + k] : 0.0);
}

static void element_positions(const kn_fem_body* b, const double* x, int e, double xe[12]) {
  for (int c = 0; c < 4; c++) memcpy(xe + 3 * c, x + 3 * b->mesh.tet[4 * e + c], 3 * sizeof(double));
}

/* dense (n x n) sum of the element stiffnesses at positions x over the free DoFs */
static void dense_stiffness(const kn_fem_body* b, const double* x, int project, double* K) {
  int n = 3 * b->nfree;
  memset(K, 0, (size_t)n * n * sizeof(double));
  for (int e = 0; e < b->mesh.ntet; e++) {
    double xe[12], Ke[144];
    element_positions(b, x, e, xe);
    kn_fem_element_eval(b->material.model, b->mu, b->lambda, xe, b->Dm_inv + 9 * e, b->volume[e], b->R0 + 9 * e, NULL,
                        Ke, project);
    for (int p = 0; p < 4; p++)
      for (int q = 0; q < 4; q++) {
        int fp = b->free_index[b->mesh.tet[4 * e + p]], fq = b->free_index[b->mesh.tet[4 * e + q]];
        if (fp < 0 || fq < 0) continue;
        for (int r = 0; r < 3; r++)
          for (int c = 0; c < 3; c++) K[(size_t)(3 * fp + r) * n + 3 * fq + c] += Ke[12 * (3 * p + r) + 3 * q + c];
      }
  }
}

typedef struct {
  double E, scale;        /* E_ref and the sum of its terms' magnitudes */
  double* g;              /* reference gradient (n) */
  double* term[4];        /* its parts: inertia, damping, gravity, elastic (n each) */
  double* magnitude;      /* per DoF, the sum of the magnitudes of everything summed into g (roundoff scale) */
  double* H;              /* reference Hessian (n x n), element stiffnesses projected as the free motion does */
  double* H_unprojected;  /* the same with exact element stiffnesses at x_n + dt v */
} reference;

/* (body, v over free DoFs) => E, grad E, Hessian from the element API, without the sparse assembly */
static void reference_at(const kn_fem_body* b, const double* v, reference* R) {
  int n = 3 * b->nfree, nv = b->mesh.nvert, project = !is_quadratic(b->material.model);
  double alpha = b->material.mass_damping, beta = b->material.stiffness_damping;
  double* x = malloc(3 * (size_t)nv * sizeof(double));
  double* Kn = malloc((size_t)n * n * sizeof(double));
  double* K = malloc((size_t)n * n * sizeof(double));
  R->g = calloc((size_t)n, sizeof(double));
  R->magnitude = calloc((size_t)n, sizeof(double));
  for (int t = 0; t < 4; t++) R->term[t] = calloc((size_t)n, sizeof(double));
  R->H = calloc((size_t)n * n, sizeof(double));
  R->H_unprojected = calloc((size_t)n * n, sizeof(double));
  dense_stiffness(b, b->x, project, Kn); /* K(x_n) of the damping, projected like the free motion's */
  double Ekin = 0, Edamp = 0, Egrav = 0, Eel = 0;
  for (int i = 0; i < nv; i++) {
    int f = b->free_index[i];
    if (f < 0) continue;
    for (int k = 0; k < 3; k++) {
      int d = 3 * f + k;
      double m = b->mass[i], dv = v[d] - b->v[3 * i + k], Dv = alpha * m * v[d];
      for (int j = 0; j < n; j++) Dv += beta * Kn[(size_t)d * n + j] * v[j];
      Ekin += 0.5 * m * dv * dv;
      Edamp += 0.5 * kDt * v[d] * Dv;
      Egrav -= kDt * m * b->gravity[k] * v[d];
      R->term[0][d] = m * dv;
      R->term[1][d] = kDt * Dv;
      R->term[2][d] = -kDt * m * b->gravity[k];
    }
  }
  trial_positions(b, v, x);
  for (int e = 0; e < b->mesh.ntet; e++) {
    double xe[12], f[12];
    element_positions(b, x, e, xe);
    Eel += kn_fem_element_eval(b->material.model, b->mu, b->lambda, xe, b->Dm_inv + 9 * e, b->volume[e],
                               b->R0 + 9 * e, f, NULL, 0);
    for (int p = 0; p < 4; p++) {
      int fp = b->free_index[b->mesh.tet[4 * e + p]];
      if (fp >= 0)
        for (int r = 0; r < 3; r++) {
          R->term[3][3 * fp + r] -= kDt * f[3 * p + r];
          R->magnitude[3 * fp + r] += fabs(kDt * f[3 * p + r]);
        }
    }
  }
  R->E = Ekin + Edamp + Egrav + Eel;
  R->scale = fabs(Ekin) + fabs(Edamp) + fabs(Egrav) + fabs(Eel);
  for (int d = 0; d < n; d++) {
    R->g[d] = R->term[0][d] + R->term[1][d] + R->term[2][d] + R->term[3][d];
    R->magnitude[d] += fabs(R->term[0][d]) + fabs(R->term[1][d]) + fabs(R->term[2][d]);
  }
  for (int pass = 0; pass < 2; pass++) {
    double* H = pass == 0 ? R->H : R->H_unprojected;
    dense_stiffness(b, x, pass == 0 ? project : 0, K);
    for (int k = 0; k < n * n; k++) H[k] = kDt * kDt * K[k] + kDt * beta * Kn[k];
    for (int i = 0; i < nv; i++)
      if (b->free_index[i] >= 0)
        for (int c = 0; c < 3; c++) {
          int d = 3 * b->free_index[i] + c;
          H[(size_t)d * n + d] += (1 + kDt * alpha) * b->mass[i];
        }
  }
  free(x), free(Kn), free(K);
}

static void reference_free(reference* R) {
  free(R->g), free(R->magnitude), free(R->H), free(R->H_unprojected);
  for (int t = 0; t < 4; t++) free(R->term[t]);
}

/* number of elements whose dP/dF at x_n + dt v the PSD projection changes */
static int projected_elements(const kn_fem_body* b, const double* v) {
  if (is_quadratic(b->material.model)) return 0;
  double* x = malloc(3 * (size_t)b->mesh.nvert * sizeof(double));
  trial_positions(b, v, x);
  int count = 0;
  for (int e = 0; e < b->mesh.ntet; e++) {
    double xe[12], F[9], D0[81], D1[81];
    element_positions(b, x, e, xe);
    kn_fem_deformation_gradient(xe, b->Dm_inv + 9 * e, F);
    kn_fem_energy_density(b->material.model, b->mu, b->lambda, F, b->R0 + 9 * e, NULL, D0, 0);
    kn_fem_energy_density(b->material.model, b->mu, b->lambda, F, b->R0 + 9 * e, NULL, D1, 1);
    count += memcmp(D0, D1, sizeof D0) != 0;
  }
  free(x);
  return count;
}




static double potential(kn_fem_body* b, const double* v, double* grad, const cholmod_sparse** H) {
  double E;
  kn_error err;
  cr_assert_eq(kn_fem_potential(b, kDt, v, &E, grad, (const struct cholmod_sparse_struct**)H, &err), KN_OK, "%s",
               err.msg);
  return E;
}

static const double kRefTol = 1e-12;

/* E, grad E, Hessian at v against the reference and central differences; fd_hessian: the exact
 * Hessian is the returned one (no projection active) */
static void check_at(kn_fem_body* b, const double* v0, int fd_hessian, const char* what) {
  int n = 3 * b->nfree;
  double* v = malloc((size_t)n * sizeof(double));
  double *g = malloc((size_t)n * sizeof(double)), *gp = malloc((size_t)n * sizeof(double)),
         *gm = malloc((size_t)n * sizeof(double)), *d = malloc((size_t)n * sizeof(double));
  memcpy(v, v0, (size_t)n * sizeof(double));
  const cholmod_sparse* Hs;
  double E = potential(b, v, g, &Hs);
  cr_assert_eq((int)Hs->nrow, n);
  double* H = dense_of(Hs);
  reference R;
  reference_at(b, v, &R);
  /* (1) against the element-API reference */
  double gmax = max_abs(g, (size_t)n), Hmax = max_abs(H, (size_t)n * n);
  double eE = fabs(E - R.E) / R.scale, eg = max_diff(g, R.g, (size_t)n) / gmax,
         eH = max_diff(H, R.H, (size_t)n * n) / Hmax;
  cr_log_info("%s: E %.6e vs reference: %.1e of %.2e; grad %.1e; Hessian %.1e", what, E, eE, R.scale, eg, eH);
  cr_assert_leq(eE, kRefTol, "%s: E %.17g vs reference %.17g", what, E, R.E);
  cr_assert_leq(eg, kRefTol, "%s: gradient vs reference: %g of max |g| %g", what, eg, gmax);
  cr_assert_leq(eH, kRefTol, "%s: Hessian vs reference: %g of max |H| %g", what, eH, Hmax);
  /* every term carries at least 1e-3 of the gradient: a factor 2 or a sign on it is >= 1e-3 >> tolerances */
  const char* names[4] = {"inertia", "damping", "gravity", "elastic"};
  for (int t = 0; t < 4; t++) {
    double share = max_abs(R.term[t], (size_t)n) / gmax;
    cr_log_info("%s: %s term: %.2e of max |grad E|", what, names[t], share);
    cr_assert_geq(share, 1e-3, "%s: the %s term is too small to be tested (%g)", what, names[t], share);
  }
  /* (2) central differences: every coordinate, then a random direction. Tolerances from the error
   * model: roundoff 64 eps S / h relative to max |g| (max |H|), S the sum of the magnitudes of what
   * E (a gradient entry) sums, 64 for the ~10 roundings of an element force and the rounding of
   * x_n + dt v (|x_n| up to 0.9 m against 0.1 m elements: F carries ~10 eps); plus 1e-9 for the
   * truncation (estimated ~1e-14) */
  double h = 1e-6 * max_abs(v, (size_t)n), efd_g = 0, efd_H = 0, Sg = 0;
  for (int k = 0; k < n; k++) Sg = fmax(Sg, R.magnitude[k]);
  double tol_g = 64 * DBL_EPSILON * R.scale / (h * gmax) + 1e-9, tol_H = 64 * DBL_EPSILON * Sg / (h * Hmax) + 1e-9;
  /* the tolerances stay far below what a factor 2 or a sign on the smallest term (>= 1e-3) gives */
  cr_assert_leq(fmax(tol_g, tol_H), 1e-5, "%s: FD tolerances %g, %g too loose to test", what, tol_g, tol_H);
  for (int j = 0; j <= n; j++) {
    for (int k = 0; k < n; k++) d[k] = j < n ? (k == j) : 2 * urand() - 1;
    for (int k = 0; k < n; k++) v[k] = v0[k] + h * d[k];
    double Ep = potential(b, v, gp, NULL);
    for (int k = 0; k < n; k++) v[k] = v0[k] - h * d[k];
    double Em = potential(b, v, gm, NULL);
    double gd = 0;
    for (int k = 0; k < n; k++) gd += g[k] * d[k];
    efd_g = fmax(efd_g, fabs((Ep - Em) / (2 * h) - gd) / (gmax * max_abs(d, (size_t)n)));
    if (!fd_hessian) continue;
    for (int i = 0; i < n; i++) {
      double Hd = 0;
      for (int k = 0; k < n; k++) Hd += H[(size_t)i * n + k] * d[k];
      efd_H = fmax(efd_H, fabs((gp[i] - gm[i]) / (2 * h) - Hd) / (Hmax * max_abs(d, (size_t)n)));
    }
  }
  if (fd_hessian)
    printf("%s: h %.1e: FD gradient %.2e (tol %.1e), FD Hessian %.2e (tol %.1e); vs reference E %.1e grad %.1e H %.1e\n",
           what, h, efd_g, tol_g, efd_H, tol_H, eE, eg, eH);
  else
    printf("%s: h %.1e: FD gradient %.2e (tol %.1e), FD Hessian not applicable (projected); vs reference E %.1e grad "
           "%.1e H %.1e\n", what, h, efd_g, tol_g, eE, eg, eH);
  cr_assert_leq(efd_g, tol_g, "%s: gradient vs central differences: %g > %g", what, efd_g, tol_g);
  if (fd_hessian) cr_assert_leq(efd_H, tol_H, "%s: Hessian vs central differences: %g > %g", what, efd_H, tol_H);
  /* (3) projected states: the projection changed the Hessian, which stays PD with lambda_min >= min m_i */
  double eU = max_diff(R.H, R.H_unprojected, (size_t)n * n) / Hmax;
  if (!fd_hessian) {
    cr_assert_geq(eU, 1e-6, "%s: projection inactive (Hessian = unprojected to %g)", what, eU);
    double* w = malloc((size_t)n * sizeof(double));
    cr_assert_eq(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', n, H, n, w), 0);
    double mmin = INFINITY;
    for (int i = 0; i < b->mesh.nvert; i++)
      if (b->free_index[i] >= 0) mmin = fmin(mmin, b->mass[i]);
    cr_log_info("%s: projected Hessian differs from the exact one by %.2e of max |H|; lambda_min %.4e (min mass %.4e)",
                what, eU, w[0], mmin);
    cr_assert_geq(w[0], mmin * (1 - 1e-9), "%s: lambda_min %g < smallest free mass %g", what, w[0], mmin);
    free(w);
  } else {
    cr_assert_eq(eU, 0.0, "%s: the exact and projected Hessians differ", what);
  }
  reference_free(&R);
  free(v), free(g), free(gp), free(gm), free(d), free(H);
}

/* v at v*: Newton's stopping test, Hessian == dynamics matrix bitwise; before == after free motion */
static void check_v_star(kn_fem_body* b, const char* what) {
  int n = 3 * b->nfree;
  double *vs = malloc((size_t)n * sizeof(double)), *vn = malloc((size_t)n * sizeof(double));
  double *g0 = malloc((size_t)n * sizeof(double)), *g1 = malloc((size_t)n * sizeof(double));
  for (int i = 0; i < b->mesh.nvert; i++)
    if (b->free_index[i] >= 0) memcpy(vn + 3 * b->free_index[i], b->v + 3 * i, 3 * sizeof(double));
  /* before the free motion (v* unknown yet): the potential at v_n */
  const cholmod_sparse* H;
  double Eb = potential(b, vn, g0, &H);
  size_t nnz = (size_t)((const int*)H->p)[n];
  double* Hb = malloc(nnz * sizeof(double));
  memcpy(Hb, H->x, nnz * sizeof(double));
  kn_error err;
  cr_assert_eq(kn_fem_free_motion(b, kDt, NULL, &err), KN_OK, "%s", err.msg);
  const cholmod_sparse* A = (const cholmod_sparse*)kn_fem_body_dynamics_matrix(b);
  double* A_before = malloc(nnz * sizeof(double));
  memcpy(A_before, A->x, nnz * sizeof(double));
  double Ea = potential(b, vn, g1, &H);
  cr_assert(Ea == Eb && !memcmp(g0, g1, (size_t)n * sizeof(double)) && !memcmp(Hb, H->x, nnz * sizeof(double)),
            "%s: the potential at v_n changed with the free motion", what);
  for (int i = 0; i < b->mesh.nvert; i++)
    if (b->free_index[i] >= 0) memcpy(vs + 3 * b->free_index[i], b->v_star + 3 * i, 3 * sizeof(double));
  potential(b, vs, g1, &H);
  cr_assert(H != A, "the potential's Hessian is the dynamics matrix itself");
  cr_assert(!memcmp(A->x, A_before, nnz * sizeof(double)), "%s: the potential changed the dynamics matrix", what);
  cr_assert_eq(((const int*)A->p)[n], (int)nnz);
  cr_assert(!memcmp(H->p, A->p, ((size_t)n + 1) * sizeof(int)) && !memcmp(H->i, A->i, nnz * sizeof(int)),
            "%s: pattern differs from the dynamics matrix's", what);
  size_t differ = 0;
  for (size_t k = 0; k < nnz; k++) differ += ((const double*)H->x)[k] != ((const double*)A->x)[k];
  cr_assert_eq(differ, 0, "%s: Hessian at v* differs from the dynamics matrix in %zu of %zu entries", what, differ, nnz);
  /* Newton's stopping test: |grad E| <= rel * max(|grad E(v_n)|, dt sqrt(sum m_i^2) |g|) */
  double n0 = 0, n1 = 0, m2 = 0;
  for (int k = 0; k < n; k++) n0 += g0[k] * g0[k], n1 += g1[k] * g1[k];
  for (int i = 0; i < b->mesh.nvert; i++)
    if (b->free_index[i] >= 0) m2 += b->mass[i] * b->mass[i];
  double ref = fmax(sqrt(n0), kDt * sqrt(m2) * kn_vec3_norm(b->gravity));
  double tol = kn_fem_newton_options_default().rel_tolerance * ref;
  cr_log_info("%s: |grad E(v*)| %.2e, stopping threshold %.2e (|grad E(v_n)| %.2e)", what, sqrt(n1), tol, sqrt(n0));
  printf("%s: |grad E(v*)| %.2e <= %.2e; Hessian == dynamics matrix (%zu entries)\n", what, sqrt(n1), tol, nnz);
  cr_assert_leq(sqrt(n1), tol, "%s: |grad E(v*)| %g above Newton's threshold %g", what, sqrt(n1), tol);
  cr_assert_gt(sqrt(n0), 100 * tol, "%s: v_n was already optimal: the test would not see a wrong v*", what);
  free(vs), free(vn), free(g0), free(g1), free(Hb), free(A_before);
}

// => the states checked (stretched, and compressed for the nonlinear models)
static int run_model(kn_fem_model model, uint64_t seed, const char* name) {
  int states = 1;
  g_rng = seed;
  kn_fem_body* b = make_body(model);
  int n = 3 * b->nfree;
  cr_assert_eq(n, 33);
  double* v = malloc((size_t)n * sizeof(double));
  char what[96];
  /* stretched 10 %: no element's dP/dF is projected at x_n + dt v */
  set_state(b, 1.1, 1e-3);
  for (int k = 0; k < n; k++) v[k] = 0.2 * (2 * urand() - 1);
  cr_assert_eq(projected_elements(b, v), 0, "%s: projection active in the stretched state", name);
  snprintf(what, sizeof what, "%s stretched", name);
  check_at(b, v, 1, what);
  check_v_star(b, what);
  if (!is_quadratic(model)) {
    /* compressed 15 % with noise: some elements are projected */
    set_state(b, 0.85, 8e-3);
    for (int k = 0; k < n; k++) v[k] = 0.3 * (2 * urand() - 1);
    int np = projected_elements(b, v);
    cr_log_info("%s compressed: %d of %d elements projected", name, np, b->mesh.ntet);
    cr_assert_gt(np, 0, "%s: no element projected in the compressed state", name);
    snprintf(what, sizeof what, "%s compressed", name);
    check_at(b, v, 0, what);
    check_v_star(b, what);
    states++;
  }
  /* errors */
  kn_error err;
  double E;
  cr_assert_eq(kn_fem_potential(b, 0.0, v, &E, NULL, NULL, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "potential box"), "%s", err.msg);
  free(v);
  kn_fem_body_free(b);
  return states;
}

Test(fem_potential, linear) { cr_assert_eq(run_model(KN_FEM_LINEAR, 0x9e3779b97f4a7c15ull, "linear"), 1); }
Test(fem_potential, linear_corotated) {
  cr_assert_eq(run_model(KN_FEM_LINEAR_COROTATED, 0x2545f4914f6cdd1dull, "linear corotated"), 1); /* quadratic: stretched only */
}
Test(fem_potential, corotated) { cr_assert_eq(run_model(KN_FEM_COROTATED, 0xd1b54a32d192ed03ull, "corotated"), 2); }
Test(fem_potential, neohookean) { cr_assert_eq(run_model(KN_FEM_NEOHOOKEAN, 0x8cb92ba72f3d8dd7ull, "neo-Hookean"), 2); }
