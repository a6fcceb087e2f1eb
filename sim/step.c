/* The world's time step: the scene's contact backend advances every tree (sim/backend.h). Every
 * tree's state is backed up first so a failure anywhere leaves the whole world at step n. */
#include <math.h>
#include <string.h>

#include "sim/backend.h"
#include "sim/checks_internal.h"

kn_status kn_world_step(kn_world* w, kn_error* err) {
  const double dt = w->scene->time_step;
  for (int k = 0; k < w->ntree; k++) {
    kn_world_tree* tr = &w->trees[k];
    const kn_mb_model* m = tr->robot->model;
    memcpy(tr->q_backup, tr->q, (size_t)m->nq * sizeof *tr->q);
    memcpy(tr->v_backup, tr->v, (size_t)m->nv * sizeof *tr->v);
  }
  kn_sim_deformables_backup(w, 0);
  kn_libraries_serial_begin();
  kn_status st = w->backend->step(w, w->backend_state, err);
  kn_libraries_serial_end();
  if (st) {
    kn_sim_deformables_backup(w, 1);
    for (int j = 0; j < w->ntree; j++) {
      kn_world_tree* tr = &w->trees[j];
      const kn_mb_model* m = tr->robot->model;
      memcpy(tr->q, tr->q_backup, (size_t)m->nq * sizeof *tr->q);
      memcpy(tr->v, tr->v_backup, (size_t)m->nv * sizeof *tr->v);
    }
    kn_sim_checks_step_failed(w, err ? err->msg : "step failed");
    return kn_error_prefix(err, "%s: step %ld (t = %g s): %s backend: ", w->scene->path, w->step + 1, w->t,
                           w->backend->name);
  }
  w->step++;
  /* t from the step count, not accumulated, so long runs do not drift */
  w->t = (double)w->step * dt;
  kn_run_stats* r = &w->stats;
  const kn_step_stats* l = &w->last;
  r->steps++;
  r->iterations += l->iterations;
  r->line_search_iterations += l->line_search_iterations;
  r->contacts += l->contacts;
  if (l->iterations > r->max_iterations) r->max_iterations = l->iterations;
  if (l->line_search_iterations > r->max_line_search_iterations) r->max_line_search_iterations = l->line_search_iterations;
  if (l->contacts > r->max_contacts) r->max_contacts = l->contacts;
  if (l->residual > r->max_residual) r->max_residual = l->residual;
  kn_sim_checks_observe(w);
  return KN_OK;
}

uint64_t kn_world_state_hash(const kn_world* w) {
  uint64_t h = kn_hash_doubles(KN_HASH_SEED, &w->t, 1);
  for (int k = 0; k < w->ntree; k++) {
    const kn_world_tree* tr = &w->trees[k];
    h = kn_hash_doubles(h, tr->q, (size_t)tr->robot->model->nq);
    h = kn_hash_doubles(h, tr->v, (size_t)tr->robot->model->nv);
  }
  for (int i = 0; i < w->nfem; i++) {
    const kn_fem_body* b = w->fems[i].body;
    h = kn_hash_doubles(h, b->x, 3 * (size_t)b->mesh.nvert);
    h = kn_hash_doubles(h, b->v, 3 * (size_t)b->mesh.nvert);
    h = kn_hash_doubles(h, b->R0, 9 * (size_t)b->mesh.ntet);
  }
  return kn_sim_mpm_hash(w, h);
}

long kn_world_total_steps(const kn_world* w) {
  double n = w->scene->duration / w->scene->time_step;
  return (long)ceil(n * (1 - 1e-9));
}
