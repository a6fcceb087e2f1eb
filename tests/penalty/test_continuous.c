/* The continuous penalty force of one pair (penalty/continuous.c) against the digest's unit tests
 * with exact expected values (continuous-penalty-forces.md §7.3, k = 1, average forces): U1 vertex-
 * face and U2 edge-edge straight crossings, U3 a carried pair starting inside and released, U4 a
 * rotating triangle (L_k normalization), U5 penetrating and exiting within the step, U6 three
 * roots, U7 tunnelling; tolerances as the digest: 1e-12 absolute for U1-U3 and U7, 1e-9 relative
 * for U4-U6. And U8's invariants: the four forces sum to zero, a common translation changes
 * nothing. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "penalty/penalty.h"

static void set4(double x[12], const double a[3], const double b[3], const double c[3], const double d[3]) {
  memcpy(x, a, 24), memcpy(x + 3, b, 24), memcpy(x + 6, c, 24), memcpy(x + 9, d, 24);
}
#define V3(...) ((const double[3]){__VA_ARGS__})

static void near3(const double* got, const double want[3], double tol, int rel, const char* what) {
  double scale = rel ? sqrt(want[0] * want[0] + want[1] * want[1] + want[2] * want[2]) : 1.0;
  for (int k = 0; k < 3; k++)
    cr_assert(fabs(got[k] - want[k]) <= tol * scale, "%s[%d] = %.15g, expected %.15g", what, k, got[k], want[k]);
}

Test(cpf, u1_vertex_face_crossing) {
  double x0[12], x1[12], F[12], s;
  set4(x0, V3(.25, .25, .5), V3(0, 0, 0), V3(1, 0, 0), V3(0, 1, 0));
  set4(x1, V3(.25, .25, -.5), V3(0, 0, 0), V3(1, 0, 0), V3(0, 1, 0));
  kn_cpf_stencil st = {x0, x1, 0};
  double f[4], m[9];
  kn_cpf_cubic(&st, f, m);
  cr_assert(fabs(f[0] - 0.5) < 1e-15 && fabs(f[1] + 1) < 1e-15 && f[2] == 0 && f[3] == 0, "f = 0.5 - s");
  kn_cpf_pair p;
  cr_assert_eq(kn_cpf_first_contact(&st, 1e-9, &p, &s), 1);
  cr_assert(fabs(s - 0.5) < 1e-15 && p.sigma == -1);
  near3(p.w + 1, V3(0.5, 0.25, 0.25), 1e-15, 0, "w");
  cr_assert_eq(kn_cpf_force(&st, &p, s, 1.0, F), 1, "the pair persists");
  near3(F, V3(0, 0, 0.125), 1e-12, 0, "F_p (upward: restoring)");
  near3(F + 3, V3(0, 0, -0.0625), 1e-12, 0, "F_a");
  near3(F + 6, V3(0, 0, -0.03125), 1e-12, 0, "F_b");
  near3(F + 9, V3(0, 0, -0.03125), 1e-12, 0, "F_c");
}

Test(cpf, u2_edge_edge_crossing) {
  double x0[12], x1[12], F[12], s;
  set4(x0, V3(-1, 0, .5), V3(1, 0, .5), V3(0, -1, 0), V3(0, 1, 0));
  set4(x1, V3(-1, 0, -.5), V3(1, 0, -.5), V3(0, -1, 0), V3(0, 1, 0));
  kn_cpf_stencil st = {x0, x1, 1};
  kn_cpf_pair p;
  cr_assert_eq(kn_cpf_first_contact(&st, 1e-9, &p, &s), 1);
  cr_assert(fabs(s - 0.5) < 1e-15);
  for (int v = 0; v < 4; v++) cr_assert(fabs(p.w[v] - 0.5) < 1e-15, "weights 0.5");
  kn_cpf_force(&st, &p, s, 1.0, F);
  near3(F, V3(0, 0, 0.0625), 1e-12, 0, "F_a");
  near3(F + 3, V3(0, 0, 0.0625), 1e-12, 0, "F_b");
  near3(F + 6, V3(0, 0, -0.0625), 1e-12, 0, "F_c");
  near3(F + 9, V3(0, 0, -0.0625), 1e-12, 0, "F_d");
}

Test(cpf, u3_carried_pair_released) {
  double x0[12], x1[12], F[12];
  set4(x0, V3(.25, .25, -.2), V3(0, 0, 0), V3(1, 0, 0), V3(0, 1, 0));
  set4(x1, V3(.25, .25, .3), V3(0, 0, 0), V3(1, 0, 0), V3(0, 1, 0));
  kn_cpf_stencil st = {x0, x1, 0};
  kn_cpf_pair p = {{1, .5, .25, .25}, -1};
  cr_assert_eq(kn_cpf_force(&st, &p, 0.0, 1.0, F), 0, "released at the end of the step");
  near3(F, V3(0, 0, 0.04), 1e-12, 0, "F_p");
  near3(F + 3, V3(0, 0, -0.02), 1e-12, 0, "F_a");
  near3(F + 6, V3(0, 0, -0.01), 1e-12, 0, "F_b");
}

// R_x(theta) applied to a point
static void rotx(const double p[3], double deg, double out[3]) {
  double t = deg * 3.14159265358979323846 / 180, c = cos(t), s = sin(t);
  out[0] = p[0], out[1] = p[1] * c - p[2] * s, out[2] = p[1] * s + p[2] * c;
}

Test(cpf, u4_rotating_triangle) {
  double x0[12], x1[12], F[12], s, a[3], b[3], c[3];
  set4(x0, V3(0, .2, .4), V3(-1, -1, 0), V3(1, -1, 0), V3(0, 1, 0));
  rotx(x0 + 3, 30, a), rotx(x0 + 6, 30, b), rotx(x0 + 9, 30, c);
  set4(x1, V3(0, .2, -.6), a, b, c);
  kn_cpf_stencil st = {x0, x1, 0};
  double f[4], m[9];
  kn_cpf_cubic(&st, f, m);
  const double fw[4] = {1.6, -4.614359353944898, 0.535898384862245, 0};
  for (int i = 0; i < 4; i++) cr_assert(fabs(f[i] - fw[i]) <= 1e-9 * 4.6, "f[%d] = %.15g", i, f[i]);
  kn_cpf_pair p;
  cr_assert_eq(kn_cpf_first_contact(&st, 1e-9, &p, &s), 1);
  cr_assert(fabs(s - 0.3619593463562709) <= 1e-9 * 0.36, "s* = %.16g", s);
  near3(p.w + 1, V3(0.197451759394153, 0.197451759394153, 0.605096481211695), 1e-9, 1, "w");
  cr_assert_eq(p.sigma, -1);
  kn_cpf_force(&st, &p, s, 1.0, F);
  near3(F, V3(0, -0.0835193037741537, 0.190602120477821), 1e-9, 1, "F_p");
  near3(F + 9, V3(0, 0.050537236826991, -0.115332672412617), 1e-9, 1, "F_c");
}

Test(cpf, u5_in_and_out) {
  double x0[12], x1[12], F[12], s, a[3], b[3], c[3];
  const double A[3] = {-1, -1, 0}, B[3] = {1, -1, 0}, C[3] = {0, 1, 0};
  /* U4's triangle rotating by 10 degrees over the step */
  rotx(A, 10, a), rotx(B, 10, b), rotx(C, 10, c);
  set4(x0, V3(0, .3, .01), A, B, C);
  set4(x1, V3(0, 0, .01), a, b, c);
  kn_cpf_stencil st = {x0, x1, 0};
  double f[4], m[9], roots[3];
  kn_cpf_cubic(&st, f, m);
  cr_assert_eq(kn_cpf_roots(f, roots), 2);
  cr_assert(fabs(roots[0] - 0.2575293546349666) <= 1e-9 * 0.26 && fabs(roots[1] - 0.7453869341492307) <= 1e-9 * 0.75);
  kn_cpf_pair p;
  cr_assert_eq(kn_cpf_first_contact(&st, 1e-9, &p, &s), 1);
  cr_assert_eq(kn_cpf_force(&st, &p, s, 1.0, F), 0, "released: it exits within the step");
  near3(F, V3(0, -8.82326279091e-5, 1.00554856992715e-3), 1e-9, 1, "F_p");
  near3(F + 3, V3(0, 1.71255983766e-5, -1.95172935056e-4), 1e-9, 1, "F_a");
  near3(F + 9, V3(0, 5.39814311559e-5, -6.15202699815e-4), 1e-9, 1, "F_c");
}

Test(cpf, u6_three_roots) {
  double x0[12], x1[12], F[12], s;
  set4(x0, V3(.3, .3, -.6), V3(-1, 0, .7), V3(1, -.9, -.1), V3(.3, .3, -1));
  set4(x1, V3(.4, -.8, -.9), V3(.3, .7, .3), V3(-.6, .5, -.4), V3(.2, -.3, -.5));
  kn_cpf_stencil st = {x0, x1, 0};
  double f[4], m[9], roots[3];
  kn_cpf_cubic(&st, f, m);
  const double fw[4] = {0.708, -4.498, 8.538, -4.883};
  for (int i = 0; i < 4; i++) cr_assert(fabs(f[i] - fw[i]) <= 1e-12, "f[%d] = %.15g", i, f[i]);
  cr_assert_eq(kn_cpf_roots(f, roots), 3);
  const double rw[3] = {0.293318204841606, 0.540300969908921, 0.914896082263604};
  for (int i = 0; i < 3; i++) cr_assert(fabs(roots[i] - rw[i]) <= 1e-9 * rw[i], "root %d = %.15g", i, roots[i]);
  kn_cpf_pair p;
  cr_assert_eq(kn_cpf_first_contact(&st, 1e-9, &p, &s), 1);
  cr_assert(fabs(s - rw[0]) <= 1e-9, "the first root is valid");
  near3(p.w + 1, V3(0.00410515059658, 0.239650526355146, 0.756244323048273), 1e-9, 1, "w");
  cr_assert_eq(kn_cpf_force(&st, &p, s, 1.0, F), 1, "the pair persists");
  near3(F, V3(6.188217557e-4, -9.39097677e-6, 2.650923322e-3), 1e-8, 1, "F_p (the digest gives 10 digits)");
}

Test(cpf, u7_tunnelling_and_u8_invariants) {
  double x0[12], x1[12], F[12], s;
  set4(x0, V3(.25, .25, 10), V3(0, 0, 0), V3(1, 0, 0), V3(0, 1, 0));
  set4(x1, V3(.25, .25, -10), V3(0, 0, 0), V3(1, 0, 0), V3(0, 1, 0));
  kn_cpf_stencil st = {x0, x1, 0};
  kn_cpf_pair p;
  cr_assert_eq(kn_cpf_first_contact(&st, 1e-9, &p, &s), 1, "a vertex crossing the triangle between two far states");
  kn_cpf_force(&st, &p, s, 1.0, F);
  near3(F, V3(0, 0, 2.5), 1e-12, 0, "F_p = k d1^2 / (2 (d0 + d1))");
  /* U8 on U6's pair: the forces sum to zero; a common translation changes nothing */
  set4(x0, V3(.3, .3, -.6), V3(-1, 0, .7), V3(1, -.9, -.1), V3(.3, .3, -1));
  set4(x1, V3(.4, -.8, -.9), V3(.3, .7, .3), V3(-.6, .5, -.4), V3(.2, -.3, -.5));
  kn_cpf_stencil u = {x0, x1, 0};
  cr_assert_eq(kn_cpf_first_contact(&u, 1e-9, &p, &s), 1);
  double G[12];
  kn_cpf_force(&u, &p, s, 1.0, F);
  for (int c = 0; c < 3; c++) cr_assert(fabs(F[c] + F[3 + c] + F[6 + c] + F[9 + c]) <= 1e-17, "sum %d", c);
  double y0[12], y1[12];
  for (int k = 0; k < 12; k++) y0[k] = x0[k] + (k % 3 == 0 ? 3.5 : -1.25), y1[k] = x1[k] + (k % 3 == 0 ? 3.5 : -1.25);
  kn_cpf_stencil t = {y0, y1, 0};
  kn_cpf_pair q;
  cr_assert_eq(kn_cpf_first_contact(&t, 1e-9, &q, &s), 1);
  kn_cpf_force(&t, &q, s, 1.0, G);
  for (int k = 0; k < 12; k++) cr_assert(fabs(G[k] - F[k]) <= 1e-9 * 3e-3, "translated: %d", k);
}
