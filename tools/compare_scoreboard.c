/* `knead compare ... --scoreboard FILE`: the physical-fidelity scoreboard (bench/SCOREBOARD.md,
 * issue 22), made from the compare.json the command has just written and, with --mujoco, the
 * MuJoCo figures knead-bench --fidelity wrote for the same scenes.
 *
 * FILE: a header naming the machine (CPU model from /proc/cpuinfo, online cores), the date (UTC)
 * and the build; one row per scene, one column per backend that ran at least one scene (plus
 * MuJoCo's), each cell listing every check with its verdict (pass, **FAIL**, XFAIL, XPASS) and its
 * measured value (for follows_curve the error against the analytic curve) with its unit, then the
 * wall time per step and its ratio to SAP's in the same run; backends that ran no scene (refused
 * everywhere) listed once under the table with the reason; a totals line of the checks expected
 * to pass that passed per column. The generated part ends with the line `<!-- notes -->`; when
 * FILE exists, everything after that line in it (hand-written notes) is kept.
 *
 * The MuJoCo file (format knead-bench-fidelity-1, bench/main.c):
 *   {"format", "mujoco_version", "scenes": [{"name", "status": "ok" | "not_built", "message",
 *    "us_per_step", "checks": [{"name", "passed", "expect", "measured", "unit"} or
 *    {"name", "not_measured": true}]}]}   ("failed": MuJoCo diverged; not_measured: a check of
 *    knead's contact forces or solver)
 * A scene it lacks, or has as not_built, gets "not built in MuJoCo: why" in its cell. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/check.h"
#include "tools/cli.h"

#define NOTES_MARKER "<!-- notes -->"

// the CPU model name from /proc/cpuinfo, or "unknown CPU"
static void cpu_model(char* buf, size_t n) {
  snprintf(buf, n, "unknown CPU");
  FILE* f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
      char* v = strchr(line, ':') + 1;
      while (*v == ' ' || *v == '\t') v++;
      v[strcspn(v, "\n")] = 0;
      snprintf(buf, n, "%s", v);
      break;
    }
  fclose(f);
}

// (FILE) => everything after its NOTES_MARKER line (malloc'd), or NULL (no file, no marker)
static char* kept_notes(const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) return NULL;
  char* line = NULL;
  size_t cap = 0, len = 0;
  char* notes = NULL;
  FILE* m = NULL;
  while (getline(&line, &cap, f) > 0) {
    if (m) {
      fputs(line, m);
      continue;
    }
    char* end = line + strcspn(line, "\r\n");
    *end = 0;
    if (!strcmp(line, NOTES_MARKER)) m = open_memstream(&notes, &len);
  }
  free(line);
  fclose(f);
  if (m) fclose(m);
  return notes;
}

// a cell's text with '|' (the table's separator) and newlines made harmless
static void put_cell_text(FILE* f, const char* s, size_t max) {
  for (size_t i = 0; s && s[i] && i < max; i++) fputc(s[i] == '|' ? '/' : s[i] == '\n' ? ' ' : s[i], f);
}

static const char* str(json_t* o, const char* key) {
  const char* s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

static double real(json_t* o, const char* key) {
  json_t* v = json_object_get(o, key);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

// one check "name verdict (measured unit)"; counts an expected pass into tot[0]/tot[1]
static void put_check(FILE* f, json_t* k, int first, int tot[2]) {
  if (json_is_true(json_object_get(k, "not_measured"))) { /* MuJoCo: the check reads knead's contact forces */
    fprintf(f, "%s%s not measured", first ? "" : "; ", str(k, "name"));
    return;
  }
  int passed = json_is_true(json_object_get(k, "passed"));
  int xfail = !strcmp(str(k, "expect"), "fail");
  const char* tag = xfail ? (passed ? "XPASS" : "XFAIL") : (passed ? "pass" : "**FAIL**");
  fprintf(f, "%s%s %s", first ? "" : "; ", str(k, "name"), tag);
  double m = real(k, "measured");
  if (isfinite(m))
    fprintf(f, " (%.4g %s)", m, str(k, "unit"));
  else
    fprintf(f, " (nothing measured)");
  if (!xfail) tot[0] += passed, tot[1]++;
}

// the scene named name in a MuJoCo file's scenes, or NULL
static json_t* mujoco_scene(json_t* mj, const char* name) {
  size_t i;
  json_t* s;
  json_array_foreach(json_object_get(mj, "scenes"), i, s) if (!strcmp(str(s, "name"), name)) return s;
  return NULL;
}

int compare_write_scoreboard(const char* compare_json, const char* mujoco_json, const char* path) {
  json_error_t e;
  json_t* d = json_load_file(compare_json, 0, &e);
  if (!d) {
    knead_error("compare: --scoreboard: %s:%d: %s", compare_json, e.line, e.text);
    return -1;
  }
  json_t* mj = NULL;
  if (mujoco_json) {
    mj = json_load_file(mujoco_json, 0, &e);
    if (!mj || strcmp(str(mj, "format"), "knead-bench-fidelity-1") != 0) {
      knead_error("compare: --mujoco %s: %s", mujoco_json,
                  mj ? "format: expected \"knead-bench-fidelity-1\" (knead-bench --fidelity FILE)" : e.text);
      json_decref(mj), json_decref(d);
      return -1;
    }
  }
  json_t* scenes = json_object_get(d, "scenes");
  json_t* backends = json_object_get(d, "backends");
  size_t nb = json_array_size(backends), is, ir, ik;
  json_t *s, *r, *k;
  /* the columns: backends that ran (ok or failed) at least one scene */
  int* column = calloc(nb + 1, sizeof *column);
  int(*tot)[2] = calloc(nb + 2, sizeof *tot);
  if (!column || !tot) {
    free(column), free(tot), json_decref(mj), json_decref(d);
    return -1;
  }
  for (size_t b = 0; b < nb; b++) {
    const char* name = json_string_value(json_array_get(backends, b));
    json_array_foreach(scenes, is, s) json_array_foreach(json_object_get(s, "runs"), ir, r) {
      const char* st = str(r, "status");
      if (!strcmp(str(r, "backend"), name) && (!strcmp(st, "ok") || !strcmp(st, "failed"))) column[b] = 1;
    }
  }
  char* notes = kept_notes(path);
  FILE* f = fopen(path, "w");
  if (!f) {
    knead_error("compare: --scoreboard %s: cannot write: %s", path, strerror(errno));
    free(notes), free(column), free(tot), json_decref(mj), json_decref(d);
    return -1;
  }
  char cpu[256], date[32];
  cpu_model(cpu, sizeof cpu);
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  fprintf(f, "# Physical-fidelity scoreboard (issue 22)\n\n");
  fprintf(f, "Written by `knead compare --scoreboard` on %s, %ld core%s, %s, build %s.\n", cpu, cores,
          cores == 1 ? "" : "s", date, str(d, "build"));
  fprintf(f, "Every scene runs with each backend's defaults at the scene's dt (0.01, or the finer dt its case is "
             "about); the analytic answer and its source are in each scene file and in examples/fidelity/README.md. "
             "Cells: each check against the analytic answer (pass, **FAIL**; XFAIL: an expected failure, explained "
             "in the scene; XPASS: a backend meeting what the scene expects to fail) with its measured value (for "
             "a follows_curve check the largest error against the curve), then the wall time per step and its ratio "
             "to SAP's in the same run.");
  if (mj)
    fprintf(f, " MuJoCo %s: the same scene built from knead's world as MJCF (bench/mujoco_contact.c; MuJoCo's "
               "default contact parameters, the scene's friction and dt, implicit integrator), stepped with "
               "mj_step by `knead-bench --fidelity`, its state judged by the same checks after every step; its time "
               "is the median mj_step time of that separate run, its ratio against SAP's mean in this one; \"not "
               "measured\": a check of knead's contact forces.",
            str(mj, "mujoco_version"));
  fprintf(f, "\n\nRegenerate: examples/fidelity/README.md (\"Regenerate the scoreboard\").");
  fprintf(f, "\n\n| scene |");
  for (size_t b = 0; b < nb; b++)
    if (column[b]) fprintf(f, " %s |", json_string_value(json_array_get(backends, b)));
  if (mj) fprintf(f, " MuJoCo %s |", str(mj, "mujoco_version"));
  fprintf(f, "\n|---|");
  for (size_t b = 0; b < nb; b++)
    if (column[b]) fprintf(f, "---|");
  if (mj) fprintf(f, "---|");
  fputc('\n', f);
  json_array_foreach(scenes, is, s) {
    fprintf(f, "| %s |", str(s, "name"));
    double sap = NAN;
    json_array_foreach(json_object_get(s, "runs"), ir, r) {
      if (!strcmp(str(r, "backend"), "sap") && !strcmp(str(r, "status"), "ok")) sap = real(r, "wall_per_step");
    }
    for (size_t b = 0; b < nb; b++) {
      if (!column[b]) continue;
      const char* name = json_string_value(json_array_get(backends, b));
      json_t* run = NULL;
      json_array_foreach(json_object_get(s, "runs"), ir, r) if (!strcmp(str(r, "backend"), name)) run = r;
      fputc(' ', f);
      if (!run) {
        fprintf(f, "not run |");
        continue;
      }
      if (strcmp(str(run, "status"), "ok") != 0) {
        fprintf(f, "%s: ", str(run, "status"));
        put_cell_text(f, str(run, "message"), 160);
      }
      int first = strcmp(str(run, "status"), "ok") != 0 ? 0 : 1;
      json_array_foreach(json_object_get(run, "checks"), ik, k) put_check(f, k, first, tot[b]), first = 0;
      double w = real(run, "wall_per_step");
      if (isfinite(w)) {
        fprintf(f, "; %.3g ms/step", 1e3 * w);
        if (strcmp(name, "sap") != 0 && isfinite(sap) && sap > 0) fprintf(f, ", %.2gx SAP", w / sap);
      }
      fprintf(f, " |");
    }
    if (mj) {
      json_t* m = mujoco_scene(mj, str(s, "name"));
      fputc(' ', f);
      if (!m || strcmp(str(m, "status"), "ok") != 0) {
        fprintf(f, "%s: ", m && !strcmp(str(m, "status"), "failed") ? "MuJoCo failed" : "not built in MuJoCo");
        put_cell_text(f, m ? str(m, "message") : "not in the MuJoCo file", 200);
      } else {
        int first = 1;
        json_array_foreach(json_object_get(m, "checks"), ik, k) put_check(f, k, first, tot[nb]), first = 0;
        double us = real(m, "us_per_step");
        if (isfinite(us)) {
          fprintf(f, "; %.3g ms/step", 1e-3 * us);
          if (isfinite(sap) && sap > 0) fprintf(f, ", %.2gx SAP", 1e-6 * us / sap);
        }
      }
      fprintf(f, " |");
    }
    fputc('\n', f);
  }
  /* backends that ran no scene: once, with the first reason */
  int any_refused = 0;
  for (size_t b = 0; b < nb; b++) {
    if (column[b]) continue;
    const char* name = json_string_value(json_array_get(backends, b));
    const char *status = "not run", *why = "";
    json_array_foreach(scenes, is, s) {
      json_array_foreach(json_object_get(s, "runs"), ir, r) {
        if (!strcmp(str(r, "backend"), name) && !why[0]) status = str(r, "status"), why = str(r, "message");
      }
    }
    fprintf(f, "%s- **%s**: %s on every scene", any_refused ? "" : "\nNot in the table:\n\n", name, status);
    if (why[0]) {
      fprintf(f, " (e.g. ");
      put_cell_text(f, why, 300);
      fprintf(f, ")");
    }
    fprintf(f, ".\n");
    any_refused = 1;
  }
  fprintf(f, "\nChecks expected to pass that passed:");
  int first = 1;
  for (size_t b = 0; b < nb; b++)
    if (column[b])
      fprintf(f, "%s %s %d/%d", first ? "" : ",", json_string_value(json_array_get(backends, b)), tot[b][0],
              tot[b][1]),
          first = 0;
  if (mj) fprintf(f, "%s MuJoCo %d/%d (of the checks it could measure)", first ? "" : ",", tot[nb][0], tot[nb][1]);
  fprintf(f, ".\n\n%s\n", NOTES_MARKER);
  if (notes) fputs(notes, f);
  int bad = ferror(f);
  bad |= fclose(f) != 0;
  if (bad) knead_error("compare: --scoreboard %s: cannot write", path);
  free(notes), free(column), free(tot), json_decref(mj), json_decref(d);
  return bad ? -1 : 0;
}
