/* The penalty backend's contact term (penalty.h; penalty-coulomb-friction.md §3.1, §3.3, §3.7.1,
 * §3.7.4): per contact a zero-rest-length spring from B's material point Z(v) to its anchor on A's
 * local plane, the anchor relaxed into the friction cone at every evaluation (relax.c against the
 * plane), residuals in impulses (r = M (v - v*) - dt f, as smooth/contact.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "penalty/penalty.h"

// the plane n.x = 0 as a level set (ctx: n)
static double plane_phi(void* ctx, const double x[3], double n[3], double H[9]) {
  const double* m = ctx;
  memcpy(n, m, 3 * sizeof *n);
  if (H) memset(H, 0, 9 * sizeof *H);
  return m[0] * x[0] + m[1] * x[1] + m[2] * x[2];
}

/* a contact on a mesh side (§3.6): Z into the mesh's frame, the walk there, Y and dY/dZ = R D R^T
 * back */
static kn_relax_state mesh_contact(const kn_penalty_term* t, const kn_penalty_contact* c, const double Z[3],
                                   double Y[3], double f[3], double dfdZ[9]) {
  kn_penalty_mesh_relax_out local, *o = &local;
  const double* R = c->R;
  double d[3] = {Z[0] - c->o[0], Z[1] - c->o[1], Z[2] - c->o[2]}, Zl[3];
  for (int k = 0; k < 3; k++) Zl[k] = R[k] * d[0] + R[3 + k] * d[1] + R[6 + k] * d[2];
  kn_penalty_mesh_relax(c->mesh, &c->Xm, Zl, c->mu, o);
  if (o->state == KN_RELAX_INACTIVE) {
    memcpy(Y, c->X, 3 * sizeof *Y);
    if (f) memset(f, 0, 3 * sizeof *f);
    if (dfdZ) memset(dfdZ, 0, 9 * sizeof *dfdZ);
    return KN_RELAX_INACTIVE;
  }
  for (int k = 0; k < 3; k++) Y[k] = c->o[k] + R[3 * k] * o->Y[0] + R[3 * k + 1] * o->Y[1] + R[3 * k + 2] * o->Y[2];
  const double kc = kn_penalty_contact_k(t, c);
  if (f)
    for (int k = 0; k < 3; k++) f[k] = kc * (Y[k] - Z[k]);
  if (dfdZ) { /* k (R D R^T - I) */
    double DRt[9];
    for (int r = 0; r < 3; r++)
      for (int q = 0; q < 3; q++)
        DRt[3 * r + q] = o->dYdZ[3 * r] * R[3 * q] + o->dYdZ[3 * r + 1] * R[3 * q + 1] + o->dYdZ[3 * r + 2] * R[3 * q + 2];
    for (int r = 0; r < 3; r++)
      for (int q = 0; q < 3; q++)
        dfdZ[3 * r + q] = kc * (R[3 * r] * DRt[q] + R[3 * r + 1] * DRt[3 + q] + R[3 * r + 2] * DRt[6 + q] - (r == q));
  }
  return o->state;
}

/* a contact on an FEM boundary: the walk at the iterate's positions, in the world */
static kn_relax_state fem_contact(const kn_penalty_term* t, const kn_penalty_contact* c, const double* v, double Z[3],
                                  double Y[3], double f[3], double dfdZ[9]) {
  kn_penalty_fem_walk wk;
  kn_relax_state st = kn_penalty_fem_walk_eval(t, c, v, 0, &wk);
  memcpy(Z, wk.Z, sizeof wk.Z);
  if (st == KN_RELAX_INACTIVE) memcpy(Y, Z, 3 * sizeof *Y);
  else memcpy(Y, wk.o.Y, 3 * sizeof *Y);
  if (f) memcpy(f, wk.f, sizeof wk.f);
  if (dfdZ)
    for (int k = 0; k < 9; k++)
      dfdZ[k] = st == KN_RELAX_INACTIVE ? 0.0 : kn_penalty_contact_k(t, c) * (wk.o.dYdZ[k] - (k % 4 == 0));
  return st;
}

kn_relax_state kn_penalty_term_contact_at(const kn_penalty_term* t, int i, const double Z[3], double Y[3], double f[3],
                                          double dfdZ[9]) {
  const kn_penalty_contact* c = &t->c[i];
  if (!c->mesh) {
    kn_levelset ls = {plane_phi, (void*)c->n};
    return kn_penalty_relax(&ls, c->X, Z, c->mu, kn_penalty_contact_k(t, c), Y, f, dfdZ);
  }
  return mesh_contact(t, c, Z, Y, f, dfdZ);
}

kn_relax_state kn_penalty_term_contact(const kn_penalty_term* t, int i, const double* v, double Z[3], double Y[3],
                                       double f[3], double dfdZ[9]) {
  const kn_penalty_contact* c = &t->c[i];
  if (c->fem) return fem_contact(t, c, v, Z, Y, f, dfdZ);
  double w[3];
  kn_nl_pair_velocity(t->points, c->a, c->b, v, w);
  for (int k = 0; k < 3; k++) Z[k] = c->phi0 * c->n[k] + t->dt * w[k] + c->arc[k];
  return kn_penalty_term_contact_at(t, i, Z, Y, f, dfdZ);
}

/* D (n x n, row-major) += (s_a J_a)^T K (s_b J_b), as kn_nl_points_add_block */
static void dense_block(const kn_nl_points* P, int a, double sa, int b, double sb, const double K[9], double* D, int n) {
  if (a < 0 || b < 0) return;
  const kn_nl_point *pa = &P->p[a], *pb = &P->p[b];
  for (int j = pb->start; j < pb->start + pb->m; j++) {
    const double* ub = P->u + 3 * j;
    double Ku[3];
    for (int r = 0; r < 3; r++) Ku[r] = sa * sb * (K[3 * r] * ub[0] + K[3 * r + 1] * ub[1] + K[3 * r + 2] * ub[2]);
    double* col = D + P->col[j];
    for (int i = pa->start; i < pa->start + pa->m; i++) {
      const double* ua = P->u + 3 * i;
      col[(size_t)n * P->col[i]] += ua[0] * Ku[0] + ua[1] * Ku[1] + ua[2] * Ku[2];
    }
  }
}

void kn_penalty_add_block(const kn_nl_points* P, int a, double sa, int b, double sb, const double K[9],
                          kn_nl_triplets* T, double* D) {
  if (D) dense_block(P, a, sa, b, sb, K, D, T->n);
  else kn_nl_points_add_block(P, a, sa, b, sb, K, T);
}

// J_rel^T K J_rel into the triplets, or into the dense scratch D when given
static void add_pair(const kn_nl_points* P, int a, int b, const double K[9], kn_nl_triplets* T, double* D) {
  if (!D) {
    kn_nl_pair_add_block(P, a, b, K, T);
    return;
  }
  int n = T->n;
  dense_block(P, b, 1, b, 1, K, D, n);
  dense_block(P, a, -1, b, 1, K, D, n);
  dense_block(P, b, 1, a, -1, K, D, n);
  dense_block(P, a, -1, a, -1, K, D, n);
}

// the dense scratch's nonzeros into T
static void flush(const double* D, kn_nl_triplets* T) {
  int n = T->n;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (D[(size_t)n * i + j] != 0.0) kn_nl_triplets_add(T, i, j, D[(size_t)n * i + j]);
}

/* contact i lagged (kn_penalty_term_lag): its energy k/2 min(phi, 0)^2 + k/2 |P_t (Y_ref - Z)|^2
 * (returned), gradient into r, Hessian dt^2 J_rel^T k (n n^T [phi < 0] + P_t [active]) J_rel into T
 * and S (symmetric: the same in both) */
static double lagged(const kn_penalty_term* t, int i, const double* v, double* r, kn_nl_triplets* T, double* DT,
                     kn_nl_triplets* S, double* DS) {
  const kn_penalty_contact* c = &t->c[i];
  const double *n = c->n, *Y = t->Y_ref + 3 * i, h = t->dt, kc = kn_penalty_contact_k(t, c);
  double w[3], Z[3], d[3], f[3];
  kn_nl_pair_velocity(t->points, c->a, c->b, v, w);
  for (int k = 0; k < 3; k++) Z[k] = c->phi0 * n[k] + h * w[k] + c->arc[k];
  double phi = n[0] * Z[0] + n[1] * Z[1] + n[2] * Z[2], dn, e = 0;
  int act = t->active_ref[i], pen = phi < 0;
  if (!act && !pen) return 0;
  for (int k = 0; k < 3; k++) d[k] = Y[k] - Z[k];
  dn = n[0] * d[0] + n[1] * d[1] + n[2] * d[2];
  for (int k = 0; k < 3; k++) {
    double dt_k = act ? d[k] - dn * n[k] : 0.0;
    f[k] = kc * (dt_k - (pen ? phi : 0.0) * n[k]); /* on B: the potential's -dU/dZ */
    e += 0.5 * kc * dt_k * dt_k;
  }
  if (pen) e += 0.5 * kc * phi * phi;
  double g[3] = {-h * f[0], -h * f[1], -h * f[2]};
  kn_nl_pair_add_force(t->points, c->a, c->b, 1.0, g, r);
  if (!T) return e;
  double K[9];
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++)
      K[3 * a + b] = h * h * kc * ((pen ? n[a] * n[b] : 0.0) + (act ? (a == b) - n[a] * n[b] : 0.0));
  add_pair(t->points, c->a, c->b, K, T, DT);
  if (S) add_pair(t->points, c->a, c->b, K, S, DS);
  return e;
}

kn_status kn_penalty_term_eval(void* self, const double* v, double* E, double* r, kn_nl_triplets* T, kn_nl_triplets* S,
                               kn_error* err) {
  (void)E;
  kn_penalty_term* t = self;
  const double h = t->dt;
  double *DT = NULL, *DS = NULL;
  if (T && T->n <= KN_PENALTY_DENSE_MAX) {
    size_t nn = (size_t)T->n * (size_t)T->n;
    if (2 * (int)nn > t->dense_cap) {
      double* d = realloc(t->dense, 2 * nn * sizeof *d);
      if (!d) return kn_fail(err, KN_ERR_NOMEM, "out of memory for the penalty term's %d DoFs", T->n);
      t->dense = d, t->dense_cap = 2 * (int)nn;
    }
    DT = t->dense, DS = S ? t->dense + nn : NULL;
    memset(DT, 0, (S ? 2 : 1) * nn * sizeof *DT);
  }
  double e = 0;
  kn_penalty_term_move(t, v);
  for (int i = 0; i < t->n; i++) {
    const kn_penalty_contact* c = &t->c[i];
    double Z[3], Y[3], f[3], J[9], g[3];
    if (c->fem) {
      if (t->use_ref && t->tri_ref) e += kn_penalty_fem_walk_lagged(t, i, v, r, T, DT, S, DS);
      else kn_penalty_fem_walk_add(t, i, v, r, T, DT, S, DS);
      continue;
    }
    if (t->use_ref) {
      e += lagged(t, i, v, r, T, DT, S, DS);
      continue;
    }
    kn_relax_state st = kn_penalty_term_contact(t, i, v, Z, Y, f, T ? J : NULL);
    if (t->use_piece) st = kn_penalty_term_piece(t, i, st, Z, Y, f, T ? J : NULL);
    if (st == KN_RELAX_INACTIVE) continue;
    for (int k = 0; k < 3; k++) g[k] = -h * f[k];
    kn_nl_pair_add_force(t->points, c->a, c->b, 1.0, g, r);
    if (!T) continue;
    double K[9];
    for (int k = 0; k < 9; k++) K[k] = -h * h * J[k];
    add_pair(t->points, c->a, c->b, K, T, DT);
    if (!S) continue;
    /* the PSD part: sticking, the spring k I; sliding, k (n n^T + s w w^T) without the load coupling
     * mu u n^T (digest §8: the symmetric part of the full block is indefinite) */
    const double* n = c->n;
    double u[3] = {0, 0, 0}, ww[3] = {0, 0, 0}, s = 0;
    if (st == KN_RELAX_DYNAMIC) {
      double phi = n[0] * Z[0] + n[1] * Z[1] + n[2] * Z[2], d[3], dX;
      for (int k = 0; k < 3; k++) d[k] = c->X[k] - (Z[k] - phi * n[k]);
      dX = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
      if (dX > 0) {
        for (int k = 0; k < 3; k++) u[k] = d[k] / dX;
        s = c->mu * fabs(phi) / dX;
      }
      ww[0] = n[1] * u[2] - n[2] * u[1], ww[1] = n[2] * u[0] - n[0] * u[2], ww[2] = n[0] * u[1] - n[1] * u[0];
    }
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++)
        K[3 * a + b] = h * h * kn_penalty_contact_k(t, c) *
                       (st == KN_RELAX_STATIC ? (double)(a == b) : n[a] * n[b] + s * ww[a] * ww[b]);
    add_pair(t->points, c->a, c->b, K, S, DS);
  }
  if (DT) flush(DT, T);
  if (DS) flush(DS, S);
  if (E && t->use_ref) *E += e;
  return KN_OK;
}

void kn_penalty_term_lag(void* self, const double* v, int on) {
  kn_penalty_term* t = self;
  t->use_ref = on && t->Y_ref && t->active_ref;
  if (!t->use_ref) return;
  kn_penalty_term_move(t, v);
  for (int i = 0; i < t->n; i++) {
    double Z[3], f[3];
    if (t->c[i].fem && t->tri_ref) { /* the walk's end: its triangle, the weights in Y_ref */
      kn_penalty_fem_walk wk;
      t->active_ref[i] = kn_penalty_fem_walk_eval(t, &t->c[i], v, 0, &wk) != KN_RELAX_INACTIVE;
      t->tri_ref[i] = t->active_ref[i] ? wk.o.at.tri : -1;
      memcpy(t->Y_ref + 3 * i, wk.w, sizeof wk.w);
      continue;
    }
    t->active_ref[i] = kn_penalty_term_contact(t, i, v, Z, t->Y_ref + 3 * i, f, NULL) != KN_RELAX_INACTIVE;
  }
}

void kn_penalty_term_free(kn_penalty_term* t) {
  free(t->dense);
  t->dense = NULL, t->dense_cap = 0;
}
