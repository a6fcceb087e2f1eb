/* The mesh searches of issue 24 against brute force, on a torus and a dented sphere (and, when
 * ../shared/models is next to the checkout, bullet3's KUKA iiwa STL links):
 * - kn_mesh_signed_distance (BVH search with each triangle's box as a pretest) finds the distance
 *   of a scan over every triangle (Ericson's closest point, written again here) to 1e-12 relative,
 *   and the bounded search returns the unbounded search's bits whenever it reports a triangle;
 * - kn_shape_support_height_local (a mesh: hill climbing on its hull) equals the maximum over every
 *   vertex exactly, and a primitive's is an upper bound reached by a dense sample of its surface;
 * - the support-plane cull (kn_probe_slab) rejects only probes that are farther than the distance;
 * - the culled narrow phase still gives the exhaustive one's points bit for bit on pairs of
 *   primitives (tests/contact/test_probe_culling.c does the pairs with a mesh). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contact/collision_internal.h"
#include "../support/mesh_poses.h"

static char g_dir[256];
static kn_shape g_torus, g_bumpy;
static kn_mesh_data g_mt, g_mb;

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

static void setup(void) {
  g_rng = 2463534242ull;
  snprintf(g_dir, sizeof g_dir, "/tmp/knead_mesh_search_XXXXXX");
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

static double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* squared distance from p to triangle abc (Ericson, Real-Time Collision Detection §5.1.5) */
static double tri_dist2(const double p[3], const double a[3], const double b[3], const double c[3]) {
  double ab[3], ac[3], ap[3], bp[3], cp[3], q[3];
  for (int k = 0; k < 3; ++k) ab[k] = b[k] - a[k], ac[k] = c[k] - a[k], ap[k] = p[k] - a[k];
  double d1 = dot(ab, ap), d2 = dot(ac, ap);
  for (int k = 0; k < 3; ++k) bp[k] = p[k] - b[k], cp[k] = p[k] - c[k];
  double d3 = dot(ab, bp), d4 = dot(ac, bp), d5 = dot(ab, cp), d6 = dot(ac, cp);
  double vc = d1 * d4 - d3 * d2, vb = d5 * d2 - d1 * d6, va = d3 * d6 - d5 * d4;
  if (d1 <= 0 && d2 <= 0) memcpy(q, a, sizeof q);
  else if (d3 >= 0 && d4 <= d3) memcpy(q, b, sizeof q);
  else if (vc <= 0 && d1 >= 0 && d3 <= 0)
    for (int k = 0; k < 3; ++k) q[k] = a[k] + d1 / (d1 - d3) * ab[k];
  else if (d6 >= 0 && d5 <= d6) memcpy(q, c, sizeof q);
  else if (vb <= 0 && d2 >= 0 && d6 <= 0)
    for (int k = 0; k < 3; ++k) q[k] = a[k] + d2 / (d2 - d6) * ac[k];
  else if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0)
    for (int k = 0; k < 3; ++k) q[k] = b[k] + (d4 - d3) / ((d4 - d3) + (d5 - d6)) * (c[k] - b[k]);
  else {
    double den = 1 / (va + vb + vc);
    for (int k = 0; k < 3; ++k) q[k] = a[k] + ab[k] * vb * den + ac[k] * vc * den;
  }
  double d[3] = {p[0] - q[0], p[1] - q[1], p[2] - q[2]};
  return dot(d, d);
}

/* (mesh, points around it) => the BVH search's |distance| equals the scan's; the bounded search
 * agrees bit for bit whenever it reports a triangle, and reports none only beyond its bound */
static void distance_equals_scan(const kn_mesh_data* m, int trials, const char* what) {
  double ext = 0;
  for (int k = 0; k < 3; ++k) ext = fmax(ext, m->hi[k] - m->lo[k]);
  int near_count = 0;
  for (int t = 0; t < trials; ++t) {
    double x[3], g[3], gb[3];
    /* half the points near a vertex (the resting-contact case), half anywhere in a grown box */
    if (t % 2) {
      const double* v = &m->v[3 * (int)(urand() * m->nv)];
      for (int k = 0; k < 3; ++k) x[k] = v[k] + 0.02 * ext * (2 * urand() - 1);
    } else {
      for (int k = 0; k < 3; ++k) x[k] = m->lo[k] - 0.3 * ext + 1.6 * ext * urand();
    }
    double best = INFINITY;
    for (int i = 0; i < m->nt; ++i) {
      const int* T = &m->tri[3 * i];
      best = fmin(best, tri_dist2(x, &m->v[3 * T[0]], &m->v[3 * T[1]], &m->v[3 * T[2]]));
    }
    best = sqrt(best);
    double d = kn_mesh_signed_distance(m, x, g);
    cr_assert(fabs(fabs(d) - best) <= 1e-12 * (best + ext), "%s, point %d: search %.17g, scan %.17g", what, t, d,
              best);
    double bound = 0.05 * ext * (1 + (t % 7));
    int near;
    double db = kn_mesh_signed_distance_bounded(m, x, bound, gb, &near);
    if (near) {
      ++near_count;
      cr_assert(memcmp(&db, &d, sizeof d) == 0 && memcmp(gb, g, sizeof g) == 0,
                "%s, point %d: bounded %.17g, unbounded %.17g", what, t, db, d);
    } else {
      cr_assert(fabs(d) >= bound * (1 - 1e-12), "%s, point %d: no triangle within %g, distance %g", what, t, bound, d);
    }
  }
  cr_expect_gt(near_count, trials / 4, "%s: %d of %d bounded searches found a triangle", what, near_count, trials);
}

Test(mesh_search, signed_distance_equals_scan, .init = setup, .fini = teardown) {
  distance_equals_scan(&g_mt, 3000, "torus");
  distance_equals_scan(&g_mb, 3000, "bumpy");
}

/* the support height of a mesh: hill climbing on its hull = max over all vertices, exactly */
static void mesh_height_equals_scan(const kn_shape* s, const kn_mesh_data* m, const char* what) {
  for (int t = 0; t < 2000; ++t) {
    double d[3] = {2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1};
    double best = -INFINITY;
    for (int i = 0; i < m->nv; ++i) best = fmax(best, dot(d, &m->v[3 * i]));
    double h = kn_shape_support_height_local(s, m, d);
    cr_assert_eq(h, best, "%s, direction %d: climb %.17g, scan %.17g", what, t, h, best);
  }
}

Test(mesh_search, mesh_support_height_equals_scan, .init = setup, .fini = teardown) {
  mesh_height_equals_scan(&g_torus, &g_mt, "torus");
  mesh_height_equals_scan(&g_bumpy, &g_mb, "bumpy");
}

/* a point of the primitive's surface from (u, v, w) in [0, 1)^3: a dense family covering it */
static void primitive_point(const kn_shape* s, double u, double v, double w, double x[3]) {
  const double pi = 3.14159265358979323846;
  const double* sz = s->size;
  double th = 2 * pi * u, ph = pi * v;
  switch (s->type) {
    case KN_SHAPE_SPHERE:
      x[0] = sz[0] * sin(ph) * cos(th), x[1] = sz[0] * sin(ph) * sin(th), x[2] = sz[0] * cos(ph);
      break;
    case KN_SHAPE_BOX: /* a corner, or a point of an edge */
      for (int k = 0; k < 3; ++k) x[k] = ((int)(8 * u) >> k & 1 ? 0.5 : -0.5) * sz[k];
      x[(int)(3 * w)] *= 2 * v - 1;
      break;
    case KN_SHAPE_CYLINDER:
      x[0] = sz[0] * cos(th), x[1] = sz[0] * sin(th), x[2] = (w < 0.5 ? -0.5 : 0.5) * sz[1];
      break;
    case KN_SHAPE_CAPSULE:
      x[0] = sz[0] * sin(ph) * cos(th), x[1] = sz[0] * sin(ph) * sin(th);
      x[2] = sz[0] * cos(ph) + (w < 0.5 ? -0.5 : 0.5) * sz[1];
      break;
    default: cr_assert_fail("not a primitive");
  }
}

Test(mesh_search, primitive_support_height_bounds_samples) {
  g_rng = 99991ull;
  const kn_shape prims[4] = {{.type = KN_SHAPE_SPHERE, .size = {0.04}},
                             {.type = KN_SHAPE_BOX, .size = {0.1, 0.06, 0.04}},
                             {.type = KN_SHAPE_CYLINDER, .size = {0.03, 0.1}},
                             {.type = KN_SHAPE_CAPSULE, .size = {0.02, 0.08}}};
  for (int i = 0; i < 4; ++i)
    for (int t = 0; t < 200; ++t) {
      double d[3] = {2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1};
      double h = kn_shape_support_height_local(&prims[i], NULL, d), best = -INFINITY;
      for (int j = 0; j < 20000; ++j) {
        double x[3];
        primitive_point(&prims[i], urand(), urand(), urand(), x);
        double s = dot(d, x);
        cr_assert_leq(s, h + 1e-15, "shape %d, direction %d: a surface point at %.17g above %.17g", i, t, s, h);
        best = fmax(best, s);
      }
      cr_assert_geq(best, h - 2e-4 * sqrt(dot(d, d)), "shape %d, direction %d: samples reach %.17g of %.17g", i,
                    t, best, h);
    }
}

/* the support-plane cull never rejects a probe within the distance of F (the exact distance) */
Test(mesh_search, support_plane_cull_is_conservative, .init = setup, .fini = teardown) {
  int culled = 0, kept = 0;
  for (int t = 0; t < 400; ++t) {
    kn_pose XF, XP;
    random_pose(0.1, &XF), random_pose(0.1, &XP);
    kn_nshape F = {&g_torus, &g_mt, &XF, kn_contact_material_default(0.01)};
    kn_nshape P = {&g_bumpy, &g_mb, &XP, kn_contact_material_default(0.01)};
    double dir[3] = {2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1}, l = sqrt(dot(dir, dir));
    for (int k = 0; k < 3; ++k) dir[k] /= l;
    double distance = 0.03 * urand();
    kn_probe_slab slab;
    kn_probe_slab_init(&F, &P, dir, distance, &slab);
    for (int i = 0; i < g_mb.nv; ++i) {
      if (!kn_probe_slab_cull(&slab, &g_mb.v[3 * i], 0)) {
        ++kept;
        continue;
      }
      ++culled;
      double xw[3], xl[3], g[3], dd[3];
      kn_pose_apply(&XP, &g_mb.v[3 * i], xw);
      for (int k = 0; k < 3; ++k) dd[k] = xw[k] - XF.p[k];
      kn_mat3_tvec(XF.R, dd, xl);
      double sd = kn_mesh_signed_distance(&g_mt, xl, g);
      cr_assert_gt(sd, distance, "pose %d, vertex %d culled at distance %.17g (bound %g)", t, i, sd, distance);
    }
  }
  cr_expect_gt(culled, 1000, "culled %d, kept %d", culled, kept);
  cr_expect_gt(kept, 1000, "culled %d, kept %d", culled, kept);
}

static void same_points(const kn_point_buf* a, const kn_point_buf* b, const char* what, int trial) {
  cr_assert_eq(a->count, b->count, "%s, trial %d: %d culled points, %d exhaustive", what, trial, a->count, b->count);
  for (int i = 0; i < a->count; ++i) {
    const kn_contact_point *p = &a->p[i], *q = &b->p[i];
    cr_assert(memcmp(p->p, q->p, sizeof p->p) == 0 && memcmp(p->n, q->n, sizeof p->n) == 0 &&
                  memcmp(&p->phi, &q->phi, sizeof p->phi) == 0,
              "%s, trial %d, point %d: phi %.17g vs %.17g", what, trial, i, p->phi, q->phi);
  }
}

Test(mesh_search, primitive_pairs_culled_equal_exhaustive) {
  g_rng = 7777ull;
  const kn_shape prims[4] = {{.type = KN_SHAPE_SPHERE, .size = {0.04}},
                             {.type = KN_SHAPE_BOX, .size = {0.1, 0.06, 0.04}},
                             {.type = KN_SHAPE_CYLINDER, .size = {0.03, 0.1}},
                             {.type = KN_SHAPE_CAPSULE, .size = {0.02, 0.08}}};
  const double margins[3] = {0, 0.005, 0.03};
  kn_point_buf culled = {0}, exhaustive = {0};
  int with_contacts = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int t = 0; t < 100; ++t) {
        kn_pose XA, XB;
        random_pose(0.05, &XA), random_pose(0.05, &XB);
        kn_nshape A = {&prims[i], NULL, &XA, kn_contact_material_default(0.01)};
        kn_nshape B = {&prims[j], NULL, &XB, kn_contact_material_default(0.01)};
        for (int k = 0; k < 3; ++k) {
          culled.count = exhaustive.count = 0;
          cr_assert_eq(kn_narrow_pair_probes(&A, &B, 0, 1, margins[k], &culled), KN_OK);
          cr_assert_eq(kn_narrow_pair_exhaustive(&A, &B, 0, 1, margins[k], &exhaustive), KN_OK);
          char what[32];
          snprintf(what, sizeof what, "shapes %d-%d", i, j);
          same_points(&culled, &exhaustive, what, t);
          with_contacts += culled.count > 0;
        }
      }
  kn_point_buf_free(&culled), kn_point_buf_free(&exhaustive);
  cr_expect_gt(with_contacts, 1500, "%d of 4800 cases with contacts", with_contacts);
}
