/* Drake's deformable-on-slope: a soft 0.1 m cube (E 1e5, nu 0.4, rho 1e3, h 0.05) on a pi/12 slope
 * with mu 0.4 (> tan(pi/12) = 0.268, so it sticks), dt 2.5e-3: after 5 s every vertex is at rest
 * (speed < 2e-5 m/s) and the contact force balances the weight within 1 %. */
#include "fem_util.h"

Test(fem_slope, comes_to_rest_and_carries_its_weight) {
  test_world t = tw_create(fem_slope_scene(1, 5.0));
  double t0 = kn_wall_time();
  long n = kn_world_total_steps(t.world);
  tw_step(&t, n);
  double wall = kn_wall_time() - t0;
  const kn_world_fem* f = &t.world->fems[0];
  double m = kn_fem_body_mass(f->body), W = m * 9.81;
  double vmax = fem_max_speed(f->body);
  double ferr = sqrt(f->force[0] * f->force[0] + f->force[1] * f->force[1] + (f->force[2] - W) * (f->force[2] - W));
  double c[3];
  kn_sim_deformable_centroid(f, c);
  printf("fem slope: %ld steps in %.2f s wall (%d vertices); after 5 s max vertex speed %.3e m/s, contact force "
         "(%.5f, %.5f, %.5f) N vs weight %.5f N (error %.3f %%), centroid (%.5f, %.5f, %.5f), last step %d contacts\n",
         n, wall, f->body->mesh.nvert, vmax, f->force[0], f->force[1], f->force[2], W, 100 * ferr / W, c[0], c[1], c[2],
         t.world->last.contacts);
  cr_assert_lt(vmax, 2e-5);
  cr_assert_lt(ferr, 0.01 * W);
  cr_assert_float_eq(m, 1.0, 1e-12, "mass rho V = 1 kg");
  tw_free(&t);
}
