/* The triangle-mesh relaxation state machine (penalty-coulomb-friction.md §3.5, §3.7.3; the unit tests
 * of §6.11 items 1, 4-8): a flat mesh of many triangles gives the plane's closed form (2) wherever
 * the walk ends; |Y - Z| shrinks at every move; a concave crease traps the anchor on its edge, which
 * it slides along to the line's closed form (state 3); the bottom of a pit stops it at the vertex
 * (state 4), and a convex apex is crossed through its ridges or its vertex; relaxing the relaxed
 * anchor again keeps it; the force on the cone exactly when sliding
 * inside a triangle, inside it when sticking; dY/dZ and dY/dx (the vertices) against central
 * differences (h = 1e-6, 1e-6 relative as the digest's prototype) on a bumpy mesh, and the
 * transposed product against the forward one. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "penalty/penalty.h"

/* a height field z = h(x, y) over [x0, x1] x [y0, y1] on an nx x ny grid of cells, two triangles a
 * cell, wound counter-clockwise seen from +z (the solid below, its outward normal up) */
typedef struct {
  int nv, nt;
  double* x;
  int* tri;
  kn_penalty_mesh_topology top;
  kn_penalty_mesh m;
} grid_mesh;

static grid_mesh grid(int nx, int ny, double x0, double x1, double y0, double y1, double (*h)(double, double)) {
  grid_mesh g = {.nv = (nx + 1) * (ny + 1), .nt = 2 * nx * ny};
  g.x = malloc(3 * (size_t)g.nv * sizeof *g.x);
  g.tri = malloc(3 * (size_t)g.nt * sizeof *g.tri);
  for (int j = 0; j <= ny; j++)
    for (int i = 0; i <= nx; i++) {
      double* p = g.x + 3 * (j * (nx + 1) + i);
      p[0] = x0 + (x1 - x0) * i / nx, p[1] = y0 + (y1 - y0) * j / ny, p[2] = h(p[0], p[1]);
    }
  int t = 0;
  for (int j = 0; j < ny; j++)
    for (int i = 0; i < nx; i++) {
      int a = j * (nx + 1) + i, b = a + 1, c = a + nx + 1, d = c + 1;
      int q[6] = {a, b, d, a, d, c};
      memcpy(g.tri + 3 * t, q, sizeof q);
      t += 2;
    }
  kn_error err;
  cr_assert_eq(kn_penalty_mesh_topology_build(g.nv, g.nt, g.tri, &g.top, &err), KN_OK);
  g.m = (kn_penalty_mesh){g.nv, g.nt, g.x, g.tri, g.top.adj, g.top.vt_start, g.top.vt, NULL};
  return g;
}

static void grid_free(grid_mesh* g) {
  kn_penalty_mesh_topology_free(&g->top);
  free(g->x), free(g->tri);
}

static double flat(double x, double y) { return 0 * x * y; }
static double valley(double x, double y) { return 0.3 * fabs(x) + 0 * y; }           /* a concave crease at x = 0 */
static double pit(double x, double y) { return 0.5 * fmax(fabs(x), fabs(y)) - 0.5; } /* an inverted pyramid */
static double apex(double x, double y) { return 0.5 - 0.5 * fmax(fabs(x), fabs(y)); } /* a pyramid, apex up */
static double bumpy(double x, double y) { return 0.15 * sin(2.1 * x + 0.3) * cos(1.7 * y - 0.2) + 0.05 * x; }

static double urand(unsigned* s, double a, double b) {
  *s = *s * 1103515245u + 12345u;
  return a + (b - a) * ((*s >> 8) & 0xffffff) / 16777216.0;
}

// a random point of the mesh (inside a random triangle)
static kn_penalty_mesh_point random_point(const grid_mesh* g, unsigned* s) {
  kn_penalty_mesh_point p = {(int)urand(s, 0, g->nt - 1e-9), {0, 0, 0}};
  double a = urand(s, 0.02, 0.96), b = urand(s, 0.02, 0.98 - a);
  p.w[0] = a, p.w[1] = b, p.w[2] = 1 - a - b;
  return p;
}

static double dist(const double a[3], const double b[3]) {
  return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

Test(mesh_relax, flat_mesh_is_the_plane_cone_and_idempotence) {
  grid_mesh g = grid(8, 8, -1, 1, -1, 1, flat); /* 128 triangles of 0.25 m */
  unsigned s = 7;
  int dynamic = 0, crossed = 0;
  for (int c = 0; c < 400; c++) {
    double mu = urand(&s, 0.05, 0.6), k = 1e4, X[3];
    kn_penalty_mesh_point Xp = random_point(&g, &s);
    kn_penalty_mesh_point_x(&g.m, &Xp, X);
    double Z[3] = {urand(&s, -0.9, 0.9), urand(&s, -0.9, 0.9), -urand(&s, 0.01, 0.5)};
    kn_penalty_mesh_relax_out o;
    kn_penalty_mesh_relax(&g.m, &Xp, Z, mu, &o);
    /* the plane's formula (2): W = Z's projection, Y = W + mu |phi| (X - W) / |X - W| unless static */
    double W[3] = {Z[0], Z[1], 0}, dX = dist(X, W), r = mu * -Z[2], Y[3];
    int stat = dX <= r;
    for (int a = 0; a < 3; a++) Y[a] = stat ? X[a] : W[a] + r * (X[a] - W[a]) / dX;
    cr_assert_eq(o.state, stat ? KN_RELAX_STATIC : KN_RELAX_DYNAMIC, "case %d: state %d", c, o.state);
    cr_assert(dist(o.Y, Y) <= 1e-12, "case %d: Y (%g %g %g), plane (%g %g %g)", c, o.Y[0], o.Y[1], o.Y[2], Y[0], Y[1], Y[2]);
    dynamic += !stat, crossed += o.nsteps >= 2;
    /* the cone: |f_t| = mu f_n sliding, <= sticking; f = k (Y - Z), n = +z */
    double ft = k * hypot(o.Y[0] - Z[0], o.Y[1] - Z[1]), fn = k * (o.Y[2] - Z[2]);
    if (stat) cr_assert(ft <= mu * fn * (1 + 1e-12));
    else cr_assert(fabs(ft - mu * fn) <= 1e-10 * fn, "case %d: |f_t| %.15g, mu f_n %.15g", c, ft, mu * fn);
    /* shrinking distance: every move brings the anchor closer to Z */
    double last = dist(X, Z);
    for (int i = 0; i < o.ntrail; i++) {
      double d = dist(o.trail[i], Z);
      cr_assert(d < last + 1e-15, "case %d move %d: |Y - Z| %.17g after %.17g", c, i, d, last);
      last = d;
    }
    /* idempotence: relaxing from the relaxed anchor keeps it */
    kn_penalty_mesh_relax_out o2;
    kn_penalty_mesh_relax(&g.m, &o.at, Z, mu, &o2);
    cr_assert(dist(o2.Y, o.Y) <= 1e-12, "case %d: P(Y, Z) moved %g", c, dist(o2.Y, o.Y));
  }
  cr_assert(dynamic > 100 && crossed > 50, "exercised: %d sliding, %d crossing into other triangles", dynamic, crossed);
  /* the projection's bounding-sphere pretest changes nothing */
  double* sph = malloc(4 * (size_t)g.nt * sizeof *sph);
  kn_penalty_mesh ms = g.m;
  kn_penalty_mesh_spheres(&g.m, sph);
  ms.tsphere = sph;
  for (int c = 0; c < 200; c++) {
    double y[3] = {urand(&s, -1.2, 1.2), urand(&s, -1.2, 1.2), urand(&s, -0.3, 0.3)}, h[3] = {0, 0, 1};
    kn_penalty_mesh_point p0, p1;
    kn_penalty_mesh_nearest(&g.m, y, h, 0.1 * fabs(y[2]), &p0);
    kn_penalty_mesh_nearest(&ms, y, h, 0.1 * fabs(y[2]), &p1);
    cr_assert(p0.tri == p1.tri && p0.w[0] == p1.w[0] && p0.w[1] == p1.w[1], "case %d: the pretest changed the nearest", c);
  }
  free(sph);
  /* above the mesh: inactive */
  kn_penalty_mesh_point Xp = {5, {0.3, 0.3, 0.4}};
  double Zo[3] = {0.1, 0.1, 0.01};
  kn_penalty_mesh_relax_out o;
  kn_penalty_mesh_relax(&g.m, &Xp, Zo, 0.3, &o);
  cr_assert_eq(o.state, KN_RELAX_INACTIVE);
  /* pulled over the open boundary: lost (§3.5 step 8) */
  double Zb[3] = {5, 0, -0.1};
  kn_penalty_mesh_relax(&g.m, &Xp, Zb, 0.3, &o);
  cr_assert(o.state == KN_RELAX_INACTIVE && o.left_open);
  grid_free(&g);
}

Test(mesh_relax, concave_crease_traps_the_anchor_on_its_edge) {
  grid_mesh g = grid(4, 8, -1, 1, -2, 2, valley); /* the crease x = 0 is a grid line */
  kn_penalty_mesh_point Xp;
  double X0[3] = {0.5, 0.05, valley(0.5, 0.05)}, X[3];
  kn_penalty_mesh_nearest(&g.m, X0, NULL, 0, &Xp);
  kn_penalty_mesh_point_x(&g.m, &Xp, X);
  cr_assert(dist(X, X0) < 1e-14);
  double mu = 0.3, Z[3] = {0, 1, -0.5};
  kn_penalty_mesh_relax_out o;
  kn_penalty_mesh_relax(&g.m, &Xp, Z, mu, &o);
  cr_assert_eq(o.stop, KN_MESH_EDGE, "stopped in state %d after %d steps", o.stop, o.nsteps);
  cr_assert_eq(o.state, KN_RELAX_DYNAMIC);
  /* on the line x = z = 0: W = (0, 1, 0), r = mu |Z - W| = 0.15, approached from y < 1 */
  double Y[3] = {0, 1 - mu * 0.5, 0};
  cr_assert(dist(o.Y, Y) <= 1e-12, "Y (%.17g %.17g %.17g)", o.Y[0], o.Y[1], o.Y[2]);
  int edge = 0;
  for (int i = 0; i < o.nsteps + 1 && i < KN_MESH_RELAX_PATH; i++) edge |= o.path[i] == KN_MESH_EDGE;
  cr_assert(edge);
  /* along the edge only Z's component along it moves Y (by the line's plane formula) */
  cr_assert(fabs(o.dYdZ[3 * 0 + 0]) < 1e-12 && fabs(o.dYdZ[3 * 2 + 2]) < 1e-12);
  grid_free(&g);
}

Test(mesh_relax, pit_bottom_stops_at_the_vertex) {
  grid_mesh g = grid(4, 4, -1, 1, -1, 1, pit); /* the apex (0, 0, -0.5) is vertex 12 */
  unsigned s = 3;
  double Z[3] = {0, 0, -1.5};
  for (int c = 0; c < 20; c++) {
    kn_penalty_mesh_point Xp = random_point(&g, &s);
    kn_penalty_mesh_relax_out o;
    kn_penalty_mesh_relax(&g.m, &Xp, Z, 0.2, &o);
    cr_assert_eq(o.stop, KN_MESH_VERTEX, "case %d: stopped in state %d", c, o.stop);
    cr_assert_eq(o.state, KN_RELAX_DYNAMIC, "case %d: the fan seen from Z says inside", c);
    cr_assert(o.Y[0] == 0 && o.Y[1] == 0 && o.Y[2] == -0.5);
    for (int a = 0; a < 9; a++) cr_assert_eq(o.dYdZ[a], 0.0);
    cr_assert(o.nvert == 1 && o.vert[0] == 12 && o.dYdx[0][0] == 1 && o.dYdx[0][4] == 1 && o.dYdx[0][8] == 1);
    cr_assert(o.nsteps <= 10, "§6.9: no path longer than about 10 (%d)", o.nsteps);
  }
  grid_free(&g);
}

/* A convex apex (§6.11 item 7): an anchor on the pyramid's +x face pulled toward a particle inside,
 * beyond the apex on the -x side, climbs to the ridge or the apex, leaves it (state 4's exits) and
 * stops on the far side, every move closer to Z; where it stops inside a face, on that face's cone */
Test(mesh_relax, convex_apex_is_crossed) {
  grid_mesh g = grid(2, 2, -1, 1, -1, 1, apex); /* the apex (0, 0, 0.5) is vertex 4 */
  /* the cells (0, 1) and (1, 0) split along their other diagonal, so every triangle lies in a face of
   * the pyramid (its ridges are the diagonals through the apex) */
  for (int cell = 1; cell <= 2; cell++) {
    int* t = g.tri + 6 * cell, a = t[0], b = t[1], d = t[2], c = t[5], q[6] = {a, b, c, b, d, c};
    memcpy(t, q, sizeof q);
  }
  kn_penalty_mesh_topology_free(&g.top);
  kn_error err;
  cr_assert_eq(kn_penalty_mesh_topology_build(g.nv, g.nt, g.tri, &g.top, &err), KN_OK);
  g.m = (kn_penalty_mesh){g.nv, g.nt, g.x, g.tri, g.top.adj, g.top.vt_start, g.top.vt, NULL};
  unsigned s = 5;
  int through_vertex = 0, on_cone = 0;
  for (int c = 0; c < 40; c++) {
    double mu = urand(&s, 0.02, 0.2), X0[3] = {urand(&s, 0.1, 0.4), urand(&s, -0.3, 0.3), 0}, X[3];
    if (c % 4 == 0) X0[1] = 0; /* on the ridge y = 0 toward the apex: through the vertex (state 4) */
    X0[2] = apex(X0[0], X0[1]);
    kn_penalty_mesh_point Xp;
    kn_penalty_mesh_nearest(&g.m, X0, NULL, 0, &Xp);
    kn_penalty_mesh_point_x(&g.m, &Xp, X);
    double Z[3] = {-urand(&s, 0.2, 0.4), c % 4 == 0 ? 0 : urand(&s, -0.1, 0.1), 0};
    Z[2] = apex(Z[0], Z[1]) - urand(&s, 0.01, 0.05);
    kn_penalty_mesh_relax_out o;
    kn_penalty_mesh_relax(&g.m, &Xp, Z, mu, &o);
    cr_assert_eq(o.state, KN_RELAX_DYNAMIC, "case %d: state %d (stop %d after %d steps)", c, o.state, o.stop, o.nsteps);
    cr_assert(o.Y[0] < 0, "case %d: stopped at x = %g, not past the apex", c, o.Y[0]);
    double last = dist(X, Z);
    for (int i = 0; i < o.ntrail; i++) {
      double d = dist(o.trail[i], Z);
      cr_assert(d < last + 1e-15, "case %d move %d: |Y - Z| %.17g after %.17g", c, i, d, last);
      last = d;
    }
    for (int i = 0; i <= o.nsteps && i < KN_MESH_RELAX_PATH; i++) through_vertex += o.path[i] == KN_MESH_VERTEX;
    if (o.stop != KN_MESH_TRI && o.stop != KN_MESH_TRI_FROM_EDGE) continue;
    const int* v = g.tri + 3 * o.at.tri; /* the face's cone */
    double a[3], b[3], n[3], d[3];
    for (int k = 0; k < 3; k++) a[k] = g.x[3 * v[1] + k] - g.x[3 * v[0] + k], b[k] = g.x[3 * v[2] + k] - g.x[3 * v[0] + k];
    kn_vec3_cross(a, b, n);
    double nl = kn_vec3_norm(n);
    for (int k = 0; k < 3; k++) n[k] /= nl, d[k] = o.Y[k] - Z[k];
    double fn = kn_vec3_dot(d, n), ft[3];
    for (int k = 0; k < 3; k++) ft[k] = d[k] - fn * n[k];
    cr_assert(fabs(kn_vec3_norm(ft) - mu * fn) <= 1e-10 * fn, "case %d: |f_t| %.15g, mu f_n %.15g", c, kn_vec3_norm(ft), mu * fn);
    on_cone++;
  }
  cr_assert(through_vertex >= 10 && on_cone > 10, "exercised: %d walks through a vertex, %d stops on a face's cone",
            through_vertex, on_cone);
  grid_free(&g);
}

Test(mesh_relax, jacobians_against_central_differences_and_transpose) {
  grid_mesh g = grid(6, 6, -1, 1, -1, 1, bumpy);
  unsigned s = 11;
  const double h = 1e-6;
  int tested = 0, multi = 0;
  double worst = 0;
  for (int c = 0; c < 300; c++) {
    double mu = urand(&s, 0.05, 0.5), X[3];
    kn_penalty_mesh_point Xp = random_point(&g, &s);
    kn_penalty_mesh_point_x(&g.m, &Xp, X);
    double Z[3] = {X[0] + urand(&s, -0.6, 0.6), X[1] + urand(&s, -0.6, 0.6), X[2] - urand(&s, 0.02, 0.3)};
    kn_penalty_mesh_relax_out o, op, om;
    kn_penalty_mesh_relax(&g.m, &Xp, Z, mu, &o);
    if (o.state != KN_RELAX_DYNAMIC || o.stop == KN_MESH_VERTEX || o.truncated) continue;
    double scale = 1;
    int same = 1;
    double err = 0;
    /* d/dZ */
    for (int col = 0; col < 3 && same; col++) {
      double Zp[3], Zm[3];
      memcpy(Zp, Z, sizeof Zp), memcpy(Zm, Z, sizeof Zm);
      Zp[col] += h, Zm[col] -= h;
      kn_penalty_mesh_relax(&g.m, &Xp, Zp, mu, &op);
      kn_penalty_mesh_relax(&g.m, &Xp, Zm, mu, &om);
      same = op.nsteps == o.nsteps && om.nsteps == o.nsteps && op.stop == o.stop && om.stop == o.stop &&
             op.at.tri == o.at.tri && om.at.tri == o.at.tri;
      for (int r = 0; r < 3; r++) err = fmax(err, fabs((op.Y[r] - om.Y[r]) / (2 * h) - o.dYdZ[3 * r + col]) / scale);
    }
    /* d/dx for every vertex it depends on, and one it does not */
    double* x = g.x;
    for (int i = 0; i <= o.nvert && same; i++) {
      int v = i < o.nvert ? o.vert[i] : (o.vert[0] + 17) % g.nv, listed = 0;
      for (int q = 0; q < o.nvert; q++) listed |= o.vert[q] == v;
      for (int col = 0; col < 3 && same; col++) {
        double x0 = x[3 * v + col];
        x[3 * v + col] = x0 + h;
        kn_penalty_mesh_relax(&g.m, &Xp, Z, mu, &op);
        x[3 * v + col] = x0 - h;
        kn_penalty_mesh_relax(&g.m, &Xp, Z, mu, &om);
        x[3 * v + col] = x0;
        same = op.nsteps == o.nsteps && om.nsteps == o.nsteps && op.stop == o.stop && om.stop == o.stop;
        for (int r = 0; r < 3; r++) {
          double an = 0;
          for (int q = 0; q < o.nvert; q++)
            if (o.vert[q] == v) an = o.dYdx[q][3 * r + col];
          err = fmax(err, fabs((op.Y[r] - om.Y[r]) / (2 * h) - (listed ? an : 0.0)) / scale);
        }
      }
    }
    if (!same) continue; /* a perturbation changed the path: the Jacobian is one-sided there */
    cr_assert(err <= 1e-6, "case %d (path of %d steps, stop %d): FD error %g", c, o.nsteps, o.stop, err);
    worst = fmax(worst, err), tested++, multi += o.nsteps >= 1;
    /* transpose consistency: a . (J b) = (J^T a) . b over (Z, every vertex) */
    double a[3] = {urand(&s, -1, 1), urand(&s, -1, 1), urand(&s, -1, 1)}, bZ[3], *bx = malloc(3 * (size_t)g.nv * sizeof *bx);
    double* gx = calloc(3 * (size_t)g.nv, sizeof *gx), Jb[3], gZ[3];
    for (int q = 0; q < 3; q++) bZ[q] = urand(&s, -1, 1);
    for (int q = 0; q < 3 * g.nv; q++) bx[q] = urand(&s, -1, 1);
    kn_penalty_mesh_relax_jvp(&o, bZ, bx, Jb);
    kn_penalty_mesh_relax_vjp(&o, a, gZ, gx);
    double lhs = a[0] * Jb[0] + a[1] * Jb[1] + a[2] * Jb[2], rhs = gZ[0] * bZ[0] + gZ[1] * bZ[1] + gZ[2] * bZ[2];
    for (int q = 0; q < 3 * g.nv; q++) rhs += gx[q] * bx[q];
    cr_assert(fabs(lhs - rhs) <= 1e-13 * (1 + fabs(lhs)), "a.(J b) %.17g, (J^T a).b %.17g", lhs, rhs);
    free(bx), free(gx);
  }
  cr_assert(tested >= 100 && multi >= 30, "tested %d relaxations, %d that crossed an edge", tested, multi);
  cr_log_info("mesh FSM Jacobians: %d cases, worst FD error %.2e", tested, worst);
  grid_free(&g);
}
