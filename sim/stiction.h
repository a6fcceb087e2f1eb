/* Stiction anchors: a position-level correction of SAP's regularized stiction (ARCHITECTURE.md,
 * "Held grasps"). SAP's friction regularization R_t = sigma w lets a sticking contact slip at
 * |v_t| ~ R_t |gamma_t| / dt (digest §2.1, eq. 31): 0.05 mm/s for the default scene's held box,
 * which fell after 15 minutes. As the anchors of penalty-coulomb-friction.md (§3), a contact that
 * sticks keeps its material point on both sides; the next step's contact at that place gets the
 * tangential bias v_hat_t = -d_t / (2 dt), d the slip of B's point from A's since the contact began,
 * so the slip is pulled back (critically damped, as SAP's near-rigid holonomic constraints) instead
 * of summed. On the cone (sliding, or holding at the very edge mu = tan theta) the anchor is dragged
 * along, KN_STICTION_SLIDE_SLIP behind; a contact that separates or is not found again drops it.
 * The bias is constant during the solve, so SAP's problem stays convex.
 *
 * Two kinds of anchor:
 *   rigid-rigid contacts (kn_stiction): points on both colliders in their geometry frames, the
 *     next step's contact of the same pair nearest to B's point (within KN_STICTION_MATCH_RADIUS);
 *   a deformable's material point against a rigid collider (kn_stiction_keyed): an FEM vertex or an
 *     MPM particle is its own material point, identified by a key; the anchor is the point on the
 *     rigid side. */
#ifndef KNEAD_SIM_STICTION_H
#define KNEAD_SIM_STICTION_H

#include <stdint.h>

#include "common/common.h"
#include "contact/contact.h"

/* how far (m) a contact point may be from the last step's anchor on B to continue it */
#define KN_STICTION_MATCH_RADIUS 1e-3
/* how far (m) a sliding contact's anchor trails its point */
#define KN_STICTION_SLIDE_SLIP 1e-6

//---- rigid-rigid contacts ----

typedef struct {
  int a, b;            /* collider indices as detected (a < b) */
  double pa[3], pb[3]; /* the material point in a's and b's geometry frames */
  double mu;           /* the pair's friction */
  int sliding;         /* its impulse was on the friction cone */
} kn_stiction_anchor;

typedef struct {
  kn_stiction_anchor* prev; /* the last step's anchors, sorted by (a, b) */
  kn_stiction_anchor* cur;  /* this step's contacts, one per contact index */
  unsigned char* taken;     /* prev[i] already matched this step */
  int nprev, cap_prev, cap_cur, cap_taken;
} kn_stiction;

/* start of a step with n contacts (detection order, sorted by pair) => room for them, no anchor
 * taken yet; KN_ERR_NOMEM on failure */
kn_status kn_stiction_reserve(kn_stiction* s, int n, kn_error* err);
/* (contact k of this step: point cp, collider poses X_WG, dt) => its tangential bias v_hat_t in
 * the contact frame (0 for a new contact), and its anchor recorded as cur[k] */
void kn_stiction_bias(kn_stiction* s, int k, const kn_contact_point* cp, const kn_pose* X_WG, double dt,
                      double vhat_t[2]);
/* (this step's n contacts' impulses in the contact frame, gamma[3k .. 3k + 2]) => the anchors of
 * the contacts that press (gamma_n > 0) become the next step's, marked sliding when on the cone.
 * Called only after a successful step, so a failed step leaves the anchors as they were. */
void kn_stiction_commit(kn_stiction* s, int n, const double* gamma);
void kn_stiction_free(kn_stiction* s);

//---- a deformable's point against a rigid collider ----

typedef struct {
  uint64_t key;        /* kn_stiction_key; 0: no anchor */
  double p[3];         /* the anchor on the rigid side, in its geometry frame */
  double mu;
  int sliding;
} kn_stiction_point;

typedef struct {
  kn_stiction_point* prev; /* sorted by key */
  kn_stiction_point* cur;
  int nprev, cap_prev, cap_cur;
} kn_stiction_keyed;

/* (body, collider, vertex or particle index, all >= 0) => a key (nonzero, unique per triple for
 * body < 2^15, collider < 2^16, index < 2^32) */
uint64_t kn_stiction_key(int body, int collider, int index);
kn_status kn_stiction_keyed_reserve(kn_stiction_keyed* s, int n, kn_error* err);
/* (contact k: key (0 = none: no bias, nothing else read), the deformable point x, the rigid
 * collider's pose, whether the point is side B of the contact (v_c = R_WC^T (v_point - v_rigid))
 * or A, R_WC, mu, dt) => v_hat_t, and cur[k] */
void kn_stiction_keyed_bias(kn_stiction_keyed* s, int k, uint64_t key, const double x[3], const kn_pose* X_WG,
                            int point_is_b, const double R_WC[9], double mu, double dt, double vhat_t[2]);
/* as kn_stiction_commit */
void kn_stiction_keyed_commit(kn_stiction_keyed* s, int n, const double* gamma);
void kn_stiction_keyed_free(kn_stiction_keyed* s);

#endif
