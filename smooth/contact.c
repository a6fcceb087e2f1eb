/* The smooth_friction backend's contact term (smooth.h; digest implicit-smooth-friction.md §3.3,
 * §3.4, §3.11): the cubic penalty on each contact's gap and smoothed Coulomb friction at the end of
 * the step, in the 3-D form of §3.4 (v_t = P w, no tangent-frame convention), residuals in impulses. */
#include <math.h>
#include <string.h>

#include "smooth/smooth.h"

// F0 with F0' = s (§3.11): v^2 / eps - v^3 / (3 eps^2) + eps / 3 below eps, v above
static double f0(double v, double eps) { return v < eps ? v * v / eps - v * v * v / (3 * eps * eps) + eps / 3 : v; }

// (contact, w) => d, b(d), b'(d), b''(d), v_t, |v_t|
typedef struct {
  double d, b, db, d2b, vt[3], s;
} local;

static void local_eval(const kn_smooth_term* t, const kn_smooth_contact* c, const double w[3], local* L) {
  double wn = c->n[0] * w[0] + c->n[1] * w[1] + c->n[2] * w[2];
  L->d = c->phi0 + t->dt * wn;
  if (t->dt0 > 0) L->d = c->phi0 + t->dt0 * (c->n[0] * c->w0[0] + c->n[1] * c->w0[1] + c->n[2] * c->w0[2]) + t->dt * wn;
  L->b = kn_smooth_penalty(L->d, t->delta, t->kappa, &L->db, &L->d2b);
  for (int k = 0; k < 3; k++) L->vt[k] = w[k] - wn * c->n[k];
  L->s = sqrt(L->vt[0] * L->vt[0] + L->vt[1] * L->vt[1] + L->vt[2] * L->vt[2]);
}

// the friction law of contact c (a pass lagged at a reference drops Stribeck: its potential is F0's)
static kn_smooth_friction law(const kn_smooth_term* t, const kn_smooth_contact* c) {
  return (kn_smooth_friction){.mu_s = c->mu * (t->use_ref ? 1.0 : t->static_ratio), .mu_d = c->mu, .v_s = t->stribeck_speed,
                              .mu_v = t->viscous, .eps = t->eps};
}

// [u]x, the cross-product matrix, scaled by s, into K (row-major)
static void cross_matrix(const double* u, double s, double K[9]) {
  K[0] = 0, K[1] = -s * u[2], K[2] = s * u[1];
  K[3] = s * u[2], K[4] = 0, K[5] = -s * u[0];
  K[6] = -s * u[1], K[7] = s * u[0], K[8] = 0;
}

/* one volume zone: W, its gradient through the points, its Hessian (§3.5) */
static double volume_eval(const kn_smooth_term* t, const kn_smooth_volume* z, const double* v, double* r,
                          kn_nl_triplets* T) {
  const double h = t->dt;
  for (int a = 0; a < z->nvert; a++) {
    const kn_nl_point* pt = &t->points->p[z->point[a]];
    double u[3];
    kn_nl_point_velocity(t->points, z->point[a], v, u);
    for (int k = 0; k < 3; k++) z->x[3 * a + k] = pt->x0[k] + h * u[k];
  }
  double V = kn_smooth_surface_volume(z->x, z->nvert, z->tri, z->ntri, z->dV), dW = z->coef * (V - z->V0);
  for (int a = 0; a < z->nvert; a++) kn_nl_point_add_force(t->points, z->point[a], h * dW, z->dV + 3 * a, r);
  double e0 = 0; /* the start half: a constant force, its potential linear in v */
  if (t->dt0 > 0 && z->g0)
    for (int a = 0; a < z->nvert; a++) {
      double u[3];
      kn_nl_point_velocity(t->points, z->point[a], v, u);
      kn_nl_point_add_force(t->points, z->point[a], 1.0, z->g0 + 3 * a, r);
      e0 += z->g0[3 * a] * u[0] + z->g0[3 * a + 1] * u[1] + z->g0[3 * a + 2] * u[2];
    }
  if (T) {
    double K[9];
    /* (V - V0) hess V: d2V/dxa dxb = -[x_c]x / 6, cyclic; indefinite, so left out where the term is
     * a potential whose Hessian must be PSD (lagged: its passes minimize) */
    for (int f = 0; f < (t->lagged || t->use_ref ? 0 : z->ntri); f++)
      for (int k = 0; k < 3; k++) {
        int a = z->tri[3 * f + k], b = z->tri[3 * f + (k + 1) % 3], c = z->tri[3 * f + (k + 2) % 3];
        cross_matrix(z->x + 3 * c, -h * h * dW / 6, K);
        kn_nl_points_add_block(t->points, z->point[a], 1, z->point[b], 1, K, T);
        cross_matrix(z->x + 3 * c, h * h * dW / 6, K); /* d2V/dxb dxa = +[x_c]x / 6 */
        kn_nl_points_add_block(t->points, z->point[b], 1, z->point[a], 1, K, T);
      }
    if (z->nvert <= KN_SMOOTH_RANK_ONE_MAX)
      for (int a = 0; a < z->nvert; a++)
        for (int b = 0; b < z->nvert; b++) {
          for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) K[3 * i + j] = h * h * z->coef * z->dV[3 * a + i] * z->dV[3 * b + j];
          kn_nl_points_add_block(t->points, z->point[a], 1, z->point[b], 1, K, T);
        }
  }
  return 0.5 * z->coef * (V - z->V0) * (V - z->V0) + e0;
}

kn_status kn_smooth_term_eval(void* self, const double* v, double* E, double* r, kn_nl_triplets* T, kn_nl_triplets* S,
                              kn_error* err) {
  (void)err;
  const kn_smooth_term* t = self;
  const double h = t->dt;
  double e = 0;
  for (int z = 0; z < t->nvolumes; z++) e += volume_eval(t, &t->volumes[z], v, r, T);
  for (int i = 0; i < t->n; i++) {
    const kn_smooth_contact* c = &t->c[i];
    double w[3];
    kn_nl_pair_velocity(t->points, c->a, c->b, v, w);
    local L;
    local_eval(t, c, w, &L);
    if (t->dt0 > 0) { /* the start half (trapezoidal rule): a constant impulse, linear in v as a potential */
      kn_nl_pair_add_force(t->points, c->a, c->b, t->dt0, c->f0, r);
      e += t->dt0 * (c->f0[0] * w[0] + c->f0[1] * w[1] + c->f0[2] * w[2]);
    }
    int lag = t->lagged || t->use_ref; /* friction is then the gradient of a potential */
    double lambda = t->lagged ? c->lambda0 : t->use_ref ? t->lambda_ref[i] : -L.db;
    if (L.db == 0.0 && lambda == 0.0) continue; /* beyond the thickness, no lagged force */
    kn_smooth_friction f = law(t, c);
    double dc, dcdl, rho;
    double mag = kn_smooth_friction_magnitude(&f, L.s, lambda, &dc, &dcdl, &rho);
    (void)mag;
    double g[3];
    for (int k = 0; k < 3; k++) g[k] = h * (L.db * c->n[k] + rho * L.vt[k]);
    kn_nl_pair_add_force(t->points, c->a, c->b, 1.0, g, r);
    e += L.b;
    if (lag) e += h * (c->mu * lambda * f0(L.s, t->eps) + 0.5 * t->viscous * L.s * L.s);
    if (!T) continue;
    double K[9], u[3] = {0, 0, 0};
    if (L.s > 0)
      for (int k = 0; k < 3; k++) u[k] = L.vt[k] / L.s;
    /* d rho / d lambda (implicit friction): mu_eff(|v_t|) s(|v_t|) / |v_t| */
    double sv = 0, dg = 0;
    kn_smooth_transition(L.s, t->eps, NULL, &sv);
    double mu_eff = c->mu + (f.mu_s - f.mu_d) * (f.mu_s != f.mu_d ? kn_smooth_stribeck(L.s / f.v_s, &dg) : 0.0);
    double drho_dl = lag ? 0.0 : mu_eff * sv, dlambda_dd = -L.d2b;
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) {
        double P = (a == b) - c->n[a] * c->n[b];
        K[3 * a + b] = h * h * L.d2b * c->n[a] * c->n[b] + h * (rho * (P - u[a] * u[b]) + dc * u[a] * u[b]) +
                       h * L.vt[a] * drho_dl * dlambda_dd * h * c->n[b];
      }
    kn_nl_pair_add_block(t->points, c->a, c->b, K, T);
    if (!S) continue;
    /* the PSD part: the penalty's curvature (b'' >= 0) and the friction block without the
     * normal-force coupling, its slope c' clipped at 0 (Stribeck's decaying branch) */
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) {
        double P = (a == b) - c->n[a] * c->n[b];
        K[3 * a + b] = h * h * L.d2b * c->n[a] * c->n[b] + h * (rho * (P - u[a] * u[b]) + fmax(dc, 0) * u[a] * u[b]);
      }
    kn_nl_pair_add_block(t->points, c->a, c->b, K, S);
  }
  if (E) *E += e;
  return KN_OK;
}

void kn_smooth_term_lag(void* self, const double* v, int on) {
  kn_smooth_term* t = self;
  t->use_ref = on && t->lambda_ref;
  if (!t->use_ref) return;
  for (int i = 0; i < t->n; i++) {
    double w[3];
    kn_nl_pair_velocity(t->points, t->c[i].a, t->c[i].b, v, w);
    local L;
    local_eval(t, &t->c[i], w, &L);
    t->lambda_ref[i] = -L.db;
  }
}

double kn_smooth_term_force(const kn_smooth_term* t, int i, const double* v, double f[3]) {
  const kn_smooth_contact* c = &t->c[i];
  double w[3];
  kn_nl_pair_velocity(t->points, c->a, c->b, v, w);
  local L;
  local_eval(t, c, w, &L);
  double lambda = t->lagged ? c->lambda0 : t->use_ref ? t->lambda_ref[i] : -L.db, rho = 0, dc, dcdl;
  kn_smooth_friction fl = law(t, c);
  if (L.db != 0.0 || lambda != 0.0) kn_smooth_friction_magnitude(&fl, L.s, lambda, &dc, &dcdl, &rho);
  for (int k = 0; k < 3; k++) f[k] = -(L.db * c->n[k] + rho * L.vt[k]);
  if (t->dt0 > 0) /* the impulse over the step, dt f_end + dt0 f_start, per unit time */
    for (int k = 0; k < 3; k++) f[k] = (t->dt * f[k] - t->dt0 * c->f0[k]) / (t->dt + t->dt0);
  return L.d;
}

void kn_smooth_term_start(kn_smooth_term* t, kn_smooth_contact* cs) {
  if (!(t->dt0 > 0)) return;
  for (int i = 0; i < t->n; i++) {
    kn_smooth_contact* c = &cs[i];
    double db, wn = c->n[0] * c->w0[0] + c->n[1] * c->w0[1] + c->n[2] * c->w0[2], vt[3], rho = 0, dc, dcdl;
    kn_smooth_penalty(c->phi0, t->delta, t->kappa, &db, NULL);
    for (int k = 0; k < 3; k++) vt[k] = c->w0[k] - wn * c->n[k];
    double lambda = t->lagged ? c->lambda0 : -db, s = sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2]);
    /* the implicit law at the start state (the lagged variant's lambda0 is lambda(phi0) too) */
    kn_smooth_friction fl = {.mu_s = c->mu * t->static_ratio, .mu_d = c->mu, .v_s = t->stribeck_speed,
                             .mu_v = t->viscous, .eps = t->eps};
    if (db != 0.0 || lambda != 0.0) kn_smooth_friction_magnitude(&fl, s, lambda, &dc, &dcdl, &rho);
    for (int k = 0; k < 3; k++) c->f0[k] = db * c->n[k] + rho * vt[k];
  }
  for (int zi = 0; zi < t->nvolumes; zi++) {
    kn_smooth_volume* z = &t->volumes[zi];
    if (!z->g0) continue;
    for (int a = 0; a < z->nvert; a++) {
      const kn_nl_point* pt = &t->points->p[z->point[a]];
      for (int k = 0; k < 3; k++) z->x[3 * a + k] = pt->x0[k] - t->dt0 * pt->v0[k];
    }
    double V = kn_smooth_surface_volume(z->x, z->nvert, z->tri, z->ntri, z->dV), dW = z->coef * (V - z->V0);
    for (int k = 0; k < 3 * z->nvert; k++) z->g0[k] = t->dt0 * dW * z->dV[k];
  }
}
