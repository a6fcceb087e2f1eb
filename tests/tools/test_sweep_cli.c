/* tools/: `knead sweep`. A 2 x 2 grid gives 4 rows with the grid's values, first key slowest, and
 * each row's final state hash is the one `knead run --set ...` prints for that sample; random
 * samples are reproducible from their seed and lie in their ranges; -j 1 and -j 2 write the same
 * files but for wall times; bad specs are refused, with their messages, before anything runs. */
#define _GNU_SOURCE /* memmem */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../support/tmpdir.h"

static void make_tmpdir(void) { tmpdir_make("test_sweep_cli"); }

TestSuite(sweep_cli, .init = make_tmpdir, .fini = tmpdir_remove);

/* examples/ball_on_slope.yaml shortened to 0.1 s, with one check that passes (the ball starts at
 * z = 0.0707 m and rolls down) */
#define BALL                                                                                      \
  "name: ball\ntime_step: 0.001\nduration: 0.1\ncontact:\n  backend: sap\nobjects:\n"             \
  "  - name: slope\n    shape: {halfspace: {normal: [-0.7071067811865476, 0, 0.7071067811865476]}}\n" \
  "    fixed: true\n    friction: 0.6\n  - name: ball\n    shape: {sphere: 0.1}\n    mass: 1.0\n"  \
  "    pose: {xyz: [-0.07071067811865475, 0, 0.07071067811865475]}\n    friction: 0.6\n"          \
  "checks:\n  - {name: low, type: height_below, body: ball, value: 0.08}\n"

// (text) => a copy without its CSV column `col` (0-based) on every line, nor JSON lines naming `key`
static char* without(const char* text, int col, const char* key) {
  char* out = calloc(strlen(text) + 1, 1);
  char* o = out;
  const char* line = text;
  while (*line) {
    const char* end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line + 1) : strlen(line);
    if (key && memmem(line, n, key, strlen(key))) {
      line += n;
      continue;
    }
    int c = 0;
    for (size_t i = 0; i < n; i++) {
      if (line[i] == ',') c++;
      if (col < 0 || c != col) *o++ = line[i]; /* the field and the comma before it dropped */
    }
    line += n;
  }
  *o = 0;
  return out;
}

// (stdout of `knead run`) => the state hash it printed
static void run_hash(const char* out, char* hash) {
  const char* h = strstr(out, "state hash ");
  cr_assert_not_null(h, "%s", out);
  memcpy(hash, h + strlen("state hash "), 16);
  hash[16] = 0;
}

Test(sweep_cli, grid_2x2_rows_and_hashes_equal_knead_run) {
  write_file("ball.yaml", BALL);
  cr_assert_eq(knead_run("sweep ball.yaml --set objects[1].friction=0.1:0.5:2 --set duration=0.05:0.1:2 "
                         "--set contact.margin=0.001 --out s"),
               0, "%s%s", tmp_text("out.txt"), tmp_text("err.txt"));
  char csv[8192];
  snprintf(csv, sizeof csv, "%s", tmp_text("s/sweep.csv"));
  const char* expect_head =
      "sample,objects[1].friction,duration,contact.margin,low.measured,low.passed,wall_time_s,final_state_hash,"
      "status,message\n";
  cr_assert(!strncmp(csv, expect_head, strlen(expect_head)), "%s", csv);
  const char* mu[4] = {"0.1", "0.1", "0.5", "0.5"};
  const char* dur[4] = {"0.05", "0.1", "0.05", "0.1"};
  char* line = csv + strlen(expect_head);
  for (int s = 0; s < 4; s++) {
    char* end = strchr(line, '\n');
    cr_assert_not_null(end, "row %d missing: %s", s, csv);
    *end = 0;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%d,%s,%s,0.001,", s, mu[s], dur[s]);
    cr_assert(!strncmp(line, prefix, strlen(prefix)), "row %d: %s (expected %s...)", s, line, prefix);
    cr_assert(strstr(line, ",true,") && strstr(line, ",ok,"), "row %d: %s", s, line);
    /* the hash: the 8th field */
    char* f = line;
    for (int k = 0; k < 7; k++) f = strchr(f, ',') + 1;
    char cmd[256], want[17];
    snprintf(cmd, sizeof cmd, "run ball.yaml --set objects[1].friction=%s --set duration=%s --set contact.margin=0.001 --out r",
             mu[s], dur[s]);
    cr_assert_eq(knead_run(cmd), 0, "%s", tmp_text("err.txt"));
    run_hash(tmp_text("out.txt"), want);
    cr_assert(!strncmp(f, want, 16), "sample %d: sweep hash %.16s, knead run %s", s, f, want);
    line = end + 1;
  }
  cr_assert_str_eq(line, "", "more than 4 rows: %s", line);
  const char* json = tmp_text("s/sweep.json");
  cr_assert(strstr(json, "\"mode\": \"grid\"") && strstr(json, "\"objects[1].friction\": 0.5,"), "%s", json);
  cr_assert(strstr(json, "\"status\": \"ok\"") && strstr(json, "\"final_state_hash\": \""), "%s", json);
}

Test(sweep_cli, random_samples_are_reproducible_from_the_seed) {
  write_file("ball.yaml", BALL);
  const char* args = "sweep ball.yaml --random 5 --set objects[1].friction=0.1:0.9 --set duration=0.02:0.05";
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s --seed 42 --out a", args);
  cr_assert_eq(knead_run(cmd), 0, "%s", tmp_text("err.txt"));
  snprintf(cmd, sizeof cmd, "%s --seed 42 --out b", args);
  cr_assert_eq(knead_run(cmd), 0, "%s", tmp_text("err.txt"));
  snprintf(cmd, sizeof cmd, "%s --seed 43 --out c", args);
  cr_assert_eq(knead_run(cmd), 0, "%s", tmp_text("err.txt"));
  char* a = without(tmp_text("a/sweep.csv"), 5, NULL);
  char* b = without(tmp_text("b/sweep.csv"), 5, NULL);
  char* c = without(tmp_text("c/sweep.csv"), 5, NULL);
  cr_assert_str_eq(a, b);
  cr_assert_str_neq(a, c, "seeds 42 and 43 gave the same samples");
  /* 5 rows, each value in its range */
  const char* line = strchr(a, '\n') + 1;
  int rows = 0;
  while (*line) {
    int s;
    double mu, dur;
    cr_assert_eq(sscanf(line, "%d,%lf,%lf,", &s, &mu, &dur), 3, "%s", line);
    cr_assert_eq(s, rows);
    cr_assert(mu >= 0.1 && mu <= 0.9 && dur >= 0.02 && dur <= 0.05, "%s", line);
    rows++;
    line = strchr(line, '\n') + 1;
  }
  cr_assert_eq(rows, 5);
  cr_assert(strstr(tmp_text("a/sweep.json"), "\"seed\": 42"));
  free(a), free(b), free(c);
}

Test(sweep_cli, jobs_1_and_2_write_the_same_files) {
  write_file("ball.yaml", BALL);
  const char* args = "sweep ball.yaml --set objects[1].friction=0.1:0.7:3 --set duration=0.02:0.06:2";
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s -j 1 --out j1", args);
  cr_assert_eq(knead_run(cmd), 0, "%s", tmp_text("err.txt"));
  snprintf(cmd, sizeof cmd, "%s -j 2 --out j2", args);
  cr_assert_eq(knead_run(cmd), 0, "%s", tmp_text("err.txt"));
  char* c1 = without(tmp_text("j1/sweep.csv"), 5, NULL);
  char* c2 = without(tmp_text("j2/sweep.csv"), 5, NULL);
  cr_assert_str_eq(c1, c2);
  char* s1 = without(tmp_text("j1/sweep.json"), -1, "wall_time_s");
  char* s2 = without(tmp_text("j2/sweep.json"), -1, "wall_time_s");
  cr_assert_str_eq(s1, s2);
  cr_assert(strstr(s1, "\"sample\": 5,"), "%s", s1);
  free(c1), free(c2), free(s1), free(s2);
}

// (arguments) => exit status 2 with exactly `message` on stderr, and no output folder
static void refused(const char* args, const char* message) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "sweep ball.yaml %s --out never", args);
  cr_assert_eq(knead_run(cmd), 2, "%s: %s", args, tmp_text("err.txt"));
  cr_assert_str_eq(tmp_text("err.txt"), message, "%s", args);
  struct stat st;
  char path[512];
  snprintf(path, sizeof path, "%s/never", tmpdir);
  cr_assert_neq(stat(path, &st), 0, "%s: the output folder was made", args);
}

Test(sweep_cli, bad_specs_are_refused_before_anything_runs) {
  write_file("ball.yaml", BALL);
  refused("--set duration=0.1:0.2:0", "knead: sweep: --set duration=0.1:0.2:0: N must be a whole number >= 1 (got '0')\n");
  refused("--set duration=0.1:0.2:2.5", "knead: sweep: --set duration=0.1:0.2:2.5: N must be a whole number >= 1 (got '2.5')\n");
  refused("--set duration=0.1:abc:2", "knead: sweep: --set duration=0.1:abc:2: 'abc' is not a number\n");
  refused("--set duration=0.1:0.2", "knead: sweep: --set duration=0.1:0.2: a range is A:B:N (A:B is for --random)\n");
  refused("--random 2 --set duration=0.1:0.2:3", "knead: sweep: --set duration=0.1:0.2:3: a range is A:B with --random\n");
  refused("--set duration=0.1", "knead: sweep: nothing to sweep: no --set is a range A:B:N\n");
  refused("--random 0 --set duration=0.1:0.2", "knead: sweep: --random needs a number of samples from 1 to 1000000 (got '0')\n");
  refused("--set contact=1:2:2",
          "knead: sweep: --set contact=1: contact is a mapping with keys backend, margin, exclude, filter_groups, "
          "solver, smooth_friction, penalty, ipc; --set sets one value: set its keys, contact.<key>=...\n");
  refused("--set nosuch=1:2:2",
          "knead: sweep: --set nosuch=1: unknown key 'nosuch' in the scene (expected one of: name, time_step, "
          "duration, gravity, package_paths, contact, objects, robots, welds, deformables, output, outputs, "
          "checks)\n");
}

Test(sweep_cli, a_sample_the_scene_refuses_is_an_error_row) {
  write_file("ball.yaml", BALL);
  /* duration -0.1 is refused by the scene's validation: that sample is an error, the others run */
  cr_assert_eq(knead_run("sweep ball.yaml --set duration=0.05:-0.1:2 --out e"), 1, "%s", tmp_text("err.txt"));
  const char* csv = tmp_text("e/sweep.csv");
  cr_assert(strstr(csv, "\n0,0.05,") && strstr(csv, ",ok,"), "%s", csv);
  cr_assert(strstr(csv, "\n1,-0.1,,,") &&
                strstr(csv, ",,error,ball.yaml:3: duration: must be >= 0 seconds (got -0.1) (set by --set duration=-0.1)\n"),
            "%s", csv);
}
