/* Newton on a potential whose contact term has an exact and a projected Hessian
 * (kn_nl_term.project, ipc's mesh barrier): the exact one where the assembled matrix is positive
 * definite (quadratic convergence, not the projection's linear rate), the exact one + tau M (the
 * smallest tau of the shift's sequence CHOLMOD accepts) where it is not, the step extended while
 * the energy falls after a full step off a saddle (extend_step in nonlinear/newton.c), and the step
 * test met from the last factor after a full exact step (step_estimate).
 * The term is a 1-D double well in v0, T(v) = -a v0^2 / 2 + b v0^4 / 4, on a point mass of mass m:
 * its Hessian -a + 3 b v0^2 is negative near 0, where a per-term projection clamps it to 0. */
#include <criterion/criterion.h>
#include <math.h>

#include "../support/point_mass.h"

typedef struct {
  double a, b;
  int projected; /* 1: the Hessian clamped at 0 */
  int can_project; /* 0: the term offers no exact Hessian (projected always, the solver before the hook) */
} well;

static kn_status well_eval(void* self, const double* v, double* E, double* r, kn_nl_triplets* T, kn_nl_triplets* S,
                           kn_error* err) {
  (void)S, (void)err;
  const well* w = self;
  const double x = v[0];
  if (E) *E += -0.5 * w->a * x * x + 0.25 * w->b * x * x * x * x;
  r[0] += -w->a * x + w->b * x * x * x;
  double h = -w->a + 3 * w->b * x * x;
  if (T) kn_nl_triplets_add(T, 0, 0, w->projected ? fmax(h, 0.0) : h);
  return KN_OK;
}

static int well_project(void* self, int on) {
  well* w = self;
  int was = w->projected;
  w->projected = on;
  return on && !was;
}

/* Newton from v0 (DoF 0) with v* = (vstar0, 0, 0) => the answer's DoF 0; iterations in *its */
static double solve(well* w, double m, double vstar0, double v0, int* its) {
  point_mass pm = {.m = m, .vstar = {vstar0, 0, 0}, .v = {v0, 0, 0}};
  kn_clique q = {&point_mass_ops, &pm};
  kn_nl_problem prob = {.ncliques = 1, .cliques = &q, .potential = 1};
  prob.contact = (kn_nl_term){.eval = well_eval, .project = w->can_project ? well_project : NULL, .self = w};
  kn_nl_options o = kn_nl_options_default();
  o.abs_tol = 1e-10, o.rel_tol = 0, o.step_test = 1;
  kn_nl_solver* s = kn_nl_solver_create();
  double v[3];
  kn_nl_stats st;
  kn_error err = {0};
  cr_assert_eq(kn_nl_solve(s, &prob, &o, pm.v, v, &st, &err), KN_OK, "%s", err.msg);
  kn_nl_solver_free(s);
  *its = st.iterations;
  return v[0];
}

/* a = 0.5, b = 1, m = 1: the total Hessian m - a + 3 b v0^2 >= 0.5 everywhere (convex), the term's
 * is negative at the answer s = 0.3 (-0.23). With v* = s + T'(s) / m the answer is s. Projected,
 * Newton's matrix is m instead of m - 0.23 there: linear at 0.23 an iteration, ~15 iterations from 0
 * to 1e-10 m/s; the exact Hessian converges quadratically. */
Test(nonlinear_projection, exact_hessian_converges_quadratically_where_the_sum_is_positive_definite) {
  const double m = 1, s = 0.3, vstar = s + (-0.5 * s + s * s * s) / m;
  int its_exact, its_projected;
  well w = {.a = 0.5, .b = 1, .can_project = 1};
  double v = solve(&w, m, vstar, 0.0, &its_exact);
  cr_expect(fabs(v - s) < 1e-10, "v0 = %.15g, expected %.15g", v, s);
  cr_expect(its_exact <= 6, "%d Newton iterations with the exact Hessian (quadratic: <= 6)", its_exact);
  well p = {.a = 0.5, .b = 1, .projected = 1, .can_project = 0};
  v = solve(&p, m, vstar, 0.0, &its_projected);
  cr_expect(fabs(v - s) < 1e-9, "v0 = %.15g, expected %.15g (projected)", v, s);
  cr_expect(its_projected >= 12, "%d Newton iterations with the projected Hessian (linear at 0.23: >= 12)",
            its_projected);
}

/* a = 2, b = 1, m = 1, v* = 0: E = -v0^2 / 2 + v0^4 / 4 along v0, a maximum at 0 and minima at
 * +-1. From v0 = 1e-6 the exact Hessian (-1) is indefinite; the projected one (m) gives p = v0(1 -
 * v0^2): projected Newton only doubles v0 an iteration (~20 iterations to leave 0), and the shifted
 * one (tau 2.56: 1.56) gives p / 1.56, slower still. Extending the
 * full step while E falls (the secant's curvature along it is negative: x 4 a trial, up to 8 trials)
 * leaves it in one or two iterations, then Newton on the exact Hessian (2 at v0 = 1) converges to
 * the minimum v0 = 1. */
Test(nonlinear_projection, full_steps_off_a_saddle_are_extended_while_the_energy_falls) {
  int its, its_projected;
  well w = {.a = 2, .b = 1, .can_project = 1};
  double v = solve(&w, 1.0, 0.0, 1e-6, &its);
  cr_expect(fabs(v - 1) < 1e-10, "v0 = %.15g, expected 1 (the minimum)", v);
  cr_expect(its <= 8, "%d Newton iterations (<= 8: two to leave the saddle)", its);
  well p = {.a = 2, .b = 1, .projected = 1, .can_project = 0};
  v = solve(&p, 1.0, 0.0, 1e-6, &its_projected);
  cr_expect(fabs(v - 1) < 1e-9, "v0 = %.15g, expected 1 (projected)", v);
  cr_expect(its_projected >= 20, "%d Newton iterations projected (doubling from 1e-6: >= 20)", its_projected);
}

/* a = 2, b = 1, m = 1, v* = 0, from v0 = 0.5: the exact Hessian m - a + 3 b v0^2 = -0.25, refused.
 * The shift's sequence tau = 0.01, 0.04, 0.16, 0.64 (x4, nonlinear/newton.c): 0.64 is the first
 * with H + tau m > 0 (0.39), so p = -r / 0.39 with r = v0 - a v0 + b v0^3 = -0.375: p = 0.961538..;
 * the full step to 1.4615 raises E = -v^2/2 + v^4/4 (0.073 > -0.109), Armijo's half step is taken:
 * v1 = 0.5 + 0.5 p = 0.98076923. The per-pair projection instead (H = m: p = 0.375, a full step to
 * 0.875, not extended since the secant's E rises at 2.2x) stopped at 0.875. Then Newton converges
 * to the minimum v0 = 1 (the exact Hessian 2 there). */
Test(nonlinear_projection, refused_exact_hessian_is_shifted_by_the_smallest_tau) {
  well w = {.a = 2, .b = 1, .can_project = 1};
  point_mass pm = {.m = 1, .vstar = {0, 0, 0}, .v = {0.5, 0, 0}};
  kn_clique q = {&point_mass_ops, &pm};
  kn_nl_problem prob = {.ncliques = 1, .cliques = &q, .potential = 1};
  prob.contact = (kn_nl_term){.eval = well_eval, .project = well_project, .self = &w};
  kn_nl_options o = kn_nl_options_default();
  o.abs_tol = 1e-10, o.rel_tol = 0, o.step_test = 1, o.max_iterations = 1;
  kn_nl_solver* s = kn_nl_solver_create();
  double v[3];
  kn_nl_stats st = {0};
  kn_error err = {0};
  cr_expect_eq(kn_nl_solve(s, &prob, &o, pm.v, v, &st, &err), KN_ERR_NUMERIC, "one iteration cannot converge");
  const double v1 = 0.5 + 0.5 * 0.375 / 0.39;
  cr_expect(fabs(kn_nl_solver_iterate(s)[0] - v1) < 1e-14, "v0 after one iteration %.15g, expected %.15g (tau 0.64)",
            kn_nl_solver_iterate(s)[0], v1);
  o.max_iterations = 100;
  w.projected = 0;
  cr_assert_eq(kn_nl_solve(s, &prob, &o, pm.v, v, &st, &err), KN_OK, "%s", err.msg);
  cr_expect(fabs(v[0] - 1) < 1e-10, "v0 = %.15g, expected 1 (the minimum)", v[0]);
  cr_expect(st.shifts >= 1 && st.projections == 0, "%d shifted directions, %d projected (expected >= 1, 0)", st.shifts,
            st.projections);
  kn_nl_solver_free(s);
}

/* The step test without its factorization (step_estimate in nonlinear/newton.c): on the convex
 * case above (a = 0.5, b = 1, m = 1, answer 0.3) every iteration is a full step of the exact
 * Hessian, so the test at the last iterate takes the simplified Newton step with the kept factor:
 * one factorization an iteration, none more (the step test's own was one more a solve). The true
 * Newton step at the answer, -r / H, is within the tolerance: the test's meaning kept. */
Test(nonlinear_projection, step_test_reuses_the_last_factor_after_a_full_exact_step) {
  const double m = 1, s0 = 0.3, vstar = s0 + (-0.5 * s0 + s0 * s0 * s0) / m, tol = 1e-10;
  well w = {.a = 0.5, .b = 1, .can_project = 1};
  point_mass pm = {.m = m, .vstar = {vstar, 0, 0}, .v = {0, 0, 0}};
  kn_clique q = {&point_mass_ops, &pm};
  kn_nl_problem prob = {.ncliques = 1, .cliques = &q, .potential = 1};
  prob.contact = (kn_nl_term){.eval = well_eval, .project = well_project, .self = &w};
  kn_nl_options o = kn_nl_options_default();
  o.abs_tol = tol, o.rel_tol = 0, o.step_test = 1;
  kn_nl_solver* s = kn_nl_solver_create();
  double v[3];
  kn_nl_stats st;
  kn_error err = {0};
  cr_assert_eq(kn_nl_solve(s, &prob, &o, pm.v, v, &st, &err), KN_OK, "%s", err.msg);
  kn_nl_solver_free(s);
  const double x = v[0], r = m * (x - vstar) - 0.5 * x + x * x * x, H = m - 0.5 + 3 * x * x;
  cr_expect(fabs(r / H) <= tol, "the Newton step at the answer %.3g, above the tolerance %.0e", fabs(r / H), tol);
  cr_expect(fabs(x - s0) < 1e-10, "v0 = %.15g, expected %.15g", x, s0);
  cr_expect_eq(st.step_estimates, 1, "%d step tests met by the kept factor (expected 1)", st.step_estimates);
  cr_expect_eq(st.factorizations, st.iterations, "%d factorizations for %d iterations (expected one each)",
               st.factorizations, st.iterations);
}
