/* Robots through the SAP step: the implicit PD of the controllers as SAP constraints (digest §5.3)
 * and mimic joints as couplers (§5.4).
 *  - knead_arm7 tracking a cubic trajectory: the SAP step and the stand-in kn_mb_step (backend
 *    none) solve the same implicit PD (same gains, references at t_n+1, gravity feed-forward in
 *    v*), so their joint trajectories agree to 1e-3 rad (measured 3e-6), and both track the cubic
 *    within 1e-2 rad (measured 5.4e-3 for both).
 *  - knead_gripper: the right finger mimics the left; |q_right - q_left| stays below 1e-6 m while
 *    the PD drives the left finger. */
#include "scene_util.h"

#define ARM KNEAD_SOURCE_DIR "/examples/models/knead_arm7.urdf"
#define GRIPPER KNEAD_SOURCE_DIR "/examples/models/knead_gripper.urdf"

static const char* arm_fmt =
    "time_step: 0.002\nduration: 1.0\n"
    "contact: {backend: %s}\n"
    "robots:\n"
    "  - name: arm\n"
    "    urdf: " ARM "\n"
    "    q0: [0, 0.3, 0, -1.2, 0, 0.9, 0]\n"
    "    controller:\n"
    "      kp_per_joint: [800, 800, 400, 400, 150, 80, 40]\n"
    "      kd_per_joint: [80, 80, 40, 40, 15, 8, 4]\n"
    "      trajectory:\n"
    "        interpolation: cubic\n"
    "        points: [{t: 0, q: [0, 0.3, 0, -1.2, 0, 0.9, 0]}, {t: 1, q: [0.3, 0.6, 0.1, -1.0, 0.2, 1.1, 0.3]}]\n";

static void run_arm(const char* backend, double q_end[7], double* max_err) {
  char yaml[2048];
  snprintf(yaml, sizeof yaml, arm_fmt, backend);
  test_world t = tw_create(yaml);
  kn_world_tree* tr = &t.world->trees[0];
  kn_controller* c = tr->ctrls[0];
  long n = kn_world_total_steps(t.world);
  *max_err = 0;
  for (long k = 0; k < n; k++) {
    tw_step(&t, 1);
    double qr[7], vr[7], ar[7];
    kn_ctrl_reference(c, t.world->t, qr, vr, ar);
    for (int j = 0; j < 7; j++) *max_err = fmax(*max_err, fabs(tr->q[j] - qr[j]));
  }
  memcpy(q_end, tr->q, 7 * sizeof(double));
  if (strcmp(backend, "sap") == 0)
    cr_log_info("arm (sap): iterations max %d mean %.2f, constraints %d", t.world->stats.max_iterations,
                (double)t.world->stats.iterations / (double)t.world->stats.steps, t.world->last.constraints);
  tw_free(&t);
}

Test(pd_sap, arm_tracks_like_the_stand_in_step) {
  double q_sap[7], q_ref[7], e_sap, e_ref;
  run_arm("sap", q_sap, &e_sap);
  run_arm("none", q_ref, &e_ref);
  double diff = 0;
  for (int j = 0; j < 7; j++) diff = fmax(diff, fabs(q_sap[j] - q_ref[j]));
  cr_log_info("arm: max tracking error sap %.3e rad, kn_mb_step %.3e rad; final |q_sap - q_step| %.3e", e_sap, e_ref,
              diff);
  cr_expect(e_sap < 1e-2, "SAP tracking error %.3e rad", e_sap);
  cr_expect(diff < 1e-3, "SAP and kn_mb_step differ by %.3e rad at t = 1 s", diff);
}

Test(pd_sap, gripper_mimic_coupler_holds) {
  const char* yaml =
      "time_step: 0.002\nduration: 1.0\n"
      "robots:\n"
      "  - name: gripper\n"
      "    urdf: " GRIPPER "\n"
      "    q0: [0.01, 0.01]\n"
      "    controller:\n"
      "      kp: 2000\n"
      "      kd: 50\n"
      "      gravity_compensation: false\n"
      "      sequence:\n"
      "        - {name: open, duration: 0.5, q: [0.045]}\n"
      "        - {name: close, duration: 0.5, q: [0.02]}\n";
  test_world t = tw_create(yaml);
  kn_world_tree* tr = &t.world->trees[0];
  const kn_mb_model* m = tr->robot->model;
  cr_assert_eq(m->ncoupler, 1);
  const kn_mb_coupler* cu = &m->couplers[0];
  int qi = m->bodies[cu->body].q_adr, qj = m->bodies[cu->master].q_adr;
  double worst = 0, q_open = 0;
  long n = kn_world_total_steps(t.world);
  for (long k = 0; k < n; k++) {
    tw_step(&t, 1);
    double g = tr->q[qi] - cu->multiplier * tr->q[qj] - cu->offset;
    worst = fmax(worst, fabs(g));
    if (k == n / 2 - 1) q_open = tr->q[qj];
  }
  cr_log_info("gripper: max |q_mimic - q_master| = %.3e m; master at 0.5 s %.5f, at 1 s %.5f", worst, q_open,
              tr->q[qj]);
  cr_expect(worst < 1e-6, "coupler violation %.3e m", worst);
  cr_expect(fabs(q_open - 0.045) < 2e-3, "the master did not open: %.5f", q_open);
  tw_free(&t);
}
