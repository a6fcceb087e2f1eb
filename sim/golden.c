/* Golden baselines: a run's coordinates sampled at a fixed rate (q of every robot and object, in
 * trajectory.csv's column order, then FEM centroids), its final state hash and the build id,
 * written as a small JSON file and compared later within per-quantity absolute tolerances.
 *
 * File (format "knead-golden-1"):
 *   {"format", "scene", "build_id", "build", "rate", "time_step", "steps", "final_state_hash",
 *    "tolerances": {"default": 1e-6, "<column>": tol, ...}, "columns": [...],
 *    "samples": [[t, q...], ...]}
 * Numbers are written with 17 significant digits, so a file read back is the recorded run bit for
 * bit. Tolerances are absolute, in the column's unit (m, rad, quaternion components); edit the
 * file to widen one quantity.
 *
 * The build id: trajectories are compared on any build, but the final state hash is compared
 * bit for bit only between builds that should round identically. It is the FNV-1a hash of
 * kn_golden_build_string(): the library version, the compiler's version string and the
 * predefined macros that change floating-point code generation (optimization, sanitizers,
 * NDEBUG, FMA / AVX / SSE level, fast-math, architecture). No git state is involved. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

#define GOLDEN_VERSION "0.1.0"
#define GOLDEN_DEFAULT_TOL 1e-6

struct kn_golden {
  char* scene;
  double rate, dt;
  long stride;
  int ncol;
  char** cols;
  long nsample, cap; /* rows of (1 + ncol) doubles */
  double* rows;
  long steps;
  uint64_t hash;
};

//---- build id ----

#define STR2(x) #x
#define STR(x) STR2(x)

const char* kn_golden_build_string(void) {
  return "knead " GOLDEN_VERSION
#ifdef __VERSION__
         "; cc " __VERSION__
#endif
#ifdef __OPTIMIZE__
         "; optimized"
#endif
#ifdef __OPTIMIZE_SIZE__
         "; Os"
#endif
#ifdef NDEBUG
         "; NDEBUG"
#endif
#ifdef __SANITIZE_ADDRESS__
         "; asan"
#endif
#ifdef __FAST_MATH__
         "; fast-math"
#endif
#ifdef __FMA__
         "; fma"
#endif
#ifdef __AVX2__
         "; avx2"
#elif defined(__AVX__)
         "; avx"
#endif
#ifdef __SSE4_2__
         "; sse4.2"
#endif
#ifdef __FLT_EVAL_METHOD__
         "; flt_eval " STR(__FLT_EVAL_METHOD__)
#endif
#if defined(__x86_64__)
         "; x86_64"
#elif defined(__aarch64__)
         "; aarch64"
#endif
      ;
}

const char* kn_golden_build_id(void) {
  static char id[17];
  const char* s = kn_golden_build_string();
  snprintf(id, sizeof id, "%016llx", (unsigned long long)kn_hash_bytes(KN_HASH_SEED, s, strlen(s)));
  return id;
}

//---- recording ----

void kn_golden_free(kn_golden* g) {
  if (!g) return;
  for (int i = 0; i < g->ncol; i++) free(g->cols[i]);
  free(g->cols);
  free(g->rows);
  free(g->scene);
  free(g);
}

kn_status kn_golden_create(const kn_world* w, double rate, kn_golden** out, kn_error* err) {
  if (!(rate > 0) || !isfinite(rate)) return kn_fail(err, KN_ERR_INVALID, "golden: rate must be > 0 Hz (got %g)", rate);
  kn_golden* g = kn_calloc(1, sizeof *g);
  if (!g) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  g->scene = kn_strdup(w->scene->name);
  g->rate = rate;
  g->dt = w->scene->time_step;
  g->stride = lround(1.0 / (rate * g->dt));
  if (g->stride < 1) g->stride = 1;
  int n = 3 * w->nfem;
  for (int i = 0; i < w->nrobot; i++) n += w->robots[i].ncolumn;
  for (int i = 0; i < w->nobject; i++) n += w->objects[i].ncolumn;
  g->cols = kn_calloc((size_t)n, sizeof *g->cols);
  if (!g->cols || !g->scene) {
    kn_golden_free(g);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  for (int i = 0; i < w->nrobot; i++)
    for (int k = 0; k < w->robots[i].ncolumn; k++) g->cols[g->ncol++] = kn_strdup(w->robots[i].columns[k]);
  for (int i = 0; i < w->nobject; i++)
    for (int k = 0; k < w->objects[i].ncolumn; k++) g->cols[g->ncol++] = kn_strdup(w->objects[i].columns[k]);
  static const char* const xyz[] = {"cx", "cy", "cz"};
  for (int i = 0; i < w->nfem; i++)
    for (int k = 0; k < 3; k++) {
      char buf[512];
      snprintf(buf, sizeof buf, "%s/%s", w->fems[i].name, xyz[k]);
      g->cols[g->ncol++] = kn_strdup(buf);
    }
  for (int i = 0; i < g->ncol; i++)
    if (!g->cols[i]) {
      kn_golden_free(g);
      return kn_fail(err, KN_ERR_NOMEM, "out of memory");
    }
  *out = g;
  return kn_golden_record(g, w, err);
}

kn_status kn_golden_record(kn_golden* g, const kn_world* w, kn_error* err) {
  if (w->step % g->stride != 0) return KN_OK;
  if (g->nsample == g->cap) {
    long cap = g->cap ? 2 * g->cap : 64;
    double* r = realloc(g->rows, (size_t)cap * (size_t)(g->ncol + 1) * sizeof *r);
    if (!r) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
    g->rows = r;
    g->cap = cap;
  }
  double* row = g->rows + (size_t)g->nsample * (size_t)(g->ncol + 1);
  int k = 0;
  row[k++] = w->t;
  for (int i = 0; i < w->nrobot; i++) {
    const kn_world_robot* r = &w->robots[i];
    for (int j = 0; j < r->nq; j++) row[k++] = w->trees[r->tree].q[r->q_offset + j];
  }
  for (int i = 0; i < w->nobject; i++) {
    const kn_world_tree* tr = &w->trees[w->objects[i].tree];
    for (int j = 0; j < w->objects[i].ncolumn; j++) row[k++] = tr->q[j];
  }
  for (int i = 0; i < w->nfem; i++) {
    kn_sim_deformable_centroid(&w->fems[i], row + k);
    k += 3;
  }
  g->nsample++;
  return KN_OK;
}

void kn_golden_finish(kn_golden* g, const kn_world* w) {
  g->steps = w->step;
  g->hash = kn_world_state_hash(w);
}

static void json_str(FILE* f, const char* s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

kn_status kn_golden_write(const kn_golden* g, const char* path, kn_error* err) {
  FILE* f = fopen(path, "w");
  if (!f) return kn_fail(err, KN_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  fputs("{\n  \"format\": \"knead-golden-1\",\n  \"scene\": ", f);
  json_str(f, g->scene);
  fprintf(f, ",\n  \"build_id\": \"%s\",\n  \"build\": ", kn_golden_build_id());
  json_str(f, kn_golden_build_string());
  fprintf(f, ",\n  \"rate\": %.17g,\n  \"time_step\": %.17g,\n  \"steps\": %ld,\n  \"final_state_hash\": \"%016llx\"",
          g->rate, g->dt, g->steps, (unsigned long long)g->hash);
  fprintf(f, ",\n  \"tolerances\": {\"default\": %g},\n  \"columns\": [", GOLDEN_DEFAULT_TOL);
  for (int i = 0; i < g->ncol; i++) {
    if (i) fputs(", ", f);
    json_str(f, g->cols[i]);
  }
  fputs("],\n  \"samples\": [", f);
  for (long s = 0; s < g->nsample; s++) {
    const double* row = g->rows + (size_t)s * (size_t)(g->ncol + 1);
    fputs(s ? ",\n    [" : "\n    [", f);
    for (int k = 0; k <= g->ncol; k++) fprintf(f, k ? ", %.17g" : "%.17g", row[k]);
    fputc(']', f);
  }
  fputs(g->nsample ? "\n  ]\n}\n" : "]\n}\n", f);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) return kn_fail(err, KN_ERR_IO, "%s: write error", path);
  return KN_OK;
}

//---- reading: a small JSON reader for the file above ----

typedef struct {
  const char* s;
  const char* path;
  int line;
  kn_error* err;
  kn_status st;
} reader;

static void skip_ws(reader* r) {
  while (*r->s == ' ' || *r->s == '\t' || *r->s == '\n' || *r->s == '\r') {
    if (*r->s == '\n') r->line++;
    r->s++;
  }
}

static int fail_at(reader* r, const char* what) {
  if (!r->st) r->st = kn_fail(r->err, KN_ERR_PARSE, "%s:%d: golden file: expected %s", r->path, r->line, what);
  return 0;
}

static int expect(reader* r, char c) {
  skip_ws(r);
  if (*r->s != c) {
    char what[8] = {'\'', c, '\'', 0};
    return fail_at(r, what);
  }
  r->s++;
  return 1;
}

// "..." => malloc'd text (\" \\ \n \uXXXX below 0x80 decoded)
static char* read_string(reader* r) {
  skip_ws(r);
  if (*r->s != '"') return fail_at(r, "a string"), NULL;
  r->s++;
  size_t n = 0, cap = 64;
  char* out = malloc(cap);
  while (out && *r->s && *r->s != '"') {
    char c = *r->s++;
    if (c == '\\') {
      c = *r->s++;
      if (c == 'n') c = '\n';
      else if (c == 't') c = '\t';
      else if (c == 'u') {
        c = (char)strtol((char[5]){r->s[0], r->s[1], r->s[2], r->s[3], 0}, NULL, 16);
        r->s += 4;
      }
    }
    if (n + 2 > cap) {
      char* o = realloc(out, cap *= 2);
      if (!o) {
        free(out);
        out = NULL;
        break;
      }
      out = o;
    }
    out[n++] = c;
  }
  if (!out) return fail_at(r, "memory"), NULL;
  out[n] = 0;
  if (*r->s != '"') {
    free(out);
    return fail_at(r, "a closing '\"'"), NULL;
  }
  r->s++;
  return out;
}

static int read_number(reader* r, double* v) {
  skip_ws(r);
  if (!strncmp(r->s, "null", 4)) {
    r->s += 4;
    *v = NAN;
    return 1;
  }
  char* end;
  *v = strtod(r->s, &end);
  if (end == r->s) return fail_at(r, "a number");
  r->s = end;
  return 1;
}

// skip any JSON value
static int skip_value(reader* r, int depth) {
  skip_ws(r);
  if (depth > 64) return fail_at(r, "less nesting");
  if (*r->s == '"') {
    char* t = read_string(r);
    free(t);
    return t != NULL;
  }
  if (*r->s == '[' || *r->s == '{') {
    char close = *r->s == '[' ? ']' : '}';
    int obj = *r->s == '{';
    r->s++;
    skip_ws(r);
    if (*r->s == close) return r->s++, 1;
    for (;;) {
      if (obj) {
        char* k = read_string(r);
        free(k);
        if (!k || !expect(r, ':')) return 0;
      }
      if (!skip_value(r, depth + 1)) return 0;
      skip_ws(r);
      if (*r->s == ',') {
        r->s++;
        continue;
      }
      return expect(r, close);
    }
  }
  if (!strncmp(r->s, "true", 4) || !strncmp(r->s, "null", 4)) return r->s += 4, 1;
  if (!strncmp(r->s, "false", 5)) return r->s += 5, 1;
  double v;
  return read_number(r, &v);
}

typedef struct {
  char* build_id;
  char* hash;
  double default_tol;
  int ntol;
  char** tol_names;
  double* tol;
  int ncol;
  char** cols;
  long nsample;
  double** rows;   /* each of length nrow[i] */
  int* nrow;
} golden_file;

static void golden_file_free(golden_file* g) {
  free(g->build_id);
  free(g->hash);
  for (int i = 0; i < g->ntol; i++) free(g->tol_names[i]);
  free(g->tol_names);
  free(g->tol);
  for (int i = 0; i < g->ncol; i++) free(g->cols[i]);
  free(g->cols);
  for (long i = 0; i < g->nsample; i++) free(g->rows[i]);
  free(g->rows);
  free(g->nrow);
}

// [a, b, ...] of strings (strings = 1) or numbers => a malloc'd array
static int read_array(reader* r, int strings, void** out, int* n) {
  if (!expect(r, '[')) return 0;
  int cap = 16, k = 0;
  size_t sz = strings ? sizeof(char*) : sizeof(double);
  char* a = malloc((size_t)cap * sz);
  skip_ws(r);
  if (*r->s == ']') {
    r->s++;
    *out = a, *n = 0;
    return a != NULL;
  }
  while (a) {
    if (k == cap) {
      char* b = realloc(a, (size_t)(cap *= 2) * sz);
      if (!b) break;
      a = b;
    }
    if (strings) {
      char* t = read_string(r);
      if (!t) break;
      ((char**)a)[k++] = t;
    } else if (!read_number(r, (double*)a + k++))
      break;
    skip_ws(r);
    if (*r->s == ',') {
      r->s++;
      continue;
    }
    if (!expect(r, ']')) break;
    *out = a, *n = k;
    return 1;
  }
  if (strings && a)
    for (int i = 0; i < k; i++) free(((char**)a)[i]);
  free(a);
  return fail_at(r, "a list");
}

static int read_golden(reader* r, golden_file* g) {
  g->default_tol = GOLDEN_DEFAULT_TOL;
  if (!expect(r, '{')) return 0;
  for (;;) {
    char* key = read_string(r);
    if (!key || !expect(r, ':')) return free(key), 0;
    int ok = 1;
    if (!strcmp(key, "build_id"))
      ok = (g->build_id = read_string(r)) != NULL;
    else if (!strcmp(key, "final_state_hash"))
      ok = (g->hash = read_string(r)) != NULL;
    else if (!strcmp(key, "columns"))
      ok = read_array(r, 1, (void**)&g->cols, &g->ncol);
    else if (!strcmp(key, "tolerances")) {
      ok = expect(r, '{');
      skip_ws(r);
      if (ok && *r->s == '}') r->s++;
      else
        while (ok) {
          char* name = read_string(r);
          double v = 0;
          ok = name && expect(r, ':') && read_number(r, &v);
          if (ok && !strcmp(name, "default")) {
            g->default_tol = v;
            free(name);
          } else if (ok) {
            char** nn = realloc(g->tol_names, (size_t)(g->ntol + 1) * sizeof *nn);
            double* nt = nn ? realloc(g->tol, (size_t)(g->ntol + 1) * sizeof *nt) : NULL;
            if (nn) g->tol_names = nn;
            if (nt) g->tol = nt;
            if (!nn || !nt) {
              free(name);
              ok = fail_at(r, "memory");
              break;
            }
            g->tol_names[g->ntol] = name;
            g->tol[g->ntol++] = v;
          } else {
            free(name);
            break;
          }
          skip_ws(r);
          if (*r->s == ',') {
            r->s++;
            continue;
          }
          ok = expect(r, '}');
          break;
        }
    } else if (!strcmp(key, "samples")) {
      ok = expect(r, '[');
      skip_ws(r);
      if (ok && *r->s == ']') r->s++;
      else
        while (ok) {
          double* row = NULL;
          int n = 0;
          if (!(ok = read_array(r, 0, (void**)&row, &n))) break;
          double** nr = realloc(g->rows, (size_t)(g->nsample + 1) * sizeof *nr);
          int* nn = nr ? realloc(g->nrow, (size_t)(g->nsample + 1) * sizeof *nn) : NULL;
          if (nr) g->rows = nr;
          if (nn) g->nrow = nn;
          if (!nr || !nn) {
            free(row);
            ok = fail_at(r, "memory");
            break;
          }
          g->rows[g->nsample] = row;
          g->nrow[g->nsample++] = n;
          skip_ws(r);
          if (*r->s == ',') {
            r->s++;
            continue;
          }
          ok = expect(r, ']');
          break;
        }
    } else
      ok = skip_value(r, 0);
    free(key);
    if (!ok) return 0;
    skip_ws(r);
    if (*r->s == ',') {
      r->s++;
      continue;
    }
    return expect(r, '}');
  }
}

static char* slurp(const char* path, kn_error* err) {
  FILE* f = fopen(path, "rb");
  if (!f) return kn_fail(err, KN_ERR_IO, "%s: cannot read the golden file: %s", path, strerror(errno)), NULL;
  size_t n = 0, cap = 1 << 16;
  char* buf = malloc(cap);
  for (size_t got; buf; n += got) {
    if (n + 1 >= cap) {
      char* b = realloc(buf, cap *= 2);
      if (!b) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = b;
    }
    got = fread(buf + n, 1, cap - n - 1, f);
    if (got == 0) break;
  }
  fclose(f);
  if (!buf) return kn_fail(err, KN_ERR_NOMEM, "out of memory"), NULL;
  buf[n] = 0;
  return buf;
}

kn_status kn_golden_compare(const kn_golden* g, const char* path, kn_golden_report* rep, kn_error* err) {
  memset(rep, 0, sizeof *rep);
  rep->t = -1;
  char* text = slurp(path, err);
  if (!text) return err ? err->status : KN_ERR_IO;
  golden_file gf = {0};
  reader r = {.s = text, .path = path, .line = 1, .err = err};
  read_golden(&r, &gf);
  free(text);
  kn_status st = r.st;
  if (!st && gf.ncol != g->ncol)
    st = kn_fail(err, KN_ERR_INVALID, "%s: the golden file has %d quantities, this run %d (re-record with "
                 "--update-golden when the scene's bodies changed)", path, gf.ncol, g->ncol);
  for (int i = 0; !st && i < g->ncol; i++)
    if (strcmp(gf.cols[i], g->cols[i]) != 0)
      st = kn_fail(err, KN_ERR_INVALID, "%s: quantity %d is '%s' in the golden file, '%s' in this run", path, i + 1,
                   gf.cols[i], g->cols[i]);
  if (st) {
    golden_file_free(&gf);
    return st;
  }
  /* first sample (in time) with a quantity out of tolerance */
  long n = gf.nsample < g->nsample ? gf.nsample : g->nsample;
  for (long s = 0; s < n && !rep->diverged; s++) {
    const double* a = g->rows + (size_t)s * (size_t)(g->ncol + 1);
    const double* b = gf.rows[s];
    if (gf.nrow[s] != g->ncol + 1 || fabs(a[0] - b[0]) > 1e-9 * (1 + fabs(a[0]))) {
      rep->diverged = 1;
      rep->t = a[0];
      snprintf(rep->quantity, sizeof rep->quantity, "t");
      rep->value = a[0];
      rep->golden = b[0];
      break;
    }
    for (int k = 0; k < g->ncol; k++) {
      double tol = gf.default_tol;
      for (int j = 0; j < gf.ntol; j++)
        if (!strcmp(gf.tol_names[j], g->cols[k])) tol = gf.tol[j];
      double d = fabs(a[k + 1] - b[k + 1]);
      if (d > tol || (isnan(a[k + 1]) != isnan(b[k + 1]))) {
        rep->diverged = 1;
        rep->t = a[0];
        snprintf(rep->quantity, sizeof rep->quantity, "%s", g->cols[k]);
        rep->value = a[k + 1];
        rep->golden = b[k + 1];
        rep->tolerance = tol;
        break;
      }
    }
  }
  if (rep->diverged && strcmp(rep->quantity, "t") != 0)
    snprintf(rep->message, sizeof rep->message, "%s diverged at t = %g s: %.10g, golden %.10g (|difference| %.3g > "
             "tolerance %g)", rep->quantity, rep->t, rep->value, rep->golden, fabs(rep->value - rep->golden),
             rep->tolerance);
  else if (rep->diverged)
    snprintf(rep->message, sizeof rep->message, "sample times differ at t = %g s (golden %g s): re-record with "
             "--update-golden", rep->value, rep->golden);
  else if (gf.nsample != g->nsample) {
    rep->diverged = 1;
    rep->t = n > 0 ? gf.rows[n - 1][0] : 0;
    snprintf(rep->quantity, sizeof rep->quantity, "samples");
    snprintf(rep->message, sizeof rep->message, "this run has %ld samples, the golden file %ld (equal up to t = %g s)",
             g->nsample, gf.nsample, rep->t);
  }
  char hash[17];
  snprintf(hash, sizeof hash, "%016llx", (unsigned long long)g->hash);
  rep->hash_compared = gf.build_id && !strcmp(gf.build_id, kn_golden_build_id());
  rep->hash_equal = rep->hash_compared && gf.hash && !strcmp(gf.hash, hash);
  size_t k = strlen(rep->message);
  if (!rep->diverged)
    k += (size_t)snprintf(rep->message + k, sizeof rep->message - k, "%ld samples x %d quantities within tolerance",
                          n, g->ncol);
  if (k < sizeof rep->message)
    snprintf(rep->message + k, sizeof rep->message - k, "; final state hash %s",
             !rep->hash_compared ? "skipped (another build id)"
             : rep->hash_equal   ? "equal"
                                 : "DIFFERS");
  golden_file_free(&gf);
  return KN_OK;
}
