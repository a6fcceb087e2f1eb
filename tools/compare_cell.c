/* `knead compare`: a cell read back from its child's result file (the lines compare_scene.c
 * writes), judged, and compared with an earlier compare.json (--baseline). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/cli.h"
#include "tools/compare.h"

static char* dup_or_empty(const char* s) { return strdup(s ? s : ""); }

static double number(const char* s) { return s ? strtod(s, NULL) : NAN; }

// (job's result file, the child's wait status) => the cell
void compare_read_cell(const scene_job* job, int status, cell* c) {
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

void compare_free_cell(cell* c) {
  for (int i = 0; i < c->nchecks; i++)
    free(c->checks[i].name), free(c->checks[i].type), free(c->checks[i].unit), free(c->checks[i].message);
  for (int i = 0; i < c->nnames; i++) free(c->names[i]);
  free(c->checks), free(c->names), free(c->data), free(c->scene), free(c->message), free(c->replay);
}

int compare_column_of(const cell* c, const char* name) {
  for (int i = 0; i < c->nnames; i++)
    if (!strcmp(c->names[i], name)) return i;
  return -1;
}

const char* compare_verdict(const cell_check* k) {
  if (k->expect_fail) return k->passed ? "XPASS" : "XFAIL";
  return k->passed ? "PASS" : "FAIL";
}

// (cell) => "ok", or "refused: why" and friends, one line for tables
void compare_status_text(const cell* c, char* out, size_t cap) {
  if (!strcmp(c->status, "ok"))
    snprintf(out, cap, "ok");
  else
    snprintf(out, cap, "%s: %s", c->status, c->message ? c->message : "");
}

// (baseline compare.json, this run) => every check that passed in the baseline and does not now
// (failing, or no longer measured: the scene or backend refused or failed), printed; the number of
// such regressions, or -1 when the baseline cannot be read. Scenes match by name, runs by backend,
// checks by name; cells the baseline lacks (a new backend, a new scene) are new, not compared.
int compare_against_baseline(const char* file, const scene_row* rows, int nrow, const char* const* backends, int nb) {
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
