/* SPDX-License-Identifier: MIT */
/*
 * Tracks (lanes of pseudo-processes with their own clocks) and process and thread
 * metadata, recorded through the public API and parsed back with exact values.
 */
#include <ringtrace.h>

#include "test_util.h"
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

#define PSEUDO_BASE 0x40000000

static char path[4096];
static struct tt_trace trace;
static uint64_t origin;

static void load_trace(void)
{
	memset(&trace, 0, sizeof(trace));
	if (tt_load(path, TT_CHECK_ESCAPES, &trace) != 0)
		fail_msg("%s", trace.error);
	assert_true(trace.complete);
	const struct tt_arg *o = tt_arg(&trace.ev[0], "origin_monotonic_ns");
	assert_non_null(o);
	origin = strtoull(o->s, NULL, 10);
}

static void start(const char *name)
{
	tu_own_file(path, sizeof(path), "tracks", name, ".json");
	tu_start(path, RTR_IO_AUTO, RTR_ON_FULL_BLOCK, 1 << 16);
}

/* The n-th event (from 0) with this ph and name, or NULL. */
static const struct tt_event *find(const char *ph, const char *name, int nth)
{
	for (size_t i = 0; i < trace.n; i++) {
		const struct tt_event *e = &trace.ev[i];
		if (strcmp(e->ph, ph) == 0 && e->name != NULL && strcmp(e->name, name) == 0 &&
		    nth-- == 0)
			return e;
	}
	return NULL;
}

/* The M event `what` for (pid, tid), or for pid alone when tid < 0; counts them. */
static const struct tt_event *meta(const char *what, int64_t pid, int64_t tid, int *count)
{
	const struct tt_event *found = NULL;

	*count = 0;
	for (size_t i = 0; i < trace.n; i++) {
		const struct tt_event *e = &trace.ev[i];
		if (strcmp(e->ph, "M") == 0 && strcmp(e->name, what) == 0 && e->pid == pid &&
		    (tid < 0 || e->tid == tid)) {
			found = e;
			++*count;
		}
	}
	return found;
}

static void teardown_trace(void)
{
	tt_free(&trace);
	memset(&trace, 0, sizeof(trace));
}

static int teardown(void **state)
{
	teardown_trace();
	return tu_teardown(state);
}

static void lanes_get_pseudo_ids_names_and_the_track_clock(void **state)
{
	(void)state;
	int count;
	/* size and version 0: a desc of the first layout */
	struct rtr_track_desc d7 = {"GPU 0", "stream 7", "H100", 5, 2, 0, 0};
	struct rtr_track_desc d8 = {"GPU 0", "stream 8", NULL, 0, 1, 0, 0};
	struct rtr_track_desc d1 = {"GPU 1", "stream 7", NULL, 0, 0, 0, 0};
	struct rtr_track *s7 = rtr_track_create(&d7);
	struct rtr_track *s8 = rtr_track_create(&d8);
	struct rtr_track *g1 = rtr_track_create(&d1);

	assert_non_null(s7);
	assert_non_null(s8);
	assert_non_null(g1);
	assert_ptr_equal(rtr_track_create(&d7), s7); /* same names: the same track */
	assert_ptr_not_equal(s7, g1);
	assert_null(rtr_track_create(NULL));
	struct rtr_track_desc bad = {NULL, "x", NULL, 0, 0, 0, 0};
	assert_null(rtr_track_create(&bad));

	start("lanes");
	uint64_t host = rtr_now_ns();
	/* device clock 1,000,000 ns at `host`; GPU 1 runs 5 us behind the host */
	rtr_track_clock_pair(s7, 1000000, host);
	rtr_track_clock_pair(s8, 1000000, host);
	rtr_track_clock_offset(g1, 5000);
	rtr_track_complete(s7, "gpu", "gemm", 1000500, 2000,
			   RTR__ARGV(RTR_ARG_I64("grid", 128), RTR_ARG_STR("dtype", "bf16")), 2);
	rtr_track_complete(s8, "gpu", "memcpy", 1001000, 300, NULL, 0);
	rtr_track_instant(s8, "gpu", "sync", 1001400, NULL, 0);
	rtr_track_counter(g1, "gpu", "occupancy", host - 5000 + 100,
			  RTR__ARGV(RTR_ARG_F64("sm", 0.75)), 1);
	rtr_track_complete(g1, "gpu", "reduce", host - 5000 + 200, 50, NULL, 0);
	assert_int_equal(rtr_stop(), 0);
	load_trace();

	const struct tt_event *gemm = find("X", "gemm", 0), *copy = find("X", "memcpy", 0);
	const struct tt_event *sync = find("i", "sync", 0), *occ = find("C", "occupancy", 0);
	const struct tt_event *red = find("X", "reduce", 0);
	assert_non_null(gemm);
	assert_non_null(copy);
	assert_non_null(sync);
	assert_non_null(occ);
	assert_non_null(red);
	assert_int_equal(gemm->ts_ns, host + 500 - origin);
	assert_int_equal(gemm->dur_ns, 2000);
	assert_int_equal(tt_arg(gemm, "grid")->i, 128);
	assert_string_equal(tt_arg(gemm, "dtype")->s, "bf16");
	assert_int_equal(copy->ts_ns, host + 1000 - origin);
	assert_int_equal(sync->ts_ns, host + 1400 - origin);
	assert_string_equal(sync->scope, "t");
	assert_int_equal(occ->ts_ns, host + 100 - origin);
	assert_true(tt_arg(occ, "sm")->d == 0.75);
	assert_int_equal(red->ts_ns, host + 200 - origin);
	assert_int_equal(red->dur_ns, 50);

	/* one pseudo-process per process name, lanes apart, all clear of real ids */
	assert_int_equal(gemm->pid, copy->pid);
	assert_int_equal(copy->pid, sync->pid);
	assert_true(red->pid != gemm->pid);
	assert_int_equal(occ->pid, red->pid);
	assert_true(gemm->tid != copy->tid);
	assert_int_equal(copy->tid, sync->tid);
	for (int i = 0; i < 2; i++) {
		const struct tt_event *e = i ? red : gemm;
		assert_true(e->pid >= PSEUDO_BASE && e->pid <= UINT32_MAX);
		assert_true(e->tid >= PSEUDO_BASE && e->tid <= UINT32_MAX);
		assert_true(e->pid != getpid());
	}

	/* names, label and order, each once */
	assert_string_equal(tt_arg(meta("process_name", gemm->pid, -1, &count), "name")->s,
			    "GPU 0");
	assert_int_equal(count, 1);
	assert_string_equal(tt_arg(meta("process_name", red->pid, -1, &count), "name")->s, "GPU 1");
	assert_int_equal(count, 1);
	assert_string_equal(tt_arg(meta("process_labels", gemm->pid, -1, &count), "labels")->s,
			    "H100");
	assert_int_equal(count, 1);
	assert_int_equal(tt_arg(meta("process_sort_index", gemm->pid, -1, &count), "sort_index")->i,
			 5);
	assert_null(meta("process_sort_index", red->pid, -1, &count));
	assert_string_equal(tt_arg(meta("thread_name", gemm->pid, gemm->tid, &count), "name")->s,
			    "stream 7");
	assert_int_equal(count, 1);
	assert_string_equal(tt_arg(meta("thread_name", copy->pid, copy->tid, &count), "name")->s,
			    "stream 8");
	/* lane order: stream 8 (lane_sort_index 1) before stream 7 (2) */
	int64_t o7 =
		tt_arg(meta("thread_sort_index", gemm->pid, gemm->tid, &count), "sort_index")->i;
	int64_t o8 =
		tt_arg(meta("thread_sort_index", copy->pid, copy->tid, &count), "sort_index")->i;
	assert_true(o8 < o7);
}

/* Complete events on one lane: nested ones stay, a partial overlap moves to an
 * overflow lane, and events inside it (a flow's end) follow it there. */
static void a_partial_overlap_goes_to_an_overflow_lane(void **state)
{
	(void)state;
	int count;
	struct rtr_track_desc d = {"Queue", "copy engine", NULL, 0, 0, 0, 0};
	struct rtr_track *t = rtr_track_create(&d);

	assert_non_null(t);
	start("overlap");
	uint64_t base = rtr_now_ns();
	rtr_track_clock_offset(t, 0);
	rtr_track_complete(t, "q", "a", base + 0, 1000, NULL, 0);	 /* lane 0 */
	rtr_track_complete(t, "q", "a.inner", base + 100, 200, NULL, 0); /* nested: lane 0 */
	rtr_track_complete(t, "q", "b", base + 500, 1000, NULL, 0);	 /* overlaps a: lane 1 */
	uint64_t id = rtr_flow_id();
	rtr_track_flow_end(t, "q", "b", base + 500, id);	    /* inside b: lane 1 */
	rtr_track_complete(t, "q", "c", base + 700, 1000, NULL, 0); /* overlaps a and b: 2 */
	rtr_track_complete(t, "q", "d", base + 2000, 10, NULL, 0);  /* after all: lane 0 */
	assert_int_equal(rtr_stop(), 0);
	load_trace();

	const struct tt_event *a = find("X", "a", 0), *inner = find("X", "a.inner", 0);
	const struct tt_event *b = find("X", "b", 0), *c = find("X", "c", 0);
	const struct tt_event *dd = find("X", "d", 0), *f = find("f", "b", 0);
	assert_non_null(a);
	assert_non_null(inner);
	assert_non_null(b);
	assert_non_null(c);
	assert_non_null(dd);
	assert_non_null(f);
	assert_int_equal(inner->tid, a->tid);
	assert_int_equal(b->tid, a->tid + 1);
	assert_int_equal(c->tid, a->tid + 2);
	assert_int_equal(dd->tid, a->tid);
	assert_int_equal(f->tid, b->tid);
	assert_int_equal(f->ts_ns, b->ts_ns);
	assert_int_equal(b->ts_ns, base + 500 - origin);
	assert_int_equal(c->dur_ns, 1000);
	assert_string_equal(tt_arg(meta("thread_name", a->pid, a->tid + 1, &count), "name")->s,
			    "copy engine (2)");
	assert_int_equal(count, 1);
	assert_string_equal(tt_arg(meta("thread_name", a->pid, a->tid + 2, &count), "name")->s,
			    "copy engine (3)");
	/* overflow lanes sort right after their lane */
	int64_t s0 = tt_arg(meta("thread_sort_index", a->pid, a->tid, &count), "sort_index")->i;
	int64_t s1 = tt_arg(meta("thread_sort_index", a->pid, a->tid + 1, &count), "sort_index")->i;
	assert_int_equal(s1, s0 + 1);
}

/* Offsets at the ends of int64: mapped exactly where the result fits, clamped to the
 * clock's range where it does not, never wrapped (INT64_MIN was once negated). */
static void extreme_clock_offsets_clamp_issue10(void **state)
{
	(void)state;
	struct rtr_track_desc dmin = {"Edge", "min", NULL, 0, 0, 0, 0};
	struct rtr_track_desc dmax = {"Edge", "max", NULL, 0, 0, 0, 0};
	struct rtr_track *tmin = rtr_track_create(&dmin);
	struct rtr_track *tmax = rtr_track_create(&dmax);
	const uint64_t half = UINT64_C(1) << 63; /* -INT64_MIN */

	assert_non_null(tmin);
	assert_non_null(tmax);
	start("extreme-offsets");
	uint64_t base = rtr_now_ns();
	rtr_track_clock_offset(tmin, INT64_MIN);
	rtr_track_clock_offset(tmax, INT64_MAX);
	rtr_track_complete(tmin, "e", "min exact", base + half, 100, NULL, 0); /* host = base */
	rtr_track_instant(tmin, "e", "min clamped", half - 1, NULL, 0);	       /* host < 0: 0 */
	rtr_track_instant(tmin, "e", "min zero", 0, NULL, 0);
	rtr_track_instant(tmax, "e", "max exact", 0, NULL, 0); /* host = INT64_MAX */
	rtr_track_complete(tmax, "e", "max clamped", UINT64_MAX - 10, 5, NULL, 0);
	assert_int_equal(rtr_stop(), 0);
	load_trace();

	const struct tt_event *e = find("X", "min exact", 0);
	assert_non_null(e);
	assert_int_equal(e->ts_ns, base - origin);
	assert_int_equal(e->dur_ns, 100);
	e = find("i", "min clamped", 0);
	assert_non_null(e);
	assert_int_equal(e->ts_ns, 0);
	e = find("i", "min zero", 0);
	assert_non_null(e);
	assert_int_equal(e->ts_ns, 0);
	e = find("i", "max exact", 0);
	assert_non_null(e);
	assert_int_equal(e->ts_ns, (uint64_t)INT64_MAX - origin);
	e = find("X", "max clamped", 0);
	assert_non_null(e);
	assert_int_equal(e->ts_ns, UINT64_MAX - origin);
	assert_int_equal(e->dur_ns, 0);
}

#define THREADS 4
#define EACH	2000
static struct rtr_track *shared;

static void *record_on_shared(void *arg)
{
	uint64_t k = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 0; i < EACH; i++) /* disjoint intervals: no overflow */
		rtr_track_complete(shared, "w", "item", (k * EACH + i) * 100, 10,
				   RTR__ARGV(RTR_ARG_U64("n", k * EACH + i)), 1);
	return NULL;
}

static void many_threads_record_on_one_track(void **state)
{
	(void)state;
	pthread_t th[THREADS];
	struct rtr_track_desc d = {"Remote", "worker", NULL, 0, 0, 0, 0};

	shared = rtr_track_create(&d);
	assert_non_null(shared);
	start("shared");
	uint64_t base = rtr_now_ns(); /* the track's clock starts at 0 here */
	rtr_track_clock_offset(shared, (int64_t)base);
	for (uintptr_t i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, record_on_shared, (void *)i), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(rtr_stop(), 0);
	load_trace();

	static char seen[THREADS * EACH];
	memset(seen, 0, sizeof(seen));
	int n = 0;
	for (size_t i = 0; i < trace.n; i++) {
		const struct tt_event *e = &trace.ev[i];
		if (strcmp(e->ph, "X") != 0)
			continue;
		uint64_t k = tt_arg(e, "n")->u;
		assert_true(k < THREADS * EACH);
		assert_false(seen[k]);
		seen[k] = 1;
		assert_int_equal(e->ts_ns + origin, base + k * 100);
		assert_int_equal(e->dur_ns, 10);
		n++;
	}
	assert_int_equal(n, THREADS * EACH);
}

static void *sorted_thread(void *arg)
{
	(void)arg;
	rtr_thread_sort_index(-3);
	rtr_instant("m", "sorted");
	return (void *)(intptr_t)gettid();
}

static void process_and_thread_metadata_reach_every_file(void **state)
{
	(void)state;
	int count;
	pthread_t th;
	void *tid;

	rtr_process_label("rank 0 of 4");
	rtr_process_sort_index(7);
	for (int session = 0; session < 2; session++) {
		start(session == 0 ? "meta0" : "meta1");
		if (session == 0) {
			assert_int_equal(pthread_create(&th, NULL, sorted_thread, NULL), 0);
			pthread_join(th, &tid);
			rtr_process_label("relabelled");
		}
		rtr_instant("m", "main");
		assert_int_equal(rtr_stop(), 0);
		load_trace();
		const struct tt_event *l = meta("process_labels", getpid(), -1, &count);
		assert_non_null(l);
		assert_string_equal(tt_arg(l, "labels")->s, "relabelled");
		assert_int_equal(
			tt_arg(meta("process_sort_index", getpid(), -1, &count), "sort_index")->i,
			7);
		if (session == 0) {
			const struct tt_event *ts =
				meta("thread_sort_index", getpid(), (intptr_t)tid, &count);
			assert_non_null(ts);
			assert_int_equal(tt_arg(ts, "sort_index")->i, -3);
		}
		teardown_trace();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(lanes_get_pseudo_ids_names_and_the_track_clock, teardown),
		cmocka_unit_test_teardown(a_partial_overlap_goes_to_an_overflow_lane, teardown),
		cmocka_unit_test_teardown(extreme_clock_offsets_clamp_issue10, teardown),
		cmocka_unit_test_teardown(many_threads_record_on_one_track, teardown),
		cmocka_unit_test_teardown(process_and_thread_metadata_reach_every_file, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
