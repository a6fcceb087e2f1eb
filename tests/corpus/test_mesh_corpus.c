/* The mesh paths of issue 24 on real collision meshes: bullet3's KUKA iiwa links
 * (kuka_iiwa/meshes/link_0..7.stl, 584-1 512 welded vertices, none convex). For every link:
 * - hill climbing on its hull gives the maximum of d . v over every vertex, exactly, on 2 000 random
 *   directions from random start vertices (libccd's support and the support-plane cull use it);
 * - the BVH signed-distance search equals a scan over every triangle to 1e-12 relative, and the
 *   bounded search returns its bits whenever it reports a triangle.
 * For pairs of links at random poses: the culled probe path (kn_narrow_pair_probes) gives the exhaustive
 * one's points (kn_narrow_pair_exhaustive) bit for bit at margins 0, 5 mm and 30 mm. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "contact/collision_internal.h"
#include "../support/mesh_poses.h"

#define NLINK 8
static char g_path[NLINK][512];
static kn_shape g_s[NLINK];
static kn_mesh_data g_m[NLINK];

static void setup(void) {
  g_rng = 1234567ull;
  for (int i = 0; i < NLINK; ++i) {
    snprintf(g_path[i], sizeof g_path[i], "%s/bullet3/data/kuka_iiwa/meshes/link_%d.stl", KNEAD_SHARED_MODELS, i);
    g_s[i] = (kn_shape){.type = KN_SHAPE_MESH, .mesh_uri = g_path[i], .mesh_path = g_path[i], .scale = {1, 1, 1}};
    kn_error err = {0};
    cr_assert_eq(kn_mesh_load(&g_s[i], &g_m[i], &err), KN_OK, "%s", err.msg);
  }
}
static void teardown(void) {
  for (int i = 0; i < NLINK; ++i) kn_mesh_free(&g_m[i]);
}

static double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

Test(mesh_corpus, hull_climb_equals_scan, .init = setup, .fini = teardown) {
  for (int i = 0; i < NLINK; ++i) {
    const kn_mesh_data* m = &g_m[i];
    cr_assert_gt(m->hull.nv, 3, "link %d has a hull", i);
    for (int t = 0; t < 2000; ++t) {
      double d[3] = {2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1};
      double best = -INFINITY;
      for (int j = 0; j < m->nv; ++j) best = fmax(best, dot(d, &m->v[3 * j]));
      int v = kn_hull_support(&m->hull, d, (int)(urand() * m->hull.nv));
      cr_assert_eq(dot(d, &m->hull.v[3 * v]), best, "link %d, direction %d", i, t);
      cr_assert_eq(kn_shape_support_height_local(&g_s[i], m, d), best, "link %d, direction %d", i, t);
    }
  }
}

/* squared distance from p to triangle abc: the minimum over the face's interior projection and
 * the three edges, written independently of contact/mesh.c */
static double seg_dist2(const double p[3], const double a[3], const double b[3]) {
  double ab[3], ap[3];
  for (int k = 0; k < 3; ++k) ab[k] = b[k] - a[k], ap[k] = p[k] - a[k];
  double t = fmin(1, fmax(0, dot(ap, ab) / dot(ab, ab))), d[3];
  for (int k = 0; k < 3; ++k) d[k] = ap[k] - t * ab[k];
  return dot(d, d);
}
static double tri_dist2(const double p[3], const double a[3], const double b[3], const double c[3]) {
  double ab[3], ac[3], n[3], ap[3];
  for (int k = 0; k < 3; ++k) ab[k] = b[k] - a[k], ac[k] = c[k] - a[k], ap[k] = p[k] - a[k];
  n[0] = ab[1] * ac[2] - ab[2] * ac[1], n[1] = ab[2] * ac[0] - ab[0] * ac[2], n[2] = ab[0] * ac[1] - ab[1] * ac[0];
  double nn = dot(n, n), best = fmin(seg_dist2(p, a, b), fmin(seg_dist2(p, b, c), seg_dist2(p, c, a)));
  if (nn > 0) {
    /* barycentric coordinates of p's projection */
    double s = dot(n, ap) / nn, q[3], inside = 1;
    for (int k = 0; k < 3; ++k) q[k] = p[k] - s * n[k];
    const double* v[3] = {a, b, c};
    for (int j = 0; j < 3; ++j) {
      double x[3], y[3], cr[3];
      for (int k = 0; k < 3; ++k) x[k] = v[(j + 1) % 3][k] - v[j][k], y[k] = q[k] - v[j][k];
      cr[0] = x[1] * y[2] - x[2] * y[1], cr[1] = x[2] * y[0] - x[0] * y[2], cr[2] = x[0] * y[1] - x[1] * y[0];
      if (dot(cr, n) < 0) inside = 0;
    }
    if (inside) best = fmin(best, s * s * nn);
  }
  return best;
}

Test(mesh_corpus, signed_distance_equals_scan, .init = setup, .fini = teardown) {
  for (int i = 0; i < NLINK; ++i) {
    const kn_mesh_data* m = &g_m[i];
    double ext = 0;
    for (int k = 0; k < 3; ++k) ext = fmax(ext, m->hi[k] - m->lo[k]);
    for (int t = 0; t < 300; ++t) {
      double x[3], g[3], gb[3];
      const double* v = &m->v[3 * (int)(urand() * m->nv)];
      double r = t % 2 ? 0.01 : 0.2;
      for (int k = 0; k < 3; ++k) x[k] = v[k] + r * ext * (2 * urand() - 1);
      double best = INFINITY;
      for (int j = 0; j < m->nt; ++j) {
        const int* T = &m->tri[3 * j];
        best = fmin(best, tri_dist2(x, &m->v[3 * T[0]], &m->v[3 * T[1]], &m->v[3 * T[2]]));
      }
      best = sqrt(best);
      double d = kn_mesh_signed_distance(m, x, g);
      cr_assert(fabs(fabs(d) - best) <= 1e-12 * (best + ext), "link %d, point %d: search %.17g, scan %.17g", i, t, d,
                best);
      int near;
      double db = kn_mesh_signed_distance_bounded(m, x, 0.02, gb, &near);
      if (near) cr_assert(memcmp(&db, &d, sizeof d) == 0 && memcmp(gb, g, sizeof g) == 0, "link %d, point %d", i, t);
      else cr_assert_geq(fabs(d), 0.02 * (1 - 1e-12), "link %d, point %d", i, t);
    }
  }
}

/* the exhaustive reference measures every vertex, also far outside the other link, where the
 * pseudo-normal sign of these STL meshes can be wrong (link_0: a vertex 3 cm outside its bounding
 * box measured 7.7 cm "inside"); the culled path never measures such a vertex. So a point only the
 * exhaustive path has must come from such a probe: a vertex of one link on the point's normal line
 * that lies outside the other link's bounding sphere or bounding box, grown by the margin (link_0
 * against link_7: a vertex outside link_7's box measured 9 mm "inside"). */
static int bogus_probe(const kn_contact_point* c, const kn_nshape* S[2], double margin) {
  for (int s = 0; s < 2; ++s) {
    const kn_mesh_data *P = S[s]->mesh, *F = S[1 - s]->mesh;
    double cw[3];
    kn_pose_apply(S[1 - s]->X, F->sphere_c, cw);
    for (int i = 0; i < P->nv; ++i) {
      double x[3], d[3];
      kn_pose_apply(S[s]->X, &P->v[3 * i], x);
      for (int k = 0; k < 3; ++k) d[k] = x[k] - c->p[k];
      double t = dot(d, c->n), off[3];
      for (int k = 0; k < 3; ++k) off[k] = d[k] - t * c->n[k];
      if (dot(off, off) > 1e-18) continue; /* not on the point's normal line */
      for (int k = 0; k < 3; ++k) d[k] = x[k] - cw[k];
      if (sqrt(dot(d, d)) > F->sphere_r + margin) return 1;
      double xl[3], box2 = 0;
      for (int k = 0; k < 3; ++k) d[k] = x[k] - S[1 - s]->X->p[k];
      kn_mat3_tvec(S[1 - s]->X->R, d, xl);
      for (int k = 0; k < 3; ++k) {
        double e = fmax(0, fmax(F->lo[k] - xl[k], xl[k] - F->hi[k]));
        box2 += e * e;
      }
      if (sqrt(box2) > margin) return 1;
    }
  }
  return 0;
}

Test(mesh_corpus, link_pairs_culled_equal_exhaustive, .init = setup, .fini = teardown) {
  const double margins[3] = {0, 0.005, 0.03};
  kn_point_buf culled = {0}, exhaustive = {0};
  int with_contacts = 0, cases = 0, bogus = 0;
  for (int i = 0; i < NLINK; ++i)
    for (int j = i + 1; j < NLINK; j += 3)
      for (int t = 0; t < 6; ++t) {
        kn_pose XA, XB;
        random_pose(0.06, &XA), random_pose(0.06, &XB);
        kn_nshape A = {&g_s[i], &g_m[i], &XA, kn_contact_material_default(0.01)};
        kn_nshape B = {&g_s[j], &g_m[j], &XB, kn_contact_material_default(0.01)};
        const kn_nshape* S[2] = {&A, &B};
        for (int k = 0; k < 3; ++k, ++cases) {
          culled.count = exhaustive.count = 0;
          cr_assert_eq(kn_narrow_pair_probes(&A, &B, 0, 1, margins[k], &culled), KN_OK);
          cr_assert_eq(kn_narrow_pair_exhaustive(&A, &B, 0, 1, margins[k], &exhaustive), KN_OK);
          /* the culled points are the exhaustive ones, bit for bit and in order, but for bogus probes */
          int p = 0;
          for (int q = 0; q < exhaustive.count; ++q) {
            const kn_contact_point *a = &culled.p[p], *b = &exhaustive.p[q];
            if (p < culled.count && memcmp(a->p, b->p, sizeof a->p) == 0 && memcmp(a->n, b->n, sizeof a->n) == 0 &&
                memcmp(&a->phi, &b->phi, sizeof(double)) == 0) {
              ++p;
              continue;
            }
            cr_assert(bogus_probe(b, S, margins[k]), "links %d-%d, pose %d, margin %g: exhaustive point %d (phi %g) missing",
                      i, j, t, margins[k], q, b->phi);
            ++bogus;
          }
          cr_assert_eq(p, culled.count, "links %d-%d, pose %d, margin %g: culled points not in the exhaustive set", i, j,
                       t, margins[k]);
          with_contacts += culled.count > 0;
        }
      }
  kn_point_buf_free(&culled), kn_point_buf_free(&exhaustive);
  cr_log_info("%d bogus exhaustive points", bogus);
  cr_expect_gt(with_contacts, cases / 2, "%d of %d cases with contacts", with_contacts, cases);
}
