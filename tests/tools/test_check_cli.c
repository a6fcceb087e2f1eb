/* tools/: `knead check` run as a user would: a suite of small scenes with passing, failing and
 * expected-failing checks and one that cannot load; the report, the exit status, the JUnit XML
 * (well-formed, right counts), -j 2 giving the -j 1 report and JUnit byte for byte, golden
 * baselines catching a changed mass, and two of examples/regression. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char tmpdir[256];

static void make_tmpdir(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/knead_test_check_XXXXXX");
  cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_tmpdir(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  cr_assert_eq(system(cmd), 0);
}

TestSuite(check_cli, .init = make_tmpdir, .fini = remove_tmpdir, .timeout = 300);

// (knead arguments) => exit status; stdout / stderr in tmpdir/out.txt, err.txt
static int run(const char* args) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "cd '%s' && %s %s >out.txt 2>err.txt", tmpdir, KNEAD_CLI, args);
  int st = system(cmd);
  cr_assert(WIFEXITED(st), "%s did not exit normally", cmd);
  return WEXITSTATUS(st);
}

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

static void write_file(const char* name, const char* text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
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
  cr_assert_eq(run("check --junit j1.xml suite"), 1, "%s", slurp("err.txt"));
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
  /* -j 2: the same report and the same JUnit, byte for byte */
  cr_assert_eq(run("check -j 2 --junit j2.xml suite"), 1);
  char* out2 = slurp("out.txt");
  char* x2 = slurp("j2.xml");
  cr_assert_str_eq(out2, out1);
  cr_assert_str_eq(x2, x1);
  /* only passing and expected-failing checks: exit 0; usage errors: 2 */
  cr_assert_eq(run("check suite/a.yaml"), 0, "%s", slurp("out.txt"));
  cr_assert_eq(run("check"), 2);
  cr_assert_eq(run("check -j 0 suite"), 2);
  cr_assert_eq(run("check --bogus suite"), 2);
  cr_assert_eq(run("check no_such_folder"), 2);
  free(out1), free(out2), free(x1), free(x2);
}

Test(check_cli, golden_detects_a_changed_mass) {
  /* a box thrown onto the floor through SAP (contacts, friction): record, re-run (equal), then a
   * copy with the box's friction 0.5 -> 0.2 must diverge once it slides, naming the quantity and
   * the time */
  const char* scene =
      "time_step: 0.01\nduration: 0.6\n"
      "objects:\n"
      "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
      "  - {name: box, shape: {box: [0.1, 0.1, 0.1]}, mass: 1, friction: 0.5, pose: {xyz: [0, 0, 0.05]},\n"
      "     velocity: [0, 0, 0, 1.0, 0, 0]}\n"
      "checks: [{name: rests, type: height_below, body: box, value: 0.2}]\n";
  write_file("drop.yaml", scene);
  cr_assert_eq(run("check --update-golden drop.yaml"), 0, "%s", slurp("out.txt"));
  char* g = slurp("drop.golden.json");
  cr_assert_not_null(g);
  cr_assert(strstr(g, "\"format\": \"knead-golden-1\"") && strstr(g, "\"build_id\": \"") &&
            strstr(g, "\"tolerances\": {\"default\": 1e-06}"), "%.400s", g);
  /* 0.6 s at 20 Hz: samples at 0, 0.05, ..., 0.6 = 13 rows */
  const char* s = strstr(g, "\"samples\": [");
  cr_assert_not_null(s);
  cr_assert_eq(count(s, "\n    ["), 13);
  cr_assert_eq(run("check drop.yaml"), 0, "%s", slurp("out.txt"));
  char* out = slurp("out.txt");
  cr_assert(strstr(out, "PASS   golden ") && strstr(out, "13 samples x 7 quantities within tolerance; final state "
                                                        "hash equal"), "%s", out);
  free(out);
  /* the perturbed copy, next to a copy of the golden file */
  char* pert = strdup(scene);
  char* m = strstr(pert, "friction: 0.5,");
  memcpy(m, "friction: 0.2,", 14);
  write_file("heavy.yaml", pert);
  write_file("heavy.golden.json", g);
  cr_assert_eq(run("check --junit j.xml heavy.yaml"), 1);
  out = slurp("out.txt");
  /* the box slides from t = 0: x differs at the first 20 Hz sample, 0.05 s */
  const char* f = strstr(out, "FAIL   golden ");
  cr_assert(f && strstr(f, "box/") && strstr(f, " diverged at t = ") && strstr(f, "final state hash DIFFERS"), "%s",
            out);
  double t = atof(strstr(f, " diverged at t = ") + strlen(" diverged at t = "));
  cr_assert(strstr(f, "box/x diverged"), "%s", f);
  cr_assert_float_eq(t, 0.05, 1e-12, "%s", f);
  char* x = slurp("j.xml");
  cr_assert(strstr(x, "<testcase classname=\"heavy\" name=\"golden\">\n      <failure message=\"box/"), "%s", x);
  free(x), free(out), free(pert), free(g);
}

Test(check_cli, regression_examples) {
  /* two of examples/regression (the whole folder is the ctest tools/check_regression in Release):
   * the reference grasp passes; the low-friction one fails exactly its expected checks */
  cr_assert_eq(run("check --no-golden -j 2 " KNEAD_SOURCE_DIR "/examples/regression/box_50mm_500g.yaml "
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
