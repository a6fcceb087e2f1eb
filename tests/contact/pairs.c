/* Narrow-phase pairs through kn_collision_detect: analytic values for sphere-sphere,
 * capsule-capsule, box/cylinder-on-half-space, stacked boxes, libccd depths, the A-into-B normal
 * convention, the contact frame, the Hertz-weighted point and determinism. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "contact/contact.h"

#define PI 3.14159265358979323846

#define MAXC 8
typedef struct {
  kn_shape s[MAXC];
  kn_collider c[MAXC];
  kn_pose X[MAXC];
  int n;
  kn_collision_scene* cs;
} scene;

static int add(scene* S, kn_shape_type t, double a, double b, double c, int clique) {
  int i = S->n++;
  S->s[i] = (kn_shape){.type = t, .size = {a, b, c}};
  S->c[i] = (kn_collider){.clique = clique, .body = clique < 0 ? -1 : 0, .shape = &S->s[i],
                          .material = kn_contact_material_default(0.01), .group = 0xffffffffu, .mask = 0xffffffffu};
  kn_pose_identity(&S->c[i].X_bg);
  kn_pose_identity(&S->X[i]);
  return i;
}
static void build(scene* S) {
  kn_error err = {0};
  cr_assert_eq(kn_collision_scene_create(S->c, S->n, &S->cs, &err), KN_OK, "%s", err.msg);
}
static int detect(scene* S, double margin, const kn_contact_point** p) {
  int n;
  kn_error err = {0};
  cr_assert_eq(kn_collision_detect(S->cs, S->X, margin, p, &n, &err), KN_OK, "%s", err.msg);
  return n;
}
/* every point: unit n, R_WC orthonormal with det +1 and third column n */
static void check_frames(const kn_contact_point* p, int n) {
  for (int i = 0; i < n; ++i) {
    const double* R = p[i].R_WC;
    double RtR[9];
    kn_mat3_mulT(R, R, RtR);
    for (int k = 0; k < 9; ++k) cr_expect(fabs(RtR[k] - (k % 4 == 0)) < 1e-12, "R_WC orthonormal");
    double t1[3] = {R[0], R[3], R[6]}, t2[3] = {R[1], R[4], R[7]}, c[3];
    kn_vec3_cross(t1, t2, c);
    for (int k = 0; k < 3; ++k) {
      cr_expect(fabs(c[k] - p[i].n[k]) < 1e-12, "t1 x t2 = n (right-handed)");
      cr_expect(fabs(R[3 * k + 2] - p[i].n[k]) < 1e-15, "z column is n");
    }
  }
}

Test(pairs, sphere_sphere) {
  scene S = {0};
  add(&S, KN_SHAPE_SPHERE, 0.5, 0, 0, 0);
  add(&S, KN_SHAPE_SPHERE, 0.3, 0, 0, 1);
  S.s[1].type = KN_SHAPE_SPHERE;
  S.c[1].material.stiffness = 3e6; /* p = 1/4 pA + 3/4 pB (digest §2.2) */
  double u[3] = {1.0 / 3, 2.0 / 3, 2.0 / 3};
  for (int k = 0; k < 3; ++k) S.X[0].p[k] = 1.0, S.X[1].p[k] = 1.0 + 0.7 * u[k];
  build(&S);
  const kn_contact_point* p;
  int n = detect(&S, 0, &p);
  cr_assert_eq(n, 1);
  cr_expect(fabs(p[0].phi + 0.1) < 1e-12, "phi = 0.7 - 0.8");
  for (int k = 0; k < 3; ++k) {
    cr_expect(fabs(p[0].n[k] - u[k]) < 1e-12);
    double pa = 1.0 + 0.5 * u[k], pb = 1.0 + 0.4 * u[k];
    cr_expect(fabs(p[0].p[k] - (0.25 * pa + 0.75 * pb)) < 1e-12);
  }
  cr_expect(fabs(p[0].material.stiffness - 0.75e6) < 1e-6);
  cr_expect(fabs(p[0].material.dissipation_time - 0.01) < 1e-15); /* dt / 2 per side at dt 0.01 */
  check_frames(p, n);
  /* 0.05 apart: reported only with a margin above 0.05 */
  for (int k = 0; k < 3; ++k) S.X[1].p[k] = 1.0 + 0.85 * u[k];
  cr_expect_eq(detect(&S, 0.04, &p), 0);
  cr_assert_eq(detect(&S, 0.06, &p), 1);
  cr_expect(fabs(p[0].phi - 0.05) < 1e-12);
  kn_collision_scene_free(S.cs);
}

Test(pairs, capsule_capsule) {
  scene S = {0};
  add(&S, KN_SHAPE_CAPSULE, 0.3, 2.0, 0, 0);
  add(&S, KN_SHAPE_CAPSULE, 0.3, 2.0, 0, 1);
  double ax[3] = {0, 1, 0}, ay[3] = {1, 0, 0};
  kn_mat3_from_axis_angle(ax, PI / 2, S.X[0].R); /* along x */
  kn_mat3_from_axis_angle(ay, PI / 2, S.X[1].R); /* along y */
  S.X[1].p[2] = 0.5, S.X[1].p[0] = 0.2;
  build(&S);
  const kn_contact_point* p;
  int n = detect(&S, 0, &p);
  cr_assert_eq(n, 1, "crossed capsules: one point, got %d", n);
  cr_expect(fabs(p[0].phi + 0.1) < 1e-12, "phi %g = 0.5 - 0.6", p[0].phi);
  cr_expect(fabs(p[0].n[2] - 1) < 1e-12, "normal from A (below) into B");
  cr_expect(fabs(p[0].p[0] - 0.2) < 1e-12 && fabs(p[0].p[2] - 0.25) < 1e-12);
  /* parallel, side by side: two points (one per end) */
  memcpy(S.X[1].R, S.X[0].R, sizeof S.X[0].R);
  S.X[1].p[0] = 0.5, S.X[1].p[2] = 0.55;
  n = detect(&S, 0, &p);
  cr_expect_eq(n, 2, "parallel capsules: %d points", n);
  for (int i = 0; i < n; ++i) cr_expect(fabs(p[i].phi + 0.05) < 1e-12);
  check_frames(p, n);
  kn_collision_scene_free(S.cs);
}

Test(pairs, box_on_halfspace_tilted) {
  scene S = {0};
  add(&S, KN_SHAPE_HALFSPACE, 0, 0, 0, -1);
  add(&S, KN_SHAPE_BOX, 1.0, 0.6, 0.4, 0);
  double axis[3] = {1, 0, 0}, th = 0.02;
  kn_mat3_from_axis_angle(axis, th, S.X[1].R);
  /* lowest corners are at h - 0.3 sin - 0.2 cos; put them 5 mm deep */
  double h = 0.3 * sin(th) + 0.2 * cos(th) - 0.005;
  S.X[1].p[2] = h;
  build(&S);
  const kn_contact_point* p;
  int n = detect(&S, 0.02, &p);
  /* corners: z = h + (+-0.3) sin th... (y, z) = (+-0.3, +-0.2) rotated about x */
  int expect = 0;
  for (int c = 0; c < 8; ++c) {
    double y = (c & 2 ? 0.3 : -0.3), z = (c & 4 ? 0.2 : -0.2);
    if (h + sin(th) * y + cos(th) * z < 0.02) ++expect;
  }
  cr_assert_eq(n, expect, "%d points, expected %d corners within the margin", n, expect);
  cr_expect(n >= 4);
  int deep = 0;
  for (int i = 0; i < n; ++i) {
    cr_expect(p[i].a == 0 && p[i].b == 1 && fabs(p[i].n[2] + 0) >= 0);
    cr_expect(fabs(p[i].n[2] - 1) < 1e-12, "ground into box: +z");
    /* phi is the corner height; p is the corner's weighted position, with equal stiffness half
     * way between the corner and its projection */
    cr_expect(fabs(p[i].p[2] - 0.5 * p[i].phi) < 1e-12);
    deep += fabs(p[i].phi + 0.005) < 1e-12;
  }
  cr_expect_eq(deep, 2, "two lowest corners 5 mm deep");
  check_frames(p, n);
  kn_collision_scene_free(S.cs);
}

Test(pairs, cylinder_and_capsule_on_halfspace) {
  scene S = {0};
  add(&S, KN_SHAPE_HALFSPACE, 0, 0, 0, -1);
  add(&S, KN_SHAPE_CYLINDER, 0.5, 1.0, 0, 0);
  add(&S, KN_SHAPE_CAPSULE, 0.2, 1.0, 0, 1);
  double axis[3] = {1, 0, 0}, al = 0.3;
  kn_mat3_from_axis_angle(axis, al, S.X[1].R);
  double low = 0.5 * cos(al) + 0.5 * sin(al); /* centre height of the lowest rim point */
  S.X[1].p[2] = low - 0.01;
  double ay[3] = {0, 1, 0};
  kn_mat3_from_axis_angle(ay, PI / 2, S.X[2].R); /* capsule lying along x */
  S.X[2].p[0] = 5, S.X[2].p[2] = 0.2 - 0.003;
  build(&S);
  const kn_contact_point* p;
  int n = detect(&S, 0, &p);
  double mincyl = 1;
  int ncap = 0;
  for (int i = 0; i < n; ++i) {
    if (p[i].b == 1) mincyl = fmin(mincyl, p[i].phi);
    if (p[i].b == 2) {
      ++ncap;
      cr_expect(fabs(p[i].phi + 0.003) < 1e-12);
    }
  }
  cr_expect(fabs(mincyl + 0.01) < 1e-12, "deepest rim point %g", mincyl);
  cr_expect_eq(ncap, 2, "lying capsule: both ends");
  /* upright cylinder resting flat: 8 rim points + deepest-point duplicates removed */
  kn_pose_identity(&S.X[1]);
  S.X[1].p[2] = 0.5 - 0.002;
  n = detect(&S, 0, &p);
  int ncyl = 0;
  for (int i = 0; i < n; ++i)
    if (p[i].b == 1) {
      ++ncyl;
      cr_expect(fabs(p[i].phi + 0.002) < 1e-12);
    }
  cr_expect_eq(ncyl, 8);
  kn_collision_scene_free(S.cs);
}

Test(pairs, five_stacked_boxes) {
  scene S = {0};
  add(&S, KN_SHAPE_HALFSPACE, 0, 0, 0, -1);
  const double ov = 1e-3;
  for (int i = 0; i < 5; ++i) {
    int b = add(&S, KN_SHAPE_BOX, 0.4, 0.4, 0.4, i);
    S.X[b].p[2] = 0.2 - ov + i * (0.4 - ov);
  }
  build(&S);
  const kn_contact_point* p;
  int n = detect(&S, 1e-4, &p);
  int count[6] = {0};
  for (int i = 0; i < n; ++i) {
    cr_expect_eq(p[i].b, p[i].a + 1, "only neighbours touch");
    cr_expect(fabs(p[i].phi + ov) < 1e-12, "phi %g = -overlap", p[i].phi);
    cr_expect(fabs(p[i].n[2] - 1) < 1e-12, "lower into upper: +z");
    count[p[i].a]++;
  }
  for (int k = 0; k < 5; ++k) cr_expect(count[k] >= 4, "interface %d has %d points", k, count[k]);
  check_frames(p, n);
  /* a 30 degree yaw on the top box: the clipped face has 8 corners */
  double z[3] = {0, 0, 1};
  kn_mat3_from_axis_angle(z, PI / 6, S.X[5].R);
  n = detect(&S, 1e-4, &p);
  int top = 0;
  for (int i = 0; i < n; ++i)
    if (p[i].a == 4) {
      ++top;
      cr_expect(fabs(p[i].phi + ov) < 1e-12);
    }
  cr_expect_eq(top, 8, "yawed top box: %d points", top);
  kn_collision_scene_free(S.cs);
}

Test(pairs, box_edge_into_box_face) {
  scene S = {0};
  add(&S, KN_SHAPE_BOX, 1, 1, 1, 0);
  add(&S, KN_SHAPE_BOX, 1, 1, 1, 1);
  double z[3] = {0, 0, 1};
  kn_mat3_from_axis_angle(z, PI / 4, S.X[1].R);
  S.X[1].p[0] = 0.5 + sqrt(0.5) - 0.05;
  build(&S);
  const kn_contact_point* p;
  int n = detect(&S, 0, &p);
  cr_assert_eq(n, 2, "vertical edge: its two ends, got %d", n);
  for (int i = 0; i < n; ++i) {
    cr_expect(fabs(p[i].phi + 0.05) < 1e-12, "phi %g", p[i].phi);
    cr_expect(fabs(p[i].n[0] - 1) < 1e-12, "A into B: +x");
  }
  kn_collision_scene_free(S.cs);
}

/* libccd (GJK/EPA) pairs: cylinder on box, lying and standing; the depth against the closed form */
Test(pairs, libccd_cylinder_box) {
  scene S = {0};
  add(&S, KN_SHAPE_BOX, 2, 2, 1, 0);
  add(&S, KN_SHAPE_CYLINDER, 0.5, 1.0, 0, 1);
  double y[3] = {0, 1, 0};
  kn_mat3_from_axis_angle(y, PI / 2, S.X[1].R); /* lying along x */
  S.X[1].p[2] = 0.5 + 0.5 - 0.02;
  S.X[1].p[1] = 0.3;
  build(&S);
  const kn_contact_point* p;
  int n = detect(&S, 0, &p);
  cr_assert(n >= 1);
  double minphi = 1;
  for (int i = 0; i < n; ++i) {
    minphi = fmin(minphi, p[i].phi);
    cr_expect(p[i].n[2] > 0.999, "box (A, below) into cylinder (B): +z, got %g", p[i].n[2]);
  }
  cr_expect(fabs(minphi + 0.02) < 1e-4, "EPA depth %g vs 0.02", -minphi);
  /* swapped indices flip the normal */
  scene T = {0};
  add(&T, KN_SHAPE_CYLINDER, 0.5, 1.0, 0, 1);
  add(&T, KN_SHAPE_BOX, 2, 2, 1, 0);
  T.X[0] = S.X[1], T.X[1] = S.X[0];
  build(&T);
  int m = detect(&T, 0, &p);
  cr_expect_eq(m, n);
  for (int i = 0; i < m; ++i) cr_expect(p[i].n[2] < -0.999, "cylinder (A, above) into box (B): -z");
  /* standing: the 8 bottom rim points all at -0.03 */
  kn_pose_identity(&S.X[1]);
  S.X[1].p[2] = 0.5 + 0.5 - 0.03;
  n = detect(&S, 0, &p);
  int rim = 0;
  for (int i = 0; i < n; ++i) rim += fabs(p[i].phi + 0.03) < 1e-9;
  cr_expect(rim >= 8, "standing cylinder: %d points at the rim depth (of %d)", rim, n);
  kn_collision_scene_free(S.cs);
  kn_collision_scene_free(T.cs);
}

Test(pairs, sphere_box_normal_convention) {
  scene S = {0};
  add(&S, KN_SHAPE_BOX, 1, 1, 1, 0);
  add(&S, KN_SHAPE_SPHERE, 0.25, 0, 0, 1);
  S.X[1].p[0] = 0.2, S.X[1].p[2] = 0.5 + 0.25 - 0.04;
  build(&S);
  const kn_contact_point* p;
  cr_assert_eq(detect(&S, 0, &p), 1);
  cr_expect(fabs(p[0].phi + 0.04) < 1e-12);
  cr_expect(fabs(p[0].n[2] - 1) < 1e-12, "box (0) into sphere (1): +z");
  cr_expect(fabs(p[0].p[2] - (0.5 + 0.46) / 2) < 1e-12);
  kn_collision_scene_free(S.cs);
}

Test(pairs, determinism) {
  scene S = {0};
  add(&S, KN_SHAPE_HALFSPACE, 0, 0, 0, -1);
  for (int i = 0; i < 6; ++i) {
    kn_shape_type t = (kn_shape_type)(i % 4);
    int b = add(&S, t, 0.3, 0.4, 0.3, i);
    double rpy[3] = {0.1 * i, 0.2, -0.1 * i}, xyz[3] = {0.25 * i, 0.1 * (i % 2), 0.25};
    kn_pose_from_xyz_rpy(xyz, rpy, &S.X[b]);
  }
  build(&S);
  const kn_contact_point* p;
  int n1 = detect(&S, 0.01, &p);
  kn_contact_point first[256];
  cr_assert(n1 > 4 && n1 < 256, "%d points", n1);
  memcpy(first, p, (size_t)n1 * sizeof *p);
  int n2 = detect(&S, 0.01, &p);
  cr_assert_eq(n1, n2);
  cr_expect(memcmp(first, p, (size_t)n1 * sizeof *p) == 0, "bitwise identical");
  for (int i = 1; i < n1; ++i)
    cr_expect(first[i - 1].a < first[i].a || (first[i - 1].a == first[i].a && first[i - 1].b <= first[i].b),
              "sorted by pair");
  kn_collision_scene_free(S.cs);
}
