/* The penalty backend's contact term over material points (penalty/term.c; penalty-coulomb-friction.md
 * §6.11 items 1, 3, 4 where tests/penalty/test_relax.c does not already cover them): its assembled
 * Jacobian T against central differences of its residual (h = 1e-7 m/s, 1e-6 relative) for sticking
 * and sliding contacts between points that share DoFs, the cone |f_t| <= mu f_n with equality when
 * sliding and the anchor's idempotence through the term, S symmetric positive semi-definite and equal
 * to T while every contact sticks, and nothing from a contact above its plane. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "penalty/penalty.h"

#define NV 9

// triplets => a dense NV x NV matrix
static void dense(const kn_nl_triplets* t, double A[NV * NV]) {
  memset(A, 0, NV * NV * sizeof *A);
  for (int k = 0; k < t->nnz; k++) A[NV * t->i[k] + t->j[k]] += t->x[k];
}

/* two nodal points over overlapping DoFs (an MPM-like stencil: a on 0..5, b on 3..8) and contacts
 * between them with tilted normals, deep and shallow, anchors near and far */
typedef struct {
  kn_nl_points P;
  kn_penalty_contact c[4];
  kn_penalty_term t;
} fixture;

static void setup(fixture* f) {
  memset(f, 0, sizeof *f);
  kn_point_map ma = {.x0 = {0, 0, 0}, .n = 2, .col = {0, 3}, .w = {0.7, 0.3}};
  kn_point_map mb = {.x0 = {0, 0, 0}, .n = 2, .col = {3, 6}, .w = {0.4, 0.6}};
  int a = kn_nl_points_add(&f->P, &ma, 0, NV, NULL), b = kn_nl_points_add(&f->P, &mb, 0, NV, NULL);
  const double nn[4][3] = {{0, 0, 1}, {0.3, -0.2, 0.9}, {-0.5, 0.1, 0.8}, {0.1, 0.7, 0.6}};
  const double X[4][3] = {{1e-4, 0, 0}, {-2e-3, 1e-3, 0}, {0, 0, 0}, {3e-5, -1e-5, 0}};
  const double phi0[4] = {-1e-3, -5e-4, -2e-3, -1e-4}, mu[4] = {0.5, 0.3, 0.8, 0.2};
  for (int i = 0; i < 4; i++) {
    kn_penalty_contact* c = &f->c[i];
    double l = sqrt(nn[i][0] * nn[i][0] + nn[i][1] * nn[i][1] + nn[i][2] * nn[i][2]);
    for (int k = 0; k < 3; k++) c->n[k] = nn[i][k] / l;
    double xn = X[i][0] * c->n[0] + X[i][1] * c->n[1] + X[i][2] * c->n[2];
    for (int k = 0; k < 3; k++) c->X[k] = X[i][k] - xn * c->n[k]; /* on the plane */
    c->a = i == 3 ? -1 : a, c->b = b, c->phi0 = phi0[i], c->mu = mu[i];
  }
  f->t = (kn_penalty_term){.dt = 0.01, .k = 1e4, .points = &f->P, .c = f->c, .n = 4};
}

Test(penalty_term, jacobian_against_central_differences) {
  fixture f;
  setup(&f);
  int states[3] = {0};
  for (int trial = 0; trial < 40; trial++) {
    double v[NV], r[NV] = {0}, T[NV * NV], S[NV * NV];
    for (int j = 0; j < NV; j++) v[j] = 0.05 * sin(1.7 * j + 0.9 * trial) + 0.02 * cos(3.1 * j * trial);
    kn_nl_triplets Tt = {0}, St = {0};
    kn_nl_triplets_reset(&Tt, NV), kn_nl_triplets_reset(&St, NV);
    cr_assert_eq(kn_penalty_term_eval(&f.t, v, NULL, r, &Tt, &St, NULL), KN_OK);
    dense(&Tt, T), dense(&St, S);
    /* the same through the triplet path (systems above KN_PENALTY_DENSE_MAX DoFs) */
    double r2[NV] = {0};
    kn_nl_triplets_reset(&Tt, KN_PENALTY_DENSE_MAX + 1), kn_nl_triplets_reset(&St, KN_PENALTY_DENSE_MAX + 1);
    cr_assert_eq(kn_penalty_term_eval(&f.t, v, NULL, r2, &Tt, &St, NULL), KN_OK);
    double T2[NV * NV], S2[NV * NV];
    Tt.n = St.n = NV, dense(&Tt, T2), dense(&St, S2);
    for (int j = 0; j < NV * NV; j++)
      cr_assert(fabs(T2[j] - T[j]) <= 1e-12 * fabs(T[j]) && fabs(S2[j] - S[j]) <= 1e-12 * fabs(S[j]),
                "dense and triplet paths agree");
    kn_nl_triplets_free(&Tt), kn_nl_triplets_free(&St);
    kn_relax_state st0[4];
    for (int i = 0; i < 4; i++) {
      double Z[3], Y[3], fo[3];
      st0[i] = kn_penalty_term_contact(&f.t, i, v, Z, Y, fo, NULL);
      states[st0[i]]++;
    }
    double scale = 0;
    for (int j = 0; j < NV * NV; j++) scale = fmax(scale, fabs(T[j]));
    for (int c = 0; c < NV; c++) {
      const double h = 1e-7;
      double vp[NV], vm[NV], rp[NV] = {0}, rm[NV] = {0};
      memcpy(vp, v, sizeof vp), memcpy(vm, v, sizeof vm);
      vp[c] += h, vm[c] -= h;
      int same = 1;
      for (int i = 0; i < 4; i++) {
        double Z[3], Y[3], fo[3];
        same &= kn_penalty_term_contact(&f.t, i, vp, Z, Y, fo, NULL) == st0[i];
        same &= kn_penalty_term_contact(&f.t, i, vm, Z, Y, fo, NULL) == st0[i];
      }
      if (!same) continue; /* a kink (activation, stick-slip) between the two */
      kn_penalty_term_eval(&f.t, vp, NULL, rp, NULL, NULL, NULL);
      kn_penalty_term_eval(&f.t, vm, NULL, rm, NULL, NULL, NULL);
      for (int rr = 0; rr < NV; rr++) {
        double fd = (rp[rr] - rm[rr]) / (2 * h);
        cr_assert(fabs(fd - T[NV * rr + c]) <= 1e-6 * scale, "trial %d: dr%d/dv%d = %.10g, differences %.10g", trial,
                  rr, c, T[NV * rr + c], fd);
      }
    }
    /* S: symmetric, and x^T S x >= 0 for a few x */
    for (int i = 0; i < NV; i++)
      for (int j = 0; j < NV; j++) cr_assert(fabs(S[NV * i + j] - S[NV * j + i]) <= 1e-15 * scale);
    for (int k = 0; k < 5; k++) {
      double x[NV], q = 0;
      for (int j = 0; j < NV; j++) x[j] = sin(2.3 * j + k);
      for (int i = 0; i < NV; i++)
        for (int j = 0; j < NV; j++) q += x[i] * S[NV * i + j] * x[j];
      cr_assert(q >= -1e-14 * scale, "x^T S x = %g", q);
    }
  }
  cr_assert(states[KN_RELAX_STATIC] > 10 && states[KN_RELAX_DYNAMIC] > 10 && states[KN_RELAX_INACTIVE] > 0,
            "every state exercised: inactive %d, static %d, dynamic %d", states[0], states[1], states[2]);
  kn_penalty_term_free(&f.t);
  kn_nl_points_free(&f.P);
}

Test(penalty_term, cone_idempotence_and_sticking_symmetry) {
  fixture f;
  setup(&f);
  int dynamic = 0;
  for (int trial = 0; trial < 40; trial++) {
    double v[NV];
    for (int j = 0; j < NV; j++) v[j] = 0.05 * sin(1.3 * j + 0.7 * trial);
    for (int i = 0; i < 4; i++) {
      kn_penalty_contact* c = &f.c[i];
      double Z[3], Y[3], fo[3];
      kn_relax_state st = kn_penalty_term_contact(&f.t, i, v, Z, Y, fo, NULL);
      double fn = fo[0] * c->n[0] + fo[1] * c->n[1] + fo[2] * c->n[2], ft[3];
      for (int k = 0; k < 3; k++) ft[k] = fo[k] - fn * c->n[k];
      double tn = sqrt(ft[0] * ft[0] + ft[1] * ft[1] + ft[2] * ft[2]);
      if (st == KN_RELAX_INACTIVE) {
        cr_assert(fo[0] == 0 && fo[1] == 0 && fo[2] == 0);
        continue;
      }
      cr_assert(fn > 0 && tn <= c->mu * fn * (1 + 1e-12), "inside the cone: |f_t| %g, mu f_n %g", tn, c->mu * fn);
      if (st == KN_RELAX_DYNAMIC) {
        dynamic++;
        cr_assert(fabs(tn - c->mu * fn) <= 1e-12 * fn, "on the cone when sliding: |f_t| %.15g, mu f_n %.15g", tn,
                  c->mu * fn);
      }
      /* idempotence: the relaxed anchor as the anchor stays */
      double X0[3], Y2[3];
      memcpy(X0, c->X, sizeof X0);
      memcpy(c->X, Y, sizeof Y);
      kn_penalty_term_contact(&f.t, i, v, Z, Y2, fo, NULL);
      memcpy(c->X, X0, sizeof X0);
      for (int k = 0; k < 3; k++) cr_assert(fabs(Y2[k] - Y[k]) <= 1e-15, "P(Y, Z) = Y");
    }
  }
  cr_assert(dynamic > 10, "%d sliding contacts", dynamic);
  /* every contact sticking (anchors at their points' projections): T = S, symmetric */
  double v[NV] = {0}, r[NV] = {0}, T[NV * NV], S[NV * NV];
  for (int i = 0; i < 4; i++) memset(f.c[i].X, 0, sizeof f.c[i].X);
  kn_nl_triplets Tt = {0}, St = {0};
  kn_nl_triplets_reset(&Tt, NV), kn_nl_triplets_reset(&St, NV);
  kn_penalty_term_eval(&f.t, v, NULL, r, &Tt, &St, NULL);
  dense(&Tt, T), dense(&St, S);
  for (int j = 0; j < NV * NV; j++) cr_assert(fabs(T[j] - S[j]) <= 1e-12 * fabs(S[j]) + 1e-300, "T = S sticking");
  /* at v = 0 the springs push B out along n: r_b = -dt k phi0 n (J_b^T) */
  double Z[3], Y[3], fo[3];
  kn_penalty_term_contact(&f.t, 0, v, Z, Y, fo, NULL);
  for (int k = 0; k < 3; k++) cr_assert(fabs(fo[k] + 1e4 * f.c[0].phi0 * f.c[0].n[k]) <= 1e-12);
  kn_nl_triplets_free(&Tt), kn_nl_triplets_free(&St);
  kn_penalty_term_free(&f.t);
  kn_nl_points_free(&f.P);
}

/* The lagged passes' term (kn_penalty_term_lag): at the point it is lagged at its gradient is the
 * relaxed term's residual (so the passes' fixed point is a root), its residual is the gradient of
 * its energy and its Jacobian that residual's derivative (central differences), symmetric */
Test(penalty_term, lagged_potential) {
  fixture f;
  setup(&f);
  double Yref[12];
  unsigned char act[4];
  f.t.Y_ref = Yref, f.t.active_ref = act;
  for (int trial = 0; trial < 20; trial++) {
    double v[NV], r0[NV] = {0}, r1[NV] = {0}, T[NV * NV];
    for (int j = 0; j < NV; j++) v[j] = 0.05 * sin(1.1 * j + 0.8 * trial);
    kn_penalty_term_eval(&f.t, v, NULL, r0, NULL, NULL, NULL);
    kn_penalty_term_lag(&f.t, v, 1);
    cr_assert(f.t.use_ref);
    double E = 0;
    kn_nl_triplets Tt = {0};
    kn_nl_triplets_reset(&Tt, NV);
    kn_penalty_term_eval(&f.t, v, &E, r1, &Tt, NULL, NULL);
    dense(&Tt, T);
    kn_nl_triplets_free(&Tt);
    for (int j = 0; j < NV; j++) cr_assert(fabs(r1[j] - r0[j]) <= 1e-12 * (1 + fabs(r0[j])), "lagged at v: r equal");
    for (int i = 0; i < NV; i++)
      for (int j = 0; j < NV; j++) cr_assert(fabs(T[NV * i + j] - T[NV * j + i]) <= 1e-12 * (1 + fabs(T[NV * i + j])));
    for (int cidx = 0; cidx < NV; cidx++) {
      const double h = 1e-7;
      double vp[NV], vm[NV], rp[NV] = {0}, rm[NV] = {0}, Ep = 0, Em = 0;
      memcpy(vp, v, sizeof vp), memcpy(vm, v, sizeof vm);
      vp[cidx] += h, vm[cidx] -= h;
      kn_penalty_term_eval(&f.t, vp, &Ep, rp, NULL, NULL, NULL);
      kn_penalty_term_eval(&f.t, vm, &Em, rm, NULL, NULL, NULL);
      cr_assert(fabs((Ep - Em) / (2 * h) - r1[cidx]) <= 1e-6 * (1e-3 + fabs(r1[cidx])), "dE/dv%d = %g, r %g", cidx,
                (Ep - Em) / (2 * h), r1[cidx]);
      for (int rr = 0; rr < NV; rr++)
        cr_assert(fabs((rp[rr] - rm[rr]) / (2 * h) - T[NV * rr + cidx]) <= 1e-6 * (1 + fabs(T[NV * rr + cidx])),
                  "dr%d/dv%d", rr, cidx);
    }
    kn_penalty_term_lag(&f.t, v, 0);
    cr_assert(!f.t.use_ref);
  }
  f.t.Y_ref = NULL, f.t.active_ref = NULL;
  kn_penalty_term_free(&f.t);
  kn_nl_points_free(&f.P);
}

/* The solver's active-set steps (kn_penalty_term_pieces, pieces.c): recorded with on = 2 at v1, every
 * contact active there is held sticking at any v2, its residual -dt J_rel^T k (X - Z(v2)) (the static
 * piece continued past the cone and above the plane), the Jacobian that linear residual's
 * derivative (central differences, exact but for round-off: 1e-9 relative) and S = T; recorded
 * with on = 1 a contact inactive at v1 stays inactive; off, the natural term again, bit for bit */
Test(penalty_term, pieces_hold_the_recorded_states) {
  fixture f;
  setup(&f);
  unsigned char piece[4];
  f.t.piece = piece;
  int held = 0, dropped = 0;
  for (int trial = 0; trial < 20; trial++) {
    double v1[NV], v2[NV], r[NV] = {0}, want[NV] = {0}, r0[NV] = {0}, rn[NV] = {0}, T[NV * NV], S[NV * NV];
    for (int j = 0; j < NV; j++)
      v1[j] = 0.05 * sin(1.3 * j + 0.7 * trial), v2[j] = 0.2 * cos(0.9 * j + 1.1 * trial) - 0.02;
    kn_penalty_term_eval(&f.t, v2, NULL, r0, NULL, NULL, NULL);
    kn_penalty_term_pieces(&f.t, v1, 2);
    cr_assert(f.t.use_piece);
    for (int i = 0; i < 4; i++) {
      double Z[3], Y[3], fz[3], w[3], g[3];
      f.t.use_piece = 0;
      kn_relax_state at1 = kn_penalty_term_contact(&f.t, i, v1, Z, Y, fz, NULL);
      f.t.use_piece = 1;
      cr_assert_eq(piece[i], at1 == KN_RELAX_INACTIVE ? KN_RELAX_INACTIVE : KN_RELAX_STATIC, "contact %d", i);
      if (at1 == KN_RELAX_INACTIVE) continue;
      held++;
      kn_nl_pair_velocity(&f.P, f.c[i].a, f.c[i].b, v2, w);
      for (int k = 0; k < 3; k++) g[k] = -f.t.dt * f.t.k * (f.c[i].X[k] - (f.c[i].phi0 * f.c[i].n[k] + f.t.dt * w[k]));
      kn_nl_pair_add_force(&f.P, f.c[i].a, f.c[i].b, 1.0, g, want);
    }
    kn_nl_triplets Tt = {0}, St = {0};
    kn_nl_triplets_reset(&Tt, NV), kn_nl_triplets_reset(&St, NV);
    kn_penalty_term_eval(&f.t, v2, NULL, r, &Tt, &St, NULL);
    dense(&Tt, T), dense(&St, S);
    kn_nl_triplets_free(&Tt), kn_nl_triplets_free(&St);
    for (int j = 0; j < NV; j++)
      cr_assert(fabs(r[j] - want[j]) <= 1e-12 * (1 + fabs(want[j])), "r%d %g, want %g", j, r[j], want[j]);
    for (int j = 0; j < NV * NV; j++) cr_assert(S[j] == T[j], "S = T on the sticking piece");
    for (int cidx = 0; cidx < NV; cidx++) {
      const double h = 1e-4; /* linear: any h */
      double vp[NV], vm[NV], rp[NV] = {0}, rm[NV] = {0};
      memcpy(vp, v2, sizeof vp), memcpy(vm, v2, sizeof vm);
      vp[cidx] += h, vm[cidx] -= h;
      kn_penalty_term_eval(&f.t, vp, NULL, rp, NULL, NULL, NULL);
      kn_penalty_term_eval(&f.t, vm, NULL, rm, NULL, NULL, NULL);
      for (int rr = 0; rr < NV; rr++)
        cr_assert(fabs((rp[rr] - rm[rr]) / (2 * h) - T[NV * rr + cidx]) <= 1e-9 * (1 + fabs(T[NV * rr + cidx])),
                  "dr%d/dv%d", rr, cidx);
    }
    /* on = 1: a contact inactive at v2 recorded there adds nothing at v1 */
    kn_penalty_term_pieces(&f.t, v2, 1);
    double r1[NV] = {0}, want1[NV] = {0};
    kn_penalty_term_eval(&f.t, v1, NULL, r1, NULL, NULL, NULL);
    for (int i = 0; i < 4; i++) {
      double Z[3], Y[3], fz[3], g[3];
      f.t.use_piece = 0;
      kn_relax_state at2 = kn_penalty_term_contact(&f.t, i, v2, Z, Y, fz, NULL);
      kn_relax_state at1 = kn_penalty_term_contact(&f.t, i, v1, Z, Y, fz, NULL);
      f.t.use_piece = 1;
      cr_assert_eq(piece[i], at2, "contact %d recorded as it is at v2", i);
      if (at2 == KN_RELAX_INACTIVE && at1 != KN_RELAX_INACTIVE) dropped++;
      if (at2 == KN_RELAX_INACTIVE) continue;
      if (at2 == KN_RELAX_STATIC)
        for (int k = 0; k < 3; k++) fz[k] = f.t.k * (f.c[i].X[k] - Z[k]);
      for (int k = 0; k < 3; k++) g[k] = -f.t.dt * fz[k];
      kn_nl_pair_add_force(&f.P, f.c[i].a, f.c[i].b, 1.0, g, want1);
    }
    for (int j = 0; j < NV; j++) cr_assert(fabs(r1[j] - want1[j]) <= 1e-12 * (1 + fabs(want1[j])), "on = 1: r%d", j);
    kn_penalty_term_pieces(&f.t, NULL, 0);
    cr_assert(!f.t.use_piece);
    kn_penalty_term_eval(&f.t, v2, NULL, rn, NULL, NULL, NULL);
    for (int j = 0; j < NV; j++) cr_assert(rn[j] == r0[j], "off: the natural term");
  }
  cr_log_info("pieces: %d contacts held sticking, %d recorded inactive where active", held, dropped);
  cr_assert(held > 20, "%d contacts held", held);
  cr_assert(dropped > 0, "no contact recorded inactive where it is active: the case is not exercised");
  f.t.piece = NULL;
  kn_penalty_term_free(&f.t);
  kn_nl_points_free(&f.P);
}

/* A contact whose anchor side is a triangle mesh (term.c's mesh path: Z taken into the mesh's frame by
 * R^T (Z - o), the walk of mesh_relax.c, dY/dZ = R D R^T back): a bumpy 4 x 4-cell patch (5 mm
 * cells, 0.4 mm bumps) turned by a general rotation, the points moving up to ~1 mm in a step so the
 * anchors cross edges. T against central differences of the residual, 1e-6 relative as above,
 * skipping a column where the one-sided differences disagree by more than 1e-4 (a kink: stick-slip,
 * an edge or a state reached between the two) */
Test(penalty_term, mesh_side_jacobian_against_central_differences) {
  fixture f;
  setup(&f);
  enum { N = 4 };
  double x[3 * (N + 1) * (N + 1)];
  int tri[3 * 2 * N * N], t = 0;
  for (int j = 0; j <= N; j++)
    for (int i = 0; i <= N; i++) {
      double* p = x + 3 * (j * (N + 1) + i);
      p[0] = -0.01 + 0.005 * i, p[1] = -0.01 + 0.005 * j, p[2] = 4e-4 * sin(300 * p[0] + 1) * cos(250 * p[1]);
    }
  for (int j = 0; j < N; j++)
    for (int i = 0; i < N; i++) {
      int a = j * (N + 1) + i, b = a + 1, c = a + N + 1, d = c + 1, q[6] = {a, b, d, a, d, c};
      memcpy(tri + 3 * t, q, sizeof q), t += 2;
    }
  kn_penalty_mesh_topology top;
  kn_error err;
  cr_assert_eq(kn_penalty_mesh_topology_build((N + 1) * (N + 1), 2 * N * N, tri, &top, &err), KN_OK);
  double spheres[4 * 2 * N * N];
  kn_penalty_mesh mesh = {(N + 1) * (N + 1), 2 * N * N, x, tri, top.adj, top.vt_start, top.vt, NULL};
  kn_penalty_mesh_spheres(&mesh, spheres);
  mesh.tsphere = spheres;
  /* R = R_x(0.4) R_z(0.7); the contact frame's origin on the mesh at local (0.001, -0.002) */
  double cx = cos(0.4), sx = sin(0.4), cz = cos(0.7), sz = sin(0.7);
  double R[9] = {cz, -sz, 0, cx * sz, cx * cz, -sx, sx * sz, sx * cz, cx}, yl[3] = {0.001, -0.002, 0};
  kn_penalty_mesh_point o0;
  kn_penalty_mesh_nearest(&mesh, yl, NULL, 0, &o0);
  kn_penalty_mesh_point_x(&mesh, &o0, yl);
  for (int i = 0; i < 4; i++) {
    kn_penalty_contact* c = &f.c[i];
    c->mesh = &mesh;
    memcpy(c->R, R, sizeof R);
    for (int k = 0; k < 3; k++) {
      c->n[k] = R[3 * k + 2]; /* the frame's normal: the local +z */
      c->o[k] = -(R[3 * k] * yl[0] + R[3 * k + 1] * yl[1] + R[3 * k + 2] * yl[2]);
    }
    /* the anchor near the origin, i mm off */
    double a[3] = {yl[0] + 1e-3 * i * cos(i), yl[1] + 1e-3 * i * sin(i), 0};
    kn_penalty_mesh_nearest(&mesh, a, NULL, 0, &c->Xm);
    kn_penalty_mesh_point_x(&mesh, &c->Xm, a);
    for (int k = 0; k < 3; k++) c->X[k] = c->o[k] + R[3 * k] * a[0] + R[3 * k + 1] * a[1] + R[3 * k + 2] * a[2];
  }
  int tested = 0, states[3] = {0};
  for (int trial = 0; trial < 40; trial++) {
    double v[NV], r[NV] = {0}, T[NV * NV];
    for (int j = 0; j < NV; j++) v[j] = 0.1 * sin(1.7 * j + 0.9 * trial) + 0.04 * cos(3.1 * j * trial);
    kn_nl_triplets Tt = {0};
    kn_nl_triplets_reset(&Tt, NV);
    cr_assert_eq(kn_penalty_term_eval(&f.t, v, NULL, r, &Tt, NULL, NULL), KN_OK);
    dense(&Tt, T);
    kn_nl_triplets_free(&Tt);
    for (int i = 0; i < 4; i++) {
      double Z[3], Y[3], fo[3];
      states[kn_penalty_term_contact(&f.t, i, v, Z, Y, fo, NULL)]++;
    }
    double scale = 0;
    for (int j = 0; j < NV * NV; j++) scale = fmax(scale, fabs(T[j]));
    for (int c = 0; c < NV; c++) {
      const double h = 1e-7;
      double vp[NV], vm[NV], rp[NV] = {0}, rm[NV] = {0};
      memcpy(vp, v, sizeof vp), memcpy(vm, v, sizeof vm);
      vp[c] += h, vm[c] -= h;
      kn_penalty_term_eval(&f.t, vp, NULL, rp, NULL, NULL, NULL);
      kn_penalty_term_eval(&f.t, vm, NULL, rm, NULL, NULL, NULL);
      int kink = 0;
      for (int rr = 0; rr < NV; rr++) kink |= fabs((rp[rr] - r[rr]) - (r[rr] - rm[rr])) / h > 1e-4 * scale;
      if (kink) continue;
      tested++;
      for (int rr = 0; rr < NV; rr++) {
        double fd = (rp[rr] - rm[rr]) / (2 * h);
        cr_assert(fabs(fd - T[NV * rr + c]) <= 1e-6 * scale, "trial %d: dr%d/dv%d = %.10g, differences %.10g", trial,
                  rr, c, T[NV * rr + c], fd);
      }
    }
  }
  cr_assert(states[KN_RELAX_DYNAMIC] > 20 && states[KN_RELAX_STATIC] > 5 && tested > 200,
            "exercised: static %d, dynamic %d, %d columns compared", states[1], states[2], tested);
  kn_penalty_mesh_topology_free(&top);
  kn_penalty_term_free(&f.t);
  kn_nl_points_free(&f.P);
}
