/* Tetrahedralization of a closed triangle surface with the `tetgen` program (Debian package
 * tetgen; TetGen 1.5 by H. Si). The surface is welded and checked for open edges here, written
 * as an .off file into a private temporary folder, tetgen runs there through posix_spawn (no
 * shell; its output goes to a log file we quote on failure) with -p (piecewise-linear complex),
 * -z (zero-based output), -Q (quiet), -q (quality) and -a (volume bound), and the .node / .ele
 * files are read back. The library prints nothing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include "deformable/deformable.h"

extern char** environ;

#ifndef KNEAD_TETGEN
#define KNEAD_TETGEN "tetgen"
#endif

kn_tetrahedralize_options kn_tetrahedralize_options_default(void) {
  kn_tetrahedralize_options o = {1.4, 0, NULL};
  return o;
}

//---- weld and check closedness ----

static const double* g_pos; /* qsort has no context argument */
static int cmp_pos(const void* a, const void* b) {
  return memcmp(g_pos + 3 * *(const int*)a, g_pos + 3 * *(const int*)b, 3 * sizeof(double)) < 0   ? -1
         : memcmp(g_pos + 3 * *(const int*)a, g_pos + 3 * *(const int*)b, 3 * sizeof(double)) > 0 ? 1
                                                                                                   : 0;
}
/* memcmp order is not numeric order, but any total order groups identical positions */

/* (soup) => welded vertices W (nw) and triangles F (nf), or an error for an open edge */
static kn_status weld_and_check(const double* V, int nv, const int* T, int nt, const char* name, double** W, int* nw,
                                int** F, int* nf, kn_error* err) {
  int* idx = kn_calloc((size_t)nv, sizeof(int));
  int* map = kn_calloc((size_t)nv, sizeof(int));
  *W = kn_calloc(3 * (size_t)nv, sizeof(double));
  *F = kn_calloc(3 * (size_t)nt, sizeof(int));
  kn_status s = KN_OK;
  if (!idx || !map || !*W || !*F) {
    s = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", name);
    goto done;
  }
  for (int i = 0; i < nv; ++i) idx[i] = i;
  g_pos = V;
  qsort(idx, (size_t)nv, sizeof(int), cmp_pos);
  int n = 0;
  for (int i = 0; i < nv; ++i) {
    if (i == 0 || memcmp(V + 3 * idx[i], V + 3 * idx[i - 1], 3 * sizeof(double)) != 0) {
      memcpy(*W + 3 * n, V + 3 * idx[i], 3 * sizeof(double));
      ++n;
    }
    map[idx[i]] = n - 1;
  }
  *nw = n;
  int k = 0;
  for (int t = 0; t < nt; ++t) {
    int a = T[3 * t], b = T[3 * t + 1], c = T[3 * t + 2];
    if (a < 0 || b < 0 || c < 0 || a >= nv || b >= nv || c >= nv) {
      s = kn_fail(err, KN_ERR_INVALID, "%s: triangle %d has a vertex index outside 0..%d", name, t, nv - 1);
      goto done;
    }
    a = map[a], b = map[b], c = map[c];
    if (a == b || b == c || a == c) continue; /* degenerate after welding */
    (*F)[3 * k] = a, (*F)[3 * k + 1] = b, (*F)[3 * k + 2] = c;
    ++k;
  }
  *nf = k;
  if ((s = kn_mesh_check_closed(n, *W, k, *F, 0, err))) kn_error_prefix(err, "%s: ", name);
done:
  free(idx), free(map);
  if (s) free(*W), free(*F), *W = NULL, *F = NULL;
  return s;
}

//---- run tetgen ----

static void remove_dir(const char* dir) {
  DIR* d = opendir(dir);
  if (!d) return;
  char p[4096];
  for (struct dirent* e; (e = readdir(d));) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  closedir(d);
  rmdir(dir);
}

/* last ~600 bytes of the tool's log, for the error message */
static void log_tail(const char* path, char* out, size_t cap) {
  out[0] = 0;
  FILE* f = fopen(path, "rb");
  if (!f) return;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  long from = n > (long)cap - 1 ? n - (long)cap + 1 : 0;
  fseek(f, from, SEEK_SET);
  size_t got = fread(out, 1, cap - 1, f);
  out[got] = 0;
  fclose(f);
  for (char* c = out; *c; ++c)
    if (*c == '\n' || *c == '\r') *c = ' ';
}

/* read "<base>.1.node" and "<base>.1.ele" (zero-based, -z) into m, flipping negative tets */
static kn_status read_tetgen_output(const char* base, const char* name, kn_tet_mesh* m, kn_error* err) {
  char p[4200];
  snprintf(p, sizeof p, "%s.1.node", base);
  FILE* f = fopen(p, "r");
  if (!f) return kn_fail(err, KN_ERR_IO, "%s: tetgen wrote no %s", name, p);
  int n, dim, nattr, nbound;
  kn_status s = KN_OK;
  if (fscanf(f, "%d %d %d %d", &n, &dim, &nattr, &nbound) != 4 || n < 4 || dim != 3 || nattr < 0)
    s = kn_fail(err, KN_ERR_PARSE, "%s: %s: bad header (expected 'n 3 nattr nbound')", name, p);
  if (s == KN_OK && !(m->X = kn_calloc(3 * (size_t)n, sizeof(double))))
    s = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", name);
  for (int i = 0; i < n && s == KN_OK; ++i) {
    int id;
    double x[3], skip;
    if (fscanf(f, "%d %lf %lf %lf", &id, x, x + 1, x + 2) != 4 || id < 0 || id >= n)
      s = kn_fail(err, KN_ERR_PARSE, "%s: %s: bad node line %d", name, p, i + 2);
    for (int a = 0; a < nattr + (nbound ? 1 : 0) && s == KN_OK; ++a)
      if (fscanf(f, "%lf", &skip) != 1) s = kn_fail(err, KN_ERR_PARSE, "%s: %s: bad node line %d", name, p, i + 2);
    if (s == KN_OK) memcpy(m->X + 3 * id, x, sizeof x);
  }
  fclose(f);
  m->nvert = n;
  if (s) return s;
  snprintf(p, sizeof p, "%s.1.ele", base);
  if (!(f = fopen(p, "r"))) return kn_fail(err, KN_ERR_IO, "%s: tetgen wrote no %s", name, p);
  int nt, npt;
  if (fscanf(f, "%d %d %d", &nt, &npt, &nattr) != 3 || nt < 1 || npt != 4 || nattr < 0)
    s = kn_fail(err, KN_ERR_PARSE, "%s: %s: bad header (expected 'ntet 4 nattr')", name, p);
  if (s == KN_OK && !(m->tet = kn_calloc(4 * (size_t)nt, sizeof(int))))
    s = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", name);
  for (int t = 0; t < nt && s == KN_OK; ++t) {
    int id, *v = m->tet + 4 * t;
    double skip;
    if (fscanf(f, "%d %d %d %d %d", &id, v, v + 1, v + 2, v + 3) != 5)
      s = kn_fail(err, KN_ERR_PARSE, "%s: %s: bad element line %d", name, p, t + 2);
    for (int a = 0; a < nattr && s == KN_OK; ++a)
      if (fscanf(f, "%lf", &skip) != 1) s = kn_fail(err, KN_ERR_PARSE, "%s: %s: bad element line %d", name, p, t + 2);
    for (int k = 0; k < 4 && s == KN_OK; ++k)
      if (v[k] < 0 || v[k] >= n) s = kn_fail(err, KN_ERR_PARSE, "%s: %s: element %d has node %d", name, p, t, v[k]);
    if (s) break;
    /* orient positively whatever the tool's convention: swap c, d when det[b-a, c-a, d-a] < 0 */
    const double *a = m->X + 3 * v[0], *b = m->X + 3 * v[1], *c = m->X + 3 * v[2], *d = m->X + 3 * v[3];
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]},
           z[3] = {d[0] - a[0], d[1] - a[1], d[2] - a[2]}, nrm[3];
    kn_vec3_cross(u, w, nrm);
    if (kn_vec3_dot(nrm, z) < 0) {
      int tmp = v[2];
      v[2] = v[3], v[3] = tmp;
    }
  }
  fclose(f);
  m->ntet = nt;
  return s;
}

// (triangle soup) => tet mesh by tetgen, after welding and a closedness check
kn_status kn_tet_mesh_from_surface(const double* V, int nv, const int* T, int nt, const char* name,
                                   const kn_tetrahedralize_options* opt, kn_tet_mesh* m, kn_error* err) {
  memset(m, 0, sizeof *m);
  if (!name) name = "(surface)";
  kn_tetrahedralize_options o = opt ? *opt : kn_tetrahedralize_options_default();
  if (!(o.radius_edge == 0 || o.radius_edge >= 1.0) || !(o.max_volume >= 0))
    return kn_fail(err, KN_ERR_INVALID, "%s: radius_edge %g (expected 0 or >= 1) and max_volume %g (>= 0)", name,
                   o.radius_edge, o.max_volume);
  double* W;
  int *F, nw, nf;
  kn_status s = weld_and_check(V, nv, T, nt, name, &W, &nw, &F, &nf, err);
  if (s) return s;

  const char* tmp = getenv("TMPDIR");
  char dir[4096], base[4096], off[4200], logp[4200], sw[128];
  snprintf(dir, sizeof dir, "%s/knead-tetgen-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    free(W), free(F);
    return kn_fail(err, KN_ERR_IO, "%s: cannot create a temporary folder %s: %s", name, dir, strerror(errno));
  }
  snprintf(base, sizeof base, "%s/surface", dir);
  snprintf(off, sizeof off, "%s.off", base);
  snprintf(logp, sizeof logp, "%s/tetgen.log", dir);
  FILE* f = fopen(off, "w");
  if (!f) s = kn_fail(err, KN_ERR_IO, "%s: cannot write %s: %s", name, off, strerror(errno));
  if (f) {
    fprintf(f, "OFF\n%d %d 0\n", nw, nf);
    for (int i = 0; i < nw; ++i) fprintf(f, "%.17g %.17g %.17g\n", W[3 * i], W[3 * i + 1], W[3 * i + 2]);
    for (int t = 0; t < nf; ++t) fprintf(f, "3 %d %d %d\n", F[3 * t], F[3 * t + 1], F[3 * t + 2]);
    if (fclose(f) != 0) s = kn_fail(err, KN_ERR_IO, "%s: cannot write %s", name, off);
  }
  free(W), free(F);

  if (s == KN_OK) {
    int len = snprintf(sw, sizeof sw, "-pzQ");
    if (o.radius_edge > 0) len += snprintf(sw + len, sizeof sw - (size_t)len, "q%.6g", o.radius_edge);
    if (o.max_volume > 0) snprintf(sw + len, sizeof sw - (size_t)len, "a%.6g", o.max_volume);
    const char* prog = o.tetgen ? o.tetgen : KNEAD_TETGEN;
    char* argv[] = {(char*)prog, sw, off, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, logp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, prog, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      s = rc == ENOENT ? kn_fail(err, KN_ERR_UNSUPPORTED,
                                 "%s: the tetgen program '%s' was not found (install the Debian package tetgen)",
                                 name, prog)
                       : kn_fail(err, KN_ERR_IO, "%s: cannot run '%s': %s", name, prog, strerror(rc));
    } else {
      int status = 0;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char tail[600];
        log_tail(logp, tail, sizeof tail);
        s = kn_fail(err, KN_ERR_NUMERIC, "%s: '%s %s' failed (%s %d): %s", name, prog, sw,
                    WIFEXITED(status) ? "exit status" : "signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), tail[0] ? tail : "(no output)");
      }
    }
  }
  if (s == KN_OK) s = read_tetgen_output(base, name, m, err);
  remove_dir(dir);
  if (s == KN_OK) s = kn_tet_mesh_finalize(m, name, err);
  if (s != KN_OK) kn_tet_mesh_free(m);
  return s;
}

// (surface file: OBJ, STL, ... read with assimp) => tet mesh by tetgen
kn_status kn_tet_mesh_tetrahedralize(const char* path, const kn_tetrahedralize_options* opt, kn_tet_mesh* m,
                                     kn_error* err) {
  memset(m, 0, sizeof *m);
  if (kn_file_check(path, "mesh", err)) return KN_ERR_IO;
  const struct aiScene* sc = aiImportFile(path, aiProcess_Triangulate | aiProcess_PreTransformVertices);
  if (!sc) return kn_fail(err, KN_ERR_IO, "%s: cannot read: %s", path, aiGetErrorString());
  size_t nv = 0, nt = 0;
  for (unsigned i = 0; i < sc->mNumMeshes; ++i) {
    nv += sc->mMeshes[i]->mNumVertices;
    for (unsigned f = 0; f < sc->mMeshes[i]->mNumFaces; ++f) nt += sc->mMeshes[i]->mFaces[f].mNumIndices == 3;
  }
  if (nv == 0 || nt == 0 || nv > 0x7fffffff / 3 || nt > 0x7fffffff / 3) {
    aiReleaseImport(sc);
    return kn_fail(err, KN_ERR_PARSE, "%s: %zu vertices and %zu triangles (expected a closed triangle surface)", path,
                   nv, nt);
  }
  double* V = kn_calloc(3 * nv, sizeof(double));
  int* T = kn_calloc(3 * nt, sizeof(int));
  if (!V || !T) {
    aiReleaseImport(sc);
    free(V), free(T);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
  }
  size_t base = 0, k = 0;
  for (unsigned i = 0; i < sc->mNumMeshes; ++i) {
    const struct aiMesh* me = sc->mMeshes[i];
    for (unsigned v = 0; v < me->mNumVertices; ++v) {
      V[3 * (base + v)] = me->mVertices[v].x;
      V[3 * (base + v) + 1] = me->mVertices[v].y;
      V[3 * (base + v) + 2] = me->mVertices[v].z;
    }
    for (unsigned f = 0; f < me->mNumFaces; ++f) {
      if (me->mFaces[f].mNumIndices != 3) continue;
      for (int c = 0; c < 3; ++c) T[3 * k + (size_t)c] = (int)(base + me->mFaces[f].mIndices[c]);
      ++k;
    }
    base += me->mNumVertices;
  }
  aiReleaseImport(sc);
  kn_status s = kn_tet_mesh_from_surface(V, (int)nv, T, (int)nt, path, opt, m, err);
  free(V), free(T);
  return s;
}
