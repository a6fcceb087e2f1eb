/* The stand-in time step of a tree alone: semi-implicit Euler with joint damping and the
 * actuation's PD implicit, effort limits by clamping, and couplers as equality constraints.
 *
 *   A v' = r,  A = M + dt D + dt^2 Kp + dt Kd,
 *              r = M v + dt (tau0 - c(q, v)) - dt Kp (q - q_ref) + dt Kd v_ref
 * (from M (v' - v) = dt (tau(v') - c - D v') with tau the implicit PD of multibody.h).
 *
 * Effort limits: after a solve, a PD dof whose torque exceeds its limit gets its torque fixed at
 * +-effort and is treated explicitly (its PD terms leave A and r); the system is re-solved until
 * no new dof saturates (at most nv + 1 passes; the saturated set only grows).
 *
 * Couplers (mimic): g(q) = q_j - mult q_m - offset = 0 is imposed at the velocity level with a
 * Baumgarte-like drift correction, G v' = -beta g(q) / dt with beta = 0.2, so that for 1-DoF
 * joints g(q') = (1 - beta) g(q): a violation decays geometrically and an exact start stays
 * exact to round-off. The multipliers come from the Schur complement:
 *   v' = v_free + Y lambda,  Y = A^-1 G^T,  (G Y) lambda = b - G v_free.
 * The coupler forces are constraint forces, not actuation: they are not in tau_applied.
 *
 * kp acts only on the dofs of 1-DoF joints (q_i is then q[q_adr]); kd acts on any dof. */
#include <math.h>
#include <string.h>

#include "multibody/mb_internal.h"

#define COUPLER_BETA 0.2

static double get(const double* x, int i, double dflt) { return x ? x[i] : dflt; }

/* position coordinate of the dof of body b when its joint is 1-DoF, else -1 (no kp) */
static int dof_q_index(const kn_mb_model* m, int b) {
  return m->bodies[b].nq == 1 && m->bodies[b].nv == 1 ? m->bodies[b].q_adr : -1;
}

// (q, v, actuation, dt) => (q', v', tau_applied); q and v untouched on failure
kn_status kn_mb_step(const kn_mb_model* m, kn_mb_data* d, double* q, double* v, const kn_mb_actuation* act,
                     double dt, double* tau_applied, kn_error* err) {
  const char* name = m->name ? m->name : "model";
  int nv = m->nv, nq = m->nq, nc = m->ncoupler;
  if (d->nbody != m->nbody || d->nv != nv ||
      d->nwork < mb_algo_size(m->nbody, nv) + mb_step_size(nq, nv, nc))
    return kn_fail(err, KN_ERR_INVALID, "kn_mb_step: model '%s': workspace was created for another model", name);
  if (!(dt > 0) || !isfinite(dt))
    return kn_fail(err, KN_ERR_INVALID, "kn_mb_step: model '%s': time step %g; expected finite and > 0", name, dt);
  if (nv == 0) return KN_OK;
  kn_mb_actuation none = {0};
  if (!act) act = &none;

  /*---- scratch (after the region the dynamics algorithms use) ----*/
  double* w = d->work + mb_algo_size(m->nbody, nv);
  double* M = w;            w += (size_t)nv * nv;
  double* A = w;            w += (size_t)nv * nv;
  double* bias = w;         w += nv;
  double* base = w;         w += nv;
  double* rhs = w;          w += nv;
  double* vn = w;           w += nv;
  double* tau = w;          w += nv;
  double* saturated = w;    w += nv;
  double* dof_body_d = w;   w += nv; /* body of each dof, stored as double */
  double* qn = w;           w += nq;
  double* G = w;            w += (size_t)nc * nv;
  double* Y = w;            w += (size_t)nc * nv;
  double* Sc = w;           w += (size_t)nc * nc;
  double* lam = w;          w += nc;
  double* gq = w;

  for (int i = 0; i < m->nbody; i++)
    for (int k = 0; k < m->bodies[i].nv; k++) dof_body_d[m->bodies[i].v_adr + k] = i;

  /*---- dynamics at (q, v) ----*/
  kn_mb_kinematics(m, q, v, d);
  kn_mb_mass_matrix(m, d, M);
  kn_mb_inverse_dynamics(m, d, NULL, bias); /* c(q, v) - g(q) */
  for (int i = 0; i < nv; i++) {
    double Mv = 0;
    for (int j = 0; j < nv; j++) Mv += M[i * nv + j] * v[j];
    base[i] = Mv + dt * (get(act->tau0, i, 0) - bias[i]);
    saturated[i] = 0;
  }
  for (int c = 0; c < nc; c++) {
    const kn_mb_coupler* cp = &m->couplers[c];
    const kn_mb_body* bj = &m->bodies[cp->body];
    const kn_mb_body* bm = &m->bodies[cp->master];
    double* Gc = G + (size_t)c * nv;
    memset(Gc, 0, (size_t)nv * sizeof *Gc);
    Gc[bj->v_adr] += 1;
    Gc[bm->v_adr] -= cp->multiplier;
    gq[c] = -COUPLER_BETA * (q[bj->q_adr] - cp->multiplier * q[bm->q_adr] - cp->offset) / dt;
  }

  /*---- solve, saturating PD dofs until none is newly over its limit ----*/
  for (int pass = 0; pass <= nv; pass++) {
    for (int k = 0; k < nv * nv; k++) A[k] = M[k];
    for (int i = 0; i < nv; i++) {
      int bi = (int)dof_body_d[i];
      A[i * nv + i] += dt * m->bodies[bi].damping;
      rhs[i] = base[i];
      double kp = get(act->kp, i, 0), kd = get(act->kd, i, 0);
      if (!(kp > 0 || kd > 0)) continue;
      if (saturated[i] != 0) {
        rhs[i] += dt * (tau[i] - get(act->tau0, i, 0));
        continue;
      }
      int qi = dof_q_index(m, bi);
      if (qi < 0) kp = 0;
      A[i * nv + i] += dt * dt * kp + dt * kd;
      if (kp > 0) rhs[i] -= dt * kp * (q[qi] - get(act->q_ref, i, 0));
      if (kd > 0) rhs[i] += dt * kd * get(act->v_ref, i, 0);
    }
    if (kn_chol_factor(A, nv, err) != KN_OK)
      return kn_error_prefix(err, "kn_mb_step: model '%s': M + dt D + dt^2 Kp + dt Kd: ", name);
    for (int i = 0; i < nv; i++) vn[i] = rhs[i];
    kn_chol_solve(A, nv, vn, 1);
    if (nc > 0) {
      for (int i = 0; i < nv; i++)
        for (int c = 0; c < nc; c++) Y[i * nc + c] = G[(size_t)c * nv + i];
      kn_chol_solve(A, nv, Y, nc);
      for (int a = 0; a < nc; a++) {
        const double* Ga = G + (size_t)a * nv;
        for (int b = 0; b < nc; b++) {
          double s = 0;
          for (int i = 0; i < nv; i++) s += Ga[i] * Y[i * nc + b];
          Sc[a * nc + b] = s;
        }
        double s = 0;
        for (int i = 0; i < nv; i++) s += Ga[i] * vn[i];
        lam[a] = gq[a] - s;
      }
      if (kn_chol_factor(Sc, nc, err) != KN_OK)
        return kn_error_prefix(err, "kn_mb_step: model '%s': couplers are redundant (G A^-1 G^T): ", name);
      kn_chol_solve(Sc, nc, lam, 1);
      for (int i = 0; i < nv; i++)
        for (int c = 0; c < nc; c++) vn[i] += Y[i * nc + c] * lam[c];
    }
    /* the actuation at v' and whether a PD dof newly saturates */
    int changed = 0;
    for (int i = 0; i < nv; i++) {
      double tau0 = get(act->tau0, i, 0), kp = get(act->kp, i, 0), kd = get(act->kd, i, 0);
      if (!(kp > 0 || kd > 0)) {
        tau[i] = tau0;
        continue;
      }
      if (saturated[i] != 0) continue;
      int qi = dof_q_index(m, (int)dof_body_d[i]);
      double t = tau0 - kd * (vn[i] - get(act->v_ref, i, 0));
      if (qi >= 0) t -= kp * (q[qi] + dt * vn[i] - get(act->q_ref, i, 0));
      double lim = get(act->effort, i, INFINITY);
      if (fabs(t) > lim) {
        tau[i] = copysign(lim, t);
        saturated[i] = 1;
        changed = 1;
      } else {
        tau[i] = t;
      }
    }
    if (!changed) break;
  }

  /*---- commit only a finite result ----*/
  kn_mb_integrate(m, q, vn, dt, qn);
  for (int i = 0; i < nv; i++)
    if (!isfinite(vn[i]))
      return kn_fail(err, KN_ERR_NUMERIC, "kn_mb_step: model '%s': velocity of dof %d is not finite", name, i);
  for (int i = 0; i < nq; i++)
    if (!isfinite(qn[i]))
      return kn_fail(err, KN_ERR_NUMERIC, "kn_mb_step: model '%s': position coordinate %d is not finite", name, i);
  memcpy(v, vn, (size_t)nv * sizeof *v);
  memcpy(q, qn, (size_t)nq * sizeof *q);
  if (tau_applied) memcpy(tau_applied, tau, (size_t)nv * sizeof *tau);
  return KN_OK;
}
