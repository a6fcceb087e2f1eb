/* Internal to ipc/: the mesh pairs' candidates kept between evaluations (mesh_cache.c). Not
 * installed. */
#ifndef KNEAD_IPC_MESH_CACHE_H
#define KNEAD_IPC_MESH_CACHE_H

#include "ipc/ipc.h"

/* The swept broad phase's answer per surface pair for one sweep of every vertex from x0 to x1 at a
 * margin, with each vertex's box over the sweep (grown by a slack). While every vertex is inside its
 * box, a box query at a margin up to the kept one finds a subset of these candidates
 * (kn_swept_pairs_filter gives it exactly). Zero-initialized: empty. */
typedef struct kn_ipc_mesh_cache kn_ipc_mesh_cache;

/* (mesh with m->x, m->x1 and m->off set, the sweep's margin, the vertices' slack) => the cache
 * emptied and the vertex boxes kept; 0 out of memory (the cache then covers nothing) */
int kn_ipc_mesh_cache_begin(kn_ipc_mesh* m, double margin, double slack);
/* (surface pair q's answer for the sweep begun) => kept (copied); 0 out of memory (covers nothing) */
int kn_ipc_mesh_cache_store(kn_ipc_mesh* m, int q, const kn_swept_pairs* pairs);
/* (positions x, in m->off's layout; margin) => 1 when every surface pair's answer was stored since the
 * last begin, margin <= (kept margin) - 2 (slack) and every vertex at x is inside its box */
int kn_ipc_mesh_cache_covers(const kn_ipc_mesh* m, const double* x, double margin);
/* surface pair q's kept candidates (valid while the cache covers) */
kn_swept_pairs kn_ipc_mesh_cache_pairs(const kn_ipc_mesh* m, int q);
void kn_ipc_mesh_cache_free(kn_ipc_mesh* m);

#endif
