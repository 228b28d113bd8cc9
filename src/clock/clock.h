/* SPDX-License-Identifier: MIT */
/*
 * Clocks. Producers read raw ticks (rtr__ticks() in emit.h): the TSC when the kernel
 * trusts it (clocksource "tsc", CPU flags constant_tsc and nonstop_tsc), otherwise
 * CLOCK_MONOTONIC nanoseconds. The writer converts ticks to nanoseconds in
 * CLOCK_MONOTONIC's time base, so rtr_now_ns() and recorded events share one clock.
 *
 * TSC to nanoseconds is piecewise linear. rtr_start() calibrates a first segment
 * (two (ticks, ns) pairs 10 ms apart); then the writer takes a new pair about every
 * second (rtr__clock_repair()) and starts a segment there, with the rate measured
 * over the last second, so a trace of hours follows CLOCK_MONOTONIC instead of
 * drifting with one 10 ms estimate. The function is fixed for every tick below the
 * newest pair (a segment is never revised once ticks in it may have been converted),
 * so it never goes backwards and keeps the order of every thread's events:
 *
 *	- At a pair (T, N) the newest segment's line has reached L(T). When L(T) <= N
 *	  the new segment starts at N: exact at the pair point, a forward step of
 *	  N - L(T) (the rate error of one second: microseconds at most).
 *	- When L(T) > N (the line ran ahead), a step back is not allowed: the segment
 *	  starts at L(T) with its rate lowered to take the lead d = L(T) - N back over
 *	  the next second (by at most half: the rate stays positive). The next pair
 *	  finds it exact again unless the clock's rate moved meanwhile.
 *
 * rtr_now_ns() reads the newest segment, published by rtr_start() and the writer
 * (see clock.c), and never returns less than a value it returned before, also
 * across stop/start cycles that recalibrate or switch clocks.
 */
#ifndef RTR_CLOCK_CLOCK_H
#define RTR_CLOCK_CLOCK_H

#include <stdint.h>

/* One segment: from ticks on, ns + (t - ticks) * ns_per_tick32 / 2^32. */
struct rtr__clock_seg {
	uint64_t ticks;
	uint64_t ns;
	uint64_t ns_per_tick32; /* nanoseconds per tick, 32.32 fixed point */
};

/* Segments the writer keeps to convert ticks that reach it late (a ring drained
 * after a stall): about four minutes at one pair per second. An older tick is
 * converted on the oldest segment's line, which keeps the function monotonic. */
#define RTR__CLOCK_SEGS 256

struct rtr__clock {
	int kind;	     /* RTR_CLOCK_MONOTONIC or RTR_CLOCK_TSC */
	int64_t offset_ns;   /* RINGTRACE_CLOCK_OFFSET_NS, added to raw CLOCK_MONOTONIC ticks */
	uint64_t base_ticks; /* TSC: the newest segment, copied here for the ... */
	uint64_t base_ns;    /* ... fast path of rtr__clock_ns() */
	uint64_t ns_per_tick32;
	uint64_t pair_ticks; /* the last (ticks, CLOCK_MONOTONIC ns) pair taken, */
	uint64_t pair_ns;    /* whose difference to the next gives the next rate */
	uint64_t repair_ns;  /* CLOCK_MONOTONIC time of the next re-pair */
	uint32_t nsegs;	     /* segments in seg[], the newest at (first + nsegs - 1) */
	uint32_t first;	     /* index of the oldest, mod RTR__CLOCK_SEGS */
	struct rtr__clock_seg seg[RTR__CLOCK_SEGS];
};

/*
 * The clock's offset (RINGTRACE_CLOCK_OFFSET_NS, a testing aid: one host simulates
 * ranks whose clocks disagree) is handed to rtr__clock_setup() by the session, which
 * reads the configuration; the clock knows nothing of it. From then on the recorder's
 * clock is the system's plus the offset: rtr__mono_ns() and rtr__real_ns() add it, so
 * the TSC segments (paired with rtr__mono_ns()), the origin, rtr_now_ns() and the
 * writer's own readings all carry it; raw CLOCK_MONOTONIC ticks (rtr__ticks() without
 * a TSC) get it where they become ns, in rtr__clock_ns().
 */

/* CLOCK_MONOTONIC and CLOCK_REALTIME in nanoseconds, plus the offset above. */
uint64_t rtr__mono_ns(void);
uint64_t rtr__real_ns(void);

/* Whether the kernel trusts the TSC: clocksource tsc, constant_tsc, nonstop_tsc. */
int rtr__tsc_trusted(void);

/*
 * Choose the clock for `requested` (RTR_CLOCK_*), with offset_ns added to the
 * system's (above), and calibrate the TSC against CLOCK_MONOTONIC (about 10 ms).
 * RTR_CLOCK_TSC on a machine without a usable TSC falls back to CLOCK_MONOTONIC. Sets
 * rtr__clock_is_tsc.
 */
void rtr__clock_setup(struct rtr__clock *c, int requested, int64_t offset_ns);

/* The first segment of a TSC clock from two calibration pairs (t0 < t1, n0 < n1),
 * exact at the second. Used by rtr__clock_setup() and by the tests. */
void rtr__clock_init_pairs(struct rtr__clock *c, uint64_t t0, uint64_t n0, uint64_t t1,
			   uint64_t n1);

/* Start a segment at the pair (ticks, ns), later than every pair before, by the
 * rules atop this file. Ticks converted before the call must be below `ticks`. */
void rtr__clock_add_pair(struct rtr__clock *c, uint64_t ticks, uint64_t ns);

/* The writer, about every second (a no-op until c->repair_ns, and with
 * CLOCK_MONOTONIC): take a pair, add it, publish the new segment to rtr_now_ns().
 * `now_ns` is a recent rtr__mono_ns(). Writer thread only. */
void rtr__clock_repair(struct rtr__clock *c, uint64_t now_ns);

/* Make c the clock of rtr_now_ns(): rtr_start(), before producers record. */
void rtr__clock_publish(const struct rtr__clock *c);

/* A tick below the newest segment: the segment holding it. Out of line. */
uint64_t rtr__clock_ns_past(const struct rtr__clock *c, uint64_t ticks);

static inline uint64_t rtr__clock_seg_ns(uint64_t ticks, uint64_t ns, uint64_t ns_per_tick32,
					 uint64_t t)
{
	int64_t dt = (int64_t)(t - ticks);
	__int128 d = ((__int128)dt * ns_per_tick32) >> 32;
	__int128 v = (__int128)ns + d;

	if (v < 0)
		return 0; /* a tick before the clock's zero */
	return v > (__int128)UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

/* Ticks from rtr__ticks() to CLOCK_MONOTONIC nanoseconds: the segment that holds
 * them. Non-decreasing in ticks. */
static inline uint64_t rtr__clock_ns(const struct rtr__clock *c, uint64_t ticks)
{
	if (c->kind != 2 /* RTR_CLOCK_TSC */)
		return ticks + (uint64_t)c->offset_ns; /* raw CLOCK_MONOTONIC; see above */
	if (__builtin_expect((int64_t)(ticks - c->base_ticks) >= 0, 1))
		return rtr__clock_seg_ns(c->base_ticks, c->base_ns, c->ns_per_tick32, ticks);
	return rtr__clock_ns_past(c, ticks);
}

#endif
