/* SPDX-License-Identifier: MIT */
/* What the recorder's modules share: the session, the writer's entry points. */
#ifndef RTR_RECORDER_H
#define RTR_RECORDER_H

#include "producer/filter.h"
#include "session/clock.h"

struct rtr__ring;
#include <ringtrace.h>

#include <limits.h>
#include <sys/types.h>

/* Everything one recording (rtr_start .. rtr_stop) knows about itself. */
struct rtr__session {
	struct rtr_config cfg; /* string fields point into the buffers below */
	char path[PATH_MAX];   /* the expanded file path (segment 0 with rotation) */
	/* The path pattern as given, with ".%s" added when the session writes numbered
	 * files (rotation, flight mode) and it has no %s: rtr__session_path(). */
	char pattern[PATH_MAX];
	int numbered; /* rotation or flight mode: files are numbered (%s) */
	char process_name[256];
	char host[256];
	int fd;
	/* A regular file goes to this new name first and is renamed to path once the
	 * recorder has started (rtr_start()); "" when fd is the path's own file. */
	char tmp_path[PATH_MAX];
	int truncate; /* fd is the path's own regular file: cut it to 0 once start is sure */
	pid_t pid;
	pid_t start_tid;
	long rank;	 /* -1 when unknown */
	long world_size; /* -1 when unknown */
	struct rtr__clock clock;
	uint64_t origin_ticks;	 /* the start marker's time, in ticks */
	uint64_t origin_ns;	 /* ... in CLOCK_MONOTONIC ns */
	uint64_t origin_real_ns; /* ... in CLOCK_REALTIME ns */

	/* cfg.signals and cfg.snapshot_signal, parsed (signals.h) */
	char signals[256];
	char snapshot_signal_name[32];
	uint64_t fatal_signals; /* struct rtr__sigset's mask */
	int snapshot_signal;	/* 0: none */

	/* The category filter as given ("" for none), and parsed. */
	char categories[RTR__FILTER_MAX_SPEC + 1];
	struct rtr__filter filter;
};

/* src/session/config.c */

/* Copy cfg into s (strings too), validated; expand the path pattern; resolve
 * RTR_COMPRESS_AUTO to NONE or GZIP and RTR_FORMAT_AUTO to JSON or PERFETTO by the
 * path's suffix. 0 or -EINVAL. */
int rtr__session_config(struct rtr__session *s, const struct rtr_config *cfg);
/* Expand %p %h %r %s %% of pattern into out, %s as number (4 digits at least). 0,
 * or -ENAMETOOLONG / -EINVAL. */
int rtr__path_expand(char *out, size_t size, const char *pattern, pid_t pid, const char *host,
		     long rank, uint64_t number);
/* The session's file number `number` (a segment or a snapshot) into out. */
int rtr__session_path(const struct rtr__session *s, char *out, size_t size, uint64_t number);
/* The environment variable of option i: the option table's, then those read outside
 * it (autostart, the instrument library); NULL past the last. */
const char *rtr__config_option_env(size_t i);
/* The rank of this process from the launcher's environment, or -1; world size too. */
long rtr__env_rank(long *world_size);

/* src/session/recorder.c: open a trace file at path as rtr_start() does (a regular
 * file under a new name, tmp_path, to be renamed to path once its head is in; "" when
 * written in place, then *truncate says whether to cut it to 0 first). 0 or -errno. */
int rtr__trace_open(const char *path, pid_t pid, int *fd, char *tmp_path, size_t tmp_size,
		    int *truncate);

/* src/producer/events.c: forget the flow ids this thread took (a child after fork()). */
void rtr__flow_after_fork_child(void);

/* src/writer/writer.c — called by rtr_start/rtr_flush/rtr_stop under their lock. */

/* Write the file's head, start the writer thread. 0 or -errno (nothing left open). */
int rtr__writer_start(const struct rtr__session *s);
/* Ask the writer to write everything recorded before; returns the ticket to wait on. */
uint32_t rtr__writer_flush_request(void);
/* Wait up to timeout_ms (0: no limit) until the ticket is served. 0, the first write
 * error, or -ETIMEDOUT. Needs no lock: a flush must not hold fork() or stop up. */
int rtr__writer_flush_wait(uint32_t ticket, unsigned timeout_ms);
/* Drain, write the end marker, join, close the file. 0, the first write error, or
 * -ETIMEDOUT when the file blocked past cfg.stop_timeout_ms (what was left is counted
 * as dropped_io; a writer stuck in a system call is left to free the session and
 * close the file itself when the call returns). */
int rtr__writer_stop(void);
/* Whether no writer thread is left from a session (a stop that timed out may leave
 * one stuck in its file until its call returns). */
int rtr__writer_idle(void);
/* In a child after fork(): release the parent's writer state and close the file
 * without waiting or writing anything. */
void rtr__writer_after_fork_child(void);
/*
 * From a signal handler (async-signal-safe; no lock is taken). The state word must
 * already be off (finish) so that no producer starts an event.
 *
 * finish: the writer drains the rings, writes the end marker naming sig (flight mode:
 * a last snapshot) and closes the file, not waiting for `self`'s ring (the handler's
 * thread's, which may have been interrupted inside an event call; NULL: none). Waits
 * at most timeout_ms (0: no limit). 1 when the file is finished, 0 when the time ran
 * out, -1 when no writer runs. The session is not freed: the process is ending.
 * flush: as rtr_flush(), the provisional end marker naming sig; 0 or -errno.
 * snapshot: ask for a snapshot (flight mode) or the end of the segment (rotation),
 * or a flush; returns at once.
 */
int rtr__writer_signal_finish(int sig, unsigned timeout_ms, const struct rtr__ring *self);
int rtr__writer_signal_flush(int sig, unsigned timeout_ms);
void rtr__writer_signal_snapshot(void);
/* rtr_snapshot(): path or NULL, in a session in flight mode or with rotation (read
 * under the caller's lock); 0 or -errno. Takes no lock but its own. */
int rtr__writer_snapshot(const char *path, unsigned timeout_ms, int flight, int rotating);

/* Counters of the running or last session. Any thread. */
void rtr__writer_stats(struct rtr_stats *out);

#endif
