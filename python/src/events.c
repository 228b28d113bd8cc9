/* SPDX-License-Identifier: MIT */
/*
 * The event functions of the module: instants, counters, flows, async spans, thread
 * names and memory (allocations and frees). Each converts what it was given (names interned,
 * arguments into struct rtr_arg) with the GIL held, then makes the library's call (see pyrtr.h on
 * when the GIL is let go around it).
 */
#include "pyrtr.h"

#include <limits.h>

int pyrtr_check_args(const char *fn, Py_ssize_t nargs, Py_ssize_t want, PyObject *kwnames,
		     int kw_ok, const char *names)
{
	if (nargs != want) {
		PyErr_Format(PyExc_TypeError,
			     "%s() takes %zd positional arguments (%s), "
			     "%zd given",
			     fn, want, names, nargs);
		return -1;
	}
	if (!kw_ok && kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
		PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments", fn);
		return -1;
	}
	return 0;
}

int pyrtr_id(PyObject *o, uint64_t *id)
{
	if (!PyLong_Check(o) || PyBool_Check(o)) {
		PyErr_Format(PyExc_TypeError, "ringtrace: an id must be an int, not %.100s",
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	unsigned long long v = PyLong_AsUnsignedLongLong(o);
	if (v == (unsigned long long)-1 && PyErr_Occurred()) {
		PyErr_SetString(PyExc_ValueError, "ringtrace: an id is an int from 0 to 2**64 - 1");
		return -1;
	}
	*id = v;
	return 0;
}

/* The interned category and name of argv[0], argv[1]. */
static int cat_name(PyObject *const *argv, const char **cat, const char **name)
{
	*cat = pyrtr_intern(argv[0], "category");
	*name = *cat != NULL ? pyrtr_intern(argv[1], "name") : NULL;
	return *name != NULL ? 0 : -1;
}

static PyObject *py_instant(PyObject *m, PyObject *const *argv, Py_ssize_t nargs, PyObject *kwnames)
{
	const char *cat, *name;
	struct pyrtr_args args;

	(void)m;
	if (pyrtr_check_args("ringtrace.instant", nargs, 2, kwnames, 1, "cat, name") != 0 ||
	    cat_name(argv, &cat, &name) != 0)
		return NULL;
	if (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0) {
		PYRTR_RECORD(1, rtr_instant(cat, name));
		Py_RETURN_NONE;
	}
	if (pyrtr_args_from_vector(&args, argv + 2, kwnames) != 0) {
		pyrtr_args_clear(&args);
		return NULL;
	}
	PYRTR_RECORD(pyrtr_args_records(&args), rtr_instant_args(cat, name, args.a, args.n));
	pyrtr_args_clear(&args);
	Py_RETURN_NONE;
}

static PyObject *py_counter(PyObject *m, PyObject *const *argv, Py_ssize_t nargs)
{
	const char *cat, *name;
	PyObject *v;

	(void)m;
	if (pyrtr_check_args("ringtrace.counter", nargs, 3, NULL, 0, "cat, name, value") != 0 ||
	    cat_name(argv, &cat, &name) != 0)
		return NULL;
	v = argv[2];
	if (PyLong_Check(v)) {
		int overflow;
		long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
		if (i == -1 && PyErr_Occurred())
			return NULL;
		if (overflow == 0) {
			PYRTR_RECORD(2, rtr_counter_i64(cat, name, i));
			Py_RETURN_NONE;
		}
		/* past 64 bits: as a double, which is what the viewers hold anyway */
	} else if (!PyFloat_Check(v)) {
		PyErr_Format(PyExc_TypeError,
			     "ringtrace.counter(): the value must be an int or a "
			     "float, not %.100s",
			     Py_TYPE(v)->tp_name);
		return NULL;
	}
	double d = PyFloat_AsDouble(v);
	if (d == -1.0 && PyErr_Occurred())
		return NULL;
	PYRTR_RECORD(2, rtr_counter_f64(cat, name, d));
	Py_RETURN_NONE;
}

static PyObject *py_flow_id(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	return PyLong_FromUnsignedLongLong(rtr_flow_id());
}

/* flow_begin, flow_step, flow_end and async_end: (cat, name, id). */
static PyObject *cat_name_id(const char *fn, PyObject *const *argv, Py_ssize_t nargs,
			     void (*call)(const char *, const char *, uint64_t))
{
	const char *cat, *name;
	uint64_t id;

	if (pyrtr_check_args(fn, nargs, 3, NULL, 0, "cat, name, id") != 0 ||
	    cat_name(argv, &cat, &name) != 0 || pyrtr_id(argv[2], &id) != 0)
		return NULL;
	PYRTR_RECORD(2, call(cat, name, id));
	Py_RETURN_NONE;
}

static PyObject *py_flow_begin(PyObject *m, PyObject *const *argv, Py_ssize_t nargs)
{
	(void)m;
	return cat_name_id("ringtrace.flow_begin", argv, nargs, rtr_flow_start);
}

static PyObject *py_flow_step(PyObject *m, PyObject *const *argv, Py_ssize_t nargs)
{
	(void)m;
	return cat_name_id("ringtrace.flow_step", argv, nargs, rtr_flow_step);
}

static PyObject *py_flow_end(PyObject *m, PyObject *const *argv, Py_ssize_t nargs)
{
	(void)m;
	return cat_name_id("ringtrace.flow_end", argv, nargs, rtr_flow_end);
}

static PyObject *py_async_end(PyObject *m, PyObject *const *argv, Py_ssize_t nargs)
{
	(void)m;
	return cat_name_id("ringtrace.async_end", argv, nargs, rtr_async_end);
}

/* async_begin and async_instant: (cat, name, id, /, **args). */
static PyObject *
async_args(const char *fn, PyObject *const *argv, Py_ssize_t nargs, PyObject *kwnames,
	   void (*call)(const char *, const char *, uint64_t, const struct rtr_arg *, unsigned))
{
	const char *cat, *name;
	uint64_t id;
	struct pyrtr_args args;

	if (pyrtr_check_args(fn, nargs, 3, kwnames, 1, "cat, name, id") != 0 ||
	    cat_name(argv, &cat, &name) != 0 || pyrtr_id(argv[2], &id) != 0)
		return NULL;
	if (pyrtr_args_from_vector(&args, argv + 3, kwnames) != 0) {
		pyrtr_args_clear(&args);
		return NULL;
	}
	PYRTR_RECORD(pyrtr_args_records(&args), call(cat, name, id, args.a, args.n));
	pyrtr_args_clear(&args);
	Py_RETURN_NONE;
}

static PyObject *py_async_begin(PyObject *m, PyObject *const *argv, Py_ssize_t nargs,
				PyObject *kwnames)
{
	(void)m;
	return async_args("ringtrace.async_begin", argv, nargs, kwnames, rtr_async_begin);
}

static PyObject *py_async_instant(PyObject *m, PyObject *const *argv, Py_ssize_t nargs,
				  PyObject *kwnames)
{
	(void)m;
	return async_args("ringtrace.async_instant", argv, nargs, kwnames, rtr_async_instant);
}

/* complete(cat, name, start_ns, end_ns, /, **args): a slice whose times are known. */
static PyObject *py_complete(PyObject *m, PyObject *const *argv, Py_ssize_t nargs,
			     PyObject *kwnames)
{
	const char *cat, *name;
	uint64_t start, end;
	struct pyrtr_args args;

	(void)m;
	if (pyrtr_check_args("ringtrace.complete", nargs, 4, kwnames, 1,
			     "cat, name, start_ns, end_ns") != 0 ||
	    pyrtr_u64(argv[2], "ringtrace.complete", "start_ns", &start) != 0 ||
	    pyrtr_u64(argv[3], "ringtrace.complete", "end_ns", &end) != 0)
		return NULL;
	if (end < start) {
		PyErr_SetString(PyExc_ValueError,
				"ringtrace.complete(): end_ns is before start_ns");
		return NULL;
	}
	if (cat_name(argv, &cat, &name) != 0)
		return NULL;
	if (pyrtr_args_from_vector(&args, argv + 4, kwnames) != 0) {
		pyrtr_args_clear(&args);
		return NULL;
	}
	PYRTR_RECORD(pyrtr_args_records(&args),
		     rtr_complete_args(cat, name, start, end - start, args.a, args.n));
	pyrtr_args_clear(&args);
	Py_RETURN_NONE;
}

static PyObject *py_thread_name(PyObject *m, PyObject *arg)
{
	Py_ssize_t len;

	(void)m;
	if (!PyUnicode_Check(arg)) {
		PyErr_Format(PyExc_TypeError,
			     "ringtrace.thread_name(): the name must be a str, "
			     "not %.100s",
			     Py_TYPE(arg)->tp_name);
		return NULL;
	}
	const char *name = PyUnicode_AsUTF8AndSize(arg, &len);
	if (name == NULL)
		return NULL;
	PYRTR_RECORD(4, rtr_thread_name(name)); /* copied */
	Py_RETURN_NONE;
}

/* A device for the memory calls: MEM_HOST (-1) or a device number (0 .. INT_MAX). */
static int device_of(PyObject *o, const char *fn, int *device)
{
	if (!PyLong_Check(o) || PyBool_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s(): the device must be an int, not %.100s", fn,
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	long d = PyLong_AsLong(o);
	if ((d == -1 && PyErr_Occurred()) || d < RTR_MEM_HOST || d > INT_MAX) {
		PyErr_Clear();
		PyErr_Format(PyExc_ValueError,
			     "%s(): the device is MEM_HOST (-1) or a device number "
			     "from 0 to %d",
			     fn, INT_MAX);
		return -1;
	}
	*device = (int)d;
	return 0;
}

int pyrtr_u64(PyObject *o, const char *fn, const char *what, uint64_t *out)
{
	if (!PyLong_Check(o) || PyBool_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s(): %s must be an int, not %.100s", fn, what,
			     Py_TYPE(o)->tp_name);
		return -1;
	}
	unsigned long long v = PyLong_AsUnsignedLongLong(o);
	if (v == (unsigned long long)-1 && PyErr_Occurred()) {
		PyErr_Format(PyExc_ValueError, "%s(): %s is an int from 0 to 2**64 - 1", fn, what);
		return -1;
	}
	*out = v;
	return 0;
}

static PyObject *py_mem_alloc(PyObject *m, PyObject *const *argv, Py_ssize_t nargs)
{
	int device;
	uint64_t addr, bytes;

	(void)m;
	if (pyrtr_check_args("ringtrace.mem_alloc", nargs, 3, NULL, 0, "device, addr, bytes") !=
		    0 ||
	    device_of(argv[0], "ringtrace.mem_alloc", &device) != 0 ||
	    pyrtr_u64(argv[1], "ringtrace.mem_alloc", "addr", &addr) != 0 ||
	    pyrtr_u64(argv[2], "ringtrace.mem_alloc", "bytes", &bytes) != 0)
		return NULL;
	PYRTR_RECORD(4, rtr_mem_alloc(device, (const void *)(uintptr_t)addr, bytes));
	Py_RETURN_NONE;
}

static PyObject *py_mem_free(PyObject *m, PyObject *const *argv, Py_ssize_t nargs)
{
	int device;
	uint64_t addr;

	(void)m;
	if (pyrtr_check_args("ringtrace.mem_free", nargs, 2, NULL, 0, "device, addr") != 0 ||
	    device_of(argv[0], "ringtrace.mem_free", &device) != 0 ||
	    pyrtr_u64(argv[1], "ringtrace.mem_free", "addr", &addr) != 0)
		return NULL;
	PYRTR_RECORD(4, rtr_mem_free(device, (const void *)(uintptr_t)addr));
	Py_RETURN_NONE;
}

/* METH_FASTCALL functions, cast as the method table wants them. */
#define FAST(f)	   (PyCFunction)(void (*)(void))(f), METH_FASTCALL
#define FAST_KW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

PyMethodDef pyrtr_event_methods[] = {
	{"instant", FAST_KW(py_instant),
	 "instant(cat, name, /, **args)\n--\n\n"
	 "Record an instant (\"i\", thread scope) with `args` as its arguments."},
	{"counter", FAST(py_counter),
	 "counter(cat, name, value, /)\n--\n\n"
	 "Record a counter sample (\"C\"): series `name` takes `value` (int or float)."},
	{"flow_id", py_flow_id, METH_NOARGS,
	 "flow_id()\n--\n\nA new process-unique id for a flow or an async span."},
	{"flow_begin", FAST(py_flow_begin),
	 "flow_begin(cat, name, id, /)\n--\n\n"
	 "Start a flow arrow (\"s\") at the slice open around the call."},
	{"flow_step", FAST(py_flow_step),
	 "flow_step(cat, name, id, /)\n--\n\n"
	 "Pass a flow arrow (\"t\") through the slice open around the call."},
	{"flow_end", FAST(py_flow_end),
	 "flow_end(cat, name, id, /)\n--\n\n"
	 "End a flow arrow (\"f\", bound to the enclosing slice) at the slice open around "
	 "the call."},
	{"async_begin", FAST_KW(py_async_begin),
	 "async_begin(cat, name, id, /, **args)\n--\n\n"
	 "Begin an async span (\"b\"): work that overlaps others on a thread or moves "
	 "between threads; it ends at async_end() with the same cat, name and id."},
	{"async_instant", FAST_KW(py_async_instant),
	 "async_instant(cat, name, id, /, **args)\n--\n\nA step (\"n\") of an async span."},
	{"async_end", FAST(py_async_end),
	 "async_end(cat, name, id, /)\n--\n\nEnd the async span begun with cat, name and id."},
	{"complete", FAST_KW(py_complete),
	 "complete(cat, name, start_ns, end_ns, /, **args)\n--\n\n"
	 "Record a complete event (\"X\") on the calling thread from start_ns to end_ns "
	 "(now_ns() times), with `args` as its arguments: a slice recorded once its end "
	 "and arguments are known."},
	{"mem_alloc", FAST(py_mem_alloc),
	 "mem_alloc(device, addr, bytes, /)\n--\n\n"
	 "Record an allocation of `bytes` at `addr` (an int) on `device` (MEM_HOST or a\n"
	 "device number): an instant in category \"memory\", and the device's bytes in\n"
	 "use as a counter (\"memory host\", \"memory device N\") that the writer keeps."},
	{"mem_free", FAST(py_mem_free),
	 "mem_free(device, addr, /)\n--\n\n"
	 "Record the free of the allocation at `addr` on `device`; its size is the\n"
	 "allocation's (0 for an address not allocated in this session)."},
	{"thread_name", py_thread_name, METH_O,
	 "thread_name(name, /)\n--\n\nName the calling thread in the trace (copied)."},
	{NULL, NULL, 0, NULL},
};
