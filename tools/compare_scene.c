/* `knead compare`: one scene with one contact backend, run in its child process (check_jobs.c).
 * The scene is loaded with the user's --set overrides and then contact.backend=<backend>, so the
 * backend is the only difference between the cells of a row; a backend that cannot run the scene
 * (kn_world_create's KN_ERR_UNSUPPORTED) is a refusal, reported with its reason. The steps run
 * with no outputs written (the wall time per step is the step's alone) unless the scene asks for
 * output.html: then as knead run would, into DIR/<scene>/<backend>/, for the side-by-side replay.
 * After every step the checks' observed quantities (kn_check_result.current, and follows_curve's
 * reference) are kept for the plots. Result lines: tools/check.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/check.h"
#include "tools/cli.h"

// text with tabs and newlines flattened, so a result line stays one line
static void put_field(FILE* f, const char* s) {
  fputc('\t', f);
  for (; s && *s; s++) fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

static const char* stem(const char* path) {
  const char* s = strrchr(path, '/');
  return s ? s + 1 : path;
}

// (world after a step) => the deepest contact of the step (rigid, FEM, MPM) [m]; +inf when none
static double deepest(const kn_world* w) {
  double phi = INFINITY;
  for (int k = 0; k < w->ncontact; k++) phi = fmin(phi, w->contacts[k].phi);
  for (int k = 0; k < w->nfem_contact; k++) phi = fmin(phi, w->fem_contacts[k].phi);
  for (int k = 0; k < w->nmpm_contact; k++) phi = fmin(phi, w->mpm_contacts[k].phi);
  return phi;
}

// (world) => one D line: t and every check's observed value (and reference)
static void series_row(const kn_world* w, FILE* out) {
  int nc = 0;
  const kn_check_result* r = kn_world_checks(w, &nc);
  fprintf(out, "D\t%.9g", w->t);
  for (int i = 0; i < nc; i++) {
    fprintf(out, "\t%.9g", r[i].current);
    if (r[i].type == KN_CHECK_FOLLOWS_CURVE) fprintf(out, "\t%.9g", r[i].current_reference);
  }
  fputc('\n', out);
}

typedef struct {
  FILE* out;
  long steps;
  double iterations, contacts, worst; /* sums over the steps; the deepest phi */
} run_totals;

// (after a step) => its numbers added up and its D line written
static kn_status observe(void* user, const kn_world* w, kn_error* err) {
  (void)err;
  run_totals* a = user;
  a->steps++;
  a->iterations += w->last.iterations;
  a->contacts += w->ncontact + w->nfem_contact + w->nmpm_contact;
  a->worst = fmin(a->worst, deepest(w));
  series_row(w, a->out);
  return KN_OK;
}

void compare_run_scene(const scene_job* job, const check_opts* o, FILE* out) {
  kn_error err = {0};
  kn_scene* scene = NULL;
  kn_world* w = NULL;
  /* the user's overrides, then the backend's */
  const char** sets = calloc((size_t)o->nsets + 1, sizeof *sets);
  char backend_set[128];
  snprintf(backend_set, sizeof backend_set, "contact.backend=%s", job->backend);
  for (int i = 0; sets && i < o->nsets; i++) sets[i] = o->sets[i];
  if (sets) sets[o->nsets] = backend_set;
  kn_status st = sets ? kn_scene_load_with(job->path, sets, o->nsets + 1, &scene, &err)
                      : kn_fail(&err, KN_ERR_NOMEM, "out of memory");
  free(sets);
  if (!st) st = kn_world_create(scene, &w, &err);
  if (!st) st = kn_checks_attach(w, &err);
  if (st) {
    fprintf(out, "S\t%s", st == KN_ERR_UNSUPPORTED ? "refused" : "error");
    char base[1024]; /* the file's stem, as a scene without name: is named */
    snprintf(base, sizeof base, "%s", stem(job->path));
    char* dot = strrchr(base, '.');
    if (dot && dot != base && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml"))) *dot = 0;
    put_field(out, scene ? scene->name : base);
    put_field(out, err.msg);
    fputs("\nEND\n", out);
    kn_world_free(w);
    kn_scene_free(scene);
    return;
  }
  /* the series' names (t, then per check its quantity and follows_curve's reference) */
  int nc = 0;
  const kn_check_result* r = kn_world_checks(w, &nc);
  fputs("N\tt", out);
  for (int i = 0; i < nc; i++) {
    put_field(out, r[i].name);
    if (r[i].type == KN_CHECK_FOLLOWS_CURVE) fprintf(out, "\t%s/reference", r[i].name);
  }
  fputc('\n', out);
  series_row(w, out);
  run_totals acc = {.out = out, .worst = INFINITY};
  char failure[KN_ERROR_MSG] = "";
  double wall = 0;
  if (scene->output && scene->output->html && o->keep_dir) {
    /* the scene asks for output.html: its outputs (replay.html, trajectory.csv, ...) in
     * DIR/<scene>/<backend>/, for the side-by-side page; the times then include writing them */
    char dir[4400];
    snprintf(dir, sizeof dir, "%s/%s/%s", o->keep_dir, job->keep_name, job->backend);
    double t0 = kn_wall_time();
    st = kn_world_run_observed(w, dir, NULL, observe, &acc, NULL, &err);
    wall = kn_wall_time() - t0;
    if (st) snprintf(failure, sizeof failure, "%s", err.msg);
    else fprintf(out, "R\t%s/%s/replay.html\n", job->keep_name, job->backend);
  } else {
    long total = kn_world_total_steps(w);
    for (long n = 1; n <= total; n++) {
      double t0 = kn_wall_time();
      st = kn_world_step(w, &err);
      wall += kn_wall_time() - t0;
      if (st) {
        snprintf(failure, sizeof failure, "%s", err.msg);
        break;
      }
      observe(&acc, w, &err);
    }
  }
  long steps = acc.steps;
  double iterations = acc.iterations, contacts = acc.contacts, worst = acc.worst;
  fprintf(out, "S\t%s", failure[0] ? "failed" : "ok");
  put_field(out, scene->name);
  put_field(out, failure);
  fputc('\n', out);
  double per = steps ? 1.0 / (double)steps : NAN;
  fprintf(out, "T\t%ld\t%.6g\t%.6g\t%.6g\t%.9g\t%016llx\n", steps, wall * per, iterations * per, contacts * per,
          worst < INFINITY ? worst : NAN, (unsigned long long)kn_world_state_hash(w));
  r = kn_world_checks(w, &nc);
  for (int i = 0; i < nc; i++) {
    fputs("C", out);
    put_field(out, r[i].name);
    put_field(out, kn_check_type_name(r[i].type));
    fprintf(out, "\t%d\t%d", r[i].passed, r[i].expect_fail);
    put_field(out, r[i].unit);
    fprintf(out, "\t%.9g\t%.9g", r[i].measured, r[i].t);
    put_field(out, r[i].message);
    fputc('\n', out);
  }
  fputs("END\n", out);
  kn_world_free(w);
  kn_scene_free(scene);
}
