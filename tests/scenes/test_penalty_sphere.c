/* The penalty backend, penalty-coulomb-friction.md §6.2 (the paper's plane_sph): a solid rigid
 * sphere, r = 0.2 m, released at rest on a theta = 0.2 rad incline under g = 9.8 m/s^2, with the
 * backend's defaults (k = 1e4 N/m, tolerance 1e-8 m/s). Rolling needs no special treatment: the
 * anchor of the one contact sticks while the sphere rolls (its material point under the contact
 * changes every step; the rigid anchors are matched by the nearest point), and below the no-slip
 * threshold mu* = (2/7) tan theta = 0.05792 the contact slides on the cone.
 *   mu = 0.3 rolls:  a = (5/7) g sin theta = 1.39069 m/s^2, omega = v / r;
 *   mu = 0.01 slips: a = g (sin theta - mu cos theta) = 1.85091 m/s^2,
 *                    d omega/dt = 5 mu g cos theta / (2 r) = 1.20058 rad/s^2.
 * The sphere here is the exact primitive (one contact point, not the paper's faceted mesh), so the
 * digest's 5 % is tightened to 1e-3: what remains is the penalty's sink (m g cos theta / k = 3.2e-5 m
 * at the default k, which shortens the lever arm to r - sink in the rolling constraint, so
 * omega (r - sink) / v is compared)
 * and the landing transient. Density 1 as the digest's other scenes (m = 0.0335 kg); the scene's keys
 * are the paper's geometry, gravity and friction only.
 * Measured: rolling v(1 s) 1.39067 m/s (a T 1.39069), omega (r - sink) / v 0.99979; slipping
 * 1.85091 m/s (1.85091) and omega 1.20049 rad/s (1.20058).
 * 100 steps of dt 0.01 s per case: well under a second in Release. */
#include "scene_util.h"

static const double theta = 0.2, g = 9.8, r = 0.2, dt = 0.01, T = 1.0;

typedef struct {
  double v;     /* downhill speed at T */
  double w;     /* |angular velocity| at T */
  double sink;  /* the centre's height above the plane short of r at T */
} sphere_run;

// a ball of radius r and `mass` ("density: 1" when NULL) on a slope of angle theta after 1 s
static sphere_run sphere_on(double theta, double r, const char* mass, double mu) {
  const double s = sin(theta), c = cos(theta);
  char yaml[1024];
  snprintf(yaml, sizeof yaml,
           "time_step: %g\nduration: %g\ngravity: [0, 0, %g]\n"
           "contact: {backend: penalty}\n"
           "objects:\n"
           "  - {name: slope, shape: {halfspace: {normal: [%.17g, 0, %.17g]}}, fixed: true, friction: %g}\n"
           "  - {name: ball, shape: {sphere: %g}, %s, pose: {xyz: [%.17g, 0, %.17g]}, friction: %g}\n",
           dt, T, -g, -s, c, mu, r, mass ? mass : "density: 1", -s * r, c * r, mu);
  test_world t = tw_create(yaml);
  double* q = tw_object_q(&t, "ball");
  const double x0[3] = {q[0], q[1], q[2]};
  double u_prev = 0, u = 0;
  long steps = lround(T / dt);
  for (long k = 0; k < steps; k++) {
    u_prev = u;
    tw_step(&t, 1);
    u = -(q[0] - x0[0]) * c - (q[2] - x0[2]) * s;
  }
  const double* v = NULL;
  for (int i = 0; i < t.world->nobject; i++)
    if (strcmp(t.world->objects[i].name, "ball") == 0) v = t.world->trees[t.world->objects[i].tree].v;
  sphere_run out = {.v = (u - u_prev) / dt, .w = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]),
                    .sink = r - (-s * q[0] + c * q[2])};
  tw_free(&t);
  return out;
}

static sphere_run sphere(double mu) { return sphere_on(theta, r, NULL, mu); }

Test(penalty_sphere, rolls_with_mu_0_3) {
  const double a = 5.0 / 7.0 * g * sin(theta);
  cr_assert(fabs(a - 1.39069) < 1e-5, "analytic a %.6f", a);
  sphere_run o = sphere(0.3);
  cr_log_info("mu 0.3: v(1 s) = %.5f m/s (a T = %.5f), omega (r - sink) / v = %.5f, sink %.3e m", o.v, a * T,
              o.w * (r - o.sink) / o.v, o.sink);
  cr_expect(fabs(o.v - a * T) <= 1e-3 * a * T, "v(1 s) = %.5f m/s, rolling a T = %.5f (1e-3)", o.v, a * T);
  cr_expect(fabs(o.w * (r - o.sink) / o.v - 1) <= 1e-3, "no slip: omega (r - sink) / v = %.5f",
            o.w * (r - o.sink) / o.v);
}

Test(penalty_sphere, slips_with_mu_0_01) {
  const double a = g * (sin(theta) - 0.01 * cos(theta)), wdot = 5 * 0.01 * g * cos(theta) / (2 * r);
  cr_assert(fabs(a - 1.85091) < 1e-5 && fabs(wdot - 1.20058) < 1e-5, "analytic a %.6f, wdot %.6f", a, wdot);
  cr_assert(0.01 < 2.0 / 7.0 * tan(theta) && 0.3 > 2.0 / 7.0 * tan(theta), "mu* = %.5f", 2.0 / 7.0 * tan(theta));
  sphere_run o = sphere(0.01);
  cr_log_info("mu 0.01: v(1 s) = %.5f m/s (a T = %.5f), omega(1 s) = %.5f rad/s (wdot T = %.5f)", o.v, a * T, o.w,
              wdot * T);
  cr_expect(fabs(o.v - a * T) <= 1e-3 * a * T, "v(1 s) = %.5f m/s, slipping a T = %.5f (1e-3)", o.v, a * T);
  cr_expect(fabs(o.w - wdot * T) <= 1e-3 * wdot * T, "omega(1 s) = %.5f rad/s, wdot T = %.5f (1e-3)", o.w, wdot * T);
}

/* A fast roll (examples/fidelity/ball_slope_45_mu_0_3: r 0.1 m, 1 kg, 45 degrees, mu 0.3 > mu* =
 * 2/7): omega reaches v / r = 49.5 rad/s at 1 s, 0.50 rad a step. The contact point is the ball's
 * lowest point found again each step, no material point: had its spring end followed the material
 * point's arc (a box corner's, sim/mesh_arcs.c), it would read the point's rise r (1 - cos(omega dt))
 * = 12 mm as a gap and let the ball sink that deep. The sink is the spring's m g cos(45) / k =
 * 0.0693 mm at the default k 1e5 (the pair's stiffness); measured 0.069296 mm (1.0000 of it; 0.0654
 * with the rounded surface's Hertz point as the centre: it sits phi / 2 off the centre and rises
 * 4 um). No slip: omega (r - sink) / v = 0.99925, the slow roll's 1e-3 kept with 2x room (the
 * spring's slip grows with omega^2 dt). 100 steps: well under a second in Release. */
Test(penalty_sphere, a_fast_roll_stays_on_the_slope) {
  const double th = M_PI / 4, rr = 0.1, a = 5.0 / 7.0 * g * sin(th), sink = 1.0 * g * cos(th) / 1e5;
  cr_assert(0.3 > 2.0 / 7.0 * tan(th), "mu* = %.5f", 2.0 / 7.0 * tan(th));
  sphere_run o = sphere_on(th, rr, "mass: 1", 0.3);
  cr_log_info("45 deg, mu 0.3: v(1 s) = %.5f m/s (a T = %.5f), omega (r - sink) / v = %.5f, sink %.4e m (m g cos / k "
              "= %.4e)", o.v, a * T, o.w * (rr - o.sink) / o.v, o.sink, sink);
  cr_expect(fabs(o.sink - sink) <= 0.01 * sink, "sink %.4e m, the spring's m g cos(45) / k = %.4e", o.sink, sink);
  cr_expect(fabs(o.v - a * T) <= 1e-3 * a * T, "v(1 s) = %.5f m/s, rolling a T = %.5f (1e-3)", o.v, a * T);
  cr_expect(fabs(o.w * (rr - o.sink) / o.v - 1) <= 2e-3, "no slip: omega (r - sink) / v = %.5f",
            o.w * (rr - o.sink) / o.v);
}
