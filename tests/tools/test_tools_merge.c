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
#include <sys/resource.h>
#include <unistd.h>

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
	/* A B and its E are one X, its arguments the B's: no viewer pairs them. */
	e = named(&t, "a-step", 0);
	assert_string_equal(e->ph, "X");
	assert_int_equal(e->dur_ns, 20001 - 10000);
	assert_int_equal(arg_of(e, "i")->i, 1);
	/* The later one's move by the difference of the origins, 123456 ns, exactly. */
	e = named(&t, "b-step", 0);
	assert_string_equal(e->ph, "X");
	assert_int_equal(e->ts_ns, 1001 + 123456);
	assert_int_equal(e->dur_ns, 5000 - 1001);
	assert_int_equal(e->pid, 200);
	assert_int_equal(e->tid, 201);
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
	assert_string_equal(named(&t, "b-step", 0)->ph, "X"); /* its B and E, one line */
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
	/* ended 1 ns after the thread's latest time: its X, with the B's arguments */
	e = named(&t, "b-step", 0);
	assert_string_equal(e->ph, "X");
	assert_string_equal(e->cat, "c");
	assert_int_equal(e->ts_ns, 1001 + 123456);
	assert_int_equal(e->dur_ns, 3000 + 1 - 1001);
	assert_int_equal(arg_of(e, "n")->i, 1);
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
	text = tu_read_file(a, &len);
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

		text = tu_read_file(a, &len);
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
		assert_string_equal(named(&t, "b-step", 0)->ph, "X");
		assert_int_equal(named(&t, "b-step", 0)->ts_ns + named(&t, "b-step", 0)->dur_ns,
				 5000 + 123456);
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

/* ------------------------------------------------------------ clock sync */

/*
 * Four ranks of one host whose clocks disagree: rank 1's runs 50 ms ahead of rank
 * 0's and 20 ppm fast (two measurements), rank 2's 50 ms behind (one measurement),
 * rank 3 has none. Each file's times are relative to its own origin.
 */
#define O0 INT64_C(1000000000000)
#define O1 (INT64_C(1000050000000) + 2000000)
#define O2 (INT64_C(999950000000) + 3000000)
#define O3 (O0 + 4000000)

static void sync_line(struct tool_text *t, int pid, int rank, int64_t at, int64_t offset,
		      int64_t error)
{
	tool_text_printf(t,
			 "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"ringtrace\",\"name\":\"ringtrace: "
			 "clock sync\",\"ts\":1000,\"pid\":%d,\"tid\":%d,\"args\":{"
			 "\"reference_rank\":0,\"rank\":%d,\"at_ns\":%lld,\"offset_ns\":%lld,"
			 "\"error_ns\":%lld,\"rtt_ns\":%lld,\"rounds\":50}},\n",
			 pid, pid, rank, (long long)at, (long long)offset, (long long)error,
			 (long long)(3 * error));
}

/* An event line: ph, name, ts in ns, and the rest of the keys (may be ""). */
static void ev_line(struct tool_text *t, int pid, const char *ph, const char *name, int64_t ts,
		    const char *more)
{
	tool_text_printf(t,
			 "{\"ph\":\"%s\",\"cat\":\"%s\",\"name\":\"%s\",\"ts\":%lld.%03lld,"
			 "\"pid\":%d,\"tid\":%d%s},\n",
			 ph, ph[0] == 's' || ph[0] == 'f' ? "mpi" : "app", name,
			 (long long)(ts / 1000), (long long)(ts % 1000), pid, pid, more);
}

static void write_rank(const char *path, struct tool_text *t, int pid, int rank, int64_t origin)
{
	char mono[32];
	struct tool_text all = {0};

	snprintf(mono, sizeof(mono), "%lld", (long long)origin);
	tool_text_printf(&all, "[\n%s%s]\n",
			 start_marker(pid, mono, "1700000000000000000", "node1", rank),
			 t->p != NULL ? t->p : "");
	/* The last line's comma before "]": drop it. */
	char *end = strstr(all.p, ",\n]\n");
	if (end != NULL)
		memmove(end, end + 1, strlen(end + 1) + 1);
	tool_write(path, all.p, strlen(all.p));
	free(all.p);
	free(t->p);
	*t = (struct tool_text){0};
}

static void write_synced_ranks(const char *const paths[4], bool with_rank2)
{
	struct tool_text t = {0};

	/* Rank 0: the reference. M1 sent at 100 ms; M2 received at 199.998 ms, 2.1 us
	 * before rank 2 sends it on the mapped clocks; then events after it. */
	sync_line(&t, 100, 0, O0 + 1000000, 0, 0);
	ev_line(&t, 100, "B", "send", 100000000, "");
	ev_line(&t, 100, "s", "message", 100000500, ",\"id\":\"0x1111\"");
	ev_line(&t, 100, "E", "send", 100001000, "");
	ev_line(&t, 100, "B", "step", 199900000, "");
	ev_line(&t, 100, "B", "recv", 199990000, "");
	ev_line(&t, 100, "f", "message", 199998000, ",\"bp\":\"e\",\"id\":\"0x2222\"");
	ev_line(&t, 100, "E", "recv", 199999000, "");
	ev_line(&t, 100, "X", "after1", 200010000, ",\"dur\":5");
	ev_line(&t, 100, "E", "step", 200050000, "");
	ev_line(&t, 100, "X", "after2", 200100000, ",\"dur\":1");
	sync_line(&t, 100, 0, O0 + 1000000000, 0, 0);
	write_rank(paths[0], &t, 100, 0, O0);

	/* Rank 1: 50 ms ahead, 20 ppm fast: offset -50000020 at 1 ms, -50020000 at 1 s. */
	sync_line(&t, 200, 1, O1 + 1000000, -50000020, 300);
	ev_line(&t, 200, "B", "recv1", 98000000, "");
	ev_line(&t, 200, "f", "message", 98010000, ",\"bp\":\"e\",\"id\":\"0x1111\"");
	ev_line(&t, 200, "E", "recv1", 98020000, "");
	ev_line(&t, 200, "X", "r1-work", 500500000, ",\"dur\":1000");
	sync_line(&t, 200, 1, O1 + 1000000000, -50020000, 300);
	ev_line(&t, 200, "i", "r1-late", 2000000000, ",\"s\":\"t\"");
	write_rank(paths[1], &t, 200, 1, O1);

	/* Rank 2: 50 ms behind. M2 sent at 197.0001 ms of its file, 200.0001 mapped. */
	sync_line(&t, 300, 2, O2 + 1000000, 50000000, 200);
	ev_line(&t, 300, "B", "send2", 197000000, "");
	ev_line(&t, 300, "s", "message", 197000100, ",\"id\":\"0x2222\"");
	ev_line(&t, 300, "E", "send2", 197000200, "");
	if (with_rank2)
		write_rank(paths[2], &t, 300, 2, O2);
	free(t.p);
	t = (struct tool_text){0};

	/* Rank 3: no measurement, placed by its monotonic origin. */
	ev_line(&t, 400, "X", "r3-work", 10000, ",\"dur\":1");
	write_rank(paths[3], &t, 400, 3, O3);
}

static int64_t ts_of(const struct tt_trace *t, const char *name, int nth)
{
	return (int64_t)named(t, name, nth)->ts_ns;
}

static size_t index_of_id(const struct tt_trace *t, const char *ph, const char *id)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->ev[i].ph, ph) == 0 && t->ev[i].id != NULL &&
		    strcmp(t->ev[i].id, id) == 0)
			return i;
	fail_msg("no \"%s\" of id %s", ph, id);
	return 0;
}

static void merge_synced(const char *out, const char *const *inputs, const char *option,
			 struct tool_run *r)
{
	const char *args[16] = {"merge", "-o", out};
	size_t n = 3;

	if (option != NULL)
		args[n++] = option;
	for (size_t i = 0; inputs[i] != NULL; i++)
		args[n++] = inputs[i];
	args[n] = NULL;
	tool_runv(r, NULL, NULL, args);
	if (r->status != 0)
		fail_msg("merge: exit %d\n%s", r->status, r->err);
}

static void clock_sync_maps_offsets_and_drift_onto_rank_0(void **state)
{
	const char *paths[4] = {tool_tmp("sync0.json"), tool_tmp("sync1.json"),
				tool_tmp("sync2.json"), tool_tmp("sync3.json")};
	const char *out = tool_tmp("sync-merged.json");
	const char *inputs[] = {paths[0], paths[1], paths[2], paths[3], NULL};
	const struct tt_event *start, *e;
	struct tool_run r;
	struct tt_trace t;

	(void)state;
	write_synced_ranks(paths, true);
	merge_synced(out, inputs, NULL, &r);
	assert_true(tool_has(r.err, "3 of 4 files mapped onto rank 0's clock"));
	assert_true(tool_has(r.err, "the others by their monotonic origins"));
	tool_run_free(&r);
	tool_load_strict(out, &t);
	start = &t.ev[0];
	assert_string_equal(arg_of(start, "clock")->s, "sync");
	assert_int_equal(arg_of(start, "reference_rank")->i, 0);
	assert_int_equal(arg_of(start, "max_error_ns")->i, 300);
	assert_string_equal(arg_of(start, "origin_monotonic_ns")->s, "1000000000000");
	assert_true(raw_has(arg_of(start, "inputs"),
			    "\"shift_ns\":1999980,\"aligned_by\":\"clock sync\",\"clock_syncs\":2,"
			    "\"offset_ns\":-50000020,\"drift_ppb\":-20000"));
	assert_true(raw_has(arg_of(start, "inputs"),
			    "\"shift_ns\":3000000,\"aligned_by\":\"clock sync\",\"clock_syncs\":1,"
			    "\"offset_ns\":50000000,\"drift_ppb\":0"));
	assert_true(raw_has(arg_of(start, "inputs"),
			    "\"shift_ns\":4000000,\"aligned_by\":\"origin_monotonic_ns\""));
	/* Rank 1 at 500.5 ms of its file: its clock 50 ms + 20 ppm ahead, interpolated:
	 * offset -50000020 - 19980 * 499.5 / 999 = -50010010; its end -50010030. */
	e = named(&t, "r1-work", 0);
	assert_int_equal(e->ts_ns, O1 + 500500000 - 50010010 - O0);
	assert_int_equal(e->ts_ns + e->dur_ns, O1 + 501500000 - 50010030 - O0);
	/* After the last measurement: its offset. */
	assert_int_equal(ts_of(&t, "r1-late", 0), O1 + 2000000000 - 50020000 - O0);
	/* Rank 2: one offset for all; rank 3 by the origins; rank 0 as it was. */
	assert_int_equal(ts_of(&t, "send2", 0), 197000000 + 3000000);
	assert_int_equal(ts_of(&t, "r3-work", 0), 10000 + 4000000);
	assert_int_equal(ts_of(&t, "send", 0), 100000000);
	assert_int_equal(ts_of(&t, "after2", 0), 200100000);
	assert_int_equal(named(&t, "after2", 0)->dur_ns, 1000);
	tt_free(&t);
	tool_expect_no_findings(out);
	for (int i = 0; i < 4; i++)
		unlink(paths[i]);
	unlink(out);
}

/*
 * M2 arrives at rank 0 2.1 us before rank 2 sends it, after the clock map: its
 * receive waits in the merge until the send is written, is moved to 100 ns after
 * it, and rank 0's events after it are moved by what is left of the 2.2 us jump,
 * one tenth of their distance less.
 */
static void a_receive_before_its_send_is_moved_after_it(void **state)
{
	const char *paths[4] = {tool_tmp("clc0.json"), tool_tmp("clc1.json"), tool_tmp("clc2.json"),
				tool_tmp("clc3.json")};
	const char *out = tool_tmp("clc-merged.json");
	const char *inputs[] = {paths[0], paths[1], paths[2], paths[3], NULL};
	const struct tt_event *e, *end;
	struct tool_run r;
	struct tt_trace t;

	(void)state;
	write_synced_ranks(paths, true);
	merge_synced(out, inputs, NULL, &r);
	assert_true(tool_has(r.err, "messages: 2 joined across files; 1 received before they were "
				    "sent after the clock alignment; 1 moved forward"));
	assert_true(tool_has(r.err, "3 events moved, at most 2.200 us"));
	tool_run_free(&r);
	tool_load_strict(out, &t);
	/* Both arrows joined: one s and one f of each id, ids as they were. */
	assert_true(index_of_id(&t, "s", "0x1111") < index_of_id(&t, "f", "0x1111"));
	assert_true(index_of_id(&t, "s", "0x2222") < index_of_id(&t, "f", "0x2222"));
	/* The receive: 100 ns after its send (200.0001 ms). */
	assert_int_equal(t.ev[index_of_id(&t, "f", "0x2222")].ts_ns, 200000100 + 100);
	/* The jump is 2200 ns at 199.998 ms; 1 us later 2100 are left... */
	e = named(&t, "recv", 0); /* one X: its B before the jump, its E after */
	assert_int_equal(e->ts_ns, 199990000);
	assert_int_equal(e->ts_ns + e->dur_ns, 199999000 + 2100);
	/* ... 12 us later 1000, 17 us later 500; 102 us later nothing. */
	e = named(&t, "after1", 0);
	assert_int_equal(e->ts_ns, 200010000 + 1000);
	assert_int_equal(e->dur_ns, 5000 - 500);
	assert_int_equal(ts_of(&t, "after2", 0), 200100000);
	e = named(&t, "step", 0); /* its E, 102 us after: not moved */
	assert_int_equal(e->ts_ns + e->dur_ns, 200050000);
	/* M1 was in order: untouched. */
	/* Offset -50000020 - 19980 * (98.01 - 1) / 999 = -50000020 - 1940.2, truncated. */
	assert_int_equal(t.ev[index_of_id(&t, "f", "0x1111")].ts_ns,
			 O1 + 98010000 - 50000020 - 1940 - O0);
	end = &t.ev[t.n - 1];
	assert_true(
		raw_has(arg_of(end, "messages"),
			"{\"joined\":2,\"violations\":1,\"corrected\":1,\"moved_events\":3,"
			"\"max_move_ns\":2200,\"min_latency_ns\":100,\"receives_without_send\":0,"
			"\"sends_without_receive\":0}"));
	assert_true(raw_has(arg_of(end, "inputs"), "\"moved_events\":3"));
	tt_free(&t);
	tool_expect_no_findings(out);

	/* --no-correction: counted, nothing moved. */
	merge_synced(out, inputs, "--no-correction", &r);
	tool_run_free(&r);
	tool_load_strict(out, &t);
	assert_int_equal(t.ev[index_of_id(&t, "f", "0x2222")].ts_ns, 199998000);
	assert_int_equal(named(&t, "after1", 0)->ts_ns, 200010000);
	assert_true(raw_has(arg_of(&t.ev[t.n - 1], "messages"),
			    "{\"joined\":2,\"violations\":1,\"corrected\":0,\"moved_events\":0,"));
	tt_free(&t);

	/* Without rank 2's file the receive waits for nothing: it is written as it is. */
	inputs[2] = paths[3];
	inputs[3] = NULL;
	write_synced_ranks(paths, false);
	merge_synced(out, inputs, NULL, &r);
	assert_true(tool_has(r.err, "1 receives without their send and 0 sends without their "
				    "receive"));
	tool_run_free(&r);
	tool_load_strict(out, &t);
	assert_int_equal(t.ev[index_of_id(&t, "f", "0x2222")].ts_ns, 199998000);
	assert_int_equal(arg_of(&t.ev[t.n - 1], "merged_events")->i, 12 + 7 + 1); /* all */
	tt_free(&t);
	for (int i = 0; i < 4; i++)
		unlink(paths[i]);
	unlink(out);
}

/* Rank 1's trace rotated into two segments, its first measurement in the first, its
 * second in the second: both segments are mapped by both (interpolated), under one
 * pid, as one process. */
static void segments_of_a_rank_share_its_measurements_and_pid(void **state)
{
	const char *seg[2] = {tool_tmp("seg-1.0000.json"), tool_tmp("seg-1.0001.json")};
	const char *r0 = tool_tmp("seg-0.json"), *out = tool_tmp("seg-merged.json");
	const char *inputs[] = {r0, seg[0], seg[1], NULL};
	struct tool_text t = {0};
	struct tool_run r;
	struct tt_trace m;
	char head[512];

	(void)state;
	sync_line(&t, 100, 0, O0 + 1000000, 0, 0);
	ev_line(&t, 100, "X", "r0-work", 1000, ",\"dur\":1");
	write_rank(r0, &t, 100, 0, O0);
	for (int k = 0; k < 2; k++) {
		snprintf(head, sizeof(head),
			 "[\n{\"ph\":\"i\",\"s\":\"g\",\"name\":\"ringtrace: start\",\"ts\":0,"
			 "\"pid\":200,\"tid\":200,\"args\":{\"origin_monotonic_ns\":\"%lld\","
			 "\"origin_realtime_ns\":\"1700000000000000000\",\"host\":\"node1\","
			 "\"pid\":200,\"rank\":1,\"segment\":%d}},\n",
			 (long long)O1, k);
		tool_text_printf(&t, "%s", head);
		if (k == 0) {
			sync_line(&t, 200, 1, O1 + 1000000, -50000020, 300);
			ev_line(&t, 200, "X", "seg0-work", 500500000, ",\"dur\":1000");
		} else {
			ev_line(&t, 200, "X", "seg1-work", 700000000, ",\"dur\":1");
			sync_line(&t, 200, 1, O1 + 1000000000, -50020000, 300);
		}
		t.p[t.len - 2] = '\n'; /* the last comma */
		t.p[t.len - 1] = ']';
		tool_write(seg[k], t.p, t.len);
		free(t.p);
		t = (struct tool_text){0};
	}
	merge_synced(out, inputs, NULL, &r);
	assert_true(tool_has(r.err, "3 of 3 files mapped onto rank 0's clock"));
	tool_run_free(&r);
	tool_load_strict(out, &m);
	/* As in clock_sync_maps_offsets_and_drift_onto_rank_0: -50010010 at 500.5 ms. */
	assert_int_equal(named(&m, "seg0-work", 0)->ts_ns, O1 + 500500000 - 50010010 - O0);
	/* -50000020 - 19980 * 699 / 999 = -50000020 - 13980 */
	assert_int_equal(named(&m, "seg1-work", 0)->ts_ns, O1 + 700000000 - 50014000 - O0);
	assert_int_equal(named(&m, "seg0-work", 0)->pid, 200);
	assert_int_equal(named(&m, "seg1-work", 0)->pid, 200);
	assert_string_equal(name_of_process(&m, 200), "rank 1 \xc2\xb7 node1");
	tt_free(&m);
	tool_expect_no_findings(out);
	unlink(r0);
	unlink(seg[0]);
	unlink(seg[1]);
	unlink(out);
}

/* Measurements and times at the ends of int64: no overflow (UBSan watches in the
 * asan build), the ranks aligned by their origins instead, the output whole. */
static void extreme_measurements_fall_back_to_the_origins(void **state)
{
	const char *a = tool_tmp("hx0.json"), *b = tool_tmp("hx1.json");
	const char *out = tool_tmp("hx-merged.json");
	const char *inputs[] = {a, b, NULL}, *reversed[] = {b, a, NULL};
	struct tool_text t = {0};
	struct tool_run r;
	struct tt_trace m;

	(void)state;
	tool_text_printf(&t, "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"ringtrace\",\"name\":"
			     "\"ringtrace: clock sync\",\"ts\":1,\"pid\":1,\"tid\":1,\"args\":{"
			     "\"reference_rank\":0,\"rank\":0,\"at_ns\":9223372036854775807,"
			     "\"offset_ns\":-9223372036854775808,\"error_ns\":0,\"rtt_ns\":0,"
			     "\"rounds\":50}},\n");
	ev_line(&t, 1, "s", "message", INT64_C(9223372036854775807), ",\"id\":\"0x1\"");
	tool_text_printf(&t, "{\"ph\":\"X\",\"cat\":\"mpi\",\"name\":\"a\",\"ts\":"
			     "0,\"dur\":9223372036854775.807,\"pid\":1,"
			     "\"tid\":1},\n");
	write_rank(a, &t, 1, 0, INT64_C(9223372036854775000));
	sync_line(&t, 2, 1, 10, INT64_MAX, 0);
	sync_line(&t, 2, 1, 11, -INT64_MAX, INT64_MAX / 4);
	ev_line(&t, 2, "f", "message", 5, ",\"bp\":\"e\",\"id\":\"0x1\"");
	write_rank(b, &t, 2, 1, 5);
	for (int k = 0; k < 2; k++) {
		merge_synced(out, k == 0 ? inputs : reversed, k == 0 ? NULL : "--clock=sync", &r);
		tool_run_free(&r);
		tool_load_strict(out, &m);
		assert_int_equal(arg_of(&m.ev[m.n - 1], "merged_events")->i, 6);
		tt_free(&m);
	}
	unlink(a);
	unlink(b);
	unlink(out);
}

/*
 * A thousand ranks, each sending to the next, merged with an open-files soft limit
 * of 256: the merge raises it, joins every message, and its memory does not grow
 * with the ranks' events.
 */
static void a_thousand_ranks_merge_within_the_open_files_limit(void **state)
{
	const int ranks = TT_SANITIZED ? 300 : 1000;
	static char paths[1000][64];
	const char **args = calloc((size_t)ranks + 4, sizeof(*args));
	const char *out = tool_tmp("thousand.json");
	struct rlimit saved, low;
	struct tool_run r;
	struct tt_trace t;
	char dir[] = "/tmp/rtr-merge-XXXXXX";

	(void)state;
	assert_non_null(args);
	assert_non_null(mkdtemp(dir));
	for (int k = 0; k < ranks; k++) {
		struct tool_text x = {0};
		char id[32];
		int pid = 10000 + k;

		snprintf(paths[k], sizeof(paths[k]), "%s/r%d.json", dir, k);
		sync_line(&x, pid, k, 5000000000 + 1000000, -k * 1000, 100);
		ev_line(&x, pid, "B", "step", 1000000, "");
		if (k + 1 < ranks) {
			snprintf(id, sizeof(id), ",\"id\":\"0x%x\"", 0x10000 + k);
			ev_line(&x, pid, "s", "message", 1000100, id);
		}
		ev_line(&x, pid, "E", "step", 1000200, "");
		ev_line(&x, pid, "B", "recv", 1010000, "");
		if (k > 0) {
			snprintf(id, sizeof(id), ",\"bp\":\"e\",\"id\":\"0x%x\"", 0x10000 + k - 1);
			ev_line(&x, pid, "f", "message", 1010100, id);
		}
		ev_line(&x, pid, "E", "recv", 1010200, "");
		write_rank(paths[k], &x, pid, k, 5000000000 + k * 1000);
	}
	args[0] = "merge";
	args[1] = "-o";
	args[2] = out;
	for (int k = 0; k < ranks; k++)
		args[3 + k] = paths[k];
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	low = saved;
	low.rlim_cur = 256;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	tool_runv(&r, NULL, NULL, args);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
	if (r.status != 0)
		fail_msg("merge: exit %d\n%s", r.status, r.err);
	print_message("merged %d ranks in %ld KiB peak\n", ranks, r.maxrss_kib);
	if (!TT_SANITIZED)
		assert_true(r.maxrss_kib < 96 * 1024); /* about 55 KiB an input */
	tool_run_free(&r);
	tool_load_strict(out, &t);
	{
		char joined[64];

		snprintf(joined, sizeof(joined), "{\"joined\":%d,\"violations\":0,", ranks - 1);
		assert_true(raw_has(arg_of(&t.ev[t.n - 1], "messages"), joined));
	}
	/* Every rank's clock is k us ahead, measured: its events land where rank 0's do. */
	for (size_t i = 0; i < t.n; i++)
		if (t.ev[i].name != NULL && strcmp(t.ev[i].name, "step") == 0) {
			assert_string_equal(t.ev[i].ph, "X");
			assert_int_equal(t.ev[i].ts_ns, 1000000);
			assert_int_equal(t.ev[i].dur_ns, 200);
		}
	tt_free(&t);
	for (int k = 0; k < ranks; k++)
		unlink(paths[k]);
	rmdir(dir);
	unlink(out);
	free(args);
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
		cmocka_unit_test(clock_sync_maps_offsets_and_drift_onto_rank_0),
		cmocka_unit_test(a_receive_before_its_send_is_moved_after_it),
		cmocka_unit_test(segments_of_a_rank_share_its_measurements_and_pid),
		cmocka_unit_test(extreme_measurements_fall_back_to_the_origins),
		cmocka_unit_test(a_thousand_ranks_merge_within_the_open_files_limit),
	};

	return cmocka_run_group_tests_name("tools_merge", tests, NULL, NULL);
}
