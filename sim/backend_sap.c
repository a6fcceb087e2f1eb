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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/backend.h"

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
  double* v_guess;       /* total nv */
  double* v_next;
  double* gamma;         /* growable */
  int gamma_cap;
  constraint_info* info; /* growable */
  int info_cap;
  double* Jw;            /* 3 x max nv */
  weld_side (*welds)[2]; /* per scene weld: A (P) and B (Q) */
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
  free(s->v_guess);
  free(s->v_next);
  free(s->gamma);
  free(s->info);
  free(s->Jw);
  free(s->welds);
  free(s);
}

/* (scene name) => tree and body: "world", an object (its root body), "object/link" or "robot/link";
 * -1 tree for the world. 0 when nothing matches. */
static int find_body(const kn_world* w, const char* name, int* tree, int* body) {
  if (strcmp(name, "world") == 0) {
    *tree = -1, *body = -1;
    return 1;
  }
  const char* slash = strchr(name, '/');
  size_t n = slash ? (size_t)(slash - name) : strlen(name);
  for (int i = 0; i < w->nobject; i++)
    if (strlen(w->objects[i].name) == n && strncmp(w->objects[i].name, name, n) == 0) {
      const kn_mb_model* m = w->trees[w->objects[i].tree].robot->model;
      *tree = w->objects[i].tree;
      for (int b = 0; b < m->nbody; b++)
        if (slash ? strcmp(m->bodies[b].name, slash + 1) == 0 : m->bodies[b].parent < 0) return (*body = b), 1;
      return 0;
    }
  for (int r = 0; slash && r < w->nrobot; r++) {
    const kn_world_robot* wr = &w->robots[r];
    if (strlen(wr->name) != n || strncmp(wr->name, name, n) != 0) continue;
    const kn_mb_model* m = w->trees[wr->tree].robot->model;
    for (int b = wr->body_offset; b < wr->body_offset + wr->nbody; b++) {
      /* an attached robot's links may carry a "<model>/" prefix in the merged tree */
      const char* link = m->bodies[b].name;
      const char* ls = strrchr(link, '/');
      if (strcmp(ls ? ls + 1 : link, slash + 1) == 0) return (*tree = wr->tree), (*body = b), 1;
    }
  }
  return 0;
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
      if (!find_body(w, names[j], &tree, &body))
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
    s->v_guess = kn_calloc((size_t)total, sizeof(double));
    s->v_next = kn_calloc((size_t)total, sizeof(double));
    ok = s->scratch && s->tau && s->Jw && s->welds && s->J && s->Jv && s->X_WG && s->v_guess && s->v_next;
  }
  if (!ok) {
    sap_free(s);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", sc->path);
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

// (constraint index) => "contact 'a'-'b'", "joint limit of 'j' (robot)", ...
static void describe(const kn_world* w, const sap_state* s, int i, char* buf, size_t cap) {
  if (i < 0 || i >= kn_sap_problem_num_constraints(s->prob)) {
    snprintf(buf, cap, "constraint #%d", i);
    return;
  }
  const constraint_info* ci = &s->info[i];
  if (ci->kind == KN_SAP_CONTACT) {
    snprintf(buf, cap, "constraint #%d: contact between '%s' and '%s'", i, w->colliders[ci->a].name,
             w->colliders[ci->b].name);
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
  if (w->collision) {
    for (int i = 0; i < w->ncollider; i++) kn_sim_collider_pose(w, i, &s->X_WG[i]);
    st = kn_collision_detect(w->collision, s->X_WG, w->scene->margin, &pts, &npts, err);
    if (st) return kn_error_prefix(err, "contact detection: ");
  }
  if ((st = kn_world_reserve_contacts(w, npts, err))) return st;

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

  /* e. solve, warm-started from v_n */
  int nimp = kn_sap_problem_num_impulses(s->prob);
  if ((st = reserve(s, kn_sap_problem_num_constraints(s->prob), nimp, err))) return st;
  for (int k = 0; k < w->ntree; k++) {
    int cq = s->clique_of_tree[k];
    if (cq >= 0)
      memcpy(s->v_guess + kn_sap_clique_offset(s->prob, cq), w->trees[k].v,
             (size_t)w->trees[k].robot->model->nv * sizeof(double));
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

  /* f. contact forces (contacts are the first constraints, in detection order) and statistics */
  for (int c = 0; c < ncontact; c++) {
    const double* g = s->gamma + kn_sap_constraint_offset(s->prob, c);
    const double* R = pts[s->info[c].point].R_WC;
    for (int a = 0; a < 3; a++) w->contacts[c].f[a] = (R[3 * a] * g[0] + R[3 * a + 1] * g[1] + R[3 * a + 2] * g[2]) / dt;
  }
  w->ncontact = ncontact;
  w->last.iterations = stats.iterations;
  w->last.line_search_iterations = stats.line_search_iterations;
  w->last.residual = stats.residual;
  w->last.contacts = ncontact;
  w->last.constraints = kn_sap_problem_num_constraints(s->prob);
  return KN_OK;
}

static void sap_free_state(void* p) { sap_free(p); }

const kn_backend kn_backend_sap = {"sap", sap_create, sap_step, sap_free_state};
