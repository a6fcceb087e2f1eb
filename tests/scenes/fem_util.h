/* Helpers for the FEM scene tests: the deformable-on-slope scene of Drake's
 * deformable_on_slope example (E 1e5, nu 0.4, rho 1e3, slope pi/12, mu 0.4, dt 2.5e-3). */
#ifndef KNEAD_TESTS_FEM_UTIL_H
#define KNEAD_TESTS_FEM_UTIL_H

#include <stdlib.h>

#include "scene_util.h"

// (fem_schur true/false, duration) => scene text (static buffer)
static inline const char* fem_slope_scene(int schur, double duration) {
  static char buf[2048];
  const double th = M_PI / 12, a = 0.05; /* box half size */
  double c[3] = {(a + 1e-4) * sin(th), 0, (a + 1e-4) * cos(th)};
  snprintf(buf, sizeof buf,
           "time_step: 0.0025\n"
           "duration: %g\n"
           "contact: {solver: {fem_schur: %s}}\n"
           "objects:\n"
           "  - name: slope\n"
           "    shape: {halfspace: {normal: [%.17g, 0, %.17g]}}\n"
           "    fixed: true\n"
           "    friction: 0.4\n"
           "deformables:\n"
           "  - name: jelly\n"
           "    shape: {box: [0.1, 0.1, 0.1]}\n"
           "    resolution: 0.05\n"
           "    material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n"
           "    pose: {xyz: [%.17g, 0, %.17g], rpy: [0, %.17g, 0]}\n"
           "    friction: 0.4\n",
           duration, schur ? "true" : "false", sin(th), cos(th), c[0], c[2], th);
  return buf;
}

static inline double fem_max_speed(const kn_fem_body* b) {
  double m = 0;
  for (int v = 0; v < b->mesh.nvert; v++)
    m = fmax(m, sqrt(b->v[3 * v] * b->v[3 * v] + b->v[3 * v + 1] * b->v[3 * v + 1] + b->v[3 * v + 2] * b->v[3 * v + 2]));
  return m;
}

#endif
