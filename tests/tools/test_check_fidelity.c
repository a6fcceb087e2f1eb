/* tools/: the physical-fidelity suite, examples/fidelity, through `knead check -j 2` on SAP (~5 s in
 * Release): every check passes but SAP's four expected failures at dt = 0.01 (examples/fidelity/
 * README.md: the 100 m/s ball tunnels, the wedged block at mu 0.1 is over-held, the MPM ball at
 * mu 0.6 rolls 13 % short). A cell that passed and starts failing fails here. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

Test(check_fidelity, whole_suite_on_sap, .timeout = 300) {
  char path[128], cmd[1024];
  snprintf(path, sizeof path, "/tmp/knead_check_fidelity_%d.txt", (int)getpid());
  snprintf(cmd, sizeof cmd, "%s check --no-golden -j 2 --keep-failed /tmp/knead_check_fidelity_kept_%d %s/examples/fidelity > %s",
           KNEAD_CLI, (int)getpid(), KNEAD_SOURCE_DIR, path);
  int st = system(cmd);
  FILE* f = fopen(path, "r");
  cr_assert_not_null(f);
  static char out[1 << 16];
  out[fread(out, 1, sizeof out - 1, f)] = 0;
  fclose(f);
  remove(path);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", out);
  cr_assert(strstr(out, "19 scenes, 35 tests: 31 passed, 4 expected failures, 0 failed, 0 errors"), "%s", out);
  const char* xfail[][2] = {{"tunnelling_plate_100ms.yaml", "XFAIL  stays_above "},
                            {"wedged_block_mu_0_1_slides.yaml", "XFAIL  slides "},
                            {"wedged_block_mu_0_1_slides.yaml", "XFAIL  wall_pushes_20N "},
                            {"mpm_ball_slope_mu_0_6.yaml", "XFAIL  distance_down_slope "}};
  for (int i = 0; i < 4; i++) {
    const char* s = strstr(out, xfail[i][0]);
    cr_assert(s && strstr(s, xfail[i][1]), "%s: %s\n%s", xfail[i][0], xfail[i][1], out);
  }
  /* the analytic stop of T1 within its 2.5 mm, and the jammed wedge's 20 N */
  cr_assert(strstr(out, "PASS   stops_at_0_769 "), "%s", out);
  cr_assert(strstr(out, "PASS   wall_pushes_20N "), "%s", out);
}
