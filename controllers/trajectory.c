/* Joint trajectories through knots: piecewise linear and clamped C2 cubic splines. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/controllers.h"

/*---- clamped cubic spline ----*/

/* Second derivatives M_k of the C2 cubic through (t_k, y_k) with zero slope at both ends, one
 * joint at a time (stride n in y and M). Spline in second-derivative form (de Boor, "A Practical
 * Guide to Splines", ch. IV; Numerical Recipes eq. 3.3.7):
 *   interior:  h_{k-1} M_{k-1} + 2 (h_{k-1} + h_k) M_k + h_k M_{k+1}
 *                = 6 [ (y_{k+1} - y_k)/h_k - (y_k - y_{k-1})/h_{k-1} ]
 *   s'(t_0) = 0:      2 h_0 M_0 + h_0 M_1 = 6 (y_1 - y_0)/h_0
 *   s'(t_{N-1}) = 0:  h_{N-2} M_{N-2} + 2 h_{N-2} M_{N-1} = -6 (y_{N-1} - y_{N-2})/h_{N-2}
 * The matrix is strictly diagonally dominant, so the Thomas algorithm needs no pivoting.
 * cp, dp: nknot scratch. */
static void spline_second_derivatives(int nknot, const double* t, const double* y, int n, double* M, double* cp,
                                      double* dp) {
  int N = nknot;
  /* forward sweep: row k is a_k M_{k-1} + b_k M_k + c_k M_{k+1} = r_k */
  for (int k = 0; k < N; ++k) {
    double a, b, c, r;
    if (k == 0) {
      double h = t[1] - t[0];
      a = 0.0;
      b = 2.0 * h;
      c = h;
      r = 6.0 * (y[1 * n] - y[0]) / h;
    } else if (k == N - 1) {
      double h = t[N - 1] - t[N - 2];
      a = h;
      b = 2.0 * h;
      c = 0.0;
      r = -6.0 * (y[(N - 1) * n] - y[(N - 2) * n]) / h;
    } else {
      double h0 = t[k] - t[k - 1], h1 = t[k + 1] - t[k];
      a = h0;
      b = 2.0 * (h0 + h1);
      c = h1;
      r = 6.0 * ((y[(k + 1) * n] - y[k * n]) / h1 - (y[k * n] - y[(k - 1) * n]) / h0);
    }
    double denom = (k == 0) ? b : b - a * cp[k - 1];
    cp[k] = c / denom;
    dp[k] = (k == 0) ? r / denom : (r - a * dp[k - 1]) / denom;
  }
  /* back substitution */
  M[(N - 1) * n] = dp[N - 1];
  for (int k = N - 2; k >= 0; --k) M[k * n] = dp[k] - cp[k] * M[(k + 1) * n];
}

/*---- creation ----*/

// (n, nknot, t, q, names, interp) => *out owning copies, spline solved; err on bad input
kn_status kn_traj_create(int n, int nknot, const double* t, const double* q, const char* const* joint_names,
                         kn_traj_interp interp, kn_trajectory** out, kn_error* err) {
  if (n < 1) return kn_fail(err, KN_ERR_INVALID, "trajectory: expected at least 1 joint, got %d", n);
  if (nknot < 1) return kn_fail(err, KN_ERR_INVALID, "trajectory: expected at least 1 knot, got %d", nknot);
  if (interp != KN_TRAJ_LINEAR && interp != KN_TRAJ_CUBIC)
    return kn_fail(err, KN_ERR_INVALID, "trajectory: unknown interpolation %d (expected linear or cubic)",
                   (int)interp);
  if (!t || !q) return kn_fail(err, KN_ERR_INVALID, "trajectory: knot arrays t and q are required");
  for (int k = 0; k < nknot; ++k) {
    if (!isfinite(t[k])) return kn_fail(err, KN_ERR_INVALID, "trajectory: knot %d: time is not finite", k);
    if (k > 0 && !(t[k] > t[k - 1]))
      return kn_fail(err, KN_ERR_INVALID,
                     "trajectory: knot %d: time %g is not greater than the previous knot's %g "
                     "(expected strictly increasing times)",
                     k, t[k], t[k - 1]);
    for (int j = 0; j < n; ++j)
      if (!isfinite(q[k * n + j]))
        return kn_fail(err, KN_ERR_INVALID, "trajectory: knot %d, joint %d%s%s: position is not finite", k, j,
                       joint_names ? " " : "", joint_names && joint_names[j] ? joint_names[j] : "");
  }

  kn_trajectory* tr = kn_calloc(1, sizeof *tr);
  if (!tr) return kn_fail(err, KN_ERR_NOMEM, "trajectory: out of memory");
  tr->n = n;
  tr->nknot = nknot;
  tr->interp = interp;
  tr->t = kn_calloc((size_t)nknot, sizeof(double));
  tr->q = kn_calloc((size_t)nknot * (size_t)n, sizeof(double));
  int ok = tr->t && tr->q;
  if (ok && interp == KN_TRAJ_CUBIC) {
    tr->qdd = kn_calloc((size_t)nknot * (size_t)n, sizeof(double));
    ok = tr->qdd != NULL;
  }
  if (ok && joint_names) {
    tr->joint_names = kn_calloc((size_t)n, sizeof(char*));
    ok = tr->joint_names != NULL;
    for (int j = 0; ok && j < n; ++j) {
      tr->joint_names[j] = kn_strdup(joint_names[j] ? joint_names[j] : "");
      ok = tr->joint_names[j] != NULL;
    }
  }
  if (!ok) {
    kn_traj_free(tr);
    return kn_fail(err, KN_ERR_NOMEM, "trajectory: out of memory (%d knots x %d joints)", nknot, n);
  }
  memcpy(tr->t, t, (size_t)nknot * sizeof(double));
  memcpy(tr->q, q, (size_t)nknot * (size_t)n * sizeof(double));

  if (interp == KN_TRAJ_CUBIC && nknot >= 2) {
    double* scratch = kn_calloc(2 * (size_t)nknot, sizeof(double));
    if (!scratch) {
      kn_traj_free(tr);
      return kn_fail(err, KN_ERR_NOMEM, "trajectory: out of memory");
    }
    for (int j = 0; j < n; ++j)
      spline_second_derivatives(nknot, tr->t, tr->q + j, n, tr->qdd + j, scratch, scratch + nknot);
    free(scratch);
  }
  *out = tr;
  return KN_OK;
}

void kn_traj_free(kn_trajectory* tr) {
  if (!tr) return;
  if (tr->joint_names)
    for (int j = 0; j < tr->n; ++j) free(tr->joint_names[j]);
  free(tr->joint_names);
  free(tr->t);
  free(tr->q);
  free(tr->qdd);
  free(tr);
}

double kn_traj_start_time(const kn_trajectory* tr) { return tr->t[0]; }
double kn_traj_end_time(const kn_trajectory* tr) { return tr->t[tr->nknot - 1]; }

/*---- evaluation ----*/

/* index k of the segment [t_k, t_{k+1}) holding t, for t_0 <= t < t_{N-1} (binary search) */
static int find_segment(const kn_trajectory* tr, double t) {
  int lo = 0, hi = tr->nknot - 1; /* invariant: t_lo <= t < t_hi */
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    if (tr->t[mid] <= t)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

static void hold_knot(const kn_trajectory* tr, int k, double* q, double* v, double* a) {
  for (int j = 0; j < tr->n; ++j) {
    if (q) q[j] = tr->q[k * tr->n + j];
    if (v) v[j] = 0.0;
    if (a) a[j] = 0.0;
  }
}

// (t) => q, v, a of all joints; holds the end knots outside [t_0, t_end)
void kn_traj_eval(const kn_trajectory* tr, double t, double* q, double* v, double* a) {
  int N = tr->nknot, n = tr->n;
  if (N == 1 || t < tr->t[0]) {
    hold_knot(tr, 0, q, v, a);
    return;
  }
  if (t >= tr->t[N - 1]) {
    hold_knot(tr, N - 1, q, v, a);
    return;
  }
  int k = find_segment(tr, t);
  double h = tr->t[k + 1] - tr->t[k];
  const double* y0 = tr->q + k * n;
  const double* y1 = y0 + n;
  if (tr->interp == KN_TRAJ_LINEAR) {
    double B = (t - tr->t[k]) / h;
    for (int j = 0; j < n; ++j) {
      if (q) q[j] = y0[j] + B * (y1[j] - y0[j]);
      if (v) v[j] = (y1[j] - y0[j]) / h;
      if (a) a[j] = 0.0;
    }
    return;
  }
  /* cubic in second-derivative form, A = (t_{k+1} - t)/h, B = 1 - A (Numerical Recipes 3.3.3):
   *   s   = A y_k + B y_{k+1} + ((A^3 - A) M_k + (B^3 - B) M_{k+1}) h^2/6
   *   s'  = (y_{k+1} - y_k)/h - (3A^2 - 1) h M_k/6 + (3B^2 - 1) h M_{k+1}/6
   *   s'' = A M_k + B M_{k+1} */
  const double* M0 = tr->qdd + k * n;
  const double* M1 = M0 + n;
  double A = (tr->t[k + 1] - t) / h, B = 1.0 - A;
  for (int j = 0; j < n; ++j) {
    if (q) q[j] = A * y0[j] + B * y1[j] + ((A * A * A - A) * M0[j] + (B * B * B - B) * M1[j]) * h * h / 6.0;
    if (v) v[j] = (y1[j] - y0[j]) / h - (3.0 * A * A - 1.0) * h * M0[j] / 6.0 + (3.0 * B * B - 1.0) * h * M1[j] / 6.0;
    if (a) a[j] = A * M0[j] + B * M1[j];
  }
}
