/* A penalty contact whose anchor walks an FEM boundary (penalty.h; penalty-coulomb-friction.md §3.5,
 * §3.6, §3.7.3): the triangle-mesh relaxation of mesh_relax.c run on the deformed boundary at the
 * iterate, in the world, so that Y = Y(Z, x_1 .. x_m) depends on the particle and on every vertex the
 * walk went over; the spring's force f = k (Y - Z) acts on the particle and its reaction on the
 * final triangle's vertices by Y's barycentric weights, whose derivatives enter the Jacobian. */
#include <math.h>
#include <string.h>

#include "penalty/penalty.h"

void kn_penalty_term_move(kn_penalty_term* t, const double* v) {
  for (int s = 0; s < t->nfems; s++) {
    kn_penalty_fem_mesh* F = &t->fems[s];
    for (int i = 0; i < F->nverts; i++) {
      int vx = F->verts[i], p = F->pt[vx];
      if (p < 0) continue;
      double u[3];
      kn_nl_point_velocity(t->points, p, v, u);
      for (int k = 0; k < 3; k++) F->x[3 * vx + k] = t->points->p[p].x0[k] + t->dt * u[k];
    }
  }
}

/* Y's weights' gradients on triangle (A, B, C): with E = (B - A, C - A) and G = E^T E,
 * (dw_1, dw_2) = G^-1 E^T q for q = dY - sum_j w_j dx_j, dw_0 = -(dw_1 + dw_2) */
static void weight_gradients(const double* x, const int tv[3], double g[3][3]) {
  double e1[3], e2[3];
  for (int k = 0; k < 3; k++) e1[k] = x[3 * tv[1] + k] - x[3 * tv[0] + k], e2[k] = x[3 * tv[2] + k] - x[3 * tv[0] + k];
  double a11 = kn_vec3_dot(e1, e1), a12 = kn_vec3_dot(e1, e2), a22 = kn_vec3_dot(e2, e2), det = a11 * a22 - a12 * a12;
  if (!(det > 0)) { /* a degenerate triangle: the weights held */
    memset(g, 0, 9 * sizeof **g);
    return;
  }
  for (int k = 0; k < 3; k++) {
    g[1][k] = (a22 * e1[k] - a12 * e2[k]) / det;
    g[2][k] = (a11 * e2[k] - a12 * e1[k]) / det;
    g[0][k] = -g[1][k] - g[2][k];
  }
}

kn_relax_state kn_penalty_fem_walk_eval(const kn_penalty_term* t, const kn_penalty_contact* c, const double* v, int jac,
                                        kn_penalty_fem_walk* out) {
  const kn_penalty_mesh* m = &c->fem->mesh;
  double u[3];
  kn_nl_point_velocity(t->points, c->b, v, u);
  for (int k = 0; k < 3; k++) out->Z[k] = c->z0[k] + t->dt * u[k];
  kn_penalty_mesh_relax(m, &c->Xm, out->Z, c->mu, &out->o);
  if (out->o.state == KN_RELAX_INACTIVE) {
    memset(out->f, 0, sizeof out->f);
    return KN_RELAX_INACTIVE;
  }
  for (int k = 0; k < 3; k++) out->f[k] = kn_penalty_contact_k(t, c) * (out->o.Y[k] - out->Z[k]);
  for (int k = 0; k < 3; k++) out->tv[k] = m->tri[3 * out->o.at.tri + k], out->w[k] = out->o.at.w[k];
  if (jac) weight_gradients(m->x, out->tv, out->g);
  return out->o.state;
}

/* the columns of f's and Y's derivatives: per material point its dY/dx (and whether it is Z) */
typedef struct {
  int pt, is_z;
  double DY[9];
} walk_col;

void kn_penalty_fem_walk_add(const kn_penalty_term* t, int i, const double* v, double* r, kn_nl_triplets* T, double* D,
                             kn_nl_triplets* S, double* DS) {
  const kn_penalty_contact* c = &t->c[i];
  const kn_nl_points* P = t->points;
  const int* pt = c->fem->pt;
  const double h = t->dt, k = kn_penalty_contact_k(t, c);
  kn_penalty_fem_walk wk;
  if (kn_penalty_fem_walk_eval(t, c, v, T != NULL, &wk) == KN_RELAX_INACTIVE) return;
  kn_nl_point_add_force(P, c->b, -h, wk.f, r);
  for (int j = 0; j < 3; j++) kn_nl_point_add_force(P, pt[wk.tv[j]], h * wk.w[j], wk.f, r);
  if (!T) return;
  /* columns: Z, every vertex Y depends on, the final triangle's vertices */
  walk_col col[KN_MESH_RELAX_MAX_VERTS + 4];
  int nc = 0;
  col[nc].pt = c->b, col[nc].is_z = 1;
  memcpy(col[nc++].DY, wk.o.dYdZ, sizeof col[0].DY);
  for (int j = 0; j < wk.o.nvert; j++) {
    col[nc].pt = pt[wk.o.vert[j]], col[nc].is_z = 0;
    memcpy(col[nc++].DY, wk.o.dYdx[j], sizeof col[0].DY);
  }
  int tvcol[3];
  for (int j = 0; j < 3; j++) {
    tvcol[j] = -1;
    for (int q = 0; q < wk.o.nvert; q++)
      if (wk.o.vert[q] == wk.tv[j]) tvcol[j] = q + 1;
    if (tvcol[j] < 0) { /* Y does not move with it (a weight 0), the weights do */
      col[nc].pt = pt[wk.tv[j]], col[nc].is_z = 0;
      memset(col[nc].DY, 0, sizeof col[0].DY);
      tvcol[j] = nc++;
    }
  }
  for (int q = 0; q < nc; q++) {
    if (col[q].pt < 0) continue;
    double df[9], Q[9], K[9];
    /* df = k (DY - [Z] I), q = DY - sum_j w_j [x_tv_j] I */
    for (int e = 0; e < 9; e++) df[e] = k * (col[q].DY[e] - (col[q].is_z && e % 4 == 0)), Q[e] = col[q].DY[e];
    for (int j = 0; j < 3; j++)
      if (tvcol[j] == q)
        for (int e = 0; e < 9; e += 4) Q[e] -= wk.w[j];
    for (int e = 0; e < 9; e++) K[e] = -h * h * df[e];
    kn_penalty_add_block(P, c->b, 1, col[q].pt, 1, K, T, D);
    for (int j = 0; j < 3; j++) { /* the reaction's rows: h^2 (w_j df + f g_j^T Q) */
      if (pt[wk.tv[j]] < 0) continue;
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
          double gq = wk.g[j][0] * Q[b] + wk.g[j][1] * Q[3 + b] + wk.g[j][2] * Q[6 + b];
          K[3 * a + b] = h * h * (wk.w[j] * df[3 * a + b] + wk.f[a] * gq);
        }
      kn_penalty_add_block(P, pt[wk.tv[j]], 1, col[q].pt, 1, K, T, D);
    }
  }
  if (!S) return;
  /* the PSD part on J_rel = J_b - sum w_j J_tv_j: the spring k I sticking, k n n^T sliding */
  double K[9];
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++)
      K[3 * a + b] = h * h * k * (wk.o.state == KN_RELAX_STATIC ? (double)(a == b) : c->n[a] * c->n[b]);
  int rp[4] = {c->b, pt[wk.tv[0]], pt[wk.tv[1]], pt[wk.tv[2]]};
  double rs[4] = {1, -wk.w[0], -wk.w[1], -wk.w[2]};
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++) kn_penalty_add_block(P, rp[a], rs[a], rp[b], rs[b], K, S, DS);
}

double kn_penalty_fem_walk_lagged(const kn_penalty_term* t, int i, const double* v, double* r, kn_nl_triplets* T,
                                  double* D, kn_nl_triplets* S, double* DS) {
  const kn_penalty_contact* c = &t->c[i];
  if (t->tri_ref[i] < 0) return 0;
  const kn_nl_points* P = t->points;
  const int *pt = c->fem->pt, *tv = c->fem->mesh.tri + 3 * t->tri_ref[i];
  const double *w = t->Y_ref + 3 * i, *x = c->fem->x, *n = c->n, h = t->dt, k = kn_penalty_contact_k(t, c);
  double u[3], Z[3], d[3], f[3];
  kn_nl_point_velocity(P, c->b, v, u);
  for (int a = 0; a < 3; a++) {
    Z[a] = c->z0[a] + h * u[a];
    d[a] = w[0] * x[3 * tv[0] + a] + w[1] * x[3 * tv[1] + a] + w[2] * x[3 * tv[2] + a] - Z[a];
  }
  double dn = kn_vec3_dot(d, n), phi = -dn, e = 0;
  int pen = phi < 0;
  for (int a = 0; a < 3; a++) {
    double dt_a = d[a] - dn * n[a];
    f[a] = k * (dt_a + (pen ? dn : 0.0) * n[a]); /* on the particle: -dU/dZ */
    e += 0.5 * k * dt_a * dt_a;
  }
  if (pen) e += 0.5 * k * phi * phi;
  kn_nl_point_add_force(P, c->b, -h, f, r);
  for (int j = 0; j < 3; j++) kn_nl_point_add_force(P, pt[tv[j]], h * w[j], f, r);
  if (!T) return e;
  double K[9];
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) K[3 * a + b] = h * h * k * ((pen ? n[a] * n[b] : 0.0) + (a == b) - n[a] * n[b]);
  int rp[4] = {c->b, pt[tv[0]], pt[tv[1]], pt[tv[2]]};
  double rs[4] = {1, -w[0], -w[1], -w[2]};
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++) {
      kn_penalty_add_block(P, rp[a], rs[a], rp[b], rs[b], K, T, D);
      if (S) kn_penalty_add_block(P, rp[a], rs[a], rp[b], rs[b], K, S, DS);
    }
  return e;
}
