/* tools/: the whole examples/regression suite through `knead check -j 2` (~9 s in Release, 7 s of it
 * the MPM dough cube): every check passes except the expected failures of the two scenes built to
 * fail (low friction, weak grip). Golden files are not compared here (--no-golden): they pin the
 * trajectories to 0.1 mm / 2e-4 rad and are re-recorded with --update-golden after intended changes
 * of the physics (examples/regression/README.md); CI (.ci/run) compares them. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

Test(check_regression, whole_suite, .timeout = 300) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s check --no-golden -j 2 %s/examples/regression > /tmp/knead_check_regression_%d.txt",
           KNEAD_CLI, KNEAD_SOURCE_DIR, (int)getpid());
  int st = system(cmd);
  char path[128];
  snprintf(path, sizeof path, "/tmp/knead_check_regression_%d.txt", (int)getpid());
  FILE* f = fopen(path, "r");
  cr_assert_not_null(f);
  static char out[1 << 16];
  out[fread(out, 1, sizeof out - 1, f)] = 0;
  fclose(f);
  remove(path);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", out);
  /* 11 scenes, 4 checks each plus 2 squeeze checks, and the MPM dough cube's 5; 4 expected failures
   * (2 scenes x lifted, held) */
  cr_assert(strstr(out, "12 scenes, 51 tests: 47 passed, 4 expected failures, 0 failed, 0 errors"), "%s", out);
  const char* w = strstr(out, "box_weak_grip_fails.yaml");
  cr_assert(w && strstr(w, "XFAIL  lifted ") && strstr(w, "XFAIL  held_during_shake "), "%s", out);
}
