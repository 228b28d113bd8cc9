/* SPDX-License-Identifier: MIT */
/*
 * The writer thread: its loop, its sleep and wake-ups, flush and stop. The entry
 * points the session calls (writer.h) are here but for the counters (account.c); the
 * rest of the writer is behind them (writer_internal.h lists the rooms).
 *
 * One loop. Each pass drains every ring (drain.c), a bounded batch per ring, then
 * submits the current chunk when it is full or when flush_ms has passed since the
 * last write (so a killed run loses at most that much). When a pass finds little to
 * do (under SETTLE_RECORDS records) and no ring is over its high-water mark, the
 * thread sleeps on the rings' doorbell (ring.h) until the next flush deadline,
 * or until a producer passes a ring's high-water mark, or a flush or stop is
 * requested: an idle recorder costs one wake-up per flush interval, never a spinning
 * core. A flush or a stop makes the next pass urgent: it drains each ring up to the
 * head it reads, past every event recorded before the request.
 *
 * Stop. The recorder is turned off first (rtr_stop()); the writer then waits for the
 * producers still inside an event call (rtr__rings_quiesce()), drains once more,
 * writes the end marker and the last chunk. A file that blocks past the stop timeout
 * (a FIFO nobody reads, a hung mount) is given up on: what is left counts as
 * dropped_io, and a thread stuck in a system call frees the session itself when it
 * returns (the state word: WRITER_ABANDONED).
 *
 * Signals and snapshots. A handler (session/signals.c) only sets a word and rings the
 * doorbell: a fatal signal is a stop that names it (and does not wait for the
 * handler's own thread), a program's handled signal a flush, the snapshot signal a
 * request that the loop serves with rtr_snapshot()'s (files.c and flight.c do the work).
 *
 * Accounting (account.c). After every pass the session's totals are published for
 * rtr_stats_get() and for the end marker; after the stop's wait no ring changes, and
 * recorded = written + dropped holds exactly.
 */
#include "writer/writer.h"

#include "common/atomic.h"
#include "common/compiler.h"
#include "writer/account.h"
#include "writer/cut.h"
#include "writer/decode.h"
#include "writer/drain.h"
#include "writer/event.h"
#include "writer/files.h"
#include "writer/flight.h"
#include "writer/format.h"
#include "writer/framing.h"
#include "writer/out.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CHUNK_BYTES RTR__CHUNK_BYTES
#define NCHUNKS	    RTR__NCHUNKS
#define DRAIN_BATCH 8192u /* records per ring per pass */
/* A pass that found fewer records than this sleeps (unless a ring is over its mark):
 * a writer that went round again at once would read the producers' lines while they
 * write them, and a lone producer loses more to that than the writer gains. */
#define SETTLE_RECORDS 256u

/* The one writer; account.c reads its counters for rtr_stats_get(). */
struct rtr__writer rtr__the_writer;
#define W rtr__the_writer

static uint64_t session_counter;

/* Values of loop.state. */
enum {
	WRITER_IDLE = 0,      /* no writer thread */
	WRITER_RUNNING = 1,   /* the thread runs; rtr__writer_stop() will join it */
	WRITER_EXITED = 2,    /* the thread is done with the session, about to return */
	WRITER_ABANDONED = 3, /* stop gave up on it: the thread frees the session itself */
};

static long futex(uint32_t *addr, int op, uint32_t val, const struct timespec *timeout)
{
	return syscall(SYS_futex, addr, op, val, timeout, NULL, 0);
}

/* ------------------------------------------------------------------------- */
/* The thread                                                                 */

static void write_out(struct rtr__writer *w, int wait);

/* Everything recorded so far into the file, the polls being folded too. */
static void flush_now(struct rtr__writer *w)
{
	rtr__drain_polls(w, 0);
	write_out(w, 1);
}

/* Whether a snapshot (or the end of a segment) was asked for. */
static int snapshot_pending(struct rtr__writer *w)
{
	/* A11: pairs with R11 in rtr__writer_signal_snapshot() and rtr__writer_snapshot() */
	return rtr_atomic_load_acquire(&w->loop.snap_signals) != w->loop.snap_signals_done ||
	       rtr_atomic_load_acquire(&w->loop.snap_req) != w->loop.snap_done;
}

/*
 * Serve the snapshots asked for: by the snapshot signal (all of them at once: one
 * file), then by rtr_snapshot() (its ticket, its path). Flight mode writes the
 * window; stream mode with rotation ends the segment; without, a signal flushes.
 */
static void serve_snapshots(struct rtr__writer *w)
{
	/* A11: as in snapshot_pending() */
	uint32_t sigs = rtr_atomic_load_acquire(&w->loop.snap_signals);
	uint32_t req = rtr_atomic_load_acquire(&w->loop.snap_req);
	int rotating = w->out.limit_bytes != UINT64_MAX || w->loop.next_cut_ns != 0;

	if (sigs != w->loop.snap_signals_done) {
		w->loop.snap_signals_done = sigs;
		if (w->out.flight != NULL)
			rtr__flight_snapshot(w, NULL);
		else if (rotating)
			rtr__files_rotate(w);
		else if (w->prof != NULL) /* the profile so far; the trace is flushed too */
			(void)(flush_now(w), w->prof->write(w, NULL, "snapshot", 0));
		else
			flush_now(w);
	}
	if (req != w->loop.snap_done) {
		const char *path = w->loop.snap_path[0] != '\0' ? w->loop.snap_path : NULL;
		int err = w->out.flight != NULL ? rtr__flight_snapshot(w, w->loop.snap_path)
			  : rotating		? (rtr__files_rotate(w),
					   rtr_atomic_load_relaxed(&w->out.sink.error))
			  : w->prof != NULL ? (flush_now(w), w->prof->write(w, path, "snapshot", 0))
					    : -ENOTSUP;
		w->loop.snap_err = err;
		/* R12: pairs with A12 in rtr__writer_snapshot(); the file and snap_err */
		rtr_atomic_store_release(&w->loop.snap_done, req);
		futex(&w->loop.snap_done, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
	}
}

/* Is there a reason not to sleep? Read after the sleep flag is set and fenced. */
static int work_pending(struct rtr__writer *w)
{
	if (rtr_atomic_load_acquire(&w->loop.stop) ||
	    rtr_atomic_load_acquire(&w->loop.flush_req) != w->loop.flush_done ||
	    snapshot_pending(w))
		return 1;
	struct rtr__ring_list rings;
	size_t n = rtr__rings_list(&rings);
	int over = 0;
	for (size_t i = 0; i < n && !over; i++)
		over = rtr__ring_over_mark(rings.v[i], rtr__ring_readable(rings.v[i]));
	rtr__rings_list_done(&rings);
	return over;
}

static void writer_sleep(struct rtr__writer *w, uint64_t ns)
{
	/* the doorbell's flag is set and fenced before the rings are read (ring.h) */
	uint32_t seq = rtr__rings_sleep_prepare();

	if (!work_pending(w))
		rtr__rings_sleep(seq, ns);
	rtr__rings_sleep_done();
	rtr_atomic_store_relaxed(&w->acct.st_wakeups, w->acct.st_wakeups + 1);
}

static void write_out(struct rtr__writer *w, int wait)
{
	if (w->out.flight != NULL) /* no file: the window takes chunks when they are full */
		return;
	rtr__out_submit(w);
	if (wait)
		rtr__sink_wait(&w->out.sink);
	rtr__out_report_error(w);
	w->loop.last_write_ns = rtr__mono_ns();
}

/* Free the session's state of the format and of the writer's own rooms (how:
 * RTR__FINI_*): in a child after fork(), what never moves is released (FORK) or
 * nothing is (FORGET: the parent's writer may be freeing it); what grows as the
 * writer runs (the memory table) may be mid-update and is left mapped (copy-on-write:
 * it costs the child nothing it touches). */
static void session_fini(struct rtr__writer *w, int how)
{
	if (w->prof != NULL)
		w->prof->fini(w, how);
	w->fmt->fini(w, how);
	if (how != RTR__FINI_FORGET) {
		rtr__events_fini(w);
		rtr__async_open_free(&w->async);
	}
	memset(&w->async, 0, sizeof(w->async));
	if (how == RTR__FINI_ALL)
		rtr__memstack_destroy(&w->mem);
	else
		rtr__memstack_init(&w->mem);
}

/* The format's and the writer's state for a session. 0 or -errno (nothing left). */
static int session_init(struct rtr__writer *w)
{
	int err;

	rtr__memstack_init(&w->mem); /* maps nothing until the first use */
	memset(&w->async, 0, sizeof(w->async));
	err = rtr__events_init(w);
	if (err != 0)
		return err;
	w->out.pads_pages = w->fmt->pads_pages;
	err = w->fmt->init(w);
	if (err == 0 && w->prof != NULL && (err = w->prof->init(w)) != 0)
		w->fmt->fini(w, RTR__FINI_ALL);
	if (err != 0)
		rtr__events_fini(w);
	return err;
}

/* Free what rtr__writer_start() set up (not the file). */
static void release_session(struct rtr__writer *w)
{
	rtr__sink_close(&w->out.sink);
	rtr__files_fini(w, RTR__FINI_ALL);
	session_fini(w, RTR__FINI_ALL);
}

/* Why the session's last profile is written (docs/profile.md). */
static const char *profile_reason(struct rtr__writer *w)
{
	/* relaxed: read after the stop flag's acquire (A5), which orders the signal */
	if (rtr_atomic_load_relaxed(&w->loop.signal) != 0)
		return "signal";
	return "stop";
}

static void *writer_main(void *arg)
{
	struct rtr__writer *w = arg;
	uint64_t flush_ns = (uint64_t)w->s.cfg.flush_ms * 1000000u;
	int quiesced = 0;

	for (;;) {
		/* A5: pairs with R5 in rtr__writer_stop(); producers are already off */
		uint32_t stop = rtr_atomic_load_acquire(&w->loop.stop);
		/* A6: pairs with R6 in rtr__writer_flush_request(); earlier events in the rings */
		uint32_t flush = rtr_atomic_load_acquire(&w->loop.flush_req);
		int snap = snapshot_pending(w);
		int urgent = stop || flush != w->loop.flush_done || snap;
		/* An urgent pass drains each ring up to the head it reads, which is past
		 * every event recorded before the flush or stop request. */
		uint64_t work = rtr__drain_all(w, urgent ? UINT32_MAX : DRAIN_BATCH);

		rtr__writer_account(w, 0);
		uint64_t now = rtr__mono_ns();
		/* after the drain: every tick converted so far is below the new pair */
		rtr__clock_repair(&w->s.clock, now);
		if (RTR_UNLIKELY(snap))
			serve_snapshots(w);
		if (RTR_UNLIKELY(w->loop.next_cut_ns != 0 && now >= w->loop.next_cut_ns) && !stop)
			rtr__files_rotate(w); /* max_seconds */
		if (stop) {
			if (!quiesced) { /* then drain once more: what came in while we waited */
				/* the stop's wait (ring.h), then one more drain */
				struct rtr__ring_list rings;
				size_t n = rtr__rings_list(&rings);
				rtr__rings_quiesce(rings.v, n, &w->loop.give_up,
						   rtr_atomic_load_relaxed(&w->loop.signal_ring));
				rtr__rings_list_done(&rings);
				quiesced = 1;
				continue;
			}
			if (work == 0) /* producers are off: a pass with nothing left ends it */
				break;
			continue;
		}
		if (flush != w->loop.flush_done) {
			/* Done after one pass even if producers keep going: they cannot
			 * hold a flush up. The polls being folded are events recorded. */
			flush_now(w);
			/* a signal's flush is served: the next provisional close names none */
			rtr_atomic_store_relaxed(&w->loop.flush_signal, 0);
			/* R7: pairs with A7 in rtr__writer_flush_wait(); the file has it all */
			rtr_atomic_store_release(&w->loop.flush_done, flush);
			futex(&w->loop.flush_done, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
			continue;
		}
		if (now - w->loop.last_write_ns >= flush_ns)
			write_out(w, 0);
		if (work < SETTLE_RECORDS) {
			uint64_t due = w->loop.last_write_ns + flush_ns;
			writer_sleep(w, due > now ? due - now : flush_ns);
		}
	}

	rtr__drain_polls(w, 0); /* every event is in: the last polls end */
	rtr__writer_account(w, 1);
	if (w->out.flight != NULL) {
		/* The last snapshot, unless the program wants none; a signal's always. */
		int err = 0;
		if (w->s.cfg.flight_at_exit || rtr_atomic_load_relaxed(&w->loop.signal) != 0)
			err = rtr__flight_snapshot(w, NULL);
		w->loop.final_error = err;
		if (w->prof != NULL) /* beside the snapshots: the session's profile */
			(void)w->prof->write(w, NULL, profile_reason(w), 1);
	} else {
		w->out.cutting = 1; /* no segment limit: the end marker goes here */
		w->out.closed = 0;
		if (rtr_atomic_load_relaxed(&w->loop.signal) != 0) /* what each thread was in */
			w->out.closed = rtr__cut_end_open(w, RTR__CUT_OPEN);
		else /* open slices stay open, as recorded */
			rtr__cut_show_held(w, NULL, SIZE_MAX);
		w->out.finishing = 1;
		out_reserve(w, 0); /* TAIL_ROOM is free */
		rtr__out_end_file(w, 1);
		w->out.chunk->final = 1; /* the last write: a compressed stream ends with it */
		write_out(w, 1);
		rtr__out_close_after_error(w);
		w->loop.final_error = rtr_atomic_load_relaxed(&w->out.sink.error);
		if (w->prof != NULL) {
			int err = w->prof->write(w, NULL, profile_reason(w), 1);
			if (w->loop.final_error == 0 && w->fmt == &rtr__profile_format)
				w->loop.final_error = err; /* the profile is the session's file */
		}
		if (w->s.numbered)
			w->out.files++; /* the last segment */
		rtr__files_close_old(w);
	}
	rtr_atomic_store_relaxed(&w->acct.st_files, w->out.files);
	rtr__drain_free_slices(w);
	/* rtr_snapshot() calls still waiting are not served: the session has ended. */
	w->loop.snap_err = -ENOTCONN;
	/* R12: pairs with A12 in rtr__writer_snapshot() */
	rtr_atomic_store_release(&w->loop.snap_done, rtr_atomic_load_acquire(&w->loop.snap_req));
	futex(&w->loop.snap_done, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
	/* Flushes waiting now wait for nothing more: serve them all. */
	/* A8: pairs with R6 in rtr__writer_flush_request(); no ticket is handed out while
	 * stopping (the lifecycle lock), this is the last */
	uint32_t last = rtr_atomic_load_acquire(&w->loop.flush_req);
	/* R7: pairs with A7 in rtr__writer_flush_wait() */
	rtr_atomic_store_release(&w->loop.flush_done, last);
	futex(&w->loop.flush_done, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
	/* R9: pairs with A9 in rtr__writer_stop(); the session's results are final */
	if (rtr_atomic_exchange_acq_rel(&w->loop.state, WRITER_EXITED) == WRITER_ABANDONED) {
		/* Stop left without us (we were stuck in the file): nobody else frees. */
		release_session(w);
		if (w->s.fd >= 0)
			close(w->s.fd);
		/* R10: pairs with A10 in rtr__writer_start(); the session is freed */
		rtr_atomic_store_release(&w->loop.state, WRITER_IDLE);
		return NULL;
	}
	futex(&w->loop.state, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
	return NULL;
}

/* The writer's state for session s, in format fmt: counters from zero, the rest as
 * the last session left it. Keeps the published counters of the last session until
 * this one is ready. */
static void begin_session(struct rtr__writer *w, const struct rtr__session *s,
			  const struct rtr__format *fmt, const struct rtr__profiler *prof)
{
	w->s = *s;
	w->s.cfg.path = w->s.path;
	w->s.cfg.process_name = w->s.process_name;
	w->drain.session_id = ++session_counter;
	w->drain.first_ring_id = rtr__rings_created();
	memset(&w->acct.retired, 0, sizeof(w->acct.retired));
	w->acct.base_unattached = rtr__rings_reentrant_unattached();
	w->drain.corrupt_reported = 0;
	rtr_atomic_store_relaxed(&w->acct.st_unwritten, 0);
	w->drain.dropped_shown = 0;
	w->out.encoded = 0;
	w->out.finishing = 0;
	w->drain.threads = 0;
	w->out.error_reported = 0;
	w->loop.final_error = 0;
	w->loop.stop = 0;
	w->loop.give_up = 0;
	/* flush_req and flush_done run on across sessions: a flush that waits through a
	 * stop and a start must not see its ticket served by counters set back. */
	w->loop.signal = 0;
	w->loop.signal_ring = NULL;
	w->loop.flush_signal = 0;
	/* snap_req and snap_done run on across sessions, as flush_req and flush_done */
	w->loop.snap_signals_done = rtr_atomic_load_relaxed(&w->loop.snap_signals);
	w->fmt = fmt;
	w->prof = prof;
}

/* Stream mode: the sink on the session's file, the file's head in it. 0 or -errno
 * (nothing left open). */
static int open_file(struct rtr__writer *w)
{
	const struct rtr__session *s = &w->s;
	int err;

	/* rtr__session_config() has resolved RTR_COMPRESS_AUTO by the path's suffix. */
	if (s->cfg.compress == RTR_COMPRESS_GZIP || s->cfg.compress == RTR_COMPRESS_GZIP_MEMBERS)
		err = rtr__sink_open_gzip(&w->out.sink, s->fd, s->cfg.io, CHUNK_BYTES, NCHUNKS,
					  s->cfg.compress == RTR_COMPRESS_GZIP_MEMBERS);
	else
		err = rtr__sink_open(&w->out.sink, s->fd, s->cfg.io, CHUNK_BYTES, NCHUNKS);
	/* The start cannot fail from here on but for pthread_create(): only now may a
	 * file written in place lose what it held. */
	if (err == 0 && s->truncate && ftruncate(s->fd, 0) != 0) {
		err = -errno;
		rtr__sink_close(&w->out.sink);
	}
	if (err != 0)
		return err;
	/* Only a regular file can have its provisional close cut off (a pipe, /dev/null
	 * cannot); its pages would otherwise stay cached. */
	w->out.provisional = !w->out.sink.stream;
	if (w->out.provisional)
		rtr__sink_cache_window(&w->out.sink, (uint64_t)s->cfg.cache_mb << 20);
	w->out.sink.cancel = &w->loop.give_up;

	w->out.chunk = rtr__sink_acquire(&w->out.sink);
	w->out.file_events = 0;
	w->out.file_failed = 0;
	rtr__files_start(w); /* rotation: the segment's limit; never fails streaming */
	rtr__out_begin_file(w);
	if (w->out.provisional) {
		rtr__out_submit(w); /* a valid file from the first moment, closed provisionally */
		/* In the file before anything slow (buffer registration, the thread,
		 * libgcc): a kill from here on leaves a trace with its head, never an
		 * empty file. A stream's head waits for the writer thread instead: a
		 * full pipe must not hold rtr_start() up, and there is no file to leave. */
		rtr__sink_wait(&w->out.sink);
	}
	/* Then the slow part: buffer registration, the hint ring. Here, under the
	 * lifecycle lock, not in the writer thread: a fork() meanwhile would leave the
	 * child an io_uring fd it does not know of. */
	rtr__sink_setup(&w->out.sink);
	return 0;
}

int rtr__writer_start(const struct rtr__session *s, const struct rtr__format *fmt,
		      const struct rtr__profiler *prof)
{
	struct rtr__writer *w = &W;
	int err;

	/* A10: pairs with R10 in writer_main(); an abandoned writer has freed all */
	if (rtr_atomic_load_acquire(&w->loop.state) != WRITER_IDLE)
		return -EBUSY; /* the last session's writer is still stuck in the file */
	begin_session(w, s, fmt, prof);
	err = session_init(w);
	if (err != 0)
		return err;
	/* Rings from an earlier session: forget their leftovers, free the closed ones. */
	struct rtr__ring_list rings;
	size_t n = rtr__rings_list(&rings);
	for (size_t i = 0; i < n; i++) {
		struct rtr__ring *r = rings.v[i];
		rtr__reader_attach(w, r);
		rtr__ring_consume(r, rtr__ring_readable(r));
		if (rtr__ring_closed(r))
			rtr__rings_free(r);
	}
	rtr__rings_list_done(&rings);

	if (s->cfg.mode == RTR_MODE_FLIGHT) {
		/* No file until a snapshot: the window takes the lines. */
		memset(&w->out.sink, 0, sizeof(w->out.sink));
		w->out.provisional = 0;
		err = rtr__files_start(w);
		if (err != 0)
			goto fail_format;
		goto start_thread;
	}
	err = open_file(w);
	if (err != 0)
		goto fail_format;
start_thread:
	w->drain.hold = fmt->holds_begins && (w->out.provisional || w->out.flight != NULL);
	w->drain.show_held = rtr__cut_show_held;
	rtr__writer_account(w, 0);
	rtr_atomic_store_relaxed(&w->acct.st_io, w->out.sink.method);
	rtr_atomic_store_relaxed(&w->acct.st_clock, s->clock.kind);
	rtr_atomic_store_relaxed(&w->acct.st_wakeups, 0);
	rtr_atomic_store_relaxed(&w->acct.st_flight, w->out.flight != NULL);
	w->loop.last_write_ns = rtr__mono_ns();

	/* The writer takes no signals: the program's handlers never run on it, and a
	 * write past RLIMIT_FSIZE fails with EFBIG instead of killing the process. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* relaxed: pthread_create() orders it before the thread's first read */
	rtr_atomic_store_relaxed(&w->loop.state, WRITER_RUNNING);
	err = -pthread_create(&w->loop.thread, NULL, writer_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err == 0)
		return 0;
	rtr_atomic_store_relaxed(&w->loop.state, WRITER_IDLE); /* no thread: ours alone */

	rtr__sink_close(&w->out.sink);
	rtr__files_fini(w, RTR__FINI_ALL);
fail_format:
	session_fini(w, RTR__FINI_ALL);
	return err;
}

uint32_t rtr__writer_flush_request(void)
{
	struct rtr__writer *w = &W;
	/* R6: pairs with A6 in writer_main(); our earlier events are in the rings */
	uint32_t ticket = rtr_atomic_add_acq_rel(&w->loop.flush_req, 1);

	rtr__rings_wake();
	return ticket;
}

/* The time left until deadline (CLOCK_MONOTONIC ns), as a futex timeout; 0 if none. */
static int time_left(uint64_t deadline, struct timespec *ts)
{
	uint64_t now = rtr__mono_ns();

	if (now >= deadline)
		return 0;
	ts->tv_sec = (time_t)((deadline - now) / 1000000000u);
	ts->tv_nsec = (long)((deadline - now) % 1000000000u);
	return 1;
}

/* CLOCK_MONOTONIC ns timeout_ms from now; UINT64_MAX for 0 (no limit). */
static uint64_t deadline_in(unsigned timeout_ms)
{
	return timeout_ms == 0 ? UINT64_MAX : rtr__mono_ns() + (uint64_t)timeout_ms * 1000000u;
}

int rtr__writer_flush_wait(uint32_t ticket, unsigned timeout_ms)
{
	struct rtr__writer *w = &W;
	uint64_t deadline = deadline_in(timeout_ms);
	struct timespec ts;

	for (;;) {
		/* A7: pairs with R7 in writer_main() */
		uint32_t done = rtr_atomic_load_acquire(&w->loop.flush_done);
		if ((int32_t)(done - ticket) >= 0)
			break;
		if (deadline != UINT64_MAX && !time_left(deadline, &ts))
			return -ETIMEDOUT;
		futex(&w->loop.flush_done, FUTEX_WAIT_PRIVATE, done,
		      deadline == UINT64_MAX ? NULL : &ts);
	}
	return rtr_atomic_load_relaxed(&w->out.sink.error);
}

/* Wait until the writer thread is done with the session or deadline passes. */
static int wait_exited(struct rtr__writer *w, uint64_t deadline)
{
	struct timespec ts;

	for (;;) {
		/* A9: pairs with R9 in writer_main(); the session's results are final */
		uint32_t st = rtr_atomic_load_acquire(&w->loop.state);
		if (st != WRITER_RUNNING)
			return 1;
		if (deadline != UINT64_MAX && !time_left(deadline, &ts))
			return 0;
		futex(&w->loop.state, FUTEX_WAIT_PRIVATE, st, deadline == UINT64_MAX ? NULL : &ts);
	}
}

/* How long a writer told to give up may take to notice: it waits in slices of 50 ms
 * (sink_sync.c, sink_uring.c); only a system call nothing interrupts takes longer. */
#define GIVE_UP_MS 500u

int rtr__writer_stop(void)
{
	struct rtr__writer *w = &W;
	int err;

	/* R5: pairs with A5 in writer_main() */
	rtr_atomic_store_release(&w->loop.stop, 1);
	rtr__rings_wake();
	if (!wait_exited(w, deadline_in(w->s.cfg.stop_timeout_ms))) {
		/* The file blocks (a FIFO nobody reads, a hung mount): what is not written
		 * yet fails with -ETIMEDOUT, counted as dropped_io. Relaxed: the sink only
		 * stops waiting, nothing is read behind the flag. */
		rtr_atomic_store_relaxed(&w->loop.give_up, 1);
		rtr__rings_wake();
		if (!wait_exited(w, deadline_in(GIVE_UP_MS)) &&
		    rtr_atomic_exchange_acq_rel(&w->loop.state, WRITER_ABANDONED) ==
			    WRITER_RUNNING) {
			/* Stuck in a call nothing interrupts (pwrite on a hung NFS mount):
			 * leave it. When the call returns it fails what is left, frees the
			 * session and closes the file itself (writer_main()); until then
			 * rtr_start() returns -EBUSY. Its memory and fd stay valid. */
			pthread_detach(w->loop.thread);
			return -ETIMEDOUT;
		}
		/* It finished meanwhile (the exchange found WRITER_EXITED): join it. */
		rtr_atomic_store_relaxed(&w->loop.state, WRITER_EXITED);
	}
	pthread_join(w->loop.thread, NULL);
	release_session(w);
	err = w->loop.final_error;
	if (w->s.fd >= 0 && close(w->s.fd) != 0 && err == 0)
		err = -errno;
	/* relaxed: joined, nobody else reads it until our caller's lock is released */
	rtr_atomic_store_relaxed(&w->loop.state, WRITER_IDLE);
	return err;
}

/* ------------------------------------------------------------------------- */
/* Signals and snapshots                                                      */

int rtr__writer_signal_finish(int sig, unsigned timeout_ms, const struct rtr__ring *self)
{
	struct rtr__writer *w = &W;

	/* A9: pairs with R9 in writer_main(): no writer, nothing to finish */
	if (rtr_atomic_load_acquire(&w->loop.state) != WRITER_RUNNING)
		return -1;
	/* relaxed: both are read after the stop flag's acquire (A5) */
	rtr_atomic_store_relaxed(&w->loop.signal_ring, self);
	rtr_atomic_store_relaxed(&w->loop.signal, (uint32_t)sig);
	/* R5: pairs with A5 in writer_main(); the signal and the ring before it */
	rtr_atomic_store_release(&w->loop.stop, 1);
	rtr__rings_wake();
	return wait_exited(w, deadline_in(timeout_ms));
}

int rtr__writer_signal_flush(int sig, unsigned timeout_ms)
{
	struct rtr__writer *w = &W;

	/* A9: pairs with R9 in writer_main() */
	if (rtr_atomic_load_acquire(&w->loop.state) != WRITER_RUNNING)
		return 0;
	/* relaxed: read by the flush's pass, after A6 */
	rtr_atomic_store_relaxed(&w->loop.flush_signal, (uint32_t)sig);
	return rtr__writer_flush_wait(rtr__writer_flush_request(), timeout_ms);
}

void rtr__writer_signal_snapshot(void)
{
	/* R11: pairs with A11 in writer_main(); a count of requests, nothing behind it
	 * but the events recorded before the signal, ordered by the doorbell */
	rtr_atomic_add_acq_rel(&W.loop.snap_signals, 1);
	rtr__rings_wake();
}

/* One rtr_snapshot() at a time: its path waits in loop.snap_path until served. */
static pthread_mutex_t snapshot_lock = PTHREAD_MUTEX_INITIALIZER;

/* Wait until ticket `want` of loop.snap_done is served, or deadline. */
static int snapshot_wait(struct rtr__writer *w, uint32_t want, uint64_t deadline)
{
	struct timespec ts;

	for (;;) {
		/* A12: pairs with R12 in serve_snapshots(); the file and snap_err */
		uint32_t done = rtr_atomic_load_acquire(&w->loop.snap_done);
		if ((int32_t)(done - want) >= 0)
			return 0;
		if (deadline != UINT64_MAX && !time_left(deadline, &ts))
			return -ETIMEDOUT;
		futex(&w->loop.snap_done, FUTEX_WAIT_PRIVATE, done,
		      deadline == UINT64_MAX ? NULL : &ts);
	}
}

int rtr__writer_snapshot(const char *path, unsigned timeout_ms, int flight, int rotating)
{
	struct rtr__writer *w = &W;
	uint64_t deadline = deadline_in(timeout_ms);
	int err;

	/* the profile may be read without a lock: set before the writer started */
	if (!flight && !rotating && w->prof == NULL)
		return -ENOTSUP;
	if (!flight && rotating && path != NULL)
		return -EINVAL; /* a segment's name is the pattern's */
	if (path != NULL && strlen(path) >= sizeof(w->loop.snap_path))
		return -ENAMETOOLONG;
	pthread_mutex_lock(&snapshot_lock);
	/* The writer reads the path while it serves a ticket: one that timed out must be
	 * served before the path is written again. */
	uint32_t last = rtr_atomic_load_relaxed(&w->loop.snap_req); /* ours alone, locked */
	err = snapshot_wait(w, last, deadline);
	if (err == 0) {
		snprintf(w->loop.snap_path, sizeof(w->loop.snap_path), "%s",
			 path != NULL ? path : "");
		/* R11: pairs with A11 in snapshot_pending(); the path before the ticket */
		uint32_t ticket = rtr_atomic_add_acq_rel(&w->loop.snap_req, 1);
		rtr__rings_wake();
		err = snapshot_wait(w, ticket, deadline);
		if (err == 0)
			err = w->loop.snap_err; /* written before R12 */
	}
	pthread_mutex_unlock(&snapshot_lock);
	return err;
}

int rtr__writer_idle(void)
{
	/* A10: pairs with R10 in writer_main(); an abandoned writer has freed all */
	return rtr_atomic_load_acquire(&W.loop.state) == WRITER_IDLE;
}

void rtr__writer_after_fork_child(void)
{
	struct rtr__writer *w = &W;

	/* Only this thread exists: the writer's last state is a snapshot of a thread
	 * that may have been anywhere. What it set up at start and never moves (the
	 * sink's pool and rings, the intern tables, heads, scratch) is released; what
	 * it grows as it runs (the memory event tables) may be mid-update and is left
	 * mapped (copy-on-write: it costs the child nothing it touches). */
	uint32_t st = rtr_atomic_load_relaxed(&w->loop.state); /* relaxed: one thread now */

	if (st == WRITER_IDLE)
		return;
	if (st == WRITER_ABANDONED) {
		/* The parent's writer may have been freeing the session and closing the
		 * file itself: its mappings and fd number may be gone and reused by the
		 * program. Touch nothing; the child starts afresh. */
		session_fini(w, RTR__FINI_FORGET);
		rtr__files_fini(w, RTR__FINI_FORGET);
		rtr_atomic_store_relaxed(&w->loop.state, WRITER_IDLE);
		return;
	}
	rtr__sink_forget(&w->out.sink);
	rtr__files_fini(w, RTR__FINI_FORK);
	session_fini(w, RTR__FINI_FORK);
	/* Ours is a copy of the parent's descriptor: a FIFO reader sees EOF when the
	 * parent closes it, whatever its children do. */
	if (w->s.fd >= 0)
		close(w->s.fd);
	w->out.chunk = NULL;
	rtr_atomic_store_relaxed(&w->loop.state, WRITER_IDLE);
}

int rtr__writer_profile_export(char **data, size_t *len, size_t *cap, int freeze)
{
	struct rtr__writer *w = &W;

	/* A10: pairs with R10 in writer_main(); the session's state is there while it runs */
	if (rtr_atomic_load_acquire(&w->loop.state) != WRITER_RUNNING || w->prof == NULL ||
	    w->prof->export == NULL)
		return -ENOTCONN;
	return w->prof->export(w, data, len, cap, freeze);
}
