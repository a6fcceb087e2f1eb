/* MPM bodies: sample counts and total mass (box exact, sphere / cylinder / closed mesh within a few
 * per cent of rho * volume), invalid materials and shapes name the parameter, the allowed region
 * is enforced transactionally, state save / restore / hash. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpm/mpm.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static kn_mpm_body* make(const kn_mpm_shape* sh, double h, int ppc) {
  kn_mpm_material mat = kn_mpm_material_default();
  kn_mpm_body* b;
  kn_error err;
  cr_assert_eq(kn_mpm_body_create(&mat, sh, NULL, h, ppc, "body", &b, &err), KN_OK, "%s", err.msg);
  return b;
}

Test(mpm_body, box_count_and_mass_exact) {
  kn_mpm_shape sh = {.type = KN_MPM_BOX, .size = {0.1, 0.05, 0.075}};
  kn_mpm_body* b = make(&sh, 0.025, 8); /* lattice 0.0125: 8 x 4 x 6 */
  cr_assert_eq(b->np, 8 * 4 * 6);
  double m = kn_mpm_body_mass(b, NULL, NULL), want = 1000 * 0.1 * 0.05 * 0.075;
  cr_assert(fabs(m - want) < 1e-12 * want, "box mass %.17g vs %.17g", m, want);
  kn_mpm_body_free(b);
  b = make(&sh, 0.025, 27); /* lattice 0.025/3: 12 x 6 x 9 */
  cr_assert_eq(b->np, 12 * 6 * 9);
  m = kn_mpm_body_mass(b, NULL, NULL);
  cr_assert(fabs(m - want) < 1e-12 * want, "box mass (27 ppc) %.17g vs %.17g", m, want);
  kn_mpm_body_free(b);
}

/* particle_jitter: each lattice point moves by at most jitter/2 of the spacing per axis and stays
 * in its own lattice cell (a box keeps its count and exact mass); the sample is reproducible, and
 * the offsets are spread over the whole allowed range (not all zero, mean ~0). */
Test(mpm_body, jittered_lattice) {
  kn_mpm_shape sh = {.type = KN_MPM_BOX, .size = {0.1, 0.05, 0.075}};
  kn_mpm_body* b0 = make(&sh, 0.025, 8);
  sh.jitter = 0.9;
  kn_mpm_body* b1 = make(&sh, 0.025, 8);
  kn_mpm_body* b2 = make(&sh, 0.025, 8);
  cr_assert_eq(b1->np, b0->np);
  const double s = 0.0125;
  double maxd = 0, mean = 0;
  for (int k = 0; k < 3 * b0->np; k++) {
    double d = b1->x[k] - b0->x[k];
    cr_assert(fabs(d) <= 0.45 * s + 1e-15, "offset %g beyond 0.45 s", d);
    cr_assert_eq(b1->x[k], b2->x[k], "not reproducible at %d", k);
    maxd = fmax(maxd, fabs(d));
    mean += d / (3 * b0->np);
  }
  cr_assert_gt(maxd, 0.4 * s, "offsets should fill the range (max %g)", maxd);
  cr_assert_lt(fabs(mean), 0.05 * s, "offsets should be centred (mean %g)", mean);
  double m = kn_mpm_body_mass(b1, NULL, NULL), want = 1000 * 0.1 * 0.05 * 0.075;
  cr_assert(fabs(m - want) < 1e-12 * want);
  kn_mpm_body_free(b0), kn_mpm_body_free(b1), kn_mpm_body_free(b2);
}

Test(mpm_body, sphere_cylinder_mesh_mass) {
  kn_mpm_shape sp = {.type = KN_MPM_SPHERE, .radius = 0.1};
  kn_mpm_body* b = make(&sp, 0.02, 8);
  double m = kn_mpm_body_mass(b, NULL, NULL), want = 1000 * 4.0 / 3.0 * M_PI * 1e-3;
  cr_log_info("sphere: %d particles, mass %.5f vs %.5f (%.2f%%)", b->np, m, want, 100 * (m / want - 1));
  cr_assert(fabs(m / want - 1) < 0.03, "sphere mass %g vs %g", m, want);
  kn_mpm_body_free(b);
  kn_mpm_shape cy = {.type = KN_MPM_CYLINDER, .radius = 0.05, .length = 0.2};
  b = make(&cy, 0.02, 8);
  m = kn_mpm_body_mass(b, NULL, NULL), want = 1000 * M_PI * 0.05 * 0.05 * 0.2;
  cr_log_info("cylinder: %d particles, mass %.5f vs %.5f (%.2f%%)", b->np, m, want, 100 * (m / want - 1));
  cr_assert(fabs(m / want - 1) < 0.03, "cylinder mass %g vs %g", m, want);
  kn_mpm_body_free(b);
  /* a closed cube mesh (outward winding) samples exactly like the box */
  const double V[24] = {-0.05, -0.05, -0.05, 0.05, -0.05, -0.05, 0.05, 0.05, -0.05, -0.05, 0.05, -0.05,
                        -0.05, -0.05, 0.05,  0.05, -0.05, 0.05,  0.05, 0.05, 0.05,  -0.05, 0.05, 0.05};
  const int T[36] = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                     1, 2, 6, 1, 6, 5, 2, 3, 7, 2, 7, 6, 3, 0, 4, 3, 4, 7};
  kn_mpm_shape me = {.type = KN_MPM_MESH, .vertices = V, .nvert = 8, .triangles = T, .ntri = 12};
  b = make(&me, 0.025, 8);
  cr_assert_eq(b->np, 512);
  kn_mpm_body_free(b);
  /* the octahedron of tests/contact/data read with assimp: |x|+|y|+|z| <= 1 scaled, volume 4/3 s^3 */
  kn_mpm_shape oct = {.type = KN_MPM_MESH, .mesh_path = KNEAD_SOURCE_DIR "/tests/contact/data/octahedron.obj", .scale = 0.1};
  kn_mpm_material mat = kn_mpm_material_default();
  kn_error err;
  kn_status st = kn_mpm_body_create(&mat, &oct, NULL, 0.01, 8, "oct", &b, &err);
  cr_assert_eq(st, KN_OK, "%s", err.msg);
  m = kn_mpm_body_mass(b, NULL, NULL);
  cr_log_info("octahedron mesh: %d particles, mass %.6f", b->np, m);
  want = 1000 * 4.0 / 3.0 * 1e-3;
  cr_assert(fabs(m / want - 1) < 0.03, "octahedron mass %g vs %g", m, want);
  kn_mpm_body_free(b);
}

static void expect_invalid(kn_mpm_material mat, const char* word) {
  kn_error err;
  cr_assert_eq(kn_mpm_material_validate(&mat, "dough", &err), KN_ERR_INVALID, "%s not rejected", word);
  cr_assert(strstr(err.msg, word) && strstr(err.msg, "dough"), "message '%s' must name %s", err.msg, word);
}

Test(mpm_body, invalid_parameters) {
  kn_mpm_material m = kn_mpm_material_default();
  kn_error err;
  cr_assert_eq(kn_mpm_material_validate(&m, "dough", &err), KN_OK);
  kn_mpm_material a = m; a.youngs_modulus = 0; expect_invalid(a, "youngs_modulus");
  a = m; a.poisson_ratio = 0.5; expect_invalid(a, "poisson_ratio");
  a = m; a.density = -1; expect_invalid(a, "density");
  a = m; a.yield_stress = -5; expect_invalid(a, "yield_stress");
  a = m; a.model = KN_MPM_EOS_FLUID; a.bulk_modulus = 0; expect_invalid(a, "bulk_modulus");
  a = m; a.model = KN_MPM_EOS_FLUID; a.gamma = 1; expect_invalid(a, "gamma");
  a = m; a.model = KN_MPM_EOS_FLUID; a.youngs_modulus = -1; /* unused by the fluid */
  cr_assert_eq(kn_mpm_material_validate(&a, "water", &err), KN_OK);
  kn_mpm_body* b = NULL;
  kn_mpm_shape box = {.type = KN_MPM_BOX, .size = {0.1, 0.1, 0.1}};
  cr_assert_eq(kn_mpm_body_create(&m, &box, NULL, 0.02, 7, "dough", &b, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "particles_per_cell"), "%s", err.msg);
  cr_assert_eq(kn_mpm_body_create(&m, &box, NULL, -1, 8, "dough", &b, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "h"), "%s", err.msg);
  box.size[1] = 0;
  cr_assert_eq(kn_mpm_body_create(&m, &box, NULL, 0.02, 8, "dough", &b, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "size[1]"), "%s", err.msg);
  /* empty shape: a sphere smaller than the lattice */
  kn_mpm_shape tiny = {.type = KN_MPM_SPHERE, .radius = 0.001};
  cr_assert_eq(kn_mpm_body_create(&m, &tiny, NULL, 0.1, 1, "crumb", &b, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "crumb") && strstr(err.msg, "no particle"), "%s", err.msg);
  cr_assert_null(b);
  kn_mpm_shape missing = {.type = KN_MPM_MESH, .mesh_path = "/nonexistent/x.obj"};
  cr_assert_eq(kn_mpm_body_create(&m, &missing, NULL, 0.1, 1, "ghost", &b, &err), KN_ERR_IO);
  cr_assert(strstr(err.msg, "x.obj"), "%s", err.msg);
}

Test(mpm_body, region_and_state) {
  kn_mpm_shape sh = {.type = KN_MPM_BOX, .size = {0.05, 0.05, 0.05}};
  kn_mpm_body* b = make(&sh, 0.025, 8);
  kn_error err;
  double lo[3] = {-1, -1, -0.03}, hi[3] = {1, 1, 1}, g[3] = {0, 0, -9.81};
  cr_assert_eq(kn_mpm_body_set_region(b, hi, lo, &err), KN_ERR_INVALID);
  cr_assert_eq(kn_mpm_body_set_region(b, lo, hi, &err), KN_OK);
  kn_mpm_state s = {0};
  cr_assert_eq(kn_mpm_state_save(b, &s, &err), KN_OK);
  uint64_t h0 = kn_mpm_state_hash(KN_HASH_SEED, b);
  /* fall until the lowest particle (z = -0.021875) passes z = -0.03 */
  kn_status st = KN_OK;
  int steps = 0;
  uint64_t hb = 0;
  while (st == KN_OK && steps < 100) {
    cr_assert_eq(kn_mpm_free_motion(b, 0.01, g, NULL, &err), KN_OK, "%s", err.msg);
    hb = kn_mpm_state_hash(KN_HASH_SEED, b);
    st = kn_mpm_advance(b, b->grid.v_star, 0.01, &err);
    steps++;
  }
  cr_assert_eq(st, KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "body") && strstr(err.msg, "particle") && strstr(err.msg, "allowed region"), "%s", err.msg);
  cr_assert_eq(kn_mpm_state_hash(KN_HASH_SEED, b), hb, "a failed advance must leave the state unchanged");
  cr_log_info("left the region after %d steps: %s", steps, err.msg);
  cr_assert_eq(kn_mpm_state_restore(b, &s, &err), KN_OK);
  cr_assert_eq(kn_mpm_state_hash(KN_HASH_SEED, b), h0);
  /* determinism: two runs of 3 steps give the same hash; a tiny change to one particle changes it */
  uint64_t hr[2];
  for (int run = 0; run < 2; run++) {
    kn_mpm_state_restore(b, &s, &err);
    for (int k = 0; k < 3; k++) {
      cr_assert_eq(kn_mpm_free_motion(b, 0.01, g, NULL, &err), KN_OK, "%s", err.msg);
      cr_assert_eq(kn_mpm_advance(b, b->grid.v_star, 0.01, &err), KN_OK, "%s", err.msg);
    }
    hr[run] = kn_mpm_state_hash(KN_HASH_SEED, b);
  }
  cr_assert_eq(hr[0], hr[1]);
  kn_mpm_state_restore(b, &s, &err);
  b->x[0] += 1e-9;
  for (int k = 0; k < 3; k++) {
    kn_mpm_free_motion(b, 0.01, g, NULL, &err);
    kn_mpm_advance(b, b->grid.v_star, 0.01, &err);
  }
  cr_assert_neq(kn_mpm_state_hash(KN_HASH_SEED, b), hr[0]);
  kn_mpm_state_free(&s);
  kn_mpm_body_free(b);
}
