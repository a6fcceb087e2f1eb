/* Tetrahedral meshes: generators (exact box volume and area, closed surfaces with the right Euler
 * characteristic, curved volumes converging at second order, boundary on the analytic surface,
 * worst tet quality bounded), .msh / .vtk import with
 * file:line errors, and tetgen tetrahedralization of a closed surface. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deformable/deformable.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

//---- invariants ----

static double tet_det(const kn_tet_mesh* m, int t) {
  const int* v = m->tet + 4 * t;
  const double *a = m->X + 3 * v[0], *b = m->X + 3 * v[1], *c = m->X + 3 * v[2], *d = m->X + 3 * v[3];
  double u[3], w[3], z[3], n[3];
  for (int k = 0; k < 3; ++k) u[k] = b[k] - a[k], w[k] = c[k] - a[k], z[k] = d[k] - a[k];
  kn_vec3_cross(u, w, n);
  return kn_vec3_dot(n, z);
}

static void assert_positive(const kn_tet_mesh* m) {
  for (int t = 0; t < m->ntet; ++t) cr_assert_gt(tet_det(m, t), 0, "tet %d has det %g", t, tet_det(m, t));
}

static int cmp2(const void* pa, const void* pb) {
  const int *a = pa, *b = pb;
  return a[0] != b[0] ? (a[0] > b[0]) - (a[0] < b[0]) : (a[1] > b[1]) - (a[1] < b[1]);
}

/* every directed surface edge appears once and its reverse once (closed, consistently wound);
 * returns the Euler characteristic V - E + F of the surface */
static int surface_euler(const kn_tet_mesh* m) {
  int ne = 3 * m->nsurf;
  int* e = calloc(2 * (size_t)ne, sizeof(int));
  char* on = calloc((size_t)m->nvert, 1);
  for (int f = 0; f < m->nsurf; ++f)
    for (int k = 0; k < 3; ++k) {
      e[2 * (3 * f + k)] = m->surf[3 * f + k], e[2 * (3 * f + k) + 1] = m->surf[3 * f + (k + 1) % 3];
      on[m->surf[3 * f + k]] = 1;
    }
  qsort(e, (size_t)ne, 2 * sizeof(int), cmp2);
  for (int i = 1; i < ne; ++i) cr_assert(cmp2(e + 2 * i, e + 2 * i - 2) != 0, "directed edge repeated");
  for (int i = 0; i < ne; ++i) {
    int rev[2] = {e[2 * i + 1], e[2 * i]};
    cr_assert(bsearch(rev, e, (size_t)ne, 2 * sizeof(int), cmp2), "edge %d-%d has no opposite", e[2 * i],
              e[2 * i + 1]);
  }
  int nv = 0;
  for (int i = 0; i < m->nvert; ++i) nv += on[i];
  free(e), free(on);
  return nv - ne / 2 + m->nsurf;
}

/* the divergence theorem: the outward surface encloses the tet volume, sum (a . (b x c)) / 6 */
static double surface_enclosed_volume(const kn_tet_mesh* m) {
  double v = 0, n[3];
  for (int f = 0; f < m->nsurf; ++f) {
    const double *a = m->X + 3 * m->surf[3 * f], *b = m->X + 3 * m->surf[3 * f + 1], *c = m->X + 3 * m->surf[3 * f + 2];
    kn_vec3_cross(b, c, n);
    v += kn_vec3_dot(a, n) / 6;
  }
  return v;
}

static void assert_valid_closed(const kn_tet_mesh* m, int euler) {
  assert_positive(m);
  cr_assert_eq(surface_euler(m), euler);
  double v = kn_tet_mesh_volume(m);
  cr_assert_float_eq(surface_enclosed_volume(m), v, 1e-12 * fabs(v) + 1e-15);
}

//---- generators ----

Test(mesh, box_exact) {
  kn_tet_mesh m;
  kn_error err = {0};
  cr_assert_eq(kn_tet_mesh_box(1, 2, 3, 0.5, &m, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(m.nvert, 3 * 5 * 7);      /* (2+1)(4+1)(6+1) grid nodes */
  cr_assert_eq(m.ntet, 6 * 2 * 4 * 6);   /* 6 Kuhn tets per cube */
  cr_assert_eq(m.nsurf, 4 * (2 * 4 + 4 * 6 + 2 * 6)); /* 2 triangles per boundary square */
  cr_assert_float_eq(kn_tet_mesh_volume(&m), 6.0, 1e-12);
  cr_assert_float_eq(kn_tet_mesh_surface_area(&m), 2 * (1 * 2 + 2 * 3 + 1 * 3), 1e-12);
  assert_valid_closed(&m, 2);
  /* every Kuhn tet has volume h^3/6 */
  for (int t = 0; t < m.ntet; ++t) cr_assert_float_eq(tet_det(&m, t), 0.125, 1e-14);
  /* centred at the origin */
  double c[3] = {0, 0, 0};
  for (int i = 0; i < m.nvert; ++i)
    for (int k = 0; k < 3; ++k) c[k] += m.X[3 * i + k] / m.nvert;
  for (int k = 0; k < 3; ++k) cr_assert_float_eq(c[k], 0, 1e-14);
  kn_tet_mesh_free(&m);
  cr_assert_eq(kn_tet_mesh_box(1, -2, 3, 0.5, &m, &err), KN_ERR_INVALID);
}

/* 6 sqrt 2 V / l_rms^3: 1 for the regular tet, 0 for a flat one */
static double tet_quality(const kn_tet_mesh* m, int t) {
  const int* v = m->tet + 4 * t;
  double l2 = 0;
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b)
      for (int k = 0; k < 3; ++k) l2 += pow(m->X[3 * v[a] + k] - m->X[3 * v[b] + k], 2);
  double l = sqrt(l2 / 6);
  return sqrt(2) * tet_det(m, t) / (l * l * l);
}

/* distance of a boundary vertex x from the analytic surface (kind 0 sphere r = a; 1 cylinder
 * radius a, half length b: side vertices at radius a, cap vertices at |z| = b within radius a;
 * 2 torus R = a, r = b) */
static double surface_distance(int kind, const double* x, double a, double b) {
  if (kind == 0) return fabs(kn_vec3_norm(x) - a);
  if (kind == 1)
    return fabs(fabs(x[2]) - b) == 0 ? fmax(0, hypot(x[0], x[1]) - a) : fabs(hypot(x[0], x[1]) - a);
  return fabs(hypot(hypot(x[0], x[1]) - a, x[2]) - b);
}

/* generate, check closedness, the worst tet quality (> qmin) and every boundary vertex on the
 * analytic surface (to 1e-12); returns the relative volume error */
static double check_shape(kn_status (*gen)(double, kn_tet_mesh*, kn_error*), double h, double exact, int euler,
                          int kind, double a, double b, double qmin, const char* what) {
  kn_tet_mesh m;
  kn_error err = {0};
  cr_assert_eq(gen(h, &m, &err), KN_OK, "%s", err.msg);
  assert_valid_closed(&m, euler);
  double q = 1, dmax = 0;
  for (int t = 0; t < m.ntet; ++t) q = fmin(q, tet_quality(&m, t));
  for (int f = 0; f < 3 * m.nsurf; ++f) dmax = fmax(dmax, surface_distance(kind, m.X + 3 * m.surf[f], a, b));
  double e = (kn_tet_mesh_volume(&m) - exact) / exact;
  cr_log_info("%s h=%g: %d vertices, %d tets, volume rel. error %.3e, worst quality %.3f, surface distance %.2e",
              what, h, m.nvert, m.ntet, e, q, dmax);
  cr_assert_gt(q, qmin, "%s h=%g: worst tet quality %g", what, h, q);
  cr_assert_lt(dmax, 1e-12, "%s h=%g: a boundary vertex is %g off the surface", what, h, dmax);
  kn_tet_mesh_free(&m);
  return e;
}

static kn_status sphere1(double h, kn_tet_mesh* m, kn_error* e) { return kn_tet_mesh_sphere(1, h, m, e); }
static kn_status cylinder12(double h, kn_tet_mesh* m, kn_error* e) { return kn_tet_mesh_cylinder(1, 2, h, m, e); }
static kn_status torus2h(double h, kn_tet_mesh* m, kn_error* e) { return kn_tet_mesh_torus(2, 0.5, h, m, e); }

/* the polygonal surface is inscribed, so the volume is low by the chord error, O(h^2).
 * measured (r = 1): h = 0.5, 0.25, 0.125 -> -1.52 %, -0.55 %, -0.17 %; worst quality 0.146, 0.108,
 * 0.103 (the old carved grid: -11.4 %, -1.21 %, -0.68 %, boundary vertices up to 0.8 h off) */
Test(mesh, sphere_converges) {
  double exact = 4.0 / 3 * M_PI, e[3];
  for (int i = 0; i < 3; ++i) e[i] = check_shape(sphere1, 0.5 / (1 << i), exact, 2, 0, 1, 0, 0.07, "sphere");
  for (int i = 0; i < 3; ++i) cr_assert_lt(e[i], 0, "an inscribed surface encloses less");
  cr_assert_lt(fabs(e[0]), 0.025);
  cr_assert_lt(fabs(e[1]), 0.008);
  cr_assert_lt(fabs(e[2]), 0.003);
  /* second order: each halving of h divides the error by about 4 (measured 2.8, 3.2) */
  cr_assert_gt(e[1] / e[2], 2.5);
}

/* measured (r = 1, length 2): h = 0.5, 0.25, 0.125 -> -0.73 %, -0.18 %, -0.047 %; worst quality
 * 0.127, 0.135, 0.123 (the old carved grid: -3.49 %, -1.24 %, -0.53 %) */
Test(mesh, cylinder_converges) {
  double exact = M_PI * 2, e[3];
  for (int i = 0; i < 3; ++i) e[i] = check_shape(cylinder12, 0.5 / (1 << i), exact, 2, 1, 1, 1, 0.07, "cylinder");
  cr_assert_lt(fabs(e[0]), 0.012);
  cr_assert_lt(fabs(e[1]), 0.003);
  cr_assert_lt(fabs(e[2]), 0.001);
  cr_assert_gt(e[0] / e[1], 3); /* measured 4.0 */
  cr_assert_gt(e[1] / e[2], 3); /* measured 3.8 */
  /* the caps are flat at z = +-1 exactly and the side at radius 1 */
  kn_tet_mesh m;
  kn_error err = {0};
  cr_assert_eq(kn_tet_mesh_cylinder(1, 2, 0.25, &m, &err), KN_OK, "%s", err.msg);
  double zmin = 1e9, zmax = -1e9, rmax = 0;
  for (int i = 0; i < m.nvert; ++i) {
    zmin = fmin(zmin, m.X[3 * i + 2]), zmax = fmax(zmax, m.X[3 * i + 2]);
    rmax = fmax(rmax, hypot(m.X[3 * i], m.X[3 * i + 1]));
  }
  cr_assert_eq(zmin, -1.0);
  cr_assert_eq(zmax, 1.0);
  cr_assert(fabs(rmax - 1) < 1e-12, "rmax %.17g", rmax);
  kn_tet_mesh_free(&m);
}

/* measured (R = 2, r = 0.5): h = 0.25, 0.125 -> -1.20 %, -0.29 % (0.0625: -0.074 %); worst
 * quality 0.129, 0.086; genus 1 (the old carved grid: -4.06 %, -1.55 %, worst quality 0.05) */
Test(mesh, torus_converges) {
  double exact = 2 * M_PI * M_PI * 2 * 0.25, e[2];
  for (int i = 0; i < 2; ++i) e[i] = check_shape(torus2h, 0.25 / (1 << i), exact, 0, 2, 2, 0.5, 0.05, "torus");
  cr_assert_lt(fabs(e[0]), 0.02);
  cr_assert_lt(fabs(e[1]), 0.005);
  cr_assert_gt(e[0] / e[1], 3); /* measured 4.2 */
}

static void assert_same(kn_tet_mesh* a, kn_tet_mesh* b) {
  cr_assert_eq(a->nvert, b->nvert);
  cr_assert_eq(a->ntet, b->ntet);
  cr_assert_eq(a->nsurf, b->nsurf);
  cr_assert_eq(memcmp(a->X, b->X, 3 * sizeof(double) * (size_t)a->nvert), 0);
  cr_assert_eq(memcmp(a->tet, b->tet, 4 * sizeof(int) * (size_t)a->ntet), 0);
  cr_assert_eq(memcmp(a->surf, b->surf, 3 * sizeof(int) * (size_t)a->nsurf), 0);
  kn_tet_mesh_free(a), kn_tet_mesh_free(b);
}

Test(mesh, generators_are_deterministic) {
  kn_tet_mesh a, b;
  kn_error err = {0};
  cr_assert_eq(kn_tet_mesh_sphere(0.3, 0.07, &a, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_tet_mesh_sphere(0.3, 0.07, &b, &err), KN_OK, "%s", err.msg);
  assert_same(&a, &b);
  cr_assert_eq(kn_tet_mesh_cylinder(0.2, 0.5, 0.06, &a, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_tet_mesh_cylinder(0.2, 0.5, 0.06, &b, &err), KN_OK, "%s", err.msg);
  assert_same(&a, &b);
  cr_assert_eq(kn_tet_mesh_torus(0.5, 0.2, 0.1, &a, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_tet_mesh_torus(0.5, 0.2, 0.1, &b, &err), KN_OK, "%s", err.msg);
  assert_same(&a, &b);
  cr_assert_eq(kn_tet_mesh_sphere(1, 0, &a, &err), KN_ERR_INVALID);
  cr_assert_eq(kn_tet_mesh_torus(1, 2, 0.1, &a, &err), KN_ERR_INVALID);
  cr_assert_eq(kn_tet_mesh_cylinder(1, 1, 1e-4, &a, &err), KN_ERR_INVALID, "a too fine mesh is refused");
}

//---- finalize ----

Test(mesh, finalize_rejects_bad_tets) {
  double X[15] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 2, 2, 2};
  int tet[4] = {0, 2, 1, 3}; /* inverted */
  kn_tet_mesh m = {4, 1, 0, X, tet, NULL};
  kn_error err = {0};
  cr_assert_eq(kn_tet_mesh_finalize(&m, "inv", &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "'inv'") && strstr(err.msg, "tet 0") && strstr(err.msg, "inverted"), "%s", err.msg);
  int flat[4] = {0, 1, 2, 2};
  m.tet = flat;
  cr_assert_eq(kn_tet_mesh_finalize(&m, "rep", &err), KN_ERR_INVALID);
  int big[4] = {0, 1, 2, 7};
  m.tet = big;
  cr_assert_eq(kn_tet_mesh_finalize(&m, "idx", &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "index 7"), "%s", err.msg);
  double Xf[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0.5, 0.5, 1e-14}; /* nearly coplanar */
  int ok[4] = {0, 1, 2, 3};
  m.X = Xf, m.tet = ok;
  cr_assert_eq(kn_tet_mesh_finalize(&m, "flat", &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "degenerate"), "%s", err.msg);
  m.X = X, m.nvert = 5; /* vertex 4 unused */
  cr_assert_eq(kn_tet_mesh_finalize(&m, "unused", &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "vertex 4"), "%s", err.msg);
  m.nvert = 4;
  cr_assert_eq(kn_tet_mesh_finalize(&m, "good", &err), KN_OK, "%s", err.msg);
  cr_assert_eq(m.nsurf, 4);
  cr_assert_float_eq(kn_tet_mesh_volume(&m), 1.0 / 6, 1e-15);
  cr_assert_float_eq(kn_tet_mesh_surface_area(&m), 1.5 + sqrt(3) / 2, 1e-14);
  free(m.surf);
}

//---- import ----

static char g_dir[256];

static void make_dir(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/knead-test-mesh-XXXXXX");
  cr_assert(mkdtemp(g_dir));
}

static void remove_file_and_dir(const char** names, int n) {
  char p[512];
  for (int i = 0; i < n; ++i) snprintf(p, sizeof p, "%s/%s", g_dir, names[i]), unlink(p);
  rmdir(g_dir);
}

static const char* write_file(const char* name, const char* text) {
  static char p[512];
  snprintf(p, sizeof p, "%s/%s", g_dir, name);
  FILE* f = fopen(p, "w");
  cr_assert(f);
  fputs(text, f);
  fclose(f);
  return p;
}

/* two tets sharing face (1 2 3): volumes 1/6 and 1/3; plus a triangle element to ignore */
static const char* k_msh22 =
    "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"                                   /* lines 1-3 */
    "$Nodes\n5\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 1 1 1\n$EndNodes\n"    /* lines 4-11 */
    "$Elements\n3\n1 2 2 0 1 2 3 4\n2 4 2 0 1 1 2 3 4\n3 4 2 0 1 %s\n$EndElements\n"; /* 12-17 */

static void expect_two_tets(const kn_tet_mesh* m) {
  cr_assert_eq(m->nvert, 5);
  cr_assert_eq(m->ntet, 2);
  cr_assert_eq(m->nsurf, 6);
  cr_assert_float_eq(kn_tet_mesh_volume(m), 0.5, 1e-15);
  assert_valid_closed(m, 2);
}

static void expect_error(kn_status got, kn_status want, const kn_error* err, const char* path, int line,
                         const char* word) {
  char where[600];
  snprintf(where, sizeof where, "%s:%d:", path, line);
  cr_assert_eq(got, want, "%s", err->msg);
  cr_assert(strstr(err->msg, where), "expected '%s' in: %s", where, err->msg);
  cr_assert(strstr(err->msg, word), "expected '%s' in: %s", word, err->msg);
}

Test(mesh, msh_import) {
  make_dir();
  char text[1024];
  kn_tet_mesh m;
  kn_error err = {0};
  snprintf(text, sizeof text, k_msh22, "2 3 4 5");
  const char* p = write_file("good.msh", text);
  cr_assert_eq(kn_tet_mesh_read_msh(p, &m, &err), KN_OK, "%s", err.msg);
  expect_two_tets(&m);
  kn_tet_mesh_free(&m);

  snprintf(text, sizeof text, k_msh22, "2 3 4 9");
  p = write_file("missing.msh", text);
  expect_error(kn_tet_mesh_read_msh(p, &m, &err), KN_ERR_INVALID, &err, p, 16, "node 9");

  snprintf(text, sizeof text, k_msh22, "2 4 3 5");
  p = write_file("inverted.msh", text);
  expect_error(kn_tet_mesh_read_msh(p, &m, &err), KN_ERR_INVALID, &err, p, 16, "inverted");

  snprintf(text, sizeof text, k_msh22, "2 3 x 5");
  p = write_file("badtoken.msh", text);
  expect_error(kn_tet_mesh_read_msh(p, &m, &err), KN_ERR_PARSE, &err, p, 16, "'x' is not an integer");

  snprintf(text, sizeof text, k_msh22, "2 3 4 5");
  text[strstr(text, "3 4 2 0 1") - text + 6] = 0; /* cut inside the last element */
  p = write_file("truncated.msh", text);
  expect_error(kn_tet_mesh_read_msh(p, &m, &err), KN_ERR_PARSE, &err, p, 16, "unexpected end of file");
  const char* names[] = {"good.msh", "missing.msh", "inverted.msh", "badtoken.msh", "truncated.msh"};
  remove_file_and_dir(names, 5);
}

Test(mesh, msh41_checked_in_example) {
  kn_tet_mesh m;
  kn_error err = {0};
  /* tests/deformable/data/two_tets.msh: 4.1 ASCII with $Entities, a point node no tet uses
   * (dropped) and a triangle element (ignored) */
  cr_assert_eq(kn_tet_mesh_read_msh(KNEAD_SOURCE_DIR "/tests/deformable/data/two_tets.msh", &m, &err), KN_OK, "%s",
               err.msg);
  expect_two_tets(&m);
  for (int i = 0; i < 3 * m.nvert; ++i) cr_assert_lt(m.X[i], 2, "the unused node (5,5,5) was kept");
  kn_tet_mesh_free(&m);
  cr_assert_eq(kn_tet_mesh_read_msh(KNEAD_SOURCE_DIR "/tests/deformable/data/none.msh", &m, &err), KN_ERR_IO);
  cr_assert(strstr(err.msg, "none.msh"), "%s", err.msg);
}

static const char* k_vtk =
    "# vtk DataFile Version 3.0\ntwo tets\nASCII\nDATASET UNSTRUCTURED_GRID\n" /* lines 1-4 */
    "POINTS 5 double\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 1 1\n"                    /* lines 5-10 */
    "CELLS 3 13\n4 0 1 2 3\n4 %s\n3 1 2 3\n"                                    /* lines 11-14 */
    "CELL_TYPES 3\n10\n10\n5\n";                                               /* lines 15-18 */

Test(mesh, vtk_import) {
  make_dir();
  char text[1024];
  kn_tet_mesh m;
  kn_error err = {0};
  snprintf(text, sizeof text, k_vtk, "1 2 3 4");
  const char* p = write_file("good.vtk", text);
  cr_assert_eq(kn_tet_mesh_read_vtk(p, &m, &err), KN_OK, "%s", err.msg);
  expect_two_tets(&m);
  kn_tet_mesh_free(&m);

  /* the VTK 5.1 layout of the same grid */
  p = write_file("v51.vtk",
                 "# vtk DataFile Version 5.1\ntwo tets\nASCII\nDATASET UNSTRUCTURED_GRID\n"
                 "POINTS 5 float\n0 0 0 1 0 0 0 1 0\n0 0 1 1 1 1\n"
                 "CELLS 4 11\nOFFSETS vtktypeint64\n0 4 8 11\nCONNECTIVITY vtktypeint64\n0 1 2 3 1 2 3 4 1 2 3\n"
                 "CELL_TYPES 3\n10 10 5\nCELL_DATA 3\n");
  cr_assert_eq(kn_tet_mesh_read_vtk(p, &m, &err), KN_OK, "%s", err.msg);
  expect_two_tets(&m);
  kn_tet_mesh_free(&m);

  snprintf(text, sizeof text, k_vtk, "1 2 3 7");
  p = write_file("badindex.vtk", text);
  expect_error(kn_tet_mesh_read_vtk(p, &m, &err), KN_ERR_INVALID, &err, p, 13, "node 7");

  snprintf(text, sizeof text, k_vtk, "2 1 3 4");
  p = write_file("inverted.vtk", text);
  expect_error(kn_tet_mesh_read_vtk(p, &m, &err), KN_ERR_INVALID, &err, p, 13, "inverted");

  snprintf(text, sizeof text, k_vtk, "1 2 3 4");
  text[strstr(text, "0 0 1\n") - text + 4] = 0; /* cut inside the points */
  p = write_file("truncated.vtk", text);
  expect_error(kn_tet_mesh_read_vtk(p, &m, &err), KN_ERR_PARSE, &err, p, 9, "unexpected end of file");
  const char* names[] = {"good.vtk", "v51.vtk", "badindex.vtk", "inverted.vtk", "truncated.vtk"};
  remove_file_and_dir(names, 5);
}

//---- tetrahedralization ----

static const char* k_cube_obj =
    "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
    "f 1 4 3\nf 1 3 2\n" /* bottom, normal -z */
    "f 5 6 7\nf 5 7 8\n" /* top */
    "f 1 2 6\nf 1 6 5\n" /* y = 0 */
    "f 4 8 7\nf 4 7 3\n" /* y = 1 */
    "f 1 5 8\nf 1 8 4\n" /* x = 0 */
    "f 2 3 7\nf 2 7 6\n" /* x = 1 */;

Test(mesh, tetrahedralize_cube) {
  make_dir();
  const char* p = write_file("cube.obj", k_cube_obj);
  kn_tet_mesh m;
  kn_error err = {0};
  kn_tetrahedralize_options o = kn_tetrahedralize_options_default();
  o.max_volume = 0.01;
  cr_assert_eq(kn_tet_mesh_tetrahedralize(p, &o, &m, &err), KN_OK, "%s", err.msg);
  cr_log_info("tetgen cube: %d vertices, %d tets, volume %.17g", m.nvert, m.ntet, kn_tet_mesh_volume(&m));
  cr_assert_float_eq(kn_tet_mesh_volume(&m), 1.0, 1e-9);
  cr_assert_float_eq(kn_tet_mesh_surface_area(&m), 6.0, 1e-9);
  cr_assert_geq(m.ntet, 100); /* a volume bound of 0.01 needs at least 100 tets */
  for (int t = 0; t < m.ntet; ++t) cr_assert_leq(tet_det(&m, t) / 6, 0.01 * (1 + 1e-9));
  assert_valid_closed(&m, 2);
  kn_tet_mesh_free(&m);

  /* a missing program is a clear error */
  o.tetgen = "/nonexistent/tetgen";
  cr_assert_eq(kn_tet_mesh_tetrahedralize(p, &o, &m, &err), KN_ERR_UNSUPPORTED);
  cr_assert(strstr(err.msg, "tetgen") && strstr(err.msg, "not found"), "%s", err.msg);

  /* drop the last triangle: the edges of face (2 7 6) are then open */
  char open[1024];
  snprintf(open, sizeof open, "%s", k_cube_obj);
  *strstr(open, "f 2 7 6\n") = 0;
  p = write_file("open.obj", open);
  o.tetgen = "/nonexistent/tetgen"; /* the check runs before the tool */
  cr_assert_eq(kn_tet_mesh_tetrahedralize(p, &o, &m, &err), KN_ERR_INVALID, "%s", err.msg);
  cr_assert(strstr(err.msg, "open.obj") && strstr(err.msg, "not closed") && strstr(err.msg, "edge (1, ") && strstr(err.msg, "in 1 triangle"),
            "%s", err.msg);
  const char* names[] = {"cube.obj", "open.obj"};
  remove_file_and_dir(names, 2);
}
