/* Where keys are in a scene file: libcyaml reports *what* is wrong but not reliably *where* (an
 * unknown key is reported at its enclosing mapping), so the document is also loaded as a
 * libyaml node tree, whose marks give the line of any key path. */
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "scene/scene_internal.h"

struct kn_scene_lines {
  yaml_document_t doc;
};

/* Aliases make the node tree a graph: "a: &x [1, 1]\nb: &y [*x, *x]\n..." doubles per line (a
 * billion values in a kilobyte), and libcyaml and the scalar walk below expand every alias. The
 * expanded size is counted once per node (memoized) and bounded; an alias inside its own anchor
 * (a cycle) is refused too. */
#define KN_SCENE_MAX_VALUES 1000000

// (node id) => its expanded size, capped at KN_SCENE_MAX_VALUES + 1; -1 for a cycle
static long expanded_size(yaml_document_t* doc, int id, long* memo, int depth) {
  long n = (long)(doc->nodes.top - doc->nodes.start);
  if (id < 1 || id > n) return 0;
  if (memo[id - 1] == -2 || depth > 10000) return -1; /* in progress: a cycle */
  if (memo[id - 1] >= 0) return memo[id - 1];
  memo[id - 1] = -2;
  yaml_node_t* node = doc->nodes.start + id - 1;
  long size = 1;
  if (node->type == YAML_SEQUENCE_NODE) {
    for (yaml_node_item_t* it = node->data.sequence.items.start; size >= 0 && it < node->data.sequence.items.top; it++) {
      long k = expanded_size(doc, *it, memo, depth + 1);
      size = k < 0 ? -1 : size + k;
      if (size > KN_SCENE_MAX_VALUES) size = KN_SCENE_MAX_VALUES + 1;
    }
  } else if (node->type == YAML_MAPPING_NODE) {
    for (yaml_node_pair_t* p = node->data.mapping.pairs.start; size >= 0 && p < node->data.mapping.pairs.top; p++) {
      long k = expanded_size(doc, p->key, memo, depth + 1), v = k < 0 ? -1 : expanded_size(doc, p->value, memo, depth + 1);
      size = k < 0 || v < 0 ? -1 : size + k + v;
      if (size > KN_SCENE_MAX_VALUES) size = KN_SCENE_MAX_VALUES + 1;
    }
  }
  memo[id - 1] = size;
  return size;
}

static kn_status check_expansion(yaml_document_t* doc, const char* path, kn_error* err) {
  long n = (long)(doc->nodes.top - doc->nodes.start);
  if (n == 0) return KN_OK;
  long* memo = malloc((size_t)n * sizeof *memo);
  if (!memo) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
  for (long i = 0; i < n; i++) memo[i] = -3; /* not visited */
  long size = expanded_size(doc, 1, memo, 0);
  free(memo);
  if (size < 0)
    return kn_fail(err, KN_ERR_PARSE, "%s: an alias refers to a node that contains it (a cycle of anchors)", path);
  if (size > KN_SCENE_MAX_VALUES)
    return kn_fail(err, KN_ERR_PARSE, "%s: the document expands to more than %d values through its aliases", path,
                   KN_SCENE_MAX_VALUES);
  return KN_OK;
}

// (yaml text) => node tree, or KN_ERR_PARSE "path:line:column: YAML syntax error: ..."
kn_status kn_scene_lines_parse(const char* yaml, size_t len, const char* path, kn_scene_lines** out, kn_error* err) {
  kn_scene_lines* l = kn_calloc(1, sizeof *l);
  if (!l) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    free(l);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
  }
  yaml_parser_set_input_string(&parser, (const unsigned char*)yaml, len);
  if (!yaml_parser_load(&parser, &l->doc)) {
    kn_fail(err, KN_ERR_PARSE, "%s:%zu:%zu: YAML syntax error: %s%s%s", path, parser.problem_mark.line + 1,
            parser.problem_mark.column + 1, parser.problem ? parser.problem : "malformed document",
            parser.context ? " " : "", parser.context ? parser.context : "");
    yaml_parser_delete(&parser);
    free(l);
    return KN_ERR_PARSE;
  }
  yaml_parser_delete(&parser);
  kn_status st = check_expansion(&l->doc, path, err);
  if (st) {
    yaml_document_delete(&l->doc);
    free(l);
    return st;
  }
  yaml_node_t* root = yaml_document_get_root_node(&l->doc);
  if (!root || root->type != YAML_MAPPING_NODE) {
    size_t line = root ? root->start_mark.line + 1 : 1;
    yaml_document_delete(&l->doc);
    free(l);
    return kn_fail(err, KN_ERR_PARSE, "%s:%zu: a scene is a mapping of keys (time_step, robots, ...)%s", path, line,
                   root ? "" : "; the file is empty");
  }
  *out = l;
  return KN_OK;
}

void kn_scene_lines_free(kn_scene_lines* l) {
  if (!l) return;
  yaml_document_delete(&l->doc);
  free(l);
}

// (mapping node, key) => value node and the key's line, or NULL
static yaml_node_t* lines_lookup_key(yaml_document_t* doc, yaml_node_t* map, const char* key, size_t keylen,
                                     int* line) {
  if (!map || map->type != YAML_MAPPING_NODE) return NULL;
  for (yaml_node_pair_t* p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    yaml_node_t* k = yaml_document_get_node(doc, p->key);
    if (!k || k->type != YAML_SCALAR_NODE) continue;
    if (k->data.scalar.length == keylen && memcmp(k->data.scalar.value, key, keylen) == 0) {
      *line = (int)k->start_mark.line + 1;
      return yaml_document_get_node(doc, p->value);
    }
  }
  return NULL;
}

int kn_scene_lines_find(const kn_scene_lines* cl, const char* key_path) {
  if (!cl || !key_path) return 0;
  kn_scene_lines* l = (kn_scene_lines*)cl; /* libyaml's getters take non-const documents */
  yaml_node_t* node = yaml_document_get_root_node(&l->doc);
  int line = node ? (int)node->start_mark.line + 1 : 0;
  const char* s = key_path;
  while (*s && node) {
    if (*s == '.') {
      s++;
      continue;
    }
    if (*s == '[') {
      char* end;
      long i = strtol(s + 1, &end, 10);
      if (*end != ']' || node->type != YAML_SEQUENCE_NODE) return 0;
      long n = node->data.sequence.items.top - node->data.sequence.items.start;
      if (i < 0 || i >= n) return 0;
      node = yaml_document_get_node(&l->doc, node->data.sequence.items.start[i]);
      if (node) line = (int)node->start_mark.line + 1;
      s = end + 1;
      continue;
    }
    size_t n = strcspn(s, ".[");
    node = lines_lookup_key(&l->doc, node, s, n, &line);
    if (!node) return 0;
    s += n;
  }
  return node ? line : 0;
}

int kn_scene_lines_root_has(const kn_scene_lines* l, const char* key) { return kn_scene_lines_find(l, key) > 0; }

// (node at key path) => fn on each scalar below it; depth bounds alias nesting
static int each_scalar(yaml_document_t* doc, yaml_node_t* node, char* path, size_t len, size_t cap, int depth,
                       kn_scene_scalar_fn fn, void* ctx) {
  if (!node || depth > 64) return 0;
  if (node->type == YAML_SCALAR_NODE)
    return fn(ctx, path, (const char*)node->data.scalar.value, (int)node->start_mark.line + 1);
  int r = 0;
  if (node->type == YAML_SEQUENCE_NODE) {
    long i = 0;
    for (yaml_node_item_t* it = node->data.sequence.items.start; !r && it < node->data.sequence.items.top; it++, i++) {
      int w = snprintf(path + len, cap - len, "[%ld]", i);
      if (w < 0 || (size_t)w >= cap - len) continue;
      r = each_scalar(doc, yaml_document_get_node(doc, *it), path, len + (size_t)w, cap, depth + 1, fn, ctx);
    }
  } else if (node->type == YAML_MAPPING_NODE) {
    for (yaml_node_pair_t* p = node->data.mapping.pairs.start; !r && p < node->data.mapping.pairs.top; p++) {
      yaml_node_t* k = yaml_document_get_node(doc, p->key);
      if (!k || k->type != YAML_SCALAR_NODE) continue;
      int w = snprintf(path + len, cap - len, "%s%s", len ? "." : "", (const char*)k->data.scalar.value);
      if (w < 0 || (size_t)w >= cap - len) continue;
      r = each_scalar(doc, yaml_document_get_node(doc, p->value), path, len + (size_t)w, cap, depth + 1, fn, ctx);
    }
  }
  path[len] = 0;
  return r;
}

int kn_scene_lines_each_scalar(const kn_scene_lines* cl, kn_scene_scalar_fn fn, void* ctx) {
  if (!cl) return 0;
  kn_scene_lines* l = (kn_scene_lines*)cl;
  char path[1024] = "";
  return each_scalar(&l->doc, yaml_document_get_root_node(&l->doc), path, 0, sizeof path, 0, fn, ctx);
}

struct yaml_document_s* kn_scene_lines_document(kn_scene_lines* l) { return &l->doc; }
