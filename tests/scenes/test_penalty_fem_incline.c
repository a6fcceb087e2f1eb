/* The penalty backend's anchors walking a deforming FEM boundary (penalty/fem_walk.c,
 * sim/penalty_fem_meshes.c) through the whole step: penalty-coulomb-friction.md §6.1's block on an
 * incline, the incline an FEM slab. The slab is 1.2 x 0.8 x 0.2 m, resolution 0.2 (a 6 x 4 grid of
 * cells on top: the block's corners, 0.14 m from its centre, cross its faces' edges on their 0.4 m
 * slide), E = 1e8 Pa (it sinks ~1e-7 m under the block), its bottom layer fixed, tilted theta = 0.1
 * rad; the block is test_penalty.c's FEM block (8 vertices, 0.2 m, density 1, E = 1e6 Pa, nu 0.45,
 * turned 0.2 rad about the normal, launched at 0.1 m/s downhill, g = 1.8 m/s^2). Every contact is an
 * FEM vertex at the other body's face: the block's corners walk the slab's top, the slab's vertices
 * under the block walk its bottom face. Default scene keys except the friction (the case).
 * Analytic (a = g (sin - mu cos)): mu = 0.1 slides to x(4 s) = 0.404795 m; mu = 0.125 stops at
 * 0.113184 m. Run at dt 1e-2 (400 steps) to stay cheap in CI: the stop within 1 % (the issue's
 * tolerance at that dt), the slide within 1 % (test_penalty.c's FEM block on the rigid incline slides
 * 0.9 % short: the shared step's loss under friction, not the walk's), |f_t|/f_n = mu on the sliding
 * contacts and the cone at every contact, both against the detection's normal, which the deformed
 * slab's faces tilt from: measured 6.8e-7 and 2.5e-6, held to 1e-5 (on the face's own plane the
 * ratio is exact: tests/penalty/test_fem_walk.c); no creep after the stop. Measured (dt 1e-2): x(4 s)
 * 0.402099 m, stop 0.112686 m; dt 1e-3: stop 0.113135 m (x(4 s) 0.401551 m); the plane path
 * these replace gave 0.402222, 0.112688 and 0.113135 (0.401475). */
#include "scene_util.h"

static const double theta = 0.1, g = 1.8, v0 = 0.1;

typedef struct {
  double x, x_stop, t_stop, ratio_err, cone;
  int sliding_contacts;
} run;

static run incline(double mu, double dt, double duration) {
  const double s = sin(theta), c = cos(theta), half = 0.1, psi = 0.2;
  double M[9] = {c * cos(psi), -c * sin(psi), -s, sin(psi), cos(psi), 0, s * cos(psi), -s * sin(psi), c};
  double pitch = -asin(M[6]), roll = atan2(M[7], M[8]), yaw = atan2(M[3], M[0]);
  /* the slab's centre at u = -0.2 along the slope, w = -0.1 below its top (the plane through 0) */
  double us = -0.2, ws = -0.1;
  char yaml[2048];
  snprintf(yaml, sizeof yaml,
           "time_step: %g\nduration: %g\ngravity: [0, 0, %g]\n"
           "contact: {backend: penalty}\n"
           "deformables:\n"
           "  - name: slab\n"
           "    shape: {box: [1.2, 0.8, 0.2]}\n"
           "    resolution: 0.2\n"
           "    material: {type: linear_corotated, youngs_modulus: 1e8, poisson_ratio: 0.3, density: 1}\n"
           "    pose: {xyz: [%.17g, 0, %.17g], rpy: [0, %.17g, 0]}\n"
           "    fixed: {box: {min: [-1, -1, -1], max: [1, 1, -0.099]}}\n"
           "    friction: %g\n"
           "  - name: block\n"
           "    shape: {box: [0.2, 0.2, 0.2]}\n"
           "    resolution: 0.2\n"
           "    material: {type: linear_corotated, youngs_modulus: 1e6, poisson_ratio: 0.45, density: 1}\n"
           "    pose: {xyz: [%.17g, 0, %.17g], rpy: [%.17g, %.17g, %.17g]}\n"
           "    velocity: [%.17g, 0, %.17g]\n"
           "    friction: %g\n",
           dt, duration, -g, c * us - s * ws, s * us + c * ws, -theta, mu, -s * half, c * half, roll, pitch, yaw,
           -v0 * c, -v0 * s, mu);
  test_world t = tw_create(yaml);
  double x0[3], x[3], u_prev = 0;
  kn_sim_deformable_centroid(&t.world->fems[1], x0);
  run r = {.t_stop = NAN, .x_stop = NAN};
  long steps = lround(duration / dt);
  for (long k = 1; k <= steps; k++) {
    tw_step(&t, 1);
    kn_sim_deformable_centroid(&t.world->fems[1], x);
    double u = -(x[0] - x0[0]) * c - (x[2] - x0[2]) * s;
    int sliding = (u - u_prev) / dt > 1e-3;
    if (isnan(r.t_stop) && (u - u_prev) / dt < 1e-5) r.t_stop = k * dt, r.x_stop = u;
    u_prev = u;
    const kn_world* w = t.world;
    for (int j = 0; j < w->nfem_contact; j++) {
      const kn_world_fem_contact* fc = &w->fem_contacts[j];
      cr_assert_eq(fc->kind, 1, "step %ld: a contact of kind %d", k, fc->kind);
      double fn = kn_vec3_dot(fc->f, fc->n), ft[3];
      for (int a = 0; a < 3; a++) ft[a] = fc->f[a] - fn * fc->n[a];
      double tn = sqrt(kn_vec3_dot(ft, ft));
      if (!(fn > 0)) continue;
      r.cone = fmax(r.cone, (tn - mu * fn) / fn);
      if (sliding && k > 10) {
        r.ratio_err = fmax(r.ratio_err, fabs(tn / fn - mu));
        r.sliding_contacts++;
      }
    }
  }
  r.x = u_prev;
  tw_free(&t);
  return r;
}

Test(penalty_fem_incline, slides_with_mu_0_1) {
  run r = incline(0.1, 1e-2, 4.0);
  cr_log_info("FEM on FEM, mu 0.1, dt 1e-2: x(4 s) = %.6f m (digest 0.404795), |f_t|/f_n - mu <= %.1e over %d "
              "contacts, cone excess %.1e",
              r.x, r.ratio_err, r.sliding_contacts, r.cone);
  cr_expect(fabs(r.x - 0.404795) <= 0.01 * 0.404795, "x(4 s) = %.6f m, digest 0.404795 +- 1 %%", r.x);
  cr_expect(r.sliding_contacts > 100, "%d sliding contacts", r.sliding_contacts);
  cr_expect(r.ratio_err <= 1e-5, "|f_t| / f_n off mu by %.2e while sliding", r.ratio_err);
  cr_expect(r.cone <= 1e-5, "a contact off the cone by %.2e", r.cone);
}

Test(penalty_fem_incline, stops_with_mu_0_125) {
  run r = incline(0.125, 1e-2, 4.0);
  cr_log_info("FEM on FEM, mu 0.125, dt 1e-2: stops at %.6f m at %.3f s, %.6f m at 4 s (digest 0.113184 m), cone "
              "excess %.1e",
              r.x_stop, r.t_stop, r.x, r.cone);
  cr_expect(fabs(r.x - 0.113184) <= 0.01 * 0.113184, "rests at %.6f m, digest 0.113184 +- 1 %%", r.x);
  cr_expect(fabs(r.x - r.x_stop) <= 1e-5, "moved %.2e m after stopping", r.x - r.x_stop);
  cr_expect(r.cone <= 1e-5, "a contact off the cone by %.2e", r.cone);
}

/* the stop at dt 1e-3 (4000 steps, ~5 s in Release) within the 0.5 % */
Test(penalty_fem_incline, stops_with_mu_0_125_dt_1e_3) {
  run r = incline(0.125, 1e-3, 4.0);
  cr_log_info("FEM on FEM, mu 0.125, dt 1e-3: stops at %.6f m at %.3f s, %.6f m at 4 s (digest 0.113184 m), cone "
              "excess %.1e",
              r.x_stop, r.t_stop, r.x, r.cone);
  cr_expect(fabs(r.x - 0.113184) <= 0.005 * 0.113184, "rests at %.6f m, digest 0.113184 +- 0.5 %%", r.x);
  cr_expect(fabs(r.x - r.x_stop) <= 1e-6, "moved %.2e m after stopping", r.x - r.x_stop);
  cr_expect(r.cone <= 1e-5, "a contact off the cone by %.2e", r.cone);
}
