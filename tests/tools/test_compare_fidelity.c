/* tools/: `knead compare examples/fidelity` on every backend (the default list: sap, penalty, ipc,
 * smooth_friction) against examples/fidelity/baseline.json, the recorded compare.json: a check that
 * passed there and fails now is a regression and fails this test. Backends that do not exist yet are
 * refused in their cells and compared with nothing; when one joins, its cells are new until the
 * baseline is recorded again (examples/fidelity/README.md). ~5 s in Release with -j 2. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

Test(compare_fidelity, every_backend_against_the_baseline, .timeout = 300) {
  char path[128], cmd[1024];
  snprintf(path, sizeof path, "/tmp/knead_compare_fidelity_%d.txt", (int)getpid());
  snprintf(cmd, sizeof cmd, "%s compare -j 2 --out /tmp/knead_compare_fidelity_%d --baseline %s/examples/fidelity/"
           "baseline.json %s/examples/fidelity > %s", KNEAD_CLI, (int)getpid(), KNEAD_SOURCE_DIR, KNEAD_SOURCE_DIR, path);
  int st = system(cmd);
  FILE* f = fopen(path, "r");
  cr_assert_not_null(f);
  static char out[1 << 18];
  out[fread(out, 1, sizeof out - 1, f)] = 0;
  fclose(f);
  remove(path);
  snprintf(cmd, sizeof cmd, "rm -rf /tmp/knead_compare_fidelity_%d", (int)getpid());
  cr_assert_eq(system(cmd), 0);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", out);
  cr_assert(strstr(out, "19 scenes x 4 backends: "), "%s", out);
  cr_assert(strstr(out, "checks compared, 0 regressions"), "%s", out);
  /* SAP's 35 checks at least (another backend's, once recorded, add to them) */
  const char* b = strstr(out, "baseline ");
  int compared = 0;
  cr_assert(b && sscanf(strstr(b, ": ") + 2, "%d", &compared) == 1 && compared >= 35, "%s", b ? b : out);
}
