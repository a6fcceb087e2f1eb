/* Probe culling for the narrow phase: conservative tests that a probe point (a mesh vertex, a
 * box corner, ...) cannot come within a given distance of the other shape, by the other shape's
 * bounding sphere, its bounding box, or its support plane along the pair normal (the plane
 * touching its hull: every point of the shape lies below it, so a probe above it by more than the
 * distance is that far from the shape). A culled probe is one the exact signed distance would
 * also reject, so the narrow phase's points do not change (tests/contact/test_probe_culling.c,
 * test_mesh_search.c). */
#include <math.h>
#include <string.h>

#include "contact/collision_internal.h"

// (shape F at its pose, shape P at its pose) => F's bounding sphere: centre in P's frame, radius
void kn_probe_cull_sphere(const kn_nshape* F, const kn_nshape* P, double centre_P[3], double* radius) {
  double cl[3] = {0, 0, 0}, r = INFINITY;
  const double* sz = F->shape->size;
  switch (F->shape->type) {
    case KN_SHAPE_SPHERE: r = sz[0]; break;
    case KN_SHAPE_BOX: r = 0.5 * sqrt(sz[0] * sz[0] + sz[1] * sz[1] + sz[2] * sz[2]); break;
    case KN_SHAPE_CYLINDER: r = hypot(sz[0], 0.5 * sz[1]); break;
    case KN_SHAPE_CAPSULE: r = sz[0] + 0.5 * sz[1]; break;
    case KN_SHAPE_MESH:
      if (F->mesh) cl[0] = F->mesh->sphere_c[0], cl[1] = F->mesh->sphere_c[1], cl[2] = F->mesh->sphere_c[2];
      r = F->mesh ? F->mesh->sphere_r : INFINITY;
      break;
    case KN_SHAPE_HALFSPACE: break;
  }
  double cw[3], d[3];
  kn_pose_apply(F->X, cl, cw);
  for (int k = 0; k < 3; ++k) d[k] = cw[k] - P->X->p[k];
  kn_mat3_tvec(P->X->R, d, centre_P);
  *radius = r;
}

// (point x, centre c, distance) => 1 when x lies farther than distance from c
int kn_probe_cull_vertex(const double x[3], const double c[3], double distance) {
  double d[3] = {x[0] - c[0], x[1] - c[1], x[2] - c[2]};
  return d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > distance * distance;
}

// (point x, box lo..hi, distance) => 1 when x lies farther than distance from the box
int kn_probe_cull_box(const double x[3], const double lo[3], const double hi[3], double distance) {
  double s = 0;
  for (int k = 0; k < 3; ++k) {
    double d = x[k] < lo[k] ? lo[k] - x[k] : (x[k] > hi[k] ? x[k] - hi[k] : 0);
    s += d * d;
  }
  return s > distance * distance;
}

// (shape, mesh or NULL, direction d in the shape frame) => max of d . x over the shape
double kn_shape_support_height_local(const kn_shape* s, const kn_mesh_data* m, const double d[3]) {
  const double* sz = s->size;
  double l = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  switch (s->type) {
    case KN_SHAPE_SPHERE: return sz[0] * l;
    case KN_SHAPE_BOX: return 0.5 * (sz[0] * fabs(d[0]) + sz[1] * fabs(d[1]) + sz[2] * fabs(d[2]));
    case KN_SHAPE_CYLINDER: return sz[0] * hypot(d[0], d[1]) + 0.5 * sz[1] * fabs(d[2]);
    case KN_SHAPE_CAPSULE: return sz[0] * l + 0.5 * sz[1] * fabs(d[2]);
    case KN_SHAPE_MESH: {
      if (!m) return INFINITY;
      if (m->hull.nv > 0) {
        const double* v = &m->hull.v[3 * kn_hull_support(&m->hull, d, 0)];
        return d[0] * v[0] + d[1] * v[1] + d[2] * v[2];
      }
      double best = -INFINITY;
      for (int i = 0; i < m->nv; ++i) {
        const double* v = &m->v[3 * i];
        best = fmax(best, d[0] * v[0] + d[1] * v[1] + d[2] * v[2]);
      }
      return best;
    }
    case KN_SHAPE_HALFSPACE: return INFINITY;
  }
  return INFINITY;
}

// (shape F, shape P, unit dir_W from F towards P, distance) => the support-plane cull of P's probes
void kn_probe_slab_init(const kn_nshape* F, const kn_nshape* P, const double dir_W[3], double distance,
                        kn_probe_slab* s) {
  double dF[3];
  kn_mat3_tvec(F->X->R, dir_W, dF);
  const double* pF = F->X->p;
  double hF = kn_shape_support_height_local(F->shape, F->mesh, dF);
  double hW = hF + dir_W[0] * pF[0] + dir_W[1] * pF[1] + dir_W[2] * pF[2];
  s->cut = INFINITY;
  if (!isfinite(hW)) return;
  /* round-off of the dot products and pose transforms, relative to the magnitudes involved: the
   * test is conservative, so a culled probe is one the exact distance also puts beyond distance */
  double scale = 1 + fabs(hF) + sqrt(pF[0] * pF[0] + pF[1] * pF[1] + pF[2] * pF[2]);
  if (P->shape->type == KN_SHAPE_MESH && P->mesh) {
    const double* pP = P->X->p;
    kn_mat3_tvec(P->X->R, dir_W, s->dir);
    double off = dir_W[0] * pP[0] + dir_W[1] * pP[1] + dir_W[2] * pP[2];
    const double* c = P->mesh->sphere_c;
    scale += fabs(off) + P->mesh->sphere_r + sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
    s->cut = hW + distance - off + 1e-9 * scale;
  } else {
    memcpy(s->dir, dir_W, sizeof s->dir);
    const double* pP = P->X->p;
    const double* sz = P->shape->size;
    scale += sqrt(pP[0] * pP[0] + pP[1] * pP[1] + pP[2] * pP[2]) + fabs(sz[0]) + fabs(sz[1]) + fabs(sz[2]);
    s->cut = hW + distance + 1e-9 * scale;
  }
}
