/* SPDX-License-Identifier: MIT */
/*
 * Polls folded by the writer (src/writer/polls.c): records with RTR__F_POLL
 * (rtr__poll_args(), as the MPI module records a test or probe call that completed
 * nothing) become one slice per run on a thread, with exact times and arguments.
 * Each case records through a real session (clock CLOCK_MONOTONIC, so ticks are the
 * nanoseconds of the trace clock and every time is known) and parses the trace back:
 * the values of the folded slice; a run split by any other event; a run that spans
 * drain passes; a run cut by rtr_flush(), a rotation, a flight snapshot (which shows
 * it and keeps folding), a thread's exit and the stop; Perfetto's format.
 */
#include "common/names.h"
#include "ring/ring.h"
#include "test_util.h"

#include <ringtrace.h>

#include <pthread.h>
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

static const char CAT[] = "mpi";
static const char TESTANY[] = "MPI_Testany", TEST[] = "MPI_Test", IPROBE[] = "MPI_Iprobe";

static char path[4096];

static void config(struct rtr_config *cfg, const char *name, const char *ext)
{
	tu_own_file(path, sizeof(path), "polls", name, ext);
	rtr_config_init(cfg);
	cfg->path = path;
	cfg->clock = RTR_CLOCK_MONOTONIC;
	cfg->on_full = RTR_ON_FULL_BLOCK;
}

static void start(const char *name)
{
	struct rtr_config cfg;

	config(&cfg, name, ".json");
	assert_int_equal(rtr_start(&cfg), 0);
}

/* A poll of `name` from t for dur ns (ticks: the clock is CLOCK_MONOTONIC), with
 * `count` requests (-1: none, as a probe's). */
static void poll(const char *name, uint64_t t, uint64_t dur, int count)
{
	struct rtr_arg a = RTR_ARG_I64("count", count);

	rtr__poll_args(CAT, name, t, dur, &a, count >= 0 ? 1 : 0);
}

/* Until the recorder's clock has passed t: what is recorded next comes after it. */
static void after(uint64_t t)
{
	while (rtr_now_ns() <= t)
		;
}

/* Records of this thread's ring the writer has not read yet (its head is ours). */
static uint32_t unread(void)
{
	struct rtr__ring *r = rtr__tls_ring;

	/* A3: pairs with R3 in rtr__ring_consume(); the writer has read those records */
	return r->head - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
}

/* Until the writer has read every record of this thread's ring (a drain pass that
 * left the polls pending), at most 10 s. */
static void wait_drained(void)
{
	for (int i = 0; i < 10000 && unread() != 0; i++)
		nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
	assert_int_equal(unread(), 0);
}

/* The origin of a loaded trace (its start marker's origin_monotonic_ns). */
static uint64_t origin_of(const struct tt_trace *t)
{
	const struct tt_arg *a = tt_arg(&t->ev[0], "origin_monotonic_ns");

	assert_non_null(a);
	return strtoull(a->s, NULL, 10);
}

/* What a folded slice must say. */
struct want {
	const char *name;
	uint64_t ts, dur;	       /* absolute ns */
	int64_t polls, count, poll_ns; /* count -1: no such argument */
	const char *names[3];
	int64_t calls[3];
};

/* e is the folded slice w, every value and the arguments' order. */
static void check_fold(const struct tt_event *e, uint64_t origin, const struct want *w)
{
	size_t k = 0;

	assert_string_equal(e->ph, "X");
	assert_true(tu_is(e->name, w->name));
	assert_true(tu_is(e->cat, CAT));
	assert_int_equal(e->tid, gettid());
	assert_int_equal(e->ts_ns, w->ts - origin);
	assert_int_equal(e->dur_ns, w->dur);
	assert_string_equal(e->args[k].key, "polls");
	assert_int_equal(e->args[k++].i, w->polls);
	if (w->count >= 0) {
		assert_string_equal(e->args[k].key, "count");
		assert_int_equal(e->args[k++].i, w->count);
	}
	for (size_t i = 0; i < 3 && w->names[i] != NULL; i++) {
		assert_string_equal(e->args[k].key, w->names[i]);
		assert_int_equal(e->args[k++].i, w->calls[i]);
	}
	assert_string_equal(e->args[k].key, "poll_ns");
	assert_int_equal(e->args[k++].i, w->poll_ns);
	assert_int_equal(e->nargs, k);
}

/* The events of t other than markers and metadata, into ev (at most 64). */
static size_t events_of(const struct tt_trace *t, const struct tt_event **ev)
{
	return tu_events_of(t, ev, 64);
}

/* The events of t other than markers, metadata and the slice "outer" (the app's, around
 * the polls, which a writer may write as a B and an E or as one X), into ev. */
static size_t inner_events(const struct tt_trace *t, const struct tt_event **ev)
{
	const struct tt_event *all[64];
	size_t n = tu_events_of(t, all, 64), k = 0;

	for (size_t i = 0; i < n; i++)
		if (!tu_is(all[i]->name, "outer"))
			ev[k++] = all[i];
	return k;
}

/* The slice "outer" of t: where it begins and ends (an X, or a B and its E), and the
 * event that carries `mark` ("cut", "continued", "open"; NULL: none wanted). */
static void outer_of(const struct tt_trace *t, uint64_t *begin, uint64_t *end, const char *mark,
		     const struct tt_event **marked)
{
	int b = 0, e = 0;

	*marked = NULL;
	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *x = &t->ev[i];
		if (!tu_is(x->name, "outer"))
			continue;
		if (mark != NULL && tt_arg(x, mark) != NULL)
			*marked = x;
		if (strcmp(x->ph, "X") == 0) {
			*begin = x->ts_ns;
			*end = x->ts_ns + x->dur_ns;
			b++, e++;
		} else if (strcmp(x->ph, "B") == 0) {
			*begin = x->ts_ns;
			b++;
		} else if (strcmp(x->ph, "E") == 0) {
			*end = x->ts_ns;
			e++;
		}
	}
	assert_int_equal(b, 1);
	assert_int_equal(e, 1);
	if (mark != NULL)
		assert_non_null(*marked);
}

static void load(const char *p, struct tt_trace *t)
{
	if (tt_load(p, TT_CHECK_ESCAPES, t) != 0)
		fail_msg("%s: %s", p, t->error);
	assert_true(t->complete);
}

/* Four polls of two names, then any other event: one slice "MPI polls" from the first
 * start to the last end, its calls, the most requests, the calls per name in the
 * order first seen, and the time inside them; one name alone names the slice; a run
 * of probes has no count. */
static void polls_fold_into_one_slice_with_exact_values(void **state)
{
	struct tt_trace t;
	const struct tt_event *ev[64];

	(void)state;
	start("values");
	uint64_t t0 = rtr_now_ns() + 1000;
	poll(TESTANY, t0, 100, 3);
	poll(TEST, t0 + 200, 50, 1);
	poll(TESTANY, t0 + 300, 70, 3);
	poll(TESTANY, t0 + 500, 30, 5);
	rtr_instant("app", "between");
	poll(TESTANY, t0 + 1000, 10, 2);
	poll(TESTANY, t0 + 1100, 20, 2);
	rtr_instant("app", "between");
	poll(IPROBE, t0 + 2000, 40, -1);
	poll(IPROBE, t0 + 2100, 45, -1);
	poll(IPROBE, t0 + 2200, 5, -1);
	assert_int_equal(rtr_stop(), 0);

	load(path, &t);
	uint64_t origin = origin_of(&t);
	size_t n = events_of(&t, ev);
	assert_int_equal(n, 5);
	struct want mixed = {RTR__POLLS_MIXED, t0, 530, 4, 5, 250, {TESTANY, TEST}, {3, 1}};
	check_fold(ev[0], origin, &mixed);
	assert_true(tu_is(ev[1]->name, "between"));
	struct want one = {TESTANY, t0 + 1000, 120, 2, 2, 30, {TESTANY}, {2}};
	check_fold(ev[2], origin, &one);
	assert_true(tu_is(ev[3]->name, "between"));
	struct want probes = {IPROBE, t0 + 2000, 205, 3, -1, 90, {IPROBE}, {3}};
	check_fold(ev[4], origin, &probes);
	/* the end marker counts every poll recorded as written */
	assert_int_equal(tu_arg_int(tu_end_marker(&t), "events"), 9 + 2);
	tt_free(&t);
}

/* A run that the writer reads in several passes (each pass finds the ring empty
 * after it) is one slice, ended by the next other event; a B, an E and a counter end
 * runs too. */
static void run_across_drain_passes_stays_one_slice(void **state)
{
	struct tt_trace t;
	const struct tt_event *ev[64];

	(void)state;
	start("passes");
	rtr_begin("app", "outer");
	uint64_t t0 = rtr_now_ns() + 1000;
	for (int i = 0; i < 3; i++) {
		poll(TEST, t0 + 100 * (uint64_t)i, 10, 1);
		wait_drained();
	}
	rtr_counter_i64("app", "c", 7);
	poll(TEST, t0 + 500, 10, 1);
	after(t0 + 510);
	rtr_end("app", "outer");
	assert_int_equal(rtr_stop(), 0);

	load(path, &t);
	uint64_t origin = origin_of(&t), begin, end;
	const struct tt_event *none;
	size_t n = inner_events(&t, ev);
	assert_int_equal(n, 3);
	struct want three = {TEST, t0, 210, 3, 1, 30, {TEST}, {3}};
	check_fold(ev[0], origin, &three);
	assert_string_equal(ev[1]->ph, "C");
	struct want last = {TEST, t0 + 500, 10, 1, 1, 10, {TEST}, {1}};
	check_fold(ev[2], origin, &last);
	outer_of(&t, &begin, &end, NULL, &none); /* around the polls */
	assert_true(begin <= t0 - origin && end >= t0 + 510 - origin);
	tt_free(&t);
}

/* rtr_flush() writes the run so far (every event recorded before it is in the
 * file): the polls after it are the next slice, which the stop writes. */
static void flush_and_stop_end_a_run(void **state)
{
	struct tt_trace t;
	const struct tt_event *ev[64];

	(void)state;
	start("flush");
	uint64_t t0 = rtr_now_ns() + 1000;
	poll(TESTANY, t0, 10, 4);
	poll(TESTANY, t0 + 100, 10, 4);
	assert_int_equal(rtr_flush(), 0);
	load(path, &t); /* the provisional file has it already */
	const struct tt_event *before[64];
	size_t n = tu_events_of(&t, before, 64);
	assert_int_equal(n, 1);
	assert_int_equal(tu_arg_int(before[0], "polls"), 2);
	tt_free(&t);
	poll(TESTANY, t0 + 200, 10, 4);
	assert_int_equal(rtr_stop(), 0);

	load(path, &t);
	uint64_t origin = origin_of(&t);
	n = events_of(&t, ev);
	assert_int_equal(n, 2);
	struct want first = {TESTANY, t0, 110, 2, 4, 20, {TESTANY}, {2}};
	check_fold(ev[0], origin, &first);
	struct want second = {TESTANY, t0 + 200, 10, 1, 4, 10, {TESTANY}, {1}};
	check_fold(ev[1], origin, &second);
	tt_free(&t);
}

/* A segment that ends (rtr_snapshot() with rotation) writes the run so far before the
 * lines that end the open slices, which end after it; the next segment begins them
 * again there and holds the rest of the polls. */
static void rotation_ends_a_run_in_its_segment(void **state)
{
	struct rtr_config cfg;
	struct tt_trace t;
	const struct tt_event *ev[64];
	char seg[2][4096];

	(void)state;
	config(&cfg, "rotation", "-%s.json");
	cfg.max_mb = 64;
	for (int s = 0; s < 2; s++) {
		snprintf(seg[s], sizeof(seg[s]), "%.*s-%04d.json", (int)(strlen(path) - 8), path,
			 s);
		unlink(seg[s]);
	}
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_begin("app", "outer");
	uint64_t t0 = rtr_now_ns() + 1000;
	poll(TESTANY, t0, 10, 1);
	poll(TEST, t0 + 100, 10, 1);
	assert_int_equal(rtr_snapshot(NULL), 0); /* the end of segment 0 */
	poll(TEST, t0 + 200, 10, 1);
	after(t0 + 210);
	rtr_end("app", "outer");
	assert_int_equal(rtr_stop(), 0);

	load(seg[0], &t);
	uint64_t origin = origin_of(&t), begin, end;
	const struct tt_event *mark;
	size_t n = inner_events(&t, ev);
	assert_int_equal(n, 1);
	struct want first = {RTR__POLLS_MIXED, t0, 110, 2, 1, 20, {TESTANY, TEST}, {1, 1}};
	check_fold(ev[0], origin, &first);
	outer_of(&t, &begin, &end, "cut", &mark);
	assert_true(begin <= t0 - origin);
	/* cut after the polls, and 1 ns for the level it holds open */
	assert_int_equal(end, t0 + 110 - origin + 1);
	tt_free(&t);

	load(seg[1], &t);
	n = inner_events(&t, ev);
	assert_int_equal(n, 1);
	struct want second = {TEST, t0 + 200, 10, 1, 1, 10, {TEST}, {1}};
	check_fold(ev[0], origin, &second);
	outer_of(&t, &begin, &end, "continued", &mark);
	assert_int_equal(begin, t0 + 110 - origin); /* begun again there */
	assert_true(end >= t0 + 210 - origin);
	tt_free(&t);
	unlink(seg[0]);
	unlink(seg[1]);
}

/* A flight snapshot shows the run so far, the slice open around it ending after it,
 * and leaves it pending: the last snapshot has the whole run as one slice. */
static void flight_snapshot_shows_the_run_and_keeps_folding(void **state)
{
	struct rtr_config cfg;
	struct tt_trace t;
	const struct tt_event *ev[64];
	char snap[2][4096];

	(void)state;
	config(&cfg, "flight", "-%s.json");
	cfg.mode = RTR_MODE_FLIGHT;
	cfg.flight_mb = 1;
	for (int s = 0; s < 2; s++) {
		snprintf(snap[s], sizeof(snap[s]), "%.*s-%04d.json", (int)(strlen(path) - 8), path,
			 s);
		unlink(snap[s]);
	}
	assert_int_equal(rtr_start(&cfg), 0);
	rtr_begin("app", "outer");
	uint64_t t0 = rtr_now_ns() + 1000;
	poll(TESTANY, t0, 10, 2);
	poll(TESTANY, t0 + 100, 10, 2);
	assert_int_equal(rtr_snapshot(NULL), 0);
	poll(TESTANY, t0 + 200, 10, 2);
	after(t0 + 210);
	rtr_end("app", "outer");
	assert_int_equal(rtr_stop(), 0); /* the last snapshot */

	load(snap[0], &t);
	uint64_t origin = origin_of(&t), begin, end;
	const struct tt_event *mark;
	size_t n = inner_events(&t, ev);
	assert_int_equal(n, 1);
	struct want shown = {TESTANY, t0, 110, 2, 2, 20, {TESTANY}, {2}};
	check_fold(ev[0], origin, &shown);
	outer_of(&t, &begin, &end, "open", &mark);
	assert_true(begin <= t0 - origin);
	/* open, after the polls shown, and 1 ns for the level it holds open */
	assert_int_equal(end, t0 + 110 - origin + 1);
	tt_free(&t);

	load(snap[1], &t);
	n = inner_events(&t, ev);
	assert_int_equal(n, 1);
	struct want whole = {TESTANY, t0, 210, 3, 2, 30, {TESTANY}, {3}};
	check_fold(ev[0], origin, &whole);
	outer_of(&t, &begin, &end, NULL, &mark);
	assert_true(begin <= t0 - origin && end >= t0 + 210 - origin);
	tt_free(&t);
	unlink(snap[0]);
	unlink(snap[1]);
}

/* Whether the file at p holds text (in its first MiB). */
static int file_holds(const char *p, const char *text)
{
	static char buf[1 << 20];
	FILE *f = fopen(p, "r");
	size_t n;

	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, text) != NULL;
}

static uint64_t thread_t0;
static int thread_tid;

static void *poll_and_exit(void *arg)
{
	(void)arg;
	thread_tid = gettid();
	poll(TESTANY, thread_t0, 10, 1);
	poll(TESTANY, thread_t0 + 100, 10, 1);
	return NULL;
}

/* A thread that exits while polling: its ring is freed once drained, its run
 * written first. */
static void thread_exit_writes_its_last_run(void **state)
{
	struct tt_trace t;
	pthread_t th;

	(void)state;
	start("exit");
	thread_t0 = rtr_now_ns() + 1000;
	assert_int_equal(pthread_create(&th, NULL, poll_and_exit, NULL), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	/* The writer frees the ring once drained, and writes its run first: the file
	 * holds it before the stop (the writer writes what it has every 100 ms). */
	int written = 0;
	for (int i = 0; i < 10000 && !written; i++) {
		written = file_holds(path, "\"polls\":2,");
		if (!written)
			nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
	}
	assert_true(written);
	assert_int_equal(rtr_stop(), 0);
	load(path, &t);
	size_t found = 0;
	for (size_t i = 0; i < t.n; i++) {
		const struct tt_event *e = &t.ev[i];
		if (!tu_is(e->name, TESTANY))
			continue;
		assert_int_equal(e->tid, thread_tid);
		assert_int_equal(e->ts_ns, thread_t0 - origin_of(&t));
		assert_int_equal(e->dur_ns, 110);
		assert_int_equal(tu_arg_int(e, "polls"), 2);
		assert_int_equal(tu_arg_int(e, "poll_ns"), 20);
		found++;
	}
	assert_int_equal(found, 1);
	tt_free(&t);
}

/* The Perfetto format writes the same slice: converted back to JSON, the same
 * values. */
static void perfetto_writes_the_same_slice(void **state)
{
	struct rtr_config cfg;
	struct tt_trace t;
	const struct tt_event *ev[64];
	char json[4096];

	(void)state;
#ifndef RTR_TOOL
	skip(); /* built without the tools */
#define RTR_TOOL ""
#endif
	config(&cfg, "perfetto", ".pftrace");
	assert_int_equal(rtr_start(&cfg), 0);
	uint64_t t0 = rtr_now_ns() + 1000;
	poll(TESTANY, t0, 100, 3);
	poll(TEST, t0 + 200, 50, 1);
	rtr_instant("app", "after");
	assert_int_equal(rtr_stop(), 0);

	tu_own_file(json, sizeof(json), "polls", "perfetto-json", ".json");
	char cmd[9000];
	snprintf(cmd, sizeof(cmd), "%s convert --to json -o %s %s", RTR_TOOL, json, path);
	assert_int_equal(system(cmd), 0);
	load(json, &t);
	uint64_t origin = origin_of(&t);
	size_t n = events_of(&t, ev);
	assert_true(n >= 2);
	struct want w = {RTR__POLLS_MIXED, t0, 250, 2, 3, 150, {TESTANY, TEST}, {1, 1}};
	check_fold(ev[0], origin, &w);
	tt_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(polls_fold_into_one_slice_with_exact_values, tu_teardown),
		cmocka_unit_test_teardown(run_across_drain_passes_stays_one_slice, tu_teardown),
		cmocka_unit_test_teardown(flush_and_stop_end_a_run, tu_teardown),
		cmocka_unit_test_teardown(rotation_ends_a_run_in_its_segment, tu_teardown),
		cmocka_unit_test_teardown(flight_snapshot_shows_the_run_and_keeps_folding,
					  tu_teardown),
		cmocka_unit_test_teardown(thread_exit_writes_its_last_run, tu_teardown),
		cmocka_unit_test_teardown(perfetto_writes_the_same_slice, tu_teardown),
	};

	tu_filter_from_env();
	unsetenv("RINGTRACE_CLOCK_OFFSET_NS");
	return cmocka_run_group_tests_name("polls", tests, NULL, NULL);
}
