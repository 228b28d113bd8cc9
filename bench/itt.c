/* SPDX-License-Identifier: MIT */
/*
 * Cost of an ITT task through the collector: N pairs of each, in one run,
 *
 *	plain	the loop alone: subtracted below
 *	span	rtr_begin()+rtr_end() (the bare span)
 *	itt	__itt_task_begin()+__itt_task_end() as a program calls them (domain's
 *		flags tested, then the pointer the collector filled), ids none
 *
 * The collector is loaded as ITT's static part loads it (INTEL_LIBITTNOTIFY64, or the
 * build's libringtrace-itt.so; see tests/progs/itt_client.c), and records through the
 * same libringtrace.so this program links. The recorder runs as in bench_instrument:
 * drop mode, a ring that holds two repetitions, the writer asleep and woken by a flush
 * between runs, so the figures are the producer's cost. Prints one line: ns
 * per pair of each (median of REPS, minus plain), the ratio itt/span, and the events
 * dropped (0 expected).
 *
 *	bench_itt [N] [REPS]
 */
#define _GNU_SOURCE
#include "itt/itt_abi.h"

#include <ringtrace.h>

#include "warm_ring.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static itt_domain_create_fn *domain_create;
static itt_string_handle_create_fn *string_handle_create;
static itt_task_begin_fn *task_begin;
static itt_task_end_fn *task_end;

static struct itt_api_info api_list[] = {
	{"__itt_domain_create", (void **)&domain_create, NULL, NULL, 1},
	{"__itt_string_handle_create", (void **)&string_handle_create, NULL, NULL, 1},
	{"__itt_task_begin", (void **)&task_begin, NULL, NULL, 1},
	{"__itt_task_end", (void **)&task_end, NULL, NULL, 1},
	{NULL, NULL, NULL, NULL, 0},
};
static struct itt_global global = {
	.magic = RTR_ITT_MAGIC, .mutex = PTHREAD_MUTEX_INITIALIZER, .api_list = api_list};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double run(int which, long n, const struct itt_domain *d, struct itt_string_handle *h)
{
	static const struct itt_id none;
	long x = 0;
	double t0 = now_ns();

	for (long i = 0; i < n; i++) {
		if (which == 1) {
			rtr_begin("bench", "span");
		} else if (which == 2 && d->flags && task_begin != NULL) {
			task_begin(d, none, none, h);
		}
		__asm__ volatile("" : "+r"(x));
		x++;
		if (which == 1) {
			rtr_end("bench", "span");
		} else if (which == 2 && d->flags && task_end != NULL) {
			task_end(d);
		}
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

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int reps = argc > 2 ? atoi(argv[2]) : 7;
	const char *lib = getenv("INTEL_LIBITTNOTIFY64");
	double t[3][64];
	struct rtr_config cfg;
	struct rtr_stats st;

	if (reps < 1 || reps > 64)
		reps = 7;
	void *h = dlopen(lib != NULL ? lib : RTR_BENCH_LIBITT, RTLD_NOW);
	itt_api_init_fn *init =
		h != NULL ? (itt_api_init_fn *)(uintptr_t)dlsym(h, RTR_ITT_API_INIT_NAME) : NULL;
	if (init == NULL) {
		fprintf(stderr, "bench_itt: no collector: %s\n", dlerror());
		return 1;
	}
	init(&global, -1);
	const struct itt_domain *d = domain_create("bench");
	struct itt_string_handle *name = string_handle_create("task");

	setenv("RINGTRACE_RING_KB", "131072", 0); /* 4 Mi records: a repetition's, twice */
	setenv("RINGTRACE_FLUSH_MS", "60000", 0); /* the writer sleeps while we measure */
	rtr_config_init(&cfg);
	if (getenv("RINGTRACE_FILE") == NULL)
		cfg.path = "/tmp/bench-itt-%p.json";
	if (rtr_start(&cfg) != 0)
		return 1;
	bench_warm_ring(); /* the timed runs on touched pages */
	/* Span and itt take turns going first, and each run starts 50 ms after the flush
	 * before it: the writer's file work after a flush lands on neither side. */
	static const int order[2][3] = {{0, 1, 2}, {0, 2, 1}};
	for (int r = 0; r < reps; r++) {
		for (int i = 0; i < 3; i++) {
			int w = order[r & 1][i];
			t[w][r] = run(w, n, d, name);
			rtr_flush();
			nanosleep(&(struct timespec){0, 50000000}, NULL);
		}
	}
	rtr_stats_get(&st);
	rtr_stop();
	for (int w = 0; w < 3; w++)
		qsort(t[w], (size_t)reps, sizeof(double), by_value);
	double plain = t[0][reps / 2], span = t[1][reps / 2] - plain, itt = t[2][reps / 2] - plain;
	printf("pairs=%ld reps=%d plain_ns=%.2f span_ns=%.2f itt_ns=%.2f ratio=%.2f dropped=%llu\n",
	       n, reps, plain, span, itt, itt / span, (unsigned long long)st.events_dropped);
	if (getenv("RTR_BENCH_KEEP") == NULL)
		remove(rtr_trace_path());
	return 0;
}
