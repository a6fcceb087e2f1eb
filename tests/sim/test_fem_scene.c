/* Deformables from mesh files (`shape: {mesh: file}`) and FEM rows of contacts.csv.
 * (c) a Gmsh 2.2 .msh written here (the box generator's tets) and a closed OBJ cube (tetrahedralized
 *     by tetgen) load, drop 5 mm onto the floor and rest: centroid at rest within 1 mm of half the
 *     height (the compression under gravity is rho g H^2 / 2E ~ 0.05 mm), speed < 1 cm/s; a bad
 *     .msh is an error that names the file.
 * (d) contacts.csv of the resting .msh cube has FEM rows (floor -> cube) whose z forces sum to the
 *     cube's weight m g within 1 % (statics of a body at rest). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "deformable/deformable.h"
#include "output/output.h"
#include "sim/sim.h"

#define DIR "/tmp/knead_test_fem_scene"

static void write_msh(const char* path) {
  kn_tet_mesh m;
  kn_error err;
  cr_assert_eq(kn_tet_mesh_box(0.06, 0.06, 0.06, 0.03, &m, &err), KN_OK, "%s", err.msg);
  FILE* f = fopen(path, "w");
  cr_assert(f);
  fprintf(f, "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n%d\n", m.nvert);
  for (int v = 0; v < m.nvert; v++) fprintf(f, "%d %.17g %.17g %.17g\n", v + 1, m.X[3 * v], m.X[3 * v + 1], m.X[3 * v + 2]);
  fprintf(f, "$EndNodes\n$Elements\n%d\n", m.ntet);
  for (int t = 0; t < m.ntet; t++)
    fprintf(f, "%d 4 2 0 0 %d %d %d %d\n", t + 1, m.tet[4 * t] + 1, m.tet[4 * t + 1] + 1, m.tet[4 * t + 2] + 1,
            m.tet[4 * t + 3] + 1);
  fprintf(f, "$EndElements\n");
  fclose(f);
  kn_tet_mesh_free(&m);
}

static void write_obj(const char* path) {
  FILE* f = fopen(path, "w");
  cr_assert(f);
  const double a = 0.03;
  for (int c = 0; c < 8; c++) fprintf(f, "v %g %g %g\n", c & 1 ? a : -a, c & 2 ? a : -a, c & 4 ? a : -a);
  /* outward faces of the cube, 1-based vertex c + 1 */
  static const int q[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  for (int k = 0; k < 6; k++)
    fprintf(f, "f %d %d %d\nf %d %d %d\n", q[k][0] + 1, q[k][1] + 1, q[k][2] + 1, q[k][0] + 1, q[k][2] + 1, q[k][3] + 1);
  fclose(f);
}

static const char* scene(const char* mesh, int contacts) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "time_step: 0.002\n"
           "duration: 0.5\n"
           "objects:\n"
           "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, friction: 0.8}\n"
           "deformables:\n"
           "  - name: cube\n"
           "    shape: {mesh: %s}\n"
           "    resolution: 0.03\n"
           "    material: {youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n"
           "    pose: {xyz: [0, 0, 0.035]}\n"
           "%s",
           mesh, contacts ? "output: {contacts: true}\n" : "");
  return buf;
}

// (mesh file) => world run to rest; centroid z and max speed
static void drop(const char* mesh, const char* out, double* cz, double* vmax, double* mass, kn_world** keep,
                 kn_scene** keep_scene) {
  kn_scene* s;
  kn_world* w;
  kn_error err = {0};
  const char* y = scene(mesh, out != NULL);
  cr_assert_eq(kn_scene_load_string(y, strlen(y), DIR "/scene.yaml", &s, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
  if (out) {
    kn_run_summary sum;
    cr_assert_eq(kn_world_run(w, out, NULL, NULL, &sum, &err), KN_OK, "%s", err.msg);
  } else {
    long n = kn_world_total_steps(w);
    for (long k = 0; k < n; k++) cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s", err.msg);
  }
  double c[3];
  kn_sim_deformable_centroid(&w->fems[0], c);
  const kn_fem_body* b = w->fems[0].body;
  *vmax = 0;
  for (int v = 0; v < b->mesh.nvert; v++) *vmax = fmax(*vmax, sqrt(b->v[3 * v] * b->v[3 * v] + b->v[3 * v + 1] * b->v[3 * v + 1] + b->v[3 * v + 2] * b->v[3 * v + 2]));
  *cz = c[2];
  *mass = kn_fem_body_mass(b);
  *keep = w, *keep_scene = s;
}

Test(fem_scene, msh_and_obj_drop_and_rest) {
  mkdir(DIR, 0755);
  write_msh(DIR "/cube.msh");
  write_obj(DIR "/cube.obj");
  const char* files[2] = {DIR "/cube.msh", DIR "/cube.obj"};
  for (int i = 0; i < 2; i++) {
    double cz, vmax, m;
    kn_world* w;
    kn_scene* s;
    drop(files[i], NULL, &cz, &vmax, &m, &w, &s);
    printf("%s: %d vertices, %d tets, mass %.4f kg, centroid z %.5f m at rest (0.03 expected), max speed %.2e m/s\n",
           files[i], w->fems[0].body->mesh.nvert, w->fems[0].body->mesh.ntet, m, cz, vmax);
    cr_assert_lt(fabs(m - 0.216), 1e-6 * 0.216, "mass %.12g kg of a 6 cm cube at 1000 kg/m^3: 0.216 kg (tetgen writes ~8 digits)", m);
    cr_assert_lt(fabs(cz - 0.03), 1e-3, "%s: resting centroid %g m", files[i], cz);
    cr_assert_lt(vmax, 1e-2, "%s: at rest (speed %g m/s)", files[i], vmax);
    cr_assert_eq(w->fems[0].body->material.model, KN_FEM_LINEAR_COROTATED,
                 "material without type: the documented default linear_corotated (was read as linear)");
    kn_world_free(w);
    kn_scene_free(s);
  }
}

// material.type names each model; omitted it is linear_corotated (the document offsets the enum by one)
Test(fem_scene, material_type_names_the_model) {
  mkdir(DIR, 0755);
  write_obj(DIR "/cube.obj");
  const char* names[] = {"linear", "linear_corotated", "corotated", "neohookean", NULL};
  const kn_fem_model models[] = {KN_FEM_LINEAR, KN_FEM_LINEAR_COROTATED, KN_FEM_COROTATED, KN_FEM_NEOHOOKEAN,
                                 KN_FEM_LINEAR_COROTATED};
  for (int i = 0; i < 5; i++) {
    char y[4096], mat[96];
    snprintf(mat, sizeof mat, "material: {%s%s%syoungs_modulus:", names[i] ? "type: " : "", names[i] ? names[i] : "",
             names[i] ? ", " : "");
    const char* base = scene(DIR "/cube.obj", 0);
    const char* at = strstr(base, "material: {youngs_modulus:");
    cr_assert(at);
    snprintf(y, sizeof y, "%.*s%s%s", (int)(at - base), base, mat, at + strlen("material: {youngs_modulus:"));
    kn_scene* s;
    kn_world* w;
    kn_error err = {0};
    cr_assert_eq(kn_scene_load_string(y, strlen(y), DIR "/scene.yaml", &s, &err), KN_OK, "%s", err.msg);
    cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
    cr_assert_eq(w->fems[0].body->material.model, models[i], "type %s", names[i] ? names[i] : "(omitted)");
    kn_world_free(w);
    kn_scene_free(s);
  }
}

Test(fem_scene, bad_mesh_names_file) {
  mkdir(DIR, 0755);
  FILE* f = fopen(DIR "/bad.msh", "w");
  cr_assert(f);
  fputs("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n3\n1 0 0\n", f);
  fclose(f);
  kn_scene* s;
  kn_world* w = NULL;
  kn_error err = {0};
  const char* y = scene(DIR "/bad.msh", 0);
  kn_status st = kn_scene_load_string(y, strlen(y), DIR "/scene.yaml", &s, &err);
  if (st == KN_OK) {
    st = kn_world_create(s, &w, &err);
    kn_scene_free(s);
  }
  printf("bad mesh: %s\n", err.msg);
  cr_assert_neq(st, KN_OK);
  cr_assert(strstr(err.msg, "bad.msh") != NULL, "the error names the file: %s", err.msg);
}

Test(fem_scene, contacts_csv_fem_rows_sum_to_weight) {
  mkdir(DIR, 0755);
  write_msh(DIR "/cube.msh");
  double cz, vmax, m;
  kn_world* w;
  kn_scene* s;
  drop(DIR "/cube.msh", DIR "/out", &cz, &vmax, &m, &w, &s);
  double tend = w->t;
  kn_world_free(w);
  kn_scene_free(s);
  FILE* f = fopen(DIR "/out/contacts.csv", "r");
  cr_assert(f, "contacts.csv written");
  char line[1024];
  cr_assert(fgets(line, sizeof line, f));
  double fz = 0;
  int rows = 0, last = 0;
  while (fgets(line, sizeof line, f)) {
    double t, v[10];
    char a[64], b[64];
    cr_assert_eq(sscanf(line, "%lf,%63[^,],%63[^,],%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &t, a, b, &v[0], &v[1], &v[2],
                        &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]),
                 13, "row: %s", line);
    if (strcmp(b, "cube") == 0) rows++;
    if (fabs(t - tend) < 1e-9 && strcmp(a, "floor") == 0 && strcmp(b, "cube") == 0) fz += v[8], last++;
  }
  fclose(f);
  double W = m * 9.81;
  printf("contacts.csv: %d FEM rows, %d at t = %g s, floor force on cube %.5f N vs weight %.5f N (%.4f %%)\n", rows, last,
         tend, fz, W, 100 * (fz - W) / W);
  cr_assert_gt(last, 0, "FEM rows at the last step");
  cr_assert_lt(fabs(fz - W), 0.01 * W, "floor force %g N vs weight %g N", fz, W);
}
