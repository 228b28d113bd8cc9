/* SPDX-License-Identifier: MIT */
/*
 * The ITT collector: tests/progs/itt_client.c loads libringtrace-itt.so through
 * INTEL_LIBITTNOTIFY64 as the ITT static part does and makes domains, string
 * handles, nested tasks on two threads (with ids), frames (one ending on the other
 * thread), a counter and a pause; run with RINGTRACE_AUTOSTART=1, its trace holds
 * every slice with its name, category (the domain), arguments, thread and nesting,
 * and nothing of what it did between pause and resume.
 */
#include "child.h"
#include "test_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static void run_client(struct tt_trace *t)
{
	char path[512];

	tu_own_file(path, sizeof(path), "itt", "client", ".json");
	pid_t pid = tu_fork();
	if (pid == 0) {
		setenv("INTEL_LIBITTNOTIFY64", RTR_TEST_LIBITT, 1);
		setenv("RINGTRACE_FILE", path, 1);
		setenv("RINGTRACE_AUTOSTART", "1", 1);
		execl(RTR_TEST_ITT_CLIENT, RTR_TEST_ITT_CLIENT, (char *)NULL);
		_exit(127);
	}
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
	if (tt_load(path, 0, t) != 0)
		fail_msg("%s", t->error);
	assert_true(t->complete);
	assert_int_equal(tu_arg_int(tu_end_marker(t), "dropped"), 0);
}

/* The tid named `name` by a thread_name line; fails when there is none. */
static int64_t tid_named(const struct tt_trace *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		const struct tt_arg *a = tt_arg(e, "name");
		if (tu_is(e->ph, "M") && tu_is(e->name, "thread_name") && a != NULL &&
		    tu_is(a->s, name))
			return e->tid;
	}
	fail_msg("no thread named %s", name);
	return -1;
}

/* The X slices named name (category cat) on tid, in file order, into out. */
static size_t slices(const struct tt_trace *t, const char *cat, const char *name, int64_t tid,
		     const struct tt_event **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if (!tu_is(e->name, name) || e->tid != tid)
			continue;
		assert_string_equal(e->ph, "X");
		assert_true(e->has_dur);
		assert_true(tu_is(e->cat, cat));
		assert_true(n < max);
		out[n++] = e;
	}
	return n;
}

static int encloses(const struct tt_event *outer, const struct tt_event *inner)
{
	return outer->tid == inner->tid && outer->ts_ns <= inner->ts_ns &&
	       inner->ts_ns + inner->dur_ns <= outer->ts_ns + outer->dur_ns;
}

/* Every name that appears anywhere, counted. */
static size_t count_named(const struct tt_trace *t, const char *name)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		n += tu_is(t->ev[i].name, name);
	return n;
}

static void tasks_are_slices_in_their_domain_on_their_thread(void **state)
{
	struct tt_trace t = {0};
	const struct tt_event *solve[8], *step[8], *read[8], *wstep[8];
	(void)state;

	run_client(&t);
	int64_t main_tid = tid_named(&t, "itt main"), worker = tid_named(&t, "itt worker");
	assert_true(main_tid != worker);

	assert_int_equal(slices(&t, "app.compute", "solve", main_tid, solve, 8), 3);
	assert_int_equal(slices(&t, "app.compute", "step", main_tid, step, 8), 3);
	for (size_t i = 0; i < 3; i++) {
		assert_true(encloses(solve[i], step[i]));
		assert_int_equal(tu_arg_int(step[i], "id"), 11 + (int64_t)i);
		assert_int_equal(tu_arg_int(step[i], "parent"), 100);
		assert_int_equal(solve[i]->nargs, 0);
	}
	assert_int_equal(slices(&t, "app.io", "read", worker, read, 8), 4);
	assert_int_equal(slices(&t, "app.compute", "step", worker, wstep, 8), 4);
	for (size_t i = 0; i < 4; i++) {
		assert_true(encloses(read[i], wstep[i]));
		assert_int_equal(wstep[i]->nargs, 0);
	}
	assert_int_equal(count_named(&t, "solve"), 3);
	assert_int_equal(count_named(&t, "step"), 7);
	assert_int_equal(count_named(&t, "read"), 4);
	tt_free(&t);
}

static void frames_are_async_spans_that_may_end_on_another_thread(void **state)
{
	struct tt_trace t = {0};
	const struct tt_event *solve[8];
	size_t begins = 0, ends = 0, f77_begin = 0, f77_end = 0;
	(void)state;

	run_client(&t);
	int64_t main_tid = tid_named(&t, "itt main"), worker = tid_named(&t, "itt worker");
	assert_int_equal(slices(&t, "app.compute", "solve", main_tid, solve, 8), 3);
	for (size_t i = 0; i < t.n; i++) {
		const struct tt_event *e = &t.ev[i];
		if (!tu_is(e->name, "frame"))
			continue;
		assert_true(tu_is(e->cat, "app.compute")); /* the paused one in app.io is absent */
		assert_non_null(e->id);
		int is77 = strtoull(e->id, NULL, 16) == 77;
		if (tu_is(e->ph, "b")) {
			begins++;
			f77_begin += is77;
			assert_int_equal(e->tid, main_tid);
		} else {
			assert_string_equal(e->ph, "e");
			ends++;
			f77_end += is77;
			assert_int_equal(e->tid, is77 ? worker : main_tid);
		}
	}
	assert_int_equal(begins, 4);
	assert_int_equal(ends, 4);
	assert_int_equal(f77_begin, 1);
	assert_int_equal(f77_end, 1);
	tt_free(&t);
}

static void counters_and_pause_record_nothing_in_between(void **state)
{
	struct tt_trace t = {0};
	const struct tt_event *e1[4], *outer[4], *after[4];
	int64_t want[] = {5, 6, 16, 15};
	size_t n = 0;
	(void)state;

	run_client(&t);
	int64_t main_tid = tid_named(&t, "itt main");
	for (size_t i = 0; i < t.n; i++) {
		const struct tt_event *e = &t.ev[i];
		if (!tu_is(e->name, "queue depth"))
			continue;
		assert_string_equal(e->ph, "C");
		assert_true(tu_is(e->cat, "app.io"));
		assert_int_equal(e->nargs, 1);
		assert_true(n < 4);
		assert_int_equal(e->args[0].i, want[n]); /* 99 was set while paused */
		n++;
	}
	assert_int_equal(n, 4);
	/* begun before the pause: recorded, whether it ends inside one or after */
	assert_int_equal(slices(&t, "app.compute", "ends in pause", main_tid, e1, 4), 1);
	assert_int_equal(slices(&t, "app.compute", "outer", main_tid, outer, 4), 1);
	assert_true(encloses(e1[0], outer[0]));
	assert_int_equal(slices(&t, "app.compute", "after resume", main_tid, after, 4), 1);
	assert_true(after[0]->ts_ns >= e1[0]->ts_ns + e1[0]->dur_ns);
	/* begun inside: nothing, whenever it ends */
	assert_int_equal(count_named(&t, "during pause"), 0);
	assert_int_equal(count_named(&t, "inner paused"), 0);
	/* and no event of any kind other than the outer two falls inside outer's span */
	for (size_t i = 0; i < t.n; i++) {
		const struct tt_event *e = &t.ev[i];
		if (e == outer[0] || e == e1[0] || !e->has_ts || tu_is(e->ph, "M") ||
		    e == tu_end_marker(&t))
			continue;
		if (e->ts_ns > outer[0]->ts_ns && e->ts_ns < outer[0]->ts_ns + outer[0]->dur_ns)
			fail_msg("%s at line %zu was recorded while paused", e->name, e->line);
	}
	tt_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(tasks_are_slices_in_their_domain_on_their_thread,
					  tu_teardown),
		cmocka_unit_test_teardown(frames_are_async_spans_that_may_end_on_another_thread,
					  tu_teardown),
		cmocka_unit_test_teardown(counters_and_pause_record_nothing_in_between,
					  tu_teardown),
	};
	tu_filter_from_env();
	return cmocka_run_group_tests_name("itt", tests, NULL, NULL);
}
