/* Convex meshes (contact/hull.c): recognition at load (every vertex on the qhull hull to
 * KN_HULL_CONVEX_TOL of the box diagonal), the hill-climbing support against the scan over every
 * vertex, and the narrow phase on convex meshes with the hull's hill-climbing support (libccd
 * GJK/EPA, kn_narrow_pair_probes: the probe path, not the convex patch) against the scan support (kn_narrow_pair_scan): distances,
 * normals and both witness points to 1e-9 relative on random poses. Meshes written to a temp dir:
 * a UV sphere and a cube (convex), a dented sphere and a torus (not). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contact/collision_internal.h"
#include "../support/mesh_poses.h"

static char g_dir[256];

/* cube [-h, h]^3 with a centre vertex on every face (4 triangles a face): 14 vertices, 8 extreme */
static void write_cube(const char* path, double h) {
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f);
  for (int i = 0; i < 8; ++i) fprintf(f, "v %g %g %g\n", i & 1 ? h : -h, i & 2 ? h : -h, i & 4 ? h : -h);
  /* faces as corner cycles (counter-clockwise seen from outside) */
  const int face[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  const double c[6][3] = {{0, 0, -1}, {0, 0, 1}, {0, -1, 0}, {0, 1, 0}, {-1, 0, 0}, {1, 0, 0}};
  for (int k = 0; k < 6; ++k) fprintf(f, "v %g %g %g\n", h * c[k][0], h * c[k][1], h * c[k][2]);
  for (int k = 0; k < 6; ++k)
    for (int e = 0; e < 4; ++e) fprintf(f, "f %d %d %d\n", face[k][e] + 1, face[k][(e + 1) % 4] + 1, 9 + k);
  fclose(f);
}

typedef struct {
  char path[300];
  kn_shape s;
  kn_mesh_data m;
} mesh;
static mesh g_sphere, g_cube, g_dented, g_torus;

static void load(mesh* x, const char* name) {
  snprintf(x->path, sizeof x->path, "%s/%s", g_dir, name);
  if (strcmp(name, "sphere.obj") == 0) write_sphere_obj(x->path, 0.05, 0, 12, 20);
  else if (strcmp(name, "dented.obj") == 0) write_sphere_obj(x->path, 0.05, 0.15, 12, 20);
  else if (strcmp(name, "cube.obj") == 0) write_cube(x->path, 0.04);
  else write_torus_obj(x->path, 24, 10);
  x->s = (kn_shape){.type = KN_SHAPE_MESH, .mesh_uri = x->path, .mesh_path = x->path, .scale = {1, 1, 1}};
  kn_error err = {0};
  cr_assert_eq(kn_mesh_load(&x->s, &x->m, &err), KN_OK, "%s", err.msg);
}

static void setup(void) {
  g_rng = 0x9E3779B97F4A7C15ull;
  snprintf(g_dir, sizeof g_dir, "/tmp/knead_convex_mesh_XXXXXX");
  cr_assert_not_null(mkdtemp(g_dir));
  load(&g_sphere, "sphere.obj"), load(&g_cube, "cube.obj"), load(&g_dented, "dented.obj"), load(&g_torus, "torus.obj");
}
static void teardown(void) {
  mesh* all[4] = {&g_sphere, &g_cube, &g_dented, &g_torus};
  for (int i = 0; i < 4; ++i) kn_mesh_free(&all[i]->m), unlink(all[i]->path);
  rmdir(g_dir);
}

Test(convex_mesh, recognized_at_load, .init = setup, .fini = teardown) {
  cr_expect(g_sphere.m.convex, "UV sphere: inner depth %g", g_sphere.m.hull.inner_depth);
  cr_expect_eq(g_sphere.m.hull.nv, g_sphere.m.nv, "every vertex of the UV sphere is extreme");
  cr_expect(g_cube.m.convex, "cube: inner depth %g", g_cube.m.hull.inner_depth);
  cr_expect_eq(g_cube.m.nv, 14);
  cr_expect_eq(g_cube.m.hull.nv, 8, "face centres are on the hull but not hull vertices: %d", g_cube.m.hull.nv);
  cr_expect_lt(g_cube.m.hull.inner_depth, 1e-15);
  /* dents of 15 % of 5 cm and the torus' hole (3 cm tube, 8 cm ring) are far beyond 1e-9 */
  cr_expect(!g_dented.m.convex && g_dented.m.hull.inner_depth > 1e-3, "dented: %g", g_dented.m.hull.inner_depth);
  cr_expect(!g_torus.m.convex && g_torus.m.hull.inner_depth > 1e-2, "torus: %g", g_torus.m.hull.inner_depth);
}

/* hill climbing from any start reaches the maximum of d . v over all of the mesh's vertices */
static void support_equals_scan(const kn_mesh_data* m, const char* what) {
  for (int t = 0; t < 2000; ++t) {
    double d[3] = {2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1};
    if (t < 6) d[0] = d[1] = d[2] = 0, d[t / 2] = t % 2 ? -1 : 1; /* axis directions: ties on flat faces */
    double best = -INFINITY;
    for (int i = 0; i < m->nv; ++i) best = fmax(best, d[0] * m->v[3 * i] + d[1] * m->v[3 * i + 1] + d[2] * m->v[3 * i + 2]);
    int v = kn_hull_support(&m->hull, d, (int)(urand() * m->hull.nv));
    const double* x = &m->hull.v[3 * v];
    cr_assert_eq(d[0] * x[0] + d[1] * x[1] + d[2] * x[2], best, "%s, direction %d: climb %.17g, scan %.17g", what, t,
                 d[0] * x[0] + d[1] * x[1] + d[2] * x[2], best);
  }
}

Test(convex_mesh, hill_climbing_support_equals_scan, .init = setup, .fini = teardown) {
  support_equals_scan(&g_sphere.m, "sphere");
  support_equals_scan(&g_cube.m, "cube");
  support_equals_scan(&g_dented.m, "dented"); /* the hull of a non-convex mesh is climbed the same way */
  support_equals_scan(&g_torus.m, "torus");
}


/* |a - b| <= 1e-9 (|b| + scale) per component */
static int near_rel(const double* a, const double* b, int n, double scale) {
  for (int k = 0; k < n; ++k)
    if (!(fabs(a[k] - b[k]) <= 1e-9 * (fabs(b[k]) + scale))) return 0;
  return 1;
}

/* (shapes, poses within dist) => the climbing narrow phase's points equal the scan's to 1e-9 */
static int compare(const kn_shape* sa, const kn_mesh_data* ma, const kn_shape* sb, const kn_mesh_data* mb,
                   double dist, int trials, const char* what) {
  kn_point_buf climb = {0}, scan = {0};
  int with_contacts = 0;
  for (int t = 0; t < trials; ++t) {
    kn_pose XA, XB;
    random_pose(dist, &XA), random_pose(dist, &XB);
    kn_nshape A = {sa, ma, &XA, kn_contact_material_default(0.01)};
    kn_nshape B = {sb, mb, &XB, kn_contact_material_default(0.01)};
    climb.count = scan.count = 0;
    cr_assert_eq(kn_narrow_pair_probes(&A, &B, 0, 1, 0.01, &climb), KN_OK);
    cr_assert_eq(kn_narrow_pair_scan(&A, &B, 0, 1, 0.01, &scan), KN_OK);
    cr_assert_eq(climb.count, scan.count, "%s, trial %d: %d points, scan %d", what, t, climb.count, scan.count);
    with_contacts += climb.count > 0;
    for (int i = 0; i < climb.count; ++i) {
      const kn_contact_point *p = &climb.p[i], *q = &scan.p[i];
      /* witness points: p -+ phi/2 n (the two sides have equal stiffness, p is their midpoint) */
      double wp[6], wq[6];
      for (int k = 0; k < 3; ++k)
        wp[k] = p->p[k] - 0.5 * p->phi * p->n[k], wp[3 + k] = p->p[k] + 0.5 * p->phi * p->n[k],
        wq[k] = q->p[k] - 0.5 * q->phi * q->n[k], wq[3 + k] = q->p[k] + 0.5 * q->phi * q->n[k];
      cr_assert(near_rel(&p->phi, &q->phi, 1, 0.05) && near_rel(p->n, q->n, 3, 1) && near_rel(wp, wq, 6, 0.05),
                "%s, trial %d, point %d: phi %.17g vs %.17g, n (%.17g %.17g %.17g) vs (%.17g %.17g %.17g)", what, t, i,
                p->phi, q->phi, p->n[0], p->n[1], p->n[2], q->n[0], q->n[1], q->n[2]);
    }
  }
  kn_point_buf_free(&climb), kn_point_buf_free(&scan);
  cr_log_info("%s: %d of %d poses with contacts", what, with_contacts, trials);
  return with_contacts;
}

Test(convex_mesh, climbing_narrow_phase_equals_scan, .init = setup, .fini = teardown) {
  const kn_shape box = {.type = KN_SHAPE_BOX, .size = {0.1, 0.06, 0.04}};
  const kn_shape cyl = {.type = KN_SHAPE_CYLINDER, .size = {0.03, 0.1}};
  const kn_shape cap = {.type = KN_SHAPE_CAPSULE, .size = {0.02, 0.08}};
  cr_expect_gt(compare(&g_sphere.s, &g_sphere.m, &g_cube.s, &g_cube.m, 0.06, 200, "sphere-cube"), 100);
  cr_expect_gt(compare(&g_cube.s, &g_cube.m, &g_cube.s, &g_cube.m, 0.06, 200, "cube-cube"), 100);
  cr_expect_gt(compare(&g_sphere.s, &g_sphere.m, &g_sphere.s, &g_sphere.m, 0.07, 200, "sphere-sphere"), 100);
  cr_expect_gt(compare(&box, NULL, &g_sphere.s, &g_sphere.m, 0.06, 200, "box-sphere mesh"), 100);
  cr_expect_gt(compare(&g_cube.s, &g_cube.m, &cyl, NULL, 0.06, 200, "cube mesh-cylinder"), 100);
  cr_expect_gt(compare(&cap, NULL, &g_cube.s, &g_cube.m, 0.06, 200, "capsule-cube mesh"), 100);
}
