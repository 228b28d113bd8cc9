/* SPDX-License-Identifier: MIT */
/*
 * The files of a session: one, or segments (rotation), or the flight window
 * (flight.c); and what a chunk that fills up means for them (files_full()).
 *
 * Every file is a whole trace: its head (start marker with the session's origin, so
 * that the files of one session line up), the names of the threads and tracks it
 * holds events of, its events, its end marker, and a cut's lines around them
 * (cut.c).
 *
 * Rotation (max_mb, max_seconds). The segment in progress is a file like the single
 * one of a plain session (closed provisionally between writes). It ends when the
 * next line would carry it past max_mb less what its closing lines take (out_reserve()
 * fills chunks up to the segment's room: rtr__out_set_limit(), files_full()), or when
 * max_seconds have passed (the writer's loop): the cut's lines and a final end marker
 * go in, the sink waits for the file, and the next segment is opened as rtr_start()
 * opens the first (under a new name, renamed once its head is in), the sink goes on
 * in it. With keep, the segment `keep` numbers back is deleted once the new one is in
 * place.
 */
#include "writer/files.h"

#include "common/atomic.h"
#include "path/path.h"
#include "sink/trace_file.h"
#include "writer/account.h"
#include "writer/cut.h"
#include "writer/flight.h"
#include "writer/framing.h"
#include "writer/out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void report(struct rtr__writer *w, const char *what, const char *path, int err)
{
	if (w->out.error_reported)
		return;
	w->out.error_reported = 1;
	fprintf(stderr, "ringtrace: %s %s: %s; the events not written are counted as dropped\n",
		what, path, strerror(-err));
}

/* Drop the oldest finished segment's pages from the page cache and close it. */
static void drop_oldest(struct rtr__out *o)
{
	(void)posix_fadvise(o->old_fd[0], 0, 0, POSIX_FADV_DONTNEED);
	close(o->old_fd[0]);
	o->nold--;
	memmove(o->old_fd, o->old_fd + 1, o->nold * sizeof(o->old_fd[0]));
	memmove(o->old_bytes, o->old_bytes + 1, o->nold * sizeof(o->old_bytes[0]));
}

/*
 * A finished segment's pages stay cached like a single file's would (the sink's
 * window, cache_mb): its writeback starts now, and once the segments after it hold
 * a window's worth, its pages are dropped and it is closed. Without this, every
 * segment of a long run would stay in the page cache.
 */
static void retire_segment(struct rtr__writer *w, int fd, uint64_t bytes)
{
	struct rtr__out *o = &w->out;
	uint64_t window = o->sink.cache_window, held = 0;

	if (window == 0) {
		close(fd);
		return;
	}
	(void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE); /* an error is the file's */
	if (o->nold == sizeof(o->old_fd) / sizeof(o->old_fd[0]))
		drop_oldest(o);
	o->old_fd[o->nold] = fd;
	o->old_bytes[o->nold++] = bytes;
	for (unsigned i = 0; i < o->nold; i++)
		held += o->old_bytes[i];
	while (o->nold > 0 && held > window) {
		held -= o->old_bytes[0];
		drop_oldest(o);
	}
}

void rtr__files_close_old(struct rtr__writer *w)
{
	while (w->out.nold > 0)
		drop_oldest(&w->out);
}

/* A new file begins in the sink: its counters, names, head, what was open. */
static void begin_file(struct rtr__writer *w)
{
	struct rtr__out *o = &w->out;

	rtr__out_new_file(w);
	o->file_events = o->encoded;
	o->file_failed = rtr_atomic_load_relaxed(&o->sink.events_failed);
	o->continued = o->closed = 0;
	o->finishing = 0;
	o->continues = 0;
	rtr__out_begin_file(w);
	o->continued = rtr__cut_lines(w, RTR__CUT_BEGIN, SIZE_MAX);
}

void rtr__files_rotate(struct rtr__writer *w)
{
	struct rtr__out *o = &w->out;
	char path[PATH_MAX], tmp[PATH_MAX], old[PATH_MAX];
	int fd, truncate, err;

	/* After a write error nothing more is written (sink.h): no more segments. */
	if (o->flight != NULL || o->sink.stream || o->cutting ||
	    rtr_atomic_load_relaxed(&o->sink.error) != 0)
		return;
	tmp[0] = '\0';
	o->cutting = 1;
	o->chunk_limit = RTR__CHUNK_BYTES;
	o->closed = rtr__cut_lines(w, RTR__CUT_END, SIZE_MAX);
	rtr__writer_account(w, 0);
	o->finishing = 1;
	o->continues = 1;
	out_reserve(w, 0); /* TAIL_ROOM is free */
	rtr__out_end_file(w, 1);
	if (w->prof != NULL) /* the profile so far, at (or beside) the segment's path */
		(void)w->prof->write(w, NULL, "rotation", 0);
	o->chunk->final = 1; /* a compressed stream ends with the segment */
	rtr__out_submit(w);
	rtr__sink_wait(&o->sink);
	rtr__out_close_after_error(w);
	o->files++;

	uint64_t old_size = o->sink.offset; /* the finished segment's length */
	err = rtr__out_path(w, o->file_no + 1, path, sizeof(path));
	if (err == 0)
		err = rtr__trace_open(path, w->s.pid, 0, &fd, tmp, sizeof(tmp), &truncate);
	if (err == 0 && truncate && ftruncate(fd, 0) != 0)
		err = -errno;
	if (err == 0 && (err = rtr__sink_reopen(&o->sink, fd)) != 0)
		close(fd);
	if (err != 0) {
		if (tmp[0] != '\0')
			unlink(tmp);
		/* No next file: what comes is lost to the error, counted (the sink writes
		 * nothing more once it has one). The last segment stays finished. */
		report(w, "cannot begin the next segment", path, err);
		rtr__sink_fail(&o->sink, err);
		o->finishing = 1; /* nothing is closed provisionally any more */
		o->cutting = 0;
		o->limit_bytes = UINT64_MAX;
		w->loop.next_cut_ns = 0;
		return;
	}
	retire_segment(w, w->s.fd, old_size);
	w->s.fd = fd;
	o->file_no++;
	/* relaxed: a count for the MPI module's manifest, read at MPI_Finalize */
	rtr_atomic_store_relaxed(&w->acct.st_segment, o->file_no);
	begin_file(w);
	/* The head and what was open, in the file, before it takes the path. */
	rtr__out_submit(w);
	rtr__sink_wait(&o->sink);
	if (tmp[0] != '\0' && rename(tmp, path) != 0)
		report(w, "cannot rename the next segment to", path, -errno);
	snprintf(w->s.path, sizeof(w->s.path), "%s", path);
	if (w->s.cfg.keep > 0 && o->file_no >= w->s.cfg.keep &&
	    rtr__out_path(w, o->file_no - w->s.cfg.keep, old, sizeof(old)) == 0)
		unlink(old); /* ENOENT: deleted by someone else, which is fine */
	o->cutting = 0;
	if (w->s.cfg.max_seconds > 0)
		w->loop.next_cut_ns = rtr__mono_ns() + (uint64_t)w->s.cfg.max_seconds * 1000000000u;
	rtr__out_set_limit(w);
}

/* The chunk to the sink, or in flight mode to the window. */
static void submit(struct rtr__writer *w)
{
	if (w->out.flight != NULL && !w->out.snapshotting)
		rtr__flight_keep(w); /* no file: the window keeps it, sets the limit */
	else
		rtr__out_submit(w);
}

/*
 * out_reserve() found no room for `need` bytes (rtr__out_full()): the chunk is full,
 * or the segment, or the window's share. A segment that is full ends (and the next
 * begins); a flight chunk that is full goes to the window; else the chunk goes to
 * the sink.
 */
static void files_full(struct rtr__writer *w, size_t need)
{
	struct rtr__out *o = &w->out;
	size_t room = o->flight != NULL && !o->snapshotting ? o->chunk_room : RTR__CHUNK_BYTES;
	int segment = o->limit_bytes != UINT64_MAX && !o->cutting;
	int window = o->flight != NULL && !o->snapshotting && !o->cutting;

	/*
	 * need is the most the next line can take, far more than it does. So a segment
	 * (rotation) or a flight chunk ends once its lines fill it, and until then each
	 * line near its end gets room for itself alone and asks again. A segment ends
	 * with room for a line of LINE_SLACK and its closing lines, so that it stays
	 * within max_mb unless one line is longer. A segment holding no event goes on
	 * whatever its size (its one line must go somewhere).
	 */
	uint64_t fill = o->sink.text_offset + o->chunk->len;
	int seg_full = segment && fill + LINE_SLACK + rtr__cut_closing_bytes(w) >= o->limit_bytes;
	if (seg_full && o->encoded > o->file_events) {
		rtr__files_rotate(w);
	} else if ((segment && !seg_full) ||
		   (window && o->chunk->len < o->chunk->prologue + o->chunk_target)) {
		if (o->chunk->len + need + PAGE_BYTES + TAIL_ROOM <= room) {
			o->chunk_limit = o->chunk->len + need + PAGE_BYTES + TAIL_ROOM;
			return;
		}
		submit(w);
	} else {
		submit(w);
	}
	/* this line goes in whatever the limit (and the next asks again) */
	if (o->chunk->len + need + PAGE_BYTES + TAIL_ROOM > o->chunk_limit)
		o->chunk_limit = o->chunk->len + need + PAGE_BYTES + TAIL_ROOM <= room
					 ? o->chunk->len + need + PAGE_BYTES + TAIL_ROOM
					 : room;
}

int rtr__files_start(struct rtr__writer *w)
{
	struct rtr__out *o = &w->out;
	const struct rtr_config *cfg = &w->s.cfg;

	o->file_no = 0;
	rtr_atomic_store_relaxed(&w->acct.st_segment, 0); /* read by rtr__writer_segment() */
	o->files = 0;
	o->nold = 0;
	o->cut_lost = 0;
	o->continued = o->closed = 0;
	o->cutting = o->continues = o->snapshotting = 0;
	o->limit_bytes = UINT64_MAX;
	w->loop.next_cut_ns = 0;
	o->flight_evicted = o->snapshot_bytes = 0;
	o->closing = 0;
	o->full = files_full;
	rtr__out_new_file(w);
	if (cfg->mode == RTR_MODE_FLIGHT)
		return rtr__flight_start(w);
	if (w->s.numbered && o->sink.stream) {
		fprintf(stderr, "ringtrace: %s is not a regular file: no rotation\n", w->s.path);
		return 0;
	}
	if (cfg->max_mb > 0)
		o->limit_bytes = (uint64_t)cfg->max_mb << 20;
	if (cfg->max_seconds > 0)
		w->loop.next_cut_ns = rtr__mono_ns() + (uint64_t)cfg->max_seconds * 1000000000u;
	rtr__out_set_limit(w);
	return 0;
}

void rtr__files_fini(struct rtr__writer *w, int how)
{
	if (how != RTR__FINI_FORGET)
		for (unsigned i = 0; i < w->out.nold; i++)
			close(w->out.old_fd[i]); /* a child's copies, or what the stop left */
	w->out.nold = 0;
	rtr__flight_fini(w, how);
}
