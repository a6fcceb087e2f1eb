/* tools/: the knead command run as a user would (KNEAD_CLI is the built program): info on the
 * project's arm, a URDF that cannot load, run on a tiny scene, the default scene from another
 * folder and the replay it writes, and usage errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "output/output.h"
#include "sim/sim.h"
#include "../support/tmpdir.h"

#define ARM KNEAD_SOURCE_DIR "/examples/models/knead_arm7.urdf"

static void make_tmpdir(void) { tmpdir_make("test_cli"); }

TestSuite(cli, .init = make_tmpdir, .fini = tmpdir_remove);

// (shell command) => exit status; stdout and stderr captured into tmpdir/out.txt and err.txt
static int run(const char* fmt, const char* arg) {
  char args[1024];
  snprintf(args, sizeof args, fmt, arg);
  return knead_run(args);
}



static int count(const char* s, const char* end, const char* what) {
  int n = 0;
  for (const char* p = strstr(s, what); p && (!end || p < end); p = strstr(p + 1, what)) n++;
  return n;
}

Test(cli, info_json_describes_the_arm) {
  cr_assert_eq(run("info --json %s", ARM), 0, "%s", tmp_text("err.txt"));
  const char* out = tmp_text("out.txt");
  cr_assert(strstr(out, "\"name\": \"knead_arm7\"") != NULL, "%s", out);
  cr_assert(strstr(out, "\"dofs\": 7,") != NULL, "%s", out);
  /* 8 links (arm_link_0..7), each listed with its parent */
  const char* links = strstr(out, "\"links\": [");
  const char* joints = strstr(out, "\"joints\": [");
  cr_assert(links && joints && links < joints);
  cr_assert_eq(count(links, joints, "\"parent\""), 8);
  cr_assert_eq(count(joints, strstr(joints, "\n  ]"), "\"type\": \"revolute\""), 7);
  /* total mass: the sum of the URDF's link masses, 5 + 5.76 + 6.35 + 3.5 * 3 + 1.8 + 1.2 kg */
  const char* m = strstr(out, "\"total_mass\": ");
  cr_assert_not_null(m);
  double mass = atof(m + strlen("\"total_mass\": "));
  cr_assert_float_eq(mass, 30.61, 1e-9);
  cr_assert(strstr(out, "\"mimic_joints\": []") != NULL, "%s", out);
  cr_assert(strstr(out, "\"warnings\": []") != NULL, "%s", out);
  /* the effort limit of joint 1 (320 N m) and its position limits */
  cr_assert(strstr(out, "\"effort\": 320") != NULL, "%s", out);
  cr_assert(strstr(out, "\"upper\": 2.96705972839") != NULL, "%s", out);
}

Test(cli, info_text_and_mimic_joints) {
  cr_assert_eq(run("info %s", KNEAD_SOURCE_DIR "/examples/models/knead_gripper.urdf"), 0, "%s", tmp_text("err.txt"));
  const char* out = tmp_text("out.txt");
  cr_assert(strstr(out, "1 DoFs") != NULL, "%s", out);
  cr_assert(strstr(out, "gripper_finger_right_joint = 1 * gripper_finger_left_joint") != NULL, "%s", out);
}

Test(cli, bad_urdf_exits_nonzero_with_message) {
  write_file("bad.urdf", "<robot name=\"bad\"><link name=\"a\"><inertial>\n</robot>\n");
  int st = run("info %s", "bad.urdf");
  cr_assert_eq(st, 1);
  const char* err = tmp_text("err.txt");
  cr_assert(strstr(err, "bad.urdf") != NULL, "stderr: %s", err);
  cr_assert_eq(strlen(tmp_text("out.txt")), 0);
  cr_assert_eq(run("info %s", "no_such_file.urdf"), 1);
  cr_assert(strstr(tmp_text("err.txt"), "no_such_file.urdf") != NULL);
}

Test(cli, missing_collision_mesh_is_a_warning_for_info) {
  write_file("mesh.urdf",
             "<robot name=\"m\"><link name=\"a\"><inertial><mass value=\"2\"/>"
             "<inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial>"
             "<collision><geometry><mesh filename=\"missing_part.stl\"/></geometry></collision>"
             "<visual><geometry><mesh filename=\"missing_look.obj\"/></geometry></visual></link></robot>\n");
  cr_assert_eq(run("info --json %s", "mesh.urdf"), 0, "%s", tmp_text("err.txt"));
  const char* out = tmp_text("out.txt");
  cr_assert(strstr(out, "\"missing_collision_meshes\": 1") != NULL, "%s", out);
  cr_assert(strstr(out, "\"missing_visual_meshes\": 1") != NULL, "%s", out);
  cr_assert(strstr(out, "\"total_mass\": 2") != NULL, "%s", out);
  const char* w = strstr(out, "\"warnings\": [");
  cr_assert(w && strstr(w, "missing_part.stl") && strstr(w, "missing_look.obj"), "%s", out);
}

Test(cli, run_tiny_scene_writes_outputs) {
  /* 0.05 s at 0.01 s: 5 steps; rows at every step plus the initial state */
  write_file("tiny.yaml",
             "time_step: 0.01\n"
             "duration: 0.05\n"
             "robots:\n"
             "  - name: arm\n"
             "    urdf: " ARM "\n"
             "    q0: [0, 0.3, 0, -1.2, 0, 0.9, 0]\n"
             "    controller: {kp: 100, kd: 10}\n");
  cr_assert_eq(run("run %s --out results", "tiny.yaml"), 0, "%s", tmp_text("err.txt"));
  const char* out = tmp_text("out.txt");
  cr_assert(strstr(out, "tiny: 5 steps") != NULL, "%s", out);
  const char* sum = tmp_text("results/summary.json");
  cr_assert(*sum, "no summary.json");
  cr_assert(strstr(sum, "\"steps\": 5,") != NULL, "%s", sum);
  cr_assert(strstr(sum, "\"sim_time_s\": 0.05") != NULL, "%s", sum);
  cr_assert(strstr(sum, "\"wall_time_s\": ") != NULL, "%s", sum);
  const char* h = strstr(sum, "\"final_state_hash\": \"");
  cr_assert_not_null(h);
  h += strlen("\"final_state_hash\": \"");
  cr_assert_eq(strspn(h, "0123456789abcdef"), 16);
  cr_assert_eq(h[16], '"');
  /* which knead wrote it: version, git revision at configure time ("unknown" without git, 12 hex
   * digits otherwise, "-dirty" with uncommitted changes) and the build id of this very build */
  cr_assert(strstr(sum, "\"knead_version\": \"0.1.0\", "), "%s", sum);
  const char* gr = strstr(sum, "\"git_revision\": \"");
  cr_assert_not_null(gr, "%s", sum);
  gr += strlen("\"git_revision\": \"");
  size_t nhex = strspn(gr, "0123456789abcdef");
  cr_assert(!strncmp(gr, "unknown\"", 8) || (nhex == 12 && (gr[12] == '"' || !strncmp(gr + 12, "-dirty\"", 7))),
            "%.40s", gr);
  char id[64];
  snprintf(id, sizeof id, "\"build_id\": \"%s\"", kn_build_id());
  cr_assert(strlen(kn_build_id()) == 16 && strstr(sum, id), "%s not in %s", id, sum);
  const char* csv = tmp_text("results/trajectory.csv");
  cr_assert_eq(count(csv, NULL, "\n"), 1 + 6);
  cr_assert(strncmp(csv, "t,arm/arm_joint_1,", 18) == 0);
  /* stderr has no terminal here: a few percentage lines, not a redrawn bar */
  const char* err = tmp_text("err.txt");
  cr_assert(strstr(err, "100%") != NULL && strchr(err, '\r') == NULL, "%s", err);

  /* the default output folder is out/<scene name>; trajectory_rate 50 at dt 0.01 keeps every 2nd
   * step: steps 0, 2, 4 and the last (5) */
  write_file("tiny2.yaml",
             "time_step: 0.01\n"
             "duration: 0.05\n"
             "output: {trajectory_rate: 50}\n"
             "robots: [{name: arm, urdf: " ARM "}]\n");
  cr_assert_eq(run("run %s", "tiny2.yaml"), 0, "%s", tmp_text("err.txt"));
  csv = tmp_text("out/tiny2/trajectory.csv");
  cr_assert(*csv, "no trajectory.csv");
  cr_assert_eq(count(csv, NULL, "\n"), 1 + 4, "%s", csv);
}

Test(cli, run_scene_error_names_file_and_line) {
  write_file("typo.yaml", "time_step: 0.01\nduraton: 1\n");
  cr_assert_eq(run("run %s", "typo.yaml"), 1);
  const char* err = tmp_text("err.txt");
  cr_assert(strstr(err, "typo.yaml:2:") != NULL && strstr(err, "duraton"), "%s", err);
}

Test(cli, default_scene_runs_from_any_folder) {
  cr_assert_eq(run("%s", ""), 0, "%s", tmp_text("err.txt"));
  const char* sum = tmp_text("out/default/summary.json");
  cr_assert(*sum, "no out/default/summary.json in %s", tmpdir);
  cr_assert(strstr(sum, "\"status\": \"ok\"") != NULL, "%s", sum);
  cr_assert(strstr(sum, "\"dofs\": 7") != NULL, "%s", sum);
}

/* README command 1: `knead` alone runs the embedded default scene, which asks for the three.js
 * replay: out/default/replay.html is written and its path printed last on stdout, ready to paste.
 * A build without three.js runs it without the replay and says why on stderr. */
Test(cli, default_run_writes_the_replay_and_says_where) {
  cr_assert_eq(run("%s", ""), 0, "%s", tmp_text("err.txt"));
  char out[4096], path[512];
  cr_assert(*tmp_text("out.txt"), "nothing on stdout");
  snprintf(out, sizeof out, "%s", tmp_text("out.txt"));
  snprintf(path, sizeof path, "%s/out/default/replay.html", tmpdir);
  FILE* f = fopen(path, "r");
  if (kn_output_html_available()) {
    cr_assert_not_null(f, "no out/default/replay.html in %s", tmpdir);
    char head[64] = "";
    cr_expect_not_null(fgets(head, sizeof head, f));
    fclose(f);
    cr_expect(strstr(head, "<!DOCTYPE html>") || strstr(head, "<!doctype html>"), "%s", head);
    size_t n = strlen(out), tail = strlen("open out/default/replay.html\n");
    cr_expect(n >= tail && strcmp(out + n - tail, "open out/default/replay.html\n") == 0,
              "stdout does not end with the replay's path:\n%s", out);
  } else {
    cr_expect_null(f, "replay.html written without three.js");
    if (f) fclose(f);
    cr_expect(strstr(tmp_text("err.txt"), "warning: no replay.html") != NULL, "%s", tmp_text("err.txt"));
    cr_expect_null(strstr(out, "replay.html"), "%s", out);
  }
  /* a scene that does not ask for the replay gets neither the file nor the line */
  write_file("plain.yaml", "name: plain\ntime_step: 0.01\nduration: 0.02\n");
  cr_assert_eq(run("run %s", "plain.yaml"), 0, "%s", tmp_text("err.txt"));
  cr_expect_null(strstr(tmp_text("out.txt"), "replay.html"), "%s", tmp_text("out.txt"));
  snprintf(path, sizeof path, "%s/out/plain/replay.html", tmpdir);
  f = fopen(path, "r");
  cr_expect_null(f, "out/plain/replay.html written");
  if (f) fclose(f);
}

Test(cli, usage_errors_exit_2) {
  cr_assert_eq(run("%s", "frobnicate"), 2);
  cr_assert(strstr(tmp_text("err.txt"), "usage:") != NULL);
  cr_assert_eq(run("%s", "run"), 2);
  cr_assert_eq(run("%s", "run a.yaml --bogus"), 2);
  cr_assert_eq(run("%s", "info"), 2);
  cr_assert_eq(run("%s", "--help"), 0);
  cr_assert(strstr(tmp_text("out.txt"), "knead run SCENE.yaml") != NULL);
}
