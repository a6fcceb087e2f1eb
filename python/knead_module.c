/* knead/python — the `knead` Python extension module (CPython C API + NumPy C API) over libknead:
 * knead.World (a scene's world: step, zero-copy read-only views of q, v, FEM vertices and MPM
 * particles, contacts, solver statistics, checks, PD set-points, saved states) and knead.Robot
 * (a URDF's multibody model: mass matrix, point Jacobian, forward and inverse dynamics).
 * Errors raise knead.Error (a RuntimeError) with knead's message; nothing prints. */
#define KNEAD_PYTHON_MAIN /* this file imports NumPy's API table */
#include "python/module.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check/check.h"
#include "scene/scene.h"
#include "sim/sim.h"

static PyObject* knead_error; /* knead.Error */

// (kn_error) => NULL with knead.Error set to its message
PyObject* kn_py_raise(const kn_error* err) {
  PyErr_SetString(knead_error, err->msg[0] ? err->msg : "knead: unknown error");
  return NULL;
}

//---- knead.World ----

typedef struct {
  PyObject_HEAD
  kn_scene* scene;
  kn_world* world;
  int busy; /* 1 while a step runs with the GIL released */
} World;

static void world_dealloc(World* self) {
  if (self->world) kn_world_free(self->world);
  if (self->scene) kn_scene_free(self->scene);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

// (path=None, yaml=None, overrides=()) => the scene loaded (file, YAML text or the default scene),
// its world built and its checks attached, as knead run does
static int world_init(World* self, PyObject* args, PyObject* kwds) {
  static char* kwlist[] = {"path", "yaml", "overrides", NULL};
  const char *path = NULL, *yaml = NULL;
  Py_ssize_t yaml_len = 0;
  PyObject* overrides = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|zz#O", kwlist, &path, &yaml, &yaml_len, &overrides)) return -1;
  if (self->world || self->scene) {
    PyErr_SetString(PyExc_RuntimeError, "knead.World: already initialized");
    return -1;
  }
  PyObject* seq = NULL;
  Py_ssize_t n = 0;
  if (overrides && overrides != Py_None) {
    if (PyUnicode_Check(overrides)) {
      PyErr_SetString(PyExc_TypeError, "overrides: a list of \"key.path=value\" strings, not one string");
      return -1;
    }
    seq = PySequence_Fast(overrides, "overrides: a list of \"key.path=value\" strings");
    if (!seq) return -1;
    n = PySequence_Fast_GET_SIZE(seq);
  }
  const char** ov = calloc(n > 0 ? (size_t)n : 1, sizeof *ov);
  if (!ov) {
    Py_XDECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject* item = PySequence_Fast_GET_ITEM(seq, i);
    if (!PyUnicode_Check(item) || !(ov[i] = PyUnicode_AsUTF8(item))) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "overrides: each must be a \"key.path=value\" string");
      free(ov);
      Py_DECREF(seq);
      return -1;
    }
  }
  kn_error err = {0};
  kn_status st;
  if (yaml)
    st = kn_scene_load_string_with(yaml, (size_t)yaml_len, path ? path : "<string>", ov, (int)n, &self->scene, &err);
  else if (path)
    st = kn_scene_load_with(path, ov, (int)n, &self->scene, &err);
  else if (n == 0)
    st = kn_scene_load_default(&self->scene, &err);
  else
    st = kn_fail(&err, KN_ERR_INVALID, "knead.World: overrides need a path or yaml");
  free(ov);
  Py_XDECREF(seq);
  if (!st) st = kn_world_create(self->scene, &self->world, &err);
  if (!st) st = kn_checks_attach(self->world, &err);
  if (st) {
    if (self->world) kn_world_free(self->world);
    if (self->scene) kn_scene_free(self->scene);
    self->world = NULL;
    self->scene = NULL;
    kn_py_raise(&err);
    return -1;
  }
  return 0;
}

// => 0 with the world usable, else -1 with an exception set
static int world_ready(World* self) {
  if (!self->world) {
    PyErr_SetString(PyExc_RuntimeError, "knead.World: not initialized");
    return -1;
  }
  if (self->busy) {
    PyErr_SetString(PyExc_RuntimeError, "knead.World: a step is running in another thread");
    return -1;
  }
  return 0;
}

// (n) => n steps with the GIL released; on failure knead.Error and the world at the last good step
static PyObject* world_step(World* self, PyObject* args, PyObject* kwds) {
  static char* kwlist[] = {"n", NULL};
  long n = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|l", kwlist, &n)) return NULL;
  if (world_ready(self)) return NULL;
  if (n < 0) {
    PyErr_SetString(PyExc_ValueError, "step: n must be >= 0");
    return NULL;
  }
  kn_error err = {0};
  kn_status st = KN_OK;
  self->busy = 1;
  Py_BEGIN_ALLOW_THREADS
  for (long i = 0; i < n && !st; i++) st = kn_world_step(self->world, &err);
  Py_END_ALLOW_THREADS
  self->busy = 0;
  if (st) return kn_py_raise(&err);
  Py_RETURN_NONE;
}

// steps left to the scene's duration (ceil(duration / time_step) - step)
static PyObject* world_run(World* self, PyObject* Py_UNUSED(ignored)) {
  if (world_ready(self)) return NULL;
  long left = kn_world_total_steps(self->world) - self->world->step;
  PyObject* args = Py_BuildValue("(l)", left > 0 ? left : 0);
  if (!args) return NULL;
  PyObject* r = world_step(self, args, NULL);
  Py_DECREF(args);
  return r;
}

static PyObject* world_get_t(World* self, void* Py_UNUSED(c)) {
  if (world_ready(self)) return NULL;
  return PyFloat_FromDouble(self->world->t);
}
static PyObject* world_get_step_count(World* self, void* Py_UNUSED(c)) {
  if (world_ready(self)) return NULL;
  return PyLong_FromLong(self->world->step);
}
static PyObject* world_get_total_steps(World* self, void* Py_UNUSED(c)) {
  if (world_ready(self)) return NULL;
  return PyLong_FromLong(kn_world_total_steps(self->world));
}
static PyObject* world_get_time_step(World* self, void* Py_UNUSED(c)) {
  if (world_ready(self)) return NULL;
  return PyFloat_FromDouble(self->scene->time_step);
}
// the 16 hex digits knead run prints
static PyObject* world_get_state_hash(World* self, void* Py_UNUSED(c)) {
  if (world_ready(self)) return NULL;
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)kn_world_state_hash(self->world));
  return PyUnicode_FromString(hex);
}

static PyObject* names_list(int n, const char* (*name)(const kn_world*, int), const kn_world* w) {
  PyObject* list = PyList_New(n);
  if (!list) return NULL;
  for (int i = 0; i < n; i++) {
    PyObject* s = PyUnicode_FromString(name(w, i));
    if (!s) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, i, s);
  }
  return list;
}
static const char* robot_name(const kn_world* w, int i) { return w->robots[i].name; }
static const char* object_name(const kn_world* w, int i) { return w->objects[i].name; }
static const char* fem_name(const kn_world* w, int i) { return w->fems[i].name; }
static const char* mpm_name(const kn_world* w, int i) { return w->mpms[i].name; }
static const char* collider_name(const kn_world* w, int i) { return w->colliders[i].name; }
static PyObject* world_get_robots(World* self, void* Py_UNUSED(c)) {
  return world_ready(self) ? NULL : names_list(self->world->nrobot, robot_name, self->world);
}
static PyObject* world_get_objects(World* self, void* Py_UNUSED(c)) {
  return world_ready(self) ? NULL : names_list(self->world->nobject, object_name, self->world);
}
static PyObject* world_get_fems(World* self, void* Py_UNUSED(c)) {
  return world_ready(self) ? NULL : names_list(self->world->nfem, fem_name, self->world);
}
static PyObject* world_get_mpms(World* self, void* Py_UNUSED(c)) {
  return world_ready(self) ? NULL : names_list(self->world->nmpm, mpm_name, self->world);
}
static PyObject* world_get_colliders(World* self, void* Py_UNUSED(c)) {
  return world_ready(self) ? NULL : names_list(self->world->ncollider, collider_name, self->world);
}

//---- zero-copy views ----

// (library array of shape dims) => a read-only NumPy view whose base is the World (kept alive)
static PyObject* view_of(World* self, double* data, int nd, npy_intp* dims) {
  PyObject* a = PyArray_SimpleNewFromData(nd, dims, NPY_DOUBLE, data);
  if (!a) return NULL;
  PyArray_CLEARFLAGS((PyArrayObject*)a, NPY_ARRAY_WRITEABLE);
  Py_INCREF(self);
  if (PyArray_SetBaseObject((PyArrayObject*)a, (PyObject*)self) < 0) {
    Py_DECREF(a);
    return NULL;
  }
  return a;
}

// (robot or object name, which 'q' or 'v') => pointer and length of its coordinates in its tree
static int find_coordinates(const kn_world* w, const char* name, char which, double** data, npy_intp* n) {
  for (int i = 0; i < w->nrobot; i++) {
    const kn_world_robot* r = &w->robots[i];
    if (strcmp(r->name, name)) continue;
    const kn_world_tree* t = &w->trees[r->tree];
    *data = which == 'q' ? t->q + r->q_offset : t->v + r->v_offset;
    *n = which == 'q' ? r->nq : r->nv;
    return 0;
  }
  for (int i = 0; i < w->nobject; i++) {
    if (strcmp(w->objects[i].name, name)) continue;
    const kn_world_tree* t = &w->trees[w->objects[i].tree];
    *data = which == 'q' ? t->q : t->v;
    *n = which == 'q' ? t->robot->model->nq : t->robot->model->nv;
    return 0;
  }
  PyErr_Format(PyExc_KeyError, "no robot or object named '%s'", name);
  return -1;
}

static PyObject* world_coordinates(World* self, PyObject* args, char which) {
  const char* name;
  if (!PyArg_ParseTuple(args, "s", &name) || world_ready(self)) return NULL;
  double* data;
  npy_intp n;
  if (find_coordinates(self->world, name, which, &data, &n)) return NULL;
  return view_of(self, data, 1, &n);
}
static PyObject* world_q(World* self, PyObject* args) { return world_coordinates(self, args, 'q'); }
static PyObject* world_v(World* self, PyObject* args) { return world_coordinates(self, args, 'v'); }

// (FEM or MPM body name) => index, -1 with KeyError
static int find_deformable(const kn_world* w, const char* name, int mpm) {
  int n = mpm ? w->nmpm : w->nfem;
  for (int i = 0; i < n; i++)
    if (!strcmp(mpm ? w->mpms[i].name : w->fems[i].name, name)) return i;
  PyErr_Format(PyExc_KeyError, "no %s deformable named '%s'", mpm ? "MPM" : "FEM", name);
  return -1;
}

static PyObject* world_fem_x(World* self, PyObject* args) {
  const char* name;
  if (!PyArg_ParseTuple(args, "s", &name) || world_ready(self)) return NULL;
  int i = find_deformable(self->world, name, 0);
  if (i < 0) return NULL;
  kn_fem_body* b = self->world->fems[i].body;
  npy_intp dims[2] = {b->mesh.nvert, 3};
  return view_of(self, b->x, 2, dims);
}

static PyObject* world_mpm_x(World* self, PyObject* args) {
  const char* name;
  if (!PyArg_ParseTuple(args, "s", &name) || world_ready(self)) return NULL;
  int i = find_deformable(self->world, name, 1);
  if (i < 0) return NULL;
  kn_mpm_body* b = self->world->mpms[i].body;
  npy_intp dims[2] = {b->np, 3};
  return view_of(self, b->x, 2, dims);
}

// for the tests: the library's address of a name's q ("q"), v, FEM x ("fem") or MPM x ("mpm")
static PyObject* world_address_of(World* self, PyObject* args) {
  const char *name, *which;
  if (!PyArg_ParseTuple(args, "ss", &which, &name) || world_ready(self)) return NULL;
  double* data = NULL;
  npy_intp n;
  if (!strcmp(which, "q") || !strcmp(which, "v")) {
    if (find_coordinates(self->world, name, which[0], &data, &n)) return NULL;
  } else if (!strcmp(which, "fem") || !strcmp(which, "mpm")) {
    int mpm = which[0] == 'm', i = find_deformable(self->world, name, mpm);
    if (i < 0) return NULL;
    data = mpm ? self->world->mpms[i].body->x : self->world->fems[i].body->x;
  } else {
    PyErr_SetString(PyExc_ValueError, "which: 'q', 'v', 'fem' or 'mpm'");
    return NULL;
  }
  return PyLong_FromVoidPtr(data);
}

//---- contacts, statistics, checks ----

// see python/module.h
PyObject* kn_py_new_array(npy_intp n, npy_intp k) {
  npy_intp dims[2] = {n, k};
  return PyArray_ZEROS(k ? 2 : 1, dims, NPY_DOUBLE, 0);
}

// (n contacts with p, n, f, phi at byte stride `stride` from `first`) => dict entries
// points, normals, forces (n, 3) and phi (n,), copied
static int contact_arrays(PyObject* d, int n, const char* first, size_t stride, size_t off_p, size_t off_n,
                          size_t off_f, size_t off_phi) {
  PyObject *P = kn_py_new_array(n, 3), *N = kn_py_new_array(n, 3), *F = kn_py_new_array(n, 3), *phi = kn_py_new_array(n, 0);
  int rc = -1;
  if (!P || !N || !F || !phi) goto done;
  for (int i = 0; i < n; i++) {
    const char* c = first + (size_t)i * stride;
    memcpy((double*)PyArray_DATA((PyArrayObject*)P) + 3 * i, c + off_p, 3 * sizeof(double));
    memcpy((double*)PyArray_DATA((PyArrayObject*)N) + 3 * i, c + off_n, 3 * sizeof(double));
    memcpy((double*)PyArray_DATA((PyArrayObject*)F) + 3 * i, c + off_f, 3 * sizeof(double));
    memcpy((double*)PyArray_DATA((PyArrayObject*)phi) + i, c + off_phi, sizeof(double));
  }
  if (PyDict_SetItemString(d, "points", P) || PyDict_SetItemString(d, "normals", N) ||
      PyDict_SetItemString(d, "forces", F) || PyDict_SetItemString(d, "phi", phi))
    goto done;
  rc = 0;
done:
  Py_XDECREF(P);
  Py_XDECREF(N);
  Py_XDECREF(F);
  Py_XDECREF(phi);
  return rc;
}

static int set_item(PyObject* d, const char* key, PyObject* value) {
  if (!value) return -1;
  int rc = PyDict_SetItemString(d, key, value);
  Py_DECREF(value);
  return rc;
}

#define CONTACT_ARRAYS(d, count, arr, T) \
  contact_arrays(d, count, (const char*)(arr), sizeof(T), offsetof(T, p), offsetof(T, n), offsetof(T, f), offsetof(T, phi))

// the last step's contacts: {"rigid": {points, normals, forces (on b), phi, pairs [(a, b)]},
// "fem": {... pairs [(A, B)], kind}, "mpm": {... pairs [(mpm, collider)], particle}}
static PyObject* world_contacts(World* self, PyObject* Py_UNUSED(ignored)) {
  if (world_ready(self)) return NULL;
  const kn_world* w = self->world;
  PyObject *out = PyDict_New(), *rigid = PyDict_New(), *fem = PyDict_New(), *mpm = PyDict_New();
  if (!out || !rigid || !fem || !mpm) goto fail;
  if (PyDict_SetItemString(out, "rigid", rigid) || PyDict_SetItemString(out, "fem", fem) ||
      PyDict_SetItemString(out, "mpm", mpm))
    goto fail;

  if (CONTACT_ARRAYS(rigid, w->ncontact, w->contacts, kn_world_contact)) goto fail;
  PyObject* pairs = PyList_New(w->ncontact);
  if (set_item(rigid, "pairs", pairs)) goto fail;
  for (int i = 0; i < w->ncontact; i++) {
    PyObject* t = Py_BuildValue("(ss)", w->colliders[w->contacts[i].a].name, w->colliders[w->contacts[i].b].name);
    if (!t) goto fail;
    PyList_SET_ITEM(pairs, i, t);
  }

  if (CONTACT_ARRAYS(fem, w->nfem_contact, w->fem_contacts, kn_world_fem_contact)) goto fail;
  pairs = PyList_New(w->nfem_contact);
  if (set_item(fem, "pairs", pairs)) goto fail;
  npy_intp nf = w->nfem_contact;
  PyObject* kind = PyArray_ZEROS(1, &nf, NPY_INT, 0);
  if (set_item(fem, "kind", kind)) goto fail;
  for (int i = 0; i < w->nfem_contact; i++) {
    const kn_world_fem_contact* c = &w->fem_contacts[i];
    const char* a = c->a_collider >= 0 ? w->colliders[c->a_collider].name : w->fems[c->a_fem].name;
    PyObject* t = Py_BuildValue("(ss)", a, w->fems[c->fem_b].name);
    if (!t) goto fail;
    PyList_SET_ITEM(pairs, i, t);
    ((int*)PyArray_DATA((PyArrayObject*)kind))[i] = c->kind;
  }

  if (CONTACT_ARRAYS(mpm, w->nmpm_contact, w->mpm_contacts, kn_world_mpm_contact)) goto fail;
  pairs = PyList_New(w->nmpm_contact);
  if (set_item(mpm, "pairs", pairs)) goto fail;
  npy_intp nm = w->nmpm_contact;
  PyObject* particle = PyArray_ZEROS(1, &nm, NPY_INT, 0);
  if (set_item(mpm, "particle", particle)) goto fail;
  for (int i = 0; i < w->nmpm_contact; i++) {
    const kn_world_mpm_contact* c = &w->mpm_contacts[i];
    PyObject* t = Py_BuildValue("(ss)", w->mpms[c->mpm].name, w->colliders[c->collider].name);
    if (!t) goto fail;
    PyList_SET_ITEM(pairs, i, t);
    ((int*)PyArray_DATA((PyArrayObject*)particle))[i] = c->particle;
  }
  Py_DECREF(rigid);
  Py_DECREF(fem);
  Py_DECREF(mpm);
  return out;
fail:
  Py_XDECREF(out);
  Py_XDECREF(rigid);
  Py_XDECREF(fem);
  Py_XDECREF(mpm);
  return NULL;
}

// the solver's numbers: {"last": the last step's, "run": accumulated since the world was built}
static PyObject* world_stats(World* self, PyObject* Py_UNUSED(ignored)) {
  if (world_ready(self)) return NULL;
  const kn_step_stats* l = &self->world->last;
  const kn_run_stats* r = &self->world->stats;
  return Py_BuildValue(
      "{s:{s:i,s:i,s:i,s:i,s:d,s:d,s:d,s:d,s:d},s:{s:l,s:l,s:l,s:l,s:i,s:i,s:i,s:d}}", "last", "iterations",
      l->iterations, "line_search_iterations", l->line_search_iterations, "contacts", l->contacts, "constraints",
      l->constraints, "residual", l->residual, "time_free_motion", l->time_free_motion, "time_detect",
      l->time_detect, "time_sap", l->time_sap, "time_advance", l->time_advance, "run", "steps", r->steps,
      "iterations", r->iterations, "line_search_iterations", r->line_search_iterations, "contacts", r->contacts,
      "max_iterations", r->max_iterations, "max_line_search_iterations", r->max_line_search_iterations,
      "max_contacts", r->max_contacts, "max_residual", r->max_residual);
}

// the scene's checks as of the current step: [{name, passed, measured, t, message, ...}]
static PyObject* world_checks(World* self, PyObject* Py_UNUSED(ignored)) {
  if (world_ready(self)) return NULL;
  int n = 0;
  const kn_check_result* c = kn_world_checks(self->world, &n);
  PyObject* list = PyList_New(n);
  if (!list) return NULL;
  for (int i = 0; i < n; i++) {
    PyObject* d = Py_BuildValue("{s:s,s:O,s:O,s:l,s:d,s:d,s:d,s:d,s:d,s:d,s:s}", "name", c[i].name, "passed",
                                c[i].passed ? Py_True : Py_False, "expect_fail", c[i].expect_fail ? Py_True : Py_False,
                                "samples", c[i].samples, "measured", c[i].measured, "t", c[i].t, "measured2",
                                c[i].measured2, "t2", c[i].t2, "lo", c[i].lo, "hi", c[i].hi, "message", c[i].message);
    if (!d) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, i, d);
  }
  return list;
}

//---- controllers ----

// (robot name) => its PD controller, NULL with KeyError
static kn_controller* find_controller(const kn_world* w, const char* name) {
  for (int k = 0; k < w->ntree; k++)
    for (int c = 0; c < w->trees[k].nctrl; c++)
      if (!strcmp(w->trees[k].ctrls[c]->name, name)) return w->trees[k].ctrls[c];
  PyErr_Format(PyExc_KeyError, "no controller named '%s' (controllers are named after their robot)", name);
  return NULL;
}

// the controllers: [{name, ndof, reference: "setpoint" | "trajectory" | "sequence"}]
static PyObject* world_controllers(World* self, PyObject* Py_UNUSED(ignored)) {
  if (world_ready(self)) return NULL;
  const kn_world* w = self->world;
  static const char* kinds[] = {"setpoint", "trajectory", "sequence"};
  PyObject* list = PyList_New(0);
  if (!list) return NULL;
  for (int k = 0; k < w->ntree; k++)
    for (int c = 0; c < w->trees[k].nctrl; c++) {
      const kn_controller* ctrl = w->trees[k].ctrls[c];
      PyObject* d = Py_BuildValue("{s:s,s:i,s:s}", "name", ctrl->name, "ndof", ctrl->ndof, "reference",
                                  kinds[ctrl->ref_kind]);
      if (!d || PyList_Append(list, d)) {
        Py_XDECREF(d);
        Py_DECREF(list);
        return NULL;
      }
      Py_DECREF(d);
    }
  return list;
}

// (robot name, q_ref of its ndof dofs) => its controller holds the constant set-point q_ref from
// the next step on (replacing a trajectory or sequence; kn_ctrl_set_setpoint)
static PyObject* world_set_setpoint(World* self, PyObject* args) {
  const char* name;
  PyObject* obj;
  if (!PyArg_ParseTuple(args, "sO", &name, &obj) || world_ready(self)) return NULL;
  kn_controller* c = find_controller(self->world, name);
  if (!c) return NULL;
  PyArrayObject* q = (PyArrayObject*)PyArray_FROMANY(obj, NPY_DOUBLE, 1, 1, NPY_ARRAY_IN_ARRAY);
  if (!q) return NULL;
  kn_error err = {0};
  kn_status st = kn_ctrl_set_setpoint(c, PyArray_DATA(q), (int)PyArray_DIM(q, 0), &err);
  Py_DECREF(q);
  if (st) return kn_py_raise(&err);
  Py_RETURN_NONE;
}

// (robot name, t=None) => (q_ref, v_ref) of its controller at t (default: the current time)
static PyObject* world_reference(World* self, PyObject* args) {
  const char* name;
  PyObject* tobj = Py_None;
  if (!PyArg_ParseTuple(args, "s|O", &name, &tobj) || world_ready(self)) return NULL;
  kn_controller* c = find_controller(self->world, name);
  if (!c) return NULL;
  double t = self->world->t;
  if (tobj != Py_None && (t = PyFloat_AsDouble(tobj), PyErr_Occurred())) return NULL;
  PyObject *q = kn_py_new_array(c->ndof, 0), *v = kn_py_new_array(c->ndof, 0);
  if (!q || !v) {
    Py_XDECREF(q);
    Py_XDECREF(v);
    return NULL;
  }
  kn_ctrl_reference(c, t, PyArray_DATA((PyArrayObject*)q), PyArray_DATA((PyArrayObject*)v), NULL);
  return Py_BuildValue("(NN)", q, v);
}

//---- saved states (through a temporary file: sim/ saves and loads files only) ----

static int temp_path(char* path, size_t size) {
  const char* dir = getenv("TMPDIR");
  snprintf(path, size, "%s/knead-state-XXXXXX", dir && *dir ? dir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0) {
    PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
    return -1;
  }
  close(fd);
  return 0;
}

// => bytes: the saved state (kn_world_save_state's file)
static PyObject* world_get_state(World* self, PyObject* Py_UNUSED(ignored)) {
  if (world_ready(self)) return NULL;
  char path[4096];
  if (temp_path(path, sizeof path)) return NULL;
  kn_error err = {0};
  PyObject* out = NULL;
  if (kn_world_save_state(self->world, path, &err)) {
    kn_py_raise(&err);
  } else {
    FILE* f = fopen(path, "rb");
    if (!f) {
      PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
    } else {
      fseek(f, 0, SEEK_END);
      long size = ftell(f);
      fseek(f, 0, SEEK_SET);
      out = PyBytes_FromStringAndSize(NULL, size);
      if (out && fread(PyBytes_AS_STRING(out), 1, (size_t)size, f) != (size_t)size) {
        Py_CLEAR(out);
        PyErr_SetString(PyExc_OSError, "get_state: cannot read the temporary state file back");
      }
      fclose(f);
    }
  }
  unlink(path);
  return out;
}

// (bytes from get_state) => the world at that state; knead.Error (world unchanged) when refused
static PyObject* world_set_state(World* self, PyObject* args) {
  Py_buffer buf;
  if (!PyArg_ParseTuple(args, "y*", &buf)) return NULL;
  if (world_ready(self)) {
    PyBuffer_Release(&buf);
    return NULL;
  }
  char path[4096];
  if (temp_path(path, sizeof path)) {
    PyBuffer_Release(&buf);
    return NULL;
  }
  FILE* f = fopen(path, "wb");
  int ok = f && fwrite(buf.buf, 1, (size_t)buf.len, f) == (size_t)buf.len;
  if (f && fclose(f)) ok = 0;
  PyBuffer_Release(&buf);
  if (!ok) {
    unlink(path);
    PyErr_SetString(PyExc_OSError, "set_state: cannot write the temporary state file");
    return NULL;
  }
  kn_error err = {0};
  kn_status st = kn_world_load_state(self->world, path, &err);
  unlink(path);
  if (st) {
    // the message names the temporary file: name the call instead
    size_t n = strlen(path);
    if (!strncmp(err.msg, path, n)) {
      char msg[KN_ERROR_MSG];
      snprintf(msg, sizeof msg, "set_state%s", err.msg + n);
      memcpy(err.msg, msg, sizeof msg);
    }
    return kn_py_raise(&err);
  }
  Py_RETURN_NONE;
}

static PyMethodDef world_methods[] = {
    {"step", (PyCFunction)(void (*)(void))world_step, METH_VARARGS | METH_KEYWORDS,
     "step(n=1): n time steps (the GIL released); knead.Error on failure, the world left at the last good step"},
    {"run", (PyCFunction)world_run, METH_NOARGS, "run(): step to the end of the scene's duration"},
    {"q", (PyCFunction)world_q, METH_VARARGS, "q(name): read-only view of a robot's or object's coordinates"},
    {"v", (PyCFunction)world_v, METH_VARARGS, "v(name): read-only view of a robot's or object's velocities"},
    {"fem_x", (PyCFunction)world_fem_x, METH_VARARGS, "fem_x(name): read-only (nvert, 3) view of FEM vertices"},
    {"mpm_x", (PyCFunction)world_mpm_x, METH_VARARGS, "mpm_x(name): read-only (np, 3) view of MPM particles"},
    {"_address_of", (PyCFunction)world_address_of, METH_VARARGS,
     "_address_of(which, name): the library's address of q, v, fem or mpm data (tests)"},
    {"contacts", (PyCFunction)world_contacts, METH_NOARGS, "contacts(): the last step's contacts (copies)"},
    {"stats", (PyCFunction)world_stats, METH_NOARGS, "stats(): solver statistics (last step and run)"},
    {"checks", (PyCFunction)world_checks, METH_NOARGS, "checks(): the scene's checks as of now"},
    {"controllers", (PyCFunction)world_controllers, METH_NOARGS, "controllers(): the PD controllers"},
    {"set_setpoint", (PyCFunction)world_set_setpoint, METH_VARARGS,
     "set_setpoint(robot, q): hold the robot's controller at the constant reference q"},
    {"reference", (PyCFunction)world_reference, METH_VARARGS,
     "reference(robot, t=None): the controller's (q_ref, v_ref) at t"},
    {"get_state", (PyCFunction)world_get_state, METH_NOARGS, "get_state(): the saved state as bytes"},
    {"set_state", (PyCFunction)world_set_state, METH_VARARGS, "set_state(bytes): load a saved state"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef world_getset[] = {
    {"t", (getter)world_get_t, NULL, "simulated time [s]", NULL},
    {"step_count", (getter)world_get_step_count, NULL, "steps taken", NULL},
    {"total_steps", (getter)world_get_total_steps, NULL, "steps in the scene's duration", NULL},
    {"time_step", (getter)world_get_time_step, NULL, "the scene's time step [s]", NULL},
    {"state_hash", (getter)world_get_state_hash, NULL, "the state hash as knead run prints it", NULL},
    {"robots", (getter)world_get_robots, NULL, "robot names", NULL},
    {"objects", (getter)world_get_objects, NULL, "object names", NULL},
    {"fems", (getter)world_get_fems, NULL, "FEM deformable names", NULL},
    {"mpms", (getter)world_get_mpms, NULL, "MPM deformable names", NULL},
    {"colliders", (getter)world_get_colliders, NULL, "collider names", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject WorldType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "knead.World",
    .tp_doc = "World(path=None, yaml=None, overrides=[]): a scene's world (the default scene without arguments)",
    .tp_basicsize = sizeof(World),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)world_init,
    .tp_dealloc = (destructor)world_dealloc,
    .tp_methods = world_methods,
    .tp_getset = world_getset,
};


//---- the module ----

static struct PyModuleDef knead_module = {
    PyModuleDef_HEAD_INIT, .m_name = "knead", .m_doc = "knead: a robotics simulator (libknead)", .m_size = -1};

PyMODINIT_FUNC PyInit_knead(void) {
  import_array();
  if (PyType_Ready(&WorldType) < 0 || PyType_Ready(&kn_py_robot_type) < 0) return NULL;
  PyObject* m = PyModule_Create(&knead_module);
  if (!m) return NULL;
  knead_error = PyErr_NewExceptionWithDoc("knead.Error", "an error from knead, with its message",
                                          PyExc_RuntimeError, NULL);
  if (!knead_error || PyModule_AddObject(m, "Error", knead_error) < 0) goto fail;
  Py_INCREF(knead_error);
  Py_INCREF(&WorldType);
  if (PyModule_AddObject(m, "World", (PyObject*)&WorldType) < 0) goto fail;
  Py_INCREF(&kn_py_robot_type);
  if (PyModule_AddObject(m, "Robot", (PyObject*)&kn_py_robot_type) < 0) goto fail;
  if (PyModule_AddStringConstant(m, "__version__", kn_version()) < 0) goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
