/* The box tree (contact/aabb_tree.c) against brute force: random boxes of mixed sizes (points,
 * slivers, boxes spanning everything, duplicates, shared centres) and random queries: every query
 * must report exactly the boxes that overlap it (closed intervals), each once. The tree is reused
 * across builds of different sizes; a box with a NaN bound overlaps nothing; a hit returning 0
 * stops the query; boxes on a line (a sorted run, the median split's worst order for a plain
 * quickselect) give a balanced tree. The tree against itself gives every overlapping pair once; a
 * tree refitted to moved boxes stays exact. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/aabb_tree.h"

static double urand(unsigned* s) {
  *s = *s * 1103515245u + 12345u;
  return ((*s >> 8) & 0xffffff) / (double)0x1000000;
}

/* n boxes in the unit cube: most small, some points, slivers, a few huge, some repeated */
static void random_boxes(int n, unsigned seed, double* b) {
  for (int i = 0; i < n; i++) {
    double r = urand(&seed), size = r < 0.1 ? 0 : r < 0.2 ? 2.0 : r < 0.3 ? 1e-9 : 0.1 * urand(&seed);
    for (int k = 0; k < 3; k++) {
      double c = urand(&seed), h = k == 1 && r > 0.9 ? 0.5 : size * urand(&seed);
      b[6 * i + k] = c - h, b[6 * i + 3 + k] = c + h;
    }
    if (i > 0 && urand(&seed) < 0.1) memcpy(b + 6 * i, b + 6 * (i - 1), 6 * sizeof(double)); /* a duplicate */
    if (i > 0 && urand(&seed) < 0.05) /* the same centre as the previous box, another size */
      for (int k = 0; k < 3; k++) {
        double c = 0.5 * (b[6 * (i - 1) + k] + b[6 * (i - 1) + 3 + k]);
        b[6 * i + k] = c - 0.01, b[6 * i + 3 + k] = c + 0.01;
      }
  }
}

typedef struct {
  int n, *hit;
  int stop_after; /* 0: never stop */
} hits;
static int collect(void* ctx, int j) {
  hits* h = ctx;
  h->hit[h->n++] = j;
  return !(h->stop_after && h->n >= h->stop_after);
}
static int cmp_int(const void* a, const void* b) { return (*(const int*)a > *(const int*)b) - (*(const int*)a < *(const int*)b); }

static int overlap_brute(const double* a, const double* b) {
  for (int k = 0; k < 3; k++)
    if (!(a[k] <= b[3 + k] && b[k] <= a[3 + k])) return 0;
  return 1;
}

// (tree over n boxes b, query q) => asserts the reported set is the brute-force set; its size
static int check_query(const kn_aabb_tree* t, const double* b, int n, const double q[6], int* buf) {
  hits h = {0, buf, 0};
  cr_assert_eq(kn_aabb_tree_query(t, q, collect, &h), 1);
  qsort(h.hit, (size_t)h.n, sizeof(int), cmp_int);
  int m = 0;
  for (int j = 0; j < n; j++)
    if (overlap_brute(q, b + 6 * j)) {
      cr_assert_lt(m, h.n, "box %d overlaps the query but is not reported", j);
      cr_assert_eq(h.hit[m], j, "reported %d, brute force %d (a miss, a duplicate or a false hit)", h.hit[m], j);
      m++;
    }
  cr_assert_eq(m, h.n, "%d boxes reported, %d overlap", h.n, m);
  return m;
}

Test(aabb_tree, random_boxes_against_brute_force) {
  kn_aabb_tree t = {0};
  int sizes[] = {1, 2, 4, 5, 9, 17, 300, 2000, 40}; /* the last reuses the larger arrays */
  int nsizes = (int)(sizeof sizes / sizeof *sizes);
  double* b = malloc(6 * 2000 * sizeof(double));
  int* buf = malloc(2000 * sizeof(int));
  long total = 0;
  for (int s = 0; s < nsizes; s++) {
    int n = sizes[s];
    random_boxes(n, 7u + (unsigned)s, b);
    cr_assert_eq(kn_aabb_tree_build(&t, b, n), 1);
    cr_assert_leq(t.nnode, 2 * n - 1);
    for (int i = 0; i < n; i++) total += check_query(&t, b, n, b + 6 * i, buf); /* each box meets itself */
    unsigned seed = 99u + (unsigned)s;
    for (int r = 0; r < 200; r++) {
      double q[6];
      for (int k = 0; k < 3; k++) {
        double c = 1.2 * urand(&seed) - 0.1, h = 0.2 * urand(&seed);
        q[k] = c - h, q[3 + k] = c + h;
      }
      total += check_query(&t, b, n, q, buf);
    }
  }
  cr_assert_gt(total, 2000, "the queries should find boxes (%ld)", total);
  /* touching faces count (closed intervals): a box ending where the query starts */
  double two[12] = {0, 0, 0, 1, 1, 1, 1, 0, 0, 2, 1, 1};
  cr_assert_eq(kn_aabb_tree_build(&t, two, 2), 1);
  cr_assert_eq(check_query(&t, two, 2, (double[6]){2, 1, 1, 3, 3, 3}, buf), 1);
  cr_assert_eq(check_query(&t, two, 2, (double[6]){1, 0.5, 0.5, 1, 0.5, 0.5}, buf), 2);
  /* an empty tree reports nothing */
  cr_assert_eq(kn_aabb_tree_build(&t, b, 0), 1);
  cr_assert_eq(check_query(&t, b, 0, (double[6]){-9, -9, -9, 9, 9, 9}, buf), 0);
  kn_aabb_tree_release(&t);
  free(b), free(buf);
}

Test(aabb_tree, nan_boxes_overlap_nothing) {
  kn_aabb_tree t = {0};
  int n = 50;
  double* b = malloc(6 * (size_t)n * sizeof(double));
  int buf[50];
  random_boxes(n, 3u, b);
  b[6 * 4 + 1] = NAN, b[6 * 9 + 5] = NAN, b[6 * 20 + 0] = -INFINITY, b[6 * 20 + 3] = INFINITY;
  for (int k = 0; k < 6; k++) b[6 * 30 + k] = NAN;
  cr_assert_eq(kn_aabb_tree_build(&t, b, n), 1);
  for (int i = 0; i < n; i++) {
    int m = check_query(&t, b, n, b + 6 * i, buf);
    if (i == 4 || i == 9 || i == 30) cr_assert_eq(m, 0, "box %d has a NaN bound", i);
  }
  /* box 20 spans all of x: a query far out along x still meets it when y and z overlap */
  double q[6] = {100, b[6 * 20 + 1], b[6 * 20 + 2], 101, b[6 * 20 + 1], b[6 * 20 + 2]};
  cr_assert_geq(check_query(&t, b, n, q, buf), 1);
  kn_aabb_tree_release(&t);
  free(b);
}

Test(aabb_tree, a_hit_stops_the_query) {
  kn_aabb_tree t = {0};
  double b[6 * 20];
  for (int i = 0; i < 20; i++)
    for (int k = 0; k < 3; k++) b[6 * i + k] = 0, b[6 * i + 3 + k] = 1;
  cr_assert_eq(kn_aabb_tree_build(&t, b, 20), 1);
  int buf[20];
  hits h = {0, buf, 3};
  cr_assert_eq(kn_aabb_tree_query(&t, (double[6]){0, 0, 0, 1, 1, 1}, collect, &h), 0);
  cr_assert_eq(h.n, 3);
  kn_aabb_tree_release(&t);
}

static int depth(const kn_aabb_tree* t, int id) {
  const kn_aabb_node* nd = &t->node[id];
  if (nd->left < 0) return 1;
  int a = depth(t, nd->left), b = depth(t, nd->left + 1);
  return 1 + (a > b ? a : b);
}

Test(aabb_tree, sorted_runs_give_a_balanced_tree) {
  /* 2^16 unit boxes along x in order, then reversed, then all with one centre (ties by index):
   * median splits give leaves of 4 boxes at depth log2(2^16 / 4) + 1 = 15 */
  int n = 1 << 16;
  double* b = malloc(6 * (size_t)n * sizeof(double));
  kn_aabb_tree t = {0};
  for (int order = 0; order < 3; order++) {
    for (int i = 0; i < n; i++) {
      double x = order == 0 ? i : order == 1 ? n - i : 0;
      double box[6] = {x, 0, 0, x + 1, 1, 1};
      memcpy(b + 6 * i, box, sizeof box);
    }
    cr_assert_eq(kn_aabb_tree_build(&t, b, n), 1);
    cr_assert_eq(depth(&t, 0), 15, "order %d: depth %d", order, depth(&t, 0));
    cr_assert_eq(t.nnode, 2 * (n / 4) - 1);
  }
  int buf[8];
  cr_assert_eq(kn_aabb_tree_build(&t, b, 5), 1);
  cr_assert_eq(check_query(&t, b, 5, b, buf), 5);
  kn_aabb_tree_release(&t);
  free(b);
}

typedef struct {
  int n;
  int* pair; /* 2 per pair, (smaller, larger) */
} pairs;
static int collect_pair(void* ctx, int i, int j) {
  pairs* p = ctx;
  p->pair[2 * p->n] = i < j ? i : j, p->pair[2 * p->n + 1] = i < j ? j : i, p->n++;
  return 1;
}
static int cmp_pair(const void* a, const void* b) {
  const int *x = a, *y = b;
  return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

Test(aabb_tree, self_pairs_against_brute_force) {
  /* every unordered pair of overlapping boxes, i != j, exactly once (then sorted, compared entry
   * for entry with the brute-force list), at sizes from one leaf to many, NaN boxes included */
  kn_aabb_tree t = {0};
  int sizes[] = {1, 3, 4, 6, 33, 700};
  double* b = malloc(6 * 700 * sizeof(double));
  int* got = malloc(2 * 700 * 700 * sizeof(int));
  int* want = malloc(2 * 700 * 700 * sizeof(int));
  long total = 0;
  for (int s = 0; s < 6; s++) {
    int n = sizes[s];
    random_boxes(n, 21u + (unsigned)s, b);
    if (n > 10) b[6 * 7 + 2] = NAN;
    cr_assert_eq(kn_aabb_tree_build(&t, b, n), 1);
    pairs p = {0, got};
    cr_assert_eq(kn_aabb_tree_self_pairs(&t, collect_pair, &p), 1);
    qsort(got, (size_t)p.n, 2 * sizeof(int), cmp_pair);
    int m = 0;
    for (int i = 0; i < n; i++)
      for (int j = i + 1; j < n; j++)
        if (overlap_brute(b + 6 * i, b + 6 * j)) want[2 * m] = i, want[2 * m + 1] = j, m++;
    cr_assert_eq(p.n, m, "n %d: %d pairs, brute force %d", n, p.n, m);
    for (int k = 0; k < 2 * m; k++) cr_assert_eq(got[k], want[k], "n %d: pair %d differs", n, k / 2);
    total += m;
  }
  cr_assert_gt(total, 1000, "the boxes should overlap (%ld pairs)", total);
  kn_aabb_tree_release(&t);
  free(b), free(got), free(want);
}

Test(aabb_tree, refit_after_motion_stays_exact) {
  /* a tree built over one set of boxes, then refitted to other boxes (the same count: every box
   * moved, some far, some to NaN) answers queries and self pairs exactly as brute force */
  kn_aabb_tree t = {0};
  int n = 400;
  double* b = malloc(6 * (size_t)n * sizeof(double));
  int* buf = malloc((size_t)n * sizeof(int));
  int* got = malloc(2 * (size_t)n * (size_t)n * sizeof(int));
  random_boxes(n, 5u, b);
  cr_assert_eq(kn_aabb_tree_build(&t, b, n), 1);
  for (int round = 0; round < 3; round++) {
    unsigned seed = 40u + (unsigned)round;
    for (int i = 0; i < n; i++) {
      double d = round == 2 && i % 10 == 0 ? 3 * urand(&seed) : 0.05 * urand(&seed);
      for (int k = 0; k < 3; k++) b[6 * i + k] += d, b[6 * i + 3 + k] += d;
    }
    if (round == 1) b[6 * 17 + 4] = NAN;
    cr_assert_eq(kn_aabb_tree_refit(&t, b), 1);
    for (int i = 0; i < n; i++) check_query(&t, b, n, b + 6 * i, buf);
    pairs p = {0, got};
    cr_assert_eq(kn_aabb_tree_self_pairs(&t, collect_pair, &p), 1);
    int m = 0;
    for (int i = 0; i < n; i++)
      for (int j = i + 1; j < n; j++) m += overlap_brute(b + 6 * i, b + 6 * j);
    cr_assert_eq(p.n, m, "round %d: %d self pairs, brute force %d", round, p.n, m);
  }
  kn_aabb_tree_release(&t);
  free(b), free(buf), free(got);
}
