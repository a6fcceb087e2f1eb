/* knead-bench: a scene stepped and each step timed alone (kn_world_step), with the solver's
 * figures per step; shared by --only backends and --only ipc_paper. */
#include <stdio.h>
#include <string.h>

#include "bench.h"

int kb_open_scene(const char* path, const char* const* set, int nset, kn_scene** sc, kn_world** w, char* err,
                  size_t errsz) {
  kn_error e = {0};
  *sc = NULL, *w = NULL;
  if (kn_scene_load_with(path, (const char**)set, nset, sc, &e) || kn_world_create(*sc, w, &e)) {
    snprintf(err, errsz, "%s", e.msg);
    kn_scene_free(*sc);
    *sc = NULL, *w = NULL;
    return 0;
  }
  return 1;
}

int kb_step_scene(const char* path, const char* const* set, int nset, long steps, kb_steps* r, char* err,
                  size_t errsz) {
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  kn_error e = {0};
  memset(r, 0, sizeof *r);
  if (!kb_open_scene(path, set, nset, &sc, &w, err, errsz)) return 0;
  long total = kn_world_total_steps(w);
  if (steps <= 0 || steps > total) steps = total;
  double t = 0;
  long k = 0;
  for (; k < steps; k++) {
    double t0 = kn_wall_time();
    if (kn_world_step(w, &e)) break;
    t += kn_wall_time() - t0;
    r->iters += w->last.iterations, r->facts += w->last.factorizations, r->krylov += w->last.krylov_iterations;
    r->contacts += w->last.contacts;
    if (w->last.contacts > r->max_contacts) r->max_contacts = w->last.contacts;
  }
  int ok = k == steps;
  if (!ok) snprintf(err, errsz, "failed at step %ld: %s", k + 1, e.msg);
  double n = (double)(k > 0 ? k : 1);
  r->steps = k, r->ms = 1e3 * t / n, r->iters /= n, r->facts /= n, r->krylov /= n, r->contacts /= n;
  kn_world_free(w);
  kn_scene_free(sc);
  return ok;
}
