/* Inverse dynamics by the recursive Newton-Euler algorithm (RBDA Table 5.1), body coordinates,
 * gravity entered as a fictitious upward acceleration of the world (RBDA §5.3). */
#include <string.h>

#include "multibody/mb_internal.h"

/* tau = M qdd + C v - g; with_velocity = 0 ignores V (for the gravity torques) */
static void rnea(const kn_mb_model* m, kn_mb_data* d, const double* qdd, int with_velocity, double* tau) {
  double* a = d->work;                    /* 6 per body */
  double* f = d->work + 6 * m->nbody;     /* 6 per body */
  double a0[6] = {0, 0, 0, -m->gravity[0], -m->gravity[1], -m->gravity[2]};
  for (int i = 0; i < m->nbody; i++) {
    const kn_mb_body* b = &m->bodies[i];
    double* ai = a + 6 * i;
    double* fi = f + 6 * i;
    mb_motion_to_body(&d->X_pb[i], b->parent < 0 ? a0 : a + 6 * b->parent, ai);
    if (qdd) {
      for (int k = 0; k < b->nv; k++) {
        const double* s = d->S + 6 * (b->v_adr + k);
        double qk = qdd[b->v_adr + k];
        for (int r = 0; r < 6; r++) ai[r] += s[r] * qk;
      }
    }
    if (with_velocity) {
      const double* Vi = d->V + 6 * i;
      double h[6], t[6];
      if (b->nv > 0) {
        /* a += V x (S v): S is constant in the body frame (RBDA eq. 5.7 with c_J = 0). The joint
         * velocity is the body velocity minus the parent's, so no v is needed here. */
        double vJ[6];
        if (b->parent < 0) {
          for (int k = 0; k < 6; k++) vJ[k] = Vi[k];
        } else {
          mb_motion_to_body(&d->X_pb[i], d->V + 6 * b->parent, vJ);
          for (int k = 0; k < 6; k++) vJ[k] = Vi[k] - vJ[k];
        }
        mb_cross_motion(Vi, vJ, t);
        for (int k = 0; k < 6; k++) ai[k] += t[k];
      }
      mb_inertia_apply(b, ai, fi);
      mb_inertia_apply(b, Vi, h);
      mb_cross_force(Vi, h, t);
      for (int k = 0; k < 6; k++) fi[k] += t[k];
    } else {
      mb_inertia_apply(b, ai, fi);
    }
  }
  for (int i = m->nbody - 1; i >= 0; i--) {
    const kn_mb_body* b = &m->bodies[i];
    const double* fi = f + 6 * i;
    for (int k = 0; k < b->nv; k++) tau[b->v_adr + k] = mb_dot6(d->S + 6 * (b->v_adr + k), fi);
    if (b->parent >= 0) {
      double fp[6];
      double* fpar = f + 6 * b->parent;
      mb_force_to_parent(&d->X_pb[i], fi, fp);
      for (int k = 0; k < 6; k++) fpar[k] += fp[k];
    }
  }
}

// (X_pb, V, qdd) => tau = M qdd + C(q, v) v - g(q)
void kn_mb_inverse_dynamics(const kn_mb_model* m, kn_mb_data* d, const double* qdd, double* tau) {
  rnea(m, d, qdd, 1, tau);
}

// (X_pb) => tau_g = -g(q), the forces that hold the tree still
void kn_mb_gravity_torques(const kn_mb_model* m, kn_mb_data* d, double* tau_g) {
  rnea(m, d, NULL, 0, tau_g);
}
