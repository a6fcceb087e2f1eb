/* `knead sweep SCENE.yaml --set key=a:b:n ...`: one scene over a grid of --set overrides (or seeded
 * random samples), one run per sample as `knead check` runs a scene with those overrides (a forked
 * child each, check_jobs.c; its checks evaluated, no golden comparison: a sample is a variant),
 * results in DIR/sweep.csv and DIR/sweep.json, one row per sample in sample order for any -j.
 * Exit status: 0 every sample ran and passed its checks, 1 otherwise, 2 usage. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/check.h"
#include "tools/cli.h"

static const char sweep_usage[] =
    "usage: knead sweep SCENE.yaml --set KEY=A:B:N [--set ...] [OPTIONS]\n"
    "  Run SCENE.yaml once per sample of its --set overrides and tabulate each run's checks.\n"
    "  --set KEY=A:B:N        N values from A to B, evenly spaced (N = 1: A); several ranges make a\n"
    "                         grid, the first key varying slowest\n"
    "  --set KEY=VALUE        a fixed override of every sample\n"
    "  --random N             N random samples instead of a grid: each range key uniform in [A, B]\n"
    "                         (given as KEY=A:B)\n"
    "  --seed S               the random samples' seed (an integer) [1]\n"
    "  -j N, --jobs N         run N samples at once, each in its own process [1]\n"
    "  --out DIR              write DIR/sweep.csv and DIR/sweep.json [sweep]\n"
    "  --package-path DIR     search DIR for package:// files (repeatable)\n"
    "Each row: the sample's parameter values, each check's measured value and pass/fail, the wall\n"
    "time, the final state hash (as `knead run --set ...` prints it) and the status: ok, failed (a\n"
    "check failed) or error (with its message).\n"
    "Under mpirun (or srun) the samples are spread over the ranks; rank 0 writes the files.\n"
    "Exit status: 0 all samples ok, 1 a sample failed or an error, 2 usage.\n";

#define MAX_SAMPLES 1000000

typedef struct {
  char key[256];
  const char* spec; /* the --set argument */
  int range;        /* 0: a fixed value (fixed), 1: a range a..b */
  double a, b;
  long n;
  char fixed[1024];
} sweep_param;

// (x) => its text with at most 12 significant digits; the value a sample runs with is that text's
static void number_text(double x, char* out, size_t cap) {
  snprintf(out, cap, "%.12g", x);
  if (!strcmp(out, "-0")) snprintf(out, cap, "0");
}

static int parse_number(const char* s, double* x) {
  char* end;
  errno = 0;
  *x = strtod(s, &end);
  return s[0] && !*end && !errno && isfinite(*x) ? 0 : -1;
}

/* (--set argument, random mode) => the parameter; 0, or -1 with the message printed */
static int parse_param(const char* arg, int random, sweep_param* p) {
  memset(p, 0, sizeof *p);
  p->spec = arg;
  const char* eq = strchr(arg, '=');
  if (!eq || eq == arg) {
    knead_error("sweep: --set %s: expected KEY=A:B:N or KEY=VALUE", arg);
    return -1;
  }
  snprintf(p->key, sizeof p->key, "%.*s", (int)(eq - arg), arg);
  const char* v = eq + 1;
  if (!strchr(v, ':')) {
    snprintf(p->fixed, sizeof p->fixed, "%s", v);
    return 0;
  }
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", v);
  char* f[4];
  int nf = 0;
  f[nf++] = buf;
  for (char* c = buf; *c; c++)
    if (*c == ':') {
      *c = 0;
      if (nf == 4) break;
      f[nf++] = c + 1;
    }
  const char* form = random ? "A:B" : "A:B:N";
  if (nf != (random ? 2 : 3)) {
    knead_error("sweep: --set %s: a range is %s%s", arg, form,
                random ? " with --random" : " (A:B is for --random)");
    return -1;
  }
  for (int i = 0; i < 2; i++)
    if (parse_number(f[i], i ? &p->b : &p->a)) {
      knead_error("sweep: --set %s: '%s' is not a number", arg, f[i]);
      return -1;
    }
  p->range = 1;
  p->n = 1;
  if (!random) {
    char* end;
    errno = 0;
    p->n = strtol(f[2], &end, 10);
    if (!f[2][0] || *end || errno || p->n < 1) {
      knead_error("sweep: --set %s: N must be a whole number >= 1 (got '%s')", arg, f[2]);
      return -1;
    }
  }
  return 0;
}

// splitmix64: the random samples' generator (the same sequence on every machine)
static uint64_t next_random(uint64_t* s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* (parameters, sample index or the random state) => the sample's overrides "key=value" in
 * sets[0..np), malloc'd; random values are drawn key by key in order; 0, or -1 out of memory */
static int sample_sets(const sweep_param* p, int np, long index, int random, uint64_t* rng, char** sets) {
  long stride = 1;
  double* x = calloc((size_t)np, sizeof *x);
  if (!x) return -1;
  for (int k = 0; k < np; k++)
    if (random && p[k].range) x[k] = p[k].a + (p[k].b - p[k].a) * ((double)(next_random(rng) >> 11) * 0x1.0p-53);
  for (int k = np - 1; k >= 0; k--) /* the grid: the last key fastest */
    if (!random && p[k].range) {
      long i = (index / stride) % p[k].n;
      stride *= p[k].n;
      x[k] = p[k].n == 1 ? p[k].a : p[k].a + (p[k].b - p[k].a) * (double)i / (double)(p[k].n - 1);
    }
  int bad = 0;
  for (int k = 0; k < np; k++) {
    char v[64], text[1400];
    number_text(x[k], v, sizeof v);
    snprintf(text, sizeof text, "%s=%s", p[k].key, p[k].range ? v : p[k].fixed);
    bad |= !(sets[k] = strdup(text));
  }
  free(x);
  return bad ? -1 : 0;
}

//---- a sample's result (its child's result file, check.h) ----

typedef struct {
  char name[256], type[64], unit[32], message[512];
  int passed, expect_fail;
  double measured;
} sweep_check;

typedef struct {
  char status[16]; /* ok, failed, error */
  char message[1024];
  char hash[17];
  double wall;
  sweep_check* checks;
  int nchecks;
} sweep_result;

static void read_result(const scene_job* job, int status, sweep_result* r) {
  memset(r, 0, sizeof *r);
  snprintf(r->status, sizeof r->status, "ok");
  r->wall = NAN;
  FILE* f = status == -1 ? NULL : fopen(job->result, "r");
  char line[16384];
  char* fld[16];
  int complete = 0, failed = 0;
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (!strcmp(line, "END")) {
      complete = 1;
      break;
    }
    int n = check_split_fields(line, fld, 16);
    if (fld[0][0] == 'S' && n >= 4) {
      if (!strcmp(fld[1], "error")) {
        snprintf(r->status, sizeof r->status, "error");
        snprintf(r->message, sizeof r->message, "%s", fld[3]);
      }
      if (n >= 6) r->wall = atof(fld[5]);
    } else if (fld[0][0] == 'C' && n >= 8) {
      sweep_check* c = realloc(r->checks, (size_t)(r->nchecks + 1) * sizeof *c);
      if (!c) continue;
      r->checks = c;
      c += r->nchecks++;
      snprintf(c->name, sizeof c->name, "%s", fld[1]);
      snprintf(c->type, sizeof c->type, "%s", fld[2]);
      c->passed = atoi(fld[3]), c->expect_fail = atoi(fld[4]);
      snprintf(c->message, sizeof c->message, "%s", fld[5]);
      snprintf(c->unit, sizeof c->unit, "%s", fld[6]);
      c->measured = atof(fld[7]);
      if (c->passed == c->expect_fail && !failed) {
        failed = 1;
        if (!r->message[0]) snprintf(r->message, sizeof r->message, "%s: %s", c->name, c->message);
      }
    } else if (fld[0][0] == 'H' && n >= 2) {
      snprintf(r->hash, sizeof r->hash, "%s", fld[1]);
    }
  }
  if (f) fclose(f);
  if (!complete) {
    snprintf(r->status, sizeof r->status, "error");
    if (status == -1)
      snprintf(r->message, sizeof r->message, "the sample's process could not start");
    else if (WIFSIGNALED(status))
      snprintf(r->message, sizeof r->message, "the sample's process was killed by signal %d (%s)", WTERMSIG(status),
               strsignal(WTERMSIG(status)));
    else
      snprintf(r->message, sizeof r->message, "the sample's process ended without results (exit status %d)",
               WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  } else if (failed && strcmp(r->status, "error")) {
    snprintf(r->status, sizeof r->status, "failed");
  }
}

//---- writing the tables ----

static void csv_field(FILE* f, const char* s) {
  if (!strpbrk(s, ",\"\n\r")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static json_t* param_value(const char* v) {
  double x;
  if (!parse_number(v, &x)) return json_real(x);
  if (!strcmp(v, "true") || !strcmp(v, "false")) return json_boolean(!strcmp(v, "true"));
  return json_string(v);
}

int knead_cmd_sweep(int argc, char** argv) {
  const char* scene_path = NULL;
  const char* out_dir = "sweep";
  int jobs = 1, random = 0;
  long nrandom = 0;
  unsigned long long seed = 1;
  const char** specs = calloc((size_t)(argc > 0 ? argc : 1), sizeof *specs);
  int nspec = 0;
  if (!specs) return 1;
  int code = 2;
  sweep_param* p = NULL;
  char** sets = NULL;
  scene_job* job = NULL;
  int* status = NULL;
  sweep_result* res = NULL;
  long ns = 0;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* val = NULL;
    if (!strcmp(a, "-j") || !strcmp(a, "--jobs") || !strcmp(a, "--set") || !strcmp(a, "--random") ||
        !strcmp(a, "--seed") || !strcmp(a, "--out") || !strcmp(a, "--package-path")) {
      if (i + 1 >= argc) {
        knead_error("sweep: %s needs a value (see knead sweep --help)", a);
        goto done;
      }
      val = argv[++i];
    } else if (!strncmp(a, "-j", 2) && a[2]) {
      val = a + 2;
      a = "-j";
    } else if (!strncmp(a, "--set=", 6)) {
      val = a + 6;
      a = "--set";
    }
    char* end;
    if (!strcmp(a, "-j") || !strcmp(a, "--jobs")) {
      long j = strtol(val, &end, 10);
      if (*end || j < 1 || j > 256) {
        knead_error("sweep: -j needs a number of processes from 1 to 256 (got '%s')", val);
        goto done;
      }
      jobs = (int)j;
    } else if (!strcmp(a, "--set")) {
      specs[nspec++] = val;
    } else if (!strcmp(a, "--random")) {
      errno = 0;
      nrandom = strtol(val, &end, 10);
      if (!val[0] || *end || errno || nrandom < 1 || nrandom > MAX_SAMPLES) {
        knead_error("sweep: --random needs a number of samples from 1 to %d (got '%s')", MAX_SAMPLES, val);
        goto done;
      }
      random = 1;
    } else if (!strcmp(a, "--seed")) {
      errno = 0;
      seed = strtoull(val, &end, 10);
      if (!val[0] || *end || errno || val[0] == '-') {
        knead_error("sweep: --seed needs a whole number >= 0 (got '%s')", val);
        goto done;
      }
    } else if (!strcmp(a, "--out")) {
      out_dir = val;
    } else if (!strcmp(a, "--package-path")) {
      if (kn_cli_add_package_path(val) != 0) {
        code = 1;
        goto done;
      }
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(sweep_usage, stdout);
      code = 0;
      goto done;
    } else if (a[0] == '-' && a[1]) {
      knead_error("sweep: unknown option '%s' (see knead sweep --help)", a);
      goto done;
    } else if (scene_path) {
      knead_error("sweep: one scene at a time (got %s and %s)", scene_path, a);
      goto done;
    } else {
      scene_path = a;
    }
  }
  if (!scene_path) {
    knead_error("sweep: which scene? usage: knead sweep SCENE.yaml --set KEY=A:B:N ...");
    goto done;
  }
  if (nspec == 0) {
    knead_error("sweep: nothing to sweep: give --set KEY=A:B:N (see knead sweep --help)");
    goto done;
  }
  p = calloc((size_t)nspec, sizeof *p);
  if (!p) goto done;
  int nrange = 0;
  ns = 1;
  for (int k = 0; k < nspec; k++) {
    if (parse_param(specs[k], random, &p[k])) goto done;
    if (p[k].range) {
      nrange++;
      if (!random && ns > MAX_SAMPLES / p[k].n) {
        knead_error("sweep: the grid has more than %d samples", MAX_SAMPLES);
        goto done;
      }
      if (!random) ns *= p[k].n;
    }
  }
  if (nrange == 0) {
    knead_error("sweep: nothing to sweep: no --set is a range %s", random ? "A:B" : "A:B:N");
    goto done;
  }
  if (random) ns = nrandom;

  /* every sample's overrides, fixed before anything runs */
  sets = calloc((size_t)(ns * nspec), sizeof *sets);
  job = calloc((size_t)ns, sizeof *job);
  status = calloc((size_t)ns, sizeof *status);
  res = calloc((size_t)ns, sizeof *res);
  if (!sets || !job || !status || !res) goto done;
  uint64_t rng = seed;
  for (long s = 0; s < ns; s++) {
    if (sample_sets(p, nspec, s, random, &rng, sets + s * nspec)) {
      knead_error("sweep: out of memory for %ld samples", ns);
      code = 1;
      goto done;
    }
    job[s].path = (char*)scene_path;
    job[s].sets = (const char* const*)(sets + s * nspec);
    job[s].nsets = nspec;
    snprintf(job[s].keep_name, sizeof job[s].keep_name, "sample-%ld", s);
  }
  /* the scene and the keys, checked with the first sample's values before anything runs: an
   * unknown key, a key that is not one scalar, a value of the wrong type */
  {
    kn_scene* scene = NULL;
    kn_error err = {0};
    if (kn_scene_load_with(scene_path, job[0].sets, nspec, &scene, &err)) {
      knead_error("sweep: %s", err.msg);
      code = err.status == KN_ERR_IO ? 1 : 2;
      goto done;
    }
    kn_scene_free(scene);
  }
  if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
    knead_error("sweep: cannot create %s: %s", out_dir, strerror(errno));
    code = 1;
    goto done;
  }

  check_opts o = {.golden_rate = 20, .no_golden = 1};
  double wall0 = kn_wall_time();
  /* under mpirun: this rank runs samples rank, rank + size, ...; rank 0 gathers and writes all */
  int rank = 0, size = 1;
  char* mine = NULL;
  if (check_mpi_start(&rank, &size) && (mine = calloc((size_t)ns, 1)))
    for (long s = rank; s < ns; s += size) mine[s] = 1;
  check_run_jobs(job, (int)ns, &o, jobs, mine, status);
  check_mpi_gather(job, (int)ns, status, rank, size);
  free(mine);
  double total = kn_wall_time() - wall0;
  if (rank != 0) {
    code = check_mpi_finish(0);
    goto done;
  }

  int nok = 0, nfailed = 0, nerror = 0;
  for (long s = 0; s < ns; s++) {
    read_result(&job[s], status[s], &res[s]);
    if (status[s] != -1) unlink(job[s].result);
    if (!strcmp(res[s].status, "ok")) nok++;
    else if (!strcmp(res[s].status, "failed")) nfailed++;
    else nerror++;
  }
  /* the check columns: every check name in order of first appearance */
  const char** cname = NULL;
  int ncol = 0;
  for (long s = 0; s < ns; s++)
    for (int c = 0; c < res[s].nchecks; c++) {
      int seen = 0;
      for (int j = 0; j < ncol && !seen; j++) seen = !strcmp(cname[j], res[s].checks[c].name);
      if (seen) continue;
      const char** nn = realloc(cname, (size_t)(ncol + 1) * sizeof *nn);
      if (!nn) continue;
      cname = nn;
      cname[ncol++] = res[s].checks[c].name;
    }

  char path[4200];
  snprintf(path, sizeof path, "%s/sweep.csv", out_dir);
  FILE* f = fopen(path, "w");
  code = nfailed || nerror ? 1 : 0;
  if (!f) {
    knead_error("sweep: %s: cannot write: %s", path, strerror(errno));
    code = 1;
  } else {
    fputs("sample", f);
    for (int k = 0; k < nspec; k++) fputc(',', f), csv_field(f, p[k].key);
    for (int j = 0; j < ncol; j++) {
      char h[300];
      fputc(',', f);
      snprintf(h, sizeof h, "%s.measured", cname[j]);
      csv_field(f, h);
      fputc(',', f);
      snprintf(h, sizeof h, "%s.passed", cname[j]);
      csv_field(f, h);
    }
    fputs(",wall_time_s,final_state_hash,status,message\n", f);
    for (long s = 0; s < ns; s++) {
      fprintf(f, "%ld", s);
      for (int k = 0; k < nspec; k++) fputc(',', f), csv_field(f, strchr(sets[s * nspec + k], '=') + 1);
      for (int j = 0; j < ncol; j++) {
        const sweep_check* c = NULL;
        for (int i = 0; i < res[s].nchecks && !c; i++)
          if (!strcmp(res[s].checks[i].name, cname[j])) c = &res[s].checks[i];
        if (c && !isnan(c->measured)) fprintf(f, ",%.10g", c->measured);
        else fputc(',', f);
        fprintf(f, ",%s", c ? (c->passed != c->expect_fail ? "true" : "false") : "");
      }
      if (isnan(res[s].wall)) fputc(',', f);
      else fprintf(f, ",%.3f", res[s].wall);
      fprintf(f, ",%s,%s,", res[s].hash, res[s].status);
      csv_field(f, res[s].message);
      fputc('\n', f);
    }
    if (fclose(f) != 0) code = 1;
  }

  json_t* doc = json_object();
  json_object_set_new(doc, "scene", json_string(scene_path));
  json_object_set_new(doc, "mode", json_string(random ? "random" : "grid"));
  if (random) json_object_set_new(doc, "seed", json_integer((json_int_t)seed));
  json_t* params = json_array();
  for (int k = 0; k < nspec; k++) {
    json_t* q = json_object();
    json_object_set_new(q, "key", json_string(p[k].key));
    json_object_set_new(q, "spec", json_string(strchr(p[k].spec, '=') + 1));
    json_array_append_new(params, q);
  }
  json_object_set_new(doc, "parameters", params);
  json_t* samples = json_array();
  for (long s = 0; s < ns; s++) {
    json_t* o1 = json_object();
    json_object_set_new(o1, "sample", json_integer(s));
    json_t* pv = json_object();
    for (int k = 0; k < nspec; k++) json_object_set_new(pv, p[k].key, param_value(strchr(sets[s * nspec + k], '=') + 1));
    json_object_set_new(o1, "parameters", pv);
    json_t* cs = json_array();
    for (int i = 0; i < res[s].nchecks; i++) {
      const sweep_check* c = &res[s].checks[i];
      json_t* cj = json_object();
      json_object_set_new(cj, "name", json_string(c->name));
      json_object_set_new(cj, "type", json_string(c->type));
      json_object_set_new(cj, "measured", isnan(c->measured) ? json_null() : json_real(c->measured));
      json_object_set_new(cj, "unit", json_string(c->unit));
      json_object_set_new(cj, "passed", json_boolean(c->passed != c->expect_fail));
      json_object_set_new(cj, "expect_fail", json_boolean(c->expect_fail));
      json_object_set_new(cj, "message", json_string(c->message));
      json_array_append_new(cs, cj);
    }
    json_object_set_new(o1, "checks", cs);
    json_object_set_new(o1, "wall_time_s", isnan(res[s].wall) ? json_null() : json_real(res[s].wall));
    json_object_set_new(o1, "final_state_hash", res[s].hash[0] ? json_string(res[s].hash) : json_null());
    json_object_set_new(o1, "status", json_string(res[s].status));
    json_object_set_new(o1, "message", json_string(res[s].message));
    json_array_append_new(samples, o1);
  }
  json_object_set_new(doc, "samples", samples);
  snprintf(path, sizeof path, "%s/sweep.json", out_dir);
  if (json_dump_file(doc, path, JSON_INDENT(2) | JSON_REAL_PRECISION(12)) != 0) {
    knead_error("sweep: %s: cannot write", path);
    code = 1;
  }
  json_decref(doc);
  free(cname);

  for (long s = 0; s < ns; s++) {
    printf("sample %ld:", s);
    for (int k = 0; k < nspec; k++)
      if (p[k].range) printf(" %s", sets[s * nspec + k]);
    printf("  %s", res[s].status);
    if (res[s].hash[0]) printf(", state hash %s", res[s].hash);
    if (res[s].message[0]) printf(": %s", res[s].message);
    putchar('\n');
  }
  printf("%ld sample%s in %.1f s: %d ok, %d failed, %d error%s; results in %s/sweep.csv and %s/sweep.json\n", ns,
         ns == 1 ? "" : "s", total, nok, nfailed, nerror, nerror == 1 ? "" : "s", out_dir, out_dir);

  code = check_mpi_finish(code);
done:
  if (sets)
    for (long i = 0; i < ns * nspec; i++) free(sets[i]);
  if (res)
    for (long s = 0; s < ns; s++) free(res[s].checks);
  free(sets);
  free(job);
  free(status);
  free(res);
  free(p);
  free(specs);
  return code;
}
