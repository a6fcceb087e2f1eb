/* knead/sim internal: contact detection of FEM bodies (not installed).
 *
 * Three kinds of contact, all with Drake's conventions (contact/contact.h): the normal points from
 * A into B, v_c = R_WC^T (v_B - v_A), phi < 0 when overlapping. B is always on an FEM body.
 *   KN_FEM_VERTEX_RIGID  a free surface vertex of B inside (or within the margin of) a rigid collider A
 *                        (kn_collider_signed_distance; normal = the collider's outward gradient);
 *   KN_FEM_VERTEX_FEM    a free surface vertex of B near the deformed surface of FEM body A
 *                        (A side = the nearest triangle, barycentric; normal = A's outward normal);
 *   KN_FEM_RIGID_FACE    a feature point of rigid collider A (box corner or edge point, the deepest
 *                        point of a sphere / capsule / cylinder, a mesh vertex) near the deformed
 *                        surface of B (B side = the nearest triangle, barycentric; normal = minus
 *                        B's outward normal, i.e. from the rigid body into the FEM body).
 * Double counting: a rigid feature point is dropped when any vertex of its triangle already has a
 * KN_FEM_VERTEX_RIGID contact with the same collider (the vertex contacts then carry that patch).
 *
 * Surface queries use one AABB tree per FEM body over its surface triangles: the topology is built
 * once (median splits of the rest centroids), the boxes are refitted to x_n every step. Nearest
 * triangle by a best-first descent (ties to the lowest triangle index, so identical to brute
 * force), inside/outside by the angle-weighted pseudo-normal of the nearest feature (Baerentzen and
 * Aanaes 2005), exact for the closed, outward-wound surface of a tet mesh. */
#ifndef KNEAD_SIM_FEM_CONTACT_H
#define KNEAD_SIM_FEM_CONTACT_H

#include "sap/sap.h"
#include "sim/sim.h"

/* one side of an FEM contact: a rigid collider (fem = -1), or points of an FEM body as a
 * barycentric combination of n <= 3 vertices */
typedef struct {
  int fem, collider, n;
  int vert[3];
  double wt[3];
} kn_fem_side;

typedef enum { KN_FEM_VERTEX_RIGID = 0, KN_FEM_VERTEX_FEM = 1, KN_FEM_RIGID_FACE = 2 } kn_fem_contact_kind;

typedef struct {
  kn_fem_side a, b;         /* the normal points from A into B; B is on an FEM body */
  double p[3], R[9], phi;   /* point where the impulse acts, R_WC (columns t1, t2, n), distance */
  kn_contact_material mat;
  kn_fem_contact_kind kind;
} kn_fem_contact;

/* A signed-distance query on the deformed surface of one FEM body. */
typedef struct {
  double phi;               /* negative inside */
  int tri;                  /* surface triangle index of the nearest point */
  int vert[3];
  double wt[3];             /* nearest point = sum wt_k x_vert_k */
  double n[3];              /* outward unit normal at the nearest point */
} kn_fem_surface_hit;

typedef struct kn_fem_surface kn_fem_surface;

/* (FEM body) => its surface tree (topology from the rest positions) and adjacency; NULL when out
 * of memory. */
kn_fem_surface* kn_fem_surface_create(const kn_fem_body* b);
void kn_fem_surface_free(kn_fem_surface* s);
/* (body's current x) => refitted boxes, face normals and pseudo-normals */
void kn_fem_surface_update(kn_fem_surface* s, const kn_fem_body* b);
/* (surface updated at b->x, world point p) => nearest point, signed distance, outward normal */
void kn_fem_surface_query(const kn_fem_surface* s, const kn_fem_body* b, const double p[3], kn_fem_surface_hit* hit);
/* the same by brute force over every triangle with the winding-number sign (the reference the
 * tree is tested against; the detection of the first FEM-FEM contacts) */
void kn_fem_surface_query_brute(const kn_fem_body* b, const double p[3], kn_fem_surface_hit* hit);
/* the body's bounding box at the last update: lo[3], hi[3] */
const double* kn_fem_surface_box(const kn_fem_surface* s);
/* mean surface edge length at rest (the spacing of rigid edge samples) */
double kn_fem_surface_edge_length(const kn_fem_surface* s);

/* Per-world detection scratch: one surface per FEM body, growable contact buffer. */
typedef struct {
  int nfem;
  kn_fem_surface** surf;
  kn_fem_contact* c;
  int nc, cap;
  unsigned* stamp;          /* per vertex of the largest body: double-counting marks */
  unsigned stamp_gen;
  double* pts;              /* rigid feature points, 3 per, growable */
  int pts_cap;
  int brute;                /* 1: brute-force surface queries (tests compare the two) */
  int rigid_features;       /* 0: no KN_FEM_RIGID_FACE contacts (the old behaviour) [1] */
} kn_fem_detector;

/* (world) => a detector for its FEM bodies; KN_ERR_NOMEM */
kn_status kn_fem_detector_create(const kn_world* w, kn_fem_detector** out, kn_error* err);
void kn_fem_detector_free(kn_fem_detector* d);
/* (world at x_n, q_n; X_WG per collider) => d->c[0 .. d->nc): every vertex contact first (per body,
 * per surface vertex: colliders then other bodies), then the rigid feature contacts (per body, per
 * collider, per feature point); deterministic. Contacts with phi < contact.margin. */
kn_status kn_fem_detect(kn_fem_detector* d, const kn_world* w, const kn_pose* X_WG, kn_error* err);

/* (contacts, their impulses gamma of constraints first .. first + nc) => w->fem_contacts with forces
 * gamma / dt on B (for contacts.csv); KN_ERR_NOMEM */
kn_status kn_fem_contacts_record(kn_world* w, const kn_fem_contact* c, int nc, const kn_sap_problem* prob,
                                 const double* gamma, int first, double dt, kn_error* err);

#endif
