/* SAP's constraints as one potential of v, for the nonlinear backends (ARCHITECTURE "The time step":
 * the robot-side terms of penalty, ipc and smooth_friction). Each constraint's regularized cost
 * l_i(v_c) (§2-§5) is convex in v_c = J_i v with gamma_i = -dl_i/dv_c and G_i = d2l_i/dv_c2, so
 * sum_i l_i(J_i v) is a convex potential whose gradient is -sum J_i^T gamma_i (the implicit force,
 * as an impulse) and whose Hessian is sum J_i^T G_i J_i: the same implicit PD with effort limit,
 * joint limit, coupler, weld and fixed attachment as SAP's, added to another solver's energy. */
#include <stdlib.h>
#include <string.h>

#include "sap/sap_internal.h"

/* one side's nonzero Jacobian columns: global column and its rows */
typedef struct {
  int col;
  double u[KN_SAP_MAX_ROWS];
} jac_col;

// side s of constraint c (clique q) => its nonzero columns appended to out; the new count
static int side_columns(const kn_sap_problem* p, int i, int s, jac_col* out, int n) {
  const kn_sap_constraint* c = &p->constraints[i];
  const kn_sap_clique* q = &p->cliques[c->clique[s]];
  const int* col;
  const double *w, *B;
  int m = kn_sap_side_nodal(p, i, s, &col, &w, &B);
  if (m) {
    for (int a = 0; a < m; a++)
      for (int k = 0; k < 3; k++) {
        jac_col* jc = &out[n++];
        jc->col = q->offset + col[a] + k;
        for (int r = 0; r < 3; r++) jc->u[r] = w[a] * B[3 * r + k];
      }
    return n;
  }
  const double* J = p->reals + c->J_at[s];
  for (int k = 0; k < q->nv; k++) {
    int nz = 0;
    for (int r = 0; r < c->rows; r++) nz |= J[r * q->nv + k] != 0.0;
    if (!nz) continue;
    jac_col* jc = &out[n++];
    jc->col = q->offset + k;
    for (int r = 0; r < c->rows; r++) jc->u[r] = J[r * q->nv + k];
  }
  return n;
}

kn_status kn_sap_constraints_potential(const kn_sap_problem* p, int first, const double* v, double* cost,
                                       double* grad, kn_sap_entry_fn add, void* user, kn_error* err) {
  int maxcols = 0;
  for (int q = 0; q < p->num_cliques; q++) maxcols = p->cliques[q].nv > maxcols ? p->cliques[q].nv : maxcols;
  maxcols = 2 * (maxcols > 3 * KN_SAP_MAX_NODES ? maxcols : 3 * KN_SAP_MAX_NODES);
  jac_col* cols = malloc((size_t)maxcols * sizeof *cols);
  if (!cols) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  double total = 0;
  for (int i = first < 0 ? 0 : first; i < p->num_constraints; i++) {
    const kn_sap_constraint* c = &p->constraints[i];
    _Alignas(16) unsigned char data[KN_SAP_MAX_DATA];
    c->ops->make_data(kn_sap_constraint_self(p, i), p->dt, kn_sap_delassus(p, i), data);
    double vc[KN_SAP_MAX_ROWS], gamma[KN_SAP_MAX_ROWS], G[KN_SAP_MAX_ROWS * KN_SAP_MAX_ROWS], l = 0;
    kn_sap_constraint_vc(p, i, v, vc);
    c->ops->eval(kn_sap_constraint_self(p, i), data, vc, &l, gamma, G);
    total += l;
    int n = 0;
    for (int s = 0; s < 2; s++)
      if (c->clique[s] >= 0) n = side_columns(p, i, s, cols, n);
    for (int a = 0; a < n; a++) {
      double g = 0;
      for (int r = 0; r < c->rows; r++) g += cols[a].u[r] * gamma[r];
      if (grad) grad[cols[a].col] -= g;
    }
    if (!add) continue;
    for (int a = 0; a < n; a++) {
      double Gu[KN_SAP_MAX_ROWS]; /* G u_a */
      for (int r = 0; r < c->rows; r++) {
        Gu[r] = 0;
        for (int t = 0; t < c->rows; t++) Gu[r] += G[r * c->rows + t] * cols[a].u[t];
      }
      for (int b = 0; b < n; b++) {
        double h = 0;
        for (int r = 0; r < c->rows; r++) h += cols[b].u[r] * Gu[r];
        if (h != 0.0) add(user, cols[b].col, cols[a].col, h);
      }
    }
  }
  free(cols);
  if (cost) *cost = total;
  return KN_OK;
}
