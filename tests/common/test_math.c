/* common/: rotations, poses and the state hash. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

Test(common, rpy_matches_quaternion_round_trip) {
  double rpy[3] = {0.3, -0.7, 1.9}, R[9], q[4], R2[9];
  kn_mat3_from_rpy(rpy, R);
  kn_quat_from_mat3(R, q);
  kn_mat3_from_quat(q, R2);
  for (int k = 0; k < 9; k++) cr_assert_float_eq(R[k], R2[k], 1e-14);
  /* R = Rz Ry Rx: the third row is (-sin p, cos p sin r, cos p cos r) */
  cr_assert_float_eq(R[6], -sin(-0.7), 1e-15);
  cr_assert_float_eq(R[7], cos(-0.7) * sin(0.3), 1e-15);
}

Test(common, pose_inverse_composes_to_identity) {
  kn_pose X, Xi, I;
  double xyz[3] = {1, -2, 0.5}, rpy[3] = {0.1, 0.2, 0.3};
  kn_pose_from_xyz_rpy(xyz, rpy, &X);
  kn_pose_inv(&X, &Xi);
  kn_pose_mul(&X, &Xi, &I);
  for (int k = 0; k < 9; k++) cr_assert_float_eq(I.R[k], (k % 4 == 0) ? 1.0 : 0.0, 1e-15);
  for (int k = 0; k < 3; k++) cr_assert_float_eq(I.p[k], 0.0, 1e-15);
}

Test(common, hash_folds_negative_zero_and_sees_one_bit) {
  double a[2] = {0.0, 1.0}, b[2] = {-0.0, 1.0}, c[2] = {0.0, nextafter(1.0, 2.0)};
  uint64_t ha = kn_hash_doubles(KN_HASH_SEED, a, 2);
  cr_assert_eq(ha, kn_hash_doubles(KN_HASH_SEED, b, 2));
  cr_assert_neq(ha, kn_hash_doubles(KN_HASH_SEED, c, 2));
}

Test(common, cholesky_solves_spd_system) {
  double A[9] = {4, 2, 0.4, 2, 5, 1, 0.4, 1, 3}, b[3] = {1, 2, 3}, L[9];
  for (int k = 0; k < 9; k++) L[k] = A[k];
  kn_error err = {0};
  cr_assert_eq(kn_chol_factor(L, 3, &err), KN_OK);
  kn_chol_solve(L, 3, b, 1);
  double r[3];
  kn_mat3_vec(A, b, r);
  cr_assert_float_eq(r[0], 1, 1e-13);
  cr_assert_float_eq(r[1], 2, 1e-13);
  cr_assert_float_eq(r[2], 3, 1e-13);
  double N[4] = {1, 2, 2, 1};
  cr_assert_eq(kn_chol_factor(N, 2, &err), KN_ERR_NUMERIC);
  cr_assert(strstr(err.msg, "not positive definite") != NULL);
}

/* The small-matrix loop and LAPACKE (n > 48) solve the same SPD systems: residual to round-off,
 * for sizes on both sides of the switch, with several right-hand sides. */
Test(common, cholesky_small_and_lapack_paths_agree_with_residual) {
  const int sizes[] = {1, 7, 48, 49, 80};
  for (int s = 0; s < 5; s++) {
    int n = sizes[s], nrhs = 3;
    double *A = malloc(sizeof(double) * (size_t)(n * n)), *L = malloc(sizeof(double) * (size_t)(n * n));
    double *b = malloc(sizeof(double) * (size_t)(n * nrhs)), *x = malloc(sizeof(double) * (size_t)(n * nrhs));
    /* A = B B^T + n I with a deterministic B */
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double acc = (i == j) ? n : 0;
        for (int k = 0; k < n; k++) acc += sin(1.0 + i * 0.7 + k * 1.3) * sin(1.0 + j * 0.7 + k * 1.3);
        A[i * n + j] = L[i * n + j] = acc;
      }
    for (int i = 0; i < n * nrhs; i++) b[i] = x[i] = cos(0.3 * i);
    kn_error err = {0};
    cr_assert_eq(kn_chol_factor(L, n, &err), KN_OK, "n=%d: %s", n, err.msg);
    kn_chol_solve(L, n, x, nrhs);
    double worst = 0;
    for (int i = 0; i < n; i++)
      for (int r = 0; r < nrhs; r++) {
        double acc = 0;
        for (int k = 0; k < n; k++) acc += A[i * n + k] * x[k * nrhs + r];
        worst = fmax(worst, fabs(acc - b[i * nrhs + r]));
      }
    cr_assert_lt(worst, 1e-10 * n, "n=%d residual %g", n, worst);
    free(A), free(L), free(b), free(x);
  }
}
