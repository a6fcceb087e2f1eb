/* The stand-in time step of a tree alone: symplectic Euler in momentum form, with joint damping
 * and the actuation's PD implicit, effort limits by clamping, and couplers as equality
 * constraints.
 *
 * Momentum form. With p = M(q) v the equations of motion are p_dot = tau - g(q) + f(q, v),
 * f = M_dot v - C v (momentum.c; dT/dq for 1-DoF joints). Symplectic Euler (Hairer, Lubich and
 * Wanner, Geometric Numerical Integration, Thm. VI.3.3) for the state (q, p):
 *   p' = p + dt (tau(v') - g(q) + f(q, v') - D v'),   M(q) v' = p',   q' = q (+) dt v',
 * implicit in v' only through f (fixed-point iterations reusing one factor) and through the
 * damping and PD terms, which enter the matrix as before:
 *   A v' = p + dt (tau0 - g(q) + f(q, v')) - dt Kp (q - q_ref) + dt Kd v_ref,
 *   A = M + dt D + dt^2 Kp + dt Kd (SPD).
 * The world stores (q, v), so v_{n+1} is chosen with M(q') v_{n+1} = p': the next step then
 * recovers p exactly (its M(q') comes from a cache keyed by q', so CRBA runs once per step).
 * Unlike the velocity form M(q) (v' - v) = dt (...), whose error against this map is O(dt^2) per
 * step and drifts secularly, the map (q, p) -> (q', p') is symplectic for 1-DoF joints: energy
 * errors stay bounded (O(dt)) with no drift.
 *
 * Floating roots (a Lie group: v is the body twist). Their 6 momenta are the momentum of the
 * whole tree in the root's body frame, and in the world frame that momentum is conserved without
 * external forces. It is advanced in the world frame and read in the body frame at the midpoint
 * pose X_n exp(dt V'/2) (a symmetric, reversible choice; the explicit X_n would raise a free
 * body's energy by dt^2/2 (w x mu)' I^-1 (w x mu) every step), i.e. in body coordinates
 *   mu_mid = E^-* mu_n,   A v' = [mu_mid + dt F; ...],   mu_{n+1} = E^-* (M v')_root,
 *   E = exp(dt V'/2), the root's motion over half the step.
 * M does not depend on a floating root's pose, so the same M(q) serves. The explicit root forces
 * (gravity, feed-forward) are taken at q_n. Other PLANAR/FLOATING joints use f as given (first
 * order, not exactly symplectic).
 *
 * Effort limits: after a solve, a PD dof whose torque exceeds its limit gets its torque fixed at
 * +-effort and is treated explicitly (its PD terms leave A and the right-hand side); the system is
 * re-solved until no new dof saturates (at most nv + 1 passes; the saturated set only grows).
 *
 * Couplers (mimic): g(q) = q_j - mult q_m - offset = 0 is imposed at the velocity level with a
 * Baumgarte-like drift correction, G v' = -beta g(q) / dt with beta = 0.2, so that for 1-DoF
 * joints g(q') = (1 - beta) g(q). The multipliers come from the Schur complement:
 *   v' = v_free + Y lambda,  Y = A^-1 G^T,  (G Y) lambda = b - G v_free.
 * The stored v_{n+1} = M(q')^-1 p' is projected back onto G v = G v' with the metric M(q') (the
 * velocity projection of RATTLE), so the coupled velocities stay exactly consistent.
 * The coupler forces are constraint forces, not actuation: they are not in tau_applied.
 *
 * kp acts only on the dofs of 1-DoF joints (q_i is then q[q_adr]); kd acts on any dof. */
#include <math.h>
#include <string.h>

#include "multibody/mb_internal.h"

#define COUPLER_BETA 0.2
#define FIXED_POINT_MAX 30
#define FIXED_POINT_TOL 1e-14

static double get(const double* x, int i, double dflt) { return x ? x[i] : dflt; }

/* position coordinate of the dof of body b when its joint is 1-DoF, else -1 (no kp) */
static int dof_q_index(const kn_mb_model* m, int b) {
  return m->bodies[b].nq == 1 && m->bodies[b].nv == 1 ? m->bodies[b].q_adr : -1;
}

/* roots whose momentum is advanced in the world frame */
static int world_momentum_root(const kn_mb_body* b) { return b->parent < 0 && b->jtype == KN_JOINT_FLOATING; }

/* E = exp(s V) for a body twist V = [w; u]: the pose reached moving with V for time s, exactly
 * as kn_mb_integrate moves a FLOATING joint (rotation exp(s w), translation by the SE(3) left
 * Jacobian), so that X_n E E is the pose kn_mb_integrate gives for step 2 s. */
static void screw_pose(const double V[6], double s, kn_pose* E) {
  double phi[3] = {V[0] * s, V[1] * s, V[2] * s}, u[3] = {V[3] * s, V[4] * s, V[5] * s}, t1[3], t2[3];
  double th = kn_vec3_norm(phi);
  double c1 = th < 1e-4 ? 0.5 - th * th / 24 : (1 - cos(th)) / (th * th);
  double c2 = th < 1e-4 ? 1.0 / 6 - th * th / 120 : (th - sin(th)) / (th * th * th);
  mb_cross(phi, u, t1);
  mb_cross(phi, t1, t2);
  for (int k = 0; k < 3; k++) E->p[k] = u[k] + c1 * t1[k] + c2 * t2[k];
  double h = 0.5 * th, sh = th < 1e-8 ? 0.5 : sin(h) / th;
  double e[4] = {cos(h), sh * phi[0], sh * phi[1], sh * phi[2]};
  kn_quat_normalize(e);
  kn_mat3_from_quat(e, E->R);
}

/* force vector from the parent frame to the body frame of X = {R, p}: f_b = R^T f_p,
 * n_b = R^T (n_p - p x f_p) (fp and fb must not alias) */
static void force_to_body(const kn_pose* X, const double fp[6], double fb[6]) {
  double t[3], n[3];
  mb_cross(X->p, fp + 3, t);
  for (int k = 0; k < 3; k++) n[k] = fp[k] - t[k];
  mb_rotT(X->R, n, fb);
  mb_rotT(X->R, fp + 3, fb + 3);
}

/* y = M x for a full row-major n x n M */
/* For every floating root (whose momentum the step carries in the world frame): out = base +
 * that momentum read in the midpoint frame X_n exp(dt V / 2), from the world-frame p (base NULL = 0).
 * Other dofs are left alone. */
static void roots_to_midpoint(const kn_mb_model* m, const double* v, double dt, const double* p, const double* base,
                              double* out) {
  for (int i = 0; i < m->nbody; i++) {
    const kn_mb_body* b = &m->bodies[i];
    if (!world_momentum_root(b)) continue;
    kn_pose E;
    double mu[6];
    screw_pose(v + b->v_adr, 0.5 * dt, &E);
    force_to_body(&E, p + b->v_adr, mu);
    for (int k = 0; k < 6; k++) out[b->v_adr + k] = (base ? base[b->v_adr + k] : 0.0) + mu[k];
  }
}

static void mat_vec(const double* M, int n, const double* x, double* y) {
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += M[(size_t)i * n + j] * x[j];
    y[i] = s;
  }
}

/* Y = F^-1 G^T and the factored Schur complement G Y for the couplers (F a Cholesky factor) */
static kn_status coupler_schur(const double* F, int nv, int nc, const double* G, double* Y, double* Sc,
                               kn_error* err) {
  for (int i = 0; i < nv; i++)
    for (int c = 0; c < nc; c++) Y[i * nc + c] = G[(size_t)c * nv + i];
  kn_chol_solve(F, nv, Y, nc);
  for (int a = 0; a < nc; a++)
    for (int b = 0; b < nc; b++) {
      double s = 0;
      for (int i = 0; i < nv; i++) s += G[(size_t)a * nv + i] * Y[i * nc + b];
      Sc[a * nc + b] = s;
    }
  return kn_chol_factor(Sc, nc, err);
}

/* x += Y lambda with (G Y) lambda = b - G x (Sc the factored G Y) */
static void coupler_correct(int nv, int nc, const double* G, const double* Y, const double* Sc, const double* b,
                            double* lam, double* x) {
  for (int a = 0; a < nc; a++) {
    double s = 0;
    for (int i = 0; i < nv; i++) s += G[(size_t)a * nv + i] * x[i];
    lam[a] = b[a] - s;
  }
  kn_chol_solve(Sc, nc, lam, 1);
  for (int i = 0; i < nv; i++)
    for (int c = 0; c < nc; c++) x[i] += Y[i * nc + c] * lam[c];
}

/* F_c(q, v) = tau0 - dH/dq = tau0 + g(q) + f(q, v), the explicit generalized force, without f on the
 * world-momentum roots (their momentum is advanced in the world frame); tmp holds nv doubles */
static void conservative_force(const kn_mb_model* m, kn_mb_data* d, const double* q, const double* v,
                               const double* tau0, double* F, double* tmp) {
  kn_mb_kinematics(m, q, v, d);
  kn_mb_momentum_force(m, d, F);
  for (int i = 0; i < m->nbody; i++)
    if (world_momentum_root(&m->bodies[i]))
      for (int k = 0; k < 6; k++) F[m->bodies[i].v_adr + k] = 0;
  kn_mb_gravity_torques(m, d, tmp);
  for (int i = 0; i < m->nv; i++) F[i] += tau0[i] - tmp[i];
}

/* Processing. Symplectic Euler conserves a modified energy H~ = H - dt/2 H_p . H_q + O(dt^2)
 * (GNI §IX.3), so its H oscillates by O(dt). Storing the velocity of the momentum
 *   p_bar = p + dt/2 F_c(q, p),  F_c = -H_q,
 * gives H(q, p_bar) = H~ + O(dt^2): the stored state's energy is second-order accurate while
 * the map on p, and hence symplecticity, is unchanged (a fixed change of variables, conjugacy).
 * This recovers p from the stored v (p_bar = M v): p = p_bar - dt/2 F_c(q, M^-1 p), a fixed
 * point with contraction ~ dt |v|, using the factor L of M(q). The feed-forward tau0 is part of
 * F_c (so a tree held still by gravity compensation reports v = 0); the processing uses the
 * tau0 of the step that produced the state, cached with q', so the inverse is exact. */
static kn_status recover_momentum(const kn_mb_model* m, kn_mb_data* d, const double* q, const double* v, double dt,
                                  const double* M, const double* L, const double* tau0, double* p, double* F,
                                  double* vk, double* tmp) {
  int nv = m->nv;
  memcpy(vk, v, (size_t)nv * sizeof *v);
  for (int it = 0; it < FIXED_POINT_MAX; it++) {
    conservative_force(m, d, q, vk, tau0, F, tmp);
    mat_vec(M, nv, v, p);
    for (int i = 0; i < nv; i++) p[i] -= 0.5 * dt * F[i];
    memcpy(tmp, p, (size_t)nv * sizeof *p);
    kn_chol_solve(L, nv, tmp, 1);
    double change = 0, size = 1;
    for (int i = 0; i < nv; i++) {
      change = fmax(change, fabs(tmp[i] - vk[i]));
      size = fmax(size, fabs(tmp[i]));
    }
    memcpy(vk, tmp, (size_t)nv * sizeof *vk);
    if (!(change > FIXED_POINT_TOL * size)) break;
  }
  for (int i = 0; i < nv; i++)
    if (!isfinite(p[i])) return KN_ERR_NUMERIC;
  return KN_OK;
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
  double* Mn = w;           w += (size_t)nv * nv; /* M(q'), factored */
  double* Mcache = w;       w += (size_t)nv * nv; /* M(q_key), kept between steps */
  double* Lcache = w;       w += (size_t)nv * nv; /* its Cholesky factor */
  double* qkey = w;         w += nq;
  double* tau0key = w;      w += nv; /* the feed-forward the stored v was processed with */
  double* cache_valid = w;  w += 1;
  double* p = w;            w += nv;
  double* fexp = w;         w += nv; /* dt (explicit forces and PD terms), the rhs without p and f */
  double* rhs = w;          w += nv;
  double* vn = w;           w += nv;
  double* vnew = w;         w += nv;
  double* f = w;            w += nv;
  double* pn = w;           w += nv;
  double* vnext = w;        w += nv;
  double* tau = w;          w += nv;
  double* saturated = w;    w += nv;
  double* dof_body_d = w;   w += nv; /* body of each dof, stored as double */
  double* gvn = w;          w += nv; /* G v' (first nc entries) */
  double* qn = w;           w += nq;
  double* G = w;            w += (size_t)nc * nv;
  double* Y = w;            w += (size_t)nc * nv;
  double* Sc = w;           w += (size_t)nc * nc;
  double* lam = w;          w += nc;
  double* gq = w;

  for (int i = 0; i < m->nbody; i++)
    for (int k = 0; k < m->bodies[i].nv; k++) dof_body_d[m->bodies[i].v_adr + k] = i;

  /*---- momentum and explicit forces at (q, v) ----*/
  kn_mb_kinematics(m, q, v, d);
  int cached = *cache_valid == 1 && memcmp(qkey, q, (size_t)nq * sizeof *q) == 0;
  if (cached) {
    memcpy(M, Mcache, (size_t)nv * nv * sizeof *M);
  } else {
    kn_mb_mass_matrix(m, d, M);
    memcpy(Mcache, M, (size_t)nv * nv * sizeof *M);
    memcpy(Lcache, M, (size_t)nv * nv * sizeof *M);
    *cache_valid = 0;
    for (int i = 0; i < nv; i++) tau0key[i] = get(act->tau0, i, 0); /* the state is taken as processed with this */
    if (kn_chol_factor(Lcache, nv, err) != KN_OK)
      return kn_error_prefix(err, "kn_mb_step: model '%s': M(q): ", name);
    memcpy(qkey, q, (size_t)nq * sizeof *q);
    *cache_valid = 1;
  }
  if (recover_momentum(m, d, q, v, dt, M, Lcache, tau0key, p, f, vnew, vnext) != KN_OK)
    return kn_fail(err, KN_ERR_NUMERIC, "kn_mb_step: model '%s': the momentum of the state is not finite", name);
  kn_mb_kinematics(m, q, v, d);
  kn_mb_gravity_torques(m, d, tau); /* -g(q), reusing tau as scratch */
  for (int i = 0; i < nv; i++) {
    fexp[i] = get(act->tau0, i, 0) - tau[i];
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
  memcpy(vn, v, (size_t)nv * sizeof *v);

  /*---- solve, saturating PD dofs until none is newly over its limit ----*/
  for (int pass = 0; pass <= nv; pass++) {
    for (int k = 0; k < nv * nv; k++) A[k] = M[k];
    for (int i = 0; i < nv; i++) {
      int bi = (int)dof_body_d[i];
      A[i * nv + i] += dt * m->bodies[bi].damping;
      rhs[i] = dt * fexp[i]; /* rhs holds the constant part until the iterations below */
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
    memcpy(pn, rhs, (size_t)nv * sizeof *rhs); /* pn: the constant part, for this pass */
    if (kn_chol_factor(A, nv, err) != KN_OK)
      return kn_error_prefix(err, "kn_mb_step: model '%s': M + dt D + dt^2 Kp + dt Kd: ", name);
    if (nc > 0 && coupler_schur(A, nv, nc, G, Y, Sc, err) != KN_OK)
      return kn_error_prefix(err, "kn_mb_step: model '%s': couplers are redundant (G A^-1 G^T): ", name);

    /* fixed point v' = A^-1 (p(v') + dt f(q, v') + const): f is quadratic in v with a
     * contraction factor ~ dt |v| (a few iterations at robot step sizes) */
    for (int it = 0; it < FIXED_POINT_MAX; it++) {
      kn_mb_kinematics(m, q, vn, d);
      kn_mb_momentum_force(m, d, f);
      for (int i = 0; i < nv; i++) rhs[i] = pn[i] + p[i] + dt * f[i];
      /* the root's momentum read in the midpoint frame; no f (the world frame has none) */
      roots_to_midpoint(m, vn, dt, p, pn, rhs);
      memcpy(vnew, rhs, (size_t)nv * sizeof *rhs);
      kn_chol_solve(A, nv, vnew, 1);
      if (nc > 0) coupler_correct(nv, nc, G, Y, Sc, gq, lam, vnew);
      double change = 0, size = 1;
      for (int i = 0; i < nv; i++) {
        change = fmax(change, fabs(vnew[i] - vn[i]));
        size = fmax(size, fabs(vnew[i]));
      }
      memcpy(vn, vnew, (size_t)nv * sizeof *vn);
      if (!(change > FIXED_POINT_TOL * size)) break; /* also stops on NaN */
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

  /*---- q' and p' = M(q) v' (root momenta moved on to the new frame) ----*/
  kn_mb_integrate(m, q, vn, dt, qn);
  for (int i = 0; i < nv; i++)
    if (!isfinite(vn[i]))
      return kn_fail(err, KN_ERR_NUMERIC, "kn_mb_step: model '%s': velocity of dof %d is not finite", name, i);
  for (int i = 0; i < nq; i++)
    if (!isfinite(qn[i]))
      return kn_fail(err, KN_ERR_NUMERIC, "kn_mb_step: model '%s': position coordinate %d is not finite", name, i);
  mat_vec(M, nv, vn, pn);
  roots_to_midpoint(m, vn, dt, pn, NULL, pn);

  /*---- v_{n+1} = M(q')^-1 p', with M(q') cached for the next step ----*/
  kn_mb_kinematics(m, qn, NULL, d);
  kn_mb_mass_matrix(m, d, Mn);
  memcpy(Mcache, Mn, (size_t)nv * nv * sizeof *Mn);
  *cache_valid = 0;
  if (kn_chol_factor(Mn, nv, err) != KN_OK)
    return kn_error_prefix(err, "kn_mb_step: model '%s': M(q') at the new configuration: ", name);
  memcpy(Lcache, Mn, (size_t)nv * nv * sizeof *Mn);
  memcpy(qkey, qn, (size_t)nq * sizeof *qn);
  for (int i = 0; i < nv; i++) tau0key[i] = get(act->tau0, i, 0);
  *cache_valid = 1;
  memcpy(vnext, pn, (size_t)nv * sizeof *pn);
  kn_chol_solve(Mn, nv, vnext, 1);
  /* the stored velocity is the processed one, M(q') v_{n+1} = p' + dt/2 F_c(q', p') */
  for (int i = 0; i < nv; i++) rhs[i] = get(act->tau0, i, 0);
  conservative_force(m, d, qn, vnext, rhs, f, vnew);
  for (int i = 0; i < nv; i++) vnext[i] = pn[i] + 0.5 * dt * f[i];
  kn_chol_solve(Mn, nv, vnext, 1);
  if (nc > 0) {
    for (int a = 0; a < nc; a++) {
      double s = 0;
      for (int i = 0; i < nv; i++) s += G[(size_t)a * nv + i] * vn[i];
      gvn[a] = s;
    }
    if (coupler_schur(Mn, nv, nc, G, Y, Sc, err) != KN_OK)
      return kn_error_prefix(err, "kn_mb_step: model '%s': couplers are redundant (G M^-1 G^T): ", name);
    coupler_correct(nv, nc, G, Y, Sc, gvn, lam, vnext);
  }
  for (int i = 0; i < nv; i++)
    if (!isfinite(vnext[i]))
      return kn_fail(err, KN_ERR_NUMERIC, "kn_mb_step: model '%s': velocity of dof %d is not finite", name, i);

  /*---- commit ----*/
  memcpy(v, vnext, (size_t)nv * sizeof *v);
  memcpy(q, qn, (size_t)nq * sizeof *q);
  if (tau_applied) memcpy(tau_applied, tau, (size_t)nv * sizeof *tau);
  return KN_OK;
}
