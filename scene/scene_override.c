/* --set overrides: "key.path=value" applied to the scene's libyaml node tree (scene_lines.c) before
 * libcyaml reads the document, so the schema, the validation, the defaults and the world see the
 * overridden document exactly as if the file said it. The tree is then written back as YAML in
 * flow style with every node on its file's line (kn_scene_lines_emit), which libcyaml loads; the
 * tree itself keeps the file's lines for the messages.
 *
 * What can be set: any key path whose value the schema types as one scalar (a number, a bool, an
 * enum word, text). An existing scalar is replaced; a missing key is added to its mapping, and the
 * mappings above it that the schema has are created too (contact.solver.max_iterations in a scene
 * without contact:); list entries are never created (objects[2] when the scene has two objects,
 * gravity[2] when the scene has no gravity: are errors). The value is one scalar: as typed, or one
 * quoted YAML scalar ('...' or "..."); a value starting with '[' or '{' is refused. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "scene/scene_internal.h"

#define KN_SET_MAX_STEPS 32
#define KN_SET_PATH 1024

/* One step of a key path: a mapping key or a list index. */
typedef struct {
  char key[128];
  long index; /* -1 for a key */
} set_step;

//---- key paths ----

// ("objects[1].friction") => its steps, 0 when it is not a key path
static int parse_key_path(const char* k, set_step* st, int cap) {
  int n = 0;
  const char* c = k;
  while (*c) {
    if (n == cap) return 0;
    if (*c == '[') {
      if (!isdigit((unsigned char)c[1])) return 0;
      char* end;
      errno = 0;
      long i = strtol(c + 1, &end, 10);
      if (*end != ']' || errno) return 0;
      st[n].key[0] = 0;
      st[n++].index = i;
      c = end + 1;
    } else {
      size_t len = strcspn(c, ".[]");
      if (len == 0 || len >= sizeof st[0].key || c[len] == ']') return 0;
      memcpy(st[n].key, c, len);
      st[n].key[len] = 0;
      st[n++].index = -1;
      c += len;
    }
    if (*c == '.') {
      c++;
      if (!*c || *c == '.' || *c == '[') return 0;
    } else if (*c && *c != '[') {
      return 0;
    }
  }
  return n;
}

// (steps, how many) => "objects[1].controller"
static void format_steps(const set_step* st, int n, char* out, size_t cap) {
  size_t k = 0;
  out[0] = 0;
  for (int i = 0; i < n && k < cap; i++) {
    int w = st[i].index >= 0 ? snprintf(out + k, cap - k, "[%ld]", st[i].index)
                             : snprintf(out + k, cap - k, "%s%s", k ? "." : "", st[i].key);
    if (w > 0) k += (size_t)w;
  }
}

//---- the node tree ----

static const char* node_kind(const yaml_node_t* n) {
  return n->type == YAML_MAPPING_NODE ? "a mapping" : n->type == YAML_SEQUENCE_NODE ? "a list" : "a single value";
}

// (container node id) => a new node with the same entries and marks (so a node shared through an
// alias changes only at the overridden path); 0 when out of memory
static int copy_container(yaml_document_t* doc, int id) {
  yaml_node_t* n = yaml_document_get_node(doc, id);
  int mapping = n->type == YAML_MAPPING_NODE;
  int c = mapping ? yaml_document_add_mapping(doc, NULL, n->data.mapping.style)
                  : yaml_document_add_sequence(doc, NULL, n->data.sequence.style);
  if (!c) return 0;
  n = yaml_document_get_node(doc, id); /* adding may have moved the nodes */
  yaml_node_t* copy = yaml_document_get_node(doc, c);
  copy->start_mark = n->start_mark;
  copy->end_mark = n->end_mark;
  if (mapping) {
    for (yaml_node_pair_t* p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++)
      if (!yaml_document_append_mapping_pair(doc, c, p->key, p->value)) return 0;
  } else {
    for (yaml_node_item_t* it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++)
      if (!yaml_document_append_sequence_item(doc, c, *it)) return 0;
  }
  return c;
}

static int add_scalar(yaml_document_t* doc, const char* value, int quoted, yaml_mark_t mark) {
  int id = yaml_document_add_scalar(doc, NULL, (yaml_char_t*)value, (int)strlen(value),
                                    quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_PLAIN_SCALAR_STYLE);
  if (id) {
    yaml_node_t* n = yaml_document_get_node(doc, id);
    n->start_mark = n->end_mark = mark;
  }
  return id;
}

// (mapping id, key) => the index of its pair with that key, -1 when absent
static long find_pair(yaml_document_t* doc, int map, const char* key) {
  yaml_node_t* m = yaml_document_get_node(doc, map);
  for (yaml_node_pair_t* p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
    yaml_node_t* k = yaml_document_get_node(doc, p->key);
    if (k && k->type == YAML_SCALAR_NODE && k->data.scalar.length == strlen(key) &&
        memcmp(k->data.scalar.value, key, k->data.scalar.length) == 0)
      return p - m->data.mapping.pairs.start;
  }
  return -1;
}

//---- one override ----

#define SET_FAIL(status, ...)                 \
  do {                                        \
    st = kn_fail(err, status, __VA_ARGS__);   \
    goto done;                                \
  } while (0)

// ("key=value") => the tree with it applied, or the reason it cannot be
static kn_status apply_one(yaml_document_t* doc, const char* text, kn_error* err) {
  kn_status st = KN_OK;
  char* key = NULL;
  char* value = NULL;
  const char* eq = strchr(text, '=');
  if (!eq) SET_FAIL(KN_ERR_INVALID, "--set %s: expected key=value (e.g. --set contact.margin=0.001)", text);
  if (eq == text)
    SET_FAIL(KN_ERR_INVALID, "--set %s: the key before '=' is empty (expected key=value, e.g. --set contact.margin=0.001)",
             text);
  key = kn_calloc((size_t)(eq - text) + 1, 1);
  if (!key) SET_FAIL(KN_ERR_NOMEM, "--set %s: out of memory", text);
  memcpy(key, text, (size_t)(eq - text));
  set_step steps[KN_SET_MAX_STEPS];
  int n = parse_key_path(key, steps, KN_SET_MAX_STEPS);
  if (!n)
    SET_FAIL(KN_ERR_INVALID,
             "--set %s: '%s' is not a key path (keys joined by '.', list entries as [i]: objects[1].friction)", text,
             key);

  //---- the schema: every step exists, and the last is one scalar ----
  char prefix[KN_SET_PATH], here[KN_SET_PATH], what[512];
  for (int i = 0; i < n; i++) {
    format_steps(steps, i, prefix, sizeof prefix);
    format_steps(steps, i + 1, here, sizeof here);
    kn_scene_schema_kind kind = kn_scene_schema_kind_at(prefix);
    kn_scene_schema_describe(prefix, what, sizeof what);
    if (steps[i].index < 0) {
      if (kind == KN_SCHEMA_SCALAR)
        SET_FAIL(KN_ERR_INVALID, "--set %s: %s is a single value (%s), it has no key '%s'", text, prefix, what,
                 steps[i].key);
      if (kind == KN_SCHEMA_LIST)
        SET_FAIL(KN_ERR_INVALID, "--set %s: %s is a list: name an entry, %s[i]", text, prefix, prefix);
      if (kn_scene_schema_kind_at(here) == KN_SCHEMA_NONE) {
        kn_scene_schema_keys(prefix, what, sizeof what);
        SET_FAIL(KN_ERR_PARSE, "--set %s: unknown key '%s' in %s (expected one of: %s)", text, steps[i].key,
                 i ? prefix : "the scene", what);
      }
    } else if (kind != KN_SCHEMA_LIST) {
      SET_FAIL(KN_ERR_INVALID, "--set %s: %s is not a list (it is %s)", text, i ? prefix : "the scene", what);
    }
  }
  kn_scene_schema_describe(key, what, sizeof what);
  kn_scene_schema_kind kind = kn_scene_schema_kind_at(key);
  if (kind == KN_SCHEMA_LIST)
    SET_FAIL(KN_ERR_INVALID, "--set %s: %s is %s; --set sets one value: set its entries, %s[0]=...", text, key, what,
             key);
  if (kind != KN_SCHEMA_SCALAR)
    SET_FAIL(KN_ERR_INVALID, "--set %s: %s is %s; --set sets one value: set its keys, %s.<key>=...", text, key, what,
             key);

  //---- the value: one scalar of the schema's type ----
  const char* raw = eq + 1;
  int quoted = 0;
  if (raw[0] == '[' || raw[0] == '{')
    SET_FAIL(KN_ERR_INVALID, "--set %s: the value is a %s; --set sets one value (a number, true/false or text)", text,
             raw[0] == '[' ? "list" : "mapping");
  if (raw[0] == '"' || raw[0] == '\'') {
    yaml_parser_t parser;
    yaml_document_t vd;
    if (!yaml_parser_initialize(&parser)) SET_FAIL(KN_ERR_NOMEM, "--set %s: out of memory", text);
    yaml_parser_set_input_string(&parser, (const unsigned char*)raw, strlen(raw));
    int ok = yaml_parser_load(&parser, &vd);
    yaml_parser_delete(&parser);
    yaml_node_t* root = ok ? yaml_document_get_root_node(&vd) : NULL;
    if (root && root->type == YAML_SCALAR_NODE) value = kn_strdup((const char*)root->data.scalar.value);
    if (ok) yaml_document_delete(&vd);
    if (!value) SET_FAIL(KN_ERR_INVALID, "--set %s: the value is not one quoted YAML scalar", text);
    quoted = 1;
  } else {
    value = kn_strdup(raw);
    if (!value) SET_FAIL(KN_ERR_NOMEM, "--set %s: out of memory", text);
  }
  if (!kn_scene_schema_value_ok(key, value)) SET_FAIL(KN_ERR_PARSE, "--set %s: expected %s", text, what);

  //---- the document: walk, copying each container on the path, then set or add ----
  int cur = 1; /* the root mapping */
  for (int i = 0; i < n; i++) {
    format_steps(steps, i, prefix, sizeof prefix);
    format_steps(steps, i + 1, here, sizeof here);
    const char* where = i ? prefix : "the scene";
    int last = i == n - 1;
    yaml_node_t* node = yaml_document_get_node(doc, cur);
    yaml_mark_t mark = node->start_mark;
    long slot; /* the pair or item holding the child */
    int child;
    if (steps[i].index < 0) {
      if (node->type != YAML_MAPPING_NODE)
        SET_FAIL(KN_ERR_INVALID, "--set %s: %s is %s in the scene, not a mapping with key '%s'", text, where,
                 node_kind(node), steps[i].key);
      slot = find_pair(doc, cur, steps[i].key);
      /* output and outputs are one section: set the one the scene has */
      if (slot < 0 && i == 0 && (!strcmp(steps[0].key, "output") || !strcmp(steps[0].key, "outputs")))
        slot = find_pair(doc, cur, strcmp(steps[0].key, "output") ? "output" : "outputs");
      if (slot < 0) {
        if (!last && kn_scene_schema_kind_at(here) != KN_SCHEMA_MAPPING)
          SET_FAIL(KN_ERR_INVALID,
                   "--set %s: %s is not in the scene; --set changes an entry of a list the scene has, it does not "
                   "add lists or entries",
                   text, here);
        int k = add_scalar(doc, steps[i].key, 0, mark);
        int v = last ? add_scalar(doc, value, quoted, mark) : yaml_document_add_mapping(doc, NULL, YAML_FLOW_MAPPING_STYLE);
        if (!k || !v || !yaml_document_append_mapping_pair(doc, cur, k, v))
          SET_FAIL(KN_ERR_NOMEM, "--set %s: out of memory", text);
        yaml_document_get_node(doc, v)->start_mark = mark;
        yaml_document_get_node(doc, v)->end_mark = mark;
        cur = v;
        continue;
      }
      child = node->data.mapping.pairs.start[slot].value;
    } else {
      if (node->type != YAML_SEQUENCE_NODE)
        SET_FAIL(KN_ERR_INVALID, "--set %s: %s is %s in the scene, not a list", text, where, node_kind(node));
      long count = node->data.sequence.items.top - node->data.sequence.items.start;
      if (steps[i].index >= count) {
        if (count == 0) SET_FAIL(KN_ERR_INVALID, "--set %s: %s is an empty list in the scene: there is no %s", text, where, here);
        SET_FAIL(KN_ERR_INVALID, "--set %s: %s has %ld entr%s in the scene (%s[0] to %s[%ld]): there is no %s", text,
                 where, count, count == 1 ? "y" : "ies", prefix, prefix, count - 1, here);
      }
      slot = steps[i].index;
      child = node->data.sequence.items.start[slot];
    }
    yaml_node_t* c = yaml_document_get_node(doc, child);
    int repl;
    if (last) {
      repl = add_scalar(doc, value, quoted, c->start_mark);
    } else {
      if (c->type == YAML_SCALAR_NODE)
        SET_FAIL(KN_ERR_INVALID, "--set %s: %s is a single value in the scene ('%s'), not %s", text, here,
                 (const char*)c->data.scalar.value, kn_scene_schema_kind_at(here) == KN_SCHEMA_LIST ? "a list" : "a mapping");
      repl = copy_container(doc, child);
    }
    if (!repl) SET_FAIL(KN_ERR_NOMEM, "--set %s: out of memory", text);
    node = yaml_document_get_node(doc, cur);
    if (steps[i].index < 0)
      node->data.mapping.pairs.start[slot].value = repl;
    else
      node->data.sequence.items.start[slot] = repl;
    cur = repl;
  }
done:
  free(key);
  free(value);
  return st;
}

kn_status kn_scene_override_apply(kn_scene_lines* l, const char* const* overrides, int n, kn_error* err) {
  yaml_document_t* doc = kn_scene_lines_document(l);
  for (int i = 0; i < n; i++) {
    if (!overrides[i]) return kn_fail(err, KN_ERR_INVALID, "--set: override %d is NULL", i);
    kn_status st = apply_one(doc, overrides[i], err);
    if (st) return st;
  }
  return KN_OK;
}

//---- the tree => flow-style YAML on the file's lines ----

typedef struct {
  char* buf;
  size_t n, cap;
  size_t line; /* 0-based line being written */
  int nomem;
} emit_buf;

static void put(emit_buf* o, const char* s, size_t len) {
  if (o->nomem) return;
  if (o->n + len + 1 > o->cap) {
    size_t c = o->cap ? 2 * o->cap : 4096;
    while (c < o->n + len + 1) c *= 2;
    char* b = realloc(o->buf, c);
    if (!b) {
      o->nomem = 1;
      return;
    }
    o->buf = b, o->cap = c;
  }
  memcpy(o->buf + o->n, s, len);
  o->n += len;
  o->buf[o->n] = 0;
}

static void puts_(emit_buf* o, const char* s) { put(o, s, strlen(s)); }

// (node) => line breaks up to its line (never back): libcyaml's own line numbers stay the file's
static void to_line(emit_buf* o, const yaml_node_t* node) {
  while (o->line < node->start_mark.line) {
    puts_(o, "\n ");
    o->line++;
  }
}

// (a scalar) => 1 when it reads the same unquoted inside a flow collection
static int plain_safe(const unsigned char* v, size_t n) {
  if (n == 0 || v[0] == ' ' || v[n - 1] == ' ') return 0;
  if (strchr("?:,[]{}#&*!|>'\"%@`", v[0]) || (v[0] == '-' && (n == 1 || v[1] == ' '))) return 0;
  for (size_t i = 0; i < n; i++)
    if (v[i] < 0x20 || v[i] == 0x7f || strchr(",[]{}#:", v[i])) return 0;
  return 1;
}

// (scalar, 1 as a mapping's value) => it as written: plain when that reads the same, else quoted
static void emit_scalar(emit_buf* o, const yaml_node_t* node, int map_value) {
  const unsigned char* v = node->data.scalar.value;
  size_t n = node->data.scalar.length;
  if (node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && n == 0 && map_value) return; /* "key:" stays empty */
  if (node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && plain_safe(v, n)) {
    put(o, (const char*)v, n);
    return;
  }
  puts_(o, "\"");
  for (size_t i = 0; i < n; i++) {
    char esc[8];
    if (v[i] == '"' || v[i] == '\\') {
      esc[0] = '\\', esc[1] = (char)v[i], esc[2] = 0;
      puts_(o, esc);
    } else if (v[i] < 0x20 || v[i] == 0x7f) {
      snprintf(esc, sizeof esc, "\\x%02x", v[i]);
      puts_(o, esc);
    } else {
      put(o, (const char*)v + i, 1);
    }
  }
  puts_(o, "\"");
}

static int emit_node(emit_buf* o, yaml_document_t* doc, int id, int depth, int map_value) {
  yaml_node_t* node = yaml_document_get_node(doc, id);
  if (!node || depth > 10000) return -1;
  to_line(o, node);
  if (node->type == YAML_SCALAR_NODE) {
    emit_scalar(o, node, map_value);
  } else if (node->type == YAML_SEQUENCE_NODE) {
    puts_(o, "[");
    for (yaml_node_item_t* it = node->data.sequence.items.start; it < node->data.sequence.items.top; it++) {
      if (it > node->data.sequence.items.start) puts_(o, ", ");
      if (emit_node(o, doc, *it, depth + 1, 0)) return -1;
    }
    puts_(o, "]");
  } else {
    puts_(o, "{");
    for (yaml_node_pair_t* p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
      if (p > node->data.mapping.pairs.start) puts_(o, ", ");
      if (emit_node(o, doc, p->key, depth + 1, 0)) return -1;
      puts_(o, ": ");
      if (emit_node(o, doc, p->value, depth + 1, 1)) return -1;
    }
    puts_(o, "}");
  }
  return 0;
}

kn_status kn_scene_lines_emit(const kn_scene_lines* cl, char** text, size_t* len, kn_error* err) {
  yaml_document_t* doc = kn_scene_lines_document((kn_scene_lines*)cl);
  emit_buf o = {0};
  int r = emit_node(&o, doc, 1, 0, 0);
  puts_(&o, "\n");
  if (r || o.nomem) {
    free(o.buf);
    return kn_fail(err, o.nomem ? KN_ERR_NOMEM : KN_ERR_PARSE, "--set: the overridden scene cannot be written back");
  }
  *text = o.buf;
  *len = o.n;
  return KN_OK;
}
