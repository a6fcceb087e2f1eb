/* knead/sim internal: the world's triangle surfaces for the ipc backend's mesh-mesh pairs
 * (ipc_surfaces.c; ipc/ipc.h kn_ipc_mesh): every FEM body's boundary and every rigid triangle-mesh
 * collider, and with contact.ipc.box_surfaces every box collider (collected by sim/mesh_surfaces.c,
 * shared with the penalty backend), the pairs of them that can touch (FEM-FEM, an FEM body with
 * itself, FEM-collider, two colliders the detection's filters let touch; not an FEM body and a
 * collider it is attached to), and per step their vertices as material points. The detection's
 * candidates between two such surfaces are replaced by the mesh pairs. */
#ifndef KNEAD_SIM_IPC_SURFACES_H
#define KNEAD_SIM_IPC_SURFACES_H

#include "ipc/ipc.h"
#include "sim/backend_nonlinear.h"
#include "sim/mesh_surfaces.h"

typedef struct {
  kn_ipc_mesh mesh;       /* mesh.surf, mesh.pairs, mesh.mu point into the arrays below */
  kn_mesh_surfaces ms;    /* the surfaces, their vertices' points (mesh.surf[i].pt into ms.pt) */
  int nsurf;
  int* source;            /* per surface: FEM body f >= 0, or -(collider k) - 1 */
  int** owned;            /* per surface: its edges (owned) */
  int* pairs;
  double* mu;
} kn_ipc_surfaces;

/* (world, boxes: rigid box colliders are surfaces too (contact.ipc.box_surfaces)) => the surfaces
 * and their pairs (npair 0: no mesh pairs). KN_ERR_NOMEM */
kn_status kn_ipc_surfaces_create(kn_world* w, int boxes, kn_ipc_surfaces* s, kn_error* err);
void kn_ipc_surfaces_free(kn_ipc_surfaces* s);
/* (step at q_n, x_n) => every surface vertex added to st->points (FEM vertices by their clique's map,
 * collider vertices as points of their body, fixed in the world when it is). KN_ERR_NOMEM */
kn_status kn_ipc_surfaces_points(kn_ipc_surfaces* s, const kn_nl_step* st, kn_error* err);
/* (step, v, per tree the kinematics at q_n+1) => x (3 per vertex, in surface order): where advance
 * put every surface vertex, FEM vertices by their maps, collider vertices through their body's pose
 * at q_n+1 (the real rigid update, not the linear map) */
void kn_ipc_surfaces_end(const kn_ipc_surfaces* s, const kn_nl_step* st, const double* v, kn_mb_data* const* data,
                         double* x);
/* (world at t = 0, per tree its kinematics, tol) => 1 when two surfaces with mesh pairs cross (an edge
 * of one through a triangle of the other, its ends more than tol from the triangle's plane), their
 * indices in *a, *b; 0 none; -1 out of memory */
int kn_ipc_surfaces_crossing(const kn_ipc_surfaces* s, const kn_world* w, kn_mb_data* const* data, double tol, int* a,
                             int* b);
/* surface i => "the deformable 'name'" or "the collider 'name'" in buf */
void kn_ipc_surfaces_name(const kn_ipc_surfaces* s, const kn_world* w, int i, char* buf, size_t cap);
/* candidate => 1 when its two sides are surfaces with mesh pairs between them (the pairs replace it) */
int kn_ipc_surfaces_replace(const kn_ipc_surfaces* s, const kn_contact_candidate* c);

/* outputs, after the step at v (t: the step's term over these surfaces): every pair with a barrier
 * or lagged friction as a contact row (kn_sim_contacts_add_pair), its normal and gap the distance's,
 * its force the barrier's and the friction's. KN_ERR_NOMEM */
kn_status kn_ipc_surfaces_record(const kn_ipc_surfaces* s, const kn_ipc_term* t, kn_world* w, const double* v,
                                 kn_error* err);

#endif
