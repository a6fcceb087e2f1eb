/* Contact detection across body kinds, one list of candidates (contact/contact.h): the rigid
 * pairs of kn_collision_detect_reach (speculative, contact.margin + each collider's reach), the
 * FEM contacts of sim/fem_contact.c, and MPM particles inside rigid colliders, in that order. The
 * candidates name their sides as colliders, FEM surface points or particles; the backends turn
 * those into cliques' point maps (coupling/coupling.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/candidates.h"
#include "sim/fem_contact.h"

struct kn_sim_candidates_state {
  kn_fem_detector* fem;
  kn_sim_mpm_contact* mpm;
  int mcap;
  int cap;
};

kn_status kn_sim_candidates_create(const kn_world* w, kn_sim_candidates* c, kn_error* err) {
  memset(c, 0, sizeof *c);
  c->state = kn_calloc(1, sizeof *c->state);
  if (!c->state) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  if (w->nfem > 0) return kn_fem_detector_create(w, &c->state->fem, err);
  return KN_OK;
}

void kn_sim_candidates_free(kn_sim_candidates* c) {
  if (!c->state) return;
  kn_fem_detector_free(c->state->fem);
  free(c->state->mpm);
  free(c->state);
  free(c->c);
  memset(c, 0, sizeof *c);
}

static kn_contact_candidate* push(kn_sim_candidates* c, kn_error* err) {
  if (c->n == c->state->cap) {
    int cap = c->state->cap ? 2 * c->state->cap : 256;
    kn_contact_candidate* x = realloc(c->c, (size_t)cap * sizeof *x);
    if (!x) return kn_fail(err, KN_ERR_NOMEM, "out of memory"), NULL;
    c->c = x, c->state->cap = cap;
  }
  kn_contact_candidate* x = &c->c[c->n++];
  memset(x, 0, sizeof *x);
  return x;
}

static kn_contact_side collider_side(int k) { return (kn_contact_side){KN_SIDE_COLLIDER, k, 0, {0, 0, 0}, {0, 0, 0}}; }

static kn_contact_side fem_side(const kn_fem_side* s) {
  if (s->fem < 0) return collider_side(s->collider);
  kn_contact_side o = {KN_SIDE_SURFACE, s->fem, s->n, {0, 0, 0}, {0, 0, 0}};
  for (int k = 0; k < s->n; k++) o.point[k] = s->vert[k], o.w[k] = s->wt[k];
  return o;
}

static kn_status rigid(const kn_world* w, const kn_pose* X_WG, const double* reach, kn_sim_candidates* c,
                       kn_error* err) {
  c->pts = NULL, c->npts = 0;
  if (!w->collision) return KN_OK;
  kn_status st = kn_collision_detect_reach(w->collision, X_WG, w->scene->margin, reach, &c->pts, &c->npts, err);
  if (st) return kn_error_prefix(err, "contact detection: ");
  for (int i = 0; i < c->npts; i++) {
    const kn_contact_point* cp = &c->pts[i];
    /* a pair of world-fixed colliders never moves */
    if (w->colliders[cp->a].c.clique < 0 && w->colliders[cp->b].c.clique < 0) continue;
    kn_contact_candidate* x = push(c, err);
    if (!x) return KN_ERR_NOMEM;
    x->a = collider_side(cp->a), x->b = collider_side(cp->b);
    memcpy(x->p, cp->p, sizeof x->p);
    memcpy(x->R_WC, cp->R_WC, sizeof x->R_WC);
    x->phi = cp->phi, x->material = cp->material;
    x->origin = KN_CANDIDATE_RIGID, x->source = i;
  }
  return KN_OK;
}

static kn_status fem(const kn_world* w, const kn_pose* X_WG, kn_sim_candidates* c, kn_error* err) {
  kn_fem_detector* d = c->state->fem;
  kn_status st = kn_fem_detect(d, w, X_WG, err);
  if (st) return kn_error_prefix(err, "contact detection (deformables): ");
  c->fem = d->c;
  for (int i = 0; i < d->nc; i++) {
    const kn_fem_contact* fc = &d->c[i];
    kn_contact_candidate* x = push(c, err);
    if (!x) return KN_ERR_NOMEM;
    x->a = fem_side(&fc->a), x->b = fem_side(&fc->b);
    memcpy(x->p, fc->p, sizeof x->p);
    memcpy(x->R_WC, fc->R, sizeof x->R_WC);
    x->phi = fc->phi, x->material = fc->mat;
    x->origin = fc->kind == KN_FEM_VERTEX_RIGID ? KN_CANDIDATE_FEM_VERTEX_RIGID
                : fc->kind == KN_FEM_VERTEX_FEM ? KN_CANDIDATE_FEM_VERTEX_FEM
                                                : KN_CANDIDATE_FEM_RIGID_FACE;
    x->source = i;
  }
  return KN_OK;
}

// (unit normal n) => R_WC with columns t1 = n x the least-aligned axis (normalized), t2 = n x t1, n
static void frame_of(const double n[3], double R[9]) {
  double t1[3], t2[3];
  int ax = fabs(n[0]) <= fabs(n[1]) && fabs(n[0]) <= fabs(n[2]) ? 0 : fabs(n[1]) <= fabs(n[2]) ? 1 : 2;
  double e[3] = {0, 0, 0};
  e[ax] = 1;
  t1[0] = n[1] * e[2] - n[2] * e[1], t1[1] = n[2] * e[0] - n[0] * e[2], t1[2] = n[0] * e[1] - n[1] * e[0];
  double tn = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
  for (int a = 0; a < 3; a++) t1[a] /= tn;
  t2[0] = n[1] * t1[2] - n[2] * t1[1], t2[1] = n[2] * t1[0] - n[0] * t1[2], t2[2] = n[0] * t1[1] - n[1] * t1[0];
  for (int a = 0; a < 3; a++) R[3 * a] = t1[a], R[3 * a + 1] = t2[a], R[3 * a + 2] = n[a];
}

/* particle p of body i against collider k when phi = kn_collider_signed_distance(x_p) < margin;
 * A = the particle, B = the collider, normal -grad phi (into the rigid body, MPM digest 7.4) */
static kn_status particles(const kn_world* w, const kn_pose* X_WG, kn_sim_candidates* c, kn_error* err) {
  kn_sim_candidates_state* s = c->state;
  c->nmpm = 0;
  if (!w->collision) return KN_OK;
  const double margin = w->scene->margin;
  for (int i = 0; i < w->nmpm; i++) {
    const kn_mpm_body* b = w->mpms[i].body;
    double blo[3], bhi[3]; /* broad phase (mpm_world.c): skips only particles with phi >= margin */
    kn_sim_mpm_aabb(b, blo, bhi);
    for (int k = 0; k < w->ncollider; k++) {
      const kn_world_collider* wc = &w->colliders[k];
      kn_contact_material mat = kn_contact_material_combine(&wc->soft, &w->mpms[i].material);
      kn_sim_mpm_bound bd;
      if (!kn_sim_mpm_bound_init(w, k, &X_WG[k], margin, blo, bhi, &bd)) continue;
      for (int p = 0; p < b->np; p++) {
        double g[3];
        if (!kn_sim_mpm_bound_test(&bd, b->x + 3 * p)) continue;
        double phi = kn_collider_signed_distance(w->collision, k, &X_WG[k], b->x + 3 * p, g);
        if (!(phi < margin)) continue;
        if (c->nmpm == s->mcap) {
          int cap = s->mcap ? 2 * s->mcap : 256;
          kn_sim_mpm_contact* m = realloc(s->mpm, (size_t)cap * sizeof *m);
          if (!m) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
          s->mpm = m, s->mcap = cap;
        }
        kn_sim_mpm_contact* m = &s->mpm[c->nmpm++];
        kn_contact_candidate* x = push(c, err);
        if (!x) return KN_ERR_NOMEM;
        m->mpm = i, m->local = p;
        x->a = (kn_contact_side){KN_SIDE_PARTICLE, w->mpms[i].grid, 1, {w->mpms[i].first + p, 0, 0}, {1, 0, 0}};
        x->b = collider_side(k);
        x->phi = phi, x->material = mat;
        x->origin = KN_CANDIDATE_PARTICLE_RIGID, x->source = c->nmpm - 1;
        memcpy(x->p, b->x + 3 * p, sizeof x->p);
        double n[3] = {-g[0], -g[1], -g[2]};
        double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int a = 0; a < 3; a++) n[a] /= nn;
        frame_of(n, x->R_WC);
      }
    }
  }
  c->mpm = s->mpm;
  return KN_OK;
}

kn_status kn_sim_detect_rigid(const kn_world* w, const kn_pose* X_WG, const double* reach, kn_sim_candidates* c,
                              kn_error* err) {
  c->n = 0, c->nfem = 0, c->nmpm = 0;
  kn_status st = rigid(w, X_WG, reach, c, err);
  c->first_fem = c->n;
  return st;
}

kn_status kn_sim_detect_deformables(const kn_world* w, const kn_pose* X_WG, kn_sim_candidates* c, kn_error* err) {
  kn_status st = KN_OK;
  c->n = c->first_fem;
  if (w->nfem > 0) st = fem(w, X_WG, c, err);
  c->nfem = c->n - c->first_fem;
  c->first_mpm = c->n;
  if (!st && w->nmpm > 0) {
    st = particles(w, X_WG, c, err);
    if (st) kn_error_prefix(err, "contact detection (MPM): ");
  }
  return st;
}

void kn_sim_candidate_describe(const kn_world* w, const kn_sim_candidates* c, int i, char* buf, size_t cap) {
  const kn_contact_candidate* cc = &c->c[i];
  if (cc->origin == KN_CANDIDATE_PARTICLE_RIGID) {
    const kn_sim_mpm_contact* m = &c->mpm[cc->source];
    snprintf(buf, cap, "contact of MPM body '%s' particle %d with '%s'", w->mpms[m->mpm].name, m->local,
             w->colliders[cc->b.body].name);
  } else if (cc->origin == KN_CANDIDATE_RIGID) {
    snprintf(buf, cap, "contact between '%s' and '%s'", w->colliders[cc->a.body].name, w->colliders[cc->b.body].name);
  } else {
    snprintf(buf, cap, "contact of deformable '%s' vertex %d with '%s'", w->fems[cc->b.body].name, cc->b.point[0],
             cc->a.kind == KN_SIDE_COLLIDER ? w->colliders[cc->a.body].name : w->fems[cc->a.body].name);
  }
}
