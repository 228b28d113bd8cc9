/* SPDX-License-Identifier: MIT */
/*
 * libringtrace-instrument: __cyg_profile_func_enter/exit for code built with
 * -finstrument-functions. Each call is one slice (an X line) named after its function.
 *
 * The hot path. Enter pushes the call's start on a per-thread stack (a clock read, or
 * 0 when the call is not to be recorded); exit pops it and, when the call is to be
 * recorded and lasted at least RINGTRACE_INSTRUMENT_MIN_NS, writes one 32-byte record:
 * an RTR__K_SCOPE with RTR__F_CODE_ADDR, whose `a` is the function's address and `b`
 * the duration in ticks. So a call shorter than the threshold costs no ring space, and
 * no name is looked up on the producer: the writer names the address once (through
 * the symbolizer registered below, from the ELF symbol tables: static functions too)
 * and caches the escaped name.
 *
 * Filters. RINGTRACE_INSTRUMENT_DEPTH: calls nested deeper than this many
 * instrumented calls are not recorded. RINGTRACE_INSTRUMENT_EXCLUDE and _INCLUDE:
 * comma-separated name prefixes; a function is recorded unless its name starts with
 * an excluded prefix, and, when there is an include list, only if it starts with an
 * included one. A name is known once its address is found in the symbol table, which
 * is built when this library loads (when a name filter is set) and rebuilt by the
 * writer when objects are loaded later; each address is decided once and the decision
 * kept in a direct-mapped table shared by every thread. A function the table does not
 * know (code loaded after the start, with a filter) counts as matching no prefix.
 *
 * Signals. The stack is pushed and popped so that a signal handler's calls nest
 * inside whole: the depth is moved before the slot is written on enter, and after it
 * is read on exit, with signal fences. The record goes through the library's event
 * path, which drops (and counts) a handler's event that lands inside another on the
 * same thread. Before rtr_start() and after rtr_stop() the hooks keep the stack
 * balanced and record nothing: a call that began before the start is not recorded.
 *
 * RINGTRACE_INSTRUMENT_LINES=1 (with libdw): each slice's args carry "src", the
 * function's "file:line" from DWARF, resolved by the writer once per function.
 *
 * No function here is instrumented (no_instrument_function, and the library is built
 * with -fno-instrument-functions, as is libringtrace).
 */
#include <ringtrace.h>

#include "instrument/symtab.h"
#if defined(RTR_HAVE_LIBDW)
#include "instrument/srcline.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINSTR __attribute__((no_instrument_function))
#define EXPORT	__attribute__((visibility("default")))

#define STACK_MAX    256 /* calls tracked per thread; deeper ones are not recorded */
#define MAX_PREFIXES 32
#define PREFIX_BYTES 64
#define DECIDE_BITS  12
#define DECIDE_SLOTS (1u << DECIDE_BITS)

static const char category[] = "function";

/* Set by the constructor, read-only afterwards. */
static uint64_t min_ns;			/* RINGTRACE_INSTRUMENT_MIN_NS */
static uint32_t max_depth = UINT32_MAX; /* RINGTRACE_INSTRUMENT_DEPTH; unset: no limit */
static int name_filter;			/* an include or exclude list is set */
static unsigned nexclude, ninclude;
static char exclude[MAX_PREFIXES][PREFIX_BYTES];
static char include[MAX_PREFIXES][PREFIX_BYTES];

/* MIN_NS in ticks, per clock kind (TSC or not); 0 until computed. Relaxed: any thread
 * computes the same value. */
static uint64_t min_ticks[2];

/* Decisions by address: (addr << 2) | 2 | keep, 0 when empty. Relaxed: a word is
 * whole or absent, and a lost store is only a later miss. */
static uint64_t decided[DECIDE_SLOTS];

struct calls {
	uint32_t depth;
	uint64_t start[STACK_MAX]; /* ticks at enter, 0: not to be recorded */
};
static __thread struct calls calls __attribute__((tls_model("initial-exec")));

NOINSTR static int has_prefix(const char *name, size_t len, char list[][PREFIX_BYTES], unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		size_t k = strlen(list[i]);
		if (k <= len && memcmp(name, list[i], k) == 0)
			return 1;
	}
	return 0;
}

/* Whether the function at addr passes the name filters: decided once per address. */
NOINSTR static int keep_function(uint64_t addr)
{
	uint64_t *slot = &decided[(addr * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - DECIDE_BITS)];
	uint64_t w = __atomic_load_n(slot, __ATOMIC_RELAXED);

	if (__builtin_expect((w >> 2) == addr && (w & 2), 1))
		return (int)(w & 1);
	const struct rtr__symtab *t = rtr__symtab_current();
	const struct rtr__sym *s = rtr__symtab_find(t, addr);
	const char *name = s != NULL ? t->names + s->name : "";
	size_t len = s != NULL ? s->name_len : 0;
	int keep = !has_prefix(name, len, exclude, nexclude) &&
		   (ninclude == 0 || has_prefix(name, len, include, ninclude));
	__atomic_store_n(slot, (addr << 2) | 2 | (uint64_t)keep, __ATOMIC_RELAXED);
	return keep;
}

NOINSTR void __cyg_profile_func_enter(void *fn, void *site);
NOINSTR void __cyg_profile_func_exit(void *fn, void *site);

EXPORT NOINSTR void __cyg_profile_func_enter(void *fn, void *site)
{
	struct calls *c = &calls;
	uint32_t d = c->depth;

	(void)site;
	c->depth = d + 1; /* before the slot: a handler from here on pushes above it */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (__builtin_expect(d >= STACK_MAX, 0))
		return;
	uint64_t t = 0;
	if (rtr__recording() && d < max_depth && (!name_filter || keep_function((uintptr_t)fn)))
		t = rtr__ticks();
	c->start[d] = t;
}

EXPORT NOINSTR void __cyg_profile_func_exit(void *fn, void *site)
{
	struct calls *c = &calls;
	uint32_t d = c->depth;

	(void)site;
	if (__builtin_expect(d == 0, 0))
		return; /* an exit without its enter (a longjmp out of a call, say) */
	d--;
	uint64_t t0 = d < STACK_MAX ? c->start[d] : 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	c->depth = d; /* after the slot is read: a handler until here pushes above it */
	if (t0 == 0)
		return;
	uint64_t dur = rtr__ticks() - t0;
	if (min_ns != 0) {
		int tsc = __atomic_load_n(&rtr__clock_is_tsc, __ATOMIC_RELAXED) != 0;
		uint64_t min = __atomic_load_n(&min_ticks[tsc], __ATOMIC_RELAXED);
		if (__builtin_expect(min == 0, 0)) {
			min = rtr__ns_ticks(min_ns);
			__atomic_store_n(&min_ticks[tsc], min, __ATOMIC_RELAXED);
		}
		if (dur < min)
			return;
	}
	if (__builtin_expect(rtr__recording_cat(category), 1))
		rtr__emit_flags(RTR__K_SCOPE, RTR__F_CODE_ADDR, t0, (uintptr_t)fn, dur);
}

/* The writer's symbolizer (rtr__symbolizer_set()): the function containing addr. */
NOINSTR static size_t symbolize(uint64_t addr, char *out, size_t cap, uint64_t *start)
{
	const struct rtr__symtab *t = rtr__symtab_current();
	const struct rtr__sym *s = rtr__symtab_find(t, addr);

	if (s == NULL) { /* objects loaded since the table was built? */
		t = rtr__symtab_refresh();
		s = rtr__symtab_find(t, addr);
	}
	if (s == NULL)
		return 0;
	size_t n = s->name_len < cap ? s->name_len : cap;
	memcpy(out, t->names + s->name, n);
	*start = s->start;
	return n;
}

NOINSTR static void warn_bad(const char *name, const char *value, const char *expected)
{
	fprintf(stderr, "ringtrace: %s=\"%s\" is not %s; keeping the default\n", name, value,
		expected);
}

NOINSTR static int env_number(const char *name, unsigned long long lo, unsigned long long hi,
			      unsigned long long *out)
{
	const char *v = getenv(name);
	char *end;

	if (v == NULL || v[0] == '\0')
		return 0;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno != 0 || *end != '\0' || v[0] == '-' || x < lo || x > hi) {
		warn_bad(name, v, "a number in range");
		return 0;
	}
	*out = x;
	return 1;
}

/* A comma-separated list of prefixes into list; returns how many (blanks around each
 * are dropped, empty ones skipped). Too many or too long: warns, keeps none. */
NOINSTR static unsigned env_prefixes(const char *name, char list[][PREFIX_BYTES])
{
	const char *v = getenv(name), *p;
	unsigned n = 0;

	if (v == NULL)
		return 0;
	for (p = v; *p != '\0';) {
		while (*p == ' ' || *p == '\t')
			p++;
		const char *q = p;
		while (*q != '\0' && *q != ',')
			q++;
		const char *e = q;
		while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e > p) {
			if (n == MAX_PREFIXES || (size_t)(e - p) >= PREFIX_BYTES) {
				warn_bad(name, v, "at most 32 prefixes of 63 bytes");
				return 0;
			}
			memcpy(list[n], p, (size_t)(e - p));
			list[n][e - p] = '\0';
			n++;
		}
		p = *q == ',' ? q + 1 : q;
	}
	return n;
}

__attribute__((constructor)) NOINSTR static void instrument_init(void)
{
	unsigned long long v;

	if (env_number("RINGTRACE_INSTRUMENT_MIN_NS", 0, UINT64_C(3600000000000), &v))
		min_ns = v;
	if (env_number("RINGTRACE_INSTRUMENT_DEPTH", 1, STACK_MAX, &v))
		max_depth = (uint32_t)v;
	nexclude = env_prefixes("RINGTRACE_INSTRUMENT_EXCLUDE", exclude);
	ninclude = env_prefixes("RINGTRACE_INSTRUMENT_INCLUDE", include);
	name_filter = nexclude > 0 || ninclude > 0;
	/* The producers' filter needs names from the first call on: build the table now,
	 * before main (and before any signal handler could need it). */
	if (name_filter)
		rtr__symtab_refresh();
	rtr__symbolizer_set(symbolize);
	const char *lines = getenv("RINGTRACE_INSTRUMENT_LINES");
	if (lines != NULL && strcmp(lines, "1") == 0) {
#if defined(RTR_HAVE_LIBDW)
		rtr__srcline_set(rtr__instrument_srcline);
#else
		fprintf(stderr, "ringtrace: RINGTRACE_INSTRUMENT_LINES=1: built without libdw; "
				"no source lines\n");
#endif
	} else if (lines != NULL && lines[0] != '\0' && strcmp(lines, "0") != 0) {
		warn_bad("RINGTRACE_INSTRUMENT_LINES", lines, "0 or 1");
	}
}
