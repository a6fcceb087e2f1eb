/* knead/sim internals shared by the files of this folder (not installed). */
#ifndef KNEAD_SIM_INTERNAL_H
#define KNEAD_SIM_INTERNAL_H

#include <stddef.h>

#include "sim/sim.h"

/* One file embedded at build time by sim/embed.cmake (generated knead_embedded.c). */
typedef struct {
  const char* name;           /* "default_scene.yaml", "models/knead_arm7.urdf" */
  const unsigned char* data;  /* NUL-terminated */
  size_t len;                 /* without the NUL */
} kn_embedded_entry;

extern const kn_embedded_entry kn_embedded_table[];
extern const int kn_embedded_ntable;

/* The libyaml node tree of a scene, kept to report the line of any key path. */
kn_status kn_scene_lines_parse(const char* yaml, size_t len, const char* path, kn_scene_lines** out, kn_error* err);
void kn_scene_lines_free(kn_scene_lines* l);
/* 1-based line of the node at key_path ("robots[1].controller.kp"; for a key, the key's line),
 * 0 when the path does not exist. */
int kn_scene_lines_find(const kn_scene_lines* l, const char* key_path);
/* the keys of the root mapping, for rejecting sections that are not simulated yet */
int kn_scene_lines_root_has(const kn_scene_lines* l, const char* key);

#endif
