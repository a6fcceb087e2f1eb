/* knead/output — what a run writes: trajectory.csv and trajectory.json, summary.json, solver.csv and
 * contacts.csv (output.c, trajectory.c), ParaView frames (output_vtk.c), gnuplot plots
 * (output_plot.c), the three.js replay (output_html.c), driven by kn_world_run; and the JSON helpers
 * every JSON file of knead goes through (json.c, jansson). It reads the world (sim/sim.h) and never
 * changes how it steps; the world knows nothing of it. What to write is the scene's output: section
 * (scene/scene.h). */
#ifndef KNEAD_OUTPUT_H
#define KNEAD_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include "../sim/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/*---- runs (output.c, trajectory.c) ----*/

typedef struct {
  long steps;
  double sim_time_s;
  double wall_time_s;
  uint64_t final_state_hash;
  long trajectory_rows;     /* data rows written to trajectory.csv */
  int stepped;              /* 1 once the outputs were open and stepping began: 0 when the run
                               failed setting up its output folder and files (nothing ran) */
} kn_run_summary;

/* trajectory.csv's values for the current state (trajectory.c): kn_world_trajectory_ncolumn(w)
 * numbers after t, in the header's order: each robot's nq coordinates ("robot/joint"), each
 * object's, then the FEM and MPM centroids ("<name>/cx,cy,cz", world frame [m]). Joint
 * coordinates are multibody.h's (rad for revolute, m for prismatic), except a FLOATING root joint
 * (a floating robot, a free object or a floating URDF object): its x, y, z [m] and qw, qx, qy, qz
 * are the pose of the root body in the world, base_pose (or pose) applied, not its coordinates
 * in the joint frame. The run's trajectory.json names each column's unit and meaning. */
int kn_world_trajectory_ncolumn(const kn_world* w);
void kn_world_trajectory_row(const kn_world* w, double* row);

/* Simulate up to the scene's duration from the current state (the steps from w->step to
 * kn_world_total_steps: all of them for a new world, the rest after kn_world_load_state), writing
 * `out_dir`/trajectory.csv
 * (t, then every coordinate by "robot/joint", then the objects', in world coordinates as
 * kn_world_trajectory_row), trajectory.json (per column of trajectory.csv: name, unit, meaning)
 * and `out_dir`/summary.json (the knead version, git revision and build id that ran it, the
 * solver statistics: totals, max, mean; one line of JSON written by jansson), plus solver.csv
 * (per step: t, iterations, line-search
 * iterations, residual, contacts) and contacts.csv (t, side A, side B, point, normal from A into B,
 * force on B, phi; rigid contacts, then FEM ones with the deformable as B, then MPM particle ones
 * with the deformable as A; the mesh pairs of penalty's continuous mode and of ipc's mesh term are
 * rows of their own after the candidates of their kind, rigid-rigid or with a deformable (phi the
 * pair's gap, < 0 its depth; the normal force is f . n, the friction f - (f . n) n), and the
 * candidates they replace have force 0) when
 * output.solver / output.contacts are set; out_dir is created
 * when missing. progress (may be NULL) is called with the fraction done, at most ~200 times.
 * summary (may be NULL) receives the numbers (zeroed first, so also on a failure before any
 * step). On a failed step the files written so far stay and err says which step failed. */
kn_status kn_world_run(kn_world* w, const char* out_dir, kn_progress_fn progress, void* user,
                       kn_run_summary* summary, kn_error* err);
/* Called after every successful step of kn_world_run_observed (user, world after the step); a
 * status other than KN_OK (with err filled) stops the run as a failed step would. */
typedef kn_status (*kn_step_fn)(void* user, const kn_world* w, kn_error* err);
/* kn_world_run with observe (may be NULL) called after every step (knead check records golden
 * samples through it) */
kn_status kn_world_run_observed(kn_world* w, const char* out_dir, kn_progress_fn progress, kn_step_fn observe,
                                void* user, kn_run_summary* summary, kn_error* err);

/* 1 when output.html can be written: the three.js it inlines was found ($KNEAD_THREE_JS, the build
 * tree's, the installed one; output_html.c), else 0 and a scene with output.html fails in
 * kn_world_run with KN_ERR_UNSUPPORTED. */
int kn_output_html_available(void);

/*---- JSON through jansson (json.c): every JSON file knead reads or writes goes through these ----*/

struct json_t; /* jansson's json_t */
/* (number) => a JSON real, or null when it is NaN or infinite (JSON has neither) */
struct json_t* kn_json_real(double v);
/* (document, path, jansson dump flags) => the file written, ending with a newline; KN_ERR_IO naming the
 * path */
kn_status kn_json_write_file(const struct json_t* doc, const char* path, size_t flags, kn_error* err);
/* (path) => its JSON document (*out, the caller's reference); KN_ERR_IO when it cannot be read,
 * KN_ERR_PARSE "path:line:column: jansson's message" when it is not JSON */
kn_status kn_json_read_file(const char* path, struct json_t** out, kn_error* err);
/* (json_object_set_new / json_array_append_new results OR-ed) => KN_OK, or KN_ERR_NOMEM naming what
 * (jansson fails the same way on memory and on a string that is not UTF-8) */
kn_status kn_json_built(int failures, const char* what, kn_error* err);
/* (JSON object) => knead_version, git_revision, build_id and build set on it: which knead wrote the
 * file (summary.json, golden baselines); returns the failures OR-ed as kn_json_built takes them */
int kn_json_set_build(struct json_t* doc);

/* (gnuplot script, log file) => gnuplot's exit status, or -1 with errno when it cannot be started;
 * KNEAD_GNUPLOT names the program (no shell; stdin /dev/null, stdout and stderr to the log). The
 * plots of output.plots and of knead compare. */
int kn_output_run_gnuplot(const char* script, const char* log);

/* (text) => written on f as a gnuplot single-quoted string (' doubled), for file names and titles */
void kn_output_gnuplot_string(FILE* f, const char* s);

#ifdef __cplusplus
}
#endif
#endif
