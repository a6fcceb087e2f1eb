/* The ipc backend's touching start (issue 20, sim/ipc_touch.h): a body placed exactly touching its
 * support (phi = 0 at t = 0) has its barrier's zero moved below it by a shift that is settled in the
 * first step (the body ends it where it was placed) and kept for the pair's whole contact, so there
 * is no lift and no normal-force swing for the lagged friction to read. Default keys unless a case
 * says why; every step meets the universal criteria (ipc_util.h). Each case runs at most 500 steps
 * of a single box (all six 0.25 s of CPU in Release), cheap enough for the sanitizer suites unscaled. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc_util.h"
#include "sim/ipc_touch.h"

/* one step meeting the universal criteria but for the placement's round-off: the slope's pose puts
 * the block at phi = -1.4e-17 m (touching; ipc_step_audited asks phi >= 0 exactly), so detected
 * gaps down to -1e-12 m count as touching here, as for the backend (1e-9 l) */
static void step_touching(test_world* t, double* phi_min) {
  kn_world* w = t->world;
  kn_error err = {0};
  cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s", err.msg);
  for (int i = 0; i < w->ncontact; i++) *phi_min = fmin(*phi_min, w->contacts[i].phi);
  cr_assert(*phi_min >= -1e-12, "step %ld: a contact detected at phi = %.3g m (intersecting)", w->step, *phi_min);
  cr_assert(w->last.residual <= w->last.tolerance, "step %ld: Newton stopped at residual %.3g m/s, above eps_d %.3g m/s",
            w->step, w->last.residual, w->last.tolerance);
}

/* A 1 kg, 0.2 m cube placed touching a slope with mu = tan theta = 0.5 (examples/fidelity's
 * block_slope_mu_0_5_holds, dt 0.01) for 5 s, contact.ipc given as `ipc` => its largest travel
 * along the slope [m] */
static double slope_travel(const char* ipc) {
  char yaml[1024];
  snprintf(yaml, sizeof yaml,
           "time_step: 0.01\ncontact: {backend: ipc, ipc: %s}\nobjects:\n"
           "  - {name: slope, shape: {halfspace: {normal: [-0.4472135954999579, 0, 0.8944271909999159]}}, fixed: true, "
           "friction: 0.5}\n"
           "  - {name: block, shape: {box: [0.2, 0.2, 0.2]}, mass: 1.0, pose: {xyz: [-0.044721359549995794, 0, "
           "0.08944271909999159], rpy: [0, -0.4636476090008061, 0]}, friction: 0.5}\n",
           ipc);
  test_world t = tw_create(yaml);
  double* q = tw_object_q(&t, "block");
  const double x0[3] = {q[0], q[1], q[2]}, down[3] = {-0.8944271909999159, 0, -0.4472135954999579};
  double worst = 0, phi_min = INFINITY;
  for (int k = 0; k < 500; k++) {
    step_touching(&t, &phi_min);
    double s = 0;
    for (int a = 0; a < 3; a++) s += down[a] * (q[a] - x0[a]);
    worst = fmax(worst, fabs(s));
  }
  cr_log_info("touching slope at mu = tan theta (ipc: %s): largest travel %.3e m over 5 s, smallest phi %.3g m", ipc,
              worst, phi_min);
  tw_free(&t);
  return worst;
}

/* Coulomb's answer is 0 m of travel; judged within 1 mm over 5 s, as the fidelity check. Before the
 * kept shift it slid 108 mm (the lift's swing of the lagged normal force). The case is about the
 * start, so it sets contact.ipc.epsilon_v = 1e-5 m/s (the digest's value for friction benchmarks,
 * §5.6): at mu = tan theta exactly, IPC's smoothed friction reaches the full cone only at a slip
 * speed >= eps_v (§5.2), so the default eps_v = 1e-3 l = 4.29e-4 m/s makes the block creep at
 * eps_v whatever its start (the second case). Measured 6.2e-5 m (1.25 eps_v over 5 s: nothing left
 * of the start; 2.9e-4 m with the smoothstep removal, 108 mm before the kept shift). */
Test(ipc_touch, box_touching_slope_at_mu_tan_theta_stays_put) {
  double x = slope_travel("{epsilon_v: 1e-5}");
  cr_expect(x < 1e-3, "the block travelled %.3e m along the slope (allowed 1 mm)", x);
}

/* The same at the defaults: only the eps_v creep is left, no start transient: at most 1.1 eps_v
 * over 5 s (the creep speed at mu = tan theta is eps_v, digest §9 F1's table; l = 0.4293 m, the
 * diagonal of the tilted cube's world-axis box (0.2 (cos + sin), 0.2, 0.2 (cos + sin)), so eps_v =
 * 4.29e-4 m/s; measured 2.153 mm, 1.003 eps_v; 7 mm with the smoothstep removal, 108 mm before the
 * kept shift). */
Test(ipc_touch, box_touching_slope_at_defaults_only_creeps_at_eps_v) {
  const double c = 0.2 * (0.8944271909999159 + 0.4472135954999579), eps_v = 1e-3 * sqrt(2 * c * c + 0.04);
  double x = slope_travel("{}");
  cr_expect(x < 1.1 * eps_v * 5.0, "the block travelled %.3e m along the slope (allowed %.3e m)", x, 5.5 * eps_v);
}

/* A 1 kg, 0.1 m box placed touching a flat floor stays where it was placed: its first step settles
 * the pairs' shifts so that it ends 1e-7 l above the floor (nl_ipc.c, settle), and from then on its
 * height stays within [0, 2e-7 l] (2 x the settled gap; the solve's tolerance eps_d dt = 1e-8 l a
 * step), at rest and not moved sideways (a flat floor), never detected intersecting (the universal
 * criteria); with the shift removed it rose to its resting gap 0.765 dhat = 1.3e-4 m, 7600 times that.
 * (The common robotics start: taken, not refused.) */
Test(ipc_touch, box_touching_floor_stays_where_placed) {
  const char* yaml = "time_step: 0.01\ncontact: {backend: ipc}\nobjects:\n"
                     "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, friction: 0.5}\n"
                     "  - {name: box, shape: {box: [0.1, 0.1, 0.1]}, mass: 1.0, pose: {xyz: [0, 0, 0.05]}, friction: 0.5}\n";
  test_world t = tw_create(yaml);
  double* q = tw_object_q(&t, "box");
  const double ell = sqrt(3.0) * 0.1;
  ipc_audit au = ipc_audit_start();
  double top = -INFINITY, low = INFINITY;
  for (int k = 0; k < 200; k++) {
    ipc_step_audited(&t, 1, &au);
    top = fmax(top, q[2] - 0.05), low = fmin(low, q[2] - 0.05);
  }
  ipc_audit_log("touching floor", &au);
  const double* v = t.world->trees[t.world->objects[1].tree].v;
  cr_log_info("touching floor: height over 2 s in [%.4e, %.4e] m (1e-7 l = %.4e m), v_z %.2e m/s", low, top, 1e-7 * ell,
              v[5]);
  cr_expect(low >= 0 && top <= 2e-7 * ell, "the box's height went over [%.4e, %.4e] m, allowed [0, %.4e] m", low, top,
            2e-7 * ell);
  cr_expect(fabs(v[5]) < 1e-6 * ell, "v_z %.3g m/s: not at rest", v[5]);
  cr_expect(fabs(q[0]) < 1e-12 && fabs(q[1]) < 1e-12, "moved sideways (%.2e, %.2e) m on a flat floor", q[0], q[1]);
  tw_free(&t);
}

/* Saved states: the kept shifts round-trip; a state saved before they were kept (main before
 * 2026-11-27: the ipc part ends after kappa) loads with none; a truncated or foreign one is refused
 * naming what is wrong, leaving the kept shifts as they were. */
Test(ipc_touch, saved_shifts_load_old_states_and_refuse_bad_ones) {
  kn_ipc_touch a = {0}, b = {0};
  kn_error err = {0};
  const kn_contact_side sa = {.kind = KN_SIDE_COLLIDER, .body = 0}, sb = {.kind = KN_SIDE_COLLIDER, .body = 1};
  const double pb[3] = {0.05, -0.05, -0.05};
  int kind;
  cr_assert_eq(kn_ipc_touch_reserve(&a, 1, &err), KN_OK);
  cr_expect_eq(kn_ipc_touch_shift(&a, 0, &sa, &sb, 0.0, pb, 1e-4, 1e-12, &kind), 0.5e-4);
  cr_expect_eq(kind, KN_IPC_TOUCH_FRESH);
  kn_ipc_touch_commit(&a, 1);
  kn_state_out out = {0};
  kn_ipc_touch_save(&a, &out);
  kn_state_in in = {out.data, out.len, 0};
  cr_assert_eq(kn_ipc_touch_load(&b, &in, &err), KN_OK, "%s", err.msg);
  cr_expect(b.nprev == 1 && b.prev[0].s == 0.5e-4 && memcmp(b.prev[0].p, pb, sizeof pb) == 0, "round trip");
  /* found again (the nearest with the same sides, however far B's point moved: a rolling ball):
   * kept, not fresh; forgotten once the pair is dhat apart */
  cr_assert_eq(kn_ipc_touch_reserve(&b, 1, &err), KN_OK);
  const double moved[3] = {0.06, -0.05, -0.05};
  cr_expect_eq(kn_ipc_touch_shift(&b, 0, &sa, &sb, 3e-5, moved, 1e-4, 1e-12, &kind), 0.5e-4);
  cr_expect_eq(kind, KN_IPC_TOUCH_KEPT);
  cr_expect_eq(kn_ipc_touch_shift(&b, 0, &sa, &sb, 1e-4, pb, 1e-4, 1e-12, &kind), 0.0);
  cr_expect_eq(kind, KN_IPC_TOUCH_NONE);
  /* a new pair (other sides) inside (an MPM particle in a collider): shifted for its step only */
  const kn_contact_side sp = {.kind = KN_SIDE_PARTICLE, .body = 0, .point = {7}};
  cr_expect(fabs(kn_ipc_touch_shift(&b, 0, &sa, &sp, -2e-5, pb, 1e-4, 1e-12, &kind) - 7e-5) < 1e-18);
  cr_expect_eq(kind, KN_IPC_TOUCH_INSIDE);
  cr_expect_eq(b.cur[0].s, 0.0);
  kn_state_in old = {out.data, 0, 0}; /* nothing after kappa */
  cr_expect_eq(kn_ipc_touch_load(&b, &old, &err), KN_OK, "%s", err.msg);
  cr_expect_eq(b.nprev, 0);
  kn_state_in cut = {out.data, out.len - 8, 0};
  cr_expect_eq(kn_ipc_touch_load(&a, &cut, &err), KN_ERR_PARSE);
  cr_log_info("truncated: %s", err.msg);
  cr_expect(strstr(err.msg, "touching-start shift 0 of 1 is missing or invalid") != NULL, "%s", err.msg);
  kn_state_out longer = {0};
  kn_ipc_touch_save(&a, &longer);
  kn_state_put_f64(&longer, pb, 1);
  kn_state_in extra = {longer.data, longer.len, 0};
  cr_expect_eq(kn_ipc_touch_load(&a, &extra, &err), KN_ERR_PARSE);
  cr_expect(strstr(err.msg, "unread bytes") != NULL, "%s", err.msg);
  cr_expect(a.nprev == 1 && a.prev[0].s == 0.5e-4, "a refused load left the shifts as they were");
  free(out.data), free(longer.data);
  kn_ipc_touch_free(&a), kn_ipc_touch_free(&b);
}

/* (scene yaml, steps, dt, downhill direction, the analytic travel x(t), tolerance tol + rel |x(t)|)
 * => the largest |error| of the block's travel along the slope over its tolerance, every step
 * meeting step_touching's criteria; *err the |error| there */
static double slope_curve_error(const char* yaml, int steps, double dt, const double down[3], double (*x)(double),
                                double tol, double rel, double* err) {
  test_world t = tw_create(yaml);
  double* q = tw_object_q(&t, "block");
  const double x0[3] = {q[0], q[1], q[2]};
  double worst = 0, phi_min = INFINITY;
  for (int k = 1; k <= steps; k++) {
    step_touching(&t, &phi_min);
    double s = 0, r = x(k * dt);
    for (int a = 0; a < 3; a++) s += down[a] * (q[a] - x0[a]);
    if (fabs(s - r) / (tol + rel * fabs(r)) > worst) worst = fabs(s - r) / (tol + rel * fabs(r)), *err = fabs(s - r);
  }
  tw_free(&t);
  return worst;
}

static double incline_stop(double t) { /* v0 = 0.1 m/s, a = g (0.177 cos 10 deg - sin 10 deg) */
  const double a = 9.81 * (0.177 * cos(M_PI / 18) - sin(M_PI / 18)), tau = fmin(t, 0.1 / a);
  return 0.1 * tau - 0.5 * a * tau * tau;
}

/* examples/fidelity's block_incline_stop_dt_0_1 at the defaults: the 0.5 m block placed touching a
 * 10 degree slope at 0.1 m/s decelerates at 0.0065 m/s^2 and stops at 0.769 m; judged as there,
 * within v0 h / 2 + 2 mm = 7 mm of the curve over 20 s (SAP 4.4 mm). With the shift removed by a
 * smoothstep the step's lambda was read at the new shift's gap (1.6 m g) and the block stopped dead
 * at 3 cm: 0.726 m off. Measured 4.94 mm. */
Test(ipc_touch, block_launched_touching_at_dt_0_1_stops_where_coulomb_says) {
  const char* yaml = "time_step: 0.1\ncontact: {backend: ipc}\nobjects:\n"
                     "  - {name: slope, shape: {halfspace: {normal: [-0.17364817766693033, 0, 0.984807753012208]}}, "
                     "fixed: true, friction: 0.177}\n"
                     "  - {name: block, shape: {box: [0.5, 0.5, 0.5]}, mass: 1.0, pose: {xyz: [-0.04341204441673258, 0, "
                     "0.246201938253052], rpy: [0, -0.17453292519943295, 0]}, velocity: [0, 0, 0, -0.1, 0, 0], "
                     "friction: 0.177}\n";
  const double down[3] = {-0.984807753012208, 0, -0.17364817766693033};
  double e = 0, r = slope_curve_error(yaml, 200, 0.1, down, incline_stop, 0.007, 0, &e);
  cr_log_info("touching block at dt 0.1: largest |x - x_Coulomb| %.4e m over 20 s", e);
  cr_expect(r <= 1, "the block's travel is %.4e m off Coulomb's curve (allowed 7 mm)", e);
}

static double slide_0_49(double t) { return 0.5 * 9.81 * (1 / sqrt(5.0) - 0.49 * 2 / sqrt(5.0)) * t * t; }

/* examples/fidelity's block_slope_mu_0_49_slides at the defaults: the 0.2 m cube placed touching
 * the tan theta = 0.5 slope with mu 0.49 slides at a = 0.0877 m/s^2 from rest; judged as there,
 * within 1 mm + 2 % of the curve over 5 s (SAP 0.03 mm). The smoothstep removal's lambda (6.9 N
 * for 4.3 N) held it for 0.5 s: 45 mm behind. Measured 0.47 mm at 1.07 s (0.23 of its bound). */
Test(ipc_touch, block_placed_touching_above_its_cone_slides_from_rest) {
  const char* yaml = "time_step: 0.01\ncontact: {backend: ipc}\nobjects:\n"
                     "  - {name: slope, shape: {halfspace: {normal: [-0.4472135954999579, 0, 0.8944271909999159]}}, "
                     "fixed: true, friction: 0.49}\n"
                     "  - {name: block, shape: {box: [0.2, 0.2, 0.2]}, mass: 1.0, pose: {xyz: [-0.044721359549995794, 0, "
                     "0.08944271909999159], rpy: [0, -0.4636476090008061, 0]}, friction: 0.49}\n";
  const double down[3] = {-0.8944271909999159, 0, -0.4472135954999579};
  double e = 0, r = slope_curve_error(yaml, 500, 0.01, down, slide_0_49, 0.001, 0.02, &e);
  cr_log_info("touching block at mu 0.49: |x - x_Coulomb| %.4e m where largest against 1 mm + 2 %% x (%.3f of it)", e,
              r);
  cr_expect(r <= 1, "the block's travel is %.4e m off Coulomb's curve (%.3f of 1 mm + 2 %% x)", e, r);
}
