/* Pair distances (contact/pair_distance.c) against the IPC digest's micro-tests (§9.7, items 3-5):
 * the distance cases and squared distances of its triangle and edge examples, the parallel-edge
 * guard with the mollifier at 0, the mollifier's values e(0) = 0, e(eps/2) = 0.75, e(eps) = 1 with
 * e'(eps) = 0, and central finite differences of every case's gradient and Hessian (and the
 * mollifier's) at random configurations: step 1e-6, error relative to the largest entry < 1e-6
 * (the digest's tolerance; measured errors are printed). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "contact/contact.h"
#include "../support/mesh_poses.h"

static void stencil(double x[12], const double a[3], const double b[3], const double c[3], const double d[3]) {
  memcpy(x, a, 3 * sizeof(double)), memcpy(x + 3, b, 3 * sizeof(double));
  memcpy(x + 6, c, 3 * sizeof(double)), memcpy(x + 9, d, 3 * sizeof(double));
}

static const double T0[3] = {0, 0, 0}, T1[3] = {1, 0, 0}, T2[3] = {0, 1, 0};

Test(pair_distance, point_triangle_cases) {
  struct {
    double p[3];
    kn_dist_kind kind;
    int v1;
    double s;
  } cases[] = {
      {{0.25, 0.25, 1}, KN_DIST_PT, 1, 1.0},
      {{0.5, -1, 0}, KN_DIST_PE, 1, 1.0}, /* edge t0 t1 */
      {{-1, -1, 0}, KN_DIST_PP, 1, 2.0},  /* vertex t0 */
      {{2, 0.5, 0.3}, KN_DIST_PP, 2, 1.34}, /* beyond t1: |(1, 0.5, 0.3)|^2 */
      {{1, 1, 0}, KN_DIST_PE, 2, 0.5},    /* edge t1 t2 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    double x[12];
    stencil(x, cases[i].p, T0, T1, T2);
    kn_dist_case c = kn_dist_point_triangle_case(x);
    cr_assert_eq(c.kind, cases[i].kind, "point %zu: case %d, expected %d", i, c.kind, cases[i].kind);
    cr_assert_eq(c.v[1], cases[i].v1, "point %zu: vertex %d", i, c.v[1]);
    double s = kn_dist_eval(x, c, NULL, NULL);
    cr_assert_float_eq(s, cases[i].s, 1e-12, "point %zu: s = %.17g, expected %g", i, s, cases[i].s);
  }
}

Test(pair_distance, edge_edge_cases) {
  double x[12];
  const double a0[3] = {0, 0, 0}, a1[3] = {1, 0, 0}, b0[3] = {0.5, -1, 1}, b1[3] = {0.5, 1, 1};
  stencil(x, a0, a1, b0, b1);
  kn_dist_case c = kn_dist_edge_edge_case(x);
  cr_assert_eq(c.kind, KN_DIST_EE);
  cr_assert_float_eq(kn_dist_eval(x, c, NULL, NULL), 1.0, 1e-12);
  /* parallel edges: a point-edge or point-point case, s = 1, and the mollifier is 0 */
  const double p0[3] = {0, 0, 1}, p1[3] = {1, 0, 1};
  stencil(x, a0, a1, p0, p1);
  c = kn_dist_edge_edge_case(x);
  cr_assert(c.kind == KN_DIST_PE || c.kind == KN_DIST_PP, "case %d", c.kind);
  cr_assert_float_eq(kn_dist_eval(x, c, NULL, NULL), 1.0, 1e-12);
  cr_assert_float_eq(kn_dist_edge_mollifier(x, 1e-3, NULL, NULL), 0.0, 1e-15);
  /* crossing beyond the ends: b's segment passes a1's side, closest a1 against edge b */
  const double q0[3] = {2, -1, 0.5}, q1[3] = {2, 1, 0.5};
  stencil(x, a0, a1, q0, q1);
  c = kn_dist_edge_edge_case(x);
  cr_assert_eq(c.kind, KN_DIST_PE);
  cr_assert_eq(c.v[0], 1, "point a1");
  cr_assert_float_eq(kn_dist_eval(x, c, NULL, NULL), 1.25, 1e-12, "|(1, 0, 0.5)|^2");
}

Test(pair_distance, mollifier_values) {
  /* c = |ea x eb|^2 = sin^2(theta) for unit edges: choose theta so that c = 0, eps/2, eps */
  double eps = 1e-3, x[12];
  const double a0[3] = {0, 0, 0}, a1[3] = {1, 0, 0}, b0[3] = {0, 0, 1};
  double want_c[3] = {0, eps / 2, eps}, want_e[3] = {0, 0.75, 1};
  for (int i = 0; i < 3; i++) {
    double sn = sqrt(want_c[i]), b1[3] = {sqrt(1 - sn * sn), sn, 1};
    stencil(x, a0, a1, b0, b1);
    double g[12];
    double e = kn_dist_edge_mollifier(x, eps, g, NULL);
    cr_assert_float_eq(e, want_e[i], 1e-9, "e(%g) = %.17g", want_c[i], e);
    if (i == 2) {
      double gn = 0;
      for (int k = 0; k < 12; k++) gn += g[k] * g[k];
      cr_assert(sqrt(gn) <= 1e-9, "e'(eps) = 0 (|grad| %g)", sqrt(gn));
    }
  }
}

/* (f at x, its gradient and Hessian) against central differences, step 1e-6, error relative to the
 * largest entry; returns the worst relative error of the Hessian (gradient in *ge) */
typedef double (*scalar12)(const double x[12], void* ctx, double g[12], double H[144]);

static double fd(scalar12 f, void* ctx, const double x[12], double* ge) {
  double g[12], H[144], xp[12], xm[12], gp[12], gm[12], gmax = 0, hmax = 0, eg = 0, eh = 0, h = 1e-6;
  f(x, ctx, g, H);
  for (int k = 0; k < 12; k++) gmax = fmax(gmax, fabs(g[k]));
  for (int k = 0; k < 144; k++) hmax = fmax(hmax, fabs(H[k]));
  for (int k = 0; k < 12; k++) {
    memcpy(xp, x, sizeof xp), memcpy(xm, x, sizeof xm);
    xp[k] += h, xm[k] -= h;
    double fp = f(xp, ctx, gp, NULL), fm = f(xm, ctx, gm, NULL);
    eg = fmax(eg, fabs((fp - fm) / (2 * h) - g[k]));
    for (int j = 0; j < 12; j++) eh = fmax(eh, fabs((gp[j] - gm[j]) / (2 * h) - H[12 * j + k]));
  }
  *ge = eg / gmax;
  return eh / hmax;
}

static double eval_case(const double x[12], void* ctx, double g[12], double H[144]) {
  return kn_dist_eval(x, *(const kn_dist_case*)ctx, g, H);
}
static double eval_mollifier(const double x[12], void* ctx, double g[12], double H[144]) {
  return kn_dist_edge_mollifier(x, *(const double*)ctx, g, H);
}

Test(pair_distance, finite_differences) {
  g_rng = 0x5eed1234;
  int seen[4] = {0}, checked = 0;
  double worst_g = 0, worst_h = 0;
  for (int trial = 0; trial < 400 && checked < 200; trial++) {
    double x[12];
    for (int k = 0; k < 12; k++) x[k] = 2 * urand() - 1;
    kn_dist_case cs[2] = {kn_dist_point_triangle_case(x), kn_dist_edge_edge_case(x)};
    for (int j = 0; j < 2; j++) {
      double ge, he = fd(eval_case, &cs[j], x, &ge);
      /* the case must stay the same within the finite-difference step: skip stencils within 1e-4 of a
       * case boundary (each case is smooth, the distance across cases only C1) */
      int stable = 1;
      for (int k = 0; k < 12 && stable; k++)
        for (int sgn = -1; sgn <= 1 && stable; sgn += 2) {
          double y[12];
          memcpy(y, x, sizeof y);
          y[k] += sgn * 1e-4;
          kn_dist_case d = j ? kn_dist_edge_edge_case(y) : kn_dist_point_triangle_case(y);
          stable = d.kind == cs[j].kind && !memcmp(d.v, cs[j].v, sizeof d.v);
        }
      if (!stable) continue;
      cr_assert(ge < 1e-6 && he < 1e-6, "case %d (%s): gradient error %g, Hessian error %g", cs[j].kind,
                j ? "edge-edge" : "point-triangle", ge, he);
      worst_g = fmax(worst_g, ge), worst_h = fmax(worst_h, he);
      seen[cs[j].kind]++, checked++;
    }
  }
  for (int k = 0; k < 4; k++) cr_assert(seen[k] >= 3, "case %d checked %d times", k, seen[k]);
  printf("pair distances: %d stencils (PP %d, PE %d, PT %d, EE %d), worst FD error gradient %.1e, Hessian %.1e\n",
         checked, seen[0], seen[1], seen[2], seen[3], worst_g, worst_h);

  /* the mollifier inside its active range: nearly parallel unit-ish edges */
  double worst = 0;
  int nm = 0;
  for (int trial = 0; trial < 20; trial++) {
    double x[12] = {0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 1};
    for (int k = 0; k < 12; k++) x[k] += 0.01 * (2 * urand() - 1);
    double eps = 1e-3;
    double e = kn_dist_edge_mollifier(x, eps, NULL, NULL);
    if (!(e < 0.99)) continue;
    double ge, he = fd(eval_mollifier, &eps, x, &ge);
    cr_assert(ge < 1e-6 && he < 1e-6, "mollifier: gradient error %g, Hessian error %g (e = %g)", ge, he, e);
    worst = fmax(worst, fmax(ge, he));
    nm++;
  }
  cr_assert(nm >= 5, "the mollifier was active in %d of 20 stencils", nm);
  printf("mollifier: %d stencils, worst FD error %.1e\n", nm, worst);
}

/* Additive CCD (§9.7 item 9): a point moving straight through a triangle, its gap crossed 1000
 * times over in one step, reports a time of impact before the true one, where the distance is
 * still >= 0.1 of the starting distance; edges crossing likewise; no impact when the motion stays
 * clear; and the static edge-triangle test on crossing, missing and touching segments. */
Test(pair_distance, additive_ccd) {
  double x[12], dx[12] = {0}, toi;
  const double p[3] = {0.25, 0.25, 1e-3};
  stencil(x, p, T0, T1, T2);
  dx[2] = -1.0; /* the point moves 1 m down: it meets the triangle at t = 1e-3 */
  cr_assert_eq(kn_pair_ccd(x, dx, 0, 0.9, 0.0, &toi), 1);
  cr_assert(toi < 1e-3 && toi > 0, "toi %.17g before the true 1e-3", toi);
  double y[12];
  for (int k = 0; k < 12; k++) y[k] = x[k] + toi * dx[k];
  double d = sqrt(kn_dist_eval(y, kn_dist_point_triangle_case(y), NULL, NULL));
  cr_assert(d >= 0.1 * 1e-3 * (1 - 1e-12), "distance at toi %g, at least 0.1 d0 = 1e-4", d);
  cr_assert(d <= 0.2e-3, "and not needlessly early (distance %g)", d);
  /* the triangle moves up instead (relative motion counts, not who moves) */
  memset(dx, 0, sizeof dx);
  for (int v = 1; v < 4; v++) dx[3 * v + 2] = 1.0;
  cr_assert_eq(kn_pair_ccd(x, dx, 0, 0.9, 0.0, &toi), 1);
  cr_assert(toi < 1e-3, "toi %g", toi);
  /* moving sideways above the plane: no impact */
  memset(dx, 0, sizeof dx);
  dx[0] = 5;
  cr_assert_eq(kn_pair_ccd(x, dx, 0, 0.9, 0.0, &toi), 0);
  cr_assert_eq(toi, 1.0);
  /* two edges 1 mm apart, one moving through the other's line */
  const double a0[3] = {0, 0, 0}, a1[3] = {1, 0, 0}, b0[3] = {0.5, -1, 1e-3}, b1[3] = {0.5, 1, 1e-3};
  stencil(x, a0, a1, b0, b1);
  memset(dx, 0, sizeof dx);
  dx[8] = dx[11] = -2.0; /* b moves 2 m down: contact at t = 5e-4 */
  cr_assert_eq(kn_pair_ccd(x, dx, 1, 0.9, 0.0, &toi), 1);
  cr_assert(toi > 0 && toi < 5e-4, "edge toi %g", toi);
  /* the static test */
  const double e0[3] = {0.2, 0.2, 1}, e1[3] = {0.2, 0.2, -1}, f0[3] = {2, 2, 1}, f1[3] = {2, 2, -1};
  cr_assert_eq(kn_edge_triangle_intersect(e0, e1, T0, T1, T2), 1);
  cr_assert_eq(kn_edge_triangle_intersect(f0, f1, T0, T1, T2), 0);
  cr_assert_eq(kn_edge_triangle_intersect(e0, p, T0, T1, T2), 0, "a segment ending above the plane");
}

/* ACCD's closing-rate bound along the closest points' direction (pair_ccd.c, separating_rate): a
 * point 1e-11 m above a triangle sliding 0.1 m along it closes nothing, no impact (with the closest
 * points' speed bound alone ACCD advanced by 0.9 d / 0.1 = 9e-11 of the step per sub-step and
 * reported an impact where its 100000 sub-steps ran out, t = 9e-6: the twisted rods' crawl at h 1);
 * the same point descending as it slides still stops before the plane; and 4000 random stencils,
 * point-triangle and edge-edge, moved by random displacements up to 20 times their size: the
 * distance sampled at 2000 times in [0, toi] (in [0, 1] when no impact) stays >= (1 - c)^2 d0 =
 * 0.01 d0: each sub-step ends at >= (1 - c) d0 and closes at most c of its start's distance (no
 * crossing missed). */
Test(pair_distance, additive_ccd_sliding_and_random_motions) {
  double x[12], dx[12] = {0}, toi;
  const double p[3] = {0.25, 0.25, 1e-11};
  stencil(x, p, T0, T1, T2);
  dx[0] = 0.1;
  cr_assert_eq(kn_pair_ccd(x, dx, 0, 0.9, 0.0, &toi), 0, "toi %g", toi);
  cr_assert_eq(toi, 1.0);
  dx[2] = -2e-11; /* reaches the plane at t = 0.5 */
  cr_assert_eq(kn_pair_ccd(x, dx, 0, 0.9, 0.0, &toi), 1);
  cr_assert(toi > 0 && toi < 0.5, "toi %g before the plane at 0.5", toi);
  unsigned seed = 5u;
  int impacts = 0;
  for (int k = 0; k < 4000; k++) {
    const int ee = k & 1;
    double y[12];
    for (int i = 0; i < 24; i++) {
      seed = seed * 1103515245u + 12345u;
      double u = ((seed >> 8) & 0xffffff) / (double)0x1000000 - 0.5;
      if (i < 12) x[i] = u;
      else dx[i - 12] = 20 * u;
    }
    double d0 = sqrt(kn_dist_eval(x, ee ? kn_dist_edge_edge_case(x) : kn_dist_point_triangle_case(x), NULL, NULL));
    if (!(d0 > 1e-3)) continue;
    impacts += kn_pair_ccd(x, dx, ee, 0.9, 0.0, &toi);
    double dmin = INFINITY;
    for (int j = 0; j <= 2000; j++) {
      double t = toi * j / 2000.0;
      for (int i = 0; i < 12; i++) y[i] = x[i] + t * dx[i];
      dmin = fmin(dmin, sqrt(kn_dist_eval(y, ee ? kn_dist_edge_edge_case(y) : kn_dist_point_triangle_case(y), NULL, NULL)));
    }
    cr_assert(dmin >= 0.01 * d0 * (1 - 1e-9), "stencil %d (%s): distance %g on [0, %g] from %g", k, ee ? "EE" : "PT", dmin,
              toi, d0);
  }
  cr_assert(impacts > 500, "%d impacts: the motions must cross", impacts);
}

/* The distance alone (g and H NULL: the ipc term's test of every candidate against dhat) is
 * bitwise the distance computed with its derivatives, for every case (PP, PE, PT, EE) of 2000 random
 * point-triangle and edge-edge stencils. */
Test(pair_distance, distance_alone_equals_with_derivatives) {
  unsigned seed = 17u;
  int seen[4] = {0};
  for (int k = 0; k < 2000; k++) {
    double x[12], g[12], H[144];
    for (int i = 0; i < 12; i++) {
      seed = seed * 1103515245u + 12345u;
      x[i] = ((seed >> 8) & 0xffffff) / (double)0x1000000 - 0.5;
    }
    kn_dist_case c = k % 2 ? kn_dist_edge_edge_case(x) : kn_dist_point_triangle_case(x);
    double s0 = kn_dist_eval(x, c, NULL, NULL), s1 = kn_dist_eval(x, c, g, NULL), s2 = kn_dist_eval(x, c, g, H);
    cr_assert(s0 == s1 && s1 == s2, "case %d: %.17g alone, %.17g with g, %.17g with g and H", (int)c.kind, s0, s1, s2);
    seen[c.kind]++;
  }
  for (int i = 0; i < 4; i++) cr_assert_gt(seen[i], 0, "case %d never drawn", i);
}
