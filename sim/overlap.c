/* Initial interpenetration: the contact detection of the step run once on the state at t = 0,
 * before any step, so that a scene whose bodies start inside each other says so. SAP turns an
 * initial overlap into a large repulsive force (k * depth: 30 mm at 1e6 N/m is 30 kN before
 * dissipation), which throws bodies apart or presses robots against each other for the whole run.
 *
 * The same detection as sim/backend_sap.c, so the same filter: kn_collision_detect over the
 * world's collision scene (same-body, parent-child, world-fixed, contact.exclude and filter-group
 * pairs never appear), kn_fem_detect for FEM bodies (free surface vertices in rigid colliders and
 * other FEM bodies, rigid feature points in FEM surfaces) and the MPM particle test against every
 * collider. A pair warns when its deepest point lies deeper than contact.margin (plus
 * OVERLAP_TOLERANCE for the rounding of poses written in scenes): one warning per pair of names,
 * colliders with the same name (several shapes on one link) counted as one. */
#include <stdlib.h>
#include <string.h>

#include "sim/fem_contact.h"
#include "sim/sim_internal.h"

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

// (world at t = 0, X_WG per collider, threshold depth) => rigid-rigid pairs deeper than it
static kn_status rigid_pairs(kn_world* w, const kn_pose* X_WG, double deeper, overlap_list* L, kn_error* err) {
  if (!w->collision || w->ncollider < 2) return KN_OK;
  const kn_contact_point* pts = NULL;
  int npts = 0;
  kn_status st = kn_collision_detect(w->collision, X_WG, w->scene->margin, &pts, &npts, err);
  for (int c = 0; !st && c < npts; c++) {
    const kn_contact_point* cp = &pts[c];
    if (w->colliders[cp->a].c.clique < 0 && w->colliders[cp->b].c.clique < 0) continue; /* as the step */
    if (-cp->phi > deeper)
      st = overlap_add(L, w->colliders[cp->a].name, w->colliders[cp->b].name, -cp->phi, err);
  }
  return st;
}

// (world at t = 0) => FEM pairs (vertex in collider, vertex in FEM body, rigid point in FEM) deeper than it
static kn_status fem_pairs(kn_world* w, const kn_pose* X_WG, double deeper, overlap_list* L, kn_error* err) {
  if (w->nfem == 0) return KN_OK;
  kn_fem_detector* d = NULL;
  kn_status st = kn_fem_detector_create(w, &d, err);
  if (!st) st = kn_fem_detect(d, w, X_WG, err);
  for (int c = 0; !st && c < d->nc; c++) {
    const kn_fem_contact* fc = &d->c[c];
    if (!(-fc->phi > deeper)) continue;
    const char* a = fc->a.fem >= 0 ? w->fems[fc->a.fem].name : w->colliders[fc->a.collider].name;
    st = overlap_add(L, a, w->fems[fc->b.fem].name, -fc->phi, err);
  }
  kn_fem_detector_free(d);
  return st;
}

// (world at t = 0) => MPM particles inside colliders deeper than it (the step's test, sim/backend_sap.c)
static kn_status mpm_pairs(kn_world* w, const kn_pose* X_WG, double deeper, overlap_list* L, kn_error* err) {
  if (!w->collision) return KN_OK;
  const double margin = w->scene->margin;
  for (int i = 0; i < w->nmpm; i++) {
    const kn_mpm_body* b = w->mpms[i].body;
    double blo[3], bhi[3];
    kn_sim_mpm_aabb(b, blo, bhi);
    for (int k = 0; k < w->ncollider; k++) {
      kn_sim_mpm_bound bd;
      if (!kn_sim_mpm_bound_init(w, k, &X_WG[k], margin, blo, bhi, &bd)) continue;
      double deepest = 0;
      for (int p = 0; p < b->np; p++) {
        if (!kn_sim_mpm_bound_test(&bd, b->x + 3 * p)) continue;
        double g[3];
        double phi = kn_collider_signed_distance(w->collision, k, &X_WG[k], b->x + 3 * p, g);
        if (phi < margin && -phi > deepest) deepest = -phi;
      }
      if (deepest > deeper) {
        kn_status st = overlap_add(L, w->colliders[k].name, w->mpms[i].name, deepest, err);
        if (st) return st;
      }
    }
  }
  return KN_OK;
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
  kn_status st = rigid_pairs(w, X_WG, deeper, &L, err);
  if (!st) st = fem_pairs(w, X_WG, deeper, &L, err);
  if (!st) st = mpm_pairs(w, X_WG, deeper, &L, err);
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
