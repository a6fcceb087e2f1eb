/* output.plots: `knead run` on the default scene (first 2 s: approach, close, lift) draws SVG
 * plots with gnuplot; without gnuplot the run succeeds with a warning in summary.json. The two
 * fingers' equal force curves are both drawn (own dash pattern and staggered markers); FEM and MPM
 * bodies resting on a floor have their contact forces and centroid heights plotted. */
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

// index (1 = first after t) of the column named `name` in plots/<plot>.dat's "# t\t..." header, -1 absent
static int dat_column(const char* plot, const char* name) {
  char path[512];
  snprintf(path, sizeof path, "%s/out/plots/%s.dat", tmpdir, plot);
  char* s = slurp(path);
  cr_assert_not_null(s, "%s missing", path);
  int col = -1, k = 0;
  size_t n = strlen(name);
  for (const char* p = s + 2; *p && *p != '\n'; k++) {
    size_t len = strcspn(p, "\t\n");
    if (len == n && !strncmp(p, name, n)) col = k;
    p += len;
    if (*p == '\t') p++;
  }
  free(s);
  return col;
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

// (plots.gp, series title) => its key entry's "lc L dt D pt P" numbers; 0 when not found
static int curve_style(const char* gp, const char* title, int* lc, int* dt, int* pt) {
  char key[256];
  snprintf(key, sizeof key, "title '%s'", title);
  const char* e = strstr(gp, key);
  if (!e) return 0;
  const char* b = e;
  while (b > gp && b[-1] != '\n') b--;
  return sscanf(b, " NaN with linespoints lw 1.5 lc %d dt %d pt %d", lc, dt, pt) == 3;
}

// uses of the SVG symbol `id` ("gpPt4"): the markers of one point type
static int symbol_uses(const char* svg, const char* id) {
  char key[64];
  snprintf(key, sizeof key, "'#%s'", id);
  int n = 0;
  for (const char* p = strstr(svg, key); p; p = strstr(p + 1, key)) n++;
  return n;
}

Test(plots, equal_finger_forces_both_visible) {
  if (system("command -v gnuplot >/dev/null 2>&1") != 0 && !getenv("KNEAD_GNUPLOT")) cr_skip_test("no gnuplot on PATH");
  write_scene();
  cr_assert_eq(run(""), 0);
  const char* left = "gripper/gripper_finger_left - box";
  const char* right = "gripper/gripper_finger_right - box";
  int cl = dat_column("contact_forces", left), cr = dat_column("contact_forces", right);
  cr_assert(cl >= 1 && cr >= 1, "finger columns %d %d", cl, cr);
  /* why it matters: the box is squeezed symmetrically, the two curves are equal to 1 % */
  double fl = dat_value("contact_forces", 1.8, cl), fr = dat_value("contact_forces", 1.8, cr);
  cr_expect(fl > 5 && fabs(fl - fr) < 0.01 * fl, "finger forces at 1.8 s: %g and %g N", fl, fr);
  char path[512];
  snprintf(path, sizeof path, "%s/out/plots/plots.gp", tmpdir);
  char* gp = slurp(path);
  cr_assert_not_null(gp);
  int lc[2], dt[2], pt[2];
  cr_assert(curve_style(gp, left, &lc[0], &dt[0], &pt[0]) && curve_style(gp, right, &lc[1], &dt[1], &pt[1]), "%s", gp);
  cr_expect(lc[0] != lc[1] && dt[0] != dt[1] && pt[0] != pt[1], "left lc %d dt %d pt %d, right lc %d dt %d pt %d", lc[0],
            dt[0], pt[0], lc[1], dt[1], pt[1]);
  /* the markers of the two curves start at different samples ("every N::start") */
  char key[64];
  int every[2], start[2];
  for (int i = 0; i < 2; i++) {
    snprintf(key, sizeof key, "using 1:%d every ", (i ? cr : cl) + 1);
    const char* e = strstr(gp, key);
    cr_assert_not_null(e, "no marker line for column %d", (i ? cr : cl) + 1);
    cr_assert_eq(sscanf(e + strlen(key), "%d::%d", &every[i], &start[i]), 2);
  }
  cr_expect(every[0] == every[1] && start[0] != start[1], "markers every %d::%d and %d::%d", every[0], start[0],
            every[1], start[1]);
  free(gp);
  /* in the SVG: at least two dash patterns, and at least three marker symbols used 10+ times each
   * (floor - box and the two fingers, ~12 markers per curve) */
  snprintf(path, sizeof path, "%s/out/plots/contact_forces.svg", tmpdir);
  char* svg = slurp(path);
  cr_assert_not_null(svg);
  int dashed = 0;
  for (const char* p = strstr(svg, "stroke-dasharray"); p; p = strstr(p + 1, "stroke-dasharray")) dashed++;
  cr_expect_geq(dashed, 2, "dashed strokes: %d", dashed);
  int marked = 0;
  for (int k = 0; k < 16; k++) {
    char id[16];
    snprintf(id, sizeof id, "gpPt%d", k);
    marked += symbol_uses(svg, id) >= 10;
  }
  cr_expect_geq(marked, 3, "marker symbols used 10 times or more: %d", marked);
  free(svg);
}

/* an MPM cube (0.1 m, 1e3 kg/m^3: 1 kg) and an FEM cube (0.1 m, 500 kg/m^3: 0.5 kg) dropped 1 cm
 * and 0.5 cm onto a floor, 0.6 s: their floor contacts, net contact forces and centroids plotted */
Test(plots, deformables_plotted) {
  char path[512];
  snprintf(path, sizeof path, "%s/scene.yaml", tmpdir);
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("time_step: 0.01\nduration: 0.6\n"
        "objects:\n  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
        "deformables:\n"
        "  - {name: blob, model: mpm, shape: {box: [0.1, 0.1, 0.1]}, resolution: 0.05, particles_per_cell: 8,\n"
        "     material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.3, density: 1e3},\n"
        "     pose: {xyz: [0.3, 0, 0.06]}}\n"
        "  - {name: cube, shape: {box: [0.1, 0.1, 0.1]}, resolution: 0.05,\n"
        "     material: {youngs_modulus: 1e5, poisson_ratio: 0.3, density: 500}, pose: {xyz: [-0.3, 0, 0.055]}}\n"
        "output: {plots: true}\n", f);
  fclose(f);
  cr_assert_eq(run(""), 0); /* without gnuplot: a warning, and the .dat files are written all the same */
  struct {
    const char* name;
    double mg;
  } bodies[2] = {{"blob", 9.81}, {"cube", 0.5 * 9.81}};
  for (int i = 0; i < 2; i++) {
    char col[128];
    /* the net contact force on a body at rest is its weight */
    snprintf(col, sizeof col, "%s (%s, total)", bodies[i].name, i ? "FEM" : "MPM");
    int c = dat_column("contact_forces", col);
    cr_assert_geq(c, 1, "no column '%s' in contact_forces.dat", col);
    double net = dat_value("contact_forces", 0.6, c);
    cr_expect(fabs(net - bodies[i].mg) < 0.01 * bodies[i].mg, "%s: %g N, expected %g", col, net, bodies[i].mg);
    /* the floor pair: the sum of the point force magnitudes, at least the net force */
    snprintf(col, sizeof col, "floor - %s", bodies[i].name);
    c = dat_column("contact_forces", col);
    cr_assert_geq(c, 1, "no column '%s' in contact_forces.dat", col);
    double sum = dat_value("contact_forces", 0.6, c);
    cr_expect(sum >= net * (1 - 1e-9) && sum < 1.1 * bodies[i].mg, "%s: %g N (net %g)", col, sum, net);
    cr_expect_eq(dat_value("contact_forces", 0.0, c), 0.0);
    /* the centroid: where it was put at t = 0, then resting lower, above the floor */
    snprintf(col, sizeof col, "%s (centroid)", bodies[i].name);
    c = dat_column("heights", col);
    cr_assert_geq(c, 1, "no column '%s' in heights.dat", col);
    double z0 = i ? 0.055 : 0.06, z0_plot = dat_value("heights", 0.0, c), z1 = dat_value("heights", 0.6, c);
    cr_expect(fabs(z0_plot - z0) < 1e-9, "%s at t = 0: %.10g", col, z0_plot);
    cr_expect(z1 < z0 - 0.004 && z1 > 0.03, "%s at 0.6 s: %g", col, z1);
  }
}
