/* knead/penalty: the penalty contact formulations (issue 19). Built so far: the continuous penalty
 * force of one vertex-face or edge-edge pair over a step (Tang et al.;
 * ../shared/papers/continuous-penalty-forces.md §3-4): the pair's CCD cubic, its first contact and
 * penetrated side, the penetration intervals, and the average force, integrated in closed form
 * (3-point Gauss-Legendre, exact for the degree-5 integrand), distributed to the four vertices.
 * And the friction relaxation of Ding & Schroeder against a level set or plane
 * (../shared/papers/penalty-coulomb-friction.md §3.1-3.4, §3.7.1): a particle Z tied by a
 * zero-rest-length spring to its anchor on the surface, the anchor moved only as far as the
 * friction cone requires. No backend uses them yet: `contact.backend: penalty` is still refused. */
#ifndef KNEAD_PENALTY_H
#define KNEAD_PENALTY_H

#include "../common/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A pair's stencil: vertex-face (p, a, b, c) or edge-edge (a, b, c, d), start positions x0 and end
 * positions x1 (12 doubles each), moving linearly: x(s) = x0 + s (x1 - x0), s in [0, 1]. */
typedef struct {
  const double *x0, *x1;
  int edge_edge;
} kn_cpf_stencil;

/* the coplanarity cubic f(s) = m(s) . r(s) (f[4], power form) and the unnormalized normal m(s) =
 * m[0..2] + s m[3..5] + s^2 m[6..8] (§3.2, §3.3) */
void kn_cpf_cubic(const kn_cpf_stencil* st, double f[4], double m[9]);
/* the roots of f in [0, 1], ascending (returns how many, <= 3; tangent roots included once) */
int kn_cpf_roots(const double f[4], double roots[3]);

/* What a pair keeps from step to step: the frozen weights of its traced points (vertex-face: 1 for
 * p, then the barycentric (w_a, w_b, w_c); edge-edge: (1 - alpha, alpha, 1 - beta, beta)) and the
 * penetrated side sigma = +-1 (the sign of f there). */
typedef struct {
  double w[4];
  int sigma;
} kn_cpf_pair;

/* (a new candidate) => 1 with the pair and its first contact *s_star when the features meet inside
 * (barycentric or segment parameters >= -eps), 0 otherwise (§3.2-3.5) */
int kn_cpf_first_contact(const kn_cpf_stencil* st, double eps, kn_cpf_pair* pair, double* s_star);
/* (pair, the time it starts being tracked this step: s_star for a new pair, 0 for a carried one,
 * stiffness k) => the average force on each vertex over the step (F, 12 doubles: -k/L_k^2 times the
 * integral of f m over the penetration intervals on the traced point, distributed by the weights,
 * §4.4, §4.6), returned: 1 when the pair still penetrates at s = 1 (keep it), 0 to release it */
int kn_cpf_force(const kn_cpf_stencil* st, const kn_cpf_pair* pair, double s_start, double k, double F[12]);

/* A signed distance phi (negative inside) with its gradient n (unit at the surface) and Hessian H
 * (9, may be requested NULL) at x. */
typedef struct {
  double (*phi)(void* ctx, const double x[3], double n[3], double H[9]);
  void* ctx;
} kn_levelset;

typedef enum { KN_RELAX_INACTIVE = 0, KN_RELAX_STATIC = 1, KN_RELAX_DYNAMIC = 2 } kn_relax_state;
/* (the anchor X on the surface, the particle Z, mu, k) => the relaxed anchor Y (static: Y = X;
 * dynamic: X slid toward Z's closest point W by the plane formula, then projected back on the
 * surface, §3.3-3.4), the spring force on the particle f = k (Y - Z) and df/dZ (9, row-major; with
 * the anchor's motion), when non-NULL. Inactive (phi(Z) > 0): Y = X, f = 0, df/dZ = 0. On a plane
 * the force is exactly on the cone when dynamic; on a curved level set approximately (§3.4). */
kn_relax_state kn_penalty_relax(const kn_levelset* ls, const double X[3], const double Z[3], double mu, double k,
                                double Y[3], double f[3], double dfdZ[9]);

#ifdef __cplusplus
}
#endif
#endif
