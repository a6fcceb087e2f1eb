/* Input files: one bounded, checked way to read a scene, URDF, CSV or mesh into memory. fopen on
 * a directory succeeds on Linux and fread then fails with "read error"; /dev/zero never ends. So
 * the path is stat'ed first (a directory, a device, a FIFO or a socket is refused by name) and the
 * read stops at KN_MAX_INPUT_BYTES. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/common.h"

// (stat of an open or named file) => KN_OK for a regular file within the limit
static kn_status check_stat(const struct stat* st, const char* path, const char* what, kn_error* err) {
  if (S_ISDIR(st->st_mode)) return kn_fail(err, KN_ERR_IO, "%s: is a directory, not a %s file", path, what);
  if (!S_ISREG(st->st_mode))
    return kn_fail(err, KN_ERR_IO, "%s: not a regular file (a device, FIFO or socket); a %s must be a file", path,
                   what);
  if ((unsigned long long)st->st_size > (unsigned long long)KN_MAX_INPUT_BYTES)
    return kn_fail(err, KN_ERR_IO, "%s: %lld bytes; a %s file may have at most %zu (256 MiB)", path,
                   (long long)st->st_size, what, KN_MAX_INPUT_BYTES);
  return KN_OK;
}

kn_status kn_file_check(const char* path, const char* what, kn_error* err) {
  struct stat st;
  if (stat(path, &st) != 0) return kn_fail(err, KN_ERR_IO, "%s: cannot open the %s file: %s", path, what, strerror(errno));
  return check_stat(&st, path, what, err);
}

kn_status kn_file_read(const char* path, const char* what, char** text, size_t* len, kn_error* err) {
  *text = NULL;
  *len = 0;
  FILE* f = fopen(path, "rb");
  if (!f) return kn_fail(err, KN_ERR_IO, "%s: cannot open the %s file: %s", path, what, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0) {
    int e = errno;
    fclose(f);
    return kn_fail(err, KN_ERR_IO, "%s: cannot open the %s file: %s", path, what, strerror(e));
  }
  kn_status s = check_stat(&st, path, what, err);
  if (s) {
    fclose(f);
    return s;
  }
  /* the size may change between fstat and the read: read in chunks, up to the limit + 1 byte */
  size_t cap = (size_t)st.st_size + 1 < 4096 ? 4096 : (size_t)st.st_size + 1, n = 0;
  char* buf = malloc(cap);
  for (;;) {
    if (!buf) {
      fclose(f);
      return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory reading the %s file", path, what);
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (n > KN_MAX_INPUT_BYTES) {
      free(buf);
      fclose(f);
      return kn_fail(err, KN_ERR_IO, "%s: more than %zu bytes; a %s file may have at most %zu (256 MiB)", path,
                     KN_MAX_INPUT_BYTES, what, KN_MAX_INPUT_BYTES);
    }
    if (got == 0) break;
    if (n + 1 == cap) {
      size_t ncap = cap * 2 > KN_MAX_INPUT_BYTES + 2 ? KN_MAX_INPUT_BYTES + 2 : cap * 2;
      char* nb = realloc(buf, ncap);
      if (!nb) free(buf);
      buf = nb;
      cap = ncap;
    }
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return kn_fail(err, KN_ERR_IO, "%s: read error", path);
  }
  buf[n] = 0;
  *text = buf;
  *len = n;
  return KN_OK;
}
