/* `knead compare PATH... [--backends LIST]`: every scene once per contact backend, side by side.
 * Each (scene, backend) runs in its own child (compare_scene.c through check_run_jobs, -j at once;
 * under mpirun spread over the ranks as knead check does) with contact.backend set after the
 * user's --set overrides, so the backend is the only difference along a row. A backend that cannot
 * run a scene is refused with its reason in that cell and takes nothing from the others. Written:
 * a table on stdout, DIR/compare.md and DIR/compare.json (per scene and backend: status, each
 * check's measured value and verdict, wall time, solver iterations and contacts per step, the
 * deepest contact, the final state hash), DIR/<scene>/<backend>.csv (the checks' observed
 * quantities per step) and, with gnuplot, DIR/plots/<scene>-<check>.svg: a check's quantity over
 * time, one curve per backend and the reference curve of a follows_curve check. A scene with
 * output.html has its runs' outputs in DIR/<scene>/<backend>/ and DIR/<scene>/replay.html, their
 * replays side by side in step.
 * With --baseline (an earlier compare.json) a check that passed there and fails now is a regression.
 * With --scoreboard FILE the fidelity scoreboard is made from compare.json (compare_scoreboard.c).
 * Exit status: 0 when every scene was run (a check failing or a backend refusing is a result, not
 * an error), 1 when a scene could not be loaded, an output not written or a baseline check
 * regressed, 2 usage. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/check.h"
#include "tools/cli.h"


static const char compare_usage[] =
    "usage: knead compare [OPTIONS] PATH...\n"
    "  Run each scene (PATH: a .yaml file, or a folder searched recursively for *.yaml) once per\n"
    "  contact backend (contact.backend set after the --set overrides) and write, per scene and\n"
    "  backend, each check's measured value and verdict, wall time, solver iterations and contacts\n"
    "  per step, the deepest contact and the final state hash: a table on stdout, DIR/compare.md,\n"
    "  DIR/compare.json, DIR/<scene>/<backend>.csv (the checks' quantities per step) and, with\n"
    "  gnuplot, DIR/plots/<scene>-<check>.svg (one curve per backend, and the reference curve of a\n"
    "  follows_curve check). A scene with output.html (or --set output.html=true) also gets\n"
    "  DIR/<scene>/replay.html: its backends' replays side by side, in step. A backend that\n"
    "  cannot run a scene says why in its cell.\n"
    "  --backends LIST        comma-separated [sap,penalty,ipc,smooth_friction]; also none\n"
    "  -j N, --jobs N         run N (scene, backend) pairs at once, each in its own process [1]\n"
    "  --out DIR              where the files go [out/compare]\n"
    "  --set KEY=VALUE        override one scalar of every scene as if its file said it (repeatable)\n"
    "  --package-path DIR     search DIR for package:// files (repeatable)\n"
    "  --baseline FILE        an earlier compare.json: every check that passed there and does not\n"
    "                         now (same scene name, backend and check) is a REGRESSION (exit 1);\n"
    "                         cells it lacks (a new backend) are not compared\n"
    "  --scoreboard FILE      also write the fidelity scoreboard (bench/SCOREBOARD.md): machine,\n"
    "                         date, build; per scene a row, per backend that ran its checks'\n"
    "                         verdicts and errors, ms/step and ratio to SAP; anything after a\n"
    "                         '<!-- notes -->' line of an existing FILE is kept\n"
    "  --mujoco FILE          with --scoreboard: a MuJoCo column from knead-bench --fidelity FILE\n"
    "Under mpirun (or srun) the runs are spread over the ranks; rank 0 writes the outputs.\n"
    "Exit status: 0 every scene ran (failing checks and refusals are results), 1 a scene could not\n"
    "be loaded, an output not written or a baseline check regressed, 2 usage.\n";

//---- one cell: a scene run with one backend, read back from its child's result file ----

typedef struct {
  char *name, *type, *unit, *message;
  int passed, expect_fail;
  double measured, t;
} cell_check;

typedef struct {
  char status[16];        /* ok | failed | refused | error | crashed */
  char* scene;            /* the scene's name */
  char* message;
  long steps;
  double wall, iterations, contacts, worst; /* per step; worst: the deepest phi [m] */
  char hash[24];
  cell_check* checks;
  int nchecks;
  char** names;           /* series names: t, then the checks' quantities (and references) */
  int nnames;
  double* data;           /* nrows x nnames */
  int nrows, caprows;
  char* replay;           /* its replay.html relative to DIR (the scene has output.html), or NULL */
} cell;

static char* dup_or_empty(const char* s) { return strdup(s ? s : ""); }

static double number(const char* s) { return s ? strtod(s, NULL) : NAN; }

// (job's result file, the child's wait status) => the cell
static void read_cell(const scene_job* job, int status, cell* c) {
  memset(c, 0, sizeof *c);
  c->wall = c->iterations = c->contacts = c->worst = NAN;
  snprintf(c->status, sizeof c->status, "crashed");
  FILE* f = status == -1 ? NULL : fopen(job->result, "r");
  char* line = NULL;
  size_t cap = 0;
  int ended = 0;
  while (f && getline(&line, &cap, f) > 0) {
    line[strcspn(line, "\n")] = 0;
    char* fld[4096];
    int n = check_split_fields(line, fld, 4096);
    if (!strcmp(fld[0], "END")) ended = 1;
    else if (!strcmp(fld[0], "S") && n >= 4) {
      snprintf(c->status, sizeof c->status, "%s", fld[1]);
      free(c->scene), free(c->message);
      c->scene = dup_or_empty(fld[2]);
      c->message = dup_or_empty(fld[3]);
    } else if (!strcmp(fld[0], "T") && n >= 7) {
      c->steps = strtol(fld[1], NULL, 10);
      c->wall = number(fld[2]), c->iterations = number(fld[3]), c->contacts = number(fld[4]);
      c->worst = number(fld[5]);
      snprintf(c->hash, sizeof c->hash, "%s", fld[6]);
    } else if (!strcmp(fld[0], "C") && n >= 9) {
      cell_check* k = realloc(c->checks, (size_t)(c->nchecks + 1) * sizeof *k);
      if (!k) break;
      c->checks = k;
      k = &c->checks[c->nchecks++];
      k->name = dup_or_empty(fld[1]), k->type = dup_or_empty(fld[2]);
      k->passed = atoi(fld[3]), k->expect_fail = atoi(fld[4]);
      k->unit = dup_or_empty(fld[5]);
      k->measured = number(fld[6]), k->t = number(fld[7]);
      k->message = dup_or_empty(fld[8]);
    } else if (!strcmp(fld[0], "R") && n >= 2) {
      free(c->replay);
      c->replay = dup_or_empty(fld[1]);
    } else if (!strcmp(fld[0], "N") && !c->names) {
      c->nnames = n - 1;
      c->names = calloc((size_t)c->nnames, sizeof *c->names);
      for (int i = 0; c->names && i < c->nnames; i++) c->names[i] = dup_or_empty(fld[i + 1]);
      if (!c->names) c->nnames = 0;
    } else if (!strcmp(fld[0], "D") && c->nnames > 0 && n - 1 == c->nnames) {
      if (c->nrows == c->caprows) {
        int nc = c->caprows ? 2 * c->caprows : 256;
        double* d = realloc(c->data, (size_t)nc * (size_t)c->nnames * sizeof *d);
        if (!d) break;
        c->data = d, c->caprows = nc;
      }
      for (int i = 0; i < c->nnames; i++) c->data[(size_t)c->nrows * (size_t)c->nnames + (size_t)i] = number(fld[i + 1]);
      c->nrows++;
    }
  }
  free(line);
  if (f) fclose(f);
  if (!ended && strcmp(c->status, "crashed") != 0) snprintf(c->status, sizeof c->status, "crashed");
  if (!strcmp(c->status, "crashed")) {
    char msg[160];
    if (status != -1 && WIFSIGNALED(status))
      snprintf(msg, sizeof msg, "the run was killed by signal %d", WTERMSIG(status));
    else
      snprintf(msg, sizeof msg, "the run ended without a result (exit status %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    free(c->message);
    c->message = strdup(msg);
  }
}

static void free_cell(cell* c) {
  for (int i = 0; i < c->nchecks; i++)
    free(c->checks[i].name), free(c->checks[i].type), free(c->checks[i].unit), free(c->checks[i].message);
  for (int i = 0; i < c->nnames; i++) free(c->names[i]);
  free(c->checks), free(c->names), free(c->data), free(c->scene), free(c->message), free(c->replay);
}

static int column_of(const cell* c, const char* name) {
  for (int i = 0; i < c->nnames; i++)
    if (!strcmp(c->names[i], name)) return i;
  return -1;
}

static const char* verdict(const cell_check* k) {
  if (k->expect_fail) return k->passed ? "XPASS" : "XFAIL";
  return k->passed ? "PASS" : "FAIL";
}

//---- files ----

// (path) => the folder and its parents created; 0 on success
static int make_dirs(const char* path) {
  char p[4096];
  snprintf(p, sizeof p, "%s", path);
  for (char* s = p + 1; *s; s++)
    if (*s == '/') {
      *s = 0;
      if (mkdir(p, 0777) != 0 && errno != EEXIST) return -1;
      *s = '/';
    }
  return mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

// (name) => a file-name-safe copy in out ('/', ' ' and other odd characters become '_')
static void safe_name(const char* name, char* out, size_t cap) {
  size_t k = 0;
  for (; *name && k + 1 < cap; name++) {
    char ch = *name;
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
             ch == '_' || ch == '.';
    out[k++] = ok ? ch : '_';
  }
  out[k] = 0;
}

// (cell) => DIR/<scene>/<backend>.csv; 0, or -1 when it cannot be written
static int write_series(const cell* c, const char* dir, const char* backend, char* path, size_t cap) {
  path[0] = 0;
  if (c->nrows == 0) return 0;
  if (make_dirs(dir) != 0) return -1;
  snprintf(path, cap, "%s/%s.csv", dir, backend);
  FILE* f = fopen(path, "w");
  if (!f) return -1;
  for (int i = 0; i < c->nnames; i++) fprintf(f, "%s%s", i ? "," : "", c->names[i]);
  fputc('\n', f);
  for (int r = 0; r < c->nrows; r++) {
    for (int i = 0; i < c->nnames; i++) fprintf(f, "%s%.9g", i ? "," : "", c->data[(size_t)r * (size_t)c->nnames + (size_t)i]);
    fputc('\n', f);
  }
  int bad = ferror(f);
  return fclose(f) != 0 || bad ? -1 : 0;
}

// gnuplot single-quoted string: ' doubled
static void gp_string(FILE* f, const char* s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'') fputc('\'', f);
    fputc(*s, f);
  }
  fputc('\'', f);
}

//---- the command ----

typedef struct {
  const char* path;
  char dir_name[256];     /* its folder under DIR: the scene's name, made unique */
  const char* name;       /* the scene's name (from a cell; the file's stem when none loaded) */
  cell* cells;            /* one per backend */
  char (*series)[4200];   /* per backend: its CSV ("" when none) */
} scene_row;

static const char* const default_backends[] = {"sap", "penalty", "ipc", "smooth_friction"};

// (cell) => "ok", or "refused: why" and friends, one line for tables
static void status_text(const cell* c, char* out, size_t cap) {
  if (!strcmp(c->status, "ok"))
    snprintf(out, cap, "ok");
  else
    snprintf(out, cap, "%s: %s", c->status, c->message ? c->message : "");
}

// (rows) => compare.md
static int write_markdown(const char* path, const scene_row* rows, int nrow, const char* const* backends, int nb,
                          const char* const* sets, int nsets) {
  FILE* f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "# knead compare\n\nBackends: ");
  for (int b = 0; b < nb; b++) fprintf(f, "%s%s", b ? ", " : "", backends[b]);
  fprintf(f, ". Build %s.", kn_build_id());
  if (nsets) {
    fprintf(f, " Overrides:");
    for (int i = 0; i < nsets; i++) fprintf(f, " `%s`", sets[i]);
  }
  fprintf(f, "\n\nPer step: wall time, solver iterations, contacts; deepest phi: the most negative signed distance "
             "of any contact over the run (penetration depth when negative).\n");
  for (int s = 0; s < nrow; s++) {
    const scene_row* r = &rows[s];
    fprintf(f, "\n## %s\n\n`%s`\n\n", r->name, r->path);
    /* the checks' names: the first cell that has them */
    const cell* named = NULL;
    for (int b = 0; b < nb && !named; b++)
      if (r->cells[b].nchecks) named = &r->cells[b];
    fprintf(f, "| backend | status |");
    for (int k = 0; named && k < named->nchecks; k++) fprintf(f, " %s (%s) |", named->checks[k].name, named->checks[k].type);
    fprintf(f, " ms/step | iterations/step | contacts/step | deepest phi [m] | final state hash |\n|---|---|");
    for (int k = 0; named && k < named->nchecks; k++) fprintf(f, "---|");
    fprintf(f, "---|---|---|---|---|\n");
    for (int b = 0; b < nb; b++) {
      const cell* c = &r->cells[b];
      char st[1200];
      status_text(c, st, sizeof st);
      for (char* p = st; *p; p++)
        if (*p == '|') *p = '/';
      fprintf(f, "| %s | %s |", backends[b], st);
      for (int k = 0; named && k < named->nchecks; k++) {
        if (k < c->nchecks && isnan(c->checks[k].measured))
          fprintf(f, " %s (nothing measured) |", verdict(&c->checks[k]));
        else if (k < c->nchecks)
          fprintf(f, " %s %.4g %s |", verdict(&c->checks[k]), c->checks[k].measured, c->checks[k].unit);
        else
          fprintf(f, " – |");
      }
      if (c->steps > 0)
        fprintf(f, " %.4g | %.3g | %.3g | %.3g | `%s` |\n", 1e3 * c->wall, c->iterations, c->contacts, c->worst, c->hash);
      else
        fprintf(f, " – | – | – | – | – |\n");
    }
    for (int k = 0; named && k < named->nchecks; k++) {
      fprintf(f, "\n- **%s**:", named->checks[k].name);
      for (int b = 0; b < nb; b++)
        if (k < r->cells[b].nchecks) fprintf(f, " %s: %s;", backends[b], r->cells[b].checks[k].message);
    }
    if (named) fputc('\n', f);
    /* the plots write_plots draws (a check with a series) */
    const cell* series = NULL;
    for (int b = 0; b < nb && !series; b++)
      if (r->cells[b].nnames > 1) series = &r->cells[b];
    for (int k = 1; series && k < series->nnames; k++) {
      const char* q = series->names[k];
      size_t ql = strlen(q);
      if (ql > 10 && !strcmp(q + ql - 10, "/reference")) continue;
      char safe[256];
      safe_name(q, safe, sizeof safe);
      fprintf(f, "%s[%s](plots/%s-%s.svg)", k == 1 ? "\nPlots: " : ", ", q, r->dir_name, safe);
    }
    if (series) fputc('\n', f);
  }
  int bad = ferror(f);
  return fclose(f) != 0 || bad ? -1 : 0;
}

// (rows) => compare.json (format knead-compare-1: per scene its runs, one per backend)
static int write_json(const char* path, const char* out_dir, const scene_row* rows, int nrow,
                      const char* const* backends, int nb, const char* const* sets, int nsets) {
  size_t nout = strlen(out_dir);
  json_t* root = json_object();
  json_t* bl = json_array();
  json_t* ov = json_array();
  json_t* scenes = json_array();
  for (int b = 0; b < nb; b++) json_array_append_new(bl, json_string(backends[b]));
  for (int i = 0; i < nsets; i++) json_array_append_new(ov, json_string(sets[i]));
  json_object_set_new(root, "format", json_string("knead-compare-1"));
  json_object_set_new(root, "build", json_string(kn_build_id()));
  json_object_set_new(root, "backends", bl);
  json_object_set_new(root, "overrides", ov);
  json_object_set_new(root, "scenes", scenes);
  for (int s = 0; s < nrow; s++) {
    json_t* js = json_object();
    json_array_append_new(scenes, js);
    json_object_set_new(js, "path", json_string(rows[s].path));
    json_object_set_new(js, "name", json_string(rows[s].name));
    json_t* runs = json_array();
    json_object_set_new(js, "runs", runs);
    for (int b = 0; b < nb; b++) {
      const cell* c = &rows[s].cells[b];
      json_t* jc = json_object();
      json_array_append_new(runs, jc);
      json_object_set_new(jc, "backend", json_string(backends[b]));
      json_object_set_new(jc, "status", json_string(c->status));
      json_object_set_new(jc, "message", json_string(c->message ? c->message : ""));
      json_object_set_new(jc, "steps", json_integer(c->steps));
      json_object_set_new(jc, "wall_per_step", kn_json_real(c->wall));
      json_object_set_new(jc, "iterations_per_step", kn_json_real(c->iterations));
      json_object_set_new(jc, "contacts_per_step", kn_json_real(c->contacts));
      json_object_set_new(jc, "deepest_phi", kn_json_real(c->worst));
      json_object_set_new(jc, "state_hash", c->hash[0] ? json_string(c->hash) : json_null());
      /* the CSV relative to DIR, so the folder can move */
      const char* series = rows[s].series[b];
      if (!strncmp(series, out_dir, nout) && series[nout] == '/') series += nout + 1;
      json_object_set_new(jc, "series", series[0] ? json_string(series) : json_null());
      json_t* checks = json_array();
      json_object_set_new(jc, "checks", checks);
      for (int k = 0; k < c->nchecks; k++) {
        const cell_check* ck = &c->checks[k];
        json_t* jk = json_object();
        json_array_append_new(checks, jk);
        json_object_set_new(jk, "name", json_string(ck->name));
        json_object_set_new(jk, "type", json_string(ck->type));
        json_object_set_new(jk, "passed", json_boolean(ck->passed));
        json_object_set_new(jk, "expect", json_string(ck->expect_fail ? "fail" : "pass"));
        json_object_set_new(jk, "measured", kn_json_real(ck->measured));
        json_object_set_new(jk, "unit", json_string(ck->unit));
        json_object_set_new(jk, "t", kn_json_real(ck->t >= 0 ? ck->t : NAN));
        json_object_set_new(jk, "message", json_string(ck->message));
      }
    }
  }
  int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
  json_decref(root);
  return rc;
}

// (rows) => DIR/plots/compare.gp and the SVGs drawn by gnuplot; the number of plots, -1 on an I/O error
static int write_plots(const char* out_dir, const scene_row* rows, int nrow, const char* const* backends, int nb,
                       int* gnuplot_missing) {
  char dir[4200], script[4300], log[4300];
  snprintf(dir, sizeof dir, "%s/plots", out_dir);
  if (make_dirs(dir) != 0) return -1;
  snprintf(script, sizeof script, "%s/compare.gp", dir);
  snprintf(log, sizeof log, "%s/gnuplot.log", dir);
  FILE* gp = fopen(script, "w");
  if (!gp) return -1;
  fputs("# knead compare: each check's quantity over time per backend (gnuplot compare.gp redraws them)\n"
        "set terminal svg size 900,480 dynamic noenhanced font 'sans,12' background '#ffffff'\n"
        "set xlabel 't [s]'\nset grid\nset key outside right top\nset datafile separator ','\n\n", gp);
  static const int marker[] = {7, 5, 9, 2, 1, 6, 4, 8};
  int nplot = 0;
  for (int s = 0; s < nrow; s++) {
    const scene_row* r = &rows[s];
    const cell* named = NULL;
    for (int b = 0; b < nb && !named; b++)
      if (r->cells[b].nnames > 1) named = &r->cells[b];
    for (int col = 1; named && col < named->nnames; col++) {
      const char* q = named->names[col];
      size_t ql = strlen(q);
      if (ql > 10 && !strcmp(q + ql - 10, "/reference")) continue;
      char safe[256], path[4600], ref[300];
      safe_name(q, safe, sizeof safe);
      snprintf(path, sizeof path, "%s/%s-%s.svg", dir, r->dir_name, safe);
      snprintf(ref, sizeof ref, "%s/reference", q);
      const char* unit = "";
      for (int k = 0; k < named->nchecks; k++)
        if (!strcmp(named->checks[k].name, q)) unit = named->checks[k].unit;
      fputs("set output ", gp);
      gp_string(gp, path);
      fputs("\nset title ", gp);
      char title[600];
      snprintf(title, sizeof title, "%s: %s, per backend", r->name, q);
      gp_string(gp, title);
      fputs("\nset ylabel ", gp);
      snprintf(title, sizeof title, "%s [%s]", q, unit);
      gp_string(gp, title);
      fputs("\nplot ", gp);
      int ncurve = 0;
      const char* ref_file = NULL;
      int ref_col = -1;
      for (int b = 0; b < nb; b++) {
        const cell* c = &r->cells[b];
        int k = column_of(c, q);
        if (k < 0 || !r->series[b][0]) continue;
        if (!ref_file && (ref_col = column_of(c, ref)) >= 0) ref_file = r->series[b];
        int every = c->nrows > 12 ? c->nrows / 12 : 1;
        if (ncurve++) fputs(", \\\n     ", gp);
        gp_string(gp, r->series[b]);
        fprintf(gp, " skip 1 using 1:%d with linespoints lw 1.5 lc %d dt %d pt %d ps 0.7 pointinterval %d title ",
                k + 1, b + 1, b % 5 + 1, marker[b % 8], every);
        gp_string(gp, backends[b]);
      }
      if (ref_file) {
        if (ncurve++) fputs(", \\\n     ", gp);
        gp_string(gp, ref_file);
        fprintf(gp, " skip 1 using 1:%d with lines lw 2.5 lc rgb '#000000' dt 3 title 'reference'", ref_col + 1);
      }
      if (ncurve == 0) fputs("NaN notitle", gp);
      fputs("\n\n", gp);
      nplot += ncurve > 0;
    }
  }
  int bad = ferror(gp);
  if (fclose(gp) != 0 || bad) return -1;
  if (nplot == 0) return 0;
  int rc = kn_output_run_gnuplot(script, log);
  if (rc < 0) {
    *gnuplot_missing = 1;
    knead_error("compare: plots skipped: cannot run gnuplot (%s; Debian package gnuplot-nox, or set KNEAD_GNUPLOT); "
                "the data are in the CSV files and %s", strerror(errno), script);
    return 0;
  }
  if (rc != 0) knead_error("compare: gnuplot exited with status %d, see %s", rc, log);
  return nplot;
}

// (text) => HTML-escaped on f
static void html_text(FILE* f, const char* s) {
  for (; s && *s; s++) {
    if (*s == '<') fputs("&lt;", f);
    else if (*s == '>') fputs("&gt;", f);
    else if (*s == '&') fputs("&amp;", f);
    else if (*s == '"') fputs("&quot;", f);
    else fputc(*s, f);
  }
}

// (scene whose runs wrote replay.html) => DIR/<scene>/replay.html: the backends' replays side by
// side, driven in step by one clock and slider (each replay.js answers {knead: 'seek', t} messages)
static int write_side_by_side(const char* path, const scene_row* r, const char* const* backends, int nb) {
  FILE* f = fopen(path, "w");
  if (!f) return -1;
  double T = 0;
  for (int b = 0; b < nb; b++) {
    const cell* c = &r->cells[b];
    if (c->nrows > 0) T = fmax(T, c->data[(size_t)(c->nrows - 1) * (size_t)c->nnames]);
  }
  fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>knead compare: ", f);
  html_text(f, r->name);
  fputs("</title>\n<style>body{margin:0;font:14px sans-serif;background:#f4f4f4}#bar{padding:6px 10px}"
        "#grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:6px;padding:6px}"
        ".cell{background:#fff;border:1px solid #ccc}.cell h3{margin:4px 8px;font-size:14px}"
        ".cell iframe{width:100%;height:420px;border:0}.cell p{margin:8px;color:#a00}</style></head>\n<body>\n"
        "<div id=\"bar\"><b>", f);
  html_text(f, r->name);
  fprintf(f, "</b>: the backends in step &nbsp; <button id=\"play\">pause</button> <input id=\"slider\" "
             "type=\"range\" min=\"0\" max=\"%.9g\" step=\"any\" value=\"0\" style=\"width:50%%\"> <span "
             "id=\"time\">t = 0 s</span></div>\n<div id=\"grid\">\n", T);
  for (int b = 0; b < nb; b++) {
    const cell* c = &r->cells[b];
    fputs("<div class=\"cell\"><h3>", f);
    html_text(f, backends[b]);
    fputs(": ", f);
    html_text(f, c->status);
    fputs("</h3>", f);
    if (c->replay) {
      /* the page sits in DIR/<scene>/, the replay in DIR/<scene>/<backend>/ */
      const char* rel = strchr(c->replay, '/');
      fputs("<iframe src=\"", f);
      html_text(f, rel ? rel + 1 : c->replay);
      fputs("\"></iframe>", f);
    } else {
      fputs("<p>", f);
      html_text(f, c->message && c->message[0] ? c->message : "no replay");
      fputs("</p>", f);
    }
    fputs("</div>\n", f);
  }
  fputs("</div>\n<script>\n"
        "(function () {\n"
        "  const frames = Array.prototype.slice.call(document.querySelectorAll('iframe'));\n"
        "  const slider = document.getElementById('slider'), play = document.getElementById('play');\n"
        "  const label = document.getElementById('time'), T = Number(slider.max);\n"
        "  let t = 0, playing = true, last = null;\n"
        "  function send() {\n"
        "    label.textContent = 't = ' + t.toFixed(3) + ' s';\n"
        "    for (const f of frames) if (f.contentWindow) f.contentWindow.postMessage({ knead: 'seek', t: t }, '*');\n"
        "  }\n"
        "  play.addEventListener('click', function () {\n"
        "    playing = !playing;\n"
        "    if (playing && t >= T) t = 0;\n"
        "    play.textContent = playing ? 'pause' : 'play';\n"
        "  });\n"
        "  slider.addEventListener('input', function () {\n"
        "    playing = false;\n"
        "    play.textContent = 'play';\n"
        "    t = Number(slider.value);\n"
        "    send();\n"
        "  });\n"
        "  function tick(now) {\n"
        "    if (last !== null && playing) {\n"
        "      t += (now - last) / 1000;\n"
        "      if (t > T) t = 0;\n"
        "      slider.value = String(t);\n"
        "      send();\n"
        "    }\n"
        "    last = now;\n"
        "    requestAnimationFrame(tick);\n"
        "  }\n"
        "  requestAnimationFrame(tick);\n"
        "})();\n"
        "</script>\n</body></html>\n", f);
  int bad = ferror(f);
  return fclose(f) != 0 || bad ? -1 : 0;
}

// (baseline compare.json, this run) => every check that passed in the baseline and does not now
// (failing, or no longer measured: the scene or backend refused or failed), printed; the number of
// such regressions, or -1 when the baseline cannot be read. Scenes match by name, runs by backend,
// checks by name; cells the baseline lacks (a new backend, a new scene) are new, not compared.
static int against_baseline(const char* file, const scene_row* rows, int nrow, const char* const* backends, int nb) {
  json_error_t e;
  json_t* j = json_load_file(file, 0, &e);
  if (!j) {
    knead_error("compare: --baseline %s:%d:%d: %s", file, e.line, e.column, e.text);
    return -1;
  }
  const char* format = json_string_value(json_object_get(j, "format"));
  if (!format || strcmp(format, "knead-compare-1") != 0) {
    knead_error("compare: --baseline %s: format: expected \"knead-compare-1\" (a compare.json), got %s", file,
                format ? format : "none");
    json_decref(j);
    return -1;
  }
  int regressions = 0, compared = 0, improved = 0;
  size_t is;
  json_t* js;
  json_array_foreach(json_object_get(j, "scenes"), is, js) {
    const char* name = json_string_value(json_object_get(js, "name"));
    const scene_row* r = NULL;
    for (int s = 0; s < nrow && !r && name; s++)
      if (!strcmp(rows[s].name, name)) r = &rows[s];
    if (!r) continue;
    size_t ir;
    json_t* jr;
    json_array_foreach(json_object_get(js, "runs"), ir, jr) {
      const char* backend = json_string_value(json_object_get(jr, "backend"));
      int b = -1;
      for (int k = 0; k < nb && backend; k++)
        if (!strcmp(backends[k], backend)) b = k;
      if (b < 0) continue;
      const cell* c = &r->cells[b];
      size_t ik;
      json_t* jk;
      json_array_foreach(json_object_get(jr, "checks"), ik, jk) {
        const char* check = json_string_value(json_object_get(jk, "name"));
        int was = json_is_true(json_object_get(jk, "passed"));
        const cell_check* now = NULL;
        for (int k = 0; k < c->nchecks && check && !now; k++)
          if (!strcmp(c->checks[k].name, check)) now = &c->checks[k];
        compared++;
        if (was && (!now || !now->passed)) {
          regressions++;
          printf("REGRESSION %s / %s / %s: passed in the baseline; now %s\n", name, backend, check ? check : "?",
                 now ? now->message : c->message && c->message[0] ? c->message : c->status);
        } else if (!was && now && now->passed) {
          improved++;
          printf("NOW PASSES %s / %s / %s: %s\n", name, backend, check ? check : "?", now->message);
        }
      }
    }
  }
  printf("baseline %s: %d check%s compared, %d regression%s, %d now pass%s\n", file, compared, compared == 1 ? "" : "s",
         regressions, regressions == 1 ? "" : "s", improved, improved == 1 ? "es" : "");
  json_decref(j);
  return regressions;
}

int knead_cmd_compare(int argc, char** argv) {
  check_opts o = {.golden_rate = 20, .no_golden = 1, .run = compare_run_scene};
  const char* out_dir = "out/compare";
  const char* baseline = NULL;
  const char* scoreboard = NULL;
  const char* mujoco = NULL;
  int jobs = 1;
  /* the scene files and --set values; held by statics so that every early return (a usage error)
   * leaves them reachable, freed at the next call or the end */
  static char** paths;
  static int npath;
  for (int i = 0; i < npath; i++) free(paths[i]);
  free(paths);
  paths = NULL, npath = 0;
  int cap = 0;
  static const char** sets;
  static char* backend_text;
  free(sets);
  free(backend_text);
  backend_text = NULL;
  sets = argc > 0 ? calloc((size_t)argc, sizeof *sets) : NULL;
  if (!sets) return 1;
  o.sets = sets;
  const char* backends[16];
  int nb = 0;
  for (int i = 0; i < 4; i++) backends[nb++] = default_backends[i];
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* val = NULL;
    if (!strcmp(a, "-j") || !strcmp(a, "--jobs") || !strcmp(a, "--out") || !strcmp(a, "--backends") ||
        !strcmp(a, "--package-path") || !strcmp(a, "--set") || !strcmp(a, "--baseline") ||
        !strcmp(a, "--scoreboard") || !strcmp(a, "--mujoco")) {
      if (i + 1 >= argc) {
        knead_error("compare: %s needs a value (see knead compare --help)", a);
        return 2;
      }
      val = argv[++i];
    } else if (!strncmp(a, "-j", 2) && a[2]) {
      val = a + 2;
      a = "-j";
    } else if (!strncmp(a, "--set=", 6) || !strncmp(a, "--backends=", 11) || !strncmp(a, "--out=", 6)) {
      val = strchr(a, '=') + 1;
    }
    if (!strcmp(a, "-j") || !strcmp(a, "--jobs")) {
      char* end;
      long j = strtol(val, &end, 10);
      if (*end || j < 1 || j > 256) {
        knead_error("compare: -j needs a number of processes from 1 to 256 (got '%s')", val);
        return 2;
      }
      jobs = (int)j;
    } else if (!strcmp(a, "--out") || !strncmp(a, "--out=", 6)) {
      out_dir = val;
    } else if (!strcmp(a, "--baseline")) {
      baseline = val;
    } else if (!strcmp(a, "--scoreboard")) {
      scoreboard = val;
    } else if (!strcmp(a, "--mujoco")) {
      mujoco = val;
    } else if (!strcmp(a, "--backends") || !strncmp(a, "--backends=", 11)) {
      free(backend_text);
      backend_text = strdup(val);
      if (!backend_text) return 1;
      nb = 0;
      for (char* tok = strtok(backend_text, ","); tok; tok = strtok(NULL, ",")) {
        int known = 0;
        for (int b = KN_BACKEND_SAP; b <= KN_BACKEND_NONE; b++) known |= !strcmp(tok, kn_contact_backend_name((kn_contact_backend)b));
        if (!known) {
          knead_error("compare: --backends: unknown backend '%s' (known: sap, penalty, ipc, smooth_friction, none)", tok);
          return 2;
        }
        for (int b = 0; b < nb; b++)
          if (!strcmp(backends[b], tok)) {
            knead_error("compare: --backends: '%s' is listed twice", tok);
            return 2;
          }
        if (nb == (int)(sizeof backends / sizeof *backends)) return 2;
        backends[nb++] = tok;
      }
      if (nb == 0) {
        knead_error("compare: --backends needs at least one backend");
        return 2;
      }
    } else if (!strcmp(a, "--package-path")) {
      if (kn_cli_add_package_path(val) != 0) return 1;
    } else if (!strcmp(a, "--set") || !strncmp(a, "--set=", 6)) {
      sets[o.nsets++] = val;
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(compare_usage, stdout);
      return 0;
    } else if (a[0] == '-' && a[1]) {
      knead_error("compare: unknown option '%s' (see knead compare --help)", a);
      return 2;
    } else {
      struct stat st;
      if (stat(a, &st) != 0) {
        knead_error("compare: %s: no such file or folder", a);
        return 2;
      }
      if (S_ISDIR(st.st_mode)) {
        int before = npath;
        check_collect_dir(a, &paths, &npath, &cap);
        if (npath == before) knead_error("compare: warning: no *.yaml scene under %s", a);
      } else {
        check_push_path(&paths, &npath, &cap, a);
      }
    }
  }
  if (mujoco && !scoreboard) {
    knead_error("compare: --mujoco goes with --scoreboard FILE (it adds MuJoCo's column to it)");
    return 2;
  }
  if (npath == 0) {
    knead_error("compare: which scenes? usage: knead compare [OPTIONS] PATH...");
    return 2;
  }
  for (int i = 0; i < o.nsets; i++)
    if (!strncmp(o.sets[i], "contact.backend=", 16)) {
      knead_error("compare: --set %s: the backend is what compare varies; use --backends", o.sets[i]);
      return 2;
    }
  int njob = npath * nb;
  scene_job* job = calloc((size_t)njob, sizeof *job);
  int* status = calloc((size_t)njob, sizeof *status);
  scene_row* rows = calloc((size_t)npath, sizeof *rows);
  if (!job || !status || !rows) return 1;
  /* each scene's folder under DIR: its file's stem, "-2", "-3"... when an earlier scene has it */
  for (int s = 0; s < npath; s++) {
    scene_row* r = &rows[s];
    const char* base = strrchr(paths[s], '/');
    char stem_name[256];
    snprintf(stem_name, sizeof stem_name, "%s", base ? base + 1 : paths[s]);
    char* dot = strrchr(stem_name, '.');
    if (dot && dot != stem_name) *dot = 0;
    safe_name(stem_name, r->dir_name, sizeof r->dir_name);
    size_t len = strlen(r->dir_name);
    for (int k = 2, clash = 1; clash && len + 8 < sizeof r->dir_name; k++) {
      clash = 0;
      for (int j = 0; j < s && !clash; j++) clash = !strcmp(rows[j].dir_name, r->dir_name);
      if (clash) snprintf(r->dir_name + len, sizeof r->dir_name - len, "-%d", k);
    }
    for (int b = 0; b < nb; b++) {
      scene_job* jb = &job[s * nb + b];
      jb->path = paths[s], jb->backend = backends[b];
      snprintf(jb->keep_name, sizeof jb->keep_name, "%s", r->dir_name);
    }
  }
  if (make_dirs(out_dir) != 0) {
    knead_error("compare: %s: cannot create folder: %s", out_dir, strerror(errno));
    free(job), free(status), free(rows);
    return 1;
  }
  o.keep_dir = out_dir; /* a scene with output.html writes its runs' outputs under it */

  int rank = 0, size = 1;
  char* mine = NULL;
  if (check_mpi_start(&rank, &size) && (mine = calloc((size_t)njob, 1)))
    for (int i = rank; i < njob; i += size) mine[i] = 1;
  check_run_jobs(job, njob, &o, jobs, mine, status);
  check_mpi_gather(job, njob, status, rank, size);
  free(mine);
  int code = 0;
  if (rank == 0) {
    /* read the cells; name each scene's folder */
    for (int s = 0; s < npath; s++) {
      scene_row* r = &rows[s];
      r->path = paths[s];
      r->cells = calloc((size_t)nb, sizeof *r->cells);
      r->series = calloc((size_t)nb, sizeof *r->series);
      if (!r->cells || !r->series) return 1;
      for (int b = 0; b < nb; b++) {
        read_cell(&job[s * nb + b], status[s * nb + b], &r->cells[b]);
        unlink(job[s * nb + b].result);
        if (!r->name && r->cells[b].scene && r->cells[b].scene[0]) r->name = r->cells[b].scene;
      }
      if (!r->name) r->name = r->dir_name;
      /* a scene no backend could load is an error of the input */
      int loaded = 0;
      for (int b = 0; b < nb; b++) loaded |= strcmp(r->cells[b].status, "error") != 0;
      if (!loaded) code = 1;
    }
    for (int s = 0; s < npath && !code; s++) {
      char dir[4400];
      snprintf(dir, sizeof dir, "%s/%s", out_dir, rows[s].dir_name);
      for (int b = 0; b < nb; b++)
        if (write_series(&rows[s].cells[b], dir, backends[b], rows[s].series[b], sizeof rows[s].series[b]) != 0) {
          knead_error("compare: %s/%s.csv: cannot write: %s", dir, backends[b], strerror(errno));
          code = 1;
        }
    }
    /* the table on stdout */
    for (int s = 0; s < npath; s++) {
      const scene_row* r = &rows[s];
      printf("%s (%s)\n  %-16s %-8s %9s %9s %9s %12s  %-16s  checks\n", r->path, r->name, "backend", "status", "ms/step",
             "iter/step", "cont/step", "deepest phi", "state hash");
      for (int b = 0; b < nb; b++) {
        const cell* c = &r->cells[b];
        if (c->steps == 0 && strcmp(c->status, "ok") != 0) {
          char st[1200];
          status_text(c, st, sizeof st);
          printf("  %-16s %s\n", backends[b], st);
          continue;
        }
        printf("  %-16s %-8s %9.4g %9.3g %9.3g %12.4g  %-16s ", backends[b], c->status, 1e3 * c->wall, c->iterations,
               c->contacts, c->worst, c->hash);
        for (int k = 0; k < c->nchecks; k++)
          if (isnan(c->checks[k].measured))
            printf(" %s %s;", c->checks[k].name, verdict(&c->checks[k]));
          else
            printf(" %s %s %.4g %s;", c->checks[k].name, verdict(&c->checks[k]), c->checks[k].measured, c->checks[k].unit);
        putchar('\n');
        if (strcmp(c->status, "ok") != 0) printf("  %-16s   %s\n", "", c->message);
      }
    }
    char path[4400];
    snprintf(path, sizeof path, "%s/compare.md", out_dir);
    if (!code && write_markdown(path, rows, npath, backends, nb, o.sets, o.nsets) != 0) {
      knead_error("compare: %s: cannot write", path);
      code = 1;
    }
    snprintf(path, sizeof path, "%s/compare.json", out_dir);
    if (!code && write_json(path, out_dir, rows, npath, backends, nb, o.sets, o.nsets) != 0) {
      knead_error("compare: %s: cannot write", path);
      code = 1;
    }
    int missing = 0, nplot = code ? 0 : write_plots(out_dir, rows, npath, backends, nb, &missing);
    if (nplot < 0) {
      knead_error("compare: %s/plots: cannot write", out_dir);
      code = 1;
    }
    for (int s = 0; s < npath && !code; s++) {
      int nreplay = 0;
      for (int b = 0; b < nb; b++) nreplay += rows[s].cells[b].replay != NULL;
      if (nreplay == 0) continue;
      snprintf(path, sizeof path, "%s/%s/replay.html", out_dir, rows[s].dir_name);
      if (write_side_by_side(path, &rows[s], backends, nb) != 0) {
        knead_error("compare: %s: cannot write", path);
        code = 1;
      } else {
        printf("open %s\n", path);
      }
    }
    if (!code)
      printf("%d scene%s x %d backend%s: %s/compare.md, compare.json%s\n", npath, npath == 1 ? "" : "s", nb,
             nb == 1 ? "" : "s", out_dir, nplot > 0 ? ", plots/*.svg" : missing ? " (no plots: gnuplot missing)" : "");
    if (!code && scoreboard) {
      snprintf(path, sizeof path, "%s/compare.json", out_dir);
      if (compare_write_scoreboard(path, mujoco, scoreboard) != 0)
        code = 1;
      else
        printf("scoreboard: %s\n", scoreboard);
    }
    if (baseline && against_baseline(baseline, rows, npath, backends, nb) != 0) code = 1;
    for (int s = 0; s < npath; s++) {
      for (int b = 0; rows[s].cells && b < nb; b++) free_cell(&rows[s].cells[b]);
      free(rows[s].cells);
      free(rows[s].series);
    }
  }
  for (int i = 0; i < npath; i++) free(paths[i]);
  free(paths);
  paths = NULL, npath = 0;
  free(job);
  free(status);
  free(rows);
  return check_mpi_finish(code);
}
