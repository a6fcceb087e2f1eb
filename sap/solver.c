/* The SAP Newton solver (Drake's SapSolver, digest §4): Newton iterations on the strictly convex
 * cost l(v) = 1/2 ||v - v*||_A^2 + sum_i l_i(J_i v), exact line search by Newton with bisection
 * fallback (§4.4), Drake's optimality and cost criteria (§4.3). The solver sees constraints only
 * through their kind table (sap_internal.h), so adding a kind never changes it. This file is the
 * algorithm, kn_sap_solve, as its stages; they live in the files solver_internal.h lists. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sap/solver_internal.h"

kn_sap_options kn_sap_options_default(void) {
  /* Drake's SapSolverParameters (digest §4.7) */
  return (kn_sap_options){
      .abs_tolerance = 1e-14,
      .rel_tolerance = 1e-6,
      .cost_abs_tolerance = 1e-30,
      .cost_rel_tolerance = 1e-15,
      .max_iterations = 100,
      .ls_max_iterations = 100,
      .ls_alpha_max = 1.5,
      .relative_slop = 1000 * 2.220446049250313e-16,
      .nonmonotonic_is_error = 0,
      .linear_solver = KN_SAP_LINEAR_AUTO,
      .dense_max_nv = 64,
      .reuse_min_nv = 300,
      .monitor = NULL,
      .monitor_user = NULL,
  };
}

kn_sap_solver* kn_sap_solver_create(void) {
  kn_sap_solver* s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->ls = kn_sap_linsolve_create();
  s->lr = kn_sap_lowrank_create();
  if (!s->ls || !s->lr) {
    kn_sap_linsolve_free(s->ls);
    kn_sap_lowrank_free(s->lr);
    free(s);
    return NULL;
  }
  return s;
}

void kn_sap_solver_free(kn_sap_solver* s) {
  if (!s) return;
  kn_sap_linsolve_free(s->ls);
  kn_sap_lowrank_free(s->lr);
  free(s->cols);
  free(s->jval);
  free(s->lstart);
  free(s->lent);
  free(s->map);
  free(s->gj);
  free(s->block);
  free(s);
}

static int all_finite(const double* x, int n) {
  for (int k = 0; k < n; k++)
    if (!isfinite(x[k])) return 0;
  return 1;
}

/* (problem, options, guess) => KN_ERR_INVALID naming what is wrong, else KN_OK */
static kn_status check_inputs(const kn_sap_problem* p, const kn_sap_options* o, const double* v_guess,
                              kn_error* err) {
  if (!(p->dt > 0)) return kn_fail(err, KN_ERR_INVALID, "sap: time step %g, expected > 0", p->dt);
  if (o->max_iterations < 0 || !(o->ls_alpha_max > 0) || o->ls_max_iterations < 1)
    return kn_fail(err, KN_ERR_INVALID, "sap: options: expected max_iterations >= 0, ls_alpha_max > 0, "
                                        "ls_max_iterations >= 1");
  if (v_guess && !all_finite(v_guess, p->nv))
    return kn_fail(err, KN_ERR_INVALID, "sap: the initial guess has non-finite entries");
  return KN_OK;
}

//---- Newton iterations (§4.3) ----

typedef struct {
  int k;                /* iterations done */
  int have_prev;        /* gamma_prev holds gamma before the last step */
  int cost_ok, opt_ok;  /* the cost and the optimality criteria */
  double ell, ell_prev; /* the cost at v and before the last step */
} newton;

/* (v's cost and gradient) => stats; *done = 1 when converged; a failure when they are not finite
 * or the iterations are spent; a cost increase counted (or an error, nonmonotonic_is_error) */
static kn_status check_iterate(const kn_sap_ctx* c, const kn_sap_options* o, newton* nt, kn_sap_stats* st,
                               kn_sap_stats* stats, int* done, kn_error* err) {
  kn_sap_solver* s = c->s;
  int n = c->n;
  st->residual = kn_sap_scaled_norm(s->D, s->grad, n);
  st->residual_scale = fmax(kn_sap_scaled_norm(s->D, s->p, n), kn_sap_scaled_norm(s->D, s->j, n));
  st->cost = nt->ell;
  st->iterations = nt->k;
  if (stats) *stats = *st;
  if (!isfinite(nt->ell) || !all_finite(s->grad, n))
    return kn_sap_fail_at(c, nt->have_prev, err, "NaN or infinity in the cost or its gradient");
  nt->opt_ok = st->residual <= o->abs_tolerance + o->rel_tolerance * st->residual_scale;
  if (nt->opt_ok || nt->cost_ok) {
    *done = 1;
    return KN_OK;
  }
  /* monotonicity check, after the convergence test on purpose (§10.8) */
  double slop = o->relative_slop * fmax(1.0, 0.5 * (fabs(nt->ell) + fabs(nt->ell_prev)));
  if (nt->ell > nt->ell_prev + slop) {
    st->nonmonotonic_steps++;
    if (o->nonmonotonic_is_error)
      return kn_sap_fail_at(c, nt->have_prev, err, "the cost increased (non-monotonic Newton)");
  }
  if (nt->k >= o->max_iterations) {
    char why[200];
    snprintf(why, sizeof why, "Newton did not converge in %d iterations (residual %.3e > %.3e)", o->max_iterations,
             st->residual, o->abs_tolerance + o->rel_tolerance * st->residual_scale);
    return kn_sap_fail_at(c, nt->have_prev, err, why);
  }
  return KN_OK;
}

/* (dv, l'(0) = dl0) => v += alpha dv, alpha from the exact line search; the cost, gradient, gamma
 * and G at the new v; the cost criterion; the monitor told */
static kn_status newton_step(const kn_sap_ctx* c, const kn_sap_options* o, newton* nt, double dl0, kn_sap_stats* st,
                             kn_error* err) {
  kn_sap_solver* s = c->s;
  int n = c->n, nc = c->nc;
  kn_sap_apply_J(c, s->dv, s->dvc);
  kn_sap_apply_A(c, s->dv, s->dp);
  kn_sap_line L = {.dAd = kn_sap_dot(s->dv, s->dp, n)};
  if (!(L.dAd > 0)) return kn_sap_fail_at(c, nt->have_prev, err, "dv^T A dv <= 0: A is not positive definite");
  double* dvs = s->vtmp;
  for (int t = 0; t < n; t++) dvs[t] = s->v[t] - s->vstar[t];
  L.dp_dv0 = kn_sap_dot(s->dp, dvs, n);
  L.lA0 = 0.5 * kn_sap_dot(dvs, s->grad, n) + 0.5 * kn_sap_dot(dvs, s->j, n); /* 1/2 (v-v*)^T A (v-v*) */
  double alpha = 1;
  if (!(dl0 < 0))
    return kn_sap_fail_at(c, nt->have_prev, err, "l'(0) >= 0 along the Newton direction (ill-conditioned H)");
  int ls_iters = 0;
  kn_status status = kn_sap_line_search(c, &L, dl0, o, &alpha, &ls_iters, err);
  st->line_search_iterations += ls_iters;
  if (status) return kn_sap_fail_at(c, nt->have_prev, err, err ? err->msg : "line search failed");
  for (int t = 0; t < n; t++) s->v[t] += alpha * s->dv[t];
  memcpy(s->gamma_prev, s->gamma, (size_t)(KN_SAP_MAX_ROWS * nc) * sizeof(double));
  nt->have_prev = 1;
  nt->ell_prev = nt->ell;
  nt->ell = kn_sap_eval_all(c);
  nt->k++;
  double ell = nt->ell, ell_prev = nt->ell_prev;
  nt->cost_ok =
      fabs(ell_prev - ell) < o->cost_abs_tolerance + o->cost_rel_tolerance * 0.5 * (fabs(ell) + fabs(ell_prev)) &&
      alpha > 0.5;
  /* a stall at roundoff: the line search finds (almost) nothing (alpha < 1e-3) and the Newton
   * decrement -l'(0) is below the slop the monotonicity check allows the cost. Seen: two PD
   * panels saturated at their effort limits with nothing to push, residual 1.10e-14 against a
   * tolerance of 1.00e-14 for 100 iterations, which failed the step. */
  if (alpha < 1e-3 && -dl0 < o->relative_slop * fmax(1.0, 0.5 * (fabs(ell) + fabs(ell_prev)))) nt->cost_ok = 1;
  if (o->monitor) {
    kn_sap_iteration it = {.iteration = nt->k, .cost = ell, .cost_prev = ell_prev, .alpha = alpha, .dl0 = dl0,
                           .dl_alpha = kn_sap_dot(s->grad, s->dv, n), .line_search_iterations = ls_iters};
    o->monitor(o->monitor_user, &it);
  }
  return KN_OK;
}

/* (the prepared solve, v = the guess) => v at convergence, with gamma and G there (stats: the
 * iterations, factorizations, CG products, line search iterations, the criterion met) */
static kn_status newton_iterations(const kn_sap_ctx* c, const kn_sap_options* o, kn_sap_stats* st,
                                   kn_sap_stats* stats, kn_error* err) {
  kn_sap_solver* s = c->s;
  newton nt = {0};
  kn_sap_direction d;
  kn_sap_direction_start(&d, o, c->n);
  kn_sap_apply_A(c, s->vstar, s->Avstar);
  nt.ell = kn_sap_eval_all(c);
  nt.ell_prev = nt.ell;
  for (;;) {
    int done = 0;
    kn_status status = check_iterate(c, o, &nt, st, stats, &done, err);
    if (status) return status;
    if (done) break;
    double dl0 = 0;
    status = kn_sap_newton_direction(c, &d, nt.k, nt.have_prev, st, &dl0, err);
    if (status) return status;
    status = newton_step(c, o, &nt, dl0, st, err);
    if (status) return status;
  }
  st->optimality_reached = nt.opt_ok;
  st->cost_reached = !nt.opt_ok && nt.cost_ok;
  if (stats) *stats = *st;
  return KN_OK;
}

//---- outputs: only now are the caller's buffers written ----

/* (v of the participating cliques, v* of the others, gamma) => v_out, gamma_out (may be NULL) */
static void write_outputs(const kn_sap_ctx* c, double* v_out, double* gamma_out) {
  const kn_sap_problem* p = c->prob;
  kn_sap_solver* s = c->s;
  for (int q = 0; q < p->num_cliques; q++) {
    const kn_sap_clique* cq = &p->cliques[q];
    const double* src = s->roff[q] >= 0 ? s->v + s->roff[q] : p->reals + cq->vstar_at;
    memcpy(v_out + cq->offset, src, (size_t)cq->nv * sizeof(double));
  }
  if (gamma_out)
    for (int i = 0; i < c->nc; i++)
      memcpy(gamma_out + p->constraints[i].offset, s->gamma + KN_SAP_MAX_ROWS * i,
             (size_t)p->constraints[i].rows * sizeof(double));
}

//---- the solve ----

kn_status kn_sap_solve(kn_sap_solver* s, const kn_sap_problem* p, const kn_sap_options* opt, const double* v_guess,
                       double* v_out, double* gamma_out, kn_sap_stats* stats, kn_error* err) {
  kn_sap_options o = opt ? *opt : kn_sap_options_default();
  kn_sap_stats st = {0};
  st.num_constraints = p->num_constraints;
  st.num_impulses = p->num_impulses;
  st.num_cliques = p->num_cliques;
  st.nv = p->nv;
  if (stats) *stats = st;
  kn_status status = check_inputs(p, &o, v_guess, err);
  if (status) return status;

  /* §4.1.6: no constraints, v = v* */
  if (p->num_constraints == 0) {
    for (int q = 0; q < p->num_cliques; q++)
      memcpy(v_out + p->cliques[q].offset, p->reals + p->cliques[q].vstar_at,
             (size_t)p->cliques[q].nv * sizeof(double));
    return KN_OK;
  }

  /* once per solve (solver_setup.c): the reduced problem over the participating cliques */
  status = kn_sap_workspace(s, p, err);
  if (status) return status;
  kn_sap_ctx c = {.prob = p, .s = s, .nc = p->num_constraints};
  kn_sap_participating(&c);
  kn_sap_coupled_pairs(&c);
  kn_sap_place_H_blocks(&c);
  st.num_participating_cliques = c.np;
  st.nv_participating = c.n;
  kn_sap_reduced_vectors(&c, v_guess);
  kn_sap_constraint_data(&c);
  status = kn_sap_jacobian_columns(&c, err);
  if (status) return status;
  status = kn_sap_sparse_lists(&c, err);
  if (status) return status;
  status = kn_sap_choose_linear_solver(&c, &o, &st, err);
  if (status) return status;

  /* Newton: direction (solver_direction.c), exact line search (solver_line.c), step */
  status = newton_iterations(&c, &o, &st, stats, err);
  if (status) return status;
  write_outputs(&c, v_out, gamma_out);
  return KN_OK;
}
