/* `knead check PATH...`: run scenes as a regression suite. Each scene runs in a child process
 * (fork), which writes its results to a file; the parent prints them in input order, so the
 * report and the JUnit file are the same for any -j, and a scene that crashes is an error of that
 * scene, not of the suite. Per scene: every check (PASS, FAIL, XFAIL = expected failure, XPASS =
 * expected to fail but passed), then the golden baseline when <scene>.golden.json exists.
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
    "  --package-path DIR     search DIR for package:// files (repeatable)\n"
    "Exit status: 0 all checks passed (or failed as expected), 1 a failure or an error, 2 usage.\n";

typedef struct {
  int update_golden, no_golden;
  double golden_rate;
} check_opts;

typedef struct {
  char* path;
  char result[64]; /* result file of its child */
} scene_job;

//---- collecting scene files ----

static int push_path(char*** list, int* n, int* cap, const char* p) {
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
static int collect_dir(const char* dir, char*** list, int* n, int* cap) {
  DIR* d = opendir(dir);
  if (!d) return -1;
  char** names = NULL;
  int nn = 0, nc = 0;
  struct dirent* e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') push_path(&names, &nn, &nc, e->d_name);
  closedir(d);
  if (nn) qsort(names, (size_t)nn, sizeof *names, cmp_str);
  for (int i = 0; i < nn; i++) {
    char p[4096];
    snprintf(p, sizeof p, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]);
    struct stat st;
    if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
      collect_dir(p, list, n, cap);
    else if (is_yaml(names[i]))
      push_path(list, n, cap, p);
    free(names[i]);
  }
  free(names);
  return 0;
}

//---- one scene, in the child ----

// text with tabs and newlines flattened, so a result line stays one line
static void put_field(FILE* f, const char* s) {
  fputc('\t', f);
  for (; s && *s; s++) fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

static void golden_path(const char* scene, char* out, size_t cap) {
  snprintf(out, cap, "%s", scene);
  char* dot = strrchr(out, '.');
  char* slash = strrchr(out, '/');
  if (dot && (!slash || dot > slash) && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml"))) *dot = 0;
  size_t n = strlen(out);
  snprintf(out + n, cap - n, ".golden.json");
}

static const char* stem(const char* path) {
  const char* s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* Result lines: S status name message / C name type passed expect_fail message / G status message,
 * then END. */
static void run_scene(const char* path, const check_opts* o, FILE* out) {
  kn_error err = {0};
  kn_scene* scene = NULL;
  kn_world* w = NULL;
  kn_golden* g = NULL;
  if (kn_scene_load(path, &scene, &err) || kn_world_create(scene, &w, &err)) {
    fprintf(out, "S\terror");
    put_field(out, scene ? scene->name : stem(path));
    put_field(out, err.msg);
    fputs("\nEND\n", out);
    kn_scene_free(scene);
    return;
  }
  int golden = !o->no_golden || o->update_golden;
  if (golden && kn_golden_create(w, o->golden_rate, &g, &err)) golden = 0;
  long total = kn_world_total_steps(w);
  kn_status st = KN_OK;
  char failure[KN_ERROR_MSG] = "";
  for (long n = 1; n <= total && !st; n++) {
    st = kn_world_step(w, &err);
    if (st)
      snprintf(failure, sizeof failure, "%s", err.msg);
    else if (g && kn_golden_record(g, w, &err))
      golden = 0;
  }
  fprintf(out, "S\t%s", st ? "error" : "ok");
  put_field(out, scene->name);
  put_field(out, st ? failure : "");
  fputc('\n', out);
  int nc = 0;
  const kn_check_result* r = kn_world_checks(w, &nc);
  for (int i = 0; i < nc; i++) {
    fputs("C", out);
    put_field(out, r[i].name);
    put_field(out, kn_check_type_name(r[i].type));
    fprintf(out, "\t%d\t%d", r[i].passed, r[i].expect_fail);
    put_field(out, r[i].message);
    fputc('\n', out);
  }
  if (g && golden && !st) {
    char gp[4096];
    golden_path(path, gp, sizeof gp);
    kn_golden_finish(g, w);
    if (o->update_golden) {
      if (kn_golden_write(g, gp, &err)) {
        fputs("G\terror", out);
        put_field(out, err.msg);
      } else {
        fputs("G\tupdated", out);
        char msg[4200];
        snprintf(msg, sizeof msg, "recorded %s (build id %s)", gp, kn_golden_build_id());
        put_field(out, msg);
      }
      fputc('\n', out);
    } else if (access(gp, F_OK) == 0) {
      kn_golden_report rep;
      if (kn_golden_compare(g, gp, &rep, &err)) {
        fputs("G\terror", out);
        put_field(out, err.msg);
      } else {
        fprintf(out, "G\t%s", rep.diverged || (rep.hash_compared && !rep.hash_equal) ? "diverged" : "ok");
        put_field(out, rep.message);
      }
      fputc('\n', out);
    }
  }
  fputs("END\n", out);
  kn_golden_free(g);
  kn_world_free(w);
  kn_scene_free(scene);
}

//---- the report ----

typedef struct {
  int tests, failures, errors, expected, passed;
} counts;

static void xml_text(FILE* f, const char* s) {
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '<') fputs("&lt;", f);
    else if (c == '>') fputs("&gt;", f);
    else if (c == '&') fputs("&amp;", f);
    else if (c == '"') fputs("&quot;", f);
    else if (c == '\'') fputs("&apos;", f);
    else if (c < 0x20 && c != '\n' && c != '\t') fputc(' ', f); /* not allowed in XML 1.0 */
    else fputc(c, f);
  }
}

// split a result line at tabs (in place); returns the field count
static int split(char* line, char** f, int max) {
  int n = 0;
  f[n++] = line;
  for (char* p = line; *p && n < max; p++)
    if (*p == '\t') *p = 0, f[n++] = p + 1;
  return n;
}

/* (result file of scene i) => its report lines on stdout, its <testsuite> in junit (may be NULL)
 * and the totals */
static void report_scene(const scene_job* job, int status, FILE* junit, counts* all) {
  FILE* f = fopen(job->result, "r");
  char line[8192];
  char* fld[8];
  char name[1024];
  snprintf(name, sizeof name, "%s", stem(job->path));
  char* dot = strrchr(name, '.');
  if (dot) *dot = 0;
  /* cases are buffered to write the testsuite's counts first */
  char* cases = NULL;
  size_t ncases = 0;
  FILE* cf = open_memstream(&cases, &ncases);
  counts c = {0};
  int complete = 0;
  printf("%s\n", job->path);
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (!strcmp(line, "END")) {
      complete = 1;
      break;
    }
    int n = split(line, fld, 8);
    if (fld[0][0] == 'S' && n >= 4) {
      snprintf(name, sizeof name, "%s", fld[2]);
      if (!strcmp(fld[1], "error")) {
        printf("  ERROR  %-24s %s\n", "(scene)", fld[3]);
        c.tests++, c.errors++;
        fprintf(cf, "    <testcase classname=\"");
        xml_text(cf, name);
        fprintf(cf, "\" name=\"(scene)\">\n      <error message=\"");
        xml_text(cf, fld[3]);
        fprintf(cf, "\"/>\n    </testcase>\n");
      }
    } else if (fld[0][0] == 'C' && n >= 6) {
      int passed = atoi(fld[3]), xfail = atoi(fld[4]);
      const char* tag = passed ? (xfail ? "XPASS" : "PASS") : (xfail ? "XFAIL" : "FAIL");
      printf("  %-6s %-24s %s: %s%s\n", tag, fld[1], fld[2], fld[5],
             xfail ? (passed ? " (expected to fail, but passed)" : " (expected failure)") : "");
      c.tests++;
      fprintf(cf, "    <testcase classname=\"");
      xml_text(cf, name);
      fprintf(cf, "\" name=\"");
      xml_text(cf, fld[1]);
      if (passed == !xfail) {
        passed ? c.passed++ : c.expected++;
        fprintf(cf, "\">\n      <system-out>");
        if (xfail) fputs("expected failure: ", cf);
        xml_text(cf, fld[5]);
        fprintf(cf, "</system-out>\n    </testcase>\n");
      } else {
        c.failures++;
        fprintf(cf, "\">\n      <failure type=\"%s\" message=\"", fld[2]);
        if (xfail) fputs("expected to fail, but passed: ", cf);
        xml_text(cf, fld[5]);
        fprintf(cf, "\"/>\n    </testcase>\n");
      }
    } else if (fld[0][0] == 'G' && n >= 3) {
      int bad = !strcmp(fld[1], "diverged") || !strcmp(fld[1], "error");
      printf("  %-6s %-24s %s\n", bad ? (strcmp(fld[1], "error") ? "FAIL" : "ERROR") : "PASS", "golden", fld[2]);
      c.tests++;
      fprintf(cf, "    <testcase classname=\"");
      xml_text(cf, name);
      fprintf(cf, "\" name=\"golden\">\n");
      if (bad) {
        strcmp(fld[1], "error") ? c.failures++ : c.errors++;
        fprintf(cf, "      <%s message=\"", strcmp(fld[1], "error") ? "failure" : "error");
        xml_text(cf, fld[2]);
        fprintf(cf, "\"/>\n");
      } else {
        c.passed++;
        fprintf(cf, "      <system-out>");
        xml_text(cf, fld[2]);
        fprintf(cf, "</system-out>\n");
      }
      fprintf(cf, "    </testcase>\n");
    }
  }
  if (f) fclose(f);
  if (!complete) {
    char msg[256];
    if (WIFSIGNALED(status))
      snprintf(msg, sizeof msg, "the scene's process was killed by signal %d (%s)", WTERMSIG(status),
               strsignal(WTERMSIG(status)));
    else
      snprintf(msg, sizeof msg, "the scene's process ended without results (exit status %d)",
               WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    printf("  ERROR  %-24s %s\n", "(scene)", msg);
    c.tests++, c.errors++;
    fprintf(cf, "    <testcase classname=\"");
    xml_text(cf, name);
    fprintf(cf, "\" name=\"(scene)\">\n      <error message=\"%s\"/>\n    </testcase>\n", msg);
  }
  fclose(cf);
  if (junit) {
    fprintf(junit, "  <testsuite name=\"");
    xml_text(junit, name);
    fprintf(junit, "\" file=\"");
    xml_text(junit, job->path);
    fprintf(junit, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"0\">\n", c.tests, c.failures, c.errors);
    fputs(cases ? cases : "", junit);
    fprintf(junit, "  </testsuite>\n");
  }
  free(cases);
  all->tests += c.tests, all->failures += c.failures, all->errors += c.errors, all->expected += c.expected;
  all->passed += c.passed;
}

//---- the command ----

// (job) => a child running it; its pid, or -1
static pid_t start_job(scene_job* job, const check_opts* o) {
  snprintf(job->result, sizeof job->result, "/tmp/knead_check_XXXXXX");
  int fd = mkstemp(job->result);
  if (fd < 0) return -1;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    FILE* out = fdopen(fd, "w");
    if (!out) _exit(3);
    run_scene(job->path, o, out);
    _exit(fclose(out) == 0 ? 0 : 3);
  }
  close(fd);
  return pid;
}

int knead_cmd_check(int argc, char** argv) {
  check_opts o = {.golden_rate = 20};
  const char* junit_path = NULL;
  int jobs = 1;
  char** paths = NULL;
  int npath = 0, cap = 0;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* val = NULL;
    if (!strcmp(a, "-j") || !strcmp(a, "--jobs") || !strcmp(a, "--junit") || !strcmp(a, "--golden-rate") ||
        !strcmp(a, "--package-path")) {
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
        collect_dir(a, &paths, &npath, &cap);
        if (npath == before) knead_error("check: warning: no *.yaml scene under %s", a);
      } else {
        push_path(&paths, &npath, &cap, a);
      }
    }
  }
  if (npath == 0) {
    knead_error("check: which scenes? usage: knead check [OPTIONS] PATH...");
    return 2;
  }
  scene_job* job = calloc((size_t)npath, sizeof *job);
  pid_t* pid = calloc((size_t)npath, sizeof *pid);
  int* status = calloc((size_t)npath, sizeof *status);
  if (!job || !pid || !status) return 1;
  for (int i = 0; i < npath; i++) job[i].path = paths[i];

  /* run: at most `jobs` children at once; results are read in input order afterwards */
  int next = 0, running = 0;
  while (next < npath || running > 0) {
    while (running < jobs && next < npath) {
      pid[next] = start_job(&job[next], &o);
      if (pid[next] < 0) {
        knead_error("check: cannot start a process for %s: %s", job[next].path, strerror(errno));
        status[next] = -1;
      } else {
        running++;
      }
      next++;
    }
    int st;
    pid_t done = wait(&st);
    if (done < 0) break;
    for (int i = 0; i < next; i++)
      if (pid[i] == done) {
        status[i] = st;
        running--;
      }
  }

  FILE* junit = NULL;
  char* suites = NULL;
  size_t nsuites = 0;
  if (junit_path) junit = open_memstream(&suites, &nsuites);
  counts all = {0};
  for (int i = 0; i < npath; i++) {
    report_scene(&job[i], status[i], junit, &all);
    unlink(job[i].result);
  }
  printf("%d scene%s, %d test%s: %d passed, %d expected failure%s, %d failed, %d error%s\n", npath,
         npath == 1 ? "" : "s", all.tests, all.tests == 1 ? "" : "s", all.passed, all.expected,
         all.expected == 1 ? "" : "s", all.failures, all.errors, all.errors == 1 ? "" : "s");
  int code = all.failures || all.errors ? 1 : 0;
  if (junit) {
    fclose(junit);
    FILE* f = fopen(junit_path, "w");
    if (!f) {
      knead_error("check: %s: cannot write: %s", junit_path, strerror(errno));
      code = 1;
    } else {
      fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
      fprintf(f, "<testsuites name=\"knead check\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"0\">\n",
              all.tests, all.failures, all.errors);
      fputs(suites ? suites : "", f);
      fprintf(f, "</testsuites>\n");
      if (fclose(f) != 0) code = 1;
    }
    free(suites);
  }
  for (int i = 0; i < npath; i++) free(paths[i]);
  free(paths);
  free(job);
  free(pid);
  free(status);
  return code;
}
