/* SPDX-License-Identifier: MIT */
/*
 * The OpenMP program test_omp traces (built with clang -fopenmp, run with
 * OMP_TOOL_LIBRARIES naming libringtrace-omp): what it does is what the test counts.
 *
 *	an outer parallel region of OUTER threads, each thread opening a nested one of
 *	INNER threads; a `for` of LOOP_N iterations over a team of TEAM threads, an
 *	explicit barrier, a critical in every thread; one thread creating TASKS tasks,
 *	waited for with taskwait.
 *
 * With INTEL_LIBITTNOTIFY64 set it first names its thread "omp main" through ITT
 * (itt_calls.h), in a constructor: before the runtime starts, at main's first line
 * (the runtime names its threads through ITT too).
 *
 * A comment "src: <what>" marks each construct's line: test_omp finds it there and
 * expects it in the construct's "src" argument.
 */
#include "itt_calls.h"

#include <omp.h>
#include <stdio.h>

#define OUTER  2
#define INNER  2
#define TEAM   4
#define LOOP_N 1000
#define TASKS  8

static volatile long sink;

__attribute__((constructor)) static void name_main_thread(void)
{
	if (getenv("INTEL_LIBITTNOTIFY64") == NULL)
		return;
	if (itt_load() != 0 || itt_thread_set_name == NULL)
		exit(5);
	itt_thread_set_name("omp main");
}

int main(void)
{
	omp_set_max_active_levels(2);
#pragma omp parallel num_threads(OUTER) /* src: outer */
	{
#pragma omp parallel num_threads(INNER) /* src: inner */
		sink += omp_get_thread_num();
	}

	long sum = 0;
#pragma omp parallel num_threads(TEAM) /* src: team */
	{
#pragma omp for reduction(+ : sum) /* src: for */
		for (int i = 0; i < LOOP_N; i++)
			sum += i;
#pragma omp barrier  /* src: barrier */
#pragma omp critical /* src: critical */
		sink += 1;
#pragma omp single /* src: single */
		{
			for (int t = 0; t < TASKS; t++) {
#pragma omp task /* src: task */
				sink += t;
			}
#pragma omp taskwait /* src: taskwait */
		}
	}
	printf("%ld\n", sum);
	return 0;
}
