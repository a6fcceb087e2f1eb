/* Forward dynamics by the articulated body algorithm (RBDA Table 7.1). All spatial quantities
 * are taken in world axes about the world origin, so articulated inertias and bias forces pass
 * from child to parent by plain addition (no 6 x 6 transform per tree edge, RBDA §7.3 notes
 * the algorithm holds in any single frame). Articulated inertias are symmetric, so they are
 * stored packed (the 21 entries of the upper triangle of [[A, B], [B^T, C]], angular first,
 * row by row): the rank-n updates and the child-to-parent sums touch 21 numbers, not 36. The
 * bodies' world inertias, velocities and motion subspaces come from kn_mb_kinematics' cache. */
#include <math.h>
#include <string.h>

#include "multibody/mb_internal.h"

enum { SYM6 = 21 };

/* y = P x for a packed symmetric 6 x 6 P (upper triangle, row by row) */
static inline void sym6_vec(const double* P, const double x[6], double y[6]) {
  y[0] = P[0] * x[0] + P[1] * x[1] + P[2] * x[2] + P[3] * x[3] + P[4] * x[4] + P[5] * x[5];
  y[1] = P[1] * x[0] + P[6] * x[1] + P[7] * x[2] + P[8] * x[3] + P[9] * x[4] + P[10] * x[5];
  y[2] = P[2] * x[0] + P[7] * x[1] + P[11] * x[2] + P[12] * x[3] + P[13] * x[4] + P[14] * x[5];
  y[3] = P[3] * x[0] + P[8] * x[1] + P[12] * x[2] + P[15] * x[3] + P[16] * x[4] + P[17] * x[5];
  y[4] = P[4] * x[0] + P[9] * x[1] + P[13] * x[2] + P[16] * x[3] + P[18] * x[4] + P[19] * x[5];
  y[5] = P[5] * x[0] + P[10] * x[1] + P[14] * x[2] + P[17] * x[3] + P[19] * x[4] + P[20] * x[5];
}

/* the body's spatial inertia in world axes about the world origin, packed, from its compact
 * form (m, h = m c_w, I_o): [[I_o, [h]x], [-[h]x, m 1]] (RBDA eq. 2.63) */
static inline void inertia_packed(const double* Ic, double* P) {
  const double m = Ic[MB_CI_M], *h = Ic + MB_CI_H, *Io = Ic + MB_CI_I;
  P[0] = Io[0], P[1] = Io[1], P[2] = Io[2], P[3] = 0, P[4] = -h[2], P[5] = h[1];
  P[6] = Io[4], P[7] = Io[5], P[8] = h[2], P[9] = 0, P[10] = -h[0];
  P[11] = Io[8], P[12] = -h[1], P[13] = h[0], P[14] = 0;
  P[15] = m, P[16] = 0, P[17] = 0;
  P[18] = m, P[19] = 0;
  P[20] = m;
}

/* F = I s for the compact inertia: n = I_o s_w + h x s_v, f = m s_v - h x s_w */
static inline void inertia_apply(const double* Ic, const double s[6], double F[6]) {
  double t[3];
  const double* h = Ic + MB_CI_H;
  mb_rot(Ic + MB_CI_I, s, F);
  mb_cross(h, s + 3, t);
  F[0] += t[0], F[1] += t[1], F[2] += t[2];
  mb_cross(h, s, t);
  for (int k = 0; k < 3; k++) F[3 + k] = Ic[MB_CI_M] * s[3 + k] - t[k];
}

/* In-place inverse of a small SPD matrix (n <= 6) by Gauss-Jordan without pivoting, which is
 * stable for SPD matrices. A zero pivot (massless subtree on a free joint) gives 0 rows. */
static void small_spd_inverse(double* D, int n) {
  for (int k = 0; k < n; k++) {
    double piv = D[k * n + k];
    double inv = piv != 0 ? 1.0 / piv : 0.0;
    D[k * n + k] = 1.0;
    for (int j = 0; j < n; j++) D[k * n + j] *= inv;
    for (int i = 0; i < n; i++) {
      if (i == k) continue;
      double f = D[i * n + k];
      if (f == 0) continue;
      D[i * n + k] = 0.0;
      for (int j = 0; j < n; j++) D[i * n + j] -= f * D[k * n + j];
    }
  }
}

/* pass 2 for a body with n > 1 dofs (planar, floating): U = IA S, D^-1 = (S^T U)^-1, and, when
 * the body has a parent, Ia = IA - U D^-1 U^T and pa = pA + Ia c + U D^-1 u added to it
 * (RBDA eq. 7.34-7.35) */
static void pass2_multi(int n, const double* IAi, const double* pAi, const double* Si, const double* ci,
                        const double* tau, double* Ui, double* ui, double* Di, double* IAp, double* pAp) {
  for (int j = 0; j < n; j++) {
    sym6_vec(IAi, Si + 6 * j, Ui + 6 * j);
    ui[j] = tau[j] - mb_dot6(Si + 6 * j, pAi);
  }
  for (int r = 0; r < n; r++)
    for (int c = 0; c < n; c++) Di[r * n + c] = mb_dot6(Si + 6 * r, Ui + 6 * c);
  small_spd_inverse(Di, n);
  if (!IAp) return;
  double Ia[SYM6], t[6];
  memcpy(Ia, IAi, sizeof Ia);
  for (int r = 0; r < n; r++) {
    double Du = 0, W[6];
    for (int c = 0; c < n; c++) Du += Di[r * n + c] * ui[c];
    for (int k = 0; k < 6; k++) {
      double s = 0;
      for (int c = 0; c < n; c++) s += Di[r * n + c] * Ui[6 * c + k];
      W[k] = s; /* row r of D^-1 U^T */
    }
    const double* Ur = Ui + 6 * r;
    for (int x = 0, e = 0; x < 6; x++)
      for (int y = x; y < 6; y++) Ia[e++] -= Ur[x] * W[y];
    for (int k = 0; k < 6; k++) pAp[k] += Ur[k] * Du;
  }
  sym6_vec(Ia, ci, t);
  for (int k = 0; k < 6; k++) pAp[k] += pAi[k] + t[k];
  for (int k = 0; k < SYM6; k++) IAp[k] += Ia[k];
}

// (X_wb, V, tau) => qdd, RBDA Table 7.1 with gravity as a world acceleration of -g
void kn_mb_forward_dynamics(const kn_mb_model* m, kn_mb_data* d, const double* tau, double* qdd) {
  int nb = m->nbody;
  mb_cache cache = mb_cache_of(d); /* world inertias, velocities and subspaces (kinematics) */
  const double* Vw = cache.Vw;
  const double* Sw = cache.Sw;
  double* IA = d->work;          /* 21 per body (packed) */
  double* pA = IA + SYM6 * nb;   /* 6 per body */
  double* cb = pA + 6 * nb;      /* 6 per body: V x S v */
  double* a = cb + 6 * nb;       /* 6 per body */
  double* Dinv = a + 6 * nb;     /* 36 per body (nv_i^2 used) */
  double* U = Dinv + 36 * nb;    /* 6 per dof */
  double* u = U + 6 * m->nv;     /* 1 per dof */

  /* pass 1: velocity products and the bodies' own inertias */
  for (int i = 0; i < nb; i++) {
    const kn_mb_body* b = &m->bodies[i];
    const double* Ici = cache.Iw + MB_CI_SIZE * i;
    const double* Vi = Vw + 6 * i;
    double* ci = cb + 6 * i;
    double h[6];
    inertia_packed(Ici, IA + SYM6 * i);
    inertia_apply(Ici, Vi, h);
    mb_cross_force(Vi, h, pA + 6 * i);
    if (b->nv > 0) {
      /* c = V x S v: S is constant in the body frame, so dS/dt = V x S in world axes; the joint
       * velocity S v is the body velocity minus the parent's */
      double vJ[6];
      if (b->parent < 0) {
        for (int k = 0; k < 6; k++) vJ[k] = Vi[k];
      } else {
        const double* Vp = Vw + 6 * b->parent;
        for (int k = 0; k < 6; k++) vJ[k] = Vi[k] - Vp[k];
      }
      mb_cross_motion(Vi, vJ, ci);
    } else {
      for (int k = 0; k < 6; k++) ci[k] = 0;
    }
  }

  /* pass 2: articulated inertias, leaves to root */
  for (int i = nb - 1; i >= 0; i--) {
    const kn_mb_body* b = &m->bodies[i];
    const double* IAi = IA + SYM6 * i;
    const double* pAi = pA + 6 * i;
    int n = b->nv, va = b->v_adr;
    double* IAp = b->parent < 0 ? NULL : IA + SYM6 * b->parent;
    double* pAp = b->parent < 0 ? NULL : pA + 6 * b->parent;
    if (n == 1) {
      /* the common case: U a column, D a scalar, Ia = IA - U U^T / D a rank-1 update */
      const double* Si = Sw + 6 * va;
      double* Ui = U + 6 * va;
      sym6_vec(IAi, Si, Ui);
      double ui = tau[va] - mb_dot6(Si, pAi);
      double D = mb_dot6(Si, Ui);
      double Di = D != 0 ? 1.0 / D : 0.0;
      u[va] = ui;
      Dinv[36 * i] = Di;
      if (!IAp) continue;
      /* pa = pA + Ia c + U u / D = pA + IA c + U (u - U.c) / D (RBDA eq. 7.35) */
      double t[6];
      const double* ci = cb + 6 * i;
      sym6_vec(IAi, ci, t);
      double g = (ui - mb_dot6(Ui, ci)) * Di;
      for (int k = 0; k < 6; k++) pAp[k] += pAi[k] + t[k] + Ui[k] * g;
      const double U0 = Ui[0], U1 = Ui[1], U2 = Ui[2], U3 = Ui[3], U4 = Ui[4], U5 = Ui[5];
      const double w[6] = {U0 * Di, U1 * Di, U2 * Di, U3 * Di, U4 * Di, U5 * Di};
      IAp[0] += IAi[0] - w[0] * U0, IAp[1] += IAi[1] - w[0] * U1, IAp[2] += IAi[2] - w[0] * U2;
      IAp[3] += IAi[3] - w[0] * U3, IAp[4] += IAi[4] - w[0] * U4, IAp[5] += IAi[5] - w[0] * U5;
      IAp[6] += IAi[6] - w[1] * U1, IAp[7] += IAi[7] - w[1] * U2, IAp[8] += IAi[8] - w[1] * U3;
      IAp[9] += IAi[9] - w[1] * U4, IAp[10] += IAi[10] - w[1] * U5;
      IAp[11] += IAi[11] - w[2] * U2, IAp[12] += IAi[12] - w[2] * U3, IAp[13] += IAi[13] - w[2] * U4;
      IAp[14] += IAi[14] - w[2] * U5;
      IAp[15] += IAi[15] - w[3] * U3, IAp[16] += IAi[16] - w[3] * U4, IAp[17] += IAi[17] - w[3] * U5;
      IAp[18] += IAi[18] - w[4] * U4, IAp[19] += IAi[19] - w[4] * U5;
      IAp[20] += IAi[20] - w[5] * U5;
    } else if (n == 0) {
      /* welded: c = 0, the whole inertia and bias force pass to the parent */
      if (!IAp) continue;
      for (int k = 0; k < 6; k++) pAp[k] += pAi[k];
      for (int k = 0; k < SYM6; k++) IAp[k] += IAi[k];
    } else {
      pass2_multi(n, IAi, pAi, Sw + 6 * va, cb + 6 * i, tau + va, U + 6 * va, u + va, Dinv + 36 * i, IAp, pAp);
    }
  }

  /* pass 3: accelerations, root to leaves */
  double a0[6] = {0, 0, 0, -m->gravity[0], -m->gravity[1], -m->gravity[2]};
  for (int i = 0; i < nb; i++) {
    const kn_mb_body* b = &m->bodies[i];
    double* ai = a + 6 * i;
    const double* ap = b->parent < 0 ? a0 : a + 6 * b->parent;
    const double* ci = cb + 6 * i;
    for (int k = 0; k < 6; k++) ai[k] = ap[k] + ci[k];
    int n = b->nv, va = b->v_adr;
    if (n == 0) continue;
    const double* Si = Sw + 6 * va;
    const double* Ui = U + 6 * va;
    const double* ui = u + va;
    const double* Di = Dinv + 36 * i;
    if (n == 1) {
      double qj = (ui[0] - mb_dot6(Ui, ai)) * Di[0];
      qdd[va] = qj;
      for (int k = 0; k < 6; k++) ai[k] += Si[k] * qj;
      continue;
    }
    double r[6];
    for (int j = 0; j < n; j++) r[j] = ui[j] - mb_dot6(Ui + 6 * j, ai);
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int c = 0; c < n; c++) s += Di[j * n + c] * r[c];
      qdd[va + j] = s;
    }
    for (int j = 0; j < n; j++) {
      double qj = qdd[va + j];
      for (int k = 0; k < 6; k++) ai[k] += Si[6 * j + k] * qj;
    }
  }
}
