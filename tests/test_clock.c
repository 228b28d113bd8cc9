/* SPDX-License-Identifier: MIT */
/*
 * Clocks: rtr_now_ns() never goes backwards, also across stop/start cycles that
 * switch between CLOCK_MONOTONIC and the TSC.
 */
#include <ringtrace.h>

#include "clock/clock.h"
#include "common/atomic.h"
#include "test_util.h"

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

#define CYCLES 24

struct reader {
	int stop;	   /* set by the main thread */
	uint64_t calls;	   /* after the join only */
	uint64_t backward; /* steps where a value was below the one before */
	uint64_t worst;	   /* the largest such step, ns */
	uint64_t first, last;
};

static void *read_now(void *arg)
{
	struct reader *rd = arg;
	uint64_t prev = rtr_now_ns();

	rd->first = prev;
	/* relaxed: a flag polled until set; nothing is published with it */
	while (!rtr_atomic_load_relaxed(&rd->stop)) {
		uint64_t now = rtr_now_ns();
		if (now < prev) {
			rd->backward++;
			if (prev - now > rd->worst)
				rd->worst = prev - now;
		}
		prev = now;
		rd->calls++;
	}
	rd->last = prev;
	return NULL;
}

static void now_never_goes_backwards_across_restarts_issue10(void **state)
{
	char path[4096];
	struct reader rd = {0};
	pthread_t th;

	(void)state;
	tu_own_file(path, sizeof(path), "clock", "restarts", ".json");
	assert_int_equal(pthread_create(&th, NULL, read_now, &rd), 0);
	for (int i = 0; i < CYCLES; i++) {
		struct rtr_config cfg;

		rtr_config_init(&cfg);
		cfg.path = path;
		cfg.clock = i % 2 ? RTR_CLOCK_TSC : RTR_CLOCK_MONOTONIC;
		assert_int_equal(rtr_start(&cfg), 0);
		rtr_instant("clock", "cycle");
		assert_int_equal(rtr_stop(), 0);
	}
	/* relaxed: see read_now() */
	rtr_atomic_store_relaxed(&rd.stop, 1);
	assert_int_equal(pthread_join(th, NULL), 0);
	print_message("rtr_now_ns: %llu calls, %llu backward steps (worst %llu ns)\n",
		      (unsigned long long)rd.calls, (unsigned long long)rd.backward,
		      (unsigned long long)rd.worst);
	assert_true(rd.calls > 0);
	assert_int_equal(rd.backward, 0);
	assert_true(rd.last > rd.first);
	/* still CLOCK_MONOTONIC's time base: within 5 ms of it after the cycles */
	uint64_t now = rtr_now_ns(), mono = rtr__mono_ns();
	uint64_t diff = now > mono ? now - mono : mono - now;
	assert_true(diff < 5000000);
}

/* ------------------------------------------------------------------------- */
/* Piecewise conversion on synthetic pairs                                    */

static struct rtr__clock clk;

/* A deterministic generator for the pairs' jitter. */
static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Non-decreasing over [a, b], sampled at n + 1 points and at both ends. */
static void assert_monotonic_over(uint64_t a, uint64_t b, uint64_t n)
{
	uint64_t prev = rtr__clock_ns(&clk, a);

	for (uint64_t i = 1; i <= n; i++) {
		uint64_t t = a + (b - a) / n * i;
		uint64_t v = rtr__clock_ns(&clk, t);
		if (v < prev)
			fail_msg("f(%llu) = %llu < %llu before it", (unsigned long long)t,
				 (unsigned long long)v, (unsigned long long)prev);
		prev = v;
	}
}

/* Calibrated 1e-4 fast, then pairs of a clock at 0.5 ns per tick: the line runs
 * ahead, the next segment takes the lead back and the pair after is exact; a clock
 * that speeds up makes a forward step, exact at the pair. */
static void segments_are_exact_at_pairs_and_monotonic_at_joins(void **state)
{
	(void)state;
	uint64_t t0 = 1000000, n0 = 5000000000;
	uint64_t t1 = t0 + 20000000, n1 = n0 + 10001000; /* 10 ms, rate 1e-4 high */

	rtr__clock_init_pairs(&clk, t0, n0, t1, n1);
	assert_int_equal(clk.kind, RTR_CLOCK_TSC);
	assert_int_equal(rtr__clock_ns(&clk, t1), n1); /* exact at the calibration pair */

	/* one second later the line is 100 us ahead */
	uint64_t T1 = t1 + 2000000000, N1 = n1 + 1000000000;
	uint64_t reached = rtr__clock_ns(&clk, T1);
	assert_in_range(reached - N1, 99990, 100010);
	rtr__clock_add_pair(&clk, T1, N1);
	assert_int_equal(rtr__clock_ns(&clk, T1), reached); /* no step back at the join */
	assert_true(rtr__clock_ns(&clk, T1 - 1) <= reached);
	assert_monotonic_over(t0, T1 + 2000000000, 100000);

	/* the lead is taken back over the next second: exact again (to the rounding
	 * of 32.32 rates) */
	uint64_t T2 = T1 + 2000000000, N2 = N1 + 1000000000;
	reached = rtr__clock_ns(&clk, T2);
	assert_in_range(reached, N2 - 2, N2 + 2);
	rtr__clock_add_pair(&clk, T2, N2);
	assert_in_range(rtr__clock_ns(&clk, T2), N2 - 2, N2 + 2);

	/* the clock speeds up by 5 us a second: a forward step, exact at the pair */
	uint64_t T3 = T2 + 2000000000, N3 = N2 + 1000005000;
	reached = rtr__clock_ns(&clk, T3);
	assert_true(reached < N3);
	rtr__clock_add_pair(&clk, T3, N3);
	assert_int_equal(rtr__clock_ns(&clk, T3), N3);
	assert_true(rtr__clock_ns(&clk, T3 - 1) <= N3);
	assert_in_range(N3 - rtr__clock_ns(&clk, T3 - 1), 4990, 5010);

	/* a pair not later than the last on both clocks is ignored */
	rtr__clock_add_pair(&clk, T3, N3 + 10);
	rtr__clock_add_pair(&clk, T3 + 10, N3);
	assert_int_equal(clk.nsegs, 4);

	/* every segment keeps converting its ticks as it did when it was the newest */
	assert_int_equal(rtr__clock_ns(&clk, t1), n1);
	assert_int_equal(rtr__clock_ns(&clk, T3), N3);
	assert_monotonic_over(0, T3 + 4000000000, 200000);
	/* before the first pair: the calibration's line, n1 - t1 * 0.50005 */
	assert_in_range(rtr__clock_ns(&clk, 0), n0 - 500051, n0 - 500049);
}

/* Hundreds of pairs with jitter: every value is the one it had when it was first
 * convertible, the whole function is non-decreasing, and it stays near the pairs. */
static void segments_follow_a_drifting_clock(void **state)
{
	(void)state;
	uint64_t x = 88172645463325252u;
	uint64_t t = 3000000, n = 1000000000;
	struct {
		uint64_t t, v;
	} seen[RTR__CLOCK_SEGS];
	int64_t worst = 0;
	const int pairs = RTR__CLOCK_SEGS + 100; /* the history wraps */

	rtr__clock_init_pairs(&clk, t - 30000000, n - 10000000, t, n);
	for (int k = 0; k < pairs; k++) {
		/* about 3 ticks per ns, drifting by up to 20 ppm a second, and 0-300 ns of
		 * sampling jitter on each pair */
		uint64_t dt = 3000000000u + next_rand(&x) % 120001 - 60000;
		t += dt;
		n += 1000000000u + next_rand(&x) % 301;
		uint64_t before = rtr__clock_ns(&clk, t);
		rtr__clock_add_pair(&clk, t, n);
		uint64_t after = rtr__clock_ns(&clk, t);
		assert_int_equal(after, before <= n ? n : before);
		assert_true(rtr__clock_ns(&clk, t - 1) <= after);
		if (k >= pairs - RTR__CLOCK_SEGS) {
			seen[k - (pairs - RTR__CLOCK_SEGS)].t = t;
			seen[k - (pairs - RTR__CLOCK_SEGS)].v = after;
		}
		int64_t off = (int64_t)(after - n);
		if (k > 4 && (off > worst || -off > worst))
			worst = off < 0 ? -off : off;
	}
	assert_int_equal(clk.nsegs, RTR__CLOCK_SEGS);
	for (int i = 0; i < RTR__CLOCK_SEGS; i++)
		assert_int_equal(rtr__clock_ns(&clk, seen[i].t), seen[i].v);
	assert_monotonic_over(0, t + 3000000000u, 1000000);
	print_message("piecewise: worst distance to a pair %lld ns\n", (long long)worst);
	assert_true(worst < 100000); /* 100 us: a few seconds of the drift, at most */
}

/* ------------------------------------------------------------------------- */
/* The writer's re-pairs, end to end                                          */

#define WINDOWS 1500

/*
 * 1.5 s on the TSC, so the writer re-pairs (at 0.1 s, then every second): each
 * instant, whose ticks the writer converts later, lies inside a complete event
 * spanning two rtr_now_ns() readings taken around it, and the thread's timestamps
 * never go backwards in the file.
 */
static void events_and_now_agree_across_repairs(void **state)
{
	char path[4096];
	struct rtr_config cfg;
	struct tt_trace t;
	struct timespec pause = {0, 1000000};

	(void)state;
	tu_own_file(path, sizeof(path), "clock", "repairs", ".json");
	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.clock = RTR_CLOCK_TSC;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	assert_int_equal(rtr_start(&cfg), 0);
	uint64_t until = rtr__mono_ns() + 1500000000u;
	int n = 0;
	while (n < WINDOWS && (rtr__mono_ns() < until || n < 100)) {
		uint64_t a = rtr_now_ns();
		rtr_instant("clock", "tick");
		uint64_t b = rtr_now_ns();
		rtr_complete("clock", "window", a, b - a);
		n++;
		nanosleep(&pause, NULL);
	}
	assert_int_equal(rtr_stop(), 0);

	memset(&t, 0, sizeof(t));
	if (tt_load(path, 0, &t) != 0)
		fail_msg("%s", t.error);
	const struct tt_event *first = &t.ev[0];
	assert_string_equal(tt_arg(first, "clock")->s, "tsc");
	const struct tt_event *tick = NULL;
	uint64_t prev = 0, worst = 0;
	int windows = 0;
	for (size_t i = 1; i < t.n; i++) {
		const struct tt_event *e = &t.ev[i];
		if (e->cat == NULL || strcmp(e->cat, "clock") != 0)
			continue;
		if (strcmp(e->name, "tick") == 0) {
			assert_true(e->ts_ns >= prev); /* the thread's order */
			prev = e->ts_ns;
			tick = e;
			continue;
		}
		assert_non_null(tick);
		/* 1 us of slack: rtr_now_ns() reads the segment published last, which
		 * can be a re-pair behind the one the writer converts with */
		uint64_t lo = e->ts_ns, hi = e->ts_ns + e->dur_ns;
		uint64_t off = tick->ts_ns < lo	  ? lo - tick->ts_ns
			       : tick->ts_ns > hi ? tick->ts_ns - hi
						  : 0;
		if (off > worst)
			worst = off;
		assert_true(off <= 1000);
		tick = NULL;
		windows++;
	}
	assert_int_equal(windows, n);
	print_message("re-pairs: %d windows over %.2f s, worst outside %llu ns\n", windows,
		      (double)prev / 1e9, (unsigned long long)worst);
	tt_free(&t);
}

struct offset_case {
	int clock;
	const char *offset;
};

/* One attempt at a case: the system's CLOCK_MONOTONIC (sys_*) and rtr_now_ns() read in
 * this order around rtr_start() and an instant "mark", on a thread of its own (see
 * offset_attempt()). Checked by the main thread: a cmocka assertion that fails on
 * another thread exits the process without a word. */
struct offset_run {
	const struct offset_case *c;
	const char *path;
	int start_err, stop_err;
	uint64_t sys_pre, sys0, now, sys1, after;
};

static void *offset_run_thread(void *arg)
{
	struct offset_run *r = arg;
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	cfg.path = r->path;
	cfg.clock = r->c->clock;
	r->sys_pre = tu_mono_ns();
	r->start_err = rtr_start(&cfg);
	if (r->start_err != 0)
		return NULL;
	r->sys0 = tu_mono_ns();
	r->now = rtr_now_ns();
	r->sys1 = tu_mono_ns();
	rtr_instant("clock", "mark");
	r->after = rtr_now_ns();
	r->stop_err = rtr_stop();
	return NULL;
}

/* How far v lies outside [lo, hi], in ns; 0 inside. */
static uint64_t outside(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo - v : v > hi ? v - hi : 0;
}

/*
 * The TSC's slack. On the TSC, rtr_now_ns(), the origin and the events follow a line
 * through two (ticks, CLOCK_MONOTONIC) pairs 10 ms apart, each the best of 8 samples
 * (clock.c), not CLOCK_MONOTONIC itself: off it by a pair's error plus the rate's
 * error times the time since the calibration: 0 ns in each of 160 attempts on a
 * loaded 2-core machine (release and tsan). A calibration whose samples were preempted
 * can be off by more, and on a machine that slow the writer may re-pair (100 ms after
 * the calibration) between the readings: the case is then tried again, on a fresh
 * calibration, up to OFFSET_ATTEMPTS times. A missing, doubled or negated offset is
 * 50 ms or more off, on every attempt. With CLOCK_MONOTONIC every bound is exact.
 */
#define TSC_SLACK_NS	1000
#define OFFSET_ATTEMPTS 3

/*
 * One attempt: a session with the case's offset, on a thread of its own (rtr_now_ns()
 * never returns less than it returned before on a thread, so a thread that saw +50 ms
 * would not see -50 ms). Fails the test on a wrong result; returns 0 when every reading
 * lay where it should, shifted by the offset (exactly with CLOCK_MONOTONIC, within
 * TSC_SLACK_NS on the TSC), or how far the worst one lay outside (TSC only).
 */
static uint64_t offset_attempt(const struct offset_case *c, int attempt)
{
	int64_t off = strtoll(c->offset, NULL, 10);
	char path[4096];
	struct offset_run r = {.c = c, .path = path};
	struct tt_trace t;
	pthread_t th;

	tu_own_file(path, sizeof(path), "clock", "offset", ".json");
	setenv("RINGTRACE_CLOCK_OFFSET_NS", c->offset, 1);
	assert_int_equal(pthread_create(&th, NULL, offset_run_thread, &r), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	unsetenv("RINGTRACE_CLOCK_OFFSET_NS");
	assert_int_equal(r.start_err, 0);
	assert_int_equal(r.stop_err, 0);

	memset(&t, 0, sizeof(t));
	if (tt_load(path, 0, &t) != 0)
		fail_msg("%s", t.error);
	char clock[16];
	snprintf(clock, sizeof(clock), "%s", tt_arg(&t.ev[0], "clock")->s);
	int tsc = strcmp(clock, "tsc") == 0;
	if (c->clock == RTR_CLOCK_MONOTONIC)
		assert_string_equal(clock, "monotonic");
	uint64_t origin = strtoull(tt_arg(&t.ev[0], "origin_monotonic_ns")->s, NULL, 10);
	uint64_t at = 0;
	int found = 0;
	for (size_t i = 1; i < t.n; i++) {
		const struct tt_event *e = &t.ev[i];
		if (e->name != NULL && strcmp(e->name, "mark") == 0) {
			at = origin + e->ts_ns; /* ts is relative to the origin */
			found++;
		}
	}
	tt_free(&t);
	assert_int_equal(found, 1);

	/* The system's readings, moved by the offset, bracket the recorder's: the origin
	 * was taken inside rtr_start() (which takes 50 ms and more on a loaded machine:
	 * sys_pre, not a guess at its length, is the lower bound), rtr_now_ns() between
	 * sys0 and sys1, and the mark between the two rtr_now_ns() readings around it. */
	uint64_t shift = (uint64_t)off;
	uint64_t o_origin = outside(origin, r.sys_pre + shift, r.sys0 + shift);
	uint64_t o_now = outside(r.now, r.sys0 + shift, r.sys1 + shift);
	uint64_t o_mark = outside(at, r.now, r.after);
	uint64_t worst = o_origin > o_now ? o_origin : o_now;
	worst = o_mark > worst ? o_mark : worst;
	print_message("offset %s, %s, attempt %d: outside by %llu ns (origin), %llu ns "
		      "(rtr_now_ns), %llu ns (mark); rtr_start() took %llu us\n",
		      c->offset, clock, attempt, (unsigned long long)o_origin,
		      (unsigned long long)o_now, (unsigned long long)o_mark,
		      (unsigned long long)(r.sys0 - r.sys_pre) / 1000);
	if (worst > (tsc ? TSC_SLACK_NS : 0) && (!tsc || attempt == OFFSET_ATTEMPTS))
		fail_msg("offset %s, clock %s: a reading lies %llu ns outside its bracket "
			 "(origin %llu in [%llu, %llu], rtr_now_ns %llu in [%llu, %llu], mark "
			 "%llu in [%llu, %llu], system clock shifted by the offset)",
			 c->offset, clock, (unsigned long long)worst, (unsigned long long)origin,
			 (unsigned long long)(r.sys_pre + shift),
			 (unsigned long long)(r.sys0 + shift), (unsigned long long)r.now,
			 (unsigned long long)(r.sys0 + shift), (unsigned long long)(r.sys1 + shift),
			 (unsigned long long)at, (unsigned long long)r.now,
			 (unsigned long long)r.after);
	return worst > TSC_SLACK_NS ? worst : 0;
}

/* RINGTRACE_CLOCK_OFFSET_NS moves rtr_now_ns(), the events and the origin together,
 * with either clock, by the offset. */
static void clock_offset_moves_now_events_and_origin(void **state)
{
	static const struct offset_case cases[] = {{RTR_CLOCK_MONOTONIC, "50000000"},
						   {RTR_CLOCK_MONOTONIC, "-50000000"},
						   {RTR_CLOCK_AUTO, "50000000"},
						   {RTR_CLOCK_AUTO, "-50000000"}};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int attempt = 1;
		while (offset_attempt(&cases[i], attempt) != 0)
			attempt++;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(segments_are_exact_at_pairs_and_monotonic_at_joins),
		cmocka_unit_test(segments_follow_a_drifting_clock),
		cmocka_unit_test_teardown(events_and_now_agree_across_repairs, tu_teardown),
		cmocka_unit_test_teardown(clock_offset_moves_now_events_and_origin, tu_teardown),
		cmocka_unit_test_teardown(now_never_goes_backwards_across_restarts_issue10,
					  tu_teardown),
	};
	tu_filter_from_env();
	return cmocka_run_group_tests_name("clock", tests, NULL, NULL);
}
