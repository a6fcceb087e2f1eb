/* tools/: every input checked (issue 17, inputs). Each test runs the knead command on a bad input
 * as a user would and asserts the exact message on stderr and the exit status (1: failure). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../support/tmpdir.h"

static void make_tmpdir(void) { tmpdir_make("test_inputs"); }

TestSuite(inputs, .init = make_tmpdir, .fini = tmpdir_remove);




// the last line of stderr, without its newline (static buffer)
static const char* last_err_line(void) {
  static char line[4096];
  const char* s = tmp_text("err.txt");
  size_t n = strlen(s);
  while (n > 0 && s[n - 1] == '\n') n--;
  size_t b = n;
  while (b > 0 && s[b - 1] != '\n') b--;
  snprintf(line, sizeof line, "%.*s", (int)(n - b), s + b);
  return line;
}

static void expect_failure(const char* args, const char* message) {
  int rc = knead_run(args);
  cr_expect_eq(rc, 1, "knead %s: exit status %d, expected 1 (stderr: %s)", args, rc, tmp_text("err.txt"));
  cr_expect_str_eq(last_err_line(), message);
}

#define BOX_SCENE(friction) \
  "time_step: 0.01\nduration: 0.02\ncontact: {backend: none}\nobjects:\n" \
  "  - {name: box, shape: {box: [0.1, 0.1, 0.1]}, friction: " friction "}\n"

//---- numbers parse whole ----

Test(inputs, a_number_with_a_letter_is_rejected_with_file_line_and_key) {
  write_file("o.yaml", BOX_SCENE("0.O5"));
  expect_failure("run o.yaml", "knead: o.yaml:5: objects[0].friction: '0.O5' is not a number (the whole value must "
                               "be one)");
  write_file("one.yaml", BOX_SCENE("1.O"));
  expect_failure("run one.yaml", "knead: one.yaml:5: objects[0].friction: '1.O' is not a number (the whole value "
                                 "must be one)");
  write_file("g.yaml", "duration: 0.01\ngravity: [0, 0,\n  -9.8l]\n");
  expect_failure("run g.yaml", "knead: g.yaml:3: gravity[2]: '-9.8l' is not a number (the whole value must be one)");
  write_file("i.yaml", "duration: 0.01\ncontact:\n  solver: {max_iterations: 5x}\n");
  expect_failure("run i.yaml", "knead: i.yaml:3: contact.solver.max_iterations: '5x' is not a whole number (the "
                               "whole value must be one)");
  /* a good number still reads */
  write_file("ok.yaml", BOX_SCENE("0.5e0"));
  cr_expect_eq(knead_run("run ok.yaml --out ok"), 0, "%s", tmp_text("err.txt"));
}

//---- the scene name stays inside the output folder ----

Test(inputs, a_scene_name_that_is_a_path_is_rejected) {
  write_file("esc.yaml", "name: ../../escape\nduration: 0.01\n");
  expect_failure("run esc.yaml", "knead: esc.yaml:1: name: '../../escape' is not a plain file name (outputs go to the "
                                 "folder out/<name>): no '/', '\\', control characters, '.' or '..'");
  write_file("dots.yaml", "name: ..\nduration: 0.01\n");
  expect_failure("run dots.yaml", "knead: dots.yaml:1: name: '..' is not a plain file name (outputs go to the folder "
                                  "out/<name>): no '/', '\\', control characters, '.' or '..'");
  struct stat st;
  cr_expect_neq(stat("/tmp/escape", &st), 0, "knead wrote outside its output folder");
}

//---- a diverged step fails and keeps the state ----

Test(inputs, a_step_to_a_non_finite_state_fails_naming_the_body) {
  write_file("ts.yaml", "time_step: 1e300\nduration: 2e300\nobjects:\n"
                        "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
                        "  - {name: box, shape: {box: [0.1, 0.1, 0.1]}, pose: {xyz: [0, 0, 1]}}\n");
  int rc = knead_run("run ts.yaml --out o");
  cr_expect_eq(rc, 1);
  const char* err = tmp_text("err.txt");
  cr_expect(strstr(err, "knead: ts.yaml: step 1 (t = 0 s): sap backend: object 'box' body 'box': coordinate q[2] = "
                        "-inf after the step (must be finite, |q| <= 1e+06 m or rad); the step diverged (time_step "
                        "too large, or a stiffness or mass beyond what double precision resolves?)\n"),
            "%s", err);
  cr_expect_str_eq(last_err_line(), "knead: ts: failed after 0 of 2 steps; partial outputs in o/");
  cr_expect(strstr(tmp_text("o/summary.json"), "\"status\": \"failed\""));
  /* the state stayed at t = 0: one row, the initial pose */
  cr_expect_str_eq(tmp_text("o/trajectory.csv"), "t,box/x,box/y,box/z,box/qw,box/qx,box/qy,box/qz\n0,0,0,1,1,0,0,0\n");
}

//---- files that are not files, or too large for what they claim ----

Test(inputs, an_output_folder_error_is_the_only_error) {
  write_file("f", "a file, not a folder\n");
  write_file("od.yaml", "duration: 0.01\noutput: {dir: f/sub}\n");
  expect_failure("run od.yaml", "knead: f/sub: cannot create folder f/sub: Not a directory");
  cr_expect_null(strstr(tmp_text("err.txt"), "failed after"));
}

Test(inputs, directories_and_devices_are_not_read) {
  char path[512];
  snprintf(path, sizeof path, "%s/adir", tmpdir);
  cr_assert_eq(mkdir(path, 0777), 0);
  expect_failure("run adir", "knead: adir: is a directory, not a scene file");
  expect_failure("info adir", "knead: info: adir: is a directory, not a URDF file");
  expect_failure("run /dev/zero", "knead: /dev/zero: not a regular file (a device, FIFO or socket); a scene must be "
                                  "a file");
  expect_failure("info /dev/zero", "knead: info: /dev/zero: not a regular file (a device, FIFO or socket); a URDF "
                                   "must be a file");
  snprintf(path, sizeof path, "%s/zero.msh", tmpdir);
  cr_assert_eq(symlink("/dev/zero", path), 0);
  write_file("msh.yaml", "duration: 0.01\ndeformables:\n  - {name: d, shape: {mesh: zero.msh}}\n");
  expect_failure("run msh.yaml", "knead: msh.yaml:3: deformables[0].shape.mesh: deformable 'd': ./zero.msh: not a "
                                 "regular file (a device, FIFO or socket); a mesh must be a file");
}

Test(inputs, a_vtk_count_beyond_the_file_is_named) {
  write_file("big.vtk", "# vtk DataFile Version 2.0\nx\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 4 double\n"
                        "0 0 0 1 0 0 0 1 0 0 0 1\nCELLS 3429496711 2\n5 0 1 2 3\nCELL_TYPES 1\n10\n");
  write_file("vtk.yaml", "duration: 0.01\ndeformables:\n  - {name: d, shape: {mesh: big.vtk}}\n");
  expect_failure("run vtk.yaml", "knead: vtk.yaml:3: deformables[0].shape.mesh: deformable 'd': ./big.vtk:7: "
                                 "3429496711 cells declared, more than the 27 bytes left in the file can hold");
}

//---- URDF: urdfdom's reasons, numbers, limits, mimic cycles, massless moving links ----

#define INERTIAL "<inertial><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/></inertial>"
#define TWO_LINKS "<robot name=\"r\">\n<link name=\"a\">" INERTIAL "</link>\n<link name=\"b\">" INERTIAL "</link>\n"

Test(inputs, urdfdom_reasons_are_kept) {
  write_file("nolimit.urdf", TWO_LINKS "<joint name=\"j1\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>"
                                       "<axis xyz=\"0 0 1\"/></joint>\n</robot>\n");
  expect_failure("info nolimit.urdf", "knead: info: nolimit.urdf: urdfdom rejected the file: Joint [j1] is of type "
                                      "REVOLUTE but it does not specify limits; joint xml is not initialized "
                                      "correctly");
}

Test(inputs, urdf_numbers_must_be_finite_and_limits_ordered) {
  write_file("axis.urdf", TWO_LINKS "<joint name=\"j1\" type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/>\n"
                                    "<axis xyz=\"nan 0 0\"/></joint>\n</robot>\n");
  expect_failure("info axis.urdf", "knead: info: axis.urdf:5: joint 'j1': <axis xyz=\"nan 0 0\">: 'nan' is not a "
                                   "finite number");
  write_file("mass.urdf", "<robot name=\"r\">\n<link name=\"a\">" INERTIAL "</link>\n<link name=\"b\"><inertial>\n"
                          "<mass value=\"nan\"/></inertial></link>\n<joint name=\"j1\" type=\"continuous\"><parent "
                          "link=\"a\"/><child link=\"b\"/></joint>\n</robot>\n");
  expect_failure("info mass.urdf", "knead: info: mass.urdf:4: link 'b': <mass value=\"nan\">: 'nan' is not a finite "
                                   "number");
  write_file("typo.urdf", TWO_LINKS "<joint name=\"j1\" type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/>"
                                    "<origin xyz=\"0 0 0.O5\"/></joint>\n</robot>\n");
  expect_failure("info typo.urdf", "knead: info: typo.urdf:4: joint 'j1': <origin xyz=\"0 0 0.O5\">: '0.O5' is not a "
                                   "finite number");
  write_file("limits.urdf", TWO_LINKS "<joint name=\"j1\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>\n"
                                      "<limit lower=\"1\" upper=\"-1\" effort=\"1\" velocity=\"1\"/></joint>\n"
                                      "</robot>\n");
  expect_failure("info limits.urdf", "knead: info: limits.urdf:5: joint 'j1': <limit lower=\"1\" upper=\"-1\">: "
                                     "lower > upper (write the smaller first)");
}

Test(inputs, joints_that_mimic_each_other_are_rejected) {
  write_file("mimic.urdf", TWO_LINKS "<link name=\"c\">" INERTIAL "</link>\n"
                                     "<joint name=\"j1\" type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/>"
                                     "<mimic joint=\"j2\"/></joint>\n"
                                     "<joint name=\"j2\" type=\"continuous\"><parent link=\"b\"/><child link=\"c\"/>"
                                     "<mimic joint=\"j1\"/></joint>\n</robot>\n");
  expect_failure("info mimic.urdf", "knead: info: mimic.urdf: joints mimic each other in a cycle ('j1' -> 'j2' -> "
                                    "'j1'): no joint of the cycle is free; a <mimic> chain must end at a joint that "
                                    "mimics none");
}

Test(inputs, a_massless_link_on_a_joint_cannot_be_simulated) {
  write_file("massless.urdf", "<robot name=\"r\">\n<link name=\"a\">" INERTIAL "</link>\n<link name=\"b\"/>\n"
                              "<joint name=\"j1\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>"
                              "<limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>\n</robot>\n");
  /* it loads, as in Drake (kinematics need no mass), and says at once that it cannot be simulated */
  cr_expect_eq(knead_run("info massless.urdf"), 0, "%s", tmp_text("err.txt"));
  cr_expect(strstr(tmp_text("out.txt"), "  cannot be simulated: massless.urdf: link 'b' is moved by revolute joint 'j1' "
                                     "but neither it nor any link below it has mass (no <inertial>, or mass 0): the "
                                     "mass matrix would be singular; give it an <inertial> with mass > 0, or make the "
                                     "joint fixed\n"),
            "%s", tmp_text("out.txt"));
  write_file("m.yaml", "duration: 0.01\nrobots:\n  - {name: arm, urdf: massless.urdf}\n");
  expect_failure("run m.yaml", "knead: m.yaml:3: robots[0].urdf: robot 'arm' cannot be simulated: ./massless.urdf: "
                               "link 'b' is moved by revolute joint 'j1' but neither it nor any link below it has "
                               "mass (no <inertial>, or mass 0): the mass matrix would be singular; give it an "
                               "<inertial> with mass > 0, or make the joint fixed");
  /* a massless link that carries a massive one is fine (it only gets the usual warning) */
  write_file("carrier.urdf", "<robot name=\"r\">\n<link name=\"a\">" INERTIAL "</link>\n<link name=\"b\"/>\n"
                             "<link name=\"c\">" INERTIAL "</link>\n"
                             "<joint name=\"j1\" type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/></joint>\n"
                             "<joint name=\"j2\" type=\"fixed\"><parent link=\"b\"/><child link=\"c\"/></joint>\n"
                             "</robot>\n");
  write_file("c.yaml", "duration: 0.01\ncontact: {backend: none}\nrobots:\n  - {name: arm, urdf: carrier.urdf}\n");
  cr_expect_eq(knead_run("run c.yaml --out c"), 0, "%s", tmp_text("err.txt"));
}

//---- material parameters within what double precision resolves ----

Test(inputs, material_moduli_and_densities_are_bounded) {
  write_file("fem.yaml", "duration: 0.01\ndeformables:\n"
                         "  - {name: cube, shape: {box: [0.1, 0.1, 0.1]}, resolution: 0.05,\n"
                         "     material: {youngs_modulus: 1e300}}\n");
  expect_failure("run fem.yaml", "knead: fem.yaml:4: deformables[0].material: cube: youngs_modulus = 1e+300 Pa is "
                                 "beyond what double precision resolves; expected <= 1e+15 Pa (the stiffness term of "
                                 "the step's Newton matrix would swamp the mass term: gravity is lost in round-off "
                                 "and the body freezes)");
  write_file("rho.yaml", "duration: 0.01\ndeformables:\n"
                         "  - {name: cube, shape: {box: [0.1, 0.1, 0.1]}, resolution: 0.05,\n"
                         "     material: {density: 1e9}}\n");
  expect_failure("run rho.yaml", "knead: rho.yaml:4: deformables[0].material: cube: density = 1e+09 kg/m^3 is beyond "
                                 "what double precision resolves against the stiffness; expected 0.001 to 1e+06 "
                                 "kg/m^3");
  write_file("mpm.yaml", "duration: 0.01\ndeformables:\n"
                         "  - {name: dough, model: mpm, shape: {box: [0.1, 0.1, 0.1]}, material: {youngs_modulus: "
                         "1e30}}\n");
  expect_failure("run mpm.yaml", "knead: mpm.yaml:3: deformables[0].material: dough: youngs_modulus 1e+30 Pa is "
                                 "beyond what double precision resolves; expected <= 1e+15 Pa (the stiffness term of "
                                 "the step's Newton matrix would swamp the mass term)");
  write_file("eos.yaml", "duration: 0.01\ndeformables:\n"
                         "  - {name: water, model: mpm, shape: {box: [0.1, 0.1, 0.1]},\n"
                         "     material: {type: eos_fluid, bulk_modulus: 1e16}}\n");
  expect_failure("run eos.yaml", "knead: eos.yaml:4: deformables[0].material: water: bulk_modulus 1e+16 Pa is beyond "
                                 "what double precision resolves; expected <= 1e+15 Pa (the stiffness term of the "
                                 "step's Newton matrix would swamp the mass term)");
}

//---- free rigid meshes: closed and wound outward ----

#define CUBE_VERTICES "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
#define CUBE_SIDES "f 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n"

static void mesh_scene(const char* scene, const char* obj) {
  char text[512];
  snprintf(text, sizeof text, "duration: 0.01\nobjects:\n  - {name: m, shape: {mesh: %s, scale: [0.1, 0.1, 0.1]}, "
           "pose: {xyz: [0, 0, 1]}}\n", obj);
  write_file(scene, text);
}

Test(inputs, a_free_rigid_mesh_must_be_closed_and_outward) {
  write_file("cube.obj", CUBE_VERTICES "f 1 3 2\nf 1 4 3\nf 5 6 7\nf 5 7 8\n" CUBE_SIDES);
  mesh_scene("cube.yaml", "cube.obj");
  cr_expect_eq(knead_run("run cube.yaml --out o"), 0, "%s", tmp_text("err.txt"));
  write_file("open.obj", CUBE_VERTICES "f 5 6 7\nf 5 7 8\n" CUBE_SIDES); /* no bottom */
  mesh_scene("open.yaml", "open.obj");
  expect_failure("run open.yaml", "knead: open.yaml:3: objects[0].shape: object 'm': mesh 'open.obj': the surface is "
                                  "not closed: edge (0, 0, 0)-(0, 0.1, 0) (welded vertices 0-2) is in 1 triangle(s), "
                                  "expected exactly 2");
  write_file("flip.obj", CUBE_VERTICES "f 1 3 2\nf 1 4 3\nf 5 7 6\nf 5 7 8\n" CUBE_SIDES); /* one top face inward */
  mesh_scene("flip.yaml", "flip.obj");
  expect_failure("run flip.yaml", "knead: flip.yaml:3: objects[0].shape: object 'm': mesh 'flip.obj': the faces are "
                                  "not consistently oriented: edge (0, 0, 0.1)-(0.1, 0, 0.1) runs the same way in "
                                  "triangles 0 and 8 (one of them is wound inward)");
  write_file("inward.obj", CUBE_VERTICES "f 1 2 3\nf 1 3 4\nf 5 7 6\nf 5 8 7\nf 1 6 2\nf 1 5 6\nf 2 7 3\nf 2 6 7\n"
                           "f 3 8 4\nf 3 7 8\nf 4 5 1\nf 4 8 5\n"); /* every face inward */
  mesh_scene("inward.yaml", "inward.obj");
  expect_failure("run inward.yaml", "knead: inward.yaml:3: objects[0].shape: object 'm': mesh 'inward.obj': the faces "
                                    "are wound inward (enclosed volume -0.001 m^3); expected outward, "
                                    "counter-clockwise seen from outside");
}

//---- YAML aliases: no exponential expansion, no cycles ----

Test(inputs, an_alias_bomb_is_refused_before_it_expands) {
  char text[2048];
  size_t k = (size_t)snprintf(text, sizeof text, "duration: 0.01\nl0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n");
  for (int i = 1; i < 9; i++)
    k += (size_t)snprintf(text + k, sizeof text - k, "l%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, "
                          "*a%d, *a%d]\n", i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
  write_file("bomb.yaml", text);
  expect_failure("run bomb.yaml", "knead: bomb.yaml: the document expands to more than 1000000 values through its "
                                  "aliases");
  write_file("cycle.yaml", "duration: 0.01\ngravity: &g [0, 0, *g]\n");
  expect_failure("run cycle.yaml", "knead: cycle.yaml: an alias refers to a node that contains it (a cycle of "
                                   "anchors)");
}

Test(inputs, contact_friction_and_stiffness_are_bounded) {
  write_file("mu.yaml", BOX_SCENE("1e300"));
  expect_failure("run mu.yaml", "knead: mu.yaml:5: objects[0].friction: 1e+300 is beyond what the contact solver can "
                                "use; expected <= 1000 (a pair's friction is the harmonic mean 2ab/(a+b), which "
                                "overflows, and SAP's cone squares it)");
  write_file("k.yaml", "duration: 0.01\nobjects:\n  - {name: box, shape: {sphere: 0.1},\n     stiffness: 1e-300}\n");
  expect_failure("run k.yaml", "knead: k.yaml:4: objects[0].stiffness: 1e-300 N/m is below what the contact solver "
                               "can use; expected >= 1 N/m (a pair's stiffness is k_a k_b / (k_a + k_b), which "
                               "underflows to 0)");
}
