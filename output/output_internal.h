/* knead/output internals: trajectory.csv's header and description (trajectory.c), and the outputs
 * people look at rather than read: ParaView frames
 * (output_vtk.c), gnuplot plots (output_plot.c) and the three.js replay (output_html.c), driven
 * by output_frames.c from kn_world_run. Not installed. */
#ifndef KNEAD_OUTPUT_INTERNAL_H
#define KNEAD_OUTPUT_INTERNAL_H

#include <jansson.h>
#include <stdio.h>

#include "output/output.h"

/*---- trajectory.csv (trajectory.c) ----*/

/* trajectory.csv's header line "t,robot/joint,..." (trajectory.c) */
void kn_out_trajectory_header(const kn_world* w, FILE* f);
/* (world) => path written: trajectory.json, trajectory.csv's columns with unit and meaning */
kn_status kn_out_trajectory_describe(const kn_world* w, const char* path, kn_error* err);

/*---- drawable geometry (output_mesh.c) ----*/

/* One rigid shape tessellated once into triangles in its geometry frame (counter-clockwise seen
 * from outside), drawn at X_WB(body) * X_bg. */
typedef struct {
  int tree, body;           /* the body that carries it */
  int body_id;              /* index into kn_out_scene.body_names */
  kn_pose X_bg;             /* geometry frame in the body frame (tree fixed to the world: in the world) */
  int nv, nt;
  double* v;                /* 3 * nv, geometry frame */
  int* tri;                 /* 3 * nt */
  float rgba[4];
  int flat;                 /* draw with flat shading (boxes, planes, meshes) */
} kn_out_shape;

/* Everything the frame writers draw: the shapes of every tree (VISUAL geometry, and COLLISION
 * geometry of the bodies that have no visual), the body naming, and kinematics of our own so that
 * sampling a frame never touches the step's scratch. Bodies are numbered rigid (tree by tree,
 * body by body), then FEM bodies, then MPM bodies. */
typedef struct {
  int nshape;
  kn_out_shape* shapes;
  int nbody_id;
  char** body_names;        /* "robot/link", "object" ("object/link" for URDF objects), FEM name */
  int* tree_first_id;       /* per tree: body_id of its body 0 */
  int fem_first_id;         /* body_id of w->fems[0] */
  int ntree;
  kn_mb_data** data;        /* per tree */
} kn_out_scene;

/* (world) => g: shapes tessellated (spheres 12 x 24, cylinders and capsules 24 around, half-spaces
 * as a 2 m square, meshes read with assimp and scaled). KN_ERR_IO names an unreadable mesh. */
kn_status kn_out_scene_build(const kn_world* w, kn_out_scene* g, kn_error* err);
/* (q, v of every tree) => g->data kinematics (X_wb, V) */
void kn_out_scene_update(const kn_world* w, kn_out_scene* g);
/* world pose of shape i from the last kn_out_scene_update */
void kn_out_shape_pose(const kn_out_scene* g, int i, kn_pose* X_WG);
void kn_out_scene_free(kn_out_scene* g);

/* (shape) => triangles in its frame; exposed for the tests of the tessellation counts */
kn_status kn_out_tessellate(const kn_shape* s, int* nv, double** v, int* nt, int** tri, kn_error* err);

/*---- frames, plots and the replay ----*/

typedef struct kn_vtk_writer kn_vtk_writer;
/* (out_dir) => out_dir/frames/ created, a writer */
kn_status kn_vtk_begin(const char* out_dir, kn_vtk_writer** out, kn_error* err);
/* (world at time t, g updated) => frames/frame_NNNNN.vtu (binary: appended raw, zlib-compressed) */
kn_status kn_vtk_frame(kn_vtk_writer* vw, const kn_world* w, const kn_out_scene* g, kn_error* err);
/* => frames.pvd indexing every frame written, frames/frame_NNNNN.vtu files numbered past the last
 * frame (an earlier run's) removed, nothing else; frees vw (also on error) */
kn_status kn_vtk_end(kn_vtk_writer* vw, kn_error* err);

typedef struct kn_plot_recorder kn_plot_recorder;
/* (world) => a recorder sampling at most ~4000 times over total_steps */
kn_status kn_plot_begin(const kn_world* w, long total_steps, kn_plot_recorder** out, kn_error* err);
/* (world after a step) => one sample of contact forces, tracking errors and heights */
void kn_plot_sample(kn_plot_recorder* p, const kn_world* w, const kn_out_scene* g);
/* => out_dir/plots/{contact_forces,tracking_<robot>,heights}.svg (+ .dat, .gp) by gnuplot; a
 * missing gnuplot is a warning added to `warnings`, not an error. Frees p; out_dir NULL: only that. */
kn_status kn_plot_end(kn_plot_recorder* p, const kn_world* w, const char* out_dir, kn_diag* warnings,
                      kn_error* err);

typedef struct kn_html_recorder kn_html_recorder;
/* => a recorder, or KN_ERR_UNSUPPORTED when three.js was not installed at build time */
kn_status kn_html_begin(const kn_world* w, const kn_out_scene* g, kn_html_recorder** out, kn_error* err);
/* (world at time t, g updated) => one frame of body poses and FEM surface positions */
kn_status kn_html_frame(kn_html_recorder* h, const kn_world* w, const kn_out_scene* g, kn_error* err);
/* => out_dir/replay.html; frees h; out_dir NULL: only that */
kn_status kn_html_end(kn_html_recorder* h, const kn_world* w, const kn_out_scene* g, const char* out_dir,
                      kn_error* err);
/* the three.min.js file the replay inlines (output_assets.c): $KNEAD_THREE_JS, the installed copy
 * next to the running libknead or program (<libdir>/../share/knead, <bindir>/../share/knead), the
 * build tree's, the configured prefix's; NULL when none exists. Thread-local storage. */
const char* kn_html_three_js_path(void);

/* The run's optional outputs (output.vtk, .plots, .html) as one unit for kn_world_run. */
typedef struct kn_outputs kn_outputs;
/* (world at t = 0) => *out (NULL when no optional output is asked for); the first frame written */
kn_status kn_outputs_begin(const kn_world* w, const char* out_dir, kn_outputs** out, kn_error* err);
/* (world after a step) => frames at output.frame_rate, plot samples */
kn_status kn_outputs_step(kn_outputs* o, const kn_world* w, kn_error* err);
/* => pvd index, plots, replay.html; warnings (gnuplot missing) go to w->warnings. Frees o. */
kn_status kn_outputs_end(kn_outputs* o, kn_world* w, kn_error* err);

#endif
