/* Test support: one temporary folder per test (a Criterion suite's .init / .fini) and files in it,
 * for the tests that run the knead command as a user would. */
#ifndef KNEAD_TEST_SUPPORT_TMPDIR_H
#define KNEAD_TEST_SUPPORT_TMPDIR_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

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

// (arguments after `knead`) => exit status of the built program (KNEAD_CLI) run in tmpdir;
// stdout and stderr in tmpdir/out.txt and err.txt. A run over 250 s is killed: a hang fails its
// test, not the suite.
static inline int knead_run(const char* args) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cd '%s' && timeout 250 %s %s >out.txt 2>err.txt", tmpdir, KNEAD_CLI, args);
  int st = system(cmd);
  cr_assert(WIFEXITED(st), "%s did not exit normally", cmd);
  return WEXITSTATUS(st);
}

// (file in tmpdir) => its whole text (one static buffer of 64 KiB), "" when missing
static inline const char* tmp_text(const char* name) {
  static char buf[1 << 16];
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  buf[0] = 0;
  FILE* f = fopen(path, "r");
  if (!f) return buf;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

#endif
