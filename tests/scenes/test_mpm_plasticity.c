/* MPM elastoplasticity coupled to a robot through SAP (digest §7.6): a dough strip 0.08 x 0.02 x
 * 0.03 m (E 1e5, nu 0.4, rho 1e3; h 0.01, 8 particles per cell: 384 particles) rests on a fixed
 * ground and is indented across its width by the rod (r 0.01 m, axis y) of
 * examples/models/knead_indenter.urdf on a PD-driven prismatic slide (kp 1e5, kd 600): from 7.5 mm
 * above the top particle layer down 1.75 cm in 0.1 s, held 0.06 s, lifted 3.75 cm in 0.1 s, then
 * 0.14 s clear of the strip (dt 0.02). Coarse on purpose: the dense Schur clique of the ground
 * contacts makes each step cost ~0.3 s in Release (sizes in the report).
 * Measure: the mean height of the top particle layer far from the rod (|x| > 0.025) minus that
 * under it (|x| < 0.004): d_max at the end of the hold, d_end at the end.
 * Plastic (yield stress 1e3 Pa): the dent stays, |d_end - d_max| < 20 % d_max.
 * Elastic (yield stress 0): it recovers, d_end < 20 % d_max.
 * Both: d_max between 4 and 11 mm, and only the plastic strip has F_P != I.
 * The rod's lowest line goes 9.9 mm below the top particle centres (to z 0.0176), but on this
 * coarse grid (h = rod radius) the layer under it ends ~2 mm above that line and the far layer
 * sinks ~0.3 mm with it: measured d_max 5.0 mm (elastic) and 6.0 mm (plastic), Release. So the
 * 20 % criteria are taken relative to the measured indentation d_max, not the rod travel.
 * Measured (dt 0.02): plastic d_end 5.94 mm = 98.5 % of d_max, max |F_P - I| 0.46; elastic d_end
 * -0.03 mm (-0.6 %). At dt 0.01: 6.68 -> 6.64 mm (99.5 %), elastic 5.66 -> 0.15 mm (2.6 %). */
#include <stdlib.h>

#include "scene_util.h"

#define INDENTER KNEAD_SOURCE_DIR "/examples/models/knead_indenter.urdf"
#define DT 0.02

typedef struct {
  double d_max, d_end, max_plastic, punch_min;
} indent_result;

// top-layer particles (marked in top) => mean height far from the punch - mean height under it
static double layer_dent(const kn_mpm_body* b, const unsigned char* top) {
  double zu = 0, zf = 0;
  int nu = 0, nf = 0;
  for (int p = 0; p < b->np; p++) {
    if (!top[p]) continue;
    const double* x = b->x + 3 * p;
    if (fabs(x[0]) < 0.004) zu += x[2], nu++;
    if (fabs(x[0]) > 0.025) zf += x[2], nf++;
  }
  cr_assert(nu > 0 && nf > 0, "layers: %d under, %d far", nu, nf);
  return zf / nf - zu / nu;
}

static indent_result indent(double yield_stress) {
  char yaml[4096];
  snprintf(yaml, sizeof yaml,
           "time_step: %g\nduration: 0.4\n"
           "objects:\n  - {name: ground, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, friction: 0.8}\n"
           "robots:\n  - name: punch\n    urdf: " INDENTER "\n    base_pose: {xyz: [0, 0, 0.045]}\n"
           "    contact: {stiffness: 1e8, dissipation_time: 0.01}\n"
           "    controller:\n      kp: 1e5\n      kd: 600\n"
           "      trajectory:\n        interpolation: linear\n"
           "        points: [{t: 0, q: [0]}, {t: 0.1, q: [-0.0175]}, {t: 0.16, q: [-0.0175]}, {t: 0.26, q: [0.02]},"
           " {t: 0.4, q: [0.02]}]\n"
           "deformables:\n  - name: dough\n    model: mpm\n    shape: {box: [0.08, 0.02, 0.03]}\n"
           "    resolution: 0.01\n    particles_per_cell: 8\n"
           "    material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3, "
           "yield_stress: %g}\n"
           "    pose: {xyz: [0, 0, 0.015]}\n    friction: 0.8\n    stiffness: 1e8\n    dissipation_time: 0.01\n",
           DT, yield_stress);
  test_world t = tw_create(yaml);
  kn_mpm_body* b = t.world->mpms[0].body;
  cr_assert_eq(b->np, 384);
  unsigned char* top = calloc((size_t)b->np, 1);
  for (int p = 0; p < b->np; p++) top[p] = b->x[3 * p + 2] > 0.025;
  const kn_world_tree* tr = &t.world->trees[t.world->robots[0].tree];
  indent_result r = {0, 0, 0, 1};
  long n = kn_world_total_steps(t.world);
  for (long k = 1; k <= n; k++) {
    tw_step(&t, 1);
    r.punch_min = fmin(r.punch_min, 0.045 + tr->q[0] - 0.01);
    if (fabs(t.world->t - 0.16) < 0.5 * DT) r.d_max = layer_dent(b, top);
  }
  r.d_end = layer_dent(b, top);
  for (int p = 0; p < b->np; p++) {
    double s = 0;
    for (int a = 0; a < 9; a++) {
      double d = b->FP[9 * p + a] - (a % 4 == 0);
      s += d * d;
    }
    r.max_plastic = fmax(r.max_plastic, sqrt(s));
  }
  printf("mpm indentation, yield %g Pa: rod's lowest line down to z %.4f m, dent %.2f mm at hold, %.2f mm after "
         "(%.1f %%), max |F_P - I| %.3f, %ld steps, SAP iterations max %d\n",
         yield_stress, r.punch_min, 1e3 * r.d_max, 1e3 * r.d_end, 100 * r.d_end / r.d_max, r.max_plastic, n,
         t.world->stats.max_iterations);
  free(top);
  tw_free(&t);
  return r;
}

Test(mpm_plasticity, plastic_dent_stays, .timeout = 120) {
  indent_result r = indent(1e3);
  cr_expect(r.d_max > 0.004 && r.d_max < 0.011, "dent at hold %g m", r.d_max);
  cr_expect_lt(fabs(r.d_end - r.d_max), 0.2 * r.d_max, "permanent dent %g vs %g", r.d_end, r.d_max);
  cr_expect_gt(r.max_plastic, 0.05, "plastic flow |F_P - I| %g", r.max_plastic);
}

Test(mpm_plasticity, elastic_recovers, .timeout = 120) {
  indent_result r = indent(0);
  cr_expect(r.d_max > 0.004 && r.d_max < 0.011, "dent at hold %g m", r.d_max);
  cr_expect_lt(fabs(r.d_end), 0.2 * r.d_max, "residual dent %g vs %g", r.d_end, r.d_max);
  cr_expect_eq(r.max_plastic, 0.0, "elastic: F_P stays I");
}
