/* Test support: whole-file reads and recursive removal of a test's temporary folder. */
#ifndef KNEAD_TEST_SUPPORT_FILES_H
#define KNEAD_TEST_SUPPORT_FILES_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

/* path => its bytes, NUL-terminated (free it), or NULL when it cannot be opened */
static inline char* slurp(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* s = malloc((size_t)(n > 0 ? n : 0) + 1);
  if (!s) {
    fclose(f);
    return NULL;
  }
  size_t got = fread(s, 1, (size_t)(n > 0 ? n : 0), f);
  s[got] = 0;
  fclose(f);
  return s;
}

/* nftw callback: remove every entry (depth first with FTW_DEPTH); needs the XSI <ftw.h>
 * (_XOPEN_SOURCE >= 500 defined before the first system header) */
#ifdef FTW_DEPTH
static inline int rm_entry(const char* path, const struct stat* st, int flag, struct FTW* ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}
#endif

#endif
