/* SPDX-License-Identifier: MIT */
/*
 * Producers at full speed into tiny rings, the file streamed back and every event
 * accounted for.
 *
 * Block mode: nothing is lost. Every thread's sequence is complete and in order,
 * B/E pairs balance, the stats and the end marker give the exact counts.
 *
 * Drop mode: written + dropped == recorded, exactly. Every event carries its thread's
 * sequence number, so the file shows which ones are missing; the missing ones of each
 * thread are exactly the drops the writer's "ringtrace: dropped" counter track gives
 * that thread, and they add up to the stats and the end marker.
 *
 * Sizes scale with RTR_TEST_SCALE (a factor, default 1; 0.25 under a sanitizer).
 */
#include <ringtrace.h>

#include "test_util.h"
#include "trace_read.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define NPROD	  2
#define TINY_RING 4096
#define CAT	  "stress"

static char path[4096]; /* the running test's trace */

/* The running test's trace, removed by the teardown (tu_release()): they run to
 * 200 MB (RTR_TEST_KEEP=1 keeps it for a look). */
static void make_path(const char *name)
{
	tu_own_file(path, sizeof(path), "stress", name, ".json");
}

/* Byte offset where the last event line (the end marker) begins in a clean file. */
static uint64_t end_line_offset(const char *p)
{
	char tail[4096];
	uint64_t size = tu_file_size(p);
	size_t n = size < sizeof(tail) ? (size_t)size : sizeof(tail);
	int fd = open(p, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, tail, n, (off_t)(size - n)), (ssize_t)n);
	close(fd);
	assert_true(n >= 4);
	assert_memory_equal(tail + n - 3, "\n]\n", 3);
	size_t i = n - 3;
	while (i > 0 && tail[i - 1] != '\n')
		i--;
	assert_true(i > 0);
	return size - n + i;
}

/* ------------------------------------------------------------------------- */
/* Producers                                                                  */

struct producer {
	pthread_t th;
	int idx;
	int drop_pattern; /* every event carries a seq (drop test) */
	uint64_t n;	  /* iterations (block) or events (drop) */
	int64_t tid;
};

static pthread_barrier_t go;

/* Block pattern, 4 events per iteration: C seq, B iter, i mark {seq}, E iter. */
static void block_pattern(struct producer *p)
{
	char name[32];

	snprintf(name, sizeof(name), "stress-%d", p->idx);
	rtr_thread_name(name);
	for (uint64_t seq = 0; seq < p->n; seq++) {
		struct rtr_arg a[] = {RTR_ARG_I64("seq", seq)};
		rtr_counter_i64(CAT, "seq", (int64_t)seq);
		rtr_begin(CAT, "iter");
		rtr_instant_args(CAT, "mark", a, 1);
		rtr_end(CAT, "iter");
	}
}

/* Drop pattern: event seq is a counter (even) or an instant with arg seq (odd). */
static void drop_pattern(struct producer *p)
{
	for (uint64_t seq = 0; seq < p->n; seq++) {
		if ((seq & 1) == 0) {
			rtr_counter_i64(CAT, "seq", (int64_t)seq);
		} else {
			struct rtr_arg a[] = {RTR_ARG_I64("seq", seq)};
			rtr_instant_args(CAT, "mark", a, 1);
		}
	}
}

static void *producer_main(void *arg)
{
	struct producer *p = arg;

	p->tid = gettid();
	pthread_barrier_wait(&go);
	if (p->drop_pattern)
		drop_pattern(p);
	else
		block_pattern(p);
	return NULL;
}

static void run_producers(struct producer *p, int drop, uint64_t n)
{
	assert_int_equal(pthread_barrier_init(&go, NULL, NPROD), 0);
	for (int i = 0; i < NPROD; i++) {
		p[i].idx = i;
		p[i].drop_pattern = drop;
		p[i].n = n;
		assert_int_equal(pthread_create(&p[i].th, NULL, producer_main, &p[i]), 0);
	}
	for (int i = 0; i < NPROD; i++)
		assert_int_equal(pthread_join(p[i].th, NULL), 0);
	pthread_barrier_destroy(&go);
}

/* ------------------------------------------------------------------------- */
/* The streaming check                                                        */

struct per_thread {
	int64_t tid;
	uint64_t next;	   /* block: next expected seq; drop: seq after the last seen */
	int phase;	   /* block: 0 C, 1 i, 2 X */
	uint64_t last_ts;  /* ts never goes backwards on one thread */
	uint64_t mark_ts;  /* block: the iteration's mark */
	int named;	   /* thread_name M lines with the right name */
	int started;	   /* a non-M event was seen */
	uint64_t present;  /* drop: sequence numbers in the file */
	uint64_t missing;  /* drop: gaps in the sequence */
	uint64_t drop_inc; /* drop: this thread's share of "ringtrace: dropped" */
};

struct end_args {
	int seen;
	int64_t events, dropped, full, large, io, threads, bytes;
};

struct walk {
	char err[512];
	uint64_t n;	/* events visited */
	uint64_t plain; /* events that are neither markers, metadata nor drop counters */
	uint64_t drop_counters;
	int64_t last_drop_total;
	struct per_thread t[NPROD];
	struct end_args end;
};

static int visit_frame(struct walk *w, const struct tt_event *e)
{
	TU_WALK_CHECK(w, e, e->has_pid && e->pid == getpid(), "pid %" PRId64, e->pid);
	TU_WALK_CHECK(w, e, !w->end.seen, "event after the end marker: %s", e->name);
	if (w->n == 0) {
		TU_WALK_CHECK(w, e,
			      tu_is(e->ph, "i") && tu_is(e->scope, "g") &&
				      tu_is(e->name, "ringtrace: start") && e->has_ts &&
				      e->ts_ns == 0,
			      "first event is not the start marker");
		const struct tt_arg *o = tt_arg(e, "origin_monotonic_ns");
		TU_WALK_CHECK(w, e,
			      o != NULL && o->type == TT_STRING && o->s_len > 0 &&
				      strspn(o->s, "0123456789") == o->s_len,
			      "origin_monotonic_ns is not a string of digits");
		return -1;
	}
	if (w->n == 1) {
		TU_WALK_CHECK(w, e, tu_is(e->ph, "M") && tu_is(e->name, "process_name"),
			      "second event is not process_name");
		return -1;
	}
	if (tu_is(e->name, "ringtrace: end")) {
		TU_WALK_CHECK(w, e, tu_is(e->ph, "i") && tu_is(e->scope, "g"), "end marker shape");
		w->end.seen = 1;
		w->end.events = tu_arg_int(e, "events");
		w->end.dropped = tu_arg_int(e, "dropped");
		w->end.full = tu_arg_int(e, "dropped_ring_full");
		w->end.large = tu_arg_int(e, "dropped_too_large");
		w->end.io = tu_arg_int(e, "dropped_io");
		w->end.threads = tu_arg_int(e, "threads");
		w->end.bytes = tu_arg_int(e, "bytes");
		return -1;
	}
	return 0;
}

static struct per_thread *thread_of(struct walk *w, int64_t tid)
{
	for (int i = 0; i < NPROD; i++)
		if (w->t[i].tid == tid)
			return &w->t[i];
	return NULL;
}

static int visit_block(const struct tt_event *e, void *ctx)
{
	struct walk *w = ctx;
	int r = visit_frame(w, e);

	w->n++;
	if (r != 0)
		return r > 0;
	struct per_thread *t = thread_of(w, e->tid);
	TU_WALK_CHECK(w, e, t != NULL, "%s %s from unknown tid %" PRId64, e->ph, e->name, e->tid);
	int idx = (int)(t - w->t);
	if (tu_is(e->ph, "M")) {
		char want[32];
		snprintf(want, sizeof(want), "stress-%d", idx);
		TU_WALK_CHECK(w, e, tu_is(e->name, "thread_name"), "unexpected M %s", e->name);
		const struct tt_arg *a = tt_arg(e, "name");
		TU_WALK_CHECK(w, e, a != NULL && tu_is(a->s, want), "thread_name is not %s", want);
		TU_WALK_CHECK(w, e, !t->started, "thread_name after the thread's events");
		t->named++;
		return 0;
	}
	TU_WALK_CHECK(w, e, t->named > 0, "event of tid %" PRId64 " before its thread_name",
		      e->tid);
	TU_WALK_CHECK(w, e, tu_is(e->cat, CAT), "cat");
	t->started = 1;
	w->plain++;
	/* per iteration: C seq, i mark, then iter's X, written at its E; a thread's
	 * times never go backwards, iter's X holds the mark and starts after the C */
	switch (t->phase) {
	case 0:
		TU_WALK_CHECK(w, e, tu_is(e->ph, "C") && tu_is(e->name, "seq"),
			      "want C seq, got %s %s", e->ph, e->name);
		TU_WALK_CHECK(w, e, tu_arg_int(e, "value") == (int64_t)t->next,
			      "thread %d: counter %" PRId64 ", want %" PRIu64, idx,
			      tu_arg_int(e, "value"), t->next);
		TU_WALK_CHECK(w, e, e->has_ts && e->ts_ns >= t->last_ts, "ts went backwards");
		t->last_ts = e->ts_ns;
		break;
	case 1:
		TU_WALK_CHECK(w, e,
			      tu_is(e->ph, "i") && tu_is(e->scope, "t") && tu_is(e->name, "mark"),
			      "want i mark");
		TU_WALK_CHECK(w, e, e->nargs == 1 && tu_arg_int(e, "seq") == (int64_t)t->next,
			      "thread %d: mark seq %" PRId64 ", want %" PRIu64, idx,
			      tu_arg_int(e, "seq"), t->next);
		TU_WALK_CHECK(w, e, e->has_ts && e->ts_ns >= t->last_ts, "ts went backwards");
		t->mark_ts = e->ts_ns;
		break;
	case 2:
		TU_WALK_CHECK(w, e,
			      tu_is(e->ph, "X") && tu_is(e->name, "iter") && e->nargs == 0 &&
				      e->has_dur,
			      "want X iter, got %s %s", e->ph, e->name);
		TU_WALK_CHECK(w, e,
			      e->ts_ns >= t->last_ts && e->ts_ns <= t->mark_ts &&
				      e->ts_ns + e->dur_ns >= t->mark_ts,
			      "X iter not between its counter and around its mark");
		t->last_ts = e->ts_ns + e->dur_ns;
		t->next++;
		w->plain++; /* its B and its E */
		break;
	}
	t->phase = (t->phase + 1) % 3;
	return 0;
}

static int visit_drop(const struct tt_event *e, void *ctx)
{
	struct walk *w = ctx;
	int r = visit_frame(w, e);

	w->n++;
	if (r != 0)
		return r > 0;
	struct per_thread *t = thread_of(w, e->tid);
	TU_WALK_CHECK(w, e, t != NULL, "%s %s from unknown tid %" PRId64, e->ph, e->name, e->tid);
	if (tu_is(e->ph, "M")) {
		TU_WALK_CHECK(w, e, tu_is(e->name, "thread_name"), "unexpected M %s", e->name);
		TU_WALK_CHECK(w, e, !t->started, "thread_name after the thread's events");
		t->named++;
		return 0;
	}
	if (tu_is(e->name, "ringtrace: dropped")) {
		int64_t total = tu_arg_int(e, "events");
		TU_WALK_CHECK(w, e, tu_is(e->ph, "C"), "drop counter is not a C event");
		TU_WALK_CHECK(w, e, total > w->last_drop_total,
			      "drop total %" PRId64 " after %" PRId64, total, w->last_drop_total);
		t->drop_inc += (uint64_t)(total - w->last_drop_total);
		w->last_drop_total = total;
		w->drop_counters++;
		return 0;
	}
	TU_WALK_CHECK(w, e, t->named > 0, "event before the thread's thread_name");
	TU_WALK_CHECK(w, e, tu_is(e->cat, CAT), "cat");
	int64_t seq;
	if (tu_is(e->ph, "C")) {
		TU_WALK_CHECK(w, e, tu_is(e->name, "seq"), "counter %s", e->name);
		seq = tu_arg_int(e, "value");
		TU_WALK_CHECK(w, e, seq >= 0 && (seq & 1) == 0, "counter seq %" PRId64, seq);
	} else {
		TU_WALK_CHECK(w, e, tu_is(e->ph, "i") && tu_is(e->name, "mark"), "%s %s", e->ph,
			      e->name);
		seq = tu_arg_int(e, "seq");
		TU_WALK_CHECK(w, e, seq >= 0 && (seq & 1) == 1, "mark seq %" PRId64, seq);
	}
	TU_WALK_CHECK(w, e, (uint64_t)seq >= t->next,
		      "seq %" PRId64 " not after %" PRIu64 " (order lost)", seq, t->next);
	TU_WALK_CHECK(w, e, e->has_ts && e->ts_ns >= t->last_ts, "ts went backwards");
	t->last_ts = e->ts_ns;
	t->missing += (uint64_t)seq - t->next;
	t->next = (uint64_t)seq + 1;
	t->present++;
	t->started = 1;
	w->plain++;
	return 0;
}

/* Only the end marker's args. */
static int count_end(const struct tt_event *e, void *ctx)
{
	struct walk *w = ctx;

	int r = visit_frame(w, e);

	w->n++;
	return r > 0;
}

static void walk_file(struct walk *w, tt_visit_fn fn, const struct producer *p)
{
	for (int i = 0; i < NPROD; i++)
		w->t[i].tid = p[i].tid;
	struct tt_trace info = tu_walk(path, TT_CHECK_ESCAPES, fn, w, w->err);
	assert_true(info.complete);
	assert_false(info.repaired);
	assert_true(w->end.seen);
}

/* ------------------------------------------------------------------------- */
/* Tests                                                                      */

/* With tiny rings, producers block for the writer: every event arrives, in order. */
static void block_mode_with_tiny_rings_loses_nothing(void **state)
{
	int io = tu_io_of(*state);
	struct producer p[NPROD];
	struct walk *w = tu_own(1, sizeof(*w));
	uint64_t iters = tu_scaled(250000, 2000);  /* 4 events each: ~1,000,000 per thread */
	uint64_t expect = NPROD * (4 * iters + 1); /* + rtr_thread_name */
	struct rtr_stats st;
	char name[32];

	tu_skip_unless_io_works(io);
	snprintf(name, sizeof(name), "block-%s", rtr_io_name(io));
	make_path(name);
	tu_start(path, io, RTR_ON_FULL_BLOCK, TINY_RING);
	run_producers(p, 0, iters);
	assert_int_equal(rtr_stop(), 0);

	rtr_stats_get(&st);
	assert_int_equal(st.running, 0);
	assert_int_equal(st.events_dropped, 0);
	assert_int_equal(st.events_dropped_full, 0);
	assert_int_equal(st.events_dropped_io, 0);
	assert_int_equal(st.events_dropped_too_large, 0);
	assert_int_equal(st.events_recorded, expect);
	assert_int_equal(st.events_written, expect);
	assert_int_equal(st.threads, NPROD);
	assert_int_equal(st.write_error, 0);
	assert_int_equal(st.io_method, io);
	assert_int_equal(st.bytes_written, tu_file_size(path));

	walk_file(w, visit_block, p);
	for (int i = 0; i < NPROD; i++) {
		assert_int_equal(w->t[i].next, iters);
		assert_int_equal(w->t[i].phase, 0);
		assert_true(w->t[i].named >= 1);
	}
	assert_int_equal(w->plain, NPROD * 4 * iters);
	assert_int_equal(w->drop_counters, 0);
	assert_int_equal(w->end.events, expect);
	assert_int_equal(w->end.dropped, 0);
	assert_int_equal(w->end.full, 0);
	assert_int_equal(w->end.large, 0);
	assert_int_equal(w->end.io, 0);
	assert_int_equal(w->end.threads, NPROD);
	/* "bytes": what precedes the end marker (or the whole file): either way exact */
	uint64_t before_end = end_line_offset(path);
	if ((uint64_t)w->end.bytes != before_end && (uint64_t)w->end.bytes != tu_file_size(path))
		fail_msg("end marker bytes %" PRId64 ": the end line starts at %" PRIu64
			 " and the file has %" PRIu64,
			 w->end.bytes, before_end, tu_file_size(path));
}

static void drop_mode_accounts_for_every_event(void **state)
{
	(void)state;
	struct producer p[NPROD];
	struct walk *w = tu_own(1, sizeof(*w));
	uint64_t n = tu_scaled(1000000, 8000);
	struct rtr_stats st;

	make_path("drop");
	tu_start(path, RTR_IO_AUTO, RTR_ON_FULL_DROP, TINY_RING);
	run_producers(p, 1, n);
	assert_int_equal(rtr_stop(), 0);

	rtr_stats_get(&st);
	assert_int_equal(st.events_recorded, NPROD * n);
	assert_int_equal(st.events_written + st.events_dropped, st.events_recorded);
	assert_int_equal(st.events_dropped, st.events_dropped_full + st.events_dropped_io +
						    st.events_dropped_too_large);
	assert_int_equal(st.events_dropped_io, 0);
	assert_int_equal(st.events_dropped_too_large, 0);
	assert_int_equal(st.write_error, 0);
	assert_int_equal(st.bytes_written, tu_file_size(path));
	print_message("drop mode: %" PRIu64 " of %" PRIu64 " events dropped\n", st.events_dropped,
		      st.events_recorded);

	walk_file(w, visit_drop, p);
	assert_int_equal(w->plain, st.events_written);
	assert_int_equal(w->end.events, st.events_written);
	assert_int_equal(w->end.dropped, st.events_dropped);
	assert_int_equal(w->end.full, st.events_dropped_full);
	assert_int_equal(w->end.large, 0);
	assert_int_equal(w->end.io, 0);

	uint64_t missing = 0;
	for (int i = 0; i < NPROD; i++) {
		struct per_thread *t = &w->t[i];
		/* events after the last one in the file were dropped too */
		t->missing += n - t->next;
		assert_int_equal(t->present + t->missing, n);
		/* the counter track gives each thread exactly its own gaps */
		assert_int_equal(t->drop_inc, t->missing);
		missing += t->missing;
	}
	assert_int_equal(missing, st.events_dropped);
	if (st.events_dropped > 0) {
		assert_true(w->drop_counters >= 1);
		assert_int_equal(w->last_drop_total, st.events_dropped_full);
	} else {
		assert_int_equal(w->drop_counters, 0);
	}
}

/*
 * The end marker's "bytes" is exact even when the writer has a large backlog at stop,
 * so chunks are still being written (io_uring) when it writes the end marker. A
 * 64 MiB ring, a flush interval of a minute and fewer records than the high-water
 * mark keep the writer asleep: everything is drained, in many chunks, by rtr_stop().
 */
static void end_marker_bytes_count_chunks_still_in_flight(void **state)
{
	(void)state;
	uint64_t n = tu_scaled(400000, 100000); /* 2 records each: under the 1M-record mark */
	struct walk *w = tu_own(1, sizeof(*w));

	for (int round = 0; round < 3; round++) {
		struct rtr_config cfg;
		struct tt_trace info;

		memset(w, 0, sizeof(*w));
		make_path("backlog");
		rtr_config_init(&cfg);
		cfg.path = path;
		cfg.on_full = RTR_ON_FULL_BLOCK;
		cfg.ring_bytes = (size_t)64 << 20;
		cfg.flush_ms = 60000;
		assert_int_equal(rtr_start(&cfg), 0);
		for (uint64_t i = 0; i < n; i++)
			rtr_counter_i64(CAT, "seq", (int64_t)i);
		assert_int_equal(rtr_stop(), 0);

		struct rtr_stats st;
		rtr_stats_get(&st);
		assert_int_equal(st.events_written, n);
		assert_int_equal(st.bytes_written, tu_file_size(path));
		if (tt_foreach(path, 0, count_end, w, &info) != 0)
			fail_msg("%s %s", info.error, w->err);
		assert_true(w->end.seen);
		assert_int_equal(w->end.events, n);
		uint64_t before_end = end_line_offset(path);
		if ((uint64_t)w->end.bytes != before_end &&
		    (uint64_t)w->end.bytes != tu_file_size(path))
			fail_msg("round %d (%s): end marker bytes %" PRId64 ", but the end line "
				 "starts at %" PRIu64 " and the file has %" PRIu64 " bytes",
				 round, rtr_io_name(st.io_method), w->end.bytes, before_end,
				 tu_file_size(path));
	}
}

/* Every test leaves the recorder stopped and frees what it owns, pass or fail. */
#define TEST(f)	    cmocka_unit_test_teardown(f, tu_teardown)
#define IO_TESTS(f) TU_IO_CASES(f, NULL, tu_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		IO_TESTS(block_mode_with_tiny_rings_loses_nothing),
		TEST(drop_mode_accounts_for_every_event),
		TEST(end_marker_bytes_count_chunks_still_in_flight),
	};

	tu_filter_from_env();
	return cmocka_run_group_tests_name("stress", tests, NULL, NULL);
}
