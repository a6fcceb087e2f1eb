/* Contact patch reduction (issue 24): a mesh pair's narrow phase emits a point per probe within
 * the margin (hundreds for a link flat on a floor or on another link); this keeps a small manifold
 * that supports the same contact. Rule (contact/contact.h, ARCHITECTURE.md "Contact patches"):
 *   1. cluster by normal: the deepest point not yet clustered (smallest phi, then lowest index)
 *      seeds a cluster holding every unclustered point whose normal is within 25 degrees of the
 *      seed's (n_i . n_seed >= cos 25°); repeat until every point has a cluster;
 *   2. a cluster of at most KN_PATCH_MAX points keeps them all; a larger one keeps its seed (the
 *      deepest point) and, for KN_PATCH_MAX - 1 directions d_j evenly spaced in the seed's tangent
 *      plane (angle 2 pi j / (KN_PATCH_MAX - 1) from the seed frame's t1), the point extreme along
 *      d_j (a vertex of the convex hull of the points' tangent-plane projections; ties within 1e-9 m
 *      go to the smaller phi, then the lower index);
 *   3. the kept points stay in their emission order.
 * Every hull vertex whose exterior angle exceeds 360° / (KN_PATCH_MAX - 1) is kept, so a
 * rectangle's four corners always are. Deterministic: no state, the same input gives the same
 * points in the same order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/collision_internal.h"

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// (buffer, n) => b->mark holds at least 2n ints; 0 when memory fails
static int reserve(kn_point_buf* b, int n) {
  if (2 * n <= b->mark_cap) return 1;
  int* m = realloc(b->mark, (size_t)(2 * n) * sizeof(int));
  if (!m) return 0;
  b->mark = m, b->mark_cap = 2 * n;
  return 1;
}

// (points p[0..n), cluster labels) => index of the deepest unlabelled point (phi, then index), -1 none
static int deepest_unlabelled(const kn_contact_point* p, int n, const int* label) {
  int best = -1;
  for (int i = 0; i < n; ++i)
    if (label[i] < 0 && (best < 0 || p[i].phi < p[best].phi)) best = i;
  return best;
}

// (points of cluster c, seed s, direction d in its tangent plane) => the point extreme along d
static int extreme(const kn_contact_point* p, int n, const int* label, int c, int s, const double d[3]) {
  int best = s;
  double bv = 0; /* d . (p_s - p_s) */
  for (int i = 0; i < n; ++i) {
    if (label[i] != c) continue;
    double r[3] = {p[i].p[0] - p[s].p[0], p[i].p[1] - p[s].p[1], p[i].p[2] - p[s].p[2]};
    double v = dot3(r, d);
    if (v > bv + 1e-9 || (v >= bv - 1e-9 && p[i].phi < p[best].phi)) best = i, bv = v;
  }
  return best;
}

// (buffer, first point of the pair) => the pair's points reduced in place by the rule above
// (b->count lowered); KN_ERR_NOMEM when the scratch labels cannot be allocated (points untouched)
kn_status kn_patch_reduce(kn_point_buf* b, int start) {
  int n = b->count - start;
  if (n <= KN_PATCH_MAX) return KN_OK;
  if (!reserve(b, n)) return KN_ERR_NOMEM;
  kn_contact_point* p = b->p + start;
  int *label = b->mark, *keep = b->mark + n;
  for (int i = 0; i < n; ++i) label[i] = -1, keep[i] = 0;
  for (int c = 0;; ++c) {
    int s = deepest_unlabelled(p, n, label);
    if (s < 0) break;
    int size = 0;
    for (int i = 0; i < n; ++i)
      if (label[i] < 0 && dot3(p[i].n, p[s].n) >= KN_PATCH_COS) label[i] = c, ++size;
    label[s] = c; /* a normal of round-off length still seeds its own cluster */
    if (size <= KN_PATCH_MAX) {
      for (int i = 0; i < n; ++i)
        if (label[i] == c) keep[i] = 1;
      continue;
    }
    keep[s] = 1;
    const double* R = p[s].R_WC; /* columns t1, t2, n */
    for (int j = 0; j < KN_PATCH_MAX - 1; ++j) {
      double th = 2 * 3.14159265358979323846 * j / (KN_PATCH_MAX - 1), ct = cos(th), st = sin(th);
      double d[3] = {ct * R[0] + st * R[1], ct * R[3] + st * R[4], ct * R[6] + st * R[7]};
      keep[extreme(p, n, label, c, s, d)] = 1;
    }
  }
  int m = 0;
  for (int i = 0; i < n; ++i)
    if (keep[i]) {
      if (m != i) p[m] = p[i];
      ++m;
    }
  b->count = start + m;
  b->grid_start = -1; /* the points moved: the duplicate index is stale */
  return KN_OK;
}
