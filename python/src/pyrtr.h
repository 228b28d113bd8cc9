/* SPDX-License-Identifier: MIT */
/*
 * The ringtrace extension module (`ringtrace._ringtrace`): what its files share.
 *
 *	module.c	the module, the lifecycle (start, stop, flush, snapshot), stats
 *	config.c	start()'s keywords into a struct rtr_config, checked
 *	intern.c	names from Python strings: interned copies that never move or die
 *	args.c		keyword arguments into struct rtr_arg
 *	scope.c		ringtrace.scope, the `with` statement's slice
 *	events.c	instants, counters, flows, async spans, thread names, memory
 *	track.c		ringtrace.Track, a lane of a pseudo-process (the library's tracks)
 *	traced.c	the callable that @ringtrace.trace puts around a function
 *	profile.c	function tracing: the interpreter's C profiling hook
 *
 * Everything runs with the GIL held, which serializes the module's own tables (the
 * intern tables and their caches). The recording calls are the library's: they never
 * lock or allocate, so they run under the GIL too, except when one may wait (a
 * thread's first event registers its ring; a full ring in block mode waits for the
 * writer): then the GIL is let go around the call (pyrtr_may_wait()).
 */
#ifndef PYRTR_H
#define PYRTR_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <ringtrace.h>
#include <ringtrace/value.h>

/* ------------------------------------------------------------------------- */
/* intern.c                                                                   */

/* A call site made from two Python strings: its category and name interned, and the
 * category filter's cached decision for it (see rtr__scope_begin()). Never freed: the
 * writer reads it by pointer, asynchronously, for as long as the process lives. */
struct pyrtr_site {
	struct rtr_site site;
	int decision;
};

/* The interned UTF-8 copy of the str `s`: the same pointer for equal strings, valid
 * until the process ends. NULL with an exception set: `what` (e.g. "name") is not a
 * str (TypeError), holds a NUL character (ValueError) or cannot be UTF-8 (lone
 * surrogates: UnicodeEncodeError). */
const char *pyrtr_intern(PyObject *s, const char *what);
/* The site of (cat, name), made once per pair of contents. NULL with an exception. */
struct pyrtr_site *pyrtr_site(PyObject *cat, PyObject *name);
/* Interned strings and sites, and their bytes, for tests and the docs. */
void pyrtr_intern_counts(size_t *strings, size_t *sites, size_t *bytes);

/* ------------------------------------------------------------------------- */
/* args.c                                                                     */

/*
 * Keyword arguments converted for the library: keys interned, values as rtr_arg. A
 * str value is recorded as a copy (RTR_ARG_TYPE_STR_COPY) of its UTF-8 bytes, which
 * the str object holds: `refs` keeps those objects (and the digits of an int too
 * large for 64 bits) alive as long as the pyrtr_args. A list, tuple or dict becomes
 * a RTR_ARG_TYPE_VALUE built into `values`, or into a block of its own (`blocks`)
 * when it does not fit there.
 */
#define PYRTR_VALUES_INLINE 512
struct pyrtr_args {
	unsigned n;	  /* arguments in a[] */
	unsigned nrefs;	  /* objects in refs[] */
	unsigned nblocks; /* PyMem blocks in blocks[] */
	size_t str_bytes; /* bytes of the copied strings and values, to size the record */
	size_t values_len;
	struct rtr_arg a[RTR_MAX_ARGS + 1];
	PyObject *refs[RTR_MAX_ARGS + 1];
	unsigned char *blocks[RTR_MAX_ARGS + 1];
	unsigned char values[PYRTR_VALUES_INLINE];
};

/*
 * Convert the keyword arguments of a vectorcall (values at `values`, names in the
 * tuple `kwnames`) into *out. Past RTR_MAX_ARGS the first RTR_MAX_ARGS + 1 are kept,
 * so the library counts the event in events_args_cut. Returns 0, or -1 with an
 * exception set (TypeError for a value that is not None, bool, int, float, str, list,
 * tuple or dict, or a dict key that is not a str or int; ValueError for lists and
 * dicts nested deeper than RTR_VALUE_MAX_DEPTH, or holding themselves).
 * pyrtr_args_clear() releases *out either way.
 */
int pyrtr_args_from_vector(struct pyrtr_args *out, PyObject *const *values, PyObject *kwnames);
/* Likewise from a dict (NULL: none). */
int pyrtr_args_from_dict(struct pyrtr_args *out, PyObject *dict);
void pyrtr_args_clear(struct pyrtr_args *a);
/* Records an event with these arguments takes, at most, for pyrtr_may_wait(). */
uint32_t pyrtr_args_records(const struct pyrtr_args *a);

/* ------------------------------------------------------------------------- */
/* Recording without holding the GIL through a wait                           */

/*
 * Whether recording `records` records on this thread may wait: the thread has no ring
 * yet (its registration takes a lock and maps memory), or the ring's cached view
 * says the event does not fit (the library's slow path, which in block mode waits
 * for the writer). Own fields of the thread's ring, read by their owner.
 */
static inline bool pyrtr_may_wait(uint32_t records)
{
	struct rtr__ring *r = rtr__tls_ring;

	return r == NULL || r->head + records - r->cached_tail > r->limit;
}

/* Run `call` (a recording statement) with the GIL let go when it may wait. The
 * strings it reads are interned or held by the caller's references. */
#define PYRTR_RECORD(records, call)             \
	do {                                    \
		if (pyrtr_may_wait(records)) {  \
			Py_BEGIN_ALLOW_THREADS; \
			call;                   \
			Py_END_ALLOW_THREADS;   \
		} else {                        \
			call;                   \
		}                               \
	} while (0)

/* ------------------------------------------------------------------------- */
/* The module's parts                                                         */

/* config.c: rtr_config_init(), then start()'s path (NULL or None: not given) and
 * keywords (a dict or NULL) into *cfg. Returns 0, or -1 with TypeError (unknown name,
 * wrong type) or ValueError (bad value). The strings in *cfg point into the caller's
 * objects or into objects appended to the list `keep`. */
int pyrtr_config_parse(struct rtr_config *cfg, PyObject *path, PyObject *kwargs, PyObject *keep);

extern PyTypeObject pyrtr_scope_type;
extern PyTypeObject pyrtr_traced_type;
extern PyTypeObject pyrtr_track_type;
/* events.c: the module's event functions. */
extern PyMethodDef pyrtr_event_methods[];
/* nargs positional arguments exactly (`names` says which), keywords only where
 * `kw_ok`; -1 with a TypeError naming `fn` ("ringtrace.instant", "Track.complete"). */
int pyrtr_check_args(const char *fn, Py_ssize_t nargs, Py_ssize_t want, PyObject *kwnames,
		     int kw_ok, const char *names);
/* An id for flows and async spans from a Python int (0 .. 2^64-1); -1 with an
 * exception. */
int pyrtr_id(PyObject *o, uint64_t *id);
/* A time, an address or a size from a Python int (0 .. 2^64-1); -1 with an exception
 * whose message names `fn` ("ringtrace.complete") and `what` ("start_ns"). */
int pyrtr_u64(PyObject *o, const char *fn, const char *what, uint64_t *out);
/* profile.c: the function tracing calls, and their one-time setup (-1 with an
 * exception). */
extern PyMethodDef pyrtr_profile_methods[];
int pyrtr_profile_init(void);

#endif /* PYRTR_H */
