/* The FEM boundaries the penalty backend's anchors walk (penalty_fem_meshes.h). */
#include <stdlib.h>
#include <string.h>

#include "sim/penalty_fem_meshes.h"

kn_status kn_penalty_fem_meshes_build(const kn_world* w, kn_penalty_fem_meshes* fm, kn_error* err) {
  memset(fm, 0, sizeof *fm);
  fm->fem = kn_calloc((size_t)w->nfem + 1, sizeof *fm->fem);
  fm->top = kn_calloc((size_t)w->nfem + 1, sizeof *fm->top);
  fm->pt = kn_calloc((size_t)w->nfem + 1, sizeof *fm->pt);
  fm->used = kn_calloc((size_t)w->nfem + 1, 1);
  fm->n = w->nfem;
  int ok = fm->fem && fm->top && fm->pt && fm->used;
  for (int f = 0; ok && f < w->nfem; f++) {
    const kn_world_fem* F = &w->fems[f];
    const kn_tet_mesh* m = &F->body->mesh;
    if (m->nsurf == 0) continue;
    kn_status st = kn_penalty_mesh_topology_build(m->nvert, m->nsurf, m->surf, &fm->top[f], err);
    if (st) {
      kn_penalty_fem_meshes_free(fm);
      return st;
    }
    double* x = malloc(3 * (size_t)m->nvert * sizeof *x);
    fm->pt[f] = malloc((size_t)m->nvert * sizeof *fm->pt[f]);
    if (!(ok = x && fm->pt[f])) {
      free(x);
      break;
    }
    memcpy(x, m->X, 3 * (size_t)m->nvert * sizeof *x);
    for (int v = 0; v < m->nvert; v++) fm->pt[f][v] = -1;
    const kn_penalty_mesh_topology* t = &fm->top[f];
    fm->fem[f] = (kn_penalty_fem_mesh){.mesh = {m->nvert, m->nsurf, x, m->surf, t->adj, t->vt_start, t->vt, NULL},
                                       .x = x, .pt = fm->pt[f], .verts = F->surf_vert, .nverts = F->nsurf_vert};
  }
  if (!ok) {
    kn_penalty_fem_meshes_free(fm);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory for the penalty backend's FEM surfaces");
  }
  return KN_OK;
}

void kn_penalty_fem_meshes_free(kn_penalty_fem_meshes* fm) {
  for (int f = 0; f < fm->n; f++) {
    if (fm->top) kn_penalty_mesh_topology_free(&fm->top[f]);
    if (fm->fem) free(fm->fem[f].x);
    if (fm->pt) free(fm->pt[f]);
  }
  free(fm->fem), free(fm->top), free(fm->pt), free(fm->used);
  memset(fm, 0, sizeof *fm);
}

void kn_penalty_fem_meshes_reset(kn_penalty_fem_meshes* fm) {
  for (int f = 0; f < fm->n; f++) {
    if (fm->used[f])
      for (int v = 0; v < fm->fem[f].mesh.nv; v++) fm->pt[f][v] = -1;
    fm->used[f] = 0;
  }
}

int kn_penalty_fem_meshes_point(kn_penalty_fem_meshes* fm, int f, const int vert[3], const double w[3],
                                kn_penalty_mesh_point* p) {
  if (f < 0 || f >= fm->n || fm->fem[f].mesh.nt == 0) return 0;
  const kn_penalty_mesh* m = &fm->fem[f].mesh;
  for (int i = m->vt_start[vert[0]]; i < m->vt_start[vert[0] + 1]; i++) {
    const int* t = m->tri + 3 * m->vt[i];
    int at[3], hit = 0;
    for (int k = 0; k < 3; k++) /* at[k]: vert's slot of the triangle's vertex k */
      for (int j = 0; j < 3; j++)
        if (t[k] == vert[j]) at[k] = j, hit |= 1 << j;
    if (hit != 7) continue;
    p->tri = m->vt[i];
    for (int k = 0; k < 3; k++) p->w[k] = w[at[k]];
    fm->used[f] = 1;
    return 1;
  }
  return 0;
}

kn_status kn_penalty_fem_meshes_points(kn_penalty_fem_meshes* fm, const kn_nl_step* st, kn_error* err) {
  kn_world* w = st->w;
  double dt = w->scene->time_step;
  for (int f = 0; f < fm->n; f++) {
    if (!fm->used[f]) continue;
    int c = w->first_fem_clique + f;
    kn_clique* cq = &w->cliques[c];
    int ndof = cq->ops->ndof(cq->self);
    kn_penalty_fem_mesh* F = &fm->fem[f];
    for (int i = 0; i < F->nverts; i++) {
      int v = F->verts[i];
      kn_point_map m;
      cq->ops->point_map(cq->self, v, NULL, dt, &m);
      fm->pt[f][v] = kn_nl_points_add(st->points, &m, st->offset[c], ndof, NULL);
      memcpy(F->x + 3 * v, m.x0, sizeof m.x0);
    }
  }
  if (st->points->nomem) return kn_fail(err, KN_ERR_NOMEM, "out of memory for the penalty backend's FEM surface points");
  return KN_OK;
}
