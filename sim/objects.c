/* Scene objects => trees: a primitive shape becomes a one-body kn_robot (a FLOATING root for a
 * free object, whose q is then its world pose; a FIXED root at the pose for a fixed one) with one
 * collision geometry and the inertia of the shape at uniform density; `urdf:` objects load the
 * URDF as a tree (floating unless fixed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

// (shape) => volume [m^3] and the unit-mass rotational inertia about the centre (diagonal)
static double shape_volume_inertia(const kn_shape* sh, double I1[3]) {
  const double* s = sh->size;
  switch (sh->type) {
    case KN_SHAPE_BOX:
      I1[0] = (s[1] * s[1] + s[2] * s[2]) / 12;
      I1[1] = (s[0] * s[0] + s[2] * s[2]) / 12;
      I1[2] = (s[0] * s[0] + s[1] * s[1]) / 12;
      return s[0] * s[1] * s[2];
    case KN_SHAPE_SPHERE: I1[0] = I1[1] = I1[2] = 0.4 * s[0] * s[0]; return 4.0 / 3.0 * M_PI * pow(s[0], 3);
    case KN_SHAPE_CYLINDER:
      I1[0] = I1[1] = (3 * s[0] * s[0] + s[1] * s[1]) / 12;
      I1[2] = 0.5 * s[0] * s[0];
      return M_PI * s[0] * s[0] * s[1];
    case KN_SHAPE_CAPSULE: {
      /* cylinder (mass fraction fc) plus two hemispheres (fs), each hemisphere's centroid 3r/8 from
       * its flat face: Ixx = fc (L^2/12 + r^2/4) + fs (2r^2/5 + L^2/4 + 3Lr/8) */
      double r = s[0], L = s[1];
      double vc = M_PI * r * r * L, vs = 4.0 / 3.0 * M_PI * r * r * r, v = vc + vs;
      double fc = vc / v, fs = vs / v;
      I1[0] = I1[1] = fc * (L * L / 12 + r * r / 4) + fs * (0.4 * r * r + L * L / 4 + 3 * L * r / 8);
      I1[2] = fc * 0.5 * r * r + fs * 0.4 * r * r;
      return v;
    }
    default: I1[0] = I1[1] = I1[2] = 0; return 0;
  }
}

// (unit normal n) => R with R e_z = n (shortest rotation)
static void rotation_z_to(const double n_in[3], double R[9]) {
  double n[3] = {n_in[0], n_in[1], n_in[2]};
  double l = kn_vec3_norm(n);
  for (int k = 0; k < 3; k++) n[k] /= l;
  double z[3] = {0, 0, 1}, axis[3];
  kn_vec3_cross(z, n, axis);
  double s = kn_vec3_norm(axis), c = n[2];
  if (s < 1e-12) {
    double x[3] = {1, 0, 0};
    kn_mat3_from_axis_angle(x, c > 0 ? 0.0 : M_PI, R);
    return;
  }
  for (int k = 0; k < 3; k++) axis[k] /= s;
  kn_mat3_from_axis_angle(axis, atan2(s, c), R);
}

// (scene shape) => kn_shape (mesh path resolved against the scene)
static kn_status make_shape(const kn_scene* s, const kn_scene_shape* ss, const char* key, kn_shape* sh,
                            kn_error* err) {
  memset(sh, 0, sizeof *sh);
  sh->scale[0] = sh->scale[1] = sh->scale[2] = 1;
  if (ss->box) {
    sh->type = KN_SHAPE_BOX;
    memcpy(sh->size, ss->box, 3 * sizeof(double));
  } else if (ss->sphere) {
    sh->type = KN_SHAPE_SPHERE;
    sh->size[0] = *ss->sphere;
  } else if (ss->cylinder || ss->capsule) {
    sh->type = ss->cylinder ? KN_SHAPE_CYLINDER : KN_SHAPE_CAPSULE;
    memcpy(sh->size, ss->cylinder ? ss->cylinder : ss->capsule, 2 * sizeof(double));
  } else if (ss->halfspace) {
    sh->type = KN_SHAPE_HALFSPACE;
  } else {
    sh->type = KN_SHAPE_MESH;
    if (ss->scale) memcpy(sh->scale, ss->scale, 3 * sizeof(double));
    sh->mesh_uri = kn_strdup(ss->mesh);
    sh->mesh_path = kn_scene_resolve_path(s, ss->mesh, err);
    if (!sh->mesh_path) {
      char msg[KN_ERROR_MSG];
      snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
      return kn_scene_fail(s, err, KN_ERR_IO, key, "mesh '%s' not found: %s", ss->mesh, msg);
    }
  }
  return KN_OK;
}

// (objects[i] with a shape) => a one-body kn_robot
static kn_status primitive_object(const kn_scene* s, unsigned i, kn_robot** out, kn_error* err) {
  const kn_scene_object* o = &s->doc->objects[i];
  char key[64];
  snprintf(key, sizeof key, "objects[%u].shape", i);
  kn_robot* r = kn_calloc(1, sizeof *r);
  if (!r) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  r->model = kn_mb_model_create(o->name);
  r->geoms = kn_calloc(1, sizeof *r->geoms);
  r->source_path = kn_strdup(s->path);
  if (!r->model || !r->geoms || !r->source_path) {
    kn_robot_free(r);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  r->ngeom = 1;
  kn_geometry* g = &r->geoms[0];
  g->role = KN_GEOM_COLLISION;
  g->body = 0;
  g->rgba[0] = g->rgba[1] = g->rgba[2] = 0.7;
  g->rgba[3] = 1;
  g->name = kn_strdup(o->name);
  kn_pose_identity(&g->X_bg);
  kn_status st = make_shape(s, o->shape, key, &g->shape, err);
  if (st) {
    kn_robot_free(r);
    return st;
  }
  if (o->shape->halfspace) rotation_z_to(o->shape->halfspace->normal, g->X_bg.R);

  kn_mb_body b;
  memset(&b, 0, sizeof b);
  b.name = o->name;
  b.parent = -1;
  b.axis[2] = 1;
  b.velocity_limit = b.effort_limit = INFINITY;
  kn_pose X;
  kn_pose_from_xyz_rpy(o->pose.xyz, o->pose.rpy, &X);
  if (o->fixed) {
    b.jtype = KN_JOINT_FIXED;
    b.X_pj = X;
  } else {
    /* the floating joint sits at the world origin so that q is the object's world pose */
    b.jtype = KN_JOINT_FLOATING;
    b.joint_name = o->name;
    kn_pose_identity(&b.X_pj);
    double I1[3];
    double vol = shape_volume_inertia(&g->shape, I1);
    if (g->shape.type == KN_SHAPE_MESH) {
      /* a closed mesh at uniform density: volume, centre of mass and full inertia (contact/) */
      double I9[9];
      st = kn_mesh_mass_properties(&g->shape, &vol, b.com, I9, err);
      if (st) {
        kn_robot_free(r);
        char msg[KN_ERROR_MSG];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        return kn_scene_fail(s, err, st, key, "object '%s': %s", o->name, msg);
      }
      b.mass = o->mass ? *o->mass : (o->density ? *o->density : 1000.0) * vol;
      for (int k = 0; k < 9; k++) b.I_com[k] = b.mass * I9[k];
    } else {
      b.mass = o->mass ? *o->mass : (o->density ? *o->density : 1000.0) * vol;
      for (int k = 0; k < 3; k++) b.I_com[4 * k] = b.mass * I1[k];
    }
  }
  if (kn_mb_add_body(r->model, &b, err) < 0) {
    kn_robot_free(r);
    return kn_scene_fail(s, err, KN_ERR_INVALID, key, "object '%s': %s", o->name, err ? err->msg : "");
  }
  *out = r;
  return KN_OK;
}

kn_status kn_sim_object_load(const kn_scene* s, unsigned i, kn_robot** out, double* q0, int nq0, kn_error* err) {
  const kn_scene_object* o = &s->doc->objects[i];
  char key[64];
  kn_status st;
  if (o->shape) {
    st = primitive_object(s, i, out, err);
  } else {
    snprintf(key, sizeof key, "objects[%u].urdf", i);
    if (o->mass || o->density)
      return kn_scene_fail(s, err, KN_ERR_INVALID, key, "object '%s': mass and density apply to shapes; a URDF "
                           "object takes its inertia from the URDF", o->name);
    kn_urdf_options opt = kn_urdf_options_default();
    opt.package_paths = (const char* const*)s->package_paths;
    opt.npackage_paths = s->npackage_paths;
    opt.floating_base = !o->fixed;
    kn_pose_from_xyz_rpy(o->pose.xyz, o->pose.rpy, &opt.base_pose);
    char* path = kn_scene_resolve_path(s, o->urdf, err);
    if (!path) {
      char msg[KN_ERROR_MSG];
      snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
      return kn_scene_fail(s, err, KN_ERR_IO, key, "%s", msg);
    }
    st = kn_urdf_load(path, &opt, out, err);
    free(path);
    if (st) {
      char msg[KN_ERROR_MSG];
      snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
      return kn_scene_fail(s, err, st, key, "object '%s': %s", o->name, msg);
    }
  }
  if (st) return st;
  /* the initial configuration: neutral, with a primitive's pose in its floating coordinates */
  const kn_mb_model* m = (*out)->model;
  if (!q0) return KN_OK;
  if (nq0 < m->nq) return kn_fail(err, KN_ERR_INVALID, "kn_sim_object_load: q0 buffer too small");
  kn_mb_neutral_q(m, q0);
  if (o->shape && !o->fixed) {
    kn_pose X;
    kn_pose_from_xyz_rpy(o->pose.xyz, o->pose.rpy, &X);
    memcpy(q0, X.p, 3 * sizeof(double));
    kn_quat_from_mat3(X.R, q0 + 3);
  }
  return KN_OK;
}
