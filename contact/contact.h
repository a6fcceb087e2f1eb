/* knead/contact — shapes on bodies (and, with the rigid-contact issue, signed distances, broad
 * and narrow phase and contact points).
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

/* (X_WG per collider: world pose of each collider's geometry frame) => contact points for all
 * pairs with phi < margin. Broad phase first (AABBs inflated by margin), then the narrow phase:
 * analytic pairs where they exist (sphere-anything, box-halfspace, capsule-capsule, ...), libccd
 * GJK/EPA/MPR for convex pairs, point-vs-mesh BVH queries for meshes. Enough points per pair for
 * stable resting (a box on a half-space: each corner below the margin). A pair with a mesh side
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

/* Signed distance from the world point x to the shape at pose X_WG, and its gradient (unit,
 * outward). Analytic for primitives; meshes use the scene's BVH (collider index i). */
double kn_collider_signed_distance(const kn_collision_scene* cs, int i, const kn_pose* X_WG, const double x[3],
                                   double grad[3]);

/*---- mass properties (mass_properties.c) ----*/

/* Closed triangle mesh (nv vertices xyz, nt triangles of vertex indices, consistently oriented;
 * inward orientation is accepted) => volume [m^3], centre of volume com, and the inertia per unit
 * mass about com I1 (3 x 3 row-major; multiply by the mass), exact by the divergence theorem.
 * KN_ERR_INVALID for a bad index or a mesh that encloses no volume. */
kn_status kn_mass_properties_triangles(int nv, const double* v, int nt, const int* tri, double* volume,
                                       double com[3], double I1[9], kn_error* err);
/* (MESH shape, scale applied) => the same, loading shape->mesh_path (KN_ERR_IO when unreadable). */
kn_status kn_mesh_mass_properties(const kn_shape* shape, double* volume, double com[3], double I1[9], kn_error* err);

/* Free the strings a geometry owns (not the struct itself). */
void kn_geometry_clear(kn_geometry* g);

#ifdef __cplusplus
}
#endif
#endif
