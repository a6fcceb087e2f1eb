/* World-aligned point Jacobians. */
#include <string.h>

#include "multibody/mb_internal.h"

// (X_wb) => Jv, Jw (3 x nv, row-major): for each dof k of an ancestor j of body (body included),
// the column is omega_k = R_wj s_w and v_k = R_wj s_v + omega_k x (p_w - o_j).
void kn_mb_point_jacobian(const kn_mb_model* m, const kn_mb_data* d, int body, const double p_b[3], double* Jv,
                          double* Jw) {
  int nv = m->nv;
  memset(Jv, 0, 3 * (size_t)nv * sizeof *Jv);
  if (Jw) memset(Jw, 0, 3 * (size_t)nv * sizeof *Jw);
  double pw[3];
  kn_pose_apply(&d->X_wb[body], p_b, pw);
  for (int j = body; j >= 0; j = m->bodies[j].parent) {
    const kn_mb_body* b = &m->bodies[j];
    if (b->nv == 0) continue;
    const kn_pose* X = &d->X_wb[j];
    double r[3] = {pw[0] - X->p[0], pw[1] - X->p[1], pw[2] - X->p[2]};
    for (int k = 0; k < b->nv; k++) {
      int col = b->v_adr + k;
      const double* s = d->S + 6 * col;
      double w[3], v[3], t[3];
      mb_rot(X->R, s, w);
      mb_rot(X->R, s + 3, v);
      mb_cross(w, r, t);
      for (int a = 0; a < 3; a++) {
        Jv[a * nv + col] = v[a] + t[a];
        if (Jw) Jw[a * nv + col] = w[a];
      }
    }
  }
}
