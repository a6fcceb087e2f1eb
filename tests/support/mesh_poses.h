/* Test support for the mesh narrow-phase tests: closed OBJ meshes written to a file (a dented UV
 * sphere, a torus), a seeded xorshift64 and random poses. Each test file seeds its own g_rng. */
#ifndef KNEAD_TEST_SUPPORT_MESH_POSES_H
#define KNEAD_TEST_SUPPORT_MESH_POSES_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"

static uint64_t g_rng;

// () => uniform in [0, 1) (xorshift64 on g_rng)
static inline double urand(void) {
  g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
  return (double)(g_rng >> 11) * 0x1.0p-53;
}

// (dist) => a random rotation (uniform quaternion) and a position within dist of the origin
static inline void random_pose(double dist, kn_pose* X) {
  double q[4], n = 0;
  for (int k = 0; k < 4; ++k) q[k] = 2 * urand() - 1, n += q[k] * q[k];
  n = sqrt(n);
  double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
  double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                 2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                 2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
  memcpy(X->R, R, sizeof R);
  for (int k = 0; k < 3; ++k) X->p[k] = dist * (2 * urand() - 1);
}

/* (path, radius r0, relative dent depth, nu rings x nv) => OBJ of a sphere with dents
 * r = r0 (1 - dent max(0, cos 4 theta sin 3 phi)) (dent 0: a UV sphere), outward triangles */
static inline void write_sphere_obj(const char* path, double r0, double dent, int nu, int nv) {
  const double pi = 3.14159265358979323846;
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f, "v 0 0 %.17g\nv 0 0 %.17g\n", r0, -r0);
  for (int i = 1; i < nu; ++i)
    for (int j = 0; j < nv; ++j) {
      double th = pi * i / nu, ph = 2 * pi * j / nv;
      double r = r0 * (1 - dent * fmax(0, cos(4 * th) * sin(3 * ph)));
      fprintf(f, "v %.17g %.17g %.17g\n", r * sin(th) * cos(ph), r * sin(th) * sin(ph), r * cos(th));
    }
#define V(i, j) (3 + ((i) - 1) * nv + ((j) % nv))
  for (int j = 0; j < nv; ++j) fprintf(f, "f 1 %d %d\n", V(1, j), V(1, j + 1));
  for (int i = 1; i < nu - 1; ++i)
    for (int j = 0; j < nv; ++j)
      fprintf(f, "f %d %d %d\nf %d %d %d\n", V(i, j), V(i + 1, j), V(i + 1, j + 1), V(i, j), V(i + 1, j + 1),
              V(i, j + 1));
  for (int j = 0; j < nv; ++j) fprintf(f, "f 2 %d %d\n", V(nu - 1, j + 1), V(nu - 1, j));
#undef V
  fclose(f);
}

// (path, nu x nv) => OBJ of a torus about z, R = 0.08, r = 0.03, outward triangles
static inline void write_torus_obj(const char* path, int nu, int nv) {
  const double pi = 3.14159265358979323846;
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f);
  for (int i = 0; i < nu; ++i)
    for (int j = 0; j < nv; ++j) {
      double u = 2 * pi * i / nu, v = 2 * pi * j / nv, rr = 0.08 + 0.03 * cos(v);
      fprintf(f, "v %.17g %.17g %.17g\n", rr * cos(u), rr * sin(u), 0.03 * sin(v));
    }
  for (int i = 0; i < nu; ++i)
    for (int j = 0; j < nv; ++j) {
      int a = i * nv + j + 1, b = ((i + 1) % nu) * nv + j + 1, c = ((i + 1) % nu) * nv + (j + 1) % nv + 1,
          d = i * nv + (j + 1) % nv + 1;
      fprintf(f, "f %d %d %d\nf %d %d %d\n", a, b, c, a, c, d);
    }
  fclose(f);
}

#endif
