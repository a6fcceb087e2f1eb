/* The penalty term on chosen pieces (penalty.h, kn_penalty_term_pieces; penalty-coulomb-friction.md
 * §7 item 4): the residual is piecewise smooth, its pieces a contact's activation (phi < 0) and its
 * stick/slip switch (|X - W| <= mu |phi|). Newton linearizes the piece the iterate is on; where the
 * root is on another piece and the line between does not cross the switch (a block coming to rest,
 * every contact sliding: W passes its anchor X at more than the cone's radius mu |phi|, 1e-9 m at k
 * 1e5), the direction of the sliding piece never reaches the sticking one and the steps shrink
 * without end (the MPM incline's stop, ARCHITECTURE "penalty"). The solver (nonlinear.h,
 * kn_nl_term.pieces) then takes Newton's step of chosen pieces continued to the iterate (a
 * primal-dual active-set step, as for a complementarity problem): first those of its full step
 * with every sliding contact sticking (on = 2), then those its last try landed on (on = 1). */
#include <string.h>

#include "penalty/penalty.h"

void kn_penalty_term_pieces(void* self, const double* v, int on) {
  kn_penalty_term* t = self;
  t->use_piece = 0;
  if (!on || !t->piece) return;
  kn_penalty_term_move(t, v);
  for (int i = 0; i < t->n; i++) {
    double Z[3], Y[3], f[3];
    t->piece[i] = t->c[i].fem ? KN_RELAX_INACTIVE : (unsigned char)kn_penalty_term_contact(t, i, v, Z, Y, f, NULL);
    if (on == 2 && t->piece[i] == KN_RELAX_DYNAMIC) t->piece[i] = KN_RELAX_STATIC;
  }
  t->use_piece = 1;
}

kn_relax_state kn_penalty_term_piece(const kn_penalty_term* t, int i, kn_relax_state natural, const double Z[3],
                                     double Y[3], double f[3], double dfdZ[9]) {
  const kn_penalty_contact* c = &t->c[i];
  kn_relax_state want = (kn_relax_state)t->piece[i];
  if (c->fem || c->mesh || want == natural || want == KN_RELAX_DYNAMIC) return natural;
  const double k = kn_penalty_contact_k(t, c);
  if (want == KN_RELAX_INACTIVE) {
    memcpy(Y, c->X, 3 * sizeof *Y);
    if (f) memset(f, 0, 3 * sizeof *f);
    if (dfdZ) memset(dfdZ, 0, 9 * sizeof *dfdZ);
    return KN_RELAX_INACTIVE;
  }
  /* sticking: the anchor stays, the spring k (X - Z) (with the normal part -k phi n) */
  memcpy(Y, c->X, 3 * sizeof *Y);
  if (f)
    for (int a = 0; a < 3; a++) f[a] = k * (c->X[a] - Z[a]);
  if (dfdZ)
    for (int a = 0; a < 9; a++) dfdZ[a] = a % 4 == 0 ? -k : 0.0;
  return KN_RELAX_STATIC;
}
