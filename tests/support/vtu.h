/* Test support: a reader of the .vtu frames knead writes (output/output_vtk.c): VTK XML with every
 * DataArray in the appended section, raw, zlib-compressed in blocks, header_type UInt64, little
 * endian. Decodes one array to doubles so that tests compare values with the simulation state.
 * Needs zlib (tests link ZLIB::ZLIB). */
#ifndef KNEAD_TEST_SUPPORT_VTU_H
#define KNEAD_TEST_SUPPORT_VTU_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct {
  unsigned char* bytes;     /* the whole file */
  size_t len;
  char* xml;                /* the text before the appended data, NUL-terminated */
  const unsigned char* appended; /* first byte after the '_' */
  size_t nappended;
} vtu_file;

/* path => *v; 0 when unreadable or not a knead binary .vtu */
static inline int vtu_open(const char* path, vtu_file* v) {
  memset(v, 0, sizeof *v);
  FILE* f = fopen(path, "rb");
  if (!f) return 0;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  v->bytes = malloc((size_t)(n > 0 ? n : 0) + 1);
  v->len = v->bytes ? fread(v->bytes, 1, (size_t)n, f) : 0;
  fclose(f);
  if (!v->bytes) return 0;
  v->bytes[v->len] = 0;
  const char* tag = "<AppendedData encoding=\"raw\">";
  const char* s = strstr((const char*)v->bytes, tag); /* the XML part holds no NUL */
  if (!s) return 0;
  const char* u = strchr(s, '_');
  if (!u) return 0;
  size_t nxml = (size_t)(s - (const char*)v->bytes) + strlen(tag);
  v->xml = malloc(nxml + 1);
  memcpy(v->xml, v->bytes, nxml);
  v->xml[nxml] = 0;
  v->appended = (const unsigned char*)u + 1;
  v->nappended = v->len - (size_t)(v->appended - v->bytes);
  return 1;
}

static inline void vtu_close(vtu_file* v) {
  free(v->bytes);
  free(v->xml);
  memset(v, 0, sizeof *v);
}

static inline uint64_t vtu_u64(const unsigned char* p) {
  uint64_t x = 0;
  for (int k = 7; k >= 0; k--) x = (x << 8) | p[k];
  return x;
}

/* the opening tag of the DataArray named `name` in v->xml, NULL when absent */
static inline const char* vtu_array_tag(const vtu_file* v, const char* name) {
  char key[160];
  snprintf(key, sizeof key, "Name=\"%s\"", name);
  const char* p = strstr(v->xml, key);
  if (!p) return NULL;
  while (p > v->xml && *p != '<') p--;
  return p;
}

/* DataArray `name` decoded: up to max values into out as doubles; returns the number of values
 * in the array, -1 when missing or malformed (a zlib error, a block past the end of the file) */
static inline long vtu_array(const vtu_file* v, const char* name, double* out, long max) {
  const char* tag = vtu_array_tag(v, name);
  if (!tag) return -1;
  const char* end = strchr(tag, '>');
  const char* o = strstr(tag, "offset=\"");
  const char* ty = strstr(tag, "type=\"");
  if (!end || !o || o > end || !ty || ty > end || !strstr(tag, "format=\"appended\"")) return -1;
  size_t off = strtoull(o + 8, NULL, 10);
  int size = !strncmp(ty + 6, "Float64\"", 8) || !strncmp(ty + 6, "Int64\"", 6) ? 8 : !strncmp(ty + 6, "Int32\"", 6) ? 4
             : !strncmp(ty + 6, "UInt8\"", 6) ? 1 : 0;
  if (!size || off + 24 > v->nappended) return -1;
  const unsigned char* h = v->appended + off;
  uint64_t nblock = vtu_u64(h), bs = vtu_u64(h + 8), last = vtu_u64(h + 16);
  if (off + 8 * (3 + nblock) > v->nappended) return -1;
  uint64_t nraw = nblock ? (nblock - 1) * bs + (last ? last : bs) : 0;
  unsigned char* raw = malloc(nraw + 1);
  const unsigned char* z = h + 8 * (3 + nblock);
  for (uint64_t b = 0; b < nblock; b++) {
    uint64_t nz = vtu_u64(h + 8 * (3 + b));
    uLongf n = (uLongf)(b + 1 < nblock || !last ? bs : last);
    uLongf got = n;
    if ((size_t)(z + nz - v->appended) > v->nappended ||
        uncompress(raw + b * bs, &got, z, (uLong)nz) != Z_OK || got != n) {
      free(raw);
      return -1;
    }
    z += nz;
  }
  long count = (long)(nraw / (uint64_t)size);
  for (long i = 0; i < count && i < max; i++) {
    const unsigned char* p = raw + (size_t)i * (size_t)size;
    if (size == 1) {
      out[i] = p[0];
    } else if (size == 4) {
      int32_t x = (int32_t)(uint32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);
      out[i] = x;
    } else if (!strncmp(ty + 6, "Float64", 7)) {
      uint64_t u = vtu_u64(p);
      memcpy(&out[i], &u, 8);
    } else {
      out[i] = (double)(int64_t)vtu_u64(p);
    }
  }
  free(raw);
  return count;
}

#endif
