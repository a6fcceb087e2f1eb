/* The separating axis of two parallel box edges (box_box, contact/narrow.c): for separated boxes
 * whose nearest features are two parallel edges the 15 axes of the separating-axis test only bound
 * the distance from below; the axis between the two edge lines is exact. */
#include <math.h>
#include <string.h>

#include "contact/collision_internal.h"

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* half extent of box b along the unit axis L */
static double box_radius(const kn_obox* b, const double L[3]) {
  double r = 0;
  for (int k = 0; k < 3; ++k) r += b->h[k] * fabs(dot3(b->a[k], L));
  return r;
}

// (boxes A, B, A's axis i parallel to B's axis j, the best separation so far in *sep) => *sep, L,
// ca, cb updated. In the cross-section perpendicular to the edges both boxes are rectangles, whose
// distance is along a face axis (a corner on an edge) or between two corners, i.e. two parallel
// edges: the axis of each corner pair (A's edge line to B's, perpendicular to both) whose corners are
// the supports along it is exact; the largest such separation, its axis L (A into B) and the two
// edges' centres ca, cb replace the caller's when larger
void kn_box_parallel_edge_axis(const kn_obox* A, const kn_obox* B, int i, int j, double* sep, double L[3],
                               double ca[3], double cb[3]) {
  const double* e = A->a[i];
  int u = (i + 1) % 3, v = (i + 2) % 3, p = (j + 1) % 3, q = (j + 2) % 3;
  const double sa[4] = {1, -1, -1, 1}, sb[4] = {1, 1, -1, -1};
  for (int m = 0; m < 4; ++m)
    for (int n = 0; n < 4; ++n) {
      double x[3], y[3], w[3];
      for (int k = 0; k < 3; ++k) {
        x[k] = A->c[k] + sa[m] * A->h[u] * A->a[u][k] + sb[m] * A->h[v] * A->a[v][k];
        y[k] = B->c[k] + sa[n] * B->h[p] * B->a[p][k] + sb[n] * B->h[q] * B->a[q][k];
        w[k] = y[k] - x[k];
      }
      double we = dot3(w, e);
      for (int k = 0; k < 3; ++k) w[k] -= we * e[k];
      double l = sqrt(dot3(w, w));
      if (!(l > 1e-12 * (1 + sqrt(dot3(A->h, A->h)) + sqrt(dot3(B->h, B->h))))) continue;
      for (int k = 0; k < 3; ++k) w[k] /= l;
      /* the corners must be the supports along w (A's highest, B's lowest), to a relative 1e-12 */
      double tol = 1e-12 * (1 + box_radius(A, w) + box_radius(B, w));
      if (dot3(w, x) < dot3(w, A->c) + box_radius(A, w) - tol) continue;
      if (dot3(w, y) > dot3(w, B->c) - box_radius(B, w) + tol) continue;
      if (l > *sep) *sep = l, memcpy(L, w, sizeof w), memcpy(ca, x, sizeof x), memcpy(cb, y, sizeof y);
    }
}
