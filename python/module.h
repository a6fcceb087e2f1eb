/* What the `knead` Python module's files share (inside python/ only): the Python and NumPy C APIs
 * (one NumPy API table for the module: PY_ARRAY_UNIQUE_SYMBOL, imported in knead_module.c), the
 * module's knead.Error, and its types. */
#ifndef KNEAD_PYTHON_MODULE_H
#define KNEAD_PYTHON_MODULE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL knead_numpy_api
#ifndef KNEAD_PYTHON_MAIN
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "common/common.h"

// (kn_error) => NULL with knead.Error set to its message
PyObject* kn_py_raise(const kn_error* err);

// (n, k) => a new float64 array of that shape (k = 0: shape (n,)), NULL with an exception
PyObject* kn_py_new_array(npy_intp n, npy_intp k);

/* knead.Robot (robot.c): a URDF's multibody model */
extern PyTypeObject kn_py_robot_type;

#endif
