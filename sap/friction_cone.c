/* The SAP friction-cone contact constraint (Drake's SapFrictionConeConstraint): the compliant
 * kSap law with regularization R = diag(R_t, R_t, R_n) and bias v_hat (digest §2.1), and the
 * analytic projection onto the friction cone in the R-norm with its derivative (§3). */
#include <math.h>

#include "sap/sap_internal.h"

typedef struct {
  double Rt, Rn, vhat_n, mu, vhat_t[2];
} contact_data;
_Static_assert(sizeof(contact_data) <= KN_SAP_MAX_DATA, "per-solve data must fit its slot");

/* §3: soft norm of y_t so that t_hat is defined at y_t = 0 (Drake hard-codes 1e-7) */
static const double soft_norm_eps = 1e-7;

//---- the projection ----

kn_sap_contact_mode kn_sap_cone_project(double mu, double Rt, double Rn, const double y[3], double gamma[3],
                                        double G[9]) {
  double mu_tilde = mu * sqrt(Rt / Rn), mu_hat = mu * Rt / Rn;
  double yr = sqrt(y[0] * y[0] + y[1] * y[1] + soft_norm_eps * soft_norm_eps);
  double yn = y[2];
  double t[2] = {y[0] / yr, y[1] / yr};
  /* regions in the order of the §3 table: stiction, sliding, no contact */
  if (yr <= mu * yn) {
    for (int k = 0; k < 3; k++) gamma[k] = y[k];
    if (G) {
      for (int k = 0; k < 9; k++) G[k] = 0;
      G[0] = G[4] = 1.0 / Rt; /* G = R^-1 */
      G[8] = 1.0 / Rn;
    }
    return KN_SAP_STICTION;
  }
  if (-mu_hat * yr < yn && yn < yr / mu) {
    double f = 1.0 / (1.0 + mu_tilde * mu_tilde);
    double gn = (yn + mu_hat * yr) * f;
    gamma[0] = mu * gn * t[0];
    gamma[1] = mu * gn * t[1];
    gamma[2] = gn;
    if (G) {
      /* dP/dy = [mu (gn/yr P_perp + mu_hat f P), mu f t; mu_hat f t^T, f], then G = dP/dy R^-1 */
      const double Rinv[3] = {1.0 / Rt, 1.0 / Rt, 1.0 / Rn};
      double D[9];
      for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++) {
          double P = t[i] * t[j], Pperp = (i == j ? 1.0 : 0.0) - P;
          D[3 * i + j] = mu * (gn / yr * Pperp + mu_hat * f * P);
        }
        D[3 * i + 2] = mu * f * t[i];
        D[6 + i] = mu_hat * f * t[i];
      }
      D[8] = f;
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) G[3 * i + j] = D[3 * i + j] * Rinv[j];
    }
    return KN_SAP_SLIDING;
  }
  gamma[0] = gamma[1] = gamma[2] = 0;
  if (G)
    for (int k = 0; k < 9; k++) G[k] = 0;
  return KN_SAP_NO_CONTACT;
}

//---- the constraint kind ----

/* §2.1: R_t = sigma w, R_n = max(beta^2 w / (4 pi^2), 1 / (dt k (dt + tau_d))),
 * v_hat = (vhat_t, -phi0 / (dt + tau_d)) (vhat_t: the stiction anchors' bias, 0 in Drake) */
static void make_data(const void* self, double dt, double w, void* data) {
  const kn_sap_contact_params* c = self;
  contact_data* d = data;
  d->Rt = c->sigma * w;
  d->Rn = fmax(kn_sap_near_rigid_factor(c->beta) * w, 1.0 / (dt * c->stiffness * (dt + c->dissipation_time)));
  d->vhat_n = -c->phi0 / (dt + c->dissipation_time);
  d->mu = c->mu;
  d->vhat_t[0] = c->vhat_t[0], d->vhat_t[1] = c->vhat_t[1];
}

/* y = R^-1 (v_hat - v_c), gamma = P(y), l = 1/2 gamma^T R gamma, G = dP/dy R^-1 (§3) */
static void eval(const void* self, const void* data, const double* vc, double* cost, double* gamma, double* G) {
  (void)self;
  const contact_data* d = data;
  double y[3] = {(d->vhat_t[0] - vc[0]) / d->Rt, (d->vhat_t[1] - vc[1]) / d->Rt, (d->vhat_n - vc[2]) / d->Rn};
  kn_sap_cone_project(d->mu, d->Rt, d->Rn, y, gamma, G);
  *cost = 0.5 * (d->Rt * (gamma[0] * gamma[0] + gamma[1] * gamma[1]) + d->Rn * gamma[2] * gamma[2]);
}

/* The first Newton step's G: a contact that starts the step penetrating (phi0 < 0, v_hat_n > 0)
 * will press at the solution, and mostly stick (a grasp, dough on a floor or a roller), but at the
 * warm start it sits just outside the thin stiction band (|v_t| <= mu R_t gamma_n, about 1e-5 m/s)
 * or just outside the active set (the compliant gap decays between steps): its true G, 0 or the
 * weak sliding curvature along the slip, lets that step push it far in and the line search cuts it
 * to alpha 0.004-0.05 (measured on the MPM scenes). So such a contact gets the stiction G = R^-1.
 * Newton iterations per step (bench/mpm.c's scenes and the examples): shake 24.1 -> 18.2, tearing
 * 16.9 -> 13.2, rolling 28.4 -> 24.9, pouring 17.7 -> 19.7 (the liquid slides and separates). */
static void first_G(const void* self, const void* data, const double* vc, double* G) {
  (void)self;
  const contact_data* d = data;
  double y[3] = {(d->vhat_t[0] - vc[0]) / d->Rt, (d->vhat_t[1] - vc[1]) / d->Rt, (d->vhat_n - vc[2]) / d->Rn},
         gamma[3];
  kn_sap_contact_mode mode = kn_sap_cone_project(d->mu, d->Rt, d->Rn, y, gamma, G);
  if (d->vhat_n <= 0 || mode == KN_SAP_STICTION) return;
  for (int k = 0; k < 9; k++) G[k] = 0;
  G[0] = G[4] = 1.0 / d->Rt;
  G[8] = 1.0 / d->Rn;
}

static void regularization(const void* self, const void* data, double* R, double* v_hat) {
  (void)self;
  const contact_data* d = data;
  R[0] = R[1] = d->Rt;
  R[2] = d->Rn;
  v_hat[0] = d->vhat_t[0], v_hat[1] = d->vhat_t[1];
  v_hat[2] = d->vhat_n;
}

const kn_sap_kind_ops kn_sap_contact_ops = {
    .kind = KN_SAP_CONTACT,
    .self_size = sizeof(kn_sap_contact_params),
    .data_size = sizeof(contact_data),
    .make_data = make_data,
    .eval = eval,
    .regularization = regularization,
    .first_G = first_G,
};

kn_sap_contact_params kn_sap_contact_params_default(void) {
  /* Drake: DefaultProximityProperties (k 1e6, tau 0.1 s per geometry, summed per pair; mu 0.5),
   * sap_near_rigid_threshold 1, sigma 1e-3 (digest §2.1, §8) */
  return (kn_sap_contact_params){
      .phi0 = 0, .mu = 0.5, .stiffness = 1e6, .dissipation_time = 0.2, .beta = 1.0, .sigma = 1e-3};
}

static kn_status check_params(const kn_sap_problem* p, const kn_sap_contact_params* c, kn_error* err) {
  int ic = p->num_constraints;
  if (!c) return kn_fail(err, KN_ERR_INVALID, "sap: contact %d: parameters are NULL", ic);
  if (!isfinite(c->phi0) || !isfinite(c->vhat_t[0]) || !isfinite(c->vhat_t[1]) || !(c->mu >= 0) || !isfinite(c->mu) || !(c->stiffness > 0) ||
      !(c->dissipation_time >= 0) || !isfinite(c->dissipation_time) || !(c->beta >= 0) || !isfinite(c->beta) ||
      !(c->sigma > 0) || !isfinite(c->sigma))
    return kn_fail(err, KN_ERR_INVALID,
                   "sap: contact %d: expected finite phi0 and vhat_t, mu >= 0, stiffness > 0, dissipation_time >= 0, beta >= 0, "
                   "sigma > 0 (got phi0 %g mu %g k %g tau %g beta %g sigma %g)",
                   ic, c->phi0, c->mu, c->stiffness, c->dissipation_time, c->beta, c->sigma);
  if (isinf(c->stiffness) && !(c->beta > 0))
    return kn_fail(err, KN_ERR_INVALID, "sap: contact %d: infinite stiffness needs beta > 0 (near-rigid regime)", ic);
  return KN_OK;
}

kn_status kn_sap_add_contact(kn_sap_problem* p, int clique_a, const double* J_a, int clique_b, const double* J_b,
                             const kn_sap_contact_params* params, int* index, kn_error* err) {
  kn_status st = check_params(p, params, err);
  return st ? st : kn_sap_problem_add(p, &kn_sap_contact_ops, params, 3, clique_a, J_a, clique_b, J_b, index, err);
}

kn_status kn_sap_add_contact_nodal(kn_sap_problem* p, int clique_a, const kn_sap_nodal_jacobian* J_a, int clique_b,
                                   const double* J_b, const kn_sap_contact_params* params, int* index,
                                   kn_error* err) {
  kn_status st = check_params(p, params, err);
  return st ? st
            : kn_sap_problem_add_nodal(p, &kn_sap_contact_ops, params, 3, clique_a, J_a, clique_b, J_b, index, err);
}
