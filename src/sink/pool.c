/* SPDX-License-Identifier: MIT */
/*
 * Sinks, the part the methods share: the pool's chunks handed out and taken back,
 * what a chunk's write tells (bytes, events, the error latch, the places a failed
 * file can be closed at), and the page cache hints its progress calls for. The
 * methods (sink_uring.c, sink_sync.c) report here; sink.c, which opens, submits and
 * closes, calls them only through their table (struct rtr__sink_ops), so nothing here
 * calls up.
 */
#include "sink/sink.h"

#include <errno.h>
#include <string.h>

#include <ringtrace.h>

#include "common/atomic.h"

/* Add n to a counter only the writer thread stores. */
void rtr__sink_count(uint64_t *ctr, uint64_t n)
{
	/*
	 * Relaxed load: own counter, only this thread stores it. Relaxed store: readers
	 * want the number alone. Worst case, a concurrent rtr_stats_get() sees
	 * bytes_written already counting a chunk whose events are not counted yet; the
	 * final values are exact once the writer is joined (thread join orders them).
	 */
	rtr_atomic_store_relaxed(ctr, rtr_atomic_load_relaxed(ctr) + n);
}

/* n more bytes of c reached the file, from c->done on; only those below the kept
 * length count (a provisional tail is written over later). */
void rtr__sink_wrote(struct rtr__sink *s, const struct rtr__chunk *c, size_t n)
{
	size_t end = c->done + n;

	rtr__sink_count(&s->bytes_written,
			(end < c->keep ? end : c->keep) - (c->done < c->keep ? c->done : c->keep));
}

/*
 * Events in the whole lines among the first `done` bytes of c: what a failed write
 * left in the file. 0 when the chunk has too many non-event lines to tell.
 */
static uint64_t events_in_prefix(const struct rtr__chunk *c, size_t done)
{
	uint64_t lines = 0, meta = 0;

	if (c->gzip) /* what a cut member or stream still gives a reader is not counted */
		return done >= c->keep ? c->events : 0;
	if (c->nmeta > RTR_CHUNK_META_MAX)
		return 0;
	for (const char *p = c->data, *end = c->data + done;
	     (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
		lines++;
	for (uint32_t i = 0; i < c->nmeta; i++)
		meta += c->meta_end[i] <= done;
	return lines - meta;
}

/* Text bytes the kept part of c put in the file, c->done bytes being written. */
static size_t text_landed(const struct rtr__chunk *c)
{
	if (c->gzip)
		return c->done >= c->keep ? c->keep_text : 0;
	return c->done < c->keep ? c->done : c->keep;
}

/* One page cache hint for the step at off; 0 when io_uring cannot take it yet. */
static int hint(struct rtr__sink *s, uint64_t off, int drop)
{
	return s->ops->hint(s, off, RTR__SINK_CACHE_STEP, drop);
}

/*
 * Page cache hints (sink.h): start writeback of each step the written end has left
 * half a window behind, and drop each step it has left a whole window behind. Returns
 * 0 when io_uring had too many hints in flight to take the rest (the next completion
 * tries again).
 */
int rtr__sink_cache_trim(struct rtr__sink *s)
{
	const uint64_t step = RTR__SINK_CACHE_STEP;

	for (; s->written_end - s->cache_flushed >= s->cache_window / 2 + step;
	     s->cache_flushed += step)
		if (!hint(s, s->cache_flushed, 0))
			return 0;
	for (; s->written_end - s->cache_dropped >= s->cache_window + step;
	     s->cache_dropped += step)
		if (!hint(s, s->cache_dropped, 1))
			return 0;
	return 1;
}

void rtr__sink_cache_window(struct rtr__sink *s, uint64_t window)
{
	const uint64_t step = RTR__SINK_CACHE_STEP;

	s->cache_window = window == 0 ? 0 : (window + step - 1) / step * step;
}

/*
 * c failed with done bytes landed: keep the places its kept lines let the file be
 * closed at (sink.h), when it left the file shorter than any failure before it. With
 * io_uring a chunk drained behind a short write can fail first, at a higher offset;
 * the one that left the file shortest is where the file really ends.
 */
static void note_close_points(struct rtr__sink *s, const struct rtr__chunk *c)
{
	size_t lim = c->done < c->keep ? c->done : c->keep;
	uint64_t landed;
	unsigned n = 0;

	if (s->stream || c->gzip || c->nmeta > RTR_CHUNK_META_MAX || c->offset == UINT64_MAX)
		return; /* (a chunk failed by the latch never had a place in the file) */
	if (s->nclose > 0 && s->close_off[0] <= c->offset + lim)
		return;
	landed = events_in_prefix(c, lim);
	for (size_t p = lim; p > 0 && n < RTR__SINK_CLOSE_POINTS; p--) {
		if (c->data[p - 1] != '\n')
			continue;
		s->close_off[n] = c->offset + p;
		s->close_lost[n++] = landed - events_in_prefix(c, p);
	}
	/* The chunk's start ends the chunk before it, which landed whole: also a place
	 * (but the file's start is not: the "[" line must stay). */
	if (n < RTR__SINK_CLOSE_POINTS && c->offset > 0 &&
	    (n == 0 || s->close_off[n - 1] != c->offset)) {
		s->close_off[n] = c->offset;
		s->close_lost[n++] = landed;
	}
	s->nclose = n;
}

void rtr__sink_complete(struct rtr__sink *s, struct rtr__chunk *c, int err)
{
	if (err == 0 && c->done > 0 && c->offset + c->keep > s->written_end) {
		s->written_end = c->offset + c->keep;
		if (s->cache_window != 0)
			rtr__sink_cache_trim(s);
	}
	rtr__sink_count(&s->bytes_text, text_landed(c));
	if (err != 0) {
		/* Relaxed: the latch is read by this thread, and by others as a plain
		 * number; nothing they read depends on seeing it first. */
		if (rtr_atomic_load_relaxed(&s->error) == 0)
			rtr_atomic_store_relaxed(&s->error, err);
		note_close_points(s, c);
		uint64_t landed = events_in_prefix(c, c->done < c->len ? c->done : c->len);
		if (landed > c->events) /* not a chunk of the writer's lines */
			landed = c->events;
		rtr__sink_count(&s->events_written, landed);
		rtr__sink_count(&s->events_failed, c->events - landed);
	} else {
		rtr__sink_count(&s->events_written, c->events);
	}
	c->busy = RTR__CHUNK_FREE;
}

/* Hand c out empty. */
struct rtr__chunk *rtr__sink_hold(struct rtr__chunk *c)
{
	c->busy = RTR__CHUNK_HELD;
	c->len = 0;
	c->keep = 0;
	c->events = 0;
	c->nmeta = 0;
	c->final = 0;
	c->prologue = 0;
	c->prologue_lines = 0;
	c->gzip = 0;
	c->keep_text = 0;
	c->offset = UINT64_MAX; /* none until submit gives it one */
	c->done = 0;
	return c;
}

struct rtr__chunk *rtr__sink_take(struct rtr__sink *s)
{
	/* Take in what has completed already: it costs no system call, frees chunks
	 * and keeps the counters current. */
	s->ops->reap(s, 0);
	for (;;) {
		for (unsigned i = 0; i < s->nchunks; i++) {
			struct rtr__chunk *c = &s->chunks[i];

			if (c->busy == RTR__CHUNK_FREE)
				return rtr__sink_hold(c);
		}
		/* Every chunk is held or being written. Only io_uring leaves chunks in
		 * flight: wait for one of its writes, which completes or fails (a dead
		 * ring fails them all at once). Nothing in flight means the writer holds
		 * every chunk itself, and waiting would never end. */
		if (!s->ops->busy(s))
			return NULL;
		s->ops->reap(s, 1);
	}
}

void rtr__sink_fail(struct rtr__sink *s, int err)
{
	/* Relaxed, as in rtr__sink_complete(): the latch is a plain number to others. */
	if (rtr_atomic_load_relaxed(&s->error) == 0)
		rtr_atomic_store_relaxed(&s->error, err);
}

void rtr__sink_hint_result(struct rtr__sink *s, int res)
{
	if (res == -EIO || res == -ENOSPC || res == -EDQUOT)
		rtr__sink_fail(s, res);
}

int rtr__sink_cancelled(const struct rtr__sink *s)
{
	/* Relaxed: a flag alone; we only stop waiting, nothing is read behind it. */
	return s->cancel != NULL && rtr_atomic_load_relaxed(s->cancel) != 0;
}
