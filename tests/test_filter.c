/* SPDX-License-Identifier: MIT */
/*
 * The category filter: the list's syntax, which events each kind
 * of list keeps, RTR_SCOPE call sites and per-thread caches across sessions with
 * different lists, the environment against the config, and threads recording (and
 * racing with restarts) under a filter. Traces are parsed back and compared event by
 * event: phase, category and name.
 *
 * Sizes scale with RTR_TEST_SCALE (a factor, default 1; 0.25 under a sanitizer).
 */
#include <ringtrace.h>

#include "producer/filter.h"
#include "test_util.h"
#include "trace_read.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* ------------------------------------------------------------------------- */
/* Helpers                                                                    */

static int setup(void **state)
{
	(void)state;
	unsetenv("RINGTRACE_CATEGORIES"); /* a list in the caller's environment would skew */
	return 0;
}

static void make_path(char *out, size_t size, const char *name)
{
	tu_own_file(out, size, "filter", name, ".json");
}

/* Start on path with the list `categories` (NULL: none), block mode. */
static void start_with(const char *path, const char *categories)
{
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	cfg.ring_bytes = (size_t)1 << 16;
	cfg.categories = categories;
	assert_int_equal(rtr_start(&cfg), 0);
}

/*
 * The events of the trace at path other than the markers and metadata, as
 * "ph/cat/name" tokens joined by spaces ("-" for no category), into out. Call after
 * rtr_stop(). Checks that the file is complete strict JSON framed by the markers,
 * that the end marker counts what rtr_stats_get() says was written, and that the
 * start marker names the list `categories` (NULL or "": none).
 */
static void trace_tokens(const char *path, const char *categories, char *out, size_t size)
{
	struct tt_trace t = {0};
	size_t o = 0, events = 0;

	if (tt_load(path, TT_CHECK_ESCAPES, &t) != 0)
		fail_msg("%s", t.error);
	assert_true(t.complete);
	assert_true(t.n >= 2);
	const struct tt_event *first = &t.ev[0], *last = &t.ev[t.n - 1];
	assert_string_equal(first->name, "ringtrace: start");
	assert_string_equal(last->name, "ringtrace: end");
	const struct tt_arg *listed = tt_arg(first, "categories");
	if (categories == NULL || *categories == '\0') {
		assert_null(listed);
	} else {
		assert_non_null(listed);
		assert_string_equal(listed->s, categories);
	}
	out[0] = '\0';
	for (size_t i = 1; i + 1 < t.n; i++) {
		const struct tt_event *e = &t.ev[i];
		if (strcmp(e->ph, "M") == 0)
			continue;
		int k = snprintf(out + o, size - o, "%s%s/%s/%s", o > 0 ? " " : "", e->ph,
				 e->cat != NULL ? e->cat : "-", e->name);
		assert_true(k > 0 && (size_t)k < size - o);
		o += (size_t)k;
		events++;
	}
	struct rtr_stats st;
	rtr_stats_get(&st);
	assert_int_equal(tu_arg_int(last, "events"), (int64_t)st.events_written);
	assert_int_equal(tu_arg_int(last, "dropped"), 0);
	/* a folded B/E pair is one line, a thread name an M line: never fewer records */
	assert_true(st.events_written >= events);
	tt_free(&t);
}

/* ------------------------------------------------------------------------- */
/* The list's syntax                                                          */

static void lists_parse_with_blanks_and_minus_names(void **state)
{
	(void)state;
	struct rtr__filter f;
	char why[128] = "";

	assert_int_equal(rtr__filter_parse(NULL, &f, why, sizeof(why)), 0);
	assert_int_equal(f.n, 0);
	assert_int_equal(rtr__filter_parse("", &f, why, sizeof(why)), 0);
	assert_int_equal(f.n, 0);

	assert_int_equal(rtr__filter_parse("app,mpi", &f, why, sizeof(why)), 0);
	assert_int_equal(f.n, 2);
	assert_int_equal(f.includes, 2);
	assert_int_equal(f.entry[0].len, 3);
	assert_memory_equal(f.entry[1].name, "mpi", 3);
	assert_int_equal(f.entry[1].exclude, 0);

	assert_int_equal(rtr__filter_parse(" -debug ,\t- verbose", &f, why, sizeof(why)), 0);
	assert_int_equal(f.n, 2);
	assert_int_equal(f.includes, 0);
	assert_int_equal(f.entry[0].exclude, 1);
	assert_int_equal(f.entry[0].len, 5);
	assert_memory_equal(f.entry[0].name, "debug", 5);
	assert_int_equal(f.entry[1].len, 7);
	assert_memory_equal(f.entry[1].name, "verbose", 7);

	/* inner blanks and punctuation belong to the name; 64 bytes and 32 names fit */
	char longest[200], most[200];
	memset(longest, 'x', 64);
	longest[64] = '\0';
	assert_int_equal(rtr__filter_parse("my cat,a.b:c,-gpu/copy", &f, why, sizeof(why)), 0);
	assert_int_equal(f.entry[0].len, 6);
	assert_int_equal(f.includes, 2);
	assert_int_equal(rtr__filter_parse(longest, &f, why, sizeof(why)), 0);
	assert_int_equal(f.entry[0].len, 64);
	size_t o = 0;
	for (int i = 0; i < 32; i++)
		o += (size_t)snprintf(most + o, sizeof(most) - o, "%s%d", i ? "," : "", i);
	assert_int_equal(rtr__filter_parse(most, &f, why, sizeof(why)), 0);
	assert_int_equal(f.n, 32);
}

static void bad_lists_are_refused_with_a_reason(void **state)
{
	(void)state;
	struct rtr__filter f;
	char why[128];
	char longest[200], many[200], huge[1100];

	memset(longest, 'x', 65);
	longest[65] = '\0';
	size_t o = 0;
	for (int i = 0; i < 33; i++)
		o += (size_t)snprintf(many + o, sizeof(many) - o, "%s%d", i ? "," : "", i);
	memset(huge, 'a', sizeof(huge) - 1);
	for (size_t i = 8; i < sizeof(huge) - 1; i += 9)
		huge[i] = ','; /* short names: only the total is too long */
	huge[sizeof(huge) - 1] = '\0';

	static const struct {
		const char *spec, *reason;
	} bad[] = {
		{",", "name 1 is empty"},
		{"app,,mpi", "name 2 is empty"},
		{"app,", "name 2 is empty"},
		{"  ", "name 1 is empty"},
		{"-", "name 1 is empty"},
		{"app,- ", "name 2 is empty"},
		{"gpu*", "name 1 holds '*' (there are no wildcards)"},
		{"app,\x01", "name 2 holds a control byte"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		assert_int_equal(rtr__filter_parse(bad[i].spec, &f, why, sizeof(why)), -EINVAL);
		assert_string_equal(why, bad[i].reason);
		assert_int_equal(f.n, 0); /* left as no filter */
	}
	assert_int_equal(rtr__filter_parse(longest, &f, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "name 1 is longer than 64 bytes");
	assert_int_equal(rtr__filter_parse(many, &f, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "more than 32 names");
	assert_int_equal(rtr__filter_parse(huge, &f, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "longer than 1024 bytes");
}

static void decisions_follow_plain_and_minus_names_and_category_lists(void **state)
{
	(void)state;
	struct rtr__filter f;
	char why[128];

	assert_int_equal(rtr__filter_parse("app,mpi", &f, why, sizeof(why)), 0);
	assert_true(rtr__filter_allows(&f, "app"));
	assert_true(rtr__filter_allows(&f, "mpi"));
	assert_false(rtr__filter_allows(&f, "ap"));
	assert_false(rtr__filter_allows(&f, "appx"));
	assert_false(rtr__filter_allows(&f, "App")); /* exact, case included */
	assert_false(rtr__filter_allows(&f, "debug"));
	assert_false(rtr__filter_allows(&f, NULL));
	assert_false(rtr__filter_allows(&f, ""));
	assert_true(rtr__filter_allows(&f, "debug,mpi")); /* one part is enough */
	assert_true(rtr__filter_allows(&f, " debug , app "));
	assert_false(rtr__filter_allows(&f, "debug,,verbose"));

	assert_int_equal(rtr__filter_parse("-debug,-verbose", &f, why, sizeof(why)), 0);
	assert_true(rtr__filter_allows(&f, "app"));
	assert_true(rtr__filter_allows(&f, NULL));
	assert_true(rtr__filter_allows(&f, ","));
	assert_false(rtr__filter_allows(&f, "debug"));
	assert_false(rtr__filter_allows(&f, "debug,verbose"));
	assert_true(rtr__filter_allows(&f, "debug,gpu"));
	assert_false(rtr__filter_allows(&f, "debug,")); /* an empty part is no category */

	/* mixed: a plain name chooses, a minus name removes, the minus name wins */
	assert_int_equal(rtr__filter_parse("app,gpu,-gpu,-debug", &f, why, sizeof(why)), 0);
	assert_true(rtr__filter_allows(&f, "app"));
	assert_false(rtr__filter_allows(&f, "gpu"));
	assert_false(rtr__filter_allows(&f, "debug"));
	assert_false(rtr__filter_allows(&f, "mpi"));
	assert_true(rtr__filter_allows(&f, "debug,app"));
}

/* ------------------------------------------------------------------------- */
/* Which events a list keeps                                                  */

/* Every event call that takes a category, in several categories. */
static void record_workload(void)
{
	uint64_t t0 = rtr_now_ns();
	struct rtr_arg args[] = {RTR_ARG_I64("n", 7)};

	rtr_begin("app", "outer");
	rtr_instant("app", "i-app");
	rtr_instant("mpi", "i-mpi");
	rtr_instant("debug", "i-debug");
	rtr_instant("verbose", "i-verbose");
	rtr_instant(NULL, "i-none");
	rtr_instant("gpu,debug", "i-gpu-debug");
	rtr_counter_i64("mpi", "c-mpi", 1);
	rtr_counter_f64("debug", "c-debug", 2.5);
	rtr_complete("verbose", "x-verbose", t0, 10);
	rtr_begin("debug", "inner");
	rtr_instant("app", "i-inner");
	rtr_end("debug", "inner");
	{
		RTR_SCOPE("mpi", "scope-mpi");
	}
	{
		RTR_SCOPE("debug", "scope-debug");
	}
	rtr_instant_args("debug", "ia-debug", args, 1);
	rtr_instant_args("app", "ia-app", args, 1);
	rtr_begin_args("verbose", "ba-verbose", args, 1);
	rtr_instant_copy("mpi", "ic-mpi");
	rtr_end("verbose", "ba-verbose");
	rtr_complete_args("mpi", "xa-mpi", t0, 5, args, 1);
	rtr_complete_copy("debug", "xc-debug", t0, 5);
	rtr_begin_copy("app", "bc-app");
	rtr_instant("verbose", "i-verbose-2");
	rtr_end("app", "bc-app");
	rtr_end("app", "outer");
}

/* Each slice is one X, in the file where its E was recorded. */
static const char all_events[] =
	"i/app/i-app i/mpi/i-mpi i/debug/i-debug i/verbose/i-verbose "
	"i/-/i-none i/gpu,debug/i-gpu-debug C/mpi/c-mpi C/debug/c-debug X/verbose/x-verbose "
	"i/app/i-inner X/debug/inner X/mpi/scope-mpi X/debug/scope-debug "
	"i/debug/ia-debug i/app/ia-app i/mpi/ic-mpi X/verbose/ba-verbose "
	"X/mpi/xa-mpi X/debug/xc-debug i/verbose/i-verbose-2 X/app/bc-app "
	"X/app/outer";

/* Record the workload under the list `categories`; compare with `want`, whose X lines
 * of the slices begun with rtr_begin*() (`slices` of them) stand for two events each. */
static void check_workload(const char *name, const char *categories, const char *want,
			   size_t slices)
{
	char path[4096], got[4096];
	struct rtr_stats st;
	size_t n = 1 + slices;

	for (const char *p = want; *p != '\0'; p++)
		n += *p == ' ';
	make_path(path, sizeof(path), name);
	start_with(path, categories);
	record_workload();
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	/* filtered events are not recorded, not dropped: only the kept ones count */
	assert_int_equal(st.events_recorded, n);
	assert_int_equal(st.events_written, n);
	assert_int_equal(st.events_dropped, 0);
	trace_tokens(path, categories, got, sizeof(got));
	assert_string_equal(got, want);
}

static void no_list_records_every_category(void **state)
{
	(void)state;
	check_workload("none", NULL, all_events, 4);
	check_workload("empty", "", all_events, 4); /* "" is no list either */
}

static void plain_names_record_only_those_categories(void **state)
{
	(void)state;
	/* "bc-app", whose B carries a copied name, is one X too */
	check_workload("include", "app,mpi",
		       "i/app/i-app i/mpi/i-mpi C/mpi/c-mpi i/app/i-inner "
		       "X/mpi/scope-mpi i/app/ia-app i/mpi/ic-mpi X/mpi/xa-mpi "
		       "X/app/bc-app X/app/outer",
		       2);
}

static void minus_names_record_all_but_those(void **state)
{
	(void)state;
	check_workload("exclude", "-debug,-verbose",
		       "i/app/i-app i/mpi/i-mpi i/-/i-none i/gpu,debug/i-gpu-debug "
		       "C/mpi/c-mpi i/app/i-inner X/mpi/scope-mpi i/app/ia-app i/mpi/ic-mpi "
		       "X/mpi/xa-mpi X/app/bc-app X/app/outer",
		       2);
}

static void mixed_list_keeps_chosen_categories_less_the_removed(void **state)
{
	(void)state;
	/* "gpu,debug" stays: its part "gpu" is chosen */
	check_workload("mixed", " app , gpu , -debug ",
		       "i/app/i-app i/gpu,debug/i-gpu-debug i/app/i-inner "
		       "i/app/ia-app X/app/bc-app X/app/outer",
		       2);
}

/* A disabled slice around enabled events, enabled slices around disabled ones, and
 * begin/end across them: the file keeps whole pairs, each E closing its own B. */
static void slices_of_a_disabled_category_vanish_whole(void **state)
{
	(void)state;
	char path[4096], got[4096];

	make_path(path, sizeof(path), "nesting");
	start_with(path, "-debug");
	for (int i = 0; i < 2; i++) {
		rtr_begin("debug", "d1");
		rtr_begin("app", "a1");
		rtr_begin("debug", "d2");
		rtr_instant("app", "mark");
		rtr_begin("app", "a2");
		rtr_end("app", "a2");
		rtr_end("debug", "d2");
		rtr_end("app", "a1");
		rtr_end("debug", "d1");
	}
	assert_int_equal(rtr_stop(), 0);
	trace_tokens(path, "-debug", got, sizeof(got));
	assert_string_equal(got, "i/app/mark X/app/a2 X/app/a1 "
				 "i/app/mark X/app/a2 X/app/a1");
}

/* The calls of the event model beyond the basic ones: each follows the list. */
static void flows_async_scoped_instants_and_counters_follow_the_list(void **state)
{
	(void)state;
	char path[4096], got[4096];
	struct rtr_arg used[] = {RTR_ARG_I64("used", 1), RTR_ARG_I64("free", 2)};

	make_path(path, sizeof(path), "model");
	start_with(path, "-debug");
	rtr_begin("app", "outer");
	rtr_instant_scoped("debug", "is-debug", RTR_INSTANT_GLOBAL, NULL, 0);
	rtr_instant_scoped("app", "is-app", RTR_INSTANT_PROCESS, NULL, 0);
	rtr_counter_args("debug", "ca-debug", used, 2);
	rtr_counter_args("app", "ca-app", used, 2);
	rtr_flow_start("debug", "f-debug", 1);
	rtr_flow_start("app", "f-app", 2);
	rtr_flow_step("debug", "f-debug", 1);
	rtr_flow_step("app", "f-app", 2);
	rtr_flow_end("debug", "f-debug", 1);
	rtr_flow_end("app", "f-app", 2);
	rtr_async_begin("debug", "a-debug", 3, NULL, 0);
	rtr_async_begin("app", "a-app", 4, NULL, 0);
	rtr_async_instant("debug", "a-debug", 3, NULL, 0);
	rtr_async_instant("app", "a-app", 4, NULL, 0);
	rtr_async_end("debug", "a-debug", 3);
	rtr_async_end("app", "a-app", 4);
	rtr_end("app", "outer");
	assert_int_equal(rtr_stop(), 0);
	trace_tokens(path, "-debug", got, sizeof(got));
	assert_string_equal(got, "i/app/is-app C/app/ca-app s/app/f-app t/app/f-app "
				 "f/app/f-app b/app/a-app n/app/a-app e/app/a-app X/app/outer");
}

static void thread_names_are_never_filtered(void **state)
{
	(void)state;
	char path[4096], got[256];
	struct tt_trace t = {0};
	struct rtr_stats st;

	make_path(path, sizeof(path), "thread-name");
	start_with(path, "nothing-here");
	rtr_thread_name("filtered main");
	rtr_instant("app", "gone");
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.events_recorded, 1); /* the thread name */
	trace_tokens(path, "nothing-here", got, sizeof(got));
	assert_string_equal(got, "");
	assert_int_equal(tt_load(path, 0, &t), 0);
	int named = 0;
	for (size_t i = 0; i < t.n; i++)
		named += strcmp(t.ev[i].ph, "M") == 0 && tu_is(t.ev[i].name, "thread_name") &&
			 tu_is(tt_arg(&t.ev[i], "name")->s, "filtered main");
	assert_true(named >= 1);
	tt_free(&t);
}

/* ------------------------------------------------------------------------- */
/* Caches across sessions                                                     */

/* Two scope sites and two instants; each call site's cache outlives the session. */
static void record_sites(void)
{
	{
		RTR_SCOPE("app", "s-app");
		rtr_instant("debug", "i-debug");
	}
	{
		RTR_SCOPE("debug", "s-debug");
		rtr_instant("app", "i-app");
	}
}

static void scope_sites_follow_each_sessions_list(void **state)
{
	(void)state;
	static const struct {
		const char *categories, *want;
	} sessions[] = {
		{"app", "X/app/s-app i/app/i-app"},
		{"-app", "i/debug/i-debug X/debug/s-debug"},
		{NULL, "i/debug/i-debug X/app/s-app i/app/i-app X/debug/s-debug"},
		{"app", "X/app/s-app i/app/i-app"},
		{"debug", "i/debug/i-debug X/debug/s-debug"},
		{"-debug", "X/app/s-app i/app/i-app"},
		{"mpi", ""},
	};
	char path[4096], got[512], want[512];

	record_sites(); /* before any start: records nothing, caches nothing */
	for (size_t i = 0; i < sizeof(sessions) / sizeof(sessions[0]); i++) {
		make_path(path, sizeof(path), "sites");
		start_with(path, sessions[i].categories);
		for (int k = 0; k < 3; k++) /* the second and third calls hit the caches */
			record_sites();
		assert_int_equal(rtr_stop(), 0);
		record_sites(); /* after stop: nothing */
		snprintf(want, sizeof(want), "%s%s%s%s%s", sessions[i].want,
			 *sessions[i].want ? " " : "", sessions[i].want,
			 *sessions[i].want ? " " : "", sessions[i].want);
		trace_tokens(path, sessions[i].categories, got, sizeof(got));
		assert_string_equal(got, want);
	}
}

/* More categories than the thread's cache has slots, so they evict one another, and
 * equal strings at other addresses: every decision is still by content. */
static void many_categories_and_copies_decide_by_content(void **state)
{
	(void)state;
	enum { CATS = 100 };
	static char cats[CATS][8];
	static char copy_of_c50[8];
	char path[4096], want[4096];
	char *got = tu_own(1, 65536);

	for (int i = 0; i < CATS; i++)
		snprintf(cats[i], sizeof(cats[i]), "c%d", i);
	snprintf(copy_of_c50, sizeof(copy_of_c50), "c50");
	make_path(path, sizeof(path), "many");
	start_with(path, "c3,c50,c97");
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < CATS; i++)
			rtr_instant(cats[i], "e");
		rtr_instant(copy_of_c50, "copy");
	}
	assert_int_equal(rtr_stop(), 0);
	trace_tokens(path, "c3,c50,c97", got, 65536);
	snprintf(want, sizeof(want), "%s %s %s", "i/c3/e i/c50/e i/c97/e i/c50/copy",
		 "i/c3/e i/c50/e i/c97/e i/c50/copy", "i/c3/e i/c50/e i/c97/e i/c50/copy");
	assert_string_equal(got, want);
}

/* ------------------------------------------------------------------------- */
/* Environment and config                                                     */

static void set_or_unset(const char *name, const char *value)
{
	if (value != NULL)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

static void environment_sets_the_list_and_a_field_set_after_init_wins(void **state)
{
	(void)state;
	char path[4096], got[1024];
	struct rtr_config cfg;
	char *saved_file = getenv("RINGTRACE_FILE") ? strdup(getenv("RINGTRACE_FILE")) : NULL;

	setenv("RINGTRACE_CATEGORIES", "mpi", 1);
	rtr_config_init(&cfg);
	assert_non_null(cfg.categories);
	assert_string_equal(cfg.categories, "mpi");

	/* rtr_start(NULL): the environment alone */
	make_path(path, sizeof(path), "env");
	setenv("RINGTRACE_FILE", path, 1);
	assert_int_equal(rtr_start(NULL), 0);
	record_workload();
	assert_int_equal(rtr_stop(), 0);
	set_or_unset("RINGTRACE_FILE", saved_file);
	free(saved_file);
	trace_tokens(path, "mpi", got, sizeof(got));
	assert_string_equal(got, "i/mpi/i-mpi C/mpi/c-mpi X/mpi/scope-mpi i/mpi/ic-mpi "
				 "X/mpi/xa-mpi");

	/* over the environment's list, as for every field (docs/configuration.md) */
	make_path(path, sizeof(path), "env-field");
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.categories = "verbose";
	assert_int_equal(rtr_start(&cfg), 0);
	record_workload();
	assert_int_equal(rtr_stop(), 0);
	trace_tokens(path, "verbose", got, sizeof(got));
	/* with i-mpi between them gone, ba-verbose's B and E fold into one X */
	assert_string_equal(got, "i/verbose/i-verbose X/verbose/x-verbose X/verbose/ba-verbose "
				 "i/verbose/i-verbose-2");

	/* a field set to NULL after init records everything */
	make_path(path, sizeof(path), "env-null");
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.categories = NULL;
	assert_int_equal(rtr_start(&cfg), 0);
	record_workload();
	assert_int_equal(rtr_stop(), 0);
	trace_tokens(path, NULL, got, sizeof(got));
	assert_string_equal(got, all_events);
	unsetenv("RINGTRACE_CATEGORIES");
}

/* rtr_config_init() with RINGTRACE_CATEGORIES=value; its stderr into err. */
static void config_init_capturing_stderr(const char *value, struct rtr_config *cfg, char *err,
					 size_t size)
{
	char log[4096];

	tu_own_file(log, sizeof(log), "filter", "stderr", ".log");
	setenv("RINGTRACE_CATEGORIES", value, 1);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(saved >= 0 && fd >= 0);
	assert_true(dup2(fd, STDERR_FILENO) >= 0);
	close(fd);
	rtr_config_init(cfg);
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	unsetenv("RINGTRACE_CATEGORIES");

	FILE *f = fopen(log, "re");
	assert_non_null(f);
	size_t n = fread(err, 1, size - 1, f);
	err[n] = '\0';
	fclose(f);
}

static void bad_environment_list_warns_and_records_everything(void **state)
{
	(void)state;
	char path[4096], got[4096], err[1024];
	struct rtr_config cfg;

	config_init_capturing_stderr("app,,mpi", &cfg, err, sizeof(err));
	assert_null(cfg.categories);
	assert_string_equal(err,
			    "ringtrace: RINGTRACE_CATEGORIES=\"app,,mpi\" is not a category list: "
			    "name 2 is empty. Expected names separated by commas, each with an "
			    "optional '-' to leave it out, as in \"app,mpi\" or "
			    "\"-debug,-verbose\"; recording every category\n");
	config_init_capturing_stderr("gpu*", &cfg, err, sizeof(err));
	assert_null(cfg.categories);
	assert_non_null(strstr(err, "there are no wildcards"));
	config_init_capturing_stderr("-", &cfg, err, sizeof(err));
	assert_null(cfg.categories);
	assert_non_null(strstr(err, "name 1 is empty"));
	config_init_capturing_stderr("-debug", &cfg, err, sizeof(err));
	assert_string_equal(err, ""); /* a good list: not a word */
	assert_string_equal(cfg.categories, "-debug");

	config_init_capturing_stderr("app,", &cfg, err, sizeof(err));
	make_path(path, sizeof(path), "bad-env");
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	assert_int_equal(rtr_start(&cfg), 0);
	record_workload();
	assert_int_equal(rtr_stop(), 0);
	trace_tokens(path, NULL, got, sizeof(got));
	assert_string_equal(got, all_events);
}

static void bad_list_in_the_config_is_refused(void **state)
{
	(void)state;
	char path[4096];
	struct rtr_config cfg;

	make_path(path, sizeof(path), "bad-cfg");
	rtr_config_init(&cfg);
	cfg.path = path;
	static const char *const bad[] = {"app,,mpi", ",", "-", "a*", " "};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cfg.categories = bad[i];
		assert_int_equal(rtr_start(&cfg), -EINVAL);
		assert_int_equal(access(path, F_OK), -1); /* no file was made */
	}
	cfg.categories = "app";
	assert_int_equal(rtr_start(&cfg), 0);
	assert_int_equal(rtr_stop(), 0);
}

/* ------------------------------------------------------------------------- */
/* Threads                                                                    */

#define THREADS 6

struct worker {
	pthread_t thread;
	uint64_t iterations; /* 0: until stop is set */
	int *stop;
	int churn; /* cycle through more categories than a thread's cache holds */
	uint64_t done;
};

/* Categories "c00" .. "c23" for churn: more than a thread's cache holds, so every call
 * misses it and compares its category with the list's names of the same length. */
#define CHURN_CATS 24
static char churn_cats[CHURN_CATS][8];

/* Per iteration, with the list "app,mpi": B span, i m, X sa, C cm, E span kept. */
static void record_iteration(uint64_t i)
{
	rtr_begin("app", "span");
	rtr_instant("debug", "d");
	rtr_instant("mpi", "m");
	{
		RTR_SCOPE("debug", "sd");
	}
	{
		RTR_SCOPE("app", "sa");
	}
	rtr_begin("debug", "dspan");
	rtr_counter_i64("mpi", "cm", (int64_t)i);
	rtr_end("debug", "dspan");
	rtr_end("app", "span");
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (uint64_t i = 0; w->iterations == 0 || i < w->iterations; i++) {
		/* acquire: pairs with the release in the test; nothing else rides on it */
		if (w->stop != NULL && __atomic_load_n(w->stop, __ATOMIC_ACQUIRE))
			break;
		if (!w->churn) {
			record_iteration(i);
		} else {
			/* mostly lookups that record nothing: then many reads of the list are
			 * unordered with the next rtr_start(), and TSan sees a racy one */
			rtr_instant(churn_cats[i % CHURN_CATS], "churn");
			if (i % 64 == 0)
				record_iteration(i);
		}
		w->done++;
	}
	return NULL;
}

struct per_thread {
	int64_t tid;
	uint64_t b, m, sa, cm;
	uint64_t m_ts, last_ts; /* the iteration's instant; its latest time */
	int64_t depth;
};

struct count_ctx {
	struct per_thread t[THREADS + 1];
	size_t n;
	char err[256];
};

static int count_event(const struct tt_event *ev, void *arg)
{
	struct count_ctx *c = arg;

	if (ev->cat == NULL) /* the markers */
		return 0;
	TU_WALK_CHECK(c, ev, tu_is(ev->cat, "app") || tu_is(ev->cat, "mpi"),
		      "category %s is not in the list", ev->cat);
	size_t k = 0;
	while (k < c->n && c->t[k].tid != ev->tid)
		k++;
	TU_WALK_CHECK(c, ev, k <= THREADS, "more threads than started");
	if (k == c->n)
		c->t[c->n++].tid = ev->tid;
	struct per_thread *t = &c->t[k];
	/* per iteration: i m, X sa, C cm, then the X of "span", which holds them */
	TU_WALK_CHECK(c, ev, strcmp(ev->ph, "B") != 0 && strcmp(ev->ph, "E") != 0,
		      "%s %s: a slice is one X", ev->ph, ev->name);
	if (strcmp(ev->ph, "i") == 0) {
		TU_WALK_CHECK(c, ev, tu_is(ev->name, "m") && t->depth == 0, "i %s", ev->name);
		t->m++;
		t->depth++;
		t->m_ts = ev->ts_ns;
	} else if (strcmp(ev->ph, "X") == 0 && tu_is(ev->name, "span")) {
		TU_WALK_CHECK(c, ev,
			      t->depth == 1 && t->sa == t->m && t->cm == t->m &&
				      ev->ts_ns <= t->m_ts && ev->ts_ns + ev->dur_ns >= t->last_ts,
			      "X span: not around its iteration");
		t->b++;
		t->depth--;
	} else if (strcmp(ev->ph, "X") == 0) {
		TU_WALK_CHECK(c, ev, tu_is(ev->name, "sa") && t->depth == 1, "X %s", ev->name);
		t->sa++;
		t->last_ts = ev->ts_ns + ev->dur_ns;
	} else if (strcmp(ev->ph, "C") == 0) {
		TU_WALK_CHECK(c, ev,
			      tu_is(ev->name, "cm") && tu_arg_int(ev, "value") == (int64_t)t->cm,
			      "C %s", ev->name);
		TU_WALK_CHECK(c, ev, t->depth == 1, "C outside its span");
		t->cm++;
		t->last_ts = ev->ts_ns;
	}
	return 0;
}

static void threads_under_a_list_record_exactly_its_categories(void **state)
{
	(void)state;
	char path[4096];
	struct worker w[THREADS];
	struct count_ctx *c = tu_own(1, sizeof(*c));
	uint64_t iterations = tu_scaled(20000, 1000);

	make_path(path, sizeof(path), "threads");
	start_with(path, "app,mpi");
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){.iterations = iterations};
		assert_int_equal(pthread_create(&w[i].thread, NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(w[i].thread, NULL), 0);
	assert_int_equal(rtr_stop(), 0);

	struct rtr_stats st;
	rtr_stats_get(&st);
	assert_int_equal(st.events_dropped, 0);
	assert_int_equal(st.events_recorded, (uint64_t)THREADS * iterations * 5);
	struct tt_trace info = tu_walk(path, 0, count_event, c, c->err);
	assert_true(info.complete);
	assert_int_equal(c->n, THREADS);
	for (size_t k = 0; k < c->n; k++) {
		assert_int_equal(c->t[k].b, iterations);
		assert_int_equal(c->t[k].m, iterations);
		assert_int_equal(c->t[k].sa, iterations);
		assert_int_equal(c->t[k].cm, iterations);
		assert_int_equal(c->t[k].depth, 0);
	}
}

/* Categories in a session's file that its list leaves out: only events that raced
 * with the restart (a call that read the last session's state, a scope begun in
 * it) may carry one; at most two per thread. */
struct stray_ctx {
	const char *categories;
	struct rtr__filter f;
	uint64_t stray, events;
	char err[256];
};

static int count_stray(const struct tt_event *ev, void *arg)
{
	struct stray_ctx *c = arg;

	if (ev->cat == NULL)
		return 0;
	c->events++;
	c->stray += !rtr__filter_allows(&c->f, ev->cat);
	return 0;
}

static void threads_racing_with_restarts_under_changing_lists(void **state)
{
	(void)state;
	static const char *const lists[] = {"app,mpi,c01",   "-app,-c02",	 NULL,
					    "debug,c03,c04", "-mpi,-debug,-c05", "c06,c07"};
	char path[4096];
	struct worker w[THREADS];
	int stop = 0;
	int sessions = (int)tu_scaled(40, 10);
	uint64_t total = 0;

	for (int i = 0; i < CHURN_CATS; i++)
		snprintf(churn_cats[i], sizeof(churn_cats[i]), "c%02d", i);
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){.stop = &stop, .churn = 1};
		assert_int_equal(pthread_create(&w[i].thread, NULL, worker_main, &w[i]), 0);
	}
	for (int s = 0; s < sessions; s++) {
		const char *list = lists[s % (sizeof(lists) / sizeof(lists[0]))];
		struct rtr_config cfg;
		struct stray_ctx c = {.categories = list};
		char why[128];

		make_path(path, sizeof(path), "racing");
		rtr_config_init(&cfg);
		cfg.path = path;
		cfg.categories = list;
		cfg.ring_bytes = (size_t)1 << 16; /* drop mode: the workers never wait */
		assert_int_equal(rtr_start(&cfg), 0);
		nanosleep(&(struct timespec){.tv_nsec = 2 * 1000 * 1000}, NULL);
		assert_int_equal(rtr_stop(), 0);

		struct rtr_stats st;
		rtr_stats_get(&st);
		/* A call racing with rtr_stop() may publish after the writer's last drain
		 * and before its last count: it shows as recorded, and is written in the
		 * next session. At most one per thread. */
		assert_true(st.events_written + st.events_dropped <= st.events_recorded);
		assert_true(st.events_recorded - st.events_written - st.events_dropped <= THREADS);
		assert_int_equal(rtr__filter_parse(list, &c.f, why, sizeof(why)), 0);
		struct tt_trace info = tu_walk(path, 0, count_stray, &c, c.err);
		assert_true(info.complete);
		assert_true(c.stray <= 2 * THREADS);
		total += c.events;
	}
	/* release: pairs with the workers' acquire */
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(w[i].thread, NULL), 0);
	print_message("%d sessions, %llu events written\n", sessions, (unsigned long long)total);
}

/*
 * A probe for TSan. A thread that only looks up categories the list leaves out
 * records nothing, so nothing orders its reads of the list before the next
 * rtr_start() rewrites it: the two flags below are relaxed on purpose. Any plain
 * access to the list on either side is then a data race TSan reports, every run.
 */
struct probe {
	int looked_up; /* the thread has made its lookups; relaxed */
	int may_exit;  /* the test has restarted the recorder; relaxed */
};

/* A scope site whose category both lists leave out: its cached decision is written
 * by the probe thread in one session and by the test in the next. */
static void probe_site(void)
{
	RTR_SCOPE("c01", "never");
}

static void *probe_main(void *arg)
{
	struct probe *p = arg;

	for (int round = 0; round < 2; round++)
		for (int i = 0; i < CHURN_CATS; i++)
			rtr_instant(churn_cats[i], "never");
	probe_site();
	/* relaxed: no happens-before with the test, see above */
	__atomic_store_n(&p->looked_up, 1, __ATOMIC_RELAXED);
	while (!__atomic_load_n(&p->may_exit, __ATOMIC_RELAXED)) /* relaxed: as above */
		sched_yield();
	return NULL;
}

static void lookups_unordered_with_the_next_start_are_no_race(void **state)
{
	(void)state;
	char path[4096];
	struct probe p = {0, 0};
	pthread_t thread;

	for (int i = 0; i < CHURN_CATS; i++)
		snprintf(churn_cats[i], sizeof(churn_cats[i]), "c%02d", i);
	make_path(path, sizeof(path), "probe");
	start_with(path, "aaa,bbb,-c00"); /* names of the churn's length: compared byte by byte */
	assert_int_equal(pthread_create(&thread, NULL, probe_main, &p), 0);
	while (!__atomic_load_n(&p.looked_up, __ATOMIC_RELAXED)) /* relaxed: see probe */
		sched_yield();
	assert_int_equal(rtr_stop(), 0);
	start_with(path, "ccc,-ddd");
	probe_site();
	__atomic_store_n(&p.may_exit, 1, __ATOMIC_RELAXED); /* relaxed: see probe */
	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_int_equal(rtr_stop(), 0);

	struct rtr_stats st;
	rtr_stats_get(&st);
	assert_int_equal(st.events_recorded, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lists_parse_with_blanks_and_minus_names),
		cmocka_unit_test(bad_lists_are_refused_with_a_reason),
		cmocka_unit_test(decisions_follow_plain_and_minus_names_and_category_lists),
		cmocka_unit_test_setup_teardown(no_list_records_every_category, setup, tu_teardown),
		cmocka_unit_test_setup_teardown(plain_names_record_only_those_categories, setup,
						tu_teardown),
		cmocka_unit_test_setup_teardown(minus_names_record_all_but_those, setup,
						tu_teardown),
		cmocka_unit_test_setup_teardown(mixed_list_keeps_chosen_categories_less_the_removed,
						setup, tu_teardown),
		cmocka_unit_test_setup_teardown(slices_of_a_disabled_category_vanish_whole, setup,
						tu_teardown),
		cmocka_unit_test_setup_teardown(
			flows_async_scoped_instants_and_counters_follow_the_list, setup,
			tu_teardown),
		cmocka_unit_test_setup_teardown(thread_names_are_never_filtered, setup,
						tu_teardown),
		cmocka_unit_test_setup_teardown(scope_sites_follow_each_sessions_list, setup,
						tu_teardown),
		cmocka_unit_test_setup_teardown(many_categories_and_copies_decide_by_content, setup,
						tu_teardown),
		cmocka_unit_test_setup_teardown(
			environment_sets_the_list_and_a_field_set_after_init_wins, setup,
			tu_teardown),
		cmocka_unit_test_setup_teardown(bad_environment_list_warns_and_records_everything,
						setup, tu_teardown),
		cmocka_unit_test_setup_teardown(bad_list_in_the_config_is_refused, setup,
						tu_teardown),
		cmocka_unit_test_setup_teardown(threads_under_a_list_record_exactly_its_categories,
						setup, tu_teardown),
		cmocka_unit_test_setup_teardown(threads_racing_with_restarts_under_changing_lists,
						setup, tu_teardown),
		cmocka_unit_test_setup_teardown(lookups_unordered_with_the_next_start_are_no_race,
						setup, tu_teardown),
	};
	tu_filter_from_env();
	return cmocka_run_group_tests_name("filter", tests, NULL, NULL);
}
