/* controllers/: the joint PD — parameter validation, the actuation it fills, gravity
 * compensation against the analytic pendulum torque. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "controllers/controllers.h"

static const double g0 = 9.81, mass = 2.0, len = 0.5;

static kn_mb_body body_template(const char* name, const char* joint, int parent, kn_joint_type jt) {
  kn_mb_body b;
  memset(&b, 0, sizeof b);
  b.name = (char*)name;
  b.joint_name = (char*)joint;
  b.parent = parent;
  b.jtype = jt;
  kn_pose_identity(&b.X_pj);
  b.axis[1] = 1.0; /* y */
  b.velocity_limit = INFINITY;
  b.effort_limit = INFINITY;
  b.mass = mass;
  b.com[0] = len;
  for (int k = 0; k < 3; ++k) b.I_com[4 * k] = 0.01;
  return b;
}

/* a floating base (6 dofs) carrying a revolute "elbow" (dof 6, effort 30) and a prismatic
 * "slide" (dof 7, no effort limit given: 0 in the URDF sense) */
static kn_mb_model* make_mixed(void) {
  kn_mb_model* m = kn_mb_model_create("mixed");
  kn_error err = {0};
  kn_mb_body base = body_template("base", "float", -1, KN_JOINT_FLOATING);
  base.com[0] = 0.0;
  cr_assert_eq(kn_mb_add_body(m, &base, &err), 0, "%s", err.msg);
  kn_mb_body el = body_template("upper", "elbow", 0, KN_JOINT_REVOLUTE);
  el.effort_limit = 30.0;
  cr_assert_eq(kn_mb_add_body(m, &el, &err), 1, "%s", err.msg);
  kn_mb_body sl = body_template("lower", "slide", 1, KN_JOINT_PRISMATIC);
  sl.effort_limit = 0.0;
  cr_assert_eq(kn_mb_add_body(m, &sl, &err), 2, "%s", err.msg);
  cr_assert_eq(m->nv, 8);
  cr_assert_eq(m->nq, 9);
  return m;
}

/* one revolute pendulum about world y, centre of mass at (len, 0, 0) in the body frame */
static kn_mb_model* make_pendulum(void) {
  kn_mb_model* m = kn_mb_model_create("pendulum");
  kn_error err = {0};
  kn_mb_body b = body_template("bob", "hinge", -1, KN_JOINT_REVOLUTE);
  b.effort_limit = 50.0;
  cr_assert_eq(kn_mb_add_body(m, &b, &err), 0, "%s", err.msg);
  return m;
}

Test(pd, defaults_pick_one_dof_joints_and_urdf_limits) {
  kn_mb_model* m = make_mixed();
  kn_controller* c = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_ctrl_create(m, "arm", 0, NULL, &c, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(c->ndof, 2);
  cr_assert_eq(c->dofs[0], 6);
  cr_assert_eq(c->dofs[1], 7);
  cr_assert_eq(c->qidx[0], 7); /* after the 7 floating coordinates */
  cr_assert_eq(c->qidx[1], 8);
  cr_assert_eq(c->effort[0], 30.0);
  cr_assert(isinf(c->effort[1]), "a zero URDF effort limit means none");
  cr_assert_eq(c->gravity_compensation, 1);
  cr_assert_eq(c->kp[0], 0.0);
  kn_ctrl_free(c);

  const char* names[2] = {"slide", "elbow"};
  cr_assert_eq(kn_ctrl_create_for_joints(m, "by_name", 2, names, &c, &err), KN_OK, "%s", err.msg);
  cr_assert(c->dofs[0] == 7 && c->dofs[1] == 6);
  kn_ctrl_free(c);
  kn_mb_model_free(m);
}

Test(pd, validation_names_the_controller) {
  kn_mb_model* m = make_mixed();
  kn_controller* c = NULL;
  kn_error err = {0};
  int out_of_range[1] = {8};
  cr_assert_eq(kn_ctrl_create(m, "wrist", 1, out_of_range, &c, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "'wrist'") && strstr(err.msg, "dof 8"), "%s", err.msg);
  int twice[2] = {6, 6};
  cr_assert_eq(kn_ctrl_create(m, "wrist", 2, twice, &c, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "twice"), "%s", err.msg);
  int floating[1] = {2};
  cr_assert_eq(kn_ctrl_create(m, "wrist", 1, floating, &c, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "floating joint 'float'"), "%s", err.msg);
  const char* unknown[1] = {"knee"};
  cr_assert_eq(kn_ctrl_create_for_joints(m, "leg", 1, unknown, &c, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "'leg'") && strstr(err.msg, "'knee'"), "%s", err.msg);

  cr_assert_eq(kn_ctrl_create(m, "arm", 0, NULL, &c, &err), KN_OK);
  double kp_bad[2] = {100.0, -1.0}, kd[1] = {5.0}, kp3[3] = {1, 2, 3};
  cr_assert_eq(kn_ctrl_set_gains(c, kp_bad, 2, kd, 1, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "'arm'") && strstr(err.msg, "kp[1]"), "%s", err.msg);
  cr_assert_eq(c->kp[0], 0.0, "a failed set leaves the gains unchanged");
  cr_assert_eq(kn_ctrl_set_gains(c, kp3, 3, kd, 1, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "expected 1 value or 2"), "%s", err.msg);
  double kd_nan[1] = {NAN};
  cr_assert_eq(kn_ctrl_set_gains(c, kp3, 1, kd_nan, 1, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "kd[0]"), "%s", err.msg);
  cr_assert_eq(kn_ctrl_set_gains(c, kp3, 1, kd, 1, &err), KN_OK, "%s", err.msg);
  cr_assert(c->kp[0] == 1.0 && c->kp[1] == 1.0 && c->kd[1] == 5.0, "broadcast");
  double zero_effort[1] = {0.0};
  cr_assert_eq(kn_ctrl_set_effort_limits(c, zero_effort, 1, &err), KN_ERR_INVALID);
  cr_assert_eq(kn_ctrl_set_setpoint(c, kp3, 3, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "expected 2"), "%s", err.msg);

  /* reference sizes must match the controller; ownership passes even on failure */
  double t[2] = {0, 1}, q3[6] = {0, 0, 0, 1, 1, 1};
  kn_trajectory* tr = NULL;
  cr_assert_eq(kn_traj_create(3, 2, t, q3, NULL, KN_TRAJ_LINEAR, &tr, &err), KN_OK);
  cr_assert_eq(kn_ctrl_set_trajectory(c, m, tr, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "'arm'") && strstr(err.msg, "3 joints"), "%s", err.msg);
  kn_sequence* seq = NULL;
  cr_assert_eq(kn_seq_create(1, 0.0, NULL, &seq, &err), KN_OK);
  cr_assert_eq(kn_ctrl_set_sequence(c, seq, &err), KN_ERR_INVALID);

  /* a CSV header naming the controlled joints in swapped columns is rejected */
  const char* swapped[2] = {"slide", "elbow"};
  double q2[4] = {0, 0, 1, 1};
  cr_assert_eq(kn_traj_create(2, 2, t, q2, swapped, KN_TRAJ_LINEAR, &tr, &err), KN_OK);
  cr_assert_eq(kn_ctrl_set_trajectory(c, m, tr, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "'slide'"), "%s", err.msg);
  const char* generic[2] = {"q1", "q2"};
  cr_assert_eq(kn_traj_create(2, 2, t, q2, generic, KN_TRAJ_LINEAR, &tr, &err), KN_OK);
  cr_assert_eq(kn_ctrl_set_trajectory(c, m, tr, &err), KN_OK, "%s", err.msg);

  /* two controllers on one dof */
  kn_controller* c2 = NULL;
  int elbow[1] = {6};
  cr_assert_eq(kn_ctrl_create(m, "elbow_only", 1, elbow, &c2, &err), KN_OK);
  kn_ctrl_buffers* buf = kn_ctrl_buffers_create(m);
  kn_mb_data* d = kn_mb_data_create(m);
  double q[9];
  kn_mb_neutral_q(m, q);
  const kn_controller* both[2] = {c, c2};
  cr_assert_eq(kn_ctrl_compute(both, 2, m, d, 0.0, q, NULL, buf, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "'elbow_only'") && strstr(err.msg, "'arm'") && strstr(err.msg, "elbow"), "%s", err.msg);
  kn_mb_data_free(d);
  kn_ctrl_buffers_free(buf);
  kn_ctrl_free(c2);
  kn_ctrl_free(c);
  kn_mb_model_free(m);
}

/* The filled actuation: gains and references scattered to the right dofs, the sequence's
 * smoothstep value at t, zero and "no limit" elsewhere. */
Test(pd, compute_scatters_references_and_gains) {
  kn_mb_model* m = make_mixed();
  kn_error err = {0};
  kn_controller* c = NULL;
  const char* names[1] = {"slide"};
  cr_assert_eq(kn_ctrl_create_for_joints(m, "slider", 1, names, &c, &err), KN_OK);
  double kp[1] = {400}, kd[1] = {40}, q0[1] = {0.0}, target[1] = {0.2};
  cr_assert_eq(kn_ctrl_set_gains(c, kp, 1, kd, 1, &err), KN_OK);
  kn_ctrl_set_gravity_compensation(c, 0);
  kn_sequence* seq = NULL;
  cr_assert_eq(kn_seq_create(1, 0.0, q0, &seq, &err), KN_OK);
  cr_assert_eq(kn_seq_add_phase(seq, "push", 2.0, target, &err), KN_OK);
  cr_assert_eq(kn_ctrl_set_sequence(c, seq, &err), KN_OK);
  kn_ctrl_buffers* buf = kn_ctrl_buffers_create(m);
  kn_mb_data* d = kn_mb_data_create(m);
  double q[9];
  kn_mb_neutral_q(m, q);
  const kn_controller* cs[1] = {c};
  cr_assert_eq(kn_ctrl_compute(cs, 1, m, d, 1.0, q, NULL, buf, &err), KN_OK, "%s", err.msg);
  for (int i = 0; i < 8; ++i) {
    if (i == 7) continue;
    cr_assert(buf->kp[i] == 0.0 && buf->kd[i] == 0.0 && buf->tau0[i] == 0.0 && isinf(buf->effort[i]), "dof %d", i);
  }
  cr_assert_eq(buf->kp[7], 400.0);
  cr_assert_eq(buf->kd[7], 40.0);
  cr_assert_float_eq(buf->q_ref[7], 0.1, 1e-15);          /* smoothstep(0.5) = 0.5 */
  cr_assert_float_eq(buf->v_ref[7], 0.2 * 1.5 / 2.0, 1e-15); /* 6 s (1 - s) / T */
  cr_assert_eq(buf->tau0[7], 0.0, "gravity compensation off");
  cr_assert(buf->act.kp == buf->kp && buf->act.q_ref == buf->q_ref && buf->act.effort == buf->effort);
  kn_mb_data_free(d);
  kn_ctrl_buffers_free(buf);
  kn_ctrl_free(c);
  kn_mb_model_free(m);
}

/* Pendulum about +y with the centre of mass at R_y(q) (len, 0, 0): the gravity torque about +y
 * is r x F = m g len cos q, so the holding torque is tau_g = -m g len cos q. */
Test(pd, gravity_compensation_matches_pendulum_and_holds_it_still) {
  kn_mb_model* m = make_pendulum();
  kn_error err = {0};
  kn_controller* c = NULL;
  cr_assert_eq(kn_ctrl_create(m, "hold", 0, NULL, &c, &err), KN_OK);
  kn_ctrl_buffers* buf = kn_ctrl_buffers_create(m);
  kn_mb_data* d = kn_mb_data_create(m);
  const kn_controller* cs[1] = {c};
  for (double q0 = -1.2; q0 < 1.3; q0 += 0.3) {
    double q = q0;
    cr_assert_eq(kn_ctrl_compute(cs, 1, m, d, 0.0, &q, NULL, buf, &err), KN_OK, "%s", err.msg);
    cr_assert_float_eq(buf->tau0[0], -mass * g0 * len * cos(q0), 1e-12, "q = %g", q0);
  }
  /* gravity compensation alone (kp = kd = 0) keeps the pendulum at rest for 0.5 s */
  double q = 0.4, v = 0.0, tau = 0.0;
  for (int n = 0; n < 500; ++n) {
    cr_assert_eq(kn_ctrl_compute(cs, 1, m, d, (n + 1) * 1e-3, &q, &v, buf, &err), KN_OK);
    cr_assert_eq(kn_mb_step(m, d, &q, &v, &buf->act, 1e-3, &tau, &err), KN_OK, "%s", err.msg);
  }
  cr_assert_float_eq(q, 0.4, 1e-9);
  cr_assert_float_eq(v, 0.0, 1e-9);
  cr_assert_float_eq(tau, -mass * g0 * len * cos(0.4), 1e-9);
  /* the feed-forward is clamped to the effort limit (m g len = 9.81 > 5) */
  double lim[1] = {5.0};
  cr_assert_eq(kn_ctrl_set_effort_limits(c, lim, 1, &err), KN_OK);
  q = 0.0;
  cr_assert_eq(kn_ctrl_compute(cs, 1, m, d, 0.0, &q, NULL, buf, &err), KN_OK);
  cr_assert_eq(buf->tau0[0], -5.0);
  kn_mb_data_free(d);
  kn_ctrl_buffers_free(buf);
  kn_ctrl_free(c);
  kn_mb_model_free(m);
}

/* Two controllers on disjoint dofs of one tree (an arm and its gripper): each writes only its
 * own dofs; gravity compensation goes only where it is switched on and equals the tree's RNEA
 * gravity torque there. */
Test(pd, two_controllers_share_one_tree) {
  kn_mb_model* m = make_mixed();
  kn_error err = {0};
  kn_controller *arm = NULL, *grip = NULL;
  const char* arm_j[1] = {"elbow"};
  const char* grip_j[1] = {"slide"};
  cr_assert_eq(kn_ctrl_create_for_joints(m, "arm", 1, arm_j, &arm, &err), KN_OK);
  cr_assert_eq(kn_ctrl_create_for_joints(m, "gripper", 1, grip_j, &grip, &err), KN_OK);
  double kpa[1] = {300}, kda[1] = {20}, kpg[1] = {50}, kdg[1] = {2}, sp[1] = {0.3};
  cr_assert_eq(kn_ctrl_set_gains(arm, kpa, 1, kda, 1, &err), KN_OK);
  cr_assert_eq(kn_ctrl_set_gains(grip, kpg, 1, kdg, 1, &err), KN_OK);
  cr_assert_eq(kn_ctrl_set_setpoint(arm, sp, 1, &err), KN_OK);
  kn_ctrl_set_gravity_compensation(grip, 0);
  kn_ctrl_buffers* buf = kn_ctrl_buffers_create(m);
  kn_mb_data* d = kn_mb_data_create(m);
  double q[9], tau_g[8];
  kn_mb_neutral_q(m, q);
  q[7] = 0.7; /* elbow angle: the gravity torque there is not zero */
  const kn_controller* cs[2] = {arm, grip};
  cr_assert_eq(kn_ctrl_compute(cs, 2, m, d, 0.0, q, NULL, buf, &err), KN_OK, "%s", err.msg);
  kn_mb_kinematics(m, q, NULL, d);
  kn_mb_gravity_torques(m, d, tau_g);
  cr_assert(fabs(tau_g[6]) > 1.0, "test needs a loaded elbow, tau_g = %g", tau_g[6]);
  cr_assert_float_eq(buf->tau0[6], tau_g[6], 1e-12);
  cr_assert_eq(buf->tau0[7], 0.0);
  for (int i = 0; i < 6; ++i) cr_assert(buf->tau0[i] == 0.0 && buf->kp[i] == 0.0, "floating dof %d untouched", i);
  cr_assert(buf->kp[6] == 300 && buf->kd[6] == 20 && buf->q_ref[6] == 0.3 && buf->effort[6] == 30.0);
  cr_assert(buf->kp[7] == 50 && buf->kd[7] == 2 && buf->q_ref[7] == 0.0 && isinf(buf->effort[7]));
  kn_mb_data_free(d);
  kn_ctrl_buffers_free(buf);
  kn_ctrl_free(arm);
  kn_ctrl_free(grip);
  kn_mb_model_free(m);
}

/* A mimic joint (coupler) whose master is gravity-compensated gets its own gravity torque as
 * feed-forward: a two-link chain, joint 2 mimics joint 1 (multiplier 1); only joint 1 is
 * controlled. tau0 equals the tree's RNEA gravity torque on both dofs; without compensation
 * neither gets any. */
Test(pd, mimic_joint_gravity_is_compensated_with_its_master) {
  kn_mb_model* m = kn_mb_model_create("mimic_chain");
  kn_error err = {0};
  kn_mb_body a = body_template("upper", "shoulder", -1, KN_JOINT_REVOLUTE);
  cr_assert_eq(kn_mb_add_body(m, &a, &err), 0, "%s", err.msg);
  kn_mb_body b = body_template("lower", "elbow", 0, KN_JOINT_REVOLUTE);
  b.X_pj.p[0] = 2 * len;
  cr_assert_eq(kn_mb_add_body(m, &b, &err), 1, "%s", err.msg);
  kn_mb_coupler cp = {1, 0, 1.0, 0.0};
  cr_assert_geq(kn_mb_add_coupler(m, &cp, &err), 0, "%s", err.msg);
  int dofs[1] = {0};
  kn_controller* c = NULL;
  cr_assert_eq(kn_ctrl_create(m, "arm", 1, dofs, &c, &err), KN_OK, "%s", err.msg);
  kn_ctrl_buffers* buf = kn_ctrl_buffers_create(m);
  kn_mb_data* d = kn_mb_data_create(m);
  const kn_controller* cs[1] = {c};
  double q[2] = {0.3, 0.3}, g[2];
  kn_mb_kinematics(m, q, NULL, d);
  kn_mb_gravity_torques(m, d, g);
  cr_assert(fabs(g[1]) > 1.0, "the mimic joint carries gravity (%g)", g[1]);
  cr_assert_eq(kn_ctrl_compute(cs, 1, m, d, 0.0, q, NULL, buf, &err), KN_OK, "%s", err.msg);
  cr_assert_float_eq(buf->tau0[0], g[0], 1e-12);
  cr_assert_float_eq(buf->tau0[1], g[1], 1e-12);
  kn_ctrl_set_gravity_compensation(c, 0);
  cr_assert_eq(kn_ctrl_compute(cs, 1, m, d, 0.0, q, NULL, buf, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(buf->tau0[0], 0.0);
  cr_assert_eq(buf->tau0[1], 0.0);
  kn_mb_data_free(d);
  kn_ctrl_buffers_free(buf);
  kn_ctrl_free(c);
  kn_mb_model_free(m);
}
