/* Forward dynamics by the articulated body algorithm (RBDA Table 7.1) in body coordinates.
 * Articulated inertias are full 6 x 6 row-major blocks [[A, B], [B^T, C]] (angular first). */
#include <math.h>
#include <string.h>

#include "multibody/mb_internal.h"

/* the body's spatial inertia about its origin: A = I_com + m (|c|^2 1 - c c^T), B = m [c]x, C = m 1 */
static void body_inertia6(const kn_mb_body* b, double* I) {
  const double* c = b->com;
  double m = b->mass, cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
  memset(I, 0, 36 * sizeof *I);
  for (int r = 0; r < 3; r++)
    for (int s = 0; s < 3; s++) I[6 * r + s] = b->I_com[3 * r + s] + m * ((r == s ? cc : 0) - c[r] * c[s]);
  double B[9] = {0, -m * c[2], m * c[1], m * c[2], 0, -m * c[0], -m * c[1], m * c[0], 0};
  for (int r = 0; r < 3; r++)
    for (int s = 0; s < 3; s++) {
      I[6 * r + 3 + s] = B[3 * r + s];
      I[6 * (3 + s) + r] = B[3 * r + s];
    }
  I[21] = I[28] = I[35] = m;
}

static inline void mat6_vec(const double* A, const double x[6], double y[6]) {
  for (int r = 0; r < 6; r++) {
    const double* a = A + 6 * r;
    y[r] = a[0] * x[0] + a[1] * x[1] + a[2] * x[2] + a[3] * x[3] + a[4] * x[4] + a[5] * x[5];
  }
}

/* out = R X R^T for the 3 x 3 block at X (row stride 6) */
static void rotate_block(const double R[9], const double* X, double out[9]) {
  double T[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      T[3 * i + j] = R[3 * i] * X[j] + R[3 * i + 1] * X[6 + j] + R[3 * i + 2] * X[12 + j];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      out[3 * i + j] = T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2];
}

/* P X for P = [p]x, X 3 x 3 (column-wise cross products) */
static void cross_mat(const double p[3], const double X[9], double out[9]) {
  for (int j = 0; j < 3; j++) {
    double x0 = X[j], x1 = X[3 + j], x2 = X[6 + j];
    out[j] = p[1] * x2 - p[2] * x1;
    out[3 + j] = p[2] * x0 - p[0] * x2;
    out[6 + j] = p[0] * x1 - p[1] * x0;
  }
}

/* IAp += X^* Ia X for the motion transform X = parent -> body given by X_pb = {R, p}.
 * Rotating the blocks (A', B', C') = R (A, B, C) R^T and shifting by P = [p]x:
 *   C_p = C',  B_p = B' + P C',  A_p = A' + P B'^T + (P B_p^T)^T. */
static void articulated_to_parent(const kn_pose* X, const double* Ia, double* IAp) {
  double A[9], B[9], C[9], Bt[9], PC[9], Bp[9], PBt[9], Bpt[9], PBpt[9];
  rotate_block(X->R, Ia, A);
  rotate_block(X->R, Ia + 3, B);
  rotate_block(X->R, Ia + 21, C);
  cross_mat(X->p, C, PC);
  for (int k = 0; k < 9; k++) Bp[k] = B[k] + PC[k];
  kn_mat3_transpose(B, Bt);
  kn_mat3_transpose(Bp, Bpt);
  cross_mat(X->p, Bt, PBt);
  cross_mat(X->p, Bpt, PBpt);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      IAp[6 * i + j] += A[3 * i + j] + PBt[3 * i + j] + PBpt[3 * j + i];
      IAp[6 * i + 3 + j] += Bp[3 * i + j];
      IAp[6 * (3 + j) + i] += Bp[3 * i + j];
      IAp[6 * (3 + i) + 3 + j] += C[3 * i + j];
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

// (X_pb, V, tau) => qdd, RBDA Table 7.1 with gravity as a world acceleration of -g
void kn_mb_forward_dynamics(const kn_mb_model* m, kn_mb_data* d, const double* tau, double* qdd) {
  int nb = m->nbody;
  double* IA = d->work;          /* 36 per body */
  double* pA = IA + 36 * nb;     /* 6 per body */
  double* cb = pA + 6 * nb;      /* 6 per body: V x S v */
  double* a = cb + 6 * nb;       /* 6 per body */
  double* Dinv = a + 6 * nb;     /* 36 per body (nv_i^2 used) */
  double* U = Dinv + 36 * nb;    /* 6 per dof */
  double* u = U + 6 * m->nv;     /* 1 per dof */

  /* pass 1: velocity products and the bodies' own inertias */
  for (int i = 0; i < nb; i++) {
    const kn_mb_body* b = &m->bodies[i];
    const double* Vi = d->V + 6 * i;
    double h[6];
    body_inertia6(b, IA + 36 * i);
    mb_inertia_apply(b, Vi, h);
    mb_cross_force(Vi, h, pA + 6 * i);
    double* ci = cb + 6 * i;
    if (b->nv > 0) {
      double vJ[6];
      if (b->parent < 0) {
        for (int k = 0; k < 6; k++) vJ[k] = Vi[k];
      } else {
        mb_motion_to_body(&d->X_pb[i], d->V + 6 * b->parent, vJ);
        for (int k = 0; k < 6; k++) vJ[k] = Vi[k] - vJ[k];
      }
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
    double* Ui = U + 6 * b->v_adr;
    double* ui = u + b->v_adr;
    double* Di = Dinv + 36 * i;
    double Ia[36], pa[6], t[6];
    for (int k = 0; k < 6; k++) pa[k] = pAi[k];
    if (n == 0) {
      memcpy(Ia, IAi, sizeof Ia);
    } else {
      for (int j = 0; j < n; j++) {
        const double* s = d->S + 6 * (b->v_adr + j);
        mat6_vec(IAi, s, Ui + 6 * j);
        ui[j] = tau[b->v_adr + j] - mb_dot6(s, pAi);
      }
      for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++) Di[r * n + c] = mb_dot6(d->S + 6 * (b->v_adr + r), Ui + 6 * c);
      if (n == 1) {
        Di[0] = Di[0] != 0 ? 1.0 / Di[0] : 0.0;
      } else {
        small_spd_inverse(Di, n);
      }
      if (b->parent < 0) continue;
      /* Ia = IA - U D^-1 U^T,  pa = pA + Ia c + U D^-1 u  (RBDA eq. 7.34-7.35) */
      double W[36], Du[6];
      for (int r = 0; r < n; r++) {
        Du[r] = 0;
        for (int c = 0; c < n; c++) Du[r] += Di[r * n + c] * ui[c];
        for (int k = 0; k < 6; k++) {
          double s = 0;
          for (int c = 0; c < n; c++) s += Di[r * n + c] * Ui[6 * c + k];
          W[6 * r + k] = s; /* W = D^-1 U^T */
        }
      }
      for (int r = 0; r < 6; r++)
        for (int c = 0; c < 6; c++) {
          double s = 0;
          for (int j = 0; j < n; j++) s += Ui[6 * j + r] * W[6 * j + c];
          Ia[6 * r + c] = IAi[6 * r + c] - s;
        }
      for (int j = 0; j < n; j++)
        for (int k = 0; k < 6; k++) pa[k] += Ui[6 * j + k] * Du[j];
    }
    if (b->parent < 0) continue;
    mat6_vec(Ia, cb + 6 * i, t);
    for (int k = 0; k < 6; k++) pa[k] += t[k];
    articulated_to_parent(&d->X_pb[i], Ia, IA + 36 * b->parent);
    double fp[6];
    mb_force_to_parent(&d->X_pb[i], pa, fp);
    double* pAp = pA + 6 * b->parent;
    for (int k = 0; k < 6; k++) pAp[k] += fp[k];
  }

  /* pass 3: accelerations, root to leaves */
  double a0[6] = {0, 0, 0, -m->gravity[0], -m->gravity[1], -m->gravity[2]};
  for (int i = 0; i < nb; i++) {
    const kn_mb_body* b = &m->bodies[i];
    double* ai = a + 6 * i;
    mb_motion_to_body(&d->X_pb[i], b->parent < 0 ? a0 : a + 6 * b->parent, ai);
    for (int k = 0; k < 6; k++) ai[k] += cb[6 * i + k];
    int n = b->nv;
    if (n == 0) continue;
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
      const double* s = d->S + 6 * (b->v_adr + j);
      double qj = qdd[b->v_adr + j];
      for (int k = 0; k < 6; k++) ai[k] += s[k] * qj;
    }
  }
}
