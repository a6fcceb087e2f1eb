/* Internal to contact/: a bounding volume hierarchy over a set of axis-aligned boxes
 * (aabb_tree.c), the broad phase of the swept pairs (swept_pairs.c; penalty digest §5.4). Not
 * installed. */
#ifndef KNEAD_CONTACT_AABB_TREE_H
#define KNEAD_CONTACT_AABB_TREE_H

/* One node: the union of its boxes perm[first .. first + count); a leaf when left < 0, else
 * children left and left + 1. */
typedef struct {
  double box[6]; /* lo[3], hi[3] */
  int first, count, left;
} kn_aabb_node;

/* The tree over n borrowed boxes (6 doubles each: lo[3], hi[3]). Its arrays grow to the largest
 * build and are reused: a build allocates only when it needs more. Zero-initialize before the
 * first build ({0}); kn_aabb_tree_release frees the arrays. */
typedef struct {
  const double* box;  /* the boxes of the last build (borrowed) */
  int n, nnode;
  kn_aabb_node* node; /* nnode <= 2n - 1; node 0 is the root */
  int* perm;          /* n box indices in leaf order */
  double* lbox;       /* 6n: the boxes in leaf order (box perm[i] at 6i), read by the queries */
  double* cent;       /* 3n: the boxes' centres, for the build */
  int node_cap, perm_cap, lbox_cap, cent_cap;
} kn_aabb_tree;

/* (n boxes, 6 doubles each) => the tree over them: median splits along the longest extent of the
 * boxes' centres (ties by index, so the tree depends only on the boxes), leaves of at most 4 boxes,
 * depth <= 32. A box with a NaN bound is in the tree but overlaps nothing. 0 when out of memory
 * (the tree is then empty), else 1. */
int kn_aabb_tree_build(kn_aabb_tree* t, const double* box, int n);

/* (tree, new boxes: as many as at its build, box i the same primitive) => the node boxes recomputed
 * bottom-up, O(n), the tree's shape kept: queries stay exact (a node's box is again the union of
 * its boxes), only slower when the boxes moved far from where they were at the build. Returns 1. */
int kn_aabb_tree_refit(kn_aabb_tree* t, const double* box);

/* Called for each box j of the tree overlapping the query box (closed intervals on every axis, the
 * same test as kn_aabb_overlap), in no set order; 0 stops the query. */
typedef int (*kn_aabb_hit_fn)(void* ctx, int j);
/* (tree, query box) => hit on every overlapping box; 0 when a hit said stop, else 1 */
int kn_aabb_tree_query(const kn_aabb_tree* t, const double q[6], kn_aabb_hit_fn hit, void* ctx);

/* Called for each pair i, j of the tree's boxes that overlap, i != j, each unordered pair once, in
 * no set order (either index first); 0 stops. */
typedef int (*kn_aabb_pair_fn)(void* ctx, int i, int j);
/* (tree) => pair on every two of its boxes that overlap, by a traversal of the tree against itself
 * (half the work of a query per box); 0 when a pair said stop, else 1 */
int kn_aabb_tree_self_pairs(const kn_aabb_tree* t, kn_aabb_pair_fn pair, void* ctx);

void kn_aabb_tree_release(kn_aabb_tree* t);

/* whether boxes a and b (lo[3], hi[3]) overlap as closed intervals on all three axes (NaN: no) */
static inline int kn_aabb_overlap(const double* a, const double* b) {
  return a[0] <= b[3] && b[0] <= a[3] && a[1] <= b[4] && b[1] <= a[4] && a[2] <= b[5] && b[2] <= a[5];
}

#endif
