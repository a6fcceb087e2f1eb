/* Kinetic and potential energy of the tree. */
#include "multibody/mb_internal.h"

// (V) => 1/2 sum V_i^T I_i V_i = 1/2 v^T M v
double kn_mb_kinetic_energy(const kn_mb_model* m, const kn_mb_data* d) {
  double e = 0;
  for (int i = 0; i < m->nbody; i++) {
    double h[6];
    mb_inertia_apply(&m->bodies[i], d->V + 6 * i, h);
    e += mb_dot6(d->V + 6 * i, h);
  }
  return 0.5 * e;
}

// (X_wb) => -sum m_i g . c_i, with c_i the world position of body i's centre of mass
double kn_mb_potential_energy(const kn_mb_model* m, const kn_mb_data* d) {
  double e = 0;
  for (int i = 0; i < m->nbody; i++) {
    const kn_mb_body* b = &m->bodies[i];
    double c[3];
    kn_pose_apply(&d->X_wb[i], b->com, c);
    e -= b->mass * kn_vec3_dot(m->gravity, c);
  }
  return e;
}
