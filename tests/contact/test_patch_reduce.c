/* Contact patch reduction (contact/patch_reduce.c): a patch of N points reduces to at most
 * KN_PATCH_MAX per normal cluster, keeps the deepest point, keeps a support polygon (the 2-D hull
 * of the kept points' tangent-plane projections contains the centroid of the original points and
 * every corner of a rectangular patch), keeps points of a second normal cluster apart, and gives
 * the same points in the same order for the same input. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/collision_internal.h"

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
/* xorshift64 => uniform in [0, 1) */
static double urand(void) {
  g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
  return (double)(g_rng >> 11) * 0x1.0p-53;
}

/* (unit normal n) => R_WC with columns t1, t2, n (t1 from the world axis least aligned with n) */
static void frame(const double n[3], double R[9]) {
  int m = 0;
  for (int k = 1; k < 3; ++k)
    if (fabs(n[k]) < fabs(n[m])) m = k;
  double e[3] = {0, 0, 0}, t1[3], t2[3];
  e[m] = 1;
  double en = e[0] * n[0] + e[1] * n[1] + e[2] * n[2];
  for (int k = 0; k < 3; ++k) t1[k] = e[k] - en * n[k];
  double l = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
  for (int k = 0; k < 3; ++k) t1[k] /= l;
  t2[0] = n[1] * t1[2] - n[2] * t1[1], t2[1] = n[2] * t1[0] - n[0] * t1[2], t2[2] = n[0] * t1[1] - n[1] * t1[0];
  for (int i = 0; i < 3; ++i) R[3 * i] = t1[i], R[3 * i + 1] = t2[i], R[3 * i + 2] = n[i];
}

/* (buffer, point x, normal n, phi) => appended */
static void add(kn_point_buf* b, const double x[3], const double n[3], double phi) {
  if (b->count == b->capacity) {
    b->capacity = b->capacity ? 2 * b->capacity : 64;
    b->p = realloc(b->p, (size_t)b->capacity * sizeof *b->p);
    cr_assert_not_null(b->p);
  }
  kn_contact_point* c = &b->p[b->count++];
  memset(c, 0, sizeof *c);
  memcpy(c->p, x, sizeof c->p);
  memcpy(c->n, n, sizeof c->n);
  frame(n, c->R_WC);
  c->phi = phi;
  c->a = 0, c->b = 1;
}

/* (2-D points q[0..m) in any order, point c) => 1 when c lies in their convex hull (to 1e-12) */
static int hull_contains(double (*q)[2], int m, const double c[2]) {
  /* c is outside iff some line through two of the points has every point on one side and c
   * strictly on the other */
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) {
      if (i == j) continue;
      double ex = q[j][0] - q[i][0], ey = q[j][1] - q[i][1];
      double sc = ex * (c[1] - q[i][1]) - ey * (c[0] - q[i][0]);
      int all_left = 1;
      for (int k = 0; k < m; ++k)
        if (ex * (q[k][1] - q[i][1]) - ey * (q[k][0] - q[i][0]) < -1e-12) all_left = 0;
      if (all_left && sc < -1e-12) return 0;
    }
  return m > 0;
}

/* N random points on the z = 0 plane in a 0.2 x 0.1 rectangle with its 4 corners, normal +z,
 * phi in [-1e-3, 1e-3]: reduced to <= KN_PATCH_MAX points, the deepest among them, the corners
 * among them, the original centroid inside the kept points' hull */
Test(patch_reduce, plane_patch_keeps_deepest_and_support_polygon) {
  const double nz[3] = {0, 0, 1};
  for (int trial = 0; trial < 20; ++trial) {
    kn_point_buf b = {0};
    b.grid_start = -1;
    double x[3] = {0.3, -0.2, 0.1}; /* one unrelated point of an earlier pair stays put */
    add(&b, x, nz, 0.5);
    int start = b.count, n = 30 + 40 * trial;
    double centroid[2] = {0, 0}, deepest = INFINITY;
    for (int i = 0; i < n; ++i) {
      double p[3] = {0.2 * urand() - 0.1, 0.1 * urand() - 0.05, 0};
      if (i < 4) p[0] = i & 1 ? 0.1 : -0.1, p[1] = i & 2 ? 0.05 : -0.05;
      double phi = 2e-3 * urand() - 1e-3;
      add(&b, p, nz, phi);
      centroid[0] += p[0] / n, centroid[1] += p[1] / n;
      deepest = fmin(deepest, phi);
    }
    cr_assert_eq(kn_patch_reduce(&b, start), KN_OK);
    int m = b.count - start;
    cr_expect_leq(m, KN_PATCH_MAX, "trial %d: %d points kept", trial, m);
    cr_expect_geq(m, 4);
    cr_expect_eq(b.p[0].phi, 0.5, "the earlier pair's point untouched");
    double q[KN_PATCH_MAX][2], kept_min = INFINITY;
    int corners = 0;
    for (int i = 0; i < m && i < KN_PATCH_MAX; ++i) {
      const kn_contact_point* c = &b.p[start + i];
      q[i][0] = c->p[0], q[i][1] = c->p[1];
      kept_min = fmin(kept_min, c->phi);
      corners += fabs(fabs(c->p[0]) - 0.1) < 1e-15 && fabs(fabs(c->p[1]) - 0.05) < 1e-15;
    }
    cr_expect_eq(kept_min, deepest, "trial %d: deepest phi %.17g kept? (min kept %.17g)", trial, deepest, kept_min);
    cr_expect_eq(corners, 4, "trial %d: %d of the 4 corners kept", trial, corners);
    cr_expect(hull_contains(q, m, centroid), "trial %d: centroid outside the kept support polygon", trial);
    kn_point_buf_free(&b);
  }
}

/* the same random input reduced twice (separate buffers): identical points, identical order */
Test(patch_reduce, deterministic) {
  kn_point_buf b1 = {0}, b2 = {0};
  b1.grid_start = b2.grid_start = -1;
  for (int i = 0; i < 500; ++i) {
    double p[3] = {urand(), urand(), 0.01 * urand()}, n[3] = {0.3 * urand(), 0.3 * urand(), 1};
    double l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int k = 0; k < 3; ++k) n[k] /= l;
    double phi = urand() - 0.5;
    add(&b1, p, n, phi), add(&b2, p, n, phi);
  }
  cr_assert_eq(kn_patch_reduce(&b1, 0), KN_OK);
  cr_assert_eq(kn_patch_reduce(&b2, 0), KN_OK);
  cr_assert_eq(b1.count, b2.count);
  cr_expect_lt(b1.count, 500);
  cr_expect_eq(memcmp(b1.p, b2.p, (size_t)b1.count * sizeof *b1.p), 0, "same points, same order");
  kn_point_buf_free(&b1), kn_point_buf_free(&b2);
}

/* two patches with normals 60 degrees apart (a link on a floor and against a wall): each keeps
 * its own deepest point and at least 3 points; at most KN_PATCH_MAX each */
Test(patch_reduce, distinct_normals_reduce_separately) {
  kn_point_buf b = {0};
  b.grid_start = -1;
  const double n1[3] = {0, 0, 1}, n2[3] = {0.86602540378443865, 0, 0.5};
  double deep1 = INFINITY, deep2 = INFINITY;
  for (int i = 0; i < 200; ++i) {
    int second = i & 1;
    double p[3] = {urand(), urand(), second ? 0.5 : 0}, phi = 1e-3 * urand();
    add(&b, p, second ? n2 : n1, phi);
    if (second) deep2 = fmin(deep2, phi);
    else deep1 = fmin(deep1, phi);
  }
  cr_assert_eq(kn_patch_reduce(&b, 0), KN_OK);
  int c1 = 0, c2 = 0, has1 = 0, has2 = 0;
  for (int i = 0; i < b.count; ++i) {
    int second = b.p[i].n[0] > 0.5;
    if (second) c2++, has2 |= b.p[i].phi == deep2;
    else c1++, has1 |= b.p[i].phi == deep1;
  }
  cr_expect(c1 >= 3 && c1 <= KN_PATCH_MAX, "first patch %d points", c1);
  cr_expect(c2 >= 3 && c2 <= KN_PATCH_MAX, "second patch %d points", c2);
  cr_expect(has1 && has2, "deepest of each patch kept (%d, %d)", has1, has2);
  kn_point_buf_free(&b);
}

/* at most KN_PATCH_MAX points: untouched */
Test(patch_reduce, small_patch_untouched) {
  kn_point_buf b = {0};
  b.grid_start = -1;
  const double nz[3] = {0, 0, 1};
  for (int i = 0; i < KN_PATCH_MAX; ++i) {
    double p[3] = {urand(), urand(), 0};
    add(&b, p, nz, urand());
  }
  kn_contact_point copy[KN_PATCH_MAX];
  memcpy(copy, b.p, sizeof copy);
  cr_assert_eq(kn_patch_reduce(&b, 0), KN_OK);
  cr_expect_eq(b.count, KN_PATCH_MAX);
  cr_expect_eq(memcmp(copy, b.p, sizeof copy), 0);
  kn_point_buf_free(&b);
}
