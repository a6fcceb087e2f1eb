/* knead/sim internal: the penalty backend's spring stiffness per contact (issue 19). The bodies'
 * contact material `stiffness` (objects, robots' contact, deformables) sets it: a pair's k is the
 * series combination k_a k_b / (k_a + k_b) of its two sides (kn_contact_material_combine: an
 * infinite side leaves the other), where a side whose scene sets no stiffness stands as a material
 * of 2 contact.penalty.stiffness, so that a pair of such bodies gets contact.penalty.stiffness
 * exactly (every scene without stiffness keys is unchanged). Why the scene's keys and not the
 * world's resolved materials: those carry SAP's default 1e6 N/m for an unset side, a near-rigid
 * value the penalty springs cannot take; an explicit value means the same N/m on every backend
 * (the wedge scenes' 1e4 + 1e4 = 5e3 N/m per spring on SAP and on penalty). */
#ifndef KNEAD_SIM_PENALTY_STIFFNESS_H
#define KNEAD_SIM_PENALTY_STIFFNESS_H

#include "sim/candidates.h"

typedef struct {
  double k;                 /* contact.penalty.stiffness [N/m]: the pair of two unset sides */
  double *collider, *fem, *mpm; /* per world body: its side's stiffness [N/m] (2 k when unset; may be inf) */
} kn_penalty_stiffness;

/* (world, contact.penalty.stiffness) => every collider's, FEM body's and MPM body's side stiffness
 * from its scene keys. KN_ERR_NOMEM */
kn_status kn_penalty_stiffness_build(const kn_world* w, double k, kn_penalty_stiffness* ps, kn_error* err);
void kn_penalty_stiffness_free(kn_penalty_stiffness* ps);
/* candidate i's spring stiffness [N/m]: its sides in series; KN_ERR_INVALID naming the contact
 * when both sides are rigid (stiffness inf: no spring) */
kn_status kn_penalty_stiffness_pair(const kn_penalty_stiffness* ps, const kn_world* w, const kn_sim_candidates* c,
                                    int i, double* k, kn_error* err);
/* two side stiffnesses in series (inf when both are) */
double kn_penalty_stiffness_series(double ka, double kb);

#endif
