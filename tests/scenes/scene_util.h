/* Helpers for the scene tests: a world from YAML text, stepping, and object coordinates. */
#ifndef KNEAD_TESTS_SCENE_UTIL_H
#define KNEAD_TESTS_SCENE_UTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check/check.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef struct {
  kn_scene* scene;
  kn_world* world;
} test_world;

// (YAML text) => a world watched by its checks; fails the test with the message on any error
static inline test_world tw_create(const char* yaml) {
  test_world t = {0};
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), "inline.yaml", &t.scene, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(t.scene, &t.world, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_checks_attach(t.world, &err), KN_OK, "%s", err.msg);
  return t;
}

// the 12 outward triangles of the unit cube [-0.5, 0.5]^3 as an OBJ file at path (scaled by the scene)
static inline void tw_write_unit_cube_obj(const char* path) {
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f, "cannot write %s", path);
  for (int i = 0; i < 8; ++i) fprintf(f, "v %g %g %g\n", i & 1 ? 0.5 : -0.5, i & 2 ? 0.5 : -0.5, i & 4 ? 0.5 : -0.5);
  const int face[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  for (int k = 0; k < 6; ++k)
    fprintf(f, "f %d %d %d\nf %d %d %d\n", face[k][0] + 1, face[k][1] + 1, face[k][2] + 1, face[k][0] + 1,
            face[k][2] + 1, face[k][3] + 1);
  fclose(f);
}

static inline void tw_free(test_world* t) {
  kn_world_free(t->world);
  kn_scene_free(t->scene);
}

// (examples/regression/<file>, contact.backend) => its world watched by its checks, as
// `knead check --set contact.backend=<backend>` runs it
static inline test_world tw_regression(const char* file, const char* backend) {
  char path[512], set0[64];
  snprintf(path, sizeof path, "%s/examples/regression/%s", KNEAD_SOURCE_DIR, file);
  snprintf(set0, sizeof set0, "contact.backend=%s", backend);
  const char* set[] = {set0};
  test_world t = {0};
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_with(path, set, 1, &t.scene, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(t.scene, &t.world, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_checks_attach(t.world, &err), KN_OK, "%s", err.msg);
  return t;
}

// every check of the world but SAP's recorded trajectory (`golden`) passed; at least `min` judged
static inline void tw_expect_checks_pass(const test_world* t, const char* label, int min) {
  int n = 0, judged = 0;
  const kn_check_result* r = kn_world_checks(t->world, &n);
  for (int i = 0; i < n; i++) {
    if (strcmp(r[i].name, "golden") == 0) continue;
    judged++;
    cr_log_info("%s %s: %s %s", label, r[i].name, r[i].passed ? "PASS" : "FAIL", r[i].message);
    cr_expect(r[i].passed, "%s %s: %s", label, r[i].name, r[i].message);
  }
  cr_expect_geq(judged, min, "%s: %d checks judged", label, judged);
}

static inline void tw_step(test_world* t, long n) {
  kn_error err = {0};
  for (long k = 0; k < n; k++) cr_assert_eq(kn_world_step(t->world, &err), KN_OK, "%s", err.msg);
}

// object named `name` => its tree's q (a free primitive: x y z qw qx qy qz)
static inline double* tw_object_q(test_world* t, const char* name) {
  for (int i = 0; i < t->world->nobject; i++)
    if (strcmp(t->world->objects[i].name, name) == 0) return t->world->trees[t->world->objects[i].tree].q;
  cr_assert_fail("no object '%s'", name);
  return NULL;
}

#endif
