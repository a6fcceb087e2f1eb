/* T15 (digest §9): MPM free motion. Free fall (v* = v + g dt on every node, F stays I), the
 * gradient of E_MPM and its Hessian A against central differences on a 2x2x2-cell block with
 * random F near identity, one Newton step for the linear corotated model, A symmetric PD; the
 * EOS fluid converges by Newton; T14-style Schur complement of A (kn_fem_schur_*) against dense. */
#include <suitesparse/cholmod.h>
#include <criterion/criterion.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deformable/deformable.h"
#include "mpm/mpm.h"

static const double g3[3] = {0, 0, -9.81};

static kn_mpm_body* make(kn_mpm_model model, double side, double h, int ppc) {
  kn_mpm_material mat = kn_mpm_material_default();
  mat.model = model;
  kn_mpm_shape sh = {.type = KN_MPM_BOX, .size = {side, side, side}};
  kn_pose X;
  double xyz[3] = {0.0113, 0.0071, 0.5037}, rpy[3] = {0, 0, 0};
  kn_pose_from_xyz_rpy(xyz, rpy, &X);
  kn_mpm_body* b;
  kn_error err;
  cr_assert_eq(kn_mpm_body_create(&mat, &sh, &X, h, ppc, "block", &b, &err), KN_OK, "%s", err.msg);
  return b;
}

static unsigned rs = 2024;
static double rnd(void) { /* deterministic uniform in [-1, 1] */
  rs = rs * 1103515245u + 12345u;
  return ((rs >> 8) % 20001) / 10000.0 - 1;
}

/* (body after free motion, v) => E_MPM(v) and its gradient (if non-NULL) */
static double energy(kn_mpm_body* b, const double* v, double* grad) {
  double E;
  kn_error err;
  cr_assert_eq(kn_mpm_potential(b, v, &E, grad, NULL, &err), KN_OK, "%s", err.msg);
  return E;
}

/* dense symmetric copy of the lower-stored CHOLMOD A */
static double* dense_A(const kn_mpm_body* b, int* n_out) {
  const cholmod_sparse* A = (const cholmod_sparse*)kn_mpm_dynamics_matrix(b);
  cr_assert(A != NULL);
  int n = (int)A->nrow;
  const int *Ap = A->p, *Ai = A->i;
  const double* Ax = A->x;
  double* D = calloc((size_t)n * (size_t)n, sizeof(double));
  for (int j = 0; j < n; j++)
    for (int q = Ap[j]; q < Ap[j + 1]; q++) {
      cr_assert(Ai[q] >= j, "upper entry stored");
      D[(size_t)Ai[q] * n + j] = D[(size_t)j * n + Ai[q]] = Ax[q];
    }
  *n_out = n;
  return D;
}

Test(mpm_free_motion, free_fall_exact) {
  kn_mpm_body* b = make(KN_MPM_LINEAR_COROTATED, 0.1, 0.025, 8);
  cr_assert_eq(b->np, 512);
  kn_error err;
  const double dt = 0.01;
  double v0[3] = {0.3, -0.2, 0.1};
  kn_mpm_body_set_velocity(b, v0);
  for (int step = 1; step <= 3; step++) {
    cr_assert_eq(kn_mpm_free_motion(b, dt, g3, NULL, &err), KN_OK, "%s", err.msg);
    double e = 0;
    for (int i = 0; i < b->grid.n; i++)
      for (int d = 0; d < 3; d++) e = fmax(e, fabs(b->grid.v_star[3 * i + d] - (v0[d] + step * dt * g3[d])));
    cr_assert(e < 1e-12, "step %d: max |v*_i - (v + k g dt)| = %g", step, e);
    cr_assert_eq(kn_mpm_advance(b, b->grid.v_star, dt, &err), KN_OK, "%s", err.msg);
    double ev = 0, eF = 0;
    for (int p = 0; p < b->np; p++) {
      for (int d = 0; d < 3; d++) ev = fmax(ev, fabs(b->v[3 * p + d] - (v0[d] + step * dt * g3[d])));
      for (int k = 0; k < 9; k++) eF = fmax(eF, fabs(b->FE[9 * p + k] - (k % 4 == 0)));
    }
    cr_assert(ev < 1e-12 && eF < 1e-12, "step %d: v_p error %g, |F - I| %g", step, ev, eF);
  }
  kn_mpm_body_free(b);
}

/* random F near I, random v_p and C_p on a 2x2x2-cell block; FD of E and grad E */
static void fd_check(kn_mpm_model model) {
  kn_mpm_body* b = make(model, 0.05, 0.025, 8);
  for (int p = 0; p < b->np; p++) {
    for (int k = 0; k < 9; k++) b->FE[9 * p + k] = (k % 4 == 0) + 0.05 * rnd();
    for (int d = 0; d < 3; d++) b->v[3 * p + d] = 0.2 * rnd();
    for (int k = 0; k < 9; k++) b->C[9 * p + k] = rnd();
  }
  kn_error err;
  const double dt = 0.01;
  kn_mpm_newton_options opt = kn_mpm_newton_options_default();
  opt.rel_tolerance = 1e-11; /* tighter than the default 1e-8: Newton must really converge */
  cr_assert_eq(kn_mpm_free_motion(b, dt, g3, &opt, &err), KN_OK, "%s", err.msg);
  int n3 = 3 * b->grid.n;
  double *v = calloc((size_t)n3, sizeof(double)), *gr = calloc((size_t)n3, sizeof(double));
  double *gp = calloc((size_t)n3, sizeof(double)), *gm = calloc((size_t)n3, sizeof(double));
  /* (b) optimality at v*: |grad E(v*)| tiny relative to |grad E(v^n)| */
  energy(b, b->grid.v, gr);
  double g0 = 0, g1 = 0;
  for (int k = 0; k < n3; k++) g0 += gr[k] * gr[k];
  energy(b, b->grid.v_star, gr);
  for (int k = 0; k < n3; k++) g1 += gr[k] * gr[k];
  /* 1e-9: Newton stops when it stalls at roundoff (measured 1.8e-10 for the EOS, ~1e-16 linear) */
  cr_assert(sqrt(g1) <= 1e-9 * sqrt(g0), "|grad E(v*)| %g vs |grad E(v^n)| %g", sqrt(g1), sqrt(g0));
  cr_log_info("model %d: %d nodes, |grad E(v^n)| %.3e, |grad E(v*)| %.3e", model, b->grid.n, sqrt(g0), sqrt(g1));
  /* one step and one factorization for the quadratic model; chord steps for the EOS fluid, with A
   * refactored at v* (measured: 10 steps, 3 factorizations) */
  int its, facts;
  kn_mpm_free_motion_counts(b, &its, &facts);
  cr_log_info("model %d: %d steps, %d factorizations of A", model, its, facts);
  if (model == KN_MPM_LINEAR_COROTATED) cr_assert(its == 1 && facts == 1, "%d steps, %d factorizations", its, facts);
  else cr_assert(facts >= 2 && facts < its, "%d steps, %d factorizations", its, facts);
  /* FD of the gradient at a point near v* */
  for (int k = 0; k < n3; k++) v[k] = b->grid.v_star[k] + 1e-3 * rnd();
  energy(b, v, gr);
  double gmax = 0, emax = 0;
  for (int k = 0; k < n3; k++) gmax = fmax(gmax, fabs(gr[k]));
  for (int k = 0; k < n3; k++) {
    double e = 1e-6, s = v[k];
    v[k] = s + e;
    double Ep = energy(b, v, NULL);
    v[k] = s - e;
    double Em = energy(b, v, NULL);
    v[k] = s;
    emax = fmax(emax, fabs((Ep - Em) / (2 * e) - gr[k]));
  }
  cr_assert(emax <= 1e-6 * gmax, "gradient vs FD: max error %g, |grad| %g", emax, gmax);
  cr_log_info("model %d: gradient FD relative error %.2e", model, emax / gmax);
  if (model == KN_MPM_LINEAR_COROTATED) { /* A is the exact (constant) Hessian */
    int n;
    double* A = dense_A(b, &n);
    cr_assert_eq(n, n3);
    double amax = 0, hmax = 0;
    for (int k = 0; k < n3 * n3; k++) amax = fmax(amax, fabs(A[k]));
    for (int j = 0; j < n3; j++) {
      double e = 1e-5, s = v[j];
      v[j] = s + e;
      energy(b, v, gp);
      v[j] = s - e;
      energy(b, v, gm);
      v[j] = s;
      for (int i = 0; i < n3; i++) hmax = fmax(hmax, fabs((gp[i] - gm[i]) / (2 * e) - A[(size_t)i * n3 + j]));
    }
    cr_assert(hmax <= 1e-6 * amax, "Hessian vs FD: max error %g, |A| %g", hmax, amax);
    cr_log_info("Hessian FD relative error %.2e", hmax / amax);
    /* symmetric by storage; positive definite: smallest eigenvalue >= the smallest node mass */
    double* w = calloc((size_t)n3, sizeof(double));
    cr_assert_eq(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', n3, A, n3, w), 0);
    double mmin = INFINITY;
    for (int i = 0; i < b->grid.n; i++) mmin = fmin(mmin, b->grid.mass[i]);
    cr_assert(w[0] > 0 && w[0] >= mmin * (1 - 1e-9), "lambda_min(A) %g, min node mass %g", w[0], mmin);
    cr_log_info("A: %d DoFs, lambda_min %.3e (min node mass %.3e), lambda_max %.3e", n3, w[0], mmin, w[n3 - 1]);
    free(w);
    free(A);
  }
  free(v), free(gr), free(gp), free(gm);
  kn_mpm_body_free(b);
}

Test(mpm_free_motion, fd_linear_corotated) { fd_check(KN_MPM_LINEAR_COROTATED); }
Test(mpm_free_motion, fd_eos_fluid) { fd_check(KN_MPM_EOS_FLUID); }

/* Schur complement over a subset of nodes with the body's own factor equals A_PP - A_PN A_NN^-1 A_NP
 * computed densely (S (A^-1)_PP = I), by both of kn_fem_schur_complement_factored's routes: P = one
 * particle's 27 support nodes (81 of 240 DoFs: the route through (A^-1)_PP) and P = every other node
 * (159 DoFs: the direct route with A_NN dense). The recovery gives (A Dv)_N = 0 and Dv_P = the input. */
Test(mpm_free_motion, schur_complement_of_A) {
  kn_mpm_body* b = make(KN_MPM_LINEAR_COROTATED, 0.05, 0.025, 8);
  for (int p = 0; p < b->np; p++)
    for (int k = 0; k < 9; k++) b->FE[9 * p + k] = (k % 4 == 0) + 0.05 * rnd();
  kn_error err;
  cr_assert_eq(kn_mpm_free_motion(b, 0.01, g3, NULL, &err), KN_OK, "%s", err.msg);
  int nodes[27];
  double w[27];
  int k = kn_mpm_particle_weights(b, 3, nodes, w);
  const struct cholmod_factor_struct* L;
  cr_assert_eq(kn_mpm_dynamics_factor(b, &L, &err), KN_OK, "%s", err.msg);
  int n;
  double* A = dense_A(b, &n);
  double* F = malloc((size_t)n * n * sizeof(double));
  memcpy(F, A, (size_t)n * n * sizeof(double));
  cr_assert_eq(kn_chol_factor(F, n, &err), KN_OK, "%s", err.msg);
  char* in_support = calloc((size_t)n, 1);
  for (int a = 0; a < k; a++)
    for (int d = 0; d < 3; d++) in_support[3 * nodes[a] + d] = 1;
  for (int route = 0; route < 2; route++) {
    int* P = malloc((size_t)n * sizeof(int)), np = 0;
    for (int i = 0; i < n; i++) /* strictly increasing DoF indices */
      if (in_support[i] == (route == 0)) P[np++] = i;
    cr_assert_eq(np, route == 0 ? 81 : n - 81);
    kn_fem_schur* s = kn_fem_schur_create();
    double* S = calloc((size_t)np * np, sizeof(double));
    cr_assert_eq(kn_fem_schur_complement_factored(s, kn_mpm_dynamics_matrix(b), L, P, np, S, &err), KN_OK, "%s",
                 err.msg);
    cr_assert_eq(kn_fem_schur_used_direct(s), route);
    /* dense: S^-1 = (A^-1)_PP */
    double* X = calloc((size_t)n * np, sizeof(double));
    for (int j = 0; j < np; j++) X[(size_t)P[j] * np + j] = 1;
    kn_chol_solve(F, n, X, np);
    double e = 0;
    for (int i = 0; i < np; i++)
      for (int j = 0; j < np; j++) {
        double sum = 0;
        for (int q = 0; q < np; q++) sum += S[(size_t)i * np + q] * X[(size_t)P[q] * np + j];
        e = fmax(e, fabs(sum - (i == j)));
      }
    cr_assert(e < 1e-9, "route %d: S (A^-1)_PP - I: %g", route, e);
    /* recovery: Dv_P given, Dv_N = -A_NN^-1 A_NP Dv_P, i.e. (A Dv)_N = 0 */
    double *dvP = malloc((size_t)np * sizeof(double)), *dv = malloc((size_t)n * sizeof(double)), r = 0, scale = 0;
    for (int j = 0; j < np; j++) dvP[j] = rnd();
    kn_fem_schur_recover(s, dvP, dv);
    for (int i = 0; i < n; i++) {
      double sum = 0, mag = 0;
      for (int j = 0; j < n; j++) sum += A[(size_t)i * n + j] * dv[j], mag += fabs(A[(size_t)i * n + j] * dv[j]);
      scale = fmax(scale, mag);
      if (in_support[i] != (route == 0)) r = fmax(r, fabs(sum));
    }
    cr_assert(r < 1e-9 * scale, "route %d: |(A dv)_N| %g (scale %g)", route, r, scale);
    for (int j = 0; j < np; j++) cr_assert_eq(dv[P[j]], dvP[j]);
    cr_log_info("Schur over %d of %d DoFs: |S (A^-1)_PP - I| = %.2e, |(A dv)_N| / scale = %.1e", np, n, e, r / scale);
    free(S), free(X), free(P), free(dvP), free(dv);
    kn_fem_schur_free(s);
  }
  free(A), free(F), free(in_support);
  kn_mpm_body_free(b);
}

/* One grid for two bodies (kn_mpm_body_merge): a linear corotated block and an EOS fluid block
 * 0.2 m apart (8 cells at h 0.025: no shared node) on one grid give each node the v* its own body
 * gives alone, and the particles the same step, to 1e-9 relative (the solver order differs; the
 * merged body is no longer quadratic, so Newton with line search runs on both parts). Views alias
 * their part's particles and its region; a view cannot run free motion or advance. */
Test(mpm_free_motion, merged_bodies_move_as_apart) {
  kn_mpm_body* a = make(KN_MPM_LINEAR_COROTATED, 0.05, 0.025, 8);
  kn_mpm_body* f = make(KN_MPM_EOS_FLUID, 0.05, 0.025, 8);
  for (int p = 0; p < f->np; p++) f->x[3 * p] += 0.2;
  kn_mpm_body* both[2] = {a, f};
  for (int i = 0; i < 2; i++)
    for (int p = 0; p < both[i]->np; p++) {
      for (int k = 0; k < 9; k++) both[i]->FE[9 * p + k] = (k % 4 == 0) + 0.05 * rnd();
      for (int d = 0; d < 3; d++) both[i]->v[3 * p + d] = 0.2 * rnd();
      for (int k = 0; k < 9; k++) both[i]->C[9 * p + k] = rnd();
    }
  kn_error err;
  kn_mpm_body* m = NULL;
  const kn_mpm_body* parts[2] = {a, f};
  cr_assert_eq(kn_mpm_body_merge(parts, 2, "both", &m, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(m->np, a->np + f->np);
  cr_assert_eq(m->nparts, 2);
  cr_assert_eq(kn_mpm_part_of(m, a->np)->material.model, KN_MPM_EOS_FLUID);
  cr_assert_eq(kn_mpm_part_of(m, a->np - 1)->material.model, KN_MPM_LINEAR_COROTATED);
  kn_mpm_newton_options opt = kn_mpm_newton_options_default();
  opt.rel_tolerance = 1e-11;
  const double dt = 0.01, h = 0.025;
  cr_assert_eq(kn_mpm_free_motion(m, dt, g3, &opt, &err), KN_OK, "%s", err.msg);
  /* How close can the two solutions be? The merged energy is the sum of the two bodies' (they share
   * no node), so its exact minimizer is theirs. Each Newton stops at |grad E| <= its threshold or at
   * the stall test (Newton decrement at E's roundoff), so each returned v is only as accurate as its
   * residual gradient g allows: E is strongly convex near v* with Hessian A >= M, the lumped node
   * masses (the elastic Hessian is PSD-projected), so |v - v_exact|_M <= |g|_(M^-1) (= |g| / m in
   * one dimension), and one node's |v_i - v_exact,i| <= |v - v_exact|_M / sqrt(min_i m_i). The
   * residual gradients depend on the BLAS kernels under CHOLMOD (9.4e-8 on |v*| 12.8 with OpenBLAS's
   * Sandybridge kernels, 1.8e-7 on an AMD EPYC), so the bound is measured here, merged and apart:
   * max_i |v_merged,i - v_alone,i| <= (|g_m|_(M^-1) + |g_a|_(M^-1) + |g_f|_(M^-1)) / sqrt(min_i m_i).
   * (|g| / min m_i, the plain-norm form, is 65x looser: the residual sits on heavy nodes.) */
  double gsum = 0, mmin = INFINITY;
  kn_mpm_body* solved[3] = {m, a, f};
  for (int i = 0; i < 3; i++) {
    if (i > 0) cr_assert_eq(kn_mpm_free_motion(solved[i], dt, g3, &opt, &err), KN_OK, "%s", err.msg);
    kn_mpm_body* b = solved[i];
    double* grad = malloc(3 * (size_t)b->grid.n * sizeof(double));
    energy(b, b->grid.v_star, grad);
    double g2 = 0;
    for (int k = 0; k < 3 * b->grid.n; k++) g2 += grad[k] * grad[k] / b->grid.mass[k / 3];
    gsum += sqrt(g2);
    for (int k = 0; k < b->grid.n; k++) mmin = fmin(mmin, b->grid.mass[k]);
    free(grad);
  }
  const double bound = gsum / sqrt(mmin);
  double vmax = 0, e = 0;
  for (int i = 0; i < 2; i++) {
    /* node of body i => the merged grid's node with the same integer coordinates */
    for (int j = 0; j < both[i]->grid.n; j++) {
      int found = -1;
      for (int k = 0; k < m->grid.n && found < 0; k++)
        if (!memcmp(m->grid.index + 3 * k, both[i]->grid.index + 3 * j, 3 * sizeof(int))) found = k;
      cr_assert(found >= 0, "body %d node %d missing from the merged grid", i, j);
      double d2 = 0;
      for (int d = 0; d < 3; d++) {
        vmax = fmax(vmax, fabs(both[i]->grid.v_star[3 * j + d]));
        double dv = both[i]->grid.v_star[3 * j + d] - m->grid.v_star[3 * found + d];
        d2 += dv * dv;
      }
      e = fmax(e, sqrt(d2));
    }
  }
  cr_assert_eq(m->grid.n, a->grid.n + f->grid.n, "the two bodies share no node");
  cr_log_info("merged vs apart: v* differs by %.2e (bound %.2e, |v*| %.2e)", e, bound, vmax);
  /* the bound stays a solver tolerance, not a licence: the solves converged far below |v*| */
  cr_assert(bound < 1e-5 * vmax, "the residual gradients allow %g on |v*| %g: a free motion did not converge", bound,
            vmax);
  cr_assert(e <= bound, "v*: max difference %g > %g = sum |grad E|_(M^-1) / sqrt(min m_i) (|v*| %g)", e, bound, vmax);
  /* F_E after the step: F_E <- (I + dt sum_i v_i grad w_ip^T) F_E, so a velocity difference e on
   * each node moves F_E by at most dt e sum_i |grad w_ip| |F_E|, and sum_i |grad w_ip| <= 6 / h for
   * quadratic B-splines (per axis sum |N'| = (1 + 2 |x - 1|) / h <= 2 / h, three axes). The fluid's
   * reset F_E = J^(1/3) I has derivative (1 / sqrt 3) J^(1/3) |F^-T| ~ 1 at F ~ I: a factor 2 covers
   * it; 16 eps |F| is the rounding of the update itself. */
  double Fmax = 0;
  for (int p = 0; p < m->np; p++) {
    double f2 = 0;
    for (int k = 0; k < 9; k++) f2 += m->FE[9 * p + k] * m->FE[9 * p + k];
    Fmax = fmax(Fmax, sqrt(f2));
  }
  const double Ftol = 2 * dt * e * (6 / h) * Fmax + 16 * DBL_EPSILON * Fmax;
  cr_assert(Ftol < 1e-5 * Fmax, "F_E bound %g on |F_E| %g: v* too far apart", Ftol, Fmax);
  cr_assert_eq(kn_mpm_advance(m, m->grid.v_star, dt, &err), KN_OK, "%s", err.msg);
  double ex = 0;
  for (int i = 0, at = 0; i < 2; i++) {
    cr_assert_eq(kn_mpm_advance(both[i], both[i]->grid.v_star, dt, &err), KN_OK, "%s", err.msg);
    for (int p = 0; p < both[i]->np; p++)
      for (int k = 0; k < 9; k++) ex = fmax(ex, fabs(both[i]->FE[9 * p + k] - m->FE[9 * (at + p) + k]));
    at += both[i]->np;
  }
  cr_log_info("merged vs apart: F_E differs by %.2e (bound %.2e)", ex, Ftol);
  cr_assert(ex <= Ftol, "F_E after the step: max difference %g > %g = 2 dt |dv| 6/h |F| + 16 eps |F|", ex, Ftol);
  /* views */
  kn_mpm_body* v = NULL;
  cr_assert_eq(kn_mpm_body_view(m, 1, &v, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(v->np, f->np);
  cr_assert_eq(v->x, m->x + 3 * (size_t)a->np);
  cr_assert_eq(kn_mpm_free_motion(v, dt, g3, NULL, &err), KN_ERR_INVALID);
  cr_assert_eq(kn_mpm_advance(v, m->grid.v_star, dt, &err), KN_ERR_INVALID);
  const double lo[3] = {-1, -1, -1}, hi[3] = {0.1, 1, 1}; /* the fluid sits at x ~ 0.21 */
  cr_assert_eq(kn_mpm_body_set_region(v, lo, hi, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_mpm_free_motion(m, dt, g3, NULL, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_mpm_advance(m, m->grid.v_star, dt, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "block: particle 0 left the allowed region"), "%s", err.msg);
  kn_mpm_body_free(v);
  /* spacings must agree */
  kn_mpm_body* c = make(KN_MPM_LINEAR_COROTATED, 0.05, 0.02, 1);
  const kn_mpm_body* bad[2] = {a, c};
  kn_mpm_body* none = NULL;
  cr_assert_eq(kn_mpm_body_merge(bad, 2, "bad", &none, &err), KN_ERR_INVALID);
  cr_assert_null(none);
  cr_assert(strstr(err.msg, "one grid needs one spacing"), "%s", err.msg);
  kn_mpm_body_free(c);
  kn_mpm_body_free(m), kn_mpm_body_free(a), kn_mpm_body_free(f);
}

/* b's free motion => v* and A equal, bit for bit, to those of a fresh body with b's particles (its
 * own pattern and CHOLMOD analysis) */
static void expect_as_fresh(kn_mpm_body* b, const char* what) {
  kn_error err;
  kn_mpm_state st = {0};
  cr_assert_eq(kn_mpm_state_save(b, &st, &err), KN_OK, "%s", err.msg);
  kn_mpm_body* c = make(KN_MPM_LINEAR_COROTATED, 0.05, 0.025, 8);
  cr_assert_eq(kn_mpm_state_restore(c, &st, &err), KN_OK, "%s", err.msg);
  kn_mpm_state_free(&st);
  cr_assert_eq(kn_mpm_free_motion(b, 0.01, g3, NULL, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_mpm_free_motion(c, 0.01, g3, NULL, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(b->grid.n, c->grid.n, "%s", what);
  cr_assert(!memcmp(b->grid.v_star, c->grid.v_star, 3 * (size_t)b->grid.n * sizeof(double)), "%s: v*", what);
  const cholmod_sparse* A = (const cholmod_sparse*)kn_mpm_dynamics_matrix(b);
  const cholmod_sparse* B = (const cholmod_sparse*)kn_mpm_dynamics_matrix(c);
  size_t nnz = (size_t)((const int*)A->p)[A->ncol];
  cr_assert_eq(nnz, (size_t)((const int*)B->p)[B->ncol], "%s", what);
  cr_assert(!memcmp(A->x, B->x, nnz * sizeof(double)), "%s: A", what);
  kn_mpm_body_free(c);
}

/* A's pattern and symbolic factorization are kept while the active nodes stay the same (a step
 * moving the particles by less than their distance to a cell boundary) and rebuilt when they change
 * (the block translated by one cell): both give what a fresh body gives */
Test(mpm_free_motion, pattern_reuse) {
  kn_mpm_body* b = make(KN_MPM_LINEAR_COROTATED, 0.05, 0.025, 8);
  for (int p = 0; p < b->np; p++)
    for (int k = 0; k < 9; k++) b->FE[9 * p + k] = (k % 4 == 0) + 0.05 * rnd();
  kn_error err;
  cr_assert_eq(kn_mpm_free_motion(b, 0.01, g3, NULL, &err), KN_OK, "%s", err.msg);
  int n0 = b->grid.n;
  int* index0 = malloc(3 * (size_t)n0 * sizeof(int));
  memcpy(index0, b->grid.index, 3 * (size_t)n0 * sizeof(int));
  for (int p = 0; p < b->np; p++) b->x[3 * p] += 1e-4; /* the same nodes */
  expect_as_fresh(b, "moved 0.1 mm");
  cr_assert(b->grid.n == n0 && !memcmp(index0, b->grid.index, 3 * (size_t)n0 * sizeof(int)), "nodes changed");
  for (int p = 0; p < b->np; p++) b->x[3 * p + 2] += 0.025; /* one cell up: other nodes */
  expect_as_fresh(b, "moved one cell");
  cr_assert(memcmp(index0, b->grid.index, 3 * (size_t)n0 * sizeof(int)) != 0, "nodes did not change");
  free(index0);
  kn_mpm_body_free(b);
}
