/* urdf/: a 20,000-link serial chain loads, with every body, joint and coupler where it belongs.
 * Name look-ups (links, joints, mimic masters, the model's kn_mb_find_*) go through kn_name_map;
 * with strcmp scans this chain took 3-12 s to load. This asserts correctness, not time. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urdf/urdf.h"

#define NLINK 20000

// (n) => URDF text of links l0..l{n-1}, revolute joints j1..j{n-1}; j{n-1} mimics j{n-2}
static char* chain_urdf(int n) {
  size_t cap = (size_t)n * 400 + 1024, k = 0;
  char* s = malloc(cap);
  cr_assert_not_null(s);
  k += (size_t)snprintf(s + k, cap - k, "<robot name=\"chain\">\n");
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(s + k, cap - k,
                          "<link name=\"l%d\"><inertial><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" "
                          "iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/></inertial></link>\n",
                          i);
  for (int i = 1; i < n; i++)
    k += (size_t)snprintf(s + k, cap - k,
                          "<joint name=\"j%d\" type=\"revolute\"><parent link=\"l%d\"/><child link=\"l%d\"/>"
                          "<origin xyz=\"0 0 0.1\"/><axis xyz=\"0 1 0\"/><limit lower=\"-1\" upper=\"1\" "
                          "effort=\"10\" velocity=\"1\"/>%s</joint>\n",
                          i, i - 1, i, i == n - 1 ? "<mimic joint=\"j19998\" multiplier=\"2\"/>" : "");
  snprintf(s + k, cap - k, "</robot>\n");
  return s;
}

Test(long_chain, twenty_thousand_links_load_in_order) {
  char* text = chain_urdf(NLINK);
  kn_robot* r = NULL;
  kn_error err = {0};
  kn_status st = kn_urdf_load_string(text, "chain.urdf", NULL, NULL, &r, &err);
  free(text);
  cr_assert_eq(st, KN_OK, "%s", err.msg);
  const kn_mb_model* m = r->model;
  cr_expect_eq(m->nbody, NLINK);
  cr_expect_eq(m->nq, NLINK - 1);
  cr_expect_eq(m->nv, NLINK - 1);
  cr_expect_eq(kn_robot_dofs(r), NLINK - 2, "one mimic joint");
  for (int i = 0; i < NLINK; i++) {
    char name[32];
    snprintf(name, sizeof name, "l%d", i);
    cr_assert_str_eq(m->bodies[i].name, name);
    cr_assert_eq(m->bodies[i].parent, i - 1);
    cr_assert_eq(kn_mb_find_body(m, name), i);
    if (i == 0) continue;
    snprintf(name, sizeof name, "j%d", i);
    cr_assert_eq(kn_mb_find_joint(m, name), i);
    cr_assert_eq(m->bodies[i].q_adr, i - 1);
    cr_assert_eq(m->bodies[i].jtype, KN_JOINT_REVOLUTE);
    cr_assert_float_eq(m->bodies[i].X_pj.p[2], 0.1, 1e-15);
  }
  cr_expect_eq(kn_mb_find_body(m, "l20000"), -1);
  cr_expect_eq(kn_mb_find_joint(m, "j0"), -1);
  cr_expect_eq(kn_mb_find_joint(m, NULL), -1);
  cr_assert_eq(m->ncoupler, 1);
  cr_expect_eq(m->couplers[0].body, NLINK - 1);
  cr_expect_eq(m->couplers[0].master, NLINK - 2);
  cr_expect_float_eq(m->couplers[0].multiplier, 2.0, 0);
  kn_robot_free(r);
}

Test(long_chain, duplicate_names_are_still_refused) {
  kn_mb_model* m = kn_mb_model_create("dup");
  kn_mb_body b = {0};
  b.name = "a";
  b.parent = -1;
  b.jtype = KN_JOINT_FIXED;
  b.axis[2] = 1;
  kn_pose_identity(&b.X_pj);
  kn_error err = {0};
  cr_assert_eq(kn_mb_add_body(m, &b, &err), 0, "%s", err.msg);
  b.parent = 0;
  b.jtype = KN_JOINT_REVOLUTE;
  b.joint_name = "j";
  cr_expect_eq(kn_mb_add_body(m, &b, &err), -1);
  cr_expect_str_eq(err.msg, "model 'dup', body 'a' (#1): a body with this name already exists (#0)");
  b.name = "b";
  cr_assert_eq(kn_mb_add_body(m, &b, &err), 1, "%s", err.msg);
  b.name = "c";
  cr_expect_eq(kn_mb_add_body(m, &b, &err), -1);
  cr_expect_str_eq(err.msg, "model 'dup', body 'c' (#2): joint 'j' already exists (inboard joint of body #1)");
  cr_expect_eq(kn_mb_find_body(m, "b"), 1);
  cr_expect_eq(kn_mb_find_body(m, "c"), -1);
  kn_mb_model_free(m);
}
