/* knead/urdf — URDF files to multibody models and geometry.
 *
 * Parsing is done by urdfdom through urdf/urdfdom_shim.cpp, the only C++ translation unit in
 * knead; everything else is C. Mesh filenames (`package://pkg/rest`, relative, absolute) are
 * resolved through search paths: the options' package_paths, then KNEAD_PACKAGE_PATH, then
 * ROS_PACKAGE_PATH (colon-separated), a package `pkg` being the folder <path>/pkg, or
 * <path>/<any>/pkg one level down; relative paths resolve against the URDF's folder.
 *
 * Drake's collision filter groups (<drake:collision_filter_group>) are read into
 * kn_robot.filter_groups; a member link or ignored group that does not exist is an error.
 *
 * Loading never drops information silently: content knead does not use (transmissions, gazebo
 * tags, sensors, geometry urdfdom dropped), unresolved visual meshes and zero-mass links are
 * reported as warnings in kn_robot.warnings. An unresolved collision mesh is a warning at load
 * (kn_robot.missing_collision_meshes counts them) and an error when the model is simulated.
 *
 * Checked at load (KN_ERR_PARSE / KN_ERR_INVALID, naming the file, the line when known, and the
 * link or joint): every number knead uses (origin xyz/rpy, axis, limit, dynamics, mimic, mass,
 * inertia, box/sphere/cylinder sizes, mesh scale) is one whole finite number ("nan", "0.O5" are
 * errors); a <limit> with lower > upper is an error (lower == upper still means no position
 * limits); a '%' in a <material name> or <color rgba> is an error (urdfdom 3.0 logs those as printf
 * format strings); <mimic> joints that mimic each other in a cycle are an error; a file urdfdom rejects
 * carries all of urdfdom's own messages, in order. Files are read through kn_file_read (at most
 * 256 MiB, regular files only).
 * Massless moving links, as Drake: a link moved by a joint with no mass at or below it makes the
 * mass matrix singular. It loads with the "no <inertial>: mass 0" warning (kinematics need no
 * mass; visualization URDFs have such links) and kn_robot_check_simulatable refuses it, after
 * attachments, naming the link and the joint. */
#ifndef KNEAD_URDF_H
#define KNEAD_URDF_H

#include "../common/common.h"
#include "../contact/contact.h"
#include "../multibody/multibody.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const char* const* package_paths; /* extra search paths, tried first; may be NULL */
  int npackage_paths;
  int floating_base;                /* 1: the root joins the world by a FLOATING joint */
  kn_pose base_pose;                /* root pose in the world (X_pj of the root) */
} kn_urdf_options;

kn_urdf_options kn_urdf_options_default(void);

/* A collision filter group as Drake's URDF extension declares it (<drake:collision_filter_group
 * name><drake:member link/>...<drake:ignored_collision_filter_group name/></...>): the collision
 * geometry of the member bodies never touches that of the members of any group it ignores (its
 * own name included: then the members never touch each other). */
typedef struct {
  char* name;              /* unique within the robot; "<model>/" prefixed like bodies after attach */
  int* members;            /* body indices into model */
  int nmember;
  char** ignores;          /* names of groups of the same robot */
  int nignore;
} kn_robot_filter_group;

typedef struct {
  kn_mb_model* model;      /* one tree; couplers hold the mimic joints */
  kn_geometry* geoms;      /* visual and collision geometry, body indices into model */
  int ngeom;
  kn_diag warnings;
  int missing_collision_meshes;
  int missing_visual_meshes;
  char* source_path;       /* the file it came from */
  char* search_paths;      /* the package search paths used, ':'-separated (for messages) */
  kn_robot_filter_group* filter_groups; /* in document order, then those of attached robots */
  int nfilter_group;
} kn_robot;

/* Load a URDF file. On error returns non-KN_OK with err naming the file and the problem; *out is
 * untouched and nothing leaks. */
kn_status kn_urdf_load(const char* path, const kn_urdf_options* opt, kn_robot** out, kn_error* err);
/* The same from a string; base_dir resolves relative mesh paths (may be NULL); source_name names
 * it in messages. */
kn_status kn_urdf_load_string(const char* xml, const char* source_name, const char* base_dir,
                              const kn_urdf_options* opt, kn_robot** out, kn_error* err);
void kn_robot_free(kn_robot* r);

/* Independent coordinates: nv minus mimic joints (each coupler removes one). */
int kn_robot_dofs(const kn_robot* r);

/* Weld robot `child` onto body `link` of `parent` at X_link_root (ARCHITECTURE: attach_to),
 * merging its bodies, couplers, geometry, collision filter groups and warnings into parent. child
 * is left unchanged. Its group names (and the names they ignore) get the "<model>/" prefix when its
 * bodies do, or when a name is already a group of parent, so that groups never merge by accident. */
kn_status kn_robot_attach(kn_robot* parent, const kn_robot* child, const char* link, const kn_pose* X_link_root,
                          kn_error* err);

/* KN_OK when the model can be simulated: every collision mesh resolved (else KN_ERR_IO naming the
 * first missing mesh, its link and the search paths), and every link a joint moves has mass or
 * carries links that do (else KN_ERR_INVALID naming the link and the joint: its mass matrix would
 * be singular; Drake's rule, checked here rather than at load because an attached robot may give
 * it mass). Called before a model is simulated. */
kn_status kn_robot_check_simulatable(const kn_robot* r, kn_error* err);

#ifdef __cplusplus
}
#endif
#endif
