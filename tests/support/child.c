/* SPDX-License-Identifier: MIT */
/*
 * Forked children of the integration tests: see child.h.
 */
#include "child.h"

#include <ringtrace.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

pid_t tu_fork(void)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		fail_msg("fork: %s", strerror(errno));
	return pid;
}

int tu_wait_child(pid_t pid, int timeout_s)
{
	int status = 0;

	for (long waited_ms = 0;; waited_ms += 10) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		assert_int_equal(r, 0);
		if (waited_ms > timeout_s * 1000L) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fail_msg("child %d hung for %d s", (int)pid, timeout_s);
		}
		nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
	}
}

void tu_expect_exit_0(int status)
{
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("child failed: %s %d", WIFEXITED(status) ? "exit" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

int64_t tu_kill_after(pid_t pid, int fd, int64_t target)
{
	int64_t last = -1;

	while (last < target) {
		struct pollfd pf = {fd, POLLIN, 0};
		int64_t v;
		int r = poll(&pf, 1, TU_CHILD_TIMEOUT_S * 1000);
		if (r == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			fail_msg("child sent nothing for %d s (hung at seq %" PRId64 ")",
				 TU_CHILD_TIMEOUT_S, last);
		}
		assert_int_equal(r, 1);
		ssize_t got = read(fd, &v, sizeof(v));
		if (got == 0) {
			tu_expect_exit_0(tu_wait_child(pid, TU_CHILD_TIMEOUT_S));
			fail_msg("child exited");
		}
		assert_int_equal(got, (ssize_t)sizeof(v));
		assert_true(v > last);
		last = v;
	}
	assert_int_equal(kill(pid, SIGKILL), 0);
	int status = tu_wait_child(pid, TU_CHILD_TIMEOUT_S);
	close(fd);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	return last;
}

/* The child of tu_record_until_killed(): records until the parent kills it. */
static void record_until_killed(struct rtr_config cfg, const char *cat, int64_t flush_every,
				int out_fd)
{
	cfg.on_full = RTR_ON_FULL_BLOCK;
	cfg.flush_ms = 10;
	if (rtr_start(&cfg) != 0)
		_exit(30);
	for (int64_t i = 0;; i++) {
		rtr_counter_i64(cat, "seq", i);
		if ((i + 1) % flush_every == 0) {
			if (rtr_flush() != 0)
				_exit(31);
			if (write(out_fd, &i, sizeof(i)) != (ssize_t)sizeof(i))
				_exit(32);
		}
	}
}

int64_t tu_record_until_killed(const struct rtr_config *cfg, const char *cat, int64_t flush_every,
			       int64_t target, pid_t *pid)
{
	int pfd[2];

	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	*pid = tu_fork();
	if (*pid == 0) {
		close(pfd[0]);
		record_until_killed(*cfg, cat, flush_every, pfd[1]);
	}
	close(pfd[1]);
	return tu_kill_after(*pid, pfd[0], target);
}
