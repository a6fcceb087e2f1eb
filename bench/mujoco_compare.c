/* knead-bench — the MuJoCo side: load the same URDF in MuJoCo, check that both engines agree,
 * and time the MuJoCo calls that compute what each knead algorithm computes.
 * Compiled with MuJoCo only when CMake found it (KNEAD_HAVE_MUJOCO); otherwise stubs. */
#include "bench.h"

#ifndef KNEAD_HAVE_MUJOCO

int kb_mujoco_available(void) { return 0; }
const char* kb_mujoco_version(void) { return ""; }
kb_mujoco* kb_mujoco_load(const char* urdf_text, const kn_mb_model* model, const kb_point* ee, char* err,
                          size_t errsz) {
  (void)urdf_text, (void)model, (void)ee, (void)err, (void)errsz;
  return NULL;
}
void kb_mujoco_free(kb_mujoco* mj) { (void)mj; }
void kb_mujoco_time(kb_mujoco* mj, const kb_plan* p, const kb_configs* c, double us[KB_NOP], double* forward_us) {
  (void)mj, (void)p, (void)c, (void)us, (void)forward_us;
}
void kb_mujoco_check(kb_mujoco* mj, const kn_mb_model* model, kn_mb_data* d, const kb_point* ee,
                     const kb_configs* c, kb_check* out) {
  (void)mj, (void)model, (void)d, (void)ee, (void)c, (void)out;
}

#else

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

struct kb_mujoco {
  mjModel* m;
  mjData* d;
  int nv;
  int* qadr;     /* knead dof k => MuJoCo qpos address */
  int* vadr;     /* knead dof k => MuJoCo dof address */
  int ee_body;   /* MuJoCo body of the end effector */
  double p_b[3]; /* end-effector point in that body's frame */
  /* timing context */
  const kb_configs* c;
  double point_w[3];
  double *jacp, *jacr, *res, *tau, *frc;
};

int kb_mujoco_available(void) { return 1; }

const char* kb_mujoco_version(void) {
  static char v[32];
  int n = mj_version();
  snprintf(v, sizeof v, "%d.%d.%d", n / 100, (n / 10) % 10, n % 10);
  return v;
}

/* the URDF text with a <mujoco><compiler/></mujoco> element inserted after <robot ...>:
 * fusestatic="false" keeps links welded by fixed joints as bodies (MuJoCo's URDF import would
 * otherwise merge them, and the end-effector link would vanish); inertiafromgeom="false" takes
 * masses only from <inertial>, as knead does (a link without one is massless in both);
 * discardvisual drops the visual-only geoms. */
static char* urdf_for_mujoco(const char* text, int* size, char* err, size_t errsz) {
  const char* robot = strstr(text, "<robot");
  const char* close = robot ? strchr(robot, '>') : NULL;
  if (!close) {
    snprintf(err, errsz, "no <robot> element");
    return NULL;
  }
  static const char extra[] =
      "\n  <mujoco><compiler discardvisual=\"true\" fusestatic=\"false\" inertiafromgeom=\"false\"/></mujoco>\n";
  size_t n = strlen(text);
  size_t head = (size_t)(close - text) + 1;
  size_t total = n + sizeof extra - 1;
  char* out = calloc(total + 1, 1);
  if (!out) return NULL;
  memcpy(out, text, head);
  memcpy(out + head, extra, sizeof extra - 1);
  memcpy(out + head + sizeof extra - 1, text + head, n - head);
  *size = (int)total;
  return out;
}

kb_mujoco* kb_mujoco_load(const char* urdf_text, const kn_mb_model* model, const kb_point* ee, char* err,
                          size_t errsz) {
  int size = 0;
  char* xml = urdf_for_mujoco(urdf_text, &size, err, errsz);
  if (!xml) return NULL;
  /* mjVFS is ~2 MB in 2.2.2: heap, not stack */
  mjVFS* vfs = calloc(1, sizeof(mjVFS));
  if (!vfs) {
    free(xml);
    return NULL;
  }
  mj_defaultVFS(vfs);
  const char* name = "knead_bench_robot.urdf";
  mj_makeEmptyFileVFS(vfs, name, size);
  memcpy(vfs->filedata[vfs->nfile - 1], xml, (size_t)size);
  free(xml);
  char msg[1000] = "";
  mjModel* m = mj_loadXML(name, vfs, msg, sizeof msg);
  mj_deleteVFS(vfs);
  free(vfs);
  if (!m) {
    snprintf(err, errsz, "mj_loadXML: %s", msg);
    return NULL;
  }
  kb_mujoco* mj = calloc(1, sizeof *mj);
  mj->m = m;
  mj->nv = model->nv;
  if (m->nv != model->nv) {
    snprintf(err, errsz, "MuJoCo has nv %d, knead %d", m->nv, model->nv);
    kb_mujoco_free(mj);
    return NULL;
  }
  mj->qadr = calloc((size_t)model->nv, sizeof(int));
  mj->vadr = calloc((size_t)model->nv, sizeof(int));
  for (int b = 0; b < model->nbody; ++b) {
    const kn_mb_body* body = &model->bodies[b];
    if (body->nv == 0) continue;
    int j = mj_name2id(m, mjOBJ_JOINT, body->joint_name);
    if (j < 0 || body->nv != 1) {
      snprintf(err, errsz, "joint '%s' (%s) has no 1-DoF MuJoCo counterpart", body->joint_name,
               kn_joint_type_name(body->jtype));
      kb_mujoco_free(mj);
      return NULL;
    }
    mj->qadr[body->v_adr] = m->jnt_qposadr[j];
    mj->vadr[body->v_adr] = m->jnt_dofadr[j];
  }
  mj->ee_body = mj_name2id(m, mjOBJ_BODY, model->bodies[ee->body].name);
  if (mj->ee_body < 0) {
    snprintf(err, errsz, "link '%s' is not a MuJoCo body (fused?)", model->bodies[ee->body].name);
    kb_mujoco_free(mj);
    return NULL;
  }
  memcpy(mj->p_b, ee->p_b, sizeof mj->p_b);

  /* The same equations of motion as knead's RNEA/ABA: no joint damping, friction loss,
   * stiffness or armature (MuJoCo's URDF import reads <dynamics damping friction>), no limits,
   * contacts or other constraints, and knead's gravity. */
  for (int i = 0; i < m->nv; ++i) m->dof_damping[i] = m->dof_frictionloss[i] = m->dof_armature[i] = 0.0;
  for (int j = 0; j < m->njnt; ++j) m->jnt_stiffness[j] = 0.0;
  m->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_EQUALITY | mjDSBL_FRICTIONLOSS | mjDSBL_LIMIT |
                         mjDSBL_CONTACT | mjDSBL_PASSIVE | mjDSBL_ACTUATION;
  for (int k = 0; k < 3; ++k) m->opt.gravity[k] = model->gravity[k];

  mj->d = mj_makeData(m);
  int n = m->nv;
  mj->jacp = calloc((size_t)(3 * n), sizeof(double));
  mj->jacr = calloc((size_t)(3 * n), sizeof(double));
  mj->res = calloc((size_t)(n * n), sizeof(double));
  mj->tau = calloc((size_t)n, sizeof(double));
  mj->frc = calloc((size_t)n, sizeof(double));
  return mj;
}

void kb_mujoco_free(kb_mujoco* mj) {
  if (!mj) return;
  if (mj->d) mj_deleteData(mj->d);
  if (mj->m) mj_deleteModel(mj->m);
  free(mj->qadr);
  free(mj->vadr);
  free(mj->jacp);
  free(mj->jacr);
  free(mj->res);
  free(mj->tau);
  free(mj->frc);
  free(mj);
}

/* configuration `rep` => qpos, qvel, qacc, and tau in MuJoCo's dof order */
static void load_config(kb_mujoco* mj, int rep) {
  int k = (rep % mj->c->nconf) * mj->nv;
  for (int i = 0; i < mj->nv; ++i) {
    mj->d->qpos[mj->qadr[i]] = mj->c->q[k + i];
    mj->d->qvel[mj->vadr[i]] = mj->c->v[k + i];
    mj->d->qacc[mj->vadr[i]] = mj->c->qdd[k + i];
    mj->tau[mj->vadr[i]] = mj->c->tau[k + i];
  }
}

/* what MuJoCo's dynamics need from positions: body poses, then the com-based inertias cinert
 * and motion axes cdof (mj_comPos), which knead's algorithms compute internally */
static void position_stage(kb_mujoco* mj) {
  mj_kinematics(mj->m, mj->d);
  mj_comPos(mj->m, mj->d);
}

/* qdd = M^-1 (tau - c(q, v)), given qM factored and qfrc_bias: mj_fwdAcceleration's algebra with
 * no passive, actuator or applied forces, then mj_solveM (constraints disabled: qacc = qacc_smooth) */
static void solve_qdd(kb_mujoco* mj) {
  for (int i = 0; i < mj->nv; ++i) mj->frc[i] = mj->tau[i] - mj->d->qfrc_bias[i];
  mj_solveM(mj->m, mj->d, mj->d->qacc, mj->frc, 1);
}

static void setup_q(void* ctx, int rep) { load_config(ctx, rep); }
static void setup_pos(void* ctx, int rep) {
  kb_mujoco* mj = ctx;
  load_config(mj, rep);
  position_stage(mj);
  const double* R = mj->d->xmat + 9 * mj->ee_body;
  const double* p = mj->d->xpos + 3 * mj->ee_body;
  for (int r = 0; r < 3; ++r)
    mj->point_w[r] = p[r] + R[3 * r] * mj->p_b[0] + R[3 * r + 1] * mj->p_b[1] + R[3 * r + 2] * mj->p_b[2];
}
static void setup_vel(void* ctx, int rep) {
  kb_mujoco* mj = ctx;
  setup_pos(mj, rep);
  mj_comVel(mj->m, mj->d);
}

static void call_fk(void* ctx) {
  kb_mujoco* mj = ctx;
  mj_kinematics(mj->m, mj->d);
}
static void call_jac(void* ctx) {
  kb_mujoco* mj = ctx;
  mj_jac(mj->m, mj->d, mj->jacp, mj->jacr, mj->point_w, mj->ee_body);
}
static void call_crba(void* ctx) {
  kb_mujoco* mj = ctx;
  mj_crb(mj->m, mj->d);
}
static void call_rnea(void* ctx) {
  kb_mujoco* mj = ctx;
  mj_rne(mj->m, mj->d, 1, mj->res);
}
static void call_aba(void* ctx) {
  kb_mujoco* mj = ctx;
  mj_crb(mj->m, mj->d);
  mj_factorM(mj->m, mj->d);
  mj_rne(mj->m, mj->d, 0, mj->d->qfrc_bias);
  solve_qdd(mj);
}
static void call_m_q(void* ctx) {
  kb_mujoco* mj = ctx;
  position_stage(mj);
  mj_crb(mj->m, mj->d);
}
static void call_tau_q(void* ctx) {
  kb_mujoco* mj = ctx;
  position_stage(mj);
  mj_comVel(mj->m, mj->d);
  mj_rne(mj->m, mj->d, 1, mj->res);
}
static void call_qdd_q(void* ctx) {
  kb_mujoco* mj = ctx;
  position_stage(mj);
  mj_crb(mj->m, mj->d);
  mj_factorM(mj->m, mj->d);
  mj_comVel(mj->m, mj->d);
  mj_rne(mj->m, mj->d, 0, mj->d->qfrc_bias);
  solve_qdd(mj);
}
static void setup_forward(void* ctx, int rep) {
  kb_mujoco* mj = ctx;
  load_config(mj, rep);
  memcpy(mj->d->qfrc_applied, mj->tau, (size_t)mj->nv * sizeof(double));
}
static void call_forward(void* ctx) {
  kb_mujoco* mj = ctx;
  mj_forward(mj->m, mj->d);
}

void kb_mujoco_time(kb_mujoco* mj, const kb_plan* p, const kb_configs* c, double us[KB_NOP], double* forward_us) {
  mj->c = c;
  us[KB_FK] = kb_time(p, mj, setup_q, call_fk);
  us[KB_JAC] = kb_time(p, mj, setup_pos, call_jac);
  us[KB_CRBA] = kb_time(p, mj, setup_pos, call_crba);
  us[KB_RNEA] = kb_time(p, mj, setup_vel, call_rnea);
  us[KB_ABA] = kb_time(p, mj, setup_vel, call_aba);
  us[KB_M_Q] = kb_time(p, mj, setup_q, call_m_q);
  us[KB_TAU_Q] = kb_time(p, mj, setup_q, call_tau_q);
  us[KB_QDD_Q] = kb_time(p, mj, setup_q, call_qdd_q);
  *forward_us = kb_time(p, mj, setup_forward, call_forward);
  mju_zero(mj->d->qfrc_applied, mj->nv);
}

static double maxd(double a, double b) { return a > b ? a : b; }

void kb_mujoco_check(kb_mujoco* mj, const kn_mb_model* model, kn_mb_data* d, const kb_point* ee,
                     const kb_configs* c, kb_check* out) {
  mjModel* m = mj->m;
  mjData* md = mj->d;
  int nv = mj->nv;
  memset(out, 0, sizeof *out);
  out->nv_mujoco = m->nv;
  out->mass_knead = kn_mb_total_mass(model);
  for (int b = 0; b < m->nbody; ++b) out->mass_mujoco += m->body_mass[b];
  double* M = calloc((size_t)(nv * nv), sizeof(double));
  double* Mmj = calloc((size_t)(nv * nv), sizeof(double));
  double* J = calloc((size_t)(6 * nv), sizeof(double));
  double* x = calloc((size_t)nv, sizeof(double));
  double* chain = calloc((size_t)nv, sizeof(double));
  mj->c = c;
  double tau_scale = 0.0;
  for (int k = 0; k < c->nconf; ++k) {
    const double* q = c->q + k * nv;
    const double* v = c->v + k * nv;
    kn_mb_kinematics(model, q, v, d);

    /* end-effector point and its Jacobian */
    kn_pose X_bf, X_wf;
    kn_pose_identity(&X_bf);
    memcpy(X_bf.p, ee->p_b, sizeof X_bf.p);
    kn_mb_frame_pose(model, d, ee->body, &X_bf, &X_wf);
    setup_pos(mj, k);
    mj_comVel(m, md);
    for (int r = 0; r < 3; ++r) out->fk = maxd(out->fk, fabs(X_wf.p[r] - mj->point_w[r]));
    kn_mb_point_jacobian(model, d, ee->body, ee->p_b, J, J + 3 * nv);
    mj_jac(m, md, mj->jacp, mj->jacr, mj->point_w, mj->ee_body);
    for (int r = 0; r < 3; ++r)
      for (int i = 0; i < nv; ++i) {
        out->jac = maxd(out->jac, fabs(J[r * nv + i] - mj->jacp[r * nv + mj->vadr[i]]));
        out->jac = maxd(out->jac, fabs(J[(3 + r) * nv + i] - mj->jacr[r * nv + mj->vadr[i]]));
      }

    /* mass matrix */
    kn_mb_mass_matrix(model, d, M);
    mj_crb(m, md);
    mj_fullM(m, Mmj, md->qM);
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j < nv; ++j) {
        out->M = maxd(out->M, fabs(M[i * nv + j] - Mmj[mj->vadr[i] * nv + mj->vadr[j]]));
        out->M_scale = maxd(out->M_scale, fabs(M[i * nv + j]));
      }

    /* inverse dynamics: tau = M qdd + c(q, v) */
    kn_mb_inverse_dynamics(model, d, c->qdd + k * nv, x);
    mj_rne(m, md, 1, mj->res);
    for (int i = 0; i < nv; ++i) {
      out->tau = maxd(out->tau, fabs(x[i] - mj->res[mj->vadr[i]]));
      tau_scale = maxd(tau_scale, fabs(x[i]));
    }

    /* forward dynamics: knead's ABA, MuJoCo's full mj_forward, and the chain timed above */
    kn_mb_forward_dynamics(model, d, c->tau + k * nv, x);
    mj_factorM(m, md);
    mj_rne(m, md, 0, md->qfrc_bias);
    solve_qdd(mj);
    memcpy(chain, md->qacc, (size_t)nv * sizeof(double));
    setup_forward(mj, k);
    mj_forward(m, md);
    for (int i = 0; i < nv; ++i) {
      out->qdd = maxd(out->qdd, fabs(x[i] - md->qacc[mj->vadr[i]]));
      out->qdd_scale = maxd(out->qdd_scale, fabs(x[i]));
      out->qdd_chain = maxd(out->qdd_chain, fabs(chain[i] - md->qacc[i]));
    }
    mju_zero(md->qfrc_applied, nv);
  }
  /* tolerances: double-precision round-off of O(nv) spatial products, relative to the scale of
   * each quantity; MuJoCo's diagonalization of the URDF inertia tensors adds ~1e-15 relative */
  out->ok = out->nv_mujoco == nv && fabs(out->mass_knead - out->mass_mujoco) <= 1e-12 * (1.0 + out->mass_knead) &&
            out->fk <= 1e-12 && out->jac <= 1e-12 && out->M <= 1e-10 * (1.0 + out->M_scale) &&
            out->tau <= 1e-9 * (1.0 + tau_scale) && out->qdd <= 1e-8 * (1.0 + out->qdd_scale) &&
            out->qdd_chain <= 1e-10 * (1.0 + out->qdd_scale);
  free(M);
  free(Mmj);
  free(J);
  free(x);
  free(chain);
}

#endif
