/* SPDX-License-Identifier: MIT */
/*
 * _ringtrace.traced(func, cat, name): what @ringtrace.trace puts around a plain
 * function. Calling it records one complete event around the call, as a scope does
 * (rtr__scope_begin() before, rtr__scope_end() after, also when the call raises),
 * through vectorcall, so the arguments pass through untouched.
 *
 * It binds like a function: as a method it gets `self` (Py_TPFLAGS_METHOD_DESCRIPTOR
 * lets the interpreter call it with self first, without a bound method; __get__ makes
 * one otherwise). It has a __dict__, so functools.update_wrapper() gives it the
 * function's __name__, __qualname__, __doc__, __module__ and __wrapped__, and it
 * pickles as the function would, by that name.
 */
#include "pyrtr.h"

#include <stddef.h>

struct traced {
	PyObject_HEAD PyObject *func;
	PyObject *dict;
	struct pyrtr_site *site;
	vectorcallfunc vectorcall;
};

static PyObject *traced_call(PyObject *self, PyObject *const *argv, size_t nargsf,
			     PyObject *kwnames)
{
	struct traced *t = (struct traced *)self;
	struct rtr__scope span = rtr__scope_begin(&t->site->site, &t->site->decision);
	PyObject *res = PyObject_Vectorcall(t->func, argv, nargsf, kwnames);

	if (span.site != NULL)
		PYRTR_RECORD(1, rtr__scope_end(&span));
	return res;
}

static PyObject *traced_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
	PyObject *func, *cat, *name;

	if ((kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) ||
	    !PyArg_UnpackTuple(args, "traced", 3, 3, &func, &cat, &name)) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError,
					"traced(func, cat, name) takes no keywords");
		return NULL;
	}
	if (!PyCallable_Check(func)) {
		PyErr_Format(PyExc_TypeError, "ringtrace.trace: %.100s is not callable",
			     Py_TYPE(func)->tp_name);
		return NULL;
	}
	struct pyrtr_site *site = pyrtr_site(cat, name);
	if (site == NULL)
		return NULL;
	struct traced *t = (struct traced *)type->tp_alloc(type, 0);
	if (t == NULL)
		return NULL;
	Py_INCREF(func);
	t->func = func;
	t->dict = NULL;
	t->site = site;
	t->vectorcall = traced_call;
	return (PyObject *)t;
}

static int traced_traverse(PyObject *self, visitproc visit, void *arg)
{
	struct traced *t = (struct traced *)self;

	Py_VISIT(t->func);
	Py_VISIT(t->dict);
	return 0;
}

static int traced_clear(PyObject *self)
{
	struct traced *t = (struct traced *)self;

	Py_CLEAR(t->func);
	Py_CLEAR(t->dict);
	return 0;
}

static void traced_dealloc(PyObject *self)
{
	PyObject_GC_UnTrack(self);
	traced_clear(self);
	Py_TYPE(self)->tp_free(self);
}

static PyObject *traced_get(PyObject *self, PyObject *obj, PyObject *type)
{
	(void)type;
	if (obj == NULL || obj == Py_None) {
		Py_INCREF(self);
		return self;
	}
	return PyMethod_New(self, obj);
}

static PyObject *traced_repr(PyObject *self)
{
	struct traced *t = (struct traced *)self;

	return PyUnicode_FromFormat("<ringtrace.trace %s/%s of %R>", t->site->site.cat,
				    t->site->site.name, t->func);
}

/* Pickled by reference, as the function it stands for: the name update_wrapper() gave
 * it, looked up in its module (multiprocessing sends functions so). */
static PyObject *traced_reduce(PyObject *self, PyObject *unused)
{
	(void)unused;
	return PyObject_GetAttrString(self, "__qualname__");
}

static PyMethodDef traced_methods[] = {
	{"__reduce__", traced_reduce, METH_NOARGS, "Pickled as module.qualname."},
	{NULL, NULL, 0, NULL},
};

static PyGetSetDef traced_getset[] = {
	{"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject pyrtr_traced_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ringtrace._ringtrace.traced",
	.tp_basicsize = sizeof(struct traced),
	.tp_dealloc = traced_dealloc,
	.tp_vectorcall_offset = offsetof(struct traced, vectorcall),
	.tp_repr = traced_repr,
	.tp_call = PyVectorcall_Call,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
		    Py_TPFLAGS_METHOD_DESCRIPTOR,
	.tp_doc = "traced(func, cat, name)\n--\n\n"
		  "func, recording one complete event of `cat` and `name` around each call "
		  "(what ringtrace.trace makes for a plain function).",
	.tp_traverse = traced_traverse,
	.tp_clear = traced_clear,
	.tp_methods = traced_methods,
	.tp_getset = traced_getset,
	.tp_descr_get = traced_get,
	.tp_dictoffset = offsetof(struct traced, dict),
	.tp_new = traced_new,
};
