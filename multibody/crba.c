/* The joint-space mass matrix by the composite rigid body algorithm (RBDA §6.2). Composite
 * inertias and motion subspaces are taken in world axes about the world origin (as MuJoCo's
 * mj_crb does), kept compact as (m, h = m c, I_o): subtrees then add without transforms. The
 * bodies' world inertias and subspaces come from kn_mb_kinematics' cache (mb_internal.h). */
#include <string.h>

#include "multibody/mb_internal.h"

enum { CI_M = MB_CI_M, CI_H = MB_CI_H, CI_I = MB_CI_I, CI_SIZE = MB_CI_SIZE };

/* F = Ic s for a motion vector s: n = I_o s_w + h x s_v, f = m s_v - h x s_w */
static inline void composite_apply(const double* Ic, const double s[6], double F[6]) {
  double t[3];
  mb_rot(Ic + CI_I, s, F);
  mb_cross(Ic + CI_H, s + 3, t);
  F[0] += t[0], F[1] += t[1], F[2] += t[2];
  mb_cross(Ic + CI_H, s, t);
  for (int k = 0; k < 3; k++) F[3 + k] = Ic[CI_M] * s[3 + k] - t[k];
}

// (X_wb) => M (nv x nv, row-major, symmetric), RBDA Table 6.2: M_ij = S_i^T Ic_j S_j for i an
// ancestor dof of j (or on the same body), zero otherwise
void kn_mb_mass_matrix(const kn_mb_model* m, kn_mb_data* d, double* M) {
  int nv = m->nv, nb = m->nbody;
  mb_cache cache = mb_cache_of(d);
  double* Ic = d->work; /* CI_SIZE per body: the composite inertias, from the bodies' own */
  const double* Sw = cache.Sw;
  memset(M, 0, (size_t)nv * (size_t)nv * sizeof *M);
  memcpy(Ic, cache.Iw, (size_t)nb * CI_SIZE * sizeof *Ic);
  for (int i = nb - 1; i >= 0; i--) {
    const kn_mb_body* b = &m->bodies[i];
    const double* Ici = Ic + CI_SIZE * i;
    for (int a = 0; a < b->nv; a++) {
      int col = b->v_adr + a;
      double F[6];
      composite_apply(Ici, Sw + 6 * col, F);
      /* the body's own dofs from a on, then every ancestor's (RBDA Table 6.2's inner loop) */
      for (int c = a; c < b->nv; c++) {
        int row = b->v_adr + c;
        double val = mb_dot6(Sw + 6 * row, F);
        M[row * nv + col] = val;
        M[col * nv + row] = val;
      }
      for (int j = b->parent; j >= 0; j = m->bodies[j].parent) {
        const kn_mb_body* bj = &m->bodies[j];
        for (int c = 0; c < bj->nv; c++) {
          int row = bj->v_adr + c;
          double val = mb_dot6(Sw + 6 * row, F);
          M[row * nv + col] = val;
          M[col * nv + row] = val;
        }
      }
    }
    if (b->parent >= 0) {
      double* Ip = Ic + CI_SIZE * b->parent;
      for (int k = 0; k < CI_SIZE; k++) Ip[k] += Ici[k];
    }
  }
}
