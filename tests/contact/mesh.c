/* Meshes read with assimp: the signed distance of a cube mesh (OBJ and STL written to a temp
 * dir) equals the box's closed form, the octahedron in tests/contact/data matches
 * (|x|+|y|+|z|-1)/sqrt(3), mesh contacts, and missing/empty files fail naming the file. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contact/contact.h"

static char g_dir[256];

static void make_dir(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/knead_contact_mesh_XXXXXX");
  cr_assert_not_null(mkdtemp(g_dir));
}

/* the 12 outward-wound triangles of the cube [-h, h]^3 */
static int cube_tris(double h, double tri[12][3][3]) {
  int n = 0;
  for (int k = 0; k < 3; ++k)
    for (int s = -1; s <= 1; s += 2) {
      int u = (k + 1) % 3, v = (k + 2) % 3;
      double q[4][3];
      const double su[4] = {-1, 1, 1, -1}, sv[4] = {-1, -1, 1, 1};
      for (int i = 0; i < 4; ++i) q[i][k] = s * h, q[i][u] = su[i] * h, q[i][v] = sv[i] * h;
      /* (u, v, k) is right-handed, so this order is counter-clockwise seen from +k */
      int ord[6] = {0, 1, 2, 0, 2, 3};
      if (s < 0) ord[1] = 2, ord[2] = 1, ord[4] = 3, ord[5] = 2;
      for (int t = 0; t < 2; ++t, ++n)
        for (int c = 0; c < 3; ++c) memcpy(tri[n][c], q[ord[3 * t + c]], sizeof q[0]);
    }
  return n;
}

static void write_obj(const char* path, double h) {
  double tri[12][3][3];
  int n = cube_tris(h, tri);
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f);
  for (int t = 0; t < n; ++t)
    for (int c = 0; c < 3; ++c) fprintf(f, "v %.17g %.17g %.17g\n", tri[t][c][0], tri[t][c][1], tri[t][c][2]);
  for (int t = 0; t < n; ++t) fprintf(f, "f %d %d %d\n", 3 * t + 1, 3 * t + 2, 3 * t + 3);
  fclose(f);
}

static void write_stl(const char* path, double h) {
  double tri[12][3][3];
  int n = cube_tris(h, tri);
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f, "solid cube\n");
  for (int t = 0; t < n; ++t) {
    fprintf(f, "facet normal 0 0 0\nouter loop\n");
    for (int c = 0; c < 3; ++c) fprintf(f, "vertex %.17g %.17g %.17g\n", tri[t][c][0], tri[t][c][1], tri[t][c][2]);
    fprintf(f, "endloop\nendfacet\n");
  }
  fprintf(f, "endsolid cube\n");
  fclose(f);
}

static kn_collider col(const kn_shape* s, int clique, int body) {
  kn_collider c = {.clique = clique, .body = body, .shape = s, .material = kn_contact_material_default(0.01),
                   .group = 0xffffffffu, .mask = 0xffffffffu};
  kn_pose_identity(&c.X_bg);
  return c;
}

/* mesh SDF vs box SDF at 2000 pseudo-random points in [-1.5, 1.5]^3 (tol 1e-12: same geometry) */
static void compare_cube(const char* path, double scale) {
  kn_shape mesh = {.type = KN_SHAPE_MESH, .mesh_uri = (char*)path, .mesh_path = (char*)path,
                   .scale = {scale, scale, scale}};
  kn_shape box = {.type = KN_SHAPE_BOX, .size = {2 * 0.5 * scale, 2 * 0.5 * scale, 2 * 0.5 * scale}};
  kn_collider c[2] = {col(&mesh, 0, 0), col(&box, 1, 0)};
  kn_collision_scene* cs = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_collision_scene_create(c, 2, &cs, &err), KN_OK, "%s", err.msg);
  kn_pose X;
  double xyz[3] = {0.1, 0.2, -0.3}, rpy[3] = {0.3, 0.2, -0.7};
  kn_pose_from_xyz_rpy(xyz, rpy, &X);
  unsigned s = 12345;
  double maxerr = 0;
  int inside = 0;
  for (int i = 0; i < 2000; ++i) {
    double xl[3], xw[3], gm[3], gb[3];
    for (int k = 0; k < 3; ++k) s = s * 1103515245u + 12345u, xl[k] = 3.0 * ((s >> 8) & 0xffff) / 65535.0 - 1.5;
    kn_pose_apply(&X, xl, xw);
    double dm = kn_collider_signed_distance(cs, 0, &X, xw, gm);
    double db = kn_collider_signed_distance(cs, 1, &X, xw, gb);
    maxerr = fmax(maxerr, fabs(dm - db));
    inside += db < 0;
  }
  cr_expect(maxerr < 1e-12, "%s: max |mesh - box| = %g", path, maxerr);
  cr_expect(inside > 10, "some samples inside (%d)", inside);
  kn_collision_scene_free(cs);
}

Test(mesh, cube_obj_and_stl_match_box) {
  make_dir();
  char obj[300], stl[300];
  snprintf(obj, sizeof obj, "%s/cube.obj", g_dir);
  snprintf(stl, sizeof stl, "%s/cube.stl", g_dir);
  write_obj(obj, 0.5);
  write_stl(stl, 0.5);
  compare_cube(obj, 1.0);
  compare_cube(stl, 1.0);
  compare_cube(stl, 0.6); /* per-axis scale applied */
  unlink(obj), unlink(stl), rmdir(g_dir);
}

Test(mesh, octahedron_data_file) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/contact/data/octahedron.obj", KNEAD_SOURCE_DIR);
  kn_shape mesh = {.type = KN_SHAPE_MESH, .mesh_uri = "octahedron.obj", .mesh_path = path, .scale = {1, 1, 1}};
  kn_collider c = col(&mesh, 0, 0);
  kn_collision_scene* cs = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_collision_scene_create(&c, 1, &cs, &err), KN_OK, "%s", err.msg);
  kn_pose I;
  kn_pose_identity(&I);
  /* face regions: points t (1, 1, 1) and sign flips; the closed form is (|x|+|y|+|z|-1)/sqrt(3) */
  const double ts[] = {0.0, 0.1, 0.3, 0.5, 0.8};
  for (int i = 0; i < 5; ++i)
    for (int oct = 0; oct < 8; ++oct) {
      double x[3] = {ts[i] * (oct & 1 ? -1 : 1), ts[i] * (oct & 2 ? -1 : 1), ts[i] * (oct & 4 ? -1 : 1)}, g[3];
      double d = kn_collider_signed_distance(cs, 0, &I, x, g);
      double want = (3 * ts[i] - 1) / sqrt(3.0);
      cr_expect(fabs(d - want) < 1e-12, "t %g oct %d: %g vs %g", ts[i], oct, d, want);
    }
  /* vertex region: (2, 0, 0) is 1 from the vertex (1, 0, 0), gradient +x */
  double x[3] = {2, 0, 0}, g[3];
  cr_expect(fabs(kn_collider_signed_distance(cs, 0, &I, x, g) - 1.0) < 1e-12);
  cr_expect(fabs(g[0] - 1) < 1e-12);
  kn_collision_scene_free(cs);
}

Test(mesh, mesh_on_halfspace_and_box) {
  make_dir();
  char obj[300];
  snprintf(obj, sizeof obj, "%s/cube.obj", g_dir);
  write_obj(obj, 0.5);
  kn_shape mesh = {.type = KN_SHAPE_MESH, .mesh_uri = obj, .mesh_path = obj, .scale = {1, 1, 1}};
  kn_shape ground = {.type = KN_SHAPE_HALFSPACE};
  kn_shape box = {.type = KN_SHAPE_BOX, .size = {1, 1, 1}};
  kn_collider c[3] = {col(&ground, -1, -1), col(&mesh, 0, 0), col(&box, 1, 0)};
  kn_collision_scene* cs = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_collision_scene_create(c, 3, &cs, &err), KN_OK, "%s", err.msg);
  kn_pose X[3];
  for (int i = 0; i < 3; ++i) kn_pose_identity(&X[i]);
  X[1].p[2] = 0.5 - 0.01; /* mesh cube 1 cm into the ground */
  X[2].p[0] = 5, X[2].p[2] = 3; /* box far away */
  const kn_contact_point* p;
  int n;
  cr_assert_eq(kn_collision_detect(cs, X, 0.0, &p, &n, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(n, 4, "mesh-halfspace: one point per bottom vertex, got %d", n);
  for (int i = 0; i < n; ++i) {
    cr_expect(p[i].a == 0 && p[i].b == 1);
    cr_expect(fabs(p[i].phi + 0.01) < 1e-12, "phi %g", p[i].phi);
    cr_expect(fabs(p[i].n[2] - 1) < 1e-12, "normal from the ground into the mesh: +z");
  }
  /* mesh cube on the box (stacked, 2 mm overlap): libccd + vertex probes, >= 4 points */
  X[2].p[0] = 0, X[2].p[1] = 0.1, X[2].p[2] = 0.5 - 0.01 + 1.0 - 0.002;
  cr_assert_eq(kn_collision_detect(cs, X, 0.0, &p, &n, &err), KN_OK, "%s", err.msg);
  int nmb = 0;
  for (int i = 0; i < n; ++i)
    if (p[i].a == 1 && p[i].b == 2) {
      ++nmb;
      cr_expect(fabs(p[i].phi + 0.002) < 1e-6, "phi %g", p[i].phi);
      cr_expect(p[i].n[2] > 0.999, "normal from the mesh (below) into the box (above)");
    }
  cr_expect(nmb >= 4, "mesh-box points %d", nmb);
  kn_collision_scene_free(cs);
  unlink(obj), rmdir(g_dir);
}

Test(mesh, missing_and_empty_files_name_the_file) {
  make_dir();
  char missing[300], empty[300];
  snprintf(missing, sizeof missing, "%s/nope.stl", g_dir);
  snprintf(empty, sizeof empty, "%s/empty.obj", g_dir);
  FILE* f = fopen(empty, "w");
  fprintf(f, "# nothing\n");
  fclose(f);
  const char* paths[2] = {missing, empty};
  for (int i = 0; i < 2; ++i) {
    kn_shape mesh = {.type = KN_SHAPE_MESH, .mesh_uri = (char*)paths[i], .mesh_path = (char*)paths[i],
                     .scale = {1, 1, 1}};
    kn_collider c = col(&mesh, 0, 0);
    kn_collision_scene* cs = NULL;
    kn_error err = {0};
    kn_status st = kn_collision_scene_create(&c, 1, &cs, &err);
    cr_expect(st == KN_ERR_IO || st == KN_ERR_PARSE, "status %d", st);
    cr_expect_null(cs);
    cr_expect(strstr(err.msg, paths[i]) != NULL, "message names the file: %s", err.msg);
  }
  kn_shape unresolved = {.type = KN_SHAPE_MESH, .mesh_uri = "package://x/y.stl", .mesh_path = NULL,
                         .scale = {1, 1, 1}};
  kn_collider c = col(&unresolved, 0, 0);
  kn_collision_scene* cs = NULL;
  kn_error err = {0};
  cr_expect_eq(kn_collision_scene_create(&c, 1, &cs, &err), KN_ERR_IO);
  cr_expect(strstr(err.msg, "package://x/y.stl") != NULL, "%s", err.msg);
  unlink(empty), rmdir(g_dir);
}
