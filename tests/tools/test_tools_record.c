/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace record`: a program run with the modules asked for, its exit status and
 * output passed through, the trace's path said; usage errors and a module that is not
 * there refused before the program runs.
 */
#include "tool_test.h"
#include "trace_read.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* The program's exit status comes back; with no module a program that does not start
 * the recorder leaves no trace, and record says so. */
static void exit_status_passes_through(void **state)
{
	const char *out = tool_tmp("record-none-%p.json");
	struct tool_run r;

	(void)state;
	tool_run(&r, NULL, "record", "-o", out, "--", "sh", "-c", "echo hello; exit 3", NULL);
	assert_int_equal(r.status, 3);
	assert_true(tool_has(r.out, "hello\n"));
	assert_true(tool_has(r.err, "ringtrace record: no trace at "));
	tool_run_free(&r);
	/* (a signal's 128 + N is not taken here: the harness reads 128 and up as a
	 * signal that killed ringtrace itself) */
	tool_run(&r, NULL, "record", "sh", "-c", "exit 0", NULL);
	assert_int_equal(r.status, 0);
	tool_run_free(&r);
	tool_run(&r, NULL, "record", "--", "/nonexistent/prog", NULL);
	assert_int_equal(r.status, 127);
	assert_true(tool_has(r.err, "/nonexistent/prog: No such file or directory"));
	tool_run_free(&r);
}

static void usage_errors_and_missing_modules_are_exit_2(void **state)
{
	struct tool_run r;

	(void)state;
	tool_run(&r, NULL, "record", NULL);
	assert_int_equal(r.status, 2);
	assert_true(tool_has(r.err, "no program"));
	tool_run_free(&r);
	tool_run(&r, NULL, "record", "--gpu", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_true(tool_has(r.err, "unknown option '--gpu'"));
	tool_run_free(&r);
	tool_run(&r, NULL, "record", "--flight", "lots", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	tool_run_free(&r);
	/* a module that is not where it is looked for: said, and the program not run */
	tool_run(&r, NULL, "record", "--libdir", "/nonexistent", "--omp", "--", "sh", "-c",
		 "echo ran", NULL);
	assert_int_equal(r.status, 2);
	assert_true(tool_has(r.err, "--omp: libringtrace-omp.so not found"));
	assert_false(tool_has(r.out, "ran"));
	tool_run_free(&r);
	tool_run(&r, NULL, "record", "--help", NULL);
	assert_int_equal(r.status, 0);
	assert_true(tool_has(r.out, "usage: ringtrace record"));
	tool_run_free(&r);
}

/* --instrument on a program that knows nothing of ringtrace: the library preloaded
 * starts the recorder, the trace is where record says, whole. */
static void a_module_records_an_unmodified_program(void **state)
{
	const char *pattern = tool_tmp("record-true-%p.json");
	struct tool_run r;
	struct tt_trace t = {0};
	char path[4200];

	(void)state;
#if !defined(RTR_INSTRUMENT_LIB)
	skip();
#else
	if (TT_SANITIZED)
		skip(); /* a sanitized library preloaded into a program that is not */
	tool_run(&r, NULL, "record", "-o", pattern, "--instrument", "--", "true", NULL);
	assert_int_equal(r.status, 0);
	const char *said = strstr(r.err, "the trace: ");
	if (said == NULL)
		fail_msg("%s", r.err);
	said += strlen("the trace: ");
	size_t n = strcspn(said, " ");
	assert_true(n < sizeof(path));
	memcpy(path, said, n);
	path[n] = '\0';
	tool_run_free(&r);
	if (tt_load(path, TT_CHECK_ESCAPES, &t) != 0)
		fail_msg("%s: %s", path, t.error);
	assert_true(t.complete);
	assert_true(t.n >= 2);
	assert_string_equal(t.ev[0].name, "ringtrace: start");
	assert_string_equal(t.ev[t.n - 1].name, "ringtrace: end");
	const struct tt_arg *final = tt_arg(&t.ev[t.n - 1], "final");
	assert_non_null(final);
	assert_true(final->b);
	tt_free(&t);
	unlink(path);
#endif
}

/* --mpi without -o: the MPI module's default file, a file per rank, and its process
 * name, "rank N", are the run's (a session autostarted for other modules takes them
 * too), and the path said is the rank's, the rank read from the launcher's variables
 * as the recorder reads them; -o and RINGTRACE_PROCESS_NAME keep their own. */
static void mpi_without_output_is_a_file_per_rank(void **state)
{
	(void)state;
#if !defined(RTR_MPI_LIB)
	skip();
#else
	struct tool_run r;
	const char *out = tool_tmp("record-mpi-%r.json");

	if (TT_SANITIZED)
		skip(); /* a sanitized library preloaded into a program that is not */
	const char *print = "printf '%s|%s' \"$RINGTRACE_FILE\" \"$RINGTRACE_PROCESS_NAME\"";
	char want[4200];

	setenv("SLURM_PROCID", "5", 1);
	tool_run(&r, NULL, "record", "--mpi", "--", "sh", "-c", print, NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "ringtrace-%r.json|rank 5");
	assert_true(tool_has(r.err, "ringtrace record: no trace at ringtrace-5.json:"));
	tool_run_free(&r);
	setenv("RINGTRACE_PROCESS_NAME", "solver", 1);
	tool_run(&r, NULL, "record", "-o", out, "--mpi", "--", "sh", "-c", print, NULL);
	unsetenv("RINGTRACE_PROCESS_NAME");
	unsetenv("SLURM_PROCID");
	assert_int_equal(r.status, 0);
	snprintf(want, sizeof(want), "%s|solver", out);
	assert_string_equal(r.out, want);
	tool_run_free(&r);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exit_status_passes_through),
		cmocka_unit_test(usage_errors_and_missing_modules_are_exit_2),
		cmocka_unit_test(a_module_records_an_unmodified_program),
		cmocka_unit_test(mpi_without_output_is_a_file_per_rank),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
