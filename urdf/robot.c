/* What a loaded robot offers after loading: DoF count, welding robots together, the check that
 * its collision geometry is complete, and freeing it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urdf/urdf_internal.h"

static void filter_group_clear(kn_robot_filter_group* g) {
  free(g->name);
  free(g->members);
  for (int k = 0; g->ignores && k < g->nignore; k++) free(g->ignores[k]);
  free(g->ignores);
  memset(g, 0, sizeof *g);
}

void kn_robot_free(kn_robot* r) {
  if (!r) return;
  for (int i = 0; i < r->nfilter_group; i++) filter_group_clear(&r->filter_groups[i]);
  free(r->filter_groups);
  kn_mb_model_free(r->model);
  for (int i = 0; i < r->ngeom; i++) kn_geometry_clear(&r->geoms[i]);
  free(r->geoms);
  kn_diag_free(&r->warnings);
  free(r->source_path);
  free(r->search_paths);
  free(r);
}

// robot => nv - ncoupler: each mimic joint follows its master and adds no freedom
int kn_robot_dofs(const kn_robot* r) {
  if (!r || !r->model) return 0;
  return r->model->nv - r->model->ncoupler;
}

/* deep copy of a geometry's strings into dst (struct already copied); 0 on allocation failure */
static int copy_geometry(kn_geometry* dst, const kn_geometry* src, int body_offset) {
  *dst = *src;
  dst->body = src->body + body_offset;
  dst->name = NULL;
  dst->shape.mesh_uri = dst->shape.mesh_path = NULL;
  if (src->name && !(dst->name = kn_strdup(src->name))) return 0;
  if (src->shape.mesh_uri && !(dst->shape.mesh_uri = kn_strdup(src->shape.mesh_uri))) return 0;
  if (src->shape.mesh_path && !(dst->shape.mesh_path = kn_strdup(src->shape.mesh_path))) return 0;
  return 1;
}

/* 1 when a body or joint name of child is already used in m: then child's names get a prefix */
static int names_clash(const kn_mb_model* m, const kn_mb_model* child) {
  for (int i = 0; i < child->nbody; i++) {
    const kn_mb_body* b = &child->bodies[i];
    if (kn_mb_find_body(m, b->name) >= 0) return 1;
    if (b->joint_name && kn_mb_find_joint(m, b->joint_name) >= 0) return 1;
  }
  return 0;
}

/* "<pre><name>" malloc'd (pre may be NULL) */
static char* prefixed(const char* pre, const char* name) {
  size_t n = (pre ? strlen(pre) : 0) + strlen(name) + 1;
  char* s = malloc(n);
  if (s) snprintf(s, n, "%s%s", pre ? pre : "", name);
  return s;
}

static int find_group(const kn_robot* r, const char* name) {
  for (int i = 0; i < r->nfilter_group; i++)
    if (strcmp(r->filter_groups[i].name, name) == 0) return i;
  return -1;
}

/* child's group g copied into dst with bodies shifted by body_offset and names prefixed by pre;
 * 0 on allocation failure (dst then holds what was copied, for filter_group_clear) */
static int copy_filter_group(kn_robot_filter_group* dst, const kn_robot_filter_group* g, int body_offset,
                             const char* pre) {
  memset(dst, 0, sizeof *dst);
  dst->name = prefixed(pre, g->name);
  dst->members = malloc((size_t)(g->nmember ? g->nmember : 1) * sizeof *dst->members);
  dst->ignores = calloc((size_t)(g->nignore ? g->nignore : 1), sizeof *dst->ignores);
  if (!dst->name || !dst->members || !dst->ignores) return 0;
  for (int m = 0; m < g->nmember; m++) dst->members[dst->nmember++] = g->members[m] + body_offset;
  for (int k = 0; k < g->nignore; k++) {
    if (!(dst->ignores[k] = prefixed(pre, g->ignores[k]))) return 0;
    dst->nignore++;
  }
  return 1;
}

// (parent, child, link name, X_link_root) => parent with child's bodies, couplers, geometry, warnings
kn_status kn_robot_attach(kn_robot* parent, const kn_robot* child, const char* link, const kn_pose* X_link_root,
                          kn_error* err) {
  if (!parent || !child || !parent->model || !child->model || !link)
    return kn_fail(err, KN_ERR_INVALID, "kn_robot_attach: missing robot or link name");
  const char* pname = parent->source_path ? parent->source_path : parent->model->name;
  const char* cname = child->source_path ? child->source_path : child->model->name;
  int body = kn_mb_find_body(parent->model, link);
  if (body < 0)
    return kn_fail(err, KN_ERR_INVALID, "attaching %s: %s has no link '%s'", cname, pname, link);
  if (child->model->nbody > 0 && child->model->bodies[0].jtype != KN_JOINT_FIXED)
    return kn_fail(err, KN_ERR_INVALID, "attaching %s to link '%s' of %s: its root joint is %s; it must be fixed",
                   cname, link, pname, kn_joint_type_name(child->model->bodies[0].jtype));
  kn_pose identity;
  kn_pose_identity(&identity);
  if (!X_link_root) X_link_root = &identity;

  /* everything that can fail is prepared first, so a failure leaves parent unchanged */
  int offset = parent->model->nbody;
  int n = parent->ngeom + child->ngeom;
  kn_geometry* geoms = kn_calloc((size_t)n, sizeof *geoms);
  char prefix[256];
  snprintf(prefix, sizeof prefix, "%s/", child->model->name ? child->model->name : "child");
  kn_status st = geoms ? KN_OK : kn_fail(err, KN_ERR_NOMEM, "attaching %s: out of memory", cname);
  int ncopied = 0;
  for (int i = 0; st == KN_OK && i < child->ngeom; i++, ncopied++)
    if (!copy_geometry(&geoms[parent->ngeom + i], &child->geoms[i], offset)) {
      ncopied++;
      st = kn_fail(err, KN_ERR_NOMEM, "attaching %s: out of memory", cname);
    }
  /* filter groups: prefixed with the bodies, or when a name is already a group of parent (two
   * copies of one robot must not share a group, which would filter one against the other) */
  int body_pre = st == KN_OK && names_clash(parent->model, child->model);
  int group_pre = body_pre;
  for (int i = 0; !group_pre && i < child->nfilter_group; i++)
    group_pre = find_group(parent, child->filter_groups[i].name) >= 0;
  int ngroup = parent->nfilter_group + child->nfilter_group;
  kn_robot_filter_group* groups = NULL;
  int ngcopied = 0;
  if (st == KN_OK && child->nfilter_group > 0) {
    groups = kn_calloc((size_t)ngroup, sizeof *groups);
    if (!groups) st = kn_fail(err, KN_ERR_NOMEM, "attaching %s: out of memory", cname);
    for (int i = 0; st == KN_OK && i < child->nfilter_group; i++) {
      kn_robot_filter_group* g = &groups[parent->nfilter_group + i];
      ngcopied++;
      if (!copy_filter_group(g, &child->filter_groups[i], offset, group_pre ? prefix : NULL))
        st = kn_fail(err, KN_ERR_NOMEM, "attaching %s: out of memory", cname);
      else if (find_group(parent, g->name) >= 0)
        st = kn_fail(err, KN_ERR_INVALID, "attaching %s to link '%s' of %s: collision filter group '%s' already "
                     "exists in %s", cname, link, pname, g->name, pname);
    }
  }
  if (st == KN_OK) {
    st = kn_mb_model_attach(parent->model, child->model, body, X_link_root, body_pre ? prefix : NULL, err);
    if (st != KN_OK) kn_error_prefix(err, "attaching %s to link '%s' of %s: ", cname, link, pname);
  }
  if (st != KN_OK) {
    for (int i = 0; geoms && i < ncopied; i++) kn_geometry_clear(&geoms[parent->ngeom + i]);
    free(geoms);
    for (int i = 0; groups && i < ngcopied; i++) filter_group_clear(&groups[parent->nfilter_group + i]);
    free(groups);
    return st;
  }
  if (groups) {
    if (parent->nfilter_group) memcpy(groups, parent->filter_groups, (size_t)parent->nfilter_group * sizeof *groups);
    free(parent->filter_groups);
    parent->filter_groups = groups;
    parent->nfilter_group = ngroup;
  }
  if (parent->ngeom) memcpy(geoms, parent->geoms, (size_t)parent->ngeom * sizeof *geoms);
  free(parent->geoms);
  parent->geoms = geoms;
  parent->ngeom = n;
  for (int i = 0; i < child->warnings.count; i++) kn_diag_add(&parent->warnings, "%s", child->warnings.items[i]);
  parent->missing_collision_meshes += child->missing_collision_meshes;
  parent->missing_visual_meshes += child->missing_visual_meshes;
  /* keep the child's search paths for messages when they differ */
  if (child->search_paths && (!parent->search_paths || strcmp(parent->search_paths, child->search_paths) != 0)) {
    size_t len = (parent->search_paths ? strlen(parent->search_paths) : 0) + strlen(child->search_paths) + 2;
    char* joined = malloc(len);
    if (joined) {
      snprintf(joined, len, "%s%s%s", parent->search_paths ? parent->search_paths : "",
               parent->search_paths ? ":" : "", child->search_paths);
      free(parent->search_paths);
      parent->search_paths = joined;
    }
  }
  return KN_OK;
}

// robot => KN_OK, or KN_ERR_IO naming the first collision mesh that did not resolve
/* Drake's rule (MultibodyPlant::Finalize): a body that a joint moves must have mass, or carry
 * bodies that do; a massless terminal link on a revolute or prismatic joint makes the mass matrix
 * singular and the first step fails in a Cholesky factorization that names neither. As Drake
 * does, knead loads such a model (kinematics and `knead info` need no mass; visualization URDFs
 * such as PR2's and Robotiq's have massless moving links) and refuses to simulate it, after
 * attachments, which may give it mass: here, naming the link and the joint. (Mass without
 * rotational inertia about the joint's axis, a point mass on the axis, is not caught here.) */
static kn_status check_moving_mass(const kn_robot* r, kn_error* err) {
  const char* src = r->source_path ? r->source_path : r->model->name;
  const kn_mb_model* m = r->model;
  double* sub = kn_calloc((size_t)m->nbody, sizeof *sub);
  if (!sub) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", src);
  /* bodies are in topological order: children after their parent */
  for (int b = m->nbody - 1; b >= 0; b--) {
    sub[b] += m->bodies[b].mass;
    if (m->bodies[b].parent >= 0) sub[m->bodies[b].parent] += sub[b];
  }
  kn_status st = KN_OK;
  for (int b = 0; b < m->nbody && st == KN_OK; b++)
    if (m->bodies[b].nv > 0 && !(sub[b] > 0))
      st = kn_fail(err, KN_ERR_INVALID,
                   "%s: link '%s' is moved by %s joint '%s' but neither it nor any link below it has mass (no "
                   "<inertial>, or mass 0): the mass matrix would be singular; give it an <inertial> with mass > 0, "
                   "or make the joint fixed",
                   src, m->bodies[b].name, kn_joint_type_name(m->bodies[b].jtype),
                   m->bodies[b].joint_name ? m->bodies[b].joint_name : "(root)");
  free(sub);
  return st;
}

kn_status kn_robot_check_simulatable(const kn_robot* r, kn_error* err) {
  if (!r || !r->model) return kn_fail(err, KN_ERR_INVALID, "no robot");
  for (int i = 0; i < r->ngeom; i++) {
    const kn_geometry* g = &r->geoms[i];
    if (g->role != KN_GEOM_COLLISION || g->shape.type != KN_SHAPE_MESH || g->shape.mesh_path) continue;
    const char* link = g->body >= 0 && g->body < r->model->nbody ? r->model->bodies[g->body].name : "?";
    return kn_fail(err, KN_ERR_IO,
                   "%s: collision mesh '%s' of link '%s' not found (search paths: %s); %d collision mesh%s missing",
                   r->source_path ? r->source_path : r->model->name, g->shape.mesh_uri ? g->shape.mesh_uri : "?",
                   link, r->search_paths ? r->search_paths : "(none)", r->missing_collision_meshes,
                   r->missing_collision_meshes == 1 ? "" : "es");
  }
  return check_moving_mass(r, err);
}
