/* knead/sim — the world built from a scene document (scene/scene.h), its time step with the contact
 * backend seam (backend.h), observers of the step, saved states and the version. What a run writes
 * is output/ (output/output.h), checks and golden baselines check/ (check/check.h): both read the
 * world, the world knows neither.
 *
 * The world: model (one tree per robot that is not attached to another, controllers, options),
 * state (t, q and v of each tree) and scratch (kinematics data, actuation buffers, a backup of
 * the state for transactional steps), all allocated by kn_world_create; kn_world_step does not
 * allocate. */
#ifndef KNEAD_SIM_H
#define KNEAD_SIM_H

#include "../common/common.h"
#include "../contact/contact.h"
#include "../controllers/controllers.h"
#include "../coupling/coupling.h"
#include "../deformable/deformable.h"
#include "../mpm/mpm.h"
#include "../multibody/multibody.h"
#include "../urdf/urdf.h"
#include "../scene/scene.h"

#ifdef __cplusplus
extern "C" {
#endif

/*---- the world (world.c, objects.c, colliders.c, deformables.c, mpm_world.c, step.c) ----*/

/* One robot of the scene: where its coordinates live in its tree. */
typedef struct {
  char* name;
  char* urdf;               /* as written in the scene */
  int tree;                 /* index into kn_world.trees */
  int body_offset, nbody;   /* its bodies in the tree */
  int q_offset, nq, v_offset, nv;
  int dofs;                 /* kn_robot_dofs of the robot alone */
  int attached_to;          /* robot index, -1 for a tree root */
  int ncolumn;              /* trajectory.csv columns (its nq coordinates) */
  char** columns;           /* "robot/joint" (+ "/x"... for multi-coordinate joints) */
} kn_world_robot;

/* One object of the scene: a one-body tree (free: FLOATING root; fixed: welded to the world,
 * nv = 0) or, with urdf:, the URDF's tree. */
typedef struct {
  char* name;
  int tree;                 /* index into kn_world.trees */
  int fixed;
  int ncolumn;              /* trajectory.csv columns: "name/x" ... "name/qz" for a free body */
  char** columns;
} kn_world_object;

/* One collision geometry of the world (kn_collider) with its name for outputs. */
typedef struct {
  char* name;               /* "object", "object/link" or "robot/link" */
  int tree;                 /* tree whose body carries it */
  int body;                 /* body index in that tree */
  int owner;                /* robot index, or -(object index) - 1 */
  kn_collider c;            /* c.clique = tree with nv > 0, else -1 (world-fixed, c.body -1) */
  kn_contact_material soft; /* its material against FEM and MPM surfaces: c.material, but an unset
                               dissipation_time is KN_CONTACT_SOFT_DISSIPATION_TIME there */
} kn_world_collider;

/* One contact point of the last step, with its force (gamma / dt): a rigid candidate, or after them a
 * mesh pair between two rigid colliders (penalty's continuous mode; sim/candidates.h). */
typedef struct {
  int a, b;                 /* collider indices; the normal points from a into b */
  double p[3], n[3], phi;
  double f[3];              /* force on b, world frame [N] (on a: -f) */
} kn_world_contact;

/* One FEM contact of the last step (contact/contact.h, KN_CANDIDATE_FEM_*): side B is FEM body fem_b,
 * side A is collider a_collider or FEM body a_fem (the other is -1); kind: 0 FEM vertex in a rigid
 * collider, 1 FEM vertex at another FEM body's surface, 2 rigid feature point in an FEM face (the
 * detection's candidates), 3 a vertex-face and 4 an edge-edge mesh pair of the penalty backend's
 * continuous mode or of ipc's mesh term (sim/candidates.h kn_sim_pair_contact). */
typedef struct {
  int fem_b, a_collider, a_fem, kind;
  double p[3], n[3], phi;   /* n from A into B */
  double f[3];              /* force on B, world frame [N] (on A: -f) */
} kn_world_fem_contact;

/* One MPM particle contact of the last step (sap backend): particle `particle` of MPM deformable
 * `mpm` (side A) inside collider `collider` (side B). */
typedef struct {
  int mpm, particle, collider;
  double p[3], n[3], phi;   /* n from the particle into the collider */
  double f[3];              /* force on the collider, world frame [N] (on the particle: -f) */
} kn_world_mpm_contact;

/* Solver numbers of one step, and their accumulation over a run. */
typedef struct {
  int iterations, line_search_iterations, contacts, constraints;
  int factorizations;       /* sparse or dense numeric factorizations in the contact solve */
  int krylov_iterations;    /* products with the system matrix inside iterative linear solves (SAP's
                               CG on a reused factor, the nonlinear backends' BiCGSTAB) */
  double residual;
  double tolerance;         /* the bound the step's residual met (nonlinear backends: the Newton test
                               abs_tol + rel_tol max |v|, m/s: ipc's eps_d; 0 where not reported) */
  /* wall seconds of the last step by stage (sap backend; 0 otherwise): controllers and free
   * motion (trees and FEM Newton), contact detection (rigid and FEM), SAP (FEM Schur complements,
   * constraint assembly, the solve and the Schur recovery), advance (q_n+1, FEM x_n+1 and R0) */
  double time_free_motion, time_detect, time_sap, time_advance;
} kn_step_stats;
typedef struct {
  long steps;
  long iterations, line_search_iterations, contacts;
  int max_iterations, max_line_search_iterations, max_contacts;
  double max_residual;
} kn_run_stats;

struct kn_backend; /* the contact backend seam (sim/backend.h) */
struct kn_world_observer_ops; /* watchers of the step (below) */
struct json_t;                /* jansson's value (summary.json sections of observers) */
typedef struct {
  const struct kn_world_observer_ops* ops;
  void* self;               /* owned by the world from kn_world_add_observer on */
} kn_world_observer;

/* One FEM body of the scene (deformables[i]): its model and state live in body. */
typedef struct {
  char* name;
  kn_fem_body* body;
  kn_contact_material material; /* of its surface */
  int nsurf_vert;           /* vertices on the surface */
  int* surf_vert;
  double force[3];          /* total contact force on it in the last step [N] */
  /* attachments (deformables[i].attach): vertex body->attach_vertex[k] is held at attach_point
   * (3 k ..) of target body->attach_body[k], an index into attach_tree / attach_link */
  int ntarget;
  int *attach_tree, *attach_link; /* per target: tree and body; tree -1: the world */
  double* attach_point;     /* 3 * body->nattach: in the body's frame (in the world when tree -1) */
  double attach_force[3];   /* total attachment force on it in the last step [N] (on the rigid
                               bodies: the opposite) */
  /* backup of the state for transactional steps */
  double *x_backup, *v_backup, *R0_backup;
} kn_world_fem;

/* One MPM body of the scene (deformables[i] with model: mpm, sim/mpm_world.c). */
typedef struct {
  char* name;
  int scene_index;          /* its deformables[] index */
  kn_mpm_body* body;        /* its particles: a view into its grid's body when it shares a grid */
  int grid, first;          /* its grid (w->mpm_grids index) and the offset of its particles there */
  kn_contact_material material; /* of its particles */
  double contact_radius;    /* its particles' contact radius [m] (deformables[i].contact_radius) */
  double force[3];          /* total contact force on it in the last step [N] */
  double* collider_force;   /* 3 * ncollider: force of its contacts on each collider in the last step [N] */
  int ncontact;             /* its particle contacts in the last step */
  void* backup;             /* kn_mpm_state for transactional steps */
} kn_world_mpm;

/* One kinematic tree: a root robot with everything attached to it, or an object. */
typedef struct {
  kn_robot* robot;          /* merged model and geometry; robot->model->name is the root's */
  int root;                 /* robot index of the root, -1 for an object's tree */
  int object;               /* object index, -1 for a robot's tree */
  kn_controller** ctrls;
  int nctrl;
  /* scratch */
  kn_mb_data* data;
  kn_ctrl_buffers* buf;
  double* q_backup;
  double* v_backup;
  /* state */
  double* q;
  double* v;
} kn_world_tree;

typedef struct {
  const kn_scene* scene;    /* not owned; must outlive the world */
  int nrobot, ntree;
  kn_world_robot* robots;
  kn_world_tree* trees;
  kn_diag warnings;         /* URDF warnings, prefixed with the robot name; pairs of bodies that
                               start interpenetrating deeper than contact.margin (one per pair) */
  int nobject;
  kn_world_object* objects;
  int ncollider;
  kn_world_collider* colliders;
  kn_collision_scene* collision; /* NULL when fewer than 2 colliders and no FEM body */
  int nfem;
  kn_world_fem* fems;       /* FEM deformables, in scene order */
  int nmpm;
  kn_world_mpm* mpms;       /* MPM deformables, in scene order */
  /* MPM grids: the deformables with one grid spacing share one grid (one body, one part each) and
   * interact through it; a deformable alone on its grid is its own grid body */
  int nmpm_grid;
  kn_mpm_body** mpm_grids;
  unsigned char* mpm_grid_owned; /* 1: a merged body the world owns; 0: a deformable's own body */
  /* the cliques every backend sees (coupling/coupling.h; sim/cliques.c): trees with nv > 0 in tree
   * order (clique_of_tree[k], -1 for nv = 0), then FEM body i at first_fem_clique + i, then MPM
   * grid g at first_mpm_clique + g */
  int nclique, first_fem_clique, first_mpm_clique;
  kn_clique* cliques;
  int* clique_of_tree;
  const struct kn_backend* backend;
  void* backend_state;
  /* outputs of the last step, filled by the backend */
  kn_step_stats last;
  kn_run_stats stats;       /* accumulated by kn_world_step */
  int ncontact, contact_cap;
  kn_world_contact* contacts;
  int nfem_contact, fem_contact_cap; /* FEM contacts of the last step (contacts.csv) */
  kn_world_fem_contact* fem_contacts;
  int nmpm_contact, mpm_contact_cap; /* MPM particle contacts of the last step (contacts.csv, checks) */
  kn_world_mpm_contact* mpm_contacts;
  int nobserver;            /* what watches the steps (kn_world_add_observer): the scene's checks */
  kn_world_observer* observers;
  /* state */
  long step;
  double t;
} kn_world;

/* Build the world of a validated scene: load each URDF (embedded, relative or package://), weld
 * attached robots into their parent's tree, set q0 and controllers, and check that every tree
 * is simulatable. Errors name the scene file, line and key. Free with kn_world_free.
 * w->warnings gets the URDF warnings and one line per pair of bodies the step's contact detection
 * finds interpenetrating at t = 0 deeper than contact.margin (rigid colliders, FEM and MPM bodies,
 * the collision filter applied): "A and B start interpenetrating by D mm (deeper than the contact
 * margin M mm)", D at the pair's deepest point. */
kn_status kn_world_create(const kn_scene* scene, kn_world** out, kn_error* err);
void kn_world_free(kn_world* w);

/* (state_n) => state_n+1 by the scene's contact backend (sim/backend.h). sap: controllers at
 * t_n + dt, kinematics and collider poses at q_n, contact detection, free motion per tree, the
 * SAP problem over contact, joint-limit, PD and coupler constraints, then q_n+1 = q_n (+) dt v_n+1
 * (digest §1). none: each tree alone by kn_mb_step. Statistics go to w->last and w->stats, the
 * contact points and forces to w->contacts.
 * Transactional: on failure every tree's q, v and t are left as they were and err names the
 * step, the time, the stage and (SAP) the worst constraint. Allocates only when the number of
 * contacts exceeds every earlier step's.
 * The new state is checked before it is kept: a step whose result is not finite or is absurd
 * fails (KN_ERR_NUMERIC) naming the robot and body, object, or deformable and vertex/particle,
 * and the state stays at step n. Absurd: a coordinate with |q| > KN_WORLD_MAX_COORDINATE (1e6 m
 * or rad: a million metres from the origin, or a joint wound 160,000 turns) or a velocity with
 * |v| > KN_WORLD_MAX_SPEED (1e6 m/s or rad/s); for FEM vertices and MPM particles, their positions
 * and velocities by the same bounds. No simulation knead is meant for comes near either; a step
 * that does has diverged (time_step 1e300, a stiffness beyond double precision). */
#define KN_WORLD_MAX_COORDINATE 1e6
#define KN_WORLD_MAX_SPEED 1e6
kn_status kn_world_step(kn_world* w, kn_error* err);

/*---- observers of the step (observers.c) ----*/

/* Something outside the world that watches it step, as a table of functions over its own state
 * `self` (the scene's checks: check/ adds one; the world knows nothing of checks). The world calls
 * stepped after every successful kn_world_step, failed when a step fails (with the error message
 * before kn_world_step prefixes it with the step), summary when kn_world_run (output/) writes
 * summary.json (a new reference set under the key `name`; NULL adds nothing), and free from
 * kn_world_free. Any function may be NULL. */
typedef struct kn_world_observer_ops {
  const char* name;
  void (*stepped)(void* self, const kn_world* w);
  void (*failed)(void* self, const kn_world* w, const char* message);
  struct json_t* (*summary)(void* self, const kn_world* w);
  void (*free)(void* self);
} kn_world_observer_ops;
/* (ops, self) => observed from the next step on, in the order added; the world owns self from now
 * on (ops->free is called by kn_world_free, or at once when this fails: KN_ERR_NOMEM) */
kn_status kn_world_add_observer(kn_world* w, const kn_world_observer_ops* ops, void* self, kn_error* err);
/* the self of the first observer added with ops, NULL when there is none */
void* kn_world_observer_self(const kn_world* w, const kn_world_observer_ops* ops);

/* (scene name) => tree and body index: "world" (tree -1), an object (its root), "object/link" or
 * "robot/link"; 0 when nothing matches (world.c) */
int kn_sim_find_body(const kn_world* w, const char* name, int* tree, int* body);
/* the name of tree k's robot or object, for messages (colliders.c) */
const char* kn_sim_tree_name(const kn_world* w, int k);
/* "robot" or "object" */
const char* kn_sim_tree_kind(const kn_world* w, int k);

/* mass-weighted centroid of an FEM body's current positions */
void kn_sim_deformable_centroid(const kn_world_fem* f, double c[3]);

/* mass-weighted centroid of an MPM body's particles */
void kn_sim_mpm_centroid(const kn_world_mpm* m, double c[3]);

/* signed distance from x to the closed surface of FEM body b at its current positions (negative
 * inside; winding-number sign), the query of the FEM-FEM contacts */
double kn_sim_fem_surface_distance(const kn_fem_body* b, const double x[3]);

/* 64-bit digest of the canonical state: t, then q and v of each tree in scene order. */
uint64_t kn_world_state_hash(const kn_world* w);
/* number of steps in the scene's duration: ceil(duration / time_step) (1e-9 relative slack) */
long kn_world_total_steps(const kn_world* w);

/* Saved states (state_file.c). kn_world_save_state: (world) => path written, a binary file holding
 * everything the next steps read: step count and t, the run statistics, every tree's q and v, every
 * FEM body's x, v and R0, every MPM grid's particles (x, v, C, F_E, F_P), and the backend's own
 * persistent state (SAP: the stiction anchors of rigid, FEM and MPM contacts and the MPM grids' warm
 * starts). Controllers keep no state between steps. Little-endian, format version 1, a fingerprint
 * of the world's structure (backend, time step, trees' names and sizes, colliders, FEM and MPM
 * bodies' names and sizes) and a CRC-32 of the whole. KN_ERR_IO naming the path.
 * kn_world_load_state: (path) => the world at the saved step, so that stepping on gives bitwise the
 * state (kn_world_state_hash) of an uninterrupted run. All or nothing: the file is read and verified
 * completely first; on any error the world is unchanged and err says "<path>: cannot load the
 * state: " and what is wrong: "not a knead state file (no "KNSTATE" magic at its start)",
 * "truncated: ...", "format version N; this knead reads version 1", "checksum mismatch (...): the
 * file is corrupt", "saved from another scene (...)" (KN_ERR_INVALID; the others KN_ERR_PARSE, or
 * KN_ERR_IO when it cannot be read). Check results (kn_world_checks) are not saved: a resumed world's
 * checks observe the steps after the resume only. */
kn_status kn_world_save_state(const kn_world* w, const char* path, kn_error* err);
kn_status kn_world_load_state(kn_world* w, const char* path, kn_error* err);

/*---- which knead this is (version.c) ----*/

/* Which knead this is (version.c): CMake's project version and the git revision at configure time
 * ("unknown" without git; "-dirty" with uncommitted changes), and a build id: 16 hex digits hashing
 * kn_build_string() (version, build type, compiler version, the flags visible to the preprocessor:
 * optimization, sanitizers, NDEBUG, FMA / AVX, fast-math). */
const char* kn_version(void);
const char* kn_git_revision(void);
const char* kn_build_id(void);
const char* kn_build_string(void);

#ifdef __cplusplus
}
#endif
#endif
