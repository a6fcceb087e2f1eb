/* A ball and a block on rigid slopes (digest §9 T12 and the classic block-on-incline), run through
 * the whole SAP step: detection, free motion, friction cones, q (+) dt v.
 *
 * Ball (solid sphere) on a slope of angle theta, friction mu (pair value = mu, harmonic rule):
 * rolls without slip when mu >= (2/7) tan(theta), a = (5/7) g sin(theta); otherwise slides with
 * a = g (sin(theta) - mu cos(theta)). T12's numbers at g = 9.81, theta = 45 deg: 6.936717523
 * (mu 0), 5.549374019 (0.2), 4.954798231 (0.3, 0.6). The displacement is measured along the slope
 * (the downhill tangent), which the normal compliance settling does not touch. */
#include "scene_util.h"

static const double g = 9.81;

// (slope angle, pair friction, shape line, dt) => a scene text
static void slope_scene(char* buf, size_t cap, double theta, double mu, const char* shape, double offset, double dt,
                        double duration) {
  double s = sin(theta), c = cos(theta);
  /* the object's centre `offset` above the plane through the origin, along its normal */
  double x = -s * offset, z = c * offset;
  snprintf(buf, cap,
           "time_step: %g\nduration: %g\n"
           "objects:\n"
           "  - name: slope\n"
           "    shape: {halfspace: {normal: [%.17g, 0, %.17g]}}\n"
           "    fixed: true\n"
           "    friction: %g\n"
           "  - name: body\n"
           "    shape: %s\n"
           "    mass: 1.0\n"
           "    pose: {xyz: [%.17g, 0, %.17g], rpy: [0, %.17g, 0]}\n"
           "    friction: %g\n",
           dt, duration, -s, c, mu, shape, x, z, -theta, mu);
}

// displacement of the body along the downhill tangent (-cos, 0, -sin) since the start
static double downhill(const double* q, const double* q0, double theta) {
  return -(q[0] - q0[0]) * cos(theta) - (q[2] - q0[2]) * sin(theta);
}

/* plane_tol: how far the centre may sit from r. Sliding contacts hover under the kSap law (digest
 * §2.4: the R-norm projection gives a positive normal velocity while sliding), a few mm here. */
static void ball_case(double mu, double a_expected, double plane_tol) {
  /* dt = 1e-3: semi-implicit Euler's u(N dt) = a dt^2 N (N + 1) / 2 is then 0.1% above a t^2 / 2 */
  const double theta = M_PI / 4, r = 0.1, dt = 1e-3;
  char yaml[2048];
  char shape[64];
  snprintf(shape, sizeof shape, "{sphere: %g}", r);
  /* start at the static penetration of the pair stiffness (1e6 in series with 1e6) */
  slope_scene(yaml, sizeof yaml, theta, mu, shape, r - g * cos(theta) / 5e5, dt, 1.0);
  long nsteps = 1000;
  test_world t = tw_create(yaml);
  double* q = tw_object_q(&t, "body");
  double q0[7];
  memcpy(q0, q, sizeof q0);
  tw_step(&t, nsteps);
  cr_assert(fabs(t.world->t - 1.0) < 1e-12);
  double u = downhill(q, q0, theta), u_expected = 0.5 * a_expected;
  double rel = fabs(u - u_expected) / u_expected;
  /* the centre must stay on the slope: distance to the plane within 1 mm of r */
  double dist = -sin(theta) * q[0] + cos(theta) * q[2];
  cr_log_info("ball mu=%.2f: u(1 s) = %.6f m, expected %.6f (rel err %.3e), plane distance %.6f, contacts %d, "
              "iterations max %d mean %.2f",
              mu, u, u_expected, rel, dist, t.world->last.contacts, t.world->stats.max_iterations,
              (double)t.world->stats.iterations / (double)t.world->stats.steps);
  cr_expect(rel < 0.01, "mu %.2f: u(1 s) = %.6f, expected %.6f (rel %.3e)", mu, u, u_expected, rel);
  cr_expect(fabs(dist - r) < plane_tol, "mu %.2f: centre %.6f from the plane, r = %g", mu, dist, r);
  tw_free(&t);
}

Test(slope, ball_frictionless_slides) { ball_case(0.0, 6.936717523, 1e-3); }
Test(slope, ball_mu_0_2_slips) { ball_case(0.2, 5.549374019, 5e-3); }
Test(slope, ball_mu_0_3_rolls) { ball_case(0.3, 4.954798231, 1e-3); }
Test(slope, ball_mu_0_6_rolls) { ball_case(0.6, 4.954798231, 1e-3); }

/* Block (0.1 m cube, 1 kg) on a slope with tan(theta) = 0.5. */
static void block_run(double mu, double dt, double duration, double* t_out, double* u_out, int nsample) {
  const double theta = atan(0.5), h = 0.1;
  char yaml[2048];
  /* placed touching, as a user writes it: with the default contact (near-rigid, tau_d = dt per
   * pair) the static compression is a few um. Started 4 um deep (the old k = 5e5 rest depth), the
   * push-out on the cone's edge at mu = tan(theta) creeps 1.2 mm in 5 s at dt = 0.005. */
  slope_scene(yaml, sizeof yaml, theta, mu, "{box: [0.1, 0.1, 0.1]}", 0.5 * h, dt, duration);
  test_world t = tw_create(yaml);
  double* q = tw_object_q(&t, "body");
  double q0[7];
  memcpy(q0, q, sizeof q0);
  long n = kn_world_total_steps(t.world);
  for (int k = 0; k < nsample; k++) {
    long target = (long)llround((double)(k + 1) * (double)n / nsample);
    tw_step(&t, target - t.world->step);
    t_out[k] = t.world->t;
    u_out[k] = downhill(q, q0, theta);
  }
  cr_log_info("block mu=%.2f: contacts %d, iterations max %d mean %.2f", mu, t.world->last.contacts,
              t.world->stats.max_iterations, (double)t.world->stats.iterations / (double)t.world->stats.steps);
  tw_free(&t);
}

Test(slope, block_holds_at_mu_equal_tan_theta) {
  double t[5], u[5];
  block_run(0.5, 0.005, 5.0, t, u, 5);
  cr_log_info("block mu=0.5: drift along the slope after %.1f s: %.3e m", t[4], u[4]);
  cr_expect(fabs(u[4]) < 1e-3, "drift %.3e m over 5 s", u[4]);
}

Test(slope, block_slides_at_mu_0_49) {
  enum { N = 40 };
  double t[N], u[N];
  block_run(0.49, 0.005, 4.0, t, u, N);
  /* least squares u = c0 + c1 t + a t^2 / 2 over t >= 1 s (after the settling transient) */
  double S[3][4] = {{0}};
  for (int k = 0; k < N; k++) {
    if (t[k] < 1.0) continue;
    double phi[3] = {1, t[k], 0.5 * t[k] * t[k]};
    for (int i = 0; i < 3; i++) {
      for (int j = 0; j < 3; j++) S[i][j] += phi[i] * phi[j];
      S[i][3] += phi[i] * u[k];
    }
  }
  for (int i = 0; i < 3; i++)
    for (int r = i + 1; r < 3; r++) {
      double f = S[r][i] / S[i][i];
      for (int j = i; j < 4; j++) S[r][j] -= f * S[i][j];
    }
  double x[3];
  for (int i = 2; i >= 0; i--) {
    x[i] = S[i][3];
    for (int j = i + 1; j < 3; j++) x[i] -= S[i][j] * x[j];
    x[i] /= S[i][i];
  }
  const double theta = atan(0.5);
  double a_expected = g * (sin(theta) - 0.49 * cos(theta));
  double rel = fabs(x[2] - a_expected) / a_expected;
  cr_log_info("block mu=0.49: fitted a = %.6f m/s^2, expected %.6f (rel %.3e); u(4 s) = %.5f", x[2], a_expected, rel,
              u[N - 1]);
  cr_expect(rel < 0.02, "a = %.6f, expected %.6f (rel %.3e)", x[2], a_expected, rel);
}
