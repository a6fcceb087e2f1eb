/* Duplicate lookup for a pair with many contact points: the narrow phase drops a point within
 * 1e-6 m of one the pair already has (|p - q|^2 < 1e-12). A linear scan makes that O(n^2) for the
 * hundreds of probe points of a mesh resting on a mesh or a floor; this hashes the pair's points
 * by 2 µm cells (a point within 1e-6 of p lies in p's cell or one of its 26 neighbours, with room
 * for rounding) and tests the same inequality on the points found there, so the answer is the
 * scan's. Coordinates beyond 1e12 m or not finite leave the pair to the scan. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/collision_internal.h"

#define GRID_BUCKETS 4096 /* power of 2 */
#define CELLS_PER_M 5e5   /* 2 µm cells */

/* (point) => its cell; 0 when a coordinate is out of range */
static int cell_of(const double p[3], int64_t c[3]) {
  for (int k = 0; k < 3; ++k) {
    if (!(fabs(p[k]) < 1e12)) return 0;
    c[k] = (int64_t)floor(p[k] * CELLS_PER_M);
  }
  return 1;
}
/* (cell) => its bucket */
static unsigned bucket_of(int64_t x, int64_t y, int64_t z) {
  uint64_t h = (uint64_t)x * 73856093u ^ (uint64_t)y * 19349663u ^ (uint64_t)z * 83492791u;
  h ^= h >> 29;
  return (unsigned)(h & (GRID_BUCKETS - 1));
}

/* (buffer, point index i of the indexed pair) => i linked into its bucket; 0 out of range or memory */
static int insert(kn_point_buf* b, int i) {
  int64_t c[3];
  if (!cell_of(b->p[i].p, c)) return 0;
  int local = i - b->grid_start;
  if (local >= b->next_cap) {
    int cap = b->next_cap ? 2 * b->next_cap : 256;
    while (cap <= local) cap *= 2;
    int* nx = realloc(b->next, (size_t)cap * sizeof(int));
    if (!nx) return 0;
    b->next = nx, b->next_cap = cap;
  }
  unsigned h = bucket_of(c[0], c[1], c[2]);
  b->next[local] = b->head[h];
  b->head[h] = i;
  return 1;
}

// (buffer, first point of the current pair) => the pair's points indexed (b->grid_start = start),
// or the index off (grid_start -1) when memory or a coordinate's range does not allow it
void kn_point_grid_build(kn_point_buf* b, int start) {
  b->grid_start = -1;
  if (!b->head && !(b->head = malloc(GRID_BUCKETS * sizeof(int)))) return;
  for (int h = 0; h < GRID_BUCKETS; ++h) b->head[h] = -1;
  b->grid_start = start;
  for (int i = start; i < b->count; ++i)
    if (!insert(b, i)) {
      b->grid_start = -1;
      return;
    }
}

// (buffer, index i of a point just appended to the indexed pair) => indexed; the index goes off
// when it cannot be
void kn_point_grid_add(kn_point_buf* b, int i) {
  if (b->grid_start >= 0 && !insert(b, i)) b->grid_start = -1;
}

// (buffer with the current pair indexed, point p) => 1 when a point of the pair lies within 1e-6
// (|p - q|^2 < 1e-12), 0 when none does, -1 when p cannot be looked up (scan instead). Only the
// cells that p's 1e-6 ball (grown by 0.1 % for rounding) reaches are visited: per axis the cells of
// p_k - 1.001e-6 .. p_k + 1.001e-6 (at most 2 of the 2 um cells but in a 2 nm sliver: usually 8
// cells, not 27); a point within 1e-6 of p lies in one of them (floor is monotone), so the answer is
// the scan's
int kn_point_grid_has_near(const kn_point_buf* b, const double p[3]) {
  int64_t c[3], lo[3], hi[3];
  if (!cell_of(p, c)) return -1;
  for (int k = 0; k < 3; ++k) {
    lo[k] = (int64_t)floor((p[k] - 1.001e-6) * CELLS_PER_M);
    hi[k] = (int64_t)floor((p[k] + 1.001e-6) * CELLS_PER_M);
  }
  for (int64_t x = lo[0]; x <= hi[0]; ++x)
    for (int64_t y = lo[1]; y <= hi[1]; ++y)
      for (int64_t z = lo[2]; z <= hi[2]; ++z)
        for (int i = b->head[bucket_of(x, y, z)]; i >= 0; i = b->next[i - b->grid_start]) {
          const double* q = b->p[i].p;
          double d[3] = {p[0] - q[0], p[1] - q[1], p[2] - q[2]};
          if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < 1e-12) return 1;
        }
  return 0;
}

// (buffer) => its arrays freed
void kn_point_buf_free(kn_point_buf* b) {
  if (!b) return;
  free(b->p), free(b->head), free(b->next), free(b->mark);
  memset(b, 0, sizeof *b);
}
