/* knead-bench — times knead's multibody algorithms on the project's 7-DoF arm and, when built
 * with MuJoCo, the equivalent MuJoCo calls on the same URDF in the same run, after checking that
 * both engines compute the same mass matrix, torques and accelerations.
 *
 *   knead-bench [--quick] [--json FILE] [--reps N] [--calls N] [--body LINK]
 *               [--only multibody|contact|fem|mpm|backends|continuous|ipc_paper|penalty_stack|pyramid] [--contact] [--scene FILE]... [--steps N] [--runs N]
 *               [--mjcf DIR] [--fidelity FILE] [robot.urdf]
 *
 * --fidelity FILE: only the physical-fidelity scenes (the .yaml files of examples/fidelity, or the --scene files)
 * in MuJoCo (kb_fidelity_mujoco): each rigid scene built as the contact benchmark builds it, judged
 * by the scene's own checks, its mean mj_step time; FILE (format knead-bench-fidelity-1) is what
 * `knead compare --scoreboard ... --mujoco FILE` puts beside the backends.
 *
 * The contact benchmark (contact.c, mujoco_contact.c) steps whole scenes with kn_world_step
 * (examples/bench/push_box.yaml, examples/grasp_box.yaml when it exists, and
 * examples/bench/iiwa_drop.yaml when ../shared/models holds its URDF, or the --scene files) and,
 * with MuJoCo, the same scenes with mj_step (mesh geoms from the same files). The FEM benchmark (fem.c) times the
 * soft-cube grasp's steps by stage at ~1k, 10k and 50k tetrahedra against one CHOLMOD
 * factorization of the cube's dynamics matrix (--quick: 1k only).
 *
 * Exit status: 0 when it ran and (with MuJoCo) the cross-check agreed; 1 otherwise. */
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bench.h"

#ifndef KNEAD_BENCH_EXAMPLES
#define KNEAD_BENCH_EXAMPLES "examples"
#endif

#ifndef KNEAD_BENCH_ARM
#define KNEAD_BENCH_ARM "examples/models/knead_arm7.urdf"
#endif

const kb_op_info kb_ops[KB_NOP] = {
    [KB_FK] = {"forward kinematics", "kn_mb_kinematics(q, v=NULL)", "mj_kinematics"},
    [KB_JAC] = {"end-effector Jacobian 6xnv", "kn_mb_point_jacobian(Jv, Jw)", "mj_jac(jacp, jacr)"},
    [KB_CRBA] = {"mass matrix (CRBA)", "kn_mb_mass_matrix", "mj_crb"},
    [KB_RNEA] = {"inverse dynamics (RNEA)", "kn_mb_inverse_dynamics", "mj_rne(flg_acc=1)"},
    [KB_ABA] = {"forward dynamics (ABA)", "kn_mb_forward_dynamics",
                "mj_crb+mj_factorM+mj_rne(0)+mj_solveM"},
    [KB_M_Q] = {"q -> M", "kinematics+mass_matrix", "mj_kinematics+mj_comPos+mj_crb"},
    [KB_TAU_Q] = {"q,v,qdd -> tau", "kinematics(q,v)+inverse_dynamics",
                  "mj_kinematics+mj_comPos+mj_comVel+mj_rne(1)"},
    [KB_QDD_Q] = {"q,v,tau -> qdd", "kinematics(q,v)+forward_dynamics",
                  "mj_kinematics+mj_comPos+mj_crb+mj_factorM+mj_comVel+mj_rne(0)+mj_solveM"},
};

/*---- random configurations ----*/

/* xorshift64*: a fixed, portable sequence so every run times the same configurations */
static double uniform(uint64_t* s, double lo, double hi) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  uint64_t r = *s * 2685821657736338717ull;
  return lo + (hi - lo) * (double)(r >> 11) * (1.0 / 9007199254740992.0);
}

static int configs_create(const kn_mb_model* m, int nconf, kb_configs* c) {
  int nv = m->nv;
  c->nconf = nconf;
  c->nv = nv;
  c->q = kn_calloc((size_t)(nconf * nv), sizeof(double));
  c->v = kn_calloc((size_t)(nconf * nv), sizeof(double));
  c->qdd = kn_calloc((size_t)(nconf * nv), sizeof(double));
  c->tau = kn_calloc((size_t)(nconf * nv), sizeof(double));
  if (!c->q || !c->v || !c->qdd || !c->tau) return 0;
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (int k = 0; k < nconf; ++k) {
    for (int b = 0; b < m->nbody; ++b) {
      const kn_mb_body* body = &m->bodies[b];
      if (body->nv != 1) continue;
      double lo = -3.141592653589793, hi = 3.141592653589793;
      if (body->has_position_limits) lo = body->lower, hi = body->upper;
      c->q[k * nv + body->v_adr] = uniform(&s, lo, hi);
    }
    for (int i = 0; i < nv; ++i) {
      c->v[k * nv + i] = uniform(&s, -1.0, 1.0);
      c->qdd[k * nv + i] = uniform(&s, -1.0, 1.0);
      c->tau[k * nv + i] = uniform(&s, -20.0, 20.0);
    }
  }
  return 1;
}

static void configs_free(kb_configs* c) {
  free(c->q);
  free(c->v);
  free(c->qdd);
  free(c->tau);
}

/*---- the knead side ----*/

typedef struct {
  const kn_mb_model* m;
  kn_mb_data* d;
  const kb_configs* c;
  const kb_point* ee;
  const double *q, *v, *qdd, *tau;
  double* out; /* nv x nv */
  double* J;   /* 6 x nv */
} kn_ctx;

static void pick(kn_ctx* k, int rep) {
  int i = (rep % k->c->nconf) * k->c->nv;
  k->q = k->c->q + i;
  k->v = k->c->v + i;
  k->qdd = k->c->qdd + i;
  k->tau = k->c->tau + i;
}

static void setup_q(void* ctx, int rep) { pick(ctx, rep); }
static void setup_pos(void* ctx, int rep) {
  kn_ctx* k = ctx;
  pick(k, rep);
  kn_mb_kinematics(k->m, k->q, NULL, k->d);
}
static void setup_vel(void* ctx, int rep) {
  kn_ctx* k = ctx;
  pick(k, rep);
  kn_mb_kinematics(k->m, k->q, k->v, k->d);
}

static void call_fk(void* ctx) {
  kn_ctx* k = ctx;
  kn_mb_kinematics(k->m, k->q, NULL, k->d);
}
static void call_jac(void* ctx) {
  kn_ctx* k = ctx;
  kn_mb_point_jacobian(k->m, k->d, k->ee->body, k->ee->p_b, k->J, k->J + 3 * k->m->nv);
}
static void call_crba(void* ctx) {
  kn_ctx* k = ctx;
  kn_mb_mass_matrix(k->m, k->d, k->out);
}
static void call_rnea(void* ctx) {
  kn_ctx* k = ctx;
  kn_mb_inverse_dynamics(k->m, k->d, k->qdd, k->out);
}
static void call_aba(void* ctx) {
  kn_ctx* k = ctx;
  kn_mb_forward_dynamics(k->m, k->d, k->tau, k->out);
}
static void call_m_q(void* ctx) {
  kn_ctx* k = ctx;
  kn_mb_kinematics(k->m, k->q, NULL, k->d);
  kn_mb_mass_matrix(k->m, k->d, k->out);
}
static void call_tau_q(void* ctx) {
  kn_ctx* k = ctx;
  kn_mb_kinematics(k->m, k->q, k->v, k->d);
  kn_mb_inverse_dynamics(k->m, k->d, k->qdd, k->out);
}
static void call_qdd_q(void* ctx) {
  kn_ctx* k = ctx;
  kn_mb_kinematics(k->m, k->q, k->v, k->d);
  kn_mb_forward_dynamics(k->m, k->d, k->tau, k->out);
}

static void time_knead(const kn_mb_model* m, kn_mb_data* d, const kb_point* ee, const kb_plan* p,
                       const kb_configs* c, double us[KB_NOP]) {
  kn_ctx k = {.m = m, .d = d, .c = c, .ee = ee};
  k.out = kn_calloc((size_t)(m->nv * m->nv), sizeof(double));
  k.J = kn_calloc((size_t)(6 * m->nv), sizeof(double));
  us[KB_FK] = kb_time(p, &k, setup_q, call_fk);
  us[KB_JAC] = kb_time(p, &k, setup_pos, call_jac);
  us[KB_CRBA] = kb_time(p, &k, setup_pos, call_crba);
  us[KB_RNEA] = kb_time(p, &k, setup_vel, call_rnea);
  us[KB_ABA] = kb_time(p, &k, setup_vel, call_aba);
  us[KB_M_Q] = kb_time(p, &k, setup_q, call_m_q);
  us[KB_TAU_Q] = kb_time(p, &k, setup_q, call_tau_q);
  us[KB_QDD_Q] = kb_time(p, &k, setup_q, call_qdd_q);
  free(k.out);
  free(k.J);
}

/*---- input ----*/

/* the whole file as a NUL-terminated string, or NULL */
static char* read_text(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  char* text = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long n = ftell(f);
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = calloc((size_t)n + 1, 1)) &&
        fread(text, 1, (size_t)n, f) != (size_t)n) {
      free(text);
      text = NULL;
    }
  }
  fclose(f);
  return text;
}

/* the folder of path (for relative mesh paths), "." when it has none */
static char* dir_of(const char* path) {
  char* d = kn_strdup(path);
  char* slash = strrchr(d, '/');
  if (slash)
    slash[slash == d ? 1 : 0] = 0;
  else
    strcpy(d, ".");
  return d;
}

/*---- reporting ----*/

/* the CPU model name from /proc/cpuinfo (Linux), or "unknown" */
static void cpu_model(char* buf, size_t n) {
  snprintf(buf, n, "unknown");
  FILE* f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) == 0) {
      char* colon = strchr(line, ':');
      if (colon) {
        colon += 2;
        colon[strcspn(colon, "\n")] = 0;
        snprintf(buf, n, "%s", colon);
      }
      break;
    }
  }
  fclose(f);
}

/* (number) => a JSON real, null when not finite (JSON has no NaN or infinity) */
static json_t* num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

/* (the run's plan, timings [us] per operation, the agreement check) => path written as JSON (jansson,
 * the library every knead JSON goes through); 1 on success */
static int write_json(const char* path, const char* urdf, const char* cpu, const kb_plan* p, const double* kn,
                      const double* mj, int have_mj, const kb_check* chk, double forward_us) {
  json_t* doc = json_pack("{ss ss si si si ss}", "urdf", urdf, "cpu", cpu, "reps", p->reps, "calls", p->calls,
                          "warmup_calls", p->warmup_calls, "mujoco_version", have_mj ? kb_mujoco_version() : "");
  json_t* results = json_array();
  int bad = !doc || json_object_set_new(doc, "results", results);
  for (int i = 0; i < KB_NOP && !bad; ++i) {
    json_t* r = json_pack("{ss ss so}", "operation", kb_ops[i].name, "knead_calls", kb_ops[i].knead_calls, "knead_us",
                          num(kn[i]));
    bad |= json_array_append_new(results, r);
    if (have_mj) {
      bad |= json_object_set_new(r, "mujoco_calls", json_string(kb_ops[i].mujoco_calls));
      bad |= json_object_set_new(r, "mujoco_us", num(mj[i]));
      bad |= json_object_set_new(r, "ratio", num(kn[i] / mj[i]));
    }
  }
  if (have_mj && !bad) {
    bad |= json_object_set_new(
        doc, "check",
        json_pack("{si so so so so so so so so so so sb}", "nv_mujoco", chk->nv_mujoco, "mass_knead",
                  num(chk->mass_knead), "mass_mujoco", num(chk->mass_mujoco), "fk_maxdiff", num(chk->fk), "jac_maxdiff",
                  num(chk->jac), "M_maxdiff", num(chk->M), "M_max", num(chk->M_scale), "tau_maxdiff", num(chk->tau),
                  "qdd_maxdiff", num(chk->qdd), "qdd_max", num(chk->qdd_scale), "qdd_chain_maxdiff",
                  num(chk->qdd_chain), "ok", chk->ok));
    bad |= json_object_set_new(doc, "mujoco_forward_us", num(forward_us));
  }
  if (!bad) bad = json_dump_file(doc, path, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) != 0;
  json_decref(doc);
  return !bad;
}

static void usage(FILE* f) {
  fprintf(f,
          "usage: knead-bench [--quick] [--json FILE] [--reps N] [--calls N] [--body LINK]\n"
          "                   [--only multibody|contact|fem|mpm|backends|continuous|ipc_paper|penalty_stack|pyramid] [--contact] [--scene FILE]... [--steps N] [--runs N]\n"
          "                   [--mjcf DIR] [robot.urdf]\n"
          "  times knead's multibody algorithms (and MuJoCo's, when built with it) on a URDF robot,\n"
          "  then whole contact time steps (kn_world_step vs mj_step) on scenes, then the FEM soft-cube\n"
          "  grasp by stage at ~1k/10k/50k tets vs one CHOLMOD factorization (--quick: 1k only), then the\n"
          "  contact backends against SAP on the regression grasps (rigid box, FEM cube, MPM dough);\n"
          "  --contact is --only contact; --steps: steps per run [the scene's duration; --quick 40];\n"
          "  --runs: runs per scene [5; --quick 1]; --mjcf: write the generated MuJoCo scenes there\n"
          "  --rods-seconds S: with --only ipc_paper, the twisted rods' sweep over S simulated seconds\n"
          "  [1: h 0.01-0.1; --quick 0.2; the paper's Table 1: 6, h 0.01-2, an hour or more]\n"
          "  --fidelity FILE: only the fidelity scenes (%s/fidelity/*.yaml or --scene) in MuJoCo,\n"
          "  judged by their checks; FILE for `knead compare --scoreboard S --mujoco FILE`\n"
          "  default robot: %s; default scenes: %s/bench/push_box.yaml, %s/grasp_box.yaml,\n"
          "  %s/bench/iiwa_drop.yaml, %s/bench/grasp_mesh_cube.yaml (mesh collision geometry from\n"
          "  ../shared/models, when present)\n",
          KNEAD_BENCH_EXAMPLES, KNEAD_BENCH_ARM, KNEAD_BENCH_EXAMPLES, KNEAD_BENCH_EXAMPLES, KNEAD_BENCH_EXAMPLES, KNEAD_BENCH_EXAMPLES);
}

/*---- the contact benchmark ----*/

static int file_exists(const char* path) {
  FILE* f = fopen(path, "r");
  if (f) fclose(f);
  return f != NULL;
}

/* time each scene on knead and (when built in) MuJoCo, print the table; 0 on a failure */
static int run_contact(const char* const* scenes, int nscene, long steps, int runs, const char* mjcf_dir) {
  int ok = 1;
  printf("\ncontact benchmark: whole time steps, kn_world_step (SAP) vs mj_step; %d run(s) per scene, %s\n", runs,
         steps > 0 ? "limited steps per run" : "each scene's full duration");
  kb_contact_result kn[8], mj[8];
  int have_mj[8] = {0};
  for (int i = 0; i < nscene && i < 8; i++) {
    char msg[2048] = "";
    if (!kb_contact_knead(scenes[i], steps, runs, &kn[i], msg, sizeof msg)) {
      fprintf(stderr, "knead-bench: %s: %s\n", scenes[i], msg);
      ok = 0;
      continue;
    }
    if (kb_mujoco_available()) {
      char xml[4096] = "";
      if (mjcf_dir) {
        const char* base = strrchr(scenes[i], '/');
        snprintf(xml, sizeof xml, "%s/%s.mjcf.xml", mjcf_dir, base ? base + 1 : scenes[i]);
      }
      have_mj[i] = kb_contact_mujoco(scenes[i], steps, runs, mjcf_dir ? xml : NULL, &mj[i], msg, sizeof msg);
      /* a scene MuJoCo cannot represent (meshes, planar joints) is a note, not a failure */
      if (!have_mj[i]) fprintf(stderr, "knead-bench: MuJoCo on %s (not compared): %s\n", scenes[i], msg);
    }
  }
  printf("\n%-14s %-6s %6s %9s %9s %9s %7s %7s %9s %8s %9s\n", "scene", "engine", "steps", "mean us", "median",
         "p95", "iter", "(max)", "ls/evals", "contacts", "obj dx, dz");
  for (int i = 0; i < nscene && i < 8; i++) {
    const char* base = strrchr(scenes[i], '/');
    base = base ? base + 1 : scenes[i];
    for (int e = 0; e < 2; e++) {
      const kb_contact_result* r = e ? &mj[i] : &kn[i];
      if (!r->ok || (e && !have_mj[i])) continue;
      printf("%-14.14s %-6s %6ld %9.2f %9.2f %9.2f %7.2f %7d %9.2f %8.2f %7.4f %7.4f\n", base, e ? "MuJoCo" : "knead",
             r->steps, r->mean_us, r->median_us, r->p95_us, r->iter_mean, r->iter_max, r->ls_mean, r->contacts_mean,
             r->object_dx, r->object_dz);
    }
    if (kn[i].ok && have_mj[i])
      printf("%-14.14s knead / MuJoCo per step: mean %.2f, median %.2f, p95 %.2f\n", base,
             kn[i].mean_us / mj[i].mean_us, kn[i].median_us / mj[i].median_us, kn[i].p95_us / mj[i].p95_us);
    if (kn[i].ok)
      printf("%-14.14s contact detection, share of the step: knead %.1f %%", base, 100 * kn[i].detect_share);
    if (kn[i].ok && have_mj[i]) printf(", MuJoCo %.1f %% (its collision timer)", 100 * mj[i].detect_share);
    if (kn[i].ok) printf("\n");
  }
  printf("(iter: SAP Newton iterations / MuJoCo solver iterations per step; ls/evals: SAP line-search\n"
         " iterations / MuJoCo line-search cost evaluations per step; contacts: contact points per step;\n"
         " obj dx, dz: displacement of the first free object at the end of the last run, m)\n");
  return ok;
}

/*---- the fidelity scenes in MuJoCo ----*/

/* (scenes, or the fidelity folder's scenes when none) => each in MuJoCo, printed, and FILE written
 * (format knead-bench-fidelity-1, read by tools/compare_scoreboard.c); 0 when FILE cannot be
 * written (a scene MuJoCo cannot build is a result, recorded with why) */
static int run_fidelity(const char* const* scenes, int nscene, const char* path) {
  glob_t g = {0};
  if (nscene == 0 && glob(KNEAD_BENCH_EXAMPLES "/fidelity/*.yaml", 0, NULL, &g) == 0) {
    scenes = (const char* const*)g.gl_pathv;
    nscene = (int)g.gl_pathc;
  }
  char cpu[256];
  cpu_model(cpu, sizeof cpu);
  json_t* doc = json_pack("{ss ss ss}", "format", "knead-bench-fidelity-1", "mujoco_version", kb_mujoco_version(),
                          "cpu", cpu);
  json_t* list = json_array();
  json_object_set_new(doc, "scenes", list);
  printf("fidelity scenes in MuJoCo %s (MuJoCo's default contact parameters, the scene's friction and dt):\n",
         kb_mujoco_available() ? kb_mujoco_version() : "(not built in)");
  for (int i = 0; i < nscene; i++) {
    kb_fidelity_result* r = calloc(1, sizeof *r);
    char msg[2048] = "";
    if (!r) break;
    int ran = kb_fidelity_mujoco(scenes[i], r, msg, sizeof msg);
    char stem[128];
    const char* base = strrchr(scenes[i], '/');
    snprintf(stem, sizeof stem, "%s", base ? base + 1 : scenes[i]);
    char* dot = strrchr(stem, '.');
    if (dot) *dot = 0;
    const char* name = r->name[0] ? r->name : stem;
    json_t* js = json_pack("{ss ss ss}", "name", name, "status", ran ? "ok" : r->built ? "failed" : "not_built",
                           "message", ran ? "" : msg);
    json_array_append_new(list, js);
    if (!ran) {
      printf("  %-28s %s: %s\n", name, r->built ? "MuJoCo failed" : "not built", msg);
      free(r);
      continue;
    }
    json_object_set_new(js, "steps", json_integer(r->steps));
    json_object_set_new(js, "us_per_step", num(r->us_per_step));
    json_t* checks = json_array();
    json_object_set_new(js, "checks", checks);
    printf("  %-28s %7.2f us/step ", name, r->us_per_step);
    for (int k = 0; k < r->nchecks; k++) {
      const kb_fidelity_check* c = &r->checks[k];
      if (!c->measured_here) {
        printf(" %s not measured;", c->name);
        json_array_append_new(checks, json_pack("{ss sb}", "name", c->name, "not_measured", 1));
        continue;
      }
      const char* v = c->expect_fail ? (c->passed ? "XPASS" : "XFAIL") : (c->passed ? "pass" : "FAIL");
      printf(" %s %s %.4g %s;", c->name, v, c->measured, c->unit);
      json_array_append_new(checks, json_pack("{ss sb ss so ss ss}", "name", c->name, "passed", c->passed, "expect",
                                              c->expect_fail ? "fail" : "pass", "measured", num(c->measured), "unit",
                                              c->unit, "message", c->message));
    }
    printf("\n");
    free(r);
  }
  int ok = json_dump_file(doc, path, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) == 0;
  printf(ok ? "wrote %s\n" : "cannot write %s\n", path);
  json_decref(doc);
  if (g.gl_pathv) globfree(&g);
  return ok;
}

int main(int argc, char** argv) {
  const char* urdf = KNEAD_BENCH_ARM;
  const char* json = NULL;
  const char* body_name = NULL;
  kb_plan plan = {.warmup_calls = 2000, .reps = 21, .calls = 4000};
  int do_mpm = 1, do_multibody = 1, do_contact = 1, do_fem = 1, do_backends = 1, do_continuous = 1, quick = 0, runs = 0;
  int do_ipc_paper = 0; /* only with --only ipc_paper: it runs ~1 min */
  int do_penalty_stack = 0; /* only with --only penalty_stack: ~1 min of CPU */
  int do_pyramid = 0;   /* only with --only pyramid: ~1 min */
  long steps = -1;
  double rods_seconds = 0; /* --only ipc_paper's twisted rods: simulated seconds (0: 1 s, --quick 0.2 s) */
  const char* scenes[8];
  int nscene = 0;
  const char* mjcf_dir = NULL;
  const char* fidelity = NULL;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (strcmp(a, "--quick") == 0) {
      plan = (kb_plan){.warmup_calls = 20, .reps = 3, .calls = 50};
      quick = 1;
    } else if (strcmp(a, "--contact") == 0) {
      do_multibody = 0, do_contact = 1, do_fem = 0, do_mpm = 0, do_backends = 0, do_continuous = 0;
    } else if (strcmp(a, "--only") == 0 && i + 1 < argc) {
      const char* what = argv[++i];
      do_multibody = strcmp(what, "multibody") == 0;
      do_contact = strcmp(what, "contact") == 0;
      do_fem = strcmp(what, "fem") == 0;
      do_mpm = strcmp(what, "mpm") == 0;
      do_backends = strcmp(what, "backends") == 0;
      do_continuous = strcmp(what, "continuous") == 0;
      do_ipc_paper = strcmp(what, "ipc_paper") == 0;
      do_penalty_stack = strcmp(what, "penalty_stack") == 0;
      do_pyramid = strcmp(what, "pyramid") == 0;
      if (!do_multibody && !do_contact && !do_fem && !do_mpm && !do_backends && !do_continuous && !do_ipc_paper &&
          !do_penalty_stack && !do_pyramid) {
        fprintf(stderr, "knead-bench: --only takes multibody, contact, fem, mpm, backends, continuous, ipc_paper, "
                "penalty_stack or pyramid, not '%s'\n", what);
        return 1;
      }
    } else if (strcmp(a, "--scene") == 0 && i + 1 < argc) {
      if (nscene < 8) scenes[nscene++] = argv[++i];
    } else if (strcmp(a, "--steps") == 0 && i + 1 < argc) {
      steps = atol(argv[++i]);
    } else if (strcmp(a, "--rods-seconds") == 0 && i + 1 < argc) {
      rods_seconds = atof(argv[++i]);
      if (!(rods_seconds > 0 && rods_seconds <= 60)) {
        fprintf(stderr, "knead-bench: --rods-seconds takes the twisted rods' simulated time, 0 < s <= 60, not '%s'\n", argv[i]);
        return 1;
      }
    } else if (strcmp(a, "--runs") == 0 && i + 1 < argc) {
      runs = atoi(argv[++i]);
    } else if (strcmp(a, "--mjcf") == 0 && i + 1 < argc) {
      mjcf_dir = argv[++i];
    } else if (strcmp(a, "--fidelity") == 0 && i + 1 < argc) {
      fidelity = argv[++i];
    } else if (strcmp(a, "--json") == 0 && i + 1 < argc) {
      json = argv[++i];
    } else if (strcmp(a, "--reps") == 0 && i + 1 < argc) {
      plan.reps = atoi(argv[++i]);
    } else if (strcmp(a, "--calls") == 0 && i + 1 < argc) {
      plan.calls = atoi(argv[++i]);
    } else if (strcmp(a, "--body") == 0 && i + 1 < argc) {
      body_name = argv[++i];
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (a[0] == '-') {
      fprintf(stderr, "knead-bench: unknown option '%s'\n", a);
      usage(stderr);
      return 1;
    } else {
      urdf = a;
    }
  }
  if (plan.reps < 1 || plan.calls < 1) {
    fprintf(stderr, "knead-bench: --reps and --calls must be positive\n");
    return 1;
  }
  if (fidelity) return run_fidelity(scenes, nscene, fidelity) ? 0 : 1;
  if (runs <= 0) runs = quick ? 1 : 5;
  if (steps < 0) steps = quick ? 40 : 0;
  if (nscene == 0) {
    static const char push[] = KNEAD_BENCH_EXAMPLES "/bench/push_box.yaml";
    static const char grasp[] = KNEAD_BENCH_EXAMPLES "/grasp_box.yaml";
    scenes[nscene++] = push;
    if (file_exists(grasp)) scenes[nscene++] = grasp;
    /* real mesh collision geometry, read in place from ../shared/models (never copied) */
    static const char iiwa[] = KNEAD_BENCH_EXAMPLES "/bench/iiwa_drop.yaml";
    static const char iiwa_urdf[] = KNEAD_BENCH_EXAMPLES "/../../shared/models/bullet3/data/kuka_iiwa/model.urdf";
    if (file_exists(iiwa_urdf)) scenes[nscene++] = iiwa;
    else
      fprintf(stderr, "knead-bench: scene iiwa_drop skipped: %s not found (the public models folder "
              "../shared/models next to the checkout)\n", iiwa_urdf);
    static const char cube[] = KNEAD_BENCH_EXAMPLES "/bench/grasp_mesh_cube.yaml";
    static const char cube_obj[] = KNEAD_BENCH_EXAMPLES "/../../shared/models/bullet3/data/cube.obj";
    if (file_exists(cube_obj)) scenes[nscene++] = cube;
    else
      fprintf(stderr, "knead-bench: scene grasp_mesh_cube skipped: %s not found (the public models folder "
              "../shared/models next to the checkout)\n", cube_obj);
  }
  if (!do_multibody) {
    int ok = 1;
    if (do_contact) ok = run_contact(scenes, nscene, steps, runs, mjcf_dir);
    if (do_fem) ok = kb_fem_run(quick) && ok;
    if (do_mpm) ok = kb_mpm_run(quick) && ok;
    if (do_backends) ok = kb_backends_run(KNEAD_BENCH_EXAMPLES, quick) && ok;
    if (do_continuous) ok = kb_continuous_run(quick) && ok;
    if (do_ipc_paper) ok = kb_ipc_paper_run(KNEAD_BENCH_DIR, KNEAD_BENCH_EXAMPLES, quick, rods_seconds) && ok;
    if (do_penalty_stack) ok = kb_penalty_stack_run(KNEAD_BENCH_DIR, quick) && ok;
    if (do_pyramid) ok = kb_pyramid_run(KNEAD_BENCH_DIR, KNEAD_BENCH_EXAMPLES, quick) && ok;
    return ok ? 0 : 1;
  }

  /* The URDF text feeds both engines. The default arm falls back to the copy embedded in
   * libknead, so an installed knead-bench runs without the source tree. */
  char* text = read_text(urdf);
  if (!text && strcmp(urdf, KNEAD_BENCH_ARM) == 0) {
    size_t len = 0;
    const char* embedded = kn_embedded_file("models/knead_arm7.urdf", &len);
    if (embedded) {
      text = kn_strdup(embedded);
      urdf = "knead://models/knead_arm7.urdf";
    }
  }
  if (!text) {
    fprintf(stderr, "knead-bench: cannot read %s\n", urdf);
    return 1;
  }
  kn_error err = {0};
  kn_urdf_options opt = kn_urdf_options_default();
  kn_robot* robot = NULL;
  char* base_dir = dir_of(urdf);
  kn_status st = kn_urdf_load_string(text, urdf, strncmp(urdf, "knead://", 8) ? base_dir : NULL, &opt, &robot, &err);
  free(base_dir);
  if (st != KN_OK) {
    fprintf(stderr, "knead-bench: %s\n", err.msg);
    free(text);
    return 1;
  }
  const kn_mb_model* m = robot->model;
  if (m->nq != m->nv || m->nv == 0) {
    fprintf(stderr, "knead-bench: %s: expected a fixed-base robot with 1-DoF joints (nq %d, nv %d)\n", urdf, m->nq,
            m->nv);
    kn_robot_free(robot);
    free(text);
    return 1;
  }
  /* end effector: the named link, else the last body of the tree (a leaf in topological order);
   * the point 5 cm along its z axis, off the joint axis so the Jacobian is not trivially sparse */
  kb_point ee = {.body = m->nbody - 1, .p_b = {0.0, 0.0, 0.05}};
  if (body_name) {
    ee.body = kn_mb_find_body(m, body_name);
    if (ee.body < 0) {
      fprintf(stderr, "knead-bench: %s: no link named '%s'\n", urdf, body_name);
      kn_robot_free(robot);
      free(text);
      return 1;
    }
  }

  kn_mb_data* d = kn_mb_data_create(m);
  kb_configs cfg;
  int nconf = plan.reps > 16 ? plan.reps : 16;
  if (!d || !configs_create(m, nconf, &cfg)) {
    fprintf(stderr, "knead-bench: out of memory\n");
    return 1;
  }

  char cpu[256];
  cpu_model(cpu, sizeof cpu);
  printf("knead-bench: %s (%s, nv %d, %d bodies, end effector '%s' + [0 0 0.05])\n", urdf, m->name, m->nv,
         m->nbody, m->bodies[ee.body].name);
  printf("cpu: %s; %d repetitions x %d calls at random configurations, median, after %d warm-up calls\n", cpu,
         plan.reps, plan.calls, plan.warmup_calls);

  int status = 0;
  double kn_us[KB_NOP] = {0}, mj_us[KB_NOP] = {0};
  kb_check chk = {0};
  double forward_us = 0.0;
  kb_mujoco* mj = NULL;
  if (kb_mujoco_available()) {
    char msg[1024] = "";
    mj = kb_mujoco_load(text, m, &ee, msg, sizeof msg);
    if (!mj) {
      fprintf(stderr, "knead-bench: MuJoCo %s could not load %s: %s\n", kb_mujoco_version(), urdf, msg);
      status = 1;
    }
  } else {
    printf("MuJoCo: not built in (install libmujoco-dev and reconfigure for the comparison)\n");
  }

  if (mj) {
    kb_mujoco_check(mj, m, d, &ee, &cfg, &chk);
    printf("\ncross-check against MuJoCo %s over %d configurations (max |difference|):\n", kb_mujoco_version(),
           cfg.nconf);
    printf("  nv             knead %d, MuJoCo %d\n", m->nv, chk.nv_mujoco);
    printf("  total mass     knead %.12g kg, MuJoCo %.12g kg\n", chk.mass_knead, chk.mass_mujoco);
    printf("  ee position    %.3g m\n", chk.fk);
    printf("  ee Jacobian    %.3g\n", chk.jac);
    printf("  M (mj_fullM)   %.3g   (max |M_ij| %.3g)\n", chk.M, chk.M_scale);
    printf("  tau (mj_rne)   %.3g\n", chk.tau);
    printf("  qdd (mj_forward qacc) %.3g   (max |qdd| %.3g)\n", chk.qdd, chk.qdd_scale);
    printf("  timed MuJoCo qdd chain vs mj_forward %.3g\n", chk.qdd_chain);
    printf("  => %s\n", chk.ok ? "agree" : "DISAGREE");
    if (!chk.ok) status = 1;
  }

  time_knead(m, d, &ee, &plan, &cfg, kn_us);
  if (mj) kb_mujoco_time(mj, &plan, &cfg, mj_us, &forward_us);

  printf("\n%-28s %10s %10s %8s\n", "operation", "knead us", "MuJoCo us", "ratio");
  for (int i = 0; i < KB_NOP; ++i) {
    if (i == KB_M_Q) printf("end to end, from raw (q, v):\n");
    if (mj)
      printf("%-28s %10.3f %10.3f %8.2f\n", kb_ops[i].name, kn_us[i], mj_us[i], kn_us[i] / mj_us[i]);
    else
      printf("%-28s %10.3f %10s %8s\n", kb_ops[i].name, kn_us[i], "-", "-");
  }
  printf("\ntimed calls (kernel rows get their inputs from untimed kinematics; MuJoCo's position stage\n"
         "is mj_kinematics+mj_comPos, its velocity stage adds mj_comVel):\n");
  for (int i = 0; i < KB_NOP; ++i)
    printf("  %-28s knead: %s%s%s\n", kb_ops[i].name, kb_ops[i].knead_calls, mj ? "; MuJoCo: " : "",
           mj ? kb_ops[i].mujoco_calls : "");
  if (mj)
    printf("  for reference, full mj_forward (constraints, contacts, passive forces off): %.3f us\n",
           forward_us);

  if (json) {
    if (!write_json(json, urdf, cpu, &plan, kn_us, mj_us, mj != NULL, &chk, forward_us)) {
      fprintf(stderr, "knead-bench: cannot write %s\n", json);
      status = 1;
    } else {
      printf("wrote %s\n", json);
    }
  }

  if (do_contact && !run_contact(scenes, nscene, steps, runs, mjcf_dir)) status = 1;
  if (do_fem && !kb_fem_run(quick)) status = 1;
  if (do_mpm && !kb_mpm_run(quick)) status = 1;
  if (do_backends && !kb_backends_run(KNEAD_BENCH_EXAMPLES, quick)) status = 1;
  if (do_continuous && !kb_continuous_run(quick)) status = 1;

  kb_mujoco_free(mj);
  configs_free(&cfg);
  kn_mb_data_free(d);
  kn_robot_free(robot);
  free(text);
  return status;
}
