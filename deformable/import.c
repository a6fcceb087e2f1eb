/* Volume-mesh import: Gmsh .msh (2.2 and 4.1 ASCII) and legacy ASCII VTK unstructured grids
 * (classic CELLS and the 5.1 OFFSETS/CONNECTIVITY layout). Only tetrahedra are kept (Gmsh element
 * type 4, VTK cell type 10); nodes no tet uses are dropped (they would get zero mass). Every error
 * names the file and line. Tets are checked for orientation here, where the line is known. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deformable/deformable.h"

//---- a whitespace tokenizer that knows its line ----

typedef struct {
  const char* path;
  char* buf;
  size_t len, pos;
  int line;     /* line of the cursor */
  int tokline;  /* line of the last token read */
  kn_error* err;
} reader;

static kn_status reader_open(reader* r, const char* path, kn_error* err) {
  memset(r, 0, sizeof *r);
  r->path = path, r->line = 1, r->err = err;
  return kn_file_read(path, "mesh", &r->buf, &r->len, err);
}

/* next token into tok (NUL-terminated, at most cap-1 chars); 0 at end of file */
static int next_token(reader* r, char* tok, size_t cap) {
  while (r->pos < r->len && isspace((unsigned char)r->buf[r->pos])) r->line += r->buf[r->pos++] == '\n';
  if (r->pos >= r->len) {
    r->tokline = r->line;
    return 0;
  }
  r->tokline = r->line;
  size_t n = 0;
  while (r->pos < r->len && !isspace((unsigned char)r->buf[r->pos])) {
    if (n + 1 < cap) tok[n++] = r->buf[r->pos];
    ++r->pos;
  }
  tok[n] = 0;
  return 1;
}

/* the rest of the current line (after the last token), trimmed; moves to the next line */
static void rest_of_line(reader* r, char* out, size_t cap) {
  while (r->pos < r->len && r->buf[r->pos] != '\n' && isspace((unsigned char)r->buf[r->pos])) ++r->pos;
  size_t n = 0;
  while (r->pos < r->len && r->buf[r->pos] != '\n') {
    if (n + 1 < cap) out[n++] = r->buf[r->pos];
    ++r->pos;
  }
  while (n > 0 && isspace((unsigned char)out[n - 1])) --n;
  out[n] = 0;
  if (r->pos < r->len) ++r->pos, ++r->line;
}

static kn_status read_long(reader* r, long* v, const char* what) {
  char tok[64], *end;
  if (!next_token(r, tok, sizeof tok))
    return kn_fail(r->err, KN_ERR_PARSE, "%s:%d: unexpected end of file (expected %s)", r->path, r->tokline, what);
  errno = 0;
  *v = strtol(tok, &end, 10);
  if (*end || errno || end == tok)
    return kn_fail(r->err, KN_ERR_PARSE, "%s:%d: '%s' is not an integer (expected %s)", r->path, r->tokline, tok,
                   what);
  return KN_OK;
}

static kn_status read_double(reader* r, double* v, const char* what) {
  char tok[64], *end;
  if (!next_token(r, tok, sizeof tok))
    return kn_fail(r->err, KN_ERR_PARSE, "%s:%d: unexpected end of file (expected %s)", r->path, r->tokline, what);
  *v = strtod(tok, &end);
  if (*end || end == tok || !isfinite(*v))
    return kn_fail(r->err, KN_ERR_PARSE, "%s:%d: '%s' is not a finite number (expected %s)", r->path, r->tokline,
                   tok, what);
  return KN_OK;
}

/* A declared count must fit in what is left of the file: every item takes at least `tokens`
 * tokens of at least 2 bytes each (a character and a separator), so a header claiming more
 * cannot be honest, and allocating for it would only fail (or succeed, hugely) for nothing. */
static kn_status check_count(reader* r, long n, long tokens, const char* what) {
  size_t left = r->len - r->pos;
  if (n >= 0 && (unsigned long)n <= (left + 1) / 2 / (unsigned long)tokens) return KN_OK;
  return kn_fail(r->err, KN_ERR_PARSE, "%s:%d: %ld %s declared, more than the %zu bytes left in the file can hold",
                 r->path, r->tokline, n, what, left);
}

static kn_status expect(reader* r, const char* word) {
  char tok[64];
  if (!next_token(r, tok, sizeof tok))
    return kn_fail(r->err, KN_ERR_PARSE, "%s:%d: unexpected end of file (expected '%s')", r->path, r->tokline, word);
  if (strcmp(tok, word) != 0)
    return kn_fail(r->err, KN_ERR_PARSE, "%s:%d: found '%s' (expected '%s')", r->path, r->tokline, tok, word);
  return KN_OK;
}

//---- the mesh being built: nodes by tag, tets by node tag, with the line of each tet ----

typedef struct {
  long tag;
  int index;
} tag_rec;

typedef struct {
  long* tag;     /* node tags */
  double* X;
  int nnode, capnode;
  long* tet;     /* 4 node tags per tet */
  int* line;     /* line of each tet in the file */
  int ntet, captet;
} builder;

static void builder_free(builder* b) { free(b->tag), free(b->X), free(b->tet), free(b->line); }

static int add_node(builder* b, long tag, const double x[3]) {
  if (b->nnode == b->capnode) {
    int cap = b->capnode ? 2 * b->capnode : 256;
    long* t = realloc(b->tag, (size_t)cap * sizeof *t);
    if (t) b->tag = t;
    double* X = realloc(b->X, 3 * (size_t)cap * sizeof *X);
    if (X) b->X = X;
    if (!t || !X) return 0;
    b->capnode = cap;
  }
  b->tag[b->nnode] = tag;
  memcpy(b->X + 3 * b->nnode, x, 3 * sizeof(double));
  ++b->nnode;
  return 1;
}

static int add_tet(builder* b, const long v[4], int line) {
  if (b->ntet == b->captet) {
    int cap = b->captet ? 2 * b->captet : 256;
    long* t = realloc(b->tet, 4 * (size_t)cap * sizeof *t);
    if (t) b->tet = t;
    int* l = realloc(b->line, (size_t)cap * sizeof *l);
    if (l) b->line = l;
    if (!t || !l) return 0;
    b->captet = cap;
  }
  memcpy(b->tet + 4 * b->ntet, v, 4 * sizeof(long));
  b->line[b->ntet++] = line;
  return 1;
}

static int cmp_tag(const void* pa, const void* pb) {
  const tag_rec *a = pa, *b = pb;
  return (a->tag > b->tag) - (a->tag < b->tag);
}

/* (nodes by tag, tets by tag) => mesh of the used nodes in file order, checked and finalized */
static kn_status builder_finish(builder* b, const char* path, kn_tet_mesh* m, kn_error* err) {
  memset(m, 0, sizeof *m);
  if (b->ntet == 0)
    return kn_fail(err, KN_ERR_INVALID, "%s: no tetrahedra (expected at least one tet element)", path);
  tag_rec* map = kn_calloc((size_t)b->nnode, sizeof *map);
  int* newidx = kn_calloc((size_t)b->nnode, sizeof(int));
  m->tet = kn_calloc(4 * (size_t)b->ntet, sizeof(int));
  if (!map || !newidx || !m->tet) {
    free(map), free(newidx);
    kn_tet_mesh_free(m);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
  }
  for (int i = 0; i < b->nnode; ++i) map[i].tag = b->tag[i], map[i].index = i, newidx[i] = -1;
  qsort(map, (size_t)b->nnode, sizeof *map, cmp_tag);
  kn_status s = KN_OK;
  for (int i = 1; i < b->nnode && s == KN_OK; ++i)
    if (map[i].tag == map[i - 1].tag) s = kn_fail(err, KN_ERR_PARSE, "%s: node %ld is defined twice", path, map[i].tag);
  for (int t = 0; t < b->ntet && s == KN_OK; ++t)
    for (int k = 0; k < 4; ++k) {
      tag_rec key = {b->tet[4 * t + k], 0}, *hit = bsearch(&key, map, (size_t)b->nnode, sizeof *map, cmp_tag);
      if (!hit) {
        s = kn_fail(err, KN_ERR_INVALID, "%s:%d: tet refers to node %ld, which the file does not define", path,
                    b->line[t], key.tag);
        break;
      }
      m->tet[4 * t + k] = hit->index;
      newidx[hit->index] = 0;
    }
  free(map);
  if (s == KN_OK) {
    int nv = 0;
    for (int i = 0; i < b->nnode; ++i)
      if (newidx[i] == 0) newidx[i] = nv++;
    m->X = kn_calloc(3 * (size_t)nv, sizeof(double));
    if (!m->X) s = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
    for (int i = 0; i < b->nnode && m->X; ++i)
      if (newidx[i] >= 0) memcpy(m->X + 3 * newidx[i], b->X + 3 * i, 3 * sizeof(double));
    for (int q = 0; q < 4 * b->ntet && m->X; ++q) m->tet[q] = newidx[m->tet[q]];
    m->nvert = nv, m->ntet = b->ntet;
  }
  free(newidx);
  /* orientation and degeneracy, reported with the element's line (finalize repeats the check) */
  for (int t = 0; t < m->ntet && s == KN_OK; ++t) {
    const int* v = m->tet + 4 * t;
    const double *a = m->X + 3 * v[0], *p = m->X + 3 * v[1], *c = m->X + 3 * v[2], *d = m->X + 3 * v[3];
    double u[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]}, w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]},
           z[3] = {d[0] - a[0], d[1] - a[1], d[2] - a[2]}, n[3];
    kn_vec3_cross(u, w, n);
    double vol = kn_vec3_dot(n, z) / 6;
    double e = (kn_vec3_norm(u) + kn_vec3_norm(w) + kn_vec3_norm(z)) / 3;
    if (vol <= 1e-12 * e * e * e)
      s = kn_fail(err, KN_ERR_INVALID,
                  "%s:%d: tet %d is %s: volume %.6g (expected det[b-a, c-a, d-a] > 0, nodes %ld %ld %ld %ld)", path,
                  b->line[t], t, vol < -1e-12 * e * e * e ? "inverted" : "degenerate", vol, b->tet[4 * t],
                  b->tet[4 * t + 1], b->tet[4 * t + 2], b->tet[4 * t + 3]);
  }
  if (s == KN_OK) s = kn_tet_mesh_finalize(m, path, err);
  if (s != KN_OK) kn_tet_mesh_free(m);
  return s;
}

//---- Gmsh ----

/* skip to the line "$End<section>" */
static kn_status skip_section(reader* r, const char* section) {
  char want[80], tok[80];
  snprintf(want, sizeof want, "$End%s", section);
  int start = r->tokline;
  while (next_token(r, tok, sizeof tok))
    if (strcmp(tok, want) == 0) return KN_OK;
  return kn_fail(r->err, KN_ERR_PARSE, "%s:%d: section $%s has no %s (truncated file?)", r->path, start, section,
                 want);
}

static kn_status msh_nodes(reader* r, builder* b, int v4) {
  long nblock = 1, nnode;
  kn_status s;
  if (v4) {
    long dummy;
    if ((s = read_long(r, &nblock, "number of node blocks")) || (s = read_long(r, &nnode, "number of nodes")) ||
        (s = read_long(r, &dummy, "min node tag")) || (s = read_long(r, &dummy, "max node tag")))
      return s;
  } else if ((s = read_long(r, &nnode, "number of nodes"))) {
    return s;
  }
  for (long blk = 0; blk < nblock; ++blk) {
    long count = nnode, parametric = 0, dim = 0, dummy;
    if (v4 && ((s = read_long(r, &dim, "entity dimension")) || (s = read_long(r, &dummy, "entity tag")) ||
               (s = read_long(r, &parametric, "parametric flag")) || (s = read_long(r, &count, "nodes in block"))))
      return s;
    if (count < 0) return kn_fail(r->err, KN_ERR_PARSE, "%s:%d: negative node count", r->path, r->tokline);
    if ((s = check_count(r, count, 4, "nodes"))) return s;
    long* tags = v4 ? kn_calloc((size_t)count, sizeof(long)) : NULL;
    if (v4 && !tags) return kn_fail(r->err, KN_ERR_NOMEM, "%s: out of memory", r->path);
    for (long i = 0; v4 && i < count; ++i)
      if ((s = read_long(r, tags + i, "node tag"))) return free(tags), s;
    for (long i = 0; i < count; ++i) {
      long tag;
      double x[3];
      if (!v4 && (s = read_long(r, &tag, "node tag"))) return s;
      if ((s = read_double(r, x, "node x")) || (s = read_double(r, x + 1, "node y")) ||
          (s = read_double(r, x + 2, "node z")))
        return free(tags), s;
      for (long p = 0; p < (parametric ? dim : 0); ++p) {
        double u;
        if ((s = read_double(r, &u, "parametric coordinate"))) return free(tags), s;
      }
      if (!add_node(b, v4 ? tags[i] : tag, x)) return free(tags), kn_fail(r->err, KN_ERR_NOMEM, "%s: out of memory", r->path);
    }
    free(tags);
  }
  return expect(r, "$EndNodes");
}

/* nodes per element for the Gmsh element types up to 2nd order (Gmsh manual, "MSH file format") */
static int msh_nodes_per_element(long type) {
  static const int n[] = {0, 2, 3, 4, 4, 8, 6, 5, 3, 6, 9, 10, 27, 18, 14, 1, 8, 20, 15, 13};
  return type >= 1 && type < (long)(sizeof n / sizeof n[0]) ? n[type] : -1;
}

static kn_status msh_elements(reader* r, builder* b, int v4) {
  long nblock = 1, nelem;
  kn_status s;
  if (v4) {
    long dummy;
    if ((s = read_long(r, &nblock, "number of element blocks")) ||
        (s = read_long(r, &nelem, "number of elements")) || (s = read_long(r, &dummy, "min element tag")) ||
        (s = read_long(r, &dummy, "max element tag")))
      return s;
  } else if ((s = read_long(r, &nelem, "number of elements"))) {
    return s;
  }
  for (long blk = 0; blk < nblock; ++blk) {
    long count = nelem, type = 0, dummy;
    if (v4 && ((s = read_long(r, &dummy, "entity dimension")) || (s = read_long(r, &dummy, "entity tag")) ||
               (s = read_long(r, &type, "element type")) || (s = read_long(r, &count, "elements in block"))))
      return s;
    if (count < 0) return kn_fail(r->err, KN_ERR_PARSE, "%s:%d: negative element count", r->path, r->tokline);
    if ((s = check_count(r, count, 2, "elements"))) return s;
    int line0 = r->tokline;
    if (v4 && msh_nodes_per_element(type) < 0)
      return kn_fail(r->err, KN_ERR_UNSUPPORTED, "%s:%d: unknown element type %ld", r->path, line0, type);
    for (long e = 0; e < count; ++e) {
      long ntag = 0, v[4];
      if ((s = read_long(r, &dummy, "element tag"))) return s;
      int line = r->tokline;
      if (!v4) {
        if ((s = read_long(r, &type, "element type")) || (s = read_long(r, &ntag, "number of tags"))) return s;
        for (long t = 0; t < ntag; ++t)
          if ((s = read_long(r, &dummy, "element tag value"))) return s;
        if (msh_nodes_per_element(type) < 0)
          return kn_fail(r->err, KN_ERR_UNSUPPORTED, "%s:%d: unknown element type %ld", r->path, line, type);
      }
      int nn = msh_nodes_per_element(type);
      for (int k = 0; k < nn; ++k) {
        long tag = 0;
        if ((s = read_long(r, &tag, "element node tag"))) return s;
        if (type == 4) v[k] = tag;
      }
      if (type == 4 && !add_tet(b, v, line)) return kn_fail(r->err, KN_ERR_NOMEM, "%s: out of memory", r->path);
    }
  }
  return expect(r, "$EndElements");
}

// (Gmsh .msh 2.2 / 4.1 ASCII) => finalized tet mesh of its type-4 elements
kn_status kn_tet_mesh_read_msh(const char* path, kn_tet_mesh* m, kn_error* err) {
  memset(m, 0, sizeof *m);
  reader r;
  kn_status s = reader_open(&r, path, err);
  if (s) return s;
  builder b = {0};
  char tok[80];
  int v4 = -1, have_nodes = 0, have_elements = 0;
  while (s == KN_OK && next_token(&r, tok, sizeof tok)) {
    if (tok[0] != '$') {
      s = kn_fail(err, KN_ERR_PARSE, "%s:%d: found '%s' (expected a $Section header)", path, r.tokline, tok);
    } else if (strcmp(tok, "$MeshFormat") == 0) {
      double version;
      long filetype, dsize;
      if ((s = read_double(&r, &version, "format version")) || (s = read_long(&r, &filetype, "file type")) ||
          (s = read_long(&r, &dsize, "data size")))
        break;
      if (filetype != 0)
        s = kn_fail(err, KN_ERR_UNSUPPORTED, "%s:%d: binary .msh is not supported (save as ASCII)", path, r.tokline);
      else if (version >= 2 && version < 3)
        v4 = 0;
      else if (version >= 4.1 && version < 5)
        v4 = 1;
      else
        s = kn_fail(err, KN_ERR_UNSUPPORTED, "%s:%d: .msh version %g (expected 2.2 or 4.1)", path, r.tokline, version);
      if (s == KN_OK) s = expect(&r, "$EndMeshFormat");
    } else if (v4 < 0) {
      s = kn_fail(err, KN_ERR_PARSE, "%s:%d: section %s before $MeshFormat", path, r.tokline, tok);
    } else if (strcmp(tok, "$Nodes") == 0) {
      s = msh_nodes(&r, &b, v4), have_nodes = 1;
    } else if (strcmp(tok, "$Elements") == 0) {
      s = msh_elements(&r, &b, v4), have_elements = 1;
    } else {
      s = skip_section(&r, tok + 1);
    }
  }
  if (s == KN_OK && (v4 < 0 || !have_nodes || !have_elements))
    s = kn_fail(err, KN_ERR_PARSE, "%s:%d: end of file without %s (truncated file?)", path, r.line,
                v4 < 0 ? "$MeshFormat" : !have_nodes ? "$Nodes" : "$Elements");
  if (s == KN_OK) s = builder_finish(&b, path, m, err);
  builder_free(&b), free(r.buf);
  return s;
}

//---- legacy VTK ----

static kn_status vtk_cells(reader* r, builder* b, long** cells, long* ncell, long** offsets) {
  /* classic: "CELLS n size" then n lines "k i0 .. ik-1"; 5.1: "CELLS noffsets nconn" then
   * "OFFSETS type" and "CONNECTIVITY type" arrays */
  long n = 0, size = 0;
  kn_status s;
  if ((s = read_long(r, &n, "number of cells")) || (s = read_long(r, &size, "cell list size"))) return s;
  if (n < 0 || size < 0) return kn_fail(r->err, KN_ERR_PARSE, "%s:%d: negative cell counts", r->path, r->tokline);
  if ((s = check_count(r, size, 1, "cell list entries")) || (s = check_count(r, n, 1, "cells"))) return s;
  char tok[64];
  size_t save = r->pos;
  int saveline = r->line;
  if (next_token(r, tok, sizeof tok) && strcmp(tok, "OFFSETS") == 0) {
    next_token(r, tok, sizeof tok); /* the data type */
    *ncell = n > 0 ? n - 1 : 0;
    *offsets = kn_calloc((size_t)n, sizeof(long));
    *cells = kn_calloc((size_t)size + 1, sizeof(long));
    if (!*offsets || !*cells) return kn_fail(r->err, KN_ERR_NOMEM, "%s: out of memory", r->path);
    for (long i = 0; i < n; ++i)
      if ((s = read_long(r, *offsets + i, "cell offset"))) return s;
    if ((s = expect(r, "CONNECTIVITY"))) return s;
    next_token(r, tok, sizeof tok);
    for (long i = 0; i < size; ++i)
      if ((s = read_long(r, *cells + i, "cell connectivity"))) return s;
    for (long i = 0; i < n; ++i)
      if ((*offsets)[i] < 0 || (*offsets)[i] > size || (i > 0 && (*offsets)[i] < (*offsets)[i - 1]))
        return kn_fail(r->err, KN_ERR_PARSE, "%s: OFFSETS entry %ld = %ld is out of order or range", r->path, i,
                       (*offsets)[i]);
    return KN_OK;
  }
  r->pos = save, r->line = saveline;
  *ncell = n;
  *offsets = kn_calloc((size_t)n + 1, sizeof(long));
  *cells = kn_calloc((size_t)size + 1, sizeof(long));
  b->line = kn_calloc((size_t)n + 1, sizeof(int)); /* line of each cell, for messages */
  if (!*offsets || !*cells || !b->line) return kn_fail(r->err, KN_ERR_NOMEM, "%s: out of memory", r->path);
  long pos = 0;
  for (long i = 0; i < n; ++i) {
    long k;
    if ((s = read_long(r, &k, "number of cell points"))) return s;
    b->line[i] = r->tokline;
    if (k < 0 || pos + k > size)
      return kn_fail(r->err, KN_ERR_PARSE, "%s:%d: cell %ld has %ld points, overrunning the list size %ld", r->path,
                     r->tokline, i, k, size);
    for (long j = 0; j < k; ++j)
      if ((s = read_long(r, *cells + pos + j, "cell point index"))) return s;
    (*offsets)[i] = pos, pos += k;
  }
  (*offsets)[n] = pos;
  return KN_OK;
}

// (legacy ASCII VTK unstructured grid) => finalized tet mesh of its type-10 cells
kn_status kn_tet_mesh_read_vtk(const char* path, kn_tet_mesh* m, kn_error* err) {
  memset(m, 0, sizeof *m);
  reader r;
  kn_status s = reader_open(&r, path, err);
  if (s) return s;
  builder b = {0};
  char line[256], tok[64];
  long *cells = NULL, *offsets = NULL, ncell = -1, *types = NULL, ntype = -1;
  int* cell_line = NULL;
  rest_of_line(&r, line, sizeof line);
  if (strncmp(line, "# vtk DataFile", 14) != 0)
    s = kn_fail(err, KN_ERR_PARSE, "%s:1: expected the header '# vtk DataFile Version x.x'", path);
  if (s == KN_OK) rest_of_line(&r, line, sizeof line); /* title */
  if (s == KN_OK && (!next_token(&r, tok, sizeof tok) || strcmp(tok, "ASCII") != 0))
    s = kn_fail(err, KN_ERR_UNSUPPORTED, "%s:%d: found '%s' (expected ASCII; binary VTK is not supported)", path,
                r.tokline, tok);
  if (s == KN_OK && !(expect(&r, "DATASET") == KN_OK && expect(&r, "UNSTRUCTURED_GRID") == KN_OK))
    s = kn_fail(err, KN_ERR_UNSUPPORTED, "%s:%d: expected 'DATASET UNSTRUCTURED_GRID'", path, r.tokline);
  while (s == KN_OK && next_token(&r, tok, sizeof tok)) {
    if (strcmp(tok, "POINTS") == 0) {
      long n;
      if ((s = read_long(&r, &n, "number of points"))) break;
      if ((s = check_count(&r, n, 3, "points"))) break;
      next_token(&r, tok, sizeof tok); /* data type */
      for (long i = 0; i < n && s == KN_OK; ++i) {
        double x[3];
        if ((s = read_double(&r, x, "point x")) || (s = read_double(&r, x + 1, "point y")) ||
            (s = read_double(&r, x + 2, "point z")))
          break;
        if (!add_node(&b, i, x)) s = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
      }
    } else if (strcmp(tok, "CELLS") == 0 && cells) {
      s = kn_fail(err, KN_ERR_PARSE, "%s:%d: a second CELLS section", path, r.tokline);
    } else if (strcmp(tok, "CELLS") == 0) {
      s = vtk_cells(&r, &b, &cells, &ncell, &offsets);
      cell_line = b.line, b.line = NULL;
    } else if (strcmp(tok, "CELL_TYPES") == 0 && types) {
      s = kn_fail(err, KN_ERR_PARSE, "%s:%d: a second CELL_TYPES section", path, r.tokline);
    } else if (strcmp(tok, "CELL_TYPES") == 0) {
      if ((s = read_long(&r, &ntype, "number of cell types"))) break;
      if ((s = check_count(&r, ntype, 1, "cell types"))) break;
      types = kn_calloc((size_t)(ntype > 0 ? ntype : 0), sizeof(long));
      if (!types) s = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
      for (long i = 0; i < ntype && s == KN_OK; ++i) s = read_long(&r, types + i, "cell type");
    } else if (strcmp(tok, "POINT_DATA") == 0 || strcmp(tok, "CELL_DATA") == 0 || strcmp(tok, "FIELD") == 0 ||
               strcmp(tok, "METADATA") == 0) {
      break; /* attributes follow; the geometry is complete */
    } else {
      s = kn_fail(err, KN_ERR_PARSE, "%s:%d: unexpected keyword '%s' (expected POINTS, CELLS or CELL_TYPES)", path,
                  r.tokline, tok);
    }
  }
  if (s == KN_OK && (b.nnode == 0 || ncell < 0 || ntype < 0))
    s = kn_fail(err, KN_ERR_PARSE, "%s:%d: end of file without %s (truncated file?)", path, r.line,
                b.nnode == 0 ? "POINTS" : ncell < 0 ? "CELLS" : "CELL_TYPES");
  if (s == KN_OK && ntype != ncell)
    s = kn_fail(err, KN_ERR_PARSE, "%s: CELL_TYPES has %ld entries but CELLS has %ld cells", path, ntype, ncell);
  for (long i = 0; i < ncell && s == KN_OK; ++i) {
    if (types[i] != 10) continue;
    int ln = cell_line ? cell_line[i] : r.line;
    if (offsets[i + 1] - offsets[i] != 4) {
      s = kn_fail(err, KN_ERR_PARSE, "%s:%d: cell %ld has type 10 (tetra) but %ld points (expected 4)", path, ln, i,
                  offsets[i + 1] - offsets[i]);
      break;
    }
    if (!add_tet(&b, cells + offsets[i], ln)) s = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
  }
  if (s == KN_OK) s = builder_finish(&b, path, m, err);
  builder_free(&b), free(r.buf), free(cells), free(offsets), free(types), free(cell_line);
  return s;
}
