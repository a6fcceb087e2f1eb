/* `knead` and `knead run SCENE.yaml`: load, build the world, simulate with a progress display,
 * write the outputs and print one line of results (and "open DIR/replay.html" when the scene wrote
 * the replay: the embedded default scene does). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"

// (DIR) => DIR prepended to KNEAD_PACKAGE_PATH, which the scene and URDF loaders search
int kn_cli_add_package_path(const char* dir) {
  const char* old = getenv("KNEAD_PACKAGE_PATH");
  size_t n = strlen(dir) + (old ? strlen(old) : 0) + 2;
  char* v = malloc(n);
  if (!v) return -1;
  snprintf(v, n, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "");
  int r = setenv("KNEAD_PACKAGE_PATH", v, 1);
  free(v);
  return r;
}

int knead_cmd_run(int argc, char** argv, int default_scene) {
  const char* scene_path = NULL;
  const char* out_dir = NULL;
  const char* save_state = NULL; /* --save-state FILE: the state at the end */
  const char* resume = NULL;     /* --resume FILE: the state to start from */
  const char** sets = argc > 0 ? calloc((size_t)argc, sizeof *sets) : NULL; /* --set key=value */
  int nsets = 0;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    if (!strcmp(a, "--set")) {
      if (i + 1 >= argc) {
        knead_error("run: --set needs key=value, e.g. --set contact.margin=0.001 (see knead run --help)");
        free(sets);
        return 2;
      }
      sets[nsets++] = argv[++i];
    } else if (!strncmp(a, "--set=", 6)) {
      sets[nsets++] = a + 6;
    } else if (!strcmp(a, "--out") || !strcmp(a, "--package-path")) {
      if (i + 1 >= argc) {
        knead_error("run: %s needs a folder (see knead --help)", a);
        free(sets);
        return 2;
      }
      if (!strcmp(a, "--out"))
        out_dir = argv[++i];
      else if (kn_cli_add_package_path(argv[++i]) != 0) {
        knead_error("run: cannot set KNEAD_PACKAGE_PATH");
        free(sets);
        return 1;
      }
    } else if (!strcmp(a, "--save-state") || !strcmp(a, "--resume")) {
      if (i + 1 >= argc) {
        knead_error("run: %s needs a state file (see knead --help)", a);
        free(sets);
        return 2;
      }
      *(!strcmp(a, "--resume") ? &resume : &save_state) = argv[++i];
    } else if (!strncmp(a, "--out=", 6)) {
      out_dir = a + 6;
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf("usage: knead run SCENE.yaml [--out DIR] [--set KEY=VALUE]... [--package-path DIR]... [--resume FILE]\n"
             "                 [--save-state FILE]\n"
             "  --set KEY=VALUE   override one scalar of the scene before it is read, as if the file said\n"
             "                    it: contact.margin=0.001, objects[1].friction=0.3, gravity[2]=-1.62,\n"
             "                    robots[0].controller.kp=200 (a missing key is added; repeatable, in order;\n"
             "                    summary.json lists them under \"overrides\")\n");
      free(sets);
      return 0;
    } else if (a[0] == '-' && a[1]) {
      knead_error("run: unknown option '%s' (see knead --help)", a);
      free(sets);
      return 2;
    } else if (scene_path) {
      knead_error("run: one scene at a time ('%s' and '%s')", scene_path, a);
      free(sets);
      return 2;
    } else {
      scene_path = a;
    }
  }
  if (!default_scene && !scene_path) {
    knead_error("run: which scene? usage: knead run SCENE.yaml [--out DIR] [--set KEY=VALUE]...");
    free(sets);
    return 2;
  }

  kn_error err = {0};
  kn_scene* scene = NULL;
  kn_status st = kn_scene_load_with(scene_path ? scene_path : "knead://default_scene.yaml", sets, nsets, &scene, &err);
  free(sets);
  if (st) {
    knead_error("%s", err.msg);
    return 1;
  }
  /* the embedded default scene asks for replay.html; a build without three.js (npm or its registry
   * unreachable) still runs it, without the replay */
  kn_scene_output* so = scene->doc->output ? scene->doc->output : scene->doc->outputs;
  if (!scene_path && so && so->html && !kn_output_html_available()) {
    knead_error("warning: no replay.html: three.js not found (the build installs it with npm from its registry; "
                "or set KNEAD_THREE_JS to a three.min.js)");
    so->html = false;
  }
  kn_world* world = NULL;
  if ((st = kn_world_create(scene, &world, &err)) || (st = kn_checks_attach(world, &err))) {
    knead_error("%s", err.msg);
    kn_world_free(world);
    kn_scene_free(scene);
    return 1;
  }
  for (int k = 0; k < world->warnings.count; k++) knead_error("warning: %s", world->warnings.items[k]);
  if (resume && (st = kn_world_load_state(world, resume, &err))) {
    knead_error("%s", err.msg);
    kn_world_free(world);
    kn_scene_free(scene);
    return 1;
  }

  char dir[4096];
  if (out_dir)
    snprintf(dir, sizeof dir, "%s", out_dir);
  else if (scene->output && scene->output->dir)
    snprintf(dir, sizeof dir, "%s", scene->output->dir);
  else
    snprintf(dir, sizeof dir, "out/%s", scene->name);

  long steps = kn_world_total_steps(world);
  fprintf(stderr, "knead: %s (%s): %d robot%s, %ld steps of %g s", scene->name, scene->path, world->nrobot,
          world->nrobot == 1 ? "" : "s", steps, scene->time_step);
  if (resume) fprintf(stderr, ", resumed at step %ld (t = %g s) from %s", world->step, world->t, resume);
  fprintf(stderr, "\n");
  knead_progress prog;
  knead_progress_init(&prog, scene->duration);
  kn_run_summary sum = {0};
  st = kn_world_run(world, dir, knead_progress_update, &prog, &sum, &err);
  knead_progress_finish(&prog);
  int code = 0;
  if (st) {
    knead_error("%s", err.msg);
    if (sum.stepped) /* else nothing ran: the error (the output folder, say) is all there is to say */
      knead_error("%s: failed after %ld of %ld steps; partial outputs in %s/", scene->name, sum.steps, steps, dir);
    code = 1;
  } else if (save_state && (st = kn_world_save_state(world, save_state, &err))) {
    knead_error("%s", err.msg);
    code = 1;
  } else {
    printf("%s: %ld steps, %.3f s simulated in %.2f s wall (%.1fx real time), state hash %016llx -> %s/\n",
           scene->name, sum.steps, sum.sim_time_s, sum.wall_time_s,
           sum.wall_time_s > 0 ? sum.sim_time_s / sum.wall_time_s : 0.0, (unsigned long long)sum.final_state_hash,
           dir);
    /* where the replay is, ready to paste (the default scene writes one) */
    if (scene->output && scene->output->html) printf("open %s/replay.html\n", dir);
  }
  kn_world_free(world);
  kn_scene_free(scene);
  return code;
}
