/* Stiction anchors: a position-level correction of SAP's regularized stiction (ARCHITECTURE.md,
 * "Held grasps"). SAP's friction regularization R_t = sigma w lets a sticking contact slip at
 * |v_t| ~ R_t |gamma_t| (digest §2.1, eq. 31): 0.05 mm/s for the default scene's held box, which
 * falls after ~15 minutes. As the anchors of penalty-coulomb-friction.md (§3), each rigid-rigid
 * contact that sticks keeps its material point on both bodies (in their geometry frames); the next
 * step's contact found at that place gets the tangential bias v_hat_t = -d_t / (2 dt), d the
 * slip of B's anchor from A's since the contact began to stick, so the slip is pulled back instead
 * of summed. A contact that slides, separates or is not found again drops its anchor. The bias is
 * constant during the solve, so SAP's problem stays convex. */
#ifndef KNEAD_SIM_STICTION_H
#define KNEAD_SIM_STICTION_H

#include "common/common.h"
#include "contact/contact.h"

typedef struct {
  int a, b;           /* collider indices as detected (a < b) */
  double pa[3], pb[3]; /* the material point in a's and b's geometry frames */
  double mu;           /* the pair's friction */
  int sliding;         /* its impulse was on the friction cone */
} kn_stiction_anchor;

typedef struct {
  kn_stiction_anchor* prev; /* the last step's sticking contacts, sorted by (a, b) */
  kn_stiction_anchor* cur;  /* this step's contacts, one per contact index */
  unsigned char* taken;     /* prev[i] already matched this step */
  int nprev, ncur, cap_prev, cap_cur;
} kn_stiction;

/* how far (m) a contact point may be from the last step's anchor on B to continue it */
#define KN_STICTION_MATCH_RADIUS 1e-3
/* how far (m) a sliding contact's anchor trails its point */
#define KN_STICTION_SLIDE_SLIP 1e-6

/* start of a step with n contacts (detection order) => room for them, no anchor taken yet;
 * KN_ERR_NOMEM on failure */
kn_status kn_stiction_reserve(kn_stiction* s, int n, kn_error* err);
/* (contact k of this step: point cp, collider poses X_WG, dt) => its tangential bias v_hat_t in
 * the contact frame (0 for a new contact), and its anchor recorded as cur[k] */
void kn_stiction_bias(kn_stiction* s, int k, const kn_contact_point* cp, const kn_pose* X_WG, double dt,
                      double vhat_t[2]);
/* (this step's n contacts' impulses in the contact frame, gamma[3k .. 3k + 2]) => the anchors of
 * the contacts that stick (gamma_n > 0, |gamma_t| < mu gamma_n) become the next step's. Called
 * only after a successful step, so a failed step leaves the anchors as they were. */
void kn_stiction_commit(kn_stiction* s, int n, const double* gamma);
void kn_stiction_free(kn_stiction* s);

#endif
