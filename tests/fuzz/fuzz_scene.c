/* libFuzzer target: YAML text => kn_scene_load_string (libyaml's node tree for lines, libcyaml's
 * schema, the whole-number check, the semantic checks and defaults). The world is not built: that
 * reads URDFs and meshes from disk and runs tetgen. */
#include <stdint.h>

#include "scene/scene.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kn_scene* s = NULL;
  kn_error err = {0};
  if (kn_scene_load_string((const char*)data, size, "fuzz.yaml", &s, &err) == KN_OK) kn_scene_free(s);
  return 0;
}
