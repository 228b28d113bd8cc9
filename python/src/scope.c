/* SPDX-License-Identifier: MIT */
/*
 * ringtrace.scope(cat, name, /, **args): a slice around a `with` block.
 *
 * A scope is one complete event ("X"), recorded when the block ends. Without
 * arguments it is the C macro RTR_SCOPE's record: __enter__ reads the clock
 * (rtr__scope_begin() on the site interned for (cat, name)), __exit__ writes one
 * 32-byte record with the start and the duration (rtr__scope_end()). With arguments
 * they are converted when the scope is made (so a bad one raises before the block
 * runs), and __exit__ records rtr_complete_args() with rtr_now_ns() times.
 *
 * Why X and not B/E: a `with` block inside a coroutine may span an await, and other
 * coroutines' slices on the same thread then begin and end inside it; a B/E pair
 * would end the wrong slice in the viewer's stack, an X only overlaps (async work is
 * better an async span: @ringtrace.trace on a coroutine).
 */
#include "pyrtr.h"

struct scope {
	PyObject_HEAD struct pyrtr_site *site;
	struct pyrtr_args *args; /* NULL without arguments */
	struct rtr__scope span;	 /* no arguments: span.site NULL when not recording */
	uint64_t start_ns;	 /* with arguments: when __enter__ ran, 0 when not recording */
};

static PyObject *scope_vectorcall(PyObject *type, PyObject *const *argv, size_t nargsf,
				  PyObject *kwnames)
{
	Py_ssize_t npos = PyVectorcall_NARGS(nargsf);

	if (npos != 2) {
		PyErr_Format(PyExc_TypeError,
			     "ringtrace.scope() takes the category and the name as its 2 "
			     "positional arguments (%zd given)",
			     npos);
		return NULL;
	}
	struct pyrtr_site *site = pyrtr_site(argv[0], argv[1]);
	if (site == NULL)
		return NULL;
	struct scope *s = PyObject_New(struct scope, (PyTypeObject *)type);
	if (s == NULL)
		return NULL;
	s->site = site;
	s->args = NULL;
	s->span.site = NULL;
	s->start_ns = 0;
	if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
		s->args = PyMem_Malloc(sizeof(*s->args));
		if (s->args == NULL) {
			Py_DECREF(s);
			return PyErr_NoMemory();
		}
		if (pyrtr_args_from_vector(s->args, argv + 2, kwnames) != 0) {
			Py_DECREF(s);
			return NULL;
		}
	}
	return (PyObject *)s;
}

static PyObject *scope_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
	return PyVectorcall_Call((PyObject *)type, args, kwargs);
}

static void scope_dealloc(PyObject *self)
{
	struct scope *s = (struct scope *)self;

	if (s->args != NULL) {
		pyrtr_args_clear(s->args);
		PyMem_Free(s->args);
	}
	PyObject_Free(self);
}

static PyObject *scope_enter(PyObject *self, PyObject *unused)
{
	struct scope *s = (struct scope *)self;

	(void)unused;
	if (s->args == NULL)
		s->span = rtr__scope_begin(&s->site->site, &s->site->decision);
	else
		s->start_ns = rtr_category_enabled(s->site->site.cat) ? rtr_now_ns() : 0;
	Py_INCREF(self);
	return self;
}

static PyObject *scope_exit(PyObject *self, PyObject *const *argv, Py_ssize_t n)
{
	struct scope *s = (struct scope *)self;

	(void)argv;
	(void)n;
	if (s->args == NULL) {
		if (s->span.site != NULL)
			PYRTR_RECORD(1, rtr__scope_end(&s->span));
		s->span.site = NULL;
	} else if (s->start_ns != 0) {
		uint64_t end = rtr_now_ns();
		const struct rtr_site *site = &s->site->site;
		PYRTR_RECORD(pyrtr_args_records(s->args),
			     rtr_complete_args(site->cat, site->name, s->start_ns,
					       end - s->start_ns, s->args->a, s->args->n));
		s->start_ns = 0;
	}
	Py_RETURN_NONE; /* false: an exception in the block goes on */
}

static PyObject *scope_repr(PyObject *self)
{
	struct scope *s = (struct scope *)self;

	return PyUnicode_FromFormat("<ringtrace.scope %s/%s>", s->site->site.cat,
				    s->site->site.name);
}

static PyMethodDef scope_methods[] = {
	{"__enter__", scope_enter, METH_NOARGS, "Start the slice (read the clock)."},
	{"__exit__", (PyCFunction)(void (*)(void))scope_exit, METH_FASTCALL,
	 "Record the slice: one complete event from __enter__ to now."},
	{NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(scope_doc,
	     "scope(cat, name, /, **args)\n--\n\n"
	     "A slice around a `with` block: one complete event (\"X\") of category `cat`\n"
	     "and name `name` on the calling thread, from the block's start to its end,\n"
	     "with `args` (None, bool, int, float or str values) as its arguments.\n"
	     "Recorded when the block ends, also when it raises. Records nothing while the\n"
	     "recorder is stopped or its category filter leaves `cat` out.");

PyTypeObject pyrtr_scope_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ringtrace.scope",
	.tp_basicsize = sizeof(struct scope),
	.tp_dealloc = scope_dealloc,
	.tp_repr = scope_repr,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = scope_doc,
	.tp_methods = scope_methods,
	.tp_new = scope_new,
	.tp_vectorcall = scope_vectorcall,
};
