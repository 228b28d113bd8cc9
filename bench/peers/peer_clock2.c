/* SPDX-License-Identifier: MIT */
/*
 * The floor of the peers workload: what a span costs a tracer that reads the clock
 * twice per span (CLOCK_MONOTONIC through the vDSO, as every peer program) and
 * stores the two times, and does nothing else: no ring, no writer, no file. A tracer
 * timing spans with two clock reads (NanoLog's two-clock variant, ringtrace's default
 * clock) cannot go below it on this machine; ringtrace's producer time over this one
 * is what the recorder itself costs. The times go to a per-thread buffer of 4096
 * entries, reused, so the stores stay in cache like a ring's; with --arg 1 the loop
 * index is stored too. Extra key: stored, the times it stored.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <time.h>

#define TOOL_HAS_PRINT
static void tool_print(void);
#include "harness.h"

#define SLOTS 4096 /* a power of two */

struct clock2_thread {
	uint64_t slot[SLOTS][3];
	uint64_t stored;
};

static struct clock2_thread threads[PEER_MAX_THREADS];
static uint64_t stored_total;

static inline uint64_t read_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int tool_open(const struct peer_opts *o)
{
	(void)o;
	return 0;
}

static void *tool_thread_open(int tid)
{
	return &threads[tid];
}

static void tool_record(void *arg, long n, int with_arg)
{
	struct clock2_thread *t = arg; /* static storage: the stores are kept */

	for (long i = 0; i < n; i++) {
		uint64_t *s = t->slot[i & (SLOTS - 1)];
		s[0] = read_ns();
		if (with_arg)
			s[2] = (uint64_t)i;
		s[1] = read_ns();
	}
	t->stored += (uint64_t)n * 2;
}

static void tool_thread_close(void *arg)
{
	struct clock2_thread *t = arg;

	__atomic_fetch_add(&stored_total, t->stored, __ATOMIC_RELAXED);
}

static int tool_close(void)
{
	return 0;
}

static void tool_print(void)
{
	printf(" stored=%llu", (unsigned long long)stored_total);
}

int main(int argc, char **argv)
{
	return peer_main("clock2", argc, argv);
}
