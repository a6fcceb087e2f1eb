/* The continuous penalty forces as the penalty backend's contact term in the shared Newton solve
 * (continuous-penalty-forces.md §5.5 option 2): each pair's four vertices are material points
 * x(v) = x0 + dt J v, its weights, side and start frozen from the predictor path; the force over
 * x0 -> x(v), averaged with the weight 2 s (kn_cpf_impulse_jacobian: the path's plain mean leaves the
 * spring at the step's start and a stiff pair's period-2 mode nearly undamped), and its Jacobian
 * (continuous_jacobian.c) enter as impulses. */
#include <string.h>

#include "penalty/penalty.h"

static const double sgn_vf[4] = {1, -1, -1, -1}, sgn_ee[4] = {1, 1, -1, -1};

// pair p's stiffness: its own, else the term's
static double pair_k(const kn_cpf_term* t, const kn_cpf_term_pair* p) { return p->k > 0 ? p->k : t->k; }

// pair i's stencil at v: x0 and x1 = x0 + dt J v (+ x1_off) of its four points
static void stencil_at(const kn_cpf_term* t, int i, const double* v, double x0[12], double x1[12]) {
  const kn_cpf_term_pair* p = &t->pairs[i];
  for (int j = 0; j < 4; j++) {
    double u[3];
    kn_nl_point_velocity(t->points, p->pt[j], v, u);
    const double* x = t->points->p[p->pt[j]].x0;
    const double* o = t->x1_off ? t->x1_off + 3 * p->pt[j] : NULL;
    for (int c = 0; c < 3; c++) x0[3 * j + c] = x[c], x1[3 * j + c] = x[c] + t->dt * u[c] + (o ? o[c] : 0);
  }
}

// pair i's normal force and its friction (Sfr: the friction's PSD block, kn_cpf_friction)
static int pair_force(const kn_cpf_term* t, int i, const double* v, double F[12], double dF[144], double* stiff,
                      double Sfr[9]) {
  double x0[12], x1[12];
  stencil_at(t, i, v, x0, x1);
  const kn_cpf_term_pair* p = &t->pairs[i];
  kn_cpf_stencil st = {x0, x1, p->edge_edge};
  double stiff_local = 0;
  if (!stiff) stiff = &stiff_local;
  const double kp = pair_k(t, p);
  int keep = kn_cpf_impulse_jacobian(&st, &p->pair, p->s_start, kp, t->mode, F, dF, stiff);
  if (t->lag_lambda && *stiff == 0 && !(p->lam > 0)) return keep;
  if (t->anchored) kn_cpf_anchor_friction(&st, p->anchor, p->mu, kp, t->lag_lambda ? p->lam : -1, F, dF, Sfr, NULL, NULL);
  else kn_cpf_friction(&st, &p->pair, p->mu, t->eps_v, t->dt, t->lag_lambda ? p->lam : -1, F, dF, Sfr, NULL, NULL);
  return keep;
}

int kn_cpf_term_pair_force(const kn_cpf_term* t, int i, const double* v, double F[12], double dF[144], double* stiff) {
  return pair_force(t, i, v, F, dF, stiff, NULL);
}

double kn_cpf_term_pair_lambda(const kn_cpf_term* t, int i, const double* v) {
  double x0[12], x1[12], F[12], lam = 0;
  stencil_at(t, i, v, x0, x1);
  const kn_cpf_term_pair* p = &t->pairs[i];
  kn_cpf_stencil st = {x0, x1, p->edge_edge};
  kn_cpf_impulse_jacobian(&st, &p->pair, p->s_start, pair_k(t, p), t->mode, F, NULL, NULL);
  kn_cpf_friction(&st, &p->pair, 1, 1, t->dt, -1, F, NULL, NULL, NULL, &lam);
  return lam;
}

kn_status kn_cpf_term_eval(void* self, const double* v, double* E, double* r, kn_nl_triplets* T, kn_nl_triplets* S,
                           kn_error* err) {
  (void)E, (void)err;
  const kn_cpf_term* t = self;
  const double dt2 = t->dt * t->dt;
  for (int i = 0; i < t->n; i++) {
    const kn_cpf_term_pair* p = &t->pairs[i];
    double F[12], dF[144], stiff = 0, Sfr[9];
    memset(Sfr, 0, sizeof Sfr);
    pair_force(t, i, v, F, T ? dF : NULL, &stiff, Sfr);
    if (stiff == 0 && !(t->lag_lambda && p->lam > 0)) continue; /* not penetrating anywhere on the path */
    for (int j = 0; j < 4; j++) kn_nl_point_add_force(t->points, p->pt[j], -t->dt, F + 3 * j, r);
    if (T) /* dr_u/dv = -dt J_u^T dF_u/dx1_w dt J_w */
      for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
          double K[9];
          for (int x = 0; x < 3; x++)
            for (int y = 0; y < 3; y++) K[3 * x + y] = -dt2 * dF[12 * (3 * a + x) + 3 * b + y];
          kn_nl_points_add_block(t->points, p->pt[a], 1, p->pt[b], 1, K, T);
        }
    if (S) { /* PSD part: dt^2 k stiff g g^T, g_j = sign_j w_j n at the step's end (the 1D stiffness) */
      double x0[12], x1[12], f[4], m[9], n[3];
      stencil_at(t, i, v, x0, x1);
      kn_cpf_stencil st = {x0, x1, p->edge_edge};
      kn_cpf_cubic(&st, f, m);
      for (int c = 0; c < 3; c++) n[c] = m[c] + m[3 + c] + m[6 + c];
      double len = kn_vec3_norm(n);
      if (!(len > 0)) continue;
      const double* sg = p->edge_edge ? sgn_ee : sgn_vf;
      const double *w = p->pair.w, *wf = t->anchored ? p->anchor : w; /* the friction's weights */
      const double kp = pair_k(t, p);
      for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
          double ww = dt2 * sg[a] * w[a] * sg[b] * w[b], c = ww * kp * stiff / (len * len), K[9];
          double wwf = dt2 * sg[a] * wf[a] * sg[b] * wf[b];
          for (int x = 0; x < 3; x++)
            for (int y = 0; y < 3; y++) K[3 * x + y] = c * n[x] * n[y] + wwf * Sfr[3 * x + y];
          kn_nl_points_add_block(t->points, p->pt[a], 1, p->pt[b], 1, K, S);
        }
    }
  }
  return KN_OK;
}
