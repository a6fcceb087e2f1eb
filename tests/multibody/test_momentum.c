/* kn_mb_momentum_force against finite differences: f = dT/dq at fixed v for 1-DoF chains, and
 * f = M_dot v - C v (M_dot along q_dot = N v) for a tree with every joint type. */
#include <criterion/criterion.h>
#include <math.h>

#include "mb_test_models.h"

static double kinetic(const kn_mb_model* m, kn_mb_data* d, const double* q, const double* v) {
  kn_mb_kinematics(m, q, v, d);
  return kn_mb_kinetic_energy(m, d);
}

/* iiwa14, random (q, v) in [-1, 1]: central differences of T with h = 1e-6 (error ~ h^2 |T'''|
 * + eps |T| / h ~ 1e-10); required |f - FD| < 1e-7 (1 + |f|). */
Test(momentum, iiwa_dT_dq) {
  kn_mb_model* m = tm_iiwa14();
  kn_mb_data* d = kn_mb_data_create(m);
  unsigned s = 7;
  double q[7], v[7], f[7], qp[7], worst = 0;
  for (int trial = 0; trial < 5; trial++) {
    tm_random_q(m, &s, q);
    for (int i = 0; i < 7; i++) v[i] = 2 * tm_rand(&s);
    kn_mb_kinematics(m, q, v, d);
    kn_mb_momentum_force(m, d, f);
    for (int k = 0; k < 7; k++) {
      double h = 1e-6;
      for (int i = 0; i < 7; i++) qp[i] = q[i];
      qp[k] = q[k] + h;
      double Tp = kinetic(m, d, qp, v);
      qp[k] = q[k] - h;
      double Tm = kinetic(m, d, qp, v);
      double fd = (Tp - Tm) / (2 * h);
      worst = fmax(worst, fabs(f[k] - fd) / (1 + fabs(f[k])));
    }
  }
  cr_log_info("iiwa: max |f - dT/dq (FD)| / (1 + |f|) = %.2e\n", worst);
  cr_assert_lt(worst, 1e-7);
  kn_mb_data_free(d);
  kn_mb_model_free(m);
}

/* Tree (floating base, revolute, prismatic, planar, continuous, weld): f = M_dot v - C v with
 * M_dot v = (M(q (+) h v) - M(q (+) -h v)) v / 2h and C v = RNEA(qdd = 0) + tau_g (gravity
 * removed). Required |f - FD| < 1e-6 (1 + |f|) (central differences, h = 1e-6). */
Test(momentum, tree_Mdot_minus_C) {
  kn_mb_model* m = tm_tree();
  kn_mb_data* d = kn_mb_data_create(m);
  int nq = m->nq, nv = m->nv;
  double* q = calloc((size_t)nq, sizeof *q);
  double* qp = calloc((size_t)nq, sizeof *qp);
  double* v = calloc((size_t)nv, sizeof *v);
  double* f = calloc((size_t)nv, sizeof *f);
  double* Cv = calloc((size_t)nv, sizeof *Cv);
  double* tg = calloc((size_t)nv, sizeof *tg);
  double* Mp = calloc((size_t)nv * nv, sizeof *Mp);
  double* Mm = calloc((size_t)nv * nv, sizeof *Mm);
  unsigned s = 11;
  double worst = 0, h = 1e-6;
  for (int trial = 0; trial < 5; trial++) {
    tm_random_q(m, &s, q);
    for (int i = 0; i < nv; i++) v[i] = 2 * tm_rand(&s);
    kn_mb_kinematics(m, q, v, d);
    kn_mb_momentum_force(m, d, f);
    kn_mb_inverse_dynamics(m, d, NULL, Cv);
    kn_mb_gravity_torques(m, d, tg);
    kn_mb_integrate(m, q, v, h, qp);
    kn_mb_kinematics(m, qp, NULL, d);
    kn_mb_mass_matrix(m, d, Mp);
    kn_mb_integrate(m, q, v, -h, qp);
    kn_mb_kinematics(m, qp, NULL, d);
    kn_mb_mass_matrix(m, d, Mm);
    for (int i = 0; i < nv; i++) {
      double Mdv = 0;
      for (int j = 0; j < nv; j++) Mdv += (Mp[i * nv + j] - Mm[i * nv + j]) / (2 * h) * v[j];
      double fd = Mdv - (Cv[i] - tg[i]);
      worst = fmax(worst, fabs(f[i] - fd) / (1 + fabs(f[i])));
    }
  }
  cr_log_info("tree: max |f - (M_dot v - C v)(FD)| / (1 + |f|) = %.2e\n", worst);
  cr_assert_lt(worst, 1e-6);
  free(q), free(qp), free(v), free(f), free(Cv), free(tg), free(Mp), free(Mm);
  kn_mb_data_free(d);
  kn_mb_model_free(m);
}

/* A free body with no forces: f = -V x* (I V) (Euler-Poincare), checked on one axis analytically:
 * a body spinning about a principal axis through its centre of mass has f = 0. */
Test(momentum, free_body_principal_spin) {
  kn_mb_model* m = kn_mb_model_create("spin");
  kn_mb_body b = tm_body("b", -1, "free", KN_JOINT_FLOATING, 1.0);
  tm_set_inertia(&b, 0, 0, 0, 0.1, 0.2, 0.3, 0, 0, 0);
  tm_add(m, &b);
  kn_mb_data* d = kn_mb_data_create(m);
  double q[7] = {0, 0, 0, 1, 0, 0, 0}, v[6] = {0, 3, 0, 0, 0, 0}, f[6];
  kn_mb_kinematics(m, q, v, d);
  kn_mb_momentum_force(m, d, f);
  for (int k = 0; k < 6; k++) cr_assert_float_eq(f[k], 0, 1e-15);
  /* off-axis spin w = (1, 2, 0): f_ang = -(w x I w) = -(0, 0, 1*0.4 - 2*0.1) = (0, 0, -0.2) */
  v[0] = 1, v[1] = 2;
  kn_mb_kinematics(m, q, v, d);
  kn_mb_momentum_force(m, d, f);
  cr_assert_float_eq(f[2], -0.2, 1e-15);
  cr_assert_float_eq(f[0], 0, 1e-15);
  cr_assert_float_eq(f[1], 0, 1e-15);
  kn_mb_data_free(d);
  kn_mb_model_free(m);
}
