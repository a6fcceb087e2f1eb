/* The `none` backend: each tree alone by multibody's stand-in step (kn_mb_step: implicit PD and
 * couplers, no contact), kept for comparison with SAP and for robot-only scenes. */
#include <stdlib.h>

#include "sim/backend.h"

static kn_status none_create(kn_world* w, void** state, kn_error* err) {
  if (w->scene->doc->nwelds > 0)
    return kn_scene_fail(w->scene, err, KN_ERR_UNSUPPORTED, "welds", "backend none does not support welds (they are "
                         "SAP constraints); use contact.backend: sap");
  (void)err;
  (void)w;
  *state = NULL; /* colliders exist but `none` asks for no contact: the trees step alone */
  return KN_OK;
}

static kn_status none_step(kn_world* w, void* state, kn_error* err) {
  (void)state;
  const double dt = w->scene->time_step;
  for (int k = 0; k < w->ntree; k++) {
    kn_world_tree* tr = &w->trees[k];
    const kn_mb_model* m = tr->robot->model;
    /* actuation: gravity feed-forward at q_n, PD references at t_n+1, where kn_mb_step's implicit
     * PD evaluates q_n+1 (controllers.h) */
    const kn_mb_actuation* act = NULL;
    kn_status st;
    if (tr->nctrl > 0) {
      st = kn_ctrl_compute((const kn_controller* const*)tr->ctrls, tr->nctrl, m, tr->data, w->t + dt, tr->q, tr->v,
                           tr->buf, err);
      if (st) return kn_error_prefix(err, "%s '%s': controllers: ", kn_sim_tree_kind(w, k), kn_sim_tree_name(w, k));
      act = &tr->buf->act;
    }
    st = kn_mb_step(m, tr->data, tr->q, tr->v, act, dt, NULL, err);
    if (st) return kn_error_prefix(err, "%s '%s': ", kn_sim_tree_kind(w, k), kn_sim_tree_name(w, k));
  }
  w->ncontact = 0;
  w->last = (kn_step_stats){0};
  return KN_OK;
}

static void none_free(void* state) { (void)state; }

// (nothing) => nothing: each tree's step reads only its own (q, v)
static void none_save(const kn_world* w, const void* state, kn_state_out* out) { (void)w, (void)state, (void)out; }

// (no bytes) => KN_OK
static kn_status none_load(const kn_world* w, void* state, kn_state_in* in, kn_error* err) {
  (void)w, (void)state, (void)err;
  (void)in;
  return KN_OK;
}

const kn_backend kn_backend_none = {"none", none_create, none_step, none_free, none_save, none_load};

const kn_backend* kn_backend_find(const kn_scene* s, kn_error* err) {
  switch (s->backend) {
    case KN_BACKEND_SAP: return &kn_backend_sap;
    case KN_BACKEND_NONE: return &kn_backend_none;
    case KN_BACKEND_SMOOTH_FRICTION: return &kn_backend_smooth_friction;
    case KN_BACKEND_PENALTY: return &kn_backend_penalty;
    case KN_BACKEND_IPC: return &kn_backend_ipc;
    default:
      kn_scene_fail(s, err, KN_ERR_UNSUPPORTED, "contact.backend",
                    "backend '%s' has no row in kn_backend_find (every value of the scene's enum needs one: "
                    "sap, smooth_friction, penalty, ipc, none)",
                    kn_contact_backend_name(s->backend));
      return NULL;
  }
}

kn_status kn_world_reserve_contacts(kn_world* w, int n, kn_error* err) {
  if (n <= w->contact_cap) return KN_OK;
  int cap = w->contact_cap ? w->contact_cap : 16;
  while (cap < n) cap *= 2;
  kn_world_contact* c = realloc(w->contacts, (size_t)cap * sizeof *c);
  if (!c) return kn_fail(err, KN_ERR_NOMEM, "out of memory for %d contact points", n);
  w->contacts = c;
  w->contact_cap = cap;
  return KN_OK;
}
