/* Tetrahedral meshes: validation (indices, orientation, degeneracy, unused vertices) and the
 * boundary surface, found by sorting every tet face by its sorted vertex triple (faces of exactly
 * one tet are boundary). Sorting, not a hash table, keeps the surface order deterministic. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deformable/deformable.h"

void kn_tet_mesh_free(kn_tet_mesh* m) {
  if (!m) return;
  free(m->X), free(m->tet), free(m->surf);
  memset(m, 0, sizeof *m);
}

/* 6 * signed volume of tet t: det[b-a, c-a, d-a] */
static double tet_det(const double* X, const int* t) {
  const double *a = X + 3 * t[0], *b = X + 3 * t[1], *c = X + 3 * t[2], *d = X + 3 * t[3];
  double u[3], v[3], w[3];
  for (int k = 0; k < 3; ++k) u[k] = b[k] - a[k], v[k] = c[k] - a[k], w[k] = d[k] - a[k];
  return u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
         u[2] * (v[0] * w[1] - v[1] * w[0]);
}

// mesh => total volume, sum of det/6 over the tets
double kn_tet_mesh_volume(const kn_tet_mesh* m) {
  double v = 0;
  for (int t = 0; t < m->ntet; ++t) v += tet_det(m->X, m->tet + 4 * t) / 6.0;
  return v;
}

// mesh => area of the boundary triangles
double kn_tet_mesh_surface_area(const kn_tet_mesh* m) {
  double area = 0;
  for (int f = 0; f < m->nsurf; ++f) {
    const double *a = m->X + 3 * m->surf[3 * f], *b = m->X + 3 * m->surf[3 * f + 1],
                 *c = m->X + 3 * m->surf[3 * f + 2];
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]}, n[3];
    kn_vec3_cross(u, v, n);
    area += 0.5 * kn_vec3_norm(n);
  }
  return area;
}

//---- surface ----

typedef struct {
  int key[3];  /* sorted vertex indices */
  int tri[3];  /* outward winding as seen from the owning tet */
  int tet;
} face_rec;

static int cmp_face(const void* pa, const void* pb) {
  const face_rec *a = pa, *b = pb;
  for (int k = 0; k < 3; ++k)
    if (a->key[k] != b->key[k]) return a->key[k] < b->key[k] ? -1 : 1;
  return (a->tet > b->tet) - (a->tet < b->tet);
}

static void sort3(int* k) {
  int t;
  if (k[0] > k[1]) t = k[0], k[0] = k[1], k[1] = t;
  if (k[1] > k[2]) t = k[1], k[1] = k[2], k[2] = t;
  if (k[0] > k[1]) t = k[0], k[0] = k[1], k[1] = t;
}

/* Faces of a positively oriented tet (0,1,2,3), each wound so its normal points away from the
 * opposite vertex: for det[b-a, c-a, d-a] > 0, (a,c,b) faces away from d, etc. */
static const int k_tet_faces[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};

static kn_status build_surface(kn_tet_mesh* m, const char* name, kn_error* err) {
  size_t nf = 4 * (size_t)m->ntet;
  face_rec* f = kn_calloc(nf, sizeof *f);
  if (!f) return kn_fail(err, KN_ERR_NOMEM, "tet mesh '%s': out of memory", name);
  for (int t = 0; t < m->ntet; ++t)
    for (int j = 0; j < 4; ++j) {
      face_rec* r = f + 4 * (size_t)t + j;
      for (int k = 0; k < 3; ++k) r->tri[k] = r->key[k] = m->tet[4 * t + k_tet_faces[j][k]];
      sort3(r->key);
      r->tet = t;
    }
  qsort(f, nf, sizeof *f, cmp_face);
  int nsurf = 0;
  for (size_t i = 0; i < nf;) {
    size_t j = i + 1;
    while (j < nf && memcmp(f[j].key, f[i].key, sizeof f[i].key) == 0) ++j;
    if (j - i > 2) {
      kn_status s = kn_fail(err, KN_ERR_INVALID,
                            "tet mesh '%s': face (%d, %d, %d) is shared by %d tets (tets %d and %d and more); "
                            "expected at most 2 (a non-manifold or duplicated tet)",
                            name, f[i].key[0], f[i].key[1], f[i].key[2], (int)(j - i), f[i].tet, f[i + 1].tet);
      free(f);
      return s;
    }
    if (j - i == 1) f[nsurf++] = f[i]; /* compacts in place: nsurf <= i */
    i = j;
  }
  free(m->surf);
  m->surf = kn_calloc(3 * (size_t)nsurf, sizeof(int));
  if (!m->surf) {
    free(f);
    return kn_fail(err, KN_ERR_NOMEM, "tet mesh '%s': out of memory", name);
  }
  for (int s = 0; s < nsurf; ++s) memcpy(m->surf + 3 * s, f[s].tri, sizeof f[s].tri);
  m->nsurf = nsurf;
  free(f);
  return KN_OK;
}

//---- validation ----

// (X, tet) => error for a bad index, an inverted, degenerate or unused-vertex mesh; else the surface
kn_status kn_tet_mesh_finalize(kn_tet_mesh* m, const char* name, kn_error* err) {
  if (!name) name = "(unnamed)";
  if (m->nvert <= 0 || m->ntet <= 0 || !m->X || !m->tet)
    return kn_fail(err, KN_ERR_INVALID, "tet mesh '%s': has %d vertices and %d tets (expected at least 4 and 1)",
                   name, m->nvert, m->ntet);
  for (int i = 0; i < 3 * m->nvert; ++i)
    if (!isfinite(m->X[i]))
      return kn_fail(err, KN_ERR_INVALID, "tet mesh '%s': vertex %d has a non-finite coordinate", name, i / 3);
  char* used = kn_calloc((size_t)m->nvert, 1);
  if (!used) return kn_fail(err, KN_ERR_NOMEM, "tet mesh '%s': out of memory", name);
  for (int t = 0; t < m->ntet; ++t) {
    const int* v = m->tet + 4 * t;
    for (int k = 0; k < 4; ++k) {
      if (v[k] < 0 || v[k] >= m->nvert) {
        free(used);
        return kn_fail(err, KN_ERR_INVALID, "tet mesh '%s': tet %d has vertex index %d (expected 0..%d)", name, t,
                       v[k], m->nvert - 1);
      }
      used[v[k]] = 1;
      for (int j = 0; j < k; ++j)
        if (v[j] == v[k]) {
          free(used);
          return kn_fail(err, KN_ERR_INVALID, "tet mesh '%s': tet %d repeats vertex %d", name, t, v[k]);
        }
    }
    /* degenerate: |volume| below 1e-12 of the tet's mean edge length cubed */
    double e = 0;
    static const int edges[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
    for (int q = 0; q < 6; ++q) {
      const double *p = m->X + 3 * v[edges[q][0]], *r = m->X + 3 * v[edges[q][1]];
      double d[3] = {r[0] - p[0], r[1] - p[1], r[2] - p[2]};
      e += kn_vec3_norm(d) / 6;
    }
    double vol = tet_det(m->X, v) / 6;
    if (fabs(vol) <= 1e-12 * e * e * e) {
      free(used);
      return kn_fail(err, KN_ERR_INVALID,
                     "tet mesh '%s': tet %d (%d, %d, %d, %d) is degenerate: volume %.3g for mean edge %.3g", name, t,
                     v[0], v[1], v[2], v[3], vol, e);
    }
    if (vol < 0) {
      free(used);
      return kn_fail(err, KN_ERR_INVALID,
                     "tet mesh '%s': tet %d (%d, %d, %d, %d) is inverted: volume %.6g < 0 (expected "
                     "det[b-a, c-a, d-a] > 0)",
                     name, t, v[0], v[1], v[2], v[3], vol);
    }
  }
  /* an unused vertex would get zero lumped mass and make the mass matrix singular */
  for (int i = 0; i < m->nvert; ++i)
    if (!used[i]) {
      free(used);
      return kn_fail(err, KN_ERR_INVALID, "tet mesh '%s': vertex %d belongs to no tet (it would have zero mass)",
                     name, i);
    }
  free(used);
  return build_surface(m, name, err);
}
