/* A carried pair that outlives its features (contact.penalty.continuous: true; sim/penalty_cpf.c,
 * follow; continuous-penalty-forces.md §8 item 14): a vertex-face pair walks with its vertex across
 * the face's surface, an edge-edge pair whose closest points left an edge is dropped. Measured on the
 * regression scene examples/regression/box_low_friction_fails (mu 0.05: the pads slide along the box
 * as the gripper lifts, the box stays on the floor): with the pairs kept on their first triangles the
 * Newton solve fails at step 182 (t = 1.81 s, 111 iterations: the pads' corners acting as the planes
 * of triangles they have left); with the walk every step converges. Scaled for CI: the first 200
 * steps (through the failure), about 0.3 s in Release. The walk itself on a creased mesh:
 * tests/penalty/test_cpf_walk.c. */
#include "scene_util.h"

Test(penalty_cpf_walk, sliding_pads_converge_on_box_low_friction_fails) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/regression/box_low_friction_fails.yaml", KNEAD_SOURCE_DIR);
  const char* set[] = {"contact.backend=penalty", "contact.penalty.continuous=true"};
  test_world t = {0};
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_with(path, set, 2, &t.scene, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(t.scene, &t.world, &err), KN_OK, "%s", err.msg);
  const double* q = tw_object_q(&t, "box");
  double z0 = q[2];
  for (int k = 0; k < 200; k++) cr_assert_eq(kn_world_step(t.world, &err), KN_OK, "step %d: %s", k + 1, err.msg);
  cr_log_info("box_low_friction_fails, 200 steps: the box at z %.5f m (start %.5f)", q[2], z0);
  /* the scene's point: the pads slide, the box is not lifted (grip 2 mu N = 2 N < m g = 4.9 N) */
  cr_expect_lt(q[2] - z0, 0.01, "the box rose %.4f m", q[2] - z0);
  tw_free(&t);
}
