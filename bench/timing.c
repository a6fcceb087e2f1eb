/* knead-bench — the timing harness shared by the knead and MuJoCo sides. */
#include <stdlib.h>

#include "bench.h"

static int compare_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* (plan, setup, call) => median over repetitions of microseconds per call.
 * The median, not the mean, so that one repetition disturbed by another process on a shared
 * machine does not move the result. */
double kb_time(const kb_plan* p, void* ctx, kb_setup_fn setup, kb_call_fn call) {
  setup(ctx, 0);
  for (int i = 0; i < p->warmup_calls; ++i) call(ctx);
  double* t = malloc((size_t)p->reps * sizeof(double));
  if (!t) return -1.0;
  for (int r = 0; r < p->reps; ++r) {
    setup(ctx, r);
    double t0 = kn_wall_time();
    for (int i = 0; i < p->calls; ++i) call(ctx);
    t[r] = (kn_wall_time() - t0) * 1e6 / p->calls;
  }
  qsort(t, (size_t)p->reps, sizeof(double), compare_double);
  double med = p->reps % 2 ? t[p->reps / 2] : 0.5 * (t[p->reps / 2 - 1] + t[p->reps / 2]);
  free(t);
  return med;
}
