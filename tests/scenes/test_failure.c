/* A failed SAP step is transactional and explains itself: with contact.solver.max_iterations = 1
 * a ball landing on the ground cannot converge; the step fails with KN_ERR_NUMERIC, the message
 * names the step, the stage and the worst constraint (the ball-ground contact), and the world
 * state hash is the same before and after the failed step. Also: the same on the nonlinear
 * backends, and deformables without a contact backend are a clear error at load. */
#include "scene_util.h"

/* (contact: section, the ball's start velocity [angular; linear], the stage and one of two names the
 * message must hold) => a ball landing with a 1-iteration solve fails within 50 steps,
 * transactionally; the message in *msg */
static void failed_landing(const char* contact, const char* velocity, const char* stage, const char* name1,
                           const char* name2, kn_error* msg) {
  char yaml[512];
  snprintf(yaml, sizeof yaml,
           "time_step: 0.01\ncontact: %s\nobjects:\n"
           "  - {name: ground, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
           "  - {name: ball, shape: {sphere: 0.1}, mass: 1, pose: {xyz: [0, 0, 0.12]}, velocity: %s}\n",
           contact, velocity);
  test_world t = tw_create(yaml);
  kn_error err = {0};
  kn_status st = KN_OK;
  long k = 0;
  uint64_t before = 0;
  for (; k < 50; k++) {
    before = kn_world_state_hash(t.world);
    st = kn_world_step(t.world, &err);
    if (st) break;
  }
  cr_assert_eq(st, KN_ERR_NUMERIC, "expected the 1-iteration solve to fail within 50 steps (status %d)", st);
  cr_log_info("failed at step %ld: %s", k + 1, err.msg);
  cr_expect_eq(kn_world_state_hash(t.world), before, "the failed step changed the state");
  cr_expect_eq(t.world->step, k);
  char want[64];
  snprintf(want, sizeof want, "step %ld", k + 1);
  cr_expect(strstr(err.msg, want), "no '%s' in: %s", want, err.msg);
  cr_expect(strstr(err.msg, stage), "no stage in: %s", err.msg);
  cr_expect(strstr(err.msg, name1) || strstr(err.msg, name2), "not named in: %s", err.msg);
  tw_free(&t);
  *msg = err;
}

static void expect_failed_landing(const char* contact, const char* stage, const char* name1, const char* name2) {
  kn_error err;
  failed_landing(contact, "[3, 0, 0, 1, 0, -2]", stage, name1, name2, &err);
}

/* A nonlinear backend's failed Newton solve also names its worst contact at the last iterate (the
 * formulation's describe_failure): the ball-ground pair, the point where detection found it (within
 * the 2 cm the ball starts above the ground), its gap (within 2 cm: the ball lands from 2 cm) and its
 * normal force, which pushes the ball up (> 0) and is at most the whole force. */
static void expect_worst_contact(const char* backend, const char* velocity, const char* keys) {
  char contact[192], stage[64];
  snprintf(contact, sizeof contact, "{backend: %s, solver: {max_iterations: 1}%s}", backend, keys);
  snprintf(stage, sizeof stage, "stage 2 (%s Newton solve", backend);
  kn_error err;
  failed_landing(contact, velocity, stage, "'ball'", "'ball'", &err);
  const char* w = strstr(err.msg, "worst contact: the contact between 'ground' and 'ball' at (");
  cr_assert(w, "no worst contact in: %s", err.msg);
  double x, y, z, gap, fn, fa;
  cr_assert_eq(sscanf(w, "worst contact: the contact between 'ground' and 'ball' at (%lf, %lf, %lf) m: gap %lf m, "
                         "normal force %lf N, |f| %lf N",
                      &x, &y, &z, &gap, &fn, &fa),
               6, "unparsed: %s", w);
  cr_expect(fabs(z) < 0.02, "contact point z %g m, expected at the ground", z);
  cr_expect(fabs(gap) < 0.02 && isfinite(gap), "gap %g m", gap);
  cr_expect(fn > 0 && fa >= fn * (1 - 1e-12), "normal force %g N, |f| %g N", fn, fa);
}

Test(failure, non_converging_solve_leaves_the_state_unchanged) {
  expect_failed_landing("{solver: {max_iterations: 1}}", "stage 2 (SAP solve", "contact between 'ground' and 'ball'",
                        "contact between 'ball' and 'ground'");
}

Test(failure, nan_state_fails_in_stage_1_and_is_restored) {
  const char* yaml =
      "time_step: 0.01\n"
      "objects:\n"
      "  - {name: ground, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true}\n"
      "  - {name: ball, shape: {sphere: 0.1}, mass: 1, pose: {xyz: [0, 0, 0.0999]}}\n";
  test_world t = tw_create(yaml);
  tw_step(&t, 3);
  t.world->trees[t.world->objects[1].tree].v[4] = NAN;
  uint64_t before = kn_world_state_hash(t.world);
  kn_error err = {0};
  cr_assert_neq(kn_world_step(t.world, &err), KN_OK);
  cr_log_info("%s", err.msg);
  cr_expect_eq(kn_world_state_hash(t.world), before);
  cr_expect(strstr(err.msg, "step 4") && strstr(err.msg, "'ball'"), "%s", err.msg);
  tw_free(&t);
}

/* every contact backend is built now; the one without contact refuses deformables at load */
Test(failure, deformables_without_a_contact_backend_are_refused_at_load) {
  const char* yaml = "contact: {backend: none}\ndeformables:\n  - {name: jelly, shape: {sphere: 0.1}}\n";
  kn_scene* s = NULL;
  kn_error err = {0};
  cr_expect_eq(kn_scene_load_string(yaml, strlen(yaml), "inline.yaml", &s, &err), KN_ERR_UNSUPPORTED);
  cr_expect(strstr(err.msg, "inline.yaml:3") && strstr(err.msg, "deformables[0]") &&
                strstr(err.msg, "need a contact backend (sap, smooth_friction, penalty or ipc)"),
            "%s", err.msg);
  cr_expect_null(s);
}

/* The same on the nonlinear backends' adapter (smooth_friction): one Newton iteration cannot bring
 * the landing ball's residual under its tolerance; the step fails with KN_ERR_NUMERIC naming the
 * step, the stage and the body of the worst DoF, and the state is as it was. */
Test(failure, smooth_friction_non_converging_step_leaves_the_state_unchanged) {
  expect_failed_landing("{backend: smooth_friction, solver: {max_iterations: 1}}", "stage 2 (smooth_friction Newton solve",
                        "'ball'", "'ball'");
  expect_worst_contact("smooth_friction", "[3, 0, 0, 1, 0, -2]", "");
}

/* The same on penalty and ipc (issue 20: a failure names the worst contact pair): one Newton
 * iteration cannot settle the landing, the step fails transactionally and the message names step,
 * stage and the ball-ground pair with its point, gap and force. ipc: the barrier, nonlinear, fails
 * at the first step. penalty: a spring is piecewise linear and its lagged passes (10, of one
 * iteration each here) settle the slow ball; a ball spinning at 30 rad/s and sliding at 5 m/s
 * (friction changing between sliding and sticking within the step) fails at step 28. That trigger
 * was found at k = 1e4 N/m, set here (the discrete default became 1e5 in issue 19, where the
 * one-iteration solve converges in each of the 50 steps: measured). */
Test(failure, penalty_non_converging_step_names_the_worst_contact) {
  expect_worst_contact("penalty", "[30, 0, 0, 5, 0, -5]", ", penalty: {stiffness: 1e4}");
}

Test(failure, ipc_non_converging_step_names_the_worst_contact) { expect_worst_contact("ipc", "[3, 0, 0, 1, 0, -2]", ""); }
