// Demo contrib extension of the stand-in APEX tree: one function, Python C API only.
#include <Python.h>

static PyObject *answer(PyObject *, PyObject *) { return PyLong_FromLong(42); }

static PyMethodDef methods[] = {{"answer", answer, METH_NOARGS, "Return 42."}, {nullptr, nullptr, 0, nullptr}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "apex_demo_contrib_C", nullptr, -1, methods};

PyMODINIT_FUNC PyInit_apex_demo_contrib_C(void) { return PyModule_Create(&module); }
