/* knead/sim internal: the contact-backend seam (ARCHITECTURE "The time step", step 3).
 *
 * A backend advances every tree's (q, v) by one time step. kn_world_step backs the state up
 * before calling step and restores it when step fails, so a backend may leave the trees
 * half-updated on failure; it must name the stage (and the constraint) in err. Adding penalty,
 * ipc or smooth_friction means one more file and one more row in kn_backend_find, nothing in the
 * SAP backend. */
#ifndef KNEAD_SIM_BACKEND_H
#define KNEAD_SIM_BACKEND_H

#include <stdint.h>

#include "sim/sim_internal.h"

/* The bytes of a saved state (state_file.c): appended little-endian, whatever the host. A failed
 * allocation sets nomem and drops everything after it. */
typedef struct {
  unsigned char* data;
  size_t len, cap;
  int nomem;
} kn_state_out;
/* and read back: each get returns 0 (reading nothing) when fewer bytes than asked are left */
typedef struct {
  const unsigned char* p;
  size_t len, pos;
} kn_state_in;
void kn_state_put_u64(kn_state_out* o, uint64_t x);
void kn_state_put_f64(kn_state_out* o, const double* x, size_t n);
void kn_state_put_i32(kn_state_out* o, const int* x, size_t n);
int kn_state_get_u64(kn_state_in* in, uint64_t* x);
int kn_state_get_f64(kn_state_in* in, double* x, size_t n);
int kn_state_get_i32(kn_state_in* in, int* x, size_t n);

typedef struct kn_backend {
  const char* name;
  /* (world with trees, controllers and colliders) => *state (scratch reused by every step) */
  kn_status (*create)(kn_world* w, void** state, kn_error* err);
  /* state_n => state_n+1 of every tree, plus w->last, w->contacts / w->ncontact */
  kn_status (*step)(kn_world* w, void* state, kn_error* err);
  void (*free)(void* state);
  /* (state) => the part of it that the next steps read (stiction anchors, warm starts) appended
   * to out, in the backend's own layout (kn_world_save_state) */
  void (*save)(const kn_world* w, const void* state, kn_state_out* out);
  /* (exactly the bytes save wrote) => that part of state replaced, all or nothing: on failure
   * (KN_ERR_PARSE saying what is wrong, or KN_ERR_NOMEM) state is unchanged */
  kn_status (*load)(const kn_world* w, void* state, kn_state_in* in, kn_error* err);
} kn_backend;

extern const kn_backend kn_backend_sap;
extern const kn_backend kn_backend_none;
extern const kn_backend kn_backend_smooth_friction;
extern const kn_backend kn_backend_penalty;
extern const kn_backend kn_backend_ipc;

/* the backend of the scene's contact.backend, or NULL with KN_ERR_UNSUPPORTED naming the key */
const kn_backend* kn_backend_find(const kn_scene* s, kn_error* err);

/* grow w->contacts to hold n points (the only allocation of a steady run) */
kn_status kn_world_reserve_contacts(kn_world* w, int n, kn_error* err);

#endif
