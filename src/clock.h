/* SPDX-License-Identifier: MIT */
/*
 * Clocks. Producers read raw ticks (rtr__ticks() in emit.h): the TSC when the kernel
 * trusts it (clocksource "tsc", CPU flags constant_tsc and nonstop_tsc), otherwise
 * CLOCK_MONOTONIC nanoseconds. The writer converts ticks to nanoseconds in
 * CLOCK_MONOTONIC's time base, so rtr_now_ns() and recorded events share one clock.
 */
#ifndef RTR_CLOCK_H
#define RTR_CLOCK_H

#include <stdint.h>

struct rtr__clock {
	int kind;		/* RTR_CLOCK_MONOTONIC or RTR_CLOCK_TSC */
	uint64_t base_ticks;	/* a TSC reading ... */
	uint64_t base_ns;	/* ... and the CLOCK_MONOTONIC time it was taken at */
	uint64_t ns_per_tick32; /* TSC: nanoseconds per tick, 32.32 fixed point */
};

/* CLOCK_MONOTONIC and CLOCK_REALTIME in nanoseconds. */
uint64_t rtr__mono_ns(void);
uint64_t rtr__real_ns(void);

/* Whether the kernel trusts the TSC: clocksource tsc, constant_tsc, nonstop_tsc. */
int rtr__tsc_trusted(void);

/*
 * Choose the clock for `requested` (RTR_CLOCK_*) and calibrate the TSC against
 * CLOCK_MONOTONIC (about 10 ms). RTR_CLOCK_TSC on a machine without a usable TSC
 * falls back to CLOCK_MONOTONIC. Sets rtr__clock_is_tsc.
 */
void rtr__clock_setup(struct rtr__clock *c, int requested);

/* Ticks from rtr__ticks() to CLOCK_MONOTONIC nanoseconds. */
static inline uint64_t rtr__clock_ns(const struct rtr__clock *c, uint64_t ticks)
{
	if (c->kind != 2 /* RTR_CLOCK_TSC */)
		return ticks;
	int64_t dt = (int64_t)(ticks - c->base_ticks);
	__int128 ns = ((__int128)dt * c->ns_per_tick32) >> 32;
	return c->base_ns + (uint64_t)(int64_t)ns;
}

/* The recorder's current clock; rtr_now_ns() and the writer read it. */
extern struct rtr__clock rtr__clock_current;

#endif
