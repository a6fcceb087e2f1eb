/* Mesh-mesh contact on the ipc backend (issue 20; ipc/mesh.c, sim/ipc_surfaces.c): FEM cubes
 * (0.1 m, E 1e5 Pa, nu 0.4, 1000 kg/m^3, resolution 0.05: 27 vertices, 54 surface triangles) with
 * point-triangle and edge-edge pairs, default ipc keys. After every step: every position finite,
 * no surface edge crossing a triangle of the other surface (the static test of contact/pair_ccd.c,
 * both ways), and the smallest vertex-triangle / edge-edge distance between the two surfaces > 0.
 *   U1 (digest §9.1): the top cube dropped at 1 m/s from 5 mm onto a cube whose bottom is held,
 *      with its bottom edge exactly on the base's top edge (exactly parallel edge-edge and
 *      point-point impacts), and with its corner exactly on the base's corner;
 *      and with its faces exactly over the base's (every bottom edge parallel to and over a top
 *      edge, corners over corners): it bounces back;
 *   the top cube turned edge-down and corner-down, dropped from 5 mm onto the base;
 *   the top cube 3 cm off centre, landing on the base's face and edge, comes to rest there: gap
 *      in (0, dhat], speed < 1 cm/s;
 *   a cube dropped onto a fixed rigid triangle-mesh cube standing on its edge, and on its corner
 *      (the rigid mesh's highest vertex checked unique), then onto a floor (a half-space: the
 *      candidate path), stays intersection-free against the mesh;
 *   a chain of three FEM rings hangs (below).
 * The materials name their type, linear_corotated: a material without `type` is read as 0,
 * KN_FEM_LINEAR (not rotation invariant; scene.h documents linear_corotated as the default), and
 * a rotated or tipping body then feels spurious stress (a torus turned by 90 degrees about z: 5.9
 * m/s vertex speeds after its first step, on sap too); a pre-existing problem outside this test.
 * Time per step is logged. The cube scenes are 30-50 steps of 0.01 s, about a second in Release;
 * the chain is scaled for CI (three coarse rings, 50 steps: 14 s in Release, 47 s of CPU under
 * ASan+UBSan for the whole file). */
#define _GNU_SOURCE /* mkstemps */
#include <time.h>
#include <unistd.h>

#include "contact/contact.h"
#include "scene_util.h"

//---- geometry checks ----

typedef struct {
  int nvert, ntri, nedge;
  const double* x;
  const int* tri;
  int* edge; /* owned */
} surface;

static surface fem_surface(const kn_fem_body* b) {
  surface s = {b->mesh.nvert, b->mesh.nsurf, 0, b->x, b->mesh.surf, NULL};
  cr_assert_eq(kn_surface_edges(s.ntri, s.tri, &s.nedge, &s.edge, NULL), KN_OK);
  return s;
}

/* (points p of the stencil x, count n) and (m of y) => whether their boxes are farther apart than
 * gap on some axis (a cheap filter of the brute-force checks below) */
static int far_apart(const double* x, int n, const double* y, int m, double gap) {
  for (int k = 0; k < 3; k++) {
    double lo1 = INFINITY, hi1 = -INFINITY, lo2 = INFINITY, hi2 = -INFINITY;
    for (int i = 0; i < n; i++) lo1 = fmin(lo1, x[3 * i + k]), hi1 = fmax(hi1, x[3 * i + k]);
    for (int i = 0; i < m; i++) lo2 = fmin(lo2, y[3 * i + k]), hi2 = fmax(hi2, y[3 * i + k]);
    if (lo2 - hi1 > gap || lo1 - hi2 > gap) return 1;
  }
  return 0;
}

// edges of a crossing triangles of b
static int crossings_one_way(const surface* a, const surface* b) {
  int n = 0;
  for (int e = 0; e < a->nedge; e++)
    for (int t = 0; t < b->ntri; t++) {
      const int* T = b->tri + 3 * t;
      double x[6], y[9];
      memcpy(x, a->x + 3 * a->edge[2 * e], 3 * sizeof(double)), memcpy(x + 3, a->x + 3 * a->edge[2 * e + 1], 3 * sizeof(double));
      for (int k = 0; k < 3; k++) memcpy(y + 3 * k, b->x + 3 * T[k], 3 * sizeof(double));
      if (far_apart(x, 2, y, 3, 0.0)) continue;
      n += kn_edge_triangle_intersect(a->x + 3 * a->edge[2 * e], a->x + 3 * a->edge[2 * e + 1], b->x + 3 * T[0],
                                      b->x + 3 * T[1], b->x + 3 * T[2]);
    }
  return n;
}

/* the smallest vertex-triangle (both ways) and edge-edge distance between two surfaces (pairs
 * whose boxes are more than 1 cm apart skipped: inf when every pair is) */
static double min_distance(const surface* a, const surface* b) {
  double s = INFINITY, x[12];
  for (int dir = 0; dir < 2; dir++) {
    const surface *p = dir ? b : a, *q = dir ? a : b;
    for (int v = 0; v < p->nvert; v++)
      for (int t = 0; t < q->ntri; t++) {
        memcpy(x, p->x + 3 * v, 3 * sizeof(double));
        for (int k = 0; k < 3; k++) memcpy(x + 3 + 3 * k, q->x + 3 * q->tri[3 * t + k], 3 * sizeof(double));
        if (far_apart(x, 1, x + 3, 3, 0.01)) continue;
        s = fmin(s, kn_dist_eval(x, kn_dist_point_triangle_case(x), NULL, NULL));
      }
  }
  for (int e = 0; e < a->nedge; e++)
    for (int f = 0; f < b->nedge; f++) {
      memcpy(x, a->x + 3 * a->edge[2 * e], 3 * sizeof(double)), memcpy(x + 3, a->x + 3 * a->edge[2 * e + 1], 3 * sizeof(double));
      memcpy(x + 6, b->x + 3 * b->edge[2 * f], 3 * sizeof(double)), memcpy(x + 9, b->x + 3 * b->edge[2 * f + 1], 3 * sizeof(double));
      if (far_apart(x, 2, x + 6, 2, 0.01)) continue;
      s = fmin(s, kn_dist_eval(x, kn_dist_edge_edge_case(x), NULL, NULL));
    }
  return sqrt(s);
}

static int finite_all(const double* x, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

static double centroid_vz(const kn_fem_body* b) {
  double s = 0;
  for (int v = 0; v < b->mesh.nvert; v++) s += b->v[3 * v + 2];
  return s / b->mesh.nvert;
}

static double centroid_z(const kn_fem_body* b) {
  double s = 0;
  for (int v = 0; v < b->mesh.nvert; v++) s += b->x[3 * v + 2];
  return s / b->mesh.nvert;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* (world, surfaces a and b, steps, label) => stepped, every step checked; the smallest distance
 * seen and the mean wall time per step returned */
static double step_checked(test_world* t, surface* a, surface* b, int steps, const char* label, double* ms) {
  double dmin = INFINITY, t0 = now();
  for (int k = 0; k < steps; k++) {
    tw_step(t, 1);
    cr_assert(finite_all(a->x, 3 * a->nvert) && finite_all(b->x, 3 * b->nvert), "%s: step %d: a position is not finite",
              label, k + 1);
    int c = crossings_one_way(a, b) + crossings_one_way(b, a);
    cr_assert_eq(c, 0, "%s: step %d: %d surface edges cross the other body's triangles", label, k + 1, c);
    double d = min_distance(a, b);
    cr_assert_gt(d, 0, "%s: step %d: the surfaces touch (distance %g)", label, k + 1, d);
    dmin = fmin(dmin, d);
  }
  *ms = 1e3 * (now() - t0) / steps;
  return dmin;
}

//---- FEM on FEM ----

static const char* cubes_scene_rpy(double x, double y, double z, double vz, double duration, const double rpy[3]) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "time_step: 0.01\n"
           "duration: %g\n"
           "contact: {backend: ipc}\n"
           "deformables:\n"
           "  - name: base\n"
           "    shape: {box: [0.1, 0.1, 0.1]}\n"
           "    resolution: 0.05\n"
           "    material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n"
           "    pose: {xyz: [0, 0, 0.05]}\n"
           "    fixed: {box: {min: [-1, -1, -1], max: [1, 1, -0.049]}}\n"
           "  - name: top\n"
           "    shape: {box: [0.1, 0.1, 0.1]}\n"
           "    resolution: 0.05\n"
           "    material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n"
           "    pose: {xyz: [%.17g, %.17g, %.17g], rpy: [%.17g, %.17g, %.17g]}\n"
           "    velocity: [0, 0, %g]\n",
           duration, x, y, z, rpy[0], rpy[1], rpy[2], vz);
  return buf;
}
static const char* cubes_scene(double x, double y, double z, double vz, double duration) {
  const double none[3] = {0, 0, 0};
  return cubes_scene_rpy(x, y, z, vz, duration, none);
}

/* U1: (top's offset) => dropped at 1 m/s from 5 mm, 30 steps; the smallest distance seen and
 * the top's largest mean vertical velocity after the impact step */
static double aligned_drop(double x, double y, const char* label, double* vz_max) {
  test_world t = tw_create(cubes_scene(x, y, 0.155, -1, 0.3));
  surface a = fem_surface(t.world->fems[0].body), b = fem_surface(t.world->fems[1].body);
  double ms, dmin = step_checked(&t, &a, &b, 1, label, &ms), total = ms;
  *vz_max = -INFINITY;
  for (int k = 1; k < 30; k++) {
    dmin = fmin(dmin, step_checked(&t, &a, &b, 1, label, &ms));
    total += ms;
    *vz_max = fmax(*vz_max, centroid_vz(t.world->fems[1].body));
  }
  cr_log_info("%s: smallest distance %.3g m, %.2f ms per step, top's largest mean vz after the impact %.3g m/s", label,
              dmin, total / 30, *vz_max);
  free(a.edge), free(b.edge);
  tw_free(&t);
  return dmin;
}

Test(ipc_mesh, u1_exactly_aligned_edges_and_corners) {
  /* the impact is at t = 5 ms; every pair of the drop came within dhat (1e-3 l = 0.37 mm) */
  double vz;
  /* face on face: every bottom edge of the top exactly over a top edge of the base (parallel
   * edge-edge), the corners exactly over the corners (point-point): it bounces back up */
  cr_expect_lt(aligned_drop(0, 0, "U1 face on face", &vz), 1e-3);
  cr_expect_gt(vz, 0, "U1 face on face: no rebound (largest vz %g m/s)", vz);
  /* edge exactly on edge, corner exactly on corner: unstable, the top slides past; intersection-free */
  cr_expect_lt(aligned_drop(0.1, 0, "U1 edge on edge", &vz), 1e-3);
  cr_expect_lt(aligned_drop(0.1, 0.1, "U1 corner on corner", &vz), 1e-3);
}

Test(ipc_mesh, cube_lands_half_over_a_cube_and_rests) {
  test_world t = tw_create(cubes_scene(0.03, 0, 0.155, 0, 0.5)); /* its centre of mass 2 cm inside the edge */
  surface a = fem_surface(t.world->fems[0].body), b = fem_surface(t.world->fems[1].body);
  double ms, dmin = step_checked(&t, &a, &b, 50, "half over", &ms);
  double d = min_distance(&a, &b), vz = centroid_vz(t.world->fems[1].body);
  /* dhat = 1e-3 l, l the dynamic bodies' bounding-box diagonal at t = 0 */
  double dhat = 1e-3 * sqrt(0.15 * 0.15 + 0.1 * 0.1 + 0.205 * 0.205);
  cr_log_info("half over: final gap %.4g m (dhat %.4g), smallest %.4g, top vz %.3g m/s, %.2f ms per step", d, dhat, dmin,
              vz, ms);
  cr_expect(d > 0 && d <= dhat, "resting gap %g m, expected in (0, dhat = %g]", d, dhat);
  cr_expect_lt(fabs(vz), 0.01, "the top cube still moves: mean vz %g m/s", vz);
  free(a.edge), free(b.edge);
  tw_free(&t);
}

/* the top cube turned edge-down and corner-down, its lowest point 5 mm above the base's top face
 * (half diagonals 0.0707 and 0.0866 m), a little off centre so that it tips: it lands, tips over
 * and comes to rest on the base or falls past it, intersection-free */
Test(ipc_mesh, cube_dropped_edge_first_and_corner_first_on_a_cube) {
  const double edge[3] = {M_PI / 4, 0, 0}, corner[3] = {M_PI / 4, atan(1 / sqrt(2.0)), 0};
  const struct {
    const double* rpy;
    double low;
    const char* label;
  } c[2] = {{edge, 0.05 * sqrt(2.0), "edge first on a cube"}, {corner, 0.05 * sqrt(3.0), "corner first on a cube"}};
  for (int i = 0; i < 2; i++) {
    test_world t = tw_create(cubes_scene_rpy(0.01, 0.01, 0.105 + c[i].low, 0, 0.5, c[i].rpy));
    surface a = fem_surface(t.world->fems[0].body), b = fem_surface(t.world->fems[1].body);
    double ms, dmin = step_checked(&t, &a, &b, 50, c[i].label, &ms);
    cr_log_info("%s: smallest distance %.3g m, top centre z %.4g m at 0.5 s, %.2f ms per step", c[i].label, dmin,
                centroid_z(t.world->fems[1].body), ms);
    cr_expect_lt(dmin, 1e-3, "%s: never came into contact", c[i].label);
    /* on the base (its top at 0.1; resting flat the centre is at 0.15, on an edge at 0.171) */
    cr_expect_gt(centroid_z(t.world->fems[1].body), 0.145, "%s: fell through or past the base", c[i].label);
    free(a.edge), free(b.edge);
    tw_free(&t);
  }
}

//---- FEM on a rigid triangle mesh ----

/* a fixed rigid mesh cube (0.1 m) at rpy, its highest point at z = 0.2; an FEM cube dropped from
 * 5 mm above it, offset by (x, y) so that it tips off; a floor at z = 0 */
static void drop_on_mesh(const double rpy[3], double x, double y, int corner, const char* label) {
  char path[] = "/tmp/knead_ipc_mesh_XXXXXX.obj";
  int fd = mkstemps(path, 4);
  cr_assert_geq(fd, 0);
  close(fd);
  tw_write_unit_cube_obj(path);
  /* the cube's highest vertex: Rz(c) Ry(b) Rx(a) applied to the corners */
  double ca = cos(rpy[0]), sa = sin(rpy[0]), cb = cos(rpy[1]), sb = sin(rpy[1]), top = -INFINITY, second = -INFINITY;
  for (int i = 0; i < 8; i++) {
    double p[3] = {i & 1 ? 0.05 : -0.05, i & 2 ? 0.05 : -0.05, i & 4 ? 0.05 : -0.05};
    double z = -sb * p[0] + cb * (sa * p[1] + ca * p[2]);
    if (z > top) second = top, top = z;
    else if (z > second) second = z;
  }
  if (corner) cr_assert_gt(top - second, 0.01, "%s: the highest vertex is not a lone corner", label);
  else cr_assert_lt(top - second, 1e-12, "%s: the top is not an edge", label);
  char buf[2048];
  snprintf(buf, sizeof buf,
           "time_step: 0.01\n"
           "duration: 0.5\n"
           "contact: {backend: ipc}\n"
           "objects:\n"
           "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
           "  - {name: block, shape: {mesh: %s, scale: [0.1, 0.1, 0.1]}, fixed: true,\n"
           "     pose: {xyz: [0, 0, %.17g], rpy: [%.17g, %.17g, %.17g]}}\n"
           "deformables:\n"
           "  - name: cube\n"
           "    shape: {box: [0.1, 0.1, 0.1]}\n"
           "    resolution: 0.05\n"
           "    material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n"
           "    pose: {xyz: [%g, %g, 0.255]}\n",
           path, 0.2 - top, rpy[0], rpy[1], rpy[2], x, y);
  test_world t = tw_create(buf);
  unlink(path);
  /* the block's triangles in the world: its mesh at its (fixed) pose */
  int nv, nt;
  const double* v;
  const int* tri;
  int k = -1;
  for (int i = 0; i < t.world->ncollider; i++)
    if (kn_collider_mesh(t.world->collision, i, &nv, &v, &nt, &tri)) k = i;
  cr_assert_geq(k, 0, "%s: no mesh collider", label);
  double* xw = malloc(3 * (size_t)nv * sizeof *xw);
  for (int i = 0; i < nv; i++) kn_pose_apply(&t.world->colliders[k].c.X_bg, v + 3 * i, xw + 3 * i);
  surface m = {nv, nt, 0, xw, tri, NULL};
  cr_assert_eq(kn_surface_edges(nt, tri, &m.nedge, &m.edge, NULL), KN_OK);
  surface c = fem_surface(t.world->fems[0].body);
  double ms, dmin = step_checked(&t, &c, &m, 50, label, &ms);
  double cz = 0;
  for (int i = 0; i < c.nvert; i++) cz += c.x[3 * i + 2] / c.nvert;
  cr_log_info("%s: smallest distance to the mesh %.3g m, cube centroid z %.4g m at 0.5 s, %.2f ms per step", label, dmin,
              cz, ms);
  cr_expect_lt(dmin, 1e-3, "%s: the cube never came near the mesh", label);
  cr_expect_gt(cz, 0.04, "%s: the cube went through the floor", label);
  free(xw), free(m.edge), free(c.edge);
  tw_free(&t);
}

Test(ipc_mesh, cube_on_a_rigid_mesh_edge_and_corner) {
  const double edge[3] = {M_PI / 4, 0, 0}, corner[3] = {M_PI / 4, atan(1 / sqrt(2.0)), 0};
  drop_on_mesh(edge, 0, 0.02, 0, "on a rigid edge"); /* the edge runs along x: offset across it */
  drop_on_mesh(corner, 0.02, 0.01, 1, "on a rigid corner");
}

//---- a chain (U6 scaled to CI) ----

/* Three FEM rings (torus R 5 cm, tube r 1 cm, resolution 1.5 cm, E 1e6 Pa, nu 0.4, 500 kg/m^3;
 * the paper's chains use E 1e7, rho 500): ring1 horizontal with its x < 0 half held, ring2
 * vertical through it 1.5 cm above resting, ring3 vertical through ring2, turned 90 degrees, 1.5
 * cm above resting. 50 steps of 0.01 s (about 5 s in Release: the scaled-down U6; 100 links
 * would not fit CI). Every step: no crossing and positive distances between every two rings. At
 * 0.5 s the chain hangs: ring2 rests on ring1's tube (c2 + R - 0.3 = 2r,
 * c2 = 0.27 m less ring1's sag) and ring3 on ring2's (c2 - c3 = 2R - 2r = 0.08 m), both still
 * (mean vertical speed < 1 cm/s). */
Test(ipc_mesh, chain_of_three_rings_hangs) {
  const char* yaml =
      "time_step: 0.01\n"
      "duration: 0.5\n"
      "contact: {backend: ipc}\n"
      "deformables:\n"
      "  - name: ring1\n"
      "    shape: {torus: [0.05, 0.01]}\n"
      "    resolution: 0.015\n"
      "    material: {type: linear_corotated, youngs_modulus: 1e6, poisson_ratio: 0.4, density: 500}\n"
      "    pose: {xyz: [0, 0, 0.3]}\n"
      "    fixed: {box: {min: [-1, -1, -1], max: [0, 1, 1]}}\n"
      "  - name: ring2\n"
      "    shape: {torus: [0.05, 0.01]}\n"
      "    resolution: 0.015\n"
      "    material: {type: linear_corotated, youngs_modulus: 1e6, poisson_ratio: 0.4, density: 500}\n"
      "    pose: {xyz: [0.05, 0, 0.285], rpy: [1.5707963267948966, 0, 0]}\n"
      "  - name: ring3\n"
      "    shape: {torus: [0.05, 0.01]}\n"
      "    resolution: 0.015\n"
      "    material: {type: linear_corotated, youngs_modulus: 1e6, poisson_ratio: 0.4, density: 500}\n"
      "    pose: {xyz: [0.05, 0, 0.22], rpy: [0, 1.5707963267948966, 0]}\n";
  test_world t = tw_create(yaml);
  surface r[3];
  for (int i = 0; i < 3; i++) r[i] = fem_surface(t.world->fems[i].body);
  double dmin[3] = {INFINITY, INFINITY, INFINITY}, solve = 0;
  for (int k = 0; k < 50; k++) {
    double t0 = now();
    tw_step(&t, 1);
    solve += now() - t0;
    for (int i = 0; i < 3; i++)
      for (int j = i + 1; j < 3; j++) {
        if (i == 0 && j == 2 && k % 10) continue; /* rings 1 and 3 stay 2 cm apart: every 10th step */
        cr_assert(finite_all(r[i].x, 3 * r[i].nvert), "step %d: ring%d not finite", k + 1, i + 1);
        int c = crossings_one_way(&r[i], &r[j]) + crossings_one_way(&r[j], &r[i]);
        cr_assert_eq(c, 0, "step %d: rings %d and %d cross (%d edges)", k + 1, i + 1, j + 1, c);
        double d = min_distance(&r[i], &r[j]);
        cr_assert_gt(d, 0, "step %d: rings %d and %d touch", k + 1, i + 1, j + 1);
        dmin[i + j - 1] = fmin(dmin[i + j - 1], d);
      }
  }
  double ms = 1e3 * solve / 50, cz[3];
  for (int i = 0; i < 3; i++) {
    cz[i] = 0;
    for (int v = 0; v < r[i].nvert; v++) cz[i] += r[i].x[3 * v + 2] / r[i].nvert;
  }
  double vz2 = centroid_vz(t.world->fems[1].body), vz3 = centroid_vz(t.world->fems[2].body);
  cr_log_info("chain: %d + %d + %d vertices, %.1f ms per step; smallest distances 1-2 %.3g, 1-3 %.3g, "
              "2-3 %.3g m; centres z %.4f %.4f, vz %.3g %.3g m/s",
              r[0].nvert, r[1].nvert, r[2].nvert, ms, dmin[0], dmin[1], dmin[2], cz[1], cz[2], vz2, vz3);
  cr_expect(dmin[0] < 1e-3 && dmin[2] < 1e-3, "the rings never came into contact");
  cr_expect(cz[1] > 0.255 && cz[1] < 0.275, "ring2 centre at %g m: not hanging on ring1", cz[1]);
  cr_expect(fabs(cz[1] - cz[2] - 0.08) < 0.003, "ring3 hangs %g m below ring2 (2R - 2r = 0.08)", cz[1] - cz[2]);
  cr_expect(fabs(vz2) < 0.01 && fabs(vz3) < 0.01, "not at rest: vz %g, %g m/s", vz2, vz3);
  for (int i = 0; i < 3; i++) free(r[i].edge);
  tw_free(&t);
}

/* two FEM cubes placed touching (distance 0: a barrier cannot start there) are refused at the first
 * step, naming both bodies; the world's state is left as it was */
Test(ipc_mesh, touching_start_refused) {
  test_world t = tw_create(cubes_scene(0, 0, 0.15, 0, 0.1));
  double z0 = t.world->fems[1].body->x[2];
  kn_error err = {0};
  cr_assert_eq(kn_world_step(t.world, &err), KN_ERR_UNSUPPORTED, "%s", err.msg);
  cr_expect(strstr(err.msg, "the deformable 'base' and the deformable 'top'") && strstr(err.msg, "apart at the step start"),
            "%s", err.msg);
  cr_expect_eq(t.world->fems[1].body->x[2], z0, "the failed step moved the body");
  tw_free(&t);
}
