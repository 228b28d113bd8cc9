/* SPDX-License-Identifier: MIT */
/*
 * The OMPT tool's cost: empty parallel regions and empty explicit tasks, timed with
 * and without libringtrace-omp (bench/omp_cost.sh runs both and takes medians).
 * Built with clang -fopenmp (LLVM's runtime); the tool comes in through
 * OMP_TOOL_LIBRARIES, so the program is the same binary either way.
 *
 *	omp_cost [REGIONS [TASKS [THREADS]]]	prints "region_ns R task_ns T"
 */
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

	printf("region_ns %.0f task_ns %.1f\n", (t1 - t0) / (double)regions,
	       (t2 - t1) / (double)tasks);
	return 0;
}
