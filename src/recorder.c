/* SPDX-License-Identifier: MIT */
/*
 * The recorder's lifecycle: rtr_start, rtr_flush, rtr_stop, rtr_stats_get, the exit
 * handler and fork. One recorder per process; these calls serialize on one lock.
 */
#include "recorder.h"

#include "common/atomic.h"
#include "memstack.h"
#include "ring/ring.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

RTR_API int rtr__active;

static pthread_mutex_t lifecycle_lock = PTHREAD_MUTEX_INITIALIZER;
static int running;	    /* under lifecycle_lock */
static int hooks_installed; /* under lifecycle_lock */
static struct rtr__session session;

static void stop_at_exit(void)
{
	rtr_stop();
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&lifecycle_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&lifecycle_lock);
}

/* The child has no writer thread: it records nothing until it starts its own. */
static void fork_child(void)
{
	/* R0': producers of the child see the recorder off */
	rtr_atomic_store_release(&rtr__active, 0);
	running = 0;
	rtr__rings_after_fork_child();
	pthread_mutex_init(&lifecycle_lock, NULL);
}

RTR_API int rtr_start(const struct rtr_config *cfg)
{
	struct rtr_config defaults;
	int err;

	if (cfg == NULL) {
		rtr_config_init(&defaults);
		cfg = &defaults;
	}
	pthread_mutex_lock(&lifecycle_lock);
	if (running) {
		pthread_mutex_unlock(&lifecycle_lock);
		return -EBUSY;
	}
	memset(&session, 0, sizeof(session));
	session.pid = getpid();
	session.start_tid = gettid();
	err = rtr__session_config(&session, cfg);
	if (err != 0)
		goto out;

	session.fd =
		open(session.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (session.fd < 0) {
		err = -errno;
		goto out;
	}
	rtr__clock_setup(&session.clock, session.cfg.clock);
	rtr__clock_publish(&session.clock); /* rtr_now_ns() follows the new clock */
	session.origin_real_ns = rtr__real_ns();
	session.origin_ticks = rtr__ticks();
	session.origin_ns = rtr__clock_ns(&session.clock, session.origin_ticks);
	rtr__rings_configure(session.cfg.ring_bytes, session.cfg.on_full);
	rtr__rings_barrier_init(); /* for the stop's exact totals (ring.h) */

	rtr__stack_warm(); /* backtrace(3) set up here, not in a traced call */
	err = rtr__writer_start(&session);
	if (err != 0) {
		close(session.fd);
		unlink(session.path);
		goto out;
	}
	if (!hooks_installed) {
		atexit(stop_at_exit);
		pthread_atfork(fork_prepare, fork_parent, fork_child);
		hooks_installed = 1;
	}
	running = 1;
	int state = rtr__filter_publish(&session.filter); /* RTR__STATE_ALL, or filtered */
	/* R0: pairs with A0 in rtr__recording(); clock, rings, writer and the category
	 * filter's table are ready */
	rtr_atomic_store_release(&rtr__active, state);
out:
	pthread_mutex_unlock(&lifecycle_lock);
	return err;
}

RTR_API int rtr_flush(void)
{
	int err = 0;

	pthread_mutex_lock(&lifecycle_lock);
	if (running)
		err = rtr__writer_flush();
	pthread_mutex_unlock(&lifecycle_lock);
	return err;
}

RTR_API int rtr_stop(void)
{
	int err = 0;

	pthread_mutex_lock(&lifecycle_lock);
	if (running) {
		/* R0: producers see the recorder off; the writer drains what came before */
		rtr_atomic_store_release(&rtr__active, 0);
		err = rtr__writer_stop();
		if (close(session.fd) != 0 && err == 0)
			err = -errno;
		running = 0;
	}
	pthread_mutex_unlock(&lifecycle_lock);
	return err;
}

RTR_API void rtr_stats_get(struct rtr_stats *out)
{
	rtr__writer_stats(out);
	out->running = rtr__recording() != 0; /* the state word may be above 1 */
}

RTR_API const char *rtr_trace_path(void)
{
	return session.path;
}

RTR_API const char *rtr_io_name(int io_method)
{
	switch (io_method) {
	case RTR_IO_URING:
		return "io_uring";
	case RTR_IO_SYNC:
		return "write";
	case RTR_IO_AUTO:
		return "auto";
	default:
		return "none";
	}
}
