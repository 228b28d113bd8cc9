/* SPDX-License-Identifier: MIT */
/*
 * The peers workload on LTTng-UST: the tracepoints of lttng_tp.h, recorded into a
 * session that bench/peers/run creates beforehand (a user-space channel with
 * --blocking-timeout=inf, and LTTNG_UST_ALLOW_BLOCKING=1 in this process's
 * environment, LTTng's equivalent of block mode: nothing is discarded). The output is
 * complete when `lttng stop SESSION` returns: stop waits until the consumer daemon
 * has written every sub-buffer to the trace folder. This program runs that command
 * itself (--lttng-session), so the clock includes it; stop_s= says how long it took
 * (lttng stop polls the consumer for pending data every 200 ms).
 */
#define _GNU_SOURCE
#include "lttng_tp.h"

#define TOOL_HAS_PRINT
static void tool_print(void);
#include "harness.h"

static const char *session;
static double stop_s; /* how long `lttng stop` took, of the end-to-end time */

static int tool_open(const struct peer_opts *o)
{
	(void)o->out; /* the session decides the folder */
	session = o->lttng_session;
	if (session == NULL) {
		fprintf(stderr, "peer_lttng: --lttng-session NAME is required\n");
		return -1;
	}
	return 0;
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
			lttng_ust_tracepoint(rtrpeer, span_begin_i64, i);
			lttng_ust_tracepoint(rtrpeer, span_end);
		}
	} else {
		for (long i = 0; i < n; i++) {
			lttng_ust_tracepoint(rtrpeer, span_begin);
			lttng_ust_tracepoint(rtrpeer, span_end);
		}
	}
}

static void tool_thread_close(void *t)
{
	(void)t;
}

static int tool_close(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "lttng --no-sessiond stop %s >/dev/null", session);
	unsigned long long t0 = peer_now_ns();
	int rc = system(cmd);
	stop_s = (double)(peer_now_ns() - t0) * 1e-9;
	if (rc != 0)
		fprintf(stderr, "peer_lttng: '%s' failed (%d)\n", cmd, rc);
	return rc != 0;
}

static void tool_print(void)
{
	printf(" stop_s=%.3f", stop_s);
}

int main(int argc, char **argv)
{
	return peer_main("lttng", argc, argv);
}
