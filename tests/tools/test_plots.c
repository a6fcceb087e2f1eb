/* output.plots: `knead run` on the default scene (first 2 s: approach, close, lift) draws SVG
 * plots with gnuplot; without gnuplot the run succeeds with a warning in summary.json. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "../support/files.h"

static char tmpdir[256];

static void make_tmpdir(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/knead_test_plots_XXXXXX");
  cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_tmpdir(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  cr_assert_eq(system(cmd), 0);
}

TestSuite(plots, .init = make_tmpdir, .fini = remove_tmpdir);

// the default scene, 2 s long, with output.plots
static void write_scene(void) {
  char* s = slurp(KNEAD_SOURCE_DIR "/examples/default_scene.yaml");
  cr_assert_not_null(s);
  char* d = strstr(s, "duration: 5.5");
  cr_assert_not_null(d);
  memcpy(d, "duration: 2.0", 13);
  char* o = strstr(s, "\noutput:");
  cr_assert_not_null(o);
  *o = 0;
  char path[512];
  snprintf(path, sizeof path, "%s/scene.yaml", tmpdir);
  FILE* f = fopen(path, "w");
  fprintf(f, "%s\noutput: {plots: true}\n", s);
  fclose(f);
  free(s);
}

static int run(const char* env) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "cd '%s' && %s %s run scene.yaml --out out >out.txt 2>err.txt", tmpdir, env, KNEAD_CLI);
  int st = system(cmd);
  cr_assert(WIFEXITED(st));
  return WEXITSTATUS(st);
}

/* tag-level XML check: elements closed in order; <? ?>, <!-- -->, <!...> and CDATA skipped */
static int xml_ok(const char* s) {
  char stack[64][32];
  int depth = 0;
  for (const char* p = strchr(s, '<'); p; p = strchr(p + 1, '<')) {
    if (!strncmp(p, "<![CDATA[", 9)) {
      if (!(p = strstr(p, "]]>"))) return 0;
    } else if (!strncmp(p, "<!--", 4)) {
      if (!(p = strstr(p, "-->"))) return 0;
    } else if (p[1] == '?' || p[1] == '!') {
      if (!(p = strchr(p, '>'))) return 0;
    } else {
      const char* e = strchr(p, '>');
      if (!e) return 0;
      int closing = p[1] == '/';
      const char* n = p + 1 + closing;
      size_t len = strcspn(n, " \t\r\n/>");
      if (len == 0 || len >= 32) return 0;
      if (closing) {
        if (!depth || strncmp(stack[depth - 1], n, len) || stack[depth - 1][len]) return 0;
        depth--;
      } else if (e[-1] != '/') {
        if (depth == 64) return 0;
        memcpy(stack[depth], n, len), stack[depth][len] = 0, depth++;
      }
      p = e;
    }
  }
  return depth == 0;
}

// the most coordinates pairs in one <path d="..."> (gnuplot: "M x,y L x,y x,y ...")
static int longest_path(const char* s) {
  int best = 0;
  for (const char* p = strstr(s, "<path"); p; p = strstr(p + 1, "<path")) {
    const char* d = strstr(p, " d=");
    const char* e = strchr(p, '>');
    if (!d || !e || d > e) continue;
    int n = 0;
    for (const char* c = d; c < e; c++) n += *c == ',';
    if (n > best) best = n;
  }
  return best;
}

// column `col` of plots/<name>.dat at the first row with t >= t0
static double dat_value(const char* name, double t0, int col) {
  char path[512];
  snprintf(path, sizeof path, "%s/out/plots/%s.dat", tmpdir, name);
  char* s = slurp(path);
  cr_assert_not_null(s, "%s missing", path);
  double v = NAN;
  for (char* line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#') continue;
    char* p = line;
    double t = strtod(p, &p);
    if (t < t0 - 1e-9) continue;
    for (int c = 1; c <= col; c++) v = strtod(p, &p);
    break;
  }
  free(s);
  return v;
}

Test(plots, svg_drawn_by_gnuplot) {
  if (system("command -v gnuplot >/dev/null 2>&1") != 0 && !getenv("KNEAD_GNUPLOT")) cr_skip_test("no gnuplot on PATH");
  write_scene();
  cr_assert_eq(run(""), 0);
  const char* names[] = {"contact_forces", "tracking_arm", "tracking_gripper", "heights"};
  for (int i = 0; i < 4; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/out/plots/%s.svg", tmpdir, names[i]);
    char* svg = slurp(path);
    cr_assert_not_null(svg, "%s was not drawn", path);
    cr_expect(strlen(svg) > 4000, "%s: only %zu bytes", path, strlen(svg));
    cr_expect(strstr(svg, "<svg") != NULL && xml_ok(svg), "%s is not well-formed SVG", path);
    /* 201 samples: the longest curve has at least ~100 vertices even after gnuplot merges some */
    int n = longest_path(svg);
    cr_expect_gt(n, 100, "%s: longest path has %d points", path, n);
    free(svg);
  }
  /* the numbers behind them: the box starts at z = 0.025 and rests on the floor with m g = 4.905 N
   * (0.5 kg) before the fingers touch it; the PD reference starts at q0 (zero error at t = 0) */
  cr_expect(fabs(dat_value("heights", 0.0, 1) - 0.025) < 1e-9);
  double f = dat_value("contact_forces", 0.5, 1);
  cr_expect(fabs(f - 4.905) < 0.01 * 4.905, "floor - box force at 0.5 s: %g N, expected 4.905", f);
  for (int j = 1; j <= 7; j++) cr_expect(fabs(dat_value("tracking_arm", 0.0, j)) < 1e-9);
}

Test(plots, missing_gnuplot_is_a_warning) {
  write_scene();
  cr_assert_eq(run("KNEAD_GNUPLOT=/nonexistent/gnuplot"), 0, "a run without gnuplot must succeed");
  char path[512];
  snprintf(path, sizeof path, "%s/out/summary.json", tmpdir);
  char* sum = slurp(path);
  cr_assert_not_null(sum);
  const char* w = strstr(sum, "\"warnings\"");
  cr_assert(w && strstr(w, "output.plots: skipped: cannot run gnuplot"), "summary.json: %s", sum);
  free(sum);
  struct stat st;
  snprintf(path, sizeof path, "%s/out/plots/heights.svg", tmpdir);
  cr_expect_neq(stat(path, &st), 0, "no SVG without gnuplot");
  snprintf(path, sizeof path, "%s/out/plots/heights.dat", tmpdir);
  cr_expect_eq(stat(path, &st), 0, "the data are still written");
}
