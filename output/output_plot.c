/* Plots of a run, drawn by gnuplot as SVG: contact forces over time (the sum of the point force
 * magnitudes per pair of colliders, FEM and MPM bodies, and the magnitude of the net contact force
 * on each FEM and MPM body), joint tracking error of every PD controller (reference
 * kn_ctrl_reference minus actual) and the height of every free object and FEM and MPM centroid.
 * Each curve has its own colour, dash pattern and marker, and the markers of curve k of n sit k/n
 * of a marker interval after curve 0's, so curves that coincide (the two fingers' forces on a
 * centred object) still both show. The numbers go to plots/<name>.dat and the commands to
 * plots/plots.gp, so a plot can be redrawn or restyled by hand; gnuplot runs by posix_spawn (no
 * shell). Without gnuplot the plots are skipped with a warning. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "output/output_internal.h"

extern char** environ;

#define KN_PLOT_MAX_SAMPLES 4000
#define KN_PLOT_MAX_PAIRS 12  /* contact pairs plotted one by one; the rest summed as "other" */
#define KN_PLOT_MARKERS 12    /* markers per curve */

typedef struct {
  char* name;
  double* y;                /* per sample */
} series;

typedef struct {
  char* name;               /* controller name: the plot's file name */
  int tree;
  const kn_controller* c;
  series* err;              /* per dof */
  double* q_ref;            /* scratch, ndof */
} tracking;

struct kn_plot_recorder {
  long stride, steps;       /* sample every stride steps */
  int n, cap;               /* samples */
  double* t;
  int npair;
  int* pair;                /* 2 per pair: contact side ids a < b (side_name) */
  series pairs[KN_PLOT_MAX_PAIRS + 1]; /* the last: "other pairs" */
  series* fem_force;        /* per FEM body, then per MPM body: |net contact force| */
  int ntrack;
  tracking* track;
  int nheight;
  series* height;           /* free objects, then FEM centroids, then MPM centroids */
  int* height_tree;         /* tree of each object height, -1 for a FEM, -2 for an MPM body */
};

static double* zeros(int n) { return kn_calloc((size_t)n, sizeof(double)); }

// "name" plus a suffix, malloc'd
static char* join(const char* a, const char* sep, const char* b) {
  size_t n = strlen(a) + strlen(sep) + strlen(b) + 1;
  char* s = malloc(n);
  if (s) snprintf(s, n, "%s%s%s", a, sep, b);
  return s;
}

// (dof velocity index) => the joint that owns it
static const char* dof_joint(const kn_mb_model* m, int dof) {
  for (int b = 0; b < m->nbody; b++)
    if (dof >= m->bodies[b].v_adr && dof < m->bodies[b].v_adr + m->bodies[b].nv)
      return m->bodies[b].joint_name ? m->bodies[b].joint_name : m->bodies[b].name;
  return "?";
}

static void free_recorder(kn_plot_recorder* p, int nfem) { /* nfem: FEM + MPM bodies */
  if (!p) return;
  free(p->t), free(p->pair);
  for (int i = 0; i <= KN_PLOT_MAX_PAIRS; i++) free(p->pairs[i].name), free(p->pairs[i].y);
  for (int i = 0; p->fem_force && i < nfem; i++) free(p->fem_force[i].name), free(p->fem_force[i].y);
  for (int i = 0; p->track && i < p->ntrack; i++) {
    for (int k = 0; p->track[i].err && k < p->track[i].c->ndof; k++) free(p->track[i].err[k].name), free(p->track[i].err[k].y);
    free(p->track[i].err), free(p->track[i].q_ref), free(p->track[i].name);
  }
  for (int i = 0; p->height && i < p->nheight; i++) free(p->height[i].name), free(p->height[i].y);
  free(p->fem_force), free(p->track), free(p->height), free(p->height_tree), free(p);
}

kn_status kn_plot_begin(const kn_world* w, long total_steps, kn_plot_recorder** out, kn_error* err) {
  kn_plot_recorder* p = kn_calloc(1, sizeof *p);
  if (!p) return kn_fail(err, KN_ERR_NOMEM, "output.plots: out of memory");
  p->stride = total_steps > KN_PLOT_MAX_SAMPLES ? (total_steps + KN_PLOT_MAX_SAMPLES - 1) / KN_PLOT_MAX_SAMPLES : 1;
  p->cap = (int)(total_steps / p->stride) + 2;
  int ok = (p->t = zeros(p->cap)) && (p->pair = kn_calloc(2 * KN_PLOT_MAX_PAIRS, sizeof(int))) &&
           (p->fem_force = kn_calloc((size_t)(w->nfem + w->nmpm + 1), sizeof(series)));
  ok = ok && (p->pairs[KN_PLOT_MAX_PAIRS].y = zeros(p->cap)) && (p->pairs[KN_PLOT_MAX_PAIRS].name = kn_strdup("other pairs"));
  for (int i = 0; ok && i < w->nfem; i++)
    ok = (p->fem_force[i].name = join(w->fems[i].name, "", " (FEM, total)")) && (p->fem_force[i].y = zeros(p->cap));
  for (int i = 0; ok && i < w->nmpm; i++)
    ok = (p->fem_force[w->nfem + i].name = join(w->mpms[i].name, "", " (MPM, total)")) &&
         (p->fem_force[w->nfem + i].y = zeros(p->cap));
  int nctrl = 0, nobj = 0;
  for (int k = 0; k < w->ntree; k++) {
    nctrl += w->trees[k].nctrl;
    nobj += w->trees[k].object >= 0 && !w->objects[w->trees[k].object].fixed;
  }
  ok = ok && (p->track = kn_calloc((size_t)(nctrl ? nctrl : 1), sizeof(tracking))) &&
       (p->height = kn_calloc((size_t)(nobj + w->nfem + w->nmpm + 1), sizeof(series))) &&
       (p->height_tree = kn_calloc((size_t)(nobj + w->nfem + w->nmpm + 1), sizeof(int)));
  for (int k = 0; ok && k < w->ntree; k++) {
    const kn_world_tree* tr = &w->trees[k];
    for (int c = 0; ok && c < tr->nctrl; c++) {
      tracking* tk = &p->track[p->ntrack++];
      tk->tree = k, tk->c = tr->ctrls[c];
      const char* name = tk->c->name ? tk->c->name : kn_sim_tree_name(w, k);
      ok = (tk->name = kn_strdup(name)) && (tk->q_ref = zeros(tk->c->ndof)) &&
           (tk->err = kn_calloc((size_t)(tk->c->ndof ? tk->c->ndof : 1), sizeof(series)));
      for (int d = 0; ok && d < tk->c->ndof; d++)
        ok = (tk->err[d].name = kn_strdup(dof_joint(tr->robot->model, tk->c->dofs[d]))) && (tk->err[d].y = zeros(p->cap));
    }
    if (ok && tr->object >= 0 && !w->objects[tr->object].fixed) {
      p->height_tree[p->nheight] = k;
      series* h = &p->height[p->nheight++];
      ok = (h->name = kn_strdup(w->objects[tr->object].name)) && (h->y = zeros(p->cap));
    }
  }
  for (int i = 0; ok && i < w->nfem; i++) {
    p->height_tree[p->nheight] = -1;
    series* h = &p->height[p->nheight++];
    ok = (h->name = join(w->fems[i].name, "", " (centroid)")) && (h->y = zeros(p->cap));
  }
  for (int i = 0; ok && i < w->nmpm; i++) {
    p->height_tree[p->nheight] = -2;
    series* h = &p->height[p->nheight++];
    ok = (h->name = join(w->mpms[i].name, "", " (centroid)")) && (h->y = zeros(p->cap));
  }
  if (!ok) {
    free_recorder(p, w->nfem + w->nmpm);
    return kn_fail(err, KN_ERR_NOMEM, "output.plots: out of memory");
  }
  *out = p;
  return KN_OK;
}

// contact side id => its name: colliders 0 .., then FEM bodies, then MPM bodies
static const char* side_name(const kn_world* w, int id) {
  if (id < w->ncollider) return w->colliders[id].name;
  id -= w->ncollider;
  return id < w->nfem ? w->fems[id].name : w->mpms[id - w->nfem].name;
}

// (contact sides a, b) => the pair's series, a new one while there is room, else "other pairs"
static series* pair_series(kn_plot_recorder* p, const kn_world* w, int a, int b) {
  if (a > b) {
    int t = a;
    a = b, b = t;
  }
  for (int i = 0; i < p->npair; i++)
    if (p->pair[2 * i] == a && p->pair[2 * i + 1] == b) return &p->pairs[i];
  if (p->npair < KN_PLOT_MAX_PAIRS) {
    series* s = &p->pairs[p->npair];
    if ((s->y = zeros(p->cap)) && (s->name = join(side_name(w, a), " - ", side_name(w, b)))) {
      p->pair[2 * p->npair] = a, p->pair[2 * p->npair + 1] = b;
      p->npair++;
      return s;
    }
    free(s->y), s->y = NULL; /* out of memory: count it with the others */
  }
  return &p->pairs[KN_PLOT_MAX_PAIRS];
}

static double norm3(const double* f) { return sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]); }

void kn_plot_sample(kn_plot_recorder* p, const kn_world* w, const kn_out_scene* g) {
  if (p->n >= p->cap || (w->step % p->stride != 0 && w->step != 0)) return;
  int n = p->n++;
  p->t[n] = w->t;
  /* contact force magnitudes summed over the points of each pair [N] */
  for (int c = 0; c < w->ncontact; c++) pair_series(p, w, w->contacts[c].a, w->contacts[c].b)->y[n] += norm3(w->contacts[c].f);
  int fem0 = w->ncollider, mpm0 = w->ncollider + w->nfem; /* side ids of the deformables */
  for (int c = 0; c < w->nfem_contact; c++) {
    const kn_world_fem_contact* k = &w->fem_contacts[c];
    pair_series(p, w, k->a_fem >= 0 ? fem0 + k->a_fem : k->a_collider, fem0 + k->fem_b)->y[n] += norm3(k->f);
  }
  for (int c = 0; c < w->nmpm_contact; c++) {
    const kn_world_mpm_contact* k = &w->mpm_contacts[c];
    pair_series(p, w, mpm0 + k->mpm, k->collider)->y[n] += norm3(k->f);
  }
  for (int i = 0; i < w->nfem; i++) p->fem_force[i].y[n] = norm3(w->fems[i].force);
  for (int i = 0; i < w->nmpm; i++) p->fem_force[w->nfem + i].y[n] = norm3(w->mpms[i].force);
  for (int i = 0; i < p->ntrack; i++) {
    tracking* tk = &p->track[i];
    const double* q = w->trees[tk->tree].q;
    kn_ctrl_reference(tk->c, w->t, tk->q_ref, NULL, NULL);
    for (int d = 0; d < tk->c->ndof; d++) tk->err[d].y[n] = tk->q_ref[d] - q[tk->c->qidx[d]];
  }
  for (int i = 0, f = 0, m = 0; i < p->nheight; i++) {
    if (p->height_tree[i] >= 0) {
      p->height[i].y[n] = g->data[p->height_tree[i]]->X_wb[0].p[2];
    } else if (p->height_tree[i] == -2) {
      double c[3];
      kn_sim_mpm_centroid(&w->mpms[m++], c);
      p->height[i].y[n] = c[2];
    } else {
      double c[3];
      kn_sim_deformable_centroid(&w->fems[f++], c);
      p->height[i].y[n] = c[2];
    }
  }
}

void kn_output_gnuplot_string(FILE* f, const char* s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'') fputc('\'', f);
    fputc(*s, f);
  }
  fputc('\'', f);
}

// (series) => plots/<name>.dat and its plot command in the script; 0 when nothing to plot
static int write_plot(FILE* gp, const char* dir, const char* name, const char* title, const char* ylabel,
                      const kn_plot_recorder* p, const series* const* s, int ns, kn_error* err, kn_status* st) {
  if (ns == 0) return 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/plots/%s.dat", dir, name);
  FILE* f = fopen(path, "w");
  if (!f) {
    *st = kn_fail(err, KN_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    return 0;
  }
  fputs("# t", f);
  for (int k = 0; k < ns; k++) fprintf(f, "\t%s", s[k]->name);
  fputc('\n', f);
  for (int i = 0; i < p->n; i++) {
    fprintf(f, "%.9g", p->t[i]);
    for (int k = 0; k < ns; k++) fprintf(f, "\t%.9g", s[k]->y[i]);
    fputc('\n', f);
  }
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) {
    *st = kn_fail(err, KN_ERR_IO, "%s: write error", path);
    return 0;
  }
  fputs("set output ", gp);
  snprintf(path, sizeof path, "%s/plots/%s.svg", dir, name);
  kn_output_gnuplot_string(gp, path);
  fputs("\nset title ", gp);
  kn_output_gnuplot_string(gp, title);
  fputs("\nset ylabel ", gp);
  kn_output_gnuplot_string(gp, ylabel);
  fputs("\nplot ", gp);
  snprintf(path, sizeof path, "%s/plots/%s.dat", dir, name);
  /* curve k: colour k + 1, dash pattern (solid, dashed, dotted, dash-dot, dash-dot-dot) and marker
   * of its own; a marker every `every` samples from sample k * every / ns (staggered); the key
   * entry is a NaN curve drawn with both */
  static const int marker[] = {7, 5, 9, 2, 1, 6, 4, 8, 11, 13, 3, 10};
  int every = p->n > KN_PLOT_MARKERS ? p->n / KN_PLOT_MARKERS : 1;
  for (int k = 0; k < ns; k++) {
    int lc = k + 1, dt = k % 5 + 1, pt = marker[k % (int)(sizeof marker / sizeof *marker)];
    if (k) fputs(", \\\n     ", gp);
    kn_output_gnuplot_string(gp, path);
    fprintf(gp, " using 1:%d with lines lw 1.5 lc %d dt %d notitle, \\\n     ", k + 2, lc, dt);
    kn_output_gnuplot_string(gp, path);
    fprintf(gp, " using 1:%d every %d::%d with points lc %d pt %d ps 0.8 notitle, \\\n     ", k + 2, every,
            k * every / ns, lc, pt);
    fprintf(gp, "NaN with linespoints lw 1.5 lc %d dt %d pt %d ps 0.8 title ", lc, dt, pt);
    kn_output_gnuplot_string(gp, s[k]->name);
  }
  fputs("\n\n", gp);
  return 1;
}

int kn_output_run_gnuplot(const char* script, const char* log) {
  const char* prog = getenv("KNEAD_GNUPLOT");
  if (!prog || !*prog) prog = "gnuplot";
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) return -1;
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  char* argv[] = {(char*)prog, (char*)script, NULL};
  pid_t pid;
  int rc = posix_spawnp(&pid, prog, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    errno = rc;
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

kn_status kn_plot_end(kn_plot_recorder* p, const kn_world* w, const char* out_dir, kn_diag* warnings,
                      kn_error* err) {
  if (!out_dir) {
    free_recorder(p, w->nfem + w->nmpm);
    return KN_OK;
  }
  char dir[4096], script[4096], log[4096];
  snprintf(dir, sizeof dir, "%s/plots", out_dir);
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    free_recorder(p, w->nfem + w->nmpm);
    return kn_fail(err, KN_ERR_IO, "%s: cannot create folder: %s", dir, strerror(errno));
  }
  snprintf(script, sizeof script, "%s/plots.gp", dir);
  snprintf(log, sizeof log, "%s/gnuplot.log", dir);
  FILE* gp = fopen(script, "w");
  if (!gp) {
    free_recorder(p, w->nfem + w->nmpm);
    return kn_fail(err, KN_ERR_IO, "%s: cannot write: %s", script, strerror(errno));
  }
  fputs("# knead: plots of one run (gnuplot plots.gp redraws them)\n"
        "set terminal svg size 900,480 dynamic noenhanced font 'sans,12' background '#ffffff'\n"
        "set xlabel 't [s]'\nset grid\nset key outside right top\n\n", gp);
  kn_status st = KN_OK;
  int nplot = 0;
  const series* s[KN_PLOT_MAX_PAIRS + 64];
  int ns = 0;
  for (int i = 0; i < p->npair; i++) s[ns++] = &p->pairs[i];
  int other = 0;
  for (int i = 0; i < p->n; i++) other |= p->pairs[KN_PLOT_MAX_PAIRS].y[i] != 0;
  if (other) s[ns++] = &p->pairs[KN_PLOT_MAX_PAIRS];
  for (int i = 0; i < w->nfem + w->nmpm && ns < (int)(sizeof s / sizeof *s); i++) s[ns++] = &p->fem_force[i];
  nplot += write_plot(gp, out_dir, "contact_forces", "contact force magnitude by pair", "|f| [N]", p, s, ns, err, &st);
  for (int i = 0; !st && i < p->ntrack; i++) {
    const tracking* tk = &p->track[i];
    const series* e[64];
    int ne = tk->c->ndof < 64 ? tk->c->ndof : 64;
    for (int d = 0; d < ne; d++) e[d] = &tk->err[d];
    char name[256], title[320];
    snprintf(name, sizeof name, "tracking_%s", tk->name);
    for (char* c = name; *c; c++)
      if (*c == '/' || *c == ' ') *c = '_';
    snprintf(title, sizeof title, "%s: PD reference minus actual joint position", tk->name);
    nplot += write_plot(gp, out_dir, name, title, "q_ref - q [rad or m]", p, e, ne, err, &st);
  }
  ns = 0;
  for (int i = 0; i < p->nheight && ns < (int)(sizeof s / sizeof *s); i++) s[ns++] = &p->height[i];
  if (!st) nplot += write_plot(gp, out_dir, "heights", "object heights", "z [m]", p, s, ns, err, &st);
  int bad = ferror(gp);
  if (fclose(gp) != 0 || bad) st = st ? st : kn_fail(err, KN_ERR_IO, "%s: write error", script);
  free_recorder(p, w->nfem + w->nmpm);
  if (st || nplot == 0) return st;
  int rc = kn_output_run_gnuplot(script, log);
  if (rc < 0)
    kn_diag_add(warnings, "output.plots: skipped: cannot run gnuplot (%s; Debian package gnuplot-nox, or set "
                "KNEAD_GNUPLOT); the data are in %s/*.dat", strerror(errno), dir);
  else if (rc != 0)
    kn_diag_add(warnings, "output.plots: gnuplot exited with status %d, see %s", rc, log);
  return KN_OK;
}
