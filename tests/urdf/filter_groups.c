/* urdf/: Drake's collision filter groups (<drake:collision_filter_group>, urdf.h): members as body
 * indices, ignored group names, the unprefixed spelling, errors naming file, line and group, no
 * "ignored" warning for them any more, and how kn_robot_attach carries them (body offset, prefix). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "urdf/urdf.h"

#define MODELS KNEAD_SOURCE_DIR "/examples/models/"

#define LINK(n) \
  "<link name='" n "'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/>" \
  "</inertial></link>"
#define REV(n, parent, child) \
  "<joint name='" n "' type='revolute'><parent link='" parent "'/><child link='" child "'/>" \
  "<axis xyz='0 0 1'/><limit lower='-1' upper='1' effort='1' velocity='1'/></joint>"

/* a chain base - a - b - c; %s is the filter group content (one line of XML each, so the line
 * numbers of the groups are 2 and 3) */
static const char* chain_fmt =
    "<robot name='chain' xmlns:drake='http://drake.mit.edu'>\n"
    "%s\n"
    "%s\n" LINK("base") LINK("a") LINK("b") LINK("c") REV("j1", "base", "a") REV("j2", "a", "b")
        REV("j3", "b", "c") "</robot>\n";

static kn_status load(const char* g1, const char* g2, kn_robot** r, kn_error* err) {
  char xml[4096];
  snprintf(xml, sizeof xml, chain_fmt, g1, g2);
  *r = NULL;
  return kn_urdf_load_string(xml, "chain.urdf", NULL, NULL, r, err);
}

static int has_warning(const kn_robot* r, const char* piece) {
  for (int i = 0; i < r->warnings.count; i++)
    if (strstr(r->warnings.items[i], piece)) return 1;
  return 0;
}

Test(urdf_filter_groups, members_and_ignores_are_parsed) {
  kn_robot* r;
  kn_error err = {0};
  kn_status st = load("<drake:collision_filter_group name='tip'><drake:member link='c'/><drake:member link='a'/>"
                      "<drake:ignored_collision_filter_group name='tip'/>"
                      "<drake:ignored_collision_filter_group name='root'/></drake:collision_filter_group>",
                      "<drake:collision_filter_group name='root'><drake:member link='base'/>"
                      "</drake:collision_filter_group>",
                      &r, &err);
  cr_assert_eq(st, KN_OK, "%s", err.msg);
  cr_assert_eq(r->nfilter_group, 2);
  const kn_robot_filter_group* tip = &r->filter_groups[0];
  cr_expect_str_eq(tip->name, "tip");
  cr_assert_eq(tip->nmember, 2);
  /* bodies are in tree order base 0, a 1, b 2, c 3; members keep document order */
  cr_expect_eq(tip->members[0], kn_mb_find_body(r->model, "c"));
  cr_expect_eq(tip->members[0], 3);
  cr_expect_eq(tip->members[1], 1);
  cr_assert_eq(tip->nignore, 2);
  cr_expect_str_eq(tip->ignores[0], "tip");
  cr_expect_str_eq(tip->ignores[1], "root");
  const kn_robot_filter_group* root = &r->filter_groups[1];
  cr_expect_str_eq(root->name, "root");
  cr_assert_eq(root->nmember, 1);
  cr_expect_eq(root->members[0], 0);
  cr_expect_eq(root->nignore, 0);
  /* read, so no longer reported as content knead ignores */
  cr_expect(!has_warning(r, "collision_filter_group"), "%s", r->warnings.count ? r->warnings.items[0] : "");
  cr_expect(!has_warning(r, "drake:member"));
  kn_robot_free(r);
}

Test(urdf_filter_groups, unprefixed_and_text_spellings) {
  kn_robot* r;
  kn_error err = {0};
  /* the unprefixed tags, the old collision_filter_group= attribute, and <drake:member>link</...> */
  kn_status st = load("<collision_filter_group name='g'><member link='b'/><drake:member>c</drake:member>"
                      "<ignored_collision_filter_group collision_filter_group='g'/></collision_filter_group>",
                      "", &r, &err);
  cr_assert_eq(st, KN_OK, "%s", err.msg);
  cr_assert_eq(r->nfilter_group, 1);
  cr_assert_eq(r->filter_groups[0].nmember, 2);
  cr_expect_eq(r->filter_groups[0].members[0], 2);
  cr_expect_eq(r->filter_groups[0].members[1], 3);
  cr_assert_eq(r->filter_groups[0].nignore, 1);
  cr_expect_str_eq(r->filter_groups[0].ignores[0], "g");
  cr_expect(!has_warning(r, "collision_filter_group"));
  kn_robot_free(r);
}

Test(urdf_filter_groups, member_group_is_reported_as_unused) {
  kn_robot* r;
  kn_error err = {0};
  kn_status st = load("<drake:collision_filter_group name='g'><drake:member link='b'/>"
                      "<drake:member_group name='h'/></drake:collision_filter_group>",
                      "", &r, &err);
  cr_assert_eq(st, KN_OK, "%s", err.msg);
  cr_expect(has_warning(r, "<drake:collision_filter_group><drake:member_group>"));
  cr_expect(has_warning(r, "collision filter group 'g'"));
  kn_robot_free(r);
}

// (group XML, pieces the message must hold) => the load fails with KN_ERR_INVALID and them
static void expect_error(const char* g1, const char* g2, const char* a, const char* b, const char* c) {
  kn_robot* r;
  kn_error err = {0};
  kn_status st = load(g1, g2, &r, &err);
  cr_assert_eq(st, KN_ERR_INVALID, "status %d: %s", st, err.msg);
  cr_expect_null(r, "*out untouched");
  cr_expect(strstr(err.msg, "chain.urdf") != NULL, "%s", err.msg);
  cr_expect(strstr(err.msg, a) != NULL, "'%s' in: %s", a, err.msg);
  cr_expect(strstr(err.msg, b) != NULL, "'%s' in: %s", b, err.msg);
  if (c) cr_expect(strstr(err.msg, c) != NULL, "'%s' in: %s", c, err.msg);
}

Test(urdf_filter_groups, bad_declarations_are_errors_naming_file_line_and_group) {
  expect_error("<drake:collision_filter_group name='wrist'><drake:member link='a'/>"
               "<drake:member link='no_such_link'/></drake:collision_filter_group>",
               "", "'wrist'", "'no_such_link'", "chain.urdf:2:");
  expect_error("", "<drake:collision_filter_group name='wrist'><drake:member link='a'/>"
               "<drake:ignored_collision_filter_group name='elbow'/></drake:collision_filter_group>",
               "'wrist'", "'elbow'", "chain.urdf:3:");
  expect_error("<drake:collision_filter_group name='w'><drake:member/></drake:collision_filter_group>", "", "'w'",
               "no link attribute", NULL);
  expect_error("<drake:collision_filter_group><drake:member link='a'/></drake:collision_filter_group>", "",
               "no name", "#1", NULL);
  expect_error("<drake:collision_filter_group name='w'/>", "<drake:collision_filter_group name='w'/>", "'w'",
               "declared twice", "line 2");
}

/* the chain with one group {b, c} ignoring itself */
static kn_robot* chain_with_group(void) {
  kn_robot* r;
  kn_error err = {0};
  cr_assert_eq(load("<drake:collision_filter_group name='g'><drake:member link='b'/><drake:member link='c'/>"
                    "<drake:ignored_collision_filter_group name='g'/></drake:collision_filter_group>",
                    "", &r, &err),
               KN_OK, "%s", err.msg);
  return r;
}

Test(urdf_filter_groups, attach_offsets_members_and_prefixes_with_the_bodies) {
  kn_robot* arm = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_urdf_load(MODELS "knead_arm7.urdf", NULL, &arm, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(arm->nfilter_group, 0);
  kn_robot* chain = chain_with_group();
  int n0 = arm->model->nbody; /* 8 */
  /* first copy: no body name clashes, so neither bodies nor groups are prefixed */
  cr_assert_eq(kn_robot_attach(arm, chain, "arm_link_7", NULL, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(arm->nfilter_group, 1);
  cr_expect_str_eq(arm->filter_groups[0].name, "g");
  cr_assert_eq(arm->filter_groups[0].nmember, 2);
  cr_expect_eq(arm->filter_groups[0].members[0], n0 + 2);
  cr_expect_eq(arm->filter_groups[0].members[0], kn_mb_find_body(arm->model, "b"));
  cr_expect_eq(arm->filter_groups[0].members[1], kn_mb_find_body(arm->model, "c"));
  cr_expect_str_eq(arm->filter_groups[0].ignores[0], "g");
  /* second copy: its bodies clash, so they and its group get "chain/" */
  cr_assert_eq(kn_robot_attach(arm, chain, "arm_link_3", NULL, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(arm->nfilter_group, 2);
  const kn_robot_filter_group* g2 = &arm->filter_groups[1];
  cr_expect_str_eq(g2->name, "chain/g");
  cr_assert_eq(g2->nignore, 1);
  cr_expect_str_eq(g2->ignores[0], "chain/g", "the ignored name follows the group's");
  cr_assert_eq(g2->nmember, 2);
  cr_expect_eq(g2->members[0], kn_mb_find_body(arm->model, "chain/b"));
  cr_expect_eq(g2->members[1], kn_mb_find_body(arm->model, "chain/c"));
  cr_expect_eq(g2->members[0], n0 + 4 + 2);
  /* the first group is unchanged; the child is unchanged */
  cr_expect_eq(arm->filter_groups[0].members[0], n0 + 2);
  cr_expect_str_eq(chain->filter_groups[0].name, "g");
  cr_expect_eq(chain->filter_groups[0].members[0], 2);
  /* a third copy would be "chain/g" again: the clash is an error and arm is left as it was */
  int nbody = arm->model->nbody;
  cr_expect_neq(kn_robot_attach(arm, chain, "arm_link_2", NULL, &err), KN_OK);
  cr_expect_eq(arm->model->nbody, nbody);
  cr_expect_eq(arm->nfilter_group, 2);
  kn_robot_free(chain);
  kn_robot_free(arm);
}

Test(urdf_filter_groups, attach_prefixes_a_group_name_clash_alone) {
  /* parent and child both declare 'g' but share no body names: only the group is prefixed */
  kn_robot* a = chain_with_group();
  kn_robot* b = NULL;
  kn_error err = {0};
  const char* other =
      "<robot name='other'>" LINK("o0") LINK("o1") REV("k1", "o0", "o1")
      "<drake:collision_filter_group name='g'><drake:member link='o1'/></drake:collision_filter_group></robot>";
  cr_assert_eq(kn_urdf_load_string(other, "other.urdf", NULL, NULL, &b, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_robot_attach(a, b, "c", NULL, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(a->nfilter_group, 2);
  cr_expect_str_eq(a->filter_groups[1].name, "other/g");
  cr_expect_eq(kn_mb_find_body(a->model, "o1"), 5, "bodies keep their names");
  cr_expect_eq(a->filter_groups[1].members[0], 5);
  kn_robot_free(b);
  kn_robot_free(a);
}
