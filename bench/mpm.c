/* knead-bench — the MPM benchmark: whole SAP time steps (kn_world_step) of the paper's Table I
 * scenes (digest §7.7) beside the paper's seconds per step (one thread of a Xeon W-11855M), and
 * the "unavoidable work" measured in the same run on the same body: one P2G (kn_mpm_p2g), one
 * numeric CHOLMOD factorization of A_MPM (the free motion's matrix, analysis untimed) and one
 * G2P + return mapping (kn_mpm_advance with the free-motion velocities). */
#include <cholmod.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Ball on slope (§VII-A): h 0.2, %d particles per cell (125: ~8.2k particles; the paper: 6,777). */
static const char slope_fmt[] =
    "name: mpm_slope_bench\ntime_step: 0.01\nduration: 1\n"
    "gravity: [6.936717523, 0, -6.936717523]\n"
    "objects:\n  - {name: ground, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, friction: 0.2, "
    "stiffness: 1e8}\n"
    "deformables:\n  - name: ball\n    model: mpm\n    shape: {sphere: 0.5}\n    resolution: 0.2\n"
    "    particles_per_cell: %d\n"
    "    material: {type: linear_corotated, youngs_modulus: 1e8, poisson_ratio: 0.2, density: 1e3}\n"
    "    pose: {xyz: [0, 0, 0.5]}\n    friction: 0.2\n    stiffness: 1e8\n    dissipation_time: 0.01\n";

/* Dough rolling (§VII-C): examples/models/knead_rolling_pin.urdf pressed 2 cm into a
 * 0.2 x 0.08 x 0.06 m pizza dough (E 2e4, nu 0.4, yield 1e3 Pa, mu 1) and rolled along x at
 * 0.1 m/s; h 0.02, %d particles per cell (27: 3,240 particles; the paper: 5,863). */
static const char roll_fmt[] =
    "name: mpm_rolling_bench\ntime_step: 0.01\nduration: 2\n"
    "robots:\n  - name: pin\n    urdf: " KNEAD_BENCH_EXAMPLES "/models/knead_rolling_pin.urdf\n"
    "    base_pose: {xyz: [-0.06, 0, 0.08]}\n"
    "    controller: {joints: [pin_x, pin_z], kp: 20000, kd: 400, gravity_compensation: false,\n"
    "                 trajectory: {interpolation: linear, points: [{t: 0, q: [0, 0]}, {t: 1.2, q: [0.12, 0]}]}}\n"
    "objects:\n  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, friction: 1.0}\n"
    "deformables:\n  - name: dough\n    model: mpm\n    shape: {box: [0.2, 0.08, 0.06]}\n    resolution: 0.02\n"
    "    particles_per_cell: %d\n"
    "    material: {type: linear_corotated, youngs_modulus: 2e4, poisson_ratio: 0.4, density: 1e3, "
    "yield_stress: 1e3}\n"
    "    pose: {xyz: [0, 0, 0.03]}\n    friction: 1.0\n";

typedef struct {
  const char* name;
  const char* fmt;   /* YAML with a %d for the particles per cell, or NULL: ... */
  const char* file;  /* ... an example scene, run as it is (not in --quick) */
  int ppc, warmup, steps;
  double paper_s, paper_constraints; /* Table I */
  int paper_particles;
} mpm_case;

typedef struct {
  int np, nodes;
  long steps;
  double step_s, iterations, contacts, constraints;
  double p2g_s, fact_s, g2p_s;
} mpm_row;

static double median(double* t, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
      double s = t[j];
      t[j] = t[j - 1], t[j - 1] = s;
    }
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* (body after a step) => median times of P2G, one numeric factorization of A and G2P (state restored) */
static int time_unavoidable(kn_mpm_body* b, int reps, mpm_row* r, char* msg, size_t msgsz) {
  kn_error e = {0};
  kn_mpm_state s = {0};
  if (kn_mpm_state_save(b, &s, &e)) {
    snprintf(msg, msgsz, "%s", e.msg);
    return 0;
  }
  double tp[16], tf[16], ta[16];
  if (reps > 16) reps = 16;
  cholmod_common cc;
  kn_chol_start(&cc); /* the library's settings and ordering choice */
  int ok = 1;
  /* the free motion rebuilds the grid and A at x^n; the factorization is timed on that A */
  const double g[3] = {0, 0, -9.81};
  kn_mpm_newton_options o = kn_mpm_newton_options_default();
  if (kn_mpm_free_motion(b, 0.01, g, &o, &e)) ok = 0;
  cholmod_sparse* A = ok ? (cholmod_sparse*)kn_mpm_dynamics_matrix(b) : NULL;
  cholmod_factor* L = A ? kn_chol_analyze(A, NULL, &cc) : NULL;
  if (!L) ok = 0;
  r->nodes = b->grid.n;
  double* vs = ok ? malloc(sizeof(double) * 3 * (size_t)b->grid.n) : NULL;
  if (vs) memcpy(vs, b->grid.v_star, sizeof(double) * 3 * (size_t)b->grid.n);
  /* one thread in CHOLMOD's OpenMP regions, as in kn_world_step */
  kn_libraries_serial_begin();
  for (int k = 0; ok && vs && k < reps; k++) {
    double t0 = kn_wall_time();
    cholmod_factorize(A, L, &cc);
    tf[k] = kn_wall_time() - t0;
  }
  kn_libraries_serial_end();
  for (int k = 0; ok && vs && k < reps; k++) {
    kn_mpm_state_restore(b, &s, NULL);
    double t0 = kn_wall_time();
    if (kn_mpm_p2g(b, &e)) ok = 0;
    tp[k] = kn_wall_time() - t0;
    /* G2P with the saved free-motion velocities: same grid (x^n is unchanged) */
    if (ok && b->grid.n == r->nodes) {
      t0 = kn_wall_time();
      if (kn_mpm_advance(b, vs, 0.01, &e)) ok = 0;
      ta[k] = kn_wall_time() - t0;
    } else {
      ta[k] = 0;
    }
  }
  if (!ok) snprintf(msg, msgsz, "unavoidable work: %s", e.msg);
  if (ok) r->p2g_s = median(tp, reps), r->fact_s = median(tf, reps), r->g2p_s = median(ta, reps);
  kn_mpm_state_restore(b, &s, NULL);
  kn_mpm_state_free(&s);
  free(vs);
  cholmod_free_factor(&L, &cc);
  cholmod_finish(&cc);
  return ok;
}

static int run_one(const mpm_case* c, int quick, mpm_row* r, char* msg, size_t msgsz) {
  memset(r, 0, sizeof *r);
  char yaml[4096];
  kn_error e = {0};
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  kn_status st;
  if (c->fmt) {
    snprintf(yaml, sizeof yaml, c->fmt, quick ? 1 : c->ppc);
    st = kn_scene_load_string(yaml, strlen(yaml), "knead://mpm_bench.yaml", &sc, &e);
  } else {
    st = kn_scene_load(c->file, &sc, &e);
  }
  if (st || kn_world_create(sc, &w, &e)) {
    snprintf(msg, msgsz, "%s", e.msg);
    kn_scene_free(sc);
    return 0;
  }
  for (int i = 0; i < w->nmpm; i++) r->np += w->mpms[i].body->np;
  int warm = quick ? 1 : c->warmup, steps = quick ? 2 : c->steps, ok = 1;
  for (int k = 0; ok && k < warm + steps; k++) {
    double t0 = kn_wall_time();
    if (kn_world_step(w, &e) != KN_OK) {
      snprintf(msg, msgsz, "step %d: %s", k, e.msg);
      ok = 0;
      break;
    }
    double s = kn_wall_time() - t0;
    if (k < warm) continue;
    r->steps++;
    r->step_s += s, r->iterations += w->last.iterations, r->contacts += w->last.contacts;
    r->constraints += w->last.constraints;
  }
  if (ok && r->steps) {
    double n = (double)r->steps;
    r->step_s /= n, r->iterations /= n, r->contacts /= n, r->constraints /= n;
    /* every MPM body's unavoidable work, summed */
    mpm_row sum = *r;
    sum.nodes = 0, sum.p2g_s = sum.fact_s = sum.g2p_s = 0;
    for (int i = 0; ok && i < w->nmpm_grid; i++) {
      ok = time_unavoidable(w->mpm_grids[i], quick ? 1 : 5, r, msg, msgsz);
      sum.nodes += r->nodes, sum.p2g_s += r->p2g_s, sum.fact_s += r->fact_s, sum.g2p_s += r->g2p_s;
    }
    *r = sum;
  }
  kn_world_free(w);
  kn_scene_free(sc);
  return ok;
}

int kb_mpm_run(int quick) {
  static const mpm_case cases[] = {
      {"ball on slope", slope_fmt, NULL, 125, 2, 10, 1.16, 2.6, 6777},
      {"dough rolling", roll_fmt, NULL, 27, 2, 10, 7.65, 496.3, 5863},
      /* the example scenes as they are, timed in their contact phases: tearing from the lift
       * (1.0 s) into the pull, shake from the closed grasp (0.4 s) into the lift */
      {"dough tearing", NULL, KNEAD_BENCH_EXAMPLES "/mpm_dough_tearing.yaml", 0, 100, 10, 0.86, 113.7, 1647},
      {"shake", NULL, KNEAD_BENCH_EXAMPLES "/mpm_shake.yaml", 0, 40, 10, 1.94, 763.7, 3456},
      /* the arm pouring: timed from 1.5 s, half way through the tilt, while the liquid flows */
      {"water pouring", NULL, KNEAD_BENCH_EXAMPLES "/mpm_liquid_transfer.yaml", 0, 150, 10, 0.85, 312.6, 791},
  };
  printf("\nMPM benchmark: Table I scenes (digest §7.7), dt 0.01, whole kn_world_step vs the paper's s/step\n"
         "(one thread, Xeon W-11855M) and vs the unavoidable work of the same body in the same run\n"
         "(P2G + one numeric CHOLMOD factorization of A_MPM + G2P/return mapping)%s\n",
         quick ? "; --quick: 1 particle per cell, 2 steps" : "");
  printf("\n%-14s %7s %6s %5s %9s %9s %7s %8s %8s %9s %9s %9s %9s\n", "scene", "parts", "nodes", "steps", "s/step",
         "paper s", "speedup", "iter", "contacts", "p2g ms", "factor ms", "g2p ms", "step/unav");
  int ok = 1;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    if (quick && !cases[i].fmt) continue;
    mpm_row r;
    char msg[2048] = "";
    if (!run_one(&cases[i], quick, &r, msg, sizeof msg)) {
      fprintf(stderr, "knead-bench: MPM %s: %s\n", cases[i].name, msg);
      ok = 0;
      continue;
    }
    double unav = r.p2g_s + r.fact_s + r.g2p_s;
    printf("%-14s %7d %6d %5ld %9.4f %9.2f %7.1f %8.2f %8.1f %9.2f %9.2f %9.2f %9.1f\n", cases[i].name, r.np,
           r.nodes, r.steps, r.step_s, cases[i].paper_s, cases[i].paper_s / r.step_s, r.iterations, r.contacts,
           r.p2g_s * 1e3, r.fact_s * 1e3, r.g2p_s * 1e3, r.step_s / unav);
    printf("%-14s paper: %d particles, %.1f constraints avg; here %.1f constraints avg\n", "",
           cases[i].paper_particles, cases[i].paper_constraints, r.constraints);
  }
  printf("(means over the timed steps after the warm-up; iter: SAP iterations; contacts: particle and rigid\n"
         " contacts; step/unav: s/step over (P2G + factor + G2P))\n");
  return ok;
}
