/* SPDX-License-Identifier: MIT */
/*
 * Autostart: LD_PRELOAD=libringtrace.so RINGTRACE_AUTOSTART=1 traces
 * a program that does not link the library (tests/progs/autostart_prog.c), the exit
 * handler finishes the file, a forked child does not start on its own, and a program
 * that calls rtr_start() itself adopts the autostarted session.
 */
#include "child.h"
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define N 50

/* Run the test program with args under the preloaded library, RINGTRACE_FILE=file
 * and RINGTRACE_AUTOSTART=autostart (NULL: unset); returns its exit status. */
static int run_prog(const char *mode, const char *file, const char *autostart)
{
	char n[16];
	pid_t pid;

	snprintf(n, sizeof(n), "%d", N);
	pid = tu_fork();
	if (pid == 0) {
		setenv("LD_PRELOAD", RTR_TEST_LIBRINGTRACE, 1);
		setenv("RINGTRACE_FILE", file, 1);
		if (autostart != NULL)
			setenv("RINGTRACE_AUTOSTART", autostart, 1);
		else
			unsetenv("RINGTRACE_AUTOSTART");
		execl(RTR_TEST_AUTOSTART_PROG, RTR_TEST_AUTOSTART_PROG, mode, n, (char *)NULL);
		_exit(127);
	}
	int status = tu_wait_child(pid, TU_CHILD_TIMEOUT_S);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* The number of instants named "<prefix>-<i>", checking they come in order. */
static int count_named(const struct tt_trace *t, const char *prefix)
{
	size_t len = strlen(prefix);
	int count = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct tt_event *e = &t->ev[i];
		if (e->name == NULL || strncmp(e->name, prefix, len) != 0 || e->name[len] != '-')
			continue;
		assert_string_equal(e->ph, "i");
		assert_int_equal(atoi(e->name + len + 1), count);
		count++;
	}
	return count;
}

/* Load the strict JSON trace at path, ending with a final end marker. */
static void load_finished(const char *path, struct tt_trace *t)
{
	if (tt_load(path, 0, t) != 0)
		fail_msg("%s", t->error);
	assert_true(t->complete);
	const struct tt_event *end = tu_end_marker(t);
	assert_string_equal(end->name, "ringtrace: end");
	assert_non_null(tt_arg(end, "final"));
	assert_int_equal(tt_arg(end, "final")->b, 1);
	assert_string_equal(t->ev[0].name, "ringtrace: start");
}

static void preloaded_program_is_traced_to_a_finished_file(void **state)
{
	char path[512];
	struct tt_trace t = {0};

	(void)state;
	tu_own_file(path, sizeof(path), "autostart", "events", ".json");
	assert_int_equal(run_prog("events", path, "1"), 0);
	load_finished(path, &t);
	assert_int_equal(count_named(&t, "as"), N);
	tt_free(&t);
}

static void without_the_variable_nothing_starts(void **state)
{
	char path[512];
	struct stat st;

	(void)state;
	tu_own_file(path, sizeof(path), "autostart", "off", ".json");
	assert_int_equal(run_prog("events", path, NULL), 0);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(run_prog("events", path, "0"), 0);
	assert_int_equal(stat(path, &st), -1);
	/* a bad value warns and does not start */
	assert_int_equal(run_prog("events", path, "yes"), 0);
	assert_int_equal(stat(path, &st), -1);
}

/* Files in the test directory whose name starts with prefix. */
static int files_with_prefix(const char *prefix)
{
	DIR *d = opendir(tu_tmpdir());
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

static void forked_child_does_not_autostart(void **state)
{
	char pattern[512], prefix[128], path[512];
	struct tt_trace t = {0};

	(void)state;
	snprintf(prefix, sizeof(prefix), "autostart-fork-%ld-", (long)getpid());
	snprintf(pattern, sizeof(pattern), "%s/%s%%p.json", tu_tmpdir(), prefix);
	assert_int_equal(run_prog("fork", pattern, "1"), 0);
	/* one file, the parent's: the child neither started one nor wrote the parent's */
	assert_int_equal(files_with_prefix(prefix), 1);
	DIR *d = opendir(tu_tmpdir());
	struct dirent *e;
	path[0] = '\0';
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			snprintf(path, sizeof(path), "%s/%s", tu_tmpdir(), e->d_name);
	closedir(d);
	load_finished(path, &t);
	assert_int_equal(count_named(&t, "as"), N);
	assert_int_equal(count_named(&t, "child"), 0);
	tt_free(&t);
	if (getenv("RTR_TEST_KEEP") == NULL)
		unlink(path);
}

static void rtr_start_after_autostart_adopts_the_session(void **state)
{
	char path[512];
	struct tt_trace t = {0};

	(void)state;
	tu_own_file(path, sizeof(path), "autostart", "adopt", ".json");
	assert_int_equal(run_prog("adopt", path, "1"), 0);
	load_finished(path, &t);
	assert_int_equal(count_named(&t, "as"), N);
	assert_int_equal(count_named(&t, "late"), 0); /* after its rtr_stop() */
	tt_free(&t);
}

/* A module's start (the MPI module's at MPI_Init, the OMPT tool's) finds the
 * autostarted session and leaves it alone: the program's rtr_start() still adopts it,
 * and only the program's rtr_stop() ends it. */
static void module_start_leaves_the_autostarted_session_to_the_program(void **state)
{
	char path[512];
	struct tt_trace t = {0};

	(void)state;
	tu_own_file(path, sizeof(path), "autostart", "module", ".json");
	assert_int_equal(run_prog("module", path, "1"), 0);
	load_finished(path, &t);
	assert_int_equal(count_named(&t, "module"), N);
	assert_int_equal(count_named(&t, "as"), N);
	assert_int_equal(count_named(&t, "late"), 0); /* after the program's rtr_stop() */
	tt_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(preloaded_program_is_traced_to_a_finished_file,
					  tu_teardown),
		cmocka_unit_test_teardown(without_the_variable_nothing_starts, tu_teardown),
		cmocka_unit_test_teardown(forked_child_does_not_autostart, tu_teardown),
		cmocka_unit_test_teardown(rtr_start_after_autostart_adopts_the_session,
					  tu_teardown),
		cmocka_unit_test_teardown(
			module_start_leaves_the_autostarted_session_to_the_program, tu_teardown),
	};

	tu_filter_from_env();
	return cmocka_run_group_tests_name("autostart", tests, NULL, NULL);
}
