/* The penalty backend's formulation (backend_nonlinear.h; Ding & Schroeder,
 * penalty-coulomb-friction.md): its scene keys (contact.penalty), the anchored springs of
 * penalty/term.c over each candidate's points, and the anchors kept from step to step in the
 * frame of the body that carries them, so that a sticking contact never creeps (§3.6, §3.10).
 *
 * Which side's point is the spring's "particle" and which carries the anchor, and how a contact is
 * found again next step, is the stiction anchors' keying (sim/stiction.h), not another one:
 *   rigid-rigid (kn_stiction): A's anchor pa in A's geometry frame, B's material point pb in B's;
 *     next step's contact of the same collider pair nearest to B's point (within 1 mm);
 *   an FEM vertex in a rigid collider (kn_stiction_keyed, key (body, collider, vertex)): the vertex
 *     is B's point, the anchor on the collider A;
 *   an MPM particle in a rigid collider (key (grid, collider, particle)): the particle is A's point,
 *     the anchor on the collider B.
 * The anchor X of the step is the tangential part of (A's point - B's point) at its start. At the end
 * of a successful step an active contact whose relaxation slid keeps the anchor moved by the slide
 * Y - X (a sticking one keeps it untouched), an inactive one is dropped (§3.10). A rigid feature
 * point in an FEM face and an FEM vertex at another FEM body's face keep their anchor as a point of
 * the face (penalty_faces.c) and walk it over that body's deformed boundary (penalty_fem_meshes.c,
 * penalty/fem_walk.c; side +-2), committed as the face the walk ended on. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "penalty/penalty.h"
#include "sim/backend_nonlinear.h"
#include "sim/candidates.h"
#include "sim/state_parts.h"
#include "sim/penalty_cpf.h"
#include "sim/penalty_faces.h"
#include "sim/penalty_fem_meshes.h"
#include "sim/penalty_meshes.h"
#include "sim/mesh_surfaces.h"
#include "sim/penalty_stiffness.h"
#include "sim/stiction.h"

typedef struct {
  kn_penalty_term term;
  kn_penalty_contact* pc;
  double* gamma;            /* per candidate (0, 0, active): the anchors' commit */
  int pccap;
  kn_pose* X_WG;            /* per collider, at the step start then at its end */
  int ncollider;
  kn_world* w;              /* for its FEM faces' anchors in saved states */
  kn_stiction rigid;
  kn_stiction_keyed fem, mpm;
  kn_penalty_faces faces;
  kn_penalty_cpf* cpf;      /* contact.penalty.continuous (not with ablation dpf): the mesh pairs */
  kn_nl_term parts[2];      /* the mixed mode's term: the springs (candidates cpf does not cover), the pairs */
  int cpf_nomem;            /* the re-check after a solve ran out of memory: the step fails */
  int lag_lambda;           /* contact.penalty.lag_lambda */
  kn_penalty_meshes meshes; /* the mesh colliders' walkable meshes */
  kn_penalty_fem_meshes fems; /* the FEM boundaries' walkable meshes */
  kn_penalty_stiffness stiff; /* the bodies' spring stiffness: each contact's k (penalty_stiffness.h) */
  signed char* side;        /* per candidate: 0 the plane; 1 anchored on A's mesh; -1 on B's mesh,
                               the spring's particle then A (pc's a, b and n swapped); 2, -2 the
                               same on an FEM boundary */
  int* same;                /* per candidate the pairs cover: the step's candidates between its two bodies */
  struct body_pair* bp;     /* scratch of count_same */
  kn_mesh_arcs* arcs;       /* the rigid spring ends' paths' curvature (spring_arcs) */
  double *vstart, *ptoff;   /* the cliques' v_n; per material point its arc offset */
  int vcap, offcap;
} penalty_state;

/* a candidate's two bodies, either way round (lo <= hi: the sides' (kind, body) keys) */
struct body_pair {
  uint64_t lo, hi;
  int i;
};

static void penalty_destroy(void* p) {
  penalty_state* s = p;
  if (!s) return;
  free(s->pc), free(s->gamma), free(s->X_WG), free(s->term.Y_ref), free(s->term.active_ref), free(s->term.tri_ref), free(s->side);
  free(s->same), free(s->bp), free(s->term.piece);
  kn_penalty_term_free(&s->term);
  kn_penalty_meshes_free(&s->meshes);
  kn_penalty_fem_meshes_free(&s->fems);
  kn_stiction_free(&s->rigid);
  kn_stiction_keyed_free(&s->fem);
  kn_stiction_keyed_free(&s->mpm);
  kn_penalty_faces_free(&s->faces);
  kn_penalty_cpf_free(s->cpf);
  kn_penalty_stiffness_free(&s->stiff);
  kn_mesh_arcs_free(s->arcs), free(s->vstart), free(s->ptoff);
  free(s);
}

/* contact.penalty's keys => k and the Newton tolerance (errors name the key) */
static kn_status penalty_params(const kn_scene* sc, penalty_state* s, kn_nl_options* opt, kn_error* err) {
  const kn_scene_penalty* k = sc->doc->contact ? sc->doc->contact->penalty : NULL;
  int continuous = k && k->continuous && *k->continuous;
  /* unset k: 1e5 N/m, the discrete springs and the continuous mode's pairs alike (scene.h) */
  s->term.k = k && k->stiffness ? *k->stiffness : 1e5;
  double tol = k && k->tolerance ? *k->tolerance : 1e-8;
  if (!isfinite(s->term.k) || !(s->term.k > 0))
    return kn_scene_fail(sc, err, KN_ERR_INVALID, "contact.penalty.stiffness", "%g: expected a finite number > 0 [N/m]",
                         s->term.k);
  kn_status st = kn_penalty_stiffness_build(s->w, s->term.k, &s->stiff, err);
  if (st) return st;
  if (!isfinite(tol) || !(tol > 0))
    return kn_scene_fail(sc, err, KN_ERR_INVALID, "contact.penalty.tolerance", "%g: expected a finite number > 0 [m/s]",
                         tol);
  double eps_v = k && k->epsilon_v ? *k->epsilon_v : 3e-3; /* scene.h: the regression grasps' Newton */
  if (!isfinite(eps_v) || !(eps_v > 0))
    return kn_scene_fail(sc, err, KN_ERR_INVALID, "contact.penalty.epsilon_v", "%g: expected a finite number > 0 [m/s]",
                         eps_v);
  if (k && k->epsilon_v && !continuous)
    return kn_scene_fail(sc, err, KN_ERR_INVALID, "contact.penalty.epsilon_v",
                         "applies only with contact.penalty.continuous: true (the springs' friction has no smoothing)");
  int anchored = !(k && k->anchored && !*k->anchored);
  if (k && k->anchored && !continuous)
    return kn_scene_fail(sc, err, KN_ERR_INVALID, "contact.penalty.anchored",
                         "applies only with contact.penalty.continuous: true (the springs are always anchored)");
  if (k && k->epsilon_v && anchored)
    return kn_scene_fail(sc, err, KN_ERR_INVALID, "contact.penalty.epsilon_v",
                         "applies only with contact.penalty.anchored: false (the anchored pairs' friction has no "
                         "smoothing)");
  if (k && k->lag_lambda && !continuous)
    return kn_scene_fail(sc, err, KN_ERR_INVALID, "contact.penalty.lag_lambda",
                         "applies only with contact.penalty.continuous: true");
  if (k && k->ablation && !continuous)
    return kn_scene_fail(sc, err, KN_ERR_INVALID, "contact.penalty.ablation",
                         "applies only with contact.penalty.continuous: true");
  opt->abs_tol = tol;
  int ablation = k && k->ablation ? *k->ablation : KN_SCENE_CPF;
  /* dpf: the discrete closest-point springs at the step's end, the backend's own term */
  if (!continuous || ablation == KN_SCENE_DPF) return KN_OK;
  kn_cpf_mode mode = ablation == KN_SCENE_CPF_EXACT ? KN_CPF_EXACT
                     : ablation == KN_SCENE_DPF_CCD ? KN_CPF_DPF_CCD
                                                    : KN_CPF_LK;
  s->lag_lambda = k->lag_lambda && *k->lag_lambda;
  return kn_penalty_cpf_create(s->w, &s->stiff, eps_v, mode, s->lag_lambda, anchored, &s->cpf, err);
}

static kn_status penalty_create(kn_world* w, void** out, kn_nl_options* opt, double* extra_margin, kn_error* err) {
  const kn_scene* sc = w->scene;
  penalty_state* s = kn_calloc(1, sizeof *s);
  if (!s || !(s->X_WG = kn_calloc((size_t)w->ncollider + 1, sizeof *s->X_WG)) || !(s->arcs = kn_mesh_arcs_create(w))) {
    penalty_destroy(s);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", sc->path);
  }
  s->ncollider = w->ncollider, s->w = w;
  kn_status st = penalty_params(sc, s, opt, err);
  if (!st) st = kn_penalty_meshes_build(w, &s->meshes, err);
  if (!st) st = kn_penalty_fem_meshes_build(w, &s->fems, err);
  if (st) {
    penalty_destroy(s);
    return st;
  }
  *extra_margin = 0; /* a spring acts only while its point is inside */
  *out = s;
  return KN_OK;
}

// the tangential part of d (unit n) into X
static void tangential(const double d[3], const double n[3], double X[3]) {
  double dn = d[0] * n[0] + d[1] * n[1] + d[2] * n[2];
  for (int k = 0; k < 3; k++) X[k] = d[k] - dn * n[k];
}

// (world point x, pose P) => x in P's frame
static void to_frame(const kn_pose* P, const double x[3], double y[3]) {
  double r[3] = {x[0] - P->p[0], x[1] - P->p[1], x[2] - P->p[2]};
  for (int k = 0; k < 3; k++) y[k] = P->R[k] * r[0] + P->R[3 + k] * r[1] + P->R[6 + k] * r[2];
}

// the spring turned: the particle is A's point, the anchor on B (n from B into A)
static void swap_sides(kn_penalty_contact* pc) {
  int a = pc->a;
  pc->a = pc->b, pc->b = a;
  for (int k = 0; k < 3; k++) pc->n[k] = -pc->n[k];
}

// a candidate's point's position at the step start (its map's x0; the contact point when fixed)
static const double* point_x0(const kn_nl_step* st, int p, const kn_contact_candidate* cc) {
  return p >= 0 ? st->points->p[p].x0 : cc->p;
}

/* FEM candidate j's face anchor (kn_penalty_faces_start's) as a point of its body's walkable
 * boundary, the particle at xp: pc walks it (0: no surface triangle has its vertices, the plane) */
static int fem_walk_start(penalty_state* s, int j, const double xp[3], kn_penalty_contact* pc) {
  const kn_penalty_face* a = &s->faces.cur[j];
  if (!kn_penalty_fem_meshes_point(&s->fems, a->fem, a->vert, a->w, &pc->Xm)) return 0;
  pc->fem = &s->fems.fem[a->fem];
  memcpy(pc->z0, xp, sizeof pc->z0);
  memset(pc->X, 0, sizeof pc->X);
  return 1;
}

/* a rigid walk's particle: the material point xm of candidate cc's A side (its collider), as a point of
 * its own in st->points (the detection's point, up to KN_STICTION_MATCH_RADIUS away, turns with the
 * body differently) => pc->b and pc->z0 (-1 with z0 = xm: a collider fixed in the world) */
static void rigid_particle(const kn_nl_step* st, const kn_contact_candidate* cc, const double xm[3],
                           kn_penalty_contact* pc) {
  kn_world* w = st->w;
  int c = kn_sim_side_clique(w, &cc->a);
  memcpy(pc->z0, xm, sizeof pc->z0);
  pc->b = -1;
  if (c < 0) return;
  kn_clique* cq = &w->cliques[c];
  kn_point_map m;
  cq->ops->point_map(cq->self, w->colliders[cc->a.body].body, xm, w->scene->time_step, &m); /* as side_point's */
  pc->b = kn_nl_points_add(st->points, &m, st->offset[c], cq->ops->ndof(cq->self), NULL);
  if (pc->b >= 0) memcpy(pc->z0, st->points->p[pc->b].x0, sizeof pc->z0); /* nomem: begin fails */
}

/* candidate i's anchor X at the step start (its record in the stiction tables for this step) */
static void anchor_start(penalty_state* s, const kn_nl_step* st, int i, kn_penalty_contact* pc) {
  const kn_sim_candidates* c = st->cand;
  const kn_contact_candidate* cc = &c->c[i];
  double vh[2], d[3] = {0, 0, 0}, xa[3], xb[3];
  s->side[i] = 0, pc->mesh = NULL, pc->fem = NULL;
  if (cc->origin == KN_CANDIDATE_RIGID) {
    kn_stiction_bias(&s->rigid, i, &c->pts[cc->source], s->X_WG, st->dt, vh);
    const kn_stiction_anchor* an = &s->rigid.cur[i];
    const kn_penalty_mesh *ma = kn_penalty_meshes_get(&s->meshes, an->a), *mb = kn_penalty_meshes_get(&s->meshes, an->b);
    if (ma || mb) { /* the anchor on the mesh (A's when both are), the particle the other side's point */
      double xp[3];
      kn_pose_apply(&s->X_WG[ma ? an->b : an->a], ma ? an->pb : an->pa, xp);
      if (!ma) swap_sides(pc);
      s->side[i] = ma ? 1 : -1;
      kn_penalty_meshes_start(ma ? ma : mb, &s->X_WG[ma ? an->a : an->b], ma ? an->pa : an->pb, xp, pc);
      return;
    }
    kn_pose_apply(&s->X_WG[an->a], an->pa, xa);
    kn_pose_apply(&s->X_WG[an->b], an->pb, xb);
    for (int k = 0; k < 3; k++) d[k] = xa[k] - xb[k];
  } else if (cc->origin == KN_CANDIDATE_PARTICLE_RIGID) {
    int g = cc->a.body, kb = cc->b.body, p = cc->a.point[0];
    const double* x = point_x0(st, st->pa[i], cc);
    kn_stiction_keyed* t = &s->mpm;
    int j = i - c->first_mpm;
    kn_stiction_keyed_bias(t, j, kn_stiction_key(g, kb, p), x, &s->X_WG[kb], 0, cc->R_WC, cc->material.mu, st->dt, vh);
    const kn_penalty_mesh* m = kn_penalty_meshes_get(&s->meshes, kb);
    if (m) { /* the particle is A: the spring turned */
      swap_sides(pc);
      s->side[i] = -1;
      kn_penalty_meshes_start(m, &s->X_WG[kb], t->cur[j].p, x, pc);
      return;
    }
    kn_pose_apply(&s->X_WG[kb], t->cur[j].p, xb);
    for (int k = 0; k < 3; k++) d[k] = x[k] - xb[k];
  } else {
    int keyed = cc->origin == KN_CANDIDATE_FEM_VERTEX_RIGID, ka = cc->a.body, j = i - c->first_fem;
    const double* x = point_x0(st, st->pb[i], cc);
    uint64_t key = keyed ? kn_stiction_key(cc->b.body, ka, cc->b.point[0]) : 0;
    kn_stiction_keyed_bias(&s->fem, j, key, x, keyed ? &s->X_WG[ka] : NULL, 1, cc->R_WC, cc->material.mu, st->dt, vh);
    const kn_penalty_mesh* m = keyed ? kn_penalty_meshes_get(&s->meshes, ka) : NULL;
    if (m) { /* the vertex is B, the anchor on A's mesh */
      s->faces.cur[j].kind = -1, s->side[i] = 1;
      kn_penalty_meshes_start(m, &s->X_WG[ka], s->fem.cur[j].p, x, pc);
      return;
    }
    if (keyed) {
      kn_pose_apply(&s->X_WG[ka], s->fem.cur[j].p, xa);
      for (int k = 0; k < 3; k++) d[k] = xa[k] - x[k];
      s->faces.cur[j].kind = -1;
    } else { /* the particle: the rigid point A, or B's vertex */
      int rigid = cc->origin == KN_CANDIDATE_FEM_RIGID_FACE;
      const double* xp = rigid ? point_x0(st, st->pa[i], cc) : x;
      if (kn_penalty_faces_start(&s->faces, st->w, s->X_WG, cc, j, xp, d)) {
        /* the walk's particle: a rigid side's material point, kept in its collider's frame, not the
         * detection's point (a sphere turning about its centre keeps that in place, so the sticking
         * springs let it spin, resisting only within each step: a creep) */
        double xm[3];
        memcpy(xm, xp, sizeof xm);
        if (rigid) kn_pose_apply(&s->X_WG[s->faces.cur[j].body], s->faces.cur[j].pa, xm);
        if (fem_walk_start(s, j, xm, pc)) {
          if (rigid) swap_sides(pc), rigid_particle(st, cc, xm, pc); /* the particle, the anchor in B's face */
          s->side[i] = rigid ? -2 : 2;
          return;
        }
      }
    }
  }
  tangential(d, pc->n, pc->X);
}

/* the mixed mode: the springs' term and the pairs' term summed (both root-finding: E untouched); the
 * lagged passes freeze the springs' relaxation only (the pairs' force is no gradient: no lag) */
static kn_status mixed_eval(void* self, const double* v, double* E, double* r, kn_nl_triplets* T, kn_nl_triplets* S,
                            kn_error* err) {
  kn_nl_term* p = self;
  kn_status e = p[0].eval(p[0].self, v, E, r, T, S, err);
  return e ? e : p[1].eval(p[1].self, v, E, r, T, S, err);
}
static void mixed_lag(void* self, const double* v, int on) {
  kn_nl_term* p = self;
  p[0].lag(p[0].self, v, on);
}
/* the solver's active-set steps: the springs' pieces (the pairs keep theirs), so that a mixed run
 * whose contacts are all springs is the discrete run bit for bit */
static void mixed_pieces(void* self, const double* v, int on) {
  kn_nl_term* p = self;
  p[0].pieces(p[0].self, v, on);
}

static uint64_t side_key(const kn_contact_side* sd) { return (uint64_t)sd->kind << 32 | (uint32_t)sd->body; }
static int body_pair_cmp(const void* pa, const void* pb) {
  const struct body_pair *x = pa, *y = pb;
  return x->lo != y->lo ? (x->lo < y->lo ? -1 : 1) : x->hi != y->hi ? (x->hi < y->hi ? -1 : 1) : 0;
}

/* s->same[i]: how many of the step's candidates join candidate i's two bodies, either way round (by
 * sorting the candidates on their bodies: O(n log n) once per step) */
static void count_same(penalty_state* s, const kn_sim_candidates* c) {
  for (int i = 0; i < c->n; i++) {
    uint64_t a = side_key(&c->c[i].a), b = side_key(&c->c[i].b);
    s->bp[i] = (struct body_pair){a < b ? a : b, a < b ? b : a, i};
  }
  if (c->n) qsort(s->bp, (size_t)c->n, sizeof *s->bp, body_pair_cmp);
  for (int i = 0, j; i < c->n; i = j) {
    for (j = i + 1; j < c->n && !body_pair_cmp(&s->bp[i], &s->bp[j]);) j++;
    for (int k = i; k < j; k++) s->same[s->bp[k].i] = j - i;
  }
}

// *p (n doubles, *cap of them) at least n long => 0 out of memory
static int reserve(double** p, int* cap, int n) {
  if (n <= *cap) return 1;
  double* q = realloc(*p, ((size_t)n + 1) * sizeof *q);
  if (!q) return 0;
  *p = q, *cap = n;
  return 1;
}

/* the springs' ends on rigid bodies bent as their bodies move (mesh_arcs.c, as the continuous
 * mode's pairs): a collider side's point's x1 = x0 + dt J v is the tangent of its arc, dt^2/2 times
 * its centripetal acceleration off where the integrator puts it, an error an anchored spring reads
 * as stretch at every step. A point on a rounded surface takes its centre of curvature's offset
 * (kn_mesh_arcs_core: the detection finds the ball's lowest point again, no material point that
 * rolls up and off the slope). Each contact's Z gets arc = B's offset minus A's, taken at v_n: constant
 * over the solve, the Jacobian untouched (an FEM walk's particle keeps its line) */
static kn_status spring_arcs(penalty_state* s, const kn_nl_step* st, kn_error* err) {
  kn_world* w = st->w;
  const kn_sim_candidates* c = st->cand;
  const kn_nl_points* P = st->points;
  if (!reserve(&s->vstart, &s->vcap, st->nv) || !reserve(&s->ptoff, &s->offcap, 3 * P->n))
    return kn_fail(err, KN_ERR_NOMEM, "out of memory for the springs' arcs");
  for (int q = 0; q < w->nclique; q++) w->cliques[q].ops->v_start(w->cliques[q].self, s->vstart + st->offset[q]);
  if (P->n) memset(s->ptoff, 0, 3 * (size_t)P->n * sizeof *s->ptoff);
  kn_mesh_arcs_reset(s->arcs);
  for (int i = 0; i < c->n; i++)
    for (int side = 0; side < 2; side++) {
      const kn_contact_side* sd = side ? &c->c[i].b : &c->c[i].a;
      int p = side ? st->pb[i] : st->pa[i];
      if (sd->kind != KN_SIDE_COLLIDER || p < 0) continue;
      double x[3], u[3], out[3], core[3];
      const double* x0 = P->p[p].x0;
      for (int k = 0; k < 3; k++) out[k] = (side ? -1 : 1) * c->c[i].R_WC[3 * k + 2]; /* n: from A into B */
      if (kn_mesh_arcs_core(w, sd->body, x0, out, core)) { /* a rounded surface: its centre's arc */
        kn_clique* cq = &w->cliques[kn_sim_side_clique(w, sd)];
        kn_point_map m;
        cq->ops->point_map(cq->self, w->colliders[sd->body].body, core, st->dt, &m);
        memcpy(u, m.v0, sizeof u), x0 = core;
      } else {
        kn_nl_point_velocity(P, p, s->vstart, u);
      }
      kn_status e = kn_mesh_arcs_point(s->arcs, w, st->dt, sd->body, x0, x, err);
      if (e) return e;
      for (int k = 0; k < 3; k++) s->ptoff[3 * p + k] = x[k] - x0[k] - st->dt * u[k];
    }
  for (int i = 0; i < c->n; i++) {
    kn_penalty_contact* pc = &s->pc[i];
    for (int k = 0; k < 3; k++)
      pc->arc[k] = pc->fem ? 0.0
                           : (pc->b >= 0 ? s->ptoff[3 * pc->b + k] : 0.0) - (pc->a >= 0 ? s->ptoff[3 * pc->a + k] : 0.0);
  }
  return KN_OK;
}

static kn_status penalty_begin(void* self, const kn_nl_step* st, kn_nl_term* term, int* potential, kn_error* err) {
  penalty_state* s = self;
  const kn_sim_candidates* c = st->cand;
  kn_world* w = st->w;
  *potential = 0;
  if (c->n > s->pccap) {
    free(s->pc), free(s->gamma), free(s->term.Y_ref), free(s->term.active_ref), free(s->term.tri_ref), free(s->side);
    free(s->same), free(s->bp), free(s->term.piece);
    s->pc = malloc((size_t)c->n * sizeof *s->pc);
    s->side = malloc((size_t)c->n);
    s->same = malloc((size_t)c->n * sizeof *s->same);
    s->bp = malloc((size_t)c->n * sizeof *s->bp);
    s->gamma = malloc(3 * (size_t)c->n * sizeof *s->gamma);
    s->term.Y_ref = malloc(3 * (size_t)c->n * sizeof *s->term.Y_ref);
    s->term.active_ref = malloc((size_t)c->n);
    s->term.tri_ref = malloc((size_t)c->n * sizeof *s->term.tri_ref);
    s->term.piece = malloc((size_t)c->n);
    s->pccap = s->pc && s->gamma && s->term.Y_ref && s->term.active_ref && s->term.tri_ref && s->side && s->same &&
                       s->bp && s->term.piece
                   ? c->n
                   : 0;
    if (!s->pccap) return kn_fail(err, KN_ERR_NOMEM, "out of memory for %d contacts", c->n);
  }
  kn_status e = kn_stiction_reserve(&s->rigid, c->first_fem, err);
  if (!e) e = kn_stiction_keyed_reserve(&s->fem, c->nfem, err);
  if (!e) e = kn_stiction_keyed_reserve(&s->mpm, c->nmpm, err);
  if (!e) e = kn_penalty_faces_reserve(&s->faces, c->nfem, err);
  if (e) return e;
  for (int k = 0; k < w->ncollider; k++) kn_sim_collider_pose(w, k, &s->X_WG[k]);
  kn_penalty_fem_meshes_reset(&s->fems);
  for (int i = 0; i < c->n; i++) {
    const kn_contact_candidate* cc = &c->c[i];
    kn_penalty_contact* pc = &s->pc[i];
    pc->a = st->pa[i], pc->b = st->pb[i];
    for (int a = 0; a < 3; a++) pc->n[a] = cc->R_WC[3 * a + 2];
    pc->phi0 = cc->phi;
    pc->mu = cc->material.mu;
    if ((e = kn_penalty_stiffness_pair(&s->stiff, w, c, i, &pc->k, err))) return e;
    anchor_start(s, st, i, pc);
    if (s->cpf && kn_penalty_cpf_covers(s->cpf, cc)) /* the pairs' contact: an inert spring, both ends */
      *pc = (kn_penalty_contact){.a = -1, .b = -1, .n = {0, 0, 1}, .phi0 = 1}; /* fixed, 1 m apart */
  }
  if ((e = spring_arcs(s, st, err))) return e;
  s->term.dt = st->dt;
  s->term.points = st->points;
  s->term.c = s->pc;
  s->term.n = c->n;
  s->term.use_ref = 0, s->term.use_piece = 0;
  s->term.fems = s->fems.fem, s->term.nfems = s->fems.n;
  if ((e = kn_penalty_fem_meshes_points(&s->fems, st, err))) return e;
  *term = (kn_nl_term){
      .eval = kn_penalty_term_eval, .lag = kn_penalty_term_lag, .pieces = kn_penalty_term_pieces, .self = &s->term};
  *potential = 0;
  if (!s->cpf) return KN_OK;
  /* the continuous mode: the pairs, and the springs of what they do not cover in the same solve */
  count_same(s, c);
  int live = 0;
  for (int i = 0; i < c->n; i++) live |= s->pc[i].a >= 0 || s->pc[i].b >= 0;
  s->parts[0] = *term;
  e = kn_penalty_cpf_begin(s->cpf, st, &s->parts[1], err);
  if (e || !live) {
    *term = s->parts[1];
    return e;
  }
  /* lag_lambda, with pairs: the lagged passes root-find too (the pairs' force is no gradient: a pass
   * minimizing the springs' energy ignores it and stalls; measured on box_40mm_200g's lift) */
  const kn_cpf_term* ct = s->parts[1].self;
  int pairs = (s->lag_lambda || ct->anchored) && ct->n > 0;
  *term = (kn_nl_term){
      .eval = mixed_eval, .lag = mixed_lag, .pieces = mixed_pieces, .lag_roots = pairs, .self = s->parts};
  return KN_OK;
}

/* the continuous mode: pairs that only the solved path crosses join, and the step is solved again */
static int penalty_after_solve(void* self, const kn_nl_step* st, const double* v, int attempt) {
  (void)st, (void)attempt;
  penalty_state* s = self;
  if (!s->cpf) return 0;
  kn_error err = {0};
  int added = kn_penalty_cpf_recheck(s->cpf, v, &err);
  if (added < 0) s->cpf_nomem = 1; /* reported by end_step, which fails the step */
  if (added > 0) return 1;
  return s->lag_lambda && kn_penalty_cpf_relag(s->cpf, v);
}

/* candidate i's force on B. A candidate the continuous pairs cover: with spread, the pairs' force
 * between its two bodies spread evenly over the detection's candidates of those two bodies (either
 * way round; a failed solve's description), else 0: the outputs get the pairs as rows of their own
 * (penalty_record) */
static void candidate_force(penalty_state* s, const kn_nl_step* st, int i, const double* v, int spread, double f[3]) {
  double Z[3], Y[3];
  const kn_contact_candidate* cc = &st->cand->c[i];
  if (!s->cpf || !kn_penalty_cpf_covers(s->cpf, cc)) {
    if (s->pc[i].fem) kn_penalty_term_move(&s->term, v);
    kn_penalty_term_contact(&s->term, i, v, Z, Y, f, NULL);
    if (s->side[i] < 0) /* the spring's particle is A: B feels the reaction */
      for (int k = 0; k < 3; k++) f[k] = -f[k];
    return;
  }
  f[0] = f[1] = f[2] = 0;
  if (!spread) return;
  kn_penalty_cpf_side_force(s->cpf, &cc->a, &cc->b, v, f);
  for (int k = 0; k < 3; k++) f[k] /= s->same[i];
}

static void penalty_force(void* self, const kn_nl_step* st, int i, const double* v, double f[3]) {
  candidate_force(self, st, i, v, 0, f);
}

static void spread_force(void* self, const kn_nl_step* st, int i, const double* v, double f[3]) {
  candidate_force(self, st, i, v, 1, f);
}

/* the continuous mode's pairs as contact rows of their own */
static kn_status penalty_record(void* self, const kn_nl_step* st, const double* v, kn_error* err) {
  penalty_state* s = self;
  return s->cpf ? kn_penalty_cpf_record(s->cpf, st->w, v, err) : KN_OK;
}

/* an active contact on a mesh: its anchor in the mesh's frame := Y (in the contact's frame: R^T (Y - o)),
 * a point on the mesh, so that the next step's projection finds it on the face it ended on */
static void mesh_commit(penalty_state* s, const kn_contact_candidate* cc, int i, int first_fem, int first_mpm,
                        const double Y[3]) {
  const kn_penalty_contact* pc = &s->pc[i];
  double* p = cc->origin == KN_CANDIDATE_RIGID ? (s->side[i] > 0 ? s->rigid.cur[i].pa : s->rigid.cur[i].pb)
              : cc->origin == KN_CANDIDATE_PARTICLE_RIGID ? s->mpm.cur[i - first_mpm].p
                                                          : s->fem.cur[i - first_fem].p;
  double d[3] = {Y[0] - pc->o[0], Y[1] - pc->o[1], Y[2] - pc->o[2]};
  kn_mat3_tvec(pc->R, d, p);
}

/* an active contact on an FEM boundary: its face anchor := the triangle and weights the walk ended at */
static void fem_walk_commit(kn_penalty_face* a, const kn_penalty_term* t, const kn_penalty_contact* pc, const double* v) {
  kn_penalty_fem_walk wk;
  if (kn_penalty_fem_walk_eval(t, pc, v, 0, &wk) == KN_RELAX_INACTIVE) return;
  for (int k = 0; k < 3; k++) a->vert[k] = wk.tv[k], a->w[k] = wk.w[k];
}

/* after the step: the anchors of the active contacts become the next step's, moved by their slide
 * in the frame of the body that carries them (at its new pose); the inactive ones are dropped */
static kn_status penalty_end_step(void* self, const kn_nl_step* st, const double* v, kn_error* err) {
  penalty_state* s = self;
  if (s->cpf) {
    if (s->cpf_nomem) {
      s->cpf_nomem = 0;
      return kn_fail(err, KN_ERR_NOMEM, "out of memory for the continuous penalty pairs on the solved path");
    }
    kn_penalty_cpf_end_step(s->cpf, v);
  }
  const kn_sim_candidates* c = st->cand;
  kn_world* w = st->w;
  for (int k = 0; k < w->ntree; k++)
    if (w->trees[k].robot->model->nv > 0) kn_mb_kinematics(w->trees[k].robot->model, w->trees[k].q, NULL, w->trees[k].data);
  for (int k = 0; k < w->ncollider; k++) kn_sim_collider_pose(w, k, &s->X_WG[k]);
  kn_penalty_term_move(&s->term, v);
  for (int i = 0; i < c->n; i++) {
    const kn_contact_candidate* cc = &c->c[i];
    const kn_penalty_contact* pc = &s->pc[i];
    double Z[3], Y[3], f[3], slide[3], x[3];
    kn_relax_state r = kn_penalty_term_contact(&s->term, i, v, Z, Y, f, NULL);
    double* g = s->gamma + 3 * i;
    g[0] = g[1] = 0, g[2] = r != KN_RELAX_INACTIVE;
    if (r != KN_RELAX_INACTIVE && pc->fem) { /* the anchor becomes the walk's end, on its face */
      fem_walk_commit(&s->faces.cur[i - c->first_fem], &s->term, pc, v);
      continue;
    }
    if (r != KN_RELAX_INACTIVE && s->side[i]) { /* on a mesh: the anchor becomes the walk's end, on the mesh */
      mesh_commit(s, cc, i, c->first_fem, c->first_mpm, Y);
      continue;
    }
    if (r != KN_RELAX_DYNAMIC) continue;
    for (int k = 0; k < 3; k++) slide[k] = Y[k] - pc->X[k]; /* A's side of the spring moved by this */
    double sign = 1, *p = NULL;
    int body = -1;
    if (cc->origin == KN_CANDIDATE_RIGID) {
      p = s->rigid.cur[i].pa, body = s->rigid.cur[i].a;
    } else if (cc->origin == KN_CANDIDATE_PARTICLE_RIGID) {
      p = s->mpm.cur[i - c->first_mpm].p, body = cc->b.body, sign = -1; /* the anchor is on B */
    } else if (cc->origin == KN_CANDIDATE_FEM_VERTEX_RIGID) {
      p = s->fem.cur[i - c->first_fem].p, body = cc->a.body;
    } else {
      kn_penalty_faces_slide(&s->faces, w, cc, i - c->first_fem, slide);
    }
    if (!p) continue;
    kn_pose_apply(&s->X_WG[body], p, x);
    for (int k = 0; k < 3; k++) x[k] += sign * slide[k];
    to_frame(&s->X_WG[body], x, p);
  }
  kn_stiction_commit(&s->rigid, c->first_fem, s->gamma);
  kn_stiction_keyed_commit(&s->fem, c->nfem, s->gamma + 3 * (size_t)c->first_fem);
  kn_stiction_keyed_commit(&s->mpm, c->nmpm, s->gamma + 3 * (size_t)c->first_mpm);
  kn_penalty_faces_commit(&s->faces, c->nfem, s->gamma + 3 * (size_t)c->first_fem);
  return KN_OK;
}

/*---- saved states: the anchors in the layouts of state_parts.h (rigid, FEM keyed, MPM keyed), then
 * the anchors on FEM faces (kn_penalty_faces_save); the adapter saves the MPM warm starts ----*/

static void penalty_save(const void* self, kn_state_out* out) {
  const penalty_state* s = self;
  kn_state_put_rigid_anchors(out, &s->rigid);
  kn_state_put_keyed_anchors(out, &s->fem);
  kn_state_put_keyed_anchors(out, &s->mpm);
  kn_penalty_faces_save(&s->faces, out);
  if (s->cpf) kn_penalty_cpf_save(s->cpf, out);
}

static kn_status penalty_load(void* self, kn_state_in* in, kn_error* err) {
  penalty_state* s = self;
  kn_state_parts p = {0};
  kn_penalty_face* faces = NULL;
  int nfaces = 0;
  const char* what = kn_state_get_rigid_anchors(in, s->ncollider, &p);
  if (!what) what = kn_state_get_keyed_anchors(in, 0, &p);
  if (!what) what = kn_state_get_keyed_anchors(in, 1, &p);
  if (!what) what = kn_penalty_faces_read(s->w, in, &faces, &nfaces);
  void* pairs = NULL;
  int npairs = 0;
  if (!what && s->cpf) what = kn_penalty_cpf_read(s->cpf, in, &pairs, &npairs);
  if (!what && in->pos != in->len) what = "unread bytes after the penalty backend's state";
  if (what) {
    kn_state_parts_free(&p);
    free(faces), free(pairs);
    return kn_fail(err, strcmp(what, "out of memory") ? KN_ERR_PARSE : KN_ERR_NOMEM, "penalty backend: %s", what);
  }
  kn_state_parts_commit(&p, s->w, &s->rigid, &s->fem, &s->mpm);
  kn_penalty_faces_take(&s->faces, faces, nfaces);
  if (s->cpf) kn_penalty_cpf_take(s->cpf, pairs, npairs);
  return KN_OK;
}

/* a failed solve's worst contact: the spring pulled hardest at the last iterate */
static void penalty_describe_failure(void* self, const kn_nl_step* st, const double* v, char* buf, size_t n) {
  kn_nl_describe_strongest(spread_force, self, st, v, buf, n);
}

static const kn_nl_formulation penalty_formulation = {"penalty",          penalty_create,      penalty_destroy,
                                                      penalty_begin,      penalty_after_solve, penalty_force,
                                                      penalty_end_step,   penalty_save,        penalty_load,
                                                      penalty_describe_failure, penalty_record};

static kn_status backend_create(kn_world* w, void** out, kn_error* err) {
  return kn_nl_backend_create(w, &penalty_formulation, out, err);
}

const kn_backend kn_backend_penalty = {"penalty", backend_create, kn_nl_backend_step, kn_nl_backend_free,
                                       kn_nl_backend_save, kn_nl_backend_load};
