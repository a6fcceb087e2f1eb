/* The penalty backend's continuous mode (contact.penalty.continuous: true; continuous-penalty-
 * forces.md §5.5 option 2, §7.5): mesh pairs found by CCD on the predictor path, their force and
 * Jacobian in the Newton solve. Default keys (k = 1e5 N/m per pair) unless a test says why. A 0.1 m
 * cube of 0.1 kg (density 100) over a fixed 1 x 1 m plate 2 mm thick, set off the plate's
 * diagonal so that no corner lands on a shared edge (a double pair, §8 item 15); dt 0.01 s.
 *   S-Fast   the cube fired down at 5 m/s: 5 cm a step, 25 times the plate's thickness. CCD finds
 *            the crossing inside the step and the cube comes to rest on top.
 *   S-Box    the cube dropped from 2 cm comes fully to rest (every velocity below 1e-9), its four
 *            corner pairs each carrying m g / 4: resting depth m g / (4 k) = 2.4525e-5 m exactly
 *            (on a level plate the normal forces alone hold it).
 *   S-Energy the mechanical energy (kinetic + gravity; the springs' energy left out, so the check is
 *            conservative while loaded) never exceeds its start, rigid and FEM (27-vertex cube).
 * And the ablation modes at rest, the refusals (epsilon_v not > 0, epsilon_v or ablation without
 * continuous) naming the key. */
#include <unistd.h>

#include "scene_util.h"

#include "multibody/multibody.h"

static const double plate_top = 0.001, half = 0.05, mass = 0.1, g = 9.81, k_default = 1e5;

typedef struct {
  double z_min, z_end, speed_end, e_start, e_max;
} drop_run;

static kn_world_tree* object_tree(test_world* t, const char* name) {
  for (int i = 0; i < t->world->nobject; i++)
    if (strcmp(t->world->objects[i].name, name) == 0) return &t->world->trees[t->world->objects[i].tree];
  cr_assert_fail("no object '%s'", name);
  return NULL;
}

static double tree_energy(kn_world_tree* tr) {
  const kn_mb_model* m = tr->robot->model;
  kn_mb_kinematics(m, tr->q, tr->v, tr->data);
  return kn_mb_kinetic_energy(m, tr->data) + kn_mb_potential_energy(m, tr->data);
}

// (contact section, the cube's centre height and downward speed, duration) => the rigid cube's run
static drop_run drop(const char* contact, double z0, double vz, double duration) {
  char yaml[1024];
  snprintf(yaml, sizeof yaml,
           "time_step: 0.01\nduration: %g\ngravity: [0, 0, %g]\ncontact: %s\n"
           "objects:\n"
           "  - {name: plate, shape: {box: [1, 1, 0.002]}, fixed: true}\n"
           "  - {name: cube, shape: {box: [0.1, 0.1, 0.1]}, density: 100, pose: {xyz: [0.013, 0.021, %.17g]},"
           " velocity: [0, 0, 0, 0, 0, %.17g]}\n",
           duration, -g, contact, z0, -vz);
  test_world t = tw_create(yaml);
  kn_world_tree* tr = object_tree(&t, "cube");
  drop_run r = {.z_min = tr->q[2], .e_start = tree_energy(tr)};
  r.e_max = r.e_start;
  long n = lround(duration / 0.01);
  for (long k = 0; k < n; k++) {
    tw_step(&t, 1);
    r.z_min = fmin(r.z_min, tr->q[2]);
    r.e_max = fmax(r.e_max, tree_energy(tr));
  }
  r.z_end = tr->q[2];
  for (int k = 0; k < 6; k++) r.speed_end = fmax(r.speed_end, fabs(tr->v[k]));
  tw_free(&t);
  return r;
}

static const char* cpf = "{backend: penalty, penalty: {continuous: true}}";

Test(penalty_continuous, s_fast_no_tunnelling) {
  /* 1.5 s: at k 1e4 the cube bounced off (its corners came back up through the plate: no pair forms
   * where a corner leaves a face, penalty_cpf.c) and landed again at 0.26 s; at the default 1e5 it
   * stops 0.26 mm into the plate and rests below 1e-9 m/s well before 1.5 s */
  drop_run r = drop(cpf, 0.08, 5, 1.5);
  cr_log_info("S-Fast: lowest bottom %.6f m, end %.10f m, speed %.3g", r.z_min - half, r.z_end, r.speed_end);
  /* rests on top: depth m g / (4 k) */
  cr_expect(fabs(r.z_end - (plate_top + half - mass * g / (4 * k_default))) < 1e-9, "rests on top: %.10f", r.z_end);
  cr_expect_lt(r.speed_end, 1e-9);
  /* at 1e4 the impact's depth (3.7 mm, about k d^2 / 2 (d0 + d) dt = m v per corner) passed the
   * plate's 2 mm and the pairs pushed it back; at the default 1e5 and with stiff pairs (1e6, set for
   * this) the cube's lowest point stays above the plate's bottom face */
  cr_expect_gt(r.z_min - half, -plate_top, "the cube's bottom reached %.6f", r.z_min - half);
  drop_run s = drop("{backend: penalty, penalty: {continuous: true, stiffness: 1e6}}", 0.08, 5, 1.0);
  cr_log_info("S-Fast k 1e6: lowest bottom %.6f m, end %.10f m", s.z_min - half, s.z_end);
  cr_expect_gt(s.z_min - half, -plate_top, "k 1e6: the cube's bottom reached %.6f", s.z_min - half);
  cr_expect_gt(s.z_end - half, 0, "k 1e6: ends on top");
  /* for the record: the discrete springs (continuous: false) with the detection's speculative reach */
  drop_run d = drop("{backend: penalty}", 0.08, 5, 1.0);
  cr_log_info("S-Fast discrete: lowest bottom %.6f m, end %.10f m", d.z_min - half, d.z_end);
}

Test(penalty_continuous, s_box_rest_and_energy) {
  drop_run r = drop(cpf, 0.071, 0, 2.0);
  cr_log_info("S-Box: end %.10f m, speed %.3g, E start %.9f max %.9f", r.z_end, r.speed_end, r.e_start, r.e_max);
  cr_expect(fabs(r.z_end - (plate_top + half - mass * g / (4 * k_default))) < 1e-9, "resting depth: %.10f", r.z_end);
  cr_expect_lt(r.speed_end, 1e-9);
  cr_expect_leq(r.e_max, r.e_start, "S-Energy: %.12f > %.12f", r.e_max, r.e_start);
  r = drop(cpf, 0.08, 5, 1.0);
  cr_expect_leq(r.e_max, r.e_start, "S-Energy (fast): %.12f > %.12f", r.e_max, r.e_start);
}

/* the ablation modes on the resting cube: pure translation, so L_k is exact (cpf_exact equal to
 * 1e-12) and the force at rest is k delta in every mode: the same resting depth */
Test(penalty_continuous, ablation_modes_rest) {
  const char* modes[3] = {"cpf_exact", "dpf_ccd", "dpf"};
  for (int i = 0; i < 3; i++) {
    char c[128];
    snprintf(c, sizeof c, "{backend: penalty, penalty: {continuous: true, ablation: %s}}", modes[i]);
    drop_run r = drop(c, 0.071, 0, 2.0);
    cr_log_info("%s: end %.10f m, speed %.3g, E max - start %.3g", modes[i], r.z_end, r.speed_end, r.e_max - r.e_start);
    cr_expect(fabs(r.z_end - (plate_top + half - mass * g / (4 * k_default))) < 1e-9, "%s: resting depth %.10f",
              modes[i], r.z_end);
    cr_expect_lt(r.speed_end, 1e-8, "%s", modes[i]);
  }
}

/* an FEM cube (27 vertices, one inside; E 1e6 Pa: stiff against the pairs) dropped from 2 cm: no energy gain,
 * at rest on its four bottom vertices */
Test(penalty_continuous, fem_cube_drop) {
  test_world t = tw_create("time_step: 0.01\ngravity: [0, 0, -9.81]\n"
                           "contact: {backend: penalty, penalty: {continuous: true}}\n"
                           "objects:\n  - {name: plate, shape: {box: [1, 1, 0.002]}, fixed: true}\n"
                           "deformables:\n  - name: cube\n    model: fem\n    shape: {box: [0.1, 0.1, 0.1]}\n"
                           "    resolution: 0.05\n"
                           "    material: {type: linear_corotated, youngs_modulus: 1e6, poisson_ratio: 0.3, density: 100}\n"
                           "    pose: {xyz: [0.013, 0.021, 0.071]}\n");
  const kn_fem_body* b = t.world->fems[0].body;
  int n = b->mesh.nvert;
  double e0 = 0, emax = -INFINITY;
  for (int s = 0; s <= 200; s++) {
    if (s) tw_step(&t, 1);
    double e = 0, zmin = INFINITY; /* kinetic + gravity of the lumped masses */
    for (int i = 0; i < n; i++) {
      double m = b->mass[i], *v = b->v + 3 * i;
      e += 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + m * g * b->x[3 * i + 2];
      zmin = fmin(zmin, b->x[3 * i + 2]);
    }
    if (s == 0) e0 = e;
    emax = fmax(emax, e);
    if (s == 200) {
      double vmax = 0;
      for (int i = 0; i < 3 * n; i++) vmax = fmax(vmax, fabs(b->v[i]));
      cr_log_info("FEM cube: E start %.9f max %.9f, lowest vertex %.8f, speed %.3g", e0, emax, zmin, vmax);
      cr_expect_lt(vmax, 1e-6, "at rest");
      cr_expect(zmin < plate_top && zmin > plate_top - 1e-3, "on the plate: %.8f", zmin);
    }
  }
  cr_expect_leq(emax, e0 + 1e-12, "S-Energy (FEM): %.12f > %.12f", emax, e0);
  tw_free(&t);
}

static void expect_refused(const char* yaml, const char* key, const char* what) {
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), "inline.yaml", &sc, &err), KN_OK, "%s", err.msg);
  kn_status st = kn_world_create(sc, &w, &err);
  cr_log_info("%s", err.msg);
  cr_expect_neq(st, KN_OK, "%s: refused", what);
  cr_expect(strstr(err.msg, key) != NULL, "%s: the message names %s: %s", what, key, err.msg);
  kn_world_free(w);
  kn_scene_free(sc);
}

Test(penalty_continuous, refusals_name_the_key) {
  expect_refused("time_step: 0.01\ncontact: {backend: penalty, penalty: {continuous: true, anchored: false, epsilon_v: 0}}\n"
                 "objects:\n  - {name: plate, shape: {box: [1, 1, 0.002]}, fixed: true}\n",
                 "contact.penalty.epsilon_v", "epsilon_v 0");
  expect_refused("time_step: 0.01\ncontact: {backend: penalty, penalty: {epsilon_v: 1e-4}}\n"
                 "objects:\n  - {name: plate, shape: {box: [1, 1, 0.002]}, fixed: true}\n",
                 "contact.penalty.epsilon_v", "epsilon_v without continuous");
  expect_refused("time_step: 0.01\ncontact: {backend: penalty, penalty: {ablation: dpf_ccd}}\n"
                 "objects:\n  - {name: plate, shape: {box: [1, 1, 0.002]}, fixed: true}\n",
                 "contact.penalty.ablation", "ablation without continuous");
  expect_refused("time_step: 0.01\ncontact: {backend: penalty, penalty: {anchored: true}}\n"
                 "objects:\n  - {name: plate, shape: {box: [1, 1, 0.002]}, fixed: true}\n",
                 "contact.penalty.anchored", "anchored without continuous");
  expect_refused("time_step: 0.01\ncontact: {backend: penalty, penalty: {continuous: true, epsilon_v: 1e-3}}\n"
                 "objects:\n  - {name: plate, shape: {box: [1, 1, 0.002]}, fixed: true}\n",
                 "contact.penalty.epsilon_v", "epsilon_v with the anchored friction");
}

/* a saved state keeps the carried pairs with their friction anchors: the resting cube saved at 0.5 s,
 * loaded into a fresh world and stepped 0.5 s more ends where the run without the round trip ends,
 * bit for bit in every coordinate (without the pairs it would sink through the plate: no new crossing
 * at rest; without the anchors it would slip back). Gravity has a sideways part, 0.5 m/s^2 along x,
 * set for this: the anchors then hold a load (stuck: 0.05 of m g_z against mu 0.5), and the cube
 * does not creep (x moves less than 1e-12 m over the last 0.5 s) */
Test(penalty_continuous, saved_state_keeps_pairs) {
  const char* yaml = "time_step: 0.01\ngravity: [0.5, 0, -9.81]\n"
                     "contact: {backend: penalty, penalty: {continuous: true}}\n"
                     "objects:\n  - {name: plate, shape: {box: [1, 1, 0.002]}, fixed: true}\n"
                     "  - {name: cube, shape: {box: [0.1, 0.1, 0.1]}, density: 100, pose: {xyz: [0.013, 0.021, 0.071]}}\n";
  char path[] = "/tmp/knead_cpf_stateXXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  close(fd);
  kn_error err = {0};
  test_world a = tw_create(yaml);
  tw_step(&a, 50);
  cr_assert_eq(kn_world_save_state(a.world, path, &err), KN_OK, "%s", err.msg);
  double x_saved = object_tree(&a, "cube")->q[0];
  tw_step(&a, 50);
  test_world b = tw_create(yaml);
  cr_assert_eq(kn_world_load_state(b.world, path, &err), KN_OK, "%s", err.msg);
  tw_step(&b, 50);
  const double *qa = object_tree(&a, "cube")->q, *qb = object_tree(&b, "cube")->q;
  double za = qa[2], zb = qb[2];
  cr_log_info("saved state: z %.12f, round trip %.12f; x moved %.3g m in 0.5 s", za, zb, qa[0] - x_saved);
  for (int k = 0; k < 7; k++) cr_expect_eq(qa[k], qb[k], "round trip q[%d]: %.17g against %.17g", k, qb[k], qa[k]);
  cr_expect(fabs(qa[0] - x_saved) < 1e-12, "held by its anchors: x moved %.3g m", qa[0] - x_saved);
  cr_expect(fabs(zb - (plate_top + half - mass * g / (4 * k_default))) < 1e-9, "still resting: %.10f", zb);
  unlink(path);
  tw_free(&a), tw_free(&b);
}

/* S-Stick, simplified (the paper's pivoting stick and ball are not built): the cube, turned like a
 * fixed stick (a 0.6 x 0.2 x 0.01 m board) tilted 20 degrees about x, moves straight down at 2 m/s onto
 * its top face; no gravity, so the velocity after the impact is the impact's alone. The impulse is
 * along the crossed face's normal n = (0, -sin 20, cos 20), not along the motion: the tangential
 * velocity is kept, the normal one reversed with a restitution 0 < e <= 1: the cube leaves the face
 * and moves away down the slope (upward too only if e > tan^2 20 = 0.13: e was 0.29 at k 1e4 with the
 * path's mean force; 0.036 at the default k 1e5 with the implicit step's weighted one,
 * kn_cpf_impulse_jacobian: backward Euler's damping of a stiff spring). The test is about the normal force's
 * direction: friction 0 on both bodies (set for this; with the default 0.5 the pairs' friction,
 * penalty/cpf_friction.c, takes part of the tangential velocity). */
Test(penalty_continuous, s_stick_rebound_along_face_normal) {
  const double th = 20 * M_PI / 180, c = cos(th), s = sin(th), v = 2, lz = 0.005 + 0.025 + 0.01;
  double ctr[3] = {0.013, 0.041 * c - lz * s, 0.041 * s + lz * c}; /* R_x(th) (0.013, 0.041, lz) */
  char yaml[1024];
  snprintf(yaml, sizeof yaml,
           "time_step: 0.01\ngravity: [0, 0, 0]\ncontact: {backend: penalty, penalty: {continuous: true}}\n"
           "objects:\n  - {name: stick, shape: {box: [0.6, 0.2, 0.01]}, fixed: true, friction: 0,"
           " pose: {rpy: [%.17g, 0, 0]}}\n"
           "  - {name: cube, shape: {box: [0.05, 0.05, 0.05]}, density: 100, friction: 0,"
           " pose: {xyz: [%.17g, %.17g, %.17g],"
           " rpy: [%.17g, 0, 0]}, velocity: [0, 0, 0, 0, %.17g, %.17g]}\n",
           th, ctr[0], ctr[1], ctr[2], th, -v * s, -v * c);
  test_world t = tw_create(yaml);
  kn_world_tree* tr = object_tree(&t, "cube");
  double prev[3], vo[3];
  tw_step(&t, 29);
  memcpy(prev, tr->q, sizeof prev);
  tw_step(&t, 1);
  for (int k = 0; k < 3; k++) vo[k] = (tr->q[k] - prev[k]) / 0.01;
  const double n[3] = {0, -s, c}, vin[3] = {0, 0, -v};
  double dv[3] = {vo[0] - vin[0], vo[1] - vin[1], vo[2] - vin[2]}, cr[3];
  kn_vec3_cross(dv, n, cr);
  double vn = kn_vec3_dot(vo, n), e = vn / (v * c);
  cr_log_info("S-Stick: v after (%.6f, %.6f, %.6f), restitution %.4f, |dv x n| / |dv| %.3g", vo[0], vo[1], vo[2], e,
              kn_vec3_norm(cr) / kn_vec3_norm(dv));
  cr_expect_gt(vn, 0, "leaves the face: v . n %.6f", vn);
  cr_expect(kn_vec3_norm(cr) <= 1e-6 * kn_vec3_norm(dv), "the impulse is along the face normal");
  cr_expect(e > 0 && e <= 1, "restitution %.6f", e);
  tw_free(&t);
}

/* a rigid triangle-mesh collider: the octahedron of tests/contact/data (scale 0.05 m, density 100:
 * m = (4/3) 0.05^3 100 = 1/60 kg), turned face (1, 4, 6) down (its outward normal (1, -1, -1)/sqrt 3 to
 * -z: 54.7356 deg about (1, 1, 0)/sqrt 2) and dropped from 1 cm onto the plate. Its three bottom
 * vertices' pairs share the weight equally: at rest the face is m g / 3k deep, the centre 0.05/sqrt 3
 * above it. 4 s: its rocking about the face's edges settles slower than the cube's bounce (2 s left
 * 3.5e-7 m/s) */
Test(penalty_continuous, mesh_collider_rests_on_a_face) {
  const double a = acos(1 / sqrt(3.0)), c = cos(a), s = sin(a), u = 1 / sqrt(2.0);
  /* R = I c + s [u]x + (1 - c) u u^T, u = (u, u, 0) */
  double R[9] = {c + (1 - c) * u * u, (1 - c) * u * u, s * u, (1 - c) * u * u, c + (1 - c) * u * u, -s * u,
                 -s * u, s * u, c};
  double pitch = -asin(R[6]), roll = atan2(R[7], R[8]), yaw = atan2(R[3], R[0]);
  const double m = 4.0 / 3.0 * 0.05 * 0.05 * 0.05 * 100, zc = plate_top + 0.05 / sqrt(3.0);
  char yaml[1024];
  snprintf(yaml, sizeof yaml,
           "time_step: 0.01\ngravity: [0, 0, -9.81]\ncontact: {backend: penalty, penalty: {continuous: true}}\n"
           "objects:\n  - {name: plate, shape: {box: [1, 1, 0.002]}, fixed: true}\n"
           "  - {name: oct, shape: {mesh: %s/tests/contact/data/octahedron.obj, scale: [0.05, 0.05, 0.05]},"
           " density: 100, pose: {xyz: [0.013, 0.021, %.17g], rpy: [%.17g, %.17g, %.17g]}}\n",
           KNEAD_SOURCE_DIR, zc + 0.01, roll, pitch, yaw);
  test_world t = tw_create(yaml);
  kn_world_tree* tr = object_tree(&t, "oct");
  double e0 = tree_energy(tr), emax = e0;
  for (int k = 0; k < 400; k++) {
    tw_step(&t, 1);
    emax = fmax(emax, tree_energy(tr));
  }
  double want = zc - m * g / (3 * k_default), speed = 0;
  for (int k = 0; k < 6; k++) speed = fmax(speed, fabs(tr->v[k]));
  cr_log_info("octahedron: z %.10f (expected %.10f), speed %.3g, E max - start %.3g", tr->q[2], want, speed, emax - e0);
  cr_expect(fabs(tr->q[2] - want) < 1e-9, "resting depth: %.10f", tr->q[2]);
  cr_expect_lt(speed, 1e-9);
  cr_expect_leq(emax, e0);
  tw_free(&t);
}

/* §8 item 15: a corner landing exactly on a shared edge. The cube centred on the plate: two of its
 * bottom corners land on the plate's top diagonal (the edge its two triangles share), each found by
 * CCD against both triangles. Deduplicated (penalty_cpf.c, duplicate), each corner is one pair and the
 * cube rests at m g / (4 k) as when no corner is on the edge (S-Box); two pairs at those corners
 * would make it m g / (6 k). */
Test(penalty_continuous, corner_on_a_shared_edge_is_one_pair) {
  const char* yaml = "time_step: 0.01\nduration: 1\ngravity: [0, 0, -9.81]\n"
                     "contact: {backend: penalty, penalty: {continuous: true}}\n"
                     "objects:\n  - {name: plate, shape: {box: [1, 1, 0.002]}, fixed: true}\n"
                     "  - {name: cube, shape: {box: [0.1, 0.1, 0.1]}, density: 100, pose: {xyz: [0, 0, 0.071]}}\n";
  test_world t = tw_create(yaml);
  tw_step(&t, 100);
  kn_world_tree* tr = object_tree(&t, "cube");
  double want = plate_top + half - mass * g / (4 * k_default), speed = 0;
  for (int k = 0; k < 6; k++) speed = fmax(speed, fabs(tr->v[k]));
  cr_log_info("centred cube: z %.12f (m g / 4k: %.12f, m g / 6k: %.12f), speed %.3g", tr->q[2], want,
              plate_top + half - mass * g / (6 * k_default), speed);
  cr_expect(fabs(tr->q[2] - want) < 1e-9, "resting depth: z %.12f, want %.12f", tr->q[2], want);
  cr_expect_lt(speed, 1e-6);
  tw_free(&t);
}
