/* knead/deformable — FEM tetrahedral bodies: meshes (generators, import, tetrahedralization),
 * materials, lumped mass, Rayleigh damping, and the implicit free motion whose result joins the
 * SAP problem (digest §6). Positions in metres; a mesh's rest positions are in its body frame
 * (a scene places the body with a pose). */
#ifndef KNEAD_DEFORMABLE_H
#define KNEAD_DEFORMABLE_H

#include "common/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*---- tetrahedral meshes ----*/

/* A tetrahedral mesh. Every tet (a, b, c, d) is positively oriented: det[b-a, c-a, d-a] > 0.
 * The surface is the boundary triangles (faces of exactly one tet), wound outward. */
typedef struct {
  int nvert, ntet, nsurf;
  double* X;     /* rest positions, 3 * nvert */
  int* tet;      /* 4 * ntet vertex indices */
  int* surf;     /* 3 * nsurf vertex indices, counter-clockwise seen from outside */
} kn_tet_mesh;

void kn_tet_mesh_free(kn_tet_mesh* m);
/* Check indices, orientation and volume: an inverted tet (negative volume) or a degenerate one
 * (volume below 1e-12 of the mean edge length cubed) is KN_ERR_INVALID naming `name` and the
 * tet index. Then (re)build the surface. */
kn_status kn_tet_mesh_finalize(kn_tet_mesh* m, const char* name, kn_error* err);
double kn_tet_mesh_volume(const kn_tet_mesh* m);

#ifdef __cplusplus
}
#endif
#endif
