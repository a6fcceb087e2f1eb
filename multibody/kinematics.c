/* Forward kinematics in body coordinates: joint transforms, body poses and body velocities. */
#include <math.h>

#include "multibody/mb_internal.h"

// (joint, q) => X_JB(q), the body frame in the joint frame (coordinates as in multibody.h)
void mb_joint_transform(const kn_mb_body* b, const double* q, kn_pose* X) {
  const double* qj = q + b->q_adr;
  kn_pose_identity(X);
  switch (b->jtype) {
    case KN_JOINT_FIXED: break;
    case KN_JOINT_REVOLUTE:
    case KN_JOINT_CONTINUOUS: kn_mat3_from_axis_angle(b->axis, qj[0], X->R); break;
    case KN_JOINT_PRISMATIC:
      for (int k = 0; k < 3; k++) X->p[k] = b->axis[k] * qj[0];
      break;
    case KN_JOINT_PLANAR:
      kn_mat3_from_axis_angle(b->axis, qj[2], X->R);
      for (int k = 0; k < 3; k++) X->p[k] = qj[0] * b->planar_basis[k] + qj[1] * b->planar_basis[3 + k];
      break;
    case KN_JOINT_FLOATING: {
      /* normalize a copy: a slightly denormalized quaternion must still give a rotation */
      double quat[4] = {qj[3], qj[4], qj[5], qj[6]};
      kn_quat_normalize(quat);
      kn_mat3_from_quat(quat, X->R);
      for (int k = 0; k < 3; k++) X->p[k] = qj[k];
      break;
    }
  }
}

// (q, v) => (X_pb, X_wb, V): X_pb = X_pj X_JB(q); V_i = X_{i,parent} V_parent + S_i v_i (RBDA eq. 4.2),
// plus the world-frame inertias, velocities and motion subspaces of the cache (mb_internal.h)
void kn_mb_kinematics(const kn_mb_model* m, const double* q, const double* v, kn_mb_data* d) {
  mb_cache cache = mb_cache_of(d);
  for (int i = 0; i < m->nbody; i++) {
    const kn_mb_body* b = &m->bodies[i];
    kn_pose* Xpb = &d->X_pb[i];
    double* Vi = d->V + 6 * i;
    /* X_pb = X_pj * X_JB, specialized for the common 1-DoF joints */
    if (b->jtype == KN_JOINT_REVOLUTE || b->jtype == KN_JOINT_CONTINUOUS) {
      double Rj[9];
      kn_mat3_from_axis_angle(b->axis, q[b->q_adr], Rj);
      kn_mat3_mul(b->X_pj.R, Rj, Xpb->R);
      for (int k = 0; k < 3; k++) Xpb->p[k] = b->X_pj.p[k];
    } else if (b->jtype == KN_JOINT_FIXED) {
      *Xpb = b->X_pj;
    } else {
      kn_pose Xjb;
      mb_joint_transform(b, q, &Xjb);
      kn_pose_mul(&b->X_pj, &Xjb, Xpb);
    }
    double vJ[6];
    mb_joint_velocity(b, d->S, v, vJ);
    if (b->parent < 0) {
      d->X_wb[i] = *Xpb;
      for (int k = 0; k < 6; k++) Vi[k] = vJ[k];
    } else {
      kn_pose_mul(&d->X_wb[b->parent], Xpb, &d->X_wb[i]);
      mb_motion_to_body(Xpb, d->V + 6 * b->parent, Vi);
      for (int k = 0; k < 6; k++) Vi[k] += vJ[k];
    }
    const kn_pose* Xw = &d->X_wb[i];
    double* Ic = cache.Iw + MB_CI_SIZE * i;
    mb_inertia_world(b, Xw, &Ic[MB_CI_M], Ic + MB_CI_H, Ic + MB_CI_I);
    mb_subspace_to_world(b, Xw, d->S, cache.Sw);
    if (v) {
      mb_motion_to_world(Xw, Vi, cache.Vw + 6 * i);
    } else {
      for (int k = 0; k < 6; k++) cache.Vw[6 * i + k] = 0;
    }
  }
}

// (X_wb) => X_wf = X_wb X_bf
void kn_mb_frame_pose(const kn_mb_model* m, const kn_mb_data* d, int body, const kn_pose* X_bf, kn_pose* X_wf) {
  (void)m;
  kn_pose_mul(&d->X_wb[body], X_bf, X_wf);
}

// (X_wb, V) => [omega; v] of the point p_b of body, world frame: omega = R w, v = R (v_b + w x p_b)
void kn_mb_point_velocity(const kn_mb_model* m, const kn_mb_data* d, int body, const double p_b[3], double V_w[6]) {
  (void)m;
  const double* V = d->V + 6 * body;
  double t[3];
  mb_cross(V, p_b, t);
  t[0] += V[3], t[1] += V[4], t[2] += V[5];
  mb_rot(d->X_wb[body].R, V, V_w);
  mb_rot(d->X_wb[body].R, t, V_w + 3);
}
