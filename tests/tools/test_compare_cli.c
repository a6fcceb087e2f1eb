/* tools/: `knead compare`. A ball on a frictionless 45 degree slope, placed 2 mm into it, compared
 * across sap (pushes it out along the normal, which the along-slope check does not see), ipc
 * (refused: a barrier cannot begin inside; its cell says why and the others run) and none (no contact: the ball falls
 * freely, and its displacement along the slope, (g t^2 / 2) sin 45 deg, is exactly the frictionless
 * slope's answer, so that cell meets the formula to round-off); the files and their numbers; the
 * state hash of a cell equals `knead run --set contact.backend=...`'s; plots skipped with a
 * message when gnuplot is missing; usage errors. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../support/tmpdir.h"

static void make_tmpdir(void) { tmpdir_make("test_compare_cli"); }

TestSuite(compare_cli, .init = make_tmpdir, .fini = tmpdir_remove);

#define BALL                                                                                        \
  "name: ball\ntime_step: 0.01\nduration: 0.2\nobjects:\n"                                    \
  "  - name: slope\n    shape: {halfspace: {normal: [-0.7071067811865476, 0, 0.7071067811865476]}}\n" \
  "    fixed: true\n    friction: 0\n  - name: ball\n    shape: {sphere: 0.1}\n    mass: 1.0\n"      \
  "    pose: {xyz: [-0.06929646455628166, 0, 0.06929646455628166]}\n    friction: 0\n"            \
  "checks:\n"                                                                                       \
  "  - {name: down, type: follows_curve, body: ball, quantity: along, direction: [-1, 0, -1],\n"   \
  "     formula: \"0.5*g*sin(pi/4)*t^2\", tolerance: 1e-3, rel_tolerance: 0.1}\n"

static json_t* load_json(const char* name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  json_error_t e;
  json_t* j = json_load_file(path, 0, &e);
  cr_assert_not_null(j, "%s:%d: %s", path, e.line, e.text);
  return j;
}

static int exists(const char* name) {
  char path[512];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  return stat(path, &st) == 0;
}

Test(compare_cli, sap_ipc_none_with_the_refusal_in_its_cell) {
  write_file("ball.yaml", BALL);
  cr_assert_eq(knead_run("compare ball.yaml --backends sap,ipc,none -j 2 --out cmp"), 0, "%s",
               tmp_text("err.txt"));
  const char* out = tmp_text("out.txt");
  cr_assert(strstr(out, "ball.yaml (ball)"), "%s", out);
  cr_assert(strstr(out, "  ipc              refused: ball.yaml:") &&
                strstr(out, "contact.backend ipc: the contact between 'slope' and 'ball' starts overlapping"), "%s", out);
  cr_assert(strstr(out, "  sap              ok ") && strstr(out, "  none             ok "), "%s", out);
  cr_assert(strstr(out, "1 scene x 3 backends: cmp/compare.md, compare.json"), "%s", out);

  json_t* j = load_json("cmp/compare.json");
  cr_assert_str_eq(json_string_value(json_object_get(j, "format")), "knead-compare-1");
  json_t* runs = json_object_get(json_array_get(json_object_get(j, "scenes"), 0), "runs");
  cr_assert_eq(json_array_size(runs), 3);
  json_t *sap = json_array_get(runs, 0), *ipc = json_array_get(runs, 1), *none = json_array_get(runs, 2);
  cr_assert_str_eq(json_string_value(json_object_get(sap, "backend")), "sap");
  cr_assert_str_eq(json_string_value(json_object_get(sap, "status")), "ok");
  cr_assert_str_eq(json_string_value(json_object_get(ipc, "status")), "refused");
  cr_assert(strstr(json_string_value(json_object_get(ipc, "message")), "starts overlapping"));
  cr_assert_eq(json_integer_value(json_object_get(ipc, "steps")), 0);
  cr_assert_eq(json_array_size(json_object_get(ipc, "checks")), 0);
  cr_assert_eq(json_integer_value(json_object_get(sap, "steps")), 20);
  cr_assert_eq(json_integer_value(json_object_get(none, "steps")), 20);
  /* sap: one contact per step, a Newton iteration or two; none: no contact, no solver */
  cr_assert_float_eq(json_real_value(json_object_get(sap, "contacts_per_step")), 1.0, 1e-12);
  double it = json_real_value(json_object_get(sap, "iterations_per_step"));
  cr_assert(it >= 1 && it <= 3, "%g", it);
  cr_assert_float_eq(json_real_value(json_object_get(none, "contacts_per_step")), 0.0, 1e-12);
  cr_assert(json_is_null(json_object_get(none, "deepest_phi")), "no contact: null");
  double phi = json_real_value(json_object_get(sap, "deepest_phi"));
  cr_assert(phi >= -2e-3 - 1e-12 && phi <= 0, "the deepest: the 2 mm start, %g", phi);
  json_t* ck = json_array_get(json_object_get(sap, "checks"), 0);
  cr_assert_str_eq(json_string_value(json_object_get(ck, "name")), "down");
  cr_assert(json_is_true(json_object_get(ck, "passed")));
  /* sap at dt = 0.01 runs ahead of a t^2 / 2 by a dt t / 2 (semi-implicit Euler): 10 % at 0.1 s */
  double m = json_real_value(json_object_get(ck, "measured"));
  cr_assert(m > 1e-3 && m < 0.02, "sap's largest error %g m", m);
  ck = json_array_get(json_object_get(none, "checks"), 0);
  cr_assert(json_is_true(json_object_get(ck, "passed")));
  cr_assert(json_real_value(json_object_get(ck, "measured")) < 1e-12, "none: free fall is the formula");
  char none_hash[32];
  snprintf(none_hash, sizeof none_hash, "%s", json_string_value(json_object_get(none, "state_hash")));
  json_decref(j);

  /* the hash of the none cell is knead run's with the same override */
  cr_assert_eq(knead_run("run ball.yaml --set contact.backend=none --out runout"), 0, "%s", tmp_text("err.txt"));
  cr_assert(strstr(tmp_text("out.txt"), none_hash), "%s vs %s", tmp_text("out.txt"), none_hash);

  const char* md = tmp_text("cmp/compare.md");
  cr_assert(strstr(md, "| backend | status | down (follows_curve) | ms/step |"), "%s", md);
  cr_assert(strstr(md, "| ipc | refused: ball.yaml:") && strstr(md, "| – | – | – | – | – | – |"), "%s", md);
  cr_assert(strstr(md, "| none | ok | PASS "), "%s", md);
  cr_assert(strstr(md, "\nPlots: [down](plots/ball-down.svg)\n"), "%s", md);

  /* per step series: t, the quantity, the reference; 21 rows (t = 0 and 20 steps) */
  const char* csv = tmp_text("cmp/ball/none.csv");
  cr_assert(!strncmp(csv, "t,down,down/reference\n0,0,0\n", 28), "%s", csv);
  int rows = 0;
  for (const char* p = csv; *p; p++) rows += *p == '\n';
  cr_assert_eq(rows, 22, "%s", csv);
  const char* last = strstr(csv, "\n0.2,");
  cr_assert_not_null(last, "%s", csv);
  double t, v, ref;
  cr_assert_eq(sscanf(last + 1, "%lf,%lf,%lf", &t, &v, &ref), 3);
  cr_assert_float_eq(ref, 0.5 * 9.81 * sin(3.14159265358979323846 / 4) * 0.04, 1e-8);
  cr_assert_float_eq(v, ref, 1e-8);
  cr_assert(exists("cmp/ball/sap.csv") && !exists("cmp/ball/ipc.csv"));
  cr_assert(exists("cmp/plots/compare.gp"));
  if (system("command -v gnuplot >/dev/null 2>&1") == 0) {
    cr_assert(exists("cmp/plots/ball-down.svg"));
    const char* svg = tmp_text("cmp/plots/ball-down.svg");
    cr_assert(strstr(svg, "<svg") && strstr(svg, "reference") && strstr(svg, "none") && strstr(svg, ">sap<"), "%s", svg);
  }
}

Test(compare_cli, without_gnuplot_the_plots_are_skipped_with_a_message) {
  write_file("ball.yaml", BALL);
  setenv("KNEAD_GNUPLOT", "/nonexistent/gnuplot", 1);
  int rc = knead_run("compare ball.yaml --backends none --out cmp2");
  unsetenv("KNEAD_GNUPLOT");
  cr_assert_eq(rc, 0, "%s", tmp_text("err.txt"));
  cr_assert(strstr(tmp_text("err.txt"), "compare: plots skipped: cannot run gnuplot"), "%s", tmp_text("err.txt"));
  cr_assert(strstr(tmp_text("out.txt"), "(no plots: gnuplot missing)"), "%s", tmp_text("out.txt"));
  cr_assert(!exists("cmp2/plots/ball-down.svg"));
  cr_assert(exists("cmp2/compare.json") && exists("cmp2/ball/none.csv"));
}

Test(compare_cli, usage_errors_and_a_scene_that_does_not_load) {
  write_file("ball.yaml", BALL);
  cr_assert_eq(knead_run("compare ball.yaml --backends sap,mujoco"), 2);
  cr_assert(strstr(tmp_text("err.txt"), "--backends: unknown backend 'mujoco'"), "%s", tmp_text("err.txt"));
  cr_assert_eq(knead_run("compare ball.yaml --backends sap,sap"), 2);
  cr_assert(strstr(tmp_text("err.txt"), "'sap' is listed twice"), "%s", tmp_text("err.txt"));
  cr_assert_eq(knead_run("compare ball.yaml --set contact.backend=sap"), 2);
  cr_assert(strstr(tmp_text("err.txt"), "use --backends"), "%s", tmp_text("err.txt"));
  cr_assert_eq(knead_run("compare"), 2);
  write_file("bad.yaml", "time_step: 0.01\nobjects:\n  - {name: b, shape: {sphere: 0.1}, mass: 1}\nchecks:\n"
                         "  - {name: c, type: follows_curve, body: b, quantity: z, formula: \"1 +\", tolerance: 1}\n");
  cr_assert_eq(knead_run("compare bad.yaml --backends sap,none --out cmp"), 1);
  const char* out = tmp_text("out.txt");
  cr_assert(strstr(out, "  sap              error: bad.yaml:5: checks[0].formula") && strstr(out, "at column 4"), "%s",
            out);
}

/* with output.html, each run writes its replay and DIR/<scene>/replay.html shows them side by side
 * (iframes driven by one clock through {knead: 'seek', t} messages), the refusal in its cell */
Test(compare_cli, output_html_gives_the_side_by_side_replay) {
  write_file("ball.yaml", BALL);
  int rc = knead_run("compare ball.yaml --backends sap,ipc,none --set output.html=true --out cmp");
  if (strstr(tmp_text("out.txt"), "three.js is not installed")) {
    cr_log_warn("three.js is not installed: no replay to compare (%s)", tmp_text("out.txt"));
    return;
  }
  cr_assert_eq(rc, 0, "%s%s", tmp_text("out.txt"), tmp_text("err.txt"));
  cr_assert(strstr(tmp_text("out.txt"), "open cmp/ball/replay.html"), "%s", tmp_text("out.txt"));
  cr_assert(exists("cmp/ball/sap/replay.html") && exists("cmp/ball/none/replay.html"));
  cr_assert(exists("cmp/ball/sap/trajectory.csv") && !exists("cmp/ball/ipc"));
  const char* page = tmp_text("cmp/ball/replay.html");
  cr_assert(strstr(page, "<h3>sap: ok</h3><iframe src=\"sap/replay.html\"></iframe>"), "%s", page);
  cr_assert(strstr(page, "<h3>none: ok</h3><iframe src=\"none/replay.html\"></iframe>"), "%s", page);
  cr_assert(strstr(page, "<h3>ipc: refused</h3><p>ball.yaml:") && strstr(page, "starts overlapping"), "%s", page);
  cr_assert(strstr(page, "max=\"0.2\"") && strstr(page, "postMessage({ knead: 'seek', t: t }, '*')"), "%s", page);
  /* the runs' replays answer the seek messages */
  char cmd[700];
  snprintf(cmd, sizeof cmd, "grep -q \"m.knead !== 'seek'\" '%s/cmp/ball/sap/replay.html'", tmpdir);
  cr_assert_eq(system(cmd), 0, "the replay does not answer seek messages");
  /* the series are still there, the same 21 rows */
  const char* csv = tmp_text("cmp/ball/none.csv");
  int rows = 0;
  for (const char* p = csv; *p; p++) rows += *p == '\n';
  cr_assert_eq(rows, 22, "%s", csv);
}

/* --baseline: a check that passed in an earlier compare.json and fails now is a regression (exit
 * 1, named); with friction the ball rolls at 5/7 of the frictionless acceleration, 29 % short of
 * the formula (10 % allowed) */
Test(compare_cli, baseline_names_a_check_that_stopped_passing) {
  write_file("ball.yaml", BALL);
  cr_assert_eq(knead_run("compare ball.yaml --backends sap,ipc --out base"), 0, "%s", tmp_text("err.txt"));
  cr_assert_eq(knead_run("compare ball.yaml --backends sap,ipc,none --out again --baseline base/compare.json"), 0,
               "%s", tmp_text("out.txt"));
  cr_assert(strstr(tmp_text("out.txt"), "baseline base/compare.json: 1 check compared, 0 regressions, 0 now pass"),
            "%s", tmp_text("out.txt"));
  cr_assert_eq(knead_run("compare ball.yaml --backends sap --set objects[0].friction=0.5 --set objects[1].friction=0.5 "
                         "--out rough --baseline base/compare.json"), 1);
  const char* out = tmp_text("out.txt");
  cr_assert(strstr(out, "REGRESSION ball / sap / down: passed in the baseline; now max |error| = "), "%s", out);
  cr_assert(strstr(out, "1 check compared, 1 regression, 0 now pass"), "%s", out);
  cr_assert_eq(knead_run("compare ball.yaml --backends sap --out x --baseline ball.yaml"), 1);
  cr_assert(strstr(tmp_text("err.txt"), "compare: --baseline ball.yaml:"), "%s", tmp_text("err.txt"));
}

/* --scoreboard FILE: per scene a row, per backend that ran a column (ipc, refused everywhere,
 * listed once under the table), each check's verdict and measured value, ms/step and the ratio to
 * SAP, the totals; --mujoco adds MuJoCo's column from knead-bench --fidelity's file (a scene it has
 * not built says why); what follows "<!-- notes -->" in an existing FILE is kept */
Test(compare_cli, scoreboard_writes_the_table_and_keeps_the_notes) {
  write_file("ball.yaml", BALL);
  char high[2048];
  snprintf(high, sizeof high, "name: high\n%s  - {name: up_high, type: height_above, body: ball, value: 10, expect: fail}\n",
           strstr(BALL, "time_step:"));
  write_file("high.yaml", high); /* BALL's overlapping start included: ipc is refused on both */
  write_file("sb.md", "old table\n<!-- notes -->\n## What the table shows\nkept words\n");
  write_file("mj.json",
             "{\"format\": \"knead-bench-fidelity-1\", \"mujoco_version\": \"2.2.2\", \"scenes\": ["
             "{\"name\": \"ball\", \"status\": \"ok\", \"message\": \"\", \"us_per_step\": 5.0, \"checks\": "
             "[{\"name\": \"down\", \"passed\": true, \"expect\": \"pass\", \"measured\": 0.002, \"unit\": \"m\"}]},"
             "{\"name\": \"high\", \"status\": \"not_built\", \"message\": \"a test reason\"}]}");
  cr_assert_eq(knead_run("compare ball.yaml high.yaml --backends sap,ipc,none -j 2 --out cmp --scoreboard sb.md "
                         "--mujoco mj.json"), 0, "%s", tmp_text("err.txt"));
  cr_assert(strstr(tmp_text("out.txt"), "scoreboard: sb.md"), "%s", tmp_text("out.txt"));
  const char* sb = tmp_text("sb.md");
  cr_assert(strstr(sb, "# Physical-fidelity scoreboard") && strstr(sb, " core") && strstr(sb, " UTC, build "), "%s", sb);
  cr_assert(strstr(sb, "| scene | sap | none | MuJoCo 2.2.2 |\n|---|---|---|---|\n"), "%s", sb);
  cr_assert(strstr(sb, "| ball | down pass ("), "%s", sb);
  cr_assert(strstr(sb, "| high | down pass (") && strstr(sb, "up_high XFAIL (") && strstr(sb, " m); "), "%s", sb);
  cr_assert(strstr(sb, " ms/step | down pass (") && strstr(sb, "x SAP |"), "%s", sb);
  cr_assert(strstr(sb, "down pass (0.002 m); 0.005 ms/step, "), "%s", sb);
  cr_assert(strstr(sb, "| not built in MuJoCo: a test reason |\n"), "%s", sb);
  cr_assert(strstr(sb, "- **ipc**: refused on every scene (e.g. ") &&
                strstr(sb, "starts overlapping"), "%s", sb);
  cr_assert(strstr(sb, "Checks expected to pass that passed: sap 2/2, none 2/2, MuJoCo 1/1 "), "%s", sb);
  cr_assert(strstr(sb, "\n<!-- notes -->\n## What the table shows\nkept words\n"), "%s", sb);
  cr_assert_null(strstr(sb, "old table"), "%s", sb);
  /* again without MuJoCo: the notes once, no MuJoCo column */
  cr_assert_eq(knead_run("compare high.yaml --backends sap --out cmp --scoreboard sb.md"), 0, "%s", tmp_text("err.txt"));
  sb = tmp_text("sb.md");
  cr_assert(strstr(sb, "| scene | sap |\n|---|---|\n| high | down pass ("), "%s", sb);
  cr_assert(strstr(sb, "sap 1/1.\n\n<!-- notes -->\n## What the table shows\nkept words\n"), "%s", sb);
  cr_assert_null(strstr(strstr(sb, "kept words") + 1, "kept words"), "%s", sb);
  cr_assert_eq(knead_run("compare high.yaml --backends sap --out cmp --mujoco mj.json"), 2);
  cr_assert(strstr(tmp_text("err.txt"), "--mujoco goes with --scoreboard"), "%s", tmp_text("err.txt"));
}
