/* SPDX-License-Identifier: MIT */
/*
 * What the session may call of the writer: the session it hands over, and the
 * writer's entry points. Everything else of the writer is behind this header
 * (writer_internal.h lists its rooms); the writer calls nothing above it.
 *
 * rtr_start(), rtr_flush(), rtr_snapshot() and rtr_stop() call these under the
 * session's lifecycle lock unless said otherwise; the signal entry points are
 * async-signal-safe.
 */
#ifndef RTR_WRITER_WRITER_H
#define RTR_WRITER_WRITER_H

#include "clock/clock.h"
#include "producer/filter.h"

#include <ringtrace.h>

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

struct rtr__ring;
struct rtr__format;

/* Everything one recording (rtr_start .. rtr_stop) knows about itself. */
struct rtr__session {
	struct rtr_config cfg; /* string fields point into the buffers below */
	char path[PATH_MAX];   /* the expanded file path (segment 0 with rotation) */
	/* The path pattern as given, with ".%s" added when the session writes numbered
	 * files (rotation, flight mode) and it has no %s: path/path.h. */
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

/* The output formats (src/format/): the session picks one by the configuration.
 * rtr__profile_format writes no line: the session's file is its profile. */
extern const struct rtr__format rtr__json_format;
extern const struct rtr__format rtr__perfetto_format;
extern const struct rtr__format rtr__profile_format;
/* The profile (src/format/profile/), kept beside any format (RINGTRACE_PROFILE) and
 * alone in RINGTRACE_MODE=profile. */
struct rtr__profiler;
extern const struct rtr__profiler rtr__profiler;

/* Write the file's head in format fmt, start the writer thread; with prof (NULL:
 * none) a profile is kept beside. 0 or -errno (nothing left open). */
int rtr__writer_start(const struct rtr__session *s, const struct rtr__format *fmt,
		      const struct rtr__profiler *prof);
/* The process's profile so far into a buffer from rtr__mem_map() (*len bytes, *cap
 * mapped), for the job profile; the writer's aggregate is read under its lock. With
 * freeze, the process's profile file is written from the same moment, and is final.
 * 0, -ENOTCONN without a profile, or -ENOMEM. */
int rtr__writer_profile_export(char **data, size_t *len, size_t *cap, int freeze);

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

/* The number (%s) of the segment being written with rotation; 0 before the first
 * ends. Any thread: at most one segment behind the writer. */
uint64_t rtr__writer_segment(void);

#endif
