/* knead/multibody — articulated rigid-body trees in flat arrays.
 *
 * A kn_mb_model is one kinematic tree: one clique of the contact solver. Bodies are stored in
 * topological order (parent index < body index); body 0 is the root, whose parent is the world
 * (-1). Every body has exactly one inboard joint; a link welded to its parent has a FIXED joint
 * with nq = nv = 0. A robot attached (welded) to another robot's link is merged into that
 * robot's tree (kn_mb_model_attach), so the arm and its gripper are one clique.
 *
 * Frames. X_pj is the joint frame J in the parent body frame P (the URDF <joint><origin>; for
 * the root, the base pose in the world). The body frame B coincides with J at q = 0 and moves
 * with the joint: X_PB(q) = X_pj * X_JB(q).
 *
 * Coordinates per joint type (q in position, v in velocity coordinates):
 *   FIXED       nq 0 nv 0
 *   REVOLUTE,
 *   CONTINUOUS  nq 1 nv 1   rotation angle about `axis` (unit, joint frame)
 *   PRISMATIC   nq 1 nv 1   translation along `axis`
 *   PLANAR      nq 3 nv 3   q = (x, y, theta): translation x e1 + y e2 in the plane normal to
 *                           `axis`, then rotation theta about `axis`; e1, e2 = planar_basis.
 *                           v = (vx, vy, omega) with (vx, vy) along e1, e2 expressed in the
 *                           moving body frame, so the motion subspace is constant.
 *   FLOATING    nq 7 nv 6   q = (x, y, z, qw, qx, qy, qz): position and unit quaternion of B in
 *                           J; v = [omega_B; v_B], the twist of B in B's own frame.
 * For PLANAR and FLOATING q_dot = N(q) v (kn_mb_qdot); for the others N = I.
 *
 * Spatial vectors are [angular; linear] (common.h). Jacobians are row-major 3 x nv or 6 x nv,
 * world-aligned. Generalized forces tau are in velocity coordinates (nv). */
#ifndef KNEAD_MULTIBODY_H
#define KNEAD_MULTIBODY_H

#include "../common/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  KN_JOINT_FIXED = 0,
  KN_JOINT_REVOLUTE,
  KN_JOINT_CONTINUOUS,
  KN_JOINT_PRISMATIC,
  KN_JOINT_PLANAR,
  KN_JOINT_FLOATING
} kn_joint_type;

const char* kn_joint_type_name(kn_joint_type t);
/* nq and nv of a joint type */
int kn_joint_nq(kn_joint_type t);
int kn_joint_nv(kn_joint_type t);

typedef struct {
  char* name;        /* link name */
  int parent;        /* parent body index, -1 for the world */

  /* the inboard joint */
  char* joint_name;  /* NULL for a root welded to the world */
  kn_joint_type jtype;
  kn_pose X_pj;      /* joint frame in the parent body frame (root: in the world) */
  double axis[3];    /* unit, joint frame */
  double planar_basis[6]; /* PLANAR only: e1 then e2, unit, orthogonal to axis */
  int q_adr, v_adr;  /* first coordinate in q and v */
  int nq, nv;
  int has_position_limits; /* REVOLUTE / PRISMATIC with lower < upper */
  double lower, upper;     /* position limits (rad or m) */
  double velocity_limit;   /* |v| limit, INFINITY when none */
  double effort_limit;     /* |tau| limit, INFINITY when none */
  double damping;          /* viscous, N m s/rad or N s/m */
  double friction;         /* Coulomb, kept for the contact solver; not used by the free motion */

  /* inertia, in the body frame */
  double mass;
  double com[3];     /* centre of mass */
  double I_com[9];   /* rotational inertia about the centre of mass, row-major */
} kn_mb_body;

/* q[joint] = multiplier * q[master] + offset, a URDF <mimic>: a constraint between two 1-DoF joints. */
typedef struct {
  int body;          /* body whose inboard joint is the mimic joint */
  int master;        /* body whose inboard joint is mimicked */
  double multiplier, offset;
} kn_mb_coupler;

typedef struct {
  char* name;
  int nbody, nq, nv;
  kn_mb_body* bodies;
  int ncoupler;
  kn_mb_coupler* couplers;
  double gravity[3];   /* world frame, default (0, 0, -9.81) */
  /* name => body index, joint name => body index: filled by kn_mb_add_body for constant-time
   * kn_mb_find_body / kn_mb_find_joint (keys are the bodies' own strings) */
  kn_name_map body_names, joint_names;
} kn_mb_model;

/*---- model building ----*/

/* An empty model named `name` with gravity (0, 0, -9.81). Free with kn_mb_model_free. */
kn_mb_model* kn_mb_model_create(const char* name);
void kn_mb_model_free(kn_mb_model* m);
/* Append a body (copying name strings) and return its index, or -1 on bad input (err says why:
 * parent must be an existing body or -1, axis non-zero, mass >= 0, inertia symmetric PSD).
 * Sets q_adr/v_adr/nq/nv from jtype; normalizes axis; fills planar_basis. */
int kn_mb_add_body(kn_mb_model* m, const kn_mb_body* b, kn_error* err);
int kn_mb_add_coupler(kn_mb_model* m, const kn_mb_coupler* c, kn_error* err);
/* Weld `child`'s root to body `link` of `m` at pose X_link_root (a FIXED joint), appending all
 * of child's bodies and couplers. child's root joint must be FIXED. Body and joint names are
 * prefixed with `prefix` when non-NULL. */
kn_status kn_mb_model_attach(kn_mb_model* m, const kn_mb_model* child, int link, const kn_pose* X_link_root,
                             const char* prefix, kn_error* err);
int kn_mb_find_body(const kn_mb_model* m, const char* name);
/* body index whose inboard joint is named `name`, or -1 */
int kn_mb_find_joint(const kn_mb_model* m, const char* name);
double kn_mb_total_mass(const kn_mb_model* m);
/* the neutral configuration: zeros, identity quaternions */
void kn_mb_neutral_q(const kn_mb_model* m, double* q);

/*---- kinematics workspace ----*/

/* Everything computed from (q, v) by kn_mb_kinematics, reused by the algorithms below.
 * Allocated once per model (kn_mb_data_create); no allocation afterwards. */
typedef struct {
  int nbody, nv;
  kn_pose* X_pb;     /* body in parent (world for the root) */
  kn_pose* X_wb;     /* body in world */
  double* V;         /* body spatial velocity in its own frame, 6 per body */
  double* S;         /* motion subspace per dof, 6 per dof, body frame (constant) */
  double* work;      /* algorithm scratch */
  size_t nwork;
} kn_mb_data;

kn_mb_data* kn_mb_data_create(const kn_mb_model* m);
void kn_mb_data_free(kn_mb_data* d);

/* (q, v) => (X_pb, X_wb, V, and the world-frame inertias, velocities and joint axes that CRBA and
 * ABA read). v may be NULL (zero velocities). Every algorithm below needs it first. */
void kn_mb_kinematics(const kn_mb_model* m, const double* q, const double* v, kn_mb_data* d);

/* (X_wb) => X_wf: world pose of a frame given by X_bf on body b. */
void kn_mb_frame_pose(const kn_mb_model* m, const kn_mb_data* d, int body, const kn_pose* X_bf, kn_pose* X_wf);
/* (X_wb, V) => world-frame spatial velocity [omega; v] of the point p_b (body frame) on body b. */
void kn_mb_point_velocity(const kn_mb_model* m, const kn_mb_data* d, int body, const double p_b[3], double V_w[6]);
/* (X_wb) => Jv (3 x nv) with v_point = Jv v and, if Jw non-NULL, Jw (3 x nv) with omega_b = Jw v;
 * world-aligned, for the point p_b (body frame) on body b. */
void kn_mb_point_jacobian(const kn_mb_model* m, const kn_mb_data* d, int body, const double p_b[3], double* Jv,
                          double* Jw);

/*---- inverse kinematics (ik.c) ----*/

typedef struct {
  int max_iterations;    /* 200 */
  double damping;        /* lambda^2 of the damped least squares step, 1e-6 */
  double tolerance;      /* |pose error| (m and rad, 6-vector) to stop at, 1e-12 */
  const double* q_rest;  /* NULL, or a posture (first ndof coordinates) that the redundant
                            directions are pulled toward during the first rest_iterations */
  double rest_gain;      /* 0.1: the pull g = rest_gain (q_rest - q), projected by I - J^+ J */
  int rest_iterations;   /* 1000 (with q_rest): then it converges without the pull */
  double max_step;       /* 0 = none; else each iteration's |dq_j| is capped (scaled) to it, rad */
} kn_mb_ik_options;
kn_mb_ik_options kn_mb_ik_options_default(void);

/* (model, the origin of body reaching the world pose (p_t, R_t row-major), q to start from) =>
 * q, by damped least squares dq = J^T (J J^T + damping I)^-1 e on the first ndof coordinates
 * (revolute or prismatic joints at the root of the tree: q and v indices coincide), e = (p_t - p,
 * 1/2 sum_i r_i x r_t,i); the other coordinates are held. Returns the final |e|. d is scratch
 * (kinematics at the returned q). opt may be NULL (defaults). ndof <= 16. */
double kn_mb_ik_pose(const kn_mb_model* m, kn_mb_data* d, int body, const double p_t[3], const double R_t[9],
                     int ndof, const kn_mb_ik_options* opt, double* q);

/*---- dynamics ----*/

/* (kinematics) => M (nv x nv, row-major, full symmetric), by the composite rigid body algorithm. */
void kn_mb_mass_matrix(const kn_mb_model* m, kn_mb_data* d, double* M);
/* (X_pb, V, qdd) => tau = M qdd + C(q, v) v - g(q) (RNEA, with the model's gravity). qdd NULL = 0. */
void kn_mb_inverse_dynamics(const kn_mb_model* m, kn_mb_data* d, const double* qdd, double* tau);
/* (X_pb) => tau_g, the generalized forces that hold the tree still against gravity (RNEA, v = 0). */
void kn_mb_gravity_torques(const kn_mb_model* m, kn_mb_data* d, double* tau_g);
/* (kinematics with v) => qdd by the articulated body algorithm. */
void kn_mb_forward_dynamics(const kn_mb_model* m, kn_mb_data* d, const double* tau, double* qdd);

/* (q, v) => q_dot = N(q) v */
void kn_mb_qdot(const kn_mb_model* m, const double* q, const double* v, double* qdot);
/* q_next = q (+) dt v: exact for 1-DoF joints, exponential map for quaternions (renormalized),
 * exact rotation for planar. q and q_next may alias. */
void kn_mb_integrate(const kn_mb_model* m, const double* q, const double* v, double dt, double* q_next);
/* (X_pb, V) => 1/2 v^T M v */
double kn_mb_kinetic_energy(const kn_mb_model* m, const kn_mb_data* d);
/* (X_wb) => -sum m_i g . c_i (zero at the world origin) */
double kn_mb_potential_energy(const kn_mb_model* m, const kn_mb_data* d);

/*---- the free motion and the stand-in time step ----*/

/* Joint-space actuation folded implicitly into a step (the implicit PD of SAP §5.3, until SAP
 * exists): tau_i = clamp(tau0_i - kp_i (q_i + dt v_i' - q_ref_i) - kd_i (v_i' - v_ref_i), +-effort_i)
 * for the dofs with kp_i or kd_i > 0, and tau0_i otherwise. Any pointer may be NULL (zero, or no
 * limit for effort). */
typedef struct {
  const double* tau0;
  const double* kp;
  const double* kd;
  const double* q_ref;
  const double* v_ref;
  const double* effort;
} kn_mb_actuation;

/* One semi-implicit Euler step of the tree alone (no contact):
 *   (M + dt D + dt^2 Kp + dt Kd) v' = M v + dt (tau - c(q, v)) + PD terms at the references,
 * with joint damping D and the PD implicit, couplers (mimic joints) enforced as equality
 * constraints on v' with position-drift correction, then q' = q (+) dt v'.
 * Transactional: on failure (not positive definite, NaN) q and v are unchanged and err names
 * the model and why. Uses d as scratch. tau_applied (nv, optional) receives the actuation. */
kn_status kn_mb_step(const kn_mb_model* m, kn_mb_data* d, double* q, double* v, const kn_mb_actuation* act,
                     double dt, double* tau_applied, kn_error* err);

/*---- stage 1 of the SAP step (free_motion.c) ----*/

/* (q_n, v_n, explicit generalized forces tau (nv, NULL = 0: feed-forward and gravity
 * compensation, not the PD terms), dt) => A = M(q_n) + dt diag(damping) (nv x nv row-major) and
 * the free-motion velocity v* with A (v* - v_n) = dt (tau - c(q_n, v_n) - D v_n) (digest §1.2).
 * Leaves d's kinematics at (q_n, v_n). scratch holds nv * nv + nv doubles. KN_ERR_NUMERIC when
 * A is not positive definite or v* is not finite. q NULL: d already holds kn_mb_kinematics(m, q_n,
 * v_n, d) (the caller shares one kinematics pass with the controllers) and is used as it is. */
kn_status kn_mb_free_motion(const kn_mb_model* m, kn_mb_data* d, const double* q, const double* v,
                            const double* tau, double dt, double* A, double* v_star, double* scratch,
                            kn_error* err);
/* The same under the theta scheme (coupling.h's set_scheme; 1 backward Euler, 1/2 the trapezoidal
 * rule): A = M(q_n) + theta dt D and A (v* - v_n) = dt (tau - c(q_n, v_n) - D v_n), i.e. the
 * damping force -D v averaged between v_n and v, every other force explicit at (q_n, v_n). */
kn_status kn_mb_free_motion_theta(const kn_mb_model* m, kn_mb_data* d, const double* q, const double* v,
                                  const double* tau, double dt, double theta, double* A, double* v_star,
                                  double* scratch, kn_error* err);

/*---- momentum form (momentum.c) ----*/

/* (X_pb, V) => f = M_dot(q, v) v - C(q, v) v (nv), the velocity-product term of the momentum
 * form p_dot = tau - g(q) + f with p = M(q) v; f_k = dT/dq_k at fixed v for 1-DoF joints, the
 * Euler-Poincare term -V x* (I V) for a free body. Uses d's scratch. */
void kn_mb_momentum_force(const kn_mb_model* m, kn_mb_data* d, double* f);

/* (q, v, dt) => q_next = q + dt N(q) v with N at q (the SAP step's update, digest §1.1): like
 * kn_mb_integrate, except that a FLOATING body's position moves by dt R(q) v_B (not along the screw
 * motion), and its v (solved in the body frame frozen at q, see kn_mb_free_motion) is re-expressed
 * in the body frame at q_next, in place. q_next must not alias q (advance.c). */
void kn_mb_advance(const kn_mb_model* m, const double* q, double* v, double dt, double* q_next);

#ifdef __cplusplus
}
#endif
#endif
