/* Outputs of MPM bodies through kn_world_run: a 0.1 m dough cube (h 0.05, 8 particles per cell:
 * 64 particles, 1 kg) falls freely (no colliders) for 0.1 s at dt 0.01. A uniform velocity field
 * is transferred exactly by APIC and the corotated stress vanishes at F_E = I, so every particle
 * has v = -g t_n and the centroid z_n = z_0 - g dt^2 n (n + 1) / 2 (symplectic Euler) to rounding.
 * Particle 0 starts with a plastic F_P = diag(1.1, 1/1.1, 1) (an isochoric stretch; F_E = I stays
 * inside the yield surface, so F_P never changes): its plastic strain |F_P - I|_F must appear in the
 * VTU frames and the replay, all other particles 0.
 * Checks: trajectory.csv has blob/cx,cy,cz columns equal to the mass-weighted centroid;
 * summary.json's "mpm" block (name, particles, mass, centroid); frames/frame_*.vtu hold 64 points
 * and 64 vertex cells with velocity = -g t and plastic_strain, decoded from the binary (zlib) arrays,
 * and the last frame's positions and velocities equal the particles' bit for bit; replay.html (when three.js is
 * installed) carries the particles, their colour quantity and maximum, and the subsampling caps. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <criterion/criterion.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output_internal.h"
#include "sim/sim.h"
#include "../support/files.h"
#include "../support/vtu.h"

#define G 9.81
#define DT 0.01
#define NSTEP 10

static const double plastic0 = 0.13514607952107735; /* sqrt(0.1^2 + (1/1.1 - 1)^2) */

typedef struct {
  kn_scene* scene;
  kn_world* world;
  char dir[128];
} run;

// (box side, spacing, html on) => a world run to completion in a fresh folder
static run run_blob(double side, double h, int html, double duration) {
  run r = {0};
  char yaml[2048];
  snprintf(yaml, sizeof yaml,
           "time_step: %g\nduration: %g\ngravity: [0, 0, %g]\n"
           "output: {trajectory_rate: 0, vtk: true, html: %s, frame_rate: 50}\n"
           "deformables:\n  - name: blob\n    model: mpm\n    shape: {box: [%g, %g, %g]}\n    resolution: %g\n"
           "    particles_per_cell: 8\n"
           "    material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.3, density: 1e3, "
           "yield_stress: 1e3}\n"
           "    pose: {xyz: [0.01, -0.02, 1]}\n",
           DT, duration, -G, html ? "true" : "false", side, side, side, h);
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), "inline.yaml", &r.scene, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(r.scene, &r.world, &err), KN_OK, "%s", err.msg);
  kn_mpm_body* b = r.world->mpms[0].body;
  b->FP[0] = 1.1, b->FP[4] = 1 / 1.1;
  snprintf(r.dir, sizeof r.dir, "/tmp/knead_mpm_out_XXXXXX");
  cr_assert_not_null(mkdtemp(r.dir));
  kn_run_summary sum;
  cr_assert_eq(kn_world_run(r.world, r.dir, NULL, NULL, &sum, &err), KN_OK, "%s", err.msg);
  return r;
}

static void run_free(run* r) {
  nftw(r->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  kn_world_free(r->world);
  kn_scene_free(r->scene);
}

// analytic centroid height after n steps
static double z_n(int n) { return 1.0 - G * DT * DT * n * (n + 1) / 2.0; }

Test(mpm_output, trajectory_and_summary, .timeout = 60) {
  run r = run_blob(0.1, 0.05, 0, NSTEP * DT);
  const kn_mpm_body* b = r.world->mpms[0].body;
  cr_assert_eq(b->np, 64);
  /* the mass-weighted centroid, computed here */
  double c[3] = {0, 0, 0}, m = 0;
  for (int p = 0; p < b->np; p++) {
    for (int k = 0; k < 3; k++) c[k] += b->mass[p] * b->x[3 * p + k];
    m += b->mass[p];
  }
  for (int k = 0; k < 3; k++) c[k] /= m;
  cr_expect_float_eq(m, 1.0, 1e-12, "mass %.15g (rho a^3 = 1 kg)", m);
  cr_expect_float_eq(c[2], z_n(NSTEP), 1e-9, "final cz %.12g vs %.12g", c[2], z_n(NSTEP));

  char path[256];
  snprintf(path, sizeof path, "%s/trajectory.csv", r.dir);
  char* csv = slurp(path);
  cr_assert_not_null(csv);
  char* nl = strchr(csv, '\n');
  cr_assert_not_null(nl);
  *nl = 0;
  cr_expect_str_eq(csv, "t,blob/cx,blob/cy,blob/cz", "header: %s", csv);
  /* every row: t, then the analytic centroid (x, y never move) */
  int rows = 0;
  for (char* line = nl + 1; *line; rows++) {
    double t, x, y, z;
    cr_assert_eq(sscanf(line, "%lf,%lf,%lf,%lf", &t, &x, &y, &z), 4, "row %d: %s", rows, line);
    int n = (int)lround(t / DT);
    cr_expect_float_eq(x, 0.01, 1e-9, "row %d cx %.12g", rows, x);
    cr_expect_float_eq(y, -0.02, 1e-9, "row %d cy %.12g", rows, y);
    cr_expect_float_eq(z, z_n(n), 1e-9, "row %d (t %g) cz %.12g vs %.12g", rows, t, z, z_n(n));
    if (n == NSTEP) {
      const double row[3] = {x, y, z};
      for (int k = 0; k < 3; k++) cr_expect_float_eq(row[k], c[k], 1e-9, "last row vs centroid");
    }
    char* e = strchr(line, '\n');
    line = e ? e + 1 : line + strlen(line);
  }
  cr_expect_eq(rows, NSTEP + 1, "rows %d", rows);
  free(csv);

  snprintf(path, sizeof path, "%s/summary.json", r.dir);
  char* js = slurp(path);
  cr_assert_not_null(js);
  const char* mp = strstr(js, "\"mpm\": [{\"name\": \"blob\"");
  cr_assert_not_null(mp, "no mpm block in %s", js);
  int np;
  double mass, cx, cy, cz;
  cr_assert_eq(sscanf(mp, "\"mpm\": [{\"name\": \"blob\", \"particles\": %d, \"mass\": %lf, \"centroid\": [%lf, %lf, %lf]",
                      &np, &mass, &cx, &cy, &cz),
               5, "%.200s", mp);
  cr_expect_eq(np, 64);
  cr_expect_float_eq(mass, 1.0, 1e-9);
  cr_expect_float_eq(cx, c[0], 1e-9);
  cr_expect_float_eq(cy, c[1], 1e-9);
  cr_expect_float_eq(cz, c[2], 1e-9);
  free(js);
  run_free(&r);
}

Test(mpm_output, vtu_frames, .timeout = 60) {
  run r = run_blob(0.1, 0.05, 0, NSTEP * DT);
  const int np = 64;
  /* 50 fps over 0.1 s at dt 0.01: frames at steps 0, 2, 4, 6, 8, 10 */
  for (int f = 0; f <= 5; f++) {
    char path[256];
    snprintf(path, sizeof path, "%s/frames/frame_%05d.vtu", r.dir, f);
    vtu_file vf;
    cr_assert(vtu_open(path, &vf), "missing or not a binary .vtu: %s", path);
    const char* s = vf.xml;
    long npt, ncell;
    const char* piece = strstr(s, "<Piece ");
    cr_assert_not_null(piece);
    cr_assert_eq(sscanf(piece, "<Piece NumberOfPoints=\"%ld\" NumberOfCells=\"%ld\"", &npt, &ncell), 2);
    cr_expect_eq(npt, np, "frame %d points %ld", f, npt);
    cr_expect_eq(ncell, np, "frame %d cells %ld", f, ncell);
    double v[3 * 64], ps[64], types[64], kind[64], conn[64], off[64], x[3 * 64];
    cr_assert_eq(vtu_array(&vf, "velocity", v, 3 * np), 3 * np);
    cr_assert_eq(vtu_array(&vf, "plastic_strain", ps, np), np);
    cr_assert_eq(vtu_array(&vf, "types", types, np), np);
    cr_assert_eq(vtu_array(&vf, "kind", kind, np), np);
    cr_assert_eq(vtu_array(&vf, "connectivity", conn, np), np);
    cr_assert_eq(vtu_array(&vf, "offsets", off, np), np);
    cr_assert_eq(vtu_array(&vf, "Points", x, 3 * np), 3 * np);
    double zsum = 0;
    for (int i = 0; i < np; i++) zsum += x[3 * i + 2];
    double t = 2 * f * DT;
    for (int k = 0; k < np; k++) {
      cr_expect_float_eq(v[3 * k], 0, 1e-12);
      cr_expect_float_eq(v[3 * k + 1], 0, 1e-12);
      /* v_n = -g t_n to rounding (binary Float64: no printing error) */
      cr_expect_float_eq(v[3 * k + 2], -G * t, 1e-12 * (1 + G * t), "frame %d particle %d vz %.17g vs %.17g", f, k,
                         v[3 * k + 2], -G * t);
      cr_expect_float_eq(ps[k], k == 0 ? plastic0 : 0.0, 1e-12, "frame %d particle %d plastic strain %.17g", f, k, ps[k]);
      cr_expect_eq((int)types[k], 1, "VTK_VERTEX");
      cr_expect_eq((int)kind[k], 2);
      cr_expect_eq((int)conn[k], k);
      cr_expect_eq((int)off[k], k + 1);
    }
    /* equal masses: the mean particle height is the centroid */
    cr_expect_float_eq(zsum / np, z_n(2 * f), 1e-12, "frame %d mean z %.17g vs %.17g", f, zsum / np, z_n(2 * f));
    /* the last frame is the final state: positions and velocities bit for bit */
    if (f == 5) {
      const kn_mpm_body* b = r.world->mpms[0].body;
      cr_expect_eq(memcmp(x, b->x, sizeof x), 0, "frame 5 positions differ from the particles'");
      cr_expect_eq(memcmp(v, b->v, sizeof v), 0, "frame 5 velocities differ from the particles'");
    }
    vtu_close(&vf);
  }
  run_free(&r);
}

// the number after `key` in s (NaN when missing)
static double num_after(const char* s, const char* key) {
  const char* p = strstr(s, key);
  return p ? strtod(p + strlen(key), NULL) : NAN;
}

// count of top-level arrays in the JSON array starting at p ('[')
static int count_rows(const char* p) {
  int depth = 0, rows = 0;
  for (; *p; p++) {
    if (*p == '[' && ++depth == 2) rows++;
    if (*p == ']' && --depth == 0) break;
  }
  return rows;
}

Test(mpm_output, html_replay, .timeout = 60) {
  if (!kn_html_three_js_path()) cr_skip_test("three.js is not installed");
  run r = run_blob(0.1, 0.05, 1, NSTEP * DT);
  char path[256];
  snprintf(path, sizeof path, "%s/replay.html", r.dir);
  char* s = slurp(path);
  cr_assert_not_null(s);
  const char* m = strstr(s, "\"mpm\": [{\"name\": \"blob\"");
  cr_assert_not_null(m);
  cr_expect_eq((int)num_after(m, "\"n\": "), 64);
  cr_expect_eq((int)num_after(m, "\"np\": "), 64);
  cr_expect_not_null(strstr(m, "\"color\": \"plastic_strain\""));
  cr_expect_float_eq(num_after(m, "\"max\": "), plastic0, 1e-6);
  cr_expect_eq((int)num_after(s, "\"particle_stride\": "), 1);
  cr_expect_eq((int)num_after(s, "\"mpm_stride\": "), 1);
  const char* mf = strstr(s, "\"mpm_frames\": [");
  cr_assert_not_null(mf);
  cr_expect_eq(count_rows(strchr(mf, '[')), 6, "one particle row per frame");
  /* last particle row: particle 0's z, then its colour value after the 192 positions */
  const char* fr = strstr(s, "\"frames\": [");
  cr_assert_not_null(fr);
  const char* last = mf;
  for (const char* q = strstr(mf, "\n["); q && q < fr; q = strstr(q + 1, "\n[")) last = q;
  double vals[256];
  const char* p = strchr(last, '[') + 1;
  for (int i = 0; i < 256; i++) {
    char* e;
    vals[i] = strtod(p, &e);
    cr_assert_neq(e, p, "value %d", i);
    p = e + 1;
  }
  const kn_mpm_body* b = r.world->mpms[0].body;
  for (int k = 0; k < 3; k++) cr_expect_float_eq(vals[k], b->x[k], 1e-4 * (1 + fabs(b->x[k])));
  cr_expect_float_eq(vals[192], plastic0, 1e-4);
  cr_expect_float_eq(vals[193], 0, 1e-12);
  free(s);
  run_free(&r);
}

/* The caps: 0.2 m cube at h 0.02 with 8 per cell = 8000 particles > 4000 => every 2nd particle. */
Test(mpm_output, html_particle_cap, .timeout = 60) {
  if (!kn_html_three_js_path()) cr_skip_test("three.js is not installed");
  run r = run_blob(0.2, 0.02, 1, DT);
  cr_assert_eq(r.world->mpms[0].body->np, 8000);
  char path[256];
  snprintf(path, sizeof path, "%s/replay.html", r.dir);
  char* s = slurp(path);
  cr_assert_not_null(s);
  const char* m = strstr(s, "\"mpm\": [{\"name\": \"blob\"");
  cr_assert_not_null(m);
  cr_expect_eq((int)num_after(m, "\"n\": "), 4000);
  cr_expect_eq((int)num_after(m, "\"np\": "), 8000);
  cr_expect_eq((int)num_after(s, "\"particle_stride\": "), 2);
  free(s);
  run_free(&r);
}
