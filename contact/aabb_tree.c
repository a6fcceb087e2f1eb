/* A bounding volume hierarchy over axis-aligned boxes (penalty digest §5.4: a tree of swept boxes,
 * rebuilt each step), the broad phase of contact/swept_pairs.c. Built top-down: each node's boxes
 * are split at the median of their centres along the axis where the centres spread most (a
 * quickselect, ties by box index), so the tree is balanced (depth <= 32), the build is O(n log n)
 * and it depends only on the boxes. A query descends into the nodes whose box overlaps the query's
 * and tests the leaves' boxes, so it reports exactly the boxes that overlap: a node's box is the
 * union (min / max, exact) of its boxes. Unlike the sweep along one axis it replaced, a closed
 * surface, whose faces all overlap on any one axis, costs O(n log n + pairs), not O(n^2). */
#include "contact/aabb_tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LEAF_SIZE 4
#define STACK_SIZE 64 /* > depth + 1: a median split halves the boxes, 2^31 of them fit in 30 levels */

// (array *p of *cap elements of size sz, need n) => grown to >= n; 0 out of memory
static int grow(void** p, int* cap, int n, size_t sz) {
  if (n <= *cap) return 1;
  int c = *cap > 64 ? *cap : 64;
  while (c < n) c = c > (1 << 29) ? n : 2 * c;
  void* q = realloc(*p, (size_t)c * sz);
  if (!q) return 0;
  *p = q, *cap = c;
  return 1;
}

/* min and max that keep a when b is NaN, as fmin / fmax do (a never is NaN here), inlined */
static double lower(double a, double b) { return b < a ? b : a; }
static double upper(double a, double b) { return b > a ? b : a; }

static double centre(const double* b, int k) {
  double c = 0.5 * (b[k] + b[3 + k]);
  return isnan(c) ? 0 : c; /* a NaN or infinite box still sorts; it overlaps nothing */
}

/* the order of the split: by centre along the axis (key = the centres from that axis on, 3 per box),
 * ties by index (a total order: the centres are not NaN) */
static int before(const double* key, int a, int b) {
  double ka = key[3 * a], kb = key[3 * b];
  return ka < kb || (ka == kb && a < b);
}

// (p[0 .. n), k) => p rearranged so that p[k] is the k-th in `before` order, the smaller ones before it
static void select_kth(int* p, int n, int k, const double* key) {
  int lo = 0, hi = n - 1;
  while (hi > lo) {
    int mid = lo + (hi - lo) / 2, t;
    /* median of three as the pivot: sorted and reversed runs (grids of vertices) split evenly */
    if (before(key, p[mid], p[lo])) t = p[mid], p[mid] = p[lo], p[lo] = t;
    if (before(key, p[hi], p[lo])) t = p[hi], p[hi] = p[lo], p[lo] = t;
    if (before(key, p[hi], p[mid])) t = p[hi], p[hi] = p[mid], p[mid] = t;
    int pivot = p[mid], i = lo, j = hi;
    while (i <= j) {
      while (before(key, p[i], pivot)) i++;
      while (before(key, pivot, p[j])) j--;
      if (i <= j) t = p[i], p[i] = p[j], p[j] = t, i++, j--;
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return; /* j < k < i: p[k] is the pivot */
  }
}

// (node id, its boxes perm[first .. first + count), their centres) => the node and its subtree
static void build_node(kn_aabb_tree* t, int id, int first, int count) {
  kn_aabb_node* nd = &t->node[id];
  nd->first = first, nd->count = count, nd->left = -1;
  if (count <= LEAF_SIZE) {
    for (int k = 0; k < 3; k++) nd->box[k] = INFINITY, nd->box[3 + k] = -INFINITY;
    for (int i = first; i < first + count; i++) {
      const double* b = t->box + 6 * t->perm[i];
      for (int k = 0; k < 3; k++) nd->box[k] = lower(nd->box[k], b[k]), nd->box[3 + k] = upper(nd->box[3 + k], b[3 + k]);
    }
    return;
  }
  double clo[3] = {INFINITY, INFINITY, INFINITY}, chi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int i = first; i < first + count; i++)
    for (int k = 0; k < 3; k++) clo[k] = lower(clo[k], t->cent[3 * t->perm[i] + k]), chi[k] = upper(chi[k], t->cent[3 * t->perm[i] + k]);
  int axis = 0;
  for (int k = 1; k < 3; k++)
    if (chi[k] - clo[k] > chi[axis] - clo[axis]) axis = k;
  int half = count / 2;
  select_kth(t->perm + first, count, half, t->cent + axis);
  int left = t->nnode;
  t->nnode += 2;
  nd->left = left;
  build_node(t, left, first, half);
  build_node(t, left + 1, first + half, count - half);
  /* the union of the children's boxes: exact, as a union of the boxes */
  const double *l = t->node[left].box, *r = t->node[left + 1].box;
  for (int k = 0; k < 3; k++) nd->box[k] = lower(l[k], r[k]), nd->box[3 + k] = upper(l[3 + k], r[3 + k]);
}

int kn_aabb_tree_build(kn_aabb_tree* t, const double* box, int n) {
  t->box = box, t->n = 0, t->nnode = 0;
  if (n <= 0) return 1;
  if (!grow((void**)&t->node, &t->node_cap, 2 * n, sizeof *t->node) || !grow((void**)&t->perm, &t->perm_cap, n, sizeof(int)) ||
      !grow((void**)&t->cent, &t->cent_cap, 3 * n, sizeof(double)) || !grow((void**)&t->lbox, &t->lbox_cap, 6 * n, sizeof(double)))
    return 0;
  for (int i = 0; i < n; i++) {
    t->perm[i] = i;
    for (int k = 0; k < 3; k++) t->cent[3 * i + k] = centre(box + 6 * i, k);
  }
  t->n = n, t->nnode = 1;
  build_node(t, 0, 0, n);
  for (int i = 0; i < n; i++) memcpy(t->lbox + 6 * i, box + 6 * t->perm[i], 6 * sizeof(double));
  return 1;
}

int kn_aabb_tree_refit(kn_aabb_tree* t, const double* box) {
  t->box = box;
  for (int i = 0; i < t->n; i++) memcpy(t->lbox + 6 * i, box + 6 * t->perm[i], 6 * sizeof(double));
  /* children come after their parent: from the last node back, each sees its children refitted */
  for (int id = t->nnode - 1; id >= 0; id--) {
    kn_aabb_node* nd = &t->node[id];
    double* b = nd->box;
    if (nd->left < 0) {
      for (int k = 0; k < 3; k++) b[k] = INFINITY, b[3 + k] = -INFINITY;
      for (int i = nd->first; i < nd->first + nd->count; i++)
        for (int k = 0; k < 3; k++) b[k] = lower(b[k], t->lbox[6 * i + k]), b[3 + k] = upper(b[3 + k], t->lbox[6 * i + 3 + k]);
    } else {
      const double *l = t->node[nd->left].box, *r = t->node[nd->left + 1].box;
      for (int k = 0; k < 3; k++) b[k] = lower(l[k], r[k]), b[3 + k] = upper(l[3 + k], r[3 + k]);
    }
  }
  return 1;
}

int kn_aabb_tree_query(const kn_aabb_tree* t, const double q[6], kn_aabb_hit_fn hit, void* ctx) {
  if (t->nnode == 0) return 1;
  int stack[STACK_SIZE], top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const kn_aabb_node* nd = &t->node[stack[--top]];
    if (!kn_aabb_overlap(nd->box, q)) continue;
    if (nd->left < 0) {
      for (int i = nd->first; i < nd->first + nd->count; i++)
        if (kn_aabb_overlap(t->lbox + 6 * i, q) && !hit(ctx, t->perm[i])) return 0;
    } else {
      stack[top++] = nd->left + 1, stack[top++] = nd->left;
    }
  }
  return 1;
}

// (leaves a and b, b after a or b = a) => pair on their overlapping boxes (within one leaf: each pair once)
static int leaf_pairs(const kn_aabb_tree* t, const kn_aabb_node* a, const kn_aabb_node* b, kn_aabb_pair_fn pair,
                      void* ctx) {
  for (int i = a->first; i < a->first + a->count; i++)
    for (int j = a == b ? i + 1 : b->first; j < b->first + b->count; j++)
      if (kn_aabb_overlap(t->lbox + 6 * i, t->lbox + 6 * j) && !pair(ctx, t->perm[i], t->perm[j])) return 0;
  return 1;
}

/* nodes a and b (a = b: the pairs within a; else disjoint subtrees) => their overlapping pairs.
 * Recursion depth: at most the two depths added. */
static int self_pairs(const kn_aabb_tree* t, int a, int b, kn_aabb_pair_fn pair, void* ctx) {
  const kn_aabb_node *na = &t->node[a], *nb = &t->node[b];
  if (a == b) {
    if (na->left < 0) return leaf_pairs(t, na, na, pair, ctx);
    return self_pairs(t, na->left, na->left, pair, ctx) && self_pairs(t, na->left + 1, na->left + 1, pair, ctx) &&
           self_pairs(t, na->left, na->left + 1, pair, ctx);
  }
  if (!kn_aabb_overlap(na->box, nb->box)) return 1;
  if (na->left < 0 && nb->left < 0) return leaf_pairs(t, na, nb, pair, ctx);
  if (nb->left < 0 || (na->left >= 0 && na->count >= nb->count)) /* open the larger one */
    return self_pairs(t, na->left, b, pair, ctx) && self_pairs(t, na->left + 1, b, pair, ctx);
  return self_pairs(t, a, nb->left, pair, ctx) && self_pairs(t, a, nb->left + 1, pair, ctx);
}

int kn_aabb_tree_self_pairs(const kn_aabb_tree* t, kn_aabb_pair_fn pair, void* ctx) {
  return t->nnode == 0 || self_pairs(t, 0, 0, pair, ctx);
}

void kn_aabb_tree_release(kn_aabb_tree* t) {
  if (!t) return;
  free(t->node), free(t->perm), free(t->cent), free(t->lbox);
  *t = (kn_aabb_tree){0};
}
