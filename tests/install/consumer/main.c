/* An installed-knead consumer: loads a one-link URDF from a string (exercising the C++ urdfdom
 * shim, so a missing libstdc++ in the link line shows up), and checks the mass matrix of that
 * pendulum against its analytic value. With an argument OUT_DIR it also runs a 0.05 s scene with
 * output.html into OUT_DIR and checks that replay.html inlines three.js (found next to the
 * installed libknead). Exit status 0 on success. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <knead/knead.h>

/* a 2 kg link hanging 0.5 m below a revolute joint about y, I_com = diag(0.01, 0.02, 0.03) */
static const char* pendulum =
    "<robot name='pendulum'>"
    "  <link name='base'/>"
    "  <link name='bob'>"
    "    <inertial><origin xyz='0 0 -0.5'/><mass value='2'/>"
    "      <inertia ixx='0.01' iyy='0.02' izz='0.03' ixy='0' ixz='0' iyz='0'/></inertial>"
    "  </link>"
    "  <joint name='swing' type='revolute'><parent link='base'/><child link='bob'/>"
    "    <axis xyz='0 1 0'/><limit lower='-3' upper='3' effort='10' velocity='5'/></joint>"
    "</robot>";

// (out_dir) => replay.html of a falling ball written there, with three.js inlined; 0 on success
static int render_html(const char* out_dir) {
  static const char* yaml = "time_step: 0.01\nduration: 0.05\n"
                            "objects:\n  - {name: ball, shape: {sphere: 0.05}, mass: 1, pose: {xyz: [0, 0, 1]}}\n"
                            "output: {html: true, frame_rate: 50}\n";
  kn_error err = {0};
  kn_scene* s = NULL;
  kn_world* w = NULL;
  int ok = kn_scene_load_string(yaml, strlen(yaml), "html.yaml", &s, &err) == KN_OK &&
           kn_world_create(s, &w, &err) == KN_OK && kn_world_run(w, out_dir, NULL, NULL, NULL, &err) == KN_OK;
  if (!ok) fprintf(stderr, "knead_consumer: %s\n", err.msg);
  kn_world_free(w);
  kn_scene_free(s);
  char path[4096];
  snprintf(path, sizeof path, "%s/replay.html", out_dir);
  struct stat st;
  /* three.min.js r158 alone is ~670 kB */
  ok = ok && stat(path, &st) == 0 && st.st_size > 500000;
  printf("knead_consumer: %s %s\n", path, ok ? "ok" : "MISSING or without three.js");
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc > 1 && render_html(argv[1])) return 1;
  kn_error err = {0};
  kn_urdf_options opt = kn_urdf_options_default();
  kn_robot* robot = NULL;
  if (kn_urdf_load_string(pendulum, "pendulum", NULL, &opt, &robot, &err) != KN_OK) {
    fprintf(stderr, "knead_consumer: %s\n", err.msg);
    return 1;
  }
  const kn_mb_model* m = robot->model;
  kn_mb_data* d = kn_mb_data_create(m);
  double q = 0.3, M = 0.0;
  kn_mb_kinematics(m, &q, NULL, d);
  kn_mb_mass_matrix(m, d, &M);
  /* parallel-axis theorem: M = I_yy + m l^2 = 0.02 + 2 * 0.25, independent of q */
  double expected = 0.52;
  int ok = m->nv == 1 && fabs(M - expected) < 1e-12 && fabs(kn_mb_total_mass(m) - 2.0) < 1e-15;
  printf("knead_consumer: nv %d, M %.15g (expected %.15g): %s\n", m->nv, M, expected, ok ? "ok" : "WRONG");
  kn_mb_data_free(d);
  kn_robot_free(robot);
  return ok ? 0 : 1;
}
