/* Contact patches on mesh faces (issue 24): a 1 kg box, once a primitive and once a cube mesh,
 * rests 3 s on the top face of a fixed mesh slab (the same cube OBJ scaled to 0.6 x 0.6 x 0.05 m)
 * at dt = 0.01 with the default contact settings, 2 cm off the slab's centre. Asserted on every
 * step after the first: at least 4 contact points between box and slab (a multi-point support,
 * not one deepest point), tilt below 1e-3 rad (no rocking), sideways drift below 1 mm, and the
 * height within 1 mm of resting. The probe culling and the hull support must keep these patches
 * as the exhaustive narrow phase made them. */
#include <unistd.h>

#include "scene_util.h"

/* the 12 outward triangles of the unit cube [-0.5, 0.5]^3, as OBJ */
static void write_cube(const char* path) {
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f);
  for (int i = 0; i < 8; ++i) fprintf(f, "v %g %g %g\n", i & 1 ? 0.5 : -0.5, i & 2 ? 0.5 : -0.5, i & 4 ? 0.5 : -0.5);
  const int face[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  for (int k = 0; k < 6; ++k)
    fprintf(f, "f %d %d %d\nf %d %d %d\n", face[k][0] + 1, face[k][1] + 1, face[k][2] + 1, face[k][0] + 1,
            face[k][2] + 1, face[k][3] + 1);
  fclose(f);
}

/* (box as a primitive or as the cube mesh) => asserted resting on the mesh slab for 3 s */
static void rest_on_slab(int box_is_mesh) {
  char dir[] = "/tmp/knead_mesh_patch_XXXXXX", path[300], box[400], yaml[2048];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/cube.obj", dir);
  write_cube(path);
  if (box_is_mesh) snprintf(box, sizeof box, "{mesh: %s, scale: [0.1, 0.1, 0.05]}", path);
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
  int fewest = 1 << 30;
  double tilt = 0, side = 0, dz = 0;
  for (long s = 0; s < kn_world_total_steps(t.world); s++) {
    tw_step(&t, 1);
    const double* q = tw_object_q(&t, "box");
    tilt = fmax(tilt, 2 * sqrt(q[4] * q[4] + q[5] * q[5] + q[6] * q[6]));
    side = fmax(side, hypot(q[0] - q0[0], q[1] - q0[1]));
    dz = fmax(dz, fabs(q[2] - q0[2]));
    if (s > 0) fewest = t.world->ncontact < fewest ? t.world->ncontact : fewest;
  }
  cr_log_info("%s box on a mesh slab: fewest contacts %d, tilt %.3e rad, sideways %.3e m, height %.3e m",
              box_is_mesh ? "mesh" : "primitive", fewest, tilt, side, dz);
  cr_expect_geq(fewest, 4, "fewest contact points %d (a face needs 4)", fewest);
  cr_expect_lt(tilt, 1e-3, "tilt %.3e rad", tilt);
  cr_expect_lt(side, 1e-3, "sideways %.3e m", side);
  cr_expect_lt(dz, 1e-3, "height change %.3e m", dz);
  tw_free(&t);
  unlink(path);
  rmdir(dir);
}

Test(mesh_patch, primitive_box_rests_on_mesh_face) { rest_on_slab(0); }
Test(mesh_patch, mesh_box_rests_on_mesh_face) { rest_on_slab(1); }
