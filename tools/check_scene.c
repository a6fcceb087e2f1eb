/* `knead check`: one scene, run in its child process. It runs as `knead run` would (its outputs,
 * trajectory.csv and summary.json and whatever its output: section asks, written into a staging
 * folder under the keep folder), evaluates its checks, records or compares its golden baseline,
 * and writes result lines (check.h). When anything failed the staging folder becomes
 * <keep>/<scene> (with run.golden.json, this run's recording, beside the outputs); otherwise it is
 * removed. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tools/check.h"
#include "tools/cli.h"

// text with tabs and newlines flattened, so a result line stays one line
static void put_field(FILE* f, const char* s) {
  fputc('\t', f);
  for (; s && *s; s++) fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

static void put_number(FILE* f, double v) { fprintf(f, "\t%.10g", v); }

static int remove_entry(const char* path, const struct stat* st, int flag, struct FTW* ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

int check_remove_tree(const char* path) {
  struct stat st;
  if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
  return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
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

static kn_status record(void* user, const kn_world* w, kn_error* err) {
  kn_golden* g = user;
  return g ? kn_golden_record(g, w, err) : KN_OK;
}

/* (golden recording after the run) => the G line; returns 1 when it is a failure */
static int golden_line(const char* path, kn_golden* g, const check_opts* o, FILE* out) {
  kn_error err = {0};
  char gp[4096];
  golden_path(path, gp, sizeof gp);
  if (o->update_golden) {
    if (kn_golden_write(g, gp, &err)) {
      fputs("G\terror", out);
      put_field(out, err.msg);
      put_field(out, "");
      fputc('\n', out);
      return 1;
    }
    char msg[4300];
    snprintf(msg, sizeof msg, "recorded %s (build id %s)", gp, kn_build_id());
    fputs("G\tupdated", out);
    put_field(out, msg);
    put_field(out, "");
    fputc('\n', out);
    return 0;
  }
  if (access(gp, F_OK) != 0) return 0;
  kn_golden_report rep;
  if (kn_golden_compare(g, gp, &rep, &err)) {
    fputs("G\terror", out);
    put_field(out, err.msg);
    put_field(out, "");
    fputc('\n', out);
    return 1;
  }
  int hash_fails = o->strict && !rep.hash_equal;
  int bad = rep.diverged || hash_fails;
  char msg[700];
  snprintf(msg, sizeof msg, "%s%s", hash_fails ? "--strict: final state hash differs; " : "", rep.message);
  /* the failure's body: every number behind the verdict */
  char details[1200];
  int k = 0;
  if (rep.diverged && rep.unit[0])
    k += snprintf(details + k, sizeof details - (size_t)k,
                  "quantity: %s\nunit: %s\nt: %.10g s\nvalue: %.10g %s\ngolden: %.10g %s\ndifference: %.6g %s\n"
                  "tolerance: %g %s\n", rep.quantity, rep.unit, rep.t, rep.value, rep.unit, rep.golden, rep.unit,
                  rep.difference, rep.unit, rep.tolerance, rep.unit);
  k += snprintf(details + k, sizeof details - (size_t)k,
                "largest differences: %.6g m, %.6g rad\nfinal state hash: %s (golden %s, %s build id)%s\n"
                "golden file: %s\n", rep.max_difference_m, rep.max_difference_rad, rep.hash, rep.golden_hash,
                rep.same_build ? "same" : "another", hash_fails ? ", a failure with --strict" : "", gp);
  fprintf(out, "G\t%s", bad ? "diverged" : "ok");
  put_field(out, msg);
  /* details keep their newlines as "\n" text: the report turns them back */
  fputc('\t', out);
  for (const char* p = details; *p; p++) {
    if (*p == '\n') fputs("\\n", out);
    else if (*p != '\t' && *p != '\r') fputc(*p, out);
  }
  fputc('\n', out);
  return bad;
}

void check_run_scene(const char* path, const char* keep_name, const check_opts* o, FILE* out) {
  time_t start = time(NULL);
  double wall0 = kn_wall_time();
  kn_error err = {0};
  kn_scene* scene = NULL;
  kn_world* w = NULL;
  kn_golden* g = NULL;
  char stage[4200] = "", kept[4200] = "";
  if (o->keep_dir) {
    snprintf(stage, sizeof stage, "%s/.%s.running", o->keep_dir, keep_name);
    snprintf(kept, sizeof kept, "%s/%s", o->keep_dir, keep_name);
    check_remove_tree(stage);
  }
  if (kn_scene_load_with(path, o->sets, o->nsets, &scene, &err) || kn_world_create(scene, &w, &err) || kn_checks_attach(w, &err)) {
    fprintf(out, "S\terror");
    put_field(out, scene ? scene->name : stem(path));
    put_field(out, err.msg);
    fprintf(out, "\t%lld\t%.3f\nEND\n", (long long)start, kn_wall_time() - wall0);
    kn_world_free(w);
    kn_scene_free(scene);
    return;
  }
  int golden = !o->no_golden || o->update_golden;
  char failure[KN_ERROR_MSG] = "";
  if (golden && kn_golden_create(w, o->golden_rate, &g, &err)) {
    snprintf(failure, sizeof failure, "golden recording: %s", err.msg);
    golden = 0;
  }
  kn_status st = KN_OK;
  if (!failure[0]) {
    /* outputs go to the staging folder; without a keep folder (not writable), to none */
    if (stage[0])
      st = kn_world_run_observed(w, stage, NULL, record, g, NULL, &err);
    else {
      long total = kn_world_total_steps(w);
      for (long n = 1; n <= total && !st; n++)
        if (!(st = kn_world_step(w, &err)) && g) st = kn_golden_record(g, w, &err);
    }
    if (st) snprintf(failure, sizeof failure, "%s", err.msg);
  }
  int failed = failure[0] != 0;
  fprintf(out, "S\t%s", failed ? "error" : "ok");
  put_field(out, scene->name);
  put_field(out, failure);
  fprintf(out, "\t%lld\t%.3f\n", (long long)start, kn_wall_time() - wall0);
  int nc = 0;
  const kn_check_result* r = kn_world_checks(w, &nc);
  for (int i = 0; i < nc; i++) {
    fputs("C", out);
    put_field(out, r[i].name);
    put_field(out, kn_check_type_name(r[i].type));
    fprintf(out, "\t%d\t%d", r[i].passed, r[i].expect_fail);
    put_field(out, r[i].message);
    put_field(out, r[i].unit);
    put_number(out, r[i].measured), put_number(out, r[i].t), put_number(out, r[i].measured2);
    put_number(out, r[i].t2), put_number(out, r[i].lo), put_number(out, r[i].hi);
    fputc('\n', out);
    failed |= r[i].passed == r[i].expect_fail;
  }
  if (!st) fprintf(out, "H\t%016llx\n", (unsigned long long)kn_world_state_hash(w));
  if (g && golden && !st) {
    kn_golden_finish(g, w);
    failed |= golden_line(path, g, o, out);
  }
  if (stage[0]) {
    if (failed) {
      kn_error gerr = {0};
      char gp[4300];
      snprintf(gp, sizeof gp, "%s/run.golden.json", stage);
      if (g && !st) kn_golden_write(g, gp, &gerr);
      check_remove_tree(kept);
      if (rename(stage, kept) == 0) {
        fputs("K", out);
        put_field(out, kept);
        fputc('\n', out);
      }
    } else {
      check_remove_tree(stage);
    }
  }
  fputs("END\n", out);
  kn_golden_free(g);
  kn_world_free(w);
  kn_scene_free(scene);
}
