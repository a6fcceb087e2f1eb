/* sap/: a sparse clique (kn_sap_add_clique_sparse), the Newton matrix kept in A's pattern and
 * factored by CHOLMOD. The problem is shaped like an MPM grid: nodes on a 6 x 6 x 6 lattice (648
 * DoFs), A = M + sum over "particles" of B_p^T B_p with each particle's 8 nodes (a cell's corners),
 * and one contact per particle on those 8 nodes, every eighth also on a small rigid clique. The same
 * problem given as a dense clique is the reference:
 *  - v and gamma agree to 1e-9 relative, on the reuse path (factor kept, sap/lowrank.c on CHOLMOD's
 *    permuted factor) and on exact Newton (H factored every iteration);
 *  - the sparse clique's solve is bitwise reproducible;
 *  - a constraint coupling DoFs that A does not couple is refused by kn_sap_solve, which leaves v
 *    as it was; malformed patterns are refused by kn_sap_add_clique_sparse, which adds nothing.
 * Each particle's J block is by node, as an MPM particle's: w_a B on node a's DoFs (w its 8 weights,
 * B a 3 x 3 matrix of its own). The same blocks given by node (kn_sap_add_contact_nodal, nodes in
 * the lattice's order, not sorted) must give the dense-J solution to 1e-9, on the dense and the
 * sparse clique, with the Delassus estimates (and so the regularization) equal to 1e-14; a rigid
 * clique whose J has more nonzero columns than the compressed products keep (120) takes the
 * general J^T G J; malformed nodal blocks are refused, adding nothing. A made of 3 x 3 node
 * blocks is multiplied by block, equal to the dense product to 1e-13. */
#include <stdlib.h>
#include <string.h>

#include "sap/sap.h"
#include "sap/sap_internal.h"
#include "sap_test_util.h"

enum { SIDE = 6, NNODE = SIDE * SIDE * SIDE, NV = 3 * NNODE, NSMALL = 6, NPART = 160 };

static unsigned long long rng_state;
static double urand(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

typedef struct {
  double* A; /* NV x NV row-major, symmetric */
  int *colptr, *rowidx;
  double* values;
  double vstar[NV];
  int nodes[NPART][8];
  double J[NPART][3 * 24]; /* per particle: 3 rows over its 24 DoFs, w[a] B on node a */
  double w[NPART][8], B[NPART][9];
  double Jb[NPART][3 * NSMALL];
  kn_sap_contact_params par[NPART];
} model;

static void build(model* m, unsigned long long seed) {
  rng_state = seed;
  m->A = calloc((size_t)NV * NV, sizeof(double));
  for (int i = 0; i < NV; i++) m->A[i * NV + i] = 0.5 + urand(); /* lumped mass */
  for (int p = 0; p < NPART; p++) {
    int base[3];
    for (int d = 0; d < 3; d++) base[d] = (int)(urand() * (SIDE - 1)) % (SIDE - 1);
    for (int k = 0; k < 8; k++)
      m->nodes[p][k] = (base[0] + (k & 1)) + SIDE * ((base[1] + (k >> 1 & 1)) + SIDE * (base[2] + (k >> 2 & 1)));
    /* stiffness: B (6 x 24) random, A += B^T B over the particle's DoFs */
    double B[6 * 24];
    for (int k = 0; k < 6 * 24; k++) B[k] = urand() - 0.5;
    for (int a = 0; a < 24; a++)
      for (int b = 0; b < 24; b++) {
        double s = 0;
        for (int r = 0; r < 6; r++) s += B[r * 24 + a] * B[r * 24 + b];
        int da = 3 * m->nodes[p][a / 3] + a % 3, db = 3 * m->nodes[p][b / 3] + b % 3;
        m->A[da * NV + db] += s;
      }
    for (int a = 0; a < 8; a++) m->w[p][a] = 0.05 + urand();
    for (int k = 0; k < 9; k++) m->B[p][k] = urand() - 0.5;
    for (int r = 0; r < 3; r++)
      for (int a = 0; a < 8; a++)
        for (int c = 0; c < 3; c++) m->J[p][r * 24 + 3 * a + c] = m->w[p][a] * m->B[p][3 * r + c];
    for (int k = 0; k < 3 * NSMALL; k++) m->Jb[p][k] = urand() - 0.5;
    kn_sap_contact_params cp = kn_sap_contact_params_default();
    cp.phi0 = -3e-3 * urand() + 5e-4;
    cp.mu = 0.2 + 0.8 * urand();
    cp.stiffness = pow(10, 3 + 3 * urand());
    cp.dissipation_time = 0.05 * urand();
    m->par[p] = cp;
  }
  for (int i = 0; i < NV; i++) m->vstar[i] = 0.4 * (urand() - 0.5);
  /* the lower triangle's structural pattern: every pair of DoFs that some particle (or the
   * diagonal) couples, whatever the value */
  unsigned char* S = calloc((size_t)NV * NV, 1);
  for (int i = 0; i < NV; i++) S[i * NV + i] = 1;
  for (int p = 0; p < NPART; p++)
    for (int a = 0; a < 24; a++)
      for (int b = 0; b < 24; b++) S[(3 * m->nodes[p][a / 3] + a % 3) * NV + 3 * m->nodes[p][b / 3] + b % 3] = 1;
  int nnz = 0;
  for (int j = 0; j < NV; j++)
    for (int i = j; i < NV; i++) nnz += S[i * NV + j];
  m->colptr = malloc(sizeof(int) * (NV + 1));
  m->rowidx = malloc(sizeof(int) * (size_t)nnz);
  m->values = malloc(sizeof(double) * (size_t)nnz);
  int at = 0;
  for (int j = 0; j < NV; j++) {
    m->colptr[j] = at;
    for (int i = j; i < NV; i++)
      if (S[i * NV + j]) m->rowidx[at] = i, m->values[at] = m->A[i * NV + j], at++;
  }
  m->colptr[NV] = at;
  free(S);
}

static void release(model* m) {
  free(m->A), free(m->colptr), free(m->rowidx), free(m->values);
}

/* the problem with the big clique dense or sparse; with stray = 1 one more contact couples DoFs 0
 * and NV - 1, which no particle does; nodal = 1: the particles' blocks given by node; nbig > 0: the
 * small clique replaced by one of nbig DoFs whose J blocks are dense */
static kn_sap_problem* problem_with(const model* m, int sparse, int stray, int nodal, int nbig) {
  kn_sap_problem* p = kn_sap_problem_create(0.01);
  kn_error err = {0};
  if (sparse)
    cr_assert_eq(kn_sap_add_clique_sparse(p, NV, m->colptr, m->rowidx, m->values, m->vstar, NULL, &err), KN_OK, "%s",
                 err.msg);
  else
    cr_assert_eq(kn_sap_add_clique(p, NV, m->A, m->vstar, NULL, &err), KN_OK, "%s", err.msg);
  int ns = nbig > 0 ? nbig : NSMALL;
  double* As = calloc((size_t)ns * (size_t)ns, sizeof(double));
  double* vs = calloc((size_t)ns, sizeof(double));
  double* Jb = calloc(3 * (size_t)ns, sizeof(double));
  for (int i = 0; i < ns; i++) As[i * ns + i] = 2.0 + i % 7, vs[i] = 0.1 * (i % 5) - 0.2;
  cr_assert_eq(kn_sap_add_clique(p, ns, As, vs, NULL, &err), KN_OK);
  double* Ja = calloc(3 * NV, sizeof(double));
  for (int c = 0; c < NPART + stray; c++) {
    memset(Ja, 0, sizeof(double) * 3 * NV);
    if (c == NPART) {
      Ja[0] = 1, Ja[NV + NV - 1] = 1, Ja[2 * NV] = 0.5, Ja[2 * NV + NV - 1] = -0.5;
      cr_assert_eq(kn_sap_add_contact(p, 0, Ja, -1, NULL, &m->par[0], NULL, &err), KN_OK);
      continue;
    }
    int b = c % 8 == 7 ? 1 : -1;
    for (int k = 0; k < 3 * ns; k++) Jb[k] = nbig > 0 ? 0.01 * (1 + (k * 7 + c) % 13) : m->Jb[c][k];
    if (nodal) {
      int col[8];
      for (int a = 0; a < 8; a++) col[a] = 3 * m->nodes[c][a];
      kn_sap_nodal_jacobian nj = {.m = 8, .col = col, .w = m->w[c]};
      memcpy(nj.B, m->B[c], sizeof nj.B);
      cr_assert_eq(kn_sap_add_contact_nodal(p, 0, &nj, b, b >= 0 ? Jb : NULL, &m->par[c], NULL, &err), KN_OK, "%s",
                   err.msg);
      continue;
    }
    for (int r = 0; r < 3; r++)
      for (int a = 0; a < 24; a++) Ja[r * NV + 3 * m->nodes[c][a / 3] + a % 3] += m->J[c][r * 24 + a];
    cr_assert_eq(kn_sap_add_contact(p, 0, Ja, b, b >= 0 ? Jb : NULL, &m->par[c], NULL, &err), KN_OK, "%s", err.msg);
  }
  free(Ja), free(As), free(vs), free(Jb);
  return p;
}

static kn_sap_problem* problem(const model* m, int sparse, int stray) { return problem_with(m, sparse, stray, 0, 0); }

typedef struct {
  double v[NV + 120], gamma[3 * NPART];
  kn_sap_stats st;
} solution;

static void solve(kn_sap_problem* p, int reuse, solution* out) {
  kn_sap_options o = kn_sap_options_default();
  o.rel_tolerance = 1e-12;
  if (!reuse) o.reuse_min_nv = 0;
  kn_sap_solver* s = kn_sap_solver_create();
  kn_error err = {0};
  cr_assert_eq(kn_sap_solve(s, p, &o, NULL, out->v, out->gamma, &out->st, &err), KN_OK, "%s", err.msg);
  kn_sap_solver_free(s);
}

static double rel_diff(const double* a, const double* b, int n) {
  double e = 0, m = 0;
  for (int k = 0; k < n; k++) e = fmax(e, fabs(a[k] - b[k])), m = fmax(m, fabs(b[k]));
  return e / m;
}

Test(sap_sparse_clique, matches_the_dense_clique) {
  static model m;
  build(&m, 7);
  kn_sap_problem* pd = problem(&m, 0, 0);
  kn_sap_problem* ps = problem(&m, 1, 0);
  static solution d, s, s2, de, se;
  solve(pd, 1, &d);
  solve(ps, 1, &s);
  solve(ps, 1, &s2);
  solve(pd, 0, &de);
  solve(ps, 0, &se);
  fprintf(stderr, "sparse clique: nnz %d of %d lower; reuse path: iterations %d/%d, factorizations %d/%d, low-rank "
          "solves %d/%d (dense/sparse); exact: iterations %d/%d\n",
          m.colptr[NV], NV * (NV + 1) / 2, d.st.iterations, s.st.iterations, d.st.factorizations,
          s.st.factorizations, d.st.lowrank_solves, s.st.lowrank_solves, de.st.iterations, se.st.iterations);
  cr_expect_eq(s.st.used_sparse, 1);
  cr_expect_eq(d.st.used_sparse, 0);
  cr_expect(s.st.optimality_reached && se.st.optimality_reached);
  double ev = rel_diff(s.v, d.v, NV + NSMALL), eg = rel_diff(s.gamma, d.gamma, 3 * NPART);
  double evx = rel_diff(se.v, de.v, NV + NSMALL), egx = rel_diff(se.gamma, de.gamma, 3 * NPART);
  fprintf(stderr, "  sparse vs dense: reuse v %.2e gamma %.2e, exact v %.2e gamma %.2e\n", ev, eg, evx, egx);
  cr_expect_lt(ev, 1e-9);
  cr_expect_lt(eg, 1e-9);
  cr_expect_lt(evx, 1e-9);
  cr_expect_lt(egx, 1e-9);
  /* the reuse path on the sparse factor: fewer factorizations than iterations, low-rank solves used */
  cr_expect_lt(s.st.factorizations, s.st.iterations);
  cr_expect_gt(s.st.lowrank_solves + s.st.cg_iterations, 0);
  cr_expect_eq(se.st.factorizations, se.st.iterations);
  cr_expect(!memcmp(s.v, s2.v, sizeof s.v) && !memcmp(s.gamma, s2.gamma, sizeof s.gamma), "not reproducible");
  kn_sap_problem_free(pd);
  kn_sap_problem_free(ps);
  release(&m);
}

/* the lattice's A is made of 3 x 3 node blocks: kept by block, and its products by block equal
 * the dense A's; a pattern that is not blocked keeps the scalar products */
Test(sap_sparse_clique, products_by_block) {
  static model m;
  build(&m, 17);
  kn_sap_problem* p = problem(&m, 1, 0);
  cr_assert_eq(p->cliques[0].blocked, 1);
  static double x[NV], y[NV];
  for (int k = 0; k < NV; k++) x[k] = urand() - 0.5, y[k] = 0.25;
  kn_sap_clique_matvec_add(p, 0, x, y);
  double e = 0, mx = 0;
  for (int i = 0; i < NV; i++) {
    double s = 0.25;
    for (int j = 0; j < NV; j++) s += m.A[i * NV + j] * x[j];
    e = fmax(e, fabs(y[i] - s)), mx = fmax(mx, fabs(s));
  }
  cr_expect_lt(e, 1e-13 * mx, "block product off by %g of %g", e, mx);
  kn_sap_problem_free(p);
  /* drop one entry of an off-diagonal block: no longer blocked, the scalar product */
  kn_sap_problem* q = kn_sap_problem_create(0.01);
  kn_error err = {0};
  int cp[7] = {0, 4, 7, 9, 11, 12, 13}, ri[13] = {0, 1, 2, 3, 1, 2, 4, 2, 5, 3, 4, 4, 5};
  double v[13] = {4, 1, 0.5, 0.25, 4, 1, 0.5, 4, 0.25, 4, 1, 4, 4}, vs[6] = {0};
  cr_assert_eq(kn_sap_add_clique_sparse(q, 6, cp, ri, v, vs, NULL, &err), KN_OK, "%s", err.msg);
  cr_expect_eq(q->cliques[0].blocked, 0);
  double x6[6] = {1, -2, 3, 0.5, -1, 2}, y6[6] = {0}, A6[36] = {0};
  for (int j = 0; j < 6; j++)
    for (int z = cp[j]; z < cp[j + 1]; z++) A6[ri[z] * 6 + j] = A6[j * 6 + ri[z]] = v[z];
  kn_sap_clique_matvec_add(q, 0, x6, y6);
  for (int i = 0; i < 6; i++) {
    double s = 0;
    for (int j = 0; j < 6; j++) s += A6[i * 6 + j] * x6[j];
    cr_expect_lt(fabs(y6[i] - s), 1e-14, "row %d: %g vs %g", i, y6[i], s);
  }
  kn_sap_problem_free(q);
  release(&m);
}

Test(sap_sparse_clique, nodal_jacobians_match_dense_ones) {
  static model m;
  build(&m, 13);
  for (int nbig = 0; nbig <= 120; nbig += 120) {
    kn_sap_problem* pd = problem_with(&m, 0, 0, 0, nbig);
    kn_sap_problem* pn = problem_with(&m, 0, 0, 1, nbig);
    kn_sap_problem* psn = problem_with(&m, 1, 0, 1, nbig);
    int n = NV + (nbig ? nbig : NSMALL);
    /* the same Delassus estimates: the same R, sigma and beta regularization */
    double ew = 0;
    for (int i = 0; i < NPART; i++) {
      double wd = kn_sap_delassus(pd, i), wn = kn_sap_delassus(pn, i);
      ew = fmax(ew, fabs(wn - wd) / wd);
    }
    static solution d, dn, sn, sn2, de, dne;
    solve(pd, 1, &d);
    solve(pn, 1, &dn);
    solve(psn, 1, &sn);
    solve(psn, 1, &sn2);
    solve(pd, 0, &de);
    solve(pn, 0, &dne);
    double e1 = rel_diff(dn.v, d.v, n), e2 = rel_diff(dn.gamma, d.gamma, 3 * NPART);
    double e3 = rel_diff(sn.v, d.v, n), e4 = rel_diff(sn.gamma, d.gamma, 3 * NPART);
    double e5 = rel_diff(dne.v, de.v, n), e6 = rel_diff(dne.gamma, de.gamma, 3 * NPART);
    fprintf(stderr, "nodal J (other clique %d DoFs): Delassus %.1e; dense clique v %.1e gamma %.1e, sparse clique v "
            "%.1e gamma %.1e, exact Newton v %.1e gamma %.1e\n", nbig ? nbig : NSMALL, ew, e1, e2, e3, e4, e5, e6);
    cr_expect_lt(ew, 1e-14);
    cr_expect_lt(e1, 1e-9);
    cr_expect_lt(e2, 1e-9);
    cr_expect_lt(e3, 1e-9);
    cr_expect_lt(e4, 1e-9);
    cr_expect_lt(e5, 1e-9);
    cr_expect_lt(e6, 1e-9);
    cr_expect(dn.st.optimality_reached && sn.st.optimality_reached && dne.st.optimality_reached);
    cr_expect(!memcmp(sn.v, sn2.v, sizeof sn.v), "not reproducible");
    /* v_c = J v by node equals the dense product */
    double vcd[3], vcn[3], evc = 0;
    for (int i = 0; i < NPART; i++) {
      kn_sap_constraint_vc(pd, i, d.v, vcd);
      kn_sap_constraint_vc(pn, i, d.v, vcn);
      for (int r = 0; r < 3; r++) evc = fmax(evc, fabs(vcn[r] - vcd[r]));
    }
    cr_expect_lt(evc, 1e-14, "v_c by node differs by %g", evc);
    kn_sap_problem_free(pd);
    kn_sap_problem_free(pn);
    kn_sap_problem_free(psn);
  }
  release(&m);
}

Test(sap_sparse_clique, malformed_nodal_jacobians_are_refused) {
  kn_sap_problem* p = kn_sap_problem_create(0.01);
  kn_error err = {0};
  double A[12 * 12] = {0}, vs[12] = {0};
  for (int i = 0; i < 12; i++) A[i * 12 + i] = 1;
  cr_assert_eq(kn_sap_add_clique(p, 12, A, vs, NULL, &err), KN_OK);
  kn_sap_contact_params par = kn_sap_contact_params_default();
  int col_ok[2] = {0, 6}, col_overlap[2] = {6, 4}, col_out[2] = {0, 10};
  double w[2] = {0.5, 0.5}, w_nan[2] = {0.5, NAN};
  const struct {
    int m;
    const int* col;
    const double* w;
    double b00;
    const char* says;
  } bad[] = {{0, col_ok, w, 1, "1 to 32 nodes"},     {33, col_ok, w, 1, "1 to 32 nodes"},
             {2, col_overlap, w, 1, "overlap"},      {2, col_out, w, 1, "outside the clique"},
             {2, col_ok, w_nan, 1, "not finite"},    {2, col_ok, w, INFINITY, "B entry 0 is not finite"}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    kn_sap_nodal_jacobian nj = {.m = bad[k].m, .col = bad[k].col, .w = bad[k].w, .B = {bad[k].b00, 0, 0, 0, 1, 0, 0, 0, 1}};
    cr_expect_eq(kn_sap_add_contact_nodal(p, 0, &nj, -1, NULL, &par, NULL, &err), KN_ERR_INVALID, "case %zu", k);
    cr_expect(strstr(err.msg, bad[k].says), "case %zu: %s", k, err.msg);
    cr_expect_eq(kn_sap_problem_num_constraints(p), 0, "case %zu added a constraint", k);
  }
  /* a valid block on this small (12-DoF, dense-path) clique solves as its dense equivalent */
  kn_sap_nodal_jacobian good = {.m = 2, .col = col_ok, .w = w, .B = {0.8, 0.6, 0, -0.6, 0.8, 0, 0, 0, 1}};
  par.phi0 = -1e-3;
  cr_expect_eq(kn_sap_add_contact_nodal(p, 0, &good, -1, NULL, &par, NULL, &err), KN_OK, "%s", err.msg);
  cr_expect_eq(kn_sap_problem_num_constraints(p), 1);
  kn_sap_problem* pd = kn_sap_problem_create(0.01);
  for (int i = 0; i < 12; i++) vs[i] = 0.1 * (i % 4) - 0.15;
  kn_sap_problem_free(p);
  p = kn_sap_problem_create(0.01);
  cr_assert_eq(kn_sap_add_clique(p, 12, A, vs, NULL, &err), KN_OK);
  cr_assert_eq(kn_sap_add_clique(pd, 12, A, vs, NULL, &err), KN_OK);
  cr_assert_eq(kn_sap_add_contact_nodal(p, 0, &good, -1, NULL, &par, NULL, &err), KN_OK);
  double J[3 * 12] = {0};
  for (int a = 0; a < 2; a++)
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) J[r * 12 + col_ok[a] + c] = w[a] * good.B[3 * r + c];
  cr_assert_eq(kn_sap_add_contact(pd, 0, J, -1, NULL, &par, NULL, &err), KN_OK);
  double v1[12], v2[12], g1[3], g2[3];
  kn_sap_solver* s = kn_sap_solver_create();
  cr_assert_eq(kn_sap_solve(s, p, NULL, NULL, v1, g1, NULL, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_sap_solve(s, pd, NULL, NULL, v2, g2, NULL, &err), KN_OK, "%s", err.msg);
  cr_expect_gt(g2[2], 0, "the contact pushes (gamma_n %g)", g2[2]);
  for (int k = 0; k < 12; k++) cr_expect_lt(fabs(v1[k] - v2[k]), 1e-12, "v[%d] %g vs %g", k, v1[k], v2[k]);
  for (int k = 0; k < 3; k++) cr_expect_lt(fabs(g1[k] - g2[k]), 1e-12 * fabs(g2[2]), "gamma[%d] %g vs %g", k, g1[k], g2[k]);
  kn_sap_solver_free(s);
  kn_sap_problem_free(pd);
  kn_sap_problem_free(p);
}

Test(sap_sparse_clique, refuses_a_constraint_outside_the_pattern) {
  static model m;
  build(&m, 11);
  kn_sap_problem* p = problem(&m, 1, 1);
  static double v[NV + NSMALL];
  for (int k = 0; k < NV + NSMALL; k++) v[k] = 12345.0;
  kn_sap_solver* s = kn_sap_solver_create();
  kn_error err = {0};
  cr_expect_eq(kn_sap_solve(s, p, NULL, NULL, v, NULL, NULL, &err), KN_ERR_INVALID);
  fprintf(stderr, "  %s\n", err.msg);
  cr_expect(strstr(err.msg, "constraint 160") && strstr(err.msg, "does not couple"), "%s", err.msg);
  int untouched = 1;
  for (int k = 0; k < NV + NSMALL; k++) untouched &= v[k] == 12345.0;
  cr_expect(untouched, "v was written on failure");
  kn_sap_solver_free(s);
  kn_sap_problem_free(p);
  release(&m);
}

Test(sap_sparse_clique, malformed_patterns_are_refused) {
  /* 3 x 3: [[2, 1, 0], [1, 2, 1], [0, 1, 2]] lower: col 0 rows 0 1, col 1 rows 1 2, col 2 row 2 */
  const int cp[4] = {0, 2, 4, 5};
  const int ri[5] = {0, 1, 1, 2, 2};
  const double x[5] = {2, 1, 2, 1, 2}, vs[3] = {0, 0, 0};
  kn_sap_problem* p = kn_sap_problem_create(0.01);
  kn_error err = {0};
  cr_assert_eq(kn_sap_add_clique_sparse(p, 3, cp, ri, x, vs, NULL, &err), KN_OK, "%s", err.msg);
  const int ri_nodiag[5] = {1, 0, 1, 2, 2}, ri_unsorted[5] = {0, 1, 1, 2, 2}, cp_bad[4] = {0, 2, 4, 4};
  const int ri_range[5] = {0, 3, 1, 2, 2};
  const double x_neg[5] = {2, 1, -2, 1, 2}, x_nan[5] = {2, NAN, 2, 1, 2};
  struct {
    const int *cp, *ri;
    const double* x;
    const char* what;
  } bad[] = {{cp, ri_nodiag, x, "diagonal"}, {cp_bad, ri_unsorted, x, "diagonal"}, {cp, ri_range, x, "out of"},
             {cp, ri, x_neg, "positive diagonal"}, {cp, ri, x_nan, "not finite"}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    err = (kn_error){0};
    cr_expect_eq(kn_sap_add_clique_sparse(p, 3, bad[k].cp, bad[k].ri, bad[k].x, vs, NULL, &err), KN_ERR_INVALID);
    fprintf(stderr, "  %s\n", err.msg);
    cr_expect(strstr(err.msg, bad[k].what), "case %zu: %s", k, err.msg);
  }
  cr_expect_eq(kn_sap_problem_num_cliques(p), 1, "a refused clique was added");
  cr_expect_eq(kn_sap_problem_nv(p), 3);
  kn_sap_problem_free(p);
}
