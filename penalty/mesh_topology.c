/* A triangle mesh's adjacency for the relaxation walk (penalty.h, kn_penalty_mesh): the triangle
 * across each edge (edges sorted by their vertex pair) and the triangles around each vertex. */
#include <stdlib.h>
#include <string.h>

#include "penalty/penalty.h"

typedef struct {
  int lo, hi, tri, edge;
} edge_rec;

static int cmp_edge(const void* pa, const void* pb) {
  const edge_rec *a = pa, *b = pb;
  if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
  if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
  return a->tri < b->tri ? -1 : a->tri > b->tri;
}

kn_status kn_penalty_mesh_topology_build(int nv, int nt, const int* tri, kn_penalty_mesh_topology* top,
                                         kn_error* err) {
  memset(top, 0, sizeof *top);
  for (int t = 0; t < nt; t++)
    for (int k = 0; k < 3; k++)
      if (tri[3 * t + k] < 0 || tri[3 * t + k] >= nv)
        return kn_fail(err, KN_ERR_INVALID, "mesh triangle %d: vertex %d is not in [0, %d)", t, tri[3 * t + k], nv);
  edge_rec* e = malloc(3 * (size_t)nt * sizeof *e + 1);
  top->adj = malloc(3 * (size_t)nt * sizeof *top->adj + 1);
  top->vt_start = calloc((size_t)nv + 1, sizeof *top->vt_start);
  top->vt = malloc(3 * (size_t)nt * sizeof *top->vt + 1);
  if (!e || !top->adj || !top->vt_start || !top->vt) {
    free(e);
    kn_penalty_mesh_topology_free(top);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory for the adjacency of a %d-triangle mesh", nt);
  }
  for (int t = 0; t < nt; t++)
    for (int k = 0; k < 3; k++) {
      int a = tri[3 * t + k], b = tri[3 * t + (k + 1) % 3];
      e[3 * t + k] = (edge_rec){a < b ? a : b, a < b ? b : a, t, k};
      top->adj[3 * t + k] = -1;
    }
  qsort(e, 3 * (size_t)nt, sizeof *e, cmp_edge);
  for (int i = 0; i + 1 < 3 * nt; i++)
    if (e[i].lo == e[i + 1].lo && e[i].hi == e[i + 1].hi && e[i].tri != e[i + 1].tri &&
        top->adj[3 * e[i].tri + e[i].edge] < 0 && top->adj[3 * e[i + 1].tri + e[i + 1].edge] < 0) {
      top->adj[3 * e[i].tri + e[i].edge] = e[i + 1].tri;
      top->adj[3 * e[i + 1].tri + e[i + 1].edge] = e[i].tri;
    }
  free(e);
  for (int t = 0; t < 3 * nt; t++) top->vt_start[tri[t] + 1]++;
  for (int v = 0; v < nv; v++) top->vt_start[v + 1] += top->vt_start[v];
  int* fill = calloc((size_t)nv + 1, sizeof *fill);
  if (!fill) {
    kn_penalty_mesh_topology_free(top);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory for the adjacency of a %d-triangle mesh", nt);
  }
  for (int t = 0; t < nt; t++)
    for (int k = 0; k < 3; k++) {
      int v = tri[3 * t + k];
      top->vt[top->vt_start[v] + fill[v]++] = t;
    }
  free(fill);
  return KN_OK;
}

void kn_penalty_mesh_topology_free(kn_penalty_mesh_topology* top) {
  free(top->adj), free(top->vt_start), free(top->vt);
  memset(top, 0, sizeof *top);
}
