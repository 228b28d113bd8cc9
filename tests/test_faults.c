/* SPDX-License-Identifier: MIT */
/*
 * Faults the recorder must survive without crashing, hanging or lying: a file-size
 * limit hit mid-run, a SIGKILL mid-run, io_uring forced or refused, RINGTRACE_IO from
 * the environment, a path that cannot be opened.
 *
 * The faults that change the process (a resource limit, a seccomp filter, a kill) run
 * in a forked child; the child reports through a pipe or its exit status and the
 * parent checks the file it left. A child that does not finish in time is killed and
 * fails the test: a hang is a failure, not a timeout of the whole executable.
 *
 * Sizes scale with RTR_TEST_SCALE (a factor, default 1; 0.25 under a sanitizer).
 */
#include <ringtrace.h>

#include "test_util.h"
#include "trace_read.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
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
#include <sys/syscall.h>
#include <sys/wait.h>
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

/* ------------------------------------------------------------------------- */
/* Reading a file of counter "seq" 0, 1, 2, ... from one thread               */

struct seq_walk {
	char err[512];
	int64_t pid;
	uint64_t n;   /* events visited */
	int64_t next; /* next expected seq */
	int64_t tid;  /* tid of the seq events */
	char io[16];  /* start marker's "io" */
	int end_seen;
	int end_final; /* the end marker's "final" */
	int64_t end_events, end_dropped, end_io;
};

static int visit_seq(const struct tt_event *e, void *ctx)
{
	struct seq_walk *w = ctx;
	uint64_t n = w->n++;

	TU_WALK_CHECK(w, e, e->has_pid && e->pid == w->pid, "pid %" PRId64, e->pid);
	TU_WALK_CHECK(w, e, !w->end_seen, "event after the end marker");
	if (n == 0) {
		const struct tt_arg *io = tt_arg(e, "io");
		TU_WALK_CHECK(w, e,
			      tu_is(e->ph, "i") && tu_is(e->name, "ringtrace: start") &&
				      e->ts_ns == 0,
			      "first event is not the start marker");
		TU_WALK_CHECK(w, e, io != NULL && io->type == TT_STRING, "start marker has no io");
		snprintf(w->io, sizeof(w->io), "%s", io->s);
		return 0;
	}
	if (n == 1) {
		TU_WALK_CHECK(w, e, tu_is(e->ph, "M") && tu_is(e->name, "process_name"),
			      "no process_name");
		return 0;
	}
	if (tu_is(e->ph, "M")) {
		TU_WALK_CHECK(w, e, tu_is(e->name, "thread_name"), "M %s", e->name);
		return 0;
	}
	if (tu_is(e->name, "ringtrace: end")) {
		w->end_seen = 1;
		const struct tt_arg *final = tt_arg(e, "final");
		TU_WALK_CHECK(w, e, final != NULL && final->type == TT_BOOL,
			      "end marker without a boolean \"final\"");
		w->end_final = final->b;
		w->end_events = tu_arg_int(e, "events");
		w->end_dropped = tu_arg_int(e, "dropped");
		w->end_io = tu_arg_int(e, "dropped_io");
		return 0;
	}
	TU_WALK_CHECK(w, e, tu_is(e->ph, "C") && tu_is(e->name, "seq") && tu_is(e->cat, CAT),
		      "%s %s", e->ph, e->name);
	TU_WALK_CHECK(w, e, tu_arg_int(e, "value") == w->next, "seq %" PRId64 ", want %" PRId64,
		      tu_arg_int(e, "value"), w->next);
	TU_WALK_CHECK(w, e, w->tid == 0 || e->tid == w->tid, "tid changed");
	w->tid = e->tid;
	w->next++;
	return 0;
}

/* Walk p; returns the tt_trace info. Fails the test on any error. */
static struct tt_trace walk_seq(const char *p, int flags, struct seq_walk *w, int64_t pid)
{
	memset(w, 0, sizeof(*w));
	w->pid = pid;
	return tu_walk(p, flags, visit_seq, w, w->err);
}

static void record_seq(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		rtr_counter_i64(CAT, "seq", (int64_t)i);
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

static void file_size_limit(int io, const char *name)
{
	char trace[4096], errlog[4200];
	struct fsize_report rep;
	int pfd[2];
	uint64_t events = tu_scaled(200000, 20000); /* ~90 bytes each: far past the limit */

	if (io == RTR_IO_URING && !tu_io_uring_works()) {
		print_message("io_uring cannot be set up here\n");
		skip();
	}
	make_path(trace, sizeof(trace), name);
	make_file(errlog, sizeof(errlog), name, ".stderr");
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	assert_true(pid >= 0);
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

	/* The file: within the limit, a readable prefix, no more events than counted. */
	uint64_t size = tu_file_size(trace);
	assert_true(size <= FSIZE_LIMIT);
	assert_int_equal(rep.st.bytes_written, size);
	struct seq_walk w;
	struct tt_trace info = walk_seq(trace, TT_REPAIR, &w, pid);
	assert_true(info.repaired);
	assert_false(w.end_seen);
	assert_true(w.next > 0);
	/* Whole events in the file were written: the stats must not count them as lost
	 * (the end marker is missing here, so the stats are the only account). */
	if ((uint64_t)w.next > rep.st.events_written)
		fail_msg("the file holds %" PRId64 " whole events (seq 0..%" PRId64
			 "), but stats say %" PRIu64 " were written and %" PRIu64 " lost",
			 w.next, w.next - 1, rep.st.events_written, rep.st.events_dropped_io);
}

static void file_size_limit_with_io_uring_fails_stop_with_efbig(void **state)
{
	(void)state;
	file_size_limit(RTR_IO_URING, "fsize-uring");
}

static void file_size_limit_with_write_fails_stop_with_efbig(void **state)
{
	(void)state;
	file_size_limit(RTR_IO_SYNC, "fsize-sync");
}

/* ------------------------------------------------------------------------- */
/* SIGKILL mid-run                                                            */

#define FLUSH_EVERY 10000

static void kill_child(int io, const char *trace, int out_fd)
{
	struct rtr_config cfg;

	rtr_config_init(&cfg);
	cfg.path = trace;
	cfg.io = io;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	cfg.flush_ms = 10;
	if (rtr_start(&cfg) != 0)
		_exit(30);
	for (int64_t i = 0;; i++) {
		rtr_counter_i64(CAT, "seq", i);
		if ((i + 1) % FLUSH_EVERY == 0) {
			if (rtr_flush() != 0)
				_exit(31);
			if (write(out_fd, &i, sizeof(i)) != (ssize_t)sizeof(i))
				_exit(32);
		}
	}
}

static void sigkill(int io, const char *name)
{
	char trace[4096];
	int pfd[2];
	int64_t target = (int64_t)tu_scaled(200000, 20000);

	if (io == RTR_IO_URING && !tu_io_uring_works()) {
		print_message("io_uring cannot be set up here\n");
		skip();
	}
	make_path(trace, sizeof(trace), name);
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		kill_child(io, trace, pfd[1]);
	}
	close(pfd[1]);
	int64_t last = tu_kill_after(pid, pfd[0], target);

	/* Every flushed event is there, in order, with no gap or hole. */
	char lastc = 0;
	int fd = open(trace, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	uint64_t size = tu_file_size(trace);
	assert_true(size > 0);
	assert_int_equal(pread(fd, &lastc, 1, (off_t)size - 1), 1);
	close(fd);
	struct seq_walk w;
	struct tt_trace info = walk_seq(trace, TT_REPAIR, &w, pid);
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

static void sigkill_with_io_uring_leaves_every_flushed_event(void **state)
{
	(void)state;
	sigkill(RTR_IO_URING, "kill-uring");
}

static void sigkill_with_write_leaves_every_flushed_event(void **state)
{
	(void)state;
	sigkill(RTR_IO_SYNC, "kill-sync");
}

/* ------------------------------------------------------------------------- */
/* I/O method selection                                                       */

static void record_and_check(const struct rtr_config *cfg, int want_io, uint64_t n)
{
	struct rtr_stats st;
	struct seq_walk w;

	assert_int_equal(rtr_start(cfg), 0);
	record_seq(n);
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.io_method, want_io);
	assert_int_equal(st.events_recorded, n);
	assert_int_equal(st.events_written, n);
	assert_int_equal(st.events_dropped, 0);
	assert_int_equal(st.bytes_written, tu_file_size(cfg->path));

	struct tt_trace info = walk_seq(cfg->path, TT_CHECK_ESCAPES, &w, getpid());
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
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		seccomp_child(trace);
	int status = tu_wait_child(pid, TU_CHILD_TIMEOUT_S);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		print_message("cannot install a seccomp filter here\n");
		skip();
	}
	tu_expect_exit_0(status);

	struct seq_walk w;
	struct tt_trace info = walk_seq(trace, TT_CHECK_ESCAPES, &w, pid);
	assert_true(info.complete);
	assert_true(w.end_seen);
	assert_int_equal(w.next, SECCOMP_EVENTS);
	assert_int_equal(w.end_events, SECCOMP_EVENTS);
	assert_string_equal(w.io, "write");
}

/* ------------------------------------------------------------------------- */
/* A path that cannot be opened                                               */

static void missing_directory_fails_start_and_records_nothing(void **state)
{
	(void)state;
	char dir[4096], bad[4200], good[4096];
	struct rtr_config cfg;
	struct rtr_stats st;
	struct seq_walk w;

	snprintf(dir, sizeof(dir), "%s/faults-no-such-dir-%d", tu_tmpdir(), (int)getpid());
	snprintf(bad, sizeof(bad), "%s/trace.json", dir);
	make_path(good, sizeof(good), "after-enoent");
	rmdir(dir);

	rtr_config_init(&cfg);
	cfg.path = bad;
	cfg.on_full = RTR_ON_FULL_BLOCK;
	assert_int_equal(rtr_start(&cfg), -ENOENT);
	rtr_stats_get(&st);
	assert_int_equal(st.running, 0);
	record_seq(1000); /* not recording: ignored */
	rtr_instant(CAT, "not recording");
	assert_int_equal(rtr_flush(), 0);
	assert_int_equal(rtr_stop(), 0);
	assert_int_equal(access(dir, F_OK), -1);

	cfg.path = good;
	assert_int_equal(rtr_start(&cfg), 0);
	record_seq(10);
	assert_int_equal(rtr_stop(), 0);
	rtr_stats_get(&st);
	assert_int_equal(st.events_recorded, 10);
	assert_int_equal(st.events_written, 10);
	assert_int_equal(st.write_error, 0);
	struct tt_trace info = walk_seq(good, TT_CHECK_ESCAPES, &w, getpid());
	assert_true(info.complete);
	assert_int_equal(w.next, 10);
	assert_int_equal(w.end_events, 10);
}

/* Every test leaves the recorder stopped and its files removed, pass or fail. */
#define TEST(f) cmocka_unit_test_teardown(f, tu_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(file_size_limit_with_io_uring_fails_stop_with_efbig),
		TEST(file_size_limit_with_write_fails_stop_with_efbig),
		TEST(sigkill_with_io_uring_leaves_every_flushed_event),
		TEST(sigkill_with_write_leaves_every_flushed_event),
		TEST(forced_io_uring_is_used),
		TEST(ringtrace_io_sync_in_the_environment_selects_write),
		TEST(io_uring_refused_by_seccomp_falls_back_to_write),
		TEST(missing_directory_fails_start_and_records_nothing),
	};

	/* A write past a file-size limit must give EFBIG, never kill the test. */
	signal(SIGXFSZ, SIG_IGN);
	tu_filter_from_env();
	return cmocka_run_group_tests_name("faults", tests, NULL, NULL);
}
