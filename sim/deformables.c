/* The scene's deformables: FEM bodies built from a generated, imported or tetrahedralized mesh,
 * a material, a pose, an initial velocity and fixed vertices (sim.h, `deformables:`). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

static int ends_with(const char* s, const char* suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  if (n < m) return 0;
  for (size_t i = 0; i < m; i++)
    if ((s[n - m + i] | 0x20) != (suffix[i] | 0x20)) return 0;
  return 1;
}

// (deformables[i].shape) => its tet mesh
static kn_status make_mesh(const kn_scene* s, unsigned i, kn_tet_mesh* m, kn_error* err) {
  const kn_scene_deformable* d = &s->doc->deformables[i];
  const kn_scene_fem_shape* sh = d->shape;
  char key[96];
  snprintf(key, sizeof key, "deformables[%u].shape", i);
  double smallest = sh->box ? fmin(sh->box[0], fmin(sh->box[1], sh->box[2]))
                    : sh->sphere ? 2 * sh->sphere[0]
                    : sh->cylinder ? fmin(2 * sh->cylinder[0], sh->cylinder[1])
                    : sh->torus ? 2 * sh->torus[1] : 0;
  double h = d->resolution ? *d->resolution : smallest / 4;
  kn_status st;
  memset(m, 0, sizeof *m);
  if (sh->box) st = kn_tet_mesh_box(sh->box[0], sh->box[1], sh->box[2], h, m, err);
  else if (sh->sphere) st = kn_tet_mesh_sphere(sh->sphere[0], h, m, err);
  else if (sh->cylinder) st = kn_tet_mesh_cylinder(sh->cylinder[0], sh->cylinder[1], h, m, err);
  else if (sh->torus) st = kn_tet_mesh_torus(sh->torus[0], sh->torus[1], h, m, err);
  else {
    snprintf(key, sizeof key, "deformables[%u].shape.mesh", i);
    char* path = kn_scene_resolve_path(s, sh->mesh, err);
    if (!path) return kn_scene_fail(s, err, KN_ERR_IO, key, "cannot resolve '%s'", sh->mesh);
    if (ends_with(path, ".msh")) st = kn_tet_mesh_read_msh(path, m, err);
    else if (ends_with(path, ".vtk")) st = kn_tet_mesh_read_vtk(path, m, err);
    else st = kn_tet_mesh_tetrahedralize(path, NULL, m, err);
    free(path);
  }
  if (st) {
    char msg[KN_ERROR_MSG];
    snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
    return kn_scene_fail(s, err, st, key, "deformable '%s': %s", d->name, msg);
  }
  return KN_OK;
}

/* (deformables[i].attach, body placed at t = 0) => b->attach_vertex / attach_body (target j) and
 * f->attach_point: each selected vertex's position in the rigid body's frame at t = 0 (kinematics
 * at q0), or in the world for "world". Fixed
 * vertices are left out; an empty selection or an unknown body is an error naming the key. */
static kn_status attach_all(kn_world* w, unsigned i, int fi, kn_error* err) {
  const kn_scene* s = w->scene;
  const kn_scene_deformable* d = &s->doc->deformables[i];
  kn_world_fem* f = &w->fems[fi];
  kn_fem_body* b = f->body;
  int nv = b->mesh.nvert;
  char key[96];
  f->attach_tree = kn_calloc(d->nattach + 1, sizeof(int));
  f->attach_link = kn_calloc(d->nattach + 1, sizeof(int));
  int* sel = kn_calloc((size_t)nv + 1, sizeof(int));
  if (!f->attach_tree || !f->attach_link || !sel) {
    free(sel);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", s->path);
  }
  for (unsigned j = 0; j < d->nattach; j++) {
    const kn_scene_fem_attach* a = &d->attach[j];
    int tree, body, n = 0;
    snprintf(key, sizeof key, "deformables[%u].attach[%u].body", i, j);
    if (!kn_sim_find_body(w, a->body, &tree, &body)) {
      free(sel);
      return kn_scene_fail(s, err, KN_ERR_INVALID, key,
                           "deformable '%s': '%s' is not \"world\", an object, \"object/link\" or \"robot/link\" of "
                           "the scene", d->name, a->body);
    }
    kn_pose X_WB;
    kn_pose_identity(&X_WB);
    if (tree >= 0) {
      kn_world_tree* tr = &w->trees[tree];
      kn_mb_kinematics(tr->robot->model, tr->q, NULL, tr->data);
      X_WB = tr->data->X_wb[body];
    }
    snprintf(key, sizeof key, "deformables[%u].attach[%u].%s", i, j, a->box ? "box" : "vertices");
    for (unsigned k = 0; a->vertices && k < a->nvertices; k++) {
      int v = a->vertices[k];
      if (v < 0 || v >= nv) {
        free(sel);
        return kn_scene_fail(s, err, KN_ERR_INVALID, key, "deformable '%s': vertex %d (entry %u) out of range 0..%d",
                             d->name, v, k, nv - 1);
      }
      if (!b->fixed[v]) sel[n++] = v;
    }
    for (int v = 0; a->box && v < nv; v++) {
      const double *X = b->mesh.X + 3 * v, *lo = a->box->min, *hi = a->box->max;
      int in = 1;
      for (int c = 0; c < 3; c++) in = in && X[c] >= lo[c] && X[c] <= hi[c];
      if (in && !b->fixed[v]) sel[n++] = v;
    }
    if (n == 0) {
      free(sel);
      return kn_scene_fail(s, err, KN_ERR_INVALID, key,
                           "deformable '%s': selects no vertex that is not fixed (of %d; rest positions in the body "
                           "frame)", d->name, nv);
    }
    int first = b->nattach;
    kn_status st = kn_fem_body_attach(b, sel, n, (int)j, err);
    double* pts = st ? NULL : realloc(f->attach_point, 3 * (size_t)b->nattach * sizeof(double));
    if (!pts) {
      free(sel);
      return st ? st : kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", s->path);
    }
    f->attach_point = pts;
    kn_pose X_BW;
    kn_pose_inv(&X_WB, &X_BW);
    for (int k = 0; k < n; k++) {
      const double* x = b->x + 3 * sel[k];
      if (tree >= 0)
        kn_pose_apply(&X_BW, x, pts + 3 * (first + k));
      else
        memcpy(pts + 3 * (first + k), x, 3 * sizeof(double));
    }
    f->attach_tree[j] = tree, f->attach_link[j] = body;
  }
  f->ntarget = (int)d->nattach;
  free(sel);
  return KN_OK;
}

// (deformables[i]) => w->fems[i] with its body placed, moving and fixed
static kn_status build_one(kn_world* w, unsigned i, int fi, kn_error* err) {
  const kn_scene* s = w->scene;
  const kn_scene_deformable* d = &s->doc->deformables[i];
  kn_world_fem* f = &w->fems[fi];
  char key[96];
  f->name = kn_strdup(d->name);
  kn_tet_mesh m;
  kn_status st = make_mesh(s, i, &m, err);
  if (st) return st;
  kn_fem_material mat = kn_fem_material_default();
  if (d->material) {
    const kn_scene_fem_material* dm = d->material;
    /* the document holds the model offset by one; 0: not given, the default model */
    if (dm->type) mat.model = (kn_fem_model)(dm->type - 1);
    if (dm->youngs_modulus) mat.youngs_modulus = *dm->youngs_modulus;
    if (dm->poisson_ratio) mat.poisson_ratio = *dm->poisson_ratio;
    if (dm->density) mat.density = *dm->density;
    if (dm->damping && dm->damping->mass) mat.mass_damping = *dm->damping->mass;
    if (dm->damping && dm->damping->stiffness) mat.stiffness_damping = *dm->damping->stiffness;
  }
  st = kn_fem_body_create(&m, &mat, d->name, &f->body, err);
  kn_tet_mesh_free(&m);
  if (st) {
    char msg[KN_ERROR_MSG];
    snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
    snprintf(key, sizeof key, "deformables[%u].material", i);
    return kn_scene_fail(s, err, st, key, "%s", msg);
  }
  kn_fem_body* b = f->body;
  memcpy(b->gravity, s->gravity, sizeof b->gravity);
  if (d->fixed) {
    snprintf(key, sizeof key, "deformables[%u].fixed", i);
    if (d->fixed->box) st = kn_fem_body_fix_box(b, d->fixed->box->min, d->fixed->box->max, NULL, err);
    else st = kn_fem_body_fix_vertices(b, d->fixed->vertices, (int)d->fixed->nvertices, err);
    if (st) {
      char msg[KN_ERROR_MSG];
      snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
      return kn_scene_fail(s, err, st, key, "%s", msg);
    }
  }
  kn_pose X;
  kn_pose_from_xyz_rpy(d->pose.xyz, d->pose.rpy, &X);
  kn_fem_body_place(b, &X);
  if (d->nattach > 0 && (st = attach_all(w, i, fi, err))) return st;
  if (d->velocity)
    for (int v = 0; v < b->mesh.nvert; v++)
      if (!b->fixed[v]) memcpy(b->v + 3 * v, d->velocity, 3 * sizeof(double));
  f->material = kn_contact_material_default(s->time_step);
  f->material.dissipation_time = KN_CONTACT_SOFT_DISSIPATION_TIME;
  if (d->friction) f->material.mu = *d->friction;
  if (d->stiffness) f->material.stiffness = *d->stiffness;
  if (d->dissipation_time) f->material.dissipation_time = *d->dissipation_time;
  /* surface vertices, in increasing index order */
  int nv = b->mesh.nvert;
  unsigned char* on = kn_calloc((size_t)nv, 1);
  size_t n3 = 3 * (size_t)nv, n9 = 9 * (size_t)b->mesh.ntet;
  f->x_backup = kn_calloc(n3, sizeof(double));
  f->v_backup = kn_calloc(n3, sizeof(double));
  f->R0_backup = kn_calloc(n9, sizeof(double));
  if (!on || !f->x_backup || !f->v_backup || !f->R0_backup) {
    free(on);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", s->path);
  }
  for (int k = 0; k < 3 * b->mesh.nsurf; k++) on[b->mesh.surf[k]] = 1;
  for (int v = 0; v < nv; v++) f->nsurf_vert += on[v];
  f->surf_vert = kn_calloc((size_t)f->nsurf_vert + 1, sizeof(int));
  if (!f->surf_vert) {
    free(on);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", s->path);
  }
  for (int v = 0, k = 0; v < nv; v++)
    if (on[v]) f->surf_vert[k++] = v;
  free(on);
  return KN_OK;
}

kn_status kn_sim_deformables_build(kn_world* w, kn_error* err) {
  /* FEM bodies here, MPM bodies (model: mpm) in mpm_world.c */
  unsigned n = w->scene->doc->ndeformables, nf = 0;
  for (unsigned i = 0; i < n; i++) nf += w->scene->doc->deformables[i].model != KN_DEFORMABLE_MPM;
  if (nf > 0) {
    w->fems = kn_calloc(nf, sizeof *w->fems);
    if (!w->fems) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", w->scene->path);
    w->nfem = (int)nf;
  }
  for (unsigned i = 0, fi = 0; i < n; i++) {
    if (w->scene->doc->deformables[i].model == KN_DEFORMABLE_MPM) continue;
    kn_status st = build_one(w, i, (int)fi++, err);
    if (st) return st;
  }
  return kn_sim_mpm_build(w, err);
}

void kn_sim_deformables_free(kn_world* w) {
  for (int i = 0; i < w->nfem; i++) {
    kn_world_fem* f = &w->fems[i];
    free(f->name);
    kn_fem_body_free(f->body);
    free(f->surf_vert);
    free(f->x_backup);
    free(f->v_backup);
    free(f->R0_backup);
    free(f->attach_tree);
    free(f->attach_link);
    free(f->attach_point);
  }
  free(w->fems);
  w->fems = NULL;
  w->nfem = 0;
  kn_sim_mpm_free(w);
}

void kn_sim_deformables_backup(kn_world* w, int restore) {
  kn_sim_mpm_backup(w, restore);
  for (int i = 0; i < w->nfem; i++) {
    kn_world_fem* f = &w->fems[i];
    kn_fem_body* b = f->body;
    size_t n3 = 3 * (size_t)b->mesh.nvert * sizeof(double), n9 = 9 * (size_t)b->mesh.ntet * sizeof(double);
    if (restore) {
      memcpy(b->x, f->x_backup, n3);
      memcpy(b->v, f->v_backup, n3);
      memcpy(b->R0, f->R0_backup, n9);
    } else {
      memcpy(f->x_backup, b->x, n3);
      memcpy(f->v_backup, b->v, n3);
      memcpy(f->R0_backup, b->R0, n9);
    }
  }
}

void kn_sim_deformable_centroid(const kn_world_fem* f, double c[3]) {
  const kn_fem_body* b = f->body;
  double m = 0;
  c[0] = c[1] = c[2] = 0;
  for (int v = 0; v < b->mesh.nvert; v++) {
    for (int k = 0; k < 3; k++) c[k] += b->mass[v] * b->x[3 * v + k];
    m += b->mass[v];
  }
  for (int k = 0; k < 3; k++) c[k] /= m;
}
