/* Holonomic constraints (Drake's SapHolonomicConstraint, digest §5.1) and the two kinds built
 * on them: joint limits (§5.2, impulse in [0, inf)) and couplers (§5.4, rigid, unbounded). */
#include <math.h>
#include <stdlib.h>

#include "sap/sap_internal.h"

typedef struct {
  double R[2], vhat[2];
} holonomic_data;
_Static_assert(sizeof(holonomic_data) <= KN_SAP_MAX_DATA, "per-solve data must fit its slot");

/* §5.1: R_i = max(beta^2 w / (4 pi^2), 1 / (dt (dt + tau) k)), and tau -> dt whenever the
 * near-rigid branch wins (critically damped); v_hat_i = -g0_i / (dt + tau). */
static void make_data(const void* self, double dt, double w, void* data) {
  const kn_sap_holonomic* h = self;
  holonomic_data* d = data;
  double R_near_rigid = kn_sap_near_rigid_factor(h->beta) * w;
  double R_compliant = 1.0 / (dt * (dt + h->tau) * h->stiffness); /* 0 when k = infinity */
  double R = R_compliant, tau = h->tau;
  if (R_near_rigid > R_compliant) {
    R = R_near_rigid;
    tau = dt;
  }
  for (int i = 0; i < h->rows; i++) {
    d->R[i] = R;
    d->vhat[i] = -h->g0[i] / (dt + tau);
  }
}

/* y = R^-1 (v_hat - v_c), gamma = clamp(y, lower, upper), G = R^-1 [lower < y < upper], and the
 * continuous cost (§5.1): 1/2 R y^2 inside the box, R (gamma_b y - 1/2 gamma_b^2) when clamped. */
static void eval(const void* self, const void* data, const double* vc, double* cost, double* gamma, double* G) {
  const kn_sap_holonomic* h = self;
  const holonomic_data* d = data;
  double l = 0;
  for (int i = 0; i < h->rows; i++) {
    double R = d->R[i], y = (d->vhat[i] - vc[i]) / R;
    int inside = 0;
    if (y < h->lower[i]) {
      gamma[i] = h->lower[i];
    } else if (y > h->upper[i]) {
      gamma[i] = h->upper[i];
    } else {
      gamma[i] = y;
      inside = h->lower[i] < y && y < h->upper[i];
    }
    if (y >= h->lower[i] && y <= h->upper[i])
      l += 0.5 * R * y * y;
    else
      l += R * (gamma[i] * y - 0.5 * gamma[i] * gamma[i]);
    if (G)
      for (int j = 0; j < h->rows; j++) G[i * h->rows + j] = (i == j && inside) ? 1.0 / R : 0.0;
  }
  *cost = l;
}

static void regularization(const void* self, const void* data, double* R, double* v_hat) {
  const kn_sap_holonomic* h = self;
  const holonomic_data* d = data;
  for (int i = 0; i < h->rows; i++) {
    R[i] = d->R[i];
    v_hat[i] = d->vhat[i];
  }
}

const kn_sap_kind_ops kn_sap_limit_ops = {
    .kind = KN_SAP_LIMIT,
    .self_size = sizeof(kn_sap_holonomic),
    .data_size = sizeof(holonomic_data),
    .make_data = make_data,
    .eval = eval,
    .regularization = regularization,
};

const kn_sap_kind_ops kn_sap_coupler_ops = {
    .kind = KN_SAP_COUPLER,
    .self_size = sizeof(kn_sap_holonomic),
    .data_size = sizeof(holonomic_data),
    .make_data = make_data,
    .eval = eval,
    .regularization = regularization,
};

//---- joint limits (§5.2) ----

kn_sap_limit_params kn_sap_limit_params_default(double dt) {
  /* Drake's SapDriver: k = 1e12, tau = dt, beta = 0.1 (digest §8) */
  return (kn_sap_limit_params){.stiffness = 1e12, .dissipation_time = dt, .beta = 0.1};
}

static kn_status check_dof(const kn_sap_problem* p, const char* what, int ic, int clique, int dof, kn_error* err) {
  if (clique < 0 || clique >= p->num_cliques)
    return kn_fail(err, KN_ERR_INVALID, "sap: %s %d: clique %d out of range [0, %d)", what, ic, clique,
                   p->num_cliques);
  if (dof < 0 || dof >= p->cliques[clique].nv)
    return kn_fail(err, KN_ERR_INVALID, "sap: %s %d: dof %d out of range [0, %d) of clique %d", what, ic, dof,
                   p->cliques[clique].nv, clique);
  return KN_OK;
}

kn_status kn_sap_add_limit(kn_sap_problem* p, int clique, int dof, double q0, double lower, double upper,
                           const kn_sap_limit_params* params, int* index, kn_error* err) {
  int ic = p->num_constraints;
  kn_status st = check_dof(p, "joint limit", ic, clique, dof, err);
  if (st) return st;
  kn_sap_limit_params lp = params ? *params : kn_sap_limit_params_default(p->dt);
  if (!isfinite(q0) || !(lower < upper) || (isinf(lower) && isinf(upper)) || isnan(lower) || isnan(upper))
    return kn_fail(err, KN_ERR_INVALID,
                   "sap: joint limit %d (clique %d dof %d): expected finite q0 and lower < upper with one finite "
                   "(got q0 %g lower %g upper %g)",
                   ic, clique, dof, q0, lower, upper);
  if (!(lp.stiffness > 0) || !(lp.dissipation_time >= 0) || !isfinite(lp.dissipation_time) || !(lp.beta >= 0) ||
      (isinf(lp.stiffness) && !(lp.beta > 0)))
    return kn_fail(err, KN_ERR_INVALID,
                   "sap: joint limit %d: expected stiffness > 0, dissipation_time >= 0, beta >= 0 (> 0 when k is "
                   "infinite); got %g %g %g",
                   ic, lp.stiffness, lp.dissipation_time, lp.beta);
  kn_sap_holonomic h = {.rows = 0, .stiffness = lp.stiffness, .tau = lp.dissipation_time, .beta = lp.beta};
  int nv = p->cliques[clique].nv;
  /* rows of J are +e_dof (lower: g = q - q_l) and -e_dof (upper: g = q_u - q) */
  double sign[2];
  if (isfinite(lower)) {
    h.g0[h.rows] = q0 - lower;
    sign[h.rows++] = 1.0;
  }
  if (isfinite(upper)) {
    h.g0[h.rows] = upper - q0;
    sign[h.rows++] = -1.0;
  }
  for (int r = 0; r < h.rows; r++) {
    h.lower[r] = 0;
    h.upper[r] = INFINITY;
  }
  double* Jp = kn_calloc((size_t)(2 * nv), sizeof(double));
  if (!Jp) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory adding joint limit %d", ic);
  for (int r = 0; r < h.rows; r++)
    for (int k = 0; k < nv; k++) Jp[r * nv + k] = (k == dof) ? sign[r] : 0.0;
  st = kn_sap_problem_add(p, &kn_sap_limit_ops, &h, h.rows, clique, Jp, -1, NULL, index, err);
  free(Jp);
  return st;
}

//---- couplers (§5.4) ----

kn_status kn_sap_add_coupler(kn_sap_problem* p, int clique_i, int dof_i, double q_i, int clique_j, int dof_j,
                             double q_j, double rho, double offset, int* index, kn_error* err) {
  int ic = p->num_constraints;
  kn_status st = check_dof(p, "coupler", ic, clique_i, dof_i, err);
  if (!st) st = check_dof(p, "coupler", ic, clique_j, dof_j, err);
  if (st) return st;
  if (clique_i == clique_j && dof_i == dof_j)
    return kn_fail(err, KN_ERR_INVALID, "sap: coupler %d: dof %d of clique %d coupled to itself", ic, dof_i, clique_i);
  if (!isfinite(q_i) || !isfinite(q_j) || !isfinite(rho) || !isfinite(offset))
    return kn_fail(err, KN_ERR_INVALID, "sap: coupler %d: q_i, q_j, rho and offset must be finite", ic);
  /* g = q_i - rho q_j - offset, J = e_i^T - rho e_j^T; k = infinity, beta = 0.1 (Drake) */
  kn_sap_holonomic h = {.rows = 1, .stiffness = INFINITY, .tau = 0, .beta = 0.1};
  h.g0[0] = q_i - rho * q_j - offset;
  h.lower[0] = -INFINITY;
  h.upper[0] = INFINITY;
  int ni = p->cliques[clique_i].nv, nj = p->cliques[clique_j].nv;
  double* Ji = kn_calloc((size_t)(ni + nj), sizeof(double));
  if (!Ji) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory adding coupler %d", ic);
  double* Jj = Ji + ni;
  Ji[dof_i] = 1.0;
  if (clique_i == clique_j) {
    Ji[dof_j] = -rho;
    st = kn_sap_problem_add(p, &kn_sap_coupler_ops, &h, 1, clique_i, Ji, -1, NULL, index, err);
  } else {
    Jj[dof_j] = -rho;
    st = kn_sap_problem_add(p, &kn_sap_coupler_ops, &h, 1, clique_i, Ji, clique_j, Jj, index, err);
  }
  free(Ji);
  return st;
}
