/* Mesh generators. All start from a regular grid of boxes, each split into the 6 Kuhn
 * (Freudenthal) tets that share its main diagonal: every box face is then cut along the same
 * diagonal direction as its neighbour's, so the mesh is conforming. The box keeps every tet. A
 * curved shape keeps the tets whose centroid is inside it (signed distance < 0) and moves each
 * boundary vertex to the closest point of the shape's surface; where that would make a tet flat
 * or inverted, the vertices of that tet are pulled back toward their grid positions (halving the
 * step, at worst back to the grid, where every tet is positive) — so the result is always valid. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deformable/deformable.h"

typedef struct {
  double (*sdf)(const void* self, const double x[3]);
  /* closest point on the curved part of the surface */
  void (*project)(const void* self, const double x[3], double y[3]);
  /* does a boundary triangle lie on a flat part of the surface that the grid already fits? */
  int (*on_flat)(const void* self, const double* a, const double* b, const double* c);
  const void* self;
} shape_fns;

/* fraction of the grid tet volume below which a projected tet counts as too flat */
#define KN_MIN_VOLUME_FRACTION 0.05

static double det3(const double* a, const double* b, const double* c, const double* d) {
  double u[3], v[3], w[3];
  for (int k = 0; k < 3; ++k) u[k] = b[k] - a[k], v[k] = c[k] - a[k], w[k] = d[k] - a[k];
  return u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
         u[2] * (v[0] * w[1] - v[1] * w[0]);
}

/* (grid n[3] cells over [lo, hi], shape) => finalized mesh of the kept, projected tets */
static kn_status carve(const int n[3], const double lo[3], const double hi[3], const shape_fns* shape,
                       const char* name, kn_tet_mesh* m, kn_error* err) {
  memset(m, 0, sizeof *m);
  double ncell = (double)n[0] * n[1] * n[2];
  if (ncell > 4e6)
    return kn_fail(err, KN_ERR_INVALID, "%s: %.0f grid cells (more than 4e6): the edge length h is too small", name,
                   ncell);
  int nx = n[0] + 1, ny = n[1] + 1, nz = n[2] + 1;
  size_t nnode = (size_t)nx * ny * nz, ncube = (size_t)n[0] * n[1] * n[2];
  double* G = kn_calloc(3 * nnode, sizeof(double));
  int* tet = kn_calloc(24 * ncube, sizeof(int));
  int* map = kn_calloc(nnode, sizeof(int));
  if (!G || !tet || !map) {
    free(G), free(tet), free(map);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", name);
  }
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        double* g = G + 3 * ((size_t)i + (size_t)nx * (j + (size_t)ny * k));
        /* lo + (hi - lo) * i / n hits hi exactly at i = n, so grid planes match flat faces */
        g[0] = lo[0] + (hi[0] - lo[0]) * i / n[0];
        g[1] = lo[1] + (hi[1] - lo[1]) * j / n[1];
        g[2] = lo[2] + (hi[2] - lo[2]) * k / n[2];
      }
  /* the 6 Kuhn tets of the unit cube: corner 0 -> +e_p0 -> +e_p1 -> corner 7, one per permutation
   * p; odd permutations come out negatively oriented, so swap their last two vertices */
  static const int perms[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
  int kuhn[6][4];
  for (int p = 0; p < 6; ++p) {
    int c = 0;
    kuhn[p][0] = 0;
    for (int s = 0; s < 2; ++s) c |= 1 << perms[p][s], kuhn[p][s + 1] = c;
    kuhn[p][3] = 7;
    if (p >= 3) {
      int t = kuhn[p][2];
      kuhn[p][2] = kuhn[p][3], kuhn[p][3] = t;
    }
  }
  size_t nt = 0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i)
        for (int p = 0; p < 6; ++p) {
          int v[4];
          double c[3] = {0, 0, 0};
          for (int q = 0; q < 4; ++q) {
            int b = kuhn[p][q];
            v[q] = (i + (b & 1)) + nx * ((j + ((b >> 1) & 1)) + ny * (k + ((b >> 2) & 1)));
            for (int d = 0; d < 3; ++d) c[d] += 0.25 * G[3 * v[q] + d];
          }
          if (shape && shape->sdf(shape->self, c) >= 0) continue;
          memcpy(tet + 4 * nt, v, sizeof v);
          ++nt;
        }
  /* keep only the vertices of kept tets, in grid order */
  for (size_t i = 0; i < nnode; ++i) map[i] = -1;
  for (size_t q = 0; q < 4 * nt; ++q) map[tet[q]] = 0;
  int nv = 0;
  for (size_t i = 0; i < nnode; ++i)
    if (map[i] == 0) map[i] = nv++;
  m->X = kn_calloc(3 * (size_t)nv, sizeof(double));
  if (!m->X || nt == 0) {
    free(G), free(tet), free(map);
    kn_tet_mesh_free(m);
    return nt == 0 ? kn_fail(err, KN_ERR_INVALID, "%s: no grid tet inside the shape (h too large)", name)
                   : kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", name);
  }
  for (size_t i = 0; i < nnode; ++i)
    if (map[i] >= 0) memcpy(m->X + 3 * map[i], G + 3 * i, 3 * sizeof(double));
  for (size_t q = 0; q < 4 * nt; ++q) tet[q] = map[tet[q]];
  free(G), free(map);
  m->nvert = nv, m->ntet = (int)nt, m->tet = tet;
  kn_status s = kn_tet_mesh_finalize(m, name, err);
  if (s != KN_OK || !shape) {
    if (s != KN_OK) kn_tet_mesh_free(m);
    return s;
  }

  //---- project the boundary vertices ----
  double* X0 = kn_calloc(3 * (size_t)nv, sizeof(double));
  double* target = kn_calloc(3 * (size_t)nv, sizeof(double));
  double* step = kn_calloc((size_t)nv, sizeof(double));
  char* curved = kn_calloc((size_t)nv, 1);
  if (!X0 || !target || !step || !curved) {
    free(X0), free(target), free(step), free(curved);
    kn_tet_mesh_free(m);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", name);
  }
  memcpy(X0, m->X, 3 * (size_t)nv * sizeof(double));
  for (int f = 0; f < m->nsurf; ++f) {
    const int* t = m->surf + 3 * f;
    if (shape->on_flat && shape->on_flat(shape->self, m->X + 3 * t[0], m->X + 3 * t[1], m->X + 3 * t[2])) continue;
    for (int q = 0; q < 3; ++q) curved[t[q]] = 1;
  }
  for (int i = 0; i < nv; ++i) {
    if (curved[i])
      shape->project(shape->self, X0 + 3 * i, target + 3 * i), step[i] = 1;
    else
      memcpy(target + 3 * i, X0 + 3 * i, 3 * sizeof(double));
  }
  double cell = (hi[0] - lo[0]) / n[0] * (hi[1] - lo[1]) / n[1] * (hi[2] - lo[2]) / n[2];
  double min_det = KN_MIN_VOLUME_FRACTION * cell; /* grid tets have det = cell (volume cell / 6) */
  for (int iter = 0; iter < 60; ++iter) {
    for (int i = 0; i < nv; ++i)
      for (int d = 0; d < 3; ++d) m->X[3 * i + d] = X0[3 * i + d] + step[i] * (target[3 * i + d] - X0[3 * i + d]);
    int bad = 0;
    for (int t = 0; t < m->ntet; ++t) {
      const int* v = m->tet + 4 * t;
      if (det3(m->X + 3 * v[0], m->X + 3 * v[1], m->X + 3 * v[2], m->X + 3 * v[3]) >= min_det) continue;
      ++bad;
      for (int q = 0; q < 4; ++q) step[v[q]] = iter >= 8 ? 0 : 0.5 * step[v[q]];
    }
    if (!bad) break;
  }
  free(X0), free(target), free(step), free(curved);
  s = kn_tet_mesh_finalize(m, name, err);
  if (s != KN_OK) kn_tet_mesh_free(m);
  return s;
}

static int cells(double length, double h) {
  double c = ceil(length / h - 1e-9);
  return c < 1 ? 1 : (int)c;
}

// (lx, ly, lz, h) => box [-l/2, l/2] per axis, ceil(l/h) cells per side, 6 Kuhn tets each
kn_status kn_tet_mesh_box(double lx, double ly, double lz, double h, kn_tet_mesh* m, kn_error* err) {
  if (!(lx > 0 && ly > 0 && lz > 0 && h > 0))
    return kn_fail(err, KN_ERR_INVALID, "box mesh: sizes (%g, %g, %g) and h %g must be positive", lx, ly, lz, h);
  int n[3] = {cells(lx, h), cells(ly, h), cells(lz, h)};
  double lo[3] = {-lx / 2, -ly / 2, -lz / 2}, hi[3] = {lx / 2, ly / 2, lz / 2};
  return carve(n, lo, hi, NULL, "box mesh", m, err);
}

//---- sphere ----

static double sphere_sdf(const void* self, const double x[3]) { return kn_vec3_norm(x) - *(const double*)self; }
static void sphere_project(const void* self, const double x[3], double y[3]) {
  double r = kn_vec3_norm(x), R = *(const double*)self;
  for (int k = 0; k < 3; ++k) y[k] = r > 0 ? x[k] * R / r : x[k];
}

// (radius, h) => ball around the origin
kn_status kn_tet_mesh_sphere(double radius, double h, kn_tet_mesh* m, kn_error* err) {
  if (!(radius > 0 && h > 0))
    return kn_fail(err, KN_ERR_INVALID, "sphere mesh: radius %g and h %g must be positive", radius, h);
  int c = cells(2 * radius, h);
  int n[3] = {c, c, c};
  double lo[3] = {-radius, -radius, -radius}, hi[3] = {radius, radius, radius};
  shape_fns s = {sphere_sdf, sphere_project, NULL, &radius};
  return carve(n, lo, hi, &s, "sphere mesh", m, err);
}

//---- cylinder ----

typedef struct {
  double radius, half;
} cylinder_shape;

static double cylinder_sdf(const void* self, const double x[3]) {
  const cylinder_shape* c = self;
  double dr = hypot(x[0], x[1]) - c->radius, dz = fabs(x[2]) - c->half;
  return fmax(dr, dz) < 0 ? fmax(dr, dz) : hypot(fmax(dr, 0), fmax(dz, 0));
}
/* radial projection only: the grid's z planes already lie on the caps, so rim vertices keep z */
static void cylinder_project(const void* self, const double x[3], double y[3]) {
  const cylinder_shape* c = self;
  double r = hypot(x[0], x[1]);
  y[0] = r > 0 ? x[0] * c->radius / r : x[0], y[1] = r > 0 ? x[1] * c->radius / r : x[1], y[2] = x[2];
}
static int cylinder_on_cap(const void* self, const double* a, const double* b, const double* cc) {
  const cylinder_shape* c = self;
  double tol = 1e-12 * c->half;
  return fabs(fabs(a[2]) - c->half) < tol && fabs(fabs(b[2]) - c->half) < tol && fabs(fabs(cc[2]) - c->half) < tol;
}

// (radius, length, h) => cylinder with axis z from -length/2 to length/2
kn_status kn_tet_mesh_cylinder(double radius, double length, double h, kn_tet_mesh* m, kn_error* err) {
  if (!(radius > 0 && length > 0 && h > 0))
    return kn_fail(err, KN_ERR_INVALID, "cylinder mesh: radius %g, length %g and h %g must be positive", radius,
                   length, h);
  int c = cells(2 * radius, h);
  int n[3] = {c, c, cells(length, h)};
  double lo[3] = {-radius, -radius, -length / 2}, hi[3] = {radius, radius, length / 2};
  cylinder_shape cs = {radius, length / 2};
  shape_fns s = {cylinder_sdf, cylinder_project, cylinder_on_cap, &cs};
  return carve(n, lo, hi, &s, "cylinder mesh", m, err);
}

//---- torus ----

typedef struct {
  double R, r;
} torus_shape;

/* the point of the centre circle (radius R in the xy-plane) closest to x */
static void torus_centre(const torus_shape* t, const double x[3], double c[3]) {
  double rho = hypot(x[0], x[1]);
  c[0] = rho > 0 ? x[0] * t->R / rho : t->R, c[1] = rho > 0 ? x[1] * t->R / rho : 0, c[2] = 0;
}
static double torus_sdf(const void* self, const double x[3]) {
  const torus_shape* t = self;
  double c[3];
  torus_centre(t, x, c);
  double d[3] = {x[0] - c[0], x[1] - c[1], x[2]};
  return kn_vec3_norm(d) - t->r;
}
static void torus_project(const void* self, const double x[3], double y[3]) {
  const torus_shape* t = self;
  double c[3];
  torus_centre(t, x, c);
  double d[3] = {x[0] - c[0], x[1] - c[1], x[2]}, l = kn_vec3_norm(d);
  for (int k = 0; k < 3; ++k) y[k] = l > 0 ? c[k] + d[k] * t->r / l : x[k];
}

// (major radius R, minor radius r, h) => torus around the z axis
kn_status kn_tet_mesh_torus(double major_radius, double minor_radius, double h, kn_tet_mesh* m, kn_error* err) {
  if (!(minor_radius > 0 && major_radius > minor_radius && h > 0))
    return kn_fail(err, KN_ERR_INVALID, "torus mesh: need 0 < minor radius (%g) < major radius (%g) and h %g > 0",
                   minor_radius, major_radius, h);
  double e = major_radius + minor_radius;
  int c = cells(2 * e, h);
  int n[3] = {c, c, cells(2 * minor_radius, h)};
  double lo[3] = {-e, -e, -minor_radius}, hi[3] = {e, e, minor_radius};
  torus_shape ts = {major_radius, minor_radius};
  shape_fns s = {torus_sdf, torus_project, NULL, &ts};
  return carve(n, lo, hi, &s, "torus mesh", m, err);
}
