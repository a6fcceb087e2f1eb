/* trajectory.csv's columns: their values for the current state and their description (unit and
 * meaning, written next to it as trajectory.json). Joint coordinates are written as they are,
 * except a FLOATING root joint: its coordinates are the root's pose in the joint frame X_pj (the
 * scene's base_pose), so they are written as the pose in the world, X_pj * X_JB(q); a free
 * primitive object's X_pj is the identity and its coordinates are written unchanged. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "output/output_internal.h"

// (a tree's model) => 1 when the body range [b0, b0 + nb) starts with a floating root
static int floating_root(const kn_mb_model* m, int b0) {
  return b0 < m->nbody && m->bodies[b0].parent < 0 && m->bodies[b0].jtype == KN_JOINT_FLOATING;
}

// (floating root body, q at its q_adr) => out[7]: (x, y, z, qw, qx, qy, qz) in the world
static void floating_world(const kn_mb_body* b, const double* q, double* out) {
  const kn_pose* X = &b->X_pj;
  static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  if (!memcmp(X->R, I, sizeof I) && X->p[0] == 0 && X->p[1] == 0 && X->p[2] == 0) {
    memcpy(out, q, 7 * sizeof *out); /* exactly the coordinates, bit for bit */
    return;
  }
  kn_pose_apply(X, q, out);
  double qj[4];
  kn_quat_from_mat3(X->R, qj);
  kn_quat_mul(qj, q + 3, out + 3); /* no sign flip: continuous in time when q is */
}

// (model, bodies [b0, b0 + nb), its q) => row[0 .. nq) in world terms for a floating root
static void tree_values(const kn_mb_model* m, int b0, const double* q, int nq, double* row) {
  memcpy(row, q, (size_t)nq * sizeof *row);
  if (floating_root(m, b0)) floating_world(&m->bodies[b0], q, row);
}

int kn_world_trajectory_ncolumn(const kn_world* w) {
  int n = 3 * (w->nfem + w->nmpm);
  for (int i = 0; i < w->nrobot; i++) n += w->robots[i].ncolumn;
  for (int i = 0; i < w->nobject; i++) n += w->objects[i].ncolumn;
  return n;
}

void kn_world_trajectory_row(const kn_world* w, double* row) {
  int k = 0;
  for (int i = 0; i < w->nrobot; i++) {
    const kn_world_robot* r = &w->robots[i];
    const kn_world_tree* tr = &w->trees[r->tree];
    tree_values(tr->robot->model, r->body_offset, tr->q + r->q_offset, r->nq, row + k);
    k += r->nq;
  }
  for (int i = 0; i < w->nobject; i++) {
    const kn_world_tree* tr = &w->trees[w->objects[i].tree];
    tree_values(tr->robot->model, 0, tr->q, w->objects[i].ncolumn, row + k);
    k += w->objects[i].ncolumn;
  }
  for (int i = 0; i < w->nfem; i++, k += 3) kn_sim_deformable_centroid(&w->fems[i], row + k);
  for (int i = 0; i < w->nmpm; i++, k += 3) kn_sim_mpm_centroid(&w->mpms[i], row + k);
}

void kn_out_trajectory_header(const kn_world* w, FILE* f) {
  fputs("t", f);
  for (int i = 0; i < w->nrobot; i++)
    for (int k = 0; k < w->robots[i].ncolumn; k++) fprintf(f, ",%s", w->robots[i].columns[k]);
  for (int i = 0; i < w->nobject; i++)
    for (int k = 0; k < w->objects[i].ncolumn; k++) fprintf(f, ",%s", w->objects[i].columns[k]);
  for (int i = 0; i < w->nfem; i++) fprintf(f, ",%s/cx,%s/cy,%s/cz", w->fems[i].name, w->fems[i].name, w->fems[i].name);
  for (int i = 0; i < w->nmpm; i++) fprintf(f, ",%s/cx,%s/cy,%s/cz", w->mpms[i].name, w->mpms[i].name, w->mpms[i].name);
  fputc('\n', f);
}

//---- trajectory.json ----

// (columns array, name, unit, meaning) => one more entry; failures counts what jansson refused
static void column(json_t* cols, int* failures, const char* name, const char* unit, const char* meaning) {
  json_t* c = json_pack("{s:s, s:s, s:s}", "name", name, "unit", unit, "meaning", meaning);
  *failures += !c || json_array_append_new(cols, c) != 0;
}

// (model, bodies [b0, b0 + nb), their column names from q_adr0) => one entry per coordinate
static void tree_columns(json_t* cols, int* failures, const kn_mb_model* m, int b0, int nb, int q_adr0,
                         char* const* names) {
  static const char* const axis[] = {"x", "y", "z"}, *const quat[] = {"w", "x", "y", "z"};
  for (int b = b0; b < b0 + nb; b++) {
    const kn_mb_body* body = &m->bodies[b];
    const char* jn = body->joint_name ? body->joint_name : body->name;
    for (int k = 0; k < body->nq; k++) {
      char meaning[512];
      const char* unit = "rad";
      const char* name = names[body->q_adr - q_adr0 + k];
      switch (body->jtype) {
        case KN_JOINT_REVOLUTE:
        case KN_JOINT_CONTINUOUS:
          snprintf(meaning, sizeof meaning, "angle of joint %s about its axis", jn);
          break;
        case KN_JOINT_PRISMATIC:
          unit = "m";
          snprintf(meaning, sizeof meaning, "translation of joint %s along its axis", jn);
          break;
        case KN_JOINT_PLANAR:
          unit = k < 2 ? "m" : "rad";
          snprintf(meaning, sizeof meaning, k < 2 ? "translation of planar joint %s along its basis vector e%d" :
                   "rotation of planar joint %s about its axis", jn, k + 1);
          break;
        case KN_JOINT_FLOATING:
          if (b == b0 && body->parent < 0) {
            unit = k < 3 ? "m" : "1";
            if (k < 3)
              snprintf(meaning, sizeof meaning, "%s of body %s's origin in the world frame", axis[k], body->name);
            else
              snprintf(meaning, sizeof meaning, "%s of the unit quaternion (w, x, y, z) of body %s's orientation in "
                       "the world frame", quat[k - 3], body->name);
          } else {
            unit = k < 3 ? "m" : "1";
            snprintf(meaning, sizeof meaning, k < 3 ? "position coordinate %d of body %s in its joint frame" :
                     "quaternion component %d of body %s in its joint frame", k < 3 ? k : k - 3, body->name);
          }
          break;
        default:
          snprintf(meaning, sizeof meaning, "coordinate %d of joint %s", k, jn);
      }
      column(cols, failures, name, unit, meaning);
    }
  }
}

kn_status kn_out_trajectory_describe(const kn_world* w, const char* path, kn_error* err) {
  json_t* cols = json_array();
  json_t* doc = json_pack("{s:s, s:s, s:o}", "file", "trajectory.csv", "frame",
                          "world: x, y, z and orientations in the world frame (gravity along the scene's gravity); "
                          "joint coordinates as in the URDF",
                          "columns", cols); /* "o": doc owns cols, also when it fails */
  if (!doc) return kn_json_built(1, path, err);
  int failures = 0;
  column(cols, &failures, "t", "s", "simulated time");
  for (int i = 0; i < w->nrobot; i++) {
    const kn_world_robot* r = &w->robots[i];
    const kn_mb_model* m = w->trees[r->tree].robot->model;
    tree_columns(cols, &failures, m, r->body_offset, r->nbody, r->q_offset, r->columns);
  }
  for (int i = 0; i < w->nobject; i++) {
    const kn_mb_model* m = w->trees[w->objects[i].tree].robot->model;
    tree_columns(cols, &failures, m, 0, m->nbody, 0, w->objects[i].columns);
  }
  static const char* const c[] = {"cx", "cy", "cz"};
  for (int i = 0; i < w->nfem + w->nmpm; i++)
    for (int k = 0; k < 3; k++) {
      const char* name = i < w->nfem ? w->fems[i].name : w->mpms[i - w->nfem].name;
      char col[512], meaning[600];
      snprintf(col, sizeof col, "%s/%s", name, c[k]);
      snprintf(meaning, sizeof meaning, "%s of the mass-weighted centroid of %s body %s in the world frame",
               c[k] + 1, i < w->nfem ? "FEM" : "MPM", name);
      column(cols, &failures, col, "m", meaning);
    }
  kn_status st = kn_json_built(failures, path, err);
  if (st == KN_OK) st = kn_json_write_file(doc, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER, err);
  json_decref(doc);
  return st;
}
