/* A rigid shape's closed triangle surface in its geometry frame, for the mesh-pair contact of the
 * continuous penalty forces (continuous-penalty-forces.md §5.4): a box exactly (8 corners, 12
 * triangles wound outward), a mesh as read for detection (kn_mesh_load: scale applied, identical
 * positions welded). Curved primitives are not tessellated: a faceted sphere or cylinder would be
 * another shape than the one the other backends and the mass properties see; a half-space has no
 * finite surface. */
#include <stdlib.h>
#include <string.h>

#include "contact/collision_internal.h"
#include "contact/contact.h"

kn_status kn_shape_triangles(const kn_shape* shape, kn_triangles* out, kn_error* err) {
  memset(out, 0, sizeof *out);
  if (shape->type == KN_SHAPE_BOX) {
    static const int tri[36] = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                                1, 2, 6, 1, 6, 5, 2, 3, 7, 2, 7, 6, 3, 0, 4, 3, 4, 7};
    out->v = malloc(24 * sizeof *out->v), out->tri = malloc(sizeof tri);
    if (!out->v || !out->tri) {
      kn_triangles_free(out);
      return kn_fail(err, KN_ERR_NOMEM, "out of memory for a box's triangles");
    }
    for (int c = 0; c < 8; c++) { /* corners 0-3 at z = -lz/2 counter-clockwise seen from +z, 4-7 above */
      double sx = (c & 3) == 1 || (c & 3) == 2 ? 1 : -1, sy = (c & 3) >= 2 ? 1 : -1, sz = c >= 4 ? 1 : -1;
      out->v[3 * c] = 0.5 * sx * shape->size[0], out->v[3 * c + 1] = 0.5 * sy * shape->size[1];
      out->v[3 * c + 2] = 0.5 * sz * shape->size[2];
    }
    memcpy(out->tri, tri, sizeof tri);
    out->nv = 8, out->nt = 12;
    return KN_OK;
  }
  if (shape->type == KN_SHAPE_MESH) {
    kn_mesh_data m;
    kn_status st = kn_mesh_load(shape, &m, err);
    if (st) return st;
    out->nv = m.nv, out->nt = m.nt, out->v = m.v, out->tri = m.tri;
    m.v = NULL, m.tri = NULL;
    kn_mesh_free(&m);
    return KN_OK;
  }
  return kn_fail(err, KN_ERR_UNSUPPORTED,
                 "a %s has no triangle surface here (boxes and meshes do; a curved primitive is not tessellated)",
                 kn_shape_type_name(shape->type));
}

void kn_triangles_free(kn_triangles* t) {
  free(t->v), free(t->tri);
  memset(t, 0, sizeof *t);
}
