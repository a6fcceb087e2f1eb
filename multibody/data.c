/* The per-model workspace: kinematics results, the constant motion subspaces and the scratch
 * that the dynamics algorithms and the step use, all allocated once. */
#include <stdlib.h>
#include <string.h>

#include "multibody/mb_internal.h"

/* Motion subspace of each dof in its body frame (constant by the choice of coordinates in
 * multibody.h): revolute [a; 0], prismatic [0; a], planar [0; e1], [0; e2], [a; 0], floating I6. */
static void fill_motion_subspace(const kn_mb_body* b, double* S) {
  double* s = S + 6 * b->v_adr;
  memset(s, 0, (size_t)b->nv * 6 * sizeof *s);
  switch (b->jtype) {
    case KN_JOINT_REVOLUTE:
    case KN_JOINT_CONTINUOUS:
      for (int k = 0; k < 3; k++) s[k] = b->axis[k];
      break;
    case KN_JOINT_PRISMATIC:
      for (int k = 0; k < 3; k++) s[3 + k] = b->axis[k];
      break;
    case KN_JOINT_PLANAR:
      for (int k = 0; k < 3; k++) {
        s[3 + k] = b->planar_basis[k];
        s[6 + 3 + k] = b->planar_basis[3 + k];
        s[12 + k] = b->axis[k];
      }
      break;
    case KN_JOINT_FLOATING:
      for (int k = 0; k < 6; k++) s[6 * k + k] = 1;
      break;
    case KN_JOINT_FIXED: break;
  }
}

// (m) => a workspace sized for m (NULL when out of memory); S filled, poses identity
kn_mb_data* kn_mb_data_create(const kn_mb_model* m) {
  kn_mb_data* d = kn_calloc(1, sizeof *d);
  if (!d) return NULL;
  d->nbody = m->nbody;
  d->nv = m->nv;
  d->nwork = mb_algo_size(m->nbody, m->nv) + mb_step_size(m->nq, m->nv, m->ncoupler) +
             mb_cache_size(m->nbody, m->nv);
  d->X_pb = kn_calloc((size_t)m->nbody, sizeof *d->X_pb);
  d->X_wb = kn_calloc((size_t)m->nbody, sizeof *d->X_wb);
  d->V = kn_calloc(6 * (size_t)m->nbody, sizeof *d->V);
  d->S = kn_calloc(6 * (size_t)m->nv, sizeof *d->S);
  d->work = kn_calloc(d->nwork, sizeof *d->work);
  if (!d->X_pb || !d->X_wb || !d->V || !d->S || !d->work) {
    kn_mb_data_free(d);
    return NULL;
  }
  for (int i = 0; i < m->nbody; i++) {
    kn_pose_identity(&d->X_pb[i]);
    kn_pose_identity(&d->X_wb[i]);
    fill_motion_subspace(&m->bodies[i], d->S);
  }
  return d;
}

void kn_mb_data_free(kn_mb_data* d) {
  if (!d) return;
  free(d->X_pb);
  free(d->X_wb);
  free(d->V);
  free(d->S);
  free(d->work);
  free(d);
}
