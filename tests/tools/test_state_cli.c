/* tools/: `knead run --save-state FILE` and `--resume FILE` as a user runs them. A box held by
 * friction on a tilted floor: the full 0.3 s run and a 0.1 s run of the same scene saved and then
 * resumed to 0.3 s end with the same final_state_hash in summary.json; a resume from a state of
 * another scene fails with the loader's message and exit status 1. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../support/tmpdir.h"

static void make_tmpdir(void) { tmpdir_make("test_state_cli"); }

TestSuite(state_cli, .init = make_tmpdir, .fini = tmpdir_remove);

#define BOX_SCENE(duration)                                                                       \
  "time_step: 0.01\nduration: " duration "\ngravity: [2, 0, -9.81]\n"                              \
  "objects:\n"                                                                                    \
  "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, friction: 0.6}\n"      \
  "  - {name: box, shape: {box: [0.1, 0.1, 0.1]}, mass: 1, pose: {xyz: [0, 0, 0.05]}, friction: 0.6}\n"



// (summary.json in folder dir of tmpdir) => its "final_state_hash" and "steps" (this run's)
static void summary(const char* dir, char hash[17], long* steps) {
  char name[256];
  snprintf(name, sizeof name, "%s/summary.json", dir);
  const char* s = tmp_text(name);
  const char* h = strstr(s, "\"final_state_hash\": \"");
  cr_assert_not_null(h, "%s: %s", name, s);
  memcpy(hash, h + strlen("\"final_state_hash\": \""), 16);
  hash[16] = 0;
  const char* n = strstr(s, "\"steps\": ");
  cr_assert_not_null(n, "%s", s);
  *steps = strtol(n + strlen("\"steps\": "), NULL, 10);
}

Test(state_cli, resumed_run_ends_with_the_uninterrupted_hash) {
  write_file("full.yaml", BOX_SCENE("0.3"));
  write_file("half.yaml", BOX_SCENE("0.1"));
  cr_assert_eq(knead_run("run full.yaml --out full"), 0, "%s", tmp_text("err.txt"));
  cr_assert_eq(knead_run("run half.yaml --out half --save-state mid.state"), 0, "%s", tmp_text("err.txt"));
  cr_assert_eq(knead_run("run full.yaml --out resumed --resume mid.state"), 0, "%s", tmp_text("err.txt"));
  cr_assert(strstr(tmp_text("err.txt"), "resumed at step 10 (t = 0.1 s) from mid.state") != NULL, "%s",
            tmp_text("err.txt"));
  char full[17], half[17], resumed[17];
  long nfull, nhalf, nresumed;
  summary("full", full, &nfull);
  summary("half", half, &nhalf);
  summary("resumed", resumed, &nresumed);
  cr_assert_eq(nfull, 30);
  cr_assert_eq(nhalf, 10);
  cr_assert_eq(nresumed, 20, "the steps this run took");
  cr_assert(strstr(tmp_text("resumed/summary.json"), "\"solver\": {\"steps\": 30,") != NULL,
            "the solver statistics continue from the saved ones: %s", tmp_text("resumed/summary.json"));
  cr_assert_str_neq(half, full);
  cr_assert_str_eq(resumed, full);
  /* the trajectory of the resumed run starts at the saved time */
  cr_assert(strncmp(strchr(tmp_text("resumed/trajectory.csv"), '\n') + 1, "0.1,", 4) == 0, "%s",
            tmp_text("resumed/trajectory.csv"));
}

Test(state_cli, resume_from_another_scene_fails) {
  write_file("box.yaml", BOX_SCENE("0.05"));
  write_file("ball.yaml",
             "time_step: 0.01\nduration: 0.05\n"
             "objects:\n  - {name: ball, shape: {sphere: 0.05}, mass: 1}\n");
  cr_assert_eq(knead_run("run box.yaml --out box --save-state box.state"), 0, "%s", tmp_text("err.txt"));
  cr_assert_eq(knead_run("run ball.yaml --out ball --resume box.state"), 1);
  const char* err = tmp_text("err.txt");
  cr_assert(strstr(err, "box.state: cannot load the state: saved from another scene (structure fingerprint ") != NULL,
            "%s", err);
  cr_assert_eq(knead_run("run ball.yaml --resume"), 2);
  cr_assert(strstr(tmp_text("err.txt"), "run: --resume needs a state file") != NULL, "%s", tmp_text("err.txt"));
}
