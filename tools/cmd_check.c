/* `knead check PATH...`: run scenes as a regression suite. Each scene runs in a child process
 * (fork, check_scene.c), which writes its results to a file; the parent prints them in input order
 * (check_report.c), so the report and the JUnit file are the same for any -j (but for times), and a
 * scene that crashes is an error of that scene, not of the suite. Per scene: every check (PASS,
 * FAIL, XFAIL = expected failure, XPASS = expected to fail but passed), then the golden baseline
 * when <scene>.golden.json exists. A failing scene's outputs are kept (--keep-failed).
 * Exit status: 0 when everything passed or failed as expected, 1 otherwise, 2 usage. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/check.h"
#include "tools/cli.h"

static const char check_usage[] =
    "usage: knead check [OPTIONS] PATH...\n"
    "  Run each scene (PATH: a .yaml file, or a folder searched recursively for *.yaml) and\n"
    "  evaluate its checks: section; compare against <scene>.golden.json when it exists.\n"
    "  -j N, --jobs N         run N scenes at once, each in its own process [1]\n"
    "  --junit FILE           write a JUnit XML report (a testsuite per scene, a testcase per check)\n"
    "  --update-golden        record <scene>.golden.json beside each scene (20 Hz samples of every\n"
    "                         coordinate, the final state hash and the build id)\n"
    "  --golden-rate HZ       sampling rate of new golden files [20]\n"
    "  --no-golden            do not compare against golden files\n"
    "  --strict               a final state hash differing from the golden file's fails (bitwise\n"
    "                         reproducibility: same build, same BLAS kernels); without it the hash\n"
    "                         is reported and trajectories are judged by their tolerances\n"
    "  --keep-failed DIR      keep a failing scene's outputs (trajectory.csv, summary.json, ...,\n"
    "                         run.golden.json) in DIR/<scene> [knead-check-failed/ next to the JUnit\n"
    "                         report, else in the working folder]\n"
    "  --package-path DIR     search DIR for package:// files (repeatable)\n"
    "  --set KEY=VALUE        override one scalar of every scene as if its file said it\n"
    "                         (contact.margin=0.001, objects[1].friction=0.3; repeatable): the\n"
    "                         checks and the golden comparison then judge the variant\n"
    "                         (not with --update-golden: a variant is not a baseline)\n"
    "Under mpirun (or srun) the scenes are spread over the ranks (rank r runs scenes r, r + N, ...,\n"
    "each in its own process, -j at once); rank 0 writes the one report, as -j 1 would.\n"
    "Exit status: 0 all checks passed (or failed as expected), 1 a failure or an error, 2 usage.\n";

//---- collecting scene files ----

int check_push_path(char*** list, int* n, int* cap, const char* p) {
  if (*n == *cap) {
    int c = *cap ? 2 * *cap : 16;
    char** l = realloc(*list, (size_t)c * sizeof *l);
    if (!l) return -1;
    *list = l, *cap = c;
  }
  (*list)[(*n)++] = strdup(p);
  return 0;
}

static int cmp_str(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

static int is_yaml(const char* name) {
  size_t n = strlen(name);
  return (n > 5 && !strcmp(name + n - 5, ".yaml")) || (n > 4 && !strcmp(name + n - 4, ".yml"));
}

// (folder) => its *.yaml files, recursively, sorted by path so the order never depends on readdir
int check_collect_dir(const char* dir, char*** list, int* n, int* cap) {
  DIR* d = opendir(dir);
  if (!d) return -1;
  char** names = NULL;
  int nn = 0, nc = 0;
  struct dirent* e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') check_push_path(&names, &nn, &nc, e->d_name);
  closedir(d);
  if (nn) qsort(names, (size_t)nn, sizeof *names, cmp_str);
  for (int i = 0; i < nn; i++) {
    char p[4096];
    snprintf(p, sizeof p, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]);
    struct stat st;
    if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
      check_collect_dir(p, list, n, cap);
    else if (is_yaml(names[i]))
      check_push_path(list, n, cap, p);
    free(names[i]);
  }
  free(names);
  return 0;
}

//---- the command ----

int knead_cmd_check(int argc, char** argv) {
  check_opts o = {.golden_rate = 20};
  const char* junit_path = NULL;
  const char* keep_arg = NULL;
  int jobs = 1;
  char** paths = NULL;
  int npath = 0, cap = 0;
  /* --set values (argv's strings); held by a static so every return path leaves it reachable */
  static const char** sets;
  free(sets);
  sets = argc > 0 ? calloc((size_t)argc, sizeof *sets) : NULL;
  if (!sets) return 1;
  o.sets = sets;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* val = NULL;
    if (!strcmp(a, "-j") || !strcmp(a, "--jobs") || !strcmp(a, "--junit") || !strcmp(a, "--golden-rate") ||
        !strcmp(a, "--package-path") || !strcmp(a, "--keep-failed") || !strcmp(a, "--set")) {
      if (i + 1 >= argc) {
        knead_error("check: %s needs a value (see knead check --help)", a);
        return 2;
      }
      val = argv[++i];
    } else if (!strncmp(a, "-j", 2) && a[2]) {
      val = a + 2;
      a = "-j";
    }
    if (!strcmp(a, "-j") || !strcmp(a, "--jobs")) {
      char* end;
      long j = strtol(val, &end, 10);
      if (*end || j < 1 || j > 256) {
        knead_error("check: -j needs a number of processes from 1 to 256 (got '%s')", val);
        return 2;
      }
      jobs = (int)j;
    } else if (!strcmp(a, "--junit")) {
      junit_path = val;
    } else if (!strcmp(a, "--golden-rate")) {
      char* end;
      o.golden_rate = strtod(val, &end);
      if (*end || !(o.golden_rate > 0) || !isfinite(o.golden_rate)) {
        knead_error("check: --golden-rate needs a rate > 0 Hz (got '%s')", val);
        return 2;
      }
    } else if (!strcmp(a, "--package-path")) {
      if (kn_cli_add_package_path(val) != 0) return 1;
    } else if (!strcmp(a, "--update-golden")) {
      o.update_golden = 1;
    } else if (!strcmp(a, "--no-golden")) {
      o.no_golden = 1;
    } else if (!strcmp(a, "--strict")) {
      o.strict = 1;
    } else if (!strcmp(a, "--keep-failed")) {
      keep_arg = val;
    } else if (!strcmp(a, "--set") || !strncmp(a, "--set=", 6)) {
      sets[o.nsets++] = val ? val : a + 6;
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(check_usage, stdout);
      return 0;
    } else if (a[0] == '-' && a[1]) {
      knead_error("check: unknown option '%s' (see knead check --help)", a);
      return 2;
    } else {
      struct stat st;
      if (stat(a, &st) != 0) {
        knead_error("check: %s: no such file or folder", a);
        return 2;
      }
      if (S_ISDIR(st.st_mode)) {
        int before = npath;
        check_collect_dir(a, &paths, &npath, &cap);
        if (npath == before) knead_error("check: warning: no *.yaml scene under %s", a);
      } else {
        check_push_path(&paths, &npath, &cap, a);
      }
    }
  }
  if (npath == 0) {
    knead_error("check: which scenes? usage: knead check [OPTIONS] PATH...");
    return 2;
  }
  if (o.update_golden && o.nsets) {
    knead_error("check: --update-golden with --set would record a variant (%s%s) as the baseline; update the "
                "scene files, or run without --set",
                o.sets[0], o.nsets > 1 ? ", ..." : "");
    for (int i = 0; i < npath; i++) free(paths[i]);
    free(paths);
    return 2;
  }
  scene_job* job = calloc((size_t)npath, sizeof *job);
  int* status = calloc((size_t)npath, sizeof *status);
  if (!job || !status) return 1;
  for (int i = 0; i < npath; i++) {
    job[i].path = paths[i];
    /* its keep folder: the file's stem, "-2", "-3"... when an earlier scene has it */
    const char* base = strrchr(paths[i], '/');
    snprintf(job[i].keep_name, sizeof job[i].keep_name, "%s", base ? base + 1 : paths[i]);
    char* dot = strrchr(job[i].keep_name, '.');
    if (dot && dot != job[i].keep_name) *dot = 0;
    size_t len = strlen(job[i].keep_name);
    for (int k = 2, clash = 1; clash; k++) {
      clash = 0;
      for (int j = 0; j < i && !clash; j++) clash = !strcmp(job[j].keep_name, job[i].keep_name);
      if (clash) snprintf(job[i].keep_name + len, sizeof job[i].keep_name - len, "-%d", k);
    }
  }
  /* the keep folder: given, else next to the JUnit report, else in the working folder; created
   * now (the children stage their outputs in it) and removed at the end if we made it and it
   * stayed empty */
  char keep[4096];
  if (keep_arg)
    snprintf(keep, sizeof keep, "%s", keep_arg);
  else if (junit_path && strrchr(junit_path, '/'))
    snprintf(keep, sizeof keep, "%.*s/knead-check-failed", (int)(strrchr(junit_path, '/') - junit_path), junit_path);
  else
    snprintf(keep, sizeof keep, "knead-check-failed");
  struct stat kst;
  int keep_made = stat(keep, &kst) != 0 && mkdir(keep, 0777) == 0;
  if (keep_made || (stat(keep, &kst) == 0 && S_ISDIR(kst.st_mode)))
    o.keep_dir = keep;
  else
    knead_error("check: warning: cannot create %s (--keep-failed): a failing scene's outputs are not kept", keep);

  /* run: at most `jobs` children at once; results are read in input order afterwards */
  double wall0 = kn_wall_time();
  /* under mpirun: this rank runs scenes rank, rank + size, ...; rank 0 gathers and reports all */
  int rank = 0, size = 1;
  char* mine = NULL;
  if (check_mpi_start(&rank, &size) && (mine = calloc((size_t)npath, 1)))
    for (int i = rank; i < npath; i += size) mine[i] = 1;
  check_run_jobs(job, npath, &o, jobs, mine, status);
  check_mpi_gather(job, npath, status, rank, size);
  free(mine);
  if (rank != 0) {
    if (keep_made) rmdir(keep);
    for (int i = 0; i < npath; i++) free(paths[i]);
    free(paths);
    free(job);
    free(status);
    return check_mpi_finish(0);
  }

  double suite_time = kn_wall_time() - wall0;
  FILE* junit = NULL;
  char* suites = NULL;
  size_t nsuites = 0;
  if (junit_path) junit = open_memstream(&suites, &nsuites);
  check_counts all = {0};
  for (int i = 0; i < npath; i++) {
    check_report_scene(&job[i], status[i], junit, &all);
    unlink(job[i].result);
  }
  if (keep_made) rmdir(keep); /* fails, as it should, when a scene was kept */
  printf("%d scene%s, %d test%s: %d passed, %d expected failure%s, %d failed, %d error%s\n", npath,
         npath == 1 ? "" : "s", all.tests, all.tests == 1 ? "" : "s", all.passed, all.expected,
         all.expected == 1 ? "" : "s", all.failures, all.errors, all.errors == 1 ? "" : "s");
  if (all.kept) printf("kept the outputs of %d failing scene%s in %s/\n", all.kept, all.kept == 1 ? "" : "s", keep);
  int code = all.failures || all.errors ? 1 : 0;
  if (junit) {
    fclose(junit);
    FILE* f = fopen(junit_path, "w");
    if (!f) {
      knead_error("check: %s: cannot write: %s", junit_path, strerror(errno));
      code = 1;
    } else {
      fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
      /* junit-10.xsd's <testsuites> has name, time, tests, failures, errors, disabled (no skipped) */
      fprintf(f, "<testsuites name=\"knead check\" tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n",
              all.tests, all.failures, all.errors, suite_time);
      fputs(suites ? suites : "", f);
      fprintf(f, "</testsuites>\n");
      if (fclose(f) != 0) code = 1;
    }
    free(suites);
  }
  for (int i = 0; i < npath; i++) free(paths[i]);
  free(paths);
  free(job);
  free(status);
  return check_mpi_finish(code);
}
