/* SPDX-License-Identifier: MIT */
/*
 * Ending slices without repeating the name: rtr_end_copy() for copied names,
 * rtr_pop() for the innermost slice, arguments added to an open slice
 * (rtr_scope_arg_*), and rtr_category_enabled(). Each test records through the public
 * API, parses the file back and compares every name, category and argument.
 */
#include <ringtrace.h>

#include "test_util.h"
#include "trace_read.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * A slice as the viewer sees it, whether the writer wrote it as one X or as a B and an
 * E (it folds them when both are in the ring at once, which depends on when it
 * drains): its name, category, and arguments, the B's then the E's, in file order.
 */
struct slice {
	const struct tt_event *first; /* the X, or the B */
	const struct tt_event *last;  /* the X, or the E */
	size_t nargs;
	const struct tt_arg *args[2 * RTR_MAX_ARGS];
};

/* The slices among the events e[0 .. n), in the order they begin; instants are left
 * out. Returns how many. */
static size_t slices_of(const struct tt_event *const *e, size_t n, struct slice *out, size_t max)
{
	size_t open[16], depth = 0, k = 0;

	for (size_t i = 0; i < n; i++) {
		struct slice *sl = &out[k];
		if (strcmp(e[i]->ph, "X") == 0 || strcmp(e[i]->ph, "B") == 0) {
			assert_true(k < max);
			sl->first = sl->last = e[i];
			sl->nargs = 0;
			for (size_t a = 0; a < e[i]->nargs; a++)
				sl->args[sl->nargs++] = &e[i]->args[a];
			if (e[i]->ph[0] == 'B') {
				assert_true(depth < 16);
				open[depth++] = k;
			}
			k++;
		} else if (strcmp(e[i]->ph, "E") == 0) {
			assert_true(depth > 0);
			sl = &out[open[--depth]];
			assert_true(tu_is(e[i]->name, sl->first->name));
			assert_true(tu_is(e[i]->cat, sl->first->cat));
			assert_true(e[i]->ts_ns >= sl->first->ts_ns);
			sl->last = e[i];
			for (size_t a = 0; a < e[i]->nargs; a++) {
				assert_true(sl->nargs < 2 * RTR_MAX_ARGS);
				sl->args[sl->nargs++] = &e[i]->args[a];
			}
		}
	}
	assert_int_equal(depth, 0);
	return k;
}

static void expect_slice(const struct slice *sl, const char *cat, const char *name, size_t nargs)
{
	assert_true(tu_is(sl->first->cat, cat));
	assert_true(tu_is(sl->first->name, name));
	assert_int_equal(sl->nargs, nargs);
	if (sl->first == sl->last)
		assert_true(sl->first->has_dur);
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
	assert_int_equal(tu_events_of(&t, e, 12), 9);
	for (int i = 0; i < 3; i++) {
		char want[32];
		snprintf(want, sizeof(want), "job-%d", i);
		expect(e[3 * i], "B", "app", want);
		expect(e[3 * i + 1], "i", "app", "work");
		expect(e[3 * i + 2], "E", "app", want);
		assert_true(e[3 * i + 2]->ts_ns >= e[3 * i]->ts_ns);
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
	rtr_pop("app"); /* the E right after its B: one X */
	rtr_pop("io");	/* the category comes from the B, whatever the pop says */
	rtr_instant("app", "between");
	rtr_pop("app");
	finish(&t, 0);

	size_t n = tu_events_of(&t, e, 16);
	size_t leaf = n == 8; /* leaf as a B and an E: written before its pop came */
	assert_int_equal(n, 7 + leaf);
	expect(e[0], "B", "app", "outer");
	expect(e[1], "B", "io", "copied-middle");
	expect(e[2], "i", "app", "mark");
	expect(e[3], leaf ? "B" : "X", "app", "leaf");
	if (leaf)
		expect(e[4], "E", "app", "leaf");
	else
		assert_true(e[3]->has_dur);
	expect(e[4 + leaf], "E", "io", "copied-middle");
	expect(e[5 + leaf], "i", "app", "between");
	expect(e[6 + leaf], "E", "app", "outer");
	for (size_t i = 1; i < n; i++)
		assert_true(e[i]->ts_ns >= e[i - 1]->ts_ns);
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
	rtr_begin("app", "plain"); /* no arguments: an X as before */
	rtr_end("app", "plain");
	finish(&t, 0);

	/* solve's B is written before its E is recorded (a slice begins inside it):
	 * its arguments go on its E. inner's B, argument and E are usually in the ring
	 * together: then one X with the argument. */
	struct slice sl[4];
	size_t n = tu_events_of(&t, e, 16);
	assert_int_equal(slices_of(e, n, sl, 4), 3);
	expect_slice(&sl[0], "app", "solve", 2);
	assert_string_equal(sl[0].first->ph, "B");
	assert_int_equal(sl[0].first->has_args, 0);
	assert_string_equal(sl[0].last->ph, "E");
	assert_string_equal(sl[0].args[0]->key, "iters");
	assert_int_equal(sl[0].args[0]->i, -42);
	assert_string_equal(sl[0].args[1]->key, "residual");
	assert_string_equal(sl[0].args[1]->raw, "1.5e-7");
	expect_slice(&sl[1], "app", "inner", 1);
	assert_string_equal(sl[1].args[0]->key, "status");
	assert_int_equal(sl[1].args[0]->type, TT_STRING);
	assert_string_equal(sl[1].args[0]->s, "converged \"ok\"");
	expect_slice(&sl[2], "app", "plain", 0);
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
	assert_int_equal(tu_events_of(&t, e, 4), 2);
	expect(e[1], "E", "app", "big");
	assert_int_equal(e[1]->nargs, kept);
	for (int i = 0; i < kept; i++) {
		assert_string_equal(e[1]->args[i].key, keys[i]);
		assert_string_equal(e[1]->args[i].s, value);
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
	struct slice sl[2];
	size_t n = tu_events_of(&t, e, 8);
	assert_int_equal(slices_of(e, n, sl, 2), 1);
	expect_slice(&sl[0], "app", "kept", 1);
	assert_string_equal(sl[0].args[0]->key, "n");
	assert_int_equal(sl[0].args[0]->i, 7);
	tt_free(&t);
}

/* A B with arguments, arguments added, its E: one X with both, in call order. */
static void added_args_fold_with_the_begins(void **state)
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
	struct slice sl[2];
	size_t n = tu_events_of(&t, e, 4);
	assert_int_equal(slices_of(e, n, sl, 2), 1);
	expect_slice(&sl[0], "app", "step", 4);
	static const char *const keys[] = {"a", "s", "b", "c"};
	for (int i = 0; i < 4; i++)
		assert_string_equal(sl[0].args[i]->key, keys[i]);
	assert_int_equal(sl[0].args[0]->i, 1);
	assert_string_equal(sl[0].args[1]->s, "x");
	assert_int_equal(sl[0].args[2]->i, 2);
	assert_string_equal(sl[0].args[3]->raw, "0.25");
	/* folded (the usual case): the B's and the added arguments on one X */
	if (n == 1)
		assert_string_equal(e[0]->ph, "X");
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
		cmocka_unit_test_teardown(added_args_fold_with_the_begins, tu_teardown),
	};

	tu_filter_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
