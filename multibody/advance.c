/* The position update of the SAP step: q_n+1 = q_n + dt N(q_n) v_n+1 (digest §1.1, third line).
 *
 * kn_mb_integrate follows the screw motion of a floating body's twist (SE(3) exponential). For a
 * rolling ball that screw is a rotation about the contact point, so with large omega dt the centre
 * dips into the ground by r (1 - cos(omega dt)) every step, a penetration the contact constraint
 * (linearized at q_n) never sees. Drake and the digest move the position with the world velocity
 * at q_n instead, p_n+1 = p_n + dt R_n v_B, which is exactly what the constraint v_c = J(q_n) v
 * controls; the orientation still uses the exact quaternion exponential (renormalized).
 *
 * The velocities of a floating body were solved in the body frame frozen at q_n (see
 * free_motion.c); they are re-expressed in the frame at q_n+1, R_n+1^T R_n v = exp(dt omega)^T v,
 * so that the world velocity carries over unchanged (omega itself is invariant). */
#include <string.h>

#include "multibody/multibody.h"

void kn_mb_advance(const kn_mb_model* m, const double* q, double* v, double dt, double* q_next) {
  kn_mb_integrate(m, q, v, dt, q_next);
  for (int i = 0; i < m->nbody; i++) {
    const kn_mb_body* b = &m->bodies[i];
    if (b->jtype != KN_JOINT_FLOATING) continue;
    const double* qj = q + b->q_adr;
    const double* vB = v + b->v_adr + 3;
    double R[9], pd[3];
    kn_mat3_from_quat(qj + 3, R);
    kn_mat3_vec(R, vB, pd);
    for (int k = 0; k < 3; k++) q_next[b->q_adr + k] = qj[k] + dt * pd[k];
    double* w = v + b->v_adr;
    double angle = kn_vec3_norm(w) * dt;
    if (angle > 0) {
      double axis[3] = {w[0], w[1], w[2]}, E[9], t[3];
      double n = kn_vec3_norm(axis);
      for (int k = 0; k < 3; k++) axis[k] /= n;
      kn_mat3_from_axis_angle(axis, angle, E);
      kn_mat3_tvec(E, w + 3, t);
      memcpy(w + 3, t, sizeof t);
    }
  }
}
