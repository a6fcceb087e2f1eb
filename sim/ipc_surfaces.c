/* The world's triangle surfaces for the ipc backend's mesh-mesh pairs (ipc_surfaces.h). */
#include <math.h>
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

// collider k's pose in the world with its trees' kinematics data (NULL: the world's own, at q_n)
static kn_pose collider_pose(const kn_world* w, int k, kn_mb_data* const* data) {
  const kn_world_collider* col = &w->colliders[k];
  kn_pose X = col->c.X_bg;
  if (col->c.clique >= 0)
    kn_pose_mul(&(data ? data[col->tree] : w->trees[col->tree].data)->X_wb[col->body], &col->c.X_bg, &X);
  return X;
}

kn_status kn_ipc_surfaces_create(kn_world* w, int boxes, kn_ipc_surfaces* s, kn_error* err) {
  memset(s, 0, sizeof *s);
  kn_mesh_surfaces_colliders which = boxes ? KN_MESH_SURFACES_BOXES_MESHES : KN_MESH_SURFACES_MESHES;
  kn_status st = kn_mesh_surfaces_create(w, which, &s->ms, err);
  if (st) return st;
  int nmax = s->ms.n;
  s->mesh.surf = kn_calloc((size_t)nmax + 1, sizeof *s->mesh.surf);
  s->owned = kn_calloc((size_t)nmax + 1, sizeof *s->owned);
  s->source = kn_calloc((size_t)nmax + 1, sizeof *s->source);
  s->pairs = malloc(2 * ((size_t)nmax * (nmax + 1) + 1) * sizeof *s->pairs);
  s->mu = malloc(((size_t)nmax * (nmax + 1) + 1) * sizeof *s->mu);
  int ok = s->mesh.surf && s->owned && s->source && s->pairs && s->mu;
  for (int i = 0; ok && i < nmax; i++) {
    s->nsurf++;
    s->source[i] = s->ms.s[i].fem >= 0 ? s->ms.s[i].fem : -s->ms.s[i].collider - 1;
    ok = surface_init(s, i);
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
  return kn_mesh_surfaces_points(&s->ms, st, 1, err);
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
