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
 */
#include "writer/sink.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/* Largest single pwrite(): Linux caps one at MAX_RW_COUNT (2 GiB less a page). */
#define MAX_WRITE ((size_t)1 << 30)

void rtr__sink_sync_write(struct rtr__sink *s, struct rtr__chunk *c)
{
	while (c->done < c->len) {
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

void rtr__sink_sync_hint(struct rtr__sink *s, uint64_t off, uint64_t len, int drop)
{
	/* Hints only: a refusal (a file system without them) changes nothing written. */
	if (drop)
		(void)posix_fadvise(s->fd, (off_t)off, (off_t)len, POSIX_FADV_DONTNEED);
	else
		(void)sync_file_range(s->fd, (off_t)off, (off_t)len, SYNC_FILE_RANGE_WRITE);
}
