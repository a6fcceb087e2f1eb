/* The world's triangle surfaces for the ipc backend's mesh-mesh pairs (ipc_surfaces.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/ipc_surfaces.h"

void kn_ipc_surfaces_free(kn_ipc_surfaces* s) {
  if (!s) return;
  kn_ipc_mesh_free(&s->mesh);
  for (int i = 0; s->owned && i < s->nsurf; i++) free(s->owned[i]);
  for (int i = 0; s->mesh.surf && i < s->nsurf; i++) free(s->mesh.surf[i].pt);
  free(s->owned), free(s->mesh.surf), free(s->source), free(s->of_fem), free(s->of_collider), free(s->pairs);
  free(s->mu);
  memset(s, 0, sizeof *s);
}

// (surface i: ntri triangles tri over nvert vertices, rest) => its edges and point array
static int surface_init(kn_ipc_surfaces* s, int i, int nvert, const double* rest, int ntri, const int* tri) {
  kn_ipc_surface* S = &s->mesh.surf[i];
  *S = (kn_ipc_surface){.nvert = nvert, .rest = rest, .ntri = ntri, .tri = tri};
  int ne = 0, *e = NULL;
  if (kn_surface_edges(ntri, tri, &ne, &e, NULL)) return 0;
  s->owned[i] = e, S->nedge = ne, S->edge = e;
  return (S->pt = malloc(((size_t)nvert + 1) * sizeof *S->pt)) != NULL;
}

// (FEM body f, collider k) => 1 when some vertex of f is attached to k's body
static int attached(const kn_world* w, int f, int k) {
  const kn_world_fem* F = &w->fems[f];
  const kn_world_collider* c = &w->colliders[k];
  for (int t = 0; t < F->ntarget; t++)
    if (F->attach_tree[t] >= 0 && F->attach_tree[t] == c->tree && F->attach_link[t] == c->body) return 1;
  return 0;
}

kn_status kn_ipc_surfaces_create(kn_world* w, kn_ipc_surfaces* s, kn_error* err) {
  memset(s, 0, sizeof *s);
  int nc = w->collision ? w->ncollider : 0, nmax = w->nfem + nc;
  s->mesh.surf = kn_calloc((size_t)nmax + 1, sizeof *s->mesh.surf);
  s->owned = kn_calloc((size_t)nmax + 1, sizeof *s->owned);
  s->source = kn_calloc((size_t)nmax + 1, sizeof *s->source);
  s->of_fem = malloc(((size_t)w->nfem + 1) * sizeof *s->of_fem);
  s->of_collider = malloc(((size_t)nc + 1) * sizeof *s->of_collider);
  s->pairs = malloc(2 * ((size_t)nmax * nmax + 1) * sizeof *s->pairs);
  s->mu = malloc(((size_t)nmax * nmax + 1) * sizeof *s->mu);
  int ok = s->mesh.surf && s->owned && s->source && s->of_fem && s->of_collider && s->pairs && s->mu;
  for (int f = 0; ok && f < w->nfem; f++) {
    const kn_world_fem* F = &w->fems[f];
    int i = s->nsurf++;
    s->source[i] = f, s->of_fem[f] = i;
    ok = surface_init(s, i, F->body->mesh.nvert, F->body->mesh.X, F->body->mesh.nsurf, F->body->mesh.surf);
    s->mesh.surf[i].nvert_used = F->nsurf_vert, s->mesh.surf[i].vert = F->surf_vert;
  }
  for (int k = 0; ok && k < nc; k++) {
    int nv, nt;
    const double* v;
    const int* tri;
    s->of_collider[k] = -1;
    if (!kn_collider_mesh(w->collision, k, &nv, &v, &nt, &tri)) continue;
    int i = s->nsurf++;
    s->source[i] = -k - 1, s->of_collider[k] = i;
    ok = surface_init(s, i, nv, v, nt, tri);
  }
  /* the pairs: FEM-FEM, FEM-mesh collider (not one the body is attached to) */
  for (int a = 0; ok && a < s->nsurf; a++)
    for (int b = a + 1; b < s->nsurf; b++) {
      int fa = s->source[a], fb = s->source[b];
      if (fa < 0) continue; /* FEM bodies come first: a rigid a means a rigid b */
      if (fb < 0 && attached(w, fa, -fb - 1)) continue;
      kn_contact_material ma = w->fems[fa].material, mb = fb >= 0 ? w->fems[fb].material : w->colliders[-fb - 1].soft;
      s->pairs[2 * s->mesh.npair] = a, s->pairs[2 * s->mesh.npair + 1] = b;
      s->mu[s->mesh.npair++] = kn_contact_material_combine(&ma, &mb).mu;
    }
  if (!ok) {
    kn_ipc_surfaces_free(s);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory for the ipc mesh surfaces");
  }
  s->mesh.nsurf = s->nsurf, s->mesh.pairs = s->pairs, s->mesh.mu = s->mu;
  return KN_OK;
}

kn_status kn_ipc_surfaces_points(kn_ipc_surfaces* s, const kn_nl_step* st, kn_error* err) {
  kn_world* w = st->w;
  double dt = w->scene->time_step;
  for (int i = 0; i < s->nsurf; i++) {
    kn_ipc_surface* S = &s->mesh.surf[i];
    if (s->source[i] >= 0) { /* an FEM body: each vertex by its clique's map */
      int c = w->first_fem_clique + s->source[i];
      kn_clique* cq = &w->cliques[c];
      int ndof = cq->ops->ndof(cq->self);
      for (int k = 0; k < S->nvert; k++) {
        kn_point_map m;
        cq->ops->point_map(cq->self, k, NULL, dt, &m);
        S->pt[k] = kn_nl_points_add(st->points, &m, st->offset[c], ndof, NULL);
      }
      continue;
    }
    /* a rigid mesh: its vertices in the world at q_n, points of its body (or fixed) */
    const kn_world_collider* col = &w->colliders[-s->source[i] - 1];
    kn_pose X = col->c.X_bg;
    if (col->c.clique >= 0) kn_pose_mul(&w->trees[col->tree].data->X_wb[col->body], &col->c.X_bg, &X);
    int c = col->c.clique >= 0 ? w->clique_of_tree[col->c.clique] : -1;
    kn_clique* cq = c >= 0 ? &w->cliques[c] : NULL;
    for (int k = 0; k < S->nvert; k++) {
      double p[3];
      kn_pose_apply(&X, S->rest + 3 * k, p);
      if (!cq) {
        S->pt[k] = kn_nl_points_add(st->points, NULL, 0, 0, p);
        continue;
      }
      kn_point_map m;
      cq->ops->point_map(cq->self, col->body, p, dt, &m);
      S->pt[k] = kn_nl_points_add(st->points, &m, st->offset[c], cq->ops->ndof(cq->self), NULL);
    }
  }
  if (st->points->nomem) return kn_fail(err, KN_ERR_NOMEM, "out of memory for the ipc mesh surfaces' points");
  return KN_OK;
}

// (candidate side) => its surface, -1 none
static int side_surface(const kn_ipc_surfaces* s, const kn_contact_side* sd) {
  if (sd->kind == KN_SIDE_SURFACE) return s->of_fem[sd->body];
  if (sd->kind == KN_SIDE_COLLIDER) return s->of_collider ? s->of_collider[sd->body] : -1;
  return -1;
}

int kn_ipc_surfaces_replace(const kn_ipc_surfaces* s, const kn_contact_candidate* c) {
  int a = side_surface(s, &c->a), b = side_surface(s, &c->b);
  if (a < 0 || b < 0 || a == b) return 0;
  for (int q = 0; q < s->mesh.npair; q++)
    if ((s->pairs[2 * q] == a && s->pairs[2 * q + 1] == b) || (s->pairs[2 * q] == b && s->pairs[2 * q + 1] == a)) return 1;
  return 0;
}

void kn_ipc_surfaces_name(const kn_ipc_surfaces* s, const kn_world* w, int i, char* buf, size_t cap) {
  int src = s->source[i];
  if (src >= 0) snprintf(buf, cap, "the deformable '%s'", w->fems[src].name);
  else snprintf(buf, cap, "the collider '%s'", w->colliders[-src - 1].name);
}
