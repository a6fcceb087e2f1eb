/* knead-bench --only continuous: the continuous penalty forces' per-pair kernels
 * (continuous-penalty-forces.md §7.2, §7.6), on 1024 vertex-face and 1024 edge-edge pairs that
 * cross within the step (random sizes, tilts and motions, fixed seed), each timed by kb_time:
 *   P1  CCD (the cubic, its roots, the first contact: kn_cpf_first_contact) + the force
 *       (kn_cpf_force) per pair, against the paper's 3 us on a 2.4 GHz Q6600 core;
 *   P2  that against a discrete detection + discrete penalty of the same pairs at the step's end,
 *       measured in the same run: the closest-point case, its squared distance and gradient
 *       (kn_dist_*_case, kn_dist_eval) and the force k grad/2 (paper: 3-4x);
 *   P3  the force with the exact normalizer (8 panels of 3-point Gauss-Legendre per interval)
 *       against L_k's, the same code (kn_cpf_force_jacobian without Jacobian; paper: up to 10x);
 *   and the force with its 12 x 12 Jacobian, which the implicit backend evaluates per Newton
 *   iteration, against the force alone; and the implicit step's weighted force with its Jacobian
 *   (kn_cpf_impulse_jacobian: 4-point Gauss-Legendre) against the mean's (W/Jac);
 *   and whole steps (P2 on a scene): a cube dropped on a plate and a 27-vertex FEM cube dropped on
 *   it, 2 s each, with continuous: true against the discrete springs in the same run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "contact/contact.h"
#include "penalty/penalty.h"

#define NPAIR 1024

typedef struct {
  double x0[2][NPAIR][12], x1[2][NPAIR][12];
  kn_cpf_pair pair[2][NPAIR];
  double s_star[2][NPAIR];
  int ee, i;
  double sink;
} bench_ctx;

static double urand(unsigned* s) {
  *s = *s * 1664525u + 1013904223u;
  return (*s >> 8) / 16777216.0;
}

/* a pair crossing inside the step: a triangle (or an edge) near the origin in the plane z = 0 at
 * s = 0.5, tilted and moving a little, the vertex (or the other edge) moving through it */
static void make_pair(unsigned* seed, int ee, double x0[12], double x1[12]) {
  double base[4][3], move[4][3];
  if (!ee) {
    double a = 0.5 + urand(seed);
    double p[4][3] = {{0.1 * (urand(seed) - 0.3), 0.1 * (urand(seed) - 0.3), 0}, {-a, -a, 0}, {a, -a, 0}, {0, a, 0}};
    memcpy(base, p, sizeof p);
  } else {
    double t = 0.3 + 2.5 * urand(seed), c = cos(t), s = sin(t); /* not near parallel */
    double p[4][3] = {{-1, 0.1 * urand(seed), 0}, {1, 0.1 * urand(seed), 0}, {-c, -s, 0}, {c, s, 0}};
    memcpy(base, p, sizeof p);
  }
  for (int v = 0; v < 4; v++)
    for (int k = 0; k < 3; k++) move[v][k] = 0.05 * (urand(seed) - 0.5);
  double dz = 0.2 + urand(seed); /* the vertex (edge 1) crosses from +dz/2 to -dz/2 */
  for (int v = 0; v < 4; v++) {
    int moving = ee ? v < 2 : v == 0;
    for (int k = 0; k < 3; k++) {
      double z = k == 2 && moving ? 0.5 * dz : 0;
      x0[3 * v + k] = base[v][k] - 0.5 * move[v][k] + z;
      x1[3 * v + k] = base[v][k] + 0.5 * move[v][k] - z;
    }
  }
}

static void setup_none(void* ctx, int rep) { (void)ctx, (void)rep; }

static void call_ccd_cpf(void* p) {
  bench_ctx* c = p;
  int e = c->ee, i = c->i = (c->i + 1) % NPAIR;
  kn_cpf_stencil st = {c->x0[e][i], c->x1[e][i], e};
  kn_cpf_pair pr;
  double s, F[12];
  if (kn_cpf_first_contact(&st, 1e-9, &pr, &s)) kn_cpf_force(&st, &pr, s, 1e4, F), c->sink += F[2];
}

static void call_dcd_dpf(void* p) {
  bench_ctx* c = p;
  int e = c->ee, i = c->i = (c->i + 1) % NPAIR;
  const double* x = c->x1[e][i];
  kn_dist_case dc = e ? kn_dist_edge_edge_case(x) : kn_dist_point_triangle_case(x);
  double g[12], d2 = kn_dist_eval(x, dc, g, NULL), F[12];
  for (int k = 0; k < 12; k++) F[k] = 0.5e4 * g[k];
  c->sink += F[2] + d2;
}

static kn_cpf_mode bench_mode;
static int bench_jacobian, bench_weighted;
static void call_force(void* p) {
  bench_ctx* c = p;
  int e = c->ee, i = c->i = (c->i + 1) % NPAIR;
  kn_cpf_stencil st = {c->x0[e][i], c->x1[e][i], e};
  double F[12], dF[144];
  (bench_weighted ? kn_cpf_impulse_jacobian : kn_cpf_force_jacobian)(&st, &c->pair[e][i], c->s_star[e][i], 1e4, bench_mode,
                                                                      F, bench_jacobian ? dF : NULL, NULL);
  c->sink += F[2] + (bench_jacobian ? dF[38] : 0);
}

// (scene text) => mean seconds per step over its duration and Newton iterations per step; -1 when refused or failed
static double scene_step_time(const char* yaml, double* iterations) {
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  kn_error e = {0};
  double t = -1;
  if (!kn_scene_load_string(yaml, strlen(yaml), "bench.yaml", &sc, &e) && !kn_world_create(sc, &w, &e)) {
    long n = lround(sc->duration / sc->time_step), k = 0;
    double t0 = kn_wall_time(), iters = 0;
    for (; k < n && !kn_world_step(w, &e); k++) iters += w->last.iterations;
    if (k == n) t = (kn_wall_time() - t0) / (double)n;
    *iterations = iters / (double)n;
  }
  if (t < 0) printf("  %s\n", e.msg);
  kn_world_free(w);
  kn_scene_free(sc);
  return t;
}

static void scene_ratios(void) {
  static const char* bodies[2] = {
      "objects:\n  - {name: plate, shape: {box: [1, 1, 0.002]}, fixed: true}\n"
      "  - {name: cube, shape: {box: [0.1, 0.1, 0.1]}, density: 100, pose: {xyz: [0.013, 0.021, 0.071]}}\n",
      "objects:\n  - {name: plate, shape: {box: [1, 1, 0.002]}, fixed: true}\n"
      "deformables:\n  - {name: cube, model: fem, shape: {box: [0.1, 0.1, 0.1]}, resolution: 0.05, material: {type: "
      "linear_corotated, youngs_modulus: 1e6, poisson_ratio: 0.3, density: 100}, pose: {xyz: [0.013, 0.021, 0.071]}}\n"};
  static const char* names[2] = {"rigid cube", "FEM cube (27 vertices)"};
  printf("  whole steps, 2 s at dt 0.01 (ms per step, fastest of 3 runs; Newton iterations per step):\n");
  for (int b = 0; b < 2; b++) {
    char yaml[1024];
    double it[2], t[2];
    for (int c = 0; c < 2; c++) {
      snprintf(yaml, sizeof yaml, "time_step: 0.01\nduration: 2\ngravity: [0, 0, -9.81]\ncontact: {backend: penalty%s}\n%s",
               c ? ", penalty: {continuous: true}" : "", bodies[b]);
      t[c] = INFINITY; /* the fastest of 3 runs: the machine's other jobs only ever add time */
      for (int r = 0; r < 3; r++) {
        double tr = scene_step_time(yaml, &it[c]);
        t[c] = tr < 0 ? -1 : fmin(t[c], tr);
        if (tr < 0) break;
      }
    }
    if (t[0] > 0 && t[1] > 0)
      printf("    %-24s discrete %.3f ms (%.2f it), continuous %.3f ms (%.2f it): ratio %.2f\n", names[b], 1e3 * t[0], it[0],
             1e3 * t[1], it[1], t[1] / t[0]);
  }
}

int kb_continuous_run(int quick) {
  bench_ctx* c = calloc(1, sizeof *c);
  if (!c) return 0;
  unsigned seed = 12345;
  int found = 0, tried = 0;
  for (int e = 0; e < 2; e++)
    for (int i = 0; i < NPAIR; i++) { /* the ones CCD finds (a tilted triangle may let its vertex pass outside) */
      kn_cpf_stencil st = {c->x0[e][i], c->x1[e][i], e};
      int hit = 0;
      for (int t = 0; t < 100 && !hit; t++, tried++) {
        make_pair(&seed, e, c->x0[e][i], c->x1[e][i]);
        hit = kn_cpf_first_contact(&st, 1e-9, &c->pair[e][i], &c->s_star[e][i]);
      }
      found += hit;
    }
  kb_plan plan = quick ? (kb_plan){.warmup_calls = 200, .reps = 3, .calls = 2000}
                       : (kb_plan){.warmup_calls = 20000, .reps = 21, .calls = 20000};
  printf("\ncontinuous penalty forces, per pair (%d crossing pairs, %d generated; us per pair, median of %d runs)\n", found,
         tried, plan.reps);
  printf("%-4s %12s %12s %8s %10s %12s %12s %8s %12s %8s %8s\n", "", "CCD+CPF", "DCD+DPF", "P2", "P1/3us", "CPF L_k",
         "CPF exact", "P3", "L_k+Jac", "Jac/F", "W/Jac");
  for (int e = 0; e < 2; e++) {
    c->ee = e, c->i = 0;
    double t_cpf = kb_time(&plan, c, setup_none, call_ccd_cpf);
    double t_dpf = kb_time(&plan, c, setup_none, call_dcd_dpf);
    bench_mode = KN_CPF_LK, bench_jacobian = 0;
    double t_lk = kb_time(&plan, c, setup_none, call_force);
    bench_mode = KN_CPF_EXACT;
    double t_ex = kb_time(&plan, c, setup_none, call_force);
    bench_mode = KN_CPF_LK, bench_jacobian = 1;
    double t_jac = kb_time(&plan, c, setup_none, call_force);
    bench_weighted = 1;
    double t_w = kb_time(&plan, c, setup_none, call_force);
    bench_weighted = 0;
    printf("%-4s %12.4f %12.4f %8.2f %10.4f %12.4f %12.4f %8.2f %12.4f %8.2f %8.2f\n", e ? "EE" : "VF", t_cpf, t_dpf,
           t_cpf / t_dpf, t_cpf / 3.0, t_lk, t_ex, t_ex / t_lk, t_jac, t_jac / t_lk, t_w / t_jac);
  }
  printf("  P1: CCD+CPF against the paper's 3 us per pair (Q6600, 2.4 GHz); P2: CCD+CPF / DCD+DPF (paper 3-4x); P3: "
         "exact / L_k normalizer (paper up to 10x); W/Jac: the implicit step's weighted force + Jacobian / the mean's\n");
  scene_ratios();
  int ok = isfinite(c->sink) && found == 2 * NPAIR;
  if (!ok) printf("  FAILED: %d of %d pairs found by CCD\n", found, 2 * NPAIR);
  free(c);
  return ok;
}
