/* sim/ world: bitwise-reproducible runs (state hash), transactional steps, the embedded default
 * scene, and the outputs of kn_world_run. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "sim/sim.h"

#define ARM KNEAD_SOURCE_DIR "/examples/models/knead_arm7.urdf"

/* a 0.2 s arm scene; %s is q0 */
static const char* scene_fmt =
    "time_step: 0.002\n"
    "duration: 0.2\n"
    "robots:\n"
    "  - name: arm\n"
    "    urdf: " ARM "\n"
    "    q0: %s\n"
    "    controller:\n"
    "      kp: 300\n"
    "      kd: 30\n"
    "      trajectory:\n"
    "        interpolation: cubic\n"
    "        points: [{t: 0, q: [0, 0.3, 0, -1.2, 0, 0.9, 0]}, {t: 0.2, q: [0.2, 0.5, 0, -1.0, 0, 1.0, 0.1]}]\n"
    "  - name: arm2\n"
    "    urdf: " ARM "\n"
    "    base_pose: {xyz: [1, 0, 0]}\n"
    "    q0: [0, 0.5, 0, -1.0, 0, 0.5, 0]\n";

static kn_scene* load_text(const char* q0) {
  char text[4096];
  snprintf(text, sizeof text, scene_fmt, q0);
  kn_scene* s = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(text, strlen(text), "inline.yaml", &s, &err), KN_OK, "%s", err.msg);
  return s;
}

// (q0 text) => the state hash after the whole duration
static uint64_t run_hash(const char* q0, double* q_final) {
  kn_scene* s = load_text(q0);
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
  long n = kn_world_total_steps(w);
  cr_assert_eq(n, 100);
  for (long k = 0; k < n; k++) cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(w->t, 100 * 0.002); /* t = step * dt exactly, not accumulated */
  if (q_final) memcpy(q_final, w->trees[0].q, 7 * sizeof(double));
  uint64_t h = kn_world_state_hash(w);
  kn_world_free(w);
  kn_scene_free(s);
  return h;
}

Test(world, same_scene_gives_the_same_state_hash) {
  double qa[7], qb[7];
  uint64_t a = run_hash("[0, 0.3, 0, -1.2, 0, 0.9, 0]", qa);
  uint64_t b = run_hash("[0, 0.3, 0, -1.2, 0, 0.9, 0]", qb);
  cr_assert_eq(a, b, "%016llx vs %016llx", (unsigned long long)a, (unsigned long long)b);
  cr_assert_eq(memcmp(qa, qb, sizeof qa), 0);
  /* a perturbation of 1e-9 rad in one joint changes the hash */
  uint64_t c = run_hash("[0, 0.300000001, 0, -1.2, 0, 0.9, 0]", NULL);
  cr_assert_neq(a, c);
  /* and the arm followed its trajectory: at t = 0.2 the reference is the last knot; the PD lag
   * of kp = 300, kd = 30 over a 0.2 s move stays below 0.1 rad */
  const double target[7] = {0.2, 0.5, 0, -1.0, 0, 1.0, 0.1};
  for (int i = 0; i < 7; i++) cr_assert(fabs(qa[i] - target[i]) < 0.1, "joint %d: %g vs %g", i, qa[i], target[i]);
}

Test(world, two_trees_and_the_hash_covers_each) {
  kn_scene* s = load_text("[0, 0.3, 0, -1.2, 0, 0.9, 0]");
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(w->ntree, 2);
  uint64_t h0 = kn_world_state_hash(w);
  w->trees[1].v[3] = 1e-300; /* any bit of the second tree's state counts */
  cr_assert_neq(kn_world_state_hash(w), h0);
  w->trees[1].v[3] = -0.0; /* -0 hashes as +0 (common.h) */
  cr_assert_eq(kn_world_state_hash(w), h0);
  /* arm2 has no controller: it falls under gravity, so its q changes */
  double q2[7];
  memcpy(q2, w->trees[1].q, sizeof q2);
  for (int k = 0; k < 10; k++) cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s", err.msg);
  double moved = 0;
  for (int i = 0; i < 7; i++) moved += fabs(w->trees[1].q[i] - q2[i]);
  cr_assert_gt(moved, 1e-6);
  kn_world_free(w);
  kn_scene_free(s);
}

Test(world, failed_step_leaves_every_tree_unchanged) {
  kn_scene* s = load_text("[0, 0.3, 0, -1.2, 0, 0.9, 0]");
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
  for (int k = 0; k < 3; k++) cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s", err.msg);
  /* poison the second tree: the first steps fine, the second fails, both must be restored */
  w->trees[1].v[2] = NAN;
  double q0[7], v0[7], q1[7];
  memcpy(q0, w->trees[0].q, sizeof q0);
  memcpy(v0, w->trees[0].v, sizeof v0);
  memcpy(q1, w->trees[1].q, sizeof q1);
  double t = w->t;
  long step = w->step;
  kn_status st = kn_world_step(w, &err);
  cr_assert_neq(st, KN_OK, "a NaN velocity must fail the step");
  cr_assert(strstr(err.msg, "robot 'arm2'") != NULL, "%s", err.msg);
  cr_assert(strstr(err.msg, "step 4") != NULL, "%s", err.msg);
  cr_assert_eq(memcmp(q0, w->trees[0].q, sizeof q0), 0);
  cr_assert_eq(memcmp(v0, w->trees[0].v, sizeof v0), 0);
  cr_assert_eq(memcmp(q1, w->trees[1].q, sizeof q1), 0);
  cr_assert(isnan(w->trees[1].v[2]));
  cr_assert_eq(w->t, t);
  cr_assert_eq(w->step, step);
  kn_world_free(w);
  kn_scene_free(s);
}

Test(world, embedded_default_scene_loads_and_steps) {
  kn_scene* s = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_default(&s, &err), KN_OK, "%s", err.msg);
  cr_assert_str_eq(s->path, "knead://default_scene.yaml");
  cr_assert_null(s->dir);
  kn_world* w = NULL;
  cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
  /* the grasp of examples/grasp_box.yaml: the arm with the gripper welded on (one tree) */
  cr_assert_eq(w->nrobot, 2);
  cr_assert_eq(w->robots[0].nq, 7);
  cr_assert_eq(w->robots[0].dofs, 7);
  cr_assert_eq(w->robots[1].dofs, 1);
  cr_assert_eq(w->trees[0].nctrl, 2);
  /* the arm tracks its approach phase: |q - q_ref(t)| < 0.02 rad over the first 1 s (the
   * measured lag of these gains is a few mrad) */
  const kn_controller* c = w->trees[0].ctrls[0];
  double qref[7];
  long n = (long)(1.0 / s->time_step);
  double worst = 0;
  for (long k = 0; k < n; k++) {
    cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s", err.msg);
    kn_ctrl_reference(c, w->t, qref, NULL, NULL);
    for (int i = 0; i < 7; i++) worst = fmax(worst, fabs(w->trees[0].q[c->qidx[i]] - qref[i]));
  }
  cr_assert_lt(worst, 0.02, "worst tracking error %g rad", worst);
  cr_assert_gt(worst, 0.0);
  kn_world_free(w);
  kn_scene_free(s);
}

Test(world, run_writes_trajectory_and_summary) {
  char dir[] = "/tmp/knead_test_world_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  kn_scene* s = load_text("[0, 0.3, 0, -1.2, 0, 0.9, 0]");
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
  char out[128];
  snprintf(out, sizeof out, "%s/a/b", dir); /* created on demand */
  kn_run_summary sum;
  cr_assert_eq(kn_world_run(w, out, NULL, NULL, &sum, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(sum.steps, 100);
  cr_assert_float_eq(sum.sim_time_s, 0.2, 1e-15);
  cr_assert_eq(sum.trajectory_rows, 101); /* every step plus the initial state */
  cr_assert_eq(sum.final_state_hash, kn_world_state_hash(w));
  char path[256], line[8192];
  snprintf(path, sizeof path, "%s/trajectory.csv", out);
  FILE* f = fopen(path, "r");
  cr_assert_not_null(f);
  cr_assert_not_null(fgets(line, sizeof line, f));
  cr_assert(strncmp(line, "t,arm/arm_joint_1,", 18) == 0, "%s", line);
  cr_assert(strstr(line, ",arm2/arm_joint_7\n") != NULL, "%s", line);
  int rows = 0;
  while (fgets(line, sizeof line, f)) rows++;
  fclose(f);
  cr_assert_eq(rows, 101);
  snprintf(path, sizeof path, "%s/summary.json", out);
  f = fopen(path, "r");
  cr_assert_not_null(f);
  size_t len = fread(line, 1, sizeof line - 1, f);
  line[len] = 0;
  fclose(f);
  char hash[64];
  snprintf(hash, sizeof hash, "\"final_state_hash\": \"%016llx\"", (unsigned long long)sum.final_state_hash);
  cr_assert(strstr(line, hash) != NULL, "%s", line);
  cr_assert(strstr(line, "\"steps\": 100") != NULL, "%s", line);
  kn_world_free(w);
  kn_scene_free(s);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}
