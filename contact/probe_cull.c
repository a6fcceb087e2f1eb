/* Probe culling for the narrow phase: conservative tests that a probe point (a mesh vertex, a
 * box corner, ...) cannot come within a given distance of the other shape, by the other shape's
 * bounding sphere or its bounding box. A culled probe is one the exact signed distance would
 * also reject, so the narrow phase's points do not change (tests/contact/test_probe_culling.c). */
#include <math.h>

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
