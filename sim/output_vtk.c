/* Frames for ParaView: one VTK XML UnstructuredGrid (.vtu, ASCII) per frame holding the rigid
 * geometry tessellated at its world pose, the FEM surfaces and the MPM particles (one VTK_VERTEX
 * cell each), with point data "velocity" and "plastic_strain" (|F_P - I|_F, 0 off MPM bodies) and
 * cell data "body_id" and "kind" (0 rigid, 1 FEM, 2 MPM); frames.pvd indexes them by time.
 * Format: "VTK File Formats", XML section (VTK User's Guide, ch. 19). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/output_internal.h"

#define VTK_VERTEX 1
#define VTK_TRIANGLE 5

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

// the three (or one) values of each point, one point per line
static void write_points(FILE* f, const kn_world* w, const kn_out_scene* g, int velocity) {
  for (int i = 0; i < g->nshape; i++) {
    const kn_out_shape* s = &g->shapes[i];
    const kn_world_tree* tr = &w->trees[s->tree];
    kn_pose X_WG;
    kn_out_shape_pose(g, i, &X_WG);
    for (int j = 0; j < s->nv; j++) {
      double x[3], V[6] = {0};
      if (!velocity) {
        kn_pose_apply(&X_WG, s->v + 3 * j, x);
        fprintf(f, "%.7g %.7g %.7g\n", x[0], x[1], x[2]);
        continue;
      }
      if (tr->robot->model->nv > 0) {
        double p_b[3];
        kn_pose_apply(&s->X_bg, s->v + 3 * j, p_b);
        kn_mb_point_velocity(tr->robot->model, g->data[s->tree], s->body, p_b, V);
      }
      fprintf(f, "%.7g %.7g %.7g\n", V[3], V[4], V[5]);
    }
  }
  for (int i = 0; i < w->nfem; i++) {
    const kn_world_fem* fe = &w->fems[i];
    const double* a = velocity ? fe->body->v : fe->body->x;
    for (int j = 0; j < fe->nsurf_vert; j++) {
      const double* p = a + 3 * fe->surf_vert[j];
      fprintf(f, "%.7g %.7g %.7g\n", p[0], p[1], p[2]);
    }
  }
  /* MPM particles (x, then v), one VTK_VERTEX cell each */
  for (int i = 0; i < w->nmpm; i++) {
    const kn_mpm_body* b = w->mpms[i].body;
    const double* a = velocity ? b->v : b->x;
    for (int p = 0; p < b->np; p++) fprintf(f, "%.7g %.7g %.7g\n", a[3 * p], a[3 * p + 1], a[3 * p + 2]);
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

kn_status kn_vtk_frame(kn_vtk_writer* vw, const kn_world* w, const kn_out_scene* g, kn_error* err) {
  if (vw->nframe == vw->cap) {
    int cap = vw->cap ? 2 * vw->cap : 256;
    double* t = realloc(vw->t, sizeof(double) * (size_t)cap);
    if (!t) return kn_fail(err, KN_ERR_NOMEM, "output.vtk: out of memory");
    vw->t = t, vw->cap = cap;
  }
  long npt = 0, ncell = 0;
  for (int i = 0; i < g->nshape; i++) npt += g->shapes[i].nv, ncell += g->shapes[i].nt;
  /* FEM surface triangles index mesh vertices; the points hold the surface vertices only */
  int** inv = kn_calloc((size_t)(w->nfem ? w->nfem : 1), sizeof(int*));
  int nomem = !inv;
  long fem_base = npt;
  long ntri = ncell;
  for (int i = 0; i < w->nfem; i++) ntri += w->fems[i].body->mesh.nsurf;
  for (int i = 0; i < w->nmpm; i++) npt += w->mpms[i].body->np, ncell += w->mpms[i].body->np;
  for (int i = 0; !nomem && i < w->nfem; i++) {
    const kn_world_fem* fe = &w->fems[i];
    npt += fe->nsurf_vert, ncell += fe->body->mesh.nsurf;
    if (!(inv[i] = kn_calloc((size_t)fe->body->mesh.nvert, sizeof(int)))) nomem = 1;
    for (int j = 0; !nomem && j < fe->nsurf_vert; j++) inv[i][fe->surf_vert[j]] = j;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/frames/frame_%05d.vtu", vw->dir, vw->nframe);
  FILE* f = nomem ? NULL : fopen(path, "w");
  if (!f) {
    for (int i = 0; inv && i < w->nfem; i++) free(inv[i]);
    free(inv);
    if (nomem) return kn_fail(err, KN_ERR_NOMEM, "output.vtk: out of memory");
    return kn_fail(err, KN_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  }

  fputs("<?xml version=\"1.0\"?>\n"
        "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n",
        f);
  fprintf(f, "<!-- knead frame %d, t = %.9g s; body_id: ", vw->nframe, w->t);
  for (int i = 0; i < g->nbody_id; i++) {
    /* "--" may not appear inside an XML comment */
    fprintf(f, "%s%d = ", i ? ", " : "", i);
    for (const char* c = g->body_names[i]; *c; c++) fputc(*c == '-' && c[1] == '-' ? '_' : *c, f);
  }
  fputs(" -->\n<UnstructuredGrid>\n", f);
  fprintf(f, "<FieldData>\n<DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" format=\"ascii\">%.9g"
          "</DataArray>\n</FieldData>\n", w->t);
  fprintf(f, "<Piece NumberOfPoints=\"%ld\" NumberOfCells=\"%ld\">\n", npt, ncell);
  fputs("<PointData Vectors=\"velocity\">\n<DataArray type=\"Float64\" Name=\"velocity\" NumberOfComponents=\"3\" "
        "format=\"ascii\">\n", f);
  write_points(f, w, g, 1);
  fputs("</DataArray>\n<DataArray type=\"Float64\" Name=\"plastic_strain\" format=\"ascii\">\n", f);
  for (long k = 0; k < npt - (ncell - ntri); k++) fputs("0\n", f);
  for (int i = 0; i < w->nmpm; i++)
    for (int p = 0; p < w->mpms[i].body->np; p++) fprintf(f, "%.7g\n", plastic_strain(w->mpms[i].body->FP + 9 * p));
  fputs("</DataArray>\n</PointData>\n<CellData Scalars=\"body_id\">\n"
        "<DataArray type=\"Int32\" Name=\"body_id\" format=\"ascii\">\n", f);
  for (int i = 0; i < g->nshape; i++)
    for (int t = 0; t < g->shapes[i].nt; t++) fprintf(f, "%d\n", g->shapes[i].body_id);
  for (int i = 0; i < w->nfem; i++)
    for (int t = 0; t < w->fems[i].body->mesh.nsurf; t++) fprintf(f, "%d\n", g->fem_first_id + i);
  for (int i = 0; i < w->nmpm; i++)
    for (int p = 0; p < w->mpms[i].body->np; p++) fprintf(f, "%d\n", g->fem_first_id + w->nfem + i);
  fputs("</DataArray>\n<DataArray type=\"Int32\" Name=\"kind\" format=\"ascii\">\n", f); /* 0 rigid, 1 FEM, 2 MPM */
  for (int i = 0; i < g->nshape; i++)
    for (int t = 0; t < g->shapes[i].nt; t++) fputs("0\n", f);
  for (int i = 0; i < w->nfem; i++)
    for (int t = 0; t < w->fems[i].body->mesh.nsurf; t++) fputs("1\n", f);
  for (int i = 0; i < w->nmpm; i++)
    for (int p = 0; p < w->mpms[i].body->np; p++) fputs("2\n", f);
  fputs("</DataArray>\n</CellData>\n<Points>\n<DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n",
        f);
  write_points(f, w, g, 0);
  fputs("</DataArray>\n</Points>\n<Cells>\n<DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n", f);
  long base = 0;
  for (int i = 0; i < g->nshape; i++) {
    const kn_out_shape* s = &g->shapes[i];
    for (int t = 0; t < s->nt; t++)
      fprintf(f, "%ld %ld %ld\n", base + s->tri[3 * t], base + s->tri[3 * t + 1], base + s->tri[3 * t + 2]);
    base += s->nv;
  }
  base = fem_base;
  for (int i = 0; i < w->nfem; i++) {
    const kn_world_fem* fe = &w->fems[i];
    const int* sf = fe->body->mesh.surf;
    for (int t = 0; t < fe->body->mesh.nsurf; t++)
      fprintf(f, "%ld %ld %ld\n", base + inv[i][sf[3 * t]], base + inv[i][sf[3 * t + 1]], base + inv[i][sf[3 * t + 2]]);
    base += fe->nsurf_vert;
  }
  for (int i = 0; i < w->nmpm; i++)
    for (int p = 0; p < w->mpms[i].body->np; p++) fprintf(f, "%ld\n", base++);
  fputs("</DataArray>\n<DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n", f);
  for (long c = 1; c <= ntri; c++) fprintf(f, "%ld\n", 3 * c);
  /* MPM particles: VTK_VERTEX cells (offsets +1 each) after the triangles */
  for (long c = 1; c <= ncell - ntri; c++) fprintf(f, "%ld\n", 3 * ntri + c);
  fputs("</DataArray>\n<DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n", f);
  for (long c = 0; c < ncell; c++) fprintf(f, "%d\n", c < ntri ? VTK_TRIANGLE : VTK_VERTEX);
  fputs("</DataArray>\n</Cells>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>\n", f);
  for (int i = 0; i < w->nfem; i++) free(inv[i]);
  free(inv);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) return kn_fail(err, KN_ERR_IO, "%s: write error", path);
  vw->t[vw->nframe++] = w->t;
  return KN_OK;
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
  free(vw->t), free(vw->dir), free(vw);
  return st;
}
