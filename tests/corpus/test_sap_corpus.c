/* Arms and grippers of ../shared/models through the SAP step (dt = 0.01, 1 s), each robot with its
 * base raised above a ground halfspace (z = -0.05 m) and held by a joint PD on every non-mimic joint
 * at an off-neutral q0 (its neutral pose clamped into the joint limits plus offsets of 0.3 rad /
 * 0.01 m of alternating sign, kept clear of the limits), gains scaled to its mass matrix at q0:
 * kp_i = M_ii wn^2, kd_i = 2 M_ii wn (wn = 2 pi f, f per row). Every run must see zero contacts
 * (the poses are chosen clear of self- and ground-contact; parent/child pairs are filtered by the
 * world like Drake does; the Drake iiwa14 primitive/spheres models rely on their URDF's
 * drake:collision_filter_group iiwa_wrist, links 5-7, whose geometry overlaps at every pose), so the only loads
 * are gravity and the PD. Measured (Debug + ASan/UBSan, 2.0 s for the file):
 *   iiwa14 x4: sag 2.02e-2, |q - q_pred| 2.09e-6;  jaco j2s7s300: sag 1.36e-1, 3.32e-7;
 *   ur3e: sag 4.16e-2, 6.80e-8;  bullet3 kuka_iiwa: sag 9.59e-3, 2.61e-6;  pr2_gripper: sag 0
 *   (finger masses on their axes), 0;  hold with gravity compensation: 0 for all;
 *   knead_gripper: master 0.01 -> 0.03 m reached to 1.8e-7, mimic error 8.3e-7 under load.
 * The residual |q - q_pred| is the slowest PD mode still decaying after 1 s; scaling the
 * predicted gravity by 0.98 fails every arm row (errors 2e-4 .. 3e-3).
 *
 *  1. Gravity compensation OFF: the arm sags to the static equilibrium of the implicit PD law
 *     (controllers.h, v' = 0): K (q - q0) = -g(q), g = kn_mb_gravity_torques, with a coupler's
 *     generalized force folded onto its master (q_mimic = m q_master + o, virtual work: the
 *     master carries g_master + m g_mimic). The prediction is solved by fixed-point iteration
 *     q <- q0 - K^-1 g(q) (a contraction: |K^-1 dg/dq| << 1 at these gains). Asserted:
 *     |q_sim(1 s) - q_pred| < 1e-5 on every controlled dof, and the sag |q_pred - q0| exceeds
 *     1e-3 on some dof for the robots gravity loads (sag_min of each row), so that a simulator that
 *     ignored gravity, or the PD, or solved the static balance with a wrong sign would fail.
 *  2. Gravity compensation ON: tau = g(q) + PD holds q0 exactly (v* = 0 every step):
 *     max |q - q0| < 1e-6 over the run.
 *  3. Mimic grippers (knead_gripper; pr2_gripper has none): the master finger is commanded off q0
 *     (setpoint), gravity compensation off and the palm turned on its side so that gravity pulls
 *     the two fingers in opposite joint directions and the coupler carries the load; asserted:
 *     |q_mimic - (m q_master + o)| < 1e-6 at every step and the master reaches its setpoint
 *     (static prediction: the folded gravity is zero by symmetry) to 1e-5.
 *
 * robotiq_c2 (real mimic joints) cannot be simulated: its collision meshes are not in the corpus,
 * and world creation must say so. The models are read in place (KNEAD_SHARED_MODELS). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef struct {
  const char* file;  /* relative to KNEAD_SHARED_MODELS, or absolute */
  double z;          /* base height [m] */
  double roll;       /* base roll [rad] (joint axes horizontal where gravity should load them) */
  double hz;         /* PD natural frequency [Hz] */
  double sag_min;    /* asserted max_i |q_pred - q0|_i > sag_min (0: gravity does not load it) */
  double move;       /* mimic rows: master setpoint offset from q0, else 0 */
  const char* signs; /* offset of each non-mimic 1-DoF joint in body order: '+', '-', '0' (short
                        or NULL: alternating +-) */
} sap_row;

/* measured numbers are logged (cr_log_info) and listed in the report of the commit */
static const sap_row rows[] = {
    /* links 5 and 7 overlap at every pose (phi -2.6e-3 m at neutral): the URDF's filter group applies */
    {"drake_models/iiwa_description/urdf/iiwa14_primitive_collision.urdf", 0.3, 0, 5, 1e-3, 0, NULL},
    {"drake_models/iiwa_description/urdf/iiwa14_spheres_collision.urdf", 0.3, 0, 5, 1e-3, 0, NULL},
    {"drake_models/iiwa_description/urdf/iiwa14_polytope_collision.urdf", 0.3, 0, 5, 1e-3, 0, NULL},
    {"drake_models/iiwa_description/urdf/iiwa14_no_collision.urdf", 0.3, 0, 5, 1e-3, 0, NULL},
    {"drake_models/jaco_description/urdf/j2s7s300_sphere_collision.urdf", 0.3, 0, 5, 1e-3, 0, NULL},
    {"drake_models/ur_description/urdf/ur3e_cylinders_collision.urdf", 0.3, 0, 5, 1e-3, 0, NULL},
    {"bullet3/data/kuka_iiwa/model.urdf", 0.3, 0, 5, 1e-3, 0, NULL},
    /* finger axes are z, rolled horizontal; but both fingers have their mass on the joint axis
     * (inertial origins at the joint), so gravity never turns them: sag 0, the check is the hold.
     * Both fingers open by 0.3 rad (the tips overlap, 9 contacts, at neutral). */
    {"bullet3/data/pr2_gripper.urdf", 0.3, M_PI / 2, 2, 0, 0, "++"},
    {KNEAD_SOURCE_DIR "/examples/models/knead_gripper.urdf", 0.3, M_PI / 2, 5, 0, 0.02, NULL},
};

static void path_of(const char* file, char* buf, size_t cap) {
  if (file[0] == '/')
    snprintf(buf, cap, "%s", file);
  else
    snprintf(buf, cap, "%s/%s", KNEAD_SHARED_MODELS, file);
}

#define APPEND(...) (n += (size_t)snprintf(y + n, n < cap ? cap - n : 0, __VA_ARGS__))

static void append_list(char* y, size_t cap, size_t* pn, const char* key, const double* x, int k) {
  size_t n = *pn;
  APPEND("%s: [", key);
  for (int i = 0; i < k; i++) APPEND("%.17g%s", x[i], i + 1 < k ? ", " : "]\n");
  *pn = n;
}

/* (row, urdf, q0, gains, setpoint, gravity compensation) => scene text; kp NULL: no controller */
static void scene_text(char* y, size_t cap, const sap_row* row, const char* urdf, const double* q0, int nq,
                       const double* kp, const double* kd, const double* setpoint, int ndof, int gcomp) {
  size_t n = 0;
  APPEND("time_step: 0.01\nduration: 1.0\npackage_paths: [%s]\ncontact: {backend: sap}\n"
         "objects:\n  - {name: ground, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, "
         "pose: {xyz: [0, 0, -0.05]}}\nrobots:\n  - name: robot\n    urdf: %s\n"
         "    base_pose: {xyz: [0, 0, %.17g], rpy: [%.17g, 0, 0]}\n",
         KNEAD_SHARED_MODELS, urdf, row ? row->z : 0.0, row ? row->roll : 0.0);
  if (q0) {
    APPEND("    ");
    append_list(y, cap, &n, "q0", q0, nq);
  }
  if (kp) {
    APPEND("    controller:\n      gravity_compensation: %s\n      ", gcomp ? "true" : "false");
    append_list(y, cap, &n, "kp_per_joint", kp, ndof);
    APPEND("      ");
    append_list(y, cap, &n, "kd_per_joint", kd, ndof);
    if (setpoint) {
      APPEND("      ");
      append_list(y, cap, &n, "setpoint", setpoint, ndof);
    }
  }
  cr_assert_lt(n, cap, "scene text too long");
}

static void load(const char* yaml, kn_scene** s, kn_world** w) {
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), "corpus.yaml", s, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(*s, w, &err), KN_OK, "%s", err.msg);
}

/* One robot's setup: q0, gains, controlled dofs, the static prediction. */
typedef struct {
  const sap_row* row;
  char path[1024];
  int nq, nv, ndof;
  double *q0, *kp, *kd, *setpoint, *q_pred;
  int *qidx, *dofs;
  double sag;          /* max |q_pred - q0| over the controlled dofs */
} robot_case;

/* q at the coupler constraints: q_mimic = m q_master + o (q0 of the mimic joint is not free) */
static void apply_couplers(const kn_mb_model* m, double* q) {
  for (int j = 0; j < m->ncoupler; j++) {
    const kn_mb_coupler* cu = &m->couplers[j];
    q[m->bodies[cu->body].q_adr] = cu->multiplier * q[m->bodies[cu->master].q_adr] + cu->offset;
  }
}

/* q0 off the neutral pose: neutral (clamped into the limits) + alternating offsets, kept at least
 * 15 % of the range (at most 0.2) inside the limits */
static void off_neutral_q0(const kn_mb_model* m, const char* signs, double* q0) {
  kn_mb_neutral_q(m, q0);
  int k = 0;
  for (int b = 0; b < m->nbody; b++) {
    const kn_mb_body* bd = &m->bodies[b];
    if (bd->nq != 1) continue;
    int is_mimic = 0;
    for (int j = 0; j < m->ncoupler; j++) is_mimic |= m->couplers[j].body == b;
    if (is_mimic) continue;
    double* q = &q0[bd->q_adr];
    double sign = (k % 2) ? -1.0 : 1.0;
    if (signs && k < (int)strlen(signs)) sign = signs[k] == '+' ? 1.0 : signs[k] == '-' ? -1.0 : 0.0;
    k++;
    double delta = (bd->jtype == KN_JOINT_PRISMATIC ? 0.01 : 0.3) * sign;
    if (!bd->has_position_limits) {
      *q += delta;
      continue;
    }
    double lo = bd->lower, hi = bd->upper, mg = fmin(0.15 * (hi - lo), 0.2);
    if (*q < lo || *q > hi) *q = 0.5 * (lo + hi);
    if (*q + delta >= lo + mg && *q + delta <= hi - mg)
      *q += delta;
    else if (*q - delta >= lo + mg && *q - delta <= hi - mg)
      *q -= delta;
    else
      *q = fmin(fmax(*q, lo + mg), hi - mg);
  }
  apply_couplers(m, q0);
}

/* (q, ref) => q_pred solving K (q - ref) = -g(q) on the controlled dofs, couplers folded */
static void static_prediction(const kn_mb_model* m, kn_mb_data* d, const robot_case* rc, const double* ref,
                              double* q) {
  double* g = calloc((size_t)m->nv, sizeof *g);
  memcpy(q, rc->q0, (size_t)m->nq * sizeof *q);
  for (int i = 0; i < rc->ndof; i++) q[rc->qidx[i]] = ref[i];
  apply_couplers(m, q);
  double change = INFINITY;
  int it = 0;
  for (; it < 200 && change > 1e-15; it++) {
    kn_mb_kinematics(m, q, NULL, d);
    kn_mb_gravity_torques(m, d, g);
    for (int j = 0; j < m->ncoupler; j++) {
      const kn_mb_coupler* cu = &m->couplers[j];
      g[m->bodies[cu->master].v_adr] += cu->multiplier * g[m->bodies[cu->body].v_adr];
    }
    change = 0;
    for (int i = 0; i < rc->ndof; i++) {
      double qi = ref[i] - g[rc->dofs[i]] / rc->kp[i];
      change = fmax(change, fabs(qi - q[rc->qidx[i]]));
      q[rc->qidx[i]] = qi;
    }
    apply_couplers(m, q);
  }
  cr_assert_leq(change, 1e-15, "%s: static prediction did not converge (last change %.3e)", rc->row->file, change);
  free(g);
}

static void case_setup(const sap_row* row, robot_case* rc) {
  memset(rc, 0, sizeof *rc);
  rc->row = row;
  path_of(row->file, rc->path, sizeof rc->path);
  char yaml[4096];
  kn_scene* s = NULL;
  kn_world* w = NULL;
  scene_text(yaml, sizeof yaml, row, rc->path, NULL, 0, NULL, NULL, NULL, 0, 0);
  load(yaml, &s, &w);
  const kn_mb_model* m = w->trees[0].robot->model;
  rc->nq = m->nq;
  rc->nv = m->nv;
  rc->q0 = calloc((size_t)m->nq, sizeof *rc->q0);
  rc->q_pred = calloc((size_t)m->nq, sizeof *rc->q_pred);
  off_neutral_q0(m, row->signs, rc->q0);
  double* M = calloc((size_t)m->nv * (size_t)m->nv, sizeof *M);
  kn_mb_data* d = kn_mb_data_create(m);
  kn_mb_kinematics(m, rc->q0, NULL, d);
  kn_mb_mass_matrix(m, d, M);
  kn_controller* c = NULL;
  kn_error e = {0};
  cr_assert_eq(kn_ctrl_create(m, "gains", 0, NULL, &c, &e), KN_OK, "%s", e.msg);
  int ndof = rc->ndof = c->ndof;
  cr_assert_gt(ndof, 0, "%s: no controlled dofs", row->file);
  rc->kp = calloc((size_t)ndof, sizeof *rc->kp);
  rc->kd = calloc((size_t)ndof, sizeof *rc->kd);
  rc->setpoint = calloc((size_t)ndof, sizeof *rc->setpoint);
  rc->qidx = malloc((size_t)ndof * sizeof *rc->qidx);
  rc->dofs = malloc((size_t)ndof * sizeof *rc->dofs);
  memcpy(rc->qidx, c->qidx, (size_t)ndof * sizeof *rc->qidx);
  memcpy(rc->dofs, c->dofs, (size_t)ndof * sizeof *rc->dofs);
  const double wn = 2 * M_PI * row->hz;
  for (int i = 0; i < ndof; i++) {
    double Mii = M[rc->dofs[i] * m->nv + rc->dofs[i]];
    rc->kp[i] = Mii * wn * wn;
    rc->kd[i] = 2 * Mii * wn;
    /* the first dof is the master finger of a mimic gripper (the only controlled one) */
    rc->setpoint[i] = rc->q0[rc->qidx[i]] + (i == 0 ? row->move : 0);
  }
  static_prediction(m, d, rc, rc->setpoint, rc->q_pred);
  rc->sag = 0;
  for (int i = 0; i < ndof; i++)
    rc->sag = fmax(rc->sag, fabs(rc->q_pred[rc->qidx[i]] - rc->setpoint[i]));
  kn_ctrl_free(c);
  kn_mb_data_free(d);
  free(M);
  kn_world_free(w);
  kn_scene_free(s);
}

static void case_free(robot_case* rc) {
  free(rc->q0);
  free(rc->kp);
  free(rc->kd);
  free(rc->setpoint);
  free(rc->q_pred);
  free(rc->qidx);
  free(rc->dofs);
}

typedef struct {
  double err_pred;   /* max |q(1 s) - q_pred| over the controlled dofs */
  double err_hold;   /* max over the run of |q - q0| over the controlled dofs */
  double err_mimic;  /* max over the run of the coupler residual */
  int max_contacts, max_iterations;
} run_result;

/* (case, gravity compensation) => the run's errors; every step must succeed */
static run_result case_run(const robot_case* rc, int gcomp, int move) {
  char yaml[16384];
  scene_text(yaml, sizeof yaml, rc->row, rc->path, rc->q0, rc->nq, rc->kp, rc->kd, move ? rc->setpoint : NULL,
             rc->ndof, gcomp);
  kn_scene* s = NULL;
  kn_world* w = NULL;
  load(yaml, &s, &w);
  const kn_mb_model* m = w->trees[0].robot->model;
  run_result r = {0};
  kn_error e = {0};
  long n = kn_world_total_steps(w);
  for (long k = 0; k < n; k++) {
    cr_assert_eq(kn_world_step(w, &e), KN_OK, "%s: step %ld: %s", rc->row->file, k, e.msg);
    const double* q = w->trees[0].q;
    for (int i = 0; i < rc->ndof; i++) r.err_hold = fmax(r.err_hold, fabs(q[rc->qidx[i]] - rc->q0[rc->qidx[i]]));
    for (int j = 0; j < m->ncoupler; j++) {
      const kn_mb_coupler* cu = &m->couplers[j];
      double res = q[m->bodies[cu->body].q_adr] - cu->multiplier * q[m->bodies[cu->master].q_adr] - cu->offset;
      r.err_mimic = fmax(r.err_mimic, fabs(res));
    }
  }
  for (int c = 0; c < w->ncontact && c < 4; c++) /* says which pair when the no-contact check fails */
    cr_log_info("%s: contact %s - %s, phi %.3e", rc->row->file, w->colliders[w->contacts[c].a].name,
                w->colliders[w->contacts[c].b].name, w->contacts[c].phi);
  for (int i = 0; i < rc->ndof; i++)
    r.err_pred = fmax(r.err_pred, fabs(w->trees[0].q[rc->qidx[i]] - rc->q_pred[rc->qidx[i]]));
  r.max_contacts = w->stats.max_contacts;
  r.max_iterations = w->stats.max_iterations;
  kn_world_free(w);
  kn_scene_free(s);
  return r;
}

Test(sap_corpus, arms_sag_to_the_static_prediction_and_hold_with_gravity_compensation) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    if (rows[i].move != 0) continue;
    robot_case rc;
    case_setup(&rows[i], &rc);
    run_result off = case_run(&rc, 0, 0), on = case_run(&rc, 1, 0);
    cr_log_info("%s: %d dofs, sag %.3e, |q - q_pred| %.3e (SAP it max %d, contacts %d); gravity comp: |q - q0| "
                "%.3e (contacts %d)",
                rows[i].file, rc.ndof, rc.sag, off.err_pred, off.max_iterations, off.max_contacts, on.err_hold,
                on.max_contacts);
    cr_expect_eq(off.max_contacts, 0, "%s: q0 must be clear of contact, %d contacts", rows[i].file,
                 off.max_contacts);
    cr_expect_eq(on.max_contacts, 0, "%s: %d contacts with gravity compensation", rows[i].file, on.max_contacts);
    if (rows[i].sag_min > 0)
      cr_expect_gt(rc.sag, rows[i].sag_min, "%s: sag %.3e must exceed %.1e for the check to mean something",
                 rows[i].file, rc.sag, rows[i].sag_min);
    cr_expect_lt(off.err_pred, 1e-5, "%s: |q_sim - q_pred| %.3e after 1 s (sag %.3e)", rows[i].file, off.err_pred,
                 rc.sag);
    cr_expect_lt(on.err_hold, 1e-6, "%s: hold error %.3e with gravity compensation", rows[i].file, on.err_hold);
    case_free(&rc);
  }
}

Test(sap_corpus, mimic_fingers_follow_a_commanded_master) {
  int tested = 0;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    if (rows[i].move == 0) continue;
    robot_case rc;
    case_setup(&rows[i], &rc);
    run_result r = case_run(&rc, 0, 1);
    cr_log_info("%s: master %.4f -> %.4f, |q - q_pred| %.3e, mimic error %.3e (SAP it max %d, contacts %d)",
                rows[i].file, rc.q0[rc.qidx[0]], rc.setpoint[0], r.err_pred, r.err_mimic, r.max_iterations,
                r.max_contacts);
    cr_expect_eq(r.max_contacts, 0, "%s: %d contacts", rows[i].file, r.max_contacts);
    cr_expect_lt(r.err_pred, 1e-5, "%s: master did not reach its setpoint: %.3e", rows[i].file, r.err_pred);
    cr_expect_gt(r.err_hold, 0.5 * fabs(rows[i].move), "%s: the master did not move (%.3e)", rows[i].file,
                 r.err_hold);
    cr_expect_lt(r.err_mimic, 1e-6, "%s: mimic error %.3e", rows[i].file, r.err_mimic);
    tested++;
    case_free(&rc);
  }
  cr_expect_gt(tested, 0);
}

Test(sap_corpus, robotiq_c2_without_collision_meshes_is_refused) {
  char path[1024], yaml[4096];
  path_of("robotiq/robotiq_2f_c2_gripper_visualization/urdf/robotiq_c2_model.urdf", path, sizeof path);
  scene_text(yaml, sizeof yaml, NULL, path, NULL, 0, NULL, NULL, NULL, 0, 0);
  kn_scene* s = NULL;
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), "corpus.yaml", &s, &err), KN_OK, "%s", err.msg);
  kn_status st = kn_world_create(s, &w, &err);
  cr_log_info("robotiq_c2: %s", err.msg);
  cr_expect_neq(st, KN_OK, "robotiq_c2 has unresolved collision meshes: the world must be refused");
  cr_expect(strstr(err.msg, "mesh") != NULL, "the message names the meshes: %s", err.msg);
  kn_world_free(w);
  kn_scene_free(s);
}
