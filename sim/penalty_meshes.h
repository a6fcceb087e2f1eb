/* knead/sim internal: the penalty backend's anchors on rigid mesh colliders (penalty_meshes.c;
 * penalty-coulomb-friction.md §3.5-3.6): a contact whose anchor side is a triangle-mesh collider
 * relaxes its anchor over the mesh (penalty/, kn_penalty_mesh_relax) in the collider's geometry
 * frame instead of against the detection's plane. The anchor itself stays where the plane path
 * keeps it (the stiction tables' point in the collider's frame), projected onto the mesh at each
 * step's start, so saved states and the matching of contacts across steps are unchanged. */
#ifndef KNEAD_SIM_PENALTY_MESHES_H
#define KNEAD_SIM_PENALTY_MESHES_H

#include "penalty/penalty.h"
#include "sim/sim_internal.h"

typedef struct {
  int n;                          /* colliders */
  kn_penalty_mesh* mesh;          /* per collider; nt 0: not a mesh (or not usable: the plane path) */
  kn_penalty_mesh_topology* top;
  double** sphere;                /* per collider: its triangles' bounding spheres (tsphere) */
} kn_penalty_meshes;

/* (world) => every mesh collider's walkable mesh (adjacency built once); a mesh whose signed volume
 * is not positive (not wound outward) keeps the plane path. KN_ERR_NOMEM */
kn_status kn_penalty_meshes_build(const kn_world* w, kn_penalty_meshes* pm, kn_error* err);
void kn_penalty_meshes_free(kn_penalty_meshes* pm);
/* collider i's mesh, NULL when it has none */
const kn_penalty_mesh* kn_penalty_meshes_get(const kn_penalty_meshes* pm, int i);
/* (pc's other fields set, its n the mesh's outward normal; the mesh m of the collider at pose G
 * that carries the anchor; the anchor p in G's frame, a point on or near the mesh; xp the spring's
 * particle at the step start, world) => pc->mesh, R, o, the anchor Xm (p's nearest point of the
 * mesh, on the face whose normal is nearest n where several are as near) and X. The frame is the
 * plane path's: Z = phi0 n at the step start, the anchor X at the tangential part of (anchor -
 * particle), so only the normal gap comes from detection and the tangential offset from the
 * tracked points (a mesh vertex found again under a sliding face is the same material point of
 * the face, not a new one) */
void kn_penalty_meshes_start(const kn_penalty_mesh* m, const kn_pose* G, const double p[3], const double xp[3],
                             kn_penalty_contact* pc);

#endif
