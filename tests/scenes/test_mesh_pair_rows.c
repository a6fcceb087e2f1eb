/* The backends' mesh pairs as contact rows (kn_sim_contacts_add_pair): penalty's continuous mode
 * and ipc's mesh term report each pair with a force as a row of its own (w->contacts between two
 * colliders, w->fem_contacts kind 3 / 4 with a deformable), the detection's candidates that the
 * pairs replace with force 0. The rows carry the whole contact force: on the resting body, their
 * sum is what its momentum says, m (x_n+1 - 2 x_n + x_n-1) / dt^2 + m g (implicit Euler,
 * x_n+1 = x_n + dt v_n+1; an FEM body's lumped masses, its elastic forces summing to 0; no
 * damping), to the Newton solve's tolerance.
 *   penalty  a rigid 0.1 m cube (0.1 kg) on a fixed box plate, 200 steps of 0.01 s: four corner
 *            vertex-face pairs at the cube's corners, each m g / 4 at depth m g / (4 k) (k the
 *            default 1e5 N/m; test_penalty_cpf_mixed.c's rest), normals +z; the rows sum to m g.
 *   ipc      an FEM 0.1 m cube (1 kg) dropped 2 mm onto a fixed rigid triangle-mesh plate, 60
 *            steps of 0.01 s: kind 3 / 4 rows between plate and cube, gaps in (0, dhat), normals
 *            into the cube; the rows sum to the cube's momentum balance and the cube's total
 *            contact force (w->fems[0].force) is their sum.
 * Default contact keys but the backend (and penalty's continuous mode); the FEM cube's material is
 * test_ipc_mesh.c's. ~1 s in Release, the scenes small enough for the sanitizer build as they are. */
#define _GNU_SOURCE /* mkstemps */
#include <unistd.h>

#include "scene_util.h"

// (world, a collider or an FEM body (the other -1)) => the z force on it summed over every contact row,
// and how many FEM rows are mesh pairs (kind 3, 4)
static double rows_force_z(const kn_world* w, int collider, int fem, int* npair) {
  double fz = 0;
  *npair = 0;
  for (int i = 0; i < w->ncontact; i++) {
    const kn_world_contact* c = &w->contacts[i];
    if (c->b == collider) fz += c->f[2];
    if (c->a == collider) fz -= c->f[2];
  }
  for (int i = 0; i < w->nfem_contact; i++) {
    const kn_world_fem_contact* c = &w->fem_contacts[i];
    *npair += c->kind >= 3;
    if (c->fem_b == fem) fz += c->f[2];
    if (c->a_fem == fem || (c->a_collider == collider && collider >= 0)) fz -= c->f[2];
  }
  return fz;
}

static int collider_named(const kn_world* w, const char* name) {
  for (int i = 0; i < w->ncollider; i++)
    if (strcmp(w->colliders[i].name, name) == 0) return i;
  cr_assert_fail("no collider '%s'", name);
  return -1;
}

Test(mesh_pair_rows, penalty_cube_on_a_plate_rows_sum_to_m_g) {
  const double g = 9.81, m = 0.1, k = 1e5, dt = 0.01, plate_top = 0.001;
  const char* yaml = "time_step: 0.01\nduration: 3\ngravity: [0, 0, -9.81]\n"
                     "contact: {backend: penalty, penalty: {continuous: true}}\n"
                     "objects:\n"
                     "  - {name: plate, shape: {box: [1, 1, 0.002]}, fixed: true}\n"
                     "  - {name: cube, shape: {box: [0.1, 0.1, 0.1]}, density: 100,\n"
                     "     pose: {xyz: [0.013, 0.021, 0.061]}}\n";
  test_world t = tw_create(yaml);
  const double* q = tw_object_q(&t, "cube");
  tw_step(&t, 198);
  double z0 = q[2];
  tw_step(&t, 1);
  double z1 = q[2];
  tw_step(&t, 1);
  double z2 = q[2];
  const kn_world* w = t.world;
  int cube = collider_named(w, "cube"), plate = collider_named(w, "plate"), npair = 0;
  double fz = rows_force_z(w, cube, -1, &npair), balance = m * (z2 - 2 * z1 + z0) / (dt * dt) + m * g;
  /* the pairs' rows follow the candidates' (w->contacts[first rigid candidates...]) */
  int rows = 0;
  for (int i = 0; i < w->ncontact; i++) {
    const kn_world_contact* c = &w->contacts[i];
    if (!(fabs(c->f[2]) > 0)) continue;
    rows++;
    int cube_b = c->b == cube;
    cr_expect(cube_b ? c->a == plate : (c->a == cube && c->b == plate), "row %d: bodies %d %d", i, c->a, c->b);
    double s = cube_b ? 1 : -1; /* as seen by the cube */
    cr_expect(fabs(s * c->f[2] - m * g / 4) < 1e-6, "row %d: normal force %.10g N, m g / 4 = %.10g", i, s * c->f[2],
              m * g / 4);
    cr_expect(fabs(s * c->n[2] - 1) < 1e-9, "row %d: normal z %.12g", i, s * c->n[2]);
    cr_expect(fabs(c->phi + m * g / (4 * k)) < 1e-9, "row %d: gap %.10e m, -m g / 4k = %.10e", i, c->phi,
              -m * g / (4 * k));
    /* at a corner of the cube, on the plate's top */
    cr_expect(fabs(fabs(c->p[0] - q[0]) - 0.05) < 1e-6 && fabs(fabs(c->p[1] - q[1]) - 0.05) < 1e-6,
              "row %d: not at a corner", i);
    cr_expect(fabs(c->p[2] - plate_top) < 1e-4, "row %d: z %.6g", i, c->p[2]);
  }
  cr_log_info("penalty continuous: %d pair rows, their z force on the cube %.12g N, m g %.12g N, "
              "momentum balance %.12g N", rows, fz, m * g, balance);
  cr_expect_eq(rows, 4, "four corner pairs carry the cube: %d rows", rows);
  /* Newton's 1e-8 m/s on v over dt, times m: 1e-7 N (measured 8e-8 N); the rows at rest: m g */
  cr_expect(fabs(fz - balance) < 1e-6, "rows %.12g N, momentum %.12g N", fz, balance);
  cr_expect(fabs(fz - m * g) < 1e-6, "rows %.12g N, m g %.12g N", fz, m * g);
  tw_free(&t);
}

Test(mesh_pair_rows, ipc_fem_cube_on_a_mesh_plate_rows_balance_momentum) {
  const double g = 9.81, dt = 0.01;
  char path[] = "/tmp/knead_pair_rows_XXXXXX.obj";
  int fd = mkstemps(path, 4);
  cr_assert_geq(fd, 0);
  close(fd);
  tw_write_unit_cube_obj(path);
  char yaml[2048];
  snprintf(yaml, sizeof yaml,
           "time_step: 0.01\nduration: 1\ngravity: [0, 0, -9.81]\n"
           "contact: {backend: ipc}\n"
           "objects:\n"
           "  - {name: plate, shape: {mesh: %s, scale: [0.4, 0.4, 0.02]}, fixed: true, pose: {xyz: [0, 0, -0.01]}}\n"
           "deformables:\n"
           "  - name: cube\n"
           "    shape: {box: [0.1, 0.1, 0.1]}\n"
           "    resolution: 0.05\n"
           "    material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n"
           "    pose: {xyz: [0.01, 0.02, 0.052]}\n",
           path);
  test_world t = tw_create(yaml);
  unlink(path);
  const kn_world* w = t.world;
  const kn_fem_body* b = w->fems[0].body;
  int nv = b->mesh.nvert, plate = collider_named(w, "plate");
  double* xs = malloc(3 * 3 * (size_t)nv * sizeof *xs);
  tw_step(&t, 58);
  for (int s = 0; s < 3; s++) {
    if (s) tw_step(&t, 1);
    memcpy(xs + 3 * (size_t)nv * s, b->x, 3 * (size_t)nv * sizeof *xs);
  }
  double M = 0, mom = 0;
  for (int i = 0; i < nv; i++) {
    const double* z = xs + 3 * i + 2;
    M += b->mass[i];
    mom += b->mass[i] * (z[6 * nv] - 2 * z[3 * nv] + z[0]) / (dt * dt);
  }
  free(xs);
  int npair = 0;
  double fz = rows_force_z(w, -1, 0, &npair), balance = mom + M * g;
  double dhat = 0;
  for (int i = 0; i < w->nfem_contact; i++) {
    const kn_world_fem_contact* c = &w->fem_contacts[i];
    if (c->kind < 3) {
      cr_expect(kn_vec3_norm(c->f) == 0, "candidate row %d replaced by the pairs has force %g N", i,
                kn_vec3_norm(c->f));
      continue;
    }
    cr_expect(c->fem_b == 0 && c->a_collider == plate && c->a_fem < 0, "row %d: sides", i);
    cr_expect(c->phi > 0, "row %d: gap %g m", i, c->phi);
    cr_expect(c->n[2] > 0.99, "row %d: normal (%g, %g, %g) not into the cube", i, c->n[0], c->n[1], c->n[2]);
    dhat = fmax(dhat, c->phi);
  }
  cr_log_info("ipc: %d pair rows (largest gap %.3g m), their z force on the cube %.12g N, momentum balance %.12g N, "
              "m g %.6g N, the cube's total %.12g N", npair, dhat, fz, balance, M * g, w->fems[0].force[2]);
  cr_expect_gt(npair, 0, "no mesh pair rows");
  /* Newton's tolerance on v (ipc's eps_d, ~1e-7 m/s here) over dt, times M: 1e-5 N (measured 3e-9 N) */
  cr_expect(fabs(fz - balance) < 1e-6 * M * g, "rows %.12g N, momentum balance %.12g N", fz, balance);
  cr_expect(fabs(w->fems[0].force[2] - fz) < 1e-12 * M * g, "the cube's total %.12g N, rows %.12g N",
            w->fems[0].force[2], fz);
  tw_free(&t);
}
