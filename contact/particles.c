/* Contact detection of MPM particles against rigid colliders (contact/contact.h), with the broad
 * phase that culls (collider, particle) tests without changing the contact set. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/collision_internal.h" /* colliders' shapes and local bounding boxes */
#include "contact/contact.h"

//---- broad phase ----

void kn_particle_aabb(int np, const double* x, double lo[3], double hi[3]) {
  for (int k = 0; k < 3; k++) lo[k] = INFINITY, hi[k] = -INFINITY;
  for (int p = 0; p < np; p++)
    for (int k = 0; k < 3; k++) {
      double v = x[3 * p + k];
      lo[k] = v < lo[k] ? v : lo[k];
      hi[k] = v > hi[k] ? v : hi[k];
    }
}

/* Why the bounds are exact (never skip a particle the brute force would keep): the shape lies in
 * its local box, hence in the rotated box's world AABB and in the ball around the box centre of
 * radius R = half its diagonal; a point outside the AABB inflated by margin, or farther than
 * R + margin from the centre, is farther than margin from the shape, so phi >= margin. A relative
 * slack of 1e-9 covers the rounding of both computations. */
int kn_particle_bound_init(const kn_collision_scene* cs, int k, const kn_pose* X_WG, double margin, const double lo[3],
                           const double hi[3], kn_particle_bound* bd) {
  const kn_shape* sh = cs->colliders[k].shape;
  memset(bd, 0, sizeof *bd);
  if (sh->type == KN_SHAPE_HALFSPACE) {
    /* phi = n . (x - p) is already cheap: only cull the whole body by its AABB's lowest corner */
    const double n[3] = {X_WG->R[2], X_WG->R[5], X_WG->R[8]};
    double dmin = 0, scale = 1;
    for (int a = 0; a < 3; a++) {
      dmin += n[a] * ((n[a] > 0 ? lo[a] : hi[a]) - X_WG->p[a]);
      scale += fabs(lo[a] - X_WG->p[a]) + fabs(hi[a] - X_WG->p[a]);
    }
    bd->all = 1;
    return dmin < margin + 1e-9 * scale;
  }
  const double* llo = &cs->local_lo[3 * k];
  const double* lhi = &cs->local_hi[3 * k];
  double R2 = 0, scale = 1;
  for (int a = 0; a < 3; a++) {
    double c = X_WG->p[a], e = 0;
    for (int j = 0; j < 3; j++) {
      c += X_WG->R[3 * a + j] * 0.5 * (llo[j] + lhi[j]);
      e += fabs(X_WG->R[3 * a + j]) * 0.5 * (lhi[j] - llo[j]);
    }
    double half = 0.5 * (lhi[a] - llo[a]);
    R2 += half * half;
    scale += fabs(c) + e;
    bd->c[a] = c;
    bd->lo[a] = c - e, bd->hi[a] = c + e;
  }
  double slack = margin + 1e-9 * scale;
  for (int a = 0; a < 3; a++) bd->lo[a] -= slack, bd->hi[a] += slack;
  double r = sqrt(R2) + slack;
  bd->r2 = r > 0 ? r * r : 0;
  for (int a = 0; a < 3; a++)
    if (hi[a] < bd->lo[a] || lo[a] > bd->hi[a]) return 0;
  return 1;
}

//---- detection ----

// (unit normal n) => R_WC with columns t1 = n x the least-aligned axis (normalized), t2 = n x t1, n
static void frame_of(const double n[3], double R[9]) {
  double t1[3], t2[3];
  int ax = fabs(n[0]) <= fabs(n[1]) && fabs(n[0]) <= fabs(n[2]) ? 0 : fabs(n[1]) <= fabs(n[2]) ? 1 : 2;
  double e[3] = {0, 0, 0};
  e[ax] = 1;
  t1[0] = n[1] * e[2] - n[2] * e[1], t1[1] = n[2] * e[0] - n[0] * e[2], t1[2] = n[0] * e[1] - n[1] * e[0];
  double tn = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
  for (int a = 0; a < 3; a++) t1[a] /= tn;
  t2[0] = n[1] * t1[2] - n[2] * t1[1], t2[1] = n[2] * t1[0] - n[0] * t1[2], t2[2] = n[0] * t1[1] - n[1] * t1[0];
  for (int a = 0; a < 3; a++) R[3 * a] = t1[a], R[3 * a + 1] = t2[a], R[3 * a + 2] = n[a];
}

kn_status kn_contact_detect_particles(const kn_contact_particles* sets, int nset, const kn_collision_scene* cs,
                                      const kn_soft_collider* colliders, const kn_pose* X_WG, double margin,
                                      kn_contact_candidate_list* out, kn_error* err) {
  const int base = out->n;
  for (int i = 0; i < nset; i++) {
    const kn_contact_particles* b = &sets[i];
    const double reach = margin + b->radius; /* of the particle's center */
    double blo[3], bhi[3]; /* broad phase: skips only particles with phi >= margin */
    kn_particle_aabb(b->np, b->x, blo, bhi);
    for (int k = 0; k < cs->n; k++) {
      kn_contact_material mat = kn_contact_material_combine(&colliders[k].soft, &b->material);
      kn_particle_bound bd;
      if (!kn_particle_bound_init(cs, k, &X_WG[k], reach, blo, bhi, &bd)) continue;
      for (int p = 0; p < b->np; p++) {
        double g[3];
        if (!kn_particle_bound_test(&bd, b->x + 3 * p)) continue;
        double phi = kn_collider_signed_distance(cs, k, &X_WG[k], b->x + 3 * p, g);
        if (!(phi < reach)) continue;
        kn_contact_candidate* x = kn_contact_candidate_push(out, err);
        if (!x) return KN_ERR_NOMEM;
        x->a = (kn_contact_side){KN_SIDE_PARTICLE, b->body, 1, {b->first + p, 0, 0}, {1, 0, 0}};
        x->b = (kn_contact_side){KN_SIDE_COLLIDER, k, 0, {0, 0, 0}, {0, 0, 0}};
        x->phi = phi - b->radius, x->material = mat;
        x->origin = KN_CANDIDATE_PARTICLE_RIGID, x->source = out->n - 1 - base;
        double n[3] = {-g[0], -g[1], -g[2]};
        double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int a = 0; a < 3; a++) n[a] /= nn;
        for (int a = 0; a < 3; a++) x->p[a] = b->x[3 * p + a] + b->radius * n[a];
        frame_of(n, x->R_WC);
      }
    }
  }
  return KN_OK;
}
