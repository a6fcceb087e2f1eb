/* SAP's exact line search (digest §4.4): l(v + alpha dv) along the Newton direction, with only the
 * constraints re-evaluated at each alpha, minimized by Newton-Raphson on l' with bisection fallback. */
#include <math.h>

#include "sap/solver_internal.h"

//---- exact line search (§4.4) ----

/* alpha => l(alpha), l'(alpha), l''(alpha) with only the constraints re-evaluated (O(n)) */
static void line_eval(const kn_sap_ctx* c, const kn_sap_line* L, double alpha, double* l, double* dl, double* d2l) {
  kn_sap_solver* s = c->s;
  double lR = 0, dlR = 0, d2lR = 0;
  const kn_sap_problem* p = c->prob;
  for (int i = 0; i < c->nc; i++) {
    const kn_sap_constraint* k = &p->constraints[i];
    double vc[KN_SAP_MAX_ROWS], g[KN_SAP_MAX_ROWS], G[KN_SAP_MAX_ROWS * KN_SAP_MAX_ROWS], li = 0;
    const double* dvc = s->dvc + KN_SAP_MAX_ROWS * i;
    const int rows = k->rows;
    if (rows == 1) { /* PD, limits: the loops below with one row, spelled out (same operations) */
      vc[0] = s->vc[KN_SAP_MAX_ROWS * i] + alpha * dvc[0];
      k->ops->eval(s->self[i], s->data + (size_t)i * KN_SAP_MAX_DATA, vc, &li, g, G);
      lR += li;
      dlR -= dvc[0] * g[0];
      d2lR += dvc[0] * G[0] * dvc[0];
      continue;
    }
    for (int r = 0; r < rows; r++) vc[r] = s->vc[KN_SAP_MAX_ROWS * i + r] + alpha * dvc[r];
    k->ops->eval(s->self[i], s->data + (size_t)i * KN_SAP_MAX_DATA, vc, &li, g, G);
    lR += li;
    for (int r = 0; r < rows; r++) {
      dlR -= dvc[r] * g[r];
      for (int q = 0; q < rows; q++) d2lR += dvc[r] * G[r * rows + q] * dvc[q];
    }
  }
  *l = L->lA0 + alpha * L->dp_dv0 + 0.5 * alpha * alpha * L->dAd + lR;
  *dl = L->dp_dv0 + alpha * L->dAd + dlR;
  *d2l = L->dAd + d2lR;
}

/* (l'(0) < 0) => alpha minimizing l(v + alpha dv) on [0, alpha_max]: Newton-Raphson on l' with
 * bisection fallback (rtsafe), f = l' / (-l'(0)) normalized so that f(0) = -1. */
kn_status kn_sap_line_search(const kn_sap_ctx* c, const kn_sap_line* L, double dl0, const kn_sap_options* o,
                             double* alpha_out, int* iters, kn_error* err) {
  double amax = o->ls_alpha_max, lm, dlm, d2lm;
  *iters = 1;
  line_eval(c, L, amax, &lm, &dlm, &d2lm);
  if (dlm <= 0) { /* the minimum lies beyond alpha_max */
    *alpha_out = amax;
    return KN_OK;
  }
  /* tight-tolerance escape: the expected decrease is below round-off of the cost */
  if (-dl0 < o->cost_abs_tolerance + o->cost_rel_tolerance * lm) {
    *alpha_out = 1.0;
    return KN_OK;
  }
  double scale = -dl0;
  double a0 = fmin(-dl0 / d2lm, amax); /* Drake: curvature at alpha_max */
  if (isnan(a0)) return kn_fail(err, KN_ERR_NUMERIC, "sap: line search initial guess is NaN");
  double a = a0, lo = 0, hi = amax;
  double x_tol = 1e-8 * a0, f_tol = 1e-8;
  double minus_dx = lo - hi, minus_dx_prev = minus_dx;
  for (int k = 0; k < o->ls_max_iterations; k++) {
    double l, dl, d2l;
    line_eval(c, L, a, &l, &dl, &d2l);
    (*iters)++;
    double f = dl / scale, df = d2l / scale;
    if (f < 0)
      lo = a;
    else
      hi = a;
    if (fabs(f) < f_tol) {
      *alpha_out = a;
      return KN_OK;
    }
    /* bisect when Newton is slow (|f| does not halve) or leaves the bracket */
    int slow = 2 * fabs(f) > fabs(minus_dx_prev * df);
    minus_dx_prev = minus_dx;
    double an = a - f / df;
    if (slow || !(lo <= an && an <= hi)) {
      minus_dx = 0.5 * (lo - hi);
      a = lo - minus_dx;
    } else {
      minus_dx = f / df;
      a = an;
    }
    if (fabs(minus_dx) < x_tol) {
      *alpha_out = a;
      return KN_OK;
    }
  }
  return kn_fail(err, KN_ERR_NUMERIC, "sap: exact line search did not converge in %d iterations (bracket [%g, %g])",
                 o->ls_max_iterations, lo, hi);
}
