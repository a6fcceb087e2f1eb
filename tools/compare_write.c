/* `knead compare`'s files: the per-run CSV series, compare.md, compare.json, the gnuplot plots
 * (one curve per backend, and a follows_curve check's reference) and the side-by-side replay page. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/output.h"
#include "tools/cli.h"
#include "tools/compare.h"

// (path) => the folder and its parents created; 0 on success
int compare_make_dirs(const char* path) {
  char p[4096];
  snprintf(p, sizeof p, "%s", path);
  for (char* s = p + 1; *s; s++)
    if (*s == '/') {
      *s = 0;
      if (mkdir(p, 0777) != 0 && errno != EEXIST) return -1;
      *s = '/';
    }
  return mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

// (name) => a file-name-safe copy in out ('/', ' ' and other odd characters become '_')
void compare_safe_name(const char* name, char* out, size_t cap) {
  size_t k = 0;
  for (; *name && k + 1 < cap; name++) {
    char ch = *name;
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
             ch == '_' || ch == '.';
    out[k++] = ok ? ch : '_';
  }
  out[k] = 0;
}

// (cell) => DIR/<scene>/<backend>.csv; 0, or -1 when it cannot be written
int compare_write_series(const cell* c, const char* dir, const char* backend, char* path, size_t cap) {
  path[0] = 0;
  if (c->nrows == 0) return 0;
  if (compare_make_dirs(dir) != 0) return -1;
  snprintf(path, cap, "%s/%s.csv", dir, backend);
  FILE* f = fopen(path, "w");
  if (!f) return -1;
  for (int i = 0; i < c->nnames; i++) fprintf(f, "%s%s", i ? "," : "", c->names[i]);
  fputc('\n', f);
  for (int r = 0; r < c->nrows; r++) {
    for (int i = 0; i < c->nnames; i++) fprintf(f, "%s%.9g", i ? "," : "", c->data[(size_t)r * (size_t)c->nnames + (size_t)i]);
    fputc('\n', f);
  }
  int bad = ferror(f);
  return fclose(f) != 0 || bad ? -1 : 0;
}

// (rows) => compare.md
int compare_write_markdown(const char* path, const scene_row* rows, int nrow, const char* const* backends, int nb,
                          const char* const* sets, int nsets) {
  FILE* f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "# knead compare\n\nBackends: ");
  for (int b = 0; b < nb; b++) fprintf(f, "%s%s", b ? ", " : "", backends[b]);
  fprintf(f, ". Build %s.", kn_build_id());
  if (nsets) {
    fprintf(f, " Overrides:");
    for (int i = 0; i < nsets; i++) fprintf(f, " `%s`", sets[i]);
  }
  fprintf(f, "\n\nPer step: wall time, solver iterations, contacts; deepest phi: the most negative signed distance "
             "of any contact over the run (penetration depth when negative).\n");
  for (int s = 0; s < nrow; s++) {
    const scene_row* r = &rows[s];
    fprintf(f, "\n## %s\n\n`%s`\n\n", r->name, r->path);
    /* the checks' names: the first cell that has them */
    const cell* named = NULL;
    for (int b = 0; b < nb && !named; b++)
      if (r->cells[b].nchecks) named = &r->cells[b];
    fprintf(f, "| backend | status |");
    for (int k = 0; named && k < named->nchecks; k++) fprintf(f, " %s (%s) |", named->checks[k].name, named->checks[k].type);
    fprintf(f, " ms/step | iterations/step | contacts/step | deepest phi [m] | final state hash |\n|---|---|");
    for (int k = 0; named && k < named->nchecks; k++) fprintf(f, "---|");
    fprintf(f, "---|---|---|---|---|\n");
    for (int b = 0; b < nb; b++) {
      const cell* c = &r->cells[b];
      char st[1200];
      compare_status_text(c, st, sizeof st);
      for (char* p = st; *p; p++)
        if (*p == '|') *p = '/';
      fprintf(f, "| %s | %s |", backends[b], st);
      for (int k = 0; named && k < named->nchecks; k++) {
        if (k < c->nchecks && isnan(c->checks[k].measured))
          fprintf(f, " %s (nothing measured) |", compare_verdict(&c->checks[k]));
        else if (k < c->nchecks)
          fprintf(f, " %s %.4g %s |", compare_verdict(&c->checks[k]), c->checks[k].measured, c->checks[k].unit);
        else
          fprintf(f, " – |");
      }
      if (c->steps > 0)
        fprintf(f, " %.4g | %.3g | %.3g | %.3g | `%s` |\n", 1e3 * c->wall, c->iterations, c->contacts, c->worst, c->hash);
      else
        fprintf(f, " – | – | – | – | – |\n");
    }
    for (int k = 0; named && k < named->nchecks; k++) {
      fprintf(f, "\n- **%s**:", named->checks[k].name);
      for (int b = 0; b < nb; b++)
        if (k < r->cells[b].nchecks) fprintf(f, " %s: %s;", backends[b], r->cells[b].checks[k].message);
    }
    if (named) fputc('\n', f);
    /* the plots compare_write_plots draws (a check with a series) */
    const cell* series = NULL;
    for (int b = 0; b < nb && !series; b++)
      if (r->cells[b].nnames > 1) series = &r->cells[b];
    for (int k = 1; series && k < series->nnames; k++) {
      const char* q = series->names[k];
      size_t ql = strlen(q);
      if (ql > 10 && !strcmp(q + ql - 10, "/reference")) continue;
      char safe[256];
      compare_safe_name(q, safe, sizeof safe);
      fprintf(f, "%s[%s](plots/%s-%s.svg)", k == 1 ? "\nPlots: " : ", ", q, r->dir_name, safe);
    }
    if (series) fputc('\n', f);
  }
  int bad = ferror(f);
  return fclose(f) != 0 || bad ? -1 : 0;
}

// (rows) => compare.json (format knead-compare-1: per scene its runs, one per backend)
int compare_write_json(const char* path, const char* out_dir, const scene_row* rows, int nrow,
                      const char* const* backends, int nb, const char* const* sets, int nsets) {
  size_t nout = strlen(out_dir);
  json_t* root = json_object();
  json_t* bl = json_array();
  json_t* ov = json_array();
  json_t* scenes = json_array();
  for (int b = 0; b < nb; b++) json_array_append_new(bl, json_string(backends[b]));
  for (int i = 0; i < nsets; i++) json_array_append_new(ov, json_string(sets[i]));
  json_object_set_new(root, "format", json_string("knead-compare-1"));
  json_object_set_new(root, "build", json_string(kn_build_id()));
  json_object_set_new(root, "backends", bl);
  json_object_set_new(root, "overrides", ov);
  json_object_set_new(root, "scenes", scenes);
  for (int s = 0; s < nrow; s++) {
    json_t* js = json_object();
    json_array_append_new(scenes, js);
    json_object_set_new(js, "path", json_string(rows[s].path));
    json_object_set_new(js, "name", json_string(rows[s].name));
    json_t* runs = json_array();
    json_object_set_new(js, "runs", runs);
    for (int b = 0; b < nb; b++) {
      const cell* c = &rows[s].cells[b];
      json_t* jc = json_object();
      json_array_append_new(runs, jc);
      json_object_set_new(jc, "backend", json_string(backends[b]));
      json_object_set_new(jc, "status", json_string(c->status));
      json_object_set_new(jc, "message", json_string(c->message ? c->message : ""));
      json_object_set_new(jc, "steps", json_integer(c->steps));
      json_object_set_new(jc, "wall_per_step", kn_json_real(c->wall));
      json_object_set_new(jc, "iterations_per_step", kn_json_real(c->iterations));
      json_object_set_new(jc, "contacts_per_step", kn_json_real(c->contacts));
      json_object_set_new(jc, "deepest_phi", kn_json_real(c->worst));
      json_object_set_new(jc, "state_hash", c->hash[0] ? json_string(c->hash) : json_null());
      /* the CSV relative to DIR, so the folder can move */
      const char* series = rows[s].series[b];
      if (!strncmp(series, out_dir, nout) && series[nout] == '/') series += nout + 1;
      json_object_set_new(jc, "series", series[0] ? json_string(series) : json_null());
      json_t* checks = json_array();
      json_object_set_new(jc, "checks", checks);
      for (int k = 0; k < c->nchecks; k++) {
        const cell_check* ck = &c->checks[k];
        json_t* jk = json_object();
        json_array_append_new(checks, jk);
        json_object_set_new(jk, "name", json_string(ck->name));
        json_object_set_new(jk, "type", json_string(ck->type));
        json_object_set_new(jk, "passed", json_boolean(ck->passed));
        json_object_set_new(jk, "expect", json_string(ck->expect_fail ? "fail" : "pass"));
        json_object_set_new(jk, "measured", kn_json_real(ck->measured));
        json_object_set_new(jk, "unit", json_string(ck->unit));
        json_object_set_new(jk, "t", kn_json_real(ck->t >= 0 ? ck->t : NAN));
        json_object_set_new(jk, "message", json_string(ck->message));
      }
    }
  }
  int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
  json_decref(root);
  return rc;
}

// (rows) => DIR/plots/compare.gp and the SVGs drawn by gnuplot; the number of plots, -1 on an I/O error
int compare_write_plots(const char* out_dir, const scene_row* rows, int nrow, const char* const* backends, int nb,
                       int* gnuplot_missing) {
  char dir[4200], script[4300], log[4300];
  snprintf(dir, sizeof dir, "%s/plots", out_dir);
  if (compare_make_dirs(dir) != 0) return -1;
  snprintf(script, sizeof script, "%s/compare.gp", dir);
  snprintf(log, sizeof log, "%s/gnuplot.log", dir);
  FILE* gp = fopen(script, "w");
  if (!gp) return -1;
  fputs("# knead compare: each check's quantity over time per backend (gnuplot compare.gp redraws them)\n"
        "set terminal svg size 900,480 dynamic noenhanced font 'sans,12' background '#ffffff'\n"
        "set xlabel 't [s]'\nset grid\nset key outside right top\nset datafile separator ','\n\n", gp);
  static const int marker[] = {7, 5, 9, 2, 1, 6, 4, 8};
  int nplot = 0;
  for (int s = 0; s < nrow; s++) {
    const scene_row* r = &rows[s];
    const cell* named = NULL;
    for (int b = 0; b < nb && !named; b++)
      if (r->cells[b].nnames > 1) named = &r->cells[b];
    for (int col = 1; named && col < named->nnames; col++) {
      const char* q = named->names[col];
      size_t ql = strlen(q);
      if (ql > 10 && !strcmp(q + ql - 10, "/reference")) continue;
      char safe[256], path[4600], ref[300];
      compare_safe_name(q, safe, sizeof safe);
      snprintf(path, sizeof path, "%s/%s-%s.svg", dir, r->dir_name, safe);
      snprintf(ref, sizeof ref, "%s/reference", q);
      const char* unit = "";
      for (int k = 0; k < named->nchecks; k++)
        if (!strcmp(named->checks[k].name, q)) unit = named->checks[k].unit;
      fputs("set output ", gp);
      kn_output_gnuplot_string(gp, path);
      fputs("\nset title ", gp);
      char title[600];
      snprintf(title, sizeof title, "%s: %s, per backend", r->name, q);
      kn_output_gnuplot_string(gp, title);
      fputs("\nset ylabel ", gp);
      snprintf(title, sizeof title, "%s [%s]", q, unit);
      kn_output_gnuplot_string(gp, title);
      fputs("\nplot ", gp);
      int ncurve = 0;
      const char* ref_file = NULL;
      int ref_col = -1;
      for (int b = 0; b < nb; b++) {
        const cell* c = &r->cells[b];
        int k = compare_column_of(c, q);
        if (k < 0 || !r->series[b][0]) continue;
        if (!ref_file && (ref_col = compare_column_of(c, ref)) >= 0) ref_file = r->series[b];
        int every = c->nrows > 12 ? c->nrows / 12 : 1;
        if (ncurve++) fputs(", \\\n     ", gp);
        kn_output_gnuplot_string(gp, r->series[b]);
        fprintf(gp, " skip 1 using 1:%d with linespoints lw 1.5 lc %d dt %d pt %d ps 0.7 pointinterval %d title ",
                k + 1, b + 1, b % 5 + 1, marker[b % 8], every);
        kn_output_gnuplot_string(gp, backends[b]);
      }
      if (ref_file) {
        if (ncurve++) fputs(", \\\n     ", gp);
        kn_output_gnuplot_string(gp, ref_file);
        fprintf(gp, " skip 1 using 1:%d with lines lw 2.5 lc rgb '#000000' dt 3 title 'reference'", ref_col + 1);
      }
      if (ncurve == 0) fputs("NaN notitle", gp);
      fputs("\n\n", gp);
      nplot += ncurve > 0;
    }
  }
  int bad = ferror(gp);
  if (fclose(gp) != 0 || bad) return -1;
  if (nplot == 0) return 0;
  int rc = kn_output_run_gnuplot(script, log);
  if (rc < 0) {
    *gnuplot_missing = 1;
    knead_error("compare: plots skipped: cannot run gnuplot (%s; Debian package gnuplot-nox, or set KNEAD_GNUPLOT); "
                "the data are in the CSV files and %s", strerror(errno), script);
    return 0;
  }
  if (rc != 0) knead_error("compare: gnuplot exited with status %d, see %s", rc, log);
  return nplot;
}

// (text) => HTML-escaped on f
static void html_text(FILE* f, const char* s) {
  for (; s && *s; s++) {
    if (*s == '<') fputs("&lt;", f);
    else if (*s == '>') fputs("&gt;", f);
    else if (*s == '&') fputs("&amp;", f);
    else if (*s == '"') fputs("&quot;", f);
    else fputc(*s, f);
  }
}

// (scene whose runs wrote replay.html) => DIR/<scene>/replay.html: the backends' replays side by
// side, driven in step by one clock and slider (each replay.js answers {knead: 'seek', t} messages)
int compare_write_side_by_side(const char* path, const scene_row* r, const char* const* backends, int nb) {
  FILE* f = fopen(path, "w");
  if (!f) return -1;
  double T = 0;
  for (int b = 0; b < nb; b++) {
    const cell* c = &r->cells[b];
    if (c->nrows > 0) T = fmax(T, c->data[(size_t)(c->nrows - 1) * (size_t)c->nnames]);
  }
  fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>knead compare: ", f);
  html_text(f, r->name);
  fputs("</title>\n<style>body{margin:0;font:14px sans-serif;background:#f4f4f4}#bar{padding:6px 10px}"
        "#grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:6px;padding:6px}"
        ".cell{background:#fff;border:1px solid #ccc}.cell h3{margin:4px 8px;font-size:14px}"
        ".cell iframe{width:100%;height:420px;border:0}.cell p{margin:8px;color:#a00}</style></head>\n<body>\n"
        "<div id=\"bar\"><b>", f);
  html_text(f, r->name);
  fprintf(f, "</b>: the backends in step &nbsp; <button id=\"play\">pause</button> <input id=\"slider\" "
             "type=\"range\" min=\"0\" max=\"%.9g\" step=\"any\" value=\"0\" style=\"width:50%%\"> <span "
             "id=\"time\">t = 0 s</span></div>\n<div id=\"grid\">\n", T);
  for (int b = 0; b < nb; b++) {
    const cell* c = &r->cells[b];
    fputs("<div class=\"cell\"><h3>", f);
    html_text(f, backends[b]);
    fputs(": ", f);
    html_text(f, c->status);
    fputs("</h3>", f);
    if (c->replay) {
      /* the page sits in DIR/<scene>/, the replay in DIR/<scene>/<backend>/ */
      const char* rel = strchr(c->replay, '/');
      fputs("<iframe src=\"", f);
      html_text(f, rel ? rel + 1 : c->replay);
      fputs("\"></iframe>", f);
    } else {
      fputs("<p>", f);
      html_text(f, c->message && c->message[0] ? c->message : "no replay");
      fputs("</p>", f);
    }
    fputs("</div>\n", f);
  }
  fputs("</div>\n<script>\n"
        "(function () {\n"
        "  const frames = Array.prototype.slice.call(document.querySelectorAll('iframe'));\n"
        "  const slider = document.getElementById('slider'), play = document.getElementById('play');\n"
        "  const label = document.getElementById('time'), T = Number(slider.max);\n"
        "  let t = 0, playing = true, last = null;\n"
        "  function send() {\n"
        "    label.textContent = 't = ' + t.toFixed(3) + ' s';\n"
        "    for (const f of frames) if (f.contentWindow) f.contentWindow.postMessage({ knead: 'seek', t: t }, '*');\n"
        "  }\n"
        "  play.addEventListener('click', function () {\n"
        "    playing = !playing;\n"
        "    if (playing && t >= T) t = 0;\n"
        "    play.textContent = playing ? 'pause' : 'play';\n"
        "  });\n"
        "  slider.addEventListener('input', function () {\n"
        "    playing = false;\n"
        "    play.textContent = 'play';\n"
        "    t = Number(slider.value);\n"
        "    send();\n"
        "  });\n"
        "  function tick(now) {\n"
        "    if (last !== null && playing) {\n"
        "      t += (now - last) / 1000;\n"
        "      if (t > T) t = 0;\n"
        "      slider.value = String(t);\n"
        "      send();\n"
        "    }\n"
        "    last = now;\n"
        "    requestAnimationFrame(tick);\n"
        "  }\n"
        "  requestAnimationFrame(tick);\n"
        "})();\n"
        "</script>\n</body></html>\n", f);
  int bad = ferror(f);
  return fclose(f) != 0 || bad ? -1 : 0;
}
