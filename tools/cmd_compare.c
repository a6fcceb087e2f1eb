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

#include "tools/cli.h"
#include "tools/compare.h"


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
static const char* const default_backends[] = {"sap", "penalty", "ipc", "smooth_friction"};

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
    compare_safe_name(stem_name, r->dir_name, sizeof r->dir_name);
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
  if (compare_make_dirs(out_dir) != 0) {
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
        compare_read_cell(&job[s * nb + b], status[s * nb + b], &r->cells[b]);
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
        if (compare_write_series(&rows[s].cells[b], dir, backends[b], rows[s].series[b], sizeof rows[s].series[b]) != 0) {
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
          compare_status_text(c, st, sizeof st);
          printf("  %-16s %s\n", backends[b], st);
          continue;
        }
        printf("  %-16s %-8s %9.4g %9.3g %9.3g %12.4g  %-16s ", backends[b], c->status, 1e3 * c->wall, c->iterations,
               c->contacts, c->worst, c->hash);
        for (int k = 0; k < c->nchecks; k++)
          if (isnan(c->checks[k].measured))
            printf(" %s %s;", c->checks[k].name, compare_verdict(&c->checks[k]));
          else
            printf(" %s %s %.4g %s;", c->checks[k].name, compare_verdict(&c->checks[k]), c->checks[k].measured, c->checks[k].unit);
        putchar('\n');
        if (strcmp(c->status, "ok") != 0) printf("  %-16s   %s\n", "", c->message);
      }
    }
    char path[4400];
    snprintf(path, sizeof path, "%s/compare.md", out_dir);
    if (!code && compare_write_markdown(path, rows, npath, backends, nb, o.sets, o.nsets) != 0) {
      knead_error("compare: %s: cannot write", path);
      code = 1;
    }
    snprintf(path, sizeof path, "%s/compare.json", out_dir);
    if (!code && compare_write_json(path, out_dir, rows, npath, backends, nb, o.sets, o.nsets) != 0) {
      knead_error("compare: %s: cannot write", path);
      code = 1;
    }
    int missing = 0, nplot = code ? 0 : compare_write_plots(out_dir, rows, npath, backends, nb, &missing);
    if (nplot < 0) {
      knead_error("compare: %s/plots: cannot write", out_dir);
      code = 1;
    }
    for (int s = 0; s < npath && !code; s++) {
      int nreplay = 0;
      for (int b = 0; b < nb; b++) nreplay += rows[s].cells[b].replay != NULL;
      if (nreplay == 0) continue;
      snprintf(path, sizeof path, "%s/%s/replay.html", out_dir, rows[s].dir_name);
      if (compare_write_side_by_side(path, &rows[s], backends, nb) != 0) {
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
    if (baseline && compare_against_baseline(baseline, rows, npath, backends, nb) != 0) code = 1;
    for (int s = 0; s < npath; s++) {
      for (int b = 0; rows[s].cells && b < nb; b++) compare_free_cell(&rows[s].cells[b]);
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

