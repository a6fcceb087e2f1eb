/* knead/contact — shapes on bodies (and, with the rigid-contact issue, signed distances, broad
 * and narrow phase and contact points).
 *
 * A kn_geometry is a shape fixed to a body at a pose. Sizes are full extents for boxes (URDF
 * <box size>), radii for spheres, (radius, length) for cylinders and capsules along their local
 * z axis. Meshes are referred to by resolved file path with a per-axis scale. */
#ifndef KNEAD_CONTACT_H
#define KNEAD_CONTACT_H

#include "common/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  KN_SHAPE_SPHERE = 0,
  KN_SHAPE_BOX,
  KN_SHAPE_CYLINDER,
  KN_SHAPE_CAPSULE,
  KN_SHAPE_HALFSPACE, /* z <= 0 in the shape frame; outward normal +z */
  KN_SHAPE_MESH
} kn_shape_type;

const char* kn_shape_type_name(kn_shape_type t);

typedef struct {
  kn_shape_type type;
  double size[3];    /* sphere: r; box: (lx, ly, lz); cylinder, capsule: (r, length) */
  char* mesh_uri;    /* MESH: the filename as written in the source (package://, relative, absolute) */
  char* mesh_path;   /* MESH: resolved path on disk, NULL when it could not be resolved */
  double scale[3];   /* MESH: per-axis scale */
} kn_shape;

typedef enum { KN_GEOM_COLLISION = 1, KN_GEOM_VISUAL = 2 } kn_geom_role;

typedef struct {
  char* name;        /* may be NULL */
  int body;          /* body index in its kinematic tree */
  kn_geom_role role;
  kn_pose X_bg;      /* geometry frame in the body frame */
  kn_shape shape;
  double rgba[4];    /* visual colour, (0.7, 0.7, 0.7, 1) when none */
} kn_geometry;

/* Free the strings a geometry owns (not the struct itself). */
void kn_geometry_clear(kn_geometry* g);

#ifdef __cplusplus
}
#endif
#endif
