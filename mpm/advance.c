/* Grid-to-particle transfer with APIC (seed eq. 17, digest §7.5 step 9), the deformation gradient
 * update, and the lagged plasticity / EOS reset, applied transactionally. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpm/mpm_internal.h"

kn_status kn_mpm_advance(kn_mpm_body* b, const double* v_grid, double dt, kn_error* err) {
  const kn_mpm_grid* g = &b->grid;
  if (b->viewed) return kn_fail(err, KN_ERR_INVALID, "%s: a view cannot advance (its owner '%s' does)", b->name, b->viewed->name);
  if (!g->p_node) return kn_fail(err, KN_ERR_INVALID, "%s: advance before P2G / free motion", b->name);
  if (!(dt > 0) || !isfinite(dt)) return kn_fail(err, KN_ERR_INVALID, "%s: time step %g must be positive", b->name, dt);
  size_t np = (size_t)b->np;
  /* new state is computed into scratch and committed only when every particle is valid */
  double* nx = kn_calloc(3 * np, sizeof(double));
  double* nv = kn_calloc(3 * np, sizeof(double));
  double* nC = kn_calloc(9 * np, sizeof(double));
  double* nFE = kn_calloc(9 * np, sizeof(double));
  double* nFP = kn_calloc(9 * np, sizeof(double));
  kn_status st = KN_OK;
  if (!nx || !nv || !nC || !nFE || !nFP) {
    st = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for the particle update", b->name);
    goto done;
  }
  const double k4 = 4.0 / (b->h * b->h); /* D_p^-1 of the quadratic B-spline */
  for (size_t p = 0; p < np && st == KN_OK; p++) {
    const double* xp = b->x + 3 * p;
    const kn_mpm_part* pt = kn_mpm_part_of(b, (int)p); /* errors name the part and its own particle index */
    const int local = (int)p - pt->first;
    double vp[3] = {0}, C[9] = {0}, Gv[9] = {0};
    for (int a = 0; a < 27; a++) {
      int i = g->p_node[27 * p + a];
      if (i < 0) continue;
      double w = g->p_w[27 * p + a];
      const double *vi = v_grid + 3 * i, *dw = g->p_dw + 81 * p + 3 * a;
      for (int r = 0; r < 3; r++) {
        vp[r] += w * vi[r];
        for (int c = 0; c < 3; c++) {
          C[3 * r + c] += k4 * w * vi[r] * (g->x[3 * i + c] - xp[c]);
          Gv[3 * r + c] += vi[r] * dw[c]; /* grad v = sum v_i grad w^T */
        }
      }
    }
    double* x1 = nx + 3 * p;
    for (int d = 0; d < 3; d++) x1[d] = xp[d] + dt * vp[d];
    memcpy(nv + 3 * p, vp, sizeof vp);
    memcpy(nC + 9 * p, C, sizeof C);
    /* F_E trial = (I + dt grad v) F_E^n  (= F^{n+1} (F_P^n)^-1) */
    double Mv[9], FEt[9];
    for (int k = 0; k < 9; k++) Mv[k] = dt * Gv[k] + (k % 4 == 0);
    kn_mat3_mul(Mv, b->FE + 9 * p, FEt);
    for (int d = 0; d < 3; d++)
      if (!isfinite(x1[d]) || !isfinite(vp[d])) {
        st = kn_fail(err, KN_ERR_NUMERIC, "%s: particle %d: non-finite position or velocity after the step", pt->name, local);
        break;
      }
    if (st != KN_OK) break;
    for (int d = 0; d < 3; d++)
      if (x1[d] < pt->region_lo[d] || x1[d] > pt->region_hi[d]) {
        st = kn_fail(err, KN_ERR_INVALID,
                     "%s: particle %d left the allowed region: (%g, %g, %g) outside [%g, %g] x [%g, %g] x [%g, %g]",
                     pt->name, local, x1[0], x1[1], x1[2], pt->region_lo[0], pt->region_hi[0],
                     pt->region_lo[1], pt->region_hi[1], pt->region_lo[2], pt->region_hi[2]);
        break;
      }
    if (st != KN_OK) break;
    double J = kn_mat3_det(FEt);
    if (!(J > 0) || !isfinite(J)) {
      st = kn_fail(err, KN_ERR_NUMERIC, "%s: particle %d: inverted deformation gradient (det %g)", pt->name, local, J);
      break;
    }
    double *FE1 = nFE + 9 * p, *FP1 = nFP + 9 * p;
    if (pt->material.model == KN_MPM_EOS_FLUID) {
      /* a fluid keeps only its volume change: F_E = J^(1/3) I */
      double c = cbrt(J);
      for (int k = 0; k < 9; k++) FE1[k] = (k % 4 == 0) ? c : 0, FP1[k] = (k % 4 == 0);
    } else if (kn_mpm_return_mapping(pt->mu, pt->material.yield_stress, b->FE + 9 * p, FEt, FE1)) {
      /* Algorithm 1 step 5: F_P^{n+1} = (F~_E)^-1 F^{n+1}, F^{n+1} = F_E,trial F_P^n */
      double Fi[9], F1[9];
      kn_mat3_mul(FEt, b->FP + 9 * p, F1);
      if (!kn_mat3_inverse(FE1, Fi)) {
        st = kn_fail(err, KN_ERR_NUMERIC, "%s: particle %d: singular projected elastic gradient", pt->name, local);
        break;
      }
      kn_mat3_mul(Fi, F1, FP1);
    } else {
      memcpy(FP1, b->FP + 9 * p, 9 * sizeof(double));
    }
  }
  if (st == KN_OK) {
    memcpy(b->x, nx, 3 * np * sizeof(double));
    memcpy(b->v, nv, 3 * np * sizeof(double));
    memcpy(b->C, nC, 9 * np * sizeof(double));
    memcpy(b->FE, nFE, 9 * np * sizeof(double));
    memcpy(b->FP, nFP, 9 * np * sizeof(double));
  }
done:
  free(nx), free(nv), free(nC), free(nFE), free(nFP);
  return st;
}
