/* sap/: the solver as a whole — dense (LAPACKE) and CHOLMOD paths agree to 1e-10 on multi-clique
 * problems with every constraint kind; the symbolic analysis is reused while the coupling
 * pattern holds; non-participating cliques keep v*; failures name the worst constraint and leave
 * the caller's buffers untouched; invalid input is rejected. */
#include <stdlib.h>
#include <string.h>

#include "sap/sap.h"
#include "sap_test_util.h"

static double urand(void) { return rand() / (double)RAND_MAX; }

/* random SPD A = B B^T + n I (row-major n x n) and v* */
static int add_random_clique(kn_sap_problem* p, int n) {
  double* B = calloc((size_t)(n * n), sizeof(double));
  double* A = calloc((size_t)(n * n), sizeof(double));
  double* vs = calloc((size_t)n, sizeof(double));
  for (int k = 0; k < n * n; k++) B[k] = urand() - 0.5;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = (i == j) ? 0.5 * n : 0;
      for (int k = 0; k < n; k++) s += B[i * n + k] * B[j * n + k];
      A[i * n + j] = s;
    }
  for (int i = 0; i < n; i++) vs[i] = 0.4 * (urand() - 0.5);
  int index = -1;
  kn_error err = {0};
  cr_assert_eq(kn_sap_add_clique(p, n, A, vs, &index, &err), KN_OK, "%s", err.msg);
  free(B);
  free(A);
  free(vs);
  return index;
}

static void add_random_contact(kn_sap_problem* p, int a, int na, int b, int nb) {
  double Ja[3 * 16], Jb[3 * 16];
  for (int k = 0; k < 3 * na; k++) Ja[k] = urand() - 0.5;
  for (int k = 0; k < 3 * nb; k++) Jb[k] = urand() - 0.5;
  kn_sap_contact_params c = kn_sap_contact_params_default();
  c.phi0 = -2e-3 * urand() + 5e-4;
  c.mu = 0.2 + 0.8 * urand();
  c.stiffness = pow(10, 3 + 3 * urand());
  c.dissipation_time = 0.05 * urand();
  kn_error err = {0};
  cr_assert_eq(kn_sap_add_contact(p, a, Ja, b, b >= 0 ? Jb : NULL, &c, NULL, &err), KN_OK, "%s", err.msg);
}

/* 6 cliques (the last one free of constraints), contacts between pairs and to the world, a joint
 * limit, a PD controller with effort limit, couplers within and across cliques */
static kn_sap_problem* mixed_problem(unsigned seed) {
  srand(seed);
  kn_sap_problem* p = kn_sap_problem_create(0.01);
  const int sizes[6] = {3, 5, 2, 6, 4, 3};
  for (int c = 0; c < 6; c++) add_random_clique(p, sizes[c]);
  add_random_contact(p, 0, 3, 1, 5);
  add_random_contact(p, 1, 5, 2, 2);
  add_random_contact(p, 3, 6, 4, 4);
  add_random_contact(p, 0, 3, 3, 6);
  add_random_contact(p, 2, 2, 0, 3);
  add_random_contact(p, 4, 4, -1, 0);
  add_random_contact(p, 1, 5, -1, 0);
  add_random_contact(p, 1, 5, -1, 0);
  kn_error err = {0};
  cr_assert_eq(kn_sap_add_limit(p, 2, 1, 0.4995, -0.5, 0.5, NULL, NULL, &err), KN_OK, "%s", err.msg);
  kn_sap_pd_params pd = {.kp = 50, .kd = 5, .q0 = 0.1, .qd = 0.3, .vd = 0, .u_ff = 1, .effort_limit = 3};
  cr_assert_eq(kn_sap_add_pd(p, 4, 0, &pd, NULL, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_sap_add_coupler(p, 1, 0, 0.2, 3, 2, 0.1, 1.5, 0.01, NULL, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_sap_add_coupler(p, 0, 0, 0.1, 0, 2, 0.2, -0.5, 0.0, NULL, &err), KN_OK, "%s", err.msg);
  return p;
}

typedef struct {
  double v[256], gamma[512];
  kn_sap_stats st;
} solution;

static solution solve_with(kn_sap_solver* s, const kn_sap_problem* p, kn_sap_linear_solver which) {
  solution r;
  kn_sap_options o = kn_sap_options_default();
  o.linear_solver = which;
  kn_error err = {0};
  double guess[256] = {0};
  cr_assert_eq(kn_sap_solve(s, p, &o, guess, r.v, r.gamma, &r.st, &err), KN_OK, "%s", err.msg);
  return r;
}

static double max_diff(const double* a, const double* b, int n) {
  double d = 0;
  for (int k = 0; k < n; k++) d = fmax(d, fabs(a[k] - b[k]));
  return d;
}

Test(sap_solver, dense_and_cholmod_agree_on_mixed_problem) {
  kn_sap_problem* p = mixed_problem(3);
  kn_sap_solver* s = kn_sap_solver_create();
  solution d = solve_with(s, p, KN_SAP_LINEAR_DENSE);
  solution c = solve_with(s, p, KN_SAP_LINEAR_SPARSE);
  int nv = kn_sap_problem_nv(p), ni = kn_sap_problem_num_impulses(p);
  cr_expect(!d.st.used_sparse && c.st.used_sparse);
  cr_expect_eq(d.st.num_participating_cliques, 5);
  cr_expect_eq(d.st.nv_participating, nv - 3);
  double dv = max_diff(d.v, c.v, nv), dg = max_diff(d.gamma, c.gamma, ni), gmax = 0;
  for (int k = 0; k < ni; k++) gmax = fmax(gmax, fabs(d.gamma[k]));
  fprintf(stderr, "dense vs CHOLMOD (nv %d, %d constraints, %d impulses): iterations %d / %d, max |dv| %.2e, max "
          "|dgamma| %.2e (max |gamma| %.3g)\n",
          nv, kn_sap_problem_num_constraints(p), ni, d.st.iterations, c.st.iterations, dv, dg, gmax);
  cr_expect(dv <= 1e-10);
  cr_expect(dg <= 1e-10 * fmax(1, gmax));
  cr_expect(d.st.optimality_reached && c.st.optimality_reached);
  /* clique 5 has no constraints: it does not participate (its v = v* is checked below) */
  int o5 = kn_sap_clique_offset(p, 5);
  cr_expect_eq(kn_sap_problem_num_cliques(p), 6);
  cr_expect_eq(o5, nv - 3);
  kn_error err = {0};
  /* the reported impulses are those of the returned v: recompute gamma_i with kn_sap_constraint_eval */
  for (int i = 0; i < kn_sap_problem_num_constraints(p); i++) {
    double g[3], cost;
    cr_assert_eq(kn_sap_constraint_eval(p, i, d.v, &cost, g, NULL, &err), KN_OK);
    for (int r = 0; r < kn_sap_constraint_rows(p, i); r++)
      cr_expect(fabs(g[r] - d.gamma[kn_sap_constraint_offset(p, i) + r]) <= 1e-14 * fmax(1, fabs(g[r])));
  }
  /* rerun with the same solver: bitwise identical */
  solution again = solve_with(s, p, KN_SAP_LINEAR_SPARSE);
  cr_expect(memcmp(again.v, c.v, sizeof(double) * (size_t)nv) == 0, "deterministic");
  kn_sap_solver_free(s);
  kn_sap_problem_free(p);
}

/* v* of the free clique comes back unchanged */
Test(sap_solver, non_participating_clique_keeps_v_star) {
  kn_sap_problem* p = kn_sap_problem_create(0.01);
  srand(11);
  add_random_clique(p, 3);
  const double A[4] = {2, 0.5, 0.5, 1}, vs[2] = {0.123, -0.456};
  kn_error err = {0};
  cr_assert_eq(kn_sap_add_clique(p, 2, A, vs, NULL, &err), KN_OK);
  add_random_contact(p, 0, 3, -1, 0);
  kn_sap_solver* s = kn_sap_solver_create();
  double v[5], guess[5] = {1, 2, 3, 4, 5};
  cr_assert_eq(kn_sap_solve(s, p, NULL, guess, v, NULL, NULL, &err), KN_OK, "%s", err.msg);
  cr_expect(v[3] == vs[0] && v[4] == vs[1]);
  kn_sap_solver_free(s);
  kn_sap_problem_free(p);
}

/* a chain of 20 cliques of 4 DoFs (nv 80 > 64): AUTO picks CHOLMOD, same answer as dense, and the
 * symbolic analysis is reused on the next solve with the same coupling pattern */
static kn_sap_problem* chain(unsigned seed, int extra_coupling) {
  srand(seed);
  kn_sap_problem* p = kn_sap_problem_create(0.01);
  for (int c = 0; c < 20; c++) add_random_clique(p, 4);
  for (int c = 0; c < 20; c++) {
    add_random_contact(p, c, 4, -1, 0);
    if (c + 1 < 20) add_random_contact(p, c, 4, c + 1, 4);
  }
  if (extra_coupling) add_random_contact(p, 0, 4, 19, 4);
  return p;
}

Test(sap_solver, chain_auto_uses_cholmod_and_reuses_analysis) {
  kn_sap_solver* s = kn_sap_solver_create();
  kn_sap_solver* sd = kn_sap_solver_create();
  kn_sap_problem* p = chain(5, 0);
  solution a = solve_with(s, p, KN_SAP_LINEAR_AUTO);
  solution d = solve_with(sd, p, KN_SAP_LINEAR_DENSE);
  cr_expect(a.st.used_sparse, "nv 80 > 64 goes to CHOLMOD under AUTO");
  cr_expect_eq(a.st.symbolic_analyses, 1);
  double dv = max_diff(a.v, d.v, 80), dg = max_diff(a.gamma, d.gamma, kn_sap_problem_num_impulses(p));
  fprintf(stderr, "chain nv 80: AUTO(CHOLMOD) vs dense max |dv| %.2e max |dgamma| %.2e, %d iterations, %d "
          "factorizations\n",
          dv, dg, a.st.iterations, a.st.factorizations);
  cr_expect(dv <= 1e-10 && dg <= 1e-10);
  kn_sap_problem_free(p);
  /* same pattern, new numbers: no new analysis */
  p = chain(6, 0);
  a = solve_with(s, p, KN_SAP_LINEAR_AUTO);
  cr_expect_eq(a.st.symbolic_analyses, 0, "pattern unchanged: analysis reused");
  kn_sap_problem_free(p);
  /* a new coupled pair changes the pattern: analysed again */
  p = chain(6, 1);
  a = solve_with(s, p, KN_SAP_LINEAR_AUTO);
  d = solve_with(sd, p, KN_SAP_LINEAR_DENSE);
  cr_expect_eq(a.st.symbolic_analyses, 1, "pattern changed: analysed again");
  cr_expect(max_diff(a.v, d.v, 80) <= 1e-10);
  kn_sap_problem_free(p);
  kn_sap_solver_free(s);
  kn_sap_solver_free(sd);
}

/* a hard problem: the pizza saver translating and spinning (sliding with slip directions that
 * turn during the solve; stiff, near-rigid contacts) next to a PD controller on a separate 1-DoF
 * clique that comes first (index 0). It needs 11 Newton iterations; with max_iterations = 1 the
 * solve fails with KN_ERR_NUMERIC naming a contact. */
Test(sap_solver, non_convergence_names_worst_constraint) {
  const double M[16] = {3, 0, 0, 0, 0, 3, 0, 0, 0, 0, 3, 0, 0, 0, 0, 6.75};
  const double vstar[4] = {0.3, -0.2, -0.1, 0.3}, I1 = 2, vs1 = 0;
  kn_sap_problem* p = kn_sap_problem_create(0.01);
  kn_error err = {0};
  cr_assert_eq(kn_sap_add_clique(p, 1, &I1, &vs1, NULL, &err), KN_OK);
  cr_assert_eq(kn_sap_add_clique(p, 4, M, vstar, NULL, &err), KN_OK);
  kn_sap_pd_params pd = {.kp = 100, .kd = 10, .qd = 1, .effort_limit = INFINITY};
  cr_assert_eq(kn_sap_add_pd(p, 0, 0, &pd, NULL, &err), KN_OK);
  for (int i = 0; i < 3; i++) {
    double th = M_PI / 5 + 2 * M_PI * i / 3, px = 1.5 * cos(th), py = 1.5 * sin(th);
    double J[12] = {1, 0, 0, -py, 0, 1, 0, px, 0, 0, 1, 0};
    kn_sap_contact_params c = {.phi0 = -1e-3, .mu = 2.0 / 3, .stiffness = 1e8, .dissipation_time = 0.01,
                               .beta = 1e-3, .sigma = 1e-3};
    cr_assert_eq(kn_sap_add_contact(p, 1, J, -1, NULL, &c, NULL, &err), KN_OK);
  }
  kn_sap_options o = kn_sap_options_default();
  o.max_iterations = 1;
  double guess[5] = {0, 1, 2, 3, 4};
  double v[5], gamma[10];
  for (int k = 0; k < 5; k++) v[k] = -777;
  for (int k = 0; k < 10; k++) gamma[k] = -777;
  kn_sap_solver* s = kn_sap_solver_create();
  kn_sap_stats st;
  kn_status status = kn_sap_solve(s, p, &o, guess, v, gamma, &st, &err);
  fprintf(stderr, "non-convergence: %s: %s\n", kn_status_name(status), err.msg);
  cr_expect_eq(status, KN_ERR_NUMERIC);
  cr_expect_eq(err.status, KN_ERR_NUMERIC);
  cr_expect(strstr(err.msg, "did not converge in 1 iterations") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "friction cone contact") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, "#1") || strstr(err.msg, "#2") || strstr(err.msg, "#3"), "%s", err.msg);
  for (int k = 0; k < 5; k++) cr_expect_eq(v[k], -777, "v untouched on failure");
  for (int k = 0; k < 10; k++) cr_expect_eq(gamma[k], -777, "gamma untouched on failure");
  cr_expect_eq(guess[1], 1.0);
  cr_expect_eq(st.iterations, 1);
  /* the same solver and problem converge with the default budget */
  cr_assert_eq(kn_sap_solve(s, p, NULL, guess, v, gamma, &st, &err), KN_OK, "%s", err.msg);
  fprintf(stderr, "  with the default budget: converged in %d iterations\n", st.iterations);
  cr_expect(st.iterations >= 5, "the problem is hard: %d iterations", st.iterations);
  kn_sap_solver_free(s);
  kn_sap_problem_free(p);
}

Test(sap_solver, invalid_input_is_rejected) {
  kn_sap_problem* p = kn_sap_problem_create(0.01);
  kn_error err = {0};
  const double Abad[4] = {1, 0.5, 0.4, 1}, vs[2] = {0, 0}, Aneg[4] = {-1, 0, 0, 1};
  cr_expect_eq(kn_sap_add_clique(p, 2, Abad, vs, NULL, &err), KN_ERR_INVALID);
  cr_expect(strstr(err.msg, "symmetric") != NULL, "%s", err.msg);
  cr_expect_eq(kn_sap_add_clique(p, 2, Aneg, vs, NULL, &err), KN_ERR_INVALID);
  const double A[4] = {1, 0, 0, 1}, J[6] = {1, 0, 0, 1, 0, 0};
  cr_assert_eq(kn_sap_add_clique(p, 2, A, vs, NULL, &err), KN_OK);
  kn_sap_contact_params c = kn_sap_contact_params_default();
  c.mu = -1;
  cr_expect_eq(kn_sap_add_contact(p, 0, J, -1, NULL, &c, NULL, &err), KN_ERR_INVALID);
  c = kn_sap_contact_params_default();
  cr_expect_eq(kn_sap_add_contact(p, 1, J, -1, NULL, &c, NULL, &err), KN_ERR_INVALID, "clique out of range");
  cr_expect_eq(kn_sap_add_contact(p, 0, J, 0, J, &c, NULL, &err), KN_ERR_INVALID, "same clique twice");
  cr_expect_eq(kn_sap_add_limit(p, 0, 2, 0, -1, 1, NULL, NULL, &err), KN_ERR_INVALID, "dof out of range");
  cr_expect_eq(kn_sap_add_limit(p, 0, 0, 0, -INFINITY, INFINITY, NULL, NULL, &err), KN_ERR_INVALID);
  kn_sap_pd_params pd = {.kp = 0, .kd = 0, .effort_limit = 1};
  cr_expect_eq(kn_sap_add_pd(p, 0, 0, &pd, NULL, &err), KN_ERR_INVALID, "Kp = Kd = 0");
  cr_expect_eq(kn_sap_add_coupler(p, 0, 1, 0, 0, 1, 0, 1, 0, NULL, &err), KN_ERR_INVALID, "self coupling");
  cr_expect_eq(kn_sap_problem_num_constraints(p), 0);
  kn_sap_problem_free(p);
}
