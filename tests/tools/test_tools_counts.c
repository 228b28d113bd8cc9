/* SPDX-License-Identifier: MIT */
/*
 * `check`, `stats` and `merge` count a file's events and threads alike, by the one
 * definition of tools/lib/threads.h: events are the objects of the event array (M
 * events and markers included), threads the distinct (pid, tid) of those events, a
 * missing tid being the pid and a missing pid 0.
 *
 * Each file goes through the three tools; the numbers they print must be equal to
 * one another and, where the test knows them, to the ones worked out here: a trace
 * the library writes (a thread that only names itself included), the foreign files of
 * tests/tools/data, and a generated file with a thread that has only an M event,
 * events without tid or pid, and array elements that are not objects.
 */
#include <ringtrace.h>

#include "json_tree.h"
#include "tool_test.h"
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

#define WHAT "(every event object, M included; distinct pid/tid)"

struct counts {
	unsigned long long events, threads;
};

/* "... N events on T threads (WHAT)" somewhere in text: the numbers. */
static struct counts counts_in(const char *text, const char *tool)
{
	const char *p = strstr(text, " events on ");
	struct counts c;
	char what[128];

	if (p == NULL)
		fail_msg("%s says no counts:\n%s", tool, text);
	while (p > text && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (sscanf(p, "%llu events on %llu thread%*[s] %127[^)])", &c.events, &c.threads, what) !=
		    3 &&
	    sscanf(p, "%llu events on %llu thread %127[^)])", &c.events, &c.threads, what) != 3)
		fail_msg("%s's counts unreadable: %s", tool, p);
	/* It says what it counts. */
	assert_true(tool_has(p, WHAT));
	return c;
}

static struct counts check_counts(const char *path)
{
	struct tool_run r;
	struct counts c;

	tool_run(&r, NULL, "check", "-q", path, NULL);
	if (r.status != 0 && r.status != 1)
		fail_msg("check %s: exit %d\n%s", path, r.status, r.err);
	c = counts_in(r.out, "check");
	tool_run_free(&r);
	return c;
}

static struct counts stats_counts(const char *path)
{
	struct tool_run r;
	struct counts c, j;
	yajl_val doc;

	tool_run(&r, NULL, "stats", path, NULL);
	assert_int_equal(r.status, 0);
	c = counts_in(r.out, "stats");
	tool_run_free(&r);
	/* --json says the same */
	tool_run(&r, NULL, "stats", "--json", path, NULL);
	assert_int_equal(r.status, 0);
	doc = jt_parse(r.out, "stats --json");
	j.events = (unsigned long long)jt_int(doc, "events");
	j.threads = (unsigned long long)jt_int(doc, "thread_count");
	assert_string_equal(jt_str(doc, "counts"),
			    "every event object, M included; distinct pid/tid");
	assert_int_equal(j.events, c.events);
	assert_int_equal(j.threads, c.threads);
	yajl_tree_free(doc);
	tool_run_free(&r);
	return c;
}

static struct counts merge_counts(const char *path)
{
	const char *out = tool_tmp("counts.merged.json");
	struct tool_run r;
	struct counts c;

	tool_run(&r, NULL, "merge", "-o", out, path, NULL);
	if (r.status != 0)
		fail_msg("merge %s: exit %d\n%s", path, r.status, r.err);
	c = counts_in(strstr(r.err, "wrote "), "merge");
	tool_run_free(&r);
	unlink(out);
	return c;
}

/* The three tools agree on path; want (when not NULL) is what they must say. */
static void expect_agree(const char *path, const struct counts *want)
{
	struct counts ch = check_counts(path), st = stats_counts(path), me = merge_counts(path);

	if (ch.events != st.events || ch.events != me.events || ch.threads != st.threads ||
	    ch.threads != me.threads)
		fail_msg("%s: check %llu events on %llu threads, stats %llu on %llu, merge %llu on "
			 "%llu",
			 path, ch.events, ch.threads, st.events, st.threads, me.events, me.threads);
	if (want != NULL) {
		assert_int_equal(ch.events, want->events);
		assert_int_equal(ch.threads, want->threads);
	}
}

/* The events and distinct (pid, tid) of a strict bare-array file, worked out from
 * tests/support/trace_read.c (a parser that is not the tools'). */
static int count_one(const struct tt_event *ev, void *ctx)
{
	struct {
		struct counts c;
		long long pt[64][2];
	} *k = ctx;
	long long pid = ev->has_pid ? (long long)ev->pid : 0;
	long long tid = ev->has_tid ? (long long)ev->tid : pid;
	unsigned long long i;

	k->c.events++;
	for (i = 0; i < k->c.threads; i++) {
		if (k->pt[i][0] == pid && k->pt[i][1] == tid)
			return 0;
	}
	assert_true(k->c.threads < 64);
	k->pt[k->c.threads][0] = pid;
	k->pt[k->c.threads][1] = tid;
	k->c.threads++;
	return 0;
}

static struct counts reference_counts(const char *path)
{
	struct {
		struct counts c;
		long long pt[64][2];
	} k = {{0, 0}, {{0}}};
	struct tt_trace info;

	if (tt_foreach(path, 0, count_one, &k, &info) != 0)
		fail_msg("%s", info.error);
	return k.c;
}

static void *named_only(void *arg)
{
	(void)arg;
	rtr_thread_name("idle"); /* a thread with nothing but its name */
	return NULL;
}

static void *worker(void *arg)
{
	(void)arg;
	rtr_thread_name("worker");
	for (int i = 0; i < 50; i++) {
		rtr_begin("app", "step");
		rtr_instant("app", "tick");
		rtr_end("app", "step");
	}
	return NULL;
}

static void library_trace_counts_agree(void **state)
{
	const char *path = tool_tmp("counts.recorded.json");
	struct rtr_config cfg;
	pthread_t th[3];
	struct counts want;

	(void)state;
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_thread_name("main");
	assert_int_equal(pthread_create(&th[0], NULL, worker, NULL), 0);
	assert_int_equal(pthread_create(&th[1], NULL, worker, NULL), 0);
	assert_int_equal(pthread_create(&th[2], NULL, named_only, NULL), 0);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	rtr_complete("app", "main", rtr_now_ns(), 1000);
	assert_int_equal(rtr_stop(), 0);
	want = reference_counts(path);
	assert_true(want.threads >= 3);
	expect_agree(path, &want);
	unlink(path);
}

static void foreign_data_files_agree(void **state)
{
	static const char *const files[] = {
		"data/good.json",
		"data/good.object.json",
		"data/cut_midline.json",
		"data/provisional.json",
		"data/cut_midline.repaired.json",
		"corpus/pid_tid.json",
		"corpus/metadata.json",
		"corpus/flows.json",
	};
	const struct counts good = {15, 3};

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		expect_agree(tool_data(files[i]), i < 2 ? &good : NULL);
	/* A strict file's numbers are the reference's too. */
	{
		struct counts want = reference_counts(tool_data("data/good.json"));

		assert_int_equal(want.events, good.events);
		assert_int_equal(want.threads, good.threads);
	}
}

/* A thread with only an M event, an event without tid (its thread is the pid's), one
 * without pid (pid 0), and elements of the array that are not objects (not events). */
static void threads_of_m_events_and_defaults_count(void **state)
{
	const char *path = tool_tmp("counts.foreign.json");
	static const char text[] =
		"[\n"
		"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":9,\"args\":{\"name\":"
		"\"m\"}},\n"
		"{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":2},\n"
		"{\"ph\":\"X\",\"name\":\"b\",\"ts\":1,\"dur\":2,\"pid\":1},\n"
		"{\"ph\":\"X\",\"name\":\"c\",\"ts\":4,\"dur\":2,\"pid\":1,\"tid\":1},\n"
		"{\"ph\":\"i\",\"s\":\"g\",\"name\":\"d\",\"ts\":5,\"tid\":3},\n"
		"7,\n"
		"\"not an event\",\n"
		"{\"ph\":\"C\",\"name\":\"e\",\"ts\":6,\"pid\":2,\"tid\":2,\"args\":{\"v\":1}}\n"
		"]\n";
	/* events: 6 objects; threads: 1/9, 1/2, 1/1 (b and c), 0/3, 2/2 */
	const struct counts want = {6, 5};

	(void)state;
	tool_write(path, text, sizeof(text) - 1);
	expect_agree(path, &want);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(library_trace_counts_agree),
		cmocka_unit_test(foreign_data_files_agree),
		cmocka_unit_test(threads_of_m_events_and_defaults_count),
	};

	return cmocka_run_group_tests_name("tools_counts", tests, NULL, NULL);
}
