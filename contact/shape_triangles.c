/* A rigid shape's closed triangle surface in its geometry frame, for the mesh pairs (continuous
 * penalty forces §5.4, ipc's mesh term): a box exactly (8 corners, 12 triangles wound outward), a
 * mesh as the collision scene read it for detection (kn_collider_mesh: scale applied, identical
 * positions welded; not loaded a second time). Curved primitives are not tessellated: a faceted
 * sphere or cylinder would be another shape than the one the other backends and the mass
 * properties see; a half-space has no finite surface. */
#include <stdlib.h>
#include <string.h>

#include "contact/collision_internal.h"
#include "contact/contact.h"

kn_status kn_shape_triangles(const kn_collision_scene* cs, int i, kn_triangles* out, kn_error* err) {
  static const int box_tri[36] = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                                  1, 2, 6, 1, 6, 5, 2, 3, 7, 2, 7, 6, 3, 0, 4, 3, 4, 7};
  memset(out, 0, sizeof *out);
  const kn_shape* shape = cs->colliders[i].shape;
  if (shape->type == KN_SHAPE_BOX) {
    if (!(out->own = malloc(24 * sizeof *out->own)))
      return kn_fail(err, KN_ERR_NOMEM, "out of memory for a box's triangles");
    for (int c = 0; c < 8; c++) { /* corners 0-3 at z = -lz/2 counter-clockwise seen from +z, 4-7 above */
      double sx = (c & 3) == 1 || (c & 3) == 2 ? 1 : -1, sy = (c & 3) >= 2 ? 1 : -1, sz = c >= 4 ? 1 : -1;
      out->own[3 * c] = 0.5 * sx * shape->size[0], out->own[3 * c + 1] = 0.5 * sy * shape->size[1];
      out->own[3 * c + 2] = 0.5 * sz * shape->size[2];
    }
    out->v = out->own, out->tri = box_tri, out->nv = 8, out->nt = 12;
    return KN_OK;
  }
  if (shape->type == KN_SHAPE_MESH && kn_collider_mesh(cs, i, &out->nv, &out->v, &out->nt, &out->tri)) return KN_OK;
  return kn_fail(err, KN_ERR_UNSUPPORTED,
                 "a %s has no triangle surface here (boxes and meshes do; a curved primitive is not tessellated)",
                 kn_shape_type_name(shape->type));
}

void kn_triangles_free(kn_triangles* t) {
  free(t->own);
  memset(t, 0, sizeof *t);
}
