/* sim/overlap.c: kn_world_create warns about pairs of bodies that start interpenetrating deeper
 * than contact.margin (rigid colliders and robot links, FEM surface vertices, MPM particles), once
 * per pair at its deepest point, and not about pairs resting in contact or pairs the collision
 * filter removes. Depths are analytic (box faces, mesh vertices and particle lattices at known
 * heights). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim.h"

#define MODELS KNEAD_SOURCE_DIR "/examples/models/"

// (YAML) => the world's warnings, each checked to be an interpenetration line, in out[]
static int overlap_warnings(const char* yaml, char out[][512], int max) {
  kn_scene* s = NULL;
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), "inline.yaml", &s, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
  int n = 0;
  for (int k = 0; k < w->warnings.count; k++) {
    if (!strstr(w->warnings.items[k], "start interpenetrating")) continue;
    cr_assert_lt(n, max, "too many warnings: %s", w->warnings.items[k]);
    snprintf(out[n++], 512, "%s", w->warnings.items[k]);
  }
  kn_world_free(w);
  kn_scene_free(s);
  return n;
}

/* Boxes of 0.1 m on a floor: a and b overlap by 30 mm along x (the least-penetration axis: y and z
 * overlap by 100 mm), c rests on a's top face (phi = 0) and on b's, a, b and c rest on the floor. */
static const char* boxes =
    "time_step: 0.01\nduration: 0.01\n%s"
    "objects:\n"
    "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
    "  - {name: a, shape: {box: [0.1, 0.1, 0.1]}, mass: 1, pose: {xyz: [0, 0, 0.05]}}\n"
    "  - {name: b, shape: {box: [0.1, 0.1, 0.1]}, mass: 1, pose: {xyz: [0.07, 0, 0.05]}}\n"
    "  - {name: c, shape: {box: [0.1, 0.1, 0.1]}, mass: 1, pose: {xyz: [0.02, 0.03, 0.15]}}\n";

Test(overlap, two_overlapping_boxes_give_one_warning_with_the_depth) {
  char yaml[2048], w[8][512];
  snprintf(yaml, sizeof yaml, boxes, "");
  int n = overlap_warnings(yaml, w, 8);
  cr_assert_eq(n, 1, "%d warnings, the first: %s", n, n ? w[0] : "-");
  cr_expect_str_eq(w[0], "a and b start interpenetrating by 30.0 mm (deeper than the contact margin 0 mm)");
}

Test(overlap, the_margin_is_the_threshold) {
  char yaml[2048], w[8][512];
  /* contact.margin is this case's subject (the warning threshold), hence the key in the scene.
   * margin 10 mm: 30 mm still warns, and c resting on a and b (phi 0, inside the margin) does not */
  snprintf(yaml, sizeof yaml, boxes, "contact: {margin: 0.01}\n");
  int n = overlap_warnings(yaml, w, 8);
  cr_assert_eq(n, 1, "%d warnings, the first: %s", n, n ? w[0] : "-");
  cr_expect_str_eq(w[0], "a and b start interpenetrating by 30.0 mm (deeper than the contact margin 10 mm)");
  /* margin 40 mm: the 30 mm overlap is within the margin */
  snprintf(yaml, sizeof yaml, boxes, "contact: {margin: 0.04}\n");
  cr_expect_eq(overlap_warnings(yaml, w, 8), 0, "%s", w[0]);
}

Test(overlap, resting_and_excluded_pairs_give_none) {
  char yaml[2048], w[8][512];
  /* the overlapping pair excluded by contact.exclude: nothing left to warn about */
  snprintf(yaml, sizeof yaml, boxes, "contact: {exclude: [[a, b]]}\n");
  cr_expect_eq(overlap_warnings(yaml, w, 8), 0, "%s", w[0]);
  /* backend none: no contact at all */
  snprintf(yaml, sizeof yaml, boxes, "contact: {backend: none}\n");
  cr_expect_eq(overlap_warnings(yaml, w, 8), 0, "%s", w[0]);
}

/* The grasp of examples/mpm_dough_tearing.yaml before issue 16: palms (0.16 m long, turned along x
 * by q7 = pi/2) centred at x = -+0.065 m overlap by 0.16 - 0.13 = 30 mm; the arm links 6 nearly touch.
 * The warning names the robots' links. */
Test(overlap, robot_links_are_named) {
  const char* arm =
      "  - name: %s\n    urdf: " MODELS "knead_arm7.urdf\n    base_pose: %s\n"
      "    q0: [0, 1.217154, 0, -1.109802, 0, 0.814637, 1.570796]\n"
      "  - name: %s_gripper\n    urdf: " MODELS "knead_gripper.urdf\n"
      "    attach_to: {robot: %s, link: arm_link_7, pose: {xyz: [0, 0, 0.045]}}\n    q0: [0.04, 0.04]\n";
  char yaml[4096], w[8][512];
  int k = snprintf(yaml, sizeof yaml, "time_step: 0.01\nduration: 0.01\nrobots:\n");
  k += snprintf(yaml + k, sizeof yaml - (size_t)k, arm, "left", "{xyz: [-0.75, 0, 0]}", "left", "left");
  snprintf(yaml + k, sizeof yaml - (size_t)k, arm, "right", "{xyz: [0.75, 0, 0], rpy: [0, 0, 3.141592653589793]}",
           "right", "right");
  int n = overlap_warnings(yaml, w, 8);
  int found = 0;
  for (int i = 0; i < n; i++)
    found += strcmp(w[i], "left_gripper/gripper_palm and right_gripper/gripper_palm start interpenetrating by "
                          "30.0 mm (deeper than the contact margin 0 mm)") == 0;
  cr_expect_eq(found, 1, "%d warnings, the first: %s", n, n ? w[0] : "-");
}

/* Deformables: a 0.1 m FEM cube and a 0.1 m MPM cube rest on the floor (phi = 0: no warning), each
 * under a fixed 0.3 x 0.3 x 0.1 m lid whose bottom face is at z = 0.08 m. The FEM top face
 * vertices (z = 0.1) lie 20 mm inside the lid, 100 mm or more from its sides; the MPM body's
 * deepest particles are its top layer, 1e3 (max z - 0.08) mm inside (h 0.02 at 8 particles per
 * cell: two per cell and axis, the top layer at 0.1 - h / 4 = 0.095 m, so 15 mm). */
Test(overlap, fem_vertices_and_mpm_particles) {
  const char* yaml =
      "time_step: 0.01\nduration: 0.01\n"
      "objects:\n"
      "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
      "  - {name: lid, shape: {box: [0.3, 0.3, 0.1]}, fixed: true, pose: {xyz: [0, 0, 0.13]}}\n"
      "  - {name: lid2, shape: {box: [0.3, 0.3, 0.1]}, fixed: true, pose: {xyz: [0.5, 0, 0.13]}}\n"
      "deformables:\n"
      "  - name: jelly\n    shape: {box: [0.1, 0.1, 0.1]}\n    resolution: 0.05\n"
      "    material: {youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n    pose: {xyz: [0, 0, 0.05]}\n"
      "  - name: dough\n    model: mpm\n    shape: {box: [0.1, 0.1, 0.1]}\n    resolution: 0.02\n"
      "    particles_per_cell: 8\n"
      "    material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n"
      "    pose: {xyz: [0.5, 0, 0.05]}\n";
  kn_scene* s = NULL;
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), "inline.yaml", &s, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(w->nmpm, 1);
  const kn_mpm_body* b = w->mpms[0].body;
  double ztop = -1, zlow = 1;
  for (int p = 0; p < b->np; p++) ztop = fmax(ztop, b->x[3 * p + 2]), zlow = fmin(zlow, b->x[3 * p + 2]);
  cr_expect_float_eq(ztop, 0.095, 1e-12, "top particle layer at %.17g m", ztop);
  cr_expect_gt(zlow, 0, "a particle below the floor: %g m", zlow);
  char mpm_line[256];
  snprintf(mpm_line, sizeof mpm_line, "lid2 and dough start interpenetrating by %.1f mm (deeper than the contact "
           "margin 0 mm)", 1e3 * (ztop - 0.08));
  cr_assert_eq(w->warnings.count, 2, "%d warnings, the first: %s", w->warnings.count,
               w->warnings.count ? w->warnings.items[0] : "-");
  cr_expect_str_eq(w->warnings.items[0], "lid and jelly start interpenetrating by 20.0 mm (deeper than the contact "
                   "margin 0 mm)");
  cr_expect_str_eq(w->warnings.items[1], mpm_line);
  cr_expect_str_eq(mpm_line, "lid2 and dough start interpenetrating by 15.0 mm (deeper than the contact margin 0 mm)");
  kn_world_free(w);
  kn_scene_free(s);
}
