/* Forward dynamics by the articulated body algorithm (RBDA Table 7.1). All spatial quantities
 * are taken in world axes about the world origin, so articulated inertias and bias forces pass
 * from child to parent by plain addition (no 6 x 6 transform per tree edge, RBDA §7.3 notes
 * the algorithm holds in any single frame). Articulated inertias are full 6 x 6 row-major
 * blocks [[A, B], [B^T, C]] (angular first). */
#include <math.h>
#include <string.h>

#include "multibody/mb_internal.h"

/* the body's spatial inertia in world axes about the world origin: [[I_o, [h]x], [-[h]x, m 1]] */
static void body_inertia6_world(const kn_mb_body* b, const kn_pose* X, double* I) {
  double m, h[3], Io[9];
  mb_inertia_world(b, X, &m, h, Io);
  for (int r = 0; r < 3; r++)
    for (int s = 0; s < 3; s++) I[6 * r + s] = Io[3 * r + s];
  double B[9] = {0, -h[2], h[1], h[2], 0, -h[0], -h[1], h[0], 0};
  for (int r = 0; r < 3; r++)
    for (int s = 0; s < 3; s++) {
      I[6 * r + 3 + s] = B[3 * r + s];
      I[6 * (3 + s) + r] = B[3 * r + s];
      I[6 * (3 + r) + 3 + s] = r == s ? m : 0;
    }
}

static inline void mat6_vec(const double* A, const double x[6], double y[6]) {
  for (int r = 0; r < 6; r++) {
    const double* a = A + 6 * r;
    y[r] = a[0] * x[0] + a[1] * x[1] + a[2] * x[2] + a[3] * x[3] + a[4] * x[4] + a[5] * x[5];
  }
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

// (X_wb, V, tau) => qdd, RBDA Table 7.1 with gravity as a world acceleration of -g
void kn_mb_forward_dynamics(const kn_mb_model* m, kn_mb_data* d, const double* tau, double* qdd) {
  int nb = m->nbody;
  double* IA = d->work;          /* 36 per body */
  double* pA = IA + 36 * nb;     /* 6 per body */
  double* cb = pA + 6 * nb;      /* 6 per body: V x S v */
  double* a = cb + 6 * nb;       /* 6 per body */
  double* Vw = a + 6 * nb;       /* 6 per body */
  double* Dinv = Vw + 6 * nb;    /* 36 per body (nv_i^2 used) */
  double* Sw = Dinv + 36 * nb;   /* 6 per dof */
  double* U = Sw + 6 * m->nv;    /* 6 per dof */
  double* u = U + 6 * m->nv;     /* 1 per dof */

  /* pass 1: world velocities, velocity products and the bodies' own inertias */
  for (int i = 0; i < nb; i++) {
    const kn_mb_body* b = &m->bodies[i];
    const kn_pose* X = &d->X_wb[i];
    double* Vi = Vw + 6 * i;
    double* IAi = IA + 36 * i;
    double h[6];
    mb_motion_to_world(X, d->V + 6 * i, Vi);
    for (int k = 0; k < b->nv; k++) mb_motion_to_world(X, d->S + 6 * (b->v_adr + k), Sw + 6 * (b->v_adr + k));
    body_inertia6_world(b, X, IAi);
    mat6_vec(IAi, Vi, h);
    mb_cross_force(Vi, h, pA + 6 * i);
    double* ci = cb + 6 * i;
    if (b->nv > 0) {
      /* c = V x S v: S is constant in the body frame, so dS/dt = V x S in world axes; the joint
       * velocity S v is the body velocity minus the parent's */
      double vJ[6];
      for (int k = 0; k < 6; k++) vJ[k] = Vi[k] - (b->parent < 0 ? 0 : Vw[6 * b->parent + k]);
      mb_cross_motion(Vi, vJ, ci);
    } else {
      for (int k = 0; k < 6; k++) ci[k] = 0;
    }
  }

  /* pass 2: articulated inertias, leaves to root */
  for (int i = nb - 1; i >= 0; i--) {
    const kn_mb_body* b = &m->bodies[i];
    double* IAi = IA + 36 * i;
    double* pAi = pA + 6 * i;
    int n = b->nv;
    double* Si = Sw + 6 * b->v_adr;
    double* Ui = U + 6 * b->v_adr;
    double* ui = u + b->v_adr;
    double* Di = Dinv + 36 * i;
    for (int j = 0; j < n; j++) {
      mat6_vec(IAi, Si + 6 * j, Ui + 6 * j);
      ui[j] = tau[b->v_adr + j] - mb_dot6(Si + 6 * j, pAi);
    }
    if (n == 1) {
      double D = mb_dot6(Si, Ui);
      Di[0] = D != 0 ? 1.0 / D : 0.0;
    } else if (n > 1) {
      for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++) Di[r * n + c] = mb_dot6(Si + 6 * r, Ui + 6 * c);
      small_spd_inverse(Di, n);
    }
    if (b->parent < 0) continue;
    double* IAp = IA + 36 * b->parent;
    double* pAp = pA + 6 * b->parent;
    /* Ia = IA - U D^-1 U^T,  pa = pA + Ia c + U D^-1 u  (RBDA eq. 7.34-7.35), added to the parent */
    double Ia[36], t[6];
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
      for (int x = 0; x < 6; x++)
        for (int y = 0; y < 6; y++) Ia[6 * x + y] -= Ur[x] * W[y];
      for (int k = 0; k < 6; k++) pAp[k] += Ur[k] * Du;
    }
    mat6_vec(Ia, cb + 6 * i, t);
    for (int k = 0; k < 6; k++) pAp[k] += pAi[k] + t[k];
    for (int k = 0; k < 36; k++) IAp[k] += Ia[k];
  }

  /* pass 3: accelerations, root to leaves */
  double a0[6] = {0, 0, 0, -m->gravity[0], -m->gravity[1], -m->gravity[2]};
  for (int i = 0; i < nb; i++) {
    const kn_mb_body* b = &m->bodies[i];
    double* ai = a + 6 * i;
    const double* ap = b->parent < 0 ? a0 : a + 6 * b->parent;
    for (int k = 0; k < 6; k++) ai[k] = ap[k] + cb[6 * i + k];
    int n = b->nv;
    if (n == 0) continue;
    const double* Si = Sw + 6 * b->v_adr;
    const double* Ui = U + 6 * b->v_adr;
    const double* ui = u + b->v_adr;
    const double* Di = Dinv + 36 * i;
    double r[6];
    for (int j = 0; j < n; j++) r[j] = ui[j] - mb_dot6(Ui + 6 * j, ai);
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int c = 0; c < n; c++) s += Di[j * n + c] * r[c];
      qdd[b->v_adr + j] = s;
    }
    for (int j = 0; j < n; j++) {
      double qj = qdd[b->v_adr + j];
      for (int k = 0; k < 6; k++) ai[k] += Si[6 * j + k] * qj;
    }
  }
}
