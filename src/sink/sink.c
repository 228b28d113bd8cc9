/* SPDX-License-Identifier: MIT */
/*
 * Sinks, the shared part: the chunk pool, file offsets, counters and the error latch.
 * The methods (sink_uring.c, sink_sync.c) only move bytes; everything they learn comes
 * back through rtr__sink_wrote() and rtr__sink_complete() below.
 *
 * Pool. nchunks chunks of buf_bytes, carved from one anonymous mapping, each in one
 * of three states (rtr__chunk.busy): FREE, HELD by the writer between acquire and
 * submit, WRITING from submit until its write completes. Only io_uring leaves chunks
 * WRITING after rtr__sink_submit() returns, so only io_uring ever makes acquire wait.
 *
 * Offsets. Submission order is file order: each submitted chunk takes the next
 * s->offset and advances it by its length, so the file is the concatenation of the
 * chunks in the order the writer submitted them, whichever method writes them.
 *
 * Compression. With rtr__sink_open_gzip() the writer fills s->text, a chunk outside
 * the pool; submit compresses it into a pool chunk (sink_gzip.c) and goes on with
 * that one. Everything below then sees only compressed chunks: offsets and
 * bytes_written are the file's, text_offset and bytes_text the text's.
 *
 * Error latch. The first failed write latches its error. From then on submit writes
 * nothing: the chunk's events go to events_failed and it returns to the pool at once,
 * so a full disk costs the writer neither a block nor a crash. s->offset stops there.
 *
 * Threads. One thread at a time calls these functions: the writer thread, and around
 * its life the thread in rtr_start()/rtr_stop() (open before pthread_create(), close
 * after pthread_join(), which order everything). The counters and the error are the
 * only fields another thread reads (rtr_stats_get()), and they are stored with relaxed
 * atomics: each is an independent number with no data published behind it.
 */
#include "sink/sink.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ringtrace.h>

#include "common/atomic.h"
#include "common/mem.h"

/* Add n to a counter only the writer thread stores. */
static void count(uint64_t *ctr, uint64_t n)
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

	count(&s->bytes_written,
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
	if (s->method == RTR_IO_URING)
		return rtr__sink_uring_hint(s, off, RTR__SINK_CACHE_STEP, drop);
	rtr__sink_sync_hint(s, off, RTR__SINK_CACHE_STEP, drop);
	return 1;
}

/*
 * Page cache hints (sink.h): start writeback of each step the written end has left
 * half a window behind, and drop each step it has left a whole window behind. Returns
 * 0 when io_uring had too many hints in flight to take the rest (the next completion
 * tries again).
 */
static int cache_trim(struct rtr__sink *s)
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
			cache_trim(s);
	}
	count(&s->bytes_text, text_landed(c));
	if (err != 0) {
		/* Relaxed: the latch is read by this thread, and by others as a plain
		 * number; nothing they read depends on seeing it first. */
		if (rtr_atomic_load_relaxed(&s->error) == 0)
			rtr_atomic_store_relaxed(&s->error, err);
		note_close_points(s, c);
		uint64_t landed = events_in_prefix(c, c->done < c->len ? c->done : c->len);
		if (landed > c->events) /* not a chunk of the writer's lines */
			landed = c->events;
		count(&s->events_written, landed);
		count(&s->events_failed, c->events - landed);
	} else {
		count(&s->events_written, c->events);
	}
	c->busy = RTR__CHUNK_FREE;
}

/*
 * Zero s for open. The results may be read by rtr_stats_get() at any time, even while
 * a new session opens the sink, so they are cleared with relaxed stores, not memset().
 */
static void reset(struct rtr__sink *s)
{
	s->fd = -1;
	s->method = 0;
	s->chunk_bytes = 0;
	s->buf_bytes = 0;
	s->nchunks = 0;
	s->chunks = NULL;
	s->text = NULL;
	s->gzip = NULL;
	s->offset = 0;
	s->end = 0;
	s->text_offset = 0;
	s->cache_window = 0;
	s->cache_flushed = 0;
	s->cache_dropped = 0;
	s->written_end = 0;
	s->file_bytes = 0;
	s->stream = 0;
	s->nonblock = 0;
	s->cancel = NULL;
	s->nclose = 0;
	s->impl = NULL;
	rtr_atomic_store_relaxed(&s->bytes_written, 0);
	rtr_atomic_store_relaxed(&s->bytes_text, 0);
	rtr_atomic_store_relaxed(&s->events_written, 0);
	rtr_atomic_store_relaxed(&s->events_failed, 0);
	rtr_atomic_store_relaxed(&s->error, 0);
}

/* The chunk array: the pool, and one more for the text chunk of a gzip sink. */
static size_t array_bytes(unsigned nchunks)
{
	return ((size_t)nchunks + 1) * sizeof(struct rtr__chunk);
}

static void unmap_all(struct rtr__sink *s)
{
	rtr__sink_gzip_close(s);
	if (s->chunks != NULL) {
		rtr__mem_unmap(s->chunks[0].data, s->buf_bytes * s->nchunks);
		rtr__mem_unmap(s->chunks, array_bytes(s->nchunks));
	}
	s->chunks = NULL;
	s->nchunks = 0;
}

/* gzip: 0 plain, 1 one gzip member, 2 gzip members. */
static int open_sink(struct rtr__sink *s, int fd, int io, size_t chunk_bytes, unsigned nchunks,
		     int gzip)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t buf_bytes = chunk_bytes;
	size_t bytes; /* all the pool chunks; the chunk array itself is smaller */
	char *buf;
	int err;

	reset(s);
	if (fd < 0 || nchunks == 0 || chunk_bytes == 0 || page <= 0 ||
	    chunk_bytes % (size_t)page != 0 ||
	    (io != RTR_IO_AUTO && io != RTR_IO_URING && io != RTR_IO_SYNC))
		return -EINVAL;
	if (gzip) /* a full chunk compressed, whatever the text */
		buf_bytes = (rtr__sink_gzip_bound(chunk_bytes) + (size_t)page - 1) &
			    ~((size_t)page - 1);
	if (__builtin_mul_overflow(buf_bytes, nchunks, &bytes))
		return -EINVAL;

	/* A stream is written in order from where it stands; only a regular file we may
	 * write from 0 gets explicit offsets, a provisional tail and cache hints. */
	struct stat st;
	int fl = fcntl(fd, F_GETFL);
	s->stream = fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || fl < 0 || (fl & O_APPEND) ||
		    lseek(fd, 0, SEEK_CUR) != 0;
	s->nonblock = fl >= 0 && (fl & O_NONBLOCK);
	s->fd = fd;
	s->chunk_bytes = chunk_bytes;
	s->buf_bytes = buf_bytes;
	s->nchunks = nchunks;
	s->chunks = rtr__mem_map(array_bytes(nchunks));
	buf = rtr__mem_map(bytes);
	if (s->chunks == NULL || buf == NULL) {
		rtr__mem_unmap(buf, bytes);
		rtr__mem_unmap(s->chunks, array_bytes(nchunks));
		reset(s);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < nchunks; i++) {
		s->chunks[i].data = buf + (size_t)i * buf_bytes;
		s->chunks[i].index = i;
	}
	if (gzip) {
		err = rtr__sink_gzip_open(s, gzip == 2);
		if (err != 0) {
			unmap_all(s);
			reset(s);
			return err;
		}
	}

	/* A stream always goes through write(2), one write at a time (sink_sync.c). */
	if (io != RTR_IO_SYNC && !s->stream) {
		err = rtr__sink_uring_open(s);
		if (err == 0) {
			s->method = RTR_IO_URING;
			return 0;
		}
		if (io == RTR_IO_URING) {
			unmap_all(s);
			reset(s);
			return err;
		}
		/* RTR_IO_AUTO: no io_uring here (old kernel, seccomp, sysctl); write(2)
		 * produces the same bytes. */
	}
	s->method = RTR_IO_SYNC;
	return 0;
}

int rtr__sink_open(struct rtr__sink *s, int fd, int io, size_t chunk_bytes, unsigned nchunks)
{
	return open_sink(s, fd, io, chunk_bytes, nchunks, 0);
}

int rtr__sink_open_gzip(struct rtr__sink *s, int fd, int io, size_t chunk_bytes, unsigned nchunks,
			int members)
{
	return open_sink(s, fd, io, chunk_bytes, nchunks, members ? 2 : 1);
}

/* Hand c out empty. */
static struct rtr__chunk *hold(struct rtr__chunk *c)
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

struct rtr__chunk *rtr__sink_acquire(struct rtr__sink *s)
{
	if (s->text == NULL)
		return rtr__sink_take(s);
	/* Keep the counters current, as below. */
	if (s->method == RTR_IO_URING)
		rtr__sink_uring_reap(s, 0);
	return s->text->busy == RTR__CHUNK_FREE ? hold(s->text) : NULL;
}

struct rtr__chunk *rtr__sink_take(struct rtr__sink *s)
{
	/* Take in what has completed already: it costs no system call, frees chunks
	 * and keeps the counters current. */
	if (s->method == RTR_IO_URING)
		rtr__sink_uring_reap(s, 0);
	for (;;) {
		for (unsigned i = 0; i < s->nchunks; i++) {
			struct rtr__chunk *c = &s->chunks[i];

			if (c->busy == RTR__CHUNK_FREE)
				return hold(c);
		}
		/* Every chunk is held or being written. Only io_uring leaves chunks in
		 * flight: wait for one of its writes, which completes or fails (a dead
		 * ring fails them all at once). Nothing in flight means the writer holds
		 * every chunk itself, and waiting would never end. */
		if (s->method != RTR_IO_URING || !rtr__sink_uring_busy(s))
			return NULL;
		rtr__sink_uring_reap(s, 1);
	}
}

void rtr__sink_submit(struct rtr__sink *s, struct rtr__chunk *c)
{
	int err = rtr_atomic_load_relaxed(&s->error); /* own latch: only we store it */

	c->busy = RTR__CHUNK_WRITING;
	if (c->len == 0 || err != 0) {
		/* Nothing to write, or nothing may be written any more. */
		rtr__sink_complete(s, c, err);
		return;
	}
	if (c->keep == 0 || c->keep > c->len)
		c->keep = c->len;
	if (c == s->text) {
		/* From here on the compressed bytes go out in a pool chunk; the text is free. */
		c = rtr__sink_gzip_deflate(s, c);
		if (c == NULL)
			return;
		c->busy = RTR__CHUNK_WRITING;
		/* Own latch: only we store it; waiting for a pool chunk may have set it. */
		err = rtr_atomic_load_relaxed(&s->error);
		if (err != 0) {
			rtr__sink_complete(s, c, err);
			return;
		}
	}
	if (s->end > s->offset) {
		/* Cut the last provisional tail off before writing in its place: after
		 * every write in flight, so that it cannot land after the cut. */
		err = rtr__sink_wait(s);
		if (err == 0 && ftruncate(s->fd, (off_t)s->offset) != 0)
			err = -errno;
		if (err != 0) {
			rtr__sink_complete(s, c, err);
			return;
		}
		s->end = s->offset;
	}
	c->offset = s->offset;
	c->done = 0;
	s->offset += c->keep; /* the next chunk goes over a provisional tail */
	s->text_offset += c->gzip ? c->keep_text : c->keep;
	s->end = c->offset + c->len;
	if (s->method == RTR_IO_URING)
		rtr__sink_uring_write(s, c);
	else
		rtr__sink_sync_write(s, c);
}

int rtr__sink_wait(struct rtr__sink *s)
{
	if (s->method == RTR_IO_URING) {
		while (rtr__sink_uring_busy(s))
			rtr__sink_uring_reap(s, 1);
	}
	return rtr_atomic_load_relaxed(&s->error); /* own latch: only we store it */
}

void rtr__sink_close(struct rtr__sink *s)
{
	if (s->chunks == NULL)
		return;
	rtr__sink_wait(s);
	/* The hints the last completions could not queue, so that the file ends with no
	 * more than the window cached, as it ran. */
	while (s->cache_window != 0 && s->method == RTR_IO_URING && !cache_trim(s))
		rtr__sink_uring_hints_wait(s);
	if (s->method == RTR_IO_URING)
		rtr__sink_uring_close(s);
	s->impl = NULL;
	unmap_all(s);
}

int rtr__sink_reopen(struct rtr__sink *s, int fd)
{
	struct stat st;

	rtr__sink_wait(s);
	while (s->method == RTR_IO_URING && s->cache_window != 0 && !cache_trim(s))
		rtr__sink_uring_hints_wait(s);
	if (s->method == RTR_IO_URING)
		rtr__sink_uring_hints_wait(s); /* none may reach the old fd after its close */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return -EINVAL; /* segments are regular files (rotation refuses streams) */
	s->fd = fd;
	s->offset = s->end = s->text_offset = 0;
	s->cache_flushed = s->cache_dropped = s->written_end = 0;
	s->nclose = 0;
	/* own counter: only this thread stores it */
	s->file_bytes = rtr_atomic_load_relaxed(&s->bytes_written);
	if (s->gzip != NULL)
		rtr__sink_gzip_restart(s);
	return 0;
}

void rtr__sink_setup(struct rtr__sink *s)
{
	if (s->chunks != NULL && s->method == RTR_IO_URING) {
		rtr__sink_wait(s);
		rtr__sink_uring_setup(s);
	}
}

void rtr__sink_forget(struct rtr__sink *s)
{
	if (s->chunks == NULL)
		return;
	if (s->method == RTR_IO_URING)
		rtr__sink_uring_forget(s);
	s->impl = NULL;
	unmap_all(s);
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

int rtr__sink_write_close(struct rtr__sink *s, unsigned i, const char *text, size_t len)
{
	uint64_t off = s->close_off[i], lost = s->close_lost[i];
	struct stat st;
	size_t done = 0;

	if (i >= s->nclose || s->stream || fstat(s->fd, &st) != 0 || (uint64_t)st.st_size < off)
		return -EINVAL; /* never past what is in the file: that would leave a hole */
	if (ftruncate(s->fd, (off_t)off) != 0)
		return -errno;
	while (done < len) {
		ssize_t n = pwrite(s->fd, text + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	/* The lines cut off are lost after all; the file is now exactly this long. */
	uint64_t written = rtr_atomic_load_relaxed(&s->events_written);
	if (lost > written) /* cannot happen: they were counted written when they landed */
		lost = written;
	count(&s->events_failed, lost);
	rtr_atomic_store_relaxed(&s->events_written, written - lost);
	rtr_atomic_store_relaxed(&s->bytes_written, s->file_bytes + off + len);
	rtr_atomic_store_relaxed(&s->bytes_text, s->file_bytes + off + len);
	return 0;
}
