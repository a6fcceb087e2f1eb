/* The ipc backend's contact term (ipc/term.c) in the shared nonlinear step, digest §9.7:
 * - item 5: its gradient against central differences of its energy and its Hessian against central
 *   differences of its gradient, for the barrier, the lagged friction (sliding and in the static
 *   band) and the feasibility solve's extension below d_lo;
 * - item 6: every local block is PSD (eigenvalues >= -1e-12 |H|);
 * - item 8: the frictionless resting gap of a unit vertex over a fixed plane with kappa 2.5e6,
 *   h 0.01, dhat 1e-3, solved by Newton on the term: d* = 8.6622e-4 m, and lambda = m g;
 * - items 9 and 10: the CCD filter's alpha keeps every gap >= (1 - c) of where it was, and a vertex
 *   fired at its plane 1000 times its gap per step (U4 at pair level) stops short of it with every
 *   accepted Newton iterate intersection-free;
 * - the friction-kink cap: a step that reverses a sliding contact's slip stops where it passes 0. */
#include <criterion/criterion.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>

#include "../support/point_mass.h"
#include "ipc/ipc.h"

/* two point masses (cliques 0 and 1), three contacts: mass a over the world, mass b over the
 * world, and a against b along a slanted normal */
typedef struct {
  kn_nl_points P;
  kn_ipc_contact c[3];
  kn_ipc_term t;
} two_masses;

static void two_masses_init(two_masses* m, double lambda, double d_lo) {
  memset(m, 0, sizeof *m);
  kn_point_map m0 = {.x0 = {0, 0, 4e-4}, .n = 1, .col = {0}, .w = {1}}, m1 = {.x0 = {0.1, 0, 2e-4}, .n = 1, .col = {0}, .w = {1}};
  int a = kn_nl_points_add(&m->P, &m0, 0, 3, NULL), b = kn_nl_points_add(&m->P, &m1, 3, 3, NULL);
  const double s = 1 / sqrt(3.0), r = 1 / sqrt(2.0), q = 1 / sqrt(6.0);
  m->c[0] = (kn_ipc_contact){-1, a, {0, 0, 1}, {1, 0, 0}, {0, 1, 0}, 4e-4, 0, 0.5, lambda};
  m->c[1] = (kn_ipc_contact){-1, b, {0, 0, 1}, {1, 0, 0}, {0, 1, 0}, 2e-4, 0, 0.3, 2 * lambda};
  m->c[2] = (kn_ipc_contact){a, b, {s, s, s}, {r, -r, 0}, {q, q, -2 * q}, 5e-4, 0, 0.4, lambda};
  m->t = (kn_ipc_term){.dt = 0.01, .dhat = 1e-3, .kappa = 2.5e6, .eps_v = 1e-3, .ccd = 0.9, .d_lo = d_lo,
                       .points = &m->P, .c = m->c, .n = 3};
}

// (term, v) => E, r (6), H (36, dense)
static double eval6(kn_ipc_term* t, const double v[6], double r[6], double H[36]) {
  kn_nl_triplets T = {0};
  kn_nl_triplets_reset(&T, 6);
  double E = 0;
  kn_error err = {0};
  memset(r, 0, 6 * sizeof *r);
  cr_assert_eq(kn_ipc_term_eval(t, v, &E, r, H ? &T : NULL, NULL, &err), KN_OK);
  if (H) {
    memset(H, 0, 36 * sizeof *H);
    for (int k = 0; k < T.nnz; k++) H[T.i[k] * 6 + T.j[k]] += T.x[k];
  }
  kn_nl_triplets_free(&T);
  return E;
}

static void fd_case(double lambda, double d_lo, const double v0[6], const char* what) {
  two_masses m;
  two_masses_init(&m, lambda, d_lo);
  double r[6], H[36], v[6], rp[6], rm[6];
  eval6(&m.t, v0, r, H);
  double rmax = 0, hmax = 0, eg = 0, eh = 0;
  for (int i = 0; i < 6; i++) rmax = fmax(rmax, fabs(r[i]));
  for (int i = 0; i < 36; i++) hmax = fmax(hmax, fabs(H[i]));
  for (int j = 0; j < 6; j++) {
    const double h = 1e-7; /* v in m/s: 1e-9 m of gap, 1e-3 of the smallest gap */
    memcpy(v, v0, sizeof v);
    v[j] += h;
    double Ep = eval6(&m.t, v, rp, NULL);
    v[j] -= 2 * h;
    double Em = eval6(&m.t, v, rm, NULL);
    eg = fmax(eg, fabs((Ep - Em) / (2 * h) - r[j]) / rmax);
    for (int i = 0; i < 6; i++) eh = fmax(eh, fabs((rp[i] - rm[i]) / (2 * h) - H[i * 6 + j]) / hmax);
  }
  cr_log_info("%s: gradient error %.2e, Hessian error %.2e (relative to the largest entry)", what, eg, eh);
  cr_expect(eg < 1e-6 && eh < 1e-6, "%s: gradient error %.2e, Hessian error %.2e", what, eg, eh);
  /* PSD: the assembled 6 x 6 of three 3 x 3 contact blocks */
  double w[6];
  cr_assert_eq(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', 6, H, 6, w), 0);
  cr_expect(w[0] >= -1e-12 * hmax, "%s: smallest eigenvalue %.3g of |H| %.3g", what, w[0], hmax);
  kn_nl_points_free(&m.P);
}

/* sliding faster than eps_v = 1e-3 m/s, inside the static band, and below d_lo with the extension */
Test(ipc_term, derivatives_sliding) { fd_case(3.0, 0, (double[6]){0.3, -0.2, -0.01, -0.1, 0.05, 0.004}, "sliding"); }
Test(ipc_term, derivatives_static_band) {
  fd_case(3.0, 0, (double[6]){3e-4, -2e-4, -0.01, -1e-4, 4e-4, 0.004}, "static band");
}
Test(ipc_term, derivatives_extension) {
  /* mass a at d = 4e-4 - 0.01 * 0.035 = 5e-5 < d_lo = 1e-4, mass b crossing: d = -1e-4 */
  fd_case(3.0, 1e-4, (double[6]){3e-4, -2e-4, -0.035, -1e-4, 4e-4, -0.03}, "extension");
}

/* a 1 kg vertex at rest 'z0' over a fixed plane under gravity, 'steps' steps of the term's h through
 * Newton on the term alone (with its stiffen hook when 'stiffen'); its gap at the end */
static double vertex_on_plane(kn_ipc_term* t, double z0, int steps, int stiffen, const kn_nl_options* o) {
  const double h = t->dt;
  point_mass pm = {.m = 1.0, .x = {0, 0, z0}};
  kn_clique q = {&point_mass_ops, &pm};
  kn_nl_points P = {0};
  kn_ipc_contact c = {.a = -1, .n = {0, 0, 1}, .t1 = {1, 0, 0}, .t2 = {0, 1, 0}};
  t->points = &P, t->c = &c, t->n = 1;
  kn_nl_problem prob = {.ncliques = 1, .cliques = &q, .potential = 1,
                        .contact = {.eval = kn_ipc_term_eval, .max_step = kn_ipc_term_max_step,
                                    .stiffen = stiffen ? kn_ipc_term_stiffen : NULL, .self = t}};
  kn_nl_solver* s = kn_nl_solver_create();
  kn_error err = {0};
  for (int k = 0; k < steps; k++) {
    pm_begin(&pm, h, (double[3]){0, 0, -9.81});
    kn_point_map m;
    pm_point_map(&pm, 0, NULL, h, &m);
    kn_nl_points_reset(&P);
    c.b = kn_nl_points_add(&P, &m, 0, 3, NULL);
    c.phi0 = pm.x[2];
    double v[3], v0[3] = {0, 0, 0};
    cr_assert_eq(kn_nl_solve(s, &prob, o, v0, v, NULL, &err), KN_OK, "step %d: %s", k, err.msg);
    pm_advance(&pm, h, v);
  }
  kn_nl_solver_free(s);
  kn_nl_points_free(&P);
  t->points = NULL, t->c = NULL, t->n = 0;
  return pm.x[2];
}

/* item 8 through Newton on the term: a 1 kg vertex at rest over a fixed plane, kappa 2.5e6, h 0.01 */
Test(ipc_term, resting_gap_d_star) {
  const double h = 0.01, g = 9.81;
  kn_ipc_term t = {.dt = h, .dhat = 1e-3, .kappa = 2.5e6, .eps_v = 1e-3, .ccd = 0.9};
  kn_nl_options o = kn_nl_options_default();
  o.abs_tol = 1e-12, o.rel_tol = 0;
  double d = vertex_on_plane(&t, 9e-4, 300, 0, &o), lambda = kn_ipc_normal_force(d, 1e-3, 2.5e6, h);
  cr_log_info("vertex rests at d = %.8e m (digest 8.6622e-4), lambda %.10g N (m g = 9.81)", d, lambda);
  cr_assert(fabs(d - 8.6622e-4) <= 5e-9, "d = %.8e m", d);
  cr_assert(fabs(lambda - g) <= 1e-8 * g, "lambda %.12g N", lambda);
}

/* item 9: alpha from the CCD filter leaves each approaching gap at exactly (1 - c) of itself (the
 * gap is linear in alpha) and every gap >= that */
Test(ipc_term, ccd_filter_keeps_a_tenth_of_each_gap) {
  two_masses m;
  two_masses_init(&m, 0, 0);
  const double v[6] = {0, 0, 0, 0, 0, 0}, p[6] = {0.5, 0.1, -3.0, 0.2, 0.3, -1.0};
  double alpha = kn_ipc_term_max_step(&m.t, v, p), vt[6];
  for (int i = 0; i < 6; i++) vt[i] = v[i] + alpha * p[i];
  double worst = INFINITY;
  for (int i = 0; i < 3; i++) {
    double d0 = kn_ipc_term_gap(&m.t, i, v), d1 = kn_ipc_term_gap(&m.t, i, vt);
    cr_expect(d1 >= (0.1 - 1e-12) * d0, "contact %d: %.6g of its gap left", i, d1 / d0);
    worst = fmin(worst, d1 / d0);
  }
  cr_log_info("alpha %.6g leaves at least %.6f of each gap", alpha, worst);
  cr_expect(fabs(worst - 0.1) <= 1e-12, "the binding contact keeps %.15g of its gap, expected 0.1", worst);
  kn_nl_points_free(&m.P);
}

/* the line-search invariant: the contact term seen by the solver, recording the smallest gap at every
 * iterate it accepts (the evaluations with a Hessian: the start and each accepted step) */
typedef struct {
  kn_ipc_term* t;
  double d_min;
  int accepted;
} watch;
static kn_status watch_eval(void* self, const double* v, double* E, double* r, kn_nl_triplets* T, kn_nl_triplets* S,
                            kn_error* err) {
  watch* w = self;
  if (T) {
    for (int i = 0; i < w->t->n; i++) w->d_min = fmin(w->d_min, kn_ipc_term_gap(w->t, i, v));
    w->accepted++;
  }
  return kn_ipc_term_eval(w->t, v, E, r, T, S, err);
}
static double watch_max_step(void* self, const double* v, const double* p) {
  return kn_ipc_term_max_step(((watch*)self)->t, v, p);
}

/* items 9-10 and U4 at pair level: a 1 kg vertex 1 mm over a fixed plane, fired at it at 1000 times
 * its gap per step (100 m/s, h = 0.01), frictionless, automatic-like kappa 2.5e6: Newton from the
 * start x^t (v = 0) never accepts an iterate with d <= 0, and the step ends above the plane */
Test(ipc_term, fired_vertex_never_crosses) {
  const double h = 0.01;
  point_mass pm = {.m = 1.0, .x = {0, 0, 1e-3}, .v = {0, 0, -100}};
  kn_clique q = {&point_mass_ops, &pm};
  kn_nl_points P = {0};
  kn_ipc_contact c = {.a = -1, .n = {0, 0, 1}, .t1 = {1, 0, 0}, .t2 = {0, 1, 0}};
  kn_ipc_term t = {.dt = h, .dhat = 1e-3, .kappa = 2.5e6, .eps_v = 1e-3, .ccd = 0.9, .points = &P, .c = &c, .n = 1};
  watch wt = {&t, INFINITY, 0};
  kn_nl_problem prob = {.ncliques = 1, .cliques = &q,
                        .contact = {.eval = watch_eval, .max_step = watch_max_step, .self = &wt}, .potential = 1};
  kn_nl_solver* s = kn_nl_solver_create();
  kn_nl_options o = kn_nl_options_default();
  o.max_iterations = 500;
  kn_error err = {0};
  double d_end = INFINITY;
  for (int k = 0; k < 5; k++) {
    pm_begin(&pm, h, (double[3]){0, 0, -9.81});
    kn_point_map m;
    pm_point_map(&pm, 0, NULL, h, &m);
    kn_nl_points_reset(&P);
    c.b = kn_nl_points_add(&P, &m, 0, 3, NULL);
    c.phi0 = pm.x[2];
    double v[3], v0[3] = {0, 0, 0};
    kn_nl_stats st;
    cr_assert_eq(kn_nl_solve(s, &prob, &o, v0, v, &st, &err), KN_OK, "step %d: %s", k, err.msg);
    pm_advance(&pm, h, v);
    d_end = fmin(d_end, pm.x[2]);
    cr_log_info("step %d: %d Newton iterations, d = %.4e m", k, st.iterations, pm.x[2]);
  }
  cr_log_info("%d accepted iterates, smallest gap %.4e m", wt.accepted, wt.d_min);
  cr_assert(wt.d_min > 0, "an accepted iterate had d = %.4e m", wt.d_min);
  cr_assert(d_end > 0, "a step ended at d = %.4e m", d_end);
  kn_nl_solver_free(s);
  kn_nl_points_free(&P);
}

/* The friction-kink cap of max_step: mass a slides at 0.03 m/s along x (the contacts' t1 over the
 * floor; every gap stays positive) and the direction reverses it (-0.06 m/s): the ray carries its slip, and that of its contact
 * with b, through u = 0 at alpha = 0.5, where both are within the static band; the normals do not
 * close, so nothing else caps it. */
Test(ipc_term, friction_kink_caps_the_step_where_the_slip_reverses) {
  two_masses m;
  two_masses_init(&m, 3.0, 0);
  const double v[6] = {0.03, 0, 0, 0, 0, 0}, p[6] = {-0.06, 0, 0, 0, 0, 0};
  double alpha = kn_ipc_term_max_step(&m.t, v, p);
  cr_log_info("alpha %.15g", alpha);
  cr_assert(fabs(alpha - 0.5) <= 1e-12, "alpha %.15g, expected 0.5", alpha);
  /* a direction that keeps sliding the same way is not capped */
  const double q[6] = {0.01, 0, 0, 0, 0, 0};
  cr_assert_eq(kn_ipc_term_max_step(&m.t, v, q), 1.0);
  kn_nl_points_free(&m.P);
}

/* the gap where the barrier of kappa carries m g (bisection: the force falls with d) */
static double balance_gap(double kappa, double dhat, double h, double mg) {
  double lo = 0, hi = dhat;
  for (int it = 0; it < 200; it++) {
    double m = 0.5 * (lo + hi);
    if (kn_ipc_normal_force(m, dhat, kappa, h) > mg) lo = m; else hi = m;
  }
  return 0.5 * (lo + hi);
}

/* (kappa, kappa_max) => a 1 kg vertex dropped from 5e-4 m onto a fixed plane at h = 1 s and left to
 * rest for 8 steps, Newton (default options: at 5e-10 m the gap's round-off, 1e-19 m, moves the
 * force by 2e-9 N) with the term's stiffen hook, d_crush 1e-9 m; its resting gap, the kappa it
 * ended with */
static double rest_at_large_h(double kappa, double kappa_max, double* kappa_end) {
  kn_ipc_term t = {.dt = 1, .dhat = 1e-3, .kappa = kappa, .eps_v = 1e-3, .ccd = 0.9, .kappa_max = kappa_max,
                   .d_crush = 1e-9};
  kn_nl_options o = kn_nl_options_default();
  double d = vertex_on_plane(&t, 5e-4, 8, 1, &o);
  *kappa_end = t.kappa;
  return d;
}

/* kn_ipc_term_stiffen through Newton: with kappa 2.5e3 at h = 1 s the barrier carries the vertex's
 * 9.81 N only at 5.1e-10 m, below d_crush = 1e-9 m, so the first capped iterate below it raises
 * kappa to kappa_max 2.5e5 and the vertex rests where that barrier carries it (5.1e-8 m); with no
 * kappa_max (a user's kappa) it rests at the soft balance; where the soft balance is above d_crush
 * (h = 1, kappa 2.5e5 and kappa_max 2.5e7) kappa stays */
Test(ipc_term, stiffen_raises_kappa_where_the_load_crushes_a_pair) {
  const double soft = balance_gap(2.5e3, 1e-3, 1, 9.81), stiff = balance_gap(2.5e5, 1e-3, 1, 9.81);
  cr_log_info("balance gaps: %.6e m at kappa 2.5e3, %.6e m at 2.5e5", soft, stiff);
  cr_assert(soft < 1e-9 && stiff > 1e-9);
  double k, d = rest_at_large_h(2.5e3, 2.5e5, &k);
  cr_log_info("stiffened: rests at %.10e m, kappa %g", d, k);
  cr_assert_eq(k, 2.5e5);
  cr_assert(fabs(d - stiff) <= 1e-6 * stiff, "rests at %.10e m, the barrier at kappa_max carries m g at %.10e", d, stiff);
  d = rest_at_large_h(2.5e3, 0, &k);
  cr_log_info("kappa kept: rests at %.10e m", d);
  cr_assert_eq(k, 2.5e3);
  cr_assert(fabs(d - soft) <= 1e-6 * soft, "rests at %.10e m, the barrier at kappa carries m g at %.10e", d, soft);
  d = rest_at_large_h(2.5e5, 2.5e7, &k);
  cr_assert_eq(k, 2.5e5, "kappa %g: stiffened with every gap above d_crush", k);
  cr_assert(fabs(d - stiff) <= 1e-6 * stiff, "rests at %.10e m, expected %.10e", d, stiff);
}
