/* tools/: `knead check` run as a user would: a suite of small scenes with passing, failing and
 * expected-failing checks and one that cannot load; the report, the exit status, the JUnit XML
 * (well-formed, right counts, junit-10.xsd's attributes, failure bodies with the measured values),
 * -j 2 giving the -j 1 report and JUnit byte for byte but for times, the kept outputs of failing
 * scenes (--keep-failed), golden baselines catching a changed friction, judged by their physical
 * tolerances (within passes, beyond fails naming quantity, time and unit), the final state hash
 * failing only with --strict, non-ASCII names through \u escapes, and two of examples/regression. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../support/tmpdir.h"

static void make_tmpdir(void) { tmpdir_make("test_check"); }

TestSuite(check_cli, .init = make_tmpdir, .fini = tmpdir_remove, .timeout = 300);


static char* slurp(const char* name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  FILE* f = fopen(path, "r");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* buf = malloc((size_t)n + 1);
  buf[fread(buf, 1, (size_t)n, f)] = 0;
  fclose(f);
  return buf;
}


static int count(const char* s, const char* what) {
  int n = 0;
  for (const char* p = strstr(s, what); p; p = strstr(p + 1, what)) n++;
  return n;
}

/* A tiny XML well-formedness check: every <tag> closed by </tag> in order, <x/> self-closed,
 * attributes quoted, no raw '<' or '&' outside markup except entities. Returns 1 when well formed. */
static int xml_balanced(const char* s) {
  char stack[64][64];
  int depth = 0;
  while (*s) {
    if (*s == '&') {
      if (strncmp(s, "&lt;", 4) && strncmp(s, "&gt;", 4) && strncmp(s, "&amp;", 5) && strncmp(s, "&quot;", 6) &&
          strncmp(s, "&apos;", 6))
        return 0;
      s++;
      continue;
    }
    if (*s != '<') {
      if (*s == '>') return 0;
      s++;
      continue;
    }
    if (s[1] == '?') {
      s = strstr(s, "?>");
      if (!s) return 0;
      s += 2;
      continue;
    }
    int closing = s[1] == '/';
    const char* name = s + 1 + closing;
    size_t n = strcspn(name, " />\n");
    if (n == 0 || n >= 64) return 0;
    const char* p = name + n;
    int quote = 0;
    while (*p && (quote || (*p != '>'))) {
      if (*p == '"') quote = !quote;
      else if (quote && (*p == '<')) return 0;
      p++;
    }
    if (!*p) return 0;
    int self = p[-1] == '/';
    if (closing) {
      if (depth == 0 || strncmp(stack[depth - 1], name, n) || stack[depth - 1][n]) return 0;
      depth--;
    } else if (!self) {
      if (depth == 64) return 0;
      memcpy(stack[depth], name, n);
      stack[depth++][n] = 0;
    }
    s = p + 1;
  }
  return depth == 0;
}

// the integer value of attribute `attr` in the first element starting with `tag`
static int attr_int(const char* xml, const char* tag, const char* attr) {
  const char* t = strstr(xml, tag);
  cr_assert_not_null(t, "no %s", tag);
  char key[64];
  snprintf(key, sizeof key, " %s=\"", attr);
  const char* a = strstr(t, key);
  cr_assert(a && a < strchr(t, '>'), "no %s in %s", attr, tag);
  return atoi(a + strlen(key));
}

// (JUnit text) => a copy without its time="..." and timestamp="..." attributes
static char* without_times(const char* x) {
  char* out = malloc(strlen(x) + 1);
  char* o = out;
  while (*x) {
    if (!strncmp(x, " time=\"", 7) || !strncmp(x, " timestamp=\"", 12)) {
      x = strchr(strchr(x, '"') + 1, '"') + 1;
      continue;
    }
    *o++ = *x++;
  }
  *o = 0;
  return out;
}

// 1 when the file or folder tmpdir/name exists
static int exists(const char* name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  struct stat st;
  return stat(path, &st) == 0;
}

#define FALL_HEAD "time_step: 0.01\nduration: 0.3\ncontact: {backend: none}\n" \
  "objects: [{name: box, shape: {box: [0.1, 0.1, 0.1]}, mass: 1, pose: {xyz: [0, 0, 1]}}]\n"

static void write_suite(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/suite/sub", tmpdir);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
  cr_assert_eq(system(cmd), 0);
  /* a: all pass, one expected failure; b (in sub/): one unexpected failure with XML-hostile text in
   * its name; c: cannot load (unknown body) */
  write_file("suite/a.yaml", FALL_HEAD "checks:\n"
             "  - {name: falls, type: height_below, body: box, value: 0.9, after: 0.2}\n"
             "  - {name: floats, type: height_above, body: box, value: 0.9, expect: fail}\n");
  write_file("suite/sub/b.yaml", FALL_HEAD "checks:\n"
             "  - {name: \"x<y & \\\"q\\\"\", type: height_above, body: box, value: 0.9}\n"
             "  - {name: ok, type: solver_converged}\n");
  write_file("suite/c.yaml", FALL_HEAD "checks:\n  - {name: z, type: height_above, body: ghost, value: 1}\n");
  write_file("suite/notes.txt", "not a scene\n");
}

Test(check_cli, suite_report_exit_status_and_junit) {
  write_suite();
  cr_assert_eq(knead_run("check --junit j1.xml suite"), 1, "%s", slurp("err.txt"));
  char* out1 = slurp("out.txt");
  /* input order: a.yaml, c.yaml, sub/b.yaml (sorted paths) */
  const char* a = strstr(out1, "suite/a.yaml"), *c = strstr(out1, "suite/c.yaml"), *b = strstr(out1, "suite/sub/b.yaml");
  cr_assert(a && b && c && a < c && c < b, "%s", out1);
  cr_assert(strstr(out1, "  PASS   falls "), "%s", out1);
  cr_assert(strstr(out1, "  XFAIL  floats ") && strstr(out1, "(expected failure)"), "%s", out1);
  cr_assert(strstr(out1, "  FAIL   x<y & \"q\" "), "%s", out1);
  cr_assert(strstr(out1, "  ERROR  (scene)") && strstr(out1, "checks[0].body"), "%s", out1);
  /* 2 + 2 checks + 1 scene error: 2 passed (falls, ok), 1 expected, 1 failed, 1 error */
  cr_assert(strstr(out1, "3 scenes, 5 tests: 2 passed, 1 expected failure, 1 failed, 1 error\n"), "%s", out1);
  char* x1 = slurp("j1.xml");
  cr_assert(xml_balanced(x1), "%s", x1);
  cr_assert_eq(attr_int(x1, "<testsuites", "tests"), 5);
  cr_assert_eq(attr_int(x1, "<testsuites", "failures"), 1);
  cr_assert_eq(attr_int(x1, "<testsuites", "errors"), 1);
  cr_assert_eq(count(x1, "<testsuite "), 3);
  cr_assert_eq(count(x1, "<testcase "), 5);
  cr_assert_eq(count(x1, "<failure "), 1);
  cr_assert_eq(count(x1, "<error "), 1);
  cr_assert(strstr(x1, "name=\"x&lt;y &amp; &quot;q&quot;\""), "%s", x1);
  const char* sb = strstr(x1, "<testsuite name=\"b\"");
  cr_assert(sb && attr_int(sb, "<testsuite", "tests") == 2 && attr_int(sb, "<testsuite", "failures") == 1);
  /* junit-10.xsd: no skipped on <testsuites> (only on <testsuite>), a time on both, a timestamp
   * (UTC, ISO 8601 without a zone) on each <testsuite> */
  const char* ts = strstr(x1, "<testsuites ");
  const char* ts_end = strchr(ts, '>');
  const char* sk = strstr(ts, " skipped=");
  cr_assert(!sk || sk > ts_end, "skipped on <testsuites>: %.200s", ts);
  const char* tt = strstr(ts, " time=\"");
  cr_assert(tt && tt < ts_end, "no time on <testsuites>: %.200s", ts);
  cr_assert(atof(tt + 7) > 0, "%.200s", ts);
  cr_assert_eq(count(x1, "<testsuite name="), 3);
  /* only junit-10.xsd's attributes: the scene file is a property, not a file="" attribute */
  cr_assert(!strstr(x1, " file=\""), "%s", x1);
  cr_assert(strstr(x1, "<testsuite name=\"b\"") &&
            strstr(strstr(x1, "<testsuite name=\"b\""), ">\n    <properties>\n      <property name=\"file\" "
                                                         "value=\"suite/sub/b.yaml\"/>\n    </properties>\n"),
            "%s", x1);
  cr_assert_eq(count(x1, " skipped=\"0\""), 3);
  for (const char* p = strstr(x1, "<testsuite name="); p; p = strstr(p + 1, "<testsuite name=")) {
    const char* end = strchr(p, '>');
    const char* st = strstr(p, " timestamp=\"");
    cr_assert(st && st < end && strstr(p, " time=\"") < end, "%.300s", p);
    int Y, M, D, h, m, sec;
    char tail;
    cr_assert_eq(sscanf(st + 12, "%4d-%2d-%2dT%2d:%2d:%2d%c", &Y, &M, &D, &h, &m, &sec, &tail), 7, "%.40s", st);
    cr_assert(Y >= 2024 && M >= 1 && M <= 12 && D >= 1 && D <= 31 && tail == '"', "%.40s", st);
  }
  /* the failure's body: the measured value with its unit and time, and what was required. The
   * box falls freely from z = 1 m: its lowest z in the check's window [0, 0.3] s is
   * 1 - g 0.3^2 / 2 = 0.55855 m (the stand-in step is exact under constant gravity) */
  const char* fb = strstr(x1, "<failure type=\"height_above\"");
  cr_assert_not_null(fb, "%s", x1);
  const char* body = strchr(fb, '>') + 1;
  const char* head = "check: x&lt;y &amp; &quot;q&quot; (height_above)\nresult: min z = ";
  cr_assert(!strncmp(body, head, strlen(head)), "%.300s", body);
  const char* meas = strstr(body, "\nmeasured (worst): ");
  cr_assert(meas && meas < strstr(body, "</failure>"), "%.400s", body);
  double zmin = atof(meas + 20);
  cr_assert(fabs(zmin - (1 - 9.81 * 0.3 * 0.3 / 2)) < 1e-6, "measured %g: %.300s", zmin, body);
  cr_assert(strstr(meas, " m at t = 0.3 s\n"), "%.300s", meas);
  /* the failing scene's outputs are kept next to the report (the working folder here), the
   * passing and the unloadable ones' are not */
  cr_assert(exists("knead-check-failed/b/trajectory.csv") && exists("knead-check-failed/b/summary.json"));
  cr_assert(!exists("knead-check-failed/a") && !exists("knead-check-failed/c"));
  cr_assert(strstr(out1, "kept the outputs of 1 failing scene in knead-check-failed/\n"), "%s", out1);
  char* kept = slurp("knead-check-failed/b/summary.json");
  cr_assert(strstr(kept, "\"status\": \"ok\"") && strstr(kept, "\"name\": \"x<y & \\\"q\\\"\", \"type\": "
                                                                       "\"height_above\", \"passed\": false"),
            "%s", kept);
  free(kept);
  /* -j 2: the same report and the same JUnit, byte for byte but for the times */
  cr_assert_eq(knead_run("check -j 2 --junit j2.xml suite"), 1);
  char* out2 = slurp("out.txt");
  char* x2 = slurp("j2.xml");
  cr_assert_str_eq(out2, out1);
  char *x1n = without_times(x1), *x2n = without_times(x2);
  cr_assert_str_eq(x2n, x1n);
  free(x1n), free(x2n);
  /* --keep-failed DIR; a report in a folder keeps them next to it */
  cr_assert_eq(knead_run("check --keep-failed kept suite/sub/b.yaml"), 1);
  cr_assert(exists("kept/b/trajectory.csv"), "%s", slurp("out.txt"));
  char reports[300];
  snprintf(reports, sizeof reports, "%s/reports", tmpdir);
  cr_assert_eq(mkdir(reports, 0777), 0);
  cr_assert_eq(knead_run("check --junit reports/r.xml suite/sub/b.yaml"), 1);
  cr_assert(exists("reports/knead-check-failed/b/summary.json"), "%s", slurp("out.txt"));
  /* only passing and expected-failing checks: exit 0; usage errors: 2 */
  cr_assert_eq(knead_run("check suite/a.yaml"), 0, "%s", slurp("out.txt"));
  cr_assert_eq(knead_run("check"), 2);
  cr_assert_eq(knead_run("check -j 0 suite"), 2);
  cr_assert_eq(knead_run("check --bogus suite"), 2);
  cr_assert_eq(knead_run("check no_such_folder"), 2);
  free(out1), free(out2), free(x1), free(x2);
}

static const char drop_scene[] =
    "time_step: 0.01\nduration: 0.6\n"
    "objects:\n"
    "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
    "  - {name: box, shape: {box: [0.1, 0.1, 0.1]}, mass: 1, friction: 0.5, pose: {xyz: [0, 0, 0.05]},\n"
    "     velocity: [0, 0, 0, 1.0, 0, 0]}\n"
    "checks: [{name: rests, type: height_below, body: box, value: 0.2}]\n";

// (golden file in tmpdir) => its JSON document (jansson, the library knead writes it with)
static json_t* load_golden(const char* name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  json_error_t e;
  json_t* doc = json_load_file(path, 0, &e);
  cr_assert_not_null(doc, "%s:%d: %s", path, e.line, e.text);
  return doc;
}

static void save_golden(const char* name, const json_t* doc) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  cr_assert_eq(json_dump_file(doc, path, JSON_INDENT(1) | JSON_REAL_PRECISION(17)), 0);
}

// (doc, sample s, column name) => that value's JSON number in the file, to edit in place
static json_t* sample_value(json_t* doc, size_t s, const char* column) {
  json_t* cols = json_object_get(doc, "columns");
  for (size_t k = 0; k < json_array_size(cols); k++)
    if (!strcmp(json_string_value(json_array_get(cols, k)), column))
      return json_array_get(json_array_get(json_object_get(doc, "samples"), s), k + 1);
  cr_assert_fail("no column %s", column);
  return NULL;
}

Test(check_cli, golden_detects_a_changed_friction) {
  /* a box thrown onto the floor through SAP (contacts, friction): record, re-run (equal), then a
   * copy with the box's friction 0.5 -> 0.2 must diverge once it slides, naming the quantity, the
   * time and the unit */
  write_file("drop.yaml", drop_scene);
  cr_assert_eq(knead_run("check --update-golden drop.yaml"), 0, "%s", slurp("out.txt"));
  json_t* doc = load_golden("drop.golden.json");
  cr_assert_str_eq(json_string_value(json_object_get(doc, "format")), "knead-golden-2");
  cr_assert_eq(strlen(json_string_value(json_object_get(doc, "build_id"))), 16);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "knead_version")), "0.1.0");
  /* the tolerances with their units, as sim.h states them */
  cr_assert_float_eq(json_number_value(json_object_get(json_object_get(doc, "tolerances"), "m")), 1e-4, 1e-18);
  cr_assert_float_eq(json_number_value(json_object_get(json_object_get(doc, "tolerances"), "rad")), 2e-4, 1e-18);
  json_t* units = json_object_get(doc, "units");
  cr_assert_eq(json_array_size(units), 7);
  cr_assert_str_eq(json_string_value(json_array_get(units, 0)), "m");
  cr_assert_str_eq(json_string_value(json_array_get(units, 3)), "quaternion");
  /* 0.6 s at 20 Hz: samples at 0, 0.05, ..., 0.6 = 13 rows */
  cr_assert_eq(json_array_size(json_object_get(doc, "samples")), 13);
  json_decref(doc);
  cr_assert_eq(knead_run("check drop.yaml"), 0, "%s", slurp("out.txt"));
  char* out = slurp("out.txt");
  cr_assert(strstr(out, "PASS   golden ") && strstr(out, "13 samples x 7 quantities within tolerance (largest "
                                                        "differences 0 m, ") && strstr(out, "; final state hash equal"),
            "%s", out);
  free(out);
  /* the perturbed copy, next to a copy of the golden file */
  char* g = slurp("drop.golden.json");
  char* pert = strdup(drop_scene);
  char* m = strstr(pert, "friction: 0.5,");
  memcpy(m, "friction: 0.2,", 14);
  write_file("heavy.yaml", pert);
  write_file("heavy.golden.json", g);
  cr_assert_eq(knead_run("check --junit j.xml heavy.yaml"), 1);
  out = slurp("out.txt");
  /* the box slides from t = 0: x differs at the first 20 Hz sample, 0.05 s (by 6.0 mm: more than
   * the (0.5 - 0.2) g t^2 / 2 = 3.7 mm of the deceleration alone) */
  const char* f = strstr(out, "FAIL   golden ");
  cr_assert(f && strstr(f, "box/x diverged at t = ") && strstr(f, "final state hash differs"), "%s", out);
  double t = atof(strstr(f, " diverged at t = ") + strlen(" diverged at t = "));
  cr_assert_float_eq(t, 0.05, 1e-12, "%s", f);
  cr_assert(strstr(f, " m > tolerance 0.0001 m)"), "%s", f);
  char* x = slurp("j.xml");
  const char* fx = strstr(x, "<testcase classname=\"heavy\" name=\"golden\">\n      <failure message=\"box/x diverged");
  cr_assert(fx && strstr(fx, "quantity: box/x\nunit: m\nt: 0.05 s\n"), "%s", x);
  /* the body's numbers agree (difference = |value - golden| to the digits printed), beyond the
   * tolerance, less than the 50 mm the box travels in 0.05 s */
  double d = atof(strstr(fx, "\ndifference: ") + 13), v = atof(strstr(fx, "\nvalue: ") + 8);
  double gv = atof(strstr(fx, "\ngolden: ") + 9);
  cr_assert(fabs(d - fabs(v - gv)) < 1e-5 * d && d > 1e-4 && d < 0.05, "difference %g, value %g, golden %g", d, v, gv);
  /* its outputs are kept, with this run's recording to compare */
  cr_assert(exists("knead-check-failed/heavy/trajectory.csv") && exists("knead-check-failed/heavy/run.golden.json"));
  free(x), free(out), free(pert), free(g);
}

Test(check_cli, golden_tolerances_and_strict_hash) {
  write_file("drop.yaml", drop_scene);
  cr_assert_eq(knead_run("check --update-golden drop.yaml"), 0, "%s", slurp("out.txt"));
  json_t* doc = load_golden("drop.golden.json");
  /* box/z at sample 6 (t = 0.3 s) moved by half its tolerance (0.05 mm): passes */
  json_t* z = sample_value(doc, 6, "box/z");
  double z0 = json_number_value(z);
  json_real_set(z, z0 + 0.5e-4);
  save_golden("drop.golden.json", doc);
  cr_assert_eq(knead_run("check drop.yaml"), 0, "%s", slurp("out.txt"));
  char* out = slurp("out.txt");
  cr_assert(strstr(out, "PASS   golden ") && strstr(out, "within tolerance (largest differences 5e-05 m"), "%s", out);
  free(out);
  /* by twice its tolerance (0.2 mm): fails, naming the quantity, the time and the unit */
  json_real_set(z, z0 + 2e-4);
  save_golden("drop.golden.json", doc);
  cr_assert_eq(knead_run("check drop.yaml"), 1, "%s", slurp("out.txt"));
  out = slurp("out.txt");
  cr_assert(strstr(out, "FAIL   golden                   box/z diverged at t = 0.3 s: ") &&
            strstr(out, "(|difference| 0.0002 m > tolerance 0.0001 m)"), "%s", out);
  free(out);
  json_real_set(z, z0);
  /* the box's orientation turned by 1e-4 rad about x at t = 0.5 s (sample 10): within 2e-4 rad;
   * by 3e-4 rad: beyond, reported as the angle between the two rotations */
  const char* qn[4] = {"box/qw", "box/qx", "box/qy", "box/qz"};
  json_t* qv[4];
  double q[4];
  for (int k = 0; k < 4; k++) qv[k] = sample_value(doc, 10, qn[k]), q[k] = json_number_value(qv[k]);
  const double angles[2] = {1e-4, 3e-4};
  for (int a = 0; a < 2; a++) {
    double c = cos(angles[a] / 2), s = sin(angles[a] / 2); /* q * (c, s, 0, 0) */
    double r[4] = {q[0] * c - q[1] * s, q[0] * s + q[1] * c, q[2] * c + q[3] * s, q[3] * c - q[2] * s};
    for (int k = 0; k < 4; k++) json_real_set(qv[k], r[k]);
    save_golden("drop.golden.json", doc);
    int code = knead_run("check drop.yaml");
    out = slurp("out.txt");
    if (a == 0) {
      cr_assert(code == 0 && strstr(out, "PASS   golden "), "%s", out);
    } else {
      cr_assert_eq(code, 1, "%s", out);
      const char* f = strstr(out, "FAIL   golden                   box/orientation diverged at t = 0.5 s: rotated ");
      cr_assert_not_null(f, "%s", out);
      const char* lead = "FAIL   golden                   box/orientation diverged at t = 0.5 s: rotated ";
      double turned = atof(f + strlen(lead));
      cr_assert_float_eq(turned, 3e-4, 1e-6, "%s", f);
      cr_assert(strstr(f, " rad from the golden orientation (tolerance 0.0002 rad)"), "%s", f);
    }
    free(out);
  }
  for (int k = 0; k < 4; k++) json_real_set(qv[k], q[k]);
  /* a per-quantity override in the file widens one quantity */
  json_real_set(z, z0 + 2e-4);
  json_object_set_new(json_object_get(doc, "tolerance_overrides"), "box/z", json_real(3e-4));
  save_golden("drop.golden.json", doc);
  cr_assert_eq(knead_run("check drop.yaml"), 0, "%s", slurp("out.txt"));
  json_real_set(z, z0);
  json_object_clear(json_object_get(doc, "tolerance_overrides"));
  /* another final state hash: reported, a failure only with --strict */
  const char* h = json_string_value(json_object_get(doc, "final_state_hash"));
  char real_hash[17];
  snprintf(real_hash, sizeof real_hash, "%s", h);
  json_object_set_new(doc, "final_state_hash", json_string("0123456789abcdef"));
  save_golden("drop.golden.json", doc);
  cr_assert_eq(knead_run("check --junit j.xml drop.yaml"), 0, "%s", slurp("out.txt"));
  out = slurp("out.txt");
  char want[200];
  snprintf(want, sizeof want, "; final state hash differs (%s, golden 0123456789abcdef; same build id)", real_hash);
  cr_assert(strstr(out, "PASS   golden ") && strstr(out, want), "%s", out);
  free(out);
  cr_assert_eq(knead_run("check --strict --junit j.xml drop.yaml"), 1, "%s", slurp("out.txt"));
  out = slurp("out.txt");
  cr_assert(strstr(out, "FAIL   golden                   --strict: final state hash differs; 13 samples x 7 "
                        "quantities within tolerance") && strstr(out, want), "%s", out);
  char* x = slurp("j.xml");
  cr_assert(strstr(x, "<failure message=\"--strict: final state hash differs") &&
            strstr(x, ", a failure with --strict\n"), "%s", x);
  free(x), free(out);
  /* the recorded hash itself passes --strict */
  json_object_set_new(doc, "final_state_hash", json_string(real_hash));
  save_golden("drop.golden.json", doc);
  cr_assert_eq(knead_run("check --strict drop.yaml"), 0, "%s", slurp("out.txt"));
  json_decref(doc);
}

/* Non-ASCII names: an object named "café" (UTF-8 in the scene) is recorded as UTF-8; the same
 * file written with \u00e9 escapes (as other JSON tools write it) reads back to the same names, and
 * a non-ASCII quantity can be named in tolerance_overrides (\u escapes decoded to UTF-8, not cut to
 * one byte) */
Test(check_cli, golden_unicode_names_round_trip) {
  write_file("u.yaml", "time_step: 0.01\nduration: 0.2\ncontact: {backend: none}\n"
                       "objects: [{name: \"caf\xc3\xa9\", shape: {sphere: 0.05}, mass: 1, pose: {xyz: [0, 0, 1]}}]\n");
  cr_assert_eq(knead_run("check --update-golden u.yaml"), 0, "%s", slurp("out.txt"));
  char* g = slurp("u.golden.json");
  cr_assert(strstr(g, "\"caf\xc3\xa9/z\""), "%.600s", g);
  json_t* doc = load_golden("u.golden.json");
  json_t* z = sample_value(doc, 4, "caf\xc3\xa9/z"); /* t = 0.2 s */
  double z0 = json_number_value(z);
  cr_assert_float_eq(z0, 1 - 9.81 * 0.2 * 0.2 / 2, 1e-9, "free fall z(0.2) = %g", z0);
  json_real_set(z, z0 + 2e-4); /* beyond 1e-4 m, inside the override 3e-4 m */
  json_object_set_new(json_object_get(doc, "tolerance_overrides"), "caf\xc3\xa9/z", json_real(3e-4));
  char path[512];
  snprintf(path, sizeof path, "%s/u.golden.json", tmpdir);
  cr_assert_eq(json_dump_file(doc, path, JSON_INDENT(1) | JSON_REAL_PRECISION(17) | JSON_ENSURE_ASCII), 0);
  json_decref(doc);
  free(g);
  g = slurp("u.golden.json");
  /* jansson writes \u00E9; lower-case the escapes, as other tools write them */
  for (char* p = strstr(g, "\\u00E9"); p; p = strstr(p, "\\u00E9")) p[4] = 'e';
  write_file("u.golden.json", g);
  cr_assert(strstr(g, "\"caf\\u00e9/z\"") && !strstr(g, "\xc3\xa9"), "%.600s", g);
  cr_assert_eq(knead_run("check u.yaml"), 0, "%s", slurp("out.txt"));
  char* out = slurp("out.txt");
  cr_assert(strstr(out, "PASS   golden ") && strstr(out, "within tolerance (largest differences 0.0002 m"), "%s", out);
  free(out), free(g);
}

/* A golden file that cannot be used is an error of that scene, naming the file and the line and
 * column (not JSON) or the key (not knead's format, another unit) */
Test(check_cli, golden_file_errors_name_file_line_and_key) {
  write_file("drop.yaml", drop_scene);
  cr_assert_eq(knead_run("check --update-golden drop.yaml"), 0, "%s", slurp("out.txt"));
  json_t* doc = load_golden("drop.golden.json");
  write_file("drop.golden.json", "{\n \"format\": \"knead-golden-2\",\n \"scene\": drop\n}\n");
  cr_assert_eq(knead_run("check drop.yaml"), 1);
  char* out = slurp("out.txt");
  cr_assert(strstr(out, "ERROR  golden ") && strstr(out, "drop.golden.json:3:"), "%s", out);
  free(out);
  json_object_set_new(doc, "format", json_string("knead-golden-1"));
  save_golden("drop.golden.json", doc);
  cr_assert_eq(knead_run("check drop.yaml"), 1);
  out = slurp("out.txt");
  cr_assert(strstr(out, "drop.golden.json: key 'format': expected \"knead-golden-2\", found \"knead-golden-1\" "
                        "(re-record with knead check --update-golden)"), "%s", out);
  free(out);
  json_object_set_new(doc, "format", json_string("knead-golden-2"));
  json_array_set_new(json_object_get(doc, "units"), 2, json_string("rad"));
  save_golden("drop.golden.json", doc);
  cr_assert_eq(knead_run("check drop.yaml"), 1);
  out = slurp("out.txt");
  cr_assert(strstr(out, "drop.golden.json: key 'units': box/z is in 'rad' in the golden file, 'm' in this run"), "%s",
            out);
  free(out);
  json_decref(doc);
}

Test(check_cli, regression_examples) {
  /* two of examples/regression (the whole folder is the ctest tools/check_regression in Release):
   * the reference grasp passes; the low-friction one fails exactly its expected checks */
  cr_assert_eq(knead_run("check --no-golden -j 2 " KNEAD_SOURCE_DIR "/examples/regression/box_50mm_500g.yaml "
                   KNEAD_SOURCE_DIR "/examples/regression/box_low_friction_fails.yaml"), 0, "%s", slurp("out.txt"));
  char* out = slurp("out.txt");
  cr_assert(strstr(out, "2 scenes, 9 tests: 7 passed, 2 expected failures, 0 failed, 0 errors"), "%s", out);
  const char* lf = strstr(out, "box_low_friction_fails.yaml");
  cr_assert(lf && strstr(lf, "XFAIL  lifted ") && strstr(lf, "XFAIL  held_during_shake ") &&
            strstr(lf, "PASS   no_deep_penetration ") && strstr(lf, "PASS   solver_converged "), "%s", out);
  /* the lifted cube's lowest point during the shake: ~0.179 m (centre 0.025 + 0.21 lift - 0.05
   * shake - sag); the slipping one never leaves the floor (0.025 m less its contact sink) */
  const char* lifted = strstr(out, "PASS   lifted ");
  cr_assert_not_null(lifted);
  double z = atof(strstr(lifted, "min z = ") + 8);
  cr_assert(z > 0.17 && z < 0.19, "%g", z);
  double z_slip = atof(strstr(lf, "min z = ") + 8);
  cr_assert(z_slip > 0.02 && z_slip < 0.026, "%g", z_slip);
  free(out);
}
