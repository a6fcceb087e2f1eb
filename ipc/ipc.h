/* knead/ipc: Incremental Potential Contact (../shared/papers/incremental-potential-contact.md): the
 * barrier, its stiffness and the smoothed friction functions the IPC backend is built from. The
 * pair distances and CCD it evaluates them on are contact/'s (pair_distance.c, pair_ccd.c). */
#ifndef KNEAD_IPC_H
#define KNEAD_IPC_H

#include "../common/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The C2-clamped log barrier (digest §3.2) b(d) = -(d - dh)^2 ln(d / dh) for 0 < d < dh, 0 from dh
 * on (returned), with b' (*db) and b'' (*d2b) when non-NULL; +inf and its limits for d <= 0. The
 * backend evaluates it on squared distances, b~(s) = b(s, sh) with s = d^2, sh = dh^2 (§3.3). */
double kn_ipc_barrier(double d, double dh, double* db, double* d2b);

/* (characteristic length l (the bounding-box diagonal), dh, average nodal mass m) => kappa_min =
 * 1e11 m / (4 s0 b~''(s0)) with s0 = (1e-8 l)^2, and kappa_max = 100 kappa_min (§3.5a) */
void kn_ipc_kappa_bounds(double l, double dh, double m, double* kappa_min, double* kappa_max);
/* (barrier gradient g_b with kappa = 1 and the potential's gradient g_E, n entries, Dirichlet rows
 * zeroed) => kappa = clamp(-g_b.g_E / |g_b|^2, kappa_min, kappa_max); kappa_min when g_b = 0 or the
 * balance is not positive (§3.5b) */
double kn_ipc_kappa_initial(const double* g_b, const double* g_E, int n, double kappa_min, double kappa_max);

/* The C1 smoothed friction magnitude (§5.2) with eps = h eps_v: f1(y) = 1 - (1 - y / eps)^2 below
 * eps, 1 above (returned); f1' (*df1) and f1(y) / y (*f1_over_y, finite at 0: 2 / eps) when
 * non-NULL. Its potential f0 (f0' = f1, f0(eps) = eps). */
double kn_ipc_friction_f1(double y, double eps, double* df1, double* f1_over_y);
double kn_ipc_friction_f0(double y, double eps);

/* The lagged friction of one pair (§5.4-5.5). Its tangent basis T (12 x 2, row-major over the
 * stencil's coordinates): T = Gamma^T P, Gamma mapping stencil displacements to the relative
 * displacement of the two closest points and P an orthonormal basis of the tangent plane, both at
 * the lagged state x (12) of the pair of the given distance case (point-triangle stencils (p, t0,
 * t1, t2) with a point-triangle case, edge-edge stencils (a0, a1, b0, b1) with an edge-edge one;
 * edge_edge says which). */
void kn_ipc_tangent_basis(const double x[12], int edge_edge, int kind, const int v[4], double T[24]);
/* (u = T^T (x - x^t), 2; chi = mu h^2 lambda; eps = h eps_v) => the friction potential chi f0(|u|)
 * (returned), its gradient in u (g, 2) and its Hessian in u (H, 2 x 2, PSD-projected) */
double kn_ipc_friction_local(const double u[2], double chi, double eps, double g[2], double H[4]);

#ifdef __cplusplus
}
#endif
#endif
