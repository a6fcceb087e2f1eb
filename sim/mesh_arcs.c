/* The curvature of a rigid collider vertex's path over a step (mesh_surfaces.h). The point map is
 * the straight line x(v) = x0 + dt J v with J at q_n, while the tree's integrator moves the body
 * along q_n+1 = q_n (+) dt v (kn_mb_advance: a joint's rotation along its arc, a free body's by its
 * exponential map). The two ends differ by about dt^2 / 2 times the point's velocity-product
 * (centripetal) acceleration: on a swinging arm (1 rad/s, 0.6 m from the shoulder, dt 1e-2) 30 um,
 * every step. A contact that compares positions across steps (an anchored friction spring) then
 * finds its stretch off by the difference of its two sides' offsets at every step start, a
 * displacement that does not scale with the spring's stiffness (measured: box_50mm_500g's box
 * moved 0.042 mm in the palm through the shake at k 1e5 with no pair slipping, 3.6x less at half
 * the step). The offset is taken at the predictor's velocity v_n, a constant over the step's solve:
 * it leaves the Jacobian alone and errs by O(dt^2 |v_n+1 - v_n|). The same for any rigid material
 * point (kn_mesh_arcs_point): the discrete penalty springs' ends (nl_penalty.c).
 *
 * A contact point on a rounded surface (a sphere, a capsule, a cylinder's side) is no material
 * point: detection finds it again at the surface's lowest point each step, and a material point
 * there would rise off it by r (1 - cos(omega dt)) as the body turns (a ball rolling down a 45
 * degree slope at 35-50 rad/s: 6-12 mm a step at dt 1e-2, which its spring read as a gap and let it
 * sink by). Its arc is its centre of curvature's (kn_mesh_arcs_core): the sphere's centre, the
 * capsule's segment point, the cylinder's axis point. */
#include <stdlib.h>
#include <string.h>

#include "sim/mesh_surfaces.h"
#include "sim/sim_internal.h"

struct kn_mesh_arcs {
  int ntree;
  kn_mb_data** data; /* per tree, made on first use: its kinematics at q_n+1 */
  unsigned char* fresh; /* per tree: data holds this step's q_n+1 (kn_mesh_arcs_reset clears) */
  double *q, *v;     /* one tree's q_n+1 and a copy of its v_n (kn_mb_advance turns a free body's) */
  int capq, capv;
};

kn_mesh_arcs* kn_mesh_arcs_create(const kn_world* w) {
  kn_mesh_arcs* a = kn_calloc(1, sizeof *a);
  if (!a) return NULL;
  a->ntree = w->ntree;
  a->data = kn_calloc((size_t)w->ntree + 1, sizeof *a->data);
  a->fresh = kn_calloc((size_t)w->ntree + 1, 1);
  if (!a->data || !a->fresh) {
    free(a->data), free(a->fresh), free(a);
    return NULL;
  }
  return a;
}

void kn_mesh_arcs_free(kn_mesh_arcs* a) {
  if (!a) return;
  for (int t = 0; t < a->ntree; t++) kn_mb_data_free(a->data[t]);
  free(a->data), free(a->fresh), free(a->q), free(a->v), free(a);
}

static int reserve(double** p, int* cap, int n) {
  if (n <= *cap) return 1;
  double* q = realloc(*p, ((size_t)n + 1) * sizeof *q);
  if (!q) return 0;
  *p = q, *cap = n;
  return 1;
}

void kn_mesh_arcs_reset(kn_mesh_arcs* a) { memset(a->fresh, 0, (size_t)a->ntree); }

// tree t's kinematics at q_n (+) dt v_n in a->data[t], once per step => 0 out of memory
static int advanced(kn_mesh_arcs* a, const kn_world* w, int t, double dt) {
  if (a->fresh[t]) return 1;
  const kn_world_tree* tr = &w->trees[t];
  const kn_mb_model* m = tr->robot->model;
  if (!a->data[t] && !(a->data[t] = kn_mb_data_create(m))) return 0;
  if (!reserve(&a->q, &a->capq, m->nq) || !reserve(&a->v, &a->capv, m->nv)) return 0;
  memcpy(a->v, tr->v, (size_t)m->nv * sizeof *a->v);
  kn_mb_advance(m, tr->q, a->v, dt, a->q);
  kn_mb_kinematics(m, a->q, NULL, a->data[t]);
  a->fresh[t] = 1;
  return 1;
}

kn_status kn_mesh_arcs_point(kn_mesh_arcs* a, const kn_world* w, double dt, int collider, const double x0[3],
                             double x[3], kn_error* err) {
  const kn_world_collider* c = &w->colliders[collider];
  if (c->c.clique < 0) { /* fixed in the world: it stays */
    memcpy(x, x0, 3 * sizeof *x);
    return KN_OK;
  }
  if (!advanced(a, w, c->tree, dt)) return kn_fail(err, KN_ERR_NOMEM, "out of memory for the contacts' arcs");
  kn_pose X0, X1;
  kn_sim_collider_pose(w, collider, &X0); /* at q_n */
  kn_pose_mul(&a->data[c->tree]->X_wb[c->body], &c->c.X_bg, &X1);
  double r[3] = {x0[0] - X0.p[0], x0[1] - X0.p[1], x0[2] - X0.p[2]}, g[3];
  for (int k = 0; k < 3; k++) g[k] = X0.R[k] * r[0] + X0.R[3 + k] * r[1] + X0.R[6 + k] * r[2];
  kn_pose_apply(&X1, g, x);
  return KN_OK;
}

int kn_mesh_arcs_core(const kn_world* w, int collider, const double p[3], const double out[3], double c[3]) {
  const kn_shape* sh = w->colliders[collider].c.shape;
  if (sh->type != KN_SHAPE_SPHERE && sh->type != KN_SHAPE_CAPSULE && sh->type != KN_SHAPE_CYLINDER) {
    memcpy(c, p, 3 * sizeof *c);
    return 0; /* flat faces, edges, corners: p is a material point */
  }
  kn_pose X;
  kn_sim_collider_pose(w, collider, &X);
  const double a[3] = {X.R[2], X.R[5], X.R[8]}; /* the capsule's and the cylinder's axis */
  if (sh->type == KN_SHAPE_SPHERE) {
    memcpy(c, X.p, 3 * sizeof *c);
  } else if (sh->type == KN_SHAPE_CAPSULE) { /* the segment's point nearest p */
    double z = 0, h = 0.5 * sh->size[1];
    for (int k = 0; k < 3; k++) z += (p[k] - X.p[k]) * a[k];
    z = z < -h ? -h : z > h ? h : z;
    for (int k = 0; k < 3; k++) c[k] = X.p[k] + z * a[k];
  } else { /* round across its axis only: p less r times out's part across it (a cap's face: p) */
    double oa = out[0] * a[0] + out[1] * a[1] + out[2] * a[2];
    for (int k = 0; k < 3; k++) c[k] = p[k] - sh->size[0] * (out[k] - oa * a[k]);
  }
  return 1;
}

kn_status kn_mesh_arcs_offsets(kn_mesh_arcs* a, const kn_mesh_surfaces* m, const kn_world* w, double dt,
                               const double* x1, double* off, kn_error* err) {
  memset(off, 0, 3 * (size_t)m->nvert * sizeof *off);
  kn_mesh_arcs_reset(a);
  for (int i = 0; i < m->n; i++) {
    const kn_mesh_surface* s = &m->s[i];
    if (s->collider < 0 || s->clique < 0) continue; /* an FEM vertex moves on its line; a fixed one stays */
    const kn_world_collider* c = &w->colliders[s->collider];
    if (!advanced(a, w, c->tree, dt)) return kn_fail(err, KN_ERR_NOMEM, "out of memory for the surfaces' arcs");
    kn_pose X;
    kn_pose_mul(&a->data[c->tree]->X_wb[c->body], &c->c.X_bg, &X);
    for (int j = 0; j < s->nv; j++) {
      int g = s->first + j;
      if (m->pt[g] < 0) continue;
      double p[3];
      kn_pose_apply(&X, s->rest + 3 * j, p);
      for (int k = 0; k < 3; k++) off[3 * g + k] = p[k] - x1[3 * g + k];
    }
  }
  return KN_OK;
}
