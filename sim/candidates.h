/* knead/sim internal: the step's contact candidates across body kinds (candidates.c: the world's
 * bodies handed to the detectors of contact/contact.h). */
#ifndef KNEAD_SIM_CANDIDATES_H
#define KNEAD_SIM_CANDIDATES_H

#include "sim/sim_internal.h"

/* an MPM contact's deformable and its particle there (outputs name those, not the grid) */
typedef struct {
  int mpm, local;
} kn_sim_mpm_contact;

typedef struct kn_sim_candidates_state kn_sim_candidates_state;

typedef struct {
  kn_contact_candidate* c; /* every candidate: rigid [0, first_fem), FEM [first_fem, first_mpm), MPM [first_mpm, n) */
  int n, first_fem, nfem, first_mpm, nmpm;
  const kn_contact_point* pts; /* the rigid detection's points (source of the rigid candidates) */
  int npts;
  const kn_sim_mpm_contact* mpm; /* per MPM candidate */
  kn_sim_candidates_state* state;
  double extra_margin; /* added to contact.margin by the backend (smooth_friction: its thickness) [0] */
} kn_sim_candidates;

/* the views of the world's bodies that contact/ detects on: FEM body F (its mesh, positions,
 * surface vertices, attachments and material) and collider k (its tree, body and soft material) */
kn_contact_fem kn_sim_fem_view(const kn_world_fem* F);
kn_soft_collider kn_sim_soft_collider(const kn_world* w, int k);

kn_status kn_sim_candidates_create(const kn_world* w, kn_sim_candidates* c, kn_error* err);
void kn_sim_candidates_free(kn_sim_candidates* c);
/* (world at q_n, X_WG and reach per collider) => the rigid candidates (c->n = first_fem) */
kn_status kn_sim_detect_rigid(const kn_world* w, const kn_pose* X_WG, const double* reach, kn_sim_candidates* c,
                              kn_error* err);
/* (FEM x_n, MPM particles at x_n) => the FEM then MPM candidates after the rigid ones */
kn_status kn_sim_detect_deformables(const kn_world* w, const kn_pose* X_WG, kn_sim_candidates* c, kn_error* err);

/* (candidates, force on each one's side B: 3 per candidate, world frame [N]) => w->contacts,
 * w->fem_contacts, w->mpm_contacts with their counts, each deformable's total contact force
 * (contact_record.c) */
kn_status kn_sim_contacts_record(kn_world* w, const kn_sim_candidates* c, const double* force, kn_error* err);
/* One contact of a step that is no candidate: a backend's mesh pair (penalty's continuous mode, ipc's
 * mesh term; kn_nl_formulation.record). Sides A and B are each an FEM body (fem >= 0) or a collider;
 * p its point, n the unit normal from A into B, phi the gap along n (< 0: the depth), f the force on
 * B [N] (world; on A: -f). */
typedef struct {
  int a_fem, a_collider, b_fem, b_collider;
  int edge_edge;            /* 0 vertex-face (point-triangle), 1 edge-edge */
  double p[3], n[3], phi, f[3];
} kn_sim_pair_contact;
/* (after kn_sim_contacts_record) => the row appended: two colliders to w->contacts, else to
 * w->fem_contacts with the deformable (or either one) as B (n and f turned with it), kind 3 for a
 * vertex-face pair, 4 for an edge-edge pair; the deformables' total forces updated. KN_ERR_NOMEM */
kn_status kn_sim_contacts_add_pair(kn_world* w, const kn_sim_pair_contact* r, kn_error* err);
/* (candidate side) => its world clique, -1 for a world-fixed collider */
int kn_sim_side_clique(const kn_world* w, const kn_contact_side* sd);
/* candidate i => "contact between 'a' and 'b'", "contact of deformable 'd' vertex 7 with 'c'", ... */
void kn_sim_candidate_describe(const kn_world* w, const kn_sim_candidates* c, int i, char* buf, size_t cap);

#endif
