/* The world's triangle surfaces as material points of the step (mesh_surfaces.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/mesh_surfaces.h"
#include "sim/sim_internal.h"

void kn_mesh_surfaces_free(kn_mesh_surfaces* m) {
  if (!m) return;
  for (int i = 0; m->s && i < m->n; i++) kn_triangles_free(&m->s[i].tris);
  free(m->s), free(m->of_fem), free(m->of_collider), free(m->pt);
  memset(m, 0, sizeof *m);
}

kn_status kn_mesh_surfaces_create(kn_world* w, kn_mesh_surfaces_colliders which, kn_mesh_surfaces* m,
                                  kn_error* err) {
  memset(m, 0, sizeof *m);
  int nc = w->collision ? w->ncollider : 0;
  m->s = kn_calloc((size_t)(w->nfem + nc) + 1, sizeof *m->s);
  m->of_fem = malloc(((size_t)w->nfem + 1) * sizeof *m->of_fem);
  m->of_collider = malloc(((size_t)nc + 1) * sizeof *m->of_collider);
  int ok = m->s && m->of_fem && m->of_collider;
  for (int f = 0; ok && f < w->nfem; f++) {
    const kn_world_fem* F = &w->fems[f];
    m->of_fem[f] = m->n;
    m->s[m->n++] = (kn_mesh_surface){.fem = f, .collider = -1, .clique = w->first_fem_clique + f,
                                     .nv = F->body->mesh.nvert, .nt = F->body->mesh.nsurf, .rest = F->body->mesh.X,
                                     .tri = F->body->mesh.surf, .nused = F->nsurf_vert, .used = F->surf_vert};
  }
  for (int k = 0; ok && k < nc; k++) {
    kn_mesh_surface* s = &m->s[m->n];
    m->of_collider[k] = -1;
    if (which == KN_MESH_SURFACES_MESHES && w->colliders[k].c.shape->type != KN_SHAPE_MESH) continue;
    kn_status st = kn_shape_triangles(w->collision, k, &s->tris, err);
    if (st == KN_ERR_UNSUPPORTED) { /* a sphere, cylinder, capsule or half-space */
      *err = (kn_error){0};
      continue;
    }
    if (st) {
      kn_mesh_surfaces_free(m);
      return st;
    }
    int tree = w->colliders[k].c.clique;
    s->fem = -1, s->collider = k, s->clique = tree >= 0 ? w->clique_of_tree[tree] : -1;
    s->nv = s->tris.nv, s->nt = s->tris.nt, s->rest = s->tris.v, s->tri = s->tris.tri;
    m->of_collider[k] = m->n++;
  }
  for (int i = 0; ok && i < m->n; i++) m->s[i].first = m->nvert, m->nvert += m->s[i].nv;
  if (!ok || !(m->pt = malloc(((size_t)m->nvert + 1) * sizeof *m->pt))) {
    kn_mesh_surfaces_free(m);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory for the mesh surfaces");
  }
  return KN_OK;
}

kn_status kn_mesh_surfaces_points(kn_mesh_surfaces* m, const kn_nl_step* st, int all, kn_error* err) {
  kn_world* w = st->w;
  for (int g = 0; g < m->nvert; g++) m->pt[g] = -1;
  for (int i = 0; i < m->n; i++) {
    const kn_mesh_surface* s = &m->s[i];
    kn_clique* cq = s->clique >= 0 ? &w->cliques[s->clique] : NULL;
    int ndof = cq ? cq->ops->ndof(cq->self) : 0;
    kn_pose X;
    if (s->collider >= 0) kn_sim_collider_pose(w, s->collider, &X);
    int nj = s->used && !all ? s->nused : s->nv;
    for (int jj = 0; jj < nj; jj++) {
      int j = s->used && !all ? s->used[jj] : jj;
      kn_point_map map;
      double p[3];
      if (s->collider >= 0) kn_pose_apply(&X, s->rest + 3 * j, p);
      if (s->fem >= 0)
        cq->ops->point_map(cq->self, j, NULL, st->dt, &map);
      else if (cq)
        cq->ops->point_map(cq->self, w->colliders[s->collider].body, p, st->dt, &map);
      m->pt[s->first + j] = kn_nl_points_add(st->points, cq ? &map : NULL, cq ? st->offset[s->clique] : 0, ndof,
                                             cq ? NULL : p);
    }
  }
  if (st->points->nomem) return kn_fail(err, KN_ERR_NOMEM, "out of memory for the mesh surfaces' points");
  return KN_OK;
}

int kn_mesh_surfaces_of_side(const kn_mesh_surfaces* m, const kn_contact_side* sd) {
  if (sd->kind == KN_SIDE_SURFACE) return m->of_fem[sd->body];
  if (sd->kind == KN_SIDE_COLLIDER) return m->of_collider[sd->body];
  return -1;
}

int kn_mesh_surfaces_of_vertex(const kn_mesh_surfaces* m, int g) {
  int lo = 0, hi = m->n - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (m->s[mid].first <= g) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

void kn_mesh_surfaces_name(const kn_mesh_surfaces* m, const kn_world* w, int i, char* buf, size_t cap) {
  const kn_mesh_surface* s = &m->s[i];
  if (s->fem >= 0) snprintf(buf, cap, "the deformable '%s'", w->fems[s->fem].name);
  else snprintf(buf, cap, "the collider '%s'", w->colliders[s->collider].name);
}

kn_status kn_mesh_surfaces_record_pair(const kn_mesh_surfaces* m, kn_world* w, int sa, int sb, const int side[4],
                                       int edge_edge, const double x[12], const double wt[4], const double F[12],
                                       const double n[3], double phi, kn_error* err) {
  const kn_mesh_surface *A = &m->s[sa], *B = &m->s[sb];
  kn_sim_pair_contact r = {.a_fem = A->fem, .a_collider = A->collider, .b_fem = B->fem, .b_collider = B->collider,
                           .edge_edge = edge_edge, .phi = phi};
  double pt[2][3] = {{0, 0, 0}, {0, 0, 0}}, ws[2] = {0, 0};
  for (int j = 0; j < 4; j++) {
    ws[side[j]] += wt[j];
    for (int a = 0; a < 3; a++) {
      pt[side[j]][a] += wt[j] * x[3 * j + a];
      if (side[j]) r.f[a] += F[3 * j + a];
    }
  }
  for (int a = 0; a < 3; a++) {
    r.n[a] = n[a];
    r.p[a] = 0.5 * (ws[0] > 0 ? pt[0][a] / ws[0] : 0) + 0.5 * (ws[1] > 0 ? pt[1][a] / ws[1] : 0);
  }
  return kn_sim_contacts_add_pair(w, &r, err);
}
