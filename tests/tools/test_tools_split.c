/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace split` end to end. A generated trace with slices open across every cut
 * (a run-long "outer" slice, steps, a thread written in lagging batches as the
 * recorder's drain order makes it, an async span, names that appear late) is split
 * by events and by megabytes; every piece must be strict JSON (tests/support's
 * parser, not the tool's), pass `ringtrace check`, stay under the limit, and the
 * pieces together must be the original: the test replays the original through its
 * own model of what is open and checks each piece's framing exactly (start marker,
 * repeated names, reopened slices at their thread's cut time, the closing E events 1
 * ns after it, the end marker) and every other event value by value, in order.
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

/* ------------------------------------------------------------------ helpers */

/*
 * A trace of `steps` steps. Thread 11 has a run-long "outer" slice and per step a
 * "step" slice holding an "inner" one and an X that began before "inner" and is
 * written after it (X events are written when they end); thread 12 is written in
 * batches of 5 steps after thread 11's (its ring drained later), and named only when
 * it first appears; an async span "req" is open from start to end. Cut (no end
 * marker, no ']', a partial last line) when cut is true.
 */
static void gen_trace(const char *path, int steps, bool cut)
{
	struct tool_text t = {0};
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	tool_text_printf(
		&t,
		"[\n{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: start\",\"ts\":0,\"pid\":10,"
		"\"tid\":10,\"args\":{\"origin_monotonic_ns\":\"7000\",\"origin_realtime_ns\":"
		"\"8000\",\"host\":\"h\",\"pid\":10,\"rank\":3}},\n"
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":10,\"tid\":10,\"args\":{\"name\":"
		"\"app\"}},\n"
		"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":10,\"tid\":11,\"args\":{\"name\":"
		"\"worker 1\"}},\n"
		"{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"outer\",\"ts\":1,\"pid\":10,\"tid\":11,"
		"\"args\":{\"run\":\"x \\\"q\\\" \xc3\xa9\"}},\n"
		"{\"ph\":\"b\",\"cat\":\"net\",\"name\":\"req\",\"id\":\"0x2a\",\"ts\":1.5,\"pid\":"
		"10,"
		"\"tid\":11,\"args\":{\"url\":\"/a\"}},\n");
	for (int s = 0; s < steps; s++) {
		long base = 10 + (long)s * 10;

		tool_text_printf(
			&t,
			"{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"step\",\"ts\":%ld,\"pid\":10,"
			"\"tid\":"
			"11,"
			"\"args\":{\"s\":%d}},\n"
			"{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"inner\",\"ts\":%ld.001,\"pid\":10,"
			"\"tid\":"
			"11},\n"
			"{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"inner\",\"ts\":%ld.002,\"pid\":10,"
			"\"tid\":"
			"11},\n"
			"{\"ph\":\"X\",\"cat\":\"k\",\"name\":\"late\",\"ts\":%ld.5,\"dur\":2.25,"
			"\"pid\":10,"
			"\"tid\":11,\"args\":{\"s\":%d}},\n"
			"{\"ph\":\"C\",\"cat\":\"c\",\"name\":\"depth\",\"ts\":%ld.75,\"pid\":10,"
			"\"tid\":11,"
			"\"args\":{\"v\":%d}},\n"
			"{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"step\",\"ts\":%ld,\"pid\":10,"
			"\"tid\":"
			"11},\n",
			base, s, base + 1, base + 2, base, s, base + 3, s % 7, base + 4);
		if (t.len > (1u << 20)) {
			/* Streamed out: the large test writes a hundred MB. */
			assert_int_equal(fwrite(t.p, 1, t.len, f), t.len);
			t.len = 0;
		}
		if (s % 5 != 4)
			continue;
		if (s == 4)
			tool_text_printf(&t, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":10,"
					     "\"tid\":12,\"args\":"
					     "{\"name\":\"io\"}},\n");
		for (int k = s - 4; k <= s; k++) {
			long b = 10 + (long)k * 10;

			tool_text_printf(&t,
					 "{\"ph\":\"B\",\"cat\":\"io\",\"name\":\"write\",\"ts\":%"
					 "ld.25,\"pid\":"
					 "10,"
					 "\"tid\":12,\"args\":{\"k\":%d}},\n"
					 "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"io\",\"name\":"
					 "\"tick\",\"ts\":%ld."
					 "5,"
					 "\"pid\":10,\"tid\":12},\n"
					 "{\"ph\":\"E\",\"cat\":\"io\",\"name\":\"write\",\"ts\":%"
					 "ld,\"pid\":10,"
					 "\"tid\":12},\n",
					 b, k, b + 1, b + 3);
		}
	}
	if (cut) {
		tool_text_printf(&t, "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"lost\",\"ts\":1");
	} else {
		long end = 10 + (long)steps * 10;

		tool_text_printf(
			&t,
			"{\"ph\":\"e\",\"cat\":\"net\",\"name\":\"req\",\"id\":\"0x2a\",\"ts\":%ld,"
			"\"pid\":"
			"10,\"tid\":12},\n"
			"{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"outer\",\"ts\":%ld,\"pid\":10,"
			"\"tid\":"
			"11},\n"
			"{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: "
			"end\",\"ts\":%ld,\"pid\":10,"
			"\"tid\":10,\"args\":{\"final\":true,\"events\":12345,\"dropped\":7}}\n]\n",
			end, end + 1, end + 2);
	}
	assert_int_equal(fwrite(t.p, 1, t.len, f), t.len);
	assert_int_equal(fclose(f), 0);
	free(t.p);
}

static const struct tt_arg *arg_of(const struct tt_event *e, const char *key)
{
	const struct tt_arg *a = tt_arg(e, key);

	if (a == NULL)
		fail_msg("event at line %zu has no args.%s", e->line, key);
	return a;
}

static void expect_same_str(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void expect_same_args(const struct tt_event *a, const struct tt_event *b)
{
	assert_int_equal(a->nargs, b->nargs);
	for (size_t i = 0; i < a->nargs; i++) {
		assert_string_equal(a->args[i].key, b->args[i].key);
		assert_int_equal(a->args[i].type, b->args[i].type);
		if (a->args[i].type == TT_STRING)
			assert_string_equal(a->args[i].s, b->args[i].s);
		else if (a->args[i].raw != NULL)
			assert_string_equal(a->args[i].raw, b->args[i].raw);
	}
}

/* Every value of two events, times included. */
static void expect_same_event(const struct tt_event *a, const struct tt_event *b)
{
	assert_string_equal(a->ph, b->ph);
	expect_same_str(a->name, b->name);
	expect_same_str(a->cat, b->cat);
	expect_same_str(a->scope, b->scope);
	expect_same_str(a->id, b->id);
	assert_int_equal(a->ts_ns, b->ts_ns);
	assert_int_equal(a->dur_ns, b->dur_ns);
	assert_int_equal(a->pid, b->pid);
	assert_int_equal(a->tid, b->tid);
	assert_int_equal(a->nkeys, b->nkeys);
	expect_same_args(a, b);
}

/* The same event written again at another time: a reopened B or b. */
static void expect_reopened(const struct tt_event *got, const struct tt_event *orig, uint64_t ts)
{
	assert_string_equal(got->ph, orig->ph);
	expect_same_str(got->name, orig->name);
	expect_same_str(got->cat, orig->cat);
	expect_same_str(got->id, orig->id);
	assert_int_equal(got->pid, orig->pid);
	assert_int_equal(got->tid, orig->tid);
	assert_int_equal(got->ts_ns, ts);
	expect_same_args(got, orig);
}

/* An E or e that ends orig (a B or b) at ts. */
static void expect_close(const struct tt_event *got, const struct tt_event *orig, char ph,
			 uint64_t ts, int64_t tid)
{
	assert_int_equal(got->ph[0], ph);
	expect_same_str(got->name, orig->name);
	expect_same_str(got->cat, orig->cat);
	expect_same_str(got->id, orig->id);
	assert_int_equal(got->pid, orig->pid);
	assert_int_equal(got->tid, tid);
	assert_int_equal(got->ts_ns, ts);
	assert_int_equal(got->nargs, 0);
}

/* ------------------------------------------------- the model of the original */

#define MAX_THREADS 8
#define MAX_DEPTH   16
#define MAX_META    16

/* What is open after the original's events up to a point, replayed independently of
 * the tool: per thread (in order of first appearance) its open B events and latest
 * time; the open async spans; the latest M event of each kind per process or thread. */
struct model {
	const struct tt_trace *orig;
	struct {
		int64_t pid, tid;
		size_t open[MAX_DEPTH], depth;
		bool has_time;
		uint64_t latest;    /* a ts, or the end of an X */
		uint64_t be_latest; /* of its B and E events: where a cut reopens */
	} th[MAX_THREADS];
	size_t nth;
	size_t span[MAX_DEPTH], nspan; /* open b events (one key in these traces) */
	uint64_t span_latest;
	size_t meta[MAX_META], nmeta;
	uint64_t latest; /* over every event */
	size_t next;	 /* the next event of the original */
};

static size_t thread_of(struct model *m, const struct tt_event *e)
{
	int64_t pid = e->has_pid ? e->pid : 0, tid = e->has_tid ? e->tid : pid;

	for (size_t i = 0; i < m->nth; i++) {
		if (m->th[i].pid == pid && m->th[i].tid == tid)
			return i;
	}
	assert_true(m->nth < MAX_THREADS);
	m->th[m->nth].pid = pid;
	m->th[m->nth].tid = tid;
	m->th[m->nth].depth = 0;
	m->th[m->nth].has_time = false;
	m->th[m->nth].be_latest = 0;
	return m->nth++;
}

static bool same_meta(const struct tt_event *a, const struct tt_event *b)
{
	bool process = strncmp(a->name, "process_", 8) == 0;

	return strcmp(a->name, b->name) == 0 && a->pid == b->pid && (process || a->tid == b->tid);
}

/* One event of the original, in order. */
static void replay(struct model *m, size_t i)
{
	const struct tt_event *e = &m->orig->ev[i];
	size_t t = thread_of(m, e);
	uint64_t end = e->ts_ns + (strcmp(e->ph, "X") == 0 ? e->dur_ns : 0);

	if (e->has_ts) {
		if (!m->th[t].has_time || end > m->th[t].latest)
			m->th[t].latest = end;
		m->th[t].has_time = true;
		if (end > m->latest)
			m->latest = end;
	}
	if ((e->ph[0] == 'B' || e->ph[0] == 'E') && e->ts_ns > m->th[t].be_latest)
		m->th[t].be_latest = e->ts_ns;
	switch (e->ph[0]) {
	case 'B':
		m->th[t].open[m->th[t].depth++] = i;
		break;
	case 'E':
		m->th[t].depth--;
		break;
	case 'b':
		m->span[m->nspan++] = i;
		if (m->nspan == 1 || e->ts_ns > m->span_latest)
			m->span_latest = e->ts_ns;
		break;
	case 'e':
		m->nspan--;
		break;
	case 'M':
		for (size_t k = 0; k < m->nmeta; k++) {
			if (same_meta(&m->orig->ev[m->meta[k]], e)) {
				m->meta[k] = i;
				return;
			}
		}
		assert_true(m->nmeta < MAX_META);
		m->meta[m->nmeta++] = i;
		break;
	default:
		break;
	}
}

struct split_summary {
	unsigned pieces;
	size_t events;	   /* the original's events found in the pieces */
	size_t reopened;   /* B slices reopened */
	size_t closed_cut; /* E events at cuts */
};

/*
 * Check pieces prefix-0001.json ... against the original, each exactly: framing from
 * the model, then the original's next events in order, then the closes.
 */
static void expect_pieces(const char *prefix, const struct tt_trace *orig, bool gz,
			  uint64_t max_events, uint64_t max_bytes, struct split_summary *sum)
{
	struct model m = {.orig = orig, .next = 1};
	const struct tt_event *ostart = &orig->ev[0];

	memset(sum, 0, sizeof(*sum));
	for (unsigned k = 1;; k++) {
		char path[4200], plain[4200];
		struct tt_trace p;
		const struct tt_event *start, *end;
		size_t i = 1, body_end, closes, size;
		uint64_t ts_from = UINT64_MAX;

		snprintf(path, sizeof(path), "%s-%04u.json%s", prefix, k, gz ? ".gz" : "");
		if (access(path, F_OK) != 0)
			break;
		sum->pieces = k;
		if (gz) {
			char *text = tool_gunzip(path, &size);

			snprintf(plain, sizeof(plain), "%s-%04u.unz.json", prefix, k);
			tool_write(plain, text, size);
			free(text);
		} else {
			snprintf(plain, sizeof(plain), "%s", path);
			free(tu_read_file(path, &size));
		}
		if (max_bytes > 0 && size > max_bytes)
			fail_msg("%s: %zu bytes, over %llu", path, size,
				 (unsigned long long)max_bytes);
		tool_load_strict(plain, &p);
		if (max_events > 0 && p.n > max_events)
			fail_msg("%s: %zu events, over %llu", path, p.n,
				 (unsigned long long)max_events);
		tool_expect_no_findings(path);

		/* The start marker: the original's, with the piece's number. */
		start = &p.ev[0];
		assert_string_equal(start->name, "ringtrace: start");
		assert_int_equal(arg_of(start, "piece")->i, k);
		assert_string_equal(arg_of(start, "origin_monotonic_ns")->s, "7000");
		assert_int_equal(arg_of(start, "rank")->i, 3);
		assert_int_equal(start->pid, ostart->pid);
		assert_int_equal(start->nargs, ostart->nargs + 2);
		if (k > 1) {
			/* The names seen so far, the latest of each. */
			for (size_t n = 0; n < m.nmeta; n++)
				expect_same_event(&p.ev[i++], &orig->ev[m.meta[n]]);
			/* Each thread's open slices, outermost first, at its latest B or
			 * E (which its next B or E follows). */
			for (size_t t = 0; t < m.nth; t++) {
				for (size_t d = 0; d < m.th[t].depth; d++) {
					expect_reopened(&p.ev[i++], &orig->ev[m.th[t].open[d]],
							m.th[t].be_latest);
					sum->reopened++;
					if (m.th[t].be_latest < ts_from)
						ts_from = m.th[t].be_latest;
				}
			}
			/* The open async spans, at their latest time. */
			for (size_t d = 0; d < m.nspan; d++) {
				expect_reopened(&p.ev[i++], &orig->ev[m.span[d]], m.span_latest);
				if (m.span_latest < ts_from)
					ts_from = m.span_latest;
			}
		}
		end = &p.ev[p.n - 1];
		assert_string_equal(end->name, "ringtrace: end");
		assert_int_equal(arg_of(end, "piece")->i, k);
		closes = (size_t)(arg_of(end, "slices_closed")->i + arg_of(end, "async_closed")->i);
		assert_true(p.n >= i + closes + 1);
		body_end = p.n - 1 - closes;
		assert_int_equal(arg_of(end, "piece_events")->i, body_end - i);
		if (k > 1) {
			uint64_t first = p.ev[i].has_ts ? p.ev[i].ts_ns : m.latest, at;

			/* The piece begins at the earliest of its first event and what it
			 * reopens; both markers say so. */
			if (first < ts_from)
				ts_from = first;
			assert_int_equal(start->ts_ns, ts_from);
			assert_int_equal(tt_parse_us(arg_of(end, "ts_from")->raw,
						     strlen(arg_of(end, "ts_from")->raw), &at),
					 0);
			assert_int_equal(at, ts_from);
		}
		/* The original's events, in order. */
		for (; i < body_end; i++) {
			if (m.next >= orig->n - 1)
				fail_msg("%s: more events than the original", path);
			expect_same_event(&p.ev[i], &orig->ev[m.next]);
			replay(&m, m.next++);
			sum->events++;
		}
		/* What is open, closed: E innermost first 1 ns after the thread's latest
		 * time (an X inside the slices included: in these traces every X is inside
		 * all of them); then e after the latest time of all. */
		for (size_t t = 0; t < m.nth; t++) {
			for (size_t d = m.th[t].depth; d-- > 0;) {
				expect_close(&p.ev[i++], &orig->ev[m.th[t].open[d]], 'E',
					     m.th[t].latest + 1, m.th[t].tid);
				sum->closed_cut++;
			}
		}
		for (size_t d = m.nspan; d-- > 0;)
			expect_close(&p.ev[i++], &orig->ev[m.span[d]], 'e', m.latest + 1,
				     orig->ev[m.span[d]].tid);
		assert_int_equal(i, p.n - 1);
		tt_free(&p);
		if (gz)
			unlink(plain);
	}
	assert_int_equal(m.next, orig->n - 1); /* all but the end marker */
}

/* The last piece's end marker: the original's counts. */
static void expect_last_end(const char *prefix, unsigned pieces)
{
	char path[4200];
	struct tt_trace p;
	const struct tt_event *end;

	snprintf(path, sizeof(path), "%s-%04u.json", prefix, pieces);
	tool_load_strict(path, &p);
	end = &p.ev[p.n - 1];
	assert_int_equal(arg_of(end, "events")->i, 12345);
	assert_int_equal(arg_of(end, "dropped")->i, 7);
	assert_true(arg_of(end, "final")->b);
	tt_free(&p);
}

static void remove_pieces(const char *prefix, unsigned pieces, bool gz)
{
	char path[4200];

	for (unsigned k = 1; k <= pieces; k++) {
		snprintf(path, sizeof(path), "%s-%04u.json%s", prefix, k, gz ? ".gz" : "");
		unlink(path);
	}
}

/* --------------------------------------------------------------------- tests */

static void usage_errors_are_exit_2(void **state)
{
	static const struct {
		const char *args[6];
		const char *err;
	} cases[] = {
		{{"split", "a.json"}, "no limit"},
		{{"split", "--max-events", "0", "a.json"}, "--max-events wants a positive number"},
		{{"split", "--max-mb", "x", "a.json"}, "--max-mb wants a positive number"},
		{{"split", "--max-mb", "1"}, "no FILE to split"},
		{{"split", "--max-mb", "1", "-"}, "standard input needs -o PREFIX"},
		{{"split", "--max-mb", "1", "-o", "-", "a.json"}, "pieces are files"},
	};
	struct tool_run r;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const *a = cases[i].args;

		tool_run(&r, NULL, a[0], a[1], a[2], a[3], a[4], a[5], NULL);
		if (r.status != 2 || !tool_has(r.err, cases[i].err))
			fail_msg("case %zu: exit %d\n%s", i, r.status, r.err);
		tool_run_free(&r);
	}
	tool_run(&r, NULL, "split", "--help", NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.out, "usage: ringtrace split"));
	tool_run_free(&r);
}

static void slices_open_at_a_cut_are_closed_and_reopened(void **state)
{
	const char *in = tool_tmp("split-in.json"), *prefix = tool_tmp("piece");
	struct split_summary sum;
	struct tt_trace orig;
	struct tool_run r;

	(void)state;
	gen_trace(in, 60, false);
	tool_load_strict(in, &orig);
	tool_run(&r, NULL, "split", "--max-events", "40", "-o", prefix, in, NULL);
	if (r.status != 0)
		fail_msg("split: exit %d\n%s", r.status, r.err);
	assert_true(tool_has(r.err, "wrote"));
	tool_run_free(&r);
	expect_pieces(prefix, &orig, false, 40, 0, &sum);
	assert_true(sum.pieces >= 10);
	assert_int_equal(sum.events, orig.n - 2);
	assert_true(sum.reopened >= sum.pieces - 1); /* "outer" at least, every time */
	assert_int_equal(sum.closed_cut, sum.reopened);
	expect_last_end(prefix, sum.pieces);
	remove_pieces(prefix, sum.pieces, false);
	tt_free(&orig);
	unlink(in);
}

static void pieces_stay_under_max_mb(void **state)
{
	const char *in = tool_tmp("split-big.json"), *prefix = tool_tmp("mb");
	struct split_summary sum;
	struct tt_trace orig;
	struct tool_run r;

	(void)state;
	if (TT_TSAN)
		skip();		    /* single-threaded and slow there: release and asan cover it */
	gen_trace(in, 4000, false); /* about 2.6 MB */
	tool_load_strict(in, &orig);
	tool_run(&r, NULL, "split", "--max-mb", "1", "-o", prefix, in, NULL);
	if (r.status != 0)
		fail_msg("split: exit %d\n%s", r.status, r.err);
	tool_run_free(&r);
	expect_pieces(prefix, &orig, false, 0, 1000000, &sum);
	assert_int_equal(sum.pieces, 3);
	assert_int_equal(sum.events, orig.n - 2);
	expect_last_end(prefix, sum.pieces);
	remove_pieces(prefix, sum.pieces, false);
	tt_free(&orig);
	unlink(in);
}

static void gzip_in_and_out(void **state)
{
	const char *in = tool_tmp("split-in2.json"), *gz = tool_tmp("split-in2.json.gz");
	const char *prefix = tool_tmp("gzp"), *prefix_gz = tool_tmp("gzp.json.gz");
	struct split_summary sum;
	struct tt_trace orig;
	struct tool_run r;
	unsigned char *z;
	size_t len, zlen;
	char *text;

	(void)state;
	gen_trace(in, 40, false);
	tool_load_strict(in, &orig);
	text = tu_read_file(in, &len);
	z = tool_gzip(text, len, 4096, &zlen, NULL, 0, NULL);
	tool_write(gz, z, zlen);
	free(z);
	free(text);
	/* A prefix ending in .json.gz writes gzip pieces ... */
	tool_run(&r, NULL, "split", "--max-events", "60", "-o", prefix_gz, gz, NULL);
	if (r.status != 0)
		fail_msg("split: exit %d\n%s", r.status, r.err);
	tool_run_free(&r);
	expect_pieces(prefix, &orig, true, 60, 0, &sum);
	assert_true(sum.pieces >= 3);
	remove_pieces(prefix, sum.pieces, true);
	/* ... and so does --gzip. */
	tool_run(&r, NULL, "split", "--gzip", "--max-events", "60", "-o", prefix, gz, NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
	expect_pieces(prefix, &orig, true, 60, 0, &sum);
	remove_pieces(prefix, sum.pieces, true);
	tt_free(&orig);
	unlink(in);
	unlink(gz);
}

/* Without -o the pieces go beside the file. */
static void default_prefix_is_the_file_name(void **state)
{
	const char *in = tool_tmp("beside.json"), *prefix = tool_tmp("beside");
	struct split_summary sum;
	struct tt_trace orig;
	struct tool_run r;

	(void)state;
	gen_trace(in, 10, false);
	tool_load_strict(in, &orig);
	tool_run(&r, NULL, "split", "--max-events", "1000", in, NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
	expect_pieces(prefix, &orig, false, 1000, 0, &sum);
	assert_int_equal(sum.pieces, 1);
	remove_pieces(prefix, 1, false);
	tt_free(&orig);
	unlink(in);
}

/*
 * A flow event written before the X that encloses it (X events are written when they
 * end), with the cut between them: it goes with its X into the next piece, so that
 * each piece passes check (and the viewers can bind it).
 */
static void a_flow_goes_with_the_slice_that_encloses_it(void **state)
{
	const char *in = tool_tmp("flows.json"), *prefix = tool_tmp("fl");
	char path[4200];
	struct tt_trace p;
	struct tool_run r;

	(void)state;
	tool_write(
		in,
		"[\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":{\"name\":"
		"\"t\"}},\n"
		"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"a\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":2}"
		",\n"
		"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"b\",\"ts\":2,\"dur\":1,\"pid\":1,\"tid\":2}"
		",\n"
		"{\"ph\":\"s\",\"cat\":\"f\",\"name\":\"hop\",\"id\":1,\"ts\":5,\"pid\":1,\"tid\":"
		"2},\n"
		"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"work\",\"ts\":4,\"dur\":6,\"pid\":1,"
		"\"tid\":2},\n"
		"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"recv\",\"ts\":11,\"dur\":2,\"pid\":1,"
		"\"tid\":3},"
		"\n"
		"{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"f\",\"name\":\"hop\",\"id\":1,\"ts\":12,"
		"\"pid\":1,"
		"\"tid\":3}\n]\n",
		strlen("[\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":{"
		       "\"name\":\"t\"}},\n"
		       "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"a\",\"ts\":1,\"dur\":1,\"pid\":1,"
		       "\"tid\":2},\n"
		       "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"b\",\"ts\":2,\"dur\":1,\"pid\":1,"
		       "\"tid\":2},\n"
		       "{\"ph\":\"s\",\"cat\":\"f\",\"name\":\"hop\",\"id\":1,\"ts\":5,\"pid\":1,"
		       "\"tid\":2},\n"
		       "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"work\",\"ts\":4,\"dur\":6,\"pid\":1,"
		       "\"tid\":2},\n"
		       "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"recv\",\"ts\":11,\"dur\":2,\"pid\":"
		       "1,"
		       "\"tid\":3},\n"
		       "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"f\",\"name\":\"hop\",\"id\":1,\"ts\":"
		       "12,"
		       "\"pid\":1,\"tid\":3}\n]\n"));
	tool_run(&r, NULL, "split", "--max-events", "5", "-o", prefix, in, NULL);
	if (r.status != 0)
		fail_msg("split: exit %d\n%s", r.status, r.err);
	tool_run_free(&r);
	/* Piece 1: marker, name, a, b, marker. The s waits for "work" in piece 2. */
	snprintf(path, sizeof(path), "%s-0001.json", prefix);
	tool_expect_no_findings(path);
	tool_load_strict(path, &p);
	assert_int_equal(p.n, 5);
	assert_string_equal(p.ev[3].name, "b");
	tt_free(&p);
	snprintf(path, sizeof(path), "%s-0002.json", prefix);
	tool_expect_no_findings(path);
	tool_load_strict(path, &p);
	assert_string_equal(p.ev[2].ph, "s");
	assert_string_equal(p.ev[3].name, "work");
	tt_free(&p);
	for (unsigned k = 3; k <= 9; k++) {
		snprintf(path, sizeof(path), "%s-%04u.json", prefix, k);
		if (access(path, F_OK) != 0)
			break;
		tool_expect_no_findings(path);
	}
	remove_pieces(prefix, 9, false);
	unlink(in);
}

/*
 * A B/E slice inside a long X that a foreign writer put first (at its start), cut
 * between its B and E. The E closing it is 1 ns after the thread's latest event other
 * than the X (not after the X's end: that made a slice overlapping the X), and the
 * next pieces reopen it at its thread's latest B (not at the X's end, after which the
 * E at 9 s went backward): no piece has a ts-order finding.
 */
static void a_slice_inside_a_long_x_is_cut_in_time_order(void **state)
{
	static const char text[] =
		"[\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":{\"name\":"
		"\"t\"}},\n"
		"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"long\",\"ts\":0,\"dur\":10000000,\"pid\":1,"
		"\"tid\":2},\n"
		"{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"inner\",\"ts\":1000000,\"pid\":1,\"tid\":2}"
		","
		"\n"
		"{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"c\",\"name\":\"tick\",\"ts\":2000000,\"pid\":"
		"1,"
		"\"tid\":2},\n"
		"{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"inner\",\"ts\":9000000,\"pid\":1,\"tid\":2}"
		"\n]\n";
	/* Per piece: the B/E events of thread 2 as (ph, ts in ns). */
	static const struct {
		size_t n;
		char ph[4];
		uint64_t ts[4];
	} want[] = {
		{2, "BE", {1000000000, 1000000001}},
		{2, "BE", {1000000000, 2000000001}},
		{2, "BE", {1000000000, 9000000000}},
	};
	const char *in = tool_tmp("longx.json"), *prefix = tool_tmp("longx");
	char path[4200];
	struct tool_run r;

	(void)state;
	tool_write(in, text, sizeof(text) - 1);
	tool_run(&r, NULL, "split", "--max-events", "6", "-o", prefix, in, NULL);
	if (r.status != 0)
		fail_msg("split: exit %d\n%s", r.status, r.err);
	tool_run_free(&r);
	for (unsigned k = 1; k <= 4; k++) {
		struct tt_trace p;
		size_t n = 0;

		snprintf(path, sizeof(path), "%s-%04u.json", prefix, k);
		if (k == 4) {
			assert_int_equal(access(path, F_OK), -1);
			break;
		}
		tool_expect_no_findings(path);
		tool_load_strict(path, &p);
		for (size_t i = 0; i < p.n; i++) {
			const struct tt_event *e = &p.ev[i];

			if (strcmp(e->ph, "X") == 0) {
				/* Only in the first piece, whole. */
				assert_int_equal(k, 1);
				assert_int_equal(e->ts_ns, 0);
				assert_int_equal(e->dur_ns, 10000000000);
			}
			if (strcmp(e->ph, "B") != 0 && strcmp(e->ph, "E") != 0)
				continue;
			assert_true(n < want[k - 1].n);
			assert_int_equal(e->ph[0], want[k - 1].ph[n]);
			assert_string_equal(e->name, "inner");
			assert_int_equal(e->ts_ns, want[k - 1].ts[n]);
			n++;
		}
		assert_int_equal(n, want[k - 1].n);
		tt_free(&p);
	}
	remove_pieces(prefix, 3, false);
	unlink(in);
}

/*
 * A flow whose s and f fall in different pieces stays joined: every piece
 * after the s, up to the one with the f, repeats the s with the X around it (the
 * viewers bind an s to the slice around it), and none after the f does.
 */
static void a_flow_across_cuts_is_repeated_until_its_end(void **state)
{
	static const char text[] =
		"[\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":{\"name\":"
		"\"t\"}},\n"
		"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"send\",\"ts\":1,\"dur\":2,\"pid\":1,"
		"\"tid\":2},"
		"\n"
		"{\"ph\":\"s\",\"cat\":\"f\",\"name\":\"hop\",\"id\":9,\"ts\":2,\"pid\":1,\"tid\":"
		"2},\n"
		"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"a\",\"ts\":4,\"dur\":1,\"pid\":1,\"tid\":2}"
		",\n"
		"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"b\",\"ts\":6,\"dur\":1,\"pid\":1,\"tid\":2}"
		",\n"
		"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"c\",\"ts\":8,\"dur\":1,\"pid\":1,\"tid\":2}"
		",\n"
		"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"recv\",\"ts\":10,\"dur\":2,\"pid\":1,"
		"\"tid\":3},"
		"\n"
		"{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"f\",\"name\":\"hop\",\"id\":9,\"ts\":11,"
		"\"pid\":1,"
		"\"tid\":3},\n"
		"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"d\",\"ts\":13,\"dur\":1,\"pid\":1,\"tid\":"
		"2}\n"
		"]\n";
	/* Per piece: its events other than the markers and the name. */
	static const char *const want[5][5] = {
		{"send", "hop", "a"},
		{"send", "hop", "b"},
		{"send", "hop", "c"},
		{"send", "hop", "recv", "hop"},
		{"d"},
	};
	const char *in = tool_tmp("flowcut.json"), *prefix = tool_tmp("flowcut");
	char path[4200];
	struct tool_run r;

	(void)state;
	tool_write(in, text, sizeof(text) - 1);
	tool_run(&r, NULL, "split", "--max-events", "6", "-o", prefix, in, NULL);
	if (r.status != 0)
		fail_msg("split: exit %d\n%s", r.status, r.err);
	assert_true(tool_has(r.err, "3 flow starts repeated"));
	tool_run_free(&r);
	for (unsigned k = 1; k <= 6; k++) {
		struct tt_trace p;
		size_t n = 0;

		snprintf(path, sizeof(path), "%s-%04u.json", prefix, k);
		if (k == 6) {
			assert_int_equal(access(path, F_OK), -1);
			break;
		}
		tool_expect_no_findings(path);
		tool_load_strict(path, &p);
		for (size_t i = 1; i + 1 < p.n; i++) {
			const struct tt_event *e = &p.ev[i];

			if (strcmp(e->ph, "M") == 0)
				continue;
			assert_true(n < 5 && want[k - 1][n] != NULL);
			assert_string_equal(e->name, want[k - 1][n]);
			if (strcmp(e->name, "hop") == 0) {
				assert_string_equal(e->id, "9");
				assert_string_equal(e->ph, n == 1 ? "s" : "f");
				assert_int_equal(e->ts_ns, n == 1 ? 2000 : 11000);
				assert_int_equal(e->tid, n == 1 ? 2 : 3);
			}
			if (strcmp(e->name, "send") == 0) {
				assert_int_equal(e->ts_ns, 1000);
				assert_int_equal(e->dur_ns, 2000);
			}
			n++;
		}
		assert_true(n == 5 || want[k - 1][n] == NULL);
		tt_free(&p);
	}
	remove_pieces(prefix, 5, false);
	unlink(in);
}

/* A file cut short: the pieces hold its whole events, the last ends what is open. */
static void a_cut_input_is_split_and_completed(void **state)
{
	const char *in = tool_tmp("split-cut.json"), *prefix = tool_tmp("cutp");
	char path[4200];
	struct tt_trace p;
	struct tool_run r;
	unsigned k;

	(void)state;
	gen_trace(in, 30, true);
	tool_run(&r, NULL, "split", "--max-events", "50", "-o", prefix, in, NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.err, "was cut short"));
	tool_run_free(&r);
	for (k = 1;; k++) {
		snprintf(path, sizeof(path), "%s-%04u.json", prefix, k);
		if (access(path, F_OK) != 0)
			break;
		tool_expect_no_findings(path);
	}
	assert_true(k > 3);
	snprintf(path, sizeof(path), "%s-%04u.json", prefix, k - 1);
	tool_load_strict(path, &p);
	/* "outer" and the async span were open: ended in the last piece. */
	assert_string_equal(p.ev[p.n - 3].ph, "E");
	assert_string_equal(p.ev[p.n - 3].name, "outer");
	assert_string_equal(p.ev[p.n - 2].ph, "e");
	assert_string_equal(p.ev[p.n - 2].name, "req");
	assert_int_equal(arg_of(&p.ev[p.n - 1], "slices_closed")->i, 1);
	assert_int_equal(arg_of(&p.ev[p.n - 1], "async_closed")->i, 1);
	tt_free(&p);
	remove_pieces(prefix, k - 1, false);
	unlink(in);
}

/* A file of about a hundred MB: split and merged in bounded memory (the issue's
 * limit: 64 MiB of peak RSS whatever the size), every piece passing check. */
static void large_file_in_bounded_memory(void **state)
{
	/* Sanitizers are ten times slower and their own memory would drown the
	 * measure: a smaller file, no limit asserted. */
	int steps = TT_SANITIZED ? 12000 : 100000;
	const char *in = tool_tmp("large.json"), *prefix = tool_tmp("large");
	char piece[4200];
	struct tool_run r;
	unsigned k;

	(void)state;
	gen_trace(in, steps, false);
	tool_run(&r, NULL, "split", "--max-mb", TT_SANITIZED ? "4" : "30", "-o", prefix, in, NULL);
	assert_int_equal(r.status, 0);
	if (!TT_SANITIZED && r.maxrss_kib > 64 * 1024)
		fail_msg("split: peak RSS %ld KiB", r.maxrss_kib);
	tool_run_free(&r);
	for (k = 1;; k++) {
		snprintf(piece, sizeof(piece), "%s-%04u.json", prefix, k);
		if (access(piece, F_OK) != 0)
			break;
		tool_expect_no_findings(piece);
	}
	assert_true(k > 3);
	remove_pieces(prefix, k - 1, false);
	/* Merged with itself: every event of the second copy rewritten (its pid). */
	tool_run_to(&r, NULL, "/dev/null", "merge", "-o", "-", in, in, NULL);
	assert_int_equal(r.status, 0);
	if (!TT_SANITIZED && r.maxrss_kib > 64 * 1024)
		fail_msg("merge: peak RSS %ld KiB", r.maxrss_kib);
	tool_run_free(&r);
	unlink(in);
}

static void corpus_splits_without_a_crash(void **state)
{
	static char paths[64][4200];
	size_t n = tool_corpus_files(paths, 64);
	const char *prefix = tool_tmp("corpus-piece");
	char piece[4200];

	(void)state;
	if (TT_TSAN)
		skip(); /* single-threaded: the asan and release runs cover it */
	snprintf(piece, sizeof(piece), "%s-0001.json", prefix);
	for (size_t i = 0; i < n; i++) {
		struct tool_run r;

		tool_run(&r, NULL, "split", "--max-events", "3", "-o", prefix, paths[i], NULL);
		for (unsigned k = 2; k < 100; k++) {
			char more[4200];

			snprintf(more, sizeof(more), "%s-%04u.json", prefix, k);
			if (access(more, F_OK) != 0)
				break;
			tool_expect_strict_or_absent(more, &r, paths[i]);
		}
		tool_expect_strict_or_absent(piece, &r, paths[i]);
		tool_run_free(&r);
	}
}

/* 20,000 nested B events open across every cut: each piece reopens only the
 * innermost 256 (not all 20,000, which multiplied the output), leaves out the E
 * events of the others, and still passes check. */
static void slices_beyond_max_reopen_are_not_repeated(void **state)
{
	enum { DEPTH = 20000, XS = 50000 };
	char in[4200], prefix[4200], piece[4300];
	struct tool_text t = {0};
	struct tool_run r;
	size_t total = 0, len;
	unsigned n = 0;

	(void)state;
	if (TT_TSAN)
		skip(); /* single-threaded: release and asan cover it */
	snprintf(in, sizeof(in), "%s", tool_tmp("unended.json"));
	snprintf(prefix, sizeof(prefix), "%s", tool_tmp("unended"));
	tool_text_printf(&t, "[\n");
	for (int i = 0; i < DEPTH; i++)
		tool_text_printf(&t,
				 "{\"ph\":\"B\",\"name\":\"b%d\",\"ts\":%d,\"pid\":1,\"tid\":1},\n",
				 i, i);
	for (int i = 0; i < XS; i++)
		tool_text_printf(&t,
				 "{\"ph\":\"X\",\"name\":\"x\",\"ts\":%d,\"dur\":1,\"pid\":1,"
				 "\"tid\":1},\n",
				 DEPTH + 2 * i);
	for (int i = 0; i < DEPTH; i++)
		tool_text_printf(
			&t, "{\"ph\":\"E\",\"name\":\"b%d\",\"ts\":%d,\"pid\":1,\"tid\":1}%s\n",
			DEPTH - 1 - i, DEPTH + 2 * XS + i, i + 1 < DEPTH ? "," : "");
	tool_text_printf(&t, "]\n");
	tool_write(in, t.p, t.len);
	tool_run(&r, NULL, "split", "--max-mb", "1", "-o", prefix, in, NULL);
	if (r.status != 0)
		fail_msg("split: exit %d\n%s", r.status, r.err);
	assert_true(tool_has(r.err, "beyond --max-reopen 256 per thread, or beyond half a piece in "
				    "all, were not reopened"));
	tool_run_free(&r);
	for (;;) {
		char *text;

		snprintf(piece, sizeof(piece), "%s-%04u.json", prefix, n + 1);
		if (access(piece, F_OK) != 0)
			break;
		text = tu_read_file(piece, &len);
		total += len;
		free(text);
		tool_expect_no_findings(piece);
		n++;
	}
	assert_true(n >= 5);
	/* Every piece repeats at most 256 B and 256 E: the whole stays near the input. */
	assert_true(total < t.len + (size_t)n * 2 * 256 * 64 + (size_t)n * 4096);
	for (unsigned i = 1; i <= n; i++) {
		snprintf(piece, sizeof(piece), "%s-%04u.json", prefix, i);
		unlink(piece);
	}
	free(t.p);
	unlink(in);
}

/* 100,000 threads with a B open each: every piece reopens at most half a piece of
 * them (before, each reopened all of them, so each piece held one event past its
 * prefix and the output grew by a piece per event: 36 GB from 55 MB). */
static void many_threads_open_fill_half_a_piece_at_most(void **state)
{
	enum { THREADS = 100000 };
	char in[4200], prefix[4200], piece[4300];
	struct tool_text t = {0};
	struct tool_run r;
	size_t total = 0, len;
	unsigned n = 0;

	(void)state;
	if (TT_TSAN)
		skip(); /* single-threaded: release and asan cover it */
	snprintf(in, sizeof(in), "%s", tool_tmp("threads.json"));
	snprintf(prefix, sizeof(prefix), "%s", tool_tmp("threads"));
	tool_text_printf(&t, "[\n");
	for (int i = 0; i < THREADS; i++)
		tool_text_printf(&t,
				 "{\"ph\":\"B\",\"name\":\"b\",\"ts\":%d,\"pid\":1,\"tid\":%d},\n",
				 i, i + 1);
	tool_text_printf(&t, "{\"ph\":\"i\",\"name\":\"end\",\"ts\":%d,\"pid\":1,\"tid\":1}]\n",
			 THREADS);
	tool_write(in, t.p, t.len);
	tool_run(&r, NULL, "split", "--max-mb", "1", "-o", prefix, in, NULL);
	if (r.status != 0)
		fail_msg("split: exit %d\n%s", r.status, r.err);
	assert_true(tool_has(r.err, "or beyond half a piece in all, were not reopened"));
	tool_run_free(&r);
	for (;;) {
		char *text;

		snprintf(piece, sizeof(piece), "%s-%04u.json", prefix, n + 1);
		if (access(piece, F_OK) != 0)
			break;
		text = tu_read_file(piece, &len);
		assert_true(len <= (1u << 20));
		total += len;
		free(text);
		n++;
	}
	/* Each piece at least half new events: the whole at most about twice the input. */
	assert_true(n >= 4 && n < 20);
	assert_true(total < 2 * t.len + (size_t)n * 4096);
	for (unsigned i = 1; i <= n; i++) {
		snprintf(piece, sizeof(piece), "%s-%04u.json", prefix, i);
		unlink(piece);
	}
	free(t.p);
	unlink(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(usage_errors_are_exit_2),
		cmocka_unit_test(slices_open_at_a_cut_are_closed_and_reopened),
		cmocka_unit_test(pieces_stay_under_max_mb),
		cmocka_unit_test(gzip_in_and_out),
		cmocka_unit_test(default_prefix_is_the_file_name),
		cmocka_unit_test(a_flow_goes_with_the_slice_that_encloses_it),
		cmocka_unit_test(a_slice_inside_a_long_x_is_cut_in_time_order),
		cmocka_unit_test(a_flow_across_cuts_is_repeated_until_its_end),
		cmocka_unit_test(a_cut_input_is_split_and_completed),
		cmocka_unit_test(large_file_in_bounded_memory),
		cmocka_unit_test(corpus_splits_without_a_crash),
		cmocka_unit_test(slices_beyond_max_reopen_are_not_repeated),
		cmocka_unit_test(many_threads_open_fill_half_a_piece_at_most),
	};

	return cmocka_run_group_tests_name("tools_split", tests, NULL, NULL);
}
