/* SPDX-License-Identifier: MIT */
/*
 * Faults the recorder must survive without crashing, hanging or lying: a file-size
 * limit hit mid-run, a SIGKILL mid-run, io_uring forced or refused, RINGTRACE_IO
 * from the environment, a path that cannot be opened; and the edges: fork, pipes and
 * FIFOs, a file that blocks at stop, files already there.
 *
 * The faults that change the process (a resource limit, a seccomp filter, a kill) run
 * in a forked child; the child reports through a pipe or its exit status and the
 * parent checks the file it left. A child that does not finish in time is killed and
 * fails the test: a hang is a failure, not a timeout of the whole executable.
 *
 * Sizes scale with RTR_TEST_SCALE (a factor, default 1; 0.25 under a sanitizer).
 */
#include <ringtrace.h>

#include "child.h"
#include "seq_trace.h"
#include "test_util.h"
#include "trace_read.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#if TU_UNDER_TSAN
/* The children start the writer thread after fork: allowed, with this. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "die_after_fork=0";
}
#endif

/*
 * Seam (-Wl,--wrap=pwrite): a full disk. A pwrite(2) to the inode full_ino takes
 * nothing at or past full_at (ENOSPC) and is cut short there; below it, as usual.
 */
ssize_t __real_pwrite(int fd, const void *buf, size_t n, off_t off);
ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off);
static ino_t full_ino; /* atomic: 0, or the inode of the full disk's file */
static off_t full_at;  /* set before full_ino */

ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	ino_t ino = __atomic_load_n(&full_ino, __ATOMIC_ACQUIRE);
	struct stat st;

	if (ino != 0 && fstat(fd, &st) == 0 && st.st_ino == ino) {
		if (off >= full_at) {
			errno = ENOSPC;
			return -1;
		}
		if ((off_t)n > full_at - off)
			n = (size_t)(full_at - off);
	}
	return __real_pwrite(fd, buf, n, off);
}

/*
 * Seam (-Wl,--wrap=write, tests/CMakeLists.txt): a write(2) to the inode hang_ino
 * blocks, deaf to signals and to the stop timeout, until hang_release is set, then
 * fails with EIO: a write on a hung NFS mount, which nothing interrupts.
 */
ssize_t __real_write(int fd, const void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n);
static ino_t hang_ino;	      /* atomic: 0, or the inode whose writes hang */
static uint32_t hang_release; /* atomic: set by the test to let the write return */
static uint32_t hanging;      /* atomic: a write is hanging now */

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	struct stat st;

	ino_t ino = __atomic_load_n(&hang_ino, __ATOMIC_RELAXED);

	if (ino != 0 && fstat(fd, &st) == 0 && st.st_ino == ino) {
		__atomic_store_n(&hanging, 1, __ATOMIC_RELAXED);
		while (!__atomic_load_n(&hang_release, __ATOMIC_RELAXED))
			nanosleep(&(struct timespec){.tv_nsec = 1000 * 1000}, NULL);
		errno = EIO;
		return -1;
	}
	return __real_write(fd, buf, n);
}

#define CAT	    "faults"
#define FSIZE_LIMIT ((rlim_t)256 << 10)

/* Files of the running test: the teardown removes them, pass or fail (set
 * RTR_TEST_KEEP=1 to keep them for a look). */
static void make_file(char *out, size_t size, const char *name, const char *ext)
{
	tu_own_file(out, size, "faults", name, ext);
}

static void make_path(char *out, size_t size, const char *name)
{
	make_file(out, size, name, ".json");
}

static void record_seq(int64_t n)
{
	tu_record_seq(CAT, 0, n);
}

/* ------------------------------------------------------------------------- */
/* RLIMIT_FSIZE mid-run                                                       */

struct fsize_report {
	int start_rc;
	int stop_rc;
	struct rtr_stats st;
};

static void fsize_child(int io, const char *trace, const char *errlog, int out_fd, uint64_t events)
{
	struct fsize_report rep;
	struct rtr_config cfg;
	struct rlimit lim = {FSIZE_LIMIT, FSIZE_LIMIT};
	int fd;

	memset(&rep, 0, sizeof(rep));
	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
		_exit(20);
	fd = open(errlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
		_exit(21);
	close(fd);

	rtr_config_init(&cfg);
	cfg.path = trace;
	cfg.io = io;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	cfg.ring_bytes = (size_t)256 << 10;
	rep.start_rc = rtr_start(&cfg);
	if (rep.start_rc == 0) {
		record_seq(events);
		rep.stop_rc = rtr_stop();
		rtr_stats_get(&rep.st);
	}
	if (write(out_fd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
		_exit(22);
	_exit(0);
}

static void stop_fails_with_efbig_at_the_file_size_limit(void **state)
{
	int io = tu_io_of(*state);
	char trace[4096], errlog[4200], name[32];
	struct fsize_report rep;
	int pfd[2];
	uint64_t events = tu_scaled(200000, 20000); /* ~90 bytes each: far past the limit */

	tu_skip_unless_io_works(io);
	snprintf(name, sizeof(name), "fsize-%s", rtr_io_name(io));
	make_path(trace, sizeof(trace), name);
	make_file(errlog, sizeof(errlog), name, ".stderr");
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		close(pfd[0]);
		fsize_child(io, trace, errlog, pfd[1], events);
	}
	close(pfd[1]);
	int status = tu_wait_child(pid, TU_CHILD_TIMEOUT_S);
	tu_expect_exit_0(status);
	assert_int_equal(read(pfd[0], &rep, sizeof(rep)), (ssize_t)sizeof(rep));
	close(pfd[0]);

	assert_int_equal(rep.start_rc, 0);
	assert_int_equal(rep.stop_rc, -EFBIG);
	assert_int_equal(rep.st.write_error, -EFBIG);
	assert_int_equal(rep.st.io_method, io);
	assert_int_equal(rep.st.events_recorded, events);
	assert_true(rep.st.events_dropped_io > 0);
	assert_int_equal(rep.st.events_dropped_full, 0);
	assert_int_equal(rep.st.events_dropped_too_large, 0);
	assert_int_equal(rep.st.events_dropped, rep.st.events_dropped_io);
	assert_int_equal(rep.st.events_written + rep.st.events_dropped, rep.st.events_recorded);
	print_message("%s: written %" PRIu64 ", lost to EFBIG %" PRIu64 ", %" PRIu64 " bytes\n",
		      rtr_io_name(rep.st.io_method), rep.st.events_written,
		      rep.st.events_dropped_io, rep.st.bytes_written);

	/* Reported once, on stderr. */
	FILE *f = fopen(errlog, "re");
	char line[1024];
	int reports = 0;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strstr(line, "ringtrace:") == NULL)
			continue;
		reports++;
		if (strstr(line, strerror(EFBIG)) == NULL)
			fail_msg("report does not name the error: %s", line);
	}
	fclose(f);
	assert_int_equal(reports, 1);

	/* The file: within the limit, and closed again after the error: an
	 * end marker and "]" where the limit left room, strict JSON without repair, whose
	 * counts are the stats' and the file's own. */
	uint64_t size = tu_file_size(trace);
	assert_true(size <= FSIZE_LIMIT);
	assert_true(size > FSIZE_LIMIT - 4096); /* cut near the limit, not far before */
	assert_int_equal(rep.st.bytes_written, size);
	struct tu_seq_walk w;
	struct tt_trace info = tu_seq_walk(trace, TT_CHECK_ESCAPES, CAT, pid, &w);
	assert_true(info.complete);
	assert_false(info.repaired);
	assert_true(w.end_seen);
	assert_true(w.end_final);
	assert_true(w.next > 0);
	assert_int_equal((uint64_t)w.next, rep.st.events_written);
	assert_int_equal(w.end_events, w.next);
	assert_int_equal((uint64_t)w.end_io, rep.st.events_dropped_io);
	assert_int_equal((uint64_t)w.end_dropped, rep.st.events_dropped);
}

/* ------------------------------------------------------------------------- */
/* SIGKILL mid-run                                                            */

#define FLUSH_EVERY 10000

static void sigkill_leaves_every_flushed_event(void **state)
{
	int io = tu_io_of(*state);
	char trace[4096], name[32];
	struct rtr_config cfg;
	pid_t pid;

	tu_skip_unless_io_works(io);
	snprintf(name, sizeof(name), "kill-%s", rtr_io_name(io));
	make_path(trace, sizeof(trace), name);
	rtr_config_init(&cfg);
	cfg.path = trace;
	cfg.io = io;
	int64_t last = tu_record_until_killed(&cfg, CAT, FLUSH_EVERY,
					      (int64_t)tu_scaled(200000, 20000), &pid);

	/* Every flushed event is there, in order, with no gap or hole. */
	char lastc = 0;
	int fd = open(trace, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	uint64_t size = tu_file_size(trace);
	assert_true(size > 0);
	assert_int_equal(pread(fd, &lastc, 1, (off_t)size - 1), 1);
	close(fd);
	struct tu_seq_walk w;
	struct tt_trace info = tu_seq_walk(trace, TT_REPAIR, CAT, pid, &w);
	if (info.repaired) {
		/* killed inside a write: the last line is partial, and the provisional
		 * close it was written over is gone */
		assert_false(w.end_seen);
	} else {
		/* killed between writes: strict JSON, closed by a provisional end marker
		 * that counts what precedes it */
		assert_true(info.complete);
		assert_true(w.end_seen);
		assert_false(w.end_final);
		assert_int_equal(w.end_events, w.next);
	}
	assert_true(w.next > last);
	assert_string_equal(w.io, rtr_io_name(io));
	print_message("killed after seq %" PRId64 " was flushed; the file has seq 0..%" PRId64
		      " and ends %s\n",
		      last, w.next - 1,
		      !info.repaired  ? "with a provisional close (strict JSON)"
		      : lastc == '\n' ? "after a whole line"
				      : "inside a line (repair dropped it)");
}

/* ------------------------------------------------------------------------- */
/* I/O method selection                                                       */

static void record_and_check(const struct rtr_config *cfg, int want_io, uint64_t n)
{
	struct rtr_stats st;
	struct tu_seq_walk w;

	assert_int_equal(rtr_start(cfg), 0);
	record_seq(n);
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.io_method, want_io);
	assert_int_equal(st.events_recorded, n);
	assert_int_equal(st.events_written, n);
	assert_int_equal(st.events_dropped, 0);
	assert_int_equal(st.bytes_written, tu_file_size(cfg->path));

	struct tt_trace info = tu_seq_walk(cfg->path, TT_CHECK_ESCAPES, CAT, getpid(), &w);
	assert_true(info.complete);
	assert_true(w.end_seen);
	assert_int_equal(w.next, (int64_t)n);
	assert_int_equal(w.end_events, (int64_t)n);
	assert_int_equal(w.end_dropped, 0);
	assert_string_equal(w.io, rtr_io_name(want_io));
}

static void forced_io_uring_is_used(void **state)
{
	(void)state;
	char trace[4096];
	struct rtr_config cfg;

	if (!tu_io_uring_works()) {
		print_message("io_uring cannot be set up here\n");
		skip();
	}
	make_path(trace, sizeof(trace), "uring");
	rtr_config_init(&cfg);
	cfg.path = trace;
	cfg.io = RTR_IO_URING;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	record_and_check(&cfg, RTR_IO_URING, tu_scaled(100000, 10000));
	assert_string_equal(rtr_io_name(RTR_IO_URING), "io_uring");
}

static void ringtrace_io_sync_in_the_environment_selects_write(void **state)
{
	(void)state;
	char trace[4096];
	struct rtr_config cfg;
	const char *old = getenv("RINGTRACE_IO");
	char *saved = old ? strdup(old) : NULL;

	make_path(trace, sizeof(trace), "env-sync");
	assert_int_equal(setenv("RINGTRACE_IO", "sync", 1), 0);
	rtr_config_init(&cfg);
	if (saved != NULL)
		setenv("RINGTRACE_IO", saved, 1);
	else
		unsetenv("RINGTRACE_IO");
	free(saved);
	assert_int_equal(cfg.io, RTR_IO_SYNC);
	cfg.path = trace;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	record_and_check(&cfg, RTR_IO_SYNC, tu_scaled(100000, 10000));
	assert_string_equal(rtr_io_name(RTR_IO_SYNC), "write");
}

/* io_uring_setup refused with EPERM, as by a container's seccomp profile. */
static int refuse_io_uring(void)
{
#if defined(__x86_64__)
	const unsigned arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
	const unsigned arch = AUDIT_ARCH_AARCH64;
#else
	return -1;
#endif
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {(unsigned short)(sizeof(f) / sizeof(f[0])), f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

#define SECCOMP_EVENTS 5000

static void seccomp_child(const char *trace)
{
	struct rtr_config cfg;
	struct rtr_stats st;

	if (refuse_io_uring() != 0)
		_exit(77);
	rtr_config_init(&cfg);
	cfg.path = trace;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	cfg.io = RTR_IO_URING;
	if (rtr_start(&cfg) != -EPERM)
		_exit(40);
	if (access(trace, F_OK) == 0)
		_exit(41); /* a failed start leaves no file */
	cfg.io = RTR_IO_AUTO;
	if (rtr_start(&cfg) != 0)
		_exit(42);
	record_seq(SECCOMP_EVENTS);
	if (rtr_stop() != 0)
		_exit(43);
	rtr_stats_get(&st);
	if (st.io_method != RTR_IO_SYNC)
		_exit(44);
	if (st.events_written != SECCOMP_EVENTS || st.events_dropped != 0)
		_exit(45);
	_exit(0);
}

static void io_uring_refused_by_seccomp_falls_back_to_write(void **state)
{
	(void)state;
	char trace[4096];

	make_path(trace, sizeof(trace), "seccomp");
	pid_t pid = tu_fork();
	if (pid == 0)
		seccomp_child(trace);
	int status = tu_wait_child(pid, TU_CHILD_TIMEOUT_S);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		print_message("cannot install a seccomp filter here\n");
		skip();
	}
	tu_expect_exit_0(status);

	struct tu_seq_walk w;
	struct tt_trace info = tu_seq_walk(trace, TT_CHECK_ESCAPES, CAT, pid, &w);
	assert_true(info.complete);
	assert_true(w.end_seen);
	assert_int_equal(w.next, SECCOMP_EVENTS);
	assert_int_equal(w.end_events, SECCOMP_EVENTS);
	assert_string_equal(w.io, "write");
}

/* ------------------------------------------------------------------------- */
/* A path that cannot be opened                                               */

/* A directory the recorder cannot make (a file is in the way; a missing one it makes:
 * test_path.c). */
static void unmakeable_directory_fails_start_and_records_nothing(void **state)
{
	(void)state;
	char dir[4096], bad[4200], good[4096];
	struct rtr_config cfg;
	struct rtr_stats st;
	struct tu_seq_walk w;

	snprintf(dir, sizeof(dir), "%s/faults-not-a-dir-%d", tu_tmpdir(), (int)getpid());
	snprintf(bad, sizeof(bad), "%s/sub/trace.json", dir);
	make_path(good, sizeof(good), "after-enotdir");
	unlink(dir);
	int fd = open(dir, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	close(fd);

	rtr_config_init(&cfg);
	cfg.path = bad;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	assert_int_equal(rtr_start(&cfg), -ENOTDIR);
	rtr_stats_get(&st);
	assert_int_equal(st.running, 0);
	record_seq(1000); /* not recording: ignored */
	rtr_instant(CAT, "not recording");
	assert_int_equal(rtr_flush(), 0);
	assert_int_equal(rtr_stop(), 0);
	assert_int_equal(tu_file_size(dir), 0); /* the file in the way, untouched */
	unlink(dir);

	cfg.path = good;
	assert_int_equal(rtr_start(&cfg), 0);
	record_seq(10);
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.events_recorded, 10);
	assert_int_equal(st.events_written, 10);
	assert_int_equal(st.write_error, 0);
	struct tt_trace info = tu_seq_walk(good, TT_CHECK_ESCAPES, CAT, getpid(), &w);
	assert_true(info.complete);
	assert_int_equal(w.next, 10);
	assert_int_equal(w.end_events, 10);
}

/* ------------------------------------------------------------------------- */
/* Helpers for the pipe, FIFO and fork cases                                  */

/* Open descriptors of this process. */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (d == NULL)
		return -1;
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

/* Read fd until EOF into the file at out; fails the test if EOF does not come within
 * TU_CHILD_TIMEOUT_S. Closes fd. Returns the bytes read. */
static uint64_t drain_to_file(int fd, const char *out)
{
	char buf[65536];
	uint64_t total = 0;
	int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	struct pollfd p = {.fd = fd, .events = POLLIN};

	assert_true(o >= 0);
	for (;;) {
		int r = poll(&p, 1, TU_CHILD_TIMEOUT_S * 1000);
		if (r == 0)
			fail_msg("no EOF on the trace's pipe after %d s", TU_CHILD_TIMEOUT_S);
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		assert_true(n >= 0);
		if (n == 0)
			break;
		assert_int_equal(write(o, buf, (size_t)n), n);
		total += (uint64_t)n;
	}
	close(o);
	close(fd);
	return total;
}

/* What a child reports back through a pipe. */
struct child_report {
	int start_rc, flush_rc, stop_rc;
	int io_method;
	uint64_t flush_ns, stop_ns, run_ns; /* how long they took (printed, not checked) */
	struct rtr_stats st;
};

static void send_report(int fd, const struct child_report *rep)
{
	if (write(fd, rep, sizeof(*rep)) != (ssize_t)sizeof(*rep))
		_exit(90);
}

static void get_report(int fd, struct child_report *rep)
{
	assert_int_equal(read(fd, rep, sizeof(*rep)), (ssize_t)sizeof(*rep));
	close(fd);
}

/* A clean session's file: strict JSON, n seq events from pid, the end marker exact. */
static void check_whole_seq_file(const char *file, pid_t pid, uint64_t n)
{
	struct tu_seq_walk w;
	struct tt_trace info = tu_seq_walk(file, TT_CHECK_ESCAPES, CAT, pid, &w);

	assert_true(info.complete);
	assert_false(info.repaired);
	assert_true(w.end_seen);
	assert_true(w.end_final);
	assert_int_equal(w.next, (int64_t)n);
	assert_int_equal(w.end_events, (int64_t)n);
	assert_int_equal(w.end_dropped, 0);
}

/* ENOSPC with write(2): the file is closed again where the disk has room once the cut
 * line is gone, strict JSON whose counts are the stats'. */
static void full_disk_closes_the_file_with_its_end_marker(void **state)
{
	(void)state;
	char trace[4096], errlog[4096];
	struct child_report rep;
	int rp[2];
	uint64_t events = tu_scaled(200000, 20000);

	make_path(trace, sizeof(trace), "enospc");
	make_file(errlog, sizeof(errlog), "enospc", ".stderr");
	assert_int_equal(pipe2(rp, O_CLOEXEC), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		struct rtr_config cfg;
		struct stat st;
		int fd = open(errlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		memset(&rep, 0, sizeof(rep));
		if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(120);
		close(fd);
		rtr_config_init(&cfg);
		cfg.path = trace;
		cfg.io = RTR_IO_SYNC;
		cfg.on_full = RTR_ON_FULL_BLOCK;
		rep.start_rc = rtr_start(&cfg);
		if (rep.start_rc != 0 || stat(trace, &st) != 0)
			_exit(121);
		full_at = (off_t)300000 + 17; /* inside a line */
		__atomic_store_n(&full_ino, st.st_ino, __ATOMIC_RELEASE);
		record_seq(events);
		rep.stop_rc = rtr_stop();
		rtr_stats_get(&rep.st);
		send_report(rp[1], &rep);
		_exit(0);
	}
	close(rp[1]);
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
	get_report(rp[0], &rep);
	assert_int_equal(rep.stop_rc, -ENOSPC);
	assert_int_equal(rep.st.write_error, -ENOSPC);
	assert_int_equal(rep.st.events_written + rep.st.events_dropped, rep.st.events_recorded);
	uint64_t size = tu_file_size(trace);
	assert_true(size <= 300000 + 17);
	assert_true(size > 300000 - 4096);
	assert_int_equal(rep.st.bytes_written, size);
	struct tu_seq_walk w;
	struct tt_trace info = tu_seq_walk(trace, TT_CHECK_ESCAPES, CAT, pid, &w);
	assert_true(info.complete);
	assert_true(w.end_seen);
	assert_true(w.end_final);
	assert_int_equal((uint64_t)w.next, rep.st.events_written);
	assert_int_equal(w.end_events, w.next);
	assert_int_equal((uint64_t)w.end_io, rep.st.events_dropped_io);
	/* Reported once. */
	FILE *f = fopen(errlog, "re");
	char line[8192];
	int reports = 0;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		reports += strstr(line, strerror(ENOSPC)) != NULL;
	fclose(f);
	assert_int_equal(reports, 1);
	print_message("ENOSPC at %d bytes: closed at %" PRIu64 ", %" PRIu64
		      " events written, %" PRIu64 " lost\n",
		      300000 + 17, size, rep.st.events_written, rep.st.events_dropped_io);
}

/* ------------------------------------------------------------------------- */
/* Pipes, FIFOs, stdout                                                       */

#define STREAM_EVENTS 100000 /* ~10 MB: far more than a pipe holds */

/* In a child whose stdout is a pipe: record into path ("-", "/dev/stdout"). */
static void stdout_child(const char *path, int io, int compress, int rep_fd)
{
	struct child_report rep = {0};
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.io = io;
	cfg.compress = compress;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	uint64_t t0 = tu_mono_ns();
	rep.start_rc = rtr_start(&cfg);
	if (rep.start_rc == 0) {
		record_seq(STREAM_EVENTS);
		rep.stop_rc = rtr_stop();
	}
	rep.run_ns = tu_mono_ns() - t0;
	rtr_stats_get(&rep.st);
	send_report(rep_fd, &rep);
	_exit(0);
}

static void trace_to_stdout(const char *path, int io, int compress, const char *name)
{
	char raw[4096], text[4096], cmd[9000];
	int out[2], rp[2];
	struct child_report rep;

	make_file(raw, sizeof(raw), name, compress == RTR_COMPRESS_GZIP ? ".json.gz" : ".raw");
	make_path(text, sizeof(text), name);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	assert_int_equal(pipe2(rp, O_CLOEXEC), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		close(out[0]);
		close(rp[0]);
		if (dup2(out[1], STDOUT_FILENO) < 0)
			_exit(50);
		close(out[1]);
		stdout_child(path, io, compress, rp[1]);
	}
	close(out[1]);
	close(rp[1]);
	uint64_t bytes = drain_to_file(out[0], raw);
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
	get_report(rp[0], &rep);
	assert_int_equal(rep.start_rc, 0);
	assert_int_equal(rep.stop_rc, 0);
	assert_int_equal(rep.st.events_recorded, STREAM_EVENTS);
	assert_int_equal(rep.st.events_written, STREAM_EVENTS);
	assert_int_equal(rep.st.events_dropped, 0);
	assert_int_equal(rep.st.bytes_written, bytes);
	print_message("%s: %" PRIu64 " events, %" PRIu64 " bytes through the pipe in %.1f ms\n",
		      name, rep.st.events_written, bytes, (double)rep.run_ns / 1e6);
	/* A stream goes through write(2), one write at a time, whatever was asked. */
	assert_int_equal(rep.st.io_method, RTR_IO_SYNC);
	if (compress == RTR_COMPRESS_GZIP) {
		snprintf(cmd, sizeof(cmd), "gzip -dc '%s' > '%s'", raw, text);
		assert_int_equal(system(cmd), 0); /* one whole member: no "unexpected end" */
	} else {
		assert_int_equal(rename(raw, text), 0);
	}
	check_whole_seq_file(text, pid, STREAM_EVENTS);
}

/* Both names of stdout, one per method: "-" with write(2), /dev/stdout with io_uring. */
static const char *stdout_path(int io)
{
	return io == RTR_IO_URING ? "/dev/stdout" : "-";
}

static void pipe_on_stdout_gets_the_whole_trace(void **state)
{
	int io = tu_io_of(*state);
	char name[32];

	tu_skip_unless_io_works(io);
	snprintf(name, sizeof(name), "stdout-%s", rtr_io_name(io));
	trace_to_stdout(stdout_path(io), io, RTR_COMPRESS_NONE, name);
}

static void gzip_to_a_pipe_decompresses_whole(void **state)
{
	int io = tu_io_of(*state);
	char name[32];

	tu_skip_unless_io_works(io);
	snprintf(name, sizeof(name), "stdout-gz-%s", rtr_io_name(io));
	trace_to_stdout(stdout_path(io), io, RTR_COMPRESS_GZIP, name);
}

/* In a child: record into the FIFO at path, which the parent reads. */
static void fifo_child(const char *path, int io, int rep_fd)
{
	struct child_report rep = {0};
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	cfg.path = path;
	cfg.io = io;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	rep.start_rc = rtr_start(&cfg);
	if (rep.start_rc == 0) {
		record_seq(STREAM_EVENTS);
		rep.stop_rc = rtr_stop();
	}
	rtr_stats_get(&rep.st);
	send_report(rep_fd, &rep);
	_exit(0);
}

static void fifo_gets_the_whole_trace(void **state)
{
	int io = tu_io_of(*state);
	char fifo[4096], text[4096], name[32];
	int rp[2];
	struct child_report rep;

	tu_skip_unless_io_works(io);
	snprintf(name, sizeof(name), "fifo-%s", rtr_io_name(io));
	make_file(fifo, sizeof(fifo), name, ".fifo");
	make_path(text, sizeof(text), name);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	int rd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a reader first */
	assert_true(rd >= 0);
	assert_int_equal(pipe2(rp, O_CLOEXEC), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		close(rp[0]);
		fifo_child(fifo, io, rp[1]);
	}
	close(rp[1]);
	/* Reading before the child has the FIFO open would see EOF: wait for its report
	 * in another way, by polling for data first. */
	struct pollfd p = {.fd = rd, .events = POLLIN};
	assert_int_equal(poll(&p, 1, TU_CHILD_TIMEOUT_S * 1000), 1);
	drain_to_file(rd, text);
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
	get_report(rp[0], &rep);
	assert_int_equal(rep.start_rc, 0);
	assert_int_equal(rep.stop_rc, 0);
	assert_int_equal(rep.st.events_written, STREAM_EVENTS);
	assert_int_equal(rep.st.events_dropped, 0);
	check_whole_seq_file(text, pid, STREAM_EVENTS);
}

/* A FIFO with no reader: rtr_start() waits open_timeout_ms for one, then fails with
 * ENXIO and says why, naming the FIFO (11c, 8); with 0 it fails at once. */
static void fifo_without_a_reader_fails_start_after_its_wait_and_says_why(void **state)
{
	(void)state;
	char fifo[4096], errlog[4096];

	make_file(fifo, sizeof(fifo), "fifo-noreader", ".fifo");
	make_file(errlog, sizeof(errlog), "fifo-noreader", ".stderr");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		struct rtr_config cfg;
		int fd = open(errlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(51);
		rtr_config_init(&cfg);
		cfg.path = fifo;
		cfg.open_timeout_ms = 150;
		uint64_t t0 = rtr_now_ns();
		if (rtr_start(&cfg) != -ENXIO)
			_exit(52);
		if (rtr_now_ns() - t0 < UINT64_C(150) * 1000000) /* it did wait */
			_exit(54);
		cfg.open_timeout_ms = 0;
		if (rtr_start(&cfg) != -ENXIO) /* and again: the lock was released */
			_exit(53);
		_exit(0);
	}
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
	FILE *f = fopen(errlog, "re");
	char line[8192], want[4200];
	int reports = 0;
	assert_non_null(f);
	snprintf(want, sizeof(want), "ringtrace: cannot start: %s: %s", fifo, strerror(ENXIO));
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, want, strlen(want)) != 0)
			fail_msg("unexpected stderr line: %s", line);
		reports++;
	}
	fclose(f);
	assert_int_equal(reports, 2); /* once per failed start */
}

/* Flow ids stay unique in the process across fork() with no session running: the
 * child takes none from the block its parent's thread had in hand. */
static void flow_ids_differ_in_a_child_forked_without_a_session(void **state)
{
	(void)state;
	int rp[2];
	uint64_t parent_first = rtr_flow_id(), child_id = 0;

	assert_int_equal(pipe2(rp, O_CLOEXEC), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		uint64_t id = rtr_flow_id();
		_exit(write(rp[1], &id, sizeof(id)) == (ssize_t)sizeof(id) ? 0 : 60);
	}
	close(rp[1]);
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
	assert_int_equal(read(rp[0], &child_id, sizeof(child_id)), (ssize_t)sizeof(child_id));
	close(rp[0]);
	uint64_t parent_next = rtr_flow_id();
	assert_int_equal(parent_next, parent_first + 1); /* the parent's block goes on */
	assert_int_not_equal(child_id, parent_next);
	assert_int_equal(child_id >> 40, (uint64_t)(uint32_t)pid & 0xffffff);
	assert_int_equal(parent_next >> 40, (uint64_t)(uint32_t)getpid() & 0xffffff);
}

/* `cat fifo > out & prog`: the program may open the FIFO before cat does. rtr_start()
 * waits for the reader (the default: as long as the stop timeout), and the trace is
 * whole. */
static void fifo_whose_reader_comes_late_gets_the_whole_trace(void **state)
{
	(void)state;
	char fifo[4096], text[4096];
	int rp[2];
	struct child_report rep;

	make_file(fifo, sizeof(fifo), "fifo-late", ".fifo");
	make_path(text, sizeof(text), "fifo-late");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(pipe2(rp, O_CLOEXEC), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		close(rp[0]);
		fifo_child(fifo, RTR_IO_SYNC, rp[1]); /* starts before there is a reader */
	}
	close(rp[1]);
	struct timespec late = {0, 200 * 1000 * 1000};
	nanosleep(&late, NULL);
	int rd = open(fifo, O_RDONLY | O_CLOEXEC); /* the reader, late: the writer waits */
	assert_true(rd >= 0);
	drain_to_file(rd, text);
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
	get_report(rp[0], &rep);
	assert_int_equal(rep.start_rc, 0);
	assert_int_equal(rep.stop_rc, 0);
	assert_int_equal(rep.st.events_written, STREAM_EVENTS);
	assert_int_equal(rep.st.events_dropped, 0);
	check_whole_seq_file(text, pid, STREAM_EVENTS);
}

/* ------------------------------------------------------------------------- */
/* A file that blocks at stop                                                 */

/* In a child: a FIFO whose reader never reads; drop mode, so recording never waits. */
static void blocked_fifo_child(const char *fifo, int io, unsigned timeout_ms, int rep_fd)
{
	struct child_report rep = {0};
	struct rtr_config cfg;
	int rd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (rd < 0)
		_exit(60);
	rtr_config_init(&cfg);
	cfg.path = fifo;
	cfg.io = io;
	cfg.on_full = RTR_ON_FULL_DROP;
	cfg.ring_bytes = (size_t)256 << 10;
	cfg.stop_timeout_ms = timeout_ms;
	rep.start_rc = rtr_start(&cfg);
	if (rep.start_rc != 0)
		_exit(61);
	for (int round = 0; round < 20; round++) {
		record_seq(10000);
		nanosleep(&(struct timespec){.tv_nsec = 2 * 1000 * 1000}, NULL);
	}
	uint64_t t0 = tu_mono_ns();
	rep.flush_rc = rtr_flush();
	uint64_t t1 = tu_mono_ns();
	rep.stop_rc = rtr_stop();
	rep.flush_ns = t1 - t0;
	rep.stop_ns = tu_mono_ns() - t1;
	rtr_stats_get(&rep.st);
	send_report(rep_fd, &rep);
	_exit(0);
}

static void stop_on_a_fifo_nobody_reads_times_out(void **state)
{
	int io = tu_io_of(*state);
	char fifo[4096], name[32];
	int rp[2];
	struct child_report rep;

	tu_skip_unless_io_works(io);
	snprintf(name, sizeof(name), "blocked-%s", rtr_io_name(io));
	make_file(fifo, sizeof(fifo), name, ".fifo");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(pipe2(rp, O_CLOEXEC), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		close(rp[0]);
		blocked_fifo_child(fifo, io, 200, rp[1]);
	}
	close(rp[1]);
	/* The guard against a stop that never gives up: the child needs 200 ms for the
	 * flush, 200 ms for the stop and the writer's slice, on an idle machine */
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
	get_report(rp[0], &rep);
	assert_int_equal(rep.flush_rc, -ETIMEDOUT);
	assert_int_equal(rep.stop_rc, -ETIMEDOUT);
	assert_int_equal(rep.st.write_error, -ETIMEDOUT);
	assert_true(rep.st.events_dropped_io > 0);
	assert_int_equal(rep.st.events_written + rep.st.events_dropped, rep.st.events_recorded);
	print_message("%s: recorded %" PRIu64 ", written %" PRIu64 " (%" PRIu64
		      " bytes: what the pipe took), dropped_io %" PRIu64 ", full %" PRIu64 "\n",
		      name, rep.st.events_recorded, rep.st.events_written, rep.st.bytes_written,
		      rep.st.events_dropped_io, rep.st.events_dropped_full);
	print_message(
		"%s: with a 200 ms timeout, flush returned after %.1f ms, stop after %.1f ms\n",
		name, (double)rep.flush_ns / 1e6, (double)rep.stop_ns / 1e6);
}

static int flush_rc;

static void *flush_thread(void *arg)
{
	(void)arg;
	flush_rc = rtr_flush();
	return NULL;
}

/* A flush that waits for a FIFO must not hold fork() in another thread. */
static void fork_while_a_flush_waits_child(const char *fifo)
{
	struct rtr_config cfg;
	pthread_t t;
	char buf[65536];
	int rd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (rd < 0)
		_exit(70);
	rtr_config_init(&cfg);
	cfg.path = fifo;
	cfg.io = RTR_IO_SYNC;
	cfg.on_full = RTR_ON_FULL_DROP;
	cfg.stop_timeout_ms = 0; /* wait as long as it takes */
	if (rtr_start(&cfg) != 0)
		_exit(71);
	record_seq(50000); /* more than the pipe holds: the flush waits for the reader */
	if (pthread_create(&t, NULL, flush_thread, NULL) != 0)
		_exit(72);
	nanosleep(&(struct timespec){.tv_nsec = 50 * 1000 * 1000}, NULL);
	pid_t pid = fork(); /* before the fix: waits for the lock the flush holds */
	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid(pid, NULL, 0) != pid)
		_exit(73);
	/* Now read: the flush finishes. */
	for (;;) {
		ssize_t n = read(rd, buf, sizeof(buf));
		if (n > 0)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (pthread_tryjoin_np(t, NULL) == 0)
				break;
			nanosleep(&(struct timespec){.tv_nsec = 1000 * 1000}, NULL);
			continue;
		}
		_exit(74);
	}
	if (flush_rc != 0)
		_exit(75);
	_exit(0);
}

static void fork_is_not_held_by_a_flush_waiting_for_the_file(void **state)
{
	(void)state;
	char fifo[4096];

	make_file(fifo, sizeof(fifo), "flush-fork", ".fifo");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	pid_t pid = tu_fork();
	if (pid == 0)
		fork_while_a_flush_waits_child(fifo);
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
}

/* A writer stuck in a call nothing interrupts: stop returns at its timeout anyway,
 * the writer frees the session and closes the file itself when the call returns, and
 * a start meanwhile is -EBUSY without touching any file. */
static void stuck_writer_child(const char *fifo, const char *other)
{
	struct rtr_config cfg;
	struct stat st;
	int rd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (rd < 0 || devnull < 0 || stat(fifo, &st) != 0 || dup2(devnull, STDERR_FILENO) < 0)
		_exit(110);
	close(devnull);
	int fds = count_fds();
	rtr_config_init(&cfg);
	cfg.path = fifo;
	cfg.io = RTR_IO_SYNC;
	cfg.stop_timeout_ms = 200;
	if (rtr_start(&cfg) != 0)
		_exit(111);
	__atomic_store_n(&hang_ino, st.st_ino, __ATOMIC_RELAXED);
	record_seq(1000);
	while (!__atomic_load_n(&hanging, __ATOMIC_RELAXED))
		nanosleep(&(struct timespec){.tv_nsec = 1000 * 1000}, NULL); /* the flush period */
	if (rtr_stop() != -ETIMEDOUT)
		_exit(112);
	cfg.path = other;
	if (rtr_start(&cfg) != -EBUSY)
		_exit(113);
	if (access(other, F_OK) == 0)
		_exit(114);
	__atomic_store_n(&hang_release, 1, __ATOMIC_RELAXED);
	/* The writer finishes on its own: the FIFO's writer end closes. */
	char buf[65536];
	struct pollfd p = {.fd = rd, .events = POLLIN};
	for (;;) {
		if (poll(&p, 1, TU_CHILD_TIMEOUT_S * 1000) != 1)
			_exit(115);
		ssize_t n = read(rd, buf, sizeof(buf));
		if (n == 0)
			break;
		if (n < 0 && errno != EAGAIN)
			_exit(116);
	}
	close(rd);
	/* And it gives the recorder back: a new session starts and finishes. */
	int rc = -EBUSY;
	for (int i = 0; i < 1000 && rc == -EBUSY; i++) {
		rc = rtr_start(&cfg);
		if (rc == -EBUSY)
			nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
	}
	if (rc != 0)
		_exit(117);
	__atomic_store_n(&hang_ino, 0, __ATOMIC_RELAXED);
	record_seq(100);
	if (rtr_stop() != 0)
		_exit(118);
	if (count_fds() != fds - 1) /* the FIFO's reader, closed above */
		_exit(119);
	_exit(0);
}

static void stop_leaves_a_writer_stuck_in_the_file_and_it_cleans_up_after_itself(void **state)
{
	(void)state;
	char fifo[4096], other[4096];

	make_file(fifo, sizeof(fifo), "stuck", ".fifo");
	make_path(other, sizeof(other), "stuck-next");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	pid_t pid = tu_fork();
	if (pid == 0)
		stuck_writer_child(fifo, other);
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
	check_whole_seq_file(other, pid, 100);
}

/* ------------------------------------------------------------------------- */
/* fork()                                                                     */

#define FORK_EVENTS 1000

struct fork_report {
	int fds_after_fork, fds_after_stop;
	uint64_t flow_before, flow_after;
	int start_rc, stop_rc;
	struct rtr_stats st;
};

static void forked_child_releases_the_parents_files_and_starts_its_own(void **state)
{
	int io = tu_io_of(*state);
	char parent_file[4096], child_file[4096], name[32];
	struct fork_report rep = {0};
	int rp[2];

	tu_skip_unless_io_works(io);
	snprintf(name, sizeof(name), "fork-%s", rtr_io_name(io));
	make_path(parent_file, sizeof(parent_file), name);
	make_file(child_file, sizeof(child_file), name, ".child.json");
	assert_int_equal(pipe2(rp, O_CLOEXEC), 0);
	int fds_before = count_fds();
	assert_true(fds_before > 0);
	tu_start(parent_file, io, RTR_ON_FULL_BLOCK, (size_t)1 << 20);
	record_seq(FORK_EVENTS / 2);
	uint64_t parent_flow = rtr_flow_id(); /* this thread now holds a block of ids */
	/* The writer thread is past its start: ASan's allocator does not survive a fork
	 * while a thread is being created (the child's allocator stays locked). */
	assert_int_equal(rtr_flush(), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		struct rtr_config cfg;

		close(rp[0]);
		rep.fds_after_fork = count_fds(); /* the parent's trace and rings are gone */
		rep.flow_before = parent_flow;
		rep.flow_after = rtr_flow_id();
		rtr_config_init(&cfg);
		cfg.path = child_file;
		cfg.io = io;
		cfg.on_full = RTR_ON_FULL_BLOCK;
		rep.start_rc = rtr_start(&cfg);
		record_seq(FORK_EVENTS);
		rep.stop_rc = rtr_stop();
		rtr_stats_get(&rep.st);
		rep.fds_after_stop = count_fds();
		if (write(rp[1], &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
			_exit(80);
		_exit(0);
	}
	close(rp[1]);
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
	assert_int_equal(read(rp[0], &rep, sizeof(rep)), (ssize_t)sizeof(rep));
	close(rp[0]);
	tu_record_seq(CAT, FORK_EVENTS / 2, FORK_EVENTS / 2); /* the parent goes on, undisturbed */
	assert_int_equal(rtr_stop(), 0);

	/* fds_before counted the report pipe's two ends; the child closed one. */
	assert_int_equal(rep.fds_after_fork, fds_before - 1);
	assert_int_equal(rep.fds_after_stop, fds_before - 1);
	assert_int_equal(rep.start_rc, 0);
	assert_int_equal(rep.stop_rc, 0);
	assert_int_equal(rep.st.events_written, FORK_EVENTS);
	/* Flow ids carry the pid in their top bits: the child's are its own. */
	assert_int_equal(rep.flow_before >> 40, (uint64_t)getpid());
	assert_int_equal(rep.flow_after >> 40, (uint64_t)pid);
	check_whole_seq_file(child_file, pid, FORK_EVENTS);
	check_whole_seq_file(parent_file, getpid(), FORK_EVENTS);
	assert_int_equal(count_fds(), fds_before - 2);
}

/* A FIFO reader sees EOF when the parent stops, though a forked child still lives. The
 * trace fits in the pipe: the test reads it only after the stop. */
#define FIFO_EOF_EVENTS 200

static void fifo_reader_sees_eof_at_stop_while_a_forked_child_lives(void **state)
{
	(void)state;
	char fifo[4096], text[4096];
	int hold[2];

	make_file(fifo, sizeof(fifo), "fork-fifo", ".fifo");
	make_path(text, sizeof(text), "fork-fifo");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	int rd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(rd >= 0);
	tu_start(fifo, TU_IO_DEFAULT, RTR_ON_FULL_BLOCK, (size_t)1 << 20);
	assert_int_equal(rtr_flush(),
			 0); /* the writer runs: see
				forked_child_releases_the_parents_files_and_starts_its_own() */
	assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		char c;
		close(hold[1]);
		(void)read(hold[0], &c, 1); /* lives until the parent closes its end */
		_exit(0);
	}
	close(hold[0]);
	record_seq(FIFO_EOF_EVENTS);
	assert_int_equal(rtr_stop(), 0);
	drain_to_file(rd, text); /* fails the test without EOF */
	close(hold[1]);
	tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
	check_whole_seq_file(text, getpid(), FIFO_EOF_EVENTS);
}

/* ------------------------------------------------------------------------- */
/* Files already at the path                                                  */

static const char precious[] = "precious bytes that were here first\n";

static void write_precious(const char *file)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, precious, sizeof(precious) - 1), sizeof(precious) - 1);
	close(fd);
}

static int is_precious(const char *file)
{
	char buf[256];
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)sizeof(precious) - 1 && memcmp(buf, precious, (size_t)n) == 0;
}

/* Files in the directory of path whose names start with its base name and a dot. */
static int leftovers(const char *file)
{
	char dir[4096];
	const char *base = strrchr(file, '/');
	int n = 0;

	snprintf(dir, sizeof(dir), "%.*s", (int)(base - file), file);
	base++;
	DIR *d = opendir(dir);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		n += strncmp(e->d_name, base, strlen(base)) == 0 && e->d_name[strlen(base)] == '.';
	closedir(d);
	return n;
}

static void failed_start_leaves_a_file_that_was_there_byte_for_byte(void **state)
{
	(void)state;
	char trace[4096];

	make_path(trace, sizeof(trace), "precious");
	write_precious(trace);
	pid_t pid = tu_fork();
	if (pid == 0) {
		struct rtr_config cfg;

		if (refuse_io_uring() != 0)
			_exit(77);
		rtr_config_init(&cfg);
		cfg.path = trace;
		cfg.io = RTR_IO_URING; /* refused after the file is open */
		_exit(rtr_start(&cfg) == -EPERM ? 0 : 1);
	}
	int status = tu_wait_child(pid, TU_CHILD_TIMEOUT_S);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		skip();
	tu_expect_exit_0(status);
	assert_true(is_precious(trace));
	assert_int_equal(leftovers(trace), 0); /* no file beside it either */
}

static void a_file_another_user_owns_is_replaced_not_written_through(void **state)
{
	(void)state;
	char trace[4096];
	struct stat st;

	if (geteuid() != 0) {
		print_message("needs root\n");
		skip();
	}
	make_path(trace, sizeof(trace), "foreign");
	write_precious(trace);
	assert_int_equal(chown(trace, 65534, 65534), 0);
	assert_int_equal(chmod(trace, 0666), 0);
	int old = open(trace, O_RDONLY | O_CLOEXEC); /* the other user's file itself */
	assert_true(old >= 0);

	mode_t mask = umask(0);
	umask(mask);
	tu_start(trace, TU_IO_DEFAULT, RTR_ON_FULL_BLOCK, (size_t)1 << 20);
	record_seq(FORK_EVENTS);
	assert_int_equal(rtr_stop(), 0);

	assert_int_equal(stat(trace, &st), 0);
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal(st.st_mode & 07777, 0644 & ~mask);
	check_whole_seq_file(trace, getpid(), FORK_EVENTS);
	/* Their file was not written: it is intact, unlinked from the path. */
	char buf[256];
	assert_int_equal(pread(old, buf, sizeof(buf), 0), sizeof(precious) - 1);
	assert_memory_equal(buf, precious, sizeof(precious) - 1);
	close(old);
}

/* A file of our own in a directory we may not create in is written in place, and
 * still survives a failed start (the cut to 0 waits until the start is certain). */
static void own_file_in_a_read_only_directory_is_kept_by_a_failed_start(void **state)
{
	(void)state;
	char dir[4096], trace[4200];

	if (geteuid() != 0) {
		print_message("needs root (to become another user)\n");
		skip();
	}
	/* Under /tmp, not the build tree: the other user must reach it whatever the
	 * modes of the folders the checkout lives in (mktemp -d makes them 0700). */
	snprintf(dir, sizeof(dir), "/tmp/ringtrace-faults-rodir-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(trace, sizeof(trace), "%s/trace.json", dir);
	write_precious(trace);
	assert_int_equal(chown(trace, 65534, 65534), 0);
	assert_int_equal(chown(dir, 65534, 65534), 0);
	assert_int_equal(chmod(dir, 0555), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		struct rtr_config cfg;

		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(100);
		if (refuse_io_uring() != 0)
			_exit(77);
		rtr_config_init(&cfg);
		cfg.path = trace;
		cfg.on_full = RTR_ON_FULL_BLOCK;
		cfg.io = RTR_IO_URING;
		if (rtr_start(&cfg) != -EPERM)
			_exit(101);
		if (!is_precious(trace))
			_exit(102);
		cfg.io = RTR_IO_SYNC;
		if (rtr_start(&cfg) != 0)
			_exit(103);
		record_seq(FORK_EVENTS);
		_exit(rtr_stop() == 0 ? 0 : 104);
	}
	int status = tu_wait_child(pid, TU_CHILD_TIMEOUT_S);
	if (!(WIFEXITED(status) && WEXITSTATUS(status) == 77)) {
		tu_expect_exit_0(status);
		check_whole_seq_file(trace, pid, FORK_EVENTS);
	}
	unlink(trace);
	chmod(dir, 0755);
	rmdir(dir);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		skip();
}

/* A kill at the first moment the file is at the path leaves its head (11d). */
static void kill_as_soon_as_the_file_appears_leaves_its_head(void **state)
{
	(void)state;
	char trace[4096];
	int rounds = (int)tu_scaled(20, 5);

	make_path(trace, sizeof(trace), "early-kill");
	for (int i = 0; i < rounds; i++) {
		unlink(trace);
		pid_t pid = tu_fork();
		if (pid == 0) {
			struct rtr_config cfg;
			rtr_config_init(&cfg);
			cfg.path = trace;
			/* Blocking keeps seq gapless: this loop outruns the writer, and
			 * drops would put the writer's "ringtrace: dropped" counter and
			 * gaps in the file, which is test_accounting's subject. */
			cfg.on_full = RTR_ON_FULL_BLOCK;
			if (rtr_start(&cfg) != 0)
				_exit(1);
			for (int64_t k = 0;; k++)
				rtr_counter_i64(CAT, "seq", k);
		}
		uint64_t t0 = tu_mono_ns();
		while (access(trace, F_OK) != 0) {
			if (tu_mono_ns() - t0 > TU_CHILD_TIMEOUT_S * 1000000000ull) {
				kill(pid, SIGKILL);
				fail_msg("the trace never appeared");
			}
		}
		kill(pid, SIGKILL);
		int status = tu_wait_child(pid, TU_CHILD_TIMEOUT_S);
		assert_true(WIFSIGNALED(status));
		uint64_t size = tu_file_size(trace);
		if (size == 0)
			fail_msg("round %d: killed as the file appeared, it is empty", i);
		struct tu_seq_walk w;
		struct tt_trace info = tu_seq_walk(trace, TT_REPAIR, CAT, pid, &w);
		assert_true(info.n >= 2); /* the start marker and process_name at least */
	}
	assert_int_equal(leftovers(trace), 0);
}

/* Every test leaves the recorder stopped and its files removed, pass or fail. */
#define TEST(f)	    cmocka_unit_test_teardown(f, tu_teardown)
#define IO_TESTS(f) TU_IO_CASES(f, NULL, tu_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		IO_TESTS(stop_fails_with_efbig_at_the_file_size_limit),
		TEST(full_disk_closes_the_file_with_its_end_marker),
		IO_TESTS(sigkill_leaves_every_flushed_event),
		TEST(forced_io_uring_is_used),
		TEST(ringtrace_io_sync_in_the_environment_selects_write),
		TEST(io_uring_refused_by_seccomp_falls_back_to_write),
		TEST(unmakeable_directory_fails_start_and_records_nothing),
		IO_TESTS(pipe_on_stdout_gets_the_whole_trace),
		IO_TESTS(gzip_to_a_pipe_decompresses_whole),
		IO_TESTS(fifo_gets_the_whole_trace),
		TEST(fifo_without_a_reader_fails_start_after_its_wait_and_says_why),
		TEST(fifo_whose_reader_comes_late_gets_the_whole_trace),
		TEST(flow_ids_differ_in_a_child_forked_without_a_session),
		IO_TESTS(stop_on_a_fifo_nobody_reads_times_out),
		TEST(fork_is_not_held_by_a_flush_waiting_for_the_file),
		TEST(stop_leaves_a_writer_stuck_in_the_file_and_it_cleans_up_after_itself),
		IO_TESTS(forked_child_releases_the_parents_files_and_starts_its_own),
		TEST(fifo_reader_sees_eof_at_stop_while_a_forked_child_lives),
		TEST(failed_start_leaves_a_file_that_was_there_byte_for_byte),
		TEST(a_file_another_user_owns_is_replaced_not_written_through),
		TEST(own_file_in_a_read_only_directory_is_kept_by_a_failed_start),
		TEST(kill_as_soon_as_the_file_appears_leaves_its_head),
	};

	/* A write past a file-size limit must give EFBIG, never kill the test. */
	signal(SIGXFSZ, SIG_IGN);
	tu_filter_from_env();
	return cmocka_run_group_tests_name("faults", tests, NULL, NULL);
}
