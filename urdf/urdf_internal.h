/* knead/urdf internal — mesh path resolution shared by load.c and robot.c. Not public. */
#ifndef KNEAD_URDF_INTERNAL_H
#define KNEAD_URDF_INTERNAL_H

#include "urdf/urdf.h"

/* The package search paths in the order urdf.h documents: options, KNEAD_PACKAGE_PATH,
 * ROS_PACKAGE_PATH. */
typedef struct {
  char** dirs;
  int n;
} kn_urdf_search;

/* (options, environment) => search list; KN_ERR_NOMEM on allocation failure. */
kn_status kn_urdf_search_init(const kn_urdf_options* opt, kn_urdf_search* s, kn_error* err);
void kn_urdf_search_free(kn_urdf_search* s);
/* the list joined by ':' ("(none)" when empty), malloc'd */
char* kn_urdf_search_describe(const kn_urdf_search* s);
/* (filename as written, URDF folder) => malloc'd path of an existing file, or NULL when it cannot
 * be resolved. base_dir may be NULL (relative names then do not resolve). */
char* kn_urdf_resolve_mesh(const kn_urdf_search* s, const char* uri, const char* base_dir);

#endif
