/* knead/sim internals shared by the files of this folder (not installed). */
#ifndef KNEAD_SIM_INTERNAL_H
#define KNEAD_SIM_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "contact/contact.h"
#include "sap/sap.h"
#include "sim/sim.h"

/* (world after a successful step / a failed one) => every observer's stepped / failed called
 * (observers.c, from kn_world_step) */
void kn_world_notify_stepped(const kn_world* w);
void kn_world_notify_failed(const kn_world* w, const char* message);
/* (world being freed) => every observer freed, the last added first (observers.c) */
void kn_sim_observers_free(kn_world* w);

/* objects[i] of the scene => its tree as a kn_robot (objects.c) and its initial q (q0 holds nq0
 * doubles, at least the model's nq; free primitives need 7; q0 NULL: the tree only, for a URDF
 * object of any nq). Errors name the scene key. */
kn_status kn_sim_object_load(const kn_scene* s, unsigned i, kn_robot** out, double* q0, int nq0, kn_error* err);

/* The colliders of every tree (robots' COLLISION geometry, objects' shapes) with their
 * materials, the collision scene and the filter: same body (bodies welded by FIXED joints count
 * as one), a body and its parent across a non-floating joint, world-fixed pairs, and the scene's
 * contact.exclude pairs (colliders.c). */
kn_status kn_sim_colliders_build(kn_world* w, kn_error* err);
void kn_sim_colliders_free(kn_world* w);
/* (world at t = 0) => one warning in w->warnings per pair of colliders, FEM or MPM bodies whose
 * deepest contact point (the step's detection, its filter) lies deeper than contact.margin
 * (overlap.c); nothing with backend none. Errors: KN_ERR_NOMEM, detection errors. */
kn_status kn_sim_initial_overlaps(kn_world* w, kn_error* err);
/* world pose of collider i's geometry frame from its tree's kinematics (X_wb) */
void kn_sim_collider_pose(const kn_world* w, int i, kn_pose* X_WG);
/* (tree kinematics at (q_n, v_n), dt) => how far any point of collider i can travel in the step:
 * dt (|v_o| + |omega| r) + dt^2 |g|, with v_o, omega its geometry origin's velocity and r its
 * radius; 0 for world-fixed colliders. Feeds speculative detection (kn_collision_detect_reach). */
double kn_sim_collider_reach(const kn_world* w, int i, double dt);

/* The world's cliques (cliques.c), after its trees, deformables and colliders */
kn_status kn_sim_cliques_build(kn_world* w, kn_error* err);
void kn_sim_cliques_free(kn_world* w);

/* The scene's deformables => w->fems (deformables.c); errors name the scene key. */
kn_status kn_sim_deformables_build(kn_world* w, kn_error* err);
void kn_sim_deformables_free(kn_world* w);
/* copy every FEM body's (x, v, R0) to its backup (restore = 0) or back (restore = 1) */
void kn_sim_deformables_backup(kn_world* w, int restore);
/* The scene's MPM deformables => w->mpms (mpm_world.c); backup/restore of their particle state;
 * their state chained into h */
kn_status kn_sim_mpm_build(kn_world* w, kn_error* err);
void kn_sim_mpm_free(kn_world* w);
void kn_sim_mpm_backup(kn_world* w, int restore);
uint64_t kn_sim_mpm_hash(const kn_world* w, uint64_t h);

#endif
