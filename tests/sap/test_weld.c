/* sap/: the weld constraint (digest §5.4, Drake's SapWeldConstraint) driven through the sap API
 * alone, with free rigid bodies written out here: generalized velocity [w_B; v_B] in the body
 * frame, M = diag(I_B, m I3) (centre of mass at the body origin), q advanced as kn_mb_advance does
 * (R <- R exp(dt w_B), p <- p + dt R v_B, v re-expressed in the new body frame). */
#include <string.h>

#include "sap/sap.h"
#include "sap_test_util.h"

typedef struct {
  double m, I[3];
  kn_pose X;     /* X_WB */
  double v[6];   /* [w_B; v_B] */
} body;

static void cross(const double a[3], const double b[3], double c[3]) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

/* A = M and v* = v + dt M^-1 (gyroscopic torque and gravity in the body frame); no -w x v term for
 * v_B since advance() re-expresses v_B in the new frame, which keeps the world velocity */
static void free_motion(const body* b, double dt, const double g[3], double A[36], double vs[6]) {
  memset(A, 0, 36 * sizeof(double));
  for (int k = 0; k < 3; k++) A[7 * k] = b->I[k], A[7 * (k + 3)] = b->m;
  const double *w = b->v, *v = b->v + 3;
  double Iw[3] = {b->I[0] * w[0], b->I[1] * w[1], b->I[2] * w[2]}, wIw[3], gB[3];
  cross(w, Iw, wIw);
  kn_mat3_tvec(b->X.R, g, gB);
  for (int k = 0; k < 3; k++) {
    vs[k] = w[k] - dt * wIw[k] / b->I[k];
    vs[3 + k] = v[k] + dt * gB[k];
  }
}

/* J (6 x 6) += sign [R 0; -[x - p]x R  R]: world spatial velocity of the body point at world x */
static void point_jacobian(const body* b, const double x[3], double sign, double J[36]) {
  double r[3] = {x[0] - b->X.p[0], x[1] - b->X.p[1], x[2] - b->X.p[2]};
  for (int c = 0; c < 3; c++) {
    double Rc[3] = {b->X.R[c], b->X.R[3 + c], b->X.R[6 + c]}, rxRc[3];
    cross(r, Rc, rxRc);
    for (int a = 0; a < 3; a++) {
      J[a * 6 + c] += sign * Rc[a];
      J[(3 + a) * 6 + 3 + c] += sign * Rc[a];
      J[(3 + a) * 6 + c] += -sign * rxRc[a];
    }
  }
}

static void advance(body* b, double dt) {
  double n = sqrt(b->v[0] * b->v[0] + b->v[1] * b->v[1] + b->v[2] * b->v[2]);
  double E[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, vw[3], R[9], vB[3];
  if (n > 0) {
    double axis[3] = {b->v[0] / n, b->v[1] / n, b->v[2] / n};
    kn_mat3_from_axis_angle(axis, dt * n, E);
  }
  kn_mat3_vec(b->X.R, b->v + 3, vw);
  for (int k = 0; k < 3; k++) b->X.p[k] += dt * vw[k];
  kn_mat3_mul(b->X.R, E, R);
  memcpy(b->X.R, R, sizeof R);
  kn_mat3_tvec(E, b->v + 3, vB);
  memcpy(b->v + 3, vB, sizeof vB);
}

static double norm6(const double g[6], int from) {
  double s = 0;
  for (int k = from; k < from + 3; k++) s += g[k] * g[k];
  return sqrt(s);
}

/* world pose of a frame X_BF on body b */
static void frame(const body* b, const kn_pose* X_BF, kn_pose* X_WF) { kn_pose_mul(&b->X, X_BF, X_WF); }

/* The Delassus estimate, R, v_hat and the eval outputs against their closed forms (§2.1, §5.1). */
Test(sap_weld, regularization_and_eval) {
  const double dt = 0.01;
  body b = {.m = 2, .I = {0.1, 0.2, 0.3}};
  kn_pose_identity(&b.X);
  double A[36], vs[6] = {0}, J[36] = {0}, x[3] = {0.1, -0.2, 0.3};
  memset(A, 0, sizeof A);
  for (int k = 0; k < 3; k++) A[7 * k] = b.I[k], A[7 * (k + 3)] = b.m;
  point_jacobian(&b, x, 1.0, J);
  kn_sap_problem* p = kn_sap_problem_create(dt);
  kn_error err = {0};
  cr_assert_eq(kn_sap_add_clique(p, 6, A, vs, NULL, &err), KN_OK, "%s", err.msg);
  const double g0[6] = {1e-3, -2e-3, 3e-3, 4e-4, -5e-4, 6e-4};
  int idx = -1;
  cr_assert_eq(kn_sap_add_weld(p, 0, J, -1, NULL, g0, &idx, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_sap_constraint_kind(p, idx), KN_SAP_WELD);
  cr_assert_eq(kn_sap_constraint_rows(p, idx), 6);
  /* W = J diag(A)^-1 J^T by hand, w = ||W||_F / 6 */
  double W2 = 0;
  for (int r = 0; r < 6; r++)
    for (int t = 0; t < 6; t++) {
      double s = 0;
      for (int k = 0; k < 6; k++) s += J[r * 6 + k] * J[t * 6 + k] / A[7 * k];
      W2 += s * s;
    }
  double w, R[6], vhat[6];
  cr_assert_eq(kn_sap_constraint_regularization(p, idx, &w, R, vhat, &err), KN_OK, "%s", err.msg);
  fprintf(stderr, "weld regularization\n");
  EXPECT_REL("w = ||W||_F / 6", w, sqrt(W2) / 6, 1e-14);
  for (int r = 0; r < 6; r++) {
    EXPECT_REL("R = 0.1^2 w / (4 pi^2)", R[r], 0.01 * w / (4 * M_PI * M_PI), 1e-14);
    EXPECT_REL("v_hat = -g0 / (2 dt)", vhat[r], -g0[r] / (2 * dt), 1e-14);
  }
  /* at v = (0.1, 0, 0, 0, 0.2, 0): v_c = J v, gamma = (v_hat - v_c) / R, G = I / R, l = 1/2 R |gamma|^2 */
  double v[6] = {0.1, 0, 0, 0, 0.2, 0}, cost, gamma[6], G[36], vc[6];
  for (int r = 0; r < 6; r++) {
    vc[r] = 0;
    for (int k = 0; k < 6; k++) vc[r] += J[r * 6 + k] * v[k];
  }
  cr_assert_eq(kn_sap_constraint_eval(p, idx, v, &cost, gamma, G, &err), KN_OK, "%s", err.msg);
  double l = 0;
  for (int r = 0; r < 6; r++) {
    double y = (vhat[r] - vc[r]) / R[r];
    EXPECT_REL("gamma_r", gamma[r], y, 1e-14);
    l += 0.5 * R[r] * y * y;
    for (int t = 0; t < 6; t++) EXPECT_ABS("G", G[r * 6 + t], r == t ? 1 / R[r] : 0, 1e-12 / R[r]);
  }
  EXPECT_REL("cost", cost, l, 1e-14);
  kn_sap_problem_free(p);
}

/* g = [a_PQ^W; p_PoQo^W]: a rotation by theta about a unit axis gives theta axis, in W */
Test(sap_weld, pose_error_log_map) {
  const double angles[] = {0, 1e-9, 0.3, 2.0, M_PI - 1e-6};
  const double axis_P[3] = {2 / 7.0, -3 / 7.0, 6 / 7.0};
  kn_pose X_WP;
  const double rpy[3] = {0.4, -0.7, 1.1}, xyz[3] = {1, 2, 3};
  kn_pose_from_xyz_rpy(xyz, rpy, &X_WP);
  for (size_t i = 0; i < sizeof angles / sizeof *angles; i++) {
    kn_pose X_PQ, X_WQ;
    kn_mat3_from_axis_angle(axis_P, angles[i], X_PQ.R);
    X_PQ.p[0] = 0.01, X_PQ.p[1] = -0.02, X_PQ.p[2] = 0.03;
    kn_pose_mul(&X_WP, &X_PQ, &X_WQ);
    double g[6], M[3], aW[3], dW[3];
    kn_sap_weld_error(&X_WP, &X_WQ, g, M);
    kn_mat3_vec(X_WP.R, axis_P, aW);
    kn_mat3_vec(X_WP.R, X_PQ.p, dW);
    for (int k = 0; k < 3; k++) {
      EXPECT_ABS("a_PQ^W = theta R_WP axis", g[k], angles[i] * aW[k], 1e-12 * (1 + angles[i]));
      EXPECT_ABS("p_PoQo^W", g[3 + k], dW[k], 1e-15);
      EXPECT_ABS("midpoint", M[k], X_WP.p[k] + 0.5 * dW[k], 1e-15);
    }
  }
}

/* One step of a weld between body A (clique 0) and body B (clique 1), or B alone to the world. */
static void weld_step(body* a, const kn_pose* X_AP, body* b, const kn_pose* X_BQ, double dt, const double g[3],
                      double gamma[6]) {
  kn_pose X_WP, X_WQ;
  if (a)
    frame(a, X_AP, &X_WP);
  else
    X_WP = *X_AP; /* P fixed in the world */
  frame(b, X_BQ, &X_WQ);
  double g0[6], M[3], Aa[36], va[6], Ab[36], vb[6], Ja[36] = {0}, Jb[36] = {0};
  kn_sap_weld_error(&X_WP, &X_WQ, g0, M);
  kn_sap_problem* p = kn_sap_problem_create(dt);
  kn_error err = {0};
  free_motion(b, dt, g, Ab, vb);
  point_jacobian(b, M, +1.0, Jb);
  if (a) {
    free_motion(a, dt, g, Aa, va);
    point_jacobian(a, M, -1.0, Ja);
    cr_assert_eq(kn_sap_add_clique(p, 6, Aa, va, NULL, &err), KN_OK, "%s", err.msg);
    cr_assert_eq(kn_sap_add_clique(p, 6, Ab, vb, NULL, &err), KN_OK, "%s", err.msg);
    cr_assert_eq(kn_sap_add_weld(p, 0, Ja, 1, Jb, g0, NULL, &err), KN_OK, "%s", err.msg);
  } else {
    cr_assert_eq(kn_sap_add_clique(p, 6, Ab, vb, NULL, &err), KN_OK, "%s", err.msg);
    cr_assert_eq(kn_sap_add_weld(p, 0, Jb, -1, NULL, g0, NULL, &err), KN_OK, "%s", err.msg);
  }
  kn_sap_solver* s = kn_sap_solver_create();
  double v[12], guess[12];
  memcpy(guess, a ? a->v : b->v, 6 * sizeof(double));
  if (a) memcpy(guess + 6, b->v, 6 * sizeof(double));
  cr_assert_eq(kn_sap_solve(s, p, NULL, guess, v, gamma, NULL, &err), KN_OK, "%s", err.msg);
  if (a) {
    memcpy(a->v, v, 6 * sizeof(double));
    memcpy(b->v, v + 6, 6 * sizeof(double));
    advance(a, dt);
  } else {
    memcpy(b->v, v, 6 * sizeof(double));
  }
  advance(b, dt);
  kn_sap_solver_free(s);
  kn_sap_problem_free(p);
}

/* A body welded to the world at an offset frame stays put under gravity: after 1 s (100 steps of
 * 0.01 s) the pose error is the near-rigid steady-state sag g = -2 dt R gamma (v_c = 0 in
 * v_hat - v_c = R gamma), below 1e-6 m and 1e-6 rad. */
Test(sap_weld, body_welded_to_world_holds) {
  const double dt = 0.01, grav[3] = {0, 0, -9.81};
  body b = {.m = 1.0, .I = {0.4, 0.5, 0.6}};
  const double rpy[3] = {0.3, -0.2, 0.5}, xyz[3] = {0.2, 0.1, 1.0};
  kn_pose_from_xyz_rpy(xyz, rpy, &b.X);
  kn_pose X_BQ, X_WP;
  const double qrpy[3] = {0.1, 0.2, -0.3}, qxyz[3] = {0.1, 0.0, 0.05};
  kn_pose_from_xyz_rpy(qxyz, qrpy, &X_BQ);
  frame(&b, &X_BQ, &X_WP); /* the weld holds the pose at t = 0 */
  double gamma[6] = {0};
  for (int n = 0; n < 100; n++) weld_step(NULL, &X_WP, &b, &X_BQ, dt, grav, gamma);
  kn_pose X_WQ;
  frame(&b, &X_BQ, &X_WQ);
  double g[6];
  kn_sap_weld_error(&X_WP, &X_WQ, g, NULL);
  double vnorm = 0;
  for (int k = 0; k < 6; k++) vnorm += b.v[k] * b.v[k];
  fprintf(stderr, "welded to world after 1 s: |rotation error| %.3e rad, |position error| %.3e m, |v| %.3e\n",
          norm6(g, 0), norm6(g, 3), sqrt(vnorm));
  cr_expect_lt(norm6(g, 0), 1e-6);
  cr_expect_lt(norm6(g, 3), 1e-6);
  /* the weld carries the weight: force on B = -m g (gamma = impulse, [torque; force] x dt) */
  EXPECT_REL("weld force z = m g", gamma[5] / dt, 9.81, 1e-6);
  EXPECT_ABS("weld force x", gamma[3] / dt, 0, 1e-6);
  /* steady-state sag: g_ss = -2 dt R gamma with R = 0.1^2 w / (4 pi^2) */
  double w = 0;
  {
    kn_sap_problem* p = kn_sap_problem_create(dt);
    double A[36] = {0}, vs[6] = {0}, J[36] = {0};
    for (int k = 0; k < 3; k++) A[7 * k] = b.I[k], A[7 * (k + 3)] = b.m;
    double M[3];
    kn_sap_weld_error(&X_WP, &X_WQ, g, M);
    point_jacobian(&b, M, 1.0, J);
    kn_error err = {0};
    double R[6], vh[6];
    cr_assert_eq(kn_sap_add_clique(p, 6, A, vs, NULL, &err), KN_OK);
    cr_assert_eq(kn_sap_add_weld(p, 0, J, -1, NULL, g, NULL, &err), KN_OK);
    cr_assert_eq(kn_sap_constraint_regularization(p, 0, &w, R, vh, &err), KN_OK);
    kn_sap_problem_free(p);
  }
  double Rnr = 0.01 * w / (4 * M_PI * M_PI);
  EXPECT_REL("position sag z = -2 dt R gamma_z", g[5], -2 * dt * Rnr * gamma[5], 1e-3);
}

/* Two free bodies (two cliques) welded together, no gravity: A moves at 1 m/s, B at rest. The weld
 * impulses are internal, so linear momentum is conserved to round-off; the pair moves at
 * m_A v_A / (m_A + m_B) and keeps its relative pose. Then under gravity with A welded to the world
 * (a chain of two welds), B hangs from A. */
Test(sap_weld, two_cliques_stay_together) {
  const double dt = 0.01, none[3] = {0, 0, 0};
  body a = {.m = 2.0, .I = {0.3, 0.3, 0.3}}, b = {.m = 1.0, .I = {0.2, 0.25, 0.3}};
  kn_pose_identity(&a.X);
  const double rpy[3] = {0.2, 0.1, -0.4}, xyz[3] = {0.3, 0.1, -0.05};
  kn_pose_from_xyz_rpy(xyz, rpy, &b.X);
  a.v[3] = 1.0;
  /* weld frame P on A = B's pose at t = 0, Q = B's origin */
  kn_pose X_AP = b.X, X_BQ;
  kn_pose_identity(&X_BQ);
  double gamma[6];
  double p0 = a.m * 1.0;
  double maxerr = 0;
  for (int n = 0; n < 100; n++) {
    weld_step(&a, &X_AP, &b, &X_BQ, dt, none, gamma);
    kn_pose X_WP, X_WQ;
    frame(&a, &X_AP, &X_WP);
    frame(&b, &X_BQ, &X_WQ);
    double g[6];
    kn_sap_weld_error(&X_WP, &X_WQ, g, NULL);
    if (n >= 10) maxerr = fmax(maxerr, fmax(norm6(g, 0), norm6(g, 3)));
  }
  double pa[3], pb[3];
  kn_mat3_vec(a.X.R, a.v + 3, pa);
  kn_mat3_vec(b.X.R, b.v + 3, pb);
  fprintf(stderr, "two welded bodies (momentum exchange): max pose error over t in [0.1, 1] s %.3e\n", maxerr);
  EXPECT_REL("linear momentum x conserved", a.m * pa[0] + b.m * pb[0], p0, 1e-12);
  EXPECT_ABS("linear momentum y conserved", a.m * pa[1] + b.m * pb[1], 0, 1e-12);
  /* the pair spins about its centre of mass (the impulse acts at B's origin), so compare the
   * centre-of-mass velocity m_A v_A / (m_A + m_B) */
  EXPECT_REL("centre-of-mass velocity x", (a.m * pa[0] + b.m * pb[0]) / (a.m + b.m), 2.0 / 3.0, 1e-12);
  cr_expect_lt(maxerr, 1e-4, "pose error %g", maxerr);

  /* hanging chain: A welded to the world, B welded to A, gravity; 1 s */
  const double grav[3] = {0, 0, -9.81};
  body c = {.m = 2.0, .I = {0.3, 0.3, 0.3}}, d = {.m = 1.0, .I = {0.2, 0.25, 0.3}};
  kn_pose_identity(&c.X);
  kn_pose_from_xyz_rpy(xyz, rpy, &d.X);
  kn_pose X_W0 = c.X, X_C0, X_CP = d.X;
  kn_pose_identity(&X_C0);
  double gc[6], gd[6];
  for (int n = 0; n < 100; n++) {
    /* Gauss-Seidel between the two problems is not what a full world does; solve both welds in
     * one problem: C is clique 0 (world weld and C-D weld), D clique 1 */
    kn_pose X_WC0, X_WP, X_WQ;
    frame(&c, &X_C0, &X_WC0);
    frame(&c, &X_CP, &X_WP);
    frame(&d, &X_BQ, &X_WQ);
    double g0w[6], g0[6], Mw[3], M[3], Ac[36], vc[6], Ad[36], vd[6];
    double Jw[36] = {0}, Jc[36] = {0}, Jd[36] = {0};
    kn_sap_weld_error(&X_W0, &X_WC0, g0w, Mw);
    kn_sap_weld_error(&X_WP, &X_WQ, g0, M);
    free_motion(&c, dt, grav, Ac, vc);
    free_motion(&d, dt, grav, Ad, vd);
    point_jacobian(&c, Mw, 1.0, Jw);
    point_jacobian(&c, M, -1.0, Jc);
    point_jacobian(&d, M, 1.0, Jd);
    kn_sap_problem* p = kn_sap_problem_create(dt);
    kn_error err = {0};
    cr_assert_eq(kn_sap_add_clique(p, 6, Ac, vc, NULL, &err), KN_OK);
    cr_assert_eq(kn_sap_add_clique(p, 6, Ad, vd, NULL, &err), KN_OK);
    cr_assert_eq(kn_sap_add_weld(p, 0, Jw, -1, NULL, g0w, NULL, &err), KN_OK, "%s", err.msg);
    cr_assert_eq(kn_sap_add_weld(p, 0, Jc, 1, Jd, g0, NULL, &err), KN_OK, "%s", err.msg);
    kn_sap_solver* s = kn_sap_solver_create();
    double v[12], guess[12], gam[12];
    memcpy(guess, c.v, sizeof c.v);
    memcpy(guess + 6, d.v, sizeof d.v);
    cr_assert_eq(kn_sap_solve(s, p, NULL, guess, v, gam, NULL, &err), KN_OK, "%s", err.msg);
    memcpy(c.v, v, sizeof c.v);
    memcpy(d.v, v + 6, sizeof d.v);
    advance(&c, dt);
    advance(&d, dt);
    memcpy(gc, gam, sizeof gc);
    memcpy(gd, gam + 6, sizeof gd);
    kn_sap_solver_free(s);
    kn_sap_problem_free(p);
  }
  kn_pose X_WP, X_WQ, X_WC0;
  frame(&c, &X_CP, &X_WP);
  frame(&d, &X_BQ, &X_WQ);
  frame(&c, &X_C0, &X_WC0);
  double g[6], gw[6];
  kn_sap_weld_error(&X_WP, &X_WQ, g, NULL);
  kn_sap_weld_error(&X_W0, &X_WC0, gw, NULL);
  fprintf(stderr, "hanging chain after 1 s: C-world error %.3e rad %.3e m, D-C error %.3e rad %.3e m\n",
          norm6(gw, 0), norm6(gw, 3), norm6(g, 0), norm6(g, 3));
  cr_expect_lt(fmax(norm6(g, 0), norm6(g, 3)), 1e-5);
  cr_expect_lt(fmax(norm6(gw, 0), norm6(gw, 3)), 1e-5);
  /* the world weld carries both weights, the C-D weld D's */
  EXPECT_REL("world weld force z = (m_C + m_D) g", gc[5] / dt, 3 * 9.81, 1e-6);
  EXPECT_REL("C-D weld force z = m_D g", gd[5] / dt, 9.81, 1e-6);
}
