/* Materials and linear-tet element quantities: energy, force and stiffness against central finite
 * differences, invariances, rest state, PSD projection, parameter validation. */
#include <criterion/criterion.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "deformable/deformable.h"

static const kn_fem_model models[4] = {KN_FEM_LINEAR, KN_FEM_LINEAR_COROTATED, KN_FEM_COROTATED, KN_FEM_NEOHOOKEAN};
static const char* names[4] = {"linear", "linear corotated", "corotated", "neo-Hookean"};

static unsigned long long rng = 88172645463325252ull;
static double urand(void) { /* xorshift64, uniform in [-1, 1) */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static void random_rotation(double R[9]) {
  double axis[3] = {urand(), urand(), urand()}, n = kn_vec3_norm(axis);
  for (int k = 0; k < 3; k++) axis[k] /= n;
  kn_mat3_from_axis_angle(axis, 3.0 * urand(), R);
}

/* rotation * (stretch + shear): det > 0, |F - Q| = O(0.3) */
static void random_F(double F[9]) {
  double Q[9], S[9];
  random_rotation(Q);
  for (int k = 0; k < 9; k++) S[k] = (k % 4 == 0 ? 1.0 : 0.0) + 0.3 * urand();
  kn_mat3_mul(Q, S, F);
}

static double max_abs(const double* a, int n) {
  double m = 0;
  for (int k = 0; k < n; k++) m = fmax(m, fabs(a[k]));
  return m;
}

static const double Xrest[12] = {0.1, -0.05, 0.02, 1.1, 0.1, -0.1, 0.2, 0.9, 0.05, -0.1, 0.15, 1.05};

Test(material, element_fd_force_and_stiffness) {
  double mu, lambda;
  kn_fem_lame(1.0, 0.3, &mu, &lambda);
  double Dm_inv[9], V;
  cr_assert_eq(kn_fem_element_rest(Xrest, Dm_inv, &V, NULL), KN_OK);
  for (int mi = 0; mi < 4; mi++) {
    double worst_f = 0, worst_K = 0;
    for (int trial = 0; trial < 5; trial++) {
      double F[9], R0[9], x[12];
      random_F(F);
      random_rotation(R0);
      for (int v = 0; v < 4; v++) {
        double d[3] = {Xrest[3 * v] - Xrest[0], Xrest[3 * v + 1] - Xrest[1], Xrest[3 * v + 2] - Xrest[2]}, y[3];
        kn_mat3_vec(F, d, y);
        for (int k = 0; k < 3; k++) x[3 * v + k] = 0.3 * k + y[k];
      }
      double f[12], K[144], fd_f[12], fd_K[144];
      kn_fem_element_eval(models[mi], mu, lambda, x, Dm_inv, V, R0, f, K, 0);
      const double h = 1e-5;
      for (int c = 0; c < 12; c++) {
        double xp[12], xm[12], fp[12], fm[12];
        memcpy(xp, x, sizeof xp);
        memcpy(xm, x, sizeof xm);
        xp[c] += h;
        xm[c] -= h;
        double Ep = kn_fem_element_eval(models[mi], mu, lambda, xp, Dm_inv, V, R0, fp, NULL, 0);
        double Em = kn_fem_element_eval(models[mi], mu, lambda, xm, Dm_inv, V, R0, fm, NULL, 0);
        fd_f[c] = -(Ep - Em) / (2 * h);
        for (int r = 0; r < 12; r++) fd_K[12 * r + c] = -(fp[r] - fm[r]) / (2 * h);
      }
      double ef = 0, eK = 0;
      for (int k = 0; k < 12; k++) ef = fmax(ef, fabs(f[k] - fd_f[k]));
      for (int k = 0; k < 144; k++) eK = fmax(eK, fabs(K[k] - fd_K[k]));
      ef /= max_abs(f, 12);
      eK /= max_abs(K, 144);
      worst_f = fmax(worst_f, ef);
      worst_K = fmax(worst_K, eK);
    }
    printf("%-17s FD rel error: force %.2e, stiffness %.2e\n", names[mi], worst_f, worst_K);
    cr_assert_lt(worst_f, 1e-6, "%s force vs FD: %g", names[mi], worst_f);
    cr_assert_lt(worst_K, 1e-6, "%s stiffness vs FD: %g", names[mi], worst_K);
  }
}

Test(material, stress_derivative_fd) {
  double mu = 2.0, lambda = 3.0;
  for (int mi = 0; mi < 4; mi++) {
    double F[9], R0[9], P[9], dPdF[81], worst = 0, worstP = 0;
    random_F(F);
    random_rotation(R0);
    kn_fem_energy_density(models[mi], mu, lambda, F, R0, P, dPdF, 0);
    const double h = 1e-5;
    for (int ab = 0; ab < 9; ab++) {
      double Fp[9], Fm[9], Pp[9], Pm[9];
      memcpy(Fp, F, sizeof Fp);
      memcpy(Fm, F, sizeof Fm);
      Fp[ab] += h;
      Fm[ab] -= h;
      double ep = kn_fem_energy_density(models[mi], mu, lambda, Fp, R0, Pp, NULL, 0);
      double em = kn_fem_energy_density(models[mi], mu, lambda, Fm, R0, Pm, NULL, 0);
      worstP = fmax(worstP, fabs((ep - em) / (2 * h) - P[ab]) / max_abs(P, 9));
      for (int ij = 0; ij < 9; ij++) worst = fmax(worst, fabs((Pp[ij] - Pm[ij]) / (2 * h) - dPdF[9 * ij + ab]) / max_abs(dPdF, 81));
    }
    printf("%-17s FD rel error: P %.2e, dP/dF %.2e\n", names[mi], worstP, worst);
    cr_assert_lt(worstP, 1e-6);
    cr_assert_lt(worst, 1e-6);
  }
}

Test(material, rotation_invariance) {
  for (int mi = 2; mi < 4; mi++)
    for (int trial = 0; trial < 10; trial++) {
      double F[9], Q[9], QF[9];
      random_F(F);
      random_rotation(Q);
      kn_mat3_mul(Q, F, QF);
      double a = kn_fem_energy_density(models[mi], 1.0, 1.5, F, NULL, NULL, NULL, 0);
      double b = kn_fem_energy_density(models[mi], 1.0, 1.5, QF, NULL, NULL, NULL, 0);
      cr_assert_lt(fabs(a - b), 1e-12 * fmax(1.0, fabs(a)), "%s: Psi(QF) %.17g vs Psi(F) %.17g", names[mi], b, a);
    }
}

Test(material, zero_energy_and_force_at_rest) {
  double Dm_inv[9], V;
  kn_fem_element_rest(Xrest, Dm_inv, &V, NULL);
  double Q[9];
  random_rotation(Q);
  for (int mi = 0; mi < 4; mi++) {
    /* rest shape, and for the rotation-aware models the rest shape rotated by Q (with R0 = Q) */
    for (int rotated = 0; rotated < (mi == 0 ? 1 : 2); rotated++) {
      double x[12], f[12];
      for (int v = 0; v < 4; v++) {
        if (rotated) kn_mat3_vec(Q, Xrest + 3 * v, x + 3 * v);
        else memcpy(x + 3 * v, Xrest + 3 * v, 3 * sizeof(double));
      }
      double E = kn_fem_element_eval(models[mi], 1e6, 2e6, x, Dm_inv, V, rotated ? Q : NULL, f, NULL, 0);
      cr_assert_lt(fabs(E), 1e-9, "%s rotated=%d: rest energy %g", names[mi], rotated, E);
      cr_assert_lt(max_abs(f, 12), 1e-8, "%s rotated=%d: rest force %g", names[mi], rotated, max_abs(f, 12));
    }
  }
}

static double min_eig(const double* A, int n, double* sym_err) {
  double S[144], w[12];
  memcpy(S, A, (size_t)(n * n) * sizeof(double));
  *sym_err = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) *sym_err = fmax(*sym_err, fabs(A[i * n + j] - A[j * n + i]));
  LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', n, S, n, w);
  return w[0];
}

Test(material, psd_projection) {
  /* a strongly compressed, sheared F where both nonconvex models are indefinite */
  double F[9] = {0.3, 0.4, 0.0, -0.2, 0.5, 0.1, 0.0, 0.2, 0.25};
  double Dm_inv[9], V;
  kn_fem_element_rest(Xrest, Dm_inv, &V, NULL);
  double x[12];
  for (int v = 0; v < 4; v++) kn_mat3_vec(F, Xrest + 3 * v, x + 3 * v);
  for (int mi = 2; mi < 4; mi++) {
    double d_raw[81], d_psd[81], K[144], s1, s2, s3;
    kn_fem_energy_density(models[mi], 1.0, 4.0, F, NULL, NULL, d_raw, 0);
    kn_fem_energy_density(models[mi], 1.0, 4.0, F, NULL, NULL, d_psd, 1);
    double raw = min_eig(d_raw, 9, &s1), psd = min_eig(d_psd, 9, &s2);
    kn_fem_element_eval(models[mi], 1.0, 4.0, x, Dm_inv, V, NULL, NULL, K, 1);
    double k12 = min_eig(K, 12, &s3);
    printf("%-17s min eig dP/dF raw %.3g, projected %.3g; element K projected %.3g\n", names[mi], raw, psd, k12);
    cr_assert_lt(raw, -1e-3, "%s: expected an indefinite raw Hessian", names[mi]);
    cr_assert_geq(psd, -1e-12 * max_abs(d_psd, 81));
    cr_assert_geq(k12, -1e-12 * max_abs(K, 144));
    cr_assert_lt(s2, 1e-14 * max_abs(d_psd, 81));
    cr_assert_lt(s3, 1e-12 * max_abs(K, 144));
  }
}

Test(material, linear_corotated_identity_is_linear) {
  double F[9], Pl[9], Pc[9], dl[81], dc[81];
  for (int k = 0; k < 9; k++) F[k] = (k % 4 == 0) + 1e-3 * urand();
  double el = kn_fem_energy_density(KN_FEM_LINEAR, 3.0, 5.0, F, NULL, Pl, dl, 0);
  double ec = kn_fem_energy_density(KN_FEM_LINEAR_COROTATED, 3.0, 5.0, F, NULL, Pc, dc, 0);
  cr_assert_lt(fabs(el - ec), 1e-15 + 1e-12 * el);
  for (int k = 0; k < 9; k++) cr_assert_lt(fabs(Pl[k] - Pc[k]), 1e-14);
  for (int k = 0; k < 81; k++) cr_assert_lt(fabs(dl[k] - dc[k]), 1e-14);
  /* and the corotated and neo-Hookean models agree with it to first order: P differs by O(strain^2) */
  for (int mi = 2; mi < 4; mi++) {
    double P[9];
    kn_fem_energy_density(models[mi], 3.0, 5.0, F, NULL, P, NULL, 0);
    double d = 0;
    for (int k = 0; k < 9; k++) d = fmax(d, fabs(P[k] - Pl[k]));
    cr_assert_lt(d, 0.05 * max_abs(Pl, 9), "%s vs linear at small strain: %g", names[mi], d);
  }
}

Test(material, bad_parameters_name_the_parameter) {
  kn_error err;
  kn_fem_material m = kn_fem_material_default();
  cr_assert_eq(kn_fem_material_validate(&m, "jelly", &err), KN_OK);
  m.poisson_ratio = 0.5;
  cr_assert_eq(kn_fem_material_validate(&m, "jelly", &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "jelly") && strstr(err.msg, "poisson_ratio = 0.5"), "%s", err.msg);
  m.poisson_ratio = -1.0;
  cr_assert_eq(kn_fem_material_validate(&m, "jelly", &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "poisson_ratio = -1"), "%s", err.msg);
  m = kn_fem_material_default();
  m.youngs_modulus = 0;
  cr_assert_eq(kn_fem_material_validate(&m, "jelly", &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "youngs_modulus = 0"), "%s", err.msg);
  m = kn_fem_material_default();
  m.density = -3;
  cr_assert_eq(kn_fem_material_validate(&m, "jelly", &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "density = -3"), "%s", err.msg);
  m = kn_fem_material_default();
  m.youngs_modulus = NAN;
  cr_assert_eq(kn_fem_material_validate(&m, "jelly", &err), KN_ERR_INVALID);
  /* an inverted rest tet */
  double Xbad[12];
  memcpy(Xbad, Xrest, sizeof Xbad);
  Xbad[9] = Xrest[6], Xbad[10] = Xrest[7], Xbad[11] = Xrest[8];
  Xbad[6] = Xrest[9], Xbad[7] = Xrest[10], Xbad[8] = Xrest[11];
  double D[9], V;
  cr_assert_eq(kn_fem_element_rest(Xbad, D, &V, &err), KN_ERR_INVALID);
  /* Lame parameters: E = 1, nu = 0.25 gives mu = 0.4, lambda = 0.4 */
  double mu, lambda;
  kn_fem_lame(1.0, 0.25, &mu, &lambda);
  cr_assert_float_eq(mu, 0.4, 1e-15);
  cr_assert_float_eq(lambda, 0.4, 1e-15);
}

/* R of F = R S against LAPACK's SVD, R = U diag(1, 1, det(U V^T)) V^T (the definition
 * kn_fem_polar_rotation documents), over random F of five kinds: stretched and sheared rotations,
 * near-rotations (|F - Q| ~ 1e-9, clustered singular values), inverted (det F < 0), a repeated
 * singular value (Q diag(2, 2, 1)), and rank-deficient (one column 0). Always: R^T R = I and
 * det R = 1 to 1e-14, R^T F symmetric to 1e-13 |F|. Where the singular values are apart by 1e-3
 * (the first and third kinds), R equals LAPACK's to 1e-10. */
static void lapack_polar(const double F[9], double R[9]) {
  double A[9], s[3], U[9], Vt[9], superb[2];
  memcpy(A, F, sizeof A);
  cr_assert_eq(LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'A', 'A', 3, 3, A, 3, s, U, 3, Vt, 3, superb), 0);
  double d = kn_mat3_det(U) * kn_mat3_det(Vt) < 0 ? -1.0 : 1.0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      R[3 * i + j] = U[3 * i + 0] * Vt[j] + U[3 * i + 1] * Vt[3 + j] + d * U[3 * i + 2] * Vt[6 + j];
}

Test(material, polar_rotation) {
  double worst_orth = 0, worst_sym = 0, worst_lapack = 0;
  for (int kind = 0; kind < 5; kind++)
    for (int trial = 0; trial < 200; trial++) {
      double F[9], Q[9], D[9] = {0};
      random_rotation(Q);
      if (kind == 0 || kind == 2) {
        random_F(F);
        if (kind == 2)
          for (int i = 0; i < 3; i++) F[3 * i] = -F[3 * i]; /* det < 0 */
      } else if (kind == 1) {
        for (int k = 0; k < 9; k++) F[k] = Q[k] + 1e-9 * urand();
      } else {
        D[0] = 2, D[4] = kind == 3 ? 2 : 1.5, D[8] = kind == 3 ? 1 : 0;
        kn_mat3_mul(Q, D, F);
      }
      double R[9], RtR[9], S[9], fn = 0;
      kn_fem_polar_rotation(F, R);
      kn_mat3_mulT(R, R, RtR);
      kn_mat3_mulT(R, F, S);
      for (int k = 0; k < 9; k++) {
        worst_orth = fmax(worst_orth, fabs(RtR[k] - (k % 4 == 0)));
        fn = fmax(fn, fabs(F[k]));
      }
      worst_orth = fmax(worst_orth, fabs(kn_mat3_det(R) - 1));
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) worst_sym = fmax(worst_sym, fabs(S[3 * i + j] - S[3 * j + i]) / fn);
      if (kind == 0 || kind == 2) {
        /* singular values apart: R is unique, LAPACK's must agree (skip the rare close draw) */
        double A[9], s[3], U[9], Vt[9], superb[2];
        memcpy(A, F, sizeof A);
        LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'N', 'N', 3, 3, A, 3, s, U, 3, Vt, 3, superb);
        if (s[0] - s[1] < 1e-3 || s[1] - s[2] < 1e-3) continue;
        double RL[9];
        lapack_polar(F, RL);
        for (int k = 0; k < 9; k++) worst_lapack = fmax(worst_lapack, fabs(R[k] - RL[k]));
      }
    }
  printf("polar: |R^T R - I|, |det R - 1| %.2e; |S - S^T| / |F| %.2e; |R - R_lapack| %.2e\n", worst_orth, worst_sym,
         worst_lapack);
  cr_expect_lt(worst_orth, 1e-14);
  cr_expect_lt(worst_sym, 1e-13);
  cr_expect_lt(worst_lapack, 1e-10);
}
