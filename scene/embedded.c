/* Files compiled into the library (scene/embed.cmake): the default scene and the project's own
 * models, addressed as knead://<name> so the default scene needs no files on disk. */
#include <string.h>

#include "scene/scene_internal.h"

// (name without knead://) => NUL-terminated text and its length, or NULL
const char* kn_embedded_file(const char* name, size_t* len) {
  if (!name) return NULL;
  if (strncmp(name, "knead://", 8) == 0) name += 8;
  for (int i = 0; i < kn_embedded_ntable; i++) {
    if (strcmp(kn_embedded_table[i].name, name) == 0) {
      if (len) *len = kn_embedded_table[i].len;
      return (const char*)kn_embedded_table[i].data;
    }
  }
  return NULL;
}

int kn_embedded_count(void) { return kn_embedded_ntable; }

const char* kn_embedded_name(int i) { return (i >= 0 && i < kn_embedded_ntable) ? kn_embedded_table[i].name : NULL; }
