/* A run: step the world for the scene's duration and write one folder of outputs,
 * trajectory.csv (every position coordinate by "robot/joint") and summary.json (timings, the
 * final state hash that regression tests compare bit for bit). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "output/output_internal.h"

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


// (world) => one trajectory.csv row: t, then kn_world_trajectory_row (world coordinates)
static void write_row(FILE* f, const kn_world* w, double* row) {
  fprintf(f, "%.10g", w->t);
  kn_world_trajectory_row(w, row);
  for (int k = 0, n = kn_world_trajectory_ncolumn(w); k < n; k++) fprintf(f, ",%.10g", row[k]);
  fputc('\n', f);
}

/* (world after the run, its numbers, failure message or NULL) => out_dir/summary.json: the scene, the
 * knead that ran it (version, git revision, build id), timings, solver statistics, bodies, checks */
static kn_status write_summary(const kn_world* w, const char* out_dir, const kn_run_summary* sum, double rate,
                               const char* failure, kn_error* err) {
  char path[4096];
  snprintf(path, sizeof path, "%s/summary.json", out_dir);
  const kn_scene* s = w->scene;
  char hash[17];
  snprintf(hash, sizeof hash, "%016llx", (unsigned long long)sum->final_state_hash);
  json_t* doc = json_object();
  int bad = !doc;
  bad |= json_object_set_new(doc, "scene", json_string(s->name));
  bad |= json_object_set_new(doc, "scene_file", s->path ? json_string(s->path) : json_null());
  bad |= json_object_set_new(doc, "status", json_string(failure ? "failed" : "ok"));
  if (failure) bad |= json_object_set_new(doc, "error", json_string(failure));
  /* the --set overrides the scene was loaded with: which variant of the file this result is */
  json_t* overrides = json_array();
  for (int i = 0; overrides && i < s->noverrides; i++) bad |= json_array_append_new(overrides, json_string(s->overrides[i]));
  bad |= json_object_set_new(doc, "overrides", overrides);
  bad |= kn_json_set_build(doc);
  bad |= json_object_set_new(doc, "time_step", json_real(s->time_step));
  bad |= json_object_set_new(doc, "duration", json_real(s->duration));
  bad |= json_object_set_new(doc, "steps", json_integer(sum->steps));
  bad |= json_object_set_new(doc, "sim_time_s", json_real(sum->sim_time_s));
  bad |= json_object_set_new(doc, "wall_time_s", json_real(sum->wall_time_s));
  bad |= json_object_set_new(doc, "steps_per_second",
                             json_real(sum->wall_time_s > 0 ? (double)sum->steps / sum->wall_time_s : 0.0));
  bad |= json_object_set_new(doc, "final_state_hash", json_string(hash));
  bad |= json_object_set_new(doc, "contact_backend", json_string(kn_contact_backend_name(s->backend)));
  const kn_run_stats* rs = &w->stats;
  double ns = rs->steps > 0 ? (double)rs->steps : 1.0;
  bad |= json_object_set_new(
      doc, "solver",
      json_pack("{sI s{sIsisf} s{sIsisf} s{sIsisf} s{so}}", "steps", (json_int_t)rs->steps, "iterations", "total",
                (json_int_t)rs->iterations, "max", rs->max_iterations, "mean", (double)rs->iterations / ns,
                "line_search_iterations", "total", (json_int_t)rs->line_search_iterations, "max",
                rs->max_line_search_iterations, "mean", (double)rs->line_search_iterations / ns, "contacts", "total",
                (json_int_t)rs->contacts, "max", rs->max_contacts, "mean", (double)rs->contacts / ns, "residual", "max",
                kn_json_real(rs->max_residual)));
  bad |= json_object_set_new(doc, "objects", json_integer(w->nobject));
  bad |= json_object_set_new(doc, "colliders", json_integer(w->ncollider));
  json_t* list = json_array();
  bad |= json_object_set_new(doc, "deformables", list);
  for (int i = 0; i < w->nfem; i++) {
    const kn_fem_body* b = w->fems[i].body;
    double c[3];
    kn_sim_deformable_centroid(&w->fems[i], c);
    bad |= json_array_append_new(list, json_pack("{sssisisfs[fff]}", "name", w->fems[i].name, "vertices",
                                                 b->mesh.nvert, "tets", b->mesh.ntet, "mass", kn_fem_body_mass(b),
                                                 "centroid", c[0], c[1], c[2]));
  }
  list = json_array();
  bad |= json_object_set_new(doc, "mpm", list);
  for (int i = 0; i < w->nmpm; i++) {
    double c[3];
    kn_sim_mpm_centroid(&w->mpms[i], c);
    bad |= json_array_append_new(list, json_pack("{sssisfs[fff]}", "name", w->mpms[i].name, "particles",
                                                 w->mpms[i].body->np, "mass",
                                                 kn_mpm_body_mass(w->mpms[i].body, NULL, NULL), "centroid", c[0],
                                                 c[1], c[2]));
  }
  for (int i = 0; i < w->nobserver; i++) { /* the checks' results (check/) */
    const kn_world_observer* o = &w->observers[i];
    json_t* section = o->ops->summary ? o->ops->summary(o->self, w) : NULL;
    if (section) bad |= json_object_set_new(doc, o->ops->name, section);
  }
  bad |= json_object_set_new(doc, "gravity", json_pack("[fff]", s->gravity[0], s->gravity[1], s->gravity[2]));
  bad |= json_object_set_new(doc, "trajectory_rows", json_integer(sum->trajectory_rows));
  bad |= json_object_set_new(doc, "trajectory_rate", json_real(rate));
  list = json_array();
  bad |= json_object_set_new(doc, "robots", list);
  for (int i = 0; i < w->nrobot; i++) {
    const kn_world_robot* r = &w->robots[i];
    bad |= json_array_append_new(
        list, json_pack("{sssosisosisisi}", "name", r->name, "urdf", r->urdf ? json_string(r->urdf) : json_null(),
                        "tree", r->tree, "attached_to",
                        r->attached_to >= 0 ? json_string(w->robots[r->attached_to].name) : json_null(), "nq", r->nq,
                        "nv", r->nv, "dofs", r->dofs));
  }
  list = json_array();
  bad |= json_object_set_new(doc, "warnings", list);
  for (int k = 0; k < w->warnings.count; k++) bad |= json_array_append_new(list, json_string(w->warnings.items[k]));
  kn_status st = kn_json_built(bad, path, err);
  /* one line (jq pretty-prints it); 15 digits: a report, not a baseline */
  if (!st) st = kn_json_write_file(doc, path, JSON_REAL_PRECISION(15), err);
  json_decref(doc);
  return st;
}

kn_status kn_world_run(kn_world* w, const char* out_dir, kn_progress_fn progress, void* user,
                       kn_run_summary* summary, kn_error* err) {
  return kn_world_run_observed(w, out_dir, progress, NULL, user, summary, err);
}

kn_status kn_world_run_observed(kn_world* w, const char* out_dir, kn_progress_fn progress, kn_step_fn observe,
                                void* user, kn_run_summary* summary, kn_error* err) {
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
  kn_out_trajectory_header(w, f);
  double* row = kn_calloc((size_t)kn_world_trajectory_ncolumn(w) + 1, sizeof *row);
  snprintf(path, sizeof path, "%s/trajectory.json", out_dir);
  if (!row || (st = kn_out_trajectory_describe(w, path, err))) {
    free(row);
    fclose(f);
    return st ? st : kn_fail(err, KN_ERR_NOMEM, "trajectory.csv: out of memory");
  }
  FILE* fs = NULL;
  FILE* fc = NULL;
  if (s->output && s->output->solver) {
    snprintf(path, sizeof path, "%s/solver.csv", out_dir);
    if (!(fs = fopen(path, "w"))) {
      free(row);
      fclose(f);
      return kn_fail(err, KN_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    }
    fputs("t,iterations,line_search_iterations,residual,contacts,constraints\n", fs);
  }
  if (s->output && s->output->contacts) {
    snprintf(path, sizeof path, "%s/contacts.csv", out_dir);
    if (!(fc = fopen(path, "w"))) {
      free(row);
      fclose(f);
      if (fs) fclose(fs);
      return kn_fail(err, KN_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    }
    fputs("t,collider_a,collider_b,px,py,pz,nx,ny,nz,fx,fy,fz,phi\n", fc);
  }

  kn_outputs* extra = NULL; /* vtk frames, plots, replay.html (output_frames.c) */
  if ((st = kn_outputs_begin(w, out_dir, &extra, err))) {
    free(row);
    fclose(f);
    if (fs) fclose(fs);
    if (fc) fclose(fc);
    return st;
  }
  kn_run_summary sum = {0};
  sum.stepped = 1;
  /* the steps left: all of them, or the rest after kn_world_load_state */
  long all = kn_world_total_steps(w), total = all - w->step;
  if (total < 0) total = 0;
  write_row(f, w, row);
  sum.trajectory_rows = 1;
  double wall0 = kn_wall_time();
  int last_report = -1;
  if (progress) progress(user, all > 0 ? fmin(1.0, (double)w->step / (double)all) : 0.0);
  char failure[KN_ERROR_MSG] = "";
  for (long n = 1; n <= total; n++) {
    st = kn_world_step(w, err);
    if (st) {
      snprintf(failure, sizeof failure, "%s", err->msg);
      break;
    }
    sum.steps++;
    if (observe && (st = observe(user, w, err))) {
      snprintf(failure, sizeof failure, "%s", err->msg);
      break;
    }
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
    if (w->step % stride == 0 || n == total) {
      write_row(f, w, row);
      sum.trajectory_rows++;
    }
    /* the fraction of the scene's duration, also when resumed */
    int report = (int)(200.0 * (double)w->step / (double)all);
    if (progress && report != last_report) {
      last_report = report;
      progress(user, (double)w->step / (double)all);
    }
  }
  free(row);
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
