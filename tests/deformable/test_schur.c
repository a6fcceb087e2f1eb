/* Schur complement of an FEM body's A on the DoFs of its contact vertices (digest 6.2, T14):
 * S and the recovery against the dense block formulas, and SAP with elimination against SAP on
 * the full A as one dense clique (same regularization R), to 1e-10. */
#include <suitesparse/cholmod.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deformable/deformable.h"
#include "sap/sap.h"

/* a 0.1 m box (h 0.05, 27 vertices), tilted, moving sideways and down, after one free motion */
static kn_fem_body* make_body(double dt) {
  kn_tet_mesh m;
  kn_error err;
  cr_assert_eq(kn_tet_mesh_box(0.1, 0.1, 0.1, 0.05, &m, &err), KN_OK, "%s", err.msg);
  kn_fem_material mat = kn_fem_material_default();
  mat.youngs_modulus = 1e5, mat.poisson_ratio = 0.4, mat.density = 1e3;
  kn_fem_body* b;
  cr_assert_eq(kn_fem_body_create(&m, &mat, "box", &b, &err), KN_OK, "%s", err.msg);
  kn_tet_mesh_free(&m);
  kn_pose X;
  const double xyz[3] = {0, 0, 0.05}, rpy[3] = {0.2, -0.1, 0.3};
  kn_pose_from_xyz_rpy(xyz, rpy, &X);
  kn_fem_body_place(b, &X);
  for (int i = 0; i < b->mesh.nvert; i++) b->v[3 * i] = 0.4, b->v[3 * i + 2] = -0.3 + 0.5 * b->x[3 * i + 2];
  cr_assert_eq(kn_fem_free_motion(b, dt, NULL, &err), KN_OK, "%s", err.msg);
  return b;
}

// CHOLMOD lower triangle => dense symmetric n x n row-major
static double* dense_of(const cholmod_sparse* A) {
  int n = (int)A->nrow;
  const int *Ap = A->p, *Ai = A->i;
  const double* Ax = A->x;
  double* D = calloc((size_t)n * n, sizeof *D);
  for (int j = 0; j < n; j++)
    for (int k = Ap[j]; k < Ap[j + 1]; k++) D[(size_t)Ai[k] * n + j] = D[(size_t)j * n + Ai[k]] = Ax[k];
  return D;
}

// the two lowest vertices (world z) => their indices
static void lowest_two(const kn_fem_body* b, int v[2]) {
  v[0] = v[1] = -1;
  for (int i = 0; i < b->mesh.nvert; i++) {
    if (v[0] < 0 || b->x[3 * i + 2] < b->x[3 * v[0] + 2]) v[1] = v[0], v[0] = i;
    else if (v[1] < 0 || b->x[3 * i + 2] < b->x[3 * v[1] + 2]) v[1] = i;
  }
}

Test(schur, matches_dense_block_formulas) {
  kn_fem_body* b = make_body(0.01);
  const cholmod_sparse* A = (const cholmod_sparse*)kn_fem_body_dynamics_matrix(b);
  int n = (int)A->nrow, vv[2];
  lowest_two(b, vv);
  int P[6], np = 6;
  for (int k = 0; k < 2; k++)
    for (int c = 0; c < 3; c++) P[3 * k + c] = 3 * b->free_index[vv[k]] + c;
  if (P[0] > P[3])
    for (int c = 0; c < 3; c++) { int t = P[c]; P[c] = P[3 + c]; P[3 + c] = t; }
  kn_fem_schur* s = kn_fem_schur_create();
  double S[36];
  kn_error err;
  cr_assert_eq(kn_fem_schur_complement(s, (const struct cholmod_sparse_struct*)A, P, np, S, &err), KN_OK, "%s", err.msg);
  /* reference: S = A_PP - A_PN A_NN^-1 A_NP by dense Cholesky of A_NN */
  double* D = dense_of(A);
  int nn = n - np, *N = malloc((size_t)nn * sizeof *N), in_p[4096] = {0};
  for (int k = 0; k < np; k++) in_p[P[k]] = 1;
  for (int i = 0, k = 0; i < n; i++)
    if (!in_p[i]) N[k++] = i;
  double *ANN = malloc((size_t)nn * nn * sizeof(double)), *ANP = malloc((size_t)nn * np * sizeof(double));
  for (int a = 0; a < nn; a++) {
    for (int c = 0; c < nn; c++) ANN[a * nn + c] = D[(size_t)N[a] * n + N[c]];
    for (int c = 0; c < np; c++) ANP[a * np + c] = D[(size_t)N[a] * n + P[c]];
  }
  double* Z = malloc((size_t)nn * np * sizeof(double)); /* A_NN^-1 A_NP */
  memcpy(Z, ANP, (size_t)nn * np * sizeof(double));
  cr_assert_eq(kn_chol_factor(ANN, nn, &err), KN_OK);
  kn_chol_solve(ANN, nn, Z, np);
  double worst = 0, scale = 0;
  for (int a = 0; a < np; a++)
    for (int c = 0; c < np; c++) {
      double ref = D[(size_t)P[a] * n + P[c]];
      for (int k = 0; k < nn; k++) ref -= ANP[k * np + a] * Z[k * np + c];
      worst = fmax(worst, fabs(S[a * np + c] - ref));
      scale = fmax(scale, fabs(ref));
    }
  /* recovery: Dv_N = -Z Dv_P, Dv_P unchanged */
  double dvP[6] = {0.1, -0.2, 0.05, 0.3, 0.0, -0.15}, *dv = malloc((size_t)n * sizeof(double));
  kn_fem_schur_recover(s, dvP, dv);
  double worst_r = 0;
  for (int k = 0; k < np; k++) worst_r = fmax(worst_r, fabs(dv[P[k]] - dvP[k]));
  for (int a = 0; a < nn; a++) {
    double ref = 0;
    for (int c = 0; c < np; c++) ref -= Z[a * np + c] * dvP[c];
    worst_r = fmax(worst_r, fabs(dv[N[a]] - ref));
  }
  printf("schur: n %d, |P| %d: S error %.2e (max |S| %.3g), recovery error %.2e m/s\n", n, np, worst, scale, worst_r);
  cr_assert_lt(worst, 1e-10 * scale);
  cr_assert_lt(worst_r, 1e-12);
  /* a second call with the same pattern reuses the analysis and gives the same S */
  double S2[36];
  cr_assert_eq(kn_fem_schur_complement(s, (const struct cholmod_sparse_struct*)A, P, np, S2, &err), KN_OK);
  cr_assert_eq(memcmp(S, S2, sizeof S), 0);
  free(D), free(N), free(ANN), free(ANP), free(Z), free(dv);
  kn_fem_schur_free(s);
  kn_fem_body_free(b);
}

/* contact frame with normal nrm (unit): R_WC columns t1, t2, n */
static void frame(const double nrm[3], double R[9]) {
  double t1[3] = {1, 0, 0}, d = nrm[0];
  for (int k = 0; k < 3; k++) t1[k] -= d * nrm[k];
  double l = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
  for (int k = 0; k < 3; k++) t1[k] /= l;
  double t2[3] = {nrm[1] * t1[2] - nrm[2] * t1[1], nrm[2] * t1[0] - nrm[0] * t1[2], nrm[0] * t1[1] - nrm[1] * t1[0]};
  for (int k = 0; k < 3; k++) R[3 * k] = t1[k], R[3 * k + 1] = t2[k], R[3 * k + 2] = nrm[k];
}

/* One SAP step: the box's two lowest vertices touch a rigid plane through z = z0 with normal nrm
 * (pair A = plane, B = vertex: v_c = R_WC^T v_B). Full: one dense clique of all free DoFs. Reduced:
 * the Schur complement on the 6 contact DoFs with v*_P, then the recovery. The Delassus estimate
 * of SAP uses diag of the clique matrix (§2.1), which differs between S and A; the full problem's
 * sigma and beta are scaled by w_S / w_A (sqrt for beta) so both have the same R, hence the same
 * optimum. */
static void sap_equivalence(double mu, double* out_err_v, double* out_err_g) {
  const double dt = 0.01;
  kn_fem_body* b = make_body(dt);
  const cholmod_sparse* A = (const cholmod_sparse*)kn_fem_body_dynamics_matrix(b);
  int n = (int)A->nrow, vv[2];
  lowest_two(b, vv);
  if (b->free_index[vv[0]] > b->free_index[vv[1]]) { int t = vv[0]; vv[0] = vv[1]; vv[1] = t; }
  int P[6], np = 6;
  for (int k = 0; k < 2; k++)
    for (int c = 0; c < 3; c++) P[3 * k + c] = 3 * b->free_index[vv[k]] + c;
  double* Af = dense_of(A);
  double* vs = malloc((size_t)n * sizeof(double));
  for (int i = 0; i < b->mesh.nvert; i++)
    if (b->free_index[i] >= 0) memcpy(vs + 3 * b->free_index[i], b->v_star + 3 * i, 3 * sizeof(double));
  double S[36], vsP[6];
  for (int k = 0; k < np; k++) vsP[k] = vs[P[k]];
  kn_fem_schur* sc = kn_fem_schur_create();
  kn_error err;
  cr_assert_eq(kn_fem_schur_complement(sc, (const struct cholmod_sparse_struct*)A, P, np, S, &err), KN_OK, "%s", err.msg);

  const double nrm[3] = {sin(0.2), 0, cos(0.2)};
  double R[9];
  frame(nrm, R);
  double zlow = b->x[3 * vv[0] + 2];
  kn_sap_contact_params par[2];
  for (int c = 0; c < 2; c++) {
    par[c] = kn_sap_contact_params_default();
    par[c].mu = mu;
    par[c].stiffness = 1e4;
    par[c].dissipation_time = 0.05;
    /* plane through (0, 0, zlow + 2 mm): phi = n . (x - p0) */
    const double* x = b->x + 3 * vv[c];
    par[c].phi0 = nrm[0] * x[0] + nrm[2] * (x[2] - zlow - 0.002);
  }
  double* Jf = calloc(3 * (size_t)n, sizeof(double));
  double Jp[18];
  kn_sap_problem *pr = kn_sap_problem_create(dt), *pf = kn_sap_problem_create(dt);
  cr_assert_eq(kn_sap_add_clique(pr, np, S, vsP, NULL, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_sap_add_clique(pf, n, Af, vs, NULL, &err), KN_OK, "%s", err.msg);
  double wr[2];
  for (int c = 0; c < 2; c++) {
    memset(Jp, 0, sizeof Jp);
    for (int r = 0; r < 3; r++)
      for (int a = 0; a < 3; a++) Jp[r * np + 3 * c + a] = R[3 * a + r];
    cr_assert_eq(kn_sap_add_contact(pr, 0, Jp, -1, NULL, &par[c], NULL, &err), KN_OK, "%s", err.msg);
    double Rr[3], vh[3];
    cr_assert_eq(kn_sap_constraint_regularization(pr, c, &wr[c], Rr, vh, &err), KN_OK);
  }
  /* the full problem's w, then its parameters scaled to the reduced R */
  kn_sap_problem* probe = kn_sap_problem_create(dt);
  cr_assert_eq(kn_sap_add_clique(probe, n, Af, vs, NULL, &err), KN_OK);
  for (int c = 0; c < 2; c++) {
    memset(Jf, 0, 3 * (size_t)n * sizeof(double));
    for (int r = 0; r < 3; r++)
      for (int a = 0; a < 3; a++) Jf[r * n + P[3 * c + a]] = R[3 * a + r];
    cr_assert_eq(kn_sap_add_contact(probe, 0, Jf, -1, NULL, &par[c], NULL, &err), KN_OK);
    double wf, Rr[3], vh[3];
    cr_assert_eq(kn_sap_constraint_regularization(probe, c, &wf, Rr, vh, &err), KN_OK);
    kn_sap_contact_params q = par[c];
    q.sigma *= wr[c] / wf;
    q.beta *= sqrt(wr[c] / wf);
    cr_assert_eq(kn_sap_add_contact(pf, 0, Jf, -1, NULL, &q, NULL, &err), KN_OK, "%s", err.msg);
    double Rf[3], Rrr[3], w1, w2;
    cr_assert_eq(kn_sap_constraint_regularization(pf, c, &w1, Rf, vh, &err), KN_OK);
    cr_assert_eq(kn_sap_constraint_regularization(pr, c, &w2, Rrr, vh, &err), KN_OK);
    for (int k = 0; k < 3; k++) cr_assert_lt(fabs(Rf[k] - Rrr[k]), 1e-13 * Rrr[k], "R[%d] %g vs %g", k, Rf[k], Rrr[k]);
  }
  kn_sap_problem_free(probe);
  kn_sap_options o = kn_sap_options_default();
  o.rel_tolerance = 1e-13;
  o.abs_tolerance = 1e-16;
  o.linear_solver = KN_SAP_LINEAR_DENSE;
  kn_sap_solver* sol = kn_sap_solver_create();
  double *vf = malloc((size_t)n * sizeof(double)), gf[6], gr[6], vr[6], dvP[6];
  double* dv = malloc((size_t)n * sizeof(double));
  kn_sap_stats st1, st2;
  cr_assert_eq(kn_sap_solve(sol, pf, &o, NULL, vf, gf, &st1, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_sap_solve(sol, pr, &o, NULL, vr, gr, &st2, &err), KN_OK, "%s", err.msg);
  for (int k = 0; k < np; k++) dvP[k] = vr[k] - vsP[k];
  kn_fem_schur_recover(sc, dvP, dv);
  double ev = 0, eg = 0, gmax = 0, dvmax = 0;
  for (int i = 0; i < n; i++) ev = fmax(ev, fabs(vs[i] + dv[i] - vf[i])), dvmax = fmax(dvmax, fabs(dv[i]));
  for (int k = 0; k < 6; k++) eg = fmax(eg, fabs(gf[k] - gr[k])), gmax = fmax(gmax, fabs(gf[k]));
  printf("SAP mu %.2f: full (n %d, %d it) vs Schur (|P| %d, %d it): |dv| %.3g m/s, v error %.2e m/s, "
         "gamma %.3g N s, error %.2e\n", mu, n, st1.iterations, np, st2.iterations, dvmax, ev, gmax, eg);
  cr_assert_gt(gf[2], 0, "the first contact must push");
  cr_assert_gt(dvmax, 1e-3, "contact must change the motion");
  *out_err_v = ev;
  *out_err_g = eg / gmax;
  kn_sap_solver_free(sol);
  kn_sap_problem_free(pr);
  kn_sap_problem_free(pf);
  kn_fem_schur_free(sc);
  free(Af), free(vs), free(Jf), free(vf), free(dv);
  kn_fem_body_free(b);
}

Test(schur, sap_with_elimination_equals_full_clique) {
  const double mus[3] = {0.0, 0.3, 2.0};
  for (int k = 0; k < 3; k++) {
    double ev, eg;
    sap_equivalence(mus[k], &ev, &eg);
    cr_assert_lt(ev, 1e-10, "mu %g: v differs by %g", mus[k], ev);
    cr_assert_lt(eg, 1e-10, "mu %g: gamma differs by %g relative", mus[k], eg);
  }
}

/* a 0.1 m box with h 0.0125 (729 vertices, 2187 DoFs) of `model`, tilted and moving, after one free
 * motion; P = the DoFs of the 81 vertices of its lowest face (|P| = 243: LAPACK's inverse and a
 * many-supernode elimination tree) */
static kn_fem_body* make_big_body(kn_fem_model model, int** P_out, int* np_out) {
  kn_tet_mesh m;
  kn_error err;
  cr_assert_eq(kn_tet_mesh_box(0.1, 0.1, 0.1, 0.0125, &m, &err), KN_OK, "%s", err.msg);
  kn_fem_material mat = kn_fem_material_default();
  mat.model = model, mat.youngs_modulus = 1e5, mat.poisson_ratio = 0.4, mat.density = 1e3;
  kn_fem_body* b;
  cr_assert_eq(kn_fem_body_create(&m, &mat, "big box", &b, &err), KN_OK, "%s", err.msg);
  kn_tet_mesh_free(&m);
  kn_pose X;
  const double xyz[3] = {0, 0, 0.05}, rpy[3] = {0.2, -0.1, 0.3};
  kn_pose_from_xyz_rpy(xyz, rpy, &X);
  kn_fem_body_place(b, &X);
  /* a shearing initial velocity so that the nonlinear models need several Newton iterations */
  for (int i = 0; i < b->mesh.nvert; i++)
    b->v[3 * i] = 0.4 + 20 * b->x[3 * i + 2], b->v[3 * i + 2] = -0.3 + 5 * b->x[3 * i + 1];
  cr_assert_eq(kn_fem_free_motion(b, 0.01, NULL, &err), KN_OK, "%s", err.msg);
  int* P = malloc(3 * (size_t)b->mesh.nvert * sizeof(int)), np = 0;
  for (int i = 0; i < b->mesh.nvert; i++)
    if (b->mesh.X[3 * i + 2] < -0.05 + 1e-9)
      for (int c = 0; c < 3; c++) P[np++] = 3 * b->free_index[i] + c;
  cr_assert_eq(np, 243);
  *P_out = P, *np_out = np;
  return b;
}

static double max_abs(const double* a, size_t n) {
  double m = 0;
  for (size_t k = 0; k < n; k++) m = fmax(m, fabs(a[k]));
  return m;
}

/* The supernodal path (sparse forward solves over elimination-tree paths, with the free motion's
 * own factor) against the general path (dense solves of A with a simplicial L D L^T factor made
 * here, an independent factorization), and the recovery against its definition A Dv = E_P S Dv_P
 * (N rows of A Dv vanish), for a quadratic model (factor reused) and a nonlinear one (refactorized
 * at v*: a stale factor of Newton's previous iterate would differ at ~1e-4 relative). */
static void big_body_case(kn_fem_model model) {
  int *P, np;
  kn_fem_body* b = make_big_body(model, &P, &np);
  const cholmod_sparse* A = (const cholmod_sparse*)kn_fem_body_dynamics_matrix(b);
  int n = (int)A->nrow;
  kn_error err;
  const struct cholmod_factor_struct* Lb;
  cr_assert_eq(kn_fem_body_dynamics_factor(b, &Lb, &err), KN_OK, "%s", err.msg);
  cr_assert(((const cholmod_factor*)Lb)->is_super && ((const cholmod_factor*)Lb)->is_ll, "supernodal L L^T expected");
  cr_assert_gt((int)((const cholmod_factor*)Lb)->nsuper, 10);
  double *S1 = malloc((size_t)np * np * sizeof(double)), *S2 = malloc((size_t)np * np * sizeof(double));
  kn_fem_schur* s1 = kn_fem_schur_create();
  cr_assert_eq(kn_fem_schur_complement_factored(s1, NULL, Lb, P, np, S1, &err), KN_OK, "%s", err.msg);
  /* reference: simplicial LDL^T of A in its own CHOLMOD workspace => the dense-solve path */
  cholmod_common cc;
  cholmod_start(&cc);
  cc.supernodal = CHOLMOD_SIMPLICIAL;
  cholmod_factor* Ls = cholmod_analyze((cholmod_sparse*)A, &cc);
  cr_assert(Ls && cholmod_factorize((cholmod_sparse*)A, Ls, &cc) && cc.status == CHOLMOD_OK);
  cr_assert(!Ls->is_super && !Ls->is_ll);
  kn_fem_schur* s2 = kn_fem_schur_create();
  cr_assert_eq(kn_fem_schur_complement_factored(s2, NULL, (const struct cholmod_factor_struct*)Ls, P, np, S2, &err), KN_OK,
               "%s", err.msg);
  double worst = 0, scale = max_abs(S2, (size_t)np * np);
  for (size_t k = 0; k < (size_t)np * np; k++) worst = fmax(worst, fabs(S1[k] - S2[k]));
  /* recovery: Dv with Dv_P given; A Dv must be 0 on N and equal S Dv_P on P */
  double *dvP = malloc((size_t)np * sizeof(double)), *dv = malloc((size_t)n * sizeof(double));
  double *Adv = calloc((size_t)n, sizeof(double)), *dv2 = malloc((size_t)n * sizeof(double));
  for (int k = 0; k < np; k++) dvP[k] = 0.1 * sin(0.7 * k + 0.3);
  kn_fem_schur_recover(s1, dvP, dv);
  kn_fem_schur_recover(s2, dvP, dv2);
  const int *Ap = A->p, *Ai = A->i;
  const double* Ax = A->x;
  for (int j = 0; j < n; j++)
    for (int k = Ap[j]; k < Ap[j + 1]; k++) {
      Adv[Ai[k]] += Ax[k] * dv[j];
      if (Ai[k] != j) Adv[j] += Ax[k] * dv[Ai[k]];
    }
  double rN = 0, rP = 0, dr = 0, fscale = 0;
  char* inP = calloc((size_t)n, 1);
  for (int k = 0; k < np; k++) {
    inP[P[k]] = 1;
    double SdvP = 0;
    for (int c = 0; c < np; c++) SdvP += S1[(size_t)k * np + c] * dvP[c];
    rP = fmax(rP, fabs(Adv[P[k]] - SdvP)), fscale = fmax(fscale, fabs(SdvP));
    cr_assert_eq(dv[P[k]], dvP[k]);
  }
  for (int i = 0; i < n; i++) {
    if (!inP[i]) rN = fmax(rN, fabs(Adv[i]));
    dr = fmax(dr, fabs(dv[i] - dv2[i]));
  }
  printf("schur %s: n %d, |P| %d, %d supernodes: |S_supernodal - S_dense-solves| %.2e (max |S| %.3g); "
         "recovery: |(A dv)_N| %.2e, |(A dv)_P - S dv_P| %.2e (max %.3g), paths differ by %.2e m/s\n",
         model == KN_FEM_LINEAR_COROTATED ? "linear corotated" : "corotated", n, np,
         (int)((const cholmod_factor*)Lb)->nsuper, worst, scale, rN, rP, fscale, dr);
  cr_assert_lt(worst, 1e-10 * scale);
  cr_assert_lt(rN, 1e-10 * fscale);
  cr_assert_lt(rP, 1e-10 * fscale);
  cr_assert_lt(dr, 1e-12);
  cholmod_free_factor(&Ls, &cc);
  cholmod_finish(&cc);
  kn_fem_schur_free(s1), kn_fem_schur_free(s2);
  free(S1), free(S2), free(dvP), free(dv), free(Adv), free(dv2), free(inP), free(P);
  kn_fem_body_free(b);
}

Test(schur, reuses_the_free_motion_factor_linear_corotated) { big_body_case(KN_FEM_LINEAR_COROTATED); }
Test(schur, refactorizes_at_v_star_corotated) { big_body_case(KN_FEM_COROTATED); }
