/* trajectory.csv in world coordinates, and trajectory.json naming each column's unit.
 * A floating robot (a 1 kg hub with a wheel spinning about an axis through the wheel's centre of
 * mass, so the root translates in exact free fall) starts at base_pose (0.3, -0.2, 0.5), yaw 0.5,
 * and a URDF object of the same model at pose (-0.4, 0.1, 0.8); no collision geometry, no
 * contact. Both fall for 0.1 s at dt 0.01: the root's world z after n steps is
 * z0 - g dt^2 n (n + 1) / 2 (the position update uses v_n+1), x and y stay at the pose and the
 * orientation stays the pose's quaternion (cos 0.25, 0, 0, sin 0.25). Before, the columns were the
 * coordinates in the base_pose frame: (0, 0, 0) at t = 0 and z down to -0.05. A third tree, tumbling
 * (initial twist) from a rotated pose, has its row equal to the root's world pose X_wb from the
 * kinematics. trajectory.json has one entry per CSV column with its unit. */
#define _XOPEN_SOURCE 700 /* nftw, mkdtemp */
#include <criterion/criterion.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "output/output.h"
#include "sim/sim.h"
#include "../support/files.h"

#define G 9.81
#define DT 0.01
#define NSTEP 10

static const char* urdf =
    "<robot name='hub'>\n"
    "  <link name='hub'><inertial><mass value='1'/>"
    "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "  <link name='wheel'><inertial><mass value='0.5'/>"
    "<inertia ixx='0.002' iyy='0.002' izz='0.004' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "  <joint name='spin' type='continuous'><parent link='hub'/><child link='wheel'/>"
    "<origin xyz='0 0 0.1'/><axis xyz='0 0 1'/></joint>\n"
    "</robot>\n";

// value of column `col` in the CSV line `line` (0 = t)
static double field(const char* line, int col) {
  const char* p = line;
  for (int c = 0; c < col; c++) p = strchr(p, ',') + 1;
  return strtod(p, NULL);
}

// index of column `name` in the header line, -1 when absent
static int column_index(const char* header, const char* name) {
  size_t n = strlen(name);
  int k = 0;
  for (const char* p = header; *p && *p != '\n'; k++) {
    size_t len = strcspn(p, ",\n");
    if (len == n && !strncmp(p, name, n)) return k;
    p += len;
    if (*p == ',') p++;
  }
  return -1;
}

// the "unit" of column `name` in trajectory.json, into unit (empty when absent)
// (trajectory.json parsed, column name) => its unit ("" when absent)
static const char* json_unit(json_t* doc, const char* name) {
  size_t i;
  json_t* c;
  json_array_foreach(json_object_get(doc, "columns"), i, c) {
    if (strcmp(json_string_value(json_object_get(c, "name")), name) == 0) {
      const char* u = json_string_value(json_object_get(c, "unit"));
      return u ? u : "";
    }
  }
  return "";
}

Test(trajectory_output, floating_roots_in_world_coordinates, .timeout = 60) {
  char dir[] = "/tmp/knead_traj_XXXXXX";
  cr_assert(mkdtemp(dir));
  char path[512], yaml[2048];
  snprintf(path, sizeof path, "%s/hub.urdf", dir);
  FILE* f = fopen(path, "w");
  cr_assert(f);
  fputs(urdf, f);
  fclose(f);
  snprintf(yaml, sizeof yaml,
           "time_step: %g\nduration: %g\n"
           "robots:\n  - {name: drop, urdf: %s, floating: true, base_pose: {xyz: [0.3, -0.2, 0.5], rpy: [0, 0, 0.5]}}\n"
           "objects:\n  - {name: thing, urdf: %s, pose: {xyz: [-0.4, 0.1, 0.8], rpy: [0, 0, 0.5]}}\n"
           "  - {name: tumble, urdf: %s, pose: {xyz: [1, 2, 3], rpy: [0.3, -0.4, 1.1]}, velocity: [0.5, -1, 2, 0.1, 0, 0]}\n",
           DT, NSTEP * DT, path, path, path);
  kn_error err = {0};
  kn_scene* s = NULL;
  kn_world* w = NULL;
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), "inline.yaml", &s, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(s, &w, &err), KN_OK, "%s", err.msg);
  char out[600];
  snprintf(out, sizeof out, "%s/out", dir);
  cr_assert_eq(kn_world_run(w, out, NULL, NULL, NULL, &err), KN_OK, "%s", err.msg);

  snprintf(path, sizeof path, "%s/trajectory.csv", out);
  char* csv = slurp(path);
  cr_assert_not_null(csv);
  const char* names[2] = {"drop/floating_base", "thing/floating_base"};
  const double p0[2][3] = {{0.3, -0.2, 0.5}, {-0.4, 0.1, 0.8}};
  int rows = 0;
  for (const char* line = strchr(csv, '\n') + 1; *line; line = strchr(line, '\n') + 1, rows++) {
    double t = field(line, 0);
    int n = (int)lround(t / DT);
    for (int b = 0; b < 2; b++) {
      double v[7];
      static const char* const c[7] = {"x", "y", "z", "qw", "qx", "qy", "qz"};
      for (int k = 0; k < 7; k++) {
        char col[128];
        snprintf(col, sizeof col, "%s/%s", names[b], c[k]);
        int i = column_index(csv, col);
        cr_assert_geq(i, 1, "no column %s", col);
        v[k] = field(line, i);
      }
      double z = p0[b][2] - G * DT * DT * n * (n + 1) / 2.0;
      cr_expect(fabs(v[0] - p0[b][0]) < 1e-9 && fabs(v[1] - p0[b][1]) < 1e-9, "%s at t %g: x, y = %.10g, %.10g",
                names[b], t, v[0], v[1]);
      cr_expect(fabs(v[2] - z) < 1e-9, "%s at t %g: z %.10g, expected %.10g (world)", names[b], t, v[2], z);
      cr_expect(fabs(v[3] - cos(0.25)) < 1e-9 && fabs(v[4]) < 1e-9 && fabs(v[5]) < 1e-9 && fabs(v[6] - sin(0.25)) < 1e-9,
                "%s at t %g: quaternion (%g, %g, %g, %g), expected yaw 0.5", names[b], t, v[3], v[4], v[5], v[6]);
    }
  }
  cr_expect_eq(rows, NSTEP + 1);
  /* the same numbers through the API */
  double row[64];
  cr_assert_leq(kn_world_trajectory_ncolumn(w), 64);
  kn_world_trajectory_row(w, row);
  cr_expect(fabs(row[2] - (0.5 - G * DT * DT * NSTEP * (NSTEP + 1) / 2.0)) < 1e-12, "row z %.15g", row[2]);

  /* a tumbling root (rotating q, a rotated pose): the row is the body's world pose from the
   * kinematics, X_wb = X_pj * X_JB(q) */
  {
    const kn_world_tree* tr = &w->trees[w->objects[1].tree];
    const kn_mb_model* m = tr->robot->model;
    kn_mb_data* d = kn_mb_data_create(m);
    kn_mb_kinematics(m, tr->q, NULL, d);
    int k0 = w->robots[0].ncolumn + w->objects[0].ncolumn;
    double R[9];
    kn_mat3_from_quat(row + k0 + 3, R);
    for (int a = 0; a < 3; a++) cr_expect(fabs(row[k0 + a] - d->X_wb[0].p[a]) < 1e-12, "p[%d] %.15g vs %.15g", a, row[k0 + a], d->X_wb[0].p[a]);
    for (int a = 0; a < 9; a++) cr_expect(fabs(R[a] - d->X_wb[0].R[a]) < 1e-12, "R[%d] %.15g vs %.15g", a, R[a], d->X_wb[0].R[a]);
    double qn = 0;
    for (int a = 3; a < 7; a++) qn += row[k0 + a] * row[k0 + a];
    cr_expect(fabs(qn - 1) < 1e-12);
    /* and not the coordinates: the joint-frame position is far from the world one */
    cr_expect(fabs(tr->q[0] - row[k0]) + fabs(tr->q[2] - row[k0 + 2]) > 0.5);
    kn_mb_data_free(d);
  }

  /* trajectory.json: one entry per CSV column, in order, with the unit of each */
  snprintf(path, sizeof path, "%s/trajectory.json", out);
  json_error_t je;
  json_t* doc = json_load_file(path, 0, &je);
  cr_assert_not_null(doc, "trajectory.json: %s (line %d)", je.text, je.line);
  int ncol = 1;
  for (const char* p = csv; *p != '\n'; p++) ncol += *p == ',';
  cr_expect_eq(ncol, 1 + kn_world_trajectory_ncolumn(w));
  int nentry = (int)json_array_size(json_object_get(doc, "columns"));
  cr_expect_eq(nentry, ncol, "trajectory.json: %d columns, trajectory.csv %d", nentry, ncol);
  struct {
    const char *name, *unit;
  } want[] = {{"t", "s"},           {"drop/floating_base/x", "m"}, {"drop/floating_base/z", "m"},
              {"drop/floating_base/qw", "1"}, {"drop/spin", "rad"}, {"thing/floating_base/y", "m"},
              {"thing/spin", "rad"}};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    const char* unit = json_unit(doc, want[i].name);
    cr_expect_str_eq(unit, want[i].unit, "unit of %s: '%s'", want[i].name, unit);
    cr_expect_geq(column_index(csv, want[i].name), 0, "%s not in trajectory.csv", want[i].name);
  }
  cr_expect(strstr(json_string_value(json_object_get(doc, "frame")), "in the world frame") != NULL);
  json_decref(doc);
  free(csv);
  kn_world_free(w);
  kn_scene_free(s);
  nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
