/* Drawable geometry for the frame outputs: every rigid shape tessellated once into triangles in
 * its own frame, and the body naming shared by the ParaView frames and the HTML replay. */
#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output_internal.h"

#define KN_OUT_PI 3.14159265358979323846
#define KN_OUT_AROUND 24   /* segments around spheres, cylinders and capsules */
#define KN_OUT_LAT 12      /* latitude bands of a sphere (even: capsules split at the equator) */
#define KN_OUT_PLANE 1.0   /* half the side of the square drawn for a half-space [m] */

/* one ring of a surface of revolution about z: radius 0 is a single vertex (a pole) */
typedef struct {
  double z, rho;
  int join;                 /* connect to the previous ring */
} ring;

// (rings top to bottom) => vertices and triangles of the surface of revolution
static kn_status revolve(const ring* rings, int nring, int* nv, double** v, int* nt, int** tri) {
  int n = KN_OUT_AROUND, cap_v = 0, cap_t = 0;
  for (int r = 0; r < nring; r++) cap_v += rings[r].rho > 0 ? n : 1;
  cap_t = 2 * n * nring;
  double* V = malloc(sizeof(double) * 3 * (size_t)cap_v);
  int* T = malloc(sizeof(int) * 3 * (size_t)cap_t);
  if (!V || !T) {
    free(V), free(T);
    return KN_ERR_NOMEM;
  }
  int k = 0, t = 0, prev = -1, prev_n = 0;
  for (int r = 0; r < nring; r++) {
    int first = k, cnt = rings[r].rho > 0 ? n : 1;
    for (int i = 0; i < cnt; i++, k++) {
      double a = 2 * KN_OUT_PI * i / n;
      V[3 * k] = rings[r].rho * cos(a), V[3 * k + 1] = rings[r].rho * sin(a), V[3 * k + 2] = rings[r].z;
    }
    if (rings[r].join && prev >= 0) {
      /* upper ring u (prev), lower ring l: (u_i, l_i, l_i+1) and (u_i, l_i+1, u_i+1) face outwards */
      for (int i = 0; i < n; i++) {
        int u0 = prev + (prev_n > 1 ? i : 0), u1 = prev + (prev_n > 1 ? (i + 1) % n : 0);
        int l0 = first + (cnt > 1 ? i : 0), l1 = first + (cnt > 1 ? (i + 1) % n : 0);
        if (l0 != l1) T[3 * t] = u0, T[3 * t + 1] = l0, T[3 * t + 2] = l1, t++;
        if (u0 != u1) T[3 * t] = u0, T[3 * t + 1] = l1, T[3 * t + 2] = u1, t++;
      }
    }
    prev = first, prev_n = cnt;
  }
  *nv = k, *v = V, *nt = t, *tri = T;
  return KN_OK;
}

// (r, half length of the straight part) => a sphere (h = 0) or a capsule, poles on z
static kn_status round_body(double r, double h, int* nv, double** v, int* nt, int** tri) {
  ring rings[KN_OUT_LAT + 2];
  int m = 0;
  for (int i = 0; i <= KN_OUT_LAT; i++) {
    double th = KN_OUT_PI * i / KN_OUT_LAT;
    double z = r * cos(th), rho = i == 0 || i == KN_OUT_LAT ? 0.0 : r * sin(th);
    if (2 * i == KN_OUT_LAT && h > 0) { /* the equator twice: the straight part between */
      rings[m++] = (ring){h, rho, 1};
      rings[m++] = (ring){-h, rho, 1};
      continue;
    }
    rings[m++] = (ring){z + (2 * i < KN_OUT_LAT ? h : -h), rho, 1};
  }
  return revolve(rings, m, nv, v, nt, tri);
}

// (path, scale) => the triangles of every mesh in the file (assimp), scaled
static kn_status load_mesh(const kn_shape* s, int* nv, double** v, int* nt, int** tri, kn_error* err) {
  const char* name = s->mesh_uri ? s->mesh_uri : "(unnamed mesh)";
  if (!s->mesh_path) return kn_fail(err, KN_ERR_IO, "mesh '%s': not resolved to a file", name);
  kn_status fs = kn_file_check(s->mesh_path, "mesh", err);
  if (fs) {
    kn_error_prefix(err, "mesh '%s': ", name);
    return fs;
  }
  const struct aiScene* sc = aiImportFile(s->mesh_path, aiProcess_Triangulate | aiProcess_PreTransformVertices);
  if (!sc) return kn_fail(err, KN_ERR_IO, "mesh '%s': cannot read '%s': %s", name, s->mesh_path, aiGetErrorString());
  size_t cv = 0, ct = 0;
  for (unsigned i = 0; i < sc->mNumMeshes; i++) {
    cv += sc->mMeshes[i]->mNumVertices;
    ct += sc->mMeshes[i]->mNumFaces;
  }
  double* V = malloc(sizeof(double) * 3 * (cv ? cv : 1));
  int* T = malloc(sizeof(int) * 3 * (ct ? ct : 1));
  if (!V || !T) {
    aiReleaseImport(sc);
    free(V), free(T);
    return kn_fail(err, KN_ERR_NOMEM, "mesh '%s': out of memory", name);
  }
  size_t base = 0, t = 0;
  for (unsigned i = 0; i < sc->mNumMeshes; i++) {
    const struct aiMesh* me = sc->mMeshes[i];
    for (unsigned j = 0; j < me->mNumVertices; j++) {
      V[3 * (base + j)] = me->mVertices[j].x * s->scale[0];
      V[3 * (base + j) + 1] = me->mVertices[j].y * s->scale[1];
      V[3 * (base + j) + 2] = me->mVertices[j].z * s->scale[2];
    }
    for (unsigned f = 0; f < me->mNumFaces; f++) {
      if (me->mFaces[f].mNumIndices != 3) continue; /* points and lines left by Triangulate */
      for (int c = 0; c < 3; c++) T[3 * t + (size_t)c] = (int)(base + me->mFaces[f].mIndices[c]);
      t++;
    }
    base += me->mNumVertices;
  }
  aiReleaseImport(sc);
  if (t == 0) {
    free(V), free(T);
    return kn_fail(err, KN_ERR_PARSE, "mesh '%s': '%s' has no triangles", name, s->mesh_path);
  }
  *nv = (int)base, *v = V, *nt = (int)t, *tri = T;
  return KN_OK;
}

// (shape) => triangles in its frame, counter-clockwise seen from outside
kn_status kn_out_tessellate(const kn_shape* s, int* nv, double** v, int* nt, int** tri, kn_error* err) {
  *nv = *nt = 0, *v = NULL, *tri = NULL;
  kn_status st = KN_OK;
  switch (s->type) {
    case KN_SHAPE_BOX: {
      /* corner c has x, y, z from bits 0, 1, 2; each face a quad counter-clockwise from outside */
      static const int quads[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
      double* V = malloc(sizeof(double) * 24);
      int* T = malloc(sizeof(int) * 36);
      if (!V || !T) {
        free(V), free(T);
        return kn_fail(err, KN_ERR_NOMEM, "out of memory");
      }
      for (int c = 0; c < 8; c++)
        for (int a = 0; a < 3; a++) V[3 * c + a] = ((c >> a) & 1 ? 0.5 : -0.5) * s->size[a];
      for (int f = 0; f < 6; f++) {
        const int* q = quads[f];
        int t0[6] = {q[0], q[1], q[2], q[0], q[2], q[3]};
        memcpy(T + 6 * f, t0, sizeof t0);
      }
      *nv = 8, *v = V, *nt = 12, *tri = T;
      return KN_OK;
    }
    case KN_SHAPE_SPHERE:
      st = round_body(s->size[0], 0.0, nv, v, nt, tri);
      break;
    case KN_SHAPE_CAPSULE:
      st = round_body(s->size[0], 0.5 * s->size[1], nv, v, nt, tri);
      break;
    case KN_SHAPE_CYLINDER: {
      /* flat caps: the rim rings appear twice so that cap and side do not share vertices */
      double r = s->size[0], h = 0.5 * s->size[1];
      ring rings[6] = {{h, 0, 0}, {h, r, 1}, {h, r, 0}, {-h, r, 1}, {-h, r, 0}, {-h, 0, 1}};
      st = revolve(rings, 6, nv, v, nt, tri);
      break;
    }
    case KN_SHAPE_HALFSPACE: {
      double* V = malloc(sizeof(double) * 12);
      int* T = malloc(sizeof(int) * 6);
      if (!V || !T) {
        free(V), free(T);
        return kn_fail(err, KN_ERR_NOMEM, "out of memory");
      }
      const double L = KN_OUT_PLANE;
      double sq[12] = {-L, -L, 0, L, -L, 0, L, L, 0, -L, L, 0};
      int tq[6] = {0, 1, 2, 0, 2, 3}; /* normal +z, the outward normal of z <= 0 */
      memcpy(V, sq, sizeof sq), memcpy(T, tq, sizeof tq);
      *nv = 4, *v = V, *nt = 2, *tri = T;
      return KN_OK;
    }
    case KN_SHAPE_MESH:
      return load_mesh(s, nv, v, nt, tri, err);
  }
  if (st) return kn_fail(err, st, "out of memory tessellating a %s", kn_shape_type_name(s->type));
  return KN_OK;
}

// (tree, body) => its display name: "robot/link", "object" or "object/link"
static char* body_name(const kn_world* w, int k, int b) {
  const kn_world_tree* tr = &w->trees[k];
  const char* tree = kn_sim_tree_name(w, k);
  if (tr->object >= 0 && b == 0) return kn_strdup(tree);
  const char* link = tr->robot->model->bodies[b].name;
  size_t n = strlen(tree) + strlen(link ? link : "?") + 2;
  char* s = malloc(n);
  if (s) snprintf(s, n, "%s/%s", tree, link ? link : "?");
  return s;
}

kn_status kn_out_scene_build(const kn_world* w, kn_out_scene* g, kn_error* err) {
  memset(g, 0, sizeof *g);
  int nid = w->nfem, nshape_cap = 0;
  for (int k = 0; k < w->ntree; k++) {
    nid += w->trees[k].robot->model->nbody;
    nshape_cap += w->trees[k].robot->ngeom;
  }
  g->body_names = kn_calloc((size_t)nid, sizeof(char*));
  g->tree_first_id = kn_calloc((size_t)w->ntree, sizeof(int));
  g->data = kn_calloc((size_t)w->ntree, sizeof(kn_mb_data*));
  g->shapes = kn_calloc((size_t)nshape_cap, sizeof(kn_out_shape));
  if (!g->body_names || !g->tree_first_id || !g->data || !g->shapes) goto nomem;
  g->ntree = w->ntree;
  g->nbody_id = nid;
  int id = 0;
  for (int k = 0; k < w->ntree; k++) {
    const kn_robot* r = w->trees[k].robot;
    g->tree_first_id[k] = id;
    if (!(g->data[k] = kn_mb_data_create(r->model))) goto nomem;
    for (int b = 0; b < r->model->nbody; b++)
      if (!(g->body_names[id++] = body_name(w, k, b))) goto nomem;
    /* visual geometry where a body has some (robots' meshes and colours), else its colliders */
    for (int i = 0; i < r->ngeom; i++) {
      const kn_geometry* ge = &r->geoms[i];
      int has_visual = 0;
      for (int j = 0; j < r->ngeom; j++) has_visual |= r->geoms[j].body == ge->body && r->geoms[j].role == KN_GEOM_VISUAL;
      if (has_visual ? ge->role != KN_GEOM_VISUAL : ge->role != KN_GEOM_COLLISION) continue;
      kn_out_shape* s = &g->shapes[g->nshape];
      kn_status st = kn_out_tessellate(&ge->shape, &s->nv, &s->v, &s->nt, &s->tri, err);
      if (st) {
        kn_error_prefix(err, "output: %s '%s': ", kn_sim_tree_kind(w, k), kn_sim_tree_name(w, k));
        kn_out_scene_free(g);
        return st;
      }
      g->nshape++;
      s->tree = k, s->body = ge->body, s->body_id = g->tree_first_id[k] + ge->body, s->X_bg = ge->X_bg;
      s->flat = ge->shape.type == KN_SHAPE_BOX || ge->shape.type == KN_SHAPE_HALFSPACE || ge->shape.type == KN_SHAPE_MESH;
      int grey = ge->role == KN_GEOM_COLLISION;
      for (int a = 0; a < 4; a++) s->rgba[a] = (float)(grey ? (a == 3 ? 1.0 : 0.7) : ge->rgba[a]);
      if (w->trees[k].object >= 0 && ge->shape.type != KN_SHAPE_HALFSPACE) /* objects: green, apart from robots */
        s->rgba[0] = 0.2f, s->rgba[1] = 0.65f, s->rgba[2] = 0.3f;
    }
  }
  g->fem_first_id = id;
  for (int i = 0; i < w->nfem; i++)
    if (!(g->body_names[id++] = kn_strdup(w->fems[i].name))) goto nomem;
  /* MPM bodies (mpm/ is not simulated yet) will be numbered after the FEM bodies. */
  return KN_OK;
nomem:
  kn_out_scene_free(g);
  return kn_fail(err, KN_ERR_NOMEM, "output: out of memory building the drawable geometry");
}

void kn_out_scene_update(const kn_world* w, kn_out_scene* g) {
  for (int k = 0; k < w->ntree; k++) {
    const kn_world_tree* tr = &w->trees[k];
    const kn_mb_model* m = tr->robot->model;
    kn_mb_kinematics(m, tr->q, m->nv > 0 ? tr->v : NULL, g->data[k]);
  }
}

void kn_out_shape_pose(const kn_out_scene* g, int i, kn_pose* X_WG) {
  const kn_out_shape* s = &g->shapes[i];
  kn_pose_mul(&g->data[s->tree]->X_wb[s->body], &s->X_bg, X_WG);
}

void kn_out_scene_free(kn_out_scene* g) {
  if (!g) return;
  for (int i = 0; i < g->nshape; i++) free(g->shapes[i].v), free(g->shapes[i].tri);
  for (int i = 0; g->body_names && i < g->nbody_id; i++) free(g->body_names[i]);
  for (int k = 0; g->data && k < g->ntree; k++) kn_mb_data_free(g->data[k]);
  free(g->shapes), free(g->body_names), free(g->tree_first_id), free(g->data);
  memset(g, 0, sizeof *g);
}
