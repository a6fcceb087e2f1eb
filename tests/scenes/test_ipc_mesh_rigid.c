/* The ipc backend's mesh pairs beyond FEM-FEM and FEM-rigid (issue 20; sim/ipc_surfaces.c,
 * ipc/mesh.c, sim/nl_ipc.c): two rigid triangle meshes take point-triangle and edge-edge barrier
 * pairs with additive CCD (the detection's candidates between them inert), the end-of-step audit
 * checks every mesh pair with the rigid bodies where the real update q_n+1 = q_n + dt N(q_n) v put
 * them, and an FEM body's surface has self-contact. Default ipc keys (dhat = 1e-3 l) unless a
 * case says why. After every step: no surface edge crosses a triangle (contact/pair_ccd.c's
 * static test, both ways; for self-contact every edge against every triangle not sharing a
 * vertex), and ipc_step_audited's universal criteria (not where a mesh is non-convex: the
 * detection's phi is taken on its hull). Cost (Release): about 2.5 s for the file on the shared
 * 2-core VM; the scenes are small (8-16 vertex meshes, a 59-vertex FEM C, 10-40 steps). */
#define _GNU_SOURCE /* mkstemps */
#include <unistd.h>

#include "contact/contact.h"
#include "ipc_util.h"

//---- meshes written for the scenes ----

// (path template ending in .obj) => a fresh file name
static void temp_obj(char* path) {
  int fd = mkstemps(path, 4);
  cr_assert_geq(fd, 0);
  close(fd);
}

/* a prism: the polygon (x, z) of n vertices (counter-clockwise seen from -y), its caps given as
 * triangles of polygon indices, extruded over y in [y0, y1] */
static void write_prism(const char* path, int n, const double (*p)[2], int ncap, const int (*cap)[3], double y0,
                        double y1) {
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f);
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < n; i++) fprintf(f, "v %.17g %.17g %.17g\n", p[i][0], s ? y1 : y0, p[i][1]);
  for (int t = 0; t < ncap; t++) {
    fprintf(f, "f %d %d %d\n", cap[t][0] + 1, cap[t][1] + 1, cap[t][2] + 1);
    fprintf(f, "f %d %d %d\n", n + cap[t][0] + 1, n + cap[t][2] + 1, n + cap[t][1] + 1);
  }
  for (int i = 0; i < n; i++) {
    int a = i, b = (i + 1) % n;
    fprintf(f, "f %d %d %d\nf %d %d %d\n", a + 1, n + a + 1, n + b + 1, a + 1, n + b + 1, b + 1);
  }
  fclose(f);
}

//---- world surfaces and the static checks ----

typedef struct {
  int nvert, ntri, nedge;
  double* x; /* world positions (owned) */
  const int* tri;
  int* edge; /* owned */
} surface;

// collider named `name`'s mesh in the world at the current q
static surface collider_surface(const kn_world* w, const char* name) {
  for (int k = 0; k < w->ncollider; k++) {
    int nv, nt;
    const double* v;
    const int* tri;
    if (strcmp(w->colliders[k].name, name) || !kn_collider_mesh(w->collision, k, &nv, &v, &nt, &tri)) continue;
    const kn_world_collider* c = &w->colliders[k];
    kn_pose X = c->c.X_bg;
    if (c->c.clique >= 0) {
      const kn_world_tree* tr = &w->trees[c->tree];
      kn_mb_data* d = kn_mb_data_create(tr->robot->model);
      cr_assert_not_null(d);
      kn_mb_kinematics(tr->robot->model, tr->q, tr->v, d);
      kn_pose_mul(&d->X_wb[c->body], &c->c.X_bg, &X);
      kn_mb_data_free(d);
    }
    surface s = {nv, nt, 0, malloc(3 * (size_t)nv * sizeof(double)), tri, NULL};
    for (int i = 0; i < nv; i++) kn_pose_apply(&X, v + 3 * i, s.x + 3 * i);
    cr_assert_eq(kn_surface_edges(nt, tri, &s.nedge, &s.edge, NULL), KN_OK);
    return s;
  }
  cr_assert_fail("no mesh collider '%s'", name);
  return (surface){0};
}

static void surface_free(surface* s) { free(s->x), free(s->edge); }

static int shares_vertex(const int* e, const int* t) {
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      if (e[i] == t[j]) return 1;
  return 0;
}

/* the segment e0-e1 passes through the triangle: its ends more than 1e-12 m on either side of the
 * triangle's plane (an edge lying in the plane, as at a reflex corner where an edge is collinear
 * with a triangle's edge, is not a crossing: contact/'s test sees round-off there) and the static
 * test of contact/pair_ccd.c */
static int crosses(const double* e0, const double* e1, const double* t0, const double* t1, const double* t2) {
  double u[3], v[3], n[3], s0 = 0, s1 = 0;
  for (int k = 0; k < 3; k++) u[k] = t1[k] - t0[k], v[k] = t2[k] - t0[k];
  n[0] = u[1] * v[2] - u[2] * v[1], n[1] = u[2] * v[0] - u[0] * v[2], n[2] = u[0] * v[1] - u[1] * v[0];
  double l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  for (int k = 0; k < 3; k++) s0 += n[k] / l * (e0[k] - t0[k]), s1 += n[k] / l * (e1[k] - t0[k]);
  if (!((s0 > 1e-12 && s1 < -1e-12) || (s0 < -1e-12 && s1 > 1e-12))) return 0;
  return kn_edge_triangle_intersect(e0, e1, t0, t1, t2);
}

/* edges of a crossing triangles of b (b == a: self, pairs sharing a vertex skipped) */
static int crossings_one_way(const surface* a, const surface* b) {
  int n = 0;
  for (int e = 0; e < a->nedge; e++)
    for (int t = 0; t < b->ntri; t++) {
      const int *E = a->edge + 2 * e, *T = b->tri + 3 * t;
      if (a == b && shares_vertex(E, T)) continue;
      int h = crosses(a->x + 3 * E[0], a->x + 3 * E[1], b->x + 3 * T[0], b->x + 3 * T[1], b->x + 3 * T[2]);
      n += h;
    }
  return n;
}

// the smallest vertex-triangle distance from a's vertices to b's triangles (self: not its own)
static double vt_distance(const surface* a, const surface* b) {
  double s = INFINITY, x[12];
  for (int v = 0; v < a->nvert; v++)
    for (int t = 0; t < b->ntri; t++) {
      const int* T = b->tri + 3 * t;
      if (a == b && (T[0] == v || T[1] == v || T[2] == v)) continue;
      memcpy(x, a->x + 3 * v, 3 * sizeof(double));
      for (int k = 0; k < 3; k++) memcpy(x + 3 + 3 * k, b->x + 3 * T[k], 3 * sizeof(double));
      s = fmin(s, kn_dist_eval(x, kn_dist_point_triangle_case(x), NULL, NULL));
    }
  return sqrt(s);
}

//---- rigid mesh on rigid mesh ----

/* a 0.1 m mesh cube of 1 kg over a fixed 0.4 x 0.4 x `thick` mesh plate whose
 * top is at z = 0; the cube's bottom `gap` above it, falling at vz */
static test_world cube_over_plate(double thick, double gap, double vz, double duration, char* cube, char* plate) {
  tw_write_unit_cube_obj(cube), tw_write_unit_cube_obj(plate);
  char yaml[2048];
  snprintf(yaml, sizeof yaml,
           "time_step: 0.01\n"
           "duration: %g\n"
           "contact: {backend: ipc}\n"
           "objects:\n"
           "  - {name: plate, shape: {mesh: %s, scale: [0.4, 0.4, %g]}, fixed: true, pose: {xyz: [0, 0, %g]}}\n"
           "  - {name: cube, shape: {mesh: %s, scale: [0.1, 0.1, 0.1]}, mass: 1,\n"
           "     pose: {xyz: [0.01, 0.02, %.17g]}, velocity: [0, 0, 0, 0, 0, %g]}\n",
           duration, plate, thick, -thick / 2, cube, 0.05 + gap, vz);
  test_world t = tw_create(yaml);
  unlink(cube), unlink(plate);
  return t;
}

/* steps with the universal criteria and no crossing between the two meshes; => the smallest
 * vertex-triangle distance (both ways) at the end */
static double steps_no_crossing(test_world* t, int n, ipc_audit* a, const char* label) {
  double d = INFINITY;
  for (int k = 0; k < n; k++) {
    ipc_step_audited(t, 1, a);
    surface c = collider_surface(t->world, "cube"), p = collider_surface(t->world, "plate");
    int x = crossings_one_way(&c, &p) + crossings_one_way(&p, &c);
    cr_assert_eq(x, 0, "%s: step %d: %d edges cross the other mesh's triangles", label, k + 1, x);
    d = fmin(vt_distance(&c, &p), vt_distance(&p, &c));
    cr_assert_gt(d, 0, "%s: step %d: the meshes touch", label, k + 1);
    surface_free(&c), surface_free(&p);
  }
  return d;
}

/* a mesh cube dropped from 2 mm onto a fixed mesh plate (2 cm) comes to rest at the barrier's
 * resting gap: in (0, dhat), dhat = 1e-3 l with l the cube's box diagonal at t = 0 (only the cube
 * moves: sqrt(3) 0.1 m); still (|vz| < 1 mm/s) after 0.4 s; the gap is the true vertex-triangle
 * distance, which only the mesh pairs' barrier controls (the candidates between the two are inert) */
Test(ipc_mesh_rigid, mesh_cube_rests_on_a_mesh_plate) {
  char cube[] = "/tmp/knead_ipc_rr_XXXXXX.obj", plate[] = "/tmp/knead_ipc_rr_XXXXXX.obj";
  temp_obj(cube), temp_obj(plate);
  test_world t = cube_over_plate(0.02, 0.002, 0, 0.4, cube, plate);
  ipc_audit a = ipc_audit_start();
  double d = steps_no_crossing(&t, 40, &a, "cube on plate");
  double dhat = 1e-3 * 0.1 * sqrt(3.0), *q = tw_object_q(&t, "cube");
  const double* v = t.world->trees[t.world->objects[1].tree].v;
  ipc_audit_log("cube on plate", &a);
  cr_log_info("cube on plate: resting gap %.4g m (dhat %.4g), cube z %.6f, vz %.3g m/s, tilt %.3g rad", d, dhat, q[2],
              v[5], 2 * sqrt(q[4] * q[4] + q[5] * q[5]));
  cr_expect(d > 0 && d < dhat, "resting gap %g m, expected in (0, dhat = %g)", d, dhat);
  cr_expect_lt(fabs(v[5]), 1e-3, "the cube still moves: vz %g m/s", v[5]);
  /* flat to 1e-4 rad: the plate's diagonal edge under the cube adds edge-edge pairs off centre
   * (measured 1.7e-5 rad), so the centre is within 0.05 * 1e-4 of half size + gap */
  double tilt = 2 * sqrt(q[4] * q[4] + q[5] * q[5]);
  cr_expect_lt(tilt, 1e-4, "the cube tilts by %g rad", tilt);
  cr_expect(fabs(q[2] - 0.05 - d) < 5e-6, "the cube's centre %g is not its half size + the gap", q[2]);
  tw_free(&t);
}

/* a mesh cube at 10 m/s, 1 mm above a 5 mm mesh plate: 10 cm a step, 20 plate thicknesses; without
 * CCD its first step would end below the plate. It stops on the plate (never below its top). */
Test(ipc_mesh_rigid, fast_mesh_cube_does_not_tunnel_through_a_thin_mesh_plate) {
  char cube[] = "/tmp/knead_ipc_rr_XXXXXX.obj", plate[] = "/tmp/knead_ipc_rr_XXXXXX.obj";
  temp_obj(cube), temp_obj(plate);
  test_world t = cube_over_plate(0.005, 0.001, -10, 0.2, cube, plate);
  ipc_audit a = ipc_audit_start();
  double d = steps_no_crossing(&t, 20, &a, "fast cube");
  double* q = tw_object_q(&t, "cube");
  ipc_audit_log("fast cube", &a);
  cr_log_info("fast cube: final gap %.4g m, centre z %.6f", d, q[2]);
  cr_expect_gt(q[2], 0.05, "the cube's centre %g m: below the plate's top + half its size", q[2]);
  tw_free(&t);
}

//---- the audit against the real rigid update ----

/* A square tube (outer 0.2 m, wall 1 cm, 0.1 m deep along y, a rigid mesh of 1 kg) and a mesh
 * block (2 cm cube, 0.1 kg) inside it touching its inner wall's neighbourhood: the block's centre
 * at x = 0.08 m, its outer face 0.5 mm from the wall at 0.09 m; both spinning together about y at
 * omega (the block's centre moving at omega x 0.08 m), no gravity (set: only the rotation may
 * bring them together). The linear point maps the solve uses move every point along its velocity:
 * the block's centre goes straight out and the tube's wall (rotating about the tube's centre) out
 * by the same 0.09 theta^2 / 2 (theta = omega dt) — no contact force in the solve. The real update
 * rotates the tube's wall back onto its circle: the block ends 0.08 theta^2 / 2 deeper, which at
 * omega 20 rad/s, dt 0.01 (1.6 mm) is past the 0.5 mm gap; the audit must refuse that step,
 * naming both bodies, with the state as it was. At dt 0.001 (16 um a step, < the gap) the same
 * scene runs 40 steps, intersection-free. */
static test_world spinning_tube(double dt, double omega, char* tube, char* block) {
  FILE* f = fopen(tube, "w");
  cr_assert_not_null(f);
  const double o = 0.1, in = 0.09, y0 = -0.05, y1 = 0.05;
  const double ring[2][4][2] = {{{-o, -o}, {o, -o}, {o, o}, {-o, o}}, {{-in, -in}, {in, -in}, {in, in}, {-in, in}}};
  for (int s = 0; s < 2; s++)     /* y side */
    for (int r = 0; r < 2; r++)   /* outer, inner */
      for (int i = 0; i < 4; i++) fprintf(f, "v %g %g %g\n", ring[r][i][0], s ? y1 : y0, ring[r][i][1]);
#define V(s, r, i) (8 * (s) + 4 * (r) + ((i) % 4) + 1)
  for (int i = 0; i < 4; i++) {
    /* outer wall faces out, inner wall faces the hole; the end annuli face -y and +y */
    fprintf(f, "f %d %d %d\nf %d %d %d\n", V(0, 0, i), V(1, 0, i), V(1, 0, i + 1), V(0, 0, i), V(1, 0, i + 1),
            V(0, 0, i + 1));
    fprintf(f, "f %d %d %d\nf %d %d %d\n", V(0, 1, i), V(0, 1, i + 1), V(1, 1, i + 1), V(0, 1, i), V(1, 1, i + 1),
            V(1, 1, i));
    fprintf(f, "f %d %d %d\nf %d %d %d\n", V(0, 0, i), V(0, 0, i + 1), V(0, 1, i + 1), V(0, 0, i), V(0, 1, i + 1),
            V(0, 1, i));
    fprintf(f, "f %d %d %d\nf %d %d %d\n", V(1, 0, i), V(1, 1, i), V(1, 1, i + 1), V(1, 0, i), V(1, 1, i + 1),
            V(1, 0, i + 1));
  }
#undef V
  fclose(f);
  tw_write_unit_cube_obj(block);
  char yaml[2048];
  /* the body-frame twist [wx wy wz vx vy vz]: spin about y; the block's centre (0.0795, 0, 0) moves
   * at omega x r = (0, 0, -omega 0.0795) for omega along +y */
  snprintf(yaml, sizeof yaml,
           "time_step: %g\n"
           "duration: 1\n"
           "gravity: [0, 0, 0]\n"
           "contact: {backend: ipc}\n"
           "objects:\n"
           "  - {name: tube, shape: {mesh: %s}, mass: 1, velocity: [0, %g, 0, 0, 0, 0]}\n"
           "  - {name: block, shape: {mesh: %s, scale: [0.02, 0.02, 0.02]}, mass: 0.1,\n"
           "     pose: {xyz: [0.0795, 0, 0]}, velocity: [0, %g, 0, 0, 0, %g]}\n",
           dt, tube, omega, block, omega, -omega * 0.0795);
  test_world t = tw_create(yaml);
  unlink(tube), unlink(block);
  return t;
}

Test(ipc_mesh_rigid, spinning_mesh_pair_caught_by_the_real_update_audit) {
  char tube[] = "/tmp/knead_ipc_rr_XXXXXX.obj", block[] = "/tmp/knead_ipc_rr_XXXXXX.obj";
  temp_obj(tube), temp_obj(block);
  test_world t = spinning_tube(0.01, 20, tube, block);
  double q0[7];
  memcpy(q0, tw_object_q(&t, "block"), sizeof q0);
  kn_error err = {0};
  kn_status st = kn_world_step(t.world, &err);
  cr_log_info("spinning, dt 0.01: %s", err.msg);
  cr_assert_eq(st, KN_ERR_NUMERIC, "the step was not refused (%d): %s", st, err.msg);
  cr_expect(strstr(err.msg, "the collider 'tube'") && strstr(err.msg, "the collider 'block'") &&
                strstr(err.msg, "after advance") && strstr(err.msg, "time_step"),
            "%s", err.msg);
  cr_expect_eq(memcmp(q0, tw_object_q(&t, "block"), sizeof q0), 0, "the refused step moved the block");
  tw_free(&t);

  char tube2[] = "/tmp/knead_ipc_rr_XXXXXX.obj", block2[] = "/tmp/knead_ipc_rr_XXXXXX.obj";
  temp_obj(tube2), temp_obj(block2);
  t = spinning_tube(0.001, 20, tube2, block2);
  /* not ipc_step_audited: the detection's phi between two meshes, one not convex, is taken on their
   * hulls (-0.03 m for the block inside the tube); the mesh pairs replace those candidates, and the
   * crossing test below is the check. Newton's residual within eps_d is checked here. */
  kn_error e2 = {0};
  double dmin = INFINITY;
  for (int k = 0; k < 40; k++) {
    cr_assert_eq(kn_world_step(t.world, &e2), KN_OK, "spinning, dt 0.001: %s", e2.msg);
    cr_assert_leq(t.world->last.residual, t.world->last.tolerance, "step %d: Newton's residual above eps_d", k + 1);
    surface c = collider_surface(t.world, "block"), p = collider_surface(t.world, "tube");
    dmin = fmin(dmin, fmin(vt_distance(&c, &p), vt_distance(&p, &c)));
    int x = crossings_one_way(&c, &p) + crossings_one_way(&p, &c);
    cr_assert_eq(x, 0, "spinning, dt 0.001: step %d: %d edges cross", k + 1, x);
    surface_free(&c), surface_free(&p);
  }
  /* the block flies out along a straight line until the wall stops it (0.5 mm: at omega t = 0.11,
   * step 6): it came within dhat = 1e-3 l (l 0.3 m) */
  cr_log_info("spinning, dt 0.001: smallest vertex-triangle distance %.3g m", dmin);
  cr_expect_lt(dmin, 3e-4, "the block never reached the wall");
  tw_free(&t);
}

//---- FEM self-contact ----

/* A soft FEM "C" (a closed OBJ tetrahedralized by tetgen): a 2 cm bottom arm, held (fixed), a 1 cm
 * back and a 2 cm top arm over a 1 cm slot 8 cm deep, 4 cm wide (y). E 2e4 Pa: the top arm's tip
 * would sag 1.5 rho g L^4 / (E t^2) = 0.18 m under gravity as a linear cantilever, so it falls onto
 * the bottom arm and rests on it: the only contact is the body's surface with itself. Every step:
 * no surface edge crossing a triangle of the same surface that shares no vertex with it, and the
 * universal criteria; the top arm's lowest vertex comes within dhat of the bottom arm's top
 * (z = 0.02 m) and never below it. */
Test(ipc_mesh_rigid, fem_c_shape_closes_onto_itself) {
  const double p[10][2] = {{0, 0},       {0.1, 0},     {0.1, 0.02}, {0.02, 0.02}, {0.02, 0.03},
                           {0.1, 0.03},  {0.1, 0.05},  {0, 0.05},   {0, 0.03},    {0, 0.02}};
  const int cap[8][3] = {{0, 1, 2}, {0, 2, 3}, {0, 3, 9}, {9, 3, 4}, {9, 4, 8}, {7, 8, 4}, {7, 4, 5}, {7, 5, 6}};
  char path[] = "/tmp/knead_ipc_self_XXXXXX.obj";
  temp_obj(path);
  write_prism(path, 10, p, 8, cap, 0, 0.04);
  char yaml[1024];
  snprintf(yaml, sizeof yaml,
           "time_step: 0.01\n"
           "duration: 1\n"
           "contact: {backend: ipc}\n"
           "deformables:\n"
           "  - name: clip\n"
           "    shape: {mesh: %s}\n"
           "    resolution: 0.01\n"
           "    material: {type: linear_corotated, youngs_modulus: 2e4, poisson_ratio: 0.3, density: 1e3}\n"
           "    fixed: {box: {min: [-1, -1, -1], max: [1, 1, 0.0201]}}\n",
           path);
  test_world t = tw_create(yaml);
  unlink(path);
  const kn_fem_body* b = t.world->fems[0].body;
  surface s = {b->mesh.nvert, b->mesh.nsurf, 0, b->x, b->mesh.surf, NULL};
  cr_assert_eq(kn_surface_edges(s.ntri, s.tri, &s.nedge, &s.edge, NULL), KN_OK);
  cr_assert_eq(crossings_one_way(&s, &s), 0, "the rest shape's surface crosses itself");
  ipc_audit a = ipc_audit_start();
  double low = INFINITY, dhat = 0;
  for (int k = 0; k < 40; k++) {
    ipc_step_audited(&t, 1, &a);
    int x = crossings_one_way(&s, &s);
    cr_assert_eq(x, 0, "step %d: %d surface edges cross the body's own triangles", k + 1, x);
    low = INFINITY;
    for (int v = 0; v < b->mesh.nvert; v++)
      if (b->mesh.X[3 * v + 2] > 0.029) low = fmin(low, b->x[3 * v + 2]); /* the top arm's vertices */
    cr_assert_gt(low, 0.02, "step %d: the top arm went into the bottom arm (lowest z %g)", k + 1, low);
  }
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int v = 0; v < b->mesh.nvert; v++)
    for (int c = 0; c < 3; c++) lo[c] = fmin(lo[c], b->mesh.X[3 * v + c]), hi[c] = fmax(hi[c], b->mesh.X[3 * v + c]);
  dhat = 1e-3 * sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) + (hi[2] - lo[2]) * (hi[2] - lo[2]));
  ipc_audit_log("C shape", &a);
  cr_log_info("C shape: %d vertices, top arm's lowest z %.6f m (bottom arm's top 0.02, dhat %.3g)", b->mesh.nvert, low,
              dhat);
  cr_expect_lt(low - 0.02, dhat, "the top arm did not reach the bottom arm (lowest z %g)", low);
  free(s.edge);
  tw_free(&t);
}

/* a mesh cube placed exactly on a mesh plate (distance 0: a barrier cannot start there, and unsigned
 * distances cannot tell touching from crossing) is refused at the first step, naming both bodies
 * and the lift that works (dhat / 2); the world's state is left as it was. The same cube placed
 * dhat / 2 above runs (see ARCHITECTURE.md's ipc paragraph: why not shift it at load). */
Test(ipc_mesh_rigid, mesh_cube_placed_touching_is_refused_with_the_lift_that_works) { /* and one placed crossing */
  char cube[] = "/tmp/knead_ipc_rr_XXXXXX.obj", plate[] = "/tmp/knead_ipc_rr_XXXXXX.obj";
  temp_obj(cube), temp_obj(plate);
  test_world t = cube_over_plate(0.02, 0, 0, 0.1, cube, plate);
  double z0 = tw_object_q(&t, "cube")[2];
  kn_error err = {0};
  cr_assert_eq(kn_world_step(t.world, &err), KN_ERR_UNSUPPORTED, "%s", err.msg);
  cr_log_info("touching: %s", err.msg);
  double dhat = 1e-3 * 0.1 * sqrt(3.0);
  char lift[64];
  snprintf(lift, sizeof lift, "dhat / 2 = %.3g m", dhat / 2);
  cr_expect(strstr(err.msg, "the collider 'plate' and the collider 'cube'") && strstr(err.msg, lift), "%s", err.msg);
  cr_expect_eq(tw_object_q(&t, "cube")[2], z0, "the refused step moved the cube");
  tw_free(&t);
  char cube2[] = "/tmp/knead_ipc_rr_XXXXXX.obj", plate2[] = "/tmp/knead_ipc_rr_XXXXXX.obj";
  temp_obj(cube2), temp_obj(plate2);
  t = cube_over_plate(0.02, dhat / 2, 0, 0.1, cube2, plate2);
  ipc_audit a = ipc_audit_start();
  ipc_step_audited(&t, 10, &a);
  tw_free(&t);
  /* placed 1 cm into the plate: refused when the world is made, naming both */
  char cube3[] = "/tmp/knead_ipc_rr_XXXXXX.obj", plate3[] = "/tmp/knead_ipc_rr_XXXXXX.obj";
  temp_obj(cube3), temp_obj(plate3);
  tw_write_unit_cube_obj(cube3), tw_write_unit_cube_obj(plate3);
  char yaml[1024];
  snprintf(yaml, sizeof yaml,
           "contact: {backend: ipc}\n"
           "objects:\n"
           "  - {name: plate, shape: {mesh: %s, scale: [0.4, 0.4, 0.02]}, fixed: true, pose: {xyz: [0, 0, -0.01]}}\n"
           "  - {name: cube, shape: {mesh: %s, scale: [0.1, 0.1, 0.1]}, mass: 1, pose: {xyz: [0.01, 0.02, 0.04]}}\n",
           plate3, cube3);
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), "inline.yaml", &sc, &err), KN_OK, "%s", err.msg);
  cr_expect_eq(kn_world_create(sc, &w, &err), KN_ERR_UNSUPPORTED, "a crossing start was accepted");
  unlink(cube3), unlink(plate3);
  cr_log_info("crossing: %s", err.msg);
  cr_expect(strstr(err.msg, "the collider 'plate' and the collider 'cube' start intersecting"), "%s", err.msg);
  kn_world_free(w);
  kn_scene_free(sc);
}
