/* check/checks.c: scenario checks evaluated on crafted runs with known answers. A box in free fall
 * (contact backend none: kn_mb_step integrates constant gravity exactly, z_n = z0 - g (n dt)^2 / 2)
 * gives heights and distances in closed form; a box resting on the floor carries its weight
 * m g; an object welded to a moving link does not drift; errors name file:line:key. */
#include <math.h>

#include "../scenes/scene_util.h"

#define G 9.81
#define DT 0.01

// (step n) => z of a box dropped from z0 at rest (see above)
static double z_fall(double z0, int n) { return z0 - G * DT * DT * n * n / 2.0; }

static const kn_check_result* find(const kn_world* w, const char* name) {
  int n = 0;
  const kn_check_result* r = kn_world_checks(w, &n);
  for (int i = 0; i < n; i++)
    if (!strcmp(r[i].name, name)) return &r[i];
  cr_assert_fail("no check '%s'", name);
  return NULL;
}

static const char* falling =
    "time_step: 0.01\nduration: 0.5\ncontact: {backend: none}\n"
    "objects:\n"
    "  - {name: box, shape: {box: [0.1, 0.1, 0.1]}, mass: 1, pose: {xyz: [0, 0, 1]}}\n"
    "  - {name: anchor, shape: {box: [0.1, 0.1, 0.1]}, fixed: true, pose: {xyz: [0, 0, 1]}}\n"
    "checks:\n"
    "  - {name: below_pass, type: height_below, body: box, value: 0.6, after: 0.3, before: 0.5}\n"
    "  - {name: below_fail, type: height_below, body: box, value: 0.5, after: 0.3, before: 0.5}\n"
    "  - {name: above_zero, type: height_above, body: box, value: 0.0}\n"
    "  - {name: above_fail, type: height_above, body: box, value: 0.8, expect: fail}\n"
    "  - {name: dist, type: distance_below, bodies: [box, anchor], value: 1.0, before: 0.2}\n"
    "  - {name: late, type: height_above, body: box, value: 0.0, after: 0.45}\n";

Test(checks, falling_box_heights_and_distance) {
  test_world t = tw_create(falling);
  /* before any step only the t = 0 sample exists: late has no sample yet */
  cr_assert_eq(find(t.world, "late")->samples, 0);
  cr_assert_eq(find(t.world, "late")->passed, 0);
  tw_step(&t, 50);
  const kn_check_result* r = find(t.world, "below_pass");
  /* max z in [0.3, 0.5] is at its start, step 30 */
  cr_assert(r->passed, "%s", r->message);
  cr_assert_float_eq(r->measured, z_fall(1, 30), 1e-12, "%.15g vs %.15g", r->measured, z_fall(1, 30));
  cr_assert_float_eq(r->t, 0.3, 1e-12);
  cr_assert_eq(r->samples, 21);
  r = find(t.world, "below_fail");
  cr_assert_not(r->passed, "z(0.3) = %g > 0.5 must fail", z_fall(1, 30));
  cr_assert_float_eq(r->measured, z_fall(1, 30), 1e-12);
  cr_assert_float_eq(r->t, 0.3, 1e-12);
  /* min z over [0, 0.5] is the last: 1 - 9.81 * 0.25 / 2 = -0.22625 < 0: above_zero fails */
  r = find(t.world, "above_zero");
  cr_assert_float_eq(r->measured, z_fall(1, 50), 1e-12);
  cr_assert_float_eq(r->t, 0.5, 1e-12);
  cr_assert_eq(r->passed, z_fall(1, 50) > 0);
  cr_assert_not(r->passed);
  r = find(t.world, "above_fail");
  cr_assert_not(r->passed);
  cr_assert(r->expect_fail);
  cr_assert_eq(r->samples, 51);
  /* the distance to the fixed anchor at the drop point grows: worst at the window end 0.2 s */
  r = find(t.world, "dist");
  cr_assert_float_eq(r->measured, 1 - z_fall(1, 20), 1e-12);
  cr_assert_float_eq(r->t, 0.2, 1e-12);
  cr_assert(r->passed, "%s", r->message);
  r = find(t.world, "late");
  cr_assert_eq(r->samples, 6);
  cr_assert(strstr(r->message, "min z = ") && strstr(r->message, "at t = 0.5 s"), "%s", r->message);
  tw_free(&t);
}

Test(checks, resting_box_carries_its_weight) {
  test_world t = tw_create(
      "time_step: 0.01\nduration: 1\n"
      "objects:\n"
      "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
      "  - {name: box, shape: {box: [0.1, 0.1, 0.1]}, mass: 0.5, pose: {xyz: [0, 0, 0.05]}}\n"
      "checks:\n"
      "  - {name: weight, type: contact_force, bodies: [floor, box], min: 4.8, max: 5.0, after: 0.5}\n"
      "  - {name: shallow, type: no_penetration, value: 0.001}\n"
      "  - {name: deep, type: no_penetration, bodies: [box, floor], value: 1e-9}\n"
      "  - {name: converged, type: solver_converged}\n"
      "  - {name: one_iteration, type: solver_converged, value: 1}\n");
  tw_step(&t, 100);
  const kn_check_result* r = find(t.world, "weight");
  /* at rest the normal forces sum to m g = 0.5 * 9.81 = 4.905 N (tolerance: SAP's relative
   * tolerance on the momentum balance, well under 1e-3) */
  cr_assert(r->passed, "%s", r->message);
  cr_assert_float_eq(r->measured, 0.5 * G, 5e-3, "%s", r->message);
  cr_assert_float_eq(r->lo, 0.5 * G, 5e-3);
  cr_assert_float_eq(r->hi, 0.5 * G, 5e-3);
  /* the compliant contact sinks by about m g / k: phi < 0 but far from 1 mm */
  r = find(t.world, "shallow");
  cr_assert(r->passed, "%s", r->message);
  cr_assert(r->measured < 0 && r->measured > -1e-3, "%g", r->measured);
  r = find(t.world, "deep");
  cr_assert_not(r->passed, "%s", r->message);
  cr_assert_float_eq(r->measured, find(t.world, "shallow")->measured, 1e-15);
  cr_assert(find(t.world, "converged")->passed);
  r = find(t.world, "one_iteration");
  cr_assert_not(r->passed);
  cr_assert(r->measured >= 1, "%g", r->measured);
  tw_free(&t);
}

Test(checks, welded_object_does_not_drift) {
  /* the arm swings joint 1 by 0.5 rad with a box welded to its flange: the box moves ~0.3 m but
   * its pose relative to the link stays up to the weld's compliance (SAP's weld constraint is
   * a stiff spring, near-rigid: measured 0.12 mm while the link accelerates) */
  test_world t = tw_create(
      "time_step: 0.01\nduration: 1\ngravity: [0, 0, 0]\n"
      "robots:\n"
      "  - name: arm\n"
      "    urdf: knead://models/knead_arm7.urdf\n"
      "    q0: [0, 0.3, 0, -1.2, 0, 0.9, 0]\n"
      "    controller:\n"
      "      kp: 500\n      kd: 50\n"
      "      sequence: [{name: swing, duration: 0.8, q: [0.5, 0.3, 0, -1.2, 0, 0.9, 0]}]\n"
      "objects:\n"
      "  - {name: box, shape: {box: [0.04, 0.04, 0.04]}, mass: 0.2, pose: {xyz: [0.5, 0, 0.5]}}\n"
      "welds:\n"
      "  - {body_a: arm/arm_link_7, body_b: box}\n"
      "contact: {exclude: [[arm, box]]}\n"
      "checks:\n"
      "  - {name: held, type: grasp_held, body: box, link: arm/arm_link_7, value: 0.5, rotation: 0.1}\n"
      "  - {name: moved, type: distance_below, bodies: [box, arm/arm_link_0], value: 10}\n");
  double p0[3];
  memcpy(p0, tw_object_q(&t, "box"), sizeof p0);
  tw_step(&t, 100);
  const double* p = tw_object_q(&t, "box");
  double moved = sqrt((p[0] - p0[0]) * (p[0] - p0[0]) + (p[1] - p0[1]) * (p[1] - p0[1]));
  cr_assert(moved > 0.1, "the box moved only %g m", moved);
  const kn_check_result* r = find(t.world, "held");
  cr_assert(r->passed, "%s", r->message);
  cr_assert(r->measured >= 0 && r->measured < 0.5, "drift %g mm", r->measured);
  cr_assert(r->measured2 >= 0 && r->measured2 < 0.1, "rotation %g deg", r->measured2);
  tw_free(&t);
}

// (yaml) => the load or world error message (static buffer)
static const char* error_of(const char* yaml, kn_status want) {
  static kn_error err;
  memset(&err, 0, sizeof err);
  kn_scene* s = NULL;
  kn_world* w = NULL;
  kn_status st = kn_scene_load_string(yaml, strlen(yaml), "inline.yaml", &s, &err);
  if (!st) st = kn_world_create(s, &w, &err);
  if (!st) st = kn_checks_attach(w, &err);
  cr_assert_eq(st, want, "status %d: %s", st, err.msg);
  kn_world_free(w);
  kn_scene_free(s);
  return err.msg;
}

Test(checks, errors_name_file_line_and_key) {
  const char* head = "time_step: 0.01\nobjects:\n  - {name: box, shape: {sphere: 0.1}, mass: 1}\nchecks:\n";
  char y[1024];
  snprintf(y, sizeof y, "%s  - {name: a, type: height_above, body: nothing, value: 1}\n", head);
  const char* m = error_of(y, KN_ERR_INVALID);
  cr_assert(strstr(m, "inline.yaml:5: checks[0].body") && strstr(m, "nothing"), "%s", m);
  snprintf(y, sizeof y, "%s  - {name: a, type: height_above, body: box}\n", head);
  m = error_of(y, KN_ERR_INVALID);
  cr_assert(strstr(m, "inline.yaml:5: checks[0]") && strstr(m, "needs value"), "%s", m);
  snprintf(y, sizeof y, "%s  - {name: a, type: height_above, body: box, value: 1}\n"
                        "  - {name: a, type: solver_converged}\n", head);
  m = error_of(y, KN_ERR_INVALID);
  cr_assert(strstr(m, "inline.yaml:6: checks[1].name") && strstr(m, "already used"), "%s", m);
  snprintf(y, sizeof y, "%s  - {name: a, type: height_above, body: box, value: 1, after: 2, before: 1}\n", head);
  m = error_of(y, KN_ERR_INVALID);
  cr_assert(strstr(m, "inline.yaml:5: checks[0].before"), "%s", m);
  snprintf(y, sizeof y, "%s  - {name: a, type: height_above, body: box, value: 1, min: 2}\n", head);
  m = error_of(y, KN_ERR_INVALID);
  cr_assert(strstr(m, "checks[0].min") && strstr(m, "does not apply"), "%s", m);
  snprintf(y, sizeof y, "%s  - {name: a, type: tallness, body: box}\n", head);
  m = error_of(y, KN_ERR_PARSE);
  cr_assert(strstr(m, "inline.yaml:5") && strstr(m, "checks[0].type"), "%s", m);
  snprintf(y, sizeof y, "%s  - {name: a, type: contact_force, bodies: [box, ghost], min: 1}\n", head);
  m = error_of(y, KN_ERR_INVALID);
  cr_assert(strstr(m, "inline.yaml:5: checks[0].bodies[1]") && strstr(m, "ghost"), "%s", m);
}

Test(checks, summary_json_lists_the_checks) {
  test_world t = tw_create(falling);
  char dir[] = "/tmp/knead_test_checks_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  kn_error err = {0};
  cr_assert_eq(kn_world_run(t.world, dir, NULL, NULL, NULL, &err), KN_OK, "%s", err.msg);
  char path[256], buf[1 << 15];
  snprintf(path, sizeof path, "%s/summary.json", dir);
  FILE* f = fopen(path, "r");
  cr_assert_not_null(f);
  buf[fread(buf, 1, sizeof buf - 1, f)] = 0;
  fclose(f);
  const char* c = strstr(buf, "\"checks\": [");
  cr_assert_not_null(c, "%s", buf);
  cr_assert(strstr(c, "{\"name\": \"below_pass\", \"type\": \"height_below\", \"passed\": true, \"expect\": \"pass\", "
                      "\"samples\": 21, \"measured\": "), "%s", c);
  cr_assert(strstr(c, "{\"name\": \"above_fail\", \"type\": \"height_above\", \"passed\": false, \"expect\": \"fail\""),
            "%s", c);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
  tw_free(&t);
}

/* MPM particle contacts feed contact_force and no_penetration: a 1 kg dough cube (0.1 m, rho 1000,
 * E 1e5) resting on the floor presses it with m g = 9.81 N once settled (measured 9.806-9.809 N
 * over [0.6, 1] s: SAP's momentum tolerance and the cube's last ringing; asserted to 0.2 %), a
 * particle contact exists only below the floor (deepest -2.2 mm, in the landing) and the pair can
 * be given either way round. */
Test(checks, mpm_contacts_are_checked) {
  test_world t = tw_create(
      "time_step: 0.01\nduration: 1\n"
      "objects:\n"
      "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
      "deformables:\n"
      "  - name: dough\n    model: mpm\n    shape: {box: [0.1, 0.1, 0.1]}\n    resolution: 0.05\n"
      "    particles_per_cell: 8\n    pose: {xyz: [0, 0, 0.05]}\n"
      "    material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.3, density: 1000}\n"
      "checks:\n"
      "  - {name: weight, type: contact_force, bodies: [floor, dough], min: 9.6, max: 10.0, after: 0.6}\n"
      "  - {name: weight_reversed, type: contact_force, bodies: [dough, floor], min: 9.6, max: 10.0, after: 0.6}\n"
      "  - {name: shallow, type: no_penetration, bodies: [dough, floor], value: 0.005}\n"
      "  - {name: deep, type: no_penetration, value: 1e-9}\n");
  tw_step(&t, 100);
  const kn_check_result* r = find(t.world, "weight");
  cr_log_info("MPM weight: %s", r->message);
  cr_assert(r->passed, "%s", r->message);
  cr_assert(r->lo > 0.998 * 9.81 && r->hi < 1.002 * 9.81, "range [%g, %g]", r->lo, r->hi);
  cr_assert_float_eq(find(t.world, "weight_reversed")->measured, r->measured, 1e-12);
  r = find(t.world, "shallow");
  cr_log_info("MPM depth: %s", r->message);
  cr_assert(r->passed, "%s", r->message);
  cr_assert(r->measured < 0, "a particle contact is found only once it penetrates: phi %g", r->measured);
  cr_assert_not(find(t.world, "deep")->passed);
  cr_assert_eq(t.world->nmpm_contact, t.world->mpms[0].ncontact);
  tw_free(&t);
}
