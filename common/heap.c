/* The C library's heap (glibc): large blocks kept in the process from one Newton iteration to the
 * next. The Newton solves free and allocate blocks of up to a few MB several times per iteration
 * (UMFPACK's numeric factorization, CHOLMOD's workspaces; the Newton matrix itself is kept by
 * nonlinear/linsolve.c). glibc serves
 * those with mmap, or from the top of the heap that it trims back to the system on free; either
 * way each new block was touched page by page again: on the MPM dough cube on penalty
 * (examples/regression/dough_cube_mpm.yaml) 3.0 million page faults in 380 steps, 45 % of the CPU
 * time (measured 2026-11-27: 52.6 s user + 23.7 s system -> 25.3 s + 0.3 s, 11,500 faults, peak
 * RSS 52 -> 59 MB). Results do not depend on where a block lives. */
#include <pthread.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "common/common.h"

static void keep(void) {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 32 << 20); /* blocks below 32 MB from the heap (glibc's largest) */
  mallopt(M_TRIM_THRESHOLD, 64 << 20); /* the heap's top returned beyond 64 MB free only */
#endif
}

void kn_heap_keep(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, keep);
}
