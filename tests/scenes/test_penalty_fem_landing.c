/* The penalty backend's speculative FEM detection (sim/candidates.c fem_reach, issue 19): an FEM cube
 * falling onto a fixed ground box reaches it within a step. Detected only where a vertex is already
 * inside at the step's start, its bottom vertices crossed into the ground unresisted and the next
 * step's springs threw the cube back out at about the speed it came in (a restitution near 1: the
 * light supports of the §6.4 pyramid rocked and hopped on their ground vertices). With the vertices'
 * reach dt |v| + dt^2 |g| (and the colliders') the bottom vertices are candidates at the step's
 * start and their springs stop the cube where it meets the ground, within the step: backward Euler
 * on the stiff springs (4 k dt^2 / m = 40 here) leaves a rebound of at most 1 / sqrt(1 + 40) of the
 * impact speed in the first step after (per-step factor of the undamped mode), and the mode then
 * decays by that factor every step.
 * Scene: a 0.1 m FEM cube (resolution 0.1, E 1e6 Pa, nu 0.3, density 1000: 1 kg) 1 mm above the
 * ground, falling at 0.5 m/s (5 mm a step at dt 1e-2: it meets the ground within step 1); default
 * penalty keys (k 1e5 N/m). dt 1e-2 (set: the default 1e-3 would take 10 steps to close the gap at
 * rest's reach, and the case is a contact made within one step). 0.3 s, well under 1 s of CPU.
 * Measured (2026-11-27, Release, 0.04 s): the bottom's largest upward speed 0.0071 m/s (0.014 of the
 * impact; the bound 0.078), deepest 0.15 mm into the ground; without the reach (fem_reach returning 0)
 * 0.463 m/s (a restitution of 0.93) and 5.0 mm deep: the test fails. */
#include "scene_util.h"

/* the falling 0.1 m FEM cube (1 kg) of both cases: its x, y, z as %g, %g, %.17g, its z velocity %g */
#define FALLING_CUBE                                                         \
  "  - name: cube\n"                                                         \
  "    shape: {box: [0.1, 0.1, 0.1]}\n"                                      \
  "    resolution: 0.1\n"                                                    \
  "    material: {youngs_modulus: 1e6, poisson_ratio: 0.3, density: 1000}\n" \
  "    pose: {xyz: [%g, %g, %.17g]}\n"                                        \
  "    velocity: [0, 0, %g]\n"

/* (scene, its FEM cube's index) => the cube's bottom's largest upward speed after step 1 (up) and
 * lowest height (zlow) over 0.3 s at dt */
static void land(const char* yaml, int cube, double dt, double* up, double* zlow) {
  test_world t = tw_create(yaml);
  const kn_fem_body* b = t.world->fems[cube].body;
  double zmin_prev = 1;
  *up = 0, *zlow = 1;
  long steps = lround(0.3 / dt);
  for (long k = 1; k <= steps; k++) {
    kn_error err = {0};
    cr_assert_eq(kn_world_step(t.world, &err), KN_OK, "step %ld: %s", k, err.msg);
    double zmin = 1; /* the lowest vertex: the cube's bottom face */
    for (int i = 0; i < b->mesh.nvert; i++) zmin = fmin(zmin, b->x[3 * i + 2]);
    if (k > 1) *up = fmax(*up, (zmin - zmin_prev) / dt);
    *zlow = fmin(*zlow, zmin);
    zmin_prev = zmin;
  }
  tw_free(&t);
}

/* (what it lands on: the scene's YAML before the cube, ending in "deformables:\n" and the cube's
 * index there; the cube's x, y) => the cube, 1 mm above z = 0 and falling at 0.5 m/s, rebounds at
 * less than 1 / sqrt(1 + 4 k dt^2 / m) = 1 / sqrt(41) of its impact speed (above) */
static void expect_stops(const char* what, const char* below, int cube, double x, double y) {
  const double v0 = 0.5, dt = 1e-2, half = 0.05, gap = 1e-3;
  char yaml[2048];
  snprintf(yaml, sizeof yaml,
           "time_step: %g\nduration: 0.3\ngravity: [0, 0, -9.81]\n"
           "contact: {backend: penalty}\n"
           "%s" FALLING_CUBE,
           dt, below, x, y, half + gap, -v0);
  double up, zlow;
  land(yaml, cube, dt, &up, &zlow);
  cr_log_info("%s: largest upward speed of the bottom %.4g m/s (impact %g), deepest %.3e m", what, up, v0, zlow);
  cr_expect(up < v0 / sqrt(1 + 40.0), "%s: the cube rebounded at %.4g m/s (impact %g m/s)", what, up, v0);
}

Test(penalty_fem_landing, stops_where_it_meets_the_ground) {
  expect_stops("landing",
               "objects:\n"
               "  - {name: ground, shape: {box: [1, 1, 0.1]}, fixed: true, pose: {xyz: [0, 0, -0.05]}}\n"
               "deformables:\n",
               0, 0, 0);
}

/* The same cube on an FEM slab (0.4 x 0.4 x 0.1 m, resolution 0.1, the cube's material, its bottom
 * layer fixed, its top at z = 0; /tmp/pffland_scene.yaml of issue 19), 1 mm above it, off the slab's
 * grid by (0.013, 0.021) so that the cube's corners land inside the slab's faces and the slab's
 * vertex at the origin inside the cube's bottom face: the FEM-FEM candidates' reach (fem_detect.c,
 * none beside a fold). The slab's top gives way too (springs in series with it: a softer stop), so
 * the rigid ground's bound 1 / sqrt(1 + 4 k dt^2 / m) of the impact speed is the -ish bound here.
 * Measured (2026-11-27, Release, 0.02 s): the bottom's largest upward speed 0.0069 m/s, deepest
 * 0.21 mm below the slab's top; without the FEM-FEM reach 0.451 m/s (a restitution of 0.90; the
 * cube's centre hopped 11.6 mm, 0.045 to 0.0566 m) and 5.0 mm deep: the test fails. */
Test(penalty_fem_landing, stops_where_it_meets_an_fem_slab) {
  expect_stops("FEM landing",
               "deformables:\n"
               "  - name: slab\n"
               "    shape: {box: [0.4, 0.4, 0.1]}\n"
               "    resolution: 0.1\n"
               "    material: {youngs_modulus: 1e6, poisson_ratio: 0.3, density: 1000}\n"
               "    pose: {xyz: [0, 0, -0.05]}\n"
               "    fixed: {box: {min: [-1, -1, -1], max: [1, 1, -0.04]}}\n",
               1, 0.013, 0.021);
}
