/* SPDX-License-Identifier: MIT */
/*
 * The instrument library: a program built with
 * -finstrument-functions (tests/progs/instrumented_prog.c), run under
 * LD_PRELOAD=libringtrace-instrument.so RINGTRACE_AUTOSTART=1 (and, relinked with the
 * library, with autostart alone), gives one "function" slice per call of each
 * recorded function, named from the ELF symbol tables (the static one included),
 * nested as called, with RINGTRACE_INSTRUMENT_MIN_NS, _DEPTH, _EXCLUDE and _INCLUDE
 * honoured.
 */
#include "child.h"
#include "test_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

enum { MAIN, WORK, LEAF, FACT, TINY, SKIP, NFUNCS };
static const char *const names[NFUNCS] = {"main",     "work_exported", "leaf_static",
					  "fact_rec", "tiny",	       "skip_me_outer"};
static const int all_calls[NFUNCS] = {1, 10, 23, 5, 1000, 3};

struct run {
	struct tt_trace t;
	int count[NFUNCS];
	int other;   /* function slices of no known name */
	int handler; /* in_handler and on_alarm slices */
};

/* Run prog (with arg, or none) and env (NULL-terminated "NAME=value" list) added;
 * load its trace. */
static void run_prog_arg(const char *prog, const char *arg, int preload, const char *const *env,
			 struct run *r, const char *name)
{
	char path[512];
	pid_t pid;

	tu_own_file(path, sizeof(path), "instrument", name, ".json");
	pid = tu_fork();
	if (pid == 0) {
		if (preload)
			setenv("LD_PRELOAD", RTR_TEST_LIBINSTRUMENT, 1);
		setenv("RINGTRACE_FILE", path, 1);
		setenv("RINGTRACE_AUTOSTART", "1", 1);
		for (; env != NULL && *env != NULL; env++)
			putenv((char *)*env);
		execl(prog, prog, arg, (char *)NULL);
		_exit(127);
	}
	int status = tu_wait_child(pid, TU_CHILD_TIMEOUT_S);
	tu_expect_exit_0(status);
	memset(r, 0, sizeof(*r));
	if (tt_load(path, 0, &r->t) != 0)
		fail_msg("%s", r->t.error);
	assert_true(r->t.complete);
	assert_string_equal(tu_end_marker(&r->t)->name, "ringtrace: end");
	for (size_t i = 0; i < r->t.n; i++) {
		const struct tt_event *e = &r->t.ev[i];
		if (!tu_is(e->cat, "function"))
			continue;
		assert_string_equal(e->ph, "X");
		assert_true(e->has_dur);
		int k = 0;
		while (k < NFUNCS && strcmp(e->name, names[k]) != 0)
			k++;
		if (k == NFUNCS && (tu_is(e->name, "in_handler") || tu_is(e->name, "on_alarm"))) {
			r->handler++;
		} else if (k == NFUNCS) {
			print_message("unexpected function slice %s\n", e->name);
			r->other++;
		} else {
			r->count[k]++;
		}
	}
}

static void run_prog(const char *prog, int preload, const char *const *env, struct run *r,
		     const char *name)
{
	run_prog_arg(prog, NULL, preload, env, r, name);
}

static void expect_counts(const struct run *r, const int want[NFUNCS])
{
	for (int k = 0; k < NFUNCS; k++)
		if (r->count[k] != want[k])
			fail_msg("%s: %d slices, want %d", names[k], r->count[k], want[k]);
	assert_int_equal(r->other, 0);
}

/* The slices named `name`, in file order. */
static size_t slices_of(const struct run *r, const char *name, const struct tt_event **out,
			size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < r->t.n; i++)
		if (tu_is(r->t.ev[i].cat, "function") && tu_is(r->t.ev[i].name, name) && n < max)
			out[n++] = &r->t.ev[i];
	return n;
}

static int encloses(const struct tt_event *outer, const struct tt_event *inner)
{
	return outer->tid == inner->tid && outer->ts_ns <= inner->ts_ns &&
	       inner->ts_ns + inner->dur_ns <= outer->ts_ns + outer->dur_ns;
}

static void check_nesting(const struct run *r)
{
	const struct tt_event *m[1], *leaf[32], *outer[32], *fact[8];
	size_t nleaf = slices_of(r, "leaf_static", leaf, 32);
	size_t nwork = slices_of(r, "work_exported", outer, 32);
	size_t nout = nwork + slices_of(r, "skip_me_outer", outer + nwork, 32 - nwork);
	size_t nfact = slices_of(r, "fact_rec", fact, 8);

	assert_int_equal(slices_of(r, "main", m, 1), 1);
	for (size_t i = 0; i < r->t.n; i++)
		if (tu_is(r->t.ev[i].cat, "function"))
			assert_true(encloses(m[0], &r->t.ev[i]));
	for (size_t i = 0; i < nleaf; i++) {
		int found = 0;
		for (size_t j = 0; j < nout; j++)
			found |= encloses(outer[j], leaf[i]) && outer[j] != leaf[i];
		if (!found)
			fail_msg("leaf_static at line %zu is in no caller", leaf[i]->line);
	}
	/* the recursion: each level inside the one that called it */
	for (size_t i = 0; i < nfact; i++)
		for (size_t j = 0; j < nfact; j++)
			if (i != j)
				assert_true(encloses(fact[i], fact[j]) ||
					    encloses(fact[j], fact[i]));
}

static void preloaded_calls_are_slices_named_and_nested(void **state)
{
	struct run r;

	(void)state;
	run_prog(RTR_TEST_INSTRUMENTED_PROG, 1, NULL, &r, "all");
	expect_counts(&r, all_calls);
	check_nesting(&r);
	tt_free(&r.t);
}

static void relinked_program_is_traced_the_same(void **state)
{
	struct run r;

	(void)state;
	run_prog(RTR_TEST_INSTRUMENTED_LINKED, 0, NULL, &r, "linked");
	expect_counts(&r, all_calls);
	check_nesting(&r);
	tt_free(&r.t);
}

static void min_ns_leaves_short_calls_out(void **state)
{
	static const char *const env[] = {"RINGTRACE_INSTRUMENT_MIN_NS=5000", NULL};
	struct run r;

	(void)state;
	run_prog(RTR_TEST_INSTRUMENTED_PROG, 1, env, &r, "min");
	for (size_t i = 0; i < r.t.n; i++)
		if (tu_is(r.t.ev[i].cat, "function"))
			assert_true(r.t.ev[i].dur_ns >= 4950); /* the tick rate's rounding */
	/* every call of the others lasts 10 us or more; tiny lasts nanoseconds, unless a
	 * preemption lands in one */
	int want[NFUNCS] = {1, 10, 23, 5, r.count[TINY], 3};
	expect_counts(&r, want);
	assert_true(r.count[TINY] <= 5);
	tt_free(&r.t);
}

static void exclude_leaves_out_those_functions_only(void **state)
{
	static const char *const env[] = {"RINGTRACE_INSTRUMENT_EXCLUDE=skip_me, tiny", NULL};
	static const int want[NFUNCS] = {1, 10, 23, 5, 0, 0};
	struct run r;

	(void)state;
	run_prog(RTR_TEST_INSTRUMENTED_PROG, 1, env, &r, "exclude");
	expect_counts(&r, want); /* leaf_static under skip_me_outer is still there */
	tt_free(&r.t);
}

static void include_keeps_only_those_functions(void **state)
{
	static const char *const env[] = {"RINGTRACE_INSTRUMENT_INCLUDE=leaf_,fact", NULL};
	static const int want[NFUNCS] = {0, 0, 23, 5, 0, 0};
	struct run r;

	(void)state;
	run_prog(RTR_TEST_INSTRUMENTED_PROG, 1, env, &r, "include");
	expect_counts(&r, want);
	tt_free(&r.t);
}

static void exclude_wins_over_include(void **state)
{
	static const char *const env[] = {"RINGTRACE_INSTRUMENT_INCLUDE=leaf_,fact",
					  "RINGTRACE_INSTRUMENT_EXCLUDE=fact_rec", NULL};
	static const int want[NFUNCS] = {0, 0, 23, 0, 0, 0};
	struct run r;

	(void)state;
	run_prog(RTR_TEST_INSTRUMENTED_PROG, 1, env, &r, "both");
	expect_counts(&r, want);
	tt_free(&r.t);
}

static void depth_keeps_the_outer_calls(void **state)
{
	static const char *const env[] = {"RINGTRACE_INSTRUMENT_DEPTH=2", NULL};
	static const int want[NFUNCS] = {1, 10, 0, 1, 1000, 3};
	struct run r;

	(void)state;
	run_prog(RTR_TEST_INSTRUMENTED_PROG, 1, env, &r, "depth");
	expect_counts(&r, want);
	tt_free(&r.t);
}

/* Signal handlers' calls nest whole inside the calls they interrupt: every two
 * slices of the thread are nested or apart, never overlapping halfway. */
static void signal_handler_calls_nest(void **state)
{
	struct run r;
	const struct tt_event **f;
	size_t n = 0;

	(void)state;
	run_prog_arg(RTR_TEST_INSTRUMENTED_PROG, "signals", 1, NULL, &r, "signals");
	assert_int_equal(r.count[WORK], 2000);
	assert_int_equal(r.count[LEAF], 4000);
	assert_true(r.handler > 0);
	f = tu_own(r.t.n, sizeof(*f));
	for (size_t i = 0; i < r.t.n; i++)
		if (tu_is(r.t.ev[i].cat, "function"))
			f[n++] = &r.t.ev[i];
	for (size_t i = 0; i < n; i++) {
		uint64_t a0 = f[i]->ts_ns, a1 = a0 + f[i]->dur_ns;
		/* the neighbours in the file are the ones that can overlap */
		for (size_t j = i + 1; j < n && j < i + 8; j++) {
			uint64_t b0 = f[j]->ts_ns, b1 = b0 + f[j]->dur_ns;
			int apart = a1 <= b0 || b1 <= a0;
			if (!apart && !encloses(f[i], f[j]) && !encloses(f[j], f[i]))
				fail_msg("lines %zu and %zu overlap", f[i]->line, f[j]->line);
		}
	}
	tt_free(&r.t);
}

/* The line of the source of the test program that holds text, or 0. */
static int source_line(const char *text)
{
	FILE *f = fopen(RTR_TEST_INSTRUMENTED_SRC, "r");
	char buf[512];
	int n = 0, found = 0;

	assert_non_null(f);
	while (!found && fgets(buf, sizeof(buf), f) != NULL) {
		n++;
		found = strstr(buf, text) != NULL;
	}
	fclose(f);
	return found ? n : 0;
}

#if !defined(RTR_TEST_HAVE_LIBDW)
#define RTR_TEST_INSTRUMENTED_NOARANGES NULL /* not built without libdw */
#endif

/* prog's leaf_static and fact_rec slices carry their source line. */
static void expect_lines(const char *prog, const char *name)
{
	static const char *const env[] = {"RINGTRACE_INSTRUMENT_LINES=1", NULL};
	struct run r;
	const struct tt_event *leaf[32], *fact[8];
	int want = source_line("KEEP static void leaf_static(void)");
	int want_fact = source_line("KEEP int fact_rec(int n)\n");

#if !defined(RTR_TEST_HAVE_LIBDW)
	skip(); /* built without libdw: no lines */
#endif
	assert_true(want > 0);
	run_prog(prog, 1, env, &r, name);
	expect_counts(&r, all_calls);
	size_t nleaf = slices_of(&r, "leaf_static", leaf, 32);
	size_t nfact = slices_of(&r, "fact_rec", fact, 8);
	assert_int_equal(nleaf, 23);
	for (size_t i = 0; i < nleaf + nfact; i++) {
		const struct tt_event *e = i < nleaf ? leaf[i] : fact[i - nleaf];
		const struct tt_arg *src = tt_arg(e, "src");
		assert_non_null(src);
		assert_int_equal(src->type, TT_STRING);
		const char *colon = strrchr(src->s, ':');
		assert_non_null(colon);
		assert_true(colon - src->s >= 19);
		assert_memory_equal(colon - 19, "instrumented_prog.c", 19);
		int line = atoi(colon + 1), at = i < nleaf ? want : want_fact;
		/* the entry's line: the declarator's, or the brace's after it */
		if (line != at && line != at + 1)
			fail_msg("%s: src %s, want line %d", e->name, src->s, at);
	}
	tt_free(&r.t);
}

static void lines_name_each_function_s_source(void **state)
{
	(void)state;
	expect_lines(RTR_TEST_INSTRUMENTED_PROG, "lines");
}

/* Clang emits no .debug_aranges, through which libdw finds a compilation unit. */
static void lines_without_debug_aranges_come_from_the_units_ranges(void **state)
{
	(void)state;
	expect_lines(RTR_TEST_INSTRUMENTED_NOARANGES, "lines-noaranges");
}

/* The hooks run before any start (no autostart): nothing is recorded, nothing breaks. */
static void hooks_without_a_recorder_record_nothing(void **state)
{
	char path[512];
	pid_t pid;

	(void)state;
	tu_own_file(path, sizeof(path), "instrument", "off", ".json");
	pid = tu_fork();
	if (pid == 0) {
		setenv("LD_PRELOAD", RTR_TEST_LIBINSTRUMENT, 1);
		setenv("RINGTRACE_FILE", path, 1);
		unsetenv("RINGTRACE_AUTOSTART");
		execl(RTR_TEST_INSTRUMENTED_PROG, RTR_TEST_INSTRUMENTED_PROG, (char *)NULL);
		_exit(127);
	}
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
	assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(preloaded_calls_are_slices_named_and_nested, tu_teardown),
		cmocka_unit_test_teardown(relinked_program_is_traced_the_same, tu_teardown),
		cmocka_unit_test_teardown(min_ns_leaves_short_calls_out, tu_teardown),
		cmocka_unit_test_teardown(exclude_leaves_out_those_functions_only, tu_teardown),
		cmocka_unit_test_teardown(include_keeps_only_those_functions, tu_teardown),
		cmocka_unit_test_teardown(exclude_wins_over_include, tu_teardown),
		cmocka_unit_test_teardown(depth_keeps_the_outer_calls, tu_teardown),
		cmocka_unit_test_teardown(signal_handler_calls_nest, tu_teardown),
		cmocka_unit_test_teardown(lines_name_each_function_s_source, tu_teardown),
		cmocka_unit_test_teardown(lines_without_debug_aranges_come_from_the_units_ranges,
					  tu_teardown),
		cmocka_unit_test_teardown(hooks_without_a_recorder_record_nothing, tu_teardown),
	};

	tu_filter_from_env();
	return cmocka_run_group_tests_name("instrument", tests, NULL, NULL);
}
