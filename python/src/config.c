/* SPDX-License-Identifier: MIT */
/*
 * start()'s keywords into a struct rtr_config.
 *
 * One keyword per field of struct rtr_config, named as the field; enumerations take
 * the words their RINGTRACE_* variables take (on_full="block", io="sync"); None
 * leaves a field as rtr_config_init() set it (its default, or the environment). The
 * ranges are the library's (src/session/config.c, docs/configuration.md): a value
 * outside one is a ValueError here, naming the keyword, rather than an -EINVAL from
 * rtr_start() that names nothing. The lists the library parses itself (categories,
 * signals, snapshot_signal) are checked by rtr_start(); start() turns its -EINVAL into
 * a ValueError that names them.
 */
#include "pyrtr.h"

#include <stddef.h>
#include <string.h>

enum kind { K_STR, K_PATH, K_UINT, K_SIZE, K_CHOICE, K_BOOL };

struct choice {
	const char *word;
	int value;
};

struct opt {
	const char *name;
	enum kind kind;
	size_t offset;
	unsigned long long lo, hi;
	const struct choice *choices;
	const char *expected;
};

static const struct choice on_full_words[] = {
	{"drop", RTR_ON_FULL_DROP}, {"block", RTR_ON_FULL_BLOCK}, {NULL, 0}};
static const struct choice io_words[] = {{"auto", RTR_IO_AUTO},
					 {"uring", RTR_IO_URING},
					 {"io_uring", RTR_IO_URING},
					 {"sync", RTR_IO_SYNC},
					 {NULL, 0}};
static const struct choice clock_words[] = {{"auto", RTR_CLOCK_AUTO},
					    {"monotonic", RTR_CLOCK_MONOTONIC},
					    {"tsc", RTR_CLOCK_TSC},
					    {NULL, 0}};
static const struct choice compress_words[] = {{"auto", RTR_COMPRESS_AUTO},
					       {"none", RTR_COMPRESS_NONE},
					       {"gzip", RTR_COMPRESS_GZIP},
					       {"gzip-members", RTR_COMPRESS_GZIP_MEMBERS},
					       {NULL, 0}};
static const struct choice mode_words[] = {
	{"stream", RTR_MODE_STREAM}, {"flight", RTR_MODE_FLIGHT}, {NULL, 0}};
static const struct choice format_words[] = {{"auto", RTR_FORMAT_AUTO},
					     {"json", RTR_FORMAT_JSON},
					     {"perfetto", RTR_FORMAT_PERFETTO},
					     {"pftrace", RTR_FORMAT_PERFETTO},
					     {NULL, 0}};

#define AT(f) offsetof(struct rtr_config, f)

static const struct opt opts[] = {
	{"path", K_PATH, AT(path), 0, 0, NULL, "a path pattern (str or os.PathLike)"},
	{"ring_bytes", K_SIZE, AT(ring_bytes), 4096, 1ull << 30, NULL, "4096 .. 2**30"},
	{"on_full", K_CHOICE, AT(on_full), 0, 0, on_full_words, "'drop' or 'block'"},
	{"flush_ms", K_UINT, AT(flush_ms), 1, 60000, NULL, "1 .. 60000"},
	{"io", K_CHOICE, AT(io), 0, 0, io_words, "'auto', 'uring' or 'sync'"},
	{"process_name", K_STR, AT(process_name), 0, 0, NULL, "a str"},
	{"clock", K_CHOICE, AT(clock), 0, 0, clock_words, "'auto', 'monotonic' or 'tsc'"},
	{"compress", K_CHOICE, AT(compress), 0, 0, compress_words,
	 "'auto', 'none', 'gzip' or 'gzip-members'"},
	{"categories", K_STR, AT(categories), 0, 0, NULL, "a str such as 'app,mpi'"},
	{"cache_mb", K_UINT, AT(cache_mb), 0, 1u << 20, NULL, "0 .. 1048576"},
	{"stop_timeout_ms", K_UINT, AT(stop_timeout_ms), 0, 3600000, NULL, "0 .. 3600000"},
	{"max_mb", K_UINT, AT(max_mb), 0, 1u << 20, NULL, "0 .. 1048576"},
	{"max_seconds", K_UINT, AT(max_seconds), 0, 31536000, NULL, "0 .. 31536000"},
	{"keep", K_UINT, AT(keep), 0, 1000000, NULL, "0 .. 1000000"},
	{"mode", K_CHOICE, AT(mode), 0, 0, mode_words, "'stream' or 'flight'"},
	{"flight_mb", K_UINT, AT(flight_mb), 1, 65536, NULL, "1 .. 65536"},
	{"flight_at_exit", K_BOOL, AT(flight_at_exit), 0, 1, NULL, "a bool"},
	{"signals", K_STR, AT(signals), 0, 0, NULL, "a str such as 'TERM,INT'"},
	{"snapshot_signal", K_STR, AT(snapshot_signal), 0, 0, NULL, "a str such as 'USR2'"},
	{"format", K_CHOICE, AT(format), 0, 0, format_words, "'auto', 'json' or 'perfetto'"},
	{"open_timeout_ms", K_UINT, AT(open_timeout_ms), 0, 3600000, NULL, "0 .. 3600000"},
	{"pf_compress", K_BOOL, AT(pf_compress), 0, 1, NULL, "a bool"},
	{"profile", K_BOOL, AT(profile), 0, 1, NULL, "a bool"},
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static int bad_type(const struct opt *o, PyObject *v)
{
	PyErr_Format(PyExc_TypeError, "ringtrace: %s must be %s, not %.100s", o->name, o->expected,
		     Py_TYPE(v)->tp_name);
	return -1;
}

static int bad_value(const struct opt *o, PyObject *v)
{
	PyErr_Format(PyExc_ValueError, "ringtrace: %s=%R is not %s", o->name, v, o->expected);
	return -1;
}

/* A str field: its UTF-8 bytes, held by v (and the caller's reference to it). */
static int set_str(struct rtr_config *cfg, const struct opt *o, PyObject *v, PyObject *keep)
{
	const char *s;

	if (o->kind == K_PATH) {
		PyObject *fs = PyOS_FSPath(v); /* str or bytes */
		if (fs == NULL)
			return bad_type(o, v);
		PyObject *b = PyUnicode_Check(fs) ? PyUnicode_EncodeFSDefault(fs) : fs;
		if (b != fs)
			Py_DECREF(fs);
		if (b == NULL || PyList_Append(keep, b) != 0) {
			Py_XDECREF(b);
			return -1;
		}
		Py_DECREF(b); /* keep holds it */
		s = PyBytes_AS_STRING(b);
		if (strlen(s) != (size_t)PyBytes_GET_SIZE(b))
			return bad_value(o, v);
	} else {
		Py_ssize_t len;
		if (!PyUnicode_Check(v))
			return bad_type(o, v);
		s = PyUnicode_AsUTF8AndSize(v, &len);
		if (s == NULL)
			return -1;
		if (strlen(s) != (size_t)len)
			return bad_value(o, v);
	}
	memcpy((char *)cfg + o->offset, &s, sizeof(s));
	return 0;
}

static int set_number(struct rtr_config *cfg, const struct opt *o, PyObject *v)
{
	unsigned long long n;

	if (o->kind == K_CHOICE) {
		const char *w = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
		if (w == NULL)
			return PyErr_Occurred() ? -1 : bad_type(o, v);
		for (const struct choice *c = o->choices; c->word != NULL; c++) {
			if (strcmp(c->word, w) == 0) {
				memcpy((char *)cfg + o->offset, &c->value, sizeof(int));
				return 0;
			}
		}
		return bad_value(o, v);
	}
	if (!PyLong_Check(v) || (o->kind != K_BOOL && PyBool_Check(v)))
		return bad_type(o, v);
	n = PyLong_AsUnsignedLongLong(v);
	if (n == (unsigned long long)-1 && PyErr_Occurred()) {
		PyErr_Clear();
		return bad_value(o, v);
	}
	if (n < o->lo || n > o->hi)
		return bad_value(o, v);
	if (o->kind == K_SIZE) {
		size_t z = (size_t)n;
		memcpy((char *)cfg + o->offset, &z, sizeof(z));
	} else {
		unsigned u = (unsigned)n;
		memcpy((char *)cfg + o->offset, &u, sizeof(u));
	}
	return 0;
}

static int set_one(struct rtr_config *cfg, PyObject *key, PyObject *v, PyObject *keep)
{
	const char *k = PyUnicode_AsUTF8(key);

	if (k == NULL)
		return -1;
	for (size_t i = 0; i < NOPTS; i++) {
		const struct opt *o = &opts[i];
		if (strcmp(o->name, k) != 0)
			continue;
		if (v == Py_None)
			return 0; /* as rtr_config_init() set it */
		return o->kind == K_STR || o->kind == K_PATH ? set_str(cfg, o, v, keep)
							     : set_number(cfg, o, v);
	}
	PyErr_Format(PyExc_TypeError,
		     "ringtrace: %R is not an option (the options are the fields of struct "
		     "rtr_config, see docs/configuration.md)",
		     key);
	return -1;
}

int pyrtr_config_parse(struct rtr_config *cfg, PyObject *path, PyObject *kwargs, PyObject *keep)
{
	Py_ssize_t pos = 0;
	PyObject *key, *v;

	rtr_config_init(cfg);
	if (path != NULL && path != Py_None && set_str(cfg, &opts[0], path, keep) != 0)
		return -1;
	while (kwargs != NULL && PyDict_Next(kwargs, &pos, &key, &v)) {
		if (path != NULL && path != Py_None && PyUnicode_Check(key) &&
		    PyUnicode_CompareWithASCIIString(key, "path") == 0) {
			PyErr_SetString(PyExc_TypeError, "ringtrace: path given twice");
			return -1;
		}
		if (set_one(cfg, key, v, keep) != 0)
			return -1;
	}
	return 0;
}
