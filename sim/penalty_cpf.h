/* knead/sim internal: the penalty backend's continuous mode (contact.penalty.continuous: true;
 * continuous-penalty-forces.md §5.5 option 2), the mesh pairs it tracks from step to step
 * (penalty_cpf.c) and their contact term (penalty/cpf_term.c). */
#ifndef KNEAD_SIM_PENALTY_CPF_H
#define KNEAD_SIM_PENALTY_CPF_H

#include "penalty/penalty.h"
#include "sim/backend_nonlinear.h"
#include "sim/penalty_stiffness.h"

typedef struct kn_penalty_cpf kn_penalty_cpf;

/* a pair's features as global vertex ids of kn_mesh_surfaces: (p, a, b, c) or (a, b, c, d) */
typedef struct {
  int edge_edge, v[4];
} kn_cpf_key;

/* The proximity pass of continuous-penalty-forces.md §8 item 12 (penalty_cpf_inside.c): a vertex
 * already through a surface (CCD missed its crossing, or it started there) has no pair, and CCD,
 * which starts pairs only at crossings, never finds one. (positions x, 3 per global vertex; n
 * vertex-face keys of one vertex against faces of one surface, the faces wound outward; band > 0)
 * => the key whose face the vertex has just passed: the candidate nearest the vertex (point-triangle
 * distance), its closest point inside the face (the projection's barycentric coordinates >= -1e-6,
 * CCD's inside test), the vertex behind the face's plane by at most band; -1 when none is. The
 * nearest face's side is the inside test of a closed surface where the closest point is on a face;
 * a vertex nearer another face, in front of it, is outside (under an overhang, or through the far
 * side of a thin plate). w := the pair's weights (1, the projection's barycentric coordinates),
 * *depth := its distance behind the plane. */
int kn_penalty_cpf_inside_face(const double* x, int n, const kn_cpf_key* keys, double band, double w[4],
                               double* depth);
/* a surface's band for it (its n vertices' rest positions, used: their indices, NULL: 0..n-1) => half the
 * thinnest extent of their box, 0 for none. A vertex deeper behind a face than half its body's
 * thickness is, in a convex body, nearer another face: which face it came through is no longer
 * known (a box plate 2 mm thick: 1 mm) */
double kn_penalty_cpf_band(const double* rest, int n, const int* used);

/* (world, the bodies' spring stiffnesses ps (penalty_stiffness.h), friction's smoothing velocity
 * eps_v (kn_cpf_friction), mode, lag_lambda (contact.penalty.lag_lambda: the friction's lambda
 * lagged, kn_cpf_term), anchored (1: each pair's friction the anchored spring of
 * kn_cpf_anchor_friction, its anchor carried with the pair and relaxed onto the cone after each
 * step; 0: the smoothed Coulomb of eps_v)) => the triangle surfaces of its FEM bodies and rigid
 * colliders (boxes, meshes), each pair's friction mu and stiffness k combined from its two
 * surfaces' (KN_ERR_INVALID naming them when two surfaces that can meet are both rigid, stiffness
 * inf). Colliders without a triangle surface (spheres, cylinders, capsules, half-spaces) and MPM
 * bodies are left to the backend's discrete springs (kn_penalty_cpf_covers). */
kn_status kn_penalty_cpf_create(kn_world* w, const kn_penalty_stiffness* ps, double eps_v, kn_cpf_mode mode,
                                int lag_lambda, int anchored, kn_penalty_cpf** out, kn_error* err);
void kn_penalty_cpf_free(kn_penalty_cpf* c);
/* the mixed mode's rule: a detection candidate is the pairs' (1) when both its sides have triangle
 * surfaces here (FEM bodies, box and mesh colliders), else the discrete springs' (0): a box against a
 * cylinder, any MPM particle. No pair of bodies is handled by both. */
int kn_penalty_cpf_covers(const kn_penalty_cpf* c, const kn_contact_candidate* cc);
/* (the step: its points, each clique's v_start as the predictor) => the surfaces' vertices added as
 * material points, the carried pairs (start 0) and the pairs CCD finds on the predictor path
 * x0 -> x0 + dt J v_start (start s*), and the term over them */
kn_status kn_penalty_cpf_begin(kn_penalty_cpf* c, const kn_nl_step* st, kn_nl_term* term, kn_error* err);
/* after a converged solve at v: CCD on the path x0 -> x0 + dt J v that the solve really takes (a
 * crossing only on it, not on the predictor's, §8 item 13) => how many pairs it added (the step is
 * then solved again), -1 out of memory */
int kn_penalty_cpf_recheck(kn_penalty_cpf* c, const double* v, kn_error* err);
/* after a successful step at v: the pairs still penetrating at its end are carried (§3.6) */
/* after a solve: every pair's friction lambda := its normal force at v; 1 when one moved (re-solve) */
int kn_penalty_cpf_relag(kn_penalty_cpf* c, const double* v);
void kn_penalty_cpf_end_step(kn_penalty_cpf* c, const double* v);
/* outputs: the force of the step's pairs between the surfaces of sides a and b on b's, at v (zero
 * when either side has no surface) */
void kn_penalty_cpf_side_force(const kn_penalty_cpf* c, const kn_contact_side* a, const kn_contact_side* b,
                               const double* v, double f[3]);
/* outputs, after a successful step at v: each pair with a force over the step as a contact row
 * (kn_sim_contacts_add_pair): B the vertex's (first edge's) body, its point between the traced
 * points, the normal at the step's end along the force on B, the gap along it. KN_ERR_NOMEM */
kn_status kn_penalty_cpf_record(const kn_penalty_cpf* c, kn_world* w, const double* v, kn_error* err);
/* saved states: the carried pairs; read (NULL, or what is wrong) then taken, all or nothing */
void kn_penalty_cpf_save(const kn_penalty_cpf* c, kn_state_out* out);
const char* kn_penalty_cpf_read(const kn_penalty_cpf* c, kn_state_in* in, void** pairs, int* n);
void kn_penalty_cpf_take(kn_penalty_cpf* c, void* pairs, int n);

#endif
