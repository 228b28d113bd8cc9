/* SPDX-License-Identifier: MIT */
/*
 * The recorder end to end through the public API: record, stop, parse the file back
 * with a strict JSON parser and check every event's values.
 */
#include <ringtrace.h>

#include "child.h"
#include "test_util.h"
#include "trace_read.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static char path[4096];

/* The test removes the file itself, when it passes. */
static void make_path(const char *name)
{
	tu_temp_path(path, sizeof(path), "recorder", name, ".json");
}

static void load(struct tt_trace *t)
{
	int rc = tt_load(path, TT_CHECK_ESCAPES, t);
	if (rc != 0)
		fail_msg("%s", t->error);
	assert_true(t->complete);
	assert_false(t->repaired);
}

/* The process that wrote the file under check; 0 for this one. */
static pid_t writer_pid;

/* The start marker's origin, and checks common to every file. */
static uint64_t check_frame(const struct tt_trace *t, uint64_t expect_events)
{
	pid_t pid = writer_pid != 0 ? writer_pid : getpid();

	assert_true(t->n >= 3);
	const struct tt_event *first = &t->ev[0], *last = &t->ev[t->n - 1];
	assert_string_equal(first->ph, "i");
	assert_string_equal(first->name, "ringtrace: start");
	assert_string_equal(first->scope, "g");
	assert_int_equal(first->ts_ns, 0);
	assert_string_equal(last->name, "ringtrace: end");
	assert_string_equal(last->scope, "g");
	assert_int_equal(tt_arg(last, "events")->i, (int64_t)expect_events);
	assert_int_equal(tt_arg(last, "final")->type, TT_BOOL);
	assert_int_equal(tt_arg(last, "final")->b, 1);
	assert_int_equal(tt_arg(last, "dropped")->i, 0);

	const struct tt_arg *origin = tt_arg(first, "origin_monotonic_ns");
	assert_non_null(origin);
	assert_int_equal(origin->type, TT_STRING);
	assert_string_equal(tt_arg(first, "version")->s, RTR_VERSION_STRING);
	assert_int_equal(tt_arg(first, "pid")->i, pid);

	for (size_t i = 0; i < t->n; i++) {
		assert_true(t->ev[i].has_pid);
		assert_true(t->ev[i].has_tid);
		assert_int_equal(t->ev[i].pid, pid);
		if (strcmp(t->ev[i].ph, "M") != 0)
			assert_true(t->ev[i].has_ts);
	}
	return strtoull(origin->s, NULL, 10);
}

static const char hostile[] = "q\"b\\s/\n\r\t\b\f\x01\x1f\x7f é € 😀 end";
static const char invalid[] = "a\xff"
			      "b\xc0\xaf"
			      "c\xed\xa0\x80"
			      "d\xe2\x82";
static const char invalid_fixed[] = "a\xef\xbf\xbd"
				    "b\xef\xbf\xbd\xef\xbf\xbd"
				    "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
				    "d\xef\xbf\xbd";

static void every_event_kind_comes_back_with_exact_values(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	char runtime_name[64];

	make_path("kinds");
	tu_start(path, RTR_IO_AUTO, RTR_ON_FULL_BLOCK, 1 << 16);
	uint64_t t0 = rtr_now_ns();

	rtr_thread_name("main thread");
	struct rtr_arg args[] = {
		RTR_ARG_I64("i64", INT64_MIN),	   RTR_ARG_U64("u64", UINT64_MAX),
		RTR_ARG_F64("f64", 0.1),	   RTR_ARG_BOOL("yes", true),
		RTR_ARG_BOOL("no", false),	   RTR_ARG_STR("static", hostile),
		RTR_ARG_STR_COPY("copy", invalid), RTR_ARG_STR("null", NULL),
		RTR_ARG_F64("nan", NAN),	   RTR_ARG_I64("max", INT64_MAX),
	};
	rtr_begin_args("cat", "outer", args, 10);
	rtr_instant("cat", hostile);
	rtr_counter_i64("mem", "bytes", -42);
	rtr_counter_f64("mem", "ratio", -1.5e-300);
	rtr_complete("gpu", "k0", t0 + 1, 999);
	rtr_complete("gpu", "k1", t0 + 1000, 1000);
	rtr_complete("gpu", "k2", t0 + 123456789012, 7);
	snprintf(runtime_name, sizeof(runtime_name), "step %d", 17);
	rtr_begin_copy("cat", runtime_name);
	memset(runtime_name, 'X', sizeof(runtime_name) - 1); /* the copy must not see this */
	rtr_end("cat", "step 17");
	rtr_instant_copy("cat", invalid);
	rtr_complete_copy("cat", "copied complete", t0 + 5000, 250);
	struct rtr_arg one[] = {RTR_ARG_I64("n", 3)};
	rtr_complete_args("cat", "with args", t0 + 6000, 1, one, 1);
	rtr_instant_v("cat", "variadic", RTR_ARG_I64("a", 1), RTR_ARG_STR_COPY("b", "two"));
	{
		RTR_SCOPE("cat", "scope");
	}
	rtr_end("cat", "outer");
	assert_int_equal(rtr_stop(), 0);

	struct rtr_stats st;
	rtr_stats_get(&st);
	assert_int_equal(st.events_recorded, 16);
	assert_int_equal(st.events_written, 16);
	assert_int_equal(st.events_dropped, 0);
	assert_int_equal(st.running, 0);

	load(&t);
	uint64_t origin = check_frame(&t, 16);
	const struct tt_event *e[32];
	size_t n = tu_events_of(&t, e, 32);
	/* the thread name is an M event; each slice is one X, written at its end */
	assert_int_equal(n, 13);

	/* thread names: the ring's first name, then the one set with rtr_thread_name */
	int named = 0;
	for (size_t i = 0; i < t.n; i++)
		if (strcmp(t.ev[i].ph, "M") == 0 && strcmp(t.ev[i].name, "thread_name") == 0 &&
		    strcmp(tt_arg(&t.ev[i], "name")->s, "main thread") == 0)
			named++;
	assert_true(named >= 1);

	/* "outer" ends last, so its X is the last line, with the B's arguments */
	const struct tt_event *outer = e[12];
	assert_string_equal(outer->ph, "X");
	assert_string_equal(outer->cat, "cat");
	assert_string_equal(outer->name, "outer");
	assert_true(outer->has_dur);
	assert_int_equal(outer->nargs, 10);
	assert_int_equal(tt_arg(outer, "i64")->i, INT64_MIN);
	assert_string_equal(tt_arg(outer, "u64")->raw, "18446744073709551615");
	assert_int_equal(tt_arg(outer, "f64")->type, TT_DOUBLE);
	assert_true(tt_arg(outer, "f64")->d == 0.1);
	assert_int_equal(tt_arg(outer, "yes")->type, TT_BOOL);
	assert_int_equal(tt_arg(outer, "yes")->b, 1);
	assert_int_equal(tt_arg(outer, "no")->b, 0);
	assert_string_equal(tt_arg(outer, "static")->s, hostile);
	assert_string_equal(tt_arg(outer, "copy")->s, invalid_fixed);
	assert_int_equal(tt_arg(outer, "null")->type, TT_NULL);
	assert_int_equal(tt_arg(outer, "nan")->type, TT_NULL);
	assert_int_equal(tt_arg(outer, "max")->i, INT64_MAX);
	assert_int_equal(outer->tid, gettid());
	assert_true(outer->ts_ns >= t0 - origin);

	assert_string_equal(e[0]->ph, "i");
	assert_string_equal(e[0]->scope, "t");
	assert_string_equal(e[0]->name, hostile);
	assert_true(e[0]->ts_ns >= outer->ts_ns); /* recorded after outer's B */

	assert_string_equal(e[1]->ph, "C");
	assert_string_equal(e[1]->name, "bytes");
	assert_int_equal(tt_arg(e[1], "value")->i, -42);
	assert_string_equal(e[2]->ph, "C");
	assert_true(tt_arg(e[2], "value")->d == -1.5e-300);

	const struct {
		const char *name;
		uint64_t ts, dur;
	} x[] = {{"k0", 1, 999}, {"k1", 1000, 1000}, {"k2", 123456789012, 7}};
	for (int i = 0; i < 3; i++) {
		const struct tt_event *k = e[3 + i];
		assert_string_equal(k->ph, "X");
		assert_string_equal(k->cat, "gpu");
		assert_string_equal(k->name, x[i].name);
		assert_int_equal(k->ts_ns, t0 + x[i].ts - origin);
		assert_int_equal(k->dur_ns, x[i].dur);
	}
	/* "step 17": one X between the counter recorded before its B and the instant
	 * recorded after its E */
	assert_string_equal(e[6]->ph, "X");
	assert_string_equal(e[6]->cat, "cat");
	assert_string_equal(e[6]->name, "step 17");
	assert_int_equal(e[6]->nargs, 0);
	assert_true(e[6]->ts_ns >= e[2]->ts_ns);
	assert_true(e[6]->ts_ns + e[6]->dur_ns <= e[7]->ts_ns);
	assert_string_equal(e[7]->name, invalid_fixed);
	assert_string_equal(e[8]->name, "copied complete");
	assert_int_equal(e[8]->ts_ns, t0 + 5000 - origin);
	assert_int_equal(e[8]->dur_ns, 250);
	assert_string_equal(e[9]->name, "with args");
	assert_int_equal(e[9]->dur_ns, 1);
	assert_int_equal(tt_arg(e[9], "n")->i, 3);
	assert_string_equal(e[10]->name, "variadic");
	assert_int_equal(tt_arg(e[10], "a")->i, 1);
	assert_string_equal(tt_arg(e[10], "b")->s, "two");
	assert_string_equal(e[11]->ph, "X");
	assert_string_equal(e[11]->name, "scope");
	assert_true(e[11]->ts_ns >= e[10]->ts_ns);
	/* outer holds every event of the thread, its end after scope's */
	assert_true(outer->ts_ns + outer->dur_ns >= e[11]->ts_ns + e[11]->dur_ns);
	assert_true(outer->ts_ns <= e[6]->ts_ns);
	tt_free(&t);
	unlink(path);
}

/* No line shorter than a page crosses a 4 KiB boundary of the file: a kill, which
 * stops a write at a page boundary, then always leaves whole lines. */
static void assert_lines_stay_within_pages(const char *file)
{
	FILE *f = fopen(file, "re");
	uint64_t start = 0, off = 0, crossing = 0, lines = 0;
	int ch;

	assert_non_null(f);
	while ((ch = getc(f)) != EOF) {
		if (ch == ' ' && off == start) { /* padding before a line belongs to no line */
			start = ++off;
			continue;
		}
		off++;
		if (ch != '\n')
			continue;
		lines++;
		if (off - start <= 4096 && start / 4096 != (off - 1) / 4096)
			crossing++;
		start = off;
	}
	fclose(f);
	assert_true(lines > 1000);
	assert_int_equal(crossing, 0);
}

/* Several threads, each with its own sequence of spans and explicit times. */
#define THREADS	   4
#define PER_THREAD 20000
static uint64_t base_ns;

static void *record_thread(void *arg)
{
	int64_t id = (int64_t)(intptr_t)arg;
	char name[32];

	snprintf(name, sizeof(name), "worker %d", (int)id);
	rtr_thread_name(name);
	for (int64_t i = 0; i < PER_THREAD; i++) {
		struct rtr_arg a[] = {RTR_ARG_I64("thread", id), RTR_ARG_I64("seq", i)};
		rtr_begin_args("work", "span", a, 2);
		rtr_complete("work", "inner", base_ns + (uint64_t)(id * 1000000 + i), (uint64_t)i);
		rtr_end("work", "span");
	}
	return (void *)(intptr_t)gettid();
}

static void threads_record_in_order_with_exact_values(void **state)
{
	(void)state;
	pthread_t th[THREADS];
	int64_t tids[THREADS];
	struct tt_trace t = {0};

	make_path("threads");
	tu_start(path, RTR_IO_AUTO, RTR_ON_FULL_BLOCK, 1 << 14);
	base_ns = rtr_now_ns();
	for (intptr_t i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, record_thread, (void *)i), 0);
	for (int i = 0; i < THREADS; i++) {
		void *tid;
		pthread_join(th[i], &tid);
		tids[i] = (intptr_t)tid;
	}
	assert_int_equal(rtr_stop(), 0);

	assert_lines_stay_within_pages(path);
	load(&t);
	uint64_t origin = check_frame(&t, THREADS * PER_THREAD * 3 + THREADS);
	int64_t next[THREADS] = {0}, phase[THREADS] = {0};
	uint64_t last_ts[THREADS] = {0};
	int names[THREADS] = {0};
	for (size_t k = 1; k + 1 < t.n; k++) {
		const struct tt_event *e = &t.ev[k];
		int id = -1;
		if (strcmp(e->name, "process_name") == 0)
			continue;
		for (int i = 0; i < THREADS; i++)
			if (e->tid == tids[i])
				id = i;
		if (id < 0)
			fail_msg("line %zu: %s %s tid %ld", e->line, e->ph, e->name, (long)e->tid);
		if (strcmp(e->ph, "M") == 0) {
			char want[32];
			snprintf(want, sizeof(want), "worker %d", id);
			if (strcmp(tt_arg(e, "name")->s, want) == 0)
				names[id]++;
			continue;
		}
		assert_string_equal(e->cat, "work");
		/* per span: its inner X, then the span's X, written at its E */
		switch (phase[id]) {
		case 0:
			assert_string_equal(e->ph, "X");
			assert_string_equal(e->name, "inner");
			assert_int_equal(e->ts_ns,
					 base_ns + (uint64_t)(id * 1000000 + next[id]) - origin);
			assert_int_equal(e->dur_ns, (uint64_t)next[id]);
			break;
		case 1:
			assert_string_equal(e->ph, "X");
			assert_string_equal(e->name, "span");
			assert_int_equal(e->nargs, 2);
			assert_int_equal(tt_arg(e, "thread")->i, id);
			assert_int_equal(tt_arg(e, "seq")->i, next[id]);
			assert_true(e->has_dur);
			/* the spans of a thread one after another */
			assert_true(e->ts_ns >= last_ts[id]);
			last_ts[id] = e->ts_ns + e->dur_ns;
			next[id]++;
			break;
		}
		phase[id] = (phase[id] + 1) % 2;
	}
	for (int i = 0; i < THREADS; i++) {
		assert_int_equal(next[i], PER_THREAD);
		assert_int_equal(phase[i], 0);
		assert_true(names[i] >= 1);
	}
	tt_free(&t);
	unlink(path);
}

/* A fixed sequence with explicit times, for comparing I/O methods. */
static void record_fixed_sequence(uint64_t t0)
{
	for (int i = 0; i < 50000; i++) {
		struct rtr_arg a[] = {RTR_ARG_I64("i", i), RTR_ARG_STR_COPY("s", "payload")};
		rtr_complete_args("io", "fixed", t0 + (uint64_t)i * 10, 5, a, 2);
	}
}

static void io_uring_and_write_give_identical_events(void **state)
{
	(void)state;
	struct tt_trace t[2] = {{0}};
	int methods[2] = {RTR_IO_AUTO, RTR_IO_SYNC};
	struct rtr_stats st[2];

	for (int m = 0; m < 2; m++) {
		make_path(m == 0 ? "io-auto" : "io-sync");
		tu_start(path, methods[m], RTR_ON_FULL_BLOCK, 1 << 16);
		record_fixed_sequence(rtr_now_ns() + 1000);
		assert_int_equal(rtr_stop(), 0);
		rtr_stats_get(&st[m]);
		load(&t[m]);
		unlink(path);
	}
	if (st[0].io_method != RTR_IO_URING)
		print_message("io_uring unavailable here: AUTO fell back to write(2)\n");
	assert_int_equal(st[1].io_method, RTR_IO_SYNC);
	assert_string_equal(tt_arg(&t[1].ev[0], "io")->s, "write");
	assert_string_equal(tt_arg(&t[0].ev[0], "io")->s, rtr_io_name(st[0].io_method));
	assert_int_equal(t[0].n, t[1].n);
	assert_int_equal(st[0].events_written, 50000);
	assert_int_equal(st[1].events_written, 50000);
	/* Byte counts differ with the origin's digits; the sink test compares bytes. */

	uint64_t first[2] = {0, 0};
	for (size_t i = 0, seen = 0; i < t[0].n; i++) {
		const struct tt_event *a = &t[0].ev[i], *b = &t[1].ev[i];
		assert_string_equal(a->ph, b->ph);
		if (strcmp(a->ph, "X") != 0)
			continue;
		if (seen++ == 0) {
			first[0] = a->ts_ns;
			first[1] = b->ts_ns;
		}
		assert_string_equal(a->name, b->name);
		assert_int_equal(a->ts_ns - first[0], b->ts_ns - first[1]);
		assert_int_equal(a->dur_ns, b->dur_ns);
		assert_int_equal(tt_arg(a, "i")->i, tt_arg(b, "i")->i);
		assert_string_equal(tt_arg(a, "s")->s, tt_arg(b, "s")->s);
	}
	tt_free(&t[0]);
	tt_free(&t[1]);
}

static void flush_puts_earlier_events_in_the_file(void **state)
{
	(void)state;
	struct tt_trace t = {0};

	make_path("flush");
	tu_start(path, RTR_IO_AUTO, RTR_ON_FULL_DROP, 1 << 16);
	for (int i = 0; i < 1000; i++)
		rtr_instant("f", "before flush");
	assert_int_equal(rtr_flush(), 0);

	/* Between writes the file is strict JSON: its last chunk ends in a provisional
	 * end marker ("final": false) that the next chunk will be written over. */
	load(&t);
	size_t instants = 0;
	for (size_t i = 0; i < t.n; i++)
		instants += strcmp(t.ev[i].ph, "i") == 0 && strcmp(t.ev[i].scope, "t") == 0;
	assert_int_equal(instants, 1000);
	const struct tt_event *end = &t.ev[t.n - 1];
	assert_string_equal(end->name, "ringtrace: end");
	assert_int_equal(tt_arg(end, "final")->b, 0);
	assert_int_equal(tt_arg(end, "events")->i, 1000);
	tt_free(&t);

	assert_int_equal(rtr_stop(), 0);
	load(&t);
	check_frame(&t, 1000);
	tt_free(&t);
	unlink(path);
}

/* A producer that never pauses, until told to stop. */
static int keep_recording;

static void *record_until_told(void *arg)
{
	uint64_t *count = arg;

	while (__atomic_load_n(&keep_recording, __ATOMIC_ACQUIRE)) {
		rtr_counter_i64("busy", "seq", (int64_t)*count);
		++*count;
	}
	return NULL;
}

static void flush_returns_while_another_thread_keeps_recording(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	pthread_t th;
	uint64_t produced = 0;

	make_path("busy-flush");
	tu_start(path, RTR_IO_AUTO, RTR_ON_FULL_BLOCK, 1 << 16);
	__atomic_store_n(&keep_recording, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_create(&th, NULL, record_until_told, &produced), 0);
	/* Each flush comes back although the other thread keeps the writer busy (a
	 * flush that waited for an idle pass could wait forever), and what this thread
	 * recorded before it is in the file. */
	for (int i = 0; i < 20; i++) {
		rtr_instant_v("busy", "before flush", RTR_ARG_I64("i", i));
		assert_int_equal(rtr_flush(), 0);
	}
	/* Read the file once it is still: while the writer works, a reader can catch a
	 * provisional close just before it is cut off (see rtr__chunk.keep). */
	__atomic_store_n(&keep_recording, 0, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	assert_int_equal(rtr_flush(), 0);
	load(&t);
	int seen = 0;
	for (size_t k = 0; k < t.n; k++)
		if (strcmp(t.ev[k].ph, "i") == 0 && strcmp(t.ev[k].name, "before flush") == 0)
			assert_int_equal(tt_arg(&t.ev[k], "i")->i, seen++);
	assert_int_equal(seen, 20);
	assert_int_equal(tt_arg(&t.ev[t.n - 1], "events")->i, (int64_t)produced + 20);
	tt_free(&t);

	assert_int_equal(rtr_stop(), 0);
	load(&t);
	check_frame(&t, produced + 20);
	tt_free(&t);
	unlink(path);
}

static void restart_writes_a_second_complete_file(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	char first[4096];

	make_path("restart-1");
	snprintf(first, sizeof(first), "%s", path);
	tu_start(path, RTR_IO_AUTO, RTR_ON_FULL_BLOCK, 1 << 16);
	rtr_instant("r", "one");
	assert_int_equal(rtr_start(NULL), -EBUSY);
	assert_int_equal(rtr_stop(), 0);
	rtr_instant("r", "between sessions");
	assert_int_equal(rtr_stop(), 0); /* stopping twice is harmless */

	make_path("restart-2");
	tu_start(path, RTR_IO_AUTO, RTR_ON_FULL_BLOCK, 1 << 16);
	rtr_instant("r", "two");
	rtr_instant("r", "three");
	assert_int_equal(rtr_stop(), 0);

	struct rtr_stats st;
	rtr_stats_get(&st);
	assert_int_equal(st.events_recorded, 2);

	load(&t);
	check_frame(&t, 2);
	tt_free(&t);
	unlink(path);
	snprintf(path, sizeof(path), "%s", first);
	load(&t);
	check_frame(&t, 1);
	tt_free(&t);
	unlink(path);
}

static void arguments_past_the_limit_are_cut_and_counted(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	struct rtr_arg args[RTR_MAX_ARGS + 4];
	static const char *const keys[] = {"a0",  "a1",	 "a2",	"a3",  "a4",  "a5",  "a6",
					   "a7",  "a8",	 "a9",	"a10", "a11", "a12", "a13",
					   "a14", "a15", "a16", "a17", "a18", "a19"};

	for (int i = 0; i < RTR_MAX_ARGS + 4; i++)
		args[i] = RTR_ARG_I64(keys[i], i * 10);
	make_path("argscut");
	tu_start(path, RTR_IO_AUTO, RTR_ON_FULL_BLOCK, 1 << 16);
	rtr_instant_args("a", "many", args, RTR_MAX_ARGS + 4);
	rtr_instant_args("a", "few", args, 2);
	assert_int_equal(rtr_stop(), 0);
	struct rtr_stats st;
	rtr_stats_get(&st);
	assert_int_equal(st.events_args_cut, 1);
	assert_string_equal(rtr_trace_path(), path);

	load(&t);
	check_frame(&t, 2);
	const struct tt_event *e[4];
	assert_int_equal(tu_events_of(&t, e, 4), 2);
	assert_int_equal(e[0]->nargs, RTR_MAX_ARGS);
	for (int i = 0; i < RTR_MAX_ARGS; i++) {
		assert_string_equal(e[0]->args[i].key, keys[i]);
		assert_int_equal(e[0]->args[i].i, i * 10);
	}
	assert_int_equal(e[1]->nargs, 2);
	assert_int_equal(tt_arg(&t.ev[t.n - 1], "args_cut")->i, 1);
	tt_free(&t);
	unlink(path);
}

static void exit_without_stop_still_finishes_the_file(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	int status;

	make_path("atexit");
	pid_t child = tu_fork();
	if (child == 0) {
		struct rtr_config cfg;
		rtr_config_init(&cfg);
		cfg.path = path;
		cfg.on_full = RTR_ON_FULL_BLOCK;
		if (rtr_start(&cfg) != 0)
			_exit(3);
		for (int i = 0; i < 5000; i++)
			rtr_counter_i64("exit", "seq", i);
		exit(0); /* no rtr_stop(): the exit handler finishes the file */
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	load(&t);
	writer_pid = child;
	check_frame(&t, 5000);
	writer_pid = 0;
	int64_t seq = 0;
	for (size_t i = 0; i < t.n; i++) {
		if (strcmp(t.ev[i].ph, "C") != 0)
			continue;
		assert_int_equal(t.ev[i].pid, child);
		assert_int_equal(tt_arg(&t.ev[i], "value")->i, seq++);
	}
	assert_int_equal(seq, 5000);
	tt_free(&t);
	unlink(path);
}

/* The first event named name in t, or NULL. */
static const struct tt_event *find_named(const struct tt_trace *t, const char *ph, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->ev[i].ph, ph) == 0 && tu_is(t->ev[i].name, name))
			return &t->ev[i];
	return NULL;
}

/* Each slice is one X, written when its E comes (an outer slice after the slices it
 * holds), with the B's time, the B's name and arguments; a flush while a slice is open
 * shows it as a B in the file's provisional close, at the time its X then starts. */
static void each_slice_is_one_complete_event_at_its_end(void **state)
{
	(void)state;
	struct tt_trace t = {0}, mid = {0};
	const struct tt_event *e[16];

	make_path("fold");
	tu_start(path, RTR_IO_AUTO, RTR_ON_FULL_BLOCK, 1 << 16);
	uint64_t t0 = rtr_now_ns();
	rtr_begin("f", "outer");
	rtr_begin("f", "leaf");
	rtr_end("f", "leaf");
	rtr_begin_v("f", "with args", RTR_ARG_I64("n", 7), RTR_ARG_STR("s", "x"));
	rtr_end("f", "with args");
	rtr_begin_copy("f", "copied");
	rtr_end("f", "copied");
	rtr_begin("f", "a");
	rtr_end("f", "b"); /* a mismatch: the E ends the innermost slice, "a" */
	rtr_begin("f", "split");
	assert_int_equal(rtr_flush(), 0); /* the B is in the file before its E exists */
	if (tt_load(path, TT_CHECK_ESCAPES, &mid) != 0)
		fail_msg("%s", mid.error);
	rtr_end("f", "split");
	rtr_begin("g", "leaf"); /* another category */
	rtr_end("g", "leaf");
	rtr_end("f", "outer");
	uint64_t t1 = rtr_now_ns();
	assert_int_equal(rtr_stop(), 0);

	load(&t);
	uint64_t origin = check_frame(&t, 14);
	size_t n = tu_events_of(&t, e, 16);
	static const struct {
		const char *cat, *name;
	} want[] = {
		{"f", "leaf"},	{"f", "with args"}, {"f", "copied"}, {"f", "a"},
		{"f", "split"}, {"g", "leaf"},	    {"f", "outer"},
	};
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	uint64_t last = 0;
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(e[i]->ph, "X");
		assert_true(e[i]->has_dur);
		assert_string_equal(e[i]->cat, want[i].cat);
		assert_string_equal(e[i]->name, want[i].name);
		assert_true(e[i]->ts_ns + origin >= t0);
		assert_true(e[i]->ts_ns + e[i]->dur_ns + origin <= t1);
		if (i + 1 == n)
			break;
		/* the inner slices one after another, in recording order */
		assert_true(e[i]->ts_ns >= last);
		last = e[i]->ts_ns + e[i]->dur_ns;
	}
	/* outer holds them all */
	assert_true(e[n - 1]->ts_ns <= e[0]->ts_ns);
	assert_true(e[n - 1]->ts_ns + e[n - 1]->dur_ns >= last);
	assert_int_equal(e[0]->nargs, 0);
	assert_int_equal(e[1]->nargs, 2);
	assert_int_equal(tt_arg(e[1], "n")->i, 7);
	assert_string_equal(tt_arg(e[1], "s")->s, "x");

	/* at the flush, outer and split were open: B lines in the provisional close, the
	 * slices done by then X lines, and no E */
	const struct tt_event *mid_outer = find_named(&mid, "B", "outer");
	const struct tt_event *mid_split = find_named(&mid, "B", "split");
	assert_non_null(mid_outer);
	assert_non_null(mid_split);
	assert_true(mid_outer < mid_split);
	assert_non_null(find_named(&mid, "X", "a"));
	assert_null(find_named(&mid, "X", "split"));
	assert_null(find_named(&mid, "E", "split"));
	assert_int_equal(mid_outer->ts_ns, e[6]->ts_ns);
	assert_int_equal(mid_split->ts_ns, e[4]->ts_ns);
	assert_false(tt_arg(tu_end_marker(&mid), "final")->b);
	tt_free(&mid);
	tt_free(&t);
	unlink(path);
}

/* Slices that end in one nanosecond, each written at its end, the innermost first (as
 * the instrument library's functions and the OMPT tool's barrier and its wait end):
 * every one's ts + dur, added as doubles as the viewers add them, is the same double,
 * so that speedscope pairs their ends in order. (A three-decimal dur misses that sum
 * by a unit in the last place about one time in four.) */
static void slices_that_end_together_end_at_one_double(void **state)
{
	enum { CHAINS = 200 };
	char line[1024];
	double ends[3];
	int k = 0, chains = 0;

	(void)state;
	make_path("ties");
	tu_start(path, RTR_IO_AUTO, RTR_ON_FULL_BLOCK, 1 << 20);
	uint64_t t0 = rtr_now_ns();
	for (int i = 0; i < CHAINS; i++) {
		uint64_t begin = t0 + 1000 + (uint64_t)i * 1000;
		uint64_t end = begin + 101 + (uint64_t)(i * 37 % 500);
		rtr_complete("tie", "leaf", begin + 20, end - begin - 20);
		rtr_complete("tie", "mid", begin + 10, end - begin - 10);
		rtr_complete("tie", "outer", begin, end - begin);
	}
	assert_int_equal(rtr_stop(), 0);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strstr(line, "\"cat\":\"tie\"") == NULL)
			continue;
		const char *ts = strstr(line, "\"ts\":"), *dur = strstr(line, "\"dur\":");
		assert_non_null(ts);
		assert_non_null(dur);
		ends[k++] = strtod(ts + 5, NULL) + strtod(dur + 6, NULL);
		if (k < 3)
			continue;
		if (ends[0] != ends[1] || ends[1] != ends[2])
			fail_msg("chain %d: ends %.17g, %.17g, %.17g", chains, ends[0], ends[1],
				 ends[2]);
		k = 0;
		chains++;
	}
	fclose(f);
	assert_int_equal(chains, CHAINS);
	unlink(path);
}

static void tsc_clock_keeps_times_ordered_and_explicit_times_exact(void **state)
{
	(void)state;
	struct tt_trace t = {0};
	struct rtr_config cfg;
	struct rtr_stats st;

	make_path("tsc");
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.clock = RTR_CLOCK_TSC;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_stats_get(&st);
	if (st.clock != RTR_CLOCK_TSC)
		print_message("no usable TSC here: the clock is CLOCK_MONOTONIC\n");
	uint64_t before = rtr_now_ns();
	for (int i = 0; i < 1000; i++) {
		rtr_begin("tsc", "outer");
		rtr_complete("tsc", "explicit", before + (uint64_t)i, 3);
		rtr_end("tsc", "outer");
	}
	uint64_t after = rtr_now_ns();
	assert_int_equal(rtr_stop(), 0);

	load(&t);
	uint64_t origin = check_frame(&t, 3000);
	uint64_t last = 0;
	int i = 0, outers = 0;
	for (size_t k = 0; k < t.n; k++) {
		const struct tt_event *e = &t.ev[k];
		assert_true(strcmp(e->ph, "B") != 0 && strcmp(e->ph, "E") != 0);
		if (tu_is(e->name, "outer")) {
			/* clock readings between the two rtr_now_ns() calls, never backwards */
			assert_string_equal(e->ph, "X");
			assert_true(e->ts_ns >= last);
			assert_true(e->ts_ns + origin >= before);
			assert_true(e->ts_ns + e->dur_ns + origin <= after);
			last = e->ts_ns + e->dur_ns;
			outers++;
		} else if (strcmp(e->ph, "X") == 0) {
			assert_int_equal(e->ts_ns, before + (uint64_t)i++ - origin);
			assert_int_equal(e->dur_ns, 3);
		}
	}
	assert_int_equal(i, 1000);
	assert_int_equal(outers, 1000);
	tt_free(&t);
	unlink(path);
}

static void calls_before_start_are_ignored(void **state)
{
	(void)state;
	struct rtr_stats st;

	rtr_begin("x", "not recording");
	rtr_counter_i64("x", "not recording", 1);
	rtr_instant_copy("x", "not recording");
	assert_int_equal(rtr_flush(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.running, 0);
}

static void start_refuses_a_symlink_at_the_path(void **state)
{
	(void)state;
	char target[4200];

	make_path("symlink");
	snprintf(target, sizeof(target), "%s.target", path);
	unlink(target);
	assert_int_equal(symlink(target, path), 0);
	struct rtr_config cfg;
	rtr_config_init(&cfg);
	cfg.path = path;
	assert_int_equal(rtr_start(&cfg), -ELOOP);
	struct stat sb;
	assert_int_equal(stat(target, &sb), -1);
	unlink(path);
}

static void bad_config_is_refused_and_bad_environment_keeps_defaults(void **state)
{
	(void)state;
	struct rtr_config cfg;

	setenv("RINGTRACE_RING_KB", "lots", 1);
	setenv("RINGTRACE_ON_FULL", "block", 1);
	setenv("RINGTRACE_FLUSH_MS", "-5", 1);
	setenv("RINGTRACE_IO", "sync", 1);
	setenv("RINGTRACE_CLOCK", "sundial", 1);
	setenv("RINGTRACE_FILE", "/tmp/x-%p-%%.json", 1);
	rtr_config_init(&cfg);
	assert_int_equal(cfg.ring_bytes, 1 << 20);
	assert_int_equal(cfg.on_full, RTR_ON_FULL_BLOCK);
	assert_int_equal(cfg.flush_ms, 100);
	assert_int_equal(cfg.io, RTR_IO_SYNC);
	assert_int_equal(cfg.clock, RTR_CLOCK_AUTO);
	assert_string_equal(cfg.path, "/tmp/x-%p-%%.json");
	setenv("RINGTRACE_RING_KB", "64", 1);
	rtr_config_init(&cfg);
	assert_int_equal(cfg.ring_bytes, 64 << 10);
	unsetenv("RINGTRACE_RING_KB");
	unsetenv("RINGTRACE_ON_FULL");
	unsetenv("RINGTRACE_FLUSH_MS");
	unsetenv("RINGTRACE_IO");
	unsetenv("RINGTRACE_CLOCK");
	unsetenv("RINGTRACE_FILE");

	make_path("badcfg");
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.ring_bytes = 100; /* below the 4 KiB minimum */
	assert_int_equal(rtr_start(&cfg), -EINVAL);
	cfg.ring_bytes = 1 << 16;
	cfg.path = "/tmp/bad-%q.json";
	assert_int_equal(rtr_start(&cfg), -EINVAL);
	cfg.path = path;
	cfg.io = 42;
	assert_int_equal(rtr_start(&cfg), -EINVAL);
	assert_int_equal(access(path, F_OK), -1);
}

/* RINGTRACE_STOP_TIMEOUT_MS: parsed, a bad value keeps 10000, and
 * a value past the maximum set in code is -EINVAL. */
static void stop_timeout_comes_from_the_environment_and_is_checked(void **state)
{
	(void)state;
	struct rtr_config cfg;

	unsetenv("RINGTRACE_STOP_TIMEOUT_MS");
	rtr_config_init(&cfg);
	assert_int_equal(cfg.stop_timeout_ms, 10000);
	setenv("RINGTRACE_STOP_TIMEOUT_MS", "250", 1);
	rtr_config_init(&cfg);
	assert_int_equal(cfg.stop_timeout_ms, 250);
	setenv("RINGTRACE_STOP_TIMEOUT_MS", "0", 1);
	rtr_config_init(&cfg);
	assert_int_equal(cfg.stop_timeout_ms, 0); /* no limit */
	setenv("RINGTRACE_STOP_TIMEOUT_MS", "soon", 1);
	rtr_config_init(&cfg);
	assert_int_equal(cfg.stop_timeout_ms, 10000);
	setenv("RINGTRACE_STOP_TIMEOUT_MS", "3600001", 1);
	rtr_config_init(&cfg);
	assert_int_equal(cfg.stop_timeout_ms, 10000);
	unsetenv("RINGTRACE_STOP_TIMEOUT_MS");

	make_path("badtimeout");
	cfg.path = path;
	cfg.stop_timeout_ms = 3600001;
	assert_int_equal(rtr_start(&cfg), -EINVAL);
	assert_int_equal(access(path, F_OK), -1);
}

static void dev_null_takes_everything(void **state)
{
	(void)state;
	struct rtr_stats st;

	tu_start("/dev/null", RTR_IO_AUTO, RTR_ON_FULL_BLOCK, 1 << 16);
	for (int i = 0; i < 100000; i++)
		rtr_counter_i64("null", "seq", i);
	assert_int_equal(rtr_flush(), 0);
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.write_error, 0);
	assert_int_equal(st.events_recorded, 100000);
	assert_int_equal(st.events_written, 100000);
	assert_int_equal(st.events_dropped, 0);
}

static void path_pattern_expands_pid_and_percent(void **state)
{
	(void)state;
	struct rtr_config cfg;
	char pattern[4096], expect[4096];

	snprintf(pattern, sizeof(pattern), "%s/pattern-%%p-%%%%.json", tu_tmpdir());
	snprintf(expect, sizeof(expect), "%s/pattern-%d-%%.json", tu_tmpdir(), (int)getpid());
	rtr_config_init(&cfg);
	cfg.path = pattern;
	assert_int_equal(rtr_start(&cfg), 0);
	assert_int_equal(rtr_stop(), 0);
	assert_int_equal(access(expect, F_OK), 0);
	unlink(expect);
}

/* The page cache window the start marker of a file written with cfg reports. */
static int64_t reported_cache_mb(struct rtr_config *cfg)
{
	struct tt_trace t = {0};

	cfg->path = path;
	assert_int_equal(rtr_start(cfg), 0);
	assert_int_equal(rtr_stop(), 0);
	load(&t);
	const struct tt_arg *mb = tt_arg(&t.ev[0], "cache_mb");
	assert_non_null(mb);
	int64_t v = mb->i;
	tt_free(&t);
	unlink(path);
	return v;
}

static void page_cache_window_is_configured_and_reported(void **state)
{
	(void)state;
	struct rtr_config cfg;

	make_path("cache");
	rtr_config_init(&cfg);
	assert_int_equal(cfg.cache_mb, 64);
	assert_int_equal(reported_cache_mb(&cfg), 64);
	cfg.cache_mb = 20; /* whole 8 MiB steps */
	assert_int_equal(reported_cache_mb(&cfg), 24);
	cfg.cache_mb = 0;
	assert_int_equal(reported_cache_mb(&cfg), 0);
	cfg.cache_mb = (1u << 20) + 1;
	assert_int_equal(rtr_start(&cfg), -EINVAL);

	static const struct {
		const char *env;
		unsigned mb;
	} cases[] = {{"0", 0}, {"1048576", 1048576}, {"plenty", 64}, {"1048577", 64}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setenv("RINGTRACE_CACHE_MB", cases[i].env, 1);
		rtr_config_init(&cfg);
		assert_int_equal(cfg.cache_mb, cases[i].mb);
	}
	unsetenv("RINGTRACE_CACHE_MB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_event_kind_comes_back_with_exact_values),
		cmocka_unit_test(threads_record_in_order_with_exact_values),
		cmocka_unit_test(io_uring_and_write_give_identical_events),
		cmocka_unit_test(flush_puts_earlier_events_in_the_file),
		cmocka_unit_test(flush_returns_while_another_thread_keeps_recording),
		cmocka_unit_test(restart_writes_a_second_complete_file),
		cmocka_unit_test(arguments_past_the_limit_are_cut_and_counted),
		cmocka_unit_test(exit_without_stop_still_finishes_the_file),
		cmocka_unit_test(each_slice_is_one_complete_event_at_its_end),
		cmocka_unit_test(slices_that_end_together_end_at_one_double),
		cmocka_unit_test(tsc_clock_keeps_times_ordered_and_explicit_times_exact),
		cmocka_unit_test(calls_before_start_are_ignored),
		cmocka_unit_test(start_refuses_a_symlink_at_the_path),
		cmocka_unit_test(stop_timeout_comes_from_the_environment_and_is_checked),
		cmocka_unit_test(bad_config_is_refused_and_bad_environment_keeps_defaults),
		cmocka_unit_test(dev_null_takes_everything),
		cmocka_unit_test(path_pattern_expands_pid_and_percent),
		cmocka_unit_test(page_cache_window_is_configured_and_reported),
	};
	return cmocka_run_group_tests_name("recorder", tests, NULL, NULL);
}
