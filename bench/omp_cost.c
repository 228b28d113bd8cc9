/* SPDX-License-Identifier: MIT */
/*
 * The OMPT tool's cost: empty parallel regions and empty explicit tasks, timed with
 * and without libringtrace-omp, and with an OMPT tool that records nothing
 * (bench/omp_cost.sh runs all three and takes medians). Built with clang -fopenmp
 * (LLVM's runtime); the tool comes in through OMP_TOOL_LIBRARIES, so the program is
 * the same binary each way. When the recorder runs (libringtrace-omp started it),
 * TASKS bare rtr_begin/rtr_end span pairs are timed too, in the same process: the
 * yardstick of a module's event pair. Each is timed in a second pass, after a first
 * that warms them.
 *
 *	omp_cost [REGIONS [TASKS [THREADS]]]	prints "region_ns R task_ns T span_ns S"
 *						(S 0 without the recorder)
 */
#include <ringtrace.h>

#include "warm_ring.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile long sink;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long regions = argc > 1 ? atol(argv[1]) : 20000;
	long tasks = argc > 2 ? atol(argv[2]) : 200000;
	int threads = argc > 3 ? atoi(argv[3]) : 2;

	/* warm the runtime: the team is made once */
#pragma omp parallel num_threads(threads)
	sink++;

	/* With the recorder (the tool's runs; omp_cost.sh sets RINGTRACE_RING_KB and keeps
	 * the writer asleep but for flushes): the passes on touched pages. */
	if (rtr_category_enabled("bench"))
		bench_warm_ring();
	/* Twice, the second pass timed: the first makes the runtime's task pool. */
	double region = 0, task = 0, span = 0;
	for (int pass = 0; pass < 2; pass++) {
		rtr_flush(); /* the ring empty: no pass waits for room */
		double t0 = now_ns();
		for (long r = 0; r < regions; r++) {
#pragma omp parallel num_threads(threads)
			sink += omp_get_thread_num();
		}
		double t1 = now_ns();

#pragma omp parallel num_threads(threads)
#pragma omp single
		{
			for (long k = 0; k < tasks; k++) {
#pragma omp task
				sink++;
			}
#pragma omp taskwait
		}
		double t2 = now_ns();

		if (rtr_category_enabled("bench")) {
			for (long k = 0; k < tasks; k++) {
				rtr_begin("bench", "span");
				sink++;
				rtr_end("bench", "span");
			}
		}
		double t3 = now_ns();
		region = (t1 - t0) / (double)regions;
		task = (t2 - t1) / (double)tasks;
		span = rtr_category_enabled("bench") ? (t3 - t2) / (double)tasks : 0;
	}
	printf("region_ns %.0f task_ns %.1f span_ns %.1f\n", region, task, span);
	return 0;
}
