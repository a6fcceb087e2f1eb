/* kn_libraries_serial_begin/end (common/threads.c): inside the brackets an OpenMP region that asks
 * for 4 threads, as CHOLMOD's supernodal factorization does, runs on one; the brackets nest, and
 * the process's max-active-levels is restored when the outermost ends; kn_world_step leaves it as
 * it found it. */
#include <criterion/criterion.h>
#include <omp.h>
#include <string.h>

#include "common/common.h"
#include "sim/sim.h"

static int team_size(void) {
  int n = 0;
#pragma omp parallel num_threads(4)
  {
#pragma omp single
    n = omp_get_num_threads();
  }
  return n;
}

Test(threads, serial_brackets_nest_and_restore) {
  omp_set_max_active_levels(3);
  int free_team = team_size(); /* 4, unless the environment limits OpenMP (OMP_THREAD_LIMIT...) */
  cr_log_info("team without the brackets: %d threads", free_team);
  kn_libraries_serial_begin();
  cr_expect_eq(team_size(), 1);
  cr_expect_eq(omp_get_max_active_levels(), 0);
  kn_libraries_serial_begin();
  kn_libraries_serial_end();
  cr_expect_eq(team_size(), 1, "an inner end keeps the outer bracket serial");
  kn_libraries_serial_end();
  cr_expect_eq(omp_get_max_active_levels(), 3);
  cr_expect_eq(team_size(), free_team);
}

Test(threads, world_step_restores) {
  const char* yaml = "time_step: 0.01\nduration: 0.02\n"
                     "objects:\n  - {name: ground, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
                     "  - {name: box, shape: {box: [0.1, 0.1, 0.1]}, pose: {xyz: [0, 0, 0.049]}, mass: 1}\n";
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), "threads.yaml", &sc, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(sc, &w, &err), KN_OK, "%s", err.msg);
  omp_set_max_active_levels(2);
  cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s", err.msg);
  cr_expect_eq(omp_get_max_active_levels(), 2);
  kn_world_free(w);
  kn_scene_free(sc);
}
