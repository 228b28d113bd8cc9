/* SPDX-License-Identifier: MIT */
/*
 * End to end: N producer threads record M events each of a realistic mix in block
 * mode; the figure is what it takes until the file is closed.
 *
 *	e2e [--threads N] [--events M] [--io auto|uring|sync] [--ring-kb K]
 *	    [--path FILE] [--mix mix|spans|arg] [--seconds S]
 *
 * --seconds S paces each producer so that its events are spread evenly over S seconds
 * (it waits on the clock between iterations): a trace that spans S seconds, for the
 * commands that read a time window of it (bench/tools_speed.sh).
 *
 * Prints one line of key=value pairs: producer ns per event (median over threads),
 * writer events per second (events / wall time to rtr_stop() returning), bytes per
 * event, peak RSS, events dropped (must be 0 in block mode), the I/O method, and how
 * many events waited for ring space and for how long (0 when the writer keeps up).
 */
#define _GNU_SOURCE
#include <ringtrace.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static long events_per_thread = 10000000;
/* --mix: the workload each producer records */
enum mix { MIX_MIX, MIX_SPANS, MIX_ARG };
static enum mix mix = MIX_MIX;
/* --seconds: the span the events are paced over (0: as fast as they go) */
static double pace_s;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* With --seconds: wait until iteration i of n is due, from t0. */
static void pace(long i, long n, double t0)
{
	if (pace_s > 0)
		while (now_s() - t0 < pace_s * (double)i / (double)n)
			;
}

/* The mix: spans with and without arguments, scopes, counters, instants. Every
 * loop iteration records 10 events. */
static void record_mix(long iterations)
{
	double t0 = now_s();

	for (long i = 0; i < iterations; i++) {
		pace(i, iterations, t0);
		rtr_begin("app", "iteration");
		{
			RTR_SCOPE("app", "kernel");
		}
		{
			RTR_SCOPE("app", "kernel 2");
		}
		rtr_counter_i64("app", "bytes", i);
		struct rtr_arg a[] = {RTR_ARG_I64("i", i)};
		rtr_begin_args("io", "read", a, 1);
		rtr_end("io", "read");
		rtr_instant("app", "tick");
		rtr_begin("app", "inner");
		rtr_end("app", "inner");
		rtr_end("app", "iteration");
	}
}

static void record_spans(long iterations)
{
	double t0 = now_s();

	for (long i = 0; i < iterations; i++) {
		pace(i, iterations, t0);
		rtr_begin("app", "span");
		rtr_end("app", "span");
	}
}

/* A span with one integer argument on its begin: the argument path of a folded X. */
static void record_arg_spans(long iterations)
{
	double t0 = now_s();

	for (long i = 0; i < iterations; i++) {
		pace(i, iterations, t0);
		struct rtr_arg a[] = {RTR_ARG_I64("i", i)};
		rtr_begin_args("app", "span", a, 1);
		rtr_end("app", "span");
	}
}

static void *producer(void *arg)
{
	double *ns_per_event = arg;
	double t0 = now_s();

	if (mix == MIX_SPANS)
		record_spans(events_per_thread / 2);
	else if (mix == MIX_ARG)
		record_arg_spans(events_per_thread / 2);
	else
		record_mix(events_per_thread / 10);
	*ns_per_event = (now_s() - t0) * 1e9 / (double)events_per_thread;
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct rtr_config cfg;
	int threads = 2;

	rtr_config_init(&cfg);
	cfg.path = "/tmp/ringtrace-e2e.json";
	cfg.on_full = RTR_ON_FULL_BLOCK;
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];
		if (strcmp(k, "--threads") == 0) {
			threads = atoi(v);
		} else if (strcmp(k, "--events") == 0) {
			events_per_thread = (long)strtod(v, NULL);
		} else if (strcmp(k, "--io") == 0) {
			cfg.io = strcmp(v, "sync") == 0	   ? RTR_IO_SYNC
				 : strcmp(v, "uring") == 0 ? RTR_IO_URING
							   : RTR_IO_AUTO;
		} else if (strcmp(k, "--ring-kb") == 0) {
			cfg.ring_bytes = (size_t)atol(v) << 10;
		} else if (strcmp(k, "--path") == 0) {
			cfg.path = v;
		} else if (strcmp(k, "--seconds") == 0) {
			pace_s = strtod(v, NULL);
		} else if (strcmp(k, "--mix") == 0) {
			mix = strcmp(v, "spans") == 0 ? MIX_SPANS
			      : strcmp(v, "arg") == 0 ? MIX_ARG
						      : MIX_MIX;
		} else {
			fprintf(stderr, "e2e: unknown option %s\n", k);
			return 2;
		}
	}
	if (threads < 1 || threads > 256 || events_per_thread < 10) {
		fprintf(stderr, "e2e: bad --threads or --events\n");
		return 2;
	}

	int err = rtr_start(&cfg);
	if (err != 0) {
		fprintf(stderr, "e2e: rtr_start: %s\n", strerror(-err));
		return 1;
	}
	pthread_t th[256];
	double ns[256];
	double t0 = now_s();
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, producer, &ns[i]);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	err = rtr_stop();
	double wall = now_s() - t0;

	struct rtr_stats st;
	struct rusage ru;
	rtr_stats_get(&st);
	getrusage(RUSAGE_SELF, &ru);
	qsort(ns, (size_t)threads, sizeof(ns[0]), cmp_double);
	printf("threads=%d events=%llu producer_ns_per_event=%.1f writer_events_per_s=%.0f "
	       "wall_s=%.3f bytes_per_event=%.1f peak_rss_kib=%ld dropped=%llu io=%s "
	       "ring_kib=%zu waited=%llu waited_ms=%.1f stop=%d\n",
	       threads, (unsigned long long)st.events_recorded, ns[threads / 2],
	       (double)st.events_written / wall, wall,
	       (double)st.bytes_written / (double)st.events_written, ru.ru_maxrss,
	       (unsigned long long)st.events_dropped, rtr_io_name(st.io_method),
	       cfg.ring_bytes >> 10, (unsigned long long)st.events_waited_full,
	       (double)st.waited_ns / 1e6, err);
	return err != 0 || st.events_dropped != 0;
}
