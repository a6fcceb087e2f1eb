/* The ipc term's mesh-mesh pairs (ipc.h, kn_ipc_mesh; digest §4.3, §5.5, §6, §7.4): between two
 * triangle surfaces whose vertices are material points (an FEM body's boundary, a rigid
 * triangle-mesh collider), the point-triangle and edge-edge pairs with their true squared
 * distances (every case, contact/pair_distance.c), the edge-edge mollifier, lagged friction with
 * the tangent basis of each pair's case at the lagged state, and additive CCD of the pairs found by
 * the swept broad phase (contact/swept_pairs.c) for the line search.
 *
 * The constraint set is found again at every evaluation (§4.3: "rebuilt for every trial point"):
 * the pairs of each surface pair whose boxes at x(v) are within dhat, of which those with s < dhat^2
 * have a barrier; the boxes' overlaps are taken from the last CCD sweep's kept candidates while
 * they cover x(v) (mesh_cache.c: the same pairs, without the trees). A pair's derivatives over its 12 stencil coordinates are projected to PSD as a
 * whole and mapped to v through the vertices' point maps, x_k(v) = x0_k + dt J_k v. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/contact.h"
#include "deformable/deformable.h"
#include "ipc/ipc.h"
#include "ipc/mesh_cache.h"

//---- positions ----

// (mesh, v or NULL for the step start, p and alpha or p NULL) => every surface vertex at v + alpha p
static void positions(kn_ipc_mesh* m, const kn_ipc_term* t, const double* v, const double* p, double alpha,
                      double* x) {
  const kn_nl_points* P = t->points;
  for (int s = 0, o = 0; s < m->nsurf; o += 3 * m->surf[s].nvert, s++)
    for (int k = 0; k < m->surf[s].nvert; k++) {
      int q = m->surf[s].pt[k];
      double u[3] = {0, 0, 0}, up[3] = {0, 0, 0};
      if (v) kn_nl_point_velocity(P, q, v, u);
      if (p) kn_nl_point_velocity(P, q, p, up);
      for (int a = 0; a < 3; a++) x[o + 3 * k + a] = P->p[q].x0[a] + t->dt * (u[a] + alpha * up[a]);
    }
}

static int grow_x(kn_ipc_mesh* m) {
  size_t n = 0;
  for (int s = 0; s < m->nsurf; s++) n += 3 * (size_t)m->surf[s].nvert;
  if (n + 1 <= m->xcap) return 1;
  double* a = realloc(m->x, 2 * (n + 1) * sizeof *a);
  if (!a) return 0;
  m->x = a, m->x1 = a + n + 1, m->xcap = n + 1;
  return 1;
}
static int* grow_off(kn_ipc_mesh* m) {
  if (m->nsurf + 1 > m->offcap) {
    int* o = realloc(m->off, ((size_t)m->nsurf + 1) * sizeof *o);
    if (!o) return NULL;
    m->off = o, m->offcap = m->nsurf + 1;
  }
  for (int s = 0, o = 0; s <= m->nsurf; s++) {
    m->off[s] = o;
    if (s < m->nsurf) o += 3 * m->surf[s].nvert;
  }
  return m->off;
}

//---- visiting the pairs ----

/* one pair: its stencil at the first positions (x), at the second (x1, the swept end; NULL), its
 * material points, kind and mollifier threshold, and the Coulomb coefficient of its surfaces */
typedef struct {
  double x[12], x1[12];
  int pt[4], ee, q; /* q: its surface pair */
  int side[4];      /* per vertex: 0 on the pair's first surface, 1 on its second */
  double eps_x, mu;
} pair_view;
typedef int (*pair_fn)(void* ctx, const pair_view* pv);

static void load_vertex(const kn_ipc_mesh* m, int s, int k, int slot, int swept, pair_view* pv) {
  memcpy(pv->x + 3 * slot, m->x + m->off[s] + 3 * k, 3 * sizeof(double));
  if (swept) memcpy(pv->x1 + 3 * slot, m->x1 + m->off[s] + 3 * k, 3 * sizeof(double));
  pv->pt[slot] = m->surf[s].pt[k];
}
static double rest_len2(const kn_ipc_surface* S, int a, int b) {
  double d = 0;
  for (int k = 0; k < 3; k++) d += (S->rest[3 * a + k] - S->rest[3 * b + k]) * (S->rest[3 * a + k] - S->rest[3 * b + k]);
  return d;
}

/* (surface pair q's surfaces va, vb (NULL: self), margin, swept; keep > 0: the sweep is a line
 * search's, its candidates at margin keep are kept for the evaluations on it) => its pairs: from the
 * kept candidates when they cover m->x (cached), else from the trees; 0 out of memory */
static int pairs_of(kn_ipc_mesh* m, int q, const kn_swept_surface* va, const kn_swept_surface* vb, double margin,
                    int cached, double keep, kn_swept_pairs* out) {
  if (cached || keep > 0) {
    if (keep > 0 && kn_swept_pairs_find(m->sweep, va, vb, keep, out, NULL)) return 0;
    if (!keep || kn_ipc_mesh_cache_store(m, q, out)) {
      kn_swept_pairs in = kn_ipc_mesh_cache_pairs(m, q);
      return !kn_swept_pairs_filter(m->sweep, va, vb, margin, &in, out, NULL);
    }
  }
  return !kn_swept_pairs_find(m->sweep, va, vb, margin, out, NULL);
}

/* (positions in m->x, and m->x1 when swept) => fn on every pair of every surface pair whose boxes
 * (swept when asked) come within margin; keep > 0 (a swept visit): its candidates at margin keep
 * kept for the static visits on the sweep (mesh_cache.c); 0 out of memory or when fn says stop */
static int visit(kn_ipc_mesh* m, double margin, int swept, double keep, pair_fn fn, void* ctx) {
  /* a sweep within the kept one's boxes (a later Newton iteration's, shorter) is covered too */
  int cached = kn_ipc_mesh_cache_covers(m, m->x, margin) && (!swept || (keep > 0 && kn_ipc_mesh_cache_covers(m, m->x1, margin)));
  if (cached || (keep > 0 && (!swept || !kn_ipc_mesh_cache_begin(m, keep, keep / 8)))) keep = 0;
  for (int q = 0; q < m->npair; q++) {
    int sa = m->pairs[2 * q], sb = m->pairs[2 * q + 1];
    const kn_ipc_surface *A = &m->surf[sa], *B = &m->surf[sb];
    kn_swept_surface va = {A->nvert, m->x + m->off[sa], swept ? m->x1 + m->off[sa] : NULL, A->ntri, A->tri,
                           A->nedge, A->edge, A->nvert_used, A->vert};
    kn_swept_surface vb = {B->nvert, m->x + m->off[sb], swept ? m->x1 + m->off[sb] : NULL, B->ntri, B->tri,
                           B->nedge, B->edge, B->nvert_used, B->vert};
    kn_swept_pairs out; /* a surface paired with itself: its self-contact (pairs sharing no vertex) */
    if (!pairs_of(m, q, &va, sa == sb ? NULL : &vb, margin, cached, keep, &out)) return 0;
    pair_view pv = {.mu = m->mu[q], .q = q};
    for (int dir = 0; dir < 2; dir++) { /* vertex of A - triangle of B, then vertex of B - triangle of A */
      int n = dir ? out.nvt_ba : out.nvt_ab, sv = dir ? sb : sa, st = dir ? sa : sb;
      const int* l = dir ? out.vt_ba : out.vt_ab;
      pv.ee = 0, pv.eps_x = 0, pv.side[0] = dir, pv.side[1] = pv.side[2] = pv.side[3] = !dir;
      for (int i = 0; i < n; i++) {
        load_vertex(m, sv, l[2 * i], 0, swept, &pv);
        for (int c = 0; c < 3; c++) load_vertex(m, st, m->surf[st].tri[3 * l[2 * i + 1] + c], 1 + c, swept, &pv);
        if (!fn(ctx, &pv)) return 0;
      }
    }
    pv.ee = 1, pv.side[0] = pv.side[1] = 0, pv.side[2] = pv.side[3] = 1;
    for (int i = 0; i < out.nee; i++) {
      const int *ea = A->edge + 2 * out.ee[2 * i], *eb = B->edge + 2 * out.ee[2 * i + 1];
      load_vertex(m, sa, ea[0], 0, swept, &pv), load_vertex(m, sa, ea[1], 1, swept, &pv);
      load_vertex(m, sb, eb[0], 2, swept, &pv), load_vertex(m, sb, eb[1], 3, swept, &pv);
      pv.eps_x = 1e-3 * rest_len2(A, ea[0], ea[1]) * rest_len2(B, eb[0], eb[1]); /* §6.4: rest lengths */
      if (!fn(ctx, &pv)) return 0;
    }
  }
  return 1;
}

// (term, v or NULL, p or NULL) => positions in m->x at v (and in m->x1 at v + p); 0 out of memory
static int prepare(kn_ipc_mesh* m, const kn_ipc_term* t, const double* v, const double* p) {
  if (!m->sweep && !(m->sweep = kn_swept_scratch_create())) return 0;
  if (!grow_x(m) || !grow_off(m)) return 0;
  positions(m, t, v, NULL, 0, m->x);
  if (p) positions(m, t, v, p, 1, m->x1);
  return 1;
}

//---- one pair's barrier ----

/* (stencil) => s, the squared distance of its case, with gradient g and Hessian H (12, 144) */
static double pair_distance(const pair_view* pv, kn_dist_case* c, double g[12], double H[144]) {
  *c = pv->ee ? kn_dist_edge_edge_case(pv->x) : kn_dist_point_triangle_case(pv->x);
  return kn_dist_eval(pv->x, *c, g, H);
}

/* (pair, kappa / h^2 = k) => e b~(s) times k (returned; +inf at s <= 0), its gradient g and its
 * PSD-projected Hessian H over the stencil (when non-NULL); 0 and nothing when s >= dhat^2 */
static double pair_barrier(const kn_ipc_term* t, const pair_view* pv, double k, double g[12], double H[144]) {
  double gs[12], Hs[144], sh = t->dhat * t->dhat;
  kn_dist_case c;
  /* most candidates are beyond dhat: their distance alone (s does not depend on what else is asked) */
  if (!(pair_distance(pv, &c, NULL, NULL) < sh)) return 0;
  double s = kn_dist_eval(pv->x, c, gs, H ? Hs : NULL);
  if (!(s > 0)) return INFINITY;
  double db, d2b, b = kn_ipc_barrier(s, sh, &db, &d2b);
  double e = 1, ge[12] = {0}, He[144] = {0};
  if (pv->ee) e = kn_dist_edge_mollifier(pv->x, pv->eps_x, ge, H ? He : NULL);
  /* §6.4: grad = k (b ge + e b' gs), Hess = k (b He + b' (gs ge^T + ge gs^T) + e b'' gs gs^T + e b' Hs) */
  if (g)
    for (int i = 0; i < 12; i++) g[i] = k * (b * ge[i] + e * db * gs[i]);
  if (H) {
    for (int i = 0; i < 12; i++)
      for (int j = 0; j < 12; j++)
        H[12 * i + j] = k * (b * He[12 * i + j] + db * (gs[i] * ge[j] + ge[i] * gs[j]) + e * d2b * gs[i] * gs[j] +
                             e * db * Hs[12 * i + j]);
    if (!t->mesh->exact_hessian) kn_fem_project_psd(H, 12);
  }
  return k * e * b;
}

// stencil gradient g (12) and Hessian H (144) => r += dt J^T g, T += dt^2 J^T H J over the 4 points
static void scatter(const kn_ipc_term* t, const int pt[4], const double g[12], const double* H, double* r,
                    kn_nl_triplets* T) {
  for (int a = 0; a < 4; a++) {
    if (r) kn_nl_point_add_force(t->points, pt[a], t->dt, g + 3 * a, r);
    if (!T || !H) continue;
    for (int b = 0; b < 4; b++) {
      double K[9];
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) K[3 * i + j] = H[12 * (3 * a + i) + 3 * b + j];
      kn_nl_points_add_block(t->points, pt[a], t->dt, pt[b], t->dt, K, T);
    }
  }
}

//---- evaluation ----

typedef struct {
  const kn_ipc_term* t;
  double E, k;
  double* r;
  kn_nl_triplets* T;
} eval_ctx;

static int eval_pair(void* p, const pair_view* pv) {
  eval_ctx* c = p;
  double g[12], H[144];
  double e = pair_barrier(c->t, pv, c->k, g, c->T ? H : NULL);
  if (e == 0) return 1;
  if (!isfinite(e)) {
    c->E = INFINITY;
    return 0;
  }
  c->E += e;
  scatter(c->t, pv->pt, g, c->T ? H : NULL, c->r, c->T);
  return 1;
}

/* lagged friction (§5.3, §5.5): u = T^T (x(v) - x(0)) = T^T dt J v per stencil vertex */
static double friction(const kn_ipc_term* t, const kn_ipc_mesh_friction* f, const double* v, double* r,
                       kn_nl_triplets* T) {
  double u[2] = {0, 0}, du[12];
  for (int a = 0; a < 4; a++) {
    double w[3];
    kn_nl_point_velocity(t->points, f->pt[a], v, w);
    for (int k = 0; k < 3; k++) {
      du[3 * a + k] = t->dt * w[k];
      u[0] += f->T[2 * (3 * a + k)] * du[3 * a + k], u[1] += f->T[2 * (3 * a + k) + 1] * du[3 * a + k];
    }
  }
  double gu[2], Hu[4], g[12], H[144];
  double e = kn_ipc_friction_local(u, f->mu * f->lambda, t->dt * t->eps_v, gu, Hu);
  for (int i = 0; i < 12; i++) {
    g[i] = f->T[2 * i] * gu[0] + f->T[2 * i + 1] * gu[1];
    for (int j = 0; j < 12 && T; j++) {
      const double *ti = f->T + 2 * i, *tj = f->T + 2 * j;
      H[12 * i + j] = ti[0] * (Hu[0] * tj[0] + Hu[1] * tj[1]) + ti[1] * (Hu[2] * tj[0] + Hu[3] * tj[1]);
    }
  }
  scatter(t, f->pt, g, T ? H : NULL, r, T);
  return e;
}

kn_status kn_ipc_mesh_eval(const kn_ipc_term* t, const double* v, double* E, double* r, kn_nl_triplets* T,
                           kn_error* err) {
  kn_ipc_mesh* m = t->mesh;
  if (!prepare(m, t, v, NULL)) return kn_fail(err, KN_ERR_NOMEM, "ipc mesh pairs: out of memory");
  eval_ctx c = {t, 0, t->kappa / (t->dt * t->dt), r, T};
  if (!visit(m, t->dhat, 0, 0, eval_pair, &c) && isfinite(c.E))
    return kn_fail(err, KN_ERR_NOMEM, "ipc mesh pairs: out of memory");
  if (!isfinite(c.E)) {
    if (E) *E = INFINITY;
    return KN_OK;
  }
  for (int i = 0; i < m->nfr; i++) c.E += friction(t, &m->fr[i], v, r, T);
  if (E && isfinite(*E)) *E += c.E;
  return KN_OK;
}

//---- CCD ----

typedef struct {
  double alpha, c;
} ccd_ctx;

static int ccd_pair(void* p, const pair_view* pv) {
  ccd_ctx* c = p;
  double dx[12], toi;
  for (int i = 0; i < 12; i++) dx[i] = pv->x1[i] - pv->x[i];
  if (kn_pair_ccd(pv->x, dx, pv->ee, c->c, 0, &toi)) c->alpha = fmin(c->alpha, toi);
  return 1;
}

double kn_ipc_mesh_max_step(const kn_ipc_term* t, const double* v, const double* p, double alpha) {
  kn_ipc_mesh* m = t->mesh;
  if (!(alpha > 0)) return alpha;
  if (!prepare(m, t, v, NULL)) return 0;
  positions(m, t, v, p, alpha, m->x1); /* the step's end at the other filters' bound */
  ccd_ctx c = {1.0, t->ccd};
  /* the candidates within 2 dhat of the sweep kept: the line search's evaluations filter them */
  if (!visit(m, 0.0, 1, 2 * t->dhat, ccd_pair, &c)) return 0;
  return alpha * c.alpha;
}

typedef struct {
  double c, d_end, d_lin;
  int q;
} audit_ctx;

static int audit_pair(void* p, const pair_view* pv) {
  audit_ctx* c = p;
  double dx[12], toi;
  for (int i = 0; i < 12; i++) dx[i] = pv->x1[i] - pv->x[i];
  if (!kn_pair_ccd(pv->x, dx, pv->ee, c->c, 0, &toi)) return 1;
  pair_view end = *pv;
  memcpy(end.x, pv->x1, sizeof end.x);
  kn_dist_case dc;
  c->q = pv->q, c->d_end = sqrt(pair_distance(&end, &dc, NULL, NULL)), c->d_lin = sqrt(pair_distance(pv, &dc, NULL, NULL));
  return 0;
}

int kn_ipc_mesh_audit(const kn_ipc_term* t, const double* v, const double* x_end, int* which, double* d_lin,
                      double* d_end) {
  kn_ipc_mesh* m = t->mesh;
  *which = -1;
  if (!prepare(m, t, v, NULL)) return -1;
  size_t n = 0;
  for (int s = 0; s < m->nsurf; s++) n += 3 * (size_t)m->surf[s].nvert;
  memcpy(m->x1, x_end, n * sizeof *x_end);
  audit_ctx c = {0.99, INFINITY, INFINITY, -1};
  if (!visit(m, 0.0, 1, 0, audit_pair, &c) && c.q < 0) return -1;
  *which = c.q, *d_lin = c.d_lin, *d_end = c.d_end;
  return c.q < 0;
}

//---- lagging, kappa, diagnostics ----

typedef struct {
  const kn_ipc_term* t;
  kn_ipc_mesh* m;
  int nomem;
} lag_ctx;

static int lag_pair(void* p, const pair_view* pv) {
  lag_ctx* c = p;
  if (!(pv->mu > 0)) return 1;
  const kn_ipc_term* t = c->t;
  kn_dist_case dc;
  double s = pair_distance(pv, &dc, NULL, NULL), sh = t->dhat * t->dhat;
  if (!(s < sh) || !(s > 0)) return 1;
  kn_ipc_mesh* m = c->m;
  if (m->nfr == m->frcap) {
    int cap = m->frcap ? 2 * m->frcap : 64;
    kn_ipc_mesh_friction* f = realloc(m->fr, (size_t)cap * sizeof *f);
    if (!f) return c->nomem = 1, 0;
    m->fr = f, m->frcap = cap;
  }
  kn_ipc_mesh_friction* f = &m->fr[m->nfr++];
  memcpy(f->pt, pv->pt, sizeof f->pt), memcpy(f->side, pv->side, sizeof f->side);
  f->q = pv->q, f->ee = pv->ee, f->eps_x = pv->eps_x;
  f->mu = pv->mu;
  double db, e = pv->ee ? kn_dist_edge_mollifier(pv->x, pv->eps_x, NULL, NULL) : 1.0;
  kn_ipc_barrier(s, sh, &db, NULL);
  /* §5.5: lambda = -(kappa / h^2) d(e b~(d^2))/dd = -(kappa / h^2) 2 d b~' e */
  f->lambda = -t->kappa / (t->dt * t->dt) * 2 * sqrt(s) * db * e;
  kn_ipc_tangent_basis(pv->x, pv->ee, (int)dc.kind, dc.v, f->T);
  return 1;
}

kn_status kn_ipc_mesh_lag(const kn_ipc_term* t, const double* v, kn_error* err) {
  kn_ipc_mesh* m = t->mesh;
  m->nfr = 0;
  if (!prepare(m, t, v, NULL)) return kn_fail(err, KN_ERR_NOMEM, "ipc mesh pairs: out of memory");
  lag_ctx c = {t, m, 0};
  if (!visit(m, t->dhat, 0, 0, lag_pair, &c) || c.nomem) return kn_fail(err, KN_ERR_NOMEM, "ipc mesh pairs: out of memory");
  return KN_OK;
}

typedef struct {
  double dmin;
  int q;
} min_ctx;
static int min_pair(void* p, const pair_view* pv) {
  min_ctx* c = p;
  kn_dist_case dc;
  double d = sqrt(pair_distance(pv, &dc, NULL, NULL));
  if (d < c->dmin) c->dmin = d, c->q = pv->q;
  return 1;
}

double kn_ipc_mesh_min_distance(const kn_ipc_term* t, const double* v, double margin, int* which) {
  kn_ipc_mesh* m = t->mesh;
  min_ctx c = {INFINITY, -1};
  if (!prepare(m, t, v, NULL) || !visit(m, margin, 0, 0, min_pair, &c)) c.dmin = NAN;
  if (which) *which = c.q;
  return c.dmin;
}

typedef struct {
  const kn_ipc_term* t;
  double* g;
} grad_ctx;
static int grad_pair(void* p, const pair_view* pv) {
  grad_ctx* c = p;
  double g[12];
  double e = pair_barrier(c->t, pv, 1.0 / (c->t->dt * c->t->dt), g, NULL);
  if (e > 0 && isfinite(e)) scatter(c->t, pv->pt, g, NULL, c->g, NULL);
  return 1;
}

void kn_ipc_mesh_barrier_gradient(const kn_ipc_term* t, const double* v, double* g_b) {
  kn_ipc_mesh* m = t->mesh;
  grad_ctx c = {t, g_b};
  if (prepare(m, t, v, NULL)) visit(m, t->dhat, 0, 0, grad_pair, &c);
}

void kn_ipc_mesh_free(kn_ipc_mesh* m) {
  if (!m) return;
  kn_swept_scratch_free(m->sweep);
  kn_ipc_mesh_cache_free(m);
  free(m->x), free(m->off), free(m->fr), free(m->frmark);
  m->sweep = NULL, m->x = m->x1 = NULL, m->off = NULL, m->fr = NULL, m->frmark = NULL;
  m->xcap = 0, m->offcap = m->frcap = m->nfr = m->frmarkcap = 0;
}

//---- the pairs as contacts (outputs) ----

typedef struct {
  const kn_ipc_term* t;
  const double* v;
  kn_ipc_mesh_contact_fn fn;
  void* ctx;
  kn_status st;
} contact_ctx;

// lagged friction pair f at v => the forces on its four vertices (minus friction()'s gradient)
static void friction_forces(const kn_ipc_term* t, const kn_ipc_mesh_friction* f, const double* v, double F[12]) {
  double u[2] = {0, 0}, gu[2];
  for (int a = 0; a < 4; a++) {
    double w[3];
    kn_nl_point_velocity(t->points, f->pt[a], v, w);
    for (int k = 0; k < 3; k++)
      u[0] += f->T[2 * (3 * a + k)] * t->dt * w[k], u[1] += f->T[2 * (3 * a + k) + 1] * t->dt * w[k];
  }
  kn_ipc_friction_local(u, f->mu * f->lambda, t->dt * t->eps_v, gu, NULL);
  for (int i = 0; i < 12; i++) F[i] = -(f->T[2 * i] * gu[0] + f->T[2 * i + 1] * gu[1]);
}

// (pair at v, its forces F) => its contact handed on, with its distance and distance gradient
static void contact_out(contact_ctx* c, const pair_view* pv, const double F[12]) {
  kn_ipc_mesh_contact r = {.q = pv->q, .ee = pv->ee};
  memcpy(r.side, pv->side, sizeof r.side), memcpy(r.x, pv->x, sizeof r.x), memcpy(r.F, F, sizeof r.F);
  kn_dist_case dc;
  double s = pair_distance(pv, &dc, r.gs, NULL);
  r.d = sqrt(fmax(s, 0));
  if (!c->st) c->st = c->fn(c->ctx, &r);
}

static int contact_pair(void* p, const pair_view* pv) {
  contact_ctx* c = p;
  const kn_ipc_term* t = c->t;
  kn_ipc_mesh* m = t->mesh;
  double g[12], F[12];
  double e = pair_barrier(t, pv, t->kappa / (t->dt * t->dt), g, NULL);
  if (!(e > 0) || !isfinite(e)) return 1;
  for (int i = 0; i < 12; i++) F[i] = -g[i];
  for (int i = 0; i < m->nfr; i++) /* its lagged friction, when it has one */
    if (!m->frmark[i] && !memcmp(m->fr[i].pt, pv->pt, sizeof pv->pt)) {
      double Ff[12];
      friction_forces(t, &m->fr[i], c->v, Ff);
      for (int k = 0; k < 12; k++) F[k] += Ff[k];
      m->frmark[i] = 1;
      break;
    }
  contact_out(c, pv, F);
  return 1;
}

kn_status kn_ipc_mesh_contacts(const kn_ipc_term* t, const double* v, kn_ipc_mesh_contact_fn fn, void* ctx,
                               kn_error* err) {
  kn_ipc_mesh* m = t->mesh;
  if (m->nfr > m->frmarkcap) {
    unsigned char* a = realloc(m->frmark, (size_t)m->nfr);
    if (!a) return kn_fail(err, KN_ERR_NOMEM, "ipc mesh pairs: out of memory");
    m->frmark = a, m->frmarkcap = m->nfr;
  }
  if (m->nfr) memset(m->frmark, 0, (size_t)m->nfr);
  if (!prepare(m, t, v, NULL)) return kn_fail(err, KN_ERR_NOMEM, "ipc mesh pairs: out of memory");
  contact_ctx c = {t, v, fn, ctx, KN_OK};
  if (!visit(m, t->dhat, 0, 0, contact_pair, &c) && !c.st)
    return kn_fail(err, KN_ERR_NOMEM, "ipc mesh pairs: out of memory");
  for (int i = 0; i < m->nfr && !c.st; i++) { /* lagged friction of pairs no longer within dhat */
    const kn_ipc_mesh_friction* f = &m->fr[i];
    if (m->frmark[i]) continue;
    pair_view pv = {.ee = f->ee, .q = f->q, .eps_x = f->eps_x, .mu = f->mu};
    memcpy(pv.pt, f->pt, sizeof pv.pt), memcpy(pv.side, f->side, sizeof pv.side);
    for (int a = 0; a < 4; a++) {
      double w[3];
      kn_nl_point_velocity(t->points, f->pt[a], v, w);
      for (int k = 0; k < 3; k++) pv.x[3 * a + k] = t->points->p[f->pt[a]].x0[k] + t->dt * w[k];
    }
    double F[12];
    friction_forces(t, f, v, F);
    contact_out(&c, &pv, F);
  }
  return c.st; /* fn's error, described by fn */
}
