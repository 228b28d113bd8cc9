/* SPDX-License-Identifier: MIT */
/*
 * Forked children of the integration tests: forking without duplicated stdio buffers,
 * waiting with a guard against a hung child, and the kill test's recording child
 * that the parent SIGKILLs once it has flushed enough.
 *
 * The parent's side fails the running cmocka test (fail_msg(), the assert_* macros):
 * call it from a test's main thread. The child's side never returns into cmocka: it
 * reports through _exit() statuses and pipes.
 */
#ifndef RTR_TESTS_CHILD_H
#define RTR_TESTS_CHILD_H

#include "test_util.h"

#include <stdint.h>
#include <sys/types.h>

struct rtr_config;

/* Seconds a forked child may take before it counts as hung: a guard against a hang,
 * never a measure of speed, far above what a child takes on a loaded machine. */
#define TU_CHILD_TIMEOUT_S (TU_UNDER_SANITIZER ? 300 : 60)

/* fork(2) after flushing stdout and stderr (else the child's exit writes what the
 * parent had buffered a second time). Returns 0 in the child and the child's pid in
 * the parent; fails the test if fork() fails. */
pid_t tu_fork(void);

/* Wait for the child pid up to timeout_s seconds and return its wait status; a child
 * still running by then is killed and the test fails (it hung). */
int tu_wait_child(pid_t pid, int timeout_s);

/* Fail the test unless a child's wait status says it exited with status 0. */
void tu_expect_exit_0(int status);

/*
 * The parent's side of a kill test: read the increasing sequence numbers (int64_t) a
 * forked child writes to fd, each one already flushed to its trace, until one reaches
 * target; then SIGKILL the child and reap it. Fails the test if the child goes quiet
 * for TU_CHILD_TIMEOUT_S, exits, sends a number out of order or is not killed by the
 * signal. Closes fd and returns the last number read.
 */
int64_t tu_kill_after(pid_t pid, int fd, int64_t target);

/*
 * A kill test whole: fork a child that starts the recorder with cfg (on_full set to
 * block, flush_ms to 10: the rest as given) and records counter `cat` "seq" = 0, 1,
 * 2, ..., calling rtr_flush() after every flush_every of them and then telling the
 * parent the last one flushed; SIGKILL it once that reaches target (tu_kill_after()).
 * Stores the child's pid in *pid (the pid of its events) and returns the last number
 * it reported: every seq up to it is in the file. The child exits 30 when the start
 * fails, 31 when a flush fails, 32 when the pipe does.
 */
int64_t tu_record_until_killed(const struct rtr_config *cfg, const char *cat, int64_t flush_every,
			       int64_t target, pid_t *pid);

#endif /* RTR_TESTS_CHILD_H */
