/* Golden baselines: a run's coordinates sampled at a fixed rate (q of every robot and object, in
 * trajectory.csv's column order, then FEM and MPM centroids), its final state hash and the build,
 * written as JSON (jansson) and compared later within physical tolerances.
 *
 * File (format "knead-golden-2"):
 *   {"format", "scene", "knead_version", "git_revision", "build_id", "build", "rate", "time_step",
 *    "steps", "final_state_hash",
 *    "tolerances": {"m": 1e-4, "rad": 1e-3},  per unit
 *    "tolerance_overrides": {"<quantity>": tol, ...},  optional, in the quantity's unit
 *    "columns": [...], "units": ["rad" | "m" | "quaternion", ...], "samples": [[t, q...], ...]}
 * Numbers are written with 17 significant digits, so a file read back is the recorded run bit for
 * bit. The quantities compared are the columns in m or rad, and each free body's orientation: its
 * four "quaternion" columns compared as the angle between the two rotations, in rad, named
 * "<body>/orientation".
 *
 * Why these tolerances: check/check.h (KN_GOLDEN_TOL_M, KN_GOLDEN_TOL_RAD). A baseline must pass on another
 * machine, compiler or BLAS kernel, where round-off differs from the first step and SAP stops at
 * its own relative tolerance, and fail on any change a user would see.
 *
 * The final state hash (FNV-1a over every state's bits) is recorded and reported, equal or not, but
 * a difference fails only `knead check --strict`: bitwise equality holds only for the same build
 * on the same BLAS kernels. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"

struct kn_golden {
  char* scene;
  double rate, dt;
  long stride;
  int ncol;
  char** cols;
  const char** units; /* static strings: KN_GOLDEN_UNIT_* */
  long nsample, cap;  /* rows of (1 + ncol) doubles */
  double* rows;
  long steps;
  uint64_t hash;
};

static const char UNIT_M[] = "m", UNIT_RAD[] = "rad", UNIT_QUAT[] = "quaternion";

//---- recording ----

void kn_golden_free(kn_golden* g) {
  if (!g) return;
  for (int i = 0; i < g->ncol; i++) free(g->cols[i]);
  free(g->cols);
  free(g->units);
  free(g->rows);
  free(g->scene);
  free(g);
}

// (model, coordinate index) => its unit: revolute angles rad, prismatic and positions m, a floating
// joint's quaternion "quaternion"
static const char* unit_of(const kn_mb_model* m, int qi) {
  for (int b = 0; b < m->nbody; b++) {
    const kn_mb_body* body = &m->bodies[b];
    int k = qi - body->q_adr;
    if (k < 0 || k >= body->nq) continue;
    switch (body->jtype) {
      case KN_JOINT_PRISMATIC: return UNIT_M;
      case KN_JOINT_PLANAR: return k < 2 ? UNIT_M : UNIT_RAD;
      case KN_JOINT_FLOATING: return k < 3 ? UNIT_M : UNIT_QUAT;
      default: return UNIT_RAD;
    }
  }
  return UNIT_RAD;
}

// (name, "cx") => malloc'd "name/cx"
static char* centroid_column(const char* name, const char* xyz) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s/%s", name, xyz);
  return kn_strdup(buf);
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
  int n = 3 * (w->nfem + w->nmpm);
  for (int i = 0; i < w->nrobot; i++) n += w->robots[i].ncolumn;
  for (int i = 0; i < w->nobject; i++) n += w->objects[i].ncolumn;
  g->cols = kn_calloc((size_t)n + 1, sizeof *g->cols);
  g->units = kn_calloc((size_t)n + 1, sizeof *g->units);
  if (!g->cols || !g->units || !g->scene) {
    kn_golden_free(g);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  for (int i = 0; i < w->nrobot; i++) {
    const kn_world_robot* r = &w->robots[i];
    const kn_mb_model* m = w->trees[r->tree].robot->model;
    for (int k = 0; k < r->ncolumn; k++) {
      g->units[g->ncol] = unit_of(m, r->q_offset + k);
      g->cols[g->ncol++] = kn_strdup(r->columns[k]);
    }
  }
  for (int i = 0; i < w->nobject; i++) {
    const kn_mb_model* m = w->trees[w->objects[i].tree].robot->model;
    for (int k = 0; k < w->objects[i].ncolumn; k++) {
      g->units[g->ncol] = unit_of(m, k);
      g->cols[g->ncol++] = kn_strdup(w->objects[i].columns[k]);
    }
  }
  static const char* const xyz[] = {"cx", "cy", "cz"};
  for (int i = 0; i < w->nfem; i++)
    for (int k = 0; k < 3; k++) {
      g->units[g->ncol] = UNIT_M;
      g->cols[g->ncol++] = centroid_column(w->fems[i].name, xyz[k]);
    }
  for (int i = 0; i < w->nmpm; i++)
    for (int k = 0; k < 3; k++) {
      g->units[g->ncol] = UNIT_M;
      g->cols[g->ncol++] = centroid_column(w->mpms[i].name, xyz[k]);
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
  for (int i = 0; i < w->nfem; i++, k += 3) kn_sim_deformable_centroid(&w->fems[i], row + k);
  for (int i = 0; i < w->nmpm; i++, k += 3) kn_sim_mpm_centroid(&w->mpms[i], row + k);
  g->nsample++;
  return KN_OK;
}

void kn_golden_finish(kn_golden* g, const kn_world* w) {
  g->steps = w->step;
  g->hash = kn_world_state_hash(w);
}

kn_status kn_golden_write(const kn_golden* g, const char* path, kn_error* err) {
  json_t* doc = json_object();
  json_t* cols = json_array();
  json_t* units = json_array();
  json_t* samples = json_array();
  json_t* tol = json_object();
  char hash[17];
  snprintf(hash, sizeof hash, "%016llx", (unsigned long long)g->hash);
  int bad = !doc || !cols || !units || !samples || !tol;
  if (!bad) {
    bad |= json_object_set_new(doc, "format", json_string("knead-golden-2"));
    bad |= json_object_set_new(doc, "scene", json_string(g->scene));
    bad |= kn_json_set_build(doc);
    bad |= json_object_set_new(doc, "rate", json_real(g->rate));
    bad |= json_object_set_new(doc, "time_step", json_real(g->dt));
    bad |= json_object_set_new(doc, "steps", json_integer(g->steps));
    bad |= json_object_set_new(doc, "final_state_hash", json_string(hash));
    bad |= json_object_set_new(tol, UNIT_M, json_real(KN_GOLDEN_TOL_M));
    bad |= json_object_set_new(tol, UNIT_RAD, json_real(KN_GOLDEN_TOL_RAD));
    bad |= json_object_set(doc, "tolerances", tol);
    bad |= json_object_set_new(doc, "tolerance_overrides", json_object());
    for (int i = 0; i < g->ncol; i++) {
      bad |= json_array_append_new(cols, json_string(g->cols[i]));
      bad |= json_array_append_new(units, json_string(g->units[i]));
    }
    bad |= json_object_set(doc, "columns", cols);
    bad |= json_object_set(doc, "units", units);
    for (long s = 0; s < g->nsample && !bad; s++) {
      const double* row = g->rows + (size_t)s * (size_t)(g->ncol + 1);
      json_t* r = json_array();
      for (int k = 0; r && k <= g->ncol; k++) bad |= json_array_append_new(r, kn_json_real(row[k]));
      bad |= json_array_append_new(samples, r);
    }
    bad |= json_object_set(doc, "samples", samples);
  }
  json_decref(cols), json_decref(units), json_decref(samples), json_decref(tol);
  kn_status st = kn_json_built(bad, path, err);
  /* one value per line: a re-recorded baseline diffs line by line */
  if (!st) st = kn_json_write_file(doc, path, JSON_INDENT(1) | JSON_REAL_PRECISION(17), err);
  json_decref(doc);
  return st;
}

//---- comparing ----

// (doc, key) => its string value, or NULL
static const char* get_string(const json_t* doc, const char* key) {
  return json_string_value(json_object_get(doc, key));
}

/* (unit quaternions a, b as w, x, y, z) => the angle of the rotation between them [rad], in
 * [0, pi]: 2 atan2(|vec(a* b)|, |w(a* b)|) (accurate near 0, unlike acos) */
static double quat_angle(const double a[4], const double b[4]) {
  double w = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
  double x = a[0] * b[1] - a[1] * b[0] - a[2] * b[3] + a[3] * b[2];
  double y = a[0] * b[2] + a[1] * b[3] - a[2] * b[0] - a[3] * b[1];
  double z = a[0] * b[3] - a[1] * b[2] + a[2] * b[1] - a[3] * b[0];
  return 2 * atan2(sqrt(x * x + y * y + z * z), fabs(w));
}

// 1 when columns k..k+3 are one body's quaternion
static int is_quaternion(const kn_golden* g, int k) {
  return k + 3 < g->ncol && g->units[k] == UNIT_QUAT && g->units[k + 1] == UNIT_QUAT && g->units[k + 2] == UNIT_QUAT &&
         g->units[k + 3] == UNIT_QUAT;
}

// (quantity name, its unit) => its tolerance from the file: an override, else the unit's; -1 if none
static double tolerance_of(const json_t* doc, const char* quantity, const char* unit) {
  const json_t* o = json_object_get(json_object_get(doc, "tolerance_overrides"), quantity);
  if (json_is_number(o)) return json_number_value(o);
  const json_t* t = json_object_get(json_object_get(doc, "tolerances"), unit);
  return json_is_number(t) ? json_number_value(t) : -1;
}

// (file's sample s) => its values (NaN for null) in row (1 + ncol); 0 when it is not such a list
static int read_row(const json_t* sample, int n, double* row) {
  if (!json_is_array(sample) || (int)json_array_size(sample) != n) return 0;
  for (int k = 0; k < n; k++) {
    const json_t* v = json_array_get(sample, (size_t)k);
    if (json_is_null(v)) row[k] = NAN;
    else if (json_is_number(v)) row[k] = json_number_value(v);
    else return 0;
  }
  return 1;
}

// (run's and file's quantities from column k) => the difference in the quantity's unit; *width: columns used
static double difference(const kn_golden* g, int k, const double* a, const double* b, int* width) {
  if (is_quaternion(g, k)) {
    *width = 4;
    for (int j = 0; j < 4; j++)
      if (isnan(a[k + j]) != isnan(b[k + j])) return INFINITY;
    return quat_angle(a + k, b + k);
  }
  *width = 1;
  if (isnan(a[k]) || isnan(b[k])) return isnan(a[k]) == isnan(b[k]) ? 0 : INFINITY;
  return fabs(a[k] - b[k]);
}

// (column k) => the quantity's name: the column's, or "<body>/orientation" for a quaternion
static void quantity_name(const kn_golden* g, int k, char* out, size_t cap) {
  if (!is_quaternion(g, k)) {
    snprintf(out, cap, "%s", g->cols[k]);
    return;
  }
  const char* slash = strrchr(g->cols[k], '/');
  int len = slash ? (int)(slash - g->cols[k]) : (int)strlen(g->cols[k]);
  snprintf(out, cap, "%.*s/orientation", len, g->cols[k]);
}

static kn_status check_header(const kn_golden* g, const json_t* doc, const char* path, kn_error* err) {
  const char* format = get_string(doc, "format");
  if (!format || strcmp(format, "knead-golden-2") != 0)
    return kn_fail(err, KN_ERR_PARSE, "%s: key 'format': expected \"knead-golden-2\", found %s%s%s (re-record with "
                   "knead check --update-golden)", path, format ? "\"" : "", format ? format : "none",
                   format ? "\"" : "");
  const json_t* cols = json_object_get(doc, "columns");
  const json_t* units = json_object_get(doc, "units");
  if (!json_is_array(cols) || !json_is_array(units) || json_array_size(cols) != json_array_size(units))
    return kn_fail(err, KN_ERR_PARSE, "%s: keys 'columns' and 'units': expected two lists of the same length", path);
  if (!json_is_array(json_object_get(doc, "samples")))
    return kn_fail(err, KN_ERR_PARSE, "%s: key 'samples': expected a list of [t, values...]", path);
  if ((int)json_array_size(cols) != g->ncol)
    return kn_fail(err, KN_ERR_INVALID, "%s: the golden file has %d quantities, this run %d (re-record with "
                   "--update-golden when the scene's bodies changed)", path, (int)json_array_size(cols), g->ncol);
  for (int i = 0; i < g->ncol; i++) {
    const char* c = json_string_value(json_array_get(cols, (size_t)i));
    const char* u = json_string_value(json_array_get(units, (size_t)i));
    if (!c || strcmp(c, g->cols[i]) != 0)
      return kn_fail(err, KN_ERR_INVALID, "%s: quantity %d is '%s' in the golden file, '%s' in this run", path, i + 1,
                     c ? c : "(not a string)", g->cols[i]);
    if (!u || strcmp(u, g->units[i]) != 0)
      return kn_fail(err, KN_ERR_INVALID, "%s: key 'units': %s is in '%s' in the golden file, '%s' in this run", path,
                     g->cols[i], u ? u : "(not a string)", g->units[i]);
  }
  for (int k = 0, w = 1; k < g->ncol; k += w) {
    char q[160];
    quantity_name(g, k, q, sizeof q);
    const char* unit = is_quaternion(g, k) ? UNIT_RAD : g->units[k];
    w = is_quaternion(g, k) ? 4 : 1;
    if (!(tolerance_of(doc, q, unit) >= 0))
      return kn_fail(err, KN_ERR_PARSE, "%s: key 'tolerances': no tolerance in %s for %s", path, unit, q);
  }
  return KN_OK;
}

kn_status kn_golden_compare(const kn_golden* g, const char* path, kn_golden_report* rep, kn_error* err) {
  memset(rep, 0, sizeof *rep);
  rep->t = -1;
  json_t* doc = NULL;
  kn_status st = kn_json_read_file(path, &doc, err);
  if (!st) st = check_header(g, doc, path, err);
  if (st) {
    json_decref(doc);
    return st;
  }
  const json_t* samples = json_object_get(doc, "samples");
  long nfile = (long)json_array_size(samples);
  long n = nfile < g->nsample ? nfile : g->nsample;
  double* b = malloc((size_t)(g->ncol + 1) * sizeof *b);
  if (!b) {
    json_decref(doc);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  /* the largest difference per unit (the report's margin) and the first sample (in time) with a
   * quantity out of tolerance */
  double worst_m = 0, worst_rad = 0;
  for (long s = 0; s < n && !rep->diverged; s++) {
    const double* a = g->rows + (size_t)s * (size_t)(g->ncol + 1);
    if (!read_row(json_array_get(samples, (size_t)s), g->ncol + 1, b)) {
      st = kn_fail(err, KN_ERR_PARSE, "%s: key 'samples', sample %ld: expected a list of %d numbers", path, s + 1,
                   g->ncol + 1);
      break;
    }
    if (fabs(a[0] - b[0]) > 1e-9 * (1 + fabs(a[0]))) {
      rep->diverged = 1;
      rep->t = a[0];
      snprintf(rep->quantity, sizeof rep->quantity, "t");
      snprintf(rep->unit, sizeof rep->unit, "s");
      rep->value = a[0];
      rep->golden = b[0];
      break;
    }
    for (int k = 0, w = 1; k < g->ncol; k += w) {
      double d = difference(g, k, a + 1, b + 1, &w);
      int quat = w == 4;
      const char* unit = quat ? UNIT_RAD : g->units[k];
      char q[160];
      quantity_name(g, k, q, sizeof q);
      double tol = tolerance_of(doc, q, unit);
      if (unit == UNIT_M) worst_m = fmax(worst_m, d);
      else worst_rad = fmax(worst_rad, d);
      if (!(d <= tol)) {
        rep->diverged = 1;
        rep->t = a[0];
        snprintf(rep->quantity, sizeof rep->quantity, "%s", q);
        snprintf(rep->unit, sizeof rep->unit, "%s", unit);
        rep->value = quat ? d : a[k + 1];
        rep->golden = quat ? 0 : b[k + 1];
        rep->difference = d;
        rep->tolerance = tol;
        break;
      }
    }
  }
  free(b);
  if (st) {
    json_decref(doc);
    return st;
  }
  rep->max_difference_m = worst_m;
  rep->max_difference_rad = worst_rad;
  if (rep->diverged && !strcmp(rep->quantity, "t"))
    snprintf(rep->message, sizeof rep->message, "sample times differ at t = %g s (golden %g s): re-record with "
             "--update-golden", rep->value, rep->golden);
  else if (rep->diverged && !strcmp(rep->unit, UNIT_RAD) && strstr(rep->quantity, "/orientation"))
    snprintf(rep->message, sizeof rep->message, "%s diverged at t = %g s: rotated %.3g rad from the golden orientation "
             "(tolerance %g rad)", rep->quantity, rep->t, rep->difference, rep->tolerance);
  else if (rep->diverged)
    snprintf(rep->message, sizeof rep->message, "%s diverged at t = %g s: %.10g %s, golden %.10g %s (|difference| %.3g "
             "%s > tolerance %g %s)", rep->quantity, rep->t, rep->value, rep->unit, rep->golden, rep->unit,
             rep->difference, rep->unit, rep->tolerance, rep->unit);
  else if (nfile != g->nsample) {
    rep->diverged = 1;
    rep->t = n > 0 ? g->rows[(size_t)(n - 1) * (size_t)(g->ncol + 1)] : 0;
    snprintf(rep->quantity, sizeof rep->quantity, "samples");
    snprintf(rep->message, sizeof rep->message, "this run has %ld samples, the golden file %ld (equal up to t = %g s)",
             g->nsample, nfile, rep->t);
  } else
    snprintf(rep->message, sizeof rep->message, "%ld samples x %d quantities within tolerance (largest differences "
             "%.2g m, %.2g rad)", n, g->ncol, worst_m, worst_rad);
  /* the hash: always reported, judged by the caller (knead check --strict) */
  snprintf(rep->hash, sizeof rep->hash, "%016llx", (unsigned long long)g->hash);
  const char* gh = get_string(doc, "final_state_hash");
  const char* gid = get_string(doc, "build_id");
  snprintf(rep->golden_hash, sizeof rep->golden_hash, "%s", gh ? gh : "none");
  rep->hash_equal = gh && !strcmp(gh, rep->hash);
  rep->same_build = gid && !strcmp(gid, kn_build_id());
  size_t k = strlen(rep->message);
  if (k < sizeof rep->message) {
    if (rep->hash_equal)
      snprintf(rep->message + k, sizeof rep->message - k, "; final state hash equal");
    else
      snprintf(rep->message + k, sizeof rep->message - k, "; final state hash differs (%s, golden %s; %s build id)",
               rep->hash, rep->golden_hash, rep->same_build ? "same" : "another");
  }
  json_decref(doc);
  return KN_OK;
}
