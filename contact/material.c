/* Contact materials: per-geometry defaults and the pair combination rule (digest §2.2). */
#include <math.h>

#include "contact/contact.h"

// (dt) => knead's per-geometry defaults: Drake's point-contact mu and k, tau_d = dt / 2
kn_contact_material kn_contact_material_default(double dt) {
  kn_contact_material m = {.mu = 0.5, .stiffness = 1e6, .dissipation_time = 0.5 * dt};
  return m;
}

// (material A, material B) => pair material: harmonic friction, series stiffness, summed tau_d
kn_contact_material kn_contact_material_combine(const kn_contact_material* a, const kn_contact_material* b) {
  kn_contact_material c;
  c.mu = (a->mu + b->mu > 0.0) ? 2.0 * a->mu * b->mu / (a->mu + b->mu) : 0.0;
  /* springs in series; an infinitely stiff (rigid) side leaves the other spring alone */
  if (isinf(a->stiffness) && isinf(b->stiffness)) c.stiffness = INFINITY;
  else if (isinf(a->stiffness)) c.stiffness = b->stiffness;
  else if (isinf(b->stiffness)) c.stiffness = a->stiffness;
  else if (a->stiffness + b->stiffness > 0.0) c.stiffness = a->stiffness * b->stiffness / (a->stiffness + b->stiffness);
  else c.stiffness = 0.0;
  c.dissipation_time = a->dissipation_time + b->dissipation_time;
  return c;
}
