/* The penalty backend's anchors on FEM surfaces (penalty_faces.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/penalty_faces.h"
#include "sim/stiction.h"

static int grow(void** a, int* cap, int n, size_t size) {
  if (n <= *cap) return 1;
  int c = n > 2 * *cap ? n : 2 * *cap;
  void* p = realloc(*a, (size_t)c * size);
  if (!p) return 0;
  *a = p, *cap = c;
  return 1;
}

kn_status kn_penalty_faces_reserve(kn_penalty_faces* f, int n, kn_error* err) {
  if (!grow((void**)&f->cur, &f->cap_cur, n, sizeof *f->cur) || !grow((void**)&f->taken, &f->cap_taken, f->nprev, 1))
    return kn_fail(err, KN_ERR_NOMEM, "penalty anchors on FEM surfaces: out of memory");
  if (f->nprev > 0) memset(f->taken, 0, (size_t)f->nprev);
  return KN_OK;
}

// the anchor's position on its FEM body now
static void anchor_x(const kn_world* w, const kn_penalty_face* a, double y[3]) {
  const double* x = w->fems[a->fem].body->x;
  for (int k = 0; k < 3; k++) y[k] = 0;
  for (int v = 0; v < 3; v++)
    for (int k = 0; k < 3; k++) y[k] += a->w[v] * x[3 * a->vert[v] + k];
}

static void to_frame(const kn_pose* P, const double x[3], double y[3]) {
  double r[3] = {x[0] - P->p[0], x[1] - P->p[1], x[2] - P->p[2]};
  for (int k = 0; k < 3; k++) y[k] = P->R[k] * r[0] + P->R[3 + k] * r[1] + P->R[6 + k] * r[2];
}

// a particle's other vertex when it is a point of an edge of its FEM body, else -1
static int edge_vertex(const kn_penalty_face* a) {
  return a->kind == KN_CANDIDATE_FEM_VERTEX_FEM && a->pa[1] > 0 ? (int)a->pa[0] : -1;
}

// the candidate's side on the FEM body that holds the anchor
static const kn_contact_side* anchor_side(const kn_contact_candidate* cc) {
  return cc->origin == KN_CANDIDATE_FEM_RIGID_FACE ? &cc->b : &cc->a;
}

int kn_penalty_faces_start(kn_penalty_faces* f, const kn_world* w, const kn_pose* X_WG, const kn_contact_candidate* cc,
                           int j, const double x[3], double d[3]) {
  kn_penalty_face* a = &f->cur[j];
  a->kind = -1;
  if (cc->origin != KN_CANDIDATE_FEM_RIGID_FACE && cc->origin != KN_CANDIDATE_FEM_VERTEX_FEM) return 0;
  int rigid = cc->origin == KN_CANDIDATE_FEM_RIGID_FACE;
  const kn_contact_side* sd = anchor_side(cc);
  if (sd->n != 3) return 0;
  int body = rigid ? cc->a.body : cc->b.body, vertex = rigid ? -1 : cc->b.point[0];
  int edge = !rigid && cc->b.n == 2 ? cc->b.point[1] : -1; /* an edge point's other vertex */
  /* the last step's anchor of the same particle: its vertex, or the nearest rigid point */
  int best = -1;
  double best_d2 = KN_STICTION_MATCH_RADIUS * KN_STICTION_MATCH_RADIUS, p[3];
  for (int i = 0; i < f->nprev; i++) {
    const kn_penalty_face* q = &f->prev[i];
    if (f->taken[i] || q->kind != (int)cc->origin || q->body != body || q->fem != sd->body) continue;
    if (!rigid) {
      if (q->vertex == vertex && edge_vertex(q) == edge) {
        best = i;
        break;
      }
      continue;
    }
    double y[3], d2 = 0;
    kn_pose_apply(&X_WG[body], q->pa, y);
    for (int k = 0; k < 3; k++) d2 += (y[k] - x[k]) * (y[k] - x[k]);
    if (d2 < best_d2) best = i, best_d2 = d2;
  }
  if (best >= 0) {
    *a = f->prev[best];
    f->taken[best] = 1;
  } else { /* new: the particle where it is, the anchor at the candidate's face point */
    *a = (kn_penalty_face){.kind = (int)cc->origin, .body = body, .fem = sd->body, .vertex = vertex};
    if (rigid) to_frame(&X_WG[body], x, a->pa);
    if (edge >= 0) a->pa[0] = edge, a->pa[1] = cc->b.w[1];
    for (int v = 0; v < 3; v++) a->vert[v] = sd->point[v], a->w[v] = sd->w[v];
  }
  double y[3];
  anchor_x(w, a, y);
  if (rigid) kn_pose_apply(&X_WG[body], a->pa, p);
  else memcpy(p, x, sizeof p);
  /* d = A's point - B's point: the rigid particle is A, the anchor B; the vertex is B, the anchor A */
  for (int k = 0; k < 3; k++) d[k] = rigid ? p[k] - y[k] : y[k] - p[k];
  return 1;
}

void kn_penalty_faces_slide(kn_penalty_faces* f, const kn_world* w, const kn_contact_candidate* cc, int j,
                            const double slide[3]) {
  kn_penalty_face* a = &f->cur[j];
  if (a->kind < 0) return;
  double y[3];
  anchor_x(w, a, y);
  double s = cc->origin == KN_CANDIDATE_FEM_RIGID_FACE ? -1.0 : 1.0; /* the anchor on B moves by -slide */
  for (int k = 0; k < 3; k++) y[k] += s * slide[k];
  /* y's barycentric coordinates on the candidate's face at the new positions (its plane's) */
  const kn_contact_side* sd = anchor_side(cc);
  const double* x = w->fems[sd->body].body->x;
  const double *A = x + 3 * sd->point[0], *B = x + 3 * sd->point[1], *C = x + 3 * sd->point[2];
  double e1[3], e2[3], r[3];
  for (int k = 0; k < 3; k++) e1[k] = B[k] - A[k], e2[k] = C[k] - A[k], r[k] = y[k] - A[k];
  double a11 = kn_vec3_dot(e1, e1), a12 = kn_vec3_dot(e1, e2), a22 = kn_vec3_dot(e2, e2);
  double b1 = kn_vec3_dot(e1, r), b2 = kn_vec3_dot(e2, r), det = a11 * a22 - a12 * a12;
  if (!(fabs(det) > 1e-30 * a11 * a22)) return; /* a degenerate face: keep the old anchor */
  double u = (a22 * b1 - a12 * b2) / det, v = (a11 * b2 - a12 * b1) / det;
  for (int k = 0; k < 3; k++) a->vert[k] = sd->point[k];
  a->w[0] = 1 - u - v, a->w[1] = u, a->w[2] = v;
}

void kn_penalty_faces_commit(kn_penalty_faces* f, int n, const double* gamma) {
  if (!grow((void**)&f->prev, &f->cap_prev, n, sizeof *f->prev)) {
    f->nprev = 0;
    return;
  }
  int keep = 0;
  for (int j = 0; j < n; j++)
    if (f->cur[j].kind >= 0 && gamma[3 * j + 2] > 0) f->prev[keep++] = f->cur[j];
  f->nprev = keep;
}

void kn_penalty_faces_free(kn_penalty_faces* f) {
  free(f->prev), free(f->cur), free(f->taken);
  memset(f, 0, sizeof *f);
}

void kn_penalty_faces_save(const kn_penalty_faces* f, kn_state_out* out) {
  kn_state_put_u64(out, (uint64_t)f->nprev);
  for (int i = 0; i < f->nprev; i++) {
    const kn_penalty_face* a = &f->prev[i];
    int h[7] = {a->kind, a->body, a->fem, a->vertex, a->vert[0], a->vert[1], a->vert[2]};
    kn_state_put_i32(out, h, 7);
    kn_state_put_f64(out, a->pa, 3);
    kn_state_put_f64(out, a->w, 3);
  }
}

const char* kn_penalty_faces_read(const kn_world* w, kn_state_in* in, kn_penalty_face** out, int* n_out) {
  uint64_t n;
  *out = NULL, *n_out = 0;
  if (!kn_state_get_u64(in, &n) || n > (uint64_t)INT32_MAX || n * (7 * 4 + 6 * 8) > in->len - in->pos)
    return "truncated anchors on FEM surfaces";
  kn_penalty_face* a = kn_calloc((size_t)n + 1, sizeof *a);
  if (!a) return "out of memory";
  for (uint64_t i = 0; i < n; i++) {
    int h[7];
    if (!kn_state_get_i32(in, h, 7) || !kn_state_get_f64(in, a[i].pa, 3) || !kn_state_get_f64(in, a[i].w, 3)) {
      free(a);
      return "truncated anchors on FEM surfaces";
    }
    int rigid = h[0] == KN_CANDIDATE_FEM_RIGID_FACE, ok = rigid || h[0] == KN_CANDIDATE_FEM_VERTEX_FEM;
    ok = ok && h[2] >= 0 && h[2] < w->nfem && h[1] >= 0 && h[1] < (rigid ? w->ncollider : w->nfem);
    ok = ok && (rigid || (h[3] >= 0 && h[3] < w->fems[h[1]].body->mesh.nvert));
    if (ok && !rigid && a[i].pa[1] > 0) { /* an edge point: its other vertex, its weight */
      double e = a[i].pa[0];
      ok = a[i].pa[1] < 1 && e >= 0 && e < w->fems[h[1]].body->mesh.nvert && e == floor(e);
    }
    for (int k = 0; ok && k < 3; k++) ok = h[4 + k] >= 0 && h[4 + k] < w->fems[h[2]].body->mesh.nvert;
    if (!ok) {
      free(a);
      return "an anchor on an FEM surface names a body or vertex this world does not have";
    }
    a[i].kind = h[0], a[i].body = h[1], a[i].fem = h[2], a[i].vertex = h[3];
    for (int k = 0; k < 3; k++) a[i].vert[k] = h[4 + k];
  }
  *out = a, *n_out = (int)n;
  return NULL;
}

void kn_penalty_faces_take(kn_penalty_faces* f, kn_penalty_face* a, int n) {
  free(f->prev);
  f->prev = a;
  f->nprev = f->cap_prev = n;
  free(f->taken);
  f->taken = NULL, f->cap_taken = 0;
}
