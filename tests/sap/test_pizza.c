/* sap/: the "pizza saver" (digest §9 T6 (a)-(g), a port of the scenario in Drake's
 * sap_solver_test.cc) and solver behaviour (T16). A rigid equilateral triangle of three contact
 * points at radius 1.5 m on the ground, q = (x, y, z, theta), M = diag(3, 3, 3, 6.75), g = 10,
 * dt = 0.01, phi0 = z, guess (1, 2, 3, 4) every step. Expected values from the digest and
 * sap-convex-contact.ref.py. */
#include <string.h>

#include "sap/sap.h"
#include "sap_test_util.h"

#define DT 0.01
#define MASS 3.0
#define RAD 1.5
#define GRAV 10.0

typedef struct {
  double mu, k, tau_d, beta, Mz, fx;
  int steps;
  kn_sap_options opt;
  double q0[4], v0[4]; /* initial state */
  double guess[4];
  int use_state_guess; /* guess = current v instead of (1, 2, 3, 4) */
} pizza_setup;

typedef struct {
  kn_status status;
  char msg[KN_ERROR_MSG];
  double q[4], v[4], gamma[9], vc[9], j[4];
  int max_iterations, all_optimality, all_cost, total_iterations;
  kn_sap_stats last;
  /* T16 monitor records */
  int nonincreasing_violations, ls_violations, monitored;
  double worst_ls_ratio;
} pizza_result;

static pizza_setup setup_default(void) {
  pizza_setup s = {.mu = 2.0 / 3.0, .k = 1e4, .tau_d = 0.02, .beta = 1, .Mz = 20, .fx = 0, .steps = 40};
  s.opt = kn_sap_options_default();
  s.q0[3] = M_PI / 5;
  double g[4] = {1, 2, 3, 4};
  memcpy(s.guess, g, sizeof g);
  return s;
}

/* T16: l non-increasing within relative_slop; exact line search |l'(alpha)| / |l'(0)| < 1e-8, or
 * alpha = alpha_max with l'(alpha_max) <= 0 */
static void monitor(void* user, const kn_sap_iteration* it) {
  pizza_result* r = user;
  r->monitored++;
  double slop = 1000 * 2.220446049250313e-16 * fmax(1.0, 0.5 * (fabs(it->cost) + fabs(it->cost_prev)));
  if (it->cost > it->cost_prev + slop) r->nonincreasing_violations++;
  double ratio = fabs(it->dl_alpha) / fabs(it->dl0);
  int at_max = it->alpha == 1.5 && it->dl_alpha <= 0;
  if (!at_max) {
    if (ratio > r->worst_ls_ratio) r->worst_ls_ratio = ratio;
    if (!(ratio < 1e-8)) r->ls_violations++;
  }
}

/* builds the problem of the current state (q, v) and solves it */
static kn_status pizza_step(const pizza_setup* s, kn_sap_solver* solver, const double q[4], const double v[4],
                            double vnext[4], double gamma[9], double vc[9], double j[4], kn_sap_stats* st,
                            const kn_sap_options* opt, kn_error* err) {
  const double M[16] = {MASS, 0, 0, 0, 0, MASS, 0, 0, 0, 0, MASS, 0, 0, 0, 0, MASS * RAD * RAD};
  const double tau[4] = {s->fx, 0, -MASS * GRAV, s->Mz};
  double vstar[4];
  for (int k = 0; k < 4; k++) vstar[k] = v[k] + DT * tau[k] / M[5 * k];
  kn_sap_problem* p = kn_sap_problem_create(DT);
  cr_assert_eq(kn_sap_add_clique(p, 4, M, vstar, NULL, err), KN_OK);
  double c = cos(q[3]), sn = sin(q[3]);
  const double pts[3][2] = {{-RAD * sqrt(3) / 2, -0.5 * RAD}, {RAD * sqrt(3) / 2, -0.5 * RAD}, {0, RAD}};
  double Js[3][12];
  for (int i = 0; i < 3; i++) {
    /* R_WB as in the reference script, p_W = R_WB p_B */
    double px = c * pts[i][0] + sn * pts[i][1], py = -sn * pts[i][0] + c * pts[i][1];
    double J[12] = {1, 0, 0, -py, 0, 1, 0, px, 0, 0, 1, 0};
    memcpy(Js[i], J, sizeof J);
    kn_sap_contact_params cp = {.phi0 = q[2], .mu = s->mu, .stiffness = s->k, .dissipation_time = s->tau_d,
                                .beta = s->beta, .sigma = 1e-3};
    cr_assert_eq(kn_sap_add_contact(p, 0, J, -1, NULL, &cp, NULL, err), KN_OK, "%s", err->msg);
  }
  const double* guess = s->use_state_guess ? v : s->guess;
  kn_status status = kn_sap_solve(solver, p, opt, guess, vnext, gamma, st, err);
  if (status == KN_OK) {
    for (int i = 0; i < 3; i++)
      for (int r = 0; r < 3; r++) {
        vc[3 * i + r] = 0;
        for (int t = 0; t < 4; t++) vc[3 * i + r] += Js[i][4 * r + t] * vnext[t];
      }
    for (int t = 0; t < 4; t++) {
      j[t] = 0;
      for (int i = 0; i < 3; i++)
        for (int r = 0; r < 3; r++) j[t] += Js[i][4 * r + t] * gamma[3 * i + r];
    }
  }
  kn_sap_problem_free(p);
  return status;
}

static pizza_result run(const pizza_setup* s) {
  pizza_result r;
  memset(&r, 0, sizeof r);
  r.all_optimality = r.all_cost = 1;
  memcpy(r.q, s->q0, sizeof r.q);
  memcpy(r.v, s->v0, sizeof r.v);
  kn_sap_options opt = s->opt;
  opt.monitor = monitor;
  opt.monitor_user = &r;
  kn_sap_solver* solver = kn_sap_solver_create();
  kn_error err = {0};
  for (int step = 0; step < s->steps; step++) {
    double vn[4];
    kn_sap_stats st;
    r.status = pizza_step(s, solver, r.q, r.v, vn, r.gamma, r.vc, r.j, &st, &opt, &err);
    r.last = st;
    if (r.status) {
      memcpy(r.msg, err.msg, sizeof r.msg);
      break;
    }
    memcpy(r.v, vn, sizeof vn);
    for (int t = 0; t < 4; t++) r.q[t] += DT * r.v[t];
    if (st.iterations > r.max_iterations) r.max_iterations = st.iterations;
    r.total_iterations += st.iterations;
    r.all_optimality &= st.optimality_reached;
    r.all_cost &= st.cost_reached;
  }
  kn_sap_solver_free(solver);
  return r;
}

/* the stiction expectations of T6 (a), shared with (b) and (e) */
static void expect_stiction(const pizza_result* r, double vtol, double rel) {
  EXPECT_ABS("v_x", r->v[0], 0, vtol);
  EXPECT_ABS("v_y", r->v[1], 0, vtol);
  EXPECT_ABS("v_z", r->v[2], 0, vtol);
  const double je[4] = {0, 0, DT * MASS * GRAV, -DT * 20};
  double e = 0, n = 0;
  for (int t = 0; t < 4; t++) e += (r->j[t] - je[t]) * (r->j[t] - je[t]), n += je[t] * je[t];
  EXPECT_ABS("|j - dt (0,0,30,-20)|/|j|", sqrt(e / n), 0, rel);
  for (int i = 0; i < 3; i++) {
    EXPECT_REL("gamma_n", r->gamma[3 * i + 2], 0.1, rel);
    EXPECT_REL("|gamma_t| = dt Mz / (3 R)", hypot(r->gamma[3 * i], r->gamma[3 * i + 1]), DT * 20 / (3 * RAD), rel);
  }
}

Test(sap_T6, a_stiction) {
  pizza_setup s = setup_default();
  pizza_result r = run(&s);
  cr_assert_eq(r.status, KN_OK, "%s", r.msg);
  fprintf(stderr, "T6a stiction: max Newton iterations per step %d (total %d over 40 steps), v_theta %.4g\n",
          r.max_iterations, r.total_iterations, r.v[3]);
  expect_stiction(&r, 1e-10, 1e-6);
  double slip = 0;
  for (int i = 0; i < 3; i++) slip = fmax(slip, hypot(r.vc[3 * i], r.vc[3 * i + 1]));
  fprintf(stderr, "  slip %.4g (reference run 1.21e-5, bound sigma mu dt g = 6.667e-5)\n", slip);
  cr_expect(slip <= 1e-3 * (2.0 / 3.0) * DT * GRAV);
  EXPECT_REL("slip vs reference run", slip, 1.21e-5, 1e-2);
  EXPECT_REL("z -> -m g / (3 k)", r.q[2], -1e-3, 1e-6);
  cr_expect(r.all_optimality, "the optimality criterion fires at every step");
  /* T16 on this run */
  fprintf(stderr, "T16 on T6a: %d iterations monitored, %d cost increases, %d line-search misses, worst "
          "|l'(alpha)|/|l'(0)| %.2e\n",
          r.monitored, r.nonincreasing_violations, r.ls_violations, r.worst_ls_ratio);
  cr_expect_eq(r.nonincreasing_violations, 0);
  cr_expect_eq(r.ls_violations, 0);
  cr_expect(r.max_iterations <= 10, "baseline: at most ~10 Newton iterations per step (got %d)", r.max_iterations);
}

Test(sap_T6, b_tight_tolerances) {
  pizza_setup s = setup_default();
  s.opt.abs_tolerance = s.opt.rel_tolerance = 0;
  pizza_result r = run(&s);
  cr_assert_eq(r.status, KN_OK, "%s", r.msg);
  fprintf(stderr, "T6b tight tolerances: max iterations per step %d, cost criterion at every step: %d\n",
          r.max_iterations, r.all_cost);
  cr_expect(r.all_cost, "the cost criterion fires at every step");
  expect_stiction(&r, 1e-10, 1e-6);
  cr_expect_eq(r.nonincreasing_violations, 0);
}

Test(sap_T6, c_sliding) {
  pizza_setup s = setup_default();
  s.tau_d = 0.01;
  s.beta = 1e-16;
  s.Mz = 40;
  s.steps = 10;
  pizza_result r = run(&s);
  cr_assert_eq(r.status, KN_OK, "%s", r.msg);
  fprintf(stderr, "T6c sliding (max iterations per step %d)\n", r.max_iterations);
  cr_expect(r.v[3] > 0);
  EXPECT_ABS("v_x", r.v[0], 0, 1e-10);
  EXPECT_ABS("v_y", r.v[1], 0, 1e-10);
  EXPECT_REL("v_z (hover artifact)", r.v[2], 0.0291978, 1e-5);
  EXPECT_REL("v_theta", r.v[3], 0.135171, 1e-5);
  for (int i = 0; i < 3; i++)
    EXPECT_REL("|gamma_t| / (mu gamma_n)", hypot(r.gamma[3 * i], r.gamma[3 * i + 1]) / (s.mu * r.gamma[3 * i + 2]),
               1.0, 1e-14);
  fprintf(stderr, "T16 on T6c: %d cost increases, %d line-search misses, worst ratio %.2e\n",
          r.nonincreasing_violations, r.ls_violations, r.worst_ls_ratio);
  cr_expect_eq(r.nonincreasing_violations, 0);
  cr_expect_eq(r.ls_violations, 0);
}

Test(sap_T6, d_no_friction) {
  pizza_setup s = setup_default();
  s.mu = 0;
  s.fx = 1;
  s.Mz = 0;
  s.steps = 30;
  pizza_result r = run(&s);
  cr_assert_eq(r.status, KN_OK, "%s", r.msg);
  fprintf(stderr, "T6d no friction\n");
  EXPECT_REL("v_x = 30 dt f_x / m", r.v[0], 0.1, 2e-6);
  for (int t = 1; t < 4; t++) EXPECT_ABS("v_y, v_z, v_theta", r.v[t], 0, 2e-7);
  const double je[4] = {0, 0, 0.3, 0};
  for (int t = 0; t < 4; t++) EXPECT_ABS("j", r.j[t], je[t], 2e-6 * 0.3);
  for (int i = 0; i < 3; i++) {
    EXPECT_ABS("gamma_t", hypot(r.gamma[3 * i], r.gamma[3 * i + 1]), 0, 1e-15);
    EXPECT_REL("gamma_n", r.gamma[3 * i + 2], 0.1, 2e-6);
    EXPECT_REL("v_c,x", r.vc[3 * i], 0.1, 2e-6);
    EXPECT_ABS("v_c,y", r.vc[3 * i + 1], 0, 2e-7);
    EXPECT_ABS("v_c,n", r.vc[3 * i + 2], 0, 2e-7);
  }
}

Test(sap_T6, e_near_rigid_stiction) {
  pizza_setup s = setup_default();
  s.k = 1e20;
  s.beta = 1e-16;
  pizza_result r = run(&s);
  fprintf(stderr, "T6e near-rigid, beta ~ 0: status %s: %s\n", kn_status_name(r.status), r.msg);
  cr_expect_eq(r.status, KN_ERR_NUMERIC, "with beta ~ 0 the solver must fail");
  cr_expect(strstr(r.msg, "friction cone contact") != NULL, "message names the constraint kind: %s", r.msg);
  s.beta = 1;
  r = run(&s);
  cr_assert_eq(r.status, KN_OK, "%s", r.msg);
  fprintf(stderr, "T6e near-rigid, beta = 1 (max iterations per step %d)\n", r.max_iterations);
  expect_stiction(&r, 1e-9, 1e-6);
}

Test(sap_T6, f_exact_guess) {
  pizza_setup s = setup_default();
  s.Mz = 0;
  s.steps = 1;
  s.q0[2] = -MASS * GRAV / (3 * s.k);
  s.use_state_guess = 1; /* guess = v = 0 */
  s.opt.max_iterations = 0;
  kn_sap_solver* solver = kn_sap_solver_create();
  kn_error err = {0};
  double v[4] = {0, 0, 0, 0}, vn[4] = {9, 9, 9, 9}, gamma[9], vc[9], j[4];
  kn_sap_stats st;
  cr_assert_eq(pizza_step(&s, solver, s.q0, v, vn, gamma, vc, j, &st, &s.opt, &err), KN_OK, "%s", err.msg);
  fprintf(stderr, "T6f exact guess: %d iterations, residual %.3g <= %.3g\n", st.iterations, st.residual,
          1e-14 + 1e-6 * st.residual_scale);
  cr_expect_eq(st.iterations, 0);
  cr_expect_eq(st.factorizations, 0);
  cr_expect(memcmp(v, vn, sizeof v) == 0, "v returned bit-identical to the guess");
  kn_sap_solver_free(solver);
}

Test(sap_T6, g_no_constraints) {
  const double M[16] = {MASS, 0, 0, 0, 0, MASS, 0, 0, 0, 0, MASS, 0, 0, 0, 0, MASS * RAD * RAD};
  const double vstar[4] = {0.1, -0.2, -0.1, 0.3 + 1e-17}, guess[4] = {1, 2, 3, 4};
  kn_sap_problem* p = kn_sap_problem_create(DT);
  kn_error err = {0};
  cr_assert_eq(kn_sap_add_clique(p, 4, M, vstar, NULL, &err), KN_OK);
  kn_sap_solver* solver = kn_sap_solver_create();
  double v[4];
  kn_sap_stats st;
  cr_assert_eq(kn_sap_solve(solver, p, NULL, guess, v, NULL, &st, &err), KN_OK, "%s", err.msg);
  cr_expect(memcmp(v, vstar, sizeof v) == 0, "v = v* exactly");
  cr_expect_eq(st.iterations, 0);
  kn_sap_solver_free(solver);
  kn_sap_problem_free(p);
}
