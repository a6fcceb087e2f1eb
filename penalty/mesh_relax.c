/* Friction relaxation of an anchor on a triangle mesh (penalty.h; penalty-coulomb-friction.md §3.5,
 * the finite-state machine, and §3.7.3, its derivatives). The anchor is dragged over the mesh toward
 * the particle Z as a massless block with Coulomb friction: in a triangle's plane (states 1, 2) it
 * slides straight toward Z's projection W until the spring's pull reaches the cone, clipped at the
 * triangle's boundary and continued in the neighbour; trapped between two faces (leaving a triangle
 * by the edge it came in by) it slides along that edge (3); at a vertex (4) it leaves into a
 * triangle or along an edge that Z pulls toward, or stays. Each step is computed in forward dual
 * numbers over its 15 inputs (dual.h), so Y's Jacobian is accumulated step by step:
 * dY' = D_Y dY + D_Z dZ + sum_j D_j dx_j. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "penalty/dual.h"
#include "penalty/penalty.h"

#define GUARD (128 * DBL_EPSILON) /* the round-off margin of §3.5 step 7 and state (4) */

enum { SLOT_Y = 0, SLOT_Z = 3, SLOT_A = 6, SLOT_B = 9, SLOT_C = 12 };

static void vx(const kn_penalty_mesh* m, int v, double p[3]) { memcpy(p, m->x + 3 * v, 3 * sizeof *p); }

void kn_penalty_mesh_point_x(const kn_penalty_mesh* m, const kn_penalty_mesh_point* p, double x[3]) {
  const int* t = m->tri + 3 * p->tri;
  for (int k = 0; k < 3; k++) x[k] = p->w[0] * m->x[3 * t[0] + k] + p->w[1] * m->x[3 * t[1] + k] + p->w[2] * m->x[3 * t[2] + k];
}

//---- the Jacobian accumulated over the walk ----

// the vertex's slot in out's list (appended, zero, when new; -1 when the list is full)
static int vert_slot(kn_penalty_mesh_relax_out* o, int v) {
  for (int i = 0; i < o->nvert; i++)
    if (o->vert[i] == v) return i;
  if (o->nvert == KN_MESH_RELAX_MAX_VERTS) {
    o->truncated = 1;
    return -1;
  }
  o->vert[o->nvert] = v;
  memset(o->dYdx[o->nvert], 0, sizeof o->dYdx[0]);
  return o->nvert++;
}

// the block D (3 x 3) of the step's output Yn w.r.t. the input at slot
static void block(const kn_dual3* Yn, int slot, double D[9]) {
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) D[3 * r + c] = Yn->x[r].d[slot + c];
}

static void matmul_into(const double A[9], double B[9]) {
  double C[9];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) C[3 * r + c] = A[3 * r] * B[c] + A[3 * r + 1] * B[3 + c] + A[3 * r + 2] * B[6 + c];
  memcpy(B, C, sizeof C);
}

/* a step Y' = F(Y, Z, x_vid[0..2]) (vid -1: input unused) => the Jacobians chained through it */
static void chain(kn_penalty_mesh_relax_out* o, const kn_dual3* Yn, const int vid[3]) {
  double DY[9], D[9];
  block(Yn, SLOT_Y, DY);
  matmul_into(DY, o->dYdZ);
  block(Yn, SLOT_Z, D);
  for (int a = 0; a < 9; a++) o->dYdZ[a] += D[a];
  for (int i = 0; i < o->nvert; i++) matmul_into(DY, o->dYdx[i]);
  for (int j = 0; j < 3; j++) {
    if (vid[j] < 0) continue;
    int s = vert_slot(o, vid[j]);
    if (s < 0) continue;
    block(Yn, SLOT_A + 3 * j, D);
    for (int a = 0; a < 9; a++) o->dYdx[s][a] += D[a];
  }
  for (int k = 0; k < 3; k++) o->Y[k] = Yn->x[k].v;
  if (o->ntrail < KN_MESH_RELAX_PATH) memcpy(o->trail[o->ntrail++], o->Y, sizeof o->Y);
}

// Y at vertex v: the chain cut there (§3.5 state 4: Y is the vertex's position)
static void at_vertex(const kn_penalty_mesh* m, kn_penalty_mesh_relax_out* o, int v) {
  memset(o->dYdZ, 0, sizeof o->dYdZ);
  o->nvert = 0, o->truncated = 0;
  int s = vert_slot(o, v);
  for (int a = 0; a < 9; a += 4) o->dYdx[s][a] = 1;
  vx(m, v, o->Y);
  if (o->ntrail < KN_MESH_RELAX_PATH) memcpy(o->trail[o->ntrail++], o->Y, sizeof o->Y);
}

//---- the steps ----

// barycentric weight j (of A, B, C) of the point P in the plane of N = (A - C) x (B - C), |N|^2 = nn2
static kn_dual bary(int j, const kn_dual3 V[3], kn_dual3 P, kn_dual3 N, kn_dual nn2) {
  if (j == 2) return kn_dual_sub(kn_dual_sub(kn_dual_const(1), bary(0, V, P, N, nn2)), bary(1, V, P, N, nn2));
  kn_dual3 c = kn_dual3_cross(kn_dual3_sub(V[(j + 1) % 3], P), kn_dual3_sub(V[(j + 2) % 3], P));
  return kn_dual_div(kn_dual3_dot(N, c), nn2);
}

enum { STEP_STAY, STEP_STOP, STEP_EXIT, STEP_VERTEX_A, STEP_VERTEX_B };

/* states (1), (2) in triangle t: STEP_STAY (inside the cone where it is), STEP_STOP (Yn the plane
 * formula's point, inside t), STEP_EXIT (Yn where the move leaves t, by its local edge *edge) */
// the same plane's stay test in plain doubles, operation for operation (most relaxations stop here)
static int tri_stays(const kn_penalty_mesh* m, int t, const double Y[3], const double Z[3], double mu) {
  const double *A = m->x + 3 * m->tri[3 * t], *B = m->x + 3 * m->tri[3 * t + 1], *C = m->x + 3 * m->tri[3 * t + 2];
  double a[3], b[3], N[3], n[3], e[3];
  for (int k = 0; k < 3; k++) a[k] = A[k] - C[k], b[k] = B[k] - C[k];
  for (int k = 0; k < 3; k++) N[k] = a[(k + 1) % 3] * b[(k + 2) % 3] - a[(k + 2) % 3] * b[(k + 1) % 3];
  double nn2 = N[0] * N[0] + N[1] * N[1] + N[2] * N[2];
  if (!(nn2 > 0)) return 0; /* degenerate: tri_step's own test */
  double inv = 1 / sqrt(nn2);
  for (int k = 0; k < 3; k++) n[k] = N[k] * inv;
  double d = (C[0] - Z[0]) * n[0] + (C[1] - Z[1]) * n[1] + (C[2] - Z[2]) * n[2], r = d * (d < 0 ? -mu : mu);
  for (int k = 0; k < 3; k++) e[k] = Y[k] - (Z[k] + n[k] * d);
  return e[0] * e[0] + e[1] * e[1] + e[2] * e[2] <= r * r;
}

static int tri_step(const kn_penalty_mesh* m, int t, const double Y[3], const double Z[3], double mu, kn_dual3* Yn,
                    int* edge) {
  if (tri_stays(m, t, Y, Z, mu)) return STEP_STAY;
  kn_dual3 V[3], y = kn_dual3_input(Y, SLOT_Y), z = kn_dual3_input(Z, SLOT_Z);
  for (int j = 0; j < 3; j++) V[j] = kn_dual3_input(m->x + 3 * m->tri[3 * t + j], SLOT_A + 3 * j);
  kn_dual3 N = kn_dual3_cross(kn_dual3_sub(V[0], V[2]), kn_dual3_sub(V[1], V[2]));
  kn_dual nn2 = kn_dual3_dot(N, N);
  double L2 = 0;
  for (int j = 0; j < 3; j++) L2 = fmax(L2, kn_dual3_dot(kn_dual3_sub(V[j], V[(j + 1) % 3]), kn_dual3_sub(V[j], V[(j + 1) % 3])).v);
  if (!(nn2.v > 1e-24 * L2 * L2)) return STEP_STAY; /* degenerate: skipped (§7 item 3) */
  kn_dual3 n = kn_dual3_scale(N, kn_dual_div(kn_dual_const(1), kn_dual_sqrt(nn2)));
  kn_dual d = kn_dual3_dot(kn_dual3_sub(V[2], z), n); /* depth, > 0 inside */
  kn_dual3 W = kn_dual3_add(z, kn_dual3_scale(n, d));
  kn_dual r = kn_dual_scale(d, d.v < 0 ? -mu : mu);
  kn_dual3 e = kn_dual3_sub(y, W);
  kn_dual le2 = kn_dual3_dot(e, e);
  if (le2.v <= r.v * r.v) return STEP_STAY;
  kn_dual3 Yh = kn_dual3_add(W, kn_dual3_scale(e, kn_dual_div(r, kn_dual_sqrt(le2))));
  kn_dual bY[3], bH[3];
  int out = -1;
  double lam = INFINITY;
  for (int j = 0; j < 3; j++) {
    bH[j] = bary(j, V, Yh, N, nn2), bY[j] = bary(j, V, y, N, nn2);
    if (bH[j].v >= 0) continue;
    double l = bY[j].v > 0 ? bY[j].v / (bY[j].v - bH[j].v) : 0.0; /* first exit: the smallest lambda */
    if (l < lam) lam = l, out = j;
  }
  if (out < 0) {
    *Yn = Yh;
    return STEP_STOP;
  }
  kn_dual l = bY[out].v > 0 ? kn_dual_div(bY[out], kn_dual_sub(bY[out], bH[out])) : kn_dual_const(0);
  *Yn = kn_dual3_add(y, kn_dual3_scale(kn_dual3_sub(Yh, y), l));
  *edge = (out + 1) % 3; /* the edge opposite vertex out */
  return STEP_EXIT;
}

/* state (3) on the edge (A, B) = (ea, eb): STEP_STAY, STEP_STOP (Yn on the edge), or
 * STEP_VERTEX_A / _B (past that end) */
static int edge_step(const kn_penalty_mesh* m, int ea, int eb, const double Y[3], const double Z[3], double mu,
                     kn_dual3* Yn) {
  kn_dual3 A = kn_dual3_input(m->x + 3 * ea, SLOT_A), B = kn_dual3_input(m->x + 3 * eb, SLOT_B);
  kn_dual3 y = kn_dual3_input(Y, SLOT_Y), z = kn_dual3_input(Z, SLOT_Z), a = kn_dual3_sub(A, B);
  kn_dual aa = kn_dual3_dot(a, a);
  kn_dual3 W = kn_dual3_add(B, kn_dual3_scale(a, kn_dual_div(kn_dual3_dot(kn_dual3_sub(z, B), a), aa)));
  kn_dual3 zw = kn_dual3_sub(z, W), e = kn_dual3_sub(y, W);
  kn_dual r = kn_dual_scale(kn_dual_sqrt(kn_dual3_dot(zw, zw)), mu), le2 = kn_dual3_dot(e, e);
  if (le2.v <= r.v * r.v) return STEP_STAY;
  kn_dual3 Yh = kn_dual3_add(W, kn_dual3_scale(e, kn_dual_div(r, kn_dual_sqrt(le2))));
  double q = kn_dual3_dot(kn_dual3_sub(Yh, B), a).v / aa.v;
  if (q > 1) return STEP_VERTEX_A;
  if (q < 0) return STEP_VERTEX_B;
  *Yn = Yh;
  return STEP_STOP;
}

/* state (4) at vertex P: => KN_MESH_TRI_FROM_EDGE with *t (Z's projection inside that triangle's
 * corner at P), KN_MESH_EDGE with (*t, *edge) (Z ahead along it), or 0 (stay) */
static int vertex_step(const kn_penalty_mesh* m, int P, const double Z[3], int* t, int* edge) {
  double p[3], z[3];
  vx(m, P, p);
  for (int k = 0; k < 3; k++) z[k] = Z[k] - p[k];
  for (int s = m->vt_start[P]; s < m->vt_start[P + 1]; s++) {
    int tt = m->vt[s], i = 0;
    while (m->tri[3 * tt + i] != P) i++;
    double u[3], v[3], mm[3], vm[3], um[3];
    for (int k = 0; k < 3; k++)
      u[k] = m->x[3 * m->tri[3 * tt + (i + 1) % 3] + k] - p[k], v[k] = m->x[3 * m->tri[3 * tt + (i + 2) % 3] + k] - p[k];
    kn_vec3_cross(u, v, mm);
    double m2 = kn_vec3_dot(mm, mm);
    if (!(m2 > 0)) continue;
    kn_vec3_cross(v, mm, vm), kn_vec3_cross(u, mm, um);
    double a = kn_vec3_dot(z, vm) / m2, b = -kn_vec3_dot(z, um) / m2;
    if (a >= GUARD && b >= GUARD) {
      *t = tt;
      return KN_MESH_TRI_FROM_EDGE;
    }
  }
  double zn = kn_vec3_norm(z);
  for (int s = m->vt_start[P]; s < m->vt_start[P + 1]; s++) {
    int tt = m->vt[s], i = 0;
    while (m->tri[3 * tt + i] != P) i++;
    for (int side = 0; side < 2; side++) { /* the edges (P, next) and (prev, P) of tt */
      int q = m->tri[3 * tt + (side ? (i + 2) % 3 : (i + 1) % 3)];
      double e[3];
      for (int k = 0; k < 3; k++) e[k] = m->x[3 * q + k] - p[k];
      if (kn_vec3_dot(e, z) > GUARD * kn_vec3_norm(e) * zn) {
        *t = tt, *edge = side ? (i + 2) % 3 : i;
        return KN_MESH_EDGE;
      }
    }
  }
  return 0;
}

//---- after the walk: the separation test (§3.5's table) ----

// (Z - C) . N of triangle t: <= 0 when Z is on its inner side
static double side_of(const kn_penalty_mesh* m, int t, const double Z[3], double N[3]) {
  const int* v = m->tri + 3 * t;
  double a[3], b[3], r[3];
  for (int k = 0; k < 3; k++)
    a[k] = m->x[3 * v[0] + k] - m->x[3 * v[2] + k], b[k] = m->x[3 * v[1] + k] - m->x[3 * v[2] + k],
    r[k] = Z[k] - m->x[3 * v[2] + k];
  kn_vec3_cross(a, b, N);
  return kn_vec3_dot(r, N);
}

static int inside_edge(const kn_penalty_mesh* m, int t, int e, const double Z[3]) {
  double N0[3], N1[3];
  int in0 = side_of(m, t, Z, N0) <= 0, u = m->adj[3 * t + e];
  if (u < 0) return in0;
  int in1 = side_of(m, u, Z, N1) <= 0;
  if (in0 == in1) return in0;
  /* they disagree: inside iff the edge is concave (face u's far vertex on face t's outer side) */
  int a = m->tri[3 * t + e], b = m->tri[3 * t + (e + 1) % 3], far = 0;
  for (int k = 0; k < 3; k++)
    if (m->tri[3 * u + k] != a && m->tri[3 * u + k] != b) far = m->tri[3 * u + k];
  double N[3];
  return side_of(m, t, m->x + 3 * far, N) > 0;
}

// the signed solid angle of the triangles around P seen from Z (Van Oosterom and Strackee), > 0 inside
static int inside_vertex(const kn_penalty_mesh* m, int P, const double Z[3]) {
  double total = 0;
  for (int s = m->vt_start[P]; s < m->vt_start[P + 1]; s++) {
    const int* v = m->tri + 3 * m->vt[s];
    double r[3][3], l[3], c[3];
    for (int j = 0; j < 3; j++) {
      for (int k = 0; k < 3; k++) r[j][k] = m->x[3 * v[j] + k] - Z[k];
      l[j] = kn_vec3_norm(r[j]);
    }
    kn_vec3_cross(r[1], r[2], c);
    double den = l[0] * l[1] * l[2] + kn_vec3_dot(r[0], r[1]) * l[2] + kn_vec3_dot(r[0], r[2]) * l[1] +
                 kn_vec3_dot(r[1], r[2]) * l[0];
    total += 2 * atan2(kn_vec3_dot(r[0], c), den);
  }
  return total > 0;
}

// the barycentric weights of y in triangle t (of its projection on the triangle's plane)
static void weights(const kn_penalty_mesh* m, int t, const double y[3], double w[3]) {
  const double *A = m->x + 3 * m->tri[3 * t], *B = m->x + 3 * m->tri[3 * t + 1], *C = m->x + 3 * m->tri[3 * t + 2];
  double ca[3], cb[3], N[3], pb[3], pc[3], pa[3], c[3];
  for (int k = 0; k < 3; k++) ca[k] = A[k] - C[k], cb[k] = B[k] - C[k], pa[k] = A[k] - y[k], pb[k] = B[k] - y[k], pc[k] = C[k] - y[k];
  kn_vec3_cross(ca, cb, N);
  double nn2 = kn_vec3_dot(N, N);
  kn_vec3_cross(pb, pc, c);
  w[0] = kn_vec3_dot(N, c) / nn2;
  kn_vec3_cross(pc, pa, c);
  w[1] = kn_vec3_dot(N, c) / nn2;
  w[2] = 1 - w[0] - w[1];
}

static void record(kn_penalty_mesh_relax_out* o, int state) {
  if (o->nsteps + 1 < KN_MESH_RELAX_PATH) o->path[o->nsteps + 1] = (unsigned char)state;
  o->nsteps++;
}

void kn_penalty_mesh_relax(const kn_penalty_mesh* m, const kn_penalty_mesh_point* X, const double Z[3], double mu,
                           kn_penalty_mesh_relax_out* o) {
  memset(o, 0, sizeof *o);
  o->path[0] = KN_MESH_TRI;
  kn_penalty_mesh_point_x(m, X, o->Y);
  for (int j = 0; j < 3; j++) {
    int s = vert_slot(o, m->tri[3 * X->tri + j]);
    for (int a = 0; a < 9; a += 4) o->dYdx[s][a] += X->w[j];
  }
  int state = KN_MESH_TRI, t = X->tri, entry = -1, edge = -1, P = -1, moved = 0, steps = 0;
  for (;; steps++) {
    if (steps == KN_MESH_RELAX_MAX_STEPS) {
      o->capped = 1;
      break;
    }
    kn_dual3 Yn;
    if (state == KN_MESH_TRI || state == KN_MESH_TRI_FROM_EDGE) {
      int ex = -1, r = tri_step(m, t, o->Y, Z, mu, &Yn, &ex);
      if (r == STEP_STAY) break;
      const int* v = m->tri + 3 * t;
      chain(o, &Yn, v);
      moved = 1;
      if (r == STEP_STOP) break;
      double w[3];
      weights(m, t, o->Y, w);
      int snap = w[0] > 1 - GUARD ? 0 : w[1] > 1 - GUARD ? 1 : w[2] > 1 - GUARD ? 2 : -1;
      if (snap >= 0) { /* round-off guard (§3.5 step 7): at a vertex */
        P = v[snap], state = KN_MESH_VERTEX;
        at_vertex(m, o, P);
        record(o, state);
        continue;
      }
      int u = m->adj[3 * t + ex];
      if (u < 0) { /* an open edge: the pair is lost (§3.5 step 8) */
        o->left_open = 1;
        break;
      }
      if (state == KN_MESH_TRI_FROM_EDGE && ex == entry) { /* trapped between the two faces */
        state = KN_MESH_EDGE, edge = ex;
      } else {
        int a = v[ex], b = v[(ex + 1) % 3];
        for (int k = 0; k < 3; k++)
          if ((m->tri[3 * u + k] == a || m->tri[3 * u + k] == b) &&
              (m->tri[3 * u + (k + 1) % 3] == a || m->tri[3 * u + (k + 1) % 3] == b))
            entry = k;
        t = u, state = KN_MESH_TRI_FROM_EDGE;
      }
      record(o, state);
    } else if (state == KN_MESH_EDGE) {
      int a = m->tri[3 * t + edge], b = m->tri[3 * t + (edge + 1) % 3];
      int r = edge_step(m, a, b, o->Y, Z, mu, &Yn);
      if (r == STEP_STAY) break;
      moved = 1;
      if (r == STEP_STOP) {
        int vid[3] = {a, b, -1};
        chain(o, &Yn, vid);
        break;
      }
      P = r == STEP_VERTEX_A ? a : b, state = KN_MESH_VERTEX;
      at_vertex(m, o, P);
      record(o, state);
    } else {
      int next = vertex_step(m, P, Z, &t, &edge);
      if (!next) break;
      state = next, entry = -1;
      record(o, state);
    }
  }
  o->stop = state;
  /* where Y is, as a triangle's point, and the separation test */
  int inside;
  if (state == KN_MESH_VERTEX) {
    o->at.tri = m->vt[m->vt_start[P]];
    for (int k = 0; k < 3; k++) o->at.w[k] = m->tri[3 * o->at.tri + k] == P;
    inside = inside_vertex(m, P, Z);
  } else {
    double N[3];
    o->at.tri = t;
    weights(m, t, o->Y, o->at.w);
    inside = state == KN_MESH_EDGE ? inside_edge(m, t, edge, Z) : side_of(m, t, Z, N) <= 0;
  }
  o->state = o->left_open || !inside ? KN_RELAX_INACTIVE : moved ? KN_RELAX_DYNAMIC : KN_RELAX_STATIC;
}

// triangle t's unit outward normal
static void unit_normal(const kn_penalty_mesh* m, int t, double n[3]) {
  double N[3];
  side_of(m, t, m->x, N);
  double l = kn_vec3_norm(N);
  for (int k = 0; k < 3; k++) n[k] = l > 0 ? N[k] / l : 0.0;
}

// the nearest point of triangle t to y, and its distance
static double nearest_on(const kn_penalty_mesh* m, int t, const double y[3], kn_penalty_mesh_point* q) {
  double w[3], c[3], d2 = 0;
  weights(m, t, y, w);
  if (w[0] < 0 || w[1] < 0 || w[2] < 0) { /* outside the triangle: the nearest point of its edges */
    double bd = INFINITY, bw[3] = {0, 0, 0};
    for (int e = 0; e < 3; e++) {
      const double *a = m->x + 3 * m->tri[3 * t + e], *b = m->x + 3 * m->tri[3 * t + (e + 1) % 3];
      double ab[3], ay[3];
      for (int k = 0; k < 3; k++) ab[k] = b[k] - a[k], ay[k] = y[k] - a[k];
      double l2 = kn_vec3_dot(ab, ab), s = l2 > 0 ? fmin(1, fmax(0, kn_vec3_dot(ay, ab) / l2)) : 0, dd = 0;
      for (int k = 0; k < 3; k++) dd += (ay[k] - s * ab[k]) * (ay[k] - s * ab[k]);
      if (dd < bd) {
        bd = dd;
        bw[0] = bw[1] = bw[2] = 0, bw[e] = 1 - s, bw[(e + 1) % 3] = s;
      }
    }
    memcpy(w, bw, sizeof w);
  }
  *q = (kn_penalty_mesh_point){t, {w[0], w[1], w[2]}};
  kn_penalty_mesh_point_x(m, q, c);
  for (int k = 0; k < 3; k++) d2 += (c[k] - y[k]) * (c[k] - y[k]);
  return sqrt(d2);
}

void kn_penalty_mesh_nearest(const kn_penalty_mesh* m, const double y[3], const double nhint[3], double slack,
                             kn_penalty_mesh_point* p) {
  enum { CAND = 32 };
  kn_penalty_mesh_point q, cq[CAND];
  double best = INFINITY, cd[CAND];
  int nc = 0, overflow = 0;
  p->tri = 0, p->w[0] = 1, p->w[1] = p->w[2] = 0;
  /* one pass: the nearest distance, and every triangle within the slack of the nearest so far */
  for (int t = 0; t < m->nt; t++) {
    if (m->tsphere) { /* the triangle is at least |y - c| - r away */
      const double* c = m->tsphere + 4 * t;
      double r[3] = {y[0] - c[0], y[1] - c[1], y[2] - c[2]};
      if (kn_vec3_norm(r) - c[3] > best + slack + 1e-9) continue;
    }
    double d = nearest_on(m, t, y, &q);
    if (d > best + slack + 1e-9) continue;
    best = fmin(best, d);
    int keep = 0; /* drop the candidates the new nearest puts out of reach */
    for (int i = 0; i < nc; i++)
      if (cd[i] <= best + slack + 1e-9) cd[keep] = cd[i], cq[keep++] = cq[i];
    nc = keep;
    if (nc == CAND) overflow = 1;
    else cd[nc] = d, cq[nc++] = q;
  }
  if (overflow) { /* more than CAND as near (a fine mesh under a deep contact): a second pass */
    nc = 0;
    for (int t = 0; t < m->nt && nc < CAND; t++) {
      double d = nearest_on(m, t, y, &q);
      if (d <= best + slack + 1e-9) cd[nc] = d, cq[nc++] = q;
    }
  }
  /* among them, the one whose normal is nearest the hint (then the nearest) */
  double best_align = -INFINITY, best_d = INFINITY;
  for (int i = 0; i < nc; i++) {
    double n[3], align = 0;
    if (nhint) unit_normal(m, cq[i].tri, n), align = kn_vec3_dot(n, nhint);
    if (align > best_align + 1e-12 || (align >= best_align - 1e-12 && cd[i] < best_d))
      best_align = align, best_d = cd[i], *p = cq[i];
  }
}

void kn_penalty_mesh_spheres(const kn_penalty_mesh* m, double* tsphere) {
  for (int t = 0; t < m->nt; t++) {
    double* c = tsphere + 4 * t;
    for (int k = 0; k < 3; k++)
      c[k] = (m->x[3 * m->tri[3 * t] + k] + m->x[3 * m->tri[3 * t + 1] + k] + m->x[3 * m->tri[3 * t + 2] + k]) / 3;
    c[3] = 0;
    for (int j = 0; j < 3; j++) {
      const double* v = m->x + 3 * m->tri[3 * t + j];
      double r[3] = {v[0] - c[0], v[1] - c[1], v[2] - c[2]};
      c[3] = fmax(c[3], kn_vec3_norm(r) * (1 + 1e-12));
    }
  }
}

void kn_penalty_mesh_relax_jvp(const kn_penalty_mesh_relax_out* o, const double dZ[3], const double* dx, double dY[3]) {
  for (int r = 0; r < 3; r++) {
    dY[r] = 0;
    for (int c = 0; c < 3; c++) dY[r] += o->dYdZ[3 * r + c] * dZ[c];
    for (int i = 0; dx && i < o->nvert; i++)
      for (int c = 0; c < 3; c++) dY[r] += o->dYdx[i][3 * r + c] * dx[3 * o->vert[i] + c];
  }
}

void kn_penalty_mesh_relax_vjp(const kn_penalty_mesh_relax_out* o, const double g[3], double gZ[3], double* gx) {
  for (int c = 0; c < 3; c++) {
    gZ[c] = 0;
    for (int r = 0; r < 3; r++) gZ[c] += o->dYdZ[3 * r + c] * g[r];
    for (int i = 0; gx && i < o->nvert; i++)
      for (int r = 0; r < 3; r++) gx[3 * o->vert[i] + c] += o->dYdx[i][3 * r + c] * g[r];
  }
}
