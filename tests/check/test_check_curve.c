/* check/checks.c, follows_curve: a quantity against an analytic curve over time. A box in free fall
 * (contact backend none: z_n = z0 - g (n dt)^2 / 2 exactly, tests/check/test_checks.c) follows
 * its formula to round-off; shifted by 2 mm it fails by 2 mm; a CSV of the same parabola sampled
 * every 0.1 s and interpolated linearly is off by at most g h^2 / 8 = 12.2625 mm between samples
 * (at t = 0.05 s, 0.15 s, ...: steps of the run); errors name file:line:key. */
#include <math.h>
#include <unistd.h>

#include "../scenes/scene_util.h"

#define G 9.81

static const kn_check_result* find(const kn_world* w, const char* name) {
  int n = 0;
  const kn_check_result* r = kn_world_checks(w, &n);
  for (int i = 0; i < n; i++)
    if (!strcmp(r[i].name, name)) return &r[i];
  cr_assert_fail("no check '%s'", name);
  return NULL;
}

static const char* head =
    "time_step: 0.01\nduration: 0.5\ncontact: {backend: none}\n"
    "objects:\n"
    "  - {name: box, shape: {box: [0.1, 0.1, 0.1]}, mass: 1, pose: {xyz: [0, 0, 1]}}\n"
    "checks:\n";

Test(check_curve, free_fall_follows_its_formula) {
  char y[4096];
  snprintf(y, sizeof y, "%s"
           "  - {name: z_exact, type: follows_curve, body: box, quantity: z, formula: \"objects[0].pose.xyz[2] - "
           "0.5*g*t^2\", tolerance: 1e-9}\n"
           "  - {name: z_shifted, type: follows_curve, body: box, quantity: z, formula: \"1.002 - 0.5*g*t^2\", "
           "tolerance: 0.001}\n"
           "  - {name: fallen, type: follows_curve, body: box, quantity: along, direction: [0, 0, -2], formula: "
           "\"g*t^2/2\", rel_tolerance: 1e-9, after: 0.1}\n"
           "  - {name: distance, type: follows_curve, body: box, quantity: distance, point: [0.05, 0, 0], "
           "formula: \"0.5*g*t^2\", tolerance: 1e-9, before: 0.3}\n"
           "  - {name: x_rel, type: follows_curve, body: box, quantity: x, point: [0.05, 0, 0], formula: \"0.05\", "
           "rel_tolerance: 0.01}\n",
           head);
  test_world t = tw_create(y);
  tw_step(&t, 50);
  const kn_check_result* r = find(t.world, "z_exact");
  cr_assert(r->passed && r->measured < 1e-12 && r->samples == 51, "%s", r->message);
  r = find(t.world, "z_shifted");
  cr_assert(!r->passed, "%s", r->message);
  cr_assert_float_eq(r->measured, 0.002, 1e-12, "%s", r->message);
  cr_assert_float_eq(r->value + 0.002, r->reference, 1e-12);
  cr_assert(strstr(r->message, "max |error| = 0.002 m") && strstr(r->message, "needs <= 0.001 m in [0, 0.5] s"),
            "%s", r->message);
  r = find(t.world, "fallen");
  cr_assert(r->passed && r->samples == 41, "%s", r->message);
  cr_assert_float_eq(r->current, 0.5 * G * 0.25, 1e-12, "the last sample: %g", r->current);
  cr_assert_float_eq(r->current_reference, 0.5 * G * 0.25, 1e-12);
  r = find(t.world, "distance");
  cr_assert(r->passed && r->samples == 31, "%s", r->message);
  /* observed over the whole run (for plots), judged in its window */
  cr_assert_float_eq(r->current, 0.5 * G * 0.25, 1e-12, "after its window: %g", r->current);
  r = find(t.world, "x_rel");
  cr_assert(r->passed && r->measured < 1e-15, "%s", r->message);
  tw_free(&t);
}

Test(check_curve, csv_samples_interpolated_linearly) {
  char csv[] = "/tmp/knead_test_curve_XXXXXX";
  int fd = mkstemp(csv);
  cr_assert(fd >= 0);
  FILE* f = fdopen(fd, "w");
  fprintf(f, "t,z\n");
  for (int k = 0; k <= 5; k++) fprintf(f, "%.17g,%.17g\n", 0.1 * k, 1 - 0.5 * G * 0.01 * k * k);
  fclose(f);
  char y[4096];
  snprintf(y, sizeof y, "%s"
           "  - {name: loose, type: follows_curve, body: box, quantity: z, csv: %s, tolerance: 0.0123}\n"
           "  - {name: tight, type: follows_curve, body: box, quantity: z, csv: %s, tolerance: 0.01}\n",
           head, csv, csv);
  test_world t = tw_create(y);
  tw_step(&t, 50);
  const kn_check_result* r = find(t.world, "loose");
  cr_assert(r->passed, "%s", r->message);
  cr_assert_float_eq(r->measured, G * 0.01 / 8, 1e-9, "%s", r->message);
  r = find(t.world, "tight");
  cr_assert(!r->passed, "%s", r->message);
  cr_assert_float_eq(r->measured, G * 0.01 / 8, 1e-9, "%s", r->message);
  cr_assert_float_eq(r->t, 0.05, 1e-9, "the first midpoint: %g", r->t);
  tw_free(&t);
  unlink(csv);
}

// (yaml) => the load error message (static buffer)
static const char* error_of(const char* yaml, kn_status want) {
  static kn_error err;
  memset(&err, 0, sizeof err);
  kn_scene* s = NULL;
  kn_status st = kn_scene_load_string(yaml, strlen(yaml), "inline.yaml", &s, &err);
  cr_assert_eq(st, want, "status %d: %s", st, err.msg);
  kn_scene_free(s);
  return err.msg;
}

Test(check_curve, errors_name_file_line_and_key) {
  char y[4096];
  snprintf(y, sizeof y, "%s  - {name: a, type: follows_curve, body: box, quantity: z, formula: \"1 - 0.5*g*t^\", "
           "tolerance: 0.001}\n", head);
  const char* m = error_of(y, KN_ERR_PARSE);
  cr_assert(strstr(m, "inline.yaml:7: checks[0].formula: check 'a': formula \"1 - 0.5*g*t^\" at column 13: the "
                      "formula ends"), "%s", m);
  snprintf(y, sizeof y, "%s  - {name: a, type: follows_curve, body: box, quantity: z, formula: \"mu*t\", "
           "tolerance: 0.001}\n", head);
  m = error_of(y, KN_ERR_PARSE);
  cr_assert(strstr(m, "inline.yaml:7: checks[0].formula") && strstr(m, "unknown name 'mu'"), "%s", m);
  snprintf(y, sizeof y, "%s  - {name: a, type: follows_curve, body: box, quantity: z, formula: \"objects[0].friction\", "
           "tolerance: 0.001}\n", head);
  m = error_of(y, KN_ERR_PARSE);
  cr_assert(strstr(m, "checks[0].formula") && strstr(m, "'objects[0].friction' is not a scalar key of this scene"),
            "%s", m);
  snprintf(y, sizeof y, "%s  - {name: a, type: follows_curve, body: box, formula: \"t\", tolerance: 0.001}\n", head);
  m = error_of(y, KN_ERR_INVALID);
  cr_assert(strstr(m, "inline.yaml:7: checks[0]: check 'a' (follows_curve) needs quantity"), "%s", m);
  snprintf(y, sizeof y, "%s  - {name: a, type: follows_curve, body: box, quantity: z, tolerance: 0.001}\n", head);
  m = error_of(y, KN_ERR_INVALID);
  cr_assert(strstr(m, "checks[0]: ") && strstr(m, "needs one reference: formula"), "%s", m);
  snprintf(y, sizeof y, "%s  - {name: a, type: follows_curve, body: box, quantity: z, formula: \"t\"}\n", head);
  m = error_of(y, KN_ERR_INVALID);
  cr_assert(strstr(m, "needs tolerance"), "%s", m);
  snprintf(y, sizeof y, "%s  - {name: a, type: follows_curve, body: box, quantity: along, formula: \"t\", "
           "tolerance: 1}\n", head);
  m = error_of(y, KN_ERR_INVALID);
  cr_assert(strstr(m, "checks[0].quantity") && strstr(m, "along needs direction"), "%s", m);
  snprintf(y, sizeof y, "%s  - {name: a, type: follows_curve, body: box, quantity: z, formula: \"t\", "
           "tolerance: -1}\n", head);
  m = error_of(y, KN_ERR_INVALID);
  cr_assert(strstr(m, "checks[0].tolerance") && strstr(m, ">= 0"), "%s", m);
  snprintf(y, sizeof y, "%s  - {name: a, type: height_above, body: box, value: 0, tolerance: 1}\n", head);
  m = error_of(y, KN_ERR_INVALID);
  cr_assert(strstr(m, "checks[0].tolerance") && strstr(m, "does not apply to a height_above check"), "%s", m);
  snprintf(y, sizeof y, "%s  - {name: a, type: height_above, body: box, value: 0, quantity: z}\n", head);
  m = error_of(y, KN_ERR_INVALID);
  cr_assert(strstr(m, "checks[0].quantity") && strstr(m, "does not apply"), "%s", m);
  snprintf(y, sizeof y, "%s  - {name: a, type: follows_curve, body: box, quantity: height, formula: \"t\", "
           "tolerance: 1}\n", head);
  m = error_of(y, KN_ERR_PARSE);
  cr_assert(strstr(m, "inline.yaml:7") && strstr(m, "checks[0].quantity"), "%s", m);
  snprintf(y, sizeof y, "%s  - {name: a, type: follows_curve, body: box, quantity: z, csv: /nonexistent/ref.csv, "
           "tolerance: 1}\n", head);
  m = error_of(y, KN_ERR_IO);
  cr_assert(strstr(m, "inline.yaml:7: checks[0].csv") && strstr(m, "ref.csv"), "%s", m);
}

Test(check_curve, formula_reads_the_overridden_key) {
  /* --set objects[0].pose.xyz[2]=2 moves the box and the formula's z0 with it */
  char y[4096];
  snprintf(y, sizeof y, "%s  - {name: z, type: follows_curve, body: box, quantity: z, formula: "
           "\"objects[0].pose.xyz[2] - 0.5*g*t^2\", tolerance: 1e-9}\n", head);
  const char* set[] = {"objects[0].pose.xyz[2]=2"};
  kn_scene* s = NULL;
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string_with(y, strlen(y), "inline.yaml", set, 1, &s, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_checks_attach(w, &err), KN_OK, "%s", err.msg);
  for (int k = 0; k < 20; k++) cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s", err.msg);
  const kn_check_result* r = find(w, "z");
  cr_assert(r->passed && r->measured < 1e-12, "%s", r->message);
  cr_assert_float_eq(r->current, 2 - 0.5 * G * 0.04, 1e-12);
  kn_world_free(w);
  kn_scene_free(s);
}
