/* The penalty backend's continuous mode (continuous-penalty-forces.md §5.1-5.5): the triangle
 * surfaces of the world's FEM bodies and rigid colliders (sim/mesh_surfaces.c), their vertices as
 * the step's material points, the vertex-face and edge-edge pairs whose CCD on the predictor path x0 -> x0 + dt J v*
 * finds a first contact (weights, side and start frozen; the candidates from the shared swept broad
 * phase, contact/swept_pairs.c), and the pairs carried while they still penetrate at a step's end.
 * Pairs between surfaces of the same clique (self-contact of an FEM body, links of one tree) are not
 * formed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/mesh_surfaces.h"
#include "sim/penalty_cpf.h"

typedef struct {          /* per surface of kn_mesh_surfaces */
  int ne, *edge;         /* its edges but the flat ones (2 each) */
  kn_penalty_mesh_topology top; /* its triangles' neighbours: a carried pair's walk (§8 item 14) */
  kn_contact_material material; /* its friction mu, combined per pair (kn_contact_material_combine) */
  double k;              /* its side's spring stiffness (penalty_stiffness.h), in series per pair */
  double band;           /* the proximity pass's depth (kn_penalty_cpf_band, seed_inside) */
} cpf_surface;

#define LAG_RTOL 1e-3 /* the friction's lambda re-lagged while a pair's moves more than this, relative */

typedef kn_cpf_key cpf_key;

typedef struct {
  cpf_key key;
  kn_cpf_pair pair;
  double anchor[4];      /* the anchored friction's anchor (kn_cpf_term_pair.anchor) */
} cpf_carried;

struct kn_penalty_cpf {
  kn_world* w;
  kn_mesh_surfaces ms;   /* the surfaces (colliders without one: the discrete springs), their points */
  cpf_surface* s;
  double *x0, *x1;       /* per global vertex: the predictor path */
  kn_mesh_arcs* arcs;    /* the vertices' paths' curvature (mesh_arcs.c) */
  double* off;           /* per global vertex: its x1's offset from the straight line (kn_mesh_arcs_offsets) */
  double* ptoff;         /* the same per material point of the step (kn_cpf_term.x1_off) */
  int capptoff;
  double* vstart;
  int vcap;
  cpf_carried *carried, *next;
  int ncarried, capcarried, capnext;
  kn_cpf_term_pair* pairs;
  cpf_key* pkeys;        /* per step pair */
  int npairs, capp, cappk;
  cpf_key* sorted;       /* the step's pairs' keys, sorted */
  int capsorted;
  cpf_key* keys;         /* the broad phase's features */
  kn_swept_scratch* swept;
  int nkeys, capk;
  kn_cpf_term term;
};

void kn_penalty_cpf_free(kn_penalty_cpf* c) {
  if (!c) return;
  for (int i = 0; c->s && i < c->ms.n; i++) free(c->s[i].edge), kn_penalty_mesh_topology_free(&c->s[i].top);
  kn_mesh_surfaces_free(&c->ms);
  free(c->s), free(c->x0), free(c->x1), free(c->vstart), free(c->carried), free(c->next);
  kn_mesh_arcs_free(c->arcs), free(c->off), free(c->ptoff);
  free(c->pairs), free(c->pkeys), free(c->keys), free(c->sorted);
  kn_swept_scratch_free(c->swept);
  free(c);
}

static int flat_edges(cpf_surface* s, const kn_mesh_surface* m);

/* two surfaces that can meet (different cliques) both rigid (stiffness inf): no spring => KN_ERR_INVALID */
static kn_status check_rigid_pairs(const kn_penalty_cpf* c, kn_error* err) {
  for (int i = 0; i < c->ms.n; i++)
    for (int j = i + 1; isinf(c->s[i].k) && j < c->ms.n; j++)
      if (isinf(c->s[j].k) && c->ms.s[i].clique != c->ms.s[j].clique) {
        char a[160], b[160];
        kn_mesh_surfaces_name(&c->ms, c->w, i, a, sizeof a);
        kn_mesh_surfaces_name(&c->ms, c->w, j, b, sizeof b);
        return kn_fail(err, KN_ERR_INVALID,
                       "penalty: %s and %s both set stiffness inf (rigid), and a penalty spring between them "
                       "needs a finite stiffness; set one side's stiffness (N/m)", a, b);
      }
  return KN_OK;
}

kn_status kn_penalty_cpf_create(kn_world* w, const kn_penalty_stiffness* ps, double eps_v, kn_cpf_mode mode,
                                int lag_lambda, int anchored, kn_penalty_cpf** out, kn_error* err) {
  kn_penalty_cpf* c = kn_calloc(1, sizeof *c);
  if (!c) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", w->scene->path);
  kn_status st = kn_mesh_surfaces_create(w, KN_MESH_SURFACES_BOXES_MESHES, &c->ms, err);
  if (st) {
    kn_penalty_cpf_free(c);
    return st;
  }
  c->w = w, c->term.k = ps->k, c->term.eps_v = eps_v, c->term.mode = mode, c->term.lag_lambda = lag_lambda;
  c->term.anchored = anchored;
  int ok = (c->s = kn_calloc((size_t)c->ms.n + 1, sizeof *c->s)) != NULL;
  for (int i = 0; ok && i < c->ms.n; i++) {
    const kn_mesh_surface* m = &c->ms.s[i];
    c->s[i].material = m->fem >= 0 ? w->fems[m->fem].material : w->colliders[m->collider].c.material;
    c->s[i].k = m->fem >= 0 ? ps->fem[m->fem] : ps->collider[m->collider];
    ok = flat_edges(&c->s[i], m);
    c->s[i].band = kn_penalty_cpf_band(m->rest, m->used ? m->nused : m->nv, m->used);
    if (ok && (st = kn_penalty_mesh_topology_build(m->nv, m->nt, m->tri, &c->s[i].top, err))) {
      kn_penalty_cpf_free(c);
      return st;
    }
  }
  if (!ok) {
    kn_penalty_cpf_free(c);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", w->scene->path);
  }
  if ((st = check_rigid_pairs(c, err))) {
    kn_penalty_cpf_free(c);
    return st;
  }
  c->swept = kn_swept_scratch_create();
  c->x0 = malloc((3 * (size_t)c->ms.nvert + 1) * sizeof *c->x0);
  c->x1 = malloc((3 * (size_t)c->ms.nvert + 1) * sizeof *c->x1);
  c->off = malloc((3 * (size_t)c->ms.nvert + 1) * sizeof *c->off);
  c->arcs = kn_mesh_arcs_create(w);
  if (!c->swept || !c->x0 || !c->x1 || !c->off || !c->arcs) {
    kn_penalty_cpf_free(c);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", w->scene->path);
  }
  *out = c;
  return KN_OK;
}

static int side_covered(const kn_penalty_cpf* c, const kn_contact_side* s) {
  return s->kind == KN_SIDE_SURFACE || (s->kind == KN_SIDE_COLLIDER && c->ms.of_collider[s->body] >= 0);
}

int kn_penalty_cpf_covers(const kn_penalty_cpf* c, const kn_contact_candidate* cc) {
  return side_covered(c, &cc->a) && side_covered(c, &cc->b);
}

// the surface that global vertex g belongs to
static const cpf_surface* surface_of(const kn_penalty_cpf* c, int g) {
  return &c->s[kn_mesh_surfaces_of_vertex(&c->ms, g)];
}

void kn_penalty_cpf_side_force(const kn_penalty_cpf* c, const kn_contact_side* a, const kn_contact_side* b,
                               const double* v, double f[3]) {
  static const double sgn_vf[4] = {1, -1, -1, -1}, sgn_ee[4] = {1, 1, -1, -1};
  int ia = kn_mesh_surfaces_of_side(&c->ms, a), ib = kn_mesh_surfaces_of_side(&c->ms, b);
  f[0] = f[1] = f[2] = 0;
  if (ia < 0 || ib < 0) return;
  for (int i = 0; i < c->npairs; i++) {
    const cpf_key* k = &c->pkeys[i];
    int s0 = (int)(surface_of(c, k->v[0]) - c->s), s3 = (int)(surface_of(c, k->v[3]) - c->s);
    double sign = s0 == ib && s3 == ia ? 1 : s0 == ia && s3 == ib ? -1 : 0, F[12];
    if (sign == 0) continue;
    kn_cpf_term_pair_force(&c->term, i, v, F, NULL, NULL);
    const double* sg = k->edge_edge ? sgn_ee : sgn_vf;
    for (int j = 0; j < 4; j++)
      if (sg[j] > 0)
        for (int d = 0; d < 3; d++) f[d] += sign * F[3 * j + d]; /* the + side (v[0]'s surface) */
  }
}

typedef struct {
  int a, b, t, k;
} edge_rec;
static int edge_cmp(const void* pa, const void* pb) {
  const edge_rec *x = pa, *y = pb;
  return x->a != y->a ? (x->a < y->a ? -1 : 1) : x->b != y->b ? (x->b < y->b ? -1 : 1) : 0;
}

static void unit_normal(const double* X, const int* t, double n[3]) {
  double e1[3], e2[3];
  for (int k = 0; k < 3; k++) e1[k] = X[3 * t[1] + k] - X[3 * t[0] + k], e2[k] = X[3 * t[2] + k] - X[3 * t[0] + k];
  kn_vec3_cross(e1, e2, n);
  double l = kn_vec3_norm(n);
  for (int k = 0; k < 3; k++) n[k] = l > 0 ? n[k] / l : 0;
}

/* surface s's edges but the flat ones at rest positions X: two triangles within 1e-3 rad of
 * coplanar (a box face's diagonal). Such an edge is no crease: its edge-edge pairs would push
 * sideways where the faces' vertex-face pairs already act (a box corner next to a plate's diagonal,
 * measured: Newton then stalls on the cube of S-Fast) */
static int flat_edges(cpf_surface* s, const kn_mesh_surface* m) {
  const double* X = m->rest;
  edge_rec* e = malloc((3 * (size_t)m->nt + 1) * sizeof *e);
  s->edge = malloc((6 * (size_t)m->nt + 1) * sizeof *s->edge);
  if (!e || !s->edge) {
    free(e);
    return 0;
  }
  for (int t = 0; t < m->nt; t++)
    for (int k = 0; k < 3; k++) {
      int a = m->tri[3 * t + k], b = m->tri[3 * t + (k + 1) % 3];
      e[3 * t + k] = (edge_rec){a < b ? a : b, a < b ? b : a, t, k};
    }
  qsort(e, 3 * (size_t)m->nt, sizeof *e, edge_cmp);
  s->ne = 0;
  for (int i = 0; i < 3 * m->nt; i++) {
    if (i > 0 && !edge_cmp(&e[i - 1], &e[i])) continue;
    if (i + 1 < 3 * m->nt && !edge_cmp(&e[i], &e[i + 1])) {
      double n1[3], n2[3];
      unit_normal(X, m->tri + 3 * e[i].t, n1), unit_normal(X, m->tri + 3 * e[i + 1].t, n2);
      if (kn_vec3_dot(n1, n2) > 1 - 5e-7) continue;
    }
    s->edge[2 * s->ne] = e[i].a, s->edge[2 * s->ne + 1] = e[i].b, s->ne++;
  }
  free(e);
  return 1;
}

static int key_cmp(const void* pa, const void* pb) {
  const cpf_key *a = pa, *b = pb;
  if (a->edge_edge != b->edge_edge) return a->edge_edge - b->edge_edge;
  for (int k = 0; k < 4; k++)
    if (a->v[k] != b->v[k]) return a->v[k] < b->v[k] ? -1 : 1;
  return 0;
}

static int grow(void** p, int* cap, int need, size_t size) {
  if (need <= *cap) return 1;
  int n = need > 2 * *cap ? need : 2 * *cap;
  void* q = realloc(*p, (size_t)n * size);
  if (!q) return 0;
  *p = q, *cap = n;
  return 1;
}

static int push_key(kn_penalty_cpf* c, int ee, int v0, int v1, int v2, int v3) {
  if (!grow((void**)&c->keys, &c->capk, c->nkeys + 1, sizeof *c->keys)) return 0;
  if (ee) { /* each edge from its lower id, the edge with the lower first id first */
    int a = v0 < v1 ? v0 : v1, b = v0 < v1 ? v1 : v0, d = v2 < v3 ? v2 : v3, e = v2 < v3 ? v3 : v2;
    if (d < a) v0 = d, v1 = e, v2 = a, v3 = b;
    else v0 = a, v1 = b, v2 = d, v3 = e;
  }
  c->keys[c->nkeys++] = (cpf_key){ee, {v0, v1, v2, v3}};
  return 1;
}

// surface s as the shared broad phase sees it, on the paths x0 -> x1 (x1: per global vertex)
static kn_swept_surface swept(const kn_penalty_cpf* c, int i, const double* x1) {
  const kn_mesh_surface* m = &c->ms.s[i];
  const cpf_surface* s = &c->s[i];
  return (kn_swept_surface){.nvert = m->nv, .x0 = c->x0 + 3 * (size_t)m->first, .x1 = x1 + 3 * (size_t)m->first,
                            .ntri = m->nt, .tri = m->tri, .nedge = s->ne, .edge = s->edge, .nvert_used = m->nused,
                            .vert = m->used};
}

/* the broad phase (contact/swept_pairs.c): every vertex-face and edge-edge pair of two surfaces of
 * different cliques whose boxes swept x0 -> x1 overlap, as global keys, sorted; near: at x0 alone,
 * within the larger of the two surfaces' bands (seed_inside) */
static kn_status broad_phase(kn_penalty_cpf* c, int near, kn_error* err) {
  c->nkeys = 0;
  for (int i = 0; i < c->ms.n; i++)
    for (int j = i + 1; j < c->ms.n; j++) {
      const kn_mesh_surface *A = &c->ms.s[i], *B = &c->ms.s[j];
      const int *edge_a = c->s[i].edge, *edge_b = c->s[j].edge;
      if (A->clique == B->clique) continue; /* same body (or both fixed) */
      const double* x1 = near ? c->x0 : c->x1;
      kn_swept_surface sa = swept(c, i, x1), sb = swept(c, j, x1);
      kn_swept_pairs out;
      double margin = near ? fmax(c->s[i].band, c->s[j].band) : 0;
      if (near && !(margin > 0)) continue;
      kn_status e = kn_swept_pairs_find(c->swept, &sa, &sb, margin, &out, err);
      if (e) return e;
      int ok = 1;
      for (int k = 0; k < out.nvt_ab; k++) {
        const int *t = B->tri + 3 * out.vt_ab[2 * k + 1], fb = B->first;
        ok &= push_key(c, 0, A->first + out.vt_ab[2 * k], fb + t[0], fb + t[1], fb + t[2]);
      }
      for (int k = 0; k < out.nvt_ba; k++) {
        const int *t = A->tri + 3 * out.vt_ba[2 * k + 1], fa = A->first;
        ok &= push_key(c, 0, B->first + out.vt_ba[2 * k], fa + t[0], fa + t[1], fa + t[2]);
      }
      for (int k = 0; k < out.nee; k++) {
        const int *ea = edge_a + 2 * out.ee[2 * k], *eb = edge_b + 2 * out.ee[2 * k + 1];
        ok &= push_key(c, 1, A->first + ea[0], A->first + ea[1], B->first + eb[0], B->first + eb[1]);
      }
      if (!ok) return kn_fail(err, KN_ERR_NOMEM, "out of memory for the continuous penalty's pairs");
    }
  if (c->nkeys) qsort(c->keys, (size_t)c->nkeys, sizeof *c->keys, key_cmp);
  return KN_OK;
}

static void gather(const kn_penalty_cpf* c, const cpf_key* k, double x0[12], double x1[12]) {
  for (int j = 0; j < 4; j++) memcpy(x0 + 3 * j, c->x0 + 3 * k->v[j], 24), memcpy(x1 + 3 * j, c->x1 + 3 * k->v[j], 24);
}

/* (anchor: the carried pair's, NULL for a new pair: its first contact's point, w) */
static int add_pair(kn_penalty_cpf* c, const cpf_key* k, const kn_cpf_pair* p, const double* anchor, double s_start) {
  if (!grow((void**)&c->pairs, &c->capp, c->npairs + 1, sizeof *c->pairs)) return 0;
  if (!grow((void**)&c->pkeys, &c->cappk, c->npairs + 1, sizeof *c->pkeys)) return 0;
  kn_cpf_term_pair* t = &c->pairs[c->npairs];
  t->edge_edge = k->edge_edge, t->pair = *p, t->s_start = s_start;
  memcpy(t->anchor, anchor ? anchor : p->w, sizeof t->anchor);
  /* the pair's two surfaces: the vertex's (or the first edge's) and the face's (the second edge's) */
  const cpf_surface *sa = surface_of(c, k->v[0]), *sb = surface_of(c, k->v[3]);
  t->mu = kn_contact_material_combine(&sa->material, &sb->material).mu;
  t->k = kn_penalty_stiffness_series(sa->k, sb->k);
  for (int j = 0; j < 4; j++) t->pt[j] = c->ms.pt[k->v[j]];
  c->pkeys[c->npairs++] = *k;
  return 1;
}

/* the edge (g0, g1) of its surface at positions x1 => o its outward direction (its triangles' normals
 * summed), n its first two triangles' normals; 1 when it is concave (the second triangle's far
 * vertex in front of the first one's plane) */
static int edge_outward(const kn_penalty_cpf* c, int g0, int g1, double o[3], double n[2][3]) {
  int si = kn_mesh_surfaces_of_vertex(&c->ms, g0);
  const kn_mesh_surface* m = &c->ms.s[si];
  const kn_penalty_mesh_topology* top = &c->s[si].top;
  const double* X = c->x1 + 3 * (size_t)m->first;
  int a = g0 - m->first, b = g1 - m->first, nt = 0, far = -1;
  o[0] = o[1] = o[2] = 0;
  for (int k = top->vt_start[a]; k < top->vt_start[a + 1]; k++) {
    const int* t = m->tri + 3 * top->vt[k];
    if (t[0] != b && t[1] != b && t[2] != b) continue;
    double nk[3];
    unit_normal(X, t, nk);
    for (int d = 0; d < 3; d++) o[d] += nk[d];
    if (nt < 2) memcpy(n[nt], nk, sizeof nk);
    if (nt++ == 1) far = t[0] != a && t[0] != b ? t[0] : t[1] != a && t[1] != b ? t[1] : t[2];
  }
  if (nt < 2) return 0;
  double d[3];
  for (int k = 0; k < 3; k++) d[k] = X[3 * far + k] - X[3 * a + k];
  return kn_vec3_dot(d, n[0]) > 0;
}

// v within the wedge of the normals n[0], n[1] (their positive combinations; the angle between them < pi)
static int in_normal_cone(const double v[3], const double n[2][3]) {
  double cn[3], a[3], b[3];
  kn_vec3_cross(n[0], n[1], cn), kn_vec3_cross(n[0], v, a), kn_vec3_cross(v, n[1], b);
  double tol = -1e-9 * kn_vec3_norm(cn) * kn_vec3_norm(v);
  return kn_vec3_dot(a, cn) >= tol && kn_vec3_dot(b, cn) >= tol;
}

/* a new edge-edge pair (its cubic's m, first contact s*) => 1 when its edges enter each other's
 * bodies: f = m . (a - c) has the sign sigma after the crossing, so edge (a, b) lies along sigma m
 * from edge (c, d): inside (c, d)'s body when sigma m . o_cd < 0 and, likewise, (c, d) inside
 * (a, b)'s when sigma m . o_ab > 0 (o an edge's outward direction). Else the edges are leaving
 * each other (a pad's bottom edge sliding out past a box's top edge: as a pair it would hook them).
 * And a concave edge (a valley) takes a contact only along a positive combination of its two faces'
 * normals (-sigma m for (c, d), sigma m for (a, b): the other edge's side before the crossing): the
 * faces' pairs hold everything else there. Measured: a cube sliding into a 20 degree ramp's valley
 * got a pair of its vertical front edge with the valley's edge, normal along the slide (outside
 * the valley's normals), pushing its bottom back by 10 N: the cube tipped forward, lost its pairs
 * and fell through the ground (tests/scenes/test_penalty_cpf_crease.c) */
static int entering_edges(const kn_penalty_cpf* c, const cpf_key* k, const kn_cpf_pair* p, double s, const double* m) {
  double ms[3], oab[3], ocd[3], nab[2][3], ncd[2][3], out_ab[3], out_cd[3];
  for (int d = 0; d < 3; d++) ms[d] = m[d] + s * m[3 + d] + s * s * m[6 + d];
  int cab = edge_outward(c, k->v[0], k->v[1], oab, nab), ccd = edge_outward(c, k->v[2], k->v[3], ocd, ncd);
  if (!(p->sigma * kn_vec3_dot(ms, ocd) < 0 && p->sigma * kn_vec3_dot(ms, oab) > 0)) return 0;
  for (int d = 0; d < 3; d++) out_ab[d] = p->sigma * ms[d], out_cd[d] = -p->sigma * ms[d];
  return (!cab || in_normal_cone(out_ab, nab)) && (!ccd || in_normal_cone(out_cd, ncd));
}

/* (a new vertex-face pair) => 1 when the step already has a pair of its vertex with a face of the same
 * surface: the vertex is inside that body already, and one pair per vertex and body is its contact.
 * This deduplicates a vertex landing on a shared edge or vertex, found against two or more
 * triangles at once (§8 item 15: twice the stiffness there; §5.4's deduplication by feature ids),
 * and keeps a vertex that passed through a thin plate and comes back up through its bottom face from
 * taking a pair there that would push it down against its top face's (measured: S-Fast's cube then
 * rests inside the plate); a carried pair follows its vertex across the surface (follow) */
static int duplicate(const kn_penalty_cpf* c, const cpf_key* k) {
  int s = kn_mesh_surfaces_of_vertex(&c->ms, k->v[1]);
  for (int i = 0; i < c->npairs; i++) {
    const cpf_key* o = &c->pkeys[i];
    if (!o->edge_edge && o->v[0] == k->v[0] && kn_mesh_surfaces_of_vertex(&c->ms, o->v[1]) == s) return 1;
  }
  return 0;
}

/* the pairs CCD finds on the paths x0 -> x1 that the step does not hold yet => appended (start s*) */
static kn_status find_new(kn_penalty_cpf* c, kn_error* err) {
  kn_status e = broad_phase(c, 0, err);
  if (e) return e;
  if (!grow((void**)&c->sorted, &c->capsorted, c->npairs + 1, sizeof *c->sorted))
    return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  int nheld = c->npairs;
  if (nheld) {
    memcpy(c->sorted, c->pkeys, (size_t)nheld * sizeof *c->sorted);
    qsort(c->sorted, (size_t)nheld, sizeof *c->sorted, key_cmp);
  }
  for (int i = 0; i < c->nkeys; i++) {
    const cpf_key* k = &c->keys[i];
    if (nheld && bsearch(k, c->sorted, (size_t)nheld, sizeof *k, key_cmp)) continue;
    double x0[12], x1[12], s_star, f[4], m[9];
    gather(c, k, x0, x1);
    kn_cpf_stencil sten = {x0, x1, k->edge_edge};
    kn_cpf_pair p;
    if (!kn_cpf_first_contact(&sten, 1e-6, &p, &s_star)) continue;
    /* a vertex entering a surface crosses a face from its front (the surfaces are closed and wound
     * outward: f = (p - a) . (b - a) x (c - a) turns negative). One leaving it through a face (a pad's
     * corner sliding out past a box's top face) is no contact: as a pair it would pull the vertex
     * back in (measured: the weak grip of examples/regression/box_weak_grip_fails then lifts its box) */
    if (!k->edge_edge && p.sigma > 0) continue;
    /* the cubic's m before the edges' test reads it (it read the last candidate's, or nothing: an
     * edge of a cube sliding into a concave crease then made a pair along the crease's edge) */
    kn_cpf_cubic(&sten, f, m);
    if (k->edge_edge && !entering_edges(c, k, &p, s_star, m)) continue;
    /* nearly parallel edges (or a collapsing triangle): no normal; the vertex-face pairs at their
     * ends take the contact (§8 items 9, 10) */
    const double *m0 = m, *m1 = m + 3, *m2 = m + 6;
    double L2 = kn_vec3_dot(m0, m0) + kn_vec3_dot(m0, m1) + (kn_vec3_dot(m1, m1) + 2 * kn_vec3_dot(m0, m2)) / 3 +
                kn_vec3_dot(m1, m2) / 2 + kn_vec3_dot(m2, m2) / 5;
    double e1 = 0, e2 = 0;
    for (int a = 0; a < 3; a++) {
      double d1 = k->edge_edge ? x0[3 + a] - x0[a] : x0[6 + a] - x0[3 + a];
      double d2 = k->edge_edge ? x0[9 + a] - x0[6 + a] : x0[9 + a] - x0[3 + a];
      e1 += d1 * d1, e2 += d2 * d2;
    }
    if (!(L2 > 1e-6 * e1 * e2)) continue;
    if (!k->edge_edge && duplicate(c, k)) continue;
    if (!add_pair(c, k, &p, NULL, s_star)) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  c->term.pairs = c->pairs, c->term.n = c->npairs;
  return KN_OK;
}

/* the proximity pass (§8 item 12; kn_penalty_cpf_inside_face): a vertex that starts the step behind a
 * face of another body's surface with no pair on that surface (CCD missed its crossing, or it was
 * placed there) gets a pair with the face it is nearest, inside and at most the face surface's band
 * deep: penetrated side behind the face (sigma -1), weights its projection's, start 0. Without it
 * such a vertex is never paired: CCD starts pairs only at crossings (measured: a 0.1 m cube placed
 * 1 mm into a 0.1 m plate fell 0.1 m through it). Runs at the step's start only; CCD's pairs and
 * the carried ones come first (one pair per vertex and body, duplicate). */
static kn_status seed_inside(kn_penalty_cpf* c, kn_error* err) {
  kn_status e = broad_phase(c, 1, err);
  if (e) return e;
  for (int i = 0, j; i < c->nkeys && !c->keys[i].edge_edge; i = j) { /* vertex-face keys lead */
    const cpf_key* k = &c->keys[i];
    int s = kn_mesh_surfaces_of_vertex(&c->ms, k->v[1]);
    j = i + 1; /* keys i..j-1: this vertex against faces of surface s (sorted by vertex, then face) */
    while (j < c->nkeys && !c->keys[j].edge_edge && c->keys[j].v[0] == k->v[0] &&
           kn_mesh_surfaces_of_vertex(&c->ms, c->keys[j].v[1]) == s)
      j++;
    if (duplicate(c, k)) continue;
    kn_cpf_pair p = {.sigma = -1};
    double depth;
    int f = kn_penalty_cpf_inside_face(c->x0, j - i, k, c->s[s].band, p.w, &depth);
    if (f >= 0 && !add_pair(c, &c->keys[i + f], &p, NULL, 0)) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  c->term.pairs = c->pairs, c->term.n = c->npairs;
  return KN_OK;
}

/* the friction's lagged lambda of pairs from.. : their normal force at v */
static void lambda_init(kn_penalty_cpf* c, int from, const double* v) {
  for (int i = from; i < c->npairs; i++) c->pairs[i].lam = kn_cpf_term_pair_lambda(&c->term, i, v);
}

int kn_penalty_cpf_relag(kn_penalty_cpf* c, const double* v) {
  int moved = 0;
  for (int i = 0; i < c->npairs; i++) {
    double lam = kn_cpf_term_pair_lambda(&c->term, i, v), old = c->pairs[i].lam;
    if (c->pairs[i].mu > 0 && fabs(lam - old) > LAG_RTOL * fmax(lam, old)) moved = 1;
    c->pairs[i].lam = lam;
  }
  return moved;
}

kn_status kn_penalty_cpf_begin(kn_penalty_cpf* c, const kn_nl_step* st, kn_nl_term* term, kn_error* err) {
  kn_world* w = st->w;
  if (!grow((void**)&c->vstart, &c->vcap, st->nv + 1, sizeof *c->vstart))
    return kn_fail(err, KN_ERR_NOMEM, "out of memory for %d DoFs", st->nv);
  for (int q = 0; q < w->nclique; q++) w->cliques[q].ops->v_start(w->cliques[q].self, c->vstart + st->offset[q]);
  /* every surface vertex a material point (-1: an FEM body's interior vertex); its predictor path
   * x0 -> x0 + dt J v_start */
  kn_status e = kn_mesh_surfaces_points(&c->ms, st, 0, err);
  if (e) return e;
  for (int g = 0; g < c->ms.nvert; g++) {
    if (c->ms.pt[g] < 0) continue;
    double u[3];
    kn_nl_point_velocity(st->points, c->ms.pt[g], c->vstart, u);
    const double* x0 = st->points->p[c->ms.pt[g]].x0;
    for (int k = 0; k < 3; k++) c->x0[3 * g + k] = x0[k], c->x1[3 * g + k] = x0[k] + st->dt * u[k];
  }
  /* the rigid vertices' paths bent as their bodies move (mesh_arcs.c): x1 where the integrator puts
   * them at v_n, and the same offset on every iterate's x1 (the pairs' forces and anchors) */
  if ((e = kn_mesh_arcs_offsets(c->arcs, &c->ms, w, st->dt, c->x1, c->off, err))) return e;
  if (!grow((void**)&c->ptoff, &c->capptoff, 3 * st->points->n + 1, sizeof *c->ptoff))
    return kn_fail(err, KN_ERR_NOMEM, "out of memory for %d points", st->points->n);
  memset(c->ptoff, 0, 3 * (size_t)st->points->n * sizeof *c->ptoff);
  for (int g = 0; g < c->ms.nvert; g++)
    for (int k = 0; k < 3 && c->ms.pt[g] >= 0; k++)
      c->x1[3 * g + k] += c->off[3 * g + k], c->ptoff[3 * c->ms.pt[g] + k] = c->off[3 * g + k];
  c->term.x1_off = c->ptoff;
  c->npairs = 0;
  for (int i = 0; i < c->ncarried; i++)
    if (!add_pair(c, &c->carried[i].key, &c->carried[i].pair, c->carried[i].anchor, 0)) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  c->term.dt = st->dt, c->term.points = st->points, c->term.n = 0;
  e = find_new(c, err);
  if (!e) e = seed_inside(c, err);
  if (e) return e;
  lambda_init(c, 0, c->vstart);
  *term = (kn_nl_term){.eval = kn_cpf_term_eval, .self = &c->term};
  return KN_OK;
}

static void positions_at(kn_penalty_cpf* c, const double* v);

int kn_penalty_cpf_recheck(kn_penalty_cpf* c, const double* v, kn_error* err) {
  positions_at(c, v);
  int before = c->npairs;
  if (find_new(c, err)) return -1;
  lambda_init(c, before, v);
  return c->npairs - before;
}

/* pair i's anchor after the step at v: slid onto the cone of its normal force there (the lagged one
 * with lag_lambda), as the discrete springs' relax */
static void anchor_relax(const kn_penalty_cpf* c, int i, const double* v, double anchor[4]) {
  const kn_cpf_term_pair* p = &c->pairs[i];
  double x0[12], x1[12];
  for (int j = 0; j < 4; j++) {
    double u[3];
    const kn_nl_point* P = &c->term.points->p[p->pt[j]];
    kn_nl_point_velocity(c->term.points, p->pt[j], v, u);
    for (int a = 0; a < 3; a++)
      x0[3 * j + a] = P->x0[a], x1[3 * j + a] = P->x0[a] + c->term.dt * u[a] + c->ptoff[3 * p->pt[j] + a];
  }
  kn_cpf_stencil st = {x0, x1, p->edge_edge};
  double lam = c->term.lag_lambda ? p->lam : kn_cpf_term_pair_lambda(&c->term, i, v);
  kn_cpf_anchor_relax(&st, anchor, p->mu, p->k > 0 ? p->k : c->term.k, lam);
}

/* every surface vertex's position x1 at the end of the step at v */
static void positions_at(kn_penalty_cpf* c, const double* v) {
  const kn_nl_points* P = c->term.points;
  for (int g = 0; g < c->ms.nvert; g++) {
    double u[3];
    if (c->ms.pt[g] < 0) continue;
    kn_nl_point_velocity(P, c->ms.pt[g], v, u);
    for (int k = 0; k < 3; k++) c->x1[3 * g + k] = c->x0[3 * g + k] + c->term.dt * u[k] + c->off[3 * g + k];
  }
}

// surface si's local triangle with the global vertices f[0..2] in its order, -1 none
static int triangle_of(const kn_penalty_cpf* c, int si, const int f[3]) {
  const kn_mesh_surface* m = &c->ms.s[si];
  const kn_penalty_mesh_topology* top = &c->s[si].top;
  int a = f[0] - m->first;
  for (int k = top->vt_start[a]; k < top->vt_start[a + 1]; k++) {
    const int* t = m->tri + 3 * top->vt[k];
    if (t[0] + m->first == f[0] && t[1] + m->first == f[1] && t[2] + m->first == f[2]) return top->vt[k];
    if (t[1] + m->first == f[0] && t[2] + m->first == f[1] && t[0] + m->first == f[2]) return top->vt[k];
    if (t[2] + m->first == f[0] && t[0] + m->first == f[1] && t[1] + m->first == f[2]) return top->vt[k];
  }
  return -1;
}

#define FOLLOW_TOL 1e-6 /* how far outside its features a carried pair's point may lie (CCD's inside test) */

/* a carried pair at the step's end positions (c->x1), its features outlived (§8 item 14) => 1 to keep
 * it, 0 to drop it. An edge-edge pair whose closest points left either edge is dropped (the
 * vertex-face pairs at the edges' ends take over). A vertex-face pair whose vertex projects outside
 * its triangle walks across the triangles of the face's surface (kn_cpf_walk) to the one it projects
 * into: re-paired there (its weights the projection's, the anchor's point expressed on it, the same
 * side sigma: the surface is wound consistently) when the vertex still penetrates that triangle's
 * plane, dropped when not (around a convex edge it has left the body) or the walk fails. */
static int follow(const kn_penalty_cpf* c, cpf_carried* q) {
  const int* v = q->key.v;
  if (q->key.edge_edge) {
    double x[12], al, be;
    for (int j = 0; j < 4; j++) memcpy(x + 3 * j, c->x1 + 3 * v[j], 24);
    return kn_cpf_edge_params(x, &al, &be) && al >= -FOLLOW_TOL && al <= 1 + FOLLOW_TOL && be >= -FOLLOW_TOL &&
           be <= 1 + FOLLOW_TOL;
  }
  int si = kn_mesh_surfaces_of_vertex(&c->ms, v[1]), t = triangle_of(c, si, v + 1);
  const kn_mesh_surface* m = &c->ms.s[si];
  const double* p = c->x1 + 3 * v[0];
  double w[3];
  if (t < 0 || !kn_cpf_barycentric(c->x1 + 3 * v[1], c->x1 + 3 * v[2], c->x1 + 3 * v[3], p, w)) return 0;
  if (w[0] >= -FOLLOW_TOL && w[1] >= -FOLLOW_TOL && w[2] >= -FOLLOW_TOL) return 1;
  int t2 = kn_cpf_walk(c->x1 + 3 * (size_t)m->first, m->tri, c->s[si].top.adj, t, p, FOLLOW_TOL, w);
  if (t2 < 0) return 0;
  int f[3] = {m->first + m->tri[3 * t2], m->first + m->tri[3 * t2 + 1], m->first + m->tri[3 * t2 + 2]};
  double x[12], fc[4], mc[9], A[3] = {0, 0, 0}, wa[3];
  memcpy(x, p, 24);
  for (int j = 0; j < 3; j++) memcpy(x + 3 + 3 * j, c->x1 + 3 * f[j], 24);
  kn_cpf_stencil st = {x, x, 0};
  kn_cpf_cubic(&st, fc, mc);
  if (!(q->pair.sigma * fc[0] > 0)) return 0;
  for (int j = 1; j < 4; j++)
    for (int k = 0; k < 3; k++) A[k] += q->anchor[j] * c->x1[3 * v[j] + k];
  if (!kn_cpf_barycentric(x + 3, x + 6, x + 9, A, wa)) return 0;
  q->key = (cpf_key){0, {v[0], f[0], f[1], f[2]}};
  q->pair.w[0] = q->anchor[0] = 1;
  for (int j = 0; j < 3; j++) q->pair.w[j + 1] = w[j], q->anchor[j + 1] = c->term.anchored ? wa[j] : w[j];
  return 1;
}

void kn_penalty_cpf_end_step(kn_penalty_cpf* c, const double* v) {
  int n = 0;
  if (!grow((void**)&c->next, &c->capnext, c->npairs + 1, sizeof *c->next)) return; /* the old pairs stay */
  positions_at(c, v);
  for (int i = 0; i < c->npairs; i++) {
    double F[12];
    if (!kn_cpf_term_pair_force(&c->term, i, v, F, NULL, NULL)) continue;
    cpf_carried* q = &c->next[n];
    *q = (cpf_carried){c->pkeys[i], c->pairs[i].pair, {0}};
    memcpy(q->anchor, c->pairs[i].anchor, sizeof q->anchor);
    if (c->term.anchored) anchor_relax(c, i, v, q->anchor);
    n += follow(c, q);
  }
  if (n) qsort(c->next, (size_t)n, sizeof *c->next, key_cmp); /* the key leads the record: sorted by key */
  int m = 0; /* two pairs walked onto one key: the first stays */
  for (int i = 0; i < n; i++)
    if (!m || key_cmp(&c->next[m - 1], &c->next[i])) c->next[m++] = c->next[i];
  n = m;
  cpf_carried* t = c->carried;
  int cap = c->capcarried;
  c->carried = c->next, c->capcarried = c->capnext, c->ncarried = n;
  c->next = t, c->capnext = cap;
}


/*---- saved states: the carried pairs (count, then per pair: edge_edge, 4 global vertex ids, sigma;
 * the 4 weights, the 4 anchor weights) ----*/

void kn_penalty_cpf_save(const kn_penalty_cpf* c, kn_state_out* out) {
  kn_state_put_u64(out, (uint64_t)c->ncarried);
  for (int i = 0; i < c->ncarried; i++) {
    const cpf_carried* p = &c->carried[i];
    int h[6] = {p->key.edge_edge, p->key.v[0], p->key.v[1], p->key.v[2], p->key.v[3], p->pair.sigma};
    kn_state_put_i32(out, h, 6);
    kn_state_put_f64(out, p->pair.w, 4);
    kn_state_put_f64(out, p->anchor, 4);
  }
}

const char* kn_penalty_cpf_read(const kn_penalty_cpf* c, kn_state_in* in, void** pairs, int* n_out) {
  uint64_t n;
  *pairs = NULL, *n_out = 0;
  if (!kn_state_get_u64(in, &n) || n > (uint64_t)INT32_MAX || n * (6 * 4 + 8 * 8) > in->len - in->pos)
    return "truncated continuous penalty pairs";
  cpf_carried* a = kn_calloc((size_t)n + 1, sizeof *a);
  if (!a) return "out of memory";
  for (uint64_t i = 0; i < n; i++) {
    int h[6], ok;
    if (!kn_state_get_i32(in, h, 6) || !kn_state_get_f64(in, a[i].pair.w, 4) || !kn_state_get_f64(in, a[i].anchor, 4)) {
      free(a);
      return "truncated continuous penalty pairs";
    }
    ok = (h[0] == 0 || h[0] == 1) && (h[5] == 1 || h[5] == -1);
    for (int k = 1; ok && k < 5; k++) ok = h[k] >= 0 && h[k] < c->ms.nvert;
    for (int k = 0; ok && k < 4; k++) ok = isfinite(a[i].pair.w[k]) && isfinite(a[i].anchor[k]);
    if (!ok) {
      free(a);
      return "a continuous penalty pair names a vertex this world does not have";
    }
    a[i].key = (cpf_key){h[0], {h[1], h[2], h[3], h[4]}}, a[i].pair.sigma = h[5];
  }
  if (n) qsort(a, (size_t)n, sizeof *a, key_cmp);
  *pairs = a, *n_out = (int)n;
  return NULL;
}

void kn_penalty_cpf_take(kn_penalty_cpf* c, void* pairs, int n) {
  free(c->carried);
  c->carried = pairs, c->ncarried = n, c->capcarried = n + 1;
}

/*---- outputs: each pair with a force as a contact row (kn_mesh_surfaces_record_pair) ----*/

kn_status kn_penalty_cpf_record(const kn_penalty_cpf* c, kn_world* w, const double* v, kn_error* err) {
  static const int side_vf[4] = {1, 0, 0, 0}, side_ee[4] = {1, 1, 0, 0}; /* B: the vertex's or the first edge's */
  const kn_nl_points* P = c->term.points;
  for (int i = 0; i < c->npairs; i++) {
    const kn_cpf_term_pair* p = &c->pairs[i];
    const int* side = p->edge_edge ? side_ee : side_vf;
    double F[12], x[12], fb[3] = {0, 0, 0}, e1[3], e2[3], n[3], d[3] = {0, 0, 0};
    kn_cpf_term_pair_force(&c->term, i, v, F, NULL, NULL);
    for (int j = 0; j < 4; j++) {
      double u[3];
      kn_nl_point_velocity(P, p->pt[j], v, u);
      for (int a = 0; a < 3; a++) {
        x[3 * j + a] = P->p[p->pt[j]].x0[a] + c->term.dt * u[a] + c->ptoff[3 * p->pt[j] + a];
        fb[a] += side[j] ? F[3 * j + a] : 0;
      }
    }
    if (!(kn_vec3_norm(fb) > 0)) continue; /* no force over the step */
    /* the normal at the step's end: the face's (vertex-face) or the edges' cross product, turned
     * along the force on B; the gap: B's traced point minus A's along it */
    for (int a = 0; a < 3; a++) {
      e1[a] = p->edge_edge ? x[3 + a] - x[a] : x[6 + a] - x[3 + a];
      e2[a] = p->edge_edge ? x[9 + a] - x[6 + a] : x[9 + a] - x[3 + a];
    }
    kn_vec3_cross(e1, e2, n);
    double len = kn_vec3_norm(n);
    if (!(len > 0)) memcpy(n, fb, sizeof n), len = kn_vec3_norm(fb);
    if (kn_vec3_dot(n, fb) < 0) len = -len;
    for (int a = 0; a < 3; a++) n[a] /= len;
    for (int j = 0; j < 4; j++)
      for (int a = 0; a < 3; a++) d[a] += (side[j] ? 1 : -1) * p->pair.w[j] * x[3 * j + a];
    int sb = kn_mesh_surfaces_of_vertex(&c->ms, c->pkeys[i].v[0]);
    int sa = kn_mesh_surfaces_of_vertex(&c->ms, c->pkeys[i].v[3]);
    kn_status st = kn_mesh_surfaces_record_pair(&c->ms, w, sa, sb, side, p->edge_edge, x, p->pair.w, F, n,
                                                kn_vec3_dot(d, n), err);
    if (st) return st;
  }
  return KN_OK;
}
