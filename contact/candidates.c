/* The list of contact candidates across body kinds, and its rigid pairs (contact/contact.h): the
 * points of kn_collision_detect_reach as candidates whose sides are the two colliders. The FEM
 * (fem_detect.c) and particle (particles.c) detectors append to the same list. */
#include <stdlib.h>
#include <string.h>

#include "contact/collision_internal.h" /* the scene's colliders (world-fixed ones have clique -1) */
#include "contact/contact.h"

void kn_contact_candidate_list_free(kn_contact_candidate_list* l) {
  free(l->c);
  memset(l, 0, sizeof *l);
}

kn_contact_candidate* kn_contact_candidate_push(kn_contact_candidate_list* l, kn_error* err) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 256;
    kn_contact_candidate* x = realloc(l->c, (size_t)cap * sizeof *x);
    if (!x) return kn_fail(err, KN_ERR_NOMEM, "out of memory"), NULL;
    l->c = x, l->cap = cap;
  }
  kn_contact_candidate* x = &l->c[l->n++];
  memset(x, 0, sizeof *x);
  return x;
}

kn_status kn_contact_detect_rigid(kn_collision_scene* cs, const kn_pose* X_WG, double margin, const double* reach,
                                  const kn_contact_point** points, int* count, kn_contact_candidate_list* out,
                                  kn_error* err) {
  kn_status st = kn_collision_detect_reach(cs, X_WG, margin, reach, points, count, err);
  if (st) return st;
  for (int i = 0; i < *count; i++) {
    const kn_contact_point* cp = &(*points)[i];
    /* a pair of world-fixed colliders never moves */
    if (cs->colliders[cp->a].clique < 0 && cs->colliders[cp->b].clique < 0) continue;
    kn_contact_candidate* x = kn_contact_candidate_push(out, err);
    if (!x) return KN_ERR_NOMEM;
    x->a = (kn_contact_side){KN_SIDE_COLLIDER, cp->a, 0, {0, 0, 0}, {0, 0, 0}};
    x->b = (kn_contact_side){KN_SIDE_COLLIDER, cp->b, 0, {0, 0, 0}, {0, 0, 0}};
    memcpy(x->p, cp->p, sizeof x->p);
    memcpy(x->R_WC, cp->R_WC, sizeof x->R_WC);
    x->phi = cp->phi, x->material = cp->material;
    x->origin = KN_CANDIDATE_RIGID, x->source = i;
  }
  return KN_OK;
}
