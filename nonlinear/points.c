/* Sparse entries and the step's material points (nonlinear.h): a contact's geometry at any Newton
 * iterate is its two points' affine maps, x(v) = x0 + dt J v, and its forces act through J^T. */
#include <stdlib.h>
#include <string.h>

#include "nonlinear/nonlinear.h"

static int grow(void** p, int* cap, int need, size_t elem) {
  if (need <= *cap) return 1;
  int c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  void* q = realloc(*p, (size_t)c * elem);
  if (!q) return 0;
  *p = q, *cap = c;
  return 1;
}

void kn_nl_triplets_reset(kn_nl_triplets* t, int n) { t->n = n, t->nnz = 0, t->nomem = 0; }

// (t, room for extra more entries) => 1, or 0 and t->nomem set (out of memory)
static int reserve(kn_nl_triplets* t, int extra) {
  if (t->nnz + extra <= t->cap) return 1;
  int c = t->cap ? 2 * t->cap : 1024;
  while (c < t->nnz + extra) c *= 2;
  int* ni = realloc(t->i, (size_t)c * sizeof *ni);
  if (ni) t->i = ni;
  int* nj = realloc(t->j, (size_t)c * sizeof *nj);
  if (nj) t->j = nj;
  double* nx = realloc(t->x, (size_t)c * sizeof *nx);
  if (nx) t->x = nx;
  if (!ni || !nj || !nx) {
    t->nomem = 1;
    return 0;
  }
  t->cap = c;
  return 1;
}

void kn_nl_triplets_add(kn_nl_triplets* t, int i, int j, double x) {
  if (!reserve(t, 1)) return;
  t->i[t->nnz] = i, t->j[t->nnz] = j, t->x[t->nnz] = x;
  t->nnz++;
}

void kn_nl_triplets_entry(void* t, int i, int j, double x) { kn_nl_triplets_add(t, i, j, x); }

void kn_nl_triplets_free(kn_nl_triplets* t) {
  free(t->i), free(t->j), free(t->x);
  memset(t, 0, sizeof *t);
}

void kn_nl_points_reset(kn_nl_points* P) { P->n = 0, P->m = 0, P->nomem = 0; }

int kn_nl_points_add(kn_nl_points* P, const kn_point_map* map, int offset, int ndof, const double* x0) {
  int m = 0;
  if (map) m = map->B ? ndof : 3 * map->n;
  if (!grow((void**)&P->p, &P->cap, P->n + 1, sizeof *P->p)) return P->nomem = 1, -1;
  if (!grow((void**)&P->col, &P->capm, P->m + m, sizeof *P->col)) return P->nomem = 1, -1;
  if (!grow((void**)&P->u, &P->capu, 3 * (P->m + m), sizeof *P->u)) return P->nomem = 1, -1;
  kn_nl_point* pt = &P->p[P->n];
  pt->start = P->m, pt->m = 0;
  memcpy(pt->x0, map ? map->x0 : x0, sizeof pt->x0);
  if (map) memcpy(pt->v0, map->v0, sizeof pt->v0);
  else pt->v0[0] = pt->v0[1] = pt->v0[2] = 0;
  if (map && map->B) {
    for (int j = 0; j < ndof; j++) {
      const double c[3] = {map->B[j], map->B[ndof + j], map->B[2 * ndof + j]};
      if (c[0] == 0 && c[1] == 0 && c[2] == 0) continue;
      P->col[P->m] = offset + j;
      memcpy(P->u + 3 * P->m, c, sizeof c);
      P->m++, pt->m++;
    }
  } else if (map) {
    for (int a = 0; a < map->n; a++)
      for (int k = 0; k < 3; k++) {
        double* u = P->u + 3 * P->m;
        u[0] = u[1] = u[2] = 0, u[k] = map->w[a];
        P->col[P->m] = offset + map->col[a] + k;
        P->m++, pt->m++;
      }
  }
  return P->n++;
}

void kn_nl_points_free(kn_nl_points* P) {
  free(P->p), free(P->col), free(P->u);
  memset(P, 0, sizeof *P);
}

void kn_nl_point_velocity(const kn_nl_points* P, int k, const double* v, double out[3]) {
  out[0] = out[1] = out[2] = 0;
  if (k < 0) return;
  const kn_nl_point* pt = &P->p[k];
  for (int a = pt->start; a < pt->start + pt->m; a++) {
    const double* u = P->u + 3 * a;
    double x = v[P->col[a]];
    out[0] += u[0] * x, out[1] += u[1] * x, out[2] += u[2] * x;
  }
}

void kn_nl_point_add_force(const kn_nl_points* P, int k, double s, const double f[3], double* r) {
  if (k < 0) return;
  const kn_nl_point* pt = &P->p[k];
  for (int a = pt->start; a < pt->start + pt->m; a++) {
    const double* u = P->u + 3 * a;
    r[P->col[a]] += s * (u[0] * f[0] + u[1] * f[1] + u[2] * f[2]);
  }
}

void kn_nl_points_add_block(const kn_nl_points* P, int a, double sa, int b, double sb, const double K[9],
                            kn_nl_triplets* T) {
  if (a < 0 || b < 0) return;
  const kn_nl_point *pa = &P->p[a], *pb = &P->p[b];
  if (!reserve(T, pa->m * pb->m)) return; /* room for the block at once (a robot's: m^2 entries) */
  for (int j = pb->start; j < pb->start + pb->m; j++) {
    const double* ub = P->u + 3 * j;
    double Ku[3]; /* s_a s_b K u_b */
    for (int r = 0; r < 3; r++) Ku[r] = sa * sb * (K[3 * r] * ub[0] + K[3 * r + 1] * ub[1] + K[3 * r + 2] * ub[2]);
    for (int i = pa->start; i < pa->start + pa->m; i++) {
      const double* ua = P->u + 3 * i;
      double h = ua[0] * Ku[0] + ua[1] * Ku[1] + ua[2] * Ku[2];
      if (h != 0.0) T->i[T->nnz] = P->col[i], T->j[T->nnz] = P->col[j], T->x[T->nnz] = h, T->nnz++;
    }
  }
}

void kn_nl_pair_velocity(const kn_nl_points* P, int a, int b, const double* v, double w[3]) {
  double va[3];
  kn_nl_point_velocity(P, b, v, w);
  kn_nl_point_velocity(P, a, v, va);
  for (int k = 0; k < 3; k++) w[k] -= va[k];
}

void kn_nl_pair_start_velocity(const kn_nl_points* P, int a, int b, double w[3]) {
  for (int k = 0; k < 3; k++) w[k] = (b >= 0 ? P->p[b].v0[k] : 0.0) - (a >= 0 ? P->p[a].v0[k] : 0.0);
}

void kn_nl_pair_add_force(const kn_nl_points* P, int a, int b, double s, const double f[3], double* r) {
  kn_nl_point_add_force(P, b, s, f, r);
  kn_nl_point_add_force(P, a, -s, f, r);
}

void kn_nl_pair_add_block(const kn_nl_points* P, int a, int b, const double K[9], kn_nl_triplets* T) {
  kn_nl_points_add_block(P, b, 1, b, 1, K, T);
  kn_nl_points_add_block(P, a, -1, b, 1, K, T);
  kn_nl_points_add_block(P, b, 1, a, -1, K, T);
  kn_nl_points_add_block(P, a, -1, a, -1, K, T);
}
