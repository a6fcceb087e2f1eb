/* The world's time step: per tree, controllers at t_n+1 (the PD is implicit), then the tree's implicit step. Every tree's
 * state is backed up first so a failure in any tree leaves the whole world at step n. */
#include <math.h>
#include <string.h>

#include "sim/sim_internal.h"

kn_status kn_world_step(kn_world* w, kn_error* err) {
  const double dt = w->scene->time_step;
  for (int k = 0; k < w->ntree; k++) {
    kn_world_tree* tr = &w->trees[k];
    const kn_mb_model* m = tr->robot->model;
    memcpy(tr->q_backup, tr->q, (size_t)m->nq * sizeof *tr->q);
    memcpy(tr->v_backup, tr->v, (size_t)m->nv * sizeof *tr->v);
  }
  kn_status st = KN_OK;
  int k = 0;
  for (; k < w->ntree; k++) {
    kn_world_tree* tr = &w->trees[k];
    const kn_mb_model* m = tr->robot->model;
    /* 1. actuation: gravity feed-forward at q_n, PD references at t_n+1, where kn_mb_step's implicit
     *    PD evaluates q_n+1 (controllers.h) */
    const kn_mb_actuation* act = NULL;
    if (tr->nctrl > 0) {
      st = kn_ctrl_compute((const kn_controller* const*)tr->ctrls, tr->nctrl, m, tr->data, w->t + dt, tr->q, tr->v,
                           tr->buf, err);
      if (st) break;
      act = &tr->buf->act;
    }
    /* 2. the tree's implicit step (no contact geometry is simulated yet) */
    st = kn_mb_step(m, tr->data, tr->q, tr->v, act, dt, NULL, err);
    if (st) break;
  }
  if (st) {
    for (int j = 0; j < w->ntree; j++) {
      kn_world_tree* tr = &w->trees[j];
      const kn_mb_model* m = tr->robot->model;
      memcpy(tr->q, tr->q_backup, (size_t)m->nq * sizeof *tr->q);
      memcpy(tr->v, tr->v_backup, (size_t)m->nv * sizeof *tr->v);
    }
    const kn_world_tree* tr = &w->trees[k];
    return kn_error_prefix(err, "%s: step %ld (t = %g s): robot '%s': ", w->scene->path, w->step + 1, w->t,
                           w->robots[tr->root].name);
  }
  w->step++;
  /* t from the step count, not accumulated, so long runs do not drift */
  w->t = (double)w->step * dt;
  return KN_OK;
}

uint64_t kn_world_state_hash(const kn_world* w) {
  uint64_t h = kn_hash_doubles(KN_HASH_SEED, &w->t, 1);
  for (int k = 0; k < w->ntree; k++) {
    const kn_world_tree* tr = &w->trees[k];
    h = kn_hash_doubles(h, tr->q, (size_t)tr->robot->model->nq);
    h = kn_hash_doubles(h, tr->v, (size_t)tr->robot->model->nv);
  }
  return h;
}

long kn_world_total_steps(const kn_world* w) {
  double n = w->scene->duration / w->scene->time_step;
  return (long)ceil(n * (1 - 1e-9));
}
