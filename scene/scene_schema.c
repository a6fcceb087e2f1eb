/* Scenes: YAML => kn_scene_doc through a libcyaml schema (the tables below). libcyaml's messages
 * ("Unexpected key: foo" plus a backtrace) are captured and rewritten as "file:line: key.path: what
 * was expected"; the line comes from the libyaml node tree (scene_lines.c), because libcyaml
 * reports an unknown key at its enclosing mapping. Every number is then read again whole. */
#include <ctype.h>
#include <cyaml/cyaml.h>
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "deformable/deformable.h"
#include "sap/sap.h"
#include "scene/scene_internal.h"

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
static const cyaml_strval_t nl_solver_strings[] = {{"iterative", KN_SCENE_NL_ITERATIVE}, {"direct", KN_SCENE_NL_DIRECT}};
static const cyaml_strval_t smooth_integrator_strings[] = {{"backward_euler", KN_SCENE_SMOOTH_BACKWARD_EULER},
                                                            {"trapezoidal", KN_SCENE_SMOOTH_TRAPEZOIDAL}};
static const cyaml_schema_field_t smooth_fields[] = {
    DBL_OPT("thickness", kn_scene_smooth, thickness),
    DBL_OPT("stiffness", kn_scene_smooth, stiffness),
    DBL_OPT("epsilon", kn_scene_smooth, epsilon),
    DBL_OPT("static_ratio", kn_scene_smooth, static_ratio),
    DBL_OPT("stribeck_speed", kn_scene_smooth, stribeck_speed),
    DBL_OPT("viscous", kn_scene_smooth, viscous),
    CYAML_FIELD_ENUM_PTR("lagged", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | BOOL_FLAGS, kn_scene_smooth, lagged,
                         bool_strings, 6),
    CYAML_FIELD_ENUM_PTR("adaptive", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | BOOL_FLAGS, kn_scene_smooth, adaptive,
                         bool_strings, 6),
    CYAML_FIELD_ENUM("solver", CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_smooth, solver, nl_solver_strings, 2),
    CYAML_FIELD_ENUM("integrator", CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_smooth, integrator,
                     smooth_integrator_strings, 2),
    CYAML_FIELD_END};
static const cyaml_strval_t ablation_strings[] = {
    {"cpf", KN_SCENE_CPF}, {"cpf_exact", KN_SCENE_CPF_EXACT}, {"dpf", KN_SCENE_DPF}, {"dpf_ccd", KN_SCENE_DPF_CCD}};
static const cyaml_schema_field_t penalty_fields[] = {
    DBL_OPT("stiffness", kn_scene_penalty, stiffness),
    DBL_OPT("tolerance", kn_scene_penalty, tolerance),
    CYAML_FIELD_ENUM_PTR("continuous", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | BOOL_FLAGS, kn_scene_penalty,
                         continuous, bool_strings, 6),
    CYAML_FIELD_ENUM_PTR("ablation", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_penalty,
                         ablation, ablation_strings, 4),
    DBL_OPT("epsilon_v", kn_scene_penalty, epsilon_v),
    CYAML_FIELD_ENUM_PTR("lag_lambda", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | BOOL_FLAGS, kn_scene_penalty,
                         lag_lambda, bool_strings, 6),
    CYAML_FIELD_ENUM_PTR("anchored", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | BOOL_FLAGS, kn_scene_penalty,
                         anchored, bool_strings, 6),
    CYAML_FIELD_END};
static const cyaml_schema_field_t ipc_fields[] = {
    DBL_OPT("dhat", kn_scene_ipc, dhat),
    DBL_OPT("kappa", kn_scene_ipc, kappa),
    DBL_OPT("epsilon_v", kn_scene_ipc, epsilon_v),
    DBL_OPT("epsilon_d", kn_scene_ipc, epsilon_d),
    CYAML_FIELD_INT_PTR("lagging_iterations", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_ipc, lagging_iterations),
    CYAML_FIELD_ENUM_PTR("box_surfaces", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL | BOOL_FLAGS, kn_scene_ipc,
                         box_surfaces, bool_strings, 6),
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
    CYAML_FIELD_MAPPING_PTR("smooth_friction", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_contact,
                            smooth_friction, smooth_fields),
    CYAML_FIELD_MAPPING_PTR("penalty", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_contact, penalty,
                            penalty_fields),
    CYAML_FIELD_MAPPING_PTR("ipc", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_contact, ipc, ipc_fields),
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
static const cyaml_strval_t fem_model_strings[] = {{"linear", KN_SCENE_FEM_TYPE(KN_FEM_LINEAR)},
                                                   {"linear_corotated", KN_SCENE_FEM_TYPE(KN_FEM_LINEAR_COROTATED)},
                                                   {"corotated", KN_SCENE_FEM_TYPE(KN_FEM_COROTATED)},
                                                   {"neohookean", KN_SCENE_FEM_TYPE(KN_FEM_NEOHOOKEAN)},
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
    DBL_OPT("volume_compressibility", kn_scene_deformable, volume_compressibility),
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
    DBL_OPT("contact_radius", kn_scene_deformable, contact_radius),
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
    {"solver_converged", KN_CHECK_SOLVER_CONVERGED}, {"follows_curve", KN_CHECK_FOLLOWS_CURVE}};
static const cyaml_strval_t quantity_strings[] = {
    {"x", KN_QUANTITY_X},   {"y", KN_QUANTITY_Y},         {"z", KN_QUANTITY_Z},
    {"vx", KN_QUANTITY_VX}, {"vy", KN_QUANTITY_VY},       {"vz", KN_QUANTITY_VZ},
    {"speed", KN_QUANTITY_SPEED}, {"along", KN_QUANTITY_ALONG}, {"distance", KN_QUANTITY_DISTANCE}};
static const cyaml_strval_t expect_strings[] = {{"pass", 0}, {"fail", 1}};
static const cyaml_schema_field_t check_fields[] = {
    CYAML_FIELD_STRING_PTR("name", CYAML_FLAG_POINTER, kn_scene_check, name, 1, CYAML_UNLIMITED),
    CYAML_FIELD_ENUM("type", CYAML_FLAG_STRICT, kn_scene_check, type, check_type_strings, 8),
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
    CYAML_FIELD_ENUM("quantity", CYAML_FLAG_OPTIONAL | CYAML_FLAG_STRICT, kn_scene_check, quantity, quantity_strings,
                     9),
    FIXED_OPT("direction", kn_scene_check, direction, 3),
    FIXED_OPT("point", kn_scene_check, point, 3),
    CYAML_FIELD_STRING_PTR("formula", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_check, formula, 1,
                           CYAML_UNLIMITED),
    CYAML_FIELD_STRING_PTR("csv", CYAML_FLAG_POINTER | CYAML_FLAG_OPTIONAL, kn_scene_check, csv, 1, CYAML_UNLIMITED),
    DBL_OPT("tolerance", kn_scene_check, tolerance),
    DBL_OPT("rel_tolerance", kn_scene_check, rel_tolerance),
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

//---- the document ----

kn_status kn_scene_doc_parse(const char* yaml, size_t len, const char* path, const kn_scene_lines* lines,
                             kn_scene_doc** out, kn_error* err) {
  log_capture cap = {.n = 0};
  cap.text[0] = 0;
  kn_scene_doc* doc = NULL;
  cyaml_err_t ce = cyaml_load_data((const uint8_t*)yaml, len, scene_cyaml_config(&cap), &schema_scene,
                                   (cyaml_data_t**)&doc, NULL);
  if (ce != CYAML_OK) return translate_cyaml_error(&cap, ce, path, lines, err);
  number_check nc = {path, err};
  if (kn_scene_lines_each_scalar(lines, check_number, &nc)) {
    kn_scene_doc_free(doc);
    return KN_ERR_PARSE;
  }
  *out = doc;
  return KN_OK;
}

void kn_scene_doc_free(kn_scene_doc* doc) {
  if (!doc) return;
  log_capture cap = {.n = 0};
  cyaml_free(scene_cyaml_config(&cap), &schema_scene, doc, 0);
}

const char* kn_contact_backend_name(kn_contact_backend b) {
  for (size_t i = 0; i < sizeof backend_strings / sizeof backend_strings[0]; i++)
    if (backend_strings[i].val == (int64_t)b) return backend_strings[i].str;
  return "unknown";
}

static const char* const type_names[] = {"height_above",  "height_below",   "distance_below",  "grasp_held",
                                         "no_penetration", "contact_force", "solver_converged", "follows_curve"};

const char* kn_check_type_name(kn_check_type t) {
  return (unsigned)t < sizeof type_names / sizeof type_names[0] ? type_names[t] : "unknown";
}

const char* kn_check_quantity_name(kn_check_quantity q) {
  for (size_t i = 0; i < sizeof quantity_strings / sizeof quantity_strings[0]; i++)
    if (quantity_strings[i].val == (int64_t)q) return quantity_strings[i].str;
  return "unknown";
}

//---- what the schema has at a key path (for --set overrides, scene_override.c) ----

kn_scene_schema_kind kn_scene_schema_kind_at(const char* key_path) {
  const cyaml_schema_value_t* sv = schema_at_key_path(key_path);
  if (!sv) return KN_SCHEMA_NONE;
  switch (sv->type) {
    case CYAML_MAPPING: return KN_SCHEMA_MAPPING;
    case CYAML_SEQUENCE:
    case CYAML_SEQUENCE_FIXED: return KN_SCHEMA_LIST;
    case CYAML_FLOAT:
    case CYAML_INT:
    case CYAML_UINT:
    case CYAML_BOOL:
    case CYAML_ENUM:
    case CYAML_STRING: return KN_SCHEMA_SCALAR;
    default: return KN_SCHEMA_NONE;
  }
}

void kn_scene_schema_describe(const char* key_path, char* out, size_t cap) {
  describe_schema(schema_at_key_path(key_path), out, cap);
}

void kn_scene_schema_keys(const char* key_path, char* out, size_t cap) {
  field_list(schema_at_key_path(key_path), out, cap);
}

/* The same rules as libcyaml's load and check_number above: a number parses whole (and an int fits
 * its field), an enum (bools included) is one of its words. */
int kn_scene_schema_value_ok(const char* key_path, const char* value) {
  const cyaml_schema_value_t* sv = schema_at_key_path(key_path);
  if (!sv) return 0;
  if (sv->type == CYAML_FLOAT || sv->type == CYAML_INT || sv->type == CYAML_UINT) {
    if (!value[0] || isspace((unsigned char)value[0])) return 0;
    char* end;
    if (sv->type == CYAML_FLOAT) {
      (void)strtod(value, &end);
      return *end == 0;
    }
    long long v = strtoll(value, &end, 0);
    if (*end) return 0;
    if (sv->type == CYAML_UINT && v < 0) return 0;
    if (sv->data_size == 4) return sv->type == CYAML_INT ? v >= INT32_MIN && v <= INT32_MAX : v <= (long long)UINT32_MAX;
    return 1;
  }
  if (sv->type == CYAML_ENUM) {
    for (uint32_t i = 0; i < sv->enumeration.count; i++)
      if ((sv->flags & CYAML_FLAG_CASE_INSENSITIVE) ? strcasecmp(sv->enumeration.strings[i].str, value) == 0
                                                     : strcmp(sv->enumeration.strings[i].str, value) == 0)
        return 1;
    return 0;
  }
  if (sv->type == CYAML_BOOL) return !strcasecmp(value, "true") || !strcasecmp(value, "false");
  return sv->type == CYAML_STRING;
}
