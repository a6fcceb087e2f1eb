/* Scenes: loading a file or text (scene_lines.c for the lines, scene_schema.c for the document,
 * scene_validate.c for the checks and defaults) and resolving the file names it gives. */
#include <ctype.h>
#include <cyaml/cyaml.h>
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scene/scene_internal.h"

/* Sections of the architecture's scene sketch that knead does not simulate yet. */
static const char* const unsupported_sections[][2] = {{NULL, NULL}}; /* none at the moment */

// (scene name) => 1 when it is one plain file name: the outputs go to out/<name>
static int plain_file_name(const char* name) {
  if (!name[0] || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return 0;
  for (const char* c = name; *c; c++)
    if (*c == '/' || *c == '\\' || (unsigned char)*c < 0x20 || *c == 0x7f) return 0;
  return 1;
}

//---- loading ----

static char* path_dirname(const char* path) {
  const char* slash = strrchr(path, '/');
  if (!slash) return kn_strdup(".");
  if (slash == path) return kn_strdup("/");
  char* d = kn_calloc((size_t)(slash - path) + 1, 1);
  if (d) memcpy(d, path, (size_t)(slash - path));
  return d;
}

static char* path_stem(const char* path) {
  const char* base = strrchr(path, '/');
  base = base ? base + 1 : path;
  char* s = kn_strdup(base);
  if (!s) return NULL;
  char* dot = strrchr(s, '.');
  if (dot && dot != s && (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0)) *dot = 0;
  return s;
}

static char* path_join(const char* dir, const char* rel) {
  if (!dir || rel[0] == '/') return kn_strdup(rel);
  size_t n = strlen(dir) + strlen(rel) + 2;
  char* p = kn_calloc(n, 1);
  if (p) snprintf(p, n, "%s/%s", dir, rel);
  return p;
}

/* An error naming the key an override set, "file:line: key.path: ..." (or "file: key.path: ..."),
 * says so: " (set by --set key.path=value)". */
static void name_override(const char* const* overrides, int n, kn_error* err) {
  if (!err) return;
  for (int i = 0; i < n; i++) {
    const char* eq = overrides[i] ? strchr(overrides[i], '=') : NULL;
    if (!eq || eq == overrides[i]) continue;
    char needle[600];
    int w = snprintf(needle, sizeof needle, ": %.*s: ", (int)(eq - overrides[i]), overrides[i]);
    if (w <= 0 || (size_t)w >= sizeof needle || !strstr(err->msg, needle)) continue;
    size_t k = strlen(err->msg);
    snprintf(err->msg + k, sizeof err->msg - k, " (set by --set %s)", overrides[i]);
    return;
  }
}

kn_status kn_scene_load_string(const char* yaml, size_t len, const char* path, kn_scene** out, kn_error* err) {
  return kn_scene_load_string_with(yaml, len, path, NULL, 0, out, err);
}

kn_status kn_scene_load_string_with(const char* yaml, size_t len, const char* path, const char* const* overrides,
                                    int noverrides, kn_scene** out, kn_error* err) {
  if (!path) path = "scene";
  if (noverrides < 0 || (noverrides && !overrides))
    return kn_fail(err, KN_ERR_INVALID, "%s: %d overrides and no list of them", path, noverrides);
  kn_scene* s = kn_calloc(1, sizeof *s);
  if (!s) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
  s->path = kn_strdup(path);
  s->dir = strncmp(path, "knead://", 8) == 0 ? NULL : path_dirname(path);
  char* text = NULL; /* the overridden document, when there are overrides */
  kn_status st = kn_scene_lines_parse(yaml, len, path, &s->lines, err);
  if (st) goto fail;
  if (noverrides) {
    /* the file's node tree with the overrides applied (its lines kept for messages), written
     * back as YAML for libcyaml: everything below reads the overridden document */
    if ((st = kn_scene_override_apply(s->lines, overrides, noverrides, err)) ||
        (st = kn_scene_lines_emit(s->lines, &text, &len, err)))
      goto fail;
    yaml = text;
  }
  for (size_t i = 0; i < sizeof unsupported_sections / sizeof unsupported_sections[0]; i++)
    if (unsupported_sections[i][0] && kn_scene_lines_root_has(s->lines, unsupported_sections[i][0])) {
      st = kn_scene_fail(s, err, KN_ERR_UNSUPPORTED, unsupported_sections[i][0],
                         "%s are not supported by this version of knead yet", unsupported_sections[i][1]);
      goto fail;
    }
  st = kn_scene_doc_parse(yaml, len, path, s->lines, &s->doc, err);
  if (st) goto fail;
  kn_scene_doc* doc = s->doc;
  st = kn_scene_validate(s, err);
  if (st) goto fail;
  s->name = doc->name ? kn_strdup(doc->name) : path_stem(path);
  if (s->name && !plain_file_name(s->name)) {
    if (doc->name)
      st = kn_scene_fail(s, err, KN_ERR_INVALID, "name",
                         "'%s' is not a plain file name (outputs go to the folder out/<name>): no '/', '\\', "
                         "control characters, '.' or '..'",
                         s->name);
    else
      st = kn_fail(err, KN_ERR_INVALID, "%s: the scene's name '%s' (its file name) is not a plain file name; give "
                   "a name: key", path, s->name);
    goto fail;
  }
  s->npackage_paths = (int)doc->npackage_paths;
  s->package_paths = kn_calloc(doc->npackage_paths, sizeof *s->package_paths);
  if (!s->name || !s->package_paths) {
    st = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
    goto fail;
  }
  for (unsigned i = 0; i < doc->npackage_paths; i++) s->package_paths[i] = path_join(s->dir, doc->package_paths[i]);
  if (noverrides) {
    s->overrides = kn_calloc((size_t)noverrides, sizeof *s->overrides);
    for (int i = 0; s->overrides && i < noverrides; i++) s->overrides[i] = kn_strdup(overrides[i]);
    s->noverrides = noverrides;
    for (int i = 0; i < noverrides; i++)
      if (!s->overrides || !s->overrides[i]) {
        st = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
      }
  }
  free(text);
  *out = s;
  return KN_OK;
fail:
  if (st != KN_ERR_NOMEM) name_override(overrides, noverrides, err);
  free(text);
  kn_scene_free(s);
  return st;
}

kn_status kn_scene_load(const char* path, kn_scene** out, kn_error* err) {
  return kn_scene_load_with(path, NULL, 0, out, err);
}

kn_status kn_scene_load_with(const char* path, const char* const* overrides, int noverrides, kn_scene** out,
                             kn_error* err) {
  if (strncmp(path, "knead://", 8) == 0) {
    size_t len;
    const char* text = kn_embedded_file(path, &len);
    if (!text) return kn_fail(err, KN_ERR_IO, "%s: no such embedded file", path);
    return kn_scene_load_string_with(text, len, path, overrides, noverrides, out, err);
  }
  char* buf = NULL;
  size_t len = 0;
  kn_status rs = kn_file_read(path, "scene", &buf, &len, err);
  if (rs) return rs;
  kn_status st = kn_scene_load_string_with(buf, len, path, overrides, noverrides, out, err);
  free(buf);
  return st;
}

kn_status kn_scene_load_default(kn_scene** out, kn_error* err) {
  return kn_scene_load("knead://default_scene.yaml", out, err);
}

void kn_scene_free(kn_scene* s) {
  if (!s) return;
  for (unsigned i = 0; s->curves && s->doc && i < s->doc->nchecks; i++) {
    kn_expr_free(s->curves[i].formula);
    free(s->curves[i].t);
    free(s->curves[i].value);
  }
  free(s->curves);
  kn_scene_doc_free(s->doc);
  for (int i = 0; i < s->npackage_paths; i++) free(s->package_paths[i]);
  free(s->package_paths);
  kn_scene_lines_free(s->lines);
  for (int i = 0; i < s->noverrides; i++) free(s->overrides ? s->overrides[i] : NULL);
  free(s->overrides);
  free(s->path);
  free(s->dir);
  free(s->name);
  free(s);
}

//---- file names: relative, absolute, package:// ----

static int file_exists(const char* p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

// (base folder, "pkg", "rest") => <base>/pkg/rest or <base>/<any>/pkg/rest when it exists
static char* find_in_base(const char* base, const char* pkg, const char* rest) {
  size_t n = strlen(base) + strlen(pkg) + strlen(rest) + 3;
  char* p = kn_calloc(n, 1);
  if (!p) return NULL;
  snprintf(p, n, "%s/%s/%s", base, pkg, rest);
  if (file_exists(p)) return p;
  free(p);
  DIR* dir = opendir(base);
  if (!dir) return NULL;
  char* found = NULL;
  struct dirent* e;
  while (!found && (e = readdir(dir))) {
    if (e->d_name[0] == '.') continue;
    size_t m = strlen(base) + strlen(e->d_name) + strlen(pkg) + strlen(rest) + 4;
    char* q = kn_calloc(m, 1);
    if (!q) break;
    snprintf(q, m, "%s/%s/%s/%s", base, e->d_name, pkg, rest);
    if (file_exists(q))
      found = q;
    else
      free(q);
  }
  closedir(dir);
  return found;
}

static char* find_in_env(const char* var, const char* pkg, const char* rest) {
  const char* v = getenv(var);
  if (!v || !*v) return NULL;
  char* copy = kn_strdup(v);
  char* found = NULL;
  for (char *save = NULL, *tok = strtok_r(copy, ":", &save); tok && !found; tok = strtok_r(NULL, ":", &save))
    if (*tok) found = find_in_base(tok, pkg, rest);
  free(copy);
  return found;
}

char* kn_scene_resolve_path(const kn_scene* s, const char* uri, kn_error* err) {
  if (strncmp(uri, "knead://", 8) == 0) {
    if (kn_embedded_file(uri, NULL)) return kn_strdup(uri);
    kn_fail(err, KN_ERR_IO, "%s is not embedded in this build of knead", uri);
    return NULL;
  }
  if (strncmp(uri, "file://", 7) == 0) uri += 7;
  if (strncmp(uri, "package://", 10) != 0) return path_join(s ? s->dir : NULL, uri);
  const char* pkg = uri + 10;
  const char* slash = strchr(pkg, '/');
  if (!slash || slash == pkg || !slash[1]) {
    kn_fail(err, KN_ERR_INVALID, "%s: expected package://<package>/<path>", uri);
    return NULL;
  }
  char name[256];
  size_t n = (size_t)(slash - pkg);
  if (n >= sizeof name) n = sizeof name - 1;
  memcpy(name, pkg, n);
  name[n] = 0;
  const char* rest = slash + 1;
  for (int i = 0; s && i < s->npackage_paths; i++) {
    char* p = find_in_base(s->package_paths[i], name, rest);
    if (p) return p;
  }
  char* p = find_in_env("KNEAD_PACKAGE_PATH", name, rest);
  if (!p) p = find_in_env("ROS_PACKAGE_PATH", name, rest);
  if (p) return p;
  char tried[512] = "";
  size_t k = 0;
  for (int i = 0; s && i < s->npackage_paths && k < sizeof tried; i++)
    k += (size_t)snprintf(tried + k, sizeof tried - k, "%s%s", k ? ", " : "", s->package_paths[i]);
  kn_fail(err, KN_ERR_IO,
          "%s: package '%s' not found (searched package_paths [%s], KNEAD_PACKAGE_PATH, ROS_PACKAGE_PATH)", uri, name,
          tried);
  return NULL;
}
