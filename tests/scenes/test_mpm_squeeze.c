/* T13 (digest §7.7 "ManiSkill2 comparison", §9): an elastic MPM cube (0.1 m, 0.4 kg, E 1e5 Pa,
 * nu 0.4, mu 0.8) held in the air, against gravity, between two rigid panels that each push with
 * exactly 10 N (examples/models/mpm_panel.urdf: a PD with a far target saturates at the slide's
 * 10 N effort limit, digest §5.3). Analytic steady state on the left panel (statics: the panels
 * share the weight, stiction since mu 10 N = 8 N >= 1.962 N): normal force 10 N along -x (the
 * cube pushes it outward), vertical friction m g / 2 = 1.962 N downward, lateral (y) friction 0.
 * Asserted over the last second: the mean of each within 2 % (2 % of 1.962 N for y), and the
 * peak-to-peak of the lateral force below 0.05 N (the seed's point against ManiSkill2's high-
 * frequency y oscillation). Coarse copy of the seed's scene: h 1/30 m, 8 particles per cell,
 * dt 10 ms, 1.5 s (the seed: h 0.025, 11 ppc, dt 1.25 ms; contact k 1e5). h 0.025 / dt 5 ms / 2 s
 * gave the same numbers (normal 10.00000 N, vertical 1.96200 N, lateral 0, peak-to-peak 4e-14 N)
 * but took 170 s in Release; h 0.05 (2 cells across) is too coarse: the panels sink into the
 * cube and the normal force reads 325 N. */
#include "scene_util.h"

#define PANEL KNEAD_SOURCE_DIR "/examples/models/mpm_panel.urdf"

static int collider(const kn_world* w, const char* name) {
  for (int k = 0; k < w->ncollider; k++)
    if (strcmp(w->colliders[k].name, name) == 0) return k;
  cr_assert_fail("no collider '%s'", name);
  return -1;
}

// (time step, duration, cube density) => the squeeze scene (h 1/30 m, 8 particles per cell)
static test_world squeeze(double dt, double T, double density) {
  char yaml[4096];
  snprintf(yaml, sizeof yaml,
           "time_step: %g\nduration: %g\ngravity: [0, 0, -9.81]\n"
           "robots:\n"
           "  - name: left\n    urdf: %s\n    base_pose: {xyz: [-0.0583333333, 0, 0]}\n"
           "    contact: {friction: 0.8, stiffness: 1e5, dissipation_time: 0.01}\n"
           "    controller: {kp: 1e4, kd: 0, gravity_compensation: false, effort_limits: [10], setpoint: [0.9]}\n"
           "  - name: right\n    urdf: %s\n    base_pose: {xyz: [0.0583333333, 0, 0], rpy: [0, 0, 3.14159265358979]}\n"
           "    contact: {friction: 0.8, stiffness: 1e5, dissipation_time: 0.01}\n"
           "    controller: {kp: 1e4, kd: 0, gravity_compensation: false, effort_limits: [10], setpoint: [0.9]}\n"
           "deformables:\n  - name: cube\n    model: mpm\n    shape: {box: [0.1, 0.1, 0.1]}\n    resolution: 0.0333333333\n"
           "    particles_per_cell: 8\n"
           "    material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.4, density: %g}\n"
           "    friction: 0.8\n    stiffness: 1e5\n    dissipation_time: 0.01\n",
           dt, T, PANEL, PANEL, density);
  return tw_create(yaml);
}

Test(mpm_squeeze, panel_forces_match_statics, .timeout = 300) {
  const double dt = 0.01, T = 1.5;
  test_world t = squeeze(dt, T, 400);
  kn_world* w = t.world;
  int kl = collider(w, "left/panel");
  long n = kn_world_total_steps(w), n1 = n - (long)(1.0 / dt + 0.5);
  double sum[3] = {0, 0, 0}, ymin = 1e30, ymax = -1e30;
  for (long s = 0; s < n; s++) {
    tw_step(&t, 1);
    const double* f = w->mpms[0].collider_force + 3 * kl;
    if (s % 25 == 0) printf("t %.3f: left panel force %.5f %.5f %.5f N, %d contacts\n", w->t, f[0], f[1], f[2], w->mpms[0].ncontact);
    if (s < n1) continue;
    for (int a = 0; a < 3; a++) sum[a] += f[a] / (double)(n - n1);
    ymin = fmin(ymin, f[1]), ymax = fmax(ymax, f[1]);
  }
  const double fz = 0.4 * 9.81 / 2;
  printf("mpm squeeze (last 1 s mean): left panel normal %.5f N (10), vertical %.5f N (-%.4f), lateral %.6f N, "
         "lateral peak-to-peak %.3e N\n", sum[0], sum[2], fz, sum[1], ymax - ymin);
  cr_expect_lt(fabs(-sum[0] - 10.0), 0.2, "normal %g N vs 10 N", -sum[0]);
  cr_expect_lt(fabs(-sum[2] - fz), 0.02 * fz, "vertical friction %g N vs %g N", -sum[2], fz);
  cr_expect_lt(fabs(sum[1]), 0.02 * fz, "lateral friction %g N", sum[1]);
  cr_expect_lt(ymax - ymin, 0.05, "lateral peak-to-peak %g N", ymax - ymin);
  tw_free(&t);
}

/* Friction capacity: the two panels' stiction holds at most 2 mu f = 16 N. A cube of density 1200
 * (11.77 N, 74 % of it) must stay held (its centroid sags by the elastic and contact compliance
 * only: measured 1.1 mm in 1 s); one of density 1800 (17.66 N, 110 %) must slide (measured 4.5 cm
 * in 1 s here; Coulomb sliding of a rigid block would give a = g - 16 N / m = 0.92 m/s^2, 0.46 m:
 * the soft cube slides slower because it bulges around the panels' lower edges, whose contact
 * normals then carry part of its weight). At h 0.025 and dt 5 ms it slides out and falls 1.9 m;
 * the steps after that, with only the two saturated panels left in SAP, failed on a roundoff stall
 * before SAP accepted it (sap/solver.c). */
Test(mpm_squeeze, friction_capacity_holds_below_and_slips_above, .timeout = 300) {
  const double dens[2] = {1200, 1800};
  double drop[2];
  for (int k = 0; k < 2; k++) {
    test_world t = squeeze(0.01, 1.0, dens[k]);
    double c0[3], c1[3];
    kn_sim_mpm_centroid(&t.world->mpms[0], c0);
    tw_step(&t, kn_world_total_steps(t.world));
    kn_sim_mpm_centroid(&t.world->mpms[0], c1);
    drop[k] = c0[2] - c1[2];
    printf("mpm squeeze, density %g (weight %.2f N vs 16 N of stiction): centroid drop %.4f m in 1 s\n", dens[k],
           dens[k] * 1e-3 * 9.81, drop[k]);
    tw_free(&t);
  }
  cr_expect_lt(drop[0], 0.005, "74 %% of the friction capacity: must hold (drop %g m)", drop[0]);
  cr_expect_gt(drop[1], 0.02, "110 %% of the friction capacity: must slide (drop %g m)", drop[1]);
}
