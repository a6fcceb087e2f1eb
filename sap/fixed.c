/* Fixed constraint (digest §5.4, Drake's SapFixedConstraint): a vertex of a deformable body held at
 * a point of a rigid body (or of the world). Three rigid holonomic rows (§5.1 with k = infinity,
 * beta = 0.1) per vertex: g = p_vertex - p_point in the world frame, v_c = v_vertex - v_point.
 * Drake stacks all the vertices attached to one rigid body into one constraint; here each vertex is
 * its own 3-row constraint (so it fits KN_SAP_MAX_ROWS and its Delassus estimate w is its own),
 * which gives the same cost per row when the per-vertex diagonals are alike. */
#include <math.h>

#include "sap/sap_internal.h"

typedef struct {
  double g0[3], c[3]; /* position error at the step start; the point's path beyond its linear map */
  double beta;
} fixed_self;

typedef struct {
  double R[3], vhat[3];
} fixed_data;
_Static_assert(sizeof(fixed_data) <= KN_SAP_MAX_DATA, "per-solve data must fit its slot");

/* §5.1 with k = infinity: only the near-rigid branch, R = beta^2 w / (4 pi^2) for the three rows,
 * tau -> dt so v_hat = -g0 / (2 dt) (critically damped position-error feedback), plus c / dt (the
 * point's curved path, fed forward). */
static void make_data(const void* self, double dt, double w, void* data) {
  const fixed_self* h = self;
  fixed_data* d = data;
  double R = kn_sap_near_rigid_factor(h->beta) * w;
  for (int i = 0; i < 3; i++) {
    d->R[i] = R;
    d->vhat[i] = -h->g0[i] / (2.0 * dt) + h->c[i] / dt;
  }
}

/* unbounded impulse: gamma = y = R^-1 (v_hat - v_c), l = 1/2 R y^2 per row, G = diag(1/R) */
static void eval(const void* self, const void* data, const double* vc, double* cost, double* gamma, double* G) {
  (void)self;
  const fixed_data* d = data;
  double l = 0;
  for (int i = 0; i < 3; i++) {
    double y = (d->vhat[i] - vc[i]) / d->R[i];
    gamma[i] = y;
    l += 0.5 * d->R[i] * y * y;
    if (G)
      for (int j = 0; j < 3; j++) G[i * 3 + j] = i == j ? 1.0 / d->R[i] : 0.0;
  }
  *cost = l;
}

static void regularization(const void* self, const void* data, double* R, double* v_hat) {
  (void)self;
  const fixed_data* d = data;
  for (int i = 0; i < 3; i++) {
    R[i] = d->R[i];
    v_hat[i] = d->vhat[i];
  }
}

const kn_sap_kind_ops kn_sap_fixed_ops = {
    .kind = KN_SAP_FIXED,
    .self_size = sizeof(fixed_self),
    .data_size = sizeof(fixed_data),
    .make_data = make_data,
    .eval = eval,
    .regularization = regularization,
};

kn_status kn_sap_add_fixed_curved(kn_sap_problem* p, int clique_a, const double* J_a, int clique_b, const double* J_b,
                                  const double g0[3], const double c[3], int* index, kn_error* err) {
  int ic = p->num_constraints;
  for (int k = 0; k < 3; k++)
    if (!isfinite(g0[k]) || !isfinite(c[k]))
      return kn_fail(err, KN_ERR_INVALID, "sap: fixed constraint %d: position error g0[%d] %g or path c[%d] %g is not finite",
                     ic, k, g0[k], k, c[k]);
  fixed_self h = {.g0 = {g0[0], g0[1], g0[2]}, .c = {c[0], c[1], c[2]}, .beta = 0.1}; /* Drake: beta = 0.1 for non-contact kinds */
  return kn_sap_problem_add(p, &kn_sap_fixed_ops, &h, 3, clique_a, J_a, clique_b, J_b, index, err);
}

kn_status kn_sap_add_fixed(kn_sap_problem* p, int clique_a, const double* J_a, int clique_b, const double* J_b,
                           const double g0[3], int* index, kn_error* err) {
  static const double straight[3] = {0, 0, 0};
  return kn_sap_add_fixed_curved(p, clique_a, J_a, clique_b, J_b, g0, straight, index, err);
}
