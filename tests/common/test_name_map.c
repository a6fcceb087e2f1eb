/* common/name_map.c: names to indices. Absent keys, replacement, growth past many doublings, and
 * keys that differ in one character. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/common.h"

Test(name_map, empty_map_and_null_key_find_nothing) {
  kn_name_map m = {0};
  cr_expect_eq(kn_name_map_get(&m, "a"), -1);
  cr_expect_eq(kn_name_map_get(&m, NULL), -1);
  cr_expect_eq(kn_name_map_put(&m, NULL, 1), KN_ERR_INVALID);
  kn_name_map_free(&m);
}

Test(name_map, put_get_replace) {
  kn_name_map m = {0};
  cr_assert_eq(kn_name_map_put(&m, "link_1", 1), KN_OK);
  cr_assert_eq(kn_name_map_put(&m, "link_2", 2), KN_OK);
  cr_expect_eq(kn_name_map_get(&m, "link_1"), 1);
  cr_expect_eq(kn_name_map_get(&m, "link_2"), 2);
  cr_expect_eq(kn_name_map_get(&m, "link_3"), -1);
  cr_assert_eq(kn_name_map_put(&m, "link_1", 7), KN_OK);
  cr_expect_eq(kn_name_map_get(&m, "link_1"), 7);
  cr_expect_eq(m.count, 2);
  kn_name_map_free(&m);
  cr_expect_eq(m.count, 0);
}

Test(name_map, one_hundred_thousand_keys) {
  enum { N = 100000 };
  char(*names)[16] = malloc(N * sizeof *names);
  cr_assert_not_null(names);
  kn_name_map m = {0};
  for (int i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "j%d", i);
    cr_assert_eq(kn_name_map_put(&m, names[i], i), KN_OK);
  }
  cr_expect_eq(m.count, (size_t)N);
  cr_expect_leq(2 * m.count, m.cap, "at most half full");
  for (int i = 0; i < N; i++) cr_assert_eq(kn_name_map_get(&m, names[i]), i);
  cr_expect_eq(kn_name_map_get(&m, "j100000"), -1);
  cr_expect_eq(kn_name_map_get(&m, "j-1"), -1);
  kn_name_map_free(&m);
  free(names);
}
