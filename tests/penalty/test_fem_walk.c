/* A penalty contact whose anchor walks a deforming FEM boundary (penalty/fem_walk.c;
 * penalty-coulomb-friction.md §3.5, §3.7.3, §6.11 items 1 and 3): the mesh's four vertices and the
 * particle are nodal points with their own DoFs (x = x0 + dt v), the anchor Y = Y(Z, x_1 .. x_4) is
 * walked at the iterate and its reaction goes to the final triangle's vertices by Y's weights. The
 * assembled Jacobian (Y's dependence on the vertices and the weights' derivatives included) against
 * central differences of the residual, sticking, sliding inside a face and sliding across the crease
 * into the next face; the reaction balances the force (the residual sums to 0 per axis); sliding
 * |f_t| = mu f_n on the final face's plane. The same with the particle a point of another body's
 * edge (two nodes by weights, as an FEM-FEM edge crossing of contact/fem_detect.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "penalty/penalty.h"

#define NV 18 /* 4 vertices, the particle's node(s) (an edge point's second node: 15 .. 17) */

static void dense(const kn_nl_triplets* t, double A[NV * NV]) {
  memset(A, 0, NV * NV * sizeof *A);
  for (int k = 0; k < t->nnz; k++) A[NV * t->i[k] + t->j[k]] += t->x[k];
}

/* a crease: triangle 0 (v0 v1 v2) in z = 0, triangle 1 (v1 v3 v2) rising to z = 0.2 at v3 */
static const double X0[12] = {-1, 0, 0, 0, -1, 0, 0, 1, 0, 1, 0, 0.2};
static const int TRI[6] = {0, 1, 2, 1, 3, 2};
static const int VERTS[4] = {0, 1, 2, 3};

typedef struct {
  kn_nl_points P;
  kn_penalty_mesh_topology top;
  double x[12];
  int pt[4];
  kn_penalty_fem_mesh F;
  kn_penalty_contact c;
  kn_penalty_term t;
} fixture;

/* (anchor on triangle 0 with weights w, particle start z0, mu, s) => the fixture; the particle is
 * node 4 for s = 0, else the point (1 - s) x_4 + s x_5 of an edge (x0: z0) */
static void setup_edge(fixture* f, const double w[3], const double z0[3], double mu, double s) {
  memset(f, 0, sizeof *f);
  for (int v = 0; v < 4; v++) {
    kn_point_map m = {.n = 1, .col = {3 * v}, .w = {1}};
    memcpy(m.x0, X0 + 3 * v, sizeof m.x0);
    f->pt[v] = kn_nl_points_add(&f->P, &m, 0, NV, NULL);
  }
  kn_point_map mz = {.n = s > 0 ? 2 : 1, .col = {12, 15}, .w = {1 - s, s}};
  memcpy(mz.x0, z0, sizeof mz.x0);
  int b = kn_nl_points_add(&f->P, &mz, 0, NV, NULL);
  cr_assert_eq(kn_penalty_mesh_topology_build(4, 2, TRI, &f->top, NULL), KN_OK);
  memcpy(f->x, X0, sizeof f->x);
  f->F = (kn_penalty_fem_mesh){.mesh = {4, 2, f->x, TRI, f->top.adj, f->top.vt_start, f->top.vt, NULL},
                               .x = f->x, .pt = f->pt, .verts = VERTS, .nverts = 4};
  f->c = (kn_penalty_contact){.a = -1, .b = b, .n = {0, 0, 1}, .mu = mu, .fem = &f->F};
  f->c.Xm.tri = 0;
  memcpy(f->c.Xm.w, w, 3 * sizeof *w);
  memcpy(f->c.z0, z0, sizeof f->c.z0);
  f->t = (kn_penalty_term){.dt = 0.01, .k = 1e4, .points = &f->P, .c = &f->c, .n = 1, .fems = &f->F, .nfems = 1};
}

static void setup(fixture* f, const double w[3], const double z0[3], double mu) { setup_edge(f, w, z0, mu, 0); }

static void teardown(fixture* f) {
  kn_penalty_term_free(&f->t);
  kn_nl_points_free(&f->P);
  kn_penalty_mesh_topology_free(&f->top);
}

static void residual(fixture* f, const double* v, double r[NV]) {
  memset(r, 0, NV * sizeof *r);
  cr_assert_eq(kn_penalty_term_eval(&f->t, v, NULL, r, NULL, NULL, NULL), KN_OK);
}

/* T against central differences at v (and the triplet path against the dense one); returns the
 * contact's state and the final triangle */
static kn_relax_state check(fixture* f, const double v[NV], int* tri) {
  double r[NV] = {0}, T[NV * NV], S[NV * NV], T2[NV * NV];
  kn_nl_triplets Tt = {0}, St = {0}, Tt2 = {0};
  kn_nl_triplets_reset(&Tt, NV), kn_nl_triplets_reset(&St, NV), kn_nl_triplets_reset(&Tt2, NV);
  cr_assert_eq(kn_penalty_term_eval(&f->t, v, NULL, r, &Tt, &St, NULL), KN_OK);
  dense(&Tt, T), dense(&St, S);
  double r2[NV] = {0};
  kn_penalty_term_move(&f->t, v);
  kn_penalty_fem_walk_add(&f->t, 0, v, r2, &Tt2, NULL, NULL, NULL); /* the triplet path */
  dense(&Tt2, T2);
  double tmax = 0;
  for (int e = 0; e < NV * NV; e++) tmax = fmax(tmax, fabs(T[e]));
  cr_assert_gt(tmax, 0);
  for (int e = 0; e < NV * NV; e++) cr_assert_leq(fabs(T2[e] - T[e]), 1e-12 * tmax);
  /* Newton's third law: the reaction on the face balances the force on the particle */
  for (int a = 0; a < 3; a++) {
    double s = 0, m = 0;
    for (int p = 0; p < NV / 3; p++) s += r[3 * p + a], m = fmax(m, fabs(r[3 * p + a]));
    cr_assert_leq(fabs(s), 1e-14 * m + 1e-300, "axis %d: sum %g", a, s);
  }
  /* central differences of the residual, h = 1e-7 m/s (positions move 1e-9 m): the walk's branch
   * does not change inside that */
  const double eps = 1e-7;
  for (int j = 0; j < NV; j++) {
    double vp[NV], vm[NV], rp[NV], rm[NV];
    memcpy(vp, v, sizeof vp), memcpy(vm, v, sizeof vm);
    vp[j] += eps, vm[j] -= eps;
    residual(f, vp, rp), residual(f, vm, rm);
    for (int i = 0; i < NV; i++) {
      double fd = (rp[i] - rm[i]) / (2 * eps);
      cr_assert_leq(fabs(fd - T[NV * i + j]), 2e-6 * tmax, "T[%d][%d] = %.9g, differences %.9g", i, j, T[NV * i + j], fd);
    }
  }
  /* S symmetric */
  for (int i = 0; i < NV; i++)
    for (int j = 0; j < NV; j++) cr_assert_leq(fabs(S[NV * i + j] - S[NV * j + i]), 1e-12 * tmax);
  kn_penalty_term_move(&f->t, v);
  kn_penalty_fem_walk wk;
  kn_relax_state st = kn_penalty_fem_walk_eval(&f->t, &f->c, v, 0, &wk);
  *tri = wk.o.at.tri;
  if (st == KN_RELAX_DYNAMIC) { /* on the cone of the final face's plane */
    const double* x = f->x;
    double e1[3], e2[3], n[3];
    for (int k = 0; k < 3; k++)
      e1[k] = x[3 * wk.tv[1] + k] - x[3 * wk.tv[0] + k], e2[k] = x[3 * wk.tv[2] + k] - x[3 * wk.tv[0] + k];
    kn_vec3_cross(e1, e2, n);
    double l = sqrt(kn_vec3_dot(n, n)), fn, ft2 = 0;
    for (int k = 0; k < 3; k++) n[k] /= l;
    fn = kn_vec3_dot(wk.f, n);
    for (int k = 0; k < 3; k++) ft2 += (wk.f[k] - fn * n[k]) * (wk.f[k] - fn * n[k]);
    cr_assert_gt(fn, 0);
    cr_assert_leq(fabs(sqrt(ft2) / fn - f->c.mu), 1e-9, "|f_t|/f_n = %.12g, mu %g", sqrt(ft2) / fn, f->c.mu);
  }
  kn_nl_triplets_free(&Tt), kn_nl_triplets_free(&St), kn_nl_triplets_free(&Tt2);
  return st;
}

// a velocity of every vertex and the particle: the mesh deforms (not only translates) over the step
static void velocity(double v[NV], int trial, const double vz[3]) {
  for (int j = 0; j < 12; j++) v[j] = 0.03 * sin(1.7 * j + 0.9 * trial);
  for (int k = 0; k < 3; k++)
    v[12 + k] = vz[k] + 0.01 * cos(2.3 * k + trial), v[15 + k] = vz[k] + 0.01 * sin(1.3 * k + trial);
}

Test(penalty_fem_walk, sticking) {
  fixture f;
  const double w[3] = {0.5, 0.25, 0.25}, z0[3] = {-0.5 + 2e-5, 1e-5, -5e-3}, vz[3] = {0, 0, 0};
  setup(&f, w, z0, 0.5);
  for (int trial = 0; trial < 5; trial++) {
    double v[NV];
    int tri;
    velocity(v, trial, vz);
    cr_assert_eq(check(&f, v, &tri), KN_RELAX_STATIC, "trial %d", trial);
    cr_assert_eq(tri, 0);
  }
  teardown(&f);
}

Test(penalty_fem_walk, sliding_in_a_face) {
  fixture f;
  const double w[3] = {0.5, 0.25, 0.25}, z0[3] = {-0.4, 0.05, -1e-3}, vz[3] = {0, 0, 0};
  setup(&f, w, z0, 0.3);
  for (int trial = 0; trial < 5; trial++) {
    double v[NV];
    int tri;
    velocity(v, trial, vz);
    cr_assert_eq(check(&f, v, &tri), KN_RELAX_DYNAMIC, "trial %d", trial);
    cr_assert_eq(tri, 0);
  }
  teardown(&f);
}

Test(penalty_fem_walk, sliding_across_the_crease) {
  fixture f;
  /* the anchor at (-0.3, 0, 0) in triangle 0, the particle 1 mm under triangle 1 at (0.3, 0.1) */
  const double w[3] = {0.3, 0.35, 0.35}, z0[3] = {0.3, 0.1, 0.06 - 1e-3}, vz[3] = {0, 0, 0};
  setup(&f, w, z0, 0.3);
  for (int trial = 0; trial < 5; trial++) {
    double v[NV];
    int tri;
    velocity(v, trial, vz);
    cr_assert_eq(check(&f, v, &tri), KN_RELAX_DYNAMIC, "trial %d", trial);
    cr_assert_eq(tri, 1, "trial %d: ended on triangle %d", trial, tri);
  }
  teardown(&f);
}

/* the particle a point of an edge of another body at weights (0.7, 0.3): the same three cases, the
 * Jacobian's columns of both its nodes against central differences */
Test(penalty_fem_walk, edge_point_particle) {
  static const struct {
    double w[3], z0[3], mu;
    kn_relax_state state;
    int tri;
  } cases[3] = {{{0.5, 0.25, 0.25}, {-0.5 + 2e-5, 1e-5, -5e-3}, 0.5, KN_RELAX_STATIC, 0},
                {{0.5, 0.25, 0.25}, {-0.4, 0.05, -1e-3}, 0.3, KN_RELAX_DYNAMIC, 0},
                {{0.3, 0.35, 0.35}, {0.3, 0.1, 0.06 - 1e-3}, 0.3, KN_RELAX_DYNAMIC, 1}};
  const double vz[3] = {0, 0, 0};
  for (int c = 0; c < 3; c++) {
    fixture f;
    setup_edge(&f, cases[c].w, cases[c].z0, cases[c].mu, 0.3);
    for (int trial = 0; trial < 5; trial++) {
      double v[NV];
      int tri;
      velocity(v, trial, vz);
      cr_assert_eq(check(&f, v, &tri), cases[c].state, "case %d trial %d", c, trial);
      cr_assert_eq(tri, cases[c].tri, "case %d trial %d: ended on triangle %d", c, trial, tri);
    }
    teardown(&f);
  }
}

/* the lagged passes' potential (kn_penalty_term_lag): at the lag's v its gradient is the full
 * term's residual; elsewhere r is E's gradient and T = S its Hessian (central differences) */
Test(penalty_fem_walk, lagged_potential) {
  fixture f;
  const double w[3] = {0.3, 0.35, 0.35}, z0[3] = {0.3, 0.1, 0.06 - 1e-3}, vz[3] = {0, 0, 0};
  setup(&f, w, z0, 0.3);
  double Yref[3];
  unsigned char act;
  int tri;
  f.t.Y_ref = Yref, f.t.active_ref = &act, f.t.tri_ref = &tri;
  double v[NV], r_full[NV], r_lag[NV];
  velocity(v, 1, vz);
  residual(&f, v, r_full);
  kn_penalty_term_lag(&f.t, v, 1);
  cr_assert(act && tri == 1, "active %d on triangle %d", act, tri);
  residual(&f, v, r_lag);
  double m = 0;
  for (int i = 0; i < NV; i++) m = fmax(m, fabs(r_full[i]));
  cr_assert_gt(m, 0);
  for (int i = 0; i < NV; i++) cr_assert_leq(fabs(r_lag[i] - r_full[i]), 1e-12 * m, "r[%d]", i);
  double v1[NV], r[NV] = {0}, E = 0, T[NV * NV], S[NV * NV];
  for (int j = 0; j < NV; j++) v1[j] = v[j] + 0.004 * cos(0.7 * j);
  kn_nl_triplets Tt = {0}, St = {0};
  kn_nl_triplets_reset(&Tt, NV), kn_nl_triplets_reset(&St, NV);
  cr_assert_eq(kn_penalty_term_eval(&f.t, v1, &E, r, &Tt, &St, NULL), KN_OK);
  dense(&Tt, T), dense(&St, S);
  double tmax = 0, rmax = 0;
  for (int e = 0; e < NV * NV; e++) {
    tmax = fmax(tmax, fabs(T[e]));
    cr_assert_eq(T[e], S[e]);
  }
  for (int i = 0; i < NV; i++) rmax = fmax(rmax, fabs(r[i]));
  const double eps = 1e-6;
  for (int j = 0; j < NV; j++) {
    double vp[NV], vm[NV], rp[NV] = {0}, rm[NV] = {0}, Ep = 0, Em = 0;
    memcpy(vp, v1, sizeof vp), memcpy(vm, v1, sizeof vm);
    vp[j] += eps, vm[j] -= eps;
    kn_penalty_term_eval(&f.t, vp, &Ep, rp, NULL, NULL, NULL);
    kn_penalty_term_eval(&f.t, vm, &Em, rm, NULL, NULL, NULL);
    cr_assert_leq(fabs((Ep - Em) / (2 * eps) - r[j]), 1e-6 * rmax, "dE/dv[%d] %.9g, r %.9g", j, (Ep - Em) / (2 * eps), r[j]);
    for (int i = 0; i < NV; i++)
      cr_assert_leq(fabs((rp[i] - rm[i]) / (2 * eps) - T[NV * i + j]), 1e-6 * tmax, "T[%d][%d]", i, j);
  }
  kn_penalty_term_lag(&f.t, v, 0);
  kn_nl_triplets_free(&Tt), kn_nl_triplets_free(&St);
  teardown(&f);
}
