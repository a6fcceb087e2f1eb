/* The Newton direction dv = -H^-1 grad of SAP's Newton (solver.c), three ways. G changes every
 * iteration, so exact Newton refactors H each time (§4.6). For a large H (reuse), the factor of an
 * earlier iteration of this solve preconditions CG on the new H instead (inexact Newton, "line
 * search Newton-CG", Nocedal & Wright §7.1): the forcing term ||D r|| <= eta ||D grad|| follows
 * Eisenstat & Walker's choice 2, and H is refactored (and solved exactly) at the iteration after a
 * CG solve that did not converge, or at once when CG does not give a descent direction. The
 * convergence test is the same, so the accuracy is too; only the path to it (and the iteration
 * count) differs. The first step of such a solve uses the kinds' predicted G (predict_G); small
 * solves are exact Newton throughout. On the dense path the preconditioner is H_k^-1 itself, from
 * the factor and the constraints whose G changed since (sap/lowrank.c), so CG converges in one
 * product, unless those do not fit the low-rank budget (lowrank_update). Shake example (n 1431): 1
 * instead of 4-5 factorizations and 60-80 CG products per step. */
#include <math.h>
#include <string.h>

#include "sap/solver_internal.h"

/* Inexact Newton (sap/pcg.c): at most REUSE_MAX_CG products with H per CG solve; a CG solve that
 * stops there unconverged still gives a descent direction, which is taken, and H is refactored at
 * the next iteration. The forcing term is at most REUSE_ETA_MAX. Measured on bench/mpm.c's Table I
 * scenes (CPU s/step, exact -> reuse): rolling (n 1137) 0.79 -> 0.69, shake (n 1431) 1.08 -> 0.98,
 * with 4 CG products the gains were smaller, and refactoring instead of taking the truncated
 * iterate was slower than exact Newton on rolling. */
#define REUSE_MAX_CG 8
#define REUSE_ETA_MAX 0.5

//---- later Newton iterations from an earlier factor (sap/lowrank.c) ----

/* Rows the low-rank set may hold before H is refactored instead: n / LOWRANK_BUDGET_DIVISOR. A row
 * costs one forward solve (n^2 flops, BLAS3) once, and each iteration factors an r x r matrix
 * (2/3 r^3); a factorization costs n^3 / 3 plus the assembly of H. Measured on the shake, pouring
 * and rolling examples (s per step, divisor 2 / 3 / 4): 0.199 / 0.196 / 0.200, 0.134 / 0.196 /
 * 0.195, 0.225 / 0.224 / 0.286 (the machine's noise is 10-30 %). */
#define LOWRANK_BUDGET_DIVISOR 2

/* ... and no more than keeps the r x r LU of each iteration ((2/3) r^3 flops) within half a
 * factorization of H: on CHOLMOD's path a factorization of an MPM grid's H costs far less than
 * n^3 / 3 (dense, where the bound is 0.63 n and n / 2 rules). Measured on the grid route of the
 * rolling bench scene and the shake and pouring examples (s per step), the bound's factor 1 / 0.5 /
 * 0.25 (r^3 within a whole, a half, a quarter factorization) and n / 2 alone: rolling 0.275 /
 * 0.214 / 0.216, 0.448; shake 0.076 / 0.071 / 0.093, 0.077; pouring 0.060 / 0.074 / 0.066, 0.065. */
static int lowrank_budget(const kn_sap_ctx* c) {
  double lu = cbrt(0.75 * kn_sap_linsolve_flops(c->s->ls));
  int half = c->n / LOWRANK_BUDGET_DIVISOR;
  return lu < half ? (int)lu : half;
}

/* 1 when constraint i's G is not G_ref's, bit for bit */
static int changed(const kn_sap_ctx* c, int i) {
  int rows = c->prob->constraints[i].rows;
  return memcmp(c->s->G + KN_SAP_GSLOT * i, c->s->Gref + KN_SAP_GSLOT * i, (size_t)(rows * rows) * sizeof(double)) != 0;
}

/* the constraints whose G has left G_ref join the low-rank set, and 1 is returned: the set then
 * gives H_k^-1 exactly. Unless they do not all fit its budget: then none joins, 0 is returned, and
 * the preconditioner stays H_ref with the set's updates at the current G (SPD, of mixed G), which
 * CG solves to its tolerance in a few products or H is refactored at the next iteration, as before
 * the low-rank route. Measured (s per step, Newton iterations,
 * factorizations per step): refactoring at once instead, bench/mpm.c's rolling went 0.41 -> 0.58
 * (24.4 -> 19.2 iterations, 7.1 -> 16.6 factorizations: 170 contacts slide); filling the set up to
 * its budget instead made the rolling example 0.23 -> 0.33 (the budget's columns cost more than
 * the products they saved). */
static int lowrank_update(const kn_sap_ctx* c) {
  kn_sap_solver* s = c->s;
  int need = 0;
  for (int i = 0; i < c->nc; i++) {
    int rows = c->prob->constraints[i].rows;
    if (!kn_sap_lowrank_has(s->lr, i) && changed(c, i)) need += rows;
  }
  if (kn_sap_lowrank_rows(s->lr) + need > kn_sap_lowrank_capacity(s->lr)) return 0;
  for (int i = 0; i < c->nc; i++) {
    if (kn_sap_lowrank_has(s->lr, i) || !changed(c, i)) continue;
    int rows = c->prob->constraints[i].rows;
    double* cols = kn_sap_lowrank_add(s->lr, i, rows);
    double e[KN_SAP_MAX_ROWS] = {0};
    for (int r = 0; r < rows; r++) {
      e[r] = 1;
      kn_sap_add_JT(c, i, e, cols + (size_t)r * (size_t)c->n);
      e[r] = 0;
    }
  }
  return 1;
}

/* z => M z for CG: H_k^-1 z by the low-rank route (exact up to round-off), else the factor's */
static kn_status precondition(void* user, double* z, kn_error* err) {
  const kn_sap_ctx* c = user;
  return kn_sap_lowrank_solve(c->s->lr, c->s->ls, c->s->G, c->s->Gref, KN_SAP_GSLOT, z, err);
}

//---- the direction ----

void kn_sap_direction_start(kn_sap_direction* d, const kn_sap_options* o, int n) {
  d->reuse = o->reuse_min_nv > 0 && n >= o->reuse_min_nv;
  d->have_factor = 0;
  d->force_factor = 0;
  d->gnorm_prev = 0;
  d->eta_prev = REUSE_ETA_MAX;
}

/* (the factor of H_ref, G) => *use_factor = 1 when the low-rank set was factored; then, when every
 * change of G is in the set, dv = -H_k^-1 grad by the Woodbury identity, a direct solve like the
 * factor's own (CG would stop after its one product; shake example: 11 fewer H products per step).
 * CG stays the fallback should it not be a descent direction (*have_dv = 0). */
static kn_status lowrank_direction(const kn_sap_ctx* c, int have_prev, kn_sap_stats* st, int* use_factor,
                                   double* dl0, int* have_dv, kn_error* err) {
  kn_sap_solver* s = c->s;
  int n = c->n;
  int exact = lowrank_update(c);
  *use_factor = kn_sap_lowrank_factor(s->lr, s->ls, s->G, s->Gref, KN_SAP_GSLOT, NULL) == KN_OK;
  if (*use_factor && exact) {
    for (int t = 0; t < n; t++) s->dv[t] = -s->grad[t];
    kn_status status = precondition((void*)c, s->dv, err);
    if (status) return kn_sap_fail_at(c, have_prev, err, err ? err->msg : "solve failed");
    st->lowrank_solves++;
    *dl0 = kn_sap_dot(s->grad, s->dv, n);
    *have_dv = *dl0 < 0;
  }
  return KN_OK;
}

/* (grad, the preconditioner) => dv from at most REUSE_MAX_CG CG products with the unassembled H,
 * to the forcing term's tolerance; a CG solve that did not converge forces a refactorization next */
static kn_status cg_direction(const kn_sap_ctx* c, kn_sap_direction* d, int have_prev, kn_sap_stats* st, double* dl0,
                              int* have_dv, kn_error* err) {
  kn_sap_solver* s = c->s;
  int n = c->n;
  double gnorm = kn_sap_scaled_norm(s->D, s->grad, n);
  /* Eisenstat-Walker choice 2: loose while the gradient stalls (contacts changing mode, where
   * an accurate solve buys nothing), tight as it falls quadratically; safeguarded */
  double ratio = gnorm / d->gnorm_prev, eta = 0.9 * ratio * ratio, safe = 0.9 * d->eta_prev * d->eta_prev;
  if (safe > 0.1) eta = fmax(eta, safe);
  eta = fmin(REUSE_ETA_MAX, eta);
  d->eta_prev = eta;
  int cg_iters = 0, converged = 0;
  for (int t = 0; t < n; t++) s->dp[t] = -s->grad[t]; /* dp: the right-hand side, overwritten below */
  kn_status status = kn_sap_pcg(n, kn_sap_apply_H_unassembled, (void*)c, precondition, s->dp, s->D, eta * gnorm,
                                REUSE_MAX_CG, s->dv, s->cg, &cg_iters, &converged, err);
  if (status) return kn_sap_fail_at(c, have_prev, err, err ? err->msg : "solve failed");
  st->cg_iterations += cg_iters;
  /* a truncated CG iterate is still a descent direction: take it, and refactor next time */
  *dl0 = kn_sap_dot(s->grad, s->dv, n);
  *have_dv = *dl0 < 0;
  if (!converged) d->force_factor = 1;
  return KN_OK;
}

/* (G) => H assembled and factored (the low-rank set's new reference when reusing), dv = -H^-1 grad */
static kn_status exact_direction(const kn_sap_ctx* c, kn_sap_direction* d, int k, int have_prev, kn_sap_stats* st,
                                 double* dl0, kn_error* err) {
  kn_sap_solver* s = c->s;
  int n = c->n, nc = c->nc;
  if (d->reuse && k == 0) kn_sap_predict_G(c); /* eval_all recomputes G after the line search */
  kn_status status = kn_sap_assemble_H(c, err);
  if (status) return status;
  status = kn_sap_linsolve_factor(s->ls, s->Hdiag, s->Hoff, err);
  st->factorizations++;
  if (status) return kn_sap_fail_at(c, have_prev, err, err ? err->msg : "factorization failed");
  d->have_factor = 1;
  d->force_factor = 0;
  if (d->reuse) {
    memcpy(s->Gref, s->G, (size_t)KN_SAP_GSLOT * (size_t)nc * sizeof(double));
    status = kn_sap_lowrank_reset(s->lr, n, nc, lowrank_budget(c), err);
    if (status) return kn_sap_fail_at(c, have_prev, err, err ? err->msg : "out of memory");
  }
  for (int t = 0; t < n; t++) s->dv[t] = -s->grad[t];
  status = kn_sap_linsolve_solve(s->ls, s->dv, err);
  if (status) return kn_sap_fail_at(c, have_prev, err, err ? err->msg : "solve failed");
  *dl0 = kn_sap_dot(s->grad, s->dv, n);
  return KN_OK;
}

kn_status kn_sap_newton_direction(const kn_sap_ctx* c, kn_sap_direction* d, int k, int have_prev, kn_sap_stats* st,
                                  double* dl0, kn_error* err) {
  kn_status status;
  int have_dv = 0;
  *dl0 = 0;
  int use_factor = d->reuse && d->have_factor && !d->force_factor;
  if (use_factor) {
    status = lowrank_direction(c, have_prev, st, &use_factor, dl0, &have_dv, err);
    if (status) return status;
  }
  if (use_factor && !have_dv) {
    status = cg_direction(c, d, have_prev, st, dl0, &have_dv, err);
    if (status) return status;
  }
  if (!have_dv) {
    status = exact_direction(c, d, k, have_prev, st, dl0, err);
    if (status) return status;
  }
  if (d->reuse) d->gnorm_prev = kn_sap_scaled_norm(c->s->D, c->s->grad, c->n);
  return KN_OK;
}
