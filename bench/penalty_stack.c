/* knead-bench --only penalty_stack: the penalty backend on the paper's five-block stack
 * (penalty-coulomb-friction.md §6.3; scenes in bench/penalty_stack/) at its FEM resolution, over
 * more steps than test_penalty_stack's five_blocks_216 can afford:
 *   paper_216   2 m cubes, 6x6x6-node FEM blocks, k 1e6, dt 0.01: CPU per step, Newton iterations
 *               per step, the settling and the digest's drift (every FEM vertex and rigid corner,
 *               from frame N1 = 200 to 2 N1 and to N2, the scene's 3000 steps; --quick 600);
 *   paper_8     the same with 8-vertex FEM blocks: the reference, measured in the same run (the
 *               216-node stack's CPU per step is printed as a ratio to it);
 *   scaled_216  the stack at 0.2 m with the default k (1e4) and 216-node blocks at dt 0.01 (where
 *               Newton stalls, step 5) and at dt 0.01 sqrt(0.1) = 3.16e-3 s (the paper's step in
 *               the scaled scene's time; 300 steps).
 * Prints one row per run; returns 0 when a run that should pass fails. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "deformable/deformable.h"
#include "sim/sim.h"

enum { MAXP = 2 * 216 + 3 * 8 };

// every FEM vertex and every rigid cube's 8 corners (cubes of half edge `half`) into p; their count
static int stack_points(const kn_world* w, double half, double* p) {
  int n = 0;
  for (int i = 0; i < w->nfem && n + w->fems[i].body->mesh.nvert <= MAXP; i++) {
    const kn_fem_body* b = w->fems[i].body;
    memcpy(p + 3 * n, b->x, 3 * (size_t)b->mesh.nvert * sizeof *p);
    n += b->mesh.nvert;
  }
  for (int i = 0; i < w->nobject && n + 8 <= MAXP; i++) {
    if (w->objects[i].name[0] != 'r') continue; /* r0, r3, r4: the rigid cubes (not the ground) */
    const double* q = w->trees[w->objects[i].tree].q;
    kn_pose X;
    memcpy(X.p, q, sizeof X.p);
    kn_mat3_from_quat(q + 3, X.R);
    for (int c = 0; c < 8; c++) {
      double r[3] = {c & 1 ? half : -half, c & 2 ? half : -half, c & 4 ? half : -half};
      kn_pose_apply(&X, r, p + 3 * n++);
    }
  }
  return n;
}

static double max_distance(const double* a, const double* b, int n) {
  double d = 0;
  for (int i = 0; i < n; i++)
    d = fmax(d, sqrt(pow(a[3 * i] - b[3 * i], 2) + pow(a[3 * i + 1] - b[3 * i + 1], 2) +
                     pow(a[3 * i + 2] - b[3 * i + 2], 2)));
  return d;
}

typedef struct {
  long steps, failed_at;           /* steps done; the failing step (0: none) */
  double cpu_ms, iters;            /* CPU per step, Newton iterations per step */
  double settle, drift_2n1, drift; /* from the start to N1; N1 to 2 N1; N1 to the last step */
  double step_motion;              /* the largest point motion in one step over the last 100 */
  char msg[256];
} stack_run;

/* (scene, one --set override or NULL, steps, N1, half edge) => r; 1 when every step ran */
static int run_stack(const char* path, const char* set, long steps, long n1, double half, stack_run* r) {
  static double z0[3 * MAXP], p1[3 * MAXP], p[3 * MAXP], prev[3 * MAXP];
  memset(r, 0, sizeof *r);
  r->drift_2n1 = NAN;
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  kn_error e = {0};
  const char* sets[1] = {set};
  if (!kb_open_scene(path, sets, set ? 1 : 0, &sc, &w, r->msg, sizeof r->msg)) return 0;
  int np = stack_points(w, half, z0);
  memcpy(prev, z0, sizeof z0);
  double cpu = 0;
  long k = 0;
  for (; k < steps; k++) {
    clock_t c0 = clock();
    if (kn_world_step(w, &e)) {
      r->failed_at = k + 1;
      snprintf(r->msg, sizeof r->msg, "%.255s", e.msg);
      break;
    }
    cpu += (double)(clock() - c0) / CLOCKS_PER_SEC;
    r->iters += w->last.iterations;
    stack_points(w, half, p);
    if (k + 1 > steps - 100) r->step_motion = fmax(r->step_motion, max_distance(p, prev, np));
    memcpy(prev, p, sizeof p);
    if (k + 1 == n1) memcpy(p1, p, sizeof p), r->settle = max_distance(p1, z0, np);
    if (k + 1 > n1) r->drift = fmax(r->drift, max_distance(p, p1, np));
    if (k + 1 == 2 * n1) r->drift_2n1 = r->drift;
  }
  r->steps = k;
  r->cpu_ms = k > 0 ? 1e3 * cpu / (double)k : 0;
  r->iters = k > 0 ? r->iters / (double)k : 0;
  kn_world_free(w);
  kn_scene_free(sc);
  return r->failed_at == 0;
}

static void print_run(const char* name, const stack_run* r, long n1, double ref_ms) {
  printf("  %-26s %5ld steps  %8.2f ms/step CPU", name, r->steps, r->cpu_ms);
  if (ref_ms > 0) printf(" (%5.2fx paper_8)", r->cpu_ms / ref_ms);
  printf("  %5.2f iters/step", r->iters);
  if (r->steps >= n1)
    printf("  settled %.3e m  drift %ld-%ld %.3e m, %ld-%ld %.3e m  last-100 step motion %.1e m", r->settle, n1,
           2 * n1, r->drift_2n1, n1, r->steps, r->drift, r->step_motion);
  printf("\n");
  if (r->failed_at) printf("    fails at step %ld: %s\n", r->failed_at, r->msg);
}

int kb_penalty_stack_run(const char* bench_dir, int quick) {
  char p216[512], p8[512], s216[512];
  snprintf(p216, sizeof p216, "%s/penalty_stack/paper_216.yaml", bench_dir);
  snprintf(p8, sizeof p8, "%s/penalty_stack/paper_8.yaml", bench_dir);
  snprintf(s216, sizeof s216, "%s/penalty_stack/scaled_216.yaml", bench_dir);
  const long n1 = 200, n2 = quick ? 600 : 3000;
  printf("penalty stack (digest §6.3; drift bound 1e-6 m, not growing; N1 = %ld, N2 = %ld):\n", n1, n2);
  stack_run ref, r216, sc, sc3;
  int ok = run_stack(p8, NULL, n2, n1, 1.0, &ref);
  print_run("paper_8 (reference)", &ref, n1, 0);
  ok = run_stack(p216, NULL, n2, n1, 1.0, &r216) && ok;
  print_run("paper_216", &r216, n1, ref.cpu_ms);
  if (!(r216.drift <= 1e-6 && r216.drift <= r216.drift_2n1 + 1e-9)) {
    printf("    paper_216: drift %.3e m (to step %ld: %.3e m): above the bound or growing\n", r216.drift, 2 * n1,
           r216.drift_2n1);
    ok = 0;
  }
  /* expected to fail (the scaled scene's dt is sqrt(10) too coarse): reported, not judged */
  run_stack(s216, NULL, 20, n1, 0.1, &sc);
  print_run("scaled_216, dt 0.01", &sc, n1, ref.cpu_ms);
  ok = run_stack(s216, "time_step=0.0031623", 300, n1, 0.1, &sc3) && ok;
  print_run("scaled_216, dt 3.16e-3", &sc3, n1, ref.cpu_ms);
  return ok;
}
