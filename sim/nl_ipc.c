/* The ipc backend's formulation (backend_nonlinear.h; digest incremental-potential-contact.md): its
 * scene keys (contact.ipc), the barrier-augmented contact potential over each candidate's points
 * (ipc/term.c), the barrier stiffness kappa (§3.5: bounds from the characteristic length and the
 * contact DoFs' mass, the gradient balance at the first step that starts in contact, then kept,
 * doubled and the step redone while a pair ends closer than 1e-9 l and closer than it began, or a
 * pair that started touching ends deeper than it began), the
 * lagging solves of friction (§5.6, redone solves with lambda refreshed), the feasibility solve
 * where the warm start crosses a pair, a start with overlapping bodies refused, and the audit at
 * each step's end: every candidate's gap
 * with the bodies where advance really put them (a rigid side through forward kinematics at
 * q_n+1) must stay positive, and no mesh pair may close 99% of its gap between the solve's
 * linear-map positions and the real ones (audit_mesh), else the step fails naming the contact or
 * the two surfaces (the world adds step and stage). Surfaces that start crossing are refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/ipc.h"
#include "sim/backend_nonlinear.h"
#include "sim/ipc_surfaces.h"
#include "sim/ipc_touch.h"

#define IPC_MAX_SOLVES 6 /* the adapter redoes a solve at most 5 times */
#define IPC_MAX_ITERATIONS 1000 /* Newton iterations a solve unless contact.solver.max_iterations */

typedef struct {
  kn_ipc_term term;
  kn_ipc_contact* c;
  int ccap;
  double ell;               /* characteristic length: the simulated objects' bounding-box diagonal at t = 0 [m] */
  double kappa_user;        /* contact.ipc.kappa, 0: automatic */
  double kappa;             /* chosen at the first step that starts in contact, then kept (saved); 0: not yet */
  double kappa_min, kappa_max;
  int lagging;              /* Newton solves per step, friction lagged at the previous one's answer */
  int passes;               /* solves done this step */
  double d_start_min;       /* smallest gap at the step start */
  double *gb, *gE, *diag, *v0; /* nv each: barrier gradient, potentials' gradient, mass diagonal, v_start */
  size_t gcap;
  int ntree;
  kn_mb_data** data;        /* per tree: kinematics at q_n+1 for the audit */
  double* pbody;            /* 6 per candidate: its A and B collider points in their body frames */
  kn_ipc_surfaces surf;     /* FEM boundaries and rigid triangle meshes: the mesh-mesh pairs */
  int lag_nomem;            /* a lagging pass ran out of memory (reported at the step's end) */
  double* xend;             /* the surfaces' vertices where advance put them (the audit) */
  size_t xend_cap;
  kn_ipc_touch touch;       /* the touching start's shifts, kept per pair (sim/ipc_touch.h) */
  unsigned char* touch_kind; /* per candidate: what its shift is (KN_IPC_TOUCH_*, sim/ipc_touch.h) */
  double balance;           /* at kappa's choice: the balanced kappa over the chosen one, else 0 */
} ipc_state;

static void ipc_destroy(void* p) {
  ipc_state* s = p;
  if (!s) return;
  free(s->c), free(s->gb), free(s->gE), free(s->diag), free(s->v0), free(s->pbody), free(s->xend);
  for (int k = 0; s->data && k < s->ntree; k++) kn_mb_data_free(s->data[k]);
  free(s->data);
  kn_ipc_surfaces_free(&s->surf);
  kn_ipc_touch_free(&s->touch);
  free(s->touch_kind);
  free(s);
}

/* grow [lo, hi] by the box [a, b] */
static void box_add(double lo[3], double hi[3], const double a[3], const double b[3]) {
  for (int k = 0; k < 3; k++) lo[k] = fmin(lo[k], a[k]), hi[k] = fmax(hi[k], b[k]);
}

/* l (digest §2, §10.2 item 16: the reference code's rest box of the volumetric objects): the
 * diagonal of the bounding box at t = 0 of the bodies being simulated, the scene's free objects
 * (their colliders' boxes), FEM vertices and MPM particles (as balls of their contact radius); not
 * the robots, whose links are actuators (an arm's 1.2 m made dhat 1.2 mm on a 5 cm box, and the pads
 * stopped that far off: issue 20). A scene with no such body (a robot alone) takes its robots'
 * links; 1 m when there is nothing. */
static double characteristic_length(kn_world* w, ipc_state* s) {
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int k = 0; k < w->ntree; k++) {
    kn_world_tree* tr = &w->trees[k];
    kn_mb_kinematics(tr->robot->model, tr->q, tr->v, s->data[k]);
  }
  for (int f = 0; f < w->nfem; f++) {
    const kn_fem_body* b = w->fems[f].body;
    for (int k = 0; k < b->mesh.nvert; k++) box_add(lo, hi, b->x + 3 * k, b->x + 3 * k);
  }
  for (int m = 0; m < w->nmpm; m++) {
    const kn_mpm_body* b = w->mpms[m].body;
    const double r = w->mpms[m].contact_radius;
    for (int k = 0; k < b->np; k++) {
      const double* x = b->x + 3 * k;
      double a[3] = {x[0] - r, x[1] - r, x[2] - r}, c[3] = {x[0] + r, x[1] + r, x[2] + r};
      box_add(lo, hi, a, c);
    }
  }
  for (int robots = 0; robots < 2 && (robots == 0 || !(lo[0] <= hi[0])); robots++) /* robots if nothing else */
    for (int i = 0; w->collision && i < w->ncollider; i++) {
      const kn_world_collider* c = &w->colliders[i];
      if (c->c.clique < 0 || (c->owner >= 0) != robots) continue;
      kn_pose X;
      double a[3], b[3];
      kn_pose_mul(&s->data[c->tree]->X_wb[c->body], &c->c.X_bg, &X);
      kn_collider_aabb(w->collision, i, &X, a, b);
      if (isfinite(a[0] + a[1] + a[2] + b[0] + b[1] + b[2])) box_add(lo, hi, a, b);
    }
  double d2 = 0;
  for (int a = 0; a < 3; a++) d2 += (hi[a] - lo[a]) * (hi[a] - lo[a]);
  return d2 > 0 && isfinite(d2) ? sqrt(d2) : 1.0;
}

/* contact.ipc's keys => the term's parameters (errors name the key); defaults from l (§3.6, §8) */
static kn_status ipc_params(const kn_scene* sc, ipc_state* s, double* eps_d, kn_error* err) {
  const kn_scene_ipc* k = sc->doc->contact ? sc->doc->contact->ipc : NULL;
  kn_ipc_term* t = &s->term;
  t->dhat = k && k->dhat ? *k->dhat : 1e-3 * s->ell;
  s->kappa_user = k && k->kappa ? *k->kappa : 0;
  t->eps_v = k && k->epsilon_v ? *k->epsilon_v : 1e-3 * s->ell;
  /* the digest's 1e-2 l relies on the reference code's Newton always taking one iteration; the
   * shared solver tests before the first, and a step whose velocity changes by less than eps_d
   * then kept v_n (a block sliding on a slope gains a h = 9e-4 m/s; and D r is a velocity error only
   * where inertia dominates: a stiff FEM cantilever did not bend at 1e-5 l). 1e-6 l instead; a ball
   * stopped from 1000 m/s in one step bottoms out at round-off above it (tests/scenes/test_ipc.c) */
  *eps_d = k && k->epsilon_d ? *k->epsilon_d : 1e-6 * s->ell;
  s->lagging = k && k->lagging_iterations ? *k->lagging_iterations : 1;
  t->ccd = 0.9;
  struct {
    const char* key;
    double x;
    int given;
  } chk[] = {{"contact.ipc.dhat", t->dhat, k && k->dhat},
             {"contact.ipc.kappa", s->kappa_user, k && k->kappa},
             {"contact.ipc.epsilon_v", t->eps_v, k && k->epsilon_v},
             {"contact.ipc.epsilon_d", *eps_d, k && k->epsilon_d}};
  for (size_t i = 0; i < sizeof chk / sizeof *chk; i++)
    if (chk[i].given && (!isfinite(chk[i].x) || !(chk[i].x > 0)))
      return kn_scene_fail(sc, err, KN_ERR_INVALID, chk[i].key, "%g: expected a finite number > 0", chk[i].x);
  if (s->lagging < 1 || s->lagging > IPC_MAX_SOLVES)
    return kn_scene_fail(sc, err, KN_ERR_INVALID, "contact.ipc.lagging_iterations",
                         "%d: expected 1 to %d (Newton solves per step, each with friction lagged at the one before; "
                         "the nonlinear step redoes a solve at most 5 times)", s->lagging, IPC_MAX_SOLVES);
  return KN_OK;
}

/* The start must be separated (digest §10.2: a barrier cannot begin inside, and the reference code
 * refuses such a start): the rigid and FEM candidates at t = 0, found by the step's own detection,
 * each at phi >= -1e-6 l (touching within round-off is taken: its barrier starts at dhat / 2). MPM
 * particles are not checked: a particle inside a collider is pushed out like a touching pair. */
static kn_status refuse_overlaps(kn_world* w, ipc_state* s, kn_error* err) {
  if (!w->collision) return KN_OK;
  kn_sim_candidates c;
  kn_pose* X = malloc(((size_t)w->ncollider + 1) * sizeof *X);
  double* reach = kn_calloc((size_t)w->ncollider + 1, sizeof *reach);
  kn_status st = X && reach ? kn_sim_candidates_create(w, &c, err) : kn_fail(err, KN_ERR_NOMEM, "out of memory");
  if (!st) {
    for (int i = 0; i < w->ncollider; i++) {
      const kn_world_collider* col = &w->colliders[i];
      if (col->c.clique < 0) X[i] = col->c.X_bg;
      else kn_pose_mul(&s->data[col->tree]->X_wb[col->body], &col->c.X_bg, &X[i]);
    }
    st = kn_sim_detect_rigid(w, X, reach, &c, err);
    if (!st) st = kn_sim_detect_deformables(w, X, &c, err);
    for (int i = 0; !st && i < c.n; i++) {
      if (c.c[i].origin == KN_CANDIDATE_PARTICLE_RIGID || !(c.c[i].phi < -1e-6 * s->ell)) continue;
      if (kn_ipc_surfaces_replace(&s->surf, &c.c[i])) continue; /* checked by the mesh pairs' own test */
      char what[256];
      kn_sim_candidate_describe(w, &c, i, what, sizeof what);
      st = kn_fail(err, KN_ERR_UNSUPPORTED,
                   "%s: contact.backend ipc: the %s starts overlapping (phi = %.3g m at t = 0); ipc needs every pair "
                   "separated or touching at the start (a barrier cannot begin inside): move the bodies apart",
                   w->scene->path, what, c.c[i].phi);
    }
    kn_sim_candidates_free(&c);
  }
  free(X), free(reach);
  return st;
}

/* two surfaces with mesh pairs that start crossing (an edge of one through a triangle of the other)
 * are refused, naming both: unsigned distances cannot push them apart (the detection's phi, on the
 * convex hulls of non-convex meshes, is not used for them) */
static kn_status refuse_crossing_surfaces(kn_world* w, ipc_state* s, kn_error* err) {
  int a, b, r = kn_ipc_surfaces_crossing(&s->surf, w, s->data, 1e-9 * s->ell, &a, &b);
  if (r < 0) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  if (r == 0) return KN_OK;
  char na[160], nb[160];
  kn_ipc_surfaces_name(&s->surf, w, a, na, sizeof na);
  kn_ipc_surfaces_name(&s->surf, w, b, nb, sizeof nb);
  return kn_fail(err, KN_ERR_UNSUPPORTED,
                 "%s: contact.backend ipc: %s and %s start intersecting (an edge of one crosses a triangle of the other "
                 "at t = 0); ipc needs every pair separated at the start: move the bodies apart",
                 w->scene->path, na, nb);
}

static kn_status ipc_create(kn_world* w, void** out, kn_nl_options* opt, double* extra_margin, kn_error* err) {
  const kn_scene* sc = w->scene;
  ipc_state* s = kn_calloc(1, sizeof *s);
  if (!s || !(s->data = kn_calloc((size_t)w->ntree + 1, sizeof *s->data))) {
    free(s);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", sc->path);
  }
  s->ntree = w->ntree;
  for (int k = 0; k < w->ntree; k++)
    if (!(s->data[k] = kn_mb_data_create(w->trees[k].robot->model))) {
      ipc_destroy(s);
      return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", sc->path);
    }
  s->ell = characteristic_length(w, s);
  double eps_d;
  kn_status st = ipc_params(sc, s, &eps_d, err);
  const kn_scene_ipc* k = sc->doc->contact ? sc->doc->contact->ipc : NULL;
  if (!st) st = kn_ipc_surfaces_create(w, k && k->box_surfaces && *k->box_surfaces, &s->surf, err);
  if (!st) st = refuse_overlaps(w, s, err);
  if (!st) st = refuse_crossing_surfaces(w, s, err);
  if (st) {
    ipc_destroy(s);
    return st;
  }
  /* the Newton test: max |D r| <= eps_d (D r a velocity error where the inertia dominates) and the
   * Newton step's max |dv| <= eps_d (IPC's |p|_inf / h, §4.2 step 5): a stiff FEM body's A = M + h^2 K
   * hides its rigid motion from D r (the arch's stones kept v_n, g h = 0.1 m/s off: issue 20) */
  opt->abs_tol = eps_d, opt->rel_tol = 0, opt->step_test = 1;
  /* the pairs' PSD projection drops their negative curvature (corners pressed together roll over
   * each other like balls of radius d): where the secant shows it, a full step is extended (newton.c;
   * the paper-size card frame at mu 0.2 crawled to its symmetric saddle at 0.93 a Newton iteration
   * and failed at step 16) */
  opt->extend_steps = 1;
  /* a large step is a quasi-static solve: the paper's twisted rods take 100.58, 188.17 and 522.00
   * Newton iterations a step at h 0.5, 1 and 2 s (Table 1; the reference code caps at 10000, digest §8),
   * and here the rods at h 1 s crawled 635 iterations (CCD-capped, the energy falling at each) in
   * step 2; contact.solver.max_iterations, when set, wins over this default */
  const kn_scene_solver* so = sc->doc->contact ? sc->doc->contact->solver : NULL;
  if (!(so && so->max_iterations)) opt->max_iterations = IPC_MAX_ITERATIONS;
  *extra_margin = s->term.dhat; /* every pair within dhat at the step start is a candidate */
  *out = s;
  return KN_OK;
}

// nv doubles in each of gb, gE, diag, v0
static kn_status grow(ipc_state* s, size_t n, kn_error* err) {
  if (n <= s->gcap) return KN_OK;
  double** a[] = {&s->gb, &s->gE, &s->diag, &s->v0};
  s->gcap = 0;
  for (size_t k = 0; k < sizeof a / sizeof *a; k++) {
    free(*a[k]);
    if (!(*a[k] = malloc(n * sizeof(double)))) return kn_fail(err, KN_ERR_NOMEM, "out of memory (%zu DoFs)", n);
  }
  s->gcap = n;
  return KN_OK;
}

/* §3.5: kappa. A given kappa is used as given. Otherwise, until a step starts with a pair within
 * dhat, each step takes kappa_min of its contacts (bounds from l, dhat and the mean mass of the
 * DoFs they touch: a tree's diagonal of A, an FEM vertex's lumped mass); the first such step chooses kappa by the balance of the barrier's and
 * the potentials' gradients at v_start, clamped to its bounds, and keeps it (raised only by
 * after_solve). The reference code balances again at every step; there the resting gap moved with
 * each new kappa and the F1 block crept down the critical slope at 4.7e-4 m/s. */
static kn_status kappa_init(ipc_state* s, const kn_nl_step* st, kn_error* err) {
  kn_world* w = st->w;
  const int nv = st->nv;
  kn_status e = grow(s, (size_t)nv + 1, err);
  if (e) return e;
  double* v0 = s->v0;
  for (int c = 0; c < w->nclique; c++) {
    kn_clique* q = &w->cliques[c];
    q->ops->v_start(q->self, v0 + st->offset[c]);
    q->ops->diagonal(q->self, s->diag + st->offset[c]);
  }
  if (s->kappa_user > 0) {
    s->term.kappa = s->kappa_user;
    return KN_OK;
  }
  if (s->kappa > 0) {
    s->term.kappa = s->kappa;
    return KN_OK;
  }
  /* the mean mass of the contacts' DoFs (the digest's average nodal mass): an FEM vertex's lumped
   * mass, not A's diagonal, whose h^2 K dominates a stiff body's (issue 20) */
  for (int f = 0; f < w->nfem; f++) {
    const kn_fem_body* b = w->fems[f].body;
    double* d = s->diag + st->offset[w->first_fem_clique + f];
    for (int u = 0; u < b->mesh.nvert; u++)
      if (b->free_index[u] >= 0) d[3 * b->free_index[u]] = d[3 * b->free_index[u] + 1] = d[3 * b->free_index[u] + 2] = b->mass[u];
  }
  /* over the contacts' DoFs */
  double msum = 0;
  int mn = 0;
  const kn_nl_points* P = st->points;
  for (int k = 0; k < P->n; k++)
    for (int j = 0; j < P->p[k].m; j++) msum += s->diag[P->col[P->p[k].start + j]], mn++;
  double mbar = mn > 0 && msum > 0 ? msum / mn : 1.0;
  kn_ipc_kappa_bounds(s->ell, s->term.dhat, mbar, &s->kappa_min, &s->kappa_max);
  kn_ipc_term_barrier_gradient(&s->term, v0, s->gb, nv);
  int any = 0;
  for (int i = 0; i < nv && !any; i++) any = s->gb[i] != 0;
  s->term.kappa = s->kappa_min;
  if (!any) return KN_OK;
  for (int c = 0; c < w->nclique && !e; c++) {
    kn_clique* q = &w->cliques[c];
    e = q->ops->potential(q->self, v0 + st->offset[c], NULL, s->gE + st->offset[c], NULL, err);
  }
  if (e) return e;
  s->kappa = s->term.kappa = kn_ipc_kappa_initial(s->gb, s->gE, nv, s->kappa_min, s->kappa_max);
  double bb = 0, bE = 0; /* the balance before clamping: the start's gap where the load is carried */
  for (int i = 0; i < nv; i++) bb += s->gb[i] * s->gb[i], bE += s->gb[i] * s->gE[i];
  s->balance = -bE / bb / s->kappa;
  return KN_OK;
}

/* the first guess: where the straight path from v = 0 (every point at its step-start position,
 * intersection-free) to v_start would bring a mesh pair within (1 - c) of its distance, the guess
 * is moved back to the step additive CCD allows (unsigned distances cannot see a crossing, so the
 * solve must start on the near side) */
static void mesh_guess(ipc_state* s, const kn_nl_step* st, double* v0) {
  double alpha = kn_ipc_mesh_max_step(&s->term, NULL, v0, 1.0);
  if (alpha < 1)
    for (int i = 0; i < st->nv; i++) v0[i] *= alpha;
}

/* kappa chosen at its first step in contact differs from its balance at dhat / 2 (clamped up to
 * kappa_min): the barrier there pushes 1 / balance times the load, and the pairs that start touching
 * would be lifted at once (a 1 kg box: 46 um in its first step). They start instead at the gap d1 in
 * (0, dhat) where the barrier carries the balanced load, b(d1) = balance b(dhat / 2) (bisection; the
 * force falls with d), the first guess of their settling (ipc_after_solve) */
static void touching_at_balance(ipc_state* s, int n) {
  const double dhat = s->term.dhat, k = s->term.kappa, dt = s->term.dt;
  const double f1 = s->balance * kn_ipc_normal_force(0.5 * dhat, dhat, k, dt);
  double lo = 0, hi = dhat;
  for (int it = 0; it < 60; it++) {
    double m = 0.5 * (lo + hi);
    if (kn_ipc_normal_force(m, dhat, k, dt) > f1) lo = m; else hi = m;
  }
  for (int i = 0; i < n; i++)
    if (s->touch_kind[i] == KN_IPC_TOUCH_FRESH) {
      s->c[i].shift = lo - s->c[i].phi0;
      s->touch.cur[i].s = s->c[i].shift;
      s->d_start_min = fmin(s->d_start_min, lo);
    }
}

/* the contacts of this step over their material points; kappa; friction lagged at the step start */
static kn_status ipc_begin(void* self, const kn_nl_step* st, kn_nl_term* term, int* potential, kn_error* err) {
  ipc_state* s = self;
  const kn_sim_candidates* c = st->cand;
  if (c->n > s->ccap) {
    free(s->c), free(s->pbody), free(s->touch_kind);
    s->c = malloc((size_t)c->n * sizeof *s->c);
    s->pbody = malloc(6 * (size_t)c->n * sizeof *s->pbody);
    s->touch_kind = malloc((size_t)c->n);
    s->ccap = s->c && s->pbody && s->touch_kind ? c->n : 0;
    if (!s->ccap) return kn_fail(err, KN_ERR_NOMEM, "out of memory for %d contacts", c->n);
  }
  kn_status e0 = kn_ipc_touch_reserve(&s->touch, c->n, err);
  if (e0) return e0;
  s->d_start_min = INFINITY;
  for (int i = 0; i < c->n; i++) {
    const kn_contact_candidate* cc = &c->c[i];
    kn_ipc_contact* k = &s->c[i];
    k->a = st->pa[i], k->b = st->pb[i];
    for (int a = 0; a < 3; a++) k->t1[a] = cc->R_WC[3 * a], k->t2[a] = cc->R_WC[3 * a + 1], k->n[a] = cc->R_WC[3 * a + 2];
    k->phi0 = cc->phi;
    k->mu = cc->material.mu;
    /* the collider sides' points in their body frames, for the audit */
    const kn_contact_side* sd[2] = {&cc->a, &cc->b};
    for (int j = 0; j < 2; j++) {
      double* pb = s->pbody + 6 * i + 3 * j;
      memcpy(pb, cc->p, 3 * sizeof *pb);
      if (sd[j]->kind != KN_SIDE_COLLIDER) continue;
      const kn_world_collider* col = &st->w->colliders[sd[j]->body];
      if (col->c.clique < 0) continue;
      kn_pose inv;
      kn_pose_inv(&st->w->trees[col->tree].data->X_wb[col->body], &inv);
      kn_pose_apply(&inv, cc->p, pb);
    }
    int kind;
    k->shift = kn_ipc_touch_shift(&s->touch, i, &cc->a, &cc->b, cc->phi, s->pbody + 6 * i + 3, s->term.dhat,
                                  1e-9 * s->ell, &kind);
    s->touch_kind[i] = (unsigned char)kind;
  }
  s->term.dt = st->dt;
  s->term.points = st->points;
  s->term.c = s->c;
  s->term.n = c->n;
  s->term.mesh = NULL;
  if (s->surf.mesh.npair > 0) { /* mesh-mesh pairs: the surfaces' vertices as points; the candidates
                                   they replace stay in the list, inert (no points, no force) */
    kn_status e = kn_ipc_surfaces_points(&s->surf, st, err);
    if (e) return e;
    for (int i = 0; i < c->n; i++)
      if (kn_ipc_surfaces_replace(&s->surf, &c->c[i]))
        s->c[i].a = s->c[i].b = -1, s->c[i].phi0 = INFINITY, s->c[i].shift = 0, s->c[i].mu = 0, s->touch_kind[i] = 0,
        s->touch.cur[i].s = 0;
    s->term.mesh = &s->surf.mesh;
    int q;
    double d0 = kn_ipc_mesh_min_distance(&s->term, NULL, s->term.dhat, &q);
    if (isnan(d0)) return kn_fail(err, KN_ERR_NOMEM, "out of memory for the mesh pairs");
    if (!(d0 > 1e-9 * s->ell)) { /* unsigned distances: a barrier cannot start at 0 (digest §10.2) */
      char a[160], b[160];
      kn_ipc_surfaces_name(&s->surf, st->w, s->surf.pairs[2 * q], a, sizeof a);
      kn_ipc_surfaces_name(&s->surf, st->w, s->surf.pairs[2 * q + 1], b, sizeof b);
      return kn_fail(err, KN_ERR_UNSUPPORTED,
                     "contact.backend ipc: %s and %s are %.3g m apart at the step start (mesh-mesh pairs need a gap "
                     "> %.3g m: a barrier cannot start at distance 0; place them apart, e.g. by dhat / 2 = %.3g m, "
                     "where they start in contact and rise to their resting gap)",
                     a, b, d0, 1e-9 * s->ell, 0.5 * s->term.dhat);
    }
    s->d_start_min = fmin(s->d_start_min, d0);
  }
  for (int i = 0; i < c->n; i++) s->d_start_min = fmin(s->d_start_min, s->c[i].phi0 + s->c[i].shift);
  s->balance = 0;
  kn_status e = kappa_init(s, st, err);
  if (e) return e;
  if (s->balance > 0) touching_at_balance(s, c->n);
  s->term.kappa_max = s->kappa_user > 0 ? 0 : s->kappa_max;
  s->term.d_crush = fmin(1e-9 * s->ell, s->d_start_min); /* crushed: also after_solve's test */
  if (s->term.mesh) {
    if ((e = kn_ipc_mesh_lag(&s->term, NULL, err))) return e; /* at the step start (§5.3) */
    mesh_guess(s, st, st->guess);
  }
  for (int i = 0; i < c->n; i++) { /* lambda at the step start (§5.3) */
    double l = kn_ipc_normal_force(s->c[i].phi0 + s->c[i].shift, s->term.dhat, s->term.kappa, st->dt);
    s->c[i].lambda = isfinite(l) ? l : 0.0;
  }
  /* the warm start v_n may already cross a pair (a body arriving faster than its gap per step): a
   * first solve on the barrier extended below dhat / 100 then finds a start where every gap is
   * positive (after_solve), and the IPC solve proper goes on from there */
  s->term.d_lo = 0;
  for (int i = 0; i < c->n; i++)
    if (!(kn_ipc_term_gap(&s->term, i, s->v0) > 0)) s->term.d_lo = 0.01 * s->term.dhat;
  s->passes = 0;
  *term = (kn_nl_term){.eval = kn_ipc_term_eval, .max_step = kn_ipc_term_max_step, .project = kn_ipc_term_project,
                       .stiffen = kn_ipc_term_stiffen, .self = &s->term};
  *potential = 1;
  return KN_OK;
}

/* the kept shifts (sim/ipc_touch.h) at v: a pair that started touching this step and does not end
 * 1e-7 l above its placed gap phi0 (within round-off: 0; while within dhat), or a kept one that ends
 * below it (a load that grew), gets the shift that puts the barrier distance d it reached 1e-7 l
 * above that gap, s = d - phi0 - 1e-7 l, and the step is solved again (the forces then barely
 * change: a block on a slope settled within 1e-9 m in 3 solves), so the body starts, and stays,
 * where it was placed: no lift, no normal-force swing for the lagged friction to read. 1e-7 l keeps
 * it off phi = 0 by more than the solve's tolerance eps_d dt; a shift shrinks by at most d / 2 a
 * solve, so the last answer, where the next solve starts, keeps a positive gap (a soft FEM cube's
 * corner that sank 4.6e-5 m got a negative one). 1 if a shift moved */
static int settle(ipc_state* s, const double* v) {
  const double above = 1e-7 * s->ell;
  int moved = 0;
  for (int i = 0; i < s->term.n; i++) {
    kn_ipc_contact* c = &s->c[i];
    const int fresh = s->touch_kind[i] == KN_IPC_TOUCH_FRESH;
    if (!fresh && s->touch_kind[i] != KN_IPC_TOUCH_KEPT) continue;
    double d = kn_ipc_term_gap(&s->term, i, v), floor0 = fmin(c->phi0, 0.0), phi = d - c->shift;
    int off = fresh ? fabs(phi - floor0 - above) > 0.5 * above && d < s->term.dhat
                    : phi < floor0 + 0.1 * above;
    if (!off || !(d > 0) || !(d - floor0 - above > 0)) continue;
    c->shift = s->touch.cur[i].s = fmax(d - floor0 - above, c->shift - 0.5 * d); /* v stays feasible */
    moved = 1;
  }
  return moved;
}

/* a contact with friction whose lagged normal force is more than LAG_OVERSTATED times the one at v:
 * a body set down touching (its start gap a fraction of dhat, where the barrier's force is many times
 * its load), leaving its support, or a particle rebounding from an impact. Its friction mu lambda
 * would then exceed the cone of the solved normal force (an FEM block started on an incline at
 * 0.1 m/s kept 14.7 mu f_n at its first step and stopped dead, then slid on from rest), so the
 * lagging goes on past contact.ipc.lagging_iterations while it does, within the adapter's solves.
 * 1.1, not 2: the fidelity MPM ball sliding at mu 0.2 hops from particle to particle, each landing
 * a decelerating impulse whose next step read it lagged; with 2 its friction impulse over 1 s was
 * 0.245 of its normal impulse (up to 0.37 in a step) and it ended 8.4 cm behind a t^2 / 2 (issue 20;
 * 1.5: 0.217, 1.25: 0.209, 1.1: 0.202 and on its curve). Friction is understated, not overstated,
 * where a contact comes (lambda lagged at 0): as in the digest, for one solve. The mesh pairs'
 * friction is not checked here. */
#define LAG_OVERSTATED 1.1
static int lag_overstates(const ipc_state* s, const double* v) {
  for (int i = 0; i < s->term.n; i++) {
    const kn_ipc_contact* c = &s->c[i];
    if (!(c->mu > 0 && c->lambda > 0)) continue;
    double l = kn_ipc_normal_force(kn_ipc_term_gap(&s->term, i, v), s->term.dhat, s->term.kappa, s->term.dt);
    if (c->lambda > LAG_OVERSTATED * l) return 1;
  }
  return 0;
}

/* after a converged solve: §3.5c, kappa doubled (to kappa_max) and the step redone while a pair
 * ends closer than 1e-9 l and than the closest began, or a shifted pair ends below half its shift
 * (with the mass-scaled kappa a soft FEM cube placed on its floor sank 4e-5 m at step 1 of the
 * regression grasp); then the touching pairs' settling (settle), kappa doubled for a shifted pair
 * still deeper than it began; then the lagging passes (§5.6): lambda refreshed at v and solved
 * again, lagging solves in all */
static int ipc_after_solve(void* self, const kn_nl_step* st, const double* v, int attempt) {
  (void)st;
  ipc_state* s = self;
  if (s->term.kappa_max > 0 && s->term.kappa == s->term.kappa_max) s->kappa = s->term.kappa; /* stiffened in the solve */
  if (attempt + 1 >= IPC_MAX_SOLVES) return 0;
  double d_min = s->term.mesh ? kn_ipc_mesh_min_distance(&s->term, v, s->term.dhat, NULL) : INFINITY;
  for (int i = 0; i < s->term.n; i++) d_min = fmin(d_min, kn_ipc_term_gap(&s->term, i, v));
  if (s->term.d_lo > 0) { /* the feasibility solve: on to the barrier itself, or again stiffer */
    s->term.d_lo = d_min > 0 ? 0.0 : 0.1 * s->term.d_lo;
    return 1;
  }
  s->passes++;
  /* a shifted pair (its barrier zero moved below it) that ends deeper than it began; a soft one
   * even below half its shift (a barrier far too soft for its load: a soft FEM cube's corners on
   * their floor went from 5.1e-5 to 5e-6 m) */
  int deeper = 0, soft = 0;
  for (int i = 0; i < s->term.n; i++) {
    double d = kn_ipc_term_gap(&s->term, i, v), sh = s->c[i].shift;
    if (sh > 0 && d - sh < fmin(s->c[i].phi0, 0.0) - 1e-9 * s->ell) deeper = 1, soft |= d < 0.5 * sh;
  }
  const int stiffer = s->kappa_user == 0 && s->term.kappa < s->kappa_max;
  if (stiffer && (soft || d_min < s->term.d_crush)) {
    s->kappa = s->term.kappa = fmin(2 * s->term.kappa, s->kappa_max);
    return 1;
  }
  if (attempt + 2 < IPC_MAX_SOLVES && settle(s, v)) {
    s->passes--; /* not a lagging pass */
    return 1;
  }
  if (stiffer && deeper) { /* not settled (no solves left for it, or a pair that started inside) */
    s->kappa = s->term.kappa = fmin(2 * s->term.kappa, s->kappa_max);
    return 1;
  }
  if (s->passes >= s->lagging && !lag_overstates(s, v)) return 0;
  kn_ipc_term_lag(&s->term, v);
  kn_error e;
  if (s->term.mesh && kn_ipc_mesh_lag(&s->term, v, &e)) s->lag_nomem = 1;
  return 1;
}

static void ipc_force(void* self, const kn_nl_step* st, int i, const double* v, double f[3]) {
  (void)st;
  kn_ipc_term_force(&((ipc_state*)self)->term, i, v, f);
}

/* the mesh pairs as contact rows of their own (the candidates they replace report 0) */
static kn_status ipc_record(void* self, const kn_nl_step* st, const double* v, kn_error* err) {
  ipc_state* s = self;
  return s->term.mesh ? kn_ipc_surfaces_record(&s->surf, &s->term, st->w, v, err) : KN_OK;
}

/* where advance put candidate i's side j (0: A, 1: B): a collider point through its body's pose
 * at q_n+1, any other point by its map (exact: FEM x + dt v, MPM G2P); x0 its start */
static void side_end(ipc_state* s, const kn_nl_step* st, int i, int j, const double* v, double x[3], double x0[3]) {
  const kn_contact_candidate* cc = &st->cand->c[i];
  const kn_contact_side* sd = j ? &cc->b : &cc->a;
  int k = j ? st->pb[i] : st->pa[i];
  if (k < 0) { /* fixed in the world */
    memcpy(x, cc->p, 3 * sizeof *x), memcpy(x0, cc->p, 3 * sizeof *x0);
    return;
  }
  memcpy(x0, st->points->p[k].x0, 3 * sizeof *x0);
  if (sd->kind == KN_SIDE_COLLIDER) {
    const kn_world_collider* col = &st->w->colliders[sd->body];
    kn_pose_apply(&s->data[col->tree]->X_wb[col->body], s->pbody + 6 * i + 3 * j, x);
    return;
  }
  double u[3];
  kn_nl_point_velocity(st->points, k, v, u);
  for (int a = 0; a < 3; a++) x[a] = x0[a] + st->dt * u[a];
}

/* the mesh pairs' audit: every surface vertex where advance put it (a rigid mesh through its body's
 * pose at q_n+1, which differs from the linear map the solve kept intersection-free by
 * O(dt^2 omega^2)); a pair that closes 99% of its gap on the way from the one to the other may
 * cross, and the step fails naming both surfaces (the world keeps the state it had) */
static kn_status audit_mesh(ipc_state* s, const kn_nl_step* st, const double* v, kn_error* err) {
  size_t n = 0;
  for (int i = 0; i < s->surf.nsurf; i++) n += 3 * (size_t)s->surf.mesh.surf[i].nvert;
  if (n > s->xend_cap) {
    free(s->xend);
    s->xend_cap = (s->xend = malloc(n * sizeof *s->xend)) ? n : 0;
    if (!s->xend) return kn_fail(err, KN_ERR_NOMEM, "out of memory for the mesh pairs' audit");
  }
  kn_ipc_surfaces_end(&s->surf, st, v, s->data, s->xend);
  int q;
  double d_lin, d_end;
  int ok = kn_ipc_mesh_audit(&s->term, v, s->xend, &q, &d_lin, &d_end);
  if (ok < 0) return kn_fail(err, KN_ERR_NOMEM, "out of memory for the mesh pairs' audit");
  if (ok) return KN_OK;
  char a[160], b[160];
  kn_ipc_surfaces_name(&s->surf, st->w, s->surf.pairs[2 * q], a, sizeof a);
  kn_ipc_surfaces_name(&s->surf, st->w, s->surf.pairs[2 * q + 1], b, sizeof b);
  return kn_fail(err, KN_ERR_NUMERIC,
                 "the mesh pairs of %s and %s may end intersecting after advance: a pair %.3g m apart with the linear "
                 "point maps the solve kept positive closes 99%% of that gap or crosses on the way to where the rigid "
                 "update put it (%.3g m apart there, unsigned; the two differ by O(dt^2 omega^2)): lower time_step",
                 a, b, d_lin, d_end);
}

/* the audit of the step's end (after every clique advanced to v): each candidate's gap along its
 * normal with the points where they really are; > 0 for every pair (its barrier's zero for a pair
 * that began touching), else the step fails */
static kn_status ipc_end_step(void* self, const kn_nl_step* st, const double* v, kn_error* err) {
  ipc_state* s = self;
  kn_world* w = st->w;
  if (s->lag_nomem) {
    s->lag_nomem = 0;
    return kn_fail(err, KN_ERR_NOMEM, "out of memory for the mesh pairs' lagged friction");
  }
  for (int k = 0; k < w->ntree; k++)
    if (w->trees[k].robot->model->nv > 0) kn_mb_kinematics(w->trees[k].robot->model, w->trees[k].q, w->trees[k].v, s->data[k]);
  for (int i = 0; i < st->cand->n; i++) {
    double xa[3], xa0[3], xb[3], xb0[3], g = 0;
    side_end(s, st, i, 0, v, xa, xa0);
    side_end(s, st, i, 1, v, xb, xb0);
    for (int a = 0; a < 3; a++) g += s->c[i].n[a] * ((xb[a] - xb0[a]) - (xa[a] - xa0[a]));
    double d = s->c[i].phi0 + s->c[i].shift + g;
    if (!(d > 0)) {
      char what[256];
      kn_sim_candidate_describe(w, st->cand, i, what, sizeof what);
      return kn_fail(err, KN_ERR_NUMERIC,
                     "the %s ends intersecting after advance: gap %.3g m (%.3g m with the linear point maps the "
                     "solve kept positive; the rigid update differs from them by O(dt^2 omega^2))",
                     what, d - s->c[i].shift, kn_ipc_term_gap(&s->term, i, v) - s->c[i].shift);
    }
  }
  kn_status e = s->term.mesh ? audit_mesh(s, st, v, err) : KN_OK;
  if (!e) kn_ipc_touch_commit(&s->touch, st->cand->n);
  return e;
}

/* saved state: kappa and its bounds (0 while not chosen yet) */
static void ipc_save(const void* self, kn_state_out* out) {
  const ipc_state* s = self;
  double k[3] = {s->kappa, s->kappa_min, s->kappa_max};
  kn_state_put_f64(out, k, 3);
  kn_ipc_touch_save(&s->touch, out);
}

static kn_status ipc_load(void* self, kn_state_in* in, kn_error* err) {
  double k[3];
  if (!kn_state_get_f64(in, k, 3) || !(k[0] >= 0 && k[1] >= 0 && k[2] >= 0) || !isfinite(k[0] + k[1] + k[2]))
    return kn_fail(err, KN_ERR_PARSE, "the ipc backend's barrier stiffness is missing or negative");
  ipc_state* s = self;
  kn_status e = kn_ipc_touch_load(&s->touch, in, err);
  if (!e) s->kappa = k[0], s->kappa_min = k[1], s->kappa_max = k[2];
  return e;
}

/* a failed solve's worst contact: the pair closest to its barrier's zero at the last iterate (the
 * largest normal force), its gap measured from the bodies (a touching start's shift taken off) */
static void ipc_describe_failure(void* self, const kn_nl_step* st, const double* v, char* buf, size_t n) {
  ipc_state* s = self;
  int worst = -1;
  double dmin = INFINITY;
  for (int i = 0; i < s->term.n; i++) {
    double d = kn_ipc_term_gap(&s->term, i, v);
    if (d < s->term.dhat && !(d >= dmin)) worst = i, dmin = d;
  }
  if (n > 0) buf[0] = 0;
  if (worst < 0) return;
  double f[3];
  kn_ipc_term_force(&s->term, worst, v, f);
  kn_nl_describe_contact(st, worst, dmin - s->c[worst].shift, f, buf, n);
}

static const kn_nl_formulation ipc_formulation = {"ipc", ipc_create, ipc_destroy, ipc_begin, ipc_after_solve,
                                                  ipc_force, ipc_end_step, ipc_save, ipc_load, ipc_describe_failure,
                                                  ipc_record};

static kn_status backend_create(kn_world* w, void** out, kn_error* err) {
  return kn_nl_backend_create(w, &ipc_formulation, out, err);
}

const kn_backend kn_backend_ipc = {"ipc", backend_create, kn_nl_backend_step, kn_nl_backend_free, kn_nl_backend_save,
                                   kn_nl_backend_load};
