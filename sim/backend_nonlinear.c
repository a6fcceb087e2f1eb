/* The nonlinear backends' adapter (ARCHITECTURE "The time step"): smooth_friction today; penalty
 * and ipc plug their contact terms into the same stages. Per step:
 *
 *   1 controllers, 2 detection (contact.margin + the backend's thickness), 3 free motion: the
 *     stages SAP runs (sap_stages.c)
 *   4 the robot-side terms: every clique into a SAP problem over the full v and its joint limits,
 *     implicit PD, couplers, welds and FEM attachments (kn_sap_constraints_potential: the same
 *     regularized costs SAP minimizes, as implicit forces of this solve)
 *   5 each candidate's two material points (kn_nl_points, from the cliques' point maps) and the
 *     contact term over them
 *   6 Newton on the sum (kn_nl_solve) from each clique's v_start; smooth_friction: a step that
 *     ends with a gap below 0 raises kappa by b'(d_min) / b'(delta / 2) and is redone, at most 5
 *     times (digest §3.9); kappa halves back toward its start while nothing is in contact
 *   7 advance every clique; contact forces on each candidate's B side; statistics */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/backend_sap.h"
#include "smooth/smooth.h"

typedef struct {
  sap_state* sap;           /* the shared stages' state: candidates, poses, robot constraints */
  kn_nl_solver* solver;
  kn_nl_options opt;
  kn_nl_points points;
  kn_smooth_contact* sc;
  double* lambda_ref;
  int sccap;
  kn_smooth_term term;
  double kappa0;            /* stiffness at the start; term.kappa is the current one (saved) */
  int adaptive;
  double *v0, *v, *force;
  size_t vcap, vcap2, fcap;
  kn_smooth_volume* vol;    /* FEM bodies with a volume constraint (deformables[i].volume_compressibility) */
  int* vol_fem;             /* per zone: the FEM body */
  int nvol;
  int* offset;              /* per world clique: its first DoF in v (nclique, allocated at create) */
} nl_state;

static void nl_free(void* p) {
  nl_state* s = p;
  if (!s) return;
  kn_sap_adapter_free_state(s->sap);
  kn_nl_solver_free(s->solver);
  kn_nl_points_free(&s->points);
  free(s->sc), free(s->lambda_ref), free(s->v0), free(s->v), free(s->force);
  for (int z = 0; z < s->nvol; z++) {
    free((int*)s->vol[z].point), free((int*)s->vol[z].tri), free(s->vol[z].x), free(s->vol[z].dV);
  }
  free(s->vol), free(s->vol_fem), free(s->offset);
  free(s);
}

/* contact.smooth_friction's keys => the term's parameters (errors name the key) */
static kn_status smooth_params(const kn_scene* sc, nl_state* s, kn_error* err) {
  const kn_scene_smooth* k = sc->doc->contact ? sc->doc->contact->smooth_friction : NULL;
  kn_smooth_term* t = &s->term;
  t->delta = k && k->thickness ? *k->thickness : 1e-4;
  t->kappa = k && k->stiffness ? *k->stiffness : 1e5;
  t->eps = k && k->epsilon ? *k->epsilon : 1e-3;
  t->static_ratio = k && k->static_ratio ? *k->static_ratio : 1.0;
  t->stribeck_speed = k && k->stribeck_speed ? *k->stribeck_speed : 10 * t->eps;
  t->viscous = k && k->viscous ? *k->viscous : 0.0;
  t->lagged = k && k->lagged ? *k->lagged : 0;
  s->adaptive = k && k->adaptive ? *k->adaptive : 1;
  s->kappa0 = t->kappa;
  struct {
    const char* key;
    double x, lo;
    int open;
  } chk[] = {{"contact.smooth_friction.thickness", t->delta, 0, 1},
             {"contact.smooth_friction.stiffness", t->kappa, 0, 1},
             {"contact.smooth_friction.epsilon", t->eps, 0, 1},
             {"contact.smooth_friction.static_ratio", t->static_ratio, 1, 0},
             {"contact.smooth_friction.stribeck_speed", t->stribeck_speed, 0, 1},
             {"contact.smooth_friction.viscous", t->viscous, 0, 0}};
  for (size_t i = 0; i < sizeof chk / sizeof *chk; i++)
    if (!isfinite(chk[i].x) || chk[i].x < chk[i].lo || (chk[i].open && chk[i].x == chk[i].lo))
      return kn_scene_fail(sc, err, KN_ERR_INVALID, chk[i].key, "%g: expected a finite number %s %g", chk[i].x,
                           chk[i].open ? ">" : ">=", chk[i].lo);
  if (t->lagged && (t->static_ratio != 1.0 || t->viscous != 0.0))
    return kn_scene_fail(sc, err, KN_ERR_INVALID, "contact.smooth_friction.lagged",
                         "lagged friction is the gradient of a potential only without Stribeck and viscous terms "
                         "(static_ratio 1, viscous 0)");
  return KN_OK;
}

/* the volume zones: each FEM body with volume_compressibility, its surface vertices and triangles
 * in local numbering, V0 from its rest shape (errors name the key) */
static kn_status volumes_create(kn_world* w, nl_state* s, kn_error* err) {
  const kn_scene* sc = w->scene;
  s->vol = kn_calloc((size_t)w->nfem + 1, sizeof *s->vol);
  s->vol_fem = kn_calloc((size_t)w->nfem + 1, sizeof *s->vol_fem);
  if (!s->vol || !s->vol_fem) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", sc->path);
  for (int fi = 0; fi < w->nfem; fi++) {
    const kn_world_fem* F = &w->fems[fi];
    unsigned j = 0;
    while (j < sc->doc->ndeformables && strcmp(sc->doc->deformables[j].name, F->name) != 0) j++;
    if (j == sc->doc->ndeformables || !sc->doc->deformables[j].volume_compressibility) continue;
    const kn_tet_mesh* mesh = &F->body->mesh;
    kn_smooth_volume* z = &s->vol[s->nvol];
    s->vol_fem[s->nvol++] = fi;
    int* loc = malloc((size_t)mesh->nvert * sizeof *loc);
    int* tri = malloc(3 * (size_t)mesh->nsurf * sizeof *tri + 1);
    z->point = malloc((size_t)F->nsurf_vert * sizeof *z->point + 1);
    z->x = malloc(3 * (size_t)F->nsurf_vert * sizeof *z->x + 1);
    z->dV = malloc(3 * (size_t)F->nsurf_vert * sizeof *z->dV + 1);
    z->tri = tri;
    if (!loc || !tri || !z->point || !z->x || !z->dV) {
      free(loc);
      return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", sc->path);
    }
    for (int a = 0; a < mesh->nvert; a++) loc[a] = -1;
    for (int k = 0; k < F->nsurf_vert; k++) loc[F->surf_vert[k]] = k;
    for (int k = 0; k < 3 * mesh->nsurf; k++) tri[k] = loc[mesh->surf[k]];
    for (int k = 0; k < F->nsurf_vert; k++) memcpy(z->x + 3 * k, mesh->X + 3 * F->surf_vert[k], 3 * sizeof(double));
    free(loc);
    z->nvert = F->nsurf_vert, z->ntri = mesh->nsurf;
    z->V0 = kn_smooth_surface_volume(z->x, z->nvert, tri, z->ntri, NULL);
    char key[96];
    snprintf(key, sizeof key, "deformables[%u].volume_compressibility", j);
    if (!(z->V0 > 0))
      return kn_scene_fail(sc, err, KN_ERR_INVALID, key, "the surface of '%s' encloses no volume (%g m^3)", F->name,
                           z->V0);
    z->coef = 101325.0 / (z->V0 * *sc->doc->deformables[j].volume_compressibility);
  }
  s->term.volumes = s->vol, s->term.nvolumes = s->nvol;
  return KN_OK;
}

static kn_status nl_create(kn_world* w, void** out, kn_error* err) {
  const kn_scene* sc = w->scene;
  nl_state* s = kn_calloc(1, sizeof *s);
  if (!s) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", sc->path);
  void* sap = NULL;
  kn_status st = kn_sap_adapter_create_state(w, &sap, err);
  s->sap = sap;
  if (!st && (!(s->solver = kn_nl_solver_create()) || !(s->offset = kn_calloc((size_t)w->nclique + 1, sizeof *s->offset))))
    st = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", sc->path);
  if (!st) st = smooth_params(sc, s, err);
  if (!st) st = volumes_create(w, s, err);
  if (st) {
    nl_free(s);
    return st;
  }
  s->opt = kn_nl_options_default();
  const kn_scene_solver* so = sc->doc->contact ? sc->doc->contact->solver : NULL;
  if (so && so->max_iterations) s->opt.max_iterations = *so->max_iterations;
  const kn_scene_smooth* k = sc->doc->contact ? sc->doc->contact->smooth_friction : NULL;
  s->opt.iterative = !(k && k->solver == KN_SCENE_NL_DIRECT);
  s->sap->cand.extra_margin = s->term.delta;
  *out = s;
  return KN_OK;
}


/* a candidate's side => its material point in s->points (-1: fixed in the world) */
static int side_point(kn_world* w, nl_state* s, const kn_contact_candidate* cc, const kn_contact_side* sd,
                      const int* offset) {
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
      for (int a = 0; a < 3; a++) m.x0[a] += sd->w[k] * mk.x0[a];
      for (int a = 0; a < mk.n && m.n < 27; a++) m.col[m.n] = mk.col[a], m.w[m.n++] = sd->w[k] * mk.w[a];
    }
  }
  return kn_nl_points_add(&s->points, &m, offset[c], ndof, NULL);
}

/* 5. the contacts of this step over their material points */
static kn_status stage_contacts(kn_world* w, nl_state* s, const int* offset, kn_error* err) {
  const kn_sim_candidates* c = &s->sap->cand;
  kn_nl_points_reset(&s->points);
  if (c->n > s->sccap) {
    free(s->sc), free(s->lambda_ref);
    s->sc = malloc((size_t)c->n * sizeof *s->sc);
    s->lambda_ref = malloc((size_t)c->n * sizeof *s->lambda_ref);
    s->sccap = s->sc && s->lambda_ref ? c->n : 0;
    if (!s->sccap) return kn_fail(err, KN_ERR_NOMEM, "out of memory for %d contacts", c->n);
  }
  for (int i = 0; i < c->n; i++) {
    const kn_contact_candidate* cc = &c->c[i];
    kn_smooth_contact* k = &s->sc[i];
    k->a = side_point(w, s, cc, &cc->a, offset);
    k->b = side_point(w, s, cc, &cc->b, offset);
    for (int a = 0; a < 3; a++) k->n[a] = cc->R_WC[3 * a + 2];
    k->phi0 = cc->phi;
    k->mu = cc->material.mu;
    double db;
    kn_smooth_penalty(cc->phi, s->term.delta, s->term.kappa, &db, NULL);
    k->lambda0 = -db;
  }
  for (int z = 0; z < s->nvol; z++) { /* the volume zones' surface vertices */
    const kn_world_fem* F = &w->fems[s->vol_fem[z]];
    int cq = w->first_fem_clique + s->vol_fem[z];
    kn_clique* q = &w->cliques[cq];
    int* pt = (int*)s->vol[z].point;
    for (int k = 0; k < F->nsurf_vert; k++) {
      kn_point_map m;
      q->ops->point_map(q->self, F->surf_vert[k], NULL, w->scene->time_step, &m);
      pt[k] = kn_nl_points_add(&s->points, &m, offset[cq], q->ops->ndof(q->self), NULL);
    }
  }
  if (s->points.nomem) return kn_fail(err, KN_ERR_NOMEM, "out of memory for %d contact points", c->n);
  s->term.points = &s->points;
  s->term.c = s->sc;
  s->term.n = c->n;
  s->term.lambda_ref = s->lambda_ref;
  s->term.dt = w->scene->time_step;
  return KN_OK;
}

static kn_status grow(double** p, size_t* cap, size_t n, kn_error* err) { return kn_sap_adapter_grow(p, cap, n, err); }

/* 6. Newton with the stiffness adaptation: the deepest end-of-step gap in *d_min */
static kn_status stage_solve(kn_world* w, nl_state* s, int n, kn_nl_stats* stats, int* redo, kn_error* err) {
  kn_nl_problem prob = {.ncliques = w->nclique, .cliques = w->cliques, .robot = s->sap->prob,
                        .contact = {.eval = kn_smooth_term_eval, .lag = kn_smooth_term_lag, .self = &s->term},
                        .potential = s->term.lagged};
  int o = 0;
  for (int c = 0; c < w->nclique; c++) {
    w->cliques[c].ops->v_start(w->cliques[c].self, s->v0 + o);
    o += w->cliques[c].ops->ndof(w->cliques[c].self);
  }
  memset(stats, 0, sizeof *stats);
  *redo = 0;
  for (int attempt = 0;; attempt++) {
    kn_nl_stats st1;
    kn_status st = kn_nl_solve(s->solver, &prob, &s->opt, s->v0, s->v, &st1, err);
    if (st) return kn_error_prefix(err, "stage 2 (%s Newton solve, %d contacts, kappa %.3g N/m): ", "smooth_friction",
                                   s->term.n, s->term.kappa);
    stats->iterations += st1.iterations, stats->line_search_iterations += st1.line_search_iterations;
    stats->residual = st1.residual;
    double d_min = INFINITY, d_start = 0;
    int active = 0;
    for (int i = 0; i < s->term.n; i++) d_start = fmin(d_start, s->term.c[i].phi0);
    for (int i = 0; i < s->term.n; i++) {
      double f[3], d = kn_smooth_term_force(&s->term, i, s->v, f);
      d_min = fmin(d_min, d);
      active |= d < s->term.delta;
    }
    if (!s->adaptive) break;
    if (!active && s->term.kappa > s->kappa0) s->term.kappa = fmax(s->kappa0, 0.5 * s->term.kappa);
    /* raise kappa when the step ends deeper than zero and than it began: a body placed overlapping
     * (a wedge pressed in at t = 0) keeps its overlap's force instead of stiffening without end */
    if (!(d_min < d_start) || attempt == 5) break;
    s->term.kappa *= kn_smooth_kappa_factor(d_min, s->term.delta);
    (*redo)++;
    memcpy(s->v0, s->v, (size_t)n * sizeof(double));
  }
  (void)w;
  return KN_OK;
}

static kn_status nl_step(kn_world* w, void* state, kn_error* err) {
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
  st = stage_contacts(w, s, s->offset, err);
  if (!st) st = grow(&s->v0, &s->vcap, (size_t)n + 1, err);
  if (!st) st = grow(&s->v, &s->vcap2, (size_t)n + 1, err);
  if (st) return st;
  kn_nl_stats stats;
  int redo = 0;
  if ((st = stage_solve(w, s, n, &stats, &redo, err))) return st;
  double t4 = kn_wall_time();
  for (int c = 0; c < w->nclique; c++) {
    kn_clique* cq = &w->cliques[c];
    st = cq->ops->advance(cq->self, s->v + kn_sap_clique_offset(sp->prob, sp->q[c].sap), dt, err);
    if (st) return kn_error_prefix(err, "stage 3 (advance of %s): ", cq->ops->name(cq->self));
  }
  /* 7. forces on each candidate's B side, FEM attachment forces (their SAP impulses at v) */
  const kn_sim_candidates* c = &sp->cand;
  if ((st = grow(&s->force, &s->fcap, 3 * (size_t)c->n + 3, err))) return st;
  for (int i = 0; i < c->n; i++) kn_smooth_term_force(&s->term, i, s->v, s->force + 3 * i);
  if ((st = kn_sim_contacts_record(w, c, s->force, err))) return st;
  for (int fi = 0; fi < w->nfem; fi++) memset(w->fems[fi].attach_force, 0, sizeof w->fems[fi].attach_force);
  for (int k = 0; k < sp->nattach; k++) {
    int i = sp->first_attach + k;
    double g[KN_SAP_MAX_ROWS_PUBLIC];
    if ((st = kn_sap_constraint_eval(sp->prob, i, s->v, NULL, g, NULL, err))) return st;
    for (int a = 0; a < 3; a++) w->fems[sp->info[i].body].attach_force[a] += g[a] / dt;
  }
  double t5 = kn_wall_time();
  w->last.iterations = stats.iterations;
  w->last.line_search_iterations = stats.line_search_iterations;
  w->last.residual = stats.residual;
  w->last.contacts = c->n;
  w->last.constraints = kn_sap_problem_num_constraints(sp->prob);
  w->last.time_free_motion = (t1 - t0) + (t3 - t2);
  w->last.time_detect = t2 - t1;
  w->last.time_sap = t4 - t3;
  w->last.time_advance = t5 - t4;
  (void)redo;
  return KN_OK;
}

/* saved state: the current kappa (the anchors-free part the next steps read) */
static void nl_save(const kn_world* w, const void* state, kn_state_out* out) {
  (void)w;
  const nl_state* s = state;
  kn_state_put_f64(out, &s->term.kappa, 1);
}

static kn_status nl_load(const kn_world* w, void* state, kn_state_in* in, kn_error* err) {
  (void)w;
  nl_state* s = state;
  double k;
  if (!kn_state_get_f64(in, &k, 1) || !(k > 0) || !isfinite(k))
    return kn_fail(err, KN_ERR_PARSE, "the smooth_friction backend's stiffness is missing or not positive");
  s->term.kappa = k;
  return KN_OK;
}

const kn_backend kn_backend_smooth_friction = {"smooth_friction", nl_create, nl_step, nl_free, nl_save, nl_load};
