/* The penalty backend, penalty-coulomb-friction.md §6.3 (the paper's stack): a mixed stack of
 * blocks on the ground with the backend's defaults (k = 1e4 N/m per contact, tolerance 1e-8 m/s)
 * and the default gravity. Sticking anchors never move (§3.6), so once settled the stack cannot
 * creep. Pass (digest [D]): after settling, the drift of every FEM vertex and every rigid block's
 * corners between frame N1 and N2 >> N1 stays below 1e-6 m and does not grow with N2 (the drift
 * from N1 to N2 = 2 N1 against N1 to N2 = 5 N1).
 *
 * Scaled from the paper's 2 m boxes at k = 1e6 to the digest's 0.2 m cubes of density 1 (8 g, the
 * §6.1 block; FEM: 8 vertices, E = 1e6 Pa, nu = 0.45, the paper's), so that the default k holds
 * them (the bottom contact carries 5 x 8 g: 0.1 mm sink per corner) and each step is cheap; the FEM
 * blocks are offset sideways as in the paper (1 cm, 2 cm). N1 = 200 steps of dt 0.01 (2 s),
 * N2 = 1000 (10 s): about a second each in Release, ~10 s under the sanitizers. The blocks start 1 mm
 * apart (each interface's springs then load from a small drop instead of from phi = 0 exactly).
 *
 * rigid_fem_rigid_rigid (enabled): bottom to top rigid, FEM (offset 1 cm), rigid, rigid: the FEM
 * block on a rigid one and a rigid block on the FEM one. It used to stall (a rigid block on an offset
 * FEM block: Newton at step 29 of the five-block stack, "velocity residual 0.0426 m/s at DoF 6 of
 * 'r3'"): FEM contact detection dropped every rigid feature point in an FEM triangle that had any
 * vertex touching the same collider (contact/fem_detect.c's double-counting rule), and both
 * triangles of the FEM block's top face hold the vertex under the rigid block's opposite corner, so
 * the rigid block stood on that one vertex, tipped and sank into the FEM block (SAP, with the same
 * detection, 2.8 cm in 5 s) until its corners met the FEM block's side faces. For penalty the
 * detector now keeps the point unless the touching vertices hold more than half its weight and adds
 * the box edges' crossings with the FEM edges (kn_contact_fem_detector_set_polygon). Measured:
 * settled 3.0 mm (the three 1 mm gaps), drift 1.1e-12 m to step 400 and to 1000.
 *
 * five_blocks (the paper's order, rigid, FEM, FEM, rigid, rigid): the two FEM blocks are offset
 * 1 cm from each other too. It used to fall (disabled): FEM-FEM detection had vertex-face contacts
 * only, so the upper FEM block stood on two vertex contacts on the diagonal of the overlap, and the
 * blocks above balanced on that line, tipped (growth ~9/s, sqrt(g / 0.1 m)) and fell (1.2 m by
 * step 1000). For penalty the detector now adds the points where an edge of one FEM block crosses
 * an edge of the other (kn_contact_fem_detector_set_polygon: a point of the edge, its two vertices
 * by weights, the spring's particle, anchored in the other's face and walking on it), the overlap
 * polygon's other two corners. Measured: settled 4.3 mm (the four 1 mm gaps), drift 3.6e-14 m to
 * step 400 and 9.1e-13 m to 1000 (1.1e-11 m to 1500 and 2.8e-11 m to 6000, in jumps of the solver
 * tolerance's size, 1e-8 m/s x dt); the FEM-FEM contacts are four, one within 7.1 mm of each
 * corner of the overlap, and carry the weight above, 3 x 8 g x 9.81 = 0.23544 N, to 1e-9 N.
 * At the paper's FEM resolution (216 nodes: resolution 0.04) Newton stalls at step 5 with the
 * crossings or without them (measured once: 37 ug nodes on k = 1e4 N/m springs, sqrt(k / m) dt ~
 * 160), a matter of the scene's scaling or the solver, not of the detection; not run here. */
#include "scene_util.h"

#define NSTEP 1000
static const int N1 = 200;

// the stack's material points now: every FEM vertex and every rigid block's 8 corners
static int stack_points(test_world* t, const char* const* rigid, int nrigid, double* p) {
  int n = 0;
  for (int i = 0; i < t->world->nfem; i++) {
    const kn_fem_body* b = t->world->fems[i].body;
    memcpy(p + 3 * n, b->x, 3 * (size_t)b->mesh.nvert * sizeof *p);
    n += b->mesh.nvert;
  }
  for (int i = 0; i < nrigid; i++) {
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

/* the contacts between FEM blocks d_lo and d_up (world indices) at the last step: their force on
 * the upper one is the weight m_above |g| of the blocks it carries (itself included), and they
 * span the overlap of its bottom face and d_lo's top face, a square of side 0.2 - |off| (corners
 * (x, y) in [lo, hi]^2 in the world): a contact within 1.5 cm of each of its four corners (two are
 * the blocks' vertices in the other's face, two the crossings of their edges, contact/fem_detect.c;
 * a crossing's point sits h / 32 = 7.1 mm along the edge from the corner, h = 0.228 m the mean
 * surface edge length with the faces' diagonals) */
static void expect_fem_support(const test_world* t, int d_lo, int d_up, double m_above, double lo, double hi) {
  const kn_world* w = t->world;
  double fz = 0, near[4] = {1, 1, 1, 1};
  int n = 0;
  for (int i = 0; i < w->nfem_contact; i++) {
    const kn_world_fem_contact* c = &w->fem_contacts[i];
    int up_b = c->fem_b == d_up && c->a_fem == d_lo, up_a = c->fem_b == d_lo && c->a_fem == d_up;
    if (!up_b && !up_a) continue;
    n++;
    fz += up_b ? c->f[2] : -c->f[2];
    for (int k = 0; k < 4; k++) {
      double cx = k & 1 ? hi : lo, cy = k & 2 ? hi : lo;
      near[k] = fmin(near[k], hypot(c->p[0] - cx, c->p[1] - cy));
    }
  }
  double weight = -m_above * w->scene->gravity[2];
  cr_log_info("FEM on FEM: %d contacts, force %.9f N (weight %.9f N), corners at %.4f %.4f %.4f %.4f m", n, fz, weight,
              near[0], near[1], near[2], near[3]);
  /* at rest to the Newton stop (1e-8 m/s on every DoF: m 1e-8 / dt = 2.4e-8 N for these masses) */
  cr_expect(fabs(fz - weight) < 1e-6 * weight, "force on the upper FEM block %.9f N, weight above %.9f N", fz, weight);
  for (int k = 0; k < 4; k++)
    cr_expect(near[k] < 0.015, "no contact within 1.5 cm of the overlap's corner %d (nearest %.4f m)", k, near[k]);
}

/* the stack of cubes: at level i (0 at the bottom) a rigid block r<i> when kind[i] is 'r', else an
 * FEM block d<i> offset off[i] in x and y; run NSTEP steps and assert §6.3's drift criterion */
static void run_stack(const char* kind, const double* off, test_world* keep) {
  char yaml[4096];
  const char* rigid[8];
  static char names[8][8];
  int nrigid = 0, nfem = 0, nlevel = (int)strlen(kind);
  size_t n = (size_t)snprintf(yaml, sizeof yaml,
                              "time_step: 0.01\nduration: %g\n"
                              "contact: {backend: penalty}\n"
                              "objects:\n"
                              "  - {name: ground, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n",
                              NSTEP * 0.01);
  for (int i = 0; i < nlevel; i++)
    if (kind[i] == 'r') {
      snprintf(names[nrigid], sizeof names[nrigid], "r%d", i);
      rigid[nrigid] = names[nrigid], nrigid++;
      n += (size_t)snprintf(yaml + n, sizeof yaml - n,
                            "  - {name: r%d, shape: {box: [0.2, 0.2, 0.2]}, density: 1, pose: {xyz: [0, 0, %g]}}\n", i,
                            0.1 + 0.201 * i);
    }
  n += (size_t)snprintf(yaml + n, sizeof yaml - n, "deformables:\n");
  for (int i = 0; i < nlevel; i++)
    if (kind[i] != 'r') {
      nfem++;
      n += (size_t)snprintf(yaml + n, sizeof yaml - n,
                            "  - name: d%d\n    model: fem\n    shape: {box: [0.2, 0.2, 0.2]}\n    resolution: 0.2\n"
                            "    material: {type: linear_corotated, youngs_modulus: 1e6, poisson_ratio: 0.45, "
                            "density: 1}\n    pose: {xyz: [%g, %g, %g]}\n",
                            i, off[i], off[i], 0.1 + 0.201 * i);
    }
  test_world t = tw_create(yaml);
  static double p1[3 * 64], p[3 * 64], z0[3 * 64];
  int np = stack_points(&t, rigid, nrigid, z0);
  cr_assert(np == 8 * (nrigid + nfem), "%d points", np);
  double drift_2n1 = NAN, drift = 0, settle = 0;
  for (int s = 1; s <= NSTEP; s++) {
    tw_step(&t, 1);
    if (s == N1) {
      stack_points(&t, rigid, nrigid, p1);
      settle = max_distance(p1, z0, np);
    }
    if (s > N1) {
      stack_points(&t, rigid, nrigid, p);
      drift = fmax(drift, max_distance(p, p1, np));
      if (s == 2 * N1) drift_2n1 = drift;
    }
  }
  cr_log_info("stack %s: settled %.3e m by step %d; drift from step %d to %d: %.3e m, to %d: %.3e m", kind, settle,
              N1, N1, 2 * N1, drift_2n1, NSTEP, drift);
  /* settling: the top block drops the 1 mm starting gaps below it, plus the springs' ~0.1 mm sinks;
   * a block that tipped or fell moves centimetres */
  cr_expect(settle < 1e-3 * nlevel, "the stack moved %.3e m while settling (fell?)", settle);
  cr_expect(drift <= 1e-6, "drift %.3e m between steps %d and %d (digest: below 1e-6 m)", drift, N1, NSTEP);
  /* not growing: the drift over the long window is the short window's, up to round-off of the
   * positions (1e-15 m) and the solver tolerance (1e-8 m/s a step, 1e-10 m) */
  cr_expect(drift <= drift_2n1 + 1e-9, "drift grows with N2: %.3e m to step %d, %.3e m to %d", drift_2n1, 2 * N1,
            drift, NSTEP);
  if (keep)
    *keep = t;
  else
    tw_free(&t);
}

Test(penalty_stack, rigid_fem_rigid_rigid) {
  const double off[] = {0, 0.01, 0, 0};
  run_stack("rfrr", off, NULL);
}

Test(penalty_stack, five_blocks) {
  const double off[] = {0, 0.01, 0.02, 0, 0};
  test_world t;
  run_stack("rffrr", off, &t);
  /* d2 (offset 2 cm) on d1 (1 cm): overlap [-0.08, 0.11]^2; it carries itself and two rigid blocks */
  expect_fem_support(&t, 0, 1, 3 * 0.008, -0.08, 0.11);
  tw_free(&t);
}
