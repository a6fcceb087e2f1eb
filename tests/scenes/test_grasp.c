/* Rigid grasp through SAP (examples/grasp_box.yaml, run from the file): knead_arm7 with the
 * knead_gripper picks a 0.5 kg, 5 cm cube off the floor, lifts it 0.2 m and shakes it at 2 Hz,
 * +-5 cm, at dt = 10 ms; every step must succeed (tw_step asserts each kn_world_step).
 *  - mu = 1 (pads and box): the box ends the lift >= 0.2 m above its start, and during the whole
 *    shake its position in the palm frame drifts < 5 mm from its value at the start of the shake.
 *    Expected by design: a 20 N squeeze (kp 2000 N/m x 0.01 m past contact) holds up to
 *    2 mu 10 N = 20 N of friction against at most m (g + a) = 9.7 N; what drift remains is the
 *    compliance of the regularized contacts and the stiction of SAP (slip velocity ~ 1e-4 m/s).
 *  - mu = 0.05 (the same file with the pads' and the box's friction substituted): 2 mu 10 N = 1 N
 *    of grip cannot carry the 4.9 N weight, so the box slides out during the lift and ends on the
 *    floor, more than 0.1 m below the palm's grasp point. */
#include <stdlib.h>

#include "scene_util.h"

#define SCENE KNEAD_SOURCE_DIR "/examples/grasp_box.yaml"

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

/* (yaml text) => a malloc'd copy with every "friction: 1.0" replaced by "friction: <mu>"; *count
 * says how many */
static char* substitute_friction(const char* yaml, const char* mu, int* count) {
  const char* key = "friction: 1.0";
  size_t nkey = strlen(key), n = 0;
  char* out = malloc(2 * strlen(yaml) + 1);
  cr_assert(out);
  *count = 0;
  for (const char* p = yaml; *p;) {
    if (strncmp(p, key, nkey) == 0) {
      n += (size_t)sprintf(out + n, "friction: %s", mu);
      p += nkey;
      (*count)++;
    } else {
      out[n++] = *p++;
    }
  }
  out[n] = 0;
  return out;
}

typedef struct {
  double z0;            /* box start height */
  double lift;          /* box height above its start at the start of the shake */
  double palm_lift;     /* the palm's rise from the grasp (end of "close") to the shake */
  double drift;         /* max |p_rel(t) - p_rel(shake start)| over the shake, palm frame */
  double z_end;         /* box height at the end */
  double rel_end;       /* |p_rel| at the end */
  int shake_steps;
} grasp_result;

/* box centre in the palm frame: R_WP^T (p_box - p_WP) */
static void box_in_palm(const kn_world* w, kn_mb_data* d, int palm, const double* qbox, double out[3]) {
  const kn_world_tree* tr = &w->trees[0];
  kn_mb_kinematics(tr->robot->model, tr->q, NULL, d);
  const kn_pose* X = &d->X_wb[palm];
  double r[3] = {qbox[0] - X->p[0], qbox[1] - X->p[1], qbox[2] - X->p[2]};
  for (int a = 0; a < 3; a++) out[a] = X->R[a] * r[0] + X->R[3 + a] * r[1] + X->R[6 + a] * r[2];
}

static grasp_result run_grasp(const char* yaml) {
  grasp_result res = {0};
  test_world t = {0};
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), SCENE, &t.scene, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(t.scene, &t.world, &err), KN_OK, "%s", err.msg);
  kn_world* w = t.world;
  const kn_mb_model* m = w->trees[0].robot->model;
  int palm = kn_mb_find_body(m, "gripper_palm");
  cr_assert(palm >= 0, "no gripper_palm body in the arm's tree");
  const kn_sequence* seq = w->trees[0].ctrls[0]->seq;
  cr_assert(seq, "the arm is driven by a sequence");
  int ishake = kn_seq_find_phase(seq, "shake"), iend = kn_seq_find_phase(seq, "shake_end");
  int iclose = kn_seq_find_phase(seq, "close");
  cr_assert(ishake >= 0 && iend > ishake && iclose >= 0, "phases close, shake and shake_end");
  double t_close = seq->phases[iclose].t_start + seq->phases[iclose].duration;
  double t_shake = seq->phases[ishake].t_start;
  double t_end = seq->phases[iend].t_start + seq->phases[iend].duration;
  kn_mb_data* d = kn_mb_data_create(m);
  double* qbox = tw_object_q(&t, "box");
  res.z0 = qbox[2];
  double rel0[3] = {0}, rel[3], palm_z_grasp = 0;
  long n = kn_world_total_steps(w);
  const double eps = 1e-9;
  for (long k = 0; k < n; k++) {
    tw_step(&t, 1);
    double tk = w->t;
    if (fabs(tk - t_close) < 0.5 * w->scene->time_step) {
      kn_mb_kinematics(m, w->trees[0].q, NULL, d);
      palm_z_grasp = d->X_wb[palm].p[2];
    }
    if (fabs(tk - t_shake) < 0.5 * w->scene->time_step) {
      box_in_palm(w, d, palm, qbox, rel0);
      res.lift = qbox[2] - res.z0;
      res.palm_lift = d->X_wb[palm].p[2] - palm_z_grasp;
    } else if (tk > t_shake + eps && tk <= t_end + eps) {
      box_in_palm(w, d, palm, qbox, rel);
      double dd = sqrt(pow(rel[0] - rel0[0], 2) + pow(rel[1] - rel0[1], 2) + pow(rel[2] - rel0[2], 2));
      res.drift = fmax(res.drift, dd);
      res.shake_steps++;
    }
  }
  box_in_palm(w, d, palm, qbox, rel);
  res.z_end = qbox[2];
  res.rel_end = sqrt(rel[0] * rel[0] + rel[1] * rel[1] + rel[2] * rel[2]);
  const kn_run_stats* rs = &w->stats;
  cr_log_info("grasp: SAP iterations max %d mean %.2f, line search max %d, contacts max %d, residual max %.2e",
              rs->max_iterations, (double)rs->iterations / (double)rs->steps, rs->max_line_search_iterations,
              rs->max_contacts, rs->max_residual);
  kn_mb_data_free(d);
  tw_free(&t);
  return res;
}

Test(grasp, box_lifted_and_held_through_the_shake) {
  char* yaml = read_text(SCENE);
  grasp_result r = run_grasp(yaml);
  free(yaml);
  cr_log_info("mu = 1: box lifted %.4f m (palm %.4f m), max drift in the palm frame during the shake %.3e m "
              "over %d steps; final height %.4f m",
              r.lift, r.palm_lift, r.drift, r.shake_steps, r.z_end);
  cr_expect(r.shake_steps == 200, "the shake lasts %d steps, expected 2 s / 0.01 s = 200", r.shake_steps);
  cr_expect(r.lift >= 0.2, "box lifted %.4f m above its start, expected >= 0.2 m", r.lift);
  cr_expect(r.drift < 5e-3, "box drifted %.3e m relative to the palm during the shake, expected < 5 mm", r.drift);
}

Test(grasp, low_friction_box_drops) {
  char* text = read_text(SCENE);
  int count = 0;
  char* yaml = substitute_friction(text, "0.05", &count);
  free(text);
  cr_assert_eq(count, 2, "pads and box friction in the scene: %d", count);
  grasp_result r = run_grasp(yaml);
  free(yaml);
  cr_log_info("mu = 0.05: box lifted %.4f m by the start of the shake, final height %.4f m, %.3f m from the palm",
              r.lift, r.z_end, r.rel_end);
  cr_expect(r.z_end < r.z0 + 0.01, "box ends at %.4f m, expected back on the floor (< %.4f m)", r.z_end,
            r.z0 + 0.01);
  cr_expect(r.rel_end > 0.1, "box ends %.3f m from the palm, expected > 0.1 m (lost from the gripper)", r.rel_end);
}

/* The embedded default scene (examples/default_scene.yaml) is this grasp: everything from the
 * scene's name on is grasp_box.yaml's, with only the name changed (so its outputs go to
 * out/default) and its last line, the output section, asking for the replay too (html: true). */
Test(grasp, default_scene_is_the_grasp) {
  char* g = read_text(SCENE);
  char* d = read_text(KNEAD_SOURCE_DIR "/examples/default_scene.yaml");
  const char *pg = strstr(g, "name: grasp_box\n"), *pd = strstr(d, "name: default\n");
  cr_assert(pg && pd, "name lines");
  pg += strlen("name: grasp_box\n"), pd += strlen("name: default\n");
  const char *og = strstr(pg, "output: {trajectory_rate: 100}\n"),
             *od = strstr(pd, "output: {trajectory_rate: 100, html: true}");
  cr_assert(og && od, "output lines");
  cr_expect_eq(og - pg, od - pd, "examples/default_scene.yaml differs from examples/grasp_box.yaml below the name");
  cr_expect_eq(strncmp(pg, pd, (size_t)(og - pg)), 0,
               "examples/default_scene.yaml differs from examples/grasp_box.yaml below the name");
  cr_expect_str_eq(og, "output: {trajectory_rate: 100}\n", "grasp_box.yaml's output section is its last line");
  cr_expect_eq(strchr(od, '\n') ? strchr(od, '\n')[1] : 1, 0, "default_scene.yaml's output section is its last line");
  free(g);
  free(d);
}
