/* tools/: --set on the command line. `knead run --set` gives the same final state hash as the scene
 * file edited to that value (and a different one from the file as it is), summary.json lists the
 * overrides, a bad override is a clear error; `knead check --set` judges the variant (a regression
 * scene that then fails its check), and --update-golden with --set is refused. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/tmpdir.h"

static void make_tmpdir(void) { tmpdir_make("test_set_cli"); }

TestSuite(set_cli, .init = make_tmpdir, .fini = tmpdir_remove);

/* examples/ball_on_slope.yaml shortened to 0.3 s: a ball on a 45 degree slope, friction 0.6 (it
 * rolls; below 2/7 tan 45 = 0.286 it slips) */
#define BALL(mu)                                                                                  \
  "name: ball\ntime_step: 0.001\nduration: 0.3\ncontact:\n  backend: sap\nobjects:\n"             \
  "  - name: slope\n    shape: {halfspace: {normal: [-0.7071067811865476, 0, 0.7071067811865476]}}\n" \
  "    fixed: true\n    friction: 0.6\n  - name: ball\n    shape: {sphere: 0.1}\n    mass: 1.0\n"  \
  "    pose: {xyz: [-0.07071067811865475, 0, 0.07071067811865475]}\n    friction: " mu "\n"

// (summary.json of an output folder in tmpdir) => its final state hash (static buffer)
static const char* final_hash(const char* dir) {
  static char hash[3][17];
  static int k;
  char name[256];
  snprintf(name, sizeof name, "%s/summary.json", dir);
  const char* t = tmp_text(name);
  const char* h = strstr(t, "\"final_state_hash\": \"");
  cr_assert_not_null(h, "no final_state_hash in %s: %s", name, t);
  k = (k + 1) % 3;
  memcpy(hash[k], h + strlen("\"final_state_hash\": \""), 16);
  hash[k][16] = 0;
  return hash[k];
}

Test(set_cli, run_set_equals_the_edited_file) {
  write_file("ball.yaml", BALL("0.6"));
  write_file("ball_mu_0_2.yaml", BALL("0.2"));
  cr_assert_eq(knead_run("run ball.yaml --set objects[1].friction=0.2 --out set"), 0, "%s", tmp_text("err.txt"));
  cr_assert_eq(knead_run("run ball_mu_0_2.yaml --out edited"), 0, "%s", tmp_text("err.txt"));
  cr_assert_eq(knead_run("run ball.yaml --out plain"), 0, "%s", tmp_text("err.txt"));
  char set[17], edited[17], plain[17];
  snprintf(set, sizeof set, "%s", final_hash("set"));
  snprintf(edited, sizeof edited, "%s", final_hash("edited"));
  snprintf(plain, sizeof plain, "%s", final_hash("plain"));
  cr_assert_str_eq(set, edited, "--set gives %s, the edited file %s", set, edited);
  cr_assert_str_neq(set, plain, "friction 0.2 (slips) and 0.6 (rolls) end in the same state");
  /* the result says which variant produced it */
  const char* sum = tmp_text("set/summary.json");
  cr_assert(strstr(sum, "\"overrides\": [\"objects[1].friction=0.2\"]") != NULL, "%s", sum);
  cr_assert(strstr(tmp_text("plain/summary.json"), "\"overrides\": []") != NULL, "%s", tmp_text("plain/summary.json"));
}

Test(set_cli, run_set_adds_a_missing_key_and_applies_them_in_order) {
  write_file("ball.yaml", BALL("0.6"));
  cr_assert_eq(knead_run("run ball.yaml --set contact.margin=0.001 --set duration=0.05 --set duration=0.02 --out o"),
               0, "%s", tmp_text("err.txt"));
  const char* sum = tmp_text("o/summary.json");
  cr_assert(strstr(sum, "\"duration\": 0.02") != NULL, "%s", sum);
  cr_assert(strstr(sum, "\"steps\": 20,") != NULL, "%s", sum);
  cr_assert(strstr(sum, "\"overrides\": [\"contact.margin=0.001\", \"duration=0.05\", \"duration=0.02\"]") != NULL,
            "%s", sum);
}

Test(set_cli, run_refuses_a_bad_override) {
  write_file("ball.yaml", BALL("0.6"));
  cr_assert_eq(knead_run("run ball.yaml --set contact.margin=abc --out o"), 1);
  cr_assert_str_eq(tmp_text("err.txt"), "knead: --set contact.margin=abc: expected a number\n");
  cr_assert_eq(knead_run("run ball.yaml --set objects[2].friction=1 --out o"), 1);
  cr_assert_str_eq(tmp_text("err.txt"), "knead: --set objects[2].friction=1: objects has 2 entries in the scene "
                                        "(objects[0] to objects[1]): there is no objects[2]\n");
  cr_assert_eq(knead_run("run ball.yaml --set contact.margin=-1 --out o"), 1);
  cr_assert(strstr(tmp_text("err.txt"), "ball.yaml:5: contact.margin: must be finite and >= 0 m (got -1) (set by "
                                        "--set contact.margin=-1)") != NULL, "%s", tmp_text("err.txt"));
  cr_assert_eq(knead_run("run ball.yaml --set"), 2);
  cr_assert(strstr(tmp_text("err.txt"), "--set needs key=value") != NULL, "%s", tmp_text("err.txt"));
  /* nothing ran */
  cr_assert_str_eq(tmp_text("o/summary.json"), "");
  cr_assert_eq(knead_run("run --help"), 0);
  cr_assert(strstr(tmp_text("out.txt"), "--set KEY=VALUE") != NULL);
}

#define REGRESSION KNEAD_SOURCE_DIR "/examples/regression/box_mu_0_5.yaml"
#define LOW_FRICTION KNEAD_SOURCE_DIR "/examples/regression/box_low_friction_fails.yaml"

Test(set_cli, run_set_on_a_grasp_equals_the_committed_variant) {
  /* box_low_friction_fails.yaml is box_mu_0_5.yaml with friction 0.05 on the box and the gripper
   * (and expect: fail on two checks, which the state does not see) */
  cr_assert_eq(knead_run("run " REGRESSION " --set objects[1].friction=0.05 --set robots[1].contact.friction=0.05 "
                         "--out set"),
               0, "%s", tmp_text("err.txt"));
  cr_assert_eq(knead_run("run " LOW_FRICTION " --out edited"), 0, "%s", tmp_text("err.txt"));
  cr_assert_eq(knead_run("run " REGRESSION " --out plain"), 0, "%s", tmp_text("err.txt"));
  char set[17], edited[17], plain[17];
  snprintf(set, sizeof set, "%s", final_hash("set"));
  snprintf(edited, sizeof edited, "%s", final_hash("edited"));
  snprintf(plain, sizeof plain, "%s", final_hash("plain"));
  cr_assert_str_eq(set, edited);
  cr_assert_str_neq(set, plain);
}

Test(set_cli, check_set_judges_the_variant) {
  /* box_mu_0_5 passes as it is; with friction 0.05 on the pads and the box the grip (2 mu N = 2 N
   * against 4.9 N) cannot hold it: the box is not lifted */
  cr_assert_eq(knead_run("check " REGRESSION " --no-golden --set objects[1].friction=0.05 "
                         "--set robots[1].contact.friction=0.05 --keep-failed kept"),
               1, "%s%s", tmp_text("out.txt"), tmp_text("err.txt"));
  const char* out = tmp_text("out.txt");
  cr_assert(strstr(out, "  FAIL   lifted                   height_above: min z = ") != NULL, "%s", out);
  cr_assert(strstr(out, "needs > 0.15 m in [2.2, 3.8] s") != NULL, "%s", out);
  cr_assert(strstr(out, "  FAIL   held_during_shake") != NULL, "%s", out);
  cr_assert(strstr(out, "1 scene, 4 tests: 2 passed, 0 expected failures, 2 failed, 0 errors") != NULL, "%s", out);
  /* with its golden file, the variant is compared against the baseline and diverges from it */
  cr_assert_eq(knead_run("check " REGRESSION " --set objects[1].friction=0.05 --set robots[1].contact.friction=0.05 "
                         "--keep-failed kept2"),
               1);
  out = tmp_text("out.txt");
  cr_assert(strstr(out, "  FAIL   golden                   ") != NULL && strstr(out, "diverged at t = ") != NULL, "%s",
            out);
  /* the kept outputs say which variant failed */
  const char* sum = tmp_text("kept/box_mu_0_5/summary.json");
  cr_assert(strstr(sum, "\"objects[1].friction=0.05\"") != NULL, "%s", sum);
  cr_assert(strstr(sum, "\"robots[1].contact.friction=0.05\"") != NULL, "%s", sum);
}

Test(set_cli, check_set_reports_a_bad_override_per_scene) {
  cr_assert_eq(knead_run("check " REGRESSION " --set contact.foo=1"), 1, "%s", tmp_text("out.txt"));
  cr_assert(strstr(tmp_text("out.txt"), "--set contact.foo=1: unknown key 'foo' in contact (expected one of: backend, "
                                        "margin, exclude, filter_groups, solver, smooth_friction, penalty, ipc)") != NULL,
            "%s", tmp_text("out.txt"));
}

Test(set_cli, update_golden_with_set_is_refused) {
  cr_assert_eq(knead_run("check " REGRESSION " --update-golden --set objects[1].friction=0.05"), 2);
  cr_assert_str_eq(tmp_text("err.txt"),
                   "knead: check: --update-golden with --set would record a variant (objects[1].friction=0.05) as "
                   "the baseline; update the scene files, or run without --set\n");
  cr_assert_eq(knead_run("check --help"), 0);
  cr_assert(strstr(tmp_text("out.txt"), "--set KEY=VALUE") != NULL);
}
