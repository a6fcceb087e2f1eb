/* Rigid features pressed into FEM faces, and the FEM surface tree against brute force.
 *
 * (a) A rigid ball (r 1 cm, 0.1 kg) rests on the middle of a coarse soft slab's top face
 *     (0.2 x 0.2 x 0.05 m, edge 0.05 m: the ball touches no slab vertex). Only the ball's deepest
 *     point can hold it (KN_CANDIDATE_FEM_RIGID_FACE); without it the ball falls through the
 *     face. At rest its lowest point must be within 2 mm of the deformed surface and the slab's
 *     contact force on it must balance its weight m g = 0.981 N within 2 % (statics).
 * (a') The same with a flat box (3 x 2 x 1 cm, 0.1 kg): its corners hold it.
 * (b) The AABB tree query equals the brute-force query (same triangle, same weights, same phi to
 *     1e-12, same sign) at points around a deformed sphere, and the FEM detector of contact/ gives
 *     identical candidates with the tree and by brute force on two overlapping soft spheres. */
#include "fem_util.h"
#include "sim/candidates.h"

// (shape line of the rigid object, its pose z) => ball/bar on a slab scene
static const char* press_scene(const char* shape, double x, double y, double z, double duration) {
  static char buf[2048];
  snprintf(buf, sizeof buf,
           "time_step: 0.002\n"
           "duration: %g\n"
           "contact: {margin: 0.001}\n"
           "objects:\n"
           "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, friction: 0.8}\n"
           "  - {name: presser, shape: %s, mass: 0.1, pose: {xyz: [%g, %g, %g]}, friction: 0.8}\n"
           "deformables:\n"
           "  - name: slab\n"
           "    shape: {box: [0.2, 0.2, 0.05]}\n"
           "    resolution: 0.05\n"
           "    material: {youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n"
           "    pose: {xyz: [0, 0, 0.025]}\n"
           "    friction: 0.8\n",
           duration, shape, x, y, z);
  return buf;
}

// the slab's contact force on collider `name` (the force on B is f, on A -f)
static void force_on(const kn_world* w, const char* name, double f[3]) {
  f[0] = f[1] = f[2] = 0;
  for (int c = 0; c < w->nfem_contact; c++) {
    const kn_world_fem_contact* k = &w->fem_contacts[c];
    if (k->a_collider >= 0 && strcmp(w->colliders[k->a_collider].name, name) == 0)
      for (int a = 0; a < 3; a++) f[a] -= k->f[a];
  }
}

// (world after a step, candidate origin) => its FEM contacts of that origin (kn_world_fem_contact.kind
// counts from KN_CANDIDATE_FEM_VERTEX_RIGID)
static int count_kind(const kn_world* w, kn_candidate_origin origin) {
  int kind = (int)(origin - KN_CANDIDATE_FEM_VERTEX_RIGID), n = 0;
  for (int c = 0; c < w->nfem_contact; c++) n += w->fem_contacts[c].kind == kind;
  return n;
}

Test(fem_contact, ball_held_by_face) {
  const double r = 0.01, m = 0.1, g = 9.81;
  test_world t = tw_create(press_scene("{sphere: 0.01}", 0.02, 0.03, 0.05 + r + 5e-4, 0.6));
  kn_world* w = t.world;
  /* no slab vertex under the ball's footprint: the face alone must hold it */
  const kn_world_fem* F = &w->fems[0];
  for (int s = 0; s < F->nsurf_vert; s++) {
    const double* x = F->body->x + 3 * F->surf_vert[s];
    cr_assert(hypot(x[0] - 0.02, x[1] - 0.03) > 2 * r, "vertex %d under the ball", F->surf_vert[s]);
  }
  double worst = INFINITY;
  long n = kn_world_total_steps(w);
  kn_error err;
  for (long k = 0; k < n; k++) {
    cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s", err.msg);
    const double* q = tw_object_q(&t, "presser");
    double low[3] = {q[0], q[1], q[2] - r};
    worst = fmin(worst, kn_sim_fem_surface_distance(F->body, low));
  }
  const double* q = tw_object_q(&t, "presser");
  double f[3], low[3] = {q[0], q[1], q[2] - r};
  double phi_end = kn_sim_fem_surface_distance(F->body, low);
  force_on(w, "presser", f);
  int nface = count_kind(w, KN_CANDIDATE_FEM_RIGID_FACE);
  printf("ball on slab face: z %.5f m, lowest point phi %.3e m at the end (min %.3e), force on ball (%.4f, %.4f, "
         "%.4f) N vs weight %.4f N (%.3f %%), %d rigid-face contacts, %d FEM contacts\n",
         q[2], phi_end, worst, f[0], f[1], f[2], m * g, 100 * (f[2] - m * g) / (m * g), nface, w->nfem_contact);
  cr_assert_gt(nface, 0, "the ball is held by a rigid-point-in-face contact");
  cr_assert_gt(worst, -2e-3, "penetration %g m, expected < 2 mm", -worst);
  cr_assert_lt(fabs(phi_end), 2e-3, "the ball rests at the surface (phi %g m)", phi_end);
  cr_assert_gt(q[2], 0.04, "the ball did not sink into the slab (z %g)", q[2]);
  cr_assert_lt(fabs(f[2] - m * g), 0.02 * m * g, "contact force %g N vs weight %g N", f[2], m * g);
  cr_assert_lt(hypot(f[0], f[1]), 0.02 * m * g, "no net tangential force at rest");
  tw_free(&t);
}

Test(fem_contact, box_held_by_face) {
  /* a flat box 3 x 2 x 1 cm on the face: its bottom corners and edges press into one or two
   * triangles, away from every slab vertex */
  const double m = 0.1, g = 9.81, e = 0.005;
  test_world t = tw_create(press_scene("{box: [0.03, 0.02, 0.01]}", 0.02, 0.03, 0.05 + e + 5e-4, 0.6));
  kn_world* w = t.world;
  const kn_world_fem* F = &w->fems[0];
  double worst = INFINITY;
  long n = kn_world_total_steps(w);
  kn_error err;
  for (long k = 0; k < n; k++) {
    cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s", err.msg);
    const double* q = tw_object_q(&t, "presser");
    for (int c = 0; c < 4; c++) { /* the bottom corners (the box stays level: checked below) */
      double low[3] = {q[0] + (c & 1 ? 0.015 : -0.015), q[1] + (c & 2 ? 0.01 : -0.01), q[2] - e};
      worst = fmin(worst, kn_sim_fem_surface_distance(F->body, low));
    }
  }
  const double* q = tw_object_q(&t, "presser");
  double f[3];
  force_on(w, "presser", f);
  printf("box on slab face: z %.5f m, quaternion (%.5f %.5f %.5f %.5f), min phi of the bottom corners %.3e m, force "
         "(%.4f, %.4f, %.4f) N vs weight %.4f N (%.3f %%), %d rigid-face contacts\n",
         q[2], q[3], q[4], q[5], q[6], worst, f[0], f[1], f[2], m * g, 100 * (f[2] - m * g) / (m * g),
         count_kind(w, KN_CANDIDATE_FEM_RIGID_FACE));
  cr_assert_gt(count_kind(w, KN_CANDIDATE_FEM_RIGID_FACE), 0);
  cr_assert_gt(fabs(q[3]), 0.999, "the box stays level");
  cr_assert_gt(worst, -2e-3, "penetration %g m, expected < 2 mm", -worst);
  cr_assert_gt(q[2], 0.05, "the box did not sink into the slab (z %g)", q[2]);
  cr_assert_lt(fabs(f[2] - m * g), 0.02 * m * g, "contact force %g N vs weight %g N", f[2], m * g);
  tw_free(&t);
}

static const char* spheres_yaml =
    "time_step: 0.002\n"
    "duration: 0.1\n"
    "gravity: [0, 0, 0]\n"
    "contact: {margin: 0.002}\n"
    "objects:\n"
    "  - {name: pin, shape: {capsule: [0.01, 0.06]}, fixed: true, pose: {xyz: [0, 0.05, 0]}}\n"
    "deformables:\n"
    "  - name: left\n"
    "    shape: {sphere: 0.1}\n"
    "    resolution: 0.06\n"
    "    material: {youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n"
    "    pose: {xyz: [-0.095, 0, 0]}\n"
    "    velocity: [0.5, 0, 0]\n"
    "  - name: right\n"
    "    shape: {sphere: 0.1}\n"
    "    resolution: 0.06\n"
    "    material: {youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n"
    "    pose: {xyz: [0.095, 0, 0]}\n"
    "    velocity: [-0.5, 0, 0]\n";

Test(fem_contact, tree_equals_brute_force) {
  test_world t = tw_create(spheres_yaml);
  kn_world* w = t.world;
  tw_step(&t, 10); /* deformed, overlapping */
  kn_error err;
  cr_assert_leq(w->nfem, 4);
  cr_assert_leq(w->ncollider, 8);
  kn_contact_fem fems[4];
  kn_soft_collider soft[8];
  for (int i = 0; i < w->nfem; i++) fems[i] = kn_sim_fem_view(&w->fems[i]);
  for (int k = 0; k < w->ncollider; k++) soft[k] = kn_sim_soft_collider(w, k);
  kn_contact_fem_detector *tree, *brute;
  cr_assert_eq(kn_contact_fem_detector_create(fems, w->nfem, 0, &tree, &err), KN_OK);
  cr_assert_eq(kn_contact_fem_detector_create(fems, w->nfem, 1, &brute, &err), KN_OK);
  /* 1. point queries on a grid around the left sphere */
  const kn_contact_fem* b = &fems[0];
  kn_contact_surface* surf = kn_contact_surface_create(b);
  cr_assert_not_null(surf);
  int nq = 0, ninside = 0;
  for (int i = 0; i < 14; i++)
    for (int j = 0; j < 14; j++)
      for (int k = 0; k < 14; k++) {
        double p[3] = {-0.095 - 0.13 + 0.26 * (i + 0.37) / 14, -0.13 + 0.26 * (j + 0.61) / 14, -0.13 + 0.26 * (k + 0.23) / 14};
        kn_contact_surface_hit a, c;
        kn_contact_surface_query(surf, b, p, &a);
        kn_contact_surface_query_brute(b, p, &c);
        cr_assert_eq(a.tri, c.tri, "point %d: triangle %d vs %d", nq, a.tri, c.tri);
        cr_assert_lt(fabs(a.phi - c.phi), 1e-12, "point %d: phi %.17g vs %.17g", nq, a.phi, c.phi);
        for (int q = 0; q < 3; q++) {
          cr_assert_eq(a.wt[q], c.wt[q]);
          cr_assert_lt(fabs(a.n[q] - c.n[q]), 1e-12);
        }
        nq++, ninside += a.phi < 0;
      }
  kn_contact_surface_free(surf);
  /* 2. the detection */
  kn_pose X[8];
  for (int i = 0; i < w->ncollider; i++) kn_sim_collider_pose(w, i, &X[i]);
  kn_contact_candidate_list lt = {0}, lb = {0};
  const double margin = w->scene->margin;
  cr_assert_eq(kn_contact_fem_detect(tree, fems, w->collision, soft, X, margin, &lt, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_contact_fem_detect(brute, fems, w->collision, soft, X, margin, &lb, &err), KN_OK, "%s", err.msg);
  int kinds[3] = {0, 0, 0};
  cr_assert_eq(lt.n, lb.n, "%d contacts with the tree, %d by brute force", lt.n, lb.n);
  for (int c = 0; c < lt.n; c++) {
    const kn_contact_candidate *x = &lt.c[c], *y = &lb.c[c];
    kinds[x->origin - KN_CANDIDATE_FEM_VERTEX_RIGID]++;
    cr_assert_eq(x->origin, y->origin);
    cr_assert_eq(x->source, c);
    cr_assert_eq(memcmp(&x->a, &y->a, sizeof x->a), 0, "contact %d: side A differs", c);
    cr_assert_eq(memcmp(&x->b, &y->b, sizeof x->b), 0, "contact %d: side B differs", c);
    cr_assert_lt(fabs(x->phi - y->phi), 1e-12);
    for (int q = 0; q < 9; q++) cr_assert_lt(fabs(x->R_WC[q] - y->R_WC[q]), 1e-12);
  }
  printf("tree vs brute force: %d point queries (%d inside) identical; %d contacts identical (%d vertex-rigid, %d "
         "vertex-FEM, %d rigid-face)\n",
         nq, ninside, lt.n, kinds[0], kinds[1], kinds[2]);
  cr_assert_gt(ninside, 100);
  cr_assert_gt(kinds[1], 0, "the spheres overlap");
  kn_contact_candidate_list_free(&lt);
  kn_contact_candidate_list_free(&lb);
  kn_contact_fem_detector_free(tree);
  kn_contact_fem_detector_free(brute);
  tw_free(&t);
}
