/* Dense references for the tests of sparse matrices and material Hessians: a CHOLMOD lower
 * triangle as a dense symmetric matrix, max |a| and max |a - b|, and the EOS fluid's exact
 * (unprojected) dP/dF. Include after <suitesparse/cholmod.h> (for dense_of) and criterion. */
#ifndef KNEAD_TESTS_SUPPORT_DENSE_H
#define KNEAD_TESTS_SUPPORT_DENSE_H

#include <math.h>
#include <stdlib.h>

#include "common/common.h"

#ifdef CHOLMOD_MAIN_VERSION
/* CHOLMOD lower triangle (stype -1; an upper entry fails the test) => dense symmetric n x n (caller frees) */
static inline double* dense_of(const cholmod_sparse* A) {
  int n = (int)A->nrow;
  const int *Ap = A->p, *Ai = A->i;
  const double* Ax = A->x;
  cr_assert_eq(A->stype, -1);
  double* D = calloc((size_t)n * n, sizeof(double));
  for (int j = 0; j < n; j++)
    for (int q = Ap[j]; q < Ap[j + 1]; q++) {
      cr_assert_geq(Ai[q], j, "upper entry stored");
      D[(size_t)Ai[q] * n + j] = D[(size_t)j * n + Ai[q]] = Ax[q];
    }
  return D;
}
#endif

static inline double max_abs(const double* a, size_t n) {
  double m = 0;
  for (size_t k = 0; k < n; k++) m = fmax(m, fabs(a[k]));
  return m;
}

static inline double max_diff(const double* a, const double* b, size_t n) {
  double m = 0;
  for (size_t k = 0; k < n; k++) m = fmax(m, fabs(a[k] - b[k]));
  return m;
}

static inline int levi_civita(int i, int j, int k) { return (i - j) * (j - k) * (k - i) / 2; }

/* the EOS fluid Psi(J) = -kappa (J^(1-g) / (1-g) - J): its exact (unprojected) dP/dF
 * = Psi'' cof F (x) cof F + Psi' d2J/dF2 */
static inline void eos_exact_hessian(double kappa, double g, const double F[9], double H[81]) {
  double J = kn_mat3_det(F), c[9];
  double d1 = kappa * (1 - pow(J, -g)), d2 = kappa * g * pow(J, -g - 1);
  kn_mat3_cofactor(F, c);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 3; k++)
        for (int l = 0; l < 3; l++) {
          double h2 = 0;
          for (int m = 0; m < 3; m++)
            for (int n = 0; n < 3; n++) h2 += levi_civita(i, k, m) * levi_civita(j, l, n) * F[3 * m + n];
          H[9 * (3 * i + j) + 3 * k + l] = d2 * c[3 * i + j] * c[3 * k + l] + d1 * h2;
        }
}

#endif
