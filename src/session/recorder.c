/* SPDX-License-Identifier: MIT */
/*
 * The recorder's lifecycle: rtr_start, rtr_flush, rtr_stop, rtr_stats_get, the exit
 * handler, fork and autostart. One recorder per process; these calls serialize on one
 * lock.
 *
 * Autostart (RINGTRACE_AUTOSTART=1): a constructor starts the recorder from the
 * environment, so a preloaded library traces a program that never calls us; the exit
 * handler finishes the file. The program may still call rtr_start(): the first such
 * call adopts the autostarted session (returns 0, records on), and its rtr_stop() ends
 * it as if it had started it. A module's start (rtr__start_module(): the MPI module at
 * MPI_Init, the OMPT tool) never adopts it: -EBUSY, the session stays the program's
 * to adopt and the exit's to end, whatever order the modules start in. A constructor runs once per
 * exec, so a forked child does not autostart (fork_child() leaves it without a recorder, as
 * always); a child that execs a program with the variable still set autostarts in its own file.
 * Constructors run in dependency order: the C library and ours are ready, other
 * libraries' constructors may run before or after, and events they record before it
 * are not recorded, as before any rtr_start().
 */
#include "session/session.h"

#include "common/atomic.h"
#include "common/mem.h"
#include "format/profile/profile.h"
#include "path/path.h"
#include "producer/events.h"
#include "producer/memstack.h"
#include "ring/ring.h"
#include "session/signals.h"
#include "sink/trace_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

RTR_API int rtr__active;

static pthread_mutex_t lifecycle_lock = PTHREAD_MUTEX_INITIALIZER;
static int running;	    /* under lifecycle_lock */
static int hooks_installed; /* under lifecycle_lock */
static int autostarted;	    /* under lifecycle_lock: running, and not yet adopted */
static struct rtr__session session;

static void stop_at_exit(void)
{
	rtr_stop();
}

/* Both locks are held across fork(), so the child's copies of the session and the
 * ring registry are whole (in that order, as rtr_start() takes them). */
static void fork_prepare(void)
{
	pthread_mutex_lock(&lifecycle_lock);
	rtr__rings_fork_prepare();
}

static void fork_parent(void)
{
	rtr__rings_fork_parent();
	pthread_mutex_unlock(&lifecycle_lock);
}

/*
 * The child has no writer thread: it records nothing until it starts its own, in a
 * file of its own. It lets go of the parent's session (memory, the trace fd and the
 * io_uring fds: a FIFO reader sees EOF when the parent stops, whatever children live;
 * nothing of the parent's file is written or waited for), of the rings of threads
 * that do not exist here (flow ids: events.c forgets the parent's itself).
 */
static void fork_child(void)
{
	/* R0': producers of the child see the recorder off */
	rtr_atomic_store_release(&rtr__active, 0);
	rtr__rings_after_fork_child();
	rtr__writer_after_fork_child();
	/* No writer here: the program's dispositions back (ours pass signals on until
	 * then, seeing another pid) */
	rtr__signals_uninstall();
	running = 0;
	autostarted = 0;
	/* Held across fork() by this thread, which is the child's only one: its owner
	 * unlocks it (initializing it over a held lock is undefined). */
	pthread_mutex_unlock(&lifecycle_lock);
}

/* The path's missing directories, once per start (segments and snapshots go beside
 * the first file); the one that cannot be made is named on stderr. */
static int make_dirs(const struct rtr__session *s)
{
	char failed[PATH_MAX];
	int err = rtr__path_make_dirs(s->path, failed, sizeof(failed));

	if (err != 0)
		fprintf(stderr, "ringtrace: cannot create the directory %s: %s\n", failed,
			strerror(-err));
	return err;
}

static int open_trace(struct rtr__session *s)
{
	return rtr__trace_open(s->path, s->pid, s->cfg.open_timeout_ms, &s->fd, s->tmp_path,
			       sizeof(s->tmp_path), &s->truncate);
}

/* Why a start failed, once, on stderr: a program that ignores the result must not be
 * left wondering where its trace went. */
static void report_start_error(const char *path, int err)
{
	fprintf(stderr, "ringtrace: cannot start: %s: %s%s\n", path, strerror(-err),
		err == -ENXIO	? " (a FIFO no reader opened within RINGTRACE_OPEN_TIMEOUT_MS)"
		: err == -EBUSY ? " (the last session's writer is still stuck in its file)"
				: "");
}

/* Signal handlers that could not be installed, once on stderr; the start goes on. */
static void report_signals_error(const struct rtr__session *s, int err)
{
	fprintf(stderr,
		"ringtrace: cannot handle the signals \"%s\" (snapshot \"%s\"): %s; "
		"recording without\n",
		s->signals, s->snapshot_signal_name, strerror(-err));
}

/* Who starts: the program (rtr_start()), a module on its behalf (rtr__start_module())
 * or the autostart constructor. */
enum starter { BY_PROGRAM, BY_MODULE, BY_AUTOSTART };

static int start(const struct rtr_config *cfg, enum starter by)
{
	struct rtr_config defaults;
	int err;

	if (cfg == NULL) {
		rtr_config_init(&defaults);
		cfg = &defaults;
	}
	pthread_mutex_lock(&lifecycle_lock);
	if (running) {
		/* The program's first start finds the autostarted session: it is its own
		 * from now on (its cfg is not applied: the file is already open). A
		 * module's start leaves it to the program: a module that took it over
		 * would end it at its own stop (the MPI module's at MPI_Finalize), before
		 * what the other modules record up to the exit. */
		err = autostarted && by == BY_PROGRAM ? 0 : -EBUSY;
		if (by == BY_PROGRAM)
			autostarted = 0;
		pthread_mutex_unlock(&lifecycle_lock);
		return err;
	}
	memset(&session, 0, sizeof(session));
	session.pid = getpid();
	session.start_tid = gettid();
	err = rtr__session_config(&session, cfg);
	if (err != 0) {
		report_start_error(session.path[0] != '\0' ? session.path : cfg->path, err);
		goto out;
	}

	if (!rtr__writer_idle()) {
		err = -EBUSY; /* before the file is touched */
		report_start_error(session.path, err);
		goto out;
	}
	session.fd = -1; /* flight mode: no file until a snapshot */
	err = make_dirs(&session);
	if (err == 0 && session.cfg.mode != RTR_MODE_FLIGHT)
		err = open_trace(&session);
	if (err != 0) {
		report_start_error(session.path, err);
		goto out;
	}
	rtr__clock_setup(&session.clock, session.cfg.clock, rtr__config_clock_offset_ns());
	rtr__clock_publish(&session.clock); /* rtr_now_ns() follows the new clock */
	session.origin_real_ns = rtr__real_ns();
	session.origin_ticks = rtr__ticks();
	session.origin_ns = rtr__clock_ns(&session.clock, session.origin_ticks);
	rtr__rings_configure(session.cfg.ring_bytes, session.cfg.on_full);

	/* rtr__session_config() has resolved RTR_FORMAT_AUTO by the path's suffix. */
	int profile = session.cfg.mode == RTR_MODE_PROFILE;
	err = rtr__writer_start(&session,
				profile					    ? &rtr__profile_format
				: session.cfg.format == RTR_FORMAT_PERFETTO ? &rtr__perfetto_format
									    : &rtr__json_format,
				profile || session.cfg.profile ? &rtr__profiler : NULL);
	if (err != 0) {
		if (session.fd >= 0)
			close(session.fd);
		if (session.tmp_path[0] != '\0')
			unlink(session.tmp_path);
		report_start_error(session.path, err);
		goto out;
	}
	if (session.tmp_path[0] != '\0') {
		/* The head is in the file: from here a kill leaves a readable trace. */
		if (rename(session.tmp_path, session.path) != 0) {
			err = -errno;
			rtr__writer_stop(); /* closes the file */
			unlink(session.tmp_path);
			report_start_error(session.path, err);
			goto out;
		}
		session.tmp_path[0] = '\0';
	}
	rtr__stack_warm();	   /* backtrace(3) set up here, not in a traced call */
	rtr__rings_barrier_init(); /* for the stop's exact totals (ring.h); after the head */
	if (!hooks_installed) {
		atexit(stop_at_exit);
		pthread_atfork(fork_prepare, fork_parent, fork_child);
		hooks_installed = 1;
	}
	/* Last: a fatal signal from here on finds a writer to finish the file. A failure
	 * leaves the signals to the program, and the recording goes on. */
	struct rtr__sigset fatal = {session.fatal_signals};
	int sig_err =
		rtr__signals_install(fatal, session.snapshot_signal, session.cfg.stop_timeout_ms);
	if (sig_err != 0)
		report_signals_error(&session, sig_err);
	running = 1;
	autostarted = by == BY_AUTOSTART;
	int state = rtr__filter_publish(&session.filter); /* RTR__STATE_ALL, or filtered */
	/* R0: pairs with A0 in rtr__recording(); clock, rings, writer and the category
	 * filter's table are ready */
	rtr_atomic_store_release(&rtr__active, state);
out:
	pthread_mutex_unlock(&lifecycle_lock);
	return err;
}

RTR_API int rtr_start(const struct rtr_config *cfg)
{
	return start(cfg, BY_PROGRAM);
}

RTR_API int rtr__start_module(const struct rtr_config *cfg)
{
	return start(cfg, BY_MODULE);
}

RTR_API int rtr_flush(void)
{
	uint32_t ticket;
	unsigned timeout_ms;

	pthread_mutex_lock(&lifecycle_lock);
	if (!running) {
		pthread_mutex_unlock(&lifecycle_lock);
		return 0;
	}
	ticket = rtr__writer_flush_request();
	timeout_ms = session.cfg.stop_timeout_ms;
	pthread_mutex_unlock(&lifecycle_lock);
	/* Not under the lock: a slow file must hold neither fork() nor rtr_stop() up. A
	 * stop meanwhile serves every ticket. */
	return rtr__writer_flush_wait(ticket, timeout_ms);
}

RTR_API int rtr_stop(void)
{
	int err = 0;

	pthread_mutex_lock(&lifecycle_lock);
	if (running) {
		/* Before the writer stops: a signal from here on takes the program's course. */
		rtr__signals_uninstall();
		/* R0: producers see the recorder off; the writer drains what came before */
		rtr_atomic_store_release(&rtr__active, 0);
		err = rtr__writer_stop(); /* closes the file */
		running = 0;
		autostarted = 0;
	}
	pthread_mutex_unlock(&lifecycle_lock);
	return err;
}

RTR_API int rtr_snapshot(const char *path)
{
	unsigned timeout_ms;

	pthread_mutex_lock(&lifecycle_lock);
	if (!running) {
		pthread_mutex_unlock(&lifecycle_lock);
		return -ENOTCONN;
	}
	timeout_ms = session.cfg.stop_timeout_ms;
	int flight = session.cfg.mode == RTR_MODE_FLIGHT;
	int rotating = session.cfg.max_mb > 0 || session.cfg.max_seconds > 0;
	pthread_mutex_unlock(&lifecycle_lock);
	/* Not under the lock, as rtr_flush(): a stop meanwhile serves the request. */
	return rtr__writer_snapshot(path, timeout_ms, flight, rotating);
}

/* ------------------------------------------------------------------------- */
/* The job profile, for the MPI module (docs/profile.md)                      */

RTR_API int rtr__profile_job_path(char *out, size_t size)
{
	char path[PATH_MAX];
	int err = -ENOTCONN;

	pthread_mutex_lock(&lifecycle_lock);
	if (running && (session.cfg.mode == RTR_MODE_PROFILE || session.cfg.profile)) {
		/* beside rank 0's manifest, with the pattern's suffix */
		err = rtr__path_job(path, sizeof(path), session.pattern, session.pid, session.host,
				    NULL);
		if (err == 0) {
			int n = snprintf(out, size, "%s%s", path,
					 session.cfg.mode == RTR_MODE_PROFILE ? ""
									      : ".profile.json");
			err = n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
		}
	}
	pthread_mutex_unlock(&lifecycle_lock);
	return err;
}

RTR_API int rtr__profile_export(char **data, size_t *len, size_t *cap, int freeze)
{
	pthread_mutex_lock(&lifecycle_lock);
	if (!running) {
		pthread_mutex_unlock(&lifecycle_lock);
		return -ENOTCONN;
	}
	uint32_t ticket = rtr__writer_flush_request();
	unsigned timeout_ms = session.cfg.stop_timeout_ms;
	pthread_mutex_unlock(&lifecycle_lock);
	/* every event recorded before is in the profile; a stop meanwhile serves it */
	(void)rtr__writer_flush_wait(ticket, timeout_ms);
	pthread_mutex_lock(&lifecycle_lock);
	int err = running ? rtr__writer_profile_export(data, len, cap, freeze) : -ENOTCONN;
	pthread_mutex_unlock(&lifecycle_lock);
	return err;
}

RTR_API void rtr__profile_free(char *data, size_t cap)
{
	rtr__mem_unmap(data, cap);
}

RTR_API int rtr__profile_job_write(const char *path, int world, const char *const *data,
				   const size_t *len, uint64_t began_ns)
{
	return rtr__prof_job_write(path, getpid(), world, data, len, began_ns);
}

RTR_API int rtr_profile_walk(rtr_profile_fn fn, void *user)
{
	char *data = NULL;
	size_t len = 0, cap = 0;
	int err = rtr__profile_export(&data, &len, &cap, 0);

	if (err != 0)
		return err;
	err = rtr__prof_export_walk(data, len, fn, user); /* no lock held: fn may record */
	rtr__profile_free(data, cap);
	return err;
}

/* The first layout of struct rtr_stats, which (rtr_stats_get)() writes. */
#define STATS_V1_SIZE (offsetof(struct rtr_stats, version) + sizeof(uint32_t))

RTR_API void rtr_stats_get_sized(struct rtr_stats *out, size_t size)
{
	struct rtr_stats st;
	size_t n = size < sizeof(st) ? size : sizeof(st);

	rtr__writer_stats(&st);
	st.running = rtr__recording() != 0; /* the state word may be above 1 */
	st.size = (uint32_t)n;
	st.version = RTR_STATS_VERSION;
	memcpy(out, &st, n); /* only what the caller's struct holds */
	if (size > n)
		memset((char *)out + n, 0, size - n); /* fields of a newer header */
}

RTR_API void(rtr_stats_get)(struct rtr_stats *out)
{
	rtr_stats_get_sized(out, STATS_V1_SIZE);
}

RTR_API const char *rtr_version(void)
{
	return RTR_VERSION_STRING;
}

RTR_API unsigned rtr_version_number(void)
{
	return RTR_VERSION_NUMBER;
}

RTR_API const char *rtr_trace_path(void)
{
	return session.path;
}

RTR_API int rtr__session_file(uint64_t i, char *out, size_t size)
{
	uint64_t first = 0, last = 0;
	struct rtr_stats st;
	int err;

	pthread_mutex_lock(&lifecycle_lock);
	err = running ? 0 : -ENOENT;
	if (err == 0 && session.cfg.mode == RTR_MODE_FLIGHT) {
		/* the snapshots so far, and the one the stop writes */
		rtr__writer_stats(&st);
		if (session.cfg.flight_at_exit)
			last = st.files;
		else if (st.files == 0)
			err = -ENOENT;
		else
			last = st.files - 1;
	} else if (err == 0 && session.numbered) {
		last = rtr__writer_segment();
		if (session.cfg.keep > 0 && last + 1 > session.cfg.keep)
			first = last + 1 - session.cfg.keep; /* the older ones are deleted */
	}
	if (err == 0 && i > last - first)
		err = -ENOENT;
	if (err == 0)
		err = rtr__path_expand(out, size, session.pattern, session.pid, session.host,
				       session.rank, first + i);
	pthread_mutex_unlock(&lifecycle_lock);
	return err;
}

RTR_API const char *rtr__process_name(void)
{
	return session.process_name;
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

/* RINGTRACE_AUTOSTART: 1 starts, 0 or unset does not; anything else warns. */
static int autostart_wanted(void)
{
	const char *v = getenv("RINGTRACE_AUTOSTART");

	if (v == NULL || v[0] == '\0' || strcmp(v, "0") == 0)
		return 0;
	if (strcmp(v, "1") == 0)
		return 1;
	fprintf(stderr, "ringtrace: RINGTRACE_AUTOSTART=\"%s\" is not 0 or 1; not starting\n", v);
	return 0;
}

/* Runs when the library is loaded (or, linked statically, at the program's start):
 * does nothing unless RINGTRACE_AUTOSTART=1. A failed start was reported by
 * rtr_start(); the program runs on untraced. */
__attribute__((constructor)) static void autostart(void)
{
	if (!autostart_wanted())
		return;
	(void)start(NULL, BY_AUTOSTART);
}
