/* Broad phase of MPM particle contacts (contact/particles.c, kn_contact_detect_particles): a
 * collider is skipped for a body when its margin-inflated world AABB misses the body's particle
 * AABB, and a particle when it lies outside that AABB or farther than (bounding radius + margin)
 * from the collider's centre. Exactness: the skipped set must contain only particles whose exact
 * signed distance is >= margin, so the contact set equals the brute-force one (every particle x
 * every collider). Scene: an MPM ball (h 0.05, 8 per cell) falls onto a rotated box, next to a
 * sphere, a capsule, a cylinder, a far box, an octahedron mesh and the ground (margin 5 mm); at
 * every step of 0.3 s every (particle, collider) pair is checked against the exact SDF, and the
 * contact set detected through the bound equals the brute-force set. The bound must also do its
 * job: at least half of all pair tests are culled. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/candidates.h"
#include "sim/sim_internal.h"

static const char* yaml =
    "time_step: 0.01\nduration: 0.3\ncontact: {margin: 0.005}\n"
    "objects:\n"
    "  - {name: ground, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
    "  - {name: tilted, shape: {box: [0.3, 0.2, 0.1]}, fixed: true, pose: {xyz: [0, 0, 0.1], rpy: [0.3, 0.2, 0.5]}}\n"
    "  - {name: ball, shape: {sphere: 0.05}, fixed: true, pose: {xyz: [0.25, 0.0, 0.3]}}\n"
    "  - {name: pill, shape: {capsule: [0.04, 0.2]}, fixed: true, pose: {xyz: [-0.2, 0.1, 0.3], rpy: [1.2, 0, 0.4]}}\n"
    "  - {name: can, shape: {cylinder: [0.05, 0.1]}, fixed: true, pose: {xyz: [0.05, -0.22, 0.35], rpy: [0, 0.7, 0]}}\n"
    "  - {name: far, shape: {box: [0.1, 0.1, 0.1]}, fixed: true, pose: {xyz: [3, 3, 3]}}\n"
    "  - {name: gem, shape: {mesh: " KNEAD_SOURCE_DIR "/tests/contact/data/octahedron.obj, scale: [0.1, 0.1, 0.1]}, "
    "fixed: true, pose: {xyz: [0.1, 0.2, 0.32]}}\n"
    "deformables:\n  - name: blob\n    model: mpm\n    shape: {sphere: 0.12}\n    resolution: 0.05\n"
    "    material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.3, density: 1e3}\n"
    "    pose: {xyz: [0.02, 0.0, 0.42]}\n";

Test(mpm_broadphase, identical_to_brute_force, .timeout = 120) {
  kn_scene* s = NULL;
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), "inline.yaml", &s, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
  cr_assert_not_null(w->collision);
  const double margin = s->margin;
  cr_assert_float_eq(margin, 0.005, 1e-15);
  long tests = 0, culled = 0, brute = 0, kept_contacts = 0, culled_pairs = 0;
  long steps = kn_world_total_steps(w);
  int touched = 0;
  for (long k = 0; k <= steps; k++) {
    const kn_mpm_body* b = w->mpms[0].body;
    double lo[3], hi[3];
    kn_particle_aabb(b->np, b->x, lo, hi);
    for (int c = 0; c < w->ncollider; c++) {
      kn_pose X;
      kn_sim_collider_pose(w, c, &X);
      kn_particle_bound bd;
      int pair = kn_particle_bound_init(w->collision, c, &X, margin, lo, hi, &bd);
      culled_pairs += !pair;
      for (int p = 0; p < b->np; p++) {
        double g[3];
        double phi = kn_collider_signed_distance(w->collision, c, &X, b->x + 3 * p, g);
        int keep = pair && kn_particle_bound_test(&bd, b->x + 3 * p);
        tests++;
        culled += !keep;
        brute += phi < margin;
        kept_contacts += keep && phi < margin;
        if (phi < margin && c > 0) touched = 1;
        if (phi < margin)
          cr_assert(keep, "step %ld collider %s particle %d: phi %.9g < margin but culled", k, w->colliders[c].name, p,
                    phi);
      }
    }
    if (k < steps) cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s", err.msg);
  }
  printf("mpm broad phase: %ld (particle, collider) tests over %ld steps, %ld culled (%.1f %%), %ld whole-pair skips, "
         "contacts %ld brute force = %ld through the bound\n",
         tests, steps + 1, culled, 100.0 * (double)culled / (double)tests, culled_pairs, brute, kept_contacts);
  cr_expect_eq(kept_contacts, brute);
  cr_expect_gt(brute, 0, "the ball must touch something");
  cr_expect(touched, "the ball must touch a collider other than the ground");
  cr_expect_gt(culled, tests / 2, "the bound culls at least half the tests (%ld of %ld)", culled, tests);
  kn_world_free(w);
  kn_scene_free(s);
}

/* A set's contact radius: each particle is a ball, phi taken to its surface and p its point nearest
 * the collider; detection reaches margin + radius from the centers. Particles 3, 6 and 12 mm above
 * the ground, radius 4 mm, margin 5 mm: phi = -1 mm and +2 mm (kept, p 4 mm lower), the third's
 * 8 mm is beyond the margin. Radius 0 keeps the points' own distances (3 mm; 6 and 12 mm culled). */
Test(mpm_broadphase, contact_radius_measures_to_the_particle_surface) {
  static const char* ground = "time_step: 0.01\nobjects:\n  - {name: ground, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
                              "  - {name: far, shape: {sphere: 0.1}, mass: 1, pose: {xyz: [0, 0, 5]}}\n"; /* the world keeps a
                                 collision scene only when something can move */
  kn_scene* s = NULL;
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(ground, strlen(ground), "inline.yaml", &s, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
  cr_assert(w->collision && w->ncollider == 2 && strcmp(w->colliders[0].name, "ground") == 0, "expected the ground first");
  kn_pose X[2];
  kn_soft_collider soft[2];
  for (int k = 0; k < 2; k++) kn_sim_collider_pose(w, k, &X[k]), soft[k] = kn_sim_soft_collider(w, k);
  const double x[9] = {0.1, 0.2, 0.003, -0.3, 0.0, 0.006, 0.0, 0.5, 0.012};
  const double radius[2] = {0.004, 0};
  const int want_n[2] = {2, 1};
  const double want_phi[2][2] = {{-0.001, 0.002}, {0.003, 0}};
  for (int c = 0; c < 2; c++) {
    kn_contact_particles set = {3, x, 0, 0, kn_contact_material_default(0.01), radius[c]};
    kn_contact_candidate_list out = {0};
    cr_assert_eq(kn_contact_detect_particles(&set, 1, w->collision, soft, X, 0.005, &out, &err), KN_OK, "%s", err.msg);
    cr_assert_eq(out.n, want_n[c], "radius %g: %d candidates", radius[c], out.n);
    for (int i = 0; i < out.n; i++) {
      const kn_contact_candidate* k = &out.c[i];
      cr_expect_float_eq(k->phi, want_phi[c][i], 1e-15, "radius %g: phi %.17g", radius[c], k->phi);
      cr_expect_float_eq(k->R_WC[8], -1.0, 1e-15, "normal into the ground");
      int p = k->a.point[0];
      cr_expect(k->p[0] == x[3 * p] && k->p[1] == x[3 * p + 1], "p moved sideways");
      cr_expect_float_eq(k->p[2], x[3 * p + 2] - radius[c], 1e-15, "radius %g: p_z %.17g", radius[c], k->p[2]);
    }
    kn_contact_candidate_list_free(&out);
  }
  kn_world_free(w);
  kn_scene_free(s);
}
