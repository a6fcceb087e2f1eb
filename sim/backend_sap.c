/* The `sap` backend: the two-stage time step of the SAP digest (§1) over the world's trees.
 *
 *   a. controllers at t_n + dt (their references meet q_n+1, the PD being implicit); kinematics of
 *      every tree at q_n and the world pose of every collider;
 *   b. contact detection (kn_collision_detect with contact.margin);
 *   c. free motion per tree with nv > 0 (one clique each): A = M + dt D and v* from the explicit
 *      forces only: gravity and the controllers' feed-forward (tau0: gravity compensation) of the
 *      dofs WITHOUT a PD constraint, never the PD terms (§1.2, §5.3, pitfall 5);
 *   d. constraints in Drake's order: contacts (v_c = R_WC^T (v_B - v_A), §0), joint limits inside
 *      Drake's activation window (§5.2), one implicit PD per controlled dof with u_ff = tau0
 *      (Drake: the feed-forward of a PD-controlled actuator enters only the constraint, clamped
 *      together with the PD term by the effort limit, §5.3), couplers for mimic joints (§5.4), then the scene's welds (§5.4; Drake's order: couplers,
 *      distance, ball, weld);
 *   e. kn_sap_solve warm-started from v_n, then q_n+1 = q_n + dt N(q_n) v_n+1 (kn_mb_advance);
 *   f. statistics and contact forces gamma / dt.
 * One kn_sap_problem and one kn_sap_solver live across steps; buffers grow only with the number
 * of contacts. */
#include <cholmod.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/backend.h"
#include "sim/fem_contact.h"
#include "sim/stiction.h"

struct fem_all;
static void fem_all_free(struct fem_all* A, int nfem);
static struct fem_all* fem_all_create(const kn_world* w);
struct mpm_all;
static void mpm_all_free(struct mpm_all* A, int nmpm);
static struct mpm_all* mpm_all_create(kn_world* w);

/* what a SAP constraint is, for messages */
typedef struct {
  kn_sap_kind kind;
  int tree, body, a, b; /* tree/body (joint) for limit/PD/coupler; colliders a, b for contacts */
  int point;            /* contacts: index of the detection's point */
} constraint_info;

/* one side of a weld: a body of a tree with nv > 0, or a fixed frame in the world (tree -1) */
typedef struct {
  int tree, body;
  kn_pose X_bf; /* weld frame in the body frame (in the world when tree = -1) */
} weld_side;

typedef struct {
  kn_sap_problem* prob;
  kn_sap_solver* solver;
  kn_sap_options opt;
  int* clique_of_tree;   /* -1 for nv = 0 */
  int* tree_of_clique;
  int nclique, ntree;
  double** A;            /* per tree nv x nv */
  double** v_star;       /* per tree nv */
  double* scratch;       /* max nv^2 + nv */
  double* tau;           /* max nv: explicit forces of one tree (tau0 without the PD dofs) */
  double* J;             /* 3 x max nv, twice: A side and B side */
  double* Jv;            /* 3 x max nv */
  kn_pose* X_WG;         /* per collider */
  double* reach;         /* per collider: speculative detection distance (kn_sim_collider_reach) */
  kn_stiction stiction;  /* rigid contacts' stiction anchors, kept from step to step */
  kn_stiction_keyed fem_anchors, mpm_anchors; /* FEM vertices' and MPM particles' against rigid colliders */
  double* v_guess;       /* total nv */
  double* v_next;
  double* gamma;         /* growable */
  int gamma_cap;
  constraint_info* info; /* growable */
  int info_cap;
  double* Jw;            /* 3 x max nv */
  weld_side (*welds)[2]; /* per scene weld: A (P) and B (Q) */
  struct fem_all* fem;   /* FEM bodies' scratch (NULL without deformables) */
  int fem_full;          /* 1: full A as a dense clique instead of the Schur complement */
  int mpm_clique;        /* kn_scene_mpm_clique */
  int total_tree_nv;
  size_t vcap;           /* doubles in v_guess and v_next */
  int nfem;
  struct mpm_all* mpm;   /* MPM bodies' scratch (NULL without them) */
  int nmpm_grid;
} sap_state;

static void sap_free(void* p) {
  sap_state* s = p;
  if (!s) return;
  kn_sap_problem_free(s->prob);
  kn_sap_solver_free(s->solver);
  for (int k = 0; s->A && k < s->ntree; k++) free(s->A[k]);
  for (int k = 0; s->v_star && k < s->ntree; k++) free(s->v_star[k]);
  free(s->A);
  free(s->v_star);
  free(s->clique_of_tree);
  free(s->tree_of_clique);
  free(s->scratch);
  free(s->tau);
  free(s->J);
  free(s->Jv);
  free(s->X_WG);
  free(s->reach);
  kn_stiction_free(&s->stiction);
  kn_stiction_keyed_free(&s->fem_anchors);
  kn_stiction_keyed_free(&s->mpm_anchors);
  free(s->v_guess);
  free(s->v_next);
  free(s->gamma);
  free(s->info);
  free(s->Jw);
  free(s->welds);
  fem_all_free(s->fem, s->nfem);
  mpm_all_free(s->mpm, s->nmpm_grid);
  free(s);
}

/* the scene's welds => sides (kinematics at q_0, which kn_world_create leaves in each tree's data):
 * P = pose on A (or B's frame at t = 0 when no pose is given), Q = B's frame; a side on a tree with
 * nv = 0 becomes a fixed world frame */
static kn_status welds_resolve(kn_world* w, sap_state* s, kn_error* err) {
  const kn_scene* sc = w->scene;
  for (unsigned i = 0; i < sc->doc->nwelds; i++) {
    const kn_scene_weld* wd = &sc->doc->welds[i];
    char key[64];
    const char* names[2] = {wd->body_a, wd->body_b};
    kn_pose X_W[2];
    for (int j = 0; j < 2; j++) {
      int tree, body;
      snprintf(key, sizeof key, "welds[%u].%s", i, j ? "body_b" : "body_a");
      if (!kn_sim_find_body(w, names[j], &tree, &body))
        return kn_scene_fail(sc, err, KN_ERR_INVALID, key, "'%s' is not \"world\", an object, \"object/link\" or "
                             "\"robot/link\" of the scene", names[j]);
      weld_side* sd = &s->welds[i][j];
      if (tree >= 0) {
        kn_world_tree* tr = &w->trees[tree];
        kn_mb_kinematics(tr->robot->model, tr->q, NULL, tr->data);
        X_W[j] = tr->data->X_wb[body];
      } else {
        kn_pose_identity(&X_W[j]);
      }
      if (tree >= 0 && w->trees[tree].robot->model->nv == 0) tree = -1, body = -1;
      sd->tree = tree, sd->body = body;
    }
    snprintf(key, sizeof key, "welds[%u]", i);
    if (s->welds[i][0].tree < 0 && s->welds[i][1].tree < 0)
      return kn_scene_fail(sc, err, KN_ERR_INVALID, key,
                           "weld '%s' joins '%s' and '%s', which are both fixed in the world", wd->name ? wd->name : "",
                           wd->body_a, wd->body_b);
    if (s->welds[i][0].tree == s->welds[i][1].tree && s->welds[i][0].body == s->welds[i][1].body)
      return kn_scene_fail(sc, err, KN_ERR_INVALID, key, "weld joins '%s' to itself", wd->body_a);
    /* X_AP: the given pose, or B in A at t = 0; X_BQ = identity (Q = B's frame) */
    kn_pose X_AP, Ainv;
    if (wd->pose) {
      kn_pose_from_xyz_rpy(wd->pose->xyz, wd->pose->rpy, &X_AP);
    } else {
      kn_pose_inv(&X_W[0], &Ainv);
      kn_pose_mul(&Ainv, &X_W[1], &X_AP);
    }
    kn_pose_identity(&s->welds[i][1].X_bf);
    /* a world side keeps its frame in world coordinates */
    if (s->welds[i][0].tree < 0)
      kn_pose_mul(&X_W[0], &X_AP, &s->welds[i][0].X_bf);
    else
      s->welds[i][0].X_bf = X_AP;
    if (s->welds[i][1].tree < 0) s->welds[i][1].X_bf = X_W[1];
  }
  return KN_OK;
}

/* (weld side, world point M, sign) => J (6 x nv of the side's tree) += sign [Jw; Jv] at M */
static void weld_block(const kn_world* w, sap_state* s, const weld_side* sd, const double M[3], double sign,
                       double* J) {
  const kn_world_tree* tr = &w->trees[sd->tree];
  const kn_mb_model* m = tr->robot->model;
  int nv = m->nv;
  kn_pose Xinv;
  kn_pose_inv(&tr->data->X_wb[sd->body], &Xinv);
  double p_b[3];
  kn_pose_apply(&Xinv, M, p_b);
  kn_mb_point_jacobian(m, tr->data, sd->body, p_b, s->Jv, s->Jw);
  for (int r = 0; r < 3; r++)
    for (int j = 0; j < nv; j++) {
      J[r * nv + j] += sign * s->Jw[r * nv + j];
      J[(3 + r) * nv + j] += sign * s->Jv[r * nv + j];
    }
}

static kn_status sap_create(kn_world* w, void** out, kn_error* err) {
  const kn_scene* sc = w->scene;
  sap_state* s = kn_calloc(1, sizeof *s);
  if (!s) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", sc->path);
  s->prob = kn_sap_problem_create(sc->time_step);
  s->solver = kn_sap_solver_create();
  s->opt = kn_sap_options_default();
  const kn_scene_solver* so = sc->doc->contact ? sc->doc->contact->solver : NULL;
  if (so) {
    if (so->max_iterations) s->opt.max_iterations = *so->max_iterations;
    if (so->rel_tolerance) s->opt.rel_tolerance = *so->rel_tolerance;
    if (so->abs_tolerance) s->opt.abs_tolerance = *so->abs_tolerance;
    s->opt.linear_solver = (kn_sap_linear_solver)so->linear_solver;
    s->mpm_clique = so->mpm_clique;
  }
  int nt = w->ntree, maxnv = 0, total = 0;
  s->clique_of_tree = kn_calloc((size_t)nt, sizeof *s->clique_of_tree);
  s->tree_of_clique = kn_calloc((size_t)nt, sizeof *s->tree_of_clique);
  /* A and v* of every tree share one block each: tree k's at A[k], v_star[k] */
  s->A = kn_calloc((size_t)nt, sizeof *s->A);
  s->v_star = kn_calloc((size_t)nt, sizeof *s->v_star);
  int ok = s->prob && s->solver && s->clique_of_tree && s->tree_of_clique && s->A && s->v_star;
  if (ok) s->ntree = nt;
  for (int k = 0; ok && k < nt; k++) {
    int nv = w->trees[k].robot->model->nv;
    if (nv > maxnv) maxnv = nv;
    total += nv;
    s->clique_of_tree[k] = nv > 0 ? s->nclique++ : -1;
    if (nv > 0) s->tree_of_clique[s->clique_of_tree[k]] = k;
    s->A[k] = kn_calloc((size_t)nv * (size_t)nv, sizeof(double));
    s->v_star[k] = kn_calloc((size_t)nv, sizeof(double));
    ok = s->A[k] && s->v_star[k];
  }
  if (ok) {
    s->scratch = kn_calloc((size_t)maxnv * (size_t)maxnv + (size_t)maxnv, sizeof(double));
    s->tau = kn_calloc((size_t)maxnv, sizeof(double));
    s->J = kn_calloc(12 * (size_t)maxnv, sizeof(double)); /* 3 x nv twice (contacts), 6 x nv twice (welds) */
    s->Jv = kn_calloc(3 * (size_t)maxnv, sizeof(double));
    s->Jw = kn_calloc(3 * (size_t)maxnv, sizeof(double));
    s->welds = kn_calloc(sc->doc->nwelds, sizeof *s->welds);
    s->X_WG = kn_calloc((size_t)w->ncollider, sizeof *s->X_WG);
    s->reach = kn_calloc((size_t)w->ncollider, sizeof *s->reach);
    s->v_guess = kn_calloc((size_t)total, sizeof(double));
    s->v_next = kn_calloc((size_t)total, sizeof(double));
    s->total_tree_nv = total;
    s->vcap = (size_t)total;
    ok = s->scratch && s->tau && s->Jw && s->welds && s->J && s->Jv && s->X_WG && s->reach && s->v_guess &&
         s->v_next;
  }
  if (!ok) {
    sap_free(s);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", sc->path);
  }
  if (w->nfem > 0) {
    s->fem = fem_all_create(w);
    s->nfem = w->nfem;
    s->fem_full = so && so->fem_schur && !*so->fem_schur;
    if (!s->fem) {
      sap_free(s);
      return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", sc->path);
    }
  }
  if (w->nmpm > 0) {
    s->mpm = mpm_all_create(w);
    s->nmpm_grid = w->nmpm_grid;
    s->fem_full = so && so->fem_schur && !*so->fem_schur;
    if (!s->mpm) {
      sap_free(s);
      return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", sc->path);
    }
  }
  kn_status st = welds_resolve(w, s, err);
  if (st) {
    sap_free(s);
    return st;
  }
  *out = s;
  return KN_OK;
}

// grow the gamma and info buffers
static kn_status reserve(sap_state* s, int nconstraint, int nimpulse, kn_error* err) {
  if (nimpulse > s->gamma_cap) {
    int cap = s->gamma_cap ? s->gamma_cap : 64;
    while (cap < nimpulse) cap *= 2;
    double* g = realloc(s->gamma, (size_t)cap * sizeof *g);
    if (!g) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
    s->gamma = g, s->gamma_cap = cap;
  }
  if (nconstraint > s->info_cap) {
    int cap = s->info_cap ? s->info_cap : 64;
    while (cap < nconstraint) cap *= 2;
    constraint_info* c = realloc(s->info, (size_t)cap * sizeof *c);
    if (!c) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
    s->info = c, s->info_cap = cap;
  }
  return KN_OK;
}

static kn_status note(sap_state* s, int index, constraint_info ci, kn_error* err) {
  kn_status st = reserve(s, index + 1, 0, err);
  if (!st) s->info[index] = ci;
  return st;
}

/* (collider side, contact point, sign) => J (3 x nv) += sign R_WC^T Jv(p) of that collider's body */
static void contact_block(const kn_world* w, sap_state* s, int collider, const kn_contact_point* cp, double sign,
                          double* J) {
  const kn_world_collider* c = &w->colliders[collider];
  const kn_world_tree* tr = &w->trees[c->tree];
  const kn_mb_model* m = tr->robot->model;
  int nv = m->nv;
  kn_pose Xinv;
  kn_pose_inv(&tr->data->X_wb[c->body], &Xinv);
  double p_b[3];
  kn_pose_apply(&Xinv, cp->p, p_b);
  kn_mb_point_jacobian(m, tr->data, c->body, p_b, s->Jv, NULL);
  /* row r of R_WC^T is column r of R_WC (columns t1, t2, n) */
  for (int r = 0; r < 3; r++)
    for (int j = 0; j < nv; j++) {
      double x = 0;
      for (int a = 0; a < 3; a++) x += cp->R_WC[3 * a + r] * s->Jv[a * nv + j];
      J[r * nv + j] += sign * x;
    }
}


//---- FEM bodies (digest 6): contacts of surface vertices, Schur cliques, recovery ----

/* FEM contacts and their sides: sim/fem_contact.h (detection lives there) */
typedef kn_fem_side fem_side;
typedef kn_fem_contact fem_contact;

typedef struct {
  kn_fem_schur* schur;
  int* col;                /* nvert: first column of the vertex in the clique, -1 when absent */
  int* P;                  /* participating free DoFs (Schur mode) */
  unsigned char* mark;     /* nvert */
  int np, ncol, clique;
  double *S, *vs, *dv, *vnext, *diag; /* clique matrix, its v*, recovery, next velocities, diag(S) */
  double* diagA;           /* 3 * nvert: diag(A) per vertex (full mode, for the Delassus estimate) */
  double box[6];           /* bounding box of x_n */
  size_t cap;              /* doubles in S */
} fem_state;

struct fem_all {
  fem_state* f;
  fem_contact* c;          /* the detector's contacts (det->c) */
  int nc;
  kn_fem_detector* det;
  int first_attach, nattach; /* the FEM attachments' fixed constraints (d6), one per vertex */
  double* Jf;              /* 3 x max clique columns, twice */
  size_t jcap;
};

static void fem_all_free(struct fem_all* A, int nfem) {
  if (!A) return;
  for (int i = 0; A->f && i < nfem; i++) {
    fem_state* f = &A->f[i];
    kn_fem_schur_free(f->schur);
    free(f->col), free(f->P), free(f->mark), free(f->S), free(f->vs), free(f->dv), free(f->vnext), free(f->diag), free(f->diagA);
  }
  free(A->f), free(A->Jf);
  kn_fem_detector_free(A->det);
  free(A);
}

static struct fem_all* fem_all_create(const kn_world* w) {
  struct fem_all* A = kn_calloc(1, sizeof *A);
  if (!A) return NULL;
  A->f = kn_calloc((size_t)w->nfem + 1, sizeof *A->f);
  if (!A->f || kn_fem_detector_create(w, &A->det, NULL)) return fem_all_free(A, 0), NULL;
  for (int i = 0; i < w->nfem; i++) {
    fem_state* f = &A->f[i];
    size_t nv = (size_t)w->fems[i].body->mesh.nvert;
    f->schur = kn_fem_schur_create();
    f->col = kn_calloc(nv, sizeof *f->col);
    f->P = kn_calloc(3 * nv, sizeof *f->P);
    f->mark = kn_calloc(nv, 1);
    f->vs = kn_calloc(3 * nv, sizeof(double));
    f->dv = kn_calloc(3 * nv, sizeof(double));
    f->vnext = kn_calloc(3 * nv, sizeof(double));
    f->diag = kn_calloc(3 * nv, sizeof(double));
    f->diagA = kn_calloc(3 * nv, sizeof(double));
    if (!f->diagA || !f->schur || !f->col || !f->P || !f->mark || !f->vs || !f->dv || !f->vnext || !f->diag)
      return fem_all_free(A, w->nfem), NULL;
  }
  return A;
}

// (world at x_n) => A->c[0 .. A->nc): the FEM contacts of sim/fem_contact.c
static kn_status fem_detect(const kn_world* w, const kn_pose* X_WG, struct fem_all* A, kn_error* err) {
  kn_status st = kn_fem_detect(A->det, w, X_WG, err);
  A->c = A->det->c, A->nc = st ? 0 : A->det->nc;
  return st;
}

// (fem side) => J (3 x ncol of its clique) += sign R^T sum_k wt_k E_k
static void fem_block(const fem_state* f, const fem_side* sd, const double R[9], double sign, double* J, int ncol) {
  for (int k = 0; k < sd->n; k++) {
    int c = f->col[sd->vert[k]];
    if (c < 0) continue;
    for (int r = 0; r < 3; r++)
      for (int a = 0; a < 3; a++) J[r * ncol + c + a] += sign * sd->wt[k] * R[3 * a + r];
  }
}

// (fem side, per-vertex diagonal of the clique matrix) => W += sum_k wt_k^2 R^T diag^-1 R
static void fem_delassus(const fem_side* sd, const double* diag, const double R[9], double W[9]) {
  for (int k = 0; k < sd->n; k++) {
    const double* d = diag + 3 * sd->vert[k];
    if (!(d[0] > 0)) continue;
    for (int r = 0; r < 3; r++)
      for (int q = 0; q < 3; q++)
        for (int a = 0; a < 3; a++) W[3 * r + q] += sd->wt[k] * sd->wt[k] * R[3 * a + r] * R[3 * a + q] / d[a];
  }
}

static double frob(const double W[9]) {
  double t = 0;
  for (int k = 0; k < 9; k++) t += W[k] * W[k];
  return sqrt(t);
}

static kn_status grow(double** p, size_t* cap, size_t n, kn_error* err) {
  if (n <= *cap) return KN_OK;
  double* q = realloc(*p, n * sizeof *q);
  if (!q) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  *p = q, *cap = n;
  return KN_OK;
}

/* FEM stage 1: free motion and, from the contacts, each body's clique: the Schur complement S of
 * A on the contact vertices' DoFs with v*_P (digest 6.2), or the full A (fem_full); none when
 * no vertex takes part */
static kn_status fem_cliques(kn_world* w, sap_state* s, kn_error* err) {
  struct fem_all* A = s->fem;
  for (int fi = 0; fi < w->nfem; fi++) {
    fem_state* f = &A->f[fi];
    kn_fem_body* b = w->fems[fi].body;
    int nv = b->mesh.nvert;
    f->clique = -1, f->np = 0, f->ncol = 0;
    memset(f->mark, 0, (size_t)nv);
    for (int c = 0; c < A->nc; c++) {
      const fem_contact* fc = &A->c[c];
      const fem_side* sides[2] = {&fc->a, &fc->b};
      for (int j = 0; j < 2; j++)
        if (sides[j]->fem == fi)
          for (int k = 0; k < sides[j]->n; k++) f->mark[sides[j]->vert[k]] = 1;
    }
    /* attached vertices are always constrained (d6): always in P */
    for (int k = 0; k < b->nattach; k++) f->mark[b->attach_vertex[k]] = 1;
    for (int v = 0; v < nv; v++) {
      f->col[v] = -1;
      if (f->mark[v] && b->free_index[v] >= 0)
        for (int k = 0; k < 3; k++) f->P[f->np++] = 3 * b->free_index[v] + k;
    }
    /* P in increasing DoF order: free_index increases with the vertex index */
    if (f->np == 0 && !s->fem_full) continue;
    const cholmod_sparse* Asp = (const cholmod_sparse*)kn_fem_body_dynamics_matrix(b);
    int n = (int)Asp->nrow;
    kn_status st = KN_OK;
    if (f->np > 0) {
      st = grow(&f->S, &f->cap, (size_t)f->np * (size_t)f->np, err);
      /* the free motion's factor of A at v* (reused, not refactorized), kept until fem_finish's recovery */
      const struct cholmod_factor_struct* L = NULL;
      if (!st) st = kn_fem_body_dynamics_factor(b, &L, err);
      if (!st) st = kn_fem_schur_complement_factored(f->schur, (const struct cholmod_sparse_struct*)Asp, L, f->P, f->np, f->S, err);
      if (st) return kn_error_prefix(err, "stage 2 (Schur complement of deformable '%s'): ", w->fems[fi].name);
      for (int a = 0; a < f->np; a++) {
        int dof = f->P[a];
        f->diag[dof] = f->S[(size_t)a * f->np + a]; /* indexed by free DoF */
      }
    }
    if (!s->fem_full) {
      for (int a = 0; a < f->np; a++) f->vs[a] = 0;
      for (int v = 0, a = 0; v < nv; v++)
        if (f->mark[v] && b->free_index[v] >= 0) {
          f->col[v] = 3 * a;
          memcpy(f->vs + 3 * a, b->v_star + 3 * v, 3 * sizeof(double));
          a++;
        }
      f->ncol = f->np;
      st = kn_sap_add_clique(s->prob, f->np, f->S, f->vs, &f->clique, err);
    } else {
      /* the full A as one dense clique (a check of the elimination on small bodies) */
      double* D = NULL;
      size_t dcap = 0;
      st = grow(&D, &dcap, (size_t)n * (size_t)n, err);
      if (st) return st;
      memset(D, 0, (size_t)n * (size_t)n * sizeof *D);
      const int *Ap = Asp->p, *Ai = Asp->i;
      const double* Ax = Asp->x;
      for (int j = 0; j < n; j++)
        for (int k = Ap[j]; k < Ap[j + 1]; k++) D[(size_t)Ai[k] * n + j] = D[(size_t)j * n + Ai[k]] = Ax[k];
      for (int v = 0; v < nv; v++) {
        int fv = b->free_index[v];
        if (fv < 0) continue;
        f->col[v] = 3 * fv;
        memcpy(f->vs + 3 * fv, b->v_star + 3 * v, 3 * sizeof(double));
        for (int k = 0; k < 3; k++) f->diagA[3 * fv + k] = D[(size_t)(3 * fv + k) * n + 3 * fv + k];
      }
      f->ncol = n;
      st = kn_sap_add_clique(s->prob, n, D, f->vs, &f->clique, err);
      free(D);
    }
    if (st) return kn_error_prefix(err, "stage 2 (clique of deformable '%s'): ", w->fems[fi].name);
  }
  return KN_OK;
}

// (fem side) => the per-vertex diagonal indexed by vertex, from one indexed by free DoF
static void side_diag(const kn_fem_body* b, const fem_side* sd, const double* by_dof, double out[9]) {
  for (int k = 0; k < sd->n; k++) {
    int fv = b->free_index[sd->vert[k]];
    for (int a = 0; a < 3; a++) out[3 * k + a] = fv >= 0 ? by_dof[3 * fv + a] : 0.0;
  }
}

// like fem_delassus with the side's own diagonal
static void side_delassus(const kn_world* w, const fem_side* sd, const double* by_dof, const double R[9], double W[9]) {
  double d[9];
  fem_side tmp = *sd;
  side_diag(w->fems[sd->fem].body, sd, by_dof, d);
  for (int k = 0; k < tmp.n; k++) tmp.vert[k] = k;
  fem_delassus(&tmp, d, R, W);
}

/* FEM stage 2: one SAP contact per detected pair, v_c = R_WC^T (v_B - v_A), B the vertex */
static kn_status fem_contacts(kn_world* w, sap_state* s, kn_error* err) {
  struct fem_all* A = s->fem;
  size_t need = 0;
  for (int fi = 0; fi < w->nfem; fi++) need = need > (size_t)A->f[fi].ncol ? need : (size_t)A->f[fi].ncol;
  kn_status st = grow(&A->Jf, &A->jcap, 6 * need + 6, err);
  if (!st) st = kn_stiction_keyed_reserve(&s->fem_anchors, A->nc, err);
  if (st) return st;
  for (int c = 0; c < A->nc; c++) {
    const fem_contact* fc = &A->c[c];
    const fem_state* fb = &A->f[fc->b.fem];
    kn_sap_contact_params par = kn_sap_contact_params_default();
    par.phi0 = fc->phi;
    par.mu = fc->mat.mu;
    par.stiffness = fc->mat.stiffness;
    par.dissipation_time = fc->mat.dissipation_time;
    /* a vertex against a rigid collider keeps a stiction anchor (sim/stiction.h); B is the vertex */
    int anchored = fc->kind == KN_FEM_VERTEX_RIGID;
    int vtx = fc->b.vert[0], ka = anchored ? fc->a.collider : 0;
    kn_stiction_keyed_bias(&s->fem_anchors, c, anchored ? kn_stiction_key(fc->b.fem, ka, vtx) : 0,
                           anchored ? w->fems[fc->b.fem].body->x + 3 * vtx : fc->p, anchored ? &s->X_WG[ka] : NULL,
                           1, fc->R, fc->mat.mu, w->scene->time_step, par.vhat_t);
    double* Jb = A->Jf;
    double* Ja = A->Jf + 3 * need;
    memset(A->Jf, 0, (6 * need + 6) * sizeof(double));
    fem_block(fb, &fc->b, fc->R, 1.0, Jb, fb->ncol);
    int ca = -1, index;
    double Wr[9] = {0};
    if (fc->a.fem >= 0) {
      const fem_state* fa = &A->f[fc->a.fem];
      fem_block(fa, &fc->a, fc->R, -1.0, Ja, fa->ncol);
      ca = fa->clique;
    } else {
      int tree = w->colliders[fc->a.collider].c.clique;
      if (tree >= 0) {
        kn_contact_point cp;
        memcpy(cp.p, fc->p, sizeof cp.p);
        memcpy(cp.R_WC, fc->R, sizeof cp.R_WC);
        int nv = w->trees[tree].robot->model->nv;
        memset(s->J, 0, 3 * (size_t)nv * sizeof *s->J);
        contact_block(w, s, fc->a.collider, &cp, -1.0, s->J);
        ca = s->clique_of_tree[tree];
        Ja = s->J;
        /* the rigid side of the Delassus estimate: J diag(A)^-1 J^T */
        for (int r = 0; r < 3; r++)
          for (int q = 0; q < 3; q++)
            for (int j = 0; j < nv; j++) Wr[3 * r + q] += Ja[r * nv + j] * Ja[q * nv + j] / s->A[tree][j * nv + j];
      }
    }
    if (s->fem_full) {
      /* same R as with elimination: SAP's w comes from diag of the clique matrix (§2.1), diag(S)
       * with elimination and diag(A) here, so scale sigma and beta by w_S / w_A */
      double WS[9], WA[9];
      memcpy(WS, Wr, sizeof WS), memcpy(WA, Wr, sizeof WA);
      const fem_side* sides[2] = {&fc->a, &fc->b};
      for (int j = 0; j < 2; j++)
        if (sides[j]->fem >= 0) {
          side_delassus(w, sides[j], A->f[sides[j]->fem].diag, fc->R, WS);
          side_delassus(w, sides[j], A->f[sides[j]->fem].diagA, fc->R, WA);
        }
      double ratio = frob(WS) / frob(WA);
      par.sigma *= ratio;
      par.beta *= sqrt(ratio);
    }
    if (ca >= 0)
      st = kn_sap_add_contact(s->prob, ca, Ja, fb->clique, Jb, &par, &index, err);
    else
      st = kn_sap_add_contact(s->prob, fb->clique, Jb, -1, NULL, &par, &index, err);
    if (!st) st = note(s, index, (constraint_info){KN_SAP_CONTACT, -2, fc->b.fem, fc->a.collider, fc->a.fem, fc->b.vert[0]}, err);
    if (st) return kn_error_prefix(err, "stage 2 (contact of deformable '%s' vertex %d): ", w->fems[fc->b.fem].name,
                                   fc->b.vert[0]);
  }
  return KN_OK;
}

/* FEM stage 2, d6: one fixed constraint per attached vertex (§5.4, Drake's SapFixedConstraint,
 * after the welds): g0 = x_v - p_W at x_n, q_n; v_c = v_v - v_point, i.e. +I on the vertex's
 * columns of its clique and -Jv of the rigid body at the point (none for a world point or a tree
 * with nv = 0, whose point is fixed). */
static kn_status fem_attachments(kn_world* w, sap_state* s, kn_error* err) {
  struct fem_all* A = s->fem;
  A->first_attach = kn_sap_problem_num_constraints(s->prob);
  A->nattach = 0;
  for (int fi = 0; fi < w->nfem; fi++) {
    const kn_world_fem* F = &w->fems[fi];
    const kn_fem_body* b = F->body;
    const fem_state* f = &A->f[fi];
    if (b->nattach == 0) continue;
    kn_status st = grow(&A->Jf, &A->jcap, 6 * (size_t)f->ncol + 6, err);
    if (st) return st;
    for (int k = 0; k < b->nattach; k++) {
      int v = b->attach_vertex[k], j = b->attach_body[k], tree = F->attach_tree[j], body = F->attach_link[j];
      const double* pB = F->attach_point + 3 * k;
      double pW[3], g0[3];
      if (tree >= 0)
        kn_pose_apply(&w->trees[tree].data->X_wb[body], pB, pW);
      else
        memcpy(pW, pB, sizeof pW);
      for (int a = 0; a < 3; a++) g0[a] = b->x[3 * v + a] - pW[a];
      double* Jf = A->Jf;
      memset(Jf, 0, 3 * (size_t)f->ncol * sizeof *Jf);
      for (int a = 0; a < 3; a++) Jf[a * f->ncol + f->col[v] + a] = 1.0;
      int index, cq = tree >= 0 ? s->clique_of_tree[tree] : -1;
      if (cq >= 0) {
        const kn_world_tree* tr = &w->trees[tree];
        int nvr = tr->robot->model->nv;
        kn_mb_point_jacobian(tr->robot->model, tr->data, body, pB, s->Jv, NULL);
        for (int r = 0; r < 3 * nvr; r++) s->J[r] = -s->Jv[r];
        st = kn_sap_add_fixed(s->prob, f->clique, Jf, cq, s->J, g0, &index, err);
      } else {
        st = kn_sap_add_fixed(s->prob, f->clique, Jf, -1, NULL, g0, &index, err);
      }
      if (!st) st = note(s, index, (constraint_info){KN_SAP_FIXED, -3, fi, tree, body, v}, err);
      if (st) return kn_error_prefix(err, "stage 2 (attachment of deformable '%s' vertex %d): ", F->name, v);
      A->nattach++;
    }
  }
  return KN_OK;
}

// (gamma) => each FEM body's total attachment force gamma / dt (on the rigid bodies: the opposite)
static void fem_attach_forces(kn_world* w, const sap_state* s, double dt) {
  const struct fem_all* A = s->fem;
  for (int fi = 0; fi < w->nfem; fi++) memset(w->fems[fi].attach_force, 0, sizeof w->fems[fi].attach_force);
  for (int c = 0; c < A->nattach; c++) {
    int i = A->first_attach + c;
    const double* g = s->gamma + kn_sap_constraint_offset(s->prob, i);
    for (int a = 0; a < 3; a++) w->fems[s->info[i].body].attach_force[a] += g[a] / dt;
  }
}

/* FEM after SAP: v_n+1 of every DoF (recovery Dv = X S Dv_P, or the full clique's v), advance,
 * and the total contact force on each body */
static void fem_finish(kn_world* w, sap_state* s, double dt, int first_constraint, double* recovery_time) {
  struct fem_all* A = s->fem;
  *recovery_time = 0;
  for (int fi = 0; fi < w->nfem; fi++) {
    fem_state* f = &A->f[fi];
    kn_fem_body* b = w->fems[fi].body;
    int nv = b->mesh.nvert;
    memcpy(f->vnext, b->v_star, 3 * (size_t)nv * sizeof(double));
    if (f->clique >= 0) {
      const double* v = s->v_next + kn_sap_clique_offset(s->prob, f->clique);
      if (s->fem_full) {
        for (int u = 0; u < nv; u++)
          if (b->free_index[u] >= 0) memcpy(f->vnext + 3 * u, v + 3 * b->free_index[u], 3 * sizeof(double));
      } else {
        for (int a = 0; a < f->np; a++) f->dv[a] = v[a] - f->vs[a];
        double* dvall = f->diagA; /* 3 * nvert >= 3 * nfree scratch in Schur mode */
        double t0 = kn_wall_time();
        kn_fem_schur_recover(f->schur, f->dv, dvall);
        *recovery_time += kn_wall_time() - t0;
        for (int u = 0; u < nv; u++) {
          int fv = b->free_index[u];
          if (fv >= 0)
            for (int k = 0; k < 3; k++) f->vnext[3 * u + k] = b->v_star[3 * u + k] + dvall[3 * fv + k];
        }
      }
    }
    kn_fem_advance(b, dt, f->vnext);
    memset(w->fems[fi].force, 0, sizeof w->fems[fi].force);
  }
  for (int c = 0; c < A->nc; c++) {
    const fem_contact* fc = &A->c[c];
    const double* g = s->gamma + kn_sap_constraint_offset(s->prob, first_constraint + c);
    for (int a = 0; a < 3; a++) {
      double fa = (fc->R[3 * a] * g[0] + fc->R[3 * a + 1] * g[1] + fc->R[3 * a + 2] * g[2]) / dt;
      w->fems[fc->b.fem].force[a] += fa;
      if (fc->a.fem >= 0) w->fems[fc->a.fem].force[a] -= fa;
    }
  }
}

//---- MPM bodies (digest 7.4, 7.5): particle contacts, Schur cliques over grid nodes, recovery ----

/* one contact per particle inside a rigid collider: A = the particle, B = the collider (§0) */
typedef struct {
  int mpm, local;           /* the deformable and its particle */
  int grid, particle;       /* its grid and the particle's index in the grid body */
  int collider;
  double phi, p[3], R[9]; /* R_WC columns t1, t2, n; n = -grad phi, from the particle into the rigid body */
  kn_contact_material mat;
} mpm_contact;

/* how a grid enters SAP: the Schur complement of A_MPM on the contact particles' support nodes
 * (digest 7.5 step 6), the whole grid as a sparse clique in A_MPM's pattern, or the full A as one
 * dense clique (contact.solver.fem_schur: false, the elimination check) */
typedef enum { MPM_SCHUR = 0, MPM_GRID, MPM_DENSE } mpm_route;

typedef struct {
  kn_fem_schur* schur;
  int *col, *P;             /* per active node: first clique column (-1 absent); participating DoFs */
  unsigned char* mark;      /* per active node */
  int np, ncol, clique;
  mpm_route route;
  double *S, *vs, *dv, *dvall, *vnext, *diagS, *diagA;
  size_t ncap, scap;        /* nodes and S doubles allocated */
  int *prev_index, prev_n;  /* the last step's nodes (sorted) and their v_n+1: the warm start */
  double* prev_v;
  size_t prev_cap;
} mpm_state;

struct mpm_all {
  mpm_state* m;
  mpm_contact* c;
  int nc, ccap, first;
};

static void mpm_all_free(struct mpm_all* A, int nmpm) {
  if (!A) return;
  for (int i = 0; A->m && i < nmpm; i++) {
    mpm_state* m = &A->m[i];
    kn_fem_schur_free(m->schur);
    free(m->col), free(m->P), free(m->mark), free(m->S), free(m->vs), free(m->dv), free(m->dvall), free(m->vnext);
    free(m->diagS), free(m->diagA), free(m->prev_index), free(m->prev_v);
  }
  free(A->m), free(A->c);
  free(A);
}

static struct mpm_all* mpm_all_create(kn_world* w) {
  struct mpm_all* A = kn_calloc(1, sizeof *A);
  if (!A) return NULL;
  A->m = kn_calloc((size_t)w->nmpm_grid, sizeof *A->m);
  if (!A->m) return mpm_all_free(A, 0), NULL;
  for (int g = 0; g < w->nmpm_grid; g++)
    if (!(A->m[g].schur = kn_fem_schur_create())) return mpm_all_free(A, w->nmpm_grid), NULL;
  for (int i = 0; i < w->nmpm; i++)
    if (!(w->mpms[i].collider_force = kn_calloc(3 * (size_t)w->ncollider + 3, sizeof(double))))
      return mpm_all_free(A, w->nmpm_grid), NULL;
  return A;
}

// per-node arrays for n active nodes
static kn_status mpm_reserve(mpm_state* m, size_t n, kn_error* err) {
  if (n <= m->ncap) return KN_OK;
  size_t c = n + n / 2 + 16;
  free(m->col), free(m->P), free(m->mark), free(m->vs), free(m->dv), free(m->dvall), free(m->vnext);
  free(m->diagS), free(m->diagA);
  m->col = kn_calloc(c, sizeof *m->col);
  m->P = kn_calloc(3 * c, sizeof *m->P);
  m->mark = kn_calloc(c, 1);
  m->vs = kn_calloc(3 * c, sizeof(double));
  m->dv = kn_calloc(3 * c, sizeof(double));
  m->dvall = kn_calloc(3 * c, sizeof(double));
  m->vnext = kn_calloc(3 * c, sizeof(double));
  m->diagS = kn_calloc(3 * c, sizeof(double));
  m->diagA = kn_calloc(3 * c, sizeof(double));
  m->ncap = c;
  if (!m->col || !m->P || !m->mark || !m->vs || !m->dv || !m->dvall || !m->vnext || !m->diagS || !m->diagA) {
    m->ncap = 0;
    return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  return KN_OK;
}

/* (particles at x_n, collider poses) => A->c: particle p of body i against collider k when
 * phi = kn_collider_signed_distance(x_p) < margin; normal -grad phi (into the rigid body, §7.4) */
static kn_status mpm_detect(kn_world* w, sap_state* s, kn_error* err) {
  struct mpm_all* A = s->mpm;
  A->nc = 0;
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
      if (!kn_sim_mpm_bound_init(w, k, &s->X_WG[k], margin, blo, bhi, &bd)) continue;
      for (int p = 0; p < b->np; p++) {
        double g[3];
        if (!kn_sim_mpm_bound_test(&bd, b->x + 3 * p)) continue;
        double phi = kn_collider_signed_distance(w->collision, k, &s->X_WG[k], b->x + 3 * p, g);
        if (!(phi < margin)) continue;
        if (A->nc == A->ccap) {
          int cap = A->ccap ? 2 * A->ccap : 256;
          mpm_contact* c = realloc(A->c, (size_t)cap * sizeof *c);
          if (!c) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
          A->c = c, A->ccap = cap;
        }
        mpm_contact* c = &A->c[A->nc++];
        c->mpm = i, c->local = p, c->grid = w->mpms[i].grid, c->particle = w->mpms[i].first + p;
        c->collider = k, c->phi = phi, c->mat = mat;
        memcpy(c->p, b->x + 3 * p, sizeof c->p);
        double n[3] = {-g[0], -g[1], -g[2]}, t1[3], t2[3];
        double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int a = 0; a < 3; a++) n[a] /= nn;
        /* t1: n x the least-aligned axis, t2 = n x t1 */
        int ax = fabs(n[0]) <= fabs(n[1]) && fabs(n[0]) <= fabs(n[2]) ? 0 : fabs(n[1]) <= fabs(n[2]) ? 1 : 2;
        double e[3] = {0, 0, 0};
        e[ax] = 1;
        t1[0] = n[1] * e[2] - n[2] * e[1], t1[1] = n[2] * e[0] - n[0] * e[2], t1[2] = n[0] * e[1] - n[1] * e[0];
        double tn = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
        for (int a = 0; a < 3; a++) t1[a] /= tn;
        t2[0] = n[1] * t1[2] - n[2] * t1[1], t2[1] = n[2] * t1[0] - n[0] * t1[2], t2[2] = n[0] * t1[1] - n[1] * t1[0];
        for (int a = 0; a < 3; a++) c->R[3 * a] = t1[a], c->R[3 * a + 1] = t2[a], c->R[3 * a + 2] = n[a];
      }
    }
  }
  return KN_OK;
}

/* The route of a grid with np DoFs in the contacts' support out of nd (contact.solver.mpm_clique).
 * The Schur complement S (np x np) is dense: one forward solve per support DoF to build it, and SAP
 * factors S + J^T G J densely, np^3 / 3 flops each time. The whole grid keeps A_MPM's pattern (14 %
 * of the lower triangle on the examples' grids), and CHOLMOD factors it in the free motion's time.
 * Measured on the examples (s per step, Schur / grid, 2026-11-22): shake (np 1422 of 1617) 0.129 /
 * 0.071; rolling (940 of 1652) 0.227 / 0.191; squeeze (882 of 1029) 0.038 / 0.025; pouring (the
 * whole grid, ~500) 0.072 / 0.068; tearing (~430 of 1262) 0.030 / 0.033. A small support (ball on
 * slope: 81 of 1098) keeps the Schur complement. */
static mpm_route choose_route(const sap_state* s, int np, int nd) {
  if (s->fem_full) return MPM_DENSE;
  if (s->mpm_clique != KN_SCENE_MPM_AUTO) return s->mpm_clique == KN_SCENE_MPM_GRID ? MPM_GRID : MPM_SCHUR;
  return 2 * np >= nd && np >= 300 ? MPM_GRID : MPM_SCHUR;
}

/* MPM stage 1: each grid's clique (mpm_route); none for a grid without contacts */
static kn_status mpm_cliques(kn_world* w, sap_state* s, kn_error* err) {
  struct mpm_all* A = s->mpm;
  for (int i = 0; i < w->nmpm_grid; i++) {
    mpm_state* m = &A->m[i];
    kn_mpm_body* b = w->mpm_grids[i];
    int n = b->grid.n, nd = 3 * n;
    kn_status st = mpm_reserve(m, (size_t)n, err);
    if (st) return st;
    m->clique = -1, m->np = 0, m->ncol = 0;
    memset(m->mark, 0, (size_t)n);
    for (int c = 0; c < A->nc; c++) {
      if (A->c[c].grid != i) continue;
      int nodes[27];
      double wt[27];
      int k = kn_mpm_particle_weights(b, A->c[c].particle, nodes, wt);
      for (int j = 0; j < k; j++) m->mark[nodes[j]] = 1;
    }
    for (int a = 0; a < n; a++) {
      m->col[a] = -1;
      if (m->mark[a])
        for (int k = 0; k < 3; k++) m->P[m->np++] = 3 * a + k;
    }
    if (m->np == 0 && !s->fem_full) continue;
    m->route = choose_route(s, m->np, nd);
    const cholmod_sparse* Asp = (const cholmod_sparse*)kn_mpm_dynamics_matrix(b);
    const int *Ap = Asp->p, *Ai = Asp->i;
    const double* Ax = Asp->x;
    /* diag(A_MPM): SAP's Delassus estimate on every route (mpm_contacts) */
    for (int j = 0; j < nd; j++) m->diagA[j] = Ax[Ap[j]];
    if (m->route == MPM_SCHUR) {
      const struct cholmod_factor_struct* L = NULL;
      st = grow(&m->S, &m->scap, (size_t)m->np * (size_t)m->np, err);
      if (!st) st = kn_mpm_dynamics_factor(b, &L, err);
      if (!st) st = kn_fem_schur_complement_factored(m->schur, kn_mpm_dynamics_matrix(b), L, m->P, m->np, m->S, err);
      if (st) return kn_error_prefix(err, "stage 2 (Schur complement of MPM body '%s'): ", b->name);
      for (int a = 0; a < m->np; a++) m->diagS[m->P[a]] = m->S[(size_t)a * m->np + a];
      for (int a = 0, j = 0; a < n; a++)
        if (m->mark[a]) {
          m->col[a] = 3 * j;
          memcpy(m->vs + 3 * j, b->grid.v_star + 3 * a, 3 * sizeof(double));
          j++;
        }
      m->ncol = m->np;
      st = kn_sap_add_clique(s->prob, m->np, m->S, m->vs, &m->clique, err);
    } else {
      for (int a = 0; a < n; a++) m->col[a] = 3 * a;
      memcpy(m->vs, b->grid.v_star, (size_t)nd * sizeof(double));
      m->ncol = nd;
      if (m->route == MPM_GRID) {
        /* A_MPM's lower triangle, sorted, each column led by its diagonal (mpm/free_motion.c) */
        st = kn_sap_add_clique_sparse(s->prob, nd, Ap, Ai, Ax, m->vs, &m->clique, err);
      } else {
        double* D = kn_calloc((size_t)nd * (size_t)nd, sizeof *D);
        if (!D) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
        for (int j = 0; j < nd; j++)
          for (int k = Ap[j]; k < Ap[j + 1]; k++) D[(size_t)Ai[k] * nd + j] = D[(size_t)j * nd + Ai[k]] = Ax[k];
        st = kn_sap_add_clique(s->prob, nd, D, m->vs, &m->clique, err);
        free(D);
      }
    }
    if (st) return kn_error_prefix(err, "stage 2 (clique of MPM body '%s'): ", b->name);
  }
  return KN_OK;
}

/* MPM stage 2: one SAP contact per particle contact, J = R_WC^T [-J_MPM  J_rigid] (§0, §7.4):
 * J_MPM's blocks w_ip I3 over the particle's support nodes */
static kn_status mpm_contacts(kn_world* w, sap_state* s, kn_error* err) {
  struct mpm_all* A = s->mpm;
  kn_status st = KN_OK;
  A->first = kn_sap_problem_num_constraints(s->prob);
  if ((st = kn_stiction_keyed_reserve(&s->mpm_anchors, A->nc, err))) return st;
  for (int c = 0; c < A->nc; c++) {
    const mpm_contact* mc = &A->c[c];
    const mpm_state* m = &A->m[mc->grid];
    const kn_mpm_body* b = w->mpm_grids[mc->grid];
    kn_sap_contact_params par = kn_sap_contact_params_default();
    par.phi0 = mc->phi;
    par.mu = mc->mat.mu;
    par.stiffness = mc->mat.stiffness;
    par.dissipation_time = mc->mat.dissipation_time;
    /* the particle keeps a stiction anchor on the collider (sim/stiction.h); A is the particle */
    kn_stiction_keyed_bias(&s->mpm_anchors, c, kn_stiction_key(mc->grid, mc->collider, mc->particle), mc->p,
                           &s->X_WG[mc->collider], 0, mc->R, mc->mat.mu, w->scene->time_step, par.vhat_t);
    int nodes[27], cols[27];
    double wt[27], WS[9] = {0}, WA[9] = {0};
    int nn = kn_mpm_particle_weights(b, mc->particle, nodes, wt);
    /* J_MPM by node: block j is -w_j R_WC^T on node j's 3 DoFs */
    kn_sap_nodal_jacobian Ja = {.m = nn, .col = cols, .w = wt};
    for (int r = 0; r < 3; r++)
      for (int a = 0; a < 3; a++) Ja.B[3 * r + a] = -mc->R[3 * a + r];
    for (int j = 0; j < nn; j++) {
      cols[j] = m->col[nodes[j]];
      if (m->route == MPM_SCHUR)
        for (int r = 0; r < 3; r++)
          for (int q = 0; q < 3; q++)
            for (int a = 0; a < 3; a++) {
              double rr = wt[j] * wt[j] * mc->R[3 * a + r] * mc->R[3 * a + q];
              WS[3 * r + q] += rr / m->diagS[3 * nodes[j] + a];
              WA[3 * r + q] += rr / m->diagA[3 * nodes[j] + a];
            }
    }
    int tree = w->colliders[mc->collider].c.clique, index;
    if (tree >= 0) {
      kn_contact_point cp;
      memcpy(cp.p, mc->p, sizeof cp.p);
      memcpy(cp.R_WC, mc->R, sizeof cp.R_WC);
      int nv = w->trees[tree].robot->model->nv;
      memset(s->J, 0, 3 * (size_t)nv * sizeof *s->J);
      contact_block(w, s, mc->collider, &cp, +1.0, s->J);
      if (m->route == MPM_SCHUR)
        for (int r = 0; r < 3; r++)
          for (int q = 0; q < 3; q++)
            for (int j = 0; j < nv; j++) {
              double x = s->J[r * nv + j] * s->J[q * nv + j] / s->A[tree][j * nv + j];
              WS[3 * r + q] += x, WA[3 * r + q] += x;
            }
    }
    if (m->route == MPM_SCHUR) {
      /* the same R on every route: SAP's Delassus estimate (§2.1) takes the clique's diagonal,
       * diag(S) here, diag(A_MPM) on the others; sigma and beta scale R_t and R_n with w */
      double ratio = frob(WA) / frob(WS);
      par.sigma *= ratio;
      par.beta *= sqrt(ratio);
    }
    if (tree >= 0)
      st = kn_sap_add_contact_nodal(s->prob, m->clique, &Ja, s->clique_of_tree[tree], s->J, &par, &index, err);
    else
      st = kn_sap_add_contact_nodal(s->prob, m->clique, &Ja, -1, NULL, &par, &index, err);
    if (!st) st = note(s, index, (constraint_info){KN_SAP_CONTACT, -4, mc->mpm, mc->collider, -1, mc->local}, err);
    if (st) return kn_error_prefix(err, "stage 2 (contact of MPM body '%s' particle %d with '%s'): ",
                                   w->mpms[mc->mpm].name, mc->local, w->colliders[mc->collider].name);
  }
  return KN_OK;
}

static int cmp_node(const int* a, const int* b) {
  for (int k = 0; k < 3; k++)
    if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
  return 0;
}

/* warm start of the MPM cliques: each node's v_n+1 of the last step where the node existed, else its
 * v_n from P2G. Measured on the example scenes (Newton iterations per step, P2G v_n -> last v_n+1):
 * rolling 29.5 -> 15.5, shake 30.9 -> 24.0, tearing 17.3 -> 17.0, pouring 16.2 -> 17.7. Contacts
 * stuck to a panel or a roller start inside SAP's thin stiction region (|v_t| <= mu sigma w gamma_n)
 * instead of sliding on the velocity noise that the G2P/P2G round trip adds. */
static void mpm_warm_start(kn_world* w, sap_state* s) {
  for (int i = 0; i < w->nmpm_grid; i++) {
    const mpm_state* m = &s->mpm->m[i];
    const kn_mpm_body* b = w->mpm_grids[i];
    if (m->clique < 0) continue;
    double* g = s->v_guess + kn_sap_clique_offset(s->prob, m->clique);
    int j = 0;
    for (int a = 0; a < b->grid.n; a++) {
      const int* ia = b->grid.index + 3 * a;
      while (j < m->prev_n && cmp_node(m->prev_index + 3 * j, ia) < 0) j++;
      int found = j < m->prev_n && cmp_node(m->prev_index + 3 * j, ia) == 0;
      if (m->col[a] >= 0) memcpy(g + m->col[a], found ? m->prev_v + 3 * j : b->grid.v + 3 * a, 3 * sizeof(double));
    }
  }
}

/* MPM after SAP: every node's v_n+1 (recovery Dv = A^-1 E_P S Dv_P), G2P + plasticity
 * (kn_mpm_advance), contact forces */
static kn_status mpm_finish(kn_world* w, sap_state* s, double dt, kn_error* err) {
  struct mpm_all* A = s->mpm;
  for (int i = 0; i < w->nmpm_grid; i++) {
    mpm_state* m = &A->m[i];
    kn_mpm_body* b = w->mpm_grids[i];
    int n = b->grid.n;
    memcpy(m->vnext, b->grid.v_star, 3 * (size_t)n * sizeof(double));
    if (m->clique >= 0) {
      const double* v = s->v_next + kn_sap_clique_offset(s->prob, m->clique);
      if (m->route != MPM_SCHUR) {
        memcpy(m->vnext, v, 3 * (size_t)n * sizeof(double));
      } else {
        for (int a = 0; a < m->np; a++) m->dv[a] = v[a] - m->vs[a];
        kn_fem_schur_recover(m->schur, m->dv, m->dvall);
        for (int k = 0; k < 3 * n; k++) m->vnext[k] += m->dvall[k];
      }
    }
    if ((size_t)n > m->prev_cap) {
      free(m->prev_index), free(m->prev_v);
      m->prev_cap = (size_t)n + (size_t)n / 2 + 16;
      m->prev_index = malloc(3 * m->prev_cap * sizeof(int));
      m->prev_v = malloc(3 * m->prev_cap * sizeof(double));
      if (!m->prev_index || !m->prev_v) return m->prev_cap = 0, m->prev_n = 0, kn_fail(err, KN_ERR_NOMEM, "out of memory");
    }
    m->prev_n = n;
    memcpy(m->prev_index, b->grid.index, 3 * (size_t)n * sizeof(int));
    memcpy(m->prev_v, m->vnext, 3 * (size_t)n * sizeof(double));
    kn_status st = kn_mpm_advance(b, m->vnext, dt, err);
    if (st) return kn_error_prefix(err, "stage 3 (G2P of MPM body '%s'): ", b->name);
  }
  for (int i = 0; i < w->nmpm; i++) {
    memset(w->mpms[i].force, 0, sizeof w->mpms[i].force);
    memset(w->mpms[i].collider_force, 0, 3 * (size_t)w->ncollider * sizeof(double));
    w->mpms[i].ncontact = 0;
  }
  if (A->nc > w->mpm_contact_cap) {
    int cap = w->mpm_contact_cap ? w->mpm_contact_cap : 64;
    while (cap < A->nc) cap *= 2;
    kn_world_mpm_contact* r = realloc(w->mpm_contacts, (size_t)cap * sizeof *r);
    if (!r) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
    w->mpm_contacts = r, w->mpm_contact_cap = cap;
  }
  for (int c = 0; c < A->nc; c++) {
    const mpm_contact* mc = &A->c[c];
    const double* g = s->gamma + kn_sap_constraint_offset(s->prob, A->first + c);
    kn_world_mpm* M = &w->mpms[mc->mpm];
    kn_world_mpm_contact* o = &w->mpm_contacts[c];
    o->mpm = mc->mpm, o->particle = mc->local, o->collider = mc->collider, o->phi = mc->phi;
    memcpy(o->p, mc->p, sizeof o->p);
    M->ncontact++;
    for (int a = 0; a < 3; a++) {
      /* gamma acts on B (the collider); the particle gets the opposite */
      double f = (mc->R[3 * a] * g[0] + mc->R[3 * a + 1] * g[1] + mc->R[3 * a + 2] * g[2]) / dt;
      o->n[a] = mc->R[3 * a + 2], o->f[a] = f;
      M->collider_force[3 * mc->collider + a] += f;
      M->force[a] -= f;
    }
  }
  w->nmpm_contact = A->nc;
  return KN_OK;
}

// (constraint index) => "contact 'a'-'b'", "joint limit of 'j' (robot)", ...
static void describe(const kn_world* w, const sap_state* s, int i, char* buf, size_t cap) {
  if (i < 0 || i >= kn_sap_problem_num_constraints(s->prob)) {
    snprintf(buf, cap, "constraint #%d", i);
    return;
  }
  const constraint_info* ci = &s->info[i];
  if (ci->kind == KN_SAP_CONTACT && ci->tree == -4) {
    snprintf(buf, cap, "constraint #%d: contact of MPM body '%s' particle %d with '%s'", i, w->mpms[ci->body].name,
             ci->point, w->colliders[ci->a].name);
    return;
  }
  if (ci->kind == KN_SAP_CONTACT && ci->tree == -2) {
    snprintf(buf, cap, "constraint #%d: contact of deformable '%s' vertex %d with '%s'", i, w->fems[ci->body].name,
             ci->point, ci->a >= 0 ? w->colliders[ci->a].name : w->fems[ci->b].name);
    return;
  }
  if (ci->kind == KN_SAP_CONTACT) {
    snprintf(buf, cap, "constraint #%d: contact between '%s' and '%s'", i, w->colliders[ci->a].name,
             w->colliders[ci->b].name);
    return;
  }
  if (ci->kind == KN_SAP_FIXED) {
    const kn_world_fem* F = &w->fems[ci->body];
    snprintf(buf, cap, "constraint #%d: attachment of deformable '%s' vertex %d to %s", i, F->name, ci->point,
             ci->a >= 0 ? w->trees[ci->a].robot->model->bodies[ci->b].name : "the world");
    return;
  }
  if (ci->kind == KN_SAP_WELD) {
    const kn_scene_weld* wd = &w->scene->doc->welds[ci->point];
    snprintf(buf, cap, "constraint #%d: weld %d '%s' ('%s' to '%s')", i, ci->point, wd->name ? wd->name : "",
             wd->body_a, wd->body_b);
    return;
  }
  const kn_mb_body* b = &w->trees[ci->tree].robot->model->bodies[ci->body];
  snprintf(buf, cap, "constraint #%d: %s of joint '%s' of %s '%s'", i,
           ci->kind == KN_SAP_LIMIT ? "joint limit" : ci->kind == KN_SAP_PD ? "PD controller" : "mimic coupler",
           b->joint_name ? b->joint_name : b->name, kn_sim_tree_kind(w, ci->tree), kn_sim_tree_name(w, ci->tree));
}

/* (tree's actuation, dof i of body) => its PD gains; 0, 0 when dof i has no PD constraint (kp only
 * on 1-DoF joints, controllers.h) */
static void pd_gains(const kn_mb_actuation* act, const kn_mb_body* body, int i, double* kp, double* kd) {
  int one = body->nq == 1 && body->nv == 1;
  *kp = one && act->kp ? act->kp[i] : 0.0;
  *kd = act->kd ? act->kd[i] : 0.0;
  if (!(*kp > 0) && !(*kd > 0)) *kp = *kd = 0.0;
}

static kn_status sap_step(kn_world* w, void* state, kn_error* err) {
  sap_state* s = state;
  const double dt = w->scene->time_step;
  kn_status st;
  kn_sap_problem_reset(s->prob, dt);
  /* stage wall times for w->last (bench/); t_detect accumulates the detection parts */
  double t_start = kn_wall_time(), t_detect = 0, t_mark;

  /* a, c. one kinematics pass at (q_n, v_n) per tree, shared by the controllers at t_n + dt (their
   * gravity compensation reads only the poses) and the free motion (q = NULL to both) */
  for (int k = 0; k < w->ntree; k++) {
    kn_world_tree* tr = &w->trees[k];
    const kn_mb_model* m = tr->robot->model;
    const double* tau = NULL;
    kn_mb_kinematics(m, tr->q, m->nv > 0 ? tr->v : NULL, tr->data);
    if (tr->nctrl > 0) {
      st = kn_ctrl_compute((const kn_controller* const*)tr->ctrls, tr->nctrl, m, tr->data, w->t + dt, NULL, tr->v,
                           tr->buf, err);
      if (st) return kn_error_prefix(err, "stage 1 (controllers) of %s '%s': ", kn_sim_tree_kind(w, k), kn_sim_tree_name(w, k));
      const kn_mb_actuation* act = &tr->buf->act;
      if (act->tau0 && m->nv > 0) {
        /* the feed-forward of PD dofs moves into the PD constraint's u_ff (d3) */
        memcpy(s->tau, act->tau0, (size_t)m->nv * sizeof(double));
        for (int b = 0; b < m->nbody; b++)
          for (int j = 0; j < m->bodies[b].nv; j++) {
            int i = m->bodies[b].v_adr + j;
            double kp, kd;
            pd_gains(act, &m->bodies[b], i, &kp, &kd);
            if (kp > 0 || kd > 0) s->tau[i] = 0.0;
          }
        tau = s->tau;
      }
    }
    if (m->nv == 0) continue;
    st = kn_mb_free_motion(m, tr->data, NULL, tr->v, tau, dt, s->A[k], s->v_star[k], s->scratch, err);
    if (st) return kn_error_prefix(err, "stage 1 (free motion) of %s '%s': ", kn_sim_tree_kind(w, k), kn_sim_tree_name(w, k));
    st = kn_sap_add_clique(s->prob, m->nv, s->A[k], s->v_star[k], NULL, err);
    if (st) return kn_error_prefix(err, "stage 1 (free motion) of %s '%s': ", kn_sim_tree_kind(w, k), kn_sim_tree_name(w, k));
  }

  /* b. collider poses at q_n and detection */
  const kn_contact_point* pts = NULL;
  int npts = 0;
  t_mark = kn_wall_time();
  if (w->collision) {
    for (int i = 0; i < w->ncollider; i++) {
      kn_sim_collider_pose(w, i, &s->X_WG[i]);
      s->reach[i] = kn_sim_collider_reach(w, i, dt);
    }
    st = kn_collision_detect_reach(w->collision, s->X_WG, w->scene->margin, s->reach, &pts, &npts, err);
    if (st) return kn_error_prefix(err, "contact detection: ");
  }
  t_detect += kn_wall_time() - t_mark;
  /* FEM bodies: free motion, vertex contacts, one clique each (digest 6) */
  for (int i = 0; i < w->nfem; i++) {
    st = kn_fem_free_motion(w->fems[i].body, dt, NULL, err);
    if (st) return kn_error_prefix(err, "stage 1 (free motion) of deformable '%s': ", w->fems[i].name);
  }
  /* MPM bodies: P2G and free motion (v*, A_MPM and its factor, digest 7.5 steps 1, 5) */
  for (int i = 0; i < w->nmpm_grid; i++) {
    st = kn_mpm_free_motion(w->mpm_grids[i], dt, w->scene->gravity, NULL, err);
    if (st) return kn_error_prefix(err, "stage 1 (free motion) of MPM body '%s': ", w->mpm_grids[i]->name);
  }
  double t_free_end = kn_wall_time();
  double t_free = t_free_end - t_start - t_detect; /* trees' and FEM free motion, without detection */
  if (w->nfem > 0) {
    t_mark = kn_wall_time();
    if ((st = fem_detect(w, s->X_WG, s->fem, err))) return kn_error_prefix(err, "contact detection (deformables): ");
    double dt_fem_detect = kn_wall_time() - t_mark;
    t_detect += dt_fem_detect;
    t_free_end += dt_fem_detect; /* the SAP stage starts after the FEM detection */
    if ((st = fem_cliques(w, s, err))) return st;
  }
  if (w->nmpm > 0) {
    t_mark = kn_wall_time();
    if ((st = mpm_detect(w, s, err))) return kn_error_prefix(err, "contact detection (MPM): ");
    double d = kn_wall_time() - t_mark;
    t_detect += d, t_free_end += d;
    if ((st = mpm_cliques(w, s, err))) return st;
  }
  if ((st = kn_world_reserve_contacts(w, npts, err))) return st;
  if ((st = kn_stiction_reserve(&s->stiction, npts, err))) return st;

  /* d1. contacts: v_c = R_WC^T (v_B - v_A) at p (§0) */
  int ncontact = 0;
  for (int c = 0; c < npts; c++) {
    const kn_contact_point* cp = &pts[c];
    int ta = w->colliders[cp->a].c.clique, tb = w->colliders[cp->b].c.clique;
    if (ta < 0 && tb < 0) continue;
    kn_sap_contact_params par = kn_sap_contact_params_default();
    par.phi0 = cp->phi;
    par.mu = cp->material.mu;
    par.stiffness = cp->material.stiffness;
    par.dissipation_time = cp->material.dissipation_time;
    kn_stiction_bias(&s->stiction, ncontact, cp, s->X_WG, dt, par.vhat_t);
    int nva = ta >= 0 ? w->trees[ta].robot->model->nv : 0;
    double *Ja = s->J, *Jb = s->J + 3 * (size_t)nva;
    int index;
    if (ta >= 0 && ta == tb) {
      /* both sides on one tree: one block R^T (J_B - J_A) */
      memset(Ja, 0, 3 * (size_t)nva * sizeof *Ja);
      contact_block(w, s, cp->a, cp, -1.0, Ja);
      contact_block(w, s, cp->b, cp, +1.0, Ja);
      st = kn_sap_add_contact(s->prob, s->clique_of_tree[ta], Ja, -1, NULL, &par, &index, err);
    } else if (ta >= 0 && tb >= 0) {
      int nvb = w->trees[tb].robot->model->nv;
      memset(s->J, 0, 3 * (size_t)(nva + nvb) * sizeof *Ja);
      contact_block(w, s, cp->a, cp, -1.0, Ja);
      contact_block(w, s, cp->b, cp, +1.0, Jb);
      st = kn_sap_add_contact(s->prob, s->clique_of_tree[ta], Ja, s->clique_of_tree[tb], Jb, &par, &index, err);
    } else {
      int t = ta >= 0 ? ta : tb;
      int nv = w->trees[t].robot->model->nv;
      memset(s->J, 0, 3 * (size_t)nv * sizeof *s->J);
      contact_block(w, s, ta >= 0 ? cp->a : cp->b, cp, ta >= 0 ? -1.0 : 1.0, s->J);
      st = kn_sap_add_contact(s->prob, s->clique_of_tree[t], s->J, -1, NULL, &par, &index, err);
    }
    if (!st) st = note(s, index, (constraint_info){KN_SAP_CONTACT, -1, -1, cp->a, cp->b, c}, err);
    if (st) return kn_error_prefix(err, "stage 2 (contact '%s'-'%s'): ", w->colliders[cp->a].name,
                                   w->colliders[cp->b].name);
    kn_world_contact* wc = &w->contacts[ncontact++];
    wc->a = cp->a, wc->b = cp->b, wc->phi = cp->phi;
    memcpy(wc->p, cp->p, sizeof wc->p);
    memcpy(wc->n, cp->n, sizeof wc->n);
  }
  int first_fem = kn_sap_problem_num_constraints(s->prob);
  if (w->nfem > 0 && (st = fem_contacts(w, s, err))) return st;
  if (w->nmpm > 0 && (st = mpm_contacts(w, s, err))) return st;

  /* d2. joint limits, only when a limit is within 2 dt max(|v_n|, |v*|) (Drake's window, §5.2) */
  for (int k = 0; k < w->ntree; k++) {
    const kn_mb_model* m = w->trees[k].robot->model;
    if (m->nv == 0) continue;
    const double* q = w->trees[k].q;
    for (int b = 0; b < m->nbody; b++) {
      const kn_mb_body* body = &m->bodies[b];
      if (!body->has_position_limits || body->nv != 1 || body->nq != 1) continue;
      double q0 = q[body->q_adr];
      double dq = dt * fmax(fabs(w->trees[k].v[body->v_adr]), fabs(s->v_star[k][body->v_adr]));
      double lo = body->lower >= q0 - 2 * dq ? body->lower : -INFINITY;
      double hi = body->upper <= q0 + 2 * dq ? body->upper : INFINITY;
      if (isinf(lo) && isinf(hi)) continue;
      int index;
      st = kn_sap_add_limit(s->prob, s->clique_of_tree[k], body->v_adr, q0, lo, hi, NULL, &index, err);
      if (!st) st = note(s, index, (constraint_info){KN_SAP_LIMIT, k, b, -1, -1, -1}, err);
      if (st) return kn_error_prefix(err, "stage 2 (limit of '%s'): ", body->joint_name ? body->joint_name : body->name);
    }
  }

  /* d3. implicit PD per controlled dof; kp only on 1-DoF joints (controllers.h) */
  for (int k = 0; k < w->ntree; k++) {
    kn_world_tree* tr = &w->trees[k];
    const kn_mb_model* m = tr->robot->model;
    if (m->nv == 0 || tr->nctrl == 0) continue;
    const kn_mb_actuation* act = &tr->buf->act;
    for (int b = 0; b < m->nbody; b++) {
      const kn_mb_body* body = &m->bodies[b];
      for (int j = 0; j < body->nv; j++) {
        int i = body->v_adr + j;
        int one = body->nq == 1 && body->nv == 1;
        double kp, kd;
        pd_gains(act, body, i, &kp, &kd);
        if (!(kp > 0) && !(kd > 0)) continue;
        kn_sap_pd_params pd = {.kp = kp,
                               .kd = kd,
                               .q0 = one ? tr->q[body->q_adr] : 0.0,
                               .qd = act->q_ref ? act->q_ref[i] : 0.0,
                               .vd = act->v_ref ? act->v_ref[i] : 0.0,
                               .u_ff = act->tau0 ? act->tau0[i] : 0.0,
                               .effort_limit = act->effort ? act->effort[i] : INFINITY};
        int index;
        st = kn_sap_add_pd(s->prob, s->clique_of_tree[k], i, &pd, &index, err);
        if (!st) st = note(s, index, (constraint_info){KN_SAP_PD, k, b, -1, -1, -1}, err);
        if (st) return kn_error_prefix(err, "stage 2 (PD of '%s'): ", body->joint_name ? body->joint_name : body->name);
      }
    }
  }

  /* d4. couplers (mimic joints): q_mimic - multiplier q_master - offset = 0 */
  for (int k = 0; k < w->ntree; k++) {
    const kn_mb_model* m = w->trees[k].robot->model;
    const double* q = w->trees[k].q;
    for (int c = 0; c < m->ncoupler; c++) {
      const kn_mb_coupler* cu = &m->couplers[c];
      const kn_mb_body *bi = &m->bodies[cu->body], *bj = &m->bodies[cu->master];
      int index;
      st = kn_sap_add_coupler(s->prob, s->clique_of_tree[k], bi->v_adr, q[bi->q_adr], s->clique_of_tree[k],
                              bj->v_adr, q[bj->q_adr], cu->multiplier, cu->offset, &index, err);
      if (!st) st = note(s, index, (constraint_info){KN_SAP_COUPLER, k, cu->body, -1, -1, -1}, err);
      if (st) return kn_error_prefix(err, "stage 2 (coupler of '%s'): ", bi->joint_name ? bi->joint_name : bi->name);
    }
  }

  /* d5. welds: g0 = [a_PQ; p_PoQo] at q_n, v_c = V_B - V_A at the midpoint M (§5.4) */
  for (unsigned i = 0; i < w->scene->doc->nwelds; i++) {
    const weld_side* sd = s->welds[i];
    kn_pose X[2];
    for (int j = 0; j < 2; j++) {
      if (sd[j].tree < 0)
        X[j] = sd[j].X_bf;
      else
        kn_pose_mul(&w->trees[sd[j].tree].data->X_wb[sd[j].body], &sd[j].X_bf, &X[j]);
    }
    double g0[6], M[3];
    kn_sap_weld_error(&X[0], &X[1], g0, M);
    int ta = sd[0].tree, tb = sd[1].tree, index;
    int nva = ta >= 0 ? w->trees[ta].robot->model->nv : 0, nvb = tb >= 0 ? w->trees[tb].robot->model->nv : 0;
    double *Ja = s->J, *Jb = s->J + 6 * (size_t)nva;
    memset(s->J, 0, 6 * (size_t)(nva + nvb) * sizeof *s->J);
    if (ta >= 0 && ta == tb) {
      weld_block(w, s, &sd[0], M, -1.0, Ja);
      weld_block(w, s, &sd[1], M, +1.0, Ja);
      st = kn_sap_add_weld(s->prob, s->clique_of_tree[ta], Ja, -1, NULL, g0, &index, err);
    } else if (ta >= 0 && tb >= 0) {
      weld_block(w, s, &sd[0], M, -1.0, Ja);
      weld_block(w, s, &sd[1], M, +1.0, Jb);
      st = kn_sap_add_weld(s->prob, s->clique_of_tree[ta], Ja, s->clique_of_tree[tb], Jb, g0, &index, err);
    } else {
      int j = ta >= 0 ? 0 : 1;
      weld_block(w, s, &sd[j], M, j ? 1.0 : -1.0, s->J);
      st = kn_sap_add_weld(s->prob, s->clique_of_tree[sd[j].tree], s->J, -1, NULL, g0, &index, err);
    }
    if (!st) st = note(s, index, (constraint_info){KN_SAP_WELD, -1, -1, -1, -1, (int)i}, err);
    if (st) return kn_error_prefix(err, "stage 2 (weld %u '%s'): ", i, w->scene->doc->welds[i].name ? w->scene->doc->welds[i].name : "");
  }

  /* d6. FEM attachments (fixed constraints) */
  if (w->nfem > 0 && (st = fem_attachments(w, s, err))) return st;

  /* e. solve, warm-started from v_n */
  int nimp = kn_sap_problem_num_impulses(s->prob);
  if ((st = reserve(s, kn_sap_problem_num_constraints(s->prob), nimp, err))) return st;
  for (int k = 0; k < w->ntree; k++) {
    int cq = s->clique_of_tree[k];
    if (cq >= 0)
      memcpy(s->v_guess + kn_sap_clique_offset(s->prob, cq), w->trees[k].v,
             (size_t)w->trees[k].robot->model->nv * sizeof(double));
  }
  if (w->nfem + w->nmpm > 0) {
    /* FEM and MPM cliques come after the trees': grow the vectors, warm-start from the vertices' v_n */
    size_t nvp = (size_t)kn_sap_problem_nv(s->prob), need = (size_t)s->total_tree_nv;
    if (nvp > s->vcap) {
      double *g = realloc(s->v_guess, nvp * sizeof *g);
      if (g) s->v_guess = g;
      double *x = realloc(s->v_next, nvp * sizeof *x);
      if (x) s->v_next = x;
      if (!g || !x) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
      s->vcap = nvp;
    }
    (void)need;
    for (int i = 0; i < w->nfem; i++) {
      const fem_state* f = &s->fem->f[i];
      const kn_fem_body* b = w->fems[i].body;
      if (f->clique < 0) continue;
      double* g = s->v_guess + kn_sap_clique_offset(s->prob, f->clique);
      for (int u = 0; u < b->mesh.nvert; u++)
        if (f->col[u] >= 0) memcpy(g + f->col[u], b->v + 3 * u, 3 * sizeof(double));
    }
    mpm_warm_start(w, s);
  }
  kn_sap_stats stats;
  memset(&stats, 0, sizeof stats);
  if (kn_sap_problem_nv(s->prob) > 0) {
    st = kn_sap_solve(s->solver, s->prob, &s->opt, s->v_guess, s->v_next, s->gamma, &stats, err);
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
  for (int i = 0; i < kn_sap_problem_nv(s->prob); i++)
    if (!isfinite(s->v_next[i]))
      return kn_fail(err, KN_ERR_NUMERIC, "stage 2 (SAP solve): v_n+1 is not finite at dof %d", i);

  double t_solved = kn_wall_time();
  /* advance: q_n+1 = q_n (+) dt v_n+1 */
  for (int k = 0; k < w->ntree; k++) {
    kn_world_tree* tr = &w->trees[k];
    const kn_mb_model* m = tr->robot->model;
    int cq = s->clique_of_tree[k];
    if (cq < 0) continue;
    memcpy(tr->v, s->v_next + kn_sap_clique_offset(s->prob, cq), (size_t)m->nv * sizeof(double));
    /* q_n+1 = q_n + dt N(q_n) v_n+1; q_backup holds q_n (kn_world_step saved it) */
    kn_mb_advance(m, tr->q_backup, tr->v, dt, tr->q);
  }

  double t_recovery = 0;
  if (w->nfem > 0) fem_finish(w, s, dt, first_fem, &t_recovery);
  if (w->nfem > 0) fem_attach_forces(w, s, dt);
  if (w->nmpm > 0) {
    double t0 = kn_wall_time();
    if ((st = mpm_finish(w, s, dt, err))) return st;
    t_recovery += kn_wall_time() - t0;
  }
  w->nfem_contact = 0;
  if (w->nfem > 0 && (st = kn_fem_contacts_record(w, s->fem->c, s->fem->nc, s->prob, s->gamma, first_fem, dt, err)))
    return st;
  double t_end = kn_wall_time();

  /* f. contact forces (contacts are the first constraints, in detection order) and statistics */
  for (int c = 0; c < ncontact; c++) {
    const double* g = s->gamma + kn_sap_constraint_offset(s->prob, c);
    const double* R = pts[s->info[c].point].R_WC;
    for (int a = 0; a < 3; a++) w->contacts[c].f[a] = (R[3 * a] * g[0] + R[3 * a + 1] * g[1] + R[3 * a + 2] * g[2]) / dt;
  }
  w->ncontact = ncontact;
  /* contacts are the first constraints, 3 rows each: their impulses are gamma[0 .. 3 ncontact) */
  kn_stiction_commit(&s->stiction, ncontact, s->gamma);
  /* FEM and MPM contacts are consecutive 3-row constraints from first_fem and s->mpm->first */
  if (w->nfem > 0)
    kn_stiction_keyed_commit(&s->fem_anchors, s->fem->nc,
                             s->fem->nc ? s->gamma + kn_sap_constraint_offset(s->prob, first_fem) : NULL);
  if (w->nmpm > 0)
    kn_stiction_keyed_commit(&s->mpm_anchors, s->mpm->nc,
                             s->mpm->nc ? s->gamma + kn_sap_constraint_offset(s->prob, s->mpm->first) : NULL);
  w->last.iterations = stats.iterations;
  w->last.line_search_iterations = stats.line_search_iterations;
  w->last.residual = stats.residual;
  w->last.contacts = ncontact + (s->fem ? s->fem->nc : 0) + (s->mpm ? s->mpm->nc : 0);
  w->last.constraints = kn_sap_problem_num_constraints(s->prob);
  w->last.time_free_motion = t_free;
  w->last.time_detect = t_detect;
  w->last.time_sap = t_solved - t_free_end + t_recovery;
  w->last.time_advance = t_end - t_solved - t_recovery;
  return KN_OK;
}

static void sap_free_state(void* p) { sap_free(p); }

//---- saved state: what the next steps read from the last ones ----

/* Layout (kn_world_save_state's backend section), little-endian:
 *   rigid anchors: n, then per anchor a, b, sliding (int32), pa[3], pb[3], mu (double)
 *   FEM anchors, MPM anchors: n, then per anchor key (uint64), p[3], mu (double), sliding (int32)
 *   MPM warm starts: number of grids, then per grid prev_n, prev_index (3 prev_n int32),
 *   prev_v (3 prev_n double)
 * Everything else in sap_state is rebuilt by every step. */

// (keyed anchors) => n and each anchor appended
static void save_keyed(const kn_stiction_keyed* k, kn_state_out* out) {
  kn_state_put_u64(out, (uint64_t)k->nprev);
  for (int i = 0; i < k->nprev; i++) {
    const kn_stiction_point* a = &k->prev[i];
    kn_state_put_u64(out, a->key);
    kn_state_put_f64(out, a->p, 3);
    kn_state_put_f64(out, &a->mu, 1);
    kn_state_put_i32(out, &a->sliding, 1);
  }
}

// (world, sap_state) => anchors and MPM warm starts appended to out
static void sap_save(const kn_world* w, const void* state, kn_state_out* out) {
  (void)w;
  const sap_state* s = state;
  kn_state_put_u64(out, (uint64_t)s->stiction.nprev);
  for (int i = 0; i < s->stiction.nprev; i++) {
    const kn_stiction_anchor* a = &s->stiction.prev[i];
    int ab[3] = {a->a, a->b, a->sliding};
    kn_state_put_i32(out, ab, 3);
    kn_state_put_f64(out, a->pa, 3);
    kn_state_put_f64(out, a->pb, 3);
    kn_state_put_f64(out, &a->mu, 1);
  }
  save_keyed(&s->fem_anchors, out);
  save_keyed(&s->mpm_anchors, out);
  int ngrid = s->mpm ? s->nmpm_grid : 0;
  kn_state_put_u64(out, (uint64_t)ngrid);
  for (int i = 0; i < ngrid; i++) {
    const mpm_state* m = &s->mpm->m[i];
    kn_state_put_u64(out, (uint64_t)m->prev_n);
    kn_state_put_i32(out, m->prev_index, 3 * (size_t)m->prev_n);
    kn_state_put_f64(out, m->prev_v, 3 * (size_t)m->prev_n);
  }
}

/* (input, bytes per record) => a record count read and checked against the bytes left (so a corrupt
 * count never allocates), or -1 */
static long get_count(kn_state_in* in, size_t record) {
  uint64_t n;
  if (!kn_state_get_u64(in, &n) || n > (uint64_t)INT32_MAX / 3 || n * record > in->len - in->pos) return -1;
  return (long)n;
}

// (input) => n keyed anchors into a new array *out (NULL when n = 0); 0 when truncated or out of memory
static int load_keyed(kn_state_in* in, kn_stiction_point** out, int* n_out) {
  long n = get_count(in, 8 + 4 * 8 + 4);
  if (n < 0) return 0;
  kn_stiction_point* a = n ? kn_calloc((size_t)n, sizeof *a) : NULL;
  if (n && !a) return 0;
  for (long i = 0; i < n; i++)
    if (!kn_state_get_u64(in, &a[i].key) || !kn_state_get_f64(in, a[i].p, 3) || !kn_state_get_f64(in, &a[i].mu, 1) ||
        !kn_state_get_i32(in, &a[i].sliding, 1) || !a[i].key) {
      free(a);
      return 0;
    }
  *out = a;
  *n_out = (int)n;
  return 1;
}

// (keyed anchors, a new array of n) => the anchors replaced (the array owned from now on)
static void replace_keyed(kn_stiction_keyed* k, kn_stiction_point* a, int n) {
  free(k->prev);
  k->prev = a;
  k->nprev = k->cap_prev = n;
}

// (bytes of sap_save) => anchors and MPM warm starts of s replaced, all or nothing
static kn_status sap_load(const kn_world* w, void* state, kn_state_in* in, kn_error* err) {
  sap_state* s = state;
  int ngrid_world = s->mpm ? s->nmpm_grid : 0;
  kn_stiction_anchor* rigid = NULL;
  unsigned char* taken = NULL;
  kn_stiction_point *fem = NULL, *mpm = NULL;
  int nfem = 0, nmpm = 0;
  int** index = kn_calloc((size_t)ngrid_world + 1, sizeof *index);
  double** v = kn_calloc((size_t)ngrid_world + 1, sizeof *v);
  int* count = kn_calloc((size_t)ngrid_world + 1, sizeof *count);
  const char* what = NULL;
  long nrigid = get_count(in, 3 * 4 + 7 * 8);
  if (!index || !v || !count) {
    what = "out of memory";
  } else if (nrigid < 0) {
    what = "truncated rigid stiction anchors";
  } else if (nrigid &&
             (!(rigid = kn_calloc((size_t)nrigid, sizeof *rigid)) || !(taken = kn_calloc((size_t)nrigid, 1)))) {
    what = "out of memory";
  }
  for (long i = 0; !what && i < nrigid; i++) {
    kn_stiction_anchor* a = &rigid[i];
    int ab[3];
    if (!kn_state_get_i32(in, ab, 3) || !kn_state_get_f64(in, a->pa, 3) || !kn_state_get_f64(in, a->pb, 3) ||
        !kn_state_get_f64(in, &a->mu, 1))
      what = "truncated rigid stiction anchors";
    else if (ab[0] < 0 || ab[1] <= ab[0] || ab[1] >= w->ncollider)
      what = "a rigid stiction anchor names colliders that this world does not have";
    a->a = ab[0], a->b = ab[1], a->sliding = ab[2];
  }
  if (!what && !load_keyed(in, &fem, &nfem)) what = "truncated or invalid FEM stiction anchors";
  if (!what && !load_keyed(in, &mpm, &nmpm)) what = "truncated or invalid MPM stiction anchors";
  uint64_t ngrid = 0;
  if (!what && (!kn_state_get_u64(in, &ngrid) || ngrid != (uint64_t)ngrid_world)) what = "MPM grid count differs";
  for (int i = 0; !what && i < ngrid_world; i++) {
    long n = get_count(in, 3 * 4 + 3 * 8);
    if (n < 0) {
      what = "truncated MPM warm start";
      break;
    }
    count[i] = (int)n;
    index[i] = kn_calloc(3 * (size_t)n + 1, sizeof **index);
    v[i] = kn_calloc(3 * (size_t)n + 1, sizeof **v);
    if (!index[i] || !v[i])
      what = "out of memory";
    else if (!kn_state_get_i32(in, index[i], 3 * (size_t)n) || !kn_state_get_f64(in, v[i], 3 * (size_t)n))
      what = "truncated MPM warm start";
  }
  if (!what && in->pos != in->len) what = "unread bytes after the SAP backend's state";
  if (what) {
    for (int i = 0; index && v && i < ngrid_world; i++) free(index[i]), free(v[i]);
    free(index), free(v), free(count), free(rigid), free(taken), free(fem), free(mpm);
    return kn_fail(err, strcmp(what, "out of memory") ? KN_ERR_PARSE : KN_ERR_NOMEM, "%s", what);
  }
  /* commit: nothing below fails */
  free(s->stiction.prev), free(s->stiction.taken);
  s->stiction.prev = rigid;
  s->stiction.taken = taken;
  s->stiction.nprev = s->stiction.cap_prev = s->stiction.cap_taken = (int)nrigid;
  replace_keyed(&s->fem_anchors, fem, nfem);
  replace_keyed(&s->mpm_anchors, mpm, nmpm);
  for (int i = 0; i < ngrid_world; i++) {
    mpm_state* m = &s->mpm->m[i];
    free(m->prev_index), free(m->prev_v);
    m->prev_index = index[i];
    m->prev_v = v[i];
    m->prev_n = count[i];
    m->prev_cap = (size_t)count[i];
  }
  free(index), free(v), free(count);
  return KN_OK;
}

const kn_backend kn_backend_sap = {"sap", sap_create, sap_step, sap_free_state, sap_save, sap_load};
