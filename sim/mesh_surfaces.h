/* knead/sim internal: the world's triangle surfaces whose vertices are material points of the step
 * (mesh_surfaces.c), shared by the backends' mesh pairs: the penalty backend's continuous mode
 * (penalty_cpf.c) and ipc's mesh term (ipc_surfaces.c). Every FEM body's boundary first, in body
 * order, then the rigid colliders with a triangle surface (kn_shape_triangles), in collider order;
 * the vertices of all of them numbered one after the other (surface i's from s[i].first). */
#ifndef KNEAD_SIM_MESH_SURFACES_H
#define KNEAD_SIM_MESH_SURFACES_H

#include "sim/backend_nonlinear.h"
#include "sim/candidates.h"

typedef struct {
  int fem, collider;       /* which body (the other -1) */
  int clique;              /* its world clique, -1 fixed in the world */
  int nv, nt, first;       /* vertices, triangles, first global vertex id */
  const double* rest;      /* 3 nv: an FEM body's reference positions, a collider's in its geometry frame */
  const int* tri;          /* 3 nt vertex indices, wound outward */
  int nused;
  const int* used;         /* the vertices on the boundary (an FEM body's surface vertices), NULL: all */
  kn_triangles tris;       /* a collider's triangles (owned) */
} kn_mesh_surface;

typedef struct {
  kn_mesh_surface* s;
  int n, nvert;            /* surfaces, their vertices in all */
  int *of_fem, *of_collider; /* the surface of FEM body f / collider k, -1 none */
  int* pt;                 /* per global vertex: its material point this step, -1 none */
} kn_mesh_surfaces;

/* which colliders have a surface: triangle-mesh colliders only, or also boxes */
typedef enum { KN_MESH_SURFACES_MESHES, KN_MESH_SURFACES_BOXES_MESHES } kn_mesh_surfaces_colliders;

/* (world) => its surfaces. KN_ERR_NOMEM */
kn_status kn_mesh_surfaces_create(kn_world* w, kn_mesh_surfaces_colliders which, kn_mesh_surfaces* m,
                                  kn_error* err);
void kn_mesh_surfaces_free(kn_mesh_surfaces* m);
/* (step at q_n) => the surfaces' vertices added to st->points in surface order, all of each surface's
 * (all) or its boundary vertices only (pt -1 for the others): FEM vertices by their clique's map,
 * collider vertices as points of their body at q_n, fixed in the world when it is. KN_ERR_NOMEM */
kn_status kn_mesh_surfaces_points(kn_mesh_surfaces* m, const kn_nl_step* st, int all, kn_error* err);
/* a candidate's side => its surface, -1 none */
int kn_mesh_surfaces_of_side(const kn_mesh_surfaces* m, const kn_contact_side* sd);
/* global vertex g => its surface */
int kn_mesh_surfaces_of_vertex(const kn_mesh_surfaces* m, int g);
/* a mesh pair at the step's end for the outputs (kn_sim_contacts_add_pair): its stencil's four
 * vertices x (12), side[j] 0 on surface sa (A), 1 on sb (B), the weights wt of its traced points
 * (>= 0; each side's point is its vertices' weighted mean), the forces F on the vertices (12), the
 * unit normal n from A into B and the gap phi along it. KN_ERR_NOMEM */
kn_status kn_mesh_surfaces_record_pair(const kn_mesh_surfaces* m, kn_world* w, int sa, int sb, const int side[4],
                                       int edge_edge, const double x[12], const double wt[4], const double F[12],
                                       const double n[3], double phi, kn_error* err);
/* The curvature of the rigid collider vertices' paths over a step (mesh_arcs.c): per global vertex
 * with a point, off = where its tree's integrator puts it at v_n (q_n (+) dt v_n, kn_mb_advance)
 * minus x1, its point map's straight-line end at v_n (an FEM or fixed vertex: 0). The scratch keeps
 * one kn_mb_data per tree. create: NULL out of memory; offsets: KN_ERR_NOMEM */
typedef struct kn_mesh_arcs kn_mesh_arcs;
kn_mesh_arcs* kn_mesh_arcs_create(const kn_world* w);
void kn_mesh_arcs_free(kn_mesh_arcs* a);
kn_status kn_mesh_arcs_offsets(kn_mesh_arcs* a, const kn_mesh_surfaces* m, const kn_world* w, double dt,
                               const double* x1, double* off, kn_error* err);
/* any rigid material point: (collider, its world position x0 at q_n) => x where the integrator puts
 * it at v_n (a world-fixed collider's: x0). Each tree's kinematics once per step: call reset first.
 * KN_ERR_NOMEM (the discrete springs' ends: nl_penalty.c) */
void kn_mesh_arcs_reset(kn_mesh_arcs* a);
kn_status kn_mesh_arcs_point(kn_mesh_arcs* a, const kn_world* w, double dt, int collider, const double x0[3],
                             double x[3], kn_error* err);
/* (collider, a contact point p on it, its surface's outward unit normal out there) => c, the
 * point whose arc p follows: a sphere's centre, a capsule's segment point nearest p, on a cylinder
 * p less its radius times out's part across the axis (its side: the axis; its caps' faces: p); 0
 * when c = p (a box, mesh or half-space: flat faces, edges and corners, p a material point) */
int kn_mesh_arcs_core(const kn_world* w, int collider, const double p[3], const double out[3], double c[3]);
/* surface i => "the deformable 'name'" or "the collider 'name'" in buf */
void kn_mesh_surfaces_name(const kn_mesh_surfaces* m, const kn_world* w, int i, char* buf, size_t cap);

#endif
