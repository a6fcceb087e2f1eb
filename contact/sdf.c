/* Signed distance and outward gradient from a point to a shape: closed forms for the
 * primitives (exact inside and outside), the BVH query for meshes. */
#include <math.h>
#include <string.h>

#include "contact/collision_internal.h"

static double sgn(double x) { return x < 0 ? -1.0 : 1.0; }

/* inside a box the nearest face wins; outside, the distance to the clamped point */
static double box_sdf(const double h[3], const double x[3], double g[3]) {
  double q[3], o2 = 0;
  int far = 0;
  for (int k = 0; k < 3; ++k) {
    q[k] = fabs(x[k]) - h[k];
    if (q[k] > 0) o2 += q[k] * q[k], far = 1;
  }
  if (far) {
    double d = sqrt(o2);
    for (int k = 0; k < 3; ++k) g[k] = q[k] > 0 ? sgn(x[k]) * q[k] / d : 0.0;
    return d;
  }
  int m = 0;
  for (int k = 1; k < 3; ++k)
    if (q[k] > q[m]) m = k;
  g[0] = g[1] = g[2] = 0;
  g[m] = sgn(x[m]);
  return q[m];
}

/* cylinder of radius r, half length hl along z: a 2D box in (rho, z) */
static double cylinder_sdf(double r, double hl, const double x[3], double g[3]) {
  double rho = hypot(x[0], x[1]);
  double ux = 1, uy = 0; /* radial direction; +x on the axis (a fixed, deterministic choice) */
  if (rho > 0) ux = x[0] / rho, uy = x[1] / rho;
  double dr = rho - r, dz = fabs(x[2]) - hl;
  if (dr > 0 || dz > 0) {
    double a = fmax(dr, 0), b = fmax(dz, 0), d = hypot(a, b);
    g[0] = ux * a / d, g[1] = uy * a / d, g[2] = sgn(x[2]) * b / d;
    return d;
  }
  if (dr >= dz) {
    g[0] = ux, g[1] = uy, g[2] = 0;
    return dr;
  }
  g[0] = g[1] = 0, g[2] = sgn(x[2]);
  return dz;
}

/* capsule: distance to the core segment minus the radius */
static double capsule_sdf(double r, double hl, const double x[3], double g[3]) {
  double c[3] = {0, 0, fmax(-hl, fmin(hl, x[2]))};
  double d[3] = {x[0] - c[0], x[1] - c[1], x[2] - c[2]};
  double n = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  if (n > 0) {
    for (int k = 0; k < 3; ++k) g[k] = d[k] / n;
  } else {
    g[0] = 1, g[1] = 0, g[2] = 0;
  }
  return n - r;
}

// (shape, mesh data for MESH, point in the shape frame) => signed distance, outward unit gradient
double kn_shape_signed_distance_local(const kn_shape* s, const kn_mesh_data* m, const double x[3], double g[3]) {
  switch (s->type) {
    case KN_SHAPE_SPHERE: {
      double n = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
      if (n > 0) {
        for (int k = 0; k < 3; ++k) g[k] = x[k] / n;
      } else {
        g[0] = 0, g[1] = 0, g[2] = 1;
      }
      return n - s->size[0];
    }
    case KN_SHAPE_BOX: {
      double h[3] = {0.5 * s->size[0], 0.5 * s->size[1], 0.5 * s->size[2]};
      return box_sdf(h, x, g);
    }
    case KN_SHAPE_CYLINDER: return cylinder_sdf(s->size[0], 0.5 * s->size[1], x, g);
    case KN_SHAPE_CAPSULE: return capsule_sdf(s->size[0], 0.5 * s->size[1], x, g);
    case KN_SHAPE_HALFSPACE: g[0] = 0, g[1] = 0, g[2] = 1; return x[2];
    case KN_SHAPE_MESH:
      if (m) return kn_mesh_signed_distance(m, x, g);
      break;
  }
  g[0] = g[1] = 0, g[2] = 1;
  return INFINITY;
}

// (scene, collider i, its world pose, world point x) => signed distance, world outward gradient
double kn_collider_signed_distance(const kn_collision_scene* cs, int i, const kn_pose* X_WG, const double x[3],
                                   double grad[3]) {
  double g[3] = {0, 0, 1};
  if (!cs || i < 0 || i >= cs->n) {
    if (grad) memcpy(grad, g, sizeof g);
    return INFINITY;
  }
  double d[3] = {x[0] - X_WG->p[0], x[1] - X_WG->p[1], x[2] - X_WG->p[2]}, xl[3];
  kn_mat3_tvec(X_WG->R, d, xl);
  double gl[3];
  double phi = kn_shape_signed_distance_local(cs->colliders[i].shape, cs->mesh[i], xl, gl);
  kn_mat3_vec(X_WG->R, gl, g);
  if (grad) memcpy(grad, g, sizeof g);
  return phi;
}
