/* Narrow phase: contact points for one collider pair (normal from A into B, phi < 0 overlap).
 *
 * Pair table (types sorted sphere < box < cylinder < capsule < halfspace < mesh; the reversed
 * order is computed swapped and flipped):
 *   sphere-sphere           closed form
 *   sphere-X (any other)    the sphere centre against X's signed distance (mesh: BVH query)
 *   box/cyl/capsule/mesh-halfspace  probe points against the plane: box corners, 8 points per
 *                           cylinder rim plus each rim's deepest point, capsule end spheres,
 *                           every mesh vertex
 *   capsule-capsule         closest points of the core segments, plus each end against the other
 *                           segment (two points for parallel capsules)
 *   box-box                 separating axes (15) and, for a face axis, the incident face clipped
 *                           against the reference face (up to 8 points); an edge axis falls back
 *                           to libccd; separated boxes whose nearest features are parallel edges,
 *                           the edges' line contact (two points)
 *   box/convex mesh pairs   libccd GJK/EPA for the normal, then the best separating axis near it
 *   (not box-box)           and the incident face clipped against the reference face
 *                           (convex_patch.c); when no patch can be formed, as the other pairs;
 *   non-convex mesh with    the same patch on the hulls while they are apart by more than
 *   a mesh or a box         KN_HULL_APART (speculative contacts only), else as the other pairs:
 *   other convex pairs      libccd GJK/EPA on the pair with A inflated by the margin (one deepest
 *                           point), plus every probe point of one shape that lies within the margin
 *                           of a face of the other whose normal agrees with the pair normal
 *   halfspace-halfspace     none
 * Mesh shapes are convex (support over all vertices) for libccd and triangle meshes (BVH) for
 * probe points. */
#include <ccd/ccd.h>
#include <math.h>
#include <string.h>

#include "contact/collision_internal.h"

//---- emitting points ----

typedef struct {
  kn_point_buf* out;
  int start;        /* first point of this pair in out */
  int ia, ib;       /* collider indices as reported */
  int flip;         /* the core routine works on (B, A) */
  kn_contact_material mat;
  double kA, kB;    /* per-side stiffness of ia, ib for the contact location */
  double margin;
  int cull;         /* skip probe points that cannot come within the margin (contact/probe_cull.c) */
  int scan;         /* libccd's support of a mesh by a scan of the hull vertices, not the hull climb */
  int patch;        /* two convex polytopes: the convex patch (convex_patch.c) instead of the probes */
} emitter;

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static int grow(kn_point_buf* b) {
  if (b->count < b->capacity) return 1;
  int cap = b->capacity ? 2 * b->capacity : 64;
  kn_contact_point* p = realloc(b->p, (size_t)cap * sizeof *p);
  if (!p) return 0;
  b->p = p, b->capacity = cap;
  return 1;
}

/* (witness on S1, witness on S2, unit normal S1 -> S2, phi) in the core's order => one point */
static int emit(emitter* em, const double p1[3], const double p2[3], const double n12[3], double phi) {
  if (!(phi < em->margin)) return 1;
  double nn = sqrt(dot3(n12, n12));
  if (!(nn > 0)) return 1;
  const double* pA = em->flip ? p2 : p1;
  const double* pB = em->flip ? p1 : p2;
  double n[3], s = (em->flip ? -1.0 : 1.0) / nn;
  for (int k = 0; k < 3; ++k) n[k] = s * n12[k];
  /* digest §2.2: p = kA/(kA+kB) pA + kB/(kA+kB) pB; a rigid (infinite) side takes the point */
  double wA;
  if (isinf(em->kA) && isinf(em->kB)) wA = 0.5;
  else if (isinf(em->kA)) wA = 1.0;
  else if (isinf(em->kB)) wA = 0.0;
  else if (em->kA + em->kB > 0) wA = em->kA / (em->kA + em->kB);
  else wA = 0.5;
  double p[3];
  for (int k = 0; k < 3; ++k) p[k] = wA * pA[k] + (1 - wA) * pB[k];
  /* drop near-duplicates within the pair (clipped corners, probes that repeat the deepest point):
   * a scan of the pair's points, or (culling on, 32 points or more) the same test on the points
   * of the neighbouring cells (point_grid.c) */
  kn_point_buf* out = em->out;
  int indexed = em->cull && out->grid_start == em->start, near = -1;
  if (indexed) near = kn_point_grid_has_near(out, p);
  if (near < 0) {
    out->grid_start = indexed ? -1 : out->grid_start; /* p cannot be looked up: scan from now on */
    indexed = near = 0;
    for (int i = em->start; i < out->count && !near; ++i) {
      const double* q = out->p[i].p;
      double d[3] = {p[0] - q[0], p[1] - q[1], p[2] - q[2]};
      near = dot3(d, d) < 1e-12;
    }
  }
  if (near) return 1;
  if (!grow(out)) return 0;
  kn_contact_point* c = &out->p[out->count++];
  c->a = em->ia, c->b = em->ib;
  memcpy(c->p, p, sizeof p);
  memcpy(c->n, n, sizeof n);
  kn_tangent_frame(n, c->R_WC);
  c->phi = phi;
  c->material = em->mat;
  if (indexed) kn_point_grid_add(out, out->count - 1);
  else if (em->cull && out->count - em->start == 32 && out->grid_start != em->start) kn_point_grid_build(out, em->start);
  return 1;
}

//---- geometry helpers ----

static void to_world(const kn_pose* X, const double xl[3], double xw[3]) { kn_pose_apply(X, xl, xw); }
static void to_local(const kn_pose* X, const double xw[3], double xl[3]) {
  double d[3] = {xw[0] - X->p[0], xw[1] - X->p[1], xw[2] - X->p[2]};
  kn_mat3_tvec(X->R, d, xl);
}
static double sdf_world(const kn_nshape* s, const double x[3], double g[3]) {
  double xl[3], gl[3];
  to_local(s->X, x, xl);
  double d = kn_shape_signed_distance_local(s->shape, s->mesh, xl, gl);
  kn_mat3_vec(s->X->R, gl, g);
  return d;
}
static void axis_col(const double R[9], int k, double a[3]) { a[0] = R[k], a[1] = R[3 + k], a[2] = R[6 + k]; }

/* probe points of a shape (world centre, radius): points a contact plane or face could touch */
static int probe_count(const kn_nshape* s) {
  switch (s->shape->type) {
    case KN_SHAPE_SPHERE: return 1;
    case KN_SHAPE_BOX: return 8;
    case KN_SHAPE_CYLINDER: return 16;
    case KN_SHAPE_CAPSULE: return 2;
    case KN_SHAPE_MESH: return s->mesh ? s->mesh->nv : 0;
    case KN_SHAPE_HALFSPACE: return 0;
  }
  return 0;
}
static double probe_get(const kn_nshape* s, int i, double c[3]) {
  double xl[3] = {0, 0, 0}, r = 0;
  const double* sz = s->shape->size;
  switch (s->shape->type) {
    case KN_SHAPE_SPHERE: r = sz[0]; break;
    case KN_SHAPE_BOX:
      for (int k = 0; k < 3; ++k) xl[k] = ((i >> k) & 1 ? 0.5 : -0.5) * sz[k];
      break;
    case KN_SHAPE_CYLINDER: {
      double th = 0.78539816339744830962 * (i % 8);
      xl[0] = sz[0] * cos(th), xl[1] = sz[0] * sin(th), xl[2] = (i < 8 ? -0.5 : 0.5) * sz[1];
      break;
    }
    case KN_SHAPE_CAPSULE: xl[2] = (i == 0 ? -0.5 : 0.5) * sz[1], r = sz[0]; break;
    case KN_SHAPE_MESH: memcpy(xl, &s->mesh->v[3 * i], sizeof xl); break;
    case KN_SHAPE_HALFSPACE: break;
  }
  to_world(s->X, xl, c);
  return r;
}

//---- sphere pairs ----

static int sphere_sphere(const kn_nshape* A, const kn_nshape* B, emitter* em) {
  const double *ca = A->X->p, *cb = B->X->p;
  double ra = A->shape->size[0], rb = B->shape->size[0];
  double d[3] = {cb[0] - ca[0], cb[1] - ca[1], cb[2] - ca[2]}, l = sqrt(dot3(d, d)), n[3] = {0, 0, 1};
  if (l > 0) n[0] = d[0] / l, n[1] = d[1] / l, n[2] = d[2] / l;
  double pa[3], pb[3];
  for (int k = 0; k < 3; ++k) pa[k] = ca[k] + ra * n[k], pb[k] = cb[k] - rb * n[k];
  return emit(em, pa, pb, n, l - ra - rb);
}

/* a ball (centre c, radius r) of S1 against the signed distance of S2 */
static int ball_vs_sdf(const double c[3], double r, const kn_nshape* S2, emitter* em) {
  double g[3];
  double d = sdf_world(S2, c, g);
  if (!(d - r < em->margin)) return 1;
  double n[3] = {-g[0], -g[1], -g[2]}, p1[3], p2[3];
  for (int k = 0; k < 3; ++k) p1[k] = c[k] - r * g[k], p2[k] = c[k] - d * g[k];
  return emit(em, p1, p2, n, d - r);
}

//---- half-space pairs ----

/* probe points of X against the plane of H; x_first says whether X is the core's S1 */
static int halfspace_probes(const kn_nshape* X, const kn_nshape* H, int x_first, emitter* em) {
  double z[3], o[3];
  axis_col(H->X->R, 2, z);
  memcpy(o, H->X->p, sizeof o);
  int np = probe_count(X);
  /* culling (em->cull): the plane in a mesh's own frame; the mesh's bounding sphere, then each
   * vertex, is skipped when above the plane by more than the margin (plus a relative 1e-9 of the
   * distances involved, so that only vertices the world-frame test below rejects are skipped) */
  int cull_vertices = em->cull && X->shape->type == KN_SHAPE_MESH;
  double zl[3], ol[3], cut = 0;
  if (cull_vertices) {
    const kn_mesh_data* m = X->mesh;
    kn_mat3_tvec(X->X->R, z, zl);
    to_local(X->X, o, ol);
    cut = em->margin + 1e-9 * (1 + m->sphere_r + sqrt(dot3(ol, ol)));
    double dc[3] = {m->sphere_c[0] - ol[0], m->sphere_c[1] - ol[1], m->sphere_c[2] - ol[2]};
    if (dot3(dc, zl) - m->sphere_r > cut) return 1;
  }
  for (int i = 0; i < np + 2; ++i) {
    double c[3], r;
    if (cull_vertices && i < np) {
      const double* v = &X->mesh->v[3 * i];
      double dv[3] = {v[0] - ol[0], v[1] - ol[1], v[2] - ol[2]};
      if (dot3(dv, zl) > cut) continue;
    }
    if (i < np) {
      r = probe_get(X, i, c);
    } else {
      /* cylinder: the deepest point of each rim circle, which the 8 sampled points may miss */
      if (X->shape->type != KN_SHAPE_CYLINDER) break;
      double a[3], u[3];
      axis_col(X->X->R, 2, a);
      double za = dot3(z, a);
      for (int k = 0; k < 3; ++k) u[k] = -(z[k] - za * a[k]);
      double l = sqrt(dot3(u, u));
      if (l < 1e-9) break;
      double s = (i == np ? -0.5 : 0.5) * X->shape->size[1];
      for (int k = 0; k < 3; ++k) c[k] = X->X->p[k] + s * a[k] + X->shape->size[0] * u[k] / l;
      r = 0;
    }
    double dc[3] = {c[0] - o[0], c[1] - o[1], c[2] - o[2]};
    double phi = dot3(dc, z) - r;
    if (!(phi < em->margin)) continue;
    double px[3], ph[3], nxh[3] = {-z[0], -z[1], -z[2]};
    for (int k = 0; k < 3; ++k) px[k] = c[k] - r * z[k], ph[k] = px[k] - phi * z[k];
    int ok = x_first ? emit(em, px, ph, nxh, phi) : emit(em, ph, px, z, phi);
    if (!ok) return 0;
  }
  return 1;
}

//---- capsule-capsule ----

/* closest points of segments p1q1 and p2q2 (Ericson §5.1.9) */
static void segment_segment(const double p1[3], const double q1[3], const double p2[3], const double q2[3],
                            double c1[3], double c2[3]) {
  double d1[3], d2[3], r[3];
  for (int k = 0; k < 3; ++k) d1[k] = q1[k] - p1[k], d2[k] = q2[k] - p2[k], r[k] = p1[k] - p2[k];
  double a = dot3(d1, d1), e = dot3(d2, d2), f = dot3(d2, r), s, t;
  const double eps = 1e-18;
  if (a <= eps && e <= eps) {
    s = t = 0;
  } else if (a <= eps) {
    s = 0, t = fmin(1, fmax(0, f / e));
  } else {
    double c = dot3(d1, r);
    if (e <= eps) {
      t = 0, s = fmin(1, fmax(0, -c / a));
    } else {
      double b = dot3(d1, d2), den = a * e - b * b;
      s = den > eps * a * e ? fmin(1, fmax(0, (b * f - c * e) / den)) : 0;
      t = (b * s + f) / e;
      if (t < 0) t = 0, s = fmin(1, fmax(0, -c / a));
      else if (t > 1) t = 1, s = fmin(1, fmax(0, (b - c) / a));
    }
  }
  for (int k = 0; k < 3; ++k) c1[k] = p1[k] + s * d1[k], c2[k] = p2[k] + t * d2[k];
}

static int balls(const double c1[3], double r1, const double c2[3], double r2, emitter* em) {
  double d[3] = {c2[0] - c1[0], c2[1] - c1[1], c2[2] - c1[2]}, l = sqrt(dot3(d, d)), n[3] = {0, 0, 1};
  if (l > 0) n[0] = d[0] / l, n[1] = d[1] / l, n[2] = d[2] / l;
  double p1[3], p2[3];
  for (int k = 0; k < 3; ++k) p1[k] = c1[k] + r1 * n[k], p2[k] = c2[k] - r2 * n[k];
  return emit(em, p1, p2, n, l - r1 - r2);
}

static int capsule_capsule(const kn_nshape* A, const kn_nshape* B, emitter* em) {
  double ea[2][3], eb[2][3];
  for (int i = 0; i < 2; ++i) probe_get(A, i, ea[i]), probe_get(B, i, eb[i]);
  double ra = A->shape->size[0], rb = B->shape->size[0], c1[3], c2[3];
  segment_segment(ea[0], ea[1], eb[0], eb[1], c1, c2);
  if (!balls(c1, ra, c2, rb, em)) return 0;
  /* ends against the other segment: a second point when the capsules lie side by side */
  for (int i = 0; i < 2; ++i) {
    segment_segment(ea[i], ea[i], eb[0], eb[1], c1, c2);
    if (!balls(c1, ra, c2, rb, em)) return 0;
  }
  for (int i = 0; i < 2; ++i) {
    segment_segment(ea[0], ea[1], eb[i], eb[i], c1, c2);
    if (!balls(c1, ra, c2, rb, em)) return 0;
  }
  return 1;
}

//---- libccd convex pairs ----

typedef struct {
  const kn_nshape* s;
  double inflate;
  int hint;         /* mesh: the hull vertex the last support call ended at (hill climbing's start) */
  int scan;         /* mesh: scan every vertex instead (the reference for tests) */
} ccd_obj;

static void support_local(ccd_obj* o, const double d[3], double out[3]) {
  const kn_nshape* s = o->s;
  const double* sz = s->shape->size;
  out[0] = out[1] = out[2] = 0;
  switch (s->shape->type) {
    case KN_SHAPE_SPHERE: {
      double l = sqrt(dot3(d, d));
      if (l > 0)
        for (int k = 0; k < 3; ++k) out[k] = sz[0] * d[k] / l;
      break;
    }
    case KN_SHAPE_BOX:
      for (int k = 0; k < 3; ++k) out[k] = (d[k] < 0 ? -0.5 : 0.5) * sz[k];
      break;
    case KN_SHAPE_CYLINDER: {
      double l = hypot(d[0], d[1]);
      if (l > 0) out[0] = sz[0] * d[0] / l, out[1] = sz[0] * d[1] / l;
      out[2] = (d[2] < 0 ? -0.5 : 0.5) * sz[1];
      break;
    }
    case KN_SHAPE_CAPSULE: {
      double l = sqrt(dot3(d, d));
      if (l > 0)
        for (int k = 0; k < 3; ++k) out[k] = sz[0] * d[k] / l;
      out[2] += (d[2] < 0 ? -0.5 : 0.5) * sz[1];
      break;
    }
    case KN_SHAPE_MESH: {
      /* the convex hull's support is the farthest vertex: by hill climbing on the hull's vertex
       * graph from the last call's vertex, or (the reference) by a scan of the hull's vertices, or
       * (no hull) of every vertex. The reference scans hull vertices only, as the climb returns
       * them: a mesh vertex inside a hull face (a cube's face centre) ties with the face's corners
       * and, as a support point, leaves EPA on polytopes (ccd_deepest) a degenerate face */
      const kn_mesh_data* m = s->mesh;
      if (m->hull.nv > 0 && !o->scan) {
        o->hint = kn_hull_support(&m->hull, d, o->hint);
        memcpy(out, &m->hull.v[3 * o->hint], 3 * sizeof(double));
        break;
      }
      const double* vs = m->hull.nv > 0 ? m->hull.v : m->v;
      int nvs = m->hull.nv > 0 ? m->hull.nv : m->nv;
      double best = -INFINITY;
      for (int i = 0; i < nvs; ++i) {
        double v = dot3(&vs[3 * i], d);
        if (v > best) best = v, memcpy(out, &vs[3 * i], 3 * sizeof(double));
      }
      break;
    }
    case KN_SHAPE_HALFSPACE: break;
  }
}

static void ccd_support(const void* obj, const ccd_vec3_t* dir, ccd_vec3_t* vec) {
  ccd_obj* o = (ccd_obj*)obj; /* libccd passes our own non-const object; the hint changes */
  double dl[3], sl[3], sw[3];
  kn_mat3_tvec(o->s->X->R, dir->v, dl);
  support_local(o, dl, sl);
  to_world(o->s->X, sl, sw);
  double l = sqrt(dot3(dir->v, dir->v));
  for (int k = 0; k < 3; ++k) vec->v[k] = sw[k] + (l > 0 ? o->inflate * dir->v[k] / l : 0);
}

static void ccd_center(const void* obj, ccd_vec3_t* c) {
  const ccd_obj* o = obj;
  double cl[3] = {0, 0, 0};
  if (o->s->shape->type == KN_SHAPE_MESH) memcpy(cl, o->s->mesh->centroid, sizeof cl);
  to_world(o->s->X, cl, c->v);
}

/* (polytopes: 0 never, 1 small ones, 2 any two convex polytopes (the convex patch, which needs only
 * the normal: the witness points of larger hulls are libccd's position)) => 1, or 2 when the
 * uninflated EPA gave the normal; 0 none.
 * libccd EPA on (S1 inflated by margin, S2): phi = margin - depth; the witness points sit at the
 * midpoint libccd reports +- half the inflated depth along n (n from S1 into S2).
 * A mesh and another small polytope that overlap by more than 1e-6 go to EPA without the inflation
 * instead: the same depth in exact arithmetic (PD(S1 + ball(r), S2) = PD(S1, S2) + r when S1 and
 * S2 overlap), but on polytopes EPA ends after a few faces, exact to its tolerance, where on the
 * inflated shape's round edges it adds many more faces (~30 k instructions a call for a gripper pad
 * on a cube mesh) and still ends short: by up to 8e-5 m in depth and 4e-3 in the normal for a box
 * and a cube mesh (tests/contact/test_polytope_epa.c). libccd's position on polytopes (the mean of
 * the nearer half of all of EPA's vertices) can be centimetres from the contact, so the witness
 * points are the contact features' overlap (kn_polytope_witness, polytope.c). Box-box pairs (box_box's edge-axis
 * fallback) keep the inflated EPA, so that the primitive scenes and their golden baselines do not
 * move. */
static int ccd_deepest(const kn_nshape* S1, const kn_nshape* S2, double margin, int scan, int polytopes, double n[3],
                       double p1[3], double p2[3], double* phi) {
  ccd_obj o1 = {S1, fmax(margin, 0), 0, scan}, o2 = {S2, 0, 0, scan};
  ccd_t ccd;
  CCD_INIT(&ccd);
  ccd.support1 = ccd_support, ccd.support2 = ccd_support;
  ccd.center1 = ccd_center, ccd.center2 = ccd_center;
  ccd.max_iterations = 200;
  ccd.epa_tolerance = 1e-8;
  ccd.dist_tolerance = 1e-10;
  ccd_real_t depth;
  ccd_vec3_t dir, pos;
  int small = kn_polytope_small(S1) && kn_polytope_small(S2);
  if (((polytopes == 1 && small) || (polytopes == 2 && kn_convex_polytope(S1) && kn_convex_polytope(S2))) &&
      (S1->shape->type == KN_SHAPE_MESH || S2->shape->type == KN_SHAPE_MESH)) {
    ccd_obj q1 = {S1, 0, 0, scan}, q2 = {S2, 0, 0, scan};
    if (ccdGJKPenetration(&q1, &q2, &ccd, &depth, &dir, &pos) == 0 && depth > 1e-6) {
      double l = sqrt(dot3(dir.v, dir.v));
      if (l > 0) {
        for (int k = 0; k < 3; ++k) n[k] = dir.v[k] / l;
        *phi = -depth;
        if (small) kn_polytope_witness(S1, S2, n, depth, p1, p2);
        else memcpy(p1, pos.v, sizeof pos.v), memcpy(p2, pos.v, sizeof pos.v); /* unused: the patch's own */
        return 2;
      }
    }
  }
  if (ccdGJKPenetration(&o1, &o2, &ccd, &depth, &dir, &pos) != 0) return 0;
  double l = sqrt(dot3(dir.v, dir.v));
  if (!(l > 0)) return 0;
  for (int k = 0; k < 3; ++k) n[k] = dir.v[k] / l;
  *phi = o1.inflate - depth;
  for (int k = 0; k < 3; ++k) {
    p1[k] = pos.v[k] + 0.5 * depth * n[k] - o1.inflate * n[k];
    p2[k] = pos.v[k] - 0.5 * depth * n[k];
  }
  return 1;
}

/* probe points of P against the faces of F whose outward normal agrees with the pair normal n
 * (from S1 to S2; p_is_s2 says which side P is). A probe whose SDF gradient disagrees with n but
 * which lies on or inside F (a corner flush with a side face, as for aligned faces) is measured
 * along n from the deepest point's plane instead. */
static int face_probes(const kn_nshape* P, const kn_nshape* F, const double n[3], const double p1[3],
                       const double p2[3], double hull_phi, int p_is_s2, emitter* em) {
  const double cos_tol = 0.9;
  int np = probe_count(P);
  /* culling (em->cull): a probe is measured only when it may lie within reach = margin + 1e-9 of
   * F, the acceptance test below; the tests are conservative by a relative 1e-9 of F's size, so
   * a culled probe is one the exhaustive loop would have rejected (bit-identical points) */
  double reach = em->margin + 1e-9, sphere_P[3], sphere_r = INFINITY, slack = 0;
  kn_probe_slab slab = {.cut = INFINITY};
  if (em->cull) {
    kn_probe_cull_sphere(F, P, sphere_P, &sphere_r);
    slack = 1e-9 * (1 + sphere_r);
    /* F lies below its support plane along the normal towards P (F's hull is, and F is inside
     * its hull): a probe more than the reach above that plane is more than the reach from F */
    double nF[3];
    for (int k = 0; k < 3; ++k) nF[k] = p_is_s2 ? n[k] : -n[k];
    kn_probe_slab_init(F, P, nF, reach + slack, &slab);
  }
  for (int i = 0; i < np; ++i) {
    double c[3], g[3], d;
    if (em->cull && P->shape->type == KN_SHAPE_MESH &&
        (kn_probe_slab_cull(&slab, &P->mesh->v[3 * i], 0) ||
         kn_probe_cull_vertex(&P->mesh->v[3 * i], sphere_P, sphere_r + reach + slack)))
      continue; /* mesh vertex above F's support plane or outside F's bounding sphere, by the reach */
    double r = probe_get(P, i, c);
    if (em->cull && P->shape->type != KN_SHAPE_MESH && kn_probe_slab_cull(&slab, c, r)) continue;
    if (em->cull && F->shape->type == KN_SHAPE_MESH) {
      /* F's box in its frame, then a nearest-triangle search that stops at the reach: a probe
       * outside by more is rejected, one found nearer has the exhaustive search's distance */
      double xl[3], gl[3];
      to_local(F->X, c, xl);
      double bound = reach + r + slack;
      if (kn_probe_cull_box(xl, F->mesh->lo, F->mesh->hi, bound)) continue;
      int near;
      double sd = kn_mesh_signed_distance_bounded(F->mesh, xl, bound, gl, &near);
      if (!near) {
        /* at least `bound` from F's surface: outside (rejected) or inside that deep. A probe
         * centre (a point of P) inside F at depth D is inside hull(F) at depth >= D, so the hulls
         * overlap by at least D: with the hulls' overlap -hull_phi (EPA, to its tolerance 1e-8;
         * 1e-5 allowed) below the bound, the probe is outside */
        if (-hull_phi < bound - 1e-5) continue;
        sd = kn_mesh_signed_distance(F->mesh, xl, gl);
      }
      kn_mat3_vec(F->X->R, gl, g);
      d = sd - r;
    } else {
      d = sdf_world(F, c, g) - r;
    }
    if (!(d <= em->margin + 1e-9)) continue; /* flush probes (d = 0 at margin 0) go on below */
    double toward = p_is_s2 ? dot3(g, n) : -dot3(g, n);
    double gn[3]; /* outward normal of F used at this probe */
    if (toward >= cos_tol) {
      memcpy(gn, g, sizeof gn);
    } else {
      if (d > 1e-9) continue;
      for (int k = 0; k < 3; ++k) gn[k] = p_is_s2 ? n[k] : -n[k];
      /* height of the probe's surface point over F's deepest witness along the normal */
      double cs[3], dd[3];
      for (int k = 0; k < 3; ++k) cs[k] = c[k] - r * gn[k], dd[k] = cs[k] - (p_is_s2 ? p1[k] : p2[k]);
      d = dot3(dd, gn);
      if (!(d < em->margin)) continue;
    }
    double pp[3], pf[3];
    for (int k = 0; k < 3; ++k) pp[k] = c[k] - r * gn[k], pf[k] = pp[k] - d * gn[k];
    int ok;
    if (p_is_s2) {
      ok = emit(em, pf, pp, gn, d);
    } else {
      double m[3] = {-gn[0], -gn[1], -gn[2]};
      ok = emit(em, pp, pf, m, d);
    }
    if (!ok) return 0;
  }
  return 1;
}

static int convex_pair(const kn_nshape* S1, const kn_nshape* S2, emitter* em) {
  double n[3], p1[3], p2[3], phi;
  /* two convex polytopes (not both boxes; kn_narrow_pair only, the references keep the probes):
   * the patch of the best separating axis near the EPA normal (convex_patch.c); overlapping hulls
   * of any size take the uninflated EPA, whose normal is exact to its tolerance (the inflated one
   * was 19 degrees off on a 98-vertex sphere hull: tests/contact/test_convex_patch.c) */
  int both_convex = em->patch && kn_convex_polytope(S1) && kn_convex_polytope(S2);
  if (both_convex) {
    int how = ccd_deepest(S1, S2, em->margin, em->scan, 2, n, p1, p2, &phi);
    if (!how || !(phi < em->margin)) return 1;
    kn_patch_point pts[KN_CONVEX_PATCH_CAP];
    int m = kn_convex_patch(S1, S2, n, how == 2, 0, em->margin, pts, KN_CONVEX_PATCH_CAP);
    for (int i = 0; i < m; ++i)
      if (!emit(em, pts[i].p1, pts[i].p2, pts[i].n, pts[i].phi)) return 0;
    if (m >= 0) return 1;
  }
  if (!ccd_deepest(S1, S2, em->margin, em->scan, 1, n, p1, p2, &phi)) return 1;
  if (!(phi < em->margin)) return 1;
  /* a non-convex mesh against a mesh or a box, their hulls apart by more than KN_HULL_APART (the
   * patch's separating axis proves it): the speculative contacts of the hulls' patch, which contain
   * the meshes (no tunnelling; the probes would give the same or larger gaps); nearer hulls, the
   * probes */
  if (em->patch && !both_convex && phi > KN_HULL_APART && kn_hull_polytope(S1) && kn_hull_polytope(S2)) {
    kn_patch_point pts[KN_CONVEX_PATCH_CAP];
    int m = kn_convex_patch(S1, S2, n, 0, 1, em->margin, pts, KN_CONVEX_PATCH_CAP);
    double lo = INFINITY;
    for (int i = 0; i < m; ++i) lo = fmin(lo, pts[i].phi);
    if (m == 0) return 1; /* the hulls are apart by the margin or more */
    if (m > 0 && lo > KN_HULL_APART) {
      for (int i = 0; i < m; ++i)
        if (!emit(em, pts[i].p1, pts[i].p2, pts[i].n, pts[i].phi)) return 0;
      return 1;
    }
  }
  /* probes first so that face contacts keep their exact corner points; the deepest point is
   * added after them unless it duplicates one */
  if (!face_probes(S2, S1, n, p1, p2, phi, 1, em)) return 0;
  if (!face_probes(S1, S2, n, p1, p2, phi, 0, em)) return 0;
  return emit(em, p1, p2, n, phi);
}

//---- box-box ----

typedef kn_obox obox;

static void obox_of(const kn_nshape* s, obox* b) {
  memcpy(b->c, s->X->p, sizeof b->c);
  for (int k = 0; k < 3; ++k) axis_col(s->X->R, k, b->a[k]), b->h[k] = 0.5 * s->shape->size[k];
}


/* reference face of R (axis k, normal nr pointing at I); the incident face of I clipped to it */
static int box_face_clip(const obox* R, const obox* I, int k, const double nr[3], int ref_is_s1, emitter* em) {
  int j = 0;
  double best = -1;
  for (int q = 0; q < 3; ++q) {
    double v = fabs(dot3(I->a[q], nr));
    if (v > best) best = v, j = q;
  }
  double s = dot3(I->a[j], nr) > 0 ? -1.0 : 1.0; /* incident face faces the reference */
  int u = (j + 1) % 3, v = (j + 2) % 3;
  double poly[8][3], tmp[8][3];
  const double su[4] = {1, -1, -1, 1}, sv[4] = {1, 1, -1, -1};
  for (int i = 0; i < 4; ++i)
    for (int q = 0; q < 3; ++q)
      poly[i][q] = I->c[q] + s * I->h[j] * I->a[j][q] + su[i] * I->h[u] * I->a[u][q] + sv[i] * I->h[v] * I->a[v][q];
  int np = 4;
  for (int side = 1; side <= 2; ++side) {
    int e = (k + side) % 3;
    double ep[3], em_[3];
    for (int q = 0; q < 3; ++q) ep[q] = R->a[e][q], em_[q] = -R->a[e][q];
    np = kn_clip_poly(poly, np, ep, dot3(R->c, ep) + R->h[e], tmp);
    np = kn_clip_poly(tmp, np, em_, dot3(R->c, em_) + R->h[e], poly);
  }
  double plane = dot3(R->c, nr) + R->h[k];
  for (int i = 0; i < np; ++i) {
    double phi = dot3(poly[i], nr) - plane, pr[3];
    for (int q = 0; q < 3; ++q) pr[q] = poly[i][q] - phi * nr[q];
    int ok;
    if (ref_is_s1) {
      ok = emit(em, pr, poly[i], nr, phi);
    } else {
      double m[3] = {-nr[0], -nr[1], -nr[2]};
      ok = emit(em, poly[i], pr, m, phi);
    }
    if (!ok) return 0;
  }
  return 1;
}

/* the line contact of parallel edges (A's axis i) along L, lines sep apart: the two ends of the
 * overlap of the edges' projections on the edge direction; the edges that pass beside each other
 * (the nearest features are then a corner) go to libccd */
static int parallel_edge_contact(const kn_nshape* S1, const kn_nshape* S2, const obox* A, const obox* B, int i, int j,
                                 const double L[3], const double ca[3], const double cb[3], double sep, emitter* em) {
  const double* e = A->a[i];
  double ta = dot3(e, ca), tb = dot3(e, cb);
  double lo = fmax(ta - A->h[i], tb - B->h[j]), hi = fmin(ta + A->h[i], tb + B->h[j]);
  if (!(hi >= lo)) return convex_pair(S1, S2, em);
  double t[2] = {lo, hi};
  int np = hi - lo > 1e-9 * (A->h[i] + B->h[j]) ? 2 : 1;
  for (int m = 0; m < np; ++m) {
    double p1[3], p2[3];
    for (int k = 0; k < 3; ++k) p1[k] = ca[k] + (t[m] - ta) * e[k], p2[k] = cb[k] + (t[m] - tb) * e[k];
    if (!emit(em, p1, p2, L, sep)) return 0;
  }
  return 1;
}

static int box_box(const kn_nshape* S1, const kn_nshape* S2, emitter* em) {
  obox A, B;
  obox_of(S1, &A), obox_of(S2, &B);
  double d[3] = {B.c[0] - A.c[0], B.c[1] - A.c[1], B.c[2] - A.c[2]};
  double best_face = -INFINITY, best_edge = -INFINITY;
  int face = -1;
  for (int i = 0; i < 6; ++i) {
    const double* L = i < 3 ? A.a[i] : B.a[i - 3];
    double ra = 0, rb = 0;
    for (int k = 0; k < 3; ++k) ra += A.h[k] * fabs(dot3(A.a[k], L)), rb += B.h[k] * fabs(dot3(B.a[k], L));
    double sep = fabs(dot3(d, L)) - ra - rb;
    if (sep > best_face) best_face = sep, face = i;
  }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double L[3];
      kn_vec3_cross(A.a[i], B.a[j], L);
      double l = sqrt(dot3(L, L));
      if (l < 1e-6) continue; /* parallel edges: covered by the face axes */
      for (int k = 0; k < 3; ++k) L[k] /= l;
      double ra = 0, rb = 0;
      for (int k = 0; k < 3; ++k) ra += A.h[k] * fabs(dot3(A.a[k], L)), rb += B.h[k] * fabs(dot3(B.a[k], L));
      double sep = fabs(dot3(d, L)) - ra - rb;
      if (sep > best_edge) best_edge = sep;
    }
  if (fmax(best_face, best_edge) >= em->margin) return 1;
  /* separated boxes (a face axis separates) with parallel edges: their lines' axis, exact where the
   * face and cross-product axes only bound the distance from below (the A-frame of two cards, top
   * edge on top edge); overlapping boxes keep the 15 axes, exact for the depth */
  if (best_face > 0) {
    double bp = -INFINITY, L[3] = {0, 0, 0}, ca[3] = {0, 0, 0}, cb[3] = {0, 0, 0};
    int pi = -1, pj = -1;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double c[3], s = bp;
        kn_vec3_cross(A.a[i], B.a[j], c);
        if (sqrt(dot3(c, c)) >= 1e-6) continue;
        kn_box_parallel_edge_axis(&A, &B, i, j, &bp, L, ca, cb);
        if (bp > s) pi = i, pj = j;
      }
    if (pi >= 0 && bp >= em->margin) return 1;
    /* any axis bounds the distance from below and bp is exact: it wins when larger, by rounding's
     * margin (a face on a face ties it) */
    double other = fmax(best_face, best_edge), size = sqrt(dot3(A.h, A.h)) + sqrt(dot3(B.h, B.h));
    if (pi >= 0 && bp > other + 1e-12 * size)
      return parallel_edge_contact(S1, S2, &A, &B, pi, pj, L, ca, cb, bp, em);
  }
  /* prefer face contacts: an edge axis must separate clearly better (a relative and absolute slack
   * keeps resting stacks on their faces) */
  if (best_edge > best_face + 1e-6 + 0.05 * fabs(best_face)) return convex_pair(S1, S2, em);
  if (face < 3) {
    double nr[3];
    double s = dot3(d, A.a[face]) >= 0 ? 1.0 : -1.0;
    for (int k = 0; k < 3; ++k) nr[k] = s * A.a[face][k];
    return box_face_clip(&A, &B, face, nr, 1, em);
  }
  int f = face - 3;
  double nr[3];
  double s = dot3(d, B.a[f]) >= 0 ? -1.0 : 1.0;
  for (int k = 0; k < 3; ++k) nr[k] = s * B.a[f][k];
  return box_face_clip(&B, &A, f, nr, 0, em);
}

//---- dispatch ----

static int core(const kn_nshape* S1, const kn_nshape* S2, emitter* em) {
  kn_shape_type t1 = S1->shape->type, t2 = S2->shape->type;
  if (t1 == KN_SHAPE_SPHERE) {
    if (t2 == KN_SHAPE_SPHERE) return sphere_sphere(S1, S2, em);
    return ball_vs_sdf(S1->X->p, S1->shape->size[0], S2, em);
  }
  if (t1 == KN_SHAPE_HALFSPACE && t2 == KN_SHAPE_HALFSPACE) return 1;
  if (t2 == KN_SHAPE_HALFSPACE) return halfspace_probes(S1, S2, 1, em);
  if (t1 == KN_SHAPE_HALFSPACE) return halfspace_probes(S2, S1, 0, em);
  if (t1 == KN_SHAPE_CAPSULE && t2 == KN_SHAPE_CAPSULE) return capsule_capsule(S1, S2, em);
  if (t1 == KN_SHAPE_BOX && t2 == KN_SHAPE_BOX) return box_box(S1, S2, em);
  return convex_pair(S1, S2, em);
}

/* one pair, with or without probe culling, with the hull climb or a scan as libccd's support */
static kn_status narrow_pair(const kn_nshape* A, const kn_nshape* B, int ia, int ib, double margin, int cull,
                             int scan, int patch, kn_point_buf* out) {
  emitter em = {
      .out = out, .start = out->count, .ia = ia, .ib = ib, .margin = margin, .cull = cull, .scan = scan, .patch = patch};
  out->grid_start = -1; /* no pair indexed yet (an index left by an earlier call is stale) */
  em.mat = kn_contact_material_combine(&A->material, &B->material);
  em.kA = A->material.stiffness, em.kB = B->material.stiffness;
  int ok;
  if (A->shape->type <= B->shape->type) {
    ok = core(A, B, &em);
  } else {
    em.flip = 1;
    ok = core(B, A, &em);
  }
  return ok ? KN_OK : KN_ERR_NOMEM;
}

// (shapes A and B at their poses, collider indices, margin) => points appended to out
kn_status kn_narrow_pair(const kn_nshape* A, const kn_nshape* B, int ia, int ib, double margin, kn_point_buf* out) {
  return narrow_pair(A, B, ia, ib, margin, 1, 0, 1, out);
}

// (the same) => the culled probe path also for two convex polytopes (no convex patch)
kn_status kn_narrow_pair_probes(const kn_nshape* A, const kn_nshape* B, int ia, int ib, double margin,
                                kn_point_buf* out) {
  return narrow_pair(A, B, ia, ib, margin, 1, 0, 0, out);
}

// (the same) => the same points, every probe measured (no culling): the culling tests' reference
kn_status kn_narrow_pair_exhaustive(const kn_nshape* A, const kn_nshape* B, int ia, int ib, double margin,
                                    kn_point_buf* out) {
  return narrow_pair(A, B, ia, ib, margin, 0, 0, 0, out);
}

// (the same) => no culling, libccd's mesh support by a scan of the hull vertices: the hull climb's reference
kn_status kn_narrow_pair_scan(const kn_nshape* A, const kn_nshape* B, int ia, int ib, double margin,
                              kn_point_buf* out) {
  return narrow_pair(A, B, ia, ib, margin, 0, 1, 0, out);
}

// (S1, S2 at their poses, margin, polytope path on/off) => the pair's deepest point as convex_pair
// finds it (1), or none (0): the reference test for the uninflated EPA of small polytopes
int kn_narrow_deepest(const kn_nshape* S1, const kn_nshape* S2, double margin, int polytopes, double n[3], double p1[3],
                      double p2[3], double* phi) {
  return ccd_deepest(S1, S2, margin, 0, polytopes ? 1 : 0, n, p1, p2, phi) != 0;
}
