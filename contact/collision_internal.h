/* Internal to contact/: the collision scene, mesh data with its BVH, shape-local signed
 * distances and the narrow-phase pair routines. Not installed. */
#ifndef KNEAD_CONTACT_COLLISION_INTERNAL_H
#define KNEAD_CONTACT_COLLISION_INTERNAL_H

#include "contact/contact.h"

/* One BVH node over triangles: a leaf when count > 0 (tris [first, first + count) of the
 * mesh's permuted triangle order), else children left and left + 1... stored explicitly. */
typedef struct {
  double lo[3], hi[3];
  int left, right;   /* children (internal node) */
  int first, count;  /* triangle range (leaf) */
} kn_bvh_node;

/* The convex hull of a mesh's vertices with the hull vertices' adjacency (hull.c). */
typedef struct {
  int nv;             /* hull vertices (0: none, e.g. a flat mesh) */
  int* vid;           /* nv: the mesh vertex each one is */
  double* v;          /* nv x 3 */
  int *adj_start, *adj; /* neighbours of vertex i: adj[adj_start[i] .. adj_start[i + 1]) */
  double inner_depth; /* the deepest mesh vertex below the hull's boundary [m] (0: all on it);
                         above the convexity tolerance, the first one found beyond it */
  int nf;             /* faces: qhull's facets, one convex polygon per plane */
  double* fn;         /* nf x 4: outward unit normal and offset (n . x + offset = 0 on the face) */
  int *f_start, *f_vert; /* corners of face f (hull vertex indices, counter-clockwise seen from
                            outside): f_vert[f_start[f] .. f_start[f + 1]) */
} kn_hull;
/* A mesh is recognized as convex when inner_depth <= KN_HULL_CONVEX_TOL x its bounding box
 * diagonal: every vertex on its hull to 1e-9 relative (round-off of the STL's float coordinates is
 * ~6e-8 relative, so float meshes pass only when their vertices lie on the hull as stored). */
#define KN_HULL_CONVEX_TOL 1e-9
/* (n points xyz, stop depth) => hull; inner_depth exact up to stop_depth (beyond it, the first
 * depth found above it); KN_ERR_INVALID when the points span no volume, KN_ERR_NOMEM */
kn_status kn_hull_build(const double* pts, int n, double stop_depth, kn_hull* h);
void kn_hull_free(kn_hull* h);
/* (hull, direction d, start vertex) => index of a hull vertex maximizing d . v (hill climbing) */
int kn_hull_support(const kn_hull* h, const double d[3], int start);

/* A triangle mesh in the shape frame (scale applied, identical positions welded), with the
 * angle-weighted pseudo-normals of Baerentzen & Aanaes (2005) for the inside/outside sign. */
typedef struct {
  int nv, nt;
  double* v;        /* nv x 3 */
  int* tri;         /* nt x 3, in BVH leaf order */
  double* fn;       /* nt x 3 face normals */
  double* vn;       /* nv x 3 vertex pseudo-normals (angle weighted) */
  double* en;       /* nt x 3 x 3: pseudo-normal of edge (k, k+1) of each triangle */
  double* tbox;     /* nt x 6: each triangle's bounding box lo, hi (the search's pretest) */
  kn_bvh_node* nodes;
  int nnodes;
  double centroid[3];
  double lo[3], hi[3];
  double sphere_c[3], sphere_r; /* bounding sphere: centre of the box, farthest vertex */
  kn_hull hull;     /* convex hull of the vertices (support by hill climbing); hull.nv 0 when flat */
  int convex;       /* every vertex on the hull (KN_HULL_CONVEX_TOL) */
} kn_mesh_data;

kn_status kn_mesh_load(const kn_shape* shape, kn_mesh_data* m, kn_error* err);
void kn_mesh_free(kn_mesh_data* m);
/* (local point x) => signed distance to the closed mesh, outward unit gradient */
double kn_mesh_signed_distance(const kn_mesh_data* m, const double x[3], double grad[3]);
/* (local point x, bound > 0) => the same value and gradient when |distance| < bound (*near = 1);
 * otherwise *near = 0 and bound is returned: x is at least bound from the surface, inside or out */
double kn_mesh_signed_distance_bounded(const kn_mesh_data* m, const double x[3], double bound, double grad[3],
                                       int* near);

/* (shape, optional mesh, local point x) => signed distance and outward unit gradient, both in the
 * shape frame. Exact inside and outside for the primitives. */
double kn_shape_signed_distance_local(const kn_shape* s, const kn_mesh_data* m, const double x[3], double grad[3]);

/* Per-collider data the narrow phase needs. */
typedef struct {
  const kn_shape* shape;
  const kn_mesh_data* mesh; /* NULL unless MESH */
  const kn_pose* X;         /* world pose for this call */
  kn_contact_material material;
} kn_nshape;

/* A growable contact-point buffer (the scene owns it; grows only when a call needs more). */
typedef struct {
  kn_contact_point* p;
  int count, capacity;
  /* duplicate lookup of the current pair once it has many points (point_grid.c) */
  int grid_start;   /* first point of the indexed pair; -1: none (scan) */
  int* head;        /* bucket heads */
  int *next, next_cap; /* per point of the pair: the next in its bucket */
  int *mark, mark_cap;  /* scratch labels of the patch reduction (patch_reduce.c) */
} kn_point_buf;
/* (buffer, first point of the current pair) => the pair's points indexed (grid_start = start), or
 * grid_start -1 when they cannot be */
void kn_point_grid_build(kn_point_buf* b, int start);
/* (buffer, index of a point just appended to the indexed pair) => indexed (or the index off) */
void kn_point_grid_add(kn_point_buf* b, int i);
/* (point p) => 1 when a point of the indexed pair is within 1e-6 of p, 0 none, -1 cannot tell */
int kn_point_grid_has_near(const kn_point_buf* b, const double p[3]);
void kn_point_buf_free(kn_point_buf* b);

/* Contact patch reduction (patch_reduce.c; the rule is in contact/contact.h): at most
 * KN_PATCH_MAX points per cluster of normals within 25 degrees (KN_PATCH_COS = cos 25°). */
#define KN_PATCH_MAX 8
#define KN_PATCH_COS 0.90630778703664996
/* (buffer, first point of the current pair) => the pair's points reduced in place (b->count
 * lowered, the duplicate index off); KN_ERR_NOMEM with the points untouched */
kn_status kn_patch_reduce(kn_point_buf* b, int start);

/* Narrow phase for one pair: appends points (a, b, normal from A into B) with phi < margin,
 * unreduced (two convex polytopes, not both boxes: the convex patch, at most 4 points) (kn_collision_detect_reach reduces a mesh pair's points with kn_patch_reduce).
 * ia, ib are the collider indices written into the points. Returns KN_ERR_NOMEM on growth
 * failure. */
kn_status kn_narrow_pair(const kn_nshape* A, const kn_nshape* B, int ia, int ib, double margin,
                         kn_point_buf* out);
/* The same with the probes also for two convex polytopes (no convex patch, convex_patch.c): the
 * culled probe path the tests compare with the references below. */
kn_status kn_narrow_pair_probes(const kn_nshape* A, const kn_nshape* B, int ia, int ib, double margin,
                                kn_point_buf* out);
/* The same without culling: every probe point of a pair is measured (the reference the culled
 * path is tested against, tests/contact/test_probe_culling.c). */
kn_status kn_narrow_pair_exhaustive(const kn_nshape* A, const kn_nshape* B, int ia, int ib, double margin,
                                    kn_point_buf* out);
/* Without culling and with libccd's mesh support by a scan of the hull's vertices (every vertex
 * without a hull) instead of the hull climb: the reference tests/contact/test_convex_mesh.c compares the climb against. */
kn_status kn_narrow_pair_scan(const kn_nshape* A, const kn_nshape* B, int ia, int ib, double margin,
                              kn_point_buf* out);

/* (S1, S2 at their poses, margin, polytopes) => the pair's deepest point as convex_pair finds it
 * (normal n from S1 into S2, witness points, phi), 1 when there is one within the margin;
 * polytopes 0 forces libccd's EPA on S1 inflated by the margin (the reference for the small-polytope
 * path) */
int kn_narrow_deepest(const kn_nshape* S1, const kn_nshape* S2, double margin, int polytopes, double n[3], double p1[3],
                      double p2[3], double* phi);

/* Convex polytopes (polytope.c): a box, or a mesh with a hull. */
/* (unit n) => R = [t1 t2 n] by columns (the contact frame) */
void kn_tangent_frame(const double n[3], double R[9]);
/* (shape) => 1 for a small polytope for libccd's uninflated EPA: a box or a mesh whose hull has at
 * most 64 vertices */
int kn_polytope_small(const kn_nshape* s);
/* (small polytopes S1, S2 overlapping by depth along the unit n from S1 into S2) => witness points:
 * p1 on S1's support plane, p2 = p1 - depth n, over the middle of the overlap of their contact
 * features seen along n */
void kn_polytope_witness(const kn_nshape* S1, const kn_nshape* S2, const double n[3], double depth, double p1[3],
                         double p2[3]);
/* (polygon in[n], plane dot(x, e) <= off) => out: the part inside (Sutherland-Hodgman); its count */
int kn_clip_poly(double (*in)[3], int n, const double e[3], double off, double (*out)[3]);

/* an oriented box: centre, unit axes (world, a[k] the k-th column of R), half sizes */
typedef struct {
  double c[3], a[3][3], h[3];
} kn_obox;
// (boxes A, B, A's axis i parallel to B's axis j, the best separation so far in *sep) => *sep, L
// (unit, A into B), ca, cb (the two edges' centres) updated when the axis of a pair of their parallel
// edges that support the boxes along it separates better; exact for separated boxes whose nearest
// features are those edges (contact/box_edges.c)
void kn_box_parallel_edge_axis(const kn_obox* A, const kn_obox* B, int i, int j, double* sep, double L[3],
                               double ca[3], double cb[3]);

/* The contact patch of two convex polytopes (convex_patch.c). */
typedef struct {
  double p1[3], p2[3]; /* witnesses on S1 and S2 */
  double n[3];         /* unit normal from S1 into S2 */
  double phi;          /* gap along n (< 0: overlap) */
} kn_patch_point;
#define KN_CONVEX_PATCH_CAP 128
/* (shape) => 1 for a box or a mesh recognized as convex with its hull's faces */
int kn_convex_polytope(const kn_nshape* s);
/* (shape) => 1 for a box or a mesh with its hull's faces, convex or not */
int kn_hull_polytope(const kn_nshape* s);
/* A non-convex mesh pair (or with a box) whose hulls are apart by more than this [m] gets its
 * speculative contacts from the hulls' patch instead of the probes (contact/narrow.c): the hulls
 * contain the meshes, so no point comes nearer than the hulls' gaps say; nearer than this, the
 * exact probes (a link settling into another's concavity reaches them before it touches). */
#define KN_HULL_APART 1e-3
/* (convex polytopes S1, S2, unit EPA normal n0 from S1 into S2, exact_n0: 1 when n0 is the uninflated
 * EPA's (exact to its tolerance), gap_point: 1 for face axes only, and separated polytopes whose face
 * clip misses take one point at the face axis' gap (speculative contacts of hulls; its witness on the reference face's
 * plane, maybe beside the face), margin, capacity) => the points with
 * phi < margin of the best separating axis near n0: the incident face clipped against the
 * reference face, or the closest points of two edges; their count (0: none within the margin), or
 * -1 when no patch can be formed (the caller takes the probe path) */
int kn_convex_patch(const kn_nshape* S1, const kn_nshape* S2, const double n0[3], int exact_n0, int gap_point,
                    double margin, kn_patch_point* out, int cap);

/* Probe culling (probe_cull.c): conservative tests that a probe point cannot come within a
 * distance of a shape. */
/* (shape F, shape P) => F's bounding sphere, its centre in P's frame */
void kn_probe_cull_sphere(const kn_nshape* F, const kn_nshape* P, double centre_P[3], double* radius);
/* (point x, sphere centre c, distance) => 1 when |x - c| > distance */
int kn_probe_cull_vertex(const double x[3], const double c[3], double distance);
/* (point x, box lo..hi in the same frame, distance) => 1 when x is farther than distance from the box */
int kn_probe_cull_box(const double x[3], const double lo[3], const double hi[3], double distance);

/* A support-plane cull: F lies in {x : dir_W . x <= h_F} for its support height h_F along a unit
 * dir_W (F is inside its hull), so a probe of radius r with dir_W . x - r - h_F > distance is farther
 * than distance from F. Kept in P's frame when P is a mesh (its vertices are tested untransformed),
 * else in the world. */
typedef struct {
  double dir[3]; /* dir_W in the probes' frame */
  double cut;    /* h_F + distance - dir_W . p_P (mesh P) or h_F + distance, plus round-off slack */
} kn_probe_slab;
/* (shape F, shape P, unit direction dir_W from F towards P, distance) => the slab; cut = INFINITY
 * (nothing culled) for a half-space F or a non-finite support */
void kn_probe_slab_init(const kn_nshape* F, const kn_nshape* P, const double dir_W[3], double distance,
                        kn_probe_slab* s);
/* (slab, probe centre x in the slab's frame, probe radius r) => 1 when the probe is culled */
static inline int kn_probe_slab_cull(const kn_probe_slab* s, const double x[3], double r) {
  return s->dir[0] * x[0] + s->dir[1] * x[1] + s->dir[2] * x[2] - r > s->cut;
}
/* (shape, its mesh or NULL, direction d in the shape frame) => max over the shape of d . x (a mesh:
 * its hull's vertices by hill climbing, or every vertex without a hull); INFINITY for a half-space */
double kn_shape_support_height_local(const kn_shape* s, const kn_mesh_data* m, const double d[3]);

struct kn_collision_scene {
  int n;
  kn_collider* colliders;
  kn_mesh_data** mesh;    /* per collider, NULL unless MESH */
  double* local_lo;       /* n x 3 local bounding box (halfspace: unused) */
  double* local_hi;
  /* excluded pairs as sorted (min << 32 | max) keys */
  uint64_t* excluded;
  int nexcluded, cap_excluded, excluded_sorted;
  /* per-call buffers, grown on demand and kept */
  double* aabb;           /* n x 6: lo, hi */
  int* order;             /* n, sweep order */
  int* pairs;             /* candidate pairs, 2 per */
  int npairs, cap_pairs;
  kn_point_buf pts;
};

#endif
