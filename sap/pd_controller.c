/* The implicit PD controller with effort limit (Drake's SapPdControllerConstraint, digest §5.3).
 * The actuation is implicit in v: the feed-forward u_ff belongs here, not in v*. */
#include <math.h>
#include <stdlib.h>

#include "sap/sap_internal.h"

typedef struct {
  double kp, kd, dt;
} pd_data;
_Static_assert(sizeof(pd_data) <= KN_SAP_MAX_DATA, "per-solve data must fit its slot");

/* §5.3 near-rigid gain clamp: the equivalent regularization R = 1 / (dt (dt Kp + Kd)) may not drop
 * below R_nr = 0.1^2 / (4 pi^2) w; if it does, rescale the gains keeping Kd / Kp fixed. */
static void make_data(const void* self, double dt, double w, void* data) {
  const kn_sap_pd_params* c = self;
  pd_data* d = data;
  d->dt = dt;
  d->kp = c->kp;
  d->kd = c->kd;
  double R = 1.0 / (dt * (dt * c->kp + c->kd));
  double R_nr = kn_sap_near_rigid_factor(0.1) * w;
  if (R < R_nr) {
    if (dt * c->kp > c->kd) {
      double tau = c->kd / c->kp;
      d->kp = 1.0 / (dt * (dt + tau) * R_nr);
      d->kd = tau * d->kp;
    } else {
      d->kd = 1.0 / (dt * (1.0 + dt * c->kp / c->kd) * R_nr);
      d->kp = (c->kp / c->kd) * d->kd;
    }
  }
}

/* u(v) = -Kp (q0 + dt v - qd) - Kd (v - vd) + u_ff, gamma = dt clamp(u, -e, e),
 * l = dt / (dt Kp + Kd) A(u) with A the Huber-like antiderivative of clamp, G = dt (dt Kp + Kd) [|u| <= e] */
static void eval(const void* self, const void* data, const double* vc, double* cost, double* gamma, double* G) {
  const kn_sap_pd_params* c = self;
  const pd_data* d = data;
  double dt = d->dt, e = c->effort_limit, v = vc[0];
  double u = -d->kp * (c->q0 + dt * v - c->qd) - d->kd * (v - c->vd) + c->u_ff;
  double stiff = dt * d->kp + d->kd, a;
  int inside = fabs(u) <= e;
  if (u < -e)
    a = -e * (u + 0.5 * e);
  else if (u > e)
    a = e * (u - 0.5 * e);
  else
    a = 0.5 * u * u;
  gamma[0] = dt * fmin(fmax(u, -e), e);
  *cost = dt / stiff * a;
  if (G) G[0] = inside ? dt * stiff : 0.0;
}

/* R = 1 / (dt (dt Kp + Kd)) and v_hat the velocity at which u = 0, so gamma = (v_hat - v) / R
 * inside the effort limit. */
static void regularization(const void* self, const void* data, double* R, double* v_hat) {
  const kn_sap_pd_params* c = self;
  const pd_data* d = data;
  double stiff = d->dt * d->kp + d->kd;
  R[0] = 1.0 / (d->dt * stiff);
  v_hat[0] = (-d->kp * (c->q0 - c->qd) + d->kd * c->vd + c->u_ff) / stiff;
}

const kn_sap_kind_ops kn_sap_pd_ops = {
    .kind = KN_SAP_PD,
    .self_size = sizeof(kn_sap_pd_params),
    .data_size = sizeof(pd_data),
    .make_data = make_data,
    .eval = eval,
    .regularization = regularization,
};

kn_status kn_sap_add_pd(kn_sap_problem* p, int clique, int dof, const kn_sap_pd_params* params, int* index,
                        kn_error* err) {
  int ic = p->num_constraints;
  const kn_sap_pd_params* c = params;
  if (!c) return kn_fail(err, KN_ERR_INVALID, "sap: PD controller %d: parameters are NULL", ic);
  if (clique < 0 || clique >= p->num_cliques || dof < 0 || dof >= p->cliques[clique].nv)
    return kn_fail(err, KN_ERR_INVALID, "sap: PD controller %d: clique %d dof %d out of range", ic, clique, dof);
  if (!(c->kp >= 0) || !(c->kd >= 0) || !isfinite(c->kp) || !isfinite(c->kd) || (c->kp == 0 && c->kd == 0) ||
      !(c->effort_limit > 0) || !isfinite(c->q0) || !isfinite(c->qd) || !isfinite(c->vd) || !isfinite(c->u_ff))
    return kn_fail(err, KN_ERR_INVALID,
                   "sap: PD controller %d (clique %d dof %d): expected finite Kp, Kd >= 0 not both 0, effort_limit > 0 "
                   "and finite q0, qd, vd, u_ff (got Kp %g Kd %g e %g)",
                   ic, clique, dof, c->kp, c->kd, c->effort_limit);
  int nv = p->cliques[clique].nv;
  double* J = kn_calloc((size_t)nv, sizeof(double));
  if (!J) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory adding PD controller %d", ic);
  J[dof] = 1.0;
  kn_status st = kn_sap_problem_add(p, &kn_sap_pd_ops, c, 1, clique, J, -1, NULL, index, err);
  free(J);
  return st;
}
