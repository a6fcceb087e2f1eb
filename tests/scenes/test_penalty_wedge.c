/* The penalty backend, penalty-coulomb-friction.md §6.5's analytic companion test, with the
 * backend's default tolerance 1e-8 m/s and k = 1e4 N/m per contact set explicitly (the jam threshold
 * mu* = m g / (2 k n_v delta) is about k; the discrete default is 1e5 since issue 19, which would put
 * mu* at 0.0123, below both mu here, and the test's numbers are the paper's scale): a rigid block of mass m wedged
 * between two fixed vertical walls, wider than the gap by 2 delta, so n_v = 4 corners press into
 * each wall by delta. Each side then carries N = k n_v delta (the walls are rigid and the block
 * cannot move sideways by symmetry, so N is the same while it slides) and the block jams iff
 * 2 mu N >= m g. Here m = 0.1 kg, delta = 1e-4 m: N = 4 N, threshold mu* = m g / (2 N) = 0.12263.
 *   - mu = 0.2 (above): it jams; the corners' tangential springs take the weight, each stretched
 *     m g / (2 n_v k) = 1.226e-5 m, so the block sinks that much and then holds: drift below
 *     1e-6 m over 1000 steps after it has loaded (the digest's bound);
 *   - mu = 0.05 (below): it slides with a = g - 2 mu N / m = 5.81 m/s^2 (Coulomb on the cone,
 *     exact on a plane): the velocity after 0.5 s, a T, to 1e-4 relative (each step's velocity is
 *     exact up to the Newton tolerance, 1e-8 m/s; the position under backward Euler lags by
 *     a T dt / 2, 2 %, so the velocity is what is compared).
 * Measured: sink 1.2263e-05 m (analytic 1.2263e-05), then 1.2e-12 m over 1000 steps; the slide
 * 2.90500 m/s (a T = 2.90500).
 * The paper's wdg_rr (k = 10, mu 0.08 / 0.03, gravity 1.8) is the same test at other numbers; the
 * scene's keys here are its geometry, mass, friction and k. 1100 rigid steps: well under a second
 * in Release, also fine under the sanitizers. */
#include "scene_util.h"

static const double m = 0.1, delta = 1e-4, k = 1e4, gz = 9.81, dt = 0.01;
static const int nv = 4;

typedef struct {
  double z[1101]; /* the block's height at each step */
  double vz_end;  /* its vertical velocity at the last step */
} wedge_run;

// (mu, steps) => the block's heights
static void wedge(double mu, int steps, wedge_run* r) {
  char yaml[1024];
  snprintf(yaml, sizeof yaml,
           "time_step: %g\nduration: %g\ngravity: [0, 0, %g]\n"
           "contact: {backend: penalty, penalty: {stiffness: %g}}\n" /* k: see the top comment */
           "objects:\n"
           "  - {name: left, shape: {halfspace: {normal: [1, 0, 0]}}, pose: {xyz: [-0.1, 0, 0]}, fixed: true, "
           "friction: %g}\n"
           "  - {name: right, shape: {halfspace: {normal: [-1, 0, 0]}}, pose: {xyz: [0.1, 0, 0]}, fixed: true, "
           "friction: %g}\n"
           "  - {name: block, shape: {box: [%.17g, 0.2, 0.2]}, mass: %g, pose: {xyz: [0, 0, 1]}, friction: %g}\n",
           dt, steps * dt, -gz, k, mu, mu, 0.2 + 2 * delta, m, mu);
  test_world t = tw_create(yaml);
  double* q = tw_object_q(&t, "block");
  r->z[0] = q[2];
  for (int s = 1; s <= steps; s++) {
    tw_step(&t, 1);
    r->z[s] = q[2];
  }
  r->vz_end = (r->z[steps] - r->z[steps - 1]) / dt;
  tw_free(&t);
}

Test(penalty_wedge, threshold_is_analytic) {
  const double N = k * nv * delta, mu_star = m * gz / (2 * N);
  cr_assert(fabs(mu_star - 0.122625) < 1e-6, "mu* %.6f", mu_star);
}

Test(penalty_wedge, jams_above_the_threshold) {
  static wedge_run r;
  wedge(0.2, 1100, &r);
  const double sink = m * gz / (2 * nv * k);
  double s100 = r.z[0] - r.z[100], drift = 0;
  for (int s = 100; s <= 1100; s++) drift = fmax(drift, fabs(r.z[s] - r.z[100]));
  cr_log_info("mu 0.2: sank %.4e m by step 100 (m g / (2 n_v k) = %.4e), then moved %.2e m over 1000 steps", s100,
              sink, drift);
  /* the sink is the springs' elastic stretch at rest (the landing's transient is damped by step
   * 100); 1e-3 relative: the Newton tolerance, 1e-8 m/s, is 1e-10 m a step */
  cr_expect(fabs(s100 - sink) <= 1e-3 * sink, "sank %.4e m, expected %.4e m (0.1 %%)", s100, sink);
  cr_expect(drift <= 1e-6, "drifted %.2e m over 1000 steps after loading (digest: below 1e-6 m)", drift);
}

Test(penalty_wedge, slides_below_the_threshold) {
  static wedge_run r;
  const double mu = 0.05, N = k * nv * delta, a = gz - 2 * mu * N / m;
  cr_assert(fabs(a - 5.81) < 1e-12);
  wedge(mu, 50, &r);
  double v = -r.vz_end, v_expected = a * 50 * dt;
  cr_log_info("mu 0.05: falls at %.5f m/s after 0.5 s (a T = %.5f), dropped %.4f m", v, v_expected, r.z[0] - r.z[50]);
  cr_expect(fabs(v - v_expected) <= 1e-4 * v_expected, "speed %.5f m/s, expected %.5f (1e-4)", v, v_expected);
}
