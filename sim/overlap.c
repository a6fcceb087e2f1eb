/* Initial interpenetration: the contact detection of the step run once on the state at t = 0,
 * before any step, so that a scene whose bodies start inside each other says so. SAP turns an
 * initial overlap into a large repulsive force (k * depth: 30 mm at 1e6 N/m is 30 kN before
 * dissipation), which throws bodies apart or presses robots against each other for the whole run.
 *
 * The same detection as the step (sim/candidates.c, without the reach), so the same filter: the
 * rigid pairs of the world's collision scene (same-body, parent-child, world-fixed, contact.exclude
 * and filter-group pairs never appear), the FEM contacts (free surface vertices in rigid colliders
 * and other FEM bodies, rigid feature points in FEM surfaces) and MPM particles in colliders. A
 * pair warns when its deepest point lies deeper than contact.margin (plus OVERLAP_TOLERANCE for
 * the rounding of poses written in scenes): one warning per pair of names, colliders with the same
 * name (several shapes on one link) counted as one. */
#include <stdlib.h>
#include <string.h>

#include "sim/candidates.h"

/* [m] a pair touching within this depth is resting, not interpenetrating: poses in scenes carry
 * 6 decimals (1e-6 m, 1e-6 rad on links under 1 m), far below it */
#define OVERLAP_TOLERANCE 1e-5

typedef struct {
  const char *a, *b; /* names, owned by the world */
  double depth;      /* deepest point: -phi [m] */
} overlap;

typedef struct {
  overlap* o;
  int n, cap;
} overlap_list;

// (pair of names, depth) => the pair's entry kept at its deepest point; KN_ERR_NOMEM
static kn_status overlap_add(overlap_list* L, const char* a, const char* b, double depth, kn_error* err) {
  for (int i = 0; i < L->n; i++) {
    overlap* o = &L->o[i];
    if ((strcmp(o->a, a) == 0 && strcmp(o->b, b) == 0) || (strcmp(o->a, b) == 0 && strcmp(o->b, a) == 0)) {
      if (depth > o->depth) o->depth = depth;
      return KN_OK;
    }
  }
  if (L->n == L->cap) {
    int cap = L->cap ? 2 * L->cap : 16;
    overlap* o = realloc(L->o, (size_t)cap * sizeof *o);
    if (!o) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
    L->o = o, L->cap = cap;
  }
  L->o[L->n++] = (overlap){a, b, depth};
  return KN_OK;
}

// (candidate i) => the names of its two sides (a collider, FEM body or MPM body)
static void side_names(const kn_world* w, const kn_sim_candidates* c, int i, const char** a, const char** b) {
  const kn_contact_candidate* cc = &c->c[i];
  if (cc->origin == KN_CANDIDATE_PARTICLE_RIGID) {
    *a = w->colliders[cc->b.body].name, *b = w->mpms[c->mpm[cc->source].mpm].name;
  } else if (cc->origin == KN_CANDIDATE_RIGID) {
    *a = w->colliders[cc->a.body].name, *b = w->colliders[cc->b.body].name;
  } else {
    *a = cc->a.kind == KN_SIDE_SURFACE ? w->fems[cc->a.body].name : w->colliders[cc->a.body].name;
    *b = w->fems[cc->b.body].name;
  }
}

// (world at t = 0, X_WG per collider, threshold depth) => every pair with a candidate deeper than it
static kn_status candidate_pairs(kn_world* w, const kn_pose* X_WG, double deeper, overlap_list* L, kn_error* err) {
  kn_sim_candidates c;
  kn_status st = kn_sim_candidates_create(w, &c, err);
  if (!st) st = kn_sim_detect_rigid(w, X_WG, NULL, &c, err);
  if (!st) st = kn_sim_detect_deformables(w, X_WG, &c, err);
  for (int i = 0; !st && i < c.n; i++) {
    if (!(-c.c[i].phi > deeper)) continue;
    const char *a, *b;
    side_names(w, &c, i, &a, &b);
    st = overlap_add(L, a, b, -c.c[i].phi, err);
  }
  kn_sim_candidates_free(&c);
  return st;
}

kn_status kn_sim_initial_overlaps(kn_world* w, kn_error* err) {
  if (w->scene->backend == KN_BACKEND_NONE || w->ncollider == 0) return KN_OK; /* no contact at all */
  for (int t = 0; t < w->ntree; t++)
    kn_mb_kinematics(w->trees[t].robot->model, w->trees[t].q, NULL, w->trees[t].data);
  kn_pose* X_WG = kn_calloc((size_t)w->ncollider, sizeof *X_WG);
  if (!X_WG) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", w->scene->path);
  for (int i = 0; i < w->ncollider; i++) kn_sim_collider_pose(w, i, &X_WG[i]);
  const double margin = w->scene->margin, deeper = margin + OVERLAP_TOLERANCE;
  overlap_list L = {0};
  kn_status st = candidate_pairs(w, X_WG, deeper, &L, err);
  for (int i = 0; !st && i < L.n; i++) {
    double mm = 1e3 * L.o[i].depth;
    kn_diag_add(&w->warnings, "%s and %s start interpenetrating by %.*f mm (deeper than the contact margin %g mm)",
                L.o[i].a, L.o[i].b, mm >= 0.1 ? 1 : 3, mm, 1e3 * margin);
  }
  free(L.o);
  free(X_WG);
  if (st) return kn_error_prefix(err, "%s: initial contact detection: ", w->scene->path);
  return KN_OK;
}
