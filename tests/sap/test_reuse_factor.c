/* sap/: the Newton path that reuses a factorization of H (kn_sap_options.reuse_min_nv, sap/pcg.c,
 * sap/lowrank.c). On random problems shaped like an MPM clique (one big dense SPD clique, tens to
 * hundreds of contacts whose Jacobians touch a few dozen of its DoFs, a small rigid clique coupled
 * to it) the reuse path and the exact path (H factored every iteration) reach the same v and gamma
 * to 1e-9 relative under a tight tolerance, the reuse path factors H once when few contacts
 * change, it is bitwise reproducible, and problems below the threshold keep exact Newton. */
#include <stdlib.h>
#include <string.h>

#include "sap/sap.h"
#include "sap_test_util.h"

enum { NBIG = 300, NSMALL = 6, NCONTACT = 240 };

/* a tiny LCG: the problem does not depend on the C library's rand() */
static unsigned long long rng_state;
static double urand(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

/* random SPD A = B B^T / n + I (row-major n x n), v* in [-0.2, 0.2] */
static void add_clique(kn_sap_problem* p, int n) {
  double* B = malloc(sizeof(double) * (size_t)n * (size_t)n);
  double* A = malloc(sizeof(double) * (size_t)n * (size_t)n);
  double* vs = malloc(sizeof(double) * (size_t)n);
  for (int k = 0; k < n * n; k++) B[k] = urand() - 0.5;
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      double s = i == j ? 1.0 : 0.0;
      for (int k = 0; k < n; k++) s += B[i * n + k] * B[j * n + k] / n;
      A[i * n + j] = A[j * n + i] = s;
    }
  for (int i = 0; i < n; i++) vs[i] = 0.4 * (urand() - 0.5);
  kn_error err = {0};
  cr_assert_eq(kn_sap_add_clique(p, n, A, vs, NULL, &err), KN_OK, "%s", err.msg);
  free(B);
  free(A);
  free(vs);
}

/* contacts on the big clique: 3 x NBIG blocks with 8 random nodes (24 columns) non-zero like a
 * particle's stencil, every tenth dense (the dense J^T G J path); every eighth also on the small
 * clique (an off-diagonal block). Overlaps up to 3 mm, mu in [0.2, 1], stiffness 1e3..1e6. */
static kn_sap_problem* make_problem(unsigned long long seed, int ncontact) {
  rng_state = seed;
  kn_sap_problem* p = kn_sap_problem_create(0.01);
  add_clique(p, NBIG);
  add_clique(p, NSMALL);
  double* Ja = calloc(3 * NBIG, sizeof(double));
  double Jb[3 * NSMALL];
  kn_error err = {0};
  for (int c = 0; c < ncontact; c++) {
    memset(Ja, 0, sizeof(double) * 3 * NBIG);
    if (c % 10 == 9) {
      for (int k = 0; k < 3 * NBIG; k++) Ja[k] = 0.1 * (urand() - 0.5);
    } else {
      for (int m = 0; m < 8; m++) {
        int node = (int)(urand() * (NBIG / 3)) % (NBIG / 3);
        for (int r = 0; r < 3; r++)
          for (int d = 0; d < 3; d++) Ja[r * NBIG + 3 * node + d] = urand() - 0.5;
      }
    }
    for (int k = 0; k < 3 * NSMALL; k++) Jb[k] = urand() - 0.5;
    kn_sap_contact_params cp = kn_sap_contact_params_default();
    cp.phi0 = -3e-3 * urand() + 5e-4;
    cp.mu = 0.2 + 0.8 * urand();
    cp.stiffness = pow(10, 3 + 3 * urand());
    cp.dissipation_time = 0.05 * urand();
    int b = c % 8 == 7 ? 1 : -1;
    cr_assert_eq(kn_sap_add_contact(p, 0, Ja, b, b >= 0 ? Jb : NULL, &cp, NULL, &err), KN_OK, "%s", err.msg);
  }
  free(Ja);
  return p;
}

typedef struct {
  double v[NBIG + NSMALL], gamma[3 * NCONTACT];
  kn_sap_stats st;
} solution;

static solution solve(kn_sap_solver* s, const kn_sap_problem* p, int reuse_min_nv) {
  solution r;
  kn_sap_options o = kn_sap_options_default();
  o.reuse_min_nv = reuse_min_nv;
  /* tight, so that both paths land within 1e-9 of the exact minimizer */
  o.rel_tolerance = 1e-12;
  kn_error err = {0};
  cr_assert_eq(kn_sap_solve(s, p, &o, NULL, r.v, r.gamma, &r.st, &err), KN_OK, "%s", err.msg);
  return r;
}

static double max_abs(const double* a, int n) {
  double m = 0;
  for (int k = 0; k < n; k++) m = fmax(m, fabs(a[k]));
  return m;
}

static double max_diff(const double* a, const double* b, int n) {
  double d = 0;
  for (int k = 0; k < n; k++) d = fmax(d, fabs(a[k] - b[k]));
  return d;
}

/* exact Newton and the reuse path on one problem: the same minimizer (v and gamma to 1e-9 relative
 * to their largest entries), exact Newton factoring once per iteration, the reuse path bitwise
 * reproducible; => both paths' statistics */
static void compare(unsigned long long seed, int ncontact, kn_sap_stats* exact, kn_sap_stats* reuse) {
  kn_sap_problem* p = make_problem(seed, ncontact);
  kn_sap_solver* s = kn_sap_solver_create();
  int nv = kn_sap_problem_nv(p), ni = kn_sap_problem_num_impulses(p);
  cr_assert_eq(nv, NBIG + NSMALL);
  solution ex = solve(s, p, 0);
  solution re = solve(s, p, 300);
  fprintf(stderr,
          "%d contacts: exact: %d iterations, %d factorizations, %d CG products, residual %.3e; reuse: %d "
          "iterations, %d factorizations, %d CG products, residual %.3e\n",
          ncontact, ex.st.iterations, ex.st.factorizations, ex.st.cg_iterations, ex.st.residual, re.st.iterations,
          re.st.factorizations, re.st.cg_iterations, re.st.residual);
  cr_expect(ex.st.optimality_reached && re.st.optimality_reached);
  cr_expect_eq(ex.st.factorizations, ex.st.iterations);
  cr_expect_eq(ex.st.cg_iterations, 0);
  double vmax = max_abs(ex.v, nv), gmax = max_abs(ex.gamma, ni);
  double dv = max_diff(ex.v, re.v, nv), dg = max_diff(ex.gamma, re.gamma, ni);
  int active = 0;
  for (int k = 0; k < ni; k += 3) active += ex.gamma[k + 2] > 0;
  fprintf(stderr, "max |dv| %.2e (max |v| %.3g), max |dgamma| %.2e (max |gamma| %.3g), %d of %d contacts active\n",
          dv, vmax, dg, gmax, active, ncontact);
  cr_expect_gt(active, ncontact / 4, "a problem with many active contacts");
  cr_expect_leq(dv, 1e-9 * vmax);
  cr_expect_leq(dg, 1e-9 * gmax);
  solution again = solve(s, p, 300);
  cr_expect(memcmp(again.v, re.v, sizeof(double) * (size_t)nv) == 0, "reuse path not bitwise reproducible");
  cr_expect_eq(again.st.factorizations, re.st.factorizations);
  *exact = ex.st;
  *reuse = re.st;
  kn_sap_solver_free(s);
  kn_sap_problem_free(p);
}

/* 50 contacts (150 rows, within the low-rank budget of n / 2 = 153): H is factored once, and every
 * later iteration's direction is H_k^-1 grad solved from it exactly (sap/lowrank.c), with no CG
 * product. Measured (Release, OpenBLAS 0.3.21): exact 14 iterations / 14 factorizations; reuse 15
 * iterations (the first step's predicted G), 1 factorization, 14 low-rank solves, 0 CG products
 * (14 before the direct solve: CG converged in one product each time). */
Test(sap_reuse, few_changes_one_factorization) {
  kn_sap_stats ex, re;
  compare(4242, 50, &ex, &re);
  fprintf(stderr, "low-rank solves %d\n", re.lowrank_solves);
  cr_expect_eq(re.factorizations, 1);
  cr_expect_eq(re.lowrank_solves, re.iterations - 1);
  cr_expect_eq(re.cg_iterations, 0);
  cr_expect_leq(re.iterations, ex.iterations + 2);
}

/* 240 contacts, most of them changing mode between iterations (their rows pass the low-rank
 * budget): CG preconditioned by the earlier factor, H refactored after a CG solve that did not
 * converge. Measured (Release and ASan builds, OpenBLAS 0.3.21): exact 34 iterations / 34
 * factorizations; reuse 38 iterations, 8 factorizations, 174 CG products (34, 8, 161 before the
 * first step took the contacts' predicted G, sap/friction_cone.c first_G: on this random problem
 * it costs iterations, on the MPM scenes it saves them). Asserted with margin: at most a third of
 * the exact count. */
Test(sap_reuse, many_changes_same_solution_fewer_factorizations) {
  kn_sap_stats ex, re;
  compare(12345, NCONTACT, &ex, &re);
  cr_expect_gt(re.cg_iterations, 0);
  cr_expect_leq(3 * re.factorizations, ex.factorizations);
  cr_expect_leq(re.iterations, 2 * ex.iterations);
  cr_expect_leq(re.factorizations, re.iterations);
}

/* below the threshold (nv 306 < 400) the default path is exact Newton, bitwise the same as reuse off */
Test(sap_reuse, below_threshold_is_exact_newton) {
  kn_sap_problem* p = make_problem(777, NCONTACT);
  kn_sap_solver* s = kn_sap_solver_create();
  solution off = solve(s, p, 0), below = solve(s, p, 400);
  cr_expect_eq(below.st.cg_iterations, 0);
  cr_expect_eq(below.st.factorizations, below.st.iterations);
  cr_expect(memcmp(off.v, below.v, sizeof off.v) == 0);
  cr_expect(memcmp(off.gamma, below.gamma, sizeof off.gamma) == 0);
  cr_expect_eq(kn_sap_options_default().reuse_min_nv, 300);
  kn_sap_solver_free(s);
  kn_sap_problem_free(p);
}
