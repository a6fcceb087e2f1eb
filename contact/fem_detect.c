/* Contact detection of FEM bodies: vertex-vs-rigid, vertex-vs-FEM-surface, rigid-feature-vs-
 * FEM-face and (set_polygon) FEM-edge-crossing-vs-FEM-face, over a per-body AABB tree of the
 * deformed surface (fem_surface.c), from plain views of the bodies and colliders (conventions in
 * contact/contact.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/collision_internal.h" /* colliders' shapes, mesh colliders' vertices (kn_mesh_data) */
#include "contact/contact.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static double dot3(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void cross3(const double* a, const double* b, double* c) {
  c[0] = a[1] * b[2] - a[2] * b[1], c[1] = a[2] * b[0] - a[0] * b[2], c[2] = a[0] * b[1] - a[1] * b[0];
}
static double norm3(const double* a) { return sqrt(dot3(a, a)); }

struct kn_contact_fem_detector {
  int nfem;
  kn_contact_surface** surf;
  unsigned* stamp;          /* per vertex of the largest body: double-counting marks */
  unsigned* stamp_a;        /* the same for the other body of an FEM-FEM pair */
  unsigned stamp_gen;
  double* pts;              /* rigid feature points, 3 per, growable */
  int pts_cap;
  int brute;                /* 1: brute-force surface queries (tests compare the two) */
  int polygon;              /* kn_contact_fem_detector_set_polygon */
  double reach;             /* kn_contact_fem_detector_set_reach [m] */
};

//---- detector ----

kn_status kn_contact_fem_detector_create(const kn_contact_fem* fems, int nfem, int brute, kn_contact_fem_detector** out,
                                         kn_error* err) {
  kn_contact_fem_detector* d = kn_calloc(1, sizeof *d);
  if (!d) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  d->brute = brute;
  d->surf = kn_calloc((size_t)nfem + 1, sizeof *d->surf);
  int maxv = 1;
  for (int i = 0; i < nfem; i++) maxv = fems[i].nvert > maxv ? fems[i].nvert : maxv;
  d->stamp = kn_calloc((size_t)maxv, sizeof *d->stamp);
  d->stamp_a = kn_calloc((size_t)maxv, sizeof *d->stamp_a);
  int ok = d->surf && d->stamp && d->stamp_a;
  if (ok) d->nfem = nfem;
  for (int i = 0; ok && i < nfem; i++) ok = (d->surf[i] = kn_contact_surface_create(&fems[i])) != NULL;
  if (!ok) {
    kn_contact_fem_detector_free(d);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  *out = d;
  return KN_OK;
}

void kn_contact_fem_detector_set_polygon(kn_contact_fem_detector* d, int on) { d->polygon = on; }
void kn_contact_fem_detector_set_reach(kn_contact_fem_detector* d, double reach) { d->reach = reach; }

void kn_contact_fem_detector_free(kn_contact_fem_detector* d) {
  if (!d) return;
  for (int i = 0; d->surf && i < d->nfem; i++) kn_contact_surface_free(d->surf[i]);
  free(d->surf), free(d->stamp), free(d->stamp_a), free(d->pts);
  free(d);
}

// (candidate c) => appended to out with its source (index among this detection's, from base)
static kn_status push(kn_contact_candidate_list* out, int base, const kn_contact_candidate* c, kn_error* err) {
  kn_contact_candidate* x = kn_contact_candidate_push(out, err);
  if (!x) return KN_ERR_NOMEM;
  *x = *c;
  x->source = out->n - 1 - base;
  return KN_OK;
}

static kn_contact_side collider_side(int k) { return (kn_contact_side){KN_SIDE_COLLIDER, k, 0, {0, 0, 0}, {0, 0, 0}}; }

// (FEM body i, nearest point of a surface query) => the side at that point
static kn_contact_side surface_side(int i, const kn_contact_surface_hit* h) {
  kn_contact_side s = {KN_SIDE_SURFACE, i, 3, {0, 0, 0}, {0, 0, 0}};
  memcpy(s.point, h->vert, sizeof s.point);
  memcpy(s.w, h->wt, sizeof s.w);
  return s;
}

// unit n => R_WC with columns t1, t2, n (t1 from the world axis least aligned with n)
static void frame_from_normal(const double n[3], double R[9]) {
  double a[3] = {0, 0, 0};
  int k = fabs(n[0]) < fabs(n[1]) ? (fabs(n[0]) < fabs(n[2]) ? 0 : 2) : (fabs(n[1]) < fabs(n[2]) ? 1 : 2);
  a[k] = 1;
  double dd = dot3(a, n), t1[3], t2[3];
  for (int j = 0; j < 3; j++) t1[j] = a[j] - dd * n[j];
  double l = norm3(t1);
  for (int j = 0; j < 3; j++) t1[j] /= l;
  cross3(n, t1, t2);
  for (int j = 0; j < 3; j++) R[3 * j] = t1[j], R[3 * j + 1] = t2[j], R[3 * j + 2] = n[j];
}

/* 1 when vertex v of F is attached to body `body` of tree `tree` (its contacts with that body's
 * colliders are left out: the attachment holds it there) */
static int attached_to(const kn_contact_fem* b, int v, int tree, int body) {
  for (int k = 0; k < b->nattach; k++)
    if (b->attach_vertex[k] == v && b->target_tree[b->attach_target[k]] == tree &&
        b->target_body[b->attach_target[k]] == body)
      return 1;
  return 0;
}

static void query(const kn_contact_fem_detector* d, int fi, const kn_contact_fem* b, const double* p,
                  kn_contact_surface_hit* h) {
  if (d->brute)
    kn_contact_surface_query_brute(b, p, h);
  else
    kn_contact_surface_query(d->surf[fi], b, p, h);
}

static int outside_box(const double* box, const double* p, double pad) {
  for (int k = 0; k < 3; k++)
    if (p[k] < box[k] - pad || p[k] > box[3 + k] + pad) return 1;
  return 0;
}

// append the world point X (local point pl) to the feature list
static kn_status add_point(kn_contact_fem_detector* d, int* n, const kn_pose* X, const double pl[3], kn_error* err) {
  if (*n == d->pts_cap) {
    int cap = d->pts_cap ? 2 * d->pts_cap : 256;
    double* q = realloc(d->pts, 3 * (size_t)cap * sizeof *q);
    if (!q) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
    d->pts = q, d->pts_cap = cap;
  }
  kn_pose_apply(X, pl, d->pts + 3 * (*n)++);
  return KN_OK;
}

/* a sphere of centre c (world) and radius r => its point deepest toward FEM body fi: c - r n, n the
 * outward normal of the surface point nearest c (exact for a sphere over a locally flat face) */
static kn_status sphere_point(kn_contact_fem_detector* d, int fi, const kn_contact_fem* b, const double c[3], double r,
                              const double* axis, int* n, kn_error* err) {
  kn_contact_surface_hit h;
  query(d, fi, b, c, &h);
  if (h.tri < 0) return KN_OK;
  double dir[3] = {h.n[0], h.n[1], h.n[2]};
  if (axis) { /* a cylinder's side: the deepest point of the cross-section circle */
    double a = dot3(dir, axis);
    for (int k = 0; k < 3; k++) dir[k] -= a * axis[k];
    double l = norm3(dir);
    if (!(l > 1e-9)) return KN_OK;
    for (int k = 0; k < 3; k++) dir[k] /= l;
  }
  kn_pose I;
  kn_pose_identity(&I);
  double p[3] = {c[0] - r * dir[0], c[1] - r * dir[1], c[2] - r * dir[2]};
  return add_point(d, n, &I, p, err);
}

/* (segment p0 + s u, segment q0 q1, edge length h) => 1 with the parameter s on the first when the
 * two cross: their closest points interior to both (not parallel) and nearer than h / 4 */
static int segments_cross(const double p0[3], const double u[3], const double q0[3], const double q1[3], double h,
                          double* s_out) {
  double v[3], r[3];
  for (int k = 0; k < 3; k++) v[k] = q1[k] - q0[k], r[k] = p0[k] - q0[k];
  double uu = dot3(u, u), uv = dot3(u, v), vv = dot3(v, v), ur = dot3(u, r), vr = dot3(v, r), den = uu * vv - uv * uv;
  if (!(den > 1e-12 * uu * vv)) return 0; /* parallel */
  double s = (uv * vr - vv * ur) / den, w = (uu * vr - uv * ur) / den;
  if (!(s > 0 && s < 1 && w > 0 && w < 1)) return 0;
  double g[3];
  for (int k = 0; k < 3; k++) g[k] = p0[k] + s * u[k] - q0[k] - w * v[k];
  *s_out = s;
  return dot3(g, g) < h * h / 16;
}

/* (box collider at X, half extents e, FEM body b, its edge length h) => the points of the box's
 * edges where they cross the FEM surface's edges (d->pts, appended). Two overlapping faces touch
 * over a polygon whose corners are the box's corners in the FEM face, the FEM's vertices in the box
 * (vertex contacts) and these crossings; without them a box on an offset FEM block (or an FEM block
 * on an offset box) is held at two opposite corners of the overlap only and balances on their
 * diagonal. At each crossing (closest points of the two segments interior to both, nearer than
 * h / 4) the two points at h / 32 either side along the box's edge: the one over the FEM face is
 * nearest that face, not its side (the crossing itself is as near both); the other is outside and
 * dropped by the caller's phi test. */
static kn_status edge_crossings(kn_contact_fem_detector* d, int* n, const kn_pose* X, const double e[3],
                                const kn_contact_fem* b, double h, kn_error* err) {
  for (int a = 0; a < 3; a++)
    for (int sg = 0; sg < 4; sg++) {
      int o1 = (a + 1) % 3, o2 = (a + 2) % 3;
      double l0[3], l1[3], p0[3], p1[3], u[3];
      l0[a] = -e[a], l1[a] = e[a];
      l0[o1] = l1[o1] = sg & 1 ? e[o1] : -e[o1];
      l0[o2] = l1[o2] = sg & 2 ? e[o2] : -e[o2];
      kn_pose_apply(X, l0, p0);
      kn_pose_apply(X, l1, p1);
      for (int k = 0; k < 3; k++) u[k] = p1[k] - p0[k];
      double uu = dot3(u, u), L = sqrt(uu);
      if (!(L > 0)) continue;
      for (int t = 0; t < b->nsurf; t++)
        for (int j = 0; j < 3; j++) {
          int va = b->surf[3 * t + j], vb = b->surf[3 * t + (j + 1) % 3];
          if (va > vb) continue; /* each edge of the closed surface once */
          double s;
          if (!segments_cross(p0, u, b->x + 3 * va, b->x + 3 * vb, h, &s)) continue;
          for (int side = -1; side <= 1; side += 2) {
            double sp = s + side * h / (32 * L), pl[3];
            if (!(sp > 0 && sp < 1)) continue;
            for (int k = 0; k < 3; k++) pl[k] = l0[k] + sp * (l1[k] - l0[k]);
            kn_status st = add_point(d, n, X, pl, err);
            if (st) return st;
          }
        }
    }
  return KN_OK;
}

/* (collider k at X, FEM body fi) => its feature points in the world (d->pts, *n of them): box corners
 * and edge points every ~h, the deepest points of spheres, capsule segment spheres, cylinder rims,
 * cap centres and side lines, mesh vertices; none for a half-space */
static kn_status features(kn_contact_fem_detector* d, const kn_collision_scene* cs, int k, const kn_pose* X, int fi,
                          const kn_contact_fem* b, double h, int* n, kn_error* err) {
  const kn_shape* sh = cs->colliders[k].shape;
  kn_status st = KN_OK;
  *n = 0;
  const double* R = X->R;
  double axis[3] = {R[2], R[5], R[8]}; /* local z in the world (row-major R) */
  switch (sh->type) {
    case KN_SHAPE_BOX: {
      double e[3] = {sh->size[0] / 2, sh->size[1] / 2, sh->size[2] / 2};
      for (int c = 0; c < 8 && !st; c++) {
        double pl[3] = {c & 1 ? e[0] : -e[0], c & 2 ? e[1] : -e[1], c & 4 ? e[2] : -e[2]};
        st = add_point(d, n, X, pl, err);
      }
      /* 12 edges: along axis a, at the 4 sign combinations of the other two; interior points only */
      for (int a = 0; a < 3 && !st; a++) {
        int m = (int)ceil(2 * e[a] / h);
        if (m > 64) m = 64;
        for (int s = 0; s < 4 && !st; s++)
          for (int j = 1; j < m && !st; j++) {
            double pl[3];
            int o1 = (a + 1) % 3, o2 = (a + 2) % 3;
            pl[a] = -e[a] + 2 * e[a] * j / m;
            pl[o1] = s & 1 ? e[o1] : -e[o1];
            pl[o2] = s & 2 ? e[o2] : -e[o2];
            st = add_point(d, n, X, pl, err);
          }
      }
      if (!st && d->polygon) st = edge_crossings(d, n, X, e, b, h, err);
      break;
    }
    case KN_SHAPE_SPHERE:
      st = sphere_point(d, fi, b, X->p, sh->size[0], NULL, n, err);
      break;
    case KN_SHAPE_CAPSULE:
    case KN_SHAPE_CYLINDER: {
      double r = sh->size[0], L = sh->size[1];
      int m = (int)ceil(L / h);
      if (m < 1) m = 1;
      if (m > 64) m = 64;
      int cyl = sh->type == KN_SHAPE_CYLINDER;
      for (int j = 0; j <= m && !st; j++) {
        double c[3];
        for (int q = 0; q < 3; q++) c[q] = X->p[q] + (-L / 2 + L * j / m) * axis[q];
        st = sphere_point(d, fi, b, c, r, cyl ? axis : NULL, n, err);
      }
      if (cyl) { /* rims and cap centres */
        int nr = (int)ceil(2 * M_PI * r / h);
        if (nr < 8) nr = 8;
        if (nr > 64) nr = 64;
        for (int s = -1; s <= 1 && !st; s += 2) {
          double pl[3] = {0, 0, s * L / 2};
          st = add_point(d, n, X, pl, err);
          for (int j = 0; j < nr && !st; j++) {
            double an = 2 * M_PI * j / nr, q[3] = {r * cos(an), r * sin(an), s * L / 2};
            st = add_point(d, n, X, q, err);
          }
        }
      }
      break;
    }
    case KN_SHAPE_MESH: {
      const kn_mesh_data* md = cs->mesh[k];
      for (int v = 0; md && v < md->nv && !st; v++) st = add_point(d, n, X, md->v + 3 * v, err);
      break;
    }
    default:
      break; /* half-space: the vertices carry it */
  }
  return st;
}

/* world AABB of collider k (lo, hi); 0 for a half-space (unbounded) */
static int collider_box(const kn_collision_scene* cs, int k, const kn_pose* X, double box[6]) {
  const kn_shape* sh = cs->colliders[k].shape;
  double e[3];
  switch (sh->type) {
    case KN_SHAPE_SPHERE: e[0] = e[1] = e[2] = sh->size[0]; break;
    case KN_SHAPE_BOX: e[0] = sh->size[0] / 2, e[1] = sh->size[1] / 2, e[2] = sh->size[2] / 2; break;
    case KN_SHAPE_CAPSULE:
    case KN_SHAPE_CYLINDER: e[0] = e[1] = sh->size[0], e[2] = sh->size[1] / 2 + sh->size[0]; break;
    case KN_SHAPE_MESH: {
      const kn_mesh_data* md = cs->mesh[k];
      if (!md) return 0;
      /* the local box centred: half extents about its middle */
      double c[3], cw[3];
      for (int q = 0; q < 3; q++) c[q] = (md->lo[q] + md->hi[q]) / 2, e[q] = (md->hi[q] - md->lo[q]) / 2;
      kn_pose_apply(X, c, cw);
      for (int q = 0; q < 3; q++) {
        double r = 0;
        for (int j = 0; j < 3; j++) r += fabs(X->R[3 * q + j]) * e[j];
        box[q] = cw[q] - r, box[3 + q] = cw[q] + r;
      }
      return 1;
    }
    default: return 0;
  }
  for (int q = 0; q < 3; q++) {
    double r = 0;
    for (int j = 0; j < 3; j++) r += fabs(X->R[3 * q + j]) * e[j];
    box[q] = X->p[q] - r, box[3 + q] = X->p[q] + r;
  }
  return 1;
}

//---- FEM-FEM edge crossings (set_polygon) ----

// 1 when segment x0 x1 misses box (lo, hi) padded by pad
static int segment_outside(const double* box, const double* x0, const double* x1, double pad) {
  for (int k = 0; k < 3; k++)
    if (fmax(x0[k], x1[k]) < box[k] - pad || fmin(x0[k], x1[k]) > box[3 + k] + pad) return 1;
  return 0;
}

/* (FEM bodies B = fi and A = gi, box: where their boxes overlap, h: the crossing distance, the
 * candidates from first on that join the two) => the points of B's surface edges where they cross
 * A's surface edges, as contacts of a point on B's edge (its two vertices by weights: the spring's
 * particle) at A's surface (the anchor's face). Two overlapping faces touch over a polygon whose
 * corners are each one's vertices in the other (the vertex contacts) and these crossings; without
 * them an FEM block offset on another stands on the two vertex contacts on the overlap's diagonal
 * (penalty-coulomb-friction.md §6.3). As for a box's edges: the two points at h_B / 32 either side
 * of the crossing along B's edge, the one over A's face kept by the phi test; dropped where the
 * vertices already touching the other body hold more than half the point's weight on either side
 * (they carry it), and near a crossing point kept before (the same corner, the other way round). */
static kn_status fem_crossings(kn_contact_fem_detector* d, const kn_contact_fem* fems, int fi, int gi,
                               const double* box, double h, double margin, int first, kn_contact_candidate_list* out,
                               int base, kn_error* err) {
  const kn_contact_fem *b = &fems[fi], *a = &fems[gi];
  const double hb = kn_contact_surface_edge_length(d->surf[fi]), ha = kn_contact_surface_edge_length(d->surf[gi]);
  const double dedup = (ha + hb) / 16; /* the same corner both ways round: (h_a / 32, h_b / 32) apart */
  /* vertices of B touching A, of A touching B (the vertex contacts, both ways) */
  unsigned gen = ++d->stamp_gen;
  for (int c = base; c < out->n; c++) {
    const kn_contact_candidate* o = &out->c[c];
    if (o->origin != KN_CANDIDATE_FEM_VERTEX_FEM || o->b.n != 1 || !(o->phi < margin)) continue; /* touching */
    if (o->b.body == fi && o->a.body == gi) d->stamp[o->b.point[0]] = gen;
    if (o->b.body == gi && o->a.body == fi) d->stamp_a[o->b.point[0]] = gen;
  }
  for (int t = 0; t < b->nsurf; t++)
    for (int j = 0; j < 3; j++) {
      int va = b->surf[3 * t + j], vb = b->surf[3 * t + (j + 1) % 3];
      const double *p0 = b->x + 3 * va, *p1 = b->x + 3 * vb;
      if (va > vb || segment_outside(box, p0, p1, margin)) continue; /* each edge once */
      double u[3];
      for (int k = 0; k < 3; k++) u[k] = p1[k] - p0[k];
      double L = norm3(u);
      for (int ta = 0; ta < a->nsurf; ta++)
        for (int ja = 0; ja < 3; ja++) {
          int qa = a->surf[3 * ta + ja], qb = a->surf[3 * ta + (ja + 1) % 3];
          double s;
          if (qa > qb || segment_outside(box, a->x + 3 * qa, a->x + 3 * qb, margin)) continue;
          if (!segments_cross(p0, u, a->x + 3 * qa, a->x + 3 * qb, h, &s)) continue;
          for (int side = -1; side <= 1; side += 2) {
            double sp = s + side * hb / (32 * L), p[3];
            if (!(sp > 0 && sp < 1)) continue;
            for (int k = 0; k < 3; k++) p[k] = p0[k] + sp * u[k];
            kn_contact_surface_hit hit;
            query(d, gi, a, p, &hit);
            if (!(hit.phi < margin)) continue;
            double touch_b = (d->stamp[va] == gen) * (1 - sp) + (d->stamp[vb] == gen) * sp, touch_a = 0;
            int nfree = (b->free_index[va] >= 0) + (b->free_index[vb] >= 0), skip = 0;
            for (int q = 0; q < 3; q++) {
              touch_a += (d->stamp_a[hit.vert[q]] == gen) * hit.wt[q];
              nfree += hit.wt[q] != 0 && a->free_index[hit.vert[q]] >= 0;
            }
            if (nfree == 0 || touch_a > 0.5 || touch_b > 0.5) continue;
            for (int c = first; c < out->n && !skip; c++) {
              double e[3] = {out->c[c].p[0] - p[0], out->c[c].p[1] - p[1], out->c[c].p[2] - p[2]};
              skip = dot3(e, e) < dedup * dedup;
            }
            if (skip) continue;
            kn_contact_candidate c = {.a = surface_side(gi, &hit),
                                      .b = {KN_SIDE_SURFACE, fi, 2, {va, vb, 0}, {1 - sp, sp, 0}}};
            memcpy(c.p, p, sizeof c.p);
            c.phi = hit.phi;
            c.origin = KN_CANDIDATE_FEM_VERTEX_FEM;
            frame_from_normal(hit.n, c.R_WC);
            c.material = kn_contact_material_combine(&a->material, &b->material);
            kn_status st = push(out, base, &c, err);
            if (st) return st;
          }
        }
    }
  return KN_OK;
}

// (detect's stage 3) every pair of FEM bodies whose boxes overlap => their edge crossings, both ways
static kn_status fem_pairs_crossings(kn_contact_fem_detector* d, const kn_contact_fem* fems, double margin,
                                     kn_contact_candidate_list* out, int base, kn_error* err) {
  for (int fi = 0; fi < d->nfem; fi++)
    for (int gi = fi + 1; gi < d->nfem; gi++) {
      const double *bf = kn_contact_surface_box(d->surf[fi]), *bg = kn_contact_surface_box(d->surf[gi]);
      double box[6];
      int apart = 0;
      for (int q = 0; q < 3; q++) {
        box[q] = fmax(bf[q], bg[q]), box[3 + q] = fmin(bf[3 + q], bg[3 + q]);
        apart |= box[q] > box[3 + q] + 2 * margin;
      }
      double h = fmin(kn_contact_surface_edge_length(d->surf[fi]), kn_contact_surface_edge_length(d->surf[gi]));
      if (apart || !(h > 0)) continue;
      int first = out->n;
      kn_status st = fem_crossings(d, fems, fi, gi, box, h, margin, first, out, base, err);
      if (!st) st = fem_crossings(d, fems, gi, fi, box, h, margin, first, out, base, err);
      if (st) return st;
    }
  return KN_OK;
}

kn_status kn_contact_fem_detect(kn_contact_fem_detector* d, const kn_contact_fem* fems, const kn_collision_scene* cs,
                                const kn_soft_collider* colliders, const kn_pose* X_WG, double margin,
                                kn_contact_candidate_list* out, kn_error* err) {
  const int nfem = d->nfem, ncollider = cs ? cs->n : 0, base = out->n;
  /* with the reach (speculative): an FEM body's vertices against the colliders and the other FEM
   * bodies' faces, and the colliders' feature points in its faces; the edge crossings margin only */
  const double reach_margin = margin + d->reach;
  for (int i = 0; i < nfem; i++) kn_contact_surface_update(d->surf[i], &fems[i]);
  kn_status st;

  /* 1. vertex contacts, in the order of the first FEM detection */
  for (int fi = 0; fi < nfem; fi++) {
    const kn_contact_fem* b = &fems[fi];
    for (int s = 0; s < b->nsurf_vert; s++) {
      int v = b->surf_vert[s];
      if (b->fixed[v]) continue;
      const double* x = b->x + 3 * v;
      kn_contact_candidate c = {.b = {KN_SIDE_SURFACE, fi, 1, {v, 0, 0}, {1, 0, 0}}};
      memcpy(c.p, x, sizeof c.p);
      for (int k = 0; k < ncollider; k++) {
        double g[3];
        if (b->nattach > 0 && attached_to(b, v, colliders[k].tree, colliders[k].body)) continue;
        double phi = kn_collider_signed_distance(cs, k, &X_WG[k], x, g);
        if (!(phi < reach_margin)) continue;
        c.a = collider_side(k);
        c.phi = phi;
        c.origin = KN_CANDIDATE_FEM_VERTEX_RIGID;
        frame_from_normal(g, c.R_WC);
        c.material = kn_contact_material_combine(&colliders[k].soft, &b->material);
        if ((st = push(out, base, &c, err))) return st;
      }
      for (int gi = 0; gi < nfem; gi++) {
        if (gi == fi) continue;
        if (outside_box(kn_contact_surface_box(d->surf[gi]), x, reach_margin)) continue;
        kn_contact_surface_hit h;
        query(d, gi, &fems[gi], x, &h);
        if (!(h.phi < reach_margin)) continue;
        /* a speculative one only where the vertex would go in by the nearest face: not beside a fold,
         * whose other face's plane it is nearer (the slab's vertex just ahead of the block sliding
         * over it, test_penalty_fem_incline: nearest the block's front face, the spring on that
         * face's plane pushed the block back, by its 1 mm a step, once it slid over the vertex) */
        if (h.phi >= margin && kn_contact_surface_near_fold(d->surf[gi], &fems[gi], h.tri, x, h.phi)) continue;
        c.a = surface_side(gi, &h);
        c.phi = h.phi;
        c.origin = KN_CANDIDATE_FEM_VERTEX_FEM;
        frame_from_normal(h.n, c.R_WC);
        c.material = kn_contact_material_combine(&fems[gi].material, &b->material);
        if ((st = push(out, base, &c, err))) return st;
      }
    }
  }
  if (!cs) return d->polygon ? fem_pairs_crossings(d, fems, margin, out, base, err) : KN_OK;

  /* 2. rigid feature points in FEM faces; B = the nearest triangle, A = the collider */
  int end_vertex = out->n;
  for (int fi = 0; fi < nfem; fi++) {
    const kn_contact_fem* b = &fems[fi];
    const double* fbox = kn_contact_surface_box(d->surf[fi]);
    double h = kn_contact_surface_edge_length(d->surf[fi]);
    if (!(h > 0)) continue;
    for (int k = 0; k < ncollider; k++) {
      double cb[6];
      if (!collider_box(cs, k, &X_WG[k], cb)) continue;
      int apart = 0;
      for (int q = 0; q < 3; q++) apart |= cb[q] > fbox[3 + q] + reach_margin || cb[3 + q] < fbox[q] - reach_margin;
      if (apart) continue;
      /* vertices of this body already touching collider k (the double-counting rule) */
      unsigned gen = ++d->stamp_gen;
      for (int c = base; c < end_vertex; c++) {
        const kn_contact_candidate* o = &out->c[c];
        if (o->origin == KN_CANDIDATE_FEM_VERTEX_RIGID && o->b.body == fi && o->a.body == k)
          d->stamp[o->b.point[0]] = gen;
      }
      int np;
      if ((st = features(d, cs, k, &X_WG[k], fi, b, h, &np, err))) return st;
      int first = out->n;
      for (int i = 0; i < np; i++) {
        const double* p = d->pts + 3 * i;
        if (outside_box(fbox, p, reach_margin)) continue;
        kn_contact_surface_hit hit;
        query(d, fi, b, p, &hit);
        if (!(hit.phi < reach_margin)) continue;
        int skip = 0, nfree = 0;
        double touching = 0;
        for (int j = 0; j < 3; j++) {
          int v = hit.vert[j];
          if (hit.wt[j] != 0 && b->free_index[v] >= 0) nfree++;
          if (d->stamp[v] == gen) touching += hit.wt[j];
          if (b->nattach > 0 && attached_to(b, v, colliders[k].tree, colliders[k].body)) skip = 1;
        }
        /* the touching vertices carry the point (polygon: only when they hold more than half its
         * weight; a coarse face touching at one corner does not carry its far side) */
        if (skip || nfree == 0 || touching > (d->polygon ? 0.5 : 0.0)) continue;
        /* two samples landing on the same spot (a capsule standing on the face) would be one
         * contact counted twice: keep the first within h / 4 */
        for (int c = first; c < out->n && !skip; c++) {
          double e[3] = {out->c[c].p[0] - p[0], out->c[c].p[1] - p[1], out->c[c].p[2] - p[2]};
          skip = dot3(e, e) < h * h / 16;
        }
        if (skip) continue;
        kn_contact_candidate c = {.a = collider_side(k), .b = surface_side(fi, &hit)};
        memcpy(c.p, p, sizeof c.p);
        c.phi = hit.phi;
        c.origin = KN_CANDIDATE_FEM_RIGID_FACE;
        double nrm[3] = {-hit.n[0], -hit.n[1], -hit.n[2]}; /* from the rigid body into the FEM body */
        frame_from_normal(nrm, c.R_WC);
        c.material = kn_contact_material_combine(&colliders[k].soft, &b->material);
        if ((st = push(out, base, &c, err))) return st;
      }
    }
  }
  /* 3. FEM-FEM edge crossings */
  return d->polygon ? fem_pairs_crossings(d, fems, margin, out, base, err) : KN_OK;
}
