/* Two soft spheres (r 0.1, E 1e5) fly at each other at 0.5 m/s each, collide and separate
 * (FEM-FEM vertex-surface contact). The contact's dissipation time is short (0.005 s per
 * surface, 0.01 s for the pair: kn_contact_material_combine sums them), so the compliant contact
 * lets the surfaces actually meet instead of stopping them ~2 mm apart as the default 0.1 s +
 * 0.1 s with margin 4 mm did (that made the penetration bound vacuous). contact.margin is 2 mm,
 * one step of the 1 m/s approach (dt 0.002 s): a vertex enters the SAP problem the step before it
 * would cross the other surface (with margin 0 it is only seen once inside, up to one step of
 * travel deep: -0.84 mm measured). Over the run the most negative signed distance of either
 * sphere's surface vertices to the other's surface must show real contact (< 0.5 mm: the
 * surfaces closed to within half a millimetre or overlapped; measured -0.19 mm) and a penetration
 * under 1 mm (the bound); afterwards the relative velocity has reversed (measured +0.80
 * m/s from -1) and the surfaces are apart again (positive gap). */
#include "fem_util.h"

// (a, b) => min over a's surface vertices near the plane x = 0 of their signed distance to b
static double min_gap(const kn_world_fem* A, const kn_fem_body* B, double band) {
  double worst = INFINITY;
  for (int s = 0; s < A->nsurf_vert; s++) {
    const double* x = A->body->x + 3 * A->surf_vert[s];
    if (fabs(x[0]) > band) continue; /* the contact plane is x = 0 by symmetry */
    worst = fmin(worst, kn_sim_fem_surface_distance(B, x));
  }
  return worst;
}

// mass-weighted mean x velocity
static double mean_vx(const kn_fem_body* b) {
  double p = 0, m = 0;
  for (int v = 0; v < b->mesh.nvert; v++) p += b->mass[v] * b->v[3 * v], m += b->mass[v];
  return p / m;
}

Test(fem_spheres, collide_and_separate) {
  const char* yaml =
      "time_step: 0.002\n"
      "duration: 0.4\n"
      "gravity: [0, 0, 0]\n"
      "contact: {margin: 0.002}\n" /* one step of the approach, see above */
      "deformables:\n"
      "  - name: left\n"
      "    shape: {sphere: 0.1}\n"
      "    resolution: 0.06\n"
      "    material: {youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n"
      "    pose: {xyz: [-0.13, 0, 0]}\n"
      "    velocity: [0.5, 0, 0]\n"
      "    dissipation_time: 0.005\n"
      "  - name: right\n"
      "    shape: {sphere: 0.1}\n"
      "    resolution: 0.06\n"
      "    material: {youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n"
      "    pose: {xyz: [0.13, 0, 0]}\n"
      "    velocity: [-0.5, 0, 0]\n"
      "    dissipation_time: 0.005\n";
  test_world t = tw_create(yaml);
  kn_world* w = t.world;
  long n = kn_world_total_steps(w);
  double worst = INFINITY, fmax_seen = 0, vrel_min = INFINITY;
  long contact_steps = 0;
  kn_error err;
  double t0 = kn_wall_time();
  for (long k = 0; k < n; k++) {
    cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s", err.msg);
    fmax_seen = fmax(fmax_seen, fabs(w->fems[0].force[0]));
    if (w->last.contacts > 0) contact_steps++;
    for (int a = 0; a < 2; a++) worst = fmin(worst, min_gap(&w->fems[a], w->fems[1 - a].body, 0.03));
    vrel_min = fmin(vrel_min, mean_vx(w->fems[1].body) - mean_vx(w->fems[0].body));
  }
  double c0[3], c1[3];
  kn_sim_deformable_centroid(&w->fems[0], c0);
  kn_sim_deformable_centroid(&w->fems[1], c1);
  double v0 = mean_vx(w->fems[0].body), v1 = mean_vx(w->fems[1].body);
  double gap_end = fmin(min_gap(&w->fems[0], w->fems[1].body, INFINITY), min_gap(&w->fems[1], w->fems[0].body, INFINITY));
  printf("fem spheres: %ld steps in %.2f s wall, %d vertices each, contact in %ld steps: minimum signed distance "
         "%.3e m, peak force %.3g N, final gap %.4f m, centroids x %.4f / %.4f, velocities %.4f / %.4f m/s "
         "(relative: -1 at the start, %.4f at the end)\n",
         n, kn_wall_time() - t0, w->fems[0].body->mesh.nvert, contact_steps, worst, fmax_seen, gap_end, c0[0], c1[0],
         v0, v1, v1 - v0);
  cr_assert_gt(contact_steps, 0, "the spheres must touch");
  cr_assert_lt(worst, 5e-4, "the surfaces never came within 0.5 mm (min signed distance %g m): no real contact", worst);
  cr_assert_gt(worst, -1e-3, "penetration %g m, expected < 1 mm", -worst);
  cr_assert_lt(vrel_min, -0.99, "they approach at ~1 m/s (min relative velocity %g)", vrel_min);
  cr_assert_lt(v0, 0, "left must bounce back (v %g)", v0);
  cr_assert_gt(v1, 0, "right must bounce back (v %g)", v1);
  cr_assert_gt(v1 - v0, 0.1, "relative velocity reversed (%g m/s)", v1 - v0);
  cr_assert_lt(fabs(v0 + v1), 1e-6, "momentum is conserved (symmetric)");
  cr_assert_gt(gap_end, 0, "apart at the end (gap %g m)", gap_end);
  tw_free(&t);
}
