/* SPDX-License-Identifier: MIT */
/*
 * Cost of a Kokkos kernel through the tool: N pairs of each, in one run,
 *
 *	plain	the loop alone: subtracted below
 *	span	rtr_begin()+rtr_end() (the bare span)
 *	kernel	kokkosp_begin_parallel_for()+kokkosp_end_parallel_for() as Kokkos calls
 *		them (through the pointers it looked up), the name "axpy" at one address
 *	long	the same with a 53-byte name, as Kokkos names a view's initialization
 *	region	kokkosp_push_profile_region("step")+kokkosp_pop_profile_region()
 *
 * The tool is loaded as Kokkos loads it (KOKKOS_TOOLS_LIBS, or the build's
 * libringtrace-kokkos.so; see tests/progs/kokkos_client.c), and records through the
 * same libringtrace.so this program links. The recorder runs as in bench_itt: drop
 * mode, a ring that holds two repetitions, the writer asleep and woken by a flush
 * between runs, so the figures are the producer's cost. Prints one line: ns per pair
 * of each (median of REPS, minus plain), the ratios kernel/span, long/span and
 * region/span, and the events dropped (0 expected).
 *
 *	bench_kokkos [N] [REPS]
 */
#define _GNU_SOURCE
#include "kokkos/kokkos_abi.h"

#include <ringtrace.h>

#include "warm_ring.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static kokkosp_begin_fn *begin_for;
static kokkosp_end_fn *end_for;
static kokkosp_name_fn *push_region;
static kokkosp_void_fn *pop_region;
static char short_name[] = "axpy";
static char long_name[] = "Kokkos::View::initialization [residual_workspace_vec]";

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double run(int which, long n)
{
	const char *name = which == 3 ? long_name : short_name;
	long x = 0;
	uint64_t id = 0;
	double t0 = now_ns();

	for (long i = 0; i < n; i++) {
		if (which == 1)
			rtr_begin("bench", "span");
		else if (which == 4)
			push_region("step");
		else if (which >= 2)
			begin_for(name, 0, &id);
		__asm__ volatile("" : "+r"(x));
		x++;
		if (which == 1)
			rtr_end("bench", "span");
		else if (which == 4)
			pop_region();
		else if (which >= 2)
			end_for(id);
	}
	double t = now_ns() - t0;
	if (x != n)
		abort();
	return t / (double)n;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void *symbol(void *lib, const char *name)
{
	void *f = dlsym(lib, name);
	if (f == NULL) {
		fprintf(stderr, "bench_kokkos: no %s in the tool\n", name);
		exit(1);
	}
	return f;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int reps = argc > 2 ? atoi(argv[2]) : 7;
	const char *path = getenv("KOKKOS_TOOLS_LIBS");
	double t[5][64];
	struct rtr_config cfg;
	struct rtr_stats st;

	if (reps < 1 || reps > 64)
		reps = 7;
	void *lib = dlopen(path != NULL ? path : RTR_BENCH_LIBKOKKOS, RTLD_NOW | RTLD_GLOBAL);
	if (lib == NULL) {
		fprintf(stderr, "bench_kokkos: no tool: %s\n", dlerror());
		return 1;
	}
	begin_for = (kokkosp_begin_fn *)(uintptr_t)symbol(lib, "kokkosp_begin_parallel_for");
	end_for = (kokkosp_end_fn *)(uintptr_t)symbol(lib, "kokkosp_end_parallel_for");
	push_region = (kokkosp_name_fn *)(uintptr_t)symbol(lib, "kokkosp_push_profile_region");
	pop_region = (kokkosp_void_fn *)(uintptr_t)symbol(lib, "kokkosp_pop_profile_region");

	setenv("RINGTRACE_RING_KB", "131072", 0); /* 4 Mi records: a repetition is 3 Mi */
	setenv("RINGTRACE_FLUSH_MS", "60000", 0); /* the writer sleeps while we measure */
	rtr_config_init(&cfg);
	int own_file = getenv("RINGTRACE_FILE") == NULL;
	if (own_file)
		cfg.path = "/tmp/bench-kokkos-%p.json";
	if (rtr_start(&cfg) != 0)
		return 1;
	bench_warm_ring(); /* the timed runs on touched pages */
	/* as Kokkos starts the tool: it keeps this session */
	((kokkosp_init_fn *)(uintptr_t)symbol(lib, "kokkosp_init_library"))(
		0, RTR_KOKKOS_INTERFACE_3_4, 0, NULL);
	/* The kinds take turns going first, and each run starts 50 ms after the flush
	 * before it: the writer's file work after a flush lands on none of them. */
	static const int order[2][5] = {{0, 1, 2, 3, 4}, {0, 4, 3, 2, 1}};
	for (int r = 0; r < reps; r++) {
		for (int i = 0; i < 5; i++) {
			int w = order[r & 1][i];
			t[w][r] = run(w, n);
			rtr_flush();
			nanosleep(&(struct timespec){0, 50000000}, NULL);
		}
	}
	((kokkosp_void_fn *)(uintptr_t)symbol(lib, "kokkosp_finalize_library"))();
	rtr_stats_get(&st);
	rtr_stop();
	for (int w = 0; w < 5; w++)
		qsort(t[w], (size_t)reps, sizeof(double), by_value);
	double plain = t[0][reps / 2], span = t[1][reps / 2] - plain;
	double kernel = t[2][reps / 2] - plain, lng = t[3][reps / 2] - plain;
	double region = t[4][reps / 2] - plain;
	printf("pairs=%ld reps=%d plain_ns=%.2f span_ns=%.2f kernel_ns=%.2f long_ns=%.2f "
	       "region_ns=%.2f ratio=%.2f long_ratio=%.2f region_ratio=%.2f dropped=%llu\n",
	       n, reps, plain, span, kernel, lng, region, kernel / span, lng / span, region / span,
	       (unsigned long long)st.events_dropped);
	if (own_file && getenv("RTR_BENCH_KEEP") == NULL)
		remove(rtr_trace_path()); /* ours only: RINGTRACE_FILE may name a device */
	return 0;
}
