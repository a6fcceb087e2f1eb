/* The contact patch of two convex polytopes (a box, or a mesh recognized as convex at load, by its
 * hull: contact/hull.c): the separating axis with the largest separation among the candidates
 * near the pair's EPA normal, then the incident face clipped against the reference face along it,
 * as box-box does (MuJoCo's and Bullet's approach), instead of probing every vertex of one mesh
 * against the other.
 *
 * Candidates: every face normal of either polytope within 45 degrees of the EPA normal n0, and the
 * cross products of the edges of the two contact features along n0 (the vertices within 1 % of the
 * pair's size below each support plane, which holds the exact features when n0 is off by up to
 * ~1e-2: libccd's inflated EPA is within 4e-3). The separation along a unit axis u is
 * sep(u) = min_{S2} u.x - max_{S1} u.x (supports by hill climbing on the hull); any axis gives a
 * lower bound of the distance (separated) or an upper bound of the penetration depth (overlap), and
 * the extreme over the candidates is exact once the true axis (a face normal or an edge-edge cross
 * product, for polytopes) is among them.
 *
 * Patch: for a face axis, the most anti-parallel face of the other polytope clipped by the side
 * planes of the reference face (Sutherland-Hodgman, kn_clip_poly); each corner left gives a point
 * with its own gap to the reference plane. For an edge axis, the closest points of the two edges;
 * for two parallel edges (separated polytopes only: their lines' axis), the two ends of the edges'
 * common span. */
#include <math.h>
#include <string.h>

#include "contact/collision_internal.h"

#define COS_WINDOW 0.70710678118654752 /* candidate axes within 45 degrees of n0 */
#define MAX_CORNERS 64                 /* faces with more corners fall back to the probe path */
#define PATCH_KEEP 4                   /* points kept of a larger patch (keep_four) */
#define MAX_FEATURE 16                 /* feature vertices per side for the edge candidates */
/* an edge axis is taken over the best face axis (separation sf) only when it separates better by
 * more than this: box-box's rule, which keeps nearly parallel faces (a grasp, a stack) on face
 * patches where the exact axis is an edge pair by a hair */
#define EDGE_SLACK(sf, sc) (1e-6 * (sc) + 0.05 * fabs(sf))

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

typedef struct {
  const kn_nshape* s;
  const kn_hull* h; /* NULL: a box */
  int hint;         /* hill climbing's start */
} cpoly;

// (shape) => 1 for a box or a mesh with hull faces (its hull, convex or not)
int kn_hull_polytope(const kn_nshape* s) {
  if (s->shape->type == KN_SHAPE_BOX) return 1;
  return s->shape->type == KN_SHAPE_MESH && s->mesh && s->mesh->hull.nv > 0 && s->mesh->hull.nf > 0;
}

// (shape) => 1 when it is a convex polytope for the patch: a box, or a convex mesh with hull faces
int kn_convex_polytope(const kn_nshape* s) {
  if (s->shape->type == KN_SHAPE_BOX) return 1;
  return s->shape->type == KN_SHAPE_MESH && s->mesh && s->mesh->convex && s->mesh->hull.nv > 0 &&
         s->mesh->hull.nf > 0;
}

static void vert_world(const cpoly* c, int i, double x[3]) {
  double xl[3];
  if (c->h) memcpy(xl, &c->h->v[3 * i], sizeof xl);
  else
    for (int k = 0; k < 3; ++k) xl[k] = ((i >> k) & 1 ? 0.5 : -0.5) * c->s->shape->size[k];
  kn_pose_apply(c->s->X, xl, x);
}
/* 1 when vertices i, j share an edge (a box: corners differing in one axis; a hull: adjacent,
 * Qt's diagonals of merged faces included, which only adds candidates) */
static int adjacent(const cpoly* c, int i, int j) {
  if (!c->h) {
    int x = i ^ j;
    return x == 1 || x == 2 || x == 4;
  }
  for (int k = c->h->adj_start[i]; k < c->h->adj_start[i + 1]; ++k)
    if (c->h->adj[k] == j) return 1;
  return 0;
}

/* (world direction d) => max over the polytope of d . x, the vertex index in *vi */
static double support(cpoly* c, const double d[3], int* vi) {
  double dl[3], x[3];
  kn_mat3_tvec(c->s->X->R, d, dl);
  int i = 0;
  if (c->h) {
    i = c->hint = kn_hull_support(c->h, dl, c->hint);
  } else {
    for (int k = 0; k < 3; ++k) i |= dl[k] > 0 ? 1 << k : 0;
  }
  vert_world(c, i, x);
  if (vi) *vi = i;
  return dot3(d, x);
}

static int nfaces(const cpoly* c) { return c->h ? c->h->nf : 6; }
/* face f => outward unit normal (world) and its height v . x on the face */
static void face_plane(const cpoly* c, int f, double v[3], double* height) {
  const kn_pose* X = c->s->X;
  double nl[3] = {0, 0, 0}, off;
  if (c->h) {
    memcpy(nl, &c->h->fn[4 * f], sizeof nl);
    off = -c->h->fn[4 * f + 3];
  } else {
    nl[f / 2] = f % 2 ? 1.0 : -1.0;
    off = 0.5 * c->s->shape->size[f / 2];
  }
  kn_mat3_vec(X->R, nl, v);
  *height = off + dot3(v, X->p);
}
/* face f => its outward normal (local frame) . dl, dl a direction in the local frame */
static double local_normal_dot(const cpoly* c, int f, const double dl[3]) {
  if (c->h) return dot3(&c->h->fn[4 * f], dl);
  return f % 2 ? dl[f / 2] : -dl[f / 2];
}
/* face f => its corners (world, counter-clockwise seen from outside); count, 0 when above cap */
static int face_corners(const cpoly* c, int f, double (*x)[3], int cap) {
  if (c->h) {
    int a = c->h->f_start[f], b = c->h->f_start[f + 1];
    if (b - a > cap) return 0;
    for (int i = a; i < b; ++i) vert_world(c, c->h->f_vert[i], x[i - a]);
    return b - a;
  }
  int k = f / 2, u = (k + 1) % 3, w = (k + 2) % 3;
  double s = f % 2 ? 1.0 : -1.0;
  const double su[4] = {1, -1, -1, 1}, sw[4] = {1, 1, -1, -1};
  for (int i = 0; i < 4; ++i) {
    int j = s > 0 ? i : 3 - i; /* e_u x e_w = e_k: this order is counter-clockwise about +e_k */
    double xl[3];
    xl[k] = s * 0.5 * c->s->shape->size[k];
    xl[u] = su[j] * 0.5 * c->s->shape->size[u], xl[w] = sw[j] * 0.5 * c->s->shape->size[w];
    kn_pose_apply(c->s->X, xl, x[i]);
  }
  return 4;
}

/* the contact feature along d: vertices within tol of the support plane (a hull: the MAX_FEATURE
 * highest of at most 4 MAX_FEATURE found by a walk on the vertex graph from the support vertex; a
 * box: a scan) */
static int feature(cpoly* c, const double d[3], double tol, int* idx) {
  int top;
  double h = support(c, d, &top), x[3];
  if (!c->h) {
    int m = 0;
    for (int i = 0; i < 8 && m < MAX_FEATURE; ++i) {
      vert_world(c, i, x);
      if (dot3(d, x) >= h - tol) idx[m++] = i;
    }
    return m;
  }
  double dl[3];
  kn_mat3_tvec(c->s->X->R, d, dl);
  const double* hv = c->h->v;
  double hl = dot3(dl, &hv[3 * top]);
  int m = 1, w[4 * MAX_FEATURE];
  w[0] = top;
  for (int q = 0; q < m; ++q) /* breadth first over vertices within tol (the feature is connected) */
    for (int k = c->h->adj_start[w[q]]; k < c->h->adj_start[w[q] + 1] && m < 4 * MAX_FEATURE; ++k) {
      int j = c->h->adj[k], seen = 0;
      if (dot3(dl, &hv[3 * j]) < hl - tol) continue;
      for (int r = 0; r < m && !seen; ++r) seen = w[r] == j;
      if (!seen) w[m++] = j;
    }
  /* the MAX_FEATURE highest along d (a dense hull has many vertices within tol of its support) */
  int n = m < MAX_FEATURE ? m : MAX_FEATURE;
  for (int a = 0; a < n; ++a) {
    int b = a;
    for (int r = a + 1; r < m; ++r)
      if (dot3(dl, &hv[3 * w[r]]) > dot3(dl, &hv[3 * w[b]])) b = r;
    int x = w[a];
    w[a] = w[b], w[b] = x, idx[a] = w[a];
  }
  return n;
}

/* the best edge-edge axis */
typedef struct {
  double sep, u[3];   /* separation along u (from S1 into S2) */
  double a[2][3], b[2][3]; /* the edges of S1 and S2 */
  int parallel;            /* the edges are parallel: u is their lines' axis (separated pairs only) */
} edge_axis;

/* (polytopes, direction d from S1 into S2) => e updated with the edge pairs of the two contact
 * features along d whose axis (within 45 degrees of d) separates better */
static void edge_axes(cpoly* c, const double d[3], double sc, edge_axis* e) {
  int fi[2][MAX_FEATURE], nfi[2];
  double md[3] = {-d[0], -d[1], -d[2]};
  nfi[0] = feature(&c[0], d, 1e-2 * sc, fi[0]), nfi[1] = feature(&c[1], md, 1e-2 * sc, fi[1]);
  for (int i = 0; i < nfi[0]; ++i)
    for (int j = i + 1; j < nfi[0]; ++j) {
      if (!adjacent(&c[0], fi[0][i], fi[0][j])) continue;
      double a0[3], a1[3], da[3];
      vert_world(&c[0], fi[0][i], a0), vert_world(&c[0], fi[0][j], a1);
      for (int k = 0; k < 3; ++k) da[k] = a1[k] - a0[k];
      for (int p = 0; p < nfi[1]; ++p)
        for (int q = p + 1; q < nfi[1]; ++q) {
          if (!adjacent(&c[1], fi[1][p], fi[1][q])) continue;
          double b0[3], b1[3], db[3], u[3], mu[3];
          vert_world(&c[1], fi[1][p], b0), vert_world(&c[1], fi[1][q], b1);
          for (int k = 0; k < 3; ++k) db[k] = b1[k] - b0[k];
          kn_vec3_cross(da, db, u);
          double l = sqrt(dot3(u, u));
          int par = !(l > 1e-6 * sqrt(dot3(da, da) * dot3(db, db)));
          if (par) {
            /* parallel edges: the axis of their lines (b0 - a0 without its part along da). For an
             * overlap the face axes are exact (the cross-section's SAT); for separated polytopes
             * whose nearest features are these edges only this axis is */
            double w = dot3(b0, da) - dot3(a0, da), aa = dot3(da, da);
            for (int k = 0; k < 3; ++k) u[k] = b0[k] - a0[k] - w / aa * da[k];
            l = sqrt(dot3(u, u));
            if (!(l > 1e-12 * sc)) continue;
          }
          double s = dot3(u, d) < 0 ? -1.0 / l : 1.0 / l;
          for (int k = 0; k < 3; ++k) u[k] *= s, mu[k] = -u[k];
          if (dot3(u, d) < COS_WINDOW) continue;
          double sep = -support(&c[1], mu, NULL) - support(&c[0], u, NULL);
          if (par && !(sep > 0)) continue;
          if (sep > e->sep) {
            e->sep = sep, e->parallel = par, memcpy(e->u, u, sizeof u);
            memcpy(e->a[0], a0, sizeof a0), memcpy(e->a[1], a1, sizeof a1), memcpy(e->b[0], b0, sizeof b0),
                memcpy(e->b[1], b1, sizeof b1);
          }
        }
    }
}

/* closest points of segments a0a1 and b0b1 (Ericson §5.1.9); 1 when they are those of the two
 * lines (the edges cross seen along their common normal), 0 when clamped to an end */
static int closest_segments(const double a0[3], const double a1[3], const double b0[3], const double b1[3],
                             double pa[3], double pb[3]) {
  double d1[3], d2[3], r[3];
  for (int k = 0; k < 3; ++k) d1[k] = a1[k] - a0[k], d2[k] = b1[k] - b0[k], r[k] = a0[k] - b0[k];
  double a = dot3(d1, d1), e = dot3(d2, d2), f = dot3(d2, r), c = dot3(d1, r), b = dot3(d1, d2);
  double den = a * e - b * b, s = 0, t;
  int inside = 0;
  if (den > 1e-18 * a * e) s = (b * f - c * e) / den, inside = s >= 0 && s <= 1, s = fmin(1, fmax(0, s));
  t = (b * s + f) / e;
  inside = inside && t >= 0 && t <= 1;
  if (t < 0) t = 0, s = fmin(1, fmax(0, -c / a));
  else if (t > 1) t = 1, s = fmin(1, fmax(0, (b - c) / a));
  for (int k = 0; k < 3; ++k) pa[k] = a0[k] + s * d1[k], pb[k] = b0[k] + t * d2[k];
  return inside;
}

/* (parallel edges a0a1 and b0b1 that support the polytopes along u, their lines sep apart) => the
 * line contact: a point at each end of the overlap of the edges' projections on their direction
 * (one when it is a point); -1 when the edges pass beside each other (a corner is nearest) */
static int parallel_edges(const double (*a)[3], const double (*b)[3], const double u[3], double sep,
                          kn_patch_point* out, int cap) {
  double e[3] = {a[1][0] - a[0][0], a[1][1] - a[0][1], a[1][2] - a[0][2]}, l = sqrt(dot3(e, e));
  for (int k = 0; k < 3; ++k) e[k] /= l;
  double ta0 = dot3(e, a[0]), ta1 = dot3(e, a[1]), tb0 = dot3(e, b[0]), tb1 = dot3(e, b[1]);
  double lo = fmax(ta0, fmin(tb0, tb1)), hi = fmin(ta1, fmax(tb0, tb1));
  if (!(hi >= lo)) return -1;
  double t[2] = {lo, hi};
  int m = hi - lo > 1e-9 * l && cap >= 2 ? 2 : 1;
  for (int i = 0; i < m; ++i) {
    kn_patch_point* o = &out[i];
    for (int k = 0; k < 3; ++k) {
      o->p1[k] = a[0][k] + (t[i] - ta0) * e[k];
      o->p2[k] = b[0][k] + (t[i] - tb0) * e[k];
      o->n[k] = u[k];
    }
    o->phi = sep;
  }
  return m;
}

/* twice the area of triangle abc seen along the unit n */
static double area2(const double a[3], const double b[3], const double c[3], const double n[3]) {
  double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]}, w[3];
  kn_vec3_cross(u, v, w);
  return fabs(dot3(w, n));
}
/* (points, m > 4, normal) => the 4 kept first (Bullet's manifold rule): the deepest, the farthest
 * from it, the one making the largest triangle with those two, the one adding the most area */
static int keep_four(kn_patch_point* p, int m, const double n[3]) {
  int k[4] = {0, -1, -1, -1};
  for (int i = 1; i < m; ++i)
    if (p[i].phi < p[k[0]].phi) k[0] = i;
  double best = -1;
  for (int i = 0; i < m; ++i) {
    double d[3] = {p[i].p1[0] - p[k[0]].p1[0], p[i].p1[1] - p[k[0]].p1[1], p[i].p1[2] - p[k[0]].p1[2]};
    double t = dot3(d, n), l = dot3(d, d) - t * t;
    if (l > best) best = l, k[1] = i;
  }
  best = -1;
  for (int i = 0; i < m; ++i) {
    double a = area2(p[k[0]].p1, p[k[1]].p1, p[i].p1, n);
    if (a > best) best = a, k[2] = i;
  }
  best = -1;
  for (int i = 0; i < m; ++i) { /* the quad's area gained: the larger triangle over each edge */
    double a = fmax(area2(p[k[0]].p1, p[k[1]].p1, p[i].p1, n),
                    fmax(area2(p[k[1]].p1, p[k[2]].p1, p[i].p1, n), area2(p[k[2]].p1, p[k[0]].p1, p[i].p1, n)));
    if (i != k[0] && i != k[1] && i != k[2] && a > best) best = a, k[3] = i;
  }
  kn_patch_point q[4];
  for (int j = 0; j < 4; ++j) q[j] = p[k[j]];
  memcpy(p, q, sizeof q);
  return 4;
}

/* a polytope's size for the tolerances: its bounding radius about the pose origin */
static double radius(const kn_nshape* s) {
  if (s->shape->type == KN_SHAPE_BOX) return 0.5 * sqrt(dot3(s->shape->size, s->shape->size));
  return s->mesh->sphere_r + sqrt(dot3(s->mesh->sphere_c, s->mesh->sphere_c));
}

/* (the two polytopes, reference face bf of side bside with outward normal bu at height bh, its
 * separation best, 1 when the pair overlaps) => the incident face clipped against it: points with phi < margin, at most
 * PATCH_KEEP; -1 when the clip is empty or does not reach the incident side's support plane */
static int face_patch(cpoly* c, int bside, int bf, const double bu[3], double bh, double best, int overlap, double sc,
                      double margin, kn_patch_point* out, int cap) {
  /* face axis: reference face bf of side bside (outward bu), incident face of the other side: the
   * one whose outward normal is the most anti-parallel to bu */
  cpoly* R = &c[bside];
  cpoly* I = &c[1 - bside];
  int fin = -1;
  double lo = INFINITY;
  double bl[3];
  kn_mat3_tvec(I->s->X->R, bu, bl);
  for (int f = 0; f < nfaces(I); ++f) {
    double t = local_normal_dot(I, f, bl);
    if (t < lo) lo = t, fin = f;
  }
  double poly[MAX_CORNERS * 2][3], tmp[MAX_CORNERS * 2][3], rc[MAX_CORNERS][3], ic[MAX_CORNERS + 1][3];
  int np = face_corners(I, fin, poly, MAX_CORNERS), nr = face_corners(R, bf, rc, MAX_CORNERS), ni = np;
  if (np == 0 || nr == 0) return -1;
  memcpy(ic, poly, (size_t)np * sizeof ic[0]);
  for (int e = 0; e < nr && np > 0; ++e) {
    /* side plane of reference edge rc[e] -> rc[e+1]: outward normal (b - a) x bu */
    const double *a = rc[e], *b = rc[(e + 1) % nr];
    double d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, sn[3];
    kn_vec3_cross(d, bu, sn);
    if (np + 1 > 2 * MAX_CORNERS) return -1;
    np = kn_clip_poly(poly, np, sn, dot3(sn, a), tmp);
    memcpy(poly, tmp, (size_t)np * sizeof poly[0]);
  }
  if (np == 0) return -1;
  /* the clipped face reaches the incident side's support plane (gap best), or it misses a deeper
   * part of I beside the reference face: nearly parallel faces that overhang each other (a pad on a
   * cube's edge). The clip stands then, for an overlap (EPA's, overlap), only when that part is outside R (the incident face's corners
   * below the reference plane and I's deepest vertex: R is no wider below its face there), else
   * the caller tries the edge axis or the probe path */
  double lowest = INFINITY;
  for (int i = 0; i < np; ++i) lowest = fmin(lowest, dot3(bu, poly[i]) - bh);
  if (lowest > best + 1e-9 * sc) {
    if (!overlap) return -1; /* maybe separated: a gap larger than the distance would not be conservative */
    double mu[3] = {-bu[0], -bu[1], -bu[2]};
    int vs;
    support(I, mu, &vs);
    vert_world(I, vs, ic[ni++]);
    for (int i = 0; i < ni; ++i) {
      if (dot3(bu, ic[i]) - bh >= 0) continue; /* above the reference plane: outside R */
      double out_most = -INFINITY;
      for (int f = 0; f < nfaces(R) && out_most <= 1e-9 * sc; ++f) {
        double v[3], hv;
        face_plane(R, f, v, &hv);
        out_most = fmax(out_most, dot3(v, ic[i]) - hv);
      }
      if (!(out_most > 1e-9 * sc)) return -1;
    }
  }
  int m = 0;
  for (int i = 0; i < np && m < cap; ++i) {
    double phi = dot3(bu, poly[i]) - bh;
    if (!(phi < margin)) continue;
    kn_patch_point* o = &out[m++];
    double* pr = bside == 0 ? o->p1 : o->p2; /* on the reference face */
    double* pi = bside == 0 ? o->p2 : o->p1;
    for (int k = 0; k < 3; ++k) pi[k] = poly[i][k], pr[k] = poly[i][k] - phi * bu[k], o->n[k] = bside == 0 ? bu[k] : -bu[k];
    o->phi = phi;
  }
  if (m > PATCH_KEEP) m = keep_four(out, m, bu);
  return m > 0 ? m : -1;
}

// (convex polytopes S1, S2 at their poses, unit EPA normal n0 from S1 into S2, 1 when n0 is the
// uninflated EPA's, gap_point (1: face axes only, and separated polytopes whose face clip misses get
// one point, the nearest vertex of the incident side at the face axis' gap, its witness on the
// reference face's plane), margin) => up to cap
// points with phi < margin in out (normal from S1 into S2); their count, or -1 when the patch
// cannot be formed (no candidate axis near n0, a face of more than 64 corners, an empty clip)
int kn_convex_patch(const kn_nshape* S1, const kn_nshape* S2, const double n0[3], int exact_n0, int gap_point,
                    double margin, kn_patch_point* out, int cap) {
  cpoly c[2] = {{S1, S1->shape->type == KN_SHAPE_MESH ? &S1->mesh->hull : NULL, 0},
                {S2, S2->shape->type == KN_SHAPE_MESH ? &S2->mesh->hull : NULL, 0}};
  double sc = radius(S1) + radius(S2), m0[3] = {-n0[0], -n0[1], -n0[2]};
  /* face axes: sep(u) = -h2(-u) - h1(u), u from S1 to S2 */
  double best = -INFINITY, bu[3] = {0, 0, 0}, bh = 0;
  int bside = -1, bf = -1;
  for (int side = 0; side < 2; ++side) {
    double dl[3]; /* the window's axis in the side's frame: one product per face to test it */
    kn_mat3_tvec(c[side].s->X->R, side ? m0 : n0, dl);
    for (int f = 0; f < nfaces(&c[side]); ++f) {
      if (local_normal_dot(&c[side], f, dl) < COS_WINDOW) continue;
      double v[3], hv, mv[3];
      face_plane(&c[side], f, v, &hv);
      for (int k = 0; k < 3; ++k) mv[k] = -v[k];
      double sep = -hv - support(&c[1 - side], mv, NULL); /* min over the other of v . x is -h(-v) */
      if (sep > best) best = sep, bside = side, bf = f, bh = hv, memcpy(bu, v, sizeof bu);
    }
  }
  /* edge axes from the two contact features along n0, unless n0 is a face normal (to 1.4e-5 rad) from
   * the uninflated EPA (exact_n0, contact/narrow.c): then EPA ended on that face of the
   * Minkowski difference, and no edge axis separates better by more than EPA's tolerance, far below
   * EDGE_SLACK (the inflated EPA of larger hulls can stop short on a face). Not with gap_point: the
   * face axes' separation bounds the hulls' distance from below, which speculative contacts of
   * hulls only need (the edge pairs of two large hulls cost ~0.36 M instructions a call) */
  double align = bside < 0 ? -1.0 : dot3(bu, bside == 0 ? n0 : m0);
  edge_axis e = {.sep = -INFINITY};
  if (!gap_point && !(exact_n0 && align > 1 - 1e-10)) {
    edge_axes(c, n0, sc, &e);
    /* once more from the best axis found, when it is not n0 (libccd's inflated EPA on a large hull
     * can stop short: its features may hold the true edges only seen from nearer the true axis) */
    double d[3];
    memcpy(d, best > e.sep ? bu : e.u, sizeof d);
    if (best > e.sep && bside == 1)
      for (int k = 0; k < 3; ++k) d[k] = -d[k];
    if ((bside >= 0 || e.sep > -INFINITY) && dot3(d, n0) < 1 - 1e-12) edge_axes(c, d, sc, &e);
  }
  double ebest = e.sep, *eu = e.u;
  double (*ea)[3] = e.a, (*eb)[3] = e.b;
  if (bside < 0 && !(ebest > -INFINITY)) return -1;
  /* prefer face axes (a face patch supports, an edge point does not): an edge axis must separate
   * clearly better, by the slack of box-box (contact/narrow.c) */
  /* (the axis of parallel edges of separated polytopes is exact where the face axes only bound the
   * distance from below: it wins when larger, by rounding's margin) */
  if (bside >= 0 && !(ebest > best + (e.parallel ? 1e-12 * sc : EDGE_SLACK(best, sc)))) {
    if (!(best < margin)) return 0;
    int m = face_patch(c, bside, bf, bu, bh, best, exact_n0, sc, margin, out, cap);
    if (m >= 0) return m;
    if (gap_point && best > 0) { /* separated hulls: I's nearest vertex along bu, at the axis' gap */
      double mu[3] = {-bu[0], -bu[1], -bu[2]}, x[3];
      int vs;
      support(&c[1 - bside], mu, &vs);
      vert_world(&c[1 - bside], vs, x);
      double* pr = bside == 0 ? out[0].p1 : out[0].p2;
      double* pi = bside == 0 ? out[0].p2 : out[0].p1;
      for (int k = 0; k < 3; ++k) pi[k] = x[k], pr[k] = x[k] - best * bu[k], out[0].n[k] = bside == 0 ? bu[k] : -bu[k];
      out[0].phi = best;
      return 1;
    }
    if (!(ebest > -INFINITY)) return m;
    /* the face patch misses the deepest vertex: the edge axis within the slack instead */
  }
  if (!(ebest < margin) || cap < 1) return 0;
  /* the two edges must be the supporting features along eu (then their lines are ebest apart along
   * it); an edge pair whose axis is best among the candidates but which lies below a support plane
   * goes to the probe path */
  double meu[3] = {-eu[0], -eu[1], -eu[2]};
  double h1 = support(&c[0], eu, NULL), l2 = -support(&c[1], meu, NULL), tol = 1e-9 * sc;
  if (!(fabs(dot3(eu, ea[0]) - h1) <= tol && fabs(dot3(eu, ea[1]) - h1) <= tol && fabs(dot3(eu, eb[0]) - l2) <= tol &&
        fabs(dot3(eu, eb[1]) - l2) <= tol))
    return -1;
  if (e.parallel) return parallel_edges(ea, eb, eu, ebest, out, cap);
  kn_patch_point* o = &out[0];
  /* the witnesses on the two edges differ by ebest along eu when the edges cross seen along it;
   * edges that pass beside each other (separated corners) go to the probe path */
  if (!closest_segments(ea[0], ea[1], eb[0], eb[1], o->p1, o->p2)) return -1;
  memcpy(o->n, eu, 3 * sizeof(double));
  o->phi = ebest;
  return 1;
}

