/* libFuzzer target: bytes => a file read by both volume-mesh readers, Gmsh .msh and legacy VTK
 * (deformable/import.c: tokenizer, declared counts against the file, tags, orientation). The
 * readers take paths, so each input is written to one temporary file per process. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "deformable/deformable.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "/tmp/knead_fuzz_mesh_%ld", (long)getpid());
  FILE* f = fopen(path, "wb");
  if (!f) return 0;
  size_t put = fwrite(data, 1, size, f);
  fclose(f);
  if (put != size) return 0;
  kn_tet_mesh m;
  kn_error err = {0};
  if (kn_tet_mesh_read_msh(path, &m, &err) == KN_OK) kn_tet_mesh_free(&m);
  if (kn_tet_mesh_read_vtk(path, &m, &err) == KN_OK) kn_tet_mesh_free(&m);
  return 0;
}
