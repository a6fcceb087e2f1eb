/* A run: step the world for the scene's duration and write one folder of outputs,
 * trajectory.csv (every position coordinate by "robot/joint") and summary.json (timings, the
 * final state hash that regression tests compare bit for bit). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/checks_internal.h"
#include "sim/output_internal.h"
#include "sim/sim_internal.h"

// (path) => every missing folder along it created, like mkdir -p
static kn_status make_dirs(const char* path, kn_error* err) {
  char buf[4096];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
    return kn_fail(err, KN_ERR_IO, "%s: path too long", path);
  for (char* p = buf + 1;; p++) {
    if (*p == '/' || *p == 0) {
      char c = *p;
      *p = 0;
      if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return kn_fail(err, KN_ERR_IO, "%s: cannot create folder %s: %s", path, buf, strerror(errno));
      *p = c;
      if (!c) break;
    }
  }
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
    return kn_fail(err, KN_ERR_IO, "%s: not a folder", path);
  return KN_OK;
}

static void json_string(FILE* f, const char* s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", f);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static void write_row(FILE* f, const kn_world* w) {
  fprintf(f, "%.10g", w->t);
  for (int i = 0; i < w->nrobot; i++) {
    const kn_world_robot* r = &w->robots[i];
    const double* q = w->trees[r->tree].q + r->q_offset;
    for (int k = 0; k < r->nq; k++) fprintf(f, ",%.10g", q[k]);
  }
  for (int i = 0; i < w->nobject; i++) {
    const kn_world_tree* tr = &w->trees[w->objects[i].tree];
    for (int k = 0; k < tr->robot->model->nq; k++) fprintf(f, ",%.10g", tr->q[k]);
  }
  for (int i = 0; i < w->nfem; i++) {
    double c[3];
    kn_sim_deformable_centroid(&w->fems[i], c);
    fprintf(f, ",%.10g,%.10g,%.10g", c[0], c[1], c[2]);
  }
  for (int i = 0; i < w->nmpm; i++) {
    double c[3];
    kn_sim_mpm_centroid(&w->mpms[i], c);
    fprintf(f, ",%.10g,%.10g,%.10g", c[0], c[1], c[2]);
  }
  fputc('\n', f);
}

static kn_status write_summary(const kn_world* w, const char* out_dir, const kn_run_summary* sum, double rate,
                               const char* failure, kn_error* err) {
  char path[4096];
  snprintf(path, sizeof path, "%s/summary.json", out_dir);
  FILE* f = fopen(path, "w");
  if (!f) return kn_fail(err, KN_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  const kn_scene* s = w->scene;
  fputs("{\n  \"scene\": ", f);
  json_string(f, s->name);
  fputs(",\n  \"scene_file\": ", f);
  json_string(f, s->path);
  fprintf(f, ",\n  \"status\": \"%s\"", failure ? "failed" : "ok");
  if (failure) {
    fputs(",\n  \"error\": ", f);
    json_string(f, failure);
  }
  fprintf(f, ",\n  \"time_step\": %.17g,\n  \"duration\": %.17g,\n  \"steps\": %ld,\n  \"sim_time_s\": %.17g", s->time_step,
          s->duration, sum->steps, sum->sim_time_s);
  fprintf(f, ",\n  \"wall_time_s\": %.6f,\n  \"steps_per_second\": %.1f", sum->wall_time_s,
          sum->wall_time_s > 0 ? (double)sum->steps / sum->wall_time_s : 0.0);
  fprintf(f, ",\n  \"final_state_hash\": \"%016llx\"", (unsigned long long)sum->final_state_hash);
  fprintf(f, ",\n  \"contact_backend\": \"%s\"", kn_contact_backend_name(s->backend));
  const kn_run_stats* rs = &w->stats;
  double ns = rs->steps > 0 ? (double)rs->steps : 1.0;
  fprintf(f, ",\n  \"solver\": {\"steps\": %ld, \"iterations\": {\"total\": %ld, \"max\": %d, \"mean\": %.6g}, "
          "\"line_search_iterations\": {\"total\": %ld, \"max\": %d, \"mean\": %.6g}, "
          "\"contacts\": {\"total\": %ld, \"max\": %d, \"mean\": %.6g}, \"residual\": {\"max\": %.6g}}",
          rs->steps, rs->iterations, rs->max_iterations, (double)rs->iterations / ns, rs->line_search_iterations,
          rs->max_line_search_iterations, (double)rs->line_search_iterations / ns, rs->contacts, rs->max_contacts,
          (double)rs->contacts / ns, rs->max_residual);
  fprintf(f, ",\n  \"objects\": %d,\n  \"colliders\": %d", w->nobject, w->ncollider);
  fprintf(f, ",\n  \"deformables\": [");
  for (int i = 0; i < w->nfem; i++) {
    const kn_fem_body* b = w->fems[i].body;
    double c[3];
    kn_sim_deformable_centroid(&w->fems[i], c);
    fprintf(f, "%s{\"name\": ", i ? ", " : "");
    json_string(f, w->fems[i].name);
    fprintf(f, ", \"vertices\": %d, \"tets\": %d, \"mass\": %.10g, \"centroid\": [%.10g, %.10g, %.10g]}",
            b->mesh.nvert, b->mesh.ntet, kn_fem_body_mass(b), c[0], c[1], c[2]);
  }
  fprintf(f, "]");
  fprintf(f, ",\n  \"mpm\": [");
  for (int i = 0; i < w->nmpm; i++) {
    double c[3];
    kn_sim_mpm_centroid(&w->mpms[i], c);
    fprintf(f, "%s{\"name\": ", i ? ", " : "");
    json_string(f, w->mpms[i].name);
    fprintf(f, ", \"particles\": %d, \"mass\": %.10g, \"centroid\": [%.10g, %.10g, %.10g]}", w->mpms[i].body->np,
            kn_mpm_body_mass(w->mpms[i].body, NULL, NULL), c[0], c[1], c[2]);
  }
  fprintf(f, "]");
  kn_sim_checks_write_json(w, f);
  fprintf(f, ",\n  \"gravity\": [%.15g, %.15g, %.15g]", s->gravity[0], s->gravity[1], s->gravity[2]);
  fprintf(f, ",\n  \"trajectory_rows\": %ld,\n  \"trajectory_rate\": %.17g", sum->trajectory_rows, rate);
  fputs(",\n  \"robots\": [", f);
  for (int i = 0; i < w->nrobot; i++) {
    const kn_world_robot* r = &w->robots[i];
    fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
    json_string(f, r->name);
    fputs(", \"urdf\": ", f);
    json_string(f, r->urdf);
    fprintf(f, ", \"tree\": %d, \"attached_to\": ", r->tree);
    if (r->attached_to >= 0)
      json_string(f, w->robots[r->attached_to].name);
    else
      fputs("null", f);
    fprintf(f, ", \"nq\": %d, \"nv\": %d, \"dofs\": %d}", r->nq, r->nv, r->dofs);
  }
  fputs(w->nrobot ? "\n  ],\n  \"warnings\": [" : "],\n  \"warnings\": [", f);
  for (int k = 0; k < w->warnings.count; k++) {
    fputs(k ? ",\n    " : "\n    ", f);
    json_string(f, w->warnings.items[k]);
  }
  fputs(w->warnings.count ? "\n  ]\n}\n" : "]\n}\n", f);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) return kn_fail(err, KN_ERR_IO, "%s: write error", path);
  return KN_OK;
}

kn_status kn_world_run(kn_world* w, const char* out_dir, kn_progress_fn progress, void* user,
                       kn_run_summary* summary, kn_error* err) {
  if (summary) memset(summary, 0, sizeof *summary);
  kn_status st = make_dirs(out_dir, err);
  if (st) return st;
  char path[4096];
  snprintf(path, sizeof path, "%s/trajectory.csv", out_dir);
  FILE* f = fopen(path, "w");
  if (!f) return kn_fail(err, KN_ERR_IO, "%s: cannot write: %s", path, strerror(errno));

  /* rows every `stride` steps (trajectory_rate rows per second; 0 = every step), plus the first
   * and the last state */
  const kn_scene* s = w->scene;
  double rate = s->output ? s->output->trajectory_rate : 0.0;
  long stride = rate > 0 ? lround(1.0 / (rate * s->time_step)) : 1;
  if (stride < 1) stride = 1;
  fputs("t", f);
  for (int i = 0; i < w->nrobot; i++)
    for (int k = 0; k < w->robots[i].ncolumn; k++) fprintf(f, ",%s", w->robots[i].columns[k]);
  for (int i = 0; i < w->nobject; i++)
    for (int k = 0; k < w->objects[i].ncolumn; k++) fprintf(f, ",%s", w->objects[i].columns[k]);
  for (int i = 0; i < w->nfem; i++) fprintf(f, ",%s/cx,%s/cy,%s/cz", w->fems[i].name, w->fems[i].name, w->fems[i].name);
  for (int i = 0; i < w->nmpm; i++) fprintf(f, ",%s/cx,%s/cy,%s/cz", w->mpms[i].name, w->mpms[i].name, w->mpms[i].name);
  fputc('\n', f);
  FILE* fs = NULL;
  FILE* fc = NULL;
  if (s->output && s->output->solver) {
    snprintf(path, sizeof path, "%s/solver.csv", out_dir);
    if (!(fs = fopen(path, "w"))) {
      fclose(f);
      return kn_fail(err, KN_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    }
    fputs("t,iterations,line_search_iterations,residual,contacts,constraints\n", fs);
  }
  if (s->output && s->output->contacts) {
    snprintf(path, sizeof path, "%s/contacts.csv", out_dir);
    if (!(fc = fopen(path, "w"))) {
      fclose(f);
      if (fs) fclose(fs);
      return kn_fail(err, KN_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    }
    fputs("t,collider_a,collider_b,px,py,pz,nx,ny,nz,fx,fy,fz,phi\n", fc);
  }

  kn_outputs* extra = NULL; /* vtk frames, plots, replay.html (output_frames.c) */
  if ((st = kn_outputs_begin(w, out_dir, &extra, err))) {
    fclose(f);
    if (fs) fclose(fs);
    if (fc) fclose(fc);
    return st;
  }
  kn_run_summary sum = {0};
  sum.stepped = 1;
  long total = kn_world_total_steps(w);
  write_row(f, w);
  sum.trajectory_rows = 1;
  double wall0 = kn_wall_time();
  int last_report = -1;
  if (progress) progress(user, 0.0);
  char failure[KN_ERROR_MSG] = "";
  for (long n = 1; n <= total; n++) {
    st = kn_world_step(w, err);
    if (st) {
      snprintf(failure, sizeof failure, "%s", err->msg);
      break;
    }
    sum.steps++;
    if ((st = kn_outputs_step(extra, w, err))) {
      snprintf(failure, sizeof failure, "%s", err->msg);
      break;
    }
    if (fs)
      fprintf(fs, "%.10g,%d,%d,%.6g,%d,%d\n", w->t, w->last.iterations, w->last.line_search_iterations,
              w->last.residual, w->last.contacts, w->last.constraints);
    for (int c = 0; fc && c < w->ncontact; c++) {
      const kn_world_contact* k = &w->contacts[c];
      fprintf(fc, "%.10g,%s,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.6g\n", w->t,
              w->colliders[k->a].name, w->colliders[k->b].name, k->p[0], k->p[1], k->p[2], k->n[0], k->n[1],
              k->n[2], k->f[0], k->f[1], k->f[2], k->phi);
    }
    /* FEM contacts: A is a collider or a deformable, B the deformable (normal from A into B, force on B) */
    for (int c = 0; fc && c < w->nfem_contact; c++) {
      const kn_world_fem_contact* k = &w->fem_contacts[c];
      fprintf(fc, "%.10g,%s,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.6g\n", w->t,
              k->a_fem >= 0 ? w->fems[k->a_fem].name : w->colliders[k->a_collider].name, w->fems[k->fem_b].name,
              k->p[0], k->p[1], k->p[2], k->n[0], k->n[1], k->n[2], k->f[0], k->f[1], k->f[2], k->phi);
    }
    /* MPM contacts: A is the deformable (one row per particle), B the collider */
    for (int c = 0; fc && c < w->nmpm_contact; c++) {
      const kn_world_mpm_contact* k = &w->mpm_contacts[c];
      fprintf(fc, "%.10g,%s,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.6g\n", w->t, w->mpms[k->mpm].name,
              w->colliders[k->collider].name, k->p[0], k->p[1], k->p[2], k->n[0], k->n[1], k->n[2], k->f[0], k->f[1],
              k->f[2], k->phi);
    }
    if (n % stride == 0 || n == total) {
      write_row(f, w);
      sum.trajectory_rows++;
    }
    int report = (int)(200.0 * (double)n / (double)total);
    if (progress && report != last_report) {
      last_report = report;
      progress(user, (double)n / (double)total);
    }
  }
  sum.wall_time_s = kn_wall_time() - wall0;
  sum.sim_time_s = w->t;
  sum.final_state_hash = kn_world_state_hash(w);
  kn_error oerr = {0};
  kn_status os = kn_outputs_end(extra, w, &oerr); /* also after a failed step: the frames so far */
  int sbad = 0;
  if (fs) sbad |= ferror(fs) | (fclose(fs) != 0);
  if (fc) sbad |= ferror(fc) | (fclose(fc) != 0);
  int bad = ferror(f) | sbad;
  if (summary) *summary = sum;
  if (fclose(f) != 0 || bad) {
    if (!st) st = kn_fail(err, KN_ERR_IO, "%s: write error", path);
    return st;
  }
  kn_error werr = {0};
  kn_status ws = write_summary(w, out_dir, &sum, rate, st ? failure : NULL, &werr);
  if (summary) *summary = sum;
  if (st) return st;
  if (ws) {
    if (err) *err = werr;
    return ws;
  }
  if (os) {
    if (err) *err = oerr;
    return os;
  }
  return KN_OK;
}
