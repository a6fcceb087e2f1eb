/* Kinematics: Jacobians and velocities against finite differences of the forward kinematics,
 * N(q) against the configuration update, frame poses. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "mb_test_models.h"

#define MAXV 32

/* central differences with h = 1e-6 along q (+) (+-h e_k): truncation O(h^2) ~ 1e-12, round-off
 * ~ 1e-16 / h ~ 1e-10, so 1e-6 has a wide margin yet catches any wrong column. */
static void check_jacobians(kn_mb_model* m, unsigned seed) {
  kn_mb_data* d = kn_mb_data_create(m);
  int nv = m->nv;
  double q[MAXV], qp[MAXV], qm[MAXV], e[MAXV], v[MAXV];
  double Jv[3 * MAXV], Jw[3 * MAXV];
  double maxv = 0, maxw = 0, maxpv = 0;
  for (int t = 0; t < 3; t++) {
    tm_random_q(m, &seed, q);
    for (int b = 0; b < m->nbody; b++) {
      double pb[3] = {0.1 * tm_rand(&seed), 0.1 * tm_rand(&seed), 0.1 * tm_rand(&seed)};
      kn_mb_kinematics(m, q, NULL, d);
      kn_mb_point_jacobian(m, d, b, pb, Jv, Jw);
      for (int k = 0; k < nv; k++) {
        double h = 1e-6, pp[3], pm[3], Rp[9], Rm[9];
        for (int i = 0; i < nv; i++) e[i] = (i == k);
        kn_mb_integrate(m, q, e, h, qp);
        kn_mb_integrate(m, q, e, -h, qm);
        kn_mb_kinematics(m, qp, NULL, d);
        kn_pose_apply(&d->X_wb[b], pb, pp);
        memcpy(Rp, d->X_wb[b].R, sizeof Rp);
        kn_mb_kinematics(m, qm, NULL, d);
        kn_pose_apply(&d->X_wb[b], pb, pm);
        memcpy(Rm, d->X_wb[b].R, sizeof Rm);
        /* omega: [w]x ~ (R+ R-^T - R- R+^T) / (4h) */
        double D[9];
        kn_mat3_mul(Rp, (double[9]){Rm[0], Rm[3], Rm[6], Rm[1], Rm[4], Rm[7], Rm[2], Rm[5], Rm[8]}, D);
        double w[3] = {(D[7] - D[5]) / (4 * h), (D[2] - D[6]) / (4 * h), (D[3] - D[1]) / (4 * h)};
        for (int a = 0; a < 3; a++) {
          maxv = fmax(maxv, fabs((pp[a] - pm[a]) / (2 * h) - Jv[a * nv + k]));
          maxw = fmax(maxw, fabs(w[a] - Jw[a * nv + k]));
        }
      }
      /* point velocity = [Jw; Jv] v */
      for (int i = 0; i < nv; i++) v[i] = tm_rand(&seed);
      kn_mb_kinematics(m, q, v, d);
      double Vw[6];
      kn_mb_point_velocity(m, d, b, pb, Vw);
      for (int a = 0; a < 3; a++) {
        double sw = 0, sv = 0;
        for (int i = 0; i < nv; i++) sw += Jw[a * nv + i] * v[i], sv += Jv[a * nv + i] * v[i];
        maxpv = fmax(maxpv, fmax(fabs(sw - Vw[a]), fabs(sv - Vw[3 + a])));
      }
    }
  }
  cr_log_info("%s: max |Jv - FD| = %.3e, max |Jw - FD| = %.3e, max |J v - point velocity| = %.3e\n", m->name, maxv,
              maxw, maxpv);
  cr_assert_lt(maxv, 1e-6);
  cr_assert_lt(maxw, 1e-6);
  cr_assert_lt(maxpv, 1e-12);
  kn_mb_data_free(d);
}

Test(kinematics, iiwa_jacobians) {
  kn_mb_model* m = tm_iiwa14();
  check_jacobians(m, 1);
  kn_mb_model_free(m);
}

Test(kinematics, tree_jacobians) {
  kn_mb_model* m = tm_tree();
  check_jacobians(m, 2);
  kn_mb_model_free(m);
}

/* q_dot = N(q) v equals the derivative of q (+) t v at t = 0 (central difference, 1e-8) */
Test(kinematics, qdot_is_integrate_derivative) {
  kn_mb_model* m = tm_tree();
  unsigned seed = 3;
  double q[MAXV], v[MAXV], qd[MAXV], qp[MAXV], qm[MAXV], maxerr = 0;
  tm_random_q(m, &seed, q);
  for (int i = 0; i < m->nv; i++) v[i] = 2 * tm_rand(&seed);
  kn_mb_qdot(m, q, v, qd);
  double h = 1e-6;
  kn_mb_integrate(m, q, v, h, qp);
  kn_mb_integrate(m, q, v, -h, qm);
  for (int i = 0; i < m->nq; i++) maxerr = fmax(maxerr, fabs((qp[i] - qm[i]) / (2 * h) - qd[i]));
  cr_log_info("max |N(q) v - d/dt (q + t v)| = %.3e\n", maxerr);
  cr_assert_lt(maxerr, 1e-8);
  kn_mb_model_free(m);
}

/* The planar update is the SE(2) exponential: with a body-frame velocity (vx, 0, omega) held
 * constant the body runs on a circle of radius vx / omega; after a quarter turn from theta = 0
 * it sits at (r, r) (analytic). Floating: spinning about z with body velocity (v, 0, 0) gives the
 * same circle; the quaternion stays unit. */
Test(kinematics, integrate_exact_groups) {
  kn_mb_model* m = kn_mb_model_create("groups");
  kn_mb_body b = tm_body("cart", -1, "plane", KN_JOINT_PLANAR, 1);
  tm_add(m, &b);
  kn_mb_model* f = kn_mb_model_create("free");
  b = tm_body("ball", -1, "free", KN_JOINT_FLOATING, 1);
  tm_add(f, &b);
  cr_assert_float_eq(m->bodies[0].planar_basis[0], 1, 0);
  cr_assert_float_eq(m->bodies[0].planar_basis[4], 1, 0);
  double q[3] = {0, 0, 0}, v[3] = {2.0, 0, 0.5};
  for (int k = 0; k < 10; k++) kn_mb_integrate(m, q, v, TEST_PI / 2 / 0.5 / 10, q);
  double r = 2.0 / 0.5;
  cr_assert_float_eq(q[0], r, 1e-12);
  cr_assert_float_eq(q[1], r, 1e-12);
  cr_assert_float_eq(q[2], TEST_PI / 2, 1e-12);
  double qf[7], vf[6] = {0, 0, 0.5, 2.0, 0, 0};
  kn_mb_neutral_q(f, qf);
  cr_assert_float_eq(qf[3], 1, 0);
  for (int k = 0; k < 10; k++) kn_mb_integrate(f, qf, vf, TEST_PI / 2 / 0.5 / 10, qf);
  cr_assert_float_eq(qf[0], r, 1e-12);
  cr_assert_float_eq(qf[1], r, 1e-12);
  cr_assert_float_eq(qf[2], 0, 1e-12);
  cr_assert_float_eq(qf[3], cos(TEST_PI / 4), 1e-12);
  cr_assert_float_eq(qf[6], sin(TEST_PI / 4), 1e-12);
  kn_mb_model_free(m);
  kn_mb_model_free(f);
}

/* frame pose = X_wb X_bf; the iiwa at q = 0 stands straight up: the flange (link 7 origin) is at
 * z = 0.1575 + 0.2025 + 0.2045 + 0.2155 + 0.1845 + 0.2155 + 0.081 = 1.261 m (sum of the offsets) */
Test(kinematics, iiwa_upright_height) {
  kn_mb_model* m = tm_iiwa14();
  kn_mb_data* d = kn_mb_data_create(m);
  double q[7] = {0};
  kn_mb_kinematics(m, q, NULL, d);
  kn_pose Xbf, Xwf;
  kn_pose_identity(&Xbf);
  Xbf.p[2] = 0.045;
  kn_mb_frame_pose(m, d, 7, &Xbf, &Xwf);
  cr_assert_float_eq(Xwf.p[0], 0, 1e-12);
  cr_assert_float_eq(Xwf.p[1], 0, 1e-12);
  cr_assert_float_eq(Xwf.p[2], 1.261 + 0.045, 1e-12);
  kn_mb_data_free(d);
  kn_mb_model_free(m);
}
