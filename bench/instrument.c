/* SPDX-License-Identifier: MIT */
/*
 * Cost of an instrumented call: the same trivial function called N times,
 * in one run,
 *
 *	plain	not instrumented, not traced: the loop's own cost, subtracted below
 *	span	not instrumented, wrapped in rtr_begin()+rtr_end() (the bare span)
 *	instr	built with -finstrument-functions: the hooks of whatever is loaded
 *
 * Built without the instrument library linked, so the hooks are glibc's empty ones
 * unless a tracer is preloaded or runs it:
 *
 *	LD_PRELOAD=libringtrace-instrument.so bench_instrument [N] [REPS]
 *	uftrace record -d /tmp/uft bench_instrument [N] [REPS]
 *	bench_instrument [N] [REPS]		the hooks empty: -finstrument-functions' own cost
 *
 * The recorder runs in drop mode with a ring that holds every record of two
 * repetitions (RINGTRACE_RING_KB=131072 by default here: the best repetition runs on
 * pages already touched), the writer asleep (RINGTRACE_FLUSH_MS=60000) and woken by a
 * flush between repetitions, so the figures are the producer's cost, not the writer's
 * rate (on two cores, a writer at work takes the other one). Prints
 * one line: ns per call of each (the best of REPS, minus plain), the ratio instr/span,
 * and the events the recorder dropped (0 expected).
 */
#define _GNU_SOURCE
#include <ringtrace.h>

#include "warm_ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINSTR __attribute__((no_instrument_function))

NOINSTR static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The function body of all three: a dependency the compiler cannot drop. */
#define BODY(x) __asm__ volatile("" : "+r"(x))

NOINSTR __attribute__((noinline)) static long plain(long x)
{
	BODY(x);
	return x + 1;
}

__attribute__((noinline)) long instrumented(long x);
__attribute__((noinline)) long instrumented(long x)
{
	BODY(x);
	return x + 1;
}

NOINSTR static double run(int which, long n)
{
	long x = 0;
	double t0 = now_ns();

	for (long i = 0; i < n; i++) {
		if (which == 0) {
			x = plain(x);
		} else if (which == 1) {
			rtr_begin("bench", "span");
			x = plain(x);
			rtr_end("bench", "span");
		} else {
			x = instrumented(x);
		}
	}
	double t = now_ns() - t0;
	if (x != n)
		abort();
	return t / (double)n;
}

NOINSTR int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int reps = argc > 2 ? atoi(argv[2]) : 7;
	double best[3] = {1e30, 1e30, 1e30};
	struct rtr_config cfg;
	struct rtr_stats st;

	setenv("RINGTRACE_RING_KB", "131072", 0); /* 4 Mi records: a repetition's, twice */
	setenv("RINGTRACE_FLUSH_MS", "60000", 0); /* the writer sleeps while we measure */
	rtr_config_init(&cfg);
	if (getenv("RINGTRACE_FILE") == NULL)
		cfg.path = "/tmp/bench-instrument-%p.json";
	if (rtr_start(&cfg) != 0)
		return 1;
	bench_warm_ring(); /* the timed runs on touched pages */
	for (int r = 0; r < reps; r++) {
		for (int w = 0; w < 3; w++) {
			double ns = run(w, n);
			if (ns < best[w])
				best[w] = ns;
			rtr_flush();
		}
	}
	rtr_stats_get(&st);
	rtr_stop();
	printf("calls=%ld plain_ns=%.2f span_ns=%.2f instr_ns=%.2f ratio=%.2f dropped=%llu\n", n,
	       best[0], best[1] - best[0], best[2] - best[0],
	       (best[2] - best[0]) / (best[1] - best[0]), (unsigned long long)st.events_dropped);
	if (getenv("RTR_BENCH_KEEP") == NULL)
		remove(rtr_trace_path());
	return 0;
}
