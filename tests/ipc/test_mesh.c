/* The ipc term's mesh-mesh pairs (ipc/mesh.c) through point maps, digest §6, §9.7 items 5, 6, 9:
 * - the energy's gradient against central differences of the energy, and the exact (unprojected)
 *   Hessian against central differences of the gradient, for a point-triangle pair in each of its
 *   cases (interior PT, PE, PP), an edge-edge pair (EE and PE cases) and a nearly parallel one
 *   (its PE case, the mollifier on: the 12-vertex stencil of §6.4),
 *   each with lagged friction (mu 0.5, lambda and T lagged at another
 *   v): side A's vertices are nodal points (an FEM body's map), side B a rigid body's points
 *   (x = x0 + dt (v_lin + omega x r), a dense B); relative error to the largest entry < 1e-6;
 * - with the projection on, the assembled Hessian is PSD (eigenvalues >= -1e-12 |H|);
 * - CCD: a vertex fired through the triangle at 1000 times its distance per step gets a step
 *   alpha with the pair still at >= 0.1 of its distance (ACCD's rule), and the swept broad phase
 *   finds it though its start boxes are far apart. */
#include <criterion/criterion.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/ipc.h"

#define DHAT 1e-3

typedef struct {
  kn_nl_points P;
  kn_ipc_surface s[2];
  int pt_a[3], pt_b[3], tri[3], edge[2];
  double B[3][18], rest_a[9], rest_b[9];
  int pairs[2];
  double mu[1];
  kn_ipc_mesh mesh;
  kn_ipc_term t;
  int na, nv; /* DoFs: 3 per A vertex, then 6 rigid */
} fixture;

/* A: na vertices xa (nodal, DoFs 3k..3k+3), B: nb vertices xb on a rigid body about c (6 DoFs
 * after A's); kind 0: A a vertex, B a triangle; 1: two edges */
static void setup(fixture* f, int edge_edge, const double* xa, const double* xb) {
  memset(f, 0, sizeof *f);
  int na = edge_edge ? 2 : 1, nb = edge_edge ? 2 : 3;
  f->na = na, f->nv = 3 * na + 6;
  for (int k = 0; k < na; k++) {
    kn_point_map m = {.n = 1, .col = {3 * k}, .w = {1}};
    memcpy(m.x0, xa + 3 * k, sizeof m.x0);
    f->pt_a[k] = kn_nl_points_add(&f->P, &m, 0, 3 * na, NULL);
    memcpy(f->rest_a + 3 * k, xa + 3 * k, 3 * sizeof(double));
  }
  const double c[3] = {0.3, 0.2, -0.1}; /* the rigid body's origin */
  for (int k = 0; k < nb; k++) {
    double r[3] = {xb[3 * k] - c[0], xb[3 * k + 1] - c[1], xb[3 * k + 2] - c[2]}, *B = f->B[k];
    memset(B, 0, sizeof f->B[k]);
    for (int i = 0; i < 3; i++) B[6 * i + i] = 1;
    /* omega x r = -[r]x omega */
    B[0 * 6 + 4] = r[2], B[0 * 6 + 5] = -r[1], B[1 * 6 + 3] = -r[2], B[1 * 6 + 5] = r[0], B[2 * 6 + 3] = r[1],
                   B[2 * 6 + 4] = -r[0];
    kn_point_map m = {.n = 0, .B = B};
    memcpy(m.x0, xb + 3 * k, sizeof m.x0);
    f->pt_b[k] = kn_nl_points_add(&f->P, &m, 3 * na, 6, NULL);
    memcpy(f->rest_b + 3 * k, xb + 3 * k, 3 * sizeof(double));
  }
  f->tri[0] = 0, f->tri[1] = 1, f->tri[2] = 2, f->edge[0] = 0, f->edge[1] = 1;
  f->s[0] = (kn_ipc_surface){.nvert = na, .pt = f->pt_a, .rest = f->rest_a, .nedge = edge_edge, .edge = f->edge};
  f->s[1] = (kn_ipc_surface){.nvert = nb, .pt = f->pt_b, .rest = f->rest_b, .ntri = !edge_edge, .tri = f->tri,
                             .nedge = edge_edge, .edge = f->edge};
  f->pairs[0] = 0, f->pairs[1] = 1, f->mu[0] = 0.5;
  f->mesh = (kn_ipc_mesh){.surf = f->s, .nsurf = 2, .npair = 1, .pairs = f->pairs, .mu = f->mu};
  f->t = (kn_ipc_term){.dt = 0.01, .dhat = DHAT, .kappa = 2.5e6, .eps_v = 1e-3, .ccd = 0.9, .points = &f->P,
                       .mesh = &f->mesh};
}
static void teardown(fixture* f) {
  kn_ipc_mesh_free(&f->mesh);
  kn_nl_points_free(&f->P);
}

// (v) => E, r, H (dense nv x nv, when non-NULL)
static double eval(fixture* f, const double* v, double* r, double* H) {
  kn_nl_triplets T = {0};
  kn_nl_triplets_reset(&T, f->nv);
  double E = 0;
  kn_error err = {0};
  memset(r, 0, (size_t)f->nv * sizeof *r);
  cr_assert_eq(kn_ipc_term_eval(&f->t, v, &E, r, H ? &T : NULL, NULL, &err), KN_OK, "%s", err.msg);
  if (H) {
    memset(H, 0, (size_t)(f->nv * f->nv) * sizeof *H);
    for (int k = 0; k < T.nnz; k++) H[T.i[k] * f->nv + T.j[k]] += T.x[k];
  }
  kn_nl_triplets_free(&T);
  return E;
}

static void fd_check(int edge_edge, const double* xa, const double* xb, kn_dist_kind kind, const char* what) {
  double x[12];
  memcpy(x, xa, (edge_edge ? 6 : 3) * sizeof(double)), memcpy(x + (edge_edge ? 6 : 3), xb, (edge_edge ? 6 : 9) * sizeof(double));
  kn_dist_case dc = edge_edge ? kn_dist_edge_edge_case(x) : kn_dist_point_triangle_case(x);
  cr_assert_eq(dc.kind, kind, "%s: distance case %d, expected %d", what, dc.kind, kind);
  fixture f;
  setup(&f, edge_edge, xa, xb);
  int n = f.nv;
  double v0[12], vl[12], r[12], H[144], v[12], rp[12], rm[12];
  unsigned seed = 7;
  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    v0[i] = 2e-3 * (((seed >> 8) & 0xffff) / 65536.0 - 0.5); /* |dt v| ~ 1e-5 m, the gaps ~ 5e-4 m */
    vl[i] = 0.5 * v0[i] + (i % 3 == 0 ? 1e-3 : 0);
  }
  kn_error err = {0};
  cr_assert_eq(kn_ipc_mesh_lag(&f.t, vl, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(f.mesh.nfr, 1, "%s: one friction pair lagged, got %d", what, f.mesh.nfr);
  cr_assert_gt(f.mesh.fr[0].lambda, 0, "%s", what);
  f.mesh.exact_hessian = 1;
  double E = eval(&f, v0, r, H);
  cr_assert(E > 0 && isfinite(E), "%s: energy %g", what, E);
  double rmax = 0, hmax = 0, eg = 0, eh = 0;
  for (int i = 0; i < n; i++) rmax = fmax(rmax, fabs(r[i]));
  for (int i = 0; i < n * n; i++) hmax = fmax(hmax, fabs(H[i]));
  for (int j = 0; j < n; j++) {
    const double h = 1e-7; /* 1e-9 m of motion */
    memcpy(v, v0, sizeof v);
    v[j] += h;
    double Ep = eval(&f, v, rp, NULL);
    v[j] -= 2 * h;
    double Em = eval(&f, v, rm, NULL);
    eg = fmax(eg, fabs((Ep - Em) / (2 * h) - r[j]) / rmax);
    for (int i = 0; i < n; i++) eh = fmax(eh, fabs((rp[i] - rm[i]) / (2 * h) - H[i * n + j]) / hmax);
  }
  cr_log_info("%s: gradient error %.2e, Hessian error %.2e (relative to the largest entry)", what, eg, eh);
  cr_expect(eg < 1e-6 && eh < 1e-6, "%s: gradient error %.2e, Hessian error %.2e", what, eg, eh);
  /* projected: PSD */
  f.mesh.exact_hessian = 0;
  eval(&f, v0, r, H);
  double w[12];
  cr_assert_eq(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', n, H, n, w), 0);
  cr_expect(w[0] >= -1e-12 * hmax, "%s: smallest eigenvalue %.3g of |H| %.3g", what, w[0], hmax);
  teardown(&f);
}

static const double TRI[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};

Test(ipc_mesh, point_triangle_derivatives) {
  double p_in[3] = {0.2, 0.3, 0.5 * DHAT}, p_edge[3] = {0.5, -0.3 * DHAT, 0.4 * DHAT},
         p_corner[3] = {-0.3 * DHAT, -0.3 * DHAT, 0.4 * DHAT};
  fd_check(0, p_in, TRI, KN_DIST_PT, "PT interior");
  fd_check(0, p_edge, TRI, KN_DIST_PE, "PT as PE");
  fd_check(0, p_corner, TRI, KN_DIST_PP, "PT as PP");
}

Test(ipc_mesh, edge_edge_derivatives) {
  double a[6] = {0, 0, 0, 1, 0, 0};
  double cross[6] = {0.5, -0.5, 0.5 * DHAT, 0.4, 0.5, 0.6 * DHAT};           /* EE, not mollified */
  double end[6] = {0.5, 0.3 * DHAT, 0.4 * DHAT, 0.6, 1, 0.5 * DHAT};         /* b0 near a's middle: PE */
  double parallel[6] = {0.2, 0, 0.5 * DHAT, 1.2, 0.02, 0.5 * DHAT};          /* c = 4e-4 < eps_x ~ 1e-3; closest at b0: PE */
  fd_check(1, a, cross, KN_DIST_EE, "EE");
  fd_check(1, a, end, KN_DIST_PE, "EE as PE");
  fd_check(1, a, parallel, KN_DIST_PE, "EE nearly parallel, a PE case, mollified");
  /* the mollifier is on for the last one and off for the first (digest §6.4) */
  double x[12];
  memcpy(x, a, sizeof a), memcpy(x + 6, parallel, sizeof parallel);
  cr_expect_lt(kn_dist_edge_mollifier(x, 1e-3 * 1 * 1.0004, NULL, NULL), 0.9);
  memcpy(x + 6, cross, sizeof cross);
  cr_expect_eq(kn_dist_edge_mollifier(x, 1e-3 * 1 * 1.01, NULL, NULL), 1.0);
}

Test(ipc_mesh, ccd_stops_a_vertex_fired_through_a_triangle) {
  fixture f;
  double p[3] = {0.2, 0.3, 0.002}; /* 2 mm above the triangle: its start box is 1 mm from it with dhat 1e-3 */
  setup(&f, 0, p, TRI);
  double v[9] = {0}, dir[9] = {0};
  dir[2] = -0.002 * 1000 / f.t.dt; /* 1000 times its distance in one step, straight down */
  double alpha = kn_ipc_term_max_step(&f.t, v, dir);
  cr_assert(alpha > 0 && alpha < 1, "alpha %g", alpha);
  double z = 0.002 + alpha * f.t.dt * dir[2];
  cr_log_info("vertex fired through the triangle: alpha %.4g leaves it %.4g m above (started 0.002)", alpha, z);
  cr_expect(z >= 0.1 * 0.002 * (1 - 1e-9), "the vertex ends %g m above the triangle, below 0.1 of its start", z);
  cr_expect(z <= 0.002, "it moved the wrong way");
  /* and the energy there is finite: no crossing */
  double vv[9], r[9];
  for (int i = 0; i < 9; i++) vv[i] = alpha * dir[i];
  cr_expect(isfinite(eval(&f, vv, r, NULL)));
  teardown(&f);
}

/* The line search's pairs from the CCD sweep's kept candidates (ipc/mesh_cache.c): a vertex 3 dhat
 * above the triangle (beyond dhat at v) moved down to 0.5 dhat of it at alpha = 1 by p, so the pair
 * enters the constraint set during the line search. After max_step (which keeps the candidates),
 * the energy and gradient at alpha = 1, 0.5, 0.25 and at v itself are bitwise those of a term that
 * never kept any (a fresh fixture: the trees at every evaluation); at alpha = 1 the pair has its
 * barrier (E > 0), so it was caught; a point beyond the sweep (alpha = 2, the vertex 1 dhat below
 * the plane but beside the triangle) falls back on the trees and agrees too. */
Test(ipc_mesh, kept_candidates_give_the_trees_pairs) {
  fixture f, g;
  double p[3] = {0.2, 0.3, 3 * DHAT};
  setup(&f, 0, p, TRI);
  setup(&g, 0, p, TRI);
  double v[9] = {0}, dir[9] = {0};
  dir[0] = 0.6 / f.t.dt * 0.5; /* sideways: at alpha = 2 the vertex is off the triangle */
  dir[2] = -2.5 * DHAT / f.t.dt;
  double alpha = kn_ipc_term_max_step(&f.t, v, dir);
  cr_assert_eq(alpha, 1.0, "nothing to stop: alpha %g", alpha);
  cr_assert(f.mesh.cache, "max_step should keep the sweep's candidates");
  double as[] = {1, 0.5, 0.25, 0, 2};
  for (int k = 0; k < 5; k++) {
    double vv[9], rf[9], rg[9];
    for (int i = 0; i < 9; i++) vv[i] = as[k] * dir[i];
    double Ef = eval(&f, vv, rf, NULL), Eg = eval(&g, vv, rg, NULL);
    cr_assert_eq(g.mesh.cache, NULL);
    cr_assert(Ef == Eg, "alpha %g: E %.17g with the kept candidates, %.17g with the trees", as[k], Ef, Eg);
    cr_assert(!memcmp(rf, rg, sizeof rf), "alpha %g: the gradients differ", as[k]);
    if (k == 0) cr_assert_gt(Ef, 0, "the pair entering within dhat at alpha 1 should have its barrier");
    if (k == 3) cr_assert_eq(Ef, 0, "at v the pair is beyond dhat");
  }
  teardown(&f);
  teardown(&g);
}
