/* The held box's drift in the palm through the shake (issue 19's target: at most a tenth of SAP's),
 * penalty's continuous mode with its anchored friction (the defaults), on the regression
 * box_50mm_500g: grasp_held's measure, the largest distance of the box's origin in the palm frame
 * from where it was at 2.4 s, over 2.4-3.65 s. No pair slips there (8 pairs: the pads' 4 bottom
 * corners on the box's faces and their 4 vertical edges on its top edges, none relaxed or dropped,
 * |f_t| <= 0.5 mu lambda), so the measure holds two things:
 *   the springs' elastic stretch: the shake swings the box's load along the palm by 4.5 N, over 8
 *     tangential springs of k: 4.5 / 8k = 0.0056 mm at the default k 1e5 N/m (0.056 at 1e4), 1/k;
 *   the tangent path's error: a pad vertex's x1 = x0 + dt J v is the tangent of its arc, dt^2/2 times
 *     its centripetal acceleration off (0.042 mm at dt 1e-2, 3.6x less at dt 5e-3), at every step,
 *     which no k removes; sim/mesh_arcs.c puts x1 on the arc.
 * SAP's 0.082 mm is the second kind alone (along the palm's x, largest at the shake's fastest, back
 * to 0.003 mm at its end; 0.022 mm at dt 5e-3, 0.0057 at 2.5e-3: dt^2), not creep.
 * Measured: default keys (k 1e5) 0.00715 mm (before the arcs 0.0427): 0.087 of SAP's, the target;
 * k 1e4 (the continuous mode's default before issue 19's single default) 0.0609 mm: a tenth of SAP's
 * is not reachable at k 1e4 by this measure. Rest to rest (the settle and
 * the hold lengthened as in test_penalty_grasp.c, the springs' stretch cancels) the box slips less
 * than 1e-6 m. Four runs (380, 380, 380 and 600 steps), about 2.5 s in Release. */
#include "multibody/multibody.h"
#include "scene_util.h"

// box_50mm_500g on `backend` (penalty: its continuous mode, or the discrete springs when discrete)
// with the keys `extra` => grasp_held's drift [mm]; rest: the settle and hold lengthened, *slip the
// box's move in the palm from t = 3.39 s to 5.99 s [m]
static double drift_mode(const char* backend, int discrete, const char* extra, int rest, double* slip) {
  char path[512], b[64];
  snprintf(path, sizeof path, "%s/examples/regression/box_50mm_500g.yaml", KNEAD_SOURCE_DIR);
  snprintf(b, sizeof b, "contact.backend=%s", backend);
  const char* set[5] = {b, "contact.penalty.continuous=true"};
  int n = discrete ? 1 : 2;
  if (extra) set[n++] = extra;
  if (rest) set[n++] = "duration=6", set[n++] = "robots[0].controller.sequence[3].duration=1.2";
  test_world t = {0};
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_with(path, set, n, &t.scene, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(t.scene, &t.world, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_checks_attach(t.world, &err), KN_OK, "%s", err.msg);
  kn_world* w = t.world;
  int arm = -1, box = -1;
  for (int r = 0; r < w->nrobot; r++)
    if (strcmp(w->robots[r].name, "gripper") == 0) arm = w->robots[r].tree;
  for (int o = 0; o < w->nobject; o++)
    if (strcmp(w->objects[o].name, "box") == 0) box = w->objects[o].tree;
  const kn_mb_model* m = w->trees[arm].robot->model;
  int palm = kn_mb_find_body(m, "gripper_palm");
  cr_assert(palm >= 0 && box >= 0);
  kn_mb_data* d = kn_mb_data_create(m);
  double p[2][3] = {{0}};
  long steps = lround(t.scene->duration / t.scene->time_step);
  for (long k = 0; k < steps; k++) {
    if (k == 339 || k == 599) { /* the box's position in the palm's frame */
      kn_mb_kinematics(m, w->trees[arm].q, NULL, d);
      const kn_pose* X = &d->X_wb[palm];
      const double* q = w->trees[box].q;
      double r[3] = {q[0] - X->p[0], q[1] - X->p[1], q[2] - X->p[2]};
      for (int c = 0; c < 3; c++) p[k == 599][c] = X->R[c] * r[0] + X->R[3 + c] * r[1] + X->R[6 + c] * r[2];
    }
    cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s %s, step %ld: %s", backend, extra ? extra : "", k + 1, err.msg);
  }
  if (slip) *slip = sqrt(pow(p[1][0] - p[0][0], 2) + pow(p[1][1] - p[0][1], 2) + pow(p[1][2] - p[0][2], 2));
  int nr = 0;
  double mm = NAN;
  const kn_check_result* res = kn_world_checks(w, &nr);
  for (int i = 0; i < nr; i++) {
    if (strcmp(res[i].name, "golden") != 0) cr_expect(res[i].passed, "%s %s: %s", backend, res[i].name, res[i].message);
    if (strcmp(res[i].name, "held_during_shake") == 0) mm = res[i].measured;
  }
  kn_mb_data_free(d);
  tw_free(&t);
  return mm;
}

static double drift(const char* backend, const char* extra, int rest, double* slip) {
  return drift_mode(backend, 0, extra, rest, slip);
}

Test(penalty_cpf_drift, held_box_drift_is_the_springs_stretch) {
  double sap = drift("sap", NULL, 0, NULL), k5 = drift("penalty", NULL, 0, NULL);
  /* the stretch's 1/k: k 1e4 N/m set on every contact (the floor's too) against the default 1e5 */
  double k4 = drift("penalty", "contact.penalty.stiffness=1e4", 0, NULL), slip = NAN;
  drift("penalty", NULL, 1, &slip);
  cr_log_info("grasp_held drift through the shake: sap %.5f mm; continuous anchored k 1e4 %.5f mm, default k 1e5 %.5f mm "
              "(%.3f of sap's); slip rest to rest %.3g m",
              sap, k4, k5, k5 / sap, slip);
  /* SAP's, as measured before this work: 0.0819 mm */
  cr_expect(fabs(sap - 0.0819) <= 0.002, "sap %.5f mm", sap);
  /* the stretch: 4.5 N over 8 springs of 1e4 N/m, 0.056 mm, plus the x load's (0.78 N) */
  cr_expect(k4 > 0.05 && k4 < 0.07, "k 1e4: %.5f mm", k4);
  /* 1/k: without the arcs 0.0604 / 0.0427 = 1.4 */
  cr_expect(k4 / k5 > 7, "k 1e4 over k 1e5: %.3f (1/k: 10)", k4 / k5);
  /* the target at the defaults: a tenth of SAP's 0.0819 mm */
  cr_expect(k5 <= 0.00819, "default k 1e5: %.5f mm, a tenth of sap's 0.0819 mm", k5);
  cr_expect(slip <= 1e-6, "slipped %.3g m rest to rest", slip);
}

/* The discrete springs (the default mode, k 1e5): their rigid ends on the arcs too (nl_penalty.c's
 * spring_arcs). Measured: 0.00714 mm, 0.087 of SAP's (0.0427 mm with the tangent ends). The floor is
 * the springs' elastic stretch, 4.5 N over 8 tangential springs of 1e5 N/m: 0.0056 mm. Two runs of
 * 380 steps, well under a second in Release. */
Test(penalty_cpf_drift, discrete_held_box_drift_is_a_tenth_of_saps) {
  double sap = drift("sap", NULL, 0, NULL), dis = drift_mode("penalty", 1, NULL, 0, NULL);
  cr_log_info("grasp_held drift through the shake: sap %.5f mm; discrete springs %.5f mm (%.3f of sap's)", sap, dis,
              dis / sap);
  cr_expect(fabs(sap - 0.0819) <= 0.002, "sap %.5f mm", sap);
  cr_expect(dis <= 0.1 * sap, "discrete: %.5f mm, a tenth of sap's %.5f", dis, 0.1 * sap);
  /* not below the stretch 0.0056 mm (the x load's adds to it) */
  cr_expect(dis >= 0.005, "discrete: %.5f mm below the springs' stretch", dis);
}
