/* output.vtk: ParaView frames. A floor, a resting box and a sphere falling freely are run for
 * 0.3 s at 10 frames per second; the test parses the .pvd and decodes the binary .vtu files
 * (tests/support/vtu.h) and checks counts, the box's 8 corners, the free fall velocity and the
 * tessellation of every primitive. A second, shorter run into the same folder leaves no frame of
 * the first behind, and no other file is touched. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <criterion/criterion.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/output_internal.h"
#include "sim/sim.h"
#include "../support/files.h"
#include "../support/vtu.h"

/* XML well-formedness at the tag level: every element closed in order, comments and the
 * declaration skipped. Returns the number of elements, -1 when malformed. */
static int xml_check(const char* s) {
  char stack[64][64];
  int depth = 0, nel = 0;
  for (const char* p = strchr(s, '<'); p; p = strchr(p, '<')) {
    if (!strncmp(p, "<?", 2)) {
      p = strstr(p, "?>");
    } else if (!strncmp(p, "<!--", 4)) {
      p = strstr(p, "-->");
    } else {
      const char* e = strchr(p, '>');
      if (!e) return -1;
      int closing = p[1] == '/', selfc = e[-1] == '/';
      const char* n = p + 1 + closing;
      size_t len = strcspn(n, " \t\n/>");
      if (len == 0 || len >= 64) return -1;
      if (closing) {
        if (depth == 0 || strncmp(stack[depth - 1], n, len) || stack[depth - 1][len]) return -1;
        depth--;
      } else {
        nel++;
        if (!selfc) {
          if (depth == 64) return -1;
          memcpy(stack[depth], n, len), stack[depth][len] = 0, depth++;
        }
      }
      p = e;
    }
    if (!p) return -1;
  }
  return depth == 0 ? nel : -1;
}

static long attr_long(const char* s, const char* name) {
  const char* p = strstr(s, name);
  return p ? strtol(p + strlen(name), NULL, 10) : -1;
}

static const char* scene_yaml =
    "time_step: 0.01\nduration: 0.3\n"
    "objects:\n"
    "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
    "  - {name: box, shape: {box: [0.2, 0.1, 0.05]}, mass: 1, pose: {xyz: [0.5, 0, 0.025]}}\n"
    "  - {name: ball, shape: {sphere: 0.05}, mass: 1, pose: {xyz: [-0.5, 0, 1.0]}}\n"
    "output: {vtk: true, frame_rate: 10}\n";

Test(output_vtk, frames_and_index) {
  kn_error err = {0};
  kn_scene* s = NULL;
  cr_assert_eq(kn_scene_load_string(scene_yaml, strlen(scene_yaml), "vtk.yaml", &s, &err), KN_OK, "%s", err.msg);
  kn_world* w = NULL;
  cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
  char dir[] = "/tmp/knead_vtk_XXXXXX";
  cr_assert(mkdtemp(dir));
  cr_assert_eq(kn_world_run(w, dir, NULL, NULL, NULL, &err), KN_OK, "%s", err.msg);

  /* 0.3 s at 10 fps: frames at t = 0, 0.1, 0.2, 0.3 */
  char path[512];
  snprintf(path, sizeof path, "%s/frames.pvd", dir);
  char* pvd = slurp(path);
  cr_assert(pvd);
  cr_expect_gt(xml_check(pvd), 0, "frames.pvd is not well-formed");
  int nset = 0;
  for (const char* p = strstr(pvd, "<DataSet"); p; p = strstr(p + 1, "<DataSet")) nset++;
  cr_expect_eq(nset, 4, "frames.pvd: %d entries, expected 4", nset);
  for (int i = 0; i < 6; i++) {
    snprintf(path, sizeof path, "%s/frames/frame_%05d.vtu", dir, i);
    cr_expect_eq(access(path, R_OK) == 0, i < nset, "%s: exists %d, pvd entries %d", path, access(path, R_OK) == 0, nset);
  }
  cr_expect(strstr(pvd, "timestep=\"0.1\"") && strstr(pvd, "file=\"frames/frame_00003.vtu\""));
  free(pvd);

  /* points: floor square 4, box 8, sphere 2 poles + 11 rings x 24 = 266; cells 2 + 12 + 528 */
  snprintf(path, sizeof path, "%s/frames/frame_00001.vtu", dir);
  vtu_file vf;
  cr_assert(vtu_open(path, &vf), "%s: missing or not a binary .vtu", path);
  /* the XML around the binary appended section is well-formed */
  size_t nx = strlen(vf.xml);
  char* xml = malloc(nx + 64);
  snprintf(xml, nx + 64, "%s</AppendedData></VTKFile>", vf.xml);
  cr_expect_gt(xml_check(xml), 0, "frame 1 is not well-formed XML");
  free(xml);
  const char* tail = "\n</AppendedData>\n</VTKFile>\n";
  cr_expect(vf.len > strlen(tail) && !strcmp((const char*)vf.bytes + vf.len - strlen(tail), tail));
  cr_expect(strstr(vf.xml, "header_type=\"UInt64\"") && strstr(vf.xml, "compressor=\"vtkZLibDataCompressor\""));
  cr_expect_eq(attr_long(vf.xml, "NumberOfPoints=\""), 4 + 8 + 266);
  cr_expect_eq(attr_long(vf.xml, "NumberOfCells=\""), 2 + 12 + 2 * 24 + 10 * 2 * 24);
  /* the box's corners: (0.5, 0, 0.025) +- (0.1, 0.05, 0.025), resting: x, y to 1 um; z within the
   * compliant contact's sink (mg / k over the four corners ~ 0.8 mm, measured 0.77 mm) */
  double x[278][3];
  cr_assert_eq(vtu_array(&vf, "Points", &x[0][0], 3 * 278), 3 * 278);
  int seen = 0;
  for (int c = 0; c < 8; c++) {
    double want[3] = {0.5 + (c & 1 ? 0.1 : -0.1), c & 2 ? 0.05 : -0.05, 0.025 + (c & 4 ? 0.025 : -0.025)};
    for (int i = 4; i < 12; i++)
      if (fabs(x[i][0] - want[0]) < 1e-6 && fabs(x[i][1] - want[1]) < 1e-6 && x[i][2] <= want[2] &&
          x[i][2] > want[2] - 1.5e-3) {
        seen |= 1 << c;
        break;
      }
  }
  cr_expect_eq(seen, 0xff, "box corners found: mask %#x", seen);
  /* the ball falls freely: implicit Euler v_n = -g n dt, -0.981 m/s at t = 0.1 (Float64, to rounding) */
  double v[278][3];
  cr_assert_eq(vtu_array(&vf, "velocity", &v[0][0], 3 * 278), 3 * 278);
  double vz_min = 1e9, vz_max = -1e9;
  for (int i = 12; i < 278; i++) vz_min = fmin(vz_min, v[i][2]), vz_max = fmax(vz_max, v[i][2]);
  cr_expect(fabs(vz_min + 0.981) < 1e-12 && fabs(vz_max + 0.981) < 1e-12, "ball vz in [%.17g, %.17g], expected -0.981",
            vz_min, vz_max);
  /* body ids: floor, box, ball are bodies 0, 1, 2; the last cell is the ball's; types and offsets */
  double ids[542], types[542], offsets[542], conn[3 * 542];
  cr_assert_eq(vtu_array(&vf, "body_id", ids, 542), 542);
  cr_expect(ids[0] == 0 && ids[2] == 1 && ids[13] == 1 && ids[14] == 2 && ids[541] == 2);
  cr_assert_eq(vtu_array(&vf, "types", types, 542), 542);
  cr_assert_eq(vtu_array(&vf, "offsets", offsets, 542), 542);
  cr_assert_eq(vtu_array(&vf, "connectivity", conn, 3 * 542), 3 * 542);
  for (int c = 0; c < 542; c++) cr_expect(types[c] == 5 && offsets[c] == 3 * (c + 1), "cell %d", c);
  /* the ball's triangles use the ball's points only */
  for (int k = 3 * 14; k < 3 * 542; k++) cr_expect(conn[k] >= 12 && conn[k] < 278, "connectivity[%d] = %g", k, conn[k]);
  /* the ball's centre at t = 0.1 is at z = 1 - g dt^2 n (n + 1) / 2 (n = 10): its 266 points average there */
  double zc = 0;
  for (int i = 12; i < 278; i++) zc += x[i][2];
  zc /= 266;
  cr_expect(fabs(zc - (1.0 - 9.81 * 0.01 * 0.01 * 55)) < 1e-9, "ball centre z %.12g", zc);
  vtu_close(&vf);
  nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  kn_world_free(w);
  kn_scene_free(s);
}

// signed volume of a closed triangle mesh (divergence theorem), positive when facing outwards
static double volume(int nt, const int* tri, const double* v) {
  double V = 0;
  for (int t = 0; t < nt; t++) {
    const double *a = v + 3 * tri[3 * t], *b = v + 3 * tri[3 * t + 1], *c = v + 3 * tri[3 * t + 2];
    V += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])) / 6;
  }
  return V;
}

Test(output_vtk, tessellation_volumes) {
  const double pi = 3.14159265358979323846, r = 0.1, L = 0.3;
  /* inscribed polyhedra: below the exact volume, above it minus the chord error (~3% at 24 x 12) */
  struct {
    kn_shape s;
    double exact, lo;
  } cases[] = {
      {{KN_SHAPE_BOX, {0.2, 0.3, 0.4}, NULL, NULL, {1, 1, 1}}, 0.024, 1.0},
      {{KN_SHAPE_SPHERE, {r, 0, 0}, NULL, NULL, {1, 1, 1}}, 4.0 / 3 * pi * r * r * r, 0.95},
      {{KN_SHAPE_CYLINDER, {r, L, 0}, NULL, NULL, {1, 1, 1}}, pi * r * r * L, 0.985},
      {{KN_SHAPE_CAPSULE, {r, L, 0}, NULL, NULL, {1, 1, 1}}, pi * r * r * L + 4.0 / 3 * pi * r * r * r, 0.96},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int nv, nt, *tri;
    double* v;
    kn_error err = {0};
    cr_assert_eq(kn_out_tessellate(&cases[i].s, &nv, &v, &nt, &tri, &err), KN_OK, "%s", err.msg);
    double V = volume(nt, tri, v);
    cr_expect(V <= cases[i].exact * (1 + 1e-12) && V >= cases[i].lo * cases[i].exact, "%s: volume %g, exact %g",
              kn_shape_type_name(cases[i].s.type), V, cases[i].exact);
    free(v), free(tri);
  }
  /* closed: every directed edge has its reverse exactly once (the cylinder's caps have their own
   * rim vertices, for sharp edges, so only the others are closed topologically) */
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    if (cases[i].s.type == KN_SHAPE_CYLINDER) continue;
    int nv, nt, *tri;
    double* v;
    kn_error err = {0};
    cr_assert_eq(kn_out_tessellate(&cases[i].s, &nv, &v, &nt, &tri, &err), KN_OK, "%s", err.msg);
    int open = 0;
    for (int t = 0; t < nt; t++)
      for (int k = 0; k < 3; k++) {
        int a = tri[3 * t + k], b = tri[3 * t + (k + 1) % 3], found = 0;
        for (int u = 0; u < nt; u++)
          for (int m = 0; m < 3; m++) found += tri[3 * u + m] == b && tri[3 * u + (m + 1) % 3] == a;
        open += found != 1;
      }
    cr_expect_eq(open, 0, "%s: %d edges not shared by exactly two triangles", kn_shape_type_name(cases[i].s.type), open);
    free(v), free(tri);
  }
}

// (duration) => the floor/box/ball scene run into dir
static void run_into(const char* dir, const char* duration) {
  char yaml[1024];
  snprintf(yaml, sizeof yaml, "%s", scene_yaml);
  char* d = strstr(yaml, "duration: 0.3");
  cr_assert_not_null(d);
  memcpy(d + 10, duration, 3);
  kn_error err = {0};
  kn_scene* s = NULL;
  kn_world* w = NULL;
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), "vtk.yaml", &s, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_run(w, dir, NULL, NULL, NULL, &err), KN_OK, "%s", err.msg);
  kn_world_free(w);
  kn_scene_free(s);
}

Test(output_vtk, rerun_removes_stale_frames) {
  char dir[] = "/tmp/knead_vtk_rerun_XXXXXX";
  cr_assert(mkdtemp(dir));
  char path[512];
  run_into(dir, "0.3"); /* frames 0..3 */
  /* files of the user's next to the frames: kept */
  const char* keep[] = {"notes.txt", "frame_00007.vtu.bak", "frame_7.vtu", "myframe_00009.vtu"};
  for (int i = 0; i < 4; i++) {
    snprintf(path, sizeof path, "%s/frames/%s", dir, keep[i]);
    FILE* f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("mine\n", f);
    fclose(f);
  }
  snprintf(path, sizeof path, "%s/frames/frame_00003.vtu", dir);
  cr_assert_eq(access(path, R_OK), 0);
  run_into(dir, "0.1"); /* frames 0, 1 */
  for (int i = 0; i < 6; i++) {
    snprintf(path, sizeof path, "%s/frames/frame_%05d.vtu", dir, i);
    cr_expect_eq(access(path, R_OK) == 0, i < 2, "%s: exists %d after the 0.1 s run", path, access(path, R_OK) == 0);
  }
  for (int i = 0; i < 4; i++) {
    snprintf(path, sizeof path, "%s/frames/%s", dir, keep[i]);
    cr_expect_eq(access(path, R_OK), 0, "%s was removed", path);
  }
  /* frame 1 is the new run's (t = 0.1), and the index lists exactly two frames */
  snprintf(path, sizeof path, "%s/frames/frame_00001.vtu", dir);
  vtu_file vf;
  cr_assert(vtu_open(path, &vf));
  cr_expect(strstr(vf.xml, "<!-- knead frame 1, t = 0.1 s") != NULL);
  vtu_close(&vf);
  snprintf(path, sizeof path, "%s/frames.pvd", dir);
  char* pvd = slurp(path);
  cr_assert_not_null(pvd);
  int nset = 0;
  for (const char* p = strstr(pvd, "<DataSet"); p; p = strstr(p + 1, "<DataSet")) nset++;
  cr_expect_eq(nset, 2);
  free(pvd);
  nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
