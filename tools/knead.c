/* knead — the command-line program: run scenes, describe robots, run the benchmarks.
 *   knead                          run the embedded default scene (with its replay.html)
 *   knead run SCENE.yaml [--out DIR] [--set KEY=VALUE]... [--package-path DIR]... [--resume FILE]
 *                        [--save-state FILE]
 *   knead info [--json] [--package-path DIR]... ROBOT.urdf
 *   knead check / sweep / compare  (cmd_check.c, cmd_sweep.c, cmd_compare.c)
 *   knead bench [ARGS...]          exec knead-bench from the folder of this program */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/cli.h"

static const char usage[] =
    "usage: knead [COMMAND] [ARGS]\n"
    "\n"
    "  knead                       run the embedded default scene: trajectory.csv, summary.json\n"
    "                              and the replay in out/default (prints: open out/default/replay.html)\n"
    "  knead run SCENE.yaml        simulate a scene: progress on stderr, trajectory.csv (world\n"
    "                              coordinates; units in trajectory.json) and summary.json in\n"
    "                              out/<scene name>\n"
    "      --out DIR               write the outputs to DIR instead\n"
    "      --set KEY=VALUE         override one scalar of the scene as if the file said it\n"
    "                              (contact.margin=0.001, objects[1].friction=0.3, gravity[2]=-1.62;\n"
    "                              repeatable; recorded in summary.json \"overrides\")\n"
    "      --package-path DIR      search DIR for package:// files (repeatable)\n"
    "      --resume FILE           start from a state saved by --save-state (same scene) and run\n"
    "                              on to the scene's duration\n"
    "      --save-state FILE       write the final state to FILE (binary; kn_world_save_state)\n"
    "  knead info ROBOT.urdf       print a robot: links, joints, limits, DoFs, masses, warnings\n"
    "      --json                  as JSON\n"
    "      --package-path DIR      search DIR for package:// meshes (repeatable)\n"
    "  knead check PATH...         run scenes (files or folders) as a regression suite: their\n"
    "                              checks: and golden baselines (see knead check --help);\n"
    "                              --set KEY=VALUE applies to every scene\n"
    "  knead sweep SCENE.yaml --set KEY=A:B:N...  run a scene over a grid (or --random N samples)\n"
    "                              of overrides: DIR/sweep.csv and sweep.json (see knead sweep --help)\n"
    "  knead compare PATH...       run scenes once per contact backend (--backends sap,penalty,ipc,\n"
    "                              smooth_friction), side by side: a table, DIR/compare.md,\n"
    "                              compare.json and plots (see knead compare --help)\n"
    "  knead bench [ARGS]          run the benchmarks (knead-bench, installed next to knead)\n"
    "  knead --help | --version\n"
    "\n"
    "Exit status: 0 success, 1 failure (the message is on stderr), 2 usage error.\n"
    "package:// is searched in the scene's package_paths, --package-path, KNEAD_PACKAGE_PATH and\n"
    "ROS_PACKAGE_PATH.\n";

void knead_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("knead: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int knead_cmd_bench(int argc, char** argv) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    knead_error("bench: cannot locate this program (/proc/self/exe): %s", strerror(errno));
    return 1;
  }
  self[n] = 0;
  char* slash = strrchr(self, '/');
  if (slash) slash[1] = 0;
  char path[PATH_MAX + 16];
  snprintf(path, sizeof path, "%sknead-bench", self);
  if (access(path, X_OK) != 0) {
    knead_error("bench: %s not found (knead-bench is built with -DKNEAD_BENCH=ON and installed next to knead)",
                path);
    return 1;
  }
  char** args = calloc((size_t)argc + 1, sizeof *args);
  if (!args) return 1;
  args[0] = path;
  for (int i = 1; i < argc; i++) args[i] = argv[i];
  execv(path, args);
  knead_error("bench: cannot run %s: %s", path, strerror(errno));
  free(args);
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 2) return knead_cmd_run(0, NULL, 1);
  const char* cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    fputs(usage, stdout);
    return 0;
  }
  if (!strcmp(cmd, "--version")) {
    printf("knead 0.1.0\n");
    return 0;
  }
  if (!strcmp(cmd, "run")) return knead_cmd_run(argc - 1, argv + 1, 0);
  if (!strcmp(cmd, "info")) return knead_cmd_info(argc - 1, argv + 1);
  if (!strcmp(cmd, "check")) return knead_cmd_check(argc - 1, argv + 1);
  if (!strcmp(cmd, "sweep")) return knead_cmd_sweep(argc - 1, argv + 1);
  if (!strcmp(cmd, "compare")) return knead_cmd_compare(argc - 1, argv + 1);
  if (!strcmp(cmd, "bench")) return knead_cmd_bench(argc - 1, argv + 1);
  knead_error("unknown command '%s'", cmd);
  fputs(usage, stderr);
  return 2;
}
