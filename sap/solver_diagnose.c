/* Why a SAP solve failed, in its message: the constraint most responsible, by kind and cliques. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sap/solver_internal.h"

//---- failure diagnostics ----

/* The constraint most responsible for the failure: the first with a non-finite impulse or
 * velocity; else, on the participating clique with the largest scaled momentum residual
 * ||D grad||_c, the constraint whose impulse moved most in the last step, measured as
 * sqrt(w_i) |delta gamma_i| (the velocity change it causes, comparable across kinds); before any
 * step, sqrt(w_i) |gamma_i|. */
static int worst_constraint(const kn_sap_ctx* c, int have_prev) {
  kn_sap_solver* s = c->s;
  const kn_sap_problem* p = c->prob;
  for (int i = 0; i < c->nc; i++)
    for (int r = 0; r < p->constraints[i].rows; r++)
      if (!isfinite(s->gamma[KN_SAP_MAX_ROWS * i + r]) || !isfinite(s->vc[KN_SAP_MAX_ROWS * i + r])) return i;
  int worst_clique = -1;
  double rmax = -1;
  for (int k = 0; k < c->np; k++) {
    int q = s->part[k];
    double rc = kn_sap_scaled_norm(s->D + s->roff[q], s->grad + s->roff[q], p->cliques[q].nv);
    if (rc > rmax) rmax = rc, worst_clique = q;
  }
  int worst = 0;
  double dmax = -1;
  for (int i = 0; i < c->nc; i++) {
    const kn_sap_constraint* k = &p->constraints[i];
    if (k->clique[0] != worst_clique && k->clique[1] != worst_clique) continue;
    double d = 0;
    for (int r = 0; r < k->rows; r++) {
      double g = s->gamma[KN_SAP_MAX_ROWS * i + r], x = have_prev ? g - s->gamma_prev[KN_SAP_MAX_ROWS * i + r] : g;
      d += x * x;
    }
    d = sqrt(s->w[i] * d);
    if (d > dmax) dmax = d, worst = i;
  }
  return worst;
}

kn_status kn_sap_fail_at(const kn_sap_ctx* c, int have_prev, kn_error* err, const char* reason) {
  char why[KN_ERROR_MSG / 2];
  if (!strncmp(reason, "sap: ", 5)) reason += 5;
  snprintf(why, sizeof why, "%s", reason); /* reason may be err->msg itself */
  int i = worst_constraint(c, have_prev);
  const kn_sap_constraint* k = &c->prob->constraints[i];
  return kn_fail(err, KN_ERR_NUMERIC, "sap: %s; worst constraint #%d (%s, cliques %d/%d)", why, i,
                 kn_sap_kind_name(k->ops->kind), k->clique[0], k->clique[1]);
}
