/* The joint-space mass matrix by the composite rigid body algorithm (RBDA §6.2), in body
 * coordinates with composite inertias kept as (m, h = m c, I_o) rather than 6 x 6 matrices. */
#include <string.h>

#include "multibody/mb_internal.h"

/* compact spatial inertia about a frame origin: [[I_o, h x], [-h x, m 1]] */
enum { CI_M = 0, CI_H = 1, CI_I = 4, CI_SIZE = 13 };

/* F = Ic s for a motion vector s: n = I_o s_w + h x s_v, f = m s_v - h x s_w */
static inline void composite_apply(const double* Ic, const double s[6], double F[6]) {
  double t[3];
  mb_rot(Ic + CI_I, s, F);
  mb_cross(Ic + CI_H, s + 3, t);
  F[0] += t[0], F[1] += t[1], F[2] += t[2];
  mb_cross(Ic + CI_H, s, t);
  for (int k = 0; k < 3; k++) F[3 + k] = Ic[CI_M] * s[3 + k] - t[k];
}

/* Ic_parent += the child's composite inertia moved through X_pb = {R, p}:
 * h' = R h, I' = R I R^T about the child origin in parent axes; shifting the origin by p
 * (parallel-axis theorem written without dividing by m, so massless subtrees are fine):
 *   I_p = I' - (h' p^T + p h'^T - 2 (p.h') 1) - m (p p^T - |p|^2 1),  h_p = h' + m p. */
static void composite_to_parent(const kn_pose* X, const double* Ic, double* Ip) {
  const double* R = X->R;
  const double* p = X->p;
  double m = Ic[CI_M], h[3], RI[9], I[9];
  mb_rot(R, Ic + CI_H, h);
  kn_mat3_mul(R, Ic + CI_I, RI);
  for (int i = 0; i < 3; i++)
    for (int j = i; j < 3; j++)
      I[3 * i + j] = RI[3 * i] * R[3 * j] + RI[3 * i + 1] * R[3 * j + 1] + RI[3 * i + 2] * R[3 * j + 2];
  double ph = p[0] * h[0] + p[1] * h[1] + p[2] * h[2];
  double pp = p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
  for (int i = 0; i < 3; i++)
    for (int j = i; j < 3; j++) {
      double diag = (i == j) ? 2 * ph + m * pp : 0;
      double v = I[3 * i + j] - (h[i] * p[j] + p[i] * h[j]) - m * p[i] * p[j] + diag;
      Ip[CI_I + 3 * i + j] += v;
      if (i != j) Ip[CI_I + 3 * j + i] += v;
    }
  Ip[CI_M] += m;
  for (int k = 0; k < 3; k++) Ip[CI_H + k] += h[k] + m * p[k];
}

// (X_pb) => M (nv x nv, row-major, symmetric), RBDA Table 6.2
void kn_mb_mass_matrix(const kn_mb_model* m, kn_mb_data* d, double* M) {
  int nv = m->nv;
  double* Ic = d->work; /* CI_SIZE per body */
  memset(M, 0, (size_t)nv * (size_t)nv * sizeof *M);
  /* body inertia about its origin: h = m c, I_o = I_com + m (|c|^2 1 - c c^T) */
  for (int i = 0; i < m->nbody; i++) {
    const kn_mb_body* b = &m->bodies[i];
    double* I = Ic + CI_SIZE * i;
    const double* c = b->com;
    double mass = b->mass, cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    I[CI_M] = mass;
    for (int k = 0; k < 3; k++) I[CI_H + k] = mass * c[k];
    for (int r = 0; r < 3; r++)
      for (int s = 0; s < 3; s++)
        I[CI_I + 3 * r + s] = b->I_com[3 * r + s] + mass * ((r == s ? cc : 0) - c[r] * c[s]);
  }
  for (int i = m->nbody - 1; i >= 0; i--) {
    const kn_mb_body* b = &m->bodies[i];
    const double* Ici = Ic + CI_SIZE * i;
    for (int a = 0; a < b->nv; a++) {
      int col = b->v_adr + a;
      double F[6], Fp[6];
      composite_apply(Ici, d->S + 6 * col, F);
      for (int c = a; c < b->nv; c++) {
        int row = b->v_adr + c;
        double val = mb_dot6(d->S + 6 * row, F);
        M[row * nv + col] = val;
        M[col * nv + row] = val;
      }
      /* carry the force up the ancestors: M_{j,col} = S_j^T X^* ... F (RBDA eq. 6.13) */
      for (int j = i; m->bodies[j].parent >= 0;) {
        mb_force_to_parent(&d->X_pb[j], F, Fp);
        for (int k = 0; k < 6; k++) F[k] = Fp[k];
        j = m->bodies[j].parent;
        const kn_mb_body* bj = &m->bodies[j];
        for (int c = 0; c < bj->nv; c++) {
          int row = bj->v_adr + c;
          double val = mb_dot6(d->S + 6 * row, F);
          M[row * nv + col] = val;
          M[col * nv + row] = val;
        }
      }
    }
    if (b->parent >= 0) composite_to_parent(&d->X_pb[i], Ici, Ic + CI_SIZE * b->parent);
  }
}
