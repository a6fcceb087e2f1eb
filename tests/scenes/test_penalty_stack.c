/* The penalty backend, penalty-coulomb-friction.md §6.3 (the paper's stack): a mixed stack of five
 * blocks on the ground, bottom to top rigid, FEM, FEM, rigid, rigid, with the backend's defaults
 * (k = 1e4 N/m per contact, tolerance 1e-8 m/s) and the default gravity. Sticking anchors never move
 * (§3.6), so once settled the stack cannot creep. Pass (digest [D]): after settling, the drift of
 * every FEM vertex and every rigid block's corners between frame N1 and N2 >> N1 stays below 1e-6 m
 * and does not grow with N2 (the drift from N1 to N2 = 2 N1 against N1 to N2 = 10 N1).
 *
 * Scaled from the paper's 2 m boxes at k = 1e6 to the digest's 0.2 m cubes of density 1 (8 g, the
 * §6.1 block; FEM: 8 vertices, E = 1e6 Pa, nu = 0.45, the paper's), so that the default k holds
 * them (the bottom contact carries 5 x 8 g: 0.1 mm sink per corner) and each step is cheap; the FEM
 * blocks are offset 1 cm and 2 cm sideways as in the paper. N1 = 200 steps of dt 0.01 (2 s),
 * N2 = 2000 (20 s): about a second in Release, ~10 s under the sanitizers. The blocks start 1 mm
 * apart (each interface's springs then load from a small drop instead of from phi = 0 exactly).
 *
 * DISABLED (2026-11-26, wt-pscenes): the scene does not run yet. The Newton solve stalls on the
 * rigid block r3 resting on the FEM block d2: step 29 (t = 0.28 s), 13 contacts, "after 10 lagged
 * passes: Newton iteration 19: stalled, velocity residual 0.0426 m/s at DoF 6 of 'r3'"; placed
 * touching (0.2 m apart) it stalls at step 3 on r3 as well. An all-rigid five-block stack and an FEM
 * block on a rigid one (offset 1 cm) run; an FEM block placed exactly edge-on-edge on a rigid one
 * stalls at step 62 with a residual of 2e-6 m/s (the tolerance is 1e-8). So the rigid feature points
 * in FEM faces (sim/penalty_faces.c) are the suspect; not diagnosed. Enable when it runs. */
#include "scene_util.h"

#define NSTEP 2000
static const int N1 = 200;

// the stack's material points now: every FEM vertex and every rigid block's 8 corners
static int stack_points(test_world* t, double* p) {
  int n = 0;
  for (int i = 0; i < t->world->nfem; i++) {
    const kn_fem_body* b = t->world->fems[i].body;
    memcpy(p + 3 * n, b->x, 3 * (size_t)b->mesh.nvert * sizeof *p);
    n += b->mesh.nvert;
  }
  const char* rigid[] = {"r0", "r3", "r4"};
  for (int i = 0; i < 3; i++) {
    const double* q = tw_object_q(t, rigid[i]);
    kn_pose X;
    memcpy(X.p, q, sizeof X.p);
    kn_mat3_from_quat(q + 3, X.R);
    for (int c = 0; c < 8; c++) {
      double r[3] = {c & 1 ? 0.1 : -0.1, c & 2 ? 0.1 : -0.1, c & 4 ? 0.1 : -0.1};
      kn_pose_apply(&X, r, p + 3 * n++);
    }
  }
  return n;
}

static double max_distance(const double* a, const double* b, int n) {
  double d = 0;
  for (int i = 0; i < n; i++)
    d = fmax(d, sqrt(pow(a[3 * i] - b[3 * i], 2) + pow(a[3 * i + 1] - b[3 * i + 1], 2) +
                     pow(a[3 * i + 2] - b[3 * i + 2], 2)));
  return d;
}

Test(penalty_stack, mixed_stack_does_not_drift, .disabled = true) {
  char yaml[4096];
  size_t n = (size_t)snprintf(yaml, sizeof yaml,
                              "time_step: 0.01\nduration: %g\n"
                              "contact: {backend: penalty}\n"
                              "objects:\n"
                              "  - {name: ground, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n",
                              NSTEP * 0.01);
  const int rigid_at[] = {0, 3, 4};
  for (int i = 0; i < 3; i++)
    n += (size_t)snprintf(yaml + n, sizeof yaml - n,
                          "  - {name: r%d, shape: {box: [0.2, 0.2, 0.2]}, density: 1, pose: {xyz: [0, 0, %g]}}\n",
                          rigid_at[i], 0.1 + 0.201 * rigid_at[i]);
  n += (size_t)snprintf(yaml + n, sizeof yaml - n, "deformables:\n");
  for (int i = 1; i <= 2; i++)
    n += (size_t)snprintf(yaml + n, sizeof yaml - n,
                          "  - name: d%d\n    model: fem\n    shape: {box: [0.2, 0.2, 0.2]}\n    resolution: 0.2\n"
                          "    material: {type: linear_corotated, youngs_modulus: 1e6, poisson_ratio: 0.45, "
                          "density: 1}\n    pose: {xyz: [%g, %g, %g]}\n",
                          i, 0.01 * i, 0.01 * i, 0.1 + 0.201 * i);
  test_world t = tw_create(yaml);
  static double p1[3 * 64], p[3 * 64], z0[3 * 64];
  int np = stack_points(&t, z0);
  cr_assert(np == 8 + 8 + 24, "%d points", np);
  double drift_2n1 = NAN, drift = 0, settle = 0;
  for (int s = 1; s <= NSTEP; s++) {
    tw_step(&t, 1);
    if (s == N1) {
      stack_points(&t, p1);
      settle = max_distance(p1, z0, np);
    }
    if (s > N1) {
      stack_points(&t, p);
      drift = fmax(drift, max_distance(p, p1, np));
      if (s == 2 * N1) drift_2n1 = drift;
    }
  }
  cr_log_info("mixed stack: settled %.3e m by step %d; drift from step %d to %d: %.3e m, to %d: %.3e m", settle, N1,
              N1, 2 * N1, drift_2n1, NSTEP, drift);
  cr_expect(settle < 1e-3, "the stack moved %.3e m while settling (fell?)", settle);
  cr_expect(drift <= 1e-6, "drift %.3e m between steps %d and %d (digest: below 1e-6 m)", drift, N1, NSTEP);
  /* not growing: the drift over the long window is the short window's, up to round-off of the
   * positions (1e-15 m) and the solver tolerance (1e-8 m/s a step, 1e-10 m) */
  cr_expect(drift <= drift_2n1 + 1e-9, "drift grows with N2: %.3e m to step %d, %.3e m to %d", drift_2n1, 2 * N1,
            drift, NSTEP);
  tw_free(&t);
}
