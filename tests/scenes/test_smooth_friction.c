/* The smooth_friction backend through the whole step (detection, the shared Newton solve, q (+)
 * dt v), with its defaults: digest implicit-smooth-friction.md §5 T1. A stiff 0.1 m, 1 kg cube
 * launched at v0 = 0.1 m/s down a 10 degree incline with mu = 0.177 decelerates at
 * a = g (mu cos - sin) = 0.0065020 m/s^2 and stops after x_T = v0^2 / (2 a) = 0.768992 m at
 * T = 15.3798 s. Pass (digest): |x_stop - 0.769| <= v0 h / 2 + 0.002 m (backward Euler), <= 0.002 m
 * (the trapezoidal rule, contact.smooth_friction.integrator) and |t_stop - 15.38| <= eps / a + 2 h
 * for every h in {0.1, 0.05, 0.02, 0.01}, "stopped" being the first step whose downhill speed is
 * <= eps (a smoothed block creeps at 0.94 eps afterwards). The lagged variant (friction's lambda at
 * the step start) misses it, as the paper shows. */
#include "scene_util.h"

static const double theta = 10 * M_PI / 180, v0 = 0.1, eps = 1e-3; /* eps: the backend's default */

typedef enum { BACKWARD_EULER, LAGGED, TRAPEZOIDAL } t1_variant;

/* The trapezoidal rule's start: the block at its penalty equilibrium. The analytic solution
 * assumes a block that slides on the incline with a constant normal force; the penalty contact is a
 * spring (4 corners, k = 6 kappa / delta (delta - d) each, omega ~ 800 rad/s), and the trapezoidal
 * rule does not damp it (|R| = 1 for omega h >> 1; backward Euler's 1 / (omega h) kills it in a
 * step). Started off its equilibrium, touching at d = 0 as the backward-Euler test starts, the block
 * keeps bouncing on its corners (measured: its first step already moves it uphill for h >= 0.02, and
 * at h = 0.01 it never slows below eps in 30 s); even a small swing biases the mean normal force,
 * lambda being quadratic in the gap, against a margin of friction over the downhill pull of only
 * 0.38 %. So the block starts where the analytic solution has it, in equilibrium normally and in
 * pitch: N = m g cos theta shared by
 * the corners, the friction mu N at the base tilting load onto the downhill pair, N_f - N_b =
 * mu N / 2 (moments about the centre of mass), each corner's gap from lambda = 3 kappa / delta
 * (delta - d)^2 at the backend's default kappa and delta. */
static void equilibrium_pose(double* centre, double* pitch) {
  const double kappa = 1e5, delta = 1e-4, half = 0.05, mu = 0.177, N = 9.81 * cos(theta);
  const double Nf = N / 4 * (1 + mu), Nb = N / 4 * (1 - mu);
  const double df = delta - sqrt(Nf * delta / (3 * kappa)), db = delta - sqrt(Nb * delta / (3 * kappa));
  const double beta = asin((df - db) / (2 * half)); /* the bottom face turned by beta about y */
  *centre = (df + db) / 2 + half * cos(beta);       /* the centre's height above the incline */
  *pitch = -theta + beta;
  cr_assert(df > 0 && db > df && db < delta, "corner gaps %g (downhill), %g (uphill)", df, db);
}

// (h, variant) => x_stop, t_stop
static void t1_run(double h, t1_variant variant, double* x_stop, double* t_stop) {
  const double s = sin(theta), c = cos(theta), half = 0.05;
  double centre = half, pitch = -theta;
  if (variant == TRAPEZOIDAL) equilibrium_pose(&centre, &pitch);
  const char* options = variant == LAGGED        ? ", smooth_friction: {lagged: true}"
                        : variant == TRAPEZOIDAL ? ", smooth_friction: {integrator: trapezoidal}"
                                                 : "";
  char yaml[2048];
  snprintf(yaml, sizeof yaml,
           "time_step: %g\nduration: 30\n"
           "contact: {backend: smooth_friction%s}\n"
           "objects:\n"
           "  - {name: slope, shape: {halfspace: {normal: [%.17g, 0, %.17g]}}, fixed: true, friction: 0.177}\n"
           "  - name: block\n"
           "    shape: {box: [0.1, 0.1, 0.1]}\n"
           "    mass: 1.0\n"
           "    pose: {xyz: [%.17g, 0, %.17g], rpy: [0, %.17g, 0]}\n"
           "    velocity: [0, 0, 0, %g, 0, 0]\n"
           "    friction: 0.177\n",
           h, options, -s, c, -s * centre, c * centre, pitch, -v0);
  test_world t = tw_create(yaml);
  double* q = tw_object_q(&t, "block");
  double x0[3] = {q[0], q[1], q[2]}, u_prev = 0;
  *x_stop = NAN, *t_stop = NAN;
  for (int k = 1; k <= (int)lround(30 / h); k++) {
    tw_step(&t, 1);
    double u = -(q[0] - x0[0]) * c - (q[2] - x0[2]) * s; /* along the downhill tangent */
    if ((u - u_prev) / h <= eps) {
      *x_stop = u, *t_stop = k * h;
      break;
    }
    u_prev = u;
  }
  tw_free(&t);
}

Test(smooth_friction, t1_block_stops_at_the_analytic_distance_for_every_step) {
  const double a = 9.81 * (0.177 * cos(theta) - sin(theta)), xT = v0 * v0 / (2 * a), T = v0 / a;
  cr_assert(fabs(xT - 0.768992) < 1e-5 && fabs(T - 15.3798) < 1e-3, "x_T %.6f T %.4f", xT, T);
  const double hs[] = {0.1, 0.05, 0.02, 0.01};
  for (int i = 0; i < 4; i++) {
    double x, ts;
    t1_run(hs[i], BACKWARD_EULER, &x, &ts);
    cr_log_info("T1 h %g: stops at %.5f m, t %.3f s (analytic %.5f m, %.3f s)", hs[i], x, ts, xT, T);
    cr_expect(fabs(x - 0.769) <= v0 * hs[i] / 2 + 0.002, "h %g: x_stop %.5f m, expected 0.769 +- %.4f", hs[i], x,
              v0 * hs[i] / 2 + 0.002);
    cr_expect(fabs(ts - 15.38) <= eps / a + 2 * hs[i], "h %g: t_stop %.3f s, expected 15.38 +- %.3f", hs[i], ts,
              eps / a + 2 * hs[i]);
  }
}

/* digest T1, TR row (eps 1e-3, a 1-D model): 0.76899, 0.76894, 0.76893, 0.76892 m for h = 0.1 ..
 * 0.01; the block's downhill distance per step is h (v_n + v_n+1) / 2 here, so "stopped" is the
 * first step whose mean speed is <= eps */
Test(smooth_friction, t1_trapezoidal_block_stops_at_the_analytic_distance_for_every_step) {
  const double a = 9.81 * (0.177 * cos(theta) - sin(theta));
  const double hs[] = {0.1, 0.05, 0.02, 0.01};
  for (int i = 0; i < 4; i++) {
    double x, ts;
    t1_run(hs[i], TRAPEZOIDAL, &x, &ts);
    cr_log_info("T1 trapezoidal h %g: stops at %.5f m, t %.3f s", hs[i], x, ts);
    cr_expect(fabs(x - 0.769) <= 0.002, "h %g: x_stop %.5f m, expected 0.769 +- 0.002", hs[i], x);
    cr_expect(fabs(ts - 15.38) <= eps / a + 2 * hs[i], "h %g: t_stop %.3f s, expected 15.38 +- %.3f", hs[i], ts,
              eps / a + 2 * hs[i]);
  }
}

Test(smooth_friction, t1_lagged_friction_misses_the_stop) {
  const double hs[] = {0.1, 0.05, 0.02, 0.01};
  int missed = 0;
  for (int i = 0; i < 4; i++) {
    double x, ts;
    t1_run(hs[i], LAGGED, &x, &ts);
    cr_log_info("T1 lagged h %g: stops at %.5f m, t %.3f s", hs[i], x, ts);
    missed += !(fabs(x - 0.769) <= v0 * hs[i] / 2 + 0.002);
  }
  cr_expect(missed > 0, "the lagged variant met T1 for every h");
}

/* A robot grasp on smooth_friction with its defaults: the regression suite's 500 g box, picked by the
 * PD-driven arm and its two-finger gripper (mimic coupler, effort limit) and shaken, loaded with
 * --set contact.backend=smooth_friction; every check of the scene but SAP's golden trajectory must
 * pass (lifted above 0.16 m, held within 5 mm during the shake, squeezed with 10-40 N, no deep
 * penetration, Newton within its iteration limit). */
Test(smooth_friction, grasp_lift_and_shake_a_box) {
  test_world t = tw_regression("box_50mm_500g.yaml", "smooth_friction");
  tw_step(&t, lround(t.scene->duration / t.scene->time_step));
  tw_expect_checks_pass(&t, "box_50mm_500g", 5);
  tw_free(&t);
}

/* contact.smooth_friction.integrator: an unknown value and a scene with an MPM body (whose grid has
 * only backward Euler) are refused at load, naming the key */
Test(smooth_friction, trapezoidal_rule_refused_for_mpm_bodies) {
  const char* mpm = "time_step: 0.01\n"
                    "contact: {backend: smooth_friction, smooth_friction: {integrator: trapezoidal}}\n"
                    "deformables:\n"
                    "  - {name: dough, model: mpm, shape: {box: [0.1, 0.1, 0.1]}, resolution: 0.05}\n";
  const char* bad = "time_step: 0.01\ncontact: {backend: smooth_friction, smooth_friction: {integrator: midpoint}}\n";
  kn_scene* sc = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(mpm, strlen(mpm), "inline.yaml", &sc, &err), KN_ERR_UNSUPPORTED, "%s", err.msg);
  cr_assert(strstr(err.msg, "contact.smooth_friction.integrator") && strstr(err.msg, "dough"), "%s", err.msg);
  cr_assert_neq(kn_scene_load_string(bad, strlen(bad), "inline.yaml", &sc, &err), KN_OK);
  cr_assert(strstr(err.msg, "integrator"), "%s", err.msg);
}
