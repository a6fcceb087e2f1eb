/* Particle sampling inside a shape: a regular lattice of spacing h / ppc^(1/3) clipped to the
 * solid (closed meshes through the generalized winding number, which tolerates unwelded soups). */
#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpm/mpm.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef struct {
  double* V;
  int* T;
  int nv, nt;
} tri_soup;

static kn_status load_mesh(const kn_mpm_shape* sh, const char* who, tri_soup* m, kn_error* err) {
  double sc = sh->scale > 0 ? sh->scale : 1.0;
  if (sh->vertices) {
    if (sh->nvert <= 0 || sh->ntri <= 0 || !sh->triangles)
      return kn_fail(err, KN_ERR_INVALID, "%s: mesh shape has %d vertices and %d triangles (expected a closed surface)",
                     who, sh->nvert, sh->ntri);
    m->nv = sh->nvert, m->nt = sh->ntri;
    m->V = kn_calloc(3 * (size_t)m->nv, sizeof(double));
    m->T = kn_calloc(3 * (size_t)m->nt, sizeof(int));
    if (!m->V || !m->T) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for the mesh", who);
    for (int k = 0; k < 3 * m->nv; k++) m->V[k] = sc * sh->vertices[k];
    for (int k = 0; k < 3 * m->nt; k++) {
      if (sh->triangles[k] < 0 || sh->triangles[k] >= m->nv)
        return kn_fail(err, KN_ERR_INVALID, "%s: mesh triangle %d has vertex index %d (expected 0..%d)", who, k / 3,
                       sh->triangles[k], m->nv - 1);
      m->T[k] = sh->triangles[k];
    }
    return KN_OK;
  }
  if (!sh->mesh_path) return kn_fail(err, KN_ERR_INVALID, "%s: mesh shape has neither vertices nor mesh_path", who);
  kn_status fs = kn_file_check(sh->mesh_path, "mesh", err);
  if (fs) {
    kn_error_prefix(err, "%s: ", who);
    return fs;
  }
  const struct aiScene* s = aiImportFile(sh->mesh_path, aiProcess_Triangulate | aiProcess_PreTransformVertices);
  if (!s) return kn_fail(err, KN_ERR_IO, "%s: cannot read mesh '%s': %s", who, sh->mesh_path, aiGetErrorString());
  size_t nv = 0, nt = 0;
  for (unsigned i = 0; i < s->mNumMeshes; i++) {
    nv += s->mMeshes[i]->mNumVertices;
    for (unsigned f = 0; f < s->mMeshes[i]->mNumFaces; f++) nt += s->mMeshes[i]->mFaces[f].mNumIndices == 3;
  }
  if (nv == 0 || nt == 0) {
    aiReleaseImport(s);
    return kn_fail(err, KN_ERR_PARSE, "%s: mesh '%s' has no triangles (expected a closed triangle mesh)", who,
                   sh->mesh_path);
  }
  m->V = kn_calloc(3 * nv, sizeof(double));
  m->T = kn_calloc(3 * nt, sizeof(int));
  if (!m->V || !m->T) {
    aiReleaseImport(s);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for mesh '%s'", who, sh->mesh_path);
  }
  size_t base = 0;
  for (unsigned i = 0; i < s->mNumMeshes; i++) {
    const struct aiMesh* me = s->mMeshes[i];
    for (unsigned v = 0; v < me->mNumVertices; v++) {
      m->V[3 * (base + v) + 0] = sc * me->mVertices[v].x;
      m->V[3 * (base + v) + 1] = sc * me->mVertices[v].y;
      m->V[3 * (base + v) + 2] = sc * me->mVertices[v].z;
    }
    for (unsigned f = 0; f < me->mNumFaces; f++) {
      if (me->mFaces[f].mNumIndices != 3) continue;
      for (int c = 0; c < 3; c++) m->T[3 * m->nt + c] = (int)(base + me->mFaces[f].mIndices[c]);
      m->nt++;
    }
    base += me->mNumVertices;
  }
  m->nv = (int)nv;
  aiReleaseImport(s);
  return KN_OK;
}

/* Generalized winding number of a closed surface at x: sum of the triangles' signed solid angles
 * (Van Oosterom & Strackee) over 4 pi; ~1 inside, ~0 outside for an outward-wound surface. */
static double winding_number(const tri_soup* m, const double x[3]) {
  double sum = 0;
  for (int t = 0; t < m->nt; t++) {
    double a[3], b[3], c[3];
    for (int d = 0; d < 3; d++) {
      a[d] = m->V[3 * m->T[3 * t] + d] - x[d];
      b[d] = m->V[3 * m->T[3 * t + 1] + d] - x[d];
      c[d] = m->V[3 * m->T[3 * t + 2] + d] - x[d];
    }
    double la = kn_vec3_norm(a), lb = kn_vec3_norm(b), lc = kn_vec3_norm(c), bc[3];
    kn_vec3_cross(b, c, bc);
    double num = kn_vec3_dot(a, bc);
    double den = la * lb * lc + kn_vec3_dot(a, b) * lc + kn_vec3_dot(a, c) * lb + kn_vec3_dot(b, c) * la;
    sum += 2 * atan2(num, den);
  }
  return sum / (4 * M_PI);
}

/* Lattice point (i, j, k) moved by up to +-amp/2 per axis; the offsets come from a hash of the
 * index (SplitMix64), so a sample is the same on every machine and run, like Drake's per-cell
 * random sampling but reproducible. Points stay in their own lattice cell (boxes keep their count). */
static void jitter_point(long i, long j, long k, double amp, double p[3]) {
  uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15ULL ^ (uint64_t)j * 0xC2B2AE3D27D4EB4FULL ^ (uint64_t)k * 0x165667B19E3779F9ULL;
  for (int d = 0; d < 3; d++) {
    z += 0x9E3779B97F4A7C15ULL;
    uint64_t r = z;
    r = (r ^ (r >> 30)) * 0xBF58476D1CE4E5B9ULL;
    r = (r ^ (r >> 27)) * 0x94D049BB133111EBULL;
    r ^= r >> 31;
    p[d] += amp * ((double)(r >> 11) / 9007199254740992.0 - 0.5);
  }
}

static int inside(const kn_mpm_shape* sh, const tri_soup* m, const double x[3]) {
  switch (sh->type) {
    case KN_MPM_BOX:
      return fabs(x[0]) <= 0.5 * sh->size[0] && fabs(x[1]) <= 0.5 * sh->size[1] && fabs(x[2]) <= 0.5 * sh->size[2];
    case KN_MPM_SPHERE: return x[0] * x[0] + x[1] * x[1] + x[2] * x[2] <= sh->radius * sh->radius;
    case KN_MPM_CYLINDER:
      return x[0] * x[0] + x[1] * x[1] <= sh->radius * sh->radius && fabs(x[2]) <= 0.5 * sh->length;
    case KN_MPM_MESH: return winding_number(m, x) > 0.5;
  }
  return 0;
}

kn_status kn_mpm_sample_shape(const kn_mpm_shape* sh, double h, int ppc, const char* name, double** xout, int* npout,
                              kn_error* err) {
  const char* who = name ? name : "mpm body";
  *xout = NULL;
  *npout = 0;
  if (!(h > 0) || !isfinite(h)) return kn_fail(err, KN_ERR_INVALID, "%s: grid spacing h %g must be positive", who, h);
  int n = (int)lround(cbrt((double)ppc));
  if (ppc < 1 || n * n * n != ppc)
    return kn_fail(err, KN_ERR_INVALID, "%s: particles_per_cell %d must be a cube (1, 8, 27, 64, ...)", who, ppc);
  double lo[3], hi[3];
  tri_soup m = {0};
  kn_status st = KN_OK;
  switch (sh->type) {
    case KN_MPM_BOX:
      for (int d = 0; d < 3; d++)
        if (!(sh->size[d] > 0) || !isfinite(sh->size[d]))
          return kn_fail(err, KN_ERR_INVALID, "%s: box size[%d] %g must be positive", who, d, sh->size[d]);
      for (int d = 0; d < 3; d++) lo[d] = -0.5 * sh->size[d], hi[d] = 0.5 * sh->size[d];
      break;
    case KN_MPM_SPHERE:
      if (!(sh->radius > 0) || !isfinite(sh->radius))
        return kn_fail(err, KN_ERR_INVALID, "%s: sphere radius %g must be positive", who, sh->radius);
      for (int d = 0; d < 3; d++) lo[d] = -sh->radius, hi[d] = sh->radius;
      break;
    case KN_MPM_CYLINDER:
      if (!(sh->radius > 0) || !isfinite(sh->radius))
        return kn_fail(err, KN_ERR_INVALID, "%s: cylinder radius %g must be positive", who, sh->radius);
      if (!(sh->length > 0) || !isfinite(sh->length))
        return kn_fail(err, KN_ERR_INVALID, "%s: cylinder length %g must be positive", who, sh->length);
      lo[0] = lo[1] = -sh->radius, hi[0] = hi[1] = sh->radius;
      lo[2] = -0.5 * sh->length, hi[2] = 0.5 * sh->length;
      break;
    case KN_MPM_MESH:
      st = load_mesh(sh, who, &m, err);
      if (st != KN_OK) goto done;
      for (int d = 0; d < 3; d++) lo[d] = INFINITY, hi[d] = -INFINITY;
      for (int v = 0; v < m.nv; v++)
        for (int d = 0; d < 3; d++) lo[d] = fmin(lo[d], m.V[3 * v + d]), hi[d] = fmax(hi[d], m.V[3 * v + d]);
      break;
    default: return kn_fail(err, KN_ERR_INVALID, "%s: unknown shape type %d", who, (int)sh->type);
  }
  double s = h / n;
  long k0[3], k1[3];
  double count = 1;
  for (int d = 0; d < 3; d++) {
    /* anchored at the bounding-box corner: a box of side m s gets exactly m points per axis */
    k0[d] = 0, k1[d] = (long)floor((hi[d] - lo[d]) / s - 0.5 + 1e-9);
    count *= (double)(k1[d] >= k0[d] ? k1[d] - k0[d] + 1 : 0);
  }
  if (count > 5e7) {
    st = kn_fail(err, KN_ERR_INVALID, "%s: %.3g lattice points (h %g, %d per cell): too many, use a larger h", who,
                 count, h, ppc);
    goto done;
  }
  if (count > 0) {
    double* x = malloc(3 * sizeof(double) * (size_t)count);
    if (!x) {
      st = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for %.0f particles", who, count);
      goto done;
    }
    int np = 0;
    for (long i = k0[0]; i <= k1[0]; i++)
      for (long j = k0[1]; j <= k1[1]; j++)
        for (long k = k0[2]; k <= k1[2]; k++) {
          double p[3] = {lo[0] + ((double)i + 0.5) * s, lo[1] + ((double)j + 0.5) * s, lo[2] + ((double)k + 0.5) * s};
          if (sh->jitter > 0) jitter_point(i, j, k, sh->jitter * s, p);
          if (inside(sh, &m, p)) memcpy(x + 3 * np++, p, sizeof p);
        }
    if (np == 0) free(x);
    else *xout = x, *npout = np;
  }
  if (*npout == 0)
    st = kn_fail(err, KN_ERR_INVALID,
                 "%s: the shape contains no particle (empty sample: smaller than the lattice spacing %g = h / %d)", who,
                 s, n);
done:
  free(m.V);
  free(m.T);
  return st;
}
