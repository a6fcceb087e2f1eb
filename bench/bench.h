/* knead-bench — shared pieces of the benchmark program: the timing plan, the random
 * configurations, the list of timed operations, and the optional MuJoCo side.
 *
 * Every operation is timed the same way on both engines (kb_time): a warm-up, then `reps`
 * repetitions, each at its own random configuration whose untimed setup computes what the
 * operation needs as input, then `calls` timed calls; the result is the median over the
 * repetitions of the mean time per call, in microseconds. */
#ifndef KNEAD_BENCH_H
#define KNEAD_BENCH_H

#include "knead.h"

typedef struct {
  int warmup_calls; /* untimed calls before the first repetition */
  int reps;         /* repetitions, each at a different random configuration */
  int calls;        /* timed calls per repetition */
} kb_plan;

/* untimed: prepare the inputs of repetition `rep` */
typedef void (*kb_setup_fn)(void* ctx, int rep);
/* timed: one call of the operation */
typedef void (*kb_call_fn)(void* ctx);

/* (plan, setup, call) => median over repetitions of microseconds per call */
double kb_time(const kb_plan* p, void* ctx, kb_setup_fn setup, kb_call_fn call);

/* nconf random inputs, each nv long, stored row after row: q within the joint limits (or
 * [-pi, pi]), v and qdd in [-1, 1], tau in [-20, 20]. Fixed seed, so runs are comparable. */
typedef struct {
  int nconf, nv;
  double *q, *v, *qdd, *tau;
} kb_configs;

/* the timed operations, rows of the results table */
typedef enum {
  KB_FK = 0,  /* forward kinematics, positions only */
  KB_JAC,     /* 6 x nv Jacobian (translation and rotation) of the end-effector point */
  KB_CRBA,    /* mass matrix, given position kinematics */
  KB_RNEA,    /* inverse dynamics, given position and velocity kinematics */
  KB_ABA,     /* forward dynamics, given position and velocity kinematics */
  KB_M_Q,     /* end to end: q => M */
  KB_TAU_Q,   /* end to end: (q, v, qdd) => tau */
  KB_QDD_Q,   /* end to end: (q, v, tau) => qdd */
  KB_NOP
} kb_op;

typedef struct {
  const char* name;
  const char* knead_calls;  /* what is timed on the knead side */
  const char* mujoco_calls; /* what is timed on the MuJoCo side */
} kb_op_info;

extern const kb_op_info kb_ops[KB_NOP];

/* the end-effector point: p_b on body `body` */
typedef struct {
  int body;
  double p_b[3];
} kb_point;

/* cross-check of knead against MuJoCo, maximum absolute differences over all configurations */
typedef struct {
  int nv_mujoco;
  double mass_knead, mass_mujoco;
  double fk;     /* end-effector position, m */
  double jac;    /* 6 x nv Jacobian */
  double M;      /* mass matrix vs mj_fullM */
  double M_scale;   /* max |M_ij|, for a relative reading */
  double tau;    /* RNEA vs mj_rne */
  double qdd;    /* ABA vs mj_forward's qacc */
  double qdd_scale; /* max |qdd| */
  double qdd_chain; /* the timed MuJoCo chain vs mj_forward's qacc (checks the chain is right) */
  int ok;        /* all differences within tolerance */
} kb_check;

typedef struct kb_mujoco kb_mujoco;

/* 1 when the program was built with MuJoCo */
int kb_mujoco_available(void);
/* "2.2.2" or "" */
const char* kb_mujoco_version(void);
/* Load the URDF text into MuJoCo (keeping fixed links as bodies, zero damping/armature,
 * constraints and contacts disabled) and map its dofs and the end-effector body to knead's. NULL
 * on failure with a message in err. */
kb_mujoco* kb_mujoco_load(const char* urdf_text, const kn_mb_model* model, const kb_point* ee, char* err,
                          size_t errsz);
void kb_mujoco_free(kb_mujoco* mj);
/* time every operation; us[op] in microseconds per call; *forward_us for a whole mj_forward */
void kb_mujoco_time(kb_mujoco* mj, const kb_plan* p, const kb_configs* c, double us[KB_NOP], double* forward_us);
/* compare knead's results with MuJoCo's at every configuration */
void kb_mujoco_check(kb_mujoco* mj, const kn_mb_model* model, kn_mb_data* d, const kb_point* ee,
                     const kb_configs* c, kb_check* out);

/*---- contact benchmark (contact.c, mujoco_contact.c) ----*/

/* per-step timings and solver statistics of one engine on one scene */
typedef struct {
  int ok;                     /* ran every step */
  long steps;                 /* timed steps in all runs */
  int runs;
  double mean_us, median_us, p95_us, min_us; /* per step */
  double iter_mean, ls_mean, contacts_mean;   /* per step */
  int iter_max, ls_max, contacts_max;
  double object_dx;           /* final - initial x of the first free object, m (last run) */
  double object_dz;           /* final - initial z of it */
  double detect_share;        /* contact detection's share of the step time (knead: time_detect;
                                 MuJoCo: its mjTIMER_POS_COLLISION over mjTIMER_STEP) */
} kb_contact_result;

/* (per-step microseconds, n) => mean, median, p95 (nearest rank) and min into r; sorts t */
void kb_contact_summarize(double* t, long n, kb_contact_result* r);

/* (scene file, steps per run (0: the scene's duration), runs) => knead's kn_world_step timings
 * and SAP statistics; 0 and a message on failure */
int kb_contact_knead(const char* scene_path, long steps, int runs, kb_contact_result* out, char* err, size_t errsz);

/* The same scene built in MuJoCo from knead's world (kinematics, inertias, collision primitives,
 * PD as position actuators plus joint damping, gravity compensation and kd v_ref through
 * qfrc_applied), stepped with mj_step; timings of mj_step only. 0 and a message on failure
 * (also when built without MuJoCo). When xml_out is non-NULL the generated MJCF is written there. */
int kb_contact_mujoco(const char* scene_path, long steps, int runs, const char* xml_out, kb_contact_result* out,
                      char* err, size_t errsz);

/*---- fidelity scenes in MuJoCo (mujoco_contact.c; knead-bench --fidelity) ----*/

#define KB_FIDELITY_MAX_CHECKS 16
typedef struct {
  char name[128], unit[16];
  int expect_fail, passed;
  int measured_here;          /* 0: the check reads what MuJoCo does not have (knead's contact forces) */
  double measured;            /* as knead's check measures it (follows_curve: the error), NaN none */
  char message[320];
} kb_fidelity_check;

typedef struct {
  char name[128];             /* the scene's name */
  int built;                  /* the scene has a MuJoCo counterpart (rigid, free bodies only) */
  int ok;                     /* built and ran every step */
  long steps;
  double us_per_step;         /* median mj_step wall time over the steps (robust on a shared machine) */
  int nchecks;
  kb_fidelity_check checks[KB_FIDELITY_MAX_CHECKS];
} kb_fidelity_result;

/* (a fidelity scene) => the same scene built in MuJoCo as kb_contact_mujoco builds it (MuJoCo's
 * default contact parameters, the scene's friction, dt and gravity, implicit integrator), stepped
 * for the scene's duration with mj_step; after every step the free bodies' MuJoCo state is copied
 * into a knead world of the scene whose checks (check/) observe it as they observe knead's steps,
 * so each check measures the same quantity (no_penetration: MuJoCo's deepest contact distance;
 * contact_force and solver_converged are not measured). 0 and why in err when the scene cannot
 * be built (FEM, MPM, jointed trees; built without MuJoCo: out->built 0) or MuJoCo fails. */
int kb_fidelity_mujoco(const char* scene_path, kb_fidelity_result* out, char* err, size_t errsz);

/*---- FEM benchmark (fem.c) ----*/

/* The soft-cube grasp at ~1k, 10k and 50k tetrahedra (--quick: 1k, few steps): per-step times by
 * stage and one CHOLMOD factorization of the cube's A, printed; 0 on a failure. */
int kb_fem_run(int quick);

/*---- MPM benchmark (mpm.c) ----*/

/* Table I scenes (ball on slope, dough rolling): s/step, SAP iterations, contacts, beside the paper
 * and P2G + one A_MPM factorization + G2P of the same body (--quick: 1 particle per cell, 2 steps);
 * printed; 0 on a failure. */
int kb_mpm_run(int quick);
/* the contact backends on the regression suite's rigid grasp, FEM soft cube and MPM dough cube
 * (examples: the examples folder), each timed against SAP in the same run (backends.c) */
int kb_backends_run(const char* examples, int quick);

/* a scene's steps, each timed alone (scene_steps.c); per step but steps and max_contacts */
typedef struct {
  long steps;                            /* stepped (all asked for, unless one failed) */
  double ms;                             /* wall time per step */
  double iters, facts, krylov, contacts; /* Newton iterations, factorizations, Krylov products, contacts */
  double max_contacts;                   /* in one step */
} kb_steps;
/* (scene, --set overrides) => *sc and *w, 1; or 0 with the message in err (nothing left to free) */
int kb_open_scene(const char* path, const char* const* set, int nset, kn_scene** sc, kn_world** w, char* err,
                  size_t errsz);
/* (scene, --set overrides, steps, 0: all) => r; 0 with the message in err when refused or a step failed */
int kb_step_scene(const char* path, const char* const* set, int nset, long steps, kb_steps* r, char* err,
                  size_t errsz);
/* the continuous penalty forces' per-pair kernels: CCD + force against a discrete detection +
 * penalty measured in the same run, the exact normalizer against L_k, the Jacobian's cost
 * (continuous.c); printed; 0 when a generated pair is not found by CCD */
int kb_continuous_run(int quick);

/* --only ipc_paper (ipc_paper.c): the ipc backend on the IPC paper's scenes in bench_dir/ipc_paper
 * against the paper's figures and SAP in the same run; 0 when a reference run fails */
int kb_ipc_paper_run(const char* bench_dir, const char* examples, int quick, double rods_seconds);
/* --only pyramid (pyramid.c): the penalty backend on bench_dir/pyramid/prmd_rd.yaml over the digest's
 * drift window, timed against SAP's box grasp in the same run; 0 when a step failed */
int kb_pyramid_run(const char* bench_dir, const char* examples, int quick);

/* --only penalty_stack (penalty_stack.c): the paper's five-block stack at 216 nodes per FEM block
 * (bench_dir/penalty_stack) against its 8-vertex version in the same run, and the scaled stack;
 * 0 when a run that should pass fails or the drift bound does not hold */
int kb_penalty_stack_run(const char* bench_dir, int quick);

#endif
