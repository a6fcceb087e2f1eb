/* The penalty backend's spring stiffness per contact from the bodies' contact materials
 * (penalty_stiffness.h): the scene's stiffness keys, each unset side standing as 2 k. */
#include <math.h>
#include <stdlib.h>

#include "sim/penalty_stiffness.h"

// a stiffness key's side value: the key, else 2 k (a pair of unset sides: k exactly)
static double side_of(const double* key, double k) { return key ? *key : 2 * k; }

double kn_penalty_stiffness_series(double ka, double kb) {
  kn_contact_material a = {.stiffness = ka}, b = {.stiffness = kb};
  return kn_contact_material_combine(&a, &b).stiffness;
}

kn_status kn_penalty_stiffness_build(const kn_world* w, double k, kn_penalty_stiffness* ps, kn_error* err) {
  const kn_scene_doc* doc = w->scene->doc;
  *ps = (kn_penalty_stiffness){.k = k};
  ps->collider = malloc(((size_t)w->ncollider + 1) * sizeof *ps->collider);
  ps->fem = malloc(((size_t)w->nfem + 1) * sizeof *ps->fem);
  ps->mpm = malloc(((size_t)w->nmpm + 1) * sizeof *ps->mpm);
  if (!ps->collider || !ps->fem || !ps->mpm) {
    kn_penalty_stiffness_free(ps);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", w->scene->path);
  }
  for (int i = 0; i < w->ncollider; i++) { /* sim/colliders.c: an object's keys, or its robot's contact: */
    int o = w->colliders[i].owner;
    const kn_scene_robot* r = o >= 0 ? &doc->robots[o] : NULL;
    ps->collider[i] = side_of(r ? (r->contact ? r->contact->stiffness : NULL) : doc->objects[-o - 1].stiffness, k);
  }
  for (unsigned i = 0, f = 0; i < doc->ndeformables; i++) /* sim/deformables.c: FEM bodies in scene order */
    if (doc->deformables[i].model != KN_DEFORMABLE_MPM) ps->fem[f++] = side_of(doc->deformables[i].stiffness, k);
  for (int i = 0; i < w->nmpm; i++) ps->mpm[i] = side_of(doc->deformables[w->mpms[i].scene_index].stiffness, k);
  return KN_OK;
}

void kn_penalty_stiffness_free(kn_penalty_stiffness* ps) {
  free(ps->collider), free(ps->fem), free(ps->mpm);
  ps->collider = ps->fem = ps->mpm = NULL;
}

// side s of candidate i (an MPM side: its particle's body, c->mpm)
static double side_stiffness(const kn_penalty_stiffness* ps, const kn_sim_candidates* c, int i,
                             const kn_contact_side* s) {
  if (s->kind == KN_SIDE_COLLIDER) return ps->collider[s->body];
  if (s->kind == KN_SIDE_SURFACE) return ps->fem[s->body];
  return ps->mpm[c->mpm[c->c[i].source].mpm];
}

kn_status kn_penalty_stiffness_pair(const kn_penalty_stiffness* ps, const kn_world* w, const kn_sim_candidates* c,
                                    int i, double* k, kn_error* err) {
  const kn_contact_candidate* cc = &c->c[i];
  *k = kn_penalty_stiffness_series(side_stiffness(ps, c, i, &cc->a), side_stiffness(ps, c, i, &cc->b));
  if (isfinite(*k)) return KN_OK;
  char what[256];
  kn_sim_candidate_describe(w, c, i, what, sizeof what);
  return kn_fail(err, KN_ERR_INVALID,
                 "penalty: the %s: both sides set stiffness inf (rigid), and a penalty spring needs a finite "
                 "stiffness; set one side's stiffness (N/m)", what);
}
