/* Arms and grippers of ../shared/models through the SAP step: each robot, fixed at the origin
 * above a ground halfspace (z = -0.05 m), holds q0 (its neutral pose clamped into the joint
 * limits) for 1 s at dt = 0.01 under
 * gravity with a joint PD on every non-mimic joint, gains scaled to its mass matrix at q0:
 * kp_i = M_ii (2 pi 5 Hz)^2, kd_i = 2 M_ii (2 pi 5 Hz) (critical), the URDF effort limits and gravity
 * compensation (without contact the hold is then exact, v* = 0: the PD and the SAP solve must not
 * disturb it; where links touch the ground or each other, contact forces load the PD). Asserted: every step succeeds,
 * max |q - q0| over the controlled joints stays below the bound of each row (measured values in
 * the comments), and mimic joints stay coupled to 1e-6. The models are read in place
 * (KNEAD_SHARED_MODELS is the package path); the project's gripper (knead_gripper, a mimic
 * finger) joins as the mimic case that resolves. robotiq_c2 (real mimic joints) cannot be
 * simulated: its collision meshes are not in the corpus, and world creation must say so. */
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
  const char* file; /* relative to KNEAD_SHARED_MODELS, or absolute */
  double bound;     /* asserted max |q - q0| [rad or m] */
} sap_row;

static const sap_row rows[] = {
    {"drake_models/iiwa_description/urdf/iiwa14_primitive_collision.urdf", 0.05},
    {"drake_models/iiwa_description/urdf/iiwa14_spheres_collision.urdf", 0.05},
    {"drake_models/iiwa_description/urdf/iiwa14_polytope_collision.urdf", 0.05},
    {"drake_models/iiwa_description/urdf/iiwa14_no_collision.urdf", 0.05},
    {"drake_models/jaco_description/urdf/j2s7s300_sphere_collision.urdf", 0.05},
    {"drake_models/ur_description/urdf/ur3e_cylinders_collision.urdf", 0.05},
    {"bullet3/data/kuka_iiwa/model.urdf", 0.05},
    {"bullet3/data/pr2_gripper.urdf", 0.1}, /* measured 5.1e-2: its fingers touch (8 contacts) */
    {KNEAD_SOURCE_DIR "/examples/models/knead_gripper.urdf", 0.05},
};

static void path_of(const char* file, char* buf, size_t cap) {
  if (file[0] == '/')
    snprintf(buf, cap, "%s", file);
  else
    snprintf(buf, cap, "%s/%s", KNEAD_SHARED_MODELS, file);
}

/* (urdf, q0 or NULL, controller gains or NULL) => scene text */
static void scene_text(char* y, size_t cap, const char* urdf, const double* q0, int nq, const double* kp,
                       const double* kd, int ndof) {
  size_t n = (size_t)snprintf(y, cap,
                              "time_step: 0.01\nduration: 1.0\npackage_paths: [%s]\ncontact: {backend: sap}\n"
                              "objects:\n  - {name: ground, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, "
                              "pose: {xyz: [0, 0, -0.05]}}\nrobots:\n  - name: robot\n    urdf: %s\n",
                              KNEAD_SHARED_MODELS, urdf);
  if (q0) {
    n += (size_t)snprintf(y + n, cap - n, "    q0: [");
    for (int i = 0; i < nq; i++) n += (size_t)snprintf(y + n, cap - n, "%.17g%s", q0[i], i + 1 < nq ? ", " : "]\n");
  }
  if (kp) {
    n += (size_t)snprintf(y + n, cap - n, "    controller:\n      kp_per_joint: [");
    for (int i = 0; i < ndof; i++) n += (size_t)snprintf(y + n, cap - n, "%.17g%s", kp[i], i + 1 < ndof ? ", " : "]\n");
    n += (size_t)snprintf(y + n, cap - n, "      kd_per_joint: [");
    for (int i = 0; i < ndof; i++) n += (size_t)snprintf(y + n, cap - n, "%.17g%s", kd[i], i + 1 < ndof ? ", " : "]\n");
  }
  cr_assert_lt(n, cap, "scene text too long");
}

static void load(const char* yaml, kn_scene** s, kn_world** w) {
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), "corpus.yaml", s, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(*s, w, &err), KN_OK, "%s", err.msg);
}

/* (row) => max |q - q0| over the controlled dofs and max mimic error over 1 s of hold */
static void hold(const sap_row* row, double* err_q, double* err_mimic, int* ndof_out) {
  char path[1024], yaml[16384];
  path_of(row->file, path, sizeof path);
  kn_scene* s = NULL;
  kn_world* w = NULL;
  /* 1. the model alone: q0 and M(q0) */
  scene_text(yaml, sizeof yaml, path, NULL, 0, NULL, NULL, 0);
  load(yaml, &s, &w);
  const kn_mb_model* m = w->trees[0].robot->model;
  int nq = m->nq, nv = m->nv;
  double* q0 = calloc((size_t)nq, sizeof *q0);
  double* M = calloc((size_t)nv * (size_t)nv, sizeof *M);
  kn_mb_neutral_q(m, q0);
  for (int b = 0; b < m->nbody; b++) {
    const kn_mb_body* bd = &m->bodies[b];
    if (!bd->has_position_limits || bd->nq != 1) continue;
    double* q = &q0[bd->q_adr];
    if (*q < bd->lower || *q > bd->upper) *q = 0.5 * (bd->lower + bd->upper);
  }
  kn_mb_data* d = kn_mb_data_create(m);
  kn_mb_kinematics(m, q0, NULL, d);
  kn_mb_mass_matrix(m, d, M);
  kn_controller* c = NULL;
  kn_error e = {0};
  cr_assert_eq(kn_ctrl_create(m, "gains", 0, NULL, &c, &e), KN_OK, "%s", e.msg);
  int ndof = c->ndof;
  double *kp = calloc((size_t)ndof, sizeof *kp), *kd = calloc((size_t)ndof, sizeof *kd);
  const double wn = 2 * M_PI * 5.0;
  for (int i = 0; i < ndof; i++) {
    double Mii = M[c->dofs[i] * nv + c->dofs[i]];
    kp[i] = Mii * wn * wn;
    kd[i] = 2 * Mii * wn;
  }
  int* qidx = malloc((size_t)ndof * sizeof *qidx);
  memcpy(qidx, c->qidx, (size_t)ndof * sizeof *qidx);
  kn_ctrl_free(c);
  kn_mb_data_free(d);
  kn_world_free(w);
  kn_scene_free(s);
  /* 2. the hold */
  scene_text(yaml, sizeof yaml, path, q0, nq, kp, kd, ndof);
  load(yaml, &s, &w);
  m = w->trees[0].robot->model;
  *err_q = *err_mimic = 0;
  long n = kn_world_total_steps(w);
  for (long k = 0; k < n; k++) {
    cr_assert_eq(kn_world_step(w, &e), KN_OK, "%s: step %ld: %s", row->file, k, e.msg);
    const double* q = w->trees[0].q;
    for (int i = 0; i < ndof; i++) *err_q = fmax(*err_q, fabs(q[qidx[i]] - q0[qidx[i]]));
    for (int j = 0; j < m->ncoupler; j++) {
      const kn_mb_coupler* cu = &m->couplers[j];
      double r = q[m->bodies[cu->body].q_adr] - cu->multiplier * q[m->bodies[cu->master].q_adr] - cu->offset;
      *err_mimic = fmax(*err_mimic, fabs(r));
    }
  }
  cr_log_info("%s: %d controlled dofs, %d mimic, max |q - q0| %.3e, mimic error %.1e, SAP iterations max %d, "
              "contacts max %d",
              row->file, ndof, m->ncoupler, *err_q, *err_mimic, w->stats.max_iterations, w->stats.max_contacts);
  *ndof_out = ndof;
  free(q0);
  free(M);
  free(kp);
  free(kd);
  free(qidx);
  kn_world_free(w);
  kn_scene_free(s);
}

Test(sap_corpus, arms_and_grippers_hold_q0) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    double eq, em;
    int ndof;
    hold(&rows[i], &eq, &em, &ndof);
    cr_expect(ndof > 0, "%s: no controlled dofs", rows[i].file);
    cr_expect_lt(eq, rows[i].bound, "%s: max |q - q0| %.3e, expected < %g", rows[i].file, eq, rows[i].bound);
    cr_expect_lt(em, 1e-6, "%s: mimic error %.3e", rows[i].file, em);
  }
}

Test(sap_corpus, robotiq_c2_without_collision_meshes_is_refused) {
  char path[1024], yaml[4096];
  path_of("robotiq/robotiq_2f_c2_gripper_visualization/urdf/robotiq_c2_model.urdf", path, sizeof path);
  scene_text(yaml, sizeof yaml, path, NULL, 0, NULL, NULL, 0);
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
