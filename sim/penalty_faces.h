/* knead/sim internal: the penalty backend's anchors on FEM surfaces (penalty_faces.c), for the
 * contacts whose anchor lies in an FEM body's face (penalty-coulomb-friction.md §3.6: "the
 * attachment is a barycentric point of a triangle, so it moves with the mesh"):
 *   KN_CANDIDATE_FEM_RIGID_FACE  a rigid feature point (A, the spring's particle, kept in its
 *     collider's frame) in a face of FEM body B, found again next step as the same collider and FEM
 *     body's contact nearest to that point (within KN_STICTION_MATCH_RADIUS);
 *   KN_CANDIDATE_FEM_VERTEX_FEM  a vertex of FEM body B (the particle, keyed by body and vertex),
 *     or a point of an edge of B (an edge crossing, fem_detect.c; keyed by body and edge), at a face
 *     of FEM body A.
 * The anchor is a weighted sum of three vertices of the FEM body that holds it. */
#ifndef KNEAD_SIM_PENALTY_FACES_H
#define KNEAD_SIM_PENALTY_FACES_H

#include "sim/backend.h"
#include "sim/sim_internal.h"

typedef struct {
  int kind;           /* kn_candidate_origin */
  int body;           /* FEM_RIGID_FACE: the collider; FEM_VERTEX_FEM: the particle's FEM body */
  int fem;            /* the FEM body that holds the anchor */
  int vertex;         /* FEM_VERTEX_FEM: the particle's vertex; -1 otherwise */
  double pa[3];       /* FEM_RIGID_FACE: the particle in the collider's geometry frame; FEM_VERTEX_FEM:
                         a point on an edge (vertex, pa[0]) of B when pa[1] > 0, pa[1] its weight */
  int vert[3];
  double w[3];        /* the anchor: sum w_k x(vert_k) of body fem */
} kn_penalty_face;

typedef struct {
  kn_penalty_face *prev, *cur; /* cur: per FEM candidate; kind -1: none */
  unsigned char* taken;
  int nprev, cap_prev, cap_cur, cap_taken;
} kn_penalty_faces;

/* room for this step's n FEM candidates, none taken; KN_ERR_NOMEM */
kn_status kn_penalty_faces_reserve(kn_penalty_faces* f, int n, kn_error* err);
/* (FEM candidate j = candidate cc, its particle's position x at the step start, collider poses) =>
 * 1 with d = A's anchored point - B's anchored point (world) when cc has a face anchor (found
 * again or new), 0 (cur[j] none) for the other origins */
int kn_penalty_faces_start(kn_penalty_faces* f, const kn_world* w, const kn_pose* X_WG, const kn_contact_candidate* cc,
                           int j, const double x[3], double d[3]);
/* after the step (FEM bodies advanced): A's side of contact j slid by `slide` (world) => the
 * anchor moved with it and re-expressed on cc's face at the new positions */
void kn_penalty_faces_slide(kn_penalty_faces* f, const kn_world* w, const kn_contact_candidate* cc, int j,
                            const double slide[3]);
/* (n FEM candidates' (0, 0, active) per contact) => the active ones' anchors become the next step's */
void kn_penalty_faces_commit(kn_penalty_faces* f, int n, const double* gamma);
void kn_penalty_faces_free(kn_penalty_faces* f);
/* saved states: n, then per anchor kind, body, fem, vertex, vert[3] (int32), pa[3], w[3] (double) */
void kn_penalty_faces_save(const kn_penalty_faces* f, kn_state_out* out);
/* => a new array of n anchors checked against the world (NULL, n 0 when none), or a message */
const char* kn_penalty_faces_read(const kn_world* w, kn_state_in* in, kn_penalty_face** out, int* n);
/* the anchors replaced by those read (owned from now on) */
void kn_penalty_faces_take(kn_penalty_faces* f, kn_penalty_face* a, int n);

#endif
