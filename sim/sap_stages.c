/* The stages of a step that every backend adapter shares (backend_sap.c, backend_nonlinear.c):
 * the adapter state's life, controllers at t_n + dt, contact detection at q_n, every clique's free
 * motion, and the robot-side constraints as SAP constraints (joint limits in Drake's window,
 * implicit PD with effort limits, mimic couplers, welds). SAP solves them with its contacts; the
 * nonlinear backends take their regularized costs as a potential (kn_sap_constraints_potential). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/backend_sap.h"

void kn_sap_adapter_free_state(void* p) {
  sap_state* s = p;
  if (!s) return;
  kn_sap_problem_free(s->prob);
  kn_sap_solver_free(s->solver);
  for (int c = 0; s->q && c < s->nq; c++) {
    sap_clique* q = &s->q[c];
    free(q->col), free(q->mark), free(q->P), free(q->S), free(q->vs), free(q->diagA), free(q->diagS);
    free(q->dv), free(q->dvall), free(q->vnext);
  }
  free(s->q);
  kn_sim_candidates_free(&s->cand);
  free(s->X_WG), free(s->reach);
  kn_stiction_free(&s->stiction);
  kn_stiction_keyed_free(&s->fem_anchors);
  kn_stiction_keyed_free(&s->mpm_anchors);
  free(s->tau), free(s->J), free(s->Jv), free(s->Jw);
  for (int t = 0; s->ahead && t < s->nahead; t++) kn_mb_data_free(s->ahead[t]);
  free(s->ahead), free(s->ahead_step), free(s->q_ahead), free(s->v_ahead);
  free(s->v_guess), free(s->v_next), free(s->gamma), free(s->force), free(s->info), free(s->welds);
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
      sap_weld_side* sd = &s->welds[i][j];
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
static void weld_block(const kn_world* w, sap_state* s, const sap_weld_side* sd, const double M[3], double sign,
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

kn_status kn_sap_adapter_create_state(kn_world* w, void** out, kn_error* err) {
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
    s->fem_full = so->fem_schur && !*so->fem_schur;
  }
  int maxnv = 0, maxnq = 0, total = 0;
  for (int k = 0; k < w->ntree; k++) {
    int nv = w->trees[k].robot->model->nv, nq = w->trees[k].robot->model->nq;
    maxnv = nv > maxnv ? nv : maxnv, maxnq = nq > maxnq ? nq : maxnq, total += nv;
  }
  s->q = kn_calloc((size_t)w->nclique + 1, sizeof *s->q);
  s->nq = w->nclique;
  s->tau = kn_calloc((size_t)total + 1, sizeof(double)); /* every tree's explicit forces, one after another */
  s->Jv = kn_calloc(3 * (size_t)maxnv + 3, sizeof(double));
  s->Jw = kn_calloc(3 * (size_t)maxnv + 3, sizeof(double));
  s->ahead = kn_calloc((size_t)w->ntree + 1, sizeof *s->ahead);
  s->nahead = w->ntree;
  int ahead_ok = s->ahead != NULL; /* a failure: free_state frees those made */
  for (int k = 0; ahead_ok && k < w->ntree; k++)
    ahead_ok = (s->ahead[k] = kn_mb_data_create(w->trees[k].robot->model)) != NULL;
  s->ahead_step = kn_calloc((size_t)w->ntree + 1, 1);
  s->q_ahead = kn_calloc((size_t)maxnq + 1, sizeof(double));
  s->v_ahead = kn_calloc((size_t)total + 1, sizeof(double)); /* every tree's, one after another */
  s->welds = kn_calloc(sc->doc->nwelds + 1, sizeof *s->welds);
  s->X_WG = kn_calloc((size_t)w->ncollider + 1, sizeof *s->X_WG);
  s->reach = kn_calloc((size_t)w->ncollider + 1, sizeof *s->reach);
  kn_status st = KN_OK;
  if (!s->prob || !s->solver || !s->q || !s->tau || !s->Jv || !s->Jw || !ahead_ok || !s->ahead_step || !s->q_ahead ||
      !s->v_ahead || !s->welds || !s->X_WG || !s->reach ||
      kn_sap_adapter_grow(&s->J, &s->jcap, 12 * (size_t)maxnv + 12, NULL))
    st = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", sc->path);
  if (!st) st = kn_sim_candidates_create(w, &s->cand, err);
  if (!st) st = welds_resolve(w, s, err);
  if (st) {
    kn_sap_adapter_free_state(s);
    return st;
  }
  *out = s;
  return KN_OK;
}

/* (tree's actuation, dof i of body) => its PD gains; 0, 0 when dof i has no PD constraint (kp only
 * on 1-DoF joints, controllers.h) */
static void pd_gains(const kn_mb_actuation* act, const kn_mb_body* body, int i, double* kp, double* kd) {
  int one = body->nq == 1 && body->nv == 1;
  *kp = one && act->kp ? act->kp[i] : 0.0;
  *kd = act->kd ? act->kd[i] : 0.0;
  if (!(*kp > 0) && !(*kd > 0)) *kp = *kd = 0.0;
}

/* 1. kinematics at (q_n, v_n) per tree, shared by the controllers at t_n + dt (their gravity
 * compensation reads only the poses) and the free motion; the explicit forces tau0 of the dofs
 * without a PD constraint (their feed-forward goes into the PD constraint's u_ff, §5.3) */
kn_status kn_sap_adapter_controllers(kn_world* w, sap_state* s, double dt, kn_error* err) {
  double* tau = s->tau;
  for (int k = 0; k < w->ntree; k++) {
    kn_world_tree* tr = &w->trees[k];
    const kn_mb_model* m = tr->robot->model;
    const double* f = NULL;
    kn_mb_kinematics(m, tr->q, m->nv > 0 ? tr->v : NULL, tr->data);
    if (tr->nctrl > 0) {
      kn_status st = kn_ctrl_compute((const kn_controller* const*)tr->ctrls, tr->nctrl, m, tr->data, w->t + dt, NULL,
                                     tr->v, tr->buf, err);
      if (st) return kn_error_prefix(err, "stage 1 (controllers) of %s '%s': ", kn_sim_tree_kind(w, k), kn_sim_tree_name(w, k));
      const kn_mb_actuation* act = &tr->buf->act;
      if (act->tau0 && m->nv > 0) {
        memcpy(tau, act->tau0, (size_t)m->nv * sizeof(double));
        for (int b = 0; b < m->nbody; b++)
          for (int j = 0; j < m->bodies[b].nv; j++) {
            int i = m->bodies[b].v_adr + j;
            double kp, kd;
            pd_gains(act, &m->bodies[b], i, &kp, &kd);
            if (kp > 0 || kd > 0) tau[i] = 0.0;
          }
        f = tau;
        tau += m->nv;
      }
    }
    if (w->clique_of_tree[k] >= 0) kn_clique_tree_begin(&w->cliques[w->clique_of_tree[k]], f);
  }
  return KN_OK;
}

/* 3. free motion of every clique */
kn_status kn_sap_adapter_free_motion(kn_world* w, double dt, kn_error* err) {
  for (int c = 0; c < w->nclique; c++) {
    kn_clique* cq = &w->cliques[c];
    kn_status st = cq->ops->free_motion(cq->self, dt, err);
    if (st) {
      const char* kind = cq->ops->kind == KN_CLIQUE_FEM ? "deformable" : cq->ops->kind == KN_CLIQUE_MPM ? "MPM body" : NULL;
      if (kind) return kn_error_prefix(err, "stage 1 (free motion) of %s '%s': ", kind, cq->ops->name(cq->self));
      for (int k = 0; k < w->ntree; k++)
        if (w->clique_of_tree[k] == c)
          return kn_error_prefix(err, "stage 1 (free motion) of %s '%s': ", kn_sim_tree_kind(w, k), kn_sim_tree_name(w, k));
    }
  }
  return KN_OK;
}

/* 2. collider poses and reaches at q_n, then every candidate (rigid pairs; FEM and MPM at x_n) */
kn_status kn_sap_adapter_detect(kn_world* w, sap_state* s, double dt, kn_error* err) {
  for (int i = 0; w->collision && i < w->ncollider; i++) {
    kn_sim_collider_pose(w, i, &s->X_WG[i]);
    s->reach[i] = kn_sim_collider_reach(w, i, dt);
  }
  kn_status st = kn_sim_detect_rigid(w, s->X_WG, s->reach, &s->cand, err);
  if (!st) st = kn_sim_detect_deformables(w, s->X_WG, &s->cand, err);
  return st;
}

// the SAP clique of tree k
static int tree_sap(const kn_world* w, const sap_state* s, int k) { return s->q[w->clique_of_tree[k]].sap; }

/* 4b. joint limits, only when a limit is within 2 dt max(|v_n|, |v*|) (Drake's window, §5.2) */
static kn_status add_limits(kn_world* w, sap_state* s, double dt, kn_error* err) {
  for (int k = 0; k < w->ntree; k++) {
    const kn_mb_model* m = w->trees[k].robot->model;
    if (m->nv == 0) continue;
    const double* q = w->trees[k].q;
    const kn_clique* cq = &w->cliques[w->clique_of_tree[k]];
    const double* v_star = cq->ops->v_star(cq->self);
    for (int b = 0; b < m->nbody; b++) {
      const kn_mb_body* body = &m->bodies[b];
      if (!body->has_position_limits || body->nv != 1 || body->nq != 1) continue;
      double q0 = q[body->q_adr];
      double dq = dt * fmax(fabs(w->trees[k].v[body->v_adr]), fabs(v_star[body->v_adr]));
      double lo = body->lower >= q0 - 2 * dq ? body->lower : -INFINITY;
      double hi = body->upper <= q0 + 2 * dq ? body->upper : INFINITY;
      if (isinf(lo) && isinf(hi)) continue;
      int index;
      kn_status st = kn_sap_add_limit(s->prob, tree_sap(w, s, k), body->v_adr, q0, lo, hi, NULL, &index, err);
      if (!st) st = kn_sap_adapter_note(s, index, (sap_info){KN_SAP_LIMIT, k, b, -1, -1, -1}, err);
      if (st) return kn_error_prefix(err, "stage 2 (limit of '%s'): ", body->joint_name ? body->joint_name : body->name);
    }
  }
  return KN_OK;
}

/* 4c. implicit PD per controlled dof; kp only on 1-DoF joints (controllers.h). Each tree's
 * velocity over the step as its PDs command it goes to s->v_ahead (trees one after another): per
 * PD'd dof where kp (q_n + dt u - q_ref) + kd (u - v_ref) vanishes, which stiff tracking reaches;
 * v_n elsewhere (the attachments' arcs, sap_assemble.c) */
static kn_status add_pd(kn_world* w, sap_state* s, double dt, kn_error* err) {
  double* u = s->v_ahead;
  for (int k = 0; k < w->ntree; k++) {
    kn_world_tree* tr = &w->trees[k];
    const kn_mb_model* m = tr->robot->model;
    memcpy(u, tr->v, (size_t)m->nv * sizeof *u);
    u += m->nv;
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
        u[i - m->nv] = (kp * (one ? pd.qd - pd.q0 : 0.0) + kd * pd.vd) / (kp * dt + kd);
        int index;
        kn_status st = kn_sap_add_pd(s->prob, tree_sap(w, s, k), i, &pd, &index, err);
        if (!st) st = kn_sap_adapter_note(s, index, (sap_info){KN_SAP_PD, k, b, -1, -1, -1}, err);
        if (st) return kn_error_prefix(err, "stage 2 (PD of '%s'): ", body->joint_name ? body->joint_name : body->name);
      }
    }
  }
  return KN_OK;
}

/* 4d. couplers (mimic joints): q_mimic - multiplier q_master - offset = 0 */
static kn_status add_couplers(kn_world* w, sap_state* s, kn_error* err) {
  for (int k = 0; k < w->ntree; k++) {
    const kn_mb_model* m = w->trees[k].robot->model;
    const double* q = w->trees[k].q;
    for (int c = 0; c < m->ncoupler; c++) {
      const kn_mb_coupler* cu = &m->couplers[c];
      const kn_mb_body *bi = &m->bodies[cu->body], *bj = &m->bodies[cu->master];
      int index, cq = tree_sap(w, s, k);
      kn_status st = kn_sap_add_coupler(s->prob, cq, bi->v_adr, q[bi->q_adr], cq, bj->v_adr, q[bj->q_adr],
                                        cu->multiplier, cu->offset, &index, err);
      if (!st) st = kn_sap_adapter_note(s, index, (sap_info){KN_SAP_COUPLER, k, cu->body, -1, -1, -1}, err);
      if (st) return kn_error_prefix(err, "stage 2 (coupler of '%s'): ", bi->joint_name ? bi->joint_name : bi->name);
    }
  }
  return KN_OK;
}

/* 4e. welds: g0 = [a_PQ; p_PoQo] at q_n, v_c = V_B - V_A at the midpoint M (§5.4) */
static kn_status add_welds(kn_world* w, sap_state* s, kn_error* err) {
  for (unsigned i = 0; i < w->scene->doc->nwelds; i++) {
    const sap_weld_side* sd = s->welds[i];
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
    kn_status st;
    if (ta >= 0 && ta == tb) {
      weld_block(w, s, &sd[0], M, -1.0, Ja);
      weld_block(w, s, &sd[1], M, +1.0, Ja);
      st = kn_sap_add_weld(s->prob, tree_sap(w, s, ta), Ja, -1, NULL, g0, &index, err);
    } else if (ta >= 0 && tb >= 0) {
      weld_block(w, s, &sd[0], M, -1.0, Ja);
      weld_block(w, s, &sd[1], M, +1.0, Jb);
      st = kn_sap_add_weld(s->prob, tree_sap(w, s, ta), Ja, tree_sap(w, s, tb), Jb, g0, &index, err);
    } else {
      int j = ta >= 0 ? 0 : 1;
      weld_block(w, s, &sd[j], M, j ? 1.0 : -1.0, s->J);
      st = kn_sap_add_weld(s->prob, tree_sap(w, s, sd[j].tree), s->J, -1, NULL, g0, &index, err);
    }
    if (!st) st = kn_sap_adapter_note(s, index, (sap_info){KN_SAP_WELD, -1, -1, -1, -1, (int)i}, err);
    if (st) return kn_error_prefix(err, "stage 2 (weld %u '%s'): ", i, w->scene->doc->welds[i].name ? w->scene->doc->welds[i].name : "");
  }
  return KN_OK;
}

/* 4b-4e. the robot-side constraints after the contacts: joint limits, implicit PD, couplers, welds */
kn_status kn_sap_adapter_robot(kn_world* w, sap_state* s, double dt, kn_error* err) {
  kn_status st = add_limits(w, s, dt, err);
  if (!st) st = add_pd(w, s, dt, err);
  if (!st) st = add_couplers(w, s, err);
  if (!st) st = add_welds(w, s, err);
  return st;
}
