/* knead/check — regression judgement of runs: the scene's checks (checks.c), predicates over time
 * windows that watch a world step by step as an observer (kn_world_add_observer; the world does not
 * know them), and golden baselines (golden.c), a run's coordinates recorded at a fixed rate and
 * compared within physical tolerances. knead check (tools/) runs scenes through these. */
#ifndef KNEAD_CHECK_H
#define KNEAD_CHECK_H

#include "../output/output.h"
#include "../scene/scene.h"
#include "../sim/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/*---- checks (checks.c) and golden baselines (golden.c) ----*/

/* One check's outcome so far. measured is the worst value (unit by type: m, mm for grasp_held,
 * N, iterations; no_penetration: the smallest phi [m]; follows_curve: |quantity - reference| in the
 * quantity's unit, m or m/s, where it used most of its tolerance) at time t; measured2 is grasp_held's worst
 * rotation drift [deg] (at t2), contact_force's observed range is [lo, hi]. */
typedef struct {
  const char* name;
  kn_check_type type;
  int expect_fail;          /* expect: fail */
  int passed;
  long samples;             /* steps observed inside the window */
  double measured, t;       /* NAN / -1 when nothing was measured */
  double measured2, t2;
  double lo, hi;
  const char* unit;         /* of measured: "m", "mm", "N", "iterations", "m/s" (follows_curve's velocities) */
  double value, reference;  /* follows_curve at its worst sample (t): the quantity and the reference */
  double current, current_reference; /* the quantity observed at the last step (NaN when none:
                               outside the window, but for follows_curve, which observes the whole
                               run and judges its window) and follows_curve's reference there:
                               what knead compare plots over time */
  char message[320];        /* "min z = 0.1823 m at t = 3.41 s; needs > 0.15 m in [2.8, 3.6] s" */
} kn_check_result;

/* (world just built, or at its current step) => the scene's checks watch it from now on: an observer
 * (kn_world_add_observer) whose names are resolved here (errors name the key: checks[i].body ...) and
 * which samples the current state at once (t = 0 for a new world), then every step, and adds
 * "checks" to summary.json. Nothing when the scene has no checks. The world does not create them:
 * call this after kn_world_create and before kn_world_load_state, as knead run and check do. */
kn_status kn_checks_attach(kn_world* w, kn_error* err);
/* (world) => its n checks' results as of the current step (array owned by the checks the world
 * holds; NULL and 0 when none were attached) */
const kn_check_result* kn_world_checks(const kn_world* w, int* n);

/* Golden baselines (golden.c): a run's coordinates (q of every tree, FEM and MPM centroids) sampled
 * at a fixed rate, the final state hash and the build, stored as JSON (<scene>.golden.json, format
 * knead-golden-2) and compared within physical tolerances, per unit and written in the file:
 *   positions (object x, y, z, prismatic joints, FEM/MPM centroids)    1e-4 m   (0.1 mm)
 *   angles (revolute joints, planar theta; a free body's orientation
 *           as the angle between the run's and the file's rotation)    2e-4 rad
 * 0.1 mm is 50x below what the regression checks judge (5 mm of drift or penetration); 2e-4 rad
 * moves the tool of the 0.5 m arm by the same 0.1 mm. Another machine, compiler or BLAS kernel
 * changes far less: OpenBLAS's Sandybridge, Prescott and Haswell kernels moved the regression
 * scenes by at most 1e-15 m and 5e-13 rad (examples/regression/README.md), though their final
 * state hashes all differ. Velocities are not compared: they jump at every impact and stick-slip
 * transition, and positions integrate them. One quantity's tolerance can be changed in the file
 * ("tolerance_overrides": {"box/z": 5e-4}, in its unit). The final state hash is bitwise: reported
 * always, a failure only under `knead check --strict`. */
#define KN_GOLDEN_TOL_M 1e-4
#define KN_GOLDEN_TOL_RAD 2e-4
typedef struct kn_golden kn_golden;
/* (world at t = 0, rate [Hz]) => an empty recording with the world's column names and units */
kn_status kn_golden_create(const kn_world* w, double rate, kn_golden** out, kn_error* err);
/* record the world's state when its step is on the rate's grid (call after every step) */
kn_status kn_golden_record(kn_golden* g, const kn_world* w, kn_error* err);
/* record the final state hash (call once at the end) */
void kn_golden_finish(kn_golden* g, const kn_world* w);
/* (recording, path) => the golden file written; KN_ERR_IO naming the path */
kn_status kn_golden_write(const kn_golden* g, const char* path, kn_error* err);
void kn_golden_free(kn_golden* g);

typedef struct {
  int diverged;             /* 1: a quantity differed by more than its tolerance (or the times, the sample count) */
  double t;                 /* first time it did [s] */
  char quantity[160];       /* its name ("box/z", "box/orientation"; "t", "samples") */
  char unit[16];            /* "m", "rad" ("s" for t) */
  double value, golden;     /* this run's and the file's value (orientation: the angle, 0) */
  double difference, tolerance; /* in unit */
  double max_difference_m, max_difference_rad; /* largest differences over the samples compared */
  char hash[17], golden_hash[40]; /* final state hashes, this run's and the file's */
  int hash_equal;           /* bitwise equal final state */
  int same_build;           /* the file was recorded by a build with this build id */
  char message[512];        /* "box/z diverged at t = 1.2 s: ... m, golden ... m (|difference| 3e-4 m >
                               tolerance 1e-4 m)" */
} kn_golden_report;
/* (recording of this run, golden file) => report; KN_ERR_IO / KN_ERR_PARSE (path, line, column or
 * key) when the file cannot be read, KN_ERR_INVALID when its columns or units do not match the run's */
kn_status kn_golden_compare(const kn_golden* g, const char* path, kn_golden_report* rep, kn_error* err);

#ifdef __cplusplus
}
#endif
#endif
