/* The step's contact candidates across body kinds (contact/contact.h), in one list: the rigid pairs
 * of kn_contact_detect_rigid (speculative, contact.margin + each collider's reach), the FEM contacts
 * of kn_contact_fem_detect, and MPM particles inside rigid colliders (kn_contact_detect_particles),
 * in that order. This file only hands the world's bodies to contact/ as plain views and keeps, per
 * MPM candidate, the deformable and particle the outputs name. The candidates name their sides as
 * colliders, FEM surface points or particles; the backends turn those into cliques' point maps
 * (coupling/coupling.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/candidates.h"

struct kn_sim_candidates_state {
  kn_contact_candidate_list list;
  kn_soft_collider* soft;       /* per collider */
  kn_contact_fem* fems;         /* per FEM body, refreshed at each detection */
  kn_contact_fem_detector* fem;
  kn_contact_particles* sets;   /* per MPM body */
  kn_sim_mpm_contact* mpm;
  int mcap;
};

// (FEM body) => the view contact detection reads (its mesh and positions; no attachments)
static kn_contact_fem body_view(const kn_fem_body* b) {
  return (kn_contact_fem){.nvert = b->mesh.nvert,
                          .X = b->mesh.X,
                          .x = b->x,
                          .fixed = b->fixed,
                          .free_index = b->free_index,
                          .nsurf = b->mesh.nsurf,
                          .surf = b->mesh.surf};
}

// (world FEM body) => its full view: surface vertices, attachments and their targets, material
kn_contact_fem kn_sim_fem_view(const kn_world_fem* F) {
  kn_contact_fem v = body_view(F->body);
  v.nsurf_vert = F->nsurf_vert, v.surf_vert = F->surf_vert;
  v.nattach = F->body->nattach, v.attach_vertex = F->body->attach_vertex, v.attach_target = F->body->attach_body;
  v.target_tree = F->attach_tree, v.target_body = F->attach_link;
  v.material = F->material;
  return v;
}

kn_soft_collider kn_sim_soft_collider(const kn_world* w, int k) {
  return (kn_soft_collider){w->colliders[k].tree, w->colliders[k].body, w->colliders[k].soft};
}

double kn_sim_fem_surface_distance(const kn_fem_body* b, const double x[3]) {
  kn_contact_fem v = body_view(b);
  kn_contact_surface_hit h;
  kn_contact_surface_query_brute(&v, x, &h);
  return h.phi;
}

kn_status kn_sim_candidates_create(const kn_world* w, kn_sim_candidates* c, kn_error* err) {
  memset(c, 0, sizeof *c);
  kn_sim_candidates_state* s = c->state = kn_calloc(1, sizeof *c->state);
  if (!s) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  s->soft = kn_calloc((size_t)w->ncollider + 1, sizeof *s->soft);
  s->fems = kn_calloc((size_t)w->nfem + 1, sizeof *s->fems);
  s->sets = kn_calloc((size_t)w->nmpm + 1, sizeof *s->sets);
  if (!s->soft || !s->fems || !s->sets) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  for (int k = 0; k < w->ncollider; k++)
    s->soft[k] = kn_sim_soft_collider(w, k);
  for (int i = 0; i < w->nfem; i++) s->fems[i] = kn_sim_fem_view(&w->fems[i]);
  if (w->nfem == 0) return KN_OK;
  kn_status st = kn_contact_fem_detector_create(s->fems, w->nfem, 0, &s->fem, err);
  /* penalty's springs need the whole overlap of a box and an FEM block (contact.h) */
  if (!st && w->scene->backend == KN_BACKEND_PENALTY) kn_contact_fem_detector_set_polygon(s->fem, 1);
  return st;
}

void kn_sim_candidates_free(kn_sim_candidates* c) {
  kn_sim_candidates_state* s = c->state;
  if (!s) return;
  kn_contact_fem_detector_free(s->fem);
  kn_contact_candidate_list_free(&s->list);
  free(s->soft), free(s->fems), free(s->sets), free(s->mpm);
  free(s);
  memset(c, 0, sizeof *c);
}

kn_status kn_sim_detect_rigid(const kn_world* w, const kn_pose* X_WG, const double* reach, kn_sim_candidates* c,
                              kn_error* err) {
  kn_sim_candidates_state* s = c->state;
  kn_status st = KN_OK;
  s->list.n = 0;
  c->nfem = 0, c->nmpm = 0;
  c->pts = NULL, c->npts = 0;
  if (w->collision) {
    st = kn_contact_detect_rigid(w->collision, X_WG, w->scene->margin + c->extra_margin, reach, &c->pts, &c->npts, &s->list, err);
    if (st) kn_error_prefix(err, "contact detection: ");
  }
  c->c = s->list.c, c->n = s->list.n;
  c->first_fem = c->n;
  return st;
}

// (MPM candidates [first_mpm, n)) => c->mpm: each one's deformable and particle (the candidates
// come per MPM body in order, and a body's particles are the range [first, first + np) of its grid)
static kn_status mpm_names(const kn_world* w, kn_sim_candidates* c, kn_error* err) {
  kn_sim_candidates_state* s = c->state;
  if (c->nmpm > s->mcap) {
    int cap = s->mcap ? s->mcap : 256;
    while (cap < c->nmpm) cap *= 2;
    kn_sim_mpm_contact* m = realloc(s->mpm, (size_t)cap * sizeof *m);
    if (!m) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
    s->mpm = m, s->mcap = cap;
  }
  int i = 0;
  for (int j = 0; j < c->nmpm; j++) {
    const kn_contact_side* a = &c->c[c->first_mpm + j].a;
    while (a->body != w->mpms[i].grid || a->point[0] < w->mpms[i].first ||
           a->point[0] >= w->mpms[i].first + w->mpms[i].body->np)
      i++;
    s->mpm[j] = (kn_sim_mpm_contact){i, a->point[0] - w->mpms[i].first};
  }
  c->mpm = s->mpm;
  return KN_OK;
}

/* the penalty backend's speculative reach for the FEM bodies' contacts with the colliders, as the
 * rigid pairs' (contact.margin in scene.h): the farthest a free FEM vertex (dt |v| + dt^2 |g|) and a
 * collider (kn_sim_collider_reach) can travel within the step, so that a vertex and a face closing
 * within the step are candidates at its start and their spring acts from where they meet. The FEM
 * vertices' contacts with other FEM bodies' faces get it too, except beside a fold (fem_detect.c:
 * without that the FEM block on the FEM slab, test_penalty_fem_incline, slid 0.3108 m instead of
 * 0.4048 m); one vertex's reach, not two bodies' closing speed. Without it a vertex reached the ground unresisted
 * and the next step's spring threw it back out at the speed it came in (a restitution of ~1: the
 * light pyramid supports, issue 19, rocked and hopped on their ground vertices for seconds); a
 * speculative candidate carries no force unless the gap closes (penalty/term.c). 0 for the other
 * backends (their results unchanged). */
static double fem_reach(const kn_world* w) {
  if (w->scene->backend != KN_BACKEND_PENALTY) return 0;
  const double dt = w->scene->time_step;
  double v2 = 0, collider = 0;
  for (int i = 0; i < w->nfem; i++) {
    const kn_fem_body* b = w->fems[i].body;
    for (int j = 0; j < b->mesh.nvert; j++) {
      const double* v = b->v + 3 * j;
      v2 = fmax(v2, v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    }
  }
  for (int k = 0; w->collision && k < w->ncollider; k++) collider = fmax(collider, kn_sim_collider_reach(w, k, dt));
  double reach = dt * sqrt(v2) + dt * dt * kn_vec3_norm(w->scene->gravity) + collider;
  return isfinite(reach) ? reach : 0.0;
}

kn_status kn_sim_detect_deformables(const kn_world* w, const kn_pose* X_WG, kn_sim_candidates* c, kn_error* err) {
  kn_sim_candidates_state* s = c->state;
  const double margin = w->scene->margin + c->extra_margin;
  kn_status st = KN_OK;
  s->list.n = c->first_fem;
  if (w->nfem > 0) {
    for (int i = 0; i < w->nfem; i++) s->fems[i] = kn_sim_fem_view(&w->fems[i]);
    kn_contact_fem_detector_set_reach(s->fem, fem_reach(w));
    st = kn_contact_fem_detect(s->fem, s->fems, w->collision, s->soft, X_WG, margin, &s->list, err);
    if (st) kn_error_prefix(err, "contact detection (deformables): ");
  }
  c->nfem = s->list.n - c->first_fem;
  c->first_mpm = s->list.n;
  c->nmpm = 0;
  if (!st && w->nmpm > 0 && w->collision) {
    for (int i = 0; i < w->nmpm; i++) {
      const kn_world_mpm* M = &w->mpms[i];
      s->sets[i] = (kn_contact_particles){M->body->np, M->body->x, M->grid, M->first, M->material, M->contact_radius};
    }
    st = kn_contact_detect_particles(s->sets, w->nmpm, w->collision, s->soft, X_WG, margin, &s->list, err);
    c->c = s->list.c, c->nmpm = s->list.n - c->first_mpm;
    if (!st) st = mpm_names(w, c, err);
    if (st) kn_error_prefix(err, "contact detection (MPM): ");
  }
  c->c = s->list.c, c->n = s->list.n;
  return st;
}

void kn_sim_candidate_describe(const kn_world* w, const kn_sim_candidates* c, int i, char* buf, size_t cap) {
  const kn_contact_candidate* cc = &c->c[i];
  if (cc->origin == KN_CANDIDATE_PARTICLE_RIGID) {
    const kn_sim_mpm_contact* m = &c->mpm[cc->source];
    snprintf(buf, cap, "contact of MPM body '%s' particle %d with '%s'", w->mpms[m->mpm].name, m->local,
             w->colliders[cc->b.body].name);
  } else if (cc->origin == KN_CANDIDATE_RIGID) {
    snprintf(buf, cap, "contact between '%s' and '%s'", w->colliders[cc->a.body].name, w->colliders[cc->b.body].name);
  } else {
    snprintf(buf, cap, "contact of deformable '%s' vertex %d with '%s'", w->fems[cc->b.body].name, cc->b.point[0],
             cc->a.kind == KN_SIDE_COLLIDER ? w->colliders[cc->a.body].name : w->fems[cc->a.body].name);
  }
}

int kn_sim_side_clique(const kn_world* w, const kn_contact_side* sd) {
  if (sd->kind == KN_SIDE_SURFACE) return w->first_fem_clique + sd->body;
  if (sd->kind == KN_SIDE_PARTICLE) return w->first_mpm_clique + sd->body;
  int tree = w->colliders[sd->body].c.clique;
  return tree >= 0 ? w->clique_of_tree[tree] : -1;
}
