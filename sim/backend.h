/* knead/sim internal: the contact-backend seam (ARCHITECTURE "The time step", step 3).
 *
 * A backend advances every tree's (q, v) by one time step. kn_world_step backs the state up
 * before calling step and restores it when step fails, so a backend may leave the trees
 * half-updated on failure; it must name the stage (and the constraint) in err. Adding penalty,
 * ipc or smooth_friction means one more file and one more row in kn_backend_find, nothing in the
 * SAP backend. */
#ifndef KNEAD_SIM_BACKEND_H
#define KNEAD_SIM_BACKEND_H

#include "sim/sim_internal.h"

typedef struct kn_backend {
  const char* name;
  /* (world with trees, controllers and colliders) => *state (scratch reused by every step) */
  kn_status (*create)(kn_world* w, void** state, kn_error* err);
  /* state_n => state_n+1 of every tree, plus w->last, w->contacts / w->ncontact */
  kn_status (*step)(kn_world* w, void* state, kn_error* err);
  void (*free)(void* state);
} kn_backend;

extern const kn_backend kn_backend_sap;
extern const kn_backend kn_backend_none;

/* the backend of the scene's contact.backend, or NULL with KN_ERR_UNSUPPORTED naming the key */
const kn_backend* kn_backend_find(const kn_scene* s, kn_error* err);

/* grow w->contacts to hold n points (the only allocation of a steady run) */
kn_status kn_world_reserve_contacts(kn_world* w, int n, kn_error* err);

#endif
