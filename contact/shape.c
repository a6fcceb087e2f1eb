/* Shape names and geometry ownership. */
#include <stdlib.h>

#include "contact/contact.h"

const char* kn_shape_type_name(kn_shape_type t) {
  switch (t) {
    case KN_SHAPE_SPHERE: return "sphere";
    case KN_SHAPE_BOX: return "box";
    case KN_SHAPE_CYLINDER: return "cylinder";
    case KN_SHAPE_CAPSULE: return "capsule";
    case KN_SHAPE_HALFSPACE: return "halfspace";
    case KN_SHAPE_MESH: return "mesh";
  }
  return "unknown";
}

void kn_geometry_clear(kn_geometry* g) {
  free(g->name);
  free(g->shape.mesh_uri);
  free(g->shape.mesh_path);
  g->name = g->shape.mesh_uri = g->shape.mesh_path = NULL;
}
