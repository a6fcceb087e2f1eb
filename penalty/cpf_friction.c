/* Coulomb friction on a continuous penalty pair (continuous-penalty-forces.md §4.10: Coulomb-style,
 * orthogonal to the contact force, one mu; the paper gives no formula, this one is ours). At the
 * pair's traced point, on the step's relative velocity u = sum_j sign_j w_j (x1_j - x0_j) / dt
 * (vertex minus face point, or edge minus edge point: the frozen weights), its part u_t in the
 * plane of the pair's normal n0 at the step's start (m(0) of the coplanarity cubic, fixed during
 * the solve), the smoothed Coulomb force of the ipc backend's friction (IPC's f1 mollifier):
 *   f = -mu lambda f1(|u_t|) u_t / |u_t|,  f1(s) = 2 s / eps - s^2 / eps^2 below eps, 1 above,
 * with lambda = |F_+ . n0| the pair's own normal force at this iterate (F_+ the force on the + side
 * of the stencil: exact, not lagged, so |f| <= mu lambda holds at the solution on every pair), and
 * distributed to the four points by sign_j w_j like the normal force. Not lagged: the solver's
 * lagged passes minimize an energy, and the pairs' normal force has none (not a gradient). A sticking pair creeps at
 * |u_t| < eps (f1^-1(|f_t| / mu lambda) eps): the creep bound. */
#include <math.h>
#include <string.h>

#include "penalty/penalty.h"

static const double sgn_vf[4] = {1, -1, -1, -1}, sgn_ee[4] = {1, 1, -1, -1};

// the start normal n0 (0: degenerate) and F_+ . n0
static int start_normal(const kn_cpf_stencil* st, const double F[12], double n[3], double* Fn) {
  const double* sg = st->edge_edge ? sgn_ee : sgn_vf;
  double f[4], m[9], Fp[3] = {0, 0, 0};
  kn_cpf_cubic(st, f, m);
  double len = kn_vec3_norm(m);
  if (!(len > 0)) return 0;
  for (int c = 0; c < 3; c++) n[c] = m[c] / len;
  for (int j = 0; j < 4; j++)
    if (sg[j] > 0)
      for (int c = 0; c < 3; c++) Fp[c] += F[3 * j + c];
  *Fn = kn_vec3_dot(Fp, n);
  return 1;
}

void kn_cpf_friction(const kn_cpf_stencil* st, const kn_cpf_pair* pair, double mu, double eps, double dt, double lam_lag,
                     double F[12], double dF[144], double Sfr[9], double ft[3], double* fn) {
  const double* sg = st->edge_edge ? sgn_ee : sgn_vf;
  const double* w = pair->w;
  double n[3], Fn;
  if (ft) ft[0] = ft[1] = ft[2] = 0;
  if (fn) *fn = 0;
  if (Sfr) memset(Sfr, 0, 9 * sizeof *Sfr);
  if (!(mu > 0) || !(eps > 0) || !start_normal(st, F, n, &Fn)) return;
  double side = Fn >= 0 ? 1 : -1, lam = lam_lag >= 0 ? lam_lag : fabs(Fn);
  if (!(lam > 0)) return;
  double u[3] = {0, 0, 0}, ut[3], uh[3] = {0, 0, 0};
  for (int j = 0; j < 4; j++)
    for (int c = 0; c < 3; c++) u[c] += sg[j] * w[j] * (st->x1[3 * j + c] - st->x0[3 * j + c]) / dt;
  double un = kn_vec3_dot(u, n);
  for (int c = 0; c < 3; c++) ut[c] = u[c] - un * n[c];
  double s = kn_vec3_norm(ut);
  if (s > 0)
    for (int c = 0; c < 3; c++) uh[c] = ut[c] / s;
  /* g = f1(s) / s and h = g'(s) s: d(g u_t)/du = g P + h uh uh^T (PSD: g + h >= 0) */
  double g = s < eps ? 2 / eps - s / (eps * eps) : 1 / s, h = s < eps ? -s / (eps * eps) : -1 / s, D[9];
  for (int x = 0; x < 3; x++)
    for (int y = 0; y < 3; y++) D[3 * x + y] = g * ((x == y) - n[x] * n[y]) + h * uh[x] * uh[y];
  double fr[3];
  for (int c = 0; c < 3; c++) fr[c] = -mu * lam * g * ut[c];
  if (dF) { /* dfr/dx1 (dlam = 0 when lagged) = -mu (g u_t dlam/dx1 + lam D du/dx1), du/dx1_b = sign_b w_b / dt */
    double dlam[12] = {0}, dfr[36];
    for (int a = 0; a < 4 && lam_lag < 0; a++)
      if (sg[a] > 0)
        for (int x = 0; x < 3; x++)
          for (int col = 0; col < 12; col++) dlam[col] += side * n[x] * dF[12 * (3 * a + x) + col];
    for (int x = 0; x < 3; x++)
      for (int b = 0; b < 4; b++)
        for (int y = 0; y < 3; y++)
          dfr[12 * x + 3 * b + y] = -mu * (g * ut[x] * dlam[3 * b + y] + lam * D[3 * x + y] * sg[b] * w[b] / dt);
    for (int a = 0; a < 4; a++)
      for (int x = 0; x < 3; x++)
        for (int col = 0; col < 12; col++) dF[12 * (3 * a + x) + col] += sg[a] * w[a] * dfr[12 * x + col];
  }
  for (int a = 0; a < 4; a++)
    for (int c = 0; c < 3; c++) F[3 * a + c] += sg[a] * w[a] * fr[c];
  if (Sfr)
    for (int i = 0; i < 9; i++) Sfr[i] = mu * lam * D[i] / dt;
  if (ft) memcpy(ft, fr, sizeof fr);
  if (fn) *fn = lam;
}
