/* knead-bench — the contact benchmark, MuJoCo side: the scene's knead world written out as MJCF
 * (same kinematic trees, inertias, joint limits and damping, collision primitives and meshes, friction,
 * time step and gravity) and stepped with mj_step.
 *
 * The PD controllers become MuJoCo position actuators (gain kp, target q_ref(t + dt)) plus joint
 * damping kd (MuJoCo integrates joint damping implicitly, as knead's SAP PD constraint is); the
 * terms MuJoCo 2.2.2 has no element for, knead's gravity-compensation feed-forward g(q) and the
 * kd v_ref part of the PD, go through qfrc_applied, computed by knead's own kn_ctrl_compute at
 * MuJoCo's state outside the timed region. Contact parameters (solref, solimp, cone, solver) are
 * MuJoCo's defaults. Compiled only with MuJoCo (KNEAD_HAVE_MUJOCO); otherwise a stub. */
#define _GNU_SOURCE /* open_memstream */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#ifndef KNEAD_HAVE_MUJOCO

int kb_contact_mujoco(const char* scene_path, long steps, int runs, const char* xml_out, kb_contact_result* out,
                      char* err, size_t errsz) {
  (void)scene_path, (void)steps, (void)runs, (void)xml_out;
  memset(out, 0, sizeof *out);
  snprintf(err, errsz, "not built with MuJoCo");
  return 0;
}

int kb_fidelity_mujoco(const char* scene_path, kb_fidelity_result* out, char* err, size_t errsz) {
  (void)scene_path;
  memset(out, 0, sizeof *out);
  snprintf(err, errsz, "knead-bench was built without MuJoCo (libmujoco-dev)");
  return 0;
}

#else

#include <mujoco/mujoco.h>

/* MuJoCo's timer callback: wall time in seconds (its timers then fill d->timer) */
static mjtNum wall_seconds(void) { return kn_wall_time(); }

/* body => the representative of its welded group (walk up FIXED joints), -1 = the world */
static int weld_rep(const kn_mb_model* m, int b) {
  while (b >= 0 && m->bodies[b].jtype == KN_JOINT_FIXED) b = m->bodies[b].parent;
  return b;
}

/* a joint's name (a floating object root may have none: then its body's) */
static const char* jname(const kn_mb_body* B) { return B->joint_name ? B->joint_name : B->name; }

static void pose_attrs(FILE* f, const kn_pose* X) {
  double q[4];
  kn_quat_from_mat3(X->R, q);
  fprintf(f, " pos=\"%.17g %.17g %.17g\" quat=\"%.17g %.17g %.17g %.17g\"", X->p[0], X->p[1], X->p[2], q[0], q[1],
          q[2], q[3]);
}

/* one collision geometry as a <geom>; 0 for a shape without a MuJoCo counterpart (an unresolved mesh) */
static int write_geom(FILE* f, const kn_world* w, int i, const kn_pose* X) {
  const kn_world_collider* c = &w->colliders[i];
  const kn_shape* s = c->c.shape;
  const double* z = s->size;
  fprintf(f, "<geom name=\"%d:%s\"", i, c->name); /* collider names repeat (one per link) */
  switch (s->type) {
    case KN_SHAPE_SPHERE: fprintf(f, " type=\"sphere\" size=\"%.17g\"", z[0]); break;
    case KN_SHAPE_BOX: fprintf(f, " type=\"box\" size=\"%.17g %.17g %.17g\"", z[0] / 2, z[1] / 2, z[2] / 2); break;
    case KN_SHAPE_CYLINDER: fprintf(f, " type=\"cylinder\" size=\"%.17g %.17g\"", z[0], z[1] / 2); break;
    case KN_SHAPE_CAPSULE: fprintf(f, " type=\"capsule\" size=\"%.17g %.17g\"", z[0], z[1] / 2); break;
    case KN_SHAPE_HALFSPACE: fprintf(f, " type=\"plane\" size=\"0 0 1\""); break; /* normal +z, infinite */
    case KN_SHAPE_MESH: /* the same file, as an <asset> mesh (write_mesh_assets); MuJoCo collides its hull */
      if (!s->mesh_path) return 0;
      fprintf(f, " type=\"mesh\" mesh=\"mesh%d\"", i);
      break;
    default: return 0;
  }
  pose_attrs(f, X);
  fprintf(f, " friction=\"%.17g 0.005 0.0001\"/>\n", c->c.material.mu);
  return 1;
}

/* every mesh collider's file as a MuJoCo <mesh> asset named mesh<i>, with its scale */
static void write_mesh_assets(FILE* f, const kn_world* w) {
  int any = 0;
  for (int i = 0; i < w->ncollider; i++) {
    const kn_shape* s = w->colliders[i].c.shape;
    if (s->type != KN_SHAPE_MESH || !s->mesh_path) continue;
    if (!any) fprintf(f, "<asset>\n"), any = 1;
    char* abs = realpath(s->mesh_path, NULL); /* MuJoCo would resolve a relative path from the cwd */
    fprintf(f, "<mesh name=\"mesh%d\" file=\"%s\" scale=\"%.17g %.17g %.17g\"/>\n", i, abs ? abs : s->mesh_path,
            s->scale[0], s->scale[1], s->scale[2]);
    free(abs);
  }
  if (any) fprintf(f, "</asset>\n");
}

/* the bodies of tree k below `parent`, nested */
static int write_bodies(FILE* f, const kn_world* w, int k, int parent, const double* kd) {
  const kn_mb_model* m = w->trees[k].robot->model;
  for (int b = 0; b < m->nbody; b++) {
    const kn_mb_body* B = &m->bodies[b];
    if (B->parent != parent) continue;
    fprintf(f, "<body name=\"t%d/%s\"", k, B->name);
    pose_attrs(f, &B->X_pj);
    fprintf(f, ">\n");
    double mass = B->mass > 1e-9 ? B->mass : 1e-9;
    const double* I = B->I_com;
    fprintf(f,
            "<inertial pos=\"%.17g %.17g %.17g\" mass=\"%.17g\" fullinertia=\"%.17g %.17g %.17g %.17g %.17g "
            "%.17g\"/>\n",
            B->com[0], B->com[1], B->com[2], mass, fmax(I[0], 1e-12), fmax(I[4], 1e-12), fmax(I[8], 1e-12), I[1],
            I[2], I[5]);
    switch (B->jtype) {
      case KN_JOINT_FIXED: break;
      case KN_JOINT_FLOATING: fprintf(f, "<freejoint name=\"t%d/%s\"/>\n", k, jname(B)); break;
      case KN_JOINT_REVOLUTE:
      case KN_JOINT_CONTINUOUS:
      case KN_JOINT_PRISMATIC:
        fprintf(f, "<joint name=\"t%d/%s\" type=\"%s\" axis=\"%.17g %.17g %.17g\" damping=\"%.17g\"", k, jname(B),
                B->jtype == KN_JOINT_PRISMATIC ? "slide" : "hinge", B->axis[0], B->axis[1], B->axis[2],
                B->damping + (kd ? kd[B->v_adr] : 0.0));
        if (B->has_position_limits) fprintf(f, " limited=\"true\" range=\"%.17g %.17g\"", B->lower, B->upper);
        fprintf(f, "/>\n");
        break;
      default: return 0; /* planar */
    }
    for (int i = 0; i < w->ncollider; i++) {
      const kn_world_collider* c = &w->colliders[i];
      if (c->tree == k && c->c.body == b && !write_geom(f, w, i, &c->c.X_bg)) return 0;
    }
    if (!write_bodies(f, w, k, b, kd)) return 0;
    fprintf(f, "</body>\n");
  }
  return 1;
}

/* knead filters a welded group against itself and the group it is jointed to (sim/colliders.c);
 * MuJoCo only parent and child bodies: exclude the other pairs knead never tests */
static void write_excludes(FILE* f, const kn_world* w, int k) {
  const kn_mb_model* m = w->trees[k].robot->model;
  for (int a = 0; a < m->nbody; a++)
    for (int b = a + 1; b < m->nbody; b++) {
      int ra = weld_rep(m, a), rb = weld_rep(m, b);
      if (ra < 0 && rb < 0) continue; /* both static: MuJoCo never tests them */
      int pa = ra >= 0 && m->bodies[ra].jtype != KN_JOINT_FLOATING ? weld_rep(m, m->bodies[ra].parent) : -2;
      int pb = rb >= 0 && m->bodies[rb].jtype != KN_JOINT_FLOATING ? weld_rep(m, m->bodies[rb].parent) : -2;
      if (ra == rb || pa == rb || pb == ra)
        fprintf(f, "<exclude body1=\"t%d/%s\" body2=\"t%d/%s\"/>\n", k, m->bodies[a].name, k, m->bodies[b].name);
    }
}

/* the MJCF of world w (malloc'd), with actuators for its PD dofs; NULL when a part has no
 * MuJoCo counterpart */
static char* world_mjcf(const kn_world* w, char* err, size_t errsz) {
  char* buf = NULL;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  if (!f) return NULL;
  const double* g = w->scene->gravity;
  fprintf(f, "<mujoco model=\"%s\">\n<compiler angle=\"radian\" inertiafromgeom=\"false\"/>\n", w->scene->name);
  fprintf(f, "<option timestep=\"%.17g\" gravity=\"%.17g %.17g %.17g\" integrator=\"implicit\"/>\n",
          w->scene->time_step, g[0], g[1], g[2]);
  write_mesh_assets(f, w);
  fprintf(f, "<worldbody>\n");
  int ok = 1;
  for (int i = 0; ok && i < w->ncollider; i++) /* world-fixed geometry: pose in the world */
    if (w->colliders[i].c.body < 0) ok = write_geom(f, w, i, &w->colliders[i].c.X_bg);
  for (int k = 0; ok && k < w->ntree; k++) {
    const kn_world_tree* tr = &w->trees[k];
    if (tr->robot->model->nv == 0) continue; /* its geometry is world-fixed, above */
    ok = write_bodies(f, w, k, -1, tr->nctrl ? tr->buf->act.kd : NULL);
  }
  fprintf(f, "</worldbody>\n<contact>\n");
  for (int k = 0; k < w->ntree; k++)
    if (w->trees[k].robot->model->nv > 0) write_excludes(f, w, k);
  fprintf(f, "</contact>\n<equality>\n");
  for (int k = 0; k < w->ntree; k++) {
    const kn_mb_model* m = w->trees[k].robot->model;
    for (int c = 0; c < m->ncoupler; c++) {
      const kn_mb_coupler* cu = &m->couplers[c];
      fprintf(f, "<joint joint1=\"t%d/%s\" joint2=\"t%d/%s\" polycoef=\"%.17g %.17g 0 0 0\"/>\n", k,
              jname(&m->bodies[cu->body]), k, jname(&m->bodies[cu->master]), cu->offset, cu->multiplier);
    }
  }
  fprintf(f, "</equality>\n<actuator>\n");
  for (int k = 0; k < w->ntree; k++) {
    const kn_world_tree* tr = &w->trees[k];
    if (!tr->nctrl) continue;
    const kn_mb_model* m = tr->robot->model;
    const kn_mb_actuation* act = &tr->buf->act;
    for (int b = 0; b < m->nbody; b++) {
      const kn_mb_body* B = &m->bodies[b];
      if (B->nv != 1 || !act->kp || !(act->kp[B->v_adr] > 0)) continue;
      fprintf(f, "<position name=\"t%d/%s\" joint=\"t%d/%s\" kp=\"%.17g\"", k, jname(B), k, jname(B),
              act->kp[B->v_adr]);
      double e = act->effort ? act->effort[B->v_adr] : INFINITY;
      if (isfinite(e)) fprintf(f, " forcelimited=\"true\" forcerange=\"%.17g %.17g\"", -e, e);
      fprintf(f, "/>\n");
    }
  }
  fprintf(f, "</actuator>\n</mujoco>\n");
  fclose(f);
  if (!ok) {
    snprintf(err, errsz, "the scene has a joint or shape without a MuJoCo counterpart (planar joint, unresolved mesh)");
    free(buf);
    return NULL;
  }
  return buf;
}

/* knead dof => MuJoCo address, per tree */
typedef struct {
  int* qadr;  /* nq of the tree's 1-DoF joints; -1 elsewhere */
  int* vadr;
  int* act;   /* actuator of the dof, -1 none */
  int free_q; /* qpos address of a floating root, -1 none */
} tree_map;

/* controllers at t + dt from MuJoCo's state => ctrl and qfrc_applied (gravity compensation and
 * kd v_ref) */
static int drive(kn_world* w, const tree_map* map, const mjModel* mm, mjData* md, char* err, size_t errsz) {
  for (int k = 0; k < w->ntree; k++) {
    kn_world_tree* tr = &w->trees[k];
    if (!tr->nctrl) continue;
    const kn_mb_model* m = tr->robot->model;
    for (int b = 0; b < m->nbody; b++) {
      const kn_mb_body* B = &m->bodies[b];
      if (B->nv != 1) continue;
      tr->q[B->q_adr] = md->qpos[map[k].qadr[B->v_adr]];
      tr->v[B->v_adr] = md->qvel[map[k].vadr[B->v_adr]];
    }
    kn_error e = {0};
    if (kn_ctrl_compute((const kn_controller* const*)tr->ctrls, tr->nctrl, m, tr->data, md->time + mm->opt.timestep,
                        tr->q, tr->v, tr->buf, &e) != KN_OK) {
      snprintf(err, errsz, "%s", e.msg);
      return 0;
    }
    const kn_mb_actuation* act = &tr->buf->act;
    for (int i = 0; i < m->nv; i++) {
      if (map[k].vadr[i] < 0) continue;
      double kd = act->kd ? act->kd[i] : 0, vr = act->v_ref ? act->v_ref[i] : 0;
      md->qfrc_applied[map[k].vadr[i]] = (act->tau0 ? act->tau0[i] : 0) + kd * vr;
      if (map[k].act[i] >= 0) md->ctrl[map[k].act[i]] = act->q_ref ? act->q_ref[i] : 0;
    }
  }
  return 1;
}

int kb_contact_mujoco(const char* scene_path, long steps, int runs, const char* xml_out, kb_contact_result* out,
                      char* err, size_t errsz) {
  memset(out, 0, sizeof *out);
  kn_error e = {0};
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  if (kn_scene_load(scene_path, &sc, &e) != KN_OK || kn_world_create(sc, &w, &e) != KN_OK) {
    snprintf(err, errsz, "%s", e.msg);
    kn_scene_free(sc);
    return 0;
  }
  /* the controllers' gains and the initial references, as knead's first step sees them */
  for (int k = 0; k < w->ntree; k++) {
    kn_world_tree* tr = &w->trees[k];
    if (tr->nctrl)
      kn_ctrl_compute((const kn_controller* const*)tr->ctrls, tr->nctrl, tr->robot->model, tr->data,
                      sc->time_step, tr->q, tr->v, tr->buf, &e);
  }
  char* xml = world_mjcf(w, err, errsz);
  mjModel* mm = NULL;
  if (xml) {
    if (xml_out) {
      FILE* f = fopen(xml_out, "w");
      if (f) fputs(xml, f), fclose(f);
    }
    mjVFS* vfs = calloc(1, sizeof(mjVFS)); /* ~2 MB in 2.2.2 */
    mj_defaultVFS(vfs);
    int n = (int)strlen(xml);
    mj_makeEmptyFileVFS(vfs, "knead_contact.xml", n);
    memcpy(vfs->filedata[vfs->nfile - 1], xml, (size_t)n);
    char msg[1000] = "";
    mm = mj_loadXML("knead_contact.xml", vfs, msg, sizeof msg);
    mj_deleteVFS(vfs);
    free(vfs);
    if (!mm) snprintf(err, errsz, "mj_loadXML: %s", msg);
  }
  free(xml);
  tree_map* map = calloc((size_t)w->ntree, sizeof *map);
  int ok = mm && map;
  int obj_q = -1; /* qpos of the first free object */
  for (int k = 0; ok && k < w->ntree; k++) {
    const kn_mb_model* m = w->trees[k].robot->model;
    map[k].qadr = malloc((size_t)(m->nv + 1) * sizeof(int));
    map[k].vadr = malloc((size_t)(m->nv + 1) * sizeof(int));
    map[k].act = malloc((size_t)(m->nv + 1) * sizeof(int));
    map[k].free_q = -1;
    for (int i = 0; i < m->nv; i++) map[k].qadr[i] = map[k].vadr[i] = map[k].act[i] = -1;
    for (int b = 0; b < m->nbody; b++) {
      const kn_mb_body* B = &m->bodies[b];
      if (B->nv == 0) continue;
      char name[512];
      snprintf(name, sizeof name, "t%d/%s", k, jname(B));
      int j = mj_name2id(mm, mjOBJ_JOINT, name);
      if (j < 0) continue;
      if (B->jtype == KN_JOINT_FLOATING) {
        map[k].free_q = mm->jnt_qposadr[j];
        if (obj_q < 0 && w->trees[k].object >= 0) obj_q = map[k].free_q;
        continue;
      }
      map[k].qadr[B->v_adr] = mm->jnt_qposadr[j];
      map[k].vadr[B->v_adr] = mm->jnt_dofadr[j];
      map[k].act[B->v_adr] = mj_name2id(mm, mjOBJ_ACTUATOR, name);
    }
  }
  mjData* md = ok ? mj_makeData(mm) : NULL;
  /* initial state: knead's q0 (1-DoF joints) and body poses (floating roots) */
  kn_world_tree* trees = w->trees;
  double* q_init = ok ? malloc((size_t)mm->nq * sizeof(double)) : NULL;
  if (ok) {
    memcpy(q_init, mm->qpos0, (size_t)mm->nq * sizeof(double));
    for (int k = 0; k < w->ntree; k++) {
      const kn_mb_model* m = trees[k].robot->model;
      kn_mb_kinematics(m, trees[k].q, NULL, trees[k].data);
      for (int b = 0; b < m->nbody; b++) {
        const kn_mb_body* B = &m->bodies[b];
        if (B->nv == 1 && map[k].qadr[B->v_adr] >= 0) q_init[map[k].qadr[B->v_adr]] = trees[k].q[B->q_adr];
        if (B->jtype == KN_JOINT_FLOATING && map[k].free_q >= 0) {
          const kn_pose* X = &trees[k].data->X_wb[b];
          memcpy(q_init + map[k].free_q, X->p, 3 * sizeof(double));
          kn_quat_from_mat3(X->R, q_init + map[k].free_q + 3);
        }
      }
    }
  }
  long ns = steps > 0 ? steps : kn_world_total_steps(w);
  double* t = ok ? malloc((size_t)(ns * runs) * sizeof *t) : NULL;
  long n = 0, iters = 0, neval = 0, contacts = 0;
  double t_collision = 0, t_mjstep = 0;
  mjfTime old_time = mjcb_time;
  mjcb_time = wall_seconds; /* MuJoCo's own stage timers: the detection share */
  for (int r = 0; ok && r < runs; r++) {
    mj_resetData(mm, md);
    memcpy(md->qpos, q_init, (size_t)mm->nq * sizeof(double));
    mj_forward(mm, md);
    double x0 = obj_q >= 0 ? md->qpos[obj_q] : 0, z0 = obj_q >= 0 ? md->qpos[obj_q + 2] : 0;
    for (long s = 0; ok && s < ns; s++) {
      if (!(ok = drive(w, map, mm, md, err, errsz))) break;
      double t0 = kn_wall_time();
      mj_step(mm, md);
      double t1 = kn_wall_time();
      t[n++] = (t1 - t0) * 1e6;
      t_collision += md->timer[mjTIMER_POS_COLLISION].duration, t_mjstep += md->timer[mjTIMER_STEP].duration;
      md->timer[mjTIMER_POS_COLLISION].duration = md->timer[mjTIMER_STEP].duration = 0;
      int it = md->solver_iter, ev = 0;
      for (int i = 0; i < it && i < mjNSOLVER; i++) ev += md->solver[i].neval;
      iters += it, neval += ev, contacts += md->ncon;
      if (it > out->iter_max) out->iter_max = it;
      if (ev > out->ls_max) out->ls_max = ev;
      if (md->ncon > out->contacts_max) out->contacts_max = md->ncon;
    }
    for (int i = 0; ok && i < mm->nv; i++)
      if (!isfinite(md->qvel[i])) {
        snprintf(err, errsz, "MuJoCo diverged (qvel[%d] not finite)", i);
        ok = 0;
      }
    if (obj_q >= 0) out->object_dx = md->qpos[obj_q] - x0, out->object_dz = md->qpos[obj_q + 2] - z0;
  }
  if (ok && n > 0) {
    out->ok = 1;
    out->steps = n;
    out->runs = runs;
    out->iter_mean = (double)iters / (double)n;
    out->ls_mean = (double)neval / (double)n;
    out->contacts_mean = (double)contacts / (double)n;
    out->detect_share = t_mjstep > 0 ? t_collision / t_mjstep : 0;
    kb_contact_summarize(t, n, out);
  }
  mjcb_time = old_time;
  free(t);
  free(q_init);
  for (int k = 0; map && k < w->ntree; k++) free(map[k].qadr), free(map[k].vadr), free(map[k].act);
  free(map);
  if (md) mj_deleteData(md);
  if (mm) mj_deleteModel(mm);
  kn_world_free(w);
  kn_scene_free(sc);
  return out->ok;
}

/*---- the fidelity scenes (knead-bench --fidelity) ----*/

/* MuJoCo's state of the free bodies into knead's trees: qpos (world position, quaternion w x y z)
 * is knead's q of a FLOATING root whose joint frame is the world's; qvel is (linear velocity in
 * the world, angular velocity in the body frame), knead's v is [omega_B; v_B], both in the body */
static void to_knead(kn_world* w, const int* free_q, const int* free_v, const mjData* md) {
  for (int k = 0; k < w->ntree; k++) {
    if (free_q[k] < 0) continue;
    kn_world_tree* tr = &w->trees[k];
    const double* q = md->qpos + free_q[k];
    const double* v = md->qvel + free_v[k];
    memcpy(tr->q, q, 7 * sizeof(double));
    double R[9];
    kn_mat3_from_quat(q + 3, R);
    for (int i = 0; i < 3; i++) {
      tr->v[i] = v[3 + i];
      tr->v[3 + i] = R[i] * v[0] + R[3 + i] * v[1] + R[6 + i] * v[2]; /* R^T v_world */
    }
  }
}

int kb_fidelity_mujoco(const char* scene_path, kb_fidelity_result* out, char* err, size_t errsz) {
  memset(out, 0, sizeof *out);
  kn_error e = {0};
  kn_scene* sc = NULL;
  kn_world* w = NULL;
  if (kn_scene_load(scene_path, &sc, &e) != KN_OK || kn_world_create(sc, &w, &e) != KN_OK ||
      kn_checks_attach(w, &e) != KN_OK) {
    snprintf(err, errsz, "%s", e.msg);
    kn_world_free(w);
    kn_scene_free(sc);
    return 0;
  }
  out->built = 1;
  snprintf(out->name, sizeof out->name, "%s", sc->name ? sc->name : "");
  if (w->nfem > 0 || w->nmpm > 0) {
    snprintf(err, errsz, "%s body: MuJoCo %s has no %s", w->nfem > 0 ? "an FEM" : "an MPM", mj_versionString(),
             w->nfem > 0 ? "volumetric FEM solid (its flex bodies came in 3.0)" : "material point method");
    out->built = 0;
  }
  int* free_q = calloc((size_t)w->ntree + 1, sizeof(int));
  int* free_v = calloc((size_t)w->ntree + 1, sizeof(int));
  if (!free_q || !free_v) {
    snprintf(err, errsz, "out of memory");
    out->built = 0;
  }
  for (int k = 0; out->built && k < w->ntree; k++) {
    const kn_mb_model* m = w->trees[k].robot->model;
    free_q[k] = free_v[k] = -1;
    if (m->nv == 0) continue;
    const kn_mb_body* B = &m->bodies[0];
    const double* R = B->X_pj.R;
    int identity = m->nbody >= 1 && B->jtype == KN_JOINT_FLOATING && m->nv == 6 && B->X_pj.p[0] == 0 &&
                   B->X_pj.p[1] == 0 && B->X_pj.p[2] == 0 && R[0] == 1 && R[4] == 1 && R[8] == 1;
    if (!identity) {
      snprintf(err, errsz, "%s: only free bodies are mapped (a robot or jointed tree: not in this mode)",
               kn_sim_tree_name(w, k));
      out->built = 0;
    }
  }
  char* xml = out->built ? world_mjcf(w, err, errsz) : NULL;
  mjModel* mm = NULL;
  if (xml) {
    mjVFS* vfs = calloc(1, sizeof(mjVFS));
    mj_defaultVFS(vfs);
    int n = (int)strlen(xml);
    mj_makeEmptyFileVFS(vfs, "knead_fidelity.xml", n);
    memcpy(vfs->filedata[vfs->nfile - 1], xml, (size_t)n);
    char msg[1000] = "";
    mm = mj_loadXML("knead_fidelity.xml", vfs, msg, sizeof msg);
    mj_deleteVFS(vfs);
    free(vfs);
    if (!mm) snprintf(err, errsz, "mj_loadXML: %s", msg);
  }
  free(xml);
  if (!mm) out->built = 0;
  mjData* md = mm ? mj_makeData(mm) : NULL;
  for (int k = 0; md && k < w->ntree; k++) {
    const kn_mb_model* m = w->trees[k].robot->model;
    if (m->nv == 0) continue;
    char name[512];
    snprintf(name, sizeof name, "t%d/%s", k, jname(&m->bodies[0]));
    int j = mj_name2id(mm, mjOBJ_JOINT, name);
    if (j < 0) {
      snprintf(err, errsz, "no MuJoCo joint %s", name);
      out->built = 0;
      break;
    }
    free_q[k] = mm->jnt_qposadr[j], free_v[k] = mm->jnt_dofadr[j];
    /* knead's initial state: q, and v as (R v_B, omega_B) */
    const kn_world_tree* tr = &w->trees[k];
    memcpy(md->qpos + free_q[k], tr->q, 7 * sizeof(double));
    double R[9];
    kn_mat3_from_quat(tr->q + 3, R);
    for (int i = 0; i < 3; i++) {
      md->qvel[free_v[k] + i] = R[3 * i] * tr->v[3] + R[3 * i + 1] * tr->v[4] + R[3 * i + 2] * tr->v[5];
      md->qvel[free_v[k] + 3 + i] = tr->v[i];
    }
  }
  /* no_penetration: the deepest MuJoCo contact in the check's window; -value is its limit */
  const unsigned nck = sc->doc->nchecks;
  double* deepest = calloc(nck + 1, sizeof *deepest);
  for (unsigned i = 0; deepest && i < nck; i++) deepest[i] = INFINITY;
  long ns = kn_world_total_steps(w), n = 0;
  double* us = calloc((size_t)ns + 1, sizeof *us); /* per step */
  int ok = md && out->built && us && deepest;
  if (ok) mj_forward(mm, md);
  for (long s = 0; ok && s < ns; s++) {
    double t0 = kn_wall_time();
    mj_step(mm, md);
    us[n++] = (kn_wall_time() - t0) * 1e6;
    for (int i = 0; ok && i < mm->nv; i++)
      if (!isfinite(md->qvel[i])) {
        snprintf(err, errsz, "MuJoCo diverged at t = %g s", md->time);
        ok = 0;
      }
    /* the checks observe MuJoCo's state as they observe knead's after a step */
    to_knead(w, free_q, free_v, md);
    w->t = md->time, w->step = s + 1;
    for (int o = 0; o < w->nobserver; o++)
      if (w->observers[o].ops->stepped) w->observers[o].ops->stepped(w->observers[o].self, w);
    for (unsigned i = 0; i < nck; i++) {
      const kn_scene_check* d = &sc->doc->checks[i];
      double lo = d->after ? *d->after : 0, hi = d->before ? *d->before : INFINITY;
      if (d->type != KN_CHECK_NO_PENETRATION || md->time < lo - 1e-9 || md->time > hi + 1e-9) continue;
      for (int c = 0; c < md->ncon; c++) deepest[i] = fmin(deepest[i], md->contact[c].dist);
    }
  }
  if (ok && n == ns) {
    int nc = 0;
    const kn_check_result* r = kn_world_checks(w, &nc);
    out->nchecks = nc < KB_FIDELITY_MAX_CHECKS ? nc : KB_FIDELITY_MAX_CHECKS;
    for (int i = 0; i < out->nchecks; i++) {
      kb_fidelity_check* k = &out->checks[i];
      snprintf(k->name, sizeof k->name, "%s", r[i].name);
      snprintf(k->unit, sizeof k->unit, "%s", r[i].unit ? r[i].unit : "");
      k->expect_fail = r[i].expect_fail;
      k->measured = r[i].measured, k->passed = r[i].passed;
      k->measured_here = 1;
      snprintf(k->message, sizeof k->message, "%s", r[i].message);
      if (r[i].type == KN_CHECK_NO_PENETRATION) {
        const kn_scene_check* d = &sc->doc->checks[i];
        double limit = d->value ? *d->value : 0;
        k->measured = isfinite(deepest[i]) ? deepest[i] : NAN;
        k->passed = !(deepest[i] < -limit);
        snprintf(k->unit, sizeof k->unit, "m");
        snprintf(k->message, sizeof k->message, "deepest MuJoCo contact distance %g m; needs > %g m", k->measured,
                 -limit);
      } else if (r[i].type == KN_CHECK_CONTACT_FORCE || r[i].type == KN_CHECK_SOLVER_CONVERGED) {
        k->measured_here = 0; /* knead's contact forces or solver: nothing of MuJoCo's */
        k->passed = 0, k->measured = NAN;
        snprintf(k->message, sizeof k->message, "not measured in MuJoCo (reads knead's %s)",
                 r[i].type == KN_CHECK_CONTACT_FORCE ? "contact forces" : "solver");
      }
    }
    out->steps = n;
    kb_contact_result sum = {0};
    kb_contact_summarize(us, n, &sum);
    out->us_per_step = sum.median_us;
    out->ok = 1;
  }
  free(deepest);
  free(us);
  free(free_q), free(free_v);
  if (md) mj_deleteData(md);
  if (mm) mj_deleteModel(mm);
  kn_world_free(w);
  kn_scene_free(sc);
  return out->ok;
}

#endif
