/* The velocity-product force of the momentum form of the equations of motion.
 *
 * With the generalized momentum p = M(q) v (velocity coordinates, quasi-velocities for PLANAR and
 * FLOATING), M v_dot + C(q, v) v = tau - g(q) becomes
 *   p_dot = tau - g(q) + f(q, v),   f = M_dot v - C(q, v) v,
 * and for a 1-DoF joint f_k = dT/dq_k at fixed v (Lagrange), for a free body f = -V x* (I V)
 * (Euler-Poincare). Written with world-frame spatial algebra, p_k = S_k . H_k where S_k is the
 * motion subspace of dof k and H_k the momentum of the subtree carried by k's body; the
 * subtree's momentum derivative appears in both M_dot v and C v (RNEA with qdd = 0) and cancels,
 * leaving only the motion of the subspace itself, S_k_dot = V_k x S_k:
 *   f_k = (V_k x S_k) . H_k.
 * Cross and dot products are frame-invariant, so this is evaluated in body k's own frame, O(n). */
#include "multibody/mb_internal.h"

// (X_pb, V) => f = M_dot(q, v) v - C(q, v) v (nv)
void kn_mb_momentum_force(const kn_mb_model* m, kn_mb_data* d, double* f) {
  double* H = d->work; /* 6 per body: subtree momentum in the body frame (algorithm region) */
  for (int i = 0; i < m->nbody; i++) mb_inertia_apply(&m->bodies[i], d->V + 6 * i, H + 6 * i);
  for (int i = m->nbody - 1; i >= 0; i--) {
    const kn_mb_body* b = &m->bodies[i];
    const double* Vi = d->V + 6 * i;
    const double* Hi = H + 6 * i;
    for (int k = 0; k < b->nv; k++) {
      double t[6];
      mb_cross_motion(Vi, d->S + 6 * (b->v_adr + k), t);
      f[b->v_adr + k] = mb_dot6(t, Hi);
    }
    if (b->parent >= 0) {
      double hp[6];
      double* Hp = H + 6 * b->parent;
      mb_force_to_parent(&d->X_pb[i], Hi, hp);
      for (int k = 0; k < 6; k++) Hp[k] += hp[k];
    }
  }
}
