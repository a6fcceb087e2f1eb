/* The penalty backend's continuous mode in mixed scenes (contact.penalty.continuous: true): pairs of
 * triangle surfaces (box and mesh colliders, FEM boundaries) go through the continuous pairs, every
 * other detection candidate (a sphere, cylinder, capsule or half-space collider on either side, MPM
 * particles) through the discrete springs, in one Newton solve; no pair of bodies through both.
 *   rest   a 0.1 m cube (0.1 kg) and a 0.1 m ball (0.1 kg) dropped side by side from 1 cm onto a
 *          fixed box plate: the cube rests on its four corner pairs at m g / (4 k) = 2.4525e-5 m
 *          depth, the ball on one spring at m g / k = 9.81e-5 m (twice as deep, or half, would be a
 *          pair counted twice or missed), both to 1e-9 m (Newton's 1e-8 m/s times dt, far below).
 *   grasps the regression suite's rigid 500 g box (arm links are cylinders and capsules: springs;
 *          pads and box: pairs) and FEM soft cube with the continuous mode set: every check but
 *          SAP's golden trajectory passes (lifted, held through the shake, squeezed, no deep
 *          penetration, Newton converged); and examples/grasp_box.yaml (no checks in the file):
 *          test_grasp.c's criteria, the box lifted >= 0.2 m by the shake and drifting < 5 mm in
 *          the palm's frame through it.
 *   MPM    a 64-particle MPM cube on a box plate: springs only, the discrete run bit for bit.
 * ~4 s in all in Release at the continuous mode's former k 1e4; at the default 1e5 about 9.5 s of CPU
 * (measured under load: the FEM grasp takes 4073 Newton iterations over its 380 steps, 1864 at 1e4),
 * so roughly 2x that under the sanitizers' former 15 s. */
#include "multibody/multibody.h"
#include "scene_util.h"

Test(penalty_cpf_mixed, cube_on_pairs_and_ball_on_a_spring_rest) {
  const double g = 9.81, m = 0.1, k = 1e5, plate_top = 0.001; /* the default k */
  const char* yaml = "time_step: 0.01\nduration: 2\ngravity: [0, 0, -9.81]\n"
                     "contact: {backend: penalty, penalty: {continuous: true}}\n"
                     "objects:\n"
                     "  - {name: plate, shape: {box: [1, 1, 0.002]}, fixed: true}\n"
                     "  - {name: cube, shape: {box: [0.1, 0.1, 0.1]}, density: 100, pose: {xyz: [0.013, 0.021, 0.061]}}\n"
                     "  - {name: ball, shape: {sphere: 0.05}, mass: 0.1, pose: {xyz: [0.3, 0.1, 0.061]}}\n";
  test_world t = tw_create(yaml);
  tw_step(&t, 200);
  const double *qc = tw_object_q(&t, "cube"), *qb = tw_object_q(&t, "ball");
  double dc = plate_top + 0.05 - qc[2], db = plate_top + 0.05 - qb[2];
  cr_log_info("mixed rest: cube depth %.10e m (m g / 4k %.10e), ball depth %.10e m (m g / k %.10e)", dc,
              m * g / (4 * k), db, m * g / k);
  cr_expect(fabs(dc - m * g / (4 * k)) < 1e-9, "cube on its four corner pairs: depth %.10e", dc);
  cr_expect(fabs(db - m * g / k) < 1e-9, "ball on one spring: depth %.10e", db);
  tw_free(&t);
}

// (file of examples/regression) => a world of it on penalty's continuous mode, checks attached
static test_world continuous_regression(const char* file) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/regression/%s", KNEAD_SOURCE_DIR, file);
  const char* set[] = {"contact.backend=penalty", "contact.penalty.continuous=true"};
  test_world t = {0};
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_with(path, set, 2, &t.scene, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(t.scene, &t.world, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_checks_attach(t.world, &err), KN_OK, "%s", err.msg);
  return t;
}

static void grasp_passes(const char* file) {
  test_world t = continuous_regression(file);
  tw_step(&t, lround(t.scene->duration / t.scene->time_step));
  tw_expect_checks_pass(&t, file, 5);
  tw_free(&t);
}

Test(penalty_cpf_mixed, rigid_box_grasp_checks_pass) { grasp_passes("box_50mm_500g.yaml"); }
Test(penalty_cpf_mixed, fem_soft_cube_grasp_checks_pass) { grasp_passes("soft_cube_coarse.yaml"); }

/* examples/grasp_box.yaml on the continuous mode: test_grasp.c's criteria for SAP */
Test(penalty_cpf_mixed, grasp_box_example_lifts_and_holds) {
  const char* set[] = {"contact.backend=penalty", "contact.penalty.continuous=true"};
  test_world t = {0};
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_with(KNEAD_SOURCE_DIR "/examples/grasp_box.yaml", set, 2, &t.scene, &err), KN_OK, "%s",
               err.msg);
  cr_assert_eq(kn_world_create(t.scene, &t.world, &err), KN_OK, "%s", err.msg);
  kn_world* w = t.world;
  const kn_mb_model* m = w->trees[0].robot->model;
  int palm = kn_mb_find_body(m, "gripper_palm");
  const kn_sequence* seq = w->trees[0].ctrls[0]->seq;
  int ishake = kn_seq_find_phase(seq, "shake"), iend = kn_seq_find_phase(seq, "shake_end");
  cr_assert(palm >= 0 && ishake >= 0 && iend > ishake);
  double t_shake = seq->phases[ishake].t_start, t_end = seq->phases[iend].t_start + seq->phases[iend].duration;
  kn_mb_data* d = kn_mb_data_create(m);
  double *qbox = tw_object_q(&t, "box"), z0 = qbox[2], lift = 0, drift = 0, rel0[3] = {0, 0, 0};
  long n = kn_world_total_steps(w);
  for (long k = 0; k < n; k++) {
    tw_step(&t, 1);
    if (w->t < t_shake - 0.5 * w->scene->time_step || w->t > t_end + 1e-9) continue;
    kn_mb_kinematics(m, w->trees[0].q, NULL, d);
    const kn_pose* X = &d->X_wb[palm];
    double r[3] = {qbox[0] - X->p[0], qbox[1] - X->p[1], qbox[2] - X->p[2]}, rel[3];
    for (int a = 0; a < 3; a++) rel[a] = X->R[a] * r[0] + X->R[3 + a] * r[1] + X->R[6 + a] * r[2];
    if (fabs(w->t - t_shake) < 0.5 * w->scene->time_step) {
      memcpy(rel0, rel, sizeof rel0);
      lift = qbox[2] - z0;
    }
    drift = fmax(drift, sqrt(pow(rel[0] - rel0[0], 2) + pow(rel[1] - rel0[1], 2) + pow(rel[2] - rel0[2], 2)));
  }
  cr_log_info("grasp_box, continuous: lifted %.4f m, drift in the palm frame through the shake %.3e m", lift, drift);
  cr_expect(lift >= 0.2, "box lifted %.4f m, expected >= 0.2 m", lift);
  cr_expect(drift < 5e-3, "box drifted %.3e m in the palm's frame, expected < 5 mm", drift);
  kn_mb_data_free(d);
  tw_free(&t);
}

/* an MPM cube (64 particles) dropped from 1 cm on a box plate 0.2 m thick: its particles have no surface, so every contact
 * is a spring and the continuous mode's run is the discrete one's bit for bit (pairs counted twice
 * or dropped would change it). Default keys: both modes' k 1e5 N/m (scene.h) */
Test(penalty_cpf_mixed, mpm_particles_keep_their_springs) {
  double c[2][3];
  for (int mode = 0; mode < 2; mode++) {
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "time_step: 0.01\nduration: 0.3\ngravity: [0, 0, -9.81]\n"
             "contact: {backend: penalty, penalty: {continuous: %s}}\n"
             "objects:\n  - {name: plate, shape: {box: [1, 1, 0.2]}, fixed: true, pose: {xyz: [0, 0, -0.1]}}\n"
             "deformables:\n  - name: dough\n    model: mpm\n    shape: {box: [0.2, 0.2, 0.2]}\n"
             "    resolution: 0.1\n    material: {type: linear_corotated, youngs_modulus: 1e3, poisson_ratio: 0.3,"
             " density: 1}\n    pose: {xyz: [0, 0, 0.11]}\n",
             mode ? "true" : "false");
    test_world t = tw_create(yaml);
    tw_step(&t, 30);
    kn_sim_mpm_centroid(&t.world->mpms[0], c[mode]);
    tw_free(&t);
  }
  cr_log_info("MPM cube on a plate: centroid z %.17g (discrete), %.17g (continuous)", c[0][2], c[1][2]);
  /* landed (from 1 cm) and held by the plate (top at 0): the centroid near the half-height 0.1 */
  cr_expect(c[0][2] < 0.11 - 1e-3 && c[0][2] > 0.05, "on the plate: z %.6f", c[0][2]);
  for (int k = 0; k < 3; k++) cr_expect_eq(c[0][k], c[1][k], "centroid[%d]: %.17g against %.17g", k, c[1][k], c[0][k]);
}
