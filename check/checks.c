/* Scenario checks (the scene's checks: section): each is a predicate over a time window, sampled
 * after every step, that keeps its worst value and when it occurred, so a report says not only
 * "failed" but by how much and when (e.g. "min z = 0.012 m at t = 2.31 s; needs > 0.15 m").
 * Bodies are resolved once when the world is built; kinematics for the checks run on their own
 * kn_mb_data so the backend's scratch is never touched. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "sap/sap.h"

/* A resolved name: a rigid body (tree, body), an FEM body, or a set of colliders (contacts). */
typedef struct {
  int tree, body; /* rigid: tree >= 0 (tree -1 with fem < 0: the world) */
  int fem;        /* FEM body index, -1 */
  int mpm;        /* MPM body index (its particles' centroid), -1 */
} ref;

typedef struct {
  const kn_scene_check* def;
  ref a, b;
  char* in_a; /* contact_force / no_penetration: collider membership (ncollider flags) */
  char* in_b;
  int fem_side[2]; /* contact pairs: FEM body index named by bodies[j], -1 for colliders */
  int mpm_side[2]; /* contact pairs: MPM deformable index named by bodies[j], -1 otherwise */
  double after, before, limit;
  int have_ref;
  kn_pose X_ref; /* grasp_held: X_LO at the window's first sample */
  const kn_scene_curve* curve; /* follows_curve: the reference */
  int vertex;     /* follows_curve on an FEM body with point: the vertex nearest to it at rest, -1 */
  double p0[3];   /* follows_curve along / distance: the point when the checks were attached (t = 0) */
  double worst_share; /* follows_curve: the largest |error| / allowed so far */
} check_state;

struct kn_checks {
  int n;
  check_state* c;
  kn_check_result* r;
  kn_mb_data** data; /* per tree, for the kinematics of the bodies the checks name */
  long* data_step;   /* the step each tree's data was computed at (-1: never) */
  int ntree;         /* data has ntree entries */
  int failed;        /* a step failed */
  double t_failed;
  char fail_msg[256];
};

//---- resolving names ----

// (name) => an FEM body, or a rigid body by kn_sim_find_body; 0 when nothing matches
static int resolve_ref(const kn_world* w, const char* name, ref* r) {
  r->tree = r->body = r->fem = r->mpm = -1;
  for (int i = 0; i < w->nfem; i++)
    if (strcmp(w->fems[i].name, name) == 0) return (r->fem = i), 1;
  for (int i = 0; i < w->nmpm; i++)
    if (strcmp(w->mpms[i].name, name) == 0) return (r->mpm = i), 1;
  if (strcmp(name, "world") == 0) return 0; /* the world has no height or pose to check */
  return kn_sim_find_body(w, name, &r->tree, &r->body);
}

// (collider name, scene name) => 1 when the name is the collider's or its owner's ("gripper")
static int collider_matches(const char* collider, const char* name) {
  size_t n = strlen(name);
  return strcmp(collider, name) == 0 || (strncmp(collider, name, n) == 0 && collider[n] == '/');
}

// (name) => flags over w->colliders; the number matched
static int collider_set(const kn_world* w, const char* name, char* in) {
  int n = 0;
  for (int i = 0; i < w->ncollider; i++) n += (in[i] = (char)collider_matches(w->colliders[i].name, name));
  return n;
}

static int fem_index(const kn_world* w, const char* name) {
  for (int i = 0; i < w->nfem; i++)
    if (strcmp(w->fems[i].name, name) == 0) return i;
  return -1;
}

static int mpm_index(const kn_world* w, const char* name) {
  for (int i = 0; i < w->nmpm; i++)
    if (strcmp(w->mpms[i].name, name) == 0) return i;
  return -1;
}

static kn_status resolve_check(const kn_world* w, check_state* c, unsigned i, kn_error* err) {
  const kn_scene* s = w->scene;
  const kn_scene_check* d = c->def;
  char k[128];
  if (d->body) {
    snprintf(k, sizeof k, "checks[%u].body", i);
    if (!resolve_ref(w, d->body, &c->a))
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s': no object, FEM body or \"robot/link\" named '%s'",
                           d->name, d->body);
  }
  if (d->link) {
    snprintf(k, sizeof k, "checks[%u].link", i);
    if (!resolve_ref(w, d->link, &c->b) || c->b.fem >= 0 || c->b.mpm >= 0)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s': no rigid \"robot/link\" or object named '%s'",
                           d->name, d->link);
    if (c->a.fem >= 0 && d->rotation) {
      snprintf(k, sizeof k, "checks[%u].rotation", i);
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s': an FEM body has no orientation; give value "
                           "only (its centroid's drift)", d->name);
    }
  }
  if (d->type == KN_CHECK_FOLLOWS_CURVE) {
    c->curve = &s->curves[i];
    c->vertex = -1;
    snprintf(k, sizeof k, "checks[%u].point", i);
    if (d->point && c->a.mpm >= 0)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s': an MPM body is followed by its centroid; "
                           "remove point", d->name);
    if (d->point && c->a.fem >= 0) { /* the vertex nearest to the point in the rest mesh */
      const kn_tet_mesh* m = &w->fems[c->a.fem].body->mesh;
      double best = INFINITY;
      for (int v = 0; v < m->nvert; v++) {
        double dx = m->X[3 * v] - d->point[0], dy = m->X[3 * v + 1] - d->point[1], dz = m->X[3 * v + 2] - d->point[2];
        double d2 = dx * dx + dy * dy + dz * dz;
        if (d2 < best) best = d2, c->vertex = v;
      }
    }
  }
  if (!d->bodies) return KN_OK;
  if (d->type == KN_CHECK_DISTANCE_BELOW) {
    for (int j = 0; j < 2; j++) {
      snprintf(k, sizeof k, "checks[%u].bodies[%d]", i, j);
      if (!resolve_ref(w, d->bodies[j], j ? &c->b : &c->a))
        return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s': no object, FEM body or \"robot/link\" named "
                             "'%s'", d->name, d->bodies[j]);
    }
    return KN_OK;
  }
  /* contact pairs: collider sets (an FEM body stands for its surface: its total contact force) */
  c->in_a = kn_calloc((size_t)w->ncollider + 1, 1);
  c->in_b = kn_calloc((size_t)w->ncollider + 1, 1);
  if (!c->in_a || !c->in_b) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  for (int j = 0; j < 2; j++) {
    snprintf(k, sizeof k, "checks[%u].bodies[%d]", i, j);
    if ((c->fem_side[j] = fem_index(w, d->bodies[j])) >= 0) continue;
    if ((c->mpm_side[j] = mpm_index(w, d->bodies[j])) >= 0) continue;
    if (collider_set(w, d->bodies[j], j ? c->in_b : c->in_a) == 0)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k,
                           "check '%s': no collision geometry or deformable named '%s' (an object, a robot, "
                           "\"robot/link\" or a deformable)", d->name, d->bodies[j]);
  }
  return KN_OK;
}

static void checks_free(void* self) {
  struct kn_checks* ks = self;
  if (!ks) return;
  for (int i = 0; ks->c && i < ks->n; i++) free(ks->c[i].in_a), free(ks->c[i].in_b);
  for (int t = 0; ks->data && t < ks->ntree; t++) kn_mb_data_free(ks->data[t]);
  free(ks->data);
  free(ks->data_step);
  free(ks->c);
  free(ks->r);
  free(ks);
}

static void checks_stepped(void* self, const kn_world* w);
static void checks_failed(void* self, const kn_world* w, const char* message);
static json_t* checks_summary(void* self, const kn_world* w);
static const kn_world_observer_ops checks_ops = {
    .name = "checks", .stepped = checks_stepped, .failed = checks_failed, .summary = checks_summary,
    .free = checks_free};

// (world, the checks built so far) => the names resolved and the current state observed
static kn_status checks_create(const kn_world* w, struct kn_checks* ks, kn_error* err) {
  const kn_scene* s = w->scene;
  const int n = ks->n;
  ks->c = kn_calloc((size_t)n, sizeof *ks->c);
  ks->r = kn_calloc((size_t)n, sizeof *ks->r);
  ks->data = kn_calloc((size_t)w->ntree, sizeof *ks->data);
  ks->data_step = kn_calloc((size_t)w->ntree, sizeof *ks->data_step);
  ks->ntree = ks->data ? w->ntree : 0;
  if (!ks->c || !ks->r || !ks->data || !ks->data_step) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  for (int t = 0; t < w->ntree; t++) {
    ks->data_step[t] = -1;
    if (!(ks->data[t] = kn_mb_data_create(w->trees[t].robot->model))) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  int sap_limit = kn_sap_options_default().max_iterations;
  if (s->doc->contact && s->doc->contact->solver && s->doc->contact->solver->max_iterations)
    sap_limit = *s->doc->contact->solver->max_iterations;
  for (int i = 0; i < n; i++) {
    check_state* c = &ks->c[i];
    kn_check_result* r = &ks->r[i];
    c->def = &s->doc->checks[i];
    c->after = c->def->after ? *c->def->after : 0;
    c->before = c->def->before ? *c->def->before : s->duration;
    c->limit = c->def->value ? *c->def->value : (c->def->type == KN_CHECK_SOLVER_CONVERGED ? sap_limit : 0);
    c->a.tree = c->b.tree = c->a.fem = c->b.fem = c->a.mpm = c->b.mpm = -1;
    c->fem_side[0] = c->fem_side[1] = c->mpm_side[0] = c->mpm_side[1] = -1;
    kn_status st = resolve_check(w, c, (unsigned)i, err);
    if (st) return st;
    r->name = c->def->name;
    r->type = (kn_check_type)c->def->type;
    r->expect_fail = c->def->expect;
    r->unit = r->type == KN_CHECK_GRASP_HELD       ? "mm"
              : r->type == KN_CHECK_CONTACT_FORCE  ? "N"
              : r->type == KN_CHECK_SOLVER_CONVERGED ? "iterations"
              : r->type == KN_CHECK_FOLLOWS_CURVE && c->def->quantity >= KN_QUANTITY_VX &&
                      c->def->quantity <= KN_QUANTITY_SPEED
                  ? "m/s"
                  : "m";
    r->measured = r->measured2 = NAN;
    r->value = r->reference = r->current = r->current_reference = NAN;
    r->t = r->t2 = -1;
    r->lo = INFINITY;
    r->hi = -INFINITY;
  }
  checks_stepped(ks, w); /* t = 0 */
  return KN_OK;
}

kn_status kn_checks_attach(kn_world* w, kn_error* err) {
  int n = (int)w->scene->doc->nchecks;
  if (n == 0) return KN_OK;
  struct kn_checks* ks = kn_calloc(1, sizeof *ks);
  if (!ks) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  ks->n = n;
  kn_status st = checks_create(w, ks, err);
  if (st) {
    checks_free(ks);
    return st;
  }
  return kn_world_add_observer(w, &checks_ops, ks, err);
}

//---- sampling ----

// (rigid or FEM ref) => world pose (an FEM body: its centroid, identity rotation)
static void ref_pose(struct kn_checks* ks, const kn_world* w, const ref* r, kn_pose* X) {
  kn_pose_identity(X);
  if (r->fem >= 0) {
    kn_sim_deformable_centroid(&w->fems[r->fem], X->p);
    return;
  }
  if (r->mpm >= 0) {
    kn_sim_mpm_centroid(&w->mpms[r->mpm], X->p);
    return;
  }
  if (r->tree < 0) return;
  const kn_world_tree* tr = &w->trees[r->tree];
  if (ks->data_step[r->tree] != w->step) {
    kn_mb_kinematics(tr->robot->model, tr->q, tr->v, ks->data[r->tree]);
    ks->data_step[r->tree] = w->step;
  }
  *X = ks->data[r->tree]->X_wb[r->body];
}

// (follows_curve) => the check's point in the world and its velocity
static void curve_point(struct kn_checks* ks, const kn_world* w, const check_state* c, double p[3], double v[3]) {
  const ref* r = &c->a;
  const double* pb = c->def->point;
  v[0] = v[1] = v[2] = 0;
  if (r->fem >= 0) {
    const kn_fem_body* b = w->fems[r->fem].body;
    if (c->vertex >= 0) {
      for (int k = 0; k < 3; k++) p[k] = b->x[3 * c->vertex + k], v[k] = b->v[3 * c->vertex + k];
      return;
    }
    kn_sim_deformable_centroid(&w->fems[r->fem], p);
    double m = 0;
    for (int j = 0; j < b->mesh.nvert; j++) {
      for (int k = 0; k < 3; k++) v[k] += b->mass[j] * b->v[3 * j + k];
      m += b->mass[j];
    }
    for (int k = 0; k < 3; k++) v[k] /= m;
    return;
  }
  if (r->mpm >= 0) {
    const kn_mpm_body* b = w->mpms[r->mpm].body;
    kn_sim_mpm_centroid(&w->mpms[r->mpm], p);
    double m = 0;
    for (int j = 0; j < b->np; j++) {
      for (int k = 0; k < 3; k++) v[k] += b->mass[j] * b->v[3 * j + k];
      m += b->mass[j];
    }
    for (int k = 0; k < 3; k++) v[k] /= m;
    return;
  }
  kn_pose X;
  ref_pose(ks, w, r, &X); /* also computes the tree's kinematics at this step */
  const double zero[3] = {0, 0, 0};
  if (!pb) pb = zero;
  for (int k = 0; k < 3; k++) p[k] = X.p[k] + X.R[3 * k] * pb[0] + X.R[3 * k + 1] * pb[1] + X.R[3 * k + 2] * pb[2];
  if (r->tree < 0) return;
  double V[6];
  kn_mb_point_velocity(w->trees[r->tree].robot->model, ks->data[r->tree], r->body, pb, V);
  for (int k = 0; k < 3; k++) v[k] = V[3 + k];
}

// (follows_curve) => its quantity now
static double curve_quantity(struct kn_checks* ks, const kn_world* w, const check_state* c) {
  double p[3], v[3];
  curve_point(ks, w, c, p, v);
  const double* n = c->def->direction;
  double dp[3] = {p[0] - c->p0[0], p[1] - c->p0[1], p[2] - c->p0[2]};
  switch (c->def->quantity) {
    case KN_QUANTITY_X: return p[0];
    case KN_QUANTITY_Y: return p[1];
    case KN_QUANTITY_Z: return p[2];
    case KN_QUANTITY_VX: return v[0];
    case KN_QUANTITY_VY: return v[1];
    case KN_QUANTITY_VZ: return v[2];
    case KN_QUANTITY_SPEED: return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    case KN_QUANTITY_ALONG: return dp[0] * n[0] + dp[1] * n[1] + dp[2] * n[2];
    default: return sqrt(dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2]);
  }
}

// keep the worst value: `worse` says whether v is worse than the current measured value
static void keep(kn_check_result* r, double v, double t, int worse) {
  if (isnan(r->measured) || worse) r->measured = v, r->t = t;
}

// (rotation matrix) => its angle [rad], robust near 0 and pi
static double rotation_angle(const double R[9]) {
  double c = 0.5 * (R[0] + R[4] + R[8] - 1);
  double sx = R[7] - R[5], sy = R[2] - R[6], sz = R[3] - R[1];
  return atan2(0.5 * sqrt(sx * sx + sy * sy + sz * sz), c);
}

// (FEM contact) => 1 when its sides are the check's pair (either way round); no pair: every one
static int fem_contact_in_pair(const check_state* c, const kn_world_fem_contact* p) {
  if (!c->in_a) return 1;
  for (int j = 0; j < 2; j++) {
    int A = j, B = 1 - j; /* check side A against the contact's side A */
    const char* inA = A ? c->in_b : c->in_a;
    int okA = p->a_fem >= 0 ? c->fem_side[A] == p->a_fem : (c->fem_side[A] < 0 && inA[p->a_collider]);
    if (okA && c->fem_side[B] == p->fem_b) return 1;
  }
  return 0;
}

// (MPM contact) => 1 when one side of the check's pair is its deformable and the other names its
// collider; no pair: every one
static int mpm_contact_in_pair(const check_state* c, const kn_world_mpm_contact* p) {
  if (!c->in_a) return 1;
  return (c->mpm_side[0] == p->mpm && c->mpm_side[1] < 0 && c->fem_side[1] < 0 && c->in_b[p->collider]) ||
         (c->mpm_side[1] == p->mpm && c->mpm_side[0] < 0 && c->fem_side[0] < 0 && c->in_a[p->collider]);
}

// follows_curve's allowed |error| at a reference value (a zero tolerance allows nothing: 1e-300)
static double curve_allowed(const check_state* c, double ref_value) {
  double atol = c->def->tolerance ? *c->def->tolerance : 0, rtol = c->def->rel_tolerance ? *c->def->rel_tolerance : 0;
  return fmax(atol + rtol * fabs(ref_value), 1e-300);
}

static void sample(struct kn_checks* ks, const kn_world* w, check_state* c, kn_check_result* r) {
  const double t = w->t;
  kn_pose Xa, Xb;
  switch (c->def->type) {
    case KN_CHECK_HEIGHT_ABOVE:
      ref_pose(ks, w, &c->a, &Xa);
      r->current = Xa.p[2];
      keep(r, Xa.p[2], t, Xa.p[2] < r->measured);
      break;
    case KN_CHECK_HEIGHT_BELOW:
      ref_pose(ks, w, &c->a, &Xa);
      r->current = Xa.p[2];
      keep(r, Xa.p[2], t, Xa.p[2] > r->measured);
      break;
    case KN_CHECK_DISTANCE_BELOW: {
      ref_pose(ks, w, &c->a, &Xa);
      ref_pose(ks, w, &c->b, &Xb);
      double d = sqrt((Xa.p[0] - Xb.p[0]) * (Xa.p[0] - Xb.p[0]) + (Xa.p[1] - Xb.p[1]) * (Xa.p[1] - Xb.p[1]) +
                      (Xa.p[2] - Xb.p[2]) * (Xa.p[2] - Xb.p[2]));
      r->current = d;
      keep(r, d, t, d > r->measured);
      break;
    }
    case KN_CHECK_GRASP_HELD: {
      /* X_LO = X_WL^-1 X_WO; drift relative to its value at the window's first sample */
      kn_pose XL, XLinv, X_LO;
      ref_pose(ks, w, &c->a, &Xa);
      ref_pose(ks, w, &c->b, &XL);
      kn_pose_inv(&XL, &XLinv);
      kn_pose_mul(&XLinv, &Xa, &X_LO);
      if (!c->have_ref) {
        c->X_ref = X_LO;
        c->have_ref = 1;
      }
      double dp[3] = {X_LO.p[0] - c->X_ref.p[0], X_LO.p[1] - c->X_ref.p[1], X_LO.p[2] - c->X_ref.p[2]};
      double drift_mm = 1e3 * sqrt(dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2]);
      r->current = drift_mm;
      keep(r, drift_mm, t, drift_mm > r->measured);
      if (c->a.fem < 0) {
        double dR[9];
        kn_mat3_mulT(c->X_ref.R, X_LO.R, dR);
        double deg = rotation_angle(dR) * (180.0 / 3.14159265358979323846);
        if (isnan(r->measured2) || deg > r->measured2) r->measured2 = deg, r->t2 = t;
      }
      break;
    }
    case KN_CHECK_NO_PENETRATION: {
      double phi = INFINITY; /* the deepest contact of this step */
      for (int k = 0; k < w->ncontact; k++) {
        const kn_world_contact* p = &w->contacts[k];
        if (c->in_a && !((c->in_a[p->a] && c->in_b[p->b]) || (c->in_a[p->b] && c->in_b[p->a]))) continue;
        phi = fmin(phi, p->phi);
      }
      for (int k = 0; k < w->nfem_contact; k++)
        if (fem_contact_in_pair(c, &w->fem_contacts[k])) phi = fmin(phi, w->fem_contacts[k].phi);
      for (int k = 0; k < w->nmpm_contact; k++)
        if (mpm_contact_in_pair(c, &w->mpm_contacts[k])) phi = fmin(phi, w->mpm_contacts[k].phi);
      if (phi < INFINITY) {
        r->current = phi;
        keep(r, phi, t, phi < r->measured);
      }
      break;
    }
    case KN_CHECK_CONTACT_FORCE: {
      /* f is the force on b and n points from a into b: f . n is the normal (pushing) force */
      double F = 0;
      int rigid = c->fem_side[0] < 0 && c->fem_side[1] < 0 && c->mpm_side[0] < 0 && c->mpm_side[1] < 0;
      for (int k = 0; k < w->ncontact && rigid; k++) {
        const kn_world_contact* p = &w->contacts[k];
        if ((c->in_a[p->a] && c->in_b[p->b]) || (c->in_a[p->b] && c->in_b[p->a]))
          F += p->f[0] * p->n[0] + p->f[1] * p->n[1] + p->f[2] * p->n[2];
      }
      for (int k = 0; k < w->nfem_contact; k++) {
        const kn_world_fem_contact* p = &w->fem_contacts[k];
        if (fem_contact_in_pair(c, p)) F += p->f[0] * p->n[0] + p->f[1] * p->n[1] + p->f[2] * p->n[2];
      }
      for (int k = 0; k < w->nmpm_contact; k++) {
        const kn_world_mpm_contact* p = &w->mpm_contacts[k];
        if (mpm_contact_in_pair(c, p)) F += p->f[0] * p->n[0] + p->f[1] * p->n[1] + p->f[2] * p->n[2];
      }
      double lo = c->def->min ? *c->def->min : -INFINITY, hi = c->def->max ? *c->def->max : INFINITY;
      /* worst = smallest margin to the band (negative outside it) */
      double margin = fmin(F - lo, hi - F);
      double cur = isnan(r->measured) ? INFINITY : fmin(r->measured - lo, hi - r->measured);
      r->current = F;
      keep(r, F, t, margin < cur);
      if (F < r->lo) r->lo = F;
      if (F > r->hi) r->hi = F;
      break;
    }
    case KN_CHECK_SOLVER_CONVERGED:
      if (w->step > 0) {
        r->current = (double)w->last.iterations;
        keep(r, (double)w->last.iterations, t, w->last.iterations > r->measured);
      }
      break;
    case KN_CHECK_FOLLOWS_CURVE: {
      double q = curve_quantity(ks, w, c);
      double ref_value = kn_scene_curve_eval(c->curve, t);
      double e = fabs(q - ref_value);
      double allowed = curve_allowed(c, ref_value);
      r->current = q, r->current_reference = ref_value;
      /* worst = the largest share of the tolerance used (a NaN reference, outside a CSV's samples,
       * is worst of all); ties keep the first */
      double share = isnan(e) ? INFINITY : e / allowed;
      if (r->t < 0 || share > c->worst_share) {
        r->measured = e, r->t = t, r->value = q, r->reference = ref_value;
        c->worst_share = share;
      }
      break;
    }
  }
}

static void checks_stepped(void* self, const kn_world* w) {
  struct kn_checks* ks = self;
  const double eps = 1e-9 + 1e-6 * w->scene->time_step;
  for (int i = 0; i < ks->n; i++) {
    check_state* c = &ks->c[i];
    ks->r[i].current = ks->r[i].current_reference = NAN;
    if (c->def->type == KN_CHECK_FOLLOWS_CURVE && !c->have_ref) { /* along / distance: from the start */
      double v[3];
      curve_point(ks, w, c, c->p0, v);
      c->have_ref = 1;
    }
    if (w->t < c->after - eps || w->t > c->before + eps) {
      if (c->def->type == KN_CHECK_FOLLOWS_CURVE) { /* observed, not judged: for plots of the whole run */
        ks->r[i].current = curve_quantity(ks, w, c);
        ks->r[i].current_reference = kn_scene_curve_eval(c->curve, w->t);
      }
      continue;
    }
    ks->r[i].samples++;
    sample(ks, w, c, &ks->r[i]);
  }
}

static void checks_failed(void* self, const kn_world* w, const char* message) {
  struct kn_checks* ks = self;
  if (ks->failed) return;
  ks->failed = 1;
  ks->t_failed = w->t + w->scene->time_step;
  snprintf(ks->fail_msg, sizeof ks->fail_msg, "%s", message ? message : "step failed");
}

//---- results ----

static void window_text(const check_state* c, char* out, size_t cap) {
  snprintf(out, cap, "[%g, %g] s", c->after, c->before);
}

// (accumulated samples) => passed and message
static void finalize(const struct kn_checks* ks, const kn_world* w, const check_state* c, kn_check_result* r) {
  char win[64];
  window_text(c, win, sizeof win);
  const double L = c->limit;
  int t = c->def->type;
  if (t == KN_CHECK_SOLVER_CONVERGED && ks->failed && ks->t_failed >= c->after - 1e-9 && ks->t_failed <= c->before + 1e-9) {
    r->passed = 0;
    snprintf(r->message, sizeof r->message, "the step to t = %g s failed: %s", ks->t_failed, ks->fail_msg);
    return;
  }
  if (r->samples == 0 && t != KN_CHECK_NO_PENETRATION) {
    r->passed = 0;
    snprintf(r->message, sizeof r->message, "no sample in the window %s (the run reached t = %g s%s)", win, w->t,
             ks->failed ? " and then failed" : "");
    return;
  }
  switch (t) {
    case KN_CHECK_HEIGHT_ABOVE:
      r->passed = r->measured > L;
      snprintf(r->message, sizeof r->message, "min z = %.6g m at t = %g s; needs > %g m in %s", r->measured, r->t, L,
               win);
      break;
    case KN_CHECK_HEIGHT_BELOW:
      r->passed = r->measured < L;
      snprintf(r->message, sizeof r->message, "max z = %.6g m at t = %g s; needs < %g m in %s", r->measured, r->t, L,
               win);
      break;
    case KN_CHECK_DISTANCE_BELOW:
      r->passed = r->measured < L;
      snprintf(r->message, sizeof r->message, "max distance = %.6g m at t = %g s; needs < %g m in %s", r->measured,
               r->t, L, win);
      break;
    case KN_CHECK_GRASP_HELD: {
      r->passed = r->measured < L;
      int n = snprintf(r->message, sizeof r->message, "max drift = %.6g mm at t = %g s (needs < %g mm)", r->measured,
                       r->t, L);
      if (!isnan(r->measured2) && n > 0 && (size_t)n < sizeof r->message) {
        if (c->def->rotation) r->passed = r->passed && r->measured2 < *c->def->rotation;
        n += snprintf(r->message + n, sizeof r->message - (size_t)n, ", max rotation = %.4g deg at t = %g s",
                      r->measured2, r->t2);
        if (c->def->rotation && (size_t)n < sizeof r->message)
          n += snprintf(r->message + n, sizeof r->message - (size_t)n, " (needs < %g deg)", *c->def->rotation);
      }
      if (n > 0 && (size_t)n < sizeof r->message)
        snprintf(r->message + n, sizeof r->message - (size_t)n, " in %s from its start", win);
      break;
    }
    case KN_CHECK_NO_PENETRATION:
      if (isnan(r->measured)) {
        r->passed = 1;
        snprintf(r->message, sizeof r->message, "no contact in %s", win);
      } else {
        r->passed = -r->measured < L;
        snprintf(r->message, sizeof r->message, "deepest contact phi = %.6g m at t = %g s; needs depth < %g m in %s",
                 r->measured, r->t, L, win);
      }
      break;
    case KN_CHECK_CONTACT_FORCE: {
      double lo = c->def->min ? *c->def->min : -INFINITY, hi = c->def->max ? *c->def->max : INFINITY;
      r->passed = r->lo >= lo && r->hi <= hi;
      snprintf(r->message, sizeof r->message, "normal force %.6g N at t = %g s (range [%.6g, %.6g] N); needs [%g, %g] "
               "N in %s", r->measured, r->t, r->lo, r->hi, lo, hi, win);
      break;
    }
    case KN_CHECK_FOLLOWS_CURVE: {
      const char* unit = r->unit;
      double allowed = curve_allowed(c, r->reference);
      r->passed = !isnan(r->measured) && r->measured <= allowed;
      if (isnan(r->reference))
        snprintf(r->message, sizeof r->message, "%s = %.6g %s at t = %g s has no reference there (outside the CSV's "
                 "samples) in %s", kn_check_quantity_name((kn_check_quantity)c->def->quantity), r->value, unit, r->t,
                 win);
      else
        snprintf(r->message, sizeof r->message, "max |error| = %.6g %s at t = %g s (%s = %.6g, reference %.6g); "
                 "needs <= %.4g %s in %s", r->measured, unit, r->t,
                 kn_check_quantity_name((kn_check_quantity)c->def->quantity), r->value, r->reference, allowed, unit,
                 win);
      break;
    }
    case KN_CHECK_SOLVER_CONVERGED:
      if (isnan(r->measured)) {
        r->passed = 1;
        snprintf(r->message, sizeof r->message, "no step in %s", win);
      } else {
        r->passed = r->measured < L;
        snprintf(r->message, sizeof r->message, "max %g iterations at t = %g s; needs < %g in %s", r->measured, r->t,
                 L, win);
      }
      break;
  }
}

const kn_check_result* kn_world_checks(const kn_world* w, int* n) {
  struct kn_checks* ks = kn_world_observer_self(w, &checks_ops);
  if (!ks) {
    if (n) *n = 0;
    return NULL;
  }
  for (int i = 0; i < ks->n; i++) finalize(ks, w, &ks->c[i], &ks->r[i]);
  if (n) *n = ks->n;
  return ks->r;
}

// (world) => summary.json's "checks" list (new reference), NULL when no memory
static json_t* checks_summary(void* self, const kn_world* w) {
  (void)self;
  int n = 0;
  const kn_check_result* r = kn_world_checks(w, &n);
  if (!r) return NULL;
  json_t* list = json_array();
  int bad = !list;
  for (int i = 0; i < n && !bad; i++) {
    json_t* c = json_object();
    bad |= json_array_append_new(list, c);
    bad |= json_object_set_new(c, "name", json_string(r[i].name));
    bad |= json_object_set_new(c, "type", json_string(kn_check_type_name(r[i].type)));
    bad |= json_object_set_new(c, "passed", json_boolean(r[i].passed));
    bad |= json_object_set_new(c, "expect", json_string(r[i].expect_fail ? "fail" : "pass"));
    bad |= json_object_set_new(c, "samples", json_integer(r[i].samples));
    bad |= json_object_set_new(c, "measured", kn_json_real(r[i].measured));
    bad |= json_object_set_new(c, "t", kn_json_real(r[i].t >= 0 ? r[i].t : NAN));
    if (r[i].type == KN_CHECK_GRASP_HELD) {
      bad |= json_object_set_new(c, "rotation_deg", kn_json_real(r[i].measured2));
      bad |= json_object_set_new(c, "rotation_t", kn_json_real(r[i].t2 >= 0 ? r[i].t2 : NAN));
    }
    if (r[i].type == KN_CHECK_FOLLOWS_CURVE) {
      bad |= json_object_set_new(c, "value", kn_json_real(r[i].value));
      bad |= json_object_set_new(c, "reference", kn_json_real(r[i].reference));
    }
    if (r[i].type == KN_CHECK_CONTACT_FORCE)
      bad |= json_object_set_new(c, "range", json_pack("[oo]", kn_json_real(r[i].lo), kn_json_real(r[i].hi)));
    bad |= json_object_set_new(c, "message", json_string(r[i].message));
  }
  if (bad) {
    json_decref(list);
    return NULL;
  }
  return list;
}
