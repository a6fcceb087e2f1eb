/* replay.html: a self-contained animation of a run. The minified three.js that CMake installed
 * from the npm registry at build time (tools/html/) is inlined, so the page opens from disk with
 * no network. The data: every shape tessellated once (output_mesh.c) and attached to its body,
 * per frame the pose of every body and the positions of every FEM surface vertex, and the MPM
 * particles (positions and a colour value: plastic strain |F_P - I|_F for bodies with a yield
 * stress, speed otherwise). The viewer code is tools/html/replay.js, embedded at build time as
 * KNEAD_REPLAY_JS.
 * Size caps (the file must stay openable): at most KN_HTML_MAX_PARTICLES particles are kept per
 * frame (every s-th particle of each body, s = ceil(total / cap), the same s for all bodies), and
 * when the particle data of all frames would exceed KN_HTML_MAX_PARTICLE_VALUES numbers, only
 * every k-th frame carries particles (k = ceil(values / budget), "mpm_stride"); rigid bodies and
 * FEM surfaces keep every frame. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/output_internal.h"

#include "replay_js.h" /* generated from tools/html/replay.js: static const char kn_replay_js[] */

#define KN_HTML_MAX_PARTICLES 4000
#define KN_HTML_MAX_PARTICLE_VALUES 2000000L

struct kn_html_recorder {
  int nrigid;               /* bodies of the trees (body_id 0 .. nrigid - 1) */
  long frame_size;          /* floats per frame: t, 7 per rigid body, 3 per FEM surface vertex */
  long nframe, cap;
  float* data;
  int pstride;              /* every pstride-th particle of each MPM body */
  long mpm_size;            /* floats per frame of particle data: 4 per kept particle */
  float* mpm;               /* nframe * mpm_size: per body 3 n positions, then n colour values */
};

// particles of an MPM body kept in the replay (every s-th)
static int kept(int np, int s) { return (np + s - 1) / s; }

// colour value of particle p: plastic strain for plastic bodies, else speed
static float colour_value(const kn_mpm_body* b, int p) {
  double t = 0;
  if (kn_mpm_part_of(b, p)->material.yield_stress > 0) {
    for (int k = 0; k < 9; k++) {
      double d = b->FP[9 * p + k] - (k % 4 == 0 ? 1.0 : 0.0);
      t += d * d;
    }
  } else {
    for (int k = 0; k < 3; k++) t += b->v[3 * p + k] * b->v[3 * p + k];
  }
  return (float)sqrt(t);
}

int kn_output_html_available(void) { return kn_html_three_js_path() != NULL; }

kn_status kn_html_begin(const kn_world* w, const kn_out_scene* g, kn_html_recorder** out, kn_error* err) {
  if (!kn_html_three_js_path())
    return kn_fail(err, KN_ERR_UNSUPPORTED,
                   "output.html: three.js is not installed (the build runs `npm ci` in tools/html/ and needs npm "
                   "and the npm registry; install npm and rebuild, or set KNEAD_THREE_JS to a three.min.js)");
  kn_html_recorder* h = kn_calloc(1, sizeof *h);
  if (!h) return kn_fail(err, KN_ERR_NOMEM, "output.html: out of memory");
  h->nrigid = g->fem_first_id;
  h->frame_size = 1 + 7L * h->nrigid;
  for (int i = 0; i < w->nfem; i++) h->frame_size += 3L * w->fems[i].nsurf_vert;
  long total = 0;
  for (int i = 0; i < w->nmpm; i++) total += w->mpms[i].body->np;
  h->pstride = (int)((total + KN_HTML_MAX_PARTICLES - 1) / KN_HTML_MAX_PARTICLES);
  if (h->pstride < 1) h->pstride = 1;
  for (int i = 0; i < w->nmpm; i++) h->mpm_size += 4L * kept(w->mpms[i].body->np, h->pstride);
  *out = h;
  return KN_OK;
}

kn_status kn_html_frame(kn_html_recorder* h, const kn_world* w, const kn_out_scene* g, kn_error* err) {
  if (h->nframe == h->cap) {
    long cap = h->cap ? 2 * h->cap : 64;
    float* d = realloc(h->data, sizeof(float) * (size_t)(cap * h->frame_size));
    if (d) h->data = d;
    float* m = d && h->mpm_size ? realloc(h->mpm, sizeof(float) * (size_t)(cap * h->mpm_size)) : NULL;
    if (m) h->mpm = m;
    if (!d || (h->mpm_size && !m))
      return kn_fail(err, KN_ERR_NOMEM, "output.html: out of memory recording frame %ld", h->nframe);
    h->cap = cap;
  }
  float* f = h->data + h->nframe * h->frame_size;
  *f++ = (float)w->t;
  for (int k = 0; k < w->ntree; k++)
    for (int b = 0; b < w->trees[k].robot->model->nbody; b++) {
      const kn_pose* X = &g->data[k]->X_wb[b];
      double q[4];
      kn_quat_from_mat3(X->R, q);
      /* three.js order: position, then quaternion (x, y, z, w) */
      f[0] = (float)X->p[0], f[1] = (float)X->p[1], f[2] = (float)X->p[2];
      f[3] = (float)q[1], f[4] = (float)q[2], f[5] = (float)q[3], f[6] = (float)q[0];
      f += 7;
    }
  for (int i = 0; i < w->nfem; i++)
    for (int j = 0; j < w->fems[i].nsurf_vert; j++)
      for (int a = 0; a < 3; a++) *f++ = (float)w->fems[i].body->x[3 * w->fems[i].surf_vert[j] + a];
  float* m = h->mpm + h->nframe * h->mpm_size;
  for (int i = 0; i < w->nmpm; i++) {
    const kn_mpm_body* b = w->mpms[i].body;
    for (int p = 0; p < b->np; p += h->pstride)
      for (int a = 0; a < 3; a++) *m++ = (float)b->x[3 * p + a];
    for (int p = 0; p < b->np; p += h->pstride) *m++ = colour_value(b, p);
  }
  h->nframe++;
  return KN_OK;
}

/* (n floats, precision) => them written to f as one JSON array by jansson, built and freed here so
 * that the frames never exist as JSON values all at once; 0 on success */
static int write_float_array(FILE* f, const float* d, long n, int digits) {
  json_t* a = json_array();
  int bad = !a;
  for (long j = 0; j < n && !bad; j++) bad |= json_array_append_new(a, kn_json_real((double)d[j]));
  /* JSON_ESCAPE_SLASH everywhere: "</script>" can never appear inside the page's script */
  if (!bad) bad = json_dumpf(a, f, JSON_COMPACT | JSON_ESCAPE_SLASH | JSON_REAL_PRECISION(digits)) != 0;
  json_decref(a);
  return bad;
}

/* (recording, world, scene geometry) => "const KNEAD = {...};" on f: names, shapes, FEM surfaces and
 * MPM bodies as one jansson object, then the frame arrays streamed one frame at a time; 0 on success */
static int write_data(FILE* f, const kn_html_recorder* h, const kn_world* w, const kn_out_scene* g) {
  json_t* doc = json_object();
  int bad = !doc;
  bad |= json_object_set_new(doc, "name", json_string(w->scene->name));
  bad |= json_object_set_new(doc, "nbody", json_integer(h->nrigid));
  json_t* list = json_array();
  bad |= json_object_set_new(doc, "bodies", list);
  for (int i = 0; i < h->nrigid; i++) bad |= json_array_append_new(list, json_string(g->body_names[i]));
  list = json_array();
  bad |= json_object_set_new(doc, "shapes", list);
  for (int i = 0; i < g->nshape && !bad; i++) {
    const kn_out_shape* s = &g->shapes[i];
    double q[4];
    kn_quat_from_mat3(s->X_bg.R, q);
    json_t *v = json_array(), *tri = json_array();
    for (int j = 0; j < 3 * s->nv; j++) bad |= json_array_append_new(v, json_real(s->v[j]));
    for (int j = 0; j < 3 * s->nt; j++) bad |= json_array_append_new(tri, json_integer(s->tri[j]));
    bad |= json_array_append_new(
        list, json_pack("{si si si s[ffff] s[fffffff] so so}", "b", s->body_id, "flat", s->flat, "plane",
                        s->nt == 2 && s->nv == 4, "c", s->rgba[0], s->rgba[1], s->rgba[2], s->rgba[3], "X",
                        s->X_bg.p[0], s->X_bg.p[1], s->X_bg.p[2], q[1], q[2], q[3], q[0], "v", v, "i", tri));
  }
  list = json_array();
  bad |= json_object_set_new(doc, "fems", list);
  for (int i = 0; i < w->nfem && !bad; i++) {
    const kn_world_fem* fe = &w->fems[i];
    int* inv = kn_calloc((size_t)fe->body->mesh.nvert, sizeof(int));
    json_t* tri = json_array();
    if (inv) {
      for (int j = 0; j < fe->nsurf_vert; j++) inv[fe->surf_vert[j]] = j;
      for (int t = 0; t < 3 * fe->body->mesh.nsurf; t++)
        bad |= json_array_append_new(tri, json_integer(inv[fe->body->mesh.surf[t]]));
    }
    free(inv);
    bad |= json_array_append_new(list, json_pack("{ss si so}", "name", fe->name, "n", fe->nsurf_vert, "i", tri));
  }
  /* MPM: per body its kept particle count, the colour quantity and its maximum over the run
   * (the viewer maps value / max to a blue-to-red ramp), and a point size of about the spacing */
  long kstride = h->nframe * h->mpm_size > KN_HTML_MAX_PARTICLE_VALUES
                     ? (h->nframe * h->mpm_size + KN_HTML_MAX_PARTICLE_VALUES - 1) / KN_HTML_MAX_PARTICLE_VALUES
                     : 1;
  list = json_array();
  bad |= json_object_set_new(doc, "mpm", list);
  long off = 0;
  for (int i = 0; i < w->nmpm; i++) {
    const kn_mpm_body* b = w->mpms[i].body;
    int n = kept(b->np, h->pstride);
    double vmax = 0;
    for (long k = 0; k < h->nframe; k++)
      for (int j = 0; j < n; j++) vmax = fmax(vmax, (double)h->mpm[k * h->mpm_size + off + 3 * n + j]);
    off += 4L * n;
    bad |= json_array_append_new(
        list, json_pack("{ss si si ss sf sf}", "name", w->mpms[i].name, "n", n, "np", b->np, "color",
                        b->parts[0].material.yield_stress > 0 ? "plastic_strain" : "speed", "max", vmax, "size",
                        b->h / cbrt((double)b->ppc) * cbrt((double)h->pstride)));
  }
  bad |= json_object_set_new(doc, "particle_stride", json_integer(h->pstride));
  bad |= json_object_set_new(doc, "mpm_stride", json_integer(kstride));
  bad |= json_object_set_new(doc, "frame_size", json_integer(h->frame_size));
  /* the object without its closing brace, then "mpm_frames" and "frames" */
  char* head = bad ? NULL : json_dumps(doc, JSON_ESCAPE_SLASH | JSON_REAL_PRECISION(7));
  json_decref(doc);
  if (!head) return 1;
  head[strlen(head) - 1] = 0;
  fprintf(f, "const KNEAD = %s,\n\"mpm_frames\": [\n", head);
  free(head);
  for (long k = 0; h->mpm_size && k < h->nframe && !bad; k += kstride) {
    if (k) fputs(",\n", f);
    bad = write_float_array(f, h->mpm + k * h->mpm_size, h->mpm_size, 5);
  }
  fputs("],\n\"frames\": [\n", f);
  for (long k = 0; k < h->nframe && !bad; k++) {
    if (k) fputs(",\n", f);
    bad = write_float_array(f, h->data + k * h->frame_size, h->frame_size, 6);
  }
  fputs("]};\n", f);
  return bad;
}

// (file) => its bytes, NUL-terminated, malloc'd
static char* read_all(const char* path, size_t* len) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 20, n = 0;
  char* buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n - 1, f);
    if (n < cap - 1) break;
    char* b = realloc(buf, cap *= 2);
    if (!b) free(buf);
    buf = b;
  }
  int bad = ferror(f);
  fclose(f);
  if (!buf || bad) {
    free(buf);
    return NULL;
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

kn_status kn_html_end(kn_html_recorder* h, const kn_world* w, const kn_out_scene* g, const char* out_dir,
                      kn_error* err) {
  if (!out_dir) {
    free(h->data), free(h->mpm), free(h);
    return KN_OK;
  }
  kn_status st = KN_OK;
  const char* three = kn_html_three_js_path();
  size_t nthree = 0;
  char* js = three ? read_all(three, &nthree) : NULL;
  char path[4096];
  snprintf(path, sizeof path, "%s/replay.html", out_dir);
  FILE* f = NULL;
  if (!js)
    st = kn_fail(err, KN_ERR_IO, "output.html: cannot read three.js (%s)", three ? three : "not installed");
  else if (strstr(js, "</script"))
    st = kn_fail(err, KN_ERR_INVALID, "output.html: %s contains \"</script\" and cannot be inlined", three);
  else if (!(f = fopen(path, "w")))
    st = kn_fail(err, KN_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  if (f) {
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>knead replay: ", f);
    for (const char* c = w->scene->name; *c; c++) {
      if (*c == '<')
        fputs("&lt;", f);
      else if (*c == '&')
        fputs("&amp;", f);
      else
        fputc(*c, f);
    }
    fputs("</title>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<style>\n"
          "html, body { margin: 0; height: 100%; overflow: hidden; background: #eef2f6; font: 13px sans-serif; }\n"
          "#bar { position: fixed; left: 0; right: 0; bottom: 0; display: flex; gap: 10px; align-items: center;\n"
          "       padding: 8px 12px; background: rgba(255,255,255,0.85); }\n"
          "#slider { flex: 1; }\n#info { position: fixed; left: 12px; top: 10px; color: #234; }\n"
          "</style>\n</head>\n<body>\n<div id=\"info\"></div>\n<div id=\"bar\"><button id=\"play\">pause</button>"
          "<input id=\"slider\" type=\"range\" min=\"0\" max=\"0\" value=\"0\"><span id=\"time\"></span></div>\n", f);
    fprintf(f, "<script>/* three.js r158 (MIT license, https://threejs.org), from the npm package three */\n");
    fwrite(js, 1, nthree, f);
    fputs("\n</script>\n<script>\n", f);
    if (write_data(f, h, w, g))
      st = kn_fail(err, KN_ERR_NOMEM, "%s: cannot write the replay's data: out of memory, or a name that is not UTF-8",
                   path);
    fputs("</script>\n<script>\n", f);
    fputs(kn_replay_js, f);
    fputs("</script>\n</body>\n</html>\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) st = kn_fail(err, KN_ERR_IO, "%s: write error", path);
  }
  free(js);
  free(h->data), free(h->mpm), free(h);
  return st;
}
