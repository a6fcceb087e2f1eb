/* knead-bench --only ipc_paper: the ipc backend on the IPC paper's scenes (digest
 * incremental-potential-contact.md §9), against the paper's Fig. 23 figures and against references
 * measured in the same run. Built so far: the cement arch (bench/ipc_paper/arch.yaml, §9.3 F3,
 * §9.6: 0.05 s and 5.7 Newton iterations per step on a 4-core 3.6 GHz i7; ours runs on one core).
 * References in the same run: SAP on the same arch (it prints its failure when it fails), and SAP
 * on the regression suite's 500 g box grasp (the machine's speed on a scene every backend runs). */
#include <stdio.h>
#include <string.h>

#include "bench.h"

typedef struct {
  double ms, iters, contacts, max_contacts; /* per step */
  long steps;
} paper_row;

// (scene, overrides, steps) => its row; 0 with the message in err when refused or failed
static int run_scene(const char* path, const char** set, int nset, long steps, paper_row* r, char* err, size_t errsz) {
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  kn_error e = {0};
  memset(r, 0, sizeof *r);
  if (kn_scene_load_with(path, set, nset, &sc, &e) || kn_world_create(sc, &w, &e)) {
    snprintf(err, errsz, "%s", e.msg);
    kn_scene_free(sc);
    return 0;
  }
  long total = kn_world_total_steps(w);
  if (steps <= 0 || steps > total) steps = total;
  double t = 0;
  long k = 0;
  for (; k < steps; k++) {
    double t0 = kn_wall_time();
    if (kn_world_step(w, &e)) break;
    t += kn_wall_time() - t0;
    r->iters += w->last.iterations, r->contacts += w->last.contacts;
    if (w->last.contacts > r->max_contacts) r->max_contacts = w->last.contacts;
  }
  int ok = k == steps;
  if (!ok) snprintf(err, errsz, "failed at step %ld: %s", k + 1, e.msg);
  double n = (double)(k > 0 ? k : 1);
  r->steps = k, r->ms = 1e3 * t / n, r->iters /= n, r->contacts /= n;
  kn_world_free(w);
  kn_scene_free(sc);
  return ok;
}

int kb_ipc_paper_run(const char* bench_dir, const char* examples, int quick) {
  char arch[1024], box[1024], err[1024] = "";
  snprintf(arch, sizeof arch, "%s/ipc_paper/arch.yaml", bench_dir);
  snprintf(box, sizeof box, "%s/regression/box_50mm_500g.yaml", examples);
  long steps = quick ? 20 : 100;
  printf("\nipc on the IPC paper's scenes (digest incremental-potential-contact.md section 9)\n");
  printf("cement arch, bench/ipc_paper/arch.yaml (%ld steps of 0.01 s; paper Fig. 23: 0.05 s/step, 5.7 iters/step, "
         "101 (118) contacts, 4-core 3.6 GHz i7)\n", steps);
  printf("  %-34s %9s %7s %14s %10s %10s\n", "run", "s/step", "iter", "contacts(max)", "x paper s", "x paper it");
  paper_row r;
  int ok = 1;
  const char* ipc[] = {"contact.backend=ipc"};
  if (run_scene(arch, ipc, 1, steps, &r, err, sizeof err))
    printf("  %-34s %9.4f %7.2f %7.1f (%3.0f) %10.2f %10.2f\n", "ipc, the scene's keys (dhat 1e-5)", r.ms / 1e3, r.iters,
           r.contacts, r.max_contacts, r.ms / 1e3 / 0.05, r.iters / 5.7);
  else
    printf("  %-34s %s\n", "ipc, the scene's keys (dhat 1e-5)", err), ok = 0;
  double arch_ms = r.ms;
  const char* ipc6[] = {"contact.backend=ipc", "contact.ipc.dhat=1e-6"};
  if (run_scene(arch, ipc6, 2, steps, &r, err, sizeof err))
    printf("  %-34s %9.4f %7.2f %7.1f (%3.0f) %10.2f %10.2f\n", "ipc, the paper's dhat 1e-6", r.ms / 1e3, r.iters,
           r.contacts, r.max_contacts, r.ms / 1e3 / 0.05, r.iters / 5.7);
  else
    printf("  %-34s %s\n", "ipc, the paper's dhat 1e-6", err);
  const char* sap[] = {"contact.backend=sap"};
  if (run_scene(arch, sap, 1, steps, &r, err, sizeof err))
    printf("  %-34s %9.4f %7.2f %7.1f (%3.0f)   ipc / SAP %.2f\n", "sap on the same arch", r.ms / 1e3, r.iters,
           r.contacts, r.max_contacts, arch_ms / r.ms);
  else
    printf("  %-34s %s\n", "sap on the same arch", err);
  if (run_scene(box, sap, 1, 0, &r, err, sizeof err))
    printf("  %-34s %9.4f %7.2f %7.1f (%3.0f)   arch on ipc / this %.2f\n", "reference: sap, box_50mm_500g", r.ms / 1e3,
           r.iters, r.contacts, r.max_contacts, arch_ms / r.ms);
  else
    printf("  %-34s %s\n", "reference: sap, box_50mm_500g", err), ok = 0;
  return ok;
}
