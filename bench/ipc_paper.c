/* knead-bench --only ipc_paper: the ipc backend on the IPC paper's scenes (digest
 * incremental-potential-contact.md §9), against the paper's Fig. 23 figures and against references
 * measured in the same run. The twisted rods' time-step sweep (bench/ipc_paper/rods_twist.yaml, §9.4
 * Table 1: s/step and Newton iterations/step per h on a 4-core 2.9 GHz i7, 6 s simulated; here h
 * 0.01-0.1 over 1 s unless --rods-seconds says otherwise: 6 for the paper's, with h 0.2-2 too, tens of
 * minutes, never in CI)
 * and the cement arch (bench/ipc_paper/arch.yaml, §9.3 F3,
 * §9.6: 0.05 s and 5.7 Newton iterations per step on a 4-core 3.6 GHz i7; ours runs on one core).
 * References in the same run: SAP on the same arch (it prints its failure when it fails), and SAP
 * on the regression suite's 500 g box grasp (the machine's speed on a scene every backend runs). */
#include <stdio.h>
#include <string.h>

#include "bench.h"

int kb_ipc_paper_run(const char* bench_dir, const char* examples, int quick, double rods_seconds) {
  char arch[1024], box[1024], err[1024] = "";
  snprintf(arch, sizeof arch, "%s/ipc_paper/arch.yaml", bench_dir);
  snprintf(box, sizeof box, "%s/regression/box_50mm_500g.yaml", examples);
  long steps = quick ? 20 : 100;
  printf("\nipc on the IPC paper's scenes (digest incremental-potential-contact.md section 9)\n");
  printf("cement arch, bench/ipc_paper/arch.yaml (%ld steps of 0.01 s; paper Fig. 23: 0.05 s/step, 5.7 iters/step, "
         "101 (118) contacts, 4-core 3.6 GHz i7)\n", steps);
  printf("  %-34s %9s %7s %14s %10s %10s\n", "run", "s/step", "iter", "contacts(max)", "x paper s", "x paper it");
  kb_steps r;
  int ok = 1;
  const char* ipc[] = {"contact.backend=ipc"};
  if (kb_step_scene(arch, ipc, 1, steps, &r, err, sizeof err))
    printf("  %-34s %9.4f %7.2f %7.1f (%3.0f) %10.2f %10.2f\n", "ipc, the scene's keys (paper dhat)", r.ms / 1e3, r.iters,
           r.contacts, r.max_contacts, r.ms / 1e3 / 0.05, r.iters / 5.7);
  else
    printf("  %-34s %s\n", "ipc, the scene's keys (paper dhat)", err), ok = 0;
  double arch_ms = r.ms;
  const char* ipc6[] = {"contact.backend=ipc", "contact.ipc.dhat=1e-5"};
  if (kb_step_scene(arch, ipc6, 2, steps, &r, err, sizeof err))
    printf("  %-34s %9.4f %7.2f %7.1f (%3.0f) %10.2f %10.2f\n", "ipc, dhat 1e-5 (10x the paper's)", r.ms / 1e3, r.iters,
           r.contacts, r.max_contacts, r.ms / 1e3 / 0.05, r.iters / 5.7);
  else
    printf("  %-34s %s\n", "ipc, dhat 1e-5 (10x the paper's)", err);
  const char* sap[] = {"contact.backend=sap"};
  if (kb_step_scene(arch, sap, 1, steps, &r, err, sizeof err))
    printf("  %-34s %9.4f %7.2f %7.1f (%3.0f)   ipc / SAP %.2f\n", "sap on the same arch", r.ms / 1e3, r.iters,
           r.contacts, r.max_contacts, arch_ms / r.ms);
  else
    printf("  %-34s %s\n", "sap on the same arch", err);
  double box_ms = 0;
  if (kb_step_scene(box, sap, 1, 0, &r, err, sizeof err))
    printf("  %-34s %9.6f %7.2f %7.1f (%3.0f)   arch on ipc / this %.2f\n", "reference: sap, box_50mm_500g", r.ms / 1e3,
           r.iters, r.contacts, r.max_contacts, arch_ms / r.ms), box_ms = r.ms;
  else
    printf("  %-34s %s\n", "reference: sap, box_50mm_500g", err), ok = 0;
  /* Table 1's rows for the h swept here: h, s/step, iterations/step, contacts avg (max); h >= 0.2 only
   * over the paper's 6 s (--rods-seconds 6: a second holds at most 5 of their steps, before the rods
   * wrap, where those steps cost) */
  static const struct {
    double h, s, iters, contacts, max_contacts;
  } table1[] = {{0.01, 0.38, 2.65, 269, 707}, {0.025, 0.38, 2.69, 435, 1000}, {0.05, 0.46, 3.06, 551, 1200},
                {0.1, 0.73, 4.75, 597, 1300},   {0.2, 1.79, 14.37, 607, 1200},  {0.5, 11.39, 100.58, 653, 1400},
                {1, 18.41, 188.17, 708, 1300},  {2, 52.02, 522.00, 843, 1300}};
  double rod_s = rods_seconds > 0 ? rods_seconds : quick ? 0.2 : 1.0;
  char rods[1024];
  snprintf(rods, sizeof rods, "%s/ipc_paper/rods_twist.yaml", bench_dir);
  printf("twisted rods, bench/ipc_paper/rods_twist.yaml (3 FEM rods, 2640 nodes, 6906 tets; %g s simulated, the "
         "paper 6 s; paper Table 1, 4-core 2.9 GHz i7)\n", rod_s);
  printf("  %-6s %9s %7s %14s | %8s %7s %14s | %10s %10s\n", "h", "s/step", "iter", "contacts(max)", "paper s",
         "iter", "contacts(max)", "x paper s", "x paper it");
  double ref_ms = 0;
  /* the largest h first, each row printed as it ends: a long run (--rods-seconds 6) stopped early
   * still leaves the cheapest rows */
  for (size_t ri = 0; ri < sizeof table1 / sizeof *table1; ri++) {
    size_t i = sizeof table1 / sizeof *table1 - 1 - ri;
    if ((quick && table1[i].h < 0.05) || (table1[i].h > 0.1 && rod_s < 6)) continue;
    char hset[64], dset[64];
    snprintf(hset, sizeof hset, "time_step=%g", table1[i].h);
    snprintf(dset, sizeof dset, "duration=%g", rod_s);
    const char* set[] = {"contact.backend=ipc", hset, dset};
    if (!kb_step_scene(rods, set, 3, 0, &r, err, sizeof err)) { /* the steps done, then why it stopped */
      printf("  %-6g %9.4f %7.2f %7.1f (%4.0f) over %ld steps; %s\n", table1[i].h, r.ms / 1e3, r.iters, r.contacts,
             r.max_contacts, r.steps, err), ok = 0;
      fflush(stdout);
      continue;
    }
    if (table1[i].h == 0.025) ref_ms = r.ms;
    printf("  %-6g %9.4f %7.2f %7.1f (%4.0f) | %8.2f %7.2f %7.0f (%4.0f) | %10.2f %10.2f\n", table1[i].h, r.ms / 1e3,
           r.iters, r.contacts, r.max_contacts, table1[i].s, table1[i].iters, table1[i].contacts, table1[i].max_contacts,
           r.ms / 1e3 / table1[i].s, r.iters / table1[i].iters);
    fflush(stdout);
  }
  if (ref_ms > 0)
    printf("  (s/step at h 0.025 against SAP's box grasp above, the same run's machine reference: %.0f)\n",
           ref_ms / box_ms);
  return ok;
}
