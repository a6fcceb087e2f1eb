/* kn_mb_ik_pose on the 7-DoF iiwa model: poses reached by forward kinematics of random
 * configurations are recovered from a start 0.3 rad away on every joint (pose error < 1e-10, the
 * reached pose matching the target to 1e-9); the null-space pull toward a rest posture keeps the
 * pose exact while moving the redundant direction toward the rest posture; an unreachable target
 * (2 m away) reports its residual instead of pretending. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "mb_test_models.h"

static double pose_gap(const kn_pose* X, const double p[3], const double R[9]) {
  double g = 0;
  for (int a = 0; a < 3; a++) g = fmax(g, fabs(X->p[a] - p[a]));
  for (int k = 0; k < 9; k++) g = fmax(g, fabs(X->R[k] - R[k]));
  return g;
}

Test(ik, recovers_random_poses) {
  kn_mb_model* m = tm_iiwa14();
  kn_mb_data* d = kn_mb_data_create(m);
  unsigned seed = 7;
  for (int trial = 0; trial < 10; trial++) {
    double qt[7], q[7], p[3], R[9];
    for (int j = 0; j < 7; j++) qt[j] = 1.2 * tm_rand(&seed);
    kn_mb_kinematics(m, qt, NULL, d);
    memcpy(p, d->X_wb[7].p, sizeof p);
    memcpy(R, d->X_wb[7].R, sizeof R);
    for (int j = 0; j < 7; j++) q[j] = qt[j] + (j % 2 ? 0.3 : -0.3);
    double res = kn_mb_ik_pose(m, d, 7, p, R, 7, NULL, q);
    cr_assert_lt(res, 1e-10, "trial %d: residual %g", trial, res);
    kn_mb_kinematics(m, q, NULL, d);
    cr_assert_lt(pose_gap(&d->X_wb[7], p, R), 1e-9, "trial %d", trial);
  }
  kn_mb_data_free(d);
  kn_mb_model_free(m);
}

Test(ik, rest_posture_in_the_null_space) {
  kn_mb_model* m = tm_iiwa14();
  kn_mb_data* d = kn_mb_data_create(m);
  const double qt[7] = {0.3, 0.7, -0.4, -1.2, 0.2, 0.9, 0.1};
  double p[3], R[9], q0[7], q1[7];
  kn_mb_kinematics(m, qt, NULL, d);
  memcpy(p, d->X_wb[7].p, sizeof p);
  memcpy(R, d->X_wb[7].R, sizeof R);
  /* the rest posture differs from the solution only along the arm's self-motion: joints 1 and 3
   * turned against each other keep the elbow plane's pose only approximately, so just require
   * that the pull brings q nearer to it than plain IK does, with the pose still exact */
  const double rest[7] = {0.0, 0.7, 0.0, -1.2, 0.2, 0.9, 0.1};
  memcpy(q0, qt, sizeof q0), memcpy(q1, qt, sizeof q1);
  for (int j = 0; j < 7; j++) q0[j] += 0.05, q1[j] += 0.05;
  double r0 = kn_mb_ik_pose(m, d, 7, p, R, 7, NULL, q0);
  kn_mb_ik_options o = kn_mb_ik_options_default();
  o.max_iterations = 2000, o.damping = 1e-4, o.q_rest = rest, o.max_step = 0.2;
  double r1 = kn_mb_ik_pose(m, d, 7, p, R, 7, &o, q1);
  cr_assert_lt(r0, 1e-10);
  cr_assert_lt(r1, 1e-10);
  double d0 = 0, d1 = 0;
  for (int j = 0; j < 7; j++) d0 += (q0[j] - rest[j]) * (q0[j] - rest[j]), d1 += (q1[j] - rest[j]) * (q1[j] - rest[j]);
  cr_log_info("distance to rest: plain %.4f, with the pull %.4f", sqrt(d0), sqrt(d1));
  cr_assert_lt(sqrt(d1), 0.9 * sqrt(d0), "the pull should approach the rest posture (%g vs %g)", sqrt(d1), sqrt(d0));
  kn_mb_data_free(d);
  kn_mb_model_free(m);
}

Test(ik, unreachable_target_reports_its_residual) {
  kn_mb_model* m = tm_iiwa14();
  kn_mb_data* d = kn_mb_data_create(m);
  double q[7] = {0, 0.5, 0, -1, 0, 0.5, 0};
  const double p[3] = {2.0, 0, 0.5}, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double res = kn_mb_ik_pose(m, d, 7, p, R, 7, NULL, q);
  cr_assert_gt(res, 0.5, "an arm of ~1.3 m reach cannot touch a point 2 m away (residual %g)", res);
  for (int j = 0; j < 7; j++) cr_assert(isfinite(q[j]));
  kn_mb_data_free(d);
  kn_mb_model_free(m);
}
