/* knead/scene internals shared by the files of this folder (not installed). */
#ifndef KNEAD_SCENE_INTERNAL_H
#define KNEAD_SCENE_INTERNAL_H

#include <stddef.h>

#include "scene/scene.h"

/* One file embedded at build time by scene/embed.cmake (generated knead_embedded.c). */
typedef struct {
  const char* name;           /* "default_scene.yaml", "models/knead_arm7.urdf" */
  const unsigned char* data;  /* NUL-terminated */
  size_t len;                 /* without the NUL */
} kn_embedded_entry;

extern const kn_embedded_entry kn_embedded_table[];
extern const int kn_embedded_ntable;

/* The libyaml node tree of a scene, kept to report the line of any key path. */
kn_status kn_scene_lines_parse(const char* yaml, size_t len, const char* path, kn_scene_lines** out, kn_error* err);
void kn_scene_lines_free(kn_scene_lines* l);
/* 1-based line of the node at key_path ("robots[1].controller.kp"; for a key, the key's line),
 * 0 when the path does not exist. */
int kn_scene_lines_find(const kn_scene_lines* l, const char* key_path);
/* the keys of the root mapping, for rejecting sections that are not simulated yet */
int kn_scene_lines_root_has(const kn_scene_lines* l, const char* key);
/* Every scalar of the document with its key path ("objects[0].friction", "gravity[2]") and line,
 * depth first in document order; aliases are visited where they are used. Stops at the first
 * callback that returns non-zero and returns that value. */
typedef int (*kn_scene_scalar_fn)(void* ctx, const char* key_path, const char* value, int line);
int kn_scene_lines_each_scalar(const kn_scene_lines* l, kn_scene_scalar_fn fn, void* ctx);

/* (YAML text, its lines) => the document as libcyaml loads it against the schema, every number read
 * whole (scene_schema.c); errors "path:line: key.path: what was expected" (KN_ERR_PARSE) */
kn_status kn_scene_doc_parse(const char* yaml, size_t len, const char* path, const kn_scene_lines* lines,
                             kn_scene_doc** out, kn_error* err);
void kn_scene_doc_free(kn_scene_doc* doc);
/* (s->doc) => defaults filled in (time_step, duration, gravity, backend, output), or the first key
 * that is not acceptable (scene_validate.c); checks nothing that needs a robot model */
kn_status kn_scene_validate(kn_scene* s, kn_error* err);


/*---- --set overrides (scene_override.c, with the schema's view from scene_schema.c) ----*/

/* What the schema holds at a key path ("" is the scene itself). */
typedef enum { KN_SCHEMA_NONE = 0, KN_SCHEMA_MAPPING, KN_SCHEMA_LIST, KN_SCHEMA_SCALAR } kn_scene_schema_kind;
kn_scene_schema_kind kn_scene_schema_kind_at(const char* key_path);
/* "a number", "one of: sap, penalty, ...", "a mapping with keys ...", "a list of 3 values, ..." */
void kn_scene_schema_describe(const char* key_path, char* out, size_t cap);
/* the keys of the mapping at key_path, "backend, margin, ..." ("" when not a mapping) */
void kn_scene_schema_keys(const char* key_path, char* out, size_t cap);
/* 1 when `value` is what the scalar at key_path accepts (a whole number, one of an enum's words) */
int kn_scene_schema_value_ok(const char* key_path, const char* value);

/* (the scene's node tree, "key.path=value" overrides) => the tree with each override applied in
 * order: an existing scalar replaced, a missing key added (with the mappings above it that the
 * schema has), only at this path (a node shared through an alias is copied first); or the first
 * override that cannot be applied, "--set key=value: why" (KN_ERR_PARSE for an unknown key or a
 * value of the wrong type, KN_ERR_INVALID otherwise), the tree then unusable. */
kn_status kn_scene_override_apply(kn_scene_lines* l, const char* const* overrides, int n, kn_error* err);
/* (node tree) => YAML text in flow style, each node on its line of the file (so libcyaml's lines
 * stay the file's), malloc'd in *text */
kn_status kn_scene_lines_emit(const kn_scene_lines* l, char** text, size_t* len, kn_error* err);
/* the libyaml document of the tree (scene_override.c edits it) */
struct yaml_document_s* kn_scene_lines_document(kn_scene_lines* l);

#endif
