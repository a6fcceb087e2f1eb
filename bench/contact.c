/* knead-bench — the contact benchmark, knead side: load a scene, step it with kn_world_step and
 * time every step; collect the SAP statistics the backend leaves in w->last. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int compare_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* (per-step microseconds, n) => mean, median, p95 (nearest rank), min into r */
void kb_contact_summarize(double* t, long n, kb_contact_result* r) {
  double sum = 0;
  for (long i = 0; i < n; i++) sum += t[i];
  qsort(t, (size_t)n, sizeof *t, compare_double);
  r->mean_us = sum / (double)n;
  r->median_us = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  long k = (long)ceil(0.95 * (double)n) - 1;
  r->p95_us = t[k < 0 ? 0 : k];
  r->min_us = t[0];
}

/* the first free object's tree (nv 6), or -1 */
static int first_free_object(const kn_world* w) {
  for (int i = 0; i < w->nobject; i++) {
    const kn_world_tree* tr = &w->trees[w->objects[i].tree];
    if (!w->objects[i].fixed && tr->robot->model->nv == 6) return w->objects[i].tree;
  }
  return -1;
}

int kb_contact_knead(const char* scene_path, long steps, int runs, kb_contact_result* out, char* err, size_t errsz) {
  memset(out, 0, sizeof *out);
  kn_error e = {0};
  kn_scene* sc = NULL;
  if (kn_scene_load(scene_path, &sc, &e) != KN_OK) {
    snprintf(err, errsz, "%s", e.msg);
    return 0;
  }
  double* t = NULL;
  long n = 0, iters = 0, ls = 0, contacts = 0;
  double t_detect = 0, t_step = 0;
  int ok = 1;
  for (int r = 0; ok && r < runs; r++) {
    kn_world* w = NULL;
    if (kn_world_create(sc, &w, &e) != KN_OK) {
      snprintf(err, errsz, "%s", e.msg);
      ok = 0;
      break;
    }
    long ns = steps > 0 ? steps : kn_world_total_steps(w);
    if (!t) t = malloc((size_t)(ns * runs) * sizeof *t);
    if (!t) {
      snprintf(err, errsz, "out of memory");
      kn_world_free(w);
      ok = 0;
      break;
    }
    int obj = first_free_object(w);
    double x0 = obj >= 0 ? w->trees[obj].q[0] : 0, z0 = obj >= 0 ? w->trees[obj].q[2] : 0;
    for (long s = 0; s < ns; s++) {
      double t0 = kn_wall_time();
      kn_status st = kn_world_step(w, &e);
      double t1 = kn_wall_time();
      if (st != KN_OK) {
        snprintf(err, errsz, "step %ld: %s", s, e.msg);
        ok = 0;
        break;
      }
      t[n++] = (t1 - t0) * 1e6;
      t_step += t1 - t0, t_detect += w->last.time_detect;
      iters += w->last.iterations;
      ls += w->last.line_search_iterations;
      contacts += w->last.contacts;
      if (w->last.iterations > out->iter_max) out->iter_max = w->last.iterations;
      if (w->last.line_search_iterations > out->ls_max) out->ls_max = w->last.line_search_iterations;
      if (w->last.contacts > out->contacts_max) out->contacts_max = w->last.contacts;
    }
    if (obj >= 0) out->object_dx = w->trees[obj].q[0] - x0, out->object_dz = w->trees[obj].q[2] - z0;
    kn_world_free(w);
  }
  if (ok && n > 0) {
    out->ok = 1;
    out->steps = n;
    out->runs = runs;
    out->iter_mean = (double)iters / (double)n;
    out->ls_mean = (double)ls / (double)n;
    out->contacts_mean = (double)contacts / (double)n;
    out->detect_share = t_step > 0 ? t_detect / t_step : 0;
    kb_contact_summarize(t, n, out);
  }
  free(t);
  kn_scene_free(sc);
  return out->ok;
}
