/* Two soft spheres (r 0.1, E 1e5) fly at each other at 0.5 m/s each, collide and separate
 * (FEM-FEM vertex-surface contact); the deepest penetration of one's surface vertices into the
 * other's surface stays below 1 mm. */
#include "fem_util.h"

Test(fem_spheres, collide_and_separate) {
  const char* yaml =
      "time_step: 0.002\n"
      "duration: 0.4\n"
      "gravity: [0, 0, 0]\n"
      "contact: {margin: 0.004}\n"
      "deformables:\n"
      "  - name: left\n"
      "    shape: {sphere: 0.1}\n"
      "    resolution: 0.06\n"
      "    material: {youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n"
      "    pose: {xyz: [-0.13, 0, 0]}\n"
      "    velocity: [0.5, 0, 0]\n"
      "  - name: right\n"
      "    shape: {sphere: 0.1}\n"
      "    resolution: 0.06\n"
      "    material: {youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n"
      "    pose: {xyz: [0.13, 0, 0]}\n"
      "    velocity: [-0.5, 0, 0]\n";
  test_world t = tw_create(yaml);
  kn_world* w = t.world;
  long n = kn_world_total_steps(w);
  double worst = INFINITY, fmax_seen = 0;
  int touched = 0;
  kn_error err;
  double t0 = kn_wall_time();
  for (long k = 0; k < n; k++) {
    cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s", err.msg);
    fmax_seen = fmax(fmax_seen, fabs(w->fems[0].force[0]));
    if (w->last.contacts > 0) touched = 1;
    /* minimum signed distance of each body's surface vertices to the other's surface */
    for (int a = 0; a < 2; a++) {
      const kn_world_fem* A = &w->fems[a];
      const kn_fem_body* B = w->fems[1 - a].body;
      for (int s = 0; s < A->nsurf_vert; s++) {
        const double* x = A->body->x + 3 * A->surf_vert[s];
        if (fabs(x[0]) > 0.02) continue; /* only near the contact plane x = 0 */
        worst = fmin(worst, kn_sim_fem_surface_distance(B, x));
      }
    }
  }
  double c0[3], c1[3], v0 = 0, v1 = 0, m0 = 0, m1 = 0;
  kn_sim_deformable_centroid(&w->fems[0], c0);
  kn_sim_deformable_centroid(&w->fems[1], c1);
  for (int v = 0; v < w->fems[0].body->mesh.nvert; v++) {
    v0 += w->fems[0].body->mass[v] * w->fems[0].body->v[3 * v], m0 += w->fems[0].body->mass[v];
    v1 += w->fems[1].body->mass[v] * w->fems[1].body->v[3 * v], m1 += w->fems[1].body->mass[v];
  }
  v0 /= m0, v1 /= m1;
  printf("fem spheres: %ld steps in %.2f s wall, %d vertices each: minimum signed distance %.3e m, peak force %.3g N, "
         "final centroids x %.4f / %.4f, velocities %.4f / %.4f m/s\n",
         n, kn_wall_time() - t0, w->fems[0].body->mesh.nvert, worst, fmax_seen, c0[0], c1[0], v0, v1);
  cr_assert(touched, "the spheres must touch");
  cr_assert_gt(worst, -1e-3, "penetration %g m", -worst);
  cr_assert_lt(v0, 0, "left must bounce back (v %g)", v0);
  cr_assert_gt(v1, 0, "right must bounce back (v %g)", v1);
  cr_assert_lt(fabs(v0 + v1), 1e-6, "momentum is conserved (symmetric)");
  cr_assert_gt(c1[0] - c0[0], 0.2, "separated");
  tw_free(&t);
}
