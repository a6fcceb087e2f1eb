/* Contact patches on mesh faces (issue 24): a 1 kg box, once a primitive and once a cube mesh,
 * rests 3 s on the top face of a fixed mesh slab (the same cube OBJ scaled to 0.6 x 0.6 x 0.05 m)
 * at dt = 0.01 with the default contact settings, 2 cm off the slab's centre. Asserted on every
 * step after the first: at least 4 contact points between box and slab (a multi-point support,
 * not one deepest point), tilt below 1e-3 rad (no rocking), sideways drift below 1 mm, and the
 * height within 1 mm of resting. The probe culling and the hull support must keep these patches
 * as the exhaustive narrow phase made them. A 64-sided prism mesh (65 vertices on its bottom face)
 * resting on the slab checks the patch reduction (contact/patch_reduce.c): from the 65 probes at
 * most KN_PATCH_MAX = 8 points are kept, at least 4 of them, with the same no-rocking bounds. */
#include <unistd.h>

#include "scene_util.h"

/* a prism of n sides about z, radius r, height h, centred at the origin (bottom and top fans
 * about a centre vertex), outward triangles, as OBJ */
static void write_prism(const char* path, int n, double r, double h) {
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f);
  const double pi = 3.14159265358979323846;
  fprintf(f, "v 0 0 %g\nv 0 0 %g\n", -0.5 * h, 0.5 * h); /* 1: bottom centre, 2: top centre */
  for (int i = 0; i < n; ++i) /* 3 + 2i: bottom rim, 4 + 2i: top rim */
    fprintf(f, "v %.17g %.17g %g\nv %.17g %.17g %g\n", r * cos(2 * pi * i / n), r * sin(2 * pi * i / n), -0.5 * h,
            r * cos(2 * pi * i / n), r * sin(2 * pi * i / n), 0.5 * h);
  for (int i = 0; i < n; ++i) {
    int b0 = 3 + 2 * i, t0 = 4 + 2 * i, b1 = 3 + 2 * ((i + 1) % n), t1 = 4 + 2 * ((i + 1) % n);
    fprintf(f, "f 1 %d %d\nf 2 %d %d\nf %d %d %d\nf %d %d %d\n", b1, b0, t0, t1, b0, b1, t1, b0, t1, t0);
  }
  fclose(f);
}

/* (box as a primitive, the cube mesh, or the 64-sided prism mesh) => asserted resting on the mesh
 * slab for 3 s */
static void rest_on_slab(int box_is_mesh) {
  char dir[] = "/tmp/knead_mesh_patch_XXXXXX", path[300], box[400], yaml[2048];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/cube.obj", dir);
  tw_write_unit_cube_obj(path);
  char prism[300];
  snprintf(prism, sizeof prism, "%s/prism.obj", dir);
  write_prism(prism, 64, 0.05, 0.05);
  if (box_is_mesh == 2) snprintf(box, sizeof box, "{mesh: %s}", prism);
  else if (box_is_mesh) snprintf(box, sizeof box, "{mesh: %s, scale: [0.1, 0.1, 0.05]}", path);
  else snprintf(box, sizeof box, "{box: [0.1, 0.1, 0.05]}");
  snprintf(yaml, sizeof yaml,
           "time_step: 0.01\nduration: 3\n"
           "objects:\n"
           "  - {name: slab, shape: {mesh: %s, scale: [0.6, 0.6, 0.05]}, fixed: true, pose: {xyz: [0, 0, -0.025]}}\n"
           "  - {name: box, shape: %s, mass: 1, pose: {xyz: [0.02, -0.01, 0.025]}}\n",
           path, box);
  test_world t = tw_create(yaml);
  double q0[7];
  memcpy(q0, tw_object_q(&t, "box"), sizeof q0);
  int fewest = 1 << 30, most = 0;
  double tilt = 0, side = 0, dz = 0;
  for (long s = 0; s < kn_world_total_steps(t.world); s++) {
    tw_step(&t, 1);
    const double* q = tw_object_q(&t, "box");
    tilt = fmax(tilt, 2 * sqrt(q[4] * q[4] + q[5] * q[5] + q[6] * q[6]));
    side = fmax(side, hypot(q[0] - q0[0], q[1] - q0[1]));
    dz = fmax(dz, fabs(q[2] - q0[2]));
    if (s > 0) fewest = t.world->ncontact < fewest ? t.world->ncontact : fewest;
    if (s > 0) most = t.world->ncontact > most ? t.world->ncontact : most;
  }
  const char* what = box_is_mesh == 2 ? "prism" : box_is_mesh ? "mesh" : "primitive";
  cr_log_info("%s box on a mesh slab: contacts %d to %d, tilt %.3e rad, sideways %.3e m, height %.3e m", what,
              fewest, most, tilt, side, dz);
  cr_expect_leq(most, 8, "%s: most contact points %d (one patch: at most KN_PATCH_MAX = 8)", what, most);
  cr_expect_geq(fewest, 4, "fewest contact points %d (a face needs 4)", fewest);
  cr_expect_lt(tilt, 1e-3, "tilt %.3e rad", tilt);
  cr_expect_lt(side, 1e-3, "sideways %.3e m", side);
  cr_expect_lt(dz, 1e-3, "height change %.3e m", dz);
  tw_free(&t);
  unlink(path);
  unlink(prism);
  rmdir(dir);
}

Test(mesh_patch, primitive_box_rests_on_mesh_face) { rest_on_slab(0); }
Test(mesh_patch, mesh_box_rests_on_mesh_face) { rest_on_slab(1); }
Test(mesh_patch, prism_mesh_patch_reduced_rests_on_mesh_face) { rest_on_slab(2); }
