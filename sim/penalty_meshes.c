/* The penalty backend's anchors on rigid mesh colliders (penalty_meshes.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/penalty_meshes.h"

// six times the signed volume of the closed mesh (> 0 when wound outward)
static double volume6(int nt, const int* tri, const double* v) {
  double s = 0;
  for (int t = 0; t < nt; t++) {
    const double *a = v + 3 * tri[3 * t], *b = v + 3 * tri[3 * t + 1], *c = v + 3 * tri[3 * t + 2];
    double bc[3];
    kn_vec3_cross(b, c, bc);
    s += kn_vec3_dot(a, bc);
  }
  return s;
}

kn_status kn_penalty_meshes_build(const kn_world* w, kn_penalty_meshes* pm, kn_error* err) {
  memset(pm, 0, sizeof *pm);
  pm->mesh = kn_calloc((size_t)w->ncollider + 1, sizeof *pm->mesh);
  pm->top = kn_calloc((size_t)w->ncollider + 1, sizeof *pm->top);
  pm->sphere = kn_calloc((size_t)w->ncollider + 1, sizeof *pm->sphere);
  if (!pm->mesh || !pm->top || !pm->sphere) {
    kn_penalty_meshes_free(pm);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory for the penalty backend's meshes");
  }
  pm->n = w->ncollider;
  for (int i = 0; i < w->ncollider; i++) {
    int nv, nt;
    const double* v;
    const int* tri;
    if (!kn_collider_mesh(w->collision, i, &nv, &v, &nt, &tri) || nt == 0 || !(volume6(nt, tri, v) > 0)) continue;
    kn_status st = kn_penalty_mesh_topology_build(nv, nt, tri, &pm->top[i], err);
    if (st) {
      kn_penalty_meshes_free(pm);
      return st;
    }
    pm->mesh[i] = (kn_penalty_mesh){nv, nt, v, tri, pm->top[i].adj, pm->top[i].vt_start, pm->top[i].vt, NULL};
    if (!(pm->sphere[i] = malloc(4 * (size_t)nt * sizeof *pm->sphere[i]))) {
      kn_penalty_meshes_free(pm);
      return kn_fail(err, KN_ERR_NOMEM, "out of memory for the penalty backend's meshes");
    }
    kn_penalty_mesh_spheres(&pm->mesh[i], pm->sphere[i]);
    pm->mesh[i].tsphere = pm->sphere[i];
  }
  return KN_OK;
}

void kn_penalty_meshes_free(kn_penalty_meshes* pm) {
  for (int i = 0; pm->top && i < pm->n; i++) kn_penalty_mesh_topology_free(&pm->top[i]);
  for (int i = 0; pm->sphere && i < pm->n; i++) free(pm->sphere[i]);
  free(pm->mesh), free(pm->top), free(pm->sphere);
  memset(pm, 0, sizeof *pm);
}

const kn_penalty_mesh* kn_penalty_meshes_get(const kn_penalty_meshes* pm, int i) {
  return i >= 0 && i < pm->n && pm->mesh[i].nt > 0 ? &pm->mesh[i] : NULL;
}

void kn_penalty_meshes_start(const kn_penalty_mesh* m, const kn_pose* G, const double p[3], const double xp[3],
                             kn_penalty_contact* pc) {
  double nl[3], x[3], Xw[3], d[3];
  kn_mat3_tvec(G->R, pc->n, nl); /* pc->n is the mesh's outward normal at the contact */
  kn_penalty_mesh_nearest(m, p, nl, fabs(pc->phi0), &pc->Xm);
  kn_penalty_mesh_point_x(m, &pc->Xm, x);
  kn_pose_apply(G, x, Xw);
  /* the origin O = Xw + t, t the tangential part of xp - Xw: X = Xw - O = -t, Z = phi0 n, as the
   * plane's frame has them */
  for (int k = 0; k < 3; k++) d[k] = xp[k] - Xw[k];
  double dn = kn_vec3_dot(d, pc->n);
  pc->mesh = m;
  memcpy(pc->R, G->R, sizeof pc->R);
  for (int k = 0; k < 3; k++) {
    double t = d[k] - dn * pc->n[k];
    pc->X[k] = -t, pc->o[k] = G->p[k] - (Xw[k] + t);
  }
}
