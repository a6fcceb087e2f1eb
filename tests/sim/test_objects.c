/* Scene objects and contact keys: parsing (shapes, exclude pairs, solver options), the colliders
 * they become, the contact filter, and the solver.csv / contacts.csv outputs of kn_world_run. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "sim/sim.h"

static const char* two_balls =
    "time_step: 0.005\nduration: 0.05\n"
    "contact: {margin: 0.001, exclude: [[a, ground]], solver: {max_iterations: 50, linear_solver: dense}}\n"
    "objects:\n"
    "  - {name: ground, shape: {halfspace: {normal: [0, 0, 2]}}, fixed: true, friction: 0.4}\n"
    "  - {name: a, shape: {sphere: 0.1}, mass: 2, pose: {xyz: [0, 0, 0.099]}}\n"
    "  - {name: b, shape: {box: [0.1, 0.2, 0.3]}, density: 500, pose: {xyz: [1, 0, 0.149]}, stiffness: 2e6}\n"
    "output: {contacts: true, solver: true}\n";

Test(objects, parse_build_filter_and_outputs) {
  kn_scene* s = NULL;
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(two_balls, strlen(two_balls), "inline.yaml", &s, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(s->doc->contact->nexclude, 1);
  cr_assert_str_eq(s->doc->contact->exclude[0].names[0], "a");
  cr_assert_str_eq(s->doc->contact->exclude[0].names[1], "ground");
  cr_assert_eq(s->margin, 0.001);
  cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(w->nobject, 3);
  cr_assert_eq(w->ncollider, 3);
  cr_assert_eq(w->colliders[0].c.clique, -1); /* the fixed ground */
  cr_assert_float_eq(w->colliders[0].c.material.mu, 0.4, 1e-15);
  cr_assert_float_eq(w->colliders[2].c.material.stiffness, 2e6, 1e-6);
  /* box mass from density: 500 * 0.1 * 0.2 * 0.3 = 3 kg; Ixx = m (0.2^2 + 0.3^2) / 12 */
  const kn_mb_body* box = &w->trees[w->objects[2].tree].robot->model->bodies[0];
  cr_assert_float_eq(box->mass, 3.0, 1e-12);
  cr_assert_float_eq(box->I_com[0], 3.0 * (0.04 + 0.09) / 12, 1e-12);
  char dir[] = "/tmp/knead_objects_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  kn_run_summary sum;
  cr_assert_eq(kn_world_run(w, dir, NULL, NULL, &sum, &err), KN_OK, "%s", err.msg);
  /* ball a overlaps the ground by 1 mm but the pair is excluded: it falls freely, g t (t + dt) / 2 */
  const double* qa = w->trees[w->objects[1].tree].q;
  double t = 0.05, dt = 0.005, z = 0.099 - 9.81 * t * (t + dt) / 2;
  cr_assert_float_eq(qa[2], z, 1e-9, "ball a z = %.9f, expected free fall %.9f", qa[2], z);
  /* the box rests on the ground: its contacts (4 corners) carry its weight */
  double fz = 0;
  for (int c = 0; c < w->ncontact; c++) {
    cr_assert_str_eq(w->colliders[w->contacts[c].b].name, "b");
    fz += w->contacts[c].f[2];
  }
  cr_assert_eq(w->ncontact, 4);
  cr_assert(fabs(fz - 3 * 9.81) < 0.05 * 3 * 9.81, "contact force %.4f N, weight %.4f N", fz, 3 * 9.81);
  char path[256], line[512];
  snprintf(path, sizeof path, "%s/contacts.csv", dir);
  FILE* f = fopen(path, "r");
  cr_assert_not_null(f);
  int rows = 0;
  while (fgets(line, sizeof line, f)) rows++;
  fclose(f);
  cr_assert_eq(rows, 1 + 4 * 10, "contacts.csv: %d lines", rows); /* header + 4 corners x 10 steps */
  snprintf(path, sizeof path, "%s/solver.csv", dir);
  f = fopen(path, "r");
  cr_assert_not_null(f);
  rows = 0;
  while (fgets(line, sizeof line, f)) rows++;
  fclose(f);
  cr_assert_eq(rows, 11);
  snprintf(path, sizeof path, "%s/summary.json", dir);
  f = fopen(path, "r");
  char buf[8192];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  cr_assert(strstr(buf, "\"solver\": {\"steps\": 10"), "%s", buf);
  kn_world_free(w);
  kn_scene_free(s);
}

Test(objects, bad_objects_are_errors_with_keys) {
  const char* cases[][2] = {
      {"objects:\n  - {name: x, shape: {sphere: 0.1, box: [1, 1, 1]}}\n", "objects[0].shape"},
      {"objects:\n  - {name: x, shape: {halfspace: {normal: [0, 0, 1]}}}\n", "objects[0].shape"},
      {"objects:\n  - {name: x, shape: {sphere: -1}}\n", "objects[0].shape"},
      {"objects:\n  - {name: x, shape: {sphere: 0.1}, mass: 1, density: 2}\n", "objects[0]"},
      {"objects:\n  - {name: x, shape: {sphere: 0.1}, friction: -1}\n", "objects[0].friction"},
      {"contact: {margin: -1}\n", "contact.margin"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    kn_scene* s = NULL;
    kn_error err = {0};
    kn_status st = kn_scene_load_string(cases[i][0], strlen(cases[i][0]), "bad.yaml", &s, &err);
    cr_expect_eq(st, KN_ERR_INVALID, "case %zu: status %d: %s", i, st, err.msg);
    cr_expect(strstr(err.msg, cases[i][1]) != NULL, "case %zu: no '%s' in: %s", i, cases[i][1], err.msg);
    kn_scene_free(s);
  }
  /* exclude names must exist */
  const char* y = "contact: {exclude: [[nobody, ground]]}\nobjects:\n  - {name: ground, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n";
  kn_scene* s = NULL;
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(y, strlen(y), "bad.yaml", &s, &err), KN_OK, "%s", err.msg);
  cr_expect_eq(kn_world_create(s, &w, &err), KN_ERR_INVALID);
  cr_expect(strstr(err.msg, "contact.exclude[0]") && strstr(err.msg, "nobody"), "%s", err.msg);
  kn_world_free(w);
  kn_scene_free(s);
}
