/* knead-bench --only backends: the contact backends on the same scenes, in one run. Each scene
 * (the regression suite's rigid grasp, its FEM soft cube and its MPM dough cube) is loaded once per
 * backend with contact.backend set (smooth_friction twice: its iterative solver, the default, and
 * "direct", UMFPACK's LU every Newton iteration), the same steps are stepped, and each step is timed
 * alone (kn_world_step). Per backend: ms per step (mean), Newton iterations, numeric factorizations,
 * Krylov products and contacts per step, and the ratio of its time to SAP's measured in the same
 * run. A backend the build or the scene refuses prints its message instead of a row. */
#include <stdio.h>
#include <string.h>

#include "bench.h"

typedef struct {
  const char* name;  /* column label */
  const char* set[2]; /* --set overrides */
  int nset;
} variant;

static const variant variants[] = {
    {"sap", {"contact.backend=sap", NULL}, 1},
    {"smooth_friction", {"contact.backend=smooth_friction", NULL}, 1},
    {"smooth_friction direct", {"contact.backend=smooth_friction", "contact.smooth_friction.solver=direct"}, 2},
    {"penalty", {"contact.backend=penalty", NULL}, 1},
    {"ipc", {"contact.backend=ipc", NULL}, 1},
};

int kb_backends_run(const char* examples, int quick) {
  const struct {
    const char* file;
    long steps; /* 0: the whole scene */
  } scenes[] = {{"regression/box_50mm_500g.yaml", 0},
                {"regression/soft_cube_coarse.yaml", quick ? 40 : 150},
                {"regression/dough_cube_mpm.yaml", quick ? 40 : 150}};
  printf("\ncontact backends on the same scenes (ms per step; per step: Newton iterations, factorizations, "
         "Krylov products, contacts; time / SAP's in this run)\n");
  for (size_t i = 0; i < sizeof scenes / sizeof *scenes; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", examples, scenes[i].file);
    printf("%s (%s steps)\n", scenes[i].file, scenes[i].steps ? (quick ? "40" : "150") : "all");
    printf("  %-24s %9s %7s %7s %8s %8s %8s\n", "backend", "ms/step", "iter", "fact", "krylov", "contacts", "x SAP");
    double sap_ms = 0;
    for (size_t b = 0; b < sizeof variants / sizeof *variants; b++) {
      kb_steps r;
      char err[512] = "";
      if (!kb_step_scene(path, variants[b].set, variants[b].nset, scenes[i].steps, &r, err, sizeof err)) {
        printf("  %-24s %s\n", variants[b].name, err);
        continue;
      }
      if (b == 0) sap_ms = r.ms;
      printf("  %-24s %9.3f %7.2f %7.2f %8.1f %8.1f %8.2f\n", variants[b].name, r.ms, r.iters, r.facts, r.krylov,
             r.contacts, sap_ms > 0 ? r.ms / sap_ms : 0.0);
    }
  }
  return 1;
}
