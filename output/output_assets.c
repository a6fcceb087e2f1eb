/* Where the replay's three.min.js is at run time. An installed knead must find its own copy
 * wherever the prefix was installed or moved to (`cmake --install --prefix P`, then P copied
 * elsewhere), so the file is looked for relative to the running libknead (libknead.so in
 * <prefix>/<libdir>, or the program a static libknead is linked into, found by dladdr) and to the
 * running program (/proc/self/exe, e.g. <prefix>/bin/knead), before the build tree's copy and the
 * configured install prefix. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/output_internal.h"

// (a file's path, relative path from its folder) => buf holds folder/rel; 1 when readable
static int try_relative(const char* file, const char* rel, char* buf, size_t n) {
  const char* slash = strrchr(file, '/');
  if (!slash) return 0;
  int len = snprintf(buf, n, "%.*s/%s", (int)(slash - file), file, rel);
  return len > 0 && (size_t)len < n && access(buf, R_OK) == 0;
}

const char* kn_html_three_js_path(void) {
  static _Thread_local char buf[PATH_MAX + 256];
  const char* env = getenv("KNEAD_THREE_JS");
  if (env && *env) return access(env, R_OK) == 0 ? env : NULL;
#if defined(KNEAD_LIBDIR_TO_THREE_JS) && defined(KNEAD_BINDIR_TO_THREE_JS)
  /* the shared library (or the static library's program), then the program */
  Dl_info info;
  char real[PATH_MAX];
  if (dladdr((void*)&kn_html_three_js_path, &info) && info.dli_fname && realpath(info.dli_fname, real) &&
      (try_relative(real, KNEAD_LIBDIR_TO_THREE_JS, buf, sizeof buf) ||
       try_relative(real, KNEAD_BINDIR_TO_THREE_JS, buf, sizeof buf)))
    return buf;
  ssize_t n = readlink("/proc/self/exe", real, sizeof real - 1);
  if (n > 0) {
    real[n] = 0;
    if (try_relative(real, KNEAD_BINDIR_TO_THREE_JS, buf, sizeof buf)) return buf;
  }
#endif
#ifdef KNEAD_THREE_JS_BUILD
  if (access(KNEAD_THREE_JS_BUILD, R_OK) == 0) return KNEAD_THREE_JS_BUILD;
#endif
#ifdef KNEAD_THREE_JS_INSTALLED
  if (access(KNEAD_THREE_JS_INSTALLED, R_OK) == 0) return KNEAD_THREE_JS_INSTALLED;
#endif
  return NULL;
}
