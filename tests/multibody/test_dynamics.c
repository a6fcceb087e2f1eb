/* CRBA, RNEA and ABA checked against one another and against the energies they derive from. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "mb_test_models.h"

#define MAXV 32

static double kinetic_at(const kn_mb_model* m, kn_mb_data* d, const double* q, const double* v) {
  kn_mb_kinematics(m, q, v, d);
  return kn_mb_kinetic_energy(m, d);
}

static double max_abs(const double* x, int n) {
  double r = 0;
  for (int i = 0; i < n; i++) r = fmax(r, fabs(x[i]));
  return r;
}

/* M is symmetric positive definite and equals the Hessian of 1/2 v^T M v (central differences
 * of a quadratic are exact up to round-off: tolerance 1e-7 relative to max |M|); M also equals
 * d tau / d qdd from RNEA (linear in qdd: one-sided differences with step 1 are exact). */
static void check_mass_matrix(kn_mb_model* m, unsigned seed) {
  kn_mb_data* d = kn_mb_data_create(m);
  int nv = m->nv;
  double q[MAXV], v[MAXV], M[MAXV * MAXV], L[MAXV * MAXV];
  tm_random_q(m, &seed, q);
  for (int i = 0; i < nv; i++) v[i] = tm_rand(&seed);
  kn_mb_kinematics(m, q, v, d);
  kn_mb_mass_matrix(m, d, M);
  double Mmax = max_abs(M, nv * nv);
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) cr_assert_float_eq(M[i * nv + j], M[j * nv + i], 1e-14 * Mmax, "M symmetric");
  memcpy(L, M, sizeof(double) * (size_t)(nv * nv));
  kn_error err = {0};
  cr_assert_eq(kn_chol_factor(L, nv, &err), KN_OK, "M positive definite: %s", err.msg);

  /* Hessian of kinetic energy: H_ij = (T(e_i+e_j) - T(e_i-e_j) - T(-e_i+e_j) + T(-e_i-e_j)) / 4h^2 at v */
  double h = 0.5, maxerr = 0;
  double vp[MAXV];
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) {
      double s[4], si[4] = {1, 1, -1, -1}, sj[4] = {1, -1, 1, -1};
      for (int c = 0; c < 4; c++) {
        memcpy(vp, v, sizeof(double) * (size_t)nv);
        vp[i] += si[c] * h;
        vp[j] += sj[c] * h;
        s[c] = kinetic_at(m, d, q, vp);
      }
      double H = (s[0] - s[1] - s[2] + s[3]) / (4 * h * h);
      maxerr = fmax(maxerr, fabs(H - M[i * nv + j]));
    }
  cr_log_info("%s: max |M - d2T/dv2| = %.3e (max |M| %.3e)\n", m->name, maxerr, Mmax);
  cr_assert_lt(maxerr, 1e-9 * Mmax, "M equals the kinetic-energy Hessian");

  /* M = d tau / d qdd */
  kn_mb_kinematics(m, q, v, d);
  double tau0[MAXV], tau1[MAXV], qdd[MAXV];
  kn_mb_inverse_dynamics(m, d, NULL, tau0);
  maxerr = 0;
  for (int j = 0; j < nv; j++) {
    for (int i = 0; i < nv; i++) qdd[i] = (i == j);
    kn_mb_inverse_dynamics(m, d, qdd, tau1);
    for (int i = 0; i < nv; i++) maxerr = fmax(maxerr, fabs(tau1[i] - tau0[i] - M[i * nv + j]));
  }
  cr_log_info("%s: max |M - dtau/dqdd| = %.3e\n", m->name, maxerr);
  cr_assert_lt(maxerr, 1e-12 * fmax(1, Mmax) * 100, "M equals dtau/dqdd");
  kn_mb_data_free(d);
}

/* RNEA(q, v, ABA(q, v, tau)) = tau, and ABA agrees with solving M qdd = tau - (C v - g), 1e-10 */
static void check_forward_inverse(kn_mb_model* m, unsigned seed, int trials) {
  kn_mb_data* d = kn_mb_data_create(m);
  int nv = m->nv;
  double q[MAXV], v[MAXV], tau[MAXV], qdd[MAXV], tau2[MAXV], bias[MAXV], M[MAXV * MAXV], x[MAXV];
  double e1 = 0, e2 = 0;
  for (int t = 0; t < trials; t++) {
    tm_random_q(m, &seed, q);
    for (int i = 0; i < nv; i++) v[i] = 2 * tm_rand(&seed), tau[i] = 5 * tm_rand(&seed);
    kn_mb_kinematics(m, q, v, d);
    kn_mb_forward_dynamics(m, d, tau, qdd);
    kn_mb_inverse_dynamics(m, d, qdd, tau2);
    for (int i = 0; i < nv; i++) e1 = fmax(e1, fabs(tau2[i] - tau[i]));
    kn_mb_inverse_dynamics(m, d, NULL, bias);
    kn_mb_mass_matrix(m, d, M);
    for (int i = 0; i < nv; i++) x[i] = tau[i] - bias[i];
    kn_error err = {0};
    cr_assert_eq(kn_chol_factor(M, nv, &err), KN_OK);
    kn_chol_solve(M, nv, x, 1);
    for (int i = 0; i < nv; i++) e2 = fmax(e2, fabs(x[i] - qdd[i]) / fmax(1, fabs(qdd[i])));
  }
  cr_log_info("%s: max |RNEA(ABA(tau)) - tau| = %.3e, max |qdd_ABA - qdd_CRBA| (rel) = %.3e\n", m->name, e1, e2);
  cr_assert_lt(e1, 1e-10);
  cr_assert_lt(e2, 1e-10);
  kn_mb_data_free(d);
}

Test(dynamics, iiwa_mass_matrix) {
  kn_mb_model* m = tm_iiwa14();
  cr_assert_eq(m->nv, 7);
  check_mass_matrix(m, 11);
  kn_mb_model_free(m);
}

Test(dynamics, tree_mass_matrix) {
  kn_mb_model* m = tm_tree();
  cr_assert_eq(m->nv, 6 + 1 + 1 + 3 + 1);
  cr_assert_eq(m->nq, 7 + 1 + 1 + 3 + 1);
  check_mass_matrix(m, 12);
  kn_mb_model_free(m);
}

Test(dynamics, iiwa_forward_inverse) {
  kn_mb_model* m = tm_iiwa14();
  check_forward_inverse(m, 21, 20);
  kn_mb_model_free(m);
}

Test(dynamics, tree_forward_inverse) {
  kn_mb_model* m = tm_tree();
  check_forward_inverse(m, 22, 20);
  kn_mb_model_free(m);
}

/* Gravity torques equal dV/dq (central differences, h = 1e-6: truncation O(h^2 V''') ~ 1e-11,
 * round-off ~ 1e-16 |V| / h ~ 1e-9), at several configurations, to 1e-6. */
Test(dynamics, iiwa_gravity_is_potential_gradient) {
  kn_mb_model* m = tm_iiwa14();
  kn_mb_data* d = kn_mb_data_create(m);
  unsigned seed = 5;
  double q[7], tg[7], qp[7], maxerr = 0;
  for (int t = 0; t < 5; t++) {
    tm_random_q(m, &seed, q);
    for (int i = 0; i < 7; i++) q[i] *= 2;
    kn_mb_kinematics(m, q, NULL, d);
    kn_mb_gravity_torques(m, d, tg);
    for (int i = 0; i < 7; i++) {
      double h = 1e-6, Vp, Vm;
      memcpy(qp, q, sizeof q);
      qp[i] += h;
      kn_mb_kinematics(m, qp, NULL, d);
      Vp = kn_mb_potential_energy(m, d);
      qp[i] -= 2 * h;
      kn_mb_kinematics(m, qp, NULL, d);
      Vm = kn_mb_potential_energy(m, d);
      maxerr = fmax(maxerr, fabs((Vp - Vm) / (2 * h) - tg[i]));
    }
  }
  cr_log_info("iiwa14: max |tau_g - dV/dq| = %.3e\n", maxerr);
  cr_assert_lt(maxerr, 1e-6);
  /* at q = 0 the arm is upright: joint 1 and all axes-vertical joints carry no gravity torque */
  memset(q, 0, sizeof q);
  kn_mb_kinematics(m, q, NULL, d);
  kn_mb_gravity_torques(m, d, tg);
  cr_assert_float_eq(tg[0], 0, 1e-12);
  kn_mb_data_free(d);
  kn_mb_model_free(m);
}

/* Gravity torque of a point-mass pendulum is m g l sin(theta) (analytic). */
Test(dynamics, pendulum_gravity_analytic) {
  kn_mb_model* m = tm_pendulum(0.8, 2.0);
  kn_mb_data* d = kn_mb_data_create(m);
  double q = 0.7, tg, qdd, tau = 0;
  kn_mb_kinematics(m, &q, NULL, d);
  kn_mb_gravity_torques(m, d, &tg);
  /* rotation +q about y moves the bob (0, 0, -l) towards -x; gravity pulls it back: tau_g = m g l sin q */
  cr_assert_float_eq(tg, 2.0 * 9.81 * 0.8 * sin(0.7), 1e-12);
  kn_mb_forward_dynamics(m, d, &tau, &qdd);
  cr_assert_float_eq(qdd, -9.81 / 0.8 * sin(0.7), 1e-12);
  double M;
  kn_mb_mass_matrix(m, d, &M);
  cr_assert_float_eq(M, 2.0 * 0.64, 1e-14);
  kn_mb_data_free(d);
  kn_mb_model_free(m);
}

/* An independent check of the velocity-product terms: along any motion, dT/dt = v^T (tau - tau_g)
 * (power balance, valid in any velocity coordinates). The derivative is a central difference
 * along q(t +- h) = q (+) (+-h v), v(t +- h) = v +- h qdd with qdd from ABA; the O(h^2) path
 * error is even in h and cancels, so the residual is O(h^2) ~ 1e-10 relative. */
static void check_power_balance(kn_mb_model* m, unsigned seed) {
  kn_mb_data* d = kn_mb_data_create(m);
  int nv = m->nv;
  double q[MAXV], v[MAXV], tau[MAXV], qdd[MAXV], tg[MAXV], qh[MAXV], vh[MAXV];
  double maxrel = 0;
  for (int t = 0; t < 5; t++) {
    tm_random_q(m, &seed, q);
    for (int i = 0; i < nv; i++) v[i] = 2 * tm_rand(&seed), tau[i] = 3 * tm_rand(&seed);
    kn_mb_kinematics(m, q, v, d);
    kn_mb_forward_dynamics(m, d, tau, qdd);
    kn_mb_gravity_torques(m, d, tg);
    double power = 0, scale = 0;
    for (int i = 0; i < nv; i++) power += v[i] * (tau[i] - tg[i]), scale += fabs(v[i] * (tau[i] - tg[i]));
    double h = 1e-5, T[2];
    for (int s = 0; s < 2; s++) {
      double hs = s == 0 ? h : -h;
      kn_mb_integrate(m, q, v, hs, qh);
      for (int i = 0; i < nv; i++) vh[i] = v[i] + hs * qdd[i];
      T[s] = kinetic_at(m, d, qh, vh);
    }
    double dTdt = (T[0] - T[1]) / (2 * h);
    maxrel = fmax(maxrel, fabs(dTdt - power) / scale);
  }
  cr_log_info("%s: power balance max |dT/dt - v.(tau - tau_g)| / scale = %.3e\n", m->name, maxrel);
  cr_assert_lt(maxrel, 1e-7);
  kn_mb_data_free(d);
}

Test(dynamics, iiwa_power_balance) {
  kn_mb_model* m = tm_iiwa14();
  check_power_balance(m, 31);
  kn_mb_model_free(m);
}

Test(dynamics, tree_power_balance) {
  kn_mb_model* m = tm_tree();
  check_power_balance(m, 32);
  kn_mb_model_free(m);
}
