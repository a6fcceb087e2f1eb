/* hello_arm — the smallest complete use of knead's library API: load a URDF robot, hold it in a
 * bent pose with a joint PD controller while gravity pulls on it, step it for two seconds and
 * print the joint positions. Gravity compensation is off, so the arm sags until the PD torque
 * balances gravity: the steady deviation is about Kp^-1 g(q), printed for comparison.
 *
 *   hello_arm [robot.urdf]        default: the project's 7-DoF arm, examples/models/knead_arm7.urdf */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knead.h"

#ifndef KNEAD_EXAMPLE_ARM
#define KNEAD_EXAMPLE_ARM "examples/models/knead_arm7.urdf"
#endif

static void print_q(double t, const double* q, int nq) {
  printf("t = %4.2f s  q =", t);
  for (int i = 0; i < nq; ++i) printf(" %+.4f", q[i]);
  printf("\n");
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : KNEAD_EXAMPLE_ARM;
  kn_error err = {0};
  kn_urdf_options opt = kn_urdf_options_default();
  kn_robot* robot = NULL;
  if (kn_urdf_load(path, &opt, &robot, &err) != KN_OK) {
    fprintf(stderr, "hello_arm: %s\n", err.msg);
    return 1;
  }
  for (int i = 0; i < robot->warnings.count; ++i) fprintf(stderr, "hello_arm: warning: %s\n", robot->warnings.items[i]);
  const kn_mb_model* m = robot->model;
  printf("%s: %d bodies, %d DoFs, %.3f kg\n", m->name, m->nbody, m->nv, kn_mb_total_mass(m));

  /* a bent pose: alternate +-0.4 rad on every 1-DoF joint, inside its limits */
  double* q = kn_calloc((size_t)m->nq, sizeof(double));
  double* v = kn_calloc((size_t)m->nv, sizeof(double));
  kn_mb_neutral_q(m, q);
  for (int b = 0, k = 0; b < m->nbody; ++b) {
    const kn_mb_body* body = &m->bodies[b];
    if (body->nq != 1) continue;
    double x = (k++ % 2) ? -0.4 : 0.4;
    if (body->has_position_limits) x = fmin(fmax(x, body->lower), body->upper);
    q[body->q_adr] = x;
  }

  /* a PD controller on every joint, holding that pose: kp 400 N m/rad, kd 40 N m s/rad, no
   * gravity-compensation feed-forward */
  kn_controller* ctrl = NULL;
  kn_ctrl_buffers* buf = kn_ctrl_buffers_create(m);
  kn_mb_data* d = kn_mb_data_create(m);
  double kp = 400.0, kd = 40.0;
  int status = 1;
  if (kn_ctrl_create(m, "hold", 0, NULL, &ctrl, &err) != KN_OK || kn_ctrl_set_gains(ctrl, &kp, 1, &kd, 1, &err) != KN_OK)
    goto done;
  kn_ctrl_set_gravity_compensation(ctrl, 0);
  double* target = kn_calloc((size_t)ctrl->ndof, sizeof(double));
  for (int i = 0; i < ctrl->ndof; ++i) target[i] = q[ctrl->qidx[i]];
  double* target_q = kn_calloc((size_t)m->nq, sizeof(double));
  memcpy(target_q, q, (size_t)m->nq * sizeof(double));
  kn_status st = kn_ctrl_set_setpoint(ctrl, target, ctrl->ndof, &err);
  if (st != KN_OK) {
    free(target);
    free(target_q);
    goto done;
  }

  /* 2 s at dt = 1 ms; the controller is evaluated at the start of every step */
  const double dt = 1e-3;
  const kn_controller* cs[1] = {ctrl};
  double drift = 0.0;
  print_q(0.0, q, m->nq);
  for (int n = 1; n <= 2000; ++n) {
    double t = (n - 1) * dt;
    if (kn_ctrl_compute(cs, 1, m, d, t, q, v, buf, &err) != KN_OK) break;
    if (kn_mb_step(m, d, q, v, &buf->act, dt, NULL, &err) != KN_OK) break;
    if (n % 250 == 0) print_q(n * dt, q, m->nq);
    if (n == 2000) {
      for (int i = 0; i < ctrl->ndof; ++i) drift = fmax(drift, fabs(q[ctrl->qidx[i]] - target[i]));
      /* static estimate: the PD spring balances gravity at the held pose, kp dq = g(q) */
      double* g = kn_calloc((size_t)m->nv, sizeof(double));
      kn_mb_kinematics(m, target_q, NULL, d);
      kn_mb_gravity_torques(m, d, g);
      double estimate = 0.0;
      for (int i = 0; i < ctrl->ndof; ++i) estimate = fmax(estimate, fabs(g[ctrl->dofs[i]]) / kp);
      free(g);
      printf("largest deviation from the held pose after 2 s: %.4f rad (static estimate max |g_i| / kp = %.4f)\n",
             drift, estimate);
      status = 0;
    }
  }
  free(target);
  free(target_q);

done:
  if (status) fprintf(stderr, "hello_arm: %s\n", err.msg);
  kn_ctrl_free(ctrl);
  kn_ctrl_buffers_free(buf);
  kn_mb_data_free(d);
  free(q);
  free(v);
  kn_robot_free(robot);
  return status;
}
