/* knead/deformable — a deformable body: model (mesh, material, rest data, mass, fixed and attached
 * vertices) and state (x, v, R0). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deformable/deformable.h"

static void update_free_index(kn_fem_body* b) {
  b->nfree = 0;
  for (int i = 0; i < b->mesh.nvert; i++) b->free_index[i] = b->fixed[i] ? -1 : b->nfree++;
  /* the sparsity pattern of A depends on the free set: rebuild it on the next free motion */
  kn_fem_solver_free(b->solver);
  b->solver = NULL;
}

// body => released (NULL is fine)
void kn_fem_body_free(kn_fem_body* b) {
  if (!b) return;
  kn_fem_solver_free(b->solver);
  free(b->name);
  free(b->mesh.X);
  free(b->mesh.tet);
  free(b->mesh.surf);
  free(b->Dm_inv);
  free(b->volume);
  free(b->mass);
  free(b->fixed);
  free(b->attach_vertex);
  free(b->attach_body);
  free(b->x);
  free(b->v);
  free(b->R0);
  free(b->v_star);
  free(b->free_index);
  free(b);
}

// (mesh, material, name) => body at rest
kn_status kn_fem_body_create(const kn_tet_mesh* mesh, const kn_fem_material* mat, const char* name,
                             kn_fem_body** out, kn_error* err) {
  *out = NULL;
  if (!name) name = "deformable body";
  kn_status st = kn_fem_material_validate(mat, name, err);
  if (st) return st;
  if (mesh->nvert < 4 || mesh->ntet < 1)
    return kn_fail(err, KN_ERR_INVALID, "%s: mesh has %d vertices and %d tets, expected >= 4 and >= 1", name,
                   mesh->nvert, mesh->ntet);
  for (int k = 0; k < 4 * mesh->ntet; k++)
    if (mesh->tet[k] < 0 || mesh->tet[k] >= mesh->nvert)
      return kn_fail(err, KN_ERR_INVALID, "%s: tet %d references vertex %d, expected 0..%d", name, k / 4,
                     mesh->tet[k], mesh->nvert - 1);
  kn_fem_body* b = kn_calloc(1, sizeof *b);
  if (!b) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", name);
  size_t nv = (size_t)mesh->nvert, ne = (size_t)mesh->ntet;
  b->name = kn_strdup(name);
  b->mesh.nvert = mesh->nvert;
  b->mesh.ntet = mesh->ntet;
  b->mesh.nsurf = mesh->nsurf;
  b->mesh.X = kn_calloc(3 * nv, sizeof(double));
  b->mesh.tet = kn_calloc(4 * ne, sizeof(int));
  b->mesh.surf = kn_calloc(3 * (size_t)mesh->nsurf, sizeof(int));
  b->Dm_inv = kn_calloc(9 * ne, sizeof(double));
  b->volume = kn_calloc(ne, sizeof(double));
  b->mass = kn_calloc(nv, sizeof(double));
  b->fixed = kn_calloc(nv, 1);
  b->attach_vertex = kn_calloc(1, sizeof(int));
  b->attach_body = kn_calloc(1, sizeof(int));
  b->x = kn_calloc(3 * nv, sizeof(double));
  b->v = kn_calloc(3 * nv, sizeof(double));
  b->R0 = kn_calloc(9 * ne, sizeof(double));
  b->v_star = kn_calloc(3 * nv, sizeof(double));
  b->free_index = kn_calloc(nv, sizeof(int));
  if (!b->name || !b->mesh.X || !b->mesh.tet || !b->mesh.surf || !b->Dm_inv || !b->volume || !b->mass || !b->fixed ||
      !b->attach_vertex || !b->attach_body || !b->x || !b->v || !b->R0 || !b->v_star || !b->free_index) {
    kn_fem_body_free(b);
    return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory for %d vertices, %d tets", name, mesh->nvert, mesh->ntet);
  }
  memcpy(b->mesh.X, mesh->X, 3 * nv * sizeof(double));
  memcpy(b->mesh.tet, mesh->tet, 4 * ne * sizeof(int));
  if (mesh->nsurf > 0 && mesh->surf) memcpy(b->mesh.surf, mesh->surf, 3 * (size_t)mesh->nsurf * sizeof(int));
  b->material = *mat;
  kn_fem_lame(mat->youngs_modulus, mat->poisson_ratio, &b->mu, &b->lambda);
  b->gravity[2] = -9.81;
  b->theta = 1.0;
  for (int e = 0; e < mesh->ntet; e++) {
    double X[12];
    for (int k = 0; k < 4; k++) memcpy(X + 3 * k, mesh->X + 3 * mesh->tet[4 * e + k], 3 * sizeof(double));
    st = kn_fem_element_rest(X, b->Dm_inv + 9 * e, b->volume + e, err);
    if (st) {
      kn_error_prefix(err, "%s: tet %d: ", name, e);
      kn_fem_body_free(b);
      return st;
    }
  }
  kn_fem_lumped_mass(&b->mesh, b->volume, mat->density, b->mass);
  kn_pose I;
  kn_pose_identity(&I);
  kn_fem_body_place(b, &I);
  update_free_index(b);
  *out = b;
  return KN_OK;
}

// pose => x = R X + p, v = 0, R0 = R
void kn_fem_body_place(kn_fem_body* b, const kn_pose* X_WB) {
  for (int i = 0; i < b->mesh.nvert; i++) kn_pose_apply(X_WB, b->mesh.X + 3 * i, b->x + 3 * i);
  memset(b->v, 0, 3 * (size_t)b->mesh.nvert * sizeof(double));
  memset(b->v_star, 0, 3 * (size_t)b->mesh.nvert * sizeof(double));
  for (int e = 0; e < b->mesh.ntet; e++) memcpy(b->R0 + 9 * e, X_WB->R, 9 * sizeof(double));
}

// box in body coordinates => fixed vertices
kn_status kn_fem_body_fix_box(kn_fem_body* b, const double lo[3], const double hi[3], int* count, kn_error* err) {
  for (int k = 0; k < 3; k++)
    if (!(lo[k] <= hi[k]))
      return kn_fail(err, KN_ERR_INVALID, "%s: fixed box lo[%d] = %g > hi[%d] = %g", b->name, k, lo[k], k, hi[k]);
  int n = 0;
  for (int i = 0; i < b->mesh.nvert; i++) {
    const double* X = b->mesh.X + 3 * i;
    if (X[0] >= lo[0] && X[0] <= hi[0] && X[1] >= lo[1] && X[1] <= hi[1] && X[2] >= lo[2] && X[2] <= hi[2]) {
      b->fixed[i] = 1;
      memset(b->v + 3 * i, 0, 3 * sizeof(double));
      n++;
    }
  }
  update_free_index(b);
  if (count) *count = n;
  return KN_OK;
}

// index list => fixed vertices
kn_status kn_fem_body_fix_vertices(kn_fem_body* b, const int* index, int n, kn_error* err) {
  for (int k = 0; k < n; k++)
    if (index[k] < 0 || index[k] >= b->mesh.nvert)
      return kn_fail(err, KN_ERR_INVALID, "%s: fixed vertex index %d (entry %d) out of range 0..%d", b->name,
                     index[k], k, b->mesh.nvert - 1);
  for (int k = 0; k < n; k++) {
    b->fixed[index[k]] = 1;
    memset(b->v + 3 * index[k], 0, 3 * sizeof(double));
  }
  update_free_index(b);
  return KN_OK;
}

// (vertices, rigid body id) => appended to attach_vertex / attach_body
kn_status kn_fem_body_attach(kn_fem_body* b, const int* index, int n, int rigid_body, kn_error* err) {
  if (rigid_body < 0) return kn_fail(err, KN_ERR_INVALID, "%s: attach to rigid body id %d, expected >= 0", b->name, rigid_body);
  for (int k = 0; k < n; k++)
    if (index[k] < 0 || index[k] >= b->mesh.nvert)
      return kn_fail(err, KN_ERR_INVALID, "%s: attached vertex index %d (entry %d) out of range 0..%d", b->name,
                     index[k], k, b->mesh.nvert - 1);
  int* av = realloc(b->attach_vertex, (size_t)(b->nattach + n + 1) * sizeof(int));
  if (!av) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", b->name);
  b->attach_vertex = av;
  int* ab = realloc(b->attach_body, (size_t)(b->nattach + n + 1) * sizeof(int));
  if (!ab) return kn_fail(err, KN_ERR_NOMEM, "%s: out of memory", b->name);
  b->attach_body = ab;
  for (int k = 0; k < n; k++) {
    b->attach_vertex[b->nattach + k] = index[k];
    b->attach_body[b->nattach + k] = rigid_body;
  }
  b->nattach += n;
  return KN_OK;
}
