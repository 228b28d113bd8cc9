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
 *	list, tuple	RTR_ARG_TYPE_VALUE (<ringtrace/value.h>): a JSON array, a JSON
 *	dict		object (keys str, or int as their digits, as json.dumps() does),
 *			of any of these, nested up to RTR_VALUE_MAX_DEPTH; at most
 *			RTR_MAX_COPY bytes of encoding, cut there like a long string
 *
 * Anything else is a TypeError naming the type. Keys are interned like names
 * (intern.c). Converting runs no Python code (an int's digits come from int's own
 * repr), so a list cannot change while it is read.
 */
#include "pyrtr.h"

#include <string.h>

static void args_reset(struct pyrtr_args *a)
{
	a->n = a->nrefs = a->nblocks = 0;
	a->str_bytes = a->values_len = 0;
}

void pyrtr_args_clear(struct pyrtr_args *a)
{
	for (unsigned i = 0; i < a->nrefs; i++)
		Py_DECREF(a->refs[i]);
	for (unsigned i = 0; i < a->nblocks; i++)
		PyMem_Free(a->blocks[i]);
	args_reset(a);
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

enum { INT_I64, INT_U64, INT_DIGITS };

/* Which 64-bit type holds the int v, its value in *i or *u; INT_DIGITS past both,
 * -1 with an exception. */
static int int_fit(PyObject *v, long long *i, unsigned long long *u)
{
	int overflow;

	*i = PyLong_AsLongLongAndOverflow(v, &overflow);
	if (overflow == 0)
		return *i == -1 && PyErr_Occurred() ? -1 : INT_I64;
	if (overflow > 0) {
		*u = PyLong_AsUnsignedLongLong(v);
		if (*u != (unsigned long long)-1 || !PyErr_Occurred())
			return INT_U64;
		PyErr_Clear(); /* past 2^64: as digits */
	}
	return INT_DIGITS;
}

/* An int's decimal digits, from int's own repr: no Python code runs, not even a
 * subclass's __str__. */
static PyObject *int_digits(PyObject *v)
{
	return PyLong_Type.tp_repr(v);
}

/* An int value: int64, else uint64, else its digits. */
static int put_int(struct pyrtr_args *out, struct rtr_arg *arg, PyObject *v, PyObject *key)
{
	long long i;
	unsigned long long u;

	switch (int_fit(v, &i, &u)) {
	case INT_I64:
		arg->type = RTR_ARG_TYPE_I64;
		arg->v.i64 = i;
		return 0;
	case INT_U64:
		arg->type = RTR_ARG_TYPE_U64;
		arg->v.u64 = u;
		return 0;
	case INT_DIGITS:
		break;
	default:
		return -1;
	}
	PyObject *digits = int_digits(v);
	if (digits == NULL)
		return -1;
	int err = put_str(out, arg, digits, key);
	Py_DECREF(digits); /* put_str holds its own reference */
	return err;
}

/* ------------------------------------------------------------------------- */
/* Lists, tuples and dicts: RTR_ARG_TYPE_VALUE                                 */

static int put_item(struct rtr_value *val, PyObject *v, PyObject *key, unsigned depth);

static int put_value_str(struct rtr_value *val, PyObject *s, bool is_key)
{
	Py_ssize_t len;
	const char *utf8 = PyUnicode_AsUTF8AndSize(s, &len);

	if (utf8 == NULL)
		return -1;
	if (is_key)
		rtr_value_key(val, utf8, (size_t)len);
	else
		rtr_value_str(val, utf8, (size_t)len);
	return 0;
}

/* An int's digits, as a string or a key. */
static int put_value_digits(struct rtr_value *val, PyObject *v, bool is_key)
{
	PyObject *digits = int_digits(v);

	if (digits == NULL)
		return -1;
	int err = put_value_str(val, digits, is_key);
	Py_DECREF(digits);
	return err;
}

static int put_value_int(struct rtr_value *val, PyObject *v)
{
	long long i;
	unsigned long long u;

	switch (int_fit(v, &i, &u)) {
	case INT_I64:
		rtr_value_i64(val, i);
		return 0;
	case INT_U64:
		rtr_value_u64(val, u);
		return 0;
	case INT_DIGITS:
		return put_value_digits(val, v, false);
	default:
		return -1;
	}
}

static int put_container(struct rtr_value *val, PyObject *v, PyObject *key, unsigned depth)
{
	if (depth >= RTR_VALUE_MAX_DEPTH) {
		PyErr_Format(PyExc_ValueError,
			     "ringtrace: argument %R nests lists and dicts deeper than %d "
			     "(or holds itself)",
			     key, RTR_VALUE_MAX_DEPTH);
		return -1;
	}
	if (PyDict_Check(v)) {
		Py_ssize_t pos = 0;
		PyObject *k, *item;
		rtr_value_object(val, (uint32_t)PyDict_GET_SIZE(v));
		while (PyDict_Next(v, &pos, &k, &item)) {
			int err = -1;
			if (PyUnicode_Check(k))
				err = put_value_str(val, k, true);
			else if (PyLong_Check(k) && !PyBool_Check(k))
				err = put_value_digits(val, k, true);
			else
				PyErr_Format(
					PyExc_TypeError,
					"ringtrace: argument %R has a dict key that is a %.100s; "
					"keys are str or int",
					key, Py_TYPE(k)->tp_name);
			if (err != 0 || put_item(val, item, key, depth + 1) != 0)
				return -1;
		}
		return 0;
	}
	Py_ssize_t n = PySequence_Fast_GET_SIZE(v); /* a list or a tuple */
	PyObject **items = PySequence_Fast_ITEMS(v);
	rtr_value_array(val, (uint32_t)n);
	for (Py_ssize_t i = 0; i < n; i++)
		if (put_item(val, items[i], key, depth + 1) != 0)
			return -1;
	return 0;
}

/* One item of a value, `depth` lists and dicts inside the argument. */
static int put_item(struct rtr_value *val, PyObject *v, PyObject *key, unsigned depth)
{
	if (v == Py_None)
		rtr_value_null(val);
	else if (PyBool_Check(v))
		rtr_value_bool(val, v == Py_True);
	else if (PyLong_Check(v))
		return put_value_int(val, v);
	else if (PyFloat_Check(v))
		rtr_value_f64(val, PyFloat_AS_DOUBLE(v));
	else if (PyUnicode_Check(v))
		return put_value_str(val, v, false);
	else if (PyList_Check(v) || PyTuple_Check(v) || PyDict_Check(v))
		return put_container(val, v, key, depth);
	else {
		PyErr_Format(PyExc_TypeError,
			     "ringtrace: argument %R holds a %.100s; values are None, bool, int, "
			     "float, str, list, tuple or dict",
			     key, Py_TYPE(v)->tp_name);
		return -1;
	}
	return 0;
}

/* A list, tuple or dict: built where the arguments' inline bytes have room, else
 * again into a block of its own of RTR_MAX_COPY bytes (where it may be cut). */
static int put_value(struct pyrtr_args *out, struct rtr_arg *arg, PyObject *v, PyObject *key)
{
	struct rtr_value val;
	unsigned char *at = out->values + out->values_len;

	rtr_value_init(&val, at, sizeof(out->values) - out->values_len);
	if (put_container(&val, v, key, 0) != 0)
		return -1;
	if (val.cut) {
		at = PyMem_Malloc(RTR_MAX_COPY);
		if (at == NULL) {
			PyErr_NoMemory();
			return -1;
		}
		out->blocks[out->nblocks++] = at;
		rtr_value_init(&val, at, RTR_MAX_COPY);
		if (put_container(&val, v, key, 0) != 0)
			return -1;
	} else {
		out->values_len += val.len;
	}
	arg->type = RTR_ARG_TYPE_VALUE;
	arg->v.value.bytes = at;
	arg->v.value.len = val.len;
	out->str_bytes += val.len;
	return 0;
}

/* ------------------------------------------------------------------------- */
/* Arguments                                                                  */

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
	} else if (PyList_Check(v) || PyTuple_Check(v) || PyDict_Check(v)) {
		if (put_value(out, arg, v, key) != 0)
			return -1;
	} else {
		PyErr_Format(PyExc_TypeError,
			     "ringtrace: argument %R is a %.100s; arguments are None, bool, int, "
			     "float, str, list, tuple or dict",
			     key, Py_TYPE(v)->tp_name);
		return -1;
	}
	out->n++;
	return 0;
}

int pyrtr_args_from_vector(struct pyrtr_args *out, PyObject *const *values, PyObject *kwnames)
{
	Py_ssize_t n = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;

	args_reset(out);
	for (Py_ssize_t i = 0; i < n && out->n <= RTR_MAX_ARGS; i++)
		if (put_arg(out, PyTuple_GET_ITEM(kwnames, i), values[i]) != 0)
			return -1;
	return 0;
}

int pyrtr_args_from_dict(struct pyrtr_args *out, PyObject *dict)
{
	Py_ssize_t pos = 0;
	PyObject *key, *v;

	args_reset(out);
	while (dict != NULL && out->n <= RTR_MAX_ARGS && PyDict_Next(dict, &pos, &key, &v))
		if (put_arg(out, key, v) != 0)
			return -1;
	return 0;
}
