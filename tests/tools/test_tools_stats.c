/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace stats` end to end, and its sketch.
 *
 * - A golden file whose every number was worked out by hand (nested B/E and X, X out
 *   of order on a thread, the same names on overlapping threads, an E without a B,
 *   async spans, counters, an end marker): the --json document, parsed back with
 *   yajl's tree API, holds exactly those numbers, by name, category and thread; the
 *   table for people shows them too.
 * - Generated files of about 50 000 slices on three threads (a long parent written
 *   last, as the recorder writes RTR_SCOPE, thousands of top-level slices, B/E
 *   parents with X children), in the recorder's order and in order of start, plain
 *   and gzip: the tool's numbers equal the ones the test works out itself from the
 *   whole file in memory (tests/support/trace_read.c, a parser that is not the
 *   tool's, and the obvious sort-then-stack nesting that a streaming tool cannot use).
 * - Cut files, a provisional end marker, malformed input, standard input, usage.
 * - What the design admits it cannot do exactly (slices too far out of order, a late
 *   parent that starts inside a merged run) is counted and warned about.
 */
#include <ringtrace.h>

#include "common/sketch.h"
#include "json_tree.h"
#include "tool_test.h"
#include "trace_read.h"

#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* ------------------------------------------------------------- JSON helpers */

static yajl_val parse_doc(const char *text)
{
	yajl_val v = jt_parse(text, "stats --json");

	assert_true(YAJL_IS_OBJECT(v));
	return v;
}

/* The rows of "slices" (or "async"). */
static yajl_val rows_of(yajl_val doc, const char *section)
{
	return jt_array(jt_at(doc, section), "rows");
}

/* Run `ringtrace stats --json ARGS... FILE` and parse what it prints; status wanted. */
static yajl_val run_json(int status, const char *file, const char *a1, const char *a2)
{
	const char *args[8] = {"stats", "--json", "--top", "0"};
	size_t n = 4;
	struct tool_run r;
	yajl_val doc;

	if (a1 != NULL)
		args[n++] = a1;
	if (a2 != NULL)
		args[n++] = a2;
	args[n++] = file;
	args[n] = NULL;
	tool_runv(&r, NULL, NULL, args);
	if (r.status != status)
		fail_msg("stats %s: exit %d, want %d\n%s%s", file, r.status, status, r.out, r.err);
	doc = parse_doc(r.out);
	tool_run_free(&r);
	return doc;
}

/* ------------------------------------------------------------ golden file */

struct want_row {
	const char *key;
	long long count, total, self, mean, min, p50, p99, max; /* us, but mean in ns */
};

static void expect_rows(yajl_val rows, const struct want_row *want, size_t n)
{
	assert_int_equal(rows->u.array.len, n);
	for (size_t i = 0; i < n; i++) {
		yajl_val r = rows->u.array.values[i];
		const struct want_row *w = &want[i];

		if (strcmp(jt_str(r, "key"), w->key) != 0)
			fail_msg("row %zu is \"%s\", want \"%s\"", i, jt_str(r, "key"), w->key);
		assert_int_equal(jt_int(r, "count"), w->count);
		assert_int_equal(jt_int(r, "total_ns"), w->total * 1000);
		assert_int_equal(jt_int(r, "self_ns"), w->self * 1000);
		assert_int_equal(jt_int(r, "mean_ns"), w->mean);
		assert_int_equal(jt_int(r, "min_ns"), w->min * 1000);
		assert_int_equal(jt_int(r, "p50_ns"), w->p50 * 1000);
		assert_int_equal(jt_int(r, "p99_ns"), w->p99 * 1000);
		assert_int_equal(jt_int(r, "max_ns"), w->max * 1000);
	}
}

static void golden_by_name_matches_hand_computed_values(void **state)
{
	/* Thread 1/10: B frame [0,100] holds X draw [10,30] and B update [40,70], which
	 * holds X physics [45,55]. Thread 1/11, in no order: job [0,1000] holds steps
	 * [100,200], [300,400], [600,800]; sub [320,370] is in the second step. Thread
	 * 2/20: frame [50,150] holds draw [60,90], the child written first. */
	static const struct want_row want[] = {
		{"job", 1, 1000, 600, 1000000, 1000, 1000, 1000, 1000},
		{"step", 3, 400, 350, 133333, 100, 100, 200, 200},
		{"frame", 2, 200, 120, 100000, 100, 100, 100, 100},
		{"draw", 2, 50, 50, 25000, 20, 20, 30, 30}, /* before sub: first seen */
		{"sub", 1, 50, 50, 50000, 50, 50, 50, 50},
		{"update", 1, 30, 20, 30000, 30, 30, 30, 30},
		{"physics", 1, 10, 10, 10000, 10, 10, 10, 10},
	};
	yajl_val doc = run_json(0, tool_data("data/stats_golden.json"), NULL, NULL);
	yajl_val rec = jt_at(doc, "recorder"), an = jt_at(doc, "anomalies"), a, t;

	(void)state;
	assert_string_equal(jt_str(doc, "by"), "name");
	assert_true(fabs(jt_double(doc, "relative_error") - 0.01) < 1e-12);
	assert_int_equal(jt_int(doc, "events"), 31);
	assert_int_equal(jt_int(doc, "thread_count"), 5);
	assert_true(YAJL_IS_TRUE(jt_at(doc, "complete")));
	assert_true(YAJL_IS_FALSE(jt_at(doc, "cut")));
	assert_true(YAJL_IS_NULL(jt_at(doc, "error")));
	assert_int_equal(jt_int(doc, "first_ns"), 0);
	assert_int_equal(jt_int(doc, "span_ns"), 2000000);
	assert_int_equal(jt_array(doc, "warnings")->u.array.len, 0);
	/* The recorder's counts. */
	assert_true(YAJL_IS_TRUE(jt_at(rec, "final")));
	assert_true(YAJL_IS_FALSE(jt_at(rec, "repaired")));
	assert_int_equal(jt_int(rec, "dropped"), 7);
	assert_int_equal(jt_int(rec, "dropped_ring_full"), 4);
	assert_int_equal(jt_int(rec, "dropped_too_large"), 2);
	assert_int_equal(jt_int(rec, "dropped_io"), 1);
	assert_int_equal(jt_int(rec, "args_cut"), 3);
	/* Slices. */
	assert_int_equal(jt_int(jt_at(doc, "slices"), "count"), 11);
	assert_int_equal(jt_int(jt_at(doc, "slices"), "keys"), 7);
	expect_rows(rows_of(doc, "slices"), want, sizeof(want) / sizeof(want[0]));
	/* Busy share: busiest first; a tie keeps the order of appearance. */
	t = jt_array(doc, "threads");
	assert_int_equal(t->u.array.len, 3);
	{
		static const struct {
			long long pid, tid, busy, span;
			const char *label, *proc, *thread;
		} wt[] = {
			{1, 11, 1000000, 2000000, "app / worker (1/11)", "app", "worker"},
			{1, 10, 100000, 100000, "app / main (1/10)", "app", "main"},
			{2, 20, 100000, 150000, "gpu (2/20)", "gpu", NULL},
		};

		for (size_t i = 0; i < 3; i++) {
			yajl_val th = t->u.array.values[i];

			assert_int_equal(jt_int(th, "pid"), wt[i].pid);
			assert_int_equal(jt_int(th, "tid"), wt[i].tid);
			assert_int_equal(jt_int(th, "busy_ns"), wt[i].busy);
			assert_int_equal(jt_int(th, "span_ns"), wt[i].span);
			assert_string_equal(jt_str(th, "label"), wt[i].label);
			assert_string_equal(jt_str(th, "process_name"), wt[i].proc);
			if (wt[i].thread == NULL)
				assert_null(jt_str_or_null(th, "thread_name"));
			else
				assert_string_equal(jt_str(th, "thread_name"), wt[i].thread);
			assert_true(fabs(jt_double(th, "busy_share") -
					 (double)wt[i].busy / (double)wt[i].span) < 1e-12);
		}
	}
	/* Async: load ids 1, 2 and "0x3" (100, 50, 300 us); an e without its b, a b
	 * never ended. */
	a = jt_at(doc, "async");
	assert_int_equal(jt_int(a, "count"), 3);
	{
		static const struct want_row load[] = {
			{"load", 3, 450, 0, 150000, 50, 100, 300, 300},
		};
		yajl_val r = rows_of(doc, "async");

		assert_int_equal(r->u.array.len, 1);
		assert_string_equal(jt_str(r->u.array.values[0], "name"), "load");
		assert_int_equal(jt_int(r->u.array.values[0], "count"), load[0].count);
		assert_int_equal(jt_int(r->u.array.values[0], "total_ns"), load[0].total * 1000);
		assert_int_equal(jt_int(r->u.array.values[0], "mean_ns"), load[0].mean);
		assert_int_equal(jt_int(r->u.array.values[0], "min_ns"), load[0].min * 1000);
		assert_int_equal(jt_int(r->u.array.values[0], "p50_ns"), load[0].p50 * 1000);
		assert_int_equal(jt_int(r->u.array.values[0], "p99_ns"), load[0].p99 * 1000);
		assert_int_equal(jt_int(r->u.array.values[0], "max_ns"), load[0].max * 1000);
	}
	/* Counters: one series per key, in file order. */
	{
		yajl_val c = jt_array(doc, "counters"), used, free_;

		assert_int_equal(c->u.array.len, 2);
		used = c->u.array.values[0];
		free_ = c->u.array.values[1];
		assert_string_equal(jt_str(used, "name"), "mem");
		assert_string_equal(jt_str(used, "series"), "used");
		assert_int_equal(jt_int(used, "samples"), 2);
		assert_true(jt_double(used, "min") == 10.0 && jt_double(used, "max") == 30.5);
		assert_string_equal(jt_str(free_, "series"), "free");
		assert_true(jt_double(free_, "min") == 1.0 && jt_double(free_, "max") == 5.0);
	}
	assert_int_equal(jt_int(an, "end_without_begin"), 1);
	assert_int_equal(jt_int(an, "async_unmatched_end"), 1);
	assert_int_equal(jt_int(an, "async_unended"), 1);
	assert_int_equal(jt_int(an, "late"), 0);
	assert_int_equal(jt_int(an, "approx_self"), 0);
	assert_int_equal(jt_int(an, "partial_overlap"), 0);
	yajl_tree_free(doc);
}

static void golden_by_cat_and_by_thread(void **state)
{
	static const struct want_row cats[] = {
		{"batch", 5, 1450, 1000, 290000, 50, 100, 1000, 1000},
		{"render", 3, 220, 140, 73333, 20, 100, 100, 100},
		{"sim", 2, 40, 30, 20000, 10, 10, 30, 30},
		{"gpu", 1, 30, 30, 30000, 30, 30, 30, 30},
	};
	static const struct want_row threads[] = {
		{"app / worker (1/11)", 5, 1450, 1000, 290000, 50, 100, 1000, 1000},
		{"app / main (1/10)", 4, 160, 100, 40000, 10, 20, 100, 100},
		{"gpu (2/20)", 2, 130, 100, 65000, 30, 30, 100, 100},
	};
	yajl_val doc, rows;

	(void)state;
	doc = run_json(0, tool_data("data/stats_golden.json"), "--by", "cat");
	assert_string_equal(jt_str(doc, "by"), "cat");
	expect_rows(rows_of(doc, "slices"), cats, sizeof(cats) / sizeof(cats[0]));
	yajl_tree_free(doc);
	doc = run_json(0, tool_data("data/stats_golden.json"), "--by", "thread");
	rows = rows_of(doc, "slices");
	expect_rows(rows, threads, sizeof(threads) / sizeof(threads[0]));
	assert_int_equal(jt_int(rows->u.array.values[0], "pid"), 1);
	assert_int_equal(jt_int(rows->u.array.values[0], "tid"), 11);
	yajl_tree_free(doc);
}

static void golden_table_for_people(void **state)
{
	struct tool_run r;

	(void)state;
	tool_run(&r, NULL, "stats", tool_data("data/stats_golden.json"), NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_true(tool_has(r.out, ": 31 events on 5 threads (every event object, M included; "
				    "distinct pid/tid), 2.000 ms from first to last; "
				    "bare array, complete\n"));
	assert_true(tool_has(r.out, "recorder: dropped 7 (ring full 4, too large 2, I/O 1), "
				    "args cut 3; end marker final\n"));
	assert_true(tool_has(r.out, "\nslices by name: 11 slices, 7 names (percentiles within "
				    "1%)\n"));
	assert_true(tool_has(r.out, "     count      total       self       mean        p50 "
				    "       p99        max  name\n"
				    "         1   1.000 ms   600.0 us   1.000 ms   1.000 ms   "
				    "1.000 ms   1.000 ms  job\n"
				    "         3   400.0 us   350.0 us   133.3 us   100.0 us   "
				    "200.0 us   200.0 us  step\n"));
	assert_true(tool_has(r.out, "  1.000 ms   2.000 ms   50.0%  app / worker (1/11)\n"));
	assert_true(tool_has(r.out, "  100.0 us   150.0 us   66.7%  gpu (2/20)\n"));
	assert_true(tool_has(r.out, "\nasync spans by name: 3 spans"));
	assert_true(tool_has(r.out, "         3   450.0 us   150.0 us   100.0 us   300.0 us   "
				    "300.0 us  load\n"));
	assert_true(tool_has(r.out, "         2             10           30.5  mem used\n"));
	assert_true(tool_has(r.out, "  1 E without a B open on its thread (ignored)\n"));
	assert_false(tool_has(r.out, "warning:"));
	tool_run_free(&r);
	/* --top limits each table. */
	tool_run(&r, NULL, "stats", "--top", "2", tool_data("data/stats_golden.json"), NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.out, "(the top 2 by total; --top 0 shows all)\n"));
	assert_true(tool_has(r.out, "  step\n"));
	assert_false(tool_has(r.out, "  frame\n"));
	tool_run_free(&r);
}

/* ------------------------------------------------------ cut and odd files */

static void cut_file_is_counted_to_its_cut_with_a_warning(void **state)
{
	yajl_val doc, rows, w, an;
	struct tool_run r;

	(void)state;
	doc = run_json(0, tool_data("data/cut_midline.json"), NULL, NULL);
	assert_true(YAJL_IS_TRUE(jt_at(doc, "cut")));
	assert_int_equal(jt_int(doc, "partial_event_bytes"), 30);
	assert_true(YAJL_IS_NULL(jt_at(doc, "recorder")));
	w = jt_array(doc, "warnings");
	assert_int_equal(w->u.array.len, 3);
	assert_true(tool_has(YAJL_GET_STRING(w->u.array.values[0]), "ends inside an event"));
	assert_true(tool_has(YAJL_GET_STRING(w->u.array.values[1]), "cut short"));
	assert_true(tool_has(YAJL_GET_STRING(w->u.array.values[2]), "no end marker"));
	/* outer [5, ...) and inner [6, ...) end at 10.5, the end of the X work [7, 10.5]
	 * in them; nocat [12, ...) at 12, the latest time on its thread. */
	rows = rows_of(doc, "slices");
	assert_int_equal(rows->u.array.len, 5);
	assert_string_equal(jt_str(rows->u.array.values[0], "key"), "outer");
	assert_int_equal(jt_int(rows->u.array.values[0], "total_ns"), 5500);
	assert_int_equal(jt_int(rows->u.array.values[0], "self_ns"), 1000);
	assert_string_equal(jt_str(rows->u.array.values[1], "key"), "inner");
	assert_int_equal(jt_int(rows->u.array.values[1], "total_ns"), 4500);
	assert_int_equal(jt_int(rows->u.array.values[1], "self_ns"), 1000);
	assert_string_equal(jt_str(rows->u.array.values[4], "key"), "nocat");
	assert_int_equal(jt_int(rows->u.array.values[4], "total_ns"), 0);
	an = jt_at(doc, "anomalies");
	assert_int_equal(jt_int(an, "unended"), 3);
	yajl_tree_free(doc);
	/* The same from standard input, for people. */
	tool_run(&r, tool_data("data/cut_midline.json"), "stats", "-", NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.out, "<stdin>: 9 events on 3 threads"));
	assert_true(tool_has(r.out, "warning: the file is cut short (no closing ']'): these "
				    "stats cover its 9 whole events\n"));
	tool_run_free(&r);
}

static void provisional_end_marker_is_warned_about(void **state)
{
	yajl_val doc = run_json(0, tool_data("data/provisional.json"), NULL, NULL);
	yajl_val rec = jt_at(doc, "recorder"), w = jt_array(doc, "warnings");

	(void)state;
	assert_true(YAJL_IS_FALSE(jt_at(rec, "final")));
	assert_int_equal(jt_int(rec, "dropped"), 5);
	assert_int_equal(jt_int(rec, "dropped_ring_full"), 5);
	assert_int_equal(w->u.array.len, 1);
	assert_true(tool_has(YAJL_GET_STRING(w->u.array.values[0]), "final:false"));
	yajl_tree_free(doc);
}

static void repaired_file_says_repaired(void **state)
{
	yajl_val doc = run_json(0, tool_data("data/cut_midline.repaired.json"), NULL, NULL);
	yajl_val rec = jt_at(doc, "recorder");

	(void)state;
	assert_true(YAJL_IS_TRUE(jt_at(rec, "final")));
	assert_true(YAJL_IS_TRUE(jt_at(rec, "repaired")));
	assert_true(YAJL_IS_NULL(jt_at(rec, "dropped"))); /* the repair had no counts to keep */
	assert_int_equal(jt_array(doc, "warnings")->u.array.len, 0);
	yajl_tree_free(doc);
}

static void malformed_input_gives_stats_before_it_and_exit_1(void **state)
{
	static const char text[] =
		"[\n"
		"{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1},\n"
		"{\"ph\":\"X\",\"name\":\"a\",\"ts\":4,\"dur\":2,\"pid\":1,\"tid\":1},\n"
		"{\"ph\":\"X\",\"name\":\"a\",\"ts\":7 \"dur\":2},\n";
	const char *path = tool_tmp("malformed.json"), *junk = tool_tmp("junk.json");
	struct tool_run r;
	yajl_val doc;

	(void)state;
	tool_write(path, text, sizeof(text) - 1);
	doc = run_json(1, path, NULL, NULL);
	assert_int_equal(jt_int(jt_at(doc, "slices"), "count"), 2);
	assert_true(tool_has(jt_str(doc, "error"), ":4:"));
	yajl_tree_free(doc);
	tool_run(&r, NULL, "stats", path, NULL);
	assert_int_equal(r.status, 1);
	assert_true(tool_has(r.out, "warning: the read stopped at an error"));
	assert_true(tool_has(r.err, path));
	tool_run_free(&r);
	/* Nothing readable at all: exit 2, nothing on standard output. */
	tool_write(junk, "hello", 5);
	tool_run(&r, NULL, "stats", junk, NULL);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.out, "");
	assert_true(tool_has(r.err, junk));
	tool_run_free(&r);
	unlink(path);
	unlink(junk);
}

static void usage_and_exit_statuses(void **state)
{
	static const struct {
		const char *args[5];
		int status;
		const char *out, *err;
	} cases[] = {
		{{"stats", "--help"}, 0, "usage: ringtrace stats", NULL},
		{{"help", "stats"}, 0, "--by KEY", NULL},
		{{"--help"}, 0, "stats ", NULL},
		{{"stats"}, 2, NULL, "no FILE to read"},
		{{"stats", "a.json", "b.json"}, 2, NULL, "cannot read b.json"},
		{{"stats", "-j", "0", "x.json"}, 2, NULL, "--jobs wants a number from 1"},
		{{"stats", "--by", "host", "x.json"}, 2, NULL, "--by wants name, cat or thread"},
		{{"stats", "--top", "-1", "x.json"}, 2, NULL, "--top wants a number"},
		{{"stats", "--frob", "x.json"}, 2, NULL, "Try 'ringtrace stats --help'"},
	};
	const char *missing = tool_tmp("missing.json");
	struct tool_run r;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const *a = cases[i].args;

		tool_run(&r, NULL, a[0], a[1], a[2], a[3], a[4], NULL);
		if (r.status != cases[i].status ||
		    (cases[i].out && !tool_has(r.out, cases[i].out)) ||
		    (cases[i].err && !tool_has(r.err, cases[i].err)))
			fail_msg("case %zu: status %d\nstdout: %s\nstderr: %s", i, r.status, r.out,
				 r.err);
		tool_run_free(&r);
	}
	tool_run(&r, NULL, "stats", missing, NULL);
	assert_int_equal(r.status, 2);
	assert_true(tool_has(r.err, "cannot read"));
	tool_run_free(&r);
}

/* ------------------------------------------------- the limits, admitted */

/* Write "[" + lines + "]" to path. */
static void write_events(const char *path, const char *const *lines, size_t n)
{
	size_t cap = 64 + n * 128, len = 0;
	char *text = malloc(cap);

	assert_non_null(text);
	len += (size_t)snprintf(text, cap, "[\n");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len, "%s%s\n", lines[i],
					i + 1 < n ? "," : "");
	len += (size_t)snprintf(text + len, cap - len, "]\n");
	tool_write(path, text, len);
	free(text);
}

static char *xline(const char *name, long long start_ns, long long dur_ns)
{
	char *p = malloc(128);

	assert_non_null(p);
	snprintf(p, 128,
		 "{\"ph\":\"X\",\"name\":\"%s\",\"ts\":%lld.%03lld,\"dur\":%lld.%03lld,\"pid\":1,"
		 "\"tid\":1}",
		 name, start_ns / 1000, start_ns % 1000, dur_ns / 1000, dur_ns % 1000);
	return p;
}

static yajl_val row_named(yajl_val doc, const char *key)
{
	return jt_row(rows_of(doc, "slices"), key, NULL);
}

/* Siblings in order of start, then one that starts before all of them: it arrives
 * after its place was settled, so it is counted whole and warned about. */
static void slice_far_out_of_order_is_counted_as_late(void **state)
{
	enum { N = 100 };
	char *lines[N + 1];
	const char *path = tool_tmp("late.json");
	yajl_val doc, row;

	(void)state;
	for (int i = 0; i < N; i++)
		lines[i] = xline("s", (long long)(i + 1) * 100000, 50000);
	lines[N] = xline("late", 10000, 80000);
	write_events(path, (const char *const *)lines, N + 1);
	doc = run_json(0, path, NULL, NULL);
	assert_int_equal(jt_int(jt_at(doc, "anomalies"), "late"), 1);
	assert_int_equal(jt_array(doc, "warnings")->u.array.len, 1);
	assert_true(tool_has(YAJL_GET_STRING(jt_array(doc, "warnings")->u.array.values[0]),
			     "too far out of order"));
	row = row_named(doc, "late");
	assert_int_equal(jt_int(row, "total_ns"), 80000);
	assert_int_equal(jt_int(row, "self_ns"), 80000);
	assert_int_equal(jt_int(row_named(doc, "s"), "total_ns"), (long long)N * 50000);
	yajl_tree_free(doc);
	for (int i = 0; i <= N; i++)
		free(lines[i]);
	unlink(path);
}

/* A poll row of the "polls" section, by name: what it must say (completed -1: null). */
struct want_poll {
	const char *name;
	long long folded, alone_slices, alone_inside, completed, completed_ns;
};

static void expect_poll_rows(yajl_val polls, const struct want_poll *want, size_t n)
{
	yajl_val rows = jt_array(polls, "rows");

	assert_int_equal(rows->u.array.len, n);
	for (size_t i = 0; i < n; i++) {
		yajl_val r = rows->u.array.values[i];
		const struct want_poll *w = &want[i];

		assert_string_equal(jt_str(r, "name"), w->name);
		assert_int_equal(jt_int(r, "folded_calls"), w->folded);
		assert_int_equal(jt_int(r, "alone_slices"), w->alone_slices);
		assert_int_equal(jt_int(r, "alone_inside_ns"), w->alone_inside);
		if (w->completed < 0) {
			assert_true(YAJL_IS_NULL(jt_at(r, "completed_calls")));
			assert_true(YAJL_IS_NULL(jt_at(r, "completed_ns")));
		} else {
			assert_int_equal(jt_int(r, "completed_calls"), w->completed);
			assert_int_equal(jt_int(r, "completed_ns"), w->completed_ns);
		}
	}
}

/* Folded polls (the recorder's MPI module: docs/mpi.md): per call name, the calls in
 * the folded slices; by name, those that completed something too (the slices of the
 * name that are not folded) and the time inside them; the runs of several names
 * apart. A slice whose first argument is not "polls" is not one. */
static void folded_polls_are_counted_per_call_name(void **state)
{
	static const char *const lines[] = {
		"{\"ph\":\"X\",\"cat\":\"mpi\",\"name\":\"MPI polls\",\"ts\":0,\"dur\":1,"
		"\"pid\":1,\"tid\":1,\"args\":{\"polls\":5,\"count\":2,\"MPI_Testany\":3,"
		"\"MPI_Test\":2,\"poll_ns\":600}}",
		"{\"ph\":\"X\",\"cat\":\"mpi\",\"name\":\"MPI_Testany\",\"ts\":2,\"dur\":0.5,"
		"\"pid\":1,\"tid\":1,\"args\":{\"polls\":4,\"count\":1,\"MPI_Testany\":4,"
		"\"poll_ns\":300}}",
		"{\"ph\":\"X\",\"cat\":\"mpi\",\"name\":\"MPI_Testany\",\"ts\":3,\"dur\":0.1,"
		"\"pid\":1,\"tid\":1,\"args\":{\"count\":1}}",
		"{\"ph\":\"X\",\"cat\":\"mpi\",\"name\":\"MPI_Test\",\"ts\":3.2,\"dur\":0.05,"
		"\"pid\":1,\"tid\":1,\"args\":{\"count\":1}}",
		"{\"ph\":\"X\",\"cat\":\"mpi\",\"name\":\"MPI_Iprobe\",\"ts\":4,\"dur\":0.2,"
		"\"pid\":1,\"tid\":1,\"args\":{\"polls\":2,\"MPI_Iprobe\":2,\"poll_ns\":150}}",
		"{\"ph\":\"X\",\"cat\":\"app\",\"name\":\"other\",\"ts\":5,\"dur\":0.2,"
		"\"pid\":1,\"tid\":1,\"args\":{\"x\":1,\"polls\":3,\"MPI_Test\":3}}",
	};
	static const struct want_poll by_name[] = {
		{"MPI_Testany", 7, 1, 300, 1, 100},
		{"MPI_Test", 2, 0, 0, 1, 50}, /* ties in the file's order */
		{"MPI_Iprobe", 2, 1, 150, 0, 0},
	};
	static const struct want_poll by_cat[] = {
		{"MPI_Testany", 7, 1, 300, -1, 0},
		{"MPI_Test", 2, 0, 0, -1, 0},
		{"MPI_Iprobe", 2, 1, 150, -1, 0},
	};
	const char *path = tool_tmp("polls.json");
	struct tool_run r;
	yajl_val doc, polls;

	(void)state;
	write_events(path, lines, sizeof(lines) / sizeof(lines[0]));
	doc = run_json(0, path, NULL, NULL);
	polls = jt_at(doc, "polls");
	assert_int_equal(jt_int(polls, "slices"), 3);
	assert_int_equal(jt_int(polls, "calls"), 11);
	assert_int_equal(jt_int(polls, "inside_ns"), 1050);
	assert_int_equal(jt_int(polls, "names"), 3);
	expect_poll_rows(polls, by_name, 3);
	assert_int_equal(jt_int(jt_at(polls, "mixed"), "slices"), 1);
	assert_int_equal(jt_int(jt_at(polls, "mixed"), "calls"), 5);
	assert_int_equal(jt_int(jt_at(polls, "mixed"), "inside_ns"), 600);
	yajl_tree_free(doc);
	doc = run_json(0, path, "--by", "cat");
	expect_poll_rows(jt_at(doc, "polls"), by_cat, 3);
	yajl_tree_free(doc);
	/* The table for people: every call of each name, those completed, the time. */
	const char *args[] = {"stats", path, NULL};
	tool_runv(&r, NULL, NULL, args);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.out, "polls folded: 11 calls of 3 names that completed nothing, "
				    "in 3 slices, 1.050 us inside the calls"));
	assert_true(tool_has(r.out, "         8          1     400 ns  MPI_Testany\n"));
	assert_true(tool_has(r.out, "         3          1      50 ns  MPI_Test\n"));
	assert_true(tool_has(r.out, "         2          0     150 ns  MPI_Iprobe\n"));
	assert_true(tool_has(r.out, "         5                600 ns  (in runs of several names: "
				    "MPI polls)\n"));
	tool_run_free(&r);
	unlink(path);
}

/* In the recorder's order, 2000 top-level slices, then a parent of the last 1000 of
 * them: by then the older ones are merged into runs, and the parent starts inside
 * one. Its self time is an estimate, counted and warned about; totals stay exact. */
static void late_parent_inside_a_merged_run_is_estimated(void **state)
{
	enum { N = 2000 };
	char *lines[N + 1];
	const char *path = tool_tmp("merged.json");
	long long p_start = 1001LL * 1000 - 100, p_end = (long long)N * 1000 + 600;
	yajl_val doc, p;
	long long self, want = (p_end - p_start) - 1000LL * 500;

	(void)state;
	for (int i = 0; i < N; i++)
		lines[i] = xline("a", (long long)(i + 1) * 1000, 500);
	lines[N] = xline("p", p_start, p_end - p_start);
	write_events(path, (const char *const *)lines, N + 1);
	doc = run_json(0, path, NULL, NULL);
	assert_true(jt_int(jt_at(doc, "anomalies"), "approx_self") >= 1);
	assert_true(tool_has(YAJL_GET_STRING(jt_array(doc, "warnings")->u.array.values[0]),
			     "estimated self time"));
	p = row_named(doc, "p");
	self = jt_int(p, "self_ns");
	assert_int_equal(jt_int(p, "total_ns"), p_end - p_start);
	if (llabs(self - want) > want / 20)
		fail_msg("estimated self %lld, true %lld", self, want);
	assert_int_equal(jt_int(row_named(doc, "a"), "total_ns"), (long long)N * 500);
	yajl_tree_free(doc);
	for (int i = 0; i <= N; i++)
		free(lines[i]);
	unlink(path);
}

/* ---------------------------------------------- generated files, checked */

enum { GEN_THREADS = 3 };

struct gen {
	struct tool_text th[GEN_THREADS]; /* each thread's lines, in its own order */
	uint64_t rng;
	size_t slices;
	bool start_order; /* X at its start; else at its end, as the recorder writes */
};

static uint32_t rnd(struct gen *g)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return (uint32_t)(g->rng >> 16);
}

static const int gen_pid[GEN_THREADS] = {7, 7, 8}, gen_tid[GEN_THREADS] = {70, 71, 80};

static void gen_event(struct gen *g, int t, const char *ph, const char *name, const char *cat,
		      uint64_t ts, int64_t dur)
{
	tool_text_printf(
		&g->th[t], "{\"ph\":\"%s\",\"cat\":\"%s\",\"name\":\"%s\",\"ts\":%llu.%03llu", ph,
		cat, name, (unsigned long long)(ts / 1000), (unsigned long long)(ts % 1000));
	if (dur >= 0)
		tool_text_printf(&g->th[t], ",\"dur\":%lld.%03lld", (long long)dur / 1000,
				 (long long)dur % 1000);
	tool_text_printf(&g->th[t], ",\"pid\":%d,\"tid\":%d},\n", gen_pid[t], gen_tid[t]);
}

/* A slice [s, e] at depth with a random subtree; B/E when be, else X. */
static void gen_slice(struct gen *g, int t, uint64_t s, uint64_t e, int depth, bool be,
		      const char *name)
{
	static const char *const names[] = {"parse", "solve", "io", "gc", "render", "wait"};
	static const char *const cats[] = {"cpu", "mem", "net"};
	const char *cat = cats[(strlen(name) + (size_t)depth) % 3];
	unsigned kids = depth < 3 && e - s > 64 ? rnd(g) % 4 : 0;

	g->slices++;
	if (be)
		gen_event(g, t, "B", name, cat, s, -1);
	else if (g->start_order)
		gen_event(g, t, "X", name, cat, s, (int64_t)(e - s));
	if (kids > 0) {
		/* Disjoint children with gaps, none touching the parent's ends (a zero-length
		 * slice on a boundary nests either way). */
		uint64_t seg = (e - s - 2) / kids;

		for (unsigned k = 0; k < kids; k++) {
			uint64_t cs = s + 1 + k * seg, q = seg / 4 + 1;
			uint64_t lo = cs + 1 + rnd(g) % q, hi = cs + seg - 1 - rnd(g) % q;

			if (hi > lo)
				gen_slice(g, t, lo, hi, depth + 1, depth == 0 && rnd(g) % 3 == 0,
					  names[(depth + rnd(g)) % 6]);
		}
	}
	if (be)
		gen_event(g, t, "E", name, cat, e, -1);
	else if (!g->start_order)
		gen_event(g, t, "X", name, cat, s, (int64_t)(e - s));
}

/* Shuffle a thread's X lines within blocks of at most 8 between two B/E lines: a
 * writer that is a little out of order (each X at most 7 places from its own). */
static void shuffle_x(struct gen *g, struct tool_text *t)
{
	struct tool_text out = {0};
	const char *line[8];
	size_t len[8], n = 0, at = 0;

	for (;;) {
		const char *p = t->p + at, *nl = at < t->len ? memchr(p, '\n', t->len - at) : NULL;
		bool x = nl != NULL && strncmp(p, "{\"ph\":\"X\"", 9) == 0;

		if (n > 0 && (!x || n == 8)) {
			for (size_t i = n - 1; i > 0; i--) {
				size_t j = rnd(g) % (i + 1);
				const char *tl = line[i];
				size_t tn = len[i];

				line[i] = line[j];
				len[i] = len[j];
				line[j] = tl;
				len[j] = tn;
			}
			for (size_t i = 0; i < n; i++)
				tool_text_printf(&out, "%.*s", (int)len[i], line[i]);
			n = 0;
		}
		if (nl == NULL)
			break;
		if (x) {
			line[n] = p;
			len[n++] = (size_t)(nl - p) + 1;
		} else {
			tool_text_printf(&out, "%.*s", (int)(nl - p) + 1, p);
		}
		at += (size_t)(nl - p) + 1;
	}
	free(t->p);
	*t = out;
}

/*
 * About 50 000 slices: thread 7/70, one long "main" X holding 1500 subtrees (written
 * last in the recorder's order, so thousands of slices wait for it); thread 7/71,
 * 3000 top-level subtrees; thread 8/80, 2000 B/E parents with X subtrees. The
 * threads' lines are interleaved in runs, each thread's order kept, as the recorder
 * writes its per-thread rings; with shuffle, X lines are a little out of order too.
 */
static char *generate(bool start_order, bool shuffle, size_t *len, size_t *slices)
{
	static const unsigned roots[GEN_THREADS] = {1500, 3000, 2000};
	struct gen g = {.rng = 0x9e3779b97f4a7c15u, .start_order = start_order};
	struct tool_text out = {0};
	size_t at[GEN_THREADS] = {0};
	const uint64_t seg = 20000;

	for (int t = 0; t < GEN_THREADS; t++) {
		uint64_t base = 1000 + (uint64_t)t * 777;

		if (t == 0 && start_order)
			gen_event(&g, 0, "X", "main", "cpu", base, (int64_t)(roots[0] * seg + 10));
		for (unsigned i = 0; i < roots[t]; i++) {
			uint64_t s = base + 1 + i * seg + rnd(&g) % 100;

			gen_slice(&g, t, s, s + seg / 2 + rnd(&g) % (seg / 3), t == 0 ? 1 : 0,
				  t == 2, t == 2 ? "step" : "task");
		}
		if (t == 0) {
			g.slices++;
			if (!start_order)
				gen_event(&g, 0, "X", "main", "cpu", base,
					  (int64_t)(roots[0] * seg + 10));
		}
	}
	for (int t = 0; t < GEN_THREADS && shuffle; t++)
		shuffle_x(&g, &g.th[t]);
	tool_text_printf(&out, "[\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":7,\"tid\":70,"
			       "\"args\":{\"name\":\"gen\"}},\n"
			       "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":7,\"tid\":70,"
			       "\"args\":{\"name\":\"main\"}},\n");
	for (;;) {
		int t = (int)(rnd(&g) % GEN_THREADS), tries = 0;

		while (at[t] == g.th[t].len && tries++ < GEN_THREADS)
			t = (t + 1) % GEN_THREADS;
		if (at[t] == g.th[t].len)
			break;
		for (unsigned n = 1 + rnd(&g) % 40; n > 0 && at[t] < g.th[t].len; n--) {
			const char *nl = memchr(g.th[t].p + at[t], '\n', g.th[t].len - at[t]);
			size_t l = (size_t)(nl - (g.th[t].p + at[t])) + 1;

			tool_text_printf(&out, "%.*s", (int)l, g.th[t].p + at[t]);
			at[t] += l;
		}
	}
	tool_text_printf(&out,
			 "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: end\",\"ts\":1,"
			 "\"pid\":7,\"tid\":70,\"args\":{\"final\":true,\"dropped\":0}}\n]\n");
	for (int t = 0; t < GEN_THREADS; t++)
		free(g.th[t].p);
	*len = out.len;
	*slices = g.slices;
	return out.p;
}

/* ---- the reference: the whole file in memory, slices sorted, nested with a stack */

struct ref_slice {
	size_t thread, seq;
	uint64_t start, end;
	const struct tt_event *ev; /* its B, or the X */
};

struct ref_thread {
	int64_t pid, tid;
	uint64_t first, last, busy;
	size_t *open, depth; /* indices of open B events */
	size_t slices;
};

struct ref_row {
	const char *key; /* NULL: by thread */
	int64_t pid, tid;
	uint64_t count, total, self, min, max;
	uint64_t *durs;
};

struct ref {
	struct ref_thread th[16];
	size_t nth;
	struct ref_slice *s;
	size_t ns;
	struct ref_row rows[64];
	size_t nrows;
};

static size_t ref_thread(struct ref *r, const struct tt_event *e)
{
	for (size_t i = 0; i < r->nth; i++) {
		if (r->th[i].pid == e->pid && r->th[i].tid == e->tid)
			return i;
	}
	assert_true(r->nth < 16);
	r->th[r->nth] = (struct ref_thread){.pid = e->pid, .tid = e->tid, .first = UINT64_MAX};
	r->th[r->nth].open = calloc(64, sizeof(size_t));
	return r->nth++;
}

static int slice_order(const void *a, const void *b)
{
	const struct ref_slice *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return x->seq > y->seq ? -1 : 1; /* the later of two equal ones is the parent */
}

static struct ref_row *ref_row(struct ref *r, const char *by, const struct ref_slice *s)
{
	const char *key = strcmp(by, "name") == 0  ? s->ev->name
			  : strcmp(by, "cat") == 0 ? s->ev->cat
						   : NULL;
	const struct ref_thread *t = &r->th[s->thread];

	for (size_t i = 0; i < r->nrows; i++) {
		struct ref_row *row = &r->rows[i];

		if (key != NULL ? row->key != NULL && strcmp(row->key, key) == 0
				: row->key == NULL && row->pid == t->pid && row->tid == t->tid)
			return row;
	}
	assert_true(r->nrows < 64);
	r->rows[r->nrows] =
		(struct ref_row){.key = key, .pid = t->pid, .tid = t->tid, .min = UINT64_MAX};
	r->rows[r->nrows].durs = malloc(r->ns * sizeof(uint64_t));
	return &r->rows[r->nrows++];
}

static int u64_order(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void ref_compute(struct ref *r, const struct tt_trace *tr, const char *by)
{
	uint64_t *child;
	size_t *stack, depth = 0;

	memset(r, 0, sizeof(*r));
	r->s = malloc((tr->n + 1) * sizeof(*r->s));
	for (size_t i = 0; i < tr->n; i++) {
		const struct tt_event *e = &tr->ev[i];
		struct ref_thread *t;
		uint64_t last;

		if (!e->has_ts || !e->has_pid)
			continue;
		t = &r->th[ref_thread(r, e)];
		last = e->ts_ns + (strcmp(e->ph, "X") == 0 ? e->dur_ns : 0);
		t->first = e->ts_ns < t->first ? e->ts_ns : t->first;
		t->last = last > t->last ? last : t->last;
		if (strcmp(e->ph, "X") == 0) {
			r->s[r->ns] = (struct ref_slice){(size_t)(t - r->th), r->ns, e->ts_ns,
							 e->ts_ns + e->dur_ns, e};
			r->ns++;
		} else if (strcmp(e->ph, "B") == 0) {
			t->open[t->depth++] = i;
		} else if (strcmp(e->ph, "E") == 0) {
			const struct tt_event *b = &tr->ev[t->open[--t->depth]];

			r->s[r->ns] = (struct ref_slice){(size_t)(t - r->th), r->ns, b->ts_ns,
							 e->ts_ns, b};
			r->ns++;
		}
	}
	qsort(r->s, r->ns, sizeof(*r->s), slice_order);
	child = calloc(r->ns + 1, sizeof(*child));
	stack = malloc((r->ns + 1) * sizeof(*stack));
	for (size_t i = 0; i < r->ns; i++) {
		const struct ref_slice *s = &r->s[i];

		if (i == 0 || s->thread != r->s[i - 1].thread)
			depth = 0;
		while (depth > 0 && !(r->s[stack[depth - 1]].start <= s->start &&
				      s->end <= r->s[stack[depth - 1]].end))
			depth--;
		if (depth > 0)
			child[stack[depth - 1]] += s->end - s->start;
		else
			r->th[s->thread].busy += s->end - s->start;
		r->th[s->thread].slices++;
		stack[depth++] = i;
	}
	for (size_t i = 0; i < r->ns; i++) {
		const struct ref_slice *s = &r->s[i];
		struct ref_row *row = ref_row(r, by, s);
		uint64_t d = s->end - s->start;

		row->durs[row->count++] = d;
		row->total += d;
		row->self += d - child[i];
		row->min = d < row->min ? d : row->min;
		row->max = d > row->max ? d : row->max;
	}
	for (size_t i = 0; i < r->nrows; i++)
		qsort(r->rows[i].durs, r->rows[i].count, sizeof(uint64_t), u64_order);
	free(child);
	free(stack);
}

static void ref_free(struct ref *r)
{
	for (size_t i = 0; i < r->nth; i++)
		free(r->th[i].open);
	for (size_t i = 0; i < r->nrows; i++)
		free(r->rows[i].durs);
	free(r->s);
}

/* The nearest-rank quantile of sorted values. */
static uint64_t nearest_rank(const uint64_t *v, uint64_t n, unsigned per_10k)
{
	uint64_t rank = (n * per_10k + 9999) / 10000;

	return v[(rank < 1 ? 1 : rank) - 1];
}

static void expect_within(const char *what, const char *key, long long got, uint64_t want)
{
	double err = fabs((double)got - (double)want);

	if (err > 0.01 * (double)want + 1.0)
		fail_msg("%s of %s: %lld, want %llu within 1%%", what, key ? key : "(thread)", got,
			 (unsigned long long)want);
}

/* The tool's document against the reference, row by row and thread by thread. */
static void expect_same_as_reference(yajl_val doc, const struct ref *r)
{
	yajl_val rows = rows_of(doc, "slices"), th = jt_array(doc, "threads");
	long long prev_total = -1;

	assert_int_equal(jt_int(jt_at(doc, "slices"), "count"), r->ns);
	assert_int_equal(rows->u.array.len, r->nrows);
	for (size_t i = 0; i < rows->u.array.len; i++) {
		yajl_val row = rows->u.array.values[i];
		const char *key = jt_str_or_null(row, "key");
		const struct ref_row *w = NULL;

		for (size_t k = 0; k < r->nrows && w == NULL; k++) {
			if (r->rows[k].key != NULL ? strcmp(r->rows[k].key, key) == 0
						   : r->rows[k].pid == jt_int(row, "pid") &&
							     r->rows[k].tid == jt_int(row, "tid"))
				w = &r->rows[k];
		}
		if (w == NULL)
			fail_msg("row \"%s\" is not in the reference", key);
		if (prev_total >= 0)
			assert_true(jt_int(row, "total_ns") <= prev_total);
		prev_total = jt_int(row, "total_ns");
		assert_int_equal(jt_int(row, "count"), w->count);
		assert_int_equal(jt_int(row, "total_ns"), w->total);
		if (jt_int(row, "self_ns") != (long long)w->self)
			fail_msg("self of %s: %lld, want %llu", key, jt_int(row, "self_ns"),
				 (unsigned long long)w->self);
		assert_int_equal(jt_int(row, "min_ns"), w->min);
		assert_int_equal(jt_int(row, "max_ns"), w->max);
		assert_int_equal(jt_int(row, "mean_ns"), (w->total + w->count / 2) / w->count);
		expect_within("p50", key, jt_int(row, "p50_ns"),
			      nearest_rank(w->durs, w->count, 5000));
		expect_within("p99", key, jt_int(row, "p99_ns"),
			      nearest_rank(w->durs, w->count, 9900));
	}
	for (size_t k = 0; k < r->nth; k++) {
		const struct ref_thread *t = &r->th[k];
		bool found = false;

		if (t->slices == 0)
			continue;
		for (size_t i = 0; i < th->u.array.len; i++) {
			yajl_val v = th->u.array.values[i];

			if (jt_int(v, "pid") != t->pid || jt_int(v, "tid") != t->tid)
				continue;
			found = true;
			assert_int_equal(jt_int(v, "busy_ns"), t->busy);
			assert_int_equal(jt_int(v, "first_ns"), t->first);
			assert_int_equal(jt_int(v, "last_ns"), t->last);
			assert_int_equal(jt_int(v, "slices"), t->slices);
		}
		if (!found)
			fail_msg("thread %lld/%lld missing", (long long)t->pid, (long long)t->tid);
	}
	assert_int_equal(jt_int(jt_at(doc, "anomalies"), "late"), 0);
	assert_int_equal(jt_int(jt_at(doc, "anomalies"), "approx_self"), 0);
	assert_int_equal(jt_int(jt_at(doc, "anomalies"), "partial_overlap"), 0);
}

static void check_generated(bool start_order, bool shuffle)
{
	const char *path = tool_tmp(start_order ? "gen-start.json" : "gen-rec.json");
	const char *gz = tool_tmp("gen.json.gz");
	static const char *const bys[] = {"name", "cat", "thread"};
	size_t len, slices, gz_len;
	char *text = generate(start_order, shuffle, &len, &slices);
	struct tt_trace tr;

	assert_true(slices > 45000 && slices < 60000);
	tool_write(path, text, len);
	if (tt_load(path, 0, &tr) != 0)
		fail_msg("%s", tr.error);
	for (size_t i = 0; i < (shuffle ? 1 : 3); i++) {
		struct ref ref;
		yajl_val doc;

		ref_compute(&ref, &tr, bys[i]);
		assert_int_equal(ref.ns, slices);
		doc = run_json(0, path, "--by", bys[i]);
		expect_same_as_reference(doc, &ref);
		yajl_tree_free(doc);
		if (i == 0 && !start_order && !shuffle) {
			/* The same as gzip members, read from standard input... */
			unsigned char *z = tool_gzip(text, len, 65536, &gz_len, NULL, 0, NULL);
			struct tool_run r;

			tool_write(gz, z, gz_len);
			free(z);
			tool_run(&r, gz, "stats", "--json", "--top", "0", "-", NULL);
			assert_int_equal(r.status, 0);
			doc = parse_doc(r.out);
			expect_same_as_reference(doc, &ref);
			assert_true(YAJL_IS_TRUE(jt_at(doc, "gzip")));
			yajl_tree_free(doc);
			tool_run_free(&r);
			unlink(gz);
		}
		ref_free(&ref);
	}
	tt_free(&tr);
	free(text);
	unlink(path);
}

static void generated_recorder_order_agrees_with_the_reference(void **state)
{
	(void)state;
	check_generated(false, false);
}

static void generated_start_order_agrees_with_the_reference(void **state)
{
	(void)state;
	check_generated(true, false);
}

/* X given out of order on a thread, within the tolerated window, in either order. */
static void generated_x_out_of_order_agrees_with_the_reference(void **state)
{
	(void)state;
	check_generated(false, true);
	check_generated(true, true);
}

/* A trace from the library itself: RTR_SCOPE (an X written when the scope ends) around
 * everything a thread does, B/E pairs, complete events, on three threads. */
static void *record_thread(void *arg)
{
	int id = (int)(intptr_t)arg;
	volatile unsigned sink = 0;

	RTR_SCOPE("app", "thread main");
	for (int i = 0; i < 1500; i++) {
		RTR_SCOPE("app", "iteration");
		uint64_t t0 = rtr_now_ns();

		rtr_begin("app", "phase");
		{
			RTR_SCOPE("kernel", "stencil");
			for (int k = 0; k < 50 * (1 + id); k++)
				sink += (unsigned)k;
		}
		rtr_end("app", "phase");
		if (i % 3 == 0) {
			RTR_SCOPE("io", "write");
			rtr_instant("io", "tick");
		}
		rtr_complete("app", "measured", t0, rtr_now_ns() - t0);
	}
	(void)sink; /* the loop is the work the kernel scope measures */
	return NULL;
}

static void recorder_output_agrees_with_the_reference(void **state)
{
	const char *path = tool_tmp("recorded.json");
	static const char *const bys[] = {"name", "cat", "thread"};
	struct rtr_config cfg;
	pthread_t th[2];
	struct tt_trace tr;

	(void)state;
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_thread_name("main");
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, record_thread, (void *)(intptr_t)i),
				 0);
	record_thread((void *)(intptr_t)2);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(rtr_stop(), 0);
	if (tt_load(path, 0, &tr) != 0)
		fail_msg("%s", tr.error);
	for (size_t i = 0; i < 3; i++) {
		struct ref ref;
		yajl_val doc;

		ref_compute(&ref, &tr, bys[i]);
		doc = run_json(0, path, "--by", bys[i]);
		expect_same_as_reference(doc, &ref);
		assert_true(YAJL_IS_TRUE(jt_at(jt_at(doc, "recorder"), "final")));
		assert_int_equal(jt_int(jt_at(doc, "recorder"), "dropped"), 0);
		assert_int_equal(jt_array(doc, "warnings")->u.array.len, 0);
		if (i == 0) {
			/* "thread main" holds a thread's 1500 iterations: self exact though
			 * they waited, merged, for it. */
			assert_int_equal(jt_int(row_named(doc, "iteration"), "count"), 4500);
			assert_int_equal(jt_int(row_named(doc, "thread main"), "count"), 3);
		}
		yajl_tree_free(doc);
		ref_free(&ref);
	}
	tt_free(&tr);
	unlink(path);
}

/* A big file in the recorder's order, one long parent over all of it: memory stays
 * bounded (state per thread and per open slice, the waiting children merged). */
static void large_file_in_bounded_memory(void **state)
{
	const char *path = tool_tmp("large.json");
	size_t target = TT_SANITIZED ? (8u << 20) : (160u << 20), n = 0;
	FILE *f = fopen(path, "w");
	struct tool_run r;
	yajl_val doc;
	uint64_t ts = 1000;

	(void)state;
	assert_non_null(f);
	fputs("[\n", f);
	for (size_t bytes = 0; bytes < target; n++) {
		int w = fprintf(f,
				"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"k%zu\",\"ts\":%llu.%03llu,"
				"\"dur\":0.5,\"pid\":1,\"tid\":%zu},\n",
				n % 7, (unsigned long long)(ts / 1000),
				(unsigned long long)(ts % 1000), 1 + n % 3);

		assert_true(w > 0);
		bytes += (size_t)w;
		ts += 700;
	}
	fprintf(f,
		"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"main\",\"ts\":0,\"dur\":%llu,\"pid\":1,"
		"\"tid\":1}\n]\n",
		(unsigned long long)(ts / 1000 + 1));
	assert_int_equal(fclose(f), 0);
	tool_run(&r, NULL, "stats", "--json", path, NULL);
	assert_int_equal(r.status, 0);
	if (!TT_SANITIZED && r.maxrss_kib > 64 * 1024)
		fail_msg("stats: peak RSS %ld KiB on %zu MiB", r.maxrss_kib, target >> 20);
	doc = parse_doc(r.out);
	assert_int_equal(jt_int(jt_at(doc, "slices"), "count"), n + 1);
	/* main holds every slice of thread 1 (a third), each 500 ns: exact, merged or not. */
	assert_int_equal(jt_int(row_named(doc, "main"), "self_ns"),
			 (long long)(ts / 1000 + 1) * 1000 - (long long)((n + 2) / 3) * 500);
	assert_int_equal(jt_int(jt_at(doc, "anomalies"), "approx_self"), 0);
	yajl_tree_free(doc);
	tool_run_free(&r);
	unlink(path);
}

/* ------------------------------------------------------------------ sketch */

static void sketch_is_exact_for_small_samples_and_extremes(void **state)
{
	static const uint64_t v[] = {30, 10, 20, 0, 40};
	struct rtr__sketch s;

	(void)state;
	rtr__sketch_init(&s);
	assert_int_equal(rtr__sketch_quantile(&s, 5000), 0);
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(rtr__sketch_add(&s, v[i]), 0);
	assert_int_equal(s.count, 5);
	assert_int_equal(rtr__sketch_quantile(&s, 0), 0);
	assert_int_equal(rtr__sketch_quantile(&s, 2000), 0);
	assert_int_equal(rtr__sketch_quantile(&s, 2001), 10);
	assert_int_equal(rtr__sketch_quantile(&s, 5000), 20);
	assert_int_equal(rtr__sketch_quantile(&s, 9900), 40);
	assert_int_equal(rtr__sketch_quantile(&s, 10000), 40);
	rtr__sketch_free(&s);
}

static void sketch_quantiles_are_within_one_percent(void **state)
{
	enum { N = 200000 };
	static const unsigned qs[] = {1, 100, 1000, 2500, 5000, 7500, 9000, 9900, 9990, 9999};
	uint64_t *v = malloc(N * sizeof(*v)), x = 88172645463325252u;
	struct rtr__sketch s, a, b;

	(void)state;
	assert_non_null(v);
	rtr__sketch_init(&s);
	rtr__sketch_init(&a);
	rtr__sketch_init(&b);
	for (size_t i = 0; i < N; i++) {
		/* log-uniform over 1 ns .. 100 s, with a run of equal values */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v[i] = i % 10 == 0 ? 12345 : (uint64_t)exp((double)(x % 1000000) / 1e6 * 25.3);
		assert_int_equal(rtr__sketch_add(&s, v[i]), 0);
		assert_int_equal(rtr__sketch_add(i % 2 ? &a : &b, v[i]), 0);
	}
	assert_int_equal(rtr__sketch_merge(&a, &b), 0);
	qsort(v, N, sizeof(*v), u64_order);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		uint64_t want = nearest_rank(v, N, qs[i]);

		expect_within("quantile", "sketch", (long long)rtr__sketch_quantile(&s, qs[i]),
			      want);
		/* A merge answers exactly as the sketch of everything. */
		assert_int_equal(rtr__sketch_quantile(&a, qs[i]), rtr__sketch_quantile(&s, qs[i]));
	}
	assert_int_equal(s.min, v[0]);
	assert_int_equal(s.max, v[N - 1]);
	assert_int_equal(a.count, N);
	/* Bounded: the buckets span the values' range, not their number. */
	assert_true(s.nbins < 1400);
	free(v);
	rtr__sketch_free(&s);
	rtr__sketch_free(&a);
	rtr__sketch_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sketch_is_exact_for_small_samples_and_extremes),
		cmocka_unit_test(sketch_quantiles_are_within_one_percent),
		cmocka_unit_test(usage_and_exit_statuses),
		cmocka_unit_test(golden_by_name_matches_hand_computed_values),
		cmocka_unit_test(golden_by_cat_and_by_thread),
		cmocka_unit_test(golden_table_for_people),
		cmocka_unit_test(cut_file_is_counted_to_its_cut_with_a_warning),
		cmocka_unit_test(provisional_end_marker_is_warned_about),
		cmocka_unit_test(repaired_file_says_repaired),
		cmocka_unit_test(malformed_input_gives_stats_before_it_and_exit_1),
		cmocka_unit_test(slice_far_out_of_order_is_counted_as_late),
		cmocka_unit_test(late_parent_inside_a_merged_run_is_estimated),
		cmocka_unit_test(folded_polls_are_counted_per_call_name),
		cmocka_unit_test(generated_recorder_order_agrees_with_the_reference),
		cmocka_unit_test(generated_start_order_agrees_with_the_reference),
		cmocka_unit_test(generated_x_out_of_order_agrees_with_the_reference),
		cmocka_unit_test(recorder_output_agrees_with_the_reference),
		cmocka_unit_test(large_file_in_bounded_memory),
	};

	return cmocka_run_group_tests_name("tools_stats", tests, NULL, NULL);
}
