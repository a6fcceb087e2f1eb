/* knead/sim internal: the FEM boundaries the penalty backend's anchors walk (penalty_fem_meshes.c;
 * penalty-coulomb-friction.md §3.5-3.6; penalty/fem_walk.c): per FEM body its surface triangles with
 * their adjacency (built once), and per step its surface vertices as material points of the step,
 * added only for the bodies that carry an anchor. A contact whose anchor is in an FEM face (a rigid
 * feature point in a face, an FEM vertex at another FEM body's face; penalty_faces.c keeps the
 * anchor as a face point) walks that body's deformed boundary at every iterate. */
#ifndef KNEAD_SIM_PENALTY_FEM_MESHES_H
#define KNEAD_SIM_PENALTY_FEM_MESHES_H

#include "penalty/penalty.h"
#include "sim/backend_nonlinear.h"
#include "sim/sim_internal.h"

typedef struct {
  int n;                          /* FEM bodies */
  kn_penalty_fem_mesh* fem;       /* per body (mesh.nt 0: no surface) */
  kn_penalty_mesh_topology* top;
  int** pt;                       /* per body: its vertices' points this step (-1: none) */
  unsigned char* used;            /* per body: carries an anchor this step */
} kn_penalty_fem_meshes;

/* (world) => every FEM body's walkable boundary. KN_ERR_NOMEM, KN_ERR_INVALID (a bad surface) */
kn_status kn_penalty_fem_meshes_build(const kn_world* w, kn_penalty_fem_meshes* fm, kn_error* err);
void kn_penalty_fem_meshes_free(kn_penalty_fem_meshes* fm);
/* the step starts: no body used, no points */
void kn_penalty_fem_meshes_reset(kn_penalty_fem_meshes* fm);
/* (FEM body f, an anchor sum w_k x(vert_k)) => 1 with p the mesh point on the surface triangle of
 * those three vertices (weights in its order), body f marked used; 0 when no surface triangle has
 * them */
int kn_penalty_fem_meshes_point(kn_penalty_fem_meshes* fm, int f, const int vert[3], const double w[3],
                                kn_penalty_mesh_point* p);
/* the used bodies' surface vertices added to st->points (their clique's maps) and their positions
 * set at the step start. KN_ERR_NOMEM */
kn_status kn_penalty_fem_meshes_points(kn_penalty_fem_meshes* fm, const kn_nl_step* st, kn_error* err);

#endif
