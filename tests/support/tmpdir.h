/* Test support: one temporary folder per test (a Criterion suite's .init / .fini) and files in it,
 * for the tests that run the knead command as a user would. */
#ifndef KNEAD_TEST_SUPPORT_TMPDIR_H
#define KNEAD_TEST_SUPPORT_TMPDIR_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

static char tmpdir[256];

// (tag) => a new, empty /tmp/knead_<tag>_XXXXXX in tmpdir
static inline void tmpdir_make(const char* tag) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/knead_%s_XXXXXX", tag);
  cr_assert_not_null(mkdtemp(tmpdir));
}

// () => tmpdir and everything in it removed
static inline void tmpdir_remove(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  cr_assert_eq(system(cmd), 0);
}

// (name relative to tmpdir, text) => the file written
static inline void write_file(const char* name, const char* text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

#endif
