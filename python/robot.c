/* knead.Robot: a URDF's multibody model (mass matrix, point Jacobian, forward and inverse
 * dynamics, neutral q), for the `knead` Python module. Errors raise knead.Error or ValueError. */
#include "python/module.h"

#include "multibody/multibody.h"
#include "urdf/urdf.h"

typedef struct {
  PyObject_HEAD
  kn_robot* robot;
  kn_mb_data* data;
} Robot;

static void robot_dealloc(Robot* self) {
  if (self->data) kn_mb_data_free(self->data);
  if (self->robot) kn_robot_free(self->robot);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static int robot_init(Robot* self, PyObject* args, PyObject* kwds) {
  static char* kwlist[] = {"urdf_path", "floating_base", NULL};
  const char* path;
  int floating = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "s|p", kwlist, &path, &floating)) return -1;
  if (self->robot) {
    PyErr_SetString(PyExc_RuntimeError, "knead.Robot: already initialized");
    return -1;
  }
  kn_urdf_options opt = kn_urdf_options_default();
  opt.floating_base = floating;
  kn_error err = {0};
  if (kn_urdf_load(path, &opt, &self->robot, &err)) {
    self->robot = NULL;
    kn_py_raise(&err);
    return -1;
  }
  if (!(self->data = kn_mb_data_create(self->robot->model))) {
    PyErr_NoMemory();
    return -1;
  }
  return 0;
}

// => 0 with the model loaded, else -1 with RuntimeError (a Robot made without __init__)
static int robot_ready(Robot* self) {
  if (self->robot && self->data) return 0;
  PyErr_SetString(PyExc_RuntimeError, "knead.Robot: not initialized");
  return -1;
}

// (obj, n) => a contiguous float64 vector of length n, NULL with ValueError
static PyArrayObject* vector_arg(PyObject* obj, int n, const char* what) {
  PyArrayObject* a = (PyArrayObject*)PyArray_FROMANY(obj, NPY_DOUBLE, 1, 1, NPY_ARRAY_IN_ARRAY);
  if (!a) return NULL;
  if (PyArray_DIM(a, 0) != n) {
    PyErr_Format(PyExc_ValueError, "%s: expected %d values, got %zd", what, n, (Py_ssize_t)PyArray_DIM(a, 0));
    Py_DECREF(a);
    return NULL;
  }
  return a;
}

// (q, v or None) => kinematics in self->data; 0, or -1 with an exception
static int robot_kinematics(Robot* self, PyObject* qobj, PyObject* vobj) {
  if (robot_ready(self)) return -1;
  const kn_mb_model* m = self->robot->model;
  PyArrayObject *q = vector_arg(qobj, m->nq, "q"), *v = NULL;
  if (!q) return -1;
  if (vobj && vobj != Py_None && !(v = vector_arg(vobj, m->nv, "v"))) {
    Py_DECREF(q);
    return -1;
  }
  kn_mb_kinematics(m, PyArray_DATA(q), v ? PyArray_DATA(v) : NULL, self->data);
  Py_DECREF(q);
  Py_XDECREF(v);
  return 0;
}

static PyObject* robot_mass_matrix(Robot* self, PyObject* args) {
  PyObject* q;
  if (!PyArg_ParseTuple(args, "O", &q) || robot_kinematics(self, q, NULL)) return NULL;
  int nv = self->robot->model->nv;
  PyObject* M = kn_py_new_array(nv, nv);
  if (M) kn_mb_mass_matrix(self->robot->model, self->data, PyArray_DATA((PyArrayObject*)M));
  return M;
}

// (q, body name or index, point in the body frame, angular) => Jv (3, nv), or [Jw; Jv] (6, nv)
static PyObject* robot_jacobian(Robot* self, PyObject* args, PyObject* kwds) {
  static char* kwlist[] = {"q", "body", "point", "angular", NULL};
  PyObject *q, *body, *point = Py_None;
  int angular = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|Op", kwlist, &q, &body, &point, &angular) || robot_ready(self))
    return NULL;
  const kn_mb_model* m = self->robot->model;
  int b = -1;
  if (PyUnicode_Check(body)) {
    const char* name = PyUnicode_AsUTF8(body);
    if (!name) return NULL;
    if ((b = kn_mb_find_body(m, name)) < 0) return PyErr_Format(PyExc_KeyError, "no body named '%s'", name);
  } else {
    long i = PyLong_AsLong(body);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0 || i >= m->nbody) return PyErr_Format(PyExc_IndexError, "body index %ld out of [0, %d)", i, m->nbody);
    b = (int)i;
  }
  double p[3] = {0, 0, 0};
  if (point != Py_None) {
    PyArrayObject* pa = vector_arg(point, 3, "point");
    if (!pa) return NULL;
    memcpy(p, PyArray_DATA(pa), sizeof p);
    Py_DECREF(pa);
  }
  if (robot_kinematics(self, q, NULL)) return NULL;
  PyObject* J = kn_py_new_array(angular ? 6 : 3, m->nv);
  if (!J) return NULL;
  double* Jd = PyArray_DATA((PyArrayObject*)J);
  if (angular)
    kn_mb_point_jacobian(m, self->data, b, p, Jd + 3 * m->nv, Jd);
  else
    kn_mb_point_jacobian(m, self->data, b, p, Jd, NULL);
  return J;
}

// (q, v, x) => forward (x = tau => qdd) or inverse (x = qdd => tau) dynamics
static PyObject* robot_dynamics(Robot* self, PyObject* args, int forward) {
  PyObject *q, *v, *x;
  if (!PyArg_ParseTuple(args, "OOO", &q, &v, &x) || robot_ready(self)) return NULL;
  const kn_mb_model* m = self->robot->model;
  PyArrayObject* xa = vector_arg(x, m->nv, forward ? "tau" : "qdd");
  if (!xa) return NULL;
  if (robot_kinematics(self, q, v)) {
    Py_DECREF(xa);
    return NULL;
  }
  PyObject* out = kn_py_new_array(m->nv, 0);
  if (out) {
    if (forward)
      kn_mb_forward_dynamics(m, self->data, PyArray_DATA(xa), PyArray_DATA((PyArrayObject*)out));
    else
      kn_mb_inverse_dynamics(m, self->data, PyArray_DATA(xa), PyArray_DATA((PyArrayObject*)out));
  }
  Py_DECREF(xa);
  return out;
}
static PyObject* robot_forward_dynamics(Robot* self, PyObject* args) { return robot_dynamics(self, args, 1); }
static PyObject* robot_inverse_dynamics(Robot* self, PyObject* args) { return robot_dynamics(self, args, 0); }

static PyObject* robot_neutral_q(Robot* self, PyObject* Py_UNUSED(ignored)) {
  if (robot_ready(self)) return NULL;
  PyObject* q = kn_py_new_array(self->robot->model->nq, 0);
  if (q) kn_mb_neutral_q(self->robot->model, PyArray_DATA((PyArrayObject*)q));
  return q;
}

static PyObject* robot_get_nq(Robot* self, void* Py_UNUSED(c)) {
  return robot_ready(self) ? NULL : PyLong_FromLong(self->robot->model->nq);
}
static PyObject* robot_get_nv(Robot* self, void* Py_UNUSED(c)) {
  return robot_ready(self) ? NULL : PyLong_FromLong(self->robot->model->nv);
}
static PyObject* robot_get_bodies(Robot* self, void* Py_UNUSED(c)) {
  if (robot_ready(self)) return NULL;
  const kn_mb_model* m = self->robot->model;
  PyObject* list = PyList_New(m->nbody);
  for (int i = 0; list && i < m->nbody; i++) {
    PyObject* s = PyUnicode_FromString(m->bodies[i].name);
    if (!s) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, i, s);
  }
  return list;
}
static PyObject* robot_get_mass(Robot* self, void* Py_UNUSED(c)) {
  if (robot_ready(self)) return NULL;
  return PyFloat_FromDouble(kn_mb_total_mass(self->robot->model));
}

static PyMethodDef robot_methods[] = {
    {"mass_matrix", (PyCFunction)robot_mass_matrix, METH_VARARGS, "mass_matrix(q): M (nv, nv) by CRBA"},
    {"jacobian", (PyCFunction)(void (*)(void))robot_jacobian, METH_VARARGS | METH_KEYWORDS,
     "jacobian(q, body, point=None, angular=False): world-aligned point Jacobian Jv (3, nv); "
     "angular=True: [Jw; Jv] (6, nv)"},
    {"forward_dynamics", (PyCFunction)robot_forward_dynamics, METH_VARARGS,
     "forward_dynamics(q, v, tau): qdd by ABA (the model's gravity)"},
    {"inverse_dynamics", (PyCFunction)robot_inverse_dynamics, METH_VARARGS,
     "inverse_dynamics(q, v, qdd): tau = M qdd + C v - g by RNEA"},
    {"neutral_q", (PyCFunction)robot_neutral_q, METH_NOARGS, "neutral_q(): the neutral configuration"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef robot_getset[] = {{"nq", (getter)robot_get_nq, NULL, "coordinates", NULL},
                                     {"nv", (getter)robot_get_nv, NULL, "velocities", NULL},
                                     {"bodies", (getter)robot_get_bodies, NULL, "body names", NULL},
                                     {"mass", (getter)robot_get_mass, NULL, "total mass [kg]", NULL},
                                     {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject kn_py_robot_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "knead.Robot",
    .tp_doc = "Robot(urdf_path, floating_base=False): a URDF's multibody model",
    .tp_basicsize = sizeof(Robot),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)robot_init,
    .tp_dealloc = (destructor)robot_dealloc,
    .tp_methods = robot_methods,
    .tp_getset = robot_getset,
};
