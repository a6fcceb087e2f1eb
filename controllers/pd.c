/* Joint PD controllers with gravity-compensation feed-forward and effort limits, filling the
 * implicit actuation of kn_mb_step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/controllers.h"

/*---- creation ----*/

/* body whose inboard joint owns velocity index dof, or -1 */
static int body_of_dof(const kn_mb_model* m, int dof) {
  for (int b = 0; b < m->nbody; ++b) {
    const kn_mb_body* B = &m->bodies[b];
    if (B->nv > 0 && dof >= B->v_adr && dof < B->v_adr + B->nv) return b;
  }
  return -1;
}

/* a dof the default controller drives: 1-DoF joints that are not mimic (coupled) joints, whose
 * motion the coupler constraint already decides */
static int is_default_dof(const kn_mb_model* m, int b) {
  kn_joint_type t = m->bodies[b].jtype;
  if (t != KN_JOINT_REVOLUTE && t != KN_JOINT_CONTINUOUS && t != KN_JOINT_PRISMATIC) return 0;
  for (int k = 0; k < m->ncoupler; ++k)
    if (m->couplers[k].body == b) return 0;
  return 1;
}

// (m, name, dofs) => *out with default gains 0, URDF effort limits, gravity compensation on
kn_status kn_ctrl_create(const kn_mb_model* m, const char* name, int ndof, const int* dofs, kn_controller** out,
                         kn_error* err) {
  const char* nm = name ? name : "";
  if (!m) return kn_fail(err, KN_ERR_INVALID, "controller '%s': no model", nm);
  int n = 0;
  if (dofs) {
    n = ndof;
    if (n < 1) return kn_fail(err, KN_ERR_INVALID, "controller '%s': expected at least 1 dof, got %d", nm, ndof);
  } else {
    for (int b = 0; b < m->nbody; ++b) n += is_default_dof(m, b);
    if (n < 1)
      return kn_fail(err, KN_ERR_INVALID, "controller '%s': model '%s' has no revolute or prismatic joint", nm,
                     m->name ? m->name : "");
  }

  kn_controller* c = kn_calloc(1, sizeof *c);
  if (!c) return kn_fail(err, KN_ERR_NOMEM, "controller '%s': out of memory", nm);
  c->name = kn_strdup(nm);
  c->ndof = n;
  c->dofs = kn_calloc((size_t)n, sizeof(int));
  c->qidx = kn_calloc((size_t)n, sizeof(int));
  c->kp = kn_calloc((size_t)n, sizeof(double));
  c->kd = kn_calloc((size_t)n, sizeof(double));
  c->effort = kn_calloc((size_t)n, sizeof(double));
  c->setpoint = kn_calloc((size_t)n, sizeof(double));
  if (!c->name || !c->dofs || !c->qidx || !c->kp || !c->kd || !c->effort || !c->setpoint) {
    kn_ctrl_free(c);
    return kn_fail(err, KN_ERR_NOMEM, "controller '%s': out of memory", nm);
  }
  c->gravity_compensation = 1;
  c->ref_kind = KN_REF_SETPOINT;

  if (dofs) {
    memcpy(c->dofs, dofs, (size_t)n * sizeof(int));
  } else {
    int i = 0;
    for (int b = 0; b < m->nbody; ++b)
      if (is_default_dof(m, b)) c->dofs[i++] = m->bodies[b].v_adr;
  }

  for (int i = 0; i < n; ++i) {
    int d = c->dofs[i];
    if (d < 0 || d >= m->nv) {
      kn_ctrl_free(c);
      return kn_fail(err, KN_ERR_INVALID, "controller '%s': dof %d (entry %d) is out of range: model '%s' has nv = %d",
                     nm, d, i, m->name ? m->name : "", m->nv);
    }
    for (int k = 0; k < i; ++k)
      if (c->dofs[k] == d) {
        kn_ctrl_free(c);
        return kn_fail(err, KN_ERR_INVALID, "controller '%s': dof %d is listed twice (entries %d and %d)", nm, d, k, i);
      }
    int b = body_of_dof(m, d);
    const kn_mb_body* B = &m->bodies[b];
    if (B->jtype == KN_JOINT_FLOATING) {
      kn_ctrl_free(c);
      return kn_fail(err, KN_ERR_INVALID,
                     "controller '%s': dof %d belongs to floating joint '%s': expected a revolute, prismatic, "
                     "continuous or planar joint",
                     nm, d, B->joint_name ? B->joint_name : B->name);
    }
    /* nq == nv for every joint but FLOATING, so position and velocity offsets agree */
    c->qidx[i] = B->q_adr + (d - B->v_adr);
    /* URDF effort limit; a missing or zero limit (urdfdom's default) means none */
    c->effort[i] = (B->effort_limit > 0.0) ? B->effort_limit : INFINITY;
  }
  *out = c;
  return KN_OK;
}

// (m, name, joint names) => *out on those joints' dofs, in the order given
kn_status kn_ctrl_create_for_joints(const kn_mb_model* m, const char* name, int njoint,
                                    const char* const* joint_names, kn_controller** out, kn_error* err) {
  const char* nm = name ? name : "";
  if (!m) return kn_fail(err, KN_ERR_INVALID, "controller '%s': no model", nm);
  if (njoint < 1 || !joint_names)
    return kn_fail(err, KN_ERR_INVALID, "controller '%s': expected at least 1 joint name", nm);
  int n = 0;
  for (int j = 0; j < njoint; ++j) {
    int b = kn_mb_find_joint(m, joint_names[j]);
    if (b < 0)
      return kn_fail(err, KN_ERR_INVALID, "controller '%s': joint '%s' not found in model '%s'", nm, joint_names[j],
                     m->name ? m->name : "");
    if (m->bodies[b].nv < 1)
      return kn_fail(err, KN_ERR_INVALID, "controller '%s': joint '%s' is %s: expected a joint with a dof", nm,
                     joint_names[j], kn_joint_type_name(m->bodies[b].jtype));
    n += m->bodies[b].nv;
  }
  int* dofs = kn_calloc((size_t)n, sizeof(int));
  if (!dofs) return kn_fail(err, KN_ERR_NOMEM, "controller '%s': out of memory", nm);
  int i = 0;
  for (int j = 0; j < njoint; ++j) {
    const kn_mb_body* B = &m->bodies[kn_mb_find_joint(m, joint_names[j])];
    for (int k = 0; k < B->nv; ++k) dofs[i++] = B->v_adr + k;
  }
  kn_status st = kn_ctrl_create(m, nm, n, dofs, out, err);
  free(dofs);
  return st;
}

void kn_ctrl_free(kn_controller* c) {
  if (!c) return;
  free(c->name);
  free(c->dofs);
  free(c->qidx);
  free(c->kp);
  free(c->kd);
  free(c->effort);
  free(c->setpoint);
  kn_traj_free(c->traj);
  kn_seq_free(c->seq);
  free(c);
}

/*---- parameters ----*/

/* check n values (1 = broadcast, or ndof): finite >= 0, or (positive) > 0 allowing +inf */
static kn_status check_per_dof(const kn_controller* c, const double* src, int n, const char* what,
                               const char* expected, int positive, kn_error* err) {
  if (!src || (n != 1 && n != c->ndof))
    return kn_fail(err, KN_ERR_INVALID, "controller '%s': %s: expected 1 value or %d (one per dof), got %d", c->name,
                   what, c->ndof, src ? n : 0);
  for (int i = 0; i < n; ++i) {
    double x = src[i];
    int good = positive ? (x > 0.0 && !isnan(x)) : (x >= 0.0 && isfinite(x));
    if (!good)
      return kn_fail(err, KN_ERR_INVALID, "controller '%s': %s[%d] = %g: expected %s", c->name, what, i, x, expected);
  }
  return KN_OK;
}

static void broadcast(const kn_controller* c, double* dst, const double* src, int n) {
  for (int i = 0; i < c->ndof; ++i) dst[i] = src[n == 1 ? 0 : i];
}

kn_status kn_ctrl_set_gains(kn_controller* c, const double* kp, int nkp, const double* kd, int nkd, kn_error* err) {
  /* validate both before writing either, so a failure leaves the controller unchanged */
  kn_status st = check_per_dof(c, kp, nkp, "kp", "a finite value >= 0", 0, err);
  if (st != KN_OK) return st;
  st = check_per_dof(c, kd, nkd, "kd", "a finite value >= 0", 0, err);
  if (st != KN_OK) return st;
  broadcast(c, c->kp, kp, nkp);
  broadcast(c, c->kd, kd, nkd);
  return KN_OK;
}

kn_status kn_ctrl_set_effort_limits(kn_controller* c, const double* effort, int n, kn_error* err) {
  kn_status st = check_per_dof(c, effort, n, "effort limit", "a value > 0 (inf for none)", 1, err);
  if (st == KN_OK) broadcast(c, c->effort, effort, n);
  return st;
}

void kn_ctrl_set_gravity_compensation(kn_controller* c, int on) { c->gravity_compensation = on ? 1 : 0; }

static void clear_reference(kn_controller* c) {
  kn_traj_free(c->traj);
  kn_seq_free(c->seq);
  c->traj = NULL;
  c->seq = NULL;
}

kn_status kn_ctrl_set_setpoint(kn_controller* c, const double* q, int n, kn_error* err) {
  if (!q || n != c->ndof)
    return kn_fail(err, KN_ERR_INVALID, "controller '%s': setpoint has %d values: expected %d (one per dof)", c->name,
                   q ? n : 0, c->ndof);
  for (int i = 0; i < n; ++i)
    if (!isfinite(q[i]))
      return kn_fail(err, KN_ERR_INVALID, "controller '%s': setpoint[%d] is not finite", c->name, i);
  memcpy(c->setpoint, q, (size_t)n * sizeof(double));
  clear_reference(c);
  c->ref_kind = KN_REF_SETPOINT;
  return KN_OK;
}

/* name of the joint owning dof, "" when unnamed */
static const char* dof_joint_name(const kn_mb_model* m, int dof) {
  int b = body_of_dof(m, dof);
  return (b >= 0 && m->bodies[b].joint_name) ? m->bodies[b].joint_name : "";
}

kn_status kn_ctrl_set_trajectory(kn_controller* c, const kn_mb_model* m, kn_trajectory* traj, kn_error* err) {
  if (!traj) return kn_fail(err, KN_ERR_INVALID, "controller '%s': no trajectory", c->name);
  if (traj->n != c->ndof) {
    int n = traj->n;
    kn_traj_free(traj);
    return kn_fail(err, KN_ERR_INVALID, "controller '%s': trajectory has %d joints: expected %d (one per dof)",
                   c->name, n, c->ndof);
  }
  /* A header column naming a controlled joint must sit in that joint's column: a swapped CSV
   * column is a silent disaster on a real robot. Names that are not joints (q1, ...) pass. */
  if (m && traj->joint_names) {
    for (int j = 0; j < traj->n; ++j) {
      for (int i = 0; i < c->ndof; ++i) {
        if (i == j || c->dofs[i] >= m->nv) continue;
        const char* jn = dof_joint_name(m, c->dofs[i]);
        if (jn[0] && strcmp(jn, traj->joint_names[j]) == 0 && strcmp(dof_joint_name(m, c->dofs[j]), jn) != 0) {
          kn_fail(err, KN_ERR_INVALID,
                  "controller '%s': trajectory column %d is joint '%s', which this controller drives as dof entry "
                  "%d: expected the columns in the controller's joint order",
                  c->name, j + 2, jn, i);
          kn_traj_free(traj);
          return KN_ERR_INVALID;
        }
      }
    }
  }
  clear_reference(c);
  c->traj = traj;
  c->ref_kind = KN_REF_TRAJECTORY;
  return KN_OK;
}

kn_status kn_ctrl_set_sequence(kn_controller* c, kn_sequence* seq, kn_error* err) {
  if (!seq) return kn_fail(err, KN_ERR_INVALID, "controller '%s': no sequence", c->name);
  if (seq->n != c->ndof) {
    int n = seq->n;
    kn_seq_free(seq);
    return kn_fail(err, KN_ERR_INVALID, "controller '%s': sequence has %d joints: expected %d (one per dof)",
                   c->name, n, c->ndof);
  }
  clear_reference(c);
  c->seq = seq;
  c->ref_kind = KN_REF_SEQUENCE;
  return KN_OK;
}

// (t) => q_ref, v_ref, a_ref of the controller's dofs
void kn_ctrl_reference(const kn_controller* c, double t, double* q_ref, double* v_ref, double* a_ref) {
  switch (c->ref_kind) {
    case KN_REF_TRAJECTORY:
      kn_traj_eval(c->traj, t, q_ref, v_ref, a_ref);
      return;
    case KN_REF_SEQUENCE:
      kn_seq_eval(c->seq, t, q_ref, v_ref, a_ref);
      return;
    case KN_REF_SETPOINT:
    default:
      for (int i = 0; i < c->ndof; ++i) {
        if (q_ref) q_ref[i] = c->setpoint[i];
        if (v_ref) v_ref[i] = 0.0;
        if (a_ref) a_ref[i] = 0.0;
      }
      return;
  }
}

/*---- actuation buffers ----*/

kn_ctrl_buffers* kn_ctrl_buffers_create(const kn_mb_model* m) {
  kn_ctrl_buffers* b = kn_calloc(1, sizeof *b);
  if (!b) return NULL;
  size_t nv = (size_t)m->nv;
  b->nv = m->nv;
  b->tau0 = kn_calloc(nv, sizeof(double));
  b->kp = kn_calloc(nv, sizeof(double));
  b->kd = kn_calloc(nv, sizeof(double));
  b->q_ref = kn_calloc(nv, sizeof(double));
  b->v_ref = kn_calloc(nv, sizeof(double));
  b->effort = kn_calloc(nv, sizeof(double));
  b->tau_g = kn_calloc(nv, sizeof(double));
  b->owner = kn_calloc(nv, sizeof(int));
  b->ref = kn_calloc(2 * nv, sizeof(double));
  if (!b->tau0 || !b->kp || !b->kd || !b->q_ref || !b->v_ref || !b->effort || !b->tau_g || !b->owner || !b->ref) {
    kn_ctrl_buffers_free(b);
    return NULL;
  }
  b->act.tau0 = b->tau0;
  b->act.kp = b->kp;
  b->act.kd = b->kd;
  b->act.q_ref = b->q_ref;
  b->act.v_ref = b->v_ref;
  b->act.effort = b->effort;
  kn_ctrl_buffers_reset(b);
  return b;
}

void kn_ctrl_buffers_free(kn_ctrl_buffers* b) {
  if (!b) return;
  free(b->tau0);
  free(b->kp);
  free(b->kd);
  free(b->q_ref);
  free(b->v_ref);
  free(b->effort);
  free(b->tau_g);
  free(b->owner);
  free(b->ref);
  free(b);
}

void kn_ctrl_buffers_reset(kn_ctrl_buffers* b) {
  for (int i = 0; i < b->nv; ++i) {
    b->tau0[i] = b->kp[i] = b->kd[i] = b->q_ref[i] = b->v_ref[i] = 0.0;
    b->effort[i] = INFINITY;
    b->owner[i] = -1;
  }
}

/*---- the control law ----*/

static double clamp_abs(double x, double limit) { return x > limit ? limit : (x < -limit ? -limit : x); }

// (controllers, t, q) => out->{tau0, kp, kd, q_ref, v_ref, effort} for kn_mb_step
kn_status kn_ctrl_compute(const kn_controller* const* cs, int nc, const kn_mb_model* m, kn_mb_data* d, double t,
                          const double* q, const double* v, kn_ctrl_buffers* out, kn_error* err) {
  (void)v; /* the law uses only the references; v is implicit in kn_mb_step */
  if (out->nv != m->nv)
    return kn_fail(err, KN_ERR_INVALID, "controllers of model '%s': actuation buffers have nv = %d, expected %d",
                   m->name ? m->name : "", out->nv, m->nv);
  kn_ctrl_buffers_reset(out);

  /*---- claim dofs, check they fit the model ----*/
  int need_gravity = 0;
  for (int k = 0; k < nc; ++k) {
    const kn_controller* c = cs[k];
    for (int i = 0; i < c->ndof; ++i) {
      int dof = c->dofs[i];
      if (dof < 0 || dof >= m->nv || c->qidx[i] < 0 || c->qidx[i] >= m->nq)
        return kn_fail(err, KN_ERR_INVALID, "controller '%s': dof %d is out of range for model '%s' (nv = %d)",
                       c->name, dof, m->name ? m->name : "", m->nv);
      if (out->owner[dof] >= 0)
        return kn_fail(err, KN_ERR_INVALID, "controller '%s': dof %d (joint '%s') is already driven by controller '%s'",
                       c->name, dof, dof_joint_name(m, dof), cs[out->owner[dof]]->name);
      out->owner[dof] = k;
    }
    need_gravity |= c->gravity_compensation;
  }

  /*---- gravity compensation: g(q) by RNEA at v = 0, once for the tree ----*/
  if (need_gravity) {
    /* q NULL: d's poses are the caller's, already at q (the SAP step shares them, one kinematics
     * pass per step); gravity torques read only the poses, never the velocities */
    if (q) kn_mb_kinematics(m, q, NULL, d);
    kn_mb_gravity_torques(m, d, out->tau_g);
  }

  /*---- per controller: gains, limits, references ----*/
  for (int k = 0; k < nc; ++k) {
    const kn_controller* c = cs[k];
    /* the references land in the buffers' scratch, then scatter to the dofs (ndof <= nv) */
    double* qr = out->ref;
    double* vr = out->ref + c->ndof;
    kn_ctrl_reference(c, t, qr, vr, NULL);
    for (int i = 0; i < c->ndof; ++i) {
      int dof = c->dofs[i];
      out->kp[dof] = c->kp[i];
      out->kd[dof] = c->kd[i];
      out->effort[dof] = c->effort[i];
      out->q_ref[dof] = qr[i];
      out->v_ref[dof] = vr[i];
      /* kn_mb_step clamps only dofs with kp or kd > 0, so clamp the feed-forward here too */
      out->tau0[dof] = c->gravity_compensation ? clamp_abs(out->tau_g[dof], c->effort[i]) : 0.0;
    }
  }

  /*---- mimic joints follow their master: compensate their own gravity torque too, when the
   *     master's controller compensates and nothing drives the mimic dof (a gripper held by
   *     gravity compensation must not sag through its coupled fingers) ----*/
  for (int k = 0; k < m->ncoupler; ++k) {
    const kn_mb_body* mimic = &m->bodies[m->couplers[k].body];
    const kn_mb_body* master = &m->bodies[m->couplers[k].master];
    int owner = out->owner[master->v_adr];
    if (mimic->nv != 1 || out->owner[mimic->v_adr] >= 0 || owner < 0 || !cs[owner]->gravity_compensation) continue;
    out->tau0[mimic->v_adr] = clamp_abs(out->tau_g[mimic->v_adr], mimic->effort_limit);
  }
  return KN_OK;
}
