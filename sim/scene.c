/* Scenes: YAML => kn_scene_doc through a libcyaml schema, then defaults and checks that need no
 * robot model. libcyaml's messages ("Unexpected key: foo" plus a backtrace) are captured and
 * rewritten as "file:line: key.path: what was expected"; the line comes from the libyaml node
 * tree (scene_lines.c), because libcyaml reports an unknown key at its enclosing mapping. */
#include <ctype.h>
#include <cyaml/cyaml.h>
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/checks_internal.h"
#include "sim/sim_internal.h"

//---- schema ----

static const cyaml_schema_value_t schema_double = {CYAML_VALUE_FLOAT(CYAML_FLAG_STRICT, double)};
static const cyaml_schema_value_t schema_string = {
    CYAML_VALUE_STRING(CYAML_FLAG_POINTER, char, 0, CYAML_UNLIMITED)};

/* libcyaml reads any unrecognised word as true; an enum makes "floating: maybe" an error */
static const cyaml_strval_t bool_strings[] = {{"false", 0}, {"true", 1}, {"no", 0}, {"yes", 1}, {"off", 0}, {"on", 1}};
#define BOOL_FLAGS (CYAML_FLAG_STRICT | CYAML_FLAG_CASE_INSENSITIVE)

static const cyaml_schema_field_t pose_fields[] = {
    CYAML_FIELD_SEQUENCE_FIXED("xyz", CYAML_FLAG_OPTIONAL | CYAML_FLAG_FLOW, kn_scene_pose, xyz, &schema_double, 3),
    CYAML_FIELD_SEQUENCE_FIXED("rpy", CYAML_FLAG_OPTIONAL | CYAML_FLAG_FLOW, kn_scene_pose, rpy, &schema_double, 3),
    CYAML_FIELD_END};

static const cyaml_schema_field_t knot_fields[] = {
    CYAML_FIELD_FLOAT("t", CYAML_FLAG_STRICT, kn_scene_knot, t),
    CYAML_FIELD_SEQUENCE_COUNT("q", CYAML_FLAG_POINTER, kn_scene_knot, q, nq, &schema_double, 1, CYAML_UNLIMITED),
    CYAML_FIELD_END};
static const cyaml_schema_value_t schema_knot = {CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, kn_scene_knot, knot_fields)};

static const cyaml_strval_t interp_strings[] = {{"linear", KN_TRAJ_LINEAR}, {"cubic", KN_TRAJ_CUBIC}};
static const cyaml_schema_field_t trajectory_fields[] = {
    CYAML_FIELD_ENUM("interpolation", CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_trajectory, interpolation,
                     interp_strings, 2),
    CYAML_FIELD_SEQUENCE_COUNT("points", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_trajectory, points,
                               npoints, &schema_knot, 1, CYAML_UNLIMITED),
    CYAML_FIELD_STRING_PTR("csv", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_trajectory, csv, 1,
                           CYAML_UNLIMITED),
    CYAML_FIELD_END};

static const cyaml_schema_field_t phase_fields[] = {
    CYAML_FIELD_STRING_PTR("name", CYAML_FLAG_POINTER, kn_scene_phase, name, 1, CYAML_UNLIMITED),
    CYAML_FIELD_FLOAT("duration", CYAML_FLAG_STRICT, kn_scene_phase, duration),
    CYAML_FIELD_SEQUENCE_COUNT("q", CYAML_FLAG_POINTER, kn_scene_phase, q, nq, &schema_double, 1, CYAML_UNLIMITED),
    CYAML_FIELD_END};
static const cyaml_schema_value_t schema_phase = {
    CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, kn_scene_phase, phase_fields)};

static const cyaml_strval_t controller_strings[] = {{"pd", KN_CONTROLLER_PD}};
#define SEQ_OPT(key, st, member, count, entry) \
  CYAML_FIELD_SEQUENCE_COUNT(key, CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | CYAML_FLAG_FLOW, st, member, count, \
                             entry, 0, CYAML_UNLIMITED)
static const cyaml_schema_field_t controller_fields[] = {
    CYAML_FIELD_ENUM("type", CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_controller, type, controller_strings,
                     1),
    SEQ_OPT("joints", kn_scene_controller, joints, njoints, &schema_string),
    CYAML_FIELD_FLOAT_PTR("kp", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_controller, kp),
    SEQ_OPT("kp_per_joint", kn_scene_controller, kp_per_joint, nkp_per_joint, &schema_double),
    CYAML_FIELD_FLOAT_PTR("kd", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_controller, kd),
    SEQ_OPT("kd_per_joint", kn_scene_controller, kd_per_joint, nkd_per_joint, &schema_double),
    CYAML_FIELD_ENUM_PTR("gravity_compensation", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | BOOL_FLAGS,
                         kn_scene_controller, gravity_compensation, bool_strings, 6),
    SEQ_OPT("effort_limits", kn_scene_controller, effort_limits, neffort_limits, &schema_double),
    SEQ_OPT("setpoint", kn_scene_controller, setpoint, nsetpoint, &schema_double),
    CYAML_FIELD_MAPPING_PTR("trajectory", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_controller, trajectory,
                            trajectory_fields),
    SEQ_OPT("sequence", kn_scene_controller, sequence, nsequence, &schema_phase),
    CYAML_FIELD_END};

static const cyaml_schema_field_t attach_fields[] = {
    CYAML_FIELD_STRING_PTR("robot", CYAML_FLAG_POINTER, kn_scene_attach, robot, 1, CYAML_UNLIMITED),
    CYAML_FIELD_STRING_PTR("link", CYAML_FLAG_POINTER, kn_scene_attach, link, 1, CYAML_UNLIMITED),
    CYAML_FIELD_MAPPING("pose", CYAML_FLAG_OPTIONAL, kn_scene_attach, pose, pose_fields),
    CYAML_FIELD_END};

#define DBL_OPT(key, st, member) \
  CYAML_FIELD_FLOAT_PTR(key, CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, st, member)
#define FIXED_OPT(key, st, member, n) \
  CYAML_FIELD_SEQUENCE_FIXED(key, CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | CYAML_FLAG_FLOW, st, member, \
                             &schema_double, n)
static const cyaml_schema_field_t material_fields[] = {
    DBL_OPT("friction", kn_scene_material, friction), DBL_OPT("stiffness", kn_scene_material, stiffness),
    DBL_OPT("dissipation_time", kn_scene_material, dissipation_time), CYAML_FIELD_END};

static const cyaml_schema_field_t robot_fields[] = {
    CYAML_FIELD_STRING_PTR("name", CYAML_FLAG_POINTER, kn_scene_robot, name, 1, CYAML_UNLIMITED),
    CYAML_FIELD_STRING_PTR("urdf", CYAML_FLAG_POINTER, kn_scene_robot, urdf, 1, CYAML_UNLIMITED),
    CYAML_FIELD_MAPPING_PTR("base_pose", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_robot, base_pose,
                            pose_fields),
    CYAML_FIELD_ENUM("floating", CYAML_FLAG_OPTIONAL | BOOL_FLAGS, kn_scene_robot, floating, bool_strings, 6),
    SEQ_OPT("q0", kn_scene_robot, q0, nq0, &schema_double),
    CYAML_FIELD_MAPPING_PTR("attach_to", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_robot, attach_to,
                            attach_fields),
    CYAML_FIELD_MAPPING_PTR("controller", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_robot, controller,
                            controller_fields),
    CYAML_FIELD_MAPPING_PTR("contact", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_robot, contact,
                            material_fields),
    CYAML_FIELD_END};
static const cyaml_schema_value_t schema_robot = {
    CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, kn_scene_robot, robot_fields)};

static const cyaml_strval_t backend_strings[] = {{"sap", KN_BACKEND_SAP},
                                                 {"penalty", KN_BACKEND_PENALTY},
                                                 {"ipc", KN_BACKEND_IPC},
                                                 {"smooth_friction", KN_BACKEND_SMOOTH_FRICTION},
                                                 {"none", KN_BACKEND_NONE}};
static const cyaml_schema_field_t halfspace_fields[] = {
    CYAML_FIELD_SEQUENCE_FIXED("normal", CYAML_FLAG_FLOW, kn_scene_halfspace, normal, &schema_double, 3),
    CYAML_FIELD_END};
static const cyaml_schema_field_t shape_fields[] = {
    FIXED_OPT("box", kn_scene_shape, box, 3),
    DBL_OPT("sphere", kn_scene_shape, sphere),
    FIXED_OPT("cylinder", kn_scene_shape, cylinder, 2),
    FIXED_OPT("capsule", kn_scene_shape, capsule, 2),
    CYAML_FIELD_MAPPING_PTR("halfspace", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_shape, halfspace,
                            halfspace_fields),
    CYAML_FIELD_STRING_PTR("mesh", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_shape, mesh, 1,
                           CYAML_UNLIMITED),
    FIXED_OPT("scale", kn_scene_shape, scale, 3),
    CYAML_FIELD_END};
static const cyaml_schema_field_t object_fields[] = {
    CYAML_FIELD_STRING_PTR("name", CYAML_FLAG_POINTER, kn_scene_object, name, 1, CYAML_UNLIMITED),
    CYAML_FIELD_MAPPING_PTR("shape", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_object, shape,
                            shape_fields),
    CYAML_FIELD_STRING_PTR("urdf", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_object, urdf, 1,
                           CYAML_UNLIMITED),
    CYAML_FIELD_MAPPING("pose", CYAML_FLAG_OPTIONAL, kn_scene_object, pose, pose_fields),
    CYAML_FIELD_ENUM("fixed", CYAML_FLAG_OPTIONAL | BOOL_FLAGS, kn_scene_object, fixed, bool_strings, 6),
    DBL_OPT("mass", kn_scene_object, mass),
    DBL_OPT("density", kn_scene_object, density),
    DBL_OPT("friction", kn_scene_object, friction),
    DBL_OPT("stiffness", kn_scene_object, stiffness),
    DBL_OPT("dissipation_time", kn_scene_object, dissipation_time),
    FIXED_OPT("velocity", kn_scene_object, velocity, 6),
    CYAML_FIELD_END};
static const cyaml_schema_value_t schema_object = {
    CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, kn_scene_object, object_fields)};

static const cyaml_schema_value_t schema_pair = {
    CYAML_VALUE_SEQUENCE_FIXED(CYAML_FLAG_FLOW, char*, &schema_string, 2)};
static const cyaml_strval_t linear_solver_strings[] = {
    {"auto", KN_SAP_LINEAR_AUTO}, {"dense", KN_SAP_LINEAR_DENSE}, {"sparse", KN_SAP_LINEAR_SPARSE}};
static const cyaml_strval_t mpm_clique_strings[] = {
    {"auto", KN_SCENE_MPM_AUTO}, {"schur", KN_SCENE_MPM_SCHUR}, {"grid", KN_SCENE_MPM_GRID}};
static const cyaml_schema_field_t solver_fields[] = {
    CYAML_FIELD_INT_PTR("max_iterations", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_solver, max_iterations),
    DBL_OPT("rel_tolerance", kn_scene_solver, rel_tolerance),
    DBL_OPT("abs_tolerance", kn_scene_solver, abs_tolerance),
    CYAML_FIELD_ENUM("linear_solver", CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_solver, linear_solver,
                     linear_solver_strings, 3),
    CYAML_FIELD_ENUM_PTR("fem_schur", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | BOOL_FLAGS, kn_scene_solver,
                         fem_schur, bool_strings, 6),
    CYAML_FIELD_ENUM("mpm_clique", CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_solver, mpm_clique,
                     mpm_clique_strings, 3),
    CYAML_FIELD_END};
static const cyaml_schema_field_t filter_group_fields[] = {
    CYAML_FIELD_STRING_PTR("name", CYAML_FLAG_POINTER, kn_scene_filter_group, name, 1, CYAML_UNLIMITED),
    SEQ_OPT("members", kn_scene_filter_group, members, nmembers, &schema_string),
    SEQ_OPT("ignore", kn_scene_filter_group, ignore, nignore, &schema_string),
    CYAML_FIELD_END};
static const cyaml_schema_value_t schema_filter_group = {
    CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, kn_scene_filter_group, filter_group_fields)};
static const cyaml_schema_field_t weld_fields[] = {
    CYAML_FIELD_STRING_PTR("name", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_weld, name, 1, CYAML_UNLIMITED),
    CYAML_FIELD_STRING_PTR("body_a", CYAML_FLAG_POINTER, kn_scene_weld, body_a, 1, CYAML_UNLIMITED),
    CYAML_FIELD_STRING_PTR("body_b", CYAML_FLAG_POINTER, kn_scene_weld, body_b, 1, CYAML_UNLIMITED),
    CYAML_FIELD_MAPPING_PTR("pose", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_weld, pose, pose_fields),
    CYAML_FIELD_END};
static const cyaml_schema_value_t schema_weld = {CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, kn_scene_weld, weld_fields)};
static const cyaml_schema_field_t contact_fields[] = {
    CYAML_FIELD_ENUM("backend", CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_contact, backend, backend_strings,
                     5),
    DBL_OPT("margin", kn_scene_contact, margin),
    CYAML_FIELD_SEQUENCE_COUNT("exclude", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_contact, exclude,
                               nexclude, &schema_pair, 0, CYAML_UNLIMITED),
    CYAML_FIELD_SEQUENCE_COUNT("filter_groups", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_contact,
                               filter_groups, nfilter_groups, &schema_filter_group, 0, CYAML_UNLIMITED),
    CYAML_FIELD_MAPPING_PTR("solver", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_contact, solver,
                            solver_fields),
    CYAML_FIELD_END};

static const cyaml_schema_field_t fem_shape_fields[] = {
    FIXED_OPT("box", kn_scene_fem_shape, box, 3),
    DBL_OPT("sphere", kn_scene_fem_shape, sphere),
    FIXED_OPT("cylinder", kn_scene_fem_shape, cylinder, 2),
    FIXED_OPT("torus", kn_scene_fem_shape, torus, 2),
    CYAML_FIELD_STRING_PTR("mesh", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_fem_shape, mesh, 1,
                           CYAML_UNLIMITED),
    CYAML_FIELD_END};
static const cyaml_schema_field_t fem_damping_fields[] = {
    DBL_OPT("mass", kn_scene_fem_damping, mass), DBL_OPT("stiffness", kn_scene_fem_damping, stiffness),
    CYAML_FIELD_END};
static const cyaml_strval_t fem_model_strings[] = {{"linear", KN_FEM_LINEAR},
                                                   {"linear_corotated", KN_FEM_LINEAR_COROTATED},
                                                   {"corotated", KN_FEM_COROTATED},
                                                   {"neohookean", KN_FEM_NEOHOOKEAN},
                                                   {"eos_fluid", KN_SCENE_MPM_EOS_FLUID}};
static const cyaml_schema_field_t fem_material_fields[] = {
    CYAML_FIELD_ENUM("type", CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_fem_material, type, fem_model_strings,
                     5),
    DBL_OPT("youngs_modulus", kn_scene_fem_material, youngs_modulus),
    DBL_OPT("poisson_ratio", kn_scene_fem_material, poisson_ratio),
    DBL_OPT("density", kn_scene_fem_material, density),
    CYAML_FIELD_MAPPING_PTR("damping", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_fem_material, damping,
                            fem_damping_fields),
    DBL_OPT("yield_stress", kn_scene_fem_material, yield_stress),
    DBL_OPT("bulk_modulus", kn_scene_fem_material, bulk_modulus),
    DBL_OPT("gamma", kn_scene_fem_material, gamma),
    CYAML_FIELD_END};
static const cyaml_schema_field_t box_region_fields[] = {
    CYAML_FIELD_SEQUENCE_FIXED("min", CYAML_FLAG_FLOW, kn_scene_box_region, min, &schema_double, 3),
    CYAML_FIELD_SEQUENCE_FIXED("max", CYAML_FLAG_FLOW, kn_scene_box_region, max, &schema_double, 3),
    CYAML_FIELD_END};
static const cyaml_schema_value_t schema_int = {CYAML_VALUE_INT(CYAML_FLAG_DEFAULT, int)};
static const cyaml_schema_field_t fem_fixed_fields[] = {
    CYAML_FIELD_MAPPING_PTR("box", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_fem_fixed, box,
                            box_region_fields),
    SEQ_OPT("vertices", kn_scene_fem_fixed, vertices, nvertices, &schema_int),
    CYAML_FIELD_END};
static const cyaml_schema_field_t fem_attach_fields[] = {
    CYAML_FIELD_STRING_PTR("body", CYAML_FLAG_POINTER, kn_scene_fem_attach, body, 1, CYAML_UNLIMITED),
    CYAML_FIELD_MAPPING_PTR("box", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_fem_attach, box,
                            box_region_fields),
    SEQ_OPT("vertices", kn_scene_fem_attach, vertices, nvertices, &schema_int),
    CYAML_FIELD_END};
static const cyaml_schema_value_t schema_fem_attach = {
    CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, kn_scene_fem_attach, fem_attach_fields)};
static const cyaml_strval_t deformable_model_strings[] = {{"fem", KN_DEFORMABLE_FEM}, {"mpm", KN_DEFORMABLE_MPM}};
static const cyaml_schema_field_t deformable_fields[] = {
    CYAML_FIELD_STRING_PTR("name", CYAML_FLAG_POINTER, kn_scene_deformable, name, 1, CYAML_UNLIMITED),
    CYAML_FIELD_ENUM("model", CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_deformable, model,
                     deformable_model_strings, 2),
    CYAML_FIELD_MAPPING_PTR("shape", CYAML_FLAG_POINTER, kn_scene_deformable, shape, fem_shape_fields),
    DBL_OPT("resolution", kn_scene_deformable, resolution),
    CYAML_FIELD_MAPPING_PTR("material", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_deformable, material,
                            fem_material_fields),
    CYAML_FIELD_MAPPING("pose", CYAML_FLAG_OPTIONAL, kn_scene_deformable, pose, pose_fields),
    FIXED_OPT("velocity", kn_scene_deformable, velocity, 3),
    CYAML_FIELD_MAPPING_PTR("fixed", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_deformable, fixed,
                            fem_fixed_fields),
    CYAML_FIELD_SEQUENCE_COUNT("attach", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_deformable, attach,
                               nattach, &schema_fem_attach, 0, CYAML_UNLIMITED),
    DBL_OPT("friction", kn_scene_deformable, friction),
    DBL_OPT("stiffness", kn_scene_deformable, stiffness),
    DBL_OPT("dissipation_time", kn_scene_deformable, dissipation_time),
    CYAML_FIELD_INT_PTR("particles_per_cell", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_deformable,
                        particles_per_cell),
    CYAML_FIELD_MAPPING_PTR("region", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_deformable, region,
                            box_region_fields),
    DBL_OPT("particle_jitter", kn_scene_deformable, particle_jitter),
    CYAML_FIELD_STRING_PTR("grid", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_deformable, grid, 0,
                           CYAML_UNLIMITED),
    CYAML_FIELD_END};
static const cyaml_schema_value_t schema_deformable = {
    CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, kn_scene_deformable, deformable_fields)};

static const cyaml_schema_field_t output_fields[] = {
    CYAML_FIELD_STRING_PTR("dir", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_output, dir, 1,
                           CYAML_UNLIMITED),
    CYAML_FIELD_FLOAT("trajectory_rate", CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_output, trajectory_rate),
    CYAML_FIELD_ENUM("contacts", CYAML_FLAG_OPTIONAL | BOOL_FLAGS, kn_scene_output, contacts, bool_strings, 6),
    CYAML_FIELD_ENUM("solver", CYAML_FLAG_OPTIONAL | BOOL_FLAGS, kn_scene_output, solver, bool_strings, 6),
    CYAML_FIELD_ENUM("vtk", CYAML_FLAG_OPTIONAL | BOOL_FLAGS, kn_scene_output, vtk, bool_strings, 6),
    CYAML_FIELD_ENUM("plots", CYAML_FLAG_OPTIONAL | BOOL_FLAGS, kn_scene_output, plots, bool_strings, 6),
    CYAML_FIELD_ENUM("html", CYAML_FLAG_OPTIONAL | BOOL_FLAGS, kn_scene_output, html, bool_strings, 6),
    CYAML_FIELD_FLOAT_PTR("frame_rate", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_output,
                          frame_rate),
    CYAML_FIELD_END};

static const cyaml_strval_t check_type_strings[] = {
    {"height_above", KN_CHECK_HEIGHT_ABOVE},       {"height_below", KN_CHECK_HEIGHT_BELOW},
    {"distance_below", KN_CHECK_DISTANCE_BELOW},   {"grasp_held", KN_CHECK_GRASP_HELD},
    {"no_penetration", KN_CHECK_NO_PENETRATION},   {"contact_force", KN_CHECK_CONTACT_FORCE},
    {"solver_converged", KN_CHECK_SOLVER_CONVERGED}};
static const cyaml_strval_t expect_strings[] = {{"pass", 0}, {"fail", 1}};
static const cyaml_schema_field_t check_fields[] = {
    CYAML_FIELD_STRING_PTR("name", CYAML_FLAG_POINTER, kn_scene_check, name, 1, CYAML_UNLIMITED),
    CYAML_FIELD_ENUM("type", CYAML_FLAG_STRICT, kn_scene_check, type, check_type_strings, 7),
    CYAML_FIELD_STRING_PTR("body", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_check, body, 1, CYAML_UNLIMITED),
    CYAML_FIELD_STRING_PTR("link", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_check, link, 1, CYAML_UNLIMITED),
    SEQ_OPT("bodies", kn_scene_check, bodies, nbodies, &schema_string),
    DBL_OPT("value", kn_scene_check, value),
    DBL_OPT("rotation", kn_scene_check, rotation),
    DBL_OPT("min", kn_scene_check, min),
    DBL_OPT("max", kn_scene_check, max),
    DBL_OPT("after", kn_scene_check, after),
    DBL_OPT("before", kn_scene_check, before),
    CYAML_FIELD_ENUM("expect", CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_check, expect, expect_strings, 2),
    CYAML_FIELD_END};
static const cyaml_schema_value_t schema_check = {CYAML_VALUE_MAPPING(CYAML_FLAG_DEFAULT, kn_scene_check, check_fields)};

static const cyaml_schema_field_t scene_fields[] = {
    CYAML_FIELD_STRING_PTR("name", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_doc, name, 1, CYAML_UNLIMITED),
    CYAML_FIELD_FLOAT_PTR("time_step", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_doc,
                          time_step),
    CYAML_FIELD_FLOAT_PTR("duration", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_doc,
                          duration),
    CYAML_FIELD_SEQUENCE_FIXED("gravity", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | CYAML_FLAG_FLOW, kn_scene_doc,
                               gravity, &schema_double, 3),
    SEQ_OPT("package_paths", kn_scene_doc, package_paths, npackage_paths, &schema_string),
    CYAML_FIELD_MAPPING_PTR("contact", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_doc, contact,
                            contact_fields),
    CYAML_FIELD_SEQUENCE_COUNT("objects", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_doc, objects, nobjects,
                               &schema_object, 0, CYAML_UNLIMITED),
    CYAML_FIELD_SEQUENCE_COUNT("robots", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_doc, robots, nrobots,
                               &schema_robot, 0, CYAML_UNLIMITED),
    CYAML_FIELD_SEQUENCE_COUNT("welds", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_doc, welds, nwelds,
                               &schema_weld, 0, CYAML_UNLIMITED),
    CYAML_FIELD_SEQUENCE_COUNT("deformables", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_doc, deformables,
                               ndeformables, &schema_deformable, 0, CYAML_UNLIMITED),
    CYAML_FIELD_MAPPING_PTR("output", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_doc, output, output_fields),
    CYAML_FIELD_MAPPING_PTR("outputs", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_doc, outputs,
                            output_fields),
    CYAML_FIELD_SEQUENCE_COUNT("checks", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_doc, checks, nchecks,
                               &schema_check, 0, CYAML_UNLIMITED),
    CYAML_FIELD_END};
static const cyaml_schema_value_t schema_scene = {
    CYAML_VALUE_MAPPING(CYAML_FLAG_POINTER, kn_scene_doc, scene_fields)};

/* Sections of the architecture's scene sketch that knead does not simulate yet. */
static const char* const unsupported_sections[][2] = {{NULL, NULL}}; /* none at the moment */

//---- libcyaml messages => file:line: key ----

typedef struct {
  char text[4096];
  size_t n;
} log_capture;

static void capture_log(cyaml_log_t level, void* ctx, const char* fmt, va_list args) {
  log_capture* c = ctx;
  if (level < CYAML_LOG_ERROR || c->n + 1 >= sizeof c->text) return;
  int k = vsnprintf(c->text + c->n, sizeof c->text - c->n, fmt, args);
  if (k > 0) c->n += (size_t)k;
  if (c->n >= sizeof c->text) c->n = sizeof c->text - 1;
}

static const cyaml_config_t* scene_cyaml_config(log_capture* c) {
  static _Thread_local cyaml_config_t cfg;
  cfg = (cyaml_config_t){.log_fn = capture_log, .log_ctx = c, .mem_fn = cyaml_mem, .log_level = CYAML_LOG_ERROR,
                         .flags = CYAML_CFG_DEFAULT};
  return &cfg;
}

/* One step of a key path: a mapping key or a sequence index. */
typedef struct {
  char key[128];
  long index; /* -1 for a key */
} path_elem;

// (schema, path) => the schema of the value at that path, or NULL
static const cyaml_schema_value_t* schema_at(const path_elem* p, int n) {
  const cyaml_schema_value_t* s = &schema_scene;
  for (int i = 0; i < n && s; i++) {
    if (p[i].index >= 0) {
      s = (s->type == CYAML_SEQUENCE || s->type == CYAML_SEQUENCE_FIXED) ? s->sequence.entry : NULL;
    } else {
      if (s->type != CYAML_MAPPING) return NULL;
      const cyaml_schema_field_t* f = s->mapping.fields;
      while (f->key && strcmp(f->key, p[i].key) != 0) f++;
      s = f->key ? &f->value : NULL;
    }
  }
  return s;
}

static void path_format(const path_elem* p, int n, char* out, size_t cap) {
  size_t k = 0;
  out[0] = 0;
  for (int i = 0; i < n && k < cap; i++) {
    int w = p[i].index >= 0 ? snprintf(out + k, cap - k, "[%ld]", p[i].index)
                            : snprintf(out + k, cap - k, "%s%s", k ? "." : "", p[i].key);
    if (w > 0) k += (size_t)w;
  }
}

// (schema value) => "a number", "a list of 3 numbers", "one of: sap, ..."
static void describe_schema(const cyaml_schema_value_t* s, char* out, size_t cap) {
  if (!s) {
    snprintf(out, cap, "a valid value");
    return;
  }
  switch (s->type) {
    case CYAML_FLOAT:
    case CYAML_INT:
    case CYAML_UINT: snprintf(out, cap, "a number"); break;
    case CYAML_BOOL: snprintf(out, cap, "true or false"); break;
    case CYAML_STRING: snprintf(out, cap, "text"); break;
    case CYAML_ENUM: {
      size_t k = (size_t)snprintf(out, cap, "one of:");
      for (uint32_t i = 0; i < s->enumeration.count && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, "%s %s", i ? "," : "", s->enumeration.strings[i].str);
      break;
    }
    case CYAML_MAPPING: {
      size_t k = (size_t)snprintf(out, cap, "a mapping with keys");
      for (const cyaml_schema_field_t* f = s->mapping.fields; f->key && k < cap; f++)
        k += (size_t)snprintf(out + k, cap - k, "%s %s", f == s->mapping.fields ? "" : ",", f->key);
      break;
    }
    case CYAML_SEQUENCE:
    case CYAML_SEQUENCE_FIXED: {
      char inner[256];
      describe_schema(s->sequence.entry, inner, sizeof inner);
      if (s->type == CYAML_SEQUENCE_FIXED)
        snprintf(out, cap, "a list of %u values, each %s", (unsigned)s->sequence.min, inner);
      else
        snprintf(out, cap, "a list (each entry %s)", inner);
      break;
    }
    default: snprintf(out, cap, "a valid value"); break;
  }
}

static void field_list(const cyaml_schema_value_t* s, char* out, size_t cap) {
  size_t k = 0;
  out[0] = 0;
  if (!s || s->type != CYAML_MAPPING) return;
  for (const cyaml_schema_field_t* f = s->mapping.fields; f->key && k < cap; f++)
    k += (size_t)snprintf(out + k, cap - k, "%s%s", k ? ", " : "", f->key);
}

// (captured libcyaml log) => err "file:line: key: what was expected"
static kn_status translate_cyaml_error(const log_capture* c, cyaml_err_t code, const char* path,
                                       const kn_scene_lines* lines, kn_error* err) {
  path_elem elems[32];
  int n = 0, fallback_line = 0;
  char msg[512] = "";
  /* the first line is "Load: <message>", then "Load: Backtrace:", then innermost-first frames */
  const char* s = c->text;
  int first = 1;
  path_elem rev[32];
  int nrev = 0;
  while (*s) {
    const char* e = strchr(s, '\n');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    char line[512];
    if (len >= sizeof line) len = sizeof line - 1;
    memcpy(line, s, len);
    line[len] = 0;
    s += len + (e ? 1 : 0);
    const char* body = strncmp(line, "Load: ", 6) == 0 ? line + 6 : line;
    if (first) {
      snprintf(msg, sizeof msg, "%s", body);
      first = 0;
      continue;
    }
    const char* q = strstr(body, "in mapping field '");
    const char* r = strstr(body, "in sequence entry '");
    const char* l = strstr(body, "(line: ");
    if (l && !fallback_line) fallback_line = atoi(l + 7);
    if (nrev < 32 && q) {
      q += strlen("in mapping field '");
      size_t kl = strcspn(q, "'");
      if (kl >= sizeof rev[0].key) kl = sizeof rev[0].key - 1;
      memcpy(rev[nrev].key, q, kl);
      rev[nrev].key[kl] = 0;
      rev[nrev++].index = -1;
    } else if (nrev < 32 && r) {
      /* libcyaml counts sequence entries from 1 */
      rev[nrev].key[0] = 0;
      rev[nrev++].index = atol(r + strlen("in sequence entry '")) - 1;
    }
  }
  for (int i = nrev - 1; i >= 0; i--) elems[n++] = rev[i];

  char where[512], expected[512], keys[512];
  const char* unexpected = "Unexpected key: ";
  const char* missing = "Missing required mapping field: ";
  const char* dup = "Mapping field already seen: ";
  if (strncmp(msg, unexpected, strlen(unexpected)) == 0 && n < 32) {
    const char* key = msg + strlen(unexpected);
    path_format(elems, n, where, sizeof where);
    field_list(schema_at(elems, n), keys, sizeof keys);
    snprintf(elems[n].key, sizeof elems[n].key, "%s", key);
    elems[n].index = -1;
    char full[512];
    path_format(elems, n + 1, full, sizeof full);
    int line = kn_scene_lines_find(lines, full);
    return kn_fail(err, KN_ERR_PARSE, "%s:%d: unknown key '%s' in %s (expected one of: %s)", path,
                   line ? line : fallback_line, key, n ? where : "the scene", keys);
  }
  if (strncmp(msg, missing, strlen(missing)) == 0) {
    /* the backtrace ends at the last field read inside the mapping that lacks the key */
    const char* key = msg + strlen(missing);
    while (n > 0) {
      const cyaml_schema_value_t* sv = schema_at(elems, n);
      if (sv && sv->type == CYAML_MAPPING) {
        const cyaml_schema_field_t* f = sv->mapping.fields;
        while (f->key && strcmp(f->key, key) != 0) f++;
        if (f->key) break;
      }
      n--;
    }
    path_format(elems, n, where, sizeof where);
    int line = kn_scene_lines_find(lines, where);
    return kn_fail(err, KN_ERR_PARSE, "%s:%d: %s: missing required key '%s'", path, line ? line : fallback_line,
                   n ? where : "the scene", key);
  }
  /* a list of the wrong length is reported at its last entry: name the list itself */
  if (strstr(msg, "entries"))
    while (n > 0 && elems[n - 1].index >= 0) n--;
  path_format(elems, n, where, sizeof where);
  int line = kn_scene_lines_find(lines, where);
  if (!line) line = fallback_line;
  if (strncmp(msg, dup, strlen(dup)) == 0)
    return kn_fail(err, KN_ERR_PARSE, "%s:%d: %s: key given twice", path, line, where);
  describe_schema(schema_at(elems, n), expected, sizeof expected);
  return kn_fail(err, KN_ERR_PARSE, "%s:%d: %s: expected %s (%s: %s)", path, line, n ? where : "the scene", expected,
                 cyaml_strerror(code), msg[0] ? msg : "no details");
}

//---- numbers: the whole scalar or an error ----

/* libcyaml 1.3 reads a number with strtod/strtoll and ignores what follows, so "0.O5" (letter O)
 * was friction 0 and "1.O" was 1. Every scalar the schema types as a number is parsed again here
 * and must be consumed whole. */

// ("objects[0].friction") => the schema of that value, or NULL
static const cyaml_schema_value_t* schema_at_key_path(const char* key_path) {
  path_elem p[32];
  int n = 0;
  const char* c = key_path;
  while (*c && n < 32) {
    if (*c == '.') {
      c++;
    } else if (*c == '[') {
      char* end;
      p[n].key[0] = 0;
      p[n++].index = strtol(c + 1, &end, 10);
      if (*end != ']') return NULL;
      c = end + 1;
    } else {
      size_t k = strcspn(c, ".[");
      if (k >= sizeof p[0].key) return NULL;
      memcpy(p[n].key, c, k);
      p[n].key[k] = 0;
      p[n++].index = -1;
      c += k;
    }
  }
  return *c ? NULL : schema_at(p, n);
}

typedef struct {
  const char* path;
  kn_error* err;
} number_check;

static int check_number(void* ctx, const char* key_path, const char* value, int line) {
  const number_check* nc = ctx;
  const cyaml_schema_value_t* sv = schema_at_key_path(key_path);
  if (!sv || (sv->type != CYAML_FLOAT && sv->type != CYAML_INT && sv->type != CYAML_UINT)) return 0;
  char* end = (char*)value;
  if (value[0] && !isspace((unsigned char)value[0])) {
    if (sv->type == CYAML_FLOAT)
      (void)strtod(value, &end);
    else
      (void)strtoll(value, &end, 0);
  }
  if (end != value && *end == 0) return 0;
  kn_fail(nc->err, KN_ERR_PARSE, "%s:%d: %s: '%s' is not %s (the whole value must be one)", nc->path, line,
          key_path, value, sv->type == CYAML_FLOAT ? "a number" : "a whole number");
  return 1;
}

// (scene name) => 1 when it is one plain file name: the outputs go to out/<name>
static int plain_file_name(const char* name) {
  if (!name[0] || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return 0;
  for (const char* c = name; *c; c++)
    if (*c == '/' || *c == '\\' || (unsigned char)*c < 0x20 || *c == 0x7f) return 0;
  return 1;
}

//---- semantic checks and defaults ----

int kn_scene_line(const kn_scene* s, const char* key_path) { return s ? kn_scene_lines_find(s->lines, key_path) : 0; }

kn_status kn_scene_fail(const kn_scene* s, kn_error* err, kn_status status, const char* key_path, const char* fmt,
                        ...) {
  char msg[KN_ERROR_MSG];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  int line = kn_scene_line(s, key_path);
  if (line)
    return kn_fail(err, status, "%s:%d: %s: %s", s->path, line, key_path, msg);
  return kn_fail(err, status, "%s: %s: %s", s ? s->path : "scene", key_path, msg);
}

static int all_finite(const double* x, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

static kn_status check_pose(const kn_scene* s, const kn_scene_pose* p, const char* key, kn_error* err) {
  if (!all_finite(p->xyz, 3) || !all_finite(p->rpy, 3))
    return kn_scene_fail(s, err, KN_ERR_INVALID, key, "xyz and rpy must be finite numbers");
  return KN_OK;
}

static kn_status check_controller(const kn_scene* s, const kn_scene_controller* c, const char* key,
                                  kn_error* err) {
  char k[256];
  if (c->kp && c->kp_per_joint) {
    snprintf(k, sizeof k, "%s.kp_per_joint", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "give kp (one value for every joint) or kp_per_joint, not both");
  }
  if (!c->kp && !c->kp_per_joint)
    return kn_scene_fail(s, err, KN_ERR_INVALID, key, "a pd controller needs kp (or kp_per_joint)");
  if (c->kd && c->kd_per_joint) {
    snprintf(k, sizeof k, "%s.kd_per_joint", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "give kd (one value for every joint) or kd_per_joint, not both");
  }
  struct {
    const char* name;
    const double* x;
    unsigned n;
  } gains[] = {{"kp", c->kp, c->kp ? 1u : 0u},
               {"kp_per_joint", c->kp_per_joint, c->nkp_per_joint},
               {"kd", c->kd, c->kd ? 1u : 0u},
               {"kd_per_joint", c->kd_per_joint, c->nkd_per_joint}};
  for (int g = 0; g < 4; g++)
    for (unsigned i = 0; i < gains[g].n; i++)
      if (!(gains[g].x[i] >= 0) || !isfinite(gains[g].x[i])) {
        snprintf(k, sizeof k, "%s.%s", key, gains[g].name);
        return kn_scene_fail(s, err, KN_ERR_INVALID, k, "gains must be finite and >= 0 (got %g)", gains[g].x[i]);
      }
  for (unsigned i = 0; i < c->neffort_limits; i++)
    if (!(c->effort_limits[i] > 0)) {
      snprintf(k, sizeof k, "%s.effort_limits", key);
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "effort limits must be > 0 (.inf for none), got %g",
                           c->effort_limits[i]);
    }
  int nref = (c->setpoint != NULL) + (c->trajectory != NULL) + (c->sequence != NULL);
  if (nref > 1)
    return kn_scene_fail(s, err, KN_ERR_INVALID, key, "give one reference: setpoint, trajectory or sequence");
  if (c->setpoint && !all_finite(c->setpoint, c->nsetpoint)) {
    snprintf(k, sizeof k, "%s.setpoint", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "values must be finite");
  }
  if (c->trajectory) {
    const kn_scene_trajectory* tr = c->trajectory;
    snprintf(k, sizeof k, "%s.trajectory", key);
    if ((tr->points != NULL) == (tr->csv != NULL))
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "give either points or csv");
    for (unsigned i = 0; i < tr->npoints; i++) {
      snprintf(k, sizeof k, "%s.trajectory.points[%u]", key, i);
      if (!isfinite(tr->points[i].t) || !all_finite(tr->points[i].q, tr->points[i].nq))
        return kn_scene_fail(s, err, KN_ERR_INVALID, k, "t and q must be finite");
      if (i > 0 && !(tr->points[i].t > tr->points[i - 1].t))
        return kn_scene_fail(s, err, KN_ERR_INVALID, k, "times must increase (t = %g after t = %g)", tr->points[i].t,
                             tr->points[i - 1].t);
      if (tr->points[i].nq != tr->points[0].nq)
        return kn_scene_fail(s, err, KN_ERR_INVALID, k, "q has %u values; points[0] has %u", tr->points[i].nq,
                             tr->points[0].nq);
    }
  }
  for (unsigned i = 0; i < c->nsequence; i++) {
    snprintf(k, sizeof k, "%s.sequence[%u]", key, i);
    if (!(c->sequence[i].duration > 0) || !isfinite(c->sequence[i].duration))
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "duration must be > 0 (phase '%s')", c->sequence[i].name);
    if (!all_finite(c->sequence[i].q, c->sequence[i].nq))
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "q must be finite (phase '%s')", c->sequence[i].name);
  }
  return KN_OK;
}

// (material values under key) => KN_OK when friction >= 0, stiffness > 0, dissipation_time >= 0
static kn_status check_material(const kn_scene* s, const double* mu, const double* k, const double* tau,
                                const char* key, kn_error* err) {
  char kk[256];
  if (mu && !(*mu >= 0 && isfinite(*mu))) {
    snprintf(kk, sizeof kk, "%s.friction", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, kk, "must be finite and >= 0 (got %g)", *mu);
  }
  if (mu && *mu > KN_SCENE_MAX_FRICTION) {
    snprintf(kk, sizeof kk, "%s.friction", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, kk,
                         "%g is beyond what the contact solver can use; expected <= %g (a pair's friction is the "
                         "harmonic mean 2ab/(a+b), which overflows, and SAP's cone squares it)",
                         *mu, KN_SCENE_MAX_FRICTION);
  }
  if (k && !(*k > 0)) {
    snprintf(kk, sizeof kk, "%s.stiffness", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, kk, "must be > 0 N/m (.inf for rigid; got %g)", *k);
  }
  if (k && *k < KN_SCENE_MIN_STIFFNESS) {
    snprintf(kk, sizeof kk, "%s.stiffness", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, kk,
                         "%g N/m is below what the contact solver can use; expected >= %g N/m (a pair's stiffness "
                         "is k_a k_b / (k_a + k_b), which underflows to 0)",
                         *k, KN_SCENE_MIN_STIFFNESS);
  }
  if (tau && !(*tau >= 0 && isfinite(*tau))) {
    snprintf(kk, sizeof kk, "%s.dissipation_time", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, kk, "must be finite and >= 0 s (got %g)", *tau);
  }
  return KN_OK;
}

// (contact section) => margin and solver options checked
static kn_status check_contact_section(kn_scene* s, kn_error* err) {
  const kn_scene_contact* c = s->doc->contact;
  s->margin = 0;
  if (!c) return KN_OK;
  if (c->margin) {
    if (!(*c->margin >= 0) || !isfinite(*c->margin))
      return kn_scene_fail(s, err, KN_ERR_INVALID, "contact.margin", "must be finite and >= 0 m (got %g)", *c->margin);
    s->margin = *c->margin;
  }
  if (c->solver) {
    const kn_scene_solver* o = c->solver;
    if (o->max_iterations && *o->max_iterations < 1)
      return kn_scene_fail(s, err, KN_ERR_INVALID, "contact.solver.max_iterations", "must be >= 1 (got %d)",
                           *o->max_iterations);
    if (o->rel_tolerance && !(*o->rel_tolerance >= 0 && isfinite(*o->rel_tolerance)))
      return kn_scene_fail(s, err, KN_ERR_INVALID, "contact.solver.rel_tolerance", "must be finite and >= 0");
    if (o->abs_tolerance && !(*o->abs_tolerance >= 0 && isfinite(*o->abs_tolerance)))
      return kn_scene_fail(s, err, KN_ERR_INVALID, "contact.solver.abs_tolerance", "must be finite and >= 0");
  }
  return KN_OK;
}

// (objects[i]) => one name among robots and objects, one shape or a urdf, sizes and masses > 0
static kn_status check_object(const kn_scene* s, unsigned i, kn_error* err) {
  const kn_scene_doc* d = s->doc;
  const kn_scene_object* o = &d->objects[i];
  char key[64], k[128];
  snprintf(key, sizeof key, "objects[%u]", i);
  snprintf(k, sizeof k, "%s.name", key);
  for (unsigned j = 0; j < i; j++)
    if (strcmp(d->objects[j].name, o->name) == 0)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "object name '%s' is already used by objects[%u]", o->name, j);
  for (unsigned j = 0; j < d->nrobots; j++)
    if (strcmp(d->robots[j].name, o->name) == 0)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "object name '%s' is already used by robots[%u]", o->name, j);
  if ((o->shape != NULL) == (o->urdf != NULL))
    return kn_scene_fail(s, err, KN_ERR_INVALID, key, "object '%s': give either shape or urdf", o->name);
  if (check_pose(s, &o->pose, key, err)) return err->status;
  if (o->mass && o->density)
    return kn_scene_fail(s, err, KN_ERR_INVALID, key, "object '%s': give mass or density, not both", o->name);
  if (o->mass && !(*o->mass > 0 && isfinite(*o->mass))) {
    snprintf(k, sizeof k, "%s.mass", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "must be finite and > 0 kg (got %g)", *o->mass);
  }
  if (o->density && !(*o->density > 0 && isfinite(*o->density))) {
    snprintf(k, sizeof k, "%s.density", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "must be finite and > 0 kg/m^3 (got %g)", *o->density);
  }
  if (o->velocity && !all_finite(o->velocity, 6)) {
    snprintf(k, sizeof k, "%s.velocity", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "values must be finite");
  }
  if (check_material(s, o->friction, o->stiffness, o->dissipation_time, key, err)) return err->status;
  if (!o->shape) return KN_OK;
  const kn_scene_shape* sh = o->shape;
  snprintf(k, sizeof k, "%s.shape", key);
  int nshape = (sh->box != NULL) + (sh->sphere != NULL) + (sh->cylinder != NULL) + (sh->capsule != NULL) +
               (sh->halfspace != NULL) + (sh->mesh != NULL);
  if (nshape != 1)
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "object '%s': give exactly one of box, sphere, cylinder, "
                         "capsule, halfspace, mesh (got %d)", o->name, nshape);
  const double* size = sh->box ? sh->box : sh->sphere ? sh->sphere : sh->cylinder ? sh->cylinder : sh->capsule;
  int nsize = sh->box ? 3 : sh->sphere ? 1 : (sh->cylinder || sh->capsule) ? 2 : 0;
  for (int j = 0; j < nsize; j++)
    if (!(size[j] > 0 && isfinite(size[j])))
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "object '%s': sizes must be finite and > 0 m (got %g)",
                           o->name, size[j]);
  if (sh->halfspace) {
    if (!all_finite(sh->halfspace->normal, 3) || kn_vec3_norm(sh->halfspace->normal) < 1e-12)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "object '%s': halfspace normal must be finite and non-zero",
                           o->name);
    if (!o->fixed)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "object '%s': a halfspace has no mass; it must be fixed: true",
                           o->name);
  }
  if (sh->scale && !sh->mesh)
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "object '%s': scale applies to a mesh only", o->name);
  return KN_OK;
}

// (an MPM deformable) => no torus, no fixed/attach, sane particles_per_cell and region
static kn_status check_mpm(const kn_scene* s, const kn_scene_deformable* o, const char* key, kn_error* err) {
  char k[128];
  snprintf(k, sizeof k, "%s.shape.torus", key);
  if (o->shape && o->shape->torus)
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': MPM shapes are box, sphere, cylinder or mesh",
                         o->name);
  snprintf(k, sizeof k, "%s.%s", key, o->fixed ? "fixed" : "attach");
  if (o->fixed || o->nattach)
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': MPM bodies take no fixed or attached vertices",
                         o->name);
  snprintf(k, sizeof k, "%s.particles_per_cell", key);
  if (o->particles_per_cell) {
    int n = 1, p = *o->particles_per_cell;
    while (n * n * n < p) n++;
    if (p < 1 || n * n * n != p)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': must be a cube 1, 8, 27, ... (got %d)",
                           o->name, p);
  }
  snprintf(k, sizeof k, "%s.particle_jitter", key);
  if (o->particle_jitter && !(*o->particle_jitter >= 0 && *o->particle_jitter < 1))
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': must be in [0, 1) (got %g)", o->name,
                         *o->particle_jitter);
  snprintf(k, sizeof k, "%s.region", key);
  if (o->region)
    for (int a = 0; a < 3; a++)
      if (!(isfinite(o->region->min[a]) && isfinite(o->region->max[a]) && o->region->min[a] < o->region->max[a]))
        return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': needs finite min < max on every axis",
                             o->name);
  snprintf(k, sizeof k, "%s.material.type", key);
  if (o->material && o->material->type != KN_FEM_LINEAR_COROTATED && o->material->type != KN_SCENE_MPM_EOS_FLUID &&
      o->material->type != 0)
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': MPM materials are linear_corotated or eos_fluid",
                         o->name);
  return KN_OK;
}

// (deformables[i]) => unique name, fem model, one shape with positive sizes, sane material numbers
static kn_status check_deformable(const kn_scene* s, unsigned i, kn_error* err) {
  const kn_scene_doc* d = s->doc;
  const kn_scene_deformable* o = &d->deformables[i];
  char key[64], k[128];
  snprintf(key, sizeof key, "deformables[%u]", i);
  snprintf(k, sizeof k, "%s.name", key);
  for (unsigned j = 0; j < i; j++)
    if (strcmp(d->deformables[j].name, o->name) == 0)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "name '%s' is already used by deformables[%u]", o->name, j);
  for (unsigned j = 0; j < d->nobjects; j++)
    if (strcmp(d->objects[j].name, o->name) == 0)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "name '%s' is already used by objects[%u]", o->name, j);
  for (unsigned j = 0; j < d->nrobots; j++)
    if (strcmp(d->robots[j].name, o->name) == 0)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "name '%s' is already used by robots[%u]", o->name, j);
  snprintf(k, sizeof k, "%s.model", key);
  if (s->backend != KN_BACKEND_SAP)
    return kn_scene_fail(s, err, KN_ERR_UNSUPPORTED, key, "deformable '%s': %s bodies need contact.backend sap",
                         o->name, o->model == KN_DEFORMABLE_MPM ? "MPM" : "FEM");
  if (o->model == KN_DEFORMABLE_MPM && check_mpm(s, o, key, err)) return err->status;
  if (o->model != KN_DEFORMABLE_MPM) {
    const char* mpm_only = o->particles_per_cell ? "particles_per_cell"
                           : o->region           ? "region"
                           : o->particle_jitter  ? "particle_jitter"
                           : o->grid             ? "grid"
                                                 : NULL;
    if (o->material && (o->material->type == KN_SCENE_MPM_EOS_FLUID || o->material->yield_stress ||
                        o->material->bulk_modulus || o->material->gamma))
      mpm_only = "material (eos_fluid, yield_stress, bulk_modulus, gamma)";
    if (mpm_only) {
      /* name the offending key (it has a line), not the absent model key */
      snprintf(k, sizeof k, "%s.%s", key, strncmp(mpm_only, "material", 8) == 0 ? "material" : mpm_only);
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': %s needs model mpm", o->name, mpm_only);
    }
  }
  if (check_pose(s, &o->pose, key, err)) return err->status;
  const kn_scene_fem_shape* sh = o->shape;
  snprintf(k, sizeof k, "%s.shape", key);
  int nshape = (sh->box != NULL) + (sh->sphere != NULL) + (sh->cylinder != NULL) + (sh->torus != NULL) +
               (sh->mesh != NULL);
  if (nshape != 1)
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': give exactly one of box, sphere, cylinder, "
                         "torus, mesh (got %d)", o->name, nshape);
  const double* size = sh->box ? sh->box : sh->sphere ? sh->sphere : sh->cylinder ? sh->cylinder : sh->torus;
  int nsize = sh->box ? 3 : sh->sphere ? 1 : (sh->cylinder || sh->torus) ? 2 : 0;
  for (int j = 0; j < nsize; j++)
    if (!(size[j] > 0 && isfinite(size[j])))
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': sizes must be finite and > 0 m (got %g)",
                           o->name, size[j]);
  if (sh->torus && !(sh->torus[0] > sh->torus[1]))
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': torus needs R > r (got %g, %g)", o->name,
                         sh->torus[0], sh->torus[1]);
  snprintf(k, sizeof k, "%s.resolution", key);
  if (o->resolution && !(*o->resolution > 0 && isfinite(*o->resolution)))
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "must be finite and > 0 m (got %g)", *o->resolution);
  snprintf(k, sizeof k, "%s.velocity", key);
  if (o->velocity && !all_finite(o->velocity, 3)) return kn_scene_fail(s, err, KN_ERR_INVALID, k, "values must be finite");
  if (o->fixed) {
    snprintf(k, sizeof k, "%s.fixed", key);
    if ((o->fixed->box != NULL) + (o->fixed->vertices != NULL) != 1)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': give box or vertices", o->name);
  }
  for (unsigned j = 0; j < o->nattach; j++) {
    const kn_scene_fem_attach* a = &o->attach[j];
    snprintf(k, sizeof k, "%s.attach[%u]", key, j);
    if ((a->box != NULL) + (a->vertices != NULL) != 1)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': give box or vertices", o->name);
    if (a->box && !(all_finite(a->box->min, 3) && all_finite(a->box->max, 3)))
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': box min and max must be finite", o->name);
  }
  if (check_material(s, o->friction, o->stiffness, o->dissipation_time, key, err)) return err->status;
  return KN_OK;
}

// (doc) => defaults filled in, or the first key that is not acceptable
static kn_status scene_validate(kn_scene* s, kn_error* err) {
  const kn_scene_doc* d = s->doc;
  s->time_step = d->time_step ? *d->time_step : 0.001;
  s->duration = d->duration ? *d->duration : 1.0;
  if (!(s->time_step > 0) || !isfinite(s->time_step))
    return kn_scene_fail(s, err, KN_ERR_INVALID, "time_step", "must be > 0 seconds (got %g)", s->time_step);
  if (!(s->duration >= 0) || !isfinite(s->duration))
    return kn_scene_fail(s, err, KN_ERR_INVALID, "duration", "must be >= 0 seconds (got %g)", s->duration);
  if (s->duration / s->time_step > 1e9)
    return kn_scene_fail(s, err, KN_ERR_INVALID, "duration", "duration / time_step = %g steps; at most 1e9",
                         s->duration / s->time_step);
  double g[3] = {0, 0, -9.81};
  if (d->gravity) memcpy(g, d->gravity, sizeof g);
  if (!all_finite(g, 3)) return kn_scene_fail(s, err, KN_ERR_INVALID, "gravity", "must be 3 finite numbers");
  memcpy(s->gravity, g, sizeof g);
  s->backend = d->contact ? d->contact->backend : KN_BACKEND_SAP;
  if (d->output && d->outputs)
    return kn_scene_fail(s, err, KN_ERR_INVALID, "outputs", "give output or outputs (an alias), not both");
  s->output = d->output ? d->output : d->outputs;
  if (s->output && (!(s->output->trajectory_rate >= 0) || !isfinite(s->output->trajectory_rate)))
    return kn_scene_fail(s, err, KN_ERR_INVALID, d->output ? "output.trajectory_rate" : "outputs.trajectory_rate",
                         "must be >= 0 rows per second (0: every step)");
  if (s->output && s->output->frame_rate && (!(*s->output->frame_rate > 0) || !isfinite(*s->output->frame_rate)))
    return kn_scene_fail(s, err, KN_ERR_INVALID, d->output ? "output.frame_rate" : "outputs.frame_rate",
                         "must be > 0 frames per second");
  char k[256];
  for (unsigned i = 0; i < d->nrobots; i++) {
    const kn_scene_robot* r = &d->robots[i];
    for (unsigned j = 0; j < i; j++)
      if (strcmp(d->robots[j].name, r->name) == 0) {
        snprintf(k, sizeof k, "robots[%u].name", i);
        return kn_scene_fail(s, err, KN_ERR_INVALID, k, "robot name '%s' is already used by robots[%u]", r->name, j);
      }
    if (r->base_pose) {
      snprintf(k, sizeof k, "robots[%u].base_pose", i);
      if (check_pose(s, r->base_pose, k, err)) return err->status;
    }
    if (r->q0 && !all_finite(r->q0, r->nq0)) {
      snprintf(k, sizeof k, "robots[%u].q0", i);
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "values must be finite");
    }
    if (r->attach_to) {
      snprintf(k, sizeof k, "robots[%u].attach_to", i);
      if (r->base_pose || r->floating)
        return kn_scene_fail(s, err, KN_ERR_INVALID, k,
                             "robot '%s': attach_to welds the root to a link, so base_pose and floating do not apply "
                             "(put the pose in attach_to.pose)",
                             r->name);
      if (check_pose(s, &r->attach_to->pose, k, err)) return err->status;
      unsigned j = 0;
      while (j < d->nrobots && strcmp(d->robots[j].name, r->attach_to->robot) != 0) j++;
      snprintf(k, sizeof k, "robots[%u].attach_to.robot", i);
      if (j == d->nrobots)
        return kn_scene_fail(s, err, KN_ERR_INVALID, k, "no robot named '%s' in the scene", r->attach_to->robot);
      if (j == i) return kn_scene_fail(s, err, KN_ERR_INVALID, k, "robot '%s' cannot attach to itself", r->name);
    }
    if (r->contact) {
      snprintf(k, sizeof k, "robots[%u].contact", i);
      if (check_material(s, r->contact->friction, r->contact->stiffness, r->contact->dissipation_time, k, err))
        return err->status;
    }
    if (r->controller) {
      snprintf(k, sizeof k, "robots[%u].controller", i);
      if (check_controller(s, r->controller, k, err)) return err->status;
    }
  }
  if (check_contact_section(s, err)) return err->status;
  for (unsigned i = 0; i < d->nobjects; i++)
    if (check_object(s, i, err)) return err->status;
  for (unsigned i = 0; i < d->ndeformables; i++)
    if (check_deformable(s, i, err)) return err->status;
  if (kn_sim_checks_validate(s, err)) return err->status;
  /* attachment cycles: follow attach_to from each robot; more than nrobots hops is a loop */
  for (unsigned i = 0; i < d->nrobots; i++) {
    unsigned cur = i, hops = 0;
    while (d->robots[cur].attach_to && hops <= d->nrobots) {
      unsigned j = 0;
      while (strcmp(d->robots[j].name, d->robots[cur].attach_to->robot) != 0) j++;
      cur = j;
      hops++;
    }
    if (hops > d->nrobots) {
      snprintf(k, sizeof k, "robots[%u].attach_to", i);
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "robot '%s' is part of an attachment loop",
                           d->robots[i].name);
    }
  }
  return KN_OK;
}

//---- loading ----

static char* path_dirname(const char* path) {
  const char* slash = strrchr(path, '/');
  if (!slash) return kn_strdup(".");
  if (slash == path) return kn_strdup("/");
  char* d = kn_calloc((size_t)(slash - path) + 1, 1);
  if (d) memcpy(d, path, (size_t)(slash - path));
  return d;
}

static char* path_stem(const char* path) {
  const char* base = strrchr(path, '/');
  base = base ? base + 1 : path;
  char* s = kn_strdup(base);
  if (!s) return NULL;
  char* dot = strrchr(s, '.');
  if (dot && dot != s && (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0)) *dot = 0;
  return s;
}

static char* path_join(const char* dir, const char* rel) {
  if (!dir || rel[0] == '/') return kn_strdup(rel);
  size_t n = strlen(dir) + strlen(rel) + 2;
  char* p = kn_calloc(n, 1);
  if (p) snprintf(p, n, "%s/%s", dir, rel);
  return p;
}

kn_status kn_scene_load_string(const char* yaml, size_t len, const char* path, kn_scene** out, kn_error* err) {
  if (!path) path = "scene";
  kn_scene* s = kn_calloc(1, sizeof *s);
  if (!s) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
  s->path = kn_strdup(path);
  s->dir = strncmp(path, "knead://", 8) == 0 ? NULL : path_dirname(path);
  kn_status st = kn_scene_lines_parse(yaml, len, path, &s->lines, err);
  if (st) goto fail;
  for (size_t i = 0; i < sizeof unsupported_sections / sizeof unsupported_sections[0]; i++)
    if (unsupported_sections[i][0] && kn_scene_lines_root_has(s->lines, unsupported_sections[i][0])) {
      st = kn_scene_fail(s, err, KN_ERR_UNSUPPORTED, unsupported_sections[i][0],
                         "%s are not supported by this version of knead yet", unsupported_sections[i][1]);
      goto fail;
    }
  log_capture cap = {.n = 0};
  cap.text[0] = 0;
  kn_scene_doc* doc = NULL;
  cyaml_err_t ce = cyaml_load_data((const uint8_t*)yaml, len, scene_cyaml_config(&cap), &schema_scene,
                                   (cyaml_data_t**)&doc, NULL);
  if (ce != CYAML_OK) {
    st = translate_cyaml_error(&cap, ce, path, s->lines, err);
    goto fail;
  }
  s->doc = doc;
  number_check nc = {path, err};
  if (kn_scene_lines_each_scalar(s->lines, check_number, &nc)) {
    st = KN_ERR_PARSE;
    goto fail;
  }
  st = scene_validate(s, err);
  if (st) goto fail;
  s->name = doc->name ? kn_strdup(doc->name) : path_stem(path);
  if (s->name && !plain_file_name(s->name)) {
    if (doc->name)
      st = kn_scene_fail(s, err, KN_ERR_INVALID, "name",
                         "'%s' is not a plain file name (outputs go to the folder out/<name>): no '/', '\\', "
                         "control characters, '.' or '..'",
                         s->name);
    else
      st = kn_fail(err, KN_ERR_INVALID, "%s: the scene's name '%s' (its file name) is not a plain file name; give "
                   "a name: key", path, s->name);
    goto fail;
  }
  s->npackage_paths = (int)doc->npackage_paths;
  s->package_paths = kn_calloc(doc->npackage_paths, sizeof *s->package_paths);
  if (!s->name || !s->package_paths) {
    st = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
    goto fail;
  }
  for (unsigned i = 0; i < doc->npackage_paths; i++) s->package_paths[i] = path_join(s->dir, doc->package_paths[i]);
  *out = s;
  return KN_OK;
fail:
  kn_scene_free(s);
  return st;
}

kn_status kn_scene_load(const char* path, kn_scene** out, kn_error* err) {
  if (strncmp(path, "knead://", 8) == 0) {
    size_t len;
    const char* text = kn_embedded_file(path, &len);
    if (!text) return kn_fail(err, KN_ERR_IO, "%s: no such embedded file", path);
    return kn_scene_load_string(text, len, path, out, err);
  }
  char* buf = NULL;
  size_t len = 0;
  kn_status rs = kn_file_read(path, "scene", &buf, &len, err);
  if (rs) return rs;
  kn_status st = kn_scene_load_string(buf, len, path, out, err);
  free(buf);
  return st;
}

kn_status kn_scene_load_default(kn_scene** out, kn_error* err) {
  return kn_scene_load("knead://default_scene.yaml", out, err);
}

void kn_scene_free(kn_scene* s) {
  if (!s) return;
  if (s->doc) {
    log_capture cap = {.n = 0};
    cyaml_free(scene_cyaml_config(&cap), &schema_scene, s->doc, 0);
  }
  for (int i = 0; i < s->npackage_paths; i++) free(s->package_paths[i]);
  free(s->package_paths);
  kn_scene_lines_free(s->lines);
  free(s->path);
  free(s->dir);
  free(s->name);
  free(s);
}

const char* kn_contact_backend_name(kn_contact_backend b) {
  for (size_t i = 0; i < sizeof backend_strings / sizeof backend_strings[0]; i++)
    if (backend_strings[i].val == (int64_t)b) return backend_strings[i].str;
  return "unknown";
}

//---- file names: relative, absolute, package:// ----

static int file_exists(const char* p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

// (base folder, "pkg", "rest") => <base>/pkg/rest or <base>/<any>/pkg/rest when it exists
static char* find_in_base(const char* base, const char* pkg, const char* rest) {
  size_t n = strlen(base) + strlen(pkg) + strlen(rest) + 3;
  char* p = kn_calloc(n, 1);
  if (!p) return NULL;
  snprintf(p, n, "%s/%s/%s", base, pkg, rest);
  if (file_exists(p)) return p;
  free(p);
  DIR* dir = opendir(base);
  if (!dir) return NULL;
  char* found = NULL;
  struct dirent* e;
  while (!found && (e = readdir(dir))) {
    if (e->d_name[0] == '.') continue;
    size_t m = strlen(base) + strlen(e->d_name) + strlen(pkg) + strlen(rest) + 4;
    char* q = kn_calloc(m, 1);
    if (!q) break;
    snprintf(q, m, "%s/%s/%s/%s", base, e->d_name, pkg, rest);
    if (file_exists(q))
      found = q;
    else
      free(q);
  }
  closedir(dir);
  return found;
}

static char* find_in_env(const char* var, const char* pkg, const char* rest) {
  const char* v = getenv(var);
  if (!v || !*v) return NULL;
  char* copy = kn_strdup(v);
  char* found = NULL;
  for (char *save = NULL, *tok = strtok_r(copy, ":", &save); tok && !found; tok = strtok_r(NULL, ":", &save))
    if (*tok) found = find_in_base(tok, pkg, rest);
  free(copy);
  return found;
}

char* kn_scene_resolve_path(const kn_scene* s, const char* uri, kn_error* err) {
  if (strncmp(uri, "knead://", 8) == 0) {
    if (kn_embedded_file(uri, NULL)) return kn_strdup(uri);
    kn_fail(err, KN_ERR_IO, "%s is not embedded in this build of knead", uri);
    return NULL;
  }
  if (strncmp(uri, "file://", 7) == 0) uri += 7;
  if (strncmp(uri, "package://", 10) != 0) return path_join(s ? s->dir : NULL, uri);
  const char* pkg = uri + 10;
  const char* slash = strchr(pkg, '/');
  if (!slash || slash == pkg || !slash[1]) {
    kn_fail(err, KN_ERR_INVALID, "%s: expected package://<package>/<path>", uri);
    return NULL;
  }
  char name[256];
  size_t n = (size_t)(slash - pkg);
  if (n >= sizeof name) n = sizeof name - 1;
  memcpy(name, pkg, n);
  name[n] = 0;
  const char* rest = slash + 1;
  for (int i = 0; s && i < s->npackage_paths; i++) {
    char* p = find_in_base(s->package_paths[i], name, rest);
    if (p) return p;
  }
  char* p = find_in_env("KNEAD_PACKAGE_PATH", name, rest);
  if (!p) p = find_in_env("ROS_PACKAGE_PATH", name, rest);
  if (p) return p;
  char tried[512] = "";
  size_t k = 0;
  for (int i = 0; s && i < s->npackage_paths && k < sizeof tried; i++)
    k += (size_t)snprintf(tried + k, sizeof tried - k, "%s%s", k ? ", " : "", s->package_paths[i]);
  kn_fail(err, KN_ERR_IO,
          "%s: package '%s' not found (searched package_paths [%s], KNEAD_PACKAGE_PATH, ROS_PACKAGE_PATH)", uri, name,
          tried);
  return NULL;
}
