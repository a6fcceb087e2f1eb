/* urdf/: knead's own models, attaching, every joint type, inertia rotation, mesh resolution and
 * the warnings and errors the loader promises (urdf.h). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "urdf/urdf.h"

#define MODELS KNEAD_SOURCE_DIR "/examples/models/"

static kn_robot* load_file(const char* path, const kn_urdf_options* o) {
  kn_robot* r = NULL;
  kn_error err = {0};
  kn_status st = kn_urdf_load(path, o, &r, &err);
  cr_assert_eq(st, KN_OK, "%s", err.msg);
  return r;
}

static kn_robot* load_text(const char* xml, const char* base_dir, const kn_urdf_options* o) {
  kn_robot* r = NULL;
  kn_error err = {0};
  kn_status st = kn_urdf_load_string(xml, "inline.urdf", base_dir, o, &r, &err);
  cr_assert_eq(st, KN_OK, "%s", err.msg);
  return r;
}

static int has_warning(const kn_robot* r, const char* piece) {
  for (int i = 0; i < r->warnings.count; i++)
    if (strstr(r->warnings.items[i], piece)) return 1;
  return 0;
}

static int count_role(const kn_robot* r, kn_geom_role role) {
  int n = 0;
  for (int i = 0; i < r->ngeom; i++) n += r->geoms[i].role == role;
  return n;
}

/*---- knead's own models ----*/

Test(urdf, arm7_counts_mass_and_limits) {
  kn_robot* r = load_file(MODELS "knead_arm7.urdf", NULL);
  cr_expect_eq(r->model->nbody, 8);
  cr_expect_eq(r->model->nq, 7);
  cr_expect_eq(r->model->nv, 7);
  cr_expect_eq(kn_robot_dofs(r), 7);
  /* 5 + 5.76 + 6.35 + 3.5 + 3.5 + 3.5 + 1.8 + 1.2 kg (iiwa14 link masses) */
  cr_expect(fabs(kn_mb_total_mass(r->model) - 30.61) < 1e-12);
  cr_expect_eq(r->warnings.count, 0, "our own model loads without warnings (%s)",
               r->warnings.count ? r->warnings.items[0] : "");
  cr_expect_eq(count_role(r, KN_GEOM_COLLISION), 12);
  cr_expect_eq(count_role(r, KN_GEOM_VISUAL), 12);
  for (int b = 0; b < 8; b++) {
    char name[32];
    snprintf(name, sizeof name, "arm_link_%d", b);
    cr_expect_eq(kn_mb_find_body(r->model, name), b, "chain in document order");
  }
  const kn_mb_body* j1 = &r->model->bodies[1];
  cr_expect_str_eq(j1->joint_name, "arm_joint_1");
  cr_expect_eq(j1->jtype, KN_JOINT_REVOLUTE);
  cr_expect(j1->has_position_limits);
  cr_expect(fabs(j1->upper - 2.96705972839) < 1e-12 && fabs(j1->lower + 2.96705972839) < 1e-12);
  cr_expect(fabs(j1->effort_limit - 320) < 1e-12 && fabs(j1->velocity_limit - 1.4835298641951802) < 1e-12);
  cr_expect(fabs(j1->damping - 0.5) < 1e-15);
  cr_expect(fabs(j1->X_pj.p[2] - 0.1575) < 1e-15);
  /* the root is welded at the base pose */
  cr_expect_eq(r->model->bodies[0].jtype, KN_JOINT_FIXED);
  cr_expect_eq(kn_robot_check_simulatable(r, NULL), KN_OK);
  kn_robot_free(r);
}

Test(urdf, gripper_counts_mass_and_mimic) {
  kn_robot* r = load_file(MODELS "knead_gripper.urdf", NULL);
  cr_expect_eq(r->model->nbody, 3);
  cr_expect_eq(r->model->nv, 2);
  cr_expect_eq(kn_robot_dofs(r), 1);
  cr_expect(fabs(kn_mb_total_mass(r->model) - 0.6) < 1e-12, "0.5 + 2 x 0.05 kg");
  cr_expect_eq(r->warnings.count, 0);
  cr_assert_eq(r->model->ncoupler, 1);
  const kn_mb_coupler* c = &r->model->couplers[0];
  cr_expect_eq(c->body, kn_mb_find_joint(r->model, "gripper_finger_right_joint"));
  cr_expect_eq(c->master, kn_mb_find_joint(r->model, "gripper_finger_left_joint"));
  cr_expect(c->multiplier == 1.0 && c->offset == 0.0);
  const kn_mb_body* f = &r->model->bodies[c->master];
  cr_expect_eq(f->jtype, KN_JOINT_PRISMATIC);
  cr_expect(f->has_position_limits && f->lower == 0.0 && fabs(f->upper - 0.05) < 1e-15);
  /* closed gap 2 (0.0125 - 0.015 / 2) = 0.01 m; open 0.01 + 2 x 0.05 = 0.11 m > 0.05 m box */
  cr_expect(fabs(f->X_pj.p[1] - 0.0125) < 1e-15);
  cr_expect_eq(count_role(r, KN_GEOM_COLLISION), 3);
  for (int i = 0; i < r->ngeom; i++) cr_expect_eq(r->geoms[i].shape.type, KN_SHAPE_BOX);
  kn_robot_free(r);
}

Test(urdf, gripper_attached_to_arm) {
  kn_robot* arm = load_file(MODELS "knead_arm7.urdf", NULL);
  kn_robot* grip = load_file(MODELS "knead_gripper.urdf", NULL);
  kn_pose X;
  kn_pose_identity(&X);
  X.p[2] = 0.045;
  kn_error err = {0};
  cr_assert_eq(kn_robot_attach(arm, grip, "arm_link_7", &X, &err), KN_OK, "%s", err.msg);
  cr_expect_eq(arm->model->nbody, 11);
  cr_expect_eq(arm->model->nv, 9);
  cr_expect_eq(kn_robot_dofs(arm), 8, "7 + 2 - 1 (mimic)");
  cr_expect_eq(arm->model->ncoupler, 1);
  cr_expect(fabs(kn_mb_total_mass(arm->model) - 31.21) < 1e-12);
  cr_expect_eq(arm->ngeom, 24 + 6);
  int palm = kn_mb_find_body(arm->model, "gripper_palm");
  cr_assert_eq(palm, 8);
  cr_expect_eq(arm->model->bodies[palm].parent, 7);
  cr_expect_eq(arm->model->bodies[palm].jtype, KN_JOINT_FIXED);
  cr_expect(fabs(arm->model->bodies[palm].X_pj.p[2] - 0.045) < 1e-15);
  for (int i = 24; i < 30; i++) cr_expect_geq(arm->geoms[i].body, 8, "gripper geometry on gripper bodies");
  cr_expect_eq(arm->model->couplers[0].body, kn_mb_find_joint(arm->model, "gripper_finger_right_joint"));
  /* the child is unchanged */
  cr_expect_eq(grip->model->nbody, 3);
  cr_expect_eq(grip->ngeom, 6);
  /* an unknown link fails and leaves the parent as it was */
  cr_expect_eq(kn_robot_attach(arm, grip, "no_such_link", &X, &err), KN_ERR_INVALID);
  cr_expect(strstr(err.msg, "no_such_link") != NULL, "%s", err.msg);
  cr_expect_eq(arm->model->nbody, 11);
  kn_robot_free(grip);
  kn_robot_free(arm);
}

/*---- joint types ----*/

#define LINK(n) "<link name='" n "'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link>"
#define JOINT(n, type, child, extra) \
  "<joint name='" n "' type='" type "'><parent link='base'/><child link='" child "'/>" extra "</joint>"

static const char* all_joints =
    "<robot name='joints'>" LINK("base") LINK("a") LINK("b") LINK("c") LINK("d") LINK("e") LINK("f")
    JOINT("rev", "revolute", "a", "<axis xyz='0 0 1'/><limit lower='-1' upper='1' effort='5' velocity='2'/>")
    JOINT("cont", "continuous", "b", "<axis xyz='0 1 0'/>")
    JOINT("pris", "prismatic", "c", "<axis xyz='2 0 0'/><limit lower='0' upper='0.1' effort='5' velocity='2'/>")
    JOINT("fix", "fixed", "d", "")
    JOINT("float", "floating", "e", "")
    JOINT("plane", "planar", "f", "<axis xyz='0 0 1'/>")
    "</robot>";

Test(urdf, every_joint_type_has_its_coordinates) {
  kn_robot* r = load_text(all_joints, NULL, NULL);
  struct { const char* joint; kn_joint_type t; int nq, nv; } want[] = {
      {"rev", KN_JOINT_REVOLUTE, 1, 1},   {"cont", KN_JOINT_CONTINUOUS, 1, 1}, {"pris", KN_JOINT_PRISMATIC, 1, 1},
      {"fix", KN_JOINT_FIXED, 0, 0},      {"float", KN_JOINT_FLOATING, 7, 6},  {"plane", KN_JOINT_PLANAR, 3, 3}};
  for (int i = 0; i < 6; i++) {
    int b = kn_mb_find_joint(r->model, want[i].joint);
    cr_assert_geq(b, 1, "%s", want[i].joint);
    cr_expect_eq(r->model->bodies[b].jtype, want[i].t, "%s", want[i].joint);
    cr_expect_eq(r->model->bodies[b].nq, want[i].nq, "%s nq", want[i].joint);
    cr_expect_eq(r->model->bodies[b].nv, want[i].nv, "%s nv", want[i].joint);
  }
  cr_expect_eq(r->model->nq, 13);
  cr_expect_eq(r->model->nv, 12);
  const kn_mb_body* p = &r->model->bodies[kn_mb_find_joint(r->model, "pris")];
  cr_expect(fabs(p->axis[0] - 1) < 1e-15, "axis normalized");
  cr_expect(!r->model->bodies[kn_mb_find_joint(r->model, "cont")].has_position_limits);
  cr_expect(isinf(r->model->bodies[kn_mb_find_joint(r->model, "cont")].effort_limit));
  kn_robot_free(r);

  /* a floating base adds (7, 6) */
  kn_urdf_options o = kn_urdf_options_default();
  o.floating_base = 1;
  o.base_pose.p[2] = 1.5;
  r = load_text(all_joints, NULL, &o);
  cr_expect_eq(r->model->bodies[0].jtype, KN_JOINT_FLOATING);
  cr_expect_eq(r->model->nq, 20);
  cr_expect_eq(r->model->nv, 18);
  cr_expect(r->model->bodies[0].X_pj.p[2] == 1.5);
  kn_robot_free(r);
}

/*---- inertia ----*/

/* URDF: R = Rz(yaw) Ry(pitch) Rx(roll), built here independently of common/ */
static void rpy_matrix(double r, double p, double y, double R[9]) {
  double cr = cos(r), sr = sin(r), cp = cos(p), sp = sin(p), cy = cos(y), sy = sin(y);
  double M[9] = {cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,
                 sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,
                 -sp,     cp * sr,                cp * cr};
  memcpy(R, M, sizeof M);
}

Test(urdf, inertia_is_rotated_into_the_link_frame) {
  const char* xml =
      "<robot name='inertia'><link name='l'><inertial><origin xyz='0.1 -0.2 0.3' rpy='0.3 -0.4 0.5'/>"
      "<mass value='2'/><inertia ixx='0.02' ixy='0.001' ixz='-0.002' iyy='0.03' iyz='0.003' izz='0.04'/>"
      "</inertial></link></robot>";
  kn_robot* r = load_text(xml, NULL, NULL);
  const kn_mb_body* b = &r->model->bodies[0];
  double R[9], I[9] = {0.02, 0.001, -0.002, 0.001, 0.03, 0.003, -0.002, 0.003, 0.04};
  rpy_matrix(0.3, -0.4, 0.5, R);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double want = 0; /* (R I R^T)_ij */
      for (int k = 0; k < 3; k++)
        for (int l = 0; l < 3; l++) want += R[3 * i + k] * I[3 * k + l] * R[3 * j + l];
      cr_expect(fabs(b->I_com[3 * i + j] - want) < 1e-14, "I[%d][%d] = %.17g, expected %.17g", i, j,
                b->I_com[3 * i + j], want);
    }
  cr_expect(b->mass == 2.0);
  cr_expect(b->com[0] == 0.1 && b->com[1] == -0.2 && b->com[2] == 0.3);
  /* trace is invariant under rotation */
  cr_expect(fabs(b->I_com[0] + b->I_com[4] + b->I_com[8] - 0.09) < 1e-15);
  kn_robot_free(r);
}

/*---- meshes ----*/

static char tmp_root[256];

static void write_file(const char* path, const char* text) {
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

/* tmp/pkgs/mypkg/meshes/a.obj, tmp/nested/group/otherpkg/b.obj, tmp/urdf/rel/c.obj */
static void make_tree(void) {
  snprintf(tmp_root, sizeof tmp_root, "/tmp/knead_urdf_test_XXXXXX");
  cr_assert_not_null(mkdtemp(tmp_root));
  const char* dirs[] = {"pkgs", "pkgs/mypkg", "pkgs/mypkg/meshes", "nested", "nested/group", "nested/group/otherpkg",
                        "urdf", "urdf/rel"};
  char p[512];
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    snprintf(p, sizeof p, "%s/%s", tmp_root, dirs[i]);
    cr_assert_eq(mkdir(p, 0755), 0, "%s", p);
  }
  snprintf(p, sizeof p, "%s/pkgs/mypkg/meshes/a.obj", tmp_root);
  write_file(p, "v 0 0 0\n");
  snprintf(p, sizeof p, "%s/nested/group/otherpkg/b.obj", tmp_root);
  write_file(p, "v 0 0 0\n");
  snprintf(p, sizeof p, "%s/urdf/rel/c.obj", tmp_root);
  write_file(p, "v 0 0 0\n");
}

static void remove_tree(void) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
  cr_expect_eq(system(cmd), 0);
}

#define MESH_LINK(kind, file) \
  "<robot name='m'><link name='l'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' " \
  "iyz='0'/></inertial><" kind "><geometry><mesh filename='" file "' scale='2 2 2'/></geometry></" kind ">"  \
  "</link></robot>"

static const kn_geometry* only_mesh(const kn_robot* r) {
  cr_assert_eq(r->ngeom, 1);
  cr_assert_eq(r->geoms[0].shape.type, KN_SHAPE_MESH);
  return &r->geoms[0];
}

Test(urdf, package_paths_from_options_and_environment, .init = make_tree, .fini = remove_tree) {
  unsetenv("KNEAD_PACKAGE_PATH");
  unsetenv("ROS_PACKAGE_PATH");
  char pkgs[300], nested[300], want[400];
  snprintf(pkgs, sizeof pkgs, "%s/pkgs", tmp_root);
  snprintf(nested, sizeof nested, "%s/nested", tmp_root);

  /* options: <path>/pkg/rest */
  const char* paths[] = {pkgs};
  kn_urdf_options o = kn_urdf_options_default();
  o.package_paths = paths;
  o.npackage_paths = 1;
  kn_robot* r = load_text(MESH_LINK("collision", "package://mypkg/meshes/a.obj"), NULL, &o);
  snprintf(want, sizeof want, "%s/mypkg/meshes/a.obj", pkgs);
  cr_expect_str_eq(only_mesh(r)->shape.mesh_path, want);
  cr_expect_str_eq(only_mesh(r)->shape.mesh_uri, "package://mypkg/meshes/a.obj");
  cr_expect(only_mesh(r)->shape.scale[1] == 2.0);
  cr_expect_eq(r->missing_collision_meshes, 0);
  kn_robot_free(r);

  /* environment: <path>/<any>/pkg/rest, one level down */
  cr_assert_eq(setenv("KNEAD_PACKAGE_PATH", nested, 1), 0);
  r = load_text(MESH_LINK("collision", "package://otherpkg/b.obj"), NULL, NULL);
  snprintf(want, sizeof want, "%s/group/otherpkg/b.obj", nested);
  cr_expect_str_eq(only_mesh(r)->shape.mesh_path, want);
  kn_robot_free(r);
  /* ROS_PACKAGE_PATH comes last, after KNEAD_PACKAGE_PATH */
  unsetenv("KNEAD_PACKAGE_PATH");
  cr_assert_eq(setenv("ROS_PACKAGE_PATH", pkgs, 1), 0);
  r = load_text(MESH_LINK("visual", "package://mypkg/meshes/a.obj"), NULL, NULL);
  cr_expect_not_null(only_mesh(r)->shape.mesh_path);
  kn_robot_free(r);
  unsetenv("ROS_PACKAGE_PATH");
}

Test(urdf, relative_meshes_resolve_against_the_urdf_folder, .init = make_tree, .fini = remove_tree) {
  char path[400], want[400];
  snprintf(path, sizeof path, "%s/urdf/robot.urdf", tmp_root);
  write_file(path, MESH_LINK("collision", "rel/c.obj"));
  kn_robot* r = load_file(path, NULL);
  snprintf(want, sizeof want, "%s/urdf/rel/c.obj", tmp_root);
  cr_expect_str_eq(only_mesh(r)->shape.mesh_path, want);
  cr_expect_str_eq(r->source_path, path);
  kn_robot_free(r);
  /* the same text from a string with a base folder */
  char base[300];
  snprintf(base, sizeof base, "%s/urdf", tmp_root);
  r = load_text(MESH_LINK("collision", "rel/c.obj"), base, NULL);
  cr_expect_str_eq(only_mesh(r)->shape.mesh_path, want);
  kn_robot_free(r);
}

Test(urdf, missing_visual_mesh_is_a_warning) {
  unsetenv("KNEAD_PACKAGE_PATH");
  unsetenv("ROS_PACKAGE_PATH");
  kn_robot* r = load_text(MESH_LINK("visual", "package://nowhere/v.dae"), NULL, NULL);
  cr_expect_null(only_mesh(r)->shape.mesh_path);
  cr_expect_eq(r->missing_visual_meshes, 1);
  cr_expect_eq(r->missing_collision_meshes, 0);
  cr_expect(has_warning(r, "visual mesh 'package://nowhere/v.dae' not found"));
  cr_expect_eq(kn_robot_check_simulatable(r, NULL), KN_OK, "visual meshes do not stop a simulation");
  kn_robot_free(r);
}

Test(urdf, missing_collision_mesh_loads_but_cannot_be_simulated) {
  unsetenv("KNEAD_PACKAGE_PATH");
  unsetenv("ROS_PACKAGE_PATH");
  kn_robot* r = load_text(MESH_LINK("collision", "package://nowhere/c.stl"), NULL, NULL);
  cr_expect_eq(r->missing_collision_meshes, 1);
  cr_expect(has_warning(r, "collision mesh 'package://nowhere/c.stl' not found"));
  kn_error err = {0};
  cr_expect_eq(kn_robot_check_simulatable(r, &err), KN_ERR_IO);
  cr_expect(strstr(err.msg, "package://nowhere/c.stl") && strstr(err.msg, "link 'l'") && strstr(err.msg, "inline.urdf"),
            "%s", err.msg);
  kn_robot_free(r);
}

/*---- what knead does not use, and errors ----*/

Test(urdf, unused_content_is_reported) {
  const char* xml =
      "<robot name='extra'>" LINK("base") LINK("a")
      "<joint name='j' type='revolute'><parent link='base'/><child link='a'/><axis xyz='0 0 1'/>"
      "<limit lower='-1' upper='1' effort='1' velocity='1'/><safety_controller k_velocity='1'/></joint>"
      "<transmission name='t1'><joint name='j'/></transmission><transmission name='t2'/>"
      "<gazebo reference='a'/><sensor name='s'/><ros2_control name='rc'/>"
      "<link name='empty'/><joint name='j2' type='fixed'><parent link='a'/><child link='empty'/></joint>"
      "</robot>";
  kn_robot* r = load_text(xml, NULL, NULL);
  cr_expect(has_warning(r, "2 <transmission> elements ignored"));
  cr_expect(has_warning(r, "1 <gazebo> element ignored"));
  cr_expect(has_warning(r, "1 <sensor> element ignored"));
  cr_expect(has_warning(r, "1 <ros2_control> element ignored"));
  cr_expect(has_warning(r, "<joint><safety_controller>"));
  cr_expect(has_warning(r, "link 'empty' has no <inertial>"));
  cr_expect_eq(r->warnings.count, 6);
  kn_robot_free(r);
}

Test(urdf, dropped_geometry_shapes_are_reported) {
  const char* xml =
      "<robot name='g'><link name='l'><collision><geometry><box size='1 1 1'/><sphere radius='1'/></geometry>"
      "</collision></link></robot>";
  kn_robot* r = load_text(xml, NULL, NULL);
  cr_expect_eq(r->ngeom, 1);
  cr_expect(has_warning(r, "extra <sphere> shape in <collision><geometry>"));
  kn_robot_free(r);
}

Test(urdf, malformed_xml_is_a_parse_error_naming_the_source) {
  kn_robot* r = (kn_robot*)0x1;
  kn_error err = {0};
  kn_status st = kn_urdf_load_string("<robot name='x'><link name='a'></robot>", "broken.urdf", NULL, NULL, &r, &err);
  cr_expect_eq(st, KN_ERR_PARSE);
  cr_expect(r == (kn_robot*)0x1, "*out untouched");
  cr_expect(strncmp(err.msg, "broken.urdf: ", 13) == 0, "%s", err.msg);
  /* an unknown joint type: urdfdom's message is kept */
  st = kn_urdf_load_string("<robot name='x'>" LINK("a") LINK("b")
                           "<joint name='j' type='hinge'><parent link='a'/><child link='b'/></joint></robot>",
                           "hinge.urdf", NULL, NULL, &r, &err);
  cr_expect_eq(st, KN_ERR_PARSE);
  cr_expect(strstr(err.msg, "hinge.urdf: urdfdom rejected the file") != NULL, "%s", err.msg);
  /* a file that does not exist */
  st = kn_urdf_load("/nonexistent/robot.urdf", NULL, &r, &err);
  cr_expect_eq(st, KN_ERR_IO);
  cr_expect(strstr(err.msg, "/nonexistent/robot.urdf") != NULL, "%s", err.msg);
}
