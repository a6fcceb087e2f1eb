/* sap/lowrank.c: H^-1 b from the factor of H_ref and the constraints whose G changed since, by the
 * Woodbury identity, against a Cholesky solve of H = H_ref + sum_i J_i^T (G_i - G_ref,i) J_i formed
 * explicitly. Random SPD H_ref (n 40, the small-factor layout, and n 150, LAPACK's), 3-row
 * constraints whose J rows touch 12 random DoFs each, SPD 3 x 3 G blocks; the changes include a
 * constraint that leaves (G -> 0: D indefinite), one that arrives (G_ref = 0) and one whose G
 * changes in place. The constraints join in two batches (W grows), as they do between Newton
 * iterations. The factor comes from sap/linear_solver.c, on its dense path (P = I) and on CHOLMOD's
 * (H_ref = P^T L L^T P with a fill-reducing P). Expected: the same x to 1e-10 relative (round-off:
 * cond(H) ~ 1e3 here). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "sap/sap_internal.h"
#include "sap_test_util.h"

enum { NCON = 6, ROWS = 3, TOUCH = 12, SLOT = KN_SAP_MAX_ROWS * KN_SAP_MAX_ROWS };

static unsigned long long rng_state;
static double urand(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

/* a random SPD 3 x 3 block (row-major, in a slot), scaled */
static void spd3(double* G, double scale) {
  double B[9];
  for (int k = 0; k < 9; k++) B[k] = urand() - 0.5;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double s = i == j ? 0.1 : 0.0;
      for (int k = 0; k < 3; k++) s += B[3 * i + k] * B[3 * j + k];
      G[3 * i + j] = scale * s;
    }
}

/* H += J_i^T D J_i with J_i (ROWS x n, row-major) */
static void add_JtDJ(double* H, int n, const double* J, const double* D) {
  for (int a = 0; a < ROWS; a++)
    for (int b = 0; b < ROWS; b++) {
      double d = D[a * ROWS + b];
      if (d == 0) continue;
      for (int p = 0; p < n; p++)
        if (J[a * n + p] != 0)
          for (int q = 0; q < n; q++) H[p * n + q] += J[a * n + p] * d * J[b * n + q];
    }
}

static void check(int n, int sparse) {
  rng_state = 42u + (unsigned)n;
  double* Href = calloc((size_t)n * n, sizeof(double));
  double* H = calloc((size_t)n * n, sizeof(double));
  double* L = calloc((size_t)n * n, sizeof(double));
  double* J = calloc((size_t)NCON * ROWS * n, sizeof(double));
  double* B = calloc((size_t)n * n, sizeof(double));
  double G[NCON * SLOT] = {0}, Gref[NCON * SLOT] = {0};
  /* H_ref = A + sum J^T G_ref J with A = B B^T / n + I */
  for (int k = 0; k < n * n; k++) B[k] = urand() - 0.5;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = i == j ? 1.0 : 0.0;
      for (int k = 0; k < n; k++) s += B[i * n + k] * B[j * n + k] / n;
      Href[i * n + j] = s;
    }
  for (int c = 0; c < NCON; c++)
    for (int r = 0; r < ROWS; r++)
      for (int t = 0; t < TOUCH; t++) J[(c * ROWS + r) * n + (int)(urand() * n)] = urand() - 0.5;
  /* constraint 0 leaves, 1 arrives, 2 changes, 3 and 5 stay, 4 changes */
  for (int c = 0; c < NCON; c++)
    if (c != 1) spd3(Gref + c * SLOT, 10.0);
  memcpy(G, Gref, sizeof G);
  memset(G + 0 * SLOT, 0, SLOT * sizeof(double));
  spd3(G + 1 * SLOT, 10.0);
  spd3(G + 2 * SLOT, 3.0);
  spd3(G + 4 * SLOT, 30.0);
  for (int c = 0; c < NCON; c++) add_JtDJ(Href, n, J + c * ROWS * n, Gref + c * SLOT);
  memcpy(H, Href, sizeof(double) * n * n);
  for (int c = 0; c < NCON; c++) {
    double D[9];
    for (int k = 0; k < 9; k++) D[k] = G[c * SLOT + k] - Gref[c * SLOT + k];
    add_JtDJ(H, n, J + c * ROWS * n, D);
  }
  memcpy(L, Href, sizeof(double) * n * n);
  kn_error err = {0};
  kn_sap_linsolve* ls = kn_sap_linsolve_create();
  int offset = 0, analysed = 0;
  kn_sap_layout lay = {.num_blocks = 1, .n = n, .size = &n, .offset = &offset};
  cr_assert_eq(kn_sap_linsolve_prepare(ls, &lay, sparse, &analysed, &err), KN_OK, "%s", err.msg);
  cr_expect_eq(analysed, sparse);
  double* diag[1] = {L};
  cr_assert_eq(kn_sap_linsolve_factor(ls, diag, NULL, &err), KN_OK, "%s", err.msg);

  kn_sap_lowrank* lr = kn_sap_lowrank_create();
  cr_assert_eq(kn_sap_lowrank_reset(lr, n, NCON, 12, &err), KN_OK);
  /* first batch: 0 and 2 (6 rows), factored and used; then 1 and 4 join (12 rows: the budget) */
  const int batch[2][2] = {{0, 2}, {1, 4}};
  double* b = malloc(sizeof(double) * n);
  double* x = malloc(sizeof(double) * n);
  for (int s = 0; s < 2; s++) {
    for (int m = 0; m < 2; m++) {
      int c = batch[s][m];
      double* cols = kn_sap_lowrank_add(lr, c, ROWS);
      cr_assert_not_null(cols);
      for (int r = 0; r < ROWS; r++) memcpy(cols + r * n, J + (c * ROWS + r) * n, sizeof(double) * n);
    }
    cr_assert_eq(kn_sap_lowrank_factor(lr, ls, G, Gref, SLOT, &err), KN_OK, "%s", err.msg);
  }
  cr_expect_eq(kn_sap_lowrank_rows(lr), 12);
  cr_expect_null(kn_sap_lowrank_add(lr, 3, ROWS), "past the budget of 12 rows");
  cr_expect(kn_sap_lowrank_has(lr, 4) && !kn_sap_lowrank_has(lr, 3));

  for (int t = 0; t < n; t++) b[t] = x[t] = urand() - 0.5;
  cr_assert_eq(kn_sap_lowrank_solve(lr, ls, G, Gref, SLOT, x, &err), KN_OK, "%s", err.msg);
  memcpy(L, H, sizeof(double) * n * n);
  cr_assert_eq(kn_chol_factor(L, n, &err), KN_OK, "%s", err.msg);
  kn_chol_solve(L, n, b, 1);
  double e = 0, m = 0;
  for (int t = 0; t < n; t++) e = fmax(e, fabs(x[t] - b[t])), m = fmax(m, fabs(b[t]));
  printf("lowrank n %d (%s): max |x - H^-1 b| %.3e of max |H^-1 b| %.3e\n", n, sparse ? "CHOLMOD" : "dense", e, m);
  cr_expect_lt(e, 1e-10 * m, "n %d: %g of %g", n, e, m);

  kn_sap_lowrank_free(lr);
  kn_sap_linsolve_free(ls);
  free(Href), free(H), free(L), free(J), free(B), free(b), free(x);
}

Test(sap_lowrank, woodbury_matches_the_refactored_solve) {
  check(40, 0);
  check(150, 0);
}

Test(sap_lowrank, woodbury_on_cholmods_permuted_factor) {
  check(40, 1);
  check(150, 1);
}
