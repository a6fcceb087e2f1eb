/* The smooth_friction backend's volume constraint (digest implicit-smooth-friction.md §3.5, T6's
 * trend): a soft FEM ball (E 100 kPa, nu 0.3, r 5 cm) squished on a floor by a 2 kg block, with no
 * volume constraint, with kappa_v = 1 / atm (air-like) and 0.01 / atm ("water-filled" in the
 * paper's squish test). The paper's Table II: volume loss falls from 74 % (no penalty, stiffer
 * ball) to 28-34 % (kappa_v 1) to 0.4-0.5 % (0.01). Here the constraint adds P_atm / kappa_v to the
 * ball's bulk modulus E / (3 (1 - 2 nu)) = 83 kPa: 101 kPa (kappa_v 1) cuts the loss by about
 * (83 + 101) / 83 = 2.2, 10.1 MPa (0.01) by about 120. Asserted: more than 2 and more than 20, and
 * below 0.05 % at 0.01 (measured 2026-11-26: 1.38 %, 0.53 %, 0.0068 %). The ball has 162 surface
 * vertices: the rank-one part of the Jacobian is kept (KN_SMOOTH_RANK_ONE_MAX). */
#include "scene_util.h"

#include "smooth/smooth.h"

// (the deformable's extra key) => the ball's volume loss after 0.5 s under the block
static double squish_loss(const char* volume_key) {
  char yaml[2048];
  snprintf(yaml, sizeof yaml,
           "time_step: 0.01\nduration: 0.5\n"
           "contact: {backend: smooth_friction}\n"
           "objects:\n"
           "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
           "  - {name: block, shape: {box: [0.2, 0.2, 0.05]}, mass: 2, pose: {xyz: [0, 0, 0.126]}}\n"
           "deformables:\n"
           "  - name: ball\n"
           "    shape: {sphere: 0.05}\n"
           "    resolution: 0.03\n"
           "    material: {youngs_modulus: 1e5, poisson_ratio: 0.3, density: 500}\n"
           "    pose: {xyz: [0, 0, 0.0505]}\n"
           "%s",
           volume_key);
  test_world t = tw_create(yaml);
  const kn_world_fem* F = &t.world->fems[0];
  const kn_tet_mesh* m = &F->body->mesh;
  double V0 = kn_smooth_surface_volume(m->X, m->nvert, m->surf, m->nsurf, NULL);
  tw_step(&t, 50);
  double V = kn_smooth_surface_volume(F->body->x, m->nvert, m->surf, m->nsurf, NULL);
  tw_free(&t);
  return (V0 - V) / V0;
}

Test(smooth_volume, squished_ball_keeps_its_volume_by_its_compressibility) {
  double none = squish_loss(""), air = squish_loss("    volume_compressibility: 1\n"),
         water = squish_loss("    volume_compressibility: 0.01\n");
  cr_log_info("volume loss: none %.4f %%, kappa_v 1/atm %.4f %%, 0.01/atm %.4f %%", 100 * none, 100 * air, 100 * water);
  cr_expect(none > 2 * air && air > 20 * water && water > 0, "losses %.4g, %.4g, %.4g", none, air, water);
  cr_expect(water < 5e-4, "kappa_v 0.01: %.4f %% lost", 100 * water);
}
