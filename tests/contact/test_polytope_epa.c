/* The narrow phase's deepest point of a mesh against another small polytope (a box, a mesh whose
 * hull has at most 64 vertices) by libccd's EPA without the margin inflation (contact/narrow.c
 * ccd_deepest; box-box pairs keep the inflated EPA), against the exact penetration depth of two
 * boxes: the smallest overlap over the 15 separating axes, which for two boxes is the penetration
 * depth and its direction. On random overlapping poses of box-cube mesh, cube mesh-box and cube
 * mesh-cube mesh (a 14-vertex cube mesh: corners and face centres, whose hull is its 8 corners) at
 * margins 0, 5 mm and 30 mm: where the axis is unique (the second smallest overlap 0.1 mm larger)
 * phi = -depth to 1e-8 m (EPA's tolerance) and the normal is the axis to 1e-7; at near ties phi is
 * never deeper than -depth (EPA may stop on a face between the two axes, as it did before);
 * p1 - p2 = -phi n. The inflated EPA every such pair took before (kn_narrow_deepest with
 * polytopes 0) is measured on the same poses and its worst errors logged: 7.6e-5 to 8.3e-5 m in
 * phi and 3.1e-3 to 3.7e-3 in the normal when this test was written. Where the axis is unique the
 * witness points lie on their shapes' surfaces to 1e-8 (they are the contact features' overlap,
 * not libccd's position, which was up to 2 cm off the surfaces on both paths). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "contact/collision_internal.h"
#include "../support/mesh_poses.h"

static char g_dir[256], g_path[300];
static kn_shape g_cube_shape;
static kn_mesh_data g_cube;

static void setup(void) {
  g_rng = 0xC0FFEEull;
  snprintf(g_dir, sizeof g_dir, "/tmp/knead_polytope_epa_XXXXXX");
  cr_assert_not_null(mkdtemp(g_dir));
  snprintf(g_path, sizeof g_path, "%s/cube.obj", g_dir);
  FILE* f = fopen(g_path, "w");
  cr_assert_not_null(f);
  const double h = 0.04;
  for (int i = 0; i < 8; ++i) fprintf(f, "v %g %g %g\n", i & 1 ? h : -h, i & 2 ? h : -h, i & 4 ? h : -h);
  const int face[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  const double c[6][3] = {{0, 0, -1}, {0, 0, 1}, {0, -1, 0}, {0, 1, 0}, {-1, 0, 0}, {1, 0, 0}};
  for (int k = 0; k < 6; ++k) fprintf(f, "v %g %g %g\n", h * c[k][0], h * c[k][1], h * c[k][2]);
  for (int k = 0; k < 6; ++k)
    for (int e = 0; e < 4; ++e) fprintf(f, "f %d %d %d\n", face[k][e] + 1, face[k][(e + 1) % 4] + 1, 9 + k);
  fclose(f);
  g_cube_shape = (kn_shape){.type = KN_SHAPE_MESH, .mesh_uri = g_path, .mesh_path = g_path, .scale = {1, 1, 1}};
  kn_error err = {0};
  cr_assert_eq(kn_mesh_load(&g_cube_shape, &g_cube, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(g_cube.hull.nv, 8);
}
static void teardown(void) {
  kn_mesh_free(&g_cube);
  unlink(g_path);
  rmdir(g_dir);
}

static double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* half sizes of a box shape or of the cube mesh */
static void halves(const kn_nshape* s, double h[3]) {
  for (int k = 0; k < 3; ++k) h[k] = s->shape->type == KN_SHAPE_BOX ? 0.5 * s->shape->size[k] : 0.04;
}

/* exact penetration depth of two boxes by the 15 axes; the axis (from A to B) and the margin by
 * which the second smallest overlap exceeds it */
static double sat_depth(const kn_nshape* A, const kn_nshape* B, double axis[3], double* gap) {
  double ha[3], hb[3], a[3][3], b[3][3], d[3];
  halves(A, ha), halves(B, hb);
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < 3; ++i) a[k][i] = A->X->R[3 * i + k], b[k][i] = B->X->R[3 * i + k];
  for (int i = 0; i < 3; ++i) d[i] = B->X->p[i] - A->X->p[i];
  double best = INFINITY, second = INFINITY;
  for (int t = 0; t < 15; ++t) {
    double L[3];
    if (t < 3) memcpy(L, a[t], sizeof L);
    else if (t < 6) memcpy(L, b[t - 3], sizeof L);
    else kn_vec3_cross(a[(t - 6) / 3], b[(t - 6) % 3], L);
    double l = sqrt(dot(L, L));
    if (l < 1e-9) continue; /* parallel edges: the face axes cover them */
    for (int i = 0; i < 3; ++i) L[i] /= l;
    double ra = 0, rb = 0;
    for (int k = 0; k < 3; ++k) ra += ha[k] * fabs(dot(a[k], L)), rb += hb[k] * fabs(dot(b[k], L));
    double overlap = ra + rb - fabs(dot(d, L));
    if (overlap < best) {
      second = best, best = overlap;
      double s = dot(d, L) >= 0 ? 1 : -1;
      for (int i = 0; i < 3; ++i) axis[i] = s * L[i];
    } else if (overlap < second) {
      second = overlap;
    }
  }
  *gap = second - best;
  return best;
}

/* (point in the world, box or cube mesh) => |signed distance| to its box */
static double surface_distance(const kn_nshape* s, const double x[3]) {
  double h[3], xl[3], dd[3], g[3];
  halves(s, h);
  for (int i = 0; i < 3; ++i) dd[i] = x[i] - s->X->p[i];
  kn_mat3_tvec(s->X->R, dd, xl);
  kn_shape box = {.type = KN_SHAPE_BOX, .size = {2 * h[0], 2 * h[1], 2 * h[2]}};
  return fabs(kn_shape_signed_distance_local(&box, NULL, xl, g));
}

// => the cases whose depth was checked against the exact one
static int compare(const kn_shape* sa, const kn_mesh_data* ma, const kn_shape* sb, const kn_mesh_data* mb,
                   const char* what) {
  const double margins[3] = {0, 0.005, 0.03};
  int checked = 0, unique = 0;
  double inflated_phi = 0, inflated_n = 0, tie_under = 0;
  for (int t = 0; t < 400; ++t) {
    kn_pose XA, XB;
    random_pose(0.04, &XA), random_pose(0.04, &XB);
    kn_nshape A = {sa, ma, &XA, kn_contact_material_default(0.01)};
    kn_nshape B = {sb, mb, &XB, kn_contact_material_default(0.01)};
    double axis[3], gap, depth = sat_depth(&A, &B, axis, &gap);
    if (!(depth > 1e-5)) continue;
    for (int k = 0; k < 3; ++k, ++checked) {
      double n[3], p1[3], p2[3], phi;
      cr_assert(kn_narrow_deepest(&A, &B, margins[k], 1, n, p1, p2, &phi), "%s, pose %d: no point", what, t);
      for (int i = 0; i < 3; ++i)
        cr_assert(fabs(p1[i] - p2[i] + phi * n[i]) <= 1e-12, "%s, pose %d: p1 - p2 is not -phi n", what, t);
      /* EPA's polytope lies inside the Minkowski difference: never deeper than the exact depth */
      cr_assert_geq(phi, -depth - 1e-8, "%s, pose %d, margin %g: phi %.17g, exact depth %.17g", what, t, margins[k], phi,
                    depth);
      if (gap <= 1e-4) {
        /* two axes within 0.1 mm: EPA may stop on a face between them, short of the depth */
        tie_under = fmax(tie_under, phi + depth);
        continue;
      }
      ++unique;
      cr_assert_leq(phi, -depth + 1e-8, "%s, pose %d, margin %g: phi %.17g, exact depth %.17g", what, t, margins[k], phi,
                    depth);
      for (int i = 0; i < 3; ++i)
        cr_assert(fabs(n[i] - axis[i]) <= 1e-7, "%s, pose %d: normal (%g %g %g), axis (%g %g %g)", what, t, n[0], n[1],
                  n[2], axis[0], axis[1], axis[2]);
      /* the witness points lie on their shapes' surfaces (the contact features' overlap) */
      cr_assert_leq(surface_distance(&A, p1), 1e-8, "%s, pose %d: p1 %g off A's surface", what, t,
                    surface_distance(&A, p1));
      cr_assert_leq(surface_distance(&B, p2), 1e-8, "%s, pose %d: p2 %g off B's surface", what, t,
                    surface_distance(&B, p2));
      double ni[3], q1[3], q2[3], phi_inflated;
      if (margins[k] > 0 && kn_narrow_deepest(&A, &B, margins[k], 0, ni, q1, q2, &phi_inflated)) {
        inflated_phi = fmax(inflated_phi, fabs(phi_inflated + depth));
        for (int i = 0; i < 3; ++i) inflated_n = fmax(inflated_n, fabs(ni[i] - axis[i]));
      }
    }
  }
  cr_log_info("%s: %d cases, %d with a unique axis; near ties: depth short by up to %.3g m; the inflated EPA's "
              "worst |phi + depth| %.3g m, normal %.3g",
              what, checked, unique, tie_under, inflated_phi, inflated_n);
  cr_expect_gt(checked, 300, "%s: %d overlapping cases", what, checked);
  cr_expect_gt(unique, 200, "%s: %d cases with a unique axis", what, unique);
  return checked;
}

Test(polytope_epa, box_mesh_depth_exact, .init = setup, .fini = teardown) {
  const kn_shape a = {.type = KN_SHAPE_BOX, .size = {0.1, 0.06, 0.04}};
  cr_assert_gt(compare(&a, NULL, &g_cube_shape, &g_cube, "box-cube mesh"), 300); /* overlapping poses of 400, x 3 margins */
  cr_assert_gt(compare(&g_cube_shape, &g_cube, &a, NULL, "cube mesh-box"), 300);
  cr_assert_gt(compare(&g_cube_shape, &g_cube, &g_cube_shape, &g_cube, "cube mesh-cube mesh"), 300);
}
