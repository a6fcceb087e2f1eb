/* Mass properties of closed triangle meshes (contact/mass_properties.c) against closed forms:
 * a box of extents (a, b, c) has V = abc and I/m = diag(b^2 + c^2, a^2 + c^2, a^2 + b^2) / 12;
 * the octahedron |x| + |y| + |z| <= 1 has V = 4/3 and I/m = 0.2 I3 (int x^2 dV = 8 * 2/5! = 2/15).
 * Tolerance 1e-12: the formulas are exact, only round-off remains. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contact/contact.h"

/* 8 corners and 12 outward (counter-clockwise seen from outside) triangles of [0,1]^3 */
static const int cube_tri[12][3] = {{0, 2, 1}, {0, 3, 2}, {4, 5, 6}, {4, 6, 7}, {0, 1, 5}, {0, 5, 4},
                                    {3, 7, 6}, {3, 6, 2}, {0, 4, 7}, {0, 7, 3}, {1, 2, 6}, {1, 6, 5}};
static void unit_corner(int i, double c[3]) {
  const int bits[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
  for (int k = 0; k < 3; k++) c[k] = bits[i][k];
}

static void expect_box(double V, const double com[3], const double I[9], const double ext[3], const double R[9],
                       const double centre[3], double m_scale) {
  double Ib[3] = {(ext[1] * ext[1] + ext[2] * ext[2]) / 12, (ext[0] * ext[0] + ext[2] * ext[2]) / 12,
                  (ext[0] * ext[0] + ext[1] * ext[1]) / 12};
  double Vx = ext[0] * ext[1] * ext[2];
  fprintf(stderr, "  volume %.15g (expected %.15g), I_xx %.15g (expected %.15g)\n", V, Vx, I[0], Ib[0]);
  cr_expect(fabs(V - Vx) <= 1e-12 * Vx, "volume %.17g vs %.17g", V, Vx);
  for (int k = 0; k < 3; k++) cr_expect(fabs(com[k] - centre[k]) <= 1e-12 * m_scale, "com[%d] %.17g vs %.17g", k, com[k], centre[k]);
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      double e = 0;
      for (int k = 0; k < 3; k++) e += R[3 * a + k] * Ib[k] * R[3 * b + k];
      cr_expect(fabs(I[3 * a + b] - e) <= 1e-12 * Ib[0], "I[%d][%d] %.17g vs %.17g", a, b, I[3 * a + b], e);
    }
}

/* a rotated, translated box in double precision, both windings */
Test(mass_properties, rotated_box_arrays) {
  const double ext[3] = {0.3, 0.17, 0.05}, rpy[3] = {0.3, -1.1, 2.0}, t[3] = {5.0, -3.0, 7.0};
  double R[9], v[24];
  kn_mat3_from_rpy(rpy, R);
  for (int i = 0; i < 8; i++) {
    double c[3], l[3], w[3];
    unit_corner(i, c);
    for (int k = 0; k < 3; k++) l[k] = (c[k] - 0.5) * ext[k];
    kn_mat3_vec(R, l, w);
    for (int k = 0; k < 3; k++) v[3 * i + k] = w[k] + t[k];
  }
  int tri[36], inv[36];
  for (int f = 0; f < 12; f++)
    for (int j = 0; j < 3; j++) tri[3 * f + j] = cube_tri[f][j], inv[3 * f + j] = cube_tri[f][2 - j];
  double V, com[3], I[9];
  kn_error err = {0};
  cr_assert_eq(kn_mass_properties_triangles(8, v, 12, tri, &V, com, I, &err), KN_OK, "%s", err.msg);
  expect_box(V, com, I, ext, R, t, 10);
  cr_assert_eq(kn_mass_properties_triangles(8, v, 12, inv, &V, com, I, &err), KN_OK, "%s", err.msg);
  expect_box(V, com, I, ext, R, t, 10);
  /* an open mesh (one face dropped) still integrates, a degenerate one does not */
  double flat[24] = {0};
  cr_expect_eq(kn_mass_properties_triangles(8, flat, 12, tri, &V, com, I, &err), KN_ERR_INVALID);
  int bad[36];
  memcpy(bad, tri, sizeof bad);
  bad[5] = 9;
  cr_expect_eq(kn_mass_properties_triangles(8, v, 12, bad, &V, com, I, &err), KN_ERR_INVALID);
}

/* an OBJ cube written to a temp folder, read through assimp (float vertices: use exact values),
 * with a per-axis scale; and the octahedron of tests/contact/data */
Test(mass_properties, obj_files) {
  char dir[] = "/tmp/knead_massprop_XXXXXX", path[300];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/box.obj", dir);
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f);
  const double ext[3] = {1.0, 0.5, 0.25}, centre[3] = {0.25, -0.5, 1.0};
  for (int i = 0; i < 8; i++) {
    double c[3];
    unit_corner(i, c);
    fprintf(f, "v %.17g %.17g %.17g\n", centre[0] + (c[0] - 0.5) * ext[0], centre[1] + (c[1] - 0.5) * ext[1],
            centre[2] + (c[2] - 0.5) * ext[2]);
  }
  for (int t = 0; t < 12; t++) fprintf(f, "f %d %d %d\n", cube_tri[t][0] + 1, cube_tri[t][1] + 1, cube_tri[t][2] + 1);
  fclose(f);
  kn_shape sh = {.type = KN_SHAPE_MESH, .mesh_uri = "box.obj", .mesh_path = path, .scale = {2, 1, 1}};
  double V, com[3], I[9];
  kn_error err = {0};
  cr_assert_eq(kn_mesh_mass_properties(&sh, &V, com, I, &err), KN_OK, "%s", err.msg);
  const double ext2[3] = {2.0, 0.5, 0.25}, centre2[3] = {0.5, -0.5, 1.0}, Id[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  fprintf(stderr, "box.obj scaled (2, 1, 1)\n");
  expect_box(V, com, I, ext2, Id, centre2, 1);
  unlink(path);
  rmdir(dir);

  char oct[512];
  snprintf(oct, sizeof oct, "%s/tests/contact/data/octahedron.obj", KNEAD_SOURCE_DIR);
  kn_shape so = {.type = KN_SHAPE_MESH, .mesh_uri = "octahedron.obj", .mesh_path = oct, .scale = {1, 1, 1}};
  cr_assert_eq(kn_mesh_mass_properties(&so, &V, com, I, &err), KN_OK, "%s", err.msg);
  fprintf(stderr, "octahedron: V %.17g (4/3), I/m diag %.17g %.17g %.17g (0.2)\n", V, I[0], I[4], I[8]);
  cr_expect(fabs(V - 4.0 / 3.0) <= 1e-12, "V %.17g", V);
  for (int a = 0; a < 3; a++) {
    cr_expect(fabs(com[a]) <= 1e-12, "com %.17g", com[a]);
    for (int b = 0; b < 3; b++) cr_expect(fabs(I[3 * a + b] - (a == b ? 0.2 : 0.0)) <= 1e-12, "I %.17g", I[3 * a + b]);
  }
  kn_shape missing = {.type = KN_SHAPE_MESH, .mesh_uri = "nope.obj", .mesh_path = "/nonexistent/nope.obj",
                      .scale = {1, 1, 1}};
  cr_expect_eq(kn_mesh_mass_properties(&missing, &V, com, I, &err), KN_ERR_IO);
  cr_expect(strstr(err.msg, "nope.obj") != NULL, "%s", err.msg);
}
