/* SPDX-License-Identifier: MIT */
/*
 * ringtrace.Track(process, lane, /, *, label=None, process_sort_index=0,
 * lane_sort_index=0): a lane of a pseudo-process (a device and its streams, a queue,
 * a remote worker) over the library's tracks (rtr_track_create()).
 *
 * The library keeps every track in a fixed table until the process exits and never
 * frees one: a record holds the track by pointer and the writer reads it later. So
 * the Python object only holds that pointer; dropping the object frees nothing of
 * the track, and a Track made again with the same process and lane names is the
 * same track. The names are copied by the library (cut to 63 bytes: longer ones are
 * refused here, so that two names never meet in one cut copy).
 *
 * Events on a track take explicit times in the track's clock (int nanoseconds), and
 * follow the module's conventions (events.c): the category and name interned, the
 * arguments converted by args.c with the GIL held, the call made through
 * PYRTR_RECORD().
 */
#include "pyrtr.h"

#include <stddef.h>
#include <string.h>
#include <structmember.h>

/* The library keeps RTR_NAME_MAX - 1 bytes of a track's names (src/producer). */
#define TRACK_NAME_MAX 63

struct track {
	PyObject_HEAD struct rtr_track *t; /* the library's, never freed */
	PyObject *process, *lane, *label;  /* the names given (label: None when none) */
};

/* The UTF-8 bytes of a track's name, which the str `s` holds; NULL with an exception. */
static const char *track_name(PyObject *s, const char *what)
{
	Py_ssize_t len;

	if (!PyUnicode_Check(s)) {
		PyErr_Format(PyExc_TypeError, "ringtrace.Track: %s must be a str, not %.100s", what,
			     Py_TYPE(s)->tp_name);
		return NULL;
	}
	const char *utf8 = PyUnicode_AsUTF8AndSize(s, &len);
	if (utf8 == NULL)
		return NULL;
	if (memchr(utf8, '\0', (size_t)len) != NULL || len == 0 || len > TRACK_NAME_MAX) {
		PyErr_Format(PyExc_ValueError,
			     "ringtrace.Track: %s must be 1 to %d UTF-8 bytes without NUL, "
			     "not %R",
			     what, TRACK_NAME_MAX, s);
		return NULL;
	}
	return utf8;
}

static PyObject *track_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
	/* writable strings: PyArg_ParseTupleAndKeywords() takes char ** before 3.13 */
	static char positional[] = "", label_kw[] = "label", psort[] = "process_sort_index",
		    lsort[] = "lane_sort_index";
	static char *keywords[] = {positional, positional, label_kw, psort, lsort, NULL};
	PyObject *process, *lane, *label = Py_None;
	struct rtr_track_desc desc = RTR_TRACK_DESC_INIT(.label = NULL);
	struct rtr_track *t;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$Oii:Track", keywords, &process, &lane,
					 &label, &desc.process_sort_index, &desc.lane_sort_index))
		return NULL;
	if ((desc.process = track_name(process, "the process name")) == NULL ||
	    (desc.lane = track_name(lane, "the lane name")) == NULL ||
	    (label != Py_None && (desc.label = track_name(label, "the label")) == NULL))
		return NULL;
	/* takes the library's table lock; the names are the str objects' own bytes */
	Py_BEGIN_ALLOW_THREADS;
	t = rtr_track_create(&desc);
	Py_END_ALLOW_THREADS;
	if (t == NULL) {
		PyErr_Format(PyExc_RuntimeError,
			     "ringtrace.Track: the process already has %d tracks, the most "
			     "the library keeps",
			     RTR_MAX_TRACKS);
		return NULL;
	}
	struct track *self = (struct track *)type->tp_alloc(type, 0);
	if (self == NULL)
		return NULL;
	self->t = t;
	self->process = Py_NewRef(process);
	self->lane = Py_NewRef(lane);
	self->label = Py_NewRef(label);
	return (PyObject *)self;
}

static void track_dealloc(PyObject *o)
{
	struct track *self = (struct track *)o;

	Py_XDECREF(self->process);
	Py_XDECREF(self->lane);
	Py_XDECREF(self->label);
	Py_TYPE(o)->tp_free(o);
}

static PyObject *track_repr(PyObject *o)
{
	struct track *self = (struct track *)o;

	return PyUnicode_FromFormat("<ringtrace.Track %R/%R>", self->process, self->lane);
}

/* ------------------------------------------------------------------------- */
/* What the methods take                                                      */

/* argv[0], argv[1] interned as the category and name, argv[2] as the time. */
static int cat_name_ts(const char *fn, PyObject *const *argv, const char **cat, const char **name,
		       uint64_t *ts)
{
	if (pyrtr_u64(argv[2], fn, "ts", ts) != 0 ||
	    (*cat = pyrtr_intern(argv[0], "category")) == NULL)
		return -1;
	*name = pyrtr_intern(argv[1], "name");
	return *name != NULL ? 0 : -1;
}

/* ------------------------------------------------------------------------- */
/* Events                                                                     */

static PyObject *track_complete(PyObject *o, PyObject *const *argv, Py_ssize_t nargs,
				PyObject *kwnames)
{
	struct track *self = (struct track *)o;
	const char *cat, *name;
	uint64_t ts, dur;
	struct pyrtr_args args;

	if (pyrtr_check_args("Track.complete", nargs, 4, kwnames, 1, "cat, name, ts, dur") != 0 ||
	    pyrtr_u64(argv[3], "Track.complete", "dur", &dur) != 0 ||
	    cat_name_ts("Track.complete", argv, &cat, &name, &ts) != 0)
		return NULL;
	if (pyrtr_args_from_vector(&args, argv + 4, kwnames) != 0) {
		pyrtr_args_clear(&args);
		return NULL;
	}
	PYRTR_RECORD(pyrtr_args_records(&args) + 1,
		     rtr_track_complete(self->t, cat, name, ts, dur, args.a, args.n));
	pyrtr_args_clear(&args);
	Py_RETURN_NONE;
}

static PyObject *track_instant(PyObject *o, PyObject *const *argv, Py_ssize_t nargs,
			       PyObject *kwnames)
{
	struct track *self = (struct track *)o;
	const char *cat, *name;
	uint64_t ts;
	struct pyrtr_args args;

	if (pyrtr_check_args("Track.instant", nargs, 3, kwnames, 1, "cat, name, ts") != 0 ||
	    cat_name_ts("Track.instant", argv, &cat, &name, &ts) != 0)
		return NULL;
	if (pyrtr_args_from_vector(&args, argv + 3, kwnames) != 0) {
		pyrtr_args_clear(&args);
		return NULL;
	}
	PYRTR_RECORD(pyrtr_args_records(&args) + 1,
		     rtr_track_instant(self->t, cat, name, ts, args.a, args.n));
	pyrtr_args_clear(&args);
	Py_RETURN_NONE;
}

/* One counter series: an int within 64 bits as I64, else a float (as
 * ringtrace.counter() does). */
static int series(struct rtr_arg *a, const char *key, PyObject *v)
{
	a->key = key;
	if (PyLong_Check(v)) {
		int overflow;
		long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
		if (i == -1 && PyErr_Occurred())
			return -1;
		if (overflow == 0) {
			a->type = RTR_ARG_TYPE_I64;
			a->v.i64 = i;
			return 0;
		}
	} else if (!PyFloat_Check(v)) {
		PyErr_Format(PyExc_TypeError,
			     "Track.counter(): series %s must be an int or a float, not %.100s",
			     key, Py_TYPE(v)->tp_name);
		return -1;
	}
	a->type = RTR_ARG_TYPE_F64;
	a->v.f64 = PyFloat_AsDouble(v);
	return a->v.f64 == -1.0 && PyErr_Occurred() ? -1 : 0;
}

/* counter(cat, name, ts, value, /) or counter(cat, name, ts, /, **series): one sample,
 * series "value" or one series per keyword. */
static PyObject *track_counter(PyObject *o, PyObject *const *argv, Py_ssize_t nargs,
			       PyObject *kwnames)
{
	struct track *self = (struct track *)o;
	const char *cat, *name;
	uint64_t ts;
	struct rtr_arg a[RTR_MAX_ARGS];
	Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
	unsigned n = 0;

	if ((nargs == 4) == (nkw > 0) || nargs < 3 || nargs > 4) {
		PyErr_SetString(PyExc_TypeError,
				"Track.counter() takes (cat, name, ts, value) or (cat, name, ts, "
				"**series)");
		return NULL;
	}
	if (nkw > RTR_MAX_ARGS) {
		PyErr_Format(PyExc_ValueError, "Track.counter(): at most %d series", RTR_MAX_ARGS);
		return NULL;
	}
	if (cat_name_ts("Track.counter", argv, &cat, &name, &ts) != 0)
		return NULL;
	if (nargs == 4) {
		if (series(&a[n++], "value", argv[3]) != 0)
			return NULL;
	}
	for (Py_ssize_t i = 0; i < nkw; i++) {
		const char *key = pyrtr_intern(PyTuple_GET_ITEM(kwnames, i), "series");
		if (key == NULL || series(&a[n++], key, argv[nargs + i]) != 0)
			return NULL;
	}
	PYRTR_RECORD(2 + n, rtr_track_counter(self->t, cat, name, ts, a, n));
	Py_RETURN_NONE;
}

/* flow_start and flow_end: (cat, name, ts, id). */
static PyObject *
track_flow(const char *fn, struct track *self, PyObject *const *argv, Py_ssize_t nargs,
	   void (*call)(struct rtr_track *, const char *, const char *, uint64_t, uint64_t))
{
	const char *cat, *name;
	uint64_t ts, id;

	if (pyrtr_check_args(fn, nargs, 4, NULL, 0, "cat, name, ts, id") != 0 ||
	    pyrtr_id(argv[3], &id) != 0 || cat_name_ts(fn, argv, &cat, &name, &ts) != 0)
		return NULL;
	PYRTR_RECORD(3, call(self->t, cat, name, ts, id));
	Py_RETURN_NONE;
}

static PyObject *track_flow_start(PyObject *o, PyObject *const *argv, Py_ssize_t nargs)
{
	return track_flow("Track.flow_start", (struct track *)o, argv, nargs, rtr_track_flow_start);
}

static PyObject *track_flow_end(PyObject *o, PyObject *const *argv, Py_ssize_t nargs)
{
	return track_flow("Track.flow_end", (struct track *)o, argv, nargs, rtr_track_flow_end);
}

/* ------------------------------------------------------------------------- */
/* The track's clock                                                          */

static PyObject *track_clock_pair(PyObject *o, PyObject *const *argv, Py_ssize_t nargs)
{
	struct track *self = (struct track *)o;
	uint64_t track_ts, host_ns;

	if (pyrtr_check_args("Track.clock_pair", nargs, 2, NULL, 0, "track_ts, host_ns") != 0 ||
	    pyrtr_u64(argv[0], "Track.clock_pair", "track_ts", &track_ts) != 0 ||
	    pyrtr_u64(argv[1], "Track.clock_pair", "host_ns", &host_ns) != 0)
		return NULL;
	rtr_track_clock_pair(self->t, track_ts, host_ns);
	Py_RETURN_NONE;
}

static PyObject *track_clock_offset(PyObject *o, PyObject *arg)
{
	struct track *self = (struct track *)o;

	if (!PyLong_Check(arg) || PyBool_Check(arg)) {
		PyErr_Format(PyExc_TypeError,
			     "Track.clock_offset(): offset_ns must be an int, not %.100s",
			     Py_TYPE(arg)->tp_name);
		return NULL;
	}
	int overflow;
	long long off = PyLong_AsLongLongAndOverflow(arg, &overflow);
	if (off == -1 && PyErr_Occurred())
		return NULL;
	if (overflow != 0) {
		PyErr_SetString(
			PyExc_ValueError,
			"Track.clock_offset(): offset_ns is an int from -2**63 to 2**63 - 1");
		return NULL;
	}
	rtr_track_clock_offset(self->t, off);
	Py_RETURN_NONE;
}

#define FAST(f)	   (PyCFunction)(void (*)(void))(f), METH_FASTCALL
#define FAST_KW(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

static PyMethodDef track_methods[] = {
	{"complete", FAST_KW(track_complete),
	 "complete(cat, name, ts, dur, /, **args)\n--\n\n"
	 "A complete event (\"X\") on the track from ts for dur nanoseconds (the track's\n"
	 "clock), with `args` as its arguments. One that partly overlaps an earlier one\n"
	 "goes to an overflow lane of the track (\"stream 7 (2)\")."},
	{"instant", FAST_KW(track_instant),
	 "instant(cat, name, ts, /, **args)\n--\n\nAn instant (\"i\") on the track at ts."},
	{"counter", FAST_KW(track_counter),
	 "counter(cat, name, ts, value, /) or counter(cat, name, ts, /, **series)\n--\n\n"
	 "A counter sample (\"C\") at ts: series \"value\", or one series per keyword\n"
	 "(int or float values)."},
	{"flow_start", FAST(track_flow_start),
	 "flow_start(cat, name, ts, id, /)\n--\n\n"
	 "Start a flow arrow (\"s\") at the track's slice around ts."},
	{"flow_end", FAST(track_flow_end),
	 "flow_end(cat, name, ts, id, /)\n--\n\n"
	 "End a flow arrow (\"f\") at the track's slice that starts at ts."},
	{"clock_pair", FAST(track_clock_pair),
	 "clock_pair(track_ts, host_ns, /)\n--\n\n"
	 "The track's clock: track_ts read at about the moment of now_ns()'s host_ns;\n"
	 "times are then mapped as host = ts - track_ts + host_ns."},
	{"clock_offset", track_clock_offset, METH_O,
	 "clock_offset(offset_ns, /)\n--\n\n"
	 "The track's clock: host = ts + offset_ns. Without a pair or an offset, times\n"
	 "on the track are now_ns() values."},
	{NULL, NULL, 0, NULL},
};

static PyMemberDef track_members[] = {
	{"process", T_OBJECT, offsetof(struct track, process), READONLY,
	 "The pseudo-process's name."},
	{"lane", T_OBJECT, offsetof(struct track, lane), READONLY, "The lane's name."},
	{"label", T_OBJECT, offsetof(struct track, label), READONLY,
	 "The process label given when this object was made, or None."},
	{NULL, 0, 0, 0, NULL},
};

PyDoc_STRVAR(track_doc,
	     "Track(process, lane, /, *, label=None, process_sort_index=0, "
	     "lane_sort_index=0)\n--\n\n"
	     "A lane of a pseudo-process in the trace (\"GPU 0\" / \"stream 7\"), not a\n"
	     "thread of this process: events on it carry explicit times in the track's own\n"
	     "clock (int nanoseconds; clock_pair() or clock_offset() map them onto the\n"
	     "trace, else they are now_ns() values) and may be recorded from any thread.\n"
	     "Tracks with the same process name share that process; the same process and\n"
	     "lane names give the same track. `label` is shown with the process name; the\n"
	     "sort indexes order processes and lanes (0: the viewer's order, creation\n"
	     "order). Names are 1 to 63 UTF-8 bytes. A track lives until the process exits\n"
	     "(RuntimeError past the library's 1024).");

PyTypeObject pyrtr_track_type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ringtrace.Track",
	.tp_basicsize = sizeof(struct track),
	.tp_dealloc = track_dealloc,
	.tp_repr = track_repr,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = track_doc,
	.tp_methods = track_methods,
	.tp_members = track_members,
	.tp_new = track_new,
};
