/* Mesh generators. The box is a regular grid of cubes, each split into the 6 Kuhn (Freudenthal)
 * tets that share its main diagonal: every cube face is then cut along the same diagonal as its
 * neighbour's, so the mesh is conforming and every tet has volume h^3/6.
 *
 * The curved shapes (sphere, cylinder, torus) are built surface first: an analytic closed
 * triangulation with edge length ~h and outward winding (subdivided icosahedron on the sphere;
 * rings on the cylinder side plus concentric rings on its caps; a (u, v) grid on the torus),
 * every vertex exactly on the surface, then filled by tetgen (kn_tet_mesh_from_surface) with the
 * radius/edge bound 1.4 and twice the volume of a regular tet of edge h, h^3 / (3 sqrt 2). Where
 * tetgen splits a boundary triangle to meet the quality bound, the new vertex lies on the flat
 * chord; it is moved onto the analytic surface (a move of at most the chord error, O(h^2 / r))
 * and the mesh is finalized again, which rejects any tet that move would invert. The volume
 * error is then the chord error of the polygonal surface, second order in h. Deterministic:
 * the surface is built in a fixed order and tetgen is deterministic for the same input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deformable/deformable.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

//---- box ----

/* (grid n[3] cells over [lo, hi]) => finalized mesh of 6 Kuhn tets per cell */
static kn_status box_grid(const int n[3], const double lo[3], const double hi[3], const char* name, kn_tet_mesh* m,
                          kn_error* err) {
  memset(m, 0, sizeof *m);
  double ncell = (double)n[0] * n[1] * n[2];
  if (ncell > 4e6)
    return kn_fail(err, KN_ERR_INVALID, "%s: %.0f grid cells (more than 4e6): the edge length h is too small", name,
                   ncell);
  int nx = n[0] + 1, ny = n[1] + 1, nz = n[2] + 1;
  size_t nnode = (size_t)nx * ny * nz, ncube = (size_t)n[0] * n[1] * n[2];
  m->X = kn_calloc(3 * nnode, sizeof(double));
  m->tet = kn_calloc(24 * ncube, sizeof(int));
  if (!m->X || !m->tet) {
    kn_tet_mesh_free(m);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", name);
  }
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        double* g = m->X + 3 * ((size_t)i + (size_t)nx * (j + (size_t)ny * k));
        /* lo + (hi - lo) * i / n hits hi exactly at i = n, so the faces are exactly flat */
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
        for (int p = 0; p < 6; ++p, ++nt)
          for (int q = 0; q < 4; ++q) {
            int b = kuhn[p][q];
            m->tet[4 * nt + q] = (i + (b & 1)) + nx * ((j + ((b >> 1) & 1)) + ny * (k + ((b >> 2) & 1)));
          }
  m->nvert = (int)nnode, m->ntet = (int)nt;
  kn_status s = kn_tet_mesh_finalize(m, name, err);
  if (s != KN_OK) kn_tet_mesh_free(m);
  return s;
}

static int cells(double length, double h) {
  double c = ceil(length / h - 1e-9);
  return c < 1 ? 1 : (int)c;
}

// (lx, ly, lz, h) => box [-l/2, l/2] per axis, ceil(l/h) cells per side, 6 Kuhn tets each
kn_status kn_tet_mesh_box(double lx, double ly, double lz, double h, kn_tet_mesh* m, kn_error* err) {
  memset(m, 0, sizeof *m);
  if (!(lx > 0 && ly > 0 && lz > 0 && h > 0))
    return kn_fail(err, KN_ERR_INVALID, "box mesh: sizes (%g, %g, %g) and h %g must be positive", lx, ly, lz, h);
  int n[3] = {cells(lx, h), cells(ly, h), cells(lz, h)};
  double lo[3] = {-lx / 2, -ly / 2, -lz / 2}, hi[3] = {lx / 2, ly / 2, lz / 2};
  return box_grid(n, lo, hi, "box mesh", m, err);
}

//---- surface builder ----

typedef struct {
  double* V;
  int* T;
  int nv, nt, capv, capt;
  int failed; /* out of memory */
} surface;

static int add_vertex(surface* s, double x, double y, double z) {
  if (s->nv == s->capv) {
    int cap = s->capv ? 2 * s->capv : 256;
    double* V = realloc(s->V, 3 * (size_t)cap * sizeof(double));
    if (!V) return s->failed = 1, 0;
    s->V = V, s->capv = cap;
  }
  double* p = s->V + 3 * s->nv;
  p[0] = x, p[1] = y, p[2] = z;
  return s->nv++;
}

static void add_triangle(surface* s, int a, int b, int c) {
  if (s->failed) return;
  if (s->nt == s->capt) {
    int cap = s->capt ? 2 * s->capt : 512;
    int* T = realloc(s->T, 3 * (size_t)cap * sizeof(int));
    if (!T) {
      s->failed = 1;
      return;
    }
    s->T = T, s->capt = cap;
  }
  int* t = s->T + 3 * s->nt++;
  t[0] = a, t[1] = b, t[2] = c;
}

/* moves a boundary vertex x onto the closest point of the analytic surface's curved part */
typedef void (*project_fn)(const void* shape, double x[3]);

/* (surface, projection) => tetgen mesh whose boundary vertices lie on the analytic surface */
static kn_status fill(surface* s, double h, const void* shape, project_fn project,
                      int (*on_flat)(const void* shape, const double* a, const double* b, const double* c),
                      const char* name, kn_tet_mesh* m, kn_error* err) {
  memset(m, 0, sizeof *m);
  kn_status st = KN_OK;
  if (s->failed) {
    st = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", name);
    goto done;
  }
  kn_tetrahedralize_options o = kn_tetrahedralize_options_default();
  o.radius_edge = 1.4;
  /* twice the volume of a regular tet of edge h, h^3 / (6 sqrt 2): tetgen's refinement leaves
   * most tets well below the bound, and with the bound at 1x it splits every boundary triangle
   * into 4 and makes 2.6x the tets with no better volume (sphere r = 1, h = 0.25: 12678 tets,
   * -0.42 %, worst quality 0.110 against 4788 tets, -0.55 %, 0.108) */
  o.max_volume = h * h * h / (3 * sqrt(2.0));
  st = kn_tet_mesh_from_surface(s->V, s->nv, s->T, s->nt, name, &o, m, err);
  if (st != KN_OK) goto done;
  /* tetgen's boundary Steiner points lie on the chords: move them onto the analytic surface;
   * the original vertices are already on it (the projection is idempotent to rounding) */
  char* curved = kn_calloc((size_t)m->nvert, 1);
  if (!curved) {
    kn_tet_mesh_free(m);
    st = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", name);
    goto done;
  }
  for (int f = 0; f < m->nsurf; ++f) {
    const int* t = m->surf + 3 * f;
    if (on_flat && on_flat(shape, m->X + 3 * t[0], m->X + 3 * t[1], m->X + 3 * t[2])) continue;
    for (int q = 0; q < 3; ++q) curved[t[q]] = 1;
  }
  for (int i = 0; i < m->nvert; ++i)
    if (curved[i]) project(shape, m->X + 3 * i);
  free(curved);
  st = kn_tet_mesh_finalize(m, name, err);
  if (st != KN_OK) kn_tet_mesh_free(m);
done:
  free(s->V), free(s->T);
  return st;
}

/* a shape's volume over h^3 beyond this is refused (as the box's 4e6 grid cells) */
static kn_status check_size(double volume, double h, const char* name, kn_error* err) {
  double n = volume / (h * h * h);
  if (n > 4e6)
    return kn_fail(err, KN_ERR_INVALID, "%s: volume / h^3 = %.0f (more than 4e6): the edge length h is too small", name,
                   n);
  return KN_OK;
}

//---- sphere ----

static void sphere_project(const void* self, double x[3]) {
  double R = *(const double*)self, r = kn_vec3_norm(x);
  if (r > 0)
    for (int k = 0; k < 3; ++k) x[k] *= R / r;
}

static double dist(const double* a, const double* b) { return hypot(hypot(a[0] - b[0], a[1] - b[1]), a[2] - b[2]); }

/* the 20 faces of the icosahedron with vertices (0, +-1, +-phi) and cyclic permutations: the
 * triples at mutual distance 2, wound outward */
static int icosahedron(double P[12][3], int F[20][3]) {
  const double phi = (1 + sqrt(5.0)) / 2;
  int n = 0;
  for (int c = 0; c < 3; ++c)
    for (int sa = -1; sa <= 1; sa += 2)
      for (int sb = -1; sb <= 1; sb += 2) {
        P[n][c] = 0, P[n][(c + 1) % 3] = sa, P[n][(c + 2) % 3] = sb * phi;
        ++n;
      }
  int nf = 0;
  for (int a = 0; a < 12; ++a)
    for (int b = a + 1; b < 12; ++b)
      for (int c = b + 1; c < 12; ++c) {
        double dab = dist(P[a], P[b]), dbc = dist(P[b], P[c]), dca = dist(P[c], P[a]);
        if (fabs(dab - 2) > 1e-9 || fabs(dbc - 2) > 1e-9 || fabs(dca - 2) > 1e-9 || nf == 20) continue;
        double u[3], v[3], nrm[3];
        for (int k = 0; k < 3; ++k) u[k] = P[b][k] - P[a][k], v[k] = P[c][k] - P[a][k];
        kn_vec3_cross(u, v, nrm);
        int out = kn_vec3_dot(nrm, P[a]) > 0;
        F[nf][0] = a, F[nf][1] = out ? b : c, F[nf][2] = out ? c : b;
        ++nf;
      }
  return nf;
}

// (radius, h) => ball around the origin: a subdivided icosahedron on the sphere, filled by tetgen
kn_status kn_tet_mesh_sphere(double radius, double h, kn_tet_mesh* m, kn_error* err) {
  memset(m, 0, sizeof *m);
  const char* name = "sphere mesh";
  if (!(radius > 0 && h > 0))
    return kn_fail(err, KN_ERR_INVALID, "%s: radius %g and h %g must be positive", name, radius, h);
  double volume = 4.0 / 3 * M_PI * radius * radius * radius;
  kn_status st = check_size(volume, h, name, err);
  if (st) return st;
  double P[12][3];
  int F[20][3];
  icosahedron(P, F);
  /* an icosahedron edge subtends 2 asin(1 / sqrt(phi^2 + 1)) = 1.1071 rad; after projection the
   * edges near a face centre stretch, so the arc length over n segments is about h */
  int n = (int)ceil(1.1071487177940904 * radius / h - 1e-9);
  if (n < 1) n = 1;
  surface s = {0};
  /* one vertex per (face, i, j), welded by exact position in kn_tet_mesh_from_surface: points on
   * an icosahedron edge are computed from the two corners in index order, so both faces sharing
   * that edge produce identical bits */
  int* idx = kn_calloc((size_t)(n + 1) * (n + 1), sizeof(int));
  if (!idx) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", name);
  for (int f = 0; f < 20; ++f) {
    for (int i = 0; i <= n; ++i)
      for (int j = 0; i + j <= n; ++j) {
        int w[3] = {n - i - j, i, j}, c[3] = {F[f][0], F[f][1], F[f][2]};
        /* sort the corners by index so shared edges sum in the same order */
        for (int a = 0; a < 3; ++a)
          for (int b = a + 1; b < 3; ++b)
            if (c[b] < c[a]) {
              int t = c[a];
              c[a] = c[b], c[b] = t, t = w[a], w[a] = w[b], w[b] = t;
            }
        double x[3] = {0, 0, 0};
        for (int a = 0; a < 3; ++a)
          for (int k = 0; k < 3; ++k) x[k] += (double)w[a] * P[c[a]][k];
        sphere_project(&radius, x);
        idx[i * (n + 1) + j] = add_vertex(&s, x[0], x[1], x[2]);
      }
    /* P(i, j) = A + i/n (B - A) + j/n (C - A): both triangle kinds keep the winding of (A, B, C) */
    for (int i = 0; i < n; ++i)
      for (int j = 0; i + j < n; ++j) {
        int a = idx[i * (n + 1) + j], b = idx[(i + 1) * (n + 1) + j], c = idx[i * (n + 1) + j + 1];
        add_triangle(&s, a, b, c);
        if (i + j + 1 < n) add_triangle(&s, b, idx[(i + 1) * (n + 1) + j + 1], c);
      }
  }
  free(idx);
  return fill(&s, h, &radius, sphere_project, NULL, name, m, err);
}

//---- cylinder ----

typedef struct {
  double radius, half;
} cylinder_shape;

/* radial projection onto the side; z is kept, so a rim vertex stays on its cap plane */
static void cylinder_project(const void* self, double x[3]) {
  const cylinder_shape* c = self;
  double r = hypot(x[0], x[1]);
  if (r > 0) x[0] *= c->radius / r, x[1] *= c->radius / r;
}
static int cylinder_on_cap(const void* self, const double* a, const double* b, const double* cc) {
  const cylinder_shape* c = self;
  double tol = 1e-12 * c->half;
  return fabs(fabs(a[2]) - c->half) < tol && fabs(fabs(b[2]) - c->half) < tol && fabs(fabs(cc[2]) - c->half) < tol;
}

/* join ring A (na vertices at angles 2 pi (i + oa) / na, indices a[]) to the ring B outside it
 * (nb, ob, b[]) by a strip of triangles, counter-clockwise seen from +z unless flip: march
 * around, each step advancing on the ring whose next vertex comes first in angle */
static void ring_strip(surface* s, const int* a, int na, double oa, const int* b, int nb, double ob, int flip) {
  double a0 = 2 * M_PI * oa / na;
  long sb = lround(a0 * nb / (2 * M_PI) - ob); /* B's vertex nearest A's first */
  int i = 0, j = 0;
  while (i < na || j < nb) {
    double an = 2 * M_PI * (i + 1 + oa) / na, bn = 2 * M_PI * ((double)sb + j + 1 + ob) / nb;
    int ai = a[i % na], bj = b[(int)(((sb + j) % nb + nb) % nb)];
    if (j == nb || (i < na && an < bn)) {
      int an_i = a[(i + 1) % na];
      if (flip) add_triangle(s, ai, an_i, bj);
      else add_triangle(s, ai, bj, an_i);
      ++i;
    } else {
      int bn_j = b[(int)(((sb + j + 1) % nb + nb) % nb)];
      if (flip) add_triangle(s, ai, bn_j, bj);
      else add_triangle(s, ai, bj, bn_j);
      ++j;
    }
  }
}

/* a flat disc cap at height z whose rim is rim[] (nt vertices at angles 2 pi (i + orim) / nt):
 * concentric rings of radius r k / nr, each with about 2 pi r k / nr / h vertices, and a centre */
static int add_cap(surface* s, double radius, double z, const int* rim, int nt, double orim, int nr, int flip) {
  int* ring = malloc(sizeof(int) * (size_t)nt);
  int* prev = malloc(sizeof(int) * (size_t)nt);
  if (!ring || !prev) {
    free(ring), free(prev);
    return s->failed = 1, 0;
  }
  int centre = add_vertex(s, 0, 0, z), np = 0;
  double op = 0;
  for (int k = 1; k <= nr; ++k) {
    int n = k == nr ? nt : (int)lround((double)nt * k / nr);
    if (n < 6) n = 6;
    if (n > nt) n = nt;
    double o = k == nr ? orim : 0.5 * (k % 2); /* stagger consecutive rings */
    if (k == nr) memcpy(ring, rim, sizeof(int) * (size_t)nt);
    else {
      double rho = radius * k / nr;
      for (int i = 0; i < n; ++i) {
        double t = 2 * M_PI * (i + o) / n;
        ring[i] = add_vertex(s, rho * cos(t), rho * sin(t), z);
      }
    }
    if (k == 1)
      for (int i = 0; i < n; ++i) {
        if (flip) add_triangle(s, centre, ring[(i + 1) % n], ring[i]);
        else add_triangle(s, centre, ring[i], ring[(i + 1) % n]);
      }
    else
      ring_strip(s, prev, np, op, ring, n, o, flip);
    memcpy(prev, ring, sizeof(int) * (size_t)n);
    np = n, op = o;
  }
  free(ring), free(prev);
  return !s->failed;
}

// (radius, length, h) => cylinder with axis z from -length/2 to length/2, filled by tetgen
kn_status kn_tet_mesh_cylinder(double radius, double length, double h, kn_tet_mesh* m, kn_error* err) {
  memset(m, 0, sizeof *m);
  const char* name = "cylinder mesh";
  if (!(radius > 0 && length > 0 && h > 0))
    return kn_fail(err, KN_ERR_INVALID, "%s: radius %g, length %g and h %g must be positive", name, radius, length,
                   h);
  double volume = M_PI * radius * radius * length;
  kn_status st = check_size(volume, h, name, err);
  if (st) return st;
  int nt = (int)ceil(2 * M_PI * radius / h - 1e-9), nz = cells(length, h), nr = cells(radius, h);
  if (nt < 6) nt = 6;
  double half = length / 2;
  surface s = {0};
  int* rings = kn_calloc((size_t)(nz + 1) * nt, sizeof(int));
  if (!rings) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", name);
  /* side rings, every other one turned by half a step so the side triangles are isosceles */
  for (int k = 0; k <= nz; ++k) {
    double z = k == 0 ? -half : k == nz ? half : -half + length * k / nz, o = 0.5 * (k % 2);
    for (int i = 0; i < nt; ++i) {
      double t = 2 * M_PI * (i + o) / nt;
      rings[k * nt + i] = add_vertex(&s, radius * cos(t), radius * sin(t), z);
    }
  }
  /* side strips: ring k below, ring k + 1 above; (lower_i, lower_i+1, upper) is counter-clockwise
   * seen from outside */
  for (int k = 0; k < nz; ++k) {
    const int *lo = rings + k * nt, *up = rings + (k + 1) * nt;
    for (int i = 0; i < nt; ++i) {
      int l0 = lo[i], l1 = lo[(i + 1) % nt];
      if (k % 2 == 0) { /* upper ring is half a step ahead: upper i sits between lower i and i+1 */
        int u0 = up[i], um = up[(i + nt - 1) % nt];
        add_triangle(&s, l0, l1, u0);
        add_triangle(&s, l0, u0, um);
      } else { /* lower ring ahead: lower i sits between upper i and i+1 */
        int u1 = up[(i + 1) % nt];
        add_triangle(&s, l0, l1, u1);
        add_triangle(&s, l0, u1, up[i]);
      }
    }
  }
  add_cap(&s, radius, -half, rings, nt, 0, nr, 1);
  add_cap(&s, radius, half, rings + nz * nt, nt, 0.5 * (nz % 2), nr, 0);
  free(rings);
  cylinder_shape cs = {radius, half};
  return fill(&s, h, &cs, cylinder_project, cylinder_on_cap, name, m, err);
}

//---- torus ----

typedef struct {
  double R, r;
} torus_shape;

/* closest point: through the nearest point of the centre circle (radius R in the xy-plane) */
static void torus_project(const void* self, double x[3]) {
  const torus_shape* t = self;
  double rho = hypot(x[0], x[1]);
  double c[3] = {rho > 0 ? x[0] * t->R / rho : t->R, rho > 0 ? x[1] * t->R / rho : 0, 0};
  double d[3] = {x[0] - c[0], x[1] - c[1], x[2]}, l = kn_vec3_norm(d);
  if (l > 0)
    for (int k = 0; k < 3; ++k) x[k] = c[k] + d[k] * t->r / l;
}

// (major radius R, minor radius r, h) => torus around the z axis: a (u, v) grid filled by tetgen
kn_status kn_tet_mesh_torus(double major_radius, double minor_radius, double h, kn_tet_mesh* m, kn_error* err) {
  memset(m, 0, sizeof *m);
  const char* name = "torus mesh";
  if (!(minor_radius > 0 && major_radius > minor_radius && h > 0))
    return kn_fail(err, KN_ERR_INVALID, "%s: need 0 < minor radius (%g) < major radius (%g) and h %g > 0", name,
                   minor_radius, major_radius, h);
  double R = major_radius, r = minor_radius, volume = 2 * M_PI * M_PI * R * r * r;
  kn_status st = check_size(volume, h, name, err);
  if (st) return st;
  /* spacing h along the centre circle and around the tube; nv even so rows can be staggered */
  int nu = (int)ceil(2 * M_PI * R / h - 1e-9), nv = (int)ceil(2 * M_PI * r / h - 1e-9);
  if (nu < 6) nu = 6;
  if (nv < 6) nv = 6;
  nv += nv % 2;
  surface s = {0};
  /* x(u, v) = ((R + r cos v) cos u, (R + r cos v) sin u, r sin v); x_u x x_v points outward, so
   * (u, v) -> (u+, v) -> (u, v+) is counter-clockwise seen from outside. Row j (fixed v) is
   * turned by half a u-step when j is odd, so the triangles are nearly isosceles. */
  for (int j = 0; j < nv; ++j)
    for (int i = 0; i < nu; ++i) {
      double u = 2 * M_PI * (i + 0.5 * (j % 2)) / nu, v = 2 * M_PI * j / nv;
      add_vertex(&s, (R + r * cos(v)) * cos(u), (R + r * cos(v)) * sin(u), r * sin(v));
    }
  for (int j = 0; j < nv; ++j) {
    int j1 = (j + 1) % nv;
    for (int i = 0; i < nu; ++i) {
      int i1 = (i + 1) % nu, l0 = j * nu + i, l1 = j * nu + i1;
      if (j % 2 == 0) { /* row j1 is half a step ahead: its vertex i sits between i and i+1 */
        add_triangle(&s, l0, l1, j1 * nu + i);
        add_triangle(&s, l0, j1 * nu + i, j1 * nu + (i + nu - 1) % nu);
      } else {
        add_triangle(&s, l0, l1, j1 * nu + i1);
        add_triangle(&s, l0, j1 * nu + i1, j1 * nu + i);
      }
    }
  }
  torus_shape ts = {R, r};
  return fill(&s, h, &ts, torus_project, NULL, name, m, err);
}
