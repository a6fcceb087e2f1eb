/* Collision filter groups from URDFs, end to end: Drake's iiwa14_primitive_collision.urdf (read in
 * place) declares group 'iiwa_wrist' = {iiwa_link_5, 6, 7} ignoring itself, whose shapes overlap
 * at every pose (links 5 and 7: phi = -2.6e-3 m at q = 0, tests/corpus/test_sap_corpus.c); and a
 * small inline robot whose base box and grandchild box overlap by 0.09 m, loaded with and without
 * a group over the two links. Asserted: the parsed group, and the number of contacts of the first
 * SAP step (contacts are detected at q_0): 0 with the group, > 0 without (the pair is neither the
 * same body nor parent/child, so only the group filters it). Measured: inline robot 4 contacts
 * without the group, 0 with; with the URDF groups not applied (colliders.c check disabled) the
 * iiwa shows 4 self-contacts and the inline "with"/"between" cases 4 each, so both tests fail. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/sim.h"

#define IIWA "drake_models/iiwa_description/urdf/iiwa14_primitive_collision.urdf"

Test(filter_groups, iiwa14_primitive_has_the_wrist_group) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", KNEAD_SHARED_MODELS, IIWA);
  static const char* paths[] = {KNEAD_SHARED_MODELS};
  kn_urdf_options o = kn_urdf_options_default();
  o.package_paths = paths;
  o.npackage_paths = 1;
  kn_robot* r = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_urdf_load(path, &o, &r, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(r->nfilter_group, 1);
  const kn_robot_filter_group* g = &r->filter_groups[0];
  cr_expect_str_eq(g->name, "iiwa_wrist");
  cr_assert_eq(g->nmember, 3);
  const char* links[] = {"iiwa_link_5", "iiwa_link_6", "iiwa_link_7"};
  for (int i = 0; i < 3; i++) {
    int b = kn_mb_find_body(r->model, links[i]);
    cr_assert_geq(b, 0);
    cr_expect_eq(g->members[i], b, "member %d is %s (body %d), got body %d", i, links[i], b, g->members[i]);
  }
  cr_assert_eq(g->nignore, 1);
  cr_expect_str_eq(g->ignores[0], "iiwa_wrist");
  for (int i = 0; i < r->warnings.count; i++)
    cr_expect(strstr(r->warnings.items[i], "collision_filter_group") == NULL, "still warned: %s",
              r->warnings.items[i]);
  kn_robot_free(r);
}

// (scene YAML) => the number of contacts of the first step
static int first_step_contacts(const char* yaml) {
  kn_scene* s = NULL;
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), "inline.yaml", &s, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s", err.msg);
  int n = w->ncontact;
  cr_expect_eq(w->last.contacts, n);
  kn_world_free(w);
  kn_scene_free(s);
  return n;
}

Test(filter_groups, iiwa14_wrist_is_not_in_self_contact) {
  char yaml[2048];
  snprintf(yaml, sizeof yaml,
           "time_step: 0.01\nduration: 0.01\npackage_paths: [%s]\n"
           "robots:\n  - name: iiwa\n    urdf: %s/%s\n    base_pose: {xyz: [0, 0, 0.3]}\n"
           "    q0: [0, 0, 0, 0, 0, 0, 0]\n",
           KNEAD_SHARED_MODELS, KNEAD_SHARED_MODELS, IIWA);
  int n = first_step_contacts(yaml);
  cr_expect_eq(n, 0, "the URDF's wrist group removes the overlap of links 5-7: %d contacts", n);
}

#define LINK_BOX(n, z, size)                                                                                \
  "<link name='" n "'><inertial><mass value='1'/><inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' " \
  "iyz='0'/></inertial><collision><origin xyz='0 0 " z "'/><geometry><box size='" size "'/></geometry>"     \
  "</collision></link>"
#define REV(n, parent, child, z, axis)                                                                      \
  "<joint name='" n "' type='revolute'><parent link='" parent "'/><child link='" child "'/><origin xyz='0 0 " z \
  "'/><axis xyz='" axis "'/><limit lower='-1' upper='1' effort='10' velocity='1'/></joint>"

/* base (welded to the world): box 0.2 m, z in [0, 0.2]; a (no geometry) at z 0.2; b at z 0.25 with
 * a 0.1 m box centred 0.09 m below it: z in [0.11, 0.21], 0.09 m into the base box */
static const char* robot_fmt =
    "<robot name='overlap'>\n"
    "%s\n"
    LINK_BOX("base", "0.1", "0.2 0.2 0.2")
    "<link name='a'><inertial><mass value='1'/><inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' "
    "iyz='0'/></inertial></link>"
    LINK_BOX("b", "-0.09", "0.1 0.1 0.1")
    REV("j1", "base", "a", "0.2", "0 0 1") REV("j2", "a", "b", "0.05", "0 1 0")
    "</robot>\n";

// (filter group XML or "") => contacts of the first step of the robot alone in a scene
static int overlap_contacts(const char* group, const char* dir) {
  char xml[4096], path[512], yaml[1024];
  snprintf(xml, sizeof xml, robot_fmt, group);
  snprintf(path, sizeof path, "%s/overlap.urdf", dir);
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs(xml, f);
  fclose(f);
  snprintf(yaml, sizeof yaml,
           "time_step: 0.01\nduration: 0.01\nrobots:\n  - name: r\n    urdf: %s\n    q0: [0, 0]\n", path);
  int n = first_step_contacts(yaml);
  unlink(path);
  return n;
}

Test(filter_groups, a_group_removes_the_contacts_of_overlapping_links) {
  char dir[] = "/tmp/knead_filter_groups_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  int without = overlap_contacts("", dir);
  int with = overlap_contacts("<drake:collision_filter_group name='g'><drake:member link='base'/>"
                              "<drake:member link='b'/><drake:ignored_collision_filter_group name='g'/>"
                              "</drake:collision_filter_group>",
                              dir);
  /* two groups, each ignoring the other (Drake's ExcludeBetween) */
  int between = overlap_contacts("<drake:collision_filter_group name='lo'><drake:member link='base'/>"
                                 "<drake:ignored_collision_filter_group name='hi'/></drake:collision_filter_group>"
                                 "<drake:collision_filter_group name='hi'><drake:member link='b'/>"
                                 "</drake:collision_filter_group>",
                                 dir);
  /* a group that ignores itself but holds only one of the two: no effect */
  int one = overlap_contacts("<drake:collision_filter_group name='g'><drake:member link='b'/>"
                             "<drake:ignored_collision_filter_group name='g'/></drake:collision_filter_group>",
                             dir);
  rmdir(dir);
  cr_log_info("contacts: without %d, with %d, between %d, one member %d", without, with, between, one);
  cr_expect_gt(without, 0, "the boxes overlap by 0.09 m: contacts expected");
  cr_expect_eq(with, 0);
  cr_expect_eq(between, 0, "one-way ignore filters the pair both ways");
  cr_expect_eq(one, without);
}
