/* The continuous penalty's proximity pass (continuous-penalty-forces.md §8 item 12; sim/penalty_cpf_inside.c,
 * seed_inside in sim/penalty_cpf.c): a vertex already through a surface, with no pair, is paired with
 * the face it is nearest and behind, within half the face body's thickness.
 *   inside_face_*  kn_penalty_cpf_inside_face on a unit slab (top z = 0, bottom z = -0.1, both faces
 *                  wound outward): depth and weights exact, the nearest face chosen, and no face for a
 *                  vertex outside, beyond the band, off the face, or under a thin cap (an overhang);
 *                  the band, half the thinnest extent (kn_penalty_cpf_band).
 *   cube_starts_inside  a 0.1 m, 0.1 kg cube placed 1 mm into a 0.1 m thick plate at t = 0, default
 *                  keys of the continuous mode (k 1e5 N/m per pair). Before the pass it fell through
 *                  the plate's top (no crossing, so no pair: 0.1 m down in 0.2 s); now its four corners
 *                  are paired at the first step, it never goes below its start, and after 1 s it rests
 *                  at the depth m g / (4 k) = 2.4525e-6 m that S-Box (test_penalty_continuous.c)
 *                  rests at after a drop.
 *   cube_pushed_out  the same without gravity: the springs push it out; it leaves the plate moving up
 *                  no faster than their energy allows, 4 k d^2 / 2 = m v^2 / 2 (v <= 2 m/s; 0.511 measured), and
 *                  no pair is left.
 * Each scene 100 or 50 steps of 12 + 12 triangles: milliseconds in Release. */
#include "scene_util.h"

#include "sim/penalty_cpf.h"

/* the slab's 4 + 4 vertices (top z = 0, bottom z = -0.1, x, y in [0, 1]) then the test vertex (8) */
static double slab_x[27] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, -0.1, 1, 0, -0.1, 1, 1, -0.1, 0, 1, -0.1};
/* keys of vertex 8 against the top face's two triangles (wound +z) and the bottom's (wound -z) */
static const kn_cpf_key slab_keys[4] = {{0, {8, 0, 1, 2}}, {0, {8, 0, 2, 3}}, {0, {8, 4, 6, 5}}, {0, {8, 4, 7, 6}}};

static int slab_probe(double x, double y, double z, double band, double w[4], double* depth) {
  slab_x[24] = x, slab_x[25] = y, slab_x[26] = z;
  return kn_penalty_cpf_inside_face(slab_x, 4, slab_keys, band, w, depth);
}

Test(penalty_cpf_inside, inside_face_depth_and_weights) {
  double w[4], depth;
  int f = slab_probe(0.7, 0.2, -1e-3, 0.05, w, &depth);
  cr_assert_eq(f, 0, "the top face's first triangle (it holds (0.7, 0.2)): %d", f);
  cr_expect(fabs(depth - 1e-3) < 1e-15, "depth %.17g", depth);
  /* the weights reproduce the projection (0.7, 0.2, 0) on triangle (0, 1, 2) */
  double p[3] = {0, 0, 0};
  for (int j = 1; j < 4; j++)
    for (int k = 0; k < 3; k++) p[k] += w[j] * slab_x[3 * slab_keys[0].v[j] + k];
  cr_expect(w[0] == 1 && fabs(p[0] - 0.7) < 1e-15 && fabs(p[1] - 0.2) < 1e-15 && fabs(p[2]) < 1e-15,
            "w (%g %g %g %g) -> (%g %g %g)", w[0], w[1], w[2], w[3], p[0], p[1], p[2]);
  /* 9 cm below the top: nearer the bottom face (1 cm), which it is behind: that one */
  f = slab_probe(0.3, 0.6, -0.09, 0.05, w, &depth);
  cr_expect(f == 3 && fabs(depth - 0.01) < 1e-15, "bottom face: %d, depth %.17g", f, depth);
  /* the slab's band: half its thinnest extent, 0.1 / 2 (its 8 vertices; the probe's left out) */
  double band = kn_penalty_cpf_band(slab_x, 8, NULL);
  cr_expect(fabs(band - 0.05) < 1e-15, "band %.17g", band);
  const int top[4] = {0, 1, 2, 3};
  cr_expect_eq(kn_penalty_cpf_band(slab_x, 4, top), 0, "a flat surface: no band");
}

Test(penalty_cpf_inside, inside_face_none) {
  double w[4], depth;
  cr_expect_eq(slab_probe(0.7, 0.2, 1e-3, 0.05, w, &depth), -1, "above the top face: outside");
  cr_expect_eq(slab_probe(0.7, 0.2, -1e-3, 5e-4, w, &depth), -1, "1 mm deep, band 0.5 mm");
  cr_expect_eq(slab_probe(1.5, 0.2, -1e-3, 0.05, w, &depth), -1, "projects off the faces");
  /* a thin cap (the slab's top and bottom as z 0.01 and 0): a vertex 2 cm under it lies behind the
   * top face's plane (3 cm, inside the band) but in front of the nearer bottom face: outside */
  for (int i = 0; i < 4; i++) slab_x[3 * i + 2] = 0.01, slab_x[3 * (i + 4) + 2] = 0;
  int f = slab_probe(0.5, 0.3, -0.02, 0.05, w, &depth);
  for (int i = 0; i < 4; i++) slab_x[3 * i + 2] = 0, slab_x[3 * (i + 4) + 2] = -0.1;
  cr_expect_eq(f, -1, "under the cap: %d", f);
}

static const double half = 0.05, mass = 0.1, g = 9.81, k_default = 1e5, d0 = 1e-3;

// (gravity, steps) => the cube placed d0 into the plate (top z = 0) after them: its z, z velocity, lowest z, pairs
static void run_inside(double gz, int steps, double* z, double* vz, double* zmin, int* npairs) {
  char yaml[768];
  snprintf(yaml, sizeof yaml,
           "time_step: 0.01\ngravity: [0, 0, %g]\n"
           "contact: {backend: penalty, penalty: {continuous: true}}\n"
           "objects:\n"
           "  - {name: plate, shape: {box: [1, 1, 0.1]}, fixed: true, pose: {xyz: [0, 0, -0.05]}}\n"
           /* off the plate's diagonal: no corner on a shared edge (§8 item 15) */
           "  - {name: cube, shape: {box: [0.1, 0.1, 0.1]}, density: 100, pose: {xyz: [0.013, 0.021, %.17g]}}\n",
           gz, half - d0);
  test_world t = tw_create(yaml);
  kn_world_tree* tr = &t.world->trees[t.world->objects[1].tree];
  *zmin = tr->q[2];
  for (int s = 0; s < steps; s++) {
    tw_step(&t, 1);
    *zmin = fmin(*zmin, tr->q[2]);
  }
  *z = tr->q[2], *vz = tr->v[5];
  *npairs = 0; /* the last step's contact rows with a force: the pairs' (the detection's rows of the
                 same bodies, speculative, carry none) */
  for (int i = 0; i < t.world->ncontact; i++) *npairs += kn_vec3_norm(t.world->contacts[i].f) > 0;
  tw_free(&t);
}

Test(penalty_cpf_inside, cube_starts_inside) {
  double z, vz, zmin;
  int n;
  run_inside(-g, 100, &z, &vz, &zmin, &n);
  double rest = half - mass * g / (4 * k_default);
  cr_log_info("starts 1 mm inside: lowest %.10f, end %.10f (rest %.10f), vz %.3g, %d contacts", zmin, z, rest, vz, n);
  cr_expect_geq(zmin, half - d0 - 1e-9, "never sinks below its start: %.10f", zmin);
  /* the first step's push (k d0 = 100 N a corner at the default k, against 0.25 N of weight) hops it;
   * it has landed and settled by 1 s (at k 1e4 it hopped 9.3 mm and was 7e-18 m off at 1 s) */
  cr_expect(fabs(z - rest) < 1e-9, "rests at m g / 4k: %.12f vs %.12f", z, rest);
  cr_expect_lt(fabs(vz), 1e-9);
  cr_expect_eq(n, 4, "its four bottom corners: %d", n);
}

Test(penalty_cpf_inside, cube_pushed_out) {
  double z, vz, zmin;
  int n;
  run_inside(0, 50, &z, &vz, &zmin, &n);
  double vmax = sqrt(4 * k_default * d0 * d0 / mass);
  cr_log_info("pushed out: end %.6f m, vz %.6f m/s (energy bound %.6f), %d contacts", z, vz, vmax, n);
  cr_expect_gt(vz, 0, "moves up");
  cr_expect_leq(vz, vmax, "no faster than the springs' energy: %.6f > %.6f", vz, vmax);
  cr_expect_gt(z - half, 0, "clear of the plate: bottom at %.6g", z - half);
  cr_expect_eq(n, 0, "no pair left: %d", n);
}
