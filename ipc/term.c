/* The ipc backend's contact term (ipc.h; digest §3.3-3.4, §5.3-5.4, §7.4): per contact the clamped
 * log barrier on the squared point-plane gap and the lagged smoothed friction, over the step's
 * material points (nonlinear/nonlinear.h), in velocity form (energies / h^2, gradients impulses);
 * then the mesh-mesh pairs' part (mesh.c) when the term has surfaces. */
#include <math.h>
#include <string.h>

#include "ipc/ipc.h"

static double dot3(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

double kn_ipc_term_gap(const kn_ipc_term* t, int i, const double* v) {
  const kn_ipc_contact* c = &t->c[i];
  double w[3];
  kn_nl_pair_velocity(t->points, c->a, c->b, v, w);
  return c->phi0 + c->shift + t->dt * dot3(c->n, w);
}

/* (d) => e = kappa / h^2 b~(d^2), de/dd, d2e/dd2 (clamped at 0; >= 0 in exact arithmetic); below
 * d_lo (> 0: the feasibility solve) its second-order Taylor expansion at d_lo */
static double barrier_in_d(const kn_ipc_term* t, double d, double* de, double* d2e) {
  double x = t->d_lo > 0 && d < t->d_lo ? t->d_lo : d;
  double s = x * x, sh = t->dhat * t->dhat, db, d2b;
  double b = kn_ipc_barrier(s, sh, &db, &d2b), k = t->kappa / (t->dt * t->dt);
  *de = k * 2 * x * db;
  *d2e = fmax(0.0, k * (4 * s * d2b + 2 * db));
  if (x == d) return k * b;
  double y = d - x;
  double e = k * b + *de * y + 0.5 * *d2e * y * y;
  *de += *d2e * y;
  return e;
}

double kn_ipc_normal_force(double d, double dhat, double kappa, double dt) {
  if (!(d < dhat)) return 0;
  if (!(d > 0)) return INFINITY;
  double db;
  kn_ipc_barrier(d * d, dhat * dhat, &db, NULL);
  return -kappa / (dt * dt) * 2 * d * db;
}

kn_status kn_ipc_term_eval(void* self, const double* v, double* E, double* r, kn_nl_triplets* T, kn_nl_triplets* S,
                           kn_error* err) {
  (void)S;
  const kn_ipc_term* t = self;
  const double h = t->dt, eps = h * t->eps_v;
  double e = 0;
  for (int i = 0; i < t->n; i++) {
    const kn_ipc_contact* c = &t->c[i];
    double w[3];
    kn_nl_pair_velocity(t->points, c->a, c->b, v, w);
    double d = c->phi0 + c->shift + h * dot3(c->n, w);
    if (!(d > 0) && !(t->d_lo > 0)) { /* not admissible: the line search backs off (CCD keeps iterates away) */
      if (E) *E = INFINITY;
      return KN_OK;
    }
    double K[9] = {0}, g[3] = {0, 0, 0};
    int any = 0;
    if (d < t->dhat) {
      double de, d2e;
      e += barrier_in_d(t, d, &de, &d2e);
      for (int a = 0; a < 3; a++) {
        g[a] += h * de * c->n[a];
        for (int b = 0; b < 3; b++) K[3 * a + b] += h * h * d2e * c->n[a] * c->n[b];
      }
      any = 1;
    }
    double chi = c->mu * c->lambda;
    if (chi > 0) { /* lagged friction: chi f0(|u|), u = h (t1 . w, t2 . w) (§5.3) */
      double u[2] = {h * dot3(c->t1, w), h * dot3(c->t2, w)}, gu[2], Hu[4];
      e += kn_ipc_friction_local(u, chi, eps, gu, Hu);
      for (int a = 0; a < 3; a++) {
        double ta[2] = {c->t1[a], c->t2[a]};
        g[a] += h * (gu[0] * ta[0] + gu[1] * ta[1]);
        for (int b = 0; b < 3; b++) {
          double tb[2] = {c->t1[b], c->t2[b]};
          K[3 * a + b] += h * h * (ta[0] * (Hu[0] * tb[0] + Hu[1] * tb[1]) + ta[1] * (Hu[2] * tb[0] + Hu[3] * tb[1]));
        }
      }
      any = 1;
    }
    if (!any) continue;
    kn_nl_pair_add_force(t->points, c->a, c->b, 1.0, g, r);
    if (T) kn_nl_pair_add_block(t->points, c->a, c->b, K, T);
  }
  if (E && isfinite(*E)) *E += e;
  return t->mesh ? kn_ipc_mesh_eval(t, v, E, r, T, err) : KN_OK;
}

double kn_ipc_term_max_step(void* self, const double* v, const double* p) {
  const kn_ipc_term* t = self;
  double alpha = 1.0;
  for (int i = 0; i < t->n; i++) {
    const kn_ipc_contact* c = &t->c[i];
    double w[3];
    kn_nl_pair_velocity(t->points, c->a, c->b, p, w);
    double dd = t->dt * dot3(c->n, w); /* d(v + alpha p) = d(v) + alpha dd */
    if (!(dd < 0)) continue;
    double d = kn_ipc_term_gap(t, i, v);
    if (!(d > 0) && t->d_lo > 0) continue; /* the feasibility solve: not there yet */
    alpha = fmin(alpha, t->ccd * fmax(d, 0.0) / -dd);
  }
  /* friction's kink: a sliding contact (|u| >= eps) whose slip the step would carry through the
   * static band (its ray passing within eps of u = 0) stops where the ray is nearest 0, so the line
   * search does not halve its way down from the far side of the kink */
  const double eps = t->dt * t->eps_v;
  for (int i = 0; i < t->n; i++) {
    const kn_ipc_contact* c = &t->c[i];
    if (!(c->mu * c->lambda > 0)) continue;
    double w[3], wp[3];
    kn_nl_pair_velocity(t->points, c->a, c->b, v, w);
    kn_nl_pair_velocity(t->points, c->a, c->b, p, wp);
    double u[2] = {t->dt * dot3(c->t1, w), t->dt * dot3(c->t2, w)}, du[2] = {t->dt * dot3(c->t1, wp), t->dt * dot3(c->t2, wp)};
    double uu = u[0] * u[0] + u[1] * u[1], dd = du[0] * du[0] + du[1] * du[1];
    if (uu < eps * eps || !(dd > 0)) continue;
    double a = -(u[0] * du[0] + u[1] * du[1]) / dd; /* nearest 0 along the ray */
    if (!(a > 0 && a < alpha)) continue;
    double x = u[0] + a * du[0], y = u[1] + a * du[1];
    if (x * x + y * y < eps * eps) alpha = a;
  }
  return t->mesh ? kn_ipc_mesh_max_step(t, v, p, alpha) : alpha;
}

int kn_ipc_term_stiffen(void* self, const double* v) {
  kn_ipc_term* t = self;
  if (!(t->kappa < t->kappa_max) || t->d_lo > 0) return 0;
  double d = t->mesh ? kn_ipc_mesh_min_distance(t, v, t->dhat, NULL) : INFINITY;
  for (int i = 0; i < t->n && d >= t->d_crush; i++) d = fmin(d, kn_ipc_term_gap(t, i, v));
  if (!(d < t->d_crush)) return 0;
  t->kappa = t->kappa_max;
  return 1;
}

int kn_ipc_term_project(void* self, int on) {
  kn_ipc_term* t = self;
  if (!t->mesh) return 0;
  int was = !t->mesh->exact_hessian;
  t->mesh->exact_hessian = !on;
  return on && !was;
}

void kn_ipc_term_force(const kn_ipc_term* t, int i, const double* v, double f[3]) {
  const kn_ipc_contact* c = &t->c[i];
  double w[3];
  kn_nl_pair_velocity(t->points, c->a, c->b, v, w);
  double d = c->phi0 + c->shift + t->dt * dot3(c->n, w), lambda = kn_ipc_normal_force(d, t->dhat, t->kappa, t->dt);
  double gu[2] = {0, 0}, chi = c->mu * c->lambda;
  if (chi > 0) {
    double u[2] = {t->dt * dot3(c->t1, w), t->dt * dot3(c->t2, w)};
    kn_ipc_friction_local(u, chi, t->dt * t->eps_v, gu, NULL);
  }
  for (int a = 0; a < 3; a++) f[a] = lambda * c->n[a] - (gu[0] * c->t1[a] + gu[1] * c->t2[a]);
}

void kn_ipc_term_lag(kn_ipc_term* t, const double* v) {
  for (int i = 0; i < t->n; i++) {
    double lambda = kn_ipc_normal_force(kn_ipc_term_gap(t, i, v), t->dhat, t->kappa, t->dt);
    t->c[i].lambda = isfinite(lambda) ? lambda : 0.0;
  }
}

void kn_ipc_term_barrier_gradient(const kn_ipc_term* t, const double* v, double* g_b, int nv) {
  memset(g_b, 0, (size_t)nv * sizeof *g_b);
  kn_ipc_term one = *t;
  one.kappa = 1;
  for (int i = 0; i < t->n; i++) {
    double d = kn_ipc_term_gap(t, i, v);
    if (!(d > 0) || !(d < t->dhat)) continue;
    double de, d2e, g[3];
    barrier_in_d(&one, d, &de, &d2e);
    for (int a = 0; a < 3; a++) g[a] = t->dt * de * t->c[i].n[a];
    kn_nl_pair_add_force(t->points, t->c[i].a, t->c[i].b, 1.0, g, g_b);
  }
  if (t->mesh) kn_ipc_mesh_barrier_gradient(t, v, g_b);
}
