/* The collision scene: colliders with their mesh data, collision filtering, the broad phase
 * (sweep and prune over world AABBs inflated by the margin) and kn_collision_detect, which runs
 * the narrow phase (narrow.c) over the candidate pairs in sorted order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/collision_internal.h"

static uint64_t pair_key(int i, int j) {
  uint32_t lo = (uint32_t)(i < j ? i : j), hi = (uint32_t)(i < j ? j : i);
  return ((uint64_t)lo << 32) | hi;
}
static int cmp_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return (x > y) - (x < y);
}

// (colliders, n) => scene with meshes loaded; KN_ERR_IO/PARSE naming the mesh file on failure
kn_status kn_collision_scene_create(const kn_collider* colliders, int n, kn_collision_scene** out, kn_error* err) {
  *out = NULL;
  if (n < 0 || (n > 0 && !colliders)) return kn_fail(err, KN_ERR_INVALID, "collision scene: %d colliders", n);
  kn_collision_scene* cs = kn_calloc(1, sizeof *cs);
  if (!cs) return kn_fail(err, KN_ERR_NOMEM, "collision scene: out of memory");
  cs->n = n;
  cs->colliders = kn_calloc((size_t)n, sizeof *cs->colliders);
  cs->mesh = kn_calloc((size_t)n, sizeof *cs->mesh);
  cs->local_lo = kn_calloc((size_t)n * 3, sizeof(double));
  cs->local_hi = kn_calloc((size_t)n * 3, sizeof(double));
  cs->aabb = kn_calloc((size_t)n * 6, sizeof(double));
  cs->order = kn_calloc((size_t)n, sizeof(int));
  if (!cs->colliders || !cs->mesh || !cs->local_lo || !cs->local_hi || !cs->aabb || !cs->order) {
    kn_collision_scene_free(cs);
    return kn_fail(err, KN_ERR_NOMEM, "collision scene: out of memory");
  }
  if (n > 0) memcpy(cs->colliders, colliders, (size_t)n * sizeof *colliders);
  for (int i = 0; i < n; ++i) {
    const kn_shape* s = colliders[i].shape;
    if (!s) {
      kn_collision_scene_free(cs);
      return kn_fail(err, KN_ERR_INVALID, "collider %d: no shape", i);
    }
    double* lo = &cs->local_lo[3 * i];
    double* hi = &cs->local_hi[3 * i];
    const double* sz = s->size;
    switch (s->type) {
      case KN_SHAPE_SPHERE:
        for (int k = 0; k < 3; ++k) lo[k] = -sz[0], hi[k] = sz[0];
        break;
      case KN_SHAPE_BOX:
        for (int k = 0; k < 3; ++k) lo[k] = -0.5 * sz[k], hi[k] = 0.5 * sz[k];
        break;
      case KN_SHAPE_CYLINDER:
      case KN_SHAPE_CAPSULE: {
        double ez = 0.5 * sz[1] + (s->type == KN_SHAPE_CAPSULE ? sz[0] : 0);
        lo[0] = lo[1] = -sz[0], hi[0] = hi[1] = sz[0], lo[2] = -ez, hi[2] = ez;
        break;
      }
      case KN_SHAPE_HALFSPACE: break;
      case KN_SHAPE_MESH: {
        cs->mesh[i] = kn_calloc(1, sizeof(kn_mesh_data));
        if (!cs->mesh[i]) {
          kn_collision_scene_free(cs);
          return kn_fail(err, KN_ERR_NOMEM, "collision scene: out of memory");
        }
        kn_status st = kn_mesh_load(s, cs->mesh[i], err);
        if (st != KN_OK) {
          kn_collision_scene_free(cs);
          return kn_error_prefix(err, "collider %d: ", i);
        }
        memcpy(lo, cs->mesh[i]->lo, 3 * sizeof(double));
        memcpy(hi, cs->mesh[i]->hi, 3 * sizeof(double));
        break;
      }
      default:
        kn_collision_scene_free(cs);
        return kn_fail(err, KN_ERR_INVALID, "collider %d: unknown shape type %d", i, (int)s->type);
    }
  }
  *out = cs;
  return KN_OK;
}

int kn_collider_mesh(const kn_collision_scene* cs, int i, int* nv, const double** v, int* nt, const int** tri) {
  const kn_mesh_data* m = cs && i >= 0 && i < cs->n ? cs->mesh[i] : NULL;
  if (!m) return 0;
  *nv = m->nv, *v = m->v, *nt = m->nt, *tri = m->tri;
  return 1;
}

// (scene) => freed, with its meshes and buffers
void kn_collision_scene_free(kn_collision_scene* cs) {
  if (!cs) return;
  for (int i = 0; i < cs->n && cs->mesh; ++i) {
    if (cs->mesh[i]) kn_mesh_free(cs->mesh[i]);
    free(cs->mesh[i]);
  }
  free(cs->mesh), free(cs->colliders), free(cs->local_lo), free(cs->local_hi), free(cs->aabb), free(cs->order);
  free(cs->excluded), free(cs->pairs);
  kn_point_buf_free(&cs->pts);
  free(cs);
}

// (i, j) => the pair is never reported (order of i and j does not matter)
void kn_collision_exclude(kn_collision_scene* cs, int i, int j) {
  if (!cs || i < 0 || j < 0 || i >= cs->n || j >= cs->n || i == j) return;
  if (cs->nexcluded == cs->cap_excluded) {
    int cap = cs->cap_excluded ? 2 * cs->cap_excluded : 16;
    uint64_t* e = realloc(cs->excluded, (size_t)cap * sizeof *e);
    if (!e) return; /* no status to return; the pair stays allowed */
    cs->excluded = e, cs->cap_excluded = cap;
  }
  cs->excluded[cs->nexcluded++] = pair_key(i, j);
  cs->excluded_sorted = 0;
}

/* the filter of the header: world-world, same body, excluded pairs, group/mask */
static int pair_allowed(const kn_collision_scene* cs, int i, int j) {
  const kn_collider *a = &cs->colliders[i], *b = &cs->colliders[j];
  if (a->clique < 0 && b->clique < 0) return 0;
  if (a->clique == b->clique && a->body == b->body) return 0;
  if (!((a->group & b->mask) && (b->group & a->mask))) return 0;
  if (cs->nexcluded > 0) {
    uint64_t key = pair_key(i, j);
    if (cs->excluded_sorted) return !bsearch(&key, cs->excluded, (size_t)cs->nexcluded, sizeof key, cmp_u64);
    for (int k = 0; k < cs->nexcluded; k++)
      if (cs->excluded[k] == key) return 0;
  }
  return 1;
}

int kn_collision_pair_allowed(const kn_collision_scene* cs, int i, int j) {
  return cs && i >= 0 && j >= 0 && i < cs->n && j < cs->n && i != j && pair_allowed(cs, i, j);
}

/* world AABB of collider i inflated by half the margin on each side (so two boxes overlap when
 * their gap is below the margin); a half-space is unbounded except along an axis-aligned normal */
static void world_aabb(const kn_collision_scene* cs, int i, const kn_pose* X, double pad, double* box) {
  const kn_shape* s = cs->colliders[i].shape;
  double* lo = box;
  double* hi = box + 3;
  if (s->type == KN_SHAPE_HALFSPACE) {
    for (int k = 0; k < 3; ++k) lo[k] = -INFINITY, hi[k] = INFINITY;
    double z[3] = {X->R[2], X->R[5], X->R[8]};
    for (int k = 0; k < 3; ++k) {
      int aligned = fabs(z[(k + 1) % 3]) == 0 && fabs(z[(k + 2) % 3]) == 0 && z[k] != 0;
      if (!aligned) continue;
      if (z[k] > 0) hi[k] = X->p[k] + pad;
      else lo[k] = X->p[k] - pad;
    }
    return;
  }
  const double* llo = &cs->local_lo[3 * i];
  const double* lhi = &cs->local_hi[3 * i];
  for (int r = 0; r < 3; ++r) {
    /* centre and radius of the rotated box (Arvo) */
    double c = X->p[r], e = 0;
    for (int k = 0; k < 3; ++k) {
      c += X->R[3 * r + k] * 0.5 * (llo[k] + lhi[k]);
      e += fabs(X->R[3 * r + k]) * 0.5 * (lhi[k] - llo[k]);
    }
    lo[r] = c - e - pad, hi[r] = c + e + pad;
  }
}

void kn_collider_aabb(const kn_collision_scene* cs, int i, const kn_pose* X_WG, double lo[3], double hi[3]) {
  double box[6];
  world_aabb(cs, i, X_WG, 0.0, box);
  memcpy(lo, box, 3 * sizeof *lo), memcpy(hi, box + 3, 3 * sizeof *hi);
}

static const double* g_sort_aabb; /* qsort context: detect is not re-entrant per scene anyway */
static int cmp_sweep(const void* pa, const void* pb) {
  int a = *(const int*)pa, b = *(const int*)pb;
  double xa = g_sort_aabb[6 * a], xb = g_sort_aabb[6 * b];
  if (xa < xb) return -1;
  if (xa > xb) return 1;
  return (a > b) - (a < b);
}
static int cmp_pair(const void* pa, const void* pb) {
  const int *a = pa, *b = pb;
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  return (a[1] > b[1]) - (a[1] < b[1]);
}

// (poses X_WG, margin) => contact points of every allowed pair with phi < margin, sorted by pair
kn_status kn_collision_detect(kn_collision_scene* cs, const kn_pose* X_WG, double margin,
                              const kn_contact_point** points, int* count, kn_error* err) {
  return kn_collision_detect_reach(cs, X_WG, margin, NULL, points, count, err);
}

// collider i => radius about its geometry origin (the local AABB's farthest corner)
double kn_collider_radius(const kn_collision_scene* cs, int i) {
  if (cs->colliders[i].shape->type == KN_SHAPE_HALFSPACE) return INFINITY;
  double r2 = 0;
  for (int k = 0; k < 3; ++k) {
    double e = fmax(fabs(cs->local_lo[3 * i + k]), fabs(cs->local_hi[3 * i + k]));
    r2 += e * e;
  }
  return sqrt(r2);
}

// (poses X_WG, margin, reach per collider) => contact points of every allowed pair with
// phi < margin + reach_a + reach_b, sorted by pair
kn_status kn_collision_detect_reach(kn_collision_scene* cs, const kn_pose* X_WG, double margin, const double* reach,
                                    const kn_contact_point** points, int* count, kn_error* err) {
  *points = NULL, *count = 0;
  if (!cs) return kn_fail(err, KN_ERR_INVALID, "collision detect: no scene");
  if (!(margin >= 0) || !isfinite(margin))
    return kn_fail(err, KN_ERR_INVALID, "collision detect: margin %g (expected finite and >= 0)", margin);
  for (int i = 0; reach && i < cs->n; ++i)
    if (!(reach[i] >= 0) || !isfinite(reach[i]))
      return kn_fail(err, KN_ERR_INVALID, "collision detect: reach %g of collider %d (expected finite and >= 0)",
                     reach[i], i);
  if (!cs->excluded_sorted && cs->nexcluded > 0) {
    qsort(cs->excluded, (size_t)cs->nexcluded, sizeof *cs->excluded, cmp_u64);
    cs->excluded_sorted = 1;
  }
  //---- broad phase: sweep and prune along x ----
  for (int i = 0; i < cs->n; ++i) {
    world_aabb(cs, i, &X_WG[i], 0.5 * margin + (reach ? reach[i] : 0.0), &cs->aabb[6 * i]);
    cs->order[i] = i;
  }
  g_sort_aabb = cs->aabb;
  if (cs->n > 1) qsort(cs->order, (size_t)cs->n, sizeof(int), cmp_sweep);
  cs->npairs = 0;
  for (int oi = 0; oi < cs->n; ++oi) {
    int i = cs->order[oi];
    const double* bi = &cs->aabb[6 * i];
    for (int oj = oi + 1; oj < cs->n; ++oj) {
      int j = cs->order[oj];
      const double* bj = &cs->aabb[6 * j];
      if (bj[0] > bi[3]) break;
      if (bj[1] > bi[4] || bi[1] > bj[4] || bj[2] > bi[5] || bi[2] > bj[5]) continue;
      if (!pair_allowed(cs, i, j)) continue;
      if (cs->npairs == cs->cap_pairs) {
        int cap = cs->cap_pairs ? 2 * cs->cap_pairs : 64;
        int* p = realloc(cs->pairs, (size_t)cap * 2 * sizeof(int));
        if (!p) return kn_fail(err, KN_ERR_NOMEM, "collision detect: out of memory");
        cs->pairs = p, cs->cap_pairs = cap;
      }
      cs->pairs[2 * cs->npairs] = i < j ? i : j;
      cs->pairs[2 * cs->npairs + 1] = i < j ? j : i;
      ++cs->npairs;
    }
  }
  if (cs->npairs > 1) qsort(cs->pairs, (size_t)cs->npairs, 2 * sizeof(int), cmp_pair);
  //---- narrow phase, pair by pair (a < b, normal from a into b) ----
  cs->pts.count = 0;
  for (int q = 0; q < cs->npairs; ++q) {
    int a = cs->pairs[2 * q], b = cs->pairs[2 * q + 1];
    kn_nshape A = {cs->colliders[a].shape, cs->mesh[a], &X_WG[a], cs->colliders[a].material};
    kn_nshape B = {cs->colliders[b].shape, cs->mesh[b], &X_WG[b], cs->colliders[b].material};
    double pair_margin = margin + (reach ? reach[a] + reach[b] : 0.0);
    int first = cs->pts.count;
    if (kn_narrow_pair(&A, &B, a, b, pair_margin, &cs->pts) != KN_OK)
      return kn_fail(err, KN_ERR_NOMEM, "collision detect: out of memory");
    /* a mesh side: the pair's probe points reduced to a patch (patch_reduce.c, contact.h) */
    if ((A.shape->type == KN_SHAPE_MESH || B.shape->type == KN_SHAPE_MESH) &&
        kn_patch_reduce(&cs->pts, first) != KN_OK)
      return kn_fail(err, KN_ERR_NOMEM, "collision detect: out of memory");
  }
  *points = cs->pts.p;
  *count = cs->pts.count;
  return KN_OK;
}
