/* SPDX-License-Identifier: MIT */
/*
 * Keyword arguments into the library's struct rtr_arg.
 *
 *	None		RTR_ARG_TYPE_STR with a NULL string: null in JSON, an annotation
 *			without a value in Perfetto's protobuf
 *	bool		RTR_ARG_TYPE_BOOL (tested before int: bool is an int)
 *	int		RTR_ARG_TYPE_I64, or RTR_ARG_TYPE_U64 from 2^63 to 2^64 - 1; an int
 *			outside both is recorded as its decimal digits in a string (a JSON
 *			number that large is not exact in the viewers' doubles anyway)
 *	float		RTR_ARG_TYPE_F64 (NaN and the infinities are null in JSON)
 *	str		RTR_ARG_TYPE_STR_COPY: the UTF-8 bytes copied into the ring when the
 *			event is recorded (at most RTR_MAX_COPY bytes)
 *
 * Anything else, lists and dicts among them, is a TypeError naming the type: the C
 * argument model has no arrays of mixed values nor objects yet. Keys are interned
 * like names (intern.c).
 */
#include "pyrtr.h"

#include <string.h>

void pyrtr_args_clear(struct pyrtr_args *a)
{
	for (unsigned i = 0; i < a->nrefs; i++)
		Py_DECREF(a->refs[i]);
	a->n = 0;
	a->nrefs = 0;
	a->str_bytes = 0;
}

uint32_t pyrtr_args_records(const struct pyrtr_args *a)
{
	/* a record, then per argument a key, a type and a value word, then the strings */
	return 2 + (uint32_t)((a->n * 24 + a->str_bytes) / sizeof(struct rtr__rec));
}

/* A str value: its UTF-8 bytes, which `s` (held in refs) keeps. */
static int put_str(struct pyrtr_args *out, struct rtr_arg *arg, PyObject *s, PyObject *key)
{
	Py_ssize_t len;
	const char *utf8 = PyUnicode_AsUTF8AndSize(s, &len);

	if (utf8 == NULL)
		return -1;
	if (memchr(utf8, '\0', (size_t)len) != NULL) {
		PyErr_Format(PyExc_ValueError, "ringtrace: argument %R has a NUL character", key);
		return -1;
	}
	Py_INCREF(s);
	out->refs[out->nrefs++] = s;
	arg->type = RTR_ARG_TYPE_STR_COPY;
	arg->v.str = utf8;
	out->str_bytes += (size_t)len < RTR_MAX_COPY ? (size_t)len : RTR_MAX_COPY;
	return 0;
}

/* An int value: int64, else uint64, else its digits. */
static int put_int(struct pyrtr_args *out, struct rtr_arg *arg, PyObject *v, PyObject *key)
{
	int overflow;
	long long i = PyLong_AsLongLongAndOverflow(v, &overflow);

	if (overflow == 0) {
		if (i == -1 && PyErr_Occurred())
			return -1;
		arg->type = RTR_ARG_TYPE_I64;
		arg->v.i64 = i;
		return 0;
	}
	if (overflow > 0) {
		unsigned long long u = PyLong_AsUnsignedLongLong(v);
		if (u != (unsigned long long)-1 || !PyErr_Occurred()) {
			arg->type = RTR_ARG_TYPE_U64;
			arg->v.u64 = u;
			return 0;
		}
		PyErr_Clear(); /* past 2^64: as digits */
	}
	PyObject *digits = PyObject_Str(v);
	if (digits == NULL)
		return -1;
	int err = put_str(out, arg, digits, key);
	Py_DECREF(digits); /* put_str holds its own reference */
	return err;
}

/* One argument, appended to out; the caller has checked there is room. */
static int put_arg(struct pyrtr_args *out, PyObject *key, PyObject *v)
{
	struct rtr_arg *arg = &out->a[out->n];

	arg->key = pyrtr_intern(key, "argument name");
	if (arg->key == NULL)
		return -1;
	if (v == Py_None) {
		arg->type = RTR_ARG_TYPE_STR;
		arg->v.str = NULL;
	} else if (PyBool_Check(v)) {
		arg->type = RTR_ARG_TYPE_BOOL;
		arg->v.b = v == Py_True;
	} else if (PyLong_Check(v)) {
		if (put_int(out, arg, v, key) != 0)
			return -1;
	} else if (PyFloat_Check(v)) {
		arg->type = RTR_ARG_TYPE_F64;
		arg->v.f64 = PyFloat_AS_DOUBLE(v);
	} else if (PyUnicode_Check(v)) {
		if (put_str(out, arg, v, key) != 0)
			return -1;
	} else {
		PyErr_Format(PyExc_TypeError,
			     "ringtrace: argument %R is a %.100s; arguments are None, bool, int, "
			     "float or str (lists and dicts are not supported yet)",
			     key, Py_TYPE(v)->tp_name);
		return -1;
	}
	out->n++;
	return 0;
}

int pyrtr_args_from_vector(struct pyrtr_args *out, PyObject *const *values, PyObject *kwnames)
{
	Py_ssize_t n = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;

	out->n = out->nrefs = 0;
	out->str_bytes = 0;
	for (Py_ssize_t i = 0; i < n && out->n <= RTR_MAX_ARGS; i++)
		if (put_arg(out, PyTuple_GET_ITEM(kwnames, i), values[i]) != 0)
			return -1;
	return 0;
}

int pyrtr_args_from_dict(struct pyrtr_args *out, PyObject *dict)
{
	Py_ssize_t pos = 0;
	PyObject *key, *v;

	out->n = out->nrefs = 0;
	out->str_bytes = 0;
	while (dict != NULL && out->n <= RTR_MAX_ARGS && PyDict_Next(dict, &pos, &key, &v))
		if (put_arg(out, key, v) != 0)
			return -1;
	return 0;
}
