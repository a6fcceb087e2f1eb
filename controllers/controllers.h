/* knead/controllers — joint trajectories, scripted task sequences and joint PD controllers with
 * gravity-compensation feed-forward and effort limits.
 *
 * Three reference sources, one controller:
 *   kn_trajectory  knots (t_k, q_k) of n joints, evaluated at t to (q, v, a): piecewise linear or
 *                  a clamped C2 cubic spline; loaded from CSV or built from arrays.
 *   kn_sequence    named phases {name, duration, q target} run in order from an initial q, each a
 *                  smoothstep q(s) = q0 + (q1 - q0)(3 s^2 - 2 s^3), s = (t - t_i)/duration, then
 *                  hold; kn_seq_phase_at says which phase is active at t.
 *   kn_controller  a joint PD on a list of DoFs (velocity indices into one tree) that fills the
 *                  implicit actuation of kn_mb_step (multibody.h, kn_mb_actuation).
 *
 * The control law (per controlled dof i, evaluated at the start of the step, implicit in v'):
 *   tau_i = clamp( g_i(q) - kp_i (q_i + dt v_i' - q_ref_i(t)) - kd_i (v_i' - v_ref_i(t)), +-effort_i )
 * g(q) = kn_mb_gravity_torques at the current q (RNEA with v = 0) when gravity compensation is on.
 * Design choice: there is no M(q) a_ref (inverse-dynamics) feed-forward. With the implicit PD,
 * a velocity reference and gravity compensation, the residual tracking error is about
 * M a_ref / kp (a few mrad for arm-speed motions with realistic gains), and the law stays the one
 * a real joint-impedance controller (e.g. the iiwa's) runs.
 *
 * Controllers are model data: built once, immutable during a run, no internal state (there is no
 * integral term), so a step stays (model, state) -> state. Nothing here allocates after creation:
 * kn_ctrl_compute writes into caller-owned kn_ctrl_buffers. */
#ifndef KNEAD_CONTROLLERS_H
#define KNEAD_CONTROLLERS_H

#include "../common/common.h"
#include "../multibody/multibody.h"

#ifdef __cplusplus
extern "C" {
#endif

/*---- trajectories (trajectory.c, trajectory_csv.c) ----*/

typedef enum {
  KN_TRAJ_LINEAR = 0, /* piecewise linear: v constant per segment, a = 0 */
  KN_TRAJ_CUBIC       /* C2 cubic spline, zero velocity at both ends ("clamped") */
} kn_traj_interp;

typedef struct {
  int n;              /* joints */
  int nknot;          /* >= 1 */
  kn_traj_interp interp;
  double* t;          /* nknot, strictly increasing */
  double* q;          /* nknot x n, row-major: q[k*n + j] */
  double* qdd;        /* CUBIC: spline second derivatives at the knots, nknot x n; NULL for LINEAR */
  char** joint_names; /* n names from a CSV header, or NULL when there was none */
} kn_trajectory;

/* (n joints, nknot knots t[nknot], q[nknot*n] row-major) => a trajectory owning copies of the
 * arrays; CUBIC solves the clamped-spline tridiagonal system here. joint_names (n, may be NULL)
 * are copied. KN_ERR_INVALID when n < 1, nknot < 1, times not strictly increasing or any value is
 * not finite (the message names the knot and joint). Free with kn_traj_free. */
kn_status kn_traj_create(int n, int nknot, const double* t, const double* q, const char* const* joint_names,
                         kn_traj_interp interp, kn_trajectory** out, kn_error* err);
/* Load knots from a CSV file: an optional header line `t,<joint names...>`, then rows
 * `t,q1,...,qn` (blank lines and lines starting with '#' are skipped). Errors (KN_ERR_IO,
 * KN_ERR_PARSE) name the file, line and what was expected: non-increasing time, wrong column
 * count, a field that is not a number. */
kn_status kn_traj_load_csv(const char* path, kn_traj_interp interp, kn_trajectory** out, kn_error* err);
void kn_traj_free(kn_trajectory* tr);
/* (t) => q, v, a (each n, any may be NULL). Holds the first knot before the start and the last
 * knot after the end (v = a = 0 there). */
void kn_traj_eval(const kn_trajectory* tr, double t, double* q, double* v, double* a);
double kn_traj_start_time(const kn_trajectory* tr);
double kn_traj_end_time(const kn_trajectory* tr);

/*---- scripted sequences (sequence.c) ----*/

typedef struct {
  char* name;
  double duration;    /* > 0 */
  double t_start;     /* absolute start time (sequence start + earlier durations) */
  double* q;          /* n: the target reached at t_start + duration */
} kn_seq_phase;

typedef struct {
  int n;              /* controlled joints */
  double t0;          /* time the first phase starts (default 0) */
  double* q0;         /* n: the initial q the first phase moves from */
  int nphase, cap;
  kn_seq_phase* phases;
} kn_sequence;

/* An empty sequence of n joints starting at time t0 from q0 (n values; NULL = zeros, set later
 * with kn_seq_set_initial, e.g. from a robot's q0). */
kn_status kn_seq_create(int n, double t0, const double* q0, kn_sequence** out, kn_error* err);
void kn_seq_free(kn_sequence* s);
void kn_seq_set_initial(kn_sequence* s, const double* q0);
/* Append a phase {name, duration > 0, q target (n values, finite)}. KN_ERR_INVALID names the
 * phase and what was expected. */
kn_status kn_seq_add_phase(kn_sequence* s, const char* name, double duration, const double* q, kn_error* err);
/* (t) => q, v, a (each n, any may be NULL): the smoothstep of the active phase, q0 before t0,
 * the last target after the end. */
void kn_seq_eval(const kn_sequence* s, double t, double* q, double* v, double* a);
/* The phase active at t, i.e. t_start <= t < t_start + duration: returns its index and sets
 * *name (if non-NULL) to its name and *s_out (if non-NULL) to the phase fraction in [0, 1).
 * Returns -1 (name NULL, s 0) before t0 and at or after the end of the last phase (holding). */
int kn_seq_phase_at(const kn_sequence* s, double t, const char** name, double* s_out);
/* index of the phase called `name`, or -1 */
int kn_seq_find_phase(const kn_sequence* s, const char* name);
/* t0 + the sum of the durations */
double kn_seq_end_time(const kn_sequence* s);

/*---- joint PD controller (pd.c) ----*/

typedef enum {
  KN_REF_SETPOINT = 0, /* constant q_ref, v_ref = 0 */
  KN_REF_TRAJECTORY,
  KN_REF_SEQUENCE
} kn_ref_kind;

typedef struct {
  char* name;
  int ndof;
  int* dofs;          /* ndof velocity indices into the tree, distinct */
  int* qidx;          /* ndof matching position indices (the dof's joint q_adr + offset) */
  double* kp;         /* ndof, N m/rad or N/m, >= 0 */
  double* kd;         /* ndof, N m s/rad or N s/m, >= 0 */
  double* effort;     /* ndof, > 0, INFINITY = no limit; default: the URDF effort limits
                         (a missing or zero URDF limit means none) */
  int gravity_compensation;
  kn_ref_kind ref_kind;
  double* setpoint;   /* ndof: the KN_REF_SETPOINT target (default: zeros) */
  kn_trajectory* traj;/* owned, KN_REF_TRAJECTORY */
  kn_sequence* seq;   /* owned, KN_REF_SEQUENCE */
} kn_controller;

/* A PD controller named `name` on ndof dofs (velocity indices) of model m; dofs == NULL (ndof
 * ignored) selects every REVOLUTE, CONTINUOUS and PRISMATIC dof of the tree that is not a mimic
 * joint (a coupler's body), in body order. Defaults: kp = kd = 0, effort = the URDF effort
 * limits of each dof's joint, gravity compensation on, setpoint = zeros. KN_ERR_INVALID (naming the controller) for dofs out of range, repeated, or on a
 * FLOATING joint. */
kn_status kn_ctrl_create(const kn_mb_model* m, const char* name, int ndof, const int* dofs, kn_controller** out,
                         kn_error* err);
/* The same with the dofs given by joint names (every joint must exist in m and have nv >= 1;
 * a PLANAR joint contributes its 3 dofs). */
kn_status kn_ctrl_create_for_joints(const kn_mb_model* m, const char* name, int njoint,
                                    const char* const* joint_names, kn_controller** out, kn_error* err);
void kn_ctrl_free(kn_controller* c);
/* Gains: nkp (nkd) is 1 to broadcast one value to every dof, or ndof per-dof values; >= 0. */
kn_status kn_ctrl_set_gains(kn_controller* c, const double* kp, int nkp, const double* kd, int nkd, kn_error* err);
/* Effort limits: n is 1 (broadcast) or ndof; each > 0 (INFINITY = none). */
kn_status kn_ctrl_set_effort_limits(kn_controller* c, const double* effort, int n, kn_error* err);
void kn_ctrl_set_gravity_compensation(kn_controller* c, int on);
/* Reference sources. The size must equal ndof. Trajectory and sequence are owned by the
 * controller from then on, also on failure (they are freed), so the caller never double-frees.
 * A trajectory whose CSV header names a controlled joint in a different column is rejected. */
kn_status kn_ctrl_set_setpoint(kn_controller* c, const double* q, int n, kn_error* err);
kn_status kn_ctrl_set_trajectory(kn_controller* c, const kn_mb_model* m, kn_trajectory* traj, kn_error* err);
kn_status kn_ctrl_set_sequence(kn_controller* c, kn_sequence* seq, kn_error* err);
/* (t) => q_ref, v_ref, a_ref of the controller's dofs (each ndof, any may be NULL). */
void kn_ctrl_reference(const kn_controller* c, double t, double* q_ref, double* v_ref, double* a_ref);

/* The actuation arrays of one tree (nv each), owned here, pointed to by `act` for kn_mb_step. */
typedef struct {
  int nv;
  double* tau0;       /* gravity compensation of the controlled dofs, 0 elsewhere */
  double* kp;
  double* kd;
  double* q_ref;      /* indexed by dof (velocity index) */
  double* v_ref;
  double* effort;     /* INFINITY on uncontrolled dofs */
  double* tau_g;      /* scratch: gravity torques of the whole tree */
  int* owner;         /* scratch: which controller (index) claimed each dof, -1 none */
  double* ref;        /* scratch: 2 nv, a controller's q_ref and v_ref before scattering */
  kn_mb_actuation act;
} kn_ctrl_buffers;

/* buffers for m->nv dofs, reset; NULL when out of memory. Free with kn_ctrl_buffers_free. */
kn_ctrl_buffers* kn_ctrl_buffers_create(const kn_mb_model* m);
void kn_ctrl_buffers_free(kn_ctrl_buffers* b);
/* Clear to "no actuation": tau0 = kp = kd = v_ref = q_ref = 0, effort = INFINITY, owner = -1. */
void kn_ctrl_buffers_reset(kn_ctrl_buffers* b);

/* Timing: kn_mb_step makes the PD implicit in (q_{n+1} = q_n + dt v', v'), so pass t = t_n + dt,
 * the time at the END of the step: the PD then pulls q_{n+1} toward q_ref(t_{n+1}) with no lag.
 * Gravity compensation uses g(q_n), the q passed in.
 *
 * (nc controllers of tree m, t, q, v) => out: reset the buffers, then each controller writes the
 * entries of its dofs: kp, kd, effort, q_ref(t), v_ref(t), and tau0 = g(q) (clamped to the
 * effort limit) when gravity compensation is on. Gravity torques are computed once, through
 * kn_mb_kinematics(m, q, NULL, d) (so d's kinematics are left at (q, v = 0)). KN_ERR_INVALID
 * when two controllers claim the same dof, or a controller's dofs do not fit m (naming the
 * controller). No allocation. Pass out->act to kn_mb_step. v is reserved (may be NULL).
 * q NULL: the caller has already run kn_mb_kinematics(m, q, v or NULL, d) at this q, and gravity
 * compensation reads d's poses as they are (d's kinematics are then left untouched). */
kn_status kn_ctrl_compute(const kn_controller* const* cs, int nc, const kn_mb_model* m, kn_mb_data* d, double t,
                          const double* q, const double* v, kn_ctrl_buffers* out, kn_error* err);

#ifdef __cplusplus
}
#endif
#endif
