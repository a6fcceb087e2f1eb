/* The penalty backend, penalty-coulomb-friction.md §6.4 (the paper's prmd_rd): a rigid ball on three
 * FEM supports, free on a fixed ground box 1 x 1 x 0.1 (top at z = 0), g = 1.8 m/s^2. The digest's
 * scene [C]: supports of radius 0.15 m squashed by 0.8 along z (ellipsoids 0.15 x 0.15 x 0.12;
 * written here as a VTK tet mesh from kn_tet_mesh_sphere(0.15, 0.1), 180 vertices against the
 * paper's 169; the scene has no scale key for deformables), 0.005 m apart on an equilateral triangle
 * (centres 0.305 m apart, 0.17609 m from the axis); the ball, r = 0.15 m, density 15 (the digest's
 * "x15"), placed touching the ellipsoids (the faceted supports lie inside them, by up to ~1.3 mm: it
 * falls 0.76 mm before it first touches one, at 0.035 s; formerly given here as 0.13 mm).
 * The paper's setup, set here because the defaults differ (each a measured cause, below): the
 * supports' material is the digest's FEM (§4: E 1e6 Pa, nu 0.45) at density 1, the density the
 * ball's "x15" is relative to (ball 0.212 kg, each support 0.0113 kg; Drake's default 1500 makes
 * each support 17 kg, 80 times the ball); k = 1e3 N/m (prmd_rd, digest Appendix A; default 1e4);
 * each support turned so that it stands on a surface triangle (write_support). mu on every pair
 * (ball, supports, ground) alike. dt: 5e-3 at mu 1, the paper's 1e-2 at mu 0.05 (below).
 * Regression [D]: high mu: the ball's height changes by < 1e-4 m between frames 200 and 2000;
 * low mu: the ball drops by more than 0.5 r within the run. Scaled for CI: mu 1 for 3 s at dt 5e-3,
 * the drift from 2 s to 3 s (~7 s of CPU), the mesh turned 2 rad for 2 s (~5 s); mu 0.05 for 1 s
 * (2 s of CPU); the four cases 16.2 s of CPU in Release. The digest's full window at
 * prmd_rd's mu 0.5 and dt 1e-2 (frames 200 to 2000 = 2 s to 20 s) runs in knead-bench --only pyramid.
 * Measured (2026-11-27): mu 1 converges at every step, dips from 0.337332 to 0.335039 m and moves
 * 1e-6 m from 2 s to 3 s (0.335322 -> 0.335321 m; before issue 19's particle fix, below, 3.2 mm and
 * 5.7e-5 m: 0.334162, 0.335122 -> 0.335065 m); mu 0.05 reaches the ground (0.146777 m) by
 * 0.5 s; prmd_rd (mu 0.5, dt 1e-2, bench/pyramid/prmd_rd.yaml: this scene's mesh) moves 5.8e-5 m
 * from 2 s to 20 s, at rest from 4 s to 12 s (1e-6 m). It was not robust to the facets: the light
 * supports' ground contacts came and went while the ball loaded them, and the same mesh turned about
 * z (a pose rpy on each support) swayed instead of settling: turned 0.5 rad the ball was at 0.335250,
 * 0.335576 and 0.335291 m at 2, 2.5 and 3 s (mu 1; passing by its phase), turned 1 rad at 0.334235
 * and 0.334433 m at 2 and 3 s (2.0e-4 m: failing). The cause (issue 19, helper ppyr4): an FEM vertex
 * was a candidate only once inside, so a support's vertex met the ground unresisted within a step and
 * the next step's springs threw it back out at the speed it came in (restitution ~1; the supports
 * rocked and hopped on their ground vertices). Fixed by the FEM candidates' speculative reach
 * (sim/candidates.c fem_reach; test_penalty_fem_landing): turned 0, 0.5, 2 rad the ball moves 8.6e-7,
 * 2.1e-6, 2.9e-7 m from 2 s to 3 s with a range of 4.2e-6, 9.9e-6, 3.5e-6 m and no ground contact
 * switching on or off; turned 1 rad the ball lands on two supports first (it starts 0.12 and 0.42 mm
 * above their facets and 1.39 mm above the third's: the facets lie inside the ellipsoids by up to
 * ~1.3 mm), the supports rearrange for ~3.5 s and it rests from 4 s (range 1.6e-6 m from 4 s to 5 s;
 * bench/RESULTS.md). stable_with_mu_1_turned runs the 2 rad turn. Another turn of the sphere mesh
 * (a different bottom triangle) crept 1.1e-5 m/s at mu 0.5 from 4 s to 20 s with every contact sticking and one Newton
 * iteration a step (2.6e-4 m from 2 s to 20 s): the ball spins ~0.02 rad/s about z, a rigid point
 * walking an FEM face took the detection's point as its particle, not its material point. Fixed
 * (sim/nl_penalty.c rigid_particle: the material point's position and point map; turn_held_mu_1
 * below fails without it): that creep gone (0.335091, 0.335086, 0.335092 m at 4, 5, 6 s, measured
 * on branch wt-ppyr3-particle), this test's drift 1e-6 m.
 * Why the test was disabled (the drift of 2.2 mm from 1 s to 2 s), measured 2026-11-27 with the
 * former scene (default support material, k 1e4, dt 3e-3, the mesh as generated): no contact
 * slid where it should stick; the support stood on its pole vertex alone (the next ring of vertices
 * 26 mm higher), an inverted pendulum on a point: s0's tilt grew 3e-4, 1.6e-3, 2.5e-3, 6.6e-3,
 * 1.7e-2, 4.4e-2, 0.11 rad every 0.3 s (e-folding ~0.33 s; sqrt(I_pivot / (m g h)) = 0.32 s for the
 * ellipsoid on its pole) while that vertex's ground contact stuck (|f_t| / mu f_n 0.04 to 0.18, 0.2 mm
 * of motion) until the support landed on the next ring (two more ground contacts at 0.2157 m); the
 * ball followed it (x 4.9 mm at 1.95 s). A point contact resists no torque: the scene's defect, not
 * the friction's. Turned onto a triangle (edges 41 to 47 mm), the heavy supports no longer tip, but
 * rock on their three ground springs (17 kg at k 1e4: sqrt((k sum d^2 - m g h) / I) ~ 3.9 rad/s, a
 * period of ~1.9 s, which backward Euler at dt 3e-3 damps by 5e-5 per step): the ball's height
 * swings between 0.33489 and 0.33551 m from 0.7 s to 3.3 s (~5e-4 m from 1 s to 2 s; one Newton
 * iteration a step, every contact sticking). Light supports (density 1, E 1e6) at k 1e4 stall in
 * Newton at step 40 (dt 3e-3, the mesh as generated; velocity residual 1.7 m/s on a support's
 * 0.06 g vertices); at the paper's k 1e3 they converge.
 * Why dt 5e-3 at mu 1 (diagnosed 2026-11-27 at dt 1e-2 and k 1e4 from the assembled Jacobian at the
 * stall): each sliding contact's block on the ball's 6 DoFs has an indefinite symmetric part (digest
 * §8: dt^2 k (sqrt(1 + mu^2) - 1) / 2 on a point), the ball sinking into the supports' ~35 deg
 * pocket with all three contacts sliding makes the sliding load map n_j . (n_i + mu u_i) no P-matrix
 * at mu 1 (a Painleve-type property), and J's determinant changes sign across one contact's
 * stick/slip kink, where the residual folds (a nonzero local minimum of |D r|^2). The Jacobian is
 * right (central differences along the Newton step); Levenberg-Marquardt (branch wt-ppyr2-lm), the
 * sticking Jacobian's direction, 200 lagged passes and accepting stalled iterates (§3.9) do not get
 * past it. The ball's block keeps a positive definite symmetric part while 3 lambda (1/m + r^2/I) <
 * 1, lambda = dt^2 k (sqrt(1 + mu^2) - 1) / 2: dt < 3.1e-3 s at k 1e4, 9.8e-3 s at k 1e3 (dt 1e-2
 * fails at step 3 here; the paper's prmd_rd ran mu 0.5 at dt 1e-2, inside). */
#include "deformable/deformable.h"
#include "scene_util.h"

static const double R = 0.15, gap = 0.005, squash = 0.8, g = 1.8;

typedef struct {
  double z0, z_mid, z_end, z_min, zc; /* zc: the supports' centres' height */
  double z_lo, z_hi;  /* the ball's lowest and highest height from t_mid to the end (its sway) */
  double yaw_mid, yaw_end, yaw_max; /* the ball's turn about z [rad]: at t_mid, the end, its largest |.| */
  long failed_step; /* 0: every step converged */
  char msg[512];
} pyramid_run;

/* the support: kn_tet_mesh_sphere(R, 0.1) turned so that its surface triangle nearest the south pole
 * faces straight down (a sphere turned is the same sphere), squashed by 0.8 along z, written as
 * legacy ASCII VTK; => the height of that bottom triangle below the centre (all three of its
 * vertices, the plane being horizontal). Turned, the support stands on a triangle; as generated it
 * stands on its pole vertex alone (see the header). */
static double write_support(const char* path) {
  kn_tet_mesh m;
  kn_error err = {0};
  cr_assert_eq(kn_tet_mesh_sphere(R, 0.1, &m, &err), KN_OK, "%s", err.msg);
  int best = 0;
  double best_z = 2, n[3] = {0};
  for (int s = 0; s < m.nsurf; s++) {
    const double *a = m.X + 3 * m.surf[3 * s], *b = m.X + 3 * m.surf[3 * s + 1], *c = m.X + 3 * m.surf[3 * s + 2];
    double cen[3] = {(a[0] + b[0] + c[0]) / 3, (a[1] + b[1] + c[1]) / 3, (a[2] + b[2] + c[2]) / 3};
    double z = cen[2] / sqrt(cen[0] * cen[0] + cen[1] * cen[1] + cen[2] * cen[2]);
    if (z < best_z) best_z = z, best = s;
  }
  const double *a = m.X + 3 * m.surf[3 * best], *b = m.X + 3 * m.surf[3 * best + 1], *c = m.X + 3 * m.surf[3 * best + 2];
  double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
  n[0] = e1[1] * e2[2] - e1[2] * e2[1], n[1] = e1[2] * e2[0] - e1[0] * e2[2], n[2] = e1[0] * e2[1] - e1[1] * e2[0];
  double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  /* the rotation taking the outward normal n to -z: about n x (-z) by acos(-n_z) */
  double axis[3] = {-n[1] / nn, n[0] / nn, 0}, s_ax = sqrt(axis[0] * axis[0] + axis[1] * axis[1]), Rot[9];
  axis[0] /= s_ax, axis[1] /= s_ax;
  kn_mat3_from_axis_angle(axis, acos(-n[2] / nn), Rot);
  double zbot = 0;
  for (int i = 0; i < m.nvert; i++) {
    double y[3];
    kn_mat3_vec(Rot, m.X + 3 * i, y);
    m.X[3 * i] = y[0], m.X[3 * i + 1] = y[1], m.X[3 * i + 2] = squash * y[2];
    zbot = fmin(zbot, m.X[3 * i + 2]);
  }
  for (int k = 0; k < 3; k++)
    cr_assert_float_eq(m.X[3 * m.surf[3 * best + k] + 2], zbot, 1e-12, "the bottom triangle is not horizontal");
  FILE* f = fopen(path, "w");
  cr_assert(f, "cannot write %s", path);
  fprintf(f, "# vtk DataFile Version 2.0\nsupport\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS %d double\n", m.nvert);
  for (int i = 0; i < m.nvert; i++) fprintf(f, "%.17g %.17g %.17g\n", m.X[3 * i], m.X[3 * i + 1], m.X[3 * i + 2]);
  fprintf(f, "CELLS %d %d\n", m.ntet, 5 * m.ntet);
  for (int t = 0; t < m.ntet; t++)
    fprintf(f, "4 %d %d %d %d\n", m.tet[4 * t], m.tet[4 * t + 1], m.tet[4 * t + 2], m.tet[4 * t + 3]);
  fprintf(f, "CELL_TYPES %d\n", m.ntet);
  for (int t = 0; t < m.ntet; t++) fprintf(f, "10\n");
  fclose(f);
  kn_tet_mesh_free(&m);
  return zbot;
}

/* the ball's turn about z from its quaternion (x y z qw qx qy qz) */
static double yaw(const double* q) {
  return atan2(2 * (q[3] * q[6] + q[4] * q[5]), 1 - 2 * (q[5] * q[5] + q[6] * q[6]));
}

/* (mu, dt, run seconds, the middle sample's time, pinned, yaw) => the
 * ball's heights, its turn and the first failed step; the paper's setup (see the header); pinned: each
 * support's vertices below its centre held (fixed), the supports then turning with the ball only by
 * their elastic deformation; yaw: each support's mesh turned about its vertical axis [rad] (pose rpy),
 * so that the ball meets other facets */
static pyramid_run pyramid(double mu, double dt, double duration, double t_mid, int pinned, double yaw_mesh) {
  const double d = (2 * R + gap) / sqrt(3.0), c = squash * R;
  char path[256]; /* one file per case: criterion may run the cases at once */
  snprintf(path, sizeof path, "penalty_pyramid_support_%d_%d_%d.vtk", (int)(mu * 1000), (int)(yaw_mesh * 1000), pinned);
  const double zc = -write_support(path); /* the supports' centres: their bottom triangles on the ground */
  /* the ball's centre where it touches the ellipsoids: max over their profile of z + sqrt(R^2 - x^2) */
  double zb = 0;
  for (int i = 0; i <= 100000; i++) {
    double th = M_PI * i / 100000, x = d - R * cos(th), z = zc + c * sin(th);
    if (fabs(x) < R) zb = fmax(zb, z + sqrt(R * R - x * x));
  }
  char yaml[4096];
  int n = snprintf(yaml, sizeof yaml,
                   "time_step: %g\nduration: %g\ngravity: [0, 0, %g]\n"
                   "contact: {backend: penalty, penalty: {stiffness: 1e3}}\n"
                   "objects:\n"
                   "  - {name: ground, shape: {box: [1, 1, 0.1]}, fixed: true, pose: {xyz: [0, 0, -0.05]}, "
                   "friction: %g}\n"
                   "  - {name: ball, shape: {sphere: %g}, density: 15, pose: {xyz: [0, 0, %.17g]}, friction: %g}\n"
                   "deformables:\n",
                   dt, duration, -g, mu, R, zb, mu);
  for (int i = 0; i < 3; i++) {
    double a = 2 * M_PI * i / 3;
    n += snprintf(yaml + n, sizeof yaml - (size_t)n,
                  "  - name: s%d\n"
                  "    shape: {mesh: %s}\n"
                  "    material: {youngs_modulus: 1e6, poisson_ratio: 0.45, density: 1}\n"
                  "    pose: {xyz: [%.17g, %.17g, %.17g], rpy: [0, 0, %.17g]}\n"
                  "    friction: %g\n%s",
                  i, path, d * cos(a), d * sin(a), zc, yaw_mesh, mu,
                  pinned ? "    fixed: {box: {min: [-1, -1, -1], max: [1, 1, 0]}}\n" : "");
  }
  test_world t = tw_create(yaml);
  remove(path);
  double* q = tw_object_q(&t, "ball");
  pyramid_run r = {.z0 = q[2], .z_min = q[2], .zc = zc, .z_lo = INFINITY, .z_hi = -INFINITY};
  long steps = lround(duration / dt), mid = lround(t_mid / dt);
  for (long k = 1; k <= steps; k++) {
    kn_error err = {0};
    if (kn_world_step(t.world, &err) != KN_OK) {
      r.failed_step = k;
      snprintf(r.msg, sizeof r.msg, "%s", err.msg);
      break;
    }
    if (k == mid) r.z_mid = q[2], r.yaw_mid = yaw(q);
    r.z_min = fmin(r.z_min, q[2]);
    if (k >= mid) r.z_lo = fmin(r.z_lo, q[2]), r.z_hi = fmax(r.z_hi, q[2]);
    r.yaw_max = fmax(r.yaw_max, fabs(yaw(q)));
  }
  r.z_end = q[2], r.yaw_end = yaw(q);
  tw_free(&t);
  return r;
}

/* the digest's high-mu criterion in the paper's setup at mu 1 (issue 19's case; prmd_rd's 0.5 over
 * the full window is in knead-bench --only pyramid), scaled for CI: dt 5e-3 (at k 1e3 the fold's
 * threshold is 9.8e-3 s; dt 1e-2 failed at step 3), 3 s, the drift from 2 s to 3 s; every step
 * converges and the ball does not collapse. The sway (the ball's height range over the window)
 * is held to the same bound as the drift: a ball swaying through its start again passes the
 * digest's two-frame criterion by its phase (turned 0.5 rad before the FEM reach: 0.335250,
 * 0.335576, 0.335291 m at 2, 2.5, 3 s). */
static void stable_mu_1(double yaw_mesh, double T, double t_mid) {
  pyramid_run r = pyramid(1.0, 5e-3, T, t_mid, 0, yaw_mesh);
  cr_log_info("mu 1, mesh turned %g rad: z0 %.6f, z(%g s) %.6f, z(%g s) %.6f, range %.3e, min %.6f, failed step %ld %s",
              yaw_mesh, r.z0, t_mid, r.z_mid, T, r.z_end, r.z_hi - r.z_lo, r.z_min, r.failed_step, r.msg);
  cr_assert_eq(r.failed_step, 0, "step %ld failed: %s", r.failed_step, r.msg);
  cr_expect(r.z0 - r.z_min < 0.5 * R, "ball dropped %.4f m", r.z0 - r.z_min);
  cr_expect(fabs(r.z_end - r.z_mid) < 2e-5, "ball moved %.3e m from %g s to %g s", r.z_end - r.z_mid, t_mid, T);
  cr_expect(r.z_hi - r.z_lo < 2e-5, "ball swayed %.3e m from %g s to %g s", r.z_hi - r.z_lo, t_mid, T);
}

/* the mesh as written: 8.6e-7 m from 2 s to 3 s, range 4.2e-6 m (before the FEM reach of
 * sim/candidates.c: 7.8e-7 m, range 1.2e-5 m; before issue 19's particle fix 5.7e-5 m) */
Test(penalty_pyramid, stable_with_mu_1) { stable_mu_1(0, 3.0, 2.0); }

/* the supports' mesh turned 2 rad about z, so that the ball and the ground meet other facets (issue
 * 19: the pass must not depend on the facets), scaled for CI to 2 s (~5 s of CPU in Release), the
 * window 1.5 s to 2 s: 5.2e-7 m, range ~4e-6 m; before the FEM reach 2.4e-5 m from 1.5 s to 2 s
 * (fails), the supports' ground vertices missed within the step and thrown back out (the header) */
Test(penalty_pyramid, stable_with_mu_1_turned) { stable_mu_1(2.0, 2.0, 1.5); }

/* the digest's low-mu criterion, the same scene at mu 0.05 and the paper's dt 1e-2 */
Test(penalty_pyramid, collapses_with_mu_0_05) {
  pyramid_run r = pyramid(0.05, 0.01, 1.0, 0.5, 0, 0);
  cr_log_info("mu 0.05: z0 %.6f, z(0.5 s) %.6f, z(1 s) %.6f, min %.6f, failed step %ld %s", r.z0, r.z_mid, r.z_end,
              r.z_min, r.failed_step, r.msg);
  cr_assert_eq(r.failed_step, 0, "step %ld failed: %s", r.failed_step, r.msg);
  cr_expect(r.z0 - r.z_min > 0.5 * R, "ball dropped only %.4f m", r.z0 - r.z_min);
}

/* issue 19, a rigid point walking an FEM face (sim/nl_penalty.c rigid_particle): the spring's particle
 * is the ball's material point, not the detection's point (which a sphere turning about its centre
 * keeps in place: its sticking springs then resisted the turn only within each step, and the ball
 * wandered about z). The supports pinned (their vertices below the centre fixed) so that only the
 * springs hold the ball's turn; default keys otherwise as the paper's setup (the header), mu 1, dt 5e-3.
 * While every contact sticks, a turn theta stretches each spring by r_c theta tangentially, at most
 * mu f_n / k: theta <= mu f_n / (k r_c), f_n a support's normal force m g / (3 cos a) (a the contact
 * normal's angle to z, the centres' line), r_c = R sin a the contact's lever arm about z: 1.7e-3 rad.
 * Measured (2026-11-27, 1 s, 3 s of CPU in Release): the ball settles turned 4.7e-4, 4.2e-4 rad at
 * 0.5 s and 1 s (largest 8.2e-4); since the FEM reach (sim/candidates.c: the supports' speculative
 * contacts) it settles later, -6.0e-4 rad at 0.5 s, -2.20e-4 at 1 s, -2.16e-4 at 1.5 s, -2.17e-4 at
 * 3 s (largest 6.3e-4), so the window is 1 s to 1.5 s (1.5 s, ~2 s of CPU); without the fix
 * 2.3e-3, 1.8e-3 rad (largest 6.8e-3; -3.1e-3 at 2 s:
 * no bound: fails both checks); with the material point's position but the detection point's
 * Jacobian (branch wt-ppyr3-particle's first fix) 2.7e-4, 1.4e-4 rad (largest 8.5e-4). */
Test(penalty_pyramid, turn_held_mu_1) {
  const double mu = 1, k = 1e3, T = 1.5, t_mid = 1.0, m = 15 * 4.0 / 3 * M_PI * R * R * R;
  pyramid_run r = pyramid(mu, 5e-3, T, t_mid, 1, 0);
  /* the centres' line: the ball's centre at z0, a support's at -zbot of its mesh (write_support), d apart */
  const double d = (2 * R + gap) / sqrt(3.0), zs = r.z0 - r.zc, a = atan2(d, zs);
  const double bound = mu * m * g / (3 * cos(a)) / (k * R * sin(a));
  cr_log_info("turn: yaw(%.1f s) %.3e, yaw(%.1f s) %.3e, max %.3e rad (bound %.3e), failed step %ld %s", t_mid,
              r.yaw_mid, T, r.yaw_end, r.yaw_max, bound, r.failed_step, r.msg);
  cr_assert_eq(r.failed_step, 0, "step %ld failed: %s", r.failed_step, r.msg);
  cr_expect(r.yaw_max < bound, "the ball turned %.3e rad (sticking bound %.3e)", r.yaw_max, bound);
  /* settled: 1.5e-6 rad from 1 s to 3 s (the defect's wander: ~5e-3 rad/s, 1.8e-3 rad at 1 s to
   * -3.1e-3 at 2 s) */
  cr_expect(fabs(r.yaw_end - r.yaw_mid) < 2e-4, "the ball turned %.3e rad from %.1f s to %.1f s", r.yaw_end - r.yaw_mid,
            t_mid, T);
}
