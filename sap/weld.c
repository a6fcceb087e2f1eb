/* Weld constraint (digest §5.4, Drake's SapWeldConstraint): frame P on body A and frame Q on body
 * B coincide. Six rigid holonomic rows (§5.1 with k = infinity, beta = 0.1): g = [a_PQ^W; p_PoQo^W]
 * and v_c the relative spatial velocity of B and A at the midpoint M of P_o and Q_o, which makes
 * the cost frame-invariant and the impulse pair obey Newton's third law at one point. */
#include <math.h>
#include <stdlib.h>

#include "sap/sap_internal.h"

typedef struct {
  double g0[6];
  double beta;
} weld_self;

typedef struct {
  double R[6], vhat[6];
} weld_data;
_Static_assert(sizeof(weld_data) <= KN_SAP_MAX_DATA, "per-solve data must fit its slot");

/* §5.1 with k = infinity: only the near-rigid branch, R = beta^2 w / (4 pi^2) (the same w for all
 * six rows, as Drake), tau -> dt so v_hat = -g0 / (2 dt). */
static void make_data(const void* self, double dt, double w, void* data) {
  const weld_self* h = self;
  weld_data* d = data;
  double R = kn_sap_near_rigid_factor(h->beta) * w;
  for (int i = 0; i < 6; i++) {
    d->R[i] = R;
    d->vhat[i] = -h->g0[i] / (2.0 * dt);
  }
}

/* unbounded impulse: gamma = y = R^-1 (v_hat - v_c), l = 1/2 R y^2 per row, G = diag(1/R) */
static void eval(const void* self, const void* data, const double* vc, double* cost, double* gamma, double* G) {
  (void)self;
  const weld_data* d = data;
  double l = 0;
  for (int i = 0; i < 6; i++) {
    double y = (d->vhat[i] - vc[i]) / d->R[i];
    gamma[i] = y;
    l += 0.5 * d->R[i] * y * y;
    if (G)
      for (int j = 0; j < 6; j++) G[i * 6 + j] = i == j ? 1.0 / d->R[i] : 0.0;
  }
  *cost = l;
}

static void regularization(const void* self, const void* data, double* R, double* v_hat) {
  (void)self;
  const weld_data* d = data;
  for (int i = 0; i < 6; i++) {
    R[i] = d->R[i];
    v_hat[i] = d->vhat[i];
  }
}

const kn_sap_kind_ops kn_sap_weld_ops = {
    .kind = KN_SAP_WELD,
    .self_size = sizeof(weld_self),
    .data_size = sizeof(weld_data),
    .make_data = make_data,
    .eval = eval,
    .regularization = regularization,
};

/* (R) => log(R) as an axis-angle vector, through the unit quaternion (w >= 0): angle 2 atan2(|u|, w)
 * about u / |u|; the limit 2 u / w for tiny |u| keeps full precision near the identity. */
static void rotation_log(const double R[9], double a[3]) {
  double q[4];
  kn_quat_from_mat3(R, q);
  if (q[0] < 0)
    for (int k = 0; k < 4; k++) q[k] = -q[k];
  double s = sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  double f = s > 1e-12 ? 2.0 * atan2(s, q[0]) / s : 2.0 / q[0];
  for (int k = 0; k < 3; k++) a[k] = f * q[k + 1];
}

void kn_sap_weld_error(const kn_pose* X_WP, const kn_pose* X_WQ, double g[6], double p_WM[3]) {
  double R_PQ[9], a_P[3];
  kn_mat3_mulT(X_WP->R, X_WQ->R, R_PQ); /* R_PQ = R_WP^T R_WQ */
  rotation_log(R_PQ, a_P);
  kn_mat3_vec(X_WP->R, a_P, g); /* expressed in W */
  for (int k = 0; k < 3; k++) {
    g[3 + k] = X_WQ->p[k] - X_WP->p[k];
    if (p_WM) p_WM[k] = 0.5 * (X_WQ->p[k] + X_WP->p[k]);
  }
}

kn_status kn_sap_add_weld(kn_sap_problem* p, int clique_a, const double* J_a, int clique_b, const double* J_b,
                          const double g0[6], int* index, kn_error* err) {
  int ic = p->num_constraints;
  for (int k = 0; k < 6; k++)
    if (!isfinite(g0[k])) return kn_fail(err, KN_ERR_INVALID, "sap: weld %d: pose error g0[%d] is not finite", ic, k);
  weld_self h = {.beta = 0.1}; /* Drake hard-codes beta = 0.1 for every non-contact constraint (§2.1) */
  for (int k = 0; k < 6; k++) h.g0[k] = g0[k];
  return kn_sap_problem_add(p, &kn_sap_weld_ops, &h, 6, clique_a, J_a, clique_b, J_b, index, err);
}
