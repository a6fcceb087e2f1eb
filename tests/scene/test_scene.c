/* sim/ scenes: a good file parses to the expected values; syntax, unknown-key, wrong-type and
 * semantic errors name the file, the line and the key. Scenes are written to a temporary folder
 * so each expected line number sits next to the text it refers to. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

#define ARM KNEAD_SOURCE_DIR "/examples/models/knead_arm7.urdf"
#define GRIPPER KNEAD_SOURCE_DIR "/examples/models/knead_gripper.urdf"

static char tmpdir[256];

static void make_tmpdir(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/knead_test_scene_XXXXXX");
  cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_tmpdir(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  cr_assert_eq(system(cmd), 0);
}

TestSuite(scene, .init = make_tmpdir, .fini = remove_tmpdir);

// (file name, text) => full path of the file written in tmpdir
static const char* write_scene(const char* name, const char* text) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

// (scene text) => the load error (KN_ERR_* expected), with "<path>:<line>:" and `key` in the message
static void expect_error(const char* text, kn_status want, int line, const char* key) {
  const char* path = write_scene("bad.yaml", text);
  kn_scene* s = NULL;
  kn_error err = {0};
  kn_status st = kn_scene_load(path, &s, &err);
  kn_world* w = NULL;
  if (st == KN_OK) {
    /* errors that need the robot model (q0 length, ...) come from kn_world_create */
    st = kn_world_create(s, &w, &err);
    kn_world_free(w);
    kn_scene_free(s);
  }
  cr_assert_eq(st, want, "status %d, expected %d: %s", st, want, err.msg);
  char where[600];
  snprintf(where, sizeof where, "%s:%d:", path, line);
  cr_assert(strstr(err.msg, where) != NULL, "expected '%s' in: %s", where, err.msg);
  cr_assert(strstr(err.msg, key) != NULL, "expected key '%s' in: %s", key, err.msg);
}

Test(scene, good_file_parses_to_its_values) {
  const char* path = write_scene("good.yaml",
                                 "name: pick\n"
                                 "time_step: 0.005\n"
                                 "duration: 2.5\n"
                                 "gravity: [0, 0, -1.62]\n"
                                 "package_paths: [models, /opt/x]\n"
                                 "contact: {backend: none}\n"
                                 "robots:\n"
                                 "  - name: arm\n"
                                 "    urdf: " ARM "\n"
                                 "    base_pose: {xyz: [0.1, 0.2, 0.3], rpy: [0, 0, 1.5]}\n"
                                 "    q0: [0, 0.3, 0, -1.2, 0, 0.9, 0]\n"
                                 "    controller:\n"
                                 "      type: pd\n"
                                 "      kp_per_joint: [1, 2, 3, 4, 5, 6, 7]\n"
                                 "      kd: 4\n"
                                 "      gravity_compensation: false\n"
                                 "      trajectory:\n"
                                 "        interpolation: cubic\n"
                                 "        points:\n"
                                 "          - {t: 0, q: [0, 0.3, 0, -1.2, 0, 0.9, 0]}\n"
                                 "          - {t: 1, q: [0, 0.5, 0, -1.0, 0, 0.9, 0]}\n"
                                 "  - name: hand\n"
                                 "    urdf: " GRIPPER "\n"
                                 "    attach_to: {robot: arm, link: arm_link_7, pose: {xyz: [0, 0, 0.045]}}\n"
                                 "    controller: {kp: 200, sequence: [{name: close, duration: 0.5, q: [0.01]}]}\n"
                                 "output: {dir: results, trajectory_rate: 20}\n");
  kn_scene* s = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load(path, &s, &err), KN_OK, "%s", err.msg);
  cr_assert_str_eq(s->name, "pick");
  cr_assert_eq(s->time_step, 0.005);
  cr_assert_eq(s->duration, 2.5);
  cr_assert_eq(s->gravity[2], -1.62);
  cr_assert_eq(s->backend, KN_BACKEND_NONE);
  cr_assert_eq(s->npackage_paths, 2);
  char want[600];
  snprintf(want, sizeof want, "%s/models", tmpdir); /* relative to the scene's folder */
  cr_assert_str_eq(s->package_paths[0], want);
  cr_assert_str_eq(s->package_paths[1], "/opt/x");
  cr_assert_eq(s->doc->nrobots, 2);
  const kn_scene_robot* arm = &s->doc->robots[0];
  cr_assert_eq(arm->base_pose->xyz[2], 0.3);
  cr_assert_eq(arm->base_pose->rpy[2], 1.5);
  cr_assert_eq(arm->nq0, 7);
  cr_assert_eq(arm->q0[3], -1.2);
  cr_assert_eq(arm->controller->nkp_per_joint, 7);
  cr_assert_eq(arm->controller->kp_per_joint[6], 7.0);
  cr_assert_eq(*arm->controller->kd, 4.0);
  cr_assert_eq(*arm->controller->gravity_compensation, false);
  cr_assert_eq(arm->controller->trajectory->interpolation, KN_TRAJ_CUBIC);
  cr_assert_eq(arm->controller->trajectory->npoints, 2);
  cr_assert_eq(arm->controller->trajectory->points[1].q[1], 0.5);
  const kn_scene_robot* hand = &s->doc->robots[1];
  cr_assert_str_eq(hand->attach_to->robot, "arm");
  cr_assert_str_eq(hand->attach_to->link, "arm_link_7");
  cr_assert_eq(hand->attach_to->pose.xyz[2], 0.045);
  cr_assert_eq(hand->controller->nsequence, 1);
  cr_assert_str_eq(hand->controller->sequence[0].name, "close");
  cr_assert_eq(s->output->trajectory_rate, 20.0);
  cr_assert_str_eq(s->output->dir, "results");
  /* the line index finds keys for later (semantic) messages */
  cr_assert_eq(kn_scene_line(s, "robots[1].attach_to"), 24);
  cr_assert_eq(kn_scene_line(s, "robots[0].controller.trajectory.points[1]"), 21);

  /* the world: one tree (the hand is welded to the arm), 9 coordinates, 8 DoFs */
  kn_world* w = NULL;
  cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(w->ntree, 1);
  cr_assert_eq(w->trees[0].robot->model->nq, 9);
  cr_assert_eq(kn_robot_dofs(w->trees[0].robot), 8);
  cr_assert_eq(w->robots[1].q_offset, 7);
  cr_assert_eq(w->robots[1].attached_to, 0);
  cr_assert_eq(w->trees[0].nctrl, 2);
  cr_assert_eq(w->trees[0].robot->model->gravity[2], -1.62);
  kn_world_free(w);
  kn_scene_free(s);
}

Test(scene, defaults_when_keys_are_absent) {
  const char* path = write_scene("empty_robots.yaml", "robots: []\n");
  kn_scene* s = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load(path, &s, &err), KN_OK, "%s", err.msg);
  cr_assert_str_eq(s->name, "empty_robots"); /* the file stem */
  cr_assert_eq(s->time_step, 0.001);
  cr_assert_eq(s->duration, 1.0);
  cr_assert_eq(s->gravity[2], -9.81);
  cr_assert_eq(s->backend, KN_BACKEND_SAP);
  cr_assert_null(s->output);
  kn_scene_free(s);
}

Test(scene, unknown_key_names_file_line_and_key) {
  expect_error("time_step: 0.01\n"
               "robots:\n"
               "  - name: arm\n"
               "    urdf: " ARM "\n"
               "    controller:\n"
               "      kp: 100\n"
               "      stiffness: 3\n",
               KN_ERR_PARSE, 7, "'stiffness'");
  expect_error("time_step: 0.01\nduraton: 3\n", KN_ERR_PARSE, 2, "'duraton'");
}

Test(scene, wrong_type_names_file_line_and_key) {
  expect_error("time_step: 0.01\n"
               "robots:\n"
               "  - name: arm\n"
               "    urdf: " ARM "\n"
               "    controller:\n"
               "      kp: [1, 2]\n",
               KN_ERR_PARSE, 6, "robots[0].controller.kp");
  expect_error("time_step: fast\n", KN_ERR_PARSE, 1, "time_step");
  expect_error("gravity: [0, -9.81]\n", KN_ERR_PARSE, 1, "gravity");
  expect_error("robots:\n  - name: a\n    urdf: a.urdf\n    floating: maybe\n", KN_ERR_PARSE, 4,
               "robots[0].floating");
  expect_error("contact: {backend: mujoco}\n", KN_ERR_PARSE, 1, "contact.backend");
}

Test(scene, missing_key_and_syntax_errors_have_lines) {
  expect_error("time_step: 0.01\nrobots:\n  - urdf: a.urdf\n", KN_ERR_PARSE, 3, "'name'");
  expect_error("time_step: 0.01\n robots: [\n", KN_ERR_PARSE, 2, "YAML syntax error");
}

Test(scene, semantic_errors_name_the_key) {
  expect_error("time_step: 0\n", KN_ERR_INVALID, 1, "time_step");
  expect_error("time_step: 0.01\n"
               "robots:\n"
               "  - name: arm\n"
               "    urdf: " ARM "\n"
               "    q0: [0, 0.3, 0]\n",
               KN_ERR_INVALID, 5, "robots[0].q0");
  expect_error("robots:\n"
               "  - name: hand\n"
               "    urdf: " GRIPPER "\n"
               "    attach_to: {robot: arms, link: arm_link_7}\n",
               KN_ERR_INVALID, 4, "robots[0].attach_to.robot");
  expect_error("robots:\n"
               "  - name: arm\n"
               "    urdf: " ARM "\n"
               "    controller:\n"
               "      kp: 10\n"
               "      setpoint: [1, 2]\n",
               KN_ERR_INVALID, 6, "robots[0].controller.setpoint");
  expect_error("robots:\n"
               "  - name: arm\n"
               "    urdf: " ARM "\n"
               "    controller:\n"
               "      kp: 10\n"
               "      joints: [arm_joint_1, elbow]\n",
               KN_ERR_INVALID, 6, "robots[0].controller.joints[1]");
  expect_error("robots:\n  - name: arm\n    urdf: " ARM "\n  - name: arm\n    urdf: " ARM "\n", KN_ERR_INVALID, 4,
               "robots[1].name");
}

Test(scene, unsupported_sections_and_backends_are_errors) {
  expect_error("time_step: 0.01\nchecks:\n  - {name: a, type: solver_converged, min: 1}\n", KN_ERR_INVALID, 3,
               "checks[0].min"); /* checks are supported now (check/checks.c); a key of another type is not */
  expect_error("time_step: 0.01\ndeformables:\n  - name: jelly\n    model: mpm\n    shape: {torus: [0.2, 0.05]}\n",
               KN_ERR_INVALID, 5, "deformables[0].shape.torus"); /* MPM samples box, sphere, cylinder, mesh */
  expect_error("time_step: 0.01\ndeformables:\n  - name: jelly\n    model: mpm\n    shape: {sphere: 0.1}\n"
               "    particle_jitter: 1.5\n",
               KN_ERR_INVALID, 6, "deformables[0].particle_jitter"); /* a fraction of the spacing, [0, 1) */
  expect_error("time_step: 0.01\ndeformables:\n  - name: jelly\n    shape: {sphere: 0.1}\n    particle_jitter: 0.5\n",
               KN_ERR_INVALID, 5, "particle_jitter"); /* FEM bodies have no particles */
  expect_error("time_step: 0.01\ndeformables:\n  - name: jelly\n    model: mpm\n    shape: {sphere: 0.1}\n"
               "    contact_radius: -0.001\n",
               KN_ERR_INVALID, 6, "deformables[0].contact_radius"); /* a radius, >= 0 */
  expect_error("time_step: 0.01\ndeformables:\n  - name: jelly\n    shape: {sphere: 0.1}\n    contact_radius: 0.001\n",
               KN_ERR_INVALID, 5, "contact_radius"); /* FEM bodies have no particles */
  expect_error("deformables:\n  - name: jelly\n    shape: {sphere: 0.1, box: [1, 1, 1]}\n", KN_ERR_INVALID, 3,
               "deformables[0].shape");
  expect_error("deformables:\n  - name: jelly\n    shape: {sphere: 0.1}\n    material: {type: rubber}\n",
               KN_ERR_PARSE, 4, "deformables[0].material.type");
  expect_error("contact: {backend: ipc, ipc: {lagging_iterations: 9}}\n", KN_ERR_INVALID, 1,
               "contact.ipc.lagging_iterations"); /* the nonlinear step redoes a solve at most 5 times */
  expect_error("contact:\n  backend: ipc\n  ipc: {dhat: -1e-3}\n", KN_ERR_INVALID, 3, "contact.ipc.dhat");
}
