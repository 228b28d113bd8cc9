/* SPDX-License-Identifier: MIT */
/*
 * The write(2) sink method: pwrite(2) in the writer thread, for when io_uring is not
 * there (old kernel, seccomp, io_uring_disabled sysctl) or not wanted (RINGTRACE_IO=sync).
 *
 * Each chunk is written in full before submit returns, so chunks reach the file one
 * after the other in submission order: a killed program leaves a prefix with no hole.
 * pwrite at the chunk's own offset, not write(2): the bytes land where io_uring would
 * put them whatever the file position, so both methods make identical files.
 *
 * A short write goes on from where it stopped; a signal (EINTR) is retried. Any other
 * error, or a write that takes nothing, fails the chunk and latches the error. A
 * short write followed by an error leaves its bytes in the file and counted in
 * bytes_written; the chunk's events count as failed.
 *
 * Streams (pipes, FIFOs, ttys, devices: rtr__sink.stream) go through write(2) in
 * order, whatever method was asked for. Why not io_uring there: a pipe write of a
 * whole chunk is taken a pipe buffer at a time, and several in flight interleave
 * their pieces (a reader got JSON torn at 64 KiB boundaries); keeping one in flight
 * and continuing short writes in order is what this loop does anyway, and a pipe is
 * never faster than the writer's own write(2). A stream may block for good (a
 * FIFO nobody reads), so the writer never sleeps in write(2) on one: it waits in
 * poll() in slices and gives up when told to (rtr__sink.cancel, the stop timeout).
 * A stream we opened is O_NONBLOCK, and a full pipe is EAGAIN. An inherited one
 * (RINGTRACE_FILE=-) keeps the blocking mode its owner gave it, which we must not
 * change (the description is shared): after poll() says there is room, we write
 * at most PIPE_BUF bytes, which a pipe takes at once. Worst case, another writer
 * to the same pipe fills it between our poll() and write(), and that write waits
 * for the reader past the stop timeout.
 */
#include "sink/sink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

/* Largest single pwrite(): Linux caps one at MAX_RW_COUNT (2 GiB less a page). */
#define MAX_WRITE ((size_t)1 << 30)

/* A slice of the wait for a stream: how soon a cancel is seen. */
#define POLL_SLICE_MS 50

/* Wait until fd takes bytes, in slices: 0, or -ETIMEDOUT once cancelled. */
static int stream_wait(struct rtr__sink *s)
{
	struct pollfd p = {.fd = s->fd, .events = POLLOUT};

	for (;;) {
		if (rtr__sink_cancelled(s))
			return -ETIMEDOUT;
		int n = poll(&p, 1, POLL_SLICE_MS);
		if (n > 0)
			return 0; /* room, or an error (POLLERR, POLLHUP) that write() reports */
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static void stream_write(struct rtr__sink *s, struct rtr__chunk *c)
{
	struct stat st;
	/* A blocking pipe, FIFO, socket or tty takes PIPE_BUF at once once poll() says so. */
	int piece = !s->nonblock && fstat(s->fd, &st) == 0 && !S_ISREG(st.st_mode);
	int err;

	while (c->done < c->len) {
		size_t left = c->len - c->done;

		if (piece) {
			err = stream_wait(s);
			if (err != 0)
				goto fail;
			if (left > PIPE_BUF)
				left = PIPE_BUF;
		} else if (rtr__sink_cancelled(s)) {
			err = -ETIMEDOUT;
			goto fail;
		}
		ssize_t n = write(s->fd, c->data + c->done, left > MAX_WRITE ? MAX_WRITE : left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			err = stream_wait(s);
			if (err != 0)
				goto fail;
			continue;
		}
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			goto fail;
		}
		rtr__sink_wrote(s, c, (size_t)n);
		c->done += (size_t)n;
	}
	rtr__sink_complete(s, c, 0);
	return;
fail:
	rtr__sink_complete(s, c, err);
}

static void sync_write(struct rtr__sink *s, struct rtr__chunk *c)
{
	if (s->stream) {
		stream_write(s, c);
		return;
	}
	while (c->done < c->len) {
		/* A regular file's pwrite() cannot be interrupted (a hung NFS mount): at
		 * least start none after the stop timeout. */
		if (rtr__sink_cancelled(s)) {
			rtr__sink_complete(s, c, -ETIMEDOUT);
			return;
		}
		size_t left = c->len - c->done;
		ssize_t n = pwrite(s->fd, c->data + c->done, left > MAX_WRITE ? MAX_WRITE : left,
				   (off_t)(c->offset + c->done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rtr__sink_complete(s, c, n < 0 ? -errno : -EIO);
			return;
		}
		rtr__sink_wrote(s, c, (size_t)n);
		c->done += (size_t)n;
	}
	rtr__sink_complete(s, c, 0);
}

static int sync_hint(struct rtr__sink *s, uint64_t off, uint64_t len, int drop)
{
	/* A refusal (a file system without them) changes nothing written; a writeback
	 * error that sync_file_range() reports is a write error (rtr__sink_hint_result()).
	 * fadvise reports none. */
	if (drop)
		(void)posix_fadvise(s->fd, (off_t)off, (off_t)len, POSIX_FADV_DONTNEED);
	else if (sync_file_range(s->fd, (off_t)off, (off_t)len, SYNC_FILE_RANGE_WRITE) != 0)
		rtr__sink_hint_result(s, -errno);
	return 1; /* done, in this thread */
}

/* Nothing is ever in flight: each call returns once its work is done. */
static void sync_reap(struct rtr__sink *s, int wait)
{
	(void)s;
	(void)wait;
}

static int sync_busy(const struct rtr__sink *s)
{
	(void)s;
	return 0;
}

static void sync_nothing(struct rtr__sink *s)
{
	(void)s;
}

const struct rtr__sink_ops rtr__sink_sync_ops = {
	.write = sync_write,
	.reap = sync_reap,
	.busy = sync_busy,
	.hint = sync_hint,
	.hints_wait = sync_nothing,
	.setup = sync_nothing,
	.close = sync_nothing,
	.forget = sync_nothing,
};
