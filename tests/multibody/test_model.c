/* Model building: validation messages, coordinate addresses, attach, look-ups. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "mb_test_models.h"

Test(model, bad_bodies_are_rejected_with_their_name) {
  kn_mb_model* m = kn_mb_model_create("bad");
  kn_error err = {0};
  kn_mb_body b = tm_body("zero_axis_link", -1, "j0", KN_JOINT_REVOLUTE, 1.0);
  b.axis[2] = 0;
  cr_assert_eq(kn_mb_add_body(m, &b, &err), -1);
  cr_assert(strstr(err.msg, "zero_axis_link") && strstr(err.msg, "axis"), "%s", err.msg);
  cr_assert_eq(err.status, KN_ERR_INVALID);

  b = tm_body("heavy_negative", -1, "j0", KN_JOINT_REVOLUTE, -2.0);
  cr_assert_eq(kn_mb_add_body(m, &b, &err), -1);
  cr_assert(strstr(err.msg, "heavy_negative") && strstr(err.msg, "mass"), "%s", err.msg);

  b = tm_body("orphan", 3, "j0", KN_JOINT_REVOLUTE, 1.0);
  cr_assert_eq(kn_mb_add_body(m, &b, &err), -1);
  cr_assert(strstr(err.msg, "orphan") && strstr(err.msg, "parent"), "%s", err.msg);

  b = tm_body("lopsided", -1, "j0", KN_JOINT_REVOLUTE, 1.0);
  tm_set_inertia(&b, 0, 0, 0, 1.0, 0.1, 0.1, 0, 0, 0); /* 0.1 + 0.1 < 1.0: no such body */
  cr_assert_eq(kn_mb_add_body(m, &b, &err), -1);
  cr_assert(strstr(err.msg, "lopsided") && strstr(err.msg, "inertia"), "%s", err.msg);

  b = tm_body("skew", -1, "j0", KN_JOINT_REVOLUTE, 1.0);
  tm_set_inertia(&b, 0, 0, 0, 1.0, 1.0, 1.0, 0, 0, 0);
  b.I_com[1] = 0.1; /* I_xy != I_yx */
  cr_assert_eq(kn_mb_add_body(m, &b, &err), -1);
  cr_assert(strstr(err.msg, "skew") && strstr(err.msg, "symmetric"), "%s", err.msg);

  cr_assert_eq(m->nbody, 0, "nothing was added");
  b = tm_body("ok", -1, "j0", KN_JOINT_REVOLUTE, 1.0);
  cr_assert_eq(kn_mb_add_body(m, &b, &err), 0);
  b = tm_body("second_root", -1, "j1", KN_JOINT_REVOLUTE, 1.0);
  cr_assert_eq(kn_mb_add_body(m, &b, &err), -1, "only body 0 hangs from the world");
  b = tm_body("ok", 0, "j1", KN_JOINT_REVOLUTE, 1.0);
  cr_assert_eq(kn_mb_add_body(m, &b, &err), -1, "duplicate body name");
  cr_assert_eq(m->nbody, 1);
  kn_mb_model_free(m);
}

Test(model, addresses_axes_and_lookups) {
  kn_mb_model* m = tm_tree();
  /* base FLOATING q 0..6 v 0..5; arm q 7 v 6; slider q 8 v 7; tip fixed; cart PLANAR q 9..11 v 8..10; wheel q 12 v 11 */
  int qa[6] = {0, 7, 8, 9, 9, 12}, va[6] = {0, 6, 7, 8, 8, 11}, nqs[6] = {7, 1, 1, 0, 3, 1};
  for (int i = 0; i < 6; i++) {
    cr_assert_eq(m->bodies[i].q_adr, qa[i], "body %d", i);
    cr_assert_eq(m->bodies[i].v_adr, va[i], "body %d", i);
    cr_assert_eq(m->bodies[i].nq, nqs[i], "body %d", i);
  }
  cr_assert_eq(m->nq, 13);
  cr_assert_eq(m->nv, 12);
  cr_assert_float_eq(kn_vec3_norm(m->bodies[1].axis), 1, 1e-15);
  const kn_mb_body* c = &m->bodies[4];
  double e3[3];
  kn_vec3_cross(c->planar_basis, c->planar_basis + 3, e3);
  for (int k = 0; k < 3; k++) cr_assert_float_eq(e3[k], c->axis[k], 1e-15, "e1 x e2 = axis");
  cr_assert_float_eq(kn_vec3_norm(c->planar_basis), 1, 1e-15);
  cr_assert_float_eq(kn_vec3_dot(c->planar_basis, c->axis), 0, 1e-15);
  cr_assert_eq(kn_mb_find_body(m, "cart"), 4);
  cr_assert_eq(kn_mb_find_body(m, "nope"), -1);
  cr_assert_eq(kn_mb_find_joint(m, "slide"), 2);
  cr_assert_eq(kn_mb_find_joint(m, "nope"), -1);
  cr_assert_float_eq(kn_mb_total_mass(m), 3.0 + 1.2 + 0.7 + 0.3 + 2.0 + 0.5, 1e-14);
  double q[13];
  kn_mb_neutral_q(m, q);
  for (int k = 0; k < 13; k++) cr_assert_eq(q[k], k == 3 ? 1.0 : 0.0);
  cr_assert_str_eq(kn_joint_type_name(KN_JOINT_PLANAR), "planar");
  cr_assert_eq(kn_joint_nq(KN_JOINT_FLOATING), 7);
  cr_assert_eq(kn_joint_nv(KN_JOINT_FLOATING), 6);
  kn_mb_model_free(m);
}

Test(model, couplers_need_one_dof_joints) {
  kn_mb_model* m = tm_tree();
  kn_error err = {0};
  kn_mb_coupler c = {.body = 4, .master = 1, .multiplier = 1};
  cr_assert_eq(kn_mb_add_coupler(m, &c, &err), -1);
  cr_assert(strstr(err.msg, "plane") && strstr(err.msg, "1-DoF"), "%s", err.msg);
  c.body = 2;
  cr_assert_eq(kn_mb_add_coupler(m, &c, &err), 0);
  c.body = 9;
  cr_assert_eq(kn_mb_add_coupler(m, &c, &err), -1);
  kn_mb_model_free(m);
}

/* a 3-body chain (fixed base, two revolutes) and a 2-body gripper (fixed palm, prismatic finger) */
static kn_mb_model* arm3(void) {
  kn_mb_model* m = kn_mb_model_create("arm");
  kn_mb_body b = tm_body("base", -1, NULL, KN_JOINT_FIXED, 2.0);
  tm_set_inertia(&b, 0, 0, 0.05, 0.01, 0.01, 0.01, 0, 0, 0);
  tm_add(m, &b);
  b = tm_body("upper", 0, "j1", KN_JOINT_REVOLUTE, 1.5);
  tm_set_origin(&b, 0, 0, 0.1, 0, 0, 0);
  b.axis[0] = 0, b.axis[1] = 1, b.axis[2] = 0;
  tm_set_inertia(&b, 0.02, 0, 0.2, 0.02, 0.02, 0.003, 0, 0, 0);
  tm_add(m, &b);
  b = tm_body("fore", 1, "j2", KN_JOINT_REVOLUTE, 1.0);
  tm_set_origin(&b, 0, 0, 0.4, 0.2, 0, 0);
  b.axis[0] = 1, b.axis[1] = 0, b.axis[2] = 0;
  tm_set_inertia(&b, 0, 0.01, 0.15, 0.01, 0.012, 0.002, 0, 0, 0);
  tm_add(m, &b);
  return m;
}

static void add_gripper(kn_mb_model* m, int parent, const kn_pose* X, const char* prefix) {
  char n1[64], n2[64], j2[64];
  snprintf(n1, sizeof n1, "%spalm", prefix ? prefix : "");
  snprintf(n2, sizeof n2, "%sfinger", prefix ? prefix : "");
  snprintf(j2, sizeof j2, "%sslide", prefix ? prefix : "");
  kn_mb_body b = tm_body(n1, parent, NULL, KN_JOINT_FIXED, 0.4);
  b.X_pj = *X;
  tm_set_inertia(&b, 0.01, 0, 0.02, 0.001, 0.001, 0.0012, 0, 0, 0);
  int palm = tm_add(m, &b);
  b = tm_body(n2, palm, j2, KN_JOINT_PRISMATIC, 0.1);
  tm_set_origin(&b, 0.02, 0, 0.05, 0, 0, 0.3);
  b.axis[0] = 1, b.axis[1] = 0, b.axis[2] = 0;
  tm_set_inertia(&b, 0, 0, 0.01, 0.0001, 0.0001, 0.00005, 0, 0, 0);
  tm_add(m, &b);
}

/* Attaching the gripper to link 'fore' equals building the merged chain directly: same sizes,
 * addresses and names, and the same mass matrix (to round-off) at a random state. */
Test(model, attach_equals_direct_build) {
  kn_mb_model* arm = arm3();
  kn_mb_model* grip = kn_mb_model_create("gripper");
  kn_pose I, X;
  kn_pose_identity(&I);
  double xyz[3] = {0.0, 0.0, 0.3}, rpy[3] = {0.1, -0.2, 0.3};
  kn_pose_from_xyz_rpy(xyz, rpy, &X);
  add_gripper(grip, -1, &I, NULL);
  kn_error err = {0};
  cr_assert_eq(kn_mb_model_attach(arm, grip, 2, &X, "g_", &err), KN_OK, "%s", err.msg);
  kn_mb_model* direct = arm3();
  add_gripper(direct, 2, &X, "g_");
  cr_assert_eq(arm->nbody, 5);
  cr_assert_eq(arm->nq, 3);
  cr_assert_eq(arm->nv, 3);
  for (int i = 0; i < 5; i++) {
    cr_assert_str_eq(arm->bodies[i].name, direct->bodies[i].name);
    cr_assert_eq(arm->bodies[i].parent, direct->bodies[i].parent);
    cr_assert_eq(arm->bodies[i].q_adr, direct->bodies[i].q_adr);
    cr_assert_eq(arm->bodies[i].v_adr, direct->bodies[i].v_adr);
  }
  cr_assert_eq(arm->bodies[4].q_adr, 2);
  cr_assert_eq(arm->bodies[3].parent, 2);
  cr_assert_eq(kn_mb_find_joint(arm, "g_slide"), 4);
  kn_mb_data* d1 = kn_mb_data_create(arm);
  kn_mb_data* d2 = kn_mb_data_create(direct);
  double q[3] = {0.3, -0.7, 0.02}, v[3] = {0.5, 1.0, -0.3}, M1[9], M2[9];
  kn_mb_kinematics(arm, q, v, d1);
  kn_mb_kinematics(direct, q, v, d2);
  kn_mb_mass_matrix(arm, d1, M1);
  kn_mb_mass_matrix(direct, d2, M2);
  for (int k = 0; k < 9; k++) cr_assert_float_eq(M1[k], M2[k], 1e-15);
  /* attaching again with the same prefix clashes on names and leaves the model unchanged */
  cr_assert_eq(kn_mb_model_attach(arm, grip, 2, &X, "g_", &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "g_palm"), "%s", err.msg);
  cr_assert_eq(arm->nbody, 5);
  cr_assert_eq(arm->nv, 3);
  /* couplers move with their bodies */
  kn_mb_body b = tm_body("finger2", 1, "slide2", KN_JOINT_PRISMATIC, 0.1);
  b.axis[0] = -1, b.axis[1] = 0, b.axis[2] = 0;
  tm_add(grip, &b);
  kn_mb_coupler c = {.body = 2, .master = 1, .multiplier = 1, .offset = 0};
  cr_assert_eq(kn_mb_add_coupler(grip, &c, &err), 0);
  cr_assert_eq(kn_mb_model_attach(arm, grip, 1, &X, "h_", &err), KN_OK, "%s", err.msg);
  cr_assert_eq(arm->nbody, 8);
  cr_assert_eq(arm->ncoupler, 1);
  cr_assert_eq(arm->couplers[0].body, 7);
  cr_assert_eq(arm->couplers[0].master, 6);
  cr_assert_eq(arm->bodies[7].v_adr, 4);
  kn_mb_data_free(d1);
  kn_mb_data_free(d2);
  kn_mb_model_free(arm);
  kn_mb_model_free(direct);
  kn_mb_model_free(grip);
}

/* A failed attach drops the bodies it had appended; their names leave the name maps with them
 * (a map key pointing at a freed name was a use-after-free under AddressSanitizer). */
Test(model, failed_attach_forgets_the_names_it_added) {
  kn_mb_model* arm = arm3();
  kn_mb_model* child = kn_mb_model_create("child");
  kn_mb_body root = tm_body("fresh", -1, NULL, KN_JOINT_FIXED, 1.0);
  tm_add(child, &root);
  kn_mb_body clash = tm_body(arm->bodies[1].name, 0, "fresh_joint", KN_JOINT_REVOLUTE, 1.0);
  tm_add(child, &clash);
  kn_pose X;
  kn_pose_identity(&X);
  kn_error err = {0};
  int nbody = arm->nbody;
  cr_assert_eq(kn_mb_model_attach(arm, child, 2, &X, NULL, &err), KN_ERR_INVALID);
  cr_assert_eq(arm->nbody, nbody);
  cr_expect_eq(kn_mb_find_body(arm, "fresh"), -1);
  cr_expect_eq(kn_mb_find_joint(arm, "fresh_joint"), -1);
  cr_expect_eq(kn_mb_find_body(arm, arm->bodies[1].name), 1);
  /* the names are free again */
  kn_mb_body again = tm_body("fresh", 2, "fresh_joint", KN_JOINT_REVOLUTE, 1.0);
  cr_expect_eq(tm_add(arm, &again), nbody);
  cr_expect_eq(kn_mb_find_body(arm, "fresh"), nbody);
  cr_expect_eq(kn_mb_find_joint(arm, "fresh_joint"), nbody);
  kn_mb_model_free(child);
  kn_mb_model_free(arm);
}
