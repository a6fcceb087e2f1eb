/* The smooth_friction backend's formulation (backend_nonlinear.h; digest implicit-smooth-friction):
 * its scene keys (contact.smooth_friction, deformables[i].volume_compressibility), the cubic penalty
 * and implicit friction over each candidate's points and the volume zones' surface vertices
 * (smooth/contact.c), the stiffness adaptation of §3.9 (a solve that ends with a gap below 0 and
 * below where the step began raises kappa by b'(d_min) / b'(delta / 2) and is redone; kappa halves
 * back toward its start while nothing is in contact), kappa in saved states; the integrator
 * (contact.smooth_friction.integrator): backward Euler, or the trapezoidal rule on the whole force
 * (§3.6), set on every clique (coupling.h's theta = 1/2) with the contacts' and volume zones' start
 * forces in the term (smooth/contact.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/backend_nonlinear.h"
#include "smooth/smooth.h"

typedef struct {
  kn_smooth_contact* sc;
  double* lambda_ref;
  int sccap;
  kn_smooth_term term;
  double kappa0;            /* stiffness at the start; term.kappa is the current one (saved) */
  int adaptive;
  double theta;             /* 1 backward Euler, 1/2 the trapezoidal rule */
  kn_smooth_volume* vol;    /* FEM bodies with a volume constraint (deformables[i].volume_compressibility) */
  int* vol_fem;             /* per zone: the FEM body */
  int nvol;
} smooth_state;

static void smooth_destroy(void* p) {
  smooth_state* s = p;
  if (!s) return;
  free(s->sc), free(s->lambda_ref);
  for (int z = 0; z < s->nvol; z++) {
    free((int*)s->vol[z].point), free((int*)s->vol[z].tri), free(s->vol[z].x), free(s->vol[z].dV), free(s->vol[z].g0);
  }
  free(s->vol), free(s->vol_fem);
  free(s);
}
/* contact.smooth_friction's keys => the term's parameters (errors name the key) */
static kn_status smooth_params(const kn_scene* sc, smooth_state* s, kn_error* err) {
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
  s->theta = k && k->integrator == KN_SCENE_SMOOTH_TRAPEZOIDAL ? 0.5 : 1.0;
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
static kn_status volumes_create(kn_world* w, smooth_state* s, kn_error* err) {
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
    if (s->theta != 1.0) z->g0 = malloc(3 * (size_t)F->nsurf_vert * sizeof *z->g0 + 1);
    if (!loc || !tri || !z->point || !z->x || !z->dV || (s->theta != 1.0 && !z->g0)) {
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

static kn_status smooth_create(kn_world* w, void** out, kn_nl_options* opt, double* extra_margin, kn_error* err) {
  const kn_scene* sc = w->scene;
  smooth_state* s = kn_calloc(1, sizeof *s);
  if (!s) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", sc->path);
  kn_status st = smooth_params(sc, s, err);
  if (!st) st = volumes_create(w, s, err);
  for (int c = 0; !st && s->theta != 1.0 && c < w->nclique; c++)
    if (kn_clique_set_scheme(&w->cliques[c], s->theta, err)) {
      char why[sizeof err->msg];
      snprintf(why, sizeof why, "%s", err->msg);
      st = kn_scene_fail(sc, err, KN_ERR_UNSUPPORTED, "contact.smooth_friction.integrator",
                         "trapezoidal: %s", why);
    }
  if (st) {
    smooth_destroy(s);
    return st;
  }
  const kn_scene_smooth* k = sc->doc->contact ? sc->doc->contact->smooth_friction : NULL;
  opt->iterative = !(k && k->solver == KN_SCENE_NL_DIRECT);
  *extra_margin = s->term.delta;
  *out = s;
  return KN_OK;
}

/* the contacts of this step over their material points, and the volume zones' vertices */
static kn_status smooth_begin(void* self, const kn_nl_step* st, kn_nl_term* term, int* potential, kn_error* err) {
  smooth_state* s = self;
  const kn_sim_candidates* c = st->cand;
  kn_world* w = st->w;
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
    k->a = st->pa[i];
    k->b = st->pb[i];
    for (int a = 0; a < 3; a++) k->n[a] = cc->R_WC[3 * a + 2];
    k->phi0 = cc->phi;
    k->mu = cc->material.mu;
    kn_nl_pair_start_velocity(st->points, k->a, k->b, k->w0);
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
      q->ops->point_map(q->self, F->surf_vert[k], NULL, st->dt, &m);
      pt[k] = kn_nl_points_add(st->points, &m, st->offset[cq], q->ops->ndof(q->self), NULL);
    }
  }
  if (st->points->nomem) return kn_fail(err, KN_ERR_NOMEM, "out of memory for the volume zones' points");
  s->term.points = st->points;
  s->term.c = s->sc;
  s->term.n = c->n;
  s->term.lambda_ref = s->lambda_ref;
  s->term.dt = s->theta * st->dt;           /* theta 1: dt itself */
  s->term.dt0 = (1 - s->theta) * st->dt;    /* theta 1: 0, no start half */
  kn_smooth_term_start(&s->term, s->sc);
  *term = (kn_nl_term){.eval = kn_smooth_term_eval, .lag = kn_smooth_term_lag, .self = &s->term};
  *potential = s->term.lagged;
  return KN_OK;
}

/* §3.9: raise kappa when the step ends deeper than zero and than it began (a body placed
 * overlapping, a wedge pressed in at t = 0, keeps its overlap's force instead of stiffening
 * without end); relax it toward its start while nothing is in contact */
static int smooth_after_solve(void* self, const kn_nl_step* st, const double* v, int attempt) {
  (void)st;
  smooth_state* s = self;
  double d_min = INFINITY, d_start = 0;
  int active = 0;
  for (int i = 0; i < s->term.n; i++) d_start = fmin(d_start, s->term.c[i].phi0);
  for (int i = 0; i < s->term.n; i++) {
    double f[3], d = kn_smooth_term_force(&s->term, i, v, f);
    d_min = fmin(d_min, d);
    active |= d < s->term.delta;
  }
  if (!s->adaptive) return 0;
  if (!active && s->term.kappa > s->kappa0) s->term.kappa = fmax(s->kappa0, 0.5 * s->term.kappa);
  if (!(d_min < d_start) || attempt == 5) return 0;
  s->term.kappa *= kn_smooth_kappa_factor(d_min, s->term.delta);
  kn_smooth_term_start(&s->term, s->sc); /* the start half's penalty at the new kappa (§6 pitfall 6) */
  return 1;
}

static void smooth_force(void* self, const kn_nl_step* st, int i, const double* v, double f[3]) {
  (void)st;
  kn_smooth_term_force(&((smooth_state*)self)->term, i, v, f);
}

/* saved state: the current kappa */
static void smooth_save(const void* self, kn_state_out* out) {
  kn_state_put_f64(out, &((const smooth_state*)self)->term.kappa, 1);
}

static kn_status smooth_load(void* self, kn_state_in* in, kn_error* err) {
  double k;
  if (!kn_state_get_f64(in, &k, 1) || !(k > 0) || !isfinite(k))
    return kn_fail(err, KN_ERR_PARSE, "the smooth_friction backend's stiffness is missing or not positive");
  if (in->pos != in->len) return kn_fail(err, KN_ERR_PARSE, "unread bytes after the smooth_friction backend's state");
  ((smooth_state*)self)->term.kappa = k;
  return KN_OK;
}

/* a failed solve's worst contact: the one pushed hardest at the last iterate */
static void smooth_describe_failure(void* self, const kn_nl_step* st, const double* v, char* buf, size_t n) {
  kn_nl_describe_strongest(smooth_force, self, st, v, buf, n);
}

static const kn_nl_formulation smooth_formulation = {"smooth_friction", smooth_create, smooth_destroy, smooth_begin,
                                                     smooth_after_solve, smooth_force, NULL, smooth_save, smooth_load,
                                                     smooth_describe_failure, NULL};

static kn_status backend_create(kn_world* w, void** out, kn_error* err) {
  return kn_nl_backend_create(w, &smooth_formulation, out, err);
}

const kn_backend kn_backend_smooth_friction = {"smooth_friction", backend_create, kn_nl_backend_step, kn_nl_backend_free,
                                               kn_nl_backend_save, kn_nl_backend_load};
