/* The optional outputs of a run (output.vtk, output.plots, output.html) as one unit that
 * kn_world_run calls at t = 0, after every step and at the end. Frames (vtk, html) are sampled at
 * output.frame_rate in simulated time; plots sample every step (thinned for long runs). */
#include <math.h>
#include <stdlib.h>

#include "output/output_internal.h"

struct kn_outputs {
  char* dir;
  kn_out_scene geom;
  double frame_dt, next_frame; /* frames when t reaches next_frame (minus half a step) */
  kn_vtk_writer* vtk;
  kn_plot_recorder* plot;
  kn_html_recorder* html;
};

// (world at t) => one frame of every frame output, if one is due
static kn_status sample(kn_outputs* o, const kn_world* w, kn_error* err) {
  int frame = (o->vtk || o->html) && w->t >= o->next_frame - 0.5 * w->scene->time_step;
  if (frame || o->plot) kn_out_scene_update(w, &o->geom);
  kn_status st = KN_OK;
  if (frame) {
    /* next frame from the ideal times, so the count is duration * rate + 1 whatever dt is */
    while (o->next_frame <= w->t + 0.5 * w->scene->time_step) o->next_frame += o->frame_dt;
    if (o->vtk && (st = kn_vtk_frame(o->vtk, w, &o->geom, err))) return st;
    if (o->html && (st = kn_html_frame(o->html, w, &o->geom, err))) return st;
  }
  if (o->plot) kn_plot_sample(o->plot, w, &o->geom);
  return KN_OK;
}

// (a failed start) => everything freed, nothing written
static void outputs_free(kn_outputs* o, const kn_world* w) {
  if (!o) return;
  kn_vtk_end(o->vtk, NULL);
  if (o->plot) kn_plot_end(o->plot, w, NULL, NULL, NULL);
  if (o->html) kn_html_end(o->html, w, &o->geom, NULL, NULL);
  free(o->dir);
  kn_out_scene_free(&o->geom);
  free(o);
}

kn_status kn_outputs_begin(const kn_world* w, const char* out_dir, kn_outputs** out, kn_error* err) {
  *out = NULL;
  const kn_scene_output* so = w->scene->output;
  if (!so || !(so->vtk || so->plots || so->html)) return KN_OK;
  kn_outputs* o = kn_calloc(1, sizeof *o);
  if (!o || !(o->dir = kn_strdup(out_dir))) {
    free(o);
    return kn_fail(err, KN_ERR_NOMEM, "output: out of memory");
  }
  o->frame_dt = 1.0 / (so->frame_rate ? *so->frame_rate : 30.0);
  o->next_frame = w->t;
  kn_status st = kn_out_scene_build(w, &o->geom, err);
  if (!st && so->html) st = kn_html_begin(w, &o->geom, &o->html, err);
  if (!st && so->vtk) st = kn_vtk_begin(out_dir, &o->vtk, err);
  if (!st && so->plots) st = kn_plot_begin(w, kn_world_total_steps(w), &o->plot, err);
  if (!st) st = sample(o, w, err);
  if (st) {
    outputs_free(o, w);
    return st;
  }
  *out = o;
  return KN_OK;
}

kn_status kn_outputs_step(kn_outputs* o, const kn_world* w, kn_error* err) { return o ? sample(o, w, err) : KN_OK; }

kn_status kn_outputs_end(kn_outputs* o, kn_world* w, kn_error* err) {
  if (!o) return KN_OK;
  kn_status st = kn_vtk_end(o->vtk, err), s2;
  o->vtk = NULL;
  if (o->plot) {
    kn_error e2 = {0};
    s2 = kn_plot_end(o->plot, w, o->dir, &w->warnings, st ? &e2 : err);
    st = st ? st : s2;
    o->plot = NULL;
  }
  if (o->html) {
    kn_error e2 = {0};
    s2 = kn_html_end(o->html, w, &o->geom, o->dir, st ? &e2 : err);
    st = st ? st : s2;
    o->html = NULL;
  }
  free(o->dir);
  kn_out_scene_free(&o->geom);
  free(o);
  return st;
}
