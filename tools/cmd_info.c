/* `knead info [--json] ROBOT.urdf`: what knead makes of a URDF: links, joints with limits, DoFs,
 * masses, mimic joints, collision filter groups and every warning the loader raised. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tools/cli.h"

/* JSON has no infinity: a missing limit is null */
static json_t* json_num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static const char* parent_name(const kn_mb_model* m, int b) {
  return m->bodies[b].parent >= 0 ? m->bodies[m->bodies[b].parent].name : "world";
}

static int count_geoms(const kn_robot* r, kn_geom_role role) {
  int n = 0;
  for (int i = 0; i < r->ngeom; i++) n += r->geoms[i].role == role;
  return n;
}

/* (robot, its file, the loader's warnings) => the robot as JSON on stdout (jansson); 0, or -1 when
 * out of memory or a name is not UTF-8 */
static int print_json(const kn_robot* r, const char* path, const kn_diag* warnings) {
  const kn_mb_model* m = r->model;
  json_t* doc = json_object();
  int bad = !doc;
  bad |= json_object_set_new(doc, "name", json_string(m->name));
  bad |= json_object_set_new(doc, "file", json_string(path));
  json_t* list = json_array();
  bad |= json_object_set_new(doc, "links", list);
  for (int b = 0; b < m->nbody; b++) {
    const kn_mb_body* body = &m->bodies[b];
    bad |= json_array_append_new(
        list, json_pack("{sssosfs[fff]}", "name", body->name, "parent",
                        body->parent >= 0 ? json_string(m->bodies[body->parent].name) : json_null(), "mass",
                        body->mass, "com", body->com[0], body->com[1], body->com[2]));
  }
  list = json_array();
  bad |= json_object_set_new(doc, "joints", list);
  for (int b = 0; b < m->nbody; b++) {
    const kn_mb_body* body = &m->bodies[b];
    if (!body->joint_name && body->jtype == KN_JOINT_FIXED) continue;
    bad |= json_array_append_new(
        list, json_pack("{ss ss ss ss si si s[fff] so so so so sf}", "name",
                        body->joint_name ? body->joint_name : "floating_base", "type", kn_joint_type_name(body->jtype),
                        "parent", parent_name(m, b), "child", body->name, "nq", body->nq, "nv", body->nv, "axis",
                        body->axis[0], body->axis[1], body->axis[2], "lower",
                        json_num(body->has_position_limits ? body->lower : -INFINITY), "upper",
                        json_num(body->has_position_limits ? body->upper : INFINITY), "velocity",
                        json_num(body->velocity_limit), "effort", json_num(body->effort_limit), "damping",
                        body->damping));
  }
  bad |= json_object_set_new(doc, "nq", json_integer(m->nq));
  bad |= json_object_set_new(doc, "nv", json_integer(m->nv));
  bad |= json_object_set_new(doc, "dofs", json_integer(kn_robot_dofs(r)));
  bad |= json_object_set_new(doc, "total_mass", json_real(kn_mb_total_mass(m)));
  list = json_array();
  bad |= json_object_set_new(doc, "mimic_joints", list);
  for (int c = 0; c < m->ncoupler; c++) {
    const kn_mb_coupler* k = &m->couplers[c];
    bad |= json_array_append_new(list, json_pack("{sssssfsf}", "joint", m->bodies[k->body].joint_name, "master",
                                                 m->bodies[k->master].joint_name, "multiplier", k->multiplier,
                                                 "offset", k->offset));
  }
  bad |= json_object_set_new(doc, "collision_geometries", json_integer(count_geoms(r, KN_GEOM_COLLISION)));
  bad |= json_object_set_new(doc, "visual_geometries", json_integer(count_geoms(r, KN_GEOM_VISUAL)));
  list = json_array();
  bad |= json_object_set_new(doc, "collision_filter_groups", list);
  for (int g = 0; g < r->nfilter_group; g++) {
    const kn_robot_filter_group* G = &r->filter_groups[g];
    json_t *members = json_array(), *ignores = json_array();
    for (int k = 0; k < G->nmember; k++)
      bad |= json_array_append_new(members, json_string(m->bodies[G->members[k]].name));
    for (int k = 0; k < G->nignore; k++) bad |= json_array_append_new(ignores, json_string(G->ignores[k]));
    bad |= json_array_append_new(list, json_pack("{sssoso}", "name", G->name, "members", members, "ignores", ignores));
  }
  bad |= json_object_set_new(doc, "missing_collision_meshes", json_integer(r->missing_collision_meshes));
  bad |= json_object_set_new(doc, "missing_visual_meshes", json_integer(r->missing_visual_meshes));
  list = json_array();
  bad |= json_object_set_new(doc, "warnings", list);
  for (int k = 0; k < warnings->count; k++) bad |= json_array_append_new(list, json_string(warnings->items[k]));
  if (!bad) bad = json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) != 0;
  if (!bad) putchar('\n');
  json_decref(doc);
  return bad ? -1 : 0;
}

static void print_limit(const char* label, double x, const char* unit) {
  if (isfinite(x)) printf("  %s %g%s", label, x, unit);
}

static void print_text(const kn_robot* r, const char* path, const kn_diag* warnings) {
  const kn_mb_model* m = r->model;
  int moving = 0, fixed = 0;
  for (int b = 0; b < m->nbody; b++) {
    if (!m->bodies[b].joint_name && m->bodies[b].jtype == KN_JOINT_FIXED) continue;
    if (m->bodies[b].nv > 0)
      moving++;
    else
      fixed++;
  }
  printf("robot %s (%s)\n", m->name, path);
  printf("  %d links, %d moving joints + %d fixed, nq %d, nv %d, %d DoFs, total mass %.6g kg\n", m->nbody, moving,
         fixed, m->nq, m->nv, kn_robot_dofs(r), kn_mb_total_mass(m));
  printf("  geometry: %d collision, %d visual\n", count_geoms(r, KN_GEOM_COLLISION), count_geoms(r, KN_GEOM_VISUAL));
  printf("links:\n");
  for (int b = 0; b < m->nbody; b++)
    printf("  %-28s mass %10.6g kg  parent %s\n", m->bodies[b].name, m->bodies[b].mass, parent_name(m, b));
  printf("joints:\n");
  for (int b = 0; b < m->nbody; b++) {
    const kn_mb_body* body = &m->bodies[b];
    if (!body->joint_name && body->jtype == KN_JOINT_FIXED) continue;
    int linear = body->jtype == KN_JOINT_PRISMATIC;
    printf("  %-28s %-10s %s -> %s", body->joint_name ? body->joint_name : "floating_base",
           kn_joint_type_name(body->jtype), parent_name(m, b), body->name);
    if (body->nv == 1) printf("  axis (%g %g %g)", body->axis[0], body->axis[1], body->axis[2]);
    if (body->has_position_limits) printf("  limits [%g, %g] %s", body->lower, body->upper, linear ? "m" : "rad");
    print_limit("velocity", body->velocity_limit, linear ? " m/s" : " rad/s");
    print_limit("effort", body->effort_limit, linear ? " N" : " N m");
    if (body->damping > 0) printf("  damping %g", body->damping);
    printf("\n");
  }
  if (m->ncoupler) {
    printf("mimic joints:\n");
    for (int c = 0; c < m->ncoupler; c++) {
      const kn_mb_coupler* k = &m->couplers[c];
      printf("  %s = %g * %s %+g\n", m->bodies[k->body].joint_name, k->multiplier, m->bodies[k->master].joint_name,
             k->offset);
    }
  }
  if (r->nfilter_group) {
    printf("collision filter groups:\n");
    for (int g = 0; g < r->nfilter_group; g++) {
      const kn_robot_filter_group* G = &r->filter_groups[g];
      printf("  %s: members", G->name);
      for (int k = 0; k < G->nmember; k++) printf("%s %s", k ? "," : "", m->bodies[G->members[k]].name);
      if (!G->nmember) printf(" (none)");
      printf("; ignores");
      for (int k = 0; k < G->nignore; k++) printf("%s %s", k ? "," : "", G->ignores[k]);
      if (!G->nignore) printf(" (none)");
      printf("\n");
    }
  }
  if (warnings->count) {
    printf("warnings:\n");
    for (int k = 0; k < warnings->count; k++) printf("  %s\n", warnings->items[k]);
  }
}

int knead_cmd_info(int argc, char** argv) {
  int json = 0;
  const char* path = NULL;
  const char** paths = calloc((size_t)argc + 1, sizeof *paths);
  int npaths = 0;
  if (!paths) return 1;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    if (!strcmp(a, "--json")) {
      json = 1;
    } else if (!strcmp(a, "--package-path")) {
      if (i + 1 >= argc) {
        knead_error("info: --package-path needs a folder");
        free(paths);
        return 2;
      }
      paths[npaths++] = argv[++i];
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf("usage: knead info [--json] [--package-path DIR]... ROBOT.urdf\n");
      free(paths);
      return 0;
    } else if (a[0] == '-' && a[1]) {
      knead_error("info: unknown option '%s' (see knead --help)", a);
      free(paths);
      return 2;
    } else if (path) {
      knead_error("info: one URDF at a time ('%s' and '%s')", path, a);
      free(paths);
      return 2;
    } else {
      path = a;
    }
  }
  if (!path) {
    knead_error("info: which robot? usage: knead info [--json] ROBOT.urdf");
    free(paths);
    return 2;
  }
  kn_urdf_options opt = kn_urdf_options_default();
  opt.package_paths = paths;
  opt.npackage_paths = npaths;
  kn_robot* r = NULL;
  kn_error err = {0};
  kn_status st;
  if (!strncmp(path, "knead://", 8)) {
    const char* text = kn_embedded_file(path, NULL);
    st = text ? kn_urdf_load_string(text, path, NULL, &opt, &r, &err)
              : kn_fail(&err, KN_ERR_IO, "%s is not embedded in this build", path);
  } else {
    st = kn_urdf_load(path, &opt, &r, &err);
  }
  free(paths);
  if (st) {
    knead_error("info: %s", err.msg);
    return 1;
  }
  /* the loader's warnings, plus what a missing collision mesh means for simulating */
  kn_diag warnings = {0};
  for (int k = 0; k < r->warnings.count; k++) kn_diag_add(&warnings, "%s", r->warnings.items[k]);
  if ((st = kn_robot_check_simulatable(r, &err)) != KN_OK)
    kn_diag_add(&warnings, "%s: %s", st == KN_ERR_IO ? "cannot be simulated until its collision meshes are found"
                                                     : "cannot be simulated", err.msg);
  int code = 0;
  if (json && print_json(r, path, &warnings) != 0) {
    knead_error("info: cannot write the JSON: out of memory, or a name in the URDF that is not UTF-8");
    code = 1;
  } else if (!json)
    print_text(r, path, &warnings);
  kn_diag_free(&warnings);
  kn_robot_free(r);
  return code;
}
