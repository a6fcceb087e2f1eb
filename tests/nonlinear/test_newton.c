/* The shared nonlinear step (nonlinear/): material points' maps and their adjoints, SAP's
 * robot-side constraints as a potential (gradient and Hessian against central differences), and
 * Newton on problems with known answers. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "../support/point_mass.h"

// the (n x n) dense matrix of entries T
static double* dense_of(const kn_nl_triplets* T) {
  double* D = calloc((size_t)T->n * (size_t)T->n, sizeof *D);
  for (int k = 0; k < T->nnz; k++) D[(size_t)T->i[k] * T->n + T->j[k]] += T->x[k];
  return D;
}

/* J_rel^T is J_rel's adjoint: f . (J_rel v) = (J_rel^T f) . v for a nodal and a dense point, and
 * the block J_rel^T K J_rel equals it built from columns */
Test(nonlinear, pair_adjoint_and_block) {
  const int n = 9;
  double B[3 * 6];
  for (int k = 0; k < 18; k++) B[k] = sin(1.3 * k + 0.2);
  kn_point_map ma = {.x0 = {0, 0, 0}, .n = 0, .B = B}; /* a dense (tree) point over DoFs 3..8 */
  kn_point_map mb = {.x0 = {1, 2, 3}, .n = 2, .col = {0, 3}, .w = {0.25, 0.75}, .B = NULL}; /* nodal, DoFs 0..5 */
  kn_nl_points P = {0};
  int a = kn_nl_points_add(&P, &ma, 3, 6, NULL), b = kn_nl_points_add(&P, &mb, 0, 6, NULL);
  cr_assert(a == 0 && b == 1 && !P.nomem);
  double v[9], f[3] = {0.3, -1.1, 0.7}, w[3], r[9] = {0};
  for (int k = 0; k < n; k++) v[k] = cos(0.7 * k + 0.1);
  kn_nl_pair_velocity(&P, a, b, v, w);
  kn_nl_pair_add_force(&P, a, b, 1.0, f, r);
  double lhs = f[0] * w[0] + f[1] * w[1] + f[2] * w[2], rhs = 0;
  for (int k = 0; k < n; k++) rhs += r[k] * v[k];
  cr_expect(fabs(lhs - rhs) < 1e-14, "f.Jv = %.17g, J^T f.v = %.17g", lhs, rhs);
  /* the block: column j of J_rel^T K J_rel is J_rel^T K (J_rel e_j) */
  double K[9] = {2, 0.5, 0.1, -0.3, 1, 0.2, 0.4, 0, 3};
  kn_nl_triplets T = {0};
  kn_nl_triplets_reset(&T, n);
  kn_nl_pair_add_block(&P, a, b, K, &T);
  double* D = dense_of(&T);
  for (int j = 0; j < n; j++) {
    double e[9] = {0}, we[3], Kw[3], col[9] = {0};
    e[j] = 1;
    kn_nl_pair_velocity(&P, a, b, e, we);
    for (int i = 0; i < 3; i++) Kw[i] = K[3 * i] * we[0] + K[3 * i + 1] * we[1] + K[3 * i + 2] * we[2];
    kn_nl_pair_add_force(&P, a, b, 1.0, Kw, col);
    for (int i = 0; i < n; i++) cr_expect(fabs(D[i * n + j] - col[i]) < 1e-14, "(%d, %d)", i, j);
  }
  free(D);
  kn_nl_triplets_free(&T);
  kn_nl_points_free(&P);
}

/* A tree clique of 3 DoFs with a PD actuator (effort-limited), a joint limit and a coupler: the
 * potential's gradient and Hessian against central differences of its cost and gradient, at
 * velocities inside each regime (PD saturated and not, limit active). */
static kn_sap_problem* robot_problem(void) {
  kn_sap_problem* p = kn_sap_problem_create(0.01);
  const double A[9] = {2.0, 0.1, 0.0, 0.1, 3.0, 0.2, 0.0, 0.2, 4.0}, vs[3] = {0.1, -0.2, 0.3};
  kn_error err = {0};
  int c, i;
  cr_assert_eq(kn_sap_add_clique(p, 3, A, vs, &c, &err), KN_OK, "%s", err.msg);
  kn_sap_pd_params pd = {.kp = 100, .kd = 10, .q0 = 0.1, .qd = 0.3, .vd = 0, .u_ff = 0.5, .effort_limit = 5};
  cr_assert_eq(kn_sap_add_pd(p, c, 0, &pd, &i, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_sap_add_limit(p, c, 1, 0.0, -0.001, 1.0, NULL, &i, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_sap_add_coupler(p, c, 0, 0.1, c, 2, 0.02, 2.0, 0.05, &i, &err), KN_OK, "%s", err.msg);
  return p;
}

static void potential_fd_at(const double v0[3]) {
  kn_sap_problem* p = robot_problem();
  kn_error err = {0};
  kn_nl_triplets T = {0};
  kn_nl_triplets_reset(&T, 3);
  double L, g[3] = {0}, v[3];
  cr_assert_eq(kn_sap_constraints_potential(p, 0, v0, &L, g, kn_nl_triplets_entry, &T, &err), KN_OK, "%s", err.msg);
  double* H = dense_of(&T);
  const double h = 1e-6;
  for (int j = 0; j < 3; j++) {
    double Lp, Lm, gp[3] = {0}, gm[3] = {0};
    memcpy(v, v0, sizeof v);
    v[j] += h;
    kn_sap_constraints_potential(p, 0, v, &Lp, gp, NULL, NULL, &err);
    v[j] -= 2 * h;
    kn_sap_constraints_potential(p, 0, v, &Lm, gm, NULL, NULL, &err);
    double fd = (Lp - Lm) / (2 * h);
    cr_expect(fabs(fd - g[j]) <= 1e-6 * fmax(1, fabs(g[j])), "dL/dv%d: %.10g, FD %.10g", j, g[j], fd);
    for (int i = 0; i < 3; i++) {
      double fdh = (gp[i] - gm[i]) / (2 * h);
      cr_expect(fabs(fdh - H[i * 3 + j]) <= 1e-5 * fmax(1, fabs(H[i * 3 + j])), "H(%d,%d): %.10g, FD %.10g", i, j,
                H[i * 3 + j], fdh);
    }
  }
  free(H);
  kn_nl_triplets_free(&T);
  kn_sap_problem_free(p);
}

Test(nonlinear, robot_potential_pd_unsaturated) { potential_fd_at((double[3]){0.3, 0.05, -0.2}); }
Test(nonlinear, robot_potential_pd_saturated_limit_active) { potential_fd_at((double[3]){-3.0, -0.5, 0.4}); }

/* no contact: Newton on the inertial potential alone lands on v* in one iteration */
Test(nonlinear, free_motion_in_one_iteration) {
  point_mass pm = {.m = 2.0, .x = {0, 0, 1}, .v = {1, 2, 3}};
  pm_begin(&pm, 0.01, (double[3]){0, 0, -19.62});
  kn_clique q = {&point_mass_ops, &pm};
  kn_nl_problem prob = {.ncliques = 1, .cliques = &q, .potential = 1};
  kn_nl_solver* s = kn_nl_solver_create();
  double v[3];
  kn_nl_stats st;
  kn_error err = {0};
  cr_assert_eq(kn_nl_solve(s, &prob, NULL, pm.v, v, &st, &err), KN_OK, "%s", err.msg);
  cr_expect_eq(st.iterations, 1);
  for (int k = 0; k < 3; k++) cr_expect(fabs(v[k] - pm.vstar[k]) < 1e-14, "v%d = %.17g, v* %.17g", k, v[k], pm.vstar[k]);
  kn_nl_solver_free(s);
}

/* A clique with a constant dense A and v* (potential 1/2 (v - v*)^T A (v - v*)), as a tree's. */
typedef struct {
  const double *A, *vs;
  int hp[4], hi[6];
  double hx[6];
} dense_clique;
static int dc_ndof(const void* self) { (void)self; return 3; }
static const double* dc_v_star(const void* self) { return ((const dense_clique*)self)->vs; }
static void dc_diagonal(const void* self, double* d) {
  const dense_clique* c = self;
  for (int k = 0; k < 3; k++) d[k] = c->A[4 * k];
}
static kn_status dc_potential(void* self, const double* v, double* E, double* grad, kn_csc_view* H, kn_error* err) {
  (void)err;
  dense_clique* c = self;
  double e = 0;
  for (int i = 0; i < 3; i++) {
    double gi = 0;
    for (int j = 0; j < 3; j++) gi += c->A[3 * i + j] * (v[j] - c->vs[j]);
    if (grad) grad[i] = gi;
    e += 0.5 * (v[i] - c->vs[i]) * gi;
  }
  int k = 0;
  for (int j = 0; j < 3; j++) {
    c->hp[j] = k;
    for (int i = j; i < 3; i++) c->hi[k] = i, c->hx[k++] = c->A[3 * i + j];
  }
  c->hp[3] = k;
  if (E) *E = e;
  if (H) *H = (kn_csc_view){3, c->hp, c->hi, c->hx};
  return KN_OK;
}
static const char* dc_name(const void* self) { (void)self; return "dense"; }
static const kn_clique_ops dense_ops = {.kind = KN_CLIQUE_TREE, .ndof = dc_ndof, .v_star = dc_v_star,
                                        .diagonal = dc_diagonal, .potential = dc_potential, .name = dc_name};

/* the robot-side terms inside the solve: the clique's potential plus SAP's constraint costs is
 * SAP's own cost, so the minimizer is SAP's answer (both to their tolerances) */
Test(nonlinear, robot_terms_match_sap) {
  kn_sap_problem* p = robot_problem();
  kn_error err = {0};
  double v_sap[3], v[3], v0[3] = {0, 0, 0};
  kn_sap_solver* ss = kn_sap_solver_create();
  cr_assert_eq(kn_sap_solve(ss, p, NULL, NULL, v_sap, NULL, NULL, &err), KN_OK, "%s", err.msg);
  kn_sap_solver_free(ss);
  const double A[9] = {2.0, 0.1, 0.0, 0.1, 3.0, 0.2, 0.0, 0.2, 4.0}, vs[3] = {0.1, -0.2, 0.3};
  dense_clique dc = {.A = A, .vs = vs};
  kn_clique q = {&dense_ops, &dc};
  kn_nl_problem prob = {.ncliques = 1, .cliques = &q, .robot = p, .potential = 1};
  kn_nl_solver* s = kn_nl_solver_create();
  kn_nl_stats st;
  cr_assert_eq(kn_nl_solve(s, &prob, NULL, v0, v, &st, &err), KN_OK, "%s", err.msg);
  for (int k = 0; k < 3; k++)
    cr_expect(fabs(v[k] - v_sap[k]) < 1e-6, "v%d = %.12g, SAP %.12g (%d iterations)", k, v[k], v_sap[k], st.iterations);
  kn_nl_solver_free(s);
  kn_sap_problem_free(p);
}

/* A contact term whose reported Hessian drops its negative curvature (as ipc's per-pair PSD
 * projection does): energy -k v_z^2 / 2, Hessian 0. With the point mass's m |v - v*|^2 / 2 the
 * minimizer is v_z = m v*_z / (m - k); the model's curvature along z is m, the true one m - k. */
typedef struct {
  double k;
} dropped_term;
static kn_status dropped_eval(void* self, const double* v, double* E, double* r, kn_nl_triplets* T,
                              kn_nl_triplets* S, kn_error* err) {
  (void)T, (void)S, (void)err;
  const dropped_term* t = self;
  if (E) *E += -0.5 * t->k * v[2] * v[2];
  r[2] += -t->k * v[2];
  return KN_OK;
}

/* Newton's full steps along p are short by m / (m - k) = 10: without kn_nl_options.extend_steps it
 * converges linearly at k / m = 0.9 an iteration (from |v*_z| = 0.1 to 1e-8 m/s: ~150 iterations, the
 * options' 100 are not enough); with it the secant's rho = (m - k) / m = 0.1 < 1/2 extends the first
 * step to 1 / rho = 10 times, the quadratic's exact minimizer, within round-off */
Test(nonlinear, extend_steps_recovers_curvature_the_hessian_dropped) {
  point_mass pm = {.m = 2.0, .x = {0, 0, 1}, .v = {0, 0, 0}};
  pm_begin(&pm, 0.01, (double[3]){0, 0, -19.62});
  kn_clique q = {&point_mass_ops, &pm};
  dropped_term dt = {.k = 1.8};
  kn_nl_problem prob = {.ncliques = 1, .cliques = &q, .potential = 1,
                        .contact = {.eval = dropped_eval, .self = &dt}};
  const double vz = pm.m * pm.vstar[2] / (pm.m - dt.k); /* -0.981 m/s */
  kn_nl_solver* s = kn_nl_solver_create();
  double v[3];
  kn_nl_stats st;
  kn_error err = {0};
  kn_nl_options o = kn_nl_options_default();
  cr_expect_neq(kn_nl_solve(s, &prob, &o, pm.v, v, &st, &err), KN_OK, "converged without the extension");
  o.extend_steps = 1;
  cr_assert_eq(kn_nl_solve(s, &prob, &o, pm.v, v, &st, &err), KN_OK, "%s", err.msg);
  cr_log_info("extend_steps: %d iterations, %d line-search evaluations, v_z %.17g (exact %.17g)", st.iterations,
              st.line_search_iterations, v[2], vz);
  cr_expect_leq(st.iterations, 2, "%d iterations", st.iterations);
  cr_expect(fabs(v[2] - vz) <= 1e-8 * (1 + fabs(vz)), "v_z %.17g, exact %.17g", v[2], vz);
  for (int k = 0; k < 2; k++) cr_expect(fabs(v[k]) < 1e-14, "v%d = %.3g", k, v[k]);
  kn_nl_solver_free(s);
}

/* A stiff spring on v_z, E = k (v_z - w)^2 / 2 with k / m = 1e12 and w = v*_z (the minimizer is w,
 * a double), whose gradient carries a constant 1e-7 N s that no representable v_z can cancel (its
 * root lies 5e-20 m/s from w, far below an ulp of w): the round-off floor of a stiff assembled
 * gradient (the twisted rods at h 2 s: max |D r| stuck at 3.902e-7 m/s against eps_d 3.05e-7, |p|
 * 8e-17). D r's floor is 5e-8 m/s (5 tol), the Newton step's 5e-20: blind, and v_z cannot move. */
typedef struct {
  double k, w, noise;
} floor_term;
static kn_status floor_eval(void* self, const double* v, double* E, double* r, kn_nl_triplets* T,
                            kn_nl_triplets* S, kn_error* err) {
  (void)S, (void)err;
  const floor_term* t = self;
  if (E) *E += 0.5 * t->k * (v[2] - t->w) * (v[2] - t->w);
  r[2] += t->k * (v[2] - t->w) + t->noise;
  if (T) kn_nl_triplets_add(T, 2, 2, t->k);
  return KN_OK;
}

/* the point mass (2 kg at 1 m, h 0.01 s) with the stiff spring carrying noise, solved to abs_tol
 * 1e-8 m/s with the step test and the given floor_step: status, v, statistics */
typedef struct {
  kn_status status;
  double v[3];
  kn_nl_stats st;
  floor_term ft;
  double m;
} floor_run;
static floor_run floor_solve(double noise, double floor_step) {
  point_mass pm = {.m = 2.0, .x = {0, 0, 1}, .v = {0, 0, 0}};
  pm_begin(&pm, 0.01, (double[3]){0, 0, -19.62});
  kn_clique q = {&point_mass_ops, &pm};
  floor_run r = {.ft = {.k = 2e12, .w = pm.vstar[2], .noise = noise}, .m = pm.m};
  kn_nl_problem prob = {.ncliques = 1, .cliques = &q, .potential = 1, .contact = {.eval = floor_eval, .self = &r.ft}};
  kn_nl_options o = kn_nl_options_default();
  o.abs_tol = 1e-8, o.rel_tol = 0, o.step_test = 1, o.floor_step = floor_step;
  kn_nl_solver* s = kn_nl_solver_create();
  kn_error err = {0};
  r.status = kn_nl_solve(s, &prob, &o, pm.v, r.v, &r.st, &err);
  kn_nl_solver_free(s);
  return r;
}

/* Every blind step is accepted (the energy cannot tell) and the residual stays at the floor: before
 * the round-off-floor stop the solve ran to the iteration cap and failed; now it ends at the first
 * blind step that does not halve D r, at the minimizer, and reports the floor */
Test(nonlinear, round_off_floor_ends_the_solve) {
  floor_run r = floor_solve(1e-7, 0);
  cr_assert_eq(r.status, KN_OK);
  cr_log_info("round-off floor: %d iterations, residual %.3g, v_z %.17g (w %.17g)", r.st.iterations, r.st.residual,
              r.v[2], r.ft.w);
  cr_expect_leq(r.st.iterations, 5, "%d iterations", r.st.iterations);
  cr_expect(fabs(r.st.residual - r.ft.noise / r.m) <= 1e-3 * r.ft.noise / r.m, "reported residual %.6g: the floor 5e-8",
            r.st.residual);
  cr_expect(r.v[2] == r.ft.w, "v_z %.17g, the minimizer %.17g", r.v[2], r.ft.w);
}

/* The same spring with 1000 times the noise: the minimizer w - noise / k is 5e-17 m/s below w,
 * ~4 ulps, and at the double nearest it D r is k times that rounding over m: 5.5e-6 m/s here (550
 * tol), beyond the blind-step rule's 100 tol, while the Newton step is below an ulp. With
 * floor_step (the step below which no position moves by an ulp: 16 eps |x| / h = 3.6e-13 m/s for
 * the mass at 1 m, h 0.01 s) the solve ends there; without it, it runs to the cap and fails (the
 * twisted rods at h 1 s with their ends on the arcs: D r 1.7e-4-3.8e-4 m/s, |p| 1.6e-16 m/s) */
Test(nonlinear, a_step_below_the_positions_round_off_ends_the_solve) {
  cr_expect_neq(floor_solve(1e-4, 0).status, KN_OK, "converged at 550 tol without floor_step");
  floor_run r = floor_solve(1e-4, 16 * DBL_EPSILON * 1.0 / 0.01);
  cr_assert_eq(r.status, KN_OK);
  cr_log_info("floor_step: %d iterations, residual %.3g, v_z %.17g (w %.17g)", r.st.iterations, r.st.residual, r.v[2],
              r.ft.w);
  const double vmin = r.ft.w - r.ft.noise / r.ft.k, ulp = nextafter(fabs(vmin), INFINITY) - fabs(vmin);
  cr_expect_leq(r.st.iterations, 5, "%d iterations", r.st.iterations);
  cr_expect(r.st.residual > 100 * 1e-8 && r.st.residual <= r.ft.k * ulp / r.m,
            "reported residual %.6g: above 100 tol, within k ulp / m = %.3g", r.st.residual, r.ft.k * ulp / r.m);
  cr_expect(fabs(r.v[2] - vmin) <= ulp, "v_z %.17g, the minimizer %.17g", r.v[2], vmin);
}
