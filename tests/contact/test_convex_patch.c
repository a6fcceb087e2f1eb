/* The convex patch (contact/convex_patch.c) of two convex polytopes, through kn_narrow_pair:
 * - overlapping random poses of a box-shaped mesh, a UV-sphere mesh and a box: the deepest point's
 *   phi and normal equal a brute-force separating-axis test on the polytopes (every face normal from
 *   its corners, every pair of hull edges, supports by a scan of every vertex; the face axis is kept
 *   unless an edge axis separates better by more than the patch's slack) to 1e-9 of the pair's size
 *   (when the face's clip misses I's deepest vertex, outside the other polytope, the clip's own gaps,
 *   never deeper than the face's separation; else an edge axis between the face's separation and the
 *   exact one);
 * - every point lies on both surfaces (exact signed distances) to 1e-9 of the pair's size plus the
 *   hulls' stand-off from the meshes (measured: 0 for the bricks, 5.6e-10 m for the UV sphere);
 * - the patch is never shallower than the exact vertex probes (every vertex's signed distance to the
 *   other polytope), also for separated pairs within the margin, and has points whenever the probe
 *   path (kn_narrow_pair_exhaustive) has; it falls back to the probe path only for separated pairs
 *   and overlaps deeper than 10 % of the pair's size (fewer than 1 pair in 10 here);
 * - a box-shaped mesh resting flat (tilt <= 1e-3 rad, gap within +-0.1 mm) on a box or on a larger
 *   box-shaped mesh gets 4 points spanning at least 90 % of its face. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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
static mesh g_brick, g_slab, g_sphere;
static kn_shape g_box = {.type = KN_SHAPE_BOX, .size = {0.06, 0.05, 0.04}};

static double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void cross(const double a[3], const double b[3], double c[3]) {
  c[0] = a[1] * b[2] - a[2] * b[1], c[1] = a[2] * b[0] - a[0] * b[2], c[2] = a[0] * b[1] - a[1] * b[0];
}

/* an 8-corner box OBJ with half extents h, outward triangles */
static void write_brick(const char* path, const double h[3]) {
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f);
  for (int i = 0; i < 8; ++i) fprintf(f, "v %.17g %.17g %.17g\n", i & 1 ? h[0] : -h[0], i & 2 ? h[1] : -h[1], i & 4 ? h[2] : -h[2]);
  const int face[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  for (int k = 0; k < 6; ++k)
    fprintf(f, "f %d %d %d\nf %d %d %d\n", face[k][0] + 1, face[k][1] + 1, face[k][2] + 1, face[k][0] + 1,
            face[k][2] + 1, face[k][3] + 1);
  fclose(f);
}
static void load(mesh* x, const char* name, const double* h) {
  snprintf(x->path, sizeof x->path, "%s/%s", g_dir, name);
  if (h) write_brick(x->path, h);
  else write_sphere_obj(x->path, 0.04, 0, 8, 12);
  x->s = (kn_shape){.type = KN_SHAPE_MESH, .mesh_uri = x->path, .mesh_path = x->path, .scale = {1, 1, 1}};
  kn_error err = {0};
  cr_assert_eq(kn_mesh_load(&x->s, &x->m, &err), KN_OK, "%s", err.msg);
  cr_assert(x->m.convex && x->m.hull.nf > 0, "%s is recognized as convex", name);
}
static void setup(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/knead_convex_patch_XXXXXX");
  cr_assert_not_null(mkdtemp(g_dir));
  const double hb[3] = {0.04, 0.03, 0.02}, hs[3] = {0.2, 0.2, 0.05};
  load(&g_brick, "brick.obj", hb), load(&g_slab, "slab.obj", hs), load(&g_sphere, "sphere.obj", NULL);
}
static void teardown(void) {
  mesh* all[3] = {&g_brick, &g_slab, &g_sphere};
  for (int i = 0; i < 3; ++i) kn_mesh_free(&all[i]->m), unlink(all[i]->path);
  rmdir(g_dir);
}

/* a polytope in the world: vertices, face normals (outward, from the corners by Newell's rule),
 * edges */
typedef struct {
  int nv, nf, ne;
  double v[256][3], f[512][3];
  int e[1024][2];
} poly;
static void poly_of(const kn_shape* s, const kn_mesh_data* m, const kn_pose* X, poly* P) {
  P->nv = P->nf = P->ne = 0;
  if (s->type == KN_SHAPE_BOX) {
    for (int i = 0; i < 8; ++i) {
      double xl[3];
      for (int k = 0; k < 3; ++k) xl[k] = ((i >> k) & 1 ? 0.5 : -0.5) * s->size[k];
      kn_pose_apply(X, xl, P->v[P->nv++]);
    }
    for (int k = 0; k < 3; ++k) {
      double a[3] = {X->R[k], X->R[3 + k], X->R[6 + k]};
      for (int q = 0; q < 3; ++q) P->f[P->nf][q] = a[q], P->f[P->nf + 1][q] = -a[q];
      P->nf += 2;
    }
    for (int i = 0; i < 8; ++i)
      for (int k = 0; k < 3; ++k)
        if (!(i >> k & 1)) P->e[P->ne][0] = i, P->e[P->ne++][1] = i | 1 << k;
    return;
  }
  const kn_hull* h = &m->hull;
  for (int i = 0; i < h->nv; ++i) kn_pose_apply(X, &h->v[3 * i], P->v[P->nv++]);
  for (int f = 0; f < h->nf; ++f) {
    double n[3] = {0, 0, 0};
    int a = h->f_start[f], b = h->f_start[f + 1];
    for (int i = a; i < b; ++i) {
      const double *p = P->v[h->f_vert[i]], *q = P->v[h->f_vert[i + 1 < b ? i + 1 : a]];
      n[0] += (p[1] - q[1]) * (p[2] + q[2]), n[1] += (p[2] - q[2]) * (p[0] + q[0]), n[2] += (p[0] - q[0]) * (p[1] + q[1]);
    }
    double l = sqrt(dot(n, n));
    for (int k = 0; k < 3; ++k) P->f[P->nf][k] = n[k] / l;
    P->nf++;
  }
  for (int i = 0; i < h->nv; ++i)
    for (int k = h->adj_start[i]; k < h->adj_start[i + 1]; ++k)
      if (h->adj[k] > i) P->e[P->ne][0] = i, P->e[P->ne++][1] = h->adj[k];
}
/* separation along u: min over B of u.x - max over A of u.x */
static double sep(const poly* A, const poly* B, const double u[3]) {
  double ha = -INFINITY, lb = INFINITY;
  for (int i = 0; i < A->nv; ++i) ha = fmax(ha, dot(u, A->v[i]));
  for (int i = 0; i < B->nv; ++i) lb = fmin(lb, dot(u, B->v[i]));
  return lb - ha;
}
/* (A, B) => the best face axis (separation *bf, axis uf) and edge axis (*be, ue); *ambiguous when
 * the edge axis is within 1e-7 sc of the patch's slack boundary */
static void reference(const poly* A, const poly* B, double sc, double* bf, double uf[3], double* be, double ue[3],
                      int* ambiguous) {
  *bf = *be = -INFINITY;
  for (int s = 0; s < 2; ++s)
    for (int f = 0; f < (s ? B->nf : A->nf); ++f) {
      double w[3];
      for (int k = 0; k < 3; ++k) w[k] = s ? -B->f[f][k] : A->f[f][k];
      double v = sep(A, B, w);
      if (v > *bf) *bf = v, memcpy(uf, w, sizeof w);
    }
  for (int i = 0; i < A->ne; ++i)
    for (int j = 0; j < B->ne; ++j) {
      double da[3], db[3], w[3];
      for (int k = 0; k < 3; ++k)
        da[k] = A->v[A->e[i][1]][k] - A->v[A->e[i][0]][k], db[k] = B->v[B->e[j][1]][k] - B->v[B->e[j][0]][k];
      cross(da, db, w);
      double l = sqrt(dot(w, w));
      if (!(l > 1e-6 * sqrt(dot(da, da) * dot(db, db)))) continue;
      for (int s = 0; s < 2; ++s) {
        for (int k = 0; k < 3; ++k) w[k] = -w[k];
        double wn[3] = {w[0] / l, w[1] / l, w[2] / l}, v = sep(A, B, wn);
        if (v > *be) *be = v, memcpy(ue, wn, sizeof wn);
      }
    }
  double slack = 1e-6 * sc + 0.05 * fabs(*bf); /* convex_patch.c's EDGE_SLACK */
  *ambiguous = fabs(*be - (*bf + slack)) < 1e-7 * sc;
}

static double radius(const kn_shape* s, const kn_mesh_data* m) {
  if (s->type == KN_SHAPE_BOX) return 0.5 * sqrt(dot(s->size, s->size));
  return m->sphere_r + sqrt(dot(m->sphere_c, m->sphere_c));
}
static double sd_world(const kn_shape* s, const kn_mesh_data* m, const kn_pose* X, const double x[3]) {
  double d[3] = {x[0] - X->p[0], x[1] - X->p[1], x[2] - X->p[2]}, xl[3], g[3];
  kn_mat3_tvec(X->R, d, xl);
  return kn_shape_signed_distance_local(s, m, xl, g);
}

/* how far the hull's faces stand off the mesh's triangles: the largest signed distance to the mesh
 * of the faces' edge midpoints and centroids. A mesh is convex when its vertices are on the hull, but
 * a quad split along the other diagonal than the hull's dips below the hull (5.6e-10 m on this UV
 * sphere, whose quads are flat to round-off only) */
static double hull_gap(const kn_shape* s, const kn_mesh_data* m) {
  double g = 0, grad[3];
  for (int i = 0; m && i < m->hull.nf; ++i) {
    int a = m->hull.f_start[i], b = m->hull.f_start[i + 1];
    double c[3] = {0, 0, 0};
    for (int k = a; k < b; ++k) {
      const double *p = &m->hull.v[3 * m->hull.f_vert[k]], *q = &m->hull.v[3 * m->hull.f_vert[k + 1 < b ? k + 1 : a]];
      double mid[3] = {0.5 * (p[0] + q[0]), 0.5 * (p[1] + q[1]), 0.5 * (p[2] + q[2])};
      g = fmax(g, kn_shape_signed_distance_local(s, m, mid, grad));
      for (int q2 = 0; q2 < 3; ++q2) c[q2] += p[q2] / (b - a);
    }
    g = fmax(g, kn_shape_signed_distance_local(s, m, c, grad));
  }
  return g;
}

static void random_pairs(const kn_shape* sa, const kn_mesh_data* ma, const kn_shape* sb, const kn_mesh_data* mb,
                         const char* what) {
  double ra = radius(sa, ma), rb = radius(sb, mb), sc = ra + rb, margin = 0.01;
  /* witnesses on the surfaces to 1e-9 of the size, plus the hulls' stand-off from the meshes */
  double gap_a = hull_gap(sa, ma), gap_b = hull_gap(sb, mb), tol_on = 1e-9 * sc + 2 * (gap_a + gap_b);
  cr_log_info("%s: hulls stand off the meshes by %.3g, %.3g", what, gap_a, gap_b);
  kn_point_buf patch = {0}, probes = {0}, fallback = {0};
  poly* A = malloc(sizeof *A);
  poly* B = malloc(sizeof *B);
  int checked = 0, separated = 0, ambiguous_n = 0, fallbacks = 0, edge_fallbacks = 0, shallow_fallbacks = 0;
  for (int t = 0; t < 600; ++t) {
    kn_pose XA, XB;
    random_pose(0, &XA), random_pose(0, &XB);
    double d[3] = {2 * urand() - 1, 2 * urand() - 1, 2 * urand() - 1}, l = sqrt(dot(d, d)), s = 0.4 + 0.6 * urand();
    for (int k = 0; k < 3; ++k) XB.p[k] = s * sc * d[k] / l;
    kn_nshape NA = {sa, ma, &XA, kn_contact_material_default(0.01)}, NB = {sb, mb, &XB, kn_contact_material_default(0.01)};
    patch.count = probes.count = 0;
    cr_assert_eq(kn_narrow_pair(&NA, &NB, 0, 1, margin, &patch), KN_OK);
    cr_assert_eq(kn_narrow_pair_exhaustive(&NA, &NB, 0, 1, margin, &probes), KN_OK);
    poly_of(sa, ma, &XA, A), poly_of(sb, mb, &XB, B);
    double uf[3], ue[3], bf, be;
    int ambiguous;
    reference(A, B, sc, &bf, uf, &be, ue, &ambiguous);
    /* the patch's axis: a face unless an edge separates better by the slack (or, within the slack,
     * when the face's clip misses the deepest vertex: then the edge, checked below) */
    int edge = be > bf + 1e-6 * sc + 0.05 * fabs(bf);
    double ref = edge ? be : bf, *u = edge ? ue : uf;
    if (ref >= margin) {
      cr_assert_eq(patch.count, 0, "%s, pose %d: %d points beyond the margin (sep %g)", what, t, patch.count, ref);
      continue;
    }
    if (patch.count == 0) { /* separated by more than the margin (the SAT value is a lower bound) */
      cr_assert(ref > 0 && probes.count == 0, "%s, pose %d: no point (sep %g, %d probe points)", what, t, ref,
                probes.count);
      continue;
    }
    /* the patch falls back to the probe path (kn_narrow_pair_probes, the same points) only for
     * separated pairs or overlaps deeper than 10 % of the pair's size whose deepest vertex lies
     * beside the reference face and whose best edges pass beside each other */
    fallback.count = 0;
    cr_assert_eq(kn_narrow_pair_probes(&NA, &NB, 0, 1, margin, &fallback), KN_OK);
    if (fallback.count == patch.count && memcmp(fallback.p, patch.p, (size_t)patch.count * sizeof *patch.p) == 0) {
      ++fallbacks, shallow_fallbacks += ref < 0 && ref > -0.02 * sc;
      continue;
    }
    cr_assert_leq(patch.count, 4, "%s, pose %d", what, t);
    int deep = 0;
    double probe_min = INFINITY;
    for (int i = 0; i < patch.count; ++i) {
      const kn_contact_point* p = &patch.p[i];
      if (p->phi < patch.p[deep].phi) deep = i;
      /* witnesses p -+ phi/2 n (equal stiffness: p is their midpoint) on the two surfaces */
      double w1[3], w2[3];
      for (int k = 0; k < 3; ++k) w1[k] = p->p[k] - 0.5 * p->phi * p->n[k], w2[k] = p->p[k] + 0.5 * p->phi * p->n[k];
      cr_assert_leq(fabs(sd_world(sa, ma, &XA, w1)), tol_on, "%s, pose %d, point %d: %g off A", what, t, i,
                    sd_world(sa, ma, &XA, w1));
      cr_assert_leq(fabs(sd_world(sb, mb, &XB, w2)), tol_on, "%s, pose %d, point %d: %g off B", what, t, i,
                    sd_world(sb, mb, &XB, w2));
    }
    /* as deep as every vertex probe (exact signed distances of each polytope's vertices to the
     * other; a vertex's depth bounds the penetration depth from below, its distance the gap from
     * above). The probe path's own deepest point is EPA's, which may overshoot (2.7e-6 m here). */
    for (int i = 0; i < A->nv; ++i) probe_min = fmin(probe_min, sd_world(sb, mb, &XB, A->v[i]));
    for (int i = 0; i < B->nv; ++i) probe_min = fmin(probe_min, sd_world(sa, ma, &XA, B->v[i]));
    cr_assert_leq(patch.p[deep].phi, probe_min + 1e-9 * sc, "%s, pose %d: patch %.17g, vertex probes %.17g", what, t,
                  patch.p[deep].phi, probe_min);
    if (ref > 0) { /* separated: the candidates near EPA's closest direction may miss a far SAT axis */
      cr_assert_leq(patch.p[deep].phi, fmax(bf, be) + 1e-9 * sc, "%s, pose %d: %.17g, SAT %.17g", what, t,
                    patch.p[deep].phi, fmax(bf, be));
      ++separated;
      continue;
    }
    if (ambiguous) {
      ++ambiguous_n;
      continue;
    }
    const double* n = patch.p[deep].n;
    if (!edge && fabs(patch.p[deep].phi - bf) > 1e-9 * sc) {
      /* the face's clip missed I's deepest vertex: either the clip stands (the missed part is
       * outside R; its points' own gaps, shallower than the face axis says) or an edge axis within
       * the slack, between the face's separation and the exact one */
      cr_assert(patch.p[deep].phi >= bf - 1e-9 * sc && (patch.count > 1 || patch.p[deep].phi <= be + 1e-9 * sc),
                "%s, pose %d: deepest %.17g, SAT face %.17g, edge %.17g", what, t, patch.p[deep].phi, bf, be);
      ++edge_fallbacks;
      continue;
    }
    cr_assert_leq(fabs(patch.p[deep].phi - ref), 1e-9 * sc, "%s, pose %d: deepest %.17g, SAT %.17g", what, t,
                  patch.p[deep].phi, ref);
    double dn[3] = {n[0] - u[0], n[1] - u[1], n[2] - u[2]};
    cr_assert_leq(sqrt(dot(dn, dn)), 1e-9, "%s, pose %d: normal (%g %g %g) vs (%g %g %g)", what, t, n[0], n[1], n[2], u[0],
                  u[1], u[2]);
    ++checked;
  }
  cr_expect_gt(checked, 300, "%s: %d overlapping poses checked, %d separated, %d ambiguous, %d fallbacks", what, checked,
               separated, ambiguous_n, fallbacks);
  cr_expect_gt(checked + separated, 10 * fallbacks, "%s: %d pairs on the patch, %d fallbacks", what, checked + separated,
               fallbacks);
  cr_log_info("%s: %d overlapping poses checked exactly (%d more on a clip that misses a deepest vertex outside the other, or an edge axis within the slack), %d separated, %d ambiguous, "
              "%d fallbacks (%d overlapping by less than 2 %% of the size)", what, checked, edge_fallbacks, separated,
              ambiguous_n, fallbacks, shallow_fallbacks);
  free(A), free(B), kn_point_buf_free(&patch), kn_point_buf_free(&probes), kn_point_buf_free(&fallback);
}

Test(convex_patch, random_poses_match_separating_axes, .init = setup, .fini = teardown) {
  g_rng = 0x2545F4914F6CDD1Dull;
  random_pairs(&g_box, NULL, &g_brick.s, &g_brick.m, "box-brick");
  random_pairs(&g_brick.s, &g_brick.m, &g_brick.s, &g_brick.m, "brick-brick");
  random_pairs(&g_box, NULL, &g_sphere.s, &g_sphere.m, "box-sphere mesh");
  random_pairs(&g_brick.s, &g_brick.m, &g_sphere.s, &g_sphere.m, "brick-sphere mesh");
}

/* (support shape at the origin with its top face at z = top, the brick resting on it) => 4 points
 * spanning >= 90 % of the brick's 8 x 6 cm face */
static void resting(const kn_shape* ss, const kn_mesh_data* ms, double top, const char* what) {
  kn_point_buf out = {0};
  for (int t = 0; t < 200; ++t) {
    double yaw = 6.283185307179586 * urand(), ax = 1e-3 * (2 * urand() - 1), ay = 1e-3 * (2 * urand() - 1);
    double cz = cos(yaw), sz = sin(yaw), cx = cos(ax), sx = sin(ax), cy = cos(ay), sy = sin(ay);
    /* R = Rz(yaw) Ry(ay) Rx(ax) */
    double R[9] = {cz * cy, cz * sy * sx - sz * cx, cz * sy * cx + sz * sx, sz * cy, sz * sy * sx + cz * cx,
                   sz * sy * cx - cz * sx, -sy, cy * sx, cy * cx};
    kn_pose XS = {.R = {1, 0, 0, 0, 1, 0, 0, 0, 1}, .p = {0, 0, 0}}, XB;
    memcpy(XB.R, R, sizeof R);
    double low = INFINITY; /* the brick's lowest corner at top + gap */
    for (int i = 0; i < 8; ++i) low = fmin(low, R[6] * (i & 1 ? 0.04 : -0.04) + R[7] * (i & 2 ? 0.03 : -0.03) + R[8] * (i & 4 ? 0.02 : -0.02));
    double gap = 1e-4 * (2 * urand() - 1);
    XB.p[0] = 0.05 * (2 * urand() - 1), XB.p[1] = 0.05 * (2 * urand() - 1), XB.p[2] = top + gap - low;
    kn_nshape S = {ss, ms, &XS, kn_contact_material_default(0.01)}, B = {&g_brick.s, &g_brick.m, &XB, kn_contact_material_default(0.01)};
    out.count = 0;
    cr_assert_eq(kn_narrow_pair(&S, &B, 0, 1, 0.01, &out), KN_OK);
    cr_assert_eq(out.count, 4, "%s, pose %d: %d points", what, t, out.count);
    /* area of the 4 points seen along z (ordered by angle about their centroid) */
    double c[2] = {0, 0}, ang[4], area = 0;
    int o[4] = {0, 1, 2, 3};
    for (int i = 0; i < 4; ++i) c[0] += out.p[i].p[0] / 4, c[1] += out.p[i].p[1] / 4;
    for (int i = 0; i < 4; ++i) ang[i] = atan2(out.p[i].p[1] - c[1], out.p[i].p[0] - c[0]);
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j)
        if (ang[o[j]] < ang[o[i]]) {
          int x = o[i];
          o[i] = o[j], o[j] = x;
        }
    for (int i = 0; i < 4; ++i) {
      const double *p = out.p[o[i]].p, *q = out.p[o[(i + 1) % 4]].p;
      area += 0.5 * (p[0] * q[1] - q[0] * p[1]);
      cr_assert_gt(out.p[i].n[2], 0.999, "%s, pose %d: normal z %g", what, t, out.p[i].n[2]);
      cr_assert_lt(fabs(out.p[i].phi - gap), 2e-4, "%s, pose %d: phi %g, gap %g", what, t, out.p[i].phi, gap);
    }
    cr_assert_gt(fabs(area), 0.9 * 0.08 * 0.06, "%s, pose %d: support area %g", what, t, fabs(area));
  }
  kn_point_buf_free(&out);
}

Test(convex_patch, brick_resting_on_a_face_keeps_four_points, .init = setup, .fini = teardown) {
  g_rng = 99991ull;
  kn_shape floor_box = {.type = KN_SHAPE_BOX, .size = {0.4, 0.4, 0.1}};
  resting(&floor_box, NULL, 0.05, "on a box");
  resting(&g_slab.s, &g_slab.m, 0.05, "on a box-shaped mesh");
}

/* separated polytopes whose nearest features are two parallel edges (the vertical corner edges of
 * the brick mesh yawed 20 deg and the box yawed -35 deg about z, 2 mm apart along the horizontal w
 * at 40 deg, inside both corners' normal cones; the box 1 cm higher): the patch's axis is the edges'
 * lines' (w), phi the built gap, and the two points the ends of the edges' common span z in
 * [-0.01, 0.02]. The face axes alone bound the gap from below only (2 mm cos 20 deg = 1.88 mm along
 * the brick's x face) */
Test(convex_patch, separated_parallel_edges_line_contact, .init = setup, .fini = teardown) {
  const double pi = 3.14159265358979323846, z[3] = {0, 0, 1}, g = 2e-3, w = 40 * pi / 180, n_exp[3] = {cos(w), sin(w), 0};
  kn_pose XA, XB;
  kn_pose_identity(&XA), kn_pose_identity(&XB);
  kn_mat3_from_axis_angle(z, 20 * pi / 180, XA.R), kn_mat3_from_axis_angle(z, -35 * pi / 180, XB.R);
  /* the brick's corner edge (+x, +y) from its hull's vertices as loaded (within 1e-9 of the OBJ's
   * 0.04, 0.03, +-0.02), and its z extent */
  const kn_hull* h = &g_brick.m.hull;
  double cl[3] = {0, 0, 0}, bl[3] = {-0.03, -0.025, 0}, ca[3], cb[3], zlo = INFINITY, zhi = -INFINITY;
  for (int i = 0; i < h->nv; ++i) {
    const double* v = &h->v[3 * i];
    if (v[0] + v[1] > cl[0] + cl[1]) cl[0] = v[0], cl[1] = v[1];
    zlo = fmin(zlo, v[2]), zhi = fmax(zhi, v[2]);
  }
  cr_assert(fabs(cl[0] - 0.04) < 1e-8 && fabs(cl[1] - 0.03) < 1e-8 && fabs(zhi - 0.02) < 1e-8);
  kn_pose_apply(&XA, cl, ca);
  kn_mat3_vec(XB.R, bl, cb);
  for (int k = 0; k < 3; ++k) XB.p[k] = ca[k] + g * n_exp[k] - cb[k];
  XB.p[2] = 0.01;
  kn_nshape NA = {&g_brick.s, &g_brick.m, &XA, kn_contact_material_default(0.01)},
            NB = {&g_box, NULL, &XB, kn_contact_material_default(0.01)};
  kn_point_buf out = {0};
  for (int swap = 0; swap < 2; ++swap) { /* the mesh as A, then as B (the normal flips) */
    out.count = 0;
    cr_assert_eq(swap ? kn_narrow_pair(&NB, &NA, 0, 1, 0.01, &out) : kn_narrow_pair(&NA, &NB, 0, 1, 0.01, &out), KN_OK);
    cr_assert_eq(out.count, 2, "swap %d: a line contact, %d points", swap, out.count);
    double zs[2], s = swap ? -1 : 1;
    for (int i = 0; i < 2; ++i) {
      const kn_contact_point* p = &out.p[i];
      cr_expect(fabs(p->phi - g) < 1e-12, "swap %d: phi %.12g, built %g", swap, p->phi, g);
      for (int k = 0; k < 3; ++k) cr_expect(fabs(p->n[k] - s * n_exp[k]) < 1e-12, "swap %d: n[%d] %.12g", swap, k, p->n[k]);
      zs[i] = p->p[2];
    }
    cr_expect(fabs(fmin(zs[0], zs[1]) - fmax(zlo, -0.01)) < 1e-12 && fabs(fmax(zs[0], zs[1]) - zhi) < 1e-12,
              "swap %d: ends z = %g, %g", swap, zs[0], zs[1]);
  }
  kn_point_buf_free(&out);
}

/* IPC's card frame (bench/ipc_paper/card_frame.yaml) with the left card a box-shaped mesh and the
 * right one a box: cards at +-30 deg about y, top edges 0.1 mm apart along x (tests/contact/
 * test_box_parallel_edges.c has the brute-force distance of the two boxes: 1e-4 to 1e-10). The
 * line contact along +x at the cards' ends y = -+0.05; the mesh's hull is within 1e-9 of its OBJ */
Test(convex_patch, card_frame_top_edges, .init = setup, .fini = teardown) {
  mesh card;
  const double hc[3] = {0.002, 0.05, 0.1}, th = 3.14159265358979323846 / 6, y[3] = {0, 1, 0};
  load(&card, "card.obj", hc);
  kn_shape box = {.type = KN_SHAPE_BOX, .size = {0.004, 0.1, 0.2}};
  kn_pose XA, XB;
  kn_pose_identity(&XA), kn_pose_identity(&XB);
  const double px = 0.051782050807568876, pz = 0.08770254037844388;
  XA.p[0] = -px, XA.p[2] = pz, XB.p[0] = px, XB.p[2] = pz;
  kn_mat3_from_axis_angle(y, th, XA.R);
  kn_mat3_from_axis_angle(y, -th, XB.R);
  kn_nshape NA = {&card.s, &card.m, &XA, kn_contact_material_default(0.01)},
            NB = {&box, NULL, &XB, kn_contact_material_default(0.01)};
  kn_point_buf out = {0};
  cr_assert_eq(kn_narrow_pair(&NA, &NB, 0, 1, 1e-3, &out), KN_OK);
  cr_assert_eq(out.count, 2, "a line contact, %d points", out.count);
  double ys[2];
  for (int i = 0; i < 2; ++i) {
    const kn_contact_point* p = &out.p[i];
    cr_expect(fabs(p->phi - 1e-4) < 1e-8, "phi %.12g, distance 1e-4", p->phi);
    cr_expect(fabs(p->n[0] - 1) < 1e-8 && fabs(p->n[2]) < 1e-4, "normal (%g %g %g): +x", p->n[0], p->n[1], p->n[2]);
    ys[i] = p->p[1];
  }
  cr_expect(fabs(fmin(ys[0], ys[1]) + 0.05) < 1e-8 && fabs(fmax(ys[0], ys[1]) - 0.05) < 1e-8, "ends y = %g, %g", ys[0],
            ys[1]);
  kn_point_buf_free(&out);
  kn_mesh_free(&card.m), unlink(card.path);
}
