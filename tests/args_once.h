/* SPDX-License-Identifier: MIT */
/*
 * One test, compiled as C (test_args.c) and as C++ (test_cxx.cc): the variadic
 * calls rtr_begin_v, rtr_instant_v and rtr_complete_v evaluate each argument exactly
 * once and record the value it had (C++ once evaluated them twice and recorded
 * the second value). Written in the subset of C and C++ both accept.
 */
#ifndef RTR_TESTS_ARGS_ONCE_H
#define RTR_TESTS_ARGS_ONCE_H

#include <ringtrace.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
#define NO_EVENT nullptr
#else
#define NO_EVENT NULL
#endif

static int64_t bumps; /* calls of bump() */

static int64_t bump(int64_t *n)
{
	bumps++;
	return ++*n;
}

/* The event with this ph and name, or NULL. */
static const struct tt_event *args_once_find(const struct tt_trace *t, const char *ph,
					     const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->ev[i].ph, ph) == 0 && t->ev[i].name != NO_EVENT &&
		    strcmp(t->ev[i].name, name) == 0)
			return &t->ev[i];
	return NO_EVENT;
}

static void variadic_calls_evaluate_each_argument_once_issue10(void **state)
{
	char path[4096];
	struct tt_trace t;
	int64_t n = 0, m = 0;
	const struct tt_event *e;

	(void)state;
	tu_own_file(path, sizeof(path), ARGS_ONCE_GROUP, "once", ".json");
	tu_start(path, TU_IO_DEFAULT, RTR_ON_FULL_BLOCK, 1 << 16);
	uint64_t t0 = rtr_now_ns();
	/* one side effect per argument: in C the order among a list's initializers is
	 * unspecified, so n and m are bumped once each */
	rtr_begin_v("once", "begin", RTR_ARG_I64("i", ++n), RTR_ARG_I64("j", bump(&m)));
	rtr_end("once", "begin");
	rtr_instant_v("once", "instant", RTR_ARG_I64("i", ++n), RTR_ARG_STR_COPY("s", "copied"));
	rtr_complete_v("once", "complete", t0, 1000, RTR_ARG_I64("i", ++n));
	assert_int_equal(rtr_stop(), 0);
	assert_int_equal(n, 3);
	assert_int_equal(m, 1);
	assert_int_equal(bumps, 1);

	memset(&t, 0, sizeof(t));
	if (tt_load(path, 0, &t) != 0)
		fail_msg("%s", t.error);
	e = args_once_find(&t, "X", "begin"); /* a B and its E at once: one X */
	if (e == NO_EVENT)
		e = args_once_find(&t, "B", "begin");
	assert_non_null(e);
	assert_int_equal(e->nargs, 2);
	assert_int_equal(tu_arg_int(e, "i"), 1);
	assert_int_equal(tu_arg_int(e, "j"), 1);
	e = args_once_find(&t, "i", "instant");
	assert_non_null(e);
	assert_int_equal(e->nargs, 2);
	assert_int_equal(tu_arg_int(e, "i"), 2);
	assert_string_equal(tt_arg(e, "s")->s, "copied");
	e = args_once_find(&t, "X", "complete");
	assert_non_null(e);
	assert_int_equal(e->nargs, 1);
	assert_int_equal(tu_arg_int(e, "i"), 3);
	assert_int_equal(e->dur_ns, 1000);
	tt_free(&t);
}

#endif
