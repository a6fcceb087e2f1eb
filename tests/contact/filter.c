/* Collision filtering: same body, excluded pairs, both world-fixed, group/mask. */
#include <criterion/criterion.h>
#include <math.h>

#include "contact/contact.h"

Test(filter, rules) {
  kn_shape s = {.type = KN_SHAPE_SPHERE, .size = {0.5}};
  kn_collider c[7];
  kn_pose X[7];
  /* all seven overlap at the origin */
  const int clique[7] = {0, 0, 1, 2, -1, -1, 3}, body[7] = {0, 0, 0, 0, -1, -1, 0};
  for (int i = 0; i < 7; ++i) {
    c[i] = (kn_collider){.clique = clique[i], .body = body[i], .shape = &s,
                         .material = kn_contact_material_default(0.01), .group = 0x1, .mask = 0xffffffffu};
    kn_pose_identity(&c[i].X_bg);
    kn_pose_identity(&X[i]);
    X[i].p[0] = 0.01 * i;
  }
  c[6].group = 0x2, c[6].mask = 0x2; /* only touches colliders whose group has bit 1 (others: 0x1) */
  c[3].group = 0x3;                  /* ... like 3 */
  kn_collision_scene* cs = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_collision_scene_create(c, 7, &cs, &err), KN_OK, "%s", err.msg);
  kn_collision_exclude(cs, 2, 1);
  const kn_contact_point* p;
  int n;
  cr_assert_eq(kn_collision_detect(cs, X, 0, &p, &n, &err), KN_OK);
  int seen[7][7] = {{0}};
  for (int i = 0; i < n; ++i) seen[p[i].a][p[i].b]++;
  cr_expect_eq(seen[0][1], 0, "same body");
  cr_expect_eq(seen[1][2], 0, "excluded");
  cr_expect_eq(seen[4][5], 0, "both world-fixed");
  for (int i = 0; i < 6; ++i)
    if (i != 3) cr_expect_eq(seen[i][6], 0, "group/mask rejects %d-6", i);
  cr_expect_eq(seen[3][6], 1, "group/mask accepts 3-6");
  cr_expect_eq(seen[0][2], 1);
  cr_expect_eq(seen[0][4], 1, "body vs world");
  cr_expect_eq(seen[2][3], 1);
  /* expected total: all i<j pairs among 0..5 (15) minus 0-1, 1-2, 4-5, plus 3-6 */
  cr_expect_eq(n, 15 - 3 + 1, "%d points", n);
  kn_collision_scene_free(cs);
}
