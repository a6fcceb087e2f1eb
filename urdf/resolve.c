/* Mesh filenames to files on disk: package://, file://, absolute and relative (urdf.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "urdf/urdf_internal.h"

static int is_file(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* malloc'd "a/b" (or "a/b/c" when c is non-NULL) */
static char* join(const char* a, const char* b, const char* c) {
  size_t n = strlen(a) + strlen(b) + (c ? strlen(c) + 1 : 0) + 2;
  char* s = malloc(n);
  if (!s) return NULL;
  if (c)
    snprintf(s, n, "%s/%s/%s", a, b, c);
  else
    snprintf(s, n, "%s/%s", a, b);
  return s;
}

static int push_dir(kn_urdf_search* s, const char* begin, size_t len) {
  if (len == 0) return 1; /* empty entries of a colon list mean nothing */
  char** dirs = realloc(s->dirs, (size_t)(s->n + 1) * sizeof *dirs);
  if (!dirs) return 0;
  s->dirs = dirs;
  char* d = malloc(len + 1);
  if (!d) return 0;
  memcpy(d, begin, len);
  d[len] = 0;
  s->dirs[s->n++] = d;
  return 1;
}

static int push_colon_list(kn_urdf_search* s, const char* list) {
  if (!list) return 1;
  for (const char* p = list;;) {
    const char* e = strchr(p, ':');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (!push_dir(s, p, len)) return 0;
    if (!e) return 1;
    p = e + 1;
  }
}

// (options, KNEAD_PACKAGE_PATH, ROS_PACKAGE_PATH) => s
kn_status kn_urdf_search_init(const kn_urdf_options* opt, kn_urdf_search* s, kn_error* err) {
  s->dirs = NULL;
  s->n = 0;
  int ok = 1;
  for (int i = 0; ok && opt && opt->package_paths && i < opt->npackage_paths; i++)
    if (opt->package_paths[i]) ok = push_dir(s, opt->package_paths[i], strlen(opt->package_paths[i]));
  if (ok) ok = push_colon_list(s, getenv("KNEAD_PACKAGE_PATH"));
  if (ok) ok = push_colon_list(s, getenv("ROS_PACKAGE_PATH"));
  if (!ok) {
    kn_urdf_search_free(s);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory building the package search paths");
  }
  return KN_OK;
}

void kn_urdf_search_free(kn_urdf_search* s) {
  for (int i = 0; i < s->n; i++) free(s->dirs[i]);
  free(s->dirs);
  s->dirs = NULL;
  s->n = 0;
}

// s => "dir1:dir2" (malloc'd)
char* kn_urdf_search_describe(const kn_urdf_search* s) {
  if (s->n == 0) return kn_strdup("(none)");
  size_t n = 1;
  for (int i = 0; i < s->n; i++) n += strlen(s->dirs[i]) + 1;
  char* out = malloc(n);
  if (!out) return NULL;
  out[0] = 0;
  for (int i = 0; i < s->n; i++) {
    if (i) strcat(out, ":");
    strcat(out, s->dirs[i]);
  }
  return out;
}

static int compare_names(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

/* <dir>/<any>/<pkg>/<rest>, trying the sub-folders in name order so the result is reproducible */
static char* find_one_level_down(const char* dir, const char* pkg, const char* rest) {
  DIR* d = opendir(dir);
  if (!d) return NULL;
  char** names = NULL;
  int n = 0, cap = 0;
  struct dirent* e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      char** nn = realloc(names, (size_t)cap * sizeof *nn);
      if (!nn) break;
      names = nn;
    }
    char* copy = kn_strdup(e->d_name);
    if (!copy) break;
    names[n++] = copy;
  }
  closedir(d);
  if (n > 1) qsort(names, (size_t)n, sizeof *names, compare_names);
  char* found = NULL;
  for (int i = 0; i < n && !found; i++) {
    char* sub = join(dir, names[i], NULL);
    if (sub && is_dir(sub)) {
      char* cand = join(sub, pkg, rest);
      if (cand && is_file(cand))
        found = cand;
      else
        free(cand);
    }
    free(sub);
  }
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
  return found;
}

static char* resolve_package(const kn_urdf_search* s, const char* after_scheme) {
  const char* slash = strchr(after_scheme, '/');
  if (!slash || slash == after_scheme || !slash[1]) return NULL;
  size_t plen = (size_t)(slash - after_scheme);
  char* pkg = malloc(plen + 1);
  if (!pkg) return NULL;
  memcpy(pkg, after_scheme, plen);
  pkg[plen] = 0;
  const char* rest = slash + 1;
  char* found = NULL;
  for (int i = 0; i < s->n && !found; i++) {
    char* cand = join(s->dirs[i], pkg, rest);
    if (cand && is_file(cand)) {
      found = cand;
      break;
    }
    free(cand);
    found = find_one_level_down(s->dirs[i], pkg, rest);
  }
  free(pkg);
  return found;
}

// (uri, URDF folder, search paths) => existing file or NULL
char* kn_urdf_resolve_mesh(const kn_urdf_search* s, const char* uri, const char* base_dir) {
  if (!uri || !uri[0]) return NULL;
  if (strncmp(uri, "package://", 10) == 0) return resolve_package(s, uri + 10);
  if (strncmp(uri, "file://", 7) == 0) uri += 7;
  else if (strstr(uri, "://")) return NULL; /* model://, http:// ...: no rule to find them */
  if (uri[0] == '/') return is_file(uri) ? kn_strdup(uri) : NULL;
  if (!base_dir) return NULL;
  char* cand = join(base_dir, uri, NULL);
  if (cand && is_file(cand)) return cand;
  free(cand);
  return NULL;
}
