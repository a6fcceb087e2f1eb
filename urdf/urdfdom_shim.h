/* knead/urdf internal — the C view of what urdfdom parsed (urdfdom_shim.cpp), plus the content
 * urdfdom keeps no record of (elements knead ignores), found by walking the XML ourselves.
 * Not a public header: only the urdf module includes it. All strings and arrays are malloc'd and freed
 * by kn_ushim_free. Poses are (xyz, quaternion (w, x, y, z)) as urdfdom stores them. */
#ifndef KNEAD_URDF_SHIM_H
#define KNEAD_URDF_SHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { KN_USHIM_SPHERE = 0, KN_USHIM_BOX, KN_USHIM_CYLINDER, KN_USHIM_MESH } kn_ushim_shape;

typedef struct {
  double xyz[3];
  double quat[4]; /* (w, x, y, z) */
} kn_ushim_origin;

typedef struct {
  char* name;        /* NULL when unnamed */
  int is_visual;     /* 1 visual, 0 collision */
  kn_ushim_origin origin;
  kn_ushim_shape shape;
  double size[3];    /* sphere r; box lx ly lz; cylinder r, length */
  char* filename;    /* MESH */
  double scale[3];   /* MESH */
  int has_rgba;
  double rgba[4];
} kn_ushim_geom;

typedef struct {
  char* name;
  int has_inertial;
  kn_ushim_origin inertial_origin;
  double mass;
  double ixx, ixy, ixz, iyy, iyz, izz; /* about the COM, in the inertial origin frame */
  int ngeom;
  kn_ushim_geom* geoms;
  int parent_joint;  /* index into joints, -1 for the root */
} kn_ushim_link;

typedef enum {
  KN_USHIM_FIXED = 0,
  KN_USHIM_REVOLUTE,
  KN_USHIM_CONTINUOUS,
  KN_USHIM_PRISMATIC,
  KN_USHIM_PLANAR,
  KN_USHIM_FLOATING
} kn_ushim_joint_type;

typedef struct {
  char* name;
  kn_ushim_joint_type type;
  int parent_link, child_link; /* indices into links */
  kn_ushim_origin origin;      /* child joint frame in the parent link frame */
  double axis[3];
  int has_limits;
  double lower, upper, effort, velocity;
  int has_dynamics;
  double damping, friction;
  int has_mimic;
  char* mimic_joint;
  double multiplier, offset;
} kn_ushim_joint;

/* <drake:collision_filter_group> (or the unprefixed <collision_filter_group>): strings exactly as
 * written, "" for a missing attribute (the C side reports it); line is the group's line in the text */
typedef struct {
  char* name;
  int line;
  int nmember;
  char** members;    /* <drake:member link="..."/> */
  int nignore;
  char** ignores;    /* <drake:ignored_collision_filter_group name="..."/> */
} kn_ushim_filter_group;

typedef struct {
  char* name;        /* <robot name> */
  int root;          /* index of the root link */
  int nlink, njoint;
  kn_ushim_link* links;   /* in document order */
  kn_ushim_joint* joints; /* in document order */
  int nnote;
  char** notes;      /* content knead does not use, one sentence each ("<gazebo>: 3 elements ...") */
  int nfilter_group;
  kn_ushim_filter_group* filter_groups; /* in document order */
} kn_ushim_model;

/* (URDF text) => model, or NULL with a message in msg (urdfdom's own messages, in order, when it
 * rejected the text) and *line (may be NULL) the line of the element at fault, 0 when unknown.
 * Before urdfdom runs, every number knead uses (origins, axes, limits, dynamics, mimic, mass,
 * inertia, geometry sizes) must be whole and finite, a <limit> must have lower <= upper, and a
 * <material name> or <color rgba> must hold no '%' (urdfdom 3.0 logs them as printf formats).
 * Never throws, never prints: urdfdom's console output is captured while it runs. */
kn_ushim_model* kn_ushim_parse(const char* xml, char* msg, size_t msg_size, int* line);
void kn_ushim_free(kn_ushim_model* m);

#ifdef __cplusplus
}
#endif
#endif
