/* SPDX-License-Identifier: MIT */
/*
 * The module ringtrace._ringtrace: the recorder's lifecycle, its statistics and the
 * clock; the event calls are in events.c, scope.c and traced.c (pyrtr.h says which
 * file does what).
 *
 * The lifecycle calls (start, stop, trace_path) let the GIL go while they run: start
 * opens the file (and may wait for a FIFO's reader), stop drains every ring and joins
 * the writer. The library wants them from one thread at a time, so they take the
 * module's lifecycle lock, with the GIL let go while they wait for it. flush and
 * snapshot may run from any thread at any time.
 */
#include "pyrtr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static PyThread_type_lock lifecycle;

/* A negative errno of the library as the exception it means. */
static PyObject *raise_errno(int err, const char *path)
{
	errno = -err;
	if (path != NULL)
		return PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
	return PyErr_SetFromErrno(PyExc_OSError);
}

PyDoc_STRVAR(start_doc,
	     "start(path=None, **config)\n--\n\n"
	     "Start the recorder: open the trace file at `path` (a pattern: %p pid, %h host,\n"
	     "%r rank, %s segment; default RINGTRACE_FILE or ringtrace-%p.json), write its\n"
	     "start marker and start the writer thread. `config` takes the fields of\n"
	     "struct rtr_config by name (ring_bytes=, on_full='block', flush_ms=, io=,\n"
	     "process_name=, clock=, compress=, categories=, cache_mb=, stop_timeout_ms=,\n"
	     "max_mb=, max_seconds=, keep=, mode='flight', flight_mb=, flight_at_exit=,\n"
	     "signals=, snapshot_signal=, format=, open_timeout_ms=, pf_compress=); what is\n"
	     "not given comes from the RINGTRACE_* environment, else the default.\n"
	     "Raises TypeError for an unknown option or a value of the wrong type,\n"
	     "ValueError for a bad value (nothing is started), RuntimeError when the\n"
	     "recorder already runs, OSError when the file cannot be opened. When\n"
	     "RINGTRACE_AUTOSTART=1 started the recorder as the module loaded, the first\n"
	     "start() keeps that session (its config is not applied).");

static PyObject *py_start(PyObject *m, PyObject *args, PyObject *kwargs)
{
	PyObject *path = NULL, *keep;
	struct rtr_config cfg;
	int err;

	(void)m;
	if (!PyArg_ParseTuple(args, "|O:start", &path) || (keep = PyList_New(0)) == NULL)
		return NULL;
	if (pyrtr_config_parse(&cfg, path, kwargs, keep) != 0) {
		Py_DECREF(keep);
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS;
	PyThread_acquire_lock(lifecycle, WAIT_LOCK);
	err = rtr_start(&cfg);
	PyThread_release_lock(lifecycle);
	Py_END_ALLOW_THREADS;
	if (err == -EBUSY)
		PyErr_SetString(PyExc_RuntimeError,
				"ringtrace.start(): the recorder is already running (or the last "
				"session's writer is still stuck in its file)");
	else if (err == -EINVAL)
		PyErr_Format(PyExc_ValueError,
			     "ringtrace.start(): the library refused the configuration: check "
			     "categories=%s, signals=%s, snapshot_signal=%s",
			     cfg.categories ? cfg.categories : "None",
			     cfg.signals ? cfg.signals : "None",
			     cfg.snapshot_signal ? cfg.snapshot_signal : "None");
	else if (err != 0)
		raise_errno(err, cfg.path);
	Py_DECREF(keep);
	if (err != 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *py_check_config(PyObject *m, PyObject *args, PyObject *kwargs)
{
	PyObject *path = NULL, *keep;
	struct rtr_config cfg;

	(void)m;
	if (!PyArg_ParseTuple(args, "|O:Session", &path) || (keep = PyList_New(0)) == NULL)
		return NULL;
	int err = pyrtr_config_parse(&cfg, path, kwargs, keep);
	Py_DECREF(keep);
	if (err != 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *py_stop(PyObject *m, PyObject *unused)
{
	int err;

	(void)m;
	(void)unused;
	Py_BEGIN_ALLOW_THREADS;
	PyThread_acquire_lock(lifecycle, WAIT_LOCK);
	err = rtr_stop();
	PyThread_release_lock(lifecycle);
	Py_END_ALLOW_THREADS;
	if (err != 0)
		return raise_errno(err, NULL);
	Py_RETURN_NONE;
}

static PyObject *py_flush(PyObject *m, PyObject *unused)
{
	int err;

	(void)m;
	(void)unused;
	Py_BEGIN_ALLOW_THREADS;
	err = rtr_flush();
	Py_END_ALLOW_THREADS;
	if (err != 0)
		return raise_errno(err, NULL);
	Py_RETURN_NONE;
}

static PyObject *py_snapshot(PyObject *m, PyObject *args)
{
	PyObject *path = Py_None, *bytes = NULL;
	const char *p = NULL;
	int err;

	(void)m;
	if (!PyArg_ParseTuple(args, "|O:snapshot", &path))
		return NULL;
	if (path != Py_None) {
		if (!PyUnicode_FSConverter(path, &bytes))
			return NULL;
		p = PyBytes_AS_STRING(bytes);
	}
	Py_BEGIN_ALLOW_THREADS;
	err = rtr_snapshot(p);
	Py_END_ALLOW_THREADS;
	if (err == -ENOTCONN)
		PyErr_SetString(PyExc_RuntimeError,
				"ringtrace.snapshot(): the recorder is not running");
	else if (err == -ENOTSUP)
		PyErr_SetString(PyExc_RuntimeError,
				"ringtrace.snapshot(): a snapshot needs mode='flight' or rotation "
				"(max_mb or max_seconds)");
	else if (err == -EINVAL)
		PyErr_SetString(PyExc_ValueError,
				"ringtrace.snapshot(): with rotation a snapshot ends the segment "
				"and takes no path");
	else if (err != 0)
		raise_errno(err, p);
	Py_XDECREF(bytes);
	if (err != 0)
		return NULL;
	Py_RETURN_NONE;
}

/* Put one value into d under key, taking the reference; -1 on error. */
static int put(PyObject *d, const char *key, PyObject *v)
{
	int err = v != NULL ? PyDict_SetItemString(d, key, v) : -1;

	Py_XDECREF(v);
	return err;
}

static const char *clock_word(int clock)
{
	return clock == RTR_CLOCK_TSC ? "tsc" : clock == RTR_CLOCK_MONOTONIC ? "monotonic" : "none";
}

static const char *io_word(int io)
{
	return io == RTR_IO_URING ? "uring" : io == RTR_IO_SYNC ? "sync" : "none";
}

static PyObject *py_stats(PyObject *m, PyObject *unused)
{
	struct rtr_stats st;
	PyObject *d = PyDict_New();

	(void)m;
	(void)unused;
	if (d == NULL)
		return NULL;
	rtr_stats_get(&st);
#define U64(f) put(d, #f, PyLong_FromUnsignedLongLong(st.f))
	if (U64(events_recorded) || U64(events_written) || U64(events_dropped) ||
	    U64(events_dropped_full) || U64(events_dropped_io) || U64(events_dropped_too_large) ||
	    U64(bytes_written) || U64(threads) || U64(writer_wakeups) || U64(events_args_cut) ||
	    put(d, "io_method", PyUnicode_FromString(io_word(st.io_method))) ||
	    put(d, "clock", PyUnicode_FromString(clock_word(st.clock))) ||
	    put(d, "write_error", PyLong_FromLong(st.write_error)) ||
	    put(d, "running", PyBool_FromLong(st.running)) || U64(bytes_uncompressed) ||
	    U64(events_dropped_reentrant) || U64(events_dropped_corrupt) ||
	    U64(events_dropped_no_track) || U64(files) || U64(events_evicted) ||
	    U64(events_waited_full) || U64(waited_ns)) {
		Py_DECREF(d);
		return NULL;
	}
#undef U64
	return d;
}

static PyObject *py_now_ns(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	return PyLong_FromUnsignedLongLong(rtr_now_ns());
}

static PyObject *py_version(PyObject *m, PyObject *unused)
{
	(void)m;
	(void)unused;
	return PyUnicode_FromString(rtr_version());
}

static PyObject *py_trace_path(PyObject *m, PyObject *unused)
{
	PyObject *path;

	(void)m;
	(void)unused;
	Py_BEGIN_ALLOW_THREADS;
	PyThread_acquire_lock(lifecycle, WAIT_LOCK);
	Py_END_ALLOW_THREADS;
	const char *p = rtr_trace_path();
	path = *p == '\0' ? Py_NewRef(Py_None) : PyUnicode_DecodeFSDefault(p);
	PyThread_release_lock(lifecycle);
	return path;
}

/* rtr_profile_walk()'s nodes, copied while the GIL is released. */
struct walked {
	struct rtr_profile_node *v;
	char **names; /* each node's name and category, one allocation "name\0cat\0" */
	size_t n, cap;
};

static int keep_node(const struct rtr_profile_node *nd, void *user)
{
	struct walked *w = user;
	size_t ln = strlen(nd->name), lc = strlen(nd->cat);

	if (w->n == w->cap) {
		size_t cap = w->cap == 0 ? 64 : 2 * w->cap;
		struct rtr_profile_node *v = realloc(w->v, cap * sizeof(*v));
		char **names = v == NULL ? NULL : realloc(w->names, cap * sizeof(*names));
		if (v != NULL)
			w->v = v;
		if (names == NULL)
			return -ENOMEM;
		w->names = names, w->cap = cap;
	}
	char *text = malloc(ln + lc + 2);
	if (text == NULL)
		return -ENOMEM;
	memcpy(text, nd->name, ln + 1);
	memcpy(text + ln + 1, nd->cat, lc + 1);
	w->v[w->n] = *nd;
	w->names[w->n++] = text;
	return 0;
}

static PyObject *walked_list(const struct walked *w)
{
	PyObject *list = PyList_New((Py_ssize_t)w->n);

	for (size_t i = 0; list != NULL && i < w->n; i++) {
		const struct rtr_profile_node *nd = &w->v[i];
		const char *name = w->names[i];
		PyObject *d = Py_BuildValue(
			"{s:I,s:s,s:s,s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "depth", nd->depth, "name",
			name, "cat", name + strlen(name) + 1, "count",
			(unsigned long long)nd->count, "total_ns", (unsigned long long)nd->total_ns,
			"self_ns", (unsigned long long)nd->self_ns, "min_ns",
			(unsigned long long)nd->min_ns, "max_ns", (unsigned long long)nd->max_ns,
			"p50_ns", (unsigned long long)nd->p50_ns, "p99_ns",
			(unsigned long long)nd->p99_ns);
		if (d == NULL) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, d);
	}
	return list;
}

static PyObject *py_profile_walk(PyObject *m, PyObject *unused)
{
	struct walked w = {0};
	PyObject *list = NULL;
	int err;

	(void)m;
	(void)unused;
	Py_BEGIN_ALLOW_THREADS; /* it waits for the writer */
	err = rtr_profile_walk(keep_node, &w);
	Py_END_ALLOW_THREADS;
	if (err == -ENOTCONN)
		list = Py_NewRef(Py_None);
	else if (err != 0)
		PyErr_NoMemory();
	else
		list = walked_list(&w);
	for (size_t i = 0; i < w.n; i++)
		free(w.names[i]);
	free(w.names);
	free(w.v);
	return list;
}

/* os.register_at_fork(after_in_child=...): a thread of the parent may have held the
 * lifecycle lock as it forked, and it does not exist in the child. */
static PyObject *py_after_fork_child(PyObject *m, PyObject *unused)
{
	PyThread_type_lock fresh = PyThread_allocate_lock();

	(void)m;
	(void)unused;
	if (fresh == NULL)
		return PyErr_NoMemory();
	lifecycle = fresh; /* the old one is left as it is: it may be held */
	Py_RETURN_NONE;
}

static PyObject *py_intern_counts(PyObject *m, PyObject *unused)
{
	size_t strings, sites, bytes;

	(void)m;
	(void)unused;
	pyrtr_intern_counts(&strings, &sites, &bytes);
	return Py_BuildValue("(nnn)", (Py_ssize_t)strings, (Py_ssize_t)sites, (Py_ssize_t)bytes);
}

#define VARKW(f) (PyCFunction)(void (*)(void))(f), METH_VARARGS | METH_KEYWORDS

static PyMethodDef lifecycle_methods[] = {
	{"start", VARKW(py_start), start_doc},
	{"_check_config", VARKW(py_check_config),
	 "_check_config(path=None, **config)\n--\n\n"
	 "Check start()'s arguments without starting: the errors start() would raise."},
	{"stop", py_stop, METH_NOARGS,
	 "stop()\n--\n\n"
	 "Stop recording: drain every thread's ring, write the end marker, close the file\n"
	 "and join the writer. Nothing when not running. Raises OSError for the first\n"
	 "write error of the session (TimeoutError past stop_timeout_ms)."},
	{"flush", py_flush, METH_NOARGS,
	 "flush()\n--\n\n"
	 "Wait until every event recorded before the call is in the file. Raises OSError\n"
	 "for a write error, TimeoutError past stop_timeout_ms."},
	{"snapshot", py_snapshot, METH_VARARGS,
	 "snapshot(path=None)\n--\n\n"
	 "mode='flight': write the window as a trace of its own at `path` (None: the\n"
	 "pattern with %s numbered). With rotation: end the current segment now (no path).\n"
	 "RuntimeError when not running or in stream mode without rotation."},
	{"stats", py_stats, METH_NOARGS,
	 "stats()\n--\n\n"
	 "The counters of the running session, or of the last one after stop(), as a dict\n"
	 "keyed like struct rtr_stats (io_method and clock as words)."},
	{"now_ns", py_now_ns, METH_NOARGS,
	 "now_ns()\n--\n\nNanoseconds on the recorder's clock (CLOCK_MONOTONIC's time base)."},
	{"version", py_version, METH_NOARGS,
	 "version()\n--\n\nThe library's version, \"major.minor.patch\"."},
	{"trace_path", py_trace_path, METH_NOARGS,
	 "trace_path()\n--\n\n"
	 "The file of the running session, or of the last one, its pattern expanded;\n"
	 "None before the first start()."},
	{"profile_walk", py_profile_walk, METH_NOARGS,
	 "profile_walk()\n--\n\n"
	 "The profile so far (rtr_profile_walk()): a list of dicts, one per call path in\n"
	 "preorder, the threads merged: depth (1: a top-level slice), name, cat, count,\n"
	 "total_ns, self_ns, min_ns, max_ns, p50_ns, p99_ns. None when the session does\n"
	 "not aggregate (start it with profile=True, or RINGTRACE_PROFILE=1)."},
	{"_after_fork_child", py_after_fork_child, METH_NOARGS,
	 "_after_fork_child()\n--\n\nA fresh lifecycle lock in a forked child."},
	{"_intern_counts", py_intern_counts, METH_NOARGS,
	 "_intern_counts()\n--\n\n(strings, sites, bytes) interned so far."},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "ringtrace._ringtrace",
	.m_doc = "The ringtrace recorder's C API for Python (import ringtrace instead).",
	.m_size = -1,
	.m_methods = lifecycle_methods,
};

PyMODINIT_FUNC PyInit__ringtrace(void);

PyMODINIT_FUNC PyInit__ringtrace(void)
{
	PyObject *m;

	if (PyType_Ready(&pyrtr_scope_type) < 0 || PyType_Ready(&pyrtr_traced_type) < 0 ||
	    PyType_Ready(&pyrtr_track_type) < 0)
		return NULL;
	if (lifecycle == NULL && (lifecycle = PyThread_allocate_lock()) == NULL)
		return PyErr_NoMemory();
	if (pyrtr_profile_init() != 0)
		return NULL;
	m = PyModule_Create(&module_def);
	if (m == NULL)
		return NULL;
	if (PyModule_AddFunctions(m, pyrtr_event_methods) != 0 ||
	    PyModule_AddFunctions(m, pyrtr_profile_methods) != 0 ||
	    PyModule_AddObjectRef(m, "scope", (PyObject *)&pyrtr_scope_type) != 0 ||
	    PyModule_AddObjectRef(m, "traced", (PyObject *)&pyrtr_traced_type) != 0 ||
	    PyModule_AddObjectRef(m, "Track", (PyObject *)&pyrtr_track_type) != 0 ||
	    PyModule_AddIntConstant(m, "MEM_HOST", RTR_MEM_HOST) != 0 ||
	    PyModule_AddIntConstant(m, "MAX_ARGS", RTR_MAX_ARGS) != 0 ||
	    PyModule_AddIntConstant(m, "MAX_COPY", RTR_MAX_COPY) != 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
