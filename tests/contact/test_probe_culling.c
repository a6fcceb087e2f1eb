/* Probe culling (contact/probe_cull.c, narrow.c): on random poses of non-convex meshes against
 * each other, against every primitive and against a half-space, the culled narrow phase
 * (kn_narrow_pair_probes, the probe path also for convex pairs) returns exactly the contact points of the exhaustive one
 * (kn_narrow_pair_exhaustive, every probe measured, duplicates found by a scan; the same hull
 * climb as libccd's support): same count, same order, bit for bit. The
 * meshes are written to a temp dir: a torus (a hole) and a bumpy sphere (concave dents). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contact/collision_internal.h"
#include "../support/mesh_poses.h"

static char g_dir[256];




static void same_points(const kn_point_buf* a, const kn_point_buf* b, const char* what, int trial) {
  cr_assert_eq(a->count, b->count, "%s, trial %d: %d culled points, %d exhaustive", what, trial, a->count, b->count);
  for (int i = 0; i < a->count; ++i) {
    const kn_contact_point *p = &a->p[i], *q = &b->p[i];
    cr_assert(p->a == q->a && p->b == q->b, "%s, trial %d, point %d: colliders differ", what, trial, i);
    cr_assert(memcmp(p->p, q->p, sizeof p->p) == 0 && memcmp(p->n, q->n, sizeof p->n) == 0 &&
                  memcmp(p->R_WC, q->R_WC, sizeof p->R_WC) == 0 && memcmp(&p->phi, &q->phi, sizeof p->phi) == 0,
              "%s, trial %d, point %d: (%.17g %.17g %.17g) phi %.17g vs (%.17g %.17g %.17g) phi %.17g", what, trial, i,
              p->p[0], p->p[1], p->p[2], p->phi, q->p[0], q->p[1], q->p[2], q->phi);
  }
}

static int g_max_points; /* the most points one pair gave (>= 32 exercises the duplicate index) */

/* (shapes A, B; poses drawn within dist; margins) => trials with contacts, all equal */
static int compare(const kn_shape* sa, const kn_mesh_data* ma, const kn_shape* sb, const kn_mesh_data* mb, double dist,
                   int trials, const char* what) {
  const double margins[3] = {0, 0.005, 0.03};
  kn_point_buf culled = {0}, exhaustive = {0};
  int with_contacts = 0;
  for (int t = 0; t < trials; ++t) {
    kn_pose XA, XB;
    random_pose(dist, &XA), random_pose(dist, &XB);
    kn_nshape A = {sa, ma, &XA, kn_contact_material_default(0.01)};
    kn_nshape B = {sb, mb, &XB, kn_contact_material_default(0.01)};
    for (int k = 0; k < 3; ++k) {
      culled.count = exhaustive.count = 0;
      cr_assert_eq(kn_narrow_pair_probes(&A, &B, 0, 1, margins[k], &culled), KN_OK);
      cr_assert_eq(kn_narrow_pair_exhaustive(&A, &B, 0, 1, margins[k], &exhaustive), KN_OK);
      same_points(&culled, &exhaustive, what, t);
      with_contacts += culled.count > 0;
      if (culled.count > g_max_points) g_max_points = culled.count;
    }
  }
  kn_point_buf_free(&culled), kn_point_buf_free(&exhaustive);
  cr_log_info("%s: %d of %d (pose, margin) cases with contacts", what, with_contacts, 3 * trials);
  return with_contacts;
}

static void load(const char* name, int torus, kn_shape* s, kn_mesh_data* m) {
  static char paths[2][300];
  char* path = paths[torus];
  snprintf(path, 300, "%s/%s", g_dir, name);
  if (torus) write_torus_obj(path, 32, 12);
  else write_sphere_obj(path, 0.06, 0.15, 16, 24);
  *s = (kn_shape){.type = KN_SHAPE_MESH, .mesh_uri = path, .mesh_path = path, .scale = {1, 1, 1}};
  kn_error err = {0};
  cr_assert_eq(kn_mesh_load(s, m, &err), KN_OK, "%s", err.msg);
}

static kn_shape g_torus, g_bumpy;
static kn_mesh_data g_mt, g_mb;

static void setup(void) {
  g_rng = 88172645463325252ull;
  snprintf(g_dir, sizeof g_dir, "/tmp/knead_probe_culling_XXXXXX");
  cr_assert_not_null(mkdtemp(g_dir));
  load("torus.obj", 1, &g_torus, &g_mt);
  load("bumpy.obj", 0, &g_bumpy, &g_mb);
}
static void teardown(void) {
  kn_mesh_free(&g_mt), kn_mesh_free(&g_mb);
  char path[300];
  snprintf(path, sizeof path, "%s/torus.obj", g_dir), unlink(path);
  snprintf(path, sizeof path, "%s/bumpy.obj", g_dir), unlink(path);
  rmdir(g_dir);
}

Test(probe_culling, mesh_mesh_equals_exhaustive, .init = setup, .fini = teardown) {
  /* close (mostly overlapping) and spread (mostly near misses, where culling skips most probes) */
  cr_expect_gt(compare(&g_torus, &g_mt, &g_bumpy, &g_mb, 0.07, 60, "torus-bumpy"), 60);
  cr_expect_gt(compare(&g_bumpy, &g_mb, &g_torus, &g_mt, 0.07, 60, "bumpy-torus"), 60);
  cr_expect_gt(compare(&g_torus, &g_mt, &g_torus, &g_mt, 0.08, 60, "torus-torus"), 60);
  cr_expect_gt(compare(&g_torus, &g_mt, &g_bumpy, &g_mb, 0.11, 150, "torus-bumpy spread"), 30);
  cr_expect_gt(compare(&g_torus, &g_mt, &g_torus, &g_mt, 0.13, 150, "torus-torus spread"), 30);
  cr_expect_gt(g_max_points, 64, "a pair with many points (duplicate index in use): %d", g_max_points);
}

Test(probe_culling, mesh_primitive_equals_exhaustive, .init = setup, .fini = teardown) {
  const kn_shape prims[4] = {{.type = KN_SHAPE_SPHERE, .size = {0.04}},
                             {.type = KN_SHAPE_BOX, .size = {0.1, 0.06, 0.04}},
                             {.type = KN_SHAPE_CYLINDER, .size = {0.03, 0.1}},
                             {.type = KN_SHAPE_CAPSULE, .size = {0.02, 0.08}}};
  const char* names[4] = {"sphere", "box", "cylinder", "capsule"};
  for (int i = 0; i < 4; ++i) {
    char what[64];
    snprintf(what, sizeof what, "torus-%s", names[i]);
    cr_expect_gt(compare(&g_torus, &g_mt, &prims[i], NULL, 0.06, 150, what), 50, "%s", what);
    snprintf(what, sizeof what, "%s-bumpy", names[i]);
    cr_expect_gt(compare(&prims[i], NULL, &g_bumpy, &g_mb, 0.06, 150, what), 50, "%s", what);
  }
}

Test(probe_culling, mesh_halfspace_equals_exhaustive, .init = setup, .fini = teardown) {
  const kn_shape plane = {.type = KN_SHAPE_HALFSPACE};
  cr_expect_gt(compare(&g_torus, &g_mt, &plane, NULL, 0.06, 200, "torus-halfspace"), 100);
  cr_expect_gt(compare(&plane, NULL, &g_bumpy, &g_mb, 0.06, 200, "halfspace-bumpy"), 100);
  cr_expect_gt(g_max_points, 64, "a pair with many points (duplicate index in use): %d", g_max_points);
}
