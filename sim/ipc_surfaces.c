/* The world's triangle surfaces for the ipc backend's mesh-mesh pairs (ipc_surfaces.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/ipc_surfaces.h"

void kn_ipc_surfaces_free(kn_ipc_surfaces* s) {
  if (!s) return;
  kn_ipc_mesh_free(&s->mesh);
  for (int i = 0; s->owned && i < s->nsurf; i++) free(s->owned[i]);
  free(s->owned), free(s->mesh.surf), free(s->source), free(s->pairs), free(s->mu);
  kn_mesh_surfaces_free(&s->ms);
  memset(s, 0, sizeof *s);
}

// (surface i of s->ms) => its ipc surface with its edges, its points those of s->ms
static int surface_init(kn_ipc_surfaces* s, int i) {
  const kn_mesh_surface* M = &s->ms.s[i];
  kn_ipc_surface* S = &s->mesh.surf[i];
  *S = (kn_ipc_surface){.nvert = M->nv, .pt = s->ms.pt + M->first, .rest = M->rest, .ntri = M->nt, .tri = M->tri,
                        .nvert_used = M->used ? M->nused : 0, .vert = M->used};
  int ne = 0, *e = NULL;
  if (kn_surface_edges(M->nt, M->tri, &ne, &e, NULL)) return 0;
  s->owned[i] = e, S->nedge = ne, S->edge = e;
  return 1;
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
  kn_status st = kn_mesh_surfaces_create(w, KN_MESH_SURFACES_MESHES, &s->ms, err);
  if (st) return st;
  int nmax = s->ms.n;
  s->mesh.surf = kn_calloc((size_t)nmax + 1, sizeof *s->mesh.surf);
  s->owned = kn_calloc((size_t)nmax + 1, sizeof *s->owned);
  s->source = kn_calloc((size_t)nmax + 1, sizeof *s->source);
  s->pairs = malloc(2 * ((size_t)nmax * nmax + 1) * sizeof *s->pairs);
  s->mu = malloc(((size_t)nmax * nmax + 1) * sizeof *s->mu);
  int ok = s->mesh.surf && s->owned && s->source && s->pairs && s->mu;
  for (int i = 0; ok && i < nmax; i++) {
    s->nsurf++;
    s->source[i] = s->ms.s[i].fem >= 0 ? s->ms.s[i].fem : -s->ms.s[i].collider - 1;
    ok = surface_init(s, i);
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
  return kn_mesh_surfaces_points(&s->ms, st, 1, err);
}

int kn_ipc_surfaces_replace(const kn_ipc_surfaces* s, const kn_contact_candidate* c) {
  int a = kn_mesh_surfaces_of_side(&s->ms, &c->a), b = kn_mesh_surfaces_of_side(&s->ms, &c->b);
  if (a < 0 || b < 0 || a == b) return 0;
  for (int q = 0; q < s->mesh.npair; q++)
    if ((s->pairs[2 * q] == a && s->pairs[2 * q + 1] == b) || (s->pairs[2 * q] == b && s->pairs[2 * q + 1] == a)) return 1;
  return 0;
}

void kn_ipc_surfaces_name(const kn_ipc_surfaces* s, const kn_world* w, int i, char* buf, size_t cap) {
  kn_mesh_surfaces_name(&s->ms, w, i, buf, cap);
}

/*---- outputs: the mesh pairs as contact rows ----*/

typedef struct {
  const kn_ipc_surfaces* s;
  kn_world* w;
  kn_error* err;
} row_ctx;

/* one pair => its row: the normal along d^2's gradient on B's vertices (from A into B), each traced
 * point its side's vertices weighted by their part of that gradient (the closest points' weights) */
static kn_status row(void* p, const kn_ipc_mesh_contact* c) {
  row_ctx* r = p;
  double n[3] = {0, 0, 0}, wt[4];
  for (int j = 0; j < 4; j++) {
    wt[j] = kn_vec3_norm(c->gs + 3 * j);
    for (int a = 0; a < 3; a++) n[a] += c->side[j] ? c->gs[3 * j + a] : 0;
  }
  double len = kn_vec3_norm(n);
  for (int a = 0; a < 3; a++) n[a] = len > 0 ? n[a] / len : 0;
  return kn_mesh_surfaces_record_pair(&r->s->ms, r->w, r->s->pairs[2 * c->q], r->s->pairs[2 * c->q + 1], c->side, c->ee,
                                      c->x, wt, c->F, n, c->d, r->err);
}

kn_status kn_ipc_surfaces_record(const kn_ipc_surfaces* s, const kn_ipc_term* t, kn_world* w, const double* v,
                                 kn_error* err) {
  row_ctx c = {s, w, err};
  return kn_ipc_mesh_contacts(t, v, row, &c, err);
}
