/* SPDX-License-Identifier: MIT */
/*
 * The slices of a trace, for tests/test_hybrid.c: B and E paired on their thread, the
 * slice around another, those that begin in a time span, and the check that every
 * slice nests in its parent. Include it in one test.
 */
#ifndef RTR_TEST_HYBRID_SLICES_H
#define RTR_TEST_HYBRID_SLICES_H

#include "test_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A slice: an X, or a B and the E that ends it on its thread. */
struct slice {
	const struct tt_event *e;
	int64_t tid;
	uint64_t begin, end;
};

#define MAX_SLICES 4096

struct rank {
	struct tt_trace t;
	struct slice sl[MAX_SLICES];
	size_t n;
	int64_t main_tid;
};

static int is(const struct tt_event *e, const char *cat, const char *name)
{
	return tu_is(e->cat, cat) && tu_is(e->name, name);
}

/* The slices of t into k->sl, B and E paired on their thread in file order. */
static void gather_slices(struct rank *k)
{
	const struct tt_trace *t = &k->t;

	k->n = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if (strcmp(e->ph, "X") == 0 || strcmp(e->ph, "B") == 0) {
			assert_true(k->n < MAX_SLICES);
			k->sl[k->n++] = (struct slice){e, e->tid, e->ts_ns,
						       e->ph[0] == 'X' ? e->ts_ns + e->dur_ns : 0};
		} else if (strcmp(e->ph, "E") == 0) {
			size_t j = k->n;
			while (j > 0 && (k->sl[j - 1].tid != e->tid || k->sl[j - 1].end != 0 ||
					 k->sl[j - 1].e->ph[0] != 'B'))
				j--;
			if (j == 0)
				fail_msg("line %zu: an E without its B", e->line);
			k->sl[j - 1].end = e->ts_ns;
		}
	}
	for (size_t i = 0; i < k->n; i++)
		if (k->sl[i].e->ph[0] == 'B' && k->sl[i].end == 0)
			fail_msg("line %zu: %s never ended", k->sl[i].e->line, k->sl[i].e->name);
}

static size_t count(const struct rank *k, const char *cat, const char *name)
{
	size_t n = 0;
	for (size_t i = 0; i < k->n; i++)
		n += is(k->sl[i].e, cat, name);
	return n;
}

/* The innermost slice cat/name on s's thread around s (not s), or NULL. */
static const struct slice *around(const struct rank *k, const struct slice *s, const char *cat,
				  const char *name)
{
	const struct slice *best = NULL;
	for (size_t i = 0; i < k->n; i++) {
		const struct slice *o = &k->sl[i];
		if (o != s && o->tid == s->tid && o->begin <= s->begin && s->end <= o->end &&
		    is(o->e, cat, name) &&
		    (best == NULL || o->end - o->begin < best->end - best->begin))
			best = o;
	}
	return best;
}

static void must_be_in(const struct rank *k, const struct slice *s, const char *cat,
		       const char *name)
{
	if (around(k, s, cat, name) == NULL)
		fail_msg("line %zu: %s is not inside a %s", s->e->line, s->e->name, name);
}

/* The slices cat/name on thread tid that begin in [from, to], in time order. */
static size_t within(const struct rank *k, const char *cat, const char *name, int64_t tid,
		     uint64_t from, uint64_t to, const struct slice **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < k->n; i++) {
		const struct slice *s = &k->sl[i];
		if (is(s->e, cat, name) && (tid < 0 || s->tid == tid) && s->begin >= from &&
		    s->begin <= to) {
			assert_true(n < max);
			out[n++] = s;
		}
	}
	for (size_t a = 1; a < n; a++) /* few: insertion sort by begin */
		for (size_t b = a; b > 0 && out[b]->begin < out[b - 1]->begin; b--) {
			const struct slice *x = out[b];
			out[b] = out[b - 1];
			out[b - 1] = x;
		}
	return n;
}

static int by_thread_then_time(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end; /* the longer one is the parent */
}

/* Every slice lies within its parent on its thread: the slices nest. */
static void check_nesting(const struct rank *k)
{
	static struct slice sorted[MAX_SLICES];
	const struct slice *stack[64];
	size_t depth = 0;

	memcpy(sorted, k->sl, k->n * sizeof(sorted[0]));
	qsort(sorted, k->n, sizeof(sorted[0]), by_thread_then_time);
	for (size_t i = 0; i < k->n; i++) {
		const struct slice *s = &sorted[i];
		while (depth > 0 &&
		       (stack[depth - 1]->tid != s->tid || stack[depth - 1]->end <= s->begin))
			depth--;
		if (depth > 0 && s->end > stack[depth - 1]->end)
			fail_msg("line %zu: %s [%llu, %llu] crosses the end of %s (line %zu) at "
				 "%llu",
				 s->e->line, s->e->name, (unsigned long long)s->begin,
				 (unsigned long long)s->end, stack[depth - 1]->e->name,
				 stack[depth - 1]->e->line,
				 (unsigned long long)stack[depth - 1]->end);
		assert_true(depth < 64);
		stack[depth++] = s;
	}
}

/* The last name given to thread tid, or NULL. */
static const char *thread_name(const struct rank *k, int64_t tid)
{
	const char *name = NULL;
	for (size_t i = 0; i < k->t.n; i++) {
		const struct tt_event *e = &k->t.ev[i];
		if (strcmp(e->ph, "M") == 0 && tu_is(e->name, "thread_name") && e->tid == tid)
			name = tt_arg(e, "name")->s;
	}
	return name;
}

#endif
