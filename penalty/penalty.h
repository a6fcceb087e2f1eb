/* knead/penalty: the penalty contact formulations (issue 19). Built so far: the continuous penalty
 * force of one vertex-face or edge-edge pair over a step (Tang et al.;
 * ../shared/papers/continuous-penalty-forces.md §3-4): the pair's CCD cubic, its first contact and
 * penetrated side, the penetration intervals, and the average force, integrated in closed form
 * (3-point Gauss-Legendre, exact for the degree-5 integrand), distributed to the four vertices.
 * No backend uses it yet: `contact.backend: penalty` is still refused. */
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

#ifdef __cplusplus
}
#endif
#endif
