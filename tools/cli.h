/* The knead command's subcommands (tools/, not installed). Each returns the process exit status:
 * 0 success, 1 a failure reported on stderr, 2 a usage error. */
#ifndef KNEAD_TOOLS_CLI_H
#define KNEAD_TOOLS_CLI_H

#include "knead.h"

int knead_cmd_run(int argc, char** argv, int default_scene);
int knead_cmd_info(int argc, char** argv);
int knead_cmd_bench(int argc, char** argv);
/* knead check PATH...: scenes as a regression suite (cmd_check.c) */
int knead_cmd_check(int argc, char** argv);
/* knead sweep SCENE --set KEY=A:B:N...: a scene over a grid or random samples of overrides (cmd_sweep.c) */
int knead_cmd_sweep(int argc, char** argv);
/* knead compare PATH... [--backends LIST]: every scene once per contact backend, side by side (cmd_compare.c) */
int knead_cmd_compare(int argc, char** argv);

/* Progress on stderr: a bar redrawn in place on a terminal, a line every 25 % otherwise. */
typedef struct {
  int tty;
  int last;        /* last percentage (or bar width) drawn */
  double duration; /* simulated seconds, for the t = ... label */
  double wall0;
} knead_progress;

void knead_progress_init(knead_progress* p, double duration);
void knead_progress_update(void* user, double fraction);
void knead_progress_finish(knead_progress* p);

/* "knead: " + message on stderr */
void knead_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/* (DIR) => DIR prepended to KNEAD_PACKAGE_PATH, which the scene and URDF loaders search; 0 on success */
int kn_cli_add_package_path(const char* dir);

#endif
