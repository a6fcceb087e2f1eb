/* Convex polytopes (a box, or a mesh's hull) in the narrow phase: their contact features (the
 * vertices on a support plane), the overlap of two features seen along a normal (the witness points
 * of the uninflated EPA, contact/narrow.c) and Sutherland-Hodgman clipping of a polygon by a plane
 * (box-box faces, the convex patch of contact/convex_patch.c). Moved from narrow.c unchanged. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/collision_internal.h"

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void to_world(const kn_pose* X, const double xl[3], double xw[3]) { kn_pose_apply(X, xl, xw); }

// (unit n) => R = [t1 t2 n] (columns): t1 from the world axis least aligned with n, t2 = n x t1
void kn_tangent_frame(const double n[3], double R[9]) {
  int m = 0;
  for (int k = 1; k < 3; ++k)
    if (fabs(n[k]) < fabs(n[m])) m = k;
  double e[3] = {0, 0, 0};
  e[m] = 1;
  double t1[3], t2[3], en = dot3(e, n);
  for (int k = 0; k < 3; ++k) t1[k] = e[k] - en * n[k];
  double l = sqrt(dot3(t1, t1));
  for (int k = 0; k < 3; ++k) t1[k] /= l;
  kn_vec3_cross(n, t1, t2);
  for (int i = 0; i < 3; ++i) R[3 * i + 0] = t1[i], R[3 * i + 1] = t2[i], R[3 * i + 2] = n[i];
}

/* a small polytope for libccd: a box, or a mesh whose hull has at most 64 vertices (on the hulls of
 * bullet3's iiwa links, hundreds of vertices, EPA without the inflation measured no faster) */
int kn_polytope_small(const kn_nshape* s) {
  return s->shape->type == KN_SHAPE_BOX ||
         (s->shape->type == KN_SHAPE_MESH && s->mesh && s->mesh->hull.nv > 0 && s->mesh->hull.nv <= 64);
}

/* the vertices of a small polytope (world) within tol of its support plane along the unit d:
 * its contact feature (a vertex, an edge's two ends, a face's corners); count, at most 64 */
static int support_feature(const kn_nshape* s, const double d[3], double tol, double (*out)[3]) {
  double x[64][3];
  int nx = 0;
  if (s->shape->type == KN_SHAPE_BOX) {
    for (int i = 0; i < 8; ++i) {
      double xl[3];
      for (int k = 0; k < 3; ++k) xl[k] = ((i >> k) & 1 ? 0.5 : -0.5) * s->shape->size[k];
      to_world(s->X, xl, x[nx++]);
    }
  } else {
    for (int i = 0; i < s->mesh->hull.nv; ++i) to_world(s->X, &s->mesh->hull.v[3 * i], x[nx++]);
  }
  double h = -INFINITY;
  for (int i = 0; i < nx; ++i) h = fmax(h, dot3(x[i], d));
  int m = 0;
  for (int i = 0; i < nx; ++i)
    if (dot3(x[i], d) >= h - tol) memcpy(out[m++], x[i], sizeof x[i]);
  return m;
}

/* 2-D convex hull (Andrew's monotone chain), counter-clockwise, collinear points dropped; n >= 1 */
static int cmp_xy(const void* a, const void* b) {
  const double *p = a, *q = b;
  if (p[0] != q[0]) return p[0] < q[0] ? -1 : 1;
  return (p[1] > q[1]) - (p[1] < q[1]);
}
static double cross2(const double o[2], const double a[2], const double b[2]) {
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}
static int hull2(double (*p)[2], int n, double eps, double (*h)[2]) {
  qsort(p, (size_t)n, sizeof p[0], cmp_xy);
  int k = 0;
  for (int i = 0; i < n; ++i) {
    while (k >= 2 && cross2(h[k - 2], h[k - 1], p[i]) <= eps) --k;
    memcpy(h[k++], p[i], sizeof p[i]);
  }
  for (int i = n - 2, lo = k + 1; i >= 0; --i) {
    while (k >= lo && cross2(h[k - 2], h[k - 1], p[i]) <= eps) --k;
    memcpy(h[k++], p[i], sizeof p[i]);
  }
  if (k > 1) --k; /* the last point repeats the first */
  if (k == 2 && fabs(h[0][0] - h[1][0]) + fabs(h[0][1] - h[1][1]) <= eps) k = 1;
  return k;
}

/* (convex polygon a, CCW, na >= 3; polygon or segment or point b) => b clipped to a
 * (Sutherland-Hodgman; a segment as the 2-gon [p, q]) */
static int clip2(const double (*a)[2], int na, const double (*b)[2], int nb, double eps, double (*out)[2]) {
  double buf[2][140][2];
  int n = nb;
  memcpy(buf[0], b, (size_t)nb * sizeof b[0]);
  int cur = 0;
  for (int e = 0; e < na && n > 0; ++e) {
    const double *s0 = a[e], *s1 = a[(e + 1) % na];
    int m = 0, nxt = 1 - cur;
    for (int i = 0; i < n; ++i) {
      const double *p = buf[cur][i], *q = buf[cur][(i + 1) % n];
      double dp = cross2(s0, s1, p), dq = cross2(s0, s1, q);
      if (dp >= -eps) memcpy(buf[nxt][m++], p, sizeof buf[0][0]);
      if ((dp < -eps && dq > eps) || (dp > eps && dq < -eps)) {
        double t = dp / (dp - dq);
        buf[nxt][m][0] = p[0] + t * (q[0] - p[0]), buf[nxt][m][1] = p[1] + t * (q[1] - p[1]);
        ++m;
      }
      if (m > 136) break;
    }
    n = m, cur = nxt;
  }
  memcpy(out, buf[cur], (size_t)n * sizeof out[0]);
  return n;
}

/* (the unit normal n from S1 into S2 and the depth of two overlapping small polytopes) => witness
 * points: p1 on S1's support plane along n, p2 = p1 - depth n, both over the middle of the overlap
 * of the two contact features seen along n (a vertex: the vertex; two crossing edges: their
 * crossing; a face and anything: the part of the other feature inside it), so that the point does
 * not depend on which of tied support points EPA happened to use */
void kn_polytope_witness(const kn_nshape* S1, const kn_nshape* S2, const double n[3], double depth, double p1[3],
                         double p2[3]) {
  double f1[64][3], f2[64][3], m[3] = {-n[0], -n[1], -n[2]}, R[9];
  double scale = 1e-9 * (1 + fabs(dot3(S1->X->p, n)) + fabs(dot3(S2->X->p, n)));
  int n1 = support_feature(S1, n, scale, f1), n2 = support_feature(S2, m, scale, f2);
  kn_tangent_frame(n, R);
  double t1[3] = {R[0], R[3], R[6]}, t2[3] = {R[1], R[4], R[7]};
  double a[64][2], b[64][2], ha[130][2], hb[130][2], c[140][2];
  double h1 = -INFINITY;
  for (int i = 0; i < n1; ++i) a[i][0] = dot3(f1[i], t1), a[i][1] = dot3(f1[i], t2), h1 = fmax(h1, dot3(f1[i], n));
  for (int i = 0; i < n2; ++i) b[i][0] = dot3(f2[i], t1), b[i][1] = dot3(f2[i], t2);
  double eps = scale * scale;
  int na = hull2(a, n1, eps, ha), nb = hull2(b, n2, eps, hb), nc = 0;
  if (na >= 3) nc = clip2((const double (*)[2])ha, na, (const double (*)[2])hb, nb, scale, c);
  else if (nb >= 3) nc = clip2((const double (*)[2])hb, nb, (const double (*)[2])ha, na, scale, c);
  else if (na == 2 && nb == 2) {
    /* two edges: where they cross, if they do */
    double r[2] = {ha[1][0] - ha[0][0], ha[1][1] - ha[0][1]}, q[2] = {hb[1][0] - hb[0][0], hb[1][1] - hb[0][1]};
    double den = r[0] * q[1] - r[1] * q[0];
    if (fabs(den) > eps) {
      double w[2] = {hb[0][0] - ha[0][0], hb[0][1] - ha[0][1]};
      double t = (w[0] * q[1] - w[1] * q[0]) / den;
      c[0][0] = ha[0][0] + t * r[0], c[0][1] = ha[0][1] + t * r[1], nc = 1;
    }
  } else if (na == 1) {
    memcpy(c[0], ha[0], sizeof c[0]), nc = 1;
  } else if (nb == 1) {
    memcpy(c[0], hb[0], sizeof c[0]), nc = 1;
  }
  if (nc == 0) { /* no overlap found (round-off at a grazing feature): the features' centres */
    for (int i = 0; i < na; ++i) memcpy(c[nc++], ha[i], sizeof c[0]);
    for (int i = 0; i < nb; ++i) memcpy(c[nc++], hb[i], sizeof c[0]);
  }
  double u = 0, v = 0;
  for (int i = 0; i < nc; ++i) u += c[i][0], v += c[i][1];
  u /= nc, v /= nc;
  for (int k = 0; k < 3; ++k) p1[k] = u * t1[k] + v * t2[k] + h1 * n[k], p2[k] = p1[k] - depth * n[k];
}

/* clip polygon (n points) by dot(x, e) <= off; returns the new count */
int kn_clip_poly(double (*in)[3], int n, const double e[3], double off, double (*out)[3]) {
  int m = 0;
  for (int i = 0; i < n; ++i) {
    const double *p = in[i], *q = in[(i + 1) % n];
    double dp = dot3(p, e) - off, dq = dot3(q, e) - off;
    if (dp <= 0) memcpy(out[m++], p, 3 * sizeof(double));
    if ((dp < 0 && dq > 0) || (dp > 0 && dq < 0)) {
      double t = dp / (dp - dq);
      for (int k = 0; k < 3; ++k) out[m][k] = p[k] + t * (q[k] - p[k]);
      ++m;
    }
  }
  return m;
}
