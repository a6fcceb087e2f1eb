/* The ipc backend's touching start (issue 20): a pair placed touching (phi <= 0 within round-off)
 * cannot start a barrier at distance 0, so its barrier's zero is moved below it by a shift s (the
 * barrier's distance is d = phi + s). The shift is kept for the pair's whole contact (keyed by the
 * two sides and, for a collider side, B's point in its body frame: the pair found again is the
 * nearest with the same sides) and forgotten once the pair separates beyond
 * dhat (phi0 >= dhat: no barrier force either way, so nothing jumps). It is never removed while the
 * pair touches: removing it lifts the body by up to dhat, and the lift's deceleration takes normal
 * force, and so lagged friction, off the load (a block at mu = tan theta slid at 6.4e-4 m/s after a
 * smoothstep removal). It only shrinks, within a step, where the pair would end below phi = 0
 * (nl_ipc.c: the step is solved again with the pair's shift moved to where its force was reached),
 * so the bodies never overlap beyond round-off (the universal criteria): a pair that started
 * touching rests at phi ~ 0, as placed, on a barrier whose zero lies up to dhat below it. */
#ifndef KNEAD_SIM_IPC_TOUCH_H
#define KNEAD_SIM_IPC_TOUCH_H

#include "common/common.h"
#include "contact/contact.h"
#include "sim/backend.h"

typedef struct {
  int key[6];  /* (kind, body, point[0]) of side A, then of side B */
  double p[3]; /* B's point in B's body frame (colliders), or the contact point (deformables) */
  double s;    /* the pair's shift */
} kn_ipc_touch_pair;

typedef struct {
  kn_ipc_touch_pair *prev, *cur; /* the last step's shifted pairs; this step's, one per candidate */
  int nprev, cap_prev, cap_cur;
} kn_ipc_touch;

kn_status kn_ipc_touch_reserve(kn_ipc_touch* t, int n, kn_error* err);
/* what a candidate's shift is */
enum {
  KN_IPC_TOUCH_NONE = 0, /* none: an ordinary pair */
  KN_IPC_TOUCH_FRESH,    /* a new pair that starts touching (|phi0| <= tol): dhat / 2 - phi0, settled */
  KN_IPC_TOUCH_KEPT,     /* a shifted pair found again within dhat: the last step's shift */
  KN_IPC_TOUCH_INSIDE    /* a new pair that starts inside (phi0 < -tol: MPM particles in a collider):
                            dhat / 2 - phi0 for this step only, not kept (pushed out) */
};
/* candidate i (its sides, gap phi0 at the step start, B's point pb) of a step, dhat, the round-off
 * tolerance tol => its shift, recorded as cur[i] when it is kept (FRESH, KEPT); *kind as above */
double kn_ipc_touch_shift(kn_ipc_touch* t, int i, const kn_contact_side* a, const kn_contact_side* b, double phi0,
                          const double pb[3], double dhat, double tol, int* kind);
/* after a successful step of n candidates: the pairs still shifted become the next step's */
void kn_ipc_touch_commit(kn_ipc_touch* t, int n);
void kn_ipc_touch_free(kn_ipc_touch* t);
/* saved states: the kept shifts (all or nothing on load; a state saved before the shifts were kept,
 * which ends before them, loads with none) */
void kn_ipc_touch_save(const kn_ipc_touch* t, kn_state_out* out);
kn_status kn_ipc_touch_load(kn_ipc_touch* t, kn_state_in* in, kn_error* err);

#endif
