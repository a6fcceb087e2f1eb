/* Every URDF in ../shared/models: the files urdfdom accepts load with the link, joint and DoF
 * counts and total mass read off the XML (counted by hand and with a separate Python count over
 * the XML; "joints" are the joints of the tree); the files urdfdom rejects fail with a message
 * naming the file and the problem. ASan's leak checker runs over both kinds. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urdf/urdf.h"

typedef struct {
  const char* file;  /* relative to KNEAD_SHARED_MODELS */
  int links, joints, nv, dofs;
  double mass;       /* sum of <inertial><mass> */
  int couplers, missing_collision, missing_visual;
} corpus_row;

static const corpus_row rows[] = {
    {"bullet3/data/cartpole.urdf", 3, 2, 2, 2, 11, 0, 0, 0},
    {"bullet3/data/cube_small.urdf", 1, 0, 0, 0, 0.1, 0, 0, 0},
    {"bullet3/data/kuka_iiwa/model.urdf", 8, 7, 7, 7, 17.5, 0, 0, 0},
    {"bullet3/data/pr2_gripper.urdf", 5, 4, 2, 2, 0.9, 0, 0, 0},
    {"bullet3/data/table/table.urdf", 1, 0, 0, 0, 0, 0, 0, 0},
    {"bullet3/data/test_joints_MB.urdf", 3, 2, 2, 2, 3, 0, 0, 0},
    {"bullet3/data/tray/traybox.urdf", 1, 0, 0, 0, 0, 0, 0, 0},
    {"drake/examples/acrobot/Acrobot_no_collision.urdf", 3, 2, 2, 2, 2, 0, 0, 0},
    {"drake/examples/kuka_iiwa_arm/models/objects/block_for_pick_and_place.urdf", 1, 0, 0, 0, 0.1, 0, 0, 0},
    {"drake/examples/kuka_iiwa_arm/models/objects/folding_table.urdf", 2, 1, 0, 0, 1, 0, 0, 0},
    {"drake/examples/kuka_iiwa_arm/models/objects/open_top_box.urdf", 1, 0, 0, 0, 0.122, 0, 0, 0},
    {"drake/examples/kuka_iiwa_arm/models/objects/simple_cuboid.urdf", 1, 0, 0, 0, 0.068, 0, 0, 0},
    {"drake/examples/kuka_iiwa_arm/models/objects/simple_cylinder.urdf", 1, 0, 0, 0, 0.088, 0, 0, 0},
    {"drake/examples/pendulum/Pendulum.urdf", 4, 3, 1, 1, 2.01, 0, 0, 0},
    {"drake/multibody/benchmarks/acrobot/double_pendulum.urdf", 3, 2, 2, 2, 3, 0, 0, 0},
    {"drake/multibody/benchmarks/free_body/uniform_solid_cylinder.urdf", 1, 0, 0, 0, 1, 0, 0, 0},
    {"drake/multibody/models/box.urdf", 1, 0, 0, 0, 1, 0, 0, 0},
    {"drake/multibody/parsing/test/urdf_parser_test/two_unnamed_boxes.urdf", 1, 0, 0, 0, 0, 0, 0, 0},
    {"drake/multibody/parsing/test/urdf_parser_test/zero_dof_robot.urdf", 1, 0, 0, 0, 1, 0, 0, 0},
    {"drake_models/iiwa_description/urdf/iiwa14_no_collision.urdf", 11, 10, 7, 7, 30.61, 0, 0, 15},
    {"drake_models/iiwa_description/urdf/iiwa14_polytope_collision.urdf", 11, 10, 7, 7, 30.61, 0, 0, 15},
    {"drake_models/iiwa_description/urdf/iiwa14_primitive_collision.urdf", 11, 10, 7, 7, 30.61, 0, 0, 15},
    {"drake_models/iiwa_description/urdf/iiwa14_spheres_collision.urdf", 11, 10, 7, 7, 30.61, 0, 0, 15},
    {"drake_models/jaco_description/urdf/j2s7s300_sphere_collision.urdf", 16, 15, 10, 10, 5.29424, 0, 0, 21},
    {"drake_models/ur_description/urdf/ur3e_cylinders_collision.urdf", 10, 9, 6, 6, 10.63, 0, 0, 7},
    {"example-robot-data/robots/double_pendulum_description/urdf/double_pendulum_simple.urdf", 4, 3, 2, 2, 0.6, 0, 0, 0},
    {"robotiq/robotiq_2f_c2_gripper_visualization/urdf/robotiq_c2_model.urdf", 10, 9, 6, 1, 0, 5, 10, 10},
    {"ros-kdl_parser/kdl_parser/test/testInertiaRPYmodel1.urdf", 3, 2, 1, 1, 101, 0, 0, 0},
    {"ros-robot_state_publisher/test/mimic_joint.urdf", 3, 2, 0, 0, 0, 0, 0, 0},
    {"ros-urdf/urdf/test/no_visual.urdf", 1, 0, 0, 0, 1, 0, 0, 0},
    {"ros-urdf/urdf/test/one_link.urdf", 1, 0, 0, 0, 1, 0, 0, 0},
    {"ros-urdf/urdf/test/pr2_desc.urdf", 80, 79, 40, 34, 256.494023, 6, 37, 45},
    {"ros-urdf/urdf/test/pr2_desc_no_joint.urdf", 1, 0, 0, 0, 3.473082, 0, 0, 0},
    {"ros-urdf/urdf/test/singularity.urdf", 3, 2, 0, 0, 3, 0, 0, 0},
    {"ros-urdf/urdf/test/test_robot.urdf", 17, 16, 8, 8, 57.25, 0, 4, 4},
    {"ros-urdf/urdf/test/two_links_one_joint.urdf", 2, 1, 0, 0, 2, 0, 0, 0},
    {"urdfdom/urdf_parser/test/basic.urdf", 2, 1, 6, 6, 0, 0, 0, 0},
    {"urdfdom/urdf_parser/test/extracted/urdf_unit_test__parse_color_doubles.urdf", 2, 1, 0, 0, 8.4396, 0, 0, 0},
    {"urdfdom/urdf_parser/test/extracted/urdf_unit_test__parse_joint_doubles.urdf", 2, 1, 0, 0, 0, 0, 0, 0},
    {"urdfdom/urdf_parser/test/extracted/urdf_unit_test__parse_link_doubles.urdf", 2, 1, 0, 0, 8.4396, 0, 0, 0},
    {"urdfdom/urdf_parser/test/extracted/urdf_version_test__test_version_not_specified.urdf", 1, 0, 0, 0, 0, 0, 0, 0},
    {"urdfdom/urdf_parser/test/extracted/urdf_version_test__test_version_one_float.urdf", 1, 0, 0, 0, 0, 0, 0, 0},
};

typedef struct {
  const char* file;
  const char* problem; /* a piece of the message that says what is wrong */
} corpus_failure;

static const corpus_failure failures[] = {
    {"bullet3/data/prismatic.urdf", "joint xml is not initialized correctly"},
    {"drake/multibody/parsing/test/urdf_parser_test/joint_parsing_test_tag_mismatch_1.urdf", "Two root links found"},
    {"ros-urdf/urdf/test/fail_pr2_desc_bracket.urdf", ":9: joint 'fl_caster_rotation_joint': <origin rpy=\"0 0 1 }\">: '}' is not a finite number"},
    {"ros-urdf/urdf/test/fail_pr2_desc_double_joint.urdf", "is not unique"},
    {"ros-urdf/urdf/test/fail_pr2_desc_loop.urdf", "loop"},
    {"ros-urdf/urdf/test/fail_pr2_desc_two_trees.urdf", "parent link [base_link]"},
    {"ros-urdf/urdf/test/fail_three_links_one_joint.urdf", "Error reading end tag"},
    {"urdfdom/urdf_parser/test/extracted/urdf_version_test__test_version_wrong_type.urdf", "version attribute"},
};

static kn_urdf_options corpus_options(void) {
  static const char* paths[] = {KNEAD_SHARED_MODELS}; /* SOURCES.md: package:// resolves here */
  kn_urdf_options o = kn_urdf_options_default();
  o.package_paths = paths;
  o.npackage_paths = 1;
  return o;
}

static kn_robot* load(const char* rel, kn_error* err, kn_status* st) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", KNEAD_SHARED_MODELS, rel);
  kn_urdf_options o = corpus_options();
  kn_robot* r = NULL;
  *st = kn_urdf_load(path, &o, &r, err);
  return r;
}

static int has_warning(const kn_robot* r, const char* piece) {
  for (int i = 0; i < r->warnings.count; i++)
    if (strstr(r->warnings.items[i], piece)) return 1;
  return 0;
}

Test(urdf_corpus, accepted_files_load_with_their_counts) {
  unsetenv("KNEAD_PACKAGE_PATH");
  unsetenv("ROS_PACKAGE_PATH");
  int n = (int)(sizeof rows / sizeof rows[0]);
  cr_assert_eq(n, 42, "42 of the 50 corpus URDFs are accepted by urdfdom");
  for (int i = 0; i < n; i++) {
    const corpus_row* row = &rows[i];
    kn_error err = {0};
    kn_status st;
    kn_robot* r = load(row->file, &err, &st);
    cr_assert_eq(st, KN_OK, "%s: %s", row->file, err.msg);
    cr_expect_eq(r->model->nbody, row->links, "%s: links %d, expected %d", row->file, r->model->nbody, row->links);
    cr_expect_eq(r->model->nbody - 1, row->joints, "%s: joints", row->file);
    cr_expect_eq(r->model->nv, row->nv, "%s: nv %d, expected %d", row->file, r->model->nv, row->nv);
    cr_expect_eq(kn_robot_dofs(r), row->dofs, "%s: dofs %d, expected %d", row->file, kn_robot_dofs(r), row->dofs);
    /* masses are sums of decimal numbers from the file: 1e-9 relative */
    double m = kn_mb_total_mass(r->model);
    cr_expect(fabs(m - row->mass) <= 1e-9 * (1 + row->mass), "%s: mass %.12g, expected %.12g", row->file, m,
              row->mass);
    cr_expect_eq(r->model->ncoupler, row->couplers, "%s: couplers", row->file);
    cr_expect_eq(r->missing_collision_meshes, row->missing_collision, "%s: missing collision meshes", row->file);
    cr_expect_eq(r->missing_visual_meshes, row->missing_visual, "%s: missing visual meshes", row->file);
    kn_error e2 = {0};
    kn_status sim = kn_robot_check_simulatable(r, &e2);
    /* or refused for a link a joint moves with no mass at or below it (Drake's rule; basic.urdf's floating
     * massless link2, PR2's finger-tip frames, Robotiq's visualization knuckles) */
    int massless = sim == KN_ERR_INVALID && strstr(e2.msg, "nor any link below it has mass") != NULL;
    cr_expect_eq(sim == KN_OK || massless, row->missing_collision == 0,
                 "%s: simulatable iff every collision mesh resolved (%s)", row->file, e2.msg);
    kn_robot_free(r);
  }
}

Test(urdf_corpus, rejected_files_name_the_file_and_the_problem) {
  for (size_t i = 0; i < sizeof failures / sizeof failures[0]; i++) {
    kn_error err = {0};
    kn_status st;
    kn_robot* r = load(failures[i].file, &err, &st);
    cr_expect_eq(st, KN_ERR_PARSE, "%s: status %s", failures[i].file, kn_status_name(st));
    cr_expect_null(r);
    const char* base = strrchr(failures[i].file, '/') + 1;
    cr_expect(strstr(err.msg, base) != NULL, "message names the file: %s", err.msg);
    cr_expect(strstr(err.msg, failures[i].problem) != NULL, "message says '%s': %s", failures[i].problem, err.msg);
  }
}

Test(urdf_corpus, package_meshes_resolve_through_the_search_path) {
  kn_error err = {0};
  kn_status st;
  /* the polytope collision mesh of link 7 is shipped: it must resolve to the file on disk */
  kn_robot* r = load("drake_models/iiwa_description/urdf/iiwa14_polytope_collision.urdf", &err, &st);
  cr_assert_eq(st, KN_OK, "%s", err.msg);
  int found = 0;
  for (int i = 0; i < r->ngeom; i++) {
    const kn_shape* s = &r->geoms[i].shape;
    if (r->geoms[i].role != KN_GEOM_COLLISION || s->type != KN_SHAPE_MESH) continue;
    found++;
    cr_expect_str_eq(s->mesh_path, KNEAD_SHARED_MODELS
                     "/drake_models/iiwa_description/meshes/iiwa14/collision/link_7_polytope.obj");
    cr_expect_str_eq(r->model->bodies[r->geoms[i].body].name, "iiwa_link_7");
  }
  cr_expect_eq(found, 1);
  cr_expect_eq(kn_robot_check_simulatable(r, &err), KN_OK, "%s", err.msg);
  cr_expect(has_warning(r, "<transmission>"));
  cr_expect(has_warning(r, "<gazebo>"));
  kn_robot_free(r);
}

Test(urdf_corpus, bullet_kuka_relative_meshes_resolve) {
  kn_error err = {0};
  kn_status st;
  kn_robot* r = load("bullet3/data/kuka_iiwa/model.urdf", &err, &st);
  cr_assert_eq(st, KN_OK, "%s", err.msg);
  int meshes = 0;
  for (int i = 0; i < r->ngeom; i++) {
    const kn_shape* s = &r->geoms[i].shape;
    if (s->type != KN_SHAPE_MESH) continue;
    meshes++;
    cr_expect_not_null(s->mesh_path, "%s", s->mesh_uri);
    cr_expect(strstr(s->mesh_path, "/bullet3/data/kuka_iiwa/meshes/") != NULL, "%s", s->mesh_path);
  }
  cr_expect_eq(meshes, 16, "8 links with a visual and a collision mesh each");
  kn_robot_free(r);
}

Test(urdf_corpus, robotiq_mimic_joints_become_couplers) {
  kn_error err = {0};
  kn_status st;
  kn_robot* r = load("robotiq/robotiq_2f_c2_gripper_visualization/urdf/robotiq_c2_model.urdf", &err, &st);
  cr_assert_eq(st, KN_OK, "%s", err.msg);
  /* 6 revolute joints, 5 of them mimic robotiq_85_left_knuckle_joint: one DoF */
  cr_expect_eq(r->model->ncoupler, 5);
  int master = kn_mb_find_joint(r->model, "robotiq_85_left_knuckle_joint");
  cr_assert_geq(master, 0);
  for (int c = 0; c < r->model->ncoupler; c++) cr_expect_eq(r->model->couplers[c].master, master);
  /* collision meshes are not shipped: load warns, simulation refuses naming the mesh */
  cr_expect_eq(kn_robot_check_simulatable(r, &err), KN_ERR_IO);
  cr_expect(strstr(err.msg, "robotiq_c2_model.urdf") && strstr(err.msg, "collision") && strstr(err.msg, ".dae"), "%s",
            err.msg);
  kn_robot_free(r);
}

Test(urdf_corpus, inertia_repairs_and_dropped_joints_are_reported) {
  kn_error err = {0};
  kn_status st;
  kn_robot* r = load("ros-urdf/urdf/test/pr2_desc.urdf", &err, &st);
  cr_assert_eq(st, KN_OK, "%s", err.msg);
  cr_expect(has_warning(r, "link 'sensor_mount_link': inertia principal moments"));
  cr_expect(has_warning(r, "30 <transmission> elements ignored"));
  cr_expect(has_warning(r, "99 <gazebo> elements ignored"));
  kn_robot_free(r);
  r = load("urdfdom/urdf_parser/test/extracted/urdf_unit_test__parse_joint_doubles.urdf", &err, &st);
  cr_assert_eq(st, KN_OK, "%s", err.msg);
  cr_expect(has_warning(r, "joint 'j1' ignored"), "urdfdom accepts a link with two parent joints; knead says so");
  kn_robot_free(r);
}
