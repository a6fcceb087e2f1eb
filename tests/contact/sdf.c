/* Signed distances of the primitives against closed forms (inside and outside) and their
 * gradients against central finite differences. */
#include <criterion/criterion.h>
#include <math.h>

#include "contact/contact.h"

static kn_collision_scene* one(kn_shape* s) {
  kn_collider c = {.clique = 0, .body = 0, .shape = s, .material = kn_contact_material_default(0.01),
                   .group = 0xffffffffu, .mask = 0xffffffffu};
  kn_pose_identity(&c.X_bg);
  kn_collision_scene* cs = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_collision_scene_create(&c, 1, &cs, &err), KN_OK, "%s", err.msg);
  return cs;
}

/* a rotated, translated pose so the world<->shape transforms are exercised */
static kn_pose pose(void) {
  kn_pose X;
  double xyz[3] = {0.3, -0.2, 0.5}, rpy[3] = {0.4, -0.3, 1.1};
  kn_pose_from_xyz_rpy(xyz, rpy, &X);
  return X;
}

static double sd_local(kn_collision_scene* cs, const kn_pose* X, const double xl[3], double g[3]) {
  double xw[3];
  kn_pose_apply(X, xl, xw);
  return kn_collider_signed_distance(cs, 0, X, xw, g);
}

/* gradient vs central differences (h = 1e-6, tol 1e-6) at a world point away from kinks */
static void check_grad(kn_collision_scene* cs, const kn_pose* X, const double xl[3]) {
  double xw[3], g[3], gd[3];
  kn_pose_apply(X, xl, xw);
  kn_collider_signed_distance(cs, 0, X, xw, g);
  for (int k = 0; k < 3; ++k) {
    double a[3] = {xw[0], xw[1], xw[2]}, b[3] = {xw[0], xw[1], xw[2]};
    a[k] += 1e-6, b[k] -= 1e-6;
    gd[k] = (kn_collider_signed_distance(cs, 0, X, a, NULL) - kn_collider_signed_distance(cs, 0, X, b, NULL)) / 2e-6;
    cr_expect(fabs(gd[k] - g[k]) < 1e-6, "grad[%d] %g vs fd %g at local (%g %g %g)", k, g[k], gd[k], xl[0], xl[1],
              xl[2]);
  }
  cr_expect(fabs(kn_vec3_norm(g) - 1) < 1e-12, "unit gradient");
}

Test(sdf, sphere) {
  kn_shape s = {.type = KN_SHAPE_SPHERE, .size = {0.5}};
  kn_collision_scene* cs = one(&s);
  kn_pose X = pose();
  double g[3];
  double out[3] = {0.3, 0.4, 1.2}, in[3] = {0.1, -0.2, 0.05};
  cr_expect(fabs(sd_local(cs, &X, out, g) - (13.0 / 10.0 - 0.5)) < 1e-12); /* |(.3,.4,1.2)| = 1.3 */
  cr_expect(fabs(sd_local(cs, &X, in, g) - (sqrt(0.0525) - 0.5)) < 1e-12);
  check_grad(cs, &X, out), check_grad(cs, &X, in);
  kn_collision_scene_free(cs);
}

Test(sdf, box) {
  kn_shape s = {.type = KN_SHAPE_BOX, .size = {1.0, 2.0, 0.4}}; /* half (0.5, 1, 0.2) */
  kn_collision_scene* cs = one(&s);
  kn_pose X = pose();
  double g[3];
  double face[3] = {0.1, 0.2, 0.5}, corner[3] = {0.8, -1.4, 0.2 + 0.12}, in[3] = {0.45, 0.1, 0.0},
         inz[3] = {0.1, 0.3, -0.15};
  cr_expect(fabs(sd_local(cs, &X, face, g) - 0.3) < 1e-12);
  cr_expect(fabs(sd_local(cs, &X, corner, g) - sqrt(0.09 + 0.16 + 0.0144)) < 1e-12);
  cr_expect(fabs(sd_local(cs, &X, in, g) - (-0.05)) < 1e-12); /* nearest face x = 0.5 */
  cr_expect(fabs(sd_local(cs, &X, inz, g) - (-0.05)) < 1e-12); /* nearest face z = -0.2 */
  double gl[3];
  kn_mat3_tvec(X.R, g, gl);
  cr_expect(fabs(gl[2] + 1) < 1e-12, "inside gradient points to the nearest face (-z)");
  check_grad(cs, &X, face), check_grad(cs, &X, corner), check_grad(cs, &X, in), check_grad(cs, &X, inz);
  kn_collision_scene_free(cs);
}

Test(sdf, cylinder) {
  kn_shape s = {.type = KN_SHAPE_CYLINDER, .size = {0.5, 2.0}};
  kn_collision_scene* cs = one(&s);
  kn_pose X = pose();
  double g[3];
  double side[3] = {0.6, 0.8, 0.3}, cap[3] = {0.1, 0.1, 1.25}, rim[3] = {0.9, 0, 1.3}, in_side[3] = {0.3, 0.0, 0.2},
         in_cap[3] = {0.0, 0.1, -0.9};
  cr_expect(fabs(sd_local(cs, &X, side, g) - 0.5) < 1e-12);
  cr_expect(fabs(sd_local(cs, &X, cap, g) - 0.25) < 1e-12);
  cr_expect(fabs(sd_local(cs, &X, rim, g) - 0.5) < 1e-12); /* (0.4, 0.3) from the rim */
  cr_expect(fabs(sd_local(cs, &X, in_side, g) - (-0.2)) < 1e-12);
  cr_expect(fabs(sd_local(cs, &X, in_cap, g) - (-0.1)) < 1e-12);
  check_grad(cs, &X, side), check_grad(cs, &X, cap), check_grad(cs, &X, rim), check_grad(cs, &X, in_side),
      check_grad(cs, &X, in_cap);
  kn_collision_scene_free(cs);
}

Test(sdf, capsule) {
  kn_shape s = {.type = KN_SHAPE_CAPSULE, .size = {0.3, 1.0}};
  kn_collision_scene* cs = one(&s);
  kn_pose X = pose();
  double g[3];
  double side[3] = {0.0, 0.7, 0.2}, end[3] = {0.3, 0.0, 0.9}, in[3] = {0.1, 0.0, -0.3}, in_end[3] = {0, 0, -0.7};
  cr_expect(fabs(sd_local(cs, &X, side, g) - 0.4) < 1e-12);
  cr_expect(fabs(sd_local(cs, &X, end, g) - 0.2) < 1e-12); /* |(0.3, 0.4)| - 0.3 */
  cr_expect(fabs(sd_local(cs, &X, in, g) - (-0.2)) < 1e-12);
  cr_expect(fabs(sd_local(cs, &X, in_end, g) - (-0.1)) < 1e-12);
  check_grad(cs, &X, side), check_grad(cs, &X, end), check_grad(cs, &X, in), check_grad(cs, &X, in_end);
  kn_collision_scene_free(cs);
}

Test(sdf, halfspace) {
  kn_shape s = {.type = KN_SHAPE_HALFSPACE};
  kn_collision_scene* cs = one(&s);
  kn_pose X = pose();
  double g[3];
  double up[3] = {3, -7, 0.25}, down[3] = {-1, 2, -0.5};
  cr_expect(fabs(sd_local(cs, &X, up, g) - 0.25) < 1e-12);
  cr_expect(fabs(sd_local(cs, &X, down, g) - (-0.5)) < 1e-12);
  cr_expect(fabs(g[0] - X.R[2]) < 1e-12 && fabs(g[1] - X.R[5]) < 1e-12 && fabs(g[2] - X.R[8]) < 1e-12);
  check_grad(cs, &X, up), check_grad(cs, &X, down);
  kn_collision_scene_free(cs);
}

Test(material, combine) {
  kn_contact_material a = {.mu = 0.5, .stiffness = 1e6, .dissipation_time = 0.1};
  kn_contact_material b = {.mu = 1.0, .stiffness = 3e6, .dissipation_time = 0.05};
  kn_contact_material c = kn_contact_material_combine(&a, &b);
  cr_expect(fabs(c.mu - 2 * 0.5 * 1.0 / 1.5) < 1e-15);
  cr_expect(fabs(c.stiffness - 0.75e6) < 1e-6);
  cr_expect(fabs(c.dissipation_time - 0.15) < 1e-15);
  b.stiffness = INFINITY;
  cr_expect_eq(kn_contact_material_combine(&a, &b).stiffness, 1e6);
  kn_contact_material d = kn_contact_material_default(0.01);
  cr_expect(d.mu == 0.5 && d.stiffness == 1e6 && d.dissipation_time == 0.005);
}
