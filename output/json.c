/* knead's JSON goes through one library, jansson (ARCHITECTURE.md says why): these helpers add
 * what every caller needs on top of it, errors that name the file (and line, column) and JSON's
 * lack of NaN and infinity. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "output/output_internal.h"

json_t* kn_json_real(double v) { return isfinite(v) ? json_real(v) : json_null(); }

kn_status kn_json_write_file(const json_t* doc, const char* path, size_t flags, kn_error* err) {
  FILE* f = fopen(path, "w");
  if (!f) return kn_fail(err, KN_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  int bad = json_dumpf(doc, f, flags) != 0;
  bad |= fputc('\n', f) == EOF;
  bad |= ferror(f) != 0;
  if (fclose(f) != 0 || bad) return kn_fail(err, KN_ERR_IO, "%s: write error", path);
  return KN_OK;
}

kn_status kn_json_read_file(const char* path, json_t** out, kn_error* err) {
  *out = NULL;
  FILE* f = fopen(path, "rb");
  if (!f) return kn_fail(err, KN_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
  json_error_t je;
  /* JSON_DECODE_INT_AS_REAL: every number a double; JSON_ALLOW_NUL is not given, so a \u0000 in a
   * string is an error rather than a silently cut string */
  json_t* doc = json_loadf(f, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &je);
  fclose(f);
  if (!doc) return kn_fail(err, KN_ERR_PARSE, "%s:%d:%d: %s", path, je.line, je.column, je.text);
  *out = doc;
  return KN_OK;
}

kn_status kn_json_built(int failures, const char* what, kn_error* err) {
  /* jansson refuses a string that is not UTF-8 as it refuses memory: say both */
  return failures ? kn_fail(err, KN_ERR_NOMEM, "%s: cannot build its JSON: out of memory, or a name or path that is "
                            "not UTF-8", what)
                  : KN_OK;
}

int kn_json_set_build(json_t* doc) {
  int bad = json_object_set_new(doc, "knead_version", json_string(kn_version()));
  bad |= json_object_set_new(doc, "git_revision", json_string(kn_git_revision()));
  bad |= json_object_set_new(doc, "build_id", json_string(kn_build_id()));
  bad |= json_object_set_new(doc, "build", json_string(kn_build_string()));
  return bad;
}
