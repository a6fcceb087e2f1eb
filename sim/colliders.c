/* The world's colliders: every COLLISION geometry of every tree with its contact material, the
 * collision scene built once, and the pairs that never touch. Drake filters a body against
 * itself and against the bodies it is jointed to, treats bodies welded together (FIXED joints) as
 * one body and everything welded to the world as the world; knead does the same, except across
 * FLOATING joints (a free object must touch the ground it "hangs" from). The robots' own collision
 * filter groups (<drake:collision_filter_group>, kn_robot.filter_groups) and the scene's
 * contact.exclude and contact.filter_groups remove further pairs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

const char* kn_sim_tree_name(const kn_world* w, int k) {
  const kn_world_tree* tr = &w->trees[k];
  if (tr->root >= 0) return w->robots[tr->root].name;
  if (tr->object >= 0) return w->objects[tr->object].name;
  return "?";
}

const char* kn_sim_tree_kind(const kn_world* w, int k) { return w->trees[k].root >= 0 ? "robot" : "object"; }

// (material keys, NULL = default) => kn_contact_material
static kn_contact_material material_of(double dt, const double* mu, const double* k, const double* tau) {
  kn_contact_material m = kn_contact_material_default(dt);
  if (mu) m.mu = *mu;
  if (k) m.stiffness = *k;
  if (tau) m.dissipation_time = *tau;
  return m;
}

/* body => the body that represents its welded group: walk up through FIXED joints; -1 when the
 * group is welded to the world */
static int weld_rep(const kn_mb_model* m, int b) {
  while (b >= 0 && m->bodies[b].jtype == KN_JOINT_FIXED) b = m->bodies[b].parent;
  return b;
}

/* the filter key of (tree, body): -1 for the world, else a number unique per welded group */
static long filter_key(const kn_world* w, int tree, int body) {
  const kn_mb_model* m = w->trees[tree].robot->model;
  if (m->nv == 0) return -1;
  int r = weld_rep(m, body);
  return r < 0 ? -1 : (long)tree * 1000000L + r;
}

/* the key of the group that `body`'s group is jointed to (its parent group), or -2 when that joint
 * is FLOATING (never filtered) */
static long parent_key(const kn_world* w, int tree, int body) {
  const kn_mb_model* m = w->trees[tree].robot->model;
  if (m->nv == 0) return -2;
  int r = weld_rep(m, body);
  if (r < 0 || m->bodies[r].jtype == KN_JOINT_FLOATING) return -2;
  int p = m->bodies[r].parent;
  if (p < 0) return -1;
  return filter_key(w, tree, p);
}

// (scene name, collider) => 1 when the name is the collider's robot or object, or its own name
static int name_matches(const kn_world* w, const kn_world_collider* c, const char* name) {
  if (strcmp(c->name, name) == 0) return 1;
  const char* owner = c->owner >= 0 ? w->robots[c->owner].name : w->objects[-c->owner - 1].name;
  return strcmp(owner, name) == 0;
}

static int name_exists(const kn_world* w, const char* name) {
  for (int i = 0; i < w->ncollider; i++)
    if (name_matches(w, &w->colliders[i], name)) return 1;
  for (int i = 0; i < w->nrobot; i++)
    if (strcmp(w->robots[i].name, name) == 0) return 1;
  for (int i = 0; i < w->nobject; i++)
    if (strcmp(w->objects[i].name, name) == 0) return 1;
  return 0;
}

// (tree k, body) => the robot (>= 0) or -(object + 1) owning it
static int owner_of(const kn_world* w, int k, int body) {
  const kn_world_tree* tr = &w->trees[k];
  if (tr->object >= 0) return -tr->object - 1;
  for (int i = 0; i < w->nrobot; i++) {
    const kn_world_robot* r = &w->robots[i];
    if (r->tree == k && body >= r->body_offset && body < r->body_offset + r->nbody) return i;
  }
  return tr->root;
}

void kn_sim_collider_pose(const kn_world* w, int i, kn_pose* X_WG) {
  const kn_world_collider* c = &w->colliders[i];
  const kn_world_tree* tr = &w->trees[c->tree];
  const kn_mb_data* d = tr->data;
  /* world-fixed colliders carry their world pose (kn_collider convention) */
  if (c->c.clique < 0) {
    *X_WG = c->c.X_bg;
    return;
  }
  kn_pose_mul(&d->X_wb[c->body], &c->c.X_bg, X_WG);
}

double kn_sim_collider_reach(const kn_world* w, int i, double dt) {
  const kn_world_collider* c = &w->colliders[i];
  if (c->c.clique < 0) return 0.0;
  const kn_world_tree* tr = &w->trees[c->tree];
  double V[6];
  kn_mb_point_velocity(tr->robot->model, tr->data, c->body, c->c.X_bg.p, V);
  double r = kn_collider_radius(w->collision, i);
  double reach = dt * (kn_vec3_norm(V + 3) + kn_vec3_norm(V) * r) + dt * dt * kn_vec3_norm(w->scene->gravity);
  return isfinite(reach) ? reach : 0.0;
}

void kn_sim_colliders_free(kn_world* w) {
  for (int i = 0; i < w->ncollider; i++) free(w->colliders[i].name);
  free(w->colliders);
  w->colliders = NULL;
  w->ncollider = 0;
  kn_collision_scene_free(w->collision);
  w->collision = NULL;
}

/* 1 when some filter group holding collider a ignores a group holding collider b (Drake's
 * CollisionFilterDeclaration::ExcludeBetween / ExcludeWithin) */
static int group_filtered(const kn_world* w, const kn_scene_contact* sc, const kn_world_collider* a,
                          const kn_world_collider* b) {
  for (unsigned g = 0; sc && g < sc->nfilter_groups; g++) {
    const kn_scene_filter_group* G = &sc->filter_groups[g];
    int in = 0;
    for (unsigned m = 0; !in && m < G->nmembers; m++) in = name_matches(w, a, G->members[m]);
    if (!in) continue;
    for (unsigned i = 0; i < G->nignore; i++)
      for (unsigned h = 0; h < sc->nfilter_groups; h++) {
        const kn_scene_filter_group* H = &sc->filter_groups[h];
        if (strcmp(H->name, G->ignore[i]) != 0) continue;
        for (unsigned m = 0; m < H->nmembers; m++)
          if (name_matches(w, b, H->members[m])) return 1;
      }
  }
  return 0;
}

static int group_has_body(const kn_robot_filter_group* g, int body) {
  for (int m = 0; m < g->nmember; m++)
    if (g->members[m] == body) return 1;
  return 0;
}

/* 1 when a filter group of the tree's robot holding body a ignores a group holding body b (the
 * URDF's groups, applied like contact.filter_groups; their names were checked at load) */
static int robot_group_filtered(const kn_robot* r, int a, int b) {
  for (int g = 0; g < r->nfilter_group; g++) {
    const kn_robot_filter_group* G = &r->filter_groups[g];
    if (!group_has_body(G, a)) continue;
    for (int i = 0; i < G->nignore; i++)
      for (int h = 0; h < r->nfilter_group; h++)
        if (strcmp(r->filter_groups[h].name, G->ignores[i]) == 0 && group_has_body(&r->filter_groups[h], b)) return 1;
  }
  return 0;
}

kn_status kn_sim_colliders_build(kn_world* w, kn_error* err) {
  const kn_scene* s = w->scene;
  int n = 0;
  for (int k = 0; k < w->ntree; k++)
    for (int g = 0; g < w->trees[k].robot->ngeom; g++) n += w->trees[k].robot->geoms[g].role == KN_GEOM_COLLISION;
  w->colliders = kn_calloc((size_t)n, sizeof *w->colliders);
  if (!w->colliders) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", s->path);
  for (int k = 0; k < w->ntree; k++) {
    kn_world_tree* tr = &w->trees[k];
    const kn_mb_model* m = tr->robot->model;
    kn_mb_kinematics(m, tr->q, NULL, tr->data);
    for (int g = 0; g < tr->robot->ngeom; g++) {
      const kn_geometry* geo = &tr->robot->geoms[g];
      if (geo->role != KN_GEOM_COLLISION) continue;
      kn_world_collider* c = &w->colliders[w->ncollider++];
      c->tree = k;
      c->body = geo->body;
      c->owner = owner_of(w, k, geo->body);
      char buf[512];
      if (c->owner < 0) {
        const kn_scene_object* o = &s->doc->objects[-c->owner - 1];
        if (m->nbody == 1)
          snprintf(buf, sizeof buf, "%s", o->name);
        else
          snprintf(buf, sizeof buf, "%s/%s", o->name, m->bodies[geo->body].name);
        c->c.material = material_of(s->time_step, o->friction, o->stiffness, o->dissipation_time);
        c->soft = c->c.material;
        if (!o->dissipation_time) c->soft.dissipation_time = KN_CONTACT_SOFT_DISSIPATION_TIME;
      } else {
        const kn_scene_robot* r = &s->doc->robots[c->owner];
        /* an attached robot's links may carry a "<model>/" prefix in the merged tree */
        const char* link = m->bodies[geo->body].name;
        const char* slash = strrchr(link, '/');
        snprintf(buf, sizeof buf, "%s/%s", r->name, slash ? slash + 1 : link);
        c->c.material = r->contact ? material_of(s->time_step, r->contact->friction, r->contact->stiffness,
                                                 r->contact->dissipation_time)
                                   : kn_contact_material_default(s->time_step);
        c->soft = c->c.material;
        if (!r->contact || !r->contact->dissipation_time) c->soft.dissipation_time = KN_CONTACT_SOFT_DISSIPATION_TIME;
      }
      c->name = kn_strdup(buf);
      if (!c->name) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", s->path);
      c->c.shape = &geo->shape;
      c->c.group = c->c.mask = 0xffffffffu;
      if (m->nv > 0) {
        c->c.clique = k;
        c->c.body = geo->body;
        c->c.X_bg = geo->X_bg;
      } else {
        c->c.clique = -1;
        c->c.body = -1;
        kn_pose_mul(&tr->data->X_wb[geo->body], &geo->X_bg, &c->c.X_bg);
      }
    }
  }
  /* contact.exclude names must exist */
  const kn_scene_contact* sc = s->doc->contact;
  for (unsigned e = 0; sc && e < sc->nexclude; e++)
    for (int j = 0; j < 2; j++)
      if (!name_exists(w, sc->exclude[e].names[j])) {
        char key[64];
        snprintf(key, sizeof key, "contact.exclude[%u]", e);
        return kn_scene_fail(s, err, KN_ERR_INVALID, key, "'%s' is not an object, a robot or a collider "
                             "(\"robot/link\") of the scene", sc->exclude[e].names[j]);
      }
  /* contact.filter_groups: members must exist, ignored groups must be declared */
  for (unsigned g = 0; sc && g < sc->nfilter_groups; g++) {
    const kn_scene_filter_group* G = &sc->filter_groups[g];
    char key[96];
    for (unsigned m = 0; m < G->nmembers; m++)
      if (!name_exists(w, G->members[m])) {
        snprintf(key, sizeof key, "contact.filter_groups[%u].members[%u]", g, m);
        return kn_scene_fail(s, err, KN_ERR_INVALID, key, "group '%s': '%s' is not an object, a robot or a "
                             "collider (\"robot/link\") of the scene", G->name, G->members[m]);
      }
    for (unsigned i = 0; i < G->nignore; i++) {
      unsigned h = 0;
      while (h < sc->nfilter_groups && strcmp(sc->filter_groups[h].name, G->ignore[i]) != 0) h++;
      if (h == sc->nfilter_groups) {
        snprintf(key, sizeof key, "contact.filter_groups[%u].ignore[%u]", g, i);
        return kn_scene_fail(s, err, KN_ERR_INVALID, key, "group '%s' ignores '%s', which is not a filter group "
                             "of contact.filter_groups", G->name, G->ignore[i]);
      }
    }
  }
  /* FEM bodies query the collision scene (signed distances) even when there is one collider */
  if (w->ncollider < 2 && !(w->nfem + w->nmpm > 0 && w->ncollider > 0)) return KN_OK;
  kn_collider* cs = kn_calloc((size_t)w->ncollider, sizeof *cs);
  if (!cs) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", s->path);
  for (int i = 0; i < w->ncollider; i++) cs[i] = w->colliders[i].c;
  kn_status st = kn_collision_scene_create(cs, w->ncollider, &w->collision, err);
  free(cs);
  if (st) return kn_error_prefix(err, "%s: contact geometry: ", s->path);
  for (int i = 0; i < w->ncollider; i++) {
    const kn_world_collider* ci = &w->colliders[i];
    long ki = filter_key(w, ci->tree, ci->body), pi = parent_key(w, ci->tree, ci->body);
    for (int j = i + 1; j < w->ncollider; j++) {
      const kn_world_collider* cj = &w->colliders[j];
      long kj = filter_key(w, cj->tree, cj->body), pj = parent_key(w, cj->tree, cj->body);
      int skip = ki == kj || pi == kj || pj == ki;
      for (unsigned e = 0; !skip && sc && e < sc->nexclude; e++) {
        const char* a = sc->exclude[e].names[0];
        const char* b = sc->exclude[e].names[1];
        skip = (name_matches(w, ci, a) && name_matches(w, cj, b)) || (name_matches(w, ci, b) && name_matches(w, cj, a));
      }
      if (!skip) skip = group_filtered(w, sc, ci, cj) || group_filtered(w, sc, cj, ci);
      if (!skip && ci->tree == cj->tree) {
        const kn_robot* r = w->trees[ci->tree].robot;
        skip = robot_group_filtered(r, ci->body, cj->body) || robot_group_filtered(r, cj->body, ci->body);
      }
      if (skip) kn_collision_exclude(w->collision, i, j);
    }
  }
  return KN_OK;
}
