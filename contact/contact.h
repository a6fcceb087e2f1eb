/* knead/contact — shapes on bodies, signed distances, broad and narrow phase, contact points, and
 * the contact candidates of every body kind (rigid, FEM surfaces, MPM particles) from plain views
 * of the bodies.
 *
 * A kn_geometry is a shape fixed to a body at a pose. Sizes are full extents for boxes (URDF
 * <box size>), radii for spheres, (radius, length) for cylinders and capsules along their local
 * z axis. Meshes are referred to by resolved file path with a per-axis scale. */
#ifndef KNEAD_CONTACT_H
#define KNEAD_CONTACT_H

#include "../common/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  KN_SHAPE_SPHERE = 0,
  KN_SHAPE_BOX,
  KN_SHAPE_CYLINDER,
  KN_SHAPE_CAPSULE,
  KN_SHAPE_HALFSPACE, /* z <= 0 in the shape frame; outward normal +z */
  KN_SHAPE_MESH
} kn_shape_type;

const char* kn_shape_type_name(kn_shape_type t);

typedef struct {
  kn_shape_type type;
  double size[3];    /* sphere: r; box: (lx, ly, lz); cylinder, capsule: (r, length) */
  char* mesh_uri;    /* MESH: the filename as written in the source (package://, relative, absolute) */
  char* mesh_path;   /* MESH: resolved path on disk, NULL when it could not be resolved */
  double scale[3];   /* MESH: per-axis scale */
} kn_shape;

typedef enum { KN_GEOM_COLLISION = 1, KN_GEOM_VISUAL = 2 } kn_geom_role;

typedef struct {
  char* name;        /* may be NULL */
  int body;          /* body index in its kinematic tree */
  kn_geom_role role;
  kn_pose X_bg;      /* geometry frame in the body frame */
  kn_shape shape;
  double rgba[4];    /* visual colour, (0.7, 0.7, 0.7, 1) when none */
} kn_geometry;


/*---- colliders, detection and contact points (Drake's conventions, digest §0, §2.2) ----*/

/* Per-geometry contact properties; a pair combines them (digest §2.2): friction by the harmonic
 * rule 2 mu_A mu_B / (mu_A + mu_B), stiffness in series k_A k_B / (k_A + k_B) (an infinite side
 * gives the other), dissipation time summed tau_A + tau_B. Defaults (kn_contact_material_default)
 * for a time step dt: mu 0.5, k 1e6 N/m (Drake's DefaultProximityProperties) and tau_d = dt / 2,
 * so that a pair of defaults relaxes over one step (tau = dt: the near-rigid contact is critically
 * damped, as Drake hard-codes for its other near-rigid constraints, digest §5.1). Drake's 0.1 s per
 * geometry (0.2 s a pair) made a stack of five boxes sag 8 mm and a block on an incline slide on
 * forever at dt = 0.01 (ARCHITECTURE.md, "Contact defaults"). */
typedef struct {
  double mu;
  double stiffness;
  double dissipation_time;
} kn_contact_material;
kn_contact_material kn_contact_material_default(double dt);
/* The default dissipation time [s] of an FEM or MPM surface, and of a rigid geometry against one
 * (sim: kn_world_collider.soft): Drake's 0.1 s. A deformable's per-vertex or per-particle contacts
 * grip by their compliance: with the rigid default (dt / 2) the MPM dough cube of
 * examples/regression slips out of the pads (ARCHITECTURE.md, "Contact defaults"). */
#define KN_CONTACT_SOFT_DISSIPATION_TIME 0.1
/* the pair rule above */
kn_contact_material kn_contact_material_combine(const kn_contact_material* a, const kn_contact_material* b);

/* A collision geometry of the world: a shape on a body of a clique (an articulated tree or a free
 * object), or fixed in the world (clique -1, body -1, X_bg is then the pose in the world). */
typedef struct {
  int clique, body;
  kn_pose X_bg;
  const kn_shape* shape;       /* not owned; must outlive the collision scene */
  kn_contact_material material;
  uint32_t group, mask;        /* filter: i and j may touch when (group_i & mask_j) && (group_j & mask_i);
                                  both default to 0xffffffff */
} kn_collider;

/* One contact point between colliders a and b. The normal points from A into B; the contact
 * frame C has n as its z axis (R_WC columns t1, t2, n). phi < 0 when overlapping. p is where the
 * impulse acts (Hertz-like weighting of the two witness points, §2.2). */
typedef struct {
  int a, b;                    /* collider indices, a < b not required */
  double p[3];
  double n[3];
  double R_WC[9];
  double phi;
  kn_contact_material material; /* already combined for the pair */
} kn_contact_point;

/* A contact candidate between any two body kinds (rigid colliders, FEM surfaces, MPM particles):
 * the frame, distance and material of kn_contact_point, and each side as material points. The
 * coupling layer turns a side into its clique's point maps; a backend never sees the kinds. */
typedef enum {
  KN_SIDE_COLLIDER = 0, /* body: a collider; the point p on its rigid body */
  KN_SIDE_SURFACE = 1,  /* body: an FEM body; the point sum_k w[k] x(vertex point[k]), n <= 3 */
  KN_SIDE_PARTICLE = 2  /* body: an MPM grid; point[0]: the particle (in the grid's body) */
} kn_side_kind;
typedef struct {
  kn_side_kind kind;
  int body, n;
  int point[3];
  double w[3];
} kn_contact_side;
/* where a candidate comes from (stiction anchors and outputs are kept per origin) */
typedef enum {
  KN_CANDIDATE_RIGID = 0,        /* collider pair (kn_collision_detect) */
  KN_CANDIDATE_FEM_VERTEX_RIGID, /* an FEM surface vertex in a rigid collider */
  KN_CANDIDATE_FEM_VERTEX_FEM,   /* an FEM surface vertex at another FEM body's surface */
  KN_CANDIDATE_FEM_RIGID_FACE,   /* a rigid feature point in an FEM surface triangle */
  KN_CANDIDATE_PARTICLE_RIGID    /* an MPM particle in a rigid collider */
} kn_candidate_origin;
typedef struct {
  kn_contact_side a, b;         /* the normal points from A into B */
  double p[3], R_WC[9], phi;    /* as kn_contact_point */
  kn_contact_material material;
  kn_candidate_origin origin;
  int source;                   /* index in its detector's own list */
} kn_contact_candidate;

typedef struct kn_collision_scene kn_collision_scene;

/* colliders (n) => a collision scene: per-shape acceleration structures (mesh BVH, convex
 * support) built once. Meshes (OBJ/STL) are read with assimp from shape->mesh_path; an unreadable
 * or empty mesh is an error naming the file. Pairs on the same body, on a body and its parent
 * (kn_collision_exclude, called by the caller who knows the trees), two world-fixed colliders,
 * and pairs the group/mask filter rejects never produce contacts. */
kn_status kn_collision_scene_create(const kn_collider* colliders, int n, kn_collision_scene** out, kn_error* err);
void kn_collision_scene_free(kn_collision_scene* cs);
/* never report contacts between colliders i and j */
void kn_collision_exclude(kn_collision_scene* cs, int i, int j);
/* 1 when colliders i and j may produce contacts (none of the filters above rejects them) */
int kn_collision_pair_allowed(const kn_collision_scene* cs, int i, int j);

/* (X_WG per collider: world pose of each collider's geometry frame) => contact points for all
 * pairs with phi < margin. Broad phase first (AABBs inflated by margin), then the narrow phase:
 * analytic pairs where they exist (sphere-anything, box-halfspace, capsule-capsule, ...), libccd
 * GJK/EPA/MPR for convex pairs, point-vs-mesh BVH queries for meshes. Enough points per pair for
 * stable resting (a box on a half-space: each corner below the margin). Two convex polytopes (a box
 * or a mesh whose vertices are all on its hull; not box-box) get the patch of their best separating
 * axis near the EPA normal: the incident face clipped against the reference face, at most 4 points
 * (contact/convex_patch.c); a non-convex mesh against a mesh or a box, while their hulls are apart
 * by more than 1 mm, gets the same patch on the hulls as speculative contacts. A pair with a mesh side
 * (mesh-mesh, mesh-primitive, mesh-halfspace) has its points reduced to a patch: clusters of
 * normals within 25 degrees (seeded by the deepest point not yet clustered); a cluster of more than
 * 8 points keeps its deepest point and the points extreme along 7 directions evenly spaced in the
 * deepest point's tangent plane (vertices of the hull of the points' tangent-plane projections;
 * ties within 1e-9 m to the smaller phi, then the earlier point), in emission order. The points
 * live in the scene's buffer until the next call; *points and *count receive them. Deterministic
 * order. */
kn_status kn_collision_detect(kn_collision_scene* cs, const kn_pose* X_WG, double margin,
                              const kn_contact_point** points, int* count, kn_error* err);
/* Speculative detection: as kn_collision_detect, with reach[i] (>= 0, finite; NULL = all 0) the
 * distance any point of collider i can travel during the coming step. A pair (a, b) is reported
 * where phi < margin + reach[a] + reach[b], so two bodies that may meet within the step get their
 * contact before they touch (SAP's phi0 > 0 constraint then lets them close exactly that gap). */
kn_status kn_collision_detect_reach(kn_collision_scene* cs, const kn_pose* X_WG, double margin, const double* reach,
                                    const kn_contact_point** points, int* count, kn_error* err);
/* collider i => radius of the ball about its geometry frame's origin that holds it [m]
 * (INFINITY for a half-space) */
double kn_collider_radius(const kn_collision_scene* cs, int i);
/* (collider i, X_WG its geometry frame's world pose) => its world axis-aligned bounding box (the
 * shape's local box rotated; infinite along a half-space's unbounded directions) */
void kn_collider_aabb(const kn_collision_scene* cs, int i, const kn_pose* X_WG, double lo[3], double hi[3]);

/* collider i => 1 and its mesh as contact/ holds it (shape frame, scale applied, identical positions
 * welded; nv vertices xyz, nt triangles wound counter-clockwise seen from outside), borrowed for the
 * scene's life; 0 when it is not a mesh */
int kn_collider_mesh(const kn_collision_scene* cs, int i, int* nv, const double** v, int* nt, const int** tri);

/* Signed distance from the world point x to the shape at pose X_WG, and its gradient (unit,
 * outward). Analytic for primitives; meshes use the scene's BVH (collider index i). */
double kn_collider_signed_distance(const kn_collision_scene* cs, int i, const kn_pose* X_WG, const double x[3],
                                   double grad[3]);

/*---- contact candidates across body kinds (candidates.c, fem_surface.c, fem_detect.c, particles.c) ----*/

/* The detectors below take plain views of the bodies (no world, no deformable or MPM types) and
 * append kn_contact_candidate to one growable list. Each candidate's source is its index among
 * what its detector appended in that call (rigid: the index of its kn_contact_point). */
typedef struct {
  kn_contact_candidate* c;
  int n, cap;
} kn_contact_candidate_list;
void kn_contact_candidate_list_free(kn_contact_candidate_list* l);
/* => a zeroed candidate appended to l; NULL (KN_ERR_NOMEM in err) when out of memory */
kn_contact_candidate* kn_contact_candidate_push(kn_contact_candidate_list* l, kn_error* err);

/* (X_WG and reach per collider, margin) => *points, *count of kn_collision_detect_reach, and one
 * KN_CANDIDATE_RIGID candidate per point appended to out (sides: the two colliders), except for
 * pairs of world-fixed colliders (clique -1 both), which never move. */
kn_status kn_contact_detect_rigid(kn_collision_scene* cs, const kn_pose* X_WG, double margin, const double* reach,
                                  const kn_contact_point** points, int* count, kn_contact_candidate_list* out,
                                  kn_error* err);

/* A collider as the deformable detectors see it, one per collider of the collision scene. */
typedef struct {
  int tree, body;            /* the kinematic tree and body that carry it: FEM vertices attached to
                                that body never touch it */
  kn_contact_material soft;  /* its material against FEM and MPM surfaces */
} kn_soft_collider;

/* An FEM body as contact detection sees it: a tet mesh's vertices and its closed, outward-wound
 * surface. All arrays are borrowed; x is read at each detection. */
typedef struct {
  int nvert;
  const double* X;                  /* 3 * nvert rest positions (the surface tree's topology) */
  const double* x;                  /* 3 * nvert positions now */
  const unsigned char* fixed;       /* nvert: 1 = held in place (no vertex contacts) */
  const int* free_index;            /* nvert: -1 when fixed (a face contact needs a free vertex) */
  int nsurf;
  const int* surf;                  /* 3 * nsurf vertex indices, counter-clockwise seen from outside */
  int nsurf_vert;
  const int* surf_vert;             /* the vertices on the surface (the vertex contacts' points) */
  int nattach;                      /* vertex attach_vertex[k] is held by target attach_target[k] */
  const int *attach_vertex, *attach_target;
  const int *target_tree, *target_body; /* per target: its tree and body (tree -1: the world) */
  kn_contact_material material;     /* of its surface */
} kn_contact_fem;

/* FEM contacts (fem_detect.c), Drake's conventions (above): the normal points from A into B,
 * phi < 0 when overlapping, and B is always on an FEM body.
 *   KN_CANDIDATE_FEM_VERTEX_RIGID  a free surface vertex of B inside (or within the margin of) a
 *        rigid collider A (kn_collider_signed_distance; normal = the collider's outward gradient);
 *   KN_CANDIDATE_FEM_VERTEX_FEM    a free surface vertex of B near the surface of FEM body A
 *        (A side = the nearest triangle, barycentric; normal = A's outward normal); with
 *        set_polygon also a point of a surface edge of B where it crosses a surface edge of A (B
 *        side = the edge's two vertices by weights, n = 2; the overlap polygon's corners that are
 *        neither body's vertices);
 *   KN_CANDIDATE_FEM_RIGID_FACE    a feature point of rigid collider A (box corner or edge point,
 *        with set_polygon a box edge's crossing with an FEM surface edge, the deepest point of a sphere / capsule /
 *        cylinder, a mesh vertex) near the surface of B (B side = the nearest triangle; normal =
 *        minus B's outward normal, from the rigid body into the FEM body).
 * Double counting: a rigid feature point is dropped when any vertex of its triangle already has a
 * vertex contact with the same collider (the vertex contacts then carry that patch); with
 * set_polygon only when those vertices hold more than half its weight. An FEM edge crossing is
 * dropped where the vertices with vertex contacts against the other body hold more than half its
 * weight on either side, and where the same corner was kept the other way round.
 *
 * Surface queries (fem_surface.c) use one AABB tree per FEM body over its surface triangles: the
 * topology is built once (median splits of the rest centroids), the boxes are refitted to x every
 * detection. Nearest triangle by a best-first descent (ties to the lowest triangle index, so
 * identical to brute force), inside/outside by the angle-weighted pseudo-normal of the nearest
 * feature (Baerentzen and Aanaes 2005), exact for the closed, outward-wound surface of a tet mesh. */
typedef struct {
  double phi;               /* negative inside */
  int tri;                  /* surface triangle index of the nearest point, -1 for an empty surface */
  int vert[3];
  double wt[3];             /* nearest point = sum wt_k x_vert_k */
  double n[3];              /* outward unit normal at the nearest point */
} kn_contact_surface_hit;

typedef struct kn_contact_surface kn_contact_surface;
/* (FEM body) => its surface tree (topology from X, boxes at x) and adjacency; NULL when out of
 * memory. Keeps b->surf (borrowed). */
kn_contact_surface* kn_contact_surface_create(const kn_contact_fem* b);
void kn_contact_surface_free(kn_contact_surface* s);
/* (body's x) => refitted boxes, face normals and pseudo-normals */
void kn_contact_surface_update(kn_contact_surface* s, const kn_contact_fem* b);
/* (surface updated at b->x, world point p) => nearest point, signed distance, outward normal */
void kn_contact_surface_query(const kn_contact_surface* s, const kn_contact_fem* b, const double p[3],
                              kn_contact_surface_hit* hit);
/* the same by brute force over every triangle with the winding-number sign (the reference the
 * tree is tested against) */
void kn_contact_surface_query_brute(const kn_contact_fem* b, const double p[3], kn_contact_surface_hit* hit);
/* (surface updated at b->x, point p at distance phi > 0 from triangle t) => 1 when p is within phi
 * of the plane of a neighbour of t across a fold (an edge sharper than 45 degrees): which face p
 * would go in by is then not t's (fem_detect.c's speculative FEM-FEM candidates) */
int kn_contact_surface_near_fold(const kn_contact_surface* s, const kn_contact_fem* b, int t, const double p[3],
                                 double phi);
/* the body's bounding box at the last update: lo[3], hi[3] */
const double* kn_contact_surface_box(const kn_contact_surface* s);
/* mean surface edge length at rest (the spacing of rigid edge samples) */
double kn_contact_surface_edge_length(const kn_contact_surface* s);

/* Detection scratch for a set of FEM bodies: one surface tree per body, feature points, marks. */
typedef struct kn_contact_fem_detector kn_contact_fem_detector;
/* (FEM bodies, brute: 1 = brute-force surface queries, the reference for tests) => *out;
 * KN_ERR_NOMEM */
kn_status kn_contact_fem_detector_create(const kn_contact_fem* fems, int nfem, int brute, kn_contact_fem_detector** out,
                                         kn_error* err);
void kn_contact_fem_detector_free(kn_contact_fem_detector* d);
/* on = 1 (the penalty backend): a box's rigid feature points include its edges' crossings with the
 * FEM surface's edges, the double-counting rule below drops a point only when its touching
 * vertices hold more than half its weight, and two FEM bodies' surface edges add their crossings
 * (KN_CANDIDATE_FEM_VERTEX_FEM with an edge point on B), so that a box and an offset FEM block,
 * or two offset FEM blocks, touch over their whole overlap polygon; 0 (default): none of these
 * (SAP's and ipc's results unchanged) */
void kn_contact_fem_detector_set_polygon(kn_contact_fem_detector* d, int on);
/* reach >= 0 [m] (the penalty backend's speculative detection, sim/candidates.c): added to the margin
 * of the FEM bodies' contacts with the colliders (vertex in collider, rigid feature point in FEM
 * face), not of the FEM-FEM ones; 0 (default): the margin alone */
void kn_contact_fem_detector_set_reach(kn_contact_fem_detector* d, double reach);
/* (the same bodies at x; collision scene cs (NULL: no colliders), per collider its kn_soft_collider
 * and X_WG, margin) => the FEM candidates with phi < margin appended to out: every vertex contact
 * first (per body, per surface vertex: colliders then other bodies), then the rigid feature
 * contacts (per body, per collider, per feature point), then (set_polygon) the FEM edge crossings
 * (per pair of bodies, B the lower index then the higher); deterministic. KN_ERR_NOMEM */
kn_status kn_contact_fem_detect(kn_contact_fem_detector* d, const kn_contact_fem* fems, const kn_collision_scene* cs,
                                const kn_soft_collider* colliders, const kn_pose* X_WG, double margin,
                                kn_contact_candidate_list* out, kn_error* err);

/* A set of MPM particles as contact detection sees it. */
typedef struct {
  int np;
  const double* x;                  /* 3 * np positions (borrowed) */
  int body, first;                  /* its candidates' particle side: body `body`, point first + p */
  kn_contact_material material;     /* of its particles */
  double radius;                    /* contact radius: phi is taken to the ball of this radius [m] */
} kn_contact_particles;
/* (particle sets, collision scene with X_WG and kn_soft_collider per collider, margin) =>
 * KN_CANDIDATE_PARTICLE_RIGID candidates appended to out (particles.c): particle p of set i against
 * collider k when phi = kn_collider_signed_distance(x_p) - radius < margin, per set, per collider,
 * per particle. A = the particle, B = the collider, normal -grad phi (into the rigid body, MPM
 * digest 7.4), p = the particle's position moved by radius along the normal (its ball's point
 * nearest the collider). KN_ERR_NOMEM */
kn_status kn_contact_detect_particles(const kn_contact_particles* sets, int nset, const kn_collision_scene* cs,
                                      const kn_soft_collider* colliders, const kn_pose* X_WG, double margin,
                                      kn_contact_candidate_list* out, kn_error* err);

/* Broad phase of the particle detection: a conservative bound of collider k (pose X_WG) against a
 * set's particles, so that skipped particles are exactly those whose signed distance is >= margin
 * anyway (the contact set is identical to testing every particle). */
typedef struct {
  int all;                  /* 1: no cheap bound (halfspace): test every particle exactly */
  double lo[3], hi[3];      /* collider world AABB inflated by margin */
  double c[3], r2;          /* bounding sphere centre; (radius + margin)^2 */
} kn_particle_bound;
/* (np positions x) => their AABB (lo, hi) */
void kn_particle_aabb(int np, const double* x, double lo[3], double hi[3]);
/* (collider k at X_WG, margin, the particles' AABB) => bd; returns 0 when no particle of the AABB
 * can be within margin of the collider (skip the pair) */
int kn_particle_bound_init(const kn_collision_scene* cs, int k, const kn_pose* X_WG, double margin, const double lo[3],
                           const double hi[3], kn_particle_bound* bd);
/* (bound, particle position) => 0 when phi(x) >= margin is guaranteed, 1 when the exact SDF is needed */
static inline int kn_particle_bound_test(const kn_particle_bound* bd, const double x[3]) {
  if (bd->all) return 1;
  if (x[0] < bd->lo[0] || x[0] > bd->hi[0] || x[1] < bd->lo[1] || x[1] > bd->hi[1] || x[2] < bd->lo[2] ||
      x[2] > bd->hi[2])
    return 0;
  double d0 = x[0] - bd->c[0], d1 = x[1] - bd->c[1], d2 = x[2] - bd->c[2];
  return d0 * d0 + d1 * d1 + d2 * d2 < bd->r2;
}

/*---- mass properties (mass_properties.c) ----*/

/* Closed triangle mesh (nv vertices xyz, nt triangles of vertex indices, consistently oriented;
 * inward orientation is accepted) => volume [m^3], centre of volume com, and the inertia per unit
 * mass about com I1 (3 x 3 row-major; multiply by the mass), exact by the divergence theorem.
 * KN_ERR_INVALID for a bad index or a mesh that encloses no volume. */
kn_status kn_mass_properties_triangles(int nv, const double* v, int nt, const int* tri, double* volume,
                                       double com[3], double I1[9], kn_error* err);
/* (MESH shape, scale applied) => the same, loading shape->mesh_path (KN_ERR_IO when unreadable). */
kn_status kn_mesh_mass_properties(const kn_shape* shape, double* volume, double com[3], double I1[9], kn_error* err);

/* A closed triangle surface: nv vertices (3 each), nt triangles wound outward. */
typedef struct {
  int nv, nt;
  const double* v;
  const int* tri;
  double* own;            /* a box's corners (v; freed by kn_triangles_free), NULL for a mesh */
} kn_triangles;
/* (collision scene, BOX or MESH collider i) => its surface in the geometry frame: a box's 8 corners
 * and 12 triangles, a mesh as the scene loaded it for detection (kn_collider_mesh; borrowed, valid
 * while the scene is) (shape_triangles.c). KN_ERR_UNSUPPORTED for the other shapes (curved primitives
 * are not tessellated, a half-space is unbounded). */
kn_status kn_shape_triangles(const kn_collision_scene* cs, int i, kn_triangles* out, kn_error* err);
void kn_triangles_free(kn_triangles* t);

/* Free the strings a geometry owns (not the struct itself). */
void kn_geometry_clear(kn_geometry* g);

/*---- pair distances for barrier and continuous-penalty backends (pair_distance.c, IPC digest §6) ----*/

/* The closest sub-stencil of a point-triangle stencil (p, t0, t1, t2) or an edge-edge stencil
 * (a0, a1, b0, b1), 12 doubles: v holds stencil vertex indices. PP: v[0], v[1]; PE: point v[0],
 * edge (v[1], v[2]); PT: (p, t0, t1, t2) = 0..3; EE: (a0, a1, b0, b1) = 0..3. */
typedef enum { KN_DIST_PP = 0, KN_DIST_PE = 1, KN_DIST_PT = 2, KN_DIST_EE = 3 } kn_dist_kind;
typedef struct {
  kn_dist_kind kind;
  int v[4];
} kn_dist_case;
/* the case by Voronoi regions (edges t0t1, t1t2, t2t0 tested in that order, then vertices) */
kn_dist_case kn_dist_point_triangle_case(const double x[12]);
/* the case by the closest points of the two segments; nearly parallel or coplanar edges
 * (|u x v|^2 < 1e-20 |u|^2 |v|^2) are given a point-edge case, never the line-line one */
kn_dist_case kn_dist_edge_edge_case(const double x[12]);
/* (stencil, its case) => the squared distance of that case (returned), its gradient (g, 12) and
 * Hessian (H, 144 row-major) over the stencil's coordinates when non-NULL; smooth within a case */
double kn_dist_eval(const double x[12], kn_dist_case c, double g[12], double H[144]);
/* edge-edge stencil, eps_x = 1e-3 |a1 - a0|^2 |b1 - b0|^2 at rest => e = 1 - (1 - c / eps_x)^2 for
 * c = |(a1 - a0) x (b1 - b0)|^2 < eps_x, else 1 (returned); its gradient and Hessian when non-NULL */
double kn_dist_edge_mollifier(const double x[12], double eps_x, double g[12], double H[144]);

/* (stencil x, its displacement over the step dx, both 12 doubles; edge_edge: 0 point-triangle, 1
 * edge-edge; c: the conservative rescaling (0.9); xi: thickness (0)) => 1 and *toi in [0, 1] when
 * the pair would come closer than (1 - c) times its distance at t = 0 within the step (x + t dx,
 * additive CCD: *toi is before the first contact), 0 and *toi = 1 otherwise (pair_ccd.c) */
int kn_pair_ccd(const double x[12], const double dx[12], int edge_edge, double c, double xi, double* toi);
/* 1 when the segment e0-e1 meets the triangle t0 t1 t2 (a segment in the triangle's plane: 0) */
int kn_edge_triangle_intersect(const double e0[3], const double e1[3], const double t0[3], const double t1[3],
                               const double t2[3]);

/*---- swept pair broad phase for mesh-mesh contact (swept_pairs.c, IPC digest §4.3, §7.4) ----*/

/* A triangle surface moving linearly over a step: vertex i from x0[3i..3i+3) at the start to
 * x1[3i..3i+3) at the predicted end (x1 NULL: it stays at x0). All arrays are borrowed. */
typedef struct {
  int nvert;
  const double *x0, *x1;  /* 3 * nvert each */
  int ntri;
  const int* tri;         /* 3 * ntri vertex indices */
  int nedge;
  const int* edge;        /* 2 * nedge vertex indices */
  int nvert_used;
  const int* vert;        /* the vertices that take part in vertex-triangle pairs (e.g. an FEM body's
                             surface vertices), nvert_used of them; NULL: every vertex 0 .. nvert-1 */
} kn_swept_surface;
/* Index pairs, 2 ints each, sorted by (first, second); they live in the scratch until its next call. */
typedef struct {
  int nvt_ab, nvt_ba, nee;
  const int* vt_ab; /* (vertex of A, triangle of B); self-contact: (vertex, triangle) not having it */
  const int* vt_ba; /* (vertex of B, triangle of A); none for self-contact */
  const int* ee;    /* (edge of A, edge of B); self-contact: (i, j), i < j, sharing no vertex */
} kn_swept_pairs;
typedef struct kn_swept_scratch kn_swept_scratch;
/* => an empty scratch (grows to the largest call; NULL when out of memory) */
kn_swept_scratch* kn_swept_scratch_create(void);
void kn_swept_scratch_free(kn_swept_scratch* s);
/* (surfaces a and b, or b NULL for a's self-contact; margin >= 0) => every vertex-triangle and
 * edge-edge pair whose swept boxes (each primitive's vertices at x0 and x1), inflated by margin / 2
 * each, overlap: a superset of the pairs that come closer than margin at any time of the linear
 * motion. Deterministic (sorted); no allocation once the scratch is large enough. KN_ERR_INVALID
 * (a bad count, array or index; a margin not finite and >= 0), KN_ERR_NOMEM */
kn_status kn_swept_pairs_find(kn_swept_scratch* s, const kn_swept_surface* a, const kn_swept_surface* b, double margin,
                              kn_swept_pairs* out, kn_error* err);
/* (surfaces a and b, or b NULL, at x0 (and x1 when set), margin, candidates `in` of the same surfaces
 * that hold every pair kn_swept_pairs_find would report, e.g. its answer, copied, over a longer sweep
 * or at a larger margin) => in *out the candidates whose boxes overlap at this margin, in their order:
 * kn_swept_pairs_find's answer entry for entry (the same boxes and test), in O(primitives +
 * candidates) without the trees; it lives in the scratch until its next call. KN_ERR_INVALID (as
 * kn_swept_pairs_find; a candidate index out of range; `in` in the scratch's own arrays),
 * KN_ERR_NOMEM */
kn_status kn_swept_pairs_filter(kn_swept_scratch* s, const kn_swept_surface* a, const kn_swept_surface* b,
                                double margin, const kn_swept_pairs* in, kn_swept_pairs* out, kn_error* err);
/* (ntri triangles) => the undirected edges, (lo, hi) with lo < hi, sorted, each once: *edge holds
 * 2 * *nedge ints, malloc'd (the caller frees). KN_ERR_NOMEM */
kn_status kn_surface_edges(int ntri, const int* tri, int* nedge, int** edge, kn_error* err);

#ifdef __cplusplus
}
#endif
#endif
