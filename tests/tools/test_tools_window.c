/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace window` end to end. A small hand-written trace checked event by event
 * (the window's framing, clipped X, slices open at its edges reopened and ended, names
 * and counters repeated, a flow inside it joined), the options' parsing and usage
 * errors, and a generated file of several MB searched (not read whole) that must give
 * the same window as --exact, which reads it in order.
 */
#include "tool_test.h"
#include "trace_read.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* Times in us from 0; the window asked below is [10 ms, 20 ms] (10000 .. 20000 us). */
static const char small[] =
	"[\n"
	"{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: start\",\"ts\":0,\"pid\":1,\"tid\":1,"
	"\"args\":{\"origin_monotonic_ns\":\"5\",\"host\":\"h\"}},\n"
	"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"app\"}},"
	"\n"
	"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"old\"}},\n"
	"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"w\"}},\n"
	"{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"outer\",\"ts\":1000,\"pid\":1,\"tid\":2,"
	"\"args\":{\"k\":1}},\n"
	"{\"ph\":\"C\",\"name\":\"mem\",\"ts\":2000,\"pid\":1,\"tid\":2,\"args\":{\"v\":7}},\n"
	"{\"ph\":\"C\",\"name\":\"mem\",\"ts\":3000,\"pid\":1,\"tid\":2,\"args\":{\"v\":8}},\n"
	"{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"gone\",\"ts\":4000,\"pid\":1,\"tid\":2},\n"
	"{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"gone\",\"ts\":5000,\"pid\":1,\"tid\":2},\n"
	"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"before\",\"ts\":6000,\"dur\":1000,\"pid\":1,"
	"\"tid\":2},\n"
	"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"across\",\"ts\":9000,\"dur\":2000,\"pid\":1,"
	"\"tid\":2},\n"
	"{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"step\",\"ts\":12000,\"pid\":1,\"tid\":2},\n"
	"{\"ph\":\"s\",\"cat\":\"f\",\"name\":\"hop\",\"id\":7,\"ts\":12500,\"pid\":1,\"tid\":2},\n"
	"{\"ph\":\"C\",\"name\":\"mem\",\"ts\":13000,\"pid\":1,\"tid\":2,\"args\":{\"v\":9}},\n"
	"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"recv\",\"ts\":14000,\"dur\":1000,\"pid\":1,"
	"\"tid\":3},\n"
	"{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"f\",\"name\":\"hop\",\"id\":7,\"ts\":14500,\"pid\":1,"
	"\"tid\":3},\n"
	"{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"late\",\"ts\":18000,\"pid\":1,\"tid\":2},\n"
	"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"tail\",\"ts\":19000,\"dur\":5000,\"pid\":1,"
	"\"tid\":3},\n"
	"{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"late\",\"ts\":25000,\"pid\":1,\"tid\":2},\n"
	"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"after\",\"ts\":26000,\"dur\":1000,\"pid\":1,"
	"\"tid\":3},\n"
	"{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: end\",\"ts\":30000,\"pid\":1,\"tid\":1,"
	"\"args\":{\"final\":true}}\n"
	"]\n";

/* One expected event: ph, name, ts and dur in ns (dur -1: none), tid. */
struct want {
	const char *ph, *name;
	uint64_t ts;
	int64_t dur;
	int64_t tid;
};

static void expect_events(const char *path, const struct want *want, size_t n)
{
	struct tt_trace t;

	tool_expect_no_findings(path);
	tool_load_strict(path, &t);
	for (size_t i = 0; i < n && i < t.n; i++) {
		const struct tt_event *e = &t.ev[i];

		if (strcmp(e->ph, want[i].ph) != 0 || strcmp(e->name, want[i].name) != 0 ||
		    e->ts_ns != want[i].ts || e->tid != want[i].tid ||
		    (want[i].dur >= 0 && (!e->has_dur || e->dur_ns != (uint64_t)want[i].dur)))
			fail_msg("%s: event %zu is %s \"%s\" at %llu (dur %llu) on %lld, not %s "
				 "\"%s\" at %llu",
				 path, i, e->ph, e->name, (unsigned long long)e->ts_ns,
				 (unsigned long long)e->dur_ns, (long long)e->tid, want[i].ph,
				 want[i].name, (unsigned long long)want[i].ts);
	}
	assert_int_equal(t.n, n);
	tt_free(&t);
}

static void a_window_holds_what_overlaps_it(void **state)
{
	const char *in = tool_tmp("win.json"), *out = tool_tmp("win-out.json");
	static const struct want want[] = {
		{"i", "ringtrace: start", 10000000, -1, 1},
		{"M", "process_name", 0, -1, 1},
		{"M", "thread_name", 0, -1, 2},
		{"C", "mem", 10000000, -1, 2}, /* its last value before the window */
		{"X", "across", 10000000, 1000000, 2},
		{"B", "outer", 10000000, -1, 2}, /* open at the start: reopened there */
		{"B", "step", 12000000, -1, 2},
		{"s", "hop", 12500000, -1, 2},
		{"C", "mem", 13000000, -1, 2},
		{"X", "recv", 14000000, 1000000, 3},
		{"f", "hop", 14500000, -1, 3},
		{"B", "late", 18000000, -1, 2},
		{"X", "tail", 19000000, 1000000, 3}, /* clipped at the end */
		{"E", "late", 20000000, -1, 2},	     /* ended at the window's end */
		{"E", "step", 20000000, -1, 2},
		{"E", "outer", 20000000, -1, 2},
		{"i", "ringtrace: end", 20000000, -1, 1},
	};
	struct tt_trace t;
	struct tool_run r;

	(void)state;
	tool_write(in, small, sizeof(small) - 1);
	tool_run(&r, NULL, "window", "--from", "10ms", "--to", "20ms", "-o", out, in, NULL);
	if (r.status != 0)
		fail_msg("window: exit %d\n%s", r.status, r.err);
	assert_true(tool_has(r.err, "3 slices reopened") || tool_has(r.err, "1 slices reopened"));
	tool_run_free(&r);
	expect_events(out, want, sizeof(want) / sizeof(want[0]));
	tool_load_strict(out, &t);
	/* The latest thread name, the start marker's args kept, the window added. */
	assert_string_equal(tt_arg(&t.ev[2], "name")->s, "w");
	assert_string_equal(tt_arg(&t.ev[0], "origin_monotonic_ns")->s, "5");
	assert_string_equal(tt_arg(&t.ev[0], "window_from")->raw, "10000");
	assert_string_equal(tt_arg(&t.ev[0], "window_to")->raw, "20000");
	assert_int_equal(tt_arg(&t.ev[3], "v")->i, 8);
	assert_int_equal(tt_arg(&t.ev[5], "k")->i, 1);
	assert_string_equal(t.ev[7].id, "7");
	assert_string_equal(t.ev[10].id, "7");
	assert_int_equal(tt_arg(&t.ev[16], "slices_closed")->i, 3);
	assert_int_equal(tt_arg(&t.ev[16], "x_clipped")->i, 2);
	tt_free(&t);
	unlink(out);
	unlink(in);
}

static void around_and_width_and_no_clip(void **state)
{
	const char *in = tool_tmp("win2.json"), *out = tool_tmp("win2-out.json");
	static const struct want want[] = {
		{"i", "ringtrace: start", 18500000, -1, 1},
		{"M", "process_name", 0, -1, 1},
		{"M", "thread_name", 0, -1, 2},
		{"C", "mem", 18500000, -1, 2},
		{"X", "tail", 19000000, 5000000, 3}, /* whole */
		/* Thread 2 has no event in the window: its open slices, at the end. */
		{"B", "outer", 18500000, -1, 2},
		{"B", "step", 18500000, -1, 2},
		{"B", "late", 18500000, -1, 2},
		{"E", "late", 19500000, -1, 2},
		{"E", "step", 19500000, -1, 2},
		{"E", "outer", 19500000, -1, 2},
		{"i", "ringtrace: end", 19500000, -1, 1},
	};
	struct tool_run r;

	(void)state;
	tool_write(in, small, sizeof(small) - 1);
	tool_run(&r, NULL, "window", "--around", "19ms", "--width", "1000us", "--no-clip", "-o",
		 out, in, NULL);
	if (r.status != 0)
		fail_msg("window: exit %d\n%s", r.status, r.err);
	tool_run_free(&r);
	expect_events(out, want, sizeof(want) / sizeof(want[0]));
	/* --absolute: the same here, the trace beginning at 0. */
	tool_run(&r, NULL, "window", "--absolute", "--around", "0.019s", "--width", "1ms",
		 "--no-clip", "-o", out, in, NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
	expect_events(out, want, sizeof(want) / sizeof(want[0]));
	unlink(out);
	unlink(in);
}

static void usage_errors_are_exit_2(void **state)
{
	static const struct {
		const char *args[8];
		const char *err;
	} cases[] = {
		{{"window", "a.json"}, "no window"},
		{{"window", "--from", "10", "a.json"}, "--from wants a time with its unit"},
		{{"window", "--from", "-1s", "a.json"}, "--from wants a time"},
		{{"window", "--to", "1.5xs", "a.json"}, "--to wants a time"},
		{{"window", "--from", "1.0000000001s", "a.json"}, "--from wants a time"},
		{{"window", "--from", "2s", "--to", "1s", "a.json"}, "ends before it begins"},
		{{"window", "--around", "1s", "a.json"}, "--around and --width go together"},
		{{"window", "--around", "1s", "--width", "0s", "a.json"}, "above 0"},
		{{"window", "--around", "1s", "--width", "1s", "--from", "1s", "a.json"},
		 "not both"},
		{{"window", "--from", "1s"}, "no FILE"},
		{{"window", "--from", "1s", "--margin", "x", "a.json"}, "--margin wants"},
	};
	struct tool_run r;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const *a = cases[i].args;

		tool_run(&r, NULL, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], NULL);
		if (r.status != 2 || !tool_has(r.err, cases[i].err))
			fail_msg("case %zu: exit %d\n%s", i, r.status, r.err);
		tool_run_free(&r);
	}
	tool_run(&r, NULL, "window", "--from", "1s", tool_tmp("missing.json"), NULL);
	assert_int_equal(r.status, 2);
	assert_true(tool_has(r.err, "cannot read"));
	tool_run_free(&r);
	tool_run(&r, NULL, "help", "window", NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.out, "usage: ringtrace window"));
	tool_run_free(&r);
}

/*
 * A file of several MB in the recorder's shape (one event per line, two threads written
 * in batches as its drain makes them, X events written when they end, a run-long B
 * and a run-long X written last): a window out of its middle is searched, reads far
 * less than the file, and equals the one --exact reads in order, event for event, but
 * for what the search does not read by design: the run-long B, begun before the part
 * read (--exact reopens it at the window's start and ends it at its end).
 */
static void a_searched_window_is_the_exact_one(void **state)
{
	const char *in = tool_tmp("win-big.json"), *fast = tool_tmp("win-fast.json");
	const char *exact = tool_tmp("win-exact.json");
	struct tool_text t = {0};
	struct tt_trace a, b;
	struct tool_run r;
	long steps = 40000; /* 2 threads x 40000 steps of 1 us: 80 ms */

	(void)state;
	tool_text_printf(&t, "[\n{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: start\",\"ts\":0,"
			     "\"pid\":1,\"tid\":1,\"args\":{}},\n"
			     "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":"
			     "{\"name\":\"a\"}},\n"
			     "{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"run\",\"ts\":1,\"pid\":1,"
			     "\"tid\":2},\n");
	for (long s = 0; s < steps; s += 100) {
		for (int tid = 2; tid <= 3; tid++) {
			for (long k = s; k < s + 100; k++)
				tool_text_printf(
					&t,
					"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"work\",\"ts\":"
					"%ld.25,\"dur\":1.5,\"pid\":1,\"tid\":%d,\"args\":"
					"{\"k\":%ld,\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
					"xxxxxxxxxxxxxxxxxx\"}},\n",
					10 + k * 2, tid, k);
		}
	}
	tool_text_printf(&t,
			 "{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"run\",\"ts\":%ld,\"pid\":1,"
			 "\"tid\":2},\n"
			 "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"main\",\"ts\":1,\"dur\":%ld,"
			 "\"pid\":1,\"tid\":3},\n"
			 "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: end\",\"ts\":%ld,\"pid\":"
			 "1,\"tid\":1,\"args\":{}}\n]\n",
			 20 + steps * 2, 20 + steps * 2, 30 + steps * 2);
	tool_write(in, t.p, t.len);
	free(t.p);
	tool_run(&r, NULL, "window", "--from", "40ms", "--to", "41ms", "--margin", "500us", "-o",
		 fast, in, NULL);
	if (r.status != 0)
		fail_msg("window: exit %d\n%s", r.status, r.err);
	assert_true(tool_has(r.err, "(searched)"));
	assert_true(tool_has(r.err, " MB of 12.2 MB")); /* about 4 MB */
	assert_false(tool_has(r.err, "read 12.2 MB"));
	tool_run_free(&r);
	tool_run(&r, NULL, "window", "--exact", "--from", "40ms", "--to", "41ms", "-o", exact, in,
		 NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.err, "(in order)"));
	tool_run_free(&r);
	tool_expect_no_findings(fast);
	tool_expect_no_findings(exact);
	tool_load_strict(fast, &a);
	tool_load_strict(exact, &b);
	assert_int_equal(a.n + 2, b.n);
	assert_true(a.n > 1000);
	assert_string_equal(b.ev[b.n - 3].ph, "B");
	assert_string_equal(b.ev[b.n - 3].name, "run");
	assert_int_equal(b.ev[b.n - 3].ts_ns, 40000000);
	assert_string_equal(b.ev[b.n - 2].ph, "E");
	assert_int_equal(b.ev[b.n - 2].ts_ns, 41000000);
	for (size_t i = 0; i < a.n - 1; i++) {
		assert_string_equal(a.ev[i].ph, b.ev[i].ph);
		assert_string_equal(a.ev[i].name, b.ev[i].name);
		assert_int_equal(a.ev[i].ts_ns, b.ev[i].ts_ns);
		assert_int_equal(a.ev[i].dur_ns, b.ev[i].dur_ns);
	}
	/* "main", written last, found in the tail, clipped. */
	{
		bool main_seen = false;

		for (size_t i = 0; i < a.n; i++)
			main_seen |= strcmp(a.ev[i].name, "main") == 0 &&
				     a.ev[i].ts_ns == 40000000 && a.ev[i].dur_ns == 1000000;
		assert_true(main_seen);
	}
	tt_free(&a);
	tt_free(&b);
	unlink(fast);
	unlink(exact);
	unlink(in);
}

/* The lines of a window's text but its B and E (a searched window finds no B before its
 * search, the exact one does) and its end marker (which says how it was read). */
static char *lines_but_slices_and_end(const char *path)
{
	size_t len;
	char *text = tu_read_file(path, &len), *out = calloc(1, len + 1), *o = out;

	assert_non_null(out);
	for (char *p = text, *nl; *p != '\0'; p = nl + 1) {
		nl = strchr(p, '\n');
		if (nl == NULL)
			nl = p + strlen(p) - 1;
		if (strstr(p, "\"ph\":\"B\"") == NULL || strstr(p, "\"ph\":\"B\"") > nl)
			if ((strstr(p, "\"ph\":\"E\"") == NULL || strstr(p, "\"ph\":\"E\"") > nl) &&
			    (strstr(p, "ringtrace: end") == NULL ||
			     strstr(p, "ringtrace: end") > nl)) {
				memcpy(o, p, (size_t)(nl + 1 - p));
				o += nl + 1 - p;
			}
	}
	free(text);
	return out;
}

/*
 * Counters before a searched window are held on the glance's thread so that the
 * reader parses only each series' last value: the window begins every series with
 * the value the exact read gives, also for a series whose lines have different keys
 * (one held entry each, the last line passing last), among instants that are dropped
 * past the window. The file is large enough for a second thread to glance at its far
 * half, where the slices around the window are written.
 */
static void counters_before_a_searched_window_are_its_first_values(void **state)
{
	const char *in = tool_tmp("win-counters.json"), *fast = tool_tmp("win-c-fast.json");
	const char *exact = tool_tmp("win-c-exact.json");
	static const char *const from[] = {"40ms", "40200us", "40201us"};
	struct tool_text t = {0};
	struct tool_run r;

	(void)state;
	tool_text_printf(&t, "[\n{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: start\",\"ts\":0,"
			     "\"pid\":1,\"tid\":1,\"args\":{}},\n");
	for (long s = 0; s < 160000; s += 100) { /* 24 MB: two threads glance (read.c) */
		for (int tid = 2; tid <= 3; tid++) {
			for (long k = s; k < s + 100; k++)
				tool_text_printf(
					&t,
					"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"work\","
					"\"ts\":%ld.25,\"dur\":1.5,\"pid\":1,\"tid\":%d},\n",
					10 + k * 2, tid);
			tool_text_printf(&t,
					 "{\"ph\":\"C\",\"cat\":\"c\",\"name\":\"mem\",\"ts\":%ld."
					 "5,\"pid\":1,"
					 "\"tid\":%d,\"args\":{\"v\":%ld}},\n"
					 "{\"ph\":\"C\",\"cat\":\"c\",\"name\":\"two\",\"ts\":%ld."
					 "75,\"pid\":1,"
					 "\"tid\":2,\"args\":{\"a\":%ld%s}},\n"
					 "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"tick\",\"ts\":%ld."
					 "875,\"pid\":1,"
					 "\"tid\":%d},\n",
					 10 + s * 2, tid, s * 10 + tid, 10 + s * 2, s + tid,
					 (s / 100 + tid) % 3 == 0 ? ",\"b\":-1.5e3" : "",
					 10 + s * 2, tid);
		}
	}
	/* Slices around the window written at the file's end, in the far half. */
	tool_text_printf(&t, "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"across\",\"ts\":39000,"
			     "\"dur\":5000,\"pid\":1,\"tid\":2},\n"
			     "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"main\",\"ts\":1,"
			     "\"dur\":330000,\"pid\":1,\"tid\":3},\n"
			     "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: end\",\"ts\":330010,"
			     "\"pid\":1,\"tid\":1,\"args\":{}}\n]\n");
	tool_write(in, t.p, t.len);
	free(t.p);
	for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
		char *a, *b;

		tool_run(&r, NULL, "window", "--from", from[i], "--to", "41ms", "--margin", "500us",
			 "-o", fast, in, NULL);
		assert_int_equal(r.status, 0);
		assert_true(tool_has(r.err, "(searched)"));
		tool_run_free(&r);
		tool_run(&r, NULL, "window", "--exact", "--from", from[i], "--to", "41ms", "-o",
			 exact, in, NULL);
		assert_int_equal(r.status, 0);
		tool_run_free(&r);
		a = lines_but_slices_and_end(fast);
		b = lines_but_slices_and_end(exact);
		assert_true(tool_has(a, "\"name\":\"two\",\"ts\":")); /* a value carried */
		assert_true(tool_has(a, "\"name\":\"across\""));
		assert_true(tool_has(a, "\"name\":\"main\""));
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	unlink(fast);
	unlink(exact);
	unlink(in);
}

/* A slice of the file below, written as one X when it ends (the recorder's complete
 * events): its times in us, its thread. */
struct late_x {
	const char *name;
	double ts, end;
	int tid;
};

/*
 * The recorder's layout where every slice is one X written when it ends: a slice
 * around the window is written long after it in the file. ts and dur are clipped to
 * the window [40 ms, 41 ms] as the docs say: ts to its start when earlier, dur to end
 * at its end when later.
 */
static void a_late_x_around_the_window_is_found(void **state)
{
	static const struct late_x late[] = {
		{"across", 39500, 42500, 2},   /* around the whole window, ends 1.5 ms after */
		{"into_end", 40600, 47000, 3}, /* begins inside, ends 6 ms after */
		{"from_start", 1, 70000, 2},   /* begun at the start, ends 30 ms after */
		{"before", 39000, 39900, 3},   /* ends before the window: not in it */
		{"inside", 40200, 40700.5, 2}, /* inside it: whole */
		{"after", 41200.25, 55000, 3}, /* begins after it */
	};
	static const struct {
		const char *name;
		uint64_t ts, dur;
	} want[] = {
		{"across", 40000000, 1000000},
		{"into_end", 40600000, 400000},
		{"from_start", 40000000, 1000000},
		{"inside", 40200000, 500500},
	};
	const char *in = tool_tmp("win-late.json"), *fast = tool_tmp("win-late-fast.json");
	const char *exact = tool_tmp("win-late-exact.json");
	const size_t nlate = sizeof(late) / sizeof(late[0]);
	bool written[sizeof(late) / sizeof(late[0])] = {false};
	struct tool_text t = {0};
	struct tt_trace a, b;
	struct tool_run r;
	long steps = 40000; /* 2 threads x 40000 steps of 2 us: 80 ms */

	(void)state;
	tool_text_printf(&t, "[\n{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: start\",\"ts\":0,"
			     "\"pid\":1,\"tid\":1,\"args\":{}},\n");
	for (long s = 0; s < steps; s += 100) {
		double batch_end = 10 + (double)(s + 100) * 2;

		for (int tid = 2; tid <= 3; tid++) {
			for (long k = s; k < s + 100; k++)
				tool_text_printf(
					&t,
					"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"work\",\"ts\":"
					"%ld.25,\"dur\":1.5,\"pid\":1,\"tid\":%d,\"args\":"
					"{\"k\":%ld,\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
					"xxxxxxxxxxxxxxxxxx\"}},\n",
					10 + k * 2, tid, k);
		}
		/* Each slice where the drain would write it: with the batch it ends in. */
		for (size_t i = 0; i < nlate; i++) {
			if (written[i] || late[i].end > batch_end)
				continue;
			written[i] = true;
			tool_text_printf(&t,
					 "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"%s\",\"ts\":%.3f,"
					 "\"dur\":%.3f,\"pid\":1,\"tid\":%d},\n",
					 late[i].name, late[i].ts, late[i].end - late[i].ts,
					 late[i].tid);
		}
	}
	tool_text_printf(&t,
			 "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: end\",\"ts\":%ld,"
			 "\"pid\":1,\"tid\":1,\"args\":{}}\n]\n",
			 30 + steps * 2);
	tool_write(in, t.p, t.len);
	free(t.p);
	tool_run(&r, NULL, "window", "--from", "40ms", "--to", "41ms", "--margin", "500us", "-o",
		 fast, in, NULL);
	if (r.status != 0)
		fail_msg("window: exit %d\n%s", r.status, r.err);
	assert_true(tool_has(r.err, "(searched)"));
	tool_run_free(&r);
	tool_run(&r, NULL, "window", "--exact", "--from", "40ms", "--to", "41ms", "-o", exact, in,
		 NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
	tool_expect_no_findings(fast);
	tool_load_strict(fast, &a);
	tool_load_strict(exact, &b);
	/* The same window either way, event for event and value for value. */
	assert_int_equal(a.n, b.n);
	for (size_t i = 0; i < a.n; i++) {
		assert_string_equal(a.ev[i].ph, b.ev[i].ph);
		assert_string_equal(a.ev[i].name, b.ev[i].name);
		assert_int_equal(a.ev[i].ts_ns, b.ev[i].ts_ns);
		assert_int_equal(a.ev[i].has_dur, b.ev[i].has_dur);
		assert_int_equal(a.ev[i].dur_ns, b.ev[i].dur_ns);
		assert_int_equal(a.ev[i].tid, b.ev[i].tid);
	}
	/* Each slice that overlaps the window once, clipped; the others not at all; every
	 * event inside [from, to]. */
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		size_t seen = 0;

		for (size_t i = 0; i < a.n; i++) {
			if (strcmp(a.ev[i].name, want[k].name) != 0)
				continue;
			seen++;
			assert_string_equal(a.ev[i].ph, "X");
			assert_int_equal(a.ev[i].ts_ns, want[k].ts);
			assert_int_equal(a.ev[i].dur_ns, want[k].dur);
		}
		if (seen != 1)
			fail_msg("%s: %zu times in the window", want[k].name, seen);
	}
	for (size_t i = 0; i < a.n; i++) {
		assert_true(strcmp(a.ev[i].name, "before") != 0 &&
			    strcmp(a.ev[i].name, "after") != 0);
		assert_true(a.ev[i].ts_ns >= 40000000 && a.ev[i].ts_ns <= 41000000);
		if (a.ev[i].has_dur)
			assert_true(a.ev[i].ts_ns + a.ev[i].dur_ns <= 41000000);
	}
	/* 2 threads x 250 steps of work in [40 ms, 41 ms] (those that end in it too),
	 * the 4 slices, the start and end markers. */
	assert_true(a.n >= 500 + 4 + 2);
	tt_free(&a);
	tt_free(&b);
	unlink(fast);
	unlink(exact);
	unlink(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_window_holds_what_overlaps_it),
		cmocka_unit_test(around_and_width_and_no_clip),
		cmocka_unit_test(usage_errors_are_exit_2),
		cmocka_unit_test(a_searched_window_is_the_exact_one),
		cmocka_unit_test(a_late_x_around_the_window_is_found),
		cmocka_unit_test(counters_before_a_searched_window_are_its_first_values),
	};

	return cmocka_run_group_tests_name("tools_window", tests, NULL, NULL);
}
