/* The continuous penalty's proximity pass (continuous-penalty-forces.md §8 item 12): which face a
 * vertex with no pair has already passed through, found at the step's start positions. */
#include <math.h>
#include <string.h>

#include "contact/contact.h"
#include "sim/penalty_cpf.h"

#define INSIDE_EPS 1e-6 /* the projection's tolerance: CCD's inside test (kn_cpf_first_contact's eps) */

int kn_penalty_cpf_inside_face(const double* x, int n, const kn_cpf_key* keys, double band, double w[4],
                               double* depth) {
  int best = -1;
  double best_d2 = INFINITY, nearest_d2 = INFINITY, best_depth = 0, best_w[3] = {0, 0, 0};
  for (int i = 0; i < n; i++) {
    const int* v = keys[i].v;
    double s[12], e1[3], e2[3], r[3], nrm[3], bw[3];
    for (int j = 0; j < 4; j++) memcpy(s + 3 * j, x + 3 * (size_t)v[j], 3 * sizeof *s);
    double d2 = kn_dist_eval(s, kn_dist_point_triangle_case(s), NULL, NULL);
    nearest_d2 = fmin(nearest_d2, d2);
    for (int k = 0; k < 3; k++) e1[k] = s[6 + k] - s[3 + k], e2[k] = s[9 + k] - s[3 + k], r[k] = s[k] - s[3 + k];
    kn_vec3_cross(e1, e2, nrm);
    double len = kn_vec3_norm(nrm), h = len > 0 ? -kn_vec3_dot(r, nrm) / len : -1; /* > 0: behind */
    if (!(h >= 0 && h <= band)) continue;
    if (!kn_cpf_barycentric(s + 3, s + 6, s + 9, s, bw)) continue;
    if (bw[0] < -INSIDE_EPS || bw[1] < -INSIDE_EPS || bw[2] < -INSIDE_EPS) continue;
    if (d2 < best_d2) best_d2 = d2, best = i, best_depth = h, memcpy(best_w, bw, sizeof bw);
  }
  /* the inside face must be (one of) the nearest: a face no farther than the nearest candidate, up
   * to round-off (two coplanar triangles of one face share the closest point on their diagonal) */
  if (best < 0 || !(best_d2 <= nearest_d2 * (1 + 1e-9) + 1e-300)) return -1;
  w[0] = 1, w[1] = best_w[0], w[2] = best_w[1], w[3] = best_w[2];
  *depth = best_depth;
  return best;
}

double kn_penalty_cpf_band(const double* rest, int n, const int* used) {
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int i = 0; i < n; i++)
    for (int k = 0, v = used ? used[i] : i; k < 3; k++)
      lo[k] = fmin(lo[k], rest[3 * v + k]), hi[k] = fmax(hi[k], rest[3 * v + k]);
  double t = fmin(hi[0] - lo[0], fmin(hi[1] - lo[1], hi[2] - lo[2]));
  return isfinite(t) ? 0.5 * t : 0;
}
