/* `knead info [--json] ROBOT.urdf`: what knead makes of a URDF: links, joints with limits, DoFs,
 * masses, mimic joints, collision filter groups and every warning the loader raised. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"

static void json_str(const char* s) {
  putchar('"');
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

/* JSON has no infinity: a missing limit is null */
static void json_num(double x) {
  if (isfinite(x))
    printf("%.15g", x);
  else
    printf("null");
}

static const char* parent_name(const kn_mb_model* m, int b) {
  return m->bodies[b].parent >= 0 ? m->bodies[m->bodies[b].parent].name : "world";
}

static int count_geoms(const kn_robot* r, kn_geom_role role) {
  int n = 0;
  for (int i = 0; i < r->ngeom; i++) n += r->geoms[i].role == role;
  return n;
}

static void print_json(const kn_robot* r, const char* path, const kn_diag* warnings) {
  const kn_mb_model* m = r->model;
  printf("{\n  \"name\": ");
  json_str(m->name);
  printf(",\n  \"file\": ");
  json_str(path);
  printf(",\n  \"links\": [");
  for (int b = 0; b < m->nbody; b++) {
    const kn_mb_body* body = &m->bodies[b];
    printf("%s\n    {\"name\": ", b ? "," : "");
    json_str(body->name);
    printf(", \"parent\": ");
    if (body->parent >= 0)
      json_str(m->bodies[body->parent].name);
    else
      printf("null");
    printf(", \"mass\": %.15g, \"com\": [%.15g, %.15g, %.15g]}", body->mass, body->com[0], body->com[1],
           body->com[2]);
  }
  printf("\n  ],\n  \"joints\": [");
  int first = 1;
  for (int b = 0; b < m->nbody; b++) {
    const kn_mb_body* body = &m->bodies[b];
    if (!body->joint_name && body->jtype == KN_JOINT_FIXED) continue;
    printf("%s\n    {\"name\": ", first ? "" : ",");
    first = 0;
    json_str(body->joint_name ? body->joint_name : "floating_base");
    printf(", \"type\": \"%s\", \"parent\": ", kn_joint_type_name(body->jtype));
    json_str(parent_name(m, b));
    printf(", \"child\": ");
    json_str(body->name);
    printf(", \"nq\": %d, \"nv\": %d, \"axis\": [%.15g, %.15g, %.15g], \"lower\": ", body->nq, body->nv,
           body->axis[0], body->axis[1], body->axis[2]);
    json_num(body->has_position_limits ? body->lower : -INFINITY);
    printf(", \"upper\": ");
    json_num(body->has_position_limits ? body->upper : INFINITY);
    printf(", \"velocity\": ");
    json_num(body->velocity_limit);
    printf(", \"effort\": ");
    json_num(body->effort_limit);
    printf(", \"damping\": %.15g}", body->damping);
  }
  printf("\n  ],\n  \"nq\": %d,\n  \"nv\": %d,\n  \"dofs\": %d,\n  \"total_mass\": %.15g,\n  \"mimic_joints\": [",
         m->nq, m->nv, kn_robot_dofs(r), kn_mb_total_mass(m));
  for (int c = 0; c < m->ncoupler; c++) {
    const kn_mb_coupler* k = &m->couplers[c];
    printf("%s\n    {\"joint\": ", c ? "," : "");
    json_str(m->bodies[k->body].joint_name);
    printf(", \"master\": ");
    json_str(m->bodies[k->master].joint_name);
    printf(", \"multiplier\": %.15g, \"offset\": %.15g}", k->multiplier, k->offset);
  }
  printf("%s],\n  \"collision_geometries\": %d,\n  \"visual_geometries\": %d,\n", m->ncoupler ? "\n  " : "",
         count_geoms(r, KN_GEOM_COLLISION), count_geoms(r, KN_GEOM_VISUAL));
  printf("  \"collision_filter_groups\": [");
  for (int g = 0; g < r->nfilter_group; g++) {
    const kn_robot_filter_group* G = &r->filter_groups[g];
    printf("%s\n    {\"name\": ", g ? "," : "");
    json_str(G->name);
    printf(", \"members\": [");
    for (int k = 0; k < G->nmember; k++) {
      printf("%s", k ? ", " : "");
      json_str(m->bodies[G->members[k]].name);
    }
    printf("], \"ignores\": [");
    for (int k = 0; k < G->nignore; k++) {
      printf("%s", k ? ", " : "");
      json_str(G->ignores[k]);
    }
    printf("]}");
  }
  printf("%s],\n", r->nfilter_group ? "\n  " : "");
  printf("  \"missing_collision_meshes\": %d,\n  \"missing_visual_meshes\": %d,\n  \"warnings\": [",
         r->missing_collision_meshes, r->missing_visual_meshes);
  for (int k = 0; k < warnings->count; k++) {
    printf("%s\n    ", k ? "," : "");
    json_str(warnings->items[k]);
  }
  printf("%s]\n}\n", warnings->count ? "\n  " : "");
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
  if (json)
    print_json(r, path, &warnings);
  else
    print_text(r, path, &warnings);
  kn_diag_free(&warnings);
  kn_robot_free(r);
  return 0;
}
