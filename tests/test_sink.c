/* SPDX-License-Identifier: MIT */
/*
 * Tests of the sinks (src/sink/sink*.c): both methods write the submitted chunks back
 * to back, count exactly, survive short writes, and stop cleanly at the first error.
 *
 * Every byte a test writes is pattern(file offset), so a file is checked against the
 * pattern alone, and the two methods' files against each other.
 *
 * Seams, linked with -Wl,--wrap=<name> (see tests/CMakeLists.txt):
 *   pwrite                     short writes and EINTR for the write(2) method
 *   io_uring_queue_init        setup failure (will_return)
 *   io_uring_register_buffers  registration failure (will_return); records the result
 *   io_uring_submit            a submit the kernel refuses (will_return); counts calls
 *   io_uring_submit_and_wait   counts the waits
 *   sync_file_range            a writeback error (EIO) for the write(2) method's hints
 * Real kernel failures come from RLIMIT_FSIZE (short writes, EFBIG; SIGXFSZ ignored)
 * and RLIMIT_MEMLOCK (buffer registration). Without io_uring the io_uring tests skip.
 * A test that runs once per method is registered with TU_IO_CASES (test_util.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <liburing.h>

#include <ringtrace.h>

#include "common/atomic.h"
#include "sink/sink.h"
#include "test_util.h"

#define KIB   1024u
#define CHUNK (64 * KIB) /* chunk_bytes: a multiple of 4, 16 and 64 KiB pages */

/* ------------------------------------------------------------------------- */
/* Seams                                                                      */

ssize_t __real_pwrite(int fd, const void *buf, size_t n, off_t off);
ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off);
int __real_io_uring_queue_init(unsigned entries, struct io_uring *ring, unsigned flags);
int __wrap_io_uring_queue_init(unsigned entries, struct io_uring *ring, unsigned flags);
int __real_io_uring_register_buffers(struct io_uring *ring, const struct iovec *iov, unsigned nr);
int __wrap_io_uring_register_buffers(struct io_uring *ring, const struct iovec *iov, unsigned nr);
int __real_io_uring_submit(struct io_uring *ring);
int __wrap_io_uring_submit(struct io_uring *ring);
int __real_io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr);
int __wrap_io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr);
int __real_sync_file_range(int fd, off_t off, off_t n, unsigned flags);
int __wrap_sync_file_range(int fd, off_t off, off_t n, unsigned flags);

/* Seam state: set by a test, reset by setup. Only the test thread touches it. */
static struct {
	size_t pwrite_max;	     /* > 0: pwrite writes at most this much per call */
	unsigned pwrite_eintr_every; /* > 0: every n-th pwrite fails with EINTR */
	unsigned pwrites;	     /* pwrite calls */
	bool fail_setup;	     /* io_uring_queue_init returns mock() */
	bool fail_register;	     /* io_uring_register_buffers returns mock() */
	int register_result;	     /* last io_uring_register_buffers result; 1: none */
	unsigned refuse_submits;     /* that many io_uring_submit calls return mock() */
	unsigned submits;	     /* io_uring_submit calls */
	unsigned waits;		     /* io_uring_submit_and_wait calls */
	int sfr_errno;		     /* > 0: sync_file_range fails with it */
	unsigned sfr_calls;	     /* sync_file_range calls */
} seam;

int __wrap_sync_file_range(int fd, off_t off, off_t n, unsigned flags)
{
	seam.sfr_calls++;
	if (seam.sfr_errno != 0) {
		errno = seam.sfr_errno;
		return -1;
	}
	return __real_sync_file_range(fd, off, n, flags);
}

ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	seam.pwrites++;
	if (seam.pwrite_eintr_every != 0 && seam.pwrites % seam.pwrite_eintr_every == 0) {
		errno = EINTR;
		return -1;
	}
	if (seam.pwrite_max != 0 && n > seam.pwrite_max)
		n = seam.pwrite_max;
	return __real_pwrite(fd, buf, n, off);
}

int __wrap_io_uring_queue_init(unsigned entries, struct io_uring *ring, unsigned flags)
{
	if (seam.fail_setup)
		return mock_type(int);
	return __real_io_uring_queue_init(entries, ring, flags);
}

int __wrap_io_uring_register_buffers(struct io_uring *ring, const struct iovec *iov, unsigned nr)
{
	if (seam.fail_register)
		seam.register_result = mock_type(int);
	else
		seam.register_result = __real_io_uring_register_buffers(ring, iov, nr);
	return seam.register_result;
}

int __wrap_io_uring_submit(struct io_uring *ring)
{
	seam.submits++;
	if (seam.refuse_submits != 0) {
		/* Like the kernel refusing: the SQE stays in the SQ ring, unseen. */
		seam.refuse_submits--;
		return mock_type(int);
	}
	return __real_io_uring_submit(ring);
}

int __wrap_io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr)
{
	seam.waits++;
	return __real_io_uring_submit_and_wait(ring, wait_nr);
}

/* ------------------------------------------------------------------------- */
/* Fixture and helpers                                                        */

struct fixture {
	int io; /* a TU_IO_CASES test's method, else -1 */
	char path[2][PATH_MAX];
	int fd[2];
	struct rtr__sink sink[2];
	bool open[2];
	struct rlimit fsize;   /* RLIMIT_FSIZE before the test */
	struct rlimit memlock; /* RLIMIT_MEMLOCK before the test */
};

/* What a test writes next through one sink: the logical file offset and totals. */
struct feed {
	uint64_t pos;	 /* bytes submitted = file offset of the next chunk */
	uint64_t events; /* events submitted */
};
static int setup(void **state)
{
	const char *dir = getenv("RTR_TEST_TMPDIR");
	struct fixture *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	f->io = *state != NULL ? tu_io_of(*state) : -1;
	memset(&seam, 0, sizeof(seam));
	seam.register_result = 1;
	for (int i = 0; i < 2; i++) {
		snprintf(f->path[i], sizeof(f->path[i]), "%s/rtr-test-sink-XXXXXX",
			 dir != NULL ? dir : "/tmp");
		f->fd[i] = mkostemp(f->path[i], O_CLOEXEC);
		if (f->fd[i] < 0)
			return -1;
	}
	getrlimit(RLIMIT_FSIZE, &f->fsize);
	getrlimit(RLIMIT_MEMLOCK, &f->memlock);
	alarm(60); /* a sink that blocks fails the test instead of hanging it */
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	setrlimit(RLIMIT_FSIZE, &f->fsize);
	setrlimit(RLIMIT_MEMLOCK, &f->memlock);
	for (int i = 0; i < 2; i++) {
		if (f->open[i])
			rtr__sink_close(&f->sink[i]);
		close(f->fd[i]);
		unlink(f->path[i]);
	}
	alarm(0);
	free(f);
	return 0;
}

static int group_setup(void **state)
{
	(void)state;
	/* RLIMIT_FSIZE tests: a write past the limit must fail with EFBIG, not kill us. */
	signal(SIGXFSZ, SIG_IGN);
	return 0;
}

/* Bytes that are not lines: no '\n', so a partly failed chunk counts no events
 * landed (see a_partly_written_chunk_counts_the_events_of_its_whole_lines). */
static unsigned char pattern(uint64_t off)
{
	unsigned char b = (unsigned char)((off * UINT64_C(0x9E3779B97F4A7C15)) >> 56);

	return b == '\n' ? '\v' : b;
}

static void open_sink(struct fixture *f, int i, int io, size_t chunk_bytes, unsigned nchunks)
{
	assert_int_equal(rtr__sink_open(&f->sink[i], f->fd[i], io, chunk_bytes, nchunks), 0);
	rtr__sink_setup(&f->sink[i]); /* the writer thread's first call */
	f->open[i] = true;
}

/* Acquire, fill len bytes of pattern and submit. */
static void feed_one(struct rtr__sink *s, struct feed *fd, size_t len, uint64_t events)
{
	struct rtr__chunk *c = rtr__sink_acquire(s);

	assert_non_null(c);
	assert_int_equal(c->len, 0);
	assert_int_equal(c->events, 0);
	assert_true(len <= s->chunk_bytes);
	for (size_t i = 0; i < len; i++)
		c->data[i] = (char)pattern(fd->pos + i);
	c->len = len;
	c->events = events;
	rtr__sink_submit(s, c);
	fd->pos += len;
	fd->events += events;
}

/* Varied sizes: tiny, around a page, exactly chunk_bytes, one short, and empty. */
/* clang-format off */
static const size_t varied[] = {
	1, 4095, 4096, 4097, CHUNK, 0, 12345, CHUNK - 1, 0, 0, 777, CHUNK, 3, 65000, CHUNK, 1,
	0, 2 * 4096 + 5, CHUNK, 100, CHUNK, CHUNK, 31, 0,
};
/* clang-format on */

static void feed_varied(struct rtr__sink *s, struct feed *fd)
{
	for (size_t i = 0; i < sizeof(varied) / sizeof(varied[0]); i++)
		feed_one(s, fd, varied[i], varied[i] == 0 ? 0 : i + 1);
}

static uint64_t file_size(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return (uint64_t)st.st_size;
}

/* The file is exactly `size` bytes of pattern. */
static void assert_file_is_pattern(int fd, uint64_t size)
{
	static unsigned char buf[CHUNK];
	uint64_t off = 0;

	assert_int_equal(file_size(fd), size);
	while (off < size) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)off);

		assert_true(n > 0);
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != pattern(off + (uint64_t)i))
				fail_msg("byte %llu is %u, not %u", (unsigned long long)off + i,
					 buf[i], pattern(off + (uint64_t)i));
		}
		off += (uint64_t)n;
	}
}

static void assert_files_equal(int a, int b)
{
	static unsigned char ba[CHUNK], bb[CHUNK];
	uint64_t size = file_size(a);

	assert_int_equal(file_size(b), size);
	for (uint64_t off = 0; off < size;) {
		ssize_t na = pread(a, ba, sizeof(ba), (off_t)off);
		ssize_t nb = pread(b, bb, sizeof(bb), (off_t)off);

		assert_true(na > 0);
		assert_int_equal(na, nb);
		assert_memory_equal(ba, bb, (size_t)na);
		off += (uint64_t)na;
	}
}

static void assert_counts(const struct rtr__sink *s, uint64_t bytes, uint64_t written,
			  uint64_t failed)
{
	assert_int_equal(s->bytes_written, bytes);
	assert_int_equal(s->events_written, written);
	assert_int_equal(s->events_failed, failed);
}

/* Wait until the file holds `size` bytes, without calling into the sink. */
static void await_file_size(int fd, uint64_t size)
{
	for (int i = 0; i < 5000 && file_size(fd) < size; i++)
		nanosleep(&(struct timespec){.tv_nsec = 1000 * 1000}, NULL);
	assert_int_equal(file_size(fd), size);
}

static void limit_file_size(rlim_t bytes)
{
	struct rlimit rl;

	getrlimit(RLIMIT_FSIZE, &rl);
	rl.rlim_cur = bytes;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

/* ------------------------------------------------------------------------- */
/* Both methods                                                               */

static void both_methods_write_identical_bytes_for_the_same_chunks(void **state)
{
	struct fixture *f = *state;
	struct feed a = {0}, b = {0};

	tu_skip_unless_io_works(RTR_IO_URING);
	open_sink(f, 0, RTR_IO_URING, CHUNK, 4);
	open_sink(f, 1, RTR_IO_SYNC, CHUNK, 4);
	assert_int_equal(f->sink[0].method, RTR_IO_URING);
	assert_int_equal(f->sink[1].method, RTR_IO_SYNC);

	feed_varied(&f->sink[0], &a);
	feed_varied(&f->sink[1], &b);
	assert_int_equal(rtr__sink_wait(&f->sink[0]), 0);
	assert_int_equal(rtr__sink_wait(&f->sink[1]), 0);

	assert_files_equal(f->fd[0], f->fd[1]);
	assert_file_is_pattern(f->fd[0], a.pos);
}

static void counters_match_the_bytes_and_events_submitted(void **state)
{
	struct fixture *f = *state;
	struct feed fd = {0};

	tu_skip_unless_io_works(f->io);
	open_sink(f, 0, f->io, CHUNK, 3);
	assert_int_equal(f->sink[0].method, f->io);
	feed_varied(&f->sink[0], &fd);
	assert_int_equal(rtr__sink_wait(&f->sink[0]), 0);
	assert_counts(&f->sink[0], fd.pos, fd.events, 0);
	assert_int_equal(f->sink[0].error, 0);

	/* Still readable after close, for rtr_stats_get() after rtr_stop(). */
	rtr__sink_close(&f->sink[0]);
	f->open[0] = false;
	assert_counts(&f->sink[0], fd.pos, fd.events, 0);
	assert_file_is_pattern(f->fd[0], fd.pos);
}

static void back_to_back_submits_beyond_nchunks_write_every_byte(void **state)
{
	struct fixture *f = *state;
	struct feed fd = {0};

	tu_skip_unless_io_works(f->io);
	open_sink(f, 0, f->io, CHUNK, 4);
	for (int k = 0; k < 64; k++) /* 16 times nchunks, no wait in between */
		feed_one(&f->sink[0], &fd, CHUNK - (size_t)(k % 3), 1);
	assert_int_equal(rtr__sink_wait(&f->sink[0]), 0);
	assert_counts(&f->sink[0], fd.pos, 64, 0);
	assert_file_is_pattern(f->fd[0], fd.pos);
}

static void empty_chunks_are_released_without_a_write(void **state)
{
	struct fixture *f = *state;
	struct feed fd = {0};

	tu_skip_unless_io_works(f->io);
	open_sink(f, 0, f->io, CHUNK, 2);
	for (int k = 0; k < 10; k++)
		feed_one(&f->sink[0], &fd, 0, 0);
	assert_int_equal(rtr__sink_wait(&f->sink[0]), 0);
	assert_counts(&f->sink[0], 0, 0, 0);
	assert_int_equal(file_size(f->fd[0]), 0);
	assert_int_equal(seam.pwrites, 0);
	assert_int_equal(seam.submits, 0);
	assert_int_equal(seam.waits, 0);
}

static void acquire_returns_null_when_the_caller_holds_every_chunk(void **state)
{
	struct fixture *f = *state;
	struct rtr__chunk *c0, *c1;

	open_sink(f, 0, RTR_IO_SYNC, CHUNK, 2);
	c0 = rtr__sink_acquire(&f->sink[0]);
	c1 = rtr__sink_acquire(&f->sink[0]);
	assert_non_null(c0);
	assert_non_null(c1);
	assert_ptr_not_equal(c0, c1);
	assert_null(rtr__sink_acquire(&f->sink[0]));
	rtr__sink_submit(&f->sink[0], c1);
	assert_ptr_equal(rtr__sink_acquire(&f->sink[0]), c1);
}

static void open_rejects_bad_arguments(void **state)
{
	struct fixture *f = *state;
	struct rtr__sink s;

	assert_int_equal(rtr__sink_open(&s, -1, RTR_IO_SYNC, CHUNK, 4), -EINVAL);
	assert_int_equal(rtr__sink_open(&s, f->fd[0], RTR_IO_SYNC, CHUNK + 1, 4), -EINVAL);
	assert_int_equal(rtr__sink_open(&s, f->fd[0], RTR_IO_SYNC, 0, 4), -EINVAL);
	assert_int_equal(rtr__sink_open(&s, f->fd[0], RTR_IO_SYNC, CHUNK, 0), -EINVAL);
	assert_int_equal(rtr__sink_open(&s, f->fd[0], 7, CHUNK, 4), -EINVAL);
}

/* Events are read while the writer writes, as rtr_stats_get() does (run under TSan). */
struct reader {
	struct rtr__sink *s;
	int stop;
	bool monotonic;
};

static void *read_counters(void *arg)
{
	struct reader *r = arg;
	uint64_t bytes = 0, events = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint64_t b = __atomic_load_n(&r->s->bytes_written, __ATOMIC_RELAXED);
		uint64_t e = __atomic_load_n(&r->s->events_written, __ATOMIC_RELAXED);

		if (b < bytes || e < events)
			r->monotonic = false;
		bytes = b;
		events = e;
	}
	return NULL;
}

static void counters_can_be_read_from_another_thread_while_writing(void **state)
{
	struct fixture *f = *state;
	struct reader r = {.s = &f->sink[0], .monotonic = true};
	struct feed fd = {0};
	pthread_t t;

	tu_skip_unless_io_works(f->io);
	open_sink(f, 0, f->io, CHUNK, 4);
	assert_int_equal(pthread_create(&t, NULL, read_counters, &r), 0);
	for (int k = 0; k < 200; k++)
		feed_one(&f->sink[0], &fd, 1000 + (size_t)k * 37, 3);
	assert_int_equal(rtr__sink_wait(&f->sink[0]), 0);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(r.monotonic);
	assert_counts(&f->sink[0], fd.pos, 600, 0);
}

/* The first error latches; later chunks fail at once, and nothing more is written. */
static void first_error_latches_at_the_file_size_limit(void **state)
{
	struct fixture *f = *state;
	const rlim_t limit = 100000; /* inside the third chunk */
	struct rtr__sink *s = &f->sink[0];
	struct feed fd = {0};

	tu_skip_unless_io_works(f->io);
	open_sink(f, 0, f->io, CHUNK, 4);
	assert_int_equal(s->method, f->io);
	limit_file_size(limit);

	/* [0, 40000) and [40000, 80000) fit; [80000, 120000) is cut at 100000;
	 * [120000, 160000) lies past the limit. */
	for (int k = 0; k < 4; k++)
		feed_one(s, &fd, 40000, (uint64_t)(k + 1) * 10);
	assert_int_equal(rtr__sink_wait(s), -EFBIG);
	assert_counts(s, limit, 10 + 20, 30 + 40);
	assert_int_equal(s->error, -EFBIG);

	/* The disk recovers (the limit goes), yet nothing more is written: more chunks
	 * than nchunks after the error, none blocks, all count as failed. */
	setrlimit(RLIMIT_FSIZE, &f->fsize);
	for (int k = 0; k < 10; k++)
		feed_one(s, &fd, 40000, 1);
	assert_int_equal(rtr__sink_wait(s), -EFBIG);
	assert_counts(s, limit, 30, 70 + 10);
	assert_file_is_pattern(f->fd[0], limit);
}

/* A chunk of 20 lines of 100 bytes, two of them not events, cut at 1000 bytes:
 * the 9 events on the first 10 lines landed, the other 9 failed. */
static void a_partly_written_chunk_counts_the_events_of_its_whole_lines(void **state)
{
	struct fixture *f = *state;
	struct rtr__sink *s = &f->sink[0];

	tu_skip_unless_io_works(f->io);
	open_sink(f, 0, f->io, CHUNK, 4);
	limit_file_size(1000);
	struct rtr__chunk *c = rtr__sink_acquire(s);
	for (int line = 0; line < 20; line++) {
		memset(c->data + line * 100, 'x', 99);
		c->data[line * 100 + 99] = '\n';
	}
	c->len = 2000;
	c->nmeta = 2;
	c->meta_end[0] = 100;  /* a marker line, first */
	c->meta_end[1] = 1500; /* a metadata line past the cut */
	c->events = 18;
	rtr__sink_submit(s, c);
	assert_int_equal(rtr__sink_wait(s), -EFBIG);
	assert_counts(s, 1000, 9, 9);
}

/* ------------------------------------------------------------------------- */
/* write(2)                                                                   */

static void sync_completes_short_writes_and_retries_eintr(void **state)
{
	struct fixture *f = *state;
	struct feed fd = {0};

	seam.pwrite_max = 1000; /* K bytes per call at most */
	seam.pwrite_eintr_every = 3;
	open_sink(f, 0, RTR_IO_SYNC, CHUNK, 4);
	feed_varied(&f->sink[0], &fd);
	assert_int_equal(rtr__sink_wait(&f->sink[0]), 0);
	assert_counts(&f->sink[0], fd.pos, fd.events, 0);
	assert_file_is_pattern(f->fd[0], fd.pos);
	/* Every call wrote at most K bytes, and a third of them wrote nothing. */
	assert_true(seam.pwrites >= fd.pos / 1000 * 3 / 2);
}

/* ------------------------------------------------------------------------- */
/* io_uring                                                                   */

static void uring_open_returns_the_setup_error(void **state)
{
	struct fixture *f = *state;
	struct rtr__sink s;

	seam.fail_setup = true;
	will_return(__wrap_io_uring_queue_init, -EPERM);
	assert_int_equal(rtr__sink_open(&s, f->fd[0], RTR_IO_URING, CHUNK, 4), -EPERM);
}

static void auto_falls_back_to_write_when_io_uring_setup_fails(void **state)
{
	struct fixture *f = *state;
	struct feed fd = {0};

	seam.fail_setup = true;
	will_return(__wrap_io_uring_queue_init, -ENOSYS);
	open_sink(f, 0, RTR_IO_AUTO, CHUNK, 4);
	assert_int_equal(f->sink[0].method, RTR_IO_SYNC);
	feed_varied(&f->sink[0], &fd);
	assert_int_equal(rtr__sink_wait(&f->sink[0]), 0);
	assert_file_is_pattern(f->fd[0], fd.pos);
}

static void auto_picks_io_uring_when_it_works(void **state)
{
	struct fixture *f = *state;

	tu_skip_unless_io_works(RTR_IO_URING);
	open_sink(f, 0, RTR_IO_AUTO, CHUNK, 4);
	assert_int_equal(f->sink[0].method, RTR_IO_URING);
	assert_int_equal(seam.register_result, 0);
}

static void uring_writes_unregistered_buffers_when_registration_fails(void **state)
{
	struct fixture *f = *state;
	struct feed fd = {0};

	tu_skip_unless_io_works(RTR_IO_URING);
	seam.fail_register = true;
	will_return(__wrap_io_uring_register_buffers, -ENOMEM);
	open_sink(f, 0, RTR_IO_URING, CHUNK, 4);
	assert_int_equal(f->sink[0].method, RTR_IO_URING);
	feed_varied(&f->sink[0], &fd);
	assert_int_equal(rtr__sink_wait(&f->sink[0]), 0);
	assert_counts(&f->sink[0], fd.pos, fd.events, 0);
	assert_file_is_pattern(f->fd[0], fd.pos);
}

/* Clear or restore CAP_IPC_LOCK in this thread's effective set; false if we lack it. */
static bool set_ipc_lock(bool on)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2];
	const unsigned bit = 1u << CAP_IPC_LOCK; /* CAP_IPC_LOCK < 32: data[0] */

	if (syscall(SYS_capget, &hdr, data) != 0 || !(data[0].permitted & bit))
		return false;
	if (on)
		data[0].effective |= bit;
	else
		data[0].effective &= ~bit;
	return syscall(SYS_capset, &hdr, data) == 0;
}

static void uring_writes_unregistered_buffers_over_rlimit_memlock(void **state)
{
	struct fixture *f = *state;
	struct rlimit rl = f->memlock;
	struct feed fd = {0};
	bool dropped;
	int err;

	tu_skip_unless_io_works(RTR_IO_URING);
	/* Registration pins 4 x 1 MiB against a 64 KiB limit (unless CAP_IPC_LOCK). */
	dropped = set_ipc_lock(false);
	rl.rlim_cur = 64 * KIB;
	assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	err = rtr__sink_open(&f->sink[0], f->fd[0], RTR_IO_URING, 1024 * KIB, 4);
	if (err == 0)
		rtr__sink_setup(&f->sink[0]);
	setrlimit(RLIMIT_MEMLOCK, &f->memlock);
	if (dropped)
		set_ipc_lock(true);
	if (err != 0)
		skip(); /* old kernel: the ring itself is charged to the limit */
	f->open[0] = true;
	if (seam.register_result == 0)
		skip(); /* still allowed to lock memory: nothing to fall back from */
	assert_int_equal(seam.register_result, -ENOMEM);

	for (int k = 0; k < 16; k++)
		feed_one(&f->sink[0], &fd, 1024 * KIB - (size_t)k, 1);
	assert_int_equal(rtr__sink_wait(&f->sink[0]), 0);
	assert_counts(&f->sink[0], fd.pos, 16, 0);
	assert_file_is_pattern(f->fd[0], fd.pos);
}

static void uring_acquire_does_not_wait_while_a_chunk_is_free(void **state)
{
	struct fixture *f = *state;
	struct feed fd = {0};

	tu_skip_unless_io_works(RTR_IO_URING);
	open_sink(f, 0, RTR_IO_URING, CHUNK, 8);
	for (int k = 0; k < 7; k++)
		feed_one(&f->sink[0], &fd, CHUNK, 1);
	assert_non_null(rtr__sink_acquire(&f->sink[0]));
	assert_int_equal(seam.waits, 0);
}

static void uring_acquire_waits_when_every_chunk_is_in_flight(void **state)
{
	struct fixture *f = *state;
	struct feed fd = {0};

	tu_skip_unless_io_works(RTR_IO_URING);
	open_sink(f, 0, RTR_IO_URING, CHUNK, 4);
	/* The kernel refuses the first four submits: the writes sit in the SQ ring, so
	 * no chunk can complete until acquire waits (and submits them on the way). */
	seam.refuse_submits = 4;
	will_return_count(__wrap_io_uring_submit, -EAGAIN, 4);
	for (int k = 0; k < 4; k++)
		feed_one(&f->sink[0], &fd, CHUNK, 1);
	assert_int_equal(seam.waits, 0);
	assert_int_equal(file_size(f->fd[0]), 0);

	feed_one(&f->sink[0], &fd, 100, 1);
	assert_true(seam.waits >= 1);
	assert_int_equal(rtr__sink_wait(&f->sink[0]), 0);
	assert_counts(&f->sink[0], fd.pos, 5, 0);
	assert_file_is_pattern(f->fd[0], fd.pos);
}

static void uring_fails_what_is_in_flight_when_the_ring_breaks(void **state)
{
	struct fixture *f = *state;
	struct rtr__sink *s = &f->sink[0];
	struct feed fd = {0};

	tu_skip_unless_io_works(RTR_IO_URING);
	open_sink(f, 0, RTR_IO_URING, CHUNK, 4);
	feed_one(s, &fd, CHUNK, 1);
	feed_one(s, &fd, CHUNK, 2);
	/* io_uring_enter() fails for good (EBADF): the third chunk never reaches the
	 * kernel, and the sink must not wait for completions that may never come. */
	seam.refuse_submits = 1;
	will_return(__wrap_io_uring_submit, -EBADF);
	feed_one(s, &fd, CHUNK, 4);
	assert_int_equal(s->error, -EBADF);
	for (int k = 0; k < 10; k++) /* more than nchunks: none blocks */
		feed_one(s, &fd, CHUNK, 8);
	assert_int_equal(rtr__sink_wait(s), -EBADF);
	assert_int_equal(s->events_written + s->events_failed, fd.events);
	assert_true(s->events_failed >= 4 + 80);
	assert_true(s->bytes_written <= 2 * CHUNK);
}

static void uring_keeps_writing_while_the_writer_is_away(void **state)
{
	struct fixture *f = *state;
	struct feed fd = {0};

	tu_skip_unless_io_works(RTR_IO_URING);
	open_sink(f, 0, RTR_IO_URING, CHUNK, 4);
	for (int k = 0; k < 4; k++)
		feed_one(&f->sink[0], &fd, CHUNK - 1, 1);
	/* The writer formats or sleeps: the kernel starts each drained write by itself. */
	await_file_size(f->fd[0], fd.pos);
	assert_file_is_pattern(f->fd[0], fd.pos);
	assert_int_equal(rtr__sink_wait(&f->sink[0]), 0);
	assert_counts(&f->sink[0], fd.pos, 4, 0);
}

static void uring_resubmits_the_rest_of_a_short_write(void **state)
{
	struct fixture *f = *state;
	struct feed fd = {0};

	tu_skip_unless_io_works(RTR_IO_URING);
	open_sink(f, 0, RTR_IO_URING, CHUNK, 4);
	limit_file_size(50000);
	feed_one(&f->sink[0], &fd, 60000, 7);
	/* The kernel writes up to the limit and completes short. Lift the limit before
	 * the sink sees the completion: the rest must then go through. */
	await_file_size(f->fd[0], 50000);
	nanosleep(&(struct timespec){.tv_nsec = 50 * 1000 * 1000}, NULL);
	setrlimit(RLIMIT_FSIZE, &f->fsize);

	assert_int_equal(rtr__sink_wait(&f->sink[0]), 0);
	assert_int_equal(seam.submits, 2); /* the chunk, then its rest */
	assert_counts(&f->sink[0], 60000, 7, 0);
	assert_file_is_pattern(f->fd[0], 60000);
}

/* ------------------------------------------------------------------------- */
/* Page cache hints                                                           */

#define CACHE_WINDOW (16u << 20)
#define CACHE_FILE   (80u << 20) /* ten steps of 8 MiB */

/* Write CACHE_FILE bytes of pattern through sink 0 with a 16 MiB window, and close. */
static void write_with_cache_window(struct fixture *f, int io, struct feed *fd)
{
	open_sink(f, 0, io, CHUNK, 4);
	rtr__sink_cache_window(&f->sink[0], CACHE_WINDOW);
	while (fd->pos < CACHE_FILE)
		feed_one(&f->sink[0], fd, CHUNK, 1);
	assert_int_equal(rtr__sink_wait(&f->sink[0]), 0);
	assert_counts(&f->sink[0], CACHE_FILE, CACHE_FILE / CHUNK, 0);
	rtr__sink_close(&f->sink[0]);
	f->open[0] = false;
}

/* Pages of [from, to) of fd in the page cache. */
static size_t resident_pages(int fd, uint64_t from, uint64_t to)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (size_t)(to - from) / page, count = 0;
	unsigned char *vec = malloc(n);
	void *map = mmap(NULL, (size_t)(to - from), PROT_READ, MAP_SHARED, fd, (off_t)from);

	assert_non_null(vec);
	assert_true(map != MAP_FAILED);
	assert_int_equal(mincore(map, (size_t)(to - from), vec), 0);
	for (size_t i = 0; i < n; i++)
		count += vec[i] & 1;
	munmap(map, (size_t)(to - from));
	free(vec);
	return count;
}

/* Whether dropped pages leave the page cache here (tmpfs pages are the file itself). */
static bool pages_can_be_dropped(int fd)
{
	struct statfs sf;

	assert_int_equal(fstatfs(fd, &sf), 0);
	return sf.f_type != TMPFS_MAGIC;
}

/*
 * After an io_uring sink closed: each drop waited for its writeback and close waited
 * for the drops, so every step before the window is out of the page cache and the
 * window is in it. Then what was dropped is read back from the disk, byte for byte.
 */
static void assert_only_the_window_cached(int fd)
{
	uint64_t kept_from = CACHE_FILE - CACHE_WINDOW;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	assert_int_equal(resident_pages(fd, 0, kept_from), 0);
	assert_true(resident_pages(fd, kept_from, CACHE_FILE) > CACHE_WINDOW / page / 2);
	assert_file_is_pattern(fd, CACHE_FILE);
}

static void uring_drops_what_lies_a_window_behind_from_the_page_cache(void **state)
{
	struct fixture *f = *state;
	struct feed fd = {0};

	tu_skip_unless_io_works(RTR_IO_URING);
	if (!pages_can_be_dropped(f->fd[0]))
		skip();
	write_with_cache_window(f, RTR_IO_URING, &fd);
	assert_only_the_window_cached(f->fd[0]);
}

static void sync_hints_leave_the_bytes_intact(void **state)
{
	struct fixture *f = *state;
	struct feed fd = {0};

	write_with_cache_window(f, RTR_IO_SYNC, &fd);
	assert_file_is_pattern(f->fd[0], CACHE_FILE);
}

static void uring_hints_pass_through_a_refused_submit(void **state)
{
	struct fixture *f = *state;
	struct feed fd = {0};

	tu_skip_unless_io_works(RTR_IO_URING);
	if (!pages_can_be_dropped(f->fd[0]))
		skip();
	/* io_uring_submit() always refused (EAGAIN): writes and hints wait in their SQ
	 * rings until a submit_and_wait passes them on; nothing is lost, close does not
	 * hang, and the window is still all that stays cached. */
	seam.refuse_submits = UINT_MAX;
	will_return_always(__wrap_io_uring_submit, -EAGAIN);
	write_with_cache_window(f, RTR_IO_URING, &fd);
	assert_true(seam.waits > 0);
	assert_only_the_window_cached(f->fd[0]);
}

/* A writeback error that sync_file_range() reports is not dropped. */
static void sync_writeback_error_from_a_hint_fails_the_writes_after_it(void **state)
{
	struct fixture *f = *state;
	struct feed fd = {0};

	seam.sfr_errno = EIO;
	open_sink(f, 0, RTR_IO_SYNC, CHUNK, 4);
	rtr__sink_cache_window(&f->sink[0], CACHE_WINDOW);
	while (fd.pos < CACHE_FILE)
		feed_one(&f->sink[0], &fd, CHUNK, 1);
	assert_true(seam.sfr_calls > 0);
	assert_int_equal(rtr__sink_wait(&f->sink[0]), -EIO);
	uint64_t written = rtr_atomic_load_relaxed(&f->sink[0].events_written);
	uint64_t failed = rtr_atomic_load_relaxed(&f->sink[0].events_failed);
	/* The writes before the hint landed; every one after it failed and is counted. */
	assert_int_equal(written, (CACHE_WINDOW / 2 + RTR__SINK_CACHE_STEP) / CHUNK);
	assert_int_equal(written + failed, CACHE_FILE / CHUNK);
}

/* The one rule both methods' hints go through (the io_uring hint ring's completions
 * too): a writeback error latches, a refused hint does not; the first error stays. */
static void hint_results_latch_writeback_errors_only(void **state)
{
	struct fixture *f = *state;

	open_sink(f, 0, RTR_IO_SYNC, CHUNK, 4);
	rtr__sink_hint_result(&f->sink[0], 0);
	rtr__sink_hint_result(&f->sink[0], -EINVAL);
	rtr__sink_hint_result(&f->sink[0], -ESPIPE);
	rtr__sink_hint_result(&f->sink[0], -ECANCELED); /* a link cut by the one before */
	assert_int_equal(rtr_atomic_load_relaxed(&f->sink[0].error), 0);
	rtr__sink_hint_result(&f->sink[0], -EIO);
	rtr__sink_hint_result(&f->sink[0], -ENOSPC);
	assert_int_equal(rtr_atomic_load_relaxed(&f->sink[0].error), -EIO);
}

struct pipe_reader {
	int fd;
	uint64_t bytes;
	bool in_order;
};

static void *read_pipe(void *arg)
{
	struct pipe_reader *r = arg;
	unsigned char buf[8192];
	ssize_t n;

	r->in_order = true;
	while ((n = read(r->fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++)
			r->in_order &= buf[i] == pattern(r->bytes + (uint64_t)i);
		r->bytes += (uint64_t)n;
	}
	return NULL;
}

/* A pipe takes every chunk whole and in order, with either method
 * asked for (io_uring too, where it cannot be set up: a stream is written with
 * write(2) whatever was asked), and is never cut (no provisional tail there). */
static void a_pipe_takes_every_chunk_in_order(void **state)
{
	struct fixture *f = *state;
	struct pipe_reader r = {0};
	struct feed fd = {0};
	pthread_t t;
	int p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	close(f->fd[0]);
	f->fd[0] = p[1];
	r.fd = p[0];
	assert_int_equal(pthread_create(&t, NULL, read_pipe, &r), 0);
	open_sink(f, 0, f->io, CHUNK, 4);
	assert_true(f->sink[0].stream);
	assert_int_equal(f->sink[0].method, RTR_IO_SYNC);
	for (int k = 0; k < 64; k++) /* 4 MiB: the pipe holds 64 KiB */
		feed_one(&f->sink[0], &fd, CHUNK - (size_t)k * 7, 1);
	assert_int_equal(rtr__sink_wait(&f->sink[0]), 0);
	rtr__sink_close(&f->sink[0]);
	f->open[0] = false;
	close(p[1]);
	f->fd[0] = open("/dev/null", O_WRONLY | O_CLOEXEC); /* for the teardown */
	pthread_join(t, NULL);
	close(p[0]);
	assert_int_equal(r.bytes, fd.pos);
	assert_true(r.in_order);
	assert_int_equal(rtr_atomic_load_relaxed(&f->sink[0].events_written), 64);
}

/* A full pipe nobody reads fails the write with -ETIMEDOUT once the
 * writer is told to give up, instead of blocking for ever. */
static void *cancel_later(void *arg)
{
	nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
	rtr_atomic_store_relaxed((uint32_t *)arg, 1); /* relaxed: a flag alone */
	return NULL;
}

static void a_stream_that_blocks_gives_up_when_cancelled(void **state)
{
	struct fixture *f = *state;
	struct feed fd = {0};
	uint32_t cancel = 0;
	pthread_t t;
	int p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	close(f->fd[0]);
	f->fd[0] = p[1];
	open_sink(f, 0, RTR_IO_SYNC, CHUNK, 4);
	f->sink[0].cancel = &cancel;
	feed_one(&f->sink[0], &fd, CHUNK, 1); /* 64 KiB: fills the pipe */
	assert_int_equal(pthread_create(&t, NULL, cancel_later, &cancel), 0);
	feed_one(&f->sink[0], &fd, CHUNK, 1); /* cannot go: waits until the cancel */
	pthread_join(t, NULL);
	assert_int_equal(rtr__sink_wait(&f->sink[0]), -ETIMEDOUT);
	assert_int_equal(rtr_atomic_load_relaxed(&f->sink[0].events_written), 1);
	assert_int_equal(rtr_atomic_load_relaxed(&f->sink[0].events_failed), 1);
	close(p[0]);
}

int main(void)
{
#define T(fn)	 cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define T_IO(fn) TU_IO_CASES(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(both_methods_write_identical_bytes_for_the_same_chunks),
		T_IO(counters_match_the_bytes_and_events_submitted),
		T_IO(back_to_back_submits_beyond_nchunks_write_every_byte),
		T_IO(empty_chunks_are_released_without_a_write),
		T(acquire_returns_null_when_the_caller_holds_every_chunk),
		T(open_rejects_bad_arguments),
		T_IO(counters_can_be_read_from_another_thread_while_writing),
		T_IO(a_partly_written_chunk_counts_the_events_of_its_whole_lines),
		T_IO(first_error_latches_at_the_file_size_limit),
		T(sync_completes_short_writes_and_retries_eintr),
		T(uring_open_returns_the_setup_error),
		T(auto_falls_back_to_write_when_io_uring_setup_fails),
		T(auto_picks_io_uring_when_it_works),
		T(uring_writes_unregistered_buffers_when_registration_fails),
		T(uring_writes_unregistered_buffers_over_rlimit_memlock),
		T(uring_acquire_does_not_wait_while_a_chunk_is_free),
		T(uring_acquire_waits_when_every_chunk_is_in_flight),
		T(uring_fails_what_is_in_flight_when_the_ring_breaks),
		T(uring_keeps_writing_while_the_writer_is_away),
		T(uring_resubmits_the_rest_of_a_short_write),
		T(uring_drops_what_lies_a_window_behind_from_the_page_cache),
		T(sync_hints_leave_the_bytes_intact),
		T(uring_hints_pass_through_a_refused_submit),
		T(sync_writeback_error_from_a_hint_fails_the_writes_after_it),
		T(hint_results_latch_writeback_errors_only),
		T_IO(a_pipe_takes_every_chunk_in_order),
		T(a_stream_that_blocks_gives_up_when_cancelled),
	};
#undef T
#undef T_IO

	return cmocka_run_group_tests_name("sink", tests, group_setup, NULL);
}
