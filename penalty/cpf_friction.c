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

/* the outputs zeroed, then (mu and the scale c = eps or k both > 0) the normal n and side of the
 * pair's force at the step start (start_normal) and its normal force lam (lam_lag, or |Fn| when
 * lam_lag < 0): 1 when there is friction to add, else 0 */
static int friction_start(const kn_cpf_stencil* st, double F[12], double mu, double c, double lam_lag, double Sfr[9],
                          double ft[3], double* fn, double n[3], double* side, double* lam) {
  double Fn;
  if (ft) ft[0] = ft[1] = ft[2] = 0;
  if (fn) *fn = 0;
  if (Sfr) memset(Sfr, 0, 9 * sizeof *Sfr);
  if (!(mu > 0) || !(c > 0) || !start_normal(st, F, n, &Fn)) return 0;
  *side = Fn >= 0 ? 1 : -1, *lam = lam_lag >= 0 ? lam_lag : fabs(Fn);
  return *lam > 0;
}

void kn_cpf_friction(const kn_cpf_stencil* st, const kn_cpf_pair* pair, double mu, double eps, double dt, double lam_lag,
                     double F[12], double dF[144], double Sfr[9], double ft[3], double* fn) {
  const double* sg = st->edge_edge ? sgn_ee : sgn_vf;
  const double* w = pair->w;
  double n[3], side, lam;
  if (!friction_start(st, F, mu, eps, lam_lag, Sfr, ft, fn, n, &side, &lam)) return;
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

/* The anchored (stiction) friction of a pair (penalty-coulomb-friction.md's springs on a pair): a
 * zero-rest-length tangential spring of stiffness k between the pair's two anchor points (weights
 * beta, like w: the vertex and a point of the face, or a point of each edge), r = sum_j sign_j
 * beta_j x1_j, r_t = P r (P = I - n0 n0^T), f = -k r_t while rho = k |r_t| / (mu lambda) <= 1 - BAND
 * (stuck: no creep), else -mu lambda g(rho) r_t / |r_t|, distributed by sign_j beta_j. g(rho) = rho
 * up to 1 - BAND, 1 (on the cone) from 1 + BAND, and the quadratic rho - (rho - 1 + BAND)^2 / (4 BAND)
 * between: C1, so that Newton's residual has no kink where a spring leaves the cone. With the hard
 * switch (g = min(rho, 1)) the root finding stalled where the block of penalty-coulomb-friction.md
 * §6.1 stops at dt 1e-2 (step 227): a corner's spring exactly at rho = 1 (its anchor relaxed onto the
 * cone at the last step's end), the stuck side's Jacobian, and the Newton step leading onto the cone
 * side, where the scaled residual grew as 33 alpha: no decrease for any alpha down to 1e-12.
 * |f| <= mu lambda still, and below 1 - BAND (a resting block's tan(theta) / mu, a held box's 0.5)
 * nothing changes. The relax puts a sliding spring's anchor at rho = 1 + BAND, where |f| = mu lambda. */
#define BAND KN_CPF_CONE_BAND
static void anchor_gap(const kn_cpf_stencil* st, const double beta[4], const double n[3], double rt[3]) {
  const double* sg = st->edge_edge ? sgn_ee : sgn_vf;
  double r[3] = {0, 0, 0};
  for (int j = 0; j < 4; j++)
    for (int c = 0; c < 3; c++) r[c] += sg[j] * beta[j] * st->x1[3 * j + c];
  double rn = kn_vec3_dot(r, n);
  for (int c = 0; c < 3; c++) rt[c] = r[c] - rn * n[c];
}

void kn_cpf_anchor_friction(const kn_cpf_stencil* st, const double beta[4], double mu, double k, double lam_lag,
                            double F[12], double dF[144], double Sfr[9], double ft[3], double* fn) {
  const double* sg = st->edge_edge ? sgn_ee : sgn_vf;
  double n[3], side, lam;
  if (!friction_start(st, F, mu, k, lam_lag, Sfr, ft, fn, n, &side, &lam)) return;
  double rt[3], rh[3] = {0, 0, 0};
  anchor_gap(st, beta, n, rt);
  double s = kn_vec3_norm(rt), rho = k * s / (mu * lam), stuck = rho <= 1 - BAND;
  if (s > 0)
    for (int c = 0; c < 3; c++) rh[c] = rt[c] / s;
  /* g and g' (above); f = -c rt with c = k (stuck) or mu lam g / s; d(c rt)/dr = c P (stuck) or
   * c (P - rh rh^T) + k g' rh rh^T; df/dlam = -mu rh (g - rho g') */
  double g = rho >= 1 + BAND ? 1 : rho - (rho - 1 + BAND) * (rho - 1 + BAND) / (4 * BAND),
         g1 = rho >= 1 + BAND ? 0 : 1 - (rho - 1 + BAND) / (2 * BAND);
  if (stuck) g = rho, g1 = 1;
  double cf = stuck ? k : mu * lam * g / s, D[9], fr[3];
  for (int x = 0; x < 3; x++)
    for (int y = 0; y < 3; y++)
      D[3 * x + y] = cf * ((x == y) - n[x] * n[y]) + (stuck ? 0 : (k * g1 - cf) * rh[x] * rh[y]);
  for (int c = 0; c < 3; c++) fr[c] = -cf * rt[c];
  if (dF) { /* dfr/dx1_b = -D sign_b beta_b, and off the stuck zone -mu (g - rho g') rh dlam/dx1 (exact lambda) */
    double dlam[12] = {0}, dfr[36];
    for (int a = 0; a < 4 && lam_lag < 0 && !stuck; a++)
      if (sg[a] > 0)
        for (int x = 0; x < 3; x++)
          for (int col = 0; col < 12; col++) dlam[col] += side * n[x] * dF[12 * (3 * a + x) + col];
    for (int x = 0; x < 3; x++)
      for (int b = 0; b < 4; b++)
        for (int y = 0; y < 3; y++)
          dfr[12 * x + 3 * b + y] =
              -D[3 * x + y] * sg[b] * beta[b] - (stuck ? 0 : mu * (g - rho * g1) * rh[x] * dlam[3 * b + y]);
    for (int a = 0; a < 4; a++)
      for (int x = 0; x < 3; x++)
        for (int col = 0; col < 12; col++) dF[12 * (3 * a + x) + col] += sg[a] * beta[a] * dfr[12 * x + col];
  }
  for (int a = 0; a < 4; a++)
    for (int c = 0; c < 3; c++) F[3 * a + c] += sg[a] * beta[a] * fr[c];
  if (Sfr) memcpy(Sfr, D, sizeof D);
  if (ft) memcpy(ft, fr, sizeof fr);
  if (fn) *fn = lam;
}

int kn_cpf_anchor_relax(const kn_cpf_stencil* st, double beta[4], double mu, double k, double lam) {
  double f[4], m[9], n[3], rt[3];
  kn_cpf_cubic(st, f, m);
  double len = kn_vec3_norm(m);
  if (!(len > 0) || !(k > 0)) return 0;
  for (int c = 0; c < 3; c++) n[c] = m[c] / len;
  anchor_gap(st, beta, n, rt);
  double s = kn_vec3_norm(rt), lim = mu > 0 && lam > 0 ? (1 + BAND) * mu * lam / k : 0;
  if (s <= lim) return 0;
  /* the anchors slide so that r_t shrinks by d = rt (1 - lim / s): dr = c1 t1 + c2 t2 = -d, t the
   * derivatives of r in the two anchor parameters (vertex-face: beta_b, beta_c with beta_a = 1 - the
   * others: -e1, -e2; edge-edge: alpha, beta: e1 = x_b - x_a, -e2 = -(x_d - x_c)) */
  const double* x = st->x1;
  double t1[3], t2[3], d[3];
  for (int c = 0; c < 3; c++) {
    if (st->edge_edge) t1[c] = x[3 + c] - x[c], t2[c] = -(x[9 + c] - x[6 + c]);
    else t1[c] = -(x[6 + c] - x[3 + c]), t2[c] = -(x[9 + c] - x[3 + c]);
    d[c] = -rt[c] * (1 - lim / s);
  }
  double g11 = kn_vec3_dot(t1, t1), g12 = kn_vec3_dot(t1, t2), g22 = kn_vec3_dot(t2, t2), det = g11 * g22 - g12 * g12;
  if (!(det > 1e-12 * g11 * g22)) return 0;
  double b1 = kn_vec3_dot(t1, d), b2 = kn_vec3_dot(t2, d), c1 = (g22 * b1 - g12 * b2) / det,
         c2 = (g11 * b2 - g12 * b1) / det;
  if (st->edge_edge) beta[0] -= c1, beta[1] += c1, beta[2] -= c2, beta[3] += c2;
  else beta[2] += c1, beta[3] += c2, beta[1] -= c1 + c2;
  return 1;
}
