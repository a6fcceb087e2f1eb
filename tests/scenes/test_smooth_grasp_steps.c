/* A grasp on smooth_friction does not depend on the time step (digest implicit-smooth-friction.md
 * §5 T3, the paper's bowl grasp, on the project's own gripper): the regression suite's 500 g box
 * (examples/regression/box_50mm_500g.yaml: PD-driven arm, two-finger gripper on a mimic coupler
 * with an effort limit, approach, close, lift 0.21 m, shake +-5 cm at 2 Hz, hold; 3.8 s) run with
 * the backend's defaults at h = 0.005, 0.0025 and 0.00125 s. Pass (digest): the box's height at the
 * end agrees across the three to within creep, eps x elapsed time (1e-3 m/s x 3.8 s), + 1 mm, and
 * the box was lifted (z > 0.2 m; it starts at 0.025 m).
 *
 * Measured (Release, 2026-11-26): 0.233936, 0.233987, 0.234013 m (spread 0.08 mm). The lagged
 * variant gives the same heights to 0.02 mm on this grasp: the pads' normal force is steady while
 * the box is carried (20 N squeeze, 0.5 kg), so friction lagged at the step start trails nothing;
 * lagging matters where the normal force changes within a step (T2, tests/smooth/test_contact.c). */
#include "scene_util.h"

// (h) => the box's height at the end of the scene
static double final_height(double h) {
  const char* path = KNEAD_SOURCE_DIR "/examples/regression/box_50mm_500g.yaml";
  char dt[64];
  snprintf(dt, sizeof dt, "time_step=%.17g", h);
  const char* set[] = {"contact.backend=smooth_friction", dt};
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_with(path, set, 2, &sc, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(sc, &w, &err), KN_OK, "%s", err.msg);
  long steps = lround(sc->duration / sc->time_step);
  for (long k = 0; k < steps; k++) cr_assert_eq(kn_world_step(w, &err), KN_OK, "h %g, step %ld: %s", h, k, err.msg);
  test_world t = {.world = w};
  double z = tw_object_q(&t, "box")[2];
  kn_world_free(w);
  kn_scene_free(sc);
  return z;
}

Test(smooth_grasp_steps, box_height_agrees_across_three_time_steps) {
  const double hs[] = {0.005, 0.0025, 0.00125}, eps = 1e-3, elapsed = 3.8;
  double z[3];
  for (int i = 0; i < 3; i++) {
    z[i] = final_height(hs[i]);
    cr_log_info("h %g: box at z = %.6f m at the end", hs[i], z[i]);
    cr_expect_gt(z[i], 0.2, "h %g: the box ends at z = %.4f m: not lifted", hs[i], z[i]);
  }
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++)
      cr_expect_leq(fabs(z[i] - z[j]), eps * elapsed + 1e-3, "h %g vs %g: heights %.6f and %.6f m differ by more than "
                    "creep + 1 mm", hs[i], hs[j], z[i], z[j]);
}
