/* knead/scene — scene files: YAML => a validated document (kn_scene), nothing of the world.
 *
 * A scene is a YAML file parsed by libcyaml against the schema in scene_schema.c into the plain structs
 * below (kn_scene_doc). Keys, all optional unless marked (defaults in brackets):
 *
 *   name: text                     [the file name without .yaml]
 *   time_step: s > 0               [0.001]
 *   duration: s >= 0               [1.0]
 *   gravity: [x, y, z]             [0, 0, -9.81]
 *   package_paths: [dir, ...]      relative to the scene file's folder; tried before
 *                                  KNEAD_PACKAGE_PATH and ROS_PACKAGE_PATH
 *   contact:
 *     backend: sap | penalty | ipc | smooth_friction | none   [sap]
 *                                  sap: the two-stage SAP step (backend_sap.c); smooth_friction:
 *                                  implicit smoothed friction in the shared nonlinear step
 *                                  (backend_nonlinear.c); penalty: Ding & Schroeder's anchored
 *                                  springs in the same step (nl_penalty.c); ipc: Incremental
 *                                  Potential Contact in the same step (nl_ipc.c); none: each tree
 *                                  alone by kn_mb_step, no contact
 *     smooth_friction: {thickness, stiffness, epsilon, static_ratio, stribeck_speed, viscous,
 *                       lagged, adaptive, solver: iterative|direct,
 *                       integrator: backward_euler|trapezoidal}   kn_scene_smooth
 *     penalty: {stiffness, tolerance, continuous, ablation: cpf|cpf_exact|dpf|dpf_ccd, epsilon_v, lag_lambda,
 *              anchored}   kn_scene_penalty
 *     ipc: {dhat, kappa, epsilon_v, epsilon_d, lagging_iterations, box_surfaces}   kn_scene_ipc
 *     margin: m >= 0               detection margin [0]. Rigid pairs are also detected where each
 *                                  side could travel to the other within the step: the pair's
 *                                  margin is margin + reach_a + reach_b, reach = dt (|v| + |w| r) +
 *                                  dt^2 |g| of the collider (kn_sim_collider_reach; 1 mm at rest at
 *                                  dt = 0.01), so touching bodies are never missed and a falling
 *                                  link meets the floor at its surface. Such speculative contacts
 *                                  carry no force unless the bodies close the gap. With the
 *                                  penalty backend an FEM body's candidates with the colliders
 *                                  get the same speculation: margin + the fastest free FEM
 *                                  vertex's dt |v| + dt^2 |g| + the largest collider reach
 *                                  (sim/candidates.c fem_reach), and so do its vertices' with the
 *                                  other FEM bodies' faces, except beside a fold of that surface
 *                                  (kn_contact_surface_near_fold); the FEM edge crossings and the
 *                                  other backends' FEM candidates only the margin.
 *     exclude: [[a, b], ...]       never touch: object, robot or "robot/link" collider names
 *     filter_groups: [{name, members: [names], ignore: [group names]}, ...]
 *                                  Drake-like collision filter groups: a member of a group never
 *                                  touches a member of a group it ignores (itself when listed)
 *     solver: {max_iterations, rel_tolerance, abs_tolerance, linear_solver: auto|dense|sparse,
 *              fem_schur: true|false, mpm_clique: auto|schur|grid}
 *                                  kn_sap_options [Drake's defaults, §4.7]; fem_schur and
 *                                  mpm_clique: kn_scene_solver. On the nonlinear backends
 *                                  (smooth_friction, penalty, ipc) only max_iterations applies
 *                                  (kn_nl_options: Newton iterations per attempt; default
 *                                  100, on ipc 1000: a large step is a quasi-static solve); their
 *                                  tolerances are velocity residuals with their own keys
 *   objects:
 *     - name: text                 (required, unique among objects and robots)
 *       shape: {box: [lx, ly, lz]} | {sphere: r} | {cylinder: [r, length]} |
 *              {capsule: [r, length]} | {halfspace: {normal: [3]}} | {mesh: file, scale: [3]}
 *       urdf: file                 (instead of shape) a URDF tree, floating unless fixed
 *       pose: {xyz, rpy}           [identity]; a halfspace passes through the pose's origin
 *       fixed: bool                welded to the world (halfspaces must be) [false]
 *       mass: kg | density: kg/m^3 free shapes, inertia of the shape at uniform density [1000];
 *                                  a free mesh must be closed: its volume, centre of mass and
 *                                  inertia come from kn_mesh_mass_properties
 *       friction, stiffness, dissipation_time: contact material [kn_contact_material_default: 0.5,
 *                                  1e6 N/m, dt / 2 s (a pair of defaults: dt, critically damped
 *                                  at the near-rigid limit); against FEM and MPM surfaces an unset
 *                                  dissipation_time is 0.1 s (KN_CONTACT_SOFT_DISSIPATION_TIME)];
 *                                  inf (not .inf) for rigid. Penalty takes an explicit stiffness
 *                                  as its spring's N/m, an unset one as 2 contact.penalty.stiffness
 *                                  (below, kn_scene_penalty)
 *                                  Sticking contacts keep stiction anchors (sim/stiction.h): a
 *                                  held object does not creep (ARCHITECTURE.md)
 *       velocity: [wx wy wz vx vy vz]  initial twist, body frame [0]
 *   robots:
 *     - name: text                 (required, unique)
 *       urdf: path                 (required) relative to the scene's folder, absolute,
 *                                  package://pkg/rest, or knead://models/<file> (embedded)
 *       base_pose: {xyz: [3], rpy: [3]}      root pose in the world [identity]
 *       floating: bool             root joins the world by a FLOATING joint [false]
 *       q0: [nq values]            initial positions, all nq coordinates [neutral]
 *       attach_to: {robot: name, link: name, pose: {xyz, rpy}}
 *                                  weld this robot's root onto a link of another robot: the two
 *                                  become one tree (exclusive with base_pose and floating)
 *       contact: {friction, stiffness, dissipation_time}   material of its collision geometry
 *       controller:
 *         type: pd                 [pd]
 *         joints: [names]          controlled joints [every non-mimic 1-DoF joint, in order]
 *         kp: number               broadcast to every controlled dof (or kp_per_joint: [ndof])
 *         kd: number               (or kd_per_joint: [ndof])           [0]
 *         gravity_compensation: bool                                 [true]
 *         effort_limits: [1 or ndof values]                          [the URDF effort limits]
 *         one reference (none: hold the controlled joints at q0):
 *         setpoint: [ndof]
 *         trajectory: {interpolation: linear | cubic, points: [{t, q: [ndof]}, ...]}
 *                 or  {interpolation: ..., csv: file}   (kn_traj_load_csv, relative to the scene)
 *         sequence: [{name, duration, q: [ndof]}, ...]  phases from q0 (kn_sequence)
 *   welds:                         (sap backend only; rigid, Drake's SapWeldConstraint, §5.4)
 *     - name: text                 [weld<i>]
 *       body_a: "robot/link" | object | "object/link" | world      (required)
 *       body_b: same                                               (required, not body_a)
 *       pose: {xyz, rpy}           frame P on body_a where body_b's frame is held (X_AB);
 *                                  absent: body_b is held at its relative pose at t = 0
 *   output (alias outputs): {dir: path, trajectory_rate: rows per second, contacts: bool,
 *                            solver: bool}   (contacts.csv and solver.csv, [false])
 *                                  dir is relative to the working directory (like the CLI's
 *                                  --out) [out/<scene name>]; rate 0 = every step [0]
 *           vtk: bool              frames/frame_NNNNN.vtu (rigid geometry tessellated at its world
 *                                  pose, FEM surfaces, MPM particles; point data velocity, cell data
 *                                  body_id) and frames.pvd, the time index ParaView opens [false].
 *                                  Binary: VTK XML appended raw data, zlib-compressed (header_type
 *                                  UInt64); a run removes the frame_NNNNN.vtu files it did not write
 *                                  (a longer earlier run's), and nothing else in frames/
 *           plots: bool            plots/<name>.svg by gnuplot: contact forces (per collider pair,
 *                                  per FEM and MPM body), joint tracking error, heights (free
 *                                  objects, FEM and MPM centroids); each curve has its own colour,
 *                                  dash pattern and marker (markers staggered between curves), so
 *                                  equal curves (two fingers' forces) both show; no gnuplot:
 *                                  skipped with a warning [false]
 *           html: bool             replay.html, an animation with three.js inlined (no network) [false]
 *           frame_rate: fps > 0    frames per second of vtk and html [30]
 *
 * libcyaml cannot give one key both a number and a list type, hence kp / kp_per_joint.
 *   deformables:                   (backends sap, smooth_friction, penalty) FEM bodies, each its own clique
 *     - name: text                 (required, unique among objects, robots and deformables)
 *       model: fem | mpm           [fem]; mpm: material point method (below)
 *       shape: {box: [lx, ly, lz]} | {sphere: r} | {cylinder: [r, l]} | {torus: [R, r]} |
 *              {mesh: file}        .msh / .vtk tets, or a closed OBJ/STL tetrahedralized by tetgen
 *       resolution: h              target edge length of the generators [smallest size / 4]
 *       material: {type: linear_corotated | corotated | neohookean | linear, youngs_modulus,
 *                  poisson_ratio, density, damping: {mass: alpha, stiffness: beta}}
 *                                  [kn_fem_material_default: Drake's DeformableBodyConfig]
 *       pose: {xyz, rpy}           [identity]
 *       velocity: [3]              initial velocity of every vertex [0]
 *       fixed: {box: {min: [3], max: [3]}} | {vertices: [...]}   body-frame box or indices
 *       attach: [{body: "robot/link" | object | "object/link" | world, box: {min, max}} |
 *                {body: ..., vertices: [...]}, ...]
 *                                  vertices (body-frame rest box or indices) held at their t = 0
 *                                  position in that body's frame: one SAP fixed constraint per
 *                                  vertex (§5.4); attached DoFs always join the Schur complement
 *       friction, stiffness, dissipation_time: contact material of its surface
 *     Contacts: each free surface vertex against every rigid collider (signed distance <
 *     contact.margin) and against the other FEM bodies' deformed surfaces; SAP gets the Schur
 *     complement of A on the contact vertices (contact.solver.fem_schur: false hands it the
 *     full A as a dense clique instead). trajectory.csv gets "<name>/cx,cy,cz" (the centroid, in
 *     the world frame [m]).
 *     model: mpm (digest §7): shape box | sphere | cylinder | mesh (closed OBJ/STL); resolution =
 *       grid spacing h [min size / 8]; particles_per_cell: 1, 8, 27, ... [8]; material: {type:
 *       linear_corotated | eos_fluid, youngs_modulus, poisson_ratio, density, yield_stress (von
 *       Mises, 0 = elastic), bulk_modulus, gamma} [kn_mpm_material_default]; region: {min, max}
 *       allowed grid region [+-1e3 m]; particle_jitter: 0..1 (fraction of the particle spacing by
 *       which each lattice point is moved, deterministically; breaks the lattice's flat faces,
 *       which make a round body roll like a polyhedron) [0]; contact_radius: each particle meets rigid
 *       colliders as a ball of this radius, phi taken to its surface [m] [0: a point]; half the
 *       particle spacing, h / (2 ppc^(1/3)), puts the contact surface at the body's own (a
 *       gripper's pads then squeeze the body's faces instead of settling between them and its
 *       outer particles' centers); grid: a name [""]: the MPM
 *       deformables with the same grid name share one background grid (one free motion, one SAP
 *       clique) and so interact through it, as one MPM body does with itself (a name given twice
 *       needs one resolution); different names never touch each other, which suits bodies kept
 *       apart by a rigid part thinner than about 3 cells, whose grid would couple them across it;
 *       pose, velocity, friction, stiffness, dissipation_time.
 *       One contact per particle inside a rigid collider (signed distance < contact.margin); SAP
 *       gets the Schur complement of A_MPM on the grid nodes supporting those particles, or, when
 *       they hold half the grid or more, the whole grid as a sparse clique in A_MPM's pattern
 *       (contact.solver.mpm_clique; the same SAP problem either way).
 *
 *   checks:                        scenario checks, evaluated after every step (check/checks.c);
 *                                  results in kn_world_checks and summary.json "checks"
 *     - name: text                 (required, unique among checks)
 *       type: height_above | height_below | distance_below | grasp_held | no_penetration |
 *             contact_force | solver_converged | follows_curve              (required)
 *       body: name                 height_*: an object, "robot/link", "object/link" or an FEM
 *                                  body (its centroid); grasp_held: the held object;
 *                                  follows_curve: an object, "robot/link", FEM or MPM body
 *       link: "robot/link"         grasp_held: the gripper link the object is held by
 *       bodies: [a, b]             distance_below: two bodies (origins / FEM centroids);
 *                                  contact_force: two collider names ("box", "gripper" matches
 *                                  every "gripper/..." collider), FEM bodies (their FEM
 *                                  contacts) or MPM bodies (their particle contacts with the
 *                                  other side's colliders); no_penetration: optional pair
 *                                  (rigid, FEM and MPM contacts)
 *       value: number              height_above: z > value [m]; height_below: z < value [m];
 *                                  distance_below: distance < value [m]; grasp_held: position
 *                                  drift < value [mm]; no_penetration: depth -phi < value [m];
 *                                  solver_converged: iterations < value [the solver's limit]
 *       rotation: deg              grasp_held: also the rotation drift < rotation [deg]
 *       min, max: N                contact_force: total normal force within [min, max]
 *       quantity: x | y | z | vx | vy | vz | speed | along | distance
 *                                  follows_curve (required): the body's point in the world [m],
 *                                  its velocity [m/s], its displacement from t = 0 along
 *                                  direction [m] or in distance [m]
 *       direction: [x, y, z]       follows_curve along: the direction (normalized)
 *       point: [x, y, z]           follows_curve: the point in the body's frame [origin]; on an
 *                                  FEM body the vertex nearest to it at rest [the centroid]
 *       formula: text              follows_curve: the reference, a formula of t: + - * / ^ ( ),
 *                                  sin cos tan sqrt exp log abs min max, numbers, t, pi, g
 *                                  (|gravity|), dt, duration and the file's scalar keys by path
 *                                  ("0.5*g*(sin(pi/4) - objects[1].friction*cos(pi/4))*t^2";
 *                                  read after --set overrides); or
 *       csv: file                  samples "t,value" (header optional), linearly interpolated;
 *                                  no reference outside them (the check fails there)
 *       tolerance, rel_tolerance   follows_curve: every sample needs |quantity - reference| <=
 *                                  tolerance + rel_tolerance |reference| (one or both) [0]
 *       after, before: s           the time window [0, duration]; grasp_held measures drift
 *                                  from the pose at the window's first sample
 *       expect: pass | fail        [pass]; fail marks an expected failure (knead check)
 *     Each check records pass/fail, the worst measured value and the time it occurred.
 *
 * Errors: syntax errors, unknown keys, wrong types and missing required keys are KN_ERR_PARSE
 * with "file:line: ..." and the key's path (e.g. robots[1].controller.kp); a number must parse
 * whole ("friction: 0.O5" is "'0.O5' is not a number", not 0); the name must be a plain file
 * name (no '/', '\', control characters, '.' or '..': outputs go to out/<name>); scene, URDF,
 * mesh and CSV files are regular files of at most KN_MAX_INPUT_BYTES (256 MiB); semantic errors
 * (time_step <= 0, q0 of the wrong length, an unknown robot in attach_to, ...) are KN_ERR_INVALID
 * naming the file, line and key the same way.
 *
 * Overrides (knead run / knead check --set key.path=value, kn_scene_load_with below) change one
 * scalar of the document before it is read, as if the file said it. */
#ifndef KNEAD_SCENE_H
#define KNEAD_SCENE_H

/* Contact material bounds of a scene (friction, stiffness of objects, robots and deformables):
 * no material pair comes near them, and beyond them double precision fails the contact solver: a
 * pair combines friction by the harmonic mean 2ab/(a+b) (1e300 overflowed to inf) and stiffness in
 * series k_a k_b / (k_a + k_b) (1e-300 underflowed to 0); either way SAP refused the first contact.
 * A large finite stiffness is safe (SAP's near-rigid regime caps it; `inf` is rigid: YAML's `.inf`
 * is not read by libcyaml). Material parameters of deformables: KN_MATERIAL_MAX_MODULUS and friends in deformable/deformable.h. */
#define KN_SCENE_MAX_FRICTION 1e3
#define KN_SCENE_MIN_STIFFNESS 1.0

#include <stdbool.h>

#include "../common/common.h"
#include "../controllers/controllers.h"

#ifdef __cplusplus
extern "C" {
#endif

/*---- scenes (scene.c, scene_schema.c, scene_validate.c, scene_lines.c, embedded.c) ----*/

typedef enum {
  KN_BACKEND_SAP = 0,
  KN_BACKEND_PENALTY,
  KN_BACKEND_IPC,
  KN_BACKEND_SMOOTH_FRICTION,
  KN_BACKEND_NONE
} kn_contact_backend;

const char* kn_contact_backend_name(kn_contact_backend b);

typedef struct {
  double xyz[3], rpy[3];
} kn_scene_pose;

typedef struct {
  double t;
  double* q;
  unsigned nq;
} kn_scene_knot;

typedef struct {
  kn_traj_interp interpolation;
  kn_scene_knot* points;
  unsigned npoints;
  char* csv;
} kn_scene_trajectory;

typedef struct {
  char* name;
  double duration;
  double* q;
  unsigned nq;
} kn_scene_phase;

typedef enum { KN_CONTROLLER_PD = 0 } kn_controller_type;

typedef struct {
  kn_controller_type type;
  char** joints;
  unsigned njoints;
  double* kp;               /* NULL when absent */
  double* kp_per_joint;
  unsigned nkp_per_joint;
  double* kd;
  double* kd_per_joint;
  unsigned nkd_per_joint;
  bool* gravity_compensation; /* NULL = true */
  double* effort_limits;
  unsigned neffort_limits;
  double* setpoint;
  unsigned nsetpoint;
  kn_scene_trajectory* trajectory;
  kn_scene_phase* sequence;
  unsigned nsequence;
} kn_scene_controller;

typedef struct {
  char* robot;
  char* link;
  kn_scene_pose pose;
} kn_scene_attach;

/* Per-geometry contact material keys (kn_contact_material); NULL = kn_contact_material_default. */
typedef struct {
  double* friction;
  double* stiffness;
  double* dissipation_time;
} kn_scene_material;

typedef struct {
  char* name;
  char* urdf;
  kn_scene_pose* base_pose;  /* NULL when absent */
  kn_scene_material* contact; /* material of the robot's collision geometry */
  bool floating;
  double* q0;
  unsigned nq0;
  kn_scene_attach* attach_to;
  kn_scene_controller* controller;
} kn_scene_robot;

typedef struct {
  double normal[3];
} kn_scene_halfspace;

/* Exactly one of box, sphere, cylinder, capsule, halfspace, mesh. */
typedef struct {
  double* box;              /* full extents (3) */
  double* sphere;           /* radius */
  double* cylinder;         /* (radius, length) along z */
  double* capsule;          /* (radius, length of the cylinder part) along z */
  kn_scene_halfspace* halfspace; /* through the pose's origin, normal in the pose frame */
  char* mesh;               /* file, relative to the scene */
  double* scale;            /* mesh scale (3) [1 1 1] */
} kn_scene_shape;

typedef struct {
  char* name;               /* (required, unique among objects and robots) */
  kn_scene_shape* shape;    /* shape or urdf */
  char* urdf;
  kn_scene_pose pose;
  bool fixed;               /* welded to the world [false] */
  double* mass;             /* free objects: mass [kg] (or density) */
  double* density;          /* [kg/m^3] [1000] */
  double* friction;         /* contact material (kn_contact_material_default) */
  double* stiffness;
  double* dissipation_time;
  double* velocity;         /* initial [wx wy wz vx vy vz], body frame (6) [0] */
} kn_scene_object;

typedef struct {
  char* names[2];
} kn_scene_pair;

typedef struct {
  int* max_iterations;
  double* rel_tolerance;
  double* abs_tolerance;
  int linear_solver;        /* kn_sap_linear_solver: auto | dense | sparse */
  bool* fem_schur;          /* FEM cliques: Schur complement on the contact DoFs (true) or the
                               full A as one dense clique (false, a check for small bodies; MPM
                               grids too) [true] */
  int mpm_clique;           /* kn_scene_mpm_clique: how an MPM grid enters SAP [auto] */
} kn_scene_solver;

/* contact.solver.mpm_clique: schur = the Schur complement of A_MPM on the contact particles'
 * support nodes (dense); grid = the whole grid as a sparse clique in A_MPM's pattern (CHOLMOD);
 * auto = grid when the support holds at least half of the grid's DoFs and 300 or more */
typedef enum { KN_SCENE_MPM_AUTO = 0, KN_SCENE_MPM_SCHUR, KN_SCENE_MPM_GRID } kn_scene_mpm_clique;

/* deformables[i].shape: exactly one (sizes as the kn_tet_mesh generators; mesh: .msh / .vtk
 * tets, or a closed OBJ/STL surface tetrahedralized by tetgen). */
typedef struct {
  double* box;              /* (lx, ly, lz) */
  double* sphere;           /* r */
  double* cylinder;         /* (r, length) along z */
  double* torus;            /* (R, r) */
  char* mesh;               /* file, relative to the scene */
} kn_scene_fem_shape;

typedef struct {
  double* mass;             /* Rayleigh alpha [1/s] */
  double* stiffness;        /* Rayleigh beta [s] */
} kn_scene_fem_damping;

typedef struct {
  int type;                 /* KN_SCENE_FEM_TYPE(kn_fem_model) or KN_SCENE_MPM_EOS_FLUID; 0: not
                               given [linear_corotated] */
  double* youngs_modulus;   /* [Drake's defaults, kn_fem_material_default] */
  double* poisson_ratio;
  double* density;
  kn_scene_fem_damping* damping;
  double* yield_stress;     /* MPM: von Mises eta [Pa] [0: elastic] */
  double* bulk_modulus;     /* MPM eos_fluid: kappa [Pa] */
  double* gamma;            /* MPM eos_fluid: exponent > 1 */
} kn_scene_fem_material;

/* material.type as the document holds it: a kn_fem_model offset by one, so that 0 (what an omitted
 * optional key leaves) means "not given" and not KN_FEM_LINEAR; eos_fluid (MPM only) after them */
#define KN_SCENE_FEM_TYPE(model) ((int)(model) + 1)
#define KN_SCENE_MPM_EOS_FLUID 100

typedef struct {
  double min[3], max[3];
} kn_scene_box_region;

typedef struct {
  kn_scene_box_region* box; /* body-frame box: vertices inside are fixed */
  int* vertices;
  unsigned nvertices;
} kn_scene_fem_fixed;

/* deformables[i].attach[j]: the FEM vertices whose rest positions (body frame) lie in box, or the
 * listed ones, held at their t = 0 position in the frame of `body` (SAP fixed constraints, §5.4). */
typedef struct {
  char* body;               /* "robot/link", an object, "object/link" or "world" (required) */
  kn_scene_box_region* box; /* exactly one of box and vertices */
  int* vertices;
  unsigned nvertices;
} kn_scene_fem_attach;

typedef enum { KN_DEFORMABLE_FEM = 0, KN_DEFORMABLE_MPM } kn_deformable_model;

/* deformables[i]: an FEM body (sap backend only), its own SAP clique. */
typedef struct {
  char* name;               /* (required, unique among objects, robots and deformables) */
  int model;                /* kn_deformable_model: fem (mpm is rejected) [fem] */
  kn_scene_fem_shape* shape;/* (required) */
  double* resolution;       /* target edge length h [m] (generators) [min size / 4] */
  kn_scene_fem_material* material;
  kn_scene_pose pose;
  double* velocity;         /* initial velocity of every vertex (3) [0] */
  kn_scene_fem_fixed* fixed;
  kn_scene_fem_attach* attach; /* vertices attached to rigid bodies */
  unsigned nattach;
  double* friction;         /* contact material of its surface (kn_contact_material_default) */
  double* stiffness;
  double* dissipation_time;
  int* particles_per_cell;  /* MPM: n^3 particles per grid cell [8] */
  double* particle_jitter;  /* MPM: random offset of each lattice point, fraction of its spacing [0, 1) [0] */
  double* contact_radius;   /* MPM: each particle meets rigid colliders as a ball of this radius [m] [0] */
  kn_scene_box_region* region; /* MPM: allowed grid region (world) [+-1e3 m] */
  char* grid;               /* MPM: name of the grid it shares [""] (see above) */
  double* volume_compressibility; /* FEM, smooth_friction: isothermal compressibility kappa_v of the
                               body's enclosed volume [1/atm], a soft volume constraint
                               W = P_atm (V - V0)^2 / (2 V0 kappa_v) on its closed surface (digest
                               implicit-smooth-friction §3.5: 1 air-like, 4.6e-5 water) [none] */
} kn_scene_deformable;

/* contact.filter_groups[i] (Drake's CollisionFilterDeclaration): members never touch members of
 * the groups named in ignore (itself included when listed). */
typedef struct {
  char* name;
  char** members;           /* object, robot or "robot/link" collider names */
  unsigned nmembers;
  char** ignore;            /* group names */
  unsigned nignore;
} kn_scene_filter_group;

/* welds[i]: frame P on body_a coincides with frame Q on body_b (SAP weld, digest §5.4). */
typedef struct {
  char* name;               /* [weld<i>] */
  char* body_a;             /* "robot/link", an object, "object/link" or "world" */
  char* body_b;
  kn_scene_pose* pose;      /* X_AP with Q = body_b's frame; NULL: hold the relative pose at t = 0 */
} kn_scene_weld;

/* contact.smooth_friction: the smooth_friction backend's keys (sim/backend_nonlinear.c; digest
 * implicit-smooth-friction.md §3.3-3.11), each optional */
typedef struct {
  double* thickness;        /* delta: the cubic penalty acts below this gap [m] [1e-4] */
  double* stiffness;        /* kappa at the start [N/m] [1e5], raised after a step that ends
                               penetrating (adaptive: true) */
  double* epsilon;          /* friction smoothing speed [m/s] [1e-3]: a held object creeps below
                               it (the digest's tests and the reference scenes' value; 1e-4 made
                               Newton stall on grasps at the stick-slip transition) */
  double* static_ratio;     /* Stribeck: mu_s / mu_d [1: none] */
  double* stribeck_speed;   /* v_s [m/s] [10 epsilon] */
  double* viscous;          /* mu_v [N s/m] [0] */
  bool* lagged;             /* friction's lambda and basis at the step start (IPC's) [false] */
  bool* adaptive;           /* raise kappa and redo a step that ends penetrating (§3.9) [true] */
  int solver;               /* kn_scene_nl_solver: the Newton systems [iterative] */
  int integrator;           /* kn_scene_smooth_integrator [backward_euler] */
} kn_scene_smooth;
/* contact.smooth_friction.integrator (digest §3.6): backward_euler, L-stable; trapezoidal = the
 * trapezoidal rule on the whole force, contact and friction included (second order, keeps energy:
 * not damped, |R| = 1 for every stiff mode). Trees and FEM bodies only: a scene with an MPM body is
 * refused. Robot-side terms (implicit PD, joint limits, couplers, welds, attachments) stay implicit
 * at the end of the step under either. */
typedef enum { KN_SCENE_SMOOTH_BACKWARD_EULER = 0, KN_SCENE_SMOOTH_TRAPEZOIDAL } kn_scene_smooth_integrator;
/* contact.smooth_friction.solver: iterative = BiCGSTAB preconditioned by the Cholesky factor of the
 * Jacobian's symmetric part (Algorithm 2's inexact Newton); direct = UMFPACK's LU (Algorithm 1) */
typedef enum { KN_SCENE_NL_ITERATIVE = 0, KN_SCENE_NL_DIRECT } kn_scene_nl_solver;

/* contact.penalty: the penalty backend's keys (sim/nl_penalty.c; digests penalty-coulomb-friction.md
 * and continuous-penalty-forces.md), each optional */
typedef struct {
  double* stiffness;        /* k of the spring between two bodies that set no contact material
                               stiffness [N/m] [1e5] (the paper's scenes use 1 to 1e6): a held load
                               F per contact sinks F / k. The same default for the discrete springs
                               (28 of the 31 fidelity checks at 1e5, 23 at 1e4) and the continuous
                               pairs (the held box's drift a tenth of SAP's; was 1e4 until their
                               force was weighted for the implicit step: ARCHITECTURE.md, penalty,
                               "One default k").
                               The bodies' `stiffness` keys (objects, robots' contact, deformables)
                               count: a pair's k is its two sides in series, k_a k_b / (k_a + k_b),
                               a side that sets none standing as 2 k (so two of them give k), an inf
                               side leaving the other; two inf sides are refused when they touch
                               (sim/penalty_stiffness.h; discrete springs and continuous pairs) */
  double* tolerance;        /* Newton's stopping test on max |M^-1 r| [m/s] [1e-8]: a velocity error,
                               not the paper's unscaled tau = 1 (digest §7 item 2) */
  bool* continuous;         /* Tang et al.'s continuous penalty forces [false]: true replaces the
                               anchored springs by vertex-face and edge-edge pairs of the triangle
                               surfaces (FEM bodies' boundaries, box and mesh colliders), found by
                               CCD on the step's predicted path (and again on the solved one), each
                               a spring of `stiffness` integrated over its penetration intervals,
                               implicit in the Newton solve, with Coulomb friction of the pair's
                               combined mu bounded by its own normal force (anchored springs by
                               default, smoothed with epsilon_v if anchored: false;
                               penalty/cpf_friction.c, sim/penalty_cpf.c).
                               Mixed scenes: contacts with a sphere, cylinder, capsule or
                               half-space collider on either side, and MPM particles, keep the
                               discrete springs in the same solve (kn_penalty_cpf_covers) */
  int* ablation;            /* kn_scene_penalty_ablation, with continuous: true only (else refused)
                               [cpf] */
  double* epsilon_v;        /* with continuous: true and anchored: false only (else refused): the
                               smoothed friction's velocity [m/s] [3e-3]: below it friction ramps up (IPC's
                               f1), so a sticking pair creeps at less than epsilon_v (on a slope
                               at |f_t| = 0.8 mu f_n: 0.55 epsilon_v). 3e-3 because Newton then
                               converged on all nine rigid regression grasps and the soft cube
                               with continuous: true (measured before the anchored default and
                               the pair rules of sim/penalty_cpf.c), and failed on box_40mm at 1e-3, 5e-3 and
                               1e-2 (not monotonic: fragile; the pads' mu 1 with the exact
                               lambda); set 1e-4 for a precise stop (the incline of
                               test_penalty_cpf_friction.c) */
  bool* lag_lambda;         /* with continuous: true only (else refused) [false]: true lags each
                               pair's friction lambda (its normal force at the last solve, the step
                               re-solved while one moves by more than 1e-3 of itself, at most 5
                               times) and lets the mixed mode's lagged passes root-find instead of
                               minimizing the springs' energy (the pairs' force has none). Measured
                               with it: the ten rigid regression scenes converge at epsilon_v 1e-3,
                               3e-3, 5e-3 and 1e-2 but box_low_friction_fails at 1e-2 (34 of 40
                               without). Off by default: soft_cube_coarse then needs 107 Newton
                               iterations at t = 1 s (its check: < 100) */
  bool* anchored;           /* with continuous: true only (else refused) [true]: each pair's friction
                               is an anchored tangential spring of `stiffness` between its two
                               features (the anchor carried with the pair, slid onto the Coulomb
                               cone after each step, as the discrete springs': no creep;
                               kn_cpf_anchor_friction); false: the smoothed Coulomb of epsilon_v
                               (which creeps below epsilon_v; epsilon_v is refused with true) */
} kn_scene_penalty;
/* contact.penalty.ablation (continuous-penalty-forces.md §5.6): cpf (closed form with the constant
 * normalizer L_k, the default), cpf_exact (the exact normalizer, 8 panels of 3-point Gauss-Legendre
 * per interval), dpf (the backend's discrete springs at the step's end, continuous: false's term
 * with its friction and anchors), dpf_ccd (-k delta(1) n(1) on the CCD pairs, constant over the step) */
typedef enum { KN_SCENE_CPF = 0, KN_SCENE_CPF_EXACT, KN_SCENE_DPF, KN_SCENE_DPF_CCD } kn_scene_penalty_ablation;
/* contact.ipc: the ipc backend's keys (sim/nl_ipc.c; digest incremental-potential-contact.md §3.5,
 * §3.6, §5.6, §8), each optional; l is the diagonal of the bounding box at t = 0 of the bodies
 * simulated: free objects (their colliders' boxes), FEM vertices and MPM particles (balls of their
 * contact_radius), not the robots' links (an arm made dhat 1.2 mm on a 5 cm box); a robot's links
 * only when nothing else moves; 1 m when nothing does. Bodies placed exactly touching (phi within
 * 1e-9 l: a box on the floor at z = h / 2) are taken: such a pair's barrier zero is moved to
 * phi0 - dhat / 2 for its first step, so it starts at dhat / 2 and is pushed out to its resting gap;
 * bodies overlapping deeper than 1e-6 l at t = 0 are refused, naming the pair */
typedef struct {
  double* dhat;             /* barrier activation distance [m] [1e-3 l] */
  double* kappa;            /* barrier stiffness, fixed [automatic: the gradient balance of §3.5
                               at the first step that starts with a pair within dhat, between
                               kappa_min and kappa_max, then kept; doubled while a pair ends closer
                               than 1e-9 l] */
  double* epsilon_v;        /* friction smoothing speed [m/s] [1e-3 l] */
  double* epsilon_d;        /* Newton tolerance: max |D r|, a velocity error [m/s] [1e-6 l: the
                               digest's 1e-2 l assumes Newton always takes one iteration, and the
                               shared solver may take none (ARCHITECTURE "ipc")] */
  int* lagging_iterations;  /* Newton solves per step, each with friction's normal force lagged at
                               the one before (the first at the step start), 1..6 [1] */
  bool* box_surfaces;       /* rigid boxes take part as triangle surfaces, like mesh colliders: the
                               point-triangle and edge-edge pairs (mollifier, CCD) of two boxes, a box
                               and a mesh or FEM body replace the box's detection candidates with them
                               [false]: two boxes meeting edge on parallel edge have no box-box
                               normal (the free-standing card pair slips at mu 0.5 without it), but
                               boxes placed exactly touching each other are then refused like meshes
                               and a grasp's finger boxes cost ~100x (ARCHITECTURE "ipc") */
} kn_scene_ipc;

typedef struct {
  kn_contact_backend backend;
  double* margin;           /* detection margin [m] [0] */
  kn_scene_pair* exclude;   /* [[a, b], ...]: object, robot or "robot/link" names */
  unsigned nexclude;
  kn_scene_filter_group* filter_groups;
  unsigned nfilter_groups;
  kn_scene_solver* solver;  /* SAP solver options (kn_sap_options); the nonlinear backends read
                               max_iterations, rel_tolerance, abs_tolerance (kn_nl_options) */
  kn_scene_smooth* smooth_friction;
  kn_scene_penalty* penalty;
  kn_scene_ipc* ipc;
} kn_scene_contact;

typedef struct {
  char* dir;
  double trajectory_rate;
  bool contacts;            /* write contacts.csv [false] */
  bool solver;              /* write solver.csv [false] */
  bool vtk;                 /* frames/frame_NNNNN.vtu + frames.pvd for ParaView (output_vtk.c) [false] */
  bool plots;               /* plots/<name>.svg drawn by gnuplot (output_plot.c) [false] */
  bool html;                /* replay.html, a self-contained three.js replay (output_html.c) [false] */
  double* frame_rate;       /* frames per second of vtk and html [30] */
} kn_scene_output;

typedef enum {
  KN_CHECK_HEIGHT_ABOVE = 0,
  KN_CHECK_HEIGHT_BELOW,
  KN_CHECK_DISTANCE_BELOW,
  KN_CHECK_GRASP_HELD,
  KN_CHECK_NO_PENETRATION,
  KN_CHECK_CONTACT_FORCE,
  KN_CHECK_SOLVER_CONVERGED,
  KN_CHECK_FOLLOWS_CURVE
} kn_check_type;

/* follows_curve's quantity: a coordinate of the body's point (world frame), its velocity, its
 * displacement from the window's first sample along a direction or in distance */
typedef enum {
  KN_QUANTITY_X = 0,
  KN_QUANTITY_Y,
  KN_QUANTITY_Z,
  KN_QUANTITY_VX,
  KN_QUANTITY_VY,
  KN_QUANTITY_VZ,
  KN_QUANTITY_SPEED,
  KN_QUANTITY_ALONG,
  KN_QUANTITY_DISTANCE
} kn_check_quantity;

/* checks[i] (check/checks.c): keys by type as documented at the top of this file. */
typedef struct {
  char* name;               /* (required, unique) */
  int type;                 /* kn_check_type (required) */
  char* body;
  char* link;
  char** bodies;            /* two names */
  unsigned nbodies;
  double* value;
  double* rotation;         /* grasp_held [deg] */
  double* min;              /* contact_force [N] */
  double* max;
  double* after;            /* window [s] [0, duration] */
  double* before;
  int expect;               /* 0 pass, 1 fail [pass] */
  int quantity;             /* follows_curve: kn_check_quantity (required) */
  double* direction;        /* follows_curve along: 3 values (normalized when read) */
  double* point;            /* follows_curve: body-frame point (rigid) or rest point (FEM: its nearest vertex) */
  char* formula;            /* follows_curve: reference of t (kn_expr_compile), or */
  char* csv;                /* a CSV of samples "t,value" (linear interpolation), relative to the scene */
  double* tolerance;        /* follows_curve: |value - reference| <= tolerance + rel_tolerance |reference| */
  double* rel_tolerance;
} kn_scene_check;

/* The document as libcyaml loads it; pointers are NULL (counts 0) for absent optional keys. */
typedef struct {
  char* name;
  double* time_step;
  double* duration;
  double* gravity;          /* 3 values */
  char** package_paths;
  unsigned npackage_paths;
  kn_scene_contact* contact;
  kn_scene_robot* robots;
  unsigned nrobots;
  kn_scene_object* objects;
  unsigned nobjects;
  kn_scene_weld* welds;
  unsigned nwelds;
  kn_scene_deformable* deformables;
  unsigned ndeformables;
  kn_scene_output* output;
  kn_scene_output* outputs; /* alias of output */
  kn_scene_check* checks;
  unsigned nchecks;
} kn_scene_doc;

typedef struct kn_scene_lines kn_scene_lines; /* key path -> line index (scene_lines.c) */

/* A loaded and validated scene with defaults filled in. */
typedef struct {
  kn_scene_doc* doc;        /* libcyaml-owned */
  char* path;               /* the file ("knead://default_scene.yaml" when embedded) */
  char* dir;                /* its folder: relative paths resolve here (NULL when embedded) */
  char* name;               /* doc->name or the file stem */
  double time_step, duration, gravity[3];
  kn_contact_backend backend;
  double margin;            /* contact.margin [0] */
  const kn_scene_output* output; /* may be NULL */
  char** package_paths;     /* resolved against dir */
  int npackage_paths;
  kn_scene_lines* lines;
  char** overrides;         /* the --set overrides applied, "key.path=value", in order (summary.json) */
  int noverrides;
  struct kn_scene_curve* curves; /* per check: follows_curve's reference (compiled formula or CSV
                                    samples), empty for the other types (scene_validate.c) */
} kn_scene;

/* Parse and validate the YAML text `yaml` (len bytes); `path` names it in messages and its folder
 * resolves relative paths (NULL folder when path starts with knead://). *out owns everything. */
kn_status kn_scene_load_string(const char* yaml, size_t len, const char* path, kn_scene** out, kn_error* err);
/* Read `path` and kn_scene_load_string it; KN_ERR_IO when it cannot be read. */
kn_status kn_scene_load(const char* path, kn_scene** out, kn_error* err);
/* --set overrides (scene_override.c): as kn_scene_load_string / kn_scene_load, with `overrides[0..n)`,
 * each "key.path=value", applied in order to the YAML document before it is read, so the schema, the
 * validation, the defaults and the world see it exactly as if the file said it. The key path is
 * the one messages name: contact.margin, objects[1].friction, robots[0].controller.kp, gravity[2],
 * deformables[0].material.youngs_modulus. Its value must be one scalar in the schema (a number,
 * true/false, an enum word, text); the value is taken as typed, or as one quoted YAML scalar
 * ('...' or "..."). An existing scalar is replaced; a key the file lacks is added to its mapping,
 * and the mappings above it are created when the schema has them (contact.margin in a scene
 * without contact:, contact.solver.max_iterations); list entries are never created (a list the
 * file lacks, or an index past its end, is an error). Values shared through a YAML alias change
 * only at the path set. Errors (KN_ERR_PARSE for an unknown key or a value of the wrong type,
 * KN_ERR_INVALID otherwise; nothing is loaded): "--set key=value: why" for an override that cannot
 * be applied (no '=', an empty key, an unknown key, a list index past the end, a path through a
 * single value, a key whose value is a mapping or a list); a value the validation refuses gives
 * the scene's usual "file:line: key.path: ..." with " (set by --set key.path=value)". The loaded
 * scene records the overrides (kn_scene.overrides; kn_scene_fail names them too). n = 0 is
 * kn_scene_load / kn_scene_load_string. */
kn_status kn_scene_load_with(const char* path, const char* const* overrides, int n, kn_scene** out, kn_error* err);
kn_status kn_scene_load_string_with(const char* yaml, size_t len, const char* path, const char* const* overrides,
                                    int n, kn_scene** out, kn_error* err);
/* The embedded default scene (examples/default_scene.yaml at build time). */
kn_status kn_scene_load_default(kn_scene** out, kn_error* err);
void kn_scene_free(kn_scene* s);
/* 1-based line of the key at `key_path` ("robots[0].q0") in the scene file, 0 when unknown. */
int kn_scene_line(const kn_scene* s, const char* key_path);
/* Fail with (status, "file:line: key_path: " + message); returns status. */
kn_status kn_scene_fail(const kn_scene* s, kn_error* err, kn_status status, const char* key_path, const char* fmt,
                        ...) __attribute__((format(printf, 5, 6)));

/* Files embedded at build time: "default_scene.yaml", "models/knead_arm7.urdf", ... (NUL-terminated
 * text). Returns NULL when `name` (without the knead:// prefix) is not embedded. */
const char* kn_embedded_file(const char* name, size_t* len);
/* the number of embedded files and the i-th name, for listings */
int kn_embedded_count(void);
const char* kn_embedded_name(int i);

/* Resolve a scene-relative, absolute or package:// filename to a path on disk: package paths in
 * order, then KNEAD_PACKAGE_PATH and ROS_PACKAGE_PATH (colon-separated); package `pkg` is
 * <path>/pkg or <path>/<any>/pkg. Returns a malloc'd path or NULL (err says what was tried). */
char* kn_scene_resolve_path(const kn_scene* s, const char* uri, kn_error* err);

/* "height_above", ... (the checks[i].type names) */
const char* kn_check_type_name(kn_check_type t);
/* "x", "along", ... (the checks[i].quantity names) */
const char* kn_check_quantity_name(kn_check_quantity q);

/*---- formulas of t (scene_expr.c): follows_curve's analytic reference ----*/

/* A compiled formula: + - * / ^ (right associative, above unary minus: -2^2 = -4), parentheses,
 * sin cos tan sqrt exp log abs (1 argument), min max (2), numbers, t and pi; any other name is
 * asked of `names` once, at compile time (KN_OK and its value; otherwise an error whose message,
 * if any, says why). */
typedef struct kn_expr kn_expr;
typedef kn_status (*kn_expr_name_fn)(void* ctx, const char* name, double* value, kn_error* err);
/* (text, resolver) => *out; KN_ERR_PARSE "at column N: what was expected" (the caller names the
 * file, line and key). names may be NULL. */
kn_status kn_expr_compile(const char* text, kn_expr_name_fn names, void* ctx, kn_expr** out, kn_error* err);
/* (formula, t) => its value (IEEE rules: sqrt(-1) is NaN, 1/0 inf) */
double kn_expr_eval(const kn_expr* e, double t);
void kn_expr_free(kn_expr* e);

/* checks[i]'s reference curve (follows_curve): a formula, or CSV samples (t ascending) */
typedef struct kn_scene_curve {
  kn_expr* formula;
  double *t, *value;
  int n;
} kn_scene_curve;
/* (curve, t) => the reference: the formula, or the samples linearly interpolated (NaN outside
 * [t_0, t_n-1]: a CSV says nothing there); NaN for an empty curve */
double kn_scene_curve_eval(const kn_scene_curve* c, double t);

#ifdef __cplusplus
}
#endif
#endif
