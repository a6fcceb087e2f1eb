/* MPM deformables on one grid (sim.h "grid"): the deformables of a scene with the same grid name
 * share one background grid and so collide with each other, as the seed's single MPM grid does;
 * different grid names never touch. Checked on the outcome of a collision:
 *  - a 0.1 m cube dropped 2 cm onto another comes to rest on top of it (its centroid ends within
 *    1.5 cm of 0.15 m), while with separate grids it falls through to the ground (< 0.07 m);
 *  - two cubes thrown at each other at +-0.5 m/s in zero gravity never pass each other, and their
 *    total linear momentum stays zero (P2G, the free motion's internal forces and G2P conserve it:
 *    asserted to 1e-12 of the initial |p| per body); with separate grids they do pass.
 * Also: a name given twice with two resolutions is a scene error naming the key.
 * Measured (2026-11-21, h 0.025, 1 particle per cell): top cube at 0.143 m after 0.5 s on one grid
 * (MPM's grid contact acts about half a cell early), 0.034 m with separate grids; thrown cubes
 * stop with their centroids 0.118 m apart (0.1 m would be touching: the grid couples them one
 * to two cells early) and pass to -0.16 m with separate grids; momentum drift 6e-16. */
#include "scene_util.h"

#define CUBE                                                                                             \
  "    model: mpm\n    shape: {box: [0.1, 0.1, 0.1]}\n    resolution: 0.025\n    particles_per_cell: 1\n" \
  "    material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.3, density: 1000}\n"

// two cubes on the ground, the top one 2 cm above the bottom one; => the top one's final centroid z
static double drop(const char* grid_a, const char* grid_b) {
  char yaml[4096];
  snprintf(yaml, sizeof yaml,
           "time_step: 0.01\nduration: 0.5\ngravity: [0, 0, -9.81]\n"
           "objects:\n  - {name: ground, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, friction: 0.5}\n"
           "deformables:\n"
           "  - name: bottom\n" CUBE "    pose: {xyz: [0, 0, 0.05]}\n    grid: %s\n"
           "  - name: top\n" CUBE "    pose: {xyz: [0, 0, 0.17]}\n    grid: %s\n",
           grid_a, grid_b);
  test_world t = tw_create(yaml);
  cr_assert_eq(t.world->nmpm_grid, strcmp(grid_a, grid_b) ? 2 : 1);
  tw_step(&t, kn_world_total_steps(t.world));
  double c[3];
  kn_sim_mpm_centroid(&t.world->mpms[1], c);
  tw_free(&t);
  return c[2];
}

Test(mpm_grid, dropped_cube_rests_on_the_other) {
  double shared = drop("dough", "dough"), separate = drop("a", "b");
  printf("top cube centroid z: shared grid %.4f m, separate grids %.4f m\n", shared, separate);
  cr_expect_lt(fabs(shared - 0.15), 0.015, "shared grid: top cube at z %g, expected on the bottom cube (0.15)", shared);
  cr_expect_lt(separate, 0.07, "separate grids: the cubes do not interact, the top one reaches the ground (z %g)",
               separate);
}

// two cubes thrown at each other; => min over the run of (x_right - x_left) of the centroids, and the
// largest |total momentum| relative to one body's initial momentum
static double collide(const char* grid_b, double* drift) {
  char yaml[4096];
  snprintf(yaml, sizeof yaml,
           "time_step: 0.01\nduration: 0.3\ngravity: [0, 0, 0]\n"
           "deformables:\n"
           "  - name: left\n" CUBE "    pose: {xyz: [-0.07, 0, 0]}\n    velocity: [0.5, 0, 0]\n    grid: g\n"
           "  - name: right\n" CUBE "    pose: {xyz: [0.07, 0, 0.01]}\n    velocity: [-0.5, 0, 0]\n    grid: %s\n",
           grid_b);
  test_world t = tw_create(yaml);
  double gap = INFINITY, p0 = 0.5 * kn_mpm_body_mass(t.world->mpms[0].body, NULL, NULL);
  *drift = 0;
  for (long k = 0; k < kn_world_total_steps(t.world); k++) {
    tw_step(&t, 1);
    double a[3], b[3], P[3] = {0};
    kn_sim_mpm_centroid(&t.world->mpms[0], a);
    kn_sim_mpm_centroid(&t.world->mpms[1], b);
    gap = fmin(gap, b[0] - a[0]);
    for (int i = 0; i < 2; i++) {
      double Pi[3];
      kn_mpm_body_mass(t.world->mpms[i].body, Pi, NULL);
      for (int d = 0; d < 3; d++) P[d] += Pi[d];
    }
    *drift = fmax(*drift, sqrt(P[0] * P[0] + P[1] * P[1] + P[2] * P[2]) / p0);
  }
  tw_free(&t);
  return gap;
}

Test(mpm_grid, thrown_cubes_collide_and_keep_momentum) {
  double drift_shared, drift_separate;
  double shared = collide("g", &drift_shared), separate = collide("h", &drift_separate);
  printf("centroid gap min: shared %.4f m, separate %.4f m; momentum drift %.2e / %.2e\n", shared, separate,
         drift_shared, drift_separate);
  /* the cubes (0.1 m) start 0.14 m apart and meet at 0.5 m/s each: on one grid they bounce or stick
   * but cannot interpenetrate by more than a few cells' worth of compression */
  cr_expect_gt(shared, 0.07, "shared grid: the centroids came within %g m", shared);
  cr_expect_lt(drift_shared, 1e-12);
  cr_expect_lt(separate, 0.0, "separate grids: the cubes pass through each other (gap %g)", separate);
  cr_expect_lt(drift_separate, 1e-12);
}

Test(mpm_grid, one_name_two_resolutions_is_an_error) {
  const char* yaml =
      "time_step: 0.01\nduration: 0.1\n"
      "deformables:\n"
      "  - name: a\n    model: mpm\n    shape: {box: [0.1, 0.1, 0.1]}\n    resolution: 0.025\n    grid: g\n"
      "  - name: b\n    model: mpm\n    shape: {box: [0.1, 0.1, 0.1]}\n    resolution: 0.02\n    grid: g\n"
      "    pose: {xyz: [1, 0, 0]}\n";
  kn_scene* s = NULL;
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), "inline.yaml", &s, &err), KN_OK, "%s", err.msg);
  cr_expect_eq(kn_world_create(s, &w, &err), KN_ERR_INVALID);
  cr_expect_null(w);
  cr_expect(strstr(err.msg, "deformables[1].grid") && strstr(err.msg, "one resolution"), "%s", err.msg);
  kn_world_free(w);
  kn_scene_free(s);
}
