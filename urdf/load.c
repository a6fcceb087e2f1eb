/* URDF text => kn_robot: urdfdom parses (urdfdom_shim.cpp), this file builds the multibody tree,
 * the couplers of <mimic> joints and the geometry list, and reports what knead does not use. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urdf/urdf_internal.h"
#include "urdf/urdfdom_shim.h"

kn_urdf_options kn_urdf_options_default(void) {
  kn_urdf_options o;
  memset(&o, 0, sizeof o);
  kn_pose_identity(&o.base_pose);
  return o;
}

//---- conversions ----

static void origin_to_pose(const kn_ushim_origin* o, kn_pose* X) {
  double q[4] = {o->quat[0], o->quat[1], o->quat[2], o->quat[3]};
  kn_quat_normalize(q);
  kn_mat3_from_quat(q, X->R);
  memcpy(X->p, o->xyz, sizeof X->p);
}

static kn_joint_type joint_type(kn_ushim_joint_type t) {
  switch (t) {
    case KN_USHIM_REVOLUTE: return KN_JOINT_REVOLUTE;
    case KN_USHIM_CONTINUOUS: return KN_JOINT_CONTINUOUS;
    case KN_USHIM_PRISMATIC: return KN_JOINT_PRISMATIC;
    case KN_USHIM_PLANAR: return KN_JOINT_PLANAR;
    case KN_USHIM_FLOATING: return KN_JOINT_FLOATING;
    case KN_USHIM_FIXED: break;
  }
  return KN_JOINT_FIXED;
}

/* URDF inertia is given about the COM in the <inertial><origin> frame C; in the link frame
 * I_com = R_LC I_C R_LC^T (the tensor transforms as a second-order tensor). */
static void inertia_in_link_frame(const kn_ushim_link* l, double I[9]) {
  const double Ic[9] = {l->ixx, l->ixy, l->ixz, l->ixy, l->iyy, l->iyz, l->ixz, l->iyz, l->izz};
  kn_pose X;
  origin_to_pose(&l->inertial_origin, &X);
  double RI[9], Rt[9];
  kn_mat3_mul(X.R, Ic, RI);
  kn_mat3_transpose(X.R, Rt);
  kn_mat3_mul(RI, Rt, I);
  /* symmetrize: the product is symmetric up to rounding, the model checks symmetry */
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++) {
      double s = 0.5 * (I[3 * i + j] + I[3 * j + i]);
      I[3 * i + j] = I[3 * j + i] = s;
    }
}

/* Many published URDFs carry inertias that no rigid body has (a negative principal moment, or
 * moments breaking the triangle inequality l1 + l2 >= l3), and the multibody model refuses them.
 * Replace such a tensor by a physical one with the same principal axes: clamp the moments at 0,
 * then move them the least distance onto l_min + l_mid = l_max (along (1, 1, -1)), and say so. */
static void make_inertia_physical(double I[9], kn_diag* warnings, const char* src, const char* link) {
  double e[3], Q[9];
  kn_mat3_sym_eigen(I, e, Q);
  int idx[3] = {0, 1, 2}; /* ascending order of e */
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++)
      if (e[idx[j]] < e[idx[i]]) {
        int t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
      }
  double l[3] = {e[idx[0]], e[idx[1]], e[idx[2]]};
  double tol = 1e-7 * (fabs(l[0]) + fabs(l[1]) + fabs(l[2])) + 1e-14; /* tighter than the model's check */
  if (l[0] >= -tol && l[0] + l[1] >= l[2] - tol) return;
  double fixed[3];
  for (int i = 0; i < 3; i++) fixed[i] = l[i] > 0 ? l[i] : 0;
  double d = (fixed[2] - fixed[0] - fixed[1]) / 3.0;
  if (d > 0) {
    fixed[0] += d;
    fixed[1] += d;
    fixed[2] -= d;
  }
  kn_diag_add(warnings,
              "%s: link '%s': inertia principal moments (%g, %g, %g) are not physical (need >= 0 and the triangle "
              "inequality); using (%g, %g, %g) about the same axes",
              src, link, l[0], l[1], l[2], fixed[0], fixed[1], fixed[2]);
  double ev[3];
  for (int i = 0; i < 3; i++) ev[idx[i]] = fixed[i];
  for (int r = 0; r < 3; r++) /* I = Q diag(ev) Q^T */
    for (int c = 0; c < 3; c++) {
      double s = 0;
      for (int k = 0; k < 3; k++) s += Q[3 * r + k] * ev[k] * Q[3 * c + k];
      I[3 * r + c] = s;
    }
  for (int r = 0; r < 3; r++)
    for (int c = r + 1; c < 3; c++) I[3 * c + r] = I[3 * r + c];
}

//---- tree order ----

/* 1 when joint i is the inboard joint of its child link (urdfdom keeps one per link) */
static int in_tree(const kn_ushim_model* u, int i) { return u->links[u->joints[i].child_link].parent_joint == i; }


/* Bodies in depth-first preorder from the root, children in document order of their joints, so
 * a serial chain keeps the order it is written in. order[k] = link index, body_of[link] = k. */
static kn_status tree_order(const kn_ushim_model* u, int* order, int* body_of, const char* src, kn_error* err) {
  for (int i = 0; i < u->nlink; i++) body_of[i] = -1;
  int* stack = kn_calloc((size_t)u->nlink, sizeof *stack);
  /* each link's tree joints as a list in reverse document order (first[l], then next[j]), built
   * in one pass: scanning every joint for every link was quadratic in a long chain */
  int* first = kn_calloc((size_t)u->nlink, sizeof *first);
  int* next = kn_calloc((size_t)u->njoint, sizeof *next);
  if (!stack || !first || !next) {
    free(stack), free(first), free(next);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", src);
  }
  for (int l = 0; l < u->nlink; l++) first[l] = -1;
  for (int j = 0; j < u->njoint; j++)
    if (in_tree(u, j)) {
      next[j] = first[u->joints[j].parent_link];
      first[u->joints[j].parent_link] = j;
    }
  int nstack = 0, n = 0;
  stack[nstack++] = u->root;
  while (nstack > 0) {
    int l = stack[--nstack];
    if (body_of[l] >= 0) continue;
    body_of[l] = n;
    order[n++] = l;
    /* push children in reverse document order so the first is visited first */
    for (int j = first[l]; j >= 0; j = next[j])
      if (body_of[u->joints[j].child_link] < 0 && nstack < u->nlink) stack[nstack++] = u->joints[j].child_link;
  }
  free(stack), free(first), free(next);
  if (n != u->nlink) {
    for (int i = 0; i < u->nlink; i++)
      if (body_of[i] < 0)
        return kn_fail(err, KN_ERR_INVALID, "%s: link '%s' is not connected to the root link '%s'", src,
                       u->links[i].name, u->links[u->root].name);
  }
  return KN_OK;
}

//---- bodies ----

static kn_status add_body(kn_robot* r, const kn_ushim_model* u, int link, const int* body_of,
                          const kn_urdf_options* opt, const char* src, kn_error* err) {
  const kn_ushim_link* l = &u->links[link];
  kn_mb_body b;
  memset(&b, 0, sizeof b);
  b.name = l->name;
  b.axis[2] = 1.0;
  b.velocity_limit = INFINITY;
  b.effort_limit = INFINITY;
  if (l->parent_joint < 0) {
    b.parent = -1;
    b.jtype = opt->floating_base ? KN_JOINT_FLOATING : KN_JOINT_FIXED;
    b.joint_name = opt->floating_base ? "floating_base" : NULL;
    b.X_pj = opt->base_pose;
  } else {
    const kn_ushim_joint* j = &u->joints[l->parent_joint];
    b.parent = body_of[j->parent_link];
    b.joint_name = j->name;
    b.jtype = joint_type(j->type);
    origin_to_pose(&j->origin, &b.X_pj);
    if (b.jtype != KN_JOINT_FIXED && b.jtype != KN_JOINT_FLOATING) memcpy(b.axis, j->axis, sizeof b.axis);
    if (j->has_limits) {
      b.has_position_limits =
          (b.jtype == KN_JOINT_REVOLUTE || b.jtype == KN_JOINT_PRISMATIC) && j->lower < j->upper;
      if (b.has_position_limits) {
        b.lower = j->lower;
        b.upper = j->upper;
      }
      /* <limit> requires effort and velocity; files write 0 when they mean "not given" */
      if (j->effort > 0) b.effort_limit = j->effort;
      if (j->velocity > 0) b.velocity_limit = j->velocity;
    }
    if (j->has_dynamics) {
      b.damping = j->damping;
      b.friction = j->friction;
    }
  }
  if (l->has_inertial) {
    b.mass = l->mass;
    memcpy(b.com, l->inertial_origin.xyz, sizeof b.com);
    inertia_in_link_frame(l, b.I_com);
    make_inertia_physical(b.I_com, &r->warnings, src, l->name);
  } else {
    kn_diag_add(&r->warnings, "%s: link '%s' has no <inertial>: mass 0", src, l->name);
  }
  if (kn_mb_add_body(r->model, &b, err) < 0) {
    if (err && err->status == KN_OK) err->status = KN_ERR_INVALID;
    kn_error_prefix(err, "%s: link '%s': ", src, l->name);
    return err ? err->status : KN_ERR_INVALID;
  }
  return KN_OK;
}

/* urdfdom accepts a link that is the child of two joints and silently keeps one: say which */
static void warn_dropped_joints(kn_robot* r, const kn_ushim_model* u, const char* src) {
  for (int i = 0; i < u->njoint; i++) {
    if (in_tree(u, i)) continue;
    const kn_ushim_joint* j = &u->joints[i];
    int kept = u->links[j->child_link].parent_joint;
    kn_diag_add(&r->warnings,
                "%s: joint '%s' ignored: link '%s' is the child of more than one joint and urdfdom kept joint '%s' "
                "(a URDF must be a tree)",
                src, j->name, u->links[j->child_link].name, kept >= 0 ? u->joints[kept].name : "?");
  }
}

/* <mimic> chains must end at a joint that mimics none: j1 mimics j2 and j2 mimics j1 would leave
 * both joints without a free coordinate (0 DoFs). */
static kn_status check_mimic_cycles(const kn_ushim_model* u, const kn_name_map* joints, const char* src,
                                    kn_error* err) {
  for (int i = 0; i < u->njoint; i++) {
    int cur = i, hops = 0;
    while (u->joints[cur].has_mimic && hops <= u->njoint) {
      int next = kn_name_map_get(joints, u->joints[cur].mimic_joint);
      if (next < 0) break;
      cur = next;
      hops++;
      if (cur == i) break;
    }
    if (cur != i || hops == 0) continue;
    char chain[512];
    size_t k = (size_t)snprintf(chain, sizeof chain, "'%s'", u->joints[i].name);
    cur = i;
    do {
      cur = kn_name_map_get(joints, u->joints[cur].mimic_joint);
      if (k < sizeof chain) k += (size_t)snprintf(chain + k, sizeof chain - k, " -> '%s'", u->joints[cur].name);
    } while (cur != i);
    return kn_fail(err, KN_ERR_INVALID,
                   "%s: joints mimic each other in a cycle (%s): no joint of the cycle is free; a <mimic> chain must "
                   "end at a joint that mimics none",
                   src, chain);
  }
  return KN_OK;
}

static kn_status add_couplers(kn_robot* r, const kn_ushim_model* u, const int* body_of, const kn_name_map* joints,
                              const char* src, kn_error* err) {
  for (int i = 0; i < u->njoint; i++) {
    const kn_ushim_joint* j = &u->joints[i];
    if (!j->has_mimic || !in_tree(u, i)) continue;
    int master = kn_name_map_get(joints, j->mimic_joint);
    if (master < 0)
      return kn_fail(err, KN_ERR_INVALID, "%s: joint '%s' mimics joint '%s', which does not exist", src, j->name,
                     j->mimic_joint);
    if (!in_tree(u, master)) {
      kn_diag_add(&r->warnings, "%s: joint '%s' mimics joint '%s', which is not in the tree: <mimic> ignored", src,
                  j->name, j->mimic_joint);
      continue;
    }
    kn_mb_coupler c = {.body = body_of[j->child_link],
                       .master = body_of[u->joints[master].child_link],
                       .multiplier = j->multiplier,
                       .offset = j->offset};
    const kn_mb_body* bj = &r->model->bodies[c.body];
    const kn_mb_body* bm = &r->model->bodies[c.master];
    if (bj->nv != 1 || bm->nv != 1) {
      /* a coupler ties two 1-DoF joints; any other pairing (a fixed joint "mimicking") has nothing to tie */
      kn_diag_add(&r->warnings, "%s: joint '%s' (%s) mimics joint '%s' (%s): <mimic> ignored, it needs two 1-DoF joints",
                  src, j->name, kn_joint_type_name(bj->jtype), j->mimic_joint, kn_joint_type_name(bm->jtype));
      continue;
    }
    if (kn_mb_add_coupler(r->model, &c, err) < 0) {
      if (err && err->status == KN_OK) err->status = KN_ERR_INVALID;
      kn_error_prefix(err, "%s: joint '%s' <mimic>: ", src, j->name);
      return err ? err->status : KN_ERR_INVALID;
    }
  }
  return KN_OK;
}

//---- geometry ----

static kn_status add_geometry(kn_robot* r, const kn_ushim_model* u, const int* order, const kn_urdf_search* s,
                              const char* base_dir, const char* src, kn_error* err) {
  int total = 0;
  for (int i = 0; i < u->nlink; i++) total += u->links[i].ngeom;
  r->geoms = kn_calloc((size_t)total, sizeof *r->geoms);
  if (!r->geoms) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", src);
  for (int body = 0; body < u->nlink; body++) {
    const kn_ushim_link* l = &u->links[order[body]];
    for (int k = 0; k < l->ngeom; k++) {
      const kn_ushim_geom* ug = &l->geoms[k];
      kn_geometry* g = &r->geoms[r->ngeom++];
      g->body = body;
      g->role = ug->is_visual ? KN_GEOM_VISUAL : KN_GEOM_COLLISION;
      origin_to_pose(&ug->origin, &g->X_bg);
      g->rgba[0] = g->rgba[1] = g->rgba[2] = 0.7;
      g->rgba[3] = 1.0;
      if (ug->is_visual && ug->has_rgba) memcpy(g->rgba, ug->rgba, sizeof g->rgba);
      g->shape.scale[0] = g->shape.scale[1] = g->shape.scale[2] = 1.0;
      if (ug->name && !(g->name = kn_strdup(ug->name))) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", src);
      switch (ug->shape) {
        case KN_USHIM_SPHERE: g->shape.type = KN_SHAPE_SPHERE; break;
        case KN_USHIM_BOX: g->shape.type = KN_SHAPE_BOX; break;
        case KN_USHIM_CYLINDER: g->shape.type = KN_SHAPE_CYLINDER; break;
        case KN_USHIM_MESH: g->shape.type = KN_SHAPE_MESH; break;
      }
      memcpy(g->shape.size, ug->size, sizeof g->shape.size);
      if (ug->shape != KN_USHIM_MESH) continue;
      memcpy(g->shape.scale, ug->scale, sizeof g->shape.scale);
      if (!(g->shape.mesh_uri = kn_strdup(ug->filename))) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", src);
      g->shape.mesh_path = kn_urdf_resolve_mesh(s, ug->filename, base_dir);
      if (g->shape.mesh_path) continue;
      if (ug->is_visual) {
        r->missing_visual_meshes++;
        kn_diag_add(&r->warnings, "%s: link '%s': visual mesh '%s' not found (search paths: %s)", src, l->name,
                    ug->filename, r->search_paths);
      } else {
        r->missing_collision_meshes++;
        kn_diag_add(&r->warnings,
                    "%s: link '%s': collision mesh '%s' not found (search paths: %s); the model cannot be simulated "
                    "until it resolves",
                    src, l->name, ug->filename, r->search_paths);
      }
    }
  }
  return KN_OK;
}

//---- collision filter groups ----

/* <drake:collision_filter_group>s => r->filter_groups with member links as body indices. Drake
 * rejects a member that is not a link of the model and an ignored group that is not declared;
 * so does knead, naming the file, the line and the group. r owns what is filled so far. */
static kn_status add_filter_groups(kn_robot* r, const kn_ushim_model* u, const int* body_of,
                                   const kn_name_map* links, const char* src, kn_error* err) {
  if (u->nfilter_group == 0) return KN_OK;
  r->filter_groups = kn_calloc((size_t)u->nfilter_group, sizeof *r->filter_groups);
  if (!r->filter_groups) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", src);
  for (int i = 0; i < u->nfilter_group; i++) {
    const kn_ushim_filter_group* ug = &u->filter_groups[i];
    if (!ug->name[0])
      return kn_fail(err, KN_ERR_INVALID, "%s:%d: collision filter group #%d has no name attribute", src, ug->line,
                     i + 1);
    for (int k = 0; k < i; k++)
      if (strcmp(u->filter_groups[k].name, ug->name) == 0)
        return kn_fail(err, KN_ERR_INVALID, "%s:%d: collision filter group '%s' is declared twice (first at line %d)",
                       src, ug->line, ug->name, u->filter_groups[k].line);
    kn_robot_filter_group* g = &r->filter_groups[r->nfilter_group++];
    g->name = kn_strdup(ug->name);
    g->members = kn_calloc((size_t)(ug->nmember ? ug->nmember : 1), sizeof *g->members);
    g->ignores = kn_calloc((size_t)(ug->nignore ? ug->nignore : 1), sizeof *g->ignores);
    if (!g->name || !g->members || !g->ignores) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", src);
    for (int m = 0; m < ug->nmember; m++) {
      const char* link = ug->members[m];
      if (!link[0])
        return kn_fail(err, KN_ERR_INVALID, "%s:%d: collision filter group '%s': member #%d has no link attribute",
                       src, ug->line, ug->name, m + 1);
      int l = kn_name_map_get(links, link);
      if (l < 0)
        return kn_fail(err, KN_ERR_INVALID, "%s:%d: collision filter group '%s': member link '%s' is not a link of "
                       "the robot", src, ug->line, ug->name, link);
      g->members[g->nmember++] = body_of[l];
    }
    for (int k = 0; k < ug->nignore; k++) {
      const char* name = ug->ignores[k];
      int h = 0;
      while (h < u->nfilter_group && strcmp(u->filter_groups[h].name, name) != 0) h++;
      if (!name[0] || h == u->nfilter_group)
        return kn_fail(err, KN_ERR_INVALID, "%s:%d: collision filter group '%s' ignores group '%s', which is not a "
                       "collision filter group of the file", src, ug->line, ug->name, name[0] ? name : "(no name)");
      if (!(g->ignores[g->nignore] = kn_strdup(name))) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", src);
      g->nignore++;
    }
  }
  return KN_OK;
}

//---- loading ----

static kn_status build(kn_robot* r, const kn_ushim_model* u, const char* base_dir, const kn_urdf_options* opt,
                       const char* src, kn_error* err) {
  kn_urdf_search s;
  kn_status st = kn_urdf_search_init(opt, &s, err);
  if (st != KN_OK) return kn_error_prefix(err, "%s: ", src);
  r->search_paths = kn_urdf_search_describe(&s);
  r->source_path = kn_strdup(src);
  r->model = kn_mb_model_create(u->name && u->name[0] ? u->name : src);
  int* order = kn_calloc((size_t)u->nlink, sizeof *order);
  int* body_of = kn_calloc((size_t)u->nlink, sizeof *body_of);
  kn_name_map links = {0}, joints = {0}; /* urdfdom's names are unique */
  if (!r->search_paths || !r->source_path || !r->model || !order || !body_of)
    st = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", src);
  for (int i = 0; st == KN_OK && i < u->nlink; i++)
    if (kn_name_map_put(&links, u->links[i].name, i)) st = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", src);
  for (int i = 0; st == KN_OK && i < u->njoint; i++)
    if (kn_name_map_put(&joints, u->joints[i].name, i)) st = kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", src);
  if (st == KN_OK) st = tree_order(u, order, body_of, src, err);
  for (int k = 0; st == KN_OK && k < u->nlink; k++) st = add_body(r, u, order[k], body_of, opt, src, err);
  if (st == KN_OK) warn_dropped_joints(r, u, src);
  if (st == KN_OK) st = check_mimic_cycles(u, &joints, src, err);
  if (st == KN_OK) st = add_couplers(r, u, body_of, &joints, src, err);
  if (st == KN_OK) st = add_geometry(r, u, order, &s, base_dir, src, err);
  if (st == KN_OK) st = add_filter_groups(r, u, body_of, &links, src, err);
  kn_name_map_free(&links);
  kn_name_map_free(&joints);
  for (int i = 0; st == KN_OK && i < u->nnote; i++) kn_diag_add(&r->warnings, "%s: %s", src, u->notes[i]);
  free(order);
  free(body_of);
  kn_urdf_search_free(&s);
  return st;
}

// (URDF text, name for messages, folder for relative meshes, options) => *out
kn_status kn_urdf_load_string(const char* xml, const char* source_name, const char* base_dir,
                              const kn_urdf_options* opt, kn_robot** out, kn_error* err) {
  const char* src = source_name ? source_name : "<string>";
  kn_urdf_options defaults = kn_urdf_options_default();
  if (!opt) opt = &defaults;
  if (!out) return kn_fail(err, KN_ERR_INVALID, "%s: no output robot given", src);
  char msg[KN_ERROR_MSG - 64];
  int line = 0;
  kn_ushim_model* u = kn_ushim_parse(xml, msg, sizeof msg, &line);
  if (!u && line) return kn_fail(err, KN_ERR_PARSE, "%s:%d: %s", src, line, msg);
  if (!u) return kn_fail(err, KN_ERR_PARSE, "%s: %s", src, msg);
  kn_robot* r = kn_calloc(1, sizeof *r);
  kn_status st = r ? build(r, u, base_dir, opt, src, err) : kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", src);
  kn_ushim_free(u);
  if (st != KN_OK) {
    kn_robot_free(r);
    return st;
  }
  *out = r;
  return KN_OK;
}

/* malloc'd folder of path ("." when it has none) */
static char* folder_of(const char* path) {
  const char* slash = strrchr(path, '/');
  if (!slash) return kn_strdup(".");
  if (slash == path) return kn_strdup("/");
  size_t n = (size_t)(slash - path);
  char* d = malloc(n + 1);
  if (!d) return NULL;
  memcpy(d, path, n);
  d[n] = 0;
  return d;
}

// (URDF file, options) => *out
kn_status kn_urdf_load(const char* path, const kn_urdf_options* opt, kn_robot** out, kn_error* err) {
  if (!path) return kn_fail(err, KN_ERR_INVALID, "no URDF path given");
  char* text = NULL;
  size_t n = 0;
  kn_status rs = kn_file_read(path, "URDF", &text, &n, err);
  if (rs) return rs;
  if (strlen(text) != n) {
    free(text);
    return kn_fail(err, KN_ERR_PARSE, "%s: contains a NUL byte; not a URDF text file", path);
  }
  char* dir = folder_of(path);
  kn_status st = dir ? kn_urdf_load_string(text, path, dir, opt, out, err)
                     : kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", path);
  free(dir);
  free(text);
  return st;
}
