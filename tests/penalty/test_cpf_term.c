/* The continuous penalty forces as a contact term (penalty/cpf_term.c): its assembled Jacobian T
 * against central differences of its residual, its residual against the pair forces (r = -dt J^T F),
 * and S symmetric positive semi-definite, on the digest's U4 stencil (a vertex through a rotating
 * triangle) as a vertex-face pair and an edge-edge pair on four more points with the same maps; three
 * points of each are FEM-like nodes (their own 3 DoFs each), the fourth a rigid-like point whose map B couples every DoF.
 * dt = 0.5 s: x1 = x0 + dt J v. The FD step 1e-6 on O(1) velocities; tolerance 1e-6 of max |T|. The same
 * with Coulomb friction on the pairs (penalty/cpf_friction.c), sliding and smoothed; and the friction
 * of one pair against its closed form. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "penalty/penalty.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define NV 12

static void dense(const kn_nl_triplets* t, double A[NV * NV]) {
  memset(A, 0, NV * NV * sizeof *A);
  for (int k = 0; k < t->nnz; k++) A[NV * t->i[k] + t->j[k]] += t->x[k];
}

static void rotx(const double p[3], double deg, double out[3]) {
  double t = deg * M_PI / 180, c = cos(t), s = sin(t);
  out[0] = p[0], out[1] = c * p[1] - s * p[2], out[2] = s * p[1] + c * p[2];
}

/* (friction mu, its smoothing eps_v; anchored: the anchored friction with its anchors moved off the
 * first contact by `shift` (the weights' change), lam_lag >= 0 lagged) => the checks on the term */
static void check_term_with(double mu, double eps_v, int anchored, double shift, double lam_lag) {
  const double dt = 0.5;
  double x0[4][3] = {{0, .2, .4}, {-1, -1, 0}, {1, -1, 0}, {0, 1, 0}}, x1[4][3] = {{0, .2, -.6}};
  for (int j = 1; j < 4; j++) rotx(x0[j], 30, x1[j]);
  /* B of the fourth point (3 x NV): its own DoFs 9..11 plus small couplings to all others */
  double B[3 * NV];
  for (int r = 0; r < 3; r++)
    for (int j = 0; j < NV; j++) B[NV * r + j] = (j == 9 + r) + 0.05 * sin(1.0 + 3 * r + 7 * j);
  kn_nl_points P = {0};
  int pt[4];
  for (int j = 0; j < 3; j++) {
    kn_point_map m = {.n = 1, .col = {3 * j}, .w = {1}};
    memcpy(m.x0, x0[j], sizeof m.x0);
    pt[j] = kn_nl_points_add(&P, &m, 0, NV, NULL);
  }
  kn_point_map mb = {.B = B};
  memcpy(mb.x0, x0[3], sizeof mb.x0);
  pt[3] = kn_nl_points_add(&P, &mb, 0, NV, NULL);
  /* v with x0 + dt J v near x1 (the nodes exactly; the B point up to its small couplings) */
  double v[NV] = {0};
  for (int j = 0; j < 4; j++)
    for (int k = 0; k < 3; k++) v[3 * j + k] = (x1[j][k] - x0[j][k]) / dt;
  /* the pairs from the stencil at v (as carried pairs: start 0) */
  /* an edge-edge pair over four more points on the same maps (so the same displacements), placed
   * where edge (0, 1), moving down, crosses edge (2, 3), which turns up */
  const double ee0[4][3] = {{-1, 0.1, 0.5}, {1, -0.2, 0.6}, {0.1, -1, 0}, {-0.1, 1, 0.1}};
  int pe[4];
  for (int j = 0; j < 3; j++) {
    kn_point_map m = {.n = 1, .col = {3 * j}, .w = {1}};
    memcpy(m.x0, ee0[j], sizeof m.x0);
    pe[j] = kn_nl_points_add(&P, &m, 0, NV, NULL);
  }
  memcpy(mb.x0, ee0[3], sizeof mb.x0);
  pe[3] = kn_nl_points_add(&P, &mb, 0, NV, NULL);
  kn_cpf_term_pair pairs[2];
  for (int e = 0; e < 2; e++) {
    const int* q = e ? pe : pt;
    double a[12], b[12], u[3], s;
    for (int j = 0; j < 4; j++) {
      kn_nl_point_velocity(&P, q[j], v, u);
      for (int k = 0; k < 3; k++) a[3 * j + k] = P.p[q[j]].x0[k], b[3 * j + k] = a[3 * j + k] + dt * u[k];
    }
    kn_cpf_stencil st = {a, b, e};
    pairs[e] = (kn_cpf_term_pair){.edge_edge = e, .pt = {q[0], q[1], q[2], q[3]}, .s_start = 0, .mu = mu};
    cr_assert_eq(kn_cpf_first_contact(&st, 1e-6, &pairs[e].pair, &s), 1, "pair %d crosses", e);
    const double dv[4] = {0, shift, -0.5 * shift, -0.5 * shift}, de[4] = {shift, -shift, -0.5 * shift, 0.5 * shift};
    for (int j = 0; j < 4; j++) pairs[e].anchor[j] = pairs[e].pair.w[j] + (e ? de[j] : dv[j]);
    pairs[e].lam = lam_lag;
  }
  kn_cpf_term t = {.dt = dt, .k = 3.0, .eps_v = eps_v, .mode = KN_CPF_LK, .points = &P, .pairs = pairs, .n = 2,
                   .anchored = anchored, .lag_lambda = lam_lag >= 0};
  if (anchored) /* which regime each pair is in: stuck (|f_t| < mu lambda) or on the cone */
    for (int e = 0; e < 2; e++) {
      double a[12], b[12], u[3], F[12], ft[3], fn;
      for (int j = 0; j < 4; j++) {
        kn_nl_point_velocity(&P, pairs[e].pt[j], v, u);
        for (int k = 0; k < 3; k++) a[3 * j + k] = P.p[pairs[e].pt[j]].x0[k], b[3 * j + k] = a[3 * j + k] + dt * u[k];
      }
      kn_cpf_stencil st = {a, b, e};
      kn_cpf_impulse_jacobian(&st, &pairs[e].pair, 0, t.k, KN_CPF_LK, F, NULL, NULL);
      kn_cpf_anchor_friction(&st, pairs[e].anchor, mu, t.k, lam_lag, F, NULL, NULL, ft, &fn);
      double ratio = kn_vec3_norm(ft) / (mu * fn);
      cr_log_info("pair %d: |f_t| / mu lambda = %.6f", e, ratio);
      cr_assert_gt(fn, 0);
      if (shift > 0.05) cr_assert(fabs(ratio - 1) < 1e-12, "pair %d on the cone: %.15g", e, ratio);
      else cr_assert(ratio > 0 && ratio < 1, "pair %d stuck: %.15g", e, ratio);
    }
  double r[NV] = {0}, T[NV * NV], S[NV * NV];
  kn_nl_triplets Tt = {0}, St = {0};
  kn_nl_triplets_reset(&Tt, NV), kn_nl_triplets_reset(&St, NV);
  cr_assert_eq(kn_cpf_term_eval(&t, v, NULL, r, &Tt, &St, NULL), KN_OK);
  dense(&Tt, T), dense(&St, S);
  /* r = -dt sum J^T F */
  double want[NV] = {0}, F[12];
  for (int e = 0; e < 2; e++) {
    kn_cpf_term_pair_force(&t, e, v, F, NULL, NULL);
    for (int j = 0; j < 4; j++) kn_nl_point_add_force(&P, pairs[e].pt[j], -dt, F + 3 * j, want);
  }
  double scale = 0, worst = 0, rmax = 0;
  for (int i = 0; i < NV; i++) {
    cr_expect(fabs(r[i] - want[i]) <= 1e-15, "r[%d]", i);
    rmax = fmax(rmax, fabs(r[i]));
  }
  cr_assert_gt(rmax, 0, "the pairs act");
  for (int i = 0; i < NV * NV; i++) scale = fmax(scale, fabs(T[i]));
  for (int j = 0; j < NV; j++) {
    double vp[NV], vm[NV], rp[NV] = {0}, rm[NV] = {0};
    memcpy(vp, v, sizeof vp), memcpy(vm, v, sizeof vm);
    vp[j] += 1e-6, vm[j] -= 1e-6;
    kn_cpf_term_eval(&t, vp, NULL, rp, NULL, NULL, NULL);
    kn_cpf_term_eval(&t, vm, NULL, rm, NULL, NULL, NULL);
    for (int i = 0; i < NV; i++) worst = fmax(worst, fabs((rp[i] - rm[i]) / 2e-6 - T[NV * i + j]));
  }
  cr_log_info("max |T| %.3g, FD error %.3g", scale, worst);
  cr_expect(worst <= 1e-6 * scale, "T against central differences: %.3g of %.3g", worst, scale);
  /* S symmetric, x^T S x >= 0 on a few directions */
  for (int i = 0; i < NV; i++)
    for (int j = 0; j < NV; j++) cr_expect(fabs(S[NV * i + j] - S[NV * j + i]) <= 1e-15 * scale, "S symmetric");
  for (int q = 0; q < 20; q++) {
    double x[NV], Sx = 0;
    for (int i = 0; i < NV; i++) x[i] = sin(0.7 * q + 1.3 * i);
    for (int i = 0; i < NV; i++)
      for (int j = 0; j < NV; j++) Sx += x[i] * S[NV * i + j] * x[j];
    cr_expect_geq(Sx, -1e-14 * scale, "x^T S x = %.3g", Sx);
  }
  kn_nl_triplets_free(&Tt), kn_nl_triplets_free(&St), kn_nl_points_free(&P);
}

static void check_term(double mu, double eps_v) { check_term_with(mu, eps_v, 0, 0, -1); }

Test(cpf_term, jacobian_residual_and_psd_part) { check_term(0, 0); }
/* the anchored friction (kn_cpf_anchor_friction): stuck (mu 10 holds the anchors 0.01 of the weights
 * off), on the cone (anchors 0.3 off, mu 0.05: the exact lambda's derivative included), and with the
 * lambda lagged at 0.5 N, on the cone and stuck */
Test(cpf_term, jacobian_with_anchored_friction_stuck) { check_term_with(10, 0, 1, 0.01, -1); }
Test(cpf_term, jacobian_with_anchored_friction_on_the_cone) { check_term_with(0.05, 0, 1, 0.3, -1); }
Test(cpf_term, jacobian_with_anchored_friction_lagged) {
  check_term_with(0.05, 0, 1, 0.3, 0.5);
  check_term_with(10, 0, 1, 0.01, 0.5);
}
/* with friction (mu 0.4): eps_v 1e-3 puts both pairs' slip (O(1) m/s) in the Coulomb regime, 30 m/s
 * in the smoothed one; the Jacobian then also holds lambda's derivative */
Test(cpf_term, jacobian_with_sliding_friction) { check_term(0.4, 1e-3); }
Test(cpf_term, jacobian_with_smoothed_friction) { check_term(0.4, 30); }

/* kn_cpf_friction on one vertex-face pair: a vertex moving down through a fixed triangle in z = 0
 * while sliding along x at 0.3 m/s (no normal component in u_t). The normal force's + side F_+ is
 * along z; the friction opposes the slide with |f| = mu lambda f1(s) (s = 0.3 m/s): mu lambda exactly
 * above eps_v, mu lambda (2 s / eps - s^2 / eps^2) below; never above mu lambda; its four parts
 * sum to zero (an internal force) and weight the face's vertices by the barycentric w. */
Test(cpf_term, friction_opposes_the_slide_within_the_cone) {
  const double dt = 0.01, mu = 0.3;
  double x0[12] = {0.2, 0.3, 1e-3, -1, -1, 0, 2, -1, 0, -1, 2, 0}, x1[12];
  memcpy(x1, x0, sizeof x1);
  x1[0] += 0.3 * dt, x1[2] -= 2e-3;
  kn_cpf_stencil st = {x0, x1, 0};
  kn_cpf_pair pair;
  double s_star;
  cr_assert_eq(kn_cpf_first_contact(&st, 1e-6, &pair, &s_star), 1);
  const double eps[3] = {1e-3, 0.3, 1.0};
  for (int e = 0; e < 3; e++) {
    double F[12], Fn[12], ft[3], fn;
    kn_cpf_force_jacobian(&st, &pair, s_star, 1e3, KN_CPF_LK, Fn, NULL, NULL);
    memcpy(F, Fn, sizeof F);
    kn_cpf_friction(&st, &pair, mu, eps[e], dt, -1, F, NULL, NULL, ft, &fn);
    cr_assert_gt(fn, 0, "the pair pushes");
    cr_expect(fabs(fn - fabs(Fn[2])) <= 1e-15 * fn, "lambda = |F_p . n| (F_p along z: %g %g)", Fn[0], Fn[1]);
    double s = 0.3, f1 = s < eps[e] ? 2 * s / eps[e] - s * s / (eps[e] * eps[e]) : 1;
    cr_expect(fabs(ft[0] + mu * fn * f1) <= 1e-12 * mu * fn, "eps %g: f_x %.15g, want %.15g", eps[e], ft[0], -mu * fn * f1);
    cr_expect(fabs(ft[1]) <= 1e-15 * fn && ft[2] == 0, "eps %g: only along -x: %g %g", eps[e], ft[1], ft[2]);
    cr_expect(sqrt(ft[0] * ft[0] + ft[1] * ft[1]) <= mu * fn * (1 + 1e-15), "eps %g: inside the cone", eps[e]);
    double sum[3] = {0, 0, 0};
    for (int j = 0; j < 4; j++)
      for (int c = 0; c < 3; c++) sum[c] += F[3 * j + c] - Fn[3 * j + c];
    for (int c = 0; c < 3; c++) cr_expect(fabs(sum[c]) <= 1e-15 * fn, "eps %g: internal (sum %g)", eps[e], sum[c]);
    for (int j = 1; j < 4; j++)
      cr_expect(fabs(F[3 * j] - Fn[3 * j] + pair.w[j] * ft[0]) <= 1e-15 * fn, "eps %g: vertex %d's share", eps[e], j);
  }
}

/* kn_cpf_anchor_friction and kn_cpf_anchor_relax on one vertex-face pair: a vertex through a fixed
 * triangle in z = 0 moving 3 mm along x over the step, crossing at s* = 1/2, its anchor the first
 * contact's point: r_t = 1.5 mm along x at the end (k 1e3: the spring's pull 1.5 N along -x). mu 10:
 * stuck, f = -k r_t = (-1.5, 0, 0) N (no creep: the
 * force does not depend on the speed); mu 0.3: on the cone, |f| = mu lambda along -x. The relax then
 * moves the anchor so that k |r_t| = (1 + KN_CPF_CONE_BAND) mu lambda: the spring where the C1 blend
 * from stuck reaches the cone, so |f| is still mu lambda at the next evaluation of the same positions,
 * and a stuck spring's anchor stays. */
Test(cpf_term, anchored_friction_sticks_then_slides_onto_the_cone) {
  const double k = 1e3, mus[2] = {10, 0.3};
  double x0[12] = {0.2, 0.3, 1e-3, -1, -1, 0, 2, -1, 0, -1, 2, 0}, x1[12];
  memcpy(x1, x0, sizeof x1);
  x1[0] += 3e-3, x1[2] -= 2e-3;
  kn_cpf_stencil st = {x0, x1, 0};
  kn_cpf_pair pair;
  double s_star;
  cr_assert_eq(kn_cpf_first_contact(&st, 1e-6, &pair, &s_star), 1);
  for (int m = 0; m < 2; m++) {
    double beta[4], F[12], Fn[12], ft[3], fn;
    memcpy(beta, pair.w, sizeof beta);
    kn_cpf_force_jacobian(&st, &pair, s_star, k, KN_CPF_LK, Fn, NULL, NULL);
    memcpy(F, Fn, sizeof F);
    kn_cpf_anchor_friction(&st, beta, mus[m], k, -1, F, NULL, NULL, ft, &fn);
    cr_assert_gt(fn, 0);
    double want = m == 0 ? -k * (1 - s_star) * 3e-3 : -mus[m] * fn;
    cr_expect(fabs(s_star - 0.5) < 1e-12, "s* %.15g", s_star);
    cr_expect(fabs(ft[0] - want) <= 1e-12 * fabs(want), "mu %g: f_x %.15g, want %.15g", mus[m], ft[0], want);
    cr_expect(fabs(ft[1]) <= 1e-12 * fabs(want) && fabs(ft[2]) <= 1e-12 * fabs(want), "mu %g: along -x only: %g %g",
              mus[m], ft[1], ft[2]);
    for (int j = 1; j < 4; j++)
      cr_expect(fabs(F[3 * j] - Fn[3 * j] + pair.w[j] * ft[0]) <= 1e-14 * fn, "mu %g: vertex %d's share", mus[m], j);
    double before[4];
    memcpy(before, beta, sizeof before);
    int moved = kn_cpf_anchor_relax(&st, beta, mus[m], k, fn);
    cr_expect_eq(moved, m == 1, "mu %g: the anchor moves only off the cone", mus[m]);
    if (!moved) {
      for (int j = 0; j < 4; j++) cr_expect_eq(beta[j], before[j]);
      continue;
    }
    double r = 0; /* r_t along x after the relax: the vertex minus the anchor's point, at x1 */
    r = x1[0] - (beta[1] * x1[3] + beta[2] * x1[6] + beta[3] * x1[9]);
    cr_expect(fabs(k * fabs(r) - (1 + KN_CPF_CONE_BAND) * mus[m] * fn) <= 1e-9 * mus[m] * fn,
              "relaxed: k |r_t| %.15g, (1 + band) mu lambda %.15g", k * fabs(r), (1 + KN_CPF_CONE_BAND) * mus[m] * fn);
    cr_expect(fabs(beta[1] + beta[2] + beta[3] - 1) <= 1e-15, "the weights still sum to 1");
    memcpy(F, Fn, sizeof F);
    kn_cpf_anchor_friction(&st, beta, mus[m], k, -1, F, NULL, NULL, ft, &fn);
    cr_expect(fabs(ft[0] + mus[m] * fn) <= 1e-9 * mus[m] * fn, "after the relax |f| = mu lambda: %.15g", ft[0]);
  }
}

/* the anchored spring's C1 switch to the cone (kn_cpf_anchor_friction, KN_CPF_CONE_BAND b): with rho =
 * k |r_t| / (mu lambda), |f| / (mu lambda) = rho up to 1 - b, the quadratic rho - (rho - 1 + b)^2 / 4b
 * between, 1 from 1 + b; its slope continuous at both ends (1 and 0); and the force's Jacobian in
 * the end positions (normal force and exact lambda included) against central differences inside the
 * band, where the hard switch had a kink (the §6.1 block's stall at dt 1e-2). The stencil of the test
 * above (a vertex through a face, k 1e3, mu 0.3), the anchor moved along x to set rho. */
Test(cpf_term, anchored_friction_leaves_the_stuck_zone_c1) {
  const double k = 1e3, mu = 0.3, b = KN_CPF_CONE_BAND;
  double x0[12] = {0.2, 0.3, 1e-3, -1, -1, 0, 2, -1, 0, -1, 2, 0}, x1[12];
  memcpy(x1, x0, sizeof x1);
  x1[0] += 3e-3, x1[2] -= 2e-3;
  kn_cpf_stencil st = {x0, x1, 0};
  kn_cpf_pair pair;
  double s_star, Fn[12], lam, F[12], ft[3];
  cr_assert_eq(kn_cpf_first_contact(&st, 1e-6, &pair, &s_star), 1);
  kn_cpf_force_jacobian(&st, &pair, s_star, k, KN_CPF_LK, Fn, NULL, NULL);
  memcpy(F, Fn, sizeof F);
  double beta0[4];
  memcpy(beta0, pair.w, sizeof beta0);
  kn_cpf_anchor_friction(&st, beta0, mu, k, -1, F, NULL, NULL, ft, &lam);
  cr_assert_gt(lam, 0);
  /* the anchor whose r_t is rho mu lambda / k along x (the face's vertex b is 3 m along x from a) */
  double r0 = x1[0] - (beta0[1] * x1[3] + beta0[2] * x1[6] + beta0[3] * x1[9]);
#define ANCHOR_AT(rho, beta)                                                        \
  do {                                                                              \
    double dx_ = r0 - (rho) * mu * lam / k;                                         \
    memcpy(beta, beta0, sizeof beta0), beta[2] += dx_ / 3, beta[1] -= dx_ / 3;      \
  } while (0)
  const double rhos[7] = {0.5, 1 - b, 0.95, 1.0, 1.05, 1 + b, 1.5};
  for (int i = 0; i < 7; i++) {
    double rho = rhos[i], beta[4], want = rho <= 1 - b ? rho : rho >= 1 + b ? 1 : rho - (rho - 1 + b) * (rho - 1 + b) / (4 * b);
    ANCHOR_AT(rho, beta);
    memcpy(F, Fn, sizeof F);
    double fn;
    kn_cpf_anchor_friction(&st, beta, mu, k, -1, F, NULL, NULL, ft, &fn);
    cr_expect(fabs(kn_vec3_norm(ft) / (mu * fn) - want) <= 1e-9, "rho %g: |f| / mu lambda %.12f, want %.12f", rho,
              kn_vec3_norm(ft) / (mu * fn), want);
  }
  /* the slope d|f|/d rho on both sides of each end of the band: 1 and 1 at 1 - b, 0 and 0 at 1 + b */
  const double ends[2] = {1 - b, 1 + b}, h = 1e-6;
  for (int e = 0; e < 2; e++) {
    double side[2];
    for (int sd = 0; sd < 2; sd++) {
      double beta[4], fa[3], fb[3], fn;
      ANCHOR_AT(ends[e] + (sd ? h : -2 * h), beta);
      memcpy(F, Fn, sizeof F), kn_cpf_anchor_friction(&st, beta, mu, k, -1, F, NULL, NULL, fa, &fn);
      ANCHOR_AT(ends[e] + (sd ? 2 * h : -h), beta);
      memcpy(F, Fn, sizeof F), kn_cpf_anchor_friction(&st, beta, mu, k, -1, F, NULL, NULL, fb, &fn);
      side[sd] = (kn_vec3_norm(fb) - kn_vec3_norm(fa)) / (mu * fn * h);
    }
    cr_expect(fabs(side[0] - side[1]) <= 1e-4 && fabs(side[0] - (e ? 0 : 1)) <= 1e-4,
              "rho %g: slope %.6f below, %.6f above", ends[e], side[0], side[1]);
  }
  /* dF/dx1 against central differences inside the band (lambda exact: its derivative enters) */
  for (int i = 2; i < 5; i++) {
    double beta[4], dF[144], d[12], worst = 0, scale = 0;
    ANCHOR_AT(rhos[i], beta);
    kn_cpf_force_jacobian(&st, &pair, s_star, k, KN_CPF_LK, F, dF, NULL);
    kn_cpf_anchor_friction(&st, beta, mu, k, -1, F, dF, NULL, NULL, NULL);
    for (int a = 0; a < 12; a++) d[a] = sin(1.7 * a + 0.3);
    double xp[12], xm[12], Fp[12], Fm[12];
    for (int a = 0; a < 12; a++) xp[a] = x1[a] + 1e-9 * d[a], xm[a] = x1[a] - 1e-9 * d[a];
    kn_cpf_stencil sp = {x0, xp, 0}, sm = {x0, xm, 0};
    kn_cpf_force_jacobian(&sp, &pair, s_star, k, KN_CPF_LK, Fp, NULL, NULL);
    kn_cpf_anchor_friction(&sp, beta, mu, k, -1, Fp, NULL, NULL, NULL, NULL);
    kn_cpf_force_jacobian(&sm, &pair, s_star, k, KN_CPF_LK, Fm, NULL, NULL);
    kn_cpf_anchor_friction(&sm, beta, mu, k, -1, Fm, NULL, NULL, NULL, NULL);
    for (int a = 0; a < 12; a++) {
      double jd = 0;
      for (int c = 0; c < 12; c++) jd += dF[12 * a + c] * d[c];
      worst = fmax(worst, fabs((Fp[a] - Fm[a]) / 2e-9 - jd)), scale = fmax(scale, fabs(jd));
    }
    cr_expect(worst <= 1e-6 * scale, "rho %g: dF d off central differences by %.3g of %.3g", rhos[i], worst, scale);
  }
#undef ANCHOR_AT
}
