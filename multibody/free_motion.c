/* The free motion of one tree, stage 1 of the SAP time step (digest §1.2, rigid cliques):
 *
 *   A = M(q_n) + dt D,      A (v* - v_n) = dt (tau - c(q_n, v_n) - D v_n)
 *
 * where c(q, v) = C(q, v) v - g(q) is the RNEA bias (gravity included) and tau the explicit
 * actuation (feed-forward, gravity compensation; never the PD terms, which SAP makes implicit as
 * constraints, §5.3). Joint damping D is the only implicit force: solving with A rather than M
 * makes v* the damped velocity of (M + dt D) v* = M v_n + dt (tau - c), so that the SAP momentum
 * balance A (v - v*) = J^T gamma is exactly M (v - v_n) = dt (tau - c - D v) + J^T gamma.
 *
 * Floating joints. Their v = [omega_B; v_B] is measured in the moving body frame, so c holds the
 * frame-rotation term m omega x v_B. Over one step knead freezes the frame at q_n (the Jacobians of
 * the contact constraints are taken there, as Drake does with world-frame velocities): the
 * coordinates then obey M dV/dt = tau - c + M delta with delta = [0; omega x v_B] on the floating
 * dofs (a constant world vector u has d(R^T u)/dt = -omega x R^T u), and kn_mb_advance re-expresses
 * v_n+1 in the frame at q_n+1. Without this, a fast-rolling ball leaves the ground: the explicit
 * frame-rotation term is only first-order accurate and its error points away from the contact. */
#include <math.h>
#include <string.h>

#include "multibody/multibody.h"

kn_status kn_mb_free_motion(const kn_mb_model* m, kn_mb_data* d, const double* q, const double* v,
                            const double* tau, double dt, double* A, double* v_star, double* scratch,
                            kn_error* err) {
  return kn_mb_free_motion_theta(m, d, q, v, tau, dt, 1.0, A, v_star, scratch, err);
}

/* theta < 1: M (v - v_n) = dt (tau - c + M delta) - theta dt D v - (1 - theta) dt D v_n, the damping
 * averaged, every other force explicit at (q_n, v_n) as under backward Euler (the tree is linearized
 * at q_n); so only A's damping is scaled, A (v* - v_n) keeps its right-hand side. theta = 1 computes
 * exactly what it did before theta (theta dt == dt). */
kn_status kn_mb_free_motion_theta(const kn_mb_model* m, kn_mb_data* d, const double* q, const double* v,
                                  const double* tau, double dt, double theta, double* A, double* v_star,
                                  double* scratch, kn_error* err) {
  const int nv = m->nv;
  const char* name = m->name ? m->name : "model";
  if (!(dt > 0) || !isfinite(dt))
    return kn_fail(err, KN_ERR_INVALID, "kn_mb_free_motion: model '%s': time step %g; expected finite and > 0",
                   name, dt);
  if (q) kn_mb_kinematics(m, q, v, d); /* else the caller's, already at (q_n, v_n) */
  if (nv == 0) return KN_OK;
  kn_mb_mass_matrix(m, d, A);
  double* L = scratch;
  double* r = scratch + (size_t)nv * nv;
  kn_mb_inverse_dynamics(m, d, NULL, r); /* r = c(q, v) = C v - g */
  for (int i = 0; i < nv; i++) r[i] = dt * ((tau ? tau[i] : 0.0) - r[i]);
  for (int b = 0; b < m->nbody; b++) {
    const kn_mb_body* body = &m->bodies[b];
    if (body->jtype != KN_JOINT_FLOATING) continue;
    const double* w = v + body->v_adr;
    double delta[3];
    kn_vec3_cross(w, w + 3, delta); /* the frozen-frame correction, see the file comment */
    for (int i = 0; i < nv; i++)
      for (int k = 0; k < 3; k++) r[i] += dt * A[(size_t)i * nv + body->v_adr + 3 + k] * delta[k];
  }
  for (int b = 0; b < m->nbody; b++) {
    const kn_mb_body* body = &m->bodies[b];
    for (int k = 0; k < body->nv; k++) {
      int i = body->v_adr + k;
      A[(size_t)i * nv + i] += (theta * dt) * body->damping;
      r[i] -= dt * body->damping * v[i];
    }
  }
  memcpy(L, A, (size_t)nv * nv * sizeof *L);
  kn_status st = kn_chol_factor(L, nv, err);
  if (st) return kn_error_prefix(err, "kn_mb_free_motion: model '%s': M + dt D: ", name);
  kn_chol_solve(L, nv, r, 1);
  for (int i = 0; i < nv; i++) {
    v_star[i] = v[i] + r[i];
    if (!isfinite(v_star[i]))
      return kn_fail(err, KN_ERR_NUMERIC, "kn_mb_free_motion: model '%s': v* is not finite at dof %d", name, i);
  }
  return KN_OK;
}
