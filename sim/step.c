/* The world's time step: the scene's contact backend advances every tree (sim/backend.h). Every
 * tree's state is backed up first so a failure anywhere leaves the whole world at step n. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/backend.h"

//---- the state after a step: finite and within bounds, or the step fails ----

// (values x[0..n) of one kind) => index of the first non-finite or |x| > bound, or -1
static long first_bad(const double* x, long n, double bound) {
  for (long i = 0; i < n; i++)
    if (!(fabs(x[i]) <= bound)) return i;
  return -1;
}

// (tree k, coordinate index i, 1 for q / 0 for v) => "robot 'arm' body 'link3'" or "object 'box'"
static void name_tree_coordinate(const kn_world* w, int k, long i, int is_q, char* out, size_t cap) {
  const kn_mb_model* m = w->trees[k].robot->model;
  int b = 0;
  for (int j = 0; j < m->nbody; j++) {
    int adr = is_q ? m->bodies[j].q_adr : m->bodies[j].v_adr, n = is_q ? m->bodies[j].nq : m->bodies[j].nv;
    if (i >= adr && i < adr + n) b = j;
  }
  const kn_world_tree* tr = &w->trees[k];
  if (tr->object >= 0) {
    snprintf(out, cap, "object '%s' body '%s'", w->objects[tr->object].name, m->bodies[b].name);
    return;
  }
  const char* robot = tr->root >= 0 ? w->robots[tr->root].name : "?";
  for (int r = 0; r < w->nrobot; r++)
    if (w->robots[r].tree == k && b >= w->robots[r].body_offset && b < w->robots[r].body_offset + w->robots[r].nbody)
      robot = w->robots[r].name;
  snprintf(out, cap, "robot '%s' body '%s'", robot, m->bodies[b].name);
}

/* (a deformable's n points: positions x, velocities v, 3 each) => KN_OK, or KN_ERR_NUMERIC naming the
 * first point whose position or velocity is not finite or beyond the bounds */
static kn_status check_points(const char* body, const char* point, const double* x, const double* v, int n,
                              const char* hint, kn_error* err) {
  long i = first_bad(x, 3 * (long)n, KN_WORLD_MAX_COORDINATE);
  if (i >= 0)
    return kn_fail(err, KN_ERR_NUMERIC, "deformable '%s' %s %ld: position %g after the step (must be finite, "
                   "|x| <= %g m); %s", body, point, i / 3, x[i], KN_WORLD_MAX_COORDINATE, hint);
  if ((i = first_bad(v, 3 * (long)n, KN_WORLD_MAX_SPEED)) >= 0)
    return kn_fail(err, KN_ERR_NUMERIC, "deformable '%s' %s %ld: velocity %g after the step (must be finite, "
                   "|v| <= %g m/s); %s", body, point, i / 3, v[i], KN_WORLD_MAX_SPEED, hint);
  return KN_OK;
}

/* (state n+1 just computed) => KN_OK, or KN_ERR_NUMERIC naming the first body whose coordinate or
 * velocity is not finite or beyond the bounds documented at kn_world_step */
static kn_status check_new_state(const kn_world* w, kn_error* err) {
  char who[300];
  const char* hint = "the step diverged (time_step too large, or a stiffness or mass beyond what double precision "
                     "resolves?)";
  for (int k = 0; k < w->ntree; k++) {
    const kn_world_tree* tr = &w->trees[k];
    const kn_mb_model* m = tr->robot->model;
    long i = first_bad(tr->q, m->nq, KN_WORLD_MAX_COORDINATE);
    if (i >= 0) {
      name_tree_coordinate(w, k, i, 1, who, sizeof who);
      return kn_fail(err, KN_ERR_NUMERIC, "%s: coordinate q[%ld] = %g after the step (must be finite, |q| <= %g m or "
                     "rad); %s", who, i, tr->q[i], KN_WORLD_MAX_COORDINATE, hint);
    }
    i = first_bad(tr->v, m->nv, KN_WORLD_MAX_SPEED);
    if (i >= 0) {
      name_tree_coordinate(w, k, i, 0, who, sizeof who);
      return kn_fail(err, KN_ERR_NUMERIC, "%s: velocity v[%ld] = %g after the step (must be finite, |v| <= %g m/s or "
                     "rad/s); %s", who, i, tr->v[i], KN_WORLD_MAX_SPEED, hint);
    }
  }
  for (int f = 0; f < w->nfem; f++) {
    const kn_fem_body* b = w->fems[f].body;
    kn_status st = check_points(w->fems[f].name, "vertex", b->x, b->v, b->mesh.nvert, hint, err);
    if (st) return st;
  }
  for (int p = 0; p < w->nmpm; p++) {
    const kn_mpm_body* b = w->mpms[p].body;
    kn_status st = check_points(w->mpms[p].name, "particle", b->x, b->v, b->np, hint, err);
    if (st) return st;
  }
  return KN_OK;
}

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
  if (!st) st = check_new_state(w, err);
  if (st) {
    kn_sim_deformables_backup(w, 1);
    for (int j = 0; j < w->ntree; j++) {
      kn_world_tree* tr = &w->trees[j];
      const kn_mb_model* m = tr->robot->model;
      memcpy(tr->q, tr->q_backup, (size_t)m->nq * sizeof *tr->q);
      memcpy(tr->v, tr->v_backup, (size_t)m->nv * sizeof *tr->v);
    }
    kn_world_notify_failed(w, err ? err->msg : "step failed");
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
  kn_world_notify_stepped(w);
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
