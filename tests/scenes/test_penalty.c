/* The penalty backend through the whole step (detection, the shared Newton solve, the anchors kept
 * from step to step), with its defaults: penalty-coulomb-friction.md §6.1, the block on an incline,
 * rigid against rigid. A 0.2 m cube of density 1 (8 g), turned 0.2 rad about the plane's normal,
 * is launched at 0.1 m/s down a theta = 0.1 rad incline under g = 1.8 m/s^2. With a = g (sin -
 * mu cos): mu = 0.1 slides on to x(4 s) = 0.404795 m (a = +5.994e-4 m/s^2); mu = 0.125 stops at
 * d = v0^2 / (2 |a|) = 0.113184 m (t = 2.26368 s) and stays. Pass (digest): x(4 s) within 1e-4 m,
 * the stop within 0.5 % at dt 1e-3 and 1 % at dt 1e-2, |f_t| / f_n = mu to 1e-6 at every corner
 * while sliding, |f_t| <= mu f_n (1 + 1e-9) at every contact of every step. */
#include "scene_util.h"

static const double theta = 0.1, g = 1.8, v0 = 0.1;

typedef struct {
  double x;          /* distance travelled down the slope at the end [m] */
  double t_stop;     /* first time the downhill speed is below 1e-5 m/s (NAN: never) */
  double x_stop;
  double ratio_err;  /* max | |f_t| / f_n - mu | over the sliding steps' contacts */
  double cone;       /* max (|f_t| - mu f_n) / f_n over every contact of every step */
  int sliding_contacts;
} incline_run;

// (mu, dt, duration) => the run's measurements
static incline_run incline(double mu, double dt, double duration) {
  const double s = sin(theta), c = cos(theta), half = 0.1, psi = 0.2;
  /* R = R_y(-theta) R_z(psi): the cube on the slope, turned psi about its normal; as rpy (R_z R_y R_x) */
  double M[9] = {c * cos(psi), -c * sin(psi), -s, sin(psi), cos(psi), 0, s * cos(psi), -s * sin(psi), c};
  double pitch = -asin(M[6]), roll = atan2(M[7], M[8]), yaw = atan2(M[3], M[0]);
  char yaml[2048];
  snprintf(yaml, sizeof yaml,
           "time_step: %g\nduration: %g\ngravity: [0, 0, %g]\n"
           "contact: {backend: penalty}\n"
           "objects:\n"
           "  - {name: slope, shape: {halfspace: {normal: [%.17g, 0, %.17g]}}, fixed: true, friction: %g}\n"
           "  - name: block\n"
           "    shape: {box: [0.2, 0.2, 0.2]}\n"
           "    density: 1\n"
           "    pose: {xyz: [%.17g, 0, %.17g], rpy: [%.17g, %.17g, %.17g]}\n"
           "    velocity: [0, 0, 0, %.17g, %.17g, 0]\n" /* body frame: R^T (-v0 c, 0, -v0 s) */
           "    friction: %g\n",
           dt, duration, -g, -s, c, mu, -s * half, c * half, roll, pitch, yaw, -v0 * cos(psi), v0 * sin(psi), mu);
  test_world t = tw_create(yaml);
  double* q = tw_object_q(&t, "block");
  double x0[3] = {q[0], q[1], q[2]}, u_prev = 0;
  incline_run r = {.t_stop = NAN, .x_stop = NAN};
  long steps = lround(duration / dt);
  for (long k = 1; k <= steps; k++) {
    tw_step(&t, 1);
    double u = -(q[0] - x0[0]) * c - (q[2] - x0[2]) * s;
    int sliding = (u - u_prev) / dt > 1e-3; /* well before the stop */
    if (isnan(r.t_stop) && (u - u_prev) / dt < 1e-5) r.t_stop = k * dt, r.x_stop = u;
    u_prev = u;
    const kn_world* w = t.world;
    for (int j = 0; j < w->ncontact; j++) {
      const kn_world_contact* p = &w->contacts[j];
      double fn = p->f[0] * p->n[0] + p->f[1] * p->n[1] + p->f[2] * p->n[2], ft[3];
      for (int a = 0; a < 3; a++) ft[a] = p->f[a] - fn * p->n[a];
      double tn = sqrt(ft[0] * ft[0] + ft[1] * ft[1] + ft[2] * ft[2]);
      if (!(fn > 0)) {
        cr_assert(tn == 0, "step %ld: a tangential force %g N without a normal one", k, tn);
        continue;
      }
      r.cone = fmax(r.cone, (tn - mu * fn) / fn);
      if (sliding && k > 10) { /* past the landing */
        r.ratio_err = fmax(r.ratio_err, fabs(tn / fn - mu));
        r.sliding_contacts++;
      }
    }
  }
  r.x = u_prev;
  tw_free(&t);
  return r;
}

Test(penalty, incline_slides_with_mu_0_1) {
  const double a = g * (sin(theta) - 0.1 * cos(theta)), x4 = v0 * 4 + 0.5 * a * 16;
  cr_assert(fabs(x4 - 0.404795) < 1e-6, "analytic x(4) %.6f", x4);
  incline_run r = incline(0.1, 1e-3, 4.0);
  cr_log_info("mu 0.1, dt 1e-3: x(4 s) = %.6f m (digest 0.404795), |f_t|/f_n - mu <= %.1e over %d contacts, "
              "cone excess %.1e",
              r.x, r.ratio_err, r.sliding_contacts, r.cone);
  cr_expect(fabs(r.x - 0.404795) <= 1e-4, "x(4 s) = %.6f m, digest 0.404795 +- 1e-4", r.x);
  cr_expect(r.sliding_contacts > 1000, "%d sliding contacts observed", r.sliding_contacts);
  cr_expect(r.ratio_err <= 1e-6, "|f_t| / f_n off mu by %.2e while sliding", r.ratio_err);
  cr_expect(r.cone <= 1e-9, "a contact off the cone by %.2e", r.cone);
}

static void sticks(double dt, double tol) {
  const double a = g * (0.125 * cos(theta) - sin(theta)), d = v0 * v0 / (2 * a);
  cr_assert(fabs(d - 0.113184) < 1e-6, "analytic stop %.6f", d);
  incline_run r = incline(0.125, dt, 4.0);
  cr_log_info("mu 0.125, dt %g: stops at %.6f m at t = %.4f s (digest 0.113184 m, 2.26368 s), %.6f m at 4 s, "
              "cone excess %.1e",
              dt, r.x_stop, r.t_stop, r.x, r.cone);
  cr_expect(fabs(r.x - 0.113184) <= tol * 0.113184, "dt %g: rests at %.6f m, digest 0.113184 +- %g %%", dt, r.x,
            100 * tol);
  cr_expect(fabs(r.x - r.x_stop) <= 1e-6, "dt %g: crept %.2e m after stopping", dt, r.x - r.x_stop);
  cr_expect(r.cone <= 1e-9, "a contact off the cone by %.2e", r.cone);
}

Test(penalty, incline_stops_with_mu_0_125_dt_1e_3) { sticks(1e-3, 0.005); }
Test(penalty, incline_stops_with_mu_0_125_dt_1e_2) { sticks(1e-2, 0.01); }
