/* SPDX-License-Identifier: MIT */
/*
 * The peers workload on ringtrace: rtr_begin/rtr_end with a static name (or
 * rtr_begin_args with one RTR_ARG_I64), block mode, default ring size (1 MiB per
 * thread), default I/O, the clock from RINGTRACE_CLOCK (auto by default). The output
 * is complete when rtr_stop() returns.
 * Extra keys: events recorded, written and dropped, bytes written, I/O method, clock,
 * and block mode's waits (events that waited for ring space, the time in ms).
 */
#define _GNU_SOURCE
#include <ringtrace.h>

#define TOOL_HAS_PRINT
static void tool_print(void);
#include "harness.h"

static int tool_open(const struct peer_opts *o)
{
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	cfg.path = o->out;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	int err = rtr_start(&cfg);
	if (err != 0)
		fprintf(stderr, "peer_ringtrace: rtr_start: %s\n", strerror(-err));
	return err;
}

static void *tool_thread_open(int tid)
{
	(void)tid;
	return NULL;
}

static void tool_record(void *t, long n, int with_arg)
{
	(void)t;
	if (with_arg) {
		for (long i = 0; i < n; i++) {
			struct rtr_arg a[] = {RTR_ARG_I64("i", i)};
			rtr_begin_args("app", "span", a, 1);
			rtr_end("app", "span");
		}
	} else {
		for (long i = 0; i < n; i++) {
			rtr_begin("app", "span");
			rtr_end("app", "span");
		}
	}
}

static void tool_thread_close(void *t)
{
	(void)t;
}

static int tool_close(void)
{
	return rtr_stop();
}

static void tool_print(void)
{
	struct rtr_stats st;

	rtr_stats_get(&st);
	printf(" recorded=%llu written=%llu dropped=%llu bytes=%llu io=%s clock=%s waited=%llu "
	       "waited_ms=%.1f",
	       (unsigned long long)st.events_recorded, (unsigned long long)st.events_written,
	       (unsigned long long)st.events_dropped, (unsigned long long)st.bytes_written,
	       rtr_io_name(st.io_method), st.clock == RTR_CLOCK_TSC ? "tsc" : "monotonic",
	       (unsigned long long)st.events_waited_full, (double)st.waited_ns / 1e6);
}

int main(int argc, char **argv)
{
	return peer_main("ringtrace", argc, argv);
}
