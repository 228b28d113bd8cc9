/* SPDX-License-Identifier: MIT */
/*
 * Sinks: opening one on a file, the chunk pool, file offsets, submitting, waiting,
 * closing. The methods (sink_uring.c, sink_sync.c) only move bytes, called through
 * their table (struct rtr__sink_ops); everything they learn comes back through
 * rtr__sink_wrote() and rtr__sink_complete() (pool.c).
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
	s->ops = NULL;
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
			s->ops = &rtr__sink_uring_ops;
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
	s->ops = &rtr__sink_sync_ops;
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

struct rtr__chunk *rtr__sink_acquire(struct rtr__sink *s)
{
	if (s->text == NULL)
		return rtr__sink_take(s);
	s->ops->reap(s, 0); /* keep the counters current, as rtr__sink_take() does */
	return s->text->busy == RTR__CHUNK_FREE ? rtr__sink_hold(s->text) : NULL;
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
	s->ops->write(s, c);
}

int rtr__sink_wait(struct rtr__sink *s)
{
	while (s->ops != NULL && s->ops->busy(s))
		s->ops->reap(s, 1);
	return rtr_atomic_load_relaxed(&s->error); /* own latch: only we store it */
}

void rtr__sink_close(struct rtr__sink *s)
{
	if (s->chunks == NULL)
		return;
	rtr__sink_wait(s);
	/* The hints the last completions could not queue, so that the file ends with no
	 * more than the window cached, as it ran. */
	while (s->cache_window != 0 && !rtr__sink_cache_trim(s))
		s->ops->hints_wait(s);
	s->ops->close(s);
	s->impl = NULL;
	unmap_all(s);
}

int rtr__sink_reopen(struct rtr__sink *s, int fd)
{
	struct stat st;

	rtr__sink_wait(s);
	while (s->cache_window != 0 && !rtr__sink_cache_trim(s))
		s->ops->hints_wait(s);
	s->ops->hints_wait(s); /* none may reach the old fd after its close */
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
	if (s->chunks != NULL) {
		rtr__sink_wait(s);
		s->ops->setup(s);
	}
}

void rtr__sink_forget(struct rtr__sink *s)
{
	if (s->chunks == NULL)
		return;
	s->ops->forget(s);
	s->impl = NULL;
	unmap_all(s);
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
	rtr__sink_count(&s->events_failed, lost);
	rtr_atomic_store_relaxed(&s->events_written, written - lost);
	rtr_atomic_store_relaxed(&s->bytes_written, s->file_bytes + off + len);
	rtr_atomic_store_relaxed(&s->bytes_text, s->file_bytes + off + len);
	return 0;
}
