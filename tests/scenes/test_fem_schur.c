/* The slope scene's step with the Schur complement on the contact vertices equals the step with
 * the full A handed to SAP as one dense clique (contact.solver.fem_schur: false), same R (digest
 * 6.2: the elimination is exact), to 1e-10 m/s; and the FEM state enters the state hash. */
#include "fem_util.h"

static void copy_state(kn_fem_body* to, const kn_fem_body* from) {
  memcpy(to->x, from->x, 3 * (size_t)from->mesh.nvert * sizeof(double));
  memcpy(to->v, from->v, 3 * (size_t)from->mesh.nvert * sizeof(double));
  memcpy(to->R0, from->R0, 9 * (size_t)from->mesh.ntet * sizeof(double));
}

Test(fem_schur, elimination_equals_full_clique_on_the_slope) {
  test_world h = tw_create(fem_slope_scene(1, 1.0));
  tw_step(&h, 40); /* 0.1 s: sliding into contact */
  /* the state at 0.1 s into two fresh worlds (so neither has stiction anchors, sim/stiction.h) */
  test_world a = tw_create(fem_slope_scene(1, 1.0)), b = tw_create(fem_slope_scene(0, 1.0));
  kn_fem_body *fa = a.world->fems[0].body, *fb = b.world->fems[0].body;
  copy_state(fa, h.world->fems[0].body);
  copy_state(fb, fa);
  tw_free(&h);
  tw_step(&a, 1);
  tw_step(&b, 1);
  double ev = 0, vmax = 0, ef = 0;
  for (int i = 0; i < 3 * fa->mesh.nvert; i++) ev = fmax(ev, fabs(fa->v[i] - fb->v[i])), vmax = fmax(vmax, fabs(fa->v[i]));
  for (int k = 0; k < 3; k++) ef = fmax(ef, fabs(a.world->fems[0].force[k] - b.world->fems[0].force[k]));
  printf("fem schur: one slope step, %d contacts: max |v| %.4g m/s, v difference %.2e m/s, force difference %.2e N\n",
         a.world->last.contacts, vmax, ev, ef);
  cr_assert_gt(a.world->last.contacts, 3);
  cr_assert_eq(a.world->last.contacts, b.world->last.contacts);
  cr_assert_lt(ev, 1e-10);
  cr_assert_lt(ef, 1e-8);
  /* the hash sees the FEM state */
  uint64_t h0 = kn_world_state_hash(a.world);
  fa->x[0] += 1e-9;
  cr_assert_neq(kn_world_state_hash(a.world), h0);
  tw_free(&a);
  tw_free(&b);
}
