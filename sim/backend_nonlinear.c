/* The nonlinear backends' adapter (backend_nonlinear.h; ARCHITECTURE "The time step"). Per step:
 *
 *   1 controllers, 2 detection (contact.margin + the formulation's extra margin), 3 free motion:
 *     the stages SAP runs (sap_stages.c)
 *   4 the robot-side terms: every clique into a SAP problem over the full v and its joint limits,
 *     implicit PD, couplers, welds and FEM attachments (kn_sap_constraints_potential: the same
 *     regularized costs SAP minimizes, as implicit forces of this solve)
 *   5 each candidate's two material points (kn_nl_points, from the cliques' point maps) and the
 *     formulation's contact term over them
 *   6 Newton on the sum (kn_nl_solve) from each clique's v_start, again from its result while the
 *     formulation asks (smooth_friction: a raised stiffness), at most 5 times
 *   7 advance every clique; contact forces on each candidate's B side; the formulation's end of
 *     step (anchors); statistics */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/backend_nonlinear.h"
#include "sim/state_parts.h"

typedef struct {
  sap_state* sap;           /* the shared stages' state: candidates, poses, robot constraints */
  kn_nl_solver* solver;
  kn_nl_options opt;
  kn_nl_points points;
  int *pa, *pb, pcap;       /* per candidate: its sides' points */
  double *v0, *v, *force;
  size_t vcap, vcap2, fcap;
  int* offset;              /* per world clique: its first DoF in v (nclique, allocated at create) */
  const kn_nl_formulation* f;
  void* fs;                 /* the formulation's state */
} nl_state;

void kn_nl_backend_free(void* p) {
  nl_state* s = p;
  if (!s) return;
  if (s->fs) s->f->destroy(s->fs);
  kn_sap_adapter_free_state(s->sap);
  kn_nl_solver_free(s->solver);
  kn_nl_points_free(&s->points);
  free(s->pa), free(s->pb), free(s->v0), free(s->v), free(s->force), free(s->offset);
  free(s);
}

kn_status kn_nl_backend_create(kn_world* w, const kn_nl_formulation* f, void** out, kn_error* err) {
  const kn_scene* sc = w->scene;
  nl_state* s = kn_calloc(1, sizeof *s);
  if (!s) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", sc->path);
  s->f = f;
  s->opt = kn_nl_options_default();
  const kn_scene_solver* so = sc->doc->contact ? sc->doc->contact->solver : NULL;
  if (so && so->max_iterations) s->opt.max_iterations = *so->max_iterations;
  void* sap = NULL;
  kn_status st = kn_sap_adapter_create_state(w, &sap, err);
  s->sap = sap;
  if (!st && (!(s->solver = kn_nl_solver_create()) || !(s->offset = kn_calloc((size_t)w->nclique + 1, sizeof *s->offset))))
    st = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", sc->path);
  double extra = 0;
  if (!st) st = f->create(w, &s->fs, &s->opt, &extra, err);
  if (st) {
    kn_nl_backend_free(s);
    return st;
  }
  s->sap->cand.extra_margin = extra;
  *out = s;
  return KN_OK;
}

/* a candidate's side => its material point in s->points (-1: fixed in the world) */
static int side_point(kn_world* w, nl_state* s, const kn_contact_candidate* cc, const kn_contact_side* sd) {
  int c = kn_sim_side_clique(w, sd);
  if (c < 0) return -1;
  kn_clique* cq = &w->cliques[c];
  int ndof = cq->ops->ndof(cq->self);
  double dt = w->scene->time_step;
  kn_point_map m;
  if (sd->kind == KN_SIDE_COLLIDER) {
    cq->ops->point_map(cq->self, w->colliders[sd->body].body, cc->p, dt, &m);
  } else if (sd->kind == KN_SIDE_PARTICLE) {
    cq->ops->point_map(cq->self, sd->point[0], NULL, dt, &m);
  } else { /* sum_k w_k x(vertex k): the vertices' nodal terms, weighted */
    kn_point_map mk;
    memset(&m, 0, sizeof m);
    for (int k = 0; k < sd->n; k++) {
      cq->ops->point_map(cq->self, sd->point[k], NULL, dt, &mk);
      for (int a = 0; a < 3; a++) m.x0[a] += sd->w[k] * mk.x0[a], m.v0[a] += sd->w[k] * mk.v0[a];
      for (int a = 0; a < mk.n && m.n < 27; a++) m.col[m.n] = mk.col[a], m.w[m.n++] = sd->w[k] * mk.w[a];
    }
  }
  return kn_nl_points_add(&s->points, &m, s->offset[c], ndof, NULL);
}

/* 5. every candidate's two material points */
static kn_status stage_points(kn_world* w, nl_state* s, kn_error* err) {
  const kn_sim_candidates* c = &s->sap->cand;
  kn_nl_points_reset(&s->points);
  if (c->n > s->pcap) {
    free(s->pa), free(s->pb);
    s->pa = malloc((size_t)c->n * sizeof *s->pa);
    s->pb = malloc((size_t)c->n * sizeof *s->pb);
    s->pcap = s->pa && s->pb ? c->n : 0;
    if (!s->pcap) return kn_fail(err, KN_ERR_NOMEM, "out of memory for %d contacts", c->n);
  }
  for (int i = 0; i < c->n; i++) {
    s->pa[i] = side_point(w, s, &c->c[i], &c->c[i].a);
    s->pb[i] = side_point(w, s, &c->c[i], &c->c[i].b);
  }
  if (s->points.nomem) return kn_fail(err, KN_ERR_NOMEM, "out of memory for %d contact points", c->n);
  return KN_OK;
}

double kn_nl_contact_gap(const kn_nl_step* st, int i, const double* v) {
  const kn_contact_candidate* cc = &st->cand->c[i];
  double w[3];
  kn_nl_pair_velocity(st->points, st->pa[i], st->pb[i], v, w);
  return cc->phi + st->dt * (cc->R_WC[2] * w[0] + cc->R_WC[5] * w[1] + cc->R_WC[8] * w[2]);
}

void kn_nl_describe_contact(const kn_nl_step* st, int i, double gap, const double f[3], char* buf, size_t n) {
  const kn_contact_candidate* cc = &st->cand->c[i];
  char what[256];
  kn_sim_candidate_describe(st->w, st->cand, i, what, sizeof what);
  double fn = cc->R_WC[2] * f[0] + cc->R_WC[5] * f[1] + cc->R_WC[8] * f[2];
  snprintf(buf, n, "the %s at (%.4g, %.4g, %.4g) m: gap %.3g m, normal force %.4g N, |f| %.4g N", what, cc->p[0],
           cc->p[1], cc->p[2], gap, fn, sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]));
}

void kn_nl_describe_strongest(void (*force)(void* self, const kn_nl_step* st, int i, const double* v, double f[3]),
                              void* self, const kn_nl_step* st, const double* v, char* buf, size_t n) {
  int worst = -1;
  double fmax = 0, fw[3] = {0, 0, 0};
  for (int i = 0; i < st->cand->n; i++) {
    double f[3];
    force(self, st, i, v, f);
    double m = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    if (!(m <= fmax)) worst = i, fmax = m, memcpy(fw, f, sizeof fw); /* NaN and inf count as worst */
  }
  if (n > 0) buf[0] = 0;
  if (worst >= 0) kn_nl_describe_contact(st, worst, kn_nl_contact_gap(st, worst, v), fw, buf, n);
}

/* a failed solve's error => "...; worst contact: <the formulation's description at the last iterate>" */
static void add_worst_contact(nl_state* s, const kn_nl_step* st, kn_error* err) {
  if (!s->f->describe_failure || !err) return;
  char what[384] = "";
  s->f->describe_failure(s->fs, st, kn_nl_solver_iterate(s->solver), what, sizeof what);
  size_t len = strlen(err->msg);
  if (what[0] && len < sizeof err->msg) snprintf(err->msg + len, sizeof err->msg - len, "; worst contact: %s", what);
}

/* 6. Newton from each clique's v_start, redone while the formulation asks */
static kn_status stage_solve(kn_world* w, nl_state* s, const kn_nl_step* st, kn_nl_stats* stats, kn_error* err) {
  kn_nl_problem prob = {.ncliques = w->nclique, .cliques = w->cliques, .robot = s->sap->prob};
  int o = 0;
  for (int c = 0; c < w->nclique; c++) { /* st->guess is s->v0: begin may change it */
    w->cliques[c].ops->v_start(w->cliques[c].self, s->v0 + o);
    o += w->cliques[c].ops->ndof(w->cliques[c].self);
  }
  kn_status e = s->f->begin(s->fs, st, &prob.contact, &prob.potential, err);
  if (e) return kn_error_prefix(err, "stage 2 (%s contacts): ", s->f->name);
  memset(stats, 0, sizeof *stats);
  for (int attempt = 0;; attempt++) {
    kn_nl_stats st1;
    if ((e = kn_nl_solve(s->solver, &prob, &s->opt, s->v0, s->v, &st1, err))) {
      if (e == KN_ERR_NUMERIC) add_worst_contact(s, st, err);
      return kn_error_prefix(err, "stage 2 (%s Newton solve, %d contacts): ", s->f->name, st->cand->n);
    }
    stats->iterations += st1.iterations, stats->line_search_iterations += st1.line_search_iterations;
    stats->factorizations += st1.factorizations, stats->krylov_iterations += st1.krylov_iterations;
    stats->residual = st1.residual;
    if (!s->f->after_solve || !s->f->after_solve(s->fs, st, s->v, attempt) || attempt == 5) break;
    memcpy(s->v0, s->v, (size_t)st->nv * sizeof(double));
  }
  return KN_OK;
}

/* 7. forces on each candidate's B side, the formulation's mesh pairs, FEM attachment forces (their
 * SAP impulses at v) */
static kn_status stage_outputs(kn_world* w, nl_state* s, const kn_nl_step* st, kn_error* err) {
  sap_state* sp = s->sap;
  const kn_sim_candidates* c = &sp->cand;
  kn_status e = kn_sap_adapter_grow(&s->force, &s->fcap, 3 * (size_t)c->n + 3, err);
  if (e) return e;
  for (int i = 0; i < c->n; i++) s->f->force(s->fs, st, i, s->v, s->force + 3 * i);
  if ((e = kn_sim_contacts_record(w, c, s->force, err))) return e;
  if (s->f->record && (e = s->f->record(s->fs, st, s->v, err))) return e;
  for (int fi = 0; fi < w->nfem; fi++) memset(w->fems[fi].attach_force, 0, sizeof w->fems[fi].attach_force);
  for (int k = 0; k < sp->nattach; k++) {
    int i = sp->first_attach + k;
    double g[KN_SAP_MAX_ROWS_PUBLIC];
    if ((e = kn_sap_constraint_eval(sp->prob, i, s->v, NULL, g, NULL, err))) return e;
    for (int a = 0; a < 3; a++) w->fems[sp->info[i].body].attach_force[a] += g[a] / st->dt;
  }
  return KN_OK;
}

/* the largest position coordinate of the world's moving parts (FEM vertices, MPM particles, tree
 * bodies' origins): the scale of the positions' round-off */
static double position_scale(const kn_world* w) {
  double m = 0;
  for (int fi = 0; fi < w->nfem; fi++) {
    const kn_fem_body* b = w->fems[fi].body;
    for (int i = 0; i < 3 * b->mesh.nvert; i++) m = fmax(m, fabs(b->x[i]));
  }
  for (int k = 0; k < w->nmpm; k++) {
    const kn_mpm_body* b = w->mpms[k].body;
    for (int i = 0; i < 3 * b->np; i++) m = fmax(m, fabs(b->x[i]));
  }
  for (int k = 0; k < w->ntree; k++) {
    const kn_mb_data* d = w->trees[k].data;
    for (int b = 0; b < d->nbody; b++)
      for (int a = 0; a < 3; a++) m = fmax(m, fabs(d->X_wb[b].p[a]));
  }
  return m;
}

kn_status kn_nl_backend_step(kn_world* w, void* state, kn_error* err) {
  nl_state* s = state;
  sap_state* sp = s->sap;
  const double dt = w->scene->time_step;
  kn_sap_problem_reset(sp->prob, dt);
  double t0 = kn_wall_time();
  kn_status st = kn_sap_adapter_controllers(w, sp, dt, err);
  double t1 = kn_wall_time();
  if (!st) st = kn_sap_adapter_detect(w, sp, dt, err);
  double t2 = kn_wall_time();
  if (!st) st = kn_sap_adapter_free_motion(w, dt, err);
  double t3 = kn_wall_time();
  if (!st) st = kn_sap_adapter_cliques_full(w, sp, err);
  if (!st) st = kn_sap_adapter_robot(w, sp, dt, err);
  if (!st && w->nfem > 0) st = kn_sap_adapter_attachments(w, sp, err);
  if (st) return st;
  int n = kn_sap_problem_nv(sp->prob);
  for (int c = 0; c < w->nclique; c++) s->offset[c] = kn_sap_clique_offset(sp->prob, sp->q[c].sap);
  if ((st = stage_points(w, s, err))) return st;
  if ((st = kn_sap_adapter_grow(&s->v0, &s->vcap, (size_t)n + 1, err))) return st;
  if ((st = kn_sap_adapter_grow(&s->v, &s->vcap2, (size_t)n + 1, err))) return st;
  kn_nl_step step = {.w = w, .dt = dt, .cand = &sp->cand, .pa = s->pa, .pb = s->pb, .points = &s->points,
                     .offset = s->offset, .nv = n, .guess = s->v0};
  kn_nl_stats stats;
  s->opt.floor_step = 16 * DBL_EPSILON * position_scale(w) / dt;
  if ((st = stage_solve(w, s, &step, &stats, err))) return st;
  double t4 = kn_wall_time();
  for (int c = 0; c < w->nclique; c++) {
    kn_clique* cq = &w->cliques[c];
    st = cq->ops->advance(cq->self, s->v + s->offset[c], dt, err);
    if (st) return kn_error_prefix(err, "stage 3 (advance of %s): ", cq->ops->name(cq->self));
  }
  if ((st = stage_outputs(w, s, &step, err))) return st;
  if (s->f->end_step && (st = s->f->end_step(s->fs, &step, s->v, err)))
    return kn_error_prefix(err, "stage 3 (%s end of step): ", s->f->name);
  double t5 = kn_wall_time();
  w->last.iterations = stats.iterations;
  w->last.line_search_iterations = stats.line_search_iterations;
  w->last.factorizations = stats.factorizations;
  w->last.krylov_iterations = stats.krylov_iterations;
  w->last.residual = stats.residual;
  double vmax = 0;
  for (int i = 0; i < n; i++) vmax = fmax(vmax, fabs(s->v[i]));
  w->last.tolerance = s->opt.abs_tol + s->opt.rel_tol * vmax;
  w->last.contacts = sp->cand.n;
  w->last.constraints = kn_sap_problem_num_constraints(sp->prob);
  w->last.time_free_motion = (t1 - t0) + (t3 - t2);
  w->last.time_detect = t2 - t1;
  w->last.time_sap = t4 - t3;
  w->last.time_advance = t5 - t4;
  return KN_OK;
}

/* saved state: each MPM grid's warm start (the Newton guess of its next step, state_parts.h), then
 * the formulation's part */
void kn_nl_backend_save(const kn_world* w, const void* state, kn_state_out* out) {
  const nl_state* s = state;
  kn_state_put_mpm_warm_starts(out, w);
  if (s->f->save) s->f->save(s->fs, out);
}

/* all or nothing: the warm starts are committed only once the formulation took its part */
kn_status kn_nl_backend_load(const kn_world* w, void* state, kn_state_in* in, kn_error* err) {
  nl_state* s = state;
  kn_state_parts p = {0};
  const char* what = kn_state_get_mpm_warm_starts(in, w, &p);
  if (!what && !s->f->load && in->pos != in->len) what = "unread bytes after the backend's state";
  if (what) {
    kn_state_parts_free(&p);
    return kn_fail(err, strcmp(what, "out of memory") ? KN_ERR_PARSE : KN_ERR_NOMEM, "%s", what);
  }
  kn_status st = s->f->load ? s->f->load(s->fs, in, err) : KN_OK;
  if (st) {
    kn_state_parts_free(&p);
    return st;
  }
  kn_state_parts_commit(&p, (kn_world*)w, NULL, NULL, NULL);
  return KN_OK;
}
