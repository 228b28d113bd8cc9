/* SPDX-License-Identifier: MIT */
/*
 * The io_uring sink method: several chunks in flight while the writer formats the next.
 *
 * Ring. One SQ entry per chunk (at most 32768 chunks, the kernel's ring limit). Every
 * chunk being written has exactly one request outstanding: prepared in the SQ ring,
 * or in the kernel. So the SQ ring never fills and io_uring_get_sqe() never fails,
 * and no function here has to wait for SQ space. The CQ ring (twice the SQ) holds
 * every completion that can be pending.
 *
 * Buffers. The chunks are registered once (io_uring_register_buffers()) and written
 * with IORING_OP_WRITE_FIXED: no page lookup per write. Registration pins the pages
 * and charges them to RLIMIT_MEMLOCK unless the process has CAP_IPC_LOCK. That limit
 * counts per user, across all its processes: with Debian's default 8 MiB, the second
 * traced process of one user (4 x 1 MiB each) is already refused. When registration
 * fails (ENOMEM over the limit, a chunk over 1 GiB, more than 16384 chunks) the same
 * buffers go out with plain IORING_OP_WRITE. For buffered writes the kernel copies
 * the bytes either way, and we measured no difference; never a reason to give up
 * io_uring.
 *
 * Order. The trace must stay a valid prefix if the program is killed at any moment
 * (SIGKILL mid-run): at any time, the bytes in the file should be the bytes submitted
 * so far, from offset 0, with no hole. Writes at explicit offsets produce the right
 * file once all complete in any order, but a kill in between would leave a hole
 * (zeros) before a later chunk. What io_uring itself gives:
 *   - Buffered writes that have to block are punted to io-wq, and io-wq runs the
 *     punted writes to one regular file one at a time, in the order they were
 *     queued (it hashes them by inode).
 *   - But a write is first tried without blocking, in the submitter's context. On
 *     file systems with non-blocking buffered writes (XFS, btrfs: FOP_BUFFER_WASYNC)
 *     that try often succeeds, so a later chunk can complete inline while an earlier
 *     one waits in io-wq (it met a locked inode or page). ext4 has no
 *     FOP_BUFFER_WASYNC: every buffered write is punted, and order happens to hold.
 *     (We never caught a reordering on ext4 or XFS with Linux 6.18; nothing promises
 *     there is none.)
 * So we do not rely on it: each chunk's first write carries IOSQE_IO_DRAIN, which
 * makes the kernel start it only after every request submitted before it has
 * completed, and starts nothing after it until it completes. Writes to the file are
 * then sequential in submission order, on every file system, across submit calls,
 * and the kernel chains them by itself: the next write starts the moment the previous
 * one completes, while the writer formats or sleeps.
 * Why not IOSQE_IO_LINK: a link chain ends with the submit call that carries it, and
 * the writer submits one chunk per call; a short write also breaks a link and cancels
 * everything behind it. Why not one write in flight kept in user space: the next write
 * would start only when the writer next calls into the sink, up to a flush period later.
 * Cost: none we could measure, as the kernel serializes buffered writes to one inode
 * anyway. 1 GiB in 1 MiB chunks into a cached ext4 file (2 vCPUs): 8.0 GB/s with DRAIN,
 * 8.3 without, within run-to-run noise.
 *
 * Short writes and retries. For a regular file the kernel itself finishes a partial
 * buffered write, so a short completion means it stopped for a reason (RLIMIT_FSIZE,
 * ENOSPC). We ask once more for the rest at offset + done, so the next result is the
 * error itself; the rest goes without DRAIN, to start at once. -EAGAIN and -EINTR are
 * retried the same way. Known window: a chunk drained behind a short write has already
 * started when the rest is resubmitted, so for a moment the file may have a hole; it
 * needs a short write, which is an error in the making (after EFBIG, every later
 * offset fails too, so nothing lands past the hole).
 *
 * Errors. A failed write latches (rtr__sink_complete()). Its followers are already in
 * the kernel; they complete as they will and are counted as they come back, but no
 * retry and no new chunk is written after the latch. If the ring itself fails (an
 * io_uring_enter() error other than EINTR, EAGAIN, EBUSY) every chunk in flight is
 * failed with that error and the ring is not used again: the writer never waits on a
 * ring that cannot deliver.
 *
 * Page cache hints (sink.h) go on a second, small ring: a write carries DRAIN, which
 * would also wait for every hint queued before it, and a hint waits for the disk.
 * Starting writeback is one IORING_OP_SYNC_FILE_RANGE; dropping a step is a
 * SYNC_FILE_RANGE that waits for its writeback, linked to an IORING_OP_FADVISE
 * (DONTNEED), so the pages are clean when they are dropped. Both block, so the kernel
 * runs them in io-wq; the writer only queues them and counts what comes back. At most
 * HINT_ENTRIES are in flight: on a disk slower than the trace the cache simply grows
 * as it would without hints, and the steps are dropped later. No hint ring (its setup
 * failed) means no hints.
 *
 * Threads. The writer thread makes every call. The ring may be set up by another
 * thread (rtr_start()), so no IORING_SETUP_SINGLE_ISSUER; and no COOP_TASKRUN or
 * DEFER_TASKRUN, which would hold the next drained write back until the writer
 * enters the kernel.
 */
#include "sink/sink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <time.h>

#include <liburing.h>

#include "common/mem.h"

#if defined(__SANITIZE_ADDRESS__)
#define RTR_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RTR_ASAN 1
#endif
#endif
#ifdef RTR_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* Largest single request: the kernel caps one write at MAX_RW_COUNT (2 GiB less a
 * page) and the SQE length is 32 bits; a longer chunk goes out in pieces. */
#define MAX_WRITE (1U << 30)
/* Registered buffers the kernel accepts (IORING_MAX_REG_BUFFERS); buf_index is 16 bits. */
#define MAX_FIXED 16384U
/* EAGAIN/EINTR completions in a row without a byte written before we give up. */
#define MAX_RETRIES 1000U
/* Page cache hints in flight at most (requests; a drop takes two). */
#define HINT_ENTRIES 16U

struct uring {
	struct io_uring ring;
	unsigned inflight;	 /* chunks RTR__CHUNK_WRITING: one request each */
	unsigned retries;	 /* EAGAIN/EINTR results since the last byte written */
	int fixed;		 /* chunks registered: IORING_OP_WRITE_FIXED */
	int dead;		 /* the ring failed: never touched again but to close it */
	struct io_uring hints;	 /* page cache hints, set up when hints_ring */
	int hints_ring;		 /* the hint ring was set up: exit it at close */
	int has_hints;		 /* and has not failed since: hints go on it */
	unsigned hints_inflight; /* requests queued on it, not yet reaped */
};

/* Sanitizer builds: the kernel reads [p, p + n); make sure we own it (liburing
 * src/sanitize.c). */
static void check_region(const void *p, size_t n)
{
#ifdef RTR_ASAN
	if (__asan_region_is_poisoned((void *)p, n) != NULL) {
		__asan_describe_address((void *)p);
		abort();
	}
#else
	(void)p;
	(void)n;
#endif
}

int rtr__sink_uring_open(struct rtr__sink *s)
{
	struct uring *u;
	int err;

	if (s->nchunks > 32768)
		return -EINVAL; /* IORING_MAX_ENTRIES: the ring could not hold one per chunk */
	u = rtr__mem_map(sizeof(*u));
	if (u == NULL)
		return -ENOMEM;
	err = io_uring_queue_init(s->nchunks, &u->ring, 0);
	if (err < 0) {
		rtr__mem_unmap(u, sizeof(*u));
		return err;
	}
	s->impl = u;
	return 0;
}

/* After open, once the file's head is written (rtr__sink_setup()): pinning the
 * buffers and a second ring take milliseconds, and a kill meanwhile must find the
 * head in the file already. */
static void uring_setup(struct rtr__sink *s)
{
	struct uring *u = s->impl;
	struct iovec *iov;

	if (u->dead || u->inflight != 0)
		return; /* registering under writes in flight would fail them */
	/* Registration is an optimization: any failure leaves plain writes. */
	iov = s->nchunks <= MAX_FIXED ? rtr__mem_map(s->nchunks * sizeof(*iov)) : NULL;
	if (iov != NULL) {
		for (unsigned i = 0; i < s->nchunks; i++) {
			iov[i].iov_base = s->chunks[i].data;
			iov[i].iov_len = s->buf_bytes;
		}
		u->fixed = io_uring_register_buffers(&u->ring, iov, s->nchunks) == 0;
		rtr__mem_unmap(iov, s->nchunks * sizeof(*iov));
	}
	/* Hints are an optimization too: without their ring there are none. */
	u->hints_ring = io_uring_queue_init(HINT_ENTRIES, &u->hints, 0) == 0;
	u->has_hints = u->hints_ring;
}

static void uring_forget(struct rtr__sink *s)
{
	struct uring *u = s->impl;

	/* Unmaps the child's view of the rings and closes its fds: no request is
	 * cancelled or waited for, the parent's ring lives on with the parent's fd. */
	io_uring_queue_exit(&u->ring);
	if (u->hints_ring)
		io_uring_queue_exit(&u->hints);
	rtr__mem_unmap(u, sizeof(*u));
	s->impl = NULL;
}

/* The ring is unusable: fail every chunk in flight with err and stop using it. */
static void abandon(struct rtr__sink *s, int err)
{
	struct uring *u = s->impl;

	u->dead = 1;
	u->inflight = 0;
	for (unsigned i = 0; i < s->nchunks; i++) {
		if (s->chunks[i].busy == RTR__CHUNK_WRITING)
			rtr__sink_complete(s, &s->chunks[i], err);
	}
}

/* Whether an io_uring_enter() error leaves the ring usable: the request stays in
 * the SQ ring and goes with the next submit. */
static int transient(int err)
{
	return err == -EINTR || err == -EAGAIN || err == -EBUSY;
}

/* Count the hints that have come back; a writeback error among their results is a
 * write error (rtr__sink_hint_result()). With wait, until none is in flight, passing
 * on any a refused submit left queued. */
static void reap_hints(struct rtr__sink *s, struct uring *u, int wait)
{
	struct io_uring_cqe *cqe;

	while (u->hints_inflight > 0) {
		if (io_uring_peek_cqe(&u->hints, &cqe) == 0) {
			rtr__sink_hint_result(s, cqe->res);
			io_uring_cqe_seen(&u->hints, cqe);
			u->hints_inflight--;
			continue;
		}
		if (!wait)
			return;
		int ret = io_uring_submit_and_wait(&u->hints, 1);
		if (ret < 0 && ret != -EINTR) {
			u->has_hints = 0; /* the ring cannot deliver: stop using it */
			return;
		}
	}
}

static void uring_hints_wait(struct rtr__sink *s)
{
	struct uring *u = s->impl;

	if (u->has_hints)
		reap_hints(s, u, 1);
}

static int uring_hint(struct rtr__sink *s, uint64_t off, uint64_t len, int drop)
{
	struct uring *u = s->impl;
	unsigned need = drop ? 2 : 1;
	struct io_uring_sqe *sqe, *fadv = NULL;
	int ret;

	if (!u->has_hints)
		return 1; /* no hints: nothing to retry */
	reap_hints(s, u, 0);
	if (u->hints_inflight + need > HINT_ENTRIES || io_uring_sq_space_left(&u->hints) < need)
		return 0;
	sqe = io_uring_get_sqe(&u->hints);
	if (drop) {
		io_uring_prep_sync_file_range(sqe, s->fd, (unsigned)len, off,
					      SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
						      SYNC_FILE_RANGE_WAIT_AFTER);
		io_uring_sqe_set_flags(sqe, IOSQE_IO_LINK); /* the pages are clean first */
		fadv = io_uring_get_sqe(&u->hints);
		io_uring_prep_fadvise(fadv, s->fd, off, (off_t)len, POSIX_FADV_DONTNEED);
	} else {
		io_uring_prep_sync_file_range(sqe, s->fd, (unsigned)len, off,
					      SYNC_FILE_RANGE_WRITE);
	}
	u->hints_inflight += need;
	ret = io_uring_submit(&u->hints);
	if (ret < 0 && !transient(ret)) {
		/* Never submitted: forget them, and the ring with them. */
		u->hints_inflight -= need;
		u->has_hints = 0;
	}
	return 1;
}

/* Queue the rest of c (from c->done) and hand it to the kernel. Never waits. */
static void queue_write(struct rtr__sink *s, struct rtr__chunk *c, unsigned sqe_flags)
{
	struct uring *u = s->impl;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring); /* never NULL: see top */
	size_t left = c->len - c->done;
	unsigned n = left > MAX_WRITE ? MAX_WRITE : (unsigned)left;
	const char *p = c->data + c->done;
	int ret;

	check_region(p, n);
	if (u->fixed)
		io_uring_prep_write_fixed(sqe, s->fd, p, n, c->offset + c->done, (int)c->index);
	else
		io_uring_prep_write(sqe, s->fd, p, n, c->offset + c->done);
	io_uring_sqe_set_flags(sqe, sqe_flags);
	io_uring_sqe_set_data(sqe, c);
	u->inflight++;

	ret = io_uring_submit(&u->ring);
	if (ret < 0 && !transient(ret))
		abandon(s, ret);
	/* Transient, or 0 taken: the SQE stays queued; the next io_uring_submit() or
	 * io_uring_submit_and_wait() (in reap) passes it on. */
}

static void uring_write(struct rtr__sink *s, struct rtr__chunk *c)
{
	struct uring *u = s->impl;

	if (u->dead) {
		rtr__sink_complete(s, c, -EIO); /* unreachable: abandon() latched an error */
		return;
	}
	/* DRAIN: starts after everything before it, and before anything after it. */
	queue_write(s, c, IOSQE_IO_DRAIN);
}

static void complete_one(struct rtr__sink *s, struct io_uring_cqe *cqe)
{
	struct uring *u = s->impl;
	struct rtr__chunk *c = io_uring_cqe_get_data(cqe);
	int res = cqe->res;
	int latched;

	u->inflight--;
	if (res > 0) {
		size_t n = (size_t)res;

		if (n > c->len - c->done)
			n = c->len - c->done; /* cannot happen; never count past the chunk */
		rtr__sink_wrote(s, c, n);
		c->done += n;
		u->retries = 0;
		if (c->done == c->len) {
			rtr__sink_complete(s, c, 0);
			return;
		}
		/* Short write: ask again for the rest. */
	} else if (res == -EAGAIN || res == -EINTR) {
		if (++u->retries > MAX_RETRIES) {
			rtr__sink_complete(s, c, res);
			return;
		}
	} else {
		/* 0 for a non-empty write would repeat forever: the file takes nothing. */
		rtr__sink_complete(s, c, res == 0 ? -EIO : res);
		return;
	}

	latched = s->error; /* own latch: only this thread stores it */
	if (latched != 0) {
		/* An earlier chunk failed: nothing more is written. */
		rtr__sink_complete(s, c, latched);
		return;
	}
	/* No DRAIN: everything behind c has started already; the rest goes at once. */
	queue_write(s, c, 0);
}

/* A slice of a wait the writer may be told to give up (rtr__sink.cancel): -ETIME when
 * nothing came in it; once cancelled, ask the kernel to cancel every write and fail
 * them all with -ETIMEDOUT (the ring is dead from then on). */
static int wait_slice(struct rtr__sink *s)
{
	struct uring *u = s->impl;
	struct __kernel_timespec ts = {.tv_sec = 0, .tv_nsec = 50 * 1000 * 1000};
	struct io_uring_cqe *cqe;

	if (rtr__sink_cancelled(s)) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);

		if (sqe != NULL) {
			io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
			(void)io_uring_submit(&u->ring);
		}
		abandon(s, -ETIMEDOUT);
		return 0;
	}
	int ret = io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, &ts, NULL);
	return ret == -ETIME || ret == -EINTR ? -ETIME : ret < 0 ? ret : 0;
}

static void uring_reap(struct rtr__sink *s, int wait)
{
	struct uring *u = s->impl;

	for (;;) {
		struct io_uring_cqe *cqe;
		unsigned seen = 0;
		int ret;

		while (!u->dead && io_uring_peek_cqe(&u->ring, &cqe) == 0) {
			struct io_uring_cqe copy = *cqe;

			/* Free the CQ slot first: complete_one() may submit. */
			io_uring_cqe_seen(&u->ring, cqe);
			complete_one(s, &copy);
			seen++;
		}
		if (!wait || seen > 0 || u->dead || u->inflight == 0)
			return;

		/* Also passes on any SQE a refused submit left behind. */
		if (s->cancel != NULL) {
			ret = wait_slice(s);
			if (ret == -ETIME)
				continue;
		} else {
			ret = io_uring_submit_and_wait(&u->ring, 1);
		}
		if (ret >= 0 || ret == -EINTR)
			continue;
		if (!transient(ret)) {
			abandon(s, ret);
			return;
		}
		/* The kernel is short of memory (EAGAIN) or of CQ space (EBUSY, old
		 * kernels): what is in flight still completes; look again shortly. */
		nanosleep(&(struct timespec){.tv_nsec = 1000 * 1000}, NULL);
	}
}

static int uring_busy(const struct rtr__sink *s)
{
	const struct uring *u = s->impl;

	return u->inflight != 0;
}

static void uring_close(struct rtr__sink *s)
{
	struct uring *u = s->impl;

	/* Unregistering is part of io_uring_queue_exit(). A dead ring may still hold
	 * requests; exit cancels them, and the pages they use stay pinned (fixed) or
	 * are read through our own mapping, which the caller unmaps after this. */
	io_uring_queue_exit(&u->ring);
	/* The hints finish first: they use the file, which the caller closes next. */
	if (u->hints_ring) {
		uring_hints_wait(s);
		io_uring_queue_exit(&u->hints);
	}
	rtr__mem_unmap(u, sizeof(*u));
	s->impl = NULL;
}

const struct rtr__sink_ops rtr__sink_uring_ops = {
	.write = uring_write,
	.reap = uring_reap,
	.busy = uring_busy,
	.hint = uring_hint,
	.hints_wait = uring_hints_wait,
	.setup = uring_setup,
	.close = uring_close,
	.forget = uring_forget,
};
