/* Trajectory knots from a CSV file: optional header `t,<joint names...>`, rows `t,q1,...,qn`. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/controllers.h"

/* Split `line` in place at commas into at most maxf trimmed fields; returns the field count
 * (which may exceed maxf: only the first maxf are stored). */
static int split_fields(char* line, char** fields, int maxf) {
  int nf = 0;
  char* p = line;
  for (;;) {
    char* comma = strchr(p, ',');
    if (comma) *comma = '\0';
    while (isspace((unsigned char)*p)) ++p;
    char* end = p + strlen(p);
    while (end > p && isspace((unsigned char)end[-1])) *--end = '\0';
    if (nf < maxf) fields[nf] = p;
    ++nf;
    if (!comma) break;
    p = comma + 1;
  }
  return nf;
}

/* count the comma-separated fields of a line without modifying it */
static int count_fields(const char* line) {
  int nf = 1;
  for (const char* p = line; *p; ++p) nf += (*p == ',');
  return nf;
}

/* 1 when s is a complete finite number (strtod, surrounding blanks already trimmed) */
static int parse_number(const char* s, double* x) {
  if (!*s) return 0;
  char* end = NULL;
  errno = 0;
  double val = strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(val)) return 0;
  *x = val;
  return 1;
}

/* 1 when the line carries no data: blank, or a '#' comment */
static int skip_line(const char* line) {
  while (isspace((unsigned char)*line)) ++line;
  return *line == '\0' || *line == '#';
}

typedef struct {
  char* line;
  size_t cap;
  char** fields;
  char** names;
  double* t;
  double* q;
  int n, nknot, knot_cap, have_header;
} csv_state;

static void csv_state_free(csv_state* s) {
  if (s->names)
    for (int j = 0; j < s->n; ++j) free(s->names[j]);
  free(s->names);
  free(s->line);
  free(s->fields);
  free(s->t);
  free(s->q);
}

static int grow_knots(csv_state* s) {
  if (s->nknot < s->knot_cap) return 1;
  int cap = s->knot_cap ? 2 * s->knot_cap : 64;
  double* t = realloc(s->t, (size_t)cap * sizeof(double));
  if (!t) return 0;
  s->t = t;
  double* q = realloc(s->q, (size_t)cap * (size_t)s->n * sizeof(double));
  if (!q) return 0;
  s->q = q;
  s->knot_cap = cap;
  return 1;
}

/* The first data-bearing line fixes the column count; it is a header when its first field is
 * not a number, and then must read `t` or `time`. */
static kn_status first_line(csv_state* s, const char* path, int lineno, kn_error* err) {
  int nf = count_fields(s->line);
  if (nf < 2)
    return kn_fail(err, KN_ERR_PARSE, "%s:%d: expected at least 2 columns `t,q1,...`, got %d", path, lineno, nf);
  s->n = nf - 1;
  s->fields = kn_calloc((size_t)nf, sizeof(char*));
  if (!s->fields) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
  char* copy = kn_strdup(s->line);
  if (!copy) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
  split_fields(copy, s->fields, nf);
  double x;
  kn_status st = KN_OK;
  if (!parse_number(s->fields[0], &x)) {
    if (strcmp(s->fields[0], "t") != 0 && strcmp(s->fields[0], "time") != 0) {
      st = kn_fail(err, KN_ERR_PARSE,
                   "%s:%d: first column is '%s': expected a header `t,<joint names...>` or a row of numbers "
                   "`t,q1,...,qn`",
                   path, lineno, s->fields[0]);
    } else {
      s->have_header = 1;
      s->names = kn_calloc((size_t)s->n, sizeof(char*));
      if (!s->names) st = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
      for (int j = 0; st == KN_OK && j < s->n; ++j) {
        if (!s->fields[j + 1][0]) {
          st = kn_fail(err, KN_ERR_PARSE, "%s:%d: header column %d is empty: expected a joint name", path, lineno,
                       j + 2);
          break;
        }
        s->names[j] = kn_strdup(s->fields[j + 1]);
        if (!s->names[j]) st = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
      }
    }
  }
  free(copy);
  return st;
}

/* one row `t,q1,...,qn` appended as a knot, checked for column count, numbers, increasing time */
static kn_status data_line(csv_state* s, const char* path, int lineno, int* prev_line, kn_error* err) {
  int nf = split_fields(s->line, s->fields, s->n + 1);
  if (nf != s->n + 1)
    return kn_fail(err, KN_ERR_PARSE, "%s:%d: expected %d columns (t and %d joint%s), got %d", path, lineno,
                   s->n + 1, s->n, s->n == 1 ? "" : "s", nf);
  if (!grow_knots(s)) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
  double* q = s->q + (size_t)s->nknot * (size_t)s->n;
  double t;
  if (!parse_number(s->fields[0], &t))
    return kn_fail(err, KN_ERR_PARSE, "%s:%d: column 1 (t) is '%s': expected a finite number", path, lineno,
                   s->fields[0]);
  for (int j = 0; j < s->n; ++j) {
    if (!parse_number(s->fields[j + 1], &q[j])) {
      if (s->names)
        return kn_fail(err, KN_ERR_PARSE, "%s:%d: column %d (%s) is '%s': expected a finite number", path, lineno,
                       j + 2, s->names[j], s->fields[j + 1]);
      return kn_fail(err, KN_ERR_PARSE, "%s:%d: column %d is '%s': expected a finite number", path, lineno, j + 2,
                     s->fields[j + 1]);
    }
  }
  if (s->nknot > 0 && !(t > s->t[s->nknot - 1]))
    return kn_fail(err, KN_ERR_PARSE,
                   "%s:%d: time %g is not greater than %g on line %d: expected strictly increasing times", path,
                   lineno, t, s->t[s->nknot - 1], *prev_line);
  s->t[s->nknot++] = t;
  *prev_line = lineno;
  return KN_OK;
}

// (CSV path, interp) => *out; err names file:line and what was expected
kn_status kn_traj_load_csv(const char* path, kn_traj_interp interp, kn_trajectory** out, kn_error* err) {
  if (kn_file_check(path, "trajectory CSV", err)) return KN_ERR_IO;
  FILE* f = fopen(path, "r");
  if (!f) return kn_fail(err, KN_ERR_IO, "%s: cannot open trajectory CSV: %s", path, strerror(errno));
  csv_state s = {0};
  kn_status st = KN_OK;
  int lineno = 0, prev_line = 0, started = 0;
  ssize_t len;
  while (st == KN_OK && (len = getline(&s.line, &s.cap, f)) >= 0) {
    ++lineno;
    while (len > 0 && (s.line[len - 1] == '\n' || s.line[len - 1] == '\r')) s.line[--len] = '\0';
    if (skip_line(s.line)) continue;
    if (!started) {
      started = 1;
      st = first_line(&s, path, lineno, err);
      if (st != KN_OK || s.have_header) continue;
    }
    st = data_line(&s, path, lineno, &prev_line, err);
  }
  if (st == KN_OK && ferror(f)) st = kn_fail(err, KN_ERR_IO, "%s: read error after line %d", path, lineno);
  fclose(f);
  if (st == KN_OK && s.nknot == 0)
    st = kn_fail(err, KN_ERR_PARSE, "%s: no knots: expected at least one row `t,q1,...,qn`", path);
  if (st == KN_OK) {
    st = kn_traj_create(s.n, s.nknot, s.t, s.q, (const char* const*)s.names, interp, out, err);
    if (st != KN_OK) kn_error_prefix(err, "%s: ", path);
  }
  csv_state_free(&s);
  return st;
}
