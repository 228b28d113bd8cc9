/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace merge` end to end: small hand-made traces of two or three "ranks" are
 * merged, and the result is parsed back with tests/support/trace_read.c (not the
 * tool's reader) and checked value by value: times shifted exactly onto the earliest
 * origin (monotonic on one host, real-time across hosts), pids made distinct in every
 * event and M event, processes named and sorted by rank, flow and async ids kept
 * apart between files (but not the ones rtr_flow_id() makes), a cut input, gzip in
 * and out; and every merged file passes `ringtrace check`.
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
#include <yajl/yajl_tree.h>

#include <cmocka.h>

/* ------------------------------------------------------------------ helpers */

/* A start marker for pid with the given origins, host and rank (-1: none). */
static char *start_marker(int pid, const char *mono, const char *real, const char *host, int rank)
{
	static char line[512];
	char rank_arg[32] = "";

	if (rank >= 0)
		snprintf(rank_arg, sizeof(rank_arg), ",\"rank\":%d", rank);
	snprintf(line, sizeof(line),
		 "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: start\",\"ts\":0,\"pid\":%d,"
		 "\"tid\":%d,\"args\":{\"origin_monotonic_ns\":\"%s\",\"origin_realtime_ns\":"
		 "\"%s\",\"host\":\"%s\",\"pid\":%d%s,\"version\":\"0.1.0\"}},\n",
		 pid, pid, mono, real, host, pid, rank_arg);
	return line;
}

/* Write a trace: "[\n", the lines, and "]" unless cut (then the text ends as given). */
static void write_trace(const char *path, const char *first, ...)
{
	char text[16384];
	size_t n = 0;
	va_list ap;

	n += (size_t)snprintf(text + n, sizeof(text) - n, "[\n");
	va_start(ap, first);
	for (const char *s = first; s != NULL; s = va_arg(ap, const char *))
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s", s);
	va_end(ap);
	tool_write(path, text, n);
}

static void merge_ok(const char *out, const char *const *inputs, const char *extra)
{
	const char *args[16] = {"merge", "-o", out};
	size_t n = 3;
	struct tool_run r;

	if (extra != NULL) {
		args[n++] = "--clock";
		args[n++] = extra;
	}
	for (size_t i = 0; inputs[i] != NULL; i++)
		args[n++] = inputs[i];
	args[n] = NULL;
	tool_runv(&r, NULL, NULL, args);
	if (r.status != 0)
		fail_msg("merge: exit %d\n%s", r.status, r.err);
	tool_run_free(&r);
}

/* The nth (0-based) event named name, or a failed test. */
static const struct tt_event *named(const struct tt_trace *t, const char *name, int nth)
{
	for (size_t i = 0; i < t->n; i++) {
		if (t->ev[i].name != NULL && strcmp(t->ev[i].name, name) == 0 && nth-- == 0)
			return &t->ev[i];
	}
	fail_msg("no event \"%s\"", name);
	return NULL;
}

/* The M event of kind what for pid, or NULL; when several, the last. */
static const struct tt_event *meta(const struct tt_trace *t, const char *what, int64_t pid)
{
	const struct tt_event *found = NULL;

	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];

		if (strcmp(e->ph, "M") == 0 && strcmp(e->name, what) == 0 && e->pid == pid)
			found = e;
	}
	return found;
}

static const char *name_of_process(const struct tt_trace *t, int64_t pid)
{
	const struct tt_event *e = meta(t, "process_name", pid);

	if (e == NULL)
		fail_msg("process %lld has no name", (long long)pid);
	return tt_arg(e, "name")->s;
}

static int64_t sort_of_process(const struct tt_trace *t, int64_t pid)
{
	const struct tt_event *e = meta(t, "process_sort_index", pid);

	if (e == NULL)
		fail_msg("process %lld has no sort index", (long long)pid);
	return tt_arg(e, "sort_index")->i;
}

static const struct tt_arg *arg_of(const struct tt_event *e, const char *key)
{
	const struct tt_arg *a = tt_arg(e, key);

	if (a == NULL)
		fail_msg("event at line %zu has no args.%s", e->line, key);
	return a;
}

/* A value inside an arg that is an array of objects: "inputs":[{...},...]. */
static bool raw_has(const struct tt_arg *a, const char *needle)
{
	return a->raw != NULL && strstr(a->raw, needle) != NULL;
}

/* Rank 0 on node1 (pid 100) and rank 1 (pid 200) whose origin is 123456 ns later on
 * the monotonic clock and 100000 ns later on the real-time one. */
static void write_two_ranks(const char *a, const char *b, const char *host_b)
{
	write_trace(
		a, start_marker(100, "5000000000", "1700000000000000000", "node1", 0),
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":100,\"tid\":100,\"args\":{"
		"\"name\":\"solver\"}},\n"
		"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":100,\"tid\":101,\"args\":{"
		"\"name\":\"worker\"}},\n"
		"{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"a-step\",\"ts\":10,\"pid\":100,\"tid\":"
		"101,\"args\":{\"i\":1}},\n"
		"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"a-k\",\"ts\":10.5,\"dur\":2.25,\"pid\":100,"
		"\"tid\":101},\n"
		"{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"a-step\",\"ts\":20.001,\"pid\":100,"
		"\"tid\":101},\n"
		"{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: end\",\"ts\":30,\"pid\":100,"
		"\"tid\":100,\"args\":{\"final\":true,\"events\":3,\"dropped\":1,\"threads\":1}}"
		"\n]\n",
		NULL);
	write_trace(
		b, start_marker(200, "5000123456", "1700000000000100000", host_b, 1),
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":200,\"tid\":200,\"args\":{"
		"\"name\":\"solver\"}},\n"
		"{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"b-step\",\"ts\":1.001,\"pid\":200,\"tid\":"
		"201},\n"
		"{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"b-step\",\"ts\":5,\"pid\":200,\"tid\":201},"
		"\n"
		"{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: end\",\"ts\":6,\"pid\":200,"
		"\"tid\":200,\"args\":{\"final\":true,\"events\":2,\"dropped\":2,\"threads\":1}}"
		"\n]\n",
		NULL);
}

/* --------------------------------------------------------------------- tests */

static void usage_errors_are_exit_2(void **state)
{
	static const struct {
		const char *args[6];
		const char *err;
	} cases[] = {
		{{"merge", "a.json"}, "no output: -o OUT"},
		{{"merge", "-o", "x.json"}, "no FILE to merge"},
		{{"merge", "--clock", "sundial", "-o", "x.json", "a.json"}, "--clock wants"},
		{{"merge", "-o", "x.json", "-", "-"}, "standard input (-) given twice"},
		{{"merge", "-o", "x.json", "/nonexistent/a.json"},
		 "cannot read /nonexistent/a.json"},
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
	tool_run(&r, NULL, "merge", "--help", NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.out, "usage: ringtrace merge"));
	tool_run_free(&r);
}

static void one_host_aligns_on_the_monotonic_origin(void **state)
{
	const char *a = tool_tmp("rank0.json"), *b = tool_tmp("rank1.json");
	const char *out = tool_tmp("merged.json");
	const char *inputs[] = {a, b, NULL};
	const struct tt_event *e, *start, *end;
	struct tt_trace t;

	(void)state;
	write_two_ranks(a, b, "node1");
	merge_ok(out, inputs, NULL);
	tool_load_strict(out, &t);
	/* The earliest file's origin is the common one: its times are unchanged. */
	assert_int_equal(named(&t, "a-step", 0)->ts_ns, 10000);
	assert_int_equal(named(&t, "a-k", 0)->ts_ns, 10500);
	assert_int_equal(named(&t, "a-k", 0)->dur_ns, 2250);
	assert_int_equal(named(&t, "a-step", 1)->ts_ns, 20001);
	/* The later one's move by the difference of the origins, 123456 ns, exactly. */
	e = named(&t, "b-step", 0);
	assert_int_equal(e->ts_ns, 1001 + 123456);
	assert_int_equal(e->pid, 200);
	assert_int_equal(e->tid, 201);
	assert_int_equal(named(&t, "b-step", 1)->ts_ns, 5000 + 123456);
	/* One start marker, first; one end marker, last; the inputs' own are gone. */
	start = &t.ev[0];
	assert_string_equal(start->name, "ringtrace: start");
	assert_int_equal(start->ts_ns, 0);
	assert_string_equal(arg_of(start, "clock")->s, "monotonic");
	assert_int_equal(arg_of(start, "merged_from")->i, 2);
	assert_string_equal(arg_of(start, "origin_monotonic_ns")->s, "5000000000");
	assert_string_equal(arg_of(start, "origin_realtime_ns")->s, "1700000000000000000");
	assert_string_equal(arg_of(start, "host")->s, "node1");
	assert_true(raw_has(arg_of(start, "inputs"), "\"origin_monotonic_ns\":\"5000123456\""));
	assert_true(raw_has(arg_of(start, "inputs"), "\"shift_ns\":123456"));
	end = &t.ev[t.n - 1];
	assert_string_equal(end->name, "ringtrace: end");
	assert_int_equal(end->ts_ns, 6000 + 123456); /* the later window's end */
	assert_true(arg_of(end, "final")->b);
	assert_int_equal(arg_of(end, "events")->i, 5);
	assert_int_equal(arg_of(end, "dropped")->i, 3);
	assert_int_equal(arg_of(end, "threads")->i, 2);
	assert_int_equal(arg_of(end, "merged_events")->i, 5);
	assert_true(raw_has(arg_of(end, "inputs"), "\"final\":true,\"cut\":false"));
	for (size_t i = 1; i + 1 < t.n; i++)
		assert_false(strncmp(t.ev[i].name, "ringtrace:", 10) == 0);
	/* Named and sorted by rank, the original name kept. */
	assert_string_equal(name_of_process(&t, 100), "rank 0 \xc2\xb7 node1 \xc2\xb7 solver");
	assert_string_equal(name_of_process(&t, 200), "rank 1 \xc2\xb7 node1 \xc2\xb7 solver");
	assert_int_equal(sort_of_process(&t, 100), 0);
	assert_int_equal(sort_of_process(&t, 200), 1024);
	tt_free(&t);
	tool_expect_no_findings(out);
	unlink(a);
	unlink(b);
	unlink(out);
}

static void two_hosts_align_on_the_realtime_origin(void **state)
{
	const char *a = tool_tmp("n1.json"), *b = tool_tmp("n2.json");
	const char *out = tool_tmp("merged-rt.json");
	const char *inputs[] = {a, b, NULL};
	struct tool_run r;
	struct tt_trace t;

	(void)state;
	write_two_ranks(a, b, "node2");
	merge_ok(out, inputs, NULL);
	tool_load_strict(out, &t);
	assert_string_equal(arg_of(&t.ev[0], "clock")->s, "realtime");
	assert_null(tt_arg(&t.ev[0], "host"));
	assert_null(tt_arg(&t.ev[0], "origin_monotonic_ns"));
	/* Real-time origins are 100000 ns apart (the monotonic ones 123456). */
	assert_int_equal(named(&t, "b-step", 0)->ts_ns, 1001 + 100000);
	assert_int_equal(named(&t, "a-step", 0)->ts_ns, 10000);
	assert_string_equal(name_of_process(&t, 200), "rank 1 \xc2\xb7 node2 \xc2\xb7 solver");
	tt_free(&t);
	tool_expect_no_findings(out);

	/* Forced: the monotonic origins, and a warning that they are unrelated. */
	tool_run(&r, NULL, "merge", "--clock", "monotonic", "-o", out, a, b, NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.err, "not all from one host"));
	tool_run_free(&r);
	tool_load_strict(out, &t);
	assert_string_equal(arg_of(&t.ev[0], "clock")->s, "monotonic");
	assert_int_equal(named(&t, "b-step", 0)->ts_ns, 1001 + 123456);
	tt_free(&t);
	/* And real time on one host, when asked. */
	write_two_ranks(a, b, "node1");
	merge_ok(out, inputs, "realtime");
	tool_load_strict(out, &t);
	assert_int_equal(named(&t, "b-step", 0)->ts_ns, 1001 + 100000);
	assert_string_equal(arg_of(&t.ev[0], "origin_monotonic_ns")->s, "5000000000");
	tt_free(&t);
	unlink(a);
	unlink(b);
	unlink(out);
}

/* The same program in two containers: the same pid, and the same track pseudo-pid. */
static void write_container(const char *path, int rank, const char *p)
{
	char lines[4096];

	snprintf(
		lines, sizeof(lines),
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":100,\"tid\":100,\"args\":{"
		"\"name\":\"solver\"}},\n"
		"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":100,\"tid\":100,\"args\":{\"name\":"
		"\"main\"}},\n"
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1073741825,\"tid\":1073741952,"
		"\"args\":{\"name\":\"GPU 0\"}},\n"
		"{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":1073741825,\"tid\":"
		"1073741952,\"args\":{\"sort_index\":5}},\n"
		"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1073741825,\"tid\":1073741952,"
		"\"args\":{\"name\":\"stream 7\"}},\n"
		"{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"%s-step\",\"ts\":1,\"pid\":100,\"tid\":100}"
		","
		"\n"
		"{\"ph\":\"X\",\"cat\":\"gpu\",\"name\":\"%s-kernel\",\"ts\":2,\"dur\":1,\"pid\":"
		"1073741825,\"tid\":1073741952},\n"
		"{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"%s-step\",\"ts\":4,\"pid\":100,\"tid\":100}"
		","
		"\n"
		"{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: end\",\"ts\":5,\"pid\":100,"
		"\"tid\":100,\"args\":{\"final\":true,\"events\":3}}\n]\n",
		p, p, p);
	write_trace(path, start_marker(100, "1000", "2000", rank == 0 ? "box-a" : "box-b", rank),
		    lines, NULL);
}

static void colliding_pids_are_remapped_in_every_event(void **state)
{
	const char *a = tool_tmp("c0.json"), *b = tool_tmp("c1.json");
	const char *out = tool_tmp("merged-pids.json");
	const char *inputs[] = {a, b, NULL};
	const int64_t b_pid = 100 + (1 << 24), b_gpu = 1073741825 + (1 << 24);
	struct tt_trace t;
	size_t seen_b = 0;

	(void)state;
	write_container(a, 0, "a");
	write_container(b, 1, "b");
	merge_ok(out, inputs, NULL);
	tool_load_strict(out, &t);
	/* The first file keeps its pids; the second's move to a plane of their own. */
	assert_int_equal(named(&t, "a-step", 0)->pid, 100);
	assert_int_equal(named(&t, "a-kernel", 0)->pid, 1073741825);
	assert_int_equal(named(&t, "b-step", 0)->pid, b_pid);
	assert_int_equal(named(&t, "b-step", 1)->pid, b_pid);
	assert_int_equal(named(&t, "b-kernel", 0)->pid, b_gpu);
	/* tids stay: threads are (pid, tid) pairs, and the pids now differ. */
	assert_int_equal(named(&t, "b-step", 0)->tid, 100);
	assert_int_equal(named(&t, "b-kernel", 0)->tid, 1073741952);
	/* Every M event of the second file went along, thread names too. */
	for (size_t i = 0; i < t.n; i++) {
		const struct tt_event *e = &t.ev[i];

		if (strcmp(e->ph, "M") != 0)
			continue;
		assert_true(e->pid == 100 || e->pid == 1073741825 || e->pid == b_pid ||
			    e->pid == b_gpu);
		seen_b += e->pid == b_pid || e->pid == b_gpu;
		if (strcmp(e->name, "thread_name") == 0 && e->pid == b_gpu)
			assert_string_equal(tt_arg(e, "name")->s, "stream 7");
	}
	assert_true(seen_b >= 4);
	assert_string_equal(name_of_process(&t, 100), "rank 0 \xc2\xb7 box-a \xc2\xb7 solver");
	assert_string_equal(name_of_process(&t, b_pid),
			    "rank 1 \xc2\xb7 box-b \xc2\xb7 solver (was pid 100)");
	assert_string_equal(name_of_process(&t, 1073741825),
			    "rank 0 \xc2\xb7 box-a \xc2\xb7 GPU 0");
	assert_string_equal(name_of_process(&t, b_gpu), "rank 1 \xc2\xb7 box-b \xc2\xb7 GPU 0");
	/* By rank, then the process's own place within it. */
	assert_int_equal(sort_of_process(&t, 100), 0);
	assert_int_equal(sort_of_process(&t, 1073741825), 6);
	assert_int_equal(sort_of_process(&t, b_pid), 1024);
	assert_int_equal(sort_of_process(&t, b_gpu), 1030);
	assert_true(raw_has(arg_of(&t.ev[0], "inputs"), "\"merged_pid\":16777316"));
	tt_free(&t);
	tool_expect_no_findings(out);
	unlink(a);
	unlink(b);
	unlink(out);
}

/* Without a rank: named by the file, placed after the ranks; without a start
 * marker: times kept, and said. */
static void files_without_rank_or_marker_are_named_by_file(void **state)
{
	const char *a = tool_tmp("r0.json"), *b = tool_tmp("plain.json");
	const char *c = tool_tmp("hand.json"), *out = tool_tmp("merged-names.json");
	char label[4300];
	struct tool_run r;
	struct tt_trace t;

	(void)state;
	write_container(a, 0, "a");
	write_trace(b, start_marker(300, "900", "1900", "box-a", -1),
		    "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"p-x\",\"ts\":3,\"dur\":1,\"pid\":300,"
		    "\"tid\":301}\n]\n",
		    NULL);
	write_trace(c,
		    "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"h-x\",\"ts\":7.5,\"dur\":1,\"pid\":100,"
		    "\"tid\":5}\n]\n",
		    NULL);
	tool_run(&r, NULL, "merge", "-o", out, a, b, c, NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.err, "has no start marker: its times are taken as they are"));
	tool_run_free(&r);
	tool_load_strict(out, &t);
	/* b's monotonic origin (900) is the earliest: a moves by 100 ns, c not at all. */
	assert_int_equal(named(&t, "a-step", 0)->ts_ns, 1100);
	assert_int_equal(named(&t, "p-x", 0)->ts_ns, 3000);
	assert_int_equal(named(&t, "h-x", 0)->ts_ns, 7500);
	snprintf(label, sizeof(label), "%s \xc2\xb7 box-a", strrchr(b, '/') + 1);
	assert_string_equal(name_of_process(&t, 300), label);
	snprintf(label, sizeof(label), "%s (was pid 100)", strrchr(c, '/') + 1);
	assert_string_equal(name_of_process(&t, 100 + 2 * (1 << 24)), label);
	/* Rank 0 first; then the files without a rank, in command-line order. */
	assert_int_equal(sort_of_process(&t, 100), 0);
	assert_int_equal(sort_of_process(&t, 300), 2 * 1024);
	assert_int_equal(sort_of_process(&t, 100 + 2 * (1 << 24)), 3 * 1024);
	assert_true(raw_has(arg_of(&t.ev[0], "inputs"), "\"aligned\":false"));
	tt_free(&t);
	tool_expect_no_findings(out);
	unlink(a);
	unlink(b);
	unlink(c);
	unlink(out);
}

/* Two files with the same flow id 7 and async id "0x1": kept apart, each file's
 * events still matched to each other; an rtr_flow_id() id from one rank to the other
 * (pid 100 in its top bits) kept, joined. */
static void write_flows(const char *path, int pid, const char *p)
{
	char lines[4096];
	int tid = pid + 1, tid2 = pid + 2;

	snprintf(lines, sizeof(lines),
		 "{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"%s-send\",\"ts\":1,\"pid\":%d,\"tid\":%d},"
		 "\n"
		 "{\"ph\":\"s\",\"cat\":\"flow\",\"name\":\"handoff\",\"id\":7,\"ts\":2,\"pid\":%d,"
		 "\"tid\":%d},\n"
		 "{\"ph\":\"%s\",\"cat\":\"mpi\",\"name\":\"msg\",\"id\":\"0x640000000005\","
		 "\"ts\":%s,\"pid\":%d,\"tid\":%d%s},\n"
		 "{\"ph\":\"b\",\"cat\":\"copy\",\"name\":\"h2d\",\"id\":\"0x1\",\"ts\":2,\"pid\":%"
		 "d,"
		 "\"tid\":%d},\n"
		 "{\"ph\":\"E\",\"cat\":\"c\",\"name\":\"%s-send\",\"ts\":3,\"pid\":%d,\"tid\":%d},"
		 "\n"
		 "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"%s-recv\",\"ts\":4,\"dur\":2,\"pid\":%d,"
		 "\"tid\":%d},\n"
		 "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"flow\",\"name\":\"handoff\",\"id\":7,\"ts\":"
		 "5,"
		 "\"pid\":%d,\"tid\":%d},\n"
		 "{\"ph\":\"e\",\"cat\":\"copy\",\"name\":\"h2d\",\"id\":\"0x1\",\"ts\":6,\"pid\":%"
		 "d,"
		 "\"tid\":%d}\n]\n",
		 p, pid, tid, pid, tid, pid == 100 ? "s" : "f", pid == 100 ? "2.5" : "5.5", pid,
		 pid == 100 ? tid : tid2, pid == 100 ? "" : ",\"bp\":\"e\"", pid, tid, p, pid, tid,
		 p, pid, tid2, pid, tid2, pid, tid2);
	write_trace(path, start_marker(pid, "1000", "2000", "node1", pid / 100 - 1), lines, NULL);
}

static void flow_and_async_ids_are_kept_apart_between_files(void **state)
{
	const char *a = tool_tmp("fa.json"), *b = tool_tmp("fb.json");
	const char *out = tool_tmp("merged-flows.json");
	const char *inputs[] = {a, b, NULL};
	const char *ids[2][4] = {{NULL}}; /* per file: s, f, b, e */
	struct tt_trace t;

	(void)state;
	write_flows(a, 100, "a");
	write_flows(b, 200, "b");
	merge_ok(out, inputs, NULL);
	tool_load_strict(out, &t);
	for (size_t i = 0; i < t.n; i++) {
		const struct tt_event *e = &t.ev[i];
		int file = e->pid == 100 ? 0 : 1;
		const char *kinds = "sfbe", *k = strchr(kinds, e->ph[0]);

		if (e->ph[1] != '\0' || k == NULL || e->id == NULL)
			continue;
		if (strcmp(e->name, "msg") == 0) {
			/* rtr_flow_id() of pid 100 on both sides: the same id, as it was. */
			assert_string_equal(e->id, "0x640000000005");
			assert_int_equal(e->id_type, TT_STRING);
			continue;
		}
		ids[file][k - kinds] = e->id;
		/* The kind of value stays: an integer, or a hex string. */
		if (e->ph[0] == 's' || e->ph[0] == 'f')
			assert_int_equal(e->id_type, TT_INT);
		else
			assert_true(e->id_type == TT_STRING && strncmp(e->id, "0x", 2) == 0);
	}
	for (int f = 0; f < 2; f++) {
		for (int k = 0; k < 4; k++)
			assert_non_null(ids[f][k]);
		assert_string_equal(ids[f][0], ids[f][1]); /* s and f of one file still match */
		assert_string_equal(ids[f][2], ids[f][3]); /* b and e too */
	}
	assert_string_not_equal(ids[0][0], ids[1][0]);
	assert_string_not_equal(ids[0][2], ids[1][2]);
	tt_free(&t);
	tool_expect_no_findings(out);
	unlink(a);
	unlink(b);
	unlink(out);
}

/* A rank killed mid-write: its whole events are merged, its open slices ended 1 ns
 * after its thread's latest time (shifted like the rest), and it is said. */
static void a_cut_input_gives_its_whole_events(void **state)
{
	const char *a = tool_tmp("whole.json"), *b = tool_tmp("cut.json");
	const char *out = tool_tmp("merged-cut.json");
	const struct tt_event *e, *end;
	struct tool_run r;
	struct tt_trace t;

	(void)state;
	write_two_ranks(a, b, "node1");
	write_trace(
		b, start_marker(200, "5000123456", "1700000000000100000", "node1", 1),
		"{\"ph\":\"B\",\"cat\":\"c\",\"name\":\"b-step\",\"ts\":1.001,\"pid\":200,\"tid\":"
		"201,\"args\":{\"n\":1}},\n"
		"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"b-k\",\"ts\":2,\"dur\":1,\"pid\":200,"
		"\"tid\":201},\n"
		"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"b-lost\",\"ts\":3,\"du",
		NULL);
	tool_run(&r, NULL, "merge", "-o", out, a, b, NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.err, "was cut short"));
	assert_true(tool_has(r.err, "1 open slice ended"));
	tool_run_free(&r);
	tool_load_strict(out, &t);
	assert_int_equal(named(&t, "b-k", 0)->ts_ns, 2000 + 123456);
	e = named(&t, "b-step", 1);
	assert_string_equal(e->ph, "E");
	assert_string_equal(e->cat, "c");
	assert_int_equal(e->ts_ns, 3000 + 1 + 123456);
	assert_int_equal(e->pid, 200);
	assert_int_equal(e->tid, 201);
	for (size_t i = 0; i < t.n; i++)
		assert_false(t.ev[i].name != NULL && strcmp(t.ev[i].name, "b-lost") == 0);
	end = &t.ev[t.n - 1];
	assert_int_equal(arg_of(end, "slices_closed")->i, 1);
	assert_true(raw_has(arg_of(end, "inputs"), "\"final\":false,\"cut\":true"));
	assert_int_equal(arg_of(end, "events")->i, 3); /* only rank 0 had an end marker */
	tt_free(&t);
	tool_expect_no_findings(out);
	unlink(a);
	unlink(b);
	unlink(out);
}

static void gzip_in_and_out(void **state)
{
	const char *a = tool_tmp("gz0.json"), *b = tool_tmp("gz1.json");
	const char *agz = tool_tmp("gz0.json.gz"), *out = tool_tmp("merged.json.gz");
	const char *unz = tool_tmp("merged-unz.json");
	const char *inputs[] = {agz, b, NULL};
	unsigned char *gz;
	size_t len, gz_len, members;
	char *text;
	struct tt_trace t;

	(void)state;
	write_two_ranks(a, b, "node1");
	text = tool_read(a, &len);
	gz = tool_gzip(text, len, 200, &gz_len, NULL, 0, &members);
	assert_true(members > 1); /* the recorder's layout: several members */
	tool_write(agz, gz, gz_len);
	free(gz);
	free(text);
	merge_ok(out, inputs, NULL);
	text = tool_gunzip(out, &len);
	tool_write(unz, text, len);
	free(text);
	tool_load_strict(unz, &t);
	assert_int_equal(named(&t, "a-step", 0)->ts_ns, 10000);
	assert_int_equal(named(&t, "b-step", 0)->ts_ns, 1001 + 123456);
	assert_int_equal(arg_of(&t.ev[t.n - 1], "merged_events")->i, 5);
	tt_free(&t);
	tool_expect_no_findings(out);

	/* A gzip input cut inside its second member (killed mid-write): the events of
	 * the first member are merged, the rest is dropped with a warning. */
	{
		struct gz_member m[64];
		struct tool_run r;
		size_t count, first = 0;

		text = tool_read(a, &len);
		gz = tool_gzip(text, len, 200, &gz_len, m, 64, &count);
		assert_true(count > 2);
		tool_write(agz, gz, m[0].gz_end + (m[1].gz_end - m[0].gz_end) / 2);
		for (size_t i = 0; i < m[0].text_end; i++)
			first += text[i] == '\n';
		free(gz);
		free(text);
		tool_run(&r, NULL, "merge", "-o", out, agz, b, NULL);
		assert_int_equal(r.status, 0);
		assert_true(tool_has(r.err, "was cut short"));
		tool_run_free(&r);
		text = tool_gunzip(out, &len);
		tool_write(unz, text, len);
		free(text);
		tool_load_strict(unz, &t);
		/* The first member's lines: "[", the start marker (left out), then events. */
		assert_true(strstr(arg_of(&t.ev[t.n - 1], "inputs")->raw, "\"cut\":true") != NULL);
		assert_int_equal(named(&t, "b-step", 1)->ts_ns, 5000 + 123456);
		tt_free(&t);
		tool_expect_no_findings(out);
		assert_true(first >= 2);
	}
	unlink(a);
	unlink(b);
	unlink(agz);
	unlink(out);
	unlink(unz);
}

static void corpus_merges_without_a_crash(void **state)
{
	static char paths[64][4200];
	size_t n = tool_corpus_files(paths, 64);

	(void)state;
	if (TT_TSAN)
		skip(); /* single-threaded: the asan and release runs cover it */
	for (size_t i = 0; i < n; i++) {
		const char *out = tool_tmp("corpus-merged.json");
		struct tool_run r;

		tool_run(&r, NULL, "merge", "-o", out, tool_data("data/good.json"), paths[i], NULL);
		tool_expect_strict_or_absent(out, &r, paths[i]);
		tool_run_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(usage_errors_are_exit_2),
		cmocka_unit_test(one_host_aligns_on_the_monotonic_origin),
		cmocka_unit_test(two_hosts_align_on_the_realtime_origin),
		cmocka_unit_test(colliding_pids_are_remapped_in_every_event),
		cmocka_unit_test(files_without_rank_or_marker_are_named_by_file),
		cmocka_unit_test(flow_and_async_ids_are_kept_apart_between_files),
		cmocka_unit_test(a_cut_input_gives_its_whole_events),
		cmocka_unit_test(gzip_in_and_out),
		cmocka_unit_test(corpus_merges_without_a_crash),
	};

	return cmocka_run_group_tests_name("tools_merge", tests, NULL, NULL);
}
