/* Non-convex mesh pairs whose hulls are apart by more than KN_HULL_APART (contact/narrow.c): their
 * speculative contacts come from the hulls' patch (contact/convex_patch.c) instead of the probes.
 * On random poses of a torus (a hole) and a dented sphere (concave dents), against each other and
 * against a box, at margins up to 5 cm, against the exact probe path (kn_narrow_pair_exhaustive):
 * - the patch's points are at most 4, every gap above KN_HULL_APART;
 * - no tunnelling: the patch's smallest gap is at most the probes' smallest (the hulls contain the
 *   meshes), to 1e-9 of the pair's size, and the patch has points whenever the probes have;
 * - its smallest gap is a true lower bound: at most the exact distance of every mesh vertex to the
 *   other shape;
 * - pairs nearer than KN_HULL_APART keep the probe path (the same points as kn_narrow_pair_probes). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "contact/collision_internal.h"
#include "../support/mesh_poses.h"

static char g_dir[256];
typedef struct {
  char path[300];
  kn_shape s;
  kn_mesh_data m;
} mesh;
static mesh g_torus, g_dented;
static kn_shape g_box = {.type = KN_SHAPE_BOX, .size = {0.06, 0.05, 0.04}};

static void load(mesh* x, const char* name) {
  snprintf(x->path, sizeof x->path, "%s/%s", g_dir, name);
  if (strcmp(name, "torus.obj") == 0) write_torus_obj(x->path, 24, 10);
  else write_sphere_obj(x->path, 0.05, 0.15, 12, 20);
  x->s = (kn_shape){.type = KN_SHAPE_MESH, .mesh_uri = x->path, .mesh_path = x->path, .scale = {1, 1, 1}};
  kn_error err = {0};
  cr_assert_eq(kn_mesh_load(&x->s, &x->m, &err), KN_OK, "%s", err.msg);
  cr_assert(!x->m.convex && x->m.hull.nf > 0, "%s: not convex, with hull faces", name);
}
static void setup(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/knead_hull_apart_XXXXXX");
  cr_assert_not_null(mkdtemp(g_dir));
  load(&g_torus, "torus.obj"), load(&g_dented, "dented.obj");
}
static void teardown(void) {
  kn_mesh_free(&g_torus.m), kn_mesh_free(&g_dented.m);
  unlink(g_torus.path), unlink(g_dented.path), rmdir(g_dir);
}

static double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static double radius(const kn_shape* s, const kn_mesh_data* m) {
  if (s->type == KN_SHAPE_BOX) return 0.5 * sqrt(dot(s->size, s->size));
  return m->sphere_r + sqrt(dot(m->sphere_c, m->sphere_c));
}
/* the smallest exact distance of a shape's vertices (a mesh's, or a box's corners) to the other shape */
static double vertex_gap(const kn_shape* s, const kn_mesh_data* m, const kn_pose* X, const kn_shape* o,
                         const kn_mesh_data* mo, const kn_pose* XO) {
  double g = INFINITY, grad[3];
  int n = s->type == KN_SHAPE_BOX ? 8 : m->nv;
  for (int i = 0; i < n; ++i) {
    double xl[3], xw[3], d[3], yl[3];
    if (s->type == KN_SHAPE_BOX)
      for (int k = 0; k < 3; ++k) xl[k] = ((i >> k) & 1 ? 0.5 : -0.5) * s->size[k];
    else memcpy(xl, &m->v[3 * i], sizeof xl);
    kn_pose_apply(X, xl, xw);
    for (int k = 0; k < 3; ++k) d[k] = xw[k] - XO->p[k];
    kn_mat3_tvec(XO->R, d, yl);
    g = fmin(g, kn_shape_signed_distance_local(o, mo, yl, grad));
  }
  return g;
}

static void pairs(const kn_shape* sa, const kn_mesh_data* ma, const kn_shape* sb, const kn_mesh_data* mb,
                  const char* what) {
  double sc = radius(sa, ma) + radius(sb, mb);
  kn_point_buf patch = {0}, probes = {0}, culled = {0};
  int apart = 0, near = 0;
  for (int t = 0; t < 300; ++t) {
    kn_pose XA, XB;
    random_pose(0, &XA), random_pose(0, &XB);
    double d[3] = {2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1}, l = sqrt(dot(d, d)), s = 0.6 + 0.6 * urand();
    for (int k = 0; k < 3; ++k) XB.p[k] = s * sc * d[k] / l;
    double margin = 0.05 * urand();
    kn_nshape A = {sa, ma, &XA, kn_contact_material_default(0.01)}, B = {sb, mb, &XB, kn_contact_material_default(0.01)};
    patch.count = probes.count = culled.count = 0;
    cr_assert_eq(kn_narrow_pair(&A, &B, 0, 1, margin, &patch), KN_OK);
    cr_assert_eq(kn_narrow_pair_exhaustive(&A, &B, 0, 1, margin, &probes), KN_OK);
    cr_assert_eq(kn_narrow_pair_probes(&A, &B, 0, 1, margin, &culled), KN_OK);
    int same = patch.count == culled.count && memcmp(patch.p, culled.p, (size_t)patch.count * sizeof *patch.p) == 0;
    if (same) { /* the probe path: the pair is near (or no patch could be formed) */
      ++near;
      continue;
    }
    ++apart;
    double lo = INFINITY, plo = INFINITY;
    for (int i = 0; i < patch.count; ++i) lo = fmin(lo, patch.p[i].phi);
    for (int i = 0; i < probes.count; ++i) plo = fmin(plo, probes.p[i].phi);
    cr_assert_leq(patch.count, 4, "%s, pose %d", what, t);
    if (probes.count > 0) cr_assert_gt(patch.count, 0, "%s, pose %d: no point, probes at %g", what, t, plo);
    if (patch.count == 0) continue;
    cr_assert_gt(lo, KN_HULL_APART, "%s, pose %d: gap %g", what, t, lo);
    cr_assert_leq(lo, plo + 1e-9 * sc, "%s, pose %d: patch gap %.17g, probes %.17g", what, t, lo, plo);
    double vg = fmin(vertex_gap(sa, ma, &XA, sb, mb, &XB), vertex_gap(sb, mb, &XB, sa, ma, &XA));
    cr_assert_leq(lo, vg + 1e-9 * sc, "%s, pose %d: patch gap %.17g, vertices %.17g", what, t, lo, vg);
  }
  cr_log_info("%s: %d pairs on the hulls' patch, %d on the probes", what, apart, near);
  cr_expect_gt(apart, 50, "%s: %d pairs on the hulls' patch", what, apart);
  kn_point_buf_free(&patch), kn_point_buf_free(&probes), kn_point_buf_free(&culled);
}

Test(hull_apart, speculative_contacts_of_the_hulls_are_conservative, .init = setup, .fini = teardown) {
  g_rng = 0xC0FFEEull;
  pairs(&g_torus.s, &g_torus.m, &g_dented.s, &g_dented.m, "torus-dented");
  pairs(&g_dented.s, &g_dented.m, &g_dented.s, &g_dented.m, "dented-dented");
  pairs(&g_box, NULL, &g_torus.s, &g_torus.m, "box-torus");
}
