/* Names to indices: an open-addressing hash table (linear probing, FNV-1a, load <= 1/2). */
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

static uint64_t name_hash(const char* s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

// (table of capacity cap, a power of two) => slot of key, or of the empty slot where it would go
static size_t find_slot(const char** keys, size_t cap, const char* key) {
  size_t i = (size_t)name_hash(key) & (cap - 1);
  while (keys[i] && strcmp(keys[i], key) != 0) i = (i + 1) & (cap - 1);
  return i;
}

int kn_name_map_get(const kn_name_map* m, const char* key) {
  if (!key || !m->cap) return -1;
  size_t i = find_slot(m->keys, m->cap, key);
  return m->keys[i] ? m->values[i] : -1;
}

static kn_status grow(kn_name_map* m) {
  size_t cap = m->cap ? 2 * m->cap : 16;
  const char** keys = calloc(cap, sizeof *keys);
  int* values = calloc(cap, sizeof *values);
  if (!keys || !values) {
    free(keys);
    free(values);
    return KN_ERR_NOMEM;
  }
  for (size_t i = 0; i < m->cap; i++)
    if (m->keys[i]) {
      size_t j = find_slot(keys, cap, m->keys[i]);
      keys[j] = m->keys[i];
      values[j] = m->values[i];
    }
  free(m->keys);
  free(m->values);
  m->keys = keys;
  m->values = values;
  m->cap = cap;
  return KN_OK;
}

kn_status kn_name_map_put(kn_name_map* m, const char* key, int value) {
  if (!key) return KN_ERR_INVALID;
  if (2 * (m->count + 1) > m->cap && grow(m) != KN_OK) return KN_ERR_NOMEM;
  size_t i = find_slot(m->keys, m->cap, key);
  if (!m->keys[i]) {
    m->keys[i] = key;
    m->count++;
  }
  m->values[i] = value;
  return KN_OK;
}

void kn_name_map_free(kn_name_map* m) {
  free(m->keys);
  free(m->values);
  memset(m, 0, sizeof *m);
}
