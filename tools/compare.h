/* `knead compare`'s cells and files (inside tools/ only): a cell is one scene run with one backend,
 * read back from its child's result file (compare_cell.c); the files are compare.md, compare.json,
 * the per-run CSV series, the gnuplot SVGs and the side-by-side replay page (compare_write.c).
 * cmd_compare.c runs the jobs and calls these. */
#ifndef KNEAD_TOOLS_COMPARE_H
#define KNEAD_TOOLS_COMPARE_H

#include <stdio.h>

#include "tools/check.h"

typedef struct {
  char *name, *type, *unit, *message;
  int passed, expect_fail;
  double measured, t;
} cell_check;

typedef struct {
  char status[16];        /* ok | failed | refused | error | crashed */
  char* scene;            /* the scene's name */
  char* message;
  long steps;
  double wall, iterations, contacts, worst; /* per step; worst: the deepest phi [m] */
  char hash[24];
  cell_check* checks;
  int nchecks;
  char** names;           /* series names: t, then the checks' quantities (and references) */
  int nnames;
  double* data;           /* nrows x nnames */
  int nrows, caprows;
  char* replay;           /* its replay.html relative to DIR (the scene has output.html), or NULL */
} cell;

/* one scene: its cells, one per backend */
typedef struct {
  const char* path;
  char dir_name[256];     /* its folder under DIR: the scene's name, made unique */
  const char* name;       /* the scene's name (from a cell; the file's stem when none loaded) */
  cell* cells;            /* one per backend */
  char (*series)[4200];   /* per backend: its CSV ("" when none) */
} scene_row;

// (job's result file, the child's wait status) => the cell
void compare_read_cell(const scene_job* job, int status, cell* c);
void compare_free_cell(cell* c);
// (cell, series name) => its column in c->data, or -1
int compare_column_of(const cell* c, const char* name);
// (check) => PASS, FAIL, XFAIL or XPASS
const char* compare_verdict(const cell_check* k);
// (cell) => "ok", or "refused: why" and friends, one line for tables
void compare_status_text(const cell* c, char* out, size_t cap);
/* (baseline compare.json, this run) => the checks that passed there and do not now, printed; their
 * number, or -1 when the baseline cannot be read */
int compare_against_baseline(const char* file, const scene_row* rows, int nrow, const char* const* backends, int nb);

// (path) => the folder and its parents created; 0 on success
int compare_make_dirs(const char* path);
// (name) => a file-name-safe copy in out
void compare_safe_name(const char* name, char* out, size_t cap);
// (cell) => DIR/<scene>/<backend>.csv named in path ("" when the cell has no series); 0 or -1
int compare_write_series(const cell* c, const char* dir, const char* backend, char* path, size_t cap);
// (rows) => compare.md; 0 or -1
int compare_write_markdown(const char* path, const scene_row* rows, int nrow, const char* const* backends, int nb,
                           const char* const* sets, int nsets);
// (rows) => compare.json (knead-compare-1); 0 or -1
int compare_write_json(const char* path, const char* out_dir, const scene_row* rows, int nrow,
                       const char* const* backends, int nb, const char* const* sets, int nsets);
// (rows) => DIR/plots/*.svg by gnuplot; the number of plots, -1 on an I/O error (*missing: no gnuplot)
int compare_write_plots(const char* out_dir, const scene_row* rows, int nrow, const char* const* backends, int nb,
                        int* missing);
// (scene whose runs wrote replay.html) => DIR/<scene>/replay.html; 0 or -1
int compare_write_side_by_side(const char* path, const scene_row* r, const char* const* backends, int nb);

#endif
