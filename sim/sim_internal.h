/* knead/sim internals shared by the files of this folder (not installed). */
#ifndef KNEAD_SIM_INTERNAL_H
#define KNEAD_SIM_INTERNAL_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "contact/contact.h"
#include "sap/sap.h"
#include "sim/sim.h"

/* One file embedded at build time by sim/embed.cmake (generated knead_embedded.c). */
typedef struct {
  const char* name;           /* "default_scene.yaml", "models/knead_arm7.urdf" */
  const unsigned char* data;  /* NUL-terminated */
  size_t len;                 /* without the NUL */
} kn_embedded_entry;

extern const kn_embedded_entry kn_embedded_table[];
extern const int kn_embedded_ntable;

/* JSON through jansson (json.c): every JSON file knead reads or writes goes through these. */
/* (number) => a JSON real, or null when it is NaN or infinite (JSON has neither) */
json_t* kn_json_real(double v);
/* (document, path, jansson dump flags) => the file written, ending with a newline; KN_ERR_IO naming
 * the path */
kn_status kn_json_write_file(const json_t* doc, const char* path, size_t flags, kn_error* err);
/* (path) => its JSON document (*out, the caller's reference); KN_ERR_IO when it cannot be read,
 * KN_ERR_PARSE "path:line:column: jansson's message" when it is not JSON */
kn_status kn_json_read_file(const char* path, json_t** out, kn_error* err);
/* (json_object_set_new / json_array_append_new results OR-ed) => KN_OK, or KN_ERR_NOMEM naming what
 * (jansson fails the same way on memory and on a string that is not UTF-8) */
kn_status kn_json_built(int failures, const char* what, kn_error* err);
/* (JSON object) => knead_version, git_revision, build_id and build set on it: which knead wrote the
 * file (summary.json, golden baselines); returns the failures OR-ed as kn_json_built takes them */
int kn_json_set_build(json_t* doc);

/* The libyaml node tree of a scene, kept to report the line of any key path. */
kn_status kn_scene_lines_parse(const char* yaml, size_t len, const char* path, kn_scene_lines** out, kn_error* err);
void kn_scene_lines_free(kn_scene_lines* l);
/* 1-based line of the node at key_path ("robots[1].controller.kp"; for a key, the key's line),
 * 0 when the path does not exist. */
int kn_scene_lines_find(const kn_scene_lines* l, const char* key_path);
/* the keys of the root mapping, for rejecting sections that are not simulated yet */
int kn_scene_lines_root_has(const kn_scene_lines* l, const char* key);
/* Every scalar of the document with its key path ("objects[0].friction", "gravity[2]") and line,
 * depth first in document order; aliases are visited where they are used. Stops at the first
 * callback that returns non-zero and returns that value. */
typedef int (*kn_scene_scalar_fn)(void* ctx, const char* key_path, const char* value, int line);
int kn_scene_lines_each_scalar(const kn_scene_lines* l, kn_scene_scalar_fn fn, void* ctx);

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
/* the name of tree k's robot or object, for messages */
const char* kn_sim_tree_name(const kn_world* w, int k);
/* "robot" or "object" */
const char* kn_sim_tree_kind(const kn_world* w, int k);

/* The world's cliques (cliques.c), after its trees, deformables and colliders */
kn_status kn_sim_cliques_build(kn_world* w, kn_error* err);
void kn_sim_cliques_free(kn_world* w);

/* The scene's deformables => w->fems (deformables.c); errors name the scene key. */
kn_status kn_sim_deformables_build(kn_world* w, kn_error* err);
void kn_sim_deformables_free(kn_world* w);
/* (scene name) => tree and body index: "world" (tree -1), an object (its root), "object/link" or
 * "robot/link"; 0 when nothing matches (deformables.c) */
int kn_sim_find_body(const kn_world* w, const char* name, int* tree, int* body);
/* copy every FEM body's (x, v, R0) to its backup (restore = 0) or back (restore = 1) */
void kn_sim_deformables_backup(kn_world* w, int restore);
/* The scene's MPM deformables => w->mpms (mpm_world.c); backup/restore of their particle state;
 * their state chained into h */
kn_status kn_sim_mpm_build(kn_world* w, kn_error* err);
void kn_sim_mpm_free(kn_world* w);
void kn_sim_mpm_backup(kn_world* w, int restore);
uint64_t kn_sim_mpm_hash(const kn_world* w, uint64_t h);
/* trajectory.csv's header line "t,robot/joint,..." (trajectory.c) */
void kn_sim_trajectory_header(const kn_world* w, FILE* f);
/* (world) => path written: trajectory.json, trajectory.csv's columns with unit and meaning */
kn_status kn_sim_trajectory_describe(const kn_world* w, const char* path, kn_error* err);

#endif
