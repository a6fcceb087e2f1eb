/* §8 item 14 at scene level (continuous-penalty-forces.md; contact.penalty.continuous: true,
 * sim/penalty_cpf.c's follow): a vertex sliding across a crease of a non-flat mesh feels the
 * neighbour's plane after it crosses. A fixed triangle-mesh collider, a prism whose top is flat (z = 0,
 * x < 0) and then rises as a 20 degree ramp (x > 0): a concave crease along y at x = 0. A frictionless
 * 0.1 m cube (1 kg) slides along +x at 0.5 m/s on the flat part under gravity and runs into the ramp.
 * A bottom corner's vertex-face pair, made on a flat triangle, is carried across the crease: the
 * vertex then projects off that triangle, walks to the ramp's and is re-paired there. Asserted on
 * the pairs' contact rows (kn_penalty_cpf_record: the point between the traced points, the face's
 * normal at the step's end; the rows with a force): no row more than 5 mm past the crease (more than
 * one step's travel: the step that crosses still holds the old pair) has the flat part's normal +z,
 * none 5 mm before it the ramp's (-sin 20, 0, cos 20) (to 1e-6: the mesh's vertices are floats; the
 * edge-edge pairs' rows, the edges' cross product, are neither); rows past the crease with the
 * ramp's normal appear (the corners did cross), the
 * cube climbs (its velocity turns up the ramp) and no row is deeper than 2 mm. Measured: 88 ramp
 * rows, 150 flat ones, deepest 0.62 mm; the cube pitches up to 16.7 degrees, climbs 12.2 mm (its
 * 0.125 J of kinetic energy: 12.7 mm) and slides back. With the pairs kept on their first triangle
 * (no walk) the corners past the crease push along +z from inside the ramp (the duplicate rule
 * refuses them a second pair on the same surface): rows at x > 5 mm with normal +z from step 30.
 * Before the concave edges' normal cone (sim/penalty_cpf.c, entering_edges) the cube's vertical
 * front edge paired with the valley's edge, normal along the slide, pushed its bottom back by 10 N,
 * tipped it forward, and it fell through the ground. Default keys (k 1e4, anchored friction) but
 * mu 0: the case is the normal force. 60 steps of 0.01 s, ~0.1 s in Release. */
#define _GNU_SOURCE /* mkstemps */
#include <unistd.h>

#include "scene_util.h"

// the prism x in [-1, 1], y in [-0.5, 0.5], between z = -0.2 and the top z = max(0, x tan(a)), as
// an OBJ of outward-wound triangles at path
static void write_crease_obj(const char* path, double a) {
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f, "cannot write %s", path);
  /* the profile in (x, z): A B C D E, D the crease (reflex), at y = -0.5 (1-5) and +0.5 (6-10) */
  const double P[5][2] = {{-1, -0.2}, {1, -0.2}, {1, tan(a)}, {0, 0}, {-1, 0}};
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < 5; i++) fprintf(f, "v %.17g %g %.17g\n", P[i][0], s ? 0.5 : -0.5, P[i][1]);
  /* the quads around the profile (i, i+1): outward is to the right of the profile walked A -> E
   * seen from -y, so (i, i+1, i+6), (i, i+6, i+5) in 1-based ids; the caps fanned from D (4, 9) */
  for (int i = 1; i <= 5; i++) {
    int j = i % 5 + 1;
    fprintf(f, "f %d %d %d\nf %d %d %d\n", i, i + 5, j + 5, i, j + 5, j);
  }
  fprintf(f, "f 4 5 1\nf 4 1 2\nf 4 2 3\n");    /* y = -0.5: normal -y */
  fprintf(f, "f 9 6 10\nf 9 7 6\nf 9 8 7\n"); /* y = +0.5: normal +y */
  fclose(f);
}

Test(penalty_cpf_crease, a_corner_past_the_crease_feels_the_ramp) {
  const double a = 20 * M_PI / 180, n_ramp[3] = {-sin(a), 0, cos(a)}, n_flat[3] = {0, 0, 1};
  char path[] = "/tmp/knead_crease_XXXXXX.obj";
  int fd = mkstemps(path, 4);
  cr_assert_geq(fd, 0);
  close(fd);
  write_crease_obj(path, a);
  char yaml[1024];
  snprintf(yaml, sizeof yaml,
           "time_step: 0.01\nduration: 0.6\ngravity: [0, 0, -9.81]\n"
           "contact: {backend: penalty, penalty: {continuous: true}}\n"
           "objects:\n"
           "  - {name: ground, shape: {mesh: %s}, fixed: true, friction: 0}\n"
           "  - {name: cube, shape: {box: [0.1, 0.1, 0.1]}, mass: 1, friction: 0,\n"
           "     pose: {xyz: [-0.12, 0, 0.0501]}, velocity: [0, 0, 0, 0.5, 0, 0]}\n",
           path);
  test_world t = tw_create(yaml);
  unlink(path);
  const double* q = tw_object_q(&t, "cube");
  int ramp_rows = 0, flat_rows = 0, edge_rows = 0;
  double deepest = 0, z_prev = q[2], vz_max = -INFINITY;
  for (int k = 0; k < 60; k++) {
    tw_step(&t, 1);
    const kn_world* w = t.world;
    for (int i = 0; i < w->ncontact; i++) {
      const kn_world_contact* c = &w->contacts[i];
      /* the detection's candidates the pairs cover are rows of force 0 (their normals the mesh hull's
       * while apart); within 5 mm of the crease: the step that crosses */
      if (!(kn_vec3_norm(c->f) > 0) || fabs(c->p[0]) < 5e-3) continue;
      /* a face's normal to 1e-6: the mesh's vertices are single precision (assimp) */
      double ef = fabs(c->n[0] - n_flat[0]) + fabs(c->n[1] - n_flat[1]) + fabs(c->n[2] - n_flat[2]);
      double er = fabs(c->n[0] - n_ramp[0]) + fabs(c->n[1] - n_ramp[1]) + fabs(c->n[2] - n_ramp[2]);
      int flat = ef <= 1e-6, ramp = er <= 1e-6, past = c->p[0] > 0;
      cr_expect(past ? !flat : !ramp, "step %d: a row %s the crease (x = %.4f m) with the %s normal", k + 1,
                past ? "past" : "before", c->p[0], past ? "flat part's" : "ramp's");
      ramp_rows += past && ramp, flat_rows += !past && flat, edge_rows += !flat && !ramp;
      deepest = fmin(deepest, c->phi);
    }
    vz_max = fmax(vz_max, (q[2] - z_prev) / 0.01), z_prev = q[2];
  }
  cr_log_info("rows past the crease with the ramp's normal %d, before it with +z %d, others (edge-edge) %d; deepest "
              "%.3g m; cube at x %.4f z %.4f, vz up to %.4f m/s",
              ramp_rows, flat_rows, edge_rows, deepest, q[0], q[2], vz_max);
  cr_expect_gt(ramp_rows, 0, "no row past the crease: the corners did not cross");
  cr_expect_gt(flat_rows, 0, "no row on the flat part");
  cr_expect_gt(deepest, -2e-3, "a row %.3g m deep", deepest);
  /* climbing: up to 0.5 sin(20 deg) = 0.17 m/s once on the ramp */
  cr_expect_gt(vz_max, 0.05, "the cube did not climb: vz up to %.4f m/s", vz_max);
  tw_free(&t);
}
