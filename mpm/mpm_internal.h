/* mpm/ internals shared by body.c, grid.c, free_motion.c and advance.c (not installed). */
#ifndef KNEAD_MPM_INTERNAL_H
#define KNEAD_MPM_INTERNAL_H

#include <cholmod.h>

#include "mpm/mpm.h"

struct kn_mpm_solver {
  cholmod_common cc;
  cholmod_sparse* A;   /* lower triangle, stype -1, over the active nodes of the last free motion */
  cholmod_sparse* H;   /* kn_mpm_potential's Hessian: A's pattern, allocated on first request */
  cholmod_factor* L;   /* factor of A at v* */
  kn_chol_permuted perm; /* A's entries in L's permuted order (common/sparse_chol.c) */
  int have_factor;     /* L holds the numeric factor of the current A */
  int* col_start;      /* n + 1: neighbour list of node j (nodes k > j within 5^3), CSR over nodes */
  int* nbr;            /* neighbour node indices, ascending per node */
  int* pattern_index;  /* 3 * pattern_n: the grid's node coordinates A's pattern was built for */
  int pattern_n;
  double dt, gravity[3]; /* of the last free motion (for kn_mpm_potential) */
  double* R0;          /* 9 * np polar rotation of F_E^n (linear corotated parts) */
  int R0_np;           /* particles R0 was allocated for */
  int iterations, factorizations; /* of the last free motion: Newton or chord steps, factorizations of A */
  int* asm_int;        /* assemble()'s scratch: particle order by cell, ... */
  double* asm_dbl;     /* ... stencil blocks and batch columns, kept from step to step */
  size_t asm_int_cap, asm_dbl_cap; /* bytes */
  /* H's values kept for kn_mpm_potential while they cannot change: every part linear corotated
   * (A independent of v), the same free motion (grid, R0, dt) and F_E equal to H_FE */
  int quadratic;       /* of the last free motion: every part linear corotated (E quadratic in v) */
  int H_kept;
  double* H_FE;        /* 9 * np: F_E when H was assembled */
  size_t H_FE_cap;     /* bytes */
  /* hash of active node keys => node index (open addressing, power-of-two capacity) */
  uint64_t* hkey;
  int* hval;
  size_t hcap;
};

/* packed node key; coordinates offset so that keys sort like (i, j, k) lexicographically */
static inline uint64_t kn_mpm_key(int i, int j, int k) {
  return ((uint64_t)(uint32_t)(i + (1 << 20)) << 42) | ((uint64_t)(uint32_t)(j + (1 << 20)) << 21) |
         (uint64_t)(uint32_t)(k + (1 << 20));
}
/* node index of key in the solver's hash, -1 if not active */
int kn_mpm_hash_find(const kn_mpm_solver* s, uint64_t key);
/* create the solver scratch on first use (cholmod_start) */
kn_status kn_mpm_solver_ensure(kn_mpm_body* b, kn_error* err);
void kn_mpm_solver_free(kn_mpm_solver* s);

#endif
