/* Test helper: an axis-aligned box of nx x ny x nz cubes of size (lx/nx, ly/ny, lz/nz) from the
 * origin, each cube split into the 6 Kuhn tets around its main diagonal (conforming across cubes),
 * all positively oriented. Until the mesh generators land this is how tests build meshes. */
#ifndef KN_TEST_MATERIAL_BOX_H
#define KN_TEST_MATERIAL_BOX_H
#include <stdlib.h>

#include "deformable/deformable.h"

static inline void test_box_mesh(int nx, int ny, int nz, double lx, double ly, double lz, kn_tet_mesh* m) {
  m->nvert = (nx + 1) * (ny + 1) * (nz + 1);
  m->ntet = 6 * nx * ny * nz;
  m->nsurf = 0;
  m->X = (double*)calloc(3 * (size_t)m->nvert, sizeof(double));
  m->tet = (int*)calloc(4 * (size_t)m->ntet, sizeof(int));
  m->surf = NULL;
#define VID(i, j, k) ((i) + (nx + 1) * ((j) + (ny + 1) * (k)))
  for (int k = 0; k <= nz; k++)
    for (int j = 0; j <= ny; j++)
      for (int i = 0; i <= nx; i++) {
        double* X = m->X + 3 * VID(i, j, k);
        X[0] = lx * i / nx;
        X[1] = ly * j / ny;
        X[2] = lz * k / nz;
      }
  static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  int t = 0;
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++)
        for (int p = 0; p < 6; p++) {
          int c[3] = {0, 0, 0}, v[4];
          v[0] = VID(i, j, k);
          for (int s = 0; s < 3; s++) {
            c[perm[p][s]] = 1;
            v[s + 1] = VID(i + c[0], j + c[1], k + c[2]);
          }
          /* odd permutations are negatively oriented: swap two vertices */
          if (p == 1 || p == 2 || p == 5) {
            int tmp = v[1];
            v[1] = v[2];
            v[2] = tmp;
          }
          for (int s = 0; s < 4; s++) m->tet[4 * t + s] = v[s];
          t++;
        }
#undef VID
}

static inline void test_box_mesh_free(kn_tet_mesh* m) {
  free(m->X);
  free(m->tet);
  free(m->surf);
}
#endif
