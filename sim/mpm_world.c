/* The scene's MPM deformables (model: mpm): particle bodies sampled from a shape, their contact
 * material, transactional backups and the centroid the outputs and checks read (sim.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

// (deformables[i].shape) => the mpm/ shape (the mesh path resolved against the scene's folder)
static kn_status mpm_shape(const kn_scene* s, const kn_scene_deformable* d, kn_mpm_shape* sh, char* path,
                           size_t cap) {
  memset(sh, 0, sizeof *sh);
  const kn_scene_fem_shape* in = d->shape;
  if (in->box) {
    sh->type = KN_MPM_BOX;
    memcpy(sh->size, in->box, sizeof sh->size);
  } else if (in->sphere) {
    sh->type = KN_MPM_SPHERE;
    sh->radius = *in->sphere;
  } else if (in->cylinder) {
    sh->type = KN_MPM_CYLINDER;
    sh->radius = in->cylinder[0], sh->length = in->cylinder[1];
  } else {
    sh->type = KN_MPM_MESH;
    const char* slash = strrchr(s->path, '/');
    if (in->mesh[0] == '/' || !slash)
      snprintf(path, cap, "%s", in->mesh);
    else
      snprintf(path, cap, "%.*s/%s", (int)(slash - s->path), s->path, in->mesh);
    sh->mesh_path = path;
    sh->scale = 1;
  }
  return KN_OK;
}

// smallest extent of the shape (for the default grid spacing)
static double min_size(const kn_scene_fem_shape* in) {
  if (in->box) return fmin(in->box[0], fmin(in->box[1], in->box[2]));
  if (in->sphere) return 2 * *in->sphere;
  if (in->cylinder) return fmin(2 * in->cylinder[0], in->cylinder[1]);
  return 0.1;
}

// (deformables[i], model mpm) => w->mpms[j]
static kn_status build_one(kn_world* w, unsigned i, int j, kn_error* err) {
  const kn_scene* s = w->scene;
  const kn_scene_deformable* d = &s->doc->deformables[i];
  kn_world_mpm* m = &w->mpms[j];
  char key[96], path[1024];
  m->name = kn_strdup(d->name);
  m->scene_index = (int)i;
  kn_mpm_material mat = kn_mpm_material_default();
  if (d->material) {
    const kn_scene_fem_material* dm = d->material;
    mat.model = dm->type == KN_SCENE_MPM_EOS_FLUID ? KN_MPM_EOS_FLUID : KN_MPM_LINEAR_COROTATED;
    if (dm->youngs_modulus) mat.youngs_modulus = *dm->youngs_modulus;
    if (dm->poisson_ratio) mat.poisson_ratio = *dm->poisson_ratio;
    if (dm->density) mat.density = *dm->density;
    if (dm->yield_stress) mat.yield_stress = *dm->yield_stress;
    if (dm->bulk_modulus) mat.bulk_modulus = *dm->bulk_modulus;
    if (dm->gamma) mat.gamma = *dm->gamma;
  }
  kn_mpm_shape sh;
  mpm_shape(s, d, &sh, path, sizeof path);
  sh.jitter = d->particle_jitter ? *d->particle_jitter : 0;
  double h = d->resolution ? *d->resolution : min_size(d->shape) / 8;
  int ppc = d->particles_per_cell ? *d->particles_per_cell : 8;
  kn_pose X;
  kn_pose_from_xyz_rpy(d->pose.xyz, d->pose.rpy, &X);
  kn_status st = kn_mpm_material_validate(&mat, d->name, err);
  if (!st) st = kn_mpm_body_create(&mat, &sh, &X, h, ppc, d->name, &m->body, err);
  if (!st && d->region) st = kn_mpm_body_set_region(m->body, d->region->min, d->region->max, err);
  if (st) {
    char msg[KN_ERROR_MSG];
    snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
    snprintf(key, sizeof key, "deformables[%u]%s", i, d->material ? ".material" : "");
    return kn_scene_fail(s, err, st, key, "%s", msg);
  }
  if (d->velocity) kn_mpm_body_set_velocity(m->body, d->velocity);
  m->material = kn_contact_material_default(s->time_step);
  m->material.dissipation_time = KN_CONTACT_SOFT_DISSIPATION_TIME;
  if (d->friction) m->material.mu = *d->friction;
  if (d->stiffness) m->material.stiffness = *d->stiffness;
  if (d->dissipation_time) m->material.dissipation_time = *d->dissipation_time;
  m->contact_radius = d->contact_radius ? *d->contact_radius : 0;
  m->backup = kn_calloc(1, sizeof(kn_mpm_state));
  if (!m->backup) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", s->path);
  return kn_mpm_state_save(m->body, m->backup, err);
}

// grid name of deformables[i] ("" when not given)
static const char* grid_name(const kn_world* w, const kn_world_mpm* m) {
  const char* g = w->scene->doc->deformables[m->scene_index].grid;
  return g ? g : "";
}

/* w->mpms => w->mpm_grids: the deformables with the same grid name are merged into one body (in
 * scene order, so that the particle order and the results are fixed) and each becomes a view of its
 * part; a grid with one deformable keeps its deformable's body. */
static kn_status group_grids(kn_world* w, kn_error* err) {
  w->mpm_grids = kn_calloc((size_t)w->nmpm, sizeof *w->mpm_grids);
  w->mpm_grid_owned = kn_calloc((size_t)w->nmpm, 1);
  const kn_mpm_body** members = kn_calloc((size_t)w->nmpm, sizeof *members);
  int* index = kn_calloc((size_t)w->nmpm, sizeof *index);
  kn_status st = KN_OK;
  if (!w->mpm_grids || !w->mpm_grid_owned || !members || !index) {
    st = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", w->scene->path);
    goto done;
  }
  for (int i = 0; i < w->nmpm; i++) w->mpms[i].grid = -1;
  for (int i = 0; i < w->nmpm && !st; i++) {
    if (w->mpms[i].grid >= 0) continue;
    int n = 0, g = w->nmpm_grid++;
    for (int j = i; j < w->nmpm; j++) {
      if (w->mpms[j].grid >= 0 || strcmp(grid_name(w, &w->mpms[j]), grid_name(w, &w->mpms[i]))) continue;
      if (w->mpms[j].body->h != w->mpms[i].body->h) {
        char key[96];
        snprintf(key, sizeof key, "deformables[%d].grid", w->mpms[j].scene_index);
        st = kn_scene_fail(w->scene, err, KN_ERR_INVALID, key,
                           "'%s' (resolution %g) shares the grid '%s' with '%s' (resolution %g): one grid, one "
                           "resolution (give it another grid name or the same resolution)",
                           w->mpms[j].name, w->mpms[j].body->h, grid_name(w, &w->mpms[i]), w->mpms[i].name,
                           w->mpms[i].body->h);
        goto done;
      }
      w->mpms[j].grid = g;
      index[n] = j;
      members[n++] = w->mpms[j].body;
    }
    if (n == 1) {
      w->mpm_grids[g] = w->mpms[i].body;
      w->mpms[i].first = 0;
      continue;
    }
    char name[256]; /* "a+b+c": the body errors of its free motion name */
    int at = 0;
    name[0] = 0;
    for (int k = 0; k < n && at < (int)sizeof name; k++)
      at += snprintf(name + at, sizeof name - (size_t)at, "%s%s", k ? "+" : "", w->mpms[index[k]].name);
    kn_mpm_body* merged = NULL;
    st = kn_mpm_body_merge(members, n, name, &merged, err);
    if (st) break;
    w->mpm_grids[g] = merged;
    w->mpm_grid_owned[g] = 1;
    for (int k = 0; k < n && !st; k++) {
      kn_world_mpm* m = &w->mpms[index[k]];
      kn_mpm_body* view = NULL;
      st = kn_mpm_body_view(merged, k, &view, err);
      if (st) break;
      m->first = merged->parts[k].first;
      kn_mpm_body_free(m->body);
      m->body = view;
    }
  }
done:
  free(members), free(index);
  return st;
}

kn_status kn_sim_mpm_build(kn_world* w, kn_error* err) {
  const kn_scene_doc* d = w->scene->doc;
  int n = 0;
  for (unsigned i = 0; i < d->ndeformables; i++) n += d->deformables[i].model == KN_DEFORMABLE_MPM;
  if (n == 0) return KN_OK;
  w->mpms = kn_calloc((size_t)n, sizeof *w->mpms);
  if (!w->mpms) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", w->scene->path);
  w->nmpm = n;
  for (unsigned i = 0, j = 0; i < d->ndeformables; i++)
    if (d->deformables[i].model == KN_DEFORMABLE_MPM) {
      kn_status st = build_one(w, i, (int)j++, err);
      if (st) return st;
    }
  return group_grids(w, err);
}

void kn_sim_mpm_free(kn_world* w) {
  for (int i = 0; i < w->nmpm; i++) {
    free(w->mpms[i].name);
    kn_mpm_body_free(w->mpms[i].body); /* a view first: it does not free its grid body's arrays */
    if (w->mpms[i].backup) kn_mpm_state_free(w->mpms[i].backup);
    free(w->mpms[i].backup);
    free(w->mpms[i].collider_force);
  }
  for (int g = 0; g < w->nmpm_grid; g++)
    if (w->mpm_grid_owned[g]) kn_mpm_body_free(w->mpm_grids[g]);
  free(w->mpm_grids), free(w->mpm_grid_owned);
  w->mpm_grids = NULL, w->mpm_grid_owned = NULL;
  w->nmpm_grid = 0;
  free(w->mpms);
  w->mpms = NULL;
  w->nmpm = 0;
}

void kn_sim_mpm_backup(kn_world* w, int restore) {
  for (int i = 0; i < w->nmpm; i++) {
    kn_world_mpm* m = &w->mpms[i];
    /* sizes never change (np is fixed), so neither call can fail after the first save */
    if (restore)
      kn_mpm_state_restore(m->body, m->backup, NULL);
    else
      kn_mpm_state_save(m->body, m->backup, NULL);
  }
}

uint64_t kn_sim_mpm_hash(const kn_world* w, uint64_t h) {
  for (int i = 0; i < w->nmpm; i++) h = kn_mpm_state_hash(h, w->mpms[i].body);
  return h;
}

void kn_sim_mpm_centroid(const kn_world_mpm* m, double c[3]) {
  const kn_mpm_body* b = m->body;
  double mass = 0;
  c[0] = c[1] = c[2] = 0;
  for (int p = 0; p < b->np; p++) {
    for (int k = 0; k < 3; k++) c[k] += b->mass[p] * b->x[3 * p + k];
    mass += b->mass[p];
  }
  for (int k = 0; k < 3; k++) c[k] /= mass;
}
