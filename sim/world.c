/* Building the world from a scene: robots loaded from URDF (embedded, relative or package://),
 * attached robots welded into their parent's tree, q0 set, controllers created from the scene's
 * controller sections, and every buffer the step needs allocated here, once. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/backend.h"

//---- one robot from its URDF ----

// (scene robot i) => its kn_robot alone, with the scene's package paths and base pose
static kn_status load_robot(const kn_scene* s, unsigned i, kn_robot** out, kn_error* err) {
  const kn_scene_robot* r = &s->doc->robots[i];
  char key[64];
  snprintf(key, sizeof key, "robots[%u].urdf", i);
  kn_urdf_options opt = kn_urdf_options_default();
  opt.package_paths = (const char* const*)s->package_paths;
  opt.npackage_paths = s->npackage_paths;
  opt.floating_base = r->floating;
  if (r->base_pose) kn_pose_from_xyz_rpy(r->base_pose->xyz, r->base_pose->rpy, &opt.base_pose);
  kn_status st;
  if (strncmp(r->urdf, "knead://", 8) == 0) {
    size_t len;
    const char* text = kn_embedded_file(r->urdf, &len);
    if (!text) {
      char names[512] = "";
      size_t k = 0;
      for (int e = 0; e < kn_embedded_count() && k < sizeof names; e++)
        k += (size_t)snprintf(names + k, sizeof names - k, "%sknead://%s", e ? ", " : "", kn_embedded_name(e));
      return kn_scene_fail(s, err, KN_ERR_IO, key, "'%s' is not embedded in this build (embedded: %s)", r->urdf,
                           k ? names : "none");
    }
    st = kn_urdf_load_string(text, r->urdf, NULL, &opt, out, err);
  } else {
    char* path = kn_scene_resolve_path(s, r->urdf, err);
    if (!path) {
      char msg[KN_ERROR_MSG];
      snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
      return kn_scene_fail(s, err, err ? err->status : KN_ERR_IO, key, "%s", msg);
    }
    st = kn_urdf_load(path, &opt, out, err);
    free(path);
  }
  if (st != KN_OK) {
    char msg[KN_ERROR_MSG];
    snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
    return kn_scene_fail(s, err, st, key, "robot '%s': %s", r->name, msg);
  }
  return KN_OK;
}

// (model, body range) => trajectory.csv column names "robot/joint[/coordinate]"
static kn_status make_columns(kn_world_robot* wr, const kn_mb_model* m) {
  static const char* const planar[] = {"x", "y", "theta"};
  static const char* const floating[] = {"x", "y", "z", "qw", "qx", "qy", "qz"};
  wr->columns = kn_calloc((size_t)m->nq, sizeof *wr->columns);
  if (!wr->columns) return KN_ERR_NOMEM;
  wr->ncolumn = m->nq;
  for (int b = 0; b < m->nbody; b++) {
    const kn_mb_body* body = &m->bodies[b];
    const char* jn = body->joint_name ? body->joint_name : (b == 0 ? "floating_base" : body->name);
    for (int k = 0; k < body->nq; k++) {
      char buf[512];
      if (body->nq == 1)
        snprintf(buf, sizeof buf, "%s/%s", wr->name, jn);
      else
        snprintf(buf, sizeof buf, "%s/%s/%s", wr->name, jn,
                 body->jtype == KN_JOINT_PLANAR ? planar[k] : (k < 7 ? floating[k] : "q"));
      wr->columns[body->q_adr + k] = kn_strdup(buf);
      if (!wr->columns[body->q_adr + k]) return KN_ERR_NOMEM;
    }
  }
  return KN_OK;
}

// (object's model) => "object/x" ... columns (a free primitive), or "object/joint" ones (a URDF)
static kn_status make_object_columns(kn_world_object* wo, const kn_mb_model* m) {
  kn_world_robot tmp = {.name = wo->name};
  kn_status st = make_columns(&tmp, m);
  wo->columns = tmp.columns;
  wo->ncolumn = tmp.ncolumn;
  if (st || m->nbody != 1 || m->bodies[0].jtype != KN_JOINT_FLOATING) return st;
  static const char* const coord[] = {"x", "y", "z", "qw", "qx", "qy", "qz"};
  for (int k = 0; k < 7; k++) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", wo->name, coord[k]);
    free(wo->columns[k]);
    wo->columns[k] = kn_strdup(buf);
    if (!wo->columns[k]) return KN_ERR_NOMEM;
  }
  return KN_OK;
}

//---- controllers ----

/* 1 when `tree_name` is `name`, or `name` behind the "<model>/" prefix kn_robot_attach adds to an
 * attached robot's names when they clash with its parent's */
static int same_name(const char* tree_name, const char* name) {
  if (!tree_name) return 0;
  if (strcmp(tree_name, name) == 0) return 1;
  size_t a = strlen(tree_name), b = strlen(name);
  return a > b + 1 && tree_name[a - b - 1] == '/' && strcmp(tree_name + a - b, name) == 0;
}

// (robot's body range in the tree, joint or link name) => body index in the tree, or -1
static int find_in_robot(const kn_mb_model* m, const kn_world_robot* wr, const char* name, int joint) {
  for (int b = wr->body_offset; b < wr->body_offset + wr->nbody; b++)
    if (same_name(joint ? m->bodies[b].joint_name : m->bodies[b].name, name)) return b;
  return -1;
}

static int is_mimic(const kn_mb_model* m, int body) {
  for (int c = 0; c < m->ncoupler; c++)
    if (m->couplers[c].body == body) return 1;
  return 0;
}

// (scene controller of robot i, merged tree model) => the dof list it drives (velocity indices)
static kn_status controller_dofs(const kn_scene* s, unsigned i, const kn_world_robot* wr, const kn_mb_model* m, int** dofs_out, int* ndof_out, kn_error* err) {
  const kn_scene_controller* c = s->doc->robots[i].controller;
  int* dofs = kn_calloc((size_t)m->nv, sizeof *dofs);
  if (!dofs) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  int n = 0;
  char key[96];
  if (c->joints) {
    for (unsigned j = 0; j < c->njoints; j++) {
      snprintf(key, sizeof key, "robots[%u].controller.joints[%u]", i, j);
      int b = find_in_robot(m, wr, c->joints[j], 1);
      if (b < 0) {
        free(dofs);
        return kn_scene_fail(s, err, KN_ERR_INVALID, key, "robot '%s' has no joint '%s'", wr->name, c->joints[j]);
      }
      const kn_mb_body* body = &m->bodies[b];
      if (body->nv < 1 || body->jtype == KN_JOINT_FLOATING) {
        free(dofs);
        return kn_scene_fail(s, err, KN_ERR_INVALID, key, "joint '%s' of robot '%s' is %s; a PD controller drives "
                             "revolute, continuous, prismatic or planar joints", c->joints[j], wr->name,
                             kn_joint_type_name(body->jtype));
      }
      for (int k = 0; k < body->nv; k++) dofs[n++] = body->v_adr + k;
    }
  } else {
    for (int b = wr->body_offset; b < wr->body_offset + wr->nbody; b++) {
      const kn_mb_body* body = &m->bodies[b];
      if (body->nv == 1 && !is_mimic(m, b)) dofs[n++] = body->v_adr;
    }
  }
  if (n == 0) {
    free(dofs);
    snprintf(key, sizeof key, "robots[%u].controller", i);
    return kn_scene_fail(s, err, KN_ERR_INVALID, key, "robot '%s' has no joint to control", wr->name);
  }
  *dofs_out = dofs;
  *ndof_out = n;
  return KN_OK;
}

// (list of n values under `key`) => KN_OK when n is `want` (or 1 when broadcast is allowed)
static kn_status check_count(const kn_scene* s, const char* key, unsigned n, int want, int broadcast,
                             const char* robot, kn_error* err) {
  if ((int)n == want || (broadcast && n == 1)) return KN_OK;
  return kn_scene_fail(s, err, KN_ERR_INVALID, key, "has %u value%s; robot '%s''s controller drives %d dof%s%s", n,
                       n == 1 ? "" : "s", robot, want, want == 1 ? "" : "s", broadcast ? " (or give 1 value)" : "");
}

// (scene controller of robot i) => a kn_controller on tree t with gains, limits and its reference
static kn_status build_controller(const kn_scene* s, unsigned i, kn_world* w, kn_controller** out, kn_error* err) {
  const kn_scene_controller* sc = s->doc->robots[i].controller;
  kn_world_robot* wr = &w->robots[i];
  kn_world_tree* tree = &w->trees[wr->tree];
  const kn_mb_model* m = tree->robot->model;
  int *dofs = NULL, ndof = 0;
  kn_status st = controller_dofs(s, i, wr, m, &dofs, &ndof, err);
  if (st) return st;
  kn_controller* c = NULL;
  st = kn_ctrl_create(m, wr->name, ndof, dofs, &c, err);
  free(dofs);
  char key[128], msg[KN_ERROR_MSG];
  snprintf(key, sizeof key, "robots[%u].controller", i);
  if (st) goto fail_msg;

  const double zero = 0;
  const double* kp = sc->kp ? sc->kp : sc->kp_per_joint;
  int nkp = sc->kp ? 1 : (int)sc->nkp_per_joint;
  const double* kd = sc->kd ? sc->kd : (sc->kd_per_joint ? sc->kd_per_joint : &zero);
  int nkd = sc->kd_per_joint && !sc->kd ? (int)sc->nkd_per_joint : 1;
  snprintf(key, sizeof key, "robots[%u].controller.kp_per_joint", i);
  if (sc->kp_per_joint && (st = check_count(s, key, sc->nkp_per_joint, ndof, 0, wr->name, err))) goto fail;
  snprintf(key, sizeof key, "robots[%u].controller.kd_per_joint", i);
  if (sc->kd_per_joint && (st = check_count(s, key, sc->nkd_per_joint, ndof, 0, wr->name, err))) goto fail;
  snprintf(key, sizeof key, "robots[%u].controller", i);
  if ((st = kn_ctrl_set_gains(c, kp, nkp, kd, nkd, err))) goto fail_msg;
  if (sc->effort_limits) {
    snprintf(key, sizeof key, "robots[%u].controller.effort_limits", i);
    if ((st = check_count(s, key, sc->neffort_limits, ndof, 1, wr->name, err))) goto fail;
    if ((st = kn_ctrl_set_effort_limits(c, sc->effort_limits, (int)sc->neffort_limits, err))) goto fail_msg;
  }
  kn_ctrl_set_gravity_compensation(c, sc->gravity_compensation ? *sc->gravity_compensation : 1);

  /* the reference: the controlled joints' q0 unless the scene gives one */
  double* q0 = kn_calloc((size_t)ndof, sizeof *q0);
  if (!q0) {
    st = kn_fail(err, KN_ERR_NOMEM, "out of memory");
    goto fail;
  }
  for (int k = 0; k < ndof; k++) q0[k] = tree->q[c->qidx[k]];
  if (sc->setpoint) {
    snprintf(key, sizeof key, "robots[%u].controller.setpoint", i);
    st = check_count(s, key, sc->nsetpoint, ndof, 0, wr->name, err);
    if (!st) st = kn_ctrl_set_setpoint(c, sc->setpoint, ndof, err);
  } else if (sc->trajectory && sc->trajectory->points) {
    const kn_scene_trajectory* tr = sc->trajectory;
    double* t = kn_calloc(tr->npoints, sizeof *t);
    double* q = kn_calloc((size_t)tr->npoints * (size_t)ndof, sizeof *q);
    st = (t && q) ? KN_OK : kn_fail(err, KN_ERR_NOMEM, "out of memory");
    for (unsigned k = 0; !st && k < tr->npoints; k++) {
      snprintf(key, sizeof key, "robots[%u].controller.trajectory.points[%u].q", i, k);
      st = check_count(s, key, tr->points[k].nq, ndof, 0, wr->name, err);
      if (!st) {
        t[k] = tr->points[k].t;
        memcpy(q + (size_t)k * (size_t)ndof, tr->points[k].q, (size_t)ndof * sizeof *q);
      }
    }
    snprintf(key, sizeof key, "robots[%u].controller.trajectory", i);
    kn_trajectory* traj = NULL;
    if (!st && !(st = kn_traj_create(ndof, (int)tr->npoints, t, q, NULL, tr->interpolation, &traj, err)))
      st = kn_ctrl_set_trajectory(c, m, traj, err);
    if (st && st == err->status && !strstr(err->msg, s->path)) {
      snprintf(msg, sizeof msg, "%s", err->msg);
      kn_scene_fail(s, err, st, key, "%s", msg);
    }
    free(t);
    free(q);
  } else if (sc->trajectory) {
    snprintf(key, sizeof key, "robots[%u].controller.trajectory.csv", i);
    char* path = kn_scene_resolve_path(s, sc->trajectory->csv, err);
    kn_trajectory* traj = NULL;
    st = path ? kn_traj_load_csv(path, sc->trajectory->interpolation, &traj, err) : KN_ERR_IO;
    free(path);
    if (!st) st = kn_ctrl_set_trajectory(c, m, traj, err);
    if (st) {
      snprintf(msg, sizeof msg, "%s", err->msg);
      kn_scene_fail(s, err, st, key, "%s", msg);
    }
  } else if (sc->sequence) {
    kn_sequence* seq = NULL;
    st = kn_seq_create(ndof, 0.0, q0, &seq, err);
    for (unsigned k = 0; !st && k < sc->nsequence; k++) {
      snprintf(key, sizeof key, "robots[%u].controller.sequence[%u].q", i, k);
      st = check_count(s, key, sc->sequence[k].nq, ndof, 0, wr->name, err);
      if (!st) st = kn_seq_add_phase(seq, sc->sequence[k].name, sc->sequence[k].duration, sc->sequence[k].q, err);
    }
    if (!st)
      st = kn_ctrl_set_sequence(c, seq, err);
    else
      kn_seq_free(seq);
  } else {
    st = kn_ctrl_set_setpoint(c, q0, ndof, err);
  }
  free(q0);
  if (st) goto fail;
  *out = c;
  return KN_OK;
fail_msg:
  snprintf(msg, sizeof msg, "%s", err->msg);
  kn_scene_fail(s, err, st, key, "%s", msg);
fail:
  kn_ctrl_free(c);
  return st;
}

//---- the world ----

void kn_world_free(kn_world* w) {
  if (!w) return;
  for (int i = 0; i < w->nrobot; i++) {
    free(w->robots[i].name);
    free(w->robots[i].urdf);
    for (int k = 0; k < w->robots[i].ncolumn; k++) free(w->robots[i].columns[k]);
    free(w->robots[i].columns);
  }
  free(w->robots);
  kn_sim_observers_free(w);
  if (w->backend) w->backend->free(w->backend_state);
  kn_sim_cliques_free(w);
  kn_sim_colliders_free(w);
  kn_sim_deformables_free(w);
  free(w->contacts);
  free(w->fem_contacts);
  free(w->mpm_contacts);
  for (int i = 0; i < w->nobject; i++) {
    free(w->objects[i].name);
    for (int k = 0; k < w->objects[i].ncolumn; k++) free(w->objects[i].columns[k]);
    free(w->objects[i].columns);
  }
  free(w->objects);
  for (int t = 0; t < w->ntree; t++) {
    kn_world_tree* tr = &w->trees[t];
    for (int c = 0; c < tr->nctrl; c++) kn_ctrl_free(tr->ctrls[c]);
    free(tr->ctrls);
    kn_mb_data_free(tr->data);
    kn_ctrl_buffers_free(tr->buf);
    free(tr->q_backup);
    free(tr->v_backup);
    free(tr->q);
    free(tr->v);
    kn_robot_free(tr->robot);
  }
  free(w->trees);
  kn_diag_free(&w->warnings);
  free(w);
}

// 1. every robot alone: its URDF, its own sizes, its column names, q0 length
static kn_status load_robots(const kn_scene* s, kn_world* w, kn_robot** loaded, kn_error* err) {
  const kn_scene_doc* d = s->doc;
  int n = (int)d->nrobots;
  kn_status st = KN_OK;
  char key[96];
  for (int i = 0; !st && i < n; i++) {
    const kn_scene_robot* r = &d->robots[i];
    kn_world_robot* wr = &w->robots[i];
    wr->name = kn_strdup(r->name);
    wr->urdf = kn_strdup(r->urdf);
    wr->attached_to = -1;
    if ((st = load_robot(s, (unsigned)i, &loaded[i], err))) break;
    const kn_mb_model* m = loaded[i]->model;
    wr->nbody = m->nbody;
    wr->nq = m->nq;
    wr->nv = m->nv;
    wr->dofs = kn_robot_dofs(loaded[i]);
    if (make_columns(wr, m)) {
      st = kn_fail(err, KN_ERR_NOMEM, "out of memory");
      break;
    }
    for (int k = 0; k < loaded[i]->warnings.count; k++)
      kn_diag_add(&w->warnings, "robot '%s': %s", r->name, loaded[i]->warnings.items[k]);
    if (r->q0 && (int)r->nq0 != m->nq) {
      snprintf(key, sizeof key, "robots[%d].q0", i);
      st = kn_scene_fail(s, err, KN_ERR_INVALID, key, "has %u value%s; robot '%s' (%s) has nq = %d position "
                         "coordinates (%s ... %s)", r->nq0, r->nq0 == 1 ? "" : "s", r->name, r->urdf, m->nq,
                         m->nq ? wr->columns[0] : "-", m->nq ? wr->columns[m->nq - 1] : "-");
    }
  }
  return st;
}

// 2-3. one tree per robot not attached to another, then attached robots welded onto their parents
static kn_status build_robot_trees(const kn_scene* s, kn_world* w, kn_robot** loaded, int* placed, kn_error* err) {
  const kn_scene_doc* d = s->doc;
  int n = (int)d->nrobots;
  kn_status st = KN_OK;
  char key[96];
  for (int i = 0; !st && i < n; i++) {
    if (d->robots[i].attach_to) continue;
    kn_world_tree* t = &w->trees[w->ntree];
    t->robot = loaded[i];
    t->root = i;
    t->object = -1;
    loaded[i] = NULL;
    w->robots[i].tree = w->ntree++;
    placed[i] = 1;
  }
  /* 3. weld attached robots onto their parents, parents first (scene/scene_validate.c rejected loops) */
  for (int progress = 1; !st && progress;) {
    progress = 0;
    for (int i = 0; !st && i < n; i++) {
      const kn_scene_attach* a = d->robots[i].attach_to;
      if (placed[i] || !a) continue;
      int j = 0;
      while (j < n && strcmp(d->robots[j].name, a->robot) != 0) j++;
      if (j == n || !placed[j]) continue;
      kn_world_robot *wr = &w->robots[i], *wp = &w->robots[j];
      kn_world_tree* t = &w->trees[wp->tree];
      kn_mb_model* m = t->robot->model;
      /* the link is named as in robot j's own URDF; in the tree it may carry a prefix */
      int link = find_in_robot(m, wp, a->link, 0);
      snprintf(key, sizeof key, "robots[%d].attach_to.link", i);
      if (link < 0) {
        st = kn_scene_fail(s, err, KN_ERR_INVALID, key, "robot '%s' has no link '%s'", a->robot, a->link);
        break;
      }
      kn_pose X;
      kn_pose_from_xyz_rpy(a->pose.xyz, a->pose.rpy, &X);
      wr->tree = wp->tree;
      wr->attached_to = j;
      wr->body_offset = m->nbody;
      wr->q_offset = m->nq;
      wr->v_offset = m->nv;
      st = kn_robot_attach(t->robot, loaded[i], m->bodies[link].name, &X, err);
      if (st) {
        char msg[KN_ERROR_MSG];
        snprintf(msg, sizeof msg, "%s", err->msg);
        snprintf(key, sizeof key, "robots[%d].attach_to", i);
        kn_scene_fail(s, err, st, key, "%s", msg);
        break;
      }
      m = t->robot->model;
      if (m->nbody != wr->body_offset + wr->nbody || m->nq != wr->q_offset + wr->nq) {
        st = kn_fail(err, KN_ERR_INVALID, "%s: attaching robot '%s': the merged tree does not end with its bodies",
                     s->path, wr->name);
        break;
      }
      placed[i] = 1;
      progress = 1;
    }
  }
  return st;
}

// 3b. objects: one tree each, after the robots'
static kn_status build_object_trees(const kn_scene* s, kn_world* w, kn_error* err) {
  const kn_scene_doc* d = s->doc;
  int nobj = (int)d->nobjects;
  kn_status st = KN_OK;
  for (int i = 0; !st && i < nobj; i++) {
    kn_world_tree* t = &w->trees[w->ntree];
    kn_world_object* wo = &w->objects[i];
    wo->name = kn_strdup(d->objects[i].name);
    wo->fixed = d->objects[i].fixed;
    wo->tree = w->ntree++;
    w->nobject++;
    t->root = -1;
    t->object = i;
    if ((st = kn_sim_object_load(s, (unsigned)i, &t->robot, NULL, 0, err))) break;
    if (make_object_columns(wo, t->robot->model)) st = kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  return st;
}

// 4. per tree: checks, gravity, state and scratch; then the robots' q0
static kn_status init_trees(const kn_scene* s, kn_world* w, kn_error* err) {
  const kn_scene_doc* d = s->doc;
  int n = (int)d->nrobots;
  kn_status st = KN_OK;
  char key[96];
  for (int t = 0; !st && t < w->ntree; t++) {
    kn_world_tree* tr = &w->trees[t];
    kn_mb_model* m = tr->robot->model;
    if ((st = kn_robot_check_simulatable(tr->robot, err))) {
      char msg[KN_ERROR_MSG];
      snprintf(msg, sizeof msg, "%s", err->msg);
      if (tr->root >= 0) {
        snprintf(key, sizeof key, "robots[%d].urdf", tr->root);
        kn_scene_fail(s, err, st, key, "robot '%s' cannot be simulated: %s", w->robots[tr->root].name, msg);
      } else {
        snprintf(key, sizeof key, "objects[%d].urdf", tr->object);
        kn_scene_fail(s, err, st, key, "object '%s' cannot be simulated: %s", w->objects[tr->object].name, msg);
      }
      break;
    }
    memcpy(m->gravity, s->gravity, sizeof m->gravity);
    tr->data = kn_mb_data_create(m);
    tr->buf = kn_ctrl_buffers_create(m);
    tr->q = kn_calloc((size_t)m->nq, sizeof *tr->q);
    tr->v = kn_calloc((size_t)m->nv, sizeof *tr->v);
    tr->q_backup = kn_calloc((size_t)m->nq, sizeof *tr->q_backup);
    tr->v_backup = kn_calloc((size_t)m->nv, sizeof *tr->v_backup);
    tr->ctrls = kn_calloc((size_t)n, sizeof *tr->ctrls);
    if (!tr->data || !tr->buf || !tr->q || !tr->v || !tr->q_backup || !tr->v_backup || !tr->ctrls) {
      st = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", s->path);
      break;
    }
    kn_mb_neutral_q(m, tr->q);
    if (tr->object >= 0) {
      double q0[7];
      const kn_scene_object* o = &d->objects[tr->object];
      /* primitives: the pose in the floating coordinates; URDF objects: neutral (pose in X_pj) */
      if (o->shape && !o->fixed) {
        kn_pose X;
        kn_pose_from_xyz_rpy(o->pose.xyz, o->pose.rpy, &X);
        memcpy(q0, X.p, sizeof X.p);
        kn_quat_from_mat3(X.R, q0 + 3);
        memcpy(tr->q, q0, 7 * sizeof *q0);
      }
      if (o->velocity && m->nbody > 0 && m->bodies[0].jtype == KN_JOINT_FLOATING)
        memcpy(tr->v + m->bodies[0].v_adr, o->velocity, 6 * sizeof(double));
    }
  }
  for (int i = 0; !st && i < n; i++)
    if (d->robots[i].q0)
      memcpy(w->trees[w->robots[i].tree].q + w->robots[i].q_offset, d->robots[i].q0,
             (size_t)w->robots[i].nq * sizeof(double));
  return st;
}

// 5. controllers, once every q0 is in place (a controller without reference holds q0)
static kn_status build_controllers(const kn_scene* s, kn_world* w, kn_error* err) {
  const kn_scene_doc* d = s->doc;
  int n = (int)d->nrobots;
  kn_status st = KN_OK;
  for (int i = 0; !st && i < n; i++) {
    if (!d->robots[i].controller) continue;
    kn_world_tree* tr = &w->trees[w->robots[i].tree];
    kn_controller* c = NULL;
    st = build_controller(s, (unsigned)i, w, &c, err);
    if (st) break;
    tr->ctrls[tr->nctrl++] = c;
  }
  return st;
}

kn_status kn_world_create(const kn_scene* s, kn_world** out, kn_error* err) {
  kn_blas_deterministic();
  kn_heap_keep();
  const kn_backend* backend = kn_backend_find(s, err);
  if (!backend) return err ? err->status : KN_ERR_UNSUPPORTED;
  const kn_scene_doc* d = s->doc;
  int n = (int)d->nrobots;
  int nobj = (int)d->nobjects;
  kn_world* w = kn_calloc(1, sizeof *w);
  kn_robot** loaded = kn_calloc((size_t)n, sizeof *loaded);
  int* placed = kn_calloc((size_t)n, sizeof *placed);
  if (!w || !loaded || !placed) {
    free(w), free(loaded), free(placed);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", s->path);
  }
  w->scene = s;
  w->nrobot = n;
  w->robots = kn_calloc((size_t)n, sizeof *w->robots);
  w->trees = kn_calloc((size_t)(n + nobj), sizeof *w->trees);
  w->objects = kn_calloc((size_t)nobj, sizeof *w->objects);
  kn_status st = (w->robots && w->trees && w->objects) ? KN_OK : kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", s->path);

  if (!st) st = load_robots(s, w, loaded, err);
  if (!st) st = build_robot_trees(s, w, loaded, placed, err);
  if (!st) st = build_object_trees(s, w, err);
  if (!st) st = init_trees(s, w, err);
  if (!st) st = build_controllers(s, w, err);
  /* 6. deformables, colliders and the contact backend */
  if (!st) st = kn_sim_deformables_build(w, err);
  if (!st) st = kn_sim_colliders_build(w, err);
  if (!st) st = kn_sim_cliques_build(w, err);
  if (!st) {
    w->backend = backend;
    st = backend->create(w, &w->backend_state, err);
    if (st) w->backend = NULL;
  }
  /* 7. bodies that start inside each other: a warning per pair (overlap.c) */
  if (!st) st = kn_sim_initial_overlaps(w, err);

  for (int i = 0; i < n; i++) kn_robot_free(loaded[i]);
  free(loaded);
  free(placed);
  if (st) {
    kn_world_free(w);
    return st;
  }
  w->step = 0;
  w->t = 0;
  *out = w;
  return KN_OK;
}

/* (scene name) => tree and body: "world" (tree -1), an object (its root body), "object/link" or
 * "robot/link" (an attached robot's links may carry a "<model>/" prefix in the merged tree).
 * 0 when nothing matches. */
int kn_sim_find_body(const kn_world* w, const char* name, int* tree, int* body) {
  if (strcmp(name, "world") == 0) return (*tree = -1), (*body = -1), 1;
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
      const char* ls = strrchr(m->bodies[b].name, '/');
      if (strcmp(ls ? ls + 1 : m->bodies[b].name, slash + 1) == 0) return (*tree = wr->tree), (*body = b), 1;
    }
  }
  return 0;
}
