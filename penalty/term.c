/* The penalty backend's contact term (penalty.h; penalty-coulomb-friction.md §3.1, §3.3, §3.7.1,
 * §3.7.4): per contact a zero-rest-length spring from B's material point Z(v) to its anchor on A's
 * local plane, the anchor relaxed into the friction cone at every evaluation (relax.c against the
 * plane), residuals in impulses (r = M (v - v*) - dt f, as smooth/contact.c). */
#include <math.h>
#include <string.h>

#include "penalty/penalty.h"

// the plane n.x = 0 as a level set (ctx: n)
static double plane_phi(void* ctx, const double x[3], double n[3], double H[9]) {
  const double* m = ctx;
  memcpy(n, m, 3 * sizeof *n);
  if (H) memset(H, 0, 9 * sizeof *H);
  return m[0] * x[0] + m[1] * x[1] + m[2] * x[2];
}

kn_relax_state kn_penalty_term_contact(const kn_penalty_term* t, int i, const double* v, double Z[3], double Y[3],
                                       double f[3], double dfdZ[9]) {
  const kn_penalty_contact* c = &t->c[i];
  double w[3];
  kn_nl_pair_velocity(t->points, c->a, c->b, v, w);
  for (int k = 0; k < 3; k++) Z[k] = c->phi0 * c->n[k] + t->dt * w[k];
  kn_levelset ls = {plane_phi, (void*)c->n};
  return kn_penalty_relax(&ls, c->X, Z, c->mu, t->k, Y, f, dfdZ);
}

kn_status kn_penalty_term_eval(void* self, const double* v, double* E, double* r, kn_nl_triplets* T, kn_nl_triplets* S,
                               kn_error* err) {
  (void)E, (void)err;
  const kn_penalty_term* t = self;
  const double h = t->dt;
  for (int i = 0; i < t->n; i++) {
    const kn_penalty_contact* c = &t->c[i];
    double Z[3], Y[3], f[3], J[9], g[3];
    kn_relax_state st = kn_penalty_term_contact(t, i, v, Z, Y, f, T ? J : NULL);
    if (st == KN_RELAX_INACTIVE) continue;
    for (int k = 0; k < 3; k++) g[k] = -h * f[k];
    kn_nl_pair_add_force(t->points, c->a, c->b, 1.0, g, r);
    if (!T) continue;
    double K[9];
    for (int k = 0; k < 9; k++) K[k] = -h * h * J[k];
    kn_nl_pair_add_block(t->points, c->a, c->b, K, T);
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
        K[3 * a + b] = h * h * t->k *
                       (st == KN_RELAX_STATIC ? (double)(a == b) : n[a] * n[b] + s * ww[a] * ww[b]);
    kn_nl_pair_add_block(t->points, c->a, c->b, K, S);
  }
  return KN_OK;
}
