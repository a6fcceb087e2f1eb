/* The `sap` backend: the two-stage time step of the SAP digest (§1) over the world's cliques
 * (coupling/coupling.h) and the step's contact candidates (candidates.h), in stages:
 *
 *   1 controllers    kinematics at (q_n, v_n) and the controllers at t_n + dt (the PD is implicit
 *                    in q_n+1: the feed-forward of PD dofs goes into the PD constraint, §5.3)
 *   2 detection      collider poses and reaches at q_n, rigid pairs, FEM and MPM candidates
 *   3 free motion    every clique: v* and A (trees: M + dt D; FEM: Newton; MPM: P2G and Newton)
 *   4 constraints    SAP cliques by route (sap_assemble.c), then in Drake's order: contacts (with
 *                    stiction anchors, stiction.h), joint limits in Drake's window (§5.2), implicit
 *                    PD (§5.3), couplers (§5.4), welds (§5.4), FEM attachments
 *   5 solve          kn_sap_solve warm-started from each clique's v_start
 *   6 advance        every clique from v_n+1 (a Schur clique's other DoFs recovered first)
 *   7 statistics     contact forces gamma / dt, stiction anchors committed, w->last
 * One kn_sap_problem and one kn_sap_solver live across steps; buffers grow only with the number
 * of contacts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/backend_sap.h"

/* 4. every constraint in Drake's order */
static kn_status stage_constraints(kn_world* w, sap_state* s, double dt, kn_error* err) {
  kn_status st = kn_sap_adapter_cliques(w, s, err);
  if (!st) st = kn_sap_adapter_contacts(w, s, err);
  if (!st) st = kn_sap_adapter_robot(w, s, dt, err);
  if (!st && w->nfem > 0) st = kn_sap_adapter_attachments(w, s, err);
  return st;
}

// (constraint index) => "contact between 'a' and 'b'", "joint limit of 'j' (robot)", ...
static void describe(const kn_world* w, const sap_state* s, int i, char* buf, size_t cap) {
  if (i < 0 || i >= kn_sap_problem_num_constraints(s->prob)) {
    snprintf(buf, cap, "constraint #%d", i);
    return;
  }
  const sap_info* ci = &s->info[i];
  int n = snprintf(buf, cap, "constraint #%d: ", i);
  buf += n, cap -= (size_t)n;
  if (ci->kind == KN_SAP_CONTACT) {
    kn_sim_candidate_describe(w, &s->cand, ci->point, buf, cap);
  } else if (ci->kind == KN_SAP_FIXED) {
    snprintf(buf, cap, "attachment of deformable '%s' vertex %d to %s", w->fems[ci->body].name, ci->point,
             ci->a >= 0 ? w->trees[ci->a].robot->model->bodies[ci->b].name : "the world");
  } else if (ci->kind == KN_SAP_WELD) {
    const kn_scene_weld* wd = &w->scene->doc->welds[ci->point];
    snprintf(buf, cap, "weld %d '%s' ('%s' to '%s')", ci->point, wd->name ? wd->name : "", wd->body_a, wd->body_b);
  } else {
    const kn_mb_body* b = &w->trees[ci->tree].robot->model->bodies[ci->body];
    snprintf(buf, cap, "%s of joint '%s' of %s '%s'",
             ci->kind == KN_SAP_LIMIT ? "joint limit" : ci->kind == KN_SAP_PD ? "PD controller" : "mimic coupler",
             b->joint_name ? b->joint_name : b->name, kn_sim_tree_kind(w, ci->tree), kn_sim_tree_name(w, ci->tree));
  }
}

/* 5. kn_sap_solve warm-started from each clique's v_start on its SAP columns */
static kn_status stage_solve(kn_world* w, sap_state* s, kn_sap_stats* stats, kn_error* err) {
  size_t nv = (size_t)kn_sap_problem_nv(s->prob), nimp = (size_t)kn_sap_problem_num_impulses(s->prob);
  kn_status st = kn_sap_adapter_grow(&s->v_guess, &s->vcap, nv + 1, err);
  if (!st) st = kn_sap_adapter_grow(&s->v_next, &s->vcap_next, nv + 1, err);
  if (!st) st = kn_sap_adapter_grow(&s->gamma, &s->gcap, nimp + 1, err);
  if (st) return st;
  for (int c = 0; c < w->nclique; c++) {
    sap_clique* q = &s->q[c];
    if (q->sap < 0) continue;
    kn_clique* cq = &w->cliques[c];
    double* g = s->v_guess + kn_sap_clique_offset(s->prob, q->sap);
    cq->ops->v_start(cq->self, q->vnext);
    for (int j = 0; j < q->ndof; j++)
      if (q->col[j] >= 0) g[q->col[j]] = q->vnext[j];
  }
  memset(stats, 0, sizeof *stats);
  if (nv > 0) {
    st = kn_sap_solve(s->solver, s->prob, &s->opt, s->v_guess, s->v_next, s->gamma, stats, err);
    if (st) {
      int worst = -1;
      const char* at = err ? strstr(err->msg, "worst constraint #") : NULL;
      if (at) worst = atoi(at + strlen("worst constraint #"));
      char what[512];
      describe(w, s, worst, what, sizeof what);
      return kn_error_prefix(err, "stage 2 (SAP solve, %d constraints; worst: %s): ",
                             kn_sap_problem_num_constraints(s->prob), what);
    }
  }
  for (size_t i = 0; i < nv; i++)
    if (!isfinite(s->v_next[i]))
      return kn_fail(err, KN_ERR_NUMERIC, "stage 2 (SAP solve): v_n+1 is not finite at dof %zu", i);
  return KN_OK;
}

/* 6. v_n+1 of every clique (v* without a SAP clique; a Schur clique's other DoFs recovered from
 * dv_P = v_P - v*_P) and advance; the recovery's wall time in *t_recovery */
static kn_status stage_advance(kn_world* w, sap_state* s, double dt, double* t_recovery, kn_error* err) {
  *t_recovery = 0;
  for (int c = 0; c < w->nclique; c++) {
    kn_clique* cq = &w->cliques[c];
    sap_clique* q = &s->q[c];
    const double* vstar = cq->ops->v_star(cq->self);
    const double* v = q->sap >= 0 ? s->v_next + kn_sap_clique_offset(s->prob, q->sap) : NULL;
    if (!v) {
      memcpy(q->vnext, vstar, (size_t)q->ndof * sizeof(double));
    } else if (q->route != SAP_ROUTE_SCHUR) {
      memcpy(q->vnext, v, (size_t)q->ndof * sizeof(double));
    } else {
      double t0 = kn_wall_time();
      for (int a = 0; a < q->np; a++) q->dv[a] = v[a] - q->vs[a];
      cq->ops->recover(cq->self, q->dv, q->dvall);
      for (int j = 0; j < q->ndof; j++) q->vnext[j] = vstar[j] + q->dvall[j];
      *t_recovery += kn_wall_time() - t0;
    }
    kn_status st = cq->ops->advance(cq->self, q->vnext, dt, err);
    if (st) return kn_error_prefix(err, "stage 3 (advance of %s): ", cq->ops->name(cq->self));
  }
  return KN_OK;
}

/* 7. contact forces gamma / dt on each candidate's B side, FEM attachment forces, the stiction
 * anchors of the contacts that pressed */
static kn_status stage_record(kn_world* w, sap_state* s, double dt, kn_error* err) {
  const kn_sim_candidates* c = &s->cand;
  kn_status st = kn_sap_adapter_grow(&s->force, &s->fcap, 3 * (size_t)c->n + 3, err);
  if (st) return st;
  for (int i = 0; i < c->n; i++) {
    const double* g = s->gamma + kn_sap_constraint_offset(s->prob, i);
    const double* R = c->c[i].R_WC;
    for (int a = 0; a < 3; a++) s->force[3 * i + a] = (R[3 * a] * g[0] + R[3 * a + 1] * g[1] + R[3 * a + 2] * g[2]) / dt;
  }
  if ((st = kn_sim_contacts_record(w, c, s->force, err))) return st;
  for (int fi = 0; fi < w->nfem; fi++) memset(w->fems[fi].attach_force, 0, sizeof w->fems[fi].attach_force);
  for (int k = 0; k < s->nattach; k++) {
    int i = s->first_attach + k;
    const double* g = s->gamma + kn_sap_constraint_offset(s->prob, i);
    for (int a = 0; a < 3; a++) w->fems[s->info[i].body].attach_force[a] += g[a] / dt;
  }
  /* contacts are the first constraints, 3 rows each, rigid then FEM then MPM */
  kn_stiction_commit(&s->stiction, c->first_fem, s->gamma);
  kn_stiction_keyed_commit(&s->fem_anchors, c->nfem,
                           c->nfem ? s->gamma + kn_sap_constraint_offset(s->prob, c->first_fem) : NULL);
  kn_stiction_keyed_commit(&s->mpm_anchors, c->nmpm,
                           c->nmpm ? s->gamma + kn_sap_constraint_offset(s->prob, c->first_mpm) : NULL);
  return KN_OK;
}

static kn_status sap_step(kn_world* w, void* state, kn_error* err) {
  sap_state* s = state;
  const double dt = w->scene->time_step;
  kn_sap_problem_reset(s->prob, dt);
  kn_sap_stats stats;
  double t0 = kn_wall_time(), t_recovery = 0;
  kn_status st = kn_sap_adapter_controllers(w, s, dt, err);
  double t1 = kn_wall_time();
  if (!st) st = kn_sap_adapter_detect(w, s, dt, err);
  double t2 = kn_wall_time();
  if (!st) st = kn_sap_adapter_free_motion(w, dt, err);
  double t3 = kn_wall_time();
  if (!st) st = stage_constraints(w, s, dt, err);
  if (!st) st = stage_solve(w, s, &stats, err);
  double t4 = kn_wall_time();
  if (!st) st = stage_advance(w, s, dt, &t_recovery, err);
  if (!st) st = stage_record(w, s, dt, err);
  if (st) return st;
  double t5 = kn_wall_time();
  w->last.iterations = stats.iterations;
  w->last.line_search_iterations = stats.line_search_iterations;
  w->last.factorizations = stats.factorizations;
  w->last.krylov_iterations = stats.cg_iterations;
  w->last.residual = stats.residual;
  w->last.contacts = s->cand.n;
  w->last.constraints = kn_sap_problem_num_constraints(s->prob);
  w->last.time_free_motion = (t1 - t0) + (t3 - t2);
  w->last.time_detect = t2 - t1;
  w->last.time_sap = t4 - t3 + t_recovery;
  w->last.time_advance = t5 - t4 - t_recovery;
  return KN_OK;
}

const kn_backend kn_backend_sap = {"sap", kn_sap_adapter_create_state, sap_step, kn_sap_adapter_free_state, kn_sap_adapter_save, kn_sap_adapter_load};
