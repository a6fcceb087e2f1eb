/* The SAP adapter's assembly: the world's cliques and the step's contact candidates into SAP
 * cliques and contact constraints (digest §0, §6.2, §7.4), through the clique interface only.
 *
 * A contact's Jacobian is R_WC^T (J_B - J_A), each side's J from its clique's point maps: a tree
 * point's dense Jacobian row block, an FEM surface point's vertices (dense rows over the SAP
 * clique's columns), an MPM particle's stencil (SAP's nodal form: w_ip R_WC^T per node). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/backend_sap.h"

kn_status kn_sap_adapter_grow(double** p, size_t* cap, size_t n, kn_error* err) {
  if (n <= *cap) return KN_OK;
  double* q = realloc(*p, n * sizeof *q);
  if (!q) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  *p = q, *cap = n;
  return KN_OK;
}

kn_status kn_sap_adapter_note(sap_state* s, int i, sap_info info, kn_error* err) {
  if (i >= s->info_cap) {
    int cap = s->info_cap ? s->info_cap : 64;
    while (cap <= i) cap *= 2;
    sap_info* c = realloc(s->info, (size_t)cap * sizeof *c);
    if (!c) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
    s->info = c, s->info_cap = cap;
  }
  s->info[i] = info;
  return KN_OK;
}

//---- which DoFs the constraints touch ----

// per-DoF arrays for n DoFs
static kn_status reserve_dofs(sap_clique* q, size_t n, kn_error* err) {
  if (n <= q->cap) return KN_OK;
  size_t c = n + n / 2 + 16;
  free(q->col), free(q->mark), free(q->P), free(q->vs), free(q->diagA), free(q->diagS), free(q->dv), free(q->dvall);
  free(q->vnext);
  q->col = kn_calloc(c, sizeof *q->col);
  q->mark = kn_calloc(c, 1);
  q->P = kn_calloc(c, sizeof *q->P);
  q->vs = kn_calloc(c, sizeof(double));
  q->diagA = kn_calloc(c, sizeof(double));
  q->diagS = kn_calloc(c, sizeof(double));
  q->dv = kn_calloc(c, sizeof(double));
  q->dvall = kn_calloc(c, sizeof(double));
  q->vnext = kn_calloc(c, sizeof(double));
  q->cap = c;
  if (!q->col || !q->mark || !q->P || !q->vs || !q->diagA || !q->diagS || !q->dv || !q->dvall || !q->vnext) {
    q->cap = 0;
    return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  return KN_OK;
}


// (deformable side) => the DoFs of its points' nodal terms marked in their clique
static void mark_side(kn_world* w, sap_state* s, const kn_contact_side* sd) {
  if (sd->kind == KN_SIDE_COLLIDER) return;
  int c = kn_sim_side_clique(w, sd);
  kn_clique* cq = &w->cliques[c];
  kn_point_map m;
  for (int k = 0; k < (sd->kind == KN_SIDE_SURFACE ? sd->n : 1); k++) {
    cq->ops->point_map(cq->self, sd->point[k], NULL, w->scene->time_step, &m);
    for (int a = 0; a < m.n; a++) memset(s->q[c].mark + m.col[a], 1, 3);
  }
}

/* The route of a deformable clique with np of nd DoFs touched. FEM bodies: the Schur complement.
 * MPM grids (contact.solver.mpm_clique): the Schur complement S (np x np) is dense, one forward
 * solve per DoF to build and np^3 / 3 flops per SAP factorization; the whole grid keeps A_MPM's
 * pattern (14 % of the lower triangle on the examples' grids), factored in the free motion's time.
 * Measured on the examples (s per step, Schur / grid, 2026-11-22): shake (np 1422 of 1617) 0.129 /
 * 0.071; rolling (940 of 1652) 0.227 / 0.191; squeeze (882 of 1029) 0.038 / 0.025; pouring (the
 * whole grid, ~500) 0.072 / 0.068; tearing (~430 of 1262) 0.030 / 0.033. A small support (ball on
 * slope: 81 of 1098) keeps the Schur complement. */
static sap_route choose_route(const sap_state* s, kn_clique_kind kind, int np, int nd) {
  if (s->fem_full) return SAP_ROUTE_DENSE;
  if (kind != KN_CLIQUE_MPM) return SAP_ROUTE_SCHUR;
  if (s->mpm_clique != KN_SCENE_MPM_AUTO) return s->mpm_clique == KN_SCENE_MPM_GRID ? SAP_ROUTE_SPARSE : SAP_ROUTE_SCHUR;
  return 2 * np >= nd && np >= 300 ? SAP_ROUTE_SPARSE : SAP_ROUTE_SCHUR;
}

/* One deformable clique into SAP. SAP's regularization R (§2.1) is estimated from a diagonal of
 * the clique's matrix; so that it does not depend on the route, an FEM body's comes from its Schur
 * complement S (its effective mass at the touched vertices) and an MPM grid's from A (its nodal
 * masses), whatever SAP is given: kn_sap_adapter_contacts scales sigma and beta when they differ. */
static kn_status deformable_clique(kn_world* w, sap_state* s, int c, kn_error* err) {
  kn_clique* cq = &w->cliques[c];
  sap_clique* q = &s->q[c];
  int nd = q->ndof;
  q->np = 0;
  for (int j = 0; j < nd; j++) {
    q->col[j] = -1;
    if (q->mark[j]) q->P[q->np++] = j;
  }
  if (q->np == 0 && !s->fem_full) return KN_OK;
  int fem = cq->ops->kind == KN_CLIQUE_FEM;
  q->route = choose_route(s, cq->ops->kind, q->np, nd);
  const double* vstar = cq->ops->v_star(cq->self);
  cq->ops->diagonal(cq->self, q->diagA);
  kn_status st = KN_OK;
  if (q->np > 0 && (fem || q->route == SAP_ROUTE_SCHUR)) {
    st = kn_sap_adapter_grow(&q->S, &q->scap, (size_t)q->np * (size_t)q->np, err);
    if (!st) st = cq->ops->schur(cq->self, q->P, q->np, q->S, err);
    if (st) return kn_error_prefix(err, "stage 2 (Schur complement of %s '%s'): ", fem ? "deformable" : "MPM body",
                                   cq->ops->name(cq->self));
    for (int a = 0; a < q->np; a++) q->diagS[q->P[a]] = q->S[(size_t)a * q->np + a];
  }
  q->diag_ref = fem ? q->diagS : q->diagA;
  q->diag_used = q->route == SAP_ROUTE_SCHUR ? q->diagS : q->diagA;
  if (q->route == SAP_ROUTE_SCHUR) {
    for (int a = 0; a < q->np; a++) q->col[q->P[a]] = a, q->vs[a] = vstar[q->P[a]];
    st = kn_sap_add_clique(s->prob, q->np, q->S, q->vs, &q->sap, err);
  } else {
    for (int j = 0; j < nd; j++) q->col[j] = j;
    memcpy(q->vs, vstar, (size_t)nd * sizeof(double));
    if (q->route == SAP_ROUTE_SPARSE) {
      kn_csc_view A = cq->ops->sparse(cq->self);
      st = kn_sap_add_clique_sparse(s->prob, nd, A.p, A.i, A.x, q->vs, &q->sap, err);
    } else {
      const double* D = cq->ops->dense(cq->self, err);
      st = D ? kn_sap_add_clique(s->prob, nd, D, q->vs, &q->sap, err) : KN_ERR_NOMEM;
    }
  }
  if (st) return kn_error_prefix(err, "stage 2 (clique of %s '%s'): ", fem ? "deformable" : "MPM body",
                                 cq->ops->name(cq->self));
  return KN_OK;
}

kn_status kn_sap_adapter_cliques(kn_world* w, sap_state* s, kn_error* err) {
  kn_status st = KN_OK;
  for (int c = 0; c < w->nclique; c++) {
    kn_clique* cq = &w->cliques[c];
    sap_clique* q = &s->q[c];
    q->ndof = cq->ops->ndof(cq->self), q->sap = -1, q->np = 0;
    if ((st = reserve_dofs(q, (size_t)q->ndof, err))) return st;
    memset(q->mark, 0, (size_t)q->ndof);
    if (cq->ops->kind != KN_CLIQUE_TREE) continue;
    q->route = SAP_ROUTE_TREE;
    for (int j = 0; j < q->ndof; j++) q->col[j] = j;
    cq->ops->diagonal(cq->self, q->diagA);
    q->diag_ref = q->diag_used = q->diagA;
    st = kn_sap_add_clique(s->prob, q->ndof, cq->ops->dense(cq->self, err), cq->ops->v_star(cq->self), &q->sap, err);
    if (st) return kn_error_prefix(err, "stage 1 (free motion) of %s: ", cq->ops->name(cq->self));
  }
  for (int i = s->cand.first_fem; i < s->cand.n; i++) {
    mark_side(w, s, &s->cand.c[i].a);
    mark_side(w, s, &s->cand.c[i].b);
  }
  /* attached vertices are always constrained (kn_sap_adapter_attachments) */
  for (int fi = 0; fi < w->nfem; fi++) {
    const kn_fem_body* b = w->fems[fi].body;
    kn_contact_side sd = {KN_SIDE_SURFACE, fi, 1, {0, 0, 0}, {1, 0, 0}};
    for (int k = 0; k < b->nattach; k++) sd.point[0] = b->attach_vertex[k], mark_side(w, s, &sd);
  }
  for (int c = 0; c < w->nclique && !st; c++)
    if (w->cliques[c].ops->kind != KN_CLIQUE_TREE) st = deformable_clique(w, s, c, err);
  return st;
}

/* Every world clique in full, in the world's order, for the nonlinear backends: their robot-side
 * constraints then share the nonlinear step's v (SAP offsets = theirs). A tree gets its dense A; a
 * deformable its diagonal alone: SAP's regularization reads only diag(A) (§2.1), and the problem is
 * never solved. */
kn_status kn_sap_adapter_cliques_full(kn_world* w, sap_state* s, kn_error* err) {
  for (int c = 0; c < w->nclique; c++) {
    kn_clique* cq = &w->cliques[c];
    sap_clique* q = &s->q[c];
    q->ndof = cq->ops->ndof(cq->self), q->sap = -1, q->np = 0;
    kn_status st = reserve_dofs(q, (size_t)q->ndof + 1, err);
    if (st) return st;
    for (int j = 0; j < q->ndof; j++) q->col[j] = j;
    cq->ops->diagonal(cq->self, q->diagA);
    q->diag_ref = q->diag_used = q->diagA;
    if (cq->ops->kind == KN_CLIQUE_TREE) {
      q->route = SAP_ROUTE_TREE;
      st = kn_sap_add_clique(s->prob, q->ndof, cq->ops->dense(cq->self, err), cq->ops->v_star(cq->self), &q->sap, err);
    } else {
      q->route = SAP_ROUTE_DENSE;
      for (int j = 0; j <= q->ndof; j++) q->P[j] = j; /* colptr: one entry per column, its diagonal */
      st = kn_sap_add_clique_sparse(s->prob, q->ndof, q->P, q->col, q->diagA, cq->ops->v_star(cq->self), &q->sap, err);
    }
    if (st) return kn_error_prefix(err, "stage 2 (clique of '%s'): ", cq->ops->name(cq->self));
  }
  return KN_OK;
}

//---- contacts ----

/* One side of a contact in SAP's terms: its SAP clique and either dense rows (ncol columns) or
 * SAP's nodal form; W_ref and W_used accumulate its share of the Delassus estimate. */
typedef struct {
  int clique, sap, ncol, nodal;
  double* J;            /* dense rows, 3 x ncol */
  kn_sap_nodal_jacobian Jn;
  int cols[27];
  double wt[27];
  int nterm;            /* nodal terms (col = DoF) for the estimate */
  int dof[27];
  double w[27];
} side_rows;

/* (side, sign: -1 for A, +1 for B) => its rows R^T J_side (dense into J, which the caller zeroed,
 * or nodal) */
static void side_jacobian(kn_world* w, sap_state* s, const kn_contact_candidate* cc, const kn_contact_side* sd,
                          double sign, side_rows* out) {
  kn_clique* cq = &w->cliques[out->clique];
  const sap_clique* q = &s->q[out->clique];
  const double* R = cc->R_WC;
  kn_point_map m;
  out->nterm = 0, out->nodal = 0;
  if (sd->kind == KN_SIDE_COLLIDER) {
    const kn_world_collider* c = &w->colliders[sd->body];
    cq->ops->point_map(cq->self, c->body, cc->p, w->scene->time_step, &m);
    int nv = q->ndof;
    /* row r of R_WC^T is column r of R_WC (columns t1, t2, n) */
    for (int r = 0; r < 3; r++)
      for (int j = 0; j < nv; j++) {
        double x = 0;
        for (int a = 0; a < 3; a++) x += R[3 * a + r] * m.B[a * nv + j];
        out->J[r * nv + j] += sign * x;
      }
    return;
  }
  if (sd->kind == KN_SIDE_PARTICLE) {
    cq->ops->point_map(cq->self, sd->point[0], NULL, w->scene->time_step, &m);
    out->nodal = 1;
    out->Jn = (kn_sap_nodal_jacobian){.m = m.n, .col = out->cols, .w = out->wt};
    for (int r = 0; r < 3; r++)
      for (int a = 0; a < 3; a++) out->Jn.B[3 * r + a] = sign < 0 ? -R[3 * a + r] : R[3 * a + r];
    for (int j = 0; j < m.n; j++) {
      out->cols[j] = q->col[m.col[j]], out->wt[j] = m.w[j];
      out->dof[j] = m.col[j], out->w[j] = m.w[j];
    }
    out->nterm = m.n;
    return;
  }
  for (int k = 0; k < sd->n; k++) {
    cq->ops->point_map(cq->self, sd->point[k], NULL, w->scene->time_step, &m);
    if (m.n == 0) continue; /* a fixed vertex */
    double wk = sd->w[k] * m.w[0];
    int c0 = q->col[m.col[0]];
    for (int r = 0; r < 3; r++)
      for (int a = 0; a < 3; a++) out->J[r * out->ncol + c0 + a] += sign * wk * R[3 * a + r];
    out->dof[out->nterm] = m.col[0], out->w[out->nterm++] = wk;
  }
}

// W += the side's share of J diag^-1 J^T: a tree's rows over diag(A), nodal terms w^2 R^T diag^-1 R
static void side_delassus(const sap_clique* q, const side_rows* sr, const double R[9], const double* diag,
                          double W[9]) {
  if (q->route == SAP_ROUTE_TREE) {
    int nv = q->ndof;
    for (int r = 0; r < 3; r++)
      for (int p = 0; p < 3; p++)
        for (int j = 0; j < nv; j++) W[3 * r + p] += sr->J[r * nv + j] * sr->J[p * nv + j] / diag[j];
    return;
  }
  for (int k = 0; k < sr->nterm; k++)
    for (int r = 0; r < 3; r++)
      for (int p = 0; p < 3; p++)
        for (int a = 0; a < 3; a++)
          W[3 * r + p] += sr->w[k] * sr->w[k] * R[3 * a + r] * R[3 * a + p] / diag[sr->dof[k] + a];
}

static double frob(const double W[9]) {
  double t = 0;
  for (int k = 0; k < 9; k++) t += W[k] * W[k];
  return sqrt(t);
}

// the candidate's stiction bias (sim/stiction.h): rigid pairs by nearest point, deformable points keyed
static void stiction_bias(kn_world* w, sap_state* s, int i, kn_sap_contact_params* par) {
  const kn_contact_candidate* cc = &s->cand.c[i];
  double dt = w->scene->time_step;
  if (cc->origin == KN_CANDIDATE_RIGID) {
    kn_stiction_bias(&s->stiction, i, &s->cand.pts[cc->source], s->X_WG, dt, par->vhat_t);
  } else if (cc->origin == KN_CANDIDATE_PARTICLE_RIGID) {
    int g = cc->a.body, k = cc->b.body, p = cc->a.point[0];
    kn_stiction_keyed_bias(&s->mpm_anchors, i - s->cand.first_mpm, kn_stiction_key(g, k, p), cc->p, &s->X_WG[k], 0,
                           cc->R_WC, cc->material.mu, dt, par->vhat_t);
  } else {
    /* a vertex against a rigid collider keeps an anchor at the vertex (x0 of its map); B is the vertex */
    int anchored = cc->origin == KN_CANDIDATE_FEM_VERTEX_RIGID;
    int vtx = cc->b.point[0], ka = anchored ? cc->a.body : 0;
    kn_point_map m;
    if (anchored) {
      kn_clique* cq = &w->cliques[kn_sim_side_clique(w, &cc->b)];
      cq->ops->point_map(cq->self, vtx, NULL, dt, &m);
    }
    kn_stiction_keyed_bias(&s->fem_anchors, i - s->cand.first_fem, anchored ? kn_stiction_key(cc->b.body, ka, vtx) : 0,
                           anchored ? m.x0 : cc->p, anchored ? &s->X_WG[ka] : NULL, 1, cc->R_WC, cc->material.mu, dt,
                           par->vhat_t);
  }
}

// (candidate i) => its SAP contact constraint
static kn_status add_contact(kn_world* w, sap_state* s, int i, kn_error* err) {
  const kn_contact_candidate* cc = &s->cand.c[i];
  kn_sap_contact_params par = kn_sap_contact_params_default();
  par.phi0 = cc->phi;
  par.mu = cc->material.mu;
  par.stiffness = cc->material.stiffness;
  par.dissipation_time = cc->material.dissipation_time;
  stiction_bias(w, s, i, &par);
  side_rows sa, sb; /* not zero-initialized: 1.3 kB a contact; side_jacobian sets what is read */
  sa.clique = kn_sim_side_clique(w, &cc->a), sb.clique = kn_sim_side_clique(w, &cc->b);
  sa.nodal = sb.nodal = 0, sa.nterm = sb.nterm = 0;
  side_rows* sides[2] = {&sa, &sb};
  /* a deformable side none of whose DoFs is free (fixed vertices) has no SAP clique: it is fixed */
  for (int j = 0; j < 2; j++)
    if (sides[j]->clique >= 0 && s->q[sides[j]->clique].sap < 0) sides[j]->clique = -1;
  size_t off = 0;
  for (int j = 0; j < 2; j++)
    if (sides[j]->clique >= 0) {
      const sap_clique* q = &s->q[sides[j]->clique];
      sides[j]->sap = q->sap;
      sides[j]->ncol = q->route == SAP_ROUTE_SCHUR ? q->np : q->ndof;
      sides[j]->J = s->J + off;
      memset(sides[j]->J, 0, 3 * (size_t)sides[j]->ncol * sizeof(double));
      off += 3 * (size_t)sides[j]->ncol;
    }
  /* both sides on one clique (two links of a tree): one block R^T (J_B - J_A) */
  if (sa.clique >= 0 && sa.clique == sb.clique) sb.J = sa.J;
  const kn_contact_side* cs[2] = {&cc->a, &cc->b};
  for (int j = 0; j < 2; j++)
    if (sides[j]->clique >= 0) side_jacobian(w, s, cc, cs[j], j ? 1.0 : -1.0, sides[j]);
  /* the regularization from the reference diagonals when a route gave SAP another matrix */
  int scale = 0;
  for (int j = 0; j < 2; j++)
    if (sides[j]->clique >= 0) scale |= s->q[sides[j]->clique].diag_ref != s->q[sides[j]->clique].diag_used;
  if (scale) {
    double Wref[9] = {0}, Wused[9] = {0};
    for (int j = 0; j < 2; j++)
      if (sides[j]->clique >= 0) {
        const sap_clique* q = &s->q[sides[j]->clique];
        side_delassus(q, sides[j], cc->R_WC, q->diag_ref, Wref);
        side_delassus(q, sides[j], cc->R_WC, q->diag_used, Wused);
      }
    double ratio = frob(Wref) / frob(Wused);
    par.sigma *= ratio;
    par.beta *= sqrt(ratio);
  }
  kn_status st;
  int index;
  if (sa.clique >= 0 && sa.clique == sb.clique)
    st = kn_sap_add_contact(s->prob, sa.sap, sa.J, -1, NULL, &par, &index, err);
  else if (sa.clique < 0 || sb.clique < 0) {
    side_rows* o = sa.clique >= 0 ? &sa : &sb;
    st = o->nodal ? kn_sap_add_contact_nodal(s->prob, o->sap, &o->Jn, -1, NULL, &par, &index, err)
                  : kn_sap_add_contact(s->prob, o->sap, o->J, -1, NULL, &par, &index, err);
  } else if (sa.nodal)
    st = kn_sap_add_contact_nodal(s->prob, sa.sap, &sa.Jn, sb.sap, sb.J, &par, &index, err);
  else
    st = kn_sap_add_contact(s->prob, sa.sap, sa.J, sb.sap, sb.J, &par, &index, err);
  if (!st) st = kn_sap_adapter_note(s, index, (sap_info){KN_SAP_CONTACT, -1, -1, -1, -1, i}, err);
  return st;
}

kn_status kn_sap_adapter_contacts(kn_world* w, sap_state* s, kn_error* err) {
  size_t need = 0;
  for (int c = 0; c < w->nclique; c++) need += 3 * (size_t)s->q[c].ndof; /* two sides never exceed all */
  kn_status st = kn_sap_adapter_grow(&s->J, &s->jcap, need + 6, err);
  if (!st) st = kn_stiction_reserve(&s->stiction, s->cand.first_fem, err);
  if (!st) st = kn_stiction_keyed_reserve(&s->fem_anchors, s->cand.nfem, err);
  if (!st) st = kn_stiction_keyed_reserve(&s->mpm_anchors, s->cand.nmpm, err);
  for (int i = 0; !st && i < s->cand.n; i++)
    if ((st = add_contact(w, s, i, err))) {
      char what[256];
      kn_sim_candidate_describe(w, &s->cand, i, what, sizeof what);
      return kn_error_prefix(err, "stage 2 (%s): ", what);
    }
  return st;
}

//---- FEM attachments ----

/* the tree's commanded velocity u (add_pd's, in s->v_ahead; returned) and its kinematics at
 * q_n (+) dt u in s->ahead[tree], computed once a step: where its links' points would be after it */
static const double* tree_ahead(kn_world* w, sap_state* s, int tree) {
  kn_world_tree* tr = &w->trees[tree];
  const double* u = s->v_ahead;
  for (int k = 0; k < tree; k++) u += w->trees[k].robot->model->nv;
  if (!s->ahead_step[tree]) {
    kn_mb_integrate(tr->robot->model, tr->q, u, w->scene->time_step, s->q_ahead);
    kn_mb_kinematics(tr->robot->model, s->q_ahead, NULL, s->ahead[tree]);
    s->ahead_step[tree] = 1;
  }
  return u;
}

/* d6: one fixed constraint per attached vertex (§5.4, Drake's SapFixedConstraint, after the
 * welds): g0 = x_v - p_W at x_n, q_n; v_c = v_v - v_point, i.e. +I on the vertex's columns of its
 * clique and -Jv of the rigid body at the point (none for a world point or a tree with nv = 0,
 * whose point is fixed). The point's path over the step is not the linear map p_W + dt Jv v: a
 * link turning by dt w carries it (1 - cos, dt w - sin) of its lever arm off that line, O(dt^2 w^2)
 * (the twisted rods at h 2 s turn 144 deg a step: 2.6 lever arms, so the vertices glued to the
 * line ended 5.8 cm off their link). The constraint is given that bend c = p(q_n (+) dt u) - p_W -
 * dt Jv u at the velocity u the tree's PDs command (add_pd, sap_stages.c; v_n where none),
 * fed forward (kn_sap_add_fixed_curved): the map stays affine in v, exact where the link moves as
 * commanded; what is left is O(dt^2 w (v - u)), the tracking error's. */
kn_status kn_sap_adapter_attachments(kn_world* w, sap_state* s, kn_error* err) {
  s->first_attach = kn_sap_problem_num_constraints(s->prob);
  s->nattach = 0;
  for (int t = 0; t < s->nahead; t++) s->ahead_step[t] = 0;
  for (int fi = 0; fi < w->nfem; fi++) {
    const kn_world_fem* F = &w->fems[fi];
    const kn_fem_body* b = F->body;
    int c = w->first_fem_clique + fi;
    kn_clique* cq = &w->cliques[c];
    const sap_clique* q = &s->q[c];
    if (b->nattach == 0) continue;
    int ncol = q->route == SAP_ROUTE_SCHUR ? q->np : q->ndof;
    for (int k = 0; k < b->nattach; k++) {
      int v = b->attach_vertex[k], j = b->attach_body[k], tree = F->attach_tree[j], body = F->attach_link[j];
      int nvr = tree >= 0 ? w->trees[tree].robot->model->nv : 0;
      kn_status st = kn_sap_adapter_grow(&s->J, &s->jcap, 3 * (size_t)(ncol + nvr) + 6, err);
      if (st) return st;
      const double* pB = F->attach_point + 3 * k;
      double pW[3], g0[3];
      if (tree >= 0)
        kn_pose_apply(&w->trees[tree].data->X_wb[body], pB, pW);
      else
        memcpy(pW, pB, sizeof pW);
      kn_point_map m;
      cq->ops->point_map(cq->self, v, NULL, w->scene->time_step, &m);
      for (int a = 0; a < 3; a++) g0[a] = m.x0[a] - pW[a];
      double *Jf = s->J, *Jr = s->J + 3 * (size_t)ncol;
      memset(Jf, 0, 3 * (size_t)ncol * sizeof *Jf);
      for (int a = 0; m.n > 0 && a < 3; a++) Jf[a * ncol + q->col[m.col[0]] + a] = 1.0;
      int index, cr = tree >= 0 ? w->clique_of_tree[tree] : -1;
      if (cr >= 0) {
        const kn_world_tree* tr = &w->trees[tree];
        kn_mb_point_jacobian(tr->robot->model, tr->data, body, pB, s->Jv, NULL);
        for (int r = 0; r < 3 * nvr; r++) Jr[r] = -s->Jv[r];
        const double* va = tree_ahead(w, s, tree);
        double pA[3], bend[3];
        kn_pose_apply(&s->ahead[tree]->X_wb[body], pB, pA);
        for (int a = 0; a < 3; a++) {
          double lin = 0;
          for (int i = 0; i < nvr; i++) lin += s->Jv[a * nvr + i] * va[i];
          bend[a] = pA[a] - pW[a] - w->scene->time_step * lin;
        }
        st = kn_sap_add_fixed_curved(s->prob, q->sap, Jf, s->q[cr].sap, Jr, g0, bend, &index, err);
      } else {
        st = kn_sap_add_fixed(s->prob, q->sap, Jf, -1, NULL, g0, &index, err);
      }
      if (!st) st = kn_sap_adapter_note(s, index, (sap_info){KN_SAP_FIXED, -3, fi, tree, body, v}, err);
      if (st) return kn_error_prefix(err, "stage 2 (attachment of deformable '%s' vertex %d): ", F->name, v);
      s->nattach++;
    }
  }
  return KN_OK;
}
