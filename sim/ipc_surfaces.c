/* The world's triangle surfaces for the ipc backend's mesh-mesh pairs (ipc_surfaces.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/ipc_surfaces.h"

#include <math.h>

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

// collider k's pose in the world with its trees' kinematics data (NULL: the world's own, at q_n)
static kn_pose collider_pose(const kn_world* w, int k, kn_mb_data* const* data) {
  const kn_world_collider* col = &w->colliders[k];
  kn_pose X = col->c.X_bg;
  if (col->c.clique >= 0)
    kn_pose_mul(&(data ? data[col->tree] : w->trees[col->tree].data)->X_wb[col->body], &col->c.X_bg, &X);
  return X;
}

kn_status kn_ipc_surfaces_create(kn_world* w, kn_ipc_surfaces* s, kn_error* err) {
  memset(s, 0, sizeof *s);
  int nc = w->collision ? w->ncollider : 0, nmax = w->nfem + nc;
  s->mesh.surf = kn_calloc((size_t)nmax + 1, sizeof *s->mesh.surf);
  s->owned = kn_calloc((size_t)nmax + 1, sizeof *s->owned);
  s->source = kn_calloc((size_t)nmax + 1, sizeof *s->source);
  s->of_fem = malloc(((size_t)w->nfem + 1) * sizeof *s->of_fem);
  s->of_collider = malloc(((size_t)nc + 1) * sizeof *s->of_collider);
  s->pairs = malloc(2 * ((size_t)nmax * (nmax + 1) + 1) * sizeof *s->pairs);
  s->mu = malloc(((size_t)nmax * (nmax + 1) + 1) * sizeof *s->mu);
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
  /* the pairs: FEM-FEM, each FEM body with itself (its self-contact: pairs sharing no vertex),
   * FEM-mesh collider (not one the body is attached to), and two mesh colliders the detection's
   * filters let touch (not on one body, not both fixed, not a link and its parent, groups) */
  for (int a = 0; ok && a < s->nsurf; a++)
    for (int b = a; b < s->nsurf; b++) {
      int fa = s->source[a], fb = s->source[b];
      kn_contact_material ma, mb;
      if (fa >= 0 && fb >= 0) ma = w->fems[fa].material, mb = w->fems[fb].material;
      else if (a == b) continue;
      else if (fa >= 0) { /* FEM bodies come first: a rigid a means a rigid b */
        if (attached(w, fa, -fb - 1)) continue;
        ma = w->fems[fa].material, mb = w->colliders[-fb - 1].soft;
      } else {
        if (!kn_collision_pair_allowed(w->collision, -fa - 1, -fb - 1)) continue;
        ma = w->colliders[-fa - 1].c.material, mb = w->colliders[-fb - 1].c.material;
      }
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
    kn_pose X = collider_pose(w, -s->source[i] - 1, NULL);
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

void kn_ipc_surfaces_end(const kn_ipc_surfaces* s, const kn_nl_step* st, const double* v, kn_mb_data* const* data,
                         double* x) {
  for (int i = 0, o = 0; i < s->nsurf; o += 3 * s->mesh.surf[i].nvert, i++) {
    const kn_ipc_surface* S = &s->mesh.surf[i];
    if (s->source[i] >= 0) { /* an FEM body: its advance is the map */
      for (int k = 0; k < S->nvert; k++) {
        double u[3];
        kn_nl_point_velocity(st->points, S->pt[k], v, u);
        for (int a = 0; a < 3; a++) x[o + 3 * k + a] = st->points->p[S->pt[k]].x0[a] + st->dt * u[a];
      }
      continue;
    }
    kn_pose X = collider_pose(st->w, -s->source[i] - 1, data);
    for (int k = 0; k < S->nvert; k++) kn_pose_apply(&X, S->rest + 3 * k, x + o + 3 * k);
  }
}

// (n points x) => their box lo, hi
static void box_of(const double* x, int n, double lo[3], double hi[3]) {
  for (int k = 0; k < 3; k++) lo[k] = INFINITY, hi[k] = -INFINITY;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) lo[k] = fmin(lo[k], x[3 * i + k]), hi[k] = fmax(hi[k], x[3 * i + k]);
}
static int boxes_apart(const double lo1[3], const double hi1[3], const double lo2[3], const double hi2[3]) {
  for (int k = 0; k < 3; k++)
    if (lo2[k] > hi1[k] || lo1[k] > hi2[k]) return 1;
  return 0;
}

/* the segment p-q passes through the triangle t more than tol from its boundary: its ends more than
 * tol on either side of the plane, the crossing point more than tol inside each edge (touching, to
 * round-off, is not crossing: a pair at distance <= 1e-9 l is refused at the first step with its own
 * message) */
static int crosses(const double p[3], const double q[3], const double t[9], double tol) {
  double u[3], v[3], n[3], sp = 0, sq = 0;
  for (int k = 0; k < 3; k++) u[k] = t[3 + k] - t[k], v[k] = t[6 + k] - t[k];
  kn_vec3_cross(u, v, n);
  double l = kn_vec3_norm(n);
  if (!(l > 0)) return 0; /* a degenerate triangle: its neighbours' pairs see it */
  for (int k = 0; k < 3; k++) n[k] /= l, sp += n[k] * (p[k] - t[k]), sq += n[k] * (q[k] - t[k]);
  if (!((sp > tol && sq < -tol) || (sp < -tol && sq > tol))) return 0;
  double x[3], a = sp / (sp - sq);
  for (int k = 0; k < 3; k++) x[k] = p[k] + a * (q[k] - p[k]);
  for (int e = 0; e < 3; e++) { /* x inside each edge's line, in the triangle's plane */
    const double *t0 = t + 3 * e, *t1 = t + 3 * ((e + 1) % 3);
    double d[3], r[3], c[3];
    for (int k = 0; k < 3; k++) d[k] = t1[k] - t0[k], r[k] = x[k] - t0[k];
    kn_vec3_cross(d, r, c);
    if (!(kn_vec3_dot(c, n) > tol * kn_vec3_norm(d))) return 0;
  }
  return 1;
}

// edges of surface A (vertices xa) crossing triangles of B (xb): 1 when one does
static int crossing_one_way(const kn_ipc_surface* A, const double* xa, const kn_ipc_surface* B, const double* xb,
                            double tol) {
  for (int t = 0; t < B->ntri; t++) {
    const int* T = B->tri + 3 * t;
    double y[9], lo[3], hi[3];
    for (int k = 0; k < 3; k++) memcpy(y + 3 * k, xb + 3 * T[k], 3 * sizeof(double));
    box_of(y, 3, lo, hi);
    for (int e = 0; e < A->nedge; e++) {
      const double *p = xa + 3 * A->edge[2 * e], *q = xa + 3 * A->edge[2 * e + 1];
      double x[6], elo[3], ehi[3];
      memcpy(x, p, 3 * sizeof(double)), memcpy(x + 3, q, 3 * sizeof(double));
      box_of(x, 2, elo, ehi);
      if (!boxes_apart(elo, ehi, lo, hi) && crosses(p, q, y, tol)) return 1;
    }
  }
  return 0;
}

int kn_ipc_surfaces_crossing(const kn_ipc_surfaces* s, const kn_world* w, kn_mb_data* const* data, double tol, int* a,
                             int* b) {
  size_t n = 0;
  for (int i = 0; i < s->nsurf; i++) n += 3 * (size_t)s->mesh.surf[i].nvert;
  double* x = malloc((n + 1) * sizeof *x);
  size_t* off = malloc(((size_t)s->nsurf + 1) * sizeof *off);
  if (!x || !off) return free(x), free(off), -1;
  for (int i = 0, o = 0; i < s->nsurf; o += 3 * s->mesh.surf[i].nvert, i++) {
    const kn_ipc_surface* S = &s->mesh.surf[i];
    off[i] = (size_t)o;
    if (s->source[i] >= 0) {
      memcpy(x + o, w->fems[s->source[i]].body->x, 3 * (size_t)S->nvert * sizeof *x);
      continue;
    }
    kn_pose X = collider_pose(w, -s->source[i] - 1, data);
    for (int k = 0; k < S->nvert; k++) kn_pose_apply(&X, S->rest + 3 * k, x + o + 3 * k);
  }
  int found = 0;
  for (int q = 0; q < s->mesh.npair && !found; q++) {
    int i = s->pairs[2 * q], j = s->pairs[2 * q + 1];
    if (i == j) continue; /* a body's own surface: its mesh is valid at rest */
    const kn_ipc_surface *A = &s->mesh.surf[i], *B = &s->mesh.surf[j];
    double lo1[3], hi1[3], lo2[3], hi2[3];
    box_of(x + off[i], A->nvert, lo1, hi1), box_of(x + off[j], B->nvert, lo2, hi2);
    if (boxes_apart(lo1, hi1, lo2, hi2)) continue;
    found = crossing_one_way(A, x + off[i], B, x + off[j], tol) || crossing_one_way(B, x + off[j], A, x + off[i], tol);
    if (found) *a = i, *b = j;
  }
  free(x), free(off);
  return found;
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
