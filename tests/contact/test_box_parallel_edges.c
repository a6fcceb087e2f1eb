/* Separated boxes whose nearest features are two parallel edges (contact/narrow.c, box_box's
 * parallel_edge_axis): phi is the true distance, the normal the line-to-line direction, two points
 * at the ends of the edges' common span. Expected values in closed form, and the distance checked
 * against a brute-force one (every edge pair and every corner against the other box). */
#include <criterion/criterion.h>
#include <math.h>

#include "contact/contact.h"

#define PI 3.14159265358979323846

typedef struct {
  kn_shape s[2];
  kn_collider c[2];
  kn_pose X[2];
  kn_collision_scene* cs;
} pair;

static void make(pair* P, const double sa[3], const double sb[3]) {
  for (int i = 0; i < 2; ++i) {
    const double* sz = i ? sb : sa;
    P->s[i] = (kn_shape){.type = KN_SHAPE_BOX, .size = {sz[0], sz[1], sz[2]}};
    P->c[i] = (kn_collider){.clique = i, .body = 0, .shape = &P->s[i], .material = kn_contact_material_default(0.01),
                            .group = 0xffffffffu, .mask = 0xffffffffu};
    kn_pose_identity(&P->c[i].X_bg);
    kn_pose_identity(&P->X[i]);
  }
}
static int detect(pair* P, double margin, const kn_contact_point** p) {
  kn_error err = {0};
  int n;
  cr_assert_eq(kn_collision_scene_create(P->c, 2, &P->cs, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_collision_detect(P->cs, P->X, margin, p, &n, &err), KN_OK, "%s", err.msg);
  return n;
}

static double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void corner(const pair* P, int b, int i, double x[3]) {
  double xl[3];
  for (int k = 0; k < 3; ++k) xl[k] = ((i >> k) & 1 ? 0.5 : -0.5) * P->s[b].size[k];
  kn_pose_apply(&P->X[b], xl, x);
}
/* distance of segments p0p1, q0q1: minimum over a fine grid on one, the closed form on the other */
static double seg_seg(const double p0[3], const double p1[3], const double q0[3], const double q1[3]) {
  double dq[3] = {q1[0] - q0[0], q1[1] - q0[1], q1[2] - q0[2]}, lo = INFINITY;
  /* the distance to a segment is convex along the other: ternary search is exact to rounding */
  double a = 0, b = 1;
  for (int it = 0; it < 200; ++it) {
    double s[2] = {a + (b - a) / 3, b - (b - a) / 3}, f[2];
    for (int m = 0; m < 2; ++m) {
      double x[3], r[3];
      for (int k = 0; k < 3; ++k) x[k] = p0[k] + s[m] * (p1[k] - p0[k]), r[k] = x[k] - q0[k];
      double t = fmin(1, fmax(0, dot(r, dq) / dot(dq, dq)));
      for (int k = 0; k < 3; ++k) r[k] -= t * dq[k];
      f[m] = sqrt(dot(r, r));
    }
    if (f[0] < f[1]) b = s[1];
    else a = s[0];
    lo = fmin(lo, fmin(f[0], f[1]));
  }
  return lo;
}
/* brute force: distance of two disjoint boxes = min over edge pairs and corner-box distances */
static double brute_distance(const pair* P) {
  double d = INFINITY;
  for (int i = 0; i < 8; ++i)
    for (int k = 0; k < 3; ++k) {
      if ((i >> k) & 1) continue;
      double a0[3], a1[3];
      corner(P, 0, i, a0), corner(P, 0, i | 1 << k, a1);
      for (int j = 0; j < 8; ++j)
        for (int q = 0; q < 3; ++q) {
          if ((j >> q) & 1) continue;
          double b0[3], b1[3];
          corner(P, 1, j, b0), corner(P, 1, j | 1 << q, b1);
          d = fmin(d, seg_seg(a0, a1, b0, b1));
        }
    }
  for (int b = 0; b < 2; ++b) /* corners of one against the other box (its local frame) */
    for (int i = 0; i < 8; ++i) {
      double x[3], r[3], xl[3], o = 0;
      corner(P, b, i, x);
      for (int k = 0; k < 3; ++k) r[k] = x[k] - P->X[1 - b].p[k];
      kn_mat3_tvec(P->X[1 - b].R, r, xl);
      for (int k = 0; k < 3; ++k) {
        double e = fmax(0, fabs(xl[k]) - 0.5 * P->s[1 - b].size[k]);
        o += e * e;
      }
      d = fmin(d, sqrt(o));
    }
  return d;
}

/* IPC's card frame (bench/ipc_paper/card_frame.yaml): cards at +-30 deg about y, top edges 0.1 mm
 * apart along x: phi 1e-4, normal +x, the two points at the cards' ends y = -+0.05 */
Test(box_parallel_edges, card_frame_top_edges) {
  pair P;
  const double sz[3] = {0.004, 0.1, 0.2}, th = PI / 6, y[3] = {0, 1, 0};
  make(&P, sz, sz);
  const double px = 0.051782050807568876, pz = 0.08770254037844388;
  P.X[0].p[0] = -px, P.X[0].p[2] = pz, P.X[1].p[0] = px, P.X[1].p[2] = pz;
  kn_mat3_from_axis_angle(y, th, P.X[0].R), kn_mat3_from_axis_angle(y, -th, P.X[1].R);
  double gap = brute_distance(&P);
  cr_expect(fabs(gap - 1e-4) < 1e-10, "brute-force distance %.12g, the scene's 1e-4", gap);
  const kn_contact_point* p;
  int n = detect(&P, 1e-3, &p);
  cr_assert_eq(n, 2, "a line contact: %d points", n);
  double ys[2];
  for (int i = 0; i < n; ++i) {
    cr_expect(fabs(p[i].phi - gap) < 1e-12, "phi %.12g, distance %.12g", p[i].phi, gap);
    cr_expect(fabs(p[i].n[0] - 1) < 1e-12 && fabs(p[i].n[2]) < 1e-9, "normal (%g %g %g): +x", p[i].n[0], p[i].n[1],
              p[i].n[2]);
    ys[i] = p[i].p[1];
  }
  cr_expect(fabs(fmin(ys[0], ys[1]) + 0.05) < 1e-12 && fabs(fmax(ys[0], ys[1]) - 0.05) < 1e-12, "ends y = %g, %g",
            ys[0], ys[1]);
  kn_collision_scene_free(P.cs);
}

/* two boxes yawed 20 and -35 deg about z, B's corner edge g = 3 mm from A's along the horizontal
 * w at 40 deg (inside both corners' normal cones), B raised so the edges share z in [0.05, 0.25] */
Test(box_parallel_edges, yawed_vertical_edges) {
  pair P;
  const double sa[3] = {0.3, 0.2, 0.5}, sb[3] = {0.2, 0.4, 0.3}, z[3] = {0, 0, 1}, g = 3e-3, w = 40 * PI / 180;
  make(&P, sa, sb);
  kn_mat3_from_axis_angle(z, 20 * PI / 180, P.X[0].R), kn_mat3_from_axis_angle(z, -35 * PI / 180, P.X[1].R);
  double ca[3], cl[3] = {0.15, 0.1, 0}, bl[3] = {-0.1, -0.2, 0}, cb[3];
  kn_pose_apply(&P.X[0], cl, ca);
  kn_mat3_vec(P.X[1].R, bl, cb);
  double n_exp[3] = {cos(w), sin(w), 0};
  for (int k = 0; k < 3; ++k) P.X[1].p[k] = ca[k] + g * n_exp[k] - cb[k];
  P.X[1].p[2] = 0.2;
  double gap = brute_distance(&P);
  cr_expect(fabs(gap - g) < 1e-10, "brute-force distance %.12g, built %g", gap, g);
  const kn_contact_point* p;
  int n = detect(&P, 0.01, &p);
  cr_assert_eq(n, 2, "a line contact: %d points", n);
  double zs[2];
  for (int i = 0; i < n; ++i) {
    cr_expect(fabs(p[i].phi - g) < 1e-12, "phi %.12g, built %g", p[i].phi, g);
    for (int k = 0; k < 3; ++k) cr_expect(fabs(p[i].n[k] - n_exp[k]) < 1e-12, "n[%d] %.12g", k, p[i].n[k]);
    zs[i] = p[i].p[2];
  }
  cr_expect(fabs(fmin(zs[0], zs[1]) - 0.05) < 1e-12 && fabs(fmax(zs[0], zs[1]) - 0.25) < 1e-12, "ends z = %g, %g",
            zs[0], zs[1]);
  /* beyond the margin: no point */
  kn_collision_scene_free(P.cs);
  n = detect(&P, 2e-3, &p);
  cr_expect_eq(n, 0, "3 mm apart, margin 2 mm: %d points", n);
  kn_collision_scene_free(P.cs);
}
