/* controllers/: the 7-DoF arm (examples/models/knead_arm7.urdf: KUKA LBR iiwa 14 kinematics and
 * inertias, joint damping 0.5 N m s/rad) tracking a 5 s cubic trajectory under the implicit joint
 * PD with gravity compensation, stepped by kn_mb_step at dt = 1 ms; and the URDF effort limits
 * respected under a large step command. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "controllers/controllers.h"
#include "urdf/urdf.h"

#define ARM_URDF KNEAD_SOURCE_DIR "/examples/models/knead_arm7.urdf"
#define NJ 7

/* Realistic joint-impedance gains for an iiwa 14: stiffness 100..800 N m/rad (KUKA's joint
 * impedance mode allows up to 5000), damping near critical, kd_i ~ 2 sqrt(kp_i M_ii) with M_ii
 * the arm's joint-space inertia at Q0 (2.63, 3.71, 0.77, 0.83, 0.021, 0.017, 0.001 kg m^2 by
 * CRBA; reflected rotor inertia is not modelled), rounded. */
static const double KP[NJ] = {800, 800, 600, 600, 300, 200, 100};
static const double KD[NJ] = {90, 110, 45, 45, 5, 4, 1};
/* the URDF effort limits (N m) */
static const double EFFORT[NJ] = {320, 320, 176, 176, 110, 40, 40};
static const double Q0[NJ] = {0.0, 0.6, 0.0, -1.2, 0.0, 1.0, 0.0};

static kn_robot* load_arm(void) {
  kn_urdf_options opt = kn_urdf_options_default();
  kn_robot* r = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_urdf_load(ARM_URDF, &opt, &r, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(r->model->nv, NJ);
  cr_assert_eq(r->model->nq, NJ);
  return r;
}

Test(arm_tracking, gains_are_near_critical_damping) {
  /* guard the stated gains against the model: damping ratio kd / (2 sqrt(kp M_ii)) in [0.7, 2] */
  kn_robot* r = load_arm();
  kn_mb_model* m = r->model;
  kn_mb_data* d = kn_mb_data_create(m);
  double M[NJ * NJ];
  kn_mb_kinematics(m, Q0, NULL, d);
  kn_mb_mass_matrix(m, d, M);
  for (int i = 0; i < NJ; ++i) {
    double zeta = KD[i] / (2.0 * sqrt(KP[i] * M[i * NJ + i]));
    cr_log_info("joint %d: M_ii = %.4g kg m^2, kp = %g, kd = %g, damping ratio %.2f", i + 1, M[i * NJ + i], KP[i],
                KD[i], zeta);
    cr_assert(zeta > 0.7 && zeta < 2.0, "joint %d: damping ratio %g", i + 1, zeta);
  }
  kn_mb_data_free(d);
  kn_robot_free(r);
}

Test(arm_tracking, follows_5s_cubic_within_1e2_rad) {
  kn_robot* r = load_arm();
  kn_mb_model* m = r->model;
  kn_error err = {0};

  /* knots every 1.25 s; peak joint speeds about 0.6 rad/s, inside the iiwa's velocity limits */
  const double t[5] = {0.0, 1.25, 2.5, 3.75, 5.0};
  const double knots[5 * NJ] = {
      0.0, 0.6, 0.0, -1.2, 0.0, 1.0, 0.0,  //
      0.4, 0.8, 0.3, -1.0, 0.3, 1.2, 0.5,  //
      0.8, 0.5, 0.5, -1.5, 0.6, 0.8, 1.0,  //
      0.3, 0.3, 0.2, -1.3, 0.2, 0.6, 0.4,  //
      0.0, 0.5, 0.0, -1.1, 0.0, 1.0, 0.0,  //
  };
  kn_trajectory* tr = NULL;
  cr_assert_eq(kn_traj_create(NJ, 5, t, knots, NULL, KN_TRAJ_CUBIC, &tr, &err), KN_OK, "%s", err.msg);
  kn_controller* c = NULL;
  cr_assert_eq(kn_ctrl_create(m, "arm", 0, NULL, &c, &err), KN_OK, "%s", err.msg);
  for (int i = 0; i < NJ; ++i) cr_assert_eq(c->effort[i], EFFORT[i], "joint %d effort from the URDF", i + 1);
  cr_assert_eq(kn_ctrl_set_gains(c, KP, NJ, KD, NJ, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_ctrl_set_trajectory(c, m, tr, &err), KN_OK, "%s", err.msg);

  kn_mb_data* d = kn_mb_data_create(m);
  kn_ctrl_buffers* buf = kn_ctrl_buffers_create(m);
  const kn_controller* cs[1] = {c};
  double q[NJ], v[NJ] = {0}, qr[NJ], tau[NJ];
  memcpy(q, Q0, sizeof q);
  const double dt = 1e-3;
  double max_err = 0.0, max_err_t = 0.0, max_tau_ratio = 0.0;
  int max_err_joint = -1;
  for (int n = 0; n < 6000; ++n) { /* 5 s of motion, then 1 s of hold */
    double t_next = (n + 1) * dt;
    cr_assert_eq(kn_ctrl_compute(cs, 1, m, d, t_next, q, v, buf, &err), KN_OK, "%s", err.msg);
    cr_assert_eq(kn_mb_step(m, d, q, v, &buf->act, dt, tau, &err), KN_OK, "step %d: %s", n, err.msg);
    kn_ctrl_reference(c, t_next, qr, NULL, NULL);
    for (int i = 0; i < NJ; ++i) {
      double e = fabs(q[i] - qr[i]);
      if (e > max_err) {
        max_err = e;
        max_err_t = t_next;
        max_err_joint = i + 1;
      }
      double ratio = fabs(tau[i]) / EFFORT[i];
      if (ratio > max_tau_ratio) max_tau_ratio = ratio;
    }
  }
  cr_log_info("arm tracking: max |q - q_ref| = %.3e rad (joint %d, t = %.3f s); max |tau|/effort = %.3f", max_err,
              max_err_joint, max_err_t, max_tau_ratio);
  fprintf(stderr, "arm tracking: max |q - q_ref| = %.3e rad (joint %d, t = %.3f s); max |tau|/effort = %.3f\n",
          max_err, max_err_joint, max_err_t, max_tau_ratio);
  cr_assert_lt(max_err, 1e-2, "max tracking error %g rad", max_err);
  cr_assert_lt(max_tau_ratio, 1.0, "tracking should not need saturated torques");
  /* after the hold, at rest on the last knot */
  for (int i = 0; i < NJ; ++i) {
    cr_assert_float_eq(q[i], knots[4 * NJ + i], 2e-3, "joint %d final", i + 1);
    cr_assert_float_eq(v[i], 0.0, 1e-3, "joint %d final velocity", i + 1);
  }
  kn_ctrl_buffers_free(buf);
  kn_mb_data_free(d);
  kn_ctrl_free(c);
  kn_robot_free(r);
}

Test(arm_tracking, step_command_saturates_at_urdf_effort_limits) {
  kn_robot* r = load_arm();
  kn_mb_model* m = r->model;
  kn_error err = {0};
  kn_controller* c = NULL;
  cr_assert_eq(kn_ctrl_create(m, "arm", 0, NULL, &c, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_ctrl_set_gains(c, KP, NJ, KD, NJ, &err), KN_OK, "%s", err.msg);
  /* a 1 rad step on every joint: kp * 1 rad exceeds every effort limit at first
   * (800 > 320, 600 > 176, 300 > 110, 200 > 40, 100 > 40 N m) */
  double target[NJ];
  for (int i = 0; i < NJ; ++i) target[i] = Q0[i] + 1.0;
  cr_assert_eq(kn_ctrl_set_setpoint(c, target, NJ, &err), KN_OK, "%s", err.msg);

  kn_mb_data* d = kn_mb_data_create(m);
  kn_ctrl_buffers* buf = kn_ctrl_buffers_create(m);
  const kn_controller* cs[1] = {c};
  double q[NJ], v[NJ] = {0}, tau[NJ], max_ratio[NJ] = {0};
  memcpy(q, Q0, sizeof q);
  const double dt = 1e-3;
  for (int n = 0; n < 300; ++n) {
    cr_assert_eq(kn_ctrl_compute(cs, 1, m, d, (n + 1) * dt, q, v, buf, &err), KN_OK, "%s", err.msg);
    cr_assert_eq(kn_mb_step(m, d, q, v, &buf->act, dt, tau, &err), KN_OK, "step %d: %s", n, err.msg);
    for (int i = 0; i < NJ; ++i) {
      cr_assert_leq(fabs(tau[i]), EFFORT[i] * (1 + 1e-12), "step %d joint %d: |tau| = %g > %g", n, i + 1,
                    fabs(tau[i]), EFFORT[i]);
      double ratio = fabs(tau[i]) / EFFORT[i];
      if (ratio > max_ratio[i]) max_ratio[i] = ratio;
    }
  }
  /* and the limits are reached (the clamp is active, not just never tested) */
  for (int i = 0; i < NJ; ++i) {
    cr_log_info("joint %d: max |tau|/effort = %.6f", i + 1, max_ratio[i]);
    cr_assert_float_eq(max_ratio[i], 1.0, 1e-12, "joint %d never reached its limit (max ratio %g)", i + 1,
                       max_ratio[i]);
  }
  kn_ctrl_buffers_free(buf);
  kn_mb_data_free(d);
  kn_ctrl_free(c);
  kn_robot_free(r);
}
