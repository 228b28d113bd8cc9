/* SPDX-License-Identifier: MIT */
/*
 * Ending slices without repeating the name: rtr_end_copy() for copied names,
 * rtr_pop() for the innermost slice, arguments added to an open slice
 * (rtr_scope_arg_*), and rtr_category_enabled(); a slice is one X at its end, or a B
 * where the file must show it open (a flush, a thread's exit, the stop). Each test
 * records through the public API, parses the file back and compares every name,
 * category and argument.
 */
#include <ringtrace.h>

#include "test_util.h"
#include "trace_read.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static char path[4096];

static void start(const char *name, const char *categories)
{
	struct rtr_config cfg;

	tu_own_file(path, sizeof(path), "ending", name, ".json");
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	cfg.ring_bytes = 1 << 16;
	cfg.categories = categories;
	assert_int_equal(rtr_start(&cfg), 0);
}

/* Stop, check the counts add up with nothing dropped, and load the file. */
static void finish(struct tt_trace *t, uint64_t args_cut)
{
	struct rtr_stats st;

	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.events_dropped, 0);
	assert_int_equal(st.events_written, st.events_recorded);
	assert_int_equal(st.events_args_cut, args_cut);
	if (tt_load(path, TT_CHECK_ESCAPES, t) != 0)
		fail_msg("%s", t->error);
	assert_true(t->complete);
}

static void expect(const struct tt_event *e, const char *ph, const char *cat, const char *name)
{
	assert_string_equal(e->ph, ph);
	if (cat == NULL)
		assert_null(e->cat);
	else
		assert_true(tu_is(e->cat, cat));
	assert_true(tu_is(e->name, name));
}

/* e is one X: the whole slice, written at its E. */
static void expect_x(const struct tt_event *e, const char *cat, const char *name, size_t nargs)
{
	expect(e, "X", cat, name);
	assert_true(e->has_dur);
	assert_int_equal(e->nargs, nargs);
}

/* outer's X holds inner (an event or an X) in time. */
static void assert_holds(const struct tt_event *outer, const struct tt_event *inner)
{
	assert_true(outer->ts_ns <= inner->ts_ns);
	assert_true(outer->ts_ns + outer->dur_ns >= inner->ts_ns + inner->dur_ns);
}

static void end_copy_outlives_the_callers_buffer(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[12];

	start("end_copy", NULL);
	for (int i = 0; i < 3; i++) {
		char *name = malloc(32);
		assert_non_null(name);
		snprintf(name, 32, "job-%d", i);
		rtr_begin_copy("app", name);
		rtr_instant("app", "work");
		rtr_end_copy("app", name);
		memset(name, 'x', 31); /* the writer may run only after this */
		free(name);
	}
	finish(&t, 0);
	assert_int_equal(tu_events_of(&t, e, 12), 6);
	for (int i = 0; i < 3; i++) {
		char want[32];
		snprintf(want, sizeof(want), "job-%d", i);
		expect(e[2 * i], "i", "app", "work");
		expect_x(e[2 * i + 1], "app", want, 0);
		assert_holds(e[2 * i + 1], e[2 * i]);
		if (i > 0)
			assert_true(e[2 * i + 1]->ts_ns >=
				    e[2 * i - 1]->ts_ns + e[2 * i - 1]->dur_ns);
	}
	tt_free(&t);
}

static void pop_ends_the_innermost_slice(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[16];

	start("pop", NULL);
	rtr_begin("app", "outer");
	rtr_begin_copy("io", "copied-middle");
	rtr_instant("app", "mark");
	rtr_begin("app", "leaf");
	rtr_pop("app");
	rtr_pop("io"); /* the category comes from the B, whatever the pop says */
	rtr_instant("app", "between");
	rtr_pop("app");
	finish(&t, 0);

	/* each X where its pop came: leaf, copied-middle, then outer */
	assert_int_equal(tu_events_of(&t, e, 16), 5);
	expect(e[0], "i", "app", "mark");
	expect_x(e[1], "app", "leaf", 0);
	expect_x(e[2], "io", "copied-middle", 0);
	expect(e[3], "i", "app", "between");
	expect_x(e[4], "app", "outer", 0);
	assert_true(e[1]->ts_ns >= e[0]->ts_ns);
	assert_holds(e[2], e[0]);
	assert_holds(e[2], e[1]);
	assert_true(e[3]->ts_ns >= e[2]->ts_ns + e[2]->dur_ns);
	assert_holds(e[4], e[2]);
	assert_holds(e[4], e[3]);
	tt_free(&t);
}

static void scope_args_go_on_their_slices_end(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[16];

	start("scope_args", NULL);
	rtr_scope_arg_i64("app", "orphan", 1); /* no slice open: nothing recorded */
	rtr_begin("app", "solve");
	rtr_scope_arg_i64("app", "iters", -42);
	rtr_begin("app", "inner");
	char *status = strdup("converged \"ok\"");
	assert_non_null(status);
	rtr_scope_arg_str_copy("app", "status", status);
	free(status);
	rtr_end("app", "inner");
	rtr_scope_arg_f64("app", "residual", 1.5e-7);
	rtr_pop("app");
	rtr_begin("app", "plain");
	rtr_end("app", "plain");
	finish(&t, 0);

	/* each slice one X, with the arguments added while it was open, in call order */
	assert_int_equal(tu_events_of(&t, e, 16), 3);
	expect_x(e[0], "app", "inner", 1);
	assert_string_equal(e[0]->args[0].key, "status");
	assert_int_equal(e[0]->args[0].type, TT_STRING);
	assert_string_equal(e[0]->args[0].s, "converged \"ok\"");
	expect_x(e[1], "app", "solve", 2);
	assert_string_equal(e[1]->args[0].key, "iters");
	assert_int_equal(e[1]->args[0].i, -42);
	assert_string_equal(e[1]->args[1].key, "residual");
	assert_string_equal(e[1]->args[1].raw, "1.5e-7");
	assert_holds(e[1], e[0]);
	expect_x(e[2], "app", "plain", 0);
	assert_int_equal(e[2]->has_args, 0);
	assert_true(e[2]->ts_ns >= e[1]->ts_ns + e[1]->dur_ns);
	tt_free(&t);
}

/* More than RTR_MAX_SCOPE_ARG_BYTES of added arguments: the rest is cut and counted. */
static void scope_args_are_bounded(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[4];
	static const char *const keys[] = {"k00", "k01", "k02", "k03", "k04", "k05", "k06",
					   "k07", "k08", "k09", "k10", "k11", "k12", "k13",
					   "k14", "k15", "k16", "k17", "k18", "k19"};
	char value[1001];
	const int calls = 20;

	memset(value, 'v', sizeof(value) - 1);
	value[sizeof(value) - 1] = '\0';
	start("scope_args_bounded", NULL);
	rtr_begin("app", "big");
	for (int i = 0; i < calls; i++)
		rtr_scope_arg_str_copy("app", keys[i], value);
	rtr_end("app", "big");
	/* each argument is `"k00":"vvv..."`, 1007 bytes, with a comma between */
	int kept = (RTR_MAX_SCOPE_ARG_BYTES + 1) / 1008;
	finish(&t, (uint64_t)(calls - kept));
	assert_int_equal(tu_events_of(&t, e, 4), 1);
	expect_x(e[0], "app", "big", (size_t)kept);
	for (int i = 0; i < kept; i++) {
		assert_string_equal(e[0]->args[i].key, keys[i]);
		assert_string_equal(e[0]->args[i].s, value);
	}
	tt_free(&t);
}

/* The filter decides for the added arguments as for their slice. */
static void filter_and_category_enabled(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[8];

	assert_false(rtr_category_enabled("app"));
	start("filter", "app");
	assert_true(rtr_category_enabled("app"));
	assert_false(rtr_category_enabled("debug"));
	rtr_begin("app", "kept");
	rtr_scope_arg_i64("app", "n", 7);
	rtr_begin("debug", "skipped");
	rtr_scope_arg_i64("debug", "lost", 1);
	rtr_pop("debug");
	rtr_pop("app");
	finish(&t, 0);
	assert_false(rtr_category_enabled("app"));
	assert_int_equal(tu_events_of(&t, e, 8), 1);
	expect_x(e[0], "app", "kept", 1);
	assert_string_equal(e[0]->args[0].key, "n");
	assert_int_equal(e[0]->args[0].i, 7);
	tt_free(&t);
}

/* A B with arguments, arguments added, its E: one X with both, in call order. */
static void added_args_go_after_the_begins(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[4];

	start("fold", NULL);
	rtr_begin_args("app", "step", RTR__ARGV(RTR_ARG_I64("a", 1), RTR_ARG_STR("s", "x")), 2);
	rtr_scope_arg_i64("app", "b", 2);
	rtr_scope_arg_f64("app", "c", 0.25);
	rtr_end("app", "step");
	finish(&t, 0);
	assert_int_equal(tu_events_of(&t, e, 4), 1);
	expect_x(e[0], "app", "step", 4);
	static const char *const keys[] = {"a", "s", "b", "c"};
	for (int i = 0; i < 4; i++)
		assert_string_equal(e[0]->args[i].key, keys[i]);
	assert_int_equal(e[0]->args[0].i, 1);
	assert_string_equal(e[0]->args[1].s, "x");
	assert_int_equal(e[0]->args[2].i, 2);
	assert_string_equal(e[0]->args[3].raw, "0.25");
	tt_free(&t);
}

/* A slice still open at rtr_stop() stays open in the file: a B line with the B's own
 * arguments (those added since have no E to go on), at its time, and no E. */
static void slice_open_at_stop_is_a_begin(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[8];

	start("open_at_stop", NULL);
	rtr_instant("app", "before");
	rtr_begin_v("app", "unended", RTR_ARG_I64("n", 5), RTR_ARG_STR_COPY("s", "copied"));
	rtr_scope_arg_i64("app", "added", 6);
	rtr_begin("app", "done");
	rtr_end("app", "done");
	rtr_instant("app", "after");
	finish(&t, 0);
	assert_int_equal(tu_events_of(&t, e, 8), 4);
	expect(e[0], "i", "app", "before");
	expect_x(e[1], "app", "done", 0);
	expect(e[2], "i", "app", "after");
	expect(e[3], "B", "app", "unended");
	assert_false(e[3]->has_dur);
	assert_int_equal(e[3]->nargs, 2);
	assert_int_equal(tu_arg_int(e[3], "n"), 5);
	assert_string_equal(tt_arg(e[3], "s")->s, "copied");
	assert_true(e[3]->ts_ns >= e[0]->ts_ns);
	assert_true(e[3]->ts_ns <= e[1]->ts_ns);
	assert_true(e[1]->ts_ns + e[1]->dur_ns <= e[2]->ts_ns);
	tt_free(&t);
}

static void *exit_inside_a_slice(void *arg)
{
	(void)arg;
	rtr_begin_v("app", "left open", RTR_ARG_I64("n", 1));
	rtr_begin("app", "done");
	rtr_end("app", "done");
	return (void *)(intptr_t)gettid();
}

/* A thread that exits inside a slice leaves it open in the file: a B line. */
static void slice_open_at_thread_exit_is_a_begin(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	const struct tt_event *e[8];
	pthread_t th;
	void *tid;

	start("open_at_exit", NULL);
	assert_int_equal(pthread_create(&th, NULL, exit_inside_a_slice, NULL), 0);
	assert_int_equal(pthread_join(th, &tid), 0);
	finish(&t, 0);
	assert_int_equal(tu_events_of(&t, e, 8), 2);
	expect_x(e[0], "app", "done", 0);
	expect(e[1], "B", "app", "left open");
	assert_false(e[1]->has_dur);
	assert_int_equal(tu_arg_int(e[1], "n"), 1);
	assert_int_equal(e[0]->tid, (intptr_t)tid);
	assert_int_equal(e[1]->tid, (intptr_t)tid);
	assert_true(e[1]->ts_ns <= e[0]->ts_ns);
	tt_free(&t);
}

/*
 * Two threads each hold a slice open across many drain passes (a flush each round):
 * every file in between shows it as a B, at one fixed time, in its provisional close;
 * the last file has one X per slice, at that time, holding every step, and no B or E.
 */
#define OPEN_THREADS 2
#define OPEN_ROUNDS  40

static pthread_barrier_t round_done, round_checked;

static void *hold_open(void *arg)
{
	int64_t id = (int64_t)(intptr_t)arg;

	rtr_begin_v("app", "held", RTR_ARG_I64("thread", id));
	for (int64_t r = 0; r < OPEN_ROUNDS; r++) {
		rtr_begin("app", "step");
		rtr_scope_arg_i64("app", "round", r);
		rtr_end("app", "step");
		pthread_barrier_wait(&round_done);
		pthread_barrier_wait(&round_checked);
	}
	rtr_scope_arg_i64("app", "rounds", OPEN_ROUNDS);
	rtr_pop("app");
	rtr_instant("app", "after");
	return (void *)(intptr_t)gettid();
}

/* In a file written while the threads hold their slices: thread k's open slice
 * (its B line) into *open_ts[k] (equal to what an earlier file showed), and no E. */
static void check_open_file(const int64_t *tids, uint64_t *open_ts, int round)
{
	struct tt_trace t = {0};
	int begins[OPEN_THREADS] = {0}, steps[OPEN_THREADS] = {0};

	if (tt_load(path, TT_CHECK_ESCAPES, &t) != 0)
		fail_msg("%s", t.error);
	for (size_t i = 0; i < t.n; i++) {
		const struct tt_event *e = &t.ev[i];
		assert_string_not_equal(e->ph, "E");
		for (int k = 0; k < OPEN_THREADS; k++) {
			if (e->tid != tids[k] || e->cat == NULL)
				continue;
			if (strcmp(e->ph, "B") == 0) {
				expect(e, "B", "app", "held");
				assert_int_equal(tu_arg_int(e, "thread"), k);
				if (open_ts[k] == 0)
					open_ts[k] = e->ts_ns;
				assert_int_equal(e->ts_ns, open_ts[k]);
				begins[k]++;
			} else {
				expect_x(e, "app", "step", 1);
				assert_int_equal(tu_arg_int(e, "round"), steps[k]++);
			}
		}
	}
	for (int k = 0; k < OPEN_THREADS; k++) {
		assert_int_equal(begins[k], 1);
		assert_int_equal(steps[k], round + 1);
	}
	tt_free(&t);
}

static void slices_open_across_drains_on_two_threads_are_one_x_each(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	pthread_t th[OPEN_THREADS];
	int64_t tids[OPEN_THREADS] = {0};
	uint64_t open_ts[OPEN_THREADS] = {0};

	start("open_across_drains", NULL);
	assert_int_equal(pthread_barrier_init(&round_done, NULL, OPEN_THREADS + 1), 0);
	assert_int_equal(pthread_barrier_init(&round_checked, NULL, OPEN_THREADS + 1), 0);
	for (intptr_t k = 0; k < OPEN_THREADS; k++)
		assert_int_equal(pthread_create(&th[k], NULL, hold_open, (void *)k), 0);
	for (int r = 0; r < OPEN_ROUNDS; r++) {
		pthread_barrier_wait(&round_done);
		assert_int_equal(rtr_flush(), 0);
		if (r == 0) { /* the tids, from the first file */
			assert_int_equal(tt_load(path, 0, &t), 0);
			for (size_t i = 0; i < t.n; i++)
				if (tu_is(t.ev[i].name, "held"))
					tids[tu_arg_int(&t.ev[i], "thread")] = t.ev[i].tid;
			tt_free(&t);
		}
		check_open_file(tids, open_ts, r);
		pthread_barrier_wait(&round_checked);
	}
	for (int k = 0; k < OPEN_THREADS; k++) {
		void *tid;
		assert_int_equal(pthread_join(th[k], &tid), 0);
		assert_int_equal((intptr_t)tid, tids[k]);
	}
	pthread_barrier_destroy(&round_done);
	pthread_barrier_destroy(&round_checked);
	finish(&t, 0);

	for (int k = 0; k < OPEN_THREADS; k++) {
		const struct tt_event *held = NULL, *after = NULL, *last_step = NULL;
		int steps = 0;
		for (size_t i = 0; i < t.n; i++) {
			const struct tt_event *e = &t.ev[i];
			if (e->tid != tids[k] || e->cat == NULL)
				continue;
			assert_string_not_equal(e->ph, "B");
			assert_string_not_equal(e->ph, "E");
			assert_null(after); /* "after" is the thread's last event */
			if (tu_is(e->name, "step")) {
				assert_null(held); /* every step before its X */
				expect_x(e, "app", "step", 1);
				assert_int_equal(tu_arg_int(e, "round"), steps++);
				if (last_step != NULL)
					assert_true(e->ts_ns >=
						    last_step->ts_ns + last_step->dur_ns);
				last_step = e;
			} else if (tu_is(e->name, "held")) {
				assert_null(held);
				held = e;
			} else {
				expect(e, "i", "app", "after");
				after = e;
			}
		}
		assert_int_equal(steps, OPEN_ROUNDS);
		assert_non_null(held);
		assert_non_null(after);
		/* its B's arguments, then the one added; at the time every file showed */
		expect_x(held, "app", "held", 2);
		assert_string_equal(held->args[0].key, "thread");
		assert_int_equal(held->args[0].i, k);
		assert_string_equal(held->args[1].key, "rounds");
		assert_int_equal(held->args[1].i, OPEN_ROUNDS);
		assert_int_equal(held->ts_ns, open_ts[k]);
		assert_holds(held, last_step);
		assert_true(held->ts_ns + held->dur_ns <= after->ts_ns);
	}
	tt_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(end_copy_outlives_the_callers_buffer, tu_teardown),
		cmocka_unit_test_teardown(pop_ends_the_innermost_slice, tu_teardown),
		cmocka_unit_test_teardown(scope_args_go_on_their_slices_end, tu_teardown),
		cmocka_unit_test_teardown(scope_args_are_bounded, tu_teardown),
		cmocka_unit_test_teardown(filter_and_category_enabled, tu_teardown),
		cmocka_unit_test_teardown(added_args_go_after_the_begins, tu_teardown),
		cmocka_unit_test_teardown(slice_open_at_stop_is_a_begin, tu_teardown),
		cmocka_unit_test_teardown(slice_open_at_thread_exit_is_a_begin, tu_teardown),
		cmocka_unit_test_teardown(slices_open_across_drains_on_two_threads_are_one_x_each,
					  tu_teardown),
	};

	tu_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
