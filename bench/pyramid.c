/* knead-bench --only pyramid: the penalty backend on the penalty paper's pyramid prmd_rd (digest
 * penalty-coulomb-friction.md §6.4; bench/pyramid/prmd_rd.yaml), the digest's full drift window: the
 * ball's height may change by < 1e-4 m between frames 200 and 2000 (2 s and 20 s at the scene's dt
 * 1e-2). Rows: prmd_rd as the paper ran it (mu 0.5, dt 1e-2), and mu 1 at dt 5e-3 (the case of
 * tests/scenes/test_penalty_pyramid.c, which runs 3 s of it in CI). Each prints the drift against the
 * bound, and its time per step against SAP on the regression suite's 500 g box grasp in the same run
 * (the machine's speed). --quick: 4 s instead of 20. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "sim/sim.h"

typedef struct {
  long steps;
  double ms, iters, z0, z_mid, z_end, z_min;
} pyramid_run;

/* (scene, overrides, the window's start t_mid) => 1 and r, or 0 with the message in err */
static int run(const char* path, const char* const* set, int nset, double t_mid, pyramid_run* r, char* err,
               size_t errsz) {
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  kn_error e = {0};
  memset(r, 0, sizeof *r);
  if (!kb_open_scene(path, set, nset, &sc, &w, err, errsz)) return 0;
  const double* q = NULL;
  for (int i = 0; i < w->nobject; i++)
    if (strcmp(w->objects[i].name, "ball") == 0) q = w->trees[w->objects[i].tree].q;
  long total = kn_world_total_steps(w), k = 0, mid = lround(t_mid / *sc->doc->time_step);
  double t = 0;
  r->z0 = r->z_min = q ? q[2] : 0;
  for (; q && k < total; k++) {
    double t0 = kn_wall_time();
    if (kn_world_step(w, &e)) break;
    t += kn_wall_time() - t0;
    r->iters += w->last.iterations;
    if (k + 1 == mid) r->z_mid = q[2];
    r->z_min = fmin(r->z_min, q[2]);
  }
  int ok = q && k == total;
  if (!q) snprintf(err, errsz, "no object 'ball'");
  else if (!ok) snprintf(err, errsz, "failed at step %ld: %s", k + 1, e.msg);
  r->steps = k, r->z_end = q ? q[2] : 0, r->ms = 1e3 * t / (k > 0 ? k : 1), r->iters /= k > 0 ? k : 1;
  kn_world_free(w);
  kn_scene_free(sc);
  return ok;
}

int kb_pyramid_run(const char* bench_dir, const char* examples, int quick) {
  char path[1024], box[1024], err[1024] = "", dur[64];
  const double seconds = quick ? 4.0 : 20.0;
  snprintf(path, sizeof path, "%s/pyramid/prmd_rd.yaml", bench_dir);
  snprintf(box, sizeof box, "%s/regression/box_50mm_500g.yaml", examples);
  snprintf(dur, sizeof dur, "duration=%g", seconds);
  printf("\npenalty on the penalty paper's pyramid prmd_rd (bench/pyramid/prmd_rd.yaml; digest §6.4: drift < 1e-4 m "
         "from 2 s to the end, %g s)\n", seconds);
  printf("  %-26s %6s %8s %6s %10s %10s %10s %10s %8s\n", "run", "steps", "ms/step", "iter", "z(2 s)", "z(end)", "drift",
         "/ bound", "dip");
  const char* paper[] = {dur};
  const char* mu1[] = {dur, "time_step=0.005", "objects[0].friction=1", "objects[1].friction=1",
                       "deformables[0].friction=1", "deformables[1].friction=1", "deformables[2].friction=1"};
  struct {
    const char* name;
    const char* const* set;
    int nset;
  } rows[] = {{"prmd_rd: mu 0.5, dt 1e-2", paper, 1}, {"mu 1, dt 5e-3 (the test's)", mu1, 7}};
  int ok = 1;
  double ms[2] = {0};
  for (int i = 0; i < 2; i++) {
    pyramid_run r;
    int done = run(path, rows[i].set, rows[i].nset, 2.0, &r, err, sizeof err);
    double drift = r.z_end - r.z_mid;
    printf("  %-26s %6ld %8.2f %6.2f %10.6f %10.6f %10.2e %10.2f %8.5f%s%s\n", rows[i].name, r.steps, r.ms, r.iters,
           r.z_mid, r.z_end, drift, fabs(drift) / 1e-4, r.z0 - r.z_min, done ? "" : "  ", done ? "" : err);
    fflush(stdout);
    ok = ok && done, ms[i] = r.ms;
  }
  kb_steps b;
  const char* sap[] = {"contact.backend=sap"};
  if (kb_step_scene(box, sap, 1, 0, &b, err, sizeof err))
    printf("  reference: sap, box_50mm_500g %.4f ms/step; the rows' ms/step against it: %.1f, %.1f\n", b.ms,
           ms[0] / b.ms, ms[1] / b.ms);
  else
    printf("  reference: sap, box_50mm_500g: %s\n", err), ok = 0;
  return ok;
}
