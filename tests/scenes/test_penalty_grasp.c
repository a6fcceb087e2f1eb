/* The penalty backend on a robot grasp, with its defaults: the regression suite's 500 g box, picked
 * by the PD-driven arm and its two-finger gripper (mimic coupler, effort limit) and shaken, loaded
 * with --set contact.backend=penalty. Every check of the scene but SAP's golden trajectory must pass
 * (lifted above 0.15 m, held within 5 mm during the shake, squeezed with 10-40 N, no deep
 * penetration, Newton within its iteration limit).
 *
 * And the anchors' point (digest 000 §1, §3.6): a sticking contact cannot creep. The box's slip
 * along the palm over the shake is the change of its pose in the palm's frame between rest before
 * the shake and rest after it (the settle phase lengthened to 1.2 s and the hold to 2.35 s, so the
 * arm is at rest at the same pose both times and the springs' elastic give cancels). Issue 19 asks
 * for at most a tenth of SAP's creep, quoted as ~1.8 mm/s; SAP with its stiction anchors
 * (sim/stiction.c) now measures zero on this scene too (below 1e-10 m), so the test asserts the
 * digest's bound for static friction instead (§6.3: below 1e-6 m), which is below that tenth
 * (0.18 mm/s over the 1.25 s shake) by five orders, and logs SAP's slip beside it. */
#include <unistd.h>

#include "multibody/multibody.h"
#include "scene_util.h"

typedef struct {
  double creep;  /* |p_LO(t1) - p_LO(t0)| [m] */
  double p0[3], p1[3];
  double step_time; /* mean wall time per step [s] */
  int failed_checks;
} grasp_run;

// the box's position (box_tree < 0: the FEM body's centroid) in the palm's frame
static void box_in_palm(kn_world* w, kn_mb_data* d, int tree, int palm, int box_tree, double p[3]) {
  kn_mb_kinematics(w->trees[tree].robot->model, w->trees[tree].q, NULL, d);
  const kn_pose* X = &d->X_wb[palm];
  double q[3];
  if (box_tree >= 0) memcpy(q, w->trees[box_tree].q, sizeof q);
  else kn_sim_deformable_centroid(&w->fems[0], q);
  double r[3] = {q[0] - X->p[0], q[1] - X->p[1], q[2] - X->p[2]};
  for (int k = 0; k < 3; k++) p[k] = X->R[k] * r[0] + X->R[3 + k] * r[1] + X->R[6 + k] * r[2];
}

/* The regression scene, or "box_50mm_500g_mesh": box_50mm_500g with its box replaced by bullet3's
 * cube.obj scaled to the same 5 cm (examples/bench/grasp_mesh_cube.yaml's object, read from
 * ../shared/models next to the checkout), so that the pads-box and box-floor contacts have a mesh
 * side; NULL scene and KN_OK when that file is absent */
static const char* cube_obj = KNEAD_SOURCE_DIR "/../shared/models/bullet3/data/cube.obj";
static kn_status load_scene(const char* scene, const char* const* set, int nset, kn_scene** sc, kn_error* err) {
  char path[512];
  int mesh = strcmp(scene, "box_50mm_500g_mesh") == 0;
  snprintf(path, sizeof path, "%s/examples/regression/%s.yaml", KNEAD_SOURCE_DIR, mesh ? "box_50mm_500g" : scene);
  if (!mesh) return kn_scene_load_with(path, set, nset, sc, err);
  char *text = NULL, yaml[8192];
  size_t len = 0;
  kn_status st = kn_file_read(path, "scene", &text, &len, err);
  if (st) return st;
  const char *box = "shape: {box: [0.05, 0.05, 0.05]}", *at = strstr(text, box);
  cr_assert(at, "%s: no %s", path, box);
  snprintf(yaml, sizeof yaml, "%.*sshape: {mesh: %s, scale: [0.05, 0.05, 0.05]}%s", (int)(at - text), text, cube_obj,
           at + strlen(box));
  free(text);
  return kn_scene_load_string_with(yaml, strlen(yaml), path, set, nset, sc, err);
}

// (scene of examples/regression, backend, rest: lengthen the settle and the hold, times t0, t1 to
// take the object's position at)
static grasp_run grasp(const char* scene, const char* backend, int rest, double t0, double t1) {
  char set0[64];
  snprintf(set0, sizeof set0, "contact.backend=%s", backend);
  const char* set[] = {set0, "duration=6", "robots[0].controller.sequence[3].duration=1.2"};
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(load_scene(scene, set, rest ? 3 : 1, &sc, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(sc, &w, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_checks_attach(w, &err), KN_OK, "%s", err.msg);
  int arm = -1, box = -1;
  for (int r = 0; r < w->nrobot; r++)
    if (strcmp(w->robots[r].name, "gripper") == 0) arm = w->robots[r].tree;
  for (int o = 0; o < w->nobject; o++)
    if (strcmp(w->objects[o].name, "box") == 0) box = w->objects[o].tree;
  cr_assert(arm >= 0 && (box >= 0 || w->nfem == 1));
  const kn_mb_model* m = w->trees[arm].robot->model;
  int palm = kn_mb_find_body(m, "gripper_palm");
  cr_assert(palm >= 0, "no body gripper_palm");
  kn_mb_data* d = kn_mb_data_create(m);
  grasp_run g = {0};
  long steps = lround(sc->duration / sc->time_step), k0 = lround(t0 / sc->time_step), k1 = lround(t1 / sc->time_step);
  double start = kn_wall_time();
  for (long k = 0; k < steps; k++) {
    if (k == k0) box_in_palm(w, d, arm, palm, box, g.p0);
    if (k == k1) box_in_palm(w, d, arm, palm, box, g.p1);
    cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s, step %ld: %s", backend, k, err.msg);
  }
  g.step_time = (kn_wall_time() - start) / (double)steps;
  double dp[3] = {g.p1[0] - g.p0[0], g.p1[1] - g.p0[1], g.p1[2] - g.p0[2]};
  g.creep = sqrt(dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2]);
  int n = 0;
  const kn_check_result* r = kn_world_checks(w, &n);
  cr_assert(n >= 4, "%d checks", n);
  for (int i = 0; i < n; i++) {
    cr_log_info("%s: %s: %s %s", backend, r[i].name, r[i].passed ? "PASS" : "FAIL", r[i].message);
    g.failed_checks += !r[i].passed;
  }
  kn_mb_data_free(d);
  kn_world_free(w);
  kn_scene_free(sc);
  return g;
}

Test(penalty, grasp_lift_shake_and_no_creep) {
  grasp_run pen = grasp("box_50mm_500g", "penalty", 0, 0, 0);
  cr_expect_eq(pen.failed_checks, 0, "%d of the scene's checks failed on penalty", pen.failed_checks);
  /* rest: the shake moves to 3.4-4.4 s, back at the lift pose by 4.65 s, at rest from ~5 s */
  const double t0 = 3.39, t1 = 5.99;
  grasp_run pr = grasp("box_50mm_500g", "penalty", 1, t0, t1), sr = grasp("box_50mm_500g", "sap", 1, t0, t1);
  cr_log_info("box slip along the palm from rest before the shake to rest after it: penalty %.3g mm, sap %.3g mm; "
              "%.3f ms/step penalty, %.3f ms/step sap",
              1e3 * pr.creep, 1e3 * sr.creep, 1e3 * pr.step_time, 1e3 * sr.step_time);
  cr_expect(pr.creep <= 1e-6, "penalty slipped %.3g mm along the palm over the shake", 1e3 * pr.creep);
  cr_expect(pr.creep <= 0.1 * 1.8e-3 * 1.25, "above a tenth of the issue's SAP creep (1.8 mm/s over 1.25 s)");
}

/* The FEM soft cube's grasp (regression soft_cube_coarse: pads against a 5 cm FEM cube of 50 kPa):
 * its checks pass on penalty, and there SAP does creep (its stiction anchors hold the cube's
 * vertices on the pads, not the pads' corner points in the cube's faces): 0.7 mm over the shake and
 * ~0.01 mm/s on after it, measured rest to rest as above. penalty's slip must be below a tenth of
 * SAP's (measured: 1.8e-8 mm against 0.73 mm). */
Test(penalty, fem_grasp_no_creep_where_sap_creeps) {
  grasp_run pen = grasp("soft_cube_coarse", "penalty", 0, 0, 0);
  cr_expect_eq(pen.failed_checks, 0, "%d of the scene's checks failed on penalty", pen.failed_checks);
  const double t0 = 3.39, t1 = 5.99;
  grasp_run pr = grasp("soft_cube_coarse", "penalty", 1, t0, t1), sr = grasp("soft_cube_coarse", "sap", 1, t0, t1);
  cr_log_info("FEM cube's slip along the palm from rest before the shake to rest after it: penalty %.3g mm, sap %.3g mm; "
              "%.3f ms/step penalty, %.3f ms/step sap",
              1e3 * pr.creep, 1e3 * sr.creep, 1e3 * pr.step_time, 1e3 * sr.step_time);
  cr_expect(sr.creep > 1e-4, "SAP was expected to creep here (%.3g mm)", 1e3 * sr.creep);
  cr_expect(pr.creep <= 0.1 * sr.creep, "penalty slipped %.3g mm, sap %.3g mm", 1e3 * pr.creep, 1e3 * sr.creep);
}

/* The same grasp of a triangle-mesh box (issue 19: the pads' and the floor's anchors relaxed over
 * the cube's faces by the state machine of §3.5, the cube being side A or B of its contacts): every
 * check of box_50mm_500g but SAP's golden trajectory passes, and a sticking grasp does not creep
 * (as the primitive box's, below 1e-6 m rest to rest over the shake). Measured: squeeze 19.1 N,
 * drift during the shake 0.087 mm, at most 10 Newton iterations a step; slip 2.6e-12 m. */
Test(penalty, mesh_cube_grasp_passes_and_does_not_creep) {
  if (access(cube_obj, R_OK) != 0) cr_skip_test("%s is absent", cube_obj);
  grasp_run pen = grasp("box_50mm_500g_mesh", "penalty", 0, 0, 0);
  cr_expect_eq(pen.failed_checks, 0, "%d of the scene's checks failed on penalty", pen.failed_checks);
  grasp_run pr = grasp("box_50mm_500g_mesh", "penalty", 1, 3.39, 5.99);
  cr_log_info("mesh cube's slip along the palm from rest before the shake to rest after it: %.3g mm, %.3f ms/step",
              1e3 * pr.creep, 1e3 * pr.step_time);
  cr_expect(pr.creep <= 1e-6, "penalty slipped %.3g mm along the palm over the shake", 1e3 * pr.creep);
}
