/* The penalty backend honours the bodies' contact material stiffness (issue 19;
 * sim/penalty_stiffness.h): a pair's spring k is its two sides' stiffness in series, a side whose
 * scene sets none standing as 2 contact.penalty.stiffness (so a pair of those is the key's value
 * exactly, as before).
 *   own_k      two identical 0.1 m, 0.1 kg cubes on one rigid floor (stiffness inf: the pair is
 *              the cube's own), one 2e4 N/m and one 4x stiffer (8e4): each rests on its four corner
 *              springs at m g / (4 k), 1.22625e-5 m and 3.065625e-6 m, their ratio 4.
 *   unset      the same on a floor that sets no stiffness: it stands as 2 x 1e5 (the default key with
 *              continuous: false), so a cube without the key rests at m g / (4 1e5) and one of 6e4
 *              at m g / (4 x 4.6154e4) (6e4 and 2e5 in series).
 *   pairs      the continuous mode's pairs: a cube of 5e4 N/m on a rigid box plate, on its four corner
 *              pairs at m g / (4 k).
 *   FEM        an FEM cube of 5e4 N/m on a rigid floor: its bottom vertices' depths sum to m g / k.
 *   MPM        an MPM cube of 5e4 N/m on a rigid floor: each particle's normal force is k times its depth.
 * (Each stiffness differs from the 2e5 (discrete) or 2e4 (continuous) an unset side stands for, so a
 * key ignored would show.)
 *   rigid      two rigid sides (inf and inf) have no spring: the step fails naming the contact.
 * Depths to 1e-9 m: at rest Newton's residual (1e-8 m/s, contact.penalty.tolerance) moves a spring
 * by at most dt 1e-8 = 1e-10 m. Each run 1.5 s of simulated time at dt 0.01: the cube, dropped from
 * 1 mm, has settled (the springs' backward Euler damps the bounce within ~0.5 s); the continuous
 * pairs 4 s (at 1.5 s the cube is still 3.6e-8 m off: their damping, k h / 2, is weaker). < 1 s in all. */
#include "deformable/deformable.h"
#include "scene_util.h"

static const double g = 9.81, m = 0.1;
static const double kdef = 1e5; /* contact.penalty.stiffness unset, continuous: false (scene.h) */

// depth of the cube named `name` (0.1 m, centre at q[2]) below the floor's top z0
static double depth(test_world* t, const char* name, double z0) { return z0 + 0.05 - tw_object_q(t, name)[2]; }

Test(penalty_materials, cubes_rest_at_their_own_stiffness) {
  const char* yaml = "time_step: 0.01\nduration: 2\ngravity: [0, 0, -9.81]\n"
                     "contact: {backend: penalty}\n"
                     "objects:\n"
                     "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, stiffness: inf}\n"
                     "  - {name: soft, shape: {box: [0.1, 0.1, 0.1]}, mass: 0.1, pose: {xyz: [0, 0, 0.051]},"
                     " stiffness: 2e4}\n"
                     "  - {name: stiff, shape: {box: [0.1, 0.1, 0.1]}, mass: 0.1, pose: {xyz: [0.3, 0, 0.051]},"
                     " stiffness: 8e4}\n";
  test_world t = tw_create(yaml);
  tw_step(&t, 150);
  double ds = depth(&t, "soft", 0), dh = depth(&t, "stiff", 0);
  cr_log_info("own k: soft %.12e m (m g / 4k %.12e), stiff %.12e m (%.12e), ratio %.12f", ds, m * g / (4 * 2e4), dh,
              m * g / (4 * 8e4), ds / dh);
  cr_expect(fabs(ds - m * g / (4 * 2e4)) < 1e-9, "soft cube at %.12e m", ds);
  cr_expect(fabs(dh - m * g / (4 * 8e4)) < 1e-9, "stiff cube at %.12e m", dh);
  /* the ratio's error bound: 4 (1e-10 / 1.2e-5 + 1e-10 / 3.1e-6) = 1.6e-4 from the depths' (above) */
  cr_expect(fabs(ds / dh - 4) < 1.6e-4, "depth ratio %.12f, expected 4", ds / dh);
  tw_free(&t);
}

Test(penalty_materials, an_unset_side_stands_as_twice_the_key) {
  const char* yaml = "time_step: 0.01\nduration: 2\ngravity: [0, 0, -9.81]\n"
                     "contact: {backend: penalty}\n"
                     "objects:\n"
                     "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
                     "  - {name: plain, shape: {box: [0.1, 0.1, 0.1]}, mass: 0.1, pose: {xyz: [0, 0, 0.051]}}\n"
                     "  - {name: set, shape: {box: [0.1, 0.1, 0.1]}, mass: 0.1, pose: {xyz: [0.3, 0, 0.051]},"
                     " stiffness: 6e4}\n";
  test_world t = tw_create(yaml);
  tw_step(&t, 150);
  double dp = depth(&t, "plain", 0), dset = depth(&t, "set", 0), kset = 6e4 * 2 * kdef / (6e4 + 2 * kdef);
  cr_log_info("unset floor: plain %.12e m (m g / 4k %.12e), set %.12e m (k %g: %.12e)", dp, m * g / (4 * kdef), dset, kset,
              m * g / (4 * kset));
  cr_expect(fabs(dp - m * g / (4 * kdef)) < 1e-9, "a cube setting no stiffness at %.12e m", dp);
  cr_expect(fabs(dset - m * g / (4 * kset)) < 1e-9, "a cube of 6e4 N/m at %.12e m", dset);
  tw_free(&t);
}

Test(penalty_materials, continuous_pairs_take_the_pair_stiffness) {
  const double top = 0.001; /* the plate's top face */
  const char* yaml = "time_step: 0.01\nduration: 4\ngravity: [0, 0, -9.81]\n"
                     "contact: {backend: penalty, penalty: {continuous: true}}\n"
                     "objects:\n"
                     "  - {name: plate, shape: {box: [1, 1, 0.002]}, fixed: true, stiffness: inf}\n"
                     "  - {name: cube, shape: {box: [0.1, 0.1, 0.1]}, mass: 0.1, pose: {xyz: [0.013, 0.021, 0.052]},"
                     " stiffness: 5e4}\n";
  test_world t = tw_create(yaml);
  tw_step(&t, 400);
  double d = depth(&t, "cube", top);
  cr_log_info("continuous pairs: cube %.12e m (m g / 4k %.12e)", d, m * g / (4 * 5e4));
  cr_expect(fabs(d - m * g / (4 * 5e4)) < 1e-9, "cube on its four corner pairs at %.12e m", d);
  tw_free(&t);
}

Test(penalty_materials, two_rigid_sides_are_refused) {
  const char* yaml = "time_step: 0.01\nduration: 1\ngravity: [0, 0, -9.81]\n"
                     "contact: {backend: penalty}\n"
                     "objects:\n"
                     "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, stiffness: inf}\n"
                     "  - {name: cube, shape: {box: [0.1, 0.1, 0.1]}, mass: 0.1, pose: {xyz: [0, 0, 0.0505]},"
                     " stiffness: inf}\n";
  test_world t = tw_create(yaml);
  kn_error err = {0};
  cr_assert_eq(kn_world_step(t.world, &err), KN_ERR_INVALID, "%s", err.msg);
  cr_log_info("refused: %s", err.msg);
  cr_expect(strstr(err.msg, "'floor'") && strstr(err.msg, "'cube'") && strstr(err.msg, "stiffness inf"), "%s", err.msg);
  tw_free(&t);
}

/* an FEM side: a 0.2 m FEM cube (8 vertices, 2.4 g) of stiffness 5e4 N/m on a rigid floor carries its
 * weight on its four bottom vertices' springs, so their depths sum to m g / k (each vertex's share
 * is the mesh's, the sum is not) */
Test(penalty_materials, an_fem_side_takes_its_stiffness) {
  const char* yaml = "time_step: 0.01\nduration: 2\ngravity: [0, 0, -9.81]\n"
                     "contact: {backend: penalty}\n"
                     "objects:\n"
                     "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, stiffness: inf}\n"
                     "deformables:\n"
                     "  - name: cube\n    model: fem\n    shape: {box: [0.2, 0.2, 0.2]}\n    resolution: 0.2\n"
                     "    material: {type: linear_corotated, youngs_modulus: 1e6, poisson_ratio: 0.45, density: 0.3}\n"
                     "    pose: {xyz: [0, 0, 0.1001]}\n    stiffness: 5e4\n";
  test_world t = tw_create(yaml);
  tw_step(&t, 150);
  const kn_fem_body* b = t.world->fems[0].body;
  double sum = 0, mass = 0;
  int n = 0;
  for (int v = 0; v < b->mesh.nvert; v++) {
    mass += b->mass[v];
    if (b->x[3 * v + 2] < 0) sum -= b->x[3 * v + 2], n++;
  }
  cr_log_info("FEM side: %d vertices below the floor, depths sum %.12e m (m g / k %.12e)", n, sum, mass * g / 5e4);
  cr_expect_eq(n, 4, "%d vertices in the floor", n);
  cr_expect(fabs(sum - mass * g / 5e4) < 4e-10, "depths sum to %.12e m", sum);
  tw_free(&t);
}

/* an MPM side: a 64-particle MPM cube (8 g) of stiffness 5e4 N/m resting on a rigid floor: every
 * particle spring's normal force over its depth is k. The outputs give the depth at the step's start
 * and the force at its end; at rest they differ by dt |v_n| <= dt 1e-8 m/s (Newton's tolerance) =
 * 1e-10 m on a depth of m g / (16 k) = 9.8e-8 m, so 1e-3 (measured 6.6e-6; an unset side, 2e5,
 * would be 3 off) */
Test(penalty_materials, an_mpm_side_takes_its_stiffness) {
  const char* yaml = "time_step: 0.01\nduration: 1\ngravity: [0, 0, -9.81]\n"
                     "contact: {backend: penalty}\n"
                     "objects:\n"
                     "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, stiffness: inf}\n"
                     "deformables:\n  - name: dough\n    model: mpm\n    shape: {box: [0.2, 0.2, 0.2]}\n"
                     "    resolution: 0.1\n"
                     "    material: {type: linear_corotated, youngs_modulus: 1e3, poisson_ratio: 0.3, density: 1}\n"
                     "    pose: {xyz: [0, 0, 0.075]}\n    stiffness: 5e4\n";
  test_world t = tw_create(yaml);
  tw_step(&t, 100);
  const kn_world* w = t.world;
  double worst = 0;
  int n = 0;
  for (int j = 0; j < w->nmpm_contact; j++) {
    const kn_world_mpm_contact* c = &w->mpm_contacts[j];
    double fn = c->f[0] * c->n[0] + c->f[1] * c->n[1] + c->f[2] * c->n[2]; /* on the collider, along n */
    if (!(c->phi < 0)) continue;
    worst = fmax(worst, fabs(fn / -c->phi / 5e4 - 1)), n++;
  }
  cr_log_info("MPM side: %d particle springs, f_n / depth off 5e4 N/m by %.3e at most", n, worst);
  cr_expect_eq(n, 16, "%d particles in the floor", n);
  cr_expect(worst < 1e-3, "f_n / depth off k by %.3e", worst);
  tw_free(&t);
}
