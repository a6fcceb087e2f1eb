/* knead-bench — the FEM benchmark: whole SAP time steps of the soft-cube grasp (the gripper of
 * examples/soft_cube_grasp.yaml holding its 5 cm, E = 1e5 Pa cube in the lift pose, 0.21 m up)
 * at about 1k, 10k and 50k tetrahedra, split by stage with the timers kn_world_step leaves
 * in w->last (controllers + free motion, contact detection, SAP incl. the Schur complement and
 * its recovery, advance), against the time of one CHOLMOD numeric factorization of the cube's
 * dynamics matrix A measured in the same run (same CHOLMOD defaults as the free motion and the
 * Schur complement; the symbolic analysis is done once, untimed, as the step reuses it). */
#include <cholmod.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* The lift pose of examples/soft_cube_grasp.yaml (grasp_box_ik.c: palm 0.21 m above the grasp
 * pose, the cube centre with it) held by the arm's PD, the pads 0.5 mm off the cube faces (0.02 m
 * of stroke) closing on the target 0.016 m: from the first step the cube hangs in the squeeze,
 * every step has the pad contacts of the held cube (and none with the floor, whose surface
 * vertices would triple the Schur complement's DoFs). %.17g: the resolution h. */
static const char scene_fmt[] =
    "name: fem_grasp_bench\n"
    "time_step: 0.01\n"
    "duration: 1\n"
    "contact: {backend: sap, margin: 0.002}\n"
    "robots:\n"
    "  - name: arm\n"
    "    urdf: knead://models/knead_arm7.urdf\n"
    "    q0: [0, 0.624905, 0, -1.652252, 0, 0.864435, 0]\n"
    "    controller: {kp_per_joint: [2000, 3000, 1000, 1000, 200, 200, 50],\n"
    "                 kd_per_joint: [140, 190, 65, 65, 5, 5, 1], gravity_compensation: true}\n"
    "  - name: gripper\n"
    "    urdf: knead://models/knead_gripper.urdf\n"
    "    attach_to: {robot: arm, link: arm_link_7, pose: {xyz: [0, 0, 0.045]}}\n"
    "    q0: [0.0205, 0.0205]\n"
    "    contact: {friction: 1.0}\n"
    "    controller: {kp: 2000, kd: 30, gravity_compensation: true, setpoint: [0.016]}\n"
    "objects:\n"
    "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, friction: 0.5}\n"
    "deformables:\n"
    "  - name: cube\n"
    "    shape: {box: [0.05, 0.05, 0.05]}\n"
    "    resolution: %.17g\n"
    "    material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.4, density: 800}\n"
    "    pose: {xyz: [0.55, 0, 0.235]}\n"
    "    friction: 1.0\n"
    "    dissipation_time: 0.01\n";

typedef struct {
  int cells, ntet, nvert, ndof;
  long steps;
  double step_ms, free_ms, detect_ms, sap_ms, advance_ms; /* means over the timed steps */
  double step_max_ms;
  double contacts, iterations;                            /* means */
  double fact_ms, analyze_ms;                             /* CHOLMOD on the cube's A */
  double nnz_L;
  int supernodal;
} fem_row;

static int compare_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* (A after a step) => median of `reps` cholmod_factorize, after one untimed kn_chol_analyze (the library's ordering choice) */
static void time_factorization(const cholmod_sparse* Acs, int reps, fem_row* r) {
  cholmod_common cc;
  kn_chol_start(&cc); /* the library's settings and ordering choice */
  cholmod_sparse* A = (cholmod_sparse*)Acs;
  double t0 = kn_wall_time();
  cholmod_factor* L = kn_chol_analyze(A, NULL, &cc);
  r->analyze_ms = (kn_wall_time() - t0) * 1e3;
  double t[16];
  if (reps > 16) reps = 16;
  kn_libraries_serial_begin(); /* one thread in CHOLMOD's OpenMP regions, as in kn_world_step */
  for (int k = 0; k < reps; k++) {
    t0 = kn_wall_time();
    cholmod_factorize(A, L, &cc);
    t[k] = (kn_wall_time() - t0) * 1e3;
  }
  kn_libraries_serial_end();
  qsort(t, (size_t)reps, sizeof *t, compare_double);
  r->fact_ms = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
  r->nnz_L = cc.lnz;
  r->supernodal = L->is_super;
  cholmod_free_factor(&L, &cc);
  cholmod_finish(&cc);
}

/* (cells per side, warm-up and timed steps) => one row; 0 and a message on failure */
static int run_one(int cells, int warmup, int steps, int fact_reps, fem_row* r, char* msg, size_t msgsz) {
  memset(r, 0, sizeof *r);
  char yaml[sizeof scene_fmt + 64];
  snprintf(yaml, sizeof yaml, scene_fmt, 0.05 / cells);
  kn_error e = {0};
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  if (kn_scene_load_string(yaml, strlen(yaml), "knead://fem_grasp_bench.yaml", &sc, &e) ||
      kn_world_create(sc, &w, &e)) {
    snprintf(msg, msgsz, "%s", e.msg);
    kn_scene_free(sc);
    return 0;
  }
  const kn_fem_body* b = w->fems[0].body;
  r->cells = cells, r->ntet = b->mesh.ntet, r->nvert = b->mesh.nvert, r->ndof = 3 * b->nfree;
  int ok = 1;
  for (int k = 0; ok && k < warmup + steps; k++) {
    double t0 = kn_wall_time();
    if (kn_world_step(w, &e) != KN_OK) {
      snprintf(msg, msgsz, "step %d: %s", k, e.msg);
      ok = 0;
      break;
    }
    double ms = (kn_wall_time() - t0) * 1e3;
    if (k < warmup) continue;
    const kn_step_stats* l = &w->last;
    r->steps++;
    r->step_ms += ms, r->step_max_ms = fmax(r->step_max_ms, ms);
    r->free_ms += l->time_free_motion * 1e3, r->detect_ms += l->time_detect * 1e3;
    r->sap_ms += l->time_sap * 1e3, r->advance_ms += l->time_advance * 1e3;
    r->contacts += l->contacts, r->iterations += l->iterations;
  }
  if (ok && r->steps > 0) {
    double n = (double)r->steps;
    r->step_ms /= n, r->free_ms /= n, r->detect_ms /= n, r->sap_ms /= n, r->advance_ms /= n;
    r->contacts /= n, r->iterations /= n;
    time_factorization((const cholmod_sparse*)kn_fem_body_dynamics_matrix(b), fact_reps, r);
  }
  kn_world_free(w);
  kn_scene_free(sc);
  return ok;
}

int kb_fem_run(int quick) {
  /* 6, 12, 20 cells per side: 6 n^3 = 1296, 10368, 48000 tetrahedra */
  static const int cells[] = {6, 12, 20}, warm[] = {3, 2, 1}, timed[] = {20, 6, 3}, reps[] = {9, 5, 3};
  int nrow = quick ? 1 : 3, ok = 1;
  printf("\nFEM benchmark: soft-cube grasp (the gripper holding a 5 cm, E 1e5 cube, lift pose), dt 0.01,\n"
         "whole kn_world_step by stage vs one CHOLMOD factorization of the cube's A (same run)%s\n",
         quick ? "; --quick: 1k tets only, few steps" : "");
  printf("\n%6s %6s %6s %5s %9s %9s %9s %9s %9s %8s %6s %9s %7s\n", "tets", "verts", "dofs", "steps", "step ms",
         "free", "detect", "SAP+Schur", "advance", "contacts", "iter", "factor ms", "ratio");
  for (int i = 0; i < nrow; i++) {
    fem_row r;
    char msg[2048] = "";
    if (!run_one(cells[i], quick ? 2 : warm[i], quick ? 3 : timed[i], quick ? 3 : reps[i], &r, msg, sizeof msg)) {
      fprintf(stderr, "knead-bench: FEM grasp at %d cells per side: %s\n", cells[i], msg);
      ok = 0;
      continue;
    }
    printf("%6d %6d %6d %5ld %9.2f %9.2f %9.2f %9.2f %9.2f %8.1f %6.2f %9.2f %7.2f\n", r.ntet, r.nvert, r.ndof,
           r.steps, r.step_ms, r.free_ms, r.detect_ms, r.sap_ms, r.advance_ms, r.contacts, r.iterations, r.fact_ms,
           r.step_ms / r.fact_ms);
    printf("%6s factor: nnz(L) %.3g, %s, analysis %.2f ms (once); stages / factor: free %.2f, detect %.2f, "
           "SAP %.2f, advance %.2f; slowest step %.2f ms\n",
           "", r.nnz_L, r.supernodal ? "supernodal" : "simplicial", r.analyze_ms, r.free_ms / r.fact_ms,
           r.detect_ms / r.fact_ms, r.sap_ms / r.fact_ms, r.advance_ms / r.fact_ms, r.step_max_ms);
  }
  printf("(means over the timed steps after the warm-up ones; free: controllers, arm and FEM free motion\n"
         " (Newton, one CHOLMOD factorization); detect: rigid pairs and FEM surface vertices vs colliders;\n"
         " SAP+Schur: the Schur complement of A on the contact DoFs (the free motion's factor reused, sparse\n"
         " forward solves over elimination-tree paths, dense inverse), constraint assembly, the SAP solve and\n"
         " the recovery (one solve); ratio: step / factor)\n");
  return ok;
}
