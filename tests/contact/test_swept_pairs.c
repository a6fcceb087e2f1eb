/* The swept pair broad phase (contact/swept_pairs.c) against brute force: two jittered triangle
 * sheets, one moving through the other, and one sheet folded onto itself (self-contact), at
 * several margins: the pair lists must equal, entry for entry and in order, the brute-force test
 * of every pair's swept, margin-inflated boxes with the same rules (no shared vertex on one
 * surface, each self edge-edge pair once). Conservativeness: every vertex-triangle and edge-edge
 * pair whose true distance (contact/pair_distance.c) is below the margin at any of 9 times of the
 * linear motion is in the list. The same on closed surfaces (flattened jittered spheres, against
 * each other and against themselves), where every face overlaps many others along any one axis.
 * The scratch is reused across calls of different sizes, and bad input is refused.
 * kn_swept_pairs_filter: a sweep's candidates at twice the margin, filtered at points of the
 * motion, give kn_swept_pairs_find's pairs there, entry for entry. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/contact.h"

//---- sheets ----

typedef struct {
  int nv, nt, ne;
  double *x0, *x1;
  int *tri, *edge;
} sheet;

static double urand(unsigned* s) {
  *s = *s * 1103515245u + 12345u;
  return ((*s >> 8) & 0xffffff) / (double)0x1000000;
}

/* n x n vertices on [0, 1]^2 mapped by (u, v) => (u, v, 0) jittered, moved by off, or folded
 * (fold: the v > 1/2 half bent back over the other half, 0.02 above it) */
static sheet make_sheet(int n, unsigned seed, const double off[3], const double move[3], int fold) {
  sheet s = {n * n, 2 * (n - 1) * (n - 1), 0, NULL, NULL, NULL, NULL};
  s.x0 = malloc(3 * (size_t)s.nv * sizeof(double)), s.x1 = malloc(3 * (size_t)s.nv * sizeof(double));
  s.tri = malloc(3 * (size_t)s.nt * sizeof(int));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double u = i / (double)(n - 1), v = j / (double)(n - 1), *x = s.x0 + 3 * (n * i + j);
      x[0] = u + 0.2 * (urand(&seed) - 0.5) / n, x[1] = v, x[2] = 0.01 * (urand(&seed) - 0.5);
      if (fold && v > 0.5) x[1] = 1 - v, x[2] += 0.02 + 0.2 * (v - 0.5);
      for (int k = 0; k < 3; k++) {
        x[k] += off[k];
        s.x1[3 * (n * i + j) + k] = x[k] + move[k] + 0.02 * (urand(&seed) - 0.5);
      }
    }
  int t = 0;
  for (int i = 0; i + 1 < n; i++)
    for (int j = 0; j + 1 < n; j++) {
      int a = n * i + j, b = a + n, c = b + 1, d = a + 1;
      s.tri[3 * t] = a, s.tri[3 * t + 1] = b, s.tri[3 * t + 2] = c, t++;
      s.tri[3 * t] = a, s.tri[3 * t + 1] = c, s.tri[3 * t + 2] = d, t++;
    }
  cr_assert_eq(kn_surface_edges(s.nt, s.tri, &s.ne, &s.edge, NULL), KN_OK);
  return s;
}
/* a closed surface: a UV sphere of nlat bands and nlon sectors, radius 0.5, jittered, flattened to
 * height flat, moved by off and over the step by move (plus jitter) */
static sheet make_sphere(int nlat, int nlon, unsigned seed, double flat, const double off[3], const double move[3]) {
  sheet s = {2 + (nlat - 1) * nlon, 2 * nlon * (nlat - 1), 0, NULL, NULL, NULL, NULL};
  s.x0 = malloc(3 * (size_t)s.nv * sizeof(double)), s.x1 = malloc(3 * (size_t)s.nv * sizeof(double));
  s.tri = malloc(3 * (size_t)s.nt * sizeof(int));
  for (int v = 0; v < s.nv; v++) {
    double pi = acos(-1.0), th = v == 0 ? 0 : v == 1 ? pi : pi * (1 + (v - 2) / nlon) / nlat;
    double ph = 2 * pi * ((v - 2) % nlon) / nlon;
    if (v < 2) ph = 0;
    double r = 0.5 * (1 + 0.05 * (urand(&seed) - 0.5)), *x = s.x0 + 3 * v;
    x[0] = r * sin(th) * cos(ph), x[1] = r * sin(th) * sin(ph), x[2] = flat * r * cos(th);
    for (int k = 0; k < 3; k++) {
      x[k] += off[k];
      s.x1[3 * v + k] = x[k] + move[k] + 0.01 * (urand(&seed) - 0.5);
    }
  }
  int t = 0;
  for (int j = 0; j < nlon; j++) { /* the pole fans */
    int a = 2 + j, b = 2 + (j + 1) % nlon, c = 2 + (nlat - 2) * nlon + j, d = 2 + (nlat - 2) * nlon + (j + 1) % nlon;
    s.tri[3 * t] = 0, s.tri[3 * t + 1] = a, s.tri[3 * t + 2] = b, t++;
    s.tri[3 * t] = 1, s.tri[3 * t + 1] = d, s.tri[3 * t + 2] = c, t++;
  }
  for (int i = 0; i + 2 < nlat; i++)
    for (int j = 0; j < nlon; j++) {
      int a = 2 + i * nlon + j, b = 2 + i * nlon + (j + 1) % nlon, c = b + nlon, d = a + nlon;
      s.tri[3 * t] = a, s.tri[3 * t + 1] = d, s.tri[3 * t + 2] = c, t++;
      s.tri[3 * t] = a, s.tri[3 * t + 1] = c, s.tri[3 * t + 2] = b, t++;
    }
  cr_assert_eq(t, s.nt);
  cr_assert_eq(kn_surface_edges(s.nt, s.tri, &s.ne, &s.edge, NULL), KN_OK);
  cr_assert_eq(s.ne, 3 * s.nt / 2, "a closed surface: each edge in two triangles");
  return s;
}
static void free_sheet(sheet* s) { free(s->x0), free(s->x1), free(s->tri), free(s->edge); }
static kn_swept_surface view(const sheet* s, int moving) {
  return (kn_swept_surface){s->nv, s->x0, moving ? s->x1 : NULL, s->nt, s->tri, s->ne, s->edge, 0, NULL};
}

//---- brute force ----

static void box_of(const kn_swept_surface* m, const int* v, int nv, double half, double b[6]) {
  for (int k = 0; k < 3; k++) b[k] = INFINITY, b[3 + k] = -INFINITY;
  for (int a = 0; a < nv; a++)
    for (int t = 0; t < 2; t++) {
      const double* x = t ? m->x1 : m->x0;
      if (!x) continue;
      for (int k = 0; k < 3; k++) b[k] = fmin(b[k], x[3 * v[a] + k]), b[3 + k] = fmax(b[3 + k], x[3 * v[a] + k]);
    }
  for (int k = 0; k < 3; k++) b[k] -= half, b[3 + k] += half;
}
static int boxes_meet(const double* a, const double* b) {
  for (int k = 0; k < 3; k++)
    if (a[k] > b[3 + k] || b[k] > a[3 + k]) return 0;
  return 1;
}
static int shared(const int* a, int na, const int* b, int nb) {
  for (int i = 0; i < na; i++)
    for (int j = 0; j < nb; j++)
      if (a[i] == b[j]) return 1;
  return 0;
}
/* (p's primitives of arity np, q's of arity nq) => the pairs, in (i, j) order; count returned */
static int brute(const kn_swept_surface* p, const int* pi, int nprim_p, int np, const kn_swept_surface* q,
                 const int* qi, int nprim_q, int nq, double margin, int self, int once, int* out) {
  int n = 0;
  for (int i = 0; i < nprim_p; i++) {
    int vi[3];
    for (int a = 0; a < np; a++) vi[a] = pi ? pi[np * i + a] : i;
    double bi[6];
    box_of(p, vi, np, margin / 2, bi);
    for (int j = once ? i + 1 : 0; j < nprim_q; j++) {
      double bj[6];
      box_of(q, qi + nq * j, nq, margin / 2, bj);
      if (!boxes_meet(bi, bj) || (self && shared(vi, np, qi + nq * j, nq))) continue;
      out[2 * n] = i, out[2 * n + 1] = j, n++;
    }
  }
  return n;
}
static void assert_same(const char* what, const int* got, int ngot, const int* want, int nwant) {
  cr_assert_eq(ngot, nwant, "%s: %d pairs, brute force %d", what, ngot, nwant);
  for (int i = 0; i < 2 * ngot; i++) cr_assert_eq(got[i], want[i], "%s: entry %d differs", what, i / 2);
}
static int listed(const int* pairs, int n, int i, int j) {
  int key[2] = {i, j};
  for (int k = 0; k < n; k++)
    if (pairs[2 * k] == key[0] && pairs[2 * k + 1] == key[1]) return 1;
  return 0;
}

//---- conservativeness: true distances along the motion ----

static void at(const kn_swept_surface* m, int v, double t, double* y) {
  for (int k = 0; k < 3; k++) y[k] = m->x1 ? (1 - t) * m->x0[3 * v + k] + t * m->x1[3 * v + k] : m->x0[3 * v + k];
}
static int pt_close(const kn_swept_surface* p, int v, const kn_swept_surface* q, int tri, double margin) {
  for (int s = 0; s <= 8; s++) {
    double x[12], t = s / 8.0;
    at(p, v, t, x);
    for (int a = 0; a < 3; a++) at(q, q->tri[3 * tri + a], t, x + 3 + 3 * a);
    if (kn_dist_eval(x, kn_dist_point_triangle_case(x), NULL, NULL) < margin * margin) return 1;
  }
  return 0;
}
static int ee_close(const kn_swept_surface* p, int e, const kn_swept_surface* q, int f, double margin) {
  for (int s = 0; s <= 8; s++) {
    double x[12], t = s / 8.0;
    at(p, p->edge[2 * e], t, x), at(p, p->edge[2 * e + 1], t, x + 3);
    at(q, q->edge[2 * f], t, x + 6), at(q, q->edge[2 * f + 1], t, x + 9);
    if (kn_dist_eval(x, kn_dist_edge_edge_case(x), NULL, NULL) < margin * margin) return 1;
  }
  return 0;
}

static void check_two(kn_swept_scratch* s, const kn_swept_surface* A, const kn_swept_surface* B, double margin) {
  kn_swept_pairs out;
  kn_error err = {0};
  cr_assert_eq(kn_swept_pairs_find(s, A, B, margin, &out, &err), KN_OK, "%s", err.msg);
  int* want = malloc(2 * (size_t)(A->nvert * B->ntri + B->nvert * A->ntri + A->nedge * B->nedge + 1) * sizeof(int));
  int n = brute(A, NULL, A->nvert, 1, B, B->tri, B->ntri, 3, margin, 0, 0, want);
  assert_same("vertex of A - triangle of B", out.vt_ab, out.nvt_ab, want, n);
  n = brute(B, NULL, B->nvert, 1, A, A->tri, A->ntri, 3, margin, 0, 0, want);
  assert_same("vertex of B - triangle of A", out.vt_ba, out.nvt_ba, want, n);
  n = brute(A, A->edge, A->nedge, 2, B, B->edge, B->nedge, 2, margin, 0, 0, want);
  assert_same("edge - edge", out.ee, out.nee, want, n);
  cr_assert_gt(out.nvt_ab + out.nvt_ba + out.nee, 0, "the sheets should meet");
  int close = 0;
  for (int v = 0; v < A->nvert; v++)
    for (int t = 0; t < B->ntri; t++)
      if (pt_close(A, v, B, t, margin)) {
        close++;
        cr_assert(listed(out.vt_ab, out.nvt_ab, v, t), "PT %d-%d missed", v, t);
      }
  for (int e = 0; e < A->nedge; e++)
    for (int f = 0; f < B->nedge; f++)
      if (ee_close(A, e, B, f, margin)) {
        close++;
        cr_assert(listed(out.ee, out.nee, e, f), "EE %d-%d missed", e, f);
      }
  if (margin > 0) cr_assert_gt(close, 0, "some pair should come within the margin (margin %g)", margin);
  free(want);
}

Test(swept_pairs, two_surfaces_against_brute_force) {
  kn_swept_scratch* s = kn_swept_scratch_create();
  cr_assert(s);
  /* B (7 x 7) starts 0.05 above A (9 x 9) and moves 0.1 down through it */
  sheet a = make_sheet(9, 1u, (double[3]){0, 0, 0}, (double[3]){0, 0, 0}, 0);
  sheet b = make_sheet(7, 2u, (double[3]){0.3, 0.2, 0.05}, (double[3]){0.05, 0, -0.1}, 0);
  double margins[] = {0.0, 0.01, 0.05};
  for (int m = 0; m < 3; m++) {
    kn_swept_surface A = view(&a, 0), B = view(&b, 1);
    check_two(s, &A, &B, margins[m]);
    A = view(&a, 1);
    check_two(s, &A, &B, margins[m]);
  }
  /* a small call after the large ones reuses the scratch */
  sheet c = make_sheet(3, 3u, (double[3]){0.1, 0.1, 0.01}, (double[3]){0, 0, -0.02}, 0);
  kn_swept_surface A = view(&a, 0), C = view(&c, 1);
  check_two(s, &A, &C, 0.01);
  free_sheet(&a), free_sheet(&b), free_sheet(&c);
  kn_swept_scratch_free(s);
}

Test(swept_pairs, self_contact_against_brute_force) {
  kn_swept_scratch* s = kn_swept_scratch_create();
  sheet f = make_sheet(10, 5u, (double[3]){0, 0, 0}, (double[3]){0, 0, -0.01}, 1);
  /* only the surface vertices of a body take part: here every other vertex */
  int* used = malloc((size_t)f.nv * sizeof(int)), nused = 0;
  for (int v = 0; v < f.nv; v += 2) used[nused++] = v;
  for (int variant = 0; variant < 2; variant++) {
    kn_swept_surface F = view(&f, 1);
    if (variant) F.nvert_used = nused, F.vert = used;
    double margin = 0.03;
    kn_swept_pairs out;
    kn_error err = {0};
    cr_assert_eq(kn_swept_pairs_find(s, &F, NULL, margin, &out, &err), KN_OK, "%s", err.msg);
    cr_assert_eq(out.nvt_ba, 0);
    int* want = malloc(2 * (size_t)(f.nv * f.nt + f.ne * f.ne + 1) * sizeof(int));
    /* vertex-triangle: brute over the used vertices, reported by vertex index */
    int n = 0;
    for (int k = 0; k < (variant ? nused : f.nv); k++) {
      int v = variant ? used[k] : k;
      double bv[6];
      box_of(&F, &v, 1, margin / 2, bv);
      for (int t = 0; t < f.nt; t++) {
        double bt[6];
        box_of(&F, f.tri + 3 * t, 3, margin / 2, bt);
        if (boxes_meet(bv, bt) && !shared(&v, 1, f.tri + 3 * t, 3)) want[2 * n] = v, want[2 * n + 1] = t, n++;
      }
    }
    assert_same("self vertex - triangle", out.vt_ab, out.nvt_ab, want, n);
    n = brute(&F, f.edge, f.ne, 2, &F, f.edge, f.ne, 2, margin, 1, 1, want);
    assert_same("self edge - edge", out.ee, out.nee, want, n);
    /* the folded halves are 0.02 apart at the fold line's far side: pairs across the fold exist */
    cr_assert_gt(out.nvt_ab, 0);
    cr_assert_gt(out.nee, 0);
    for (int e = 0; e < f.ne; e++)
      for (int g = e + 1; g < f.ne; g++)
        if (!shared(f.edge + 2 * e, 2, f.edge + 2 * g, 2) && ee_close(&F, e, &F, g, margin))
          cr_assert(listed(out.ee, out.nee, e, g), "self EE %d-%d missed", e, g);
    free(want);
  }
  free(used), free_sheet(&f);
  kn_swept_scratch_free(s);
}

Test(swept_pairs, closed_surfaces_against_brute_force) {
  kn_swept_scratch* s = kn_swept_scratch_create();
  /* two flattened spheres, the second 0.02 above the first's top and sinking 0.04 into it */
  sheet a = make_sphere(8, 12, 11u, 0.05, (double[3]){0, 0, 0}, (double[3]){0, 0, 0});
  sheet b = make_sphere(7, 10, 12u, 0.05, (double[3]){0.2, 0.1, 0.07}, (double[3]){0, 0, -0.04});
  kn_swept_surface A = view(&a, 1), B = view(&b, 1);
  check_two(s, &A, &B, 0.01);
  /* each against itself: its top and bottom (0.05 apart at the centre) within the margin */
  for (int k = 0; k < 2; k++) {
    kn_swept_surface F = view(k ? &b : &a, 1);
    double margin = 0.06;
    kn_swept_pairs out;
    kn_error err = {0};
    cr_assert_eq(kn_swept_pairs_find(s, &F, NULL, margin, &out, &err), KN_OK, "%s", err.msg);
    int* want = malloc(2 * (size_t)(F.nvert * F.ntri + F.nedge * F.nedge + 1) * sizeof(int));
    int n = brute(&F, NULL, F.nvert, 1, &F, F.tri, F.ntri, 3, margin, 1, 0, want);
    assert_same("closed: self vertex - triangle", out.vt_ab, out.nvt_ab, want, n);
    cr_assert_gt(n, F.nvert, "top and bottom should meet (%d pairs)", n);
    n = brute(&F, F.edge, F.nedge, 2, &F, F.edge, F.nedge, 2, margin, 1, 1, want);
    assert_same("closed: self edge - edge", out.ee, out.nee, want, n);
    cr_assert_gt(n, F.nedge);
    free(want);
  }
  free_sheet(&a), free_sheet(&b);
  kn_swept_scratch_free(s);
}

//---- kn_swept_pairs_filter ----

typedef struct {
  int n[3], *p[3];
} copied;
static copied copy_pairs(const kn_swept_pairs* in) {
  copied c = {{in->nvt_ab, in->nvt_ba, in->nee}, {NULL, NULL, NULL}};
  const int* src[3] = {in->vt_ab, in->vt_ba, in->ee};
  for (int k = 0; k < 3; k++) {
    c.p[k] = malloc((2 * (size_t)c.n[k] + 1) * sizeof(int));
    memcpy(c.p[k], src[k], 2 * (size_t)c.n[k] * sizeof(int));
  }
  return c;
}
static kn_swept_pairs as_pairs(const copied* c) { return (kn_swept_pairs){c->n[0], c->n[1], c->n[2], c->p[0], c->p[1], c->p[2]}; }

/* (A, B or NULL; big: the candidates' margin over the whole sweep; margin) => at 5 times of the
 * motion, the static pairs at margin filtered from the candidates equal kn_swept_pairs_find's, entry
 * for entry; the swept ones at margin 0 too; returns the static pairs found at the middle */
static int check_filter(kn_swept_scratch* s, sheet* a, sheet* b, const int* used, int nused, double big, double margin) {
  kn_swept_surface A = view(a, 1), B = b ? view(b, 1) : A;
  if (used) A.nvert_used = nused, A.vert = used;
  kn_swept_pairs out, got;
  kn_error err = {0};
  cr_assert_eq(kn_swept_pairs_find(s, &A, b ? &B : NULL, big, &out, &err), KN_OK, "%s", err.msg);
  copied c = copy_pairs(&out);
  kn_swept_pairs in = as_pairs(&c);
  /* swept at margin 0 (the CCD's): the same as the trees' */
  cr_assert_eq(kn_swept_pairs_find(s, &A, b ? &B : NULL, 0, &out, &err), KN_OK);
  copied w = copy_pairs(&out);
  cr_assert_eq(kn_swept_pairs_filter(s, &A, b ? &B : NULL, 0, &in, &got, &err), KN_OK, "%s", err.msg);
  assert_same("swept vt_ab", got.vt_ab, got.nvt_ab, w.p[0], w.n[0]);
  assert_same("swept vt_ba", got.vt_ba, got.nvt_ba, w.p[1], w.n[1]);
  assert_same("swept ee", got.ee, got.nee, w.p[2], w.n[2]);
  for (int k = 0; k < 3; k++) free(w.p[k]);
  int mid = 0;
  for (int step = 0; step <= 4; step++) {
    double t = step / 4.0;
    sheet* sh[2] = {a, b};
    double* xt[2] = {NULL, NULL};
    kn_swept_surface S[2] = {A, B};
    for (int k = 0; k < (b ? 2 : 1); k++) {
      xt[k] = malloc(3 * (size_t)sh[k]->nv * sizeof(double));
      for (int i = 0; i < 3 * sh[k]->nv; i++) xt[k][i] = sh[k]->x0[i] + t * (sh[k]->x1[i] - sh[k]->x0[i]);
      S[k].x0 = xt[k], S[k].x1 = NULL;
    }
    cr_assert_eq(kn_swept_pairs_find(s, &S[0], b ? &S[1] : NULL, margin, &out, &err), KN_OK);
    w = copy_pairs(&out);
    cr_assert_eq(kn_swept_pairs_filter(s, &S[0], b ? &S[1] : NULL, margin, &in, &got, &err), KN_OK, "%s", err.msg);
    assert_same("static vt_ab", got.vt_ab, got.nvt_ab, w.p[0], w.n[0]);
    assert_same("static vt_ba", got.vt_ba, got.nvt_ba, w.p[1], w.n[1]);
    assert_same("static ee", got.ee, got.nee, w.p[2], w.n[2]);
    cr_assert_lt(got.nvt_ab + got.nvt_ba + got.nee, c.n[0] + c.n[1] + c.n[2], "the candidates should be a strict superset");
    if (step == 2) mid = got.nvt_ab + got.nvt_ba + got.nee;
    for (int k = 0; k < 3; k++) free(w.p[k]);
    free(xt[0]), free(xt[1]);
  }
  for (int k = 0; k < 3; k++) free(c.p[k]);
  return mid;
}

/* The pairs of a sweep's candidates (found at twice the margin over the whole motion) at points of
 * the motion: kn_swept_pairs_find's answer exactly (the ipc line search's use, ipc/mesh_cache.c),
 * for two sheets, a folded sheet against itself with a vertex subset, and a closed surface against
 * itself; and bad candidates refused. */
Test(swept_pairs, filter_equals_find_along_the_sweep) {
  kn_swept_scratch* s = kn_swept_scratch_create();
  sheet a = make_sheet(9, 1u, (double[3]){0, 0, 0}, (double[3]){0, 0, 0}, 0);
  sheet b = make_sheet(7, 2u, (double[3]){0.3, 0.2, 0.05}, (double[3]){0.05, 0, -0.1}, 0);
  cr_assert_gt(check_filter(s, &a, &b, NULL, 0, 0.02, 0.01), 0);
  sheet f = make_sheet(10, 5u, (double[3]){0, 0, 0}, (double[3]){0, 0, -0.01}, 1);
  int* used = malloc((size_t)f.nv * sizeof(int)), nused = 0;
  for (int v = 0; v < f.nv; v += 2) used[nused++] = v;
  cr_assert_gt(check_filter(s, &f, NULL, used, nused, 0.06, 0.03), 0);
  sheet c = make_sphere(8, 12, 11u, 0.05, (double[3]){0, 0, 0}, (double[3]){0, 0, -0.01});
  cr_assert_gt(check_filter(s, &c, NULL, NULL, 0, 0.12, 0.06), 0);
  /* refused: candidates in the scratch's own answer, an index out of range */
  kn_swept_surface A = view(&a, 0), B = view(&b, 0);
  kn_swept_pairs out, got;
  kn_error err = {0};
  cr_assert_eq(kn_swept_pairs_find(s, &A, &B, 0.05, &out, &err), KN_OK);
  cr_assert_gt(out.nee, 0);
  cr_assert_eq(kn_swept_pairs_filter(s, &A, &B, 0.05, &out, &got, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "scratch"), "%s", err.msg);
  int bad[2] = {0, b.ne};
  kn_swept_pairs in = {0, 0, 1, NULL, NULL, bad};
  cr_assert_eq(kn_swept_pairs_filter(s, &A, &B, 0.05, &in, &got, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "out of range"), "%s", err.msg);
  free(used), free_sheet(&a), free_sheet(&b), free_sheet(&f), free_sheet(&c);
  kn_swept_scratch_free(s);
}

Test(swept_pairs, bad_input_refused) {
  kn_swept_scratch* s = kn_swept_scratch_create();
  sheet a = make_sheet(3, 1u, (double[3]){0, 0, 0}, (double[3]){0, 0, 0}, 0);
  kn_swept_surface A = view(&a, 0);
  kn_swept_pairs out;
  kn_error err = {0};
  cr_assert_eq(kn_swept_pairs_find(s, &A, NULL, -1, &out, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "margin"), "%s", err.msg);
  a.tri[4] = a.nv;
  cr_assert_eq(kn_swept_pairs_find(s, &A, NULL, 0.1, &out, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "index out of range"), "%s", err.msg);
  free_sheet(&a);
  kn_swept_scratch_free(s);
}

Test(swept_pairs, surface_edges) {
  int tri[] = {0, 1, 2, 0, 2, 3}, ne, *e;
  cr_assert_eq(kn_surface_edges(2, tri, &ne, &e, NULL), KN_OK);
  int want[] = {0, 1, 0, 2, 0, 3, 1, 2, 2, 3};
  cr_assert_eq(ne, 5);
  for (int i = 0; i < 10; i++) cr_assert_eq(e[i], want[i]);
  free(e);
}
