/* The contact outputs of a step, whatever the backend: from the candidates and the force on each
 * candidate's side B, the world's rigid, FEM and MPM contact lists (contacts.csv, checks, plots)
 * and the total contact force on each deformable; then the rows a backend adds for contacts that
 * are no candidates (its mesh pairs). */
#include <stdlib.h>
#include <string.h>

#include "sim/backend.h"
#include "sim/candidates.h"

static kn_status grow(void** p, int* cap, int n, size_t size, kn_error* err) {
  if (n <= *cap) return KN_OK;
  int c = *cap ? *cap : 64;
  while (c < n) c *= 2;
  void* q = realloc(*p, (size_t)c * size);
  if (!q) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  *p = q, *cap = c;
  return KN_OK;
}

static void rigid(const kn_contact_point* cp, const double f[3], kn_world_contact* o) {
  o->a = cp->a, o->b = cp->b, o->phi = cp->phi;
  memcpy(o->p, cp->p, sizeof o->p);
  memcpy(o->n, cp->n, sizeof o->n);
  memcpy(o->f, f, sizeof o->f);
}

kn_status kn_sim_contacts_record(kn_world* w, const kn_sim_candidates* c, const double* force, kn_error* err) {
  kn_status st = kn_world_reserve_contacts(w, c->first_fem, err);
  if (!st) st = grow((void**)&w->fem_contacts, &w->fem_contact_cap, c->nfem, sizeof *w->fem_contacts, err);
  if (!st) st = grow((void**)&w->mpm_contacts, &w->mpm_contact_cap, c->nmpm, sizeof *w->mpm_contacts, err);
  for (int i = 0; !st && i < w->nmpm; i++)
    if (!w->mpms[i].collider_force &&
        !(w->mpms[i].collider_force = kn_calloc(3 * (size_t)w->ncollider + 3, sizeof(double))))
      st = kn_fail(err, KN_ERR_NOMEM, "out of memory");
  if (st) return st;
  for (int i = 0; i < w->nfem; i++) memset(w->fems[i].force, 0, sizeof w->fems[i].force);
  for (int i = 0; i < w->nmpm; i++) {
    memset(w->mpms[i].force, 0, sizeof w->mpms[i].force);
    memset(w->mpms[i].collider_force, 0, 3 * (size_t)w->ncollider * sizeof(double));
    w->mpms[i].ncontact = 0;
  }
  for (int i = 0; i < c->n; i++) {
    const kn_contact_candidate* cc = &c->c[i];
    const double* f = force + 3 * i;
    if (cc->origin == KN_CANDIDATE_RIGID) {
      rigid(&c->pts[cc->source], f, &w->contacts[i]);
    } else if (cc->origin == KN_CANDIDATE_PARTICLE_RIGID) {
      /* f acts on B (the collider); the particle gets the opposite */
      const kn_sim_mpm_contact* mc = &c->mpm[cc->source];
      kn_world_mpm* M = &w->mpms[mc->mpm];
      kn_world_mpm_contact* o = &w->mpm_contacts[i - c->first_mpm];
      o->mpm = mc->mpm, o->particle = mc->local, o->collider = cc->b.body, o->phi = cc->phi;
      memcpy(o->p, cc->p, sizeof o->p);
      M->ncontact++;
      for (int a = 0; a < 3; a++) {
        o->n[a] = cc->R_WC[3 * a + 2], o->f[a] = f[a];
        M->collider_force[3 * cc->b.body + a] += f[a];
        M->force[a] -= f[a];
      }
    } else {
      kn_world_fem_contact* o = &w->fem_contacts[i - c->first_fem];
      int afem = cc->a.kind == KN_SIDE_SURFACE ? cc->a.body : -1;
      o->fem_b = cc->b.body, o->a_collider = afem >= 0 ? -1 : cc->a.body, o->a_fem = afem;
      o->kind = cc->origin - KN_CANDIDATE_FEM_VERTEX_RIGID;
      o->phi = cc->phi;
      memcpy(o->p, cc->p, sizeof o->p);
      for (int a = 0; a < 3; a++) {
        o->n[a] = cc->R_WC[3 * a + 2], o->f[a] = f[a];
        w->fems[cc->b.body].force[a] += f[a];
        if (afem >= 0) w->fems[afem].force[a] -= f[a];
      }
    }
  }
  w->ncontact = c->first_fem;
  w->nfem_contact = c->nfem;
  w->nmpm_contact = c->nmpm;
  return KN_OK;
}

kn_status kn_sim_contacts_add_pair(kn_world* w, const kn_sim_pair_contact* r, kn_error* err) {
  if (r->a_fem < 0 && r->b_fem < 0) { /* two rigid bodies */
    kn_status st = kn_world_reserve_contacts(w, w->ncontact + 1, err);
    if (st) return st;
    kn_world_contact* o = &w->contacts[w->ncontact++];
    o->a = r->a_collider, o->b = r->b_collider, o->phi = r->phi;
    memcpy(o->p, r->p, sizeof o->p), memcpy(o->n, r->n, sizeof o->n), memcpy(o->f, r->f, sizeof o->f);
    return KN_OK;
  }
  kn_status st = grow((void**)&w->fem_contacts, &w->fem_contact_cap, w->nfem_contact + 1, sizeof *w->fem_contacts, err);
  if (st) return st;
  int flip = r->b_fem < 0; /* B of an FEM row is a deformable */
  double sg = flip ? -1 : 1;
  kn_world_fem_contact* o = &w->fem_contacts[w->nfem_contact++];
  o->fem_b = flip ? r->a_fem : r->b_fem;
  o->a_fem = flip ? r->b_fem : r->a_fem, o->a_collider = flip ? r->b_collider : r->a_collider;
  o->kind = 3 + (r->edge_edge != 0), o->phi = r->phi;
  memcpy(o->p, r->p, sizeof o->p);
  for (int a = 0; a < 3; a++) {
    o->n[a] = sg * r->n[a], o->f[a] = sg * r->f[a];
    w->fems[o->fem_b].force[a] += o->f[a];
    if (o->a_fem >= 0) w->fems[o->a_fem].force[a] -= o->f[a];
  }
  return KN_OK;
}
