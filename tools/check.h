/* `knead check` internals (tools/, not installed): the child that runs one scene (check_scene.c)
 * and the parent's report of it (check_report.c), talking through a result file of tab-separated
 * lines:
 *   S status(ok|error) scene-name message start-time(unix s) wall-time(s)
 *   C name type passed expect_fail message unit measured t measured2 t2 lo hi
 *   G status(ok|diverged|error|updated) message details
 *   K folder            the scene failed and its outputs were kept there
 *   H hash              the final state hash (16 hex digits; when the run completed)
 *   END                 the child finished */
#ifndef KNEAD_TOOLS_CHECK_H
#define KNEAD_TOOLS_CHECK_H

#include <stdio.h>

struct scene_job;
typedef struct check_opts {
  int update_golden, no_golden, strict;
  double golden_rate;
  const char* keep_dir; /* where a failing scene's outputs are kept */
  const char* const* sets; /* --set key=value overrides, applied to every scene */
  int nsets;
  /* the child's work: check_run_scene when NULL (knead check, sweep); compare_run_scene (knead
   * compare) writes its own result lines (compare.h) */
  void (*run)(const struct scene_job* job, const struct check_opts* o, FILE* out);
} check_opts;

typedef struct scene_job {
  char* path;
  const char* backend;   /* knead compare: the contact backend this job runs the scene with */
  const char* const* sets; /* when not NULL: this job's --set overrides instead of check_opts.sets */
  int nsets;
  char result[4200];    /* result file of its child */
  char keep_name[1024]; /* its folder name under keep_dir (the scene file's stem, made unique) */
} scene_job;

typedef struct {
  int tests, failures, errors, expected, passed, kept;
  double time; /* scenes' wall time [s] */
} check_counts;

/* (scene file, options, where it keeps outputs) => result lines on out (in the child process) */
void check_run_scene(const char* path, const char* keep_name, const check_opts* o, FILE* out);
/* (job's result file, its exit status) => its report lines on stdout, its <testsuite> in junit
 * (may be NULL) and the totals in all */
void check_report_scene(const scene_job* job, int status, FILE* junit, check_counts* all);
/* (jobs[0..n), options, at most `parallel` at once) => each job run by check_run_scene in a forked
 * child writing job->result (check_jobs.c); status[i] its wait status, -1 when it could not start
 * (reported on stderr). Jobs with run[i] == 0 are skipped (run may be NULL: all). */
void check_run_jobs(scene_job* job, int n, const check_opts* o, int parallel, const char* run, int* status);
/* MPI (check_mpi.c; the one-rank case without KNEAD_HAVE_MPI). check_mpi_start: under a launcher
 * (mpirun, srun), MPI_Init and this process's rank and the number of ranks; returns 1 when there
 * are several. check_mpi_gather: every rank's results of its scenes (i % size == rank) into rank
 * 0's job[].result files and status[]. check_mpi_finish: rank 0's exit status for every rank, then
 * MPI_Finalize; returns it. */
int check_mpi_start(int* rank, int* size);
void check_mpi_gather(scene_job* job, int n, int* status, int rank, int size);
int check_mpi_finish(int code);
/* `knead compare` (compare_scene.c): one scene with one backend (job->backend, set as
 * contact.backend after the --set overrides), in the child; its result lines:
 *   S status(ok|failed|refused|error) scene-name message     refused: the backend cannot run this
 *                                                            scene (KN_ERR_UNSUPPORTED from
 *                                                            kn_world_create); failed: a step failed
 *   T steps wall-per-step(s) iterations-per-step contacts-per-step worst-phi(m, NaN: no contact) hash
 *   C name type passed expect_fail unit measured t message
 *   N t-name...              the observed series' names: per check its quantity, and
 *                            "<check>/reference" for follows_curve
 *   D t value...             one row per step (NaN where a check observed nothing)
 *   R path                   the run's replay.html relative to DIR (the scene has output.html)
 *   END
 * It writes the scene's outputs only when the scene asks for output.html, into
 * o->keep_dir/job->keep_name/job->backend/ (keep_dir is compare's DIR). */
void compare_run_scene(const struct scene_job* job, const struct check_opts* o, FILE* out);

/* (compare.json just written, knead-bench --fidelity's MuJoCo figures or NULL, FILE) => the
 * physical-fidelity scoreboard in FILE, keeping what follows a `<!-- notes -->` line of an
 * existing FILE (compare_scoreboard.c); 0, or -1 with the reason on stderr */
int compare_write_scoreboard(const char* compare_json, const char* mujoco_json, const char* path);

/* (folder) => its *.yaml files, recursively, sorted by path, appended to *list (cmd_check.c) */
int check_collect_dir(const char* dir, char*** list, int* n, int* cap);
/* (path) => a copy appended to *list; -1 when out of memory (cmd_check.c) */
int check_push_path(char*** list, int* n, int* cap, const char* p);
/* a child's result line split at tabs, in place (check_jobs.c) => at most max fields in f; their count */
int check_split_fields(char* line, char** f, int max);
/* (path) => its folder and everything in it removed; 0 on success */
int check_remove_tree(const char* path);

#endif
