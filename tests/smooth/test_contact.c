/* The smooth_friction contact term (smooth/contact.c) in the shared nonlinear step: its Jacobian
 * against central differences of its residual in every regime (digest §5 T9), and T2, the
 * lag-sensitivity test with the digest's reference drifts. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "../support/point_mass.h"
#include "smooth/smooth.h"

/* Two point masses (cliques 0 and 1) and three contacts between them and the world, at v: the
 * assembled dr/dv against central differences of r, for the implicit term (not symmetric) and the
 * lagged one (whose r must also be the gradient of its energy). */
/* trapezoidal: the term of the trapezoidal rule (dt = dt0 = h / 2), the points with start velocities
 * (their start forces constant in v: the Jacobian is the same check; the start force itself against
 * the end force of a backward-Euler term over a vanishing step from the start state) */
static void fd_case(int lagged, double static_ratio, const double v0[6], int trapezoidal) {
  kn_nl_points P = {0};
  kn_point_map m0 = {.x0 = {0, 0, 0.0004}, .v0 = {0.02, -0.01, -0.003}, .n = 1, .col = {0}, .w = {1}},
               m1 = {.x0 = {0.1, 0, 0.0002}, .v0 = {-4e-4, 3e-4, 0.002}, .n = 1, .col = {0}, .w = {1}};
  int a = kn_nl_points_add(&P, &m0, 0, 3, NULL), b = kn_nl_points_add(&P, &m1, 3, 3, NULL);
  const double s = 1 / sqrt(3.0);
  kn_smooth_contact c[3] = {{.a = -1, .b = a, .n = {0, 0, 1}, .phi0 = 0.0004, .mu = 0.5},
                            {.a = -1, .b = b, .n = {0, 0, 1}, .phi0 = 0.0002, .mu = 0.3},
                            {.a = a, .b = b, .n = {s, s, s}, .phi0 = -0.0001, .mu = 0.4}};
  for (int i = 0; i < 3; i++) {
    double db;
    kn_smooth_penalty(c[i].phi0, 1e-3, 1e4, &db, NULL);
    c[i].lambda0 = -db;
  }
  kn_smooth_term t = {.dt = 0.01, .delta = 1e-3, .kappa = 1e4, .eps = 1e-3, .static_ratio = static_ratio,
                      .stribeck_speed = 1e-2, .viscous = lagged ? 0 : 0.1, .lagged = lagged, .points = &P, .c = c, .n = 3};
  if (trapezoidal) {
    t.dt = t.dt0 = 0.005;
    for (int i = 0; i < 3; i++) kn_nl_pair_start_velocity(&P, c[i].a, c[i].b, c[i].w0);
    kn_smooth_term_start(&t, c);
    kn_smooth_term be = t;
    be.dt = 1e-300, be.dt0 = 0;
    const double vs[6] = {0.02, -0.01, -0.003, -4e-4, 3e-4, 0.002};
    for (int i = 0; i < 3; i++) {
      double f[3];
      kn_smooth_term_force(&be, i, vs, f);
      for (int k = 0; k < 3; k++)
        cr_expect(fabs(f[k] + c[i].f0[k]) <= 1e-12 * (1 + fabs(f[k])), "contact %d: start force %.12g, end force at "
                  "the start %.12g", i, -c[i].f0[k], f[k]);
    }
    cr_expect(c[0].f0[2] < 0 && c[2].f0[0] < 0, "the penetrating and touching contacts push apart");
  }
  kn_nl_triplets T = {0};
  kn_nl_triplets_reset(&T, 6);
  double r[6] = {0}, E = 0, v[6];
  kn_error err = {0};
  cr_assert_eq(kn_smooth_term_eval(&t, v0, &E, r, &T, NULL, &err), KN_OK);
  double J[36] = {0};
  for (int k = 0; k < T.nnz; k++) J[T.i[k] * 6 + T.j[k]] += T.x[k];
  const double h = 1e-8;
  double worst = 0;
  for (int j = 0; j < 6; j++) {
    double rp[6] = {0}, rm[6] = {0}, Ep = 0, Em = 0;
    memcpy(v, v0, sizeof v);
    v[j] += h;
    kn_smooth_term_eval(&t, v, &Ep, rp, NULL, NULL, &err);
    v[j] -= 2 * h;
    kn_smooth_term_eval(&t, v, &Em, rm, NULL, NULL, &err);
    for (int i = 0; i < 6; i++) {
      double fd = (rp[i] - rm[i]) / (2 * h), scale = fmax(1e-3, fabs(J[i * 6 + j]));
      worst = fmax(worst, fabs(fd - J[i * 6 + j]) / scale);
      cr_expect(fabs(fd - J[i * 6 + j]) <= 1e-5 * scale, "dr%d/dv%d: %.10g, FD %.10g", i, j, J[i * 6 + j], fd);
    }
    if (lagged) {
      double fd = (Ep - Em) / (2 * h);
      cr_expect(fabs(fd - r[j]) <= 1e-6 * fmax(1e-3, fabs(r[j])), "dE/dv%d: r %.10g, FD %.10g", j, r[j], fd);
    }
  }
  cr_log_info("lagged %d static_ratio %g trapezoidal %d: worst relative Jacobian error %.2e", lagged, static_ratio,
              trapezoidal, worst);
  kn_nl_triplets_free(&T);
  kn_nl_points_free(&P);
}

/* sliding fast (|v_t| > eps), in the pre-sliding transition, and Stribeck's decaying branch */
Test(smooth_contact, jacobian_sliding) { fd_case(0, 1.0, (double[6]){0.3, -0.2, -0.01, -0.1, 0.05, 0.02}, 0); }
Test(smooth_contact, jacobian_presliding) { fd_case(0, 1.0, (double[6]){3e-4, -2e-4, -0.01, -1e-4, 4e-4, 0.005}, 0); }
Test(smooth_contact, jacobian_stribeck) { fd_case(0, 1.5, (double[6]){0.004, -0.002, -0.01, -0.003, 0.005, 0.002}, 0); }
Test(smooth_contact, jacobian_lagged) { fd_case(1, 1.0, (double[6]){3e-4, -0.2, -0.01, -0.1, 4e-4, 0.02}, 0); }
Test(smooth_contact, jacobian_trapezoidal) { fd_case(0, 1.5, (double[6]){0.3, -0.2, -0.01, -1e-4, 4e-4, 0.005}, 1); }
Test(smooth_contact, jacobian_lagged_trapezoidal) { fd_case(1, 1.0, (double[6]){3e-4, -0.2, -0.01, -0.1, 4e-4, 0.02}, 1); }

/* T2 (digest §5): a unit point mass on a penalty floor (delta 1e-3, kappa = N0 / (0.75 delta),
 * N0 = 10 N, started at d = delta / 2), loaded down by N(t) = 10 + 100 t and pushed sideways by
 * F(t) = 0.99 mu N(t), mu 0.5, eps 1e-3, backward Euler for 1 s (loads at the step's end). The
 * drift along the push: implicit friction creeps at about 0.9 eps; the lagged capacity
 * mu lambda(q_n) trails the growing load and slips. Reference drifts (the digest's model): implicit
 * 9.00e-4 (h 0.01) .. 9.27e-4 (h 5e-4), lagged 1.42e-1 at h 0.01. */
static double t2_drift(double h, int lagged) {
  const double delta = 1e-3, N0 = 10, mu = 0.5;
  point_mass pm = {.m = 1.0, .x = {0, 0, delta / 2}};
  kn_clique q = {&point_mass_ops, &pm};
  kn_nl_points P = {0};
  kn_smooth_contact c = {.a = -1, .n = {0, 0, 1}, .mu = mu};
  double lambda_ref = 0;
  kn_smooth_term t = {.dt = h, .delta = delta, .kappa = N0 / (0.75 * delta), .eps = 1e-3, .static_ratio = 1,
                      .stribeck_speed = 1e-2, .lagged = lagged, .points = &P, .c = &c, .n = 1, .lambda_ref = &lambda_ref};
  kn_nl_problem prob = {.ncliques = 1, .cliques = &q, .contact = {.eval = kn_smooth_term_eval, .lag = kn_smooth_term_lag, .self = &t}, .potential = lagged};
  kn_nl_solver* s = kn_nl_solver_create();
  kn_error err = {0};
  int steps = (int)lround(1.0 / h);
  for (int k = 1; k <= steps; k++) {
    double tk = k * h, N = 10 + 100 * tk;
    pm_begin(&pm, h, (double[3]){0.99 * mu * N, 0, -N});
    kn_point_map m;
    pm_point_map(&pm, 0, NULL, h, &m);
    kn_nl_points_reset(&P);
    c.b = kn_nl_points_add(&P, &m, 0, 3, NULL);
    c.phi0 = pm.x[2];
    double db;
    kn_smooth_penalty(c.phi0, delta, t.kappa, &db, NULL);
    c.lambda0 = -db;
    double v[3];
    cr_assert_eq(kn_nl_solve(s, &prob, NULL, pm.v, v, NULL, &err), KN_OK, "h %g step %d: %s", h, k, err.msg);
    pm_advance(&pm, h, v);
  }
  kn_nl_solver_free(s);
  kn_nl_points_free(&P);
  return pm.x[0];
}

Test(smooth_contact, t2_implicit_friction_holds_for_every_step) {
  const double hs[] = {0.01, 0.005, 0.002, 0.001, 0.0005}, ref[] = {9.00e-4, 9.02e-4, 9.10e-4, 9.17e-4, 9.27e-4};
  for (int i = 0; i < 5; i++) {
    double d = t2_drift(hs[i], 0);
    cr_log_info("T2 implicit h %g: drift %.4e m (digest %.2e)", hs[i], d, ref[i]);
    cr_expect(d <= 1.2e-3 && d > 0, "h %g: drift %.4e m, expected <= 1.2e-3 (digest %.2e)", hs[i], d, ref[i]);
    cr_expect(fabs(d - ref[i]) < 0.05 * ref[i], "h %g: drift %.4e m, digest %.2e", hs[i], d, ref[i]);
  }
}

Test(smooth_contact, t2_lagged_friction_slips) {
  double d = t2_drift(0.01, 1);
  cr_log_info("T2 lagged h 0.01: drift %.4e m (digest 1.42e-1)", d);
  cr_expect(d > 0.05, "lagged drift %.4e m at h = 0.01, expected > 0.05 (digest 1.42e-1)", d);
}

/* The volume constraint (§3.5) of a closed octahedron (six vertices as nodal points of one clique):
 * r is the gradient of its energy and the assembled Jacobian (with the rank-one part) its
 * derivative, against central differences; at the rest shape and velocity 0 both vanish. */
Test(smooth_contact, volume_constraint_gradient_and_hessian) {
  const double X[18] = {1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1};
  const int tri[24] = {0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5};
  kn_nl_points P = {0};
  int pts[6];
  for (int a = 0; a < 6; a++) {
    kn_point_map m = {.x0 = {X[3 * a], X[3 * a + 1], X[3 * a + 2]}, .n = 1, .col = {3 * a}, .w = {1}};
    pts[a] = kn_nl_points_add(&P, &m, 0, 18, NULL);
  }
  double x[18], dV[18];
  double V0 = kn_smooth_surface_volume(X, 6, tri, 8, NULL);
  cr_assert(fabs(V0 - 4.0 / 3.0) < 1e-14, "octahedron volume %.17g", V0);
  kn_smooth_volume z = {.nvert = 6, .ntri = 8, .point = pts, .tri = tri, .V0 = V0, .coef = 101325 / (V0 * 0.01),
                        .x = x, .dV = dV};
  kn_smooth_term t = {.dt = 0.01, .delta = 1e-3, .kappa = 1e4, .eps = 1e-3, .static_ratio = 1, .stribeck_speed = 1e-2,
                      .points = &P, .volumes = &z, .nvolumes = 1};
  double v0[18], r[18] = {0}, E = 0;
  kn_error err = {0};
  cr_assert_eq(kn_smooth_term_eval(&t, (double[18]){0}, &E, r, NULL, NULL, &err), KN_OK);
  for (int i = 0; i < 18; i++) cr_expect(fabs(r[i]) < 1e-9, "r%d = %g at rest", i, r[i]);
  cr_expect(fabs(E) < 1e-20, "E at rest %g", E);
  for (int i = 0; i < 18; i++) v0[i] = 3 * sin(0.9 * i + 0.3); /* squeezes and stretches it by a few % */
  kn_nl_triplets T = {0};
  kn_nl_triplets_reset(&T, 18);
  memset(r, 0, sizeof r);
  E = 0;
  cr_assert_eq(kn_smooth_term_eval(&t, v0, &E, r, &T, NULL, &err), KN_OK);
  double J[18 * 18] = {0};
  for (int k = 0; k < T.nnz; k++) J[T.i[k] * 18 + T.j[k]] += T.x[k];
  const double h = 1e-6;
  for (int j = 0; j < 18; j++) {
    double v[18], rp[18] = {0}, rm[18] = {0}, Ep = 0, Em = 0;
    memcpy(v, v0, sizeof v);
    v[j] += h;
    kn_smooth_term_eval(&t, v, &Ep, rp, NULL, NULL, &err);
    v[j] -= 2 * h;
    kn_smooth_term_eval(&t, v, &Em, rm, NULL, NULL, &err);
    double fd = (Ep - Em) / (2 * h);
    cr_expect(fabs(fd - r[j]) <= 1e-6 * fmax(1, fabs(r[j])), "dE/dv%d: r %.10g, FD %.10g", j, r[j], fd);
    for (int i = 0; i < 18; i++) {
      double fdj = (rp[i] - rm[i]) / (2 * h);
      cr_expect(fabs(fdj - J[i * 18 + j]) <= 1e-6 * fmax(1, fabs(J[i * 18 + j])), "dr%d/dv%d: %.10g, FD %.10g", i, j,
                J[i * 18 + j], fdj);
    }
  }
  kn_nl_triplets_free(&T);
  kn_nl_points_free(&P);
}

/* The trapezoidal rule through the contact term and the solver: a unit point mass dropped from rest
 * 2 mm above a penalty floor (delta 1e-3, kappa 1e4: omega h from 0 to ~30 while it bounces), no
 * friction, h 0.01, 100 steps, its map x(v) = x_n + h/2 v_n + h/2 v and the term's dt = dt0 = h/2,
 * against the scalar rule m (v - v_n) = -h m g + h/2 (lambda(z_n) + lambda(z_n+1)), z_n+1 = z_n + h/2
 * (v_n + v), solved by bisection (its residual increases in v): the same heights to 1e-8 m (measured
 * 2.6e-9 m: Newton stops at 1e-8 m/s, 5e-11 m a step, over 100 steps of a stiff bounce). */
Test(smooth_contact, trapezoidal_bounce_matches_the_scalar_rule) {
  const double h = 0.01, delta = 1e-3, kappa = 1e4, g = 9.81;
  point_mass pm = {.m = 1.0, .x = {0, 0, 2e-3}};
  kn_clique q = {&point_mass_ops, &pm};
  kn_nl_points P = {0};
  kn_smooth_contact c = {.a = -1, .n = {0, 0, 1}, .mu = 0};
  kn_smooth_term t = {.dt = h / 2, .dt0 = h / 2, .delta = delta, .kappa = kappa, .eps = 1e-3, .static_ratio = 1,
                      .stribeck_speed = 1e-2, .points = &P, .c = &c, .n = 1};
  kn_nl_problem prob = {.ncliques = 1, .cliques = &q, .contact = {.eval = kn_smooth_term_eval, .self = &t}};
  kn_nl_solver* s = kn_nl_solver_create();
  kn_error err = {0};
  double z = 2e-3, vz = 0, worst = 0, zmin = z;
  for (int k = 1; k <= 100; k++) {
    pm_begin(&pm, h, (double[3]){0, 0, -g}); /* v* = v_n + h g: gravity explicit in both halves */
    kn_point_map m;
    pm_point_map(&pm, 0, NULL, h, &m);
    for (int a = 0; a < 3; a++) m.x0[a] += h / 2 * pm.v[a];
    kn_nl_points_reset(&P);
    c.b = kn_nl_points_add(&P, &m, 0, 3, NULL);
    c.phi0 = pm.x[2];
    kn_nl_pair_start_velocity(&P, c.a, c.b, c.w0);
    kn_smooth_term_start(&t, &c);
    double v[3];
    cr_assert_eq(kn_nl_solve(s, &prob, NULL, pm.v, v, NULL, &err), KN_OK, "step %d: %s", k, err.msg);
    for (int a = 0; a < 3; a++) pm.x[a] += h / 2 * (pm.v[a] + v[a]), pm.v[a] = v[a];
    /* the scalar rule */
    double db0, lo = vz - 100, hi = vz + 100;
    kn_smooth_penalty(z, delta, kappa, &db0, NULL);
    for (int it = 0; it < 200; it++) {
      double mid = 0.5 * (lo + hi), db1;
      kn_smooth_penalty(z + h / 2 * (vz + mid), delta, kappa, &db1, NULL);
      double r = (mid - vz) + h * g + h / 2 * (db0 + db1); /* lambda = -b' */
      if (r > 0) hi = mid;
      else lo = mid;
    }
    double v1 = 0.5 * (lo + hi);
    z += h / 2 * (vz + v1), vz = v1;
    worst = fmax(worst, fabs(pm.x[2] - z)), zmin = fmin(zmin, z);
  }
  cr_log_info("trapezoidal bounce: lowest %.4e m, largest height difference %.2e m", zmin, worst);
  cr_expect(zmin < 0.5 * delta, "it reaches the penalty (lowest %g m)", zmin);
  cr_expect(worst <= 1e-8, "the solver's heights differ from the scalar rule's by %g m", worst);
  kn_nl_solver_free(s);
  kn_nl_points_free(&P);
}
