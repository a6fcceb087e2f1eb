/* Each clique kind through the interface alone (coupling/coupling.h): a free rigid box (tree), an
 * FEM cube, an MPM block, built by a world from a scene and then driven by their kn_clique_ops only.
 *
 *   free motion  analytic: every body starts at rest in its rest shape (or, for the box, spinning
 *                about nothing), so v* = v_n + dt g on every DoF of the box's linear velocity, every
 *                FEM vertex and every MPM node (elastic forces vanish under a uniform velocity);
 *                and grad E(v*) = 0 relative to grad E(v_n);
 *   potential    central finite differences of E against grad E, and of grad E against the
 *                Hessian times a direction, at a random v;
 *   Schur        S = A_PP - A_PN A_NN^-1 A_NP against a dense elimination of dense(), and
 *                recover: (A dv)_N = 0 with dv_P as given;
 *   point maps   x(v) against their definition: the box's point moves by dt times its rigid
 *                velocity (kn_mb_point_velocity), an FEM vertex by dt v, an MPM particle by dt
 *                sum_i w_ip v_i with sum_i w_ip = 1;
 *   advance      where advance(v) puts the material points: exactly x(v) for FEM vertices and MPM
 *                particles, within dt^2 |omega|^2 r of it for the rigid point (the map is the
 *                linearization at q_n). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nonlinear/nonlinear.h"
#include "sim/sim.h"
#include "../support/mesh_poses.h"

static const char* const SCENE =
    "time_step: 0.01\nduration: 0.1\ngravity: [1, 0.5, -9.81]\n"
    "objects:\n"
    "  - {name: box, shape: {box: [0.2, 0.1, 0.05]}, mass: 2, pose: {xyz: [0, 0, 1]}}\n"
    "deformables:\n"
    "  - name: cube\n"
    "    shape: {box: [0.06, 0.06, 0.06]}\n"
    "    resolution: 0.03\n"
    "    material: {youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n"
    "    pose: {xyz: [1, 0, 1]}\n"
    "  - name: block\n"
    "    model: mpm\n"
    "    shape: {box: [0.1, 0.1, 0.1]}\n"
    "    resolution: 0.05\n"
    "    particles_per_cell: 8\n"
    "    material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.3, density: 1e3}\n"
    "    pose: {xyz: [-1, 0, 1]}\n";

static const double DT = 0.01, G[3] = {1, 0.5, -9.81};

typedef struct {
  kn_scene* scene;
  kn_world* w;
} fixture;

static fixture make(void) {
  fixture f = {0};
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(SCENE, strlen(SCENE), "inline.yaml", &f.scene, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(f.scene, &f.w, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(f.w->nclique, 3, "a tree, an FEM body and an MPM grid");
  return f;
}

static void done(fixture* f) {
  kn_world_free(f->w);
  kn_scene_free(f->scene);
}

static kn_clique* clique_of(kn_world* w, kn_clique_kind kind) {
  for (int c = 0; c < w->nclique; c++)
    if (w->cliques[c].ops->kind == kind) return &w->cliques[c];
  cr_assert_fail("no clique of kind %d", (int)kind);
  return NULL;
}

// the box at rest (or spinning at omega) with its kinematics at q_n, q_n kept for advance
static kn_clique* box(kn_world* w, const double omega[3]) {
  kn_world_tree* tr = &w->trees[0];
  const kn_mb_model* m = tr->robot->model;
  cr_assert_eq(m->nv, 6);
  memset(tr->v, 0, 6 * sizeof(double));
  if (omega) memcpy(tr->v, omega, 3 * sizeof(double));
  memcpy(tr->q_backup, tr->q, (size_t)m->nq * sizeof(double));
  kn_mb_kinematics(m, tr->q, tr->v, tr->data);
  kn_clique* c = clique_of(w, KN_CLIQUE_TREE);
  kn_clique_tree_begin(c, NULL);
  return c;
}

static double norm(const double* x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

// grad E(v*) = 0 relative to grad E(v_start): v* minimizes the clique's potential
static void stationary_check(kn_clique* c, const double* vs) {
  int n = c->ops->ndof(c->self);
  double *g = calloc((size_t)n + 1, sizeof *g), *v0 = calloc((size_t)n + 1, sizeof *v0);
  c->ops->v_start(c->self, v0);
  kn_error err = {0};
  cr_assert_eq(c->ops->potential(c->self, v0, NULL, g, NULL, &err), KN_OK, "%s", err.msg);
  double g0 = norm(g, n);
  cr_assert_eq(c->ops->potential(c->self, vs, NULL, g, NULL, &err), KN_OK, "%s", err.msg);
  cr_assert(g0 > 0 && norm(g, n) <= 1e-6 * g0, "grad E(v*) = %g of grad E(v_n) = %g", norm(g, n), g0);
  free(g), free(v0);
}

/* Central differences at v along a random direction d with step h = 1e-4 |v| / |d|: E(v + h d) -
 * E(v - h d) over 2h against grad . d, and the gradients' difference over 2h against H d. The error
 * of a central difference is h^2/6 |third derivative| plus roundoff eps |E| / h: measured 1e-13
 * (tree, quadratic), 1.4e-10 (FEM), 2e-10 (MPM) relative, so the tolerance 1e-6 has a wide margin
 * and still catches a wrong factor or sign in any term. */
static void fd_check(kn_clique* c, const char* what) {
  int n = c->ops->ndof(c->self);
  double *v = calloc((size_t)n, sizeof *v), *d = calloc((size_t)n, sizeof *d), *g = calloc((size_t)n, sizeof *g);
  double *gp = calloc((size_t)n, sizeof *gp), *gm = calloc((size_t)n, sizeof *gm), *Hd = calloc((size_t)n, sizeof *Hd);
  double *x = calloc((size_t)n, sizeof *x);
  const double* vs = c->ops->v_star(c->self);
  for (int i = 0; i < n; i++) v[i] = vs[i] + 0.2 * (urand() - 0.5), d[i] = urand() - 0.5;
  double h = 1e-4 * norm(v, n) / norm(d, n);
  kn_csc_view H;
  kn_error err = {0};
  double E0;
  cr_assert_eq(c->ops->potential(c->self, v, &E0, g, &H, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(H.n, n, "%s: the Hessian is %d x %d, expected %d", what, H.n, H.n, n);
  kn_csc_mul(&H, d, Hd);
  for (int i = 0; i < n; i++) x[i] = v[i] + h * d[i];
  double Ep, Em;
  cr_assert_eq(c->ops->potential(c->self, x, &Ep, gp, NULL, &err), KN_OK);
  for (int i = 0; i < n; i++) x[i] = v[i] - h * d[i];
  cr_assert_eq(c->ops->potential(c->self, x, &Em, gm, NULL, &err), KN_OK);
  double gd = 0;
  for (int i = 0; i < n; i++) gd += g[i] * d[i];
  double fd = (Ep - Em) / (2 * h);
  cr_assert(isfinite(fd) && fabs(fd - gd) <= 1e-6 * fabs(gd), "%s: grad . d = %.12g, finite difference %.12g", what,
            gd, fd);
  double ferr = 0, scale = norm(Hd, n);
  for (int i = 0; i < n; i++) {
    double e = (gp[i] - gm[i]) / (2 * h) - Hd[i];
    ferr += e * e;
  }
  cr_assert(scale > 0 && sqrt(ferr) <= 1e-6 * scale, "%s: |H d - fd| = %g of |H d| = %g", what, sqrt(ferr), scale);
  printf("%s: gradient fd error %.2e, Hessian fd error %.2e (relative)\n", what, fabs(fd - gd) / fabs(gd),
         sqrt(ferr) / scale);
  free(v), free(d), free(g), free(gp), free(gm), free(Hd), free(x);
}

/* S from the interface against S = A_PP - A_PN A_NN^-1 A_NP by dense Gaussian elimination of
 * dense(), and recover(dv_P) satisfying (A dv)_N = 0; both to 1e-9 relative (CHOLMOD's factor of a
 * well-conditioned mass-dominated A: its condition number here is below 1e3) */
/* the mass diagonal (kn_clique_ops.mass, the Newton stop's scale) is what A gives a rigid
 * translation: A = M + dt^2 K and K has the translations in its null space, so A 1_axis = m per DoF;
 * and it sums to the body's mass on each axis */
static void mass_check(kn_clique* c, double total, const char* what) {
  int n = c->ops->ndof(c->self);
  double *m = calloc((size_t)n, sizeof *m), *u = calloc((size_t)n, sizeof *u), *Au = calloc((size_t)n, sizeof *Au);
  c->ops->mass(c->self, m);
  kn_csc_view A = c->ops->sparse(c->self);
  for (int axis = 0; axis < 3; axis++) {
    double sum = 0, scale = 0;
    for (int i = 0; i < n; i++) u[i] = i % 3 == axis, sum += u[i] * m[i];
    kn_csc_mul(&A, u, Au);
    for (int i = 0; i < n; i++) scale = fmax(scale, fabs(A.x[A.p[i]])); /* the diagonal leads each column */
    for (int i = 0; i < n; i++) {
      cr_assert(m[i] > 0, "%s: mass of DoF %d is %g", what, i, m[i]);
      cr_assert(fabs(Au[i] - (i % 3 == axis ? m[i] : 0)) <= 1e-12 * scale, "%s: (A 1_%d)[%d] = %.17g, mass %.17g",
                what, axis, i, Au[i], m[i]);
    }
    cr_assert(fabs(sum - total) <= 1e-12 * total, "%s: masses sum to %.17g on axis %d, body %.17g", what, sum, axis, total);
  }
  free(m), free(u), free(Au);
}

static void schur_check(kn_clique* c, const char* what) {
  kn_error err = {0};
  int n = c->ops->ndof(c->self);
  const double* A0 = c->ops->dense(c->self, &err);
  cr_assert(A0, "%s", err.msg);
  double* A = malloc((size_t)n * n * sizeof *A);
  memcpy(A, A0, (size_t)n * n * sizeof *A);
  int P[6] = {0, 1, 2, n - 3, n - 2, n - 1}, np = 6;
  double S[36], Sd[36];
  cr_assert_eq(c->ops->schur(c->self, P, np, S, &err), KN_OK, "%s", err.msg);
  /* eliminate the N DoFs (1 .. n - 4 shifted: every DoF not in P) from the dense matrix, in place */
  unsigned char* inP = calloc((size_t)n, 1);
  for (int a = 0; a < np; a++) inP[P[a]] = 1;
  for (int k = 0; k < n; k++) {
    if (inP[k]) continue;
    for (int i = 0; i < n; i++) {
      if (i == k || A[(size_t)i * n + k] == 0) continue;
      double f = A[(size_t)i * n + k] / A[(size_t)k * n + k];
      for (int j = 0; j < n; j++) A[(size_t)i * n + j] -= f * A[(size_t)k * n + j];
    }
  }
  double e = 0, s = 0;
  for (int a = 0; a < np; a++)
    for (int b = 0; b < np; b++) {
      Sd[a * np + b] = A[(size_t)P[a] * n + P[b]];
      e = fmax(e, fabs(S[a * np + b] - Sd[a * np + b]));
      s = fmax(s, fabs(Sd[a * np + b]));
    }
  cr_assert(e <= 1e-9 * s, "%s: Schur complement differs by %g (of %g)", what, e, s);
  double dvP[6] = {0.1, -0.2, 0.3, 0.05, 0.0, -0.1}, *dv = calloc((size_t)n, sizeof *dv), r_max = 0, a_max = 0;
  c->ops->recover(c->self, dvP, dv);
  for (int a = 0; a < np; a++) cr_assert_float_eq(dv[P[a]], dvP[a], 1e-15, "%s: recover keeps dv_P", what);
  for (int i = 0; i < n; i++) {
    double r = 0;
    for (int j = 0; j < n; j++) r += A0[(size_t)i * n + j] * dv[j], a_max = fmax(a_max, fabs(A0[(size_t)i * n + j]));
    if (!inP[i]) r_max = fmax(r_max, fabs(r));
  }
  cr_assert(r_max <= 1e-9 * a_max * norm(dvP, np), "%s: (A dv)_N = %g, expected 0", what, r_max);
  free(A), free(inP), free(dv);
}

Test(cliques, tree) {
  g_rng = 0x1234567;
  fixture f = make();
  kn_error err = {0};
  kn_clique* c = box(f.w, NULL);
  cr_assert_eq(c->ops->ndof(c->self), 6);
  cr_assert_eq(c->ops->free_motion(c->self, DT, &err), KN_OK, "%s", err.msg);
  const double* vs = c->ops->v_star(c->self);
  /* at rest with the identity orientation: v* = [0; dt g] ([angular; linear], body frame = world) */
  for (int a = 0; a < 3; a++) {
    cr_assert_float_eq(vs[a], 0.0, 1e-14);
    cr_assert_float_eq(vs[3 + a], DT * G[a], 1e-14 * 9.81, "v*[%d] = %.17g, expected %.17g", 3 + a, vs[3 + a], DT * G[a]);
  }
  fd_check(c, "tree");
  int P[6] = {0, 1, 2, 3, 4, 5};
  double S[36];
  cr_assert_eq(c->ops->schur(c->self, P, 6, S, &err), KN_OK);
  const double* A = c->ops->dense(c->self, &err);
  for (int k = 0; k < 36; k++) cr_assert_eq(S[k], A[k], "a tree's Schur complement over all its DoFs is A");

  /* spinning: a corner's map against the rigid velocity, and after advance within dt^2 |w|^2 r */
  double omega[3] = {3, -2, 5}, v[6] = {3, -2, 5, 0.4, -0.3, 0.2};
  c = box(f.w, omega);
  cr_assert_eq(c->ops->free_motion(c->self, DT, &err), KN_OK, "%s", err.msg);
  const kn_world_tree* tr = &f.w->trees[0];
  double pb[3] = {0.1, 0.05, 0.025}, p[3];
  kn_pose_apply(&tr->data->X_wb[0], pb, p);
  kn_point_map m;
  c->ops->point_map(c->self, 0, p, DT, &m);
  double x[3], V[6];
  kn_point_map_eval(&m, 6, v, DT, x);
  kn_mb_kinematics(tr->robot->model, tr->q, v, tr->data);
  kn_mb_point_velocity(tr->robot->model, tr->data, 0, pb, V);
  for (int a = 0; a < 3; a++) cr_assert_float_eq(x[a], p[a] + DT * V[3 + a], 1e-14, "axis %d", a);
  kn_mb_kinematics(tr->robot->model, tr->q, tr->v, tr->data);
  cr_assert_eq(c->ops->advance(c->self, v, DT, &err), KN_OK);
  kn_mb_kinematics(tr->robot->model, tr->q, NULL, tr->data);
  double p1[3], d2 = 0, w2 = 38, r = norm(pb, 3);
  kn_pose_apply(&tr->data->X_wb[0], pb, p1);
  for (int a = 0; a < 3; a++) d2 += (p1[a] - x[a]) * (p1[a] - x[a]);
  cr_assert(sqrt(d2) <= DT * DT * w2 * r, "the corner lands %g m from its map, bound %g", sqrt(d2), DT * DT * w2 * r);
  cr_assert(sqrt(d2) > 1e-3 * DT * DT * w2 * r, "the bound is tight enough to mean something (%g)", sqrt(d2));
  done(&f);
}

Test(cliques, fem) {
  g_rng = 0x2345678;
  fixture f = make();
  kn_error err = {0};
  kn_clique* c = clique_of(f.w, KN_CLIQUE_FEM);
  const kn_fem_body* b = f.w->fems[0].body;
  int n = c->ops->ndof(c->self);
  cr_assert_eq(n, 3 * b->mesh.nvert, "no fixed vertex: 3 DoFs per vertex");
  cr_assert_eq(c->ops->free_motion(c->self, DT, &err), KN_OK, "%s", err.msg);
  const double* vs = c->ops->v_star(c->self);
  for (int i = 0; i < n; i++) cr_assert_float_eq(vs[i], DT * G[i % 3], 1e-10, "v*[%d] = %.17g", i, vs[i]);
  stationary_check(c, vs);
  fd_check(c, "fem");
  schur_check(c, "fem");
  double mfem = 0;
  for (int u = 0; u < b->mesh.nvert; u++) mfem += b->mass[u];
  mass_check(c, mfem, "fem");
  /* vertex 5's map and advance */
  double* v = calloc((size_t)n + 1, sizeof *v);
  for (int i = 0; i < n; i++) v[i] = urand() - 0.5;
  kn_point_map m;
  c->ops->point_map(c->self, 5, NULL, DT, &m);
  double x[3];
  kn_point_map_eval(&m, n, v, DT, x);
  for (int a = 0; a < 3; a++) cr_assert_float_eq(x[a], b->x[15 + a] + DT * v[3 * b->free_index[5] + a], 1e-15);
  cr_assert_eq(c->ops->advance(c->self, v, DT, &err), KN_OK);
  for (int a = 0; a < 3; a++) cr_assert_float_eq(b->x[15 + a], x[a], 1e-15, "advance moves the vertex to x(v)");
  free(v);
  done(&f);
}

Test(cliques, mpm) {
  g_rng = 0x3456789;
  fixture f = make();
  kn_error err = {0};
  kn_clique* c = clique_of(f.w, KN_CLIQUE_MPM);
  const kn_mpm_body* b = f.w->mpm_grids[0];
  cr_assert_eq(c->ops->free_motion(c->self, DT, &err), KN_OK, "%s", err.msg);
  int n = c->ops->ndof(c->self);
  cr_assert_eq(n, 3 * b->grid.n);
  const double* vs = c->ops->v_star(c->self);
  for (int i = 0; i < n; i++) cr_assert_float_eq(vs[i], DT * G[i % 3], 1e-10, "v*[%d] = %.17g", i, vs[i]);
  stationary_check(c, vs);
  fd_check(c, "mpm");
  schur_check(c, "mpm");
  mass_check(c, kn_mpm_body_mass(b, NULL, NULL), "mpm");
  /* particle 7's map: partition of unity, and advance (G2P) moves it to x(v) */
  double* v = calloc((size_t)n + 1, sizeof *v);
  /* 6 m/s along x: the block moves 6 cm, more than a cell, so that the next grid has nodes this one did not */
  for (int i = 0; i < n; i++) v[i] = 0.1 * (urand() - 0.5) + (i % 3 == 0 ? 6.0 : 0.0);
  kn_point_map m;
  c->ops->point_map(c->self, 7, NULL, DT, &m);
  double sw = 0, x[3], x0[3];
  for (int a = 0; a < m.n; a++) sw += m.w[a];
  cr_assert(m.n >= 8 && fabs(sw - 1) <= 1e-14, "%d weights summing to %.17g", m.n, sw);
  kn_point_map_eval(&m, n, v, DT, x);
  memcpy(x0, b->x + 21, sizeof x0);
  int nn = b->grid.n, *index = malloc(3 * (size_t)nn * sizeof *index);
  memcpy(index, b->grid.index, 3 * (size_t)nn * sizeof *index);
  cr_assert_eq(c->ops->advance(c->self, v, DT, &err), KN_OK, "%s", err.msg);
  for (int a = 0; a < 3; a++) {
    cr_assert_float_eq(b->x[21 + a], x[a], 1e-15, "advance moves the particle to x(v)");
    cr_assert(fabs(x[a] - x0[a]) > 1e-6, "it moved");
  }
  /* the next step starts from this step's v_n+1 at the nodes that remain, from P2G's v_n elsewhere */
  cr_assert_eq(c->ops->free_motion(c->self, DT, &err), KN_OK, "%s", err.msg);
  int n1 = c->ops->ndof(c->self), kept = 0;
  double* v1 = calloc((size_t)n1, sizeof *v1);
  c->ops->v_start(c->self, v1);
  for (int a = 0; a < n1 / 3; a++) {
    int old = -1;
    for (int j = 0; j < nn && old < 0; j++)
      if (!memcmp(index + 3 * j, b->grid.index + 3 * a, 3 * sizeof(int))) old = j;
    for (int k = 0; k < 3; k++)
      cr_assert_eq(v1[3 * a + k], old >= 0 ? v[3 * old + k] : b->grid.v[3 * a + k], "node %d", a);
    kept += old >= 0;
  }
  cr_assert(kept > 0 && kept < n1 / 3, "%d of %d nodes remain", kept, n1 / 3);
  free(v), free(v1), free(index);
  done(&f);
}

/*---- the trapezoidal rule (coupling.h's scheme theta = 1/2) ----*/

/* The tree under theta = 1/2: the box has no joint damping, so v* and A are backward Euler's (only
 * damping is averaged; gravity is explicit in both halves); the potential passes the same finite
 * differences; a point's map starts half a step along its start velocity, x(v) = p + dt/2 J (v_n +
 * v), and advance by the mean velocity puts the corner there within the linearization's dt^2 |w|^2 r
 * bound. */
Test(cliques, tree_trapezoidal) {
  g_rng = 0x4567891;
  fixture f = make();
  kn_error err = {0};
  double omega[3] = {3, -2, 5}, v[6] = {2, -1, 4, 0.4, -0.3, 0.2}, vs_be[6];
  kn_clique* c = box(f.w, omega);
  kn_world_tree* tr = &f.w->trees[0];
  tr->v[3] = -0.2, tr->v[5] = 0.1; /* v_n: spinning and moving */
  kn_mb_kinematics(tr->robot->model, tr->q, tr->v, tr->data);
  cr_assert_eq(c->ops->free_motion(c->self, DT, &err), KN_OK, "%s", err.msg);
  memcpy(vs_be, c->ops->v_star(c->self), sizeof vs_be);
  cr_assert_eq(kn_clique_set_scheme(c, 0.5, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(c->ops->free_motion(c->self, DT, &err), KN_OK, "%s", err.msg);
  for (int a = 0; a < 6; a++) cr_assert_eq(c->ops->v_star(c->self)[a], vs_be[a], "undamped: v* as backward Euler's");
  fd_check(c, "tree, trapezoidal");
  double pb[3] = {0.1, 0.05, 0.025}, p[3], Vn[6], V[6], x[3];
  kn_pose_apply(&tr->data->X_wb[0], pb, p);
  kn_mb_point_velocity(tr->robot->model, tr->data, 0, pb, Vn);
  kn_point_map m;
  c->ops->point_map(c->self, 0, p, DT, &m);
  for (int a = 0; a < 3; a++) {
    cr_assert_float_eq(m.v0[a], Vn[3 + a], 1e-14, "v0 = J v_n, axis %d", a);
    cr_assert_float_eq(m.x0[a], p[a] + DT / 2 * Vn[3 + a], 1e-15, "x0 = p + dt/2 J v_n, axis %d", a);
  }
  kn_point_map_eval(&m, 6, v, DT / 2, x);
  kn_mb_kinematics(tr->robot->model, tr->q, v, tr->data);
  kn_mb_point_velocity(tr->robot->model, tr->data, 0, pb, V);
  for (int a = 0; a < 3; a++) cr_assert_float_eq(x[a], p[a] + DT / 2 * (Vn[3 + a] + V[3 + a]), 1e-14, "axis %d", a);
  double Rn[9], Rv[3], Rw[3], Vw[6];
  memcpy(Rn, tr->data->X_wb[0].R, sizeof Rn);
  cr_assert_eq(c->ops->advance(c->self, v, DT, &err), KN_OK);
  kn_mb_kinematics(tr->robot->model, tr->q, NULL, tr->data);
  double p1[3], d2 = 0, w2 = 38, r = norm(pb, 3);
  kn_pose_apply(&tr->data->X_wb[0], pb, p1);
  for (int a = 0; a < 3; a++) d2 += (p1[a] - x[a]) * (p1[a] - x[a]);
  cr_assert(sqrt(d2) <= DT * DT * w2 * r, "the corner lands %g m from its map, bound %g", sqrt(d2), DT * DT * w2 * r);
  /* v_n+1 re-expressed in the turned frame: the world velocities are v's in the frame at q_n */
  kn_mb_kinematics(tr->robot->model, tr->q, tr->v, tr->data);
  kn_mb_point_velocity(tr->robot->model, tr->data, 0, (double[3]){0, 0, 0}, Vw);
  kn_mat3_vec(Rn, v + 3, Rv);
  kn_mat3_vec(Rn, v, Rw);
  for (int a = 0; a < 3; a++) {
    cr_assert(fabs(Vw[3 + a] - Rv[a]) <= 1e-13, "linear, axis %d: %.17g, expected %.17g", a, Vw[3 + a], Rv[a]);
    cr_assert(fabs(Vw[a] - Rw[a]) <= 1e-13, "angular, axis %d: %.17g, expected %.17g", a, Vw[a], Rw[a]);
  }
  done(&f);
}

/* The FEM body under theta = 1/2, from a deformed and moving start (x_n = rest + noise, v_n random):
 * the potential passes finite differences, v* is its stationary point, and its gradient is the
 * unified residual M (v - v_n) - dt/2 f(x^ + dt/2 v) - dt/2 f(x_n, v_n), x^ = x_n + dt/2 v_n, checked
 * against backward Euler's potential over dt/2 (theta 1): on the body moved to x^ its gradient is the
 * first two terms, and at v = 0 on the body at x_n, grad E = -M v_n - dt/2 f_n (elastic + gravity;
 * no damping in this material). Then a vertex's map starts at x_n + dt/2 v_n and advance puts it at
 * x(v) exactly. */
Test(cliques, fem_trapezoidal) {
  g_rng = 0x5678912;
  fixture f = make();
  kn_error err = {0};
  kn_clique* c = clique_of(f.w, KN_CLIQUE_FEM);
  kn_fem_body* b = f.w->fems[0].body;
  int n = c->ops->ndof(c->self), nv = b->mesh.nvert;
  for (int i = 0; i < 3 * nv; i++) b->x[i] += 2e-3 * (urand() - 0.5), b->v[i] = 0.4 * (urand() - 0.5);
  cr_assert_eq(kn_clique_set_scheme(c, 0.5, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(c->ops->free_motion(c->self, DT, &err), KN_OK, "%s", err.msg);
  const double* vs = c->ops->v_star(c->self);
  stationary_check(c, vs);
  fd_check(c, "fem, trapezoidal");
  double *v = calloc((size_t)n, sizeof *v), *g = calloc((size_t)n, sizeof *g), *g1 = calloc((size_t)n, sizeof *g1),
         *g0 = calloc((size_t)n, sizeof *g0), *zero = calloc((size_t)n, sizeof *zero),
         *xn = malloc(3 * (size_t)nv * sizeof *xn);
  for (int i = 0; i < n; i++) v[i] = vs[i] + 0.3 * (urand() - 0.5);
  cr_assert_eq(c->ops->potential(c->self, v, NULL, g, NULL, &err), KN_OK, "%s", err.msg);
  b->theta = 1.0;
  cr_assert_eq(kn_fem_potential(b, DT / 2, zero, NULL, g0, NULL, &err), KN_OK, "%s", err.msg);
  memcpy(xn, b->x, 3 * (size_t)nv * sizeof *xn);
  for (int i = 0; i < 3 * nv; i++) b->x[i] += DT / 2 * b->v[i];
  cr_assert_eq(kn_fem_potential(b, DT / 2, v, NULL, g1, NULL, &err), KN_OK, "%s", err.msg);
  memcpy(b->x, xn, 3 * (size_t)nv * sizeof *xn);
  b->theta = 0.5;
  double e = 0, s = 0;
  for (int u = 0; u < nv; u++)
    for (int k = 0; k < 3; k++) {
      int d = 3 * b->free_index[u] + k;
      double expect = g1[d] + g0[d] + b->mass[u] * b->v[3 * u + k];
      e = fmax(e, fabs(g[d] - expect)), s = fmax(s, fabs(g[d]));
    }
  cr_assert(s > 0 && e <= 1e-10 * s, "trapezoidal gradient differs from the unified residual by %g (of %g)", e, s);
  kn_point_map m;
  c->ops->point_map(c->self, 5, NULL, DT, &m);
  double x[3];
  for (int a = 0; a < 3; a++) {
    cr_assert_eq(m.v0[a], b->v[15 + a]);
    cr_assert_float_eq(m.x0[a], b->x[15 + a] + DT / 2 * b->v[15 + a], 1e-15);
  }
  kn_point_map_eval(&m, n, v, DT / 2, x);
  cr_assert_eq(c->ops->advance(c->self, v, DT, &err), KN_OK);
  for (int a = 0; a < 3; a++) {
    cr_assert_float_eq(b->x[15 + a], x[a], 1e-15, "advance moves the vertex to x(v)");
    cr_assert_eq(b->v[15 + a], v[3 * b->free_index[5] + a]);
  }
  free(v), free(g), free(g1), free(g0), free(zero), free(xn);
  done(&f);
}

/* An MPM grid has only backward Euler: theta 1/2 is refused naming the body; theta outside
 * [1/2, 1] is refused for any kind */
Test(cliques, mpm_refuses_the_trapezoidal_rule) {
  fixture f = make();
  kn_error err = {0};
  cr_assert_eq(kn_clique_set_scheme(clique_of(f.w, KN_CLIQUE_MPM), 0.5, &err), KN_ERR_UNSUPPORTED);
  cr_assert(strstr(err.msg, "block") && strstr(err.msg, "backward Euler"), "%s", err.msg);
  cr_assert_eq(kn_clique_set_scheme(clique_of(f.w, KN_CLIQUE_MPM), 1.0, &err), KN_OK);
  cr_assert_eq(kn_clique_set_scheme(clique_of(f.w, KN_CLIQUE_FEM), 0.3, &err), KN_ERR_INVALID);
  done(&f);
}

/* Digest T4's TR stiffness unit test through the FEM clique and the nonlinear solver: one free vertex
 * of a linear-elastic tet (the other three fixed, no gravity, no damping) is an undamped spring
 * whose stiffest mode has omega h = 100 (h chosen so). Displaced along that mode and released, each
 * step multiplies the mode's energy-norm amplitude sqrt(k u^2 + m v^2) by |R|: 1 for the trapezoidal
 * rule, exactly (1 + (omega h / 2)^2 - ... its |R| = |(1 - (omega h / 2)^2 + i omega h) / (1 +
 * (omega h / 2)^2)| = 1), 1 / sqrt(1 + (omega h)^2) = 0.0099995 for backward Euler. The step is
 * kn_nl_solve over the clique's potential (no contact), checked against the clique's own v*. */
static double spring_ratio(double theta, int steps) {
  kn_tet_mesh mesh = {0};
  mesh.nvert = 4, mesh.ntet = 1;
  mesh.X = calloc(12, sizeof(double));
  mesh.tet = calloc(4, sizeof(int));
  const double X[12] = {0, 0, 0, 0.1, 0, 0, 0.02, 0.09, 0, 0.03, 0.02, 0.08};
  memcpy(mesh.X, X, sizeof X);
  for (int k = 0; k < 4; k++) mesh.tet[k] = k;
  kn_error err = {0};
  cr_assert_eq(kn_tet_mesh_finalize(&mesh, "spring", &err), KN_OK, "%s", err.msg);
  kn_fem_material mat = kn_fem_material_default();
  mat.model = KN_FEM_LINEAR, mat.youngs_modulus = 1e5, mat.poisson_ratio = 0.3, mat.density = 1000;
  kn_fem_body* b = NULL;
  cr_assert_eq(kn_fem_body_create(&mesh, &mat, "spring", &b, &err), KN_OK, "%s", err.msg);
  kn_tet_mesh_free(&mesh);
  cr_assert_eq(kn_fem_body_fix_vertices(b, (int[3]){0, 1, 2}, 3, &err), KN_OK, "%s", err.msg);
  memset(b->gravity, 0, sizeof b->gravity);
  kn_clique c;
  cr_assert_eq(kn_clique_fem_create(b, &c, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_clique_set_scheme(&c, theta, &err), KN_OK, "%s", err.msg);
  /* K from the Hessian at any h: H = m I + theta^2 h^2 K; its stiffest direction by power iteration */
  const double m = b->mass[3], h0 = 1e-3;
  double K[9], e[3] = {1, 1, 1}, k = 0, zero[3] = {0, 0, 0};
  cr_assert_eq(c.ops->free_motion(c.self, h0, &err), KN_OK, "%s", err.msg);
  kn_csc_view H;
  cr_assert_eq(c.ops->potential(c.self, zero, NULL, NULL, &H, &err), KN_OK, "%s", err.msg);
  kn_csc_dense(&H, K);
  for (int i = 0; i < 9; i++) K[i] = (K[i] - (i % 4 == 0 ? m : 0)) / (theta * theta * h0 * h0);
  for (int it = 0; it < 200; it++) {
    double y[3];
    kn_mat3_vec(K, e, y);
    k = norm(y, 3);
    for (int a = 0; a < 3; a++) e[a] = y[a] / k;
  }
  const double h = 100 / sqrt(k / m);
  for (int a = 0; a < 3; a++) b->x[9 + a] = X[9 + a] + 1e-3 * e[a], b->v[9 + a] = 0;
  kn_nl_solver* s = kn_nl_solver_create();
  kn_nl_problem prob = {.ncliques = 1, .cliques = &c, .potential = 1};
  kn_nl_options opt = kn_nl_options_default();
  double amp0 = sqrt(k) * 1e-3, amp = amp0, ratio = 0;
  for (int step = 0; step < steps; step++) {
    double v0[3], v[3], u[3];
    kn_nl_stats st;
    cr_assert_eq(c.ops->free_motion(c.self, h, &err), KN_OK, "%s", err.msg);
    c.ops->v_start(c.self, v0);
    cr_assert_eq(kn_nl_solve(s, &prob, &opt, v0, v, &st, &err), KN_OK, "%s", err.msg);
    for (int a = 0; a < 3; a++)
      cr_assert(fabs(v[a] - c.ops->v_star(c.self)[a]) <= 1e-9 * norm(v, 3), "the solver's v is the clique's v*");
    cr_assert_eq(c.ops->advance(c.self, v, h, &err), KN_OK);
    for (int a = 0; a < 3; a++) u[a] = b->x[9 + a] - X[9 + a];
    double Ku[3];
    kn_mat3_vec(K, u, Ku);
    double a1 = sqrt(u[0] * Ku[0] + u[1] * Ku[1] + u[2] * Ku[2] + m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
    ratio = a1 / amp, amp = a1;
    if (theta == 0.5) cr_assert(fabs(ratio - 1) <= 1e-9, "step %d: |R| = %.12f, expected 1", step, ratio);
  }
  kn_nl_solver_free(s);
  kn_clique_destroy(&c);
  kn_fem_body_free(b);
  return steps == 1 ? ratio : amp / amp0;
}

Test(cliques, trapezoidal_rule_keeps_a_stiff_spring_backward_euler_damps_it) {
  double tr = spring_ratio(0.5, 10), be = spring_ratio(1.0, 1);
  printf("omega h = 100: |R| per step trapezoidal %.12f (over 10 steps), backward Euler %.7f\n", pow(tr, 0.1), be);
  cr_assert(fabs(tr - 1) <= 1e-8, "trapezoidal: amplitude x %.12f over 10 steps, expected 1", tr);
  cr_assert(fabs(be - 1 / sqrt(1 + 1e4)) <= 1e-6, "backward Euler: |R| = %.8f, expected %.8f", be, 1 / sqrt(1 + 1e4));
}
