/* sap/: one contact on a unit point mass (digest §9 T3 normal, T4 sliding, T5 near-rigid).
 * Expected values: digest §9 (sap-convex-contact.ref.py); closed form for T3. */
#include "sap/sap.h"
#include "sap_test_util.h"

typedef struct {
  double v[3], gamma[3];
  kn_sap_stats stats;
} result;

/* A = I, J = I, dt 0.01, tau_d 0.1, mu 0.5, phi0 -1e-3, beta 1, sigma 1e-3, v* = v0 - g dt e_z */
static result solve_point(double k, const double v0[3]) {
  const double A[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double vs[3] = {v0[0], v0[1], v0[2] - 9.81 * 0.01};
  kn_sap_problem* p = kn_sap_problem_create(0.01);
  kn_error err = {0};
  cr_assert_eq(kn_sap_add_clique(p, 3, A, vs, NULL, &err), KN_OK, "%s", err.msg);
  kn_sap_contact_params c = {.phi0 = -1e-3, .mu = 0.5, .stiffness = k, .dissipation_time = 0.1, .beta = 1,
                             .sigma = 1e-3};
  cr_assert_eq(kn_sap_add_contact(p, 0, A, -1, NULL, &c, NULL, &err), KN_OK, "%s", err.msg);
  kn_sap_solver* s = kn_sap_solver_create();
  result r;
  cr_assert_eq(kn_sap_solve(s, p, NULL, v0, r.v, r.gamma, &r.stats, &err), KN_OK, "%s", err.msg);
  kn_sap_solver_free(s);
  kn_sap_problem_free(p);
  return r;
}

Test(sap_T3, one_contact_normal_only) {
  const double v0[3] = {0, 0, 0};
  result r = solve_point(1e4, v0);
  fprintf(stderr, "T3 (iterations %d)\n", r.stats.iterations);
  /* closed form: v_n = (m v_n* + v_hat / R_n) / (m + 1 / R_n) */
  double Rn = 1.0 / (0.01 * 1e4 * 0.11), vhat = 1e-3 / 0.11;
  double vn = (-0.0981 + vhat / Rn) / (1 + 1 / Rn);
  EXPECT_REL("v_n (closed form)", r.v[2], vn, 1e-6);
  EXPECT_REL("v_n (digest)", r.v[2], 1.583333333e-4, 1e-6);
  EXPECT_REL("gamma_n", r.gamma[2], 0.09825833333, 1e-6);
  EXPECT_ABS("v_t", hypot(r.v[0], r.v[1]), 0, 1e-15);
  EXPECT_ABS("gamma_t", hypot(r.gamma[0], r.gamma[1]), 0, 1e-15);
  cr_expect_eq(r.stats.iterations, 1, "converges in 1 Newton iteration from v_n = 0 (got %d)", r.stats.iterations);
  cr_expect(r.stats.optimality_reached);
}

Test(sap_T4, one_contact_sliding) {
  const double v0[3] = {0.1, 0, 0};
  result r = solve_point(1e4, v0);
  fprintf(stderr, "T4 (iterations %d)\n", r.stats.iterations);
  EXPECT_REL("v_t", r.v[0], 0.04139274925, 1e-6);
  EXPECT_ABS("v_t2", r.v[1], 0, 1e-12);
  EXPECT_REL("v_n (hover artifact)", r.v[2], 0.01911450149, 1e-6);
  EXPECT_REL("gamma_t", r.gamma[0], -0.05860725075, 1e-6);
  EXPECT_REL("gamma_n", r.gamma[2], 0.1172145015, 1e-6);
  /* sliding: |gamma_t| = mu gamma_n to 1e-12 */
  EXPECT_REL("|gamma_t| / (mu gamma_n)", hypot(r.gamma[0], r.gamma[1]) / (0.5 * r.gamma[2]), 1.0, 1e-12);
}

Test(sap_T5, near_rigid_clamp) {
  const double v0[3] = {0, 0, 0};
  result r = solve_point(1e5, v0);
  fprintf(stderr, "T5 (iterations %d)\n", r.stats.iterations);
  EXPECT_REL("v_n", r.v[2], 0.007545895638, 1e-6);
  EXPECT_REL("gamma_n", r.gamma[2], 0.1056458956, 1e-6);
  /* the near-rigid regularization from the closed form: v_n = (v* + v_hat/R_n) / (1 + 1/R_n) */
  double Rn = 0.5773502691896258 / (4 * M_PI * M_PI), vhat = 1e-3 / 0.11;
  EXPECT_REL("v_n (closed form, R_n near-rigid)", r.v[2], (-0.0981 + vhat / Rn) / (1 + 1 / Rn), 1e-6);
}
