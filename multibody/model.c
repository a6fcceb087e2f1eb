/* Building a kinematic tree: bodies with their inboard joints, couplers, attaching one tree under
 * another's link, and name look-ups. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "multibody/mb_internal.h"

/*---- joint types ----*/

const char* kn_joint_type_name(kn_joint_type t) {
  switch (t) {
    case KN_JOINT_FIXED: return "fixed";
    case KN_JOINT_REVOLUTE: return "revolute";
    case KN_JOINT_CONTINUOUS: return "continuous";
    case KN_JOINT_PRISMATIC: return "prismatic";
    case KN_JOINT_PLANAR: return "planar";
    case KN_JOINT_FLOATING: return "floating";
  }
  return "unknown";
}

int kn_joint_nq(kn_joint_type t) {
  switch (t) {
    case KN_JOINT_FIXED: return 0;
    case KN_JOINT_REVOLUTE:
    case KN_JOINT_CONTINUOUS:
    case KN_JOINT_PRISMATIC: return 1;
    case KN_JOINT_PLANAR: return 3;
    case KN_JOINT_FLOATING: return 7;
  }
  return 0;
}

int kn_joint_nv(kn_joint_type t) {
  switch (t) {
    case KN_JOINT_FIXED: return 0;
    case KN_JOINT_REVOLUTE:
    case KN_JOINT_CONTINUOUS:
    case KN_JOINT_PRISMATIC: return 1;
    case KN_JOINT_PLANAR: return 3;
    case KN_JOINT_FLOATING: return 6;
  }
  return 0;
}

/*---- create / free ----*/

// (name) => an empty model with default gravity
kn_mb_model* kn_mb_model_create(const char* name) {
  kn_mb_model* m = kn_calloc(1, sizeof *m);
  if (!m) return NULL;
  m->name = kn_strdup(name ? name : "model");
  if (!m->name) {
    free(m);
    return NULL;
  }
  m->gravity[2] = -9.81;
  return m;
}

static void free_body_strings(kn_mb_body* b) {
  free(b->name);
  free(b->joint_name);
  b->name = b->joint_name = NULL;
}

// (m) => nothing; frees the model and every string it owns
void kn_mb_model_free(kn_mb_model* m) {
  if (!m) return;
  for (int i = 0; i < m->nbody; i++) free_body_strings(&m->bodies[i]);
  free(m->bodies);
  free(m->couplers);
  free(m->name);
  kn_name_map_free(&m->body_names);
  kn_name_map_free(&m->joint_names);
  free(m);
}

/*---- validation helpers ----*/

static int all_finite(const double* x, int n) {
  for (int k = 0; k < n; k++)
    if (!isfinite(x[k])) return 0;
  return 1;
}

/* Eigenvalues of a symmetric 3 x 3 matrix, ascending (trigonometric closed form, Smith 1961). */
static void sym3_eigenvalues(const double A[9], double e[3]) {
  double p1 = A[1] * A[1] + A[2] * A[2] + A[5] * A[5];
  double tr = A[0] + A[4] + A[8];
  if (p1 == 0) {
    e[0] = A[0], e[1] = A[4], e[2] = A[8];
  } else {
    double qm = tr / 3;
    double p2 = (A[0] - qm) * (A[0] - qm) + (A[4] - qm) * (A[4] - qm) + (A[8] - qm) * (A[8] - qm) + 2 * p1;
    double p = sqrt(p2 / 6);
    double B[9];
    for (int k = 0; k < 9; k++) B[k] = (A[k] - (k % 4 == 0 ? qm : 0)) / p;
    double detB = B[0] * (B[4] * B[8] - B[5] * B[7]) - B[1] * (B[3] * B[8] - B[5] * B[6]) +
                  B[2] * (B[3] * B[7] - B[4] * B[6]);
    double r = detB / 2;
    double phi = r <= -1 ? MB_PI / 3 : r >= 1 ? 0 : acos(r) / 3;
    e[2] = qm + 2 * p * cos(phi);
    e[0] = qm + 2 * p * cos(phi + 2 * MB_PI / 3);
    e[1] = tr - e[0] - e[2];
  }
  /* sort ascending */
  for (int i = 0; i < 2; i++)
    for (int j = i + 1; j < 3; j++)
      if (e[j] < e[i]) {
        double t = e[i];
        e[i] = e[j], e[j] = t;
      }
}

static int joint_has_axis(kn_joint_type t) {
  return t == KN_JOINT_REVOLUTE || t == KN_JOINT_CONTINUOUS || t == KN_JOINT_PRISMATIC || t == KN_JOINT_PLANAR;
}

/* e1, e2 spanning the plane normal to the unit axis a, right-handed (e1 x e2 = a). A caller's
 * e1 that is not parallel to a is kept (orthogonalized); otherwise e1 is the world axis least
 * aligned with a, projected onto the plane (so axis z gives e1 = x, e2 = y). */
static void fill_planar_basis(const double a[3], double basis[6]) {
  double e1[3] = {basis[0], basis[1], basis[2]};
  double d = kn_vec3_dot(e1, a);
  for (int k = 0; k < 3; k++) e1[k] -= d * a[k];
  double n = kn_vec3_norm(e1);
  if (!(n > 1e-9)) {
    int best = 0;
    for (int k = 1; k < 3; k++)
      if (fabs(a[k]) < fabs(a[best])) best = k;
    e1[0] = e1[1] = e1[2] = 0;
    e1[best] = 1;
    d = a[best];
    for (int k = 0; k < 3; k++) e1[k] -= d * a[k];
    n = kn_vec3_norm(e1);
  }
  for (int k = 0; k < 3; k++) e1[k] /= n;
  double e2[3];
  kn_vec3_cross(a, e1, e2);
  for (int k = 0; k < 3; k++) basis[k] = e1[k], basis[3 + k] = e2[k];
}

#define BODY_LABEL(b, idx) ((b)->name ? (b)->name : "(unnamed)"), (idx)

/*---- add a body ----*/

// (m, its first n bodies) => the name maps rebuilt from them (after dropping bodies: no key may
// point at a freed name). Allocation failures leave a map without some names: look-ups then miss.
static void reindex_names(kn_mb_model* m, int n) {
  kn_name_map_free(&m->body_names);
  kn_name_map_free(&m->joint_names);
  for (int i = 0; i < n; i++) {
    if (m->bodies[i].name) kn_name_map_put(&m->body_names, m->bodies[i].name, i);
    if (m->bodies[i].joint_name) kn_name_map_put(&m->joint_names, m->bodies[i].joint_name, i);
  }
}

// (number of bodies) => capacity of the bodies array: 0, then 8, 16, 32, ...
static int body_capacity(int n) {
  if (n == 0) return 0;
  int c = 8;
  while (c < n) c *= 2;
  return c;
}

// (m, b) => index of the appended body, or -1 with err naming the body and the bad field
int kn_mb_add_body(kn_mb_model* m, const kn_mb_body* b, kn_error* err) {
  int idx = m->nbody;
  const char* mname = m->name ? m->name : "model";
  if ((int)b->jtype < (int)KN_JOINT_FIXED || (int)b->jtype > (int)KN_JOINT_FLOATING) {
    kn_fail(err, KN_ERR_INVALID, "model '%s', body '%s' (#%d): unknown joint type %d", mname, BODY_LABEL(b, idx),
            (int)b->jtype);
    return -1;
  }
  if (idx == 0 ? b->parent != -1 : (b->parent < 0 || b->parent >= idx)) {
    kn_fail(err, KN_ERR_INVALID,
            "model '%s', body '%s' (#%d): parent %d is invalid (expected %s; bodies are added in topological "
            "order and only body 0 hangs from the world)",
            mname, BODY_LABEL(b, idx), b->parent, idx == 0 ? "-1 for the root" : "an existing body index");
    return -1;
  }
  int same = kn_mb_find_body(m, b->name);
  if (same >= 0) {
    kn_fail(err, KN_ERR_INVALID, "model '%s', body '%s' (#%d): a body with this name already exists (#%d)", mname,
            BODY_LABEL(b, idx), same);
    return -1;
  }
  if ((same = kn_mb_find_joint(m, b->joint_name)) >= 0) {
    kn_fail(err, KN_ERR_INVALID, "model '%s', body '%s' (#%d): joint '%s' already exists (inboard joint of body #%d)",
            mname, BODY_LABEL(b, idx), b->joint_name, same);
    return -1;
  }
  double axis[3] = {b->axis[0], b->axis[1], b->axis[2]};
  double an = kn_vec3_norm(axis);
  if (joint_has_axis(b->jtype) && !(an > 1e-12 && isfinite(an))) {
    kn_fail(err, KN_ERR_INVALID, "model '%s', body '%s' (#%d): %s joint '%s' has axis (%g, %g, %g); expected non-zero",
            mname, BODY_LABEL(b, idx), kn_joint_type_name(b->jtype), b->joint_name ? b->joint_name : "(unnamed)",
            axis[0], axis[1], axis[2]);
    return -1;
  }
  if (!all_finite(b->X_pj.R, 9) || !all_finite(b->X_pj.p, 3)) {
    kn_fail(err, KN_ERR_INVALID, "model '%s', body '%s' (#%d): joint origin X_pj is not finite", mname,
            BODY_LABEL(b, idx));
    return -1;
  }
  if (!(b->mass >= 0) || !isfinite(b->mass)) {
    kn_fail(err, KN_ERR_INVALID, "model '%s', body '%s' (#%d): mass %g; expected finite and >= 0", mname,
            BODY_LABEL(b, idx), b->mass);
    return -1;
  }
  if (!all_finite(b->com, 3) || !all_finite(b->I_com, 9)) {
    kn_fail(err, KN_ERR_INVALID, "model '%s', body '%s' (#%d): centre of mass or inertia is not finite", mname,
            BODY_LABEL(b, idx));
    return -1;
  }
  /* inertia: symmetric, eigenvalues >= 0 and the triangle inequality l1 + l2 >= l3, all within a
   * tolerance relative to the trace (URDF values are often rounded to a few digits) */
  const double* I = b->I_com;
  double scale = fabs(I[0]) + fabs(I[4]) + fabs(I[8]);
  double tol = 1e-6 * scale + 1e-12;
  if (fabs(I[1] - I[3]) > tol || fabs(I[2] - I[6]) > tol || fabs(I[5] - I[7]) > tol) {
    kn_fail(err, KN_ERR_INVALID, "model '%s', body '%s' (#%d): inertia is not symmetric (xy %g/%g, xz %g/%g, yz %g/%g)",
            mname, BODY_LABEL(b, idx), I[1], I[3], I[2], I[6], I[5], I[7]);
    return -1;
  }
  double Isym[9];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) Isym[3 * r + c] = 0.5 * (I[3 * r + c] + I[3 * c + r]);
  double e[3];
  sym3_eigenvalues(Isym, e);
  if (e[0] < -tol || e[0] + e[1] < e[2] - tol) {
    kn_fail(err, KN_ERR_INVALID,
            "model '%s', body '%s' (#%d): inertia principal moments (%g, %g, %g) are not physical; expected >= 0 "
            "with the triangle inequality",
            mname, BODY_LABEL(b, idx), e[0], e[1], e[2]);
    return -1;
  }

  /* the array grows by doubling (its capacity is implied by nbody): one realloc per body made
   * loading a 20,000-link chain quadratic in copies (80 s under AddressSanitizer) */
  kn_mb_body* bodies = m->bodies;
  if (idx + 1 > body_capacity(idx)) {
    bodies = realloc(m->bodies, (size_t)body_capacity(idx + 1) * sizeof *bodies);
    if (!bodies) {
      kn_fail(err, KN_ERR_NOMEM, "model '%s', body '%s' (#%d): out of memory", mname, BODY_LABEL(b, idx));
      return -1;
    }
  }
  m->bodies = bodies;
  kn_mb_body* nb = &bodies[idx];
  *nb = *b;
  nb->name = kn_strdup(b->name);
  nb->joint_name = kn_strdup(b->joint_name);
  if ((b->name && !nb->name) || (b->joint_name && !nb->joint_name) ||
      (nb->name && kn_name_map_put(&m->body_names, nb->name, idx) != KN_OK) ||
      (nb->joint_name && kn_name_map_put(&m->joint_names, nb->joint_name, idx) != KN_OK)) {
    /* a name put before the failure would point at a freed string: index the bodies again */
    free_body_strings(nb);
    reindex_names(m, idx);
    kn_fail(err, KN_ERR_NOMEM, "model '%s', body #%d: out of memory", mname, idx);
    return -1;
  }
  memcpy(nb->I_com, Isym, sizeof Isym);
  if (an > 1e-12 && isfinite(an)) {
    for (int k = 0; k < 3; k++) nb->axis[k] = axis[k] / an;
  } else {
    nb->axis[0] = nb->axis[1] = 0, nb->axis[2] = 1; /* unused by FIXED and FLOATING */
  }
  if (b->jtype == KN_JOINT_PLANAR)
    fill_planar_basis(nb->axis, nb->planar_basis);
  else
    memset(nb->planar_basis, 0, sizeof nb->planar_basis);
  nb->nq = kn_joint_nq(b->jtype);
  nb->nv = kn_joint_nv(b->jtype);
  nb->q_adr = m->nq;
  nb->v_adr = m->nv;
  nb->has_position_limits = b->has_position_limits &&
                            (b->jtype == KN_JOINT_REVOLUTE || b->jtype == KN_JOINT_PRISMATIC) && b->lower < b->upper;
  m->nq += nb->nq;
  m->nv += nb->nv;
  m->nbody = idx + 1;
  return idx;
}

/*---- couplers ----*/

// (m, c) => index of the appended coupler, or -1 with err
int kn_mb_add_coupler(kn_mb_model* m, const kn_mb_coupler* c, kn_error* err) {
  const char* mname = m->name ? m->name : "model";
  if (c->body < 0 || c->body >= m->nbody || c->master < 0 || c->master >= m->nbody || c->body == c->master) {
    kn_fail(err, KN_ERR_INVALID, "model '%s': coupler between bodies %d and %d; expected two distinct bodies in [0, %d)",
            mname, c->body, c->master, m->nbody);
    return -1;
  }
  const kn_mb_body* bj = &m->bodies[c->body];
  const kn_mb_body* bm = &m->bodies[c->master];
  if (bj->nv != 1 || bm->nv != 1) {
    kn_fail(err, KN_ERR_INVALID,
            "model '%s': coupler joint '%s' (%s) mimics '%s' (%s); both must be 1-DoF (revolute, continuous, prismatic)",
            mname, bj->joint_name ? bj->joint_name : "(unnamed)", kn_joint_type_name(bj->jtype),
            bm->joint_name ? bm->joint_name : "(unnamed)", kn_joint_type_name(bm->jtype));
    return -1;
  }
  if (!isfinite(c->multiplier) || !isfinite(c->offset)) {
    kn_fail(err, KN_ERR_INVALID, "model '%s': coupler on joint '%s' has a non-finite multiplier or offset", mname,
            bj->joint_name ? bj->joint_name : "(unnamed)");
    return -1;
  }
  kn_mb_coupler* cs = realloc(m->couplers, (size_t)(m->ncoupler + 1) * sizeof *cs);
  if (!cs) {
    kn_fail(err, KN_ERR_NOMEM, "model '%s': out of memory adding a coupler", mname);
    return -1;
  }
  m->couplers = cs;
  cs[m->ncoupler] = *c;
  return m->ncoupler++;
}

/*---- attach ----*/

static char* prefixed(const char* prefix, const char* s) {
  if (!s) return NULL;
  if (!prefix) return kn_strdup(s);
  size_t a = strlen(prefix), b = strlen(s);
  char* r = malloc(a + b + 1);
  if (!r) return NULL;
  memcpy(r, prefix, a);
  memcpy(r + a, s, b + 1);
  return r;
}

/* drop bodies and couplers appended after (nbody, ncoupler), restoring the sizes */
static void truncate_model(kn_mb_model* m, int nbody, int ncoupler) {
  for (int i = nbody; i < m->nbody; i++) {
    m->nq -= m->bodies[i].nq;
    m->nv -= m->bodies[i].nv;
    free_body_strings(&m->bodies[i]);
  }
  m->nbody = nbody;
  m->ncoupler = ncoupler;
  reindex_names(m, nbody);
}

// (m, child, link, X_link_root, prefix) => m with child's bodies and couplers appended, child's
// root welded to `link` with its body frame at X_link_root (child's own root placement is
// replaced). All or nothing: on failure m is unchanged.
kn_status kn_mb_model_attach(kn_mb_model* m, const kn_mb_model* child, int link, const kn_pose* X_link_root,
                             const char* prefix, kn_error* err) {
  const char* mname = m->name ? m->name : "model";
  const char* cname = child->name ? child->name : "model";
  if (link < 0 || link >= m->nbody)
    return kn_fail(err, KN_ERR_INVALID, "attach '%s' to '%s': link %d is not a body (expected [0, %d))", cname, mname,
                   link, m->nbody);
  if (child->nbody == 0) return KN_OK;
  if (child->bodies[0].jtype != KN_JOINT_FIXED)
    return kn_fail(err, KN_ERR_INVALID, "attach '%s' to '%s': the child's root joint is %s; expected fixed", cname, mname,
                   kn_joint_type_name(child->bodies[0].jtype));
  int nbody0 = m->nbody, ncoupler0 = m->ncoupler;
  for (int i = 0; i < child->nbody; i++) {
    kn_mb_body b = child->bodies[i];
    b.name = prefixed(prefix, child->bodies[i].name);
    b.joint_name = prefixed(prefix, child->bodies[i].joint_name);
    if (i == 0) {
      b.parent = link;
      b.X_pj = *X_link_root;
    } else {
      b.parent = child->bodies[i].parent + nbody0;
    }
    int r = (b.name || !child->bodies[i].name) && (b.joint_name || !child->bodies[i].joint_name)
                ? kn_mb_add_body(m, &b, err)
                : (kn_fail(err, KN_ERR_NOMEM, "out of memory"), -1);
    free(b.name);
    free(b.joint_name);
    if (r < 0) {
      truncate_model(m, nbody0, ncoupler0);
      return kn_error_prefix(err, "attach '%s' to '%s': ", cname, mname);
    }
  }
  for (int c = 0; c < child->ncoupler; c++) {
    kn_mb_coupler cp = child->couplers[c];
    cp.body += nbody0;
    cp.master += nbody0;
    if (kn_mb_add_coupler(m, &cp, err) < 0) {
      truncate_model(m, nbody0, ncoupler0);
      return kn_error_prefix(err, "attach '%s' to '%s': ", cname, mname);
    }
  }
  return KN_OK;
}

/*---- look-ups ----*/

// (m, name) => body index or -1, in constant time (the model's name map)
int kn_mb_find_body(const kn_mb_model* m, const char* name) {
  int i = kn_name_map_get(&m->body_names, name);
  return i >= 0 && i < m->nbody ? i : -1;
}

// (m, joint name) => index of the body whose inboard joint it is, or -1, in constant time
int kn_mb_find_joint(const kn_mb_model* m, const char* name) {
  int i = kn_name_map_get(&m->joint_names, name);
  return i >= 0 && i < m->nbody ? i : -1;
}

// (m) => sum of body masses
double kn_mb_total_mass(const kn_mb_model* m) {
  double s = 0;
  for (int i = 0; i < m->nbody; i++) s += m->bodies[i].mass;
  return s;
}

// (m) => q with zeros and identity quaternions
void kn_mb_neutral_q(const kn_mb_model* m, double* q) {
  for (int k = 0; k < m->nq; k++) q[k] = 0;
  for (int i = 0; i < m->nbody; i++)
    if (m->bodies[i].jtype == KN_JOINT_FLOATING) q[m->bodies[i].q_adr + 3] = 1;
}
