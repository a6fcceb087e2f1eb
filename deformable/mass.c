/* knead/deformable — lumped mass of linear tets. */
#include <string.h>

#include "deformable/deformable.h"

// (mesh, rest volumes, rho) => vertex masses: each tet gives rho V / 4 to each of its vertices (row-sum
// lumping of the consistent P1 mass matrix, which preserves total mass and momentum)
void kn_fem_lumped_mass(const kn_tet_mesh* mesh, const double* volume, double density, double* mass) {
  memset(mass, 0, (size_t)mesh->nvert * sizeof(double));
  for (int e = 0; e < mesh->ntet; e++)
    for (int k = 0; k < 4; k++) mass[mesh->tet[4 * e + k]] += 0.25 * density * volume[e];
}

// body => sum of lumped masses (= rho * mesh volume)
double kn_fem_body_mass(const kn_fem_body* b) {
  double m = 0;
  for (int i = 0; i < b->mesh.nvert; i++) m += b->mass[i];
  return m;
}
