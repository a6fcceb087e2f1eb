/* knead/smooth: implicit smoothed friction with soft constraints (Larionov et al.;
 * ../shared/papers/implicit-smooth-friction.md): the scalar laws its backend is built from, the
 * cubic contact penalty, the smoothed and Stribeck friction magnitude and the volume-change work,
 * and the contact term of the `smooth_friction` backend (contact.c) in the shared nonlinear step
 * (nonlinear/nonlinear.h). */
#ifndef KNEAD_SMOOTH_H
#define KNEAD_SMOOTH_H

#include "../common/common.h"
#include "../nonlinear/nonlinear.h"

#ifdef __cplusplus
extern "C" {
#endif

/* the cubic penalty on a gap d with thickness delta and stiffness kappa (digest §3.3): b(d) =
 * -(kappa / delta) (d - delta)^3 below delta, 0 above (returned); b' and b'' when non-NULL. The
 * normal force is lambda = -b'(d) = 3 kappa / delta (delta - d)^2. */
double kn_smooth_penalty(double d, double delta, double kappa, double* db, double* d2b);
/* after a converged step whose deepest gap is d_min < 0: the factor kappa is multiplied by,
 * b'(d_min) / b'(delta / 2) = 4 (delta - d_min)^2 / delta^2 (> 4; §3.9) */
double kn_smooth_kappa_factor(double d_min, double delta);

/* the C1 pre-sliding transition s(v; eps) = 2 v / eps - v^2 / eps^2 below eps, 1 above (§3.4):
 * returned, with s' and s / v (finite at 0: 2 / eps) when non-NULL */
double kn_smooth_transition(double v, double eps, double* ds, double* s_over_v);
/* the Stribeck bump g(x) = 2 x^3 - 3 x^2 + 1 below 1, 0 above, with g' */
double kn_smooth_stribeck(double x, double* dg);

/* the friction law of one contact: static and dynamic coefficients, Stribeck speed v_s, viscous
 * coefficient mu_v, the transition's eps */
typedef struct {
  double mu_s, mu_d, v_s, mu_v, eps;
} kn_smooth_friction;
/* c(v, lambda) = (mu_d + (mu_s - mu_d) g(v / v_s)) s(v) lambda + mu_v v, the friction force's
 * magnitude at slip speed v (returned); dc/dv (*dc), dc/dlambda (*dc_dlambda) and rho = c / v
 * (*rho, finite at v = 0: 2 mu_s lambda / eps + mu_v) when non-NULL. Without Stribeck (mu_s = mu_d)
 * set v_s to any positive value. */
double kn_smooth_friction_magnitude(const kn_smooth_friction* f, double v, double lambda, double* dc,
                                    double* dc_dlambda, double* rho);

/* the work of changing a zone's volume from V0 to V (§3.5): ideal gas at rest pressure P0,
 * constant compressibility kappa_v, and the quadratic model the backend uses, W2 = (V - V0)^2 /
 * (2 V0 kappa_v), with W2' and W2'' when non-NULL */
double kn_smooth_work_ideal_gas(double V, double V0, double P0);
double kn_smooth_work_constant_compressibility(double V, double V0, double kappa_v);
double kn_smooth_work_quadratic(double V, double V0, double kappa_v, double* dW, double* d2W);

/* (closed, outward-wound triangle surface: x (3 per vertex), tri (3 per triangle)) => its volume
 * (returned) and, when non-NULL, dV/dx (3 nvert, zeroed first) */
double kn_smooth_surface_volume(const double* x, int nvert, const int* tri, int ntri, double* dV);

/*---- the contact term (contact.c) ----*/

/* One contact of the step: material points a and b (kn_nl_points; -1: fixed in the world), the
 * unit normal n from A into B and the gap phi0 at the step start, the Coulomb coefficient mu
 * (dynamic; static = mu * static_ratio with Stribeck), and for the lagged variant the normal force
 * lambda0 = -b'(phi0) and the tangent projector at the step start. Over the step (backward Euler,
 * x(v) = x0 + dt J v) the gap is d(v) = phi0 + dt n . w with w = J_b v - J_a v: exact for the
 * points' affine maps, the normal kept from detection. Under the trapezoidal rule (kn_smooth_term's
 * dt0 > 0: the points' maps are x(v) = x_n + dt0 v0 + dt J v, coupling.h's theta scheme) it is
 * d(v) = phi0 + dt0 n . w0 + dt n . w, with w0 = v0_b - v0_a the relative velocity at the start,
 * and the contact's start force f0 = b'(phi0) n + rho(|P w0|, lambda(phi0)) P w0 (minus the force on
 * B; kn_smooth_term_start) enters the residual as dt0 J_rel^T f0: the whole force averaged
 * (digest §3.6). */
typedef struct {
  int a, b;
  double n[3], phi0, mu, lambda0;
  double w0[3], f0[3];
} kn_smooth_contact;

/* A closed FEM surface's soft volume constraint (§3.5): W = coef / 2 (V - V0)^2 with coef =
 * P_atm / (V0 kappa_v) [Pa / m^3], V the volume its outward triangles enclose at the vertices'
 * end-of-step positions x(v) = x0 + dt J v. Its Hessian dt^2 coef (grad V grad V^T + (V - V0)
 * hess V) keeps the dense rank-one part only for surfaces of at most KN_SMOOTH_RANK_ONE_MAX vertices
 * (the paper's "exact J"; above, its "inexact J"), and the indefinite (V - V0) hess V only where the
 * term is not a potential (lagged, the Hessian must be PSD). */
typedef struct {
  int nvert, ntri;
  const int* point;      /* nvert: each vertex's material point (kn_nl_points) */
  const int* tri;        /* 3 ntri local vertex indices, outward */
  double V0, coef;
  double *x, *dV;        /* 3 nvert scratch each */
  double* g0;            /* 3 nvert: dt0 W'(V_n) dV_n/dx, the start half (trapezoidal rule; NULL: none) */
} kn_smooth_volume;
#define KN_SMOOTH_RANK_ONE_MAX 200

typedef struct {
  double dt;             /* the end-of-step positions' factor: the step (backward Euler), half of it (TR) */
  double dt0;            /* the start force's factor: 0 (backward Euler), half the step (trapezoidal rule) */
  double delta, kappa;   /* thickness [m], stiffness [N/m] of the cubic penalty */
  double eps;            /* friction smoothing speed [m/s] */
  double static_ratio;   /* mu_s / mu_d (1: no Stribeck) */
  double stribeck_speed; /* v_s [m/s] (used when static_ratio != 1) */
  double viscous;        /* mu_v [N s/m] */
  int lagged;            /* friction's lambda and basis frozen at the step start (IPC's; §3.11) */
  const kn_nl_points* points;
  const kn_smooth_contact* c;
  int n;
  double* lambda_ref;    /* n, or NULL (no lagged passes): the normal forces of kn_smooth_term_lag */
  int use_ref;           /* set by kn_smooth_term_lag: friction lagged at lambda_ref, a potential */
  kn_smooth_volume* volumes;
  int nvolumes;
} kn_smooth_term;

/* kn_nl_term's eval (self: a kn_smooth_term): the volume constraints' energy, gradient and Hessian,
 * the penalty's energy b(d) and, lagged, the friction
 * potential dt lambda0 mu F0(|v_t|) into *E (implicit friction has none: E untouched); r +=
 * J_rel^T (dt b'(d) n + dt rho v_t); T += its Jacobian, with the normal-force coupling
 * dt v_t drho/dlambda lambda'(d) dt n^T of implicit friction (not symmetric; digest §3.4); S += its
 * PSD part without that coupling (the iterative solver's preconditioner). */
kn_status kn_smooth_term_eval(void* self, const double* v, double* E, double* r, kn_nl_triplets* T, kn_nl_triplets* S,
                              kn_error* err);
/* kn_nl_term's lag: on, lambda_ref = lambda(d(v)) and the term becomes the potential of friction
 * lagged there (the dynamic coefficient alone), for the solver's lagged passes; off, implicit again */
void kn_smooth_term_lag(void* self, const double* v, int on);
/* contact i at v => the force on B [N] (world; under the trapezoidal rule the step's mean, the
 * average of the start and end forces) and the gap d(v) at the end of the step (returned) */
double kn_smooth_term_force(const kn_smooth_term* t, int i, const double* v, double f[3]);
/* dt0 > 0 (the trapezoidal rule): each contact's f0 from phi0 and w0 (set by the caller) at the
 * current kappa, into cs (the term's contacts t->c, n of them), and each volume zone's g0 at the start
 * positions x_n = x0 - dt0 v0 of its points; again after kappa changes (digest §6 pitfall 6) */
void kn_smooth_term_start(kn_smooth_term* t, kn_smooth_contact* cs);

#ifdef __cplusplus
}
#endif
#endif
