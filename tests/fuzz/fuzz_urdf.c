/* libFuzzer target: URDF text => kn_urdf_load_string (urdfdom through the C++ shim, knead's own
 * number and limit checks, the tree, couplers, geometry, filter groups), then the simulatability
 * check. Any input must give a robot or an error: no crash, no leak, no undefined behaviour. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "urdf/urdf.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  char* text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  kn_robot* r = NULL;
  kn_error err = {0};
  if (kn_urdf_load_string(text, "fuzz.urdf", NULL, NULL, &r, &err) == KN_OK) {
    kn_robot_check_simulatable(r, &err);
    kn_robot_free(r);
  }
  free(text);
  return 0;
}
