/* T14 for MPM (digest §6.2, §9): one SAP step of an MPM cube pressed into a free rigid box (itself on
 * the ground), solved with the Schur complement of A_MPM on the contact particles' grid nodes
 * (mpm_clique: schur), with the whole grid as a sparse clique (mpm_clique: grid, CHOLMOD) and with
 * the full A_MPM as a dense clique (fem_schur: false). The three are one SAP problem (the same R:
 * the Delassus estimate from diag(A_MPM) on every route): particle velocities and the box's
 * velocity agree to 1e-10 (relative to the largest speed), and the step had MPM contacts. */
#include "scene_util.h"

enum { SCHUR, GRID, FULL };

static const char* scene(int route) {
  static char buf[2048];
  snprintf(buf, sizeof buf,
           "time_step: 0.01\nduration: 0.01\n"
           "contact: {solver: {fem_schur: %s, mpm_clique: %s, rel_tolerance: 1e-14, abs_tolerance: 1e-16, "
           "max_iterations: 200}}\n"
           "objects:\n"
           "  - {name: ground, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
           "  - {name: plate, shape: {box: [0.4, 0.4, 0.1]}, mass: 2.0, pose: {xyz: [0, 0, 0.05]}}\n"
           "deformables:\n  - name: jelly\n    model: mpm\n    shape: {box: [0.1, 0.1, 0.1]}\n"
           "    resolution: 0.05\n    particles_per_cell: 8\n"
           "    material: {youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n"
           "    pose: {xyz: [0.01, 0.02, 0.13]}\n    velocity: [0.1, 0, -0.5]\n    friction: 0.3\n",
           route == FULL ? "false" : "true", route == GRID ? "grid" : "schur");
  return buf;
}

static void compare(int route_b) {
  test_world a = tw_create(scene(SCHUR)), b = tw_create(scene(route_b));
  tw_step(&a, 1);
  tw_step(&b, 1);
  const kn_mpm_body *pa = a.world->mpms[0].body, *pb = b.world->mpms[0].body;
  double vmax = 0, dmax = 0;
  for (int k = 0; k < 3 * pa->np; k++) {
    vmax = fmax(vmax, fabs(pa->v[k]));
    dmax = fmax(dmax, fabs(pa->v[k] - pb->v[k]));
  }
  const double *qa = tw_object_q(&a, "plate"), *qb = tw_object_q(&b, "plate");
  double* va = a.world->trees[a.world->objects[1].tree].v;
  double* vb = b.world->trees[b.world->objects[1].tree].v;
  double dr = 0;
  for (int k = 0; k < 6; k++) dr = fmax(dr, fabs(va[k] - vb[k]));
  printf("mpm schur: %d MPM contacts, %d particles; max |v_schur - v_%s| particles %.3e (max speed %.3e), "
         "plate %.3e; plate z %.9f vs %.9f\n", a.world->mpms[0].ncontact, pa->np, route_b == GRID ? "grid" : "full",
         dmax, vmax, dr, qa[2], qb[2]);
  cr_assert_gt(a.world->mpms[0].ncontact, 0);
  cr_assert_lt(dmax, 1e-10 * vmax);
  cr_assert_lt(dr, 1e-10 * fmax(vmax, 1.0));
  tw_free(&a);
  tw_free(&b);
}

Test(mpm_schur, elimination_matches_full_clique) { compare(FULL); }

Test(mpm_schur, elimination_matches_sparse_grid_clique) { compare(GRID); }
