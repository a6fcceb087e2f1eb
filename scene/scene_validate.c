/* Scenes: the checks of a parsed document that need no robot model (sizes, ranges, unique names,
 * references between sections) and its defaults, every error as "file:line: key.path: ...". */
#include <ctype.h>
#include <cyaml/cyaml.h>
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "deformable/deformable.h"
#include "scene/scene_internal.h"

//---- semantic checks and defaults ----

int kn_scene_line(const kn_scene* s, const char* key_path) { return s ? kn_scene_lines_find(s->lines, key_path) : 0; }

kn_status kn_scene_fail(const kn_scene* s, kn_error* err, kn_status status, const char* key_path, const char* fmt,
                        ...) {
  char msg[KN_ERROR_MSG];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  int line = kn_scene_line(s, key_path);
  /* after loading, a key an override set says so (while loading, kn_scene_load_string_with does) */
  const char* set = NULL;
  for (int i = 0; s && key_path && i < s->noverrides && !set; i++) {
    size_t k = strlen(key_path);
    if (strncmp(s->overrides[i], key_path, k) == 0 && s->overrides[i][k] == '=') set = s->overrides[i];
  }
  if (line)
    return kn_fail(err, status, "%s:%d: %s: %s%s%s%s", s->path, line, key_path, msg, set ? " (set by --set " : "",
                   set ? set : "", set ? ")" : "");
  return kn_fail(err, status, "%s: %s: %s%s%s%s", s ? s->path : "scene", key_path, msg, set ? " (set by --set " : "",
                 set ? set : "", set ? ")" : "");
}

static int all_finite(const double* x, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

static kn_status check_pose(const kn_scene* s, const kn_scene_pose* p, const char* key, kn_error* err) {
  if (!all_finite(p->xyz, 3) || !all_finite(p->rpy, 3))
    return kn_scene_fail(s, err, KN_ERR_INVALID, key, "xyz and rpy must be finite numbers");
  return KN_OK;
}

static kn_status check_controller(const kn_scene* s, const kn_scene_controller* c, const char* key,
                                  kn_error* err) {
  char k[256];
  if (c->kp && c->kp_per_joint) {
    snprintf(k, sizeof k, "%s.kp_per_joint", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "give kp (one value for every joint) or kp_per_joint, not both");
  }
  if (!c->kp && !c->kp_per_joint)
    return kn_scene_fail(s, err, KN_ERR_INVALID, key, "a pd controller needs kp (or kp_per_joint)");
  if (c->kd && c->kd_per_joint) {
    snprintf(k, sizeof k, "%s.kd_per_joint", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "give kd (one value for every joint) or kd_per_joint, not both");
  }
  struct {
    const char* name;
    const double* x;
    unsigned n;
  } gains[] = {{"kp", c->kp, c->kp ? 1u : 0u},
               {"kp_per_joint", c->kp_per_joint, c->nkp_per_joint},
               {"kd", c->kd, c->kd ? 1u : 0u},
               {"kd_per_joint", c->kd_per_joint, c->nkd_per_joint}};
  for (int g = 0; g < 4; g++)
    for (unsigned i = 0; i < gains[g].n; i++)
      if (!(gains[g].x[i] >= 0) || !isfinite(gains[g].x[i])) {
        snprintf(k, sizeof k, "%s.%s", key, gains[g].name);
        return kn_scene_fail(s, err, KN_ERR_INVALID, k, "gains must be finite and >= 0 (got %g)", gains[g].x[i]);
      }
  for (unsigned i = 0; i < c->neffort_limits; i++)
    if (!(c->effort_limits[i] > 0)) {
      snprintf(k, sizeof k, "%s.effort_limits", key);
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "effort limits must be > 0 (.inf for none), got %g",
                           c->effort_limits[i]);
    }
  int nref = (c->setpoint != NULL) + (c->trajectory != NULL) + (c->sequence != NULL);
  if (nref > 1)
    return kn_scene_fail(s, err, KN_ERR_INVALID, key, "give one reference: setpoint, trajectory or sequence");
  if (c->setpoint && !all_finite(c->setpoint, c->nsetpoint)) {
    snprintf(k, sizeof k, "%s.setpoint", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "values must be finite");
  }
  if (c->trajectory) {
    const kn_scene_trajectory* tr = c->trajectory;
    snprintf(k, sizeof k, "%s.trajectory", key);
    if ((tr->points != NULL) == (tr->csv != NULL))
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "give either points or csv");
    for (unsigned i = 0; i < tr->npoints; i++) {
      snprintf(k, sizeof k, "%s.trajectory.points[%u]", key, i);
      if (!isfinite(tr->points[i].t) || !all_finite(tr->points[i].q, tr->points[i].nq))
        return kn_scene_fail(s, err, KN_ERR_INVALID, k, "t and q must be finite");
      if (i > 0 && !(tr->points[i].t > tr->points[i - 1].t))
        return kn_scene_fail(s, err, KN_ERR_INVALID, k, "times must increase (t = %g after t = %g)", tr->points[i].t,
                             tr->points[i - 1].t);
      if (tr->points[i].nq != tr->points[0].nq)
        return kn_scene_fail(s, err, KN_ERR_INVALID, k, "q has %u values; points[0] has %u", tr->points[i].nq,
                             tr->points[0].nq);
    }
  }
  for (unsigned i = 0; i < c->nsequence; i++) {
    snprintf(k, sizeof k, "%s.sequence[%u]", key, i);
    if (!(c->sequence[i].duration > 0) || !isfinite(c->sequence[i].duration))
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "duration must be > 0 (phase '%s')", c->sequence[i].name);
    if (!all_finite(c->sequence[i].q, c->sequence[i].nq))
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "q must be finite (phase '%s')", c->sequence[i].name);
  }
  return KN_OK;
}

// (material values under key) => KN_OK when friction >= 0, stiffness > 0, dissipation_time >= 0
static kn_status check_material(const kn_scene* s, const double* mu, const double* k, const double* tau,
                                const char* key, kn_error* err) {
  char kk[256];
  if (mu && !(*mu >= 0 && isfinite(*mu))) {
    snprintf(kk, sizeof kk, "%s.friction", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, kk, "must be finite and >= 0 (got %g)", *mu);
  }
  if (mu && *mu > KN_SCENE_MAX_FRICTION) {
    snprintf(kk, sizeof kk, "%s.friction", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, kk,
                         "%g is beyond what the contact solver can use; expected <= %g (a pair's friction is the "
                         "harmonic mean 2ab/(a+b), which overflows, and SAP's cone squares it)",
                         *mu, KN_SCENE_MAX_FRICTION);
  }
  if (k && !(*k > 0)) {
    snprintf(kk, sizeof kk, "%s.stiffness", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, kk, "must be > 0 N/m (inf for rigid; got %g)", *k);
  }
  if (k && *k < KN_SCENE_MIN_STIFFNESS) {
    snprintf(kk, sizeof kk, "%s.stiffness", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, kk,
                         "%g N/m is below what the contact solver can use; expected >= %g N/m (a pair's stiffness "
                         "is k_a k_b / (k_a + k_b), which underflows to 0)",
                         *k, KN_SCENE_MIN_STIFFNESS);
  }
  if (tau && !(*tau >= 0 && isfinite(*tau))) {
    snprintf(kk, sizeof kk, "%s.dissipation_time", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, kk, "must be finite and >= 0 s (got %g)", *tau);
  }
  return KN_OK;
}

// (contact section) => margin and solver options checked
static kn_status check_contact_section(kn_scene* s, kn_error* err) {
  const kn_scene_contact* c = s->doc->contact;
  s->margin = 0;
  if (!c) return KN_OK;
  if (c->margin) {
    if (!(*c->margin >= 0) || !isfinite(*c->margin))
      return kn_scene_fail(s, err, KN_ERR_INVALID, "contact.margin", "must be finite and >= 0 m (got %g)", *c->margin);
    s->margin = *c->margin;
  }
  if (c->solver) {
    const kn_scene_solver* o = c->solver;
    if (o->max_iterations && *o->max_iterations < 1)
      return kn_scene_fail(s, err, KN_ERR_INVALID, "contact.solver.max_iterations", "must be >= 1 (got %d)",
                           *o->max_iterations);
    if (o->rel_tolerance && !(*o->rel_tolerance >= 0 && isfinite(*o->rel_tolerance)))
      return kn_scene_fail(s, err, KN_ERR_INVALID, "contact.solver.rel_tolerance", "must be finite and >= 0");
    if (o->abs_tolerance && !(*o->abs_tolerance >= 0 && isfinite(*o->abs_tolerance)))
      return kn_scene_fail(s, err, KN_ERR_INVALID, "contact.solver.abs_tolerance", "must be finite and >= 0");
  }
  return KN_OK;
}

// (objects[i]) => one name among robots and objects, one shape or a urdf, sizes and masses > 0
static kn_status check_object(const kn_scene* s, unsigned i, kn_error* err) {
  const kn_scene_doc* d = s->doc;
  const kn_scene_object* o = &d->objects[i];
  char key[64], k[128];
  snprintf(key, sizeof key, "objects[%u]", i);
  snprintf(k, sizeof k, "%s.name", key);
  for (unsigned j = 0; j < i; j++)
    if (strcmp(d->objects[j].name, o->name) == 0)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "object name '%s' is already used by objects[%u]", o->name, j);
  for (unsigned j = 0; j < d->nrobots; j++)
    if (strcmp(d->robots[j].name, o->name) == 0)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "object name '%s' is already used by robots[%u]", o->name, j);
  if ((o->shape != NULL) == (o->urdf != NULL))
    return kn_scene_fail(s, err, KN_ERR_INVALID, key, "object '%s': give either shape or urdf", o->name);
  if (check_pose(s, &o->pose, key, err)) return err->status;
  if (o->mass && o->density)
    return kn_scene_fail(s, err, KN_ERR_INVALID, key, "object '%s': give mass or density, not both", o->name);
  if (o->mass && !(*o->mass > 0 && isfinite(*o->mass))) {
    snprintf(k, sizeof k, "%s.mass", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "must be finite and > 0 kg (got %g)", *o->mass);
  }
  if (o->density && !(*o->density > 0 && isfinite(*o->density))) {
    snprintf(k, sizeof k, "%s.density", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "must be finite and > 0 kg/m^3 (got %g)", *o->density);
  }
  if (o->velocity && !all_finite(o->velocity, 6)) {
    snprintf(k, sizeof k, "%s.velocity", key);
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "values must be finite");
  }
  if (check_material(s, o->friction, o->stiffness, o->dissipation_time, key, err)) return err->status;
  if (!o->shape) return KN_OK;
  const kn_scene_shape* sh = o->shape;
  snprintf(k, sizeof k, "%s.shape", key);
  int nshape = (sh->box != NULL) + (sh->sphere != NULL) + (sh->cylinder != NULL) + (sh->capsule != NULL) +
               (sh->halfspace != NULL) + (sh->mesh != NULL);
  if (nshape != 1)
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "object '%s': give exactly one of box, sphere, cylinder, "
                         "capsule, halfspace, mesh (got %d)", o->name, nshape);
  const double* size = sh->box ? sh->box : sh->sphere ? sh->sphere : sh->cylinder ? sh->cylinder : sh->capsule;
  int nsize = sh->box ? 3 : sh->sphere ? 1 : (sh->cylinder || sh->capsule) ? 2 : 0;
  for (int j = 0; j < nsize; j++)
    if (!(size[j] > 0 && isfinite(size[j])))
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "object '%s': sizes must be finite and > 0 m (got %g)",
                           o->name, size[j]);
  if (sh->halfspace) {
    if (!all_finite(sh->halfspace->normal, 3) || kn_vec3_norm(sh->halfspace->normal) < 1e-12)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "object '%s': halfspace normal must be finite and non-zero",
                           o->name);
    if (!o->fixed)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "object '%s': a halfspace has no mass; it must be fixed: true",
                           o->name);
  }
  if (sh->scale && !sh->mesh)
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "object '%s': scale applies to a mesh only", o->name);
  return KN_OK;
}

// (an MPM deformable) => no torus, no fixed/attach, sane particles_per_cell and region
static kn_status check_mpm(const kn_scene* s, const kn_scene_deformable* o, const char* key, kn_error* err) {
  char k[128];
  snprintf(k, sizeof k, "%s.shape.torus", key);
  if (o->shape && o->shape->torus)
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': MPM shapes are box, sphere, cylinder or mesh",
                         o->name);
  snprintf(k, sizeof k, "%s.%s", key, o->fixed ? "fixed" : "attach");
  if (o->fixed || o->nattach)
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': MPM bodies take no fixed or attached vertices",
                         o->name);
  snprintf(k, sizeof k, "%s.particles_per_cell", key);
  if (o->particles_per_cell) {
    int n = 1, p = *o->particles_per_cell;
    while (n * n * n < p) n++;
    if (p < 1 || n * n * n != p)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': must be a cube 1, 8, 27, ... (got %d)",
                           o->name, p);
  }
  snprintf(k, sizeof k, "%s.particle_jitter", key);
  if (o->particle_jitter && !(*o->particle_jitter >= 0 && *o->particle_jitter < 1))
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': must be in [0, 1) (got %g)", o->name,
                         *o->particle_jitter);
  snprintf(k, sizeof k, "%s.contact_radius", key);
  if (o->contact_radius && !(*o->contact_radius >= 0 && isfinite(*o->contact_radius)))
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': expected a finite radius >= 0 [m] (got %g)",
                         o->name, *o->contact_radius);
  snprintf(k, sizeof k, "%s.region", key);
  if (o->region)
    for (int a = 0; a < 3; a++)
      if (!(isfinite(o->region->min[a]) && isfinite(o->region->max[a]) && o->region->min[a] < o->region->max[a]))
        return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': needs finite min < max on every axis",
                             o->name);
  snprintf(k, sizeof k, "%s.material.type", key);
  int type = o->material ? o->material->type : 0;
  if (type != 0 && type != KN_SCENE_FEM_TYPE(KN_FEM_LINEAR_COROTATED) && type != KN_SCENE_MPM_EOS_FLUID)
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': MPM materials are linear_corotated or eos_fluid",
                         o->name);
  return KN_OK;
}

// (deformables[i]) => unique name, fem model, one shape with positive sizes, sane material numbers
static kn_status check_deformable(const kn_scene* s, unsigned i, kn_error* err) {
  const kn_scene_doc* d = s->doc;
  const kn_scene_deformable* o = &d->deformables[i];
  char key[64], k[128];
  snprintf(key, sizeof key, "deformables[%u]", i);
  snprintf(k, sizeof k, "%s.name", key);
  for (unsigned j = 0; j < i; j++)
    if (strcmp(d->deformables[j].name, o->name) == 0)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "name '%s' is already used by deformables[%u]", o->name, j);
  for (unsigned j = 0; j < d->nobjects; j++)
    if (strcmp(d->objects[j].name, o->name) == 0)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "name '%s' is already used by objects[%u]", o->name, j);
  for (unsigned j = 0; j < d->nrobots; j++)
    if (strcmp(d->robots[j].name, o->name) == 0)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "name '%s' is already used by robots[%u]", o->name, j);
  snprintf(k, sizeof k, "%s.model", key);
  if (s->backend == KN_BACKEND_NONE)
    return kn_scene_fail(s, err, KN_ERR_UNSUPPORTED, key,
                         "deformable '%s': %s bodies need a contact backend (sap, smooth_friction, penalty or ipc)",
                         o->name, o->model == KN_DEFORMABLE_MPM ? "MPM" : "FEM");
  if (o->volume_compressibility) {
    snprintf(k, sizeof k, "%s.volume_compressibility", key);
    if (o->model == KN_DEFORMABLE_MPM || s->backend != KN_BACKEND_SMOOTH_FRICTION)
      return kn_scene_fail(s, err, KN_ERR_UNSUPPORTED, k, "a volume constraint needs an FEM body and contact.backend "
                           "smooth_friction (the other backends do not have it)");
    if (!(*o->volume_compressibility > 0) || !isfinite(*o->volume_compressibility))
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "%g: expected a compressibility > 0 [1/atm]",
                           *o->volume_compressibility);
  }
  const kn_scene_smooth* sf = d->contact ? d->contact->smooth_friction : NULL;
  if (o->model == KN_DEFORMABLE_MPM && s->backend == KN_BACKEND_SMOOTH_FRICTION && sf &&
      sf->integrator == KN_SCENE_SMOOTH_TRAPEZOIDAL)
    return kn_scene_fail(s, err, KN_ERR_UNSUPPORTED, "contact.smooth_friction.integrator",
                         "trapezoidal: MPM body '%s' has only backward Euler (its grid is rebuilt every step: no v_n "
                         "at the nodes for the rule's explicit half)", o->name);
  if (o->model == KN_DEFORMABLE_MPM && check_mpm(s, o, key, err)) return err->status;
  if (o->model != KN_DEFORMABLE_MPM) {
    const char* mpm_only = o->particles_per_cell ? "particles_per_cell"
                           : o->region           ? "region"
                           : o->particle_jitter  ? "particle_jitter"
                           : o->contact_radius   ? "contact_radius"
                           : o->grid             ? "grid"
                                                 : NULL;
    if (o->material && (o->material->type == KN_SCENE_MPM_EOS_FLUID || o->material->yield_stress ||
                        o->material->bulk_modulus || o->material->gamma))
      mpm_only = "material (eos_fluid, yield_stress, bulk_modulus, gamma)";
    if (mpm_only) {
      /* name the offending key (it has a line), not the absent model key */
      snprintf(k, sizeof k, "%s.%s", key, strncmp(mpm_only, "material", 8) == 0 ? "material" : mpm_only);
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': %s needs model mpm", o->name, mpm_only);
    }
  }
  if (check_pose(s, &o->pose, key, err)) return err->status;
  const kn_scene_fem_shape* sh = o->shape;
  snprintf(k, sizeof k, "%s.shape", key);
  int nshape = (sh->box != NULL) + (sh->sphere != NULL) + (sh->cylinder != NULL) + (sh->torus != NULL) +
               (sh->mesh != NULL);
  if (nshape != 1)
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': give exactly one of box, sphere, cylinder, "
                         "torus, mesh (got %d)", o->name, nshape);
  const double* size = sh->box ? sh->box : sh->sphere ? sh->sphere : sh->cylinder ? sh->cylinder : sh->torus;
  int nsize = sh->box ? 3 : sh->sphere ? 1 : (sh->cylinder || sh->torus) ? 2 : 0;
  for (int j = 0; j < nsize; j++)
    if (!(size[j] > 0 && isfinite(size[j])))
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': sizes must be finite and > 0 m (got %g)",
                           o->name, size[j]);
  if (sh->torus && !(sh->torus[0] > sh->torus[1]))
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': torus needs R > r (got %g, %g)", o->name,
                         sh->torus[0], sh->torus[1]);
  snprintf(k, sizeof k, "%s.resolution", key);
  if (o->resolution && !(*o->resolution > 0 && isfinite(*o->resolution)))
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "must be finite and > 0 m (got %g)", *o->resolution);
  snprintf(k, sizeof k, "%s.velocity", key);
  if (o->velocity && !all_finite(o->velocity, 3)) return kn_scene_fail(s, err, KN_ERR_INVALID, k, "values must be finite");
  if (o->fixed) {
    snprintf(k, sizeof k, "%s.fixed", key);
    if ((o->fixed->box != NULL) + (o->fixed->vertices != NULL) != 1)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': give box or vertices", o->name);
  }
  for (unsigned j = 0; j < o->nattach; j++) {
    const kn_scene_fem_attach* a = &o->attach[j];
    snprintf(k, sizeof k, "%s.attach[%u]", key, j);
    if ((a->box != NULL) + (a->vertices != NULL) != 1)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': give box or vertices", o->name);
    if (a->box && !(all_finite(a->box->min, 3) && all_finite(a->box->max, 3)))
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "deformable '%s': box min and max must be finite", o->name);
  }
  if (check_material(s, o->friction, o->stiffness, o->dissipation_time, key, err)) return err->status;
  return KN_OK;
}

//---- the checks: section (keys by type; the names they give are resolved on the built world) ----

typedef struct {
  const char* key_path;
  const char* value;
} scalar_find;

static int find_scalar(void* ctx, const char* key_path, const char* value, int line) {
  (void)line;
  scalar_find* f = ctx;
  if (strcmp(key_path, f->key_path) != 0) return 0;
  f->value = value;
  return 1;
}

// a formula's names beyond t and pi: g = |gravity|, dt, duration, and scalar key paths of the file
static kn_status formula_name(void* ctx, const char* name, double* value, kn_error* err) {
  const kn_scene* s = ctx;
  if (!strcmp(name, "g")) {
    *value = sqrt(s->gravity[0] * s->gravity[0] + s->gravity[1] * s->gravity[1] + s->gravity[2] * s->gravity[2]);
    return KN_OK;
  }
  if (!strcmp(name, "dt")) return (*value = s->time_step), KN_OK;
  if (!strcmp(name, "duration")) return (*value = s->duration), KN_OK;
  scalar_find f = {name, NULL};
  if (!strchr(name, '.') && !strchr(name, '['))
    return kn_fail(err, KN_ERR_PARSE, "unknown name '%s' (known: t, pi, g, dt, duration, and the scene's keys by "
                   "path, e.g. objects[1].friction)", name);
  kn_scene_lines_each_scalar(s->lines, find_scalar, &f);
  if (!f.value)
    return kn_fail(err, KN_ERR_PARSE, "'%s' is not a scalar key of this scene file (a default is not read: write "
                   "the key in the file)", name);
  char* end;
  *value = strtod(f.value, &end);
  if (end == f.value || *end || !isfinite(*value))
    return kn_fail(err, KN_ERR_PARSE, "'%s' is '%s', not a number", name, f.value);
  return KN_OK;
}

// (follows_curve checks[i]) => its keys checked and its reference compiled or read into s->curves[i]
static kn_status curve_validate(kn_scene* s, unsigned i, kn_error* err) {
  const kn_scene_check* c = &s->doc->checks[i];
  char k[128];
  snprintf(k, sizeof k, "checks[%u].quantity", i);
  if (kn_scene_line(s, k) == 0) {
    snprintf(k, sizeof k, "checks[%u]", i);
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s' (follows_curve) needs quantity: x, y, z, vx, vy, "
                         "vz, speed, along or distance", c->name);
  }
  snprintf(k, sizeof k, "checks[%u]", i);
  if (!c->formula == !c->csv)
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s' (follows_curve) needs one reference: formula (of "
                         "t) or csv (samples t,value)", c->name);
  if (!c->tolerance && !c->rel_tolerance)
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s' (follows_curve) needs tolerance [unit of the "
                         "quantity] and/or rel_tolerance [fraction of the reference]", c->name);
  const double* tols[] = {c->tolerance, c->rel_tolerance};
  for (int m = 0; m < 2; m++)
    if (tols[m] && !(*tols[m] >= 0 && isfinite(*tols[m]))) {
      snprintf(k, sizeof k, "checks[%u].%s", i, m ? "rel_tolerance" : "tolerance");
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s': must be a finite number >= 0 (got %g)", c->name,
                           *tols[m]);
    }
  if ((c->quantity == KN_QUANTITY_ALONG) != (c->direction != NULL)) {
    snprintf(k, sizeof k, "checks[%u].%s", i, c->direction ? "direction" : "quantity");
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, c->direction ? "check '%s': direction applies to quantity: "
                         "along only" : "check '%s': quantity along needs direction: [x, y, z]", c->name);
  }
  if (c->direction) {
    double* n = c->direction;
    double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (!(len > 1e-12) || !isfinite(len)) {
      snprintf(k, sizeof k, "checks[%u].direction", i);
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s': direction must be a finite non-zero vector",
                           c->name);
    }
    for (int j = 0; j < 3; j++) n[j] /= len;
  }
  if (c->point && !(isfinite(c->point[0]) && isfinite(c->point[1]) && isfinite(c->point[2]))) {
    snprintf(k, sizeof k, "checks[%u].point", i);
    return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s': point must be finite", c->name);
  }
  kn_scene_curve* curve = &s->curves[i];
  if (c->formula) {
    snprintf(k, sizeof k, "checks[%u].formula", i);
    kn_error why = {0};
    if (kn_expr_compile(c->formula, formula_name, s, &curve->formula, &why))
      return kn_scene_fail(s, err, why.status, k, "check '%s': formula \"%s\" %s", c->name, c->formula, why.msg);
    return KN_OK;
  }
  snprintf(k, sizeof k, "checks[%u].csv", i);
  kn_error why = {0};
  char* path = kn_scene_resolve_path(s, c->csv, &why);
  if (!path) return kn_scene_fail(s, err, KN_ERR_IO, k, "check '%s': %s", c->name, why.msg);
  kn_trajectory* tr = NULL;
  kn_status st = kn_traj_load_csv(path, KN_TRAJ_LINEAR, &tr, &why);
  free(path);
  if (st) return kn_scene_fail(s, err, st, k, "check '%s': %s", c->name, why.msg);
  if (tr->n != 1) {
    int n = tr->n;
    kn_traj_free(tr);
    return kn_scene_fail(s, err, KN_ERR_PARSE, k, "check '%s': the CSV has %d value columns; a reference is "
                         "t,value (one)", c->name, n);
  }
  curve->n = tr->nknot;
  curve->t = malloc((size_t)tr->nknot * sizeof *curve->t);
  curve->value = malloc((size_t)tr->nknot * sizeof *curve->value);
  if (curve->t && curve->value) {
    memcpy(curve->t, tr->t, (size_t)tr->nknot * sizeof *curve->t);
    memcpy(curve->value, tr->q, (size_t)tr->nknot * sizeof *curve->value);
  }
  kn_traj_free(tr);
  if (!curve->t || !curve->value) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  return KN_OK;
}

// (scene with defaults) => KN_OK, or the first checks[i].key that is missing or out of range
static kn_status checks_validate(kn_scene* s, kn_error* err) {
  const kn_scene_doc* d = s->doc;
  char k[128];
  if (d->nchecks && !(s->curves = calloc(d->nchecks, sizeof *s->curves)))
    return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  for (unsigned i = 0; i < d->nchecks; i++) {
    const kn_scene_check* c = &d->checks[i];
    const char* tn = kn_check_type_name((kn_check_type)c->type);
    for (unsigned j = 0; j < i; j++)
      if (strcmp(d->checks[j].name, c->name) == 0) {
        snprintf(k, sizeof k, "checks[%u].name", i);
        return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check name '%s' is already used by checks[%u]", c->name, j);
      }
    const double* nums[] = {c->value, c->rotation, c->min, c->max, c->after, c->before};
    static const char* const num_keys[] = {"value", "rotation", "min", "max", "after", "before"};
    for (int m = 0; m < 6; m++)
      if (nums[m] && !isfinite(*nums[m])) {
        snprintf(k, sizeof k, "checks[%u].%s", i, num_keys[m]);
        return kn_scene_fail(s, err, KN_ERR_INVALID, k, "must be a finite number");
      }
    double after = c->after ? *c->after : 0, before = c->before ? *c->before : s->duration;
    snprintf(k, sizeof k, "checks[%u].%s", i, c->before ? "before" : "after");
    if (after < 0 || before < after)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s': the window [after, before] = [%g, %g] s must "
                           "satisfy 0 <= after <= before", c->name, after, before);
    int t = c->type;
    int need_body = t == KN_CHECK_HEIGHT_ABOVE || t == KN_CHECK_HEIGHT_BELOW || t == KN_CHECK_GRASP_HELD ||
                    t == KN_CHECK_FOLLOWS_CURVE;
    int need_value = t != KN_CHECK_CONTACT_FORCE && t != KN_CHECK_SOLVER_CONVERGED && t != KN_CHECK_FOLLOWS_CURVE;
    snprintf(k, sizeof k, "checks[%u]", i);
    if (need_body && !c->body)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s' (%s) needs body: the object or \"robot/link\"",
                           c->name, tn);
    if (t == KN_CHECK_GRASP_HELD && !c->link)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s' (grasp_held) needs link: the gripper's "
                           "\"robot/link\"", c->name);
    if ((t == KN_CHECK_DISTANCE_BELOW || t == KN_CHECK_CONTACT_FORCE) && !c->bodies)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s' (%s) needs bodies: [a, b]", c->name, tn);
    if (c->bodies && c->nbodies != 2) {
      snprintf(k, sizeof k, "checks[%u].bodies", i);
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s': give exactly 2 names (got %u)", c->name,
                           c->nbodies);
    }
    if (need_value && !c->value)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s' (%s) needs value", c->name, tn);
    if (t == KN_CHECK_CONTACT_FORCE && !c->min && !c->max)
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s' (contact_force) needs min and/or max [N]", c->name);
    if (c->min && c->max && *c->max < *c->min) {
      snprintf(k, sizeof k, "checks[%u].max", i);
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s': max %g N < min %g N", c->name, *c->max, *c->min);
    }
    if (c->value && (t == KN_CHECK_GRASP_HELD || t == KN_CHECK_NO_PENETRATION || t == KN_CHECK_DISTANCE_BELOW ||
                     t == KN_CHECK_SOLVER_CONVERGED) && !(*c->value > 0)) {
      snprintf(k, sizeof k, "checks[%u].value", i);
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "check '%s' (%s): value must be > 0 (got %g)", c->name, tn,
                           *c->value);
    }
    /* keys that do not apply to the type are an error, never silently ignored */
    const char* stray = NULL;
    if (c->body && !need_body) stray = "body";
    if (c->link && t != KN_CHECK_GRASP_HELD) stray = "link";
    if (c->bodies && t != KN_CHECK_DISTANCE_BELOW && t != KN_CHECK_CONTACT_FORCE && t != KN_CHECK_NO_PENETRATION)
      stray = "bodies";
    if (c->rotation && t != KN_CHECK_GRASP_HELD) stray = "rotation";
    if ((c->min || c->max) && t != KN_CHECK_CONTACT_FORCE) stray = c->min ? "min" : "max";
    if (c->value && (t == KN_CHECK_CONTACT_FORCE || t == KN_CHECK_FOLLOWS_CURVE)) stray = "value";
    if (t != KN_CHECK_FOLLOWS_CURVE) {
      const void* curve_keys[] = {c->direction, c->point, c->formula, c->csv, c->tolerance, c->rel_tolerance};
      static const char* const curve_names[] = {"direction", "point", "formula", "csv", "tolerance", "rel_tolerance"};
      for (int m = 0; m < 6; m++)
        if (curve_keys[m]) stray = curve_names[m];
      char q[128];
      snprintf(q, sizeof q, "checks[%u].quantity", i);
      if (kn_scene_line(s, q)) stray = "quantity";
    }
    if (stray) {
      snprintf(k, sizeof k, "checks[%u].%s", i, stray);
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "does not apply to a %s check ('%s')", tn, c->name);
    }
    if (t == KN_CHECK_FOLLOWS_CURVE && curve_validate(s, i, err)) return err->status;
  }
  return KN_OK;
}

// (doc) => defaults filled in, or the first key that is not acceptable
kn_status kn_scene_validate(kn_scene* s, kn_error* err) {
  const kn_scene_doc* d = s->doc;
  s->time_step = d->time_step ? *d->time_step : 0.001;
  s->duration = d->duration ? *d->duration : 1.0;
  if (!(s->time_step > 0) || !isfinite(s->time_step))
    return kn_scene_fail(s, err, KN_ERR_INVALID, "time_step", "must be > 0 seconds (got %g)", s->time_step);
  if (!(s->duration >= 0) || !isfinite(s->duration))
    return kn_scene_fail(s, err, KN_ERR_INVALID, "duration", "must be >= 0 seconds (got %g)", s->duration);
  if (s->duration / s->time_step > 1e9)
    return kn_scene_fail(s, err, KN_ERR_INVALID, "duration", "duration / time_step = %g steps; at most 1e9",
                         s->duration / s->time_step);
  double g[3] = {0, 0, -9.81};
  if (d->gravity) memcpy(g, d->gravity, sizeof g);
  if (!all_finite(g, 3)) return kn_scene_fail(s, err, KN_ERR_INVALID, "gravity", "must be 3 finite numbers");
  memcpy(s->gravity, g, sizeof g);
  s->backend = d->contact ? d->contact->backend : KN_BACKEND_SAP;
  if (d->output && d->outputs)
    return kn_scene_fail(s, err, KN_ERR_INVALID, "outputs", "give output or outputs (an alias), not both");
  s->output = d->output ? d->output : d->outputs;
  if (s->output && (!(s->output->trajectory_rate >= 0) || !isfinite(s->output->trajectory_rate)))
    return kn_scene_fail(s, err, KN_ERR_INVALID, d->output ? "output.trajectory_rate" : "outputs.trajectory_rate",
                         "must be >= 0 rows per second (0: every step)");
  if (s->output && s->output->frame_rate && (!(*s->output->frame_rate > 0) || !isfinite(*s->output->frame_rate)))
    return kn_scene_fail(s, err, KN_ERR_INVALID, d->output ? "output.frame_rate" : "outputs.frame_rate",
                         "must be > 0 frames per second");
  char k[256];
  for (unsigned i = 0; i < d->nrobots; i++) {
    const kn_scene_robot* r = &d->robots[i];
    for (unsigned j = 0; j < i; j++)
      if (strcmp(d->robots[j].name, r->name) == 0) {
        snprintf(k, sizeof k, "robots[%u].name", i);
        return kn_scene_fail(s, err, KN_ERR_INVALID, k, "robot name '%s' is already used by robots[%u]", r->name, j);
      }
    if (r->base_pose) {
      snprintf(k, sizeof k, "robots[%u].base_pose", i);
      if (check_pose(s, r->base_pose, k, err)) return err->status;
    }
    if (r->q0 && !all_finite(r->q0, r->nq0)) {
      snprintf(k, sizeof k, "robots[%u].q0", i);
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "values must be finite");
    }
    if (r->attach_to) {
      snprintf(k, sizeof k, "robots[%u].attach_to", i);
      if (r->base_pose || r->floating)
        return kn_scene_fail(s, err, KN_ERR_INVALID, k,
                             "robot '%s': attach_to welds the root to a link, so base_pose and floating do not apply "
                             "(put the pose in attach_to.pose)",
                             r->name);
      if (check_pose(s, &r->attach_to->pose, k, err)) return err->status;
      unsigned j = 0;
      while (j < d->nrobots && strcmp(d->robots[j].name, r->attach_to->robot) != 0) j++;
      snprintf(k, sizeof k, "robots[%u].attach_to.robot", i);
      if (j == d->nrobots)
        return kn_scene_fail(s, err, KN_ERR_INVALID, k, "no robot named '%s' in the scene", r->attach_to->robot);
      if (j == i) return kn_scene_fail(s, err, KN_ERR_INVALID, k, "robot '%s' cannot attach to itself", r->name);
    }
    if (r->contact) {
      snprintf(k, sizeof k, "robots[%u].contact", i);
      if (check_material(s, r->contact->friction, r->contact->stiffness, r->contact->dissipation_time, k, err))
        return err->status;
    }
    if (r->controller) {
      snprintf(k, sizeof k, "robots[%u].controller", i);
      if (check_controller(s, r->controller, k, err)) return err->status;
    }
  }
  if (check_contact_section(s, err)) return err->status;
  for (unsigned i = 0; i < d->nobjects; i++)
    if (check_object(s, i, err)) return err->status;
  for (unsigned i = 0; i < d->ndeformables; i++)
    if (check_deformable(s, i, err)) return err->status;
  if (checks_validate(s, err)) return err->status;
  /* attachment cycles: follow attach_to from each robot; more than nrobots hops is a loop */
  for (unsigned i = 0; i < d->nrobots; i++) {
    unsigned cur = i, hops = 0;
    while (d->robots[cur].attach_to && hops <= d->nrobots) {
      unsigned j = 0;
      while (strcmp(d->robots[j].name, d->robots[cur].attach_to->robot) != 0) j++;
      cur = j;
      hops++;
    }
    if (hops > d->nrobots) {
      snprintf(k, sizeof k, "robots[%u].attach_to", i);
      return kn_scene_fail(s, err, KN_ERR_INVALID, k, "robot '%s' is part of an attachment loop",
                           d->robots[i].name);
    }
  }
  return KN_OK;
}

