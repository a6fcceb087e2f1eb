/* scene/: --set overrides (kn_scene_load_with): an existing scalar is replaced, a missing key and the
 * mappings above it are added, a value shared through an alias changes only where it is set, the
 * overridden document is read exactly as the edited file; each bad override is refused with its
 * message and loads nothing; a value the validation refuses names the override. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "../support/tmpdir.h"

static void make_tmpdir(void) { tmpdir_make("test_scene_set"); }

TestSuite(scene_set, .init = make_tmpdir, .fini = tmpdir_remove);

/* Line numbers of the keys below are asserted: keep them where they are. */
static const char scene_text[] =
    "name: set_test\n"                                   /* 1 */
    "time_step: 0.01\n"                                  /* 2 */
    "duration: 0.1\n"                                    /* 3 */
    "contact:\n"                                         /* 4 */
    "  backend: sap\n"                                   /* 5 */
    "objects:\n"                                         /* 6 */
    "  - name: floor\n"                                  /* 7 */
    "    shape: {halfspace: {normal: [0, 0, 1]}}\n"      /* 8 */
    "    fixed: true\n"                                  /* 9 */
    "    friction: &mu 0.5\n"                            /* 10 */
    "  - name: box\n"                                    /* 11 */
    "    shape: {box: [0.1, 0.1, 0.1]}\n"                /* 12 */
    "    mass: 1.0\n"                                    /* 13 */
    "    pose: {xyz: [0, 0, 0.05]}\n"                    /* 14 */
    "    friction: *mu\n";                               /* 15 */

static const char* scene_path(void) {
  static char path[512];
  write_file("set.yaml", scene_text);
  snprintf(path, sizeof path, "%s/set.yaml", tmpdir);
  return path;
}

// (overrides) => the scene loaded with them (asserted to load)
static kn_scene* load_set(const char* const* sets, int n) {
  kn_scene* s = NULL;
  kn_error err = {0};
  kn_status st = kn_scene_load_with(scene_path(), sets, n, &s, &err);
  cr_assert_eq(st, KN_OK, "%s", err.msg);
  return s;
}

// (one override, status, message) => the load fails with exactly "--set ..." and loads nothing
static void expect_set_error(const char* set, kn_status want, const char* msg) {
  kn_scene* s = NULL;
  kn_error err = {0};
  kn_status st = kn_scene_load_with(scene_path(), &set, 1, &s, &err);
  cr_assert_eq(st, want, "status %d, expected %d: %s", st, want, err.msg);
  cr_assert_null(s);
  cr_assert_str_eq(err.msg, msg);
}

Test(scene_set, an_existing_scalar_is_replaced_only_at_its_path) {
  const char* sets[] = {"objects[1].friction=0.3", "duration=0.25", "objects[1].pose.xyz[2]=0.06"};
  kn_scene* s = load_set(sets, 3);
  cr_assert_float_eq(*s->doc->objects[1].friction, 0.3, 0);
  /* the floor's friction is the same YAML node (&mu / *mu): it keeps 0.5 */
  cr_assert_float_eq(*s->doc->objects[0].friction, 0.5, 0);
  cr_assert_float_eq(s->duration, 0.25, 0);
  cr_assert_float_eq(s->doc->objects[1].pose.xyz[2], 0.06, 0);
  cr_assert_float_eq(s->doc->objects[1].pose.xyz[0], 0, 0);
  /* the lines are still the file's */
  cr_assert_eq(kn_scene_line(s, "objects[1].friction"), 15);
  cr_assert_eq(kn_scene_line(s, "objects[1].mass"), 13);
  cr_assert_eq(s->noverrides, 3);
  cr_assert_str_eq(s->overrides[0], "objects[1].friction=0.3");
  cr_assert_str_eq(s->overrides[2], "objects[1].pose.xyz[2]=0.06");
  kn_scene_free(s);
}

Test(scene_set, missing_keys_and_mappings_are_added) {
  const char* sets[] = {"contact.margin=0.001", "contact.solver.max_iterations=7"};
  kn_scene* s = load_set(sets, 2);
  cr_assert_float_eq(s->margin, 0.001, 0);
  cr_assert_float_eq(*s->doc->contact->margin, 0.001, 0);
  cr_assert_not_null(s->doc->contact->solver);
  cr_assert_eq(*s->doc->contact->solver->max_iterations, 7);
  cr_assert_eq(s->backend, KN_BACKEND_SAP);
  /* an added key is reported at its mapping's first line */
  cr_assert_eq(kn_scene_line(s, "contact.margin"), 5);
  kn_scene_free(s);
  /* a whole section the file lacks: output.dir and output.contacts */
  const char* out[] = {"output.dir=variant_out", "output.contacts=yes", "objects[1].dissipation_time=0.02"};
  s = load_set(out, 3);
  cr_assert_not_null(s->output);
  cr_assert_str_eq(s->output->dir, "variant_out");
  cr_assert(s->output->contacts);
  cr_assert_float_eq(*s->doc->objects[1].dissipation_time, 0.02, 0);
  kn_scene_free(s);
}

Test(scene_set, values_are_typed_by_the_schema_and_may_be_quoted) {
  const char* sets[] = {"contact.backend=none", "objects[1].fixed=YES", "name='variant one'",
                        "objects[0].name=\"ground\""};
  kn_scene* s = load_set(sets, 4);
  cr_assert_eq(s->backend, KN_BACKEND_NONE);
  cr_assert(s->doc->objects[1].fixed);
  cr_assert_str_eq(s->name, "variant one");
  cr_assert_str_eq(s->doc->objects[0].name, "ground");
  kn_scene_free(s);
}

Test(scene_set, the_overridden_document_loads_as_the_edited_file) {
  /* the same keys set by --set and written in the file give the same document and the same world;
   * contact.margin is one of the keys under test (adding a key to an existing section), not a tuning */
  const char* sets[] = {"objects[1].friction=0.2", "gravity[0]=1", "contact.margin=0.002"};
  char edited[sizeof scene_text + 64];
  snprintf(edited, sizeof edited, "%s", scene_text);
  char* mu = strstr(edited, "friction: *mu");
  memcpy(mu, "friction: 0.2", strlen("friction: 0.2"));
  strcat(edited, "gravity: [1, 0, -9.81]\n");
  char* backend = strstr(edited, "  backend: sap\n");
  memmove(backend + strlen("  margin: 0.002\n"), backend, strlen(backend) + 1);
  memcpy(backend, "  margin: 0.002\n", strlen("  margin: 0.002\n"));
  write_file("edited.yaml", edited);
  write_file("base.yaml", "name: set_test\ntime_step: 0.01\nduration: 0.1\ngravity: [0, 0, -9.81]\n"
                          "contact:\n  backend: sap\nobjects:\n  - name: floor\n"
                          "    shape: {halfspace: {normal: [0, 0, 1]}}\n    fixed: true\n    friction: &mu 0.5\n"
                          "  - name: box\n    shape: {box: [0.1, 0.1, 0.1]}\n    mass: 1.0\n"
                          "    pose: {xyz: [0, 0, 0.05]}\n    friction: *mu\n");
  char base_path[512], edited_path[512];
  snprintf(base_path, sizeof base_path, "%s/base.yaml", tmpdir);
  snprintf(edited_path, sizeof edited_path, "%s/edited.yaml", tmpdir);
  kn_scene *a = NULL, *b = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_with(base_path, sets, 3, &a, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_scene_load(edited_path, &b, &err), KN_OK, "%s", err.msg);
  cr_assert_float_eq(a->gravity[0], 1, 0);
  cr_assert_float_eq(a->gravity[2], -9.81, 0);
  cr_assert_float_eq(a->margin, b->margin, 0);
  kn_world *wa = NULL, *wb = NULL;
  cr_assert_eq(kn_world_create(a, &wa, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(b, &wb, &err), KN_OK, "%s", err.msg);
  for (int i = 0; i < 10; i++) {
    cr_assert_eq(kn_world_step(wa, &err), KN_OK, "%s", err.msg);
    cr_assert_eq(kn_world_step(wb, &err), KN_OK, "%s", err.msg);
  }
  cr_assert_eq(kn_world_state_hash(wa), kn_world_state_hash(wb));
  kn_world_free(wa);
  kn_world_free(wb);
  kn_scene_free(a);
  kn_scene_free(b);
}

Test(scene_set, bad_overrides_are_refused_with_their_message) {
  expect_set_error("contact.margin", KN_ERR_INVALID,
                   "--set contact.margin: expected key=value (e.g. --set contact.margin=0.001)");
  expect_set_error("=0.1", KN_ERR_INVALID,
                   "--set =0.1: the key before '=' is empty (expected key=value, e.g. --set contact.margin=0.001)");
  expect_set_error("objects[1]..friction=1", KN_ERR_INVALID,
                   "--set objects[1]..friction=1: 'objects[1]..friction' is not a key path (keys joined by '.', "
                   "list entries as [i]: objects[1].friction)");
  expect_set_error("objects[5].friction=0.3", KN_ERR_INVALID,
                   "--set objects[5].friction=0.3: objects has 2 entries in the scene (objects[0] to objects[1]): "
                   "there is no objects[5]");
  expect_set_error("gravity[2]=-1.62", KN_ERR_INVALID,
                   "--set gravity[2]=-1.62: gravity is not in the scene; --set changes an entry of a list the scene "
                   "has, it does not add lists or entries");
  expect_set_error("time_step.x=1", KN_ERR_INVALID,
                   "--set time_step.x=1: time_step is a single value (a number), it has no key 'x'");
  expect_set_error("objects[0].shape.halfspace.normal[0].x=1", KN_ERR_INVALID,
                   "--set objects[0].shape.halfspace.normal[0].x=1: objects[0].shape.halfspace.normal[0] is a single "
                   "value (a number), it has no key 'x'");
  expect_set_error("contact=1", KN_ERR_INVALID,
                   "--set contact=1: contact is a mapping with keys backend, margin, exclude, filter_groups, solver, smooth_friction, penalty, ipc; "
                   "--set sets one value: set its keys, contact.<key>=...");
  expect_set_error("objects[1].velocity=1", KN_ERR_INVALID,
                   "--set objects[1].velocity=1: objects[1].velocity is a list of 6 values, each a number; --set sets one "
                   "value: set its entries, objects[1].velocity[0]=...");
  expect_set_error("contact.foo=1", KN_ERR_PARSE,
                   "--set contact.foo=1: unknown key 'foo' in contact (expected one of: backend, margin, exclude, "
                   "filter_groups, solver, smooth_friction, penalty, ipc)");
  expect_set_error("contact.margin=abc", KN_ERR_PARSE, "--set contact.margin=abc: expected a number");
  expect_set_error("contact.margin=0.O5", KN_ERR_PARSE, "--set contact.margin=0.O5: expected a number");
  expect_set_error("contact.solver.max_iterations=2.5", KN_ERR_PARSE,
                   "--set contact.solver.max_iterations=2.5: expected a number");
  expect_set_error("objects[1].fixed=maybe", KN_ERR_PARSE,
                   "--set objects[1].fixed=maybe: expected one of: false, true, no, yes, off, on");
  expect_set_error("duration=[1]", KN_ERR_INVALID,
                   "--set duration=[1]: the value is a list; --set sets one value (a number, true/false or text)");
  expect_set_error("objects[1].friction={a: 1}", KN_ERR_INVALID,
                   "--set objects[1].friction={a: 1}: the value is a mapping; --set sets one value (a number, "
                   "true/false or text)");
  expect_set_error("objects[1].shape.box[0]=1.0O", KN_ERR_PARSE, "--set objects[1].shape.box[0]=1.0O: expected a number");
  expect_set_error("objects[1].shape.box[3]=1", KN_ERR_INVALID,
                   "--set objects[1].shape.box[3]=1: objects[1].shape.box has 3 entries in the scene "
                   "(objects[1].shape.box[0] to objects[1].shape.box[2]): there is no objects[1].shape.box[3]");
}

Test(scene_set, unknown_top_level_key_lists_the_scene_keys) {
  kn_scene* s = NULL;
  kn_error err = {0};
  const char* set = "frobnicate=1";
  cr_assert_eq(kn_scene_load_with(scene_path(), &set, 1, &s, &err), KN_ERR_PARSE);
  cr_assert(strncmp(err.msg, "--set frobnicate=1: unknown key 'frobnicate' in the scene (expected one of: name, "
                             "time_step, duration, gravity,", 98) == 0, "%s", err.msg);
}

Test(scene_set, a_value_the_validation_refuses_names_the_override) {
  const char* path = scene_path();
  kn_scene* s = NULL;
  kn_error err = {0};
  const char* margin = "contact.margin=-1";
  cr_assert_eq(kn_scene_load_with(path, &margin, 1, &s, &err), KN_ERR_INVALID);
  char want[1024];
  snprintf(want, sizeof want,
           "%s:5: contact.margin: must be finite and >= 0 m (got -1) (set by --set contact.margin=-1)", path);
  cr_assert_str_eq(err.msg, want);
  const char* dt = "time_step=0";
  cr_assert_eq(kn_scene_load_with(path, &dt, 1, &s, &err), KN_ERR_INVALID);
  snprintf(want, sizeof want, "%s:2: time_step: must be > 0 seconds (got 0) (set by --set time_step=0)", path);
  cr_assert_str_eq(err.msg, want);
  /* an error elsewhere in the file keeps its line and names no override */
  write_file("bad.yaml", "name: bad\nobjects:\n  - name: box\n    shape: {sphere: 0.1}\n    frction: 0.5\n");
  char bad[512];
  snprintf(bad, sizeof bad, "%s/bad.yaml", tmpdir);
  const char* set = "contact.margin=0.001";
  cr_assert_eq(kn_scene_load_with(bad, &set, 1, &s, &err), KN_ERR_PARSE);
  snprintf(want, sizeof want, "%s:5: unknown key 'frction' in objects[0]", bad);
  cr_assert(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
  cr_assert_null(strstr(err.msg, "--set"), "%s", err.msg);
  cr_assert_null(s);
}

Test(scene_set, the_string_variant_and_no_overrides) {
  kn_scene* s = NULL;
  kn_error err = {0};
  const char* set = "contact.margin=0.003";
  cr_assert_eq(kn_scene_load_string_with(scene_text, strlen(scene_text), "mem.yaml", &set, 1, &s, &err), KN_OK,
               "%s", err.msg);
  cr_assert_float_eq(s->margin, 0.003, 0);
  kn_scene_free(s);
  /* n = 0: the plain load, no overrides recorded */
  cr_assert_eq(kn_scene_load_string_with(scene_text, strlen(scene_text), "mem.yaml", NULL, 0, &s, &err), KN_OK);
  cr_assert_eq(s->noverrides, 0);
  cr_assert_float_eq(s->margin, 0, 0);
  kn_scene_free(s);
}

Test(scene_set, a_list_shared_through_an_alias_changes_only_where_it_is_set) {
  /* box_mu_0_5: the phases lift and settle share one list (&lift / *lift) */
  const char* path = KNEAD_SOURCE_DIR "/examples/regression/box_mu_0_5.yaml";
  const char* set = "robots[0].controller.sequence[3].q[1]=0.7";
  kn_scene* s = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_with(path, &set, 1, &s, &err), KN_OK, "%s", err.msg);
  const kn_scene_controller* c = s->doc->robots[0].controller;
  cr_assert_str_eq(c->sequence[3].name, "settle");
  cr_assert_float_eq(c->sequence[3].q[1], 0.7, 0);
  cr_assert_float_eq(c->sequence[2].q[1], 0.624905, 0); /* lift keeps the file's value */
  cr_assert_float_eq(c->sequence[8].q[1], 0.624905, 0); /* and so does shake_end (*lift) */
  cr_assert_float_eq(c->sequence[3].q[3], -1.652252, 0);
  /* lines of the file after the override's */
  cr_assert_eq(kn_scene_line(s, "objects[1]"), 48);
  kn_scene_free(s);
}

Test(scene_set, text_that_needs_quoting_in_flow_style_reads_the_same) {
  write_file("odd.yaml", "name: 'odd, name: #1 {x}'\n"
                         "time_step: 0.01\n"
                         "output:\n"
                         "  dir: |\n"
                         "    two\n"
                         "    lines\n"
                         "objects:\n"
                         "  - name: -ball\n"
                         "    shape: {sphere: 0.1}\n");
  char path[512];
  snprintf(path, sizeof path, "%s/odd.yaml", tmpdir);
  const char* set = "duration=0.5";
  kn_scene* s = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_with(path, &set, 1, &s, &err), KN_OK, "%s", err.msg);
  cr_assert_str_eq(s->name, "odd, name: #1 {x}");
  cr_assert_str_eq(s->output->dir, "two\nlines\n");
  cr_assert_str_eq(s->doc->objects[0].name, "-ball");
  cr_assert_float_eq(s->duration, 0.5, 0);
  cr_assert_eq(kn_scene_line(s, "objects[0].shape"), 9);
  kn_scene_free(s);
}
