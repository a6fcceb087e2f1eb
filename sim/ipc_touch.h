/* The ipc backend's touching start (issue 20): a pair placed touching (phi <= 0 within round-off)
 * cannot start a barrier at distance 0, so its barrier's zero is moved below it by a shift s (the
 * barrier's distance is d = phi + s). The shift is kept per pair from step to step (keyed by the
 * two sides and, for a collider side, B's point in its body frame: the pair found again within
 * KN_STICTION_MATCH_RADIUS), so the barrier's zero stays where it was put instead of jumping back
 * up to 0 once the body rose (the lift that kicked it: issue 20). It is then removed over
 * T = sqrt(600 s0 / g0) (g0 = 9.81 m/s^2 as the acceleration scale) by a smoothstep, s = s0 (1 -
 * 3 u^2 + 2 u^3), u = age / T, whose largest lift acceleration 6 s0 / T^2 is 1 % of g0, so the
 * normal force, and the lagged friction that reads it, stays within about 1 % of the load; a step
 * never removes more than a tenth of the pair's barrier distance at its start. */
#ifndef KNEAD_SIM_IPC_TOUCH_H
#define KNEAD_SIM_IPC_TOUCH_H

#include "common/common.h"
#include "contact/contact.h"
#include "sim/backend.h"

typedef struct {
  int key[6];   /* (kind, body, point[0]) of side A, then of side B */
  double p[3];  /* B's point in B's body frame (colliders), or the contact point (deformables) */
  double s0, age; /* the shift at the start, and the time [s] since it */
} kn_ipc_touch_pair;

typedef struct {
  kn_ipc_touch_pair *prev, *cur; /* the last step's shifted pairs; this step's, one per candidate */
  int nprev, cap_prev, cap_cur;
} kn_ipc_touch;

kn_status kn_ipc_touch_reserve(kn_ipc_touch* t, int n, kn_error* err);
/* candidate i (its sides, gap phi0 at the step start, B's point pb) of a step of dt, dhat, the
 * round-off tolerance tol => its shift (0 for a pair that starts separated and was not shifted),
 * recorded as cur[i]; *fresh = 1 when the pair starts touching this step (its shift just set);
 * *s_lag the last step's shift (this one's for a new pair): the lagged friction reads the normal force
 * at phi0 + s_lag, the force the body ended the last step with, so the removal's rise of the
 * barrier force within a step (steep near dhat, where a light body rests) is not fed into friction */
double kn_ipc_touch_shift(kn_ipc_touch* t, int i, const kn_contact_side* a, const kn_contact_side* b, double phi0,
                          const double pb[3], double dt, double dhat, double tol, int* fresh, double* s_lag);
/* after a successful step of n candidates: the pairs still shifted become the next step's */
void kn_ipc_touch_commit(kn_ipc_touch* t, int n);
void kn_ipc_touch_free(kn_ipc_touch* t);
/* saved states: the kept shifts (all or nothing on load) */
void kn_ipc_touch_save(const kn_ipc_touch* t, kn_state_out* out);
kn_status kn_ipc_touch_load(kn_ipc_touch* t, kn_state_in* in, kn_error* err);

#endif
