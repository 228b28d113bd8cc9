/* SPDX-License-Identifier: MIT */
/*
 * The workload every peer program runs, shared so that the tools differ only in the
 * calls they make. Include it once, after defining the five tool hooks:
 *
 *	static int tool_open(const struct peer_opts *o);      before the clock starts
 *	static void *tool_thread_open(int tid);               in each thread, untimed
 *	static void tool_record(void *t, long n, int with_arg); the timed loop: n spans
 *	static void tool_thread_close(void *t);               in each thread, untimed
 *	static int tool_close(void);                          until the output is complete
 *
 * and optionally `static void tool_print(void)` (extra key=value pairs, after the
 * common ones) guarded by `#define TOOL_HAS_PRINT`.
 *
 *	peer_<tool> --out PATH [--spans N] [--threads T] [--arg 0|1] [--lttng-session NAME]
 *
 * N spans in total (default 10^7), split evenly over T threads (default 1). A span is
 * a begin and an end event with a static name; with --arg 1 the begin carries one
 * 64-bit integer (the loop index). The threads start their loops together (a
 * barrier). Timing:
 *
 *	producer_ns_per_span	a thread's loop time / its spans; with several threads the
 *				upper median (the slower of two), as bench/e2e.c does
 *	e2e_s			from before the threads are created until tool_close()
 *				returns, i.e. until the output is complete on disk
 *	peak_rss_kib		getrusage(RUSAGE_SELF) after tool_close()
 *
 * One line of key=value pairs goes to stdout. Exit status 0, or 1 if the tool failed.
 */
#ifndef PEERS_HARNESS_H
#define PEERS_HARNESS_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define PEER_MAX_THREADS 64

struct peer_opts {
	const char *tool;
	const char *out;
	const char *lttng_session;
	long spans; /* in total */
	int threads;
	int with_arg;
};

static int tool_open(const struct peer_opts *o);
static void *tool_thread_open(int tid);
static void tool_record(void *t, long n, int with_arg);
static void tool_thread_close(void *t);
static int tool_close(void);

static inline unsigned long long peer_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

struct peer_thread {
	pthread_t th;
	int tid;
	long spans;
	int with_arg;
	pthread_barrier_t *start;
	double ns_per_span;
};

static void *peer_thread_main(void *arg)
{
	struct peer_thread *pt = (struct peer_thread *)arg;
	void *t = tool_thread_open(pt->tid);

	pthread_barrier_wait(pt->start);
	unsigned long long t0 = peer_now_ns();
	tool_record(t, pt->spans, pt->with_arg);
	pt->ns_per_span = (double)(peer_now_ns() - t0) / (double)pt->spans;
	tool_thread_close(t);
	return NULL;
}

static int peer_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int peer_main(const char *tool, int argc, char **argv)
{
	struct peer_opts o;
	memset(&o, 0, sizeof(o));
	o.tool = tool;
	o.spans = 10000000;
	o.threads = 1;
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];
		if (strcmp(k, "--out") == 0) {
			o.out = v;
		} else if (strcmp(k, "--spans") == 0) {
			o.spans = (long)strtod(v, NULL);
		} else if (strcmp(k, "--threads") == 0) {
			o.threads = atoi(v);
		} else if (strcmp(k, "--arg") == 0) {
			o.with_arg = atoi(v) != 0;
		} else if (strcmp(k, "--lttng-session") == 0) {
			o.lttng_session = v;
		} else {
			fprintf(stderr, "peer_%s: unknown option %s\n", tool, k);
			return 2;
		}
	}
	if (o.out == NULL || o.threads < 1 || o.threads > PEER_MAX_THREADS || o.spans < o.threads) {
		fprintf(stderr, "usage: peer_%s --out PATH [--spans N] [--threads T] [--arg 0|1]\n",
			tool);
		return 2;
	}

	if (tool_open(&o) != 0)
		return 1;

	static struct peer_thread pt[PEER_MAX_THREADS];
	double ns[PEER_MAX_THREADS];
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, (unsigned)o.threads);
	unsigned long long t0 = peer_now_ns();
	for (int i = 0; i < o.threads; i++) {
		pt[i].tid = i;
		pt[i].spans = o.spans / o.threads + (i < o.spans % o.threads);
		pt[i].with_arg = o.with_arg;
		pt[i].start = &start;
		pthread_create(&pt[i].th, NULL, peer_thread_main, &pt[i]);
	}
	for (int i = 0; i < o.threads; i++) {
		pthread_join(pt[i].th, NULL);
		ns[i] = pt[i].ns_per_span;
	}
	int err = tool_close();
	double e2e = (double)(peer_now_ns() - t0) * 1e-9;

	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	qsort(ns, (size_t)o.threads, sizeof(ns[0]), peer_cmp_double);
	printf("tool=%s spans=%ld threads=%d arg=%d producer_ns_per_span=%.1f e2e_s=%.3f "
	       "peak_rss_kib=%ld close=%d",
	       tool, o.spans, o.threads, o.with_arg, ns[o.threads / 2], e2e, ru.ru_maxrss, err);
#ifdef TOOL_HAS_PRINT
	tool_print();
#endif
	printf("\n");
	return err != 0;
}

#endif /* PEERS_HARNESS_H */
