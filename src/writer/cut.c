/* SPDX-License-Identifier: MIT */
/*
 * The files of a session: segments (rotation), the flight window and its snapshots.
 *
 * Every file is a whole trace: its head (start marker with the session's origin, so
 * that the files of one session line up), the names of the threads and tracks it
 * holds events of, its events, its end marker. What is open where a file ends, the
 * threads' slices (slices.h) and the async spans (async_open.h), ends there, at the
 * thread's latest time written (a line with "cut":true, or "open":true at a
 * snapshot's end), and begins again where the next file starts with the same
 * arguments and "continued":true. So each file opens in a viewer on its own, with
 * every slice whole.
 *
 * Rotation (max_mb, max_seconds). The segment in progress is a file like the single
 * one of a plain session (closed provisionally between writes). It ends when the
 * next line would carry it past max_mb (out_reserve() fills chunks up to the
 * segment's room: rtr__out_set_limit(), rtr__out_full()), or when max_seconds have
 * passed (the writer's loop): the cut's lines and a final end marker go in, the sink
 * waits for the file, and the next segment is opened as rtr_start() opens the first
 * (under a new name, renamed once its head is in), the sink goes on in it. With keep,
 * the segment `keep` numbers back is deleted once the new one is in place.
 *
 * Flight mode. Nothing goes to disk: full chunks go to the window, the newest
 * flight_mb MiB of them; the oldest are reused. Each chunk starts with a prologue,
 * the lines that begin again what is open at that moment, and names its threads
 * afresh (a new file_id per chunk), so that a window starting at any chunk is
 * complete. A snapshot opens a file and a sink for it, and writes the head, the first
 * chunk's prologue, the chunks' lines, the current chunk's, the cut's lines ending
 * what is open now ("open":true) and the end marker; under a new name, renamed when
 * complete, so a snapshot file is never seen half written. It runs in the writer
 * thread, which meanwhile does not drain: about 0.1 s for a 64 MiB window.
 */
#include "writer/format.h"

#include "common/atomic.h"
#include "common/mem.h"
#include "path/path.h"
#include "sink/trace_file.h"
#include "writer/slices.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* At most this much of a flight chunk goes to its prologue (what does not fit is
 * counted in cut_lost); a flight chunk has this much more room, so its lines have
 * the room of any chunk. */
#define PROLOGUE_MAX (RTR__CHUNK_BYTES / 4)
#define FLIGHT_CHUNK (RTR__CHUNK_BYTES + PROLOGUE_MAX)

struct rtr__flight {
	size_t window;		   /* bytes of lines kept: flight_mb MiB */
	size_t max_chunks;	   /* chunks ever made: the window's, and one being filled */
	size_t populate;	   /* bytes of a chunk its lines usually fill */
	size_t nmade;		   /* chunks made so far */
	struct rtr__chunk **kept;  /* max_chunks slots: the window, oldest at `first` */
	size_t first, nkept;	   /* ring of kept chunks */
	size_t kept_bytes;	   /* their lengths */
	struct rtr__chunk **spare; /* chunks to reuse */
	size_t nspare;
	uint64_t evicted;	 /* events in chunks that fell out of the window */
	uint64_t snapshot_bytes; /* written in snapshots */
};

static uint64_t file_ids;

/* A file id unique in the process: the session's id and a count (struct rtr__out). */
static uint64_t new_file_id(struct rtr__writer *w)
{
	return (w->drain.session_id << 32) | (++file_ids & 0xffffffffu);
}

/* The latest time written on r's timeline, on the trace clock and not before the
 * origin: where a cut ends and begins again r's open slices. */
static uint64_t ring_cut_ts(struct rtr__writer *w, struct rtr__ring *r)
{
	uint64_t t = rtr__drain_cut_ns(w, r);

	return t > w->s.origin_ns ? t : w->s.origin_ns;
}

/* Whether r belongs to this session and has slices open. */
static int has_open(struct rtr__writer *w, struct rtr__ring *r)
{
	const struct rtr__reader *rd = rtr__reader_of(r);

	return rd->session == w->drain.session_id && rd->slices != NULL &&
	       (rd->slices->depth > 0 || rd->slices->overflow > 0);
}

/* The latest time written on any thread: where async spans end and begin again. */
static uint64_t latest_ts(struct rtr__writer *w, size_t n)
{
	uint64_t latest = w->s.origin_ns;

	for (size_t i = 0; i < n; i++) {
		struct rtr__ring *r = w->drain.rings[i];
		if (rtr__reader_of(r)->session == w->drain.session_id) {
			uint64_t t = ring_cut_ts(w, r);
			latest = t > latest ? t : latest;
		}
	}
	return latest;
}

/*
 * r's open slices ended (innermost first, with the arguments added so far) or begun
 * again (outermost first, with the B's own arguments), at ts, within *budget.
 * Returns the lines.
 */
static uint64_t cut_ring(struct rtr__writer *w, struct rtr__ring *r, int what, uint64_t ts,
			 size_t *budget)
{
	const struct rtr__slices *s = rtr__reader_of(r)->slices;
	uint64_t lines = 0;

	for (uint32_t k = 0; k < s->depth; k++) {
		uint32_t i = what == RTR__CUT_BEGIN ? k : s->depth - 1 - k;
		const struct rtr__open_slice *l = &s->level[i];
		struct rtr__event ev;
		memset(&ev, 0, sizeof(ev));
		ev.type = what == RTR__CUT_BEGIN ? RTR__EV_BEGIN : RTR__EV_END;
		ev.count = 0;
		ev.name = l->name;
		ev.cat = l->cat;
		ev.tid = r->tid;
		ev.ts = ts;
		if (l->name == NULL && l->copy_len != UINT32_MAX) {
			ev.flags = RTR__EVF_COPIED;
			ev.name = s->text + l->copy_off;
			ev.name_len = l->copy_len;
		}
		if (what == RTR__CUT_BEGIN) {
			rtr__slices_bargs(s, i, &ev.args);
		} else {
			ev.more = w->drain.added;
			ev.nmore = rtr__slices_added(s, i, w->drain.added, RTR_SLICES_ADDED_MAX);
		}
		if (!w->fmt->cut(w, r, &ev, what, budget))
			break; /* the caller counts what is left */
		lines++;
	}
	return lines;
}

/* The open async spans ended (newest first) or begun again (oldest first). */
static uint64_t cut_async(struct rtr__writer *w, int what, uint64_t ts, size_t *budget)
{
	static const struct rtr__async_span *list[RTR_ASYNC_OPEN_MAX]; /* writer thread only */
	size_t n = rtr__async_open_list(&w->async, what == RTR__CUT_BEGIN ? 1 : -1, list);
	uint64_t lines = 0;

	for (size_t i = 0; i < n; i++) {
		struct rtr__event ev;
		rtr__async_open_event(list[i], &ev);
		if (what != RTR__CUT_BEGIN)
			ev.type = RTR__EV_ASYNC_END;
		ev.ts = ts;
		if (!w->fmt->cut(w, NULL, &ev, what, budget))
			break;
		lines++;
	}
	return lines;
}

/*
 * End what is open (what: RTR__CUT_END, RTR__CUT_OPEN) or begin it again
 * (RTR__CUT_BEGIN), within `budget` bytes. Beginning, it names the threads first.
 * Returns the lines; what could not be written is counted in cut_lost (once, at the
 * end, for slices past the stack's depth).
 */
static uint64_t cut_lines(struct rtr__writer *w, int what, size_t budget)
{
	size_t n = rtr__rings_snapshot(&w->drain.rings, &w->drain.rings_cap);
	uint64_t lines = 0;
	size_t start = w->out.chunk->len;

	for (size_t i = 0; i < n; i++) {
		struct rtr__ring *r = w->drain.rings[i];
		if (!has_open(w, r))
			continue;
		const struct rtr__slices *s = rtr__reader_of(r)->slices;
		if (what == RTR__CUT_BEGIN && rtr__reader_of(r)->meta_file != w->out.file_id)
			rtr__drain_thread_meta(w, r, 0);
		size_t used = w->out.chunk->len - start; /* within one chunk while budgeted */
		size_t left = budget > used ? budget - used : 0;
		uint64_t k = cut_ring(w, r, what, ring_cut_ts(w, r), &left);
		lines += k;
		if (what != RTR__CUT_BEGIN)
			w->out.cut_lost += s->depth - k + s->overflow;
	}
	size_t used = w->out.chunk->len - start;
	size_t left = budget > used ? budget - used : 0;
	lines += cut_async(w, what, latest_ts(w, n), &left);
	if (what == RTR__CUT_BEGIN) {
		/* and the ring being drained, which may be midway through a batch */
		struct rtr__ring *cur = w->drain.current;
		if (cur != NULL && rtr__reader_of(cur)->session == w->drain.session_id &&
		    rtr__reader_of(cur)->meta_file != w->out.file_id)
			rtr__drain_thread_meta(w, cur, 0);
	}
	return lines;
}

uint64_t rtr__cut_closing_bytes(struct rtr__writer *w)
{
	size_t n = rtr__rings_snapshot(&w->drain.rings, &w->drain.rings_cap);
	/* the end marker and "]", and a page of padding (out_commit()) */
	uint64_t bytes = 1024 + PAGE_BYTES;

	for (size_t i = 0; i < n; i++) {
		struct rtr__ring *r = w->drain.rings[i];
		if (!has_open(w, r))
			continue;
		const struct rtr__slices *s = rtr__reader_of(r)->slices;
		/* an E line each: its fixed part, a copied name, the arguments added */
		bytes += (uint64_t)s->depth * 192 + rtr__slices_text(s);
	}
	return bytes + (uint64_t)w->async.count * (RTR_ASYNC_TEXT_MAX + 96);
}

uint64_t rtr__cut_end_open(struct rtr__writer *w, int what)
{
	return cut_lines(w, what, SIZE_MAX);
}

/* The file of number `no`'s path into out. 0 or -errno. */
static int file_path(struct rtr__writer *w, uint64_t no, char *out, size_t size)
{
	return rtr__path_expand(out, size, w->s.pattern, w->s.pid, w->s.host, w->s.rank, no);
}

static void report(struct rtr__writer *w, const char *what, const char *path, int err)
{
	if (w->out.error_reported)
		return;
	w->out.error_reported = 1;
	fprintf(stderr, "ringtrace: %s %s: %s; the events not written are counted as dropped\n",
		what, path, strerror(-err));
}

/* ------------------------------------------------------------------------- */
/* Rotation                                                                   */

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

void rtr__cut_close_old(struct rtr__writer *w)
{
	while (w->out.nold > 0)
		drop_oldest(&w->out);
}

/* A new file begins in the sink: its counters, names, head, what was open. */
static void begin_file(struct rtr__writer *w)
{
	struct rtr__out *o = &w->out;

	o->file_id = new_file_id(w);
	o->file_events = o->encoded;
	o->file_failed = rtr_atomic_load_relaxed(&o->sink.events_failed);
	o->continued = o->closed = 0;
	o->finishing = 0;
	o->continues = 0;
	rtr__out_begin_file(w);
	o->continued = cut_lines(w, RTR__CUT_BEGIN, SIZE_MAX);
}

void rtr__cut_rotate(struct rtr__writer *w)
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
	o->closed = cut_lines(w, RTR__CUT_END, SIZE_MAX);
	rtr__writer_account(w, 0);
	o->finishing = 1;
	o->continues = 1;
	out_reserve(w, 0); /* TAIL_ROOM is free */
	rtr__out_end_file(w, 1);
	o->chunk->final = 1; /* a compressed stream ends with the segment */
	rtr__out_submit(w);
	rtr__sink_wait(&o->sink);
	rtr__out_close_after_error(w);
	o->files++;

	uint64_t old_size = o->sink.offset; /* the finished segment's length */
	err = file_path(w, o->file_no + 1, path, sizeof(path));
	if (err == 0)
		err = rtr__trace_open(path, w->s.pid, &fd, tmp, sizeof(tmp), &truncate);
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
	begin_file(w);
	/* The head and what was open, in the file, before it takes the path. */
	rtr__out_submit(w);
	rtr__sink_wait(&o->sink);
	if (tmp[0] != '\0' && rename(tmp, path) != 0)
		report(w, "cannot rename the next segment to", path, -errno);
	snprintf(w->s.path, sizeof(w->s.path), "%s", path);
	if (w->s.cfg.keep > 0 && o->file_no >= w->s.cfg.keep &&
	    file_path(w, o->file_no - w->s.cfg.keep, old, sizeof(old)) == 0)
		unlink(old); /* ENOENT: deleted by someone else, which is fine */
	o->cutting = 0;
	if (w->s.cfg.max_seconds > 0)
		w->loop.next_cut_ns = rtr__mono_ns() + (uint64_t)w->s.cfg.max_seconds * 1000000000u;
	rtr__out_set_limit(w);
}

/* ------------------------------------------------------------------------- */
/* The flight window                                                          */

/* A chunk of the window, empty; NULL without memory. */
static struct rtr__chunk *flight_chunk(struct rtr__flight *f)
{
	struct rtr__chunk *c;

	if (f->nspare > 0) {
		c = f->spare[--f->nspare];
	} else if (f->nmade < f->max_chunks) {
		c = rtr__mem_map(sizeof(*c));
		if (c == NULL)
			return NULL;
		c->data = rtr__mem_map(FLIGHT_CHUNK);
		if (c->data == NULL) {
			rtr__mem_unmap(c, sizeof(*c));
			return NULL;
		}
#ifdef MADV_POPULATE_WRITE
		/* The part the lines fill, in one call: page by page, a first pass over the
		 * window cost a fault per 4 KiB (a quarter of the rate on a VM). Where the
		 * kernel refuses (before 5.14), the faults happen as before. */
		(void)madvise(c->data, f->populate, MADV_POPULATE_WRITE);
#endif
		f->nmade++;
	} else if (f->nkept > 0) {
		c = f->kept[f->first]; /* the oldest goes, whatever the bytes */
		f->first = (f->first + 1) % f->max_chunks;
		f->nkept--;
		f->kept_bytes -= c->len;
		f->evicted += c->events;
	} else {
		return NULL;
	}
	c->len = c->keep = 0;
	c->events = 0;
	c->nmeta = 0;
	c->final = 0;
	c->prologue = 0;
	return c;
}

/* Open the next chunk: names afresh, then the prologue. */
static void flight_begin_chunk(struct rtr__writer *w)
{
	struct rtr__out *o = &w->out;

	o->file_id = new_file_id(w);
	o->cutting = 1;
	o->chunk_limit = FLIGHT_CHUNK;
	o->chunk->prologue_lines = cut_lines(w, RTR__CUT_BEGIN, PROLOGUE_MAX);
	o->chunk->prologue = o->chunk->len;
	o->cutting = 0;
	rtr__out_set_limit(w);
}

void rtr__cut_keep_chunk(struct rtr__writer *w)
{
	struct rtr__out *o = &w->out;
	struct rtr__flight *f = o->flight;
	struct rtr__chunk *c = o->chunk, *next;

	if (c->len <= c->prologue && c->events == 0) {
		return; /* nothing but its prologue: it stays the one being filled */
	}
	/* In the window, then the oldest out until it holds flight_mb MiB at most. */
	f->kept[(f->first + f->nkept) % f->max_chunks] = c;
	f->nkept++;
	f->kept_bytes += c->len;
	while (f->nkept > 1 && f->kept_bytes > f->window) {
		struct rtr__chunk *old = f->kept[f->first];
		f->first = (f->first + 1) % f->max_chunks;
		f->nkept--;
		f->kept_bytes -= old->len;
		f->evicted += old->events;
		f->spare[f->nspare++] = old;
	}
	next = flight_chunk(f);
	if (next == NULL) { /* no memory for a second chunk: reuse this one */
		f->nkept--;
		f->kept_bytes -= c->len;
		f->evicted += c->events;
		c->len = c->events = 0;
		c->nmeta = 0;
		next = c;
	}
	o->chunk = next;
	flight_begin_chunk(w);
}

void rtr__cut_flight_counts(const struct rtr__writer *w, uint64_t *evicted, uint64_t *bytes)
{
	const struct rtr__flight *f = w->out.flight;

	/* while a snapshot is written: what it does not hold */
	*evicted = f == NULL ? 0 : w->out.snapshotting ? w->out.snapshot_evicted : f->evicted;
	*bytes = f != NULL ? f->snapshot_bytes : 0;
}

/* Copy len bytes of lines into the snapshot's chunks. */
static void put_raw(struct rtr__writer *w, const char *data, size_t len)
{
	struct rtr__out *o = &w->out;

	while (len > 0) {
		size_t room = RTR__CHUNK_BYTES - PAGE_BYTES - TAIL_ROOM - o->chunk->len;
		if (room == 0) {
			rtr__out_submit(w);
			continue;
		}
		size_t n = len < room ? len : room;
		memcpy(o->chunk->data + o->chunk->len, data, n);
		o->chunk->len += n;
		data += n;
		len -= n;
	}
}

int rtr__cut_snapshot(struct rtr__writer *w, const char *want)
{
	struct rtr__out *o = &w->out;
	struct rtr__flight *f = o->flight;
	char path[PATH_MAX], tmp[PATH_MAX];
	int fd, truncate, err;
	uint64_t no = o->file_no;

	if (f == NULL)
		return -ENOTSUP;
	tmp[0] = '\0';
	if (want != NULL && want[0] != '\0')
		err = (size_t)snprintf(path, sizeof(path), "%s", want) >= sizeof(path)
			      ? -ENAMETOOLONG
			      : 0;
	else
		err = file_path(w, no, path, sizeof(path));
	if (err == 0)
		err = rtr__trace_open(path, w->s.pid, &fd, tmp, sizeof(tmp), &truncate);
	if (err == 0 && truncate && ftruncate(fd, 0) != 0) {
		err = -errno;
		close(fd);
	}
	if (err != 0) {
		fprintf(stderr, "ringtrace: cannot write the snapshot %s: %s\n", path,
			strerror(-err));
		return err;
	}
	size_t len = strlen(path);
	int gzip = w->s.cfg.compress == RTR_COMPRESS_GZIP_MEMBERS ||
		   (w->s.cfg.compress != RTR_COMPRESS_NONE && len >= 3 &&
		    strcmp(path + len - 3, ".gz") == 0);
	err = gzip ? rtr__sink_open_gzip(&o->sink, fd, w->s.cfg.io, RTR__CHUNK_BYTES, RTR__NCHUNKS,
					 w->s.cfg.compress == RTR_COMPRESS_GZIP_MEMBERS)
		   : rtr__sink_open(&o->sink, fd, w->s.cfg.io, RTR__CHUNK_BYTES, RTR__NCHUNKS);
	if (err != 0) {
		close(fd);
		if (tmp[0] != '\0')
			unlink(tmp);
		fprintf(stderr, "ringtrace: cannot write the snapshot %s: %s\n", path,
			strerror(-err));
		return err;
	}

	/* From here the lines go to the snapshot's sink; the chunk being filled waits. */
	struct rtr__chunk *filling = o->chunk;
	uint64_t saved_id = o->file_id;
	o->snapshotting = 1;
	o->cutting = 1;
	o->finishing = 0;
	o->chunk = rtr__sink_acquire(&o->sink);
	o->chunk_limit = RTR__CHUNK_BYTES;
	o->continued = 0;
	o->snapshot_events = 0;
	o->file_id = new_file_id(w);
	rtr__out_begin_file(w);
	/* The window is flight_mb MiB with the chunk being filled: the oldest kept ones
	 * past that are left out (whole: each begins what was open at its start). */
	size_t skip = 0, bytes = f->kept_bytes + filling->len;
	uint64_t left_out = 0;
	while (skip < f->nkept && bytes > f->window) {
		const struct rtr__chunk *c = f->kept[(f->first + skip) % f->max_chunks];
		bytes -= c->len;
		left_out += c->events;
		skip++;
	}
	o->snapshot_evicted = f->evicted + left_out;
	for (size_t i = skip; i <= f->nkept; i++) {
		const struct rtr__chunk *c =
			i < f->nkept ? f->kept[(f->first + i) % f->max_chunks] : filling;
		size_t from = i == skip ? 0 : c->prologue; /* the first begins what was open */
		if (i == skip)
			o->continued = c->prologue_lines; /* for the end marker */
		put_raw(w, c->data + from, c->len - from);
		o->snapshot_events += c->events;
	}
	o->closed = cut_lines(w, RTR__CUT_OPEN, SIZE_MAX);
	rtr__writer_account(w, 0);
	o->finishing = 1;
	out_reserve(w, 0);
	rtr__out_end_file(w, 1);
	o->chunk->final = 1;
	rtr__out_submit(w);
	err = rtr__sink_wait(&o->sink);
	f->snapshot_bytes += rtr_atomic_load_relaxed(&o->sink.bytes_written);
	rtr__sink_close(&o->sink);
	if (close(fd) != 0 && err == 0)
		err = -errno;
	if (err == 0 && tmp[0] != '\0' && rename(tmp, path) != 0)
		err = -errno;
	if (err != 0) {
		if (tmp[0] != '\0')
			unlink(tmp);
		fprintf(stderr, "ringtrace: writing the snapshot %s failed: %s\n", path,
			strerror(-err));
	}

	/* Back to the window (the closed sink keeps its results, no memory). */
	o->chunk = filling;
	o->file_id = saved_id;
	o->snapshotting = 0;
	o->cutting = 0;
	o->finishing = 0;
	o->file_no = no + 1;
	o->files++;
	rtr__out_set_limit(w);
	return err;
}

/* ------------------------------------------------------------------------- */
/* The session                                                                */

int rtr__cut_start(struct rtr__writer *w)
{
	struct rtr__out *o = &w->out;
	const struct rtr_config *cfg = &w->s.cfg;

	o->file_no = 0;
	o->files = 0;
	o->nold = 0;
	o->cut_lost = 0;
	o->continued = o->closed = 0;
	o->cutting = o->continues = o->snapshotting = 0;
	o->limit_bytes = UINT64_MAX;
	w->loop.next_cut_ns = 0;
	o->file_id = new_file_id(w);
	if (cfg->mode == RTR_MODE_FLIGHT) {
		struct rtr__flight *f = rtr__mem_map(sizeof(*f));
		size_t max;
		if (f == NULL)
			return -ENOMEM;
		f->window = (size_t)cfg->flight_mb << 20;
		/* Chunks of a sixteenth of the window (64 KiB .. 1 MiB of lines): a snapshot
		 * leaves out whole chunks to stay within the window, so it holds at least
		 * fifteen sixteenths of it. */
		o->chunk_target = f->window / 16;
		if (o->chunk_target < ((size_t)64 << 10))
			o->chunk_target = (size_t)64 << 10;
		if (o->chunk_target > RTR__CHUNK_BYTES - PAGE_BYTES - TAIL_ROOM)
			o->chunk_target = RTR__CHUNK_BYTES - PAGE_BYTES - TAIL_ROOM;
		o->chunk_room = FLIGHT_CHUNK;
		f->populate = (o->chunk_target + ((size_t)16 << 10) + 4095) & ~(size_t)4095;
		max = f->window / o->chunk_target + 2; /* the window's, one filled, one spare */
		f->max_chunks = max;
		f->kept = rtr__mem_map(2 * max * sizeof(*f->kept));
		if (f->kept == NULL) {
			rtr__mem_unmap(f, sizeof(*f));
			return -ENOMEM;
		}
		f->spare = f->kept + max;
		o->flight = f;
		o->chunk = flight_chunk(f);
		if (o->chunk == NULL) {
			rtr__cut_fini(w, RTR__FINI_ALL);
			return -ENOMEM;
		}
		o->provisional = 0;
		flight_begin_chunk(w);
		return 0;
	}
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

void rtr__cut_fini(struct rtr__writer *w, int how)
{
	struct rtr__flight *f = w->out.flight;

	if (how == RTR__FINI_FORGET) {
		w->out.flight = NULL;
		w->out.nold = 0;
		return;
	}
	for (unsigned i = 0; i < w->out.nold; i++)
		close(w->out.old_fd[i]); /* a child's copies, or what the stop left */
	w->out.nold = 0;
	w->out.flight = NULL;
	if (f == NULL)
		return;
	for (size_t i = 0; i < f->nkept; i++) {
		struct rtr__chunk *c = f->kept[(f->first + i) % f->max_chunks];
		if (c != w->out.chunk)
			f->spare[f->nspare++] = c;
	}
	if (w->out.chunk != NULL && w->out.snapshotting == 0)
		f->spare[f->nspare++] = w->out.chunk;
	for (size_t i = 0; i < f->nspare; i++) {
		rtr__mem_unmap(f->spare[i]->data, FLIGHT_CHUNK);
		rtr__mem_unmap(f->spare[i], sizeof(*f->spare[i]));
	}
	rtr__mem_unmap(f->kept, 2 * f->max_chunks * sizeof(*f->kept));
	rtr__mem_unmap(f, sizeof(*f));
	w->out.chunk = NULL;
}
