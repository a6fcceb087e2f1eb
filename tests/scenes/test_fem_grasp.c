/* Soft grasp through SAP (examples/soft_cube_grasp.yaml, run from the file with a coarser mesh):
 * knead_arm7 with the knead_gripper picks a soft 5 cm FEM cube (E 1e5 Pa, nu 0.4, 0.1 kg) off the
 * floor, lifts it 0.2 m and shakes it at 2 Hz, +-5 cm, at dt = 10 ms; every step must succeed.
 * Asserted (the bounds):
 *  - penetration: over the whole run, the most negative signed distance of the cube's surface
 *    vertices to the gripper's colliders (pads and palm, kn_collider_signed_distance at the state
 *    after each step) is > -2 mm;
 *  - the grasp really squeezes: some surface vertex is within 0.5 mm of each pad at the start of
 *    the lift, and the cube's centroid rises >= 0.2 m by the start of the shake;
 *  - no slip or drop: during the shake the centroid, in the palm frame, stays within 5 mm of where
 *    it was at the start of the shake, and it never falls below 0.14 m above its start (the
 *    shake's low pose is 0.05 m under the lift pose).
 * Resolution 1 cm (5 x 5 x 5 cells, 750 tets) keeps the test a few seconds under sanitizers; the
 * example uses 5 mm (6000 tets). */
#include <stdlib.h>

#include "fem_util.h"

#define SCENE KNEAD_SOURCE_DIR "/examples/soft_cube_grasp.yaml"

static char* read_text(const char* path) {
  FILE* f = fopen(path, "rb");
  cr_assert(f, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* s = malloc((size_t)n + 1);
  cr_assert(s && fread(s, 1, (size_t)n, f) == (size_t)n);
  s[n] = 0;
  fclose(f);
  return s;
}

/* (yaml, key text, replacement) => malloc'd copy with the one occurrence of key replaced */
static char* substitute(const char* yaml, const char* key, const char* with) {
  const char* at = strstr(yaml, key);
  cr_assert(at, "'%s' not in the scene", key);
  cr_assert(!strstr(at + 1, key), "'%s' appears twice in the scene", key);
  size_t n = strlen(yaml), nk = strlen(key), nw = strlen(with), pre = (size_t)(at - yaml);
  char* out = malloc(n - nk + nw + 1);
  cr_assert(out);
  memcpy(out, yaml, pre);
  memcpy(out + pre, with, nw);
  memcpy(out + pre + nw, at + nk, n - pre - nk + 1);
  return out;
}

// world point p => R_WP^T (p - p_WP)
static void in_frame(const kn_pose* X, const double p[3], double out[3]) {
  double r[3] = {p[0] - X->p[0], p[1] - X->p[1], p[2] - X->p[2]};
  for (int a = 0; a < 3; a++) out[a] = X->R[a] * r[0] + X->R[3 + a] * r[1] + X->R[6 + a] * r[2];
}

Test(fem_grasp, soft_cube_lifted_and_shaken_without_penetration) {
  char* text = read_text(SCENE);
  char* yaml = substitute(text, "resolution: 0.005", "resolution: 0.01");
  free(text);
  test_world t = {0};
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), SCENE, &t.scene, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(t.scene, &t.world, &err), KN_OK, "%s", err.msg);
  kn_world* w = t.world;
  cr_assert_eq(w->nfem, 1);
  const kn_world_fem* F = &w->fems[0];
  const kn_mb_model* m = w->trees[0].robot->model;
  int palm = kn_mb_find_body(m, "gripper_palm");
  cr_assert(palm >= 0, "no gripper_palm body in the arm's tree");
  /* the gripper's colliders (palm, two pads), on the arm's tree */
  int grip[8], ngrip = 0, pad[2] = {-1, -1};
  for (int i = 0; i < w->ncollider && ngrip < 8; i++)
    if (strncmp(w->colliders[i].name, "gripper/", 8) == 0) {
      if (strstr(w->colliders[i].name, "finger_left")) pad[0] = ngrip;
      if (strstr(w->colliders[i].name, "finger_right")) pad[1] = ngrip;
      grip[ngrip++] = i;
    }
  cr_assert(ngrip >= 3 && pad[0] >= 0 && pad[1] >= 0, "palm and both pads are colliders (%d found)", ngrip);
  const kn_sequence* seq = w->trees[0].ctrls[0]->seq;
  int ishake = kn_seq_find_phase(seq, "shake"), iend = kn_seq_find_phase(seq, "shake_end");
  int ilift = kn_seq_find_phase(seq, "lift");
  cr_assert(ishake >= 0 && iend > ishake && ilift >= 0, "phases lift, shake and shake_end");
  double t_lift = seq->phases[ilift].t_start, t_shake = seq->phases[ishake].t_start;
  double t_end = seq->phases[iend].t_start + seq->phases[iend].duration;
  kn_mb_data* d = kn_mb_data_create(m);
  double c0[3], c[3], rel0[3] = {0}, rel[3];
  kn_sim_deformable_centroid(F, c0);
  double worst = INFINITY, worst_floor = INFINITY, lift = 0, drift = 0, zmin_shake = INFINITY;
  double pad_gap[2] = {INFINITY, INFINITY};
  int shake_steps = 0, max_contacts = 0;
  long n = kn_world_total_steps(w);
  const double eps = 1e-9, h = 0.5 * w->scene->time_step;
  double t0 = kn_wall_time();
  for (long k = 0; k < n; k++) {
    cr_assert_eq(kn_world_step(w, &err), KN_OK, "step %ld: %s", k, err.msg);
    max_contacts = w->last.contacts > max_contacts ? w->last.contacts : max_contacts;
    kn_mb_kinematics(m, w->trees[0].q, NULL, d);
    kn_pose X_WG[8];
    for (int g = 0; g < ngrip; g++) kn_pose_mul(&d->X_wb[w->colliders[grip[g]].body], &w->colliders[grip[g]].c.X_bg, &X_WG[g]);
    double near_pad[2] = {INFINITY, INFINITY};
    for (int s = 0; s < F->nsurf_vert; s++) {
      const double* x = F->body->x + 3 * F->surf_vert[s];
      double grad[3];
      for (int g = 0; g < ngrip; g++) {
        double phi = kn_collider_signed_distance(w->collision, grip[g], &X_WG[g], x, grad);
        worst = fmin(worst, phi);
        if (g == pad[0]) near_pad[0] = fmin(near_pad[0], phi);
        if (g == pad[1]) near_pad[1] = fmin(near_pad[1], phi);
      }
      worst_floor = fmin(worst_floor, x[2]);
    }
    kn_sim_deformable_centroid(F, c);
    in_frame(&d->X_wb[palm], c, rel);
    if (fabs(w->t - t_lift) < h) pad_gap[0] = near_pad[0], pad_gap[1] = near_pad[1];
    if (fabs(w->t - t_shake) < h) {
      memcpy(rel0, rel, sizeof rel0);
      lift = c[2] - c0[2];
    } else if (w->t > t_shake + eps && w->t <= t_end + eps) {
      drift = fmax(drift, sqrt(pow(rel[0] - rel0[0], 2) + pow(rel[1] - rel0[1], 2) + pow(rel[2] - rel0[2], 2)));
      zmin_shake = fmin(zmin_shake, c[2] - c0[2]);
      shake_steps++;
    }
  }
  kn_sim_deformable_centroid(F, c);
  printf("fem grasp: %ld steps in %.2f s wall, %d vertices / %d tets; deepest vertex into the gripper %.3e m, into "
         "the floor %.3e m; pads' nearest vertices at the lift %.2e / %.2e m; centroid lifted %.4f m, lowest during "
         "the shake %.4f m above its start, drift in the palm frame %.3e m over %d steps; final centroid z %.4f; "
         "contacts max %d; SAP iterations max %d mean %.2f\n",
         n, kn_wall_time() - t0, F->body->mesh.nvert, F->body->mesh.ntet, worst, -worst_floor, pad_gap[0],
         pad_gap[1], lift, zmin_shake, drift, shake_steps, c[2], max_contacts, w->stats.max_iterations,
         (double)w->stats.iterations / (double)w->stats.steps);
  cr_expect_gt(worst, -2e-3, "a surface vertex went %.3e m into the gripper, expected < 2 mm", -worst);
  cr_expect_gt(worst_floor, -2e-3, "a surface vertex went %.3e m into the floor, expected < 2 mm", -worst_floor);
  cr_expect_lt(pad_gap[0], 5e-4, "left pad not touching the cube at the lift (nearest vertex %.3e m)", pad_gap[0]);
  cr_expect_lt(pad_gap[1], 5e-4, "right pad not touching the cube at the lift (nearest vertex %.3e m)", pad_gap[1]);
  cr_expect_eq(shake_steps, 200, "the shake lasts %d steps, expected 2 s / 0.01 s = 200", shake_steps);
  cr_expect_geq(lift, 0.2, "cube lifted %.4f m, expected >= 0.2 m", lift);
  cr_expect_lt(drift, 5e-3, "cube drifted %.3e m in the palm frame during the shake, expected < 5 mm", drift);
  cr_expect_gt(zmin_shake, 0.14, "cube centroid fell to %.4f m above its start during the shake", zmin_shake);
  kn_mb_data_free(d);
  tw_free(&t);
  free(yaml);
}
