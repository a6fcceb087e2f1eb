/* 64-bit FNV-1a: the state hash regression tests compare bit for bit. */
#include <string.h>

#include "common/common.h"

uint64_t kn_hash_bytes(uint64_t h, const void* data, size_t n) {
  const unsigned char* b = data;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t kn_hash_doubles(uint64_t h, const double* x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    double v = x[i] == 0.0 ? 0.0 : x[i]; /* fold -0.0 into +0.0 */
    h = kn_hash_bytes(h, &v, sizeof v);
  }
  return h;
}
