/* The penalty backend, penalty-coulomb-friction.md §6.3 (the paper's stack): a mixed stack of
 * blocks on the ground with the backend's defaults (k = 1e4 N/m per contact, tolerance 1e-8 m/s;
 * five_blocks_216: the paper's k, below) and the default gravity. Sticking anchors never move
 * (§3.6), so once settled the stack cannot creep. Pass (digest [D]): after settling, the drift of
 * every FEM vertex and every rigid block's corners between frame N1 and N2 >> N1 stays below 1e-6 m
 * and does not grow with N2 (the drift from N1 to N2 = 2 N1 against N1 to N2 = 5 N1;
 * five_blocks_216: 3 N1).
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
 *
 * five_blocks_216: the paper's scene itself (digest §6.3 [C]): 2 m cubes at 1.01, 3.02, 5.03, 7.04
 * and 9.05 m (the scaled heights x 10 and 1 cm up; offsets x 10), FEM blocks of 6 x 6 x 6 = 216
 * nodes (resolution 0.4 m), E = 1e6 Pa, nu = 0.45, density 1 (8 kg cubes, 37 g nodes), and the
 * paper's k = 1e6 N/m and dt = 0.01 s (set: they are the scene's; the default 1e4 belongs to
 * 0.2 m cubes). The scaled scene above at 216 nodes (resolution 0.04: 37 ug nodes) stalls in Newton
 * at step 5: scaling the paper's lengths by 0.1 and k by 0.01 keeps k / (m g / L) but not the time
 * step, which should scale with sqrt(L) (0.01 s -> 3.16e-3 s); at 0.01 s it is sqrt(10) coarser
 * in the scene's own time, k dt^2 / m = 27000 per node against the paper's 2700 (and 125 against
 * 12.5 for a rigid block). Measured at the stall (ARCHITECTURE.md, penalty): the Jacobian matches
 * central differences along the Newton step (1.5e-7 at h = 1e-4) but a stick/slip or activation
 * kink lies within 1e-2 of it (60x off at h = 1e-2), the line search on |D r| stops at 776 m/s
 * (alpha 1e-3 .. 1e-6), the LU's exact direction stalls too (step 4, 9e-7 m/s), 100 lagged passes
 * do not get past it; the same scaled scene runs at dt 3.16e-3 s (300 steps) and 5e-3 s (50). The
 * paper's scene: settled 5.05 cm (the five 1 cm gaps), drift 1.52e-7 m from step 200 to 400 and
 * the same to 600 and to 3000 (knead-bench --only penalty_stack); a rocking mode of period ~0.2 s
 * still decays after step 150 (with the bottom block starting on the ground: 3e-7 m a step at
 * step 155, 2e-11 m at 400), hence N1 = 200 (from step 100 the drift is 2.1e-5 m). 52 FEM-FEM
 * contacts carry the 235.44 N above to 1e-8 N. Steps 200 to 600 here (~9 s in Release, ~13 ms of
 * CPU a step; the same scene to 3000 steps is the benchmark). */
#include "scene_util.h"

#define NSTEP 1000
static const int N1 = 200;

/* one stack: cubes of edge `edge` (their layout the paper's, scaled by edge / 2 m), FEM resolution
 * `res` (0.2 x edge: 8 vertices, 0.04 x edge: the paper's 216), stiffness k (0: the default), time
 * step dt, n1 and n2 = nstep the drift window's frames, lift the bottom block's gap above the ground */
typedef struct {
  double edge, res, k, dt, lift;
  int n1, nstep;
} stack_case;

// the stack's material points now: every FEM vertex and every rigid block's 8 corners
static int stack_points(test_world* t, const char* const* rigid, int nrigid, double half, double* p) {
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
      double r[3] = {c & 1 ? half : -half, c & 2 ? half : -half, c & 4 ? half : -half};
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
static void expect_fem_support(const test_world* t, int d_lo, int d_up, double m_above, double lo, double hi,
                               double near_tol) {
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
    cr_expect(near[k] < near_tol, "no contact within %g m of the overlap's corner %d (nearest %.4f m)", near_tol, k,
              near[k]);
}

/* the stack of cubes: at level i (0 at the bottom) a rigid block r<i> when kind[i] is 'r', else an
 * FEM block d<i> offset off[i] x edge / 0.2 in x and y (1 mm gaps at edge 0.2 m, scaled the same);
 * run the case's steps and assert §6.3's drift criterion */
static void run_stack(const char* kind, const double* off, const stack_case* sc, test_world* keep) {
  char yaml[4096], kset[64] = "";
  const char* rigid[8];
  static char names[8][8];
  const double s = sc->edge / 0.2, e = sc->edge;
  int nrigid = 0, nfem = 0, nlevel = (int)strlen(kind);
  if (sc->k > 0) snprintf(kset, sizeof kset, ", penalty: {stiffness: %g}", sc->k);
  size_t n = (size_t)snprintf(yaml, sizeof yaml,
                              "time_step: %g\nduration: %g\n"
                              "contact: {backend: penalty%s}\n"
                              "objects:\n"
                              "  - {name: ground, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n",
                              sc->dt, sc->nstep * sc->dt, kset);
  for (int i = 0; i < nlevel; i++)
    if (kind[i] == 'r') {
      snprintf(names[nrigid], sizeof names[nrigid], "r%d", i);
      rigid[nrigid] = names[nrigid], nrigid++;
      n += (size_t)snprintf(yaml + n, sizeof yaml - n,
                            "  - {name: r%d, shape: {box: [%g, %g, %g]}, density: 1, pose: {xyz: [0, 0, %g]}}\n", i,
                            e, e, e, sc->lift + s * (0.1 + 0.201 * i));
    }
  n += (size_t)snprintf(yaml + n, sizeof yaml - n, "deformables:\n");
  for (int i = 0; i < nlevel; i++)
    if (kind[i] != 'r') {
      nfem++;
      n += (size_t)snprintf(yaml + n, sizeof yaml - n,
                            "  - name: d%d\n    model: fem\n    shape: {box: [%g, %g, %g]}\n    resolution: %g\n"
                            "    material: {type: linear_corotated, youngs_modulus: 1e6, poisson_ratio: 0.45, "
                            "density: 1}\n    pose: {xyz: [%g, %g, %g]}\n",
                            i, e, e, e, sc->res, s * off[i], s * off[i], sc->lift + s * (0.1 + 0.201 * i));
    }
  cr_assert(n < sizeof yaml, "scene text too long");
  test_world t = tw_create(yaml);
  enum { MAXP = 2 * 216 + 8 * 8 };
  static double p1[3 * MAXP], p[3 * MAXP], z0[3 * MAXP];
  int nvert = 0;
  for (int i = 0; i < t.world->nfem; i++) nvert += t.world->fems[i].body->mesh.nvert;
  cr_assert(nvert + 8 * nrigid <= MAXP, "%d FEM vertices", nvert);
  int np = stack_points(&t, rigid, nrigid, e / 2, z0);
  int nv1 = (int)lround(pow(1 + round(e / sc->res), 3)); /* vertices per FEM block */
  cr_assert(np == nv1 * nfem + 8 * nrigid, "%d points (%d per FEM block)", np, nv1);
  double drift_2n1 = NAN, drift = 0, settle = 0;
  const int n1 = sc->n1;
  for (int k = 1; k <= sc->nstep; k++) {
    tw_step(&t, 1);
    if (k == n1) {
      stack_points(&t, rigid, nrigid, e / 2, p1);
      settle = max_distance(p1, z0, np);
    }
    if (k > n1) {
      stack_points(&t, rigid, nrigid, e / 2, p);
      drift = fmax(drift, max_distance(p, p1, np));
      if (k == 2 * n1) drift_2n1 = drift;
    }
  }
  cr_log_info("stack %s (edge %g m, %d vertices per FEM block): settled %.3e m by step %d; drift from step %d to %d: "
              "%.3e m, to %d: %.3e m", kind, e, nv1, settle, n1, n1, 2 * n1, drift_2n1, sc->nstep, drift);
  /* settling: the top block drops the starting gaps below it (1 mm each at edge 0.2 m), plus the
   * springs' ~0.1 mm sinks (scaled the same); a block that tipped or fell moves centimetres */
  cr_expect(settle < 1e-3 * s * nlevel + sc->lift, "the stack moved %.3e m while settling (fell?)", settle);
  cr_expect(drift <= 1e-6, "drift %.3e m between steps %d and %d (digest: below 1e-6 m)", drift, n1, sc->nstep);
  /* not growing: the drift over the long window is the short window's, up to round-off of the
   * positions (1e-15 m) and the solver tolerance (1e-8 m/s a step, 1e-10 m) */
  cr_expect(drift <= drift_2n1 + 1e-9, "drift grows with N2: %.3e m to step %d, %.3e m to %d", drift_2n1, 2 * n1,
            drift, sc->nstep);
  if (keep)
    *keep = t;
  else
    tw_free(&t);
}

/* the scaled stack (module comment): 0.2 m cubes, 8-vertex FEM blocks, the default k, dt 0.01 */
static const stack_case scaled = {.edge = 0.2, .res = 0.2, .k = 0, .dt = 0.01, .n1 = N1, .nstep = NSTEP};

Test(penalty_stack, rigid_fem_rigid_rigid) {
  const double off[] = {0, 0.01, 0, 0};
  run_stack("rfrr", off, &scaled, NULL);
}

Test(penalty_stack, five_blocks) {
  const double off[] = {0, 0.01, 0.02, 0, 0};
  test_world t;
  run_stack("rffrr", off, &scaled, &t);
  /* d2 (offset 2 cm) on d1 (1 cm): overlap [-0.08, 0.11]^2; it carries itself and two rigid blocks */
  expect_fem_support(&t, 0, 1, 3 * 0.008, -0.08, 0.11, 0.015);
  tw_free(&t);
}

Test(penalty_stack, five_blocks_216) {
  const double off[] = {0, 0.01, 0.02, 0, 0};
  const stack_case paper = {.edge = 2, .res = 0.4, .k = 1e6, .dt = 0.01, .lift = 0.01, .n1 = 200, .nstep = 600};
  test_world t;
  run_stack("rffrr", off, &paper, &t);
  /* d2 on d1: overlap [-0.8, 1.1]^2; it carries itself and two rigid blocks, 3 x 8 kg; a contact
   * within 15 cm of each corner (1.5 cm above, scaled; measured 0.1 mm, 1.42 cm, 1.42 cm, 0) */
  expect_fem_support(&t, 0, 1, 3 * 8.0, -0.8, 1.1, 0.15);
  tw_free(&t);
}
