/* Frames for ParaView: one VTK XML UnstructuredGrid (.vtu) per frame holding the rigid geometry
 * tessellated at its world pose, the FEM surfaces and the MPM particles (one VTK_VERTEX cell each),
 * with point data "velocity" and "plastic_strain" (|F_P - I|_F, 0 off MPM bodies) and cell data
 * "body_id" and "kind" (0 rigid, 1 FEM, 2 MPM); frames.pvd indexes them by time.
 * Format: "VTK File Formats", XML section (VTK User's Guide, ch. 19; docs.vtk.org): the arrays are
 * binary, in the appended section as raw bytes (encoding="raw"), little endian, each compressed by
 * zlib (vtkZLibDataCompressor) in blocks of 32 KiB with a UInt64 header [number of blocks,
 * uncompressed block size, uncompressed size of a partial last block (0: none), compressed size
 * of each block]. Float64 positions and velocities are the simulation's numbers bit for bit; an
 * MPM frame takes ~20 bytes per particle instead of ~110 in ASCII. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "output/output_internal.h"

#define VTK_VERTEX 1
#define VTK_TRIANGLE 5
#define VTK_BLOCK 32768 /* uncompressed bytes per zlib block, VTK's default */

struct kn_vtk_writer {
  char* dir;                /* the run's folder */
  int nframe, cap;
  double* t;                /* time of each frame */
};

kn_status kn_vtk_begin(const char* out_dir, kn_vtk_writer** out, kn_error* err) {
  char path[4096];
  snprintf(path, sizeof path, "%s/frames", out_dir);
  if (mkdir(path, 0777) != 0 && errno != EEXIST)
    return kn_fail(err, KN_ERR_IO, "%s: cannot create folder: %s", path, strerror(errno));
  kn_vtk_writer* vw = kn_calloc(1, sizeof *vw);
  if (!vw || !(vw->dir = kn_strdup(out_dir))) {
    free(vw);
    return kn_fail(err, KN_ERR_NOMEM, "output.vtk: out of memory");
  }
  *out = vw;
  return KN_OK;
}

//---- arrays ----

/* One DataArray: its raw little-endian bytes, then compressed (header + blocks) */
typedef struct {
  const char* name;
  const char* type;         /* VTK type name */
  int ncomp;
  unsigned char* raw;
  size_t nraw;
  unsigned char* z;         /* the appended bytes: UInt64 header, then the zlib blocks */
  size_t nz;
} vtk_array;

static void put_u64(unsigned char* p, uint64_t v) {
  for (int k = 0; k < 8; k++) p[k] = (unsigned char)(v >> (8 * k));
}

// a->raw => a->z; 0 when out of memory
static int compress_array(vtk_array* a) {
  size_t nblock = (a->nraw + VTK_BLOCK - 1) / VTK_BLOCK;
  size_t head = 8 * (3 + nblock);
  a->z = malloc(head + nblock * compressBound(VTK_BLOCK) + 1);
  if (!a->z) return 0;
  put_u64(a->z, nblock);
  put_u64(a->z + 8, VTK_BLOCK);
  put_u64(a->z + 16, a->nraw % VTK_BLOCK);
  size_t at = head;
  for (size_t b = 0; b < nblock; b++) {
    size_t n = b + 1 < nblock ? VTK_BLOCK : a->nraw - b * VTK_BLOCK;
    uLongf nz = compressBound(VTK_BLOCK);
    if (compress2(a->z + at, &nz, a->raw + b * VTK_BLOCK, (uLong)n, Z_BEST_SPEED) != Z_OK) return 0;
    put_u64(a->z + 8 * (3 + b), nz);
    at += nz;
  }
  a->nz = at;
  return 1;
}

// little-endian bytes of scalars (the file's byte_order; also right on a big-endian host)
static void put_f64(unsigned char* p, double x) {
  uint64_t u;
  memcpy(&u, &x, 8);
  put_u64(p, u);
}
static void put_i32(unsigned char* p, int32_t x) {
  uint32_t u = (uint32_t)x;
  for (int k = 0; k < 4; k++) p[k] = (unsigned char)(u >> (8 * k));
}

// the three values of each point (position or velocity), rigid shapes, FEM surfaces, MPM particles
static void fill_points(unsigned char* out, const kn_world* w, const kn_out_scene* g, int velocity) {
  size_t k = 0;
  for (int i = 0; i < g->nshape; i++) {
    const kn_out_shape* s = &g->shapes[i];
    const kn_world_tree* tr = &w->trees[s->tree];
    kn_pose X_WG;
    kn_out_shape_pose(g, i, &X_WG);
    for (int j = 0; j < s->nv; j++) {
      double x[3], V[6] = {0};
      if (!velocity) {
        kn_pose_apply(&X_WG, s->v + 3 * j, x);
      } else {
        if (tr->robot->model->nv > 0) {
          double p_b[3];
          kn_pose_apply(&s->X_bg, s->v + 3 * j, p_b);
          kn_mb_point_velocity(tr->robot->model, g->data[s->tree], s->body, p_b, V);
        }
        memcpy(x, V + 3, sizeof x);
      }
      for (int a = 0; a < 3; a++, k++) put_f64(out + 8 * k, x[a]);
    }
  }
  for (int i = 0; i < w->nfem; i++) {
    const kn_world_fem* fe = &w->fems[i];
    const double* a = velocity ? fe->body->v : fe->body->x;
    for (int j = 0; j < fe->nsurf_vert; j++)
      for (int c = 0; c < 3; c++, k++) put_f64(out + 8 * k, a[3 * fe->surf_vert[j] + c]);
  }
  for (int i = 0; i < w->nmpm; i++) {
    const kn_mpm_body* b = w->mpms[i].body;
    const double* a = velocity ? b->v : b->x;
    for (int p = 0; p < 3 * b->np; p++, k++) put_f64(out + 8 * k, a[p]);
  }
}

// plastic strain of a particle: |F_P - I|_F (0 for elastic bodies and fluids, whose F_P stays I)
static double plastic_strain(const double FP[9]) {
  double t = 0;
  for (int k = 0; k < 9; k++) {
    double d = FP[k] - (k % 4 == 0 ? 1.0 : 0.0);
    t += d * d;
  }
  return sqrt(t);
}

enum { A_VELOCITY, A_PLASTIC, A_BODY_ID, A_KIND, A_POINTS, A_CONN, A_OFFSETS, A_TYPES, NARRAY };

// (world, g) => the frame's arrays, raw; 0 when out of memory
static int fill_arrays(vtk_array* A, const kn_world* w, const kn_out_scene* g, long npt, long ncell, long ntri,
                       long fem_base) {
  static const struct {
    const char *name, *type;
    int ncomp, size;
    int per_cell;
  } spec[NARRAY] = {{"velocity", "Float64", 3, 8, 0},  {"plastic_strain", "Float64", 1, 8, 0},
                    {"body_id", "Int32", 1, 4, 1},     {"kind", "Int32", 1, 4, 1},
                    {"Points", "Float64", 3, 8, 0},    {"connectivity", "Int64", 1, 8, -1},
                    {"offsets", "Int64", 1, 8, 1},     {"types", "UInt8", 1, 1, 1}};
  long nconn = 3 * ntri + (ncell - ntri);
  for (int a = 0; a < NARRAY; a++) {
    long n = spec[a].per_cell > 0 ? ncell : spec[a].per_cell < 0 ? nconn : npt;
    A[a].name = spec[a].name, A[a].type = spec[a].type, A[a].ncomp = spec[a].ncomp;
    A[a].nraw = (size_t)n * (size_t)spec[a].ncomp * (size_t)spec[a].size;
    if (!(A[a].raw = malloc(A[a].nraw + 1))) return 0;
  }
  fill_points(A[A_VELOCITY].raw, w, g, 1);
  fill_points(A[A_POINTS].raw, w, g, 0);
  long k = 0;
  for (; k < npt - (ncell - ntri); k++) put_f64(A[A_PLASTIC].raw + 8 * k, 0.0);
  for (int i = 0; i < w->nmpm; i++)
    for (int p = 0; p < w->mpms[i].body->np; p++, k++)
      put_f64(A[A_PLASTIC].raw + 8 * k, plastic_strain(w->mpms[i].body->FP + 9 * p));
  /* cells: rigid triangles, FEM surface triangles, MPM vertices */
  unsigned char *id = A[A_BODY_ID].raw, *kind = A[A_KIND].raw;
  k = 0;
  for (int i = 0; i < g->nshape; i++)
    for (int t = 0; t < g->shapes[i].nt; t++, k++) put_i32(id + 4 * k, g->shapes[i].body_id), put_i32(kind + 4 * k, 0);
  for (int i = 0; i < w->nfem; i++)
    for (int t = 0; t < w->fems[i].body->mesh.nsurf; t++, k++)
      put_i32(id + 4 * k, g->fem_first_id + i), put_i32(kind + 4 * k, 1);
  for (int i = 0; i < w->nmpm; i++)
    for (int p = 0; p < w->mpms[i].body->np; p++, k++)
      put_i32(id + 4 * k, g->fem_first_id + w->nfem + i), put_i32(kind + 4 * k, 2);
  unsigned char* conn = A[A_CONN].raw;
  long base = 0, c = 0;
  for (int i = 0; i < g->nshape; i++) {
    const kn_out_shape* s = &g->shapes[i];
    for (int j = 0; j < 3 * s->nt; j++) put_u64(conn + 8 * c++, (uint64_t)(base + s->tri[j]));
    base += s->nv;
  }
  /* FEM surface triangles index mesh vertices; the points hold the surface vertices only */
  base = fem_base;
  for (int i = 0; i < w->nfem; i++) {
    const kn_world_fem* fe = &w->fems[i];
    int* inv = kn_calloc((size_t)fe->body->mesh.nvert + 1, sizeof(int));
    if (!inv) return 0;
    for (int j = 0; j < fe->nsurf_vert; j++) inv[fe->surf_vert[j]] = j;
    const int* sf = fe->body->mesh.surf;
    for (int j = 0; j < 3 * fe->body->mesh.nsurf; j++) put_u64(conn + 8 * c++, (uint64_t)(base + inv[sf[j]]));
    base += fe->nsurf_vert;
    free(inv);
  }
  for (int i = 0; i < w->nmpm; i++)
    for (int p = 0; p < w->mpms[i].body->np; p++) put_u64(conn + 8 * c++, (uint64_t)base++);
  /* offsets: 3 per triangle, then +1 per MPM vertex cell */
  for (long j = 1; j <= ncell; j++)
    put_u64(A[A_OFFSETS].raw + 8 * (j - 1), (uint64_t)(j <= ntri ? 3 * j : 3 * ntri + (j - ntri)));
  for (long j = 0; j < ncell; j++) A[A_TYPES].raw[j] = j < ntri ? VTK_TRIANGLE : VTK_VERTEX;
  for (int a = 0; a < NARRAY; a++)
    if (!compress_array(&A[a])) return 0;
  return 1;
}

static void data_array(FILE* f, const vtk_array* a, size_t offset) {
  fprintf(f, "<DataArray type=\"%s\" Name=\"%s\"", a->type, a->name);
  if (a->ncomp > 1) fprintf(f, " NumberOfComponents=\"%d\"", a->ncomp);
  fprintf(f, " format=\"appended\" offset=\"%zu\"/>\n", offset);
}

kn_status kn_vtk_frame(kn_vtk_writer* vw, const kn_world* w, const kn_out_scene* g, kn_error* err) {
  if (vw->nframe == vw->cap) {
    int cap = vw->cap ? 2 * vw->cap : 256;
    double* t = realloc(vw->t, sizeof(double) * (size_t)cap);
    if (!t) return kn_fail(err, KN_ERR_NOMEM, "output.vtk: out of memory");
    vw->t = t, vw->cap = cap;
  }
  long npt = 0, ncell = 0;
  for (int i = 0; i < g->nshape; i++) npt += g->shapes[i].nv, ncell += g->shapes[i].nt;
  long fem_base = npt;
  for (int i = 0; i < w->nfem; i++) npt += w->fems[i].nsurf_vert, ncell += w->fems[i].body->mesh.nsurf;
  long ntri = ncell;
  for (int i = 0; i < w->nmpm; i++) npt += w->mpms[i].body->np, ncell += w->mpms[i].body->np;
  vtk_array A[NARRAY] = {0};
  int ok = fill_arrays(A, w, g, npt, ncell, ntri, fem_base);
  char path[4096];
  snprintf(path, sizeof path, "%s/frames/frame_%05d.vtu", vw->dir, vw->nframe);
  FILE* f = ok ? fopen(path, "wb") : NULL;
  if (!f) {
    for (int a = 0; a < NARRAY; a++) free(A[a].raw), free(A[a].z);
    if (!ok) return kn_fail(err, KN_ERR_NOMEM, "output.vtk: out of memory");
    return kn_fail(err, KN_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  }
  size_t off[NARRAY], at = 0;
  for (int a = 0; a < NARRAY; a++) off[a] = at, at += A[a].nz;

  fputs("<?xml version=\"1.0\"?>\n"
        "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\" "
        "compressor=\"vtkZLibDataCompressor\">\n",
        f);
  fprintf(f, "<!-- knead frame %d, t = %.9g s; body_id: ", vw->nframe, w->t);
  for (int i = 0; i < g->nbody_id; i++) {
    /* "--" may not appear inside an XML comment */
    fprintf(f, "%s%d = ", i ? ", " : "", i);
    for (const char* c = g->body_names[i]; *c; c++) fputc(*c == '-' && c[1] == '-' ? '_' : *c, f);
  }
  fputs(" -->\n<UnstructuredGrid>\n", f);
  fprintf(f, "<FieldData>\n<DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" format=\"ascii\">%.17g"
          "</DataArray>\n</FieldData>\n", w->t);
  fprintf(f, "<Piece NumberOfPoints=\"%ld\" NumberOfCells=\"%ld\">\n", npt, ncell);
  fputs("<PointData Vectors=\"velocity\" Scalars=\"plastic_strain\">\n", f);
  data_array(f, &A[A_VELOCITY], off[A_VELOCITY]);
  data_array(f, &A[A_PLASTIC], off[A_PLASTIC]);
  fputs("</PointData>\n<CellData Scalars=\"body_id\">\n", f);
  data_array(f, &A[A_BODY_ID], off[A_BODY_ID]);
  data_array(f, &A[A_KIND], off[A_KIND]); /* 0 rigid, 1 FEM, 2 MPM */
  fputs("</CellData>\n<Points>\n", f);
  data_array(f, &A[A_POINTS], off[A_POINTS]);
  fputs("</Points>\n<Cells>\n", f);
  data_array(f, &A[A_CONN], off[A_CONN]);
  data_array(f, &A[A_OFFSETS], off[A_OFFSETS]);
  data_array(f, &A[A_TYPES], off[A_TYPES]);
  fputs("</Cells>\n</Piece>\n</UnstructuredGrid>\n<AppendedData encoding=\"raw\">\n_", f);
  for (int a = 0; a < NARRAY; a++) fwrite(A[a].z, 1, A[a].nz, f);
  fputs("\n</AppendedData>\n</VTKFile>\n", f);
  for (int a = 0; a < NARRAY; a++) free(A[a].raw), free(A[a].z);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) return kn_fail(err, KN_ERR_IO, "%s: write error", path);
  vw->t[vw->nframe++] = w->t;
  return KN_OK;
}

// "frame_NNNNN.vtu" (5 or more digits) => N; -1 for any other name
static long frame_number(const char* name) {
  if (strncmp(name, "frame_", 6)) return -1;
  const char* d = name + 6;
  size_t nd = strspn(d, "0123456789");
  if (nd < 5 || nd > 9 || strcmp(d + nd, ".vtu")) return -1;
  return strtol(d, NULL, 10);
}

// frames/frame_N.vtu with N >= nframe (an earlier, longer run's) => removed; other files kept
static kn_status remove_stale_frames(const kn_vtk_writer* vw, kn_error* err) {
  char dir[4096], path[4400];
  snprintf(dir, sizeof dir, "%s/frames", vw->dir);
  DIR* d = opendir(dir);
  if (!d) return kn_fail(err, KN_ERR_IO, "%s: cannot list: %s", dir, strerror(errno));
  kn_status st = KN_OK;
  for (struct dirent* e; (e = readdir(d));) {
    long n = frame_number(e->d_name);
    if (n < vw->nframe) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (unlink(path) != 0 && errno != ENOENT && !st)
      st = kn_fail(err, KN_ERR_IO, "%s: cannot remove a stale frame: %s", path, strerror(errno));
  }
  closedir(d);
  return st;
}

kn_status kn_vtk_end(kn_vtk_writer* vw, kn_error* err) {
  if (!vw) return KN_OK;
  char path[4096];
  snprintf(path, sizeof path, "%s/frames.pvd", vw->dir);
  kn_status st = KN_OK;
  FILE* f = fopen(path, "w");
  if (!f) {
    st = kn_fail(err, KN_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  } else {
    fputs("<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
          "<Collection>\n", f);
    for (int i = 0; i < vw->nframe; i++)
      fprintf(f, "<DataSet timestep=\"%.9g\" group=\"\" part=\"0\" file=\"frames/frame_%05d.vtu\"/>\n", vw->t[i], i);
    fputs("</Collection>\n</VTKFile>\n", f);
    int bad = ferror(f);
    if ((fclose(f) != 0 || bad)) st = kn_fail(err, KN_ERR_IO, "%s: write error", path);
  }
  kn_error e2 = {0};
  kn_status rs = remove_stale_frames(vw, st ? &e2 : err);
  free(vw->t), free(vw->dir), free(vw);
  return st ? st : rs;
}
